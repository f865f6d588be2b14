// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_ring: the mapped work queues of a process, driven
 * from the kernel with a kernel QP given rings (what a process writes is
 * hostile).
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/unaligned.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* Write receive slot @idx of @qp's ring: @n SGEs of @sge. */
static void shca_qt_rwqe(struct shca_qp *qp, u32 idx, u64 wr_id,
			 const struct ib_sge *sge, u32 n)
{
	struct softhca_rwqe *s = (void *)qp->urq.ring + SOFTHCA_WQ_RING_HDR +
				 (idx & qp->rq.mask) * qp->urq.slot_size;
	u32 i;

	s->wr_id = wr_id;
	s->num_sge = n;
	for (i = 0; i < n && i < qp->rq.max_sge; i++) {
		s->sge[i].addr = sge[i].addr;
		s->sge[i].length = sge[i].length;
		s->sge[i].lkey = sge[i].lkey;
	}
}

static void shca_qt_rq_produce(struct shca_qp *qp, u32 producer)
{
	/* As a process does: the slots before the producer. */
	smp_store_release(&qp->urq.ring->producer, producer);
}

/* The consumer a ring publishes, as a process reads it. */
static u32 shca_qt_ring_cons(const struct shca_uring *u)
{
	/* Pairs with the kernel's release store. */
	return smp_load_acquire(&u->ring->consumer);
}

/*
 * Receives through a receive ring: taken without post_recv, consumer
 * published; a sender finding it empty asks for a doorbell, and the
 * doorbell ends the RNR wait; post_recv is refused on such a QP.
 */
static void shca_qp_ring_recv(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 100);
	struct ib_sge dst = shca_qt_sge(&f->b, 4096, 200);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(b, false), 0);
	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 5);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_EXPECT_EQ(test, shca_qt_post_recv(&f->b, 9, &dst, 1), -EINVAL);

	shca_qt_rwqe(b, 0, 41, &dst, 1);
	shca_qt_rq_produce(b, 1);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 41, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 4096, f->a.buf, 100), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->urq.ring->doorbell), 0);

	/* Nothing posted: the sender waits out RNR and asks for a doorbell. */
	wr.wr_id = 2;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	KUNIT_EXPECT_FALSE(test, shca_qt_poll(f->a.cq, &wc, 20));
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->urq.ring->doorbell), 1);
	shca_qt_rwqe(b, 1, 42, &dst, 1);
	shca_qt_rq_produce(b, 2);
	KUNIT_EXPECT_EQ(test, shca_qp_rq_doorbell(b), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->urq.ring->doorbell), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 42, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 2);

	/* No ring: no doorbell. */
	KUNIT_EXPECT_EQ(test, shca_qp_rq_doorbell(to_shca_qp(f->a.qp)),
			-EINVAL);
}

/*
 * Issue 29, finding 13: one import takes at most 32 receive slots under
 * the QP's lock (it runs with interrupts off, maybe in another poster's
 * context); the rest are taken as the queue runs empty, none lost, in
 * order. Before the fix a doorbell copied every slot (up to 16K slots of
 * 32 SGEs) in one go.
 */
static void shca_qp_ring_import_bounded(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	u32 i;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(b, false), 0);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	for (i = 0; i < SHCA_QT_WR; i++)
		shca_qt_rwqe(b, i, 100 + i, &dst, 1);
	shca_qt_rq_produce(b, SHCA_QT_WR);
	KUNIT_ASSERT_EQ(test, shca_qp_rq_doorbell(b), 0);
	KUNIT_EXPECT_EQ(test, b->rq.tail - b->rq.head, 32U);

	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b.qp, &err, IB_QP_STATE), 0);
	for (i = 0; i < SHCA_QT_WR; i++)
		shca_qt_expect_wc(test, f->b.cq, 100 + i, IB_WC_WR_FLUSH_ERR,
				  IB_WC_RECV, NULL);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), SHCA_QT_WR);
}

/* How a receive ring is corrupted; each costs the QP, nothing else. */
struct shca_qt_ring_bad {
	const char *name;
	u32 producer;		/* after one good request at slot 0 ... */
	u32 bad_sge;		/* ... num_sge of slot 1, if @producer > 1 */
	int good;		/* requests flushed (imported before the bad) */
	bool by_sender;		/* slot 0 imported first; a SEND finds it */
};

static const struct shca_qt_ring_bad shca_qt_ring_bads[] = {
	{ "producer past max_wr", SHCA_QT_WR + 1, 0, 0 },
	{ "producer far ahead", 0x80000000, 0, 0 },
	{ "producer behind", 0xffffffff, 0, 0 },
	{ "too many SGEs", 2, 5, 1 },
	{ "SGE count wraps", 2, 0xffffffff, 1 },
	{ "found by a SEND, far ahead", 0x80000000, 0, 1, true },
	{ "found by a SEND, too many SGEs", 2, 5, 1, true },
};

