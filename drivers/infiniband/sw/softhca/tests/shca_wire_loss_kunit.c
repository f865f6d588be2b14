// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_wire_loss: the loss of each packet of a
 * multi-packet WRITE, READ, SEND and atomic (go-back-N and the READ's own
 * resume complete it, byte-exact, with retransmissions counted); every
 * packet duplicated (an atomic executes once); packets reordered; deep
 * READ queues; PSNs in flight; the infinite ACK timeout; answers that
 * come after the ACK timeout ran out, in the same run (they still count,
 * the request is not sent again); implied NAKs.
 *
 * The network between a and b is the test network, pumped by the
 * test's thread; the fixture is shca_kunit_wire.c.
 */

#include <linux/delay.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_wire.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

enum shca_wt_how { SHCA_WT_BY_NAK, SHCA_WT_BY_TIMEOUT, SHCA_WT_BY_GAP };

struct shca_wt_case {
	const char *name;
	enum ib_wr_opcode opcode;
	int from;		/* 0: a's packet, 1: b's */
	int nth;		/* which one */
	enum shca_wt_how how;	/* what makes the requester send again */
};

static void shca_wt_case_desc(const struct shca_wt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

static const struct shca_wt_case shca_wt_losses[] = {
	{ "WRITE first", IB_WR_RDMA_WRITE, 0, 0, SHCA_WT_BY_NAK },
	{ "WRITE second", IB_WR_RDMA_WRITE, 0, 1, SHCA_WT_BY_NAK },
	{ "WRITE third", IB_WR_RDMA_WRITE, 0, 2, SHCA_WT_BY_NAK },
	{ "WRITE last", IB_WR_RDMA_WRITE, 0, 3, SHCA_WT_BY_TIMEOUT },
	{ "WRITE ACK", IB_WR_RDMA_WRITE, 1, 0, SHCA_WT_BY_TIMEOUT },
	{ "READ request", IB_WR_RDMA_READ, 0, 0, SHCA_WT_BY_TIMEOUT },
	{ "READ response first", IB_WR_RDMA_READ, 1, 0, SHCA_WT_BY_GAP },
	{ "READ response second", IB_WR_RDMA_READ, 1, 1, SHCA_WT_BY_GAP },
	{ "READ response third", IB_WR_RDMA_READ, 1, 2, SHCA_WT_BY_GAP },
	{ "READ response last", IB_WR_RDMA_READ, 1, 3, SHCA_WT_BY_TIMEOUT },
	{ "SEND first", IB_WR_SEND, 0, 0, SHCA_WT_BY_NAK },
	{ "SEND last", IB_WR_SEND, 0, 3, SHCA_WT_BY_TIMEOUT },
	{ "WRITE_WITH_IMM middle", IB_WR_RDMA_WRITE_WITH_IMM, 0, 2,
	  SHCA_WT_BY_NAK },
	{ "FETCH_ADD request", IB_WR_ATOMIC_FETCH_AND_ADD, 0, 0,
	  SHCA_WT_BY_TIMEOUT },
	{ "FETCH_ADD ACK", IB_WR_ATOMIC_FETCH_AND_ADD, 1, 0,
	  SHCA_WT_BY_TIMEOUT },
	{ "CMP_SWP ACK", IB_WR_ATOMIC_CMP_AND_SWP, 1, 0, SHCA_WT_BY_TIMEOUT },
};

KUNIT_ARRAY_PARAM(shca_wt_losses, shca_wt_losses, shca_wt_case_desc);

/*
 * One packet lost, the first time it is sent: the operation still
 * completes once, byte-exact (an atomic whose ACK was lost is answered
 * again from the responder's memory, not executed twice), and the
 * requester sent again, after a NAK or the gap it saw in READ responses
 * without waiting for its ACK timeout, or after the timeout when nothing
 * else can tell it (a lost last packet, request or response).
 */
static void shca_wire_loss(struct kunit *test)
{
	const struct shca_wt_case *c = test->param_value;
	struct shca_qt_fix *f = test->priv;

	shca_wt_connect(f, c->how == SHCA_WT_BY_TIMEOUT ? &shca_wt_lossy :
							   &shca_wt_calm);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, c->from, c->nth };
	shca_wt_do(f, c->opcode);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	switch (c->how) {
	case SHCA_WT_BY_NAK:
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b,
						    SHCA_WS_SEQ_NAKS_SENT), 0);
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a,
						    SHCA_WS_SEQ_NAKS_RCVD), 0);
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b,
						    SHCA_WS_OOS_REQS), 0);
		break;
	case SHCA_WT_BY_TIMEOUT:
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a,
						    SHCA_WS_ACK_TIMEOUTS), 0);
		break;
	case SHCA_WT_BY_GAP:
		break;
	}
	if (c->how != SHCA_WT_BY_TIMEOUT)
		KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a,
						    SHCA_WS_ACK_TIMEOUTS), 0);
	/* What b had answered already, it answers again. */
	if (c->from == 1)
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b,
						    SHCA_WS_DUP_REQS), 0);
}

