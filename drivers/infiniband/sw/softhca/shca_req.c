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
 *
 * The second half of the file is the requester and completer of the
 * UDP link (see the DOC of shca_wire.c): PSNs, the window, go-back-N,
 * the ACK and RNR timer, READ responses placed in order, completions in
 * send-queue order. The memory link's requester is still in
 * shca_exec.c; the one-transport work (issue 30) makes it a link under
 * this requester.
 */

#include <linux/jiffies.h>
#include <rdma/restrack.h>

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
	shca_wc_init(wc, w->wr_id, status, shca_wc_opcode(w->opcode),
		     &qp->ibqp);
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

/* ---- the requester and completer of the UDP link ------------------------ */

/* PSNs a requester may have outstanding. */
#define SHCA_WIRE_WINDOW	64
/* A request packet asks for an ACK at least this often. */
#define SHCA_WIRE_ACKREQ	32
/* Packets one run of the work item sends. */
#define SHCA_WIRE_SEND_BUDGET	256

/* ---- RC and UC: requester and completer -------------------------------- */

static struct shca_wqe *shca_req_sq_wqe(struct shca_qp *qp, u32 idx)
{
	return shca_queue_slot(&qp->sq, idx);
}

/* Complete the WQE at the head of the send queue with @wc. */
static void shca_req_head_done(struct shca_qp *qp, struct shca_wqe *w,
			       struct ib_wc *wc)
{
	if (shca_req_is_rdatomic(w->opcode) && qp->wreq.rd_out)
		qp->wreq.rd_out--;
	qp->wreq.rd_off = 0;
	/* The wire's requester keeps its PSN in wreq. */
	shca_req_complete(qp, w, wc, 0, false);
}

/* The PSN after the last one sent (once at least). */
static u32 shca_req_sent_psn(const struct shca_wreq *rq)
{
	return rq->resend ? rq->resend_until : rq->psn;
}

/* Packets were sent that are not acknowledged. */
static bool shca_req_outstanding(const struct shca_wreq *rq)
{
	return shca_psn_diff(shca_req_sent_psn(rq), rq->una) > 0;
}

/*
 * The WQE @w at the head just completed. If the requester was going back
 * over it (its ACK or response came after the timeout or NAK that sent
 * the requester back, and in the same run), it must not be sent again:
 * sending goes on from the WQE after it.
 */
static void shca_req_skip_done(struct shca_qp *qp, const struct shca_wqe *w)
{
	struct shca_wreq *rq = &qp->wreq;

	if ((s32)(qp->sq.head - rq->next) <= 0)
		return;
	rq->next = qp->sq.head;
	rq->off = 0;
	rq->psn = shca_psn_add(w->lpsn, 1);
	if (rq->next == rq->resend_next)
		rq->resend = false;
}

/* The send queue counter up to which WQEs were sent (once at least). */
static u32 shca_req_sent_end(const struct shca_wreq *rq)
{
	return rq->resend ? rq->resend_next : rq->next;
}

static void shca_req_rewind(struct shca_qp *qp, u32 psn);

/*
 * An acknowledgment beyond the READ or atomic @w at the head, whose
 * answer did not (all) come: it was lost (an implied NAK). The oldest
 * unacknowledged PSN stays the first one missing, and the requester asks
 * again from there, once per gap as for a gap in READ responses.
 */
static void shca_req_implied_nak(struct shca_qp *qp, const struct shca_wqe *w)
{
	struct shca_wreq *rq = &qp->wreq;
	u32 missing = w->psn;

	if (w->opcode == IB_WR_RDMA_READ)
		missing = shca_psn_add(w->psn, rq->rd_off / shca_wire_mtu(qp));
	if (shca_psn_diff(missing, rq->una) > 0)
		rq->una = missing;
	if (rq->rd_gap_psn == missing)
		return;
	rq->rd_gap_psn = missing;
	shca_req_rewind(qp, missing);
}

/**
 * shca_req_complete_upto() - complete, in order, what is done
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 * @acked: a PSN the responder acknowledged
 * @acked_valid: @acked means something (else only what needs no ACK)
 *
 * Local operations and UC messages that were executed or sent, and
 * SENDs and WRITEs whose last PSN @acked covers. @acked past a READ or
 * atomic still waiting for its answer is an implied NAK.
 */
