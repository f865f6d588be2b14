// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_errors: every completion error with its exact
 * fields and the QP states that follow: bad lkey and rkey, remote range,
 * length errors, RNR exhaustion and an infinite RNR wait, an unconnected
 * peer, another PD, a flush cutting a retry.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/delay.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* A bad lkey fails locally; what follows is flushed; the peer is fine. */
static void shca_qp_err_lkey(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 16);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1,
				 .next = &wr2 };
	struct ib_sge bad = sge;

	/* Over the UDP link: refused before a packet leaves. */
	if (f->net)
		f->net->silent = true;
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 9, &dst, 1), 0);
	bad.lkey ^= 0x80;
	wr.sg_list = &bad;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_LOC_PROT_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->b.cq);

	/* Posting to a QP in the error state completes with a flush. */
	wr.wr_id = 3;
	wr.next = NULL;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_WR_FLUSH_ERR, 0, NULL);
}

/* A bad rkey: REM_ACCESS_ERR here, the responder errors out too. */
static void shca_qp_err_rkey(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 16);
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 16);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
	};
	u32 rkey;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, IB_ACCESS_LOCAL_WRITE |
			   IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 7, &rsge, 1), 0);
	/* The MR grants remote read only. */
	wr.rkey = rkey;
	wr.remote_addr = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	shca_qt_expect_wc(test, f->b.cq, 7, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 2000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_ACCESS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
}

/* Out of range, wrong PD and stale keys are all REM_ACCESS_ERR. */
static void shca_qp_err_remote_range(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 4096);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.sg_list = &sge, .num_sge = 1 },
	};

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + SHCA_QT_BUF - 4095;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, 4096, 0));
}

/*
 * A SEND larger than the receive: both sides report it, each with its
 * completion (shca_wire_recv_len_error: the same on the wire).
 */
static void shca_qp_err_len(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 101);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 100);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 5, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_INV_REQ_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->b.cq, 5, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	/* The completion reports it: no event (as on the wire). */
	msleep(20);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
}

/*
 * Issue 30: a WRITE with immediate whose key the responder refuses, and
 * no receive posted for it: IB_WC_REM_ACCESS_ERR at once, the responder
 * in the error state - the range is judged before a receive is looked
 * for, as on the wire (shca_wire_write_imm_refused_first). Before, the
 * memory link waited out its RNR retries (IB_WC_RNR_RETRY_EXC_ERR).
 */
static void shca_qp_write_imm_refused_first(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 1,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_qt_connect(test, &f->a, &f->b, &c);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW) ^ 0x100;
	wr.remote_addr = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
}

/* No receive posted: RNR retries, then RNR_RETRY_EXC_ERR. */
static void shca_qp_err_rnr(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 2,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };

	shca_qt_connect(test, &f->a, &f->b, &c);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
}

/* rnr_retry 7 waits for ever: a late receive still gets the SEND. */
static void shca_qp_rnr_late_recv(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	msleep(100);
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 2, &dst, 1), 0);
	shca_qt_expect_wc(test, f->b.cq, 2, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
}

/*
 * Nobody at the other end (a QP number nobody has, a peer that is not
 * connected back, a GID no softhca device owns): RETRY_EXC_ERR.
 */
static void shca_qp_err_no_peer(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 1, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };

	/* b is still in RESET: not connected back. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->a.qp, f->b.ibdev,
					     f->b.qp->qp_num, &c), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

/*
 * Keys of another PD, even on the same device: a peer QP in a different
 * PD can neither write nor read through them, a QP of another PD cannot
 * invalidate them locally or remotely, and they keep working for their
 * owner.
 */
static void shca_qp_err_other_pd(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_end *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
	};
	struct ib_send_wr inv = { .wr_id = 2, .opcode = IB_WR_LOCAL_INV };
	struct shca_mem_target t = { .access = IB_ACCESS_REMOTE_READ };
	struct ib_sge dst;
	u8 byte;

	KUNIT_ASSERT_NOT_NULL(test, c);
	shca_qt_end_init(test, c, f->b.ibdev, IB_POLL_DIRECT);
	dst = shca_qt_sge(c, 0, 64);
	/* b registers its MR over a loopback connection of its own. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->b.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->b.qp, f->b.ibdev,
					     f->b.qp->qp_num,
					     &shca_qt_default_conn), 0);
	t.key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	t.iova = f->b.mr->iova;
	t.pd = f->b.pd;

	/* a talks to c, which lives in another PD of b's device. */
	shca_qt_fill(f->a.buf, 64, 5);
	shca_qt_connect(test, &f->a, c, &shca_qt_default_conn);
	wr.rkey = t.key;
	wr.remote_addr = t.iova;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));

	/* c cannot invalidate b's key locally ... */
	inv.ex.invalidate_rkey = t.key;
	shca_qt_restate(test, c, &f->a, &shca_qt_default_conn);
	shca_qt_restate(test, &f->a, c, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post(c, &inv), 0);
	shca_qt_expect_wc(test, c->cq, 2, IB_WC_LOC_PROT_ERR, 0, NULL);

	/* ... nor can a make c invalidate it with SEND_WITH_INV. */
	shca_qt_restate(test, c, &f->a, &shca_qt_default_conn);
	shca_qt_restate(test, &f->a, c, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(c, 3, &dst, 1), 0);
	wr.wr.wr_id = 4;
	wr.wr.opcode = IB_WR_SEND_WITH_INV;
	wr.wr.ex.invalidate_rkey = t.key;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_REM_OP_ERR, 0, NULL);
	shca_qt_expect_wc(test, c->cq, 3, IB_WC_LOC_PROT_ERR, 0, NULL);

	/* The owner's key is still registered. */
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR), 0);
}

/*
 * Moving a QP to ERR flushes at once, even while its head request waits
 * out a long local ACK timeout (ib_drain_qp() depends on it).
 */
static void shca_qp_err_flush_cuts_retry(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 20, .retry_cnt = 7, .rnr_retry = 7,	/* 4.3 s */
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;

	/* b stays in RESET: a retries. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->a.qp, f->b.ibdev,
					     f->b.qp->qp_num, &c), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	msleep(50);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a.qp, &attr, IB_QP_STATE), 0);
	KUNIT_ASSERT_TRUE_MSG(test, shca_qt_poll(f->a.cq, &wc, 1000),
			      "no flush within about a second");
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
}

static struct kunit_case shca_qp_errors_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_err_lkey, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_err_rkey, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_err_remote_range),
	KUNIT_CASE_PARAM(shca_qp_err_other_pd, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_err_len),
	KUNIT_CASE(shca_qp_write_imm_refused_first),
	KUNIT_CASE(shca_qp_err_rnr),
	KUNIT_CASE(shca_qp_rnr_late_recv),
	KUNIT_CASE(shca_qp_err_no_peer),
	KUNIT_CASE(shca_qp_err_flush_cuts_retry),
	{}
};

static struct kunit_suite shca_qp_errors_suite = {
	.name = "shca_qp_errors",
	.init = shca_qt_init,
	.test_cases = shca_qp_errors_cases,
};

kunit_test_suites(&shca_qp_errors_suite);