static void shca_qt_ring_bad_desc(const struct shca_qt_ring_bad *b,
				  char *desc)
{
	strscpy(desc, b->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_qt_ring_bad, shca_qt_ring_bads, shca_qt_ring_bad_desc);

/*
 * A corrupt receive ring: the QP goes to the error state with
 * IB_EVENT_QP_FATAL, the requests before the bad one are flushed, no byte
 * lands, the ring is not read again until RESET, and after RESET it
 * works from the producer the process left.
 */
static void shca_qp_ring_corrupt(struct kunit *test)
{
	const struct shca_qt_ring_bad *bad = test->param_value;
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 64);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(b, false), 0);
	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 6);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);

	shca_qt_rwqe(b, 0, 50, &dst, 1);
	shca_qt_rwqe(b, 1, 51, &dst, 1);
	if (bad->by_sender) {
		/* The kernel holds slot 0 when the ring goes bad. */
		shca_qt_rq_produce(b, 1);
		KUNIT_ASSERT_EQ(test, shca_qp_rq_doorbell(b), 0);
	}
	if (bad->producer == 2)
		((struct softhca_rwqe *)((void *)b->urq.ring +
					 SOFTHCA_WQ_RING_HDR +
					 b->urq.slot_size))->num_sge =
			bad->bad_sge;
	shca_qt_rq_produce(b, bad->producer);
	if (bad->by_sender) {
		/* Nothing is received through a ring found corrupt. */
		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
		shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR,
				  IB_WC_SEND, NULL);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
		shca_qt_restate(test, &f->a, &f->b, &shca_qt_default_conn);
	} else {
		KUNIT_ASSERT_EQ(test, shca_qp_rq_doorbell(b), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 1000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_FATAL);
	for (i = 0; i < bad->good; i++)
		shca_qt_expect_wc(test, f->b.cq, 50 + i, IB_WC_WR_FLUSH_ERR,
				  IB_WC_RECV, NULL);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq),
			bad->good);

	/* Dead: a fixed producer is not read until RESET. */
	shca_qt_rq_produce(b, 1);
	KUNIT_EXPECT_EQ(test, shca_qp_rq_doorbell(b), 0);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
	shca_qt_expect_empty(test, f->a.cq);

	/* RESET: the ring restarts at the producer the process left. */
	shca_qt_restate(test, &f->b, &f->a, &shca_qt_default_conn);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 1);
	shca_qt_rwqe(b, 1, 52, &dst, 1);
	shca_qt_rq_produce(b, 2);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 52, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 64), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 2);
}

/* Write send slot @idx of @qp's ring. */
static struct softhca_swqe *shca_qt_swqe(struct shca_qp *qp, u32 idx,
					 u64 wr_id, u32 opcode,
					 const struct ib_sge *sge, u32 n)
{
	struct softhca_swqe *s = (void *)qp->usq.ring + SOFTHCA_WQ_RING_HDR +
				 (idx & qp->sq.mask) * qp->usq.slot_size;
	u32 i;

	memset(s, 0, qp->usq.slot_size);
	s->wr_id = wr_id;
	s->opcode = opcode;
	s->send_flags = IB_SEND_SIGNALED;
	s->num_sge = n;
	for (i = 0; i < n; i++) {
		s->sge[i].addr = sge[i].addr;
		s->sge[i].length = sge[i].length;
		s->sge[i].lkey = sge[i].lkey;
	}
	return s;
}

/*
 * A send ring: a doorbell posts the slots in order (WRITE, SEND with
 * immediate, READ, an atomic); a refused slot stops it with its errno
 * and a consumer naming it; a producer beyond the ring posts nothing.
 */
