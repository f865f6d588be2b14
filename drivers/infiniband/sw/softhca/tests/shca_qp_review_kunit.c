// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_review: one case per finding of the review of
 * issue 9 (and of issue 29's that concern the QP), each checked to fail
 * without its fix.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/vmalloc.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static struct ib_qp *shca_qt_qp_nodefer(struct kunit *test,
					struct shca_qt_end *e)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %ld",
			       PTR_ERR(qp));
	return qp;
}

/*
 * Finding 1: a destroyed QP's completions leave its kernel CQs, so no
 * poll ever returns a pointer to freed memory (KASAN reports the read of
 * wc.qp below if one does).
 */
static void shca_qp_destroy_purges_cq(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_qp *qp = shca_qt_qp_nodefer(test, &f->a);
	struct ib_recv_wr wr2 = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				 .next = &wr2 };
	const struct ib_recv_wr *bad;
	u32 qpn = qp->qp_num;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, &bad), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &err, IB_QP_STATE), 0);
	/* The first flush is here, so the second one is queued too. */
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_WR_FLUSH_ERR, 0, &wc);
	KUNIT_EXPECT_EQ(test, wc.qp->qp_num, qpn);
	msleep(20);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	if (ib_poll_cq(f->a.cq, 1, &wc) == 1)
		KUNIT_FAIL(test, "completion %llu of QP %u after its destroy",
			   wc.wr_id, wc.qp->qp_num);
}

/*
 * Finding 2: a lookup by number that found a QP just before its destroy
 * must not read freed memory. What it reads is the QP's link, which the
 * destroy frees only after a grace period: read right after destroy (no
 * grace period can have passed without this thread sleeping), the link
 * is still there with its count at zero (KASAN would report a link freed
 * at once), and no lookup finds the QP any more.
 */
static void shca_qp_destroy_link_outlives_readers(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp = shca_qt_qp_nodefer(test, &f->a);
	struct shca_qp_link *l = to_shca_qp(qp)->link;
	u32 qpn = qp->qp_num;
	unsigned long cookie;
	struct shca_qp *found;

	found = shca_qp_get(qpn);
	KUNIT_ASSERT_PTR_EQ(test, found, to_shca_qp(qp));
	shca_qp_put(found);

	cookie = get_state_synchronize_rcu();
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	rcu_read_lock();
	if (poll_state_synchronize_rcu(cookie)) {
		rcu_read_unlock();
		kunit_skip(test, "a grace period passed during the destroy");
	}
	KUNIT_EXPECT_EQ(test, kref_read(&l->ref), 0);
	KUNIT_EXPECT_FALSE(test, kref_get_unless_zero(&l->ref));
	rcu_read_unlock();
	KUNIT_EXPECT_NULL(test, shca_qp_get(qpn));
}

/*
 * Finding 5: a destroyed QP's number is held back from reuse, even when
 * the allocator comes round to it; released, it is used again.
 */
static void shca_qp_number_held(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp = shca_qt_qp_nodefer(test, &f->a);
	u32 qpn = qp->qp_num;

	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	shca_qpn_set_next(qpn);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_NE(test, qp->qp_num, qpn);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);

	shca_qpn_release_all();
	shca_qpn_set_next(qpn);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_EQ(test, qp->qp_num, qpn);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
}

/*
 * Issue 29, finding 10: the allocator never hands out the multicast QPN
 * (0xffffff): asked to go on from there, it wraps to the first number.
 */
static void shca_qp_number_not_multicast(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp;

	shca_qpn_set_next(IB_MULTICAST_QPN - 1);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_EQ(test, qp->qp_num, IB_MULTICAST_QPN - 1);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	shca_qpn_set_next(IB_MULTICAST_QPN);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_NE(test, qp->qp_num, IB_MULTICAST_QPN);
	KUNIT_EXPECT_GE(test, qp->qp_num, 2U);
	KUNIT_EXPECT_LT(test, qp->qp_num, IB_MULTICAST_QPN);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	shca_qpn_release_all();
}