/*
 * Every packet, both ways, arrives twice: each operation completes once
 * on each side, byte-exact, an atomic executes once, and the responder
 * counted the duplicates.
 */
static void shca_wire_dup(struct kunit *test)
{
	const struct shca_wt_op *op = test->param_value;
	struct shca_qt_fix *f = test->priv;

	shca_wt_connect(f, &shca_wt_calm);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DUP, -1, -1 };
	shca_wt_do(f, op->opcode);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->b, SHCA_WS_DUP_REQS),
			op->a_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
}

static const struct shca_wt_case shca_wt_reorders[] = {
	{ "WRITE first after second", IB_WR_RDMA_WRITE, 0, 0 },
	{ "WRITE second after third", IB_WR_RDMA_WRITE, 0, 1 },
	{ "WRITE third after last", IB_WR_RDMA_WRITE, 0, 2 },
	{ "SEND second after third", IB_WR_SEND, 0, 1 },
	{ "READ response first after second", IB_WR_RDMA_READ, 1, 0 },
	{ "READ response second after third", IB_WR_RDMA_READ, 1, 1 },
	{ "READ response third after last", IB_WR_RDMA_READ, 1, 2 },
};

KUNIT_ARRAY_PARAM(shca_wt_reorders, shca_wt_reorders, shca_wt_case_desc);

/*
 * One packet overtaken by the next: completes once, byte-exact, without
 * waiting for an ACK timeout.
 */
static void shca_wire_reorder(struct kunit *test)
{
	const struct shca_wt_case *c = test->param_value;
	struct shca_qt_fix *f = test->priv;

	shca_wt_connect(f, &shca_wt_calm);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_HOLD, c->from, c->nth };
	shca_wt_do(f, c->opcode);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_HOLD], 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
}

/*
 * READ responses overtaking each other, READ after READ on one
 * connection: each completes, byte-exact; then a fenced WRITE, which
 * waits for the READs before it, still leaves and completes (the READs
 * in flight are counted right whatever the order of the responses and
 * the going back they cause).
 */
static void shca_wire_reorder_reads(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 9, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
			.sg_list = &sge, .num_sge = 1 },
	};
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	for (i = 0; i < 3; i++) {
		f->net->rule = (struct shca_knet_rule){ SHCA_KNET_HOLD, 1, i };
		shca_wt_do(f, IB_WR_RDMA_READ);
		KUNIT_EXPECT_EQ_MSG(test, f->net->fates[SHCA_KNET_HOLD], 1,
				    "READ %d", i);
		f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DELIVER, -1, -1 };
		wr.remote_addr = f->b.mr->iova;
		wr.rkey = f->rkey;
		KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
		shca_qt_expect_wc(test, f->a.cq, 9, IB_WC_SUCCESS,
				  IB_WC_RDMA_WRITE, NULL);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

/*
 * Responder resources as deep as rdma_rxe's (rdma_cm gives a requester
 * what the peer offers: 128 against rxe): 48 READs in flight at once; the
 * response of the 30th is lost. The READs behind it are asked again, and
 * the responder answers them from the READs it kept (duplicates, not new
 * executions); every READ completes, in order, byte-exact.
 */