static void shca_qp_ring_send(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *a = to_shca_qp(f->a.qp);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 300);
	struct ib_sge dst = shca_qt_sge(&f->b, 8192, 300);
	struct ib_sge res = shca_qt_sge(&f->a, 16384, 8);
	struct softhca_swqe *s;
	struct ib_wc wc;
	u32 rkey;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(a, true), 0);
	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 7);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	memset(f->b.buf + 12288, 0, 8);

	s = shca_qt_swqe(a, 0, 61, IB_WR_RDMA_WRITE, &src, 1);
	s->remote_addr = f->b.mr->iova + 100;
	s->rkey = rkey;
	s = shca_qt_swqe(a, 1, 62, IB_WR_SEND_WITH_IMM, &src, 1);
	s->ex = (__force u32)cpu_to_be32(0xabcd);
	s = shca_qt_swqe(a, 2, 63, IB_WR_ATOMIC_FETCH_AND_ADD, &res, 1);
	s->remote_addr = f->b.mr->iova + 12288;
	s->rkey = rkey;
	s->compare_add = 5;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 71, &dst, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 3);
	shca_qt_expect_wc(test, f->a.cq, 61, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_qt_expect_wc(test, f->a.cq, 62, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->a.cq, 63, IB_WC_SUCCESS, IB_WC_FETCH_ADD,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 71, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xabcd);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 100, f->a.buf, 300), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 8192, f->a.buf, 300), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned((u64 *)(f->b.buf + 12288)), 5);

	/* Slot 4 refused (an opcode POST_SEND has not): 3 posted, 4 named. */
	shca_qt_swqe(a, 3, 64, IB_WR_SEND, &src, 1);
	shca_qt_swqe(a, 4, 65, IB_WR_REG_MR, &src, 1);
	shca_qt_swqe(a, 5, 66, IB_WR_SEND, &src, 1);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 72, &dst, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 6, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 4);
	shca_qt_expect_wc(test, f->a.cq, 64, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 72, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	shca_qt_expect_empty(test, f->a.cq);

	/* Too many SGEs, bad flags: refused, nothing taken. */
	shca_qt_swqe(a, 4, 67, IB_WR_SEND, &src, 1)->num_sge = 5;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 5, NULL), -EINVAL);
	shca_qt_swqe(a, 4, 68, IB_WR_SEND, &src, 1)->send_flags = 1U << 30;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 5, NULL), -EINVAL);
	/* A producer beyond the ring: nothing posted at all. */
	shca_qt_swqe(a, 4, 69, IB_WR_SEND, &src, 1);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 4 + a->sq.mask + 2, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 3, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 4);
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);

	/* The same slot, fixed, goes; no ring on b's send queue. */
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 73, &dst, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 5, NULL), 0);
	shca_qt_expect_wc(test, f->a.cq, 69, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 73, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(to_shca_qp(f->b.qp), 1, NULL),
			-EINVAL);
}

/*
 * A UD send ring: slots name address handles by number in a table the
 * doorbell is given (a process's context: struct shca_ucontext.ahs); a
 * number not in it, or an RDMA opcode, refuses the slot.
 */
static void shca_qp_ring_ud(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_ud_qp(test, &f->a, SHCA_QT_QKEY);
	struct ib_qp *ub = shca_qt_ud_qp(test, &f->b, SHCA_QT_QKEY);
	struct shca_qp *a = to_shca_qp(ua);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 100);
	union ib_gid dgid;
	struct ib_ah *ah = shca_qt_ah(test, &f->a, f->b.ibdev, &dgid);
	struct softhca_swqe *s;
	struct ib_wc wc;
	struct xarray ahs;
	u32 num;

	xa_init_flags(&ahs, XA_FLAGS_ALLOC1);
	KUNIT_ASSERT_EQ(test, xa_alloc(&ahs, &num, to_shca_ah(ah), xa_limit_32b,
				       GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(a, true), 0);
	shca_qt_fill(f->a.buf, 100, 9);

	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 81, 200), 0);
	s = shca_qt_swqe(a, 0, 91, IB_WR_SEND_WITH_IMM, &src, 1);
	s->ex = (__force u32)cpu_to_be32(0xfeed);
	s->ah = num;
	s->remote_qpn = ub->qp_num;
	s->remote_qkey = SHCA_QT_QKEY;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 1, &ahs), 0);
	shca_qt_expect_wc(test, f->a.cq, 91, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 81, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 140);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeed);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 40, f->a.buf, 100), 0);

	/* An AH number not in the table; an RDMA WRITE on UD. */
	s = shca_qt_swqe(a, 1, 92, IB_WR_SEND, &src, 1);
	s->ah = num + 1;
	s->remote_qpn = ub->qp_num;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 2, &ahs), -EINVAL);
	s = shca_qt_swqe(a, 1, 93, IB_WR_RDMA_WRITE, &src, 1);
	s->ah = num;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 2, &ahs), -EINVAL);
	/* The AH gone from the table (destroyed): refused too. */
	xa_erase(&ahs, num);
	s = shca_qt_swqe(a, 1, 94, IB_WR_SEND, &src, 1);
	s->ah = num;
	s->remote_qpn = ub->qp_num;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 2, &ahs), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 1);
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_expect_empty(test, f->b.cq);
	xa_destroy(&ahs);
}

static struct kunit_case shca_qp_ring_cases[] = {
	KUNIT_CASE(shca_qp_ring_recv),
	KUNIT_CASE(shca_qp_ring_import_bounded),
	KUNIT_CASE_PARAM(shca_qp_ring_corrupt, shca_qt_ring_bad_gen_params),
	KUNIT_CASE(shca_qp_ring_send),
	KUNIT_CASE(shca_qp_ring_ud),
	{}
};

static struct kunit_suite shca_qp_ring_suite = {
	.name = "shca_qp_ring",
	.init = shca_qt_init_two,
	.test_cases = shca_qp_ring_cases,
};

kunit_test_suites(&shca_qp_ring_suite);
