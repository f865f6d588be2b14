// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Execution, and the memory link
 *
 * The execution engine runs the send queue of each QP: the requester and
 * completer of every QP whose peer is in memory (a QP of any softhca
 * device of the host), and the memory link that carries its requests.
 *
 * Each QP has one work item on an unbound workqueue, and post_send
 * executes small requests itself before it returns (shca_qp_post_exec():
 * a message then costs no wake-up and no move to another CPU). One of
 * them at a time executes the send queue (SHCA_QP_EXEC_BUSY), in order,
 * one WQE at a time: local operations (REG_MR, REG_MR_INTEGRITY,
 * LOCAL_INV, BIND_MW) through the MR engine; remote operations through
 * the link.
 *
 * The memory link hands the peer's responder (shca_resp.c, the same
 * responder the UDP link feeds packet by packet) the whole message as
 * one ONLY packet whose data stays where it is (&struct shca_mreq): no
 * segmentation, no per-packet acknowledgment, and the bytes move once,
 * directly between the two QPs' memory, with the copy functions below
 * (shca_mlink_*()), which the responder calls. The responder leaves its
 * answer in the message, and the completer here takes it as the UDP
 * link's completer takes an ACK or a NAK (shca_exec_answer()).
 *
 * Errors follow the IBTA classes a hardware RC requester reports: local
 * key/range/rights problems complete with IB_WC_LOC_PROT_ERR before
 * anything reaches the peer; each refusal of the responder is the
 * completion status its NAK means (shca_nak_status()). A missing or
 * unconnected peer, a port that is down, a request nobody took (another
 * connection's PSN) is retried retry_cnt times, one local ACK timeout
 * apart (IB_WC_RETRY_EXC_ERR); an RNR NAK rnr_retry times (7: for ever;
 * IB_WC_RNR_RETRY_EXC_ERR), each time after the timer the responder
 * asked for; the two kinds of retries are counted apart. After an error
 * completion the QP is in the error state and its work item flushes
 * every outstanding WQE with IB_WC_WR_FLUSH_ERR.
 *
 * Connections are checked as a wire would check them: the peer must be
 * connected back to this QP, live in the same RDMA network namespace,
 * own the destination GID, and expect the request's PSN (each request
 * takes as many PSNs as it has packets at the path MTU). A QP that gets
 * the number of a destroyed QP (numbers are also held back for a while,
 * see shca_qp.c) cannot deliver into the connection that QP had.
 *
 * A run of the work item executes at most SHCA_EXEC_BUDGET WQEs or
 * SHCA_EXEC_BYTES bytes, and bytes move in SHCA_MLINK_CHUNK pieces with a
 * reschedule point between them, so one large request neither hogs a
 * CPU nor keeps other QPs' work items waiting.
 */

#include <linux/jiffies.h>
#include <linux/workqueue.h>
#include <rdma/ib_addr.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"
#include "shca_wire.h"

/* WQEs and bytes one run of a work item executes before yielding. */
#define SHCA_EXEC_BUDGET	64
#define SHCA_EXEC_BYTES		SZ_8M
/*
 * What post_send executes in the poster's context before handing the
 * rest to the work item: WQEs, and bytes (each WQE whole; less than a
 * chunk, so nothing there reschedules).
 */
#define SHCA_POST_EXEC_BUDGET	16
#define SHCA_POST_EXEC_BYTES	SZ_64K
static_assert(SHCA_POST_EXEC_BYTES < SHCA_MLINK_CHUNK);

enum shca_exec_res {
	SHCA_EXEC_DONE,		/* complete the WQE with wc->status */
	SHCA_EXEC_RNR,		/* the peer has no receive WQE: retry */
	SHCA_EXEC_RETRY,	/* no peer to talk to: transport retry */
	SHCA_EXEC_DEFER,	/* leave it to the work item (see below) */
};