void shca_req_complete_upto(struct shca_qp *qp, u32 acked, bool acked_valid)
{
	struct shca_wreq *rq = &qp->wreq;
	u32 end = shca_req_sent_end(rq);
	struct shca_wqe *w;
	struct ib_wc wc __uninitialized;	/* shca_req_wc() */

	while (qp->sq.head != end) {
		w = shca_req_sq_wqe(qp, qp->sq.head);
		if (w->wire_done) {
			shca_req_wc(qp, w, &wc, w->wire_status);
		} else if (!acked_valid || shca_psn_diff(acked, w->lpsn) < 0) {
			break;
		} else if (!shca_req_is_rdatomic(w->opcode)) {
			shca_req_wc(qp, w, &wc, IB_WC_SUCCESS);
		} else {
			shca_req_implied_nak(qp, w);
			return;
		}
		shca_req_head_done(qp, w, &wc);
		shca_req_skip_done(qp, w);
		if (wc.status != IB_WC_SUCCESS)
			return;
	}
	if (acked_valid && shca_psn_diff(acked, rq->una) >= 0) {
		u32 una = shca_psn_add(acked, 1);

		/*
		 * An ACK past a READ or atomic not answered yet says the
		 * responder executed it, not that its responses arrived:
		 * those are still outstanding.
		 */
		if (qp->sq.head != end) {
			w = shca_req_sq_wqe(qp, qp->sq.head);
			if (!w->wire_done && shca_req_is_rdatomic(w->opcode) &&
			    shca_psn_diff(una, w->psn) > 0)
				una = shca_psn_add(w->psn,
						   w->opcode == IB_WR_RDMA_READ ?
						   rq->rd_off / shca_wire_mtu(qp) :
						   0);
		}
		if (shca_psn_diff(una, rq->una) > 0)
			rq->una = una;
	}
}

/* Where the send queue restarts to send PSN @psn again. */
static void shca_req_rewind(struct shca_qp *qp, u32 psn)
{
	struct shca_wreq *rq = &qp->wreq;
	u32 mtu = shca_wire_mtu(qp), idx;

	/* Packets before the high-water mark are sent again. */
	if (!rq->resend || shca_psn_diff(rq->psn, rq->resend_until) > 0) {
		rq->resend_until = rq->psn;
		/* A WQE partly sent (longer than the window) too. */
		rq->resend_next = rq->next + (rq->off ? 1 : 0);
	}
	rq->rd_out = 0;
	for (idx = qp->sq.head; idx != rq->resend_next; idx++) {
		struct shca_wqe *w = shca_req_sq_wqe(qp, idx);

		if (w->wire_done || shca_req_is_local(w->opcode))
			continue;
		if (shca_psn_diff(psn, w->lpsn) <= 0) {
			s32 k = max(shca_psn_diff(psn, w->psn), 0);

			rq->next = idx;
			rq->off = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
				  w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD ?
				  0 : (u64)k * mtu;
			rq->psn = shca_psn_add(w->psn, k);
			rq->resend = true;
			return;
		}
		if (shca_req_is_rdatomic(w->opcode))
			rq->rd_out++;
	}
	/* Nothing sent has that PSN: carry on where sending was. */
	rq->resend = rq->next != rq->resend_next;
}

/* Arm the retransmission timer, unless it runs. */
static void shca_req_arm(struct shca_qp *qp, unsigned long delay)
{
	if (!timer_pending(&qp->wtimer))
		mod_timer(&qp->wtimer, jiffies + delay);
}

/*
 * (Re)start the local ACK timer. A timeout of 0 is an infinite one (IBTA
 * C9-141): no timer, a lost packet is sent again only after a NAK.
 */
static void shca_req_ack_timer(struct shca_qp *qp, bool restart)
{
	if (!qp->timeout)
		return;
	if (restart)
		mod_timer(&qp->wtimer, jiffies + shca_ack_timeout(qp));
	else
		shca_req_arm(qp, shca_ack_timeout(qp));
}

static void shca_req_fail_head(struct shca_qp *qp, enum ib_wc_status status)
{
	struct shca_wqe *w;
	struct ib_wc wc __uninitialized;	/* shca_req_wc() */

	/*
	 * Sent, even if the requester is going back over it, or only in
	 * part: a WQE longer than the window stops in the middle.
	 */
	if (qp->sq.head == shca_req_sent_end(&qp->wreq) &&
	    !(qp->wreq.next == qp->sq.head && qp->wreq.off))
		return;
	w = shca_req_sq_wqe(qp, qp->sq.head);
	shca_req_wc(qp, w, &wc, status);
	shca_req_head_done(qp, w, &wc);
}

