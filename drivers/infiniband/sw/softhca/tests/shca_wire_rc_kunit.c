// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_wire_rc: every RC operation across the wire,
 * byte-exact and in the packets it should take; operations in flight at
 * once; scatter, gather, inline data, zero-length messages,
 * SEND_WITH_INV and the solicited event bit; a READ's responses in runs
 * of at most 64; entering RTS without writing the requester's state.
 *
 * The network between a and b is the test network, pumped by the
 * test's thread; the fixture is shca_kunit_wire.c.
 */

#include <linux/delay.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_wire.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/*
 * Each operation, four packets of data (3 x path MTU + 100), across the
 * wire: exactly the packets it takes (one ACK, or four READ responses)
 * and nothing sent again, dropped or left over.
 */
static void shca_wire_rc_op(struct kunit *test)
{
	const struct shca_wt_op *op = test->param_value;
	struct shca_qt_fix *f = test->priv;

	shca_wt_connect(f, &shca_wt_calm);
	shca_wt_do(f, op->opcode);
	KUNIT_EXPECT_EQ(test, f->net->count[0], op->a_pkts);
	KUNIT_EXPECT_EQ(test, f->net->count[1], op->b_pkts);
	KUNIT_EXPECT_EQ(test, f->net->stray, 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS),
			op->a_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_PKTS),
			op->b_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_DROPPED), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_DUP_REQS), 0);
	if (f->net->count[0] != op->a_pkts || f->net->count[1] != op->b_pkts)
		shca_knet_dump(f->net);
}

/*
 * WRITEs and READs of 0 to 10000 bytes in flight at once: completed in
 * order, each byte-exact (WRITEs from and to the first halves of the
 * buffers, READs from and to the second halves).
 */
static void shca_wire_rc_pipeline(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_rdma_wr wr[6] = {};
	struct ib_sge sge[6];
	struct ib_wc wc;
	u32 rkey, half = SHCA_QT_BUF / 2;
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_wt_fill(f->a.buf, half, 5);
	shca_wt_fill(f->b.buf + half, half, 9);
	for (i = 0; i < 6; i++) {
		bool read = i & 1;
		u32 off = (read ? half : 0) + i * 3000;

		sge[i] = shca_qt_sge(&f->a, off, i * 2000);
		wr[i].wr.wr_id = i;
		wr[i].wr.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 5 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = f->b.mr->iova + off;
		wr[i].rkey = rkey;
	}
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr[0].wr), 0);
	for (i = 0; i < 6; i++) {
		shca_qt_expect_wc(test, f->a.cq, i, IB_WC_SUCCESS,
				  i & 1 ? IB_WC_RDMA_READ : IB_WC_RDMA_WRITE,
				  &wc);
		if (i & 1)
			KUNIT_EXPECT_EQ(test, wc.byte_len, i * 2000);
	}
	/* a's and b's buffers now hold the same bytes, where it was sent. */
	for (i = 0; i < 6; i++) {
		u32 off = (i & 1 ? half : 0) + i * 3000;

		KUNIT_EXPECT_EQ_MSG(test, memcmp(f->a.buf + off, f->b.buf + off,
						 i * 2000), 0, "%s %d",
				    i & 1 ? "READ" : "WRITE", i);
	}
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 4 * 3000 + 8000,
					    half - 20000, 0));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	/* A packet per WRITE MTU (one for 0 bytes), one per READ. */
	KUNIT_EXPECT_EQ(test, f->net->count[0], 1 + 1 + 4 + 1 + 8 + 1);
}

/*
 * Scatter and gather across packet boundaries (SEND and READ, two SGEs
 * each side), inline data, zero-length SEND and READ, SEND_WITH_INV
 * (the receiver sees the key, which no longer works), the solicited
 * event bit: each byte-exact, each completion's fields.
 */