/*
 * A kernel QP may post where it cannot sleep (a ULP's completion
 * handler). Memory of a user QP's peer may be paged in on demand, and a
 * fault sleeps: a request a kernel QP posts to a user peer is executed by
 * the work item, never from post_send. Everything else can sleep there.
 */
static bool shca_exec_defer(const struct shca_qp *qp,
			    const struct shca_qp *peer)
{
	return qp->req.in_post && !qp->user && (!peer || peer->user);
}

/* Drop the spans shca_hold_local() took for the first @n SGEs of @w. */
static void shca_unhold_local(struct shca_qp *qp, u32 n)
{
	u32 i;

	for (i = 0; i < n; i++)
		if (qp->held[i].mr)
			shca_mr_unhold(&qp->held[i]);
}

/*
 * Check every local SGE before anything reaches the peer, and keep what
 * the check found (qp->held) for the copies of this execution.
 */
static int shca_hold_local(struct shca_qp *qp, const struct shca_wqe *w,
			   int access)
{
	struct shca_mem_target t = { .pd = qp->ibqp.pd, .access = access };
	struct shca_span *held = qp->held;
	u32 i;
	int err;

	for (i = 0; i < w->num_sge; i++) {
		held[i].mr = NULL;
		if (!w->sge[i].length)
			continue;
		t.key = w->sge[i].lkey;
		t.iova = w->sge[i].addr;
		err = shca_mr_hold(qp->sdev, &t, w->sge[i].length, &held[i]);
		if (err) {
			shca_unhold_local(qp, i);
			return err;
		}
	}
	return 0;
}

/*
 * The completer: the responder's answer to @w, as the UDP link's
 * completer takes an ACK or NAK (the same NAK statuses, the same RNR
 * timer, retries for what nobody answered).
 */
static enum shca_exec_res shca_exec_answer(struct shca_qp *qp,
					   const struct shca_wqe *w,
					   const struct shca_mreq *m,
					   struct ib_wc *wc)
{
	u8 kind = m->syndrome & SHCA_AETH_KIND_MASK;

	if (m->local_err) {
		wc->status = IB_WC_LOC_PROT_ERR;
		return SHCA_EXEC_DONE;
	}
	if (!m->answered)
		return SHCA_EXEC_RETRY;
	if (kind == SHCA_AETH_RNR_NAK) {
		qp->req.rnr_timer = m->syndrome & 0x1f;
		return SHCA_EXEC_RNR;
	}
	if (kind == SHCA_AETH_NAK) {
		wc->status = shca_nak_status(m->syndrome & 0x1f);
		return SHCA_EXEC_DONE;
	}
	qp->req.accepted = true;
	switch (w->opcode) {
	case IB_WR_RDMA_READ:
		wc->byte_len = shca_wqe_len(w);
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (shca_mr_copy_held_buf(&qp->held[0], 0, (void *)&m->orig,
					  sizeof(m->orig), SHCA_COPY_TO_MR))
			wc->status = IB_WC_LOC_PROT_ERR;
		else
			wc->byte_len = sizeof(m->orig);
		break;
	}
	return SHCA_EXEC_DONE;
}

/*
 * Find the connected peer: same RDMA network namespace, and its device
 * owns the destination GID (the GID check is cached per peer device).
 */
static struct shca_qp *shca_exec_peer(struct shca_qp *qp)
{
	struct shca_qp *peer;

	peer = shca_qp_get(qp->req.dest_qpn);
	if (!peer)
		return NULL;
	if (!shca_dev_same_net(peer->sdev, qp->sdev))
		goto not_ours;
	if (peer->sdev != READ_ONCE(qp->peer_sdev)) {
		if (!shca_dev_owns_gid(peer->sdev, &qp->req.dgid))
			goto not_ours;
		WRITE_ONCE(qp->peer_sdev, peer->sdev);
	}
	return peer;

not_ours:
	shca_qp_put(peer);
	return NULL;
}

/*
 * An RC or UC request through the memory link: the whole message to the
 * peer's responder, which moves its bytes once, MR to MR, and answers.
 */
