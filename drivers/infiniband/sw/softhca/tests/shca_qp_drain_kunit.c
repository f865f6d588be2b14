// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_drain: ib_drain_qp() on both ends of a busy pair,
 * with CQs of each polling context.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* The CQ polling contexts of ib_alloc_cq(), each with its name. */
static const enum ib_poll_context shca_qt_pollctx[] = {
	IB_POLL_DIRECT, IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE,
	IB_POLL_UNBOUND_WORKQUEUE,
};

static void shca_qt_pollctx_desc(const enum ib_poll_context *ctx, char *desc)
{
	static const char * const names[] = {
		[IB_POLL_DIRECT] = "IB_POLL_DIRECT",
		[IB_POLL_SOFTIRQ] = "IB_POLL_SOFTIRQ",
		[IB_POLL_WORKQUEUE] = "IB_POLL_WORKQUEUE",
		[IB_POLL_UNBOUND_WORKQUEUE] = "IB_POLL_UNBOUND_WORKQUEUE",
	};

	strscpy(desc, names[*ctx], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_qt_pollctx, shca_qt_pollctx, shca_qt_pollctx_desc);

/* Fixture of shca_qp_drain: two devices, CQs of the context param. */
static int shca_qt_init_wq(struct kunit *test)
{
	const enum ib_poll_context *ctx = test->param_value;

	return shca_qt_init_common(test, 1, false,
				   ctx ? *ctx : IB_POLL_WORKQUEUE);
}

struct shca_qt_count {
	struct ib_cqe cqe;
	atomic_t done;
	atomic_t ok;
};

static void shca_qt_count_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct shca_qt_count *c = container_of(wc->wr_cqe,
					       struct shca_qt_count, cqe);

	if (wc->status == IB_WC_SUCCESS)
		atomic_inc(&c->ok);
	atomic_inc(&c->done);
}

/*
 * ib_drain_qp() of a busy pair returns once everything posted has
 * completed, successfully or flushed; every successful SEND consumed
 * exactly one receive. With CQs of every polling context a ULP uses.
 */
static void shca_qp_drain_busy(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 8);
	struct shca_qt_count *sends, *recvs;
	const struct ib_recv_wr *rbad;
	int i;

	sends = kunit_kzalloc(test, sizeof(*sends), GFP_KERNEL);
	recvs = kunit_kzalloc(test, sizeof(*recvs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sends);
	KUNIT_ASSERT_NOT_NULL(test, recvs);
	sends->cqe.done = shca_qt_count_done;
	recvs->cqe.done = shca_qt_count_done;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	for (i = 0; i < 16; i++) {
		struct ib_recv_wr wr = { .wr_cqe = &recvs->cqe,
					 .sg_list = &dst, .num_sge = 1 };

		KUNIT_ASSERT_EQ(test, ib_post_recv(f->b.qp, &wr, &rbad), 0);
	}
	for (i = 0; i < 16; i++) {
		struct ib_send_wr wr = { .wr_cqe = &sends->cqe,
					 .opcode = IB_WR_SEND,
					 .send_flags = IB_SEND_SIGNALED,
					 .sg_list = &sge, .num_sge = 1 };

		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	}
	ib_drain_qp(f->a.qp);
	ib_drain_qp(f->b.qp);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&sends->done), 16);
	KUNIT_EXPECT_EQ(test, atomic_read(&recvs->done), 16);
	KUNIT_EXPECT_EQ(test, atomic_read(&sends->ok),
			atomic_read(&recvs->ok));
	kunit_info(test, "drained: %d of 16 SENDs had completed",
		   atomic_read(&sends->ok));
}

static struct kunit_case shca_qp_drain_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_drain_busy, shca_qt_pollctx_gen_params),
	{}
};

static struct kunit_suite shca_qp_drain_suite = {
	.name = "shca_qp_drain",
	.init = shca_qt_init_wq,
	.test_cases = shca_qp_drain_cases,
};

kunit_test_suites(&shca_qp_drain_suite);