static void shca_wire_rc_misc(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_mem_target t = { .pd = f->b.pd,
				     .access = IB_ACCESS_REMOTE_READ };
	struct ib_sge src[2] = {
		shca_qt_sge(&f->a, 0, 1500),
		shca_qt_sge(&f->a, 5000, 1000),
	};
	struct ib_sge dst[2] = {
		shca_qt_sge(&f->b, 0, 700),
		shca_qt_sge(&f->b, 9000, 3000),
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED,
			.sg_list = src, .num_sge = 2 },
	};
	struct ib_wc wc;
	u8 byte;

	shca_wt_connect(f, &shca_wt_calm);
	f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_wt_fill(f->a.buf, SHCA_QT_BUF, 11);

	/* 2500 bytes from two SGEs into two, three packets. */
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 11, dst, 2), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 11, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2500);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 3);
	/* The solicited event bit, on the last packet only. */
	KUNIT_EXPECT_EQ(test, f->net->seen[2].opcode, IB_OPCODE_RC_SEND_LAST);
	KUNIT_EXPECT_TRUE(test, f->net->seen[2].se);
	KUNIT_EXPECT_FALSE(test, f->net->seen[0].se || f->net->seen[1].se);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 700), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 9000, f->a.buf + 700, 800), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 9800, f->a.buf + 5000, 1000),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 700, 9000 - 700, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 10800, 1200, 0));

	/* READ the same 2500 bytes back, scattered the other way round. */
	src[0] = shca_qt_sge(&f->a, 30000, 2000);
	src[1] = shca_qt_sge(&f->a, 40000, 500);
	wr.wr.wr_id = 2;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = f->b.mr->iova + 9000;
	wr.rkey = f->rkey;
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2500);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 30000, f->b.buf + 9000, 2000),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 40000, f->b.buf + 11000, 500),
			0);

	/* Inline data (the source changes right after the post). */
	memset(f->a.buf, 0xab, 64);
	src[0] = shca_qt_sge(&f->a, 0, 64);
	src[0].lkey = 0xdeadbeef;	/* inline data needs no key */
	wr.wr.wr_id = 3;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr.wr.num_sge = 1;
	dst[0] = shca_qt_sge(&f->b, 20000, 100);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 12, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	memset(f->a.buf, 0x11, 64);
	shca_qt_expect_wc(test, f->b.cq, 12, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 64);
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf + 20000, 0xab, 64));
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);

	/* Zero bytes: a SEND and a READ. */
	wr.wr.wr_id = 4;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 13, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 13, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	wr.wr.wr_id = 5;
	wr.wr.opcode = IB_WR_RDMA_READ;
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0);

	/* SEND_WITH_INV: b's key, which then refuses. */
	t.key = f->rkey;
	t.iova = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->b.sdev, &t, &byte, 1,
					   SHCA_COPY_FROM_MR), 0);
	src[0] = shca_qt_sge(&f->a, 100, 16);
	wr.wr.wr_id = 6;
	wr.wr.opcode = IB_WR_SEND_WITH_INV;
	wr.wr.num_sge = 1;
	wr.wr.ex.invalidate_rkey = f->rkey;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 14, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 14, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 16);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, f->rkey);
	shca_qt_expect_wc(test, f->a.cq, 6, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->b.sdev, &t, &byte, 1,
					   SHCA_COPY_FROM_MR), -EKEYREVOKED);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_expect_none(test, f->b.cq);
}

/*
 * Issue 29, finding 7: a READ's responses leave at most 64 per run of the
 * responder's work item (here 256 responses at a 256-byte MTU), so a
 * READ of up to 2 GiB never holds the QP, its timers, a RESET or the
 * poster of a user QP for all of them; the READ completes with every
 * byte. Before the fix one run sent all 256.
 */