static enum shca_exec_res shca_exec_msg(struct shca_qp *qp,
					struct shca_qp *peer,
					struct shca_wqe *w, struct ib_wc *wc)
{
	/* Written whole by shca_mlink_msg(): not zeroed per message. */
	struct shca_mreq m __uninitialized;
	struct shca_pkt *pkt = &qp->req.mpkt;

	shca_mlink_msg(qp, w, pkt, &m);
	shca_resp_mem_request(peer, pkt);
	shca_mlink_end(&m);
	return shca_exec_answer(qp, w, &m, wc);
}

/*
 * The UD QP a datagram goes to: its number, a device of this host in the
 * same network namespace that owns the destination GID, a UD QP; for QP
 * number 1, the GSI QP of the device that owns the destination GID.
 */
static struct shca_qp *shca_ud_peer(struct shca_qp *qp,
				    const struct shca_wqe *w)
{
	struct shca_qp *peer;

	if (w->ud.remote_qpn == 1)
		return shca_gsi_get(qp->sdev, &w->ud.av.dgid);
	peer = shca_qp_get(w->ud.remote_qpn);
	if (!peer)
		return NULL;
	if (peer->ibqp.qp_type != IB_QPT_UD ||
	    !shca_dev_same_net(peer->sdev, qp->sdev) ||
	    !shca_dev_owns_gid(peer->sdev, &w->ud.av.dgid)) {
		shca_qp_put(peer);
		return NULL;
	}
	return peer;
}

/*
 * Hand the datagram @w of @qp to @peer's responder through the memory
 * link (a receive takes it, or it is dropped and counted there), with
 * the GRH a RoCE v2 HCA writes for the AV it was sent with.
 */
static void shca_exec_datagram(struct shca_qp *qp, const struct shca_wqe *w,
			       struct shca_qp *peer, u64 len)
{
	struct shca_mreq m __uninitialized;
	struct shca_pkt *pkt = &qp->req.mpkt;
	u8 grh[SHCA_GRH_BYTES];

	if (!shca_port_up(peer->sdev)) {
		atomic_long_inc(&peer->sdev->rx_dropped);
		return;
	}
	shca_mlink_msg(qp, w, pkt, &m);
	shca_ud_grh(grh, &w->ud.av, len, w->opcode == IB_WR_SEND_WITH_IMM);
	shca_resp_datagram(peer, pkt, grh, qp->resp_wqe);
}

/*
 * A datagram to a multicast group (QP number 0xffffff, a multicast GID)
 * reaches every UD QP attached to the group on the devices of the
 * sender's namespace, the sender's own QP included (multicast loopback).
 */
static void shca_ud_multicast(struct shca_qp *qp, struct shca_wqe *w, u64 len)
{
	struct shca_qp *peers[SHCA_MAX_MCAST_QP_ATTACH];
	int i, n;

	n = shca_mcast_get(qp->sdev, &w->ud.av.dgid, peers, ARRAY_SIZE(peers));
	for (i = 0; i < n; i++) {
		shca_exec_datagram(qp, w, peers[i], len);
		shca_qp_put(peers[i]);
	}
}

/*
 * A UD SEND: the datagram reaches the UD QP of this host it is addressed
 * to (or the QPs attached to its multicast group), or is dropped (counted
 * at the receiving device when there is one); either way the sender's
 * request completes successfully, as UD is unreliable. A group's members
 * are not known in advance: a kernel QP's multicast leaves post_send.
 */
static enum shca_exec_res shca_exec_ud(struct shca_qp *qp,
				       struct shca_wqe *w, struct ib_wc *wc)
{
	u64 len = shca_wqe_len(w);
	struct shca_qp *peer;