/* shca_qp_recv_inflight: the responder is flushed in the middle of a SEND. */
static struct shca_qt_fix *shca_qt_inflight_fix;
static int shca_qt_inflight_chunks;
static struct ib_wc shca_qt_inflight_wc[4];
static int shca_qt_inflight_n;

static void shca_qt_inflight_poll(struct ib_cq *cq)
{
	while (shca_qt_inflight_n < ARRAY_SIZE(shca_qt_inflight_wc) &&
	       ib_poll_cq(cq, 1, &shca_qt_inflight_wc[shca_qt_inflight_n]) == 1)
		shca_qt_inflight_n++;
}

/*
 * After the first chunk of the SEND: the responder enters the error
 * state and its work item runs (it flushes what it may); what reached
 * its CQ meanwhile is recorded.
 */
static void shca_qt_inflight_stub(struct shca_mr *mr)
{
	struct shca_qt_fix *f = shca_qt_inflight_fix;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };

	if (mr != to_shca_mr(f->b.mr) || ++shca_qt_inflight_chunks != 1)
		return;
	ib_modify_qp(f->b.qp, &err, IB_QP_STATE);
	msleep(50);
	shca_qt_inflight_poll(f->b.cq);
}

/*
 * Issue 29 (second review, F2): a receive a requester took and is still
 * filling when the responder enters the error state completes before the
 * receives behind it are flushed - the flush waits for it - so no
 * FLUSH_ERR overtakes it (ib_drain_qp() returns only once it is done: a
 * ULP then frees the buffers). Before the fix the flush completed the
 * queued receive during the transfer and the taken one after it.
 */
static void shca_qp_recv_inflight(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	u32 len = 3 * SZ_16K, key;
	struct ib_sge src = shca_qt_sge(&f->a, 0, len);
	struct ib_sge dst, dst2;
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };

	shca_qt_fill(f->a.buf, len, 3);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	/* Through b's fast-reg MR: its bytes move in 16 KiB chunks. */
	dst = (struct ib_sge){ .addr = f->b.mr->iova, .length = len,
			       .lkey = key };
	dst2 = (struct ib_sge){ .addr = f->b.mr->iova + len, .length = 64,
				.lkey = key };
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 11, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 12, &dst2, 1), 0);

	shca_qt_inflight_fix = f;
	shca_qt_inflight_chunks = 0;
	shca_qt_inflight_n = 0;
	kunit_activate_static_stub(test, shca_mr_copy_chunk_done,
				   shca_qt_inflight_stub);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	kunit_deactivate_static_stub(test, shca_mr_copy_chunk_done);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_chunks, 3);
	KUNIT_EXPECT_EQ_MSG(test, shca_qt_inflight_n, 0,
			    "completed during the transfer: wr_id %llu",
			    shca_qt_inflight_wc[0].wr_id);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	msleep(50);
	shca_qt_inflight_poll(f->b.cq);
	KUNIT_ASSERT_EQ(test, shca_qt_inflight_n, 2);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[0].wr_id, 11);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[1].wr_id, 12);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[1].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, len), 0);
}

/*
 * Issue 29 (second review, F3): the data path's error never lands on a
 * QP in RESET (a request of the connection modify_qp just reset may
 * still be finishing); the QP stays in RESET and can be connected again.
 */