static void shca_wire_deep_reads(struct kunit *test)
{
	static const struct shca_qt_conn deep = {
		.timeout = 12, .retry_cnt = 7, .rnr_retry = 7,
		.rd_atom = SHCA_MAX_RD_ATOM,
	};
	struct shca_qt_fix *f = test->priv;
	const int n = 48, lost = 30;
	struct ib_rdma_wr *wr;
	struct ib_sge *sge;
	struct ib_wc wc;
	int i;

	wr = kunit_kcalloc(test, n, sizeof(*wr), GFP_KERNEL);
	sge = kunit_kcalloc(test, n, sizeof(*sge), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wr);
	KUNIT_ASSERT_NOT_NULL(test, sge);
	shca_wt_connect(f, &deep);
	KUNIT_EXPECT_EQ(test, to_shca_qp(f->b.qp)->wresp.res_size,
			SHCA_MAX_RD_ATOM);
	f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_wt_fill(f->b.buf, SHCA_QT_BUF, 5);
	for (i = 0; i < n; i++) {
		sge[i] = shca_qt_sge(&f->a, 100 * i, 100);
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = i, .opcode = IB_WR_RDMA_READ,
				.send_flags = IB_SEND_SIGNALED,
				.sg_list = &sge[i], .num_sge = 1,
				.next = i + 1 < n ? &wr[i + 1].wr : NULL },
			.remote_addr = f->b.mr->iova + 20000 + 300 * i,
			.rkey = f->rkey,
		};
	}

	shca_knet_mark(f->net);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 1, lost };
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr[0].wr), 0);
	for (i = 0; i < n; i++) {
		shca_qt_expect_wc(test, f->a.cq, i, IB_WC_SUCCESS,
				  IB_WC_RDMA_READ, &wc);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(f->a.buf + 100 * i,
						 f->b.buf + 20000 + 300 * i,
						 100), 0, "READ %d", i);
		if (test->status == KUNIT_FAILURE)
			return;
	}
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->b, SHCA_WS_DUP_REQS),
			n - lost);
	shca_qt_expect_empty(test, f->a.cq);
}

/*
 * query_qp's send PSN while requests are in flight: the PSN after the
 * last packet sent (rdma res shows it), not the one the send queue had
 * when it was last idle; the responder's receive PSN the same.
 */
static void shca_wire_query_psn(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_rdma_wr w2, w1 = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1, .next = &w2.wr },
	};
	u32 p0;
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	w1.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	w1.rkey = f->rkey;
	w2 = w1;
	w2.wr.wr_id = 2;
	w2.wr.next = NULL;
	p0 = shca_qt_psn(f->a.qp, true);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, false), p0);

	/* b's ACKs are lost: both WRITEs stay in flight. */
	shca_knet_mark(f->net);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 1, -1 };
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &w1.wr), 0);
	for (i = 0; i < 500 && f->net->count[0] < 8; i++) {
		shca_knet_pump(f->net);
		usleep_range(500, 1000);
	}
	KUNIT_ASSERT_EQ(test, f->net->count[0], 8);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true),
			(p0 + 8) & SHCA_PSN_MASK);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, false),
			(p0 + 8) & SHCA_PSN_MASK);
	shca_qt_expect_none(test, f->a.cq);

	/* The ACK timeout sends them again; now the ACKs come. */
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DELIVER, -1, -1 };
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true),
			(p0 + 8) & SHCA_PSN_MASK);
}

/*
 * A local ACK timeout of 0 is infinite (IBTA C9-141): a lost request is
 * not sent again by a timer, however long; the next request, arriving
 * beyond the expected PSN, draws a sequence NAK, and the NAK sends both.
 */
static void shca_wire_infinite_timeout(struct kunit *test)
{
	static const struct shca_qt_conn forever = {
		.timeout = 0, .retry_cnt = 1, .rnr_retry = 7,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, 500);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_wt_connect(f, &forever);
	f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, 1000, 9);
	wr.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	wr.rkey = f->rkey;

	shca_knet_mark(f->net);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 0, 0 };
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	/* 30 jiffies under UML (HZ 100): a timer would have fired. */
	shca_knet_run(f->net, 300);
	shca_qt_expect_none(test, f->a.cq);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);

	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DELIVER, -1, -1 };
	sge.addr += 500;
	wr.wr.wr_id = 2;
	wr.remote_addr += 500;
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
				     f->a.buf + SHCA_WT_A_OFF, 1000), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_SEQ_NAKS_RCVD),
			1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
}

/*
 * Keep @ibqp's work item from running (it retries every jiffy), so that
 * what arrives meanwhile is taken in one run; shca_wt_thaw() lets it go.
 */
static void shca_wt_freeze(struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);

	while (test_and_set_bit_lock(SHCA_QP_EXEC_BUSY, &qp->exec_flags))
		usleep_range(10, 100);
}

static void shca_wt_thaw(struct ib_qp *ibqp)
{
	clear_bit_unlock(SHCA_QP_EXEC_BUSY, &to_shca_qp(ibqp)->exec_flags);
}

