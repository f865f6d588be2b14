// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_pi: integrity MRs on integrity-enabled QPs, as
 * nvme-rdma and nvmet-rdma use them.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/crc-t10dif.h>
#include <linux/random.h>
#include <linux/unaligned.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

#define SHCA_PI_NBLK	8
#define SHCA_PI_IVL	512
#define SHCA_PI_STEP	(SHCA_PI_IVL + 8)
#define SHCA_PI_WLEN	(SHCA_PI_NBLK * SHCA_PI_STEP)

/* An integrity MR over data and metadata in kernel memory. */
struct shca_qt_pi {
	struct ib_mr *mr;
	u8 *data;
	u8 *meta;
	struct scatterlist sg[2];
};

/* Replace @e's QP by an integrity-enabled one (nvme-rdma's I/O queues). */
static void shca_qt_pi_qp(struct kunit *test, struct shca_qt_end *e)
{
	e->qp = shca_qt_qp_flags(test, e, SHCA_QT_WR, 4, 0,
				 IB_QP_CREATE_INTEGRITY_EN);
	KUNIT_ASSERT_TRUE(test, e->qp->integrity_en);
}

/* Random data and, by crc_t10dif(), the tuples of @ref_tag's blocks. */
static void shca_qt_pi_fill(struct shca_qt_pi *p, u32 ref_tag)
{
	u32 b;

	get_random_bytes(p->data, SHCA_PI_NBLK * SHCA_PI_IVL);
	for (b = 0; b < SHCA_PI_NBLK; b++) {
		u8 *t = p->meta + b * 8;

		put_unaligned_be16(crc_t10dif(p->data + b * SHCA_PI_IVL,
					      SHCA_PI_IVL), t);
		put_unaligned_be16(0x1234, t + 2);
		put_unaligned_be32(ref_tag + b, t + 4);
	}
}

/* Post IB_WR_REG_MR_INTEGRITY for @p on @e's QP under a new key byte. */
static int shca_qt_pi_post_reg(struct shca_qt_end *e, struct shca_qt_pi *p,
			       int access, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.mr = p->mr,
		.access = access,
	};

	ib_update_fast_reg_key(p->mr, ib_inc_rkey(p->mr->rkey));
	wr.key = p->mr->rkey;
	return shca_qt_post(e, &wr.wr);
}

/*
 * Map and register an integrity MR on @e: T10-DIF CRC in memory and on
 * the wire, 512-byte blocks, ref tags from @ref_tag, everything checked
 * (nvmet-rdma's choice).
 */
static void shca_qt_pi_mr(struct kunit *test, struct shca_qt_end *e,
			  struct shca_qt_pi *p, u32 ref_tag)
{
	struct ib_sig_attrs *a;

	p->data = kunit_kzalloc(test, SHCA_PI_NBLK * SHCA_PI_IVL, GFP_KERNEL);
	p->meta = kunit_kzalloc(test, SHCA_PI_NBLK * 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->data);
	KUNIT_ASSERT_NOT_NULL(test, p->meta);
	shca_qt_pi_fill(p, ref_tag);
	sg_init_one(&p->sg[0], p->data, SHCA_PI_NBLK * SHCA_PI_IVL);
	sg_init_one(&p->sg[1], p->meta, SHCA_PI_NBLK * 8);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(e->ibdev, &p->sg[0], 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(e->ibdev, &p->sg[1], 1,
					    DMA_BIDIRECTIONAL), 1);
	p->mr = ib_alloc_mr_integrity(e->pd, 1, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, p->mr);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(p->mr, &p->sg[0], 1, NULL,
					      &p->sg[1], 1, NULL, SZ_4K), 0);

	a = p->mr->sig_attrs;
	memset(a, 0, sizeof(*a));
	a->check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_REFTAG |
			IB_SIG_CHECK_APPTAG;
	a->mem.sig_type = IB_SIG_TYPE_T10_DIF;
	a->mem.sig.dif.bg_type = IB_T10DIF_CRC;
	a->mem.sig.dif.pi_interval = SHCA_PI_IVL;
	a->mem.sig.dif.ref_tag = ref_tag;
	a->mem.sig.dif.ref_remap = true;
	a->mem.sig.dif.app_tag = 0x1234;
	a->mem.sig.dif.apptag_check_mask = 0xffff;
	a->wire = a->mem;

	KUNIT_ASSERT_EQ(test, shca_qt_pi_post_reg(e, p, SHCA_QT_RW &
						  ~IB_ACCESS_REMOTE_ATOMIC,
						  0x9e9), 0);
	shca_qt_expect_wc(test, e->cq, 0x9e9, IB_WC_SUCCESS, IB_WC_REG_MR,
			  NULL);
}

