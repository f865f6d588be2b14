// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_uc: unreliable connected QPs: SEND, RDMA WRITE and
 * WRITE with immediate, losses without acknowledgements, refusals.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <kunit/test.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* A UC QP of @e in INIT, taking RDMA WRITEs. */
static struct ib_qp *shca_qt_uc_qp(struct kunit *test, struct shca_qt_end *e)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_qt_event,
		.qp_context = e,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_UC,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create UC QP: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), 0);
	return qp;
}

static int shca_qt_uc_rts(struct ib_qp *qp, struct ib_device *peer_dev,
			  u32 dest_qpn, u32 rq_psn, u32 sq_psn)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR, .path_mtu = IB_MTU_1024,
		.dest_qp_num = dest_qpn, .rq_psn = rq_psn,
		.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE,
	};
	union ib_gid dgid;
	int err;

	err = rdma_query_gid(peer_dev, 1, 0, &dgid);
	if (err)
		return err;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, 0, 64, 0);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = sq_psn;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static int shca_qt_uc_recv(struct ib_qp *qp, struct shca_qt_end *e,
			   u64 wr_id, u32 off, u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, off, len);
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

static int shca_qt_uc_post(struct ib_qp *qp, struct shca_qt_end *e,
			   enum ib_wr_opcode op, u64 wr_id, u32 len,
			   u64 raddr, u32 rkey)
{
	struct ib_sge sge = shca_qt_sge(e, 0, len);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .ex.imm_data = cpu_to_be32(0xc0de) },
		.remote_addr = raddr,
		.rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/*
 * UC: SENDs and RDMA WRITEs (with immediate) arrive as on RC; without
 * acknowledgements, what the responder cannot take (no receive WQE, a
 * bad R_Key, PSNs out of sequence) is lost and the request still
 * completes successfully; READs and atomics are refused at post time; a
 * SEND longer than the receive buffer is the responder's own error.
 */
static void shca_qp_uc(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_uc_qp(test, &f->a);
	struct ib_qp *ub = shca_qt_uc_qp(test, &f->b);
	u64 raddr;
	u32 rkey;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qt_uc_rts(ua, f->b.ibdev, ub->qp_num, 0,
					     100), 0);
	/* The responder expects PSN 7: UC resynchronises on the first. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_rts(ub, f->a.ibdev, ua->qp_num, 7,
					     0), 0);
	/* b's MR, registered through its RC QP (keys belong to the PD). */
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	raddr = f->b.mr->iova;
	shca_qt_fill(f->a.buf, 4096, 9);

	/* SEND. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_recv(ub, &f->b, 10, 0, 512), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND, 1, 300,
					      0, 0), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 10, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 300);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 300), 0);

	/* RDMA WRITE, then WRITE with immediate. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_RDMA_WRITE, 2,
					      2000, raddr + 4096, rkey), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 4096, f->a.buf, 2000), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_recv(ub, &f->b, 11, 0, 8), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a,
					      IB_WR_RDMA_WRITE_WITH_IMM, 3, 16,
					      raddr + 8192, rkey), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 11, IB_WC_SUCCESS,
			  IB_WC_RECV_RDMA_WITH_IMM, &wc);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xc0de);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 8192, f->a.buf, 16), 0);

	/* Lost, but complete at the sender: no receive WQE, a bad R_Key. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND, 4, 8,
					      0, 0), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	memset(f->b.buf + 12288, 0, 64);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_RDMA_WRITE, 5,
					      64, raddr + 12288, rkey + 1), 0);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 12288, 64, 0));
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);

	/* READ and atomics do not exist on UC. */
	KUNIT_EXPECT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_RDMA_READ, 6, 8,
					      raddr, rkey), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND_WITH_INV,
					      6, 8, 0, 0), -EINVAL);

	/* Too long for the receive buffer: the responder's local error. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_recv(ub, &f->b, 12, 0, 16), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND, 7, 100,
					      0, 0), 0);
	shca_qt_expect_wc(test, f->a.cq, 7, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 12, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ua), IB_QPS_RTS);
}

static struct kunit_case shca_qp_uc_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_uc, shca_qt_where_gen_params),
	{}
};

static struct kunit_suite shca_qp_uc_suite = {
	.name = "shca_qp_uc",
	.init = shca_qt_init,
	.test_cases = shca_qp_uc_cases,
};

kunit_test_suites(&shca_qp_uc_suite);
