// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: The requester's rules, for both links
 *
 * What a requester decides about retries does not depend on the link
 * that lost its request: the memory link (shca_exec.c), where a peer
 * that is not there, not connected back or not expecting the PSN is a
 * lost packet and a peer without a receive WQE an RNR NAK, and the UDP
 * link (shca_wire.c), with ACK timeouts, sequence error NAKs and RNR
 * NAKs. The rules both share live here, once: how long the local ACK
 * timeout and an RNR wait are, how retry_cnt and rnr_retry bound the
 * retries of the WQE at the head of the send queue, how a send WQE
 * completes, and how the local operations (REG_MR, REG_MR_INTEGRITY,
 * LOCAL_INV, BIND_MW) execute in their turn.
 */

#include <linux/jiffies.h>

#include "shca_verbs.h"
#include "shca_wire.h"

/* The RNR NAK timer field's values (IBTA 9.7.5.2.8), in microseconds. */
static const u32 shca_rnr_timer_us[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120,
	160, 240, 320, 480, 640, 960, 1280, 1920,
	2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/**
 * shca_ack_timeout() - a QP's local ACK timeout
 * @qp: the QP
 *
 * Return: 4.096 us * 2^timeout (at most 10 s), at least one jiffy.
 */
unsigned long shca_ack_timeout(const struct shca_qp *qp)
{
	u64 us = (4096ULL << qp->timeout) / 1000;

	return max(usecs_to_jiffies(min_t(u64, us, 10 * USEC_PER_SEC)), 1UL);
}

/**
 * shca_rnr_delay() - how long a requester waits after an RNR NAK
 * @code: the RNR NAK timer code the responder sent (its min_rnr_timer)
 *
 * Return: the time of the IBTA's table for @code, in jiffies (rounded
 * up; 0 for less than a jiffy's worth is not possible, every code is at
 * least 10 us).
 */
unsigned long shca_rnr_delay(u8 code)
{
	return usecs_to_jiffies(shca_rnr_timer_us[code & 31]);
}

/**
 * shca_req_retry() - count a retry of the WQE at the head of the send queue
 * @qp: the requester; the caller executes it (SHCA_QP_EXEC_BUSY)
 * @rnr: an RNR NAK (counted against rnr_retry, 7 meaning for ever);
 *	else a transport retry (a lost request or response, a PSN
 *	sequence error NAK: counted against retry_cnt)
 *
 * The two kinds are counted apart (IBTA 9.7.5.2.8, 9.7.6.1.3), and both
 * start again when the responder makes progress (shca_req_progress()).
 *
 * Return: IB_WC_SUCCESS if the WQE may be sent again, else the status it
 * completes with: IB_WC_RNR_RETRY_EXC_ERR or IB_WC_RETRY_EXC_ERR.
 */
enum ib_wc_status shca_req_retry(struct shca_qp *qp, bool rnr)
{
	if (rnr) {
		if (qp->rnr_retry != 7 &&
		    qp->req.rnr_retries++ >= qp->rnr_retry)
			return IB_WC_RNR_RETRY_EXC_ERR;
	} else if (qp->req.retries++ >= qp->retry_cnt) {
		return IB_WC_RETRY_EXC_ERR;
	}
	return IB_WC_SUCCESS;
}

/**
 * shca_req_progress() - the responder acknowledged something new
 * @qp: the requester; the caller executes it (SHCA_QP_EXEC_BUSY)
 *
 * The retry counters of shca_req_retry() start again.
 */
void shca_req_progress(struct shca_qp *qp)
{
	qp->req.retries = 0;
	qp->req.rnr_retries = 0;
}

/**
 * shca_req_wc() - the completion of a send WQE, before it is known
 * @qp: the requester
 * @w: the WQE
 * @wc: filled: its work request id, opcode, QP and @status
 * @status: IB_WC_SUCCESS, or the error found so far
 */
void shca_req_wc(struct shca_qp *qp, const struct shca_wqe *w,
		 struct ib_wc *wc, enum ib_wc_status status)
{
	*wc = (struct ib_wc){
		.wr_id = w->wr_id,
		.status = status,
		.opcode = shca_wc_opcode(w->opcode),
		.qp = &qp->ibqp,
	};
}

/**
 * shca_req_complete() - the WQE at the head of the send queue is done
 * @qp: the requester; the caller executes it (SHCA_QP_EXEC_BUSY)
 * @w: that WQE
 * @wc: its completion (shca_req_wc()), status final
 * @npsn: PSNs it took, added to sq_psn (0: the link keeps the PSN)
 * @later: executing from post_send: the CQ's handler runs later
 *
 * The WQE leaves the send queue; an error completion moves the QP to
 * the error state (not from RESET: a reset already forgot the WQE's
 * connection); the retry counters start again; the completion goes to
 * the send CQ if the WQE asked for one (IB_SEND_SIGNALED or
 * sq_sig_all) or failed.
 *
 * Return: the QP is in RTS with nothing left in its send queue.
 */
bool shca_req_complete(struct shca_qp *qp, const struct shca_wqe *w,
		       struct ib_wc *wc, u32 npsn, bool later)
{
	bool signaled = wc->status != IB_WC_SUCCESS || qp->sq_sig_all ||
			(w->send_flags & IB_SEND_SIGNALED);
	unsigned long flags;
	bool idle;

	spin_lock_irqsave(&qp->lock, flags);
	qp->sq.head++;
	qp->sq_psn = (qp->sq_psn + npsn) & SHCA_PSN_MASK;
	if (wc->status != IB_WC_SUCCESS)
		shca_qp_set_error(qp);
	idle = qp->state == IB_QPS_RTS && shca_queue_empty(&qp->sq);
	spin_unlock_irqrestore(&qp->lock, flags);
	shca_req_progress(qp);
	if (signaled)
		shca_cq_push(to_shca_cq(qp->ibqp.send_cq), wc, false, later);
	return idle;
}

/**
 * shca_req_local() - execute a local operation of a send queue
 * @qp: the QP
 * @w: REG_MR, REG_MR_INTEGRITY, LOCAL_INV or BIND_MW: no peer involved
 * @wc: its status is set on failure
 */
void shca_req_local(struct shca_qp *qp, struct shca_wqe *w, struct ib_wc *wc)
{
	struct shca_mr *mr;
	int err;

	if (w->opcode == IB_WR_LOCAL_INV) {
		if (shca_mr_invalidate(qp->sdev, qp->ibqp.pd, qp->ibqp.qp_num,
				       w->ex.invalidate_rkey))
			wc->status = IB_WC_LOC_PROT_ERR;
		return;
	}
	if (w->opcode == IB_WR_BIND_MW) {
		if (shca_mw_bind(qp->sdev, qp->ibqp.pd, qp->ibqp.qp_num,
				 &w->bind))
			wc->status = IB_WC_MW_BIND_ERR;
		return;
	}

	mr = to_shca_mr(w->reg.mr);
	if (mr->ibmr.device != qp->ibqp.device || mr->ibmr.pd != qp->ibqp.pd) {
		wc->status = IB_WC_MW_BIND_ERR;
		return;
	}
	if (w->opcode == IB_WR_REG_MR_INTEGRITY)
		err = shca_mr_fast_reg_pi(mr, w->reg.key, w->reg.access,
					  &w->sig);
	else
		err = shca_mr_fast_reg(mr, w->reg.key, w->reg.access);
	if (err)
		wc->status = IB_WC_MW_BIND_ERR;
}

/**
 * shca_wc_opcode() - the completion opcode of a send WQE
 * @wr_opcode: its enum ib_wr_opcode
 *
 * Return: the enum ib_wc_opcode.
 */
enum ib_wc_opcode shca_wc_opcode(u32 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return IB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return IB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return IB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return IB_WC_FETCH_ADD;
	case IB_WR_LOCAL_INV:
		return IB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return IB_WC_BIND_MW;
	case IB_WR_REG_MR:
	case IB_WR_REG_MR_INTEGRITY:
		return IB_WC_REG_MR;
	default:
		return IB_WC_SEND;
	}
}