	if (len > shca_port_mtu(qp->sdev)) {
		wc->status = IB_WC_LOC_LEN_ERR;
		return SHCA_EXEC_DONE;
	}
	if (!shca_port_up(qp->sdev))
		return SHCA_EXEC_DONE;		/* lost on the wire */
	if (w->ud.remote_qpn == SHCA_MCAST_QPN &&
	    rdma_is_multicast_addr((struct in6_addr *)w->ud.av.dgid.raw)) {
		if (shca_exec_defer(qp, NULL))
			return SHCA_EXEC_DEFER;
		shca_ud_multicast(qp, w, len);
		return SHCA_EXEC_DONE;
	}
	if (shca_force_wire || !shca_net_gid_local(qp->sdev, &w->ud.av.dgid)) {
		/* Kernel posters may hold locks with interrupts off. */
		if (qp->req.in_post && !qp->user)
			return SHCA_EXEC_DEFER;
		if (shca_wire_ud_send(qp, w, len) == -EFAULT)
			wc->status = IB_WC_LOC_PROT_ERR;
		return SHCA_EXEC_DONE;
	}
	peer = shca_ud_peer(qp, w);
	if (!peer)
		return SHCA_EXEC_DONE;
	if (shca_exec_defer(qp, peer)) {
		shca_qp_put(peer);
		return SHCA_EXEC_DEFER;
	}
	shca_exec_datagram(qp, w, peer, len);
	shca_qp_put(peer);
	return SHCA_EXEC_DONE;
}

/* Execute @w, whose local SGEs are held, towards its destination. */
static enum shca_exec_res shca_exec_held(struct shca_qp *qp,
					 struct shca_wqe *w, struct ib_wc *wc)
{
	enum shca_exec_res res;
	struct shca_qp *peer;

	if (shca_qp_datagram(qp))
		return shca_exec_ud(qp, w, wc);

	if (!shca_port_up(qp->sdev))
		return SHCA_EXEC_RETRY;
	peer = shca_exec_peer(qp);
	if (!peer)
		return SHCA_EXEC_RETRY;
	if (!shca_port_up(peer->sdev)) {
		res = SHCA_EXEC_RETRY;
		goto out;
	}
	if (shca_exec_defer(qp, peer)) {
		res = SHCA_EXEC_DEFER;
		goto out;
	}

	res = shca_exec_msg(qp, peer, w, wc);
out:
	shca_qp_put(peer);
	return res;
}

static enum shca_exec_res shca_exec_conn(struct shca_qp *qp,
					 struct shca_wqe *w, struct ib_wc *wc)
{
	enum shca_exec_res res;
	int access;

	if (shca_req_is_local(w->opcode)) {
		shca_req_local(qp, w, wc);
		return SHCA_EXEC_DONE;
	}
	wc->status = shca_req_refused(qp, w);
	if (wc->status != IB_WC_SUCCESS)
		return SHCA_EXEC_DONE;
	/* A READ's or an atomic's own SGEs are written. */
	access = shca_req_is_rdatomic(w->opcode) ? IB_ACCESS_LOCAL_WRITE : 0;
	if (shca_hold_local(qp, w, access)) {
		wc->status = IB_WC_LOC_PROT_ERR;
		return SHCA_EXEC_DONE;
	}
	res = shca_exec_held(qp, w, wc);
	shca_unhold_local(qp, w->num_sge);
	return res;
}

/*
 * Execute @w. UC has no acknowledgements: a message that finds no peer,
 * no receive WQE or a refusal at the responder is lost and the request
 * completes successfully, and no error of the responder comes back.
 */
static enum shca_exec_res shca_exec_wqe(struct shca_qp *qp,
					struct shca_wqe *w, struct ib_wc *wc)
{
	enum shca_exec_res res = shca_exec_conn(qp, w, wc);

	if (qp->ibqp.qp_type != IB_QPT_UC || res == SHCA_EXEC_DEFER)
		return res;
	switch (wc->status) {
	case IB_WC_REM_INV_REQ_ERR:
	case IB_WC_REM_ACCESS_ERR:
	case IB_WC_REM_OP_ERR:
	case IB_WC_REM_ABORT_ERR:
		wc->status = IB_WC_SUCCESS;
		break;
	default:
		break;
	}
	return SHCA_EXEC_DONE;
}