/* A NAK or RNR NAK for @psn; the WQEs before it are done. */
static void shca_req_nak_rcvd(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	u8 syn = pkt->aeth >> 24, code = syn & 0x1f;
	u32 before = shca_psn_add(pkt->psn, SHCA_PSN_MASK);
	struct shca_wreq *rq = &qp->wreq;
	enum ib_wc_status status;

	/*
	 * A NAK older than what was acknowledged since is stale (reordered
	 * on the way); one for the PSN the requester already went back to is
	 * a second answer to the same gap.
	 */
	if (shca_psn_diff(pkt->psn, rq->una) < 0 ||
	    (rq->resend && rq->nak_valid && pkt->psn == rq->nak_psn))
		return;
	/* It acknowledges what came before it: progress. */
	if (shca_psn_diff(pkt->psn, rq->una) > 0)
		shca_req_progress(qp);
	shca_req_complete_upto(qp, before, true);
	rq->nak_psn = pkt->psn;
	rq->nak_valid = true;
	if ((syn & SHCA_AETH_KIND_MASK) == SHCA_AETH_RNR_NAK) {
		shca_wstat_inc(qp->sdev, SHCA_WS_RNR_NAKS_RCVD);
		status = shca_req_retry(qp, true);
		if (status != IB_WC_SUCCESS) {
			shca_req_fail_head(qp, status);
			return;
		}
		shca_req_rewind(qp, pkt->psn);
		qp->wreq.rnr_until = jiffies + shca_rnr_delay(code) + 1;
		qp->wreq.rnr_wait = true;
		mod_timer(&qp->wtimer, qp->wreq.rnr_until);
		return;
	}
	switch (code) {
	case SHCA_NAK_PSN_SEQ:
		shca_wstat_inc(qp->sdev, SHCA_WS_SEQ_NAKS_RCVD);
		status = shca_req_retry(qp, false);
		if (status != IB_WC_SUCCESS) {
			shca_req_fail_head(qp, status);
			return;
		}
		shca_req_rewind(qp, pkt->psn);
		break;
	default:
		shca_wstat_inc(qp->sdev,
			       code == SHCA_NAK_REM_ACCESS ?
			       SHCA_WS_ACCESS_NAKS_RCVD :
			       code == SHCA_NAK_REM_OP ? SHCA_WS_OP_NAKS_RCVD :
			       SHCA_WS_INV_NAKS_RCVD);
		shca_req_fail_head(qp, shca_nak_status(code));
		break;
	}
}

/* READ response data for the READ at the head, in order. */
static void shca_req_read_resp(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wreq *rq = &qp->wreq;
	u32 flags = pkt->op->flags, mtu = shca_wire_mtu(qp), expect;
	struct shca_wqe *w;
	struct ib_wc wc __uninitialized;	/* shca_req_wc() */
	u64 len;

	/*
	 * A response says every request before the READ was executed. It
	 * may come after the requester went back over the READ (late): it
	 * still counts.
	 */
	if (qp->sq.head == shca_req_sent_end(rq))
		return;
	w = shca_req_sq_wqe(qp, qp->sq.head);
	if (w->opcode != IB_WR_RDMA_READ) {
		shca_req_complete_upto(qp, shca_psn_add(pkt->psn,
							SHCA_PSN_MASK), true);
		if (qp->sq.head == shca_req_sent_end(rq))
			return;
		w = shca_req_sq_wqe(qp, qp->sq.head);
		if (w->opcode != IB_WR_RDMA_READ)
			return;
	}
	expect = shca_psn_add(w->psn, rq->rd_off / mtu);
	if (pkt->psn != expect) {
		/* A gap: ask again from the first missing response. */
		if (shca_psn_diff(pkt->psn, expect) > 0 &&
		    rq->rd_gap_psn != expect) {
			rq->rd_gap_psn = expect;
			shca_req_rewind(qp, expect);
		}
		return;
	}
	len = shca_wqe_len(w);
	if (pkt->paylen > len - rq->rd_off ||
	    (!(flags & SHCA_OP_LAST) && pkt->paylen != mtu))
		return;
	if (pkt->paylen &&
	    shca_wqe_copy(qp, w, rq->rd_off, (void *)pkt->payload,
			  pkt->paylen, IB_ACCESS_LOCAL_WRITE,
			  SHCA_COPY_TO_MR)) {
		shca_req_fail_head(qp, IB_WC_LOC_PROT_ERR);
		return;
	}
	rq->rd_off += pkt->paylen;
	rq->una = shca_psn_add(pkt->psn, 1);
	qp->req.retries = 0;
	if (!(flags & SHCA_OP_LAST))
		return;
	if (rq->rd_off != len)
		return;
	shca_req_wc(qp, w, &wc, IB_WC_SUCCESS);
	wc.byte_len = len;
	shca_req_head_done(qp, w, &wc);
	shca_req_skip_done(qp, w);
}