/* Read the status once; return fail_status, the error in @err. */
static u32 shca_qt_pi_status(struct kunit *test, struct shca_qt_pi *p,
			     struct ib_sig_err *err)
{
	struct ib_mr_status st;

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(p->mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	*err = st.sig_err;
	return st.fail_status;
}

/* LOCAL_INV and a new registration, as a ULP recycles its MR. */
static void shca_qt_pi_recycle(struct kunit *test, struct shca_qt_end *e,
			       struct shca_qt_pi *p)
{
	struct ib_send_wr inv = {
		.wr_id = 0x1ee, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = p->mr->rkey,
	};

	KUNIT_ASSERT_EQ(test, shca_qt_post(e, &inv), 0);
	shca_qt_expect_wc(test, e->cq, 0x1ee, IB_WC_SUCCESS, IB_WC_LOCAL_INV,
			  NULL);
	KUNIT_ASSERT_EQ(test, shca_qt_pi_post_reg(e, p, SHCA_QT_RW &
						  ~IB_ACCESS_REMOTE_ATOMIC,
						  0x9e9), 0);
	shca_qt_expect_wc(test, e->cq, 0x9e9, IB_WC_SUCCESS, IB_WC_REG_MR,
			  NULL);
}

/* The target (b) READs the host's (a) wire view into its own MR, or WRITEs. */
static void shca_qt_pi_rdma(struct kunit *test, struct shca_qt_fix *f,
			    struct shca_qt_pi *host, struct shca_qt_pi *tgt,
			    enum ib_wr_opcode op)
{
	struct ib_sge sge = { .addr = 0, .length = SHCA_PI_WLEN,
			      .lkey = tgt->mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 0x7d, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0,
		.rkey = host->mr->rkey,
	};

	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->b, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 0x7d, IB_WC_SUCCESS,
			  op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
						  IB_WC_RDMA_WRITE, NULL);
}

/*
 * Pass: nvme-rdma's and nvmet-rdma's use of integrity MRs, between
 * integrity-enabled QPs: the target READs the host's data and tuples
 * (a write I/O) and WRITEs them back (a read I/O), byte-exact; a damaged
 * tuple is caught by the engine of each MR it passes (the source checks
 * its memory, the destination the wire) and is latched before the
 * completion the ULP checks the status from; the next I/O, after
 * LOCAL_INV and re-registration, is clean.
 */
static void shca_qp_pi_nvme(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_pi host, tgt;
	struct ib_sig_err err;
	u16 guard;

	shca_qt_pi_qp(test, &f->a);
	shca_qt_pi_qp(test, &f->b);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_pi_mr(test, &f->a, &host, 100);
	shca_qt_pi_mr(test, &f->b, &tgt, 100);
	memset(tgt.data, 0, SHCA_PI_NBLK * SHCA_PI_IVL);
	memset(tgt.meta, 0, SHCA_PI_NBLK * 8);

	/* Write I/O: the target pulls data and PI. */
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_READ);
	KUNIT_EXPECT_MEMEQ(test, tgt.data, host.data,
			   SHCA_PI_NBLK * SHCA_PI_IVL);
	KUNIT_EXPECT_MEMEQ(test, tgt.meta, host.meta, SHCA_PI_NBLK * 8);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err), 0);

	/* A flipped guard bit in the host's PI buffer. */
	shca_qt_pi_recycle(test, &f->a, &host);
	shca_qt_pi_recycle(test, &f->b, &tgt);
	guard = get_unaligned_be16(host.meta + 6 * 8);
	host.meta[6 * 8] ^= 0x04;
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_READ);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, err.expected, guard);
	KUNIT_EXPECT_EQ(test, err.actual, guard ^ 0x0400);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 6 * SHCA_PI_STEP);
	KUNIT_EXPECT_EQ(test, err.key, tgt.mr->rkey);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, err.key, host.mr->rkey);
	host.meta[6 * 8] ^= 0x04;

	/* Read I/O: the target pushes, with a wrong ref tag in block 2. */
	shca_qt_pi_recycle(test, &f->a, &host);
	shca_qt_pi_recycle(test, &f->b, &tgt);
	shca_qt_pi_fill(&tgt, 100);
	put_unaligned_be32(7, tgt.meta + 2 * 8 + 4);
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_WRITE);
	KUNIT_EXPECT_MEMEQ(test, host.data, tgt.data,
			   SHCA_PI_NBLK * SHCA_PI_IVL);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_REFTAG);
	KUNIT_EXPECT_EQ(test, err.expected, 102);
	KUNIT_EXPECT_EQ(test, err.actual, 7);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 2 * SHCA_PI_STEP);
	KUNIT_EXPECT_EQ(test, err.key, host.mr->rkey);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_REFTAG);

	/* The next I/O is clean. */
	shca_qt_pi_recycle(test, &f->a, &host);
	shca_qt_pi_recycle(test, &f->b, &tgt);
	shca_qt_pi_fill(&tgt, 100);
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_WRITE);
	KUNIT_EXPECT_MEMEQ(test, host.meta, tgt.meta, SHCA_PI_NBLK * 8);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err), 0);
}