static void shca_qp_error_spares_reset(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *qp = to_shca_qp(f->a.qp);
	unsigned long flags;

	KUNIT_ASSERT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RESET);
	spin_lock_irqsave(&qp->lock, flags);
	shca_qp_set_error(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	spin_lock_irqsave(&qp->lock, flags);
	shca_qp_set_error(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

/* shca_qp_error_spares_new_connection: the responder reconnects mid-WRITE. */
static struct shca_qt_fix *shca_qt_epoch_fix;
static int shca_qt_epoch_chunks;
static int shca_qt_epoch_err;
static bool shca_qt_epoch_waited;
static DECLARE_COMPLETION(shca_qt_epoch_done);

/* Another thread resets b and connects it again (to a, as before). */
static int shca_qt_epoch_thread(void *arg)
{
	struct shca_qt_fix *f = arg;
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	int err;

	err = ib_modify_qp(f->b.qp, &reset, IB_QP_STATE);
	if (!err)
		err = shca_qt_to_init(f->b.qp);
	if (!err)
		err = shca_qt_to_rts(f->b.qp, f->a.ibdev, f->a.qp->qp_num,
				     &shca_qt_default_conn);
	WRITE_ONCE(shca_qt_epoch_err, err);
	complete(&shca_qt_epoch_done);
	return 0;
}

/*
 * After the first chunk of the WRITE: b's MR is invalidated (the next
 * chunk fails at b) and another thread resets b. The reset takes b out
 * of RTS at once, then waits for the message b's responder is taking.
 */
static void shca_qt_epoch_stub(struct shca_mr *mr)
{
	struct shca_qt_fix *f = shca_qt_epoch_fix;
	struct task_struct *task;
	int i;

	if (mr != to_shca_mr(f->b.mr) || ++shca_qt_epoch_chunks != 1)
		return;
	if (shca_mr_invalidate(to_shca_dev(f->b.ibdev), f->b.pd, 0,
			       f->b.mr->rkey))
		return;
	task = kthread_run(shca_qt_epoch_thread, f, "shca_qt_reset");
	if (IS_ERR(task))
		return;
	for (i = 0; i < 200 && shca_qt_state(f->b.qp) != IB_QPS_RESET; i++)
		usleep_range(5000, 6000);
	msleep(20);
	/* In RESET, and still waiting for this message to end. */
	shca_qt_epoch_waited = shca_qt_state(f->b.qp) == IB_QPS_RESET &&
			       READ_ONCE(shca_qt_epoch_err) == -EINPROGRESS;
}

/*
 * Issue 29 (second review, F3), issue 30: a request of a connection the
 * responder is resetting fails at the responder; the requester's
 * completion says so, but the reset waits for it (the memory link's
 * responder is taken, shca_qp.resp_busy), and the responder's new
 * connection stays in RTS with no event (it saw none of it). Before
 * issue 29 the failure put the new connection in the error state.
 */
static void shca_qp_error_spares_new_connection(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	u32 len = 3 * SZ_16K, key;
	struct ib_sge src = shca_qt_sge(&f->a, 0, len);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &src,
			.num_sge = 1 },
	};

	shca_qt_fill(f->a.buf, len, 5);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova;
	wr.rkey = key;

	shca_qt_epoch_fix = f;
	shca_qt_epoch_chunks = 0;
	shca_qt_epoch_err = -EINPROGRESS;
	shca_qt_epoch_waited = false;
	reinit_completion(&shca_qt_epoch_done);
	kunit_activate_static_stub(test, shca_mr_copy_chunk_done,
				   shca_qt_epoch_stub);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	kunit_deactivate_static_stub(test, shca_mr_copy_chunk_done);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&shca_qt_epoch_done,
							    5 * HZ));
	KUNIT_ASSERT_EQ(test, shca_qt_epoch_err, 0);
	KUNIT_EXPECT_EQ(test, shca_qt_epoch_chunks, 1);
	KUNIT_EXPECT_TRUE(test, shca_qt_epoch_waited);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_REM_ACCESS_ERR,
			  IB_WC_RDMA_WRITE, NULL);
	msleep(20);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

/*
 * Issue 29, finding 5: SQ drain (SQD) is refused with -EOPNOTSUPP from
 * RTS; the QP stays in RTS with its PSNs as they were, and the next
 * messages arrive. Before the fix RTS -> SQD -> RTS restarted the
 * requester from a stale PSN on the wire, and the next message completed
 * without being delivered.
 */