static void shca_req_atomic_resp(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wreq *rq = &qp->wreq;
	struct shca_wqe *w;
	struct ib_wc wc __uninitialized;	/* shca_req_wc() */

	shca_req_complete_upto(qp, shca_psn_add(pkt->psn, SHCA_PSN_MASK),
			       true);
	if (qp->sq.head == shca_req_sent_end(rq))
		return;
	w = shca_req_sq_wqe(qp, qp->sq.head);
	if ((w->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	     w->opcode != IB_WR_ATOMIC_FETCH_AND_ADD) || w->psn != pkt->psn)
		return;
	shca_req_wc(qp, w, &wc, IB_WC_SUCCESS);
	if (shca_wqe_copy(qp, w, 0, (void *)&pkt->atomic_orig,
			  sizeof(u64), IB_ACCESS_LOCAL_WRITE,
			  SHCA_COPY_TO_MR))
		wc.status = IB_WC_LOC_PROT_ERR;
	else
		wc.byte_len = sizeof(u64);
	rq->una = shca_psn_add(pkt->psn, 1);
	shca_req_head_done(qp, w, &wc);
	shca_req_skip_done(qp, w);
}

/*
 * The requester runs: the QP is in RTS. wreq belongs to the holder of
 * SHCA_QP_EXEC_BUSY, so modify_qp does not write it when the QP enters
 * RTS (the work item may be using it at that moment); the holder starts
 * it here, at sq_psn, before it reads it.
 */
static bool shca_req_rts(struct shca_qp *qp)
{
	struct shca_wreq *rq = &qp->wreq;

	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTS)
		return false;
	if (test_and_clear_bit(SHCA_QP_EXEC_WREQ_START, &qp->exec_flags)) {
		rq->psn = qp->sq_psn;
		rq->una = qp->sq_psn;
		rq->next = qp->sq.head;
		/* No READ response gap asked about yet: not a PSN. */
		rq->rd_gap_psn = SHCA_PSN_MASK + 1;
	}
	return true;
}

/**
 * shca_req_response() - a response packet for the requester's QP
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 * @skb: the packet
 * @pkt: the packet, decoded: an ACK, NAK, READ response or atomic ACK
 *
 * Only PSNs sent mean anything; the completer turns the rest into
 * completions, retries and the error state.
 */
void shca_req_response(struct shca_qp *qp, struct sk_buff *skb,
		       const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	u8 syn = pkt->aeth >> 24;
	unsigned long irqf;
	bool rts;

	spin_lock_irqsave(&qp->lock, irqf);
	rts = shca_req_rts(qp);
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (qp->ibqp.qp_type != IB_QPT_RC || !rts) {
		shca_wire_drop(qp);
		return;
	}
	/* Only PSNs sent mean anything. */
	if (shca_psn_diff(pkt->psn, shca_req_sent_psn(&qp->wreq)) >= 0) {
		shca_wire_drop(qp);
		return;
	}
	shca_wire_rx_count(qp, skb);
	if ((flags & SHCA_OP_AETH) && (syn & SHCA_AETH_KIND_MASK) != SHCA_AETH_ACK &&
	    pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE) {
		shca_req_nak_rcvd(qp, pkt);
	} else if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE) {
		shca_req_progress(qp);
		shca_req_complete_upto(qp, pkt->psn, true);
	} else if (pkt->opcode == IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE) {
		shca_req_atomic_resp(qp, pkt);
	} else {
		shca_req_read_resp(qp, pkt);
	}
	/*
	 * Progress restarts the timer, nothing outstanding stops it; an RNR
	 * wait keeps its own.
	 */
	if (qp->wreq.rnr_wait)
		return;
	if (!shca_req_outstanding(&qp->wreq))
		timer_delete(&qp->wtimer);
	else
		shca_req_ack_timer(qp, true);
}

