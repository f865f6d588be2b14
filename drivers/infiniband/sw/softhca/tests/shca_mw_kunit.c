// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for memory windows: binds of both types through the engine
 * entry the work-request executor uses (shca_mw_bind()), every byte moved
 * through a window by the one copy path and compared with the memory of
 * the MR behind it, every refused bind with its errno and the window left
 * as it was, invalidation, and the lifetime rules (an MR with bound
 * windows cannot be deregistered, re-registered or invalidated; a
 * transfer through a window stops once the window goes).
 *
 * shca_mw: round trips, rules, refusals, lifetime, a transfer cut short
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_mw_mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x4d, 0x57, 0x01 };

/* Bytes of the MR the windows of a test are bound to: 4 copy chunks. */
#define SHCA_MW_BUF	SZ_64K

/* QP numbers a test binds through: the engine only compares them. */
#define SHCA_MW_QPN	0x123
#define SHCA_MW_QPN2	0x456

/**
 * struct shca_mw_fix - fixture of the window suite
 * @f: the MR fixture: a device and two PDs
 * @buf: SHCA_MW_BUF bytes, physically contiguous, behind @ibmr
 * @ibmr: a MEM_REG MR over @buf, registered with local write and
 *	IB_ACCESS_MW_BIND only (no remote rights of its own)
 * @mr: @ibmr, as the engine sees it
 */
struct shca_mw_fix {
	struct shca_mr_fix *f;
	u8 *buf;
	struct ib_mr *ibmr;
	struct shca_mr *mr;
};

static void shca_mw_free_pages(void *p)
{
	free_pages((unsigned long)p, get_order(SHCA_MW_BUF));
}

static void shca_mw_destroy_action(void *win)
{
	shca_mw_destroy(win);
}

/* Map and register a MEM_REG MR of @pd over @buf with @access. */
static struct ib_mr *shca_mw_test_mr(struct kunit *test, struct ib_pd *pd,
				     u8 *buf, int access)
{
	struct scatterlist *sg = kunit_kzalloc(test, sizeof(*sg), GFP_KERNEL);
	int npages = SHCA_MW_BUF / PAGE_SIZE;
	struct ib_mr *mr;

	KUNIT_ASSERT_NOT_NULL(test, sg);
	sg_init_one(sg, buf, SHCA_MW_BUF);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(pd->device, sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, npages);
	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, mr);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sg, 1, NULL, PAGE_SIZE), 1);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey,
					       access), 0);
	return mr;
}

static int shca_mw_test_init(struct kunit *test)
{
	struct shca_mw_fix *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	int i;

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->f = shca_kunit_mr_fix(test, "shcak_mw", shca_mw_mac);
	x->buf = (u8 *)__get_free_pages(GFP_KERNEL, get_order(SHCA_MW_BUF));
	KUNIT_ASSERT_NOT_NULL(test, x->buf);
	shca_kunit_defer(test, shca_mw_free_pages, x->buf);
	for (i = 0; i < SHCA_MW_BUF; i++)
		x->buf[i] = (u8)(i * 7 + 3);
	x->ibmr = shca_mw_test_mr(test, x->f->pd, x->buf,
				  IB_ACCESS_LOCAL_WRITE | IB_ACCESS_MW_BIND);
	x->mr = to_shca_mr(x->ibmr);
	test->priv = x;
	return 0;
}

/* A window of @pd, destroyed with the test (before the MRs it binds to). */
static struct shca_mr *shca_mw_new(struct kunit *test, struct ib_pd *pd,
				   u8 type)
{
	struct shca_mw_fix *x = test->priv;
	struct shca_mr *win = shca_mw_create(x->f->sdev, pd, type);

	KUNIT_ASSERT_FALSE(test, IS_ERR(win));
	KUNIT_EXPECT_EQ(test, win->state, SHCA_MR_FREE);
	shca_kunit_defer(test, shca_mw_destroy_action, win);
	return win;
}

/* A bind of @win to the fixture's MR: [@off, @off + @len) of it. */
static struct shca_bind shca_mw_bind_of(struct shca_mw_fix *x,
					struct shca_mr *win, u64 off, u64 len,
					int access)
{
	return (struct shca_bind){
		.mw_key = win->key, .mw_id = win->id,
		.new_key = ib_inc_rkey(win->key),
		.mr_key = x->mr->key, .mr_id = x->mr->id,
		.addr = x->ibmr->iova + off, .length = len, .access = access,
	};
}

