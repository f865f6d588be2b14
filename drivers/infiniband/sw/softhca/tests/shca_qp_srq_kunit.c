// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_srq: shared receive queues: WQEs shared by the QPs
 * of one device or two, the limit event, RNR on an empty SRQ, refusals,
 * ib_drain_qp() of SRQ QPs.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/delay.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static void shca_qt_srq_event(struct ib_event *ev, void *ctx)
{
	atomic_t *limit_events = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(limit_events);
}

static void shca_qt_destroy_srq(void *srq)
{
	ib_destroy_srq(srq);
}

/* An SRQ on @e's PD: @max_wr WQEs of 2 SGEs; limit events count in @n. */
static struct ib_srq *shca_qt_srq(struct kunit *test, struct shca_qt_end *e,
				  u32 max_wr, atomic_t *n)
{
	struct ib_srq_init_attr init = {
		.event_handler = shca_qt_srq_event,
		.srq_context = n,
		.attr = { .max_wr = max_wr, .max_sge = 2 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq *srq = ib_create_srq(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(srq), "create_srq: %ld",
			       PTR_ERR(srq));
	shca_kunit_defer(test, shca_qt_destroy_srq, srq);
	KUNIT_EXPECT_EQ(test, init.attr.max_wr, max_wr);
	return srq;
}

/* An RC QP of @e, on @srq if not NULL, in INIT. */
static struct ib_qp *shca_qt_srq_qp(struct kunit *test, struct shca_qt_end *e,
				    struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_qt_event,
		.qp_context = e,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	if (srq)
		KUNIT_EXPECT_EQ(test, init.cap.max_recv_wr, 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	return qp;
}

static void shca_qt_pair(struct kunit *test, struct ib_qp *x,
			 struct ib_device *xdev, struct ib_qp *y,
			 struct ib_device *ydev)
{
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(x, ydev, y->qp_num,
					     &shca_qt_default_conn), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(y, xdev, x->qp_num,
					     &shca_qt_default_conn), 0);
}

static int shca_qt_srq_recv(struct ib_srq *srq, struct shca_qt_end *e,
			    u64 wr_id, u32 off)
{
	struct ib_sge sge = shca_qt_sge(e, off, 256);
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_srq_recv(srq, &wr, &bad);
}

static int shca_qt_send_from(struct ib_qp *qp, struct shca_qt_end *e,
			     u64 wr_id, u32 off, u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, off, len);
	struct ib_send_wr wr = { .wr_id = wr_id, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr, &bad);
}

static bool shca_qt_wait_atomic(atomic_t *v, int want, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (atomic_read(v) != want && time_before(jiffies, end))
		usleep_range(500, 1000);
	return atomic_read(v) == want;
}

/*
 * Two RC QPs share one SRQ: receive WQEs are taken in posting order by
 * whichever QP a message arrives on, the completion names that QP, the
 * armed limit fires once when fewer than it are left, an empty SRQ
 * makes the requester wait (RNR) until a WQE is posted.
 */
static void shca_qp_srq_shared(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	atomic_t limit_events = ATOMIC_INIT(0);
	struct ib_srq *srq = shca_qt_srq(test, &f->b, 8, &limit_events);
	struct ib_qp *b1 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *b2 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *a1 = shca_qt_srq_qp(test, &f->a, NULL);
	struct ib_qp *a2 = shca_qt_srq_qp(test, &f->a, NULL);
	struct ib_srq_attr sattr = { .srq_limit = 2 };
	struct ib_wc wc;
	int i;

	shca_qt_pair(test, a1, f->a.ibdev, b1, f->b.ibdev);
	shca_qt_pair(test, a2, f->a.ibdev, b2, f->b.ibdev);
	shca_qt_fill(f->a.buf, 4096, 5);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 100 + i,
						       i * 256), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(srq, &sattr, IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 2);
	KUNIT_EXPECT_EQ(test, sattr.max_wr, 8);

	/* a1 then a2: WQEs 100 and 101, on b1 and b2; 2 left, no event. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 1, 0, 100), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 100, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b1);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a2, &f->a, 2, 1000, 200), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 101, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b2);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 200);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 256, f->a.buf + 1000, 200), 0);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&limit_events), 0);

	/* WQE 102 leaves one, below the limit: one event, limit disarmed. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 3, 0, 8), 0);
	shca_qt_expect_wc(test, f->b.cq, 102, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_atomic(&limit_events, 1, 1000));
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 0);
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a2, &f->a, 4, 0, 8), 0);
	shca_qt_expect_wc(test, f->b.cq, 103, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b2);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&limit_events), 1);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);

	/* Empty: the send waits (RNR) until a WQE is posted. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 5, 0, 8), 0);
	shca_qt_expect_empty(test, f->b.cq);
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 104, 0), 0);
	shca_qt_expect_wc(test, f->b.cq, 104, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b1);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
}

/* What an SRQ refuses, each with its errno, changing nothing. */
static void shca_qp_srq_refuse(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	atomic_t n = ATOMIC_INIT(0);
	struct ib_srq *srq = shca_qt_srq(test, &f->b, 4, &n);
	struct ib_qp *b1 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_srq_init_attr bad = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq_attr sattr = { .max_wr = 16, .srq_limit = 5 };
	struct ib_sge sge[3] = {};
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = sge, .num_sge = 3 };
	const struct ib_recv_wr *badwr;
	struct ib_srq *s;
	int i;

	/* No WQEs, too many, too many SGEs, a limit above max_wr, XRC. */
	bad.attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.max_wr = SHCA_MAX_SRQ_WR + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.max_wr = 4;
	bad.attr.max_sge = SHCA_MAX_SRQ_SGE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.max_sge = 1;
	bad.attr.srq_limit = 5;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.srq_limit = 0;
	s = ib_create_srq(f->b.pd, &bad);
	KUNIT_ASSERT_FALSE(test, IS_ERR(s));
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(s, NULL), 0);

	/* Resizing is not offered; a limit above max_wr is refused. */
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &sattr, IB_SRQ_MAX_WR),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &sattr, IB_SRQ_LIMIT),
			-EINVAL);
	/* Too many SGEs; a full SRQ; a QP on an SRQ has no receive queue. */
	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &badwr), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, badwr, (const struct ib_recv_wr *)&wr);
	wr.num_sge = 1;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &badwr), 0);
	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &badwr), -ENOMEM);
	KUNIT_EXPECT_EQ(test, ib_post_recv(b1, &wr, &badwr), -EINVAL);
	/* In use by a QP: the core refuses to destroy it. */
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(srq, NULL), -EBUSY);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.max_wr, 4);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 0);
}