/*
 * The WQE at the head could not be delivered. Schedule a retry and
 * return true, or set the exhausted-retries status and return false.
 * RNR NAKs and transport retries have their own counters; an RNR wait
 * is the timer the responder asked for (its min_rnr_timer).
 */
static bool shca_exec_retry(struct shca_qp *qp, enum shca_exec_res res,
			    struct ib_wc *wc)
{
	enum ib_wc_status status = IB_WC_SUCCESS;
	unsigned long delay;

	if (res == SHCA_EXEC_RNR) {
		status = shca_req_retry(qp, true);
		delay = shca_rnr_delay(qp->req.rnr_timer);
	} else if (qp->timeout) {
		status = shca_req_retry(qp, false);
		delay = shca_ack_timeout(qp);
	} else {
		/* A timeout of 0 means an infinite local ACK timeout. */
		delay = msecs_to_jiffies(100);
	}
	if (status != IB_WC_SUCCESS) {
		wc->status = status;
		return false;
	}
	WRITE_ONCE(qp->req.waiting, true);
	/* Replaces a pending kick: the delay is what the QP waits. */
	mod_delayed_work(shca_wq, &qp->work, max(delay, 1UL));
	return true;
}

/* Complete every outstanding WQE with IB_WC_WR_FLUSH_ERR. */
static void shca_qp_flush(struct shca_qp *qp)
{
	struct shca_wqe *w;
	unsigned long flags;
	struct ib_wc wc __uninitialized;
	bool send;

	/* A receive a SEND on the wire began filling goes first. */
	shca_resp_flush_held(qp);
	for (;;) {
		spin_lock_irqsave(&qp->lock, flags);
		/* Send queue first, then the receive queue (and its ring). */
		send = !shca_queue_empty(&qp->sq);
		w = qp->state != IB_QPS_ERR ? NULL :
		    send ? shca_queue_head(&qp->sq) : shca_rq_flush_head(qp);
		if (!w) {
			spin_unlock_irqrestore(&qp->lock, flags);
			shca_qp_srq_check(qp, false, false);
			return;
		}
		shca_wc_init(&wc, w->wr_id, IB_WC_WR_FLUSH_ERR,
			     send ? shca_wc_opcode(w->opcode) : IB_WC_RECV,
			     &qp->ibqp);
		if (send)
			qp->sq.head++;
		else
			shca_rq_flushed(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		shca_cq_push(to_shca_cq(send ? qp->ibqp.send_cq :
					       qp->ibqp.recv_cq), &wc, false, false);
	}
}

/*
 * Snapshot what the requester needs of the connection for @w, under the
 * QP lock that modify_qp writes it under.
 */
static void shca_req_start(struct shca_qp *qp, const struct shca_wqe *w)
{
	u32 mtu = ib_mtu_enum_to_int(qp->path_mtu);
	u64 len = shca_wqe_len(w);

	lockdep_assert_held(&qp->lock);
	qp->req.dest_qpn = qp->dest_qpn;
	qp->req.dgid = qp->dgid;
	qp->req.psn = qp->sq_psn;
	qp->req.accepted = false;
	/* Atomics are one packet each way; the rest one per MTU of data. */
	if (w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD || !len)
		qp->req.npsn = 1;
	else
		qp->req.npsn = DIV_ROUND_UP_ULL(len, mtu) & SHCA_PSN_MASK;
}

/*
 * Execute the send queue from its head: at most SHCA_EXEC_BUDGET WQEs and
 * about SHCA_EXEC_BYTES bytes from the work item, SHCA_POST_EXEC_BUDGET
 * WQEs and SHCA_POST_EXEC_BYTES bytes from post_send (@in_post), where a
 * larger WQE and the flush of the error state are left to the work item.
 * The caller holds SHCA_QP_EXEC_BUSY.
 *
 * Return: true if it stopped with work left that the work item must do.
 */
static bool shca_sq_run(struct shca_qp *qp, bool in_post)
{
	int budget = in_post ? SHCA_POST_EXEC_BUDGET : SHCA_EXEC_BUDGET;
	enum shca_exec_res res;
	unsigned long flags;
	enum ib_qp_state state;
	struct shca_wqe *w;
	/* Written whole by shca_req_wc() before it is read. */
	struct ib_wc wc __uninitialized;
	u64 bytes = 0, len;

	qp->req.in_post = in_post;
	for (; budget; budget--) {
		if (qp->req.started) {
			/* Started where it was queued (shca_qp_post_send()). */
			qp->req.started = false;
			state = IB_QPS_RTS;
			w = shca_queue_head(&qp->sq);
			len = shca_wqe_len(w);
			goto run;
		}
		spin_lock_irqsave(&qp->lock, flags);
		/* A device that is going away executes nothing more. */
		if (unlikely(READ_ONCE(qp->sdev->fatal)) &&
		    qp->state != IB_QPS_RESET)
			shca_qp_set_error(qp);
		state = qp->state;
		w = state == IB_QPS_RTS ? shca_sq_head(qp) : NULL;
		len = w ? shca_wqe_len(w) : 0;
		if (w && in_post && len > SHCA_POST_EXEC_BYTES - bytes) {
			spin_unlock_irqrestore(&qp->lock, flags);
			return true;
		}
		if (w)
			shca_req_start(qp, w);
		spin_unlock_irqrestore(&qp->lock, flags);
		if (state == IB_QPS_ERR) {
			if (in_post)
				return true;
			shca_qp_flush(qp);
			return false;
		}
		if (!w)
			return false;
run:
		shca_req_wc(qp, w, &wc, IB_WC_SUCCESS);
		res = shca_exec_wqe(qp, w, &wc);
		if (res == SHCA_EXEC_DEFER)
			return true;
		if (res != SHCA_EXEC_DONE && shca_exec_retry(qp, res, &wc))
			return false;
		bytes += len;
		/* Nothing left: no need to take the lock again to see it. */
		if (shca_req_complete(qp, w, &wc,
				      qp->req.accepted ? qp->req.npsn : 0,
				      in_post))
			return false;
		if (!in_post) {
			if (bytes >= SHCA_EXEC_BYTES)
				break;
			/* Other QPs' work items get the worker between WQEs. */
			cond_resched();
		}
	}
	return true;
}

/*
 * Work the work item must do: WQEs to execute (not waiting out a retry
 * delay, which its timer ends) or to flush.
 */
static bool shca_sq_due(struct shca_qp *qp)
{
	unsigned long flags;
	bool due;

	spin_lock_irqsave(&qp->lock, flags);
	switch (qp->state) {
	case IB_QPS_RTS:
		due = !shca_queue_empty(&qp->sq) && !READ_ONCE(qp->req.waiting);
		break;
	case IB_QPS_ERR:
		due = !shca_queue_empty(&qp->sq) || shca_rq_flush_head(qp);
		break;
	default:
		due = false;
		break;
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return due;
}

/*
 * Give SHCA_QP_EXEC_BUSY back. A poster that found it taken left its WQEs
 * to the holder and said so (SHCA_QP_EXEC_POSTED): if work is left
 * (@more, or WQEs posted meanwhile), the work item does it. Without such
 * a poster the queue need not be looked at again.
 */
static void shca_exec_release(struct shca_qp *qp, bool more)
{
	clear_bit_unlock(SHCA_QP_EXEC_BUSY, &qp->exec_flags);
	/*
	 * Pairs with shca_qp_post_exec(): it sets POSTED, then tries BUSY
	 * again; we clear BUSY, then look at POSTED. One of us sees the
	 * other's store.
	 */
	smp_mb__after_atomic();
	if (more || (test_bit(SHCA_QP_EXEC_POSTED, &qp->exec_flags) &&
		     test_and_clear_bit(SHCA_QP_EXEC_POSTED, &qp->exec_flags) &&
		     shca_sq_due(qp)))
		shca_qp_kick_now(qp);
}

/**
 * shca_qp_post_exec() - execute what post_send queued
 * @qp: the QP; its consumer is in post_send
 *
 * A hardware HCA starts a request when its doorbell rings; a software
 * one that handed every request to a work item would pay a wake-up and a
 * move to another CPU per message. So small requests execute here, in
 * the poster's context, when nothing else executes the queue, and never
 * in hard interrupt context: at most SHCA_POST_EXEC_BUDGET WQEs and
 * SHCA_POST_EXEC_BYTES bytes, each WQE whole. Nothing here sleeps, and
 * every lock of the execution engine is taken with interrupts off. The
 * consumers' completion and event handlers this causes run later, from
 * work items (see shca_cq_push() and shca_qp_event_later()), never from
 * inside post_send. The rest - larger WQEs, retries, the flush of the
 * error state - is the work item's.
 *
 * Context: any context; the caller holds no lock of the driver.
 */
void shca_qp_post_exec(struct shca_qp *qp)
{
	bool more;

	/*
	 * On the wire (shca_wire.c), a process's post sends its packets
	 * itself: its system call may sleep (to fault in an ODP page) and
	 * its completion handler is uverbs'. Kernel posters may hold locks
	 * with interrupts off: their requests are the work item's.
	 */
	if (READ_ONCE(qp->wire)) {
		if (!qp->user || in_interrupt() ||
		    test_and_set_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags)) {
			shca_qp_kick(qp);
			return;
		}
		more = shca_wire_run(qp);
		/* The flush of the error state is the work item's. */
		if (READ_ONCE(qp->state) == IB_QPS_ERR)
			more = true;
		shca_exec_release(qp, more);
		return;
	}
	if (in_hardirq() || in_nmi() || READ_ONCE(qp->req.waiting)) {
		shca_qp_kick(qp);
		return;
	}
	if (test_and_set_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags)) {
		/*
		 * Taken: tell the holder, then try once more, as it may have
		 * let go before it could see the flag.
		 */
		set_bit(SHCA_QP_EXEC_POSTED, &qp->exec_flags);
		/* POSTED before BUSY again: see shca_exec_release(). */
		smp_mb__after_atomic();
		if (test_and_set_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags))
			return;
	}
	/* A retry delay began meanwhile: its timer resumes the queue. */
	if (READ_ONCE(qp->req.waiting)) {
		shca_exec_release(qp, false);
		return;
	}
	more = shca_sq_run(qp, true);
	shca_exec_release(qp, more);
}

