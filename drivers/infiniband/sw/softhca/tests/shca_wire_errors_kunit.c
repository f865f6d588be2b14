// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_wire_errors: RNR NAKs (a late receive,
 * rnr_retry exhausted); retry exhaustion and the flush, also in the
 * middle of a WRITE longer than the PSN window; a wrong rkey (both
 * ends); a device-fatal event; a WRITE with immediate through a refused
 * key; a SEND longer than its receive, on RC and UC.
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
 * A SEND without a receive posted gets RNR NAKs (rnr_retry 7: for ever)
 * until one is posted; then it completes, byte-exact.
 */
static void shca_wire_rnr(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge dst = shca_qt_sge(&f->b, SHCA_WT_B_OFF, 4096);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	struct ib_wc wc;

	shca_wt_connect(f, &shca_wt_calm);
	shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN, 3);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr), 0);
	/* At least one RNR wait over and the SEND sent again. */
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_stat(f, &f->a, SHCA_WS_RETRANSMITS,
						  4, 2000));
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->b, SHCA_WS_RNR_NAKS_SENT),
			2);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->a, SHCA_WS_RNR_NAKS_RCVD),
			2);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 2, &dst, 1), 0);
	shca_qt_expect_wc(test, f->b.cq, 2, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
				     f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + SHCA_WT_B_OFF +
					    SHCA_WT_LEN,
					    4096 - SHCA_WT_LEN, 0));
	shca_qt_expect_empty(test, f->b.cq);
}

/*
 * rnr_retry 2: the third RNR NAK ends the SEND with RNR_RETRY_EXC_ERR,
 * after two retransmissions; the next request is flushed; the responder
 * is fine.
 */
static void shca_wire_rnr_exhausted(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 16, .retry_cnt = 7, .rnr_retry = 2,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1, .next = &wr2 };

	shca_wt_connect(f, &c);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RNR_NAKS_RCVD),
			3);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RNR_NAKS_SENT),
			3);
	shca_qt_expect_empty(test, f->b.cq);
}

/*
 * The network loses everything: retry_cnt 2 makes three ACK timeouts,
 * two of them sending both requests again, then RETRY_EXC_ERR for the
 * first and a flush for the second.
 */
static void shca_wire_retry_exhausted(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 10, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1, .next = &wr2 };

	shca_wt_connect(f, &c);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, -1, -1 };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 3);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 4);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 6);
	KUNIT_EXPECT_EQ(test, f->net->count[1], 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 0);
	/* In the error state nothing more leaves. */
	shca_knet_run(f->net, 30);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 6);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
}

/*
 * A WRITE of 65 packets, one more than the PSNs a requester may have
 * outstanding, into a network that loses everything: sending stops in
 * the middle of it, each ACK timeout sends the same 64 packets again, and
 * the third ends it with RETRY_EXC_ERR and flushes the SEND behind it.
 * (The requester used to wait for ever there: a WQE sent only in part
 * did not count as sent.)
 */
static void shca_wire_retry_exhausted_window(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 10, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge[2] = {
		shca_qt_sge(&f->a, 0, 32 * SHCA_WT_MTU),
		shca_qt_sge(&f->a, 0, 33 * SHCA_WT_MTU),
	};
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = sge, .num_sge = 1 };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = sge,
			.num_sge = 2, .next = &wr2 },
	};

	shca_wt_connect(f, &c);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova;
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, -1, -1 };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 3);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 3 * 64);
	/* In the error state nothing more leaves. */
	shca_knet_run(f->net, 30);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 3 * 64);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));
}

/*
 * A four-packet WRITE with a wrong rkey: REM_ACCESS_ERR at the requester
 * (then in ERR), the responder NAKs the first packet, goes to ERR with
 * QP_ACCESS_ERR, drops the other three, flushes its receive; its memory
 * is untouched.
 */