static void shca_qp_sqd_refused(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp_attr sqd = { .qp_state = IB_QPS_SQD };
	struct ib_sge src = shca_qt_sge(&f->a, 0, 32);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 32);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };
	u32 psn;
	int i;

	shca_qt_fill(f->a.buf, 64, 9);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	for (i = 0; i < 2; i++) {
		psn = shca_qt_psn(f->a.qp, true);
		KUNIT_EXPECT_EQ(test, ib_modify_qp(f->a.qp, &sqd, IB_QP_STATE),
				-EOPNOTSUPP);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
		KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true), psn);
		memset(f->b.buf, 0, 32);
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 10 + i, &dst, 1),
				0);
		wr.wr_id = 1 + i;
		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
		shca_qt_expect_wc(test, f->a.cq, 1 + i, IB_WC_SUCCESS,
				  IB_WC_SEND, NULL);
		shca_qt_expect_wc(test, f->b.cq, 10 + i, IB_WC_SUCCESS,
				  IB_WC_RECV, NULL);
		KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 32), 0);
	}
}

/*
 * Finding 5: PSNs. Each request takes one PSN per packet at the path MTU
 * (1024 here; a READ its response packets; an atomic one) on both ends;
 * a requester whose PSN is not the one the responder expects is not
 * accepted (RETRY_EXC_ERR) and moves nothing.
 */
static void shca_qp_psn(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 1, .retry_cnt = 1, .rnr_retry = 7,
		.sq_psn = 0xfffffe, .rq_psn = 0xfffffe,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 2500);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 4096);
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	static const struct shca_qt_conn ahead = {
		.timeout = 1, .retry_cnt = 1, .rnr_retry = 7, .sq_psn = 6,
	};

	shca_qt_connect(test, &f->a, &f->b, &c);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 9, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 9, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	/* 2500 bytes: 3 packets, wrapping at 2^24. */
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true), 1);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, false), 1);

	rd.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	rd.remote_addr = f->b.mr->iova;
	sge.length = 4096;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &rd.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true), 5);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, false), 5);
	/* The responder's own send PSN did not move. */
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, true), 0xfffffe);

	/* b expects PSN 5: a reconnected with PSN 6 is not accepted. */
	memset(f->b.buf, 0, SHCA_QT_BUF);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 10, &dst, 1), 0);
	shca_qt_restate(test, &f->a, &f->b, &ahead);
	shca_qt_fill(f->a.buf, 64, 3);
	sge.length = 64;
	wr.wr_id = 3;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_RETRY_EXC_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->b.cq);
}

/*
 * Finding 7: after an error, RESET -> INIT -> RTR -> RTS with the same
 * attributes gives a working QP: RESET empties the queues and drops the
 * QP's old completions (the order rdma-core's tests restate QPs in).
 */
static void shca_qp_reset_reuse(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 32);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_sge stale = dst;
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	int i;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	/* b's first receive names a key nobody has: REM_OP_ERR for a. */
	stale.lkey = 0x5a5a5a00;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 7, &stale, 1), 0);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 8, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_OP_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	msleep(20);	/* the flushes are queued, and not polled */

	shca_qt_restate(test, &f->b, &f->a, &shca_qt_default_conn);
	shca_qt_restate(test, &f->a, &f->b, &shca_qt_default_conn);

	/* Old completions are gone; new traffic completes in both ways. */
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_expect_empty(test, f->b.cq);
	shca_qt_fill(f->a.buf, 32, 9);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 11, &dst, 1), 0);
	wr.wr_id = 12;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 12, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 11, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf, f->b.buf, 32), 0);
}

/*
 * Finding 9: a misaligned atomic is an invalid request: the responder
 * goes to the error state and says so (IB_EVENT_QP_REQ_ERR).
 */
static void shca_qp_atomic_misaligned(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.sg_list = &sge, .num_sge = 1 },
		.compare_add = 1,
	};

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + 4;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_INV_REQ_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 2000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_REQ_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 16, 0));
}