/**
 * shca_qp_post_claim() - claim a kernel QP's queue before posting to it
 * @qp: the QP; its consumer is in post_send
 *
 * What shca_qp_post_exec() does after the requests are queued, done
 * before: a poster that holds SHCA_QP_EXEC_BUSY while it queues can start
 * the first request in the lock section that queues it
 * (shca_req_start_posted()), one interrupt-disabling lock section less
 * per message. Only for kernel QPs of the in-memory link, outside hard
 * interrupt context, and not while a request waits out a retry delay
 * (which only the holder of the queue starts or ends).
 *
 * Context: any context; the caller holds no lock of the driver.
 * Return: true if the queue is claimed: shca_qp_post_run() must follow.
 */
bool shca_qp_post_claim(struct shca_qp *qp)
{
	if (qp->user || READ_ONCE(qp->wire) || in_hardirq() || in_nmi() ||
	    READ_ONCE(qp->req.waiting) ||
	    test_and_set_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags))
		return false;
	/* A retry delay began before we had the queue: its timer resumes it. */
	if (READ_ONCE(qp->req.waiting)) {
		shca_exec_release(qp, false);
		return false;
	}
	return true;
}

/**
 * shca_req_start_posted() - start the request just queued if it is next
 * @qp: the QP; its lock is held and the poster claimed its queue
 *	(shca_qp_post_claim())
 * @w: the WQE just queued
 *
 * If @w is the only WQE of a QP in RTS on the in-memory link and small
 * enough to execute in post_send, take the snapshot shca_sq_run() would
 * take under the lock (shca_req_start()) now.
 */