static struct shca_mem_target shca_mw_target(struct ib_pd *pd, u32 key,
					     u64 iova, int access, u32 qpn)
{
	return (struct shca_mem_target){ .pd = pd, .key = key, .iova = iova,
					 .access = access, .qpn = qpn };
}

/*
 * Pass: a type 1 window grants remote rights the MR does not have over
 * exactly its range; the bytes land in the MR's memory; a rebind gives
 * a new key and retires the old one; a zero-length bind unbinds.
 */
static void shca_mw_type1_roundtrip(struct kunit *test)
{
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mr *win = shca_mw_new(test, f->pd, IB_MW_TYPE_1);
	u8 in[200], out[200];
	struct shca_mem_target t;
	struct shca_bind b;
	u32 old_key;
	int i;

	for (i = 0; i < sizeof(in); i++)
		in[i] = (u8)(0xa0 + i);
	b = shca_mw_bind_of(x, win, 100, 1000,
			    IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);
	KUNIT_EXPECT_EQ(test, win->key, b.new_key);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 1);

	/* Written through the window: at MR offset 100 + 800. */
	t = shca_mw_target(f->pd, win->key, b.addr + 800,
			   IB_ACCESS_REMOTE_WRITE, SHCA_MW_QPN2);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, x->buf + 900, in, sizeof(in));
	t.access = IB_ACCESS_REMOTE_READ;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, in, sizeof(in));

	/* The MR's own key grants no remote rights. */
	t = shca_mw_target(f->pd, x->mr->key, b.addr, IB_ACCESS_REMOTE_READ, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 16,
					   SHCA_COPY_FROM_MR), -EPERM);

	/* Only the window's range and rights; never as an lkey. */
	t = shca_mw_target(f->pd, win->key, b.addr + 801,
			   IB_ACCESS_REMOTE_WRITE, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), -ERANGE);
	t.iova = b.addr - 1;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 1,
					   SHCA_COPY_TO_MR), -ERANGE);
	t.iova = b.addr;
	t.access = IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 8,
					   SHCA_COPY_TO_MR), -EPERM);
	t.access = IB_ACCESS_LOCAL_WRITE;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 8,
					   SHCA_COPY_TO_MR), -ENOKEY);
	t.access = 0;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 8,
					   SHCA_COPY_FROM_MR), -ENOKEY);
	t = shca_mw_target(f->pd2, win->key, b.addr, IB_ACCESS_REMOTE_READ, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 8,
					   SHCA_COPY_FROM_MR), -EACCES);
	KUNIT_EXPECT_EQ(test, x->buf[99], (u8)(99 * 7 + 3));
	KUNIT_EXPECT_EQ(test, x->buf[1100], (u8)(1100 * 7 + 3));

	/* Rebound in place (type 1) under a new key: the old one is dead. */
	old_key = win->key;
	b = shca_mw_bind_of(x, win, 0, 64, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 1);
	t = shca_mw_target(f->pd, old_key, b.addr, IB_ACCESS_REMOTE_READ, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 8,
					   SHCA_COPY_FROM_MR), -ENOKEY);
	t.key = win->key;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 64,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, x->buf, 64);

	/* A zero-length bind unbinds; the MR is free of it. */
	b = shca_mw_bind_of(x, win, 0, 0, 0);
	b.mr_key = 0;
	b.mr_id = 0;
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);
	KUNIT_EXPECT_EQ(test, win->state, SHCA_MR_FREE);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
	t.key = win->key;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 8,
					   SHCA_COPY_FROM_MR), -EKEYREVOKED);
	/* Type 1 windows are not invalidated by work requests. */
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, SHCA_MW_QPN,
						 win->key), -EINVAL);
}

/*
 * Pass: a type 2 window is zero-based if asked, answers only the QP it
 * was bound through, must be invalidated (by that QP) before it binds
 * again, and an invalidated window refuses access.
 */
