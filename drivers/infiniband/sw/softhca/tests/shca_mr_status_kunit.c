// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_mr_status: check_mr_status semantics (mlx5): mask
 * rules, each signature error type with its exact fields, read-once, the
 * older-key fallback.
 *
 * Every MR is made through the real entry points (ib_alloc_mr(),
 * ib_alloc_mr_integrity(), ib_reg_user_mr(), the DM ops, kernel PDs' DMA
 * MRs), registered through the engine hook the work-request executor
 * uses, and then read and written through the one copy path; every byte
 * is compared with the memory behind it. The fixture is
 * shca_kunit_mr_fix() (shca_kunit_util.c); the translation matrix is in
 * shca_xlat_kunit.c, the refused inputs in shca_mem_kunit.c.
 */

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* Pass: only the SIG mask on integrity MRs; mask 0 is a no-op. */
static void shca_mr_status_rules(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_mr_status st;
	struct ib_mr *mr, *pi;

	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	pi = shca_kunit_track_mr(test, ib_alloc_mr_integrity(f->pd, 1, 1));

	KUNIT_EXPECT_EQ(test, ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
						 &st), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_check_mr_status(pi, 2, &st), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_check_mr_status(pi, IB_MR_CHECK_SIG_STATUS |
						 0x100, &st), -EINVAL);
	st.fail_status = 0xff;
	KUNIT_EXPECT_EQ(test, ib_check_mr_status(mr, 0, &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, 0);
	st.fail_status = 0xff;
	KUNIT_EXPECT_EQ(test, ib_check_mr_status(pi, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, 0);
}

struct shca_sig_case {
	const char *name;
	enum ib_sig_err_type type;
	u32 expected;
	u32 actual;
	u64 offset;
};

static const struct shca_sig_case shca_sig_cases[] = {
	{ .name = "guard", .type = IB_SIG_BAD_GUARD, .expected = 0x1234,
	  .actual = 0xbeef, .offset = 520 },
	{ .name = "reftag", .type = IB_SIG_BAD_REFTAG, .expected = 1001,
	  .actual = 7, .offset = 1040 },
	{ .name = "apptag", .type = IB_SIG_BAD_APPTAG, .expected = 0xffff,
	  .actual = 0x0001, .offset = 0 },
};

static void shca_sig_case_desc(const struct shca_sig_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_sig, shca_sig_cases, shca_sig_case_desc);

/*
 * Pass: a latched error comes back once with its exact fields; the next
 * registration is refused until the status was read; a second error
 * before the read does not overwrite the first.
 */
static void shca_mr_status_error(struct kunit *test)
{
	const struct shca_sig_case *c = test->param_value;
	struct shca_mr_fix *f = test->priv;
	struct ib_sig_err err = {}, later = {};
	struct ib_mr_status st;
	u8 *data, *meta;
	u32 dlen, mlen;
	struct ib_mr *mr;
	struct shca_mr *smr;

	mr = shca_kunit_pi_mr(test, f, &data, &meta, &dlen, &mlen);
	smr = to_shca_mr(mr);
	shca_kunit_sig_attrs_t10(mr->sig_attrs);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg_pi(smr, mr->rkey, SHCA_RW,
						  mr->sig_attrs), 0);

	err.err_type = c->type;
	err.expected = c->expected;
	err.actual = c->actual;
	err.sig_err_offset = c->offset;
	err.key = mr->rkey;
	shca_mr_sig_error(smr, &err);
	later = err;
	later.err_type = IB_SIG_BAD_APPTAG;
	later.sig_err_offset = c->offset + 520;
	shca_mr_sig_error(smr, &later);

	/* Invalidated, but the status was never read: no new registration. */
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg_pi(smr, mr->rkey, SHCA_RW,
						  mr->sig_attrs), -EINVAL);
	ib_update_fast_reg_key(mr, (u8)(mr->rkey - 1));

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, st.sig_err.err_type, c->type);
	KUNIT_EXPECT_EQ(test, st.sig_err.expected, c->expected);
	KUNIT_EXPECT_EQ(test, st.sig_err.actual, c->actual);
	KUNIT_EXPECT_EQ(test, st.sig_err.sig_err_offset, c->offset);
	KUNIT_EXPECT_EQ(test, st.sig_err.key, mr->rkey);

	/* Read-once. */
	KUNIT_ASSERT_EQ(test, ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, 0);

	/* The check re-armed registration. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg_pi(smr, mr->rkey, SHCA_RW,
						  mr->sig_attrs), 0);
}

/*
 * Pass: an error latched under an older key is reported, as mlx5 does,
 * as a guard error at offset 0 carrying that older key.
 */
static void shca_mr_status_old_key(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_sig_err err = {};
	struct ib_mr_status st;
	u8 *data, *meta;
	u32 dlen, mlen, old;
	struct ib_mr *mr;

	mr = shca_kunit_pi_mr(test, f, &data, &meta, &dlen, &mlen);
	shca_kunit_sig_attrs_t10(mr->sig_attrs);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg_pi(to_shca_mr(mr), mr->rkey,
						  SHCA_RW, mr->sig_attrs), 0);
	old = mr->rkey;
	err.err_type = IB_SIG_BAD_REFTAG;
	err.expected = 5;
	err.actual = 6;
	err.sig_err_offset = 4160;
	err.key = old;
	shca_mr_sig_error(to_shca_mr(mr), &err);
	/* The ULP already rotated the key for the next registration. */
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, st.sig_err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, st.sig_err.sig_err_offset, 0);
	KUNIT_EXPECT_EQ(test, st.sig_err.key, old);
}

static struct kunit_case shca_mr_status_cases[] = {
	KUNIT_CASE(shca_mr_status_rules),
	KUNIT_CASE_PARAM(shca_mr_status_error, shca_sig_gen_params),
	KUNIT_CASE(shca_mr_status_old_key),
	{}
};

static struct kunit_suite shca_mr_status_suite = {
	.name = "shca_mr_status",
	.init = shca_kunit_mr_init,
	.test_cases = shca_mr_status_cases,
};

kunit_test_suites(&shca_mr_status_suite);