struct shca_wt_late {
	const char *name;
	enum ib_wr_opcode opcode;
	bool bad_rkey;	/* the responder NAKs: a remote access error */
	u32 a_pkts;
	u32 b_pkts;
};

static const struct shca_wt_late shca_wt_lates[] = {
	{ "WRITE ACK", IB_WR_RDMA_WRITE, false, 4, 1 },
	{ "READ responses", IB_WR_RDMA_READ, false, 1, 4 },
	{ "FETCH_ADD ACK", IB_WR_ATOMIC_FETCH_AND_ADD, false, 1, 1 },
	{ "WRITE access NAK", IB_WR_RDMA_WRITE, true, 4, 1 },
	{ "READ access NAK", IB_WR_RDMA_READ, true, 1, 1 },
};

static void shca_wt_late_desc(const struct shca_wt_late *l, char *desc)
{
	strscpy(desc, l->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_wt_lates, shca_wt_lates, shca_wt_late_desc);

/*
 * The answer to a request arrives late: after the ACK timeout ran out,
 * and taken in the same run of the requester as the timeout, which
 * decided to send the request again. The answer still counts: the
 * request completes once, byte-exact, and is not sent again once
 * complete; a fenced WRITE after it (which waits for the READs and
 * atomics in flight) leaves and completes, and so does a READ. A NAK for
 * a remote access error completes it with that error, as it would have
 * on time.
 */
static void shca_wire_late_answer(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,	/* 67 ms */
	};
	const struct shca_wt_late *l = test->param_value;
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *qa = to_shca_qp(f->a.qp);
	bool read = l->opcode == IB_WR_RDMA_READ;
	bool atomic = l->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge asge = shca_qt_sge(&f->a, SHCA_WT_ATOM, 8);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = l->opcode,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_atomic_wr awr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &asge,
			.num_sge = 1 },
		.compare_add = 5,
	};
	u64 *remote = (u64 *)(f->b.buf + SHCA_WT_ATOM);
	unsigned long end;
	int i;

	shca_wt_connect(f, &c);
	f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	/* A WRITE first, so that the request's PSN is not 0. */
	shca_wt_do(f, IB_WR_RDMA_WRITE);
	memset(f->a.buf, 0, SHCA_QT_BUF);
	memset(f->b.buf, 0, SHCA_QT_BUF);
	shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN, 6);
	if (read)
		shca_wt_fill(f->b.buf + SHCA_WT_B_OFF, SHCA_WT_LEN, 7);
	*remote = 1000;
	wr.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	wr.rkey = f->rkey ^ (l->bad_rkey ? 0x100 : 0);
	awr.remote_addr = f->b.mr->iova + SHCA_WT_ATOM;
	awr.rkey = f->rkey;

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp,
					      atomic ? &awr.wr : &wr.wr),
			0);
	/* The request reaches b; a stops before the answer comes. */
	end = jiffies + msecs_to_jiffies(2000);
	while (f->net->count[0] < l->a_pkts && time_before(jiffies, end)) {
		usleep_range(50, 100);
		shca_knet_pump(f->net);
	}
	shca_wt_freeze(f->a.qp);
	KUNIT_ASSERT_EQ(test, f->net->count[0], l->a_pkts);
	KUNIT_ASSERT_FALSE(test, test_bit(SHCA_QP_EXEC_TIMEOUT,
					  &qa->exec_flags));
	/* b answers, the timer runs out: both wait for a's one run. */
	end = jiffies + msecs_to_jiffies(2000);
	while ((f->net->count[1] < l->b_pkts ||
		!test_bit(SHCA_QP_EXEC_TIMEOUT, &qa->exec_flags)) &&
	       time_before(jiffies, end)) {
		usleep_range(100, 200);
		shca_knet_pump(f->net);
	}
	KUNIT_EXPECT_EQ(test, f->net->count[1], l->b_pkts);
	KUNIT_EXPECT_TRUE(test, test_bit(SHCA_QP_EXEC_TIMEOUT,
					 &qa->exec_flags));
	shca_wt_thaw(f->a.qp);

	if (l->bad_rkey) {
		shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0,
				  NULL);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
		shca_knet_run(f->net, 20);
		KUNIT_EXPECT_EQ(test, f->net->count[0], l->a_pkts);
		return;
	}
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS,
			  read ? IB_WC_RDMA_READ : atomic ? IB_WC_FETCH_ADD :
			  IB_WC_RDMA_WRITE, NULL);
	if (read) {
		KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF,
					     f->b.buf + SHCA_WT_B_OFF,
					     SHCA_WT_LEN), 0);
	} else if (atomic) {
		KUNIT_EXPECT_EQ(test, *(u64 *)(f->a.buf + SHCA_WT_ATOM), 1000);
		KUNIT_EXPECT_EQ(test, *remote, 1005);
	} else {
		KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
					     f->a.buf + SHCA_WT_A_OFF,
					     SHCA_WT_LEN), 0);
	}
	/* Complete: not sent again, no more timeouts. */
	shca_knet_run(f->net, 30);
	KUNIT_EXPECT_EQ(test, f->net->count[0], l->a_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	if (f->net->count[0] != l->a_pkts)
		shca_knet_dump(f->net);

	/* A fenced WRITE, then a READ: nothing is left in flight. */
	wr.rkey = f->rkey;
	for (i = 0; i < 2; i++) {
		struct ib_rdma_wr w2 = wr;

		w2.wr.wr_id = 2 + i;
		w2.wr.opcode = i ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		w2.wr.send_flags |= i ? 0 : IB_SEND_FENCE;
		KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &w2.wr), 0);
		shca_qt_expect_wc(test, f->a.cq, 2 + i, IB_WC_SUCCESS,
				  i ? IB_WC_RDMA_READ : IB_WC_RDMA_WRITE, NULL);
	}
}