/*
 * Finding 9: READ/atomic resources of 0. A requester granted none cannot
 * issue a READ (LOC_QP_OP_ERR); a responder granted none refuses one as
 * an invalid request.
 */
static void shca_qp_rd_atomic_zero(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn none = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 7,
		.no_init_rd = true, .no_dest_rd = true,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.sg_list = &sge, .num_sge = 1 },
	};

	shca_qt_fill(f->b.buf, 64, 1);
	/* a has no initiator resources. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->b.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->b.qp, f->a.ibdev,
					     f->a.qp->qp_num,
					     &shca_qt_default_conn), 0);
	rd.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	rd.remote_addr = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->a.qp, f->b.ibdev,
					     f->b.qp->qp_num, &none), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &rd.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_LOC_QP_OP_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, 64, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);

	/* b has no responder resources. */
	shca_qt_restate(test, &f->b, &f->a, &none);
	shca_qt_restate(test, &f->a, &f->b, &shca_qt_default_conn);
	rd.wr.wr_id = 2;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &rd.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_REM_INV_REQ_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, 64, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
}

/*
 * Finding 9: the requester waits the RNR NAK timer the responder asks for
 * (its min_rnr_timer, IBTA table) between RNR retries: code 28 is
 * 163.84 ms, so three retries take at least 491 ms.
 */
static void shca_qp_rnr_timer(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn slow = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 3,
		.min_rnr_timer = 28,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };
	ktime_t start;
	s64 ms;

	shca_qt_connect(test, &f->a, &f->b, &slow);
	start = ktime_get();
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0, NULL);
	ms = ktime_ms_delta(ktime_get(), start);
	KUNIT_EXPECT_GE_MSG(test, ms, 491, "3 RNR waits of 163.84 ms took %lld ms",
			    ms);
}

/*
 * Finding 9: IB_WR_REG_MR_INTEGRITY needs an integrity-enabled QP: refused
 * at post time with EINVAL, and the QP stays usable.
 */
static void shca_qp_reg_integrity_needs_qp_flag(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_mr *mr = ib_alloc_mr_integrity(f->a.pd, 4, 4);
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE,
	};

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, mr);
	wr.mr = mr;
	wr.key = mr->rkey;
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_reg(test, &f->a, SHCA_QT_RW);
}

static void shca_qt_vfree(void *p)
{
	vfree(p);
}

/*
 * Finding 3: large requests do not monopolise the executor. A run of a
 * QP's work item stops after SHCA_EXEC_BYTES and copies with reschedule
 * points, so a small SEND of another QP, posted behind eight 16 MiB SENDs,
 * completes long before the eighth of them (on a uniprocessor kernel
 * without preemption, where a run that never yields would finish all
 * eight first).
 */