static void shca_mw_type2_rules(struct kunit *test)
{
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mr *win = shca_mw_new(test, f->pd, IB_MW_TYPE_2);
	struct shca_mem_target t;
	struct shca_bind b;
	u64 word = 0x1122334455667788ULL, got = 0;

	b = shca_mw_bind_of(x, win, 4096, 8192,
			    IB_ACCESS_REMOTE_ATOMIC | IB_ACCESS_REMOTE_READ |
			    IB_ZERO_BASED);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);

	/* Zero-based: address 8 of the window is byte 4096 + 8 of the MR. */
	t = shca_mw_target(f->pd, win->key, 8, IB_ACCESS_REMOTE_ATOMIC,
			   SHCA_MW_QPN);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &word, 8,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, x->buf + 4096 + 8, &word, 8);
	t.access = IB_ACCESS_REMOTE_READ;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, got, word);
	t.iova = 8192 - 7;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), -ERANGE);
	t.access = IB_ACCESS_REMOTE_WRITE;
	t.iova = 0;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &word, 8,
					   SHCA_COPY_TO_MR), -EPERM);

	/* Another QP of the same PD: refused. */
	t = shca_mw_target(f->pd, win->key, 0, IB_ACCESS_REMOTE_READ,
			   SHCA_MW_QPN2);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), -EACCES);

	/* Bound: no second bind until it is invalidated. */
	b = shca_mw_bind_of(x, win, 0, 16, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 1);

	/* Invalidated only by its QP, in its PD, with its current key. */
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, SHCA_MW_QPN2,
						 win->key), -EACCES);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd2, SHCA_MW_QPN,
						 win->key), -EACCES);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, SHCA_MW_QPN,
						 ib_inc_rkey(win->key)),
			-ENOKEY);
	t.qpn = SHCA_MW_QPN;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, SHCA_MW_QPN,
						 win->key), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), -EKEYREVOKED);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, SHCA_MW_QPN,
						 win->key), -EKEYREVOKED);

	/* Free again: binds through another QP, which alone may use it. */
	b = shca_mw_bind_of(x, win, 0, 16, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN2, &b),
			0);
	t = shca_mw_target(f->pd, win->key, x->ibmr->iova,
			   IB_ACCESS_REMOTE_READ, SHCA_MW_QPN2);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, &got, x->buf, 8);
	t.qpn = SHCA_MW_QPN;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &got, 8,
					   SHCA_COPY_FROM_MR), -EACCES);
}

/* One refused bind: what it changes from a good one, and its errno. */
struct shca_mw_refusal {
	const char *name;
	u8 type;
	int err;
};

static const struct shca_mw_refusal shca_mw_refusals[] = {
	{ "mr_without_mw_bind", IB_MW_TYPE_1, -EPERM },
	{ "write_over_read_only_mr", IB_MW_TYPE_2, -EPERM },
	{ "beyond_the_mr", IB_MW_TYPE_1, -ERANGE },
	{ "before_the_mr", IB_MW_TYPE_2, -ERANGE },
	{ "address_wraps", IB_MW_TYPE_1, -ERANGE },
	{ "qp_of_another_pd", IB_MW_TYPE_2, -EACCES },
	{ "mr_of_another_pd", IB_MW_TYPE_1, -EACCES },
	{ "key_of_another_index", IB_MW_TYPE_2, -EINVAL },
	{ "local_right_mw_bind", IB_MW_TYPE_1, -EINVAL },
	{ "undefined_access_bit", IB_MW_TYPE_2, -EINVAL },
	{ "zero_based_type_1", IB_MW_TYPE_1, -EINVAL },
	{ "stale_mr_key", IB_MW_TYPE_2, -ENOKEY },
	{ "mr_of_another_registration", IB_MW_TYPE_1, -ENOKEY },
	{ "window_of_another_allocation", IB_MW_TYPE_2, -ENOKEY },
	{ "window_named_by_an_mr", IB_MW_TYPE_1, -ENOKEY },
	{ "mr_is_a_window", IB_MW_TYPE_2, -ENOKEY },
	{ "invalidated_mr", IB_MW_TYPE_1, -EKEYREVOKED },
	{ "mr_being_deregistered", IB_MW_TYPE_2, -EKEYREVOKED },
	{ "type_2_without_mr", IB_MW_TYPE_2, -ENOKEY },
};

KUNIT_ARRAY_PARAM_DESC(shca_mw_refusal, shca_mw_refusals, name);

/*
 * Pass: each refused bind fails with its errno and changes nothing: the
 * window keeps its key and stays unbound, the MRs count no window, and
 * a good bind afterwards works.
 */