/*
 * ib_drain_qp() of a QP on an SRQ: the QP goes to the error state and
 * reports Last WQE Reached at once (the core waits up to a minute for
 * it); the SRQ's WQEs stay for the other QPs.
 */
static void shca_qp_srq_drain(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	atomic_t n = ATOMIC_INIT(0);
	struct ib_srq *srq = shca_qt_srq(test, &f->b, 4, &n);
	struct ib_qp *b1 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *b2 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *a1 = shca_qt_srq_qp(test, &f->a, NULL);
	struct ib_qp *a2 = shca_qt_srq_qp(test, &f->a, NULL);
	unsigned long t0;

	shca_qt_pair(test, a1, f->a.ibdev, b1, f->b.ibdev);
	shca_qt_pair(test, a2, f->a.ibdev, b2, f->b.ibdev);
	KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 200, 0), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 201, 256), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 1, 0, 64), 0);
	shca_qt_expect_wc(test, f->b.cq, 200, IB_WC_SUCCESS, IB_WC_RECV, NULL);

	t0 = jiffies;
	ib_drain_qp(b1);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - t0), 5000);
	KUNIT_EXPECT_EQ(test, f->b.events, 1);
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_LAST_WQE_REACHED);
	KUNIT_EXPECT_EQ(test, shca_qt_state(b1), IB_QPS_ERR);

	/* WQE 201 was not flushed: b2 takes it. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a2, &f->a, 2, 0, 64), 0);
	shca_qt_expect_wc(test, f->b.cq, 201, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	ib_drain_qp(b2);
	KUNIT_EXPECT_EQ(test, f->b.events, 2);
}

static struct kunit_case shca_qp_srq_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_srq_shared, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_srq_refuse),
	KUNIT_CASE_PARAM(shca_qp_srq_drain, shca_qt_where_gen_params),
	{}
};

static struct kunit_suite shca_qp_srq_suite = {
	.name = "shca_qp_srq",
	.init = shca_qt_init,
	.test_cases = shca_qp_srq_cases,
};

kunit_test_suites(&shca_qp_srq_suite);