/*
 * Send the next packet of @w, the WQE at @wreq.next; advance the cursor.
 * Return false if it could not leave (no memory: try again later).
 */
static bool shca_req_send_pkt(struct shca_qp *qp, struct shca_wqe *w)
{
	struct shca_wreq *rq = &qp->wreq;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	u32 mtu = shca_wire_mtu(qp), paylen = 0;
	u64 len = shca_wqe_len(w);
	struct shca_pkt pkt = {
		.qpn = qp->dest_qpn,
		.psn = rq->psn,
	};
	bool first, last;
	struct sk_buff *skb;
	u8 *payload, base;
	u32 npsn = 1;

	if (rq->off == 0 && !rq->resend) {
		w->psn = rq->psn;
		if (w->opcode == IB_WR_RDMA_READ)
			w->lpsn = shca_psn_add(w->psn,
					       (len ? DIV_ROUND_UP_ULL(len, mtu) : 1) - 1);
		else if (shca_req_is_rdatomic(w->opcode))
			w->lpsn = w->psn;
		else
			w->lpsn = shca_psn_add(w->psn,
					       (len ? DIV_ROUND_UP_ULL(len, mtu) : 1) - 1);
	}
	first = rq->off == 0;
	base = rc ? IB_OPCODE_RC : IB_OPCODE_UC;

	switch (w->opcode) {
	case IB_WR_RDMA_READ:
		pkt.opcode = IB_OPCODE_RC_RDMA_READ_REQUEST;
		pkt.va = w->rdma.remote_addr + rq->off;
		pkt.rkey = w->rdma.rkey;
		pkt.dma_len = len - rq->off;
		npsn = pkt.dma_len ? DIV_ROUND_UP(pkt.dma_len, mtu) : 1;
		pkt.ackreq = true;
		last = true;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		pkt.opcode = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			     IB_OPCODE_RC_COMPARE_SWAP : IB_OPCODE_RC_FETCH_ADD;
		pkt.va = w->atomic.remote_addr;
		pkt.rkey = w->atomic.rkey;
		pkt.swap_add = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			       w->atomic.swap : w->atomic.compare_add;
		pkt.compare = w->atomic.compare_add;
		pkt.ackreq = true;
		last = true;
		break;
	default: {
		bool write = w->opcode == IB_WR_RDMA_WRITE ||
			     w->opcode == IB_WR_RDMA_WRITE_WITH_IMM;
		bool imm = w->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
			   w->opcode == IB_WR_SEND_WITH_IMM;
		bool inv = w->opcode == IB_WR_SEND_WITH_INV;

		paylen = min_t(u64, len - rq->off, mtu);
		last = rq->off + paylen >= len;
		if (write && first && last)
			pkt.opcode = imm ? IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
					   IB_OPCODE_RDMA_WRITE_ONLY;
		else if (write && first)
			pkt.opcode = IB_OPCODE_RDMA_WRITE_FIRST;
		else if (write && last)
			pkt.opcode = imm ? IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
					   IB_OPCODE_RDMA_WRITE_LAST;
		else if (write)
			pkt.opcode = IB_OPCODE_RDMA_WRITE_MIDDLE;
		else if (first && last)
			pkt.opcode = imm ? IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
				     inv ? IB_OPCODE_SEND_ONLY_WITH_INVALIDATE :
					   IB_OPCODE_SEND_ONLY;
		else if (first)
			pkt.opcode = IB_OPCODE_SEND_FIRST;
		else if (last)
			pkt.opcode = imm ? IB_OPCODE_SEND_LAST_WITH_IMMEDIATE :
				     inv ? IB_OPCODE_SEND_LAST_WITH_INVALIDATE :
					   IB_OPCODE_SEND_LAST;
		else
			pkt.opcode = IB_OPCODE_SEND_MIDDLE;
		pkt.opcode += base;
		if (write && first) {
			pkt.va = w->rdma.remote_addr;
			pkt.rkey = w->rdma.rkey;
			pkt.dma_len = len;
		}
		pkt.imm = w->ex.imm_data;
		pkt.ieth = w->ex.invalidate_rkey;
		pkt.se = last && (w->send_flags & IB_SEND_SOLICITED);
		/* The last packet, and one in SHCA_WIRE_ACKREQ. */
		pkt.ackreq = rc && (last || !((rq->psn + 1) %
					      SHCA_WIRE_ACKREQ));
		break;
	}
	}
	pkt.op = shca_op_get(pkt.opcode);
	if (WARN_ON_ONCE(!pkt.op))
		return false;
	skb = shca_net_pkt(qp->sdev, &qp->path, &pkt, paylen, &payload);
	if (!skb)
		return false;
	if (paylen && shca_wqe_copy(qp, w, rq->off, payload, paylen, 0,
				    SHCA_COPY_FROM_MR)) {
		kfree_skb(skb);
		/* A local protection error: the WQE completes with it. */
		w->wire_done = true;
		w->wire_status = IB_WC_LOC_PROT_ERR;
		rq->next++;
		rq->off = 0;
		rq->resend = false;
		return true;
	}
	if (rq->resend)
		shca_wstat_inc(qp->sdev, SHCA_WS_RETRANSMITS);
	shca_net_send(qp->sdev, &qp->path, skb);

	rq->psn = shca_psn_add(rq->psn, npsn);
	if (last) {
		if (!rc) {
			w->wire_done = true;
			w->wire_status = IB_WC_SUCCESS;
		} else if (shca_req_is_rdatomic(w->opcode)) {
			rq->rd_out++;
		}
		rq->next++;
		rq->off = 0;
		/* A READ resent from the middle is whole again. */
		if (w->opcode == IB_WR_RDMA_READ)
			rq->off = 0;
	} else {
		rq->off += paylen;
	}
	/* Past the point the go-back started from, sending is new again. */
	if (rq->resend && (shca_psn_diff(rq->psn, rq->resend_until) >= 0 ||
			   rq->next == rq->resend_next))
		rq->resend = false;
	if (rc)
		shca_req_ack_timer(qp, false);
	return true;
}