static void shca_mw_refuse_bind(struct kunit *test)
{
	const struct shca_mw_refusal *c = test->param_value;
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mr *win = shca_mw_new(test, f->pd, c->type);
	struct ib_pd *qp_pd = f->pd;
	struct shca_mr *other = NULL;
	struct shca_bind b;
	u32 key = win->key;

	b = shca_mw_bind_of(x, win, 0, 4096, IB_ACCESS_REMOTE_READ);
	if (!strcmp(c->name, "mr_without_mw_bind")) {
		other = to_shca_mr(shca_mw_test_mr(test, f->pd, x->buf,
						   IB_ACCESS_LOCAL_WRITE));
	} else if (!strcmp(c->name, "write_over_read_only_mr")) {
		other = to_shca_mr(shca_mw_test_mr(test, f->pd, x->buf,
						   IB_ACCESS_MW_BIND));
		b.access = IB_ACCESS_REMOTE_WRITE;
	} else if (!strcmp(c->name, "beyond_the_mr")) {
		b.addr = x->ibmr->iova + SHCA_MW_BUF - 4095;
	} else if (!strcmp(c->name, "before_the_mr")) {
		b.addr = x->ibmr->iova - 1;
	} else if (!strcmp(c->name, "address_wraps")) {
		b.addr = U64_MAX - 100;
	} else if (!strcmp(c->name, "qp_of_another_pd")) {
		qp_pd = f->pd2;
	} else if (!strcmp(c->name, "mr_of_another_pd")) {
		other = to_shca_mr(shca_mw_test_mr(test, f->pd2, x->buf,
						   IB_ACCESS_MW_BIND));
	} else if (!strcmp(c->name, "key_of_another_index")) {
		b.new_key = x->mr->key;
	} else if (!strcmp(c->name, "local_right_mw_bind")) {
		b.access |= IB_ACCESS_MW_BIND;
	} else if (!strcmp(c->name, "undefined_access_bit")) {
		b.access |= 1 << 30;
	} else if (!strcmp(c->name, "zero_based_type_1")) {
		b.access |= IB_ZERO_BASED;
	} else if (!strcmp(c->name, "stale_mr_key")) {
		b.mr_key = ib_inc_rkey(b.mr_key);
	} else if (!strcmp(c->name, "mr_of_another_registration")) {
		b.mr_id++;
	} else if (!strcmp(c->name, "window_of_another_allocation")) {
		b.mw_id++;
	} else if (!strcmp(c->name, "window_named_by_an_mr")) {
		b.mw_key = x->mr->key;
		b.mw_id = x->mr->id;
		b.new_key = ib_inc_rkey(x->mr->key);
	} else if (!strcmp(c->name, "mr_is_a_window")) {
		other = shca_mw_new(test, f->pd, IB_MW_TYPE_2);
	} else if (!strcmp(c->name, "invalidated_mr")) {
		other = to_shca_mr(shca_mw_test_mr(test, f->pd, x->buf,
						   IB_ACCESS_MW_BIND));
		KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0,
							 other->key), 0);
	} else if (!strcmp(c->name, "mr_being_deregistered")) {
		other = to_shca_mr(shca_mw_test_mr(test, f->pd, x->buf,
						   IB_ACCESS_MW_BIND));
		KUNIT_ASSERT_EQ(test, shca_mr_retire(other), 0);
	} else if (!strcmp(c->name, "type_2_without_mr")) {
		b.mr_key = 0;
		b.mr_id = 0;
		b.length = 0;
	}
	if (other) {
		b.mr_key = other->key;
		b.mr_id = other->id;
	}

	KUNIT_EXPECT_EQ(test, shca_mw_bind(f->sdev, qp_pd, SHCA_MW_QPN, &b),
			c->err);
	KUNIT_EXPECT_EQ(test, win->key, key);
	KUNIT_EXPECT_EQ(test, win->state, SHCA_MR_FREE);
	KUNIT_EXPECT_NULL(test, win->parent);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
	if (other)
		KUNIT_EXPECT_EQ(test, atomic_read(&other->windows), 0);

	b = shca_mw_bind_of(x, win, 0, 4096, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);
}

/*
 * Pass: an MR with a bound window refuses deregistration, invalidation
 * and binding nothing else changes; once the window is deallocated the
 * MR deregisters.
 */
static void shca_mw_lifetime(struct kunit *test)
{
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mr *win = shca_mw_create(f->sdev, f->pd, IB_MW_TYPE_2);
	struct shca_mem_target t;
	struct shca_bind b;
	u8 out[32];

	KUNIT_ASSERT_FALSE(test, IS_ERR(win));
	b = shca_mw_bind_of(x, win, 64, 64, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);

	KUNIT_EXPECT_EQ(test, ib_dereg_mr(x->ibmr), -EBUSY);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0,
						 x->mr->key), -EBUSY);
	KUNIT_EXPECT_EQ(test, x->mr->state, SHCA_MR_VALID);
	KUNIT_EXPECT_FALSE(test, x->mr->dying);

	/* Both still work. */
	t = shca_mw_target(f->pd, win->key, b.addr, IB_ACCESS_REMOTE_READ,
			   SHCA_MW_QPN);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, x->buf + 64, sizeof(out));
	t = shca_mw_target(f->pd, x->mr->key, b.addr, 0, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);

	/* Deallocating a bound window unbinds it: the MR may go. */
	shca_mw_destroy(win);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
	kunit_remove_action(test, shca_kunit_dereg_mr, x->ibmr);
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(x->ibmr), 0);
	x->ibmr = NULL;
	x->mr = NULL;
}