static const struct shca_wt_case shca_wt_implied[] = {
	{ "READ last response", IB_WR_RDMA_READ, 1, 3 },
	{ "FETCH_ADD ACK", IB_WR_ATOMIC_FETCH_AND_ADD, 1, 0 },
	{ "CMP_SWP ACK", IB_WR_ATOMIC_CMP_AND_SWP, 1, 0 },
};

KUNIT_ARRAY_PARAM(shca_wt_implied, shca_wt_implied, shca_wt_case_desc);

/*
 * A READ or atomic, then a WRITE; the READ's last response (the atomic's
 * ACK) is lost, the WRITE's ACK comes. That ACK covers the READ's PSNs
 * without its data (an implied NAK): the requester asks again for what
 * is missing, at once, and both complete, byte-exact, the atomic
 * executed once.
 */
static void shca_wire_implied_nak(struct kunit *test)
{
	const struct shca_wt_case *c = test->param_value;
	struct shca_qt_fix *f = test->priv;
	bool atomic = shca_wt_is_atomic(c->opcode);
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge asge = shca_qt_sge(&f->a, SHCA_WT_ATOM, 8);
	struct ib_sge wsge = shca_qt_sge(&f->a, 100, 500);
	struct ib_rdma_wr w2 = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &wsge,
			.num_sge = 1 },
	};
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1, .next = &w2.wr },
	};
	struct ib_atomic_wr awr = {
		.wr = { .wr_id = 1, .opcode = c->opcode,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &asge,
			.num_sge = 1, .next = &w2.wr },
		.compare_add = c->opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 1000 : 5,
		.swap = 77,
	};
	u64 *remote = (u64 *)(f->b.buf + SHCA_WT_ATOM);
	struct ib_wc wc;

	shca_wt_connect(f, &shca_wt_calm);
	f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_wt_fill(f->a.buf, SHCA_WT_A_OFF, 3);
	shca_wt_fill(f->b.buf + SHCA_WT_B_OFF, SHCA_WT_LEN, 4);
	*remote = 1000;
	rd.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	rd.rkey = f->rkey;
	awr.remote_addr = f->b.mr->iova + SHCA_WT_ATOM;
	awr.rkey = f->rkey;
	w2.remote_addr = f->b.mr->iova + 20000;
	w2.rkey = f->rkey;

	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, c->from, c->nth };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp,
					      atomic ? &awr.wr : &rd.wr),
			0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS,
			  !atomic ? IB_WC_RDMA_READ :
			  c->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			  IB_WC_COMP_SWAP : IB_WC_FETCH_ADD, &wc);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	if (atomic) {
		KUNIT_EXPECT_EQ(test, *(u64 *)(f->a.buf + SHCA_WT_ATOM), 1000);
		KUNIT_EXPECT_EQ(test, *remote,
				c->opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 77 :
				1005);
	} else {
		KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
		KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF,
					     f->b.buf + SHCA_WT_B_OFF,
					     SHCA_WT_LEN), 0);
	}
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 20000, f->a.buf + 100, 500),
			0);
	KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
	shca_qt_expect_empty(test, f->a.cq);
}