/**
 * shca_req_send() - send what the window allows
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 *
 * Return: true if the budget ran out with packets left to send.
 */
bool shca_req_send(struct shca_qp *qp)
{
	struct shca_wreq *rq = &qp->wreq;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	int budget = SHCA_WIRE_SEND_BUDGET;
	unsigned long flags;
	struct shca_wqe *w;
	struct ib_wc wc __uninitialized;	/* its status only */
	bool ready;

	while (budget--) {
		spin_lock_irqsave(&qp->lock, flags);
		/* A device that is going away sends nothing more. */
		if (unlikely(READ_ONCE(qp->sdev->fatal)) &&
		    qp->state != IB_QPS_RESET)
			shca_qp_set_error(qp);
		ready = shca_req_rts(qp) && rq->next != qp->sq.tail;
		if (ready && rq->next == qp->sq.head)
			qp->sq_psn = rq->psn;
		spin_unlock_irqrestore(&qp->lock, flags);
		if (!ready || rq->rnr_wait)
			return false;
		w = shca_req_sq_wqe(qp, rq->next);
		/* Going back over what already completed its part. */
		if (rq->resend && w->wire_done) {
			rq->next++;
			continue;
		}
		if (rc && shca_psn_diff(rq->psn, rq->una) >= SHCA_WIRE_WINDOW)
			return false;
		if (shca_req_is_local(w->opcode)) {
			/* Executed in turn, completed in order. */
			wc.status = IB_WC_SUCCESS;
			shca_req_local(qp, w, &wc);
			w->wire_done = true;
			w->wire_status = wc.status;
			rq->next++;
			continue;
		}
		if (rq->off == 0 && !rq->resend) {
			w->wire_status = shca_req_refused(qp, w);
			w->wire_done = w->wire_status != IB_WC_SUCCESS;
			if (w->wire_done) {
				rq->next++;
				continue;
			}
		}
		if (rq->off == 0 && shca_req_is_rdatomic(w->opcode) &&
		    rq->rd_out >= qp->max_rd_atomic)
			return false;
		if (rq->off == 0 && (w->send_flags & IB_SEND_FENCE) &&
		    rq->rd_out)
			return false;
		if (!shca_req_send_pkt(qp, w)) {
			shca_qp_kick(qp);
			return false;
		}
		shca_req_complete_upto(qp, 0, false);
	}
	return true;
}

/**
 * shca_req_timeout() - the QP's timer ran out
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 *
 * An ACK timeout (go back to the first PSN not acknowledged, or give up
 * after retry_cnt), or the end of an RNR wait.
 */