/*
 * Issue 29 (second review, F5): rereg_user_mr retires the MR it replaces
 * before making the new one, under the MR's lock, so no window binds to
 * it in between (the core's deregistration of the old MR would then fail
 * with EBUSY and leave it behind). Retired, the MR refuses binds
 * (EKEYREVOKED) and still moves bytes; when the new MR cannot be made it
 * is unretired and binds again; with a window bound it cannot be retired
 * (EBUSY) and nothing changes.
 */
static void shca_mw_rereg_retires(struct kunit *test)
{
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mr *win = shca_mw_new(test, f->pd, IB_MW_TYPE_2);
	struct shca_bind b = shca_mw_bind_of(x, win, 0, 64,
					     IB_ACCESS_REMOTE_READ);
	struct shca_mem_target t = shca_mw_target(f->pd, x->mr->key,
						  x->ibmr->iova, 0, 0);
	u8 out[16];

	KUNIT_ASSERT_EQ(test, shca_mr_retire(x->mr), 0);
	KUNIT_EXPECT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b),
			-EKEYREVOKED);
	KUNIT_EXPECT_EQ(test, win->state, SHCA_MR_FREE);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);

	shca_mr_unretire(x->mr);
	KUNIT_EXPECT_FALSE(test, x->mr->dying);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_retire(x->mr), -EBUSY);
	KUNIT_EXPECT_FALSE(test, x->mr->dying);
}

static struct shca_mr *shca_mw_cut_win;
static int shca_mw_cut_chunks;

/* Between chunks: the window's QP invalidates it after the first one. */
static void shca_mw_cut_stub(struct shca_mr *mr)
{
	if (mr == shca_mw_cut_win && ++shca_mw_cut_chunks == 1)
		shca_mr_invalidate(mr->sdev, mr->ibmr.pd, SHCA_MW_QPN,
				   mr->key);
}

/*
 * Pass: a remote write through a window that is invalidated in the
 * middle stops at the next chunk with -EKEYREVOKED: the first chunk
 * landed, nothing after it did.
 */
static void shca_mw_inflight(struct kunit *test)
{
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mr *win = shca_mw_new(test, f->pd, IB_MW_TYPE_2);
	u8 *in = kunit_kmalloc(test, SHCA_MW_BUF, GFP_KERNEL);
	struct shca_mem_target t;
	struct shca_bind b;

	KUNIT_ASSERT_NOT_NULL(test, in);
	memset(in, 0x5a, SHCA_MW_BUF);
	memset(x->buf, 0, SHCA_MW_BUF);
	b = shca_mw_bind_of(x, win, 0, SHCA_MW_BUF, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b), 0);

	shca_mw_cut_win = win;
	shca_mw_cut_chunks = 0;
	kunit_activate_static_stub(test, shca_mr_copy_chunk_done,
				   shca_mw_cut_stub);
	t = shca_mw_target(f->pd, win->key, b.addr, IB_ACCESS_REMOTE_WRITE,
			   SHCA_MW_QPN);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, SHCA_MW_BUF,
					   SHCA_COPY_TO_MR), -EKEYREVOKED);
	kunit_deactivate_static_stub(test, shca_mr_copy_chunk_done);
	KUNIT_EXPECT_EQ(test, shca_mw_cut_chunks, 1);
	KUNIT_EXPECT_EQ(test, x->buf[0], 0x5a);
	KUNIT_EXPECT_EQ(test, x->buf[SZ_16K - 1], 0x5a);
	KUNIT_EXPECT_EQ(test, x->buf[SZ_16K], 0);
	KUNIT_EXPECT_EQ(test, x->buf[SHCA_MW_BUF - 1], 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
}

/* shca_mw_dealloc_race: the window's deallocation, in another thread. */
struct shca_mw_dealloc {
	struct shca_mr *win;
	struct completion done;
};

static struct shca_mw_dealloc *shca_mw_dealloc_ctx;