void shca_req_start_posted(struct shca_qp *qp, const struct shca_wqe *w)
{
	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RTS || qp->wire || READ_ONCE(qp->sdev->fatal) ||
	    qp->sq.tail - qp->sq.head != 1 ||
	    shca_wqe_len(w) > SHCA_POST_EXEC_BYTES)
		return;
	shca_req_start(qp, w);
	qp->req.started = true;
}

/**
 * shca_qp_post_run() - execute what a claiming poster queued
 * @qp: the QP; the caller claimed its queue (shca_qp_post_claim())
 *
 * As shca_qp_post_exec() once it has the queue; gives it back. A QP
 * that went on the wire since the claim (connected meanwhile: RTR decides
 * it, under the lock the requests were queued under) leaves them to its
 * work item, as shca_qp_post_exec() does.
 *
 * Context: as shca_qp_post_claim().
 */
void shca_qp_post_run(struct shca_qp *qp)
{
	if (READ_ONCE(qp->wire)) {
		shca_exec_release(qp, true);
		return;
	}
	shca_exec_release(qp, shca_sq_run(qp, true));
}

/**
 * shca_qp_exec_stop() - wait until nothing executes the QP's queues
 * @qp: the QP, in the RESET state (nothing new starts executing)
 *
 * Takes SHCA_QP_EXEC_BUSY (a poster executing finishes its WQE and sees
 * the state) and the memory link's responder (a peer's requester
 * handing it a message finishes it: nothing of it lands after a reset),
 * and cancels the work item. shca_qp_exec_resume() gives the bits back
 * once the queues are reset; destroy keeps them.
 *
 * Context: process context; sleeps.
 */