static void shca_wire_read_budget(struct kunit *test)
{
	static const struct shca_qt_conn small = {
		.timeout = 16, .retry_cnt = 7, .rnr_retry = 7,
		.mtu = IB_MTU_256,
	};
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, SHCA_QT_BUF);
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 7, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1 },
	};
	const struct ib_send_wr *bad;
	unsigned long end;
	u32 sent;
	int i;

	for (i = 0; i < SHCA_QT_BUF; i++)
		f->b.buf[i] = (u8)(i * 13 + 1);
	shca_wt_connect(f, &small);
	rd.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	rd.remote_addr = f->b.mr->iova;
	shca_qp_exec_stop(b);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a.qp, &rd.wr, &bad), 0);
	/* The request reaches b's queue; b's work item cannot run. */
	end = jiffies + 3 * HZ;
	while (!skb_queue_len(&b->rxq) && time_before(jiffies, end)) {
		shca_knet_pump(f->net);
		usleep_range(100, 200);
	}
	KUNIT_ASSERT_EQ(test, skb_queue_len(&b->rxq), 1U);
	for (i = 1; i <= 4; i++) {
		shca_wire_run(b);
		sent = skb_queue_len(&f->net->txq);
		KUNIT_EXPECT_EQ_MSG(test, sent, 64U * i, "after run %d", i);
	}
	KUNIT_EXPECT_FALSE(test, b->wresp.rd_active);
	shca_qp_exec_resume(b);
	shca_qp_kick(b);
	shca_qt_expect_wc(test, f->a.cq, 7, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf, f->b.buf, SHCA_QT_BUF), 0);
}

/*
 * Issue 29 (second review, F6): entering RTS does not write the
 * requester's state (struct shca_wreq belongs to whoever executes the
 * QP, and the work item may be using it at that moment): the executor
 * starts it at sq_psn when it next runs. Here the test holds the QP's
 * executor bit across RTR -> RTS: the requester's state stays as it
 * was, query_qp reports the new sq_psn, and once the executor runs, the
 * next message goes out at that PSN and arrives. Before the fix
 * modify_qp wrote the PSNs under the executor's feet.
 */
static void shca_wire_rts_leaves_wreq(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *qp = to_shca_qp(f->a.qp);
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr = { .wr_id = 4, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	const struct ib_send_wr *bad;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	shca_wt_connect(f, &shca_wt_calm);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a.qp, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_FALSE(test, test_and_set_bit(SHCA_QP_EXEC_BUSY,
						  &qp->exec_flags));
	qp->wreq.psn = 0x123456;
	qp->wreq.una = 0x123456;
	KUNIT_EXPECT_EQ(test, shca_qt_to_init(f->a.qp) ?:
			shca_qt_to_rts(f->a.qp, f->b.ibdev, f->b.qp->qp_num,
				       &shca_wt_calm), 0);
	KUNIT_EXPECT_EQ(test, qp->wreq.psn, 0x123456);
	KUNIT_EXPECT_EQ(test, qp->wreq.una, 0x123456);
	KUNIT_EXPECT_EQ(test, ib_query_qp(f->a.qp, &attr, IB_QP_SQ_PSN,
					  &init), 0);
	KUNIT_EXPECT_EQ(test, attr.sq_psn, 0);
	clear_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags);

	shca_wt_drain_cq(f->a.cq);
	shca_wt_fill(f->a.buf, 64, 9);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 5, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a.qp, &wr, &bad), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 5, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_MEMEQ(test, f->b.buf, f->a.buf, 64);
	KUNIT_EXPECT_EQ(test, ib_query_qp(f->a.qp, &attr, IB_QP_SQ_PSN,
					  &init), 0);
	KUNIT_EXPECT_EQ(test, attr.sq_psn, 1);
}

static struct kunit_case shca_wire_rc_cases[] = {
	KUNIT_CASE_PARAM(shca_wire_rc_op, shca_wt_ops_gen_params),
	KUNIT_CASE(shca_wire_rc_pipeline),
	KUNIT_CASE(shca_wire_rc_misc),
	KUNIT_CASE(shca_wire_read_budget),
	KUNIT_CASE(shca_wire_rts_leaves_wreq),
	{}
};

static struct kunit_suite shca_wire_rc_suite = {
	.name = "shca_wire_rc",
	.init = shca_wt_init,
	.test_cases = shca_wire_rc_cases,
};

kunit_test_suites(&shca_wire_rc_suite);