/*
 * Pass: SEND from an integrity MR into a receive buffer that is one:
 * the wire stream (data with PI) is what the SEND carries, and the
 * receiver's engine strips it back into data and metadata.
 */
static void shca_qp_pi_send(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_pi src, dst;
	struct ib_sge s, r;
	struct ib_send_wr wr = { .wr_id = 0x5e, .opcode = IB_WR_SEND,
				 .sg_list = &s, .num_sge = 1,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_sig_err err;
	struct ib_wc wc;

	shca_qt_pi_qp(test, &f->a);
	shca_qt_pi_qp(test, &f->b);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_pi_mr(test, &f->a, &src, 5);
	shca_qt_pi_mr(test, &f->b, &dst, 5);
	memset(dst.data, 0, SHCA_PI_NBLK * SHCA_PI_IVL);
	memset(dst.meta, 0, SHCA_PI_NBLK * 8);

	r = (struct ib_sge){ .addr = 0, .length = SHCA_PI_WLEN,
			     .lkey = dst.mr->lkey };
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 0x4ec, &r, 1), 0);
	s = (struct ib_sge){ .addr = 0, .length = SHCA_PI_WLEN,
			     .lkey = src.mr->lkey };
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 0x5e, IB_WC_SUCCESS, IB_WC_SEND,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 0x4ec, IB_WC_SUCCESS, IB_WC_RECV,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_PI_WLEN);
	KUNIT_EXPECT_MEMEQ(test, dst.data, src.data,
			   SHCA_PI_NBLK * SHCA_PI_IVL);
	KUNIT_EXPECT_MEMEQ(test, dst.meta, src.meta, SHCA_PI_NBLK * 8);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &src, &err), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &dst, &err), 0);
}

/*
 * Pass: IB_WR_REG_MR_INTEGRITY is refused when posted (-EINVAL, the QP
 * untouched), as on mlx5: with SGEs, with remote atomic access, on an MR
 * that is not an integrity MR, with attributes the engine cannot run,
 * and before the status of the previous registration was read.
 */
static void shca_qp_pi_post_refused(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE,
	};
	struct shca_qt_pi p;
	struct ib_sig_err err;

	shca_qt_pi_qp(test, &f->a);
	shca_qt_pi_qp(test, &f->b);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_pi_mr(test, &f->a, &p, 0);

	/* Registered and not checked since: refused. */
	KUNIT_EXPECT_EQ(test, shca_qt_pi_post_reg(&f->a, &p,
						  IB_ACCESS_LOCAL_WRITE, 1),
			-EINVAL);
	/* The key in force is still the registered one. */
	ib_update_fast_reg_key(p.mr, (u8)(p.mr->rkey - 1));
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &p, &err), 0);

	wr.mr = p.mr;
	wr.key = p.mr->rkey;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	wr.wr.num_sge = 0;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	wr.access = IB_ACCESS_LOCAL_WRITE;
	p.mr->sig_attrs->wire.sig.dif.pi_interval = 520;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	p.mr->sig_attrs->wire.sig.dif.pi_interval = SHCA_PI_IVL;
	wr.mr = f->a.mr;
	wr.key = f->a.mr->rkey;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);

	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->a.cq);
	/* Status read: the recycle (LOCAL_INV + registration) goes through. */
	shca_qt_pi_recycle(test, &f->a, &p);
}

static struct kunit_case shca_qp_pi_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_pi_nvme, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_pi_send),
	KUNIT_CASE(shca_qp_pi_post_refused),
	{}
};

static struct kunit_suite shca_qp_pi_suite = {
	.name = "shca_qp_pi",
	.init = shca_qt_init,
	.test_cases = shca_qp_pi_cases,
};

kunit_test_suites(&shca_qp_pi_suite);
