// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_verbs: refused CQ and QP creations and attributes
 * (leaving no count behind), and the QP state machine: illegal
 * transitions and bad attributes refused without changing the QP, posting
 * in the wrong state, query returning what was set, RESET dropping
 * posted receives.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static void shca_qp_refuse_create(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_dev *sdev = to_shca_dev(f->dev[0]);
	struct ib_cq_init_attr cattr = { .cqe = SHCA_MAX_CQE + 1 };
	struct ib_qp_init_attr init = {
		.send_cq = f->a.cq, .recv_cq = f->a.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	int qps = atomic_read(&sdev->num_qps);
	int cqs = atomic_read(&sdev->num_cqs);
	struct ib_qp_init_attr bad;
	struct ib_cq *cq;

	cq = ib_create_cq(f->dev[0], NULL, NULL, NULL, &cattr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);
	cattr.cqe = 1;
	cattr.comp_vector = f->dev[0]->num_comp_vectors;
	cq = ib_create_cq(f->dev[0], NULL, NULL, NULL, &cattr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);

	bad = init;
	bad.qp_type = IB_QPT_RAW_PACKET;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EOPNOTSUPP);
	bad = init;
	bad.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EOPNOTSUPP);
	/* Signature offload is for RC connections. */
	bad = init;
	bad.qp_type = IB_QPT_UD;
	bad.create_flags = IB_QP_CREATE_INTEGRITY_EN;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);
	bad = init;
	bad.cap.max_send_wr = SHCA_MAX_QP_WR + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);
	bad = init;
	bad.cap.max_recv_sge = SHCA_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);
	bad = init;
	bad.cap.max_inline_data = SHCA_MAX_INLINE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);

	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->num_qps), qps);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->num_cqs), cqs);
}

static void shca_qp_states(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp = f->a.qp;
	struct ib_qp_attr attr = {};
	struct ib_qp_init_attr init;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .sg_list = &sge,
				 .num_sge = 1 };

	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_post_recv(&f->a, 1, &sge, 1), -EINVAL);

	/* RESET -> RTS is not a transition. */
	attr.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	/*
	 * INIT needs its attributes; a bad pkey index changes nothing. (A bad
	 * port is not tried: the core indexes its port array with it before
	 * asking the driver; uverbs checks ports, kernel ULPs must.)
	 */
	attr.qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	attr.port_num = 1;
	attr.pkey_index = 1;
	attr.qp_access_flags = SHCA_QT_RW;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_RESET);

	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_INIT);
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);
	/* Receives may be posted from INIT on. */
	KUNIT_EXPECT_EQ(test, shca_qt_post_recv(&f->a, 1, &sge, 1), 0);

	/* A timeout of 32 is refused without touching the QP. */
	attr = (struct ib_qp_attr){ .qp_state = IB_QPS_RTR, .timeout = 32 };
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_TIMEOUT), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_INIT);
	/* More responder resources than max_qp_rd_atom: the same. */
	attr = (struct ib_qp_attr){ .qp_state = IB_QPS_RTR,
				    .max_dest_rd_atomic = SHCA_MAX_RD_ATOM + 1 };
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_MAX_DEST_RD_ATOMIC), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_INIT);
	KUNIT_EXPECT_NULL(test, to_shca_qp(qp)->wresp.res);

	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(qp, f->b.ibdev, f->b.qp->qp_num,
					     &shca_qt_default_conn), 0);
	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, attr.dest_qp_num, f->b.qp->qp_num);
	KUNIT_EXPECT_EQ(test, attr.timeout, 4);
	KUNIT_EXPECT_EQ(test, attr.rnr_retry, 7);
	KUNIT_EXPECT_EQ(test, attr.qp_access_flags, SHCA_QT_RW);
	KUNIT_EXPECT_EQ(test, init.cap.max_send_sge, 4);
	KUNIT_EXPECT_EQ(test, init.cap.max_inline_data, 64);

	/* Too many SGEs is refused at post time. */
	wr.num_sge = 5;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);

	/* RESET drops the posted receive without a completion. */
	attr.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), 0);
	shca_qt_expect_empty(test, f->a.cq);
}

static struct kunit_case shca_qp_verbs_cases[] = {
	KUNIT_CASE(shca_qp_refuse_create),
	KUNIT_CASE(shca_qp_states),
	{}
};

static struct kunit_suite shca_qp_verbs_suite = {
	.name = "shca_qp_verbs",
	.init = shca_qt_init,
	.test_cases = shca_qp_verbs_cases,
};

kunit_test_suites(&shca_qp_verbs_suite);