/* Seeds of the network's random fates, one case each. */
static const u32 shca_wt_seeds[] = { 1, 2, 3, 5, 8, 13, 21, 34 };

static void shca_wt_seed_desc(const u32 *seed, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "seed %u", *seed);
}

KUNIT_ARRAY_PARAM(shca_wt_seeds, shca_wt_seeds, shca_wt_seed_desc);

/* WRITEs a streams at once, as perftest's ib_write_bw keeps its queue. */
#define SHCA_WT_STREAM_DEPTH	16
/* Packets a sends through a lossy network before its peer goes. */
#define SHCA_WT_STREAM_PKTS	3000

/*
 * A peer that goes while a streams 64 KiB WRITEs (64 packets: the
 * requester's window exactly) through a network that drops, duplicates
 * and reorders 2 % of the packets each way: until then every WRITE
 * completes, in order; once nothing crosses any more, the requester's ACK
 * timeouts run out and its next WRITE ends with RETRY_EXC_ERR - whatever
 * state the losses left the requester in (going back over what it sent,
 * a NAK pending, a WQE sent in part). A requester that stopped timing out
 * would wait for ever (wire test 80-peer-gone, softhca to rdma_rxe, in CI).
 */
static void shca_wire_gone_after_losses(struct kunit *test)
{
	const u32 *seed = test->param_value;
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, SHCA_QT_BUF);
	struct ib_rdma_wr wr = {
		.wr = { .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	unsigned long end = jiffies + 60 * HZ;
	u64 posted = 0, done = 0;
	bool gone = false;
	struct ib_wc wc;

	shca_wt_connect(f, &shca_wt_lossy);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova;
	f->net->rnd = *seed;
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_CHAOS, -1, -1, 20 };
	shca_knet_mark(f->net);
	for (;;) {
		while (!gone && posted - done < SHCA_WT_STREAM_DEPTH) {
			wr.wr.wr_id = ++posted;
			KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
		}
		if (!shca_qt_poll(f->a.cq, &wc, 100)) {
			if (time_after(jiffies, end))
				break;
			continue;
		}
		if (wc.status != IB_WC_SUCCESS)
			break;
		KUNIT_ASSERT_EQ(test, wc.wr_id, done + 1);
		done++;
		if (!gone && f->net->count[0] >= SHCA_WT_STREAM_PKTS) {
			f->net->rule = (struct shca_knet_rule){
				SHCA_KNET_DROP, -1, -1 };
			gone = true;
		}
	}
	if (wc.status == IB_WC_SUCCESS || !gone)
		shca_knet_dump(f->net);
	KUNIT_ASSERT_TRUE_MSG(test, gone, "a failed before its peer went");
	KUNIT_ASSERT_NE_MSG(test, wc.status, IB_WC_SUCCESS,
			    "a's requester waits for ever for its gone peer");
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_RETRY_EXC_ERR);
	KUNIT_EXPECT_EQ(test, wc.wr_id, done + 1);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_GT(test, done, 2);
}

static struct kunit_case shca_wire_loss_cases[] = {
	KUNIT_CASE_PARAM(shca_wire_loss, shca_wt_losses_gen_params),
	KUNIT_CASE_PARAM(shca_wire_dup, shca_wt_ops_gen_params),
	KUNIT_CASE_PARAM(shca_wire_reorder, shca_wt_reorders_gen_params),
	KUNIT_CASE(shca_wire_reorder_reads),
	KUNIT_CASE(shca_wire_deep_reads),
	KUNIT_CASE(shca_wire_query_psn),
	KUNIT_CASE(shca_wire_infinite_timeout),
	KUNIT_CASE_PARAM(shca_wire_late_answer, shca_wt_lates_gen_params),
	KUNIT_CASE_PARAM(shca_wire_implied_nak, shca_wt_implied_gen_params),
	KUNIT_CASE_PARAM(shca_wire_gone_after_losses,
			 shca_wt_seeds_gen_params),
	{}
};

static struct kunit_suite shca_wire_loss_suite = {
	.name = "shca_wire_loss",
	.init = shca_wt_init,
	.test_cases = shca_wire_loss_cases,
};

kunit_test_suites(&shca_wire_loss_suite);