static int shca_mw_dealloc_fn(void *arg)
{
	struct shca_mw_dealloc *d = arg;

	shca_mw_destroy(d->win);
	complete(&d->done);
	return 0;
}

/*
 * The bind has found the window (and holds a reference): deallocate the
 * window now, from another thread, and let the bind go on once the
 * deallocation has unbound it and waits for the bind's reference.
 */
static void shca_mw_dealloc_stub(struct shca_mr *win)
{
	struct shca_mw_dealloc *d = shca_mw_dealloc_ctx;
	struct task_struct *task;
	int i;

	if (win != d->win)
		return;
	task = kthread_run(shca_mw_dealloc_fn, d, "shca_mw_dealloc");
	if (IS_ERR(task))
		return;
	for (i = 0; i < 1000 && !READ_ONCE(win->dying); i++)
		usleep_range(500, 1000);
}

/**
 * struct shca_mw_race_param - a bind raced by its window's deallocation
 * @name: the case's description
 * @type: the window's type
 * @bound: the window is bound (to the first page) before the race
 * @len: length of the racing bind; 0 unbinds a type 1 window
 */
struct shca_mw_race_param {
	const char *name;
	u8 type;
	bool bound;
	u64 len;
};

static const struct shca_mw_race_param shca_mw_race_params[] = {
	{ "type 2 bind", IB_MW_TYPE_2, false, 4096 },
	{ "type 1 bind", IB_MW_TYPE_1, false, 4096 },
	{ "type 1 rebind", IB_MW_TYPE_1, true, 8192 },
	{ "type 1 unbind", IB_MW_TYPE_1, true, 0 },
};

KUNIT_ARRAY_PARAM_DESC(shca_mw_race, shca_mw_race_params, name);

/*
 * Pass: a bind racing the window's deallocation (it found the window
 * before the deallocation unbound it) fails, and leaves the MR with no
 * window counted: the MR deregisters. Before the fix the bind installed
 * itself on the dying window and the MR refused dereg for ever; a type 1
 * unbind (length 0, no MR named) then dereferenced a NULL MR.
 */
static void shca_mw_dealloc_race(struct kunit *test)
{
	const struct shca_mw_race_param *p = test->param_value;
	struct shca_mw_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct shca_mw_dealloc *d = kunit_kzalloc(test, sizeof(*d),
						  GFP_KERNEL);
	struct shca_bind b;

	KUNIT_ASSERT_NOT_NULL(test, d);
	d->win = shca_mw_create(f->sdev, f->pd, p->type);
	KUNIT_ASSERT_FALSE(test, IS_ERR(d->win));
	init_completion(&d->done);
	shca_mw_dealloc_ctx = d;
	if (p->bound) {
		b = shca_mw_bind_of(x, d->win, 0, 4096, IB_ACCESS_REMOTE_READ);
		KUNIT_ASSERT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN,
						   &b), 0);
		KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 1);
	}
	b = shca_mw_bind_of(x, d->win, 0, p->len, IB_ACCESS_REMOTE_READ);
	kunit_activate_static_stub(test, shca_mw_bind_found,
				   shca_mw_dealloc_stub);
	KUNIT_EXPECT_EQ(test, shca_mw_bind(f->sdev, f->pd, SHCA_MW_QPN, &b),
			-ENOKEY);
	kunit_deactivate_static_stub(test, shca_mw_bind_found);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&d->done, 10 * HZ));
	KUNIT_EXPECT_EQ(test, atomic_read(&x->mr->windows), 0);
	kunit_remove_action(test, shca_kunit_dereg_mr, x->ibmr);
	KUNIT_EXPECT_EQ(test, ib_dereg_mr(x->ibmr), 0);
}

static struct kunit_case shca_mw_cases[] = {
	KUNIT_CASE(shca_mw_type1_roundtrip),
	KUNIT_CASE(shca_mw_type2_rules),
	KUNIT_CASE_PARAM(shca_mw_refuse_bind, shca_mw_refusal_gen_params),
	KUNIT_CASE(shca_mw_lifetime),
	KUNIT_CASE(shca_mw_rereg_retires),
	KUNIT_CASE(shca_mw_inflight),
	KUNIT_CASE_PARAM(shca_mw_dealloc_race, shca_mw_race_gen_params),
	{}
};

static struct kunit_suite shca_mw_suite = {
	.name = "shca_mw",
	.init = shca_mw_test_init,
	.test_cases = shca_mw_cases,
};

kunit_test_suites(&shca_mw_suite);