void shca_req_timeout(struct shca_qp *qp)
{
	struct shca_wreq *rq = &qp->wreq;
	enum ib_wc_status status;

	if (rq->rnr_wait) {
		if (time_before(jiffies, rq->rnr_until))
			return;
		rq->rnr_wait = false;
		return;
	}
	/*
	 * Packets sent and not acknowledged, whether or not a WQE was sent
	 * whole (one larger than the window is not).
	 */
	if (!shca_req_outstanding(rq) || qp->ibqp.qp_type != IB_QPT_RC)
		return;
	/* A timeout of 0 arms no timer (a stale expiry changes nothing). */
	if (!qp->timeout)
		return;
	shca_wstat_inc(qp->sdev, SHCA_WS_ACK_TIMEOUTS);
	status = shca_req_retry(qp, false);
	if (status != IB_WC_SUCCESS) {
		shca_req_fail_head(qp, status);
		return;
	}
	shca_req_rewind(qp, rq->una);
	shca_req_ack_timer(qp, true);
}

/**
 * shca_req_timer() - a QP's retransmission timer ran out
 * @t: &shca_qp.wtimer
 *
 * Context: timer (softirq).
 */
void shca_req_timer(struct timer_list *t)
{
	struct shca_qp *qp = timer_container_of(qp, t, wtimer);

	set_bit(SHCA_QP_EXEC_TIMEOUT, &qp->exec_flags);
	shca_qp_kick_now(qp);
}

/**
 * shca_req_sq_psn() - the send PSN query_qp reports
 * @qp: the QP, its lock held
 *
 * On the wire the requester keeps its PSN in &shca_qp.wreq while WQEs
 * are in flight (shca_qp.sq_psn follows it only when the send queue is
 * idle): the PSN after the last request packet sent, as rdma_rxe and HCAs
 * report it, or shca_qp.sq_psn before the requester started.
 *
 * Return: the send PSN.
 */
u32 shca_req_sq_psn(const struct shca_qp *qp)
{
	const struct shca_wreq *rq = &qp->wreq;

	lockdep_assert_held(&qp->lock);
	/* Only connected QPs are ever on the wire (shca_wire_start()). */
	if (!READ_ONCE(qp->wire) ||
	    (qp->state != IB_QPS_RTS && qp->state != IB_QPS_SQD &&
	     qp->state != IB_QPS_SQE) ||
	    test_bit(SHCA_QP_EXEC_WREQ_START, &qp->exec_flags))
		return qp->sq_psn;
	return READ_ONCE(rq->resend) ? READ_ONCE(rq->resend_until) :
				       READ_ONCE(rq->psn);
}

/**
 * shca_req_fill_res() - the requester's state, for "rdma res show qp -dd"
 * @msg: the netlink message
 * @qp: a connected QP on the wire
 *
 * A snapshot taken without the executor's bit (its owner may be moving
 * it): what a stuck requester waits for, not a consistent state.
 *
 * Return: 0, or -EMSGSIZE.
 */
int shca_req_fill_res(struct sk_buff *msg, struct shca_qp *qp)
{
	/* Racing with the executor, on purpose: see above. */
	const struct shca_wreq rq = data_race(qp->wreq);
	/* The same. */
	u32 retries = data_race(qp->req.retries);
	u32 head = READ_ONCE(qp->sq.head);

	if (rdma_nl_put_driver_u32(msg, "req-una", rq.una) ||
	    rdma_nl_put_driver_u32(msg, "req-psn", rq.psn) ||
	    rdma_nl_put_driver_u32(msg, "req-sent-wqes", rq.next - head) ||
	    rdma_nl_put_driver_u32(msg, "req-resend", rq.resend) ||
	    rdma_nl_put_driver_u32(msg, "req-resend-until", rq.resend_until) ||
	    rdma_nl_put_driver_u32(msg, "req-rd-out", rq.rd_out) ||
	    rdma_nl_put_driver_u32(msg, "req-retries", retries) ||
	    rdma_nl_put_driver_u32(msg, "req-rnr-wait", rq.rnr_wait) ||
	    rdma_nl_put_driver_u32(msg, "req-timer", timer_pending(&qp->wtimer)) ||
	    rdma_nl_put_driver_u32_hex(msg, "exec-flags",
				       READ_ONCE(qp->exec_flags)) ||
	    rdma_nl_put_driver_u32(msg, "rxq", skb_queue_len_lockless(&qp->rxq)))
		return -EMSGSIZE;
	return 0;
}