static void shca_wire_bad_rkey(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 16);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_wt_connect(f, &shca_wt_calm);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW) ^ 0x100;
	wr.remote_addr = f->b.mr->iova;
	shca_wt_fill(f->a.buf, SHCA_QT_BUF, 4);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 9, &rsge, 1), 0);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	shca_qt_expect_wc(test, f->b.cq, 9, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 2000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, f->a.events, 0);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 4);
	KUNIT_EXPECT_EQ(test, f->net->count[1], 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_ACCESS_NAKS_SENT),
			1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACCESS_NAKS_RCVD),
			1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 3);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));
}

/*
 * Issue 29 (second review, F7): after IB_EVENT_DEVICE_FATAL a QP on the
 * wire brought back to RTS sends nothing: its requests complete flushed,
 * as on the memory link. Before the fix the wire requester never looked
 * at the device's state and sent them.
 */
static void shca_wire_fatal_sends_nothing(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_send_wr wr = { .wr_id = 3, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	const struct ib_send_wr *bad;

	shca_wt_connect(f, &shca_wt_calm);
	shca_qp_device_fatal(f->a.sdev);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	shca_wt_restate(test, f->a.qp, &f->b, f->b.qp->qp_num, &shca_wt_calm);
	shca_wt_drain_cq(f->a.cq);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a.qp, &wr, &bad), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_WR_FLUSH_ERR, IB_WC_SEND,
			  NULL);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 0U);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

static const enum ib_qp_type shca_wt_conn_types[] = { IB_QPT_RC, IB_QPT_UC };

KUNIT_ARRAY_PARAM(shca_wt_conn_types, shca_wt_conn_types,
		  shca_wt_qp_type_desc);

/*
 * Issue 30: a SEND longer than its receive ends the responder's
 * connection as on the memory link (shca_qp_err_len): the receive
 * completes with IB_WC_LOC_LEN_ERR, the responder enters the error state
 * on RC and on UC, and no asynchronous event comes (the completion
 * reports the error); the RC requester completes with
 * IB_WC_REM_INV_REQ_ERR, the UC one successfully. Before, the wire
 * responder also raised IB_EVENT_QP_REQ_ERR on RC and went on receiving
 * on UC.
 */
static void shca_wire_recv_len_error(struct kunit *test)
{
	const enum ib_qp_type *type = test->param_value;
	bool rc = *type == IB_QPT_RC;
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qa = rc ? f->a.qp : shca_wt_qp(test, &f->a, *type);
	struct ib_qp *qb = rc ? f->b.qp : shca_wt_qp(test, &f->b, *type);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 101);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 100);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };

	shca_wt_connect_qps(f, qa, qb, &shca_wt_calm);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(qb, 5, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(qa, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1,
			  rc ? IB_WC_REM_INV_REQ_ERR : IB_WC_SUCCESS,
			  IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 5, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qb), IB_QPS_ERR);
	msleep(50);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qa), rc ? IB_QPS_ERR : IB_QPS_RTS);
}

/*
 * Issue 30: the wire's half of shca_qp_write_imm_refused_first - a WRITE
 * with immediate through a refused key, no receive posted: a remote
 * access NAK, not an RNR NAK; the links agree.
 */
static void shca_wire_write_imm_refused_first(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 16, .retry_cnt = 7, .rnr_retry = 1,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_wt_connect(f, &c);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW) ^ 0x100;
	wr.remote_addr = f->b.mr->iova;
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RNR_NAKS_SENT),
			0);
}

static struct kunit_case shca_wire_errors_cases[] = {
	KUNIT_CASE(shca_wire_rnr),
	KUNIT_CASE(shca_wire_rnr_exhausted),
	KUNIT_CASE(shca_wire_retry_exhausted),
	KUNIT_CASE(shca_wire_retry_exhausted_window),
	KUNIT_CASE(shca_wire_bad_rkey),
	KUNIT_CASE(shca_wire_fatal_sends_nothing),
	KUNIT_CASE(shca_wire_write_imm_refused_first),
	KUNIT_CASE_PARAM(shca_wire_recv_len_error,
			 shca_wt_conn_types_gen_params),
	{}
};

static struct kunit_suite shca_wire_errors_suite = {
	.name = "shca_wire_errors",
	.init = shca_wt_init,
	.test_cases = shca_wire_errors_cases,
};

kunit_test_suites(&shca_wire_errors_suite);