void shca_qp_exec_stop(struct shca_qp *qp)
{
	while (test_and_set_bit_lock(SHCA_QP_EXEC_BUSY, &qp->exec_flags))
		usleep_range(10, 100);
	while (!shca_resp_claim(qp))
		usleep_range(10, 100);
	/* The work item may requeue itself meanwhile; this stops it too. */
	cancel_delayed_work_sync(&qp->work);
}

/**
 * shca_qp_exec_resume() - undo shca_qp_exec_stop() after a reset
 * @qp: the QP
 */
void shca_qp_exec_resume(struct shca_qp *qp)
{
	shca_resp_release(qp);
	clear_bit_unlock(SHCA_QP_EXEC_BUSY, &qp->exec_flags);
}

/**
 * shca_qp_work() - a QP's work item: execute its send queue
 * @work: &shca_qp.work
 *
 * Reports the events raised from posters' contexts, then runs at most
 * SHCA_EXEC_BUDGET WQEs or SHCA_EXEC_BYTES bytes and requeues itself if
 * more are left. In the error state it flushes both queues instead. A
 * poster executing the queue (shca_qp_post_exec()) has it to itself: the
 * work item then tries again a jiffy later.
 */
void shca_qp_work(struct work_struct *work)
{
	struct shca_qp *qp = container_of(to_delayed_work(work),
					  struct shca_qp, work);
	bool more;

	shca_qp_report_events(qp);
	if (test_and_set_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags)) {
		queue_delayed_work(shca_wq, &qp->work, 1);
		return;
	}
	WRITE_ONCE(qp->req.waiting, false);
	more = false;
	/* Packets from the wire, its timer, what it has to send. */
	if (qp->wire || !skb_queue_empty(&qp->rxq) ||
	    test_bit(SHCA_QP_EXEC_TIMEOUT, &qp->exec_flags))
		more = shca_wire_run(qp);
	/* The in-memory link; the flush of the error state for both. */
	if (!qp->wire || READ_ONCE(qp->state) == IB_QPS_ERR)
		more |= shca_sq_run(qp, false);
	shca_exec_release(qp, more);
}