static void shca_qp_exec_yields(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_end *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct shca_qt_end *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	const int big = 8;
	u8 *src = vzalloc(SZ_16M), *dst = vzalloc(SZ_16M);
	struct ib_sge bsge = { .length = SZ_16M };
	struct ib_sge rsge = { .length = SZ_16M };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &bsge, .num_sge = 1 };
	struct ib_sge sge, small;
	struct ib_wc wc;
	int i, done = 0;

	KUNIT_ASSERT_NOT_NULL(test, src);
	shca_kunit_defer(test, shca_qt_vfree, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	shca_kunit_defer(test, shca_qt_vfree, dst);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, d);
	shca_qt_end_init(test, c, f->a.ibdev, IB_POLL_DIRECT);
	shca_qt_end_init(test, d, f->a.ibdev, IB_POLL_DIRECT);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_connect(test, c, d, &shca_qt_default_conn);

	bsge.addr = (u64)(uintptr_t)src;
	bsge.lkey = f->a.pd->local_dma_lkey;
	rsge.addr = (u64)(uintptr_t)dst;
	rsge.lkey = f->b.pd->local_dma_lkey;
	sge = shca_qt_sge(d, 0, 64);
	small = shca_qt_sge(c, 0, 64);
	for (i = 0; i < big; i++)
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, i, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(d, 100, &sge, 1), 0);
	/* a's eight SENDs go first, then c's small one. */
	for (i = 0; i < big; i++) {
		wr.wr_id = i;
		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	}
	wr.wr_id = 100;
	wr.sg_list = &small;
	KUNIT_ASSERT_EQ(test, shca_qt_post(c, &wr), 0);

	shca_qt_expect_wc(test, c->cq, 100, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	while (ib_poll_cq(f->a.cq, 1, &wc) == 1) {
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		done++;
	}
	KUNIT_EXPECT_LT_MSG(test, done, big,
			    "all %d large SENDs completed before the small one",
			    done);
	/* They all complete, and the data is intact. */
	for (; done < big; done++)
		shca_qt_expect_wc(test, f->a.cq, done, IB_WC_SUCCESS,
				  IB_WC_SEND, NULL);
	for (i = 0; i < big; i++)
		shca_qt_expect_wc(test, f->b.cq, i, IB_WC_SUCCESS, IB_WC_RECV,
				  NULL);
}

struct shca_qt_netns {
	struct ib_device *ibdev;
	struct net *net;
};

static void shca_qt_restore_net(void *p)
{
	struct shca_qt_netns *n = p;

	write_pnet(&n->ibdev->coredev.rdma_net, n->net);
}

/*
 * Finding 5: a peer in another RDMA network namespace is not reachable,
 * whatever its number, GID and state. (The test moves b's device to a
 * namespace of its own by setting the core's field, for the length of
 * one request; nothing dereferences it meanwhile.)
 */
static void shca_qp_other_netns(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 1, .retry_cnt = 1, .rnr_retry = 7,
	};
	struct shca_qt_netns *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct net *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };

	KUNIT_ASSERT_NOT_NULL(test, n);
	KUNIT_ASSERT_NOT_NULL(test, other);
	shca_qt_connect(test, &f->a, &f->b, &c);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 2, &dst, 1), 0);
	shca_qt_fill(f->a.buf, 8, 4);

	n->ibdev = f->b.ibdev;
	n->net = read_pnet(&f->b.ibdev->coredev.rdma_net);
	write_pnet(&f->b.ibdev->coredev.rdma_net, other);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_qt_restore_net,
							n), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	kunit_release_action(test, shca_qt_restore_net, n);

	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 8, 0));
	shca_qt_expect_empty(test, f->b.cq);
}

static struct kunit_case shca_qp_review_cases[] = {
	KUNIT_CASE(shca_qp_destroy_purges_cq),
	KUNIT_CASE(shca_qp_destroy_link_outlives_readers),
	KUNIT_CASE(shca_qp_number_held),
	KUNIT_CASE(shca_qp_number_not_multicast),
	KUNIT_CASE(shca_qp_sqd_refused),
	KUNIT_CASE_SLOW(shca_qp_recv_inflight),
	KUNIT_CASE(shca_qp_error_spares_reset),
	KUNIT_CASE(shca_qp_error_spares_new_connection),
	KUNIT_CASE_PARAM(shca_qp_other_netns, shca_qt_apart_gen_params),
	KUNIT_CASE_PARAM(shca_qp_psn, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_reset_reuse, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_atomic_misaligned),
	KUNIT_CASE(shca_qp_rd_atomic_zero),
	KUNIT_CASE(shca_qp_rnr_timer),
	KUNIT_CASE(shca_qp_reg_integrity_needs_qp_flag),
	KUNIT_CASE_SLOW(shca_qp_exec_yields),
	{}
};

static struct kunit_suite shca_qp_review_suite = {
	.name = "shca_qp_review",
	.init = shca_qt_init,
	.test_cases = shca_qp_review_cases,
};

kunit_test_suites(&shca_qp_review_suite);
