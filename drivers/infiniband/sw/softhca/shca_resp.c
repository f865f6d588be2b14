// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: The responder, for both links
 *
 * What a responder decides does not depend on how the request reached
 * it, and it is written once: when a QP takes requests at all, what its
 * attributes allow, the whole range a RETH names, how a SEND fills its
 * receive WQE and a WRITE its memory, how a READ or an atomic executes,
 * when a datagram is dropped unseen, how a receive WQE completes and
 * when its error ends the connection, what each refusal (a NAK code)
 * means to the requester and to the responder.
 *
 * A request, whichever link carried it, is described by a
 * &struct shca_pkt. The UDP link hands the responder RoCE v2 packets,
 * one at a time, from the QP's work item (shca_wire.c): the data is in
 * the packet, and every answer (ACK, NAK, RNR NAK, READ responses,
 * atomic ACK) leaves as a packet. The memory link hands it a whole
 * message as one ONLY packet whose data stays in the requester's memory
 * (&struct shca_mreq): the responder moves the bytes with the link's copy
 * functions (shca_mlink_*(): once, MR to MR) and leaves its answer in
 * the message, which the requester's completer reads back
 * (shca_resp_mem_request()).
 *
 * The responder state of a QP (&struct shca_wresp) belongs to its work
 * item on the wire, to the one requester that took it in memory
 * (shca_qp.resp_busy); a RESET waits for both (shca_qp_exec_stop()).
 *
 * What only the wire has (PSN gaps and duplicates, the READ/atomic
 * replay resources answering them, READ responses in bounded runs,
 * coalesced ACKs) is below, after the rules both links use.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <rdma/ib_mad.h>

#include "shca_verbs.h"
#include "shca_wire.h"

/*
 * shca_resp_check() - what the responder's QP allows of a request
 * @qp: the responder
 * @flags: the request's opcode flags (SHCA_OP_*; its first packet's)
 * @va: an atomic's address
 * @dma_len: a READ's length
 *
 * The checks of the QP itself, before any key: the remote right the
 * operation needs (qp_access_flags), READ/atomic responder resources
 * (max_dest_rd_atomic > 0), a READ no longer than a message may be, an
 * atomic's address aligned to 8 bytes. Keys, ranges and the memory's
 * own rights are the MR engine's (shca_mr_hold() and the copies).
 *
 * Context: any context; reads the QP's attributes once (the caller
 * holds the QP's lock when the result must agree with a state change).
 * Return: 0, or the NAK code to refuse the request with.
 */
static int shca_resp_check(const struct shca_qp *qp, u32 flags, u64 va,
			   u64 dma_len)
{
	int need = flags & SHCA_OP_READ ? IB_ACCESS_REMOTE_READ :
		   flags & SHCA_OP_ATOMIC ? IB_ACCESS_REMOTE_ATOMIC :
		   flags & SHCA_OP_WRITE ? IB_ACCESS_REMOTE_WRITE : 0;

	if ((READ_ONCE(qp->access) & need) != need)
		return SHCA_NAK_REM_ACCESS;
	if (!(flags & (SHCA_OP_READ | SHCA_OP_ATOMIC)))
		return 0;
	/* No resources, or more than a message may carry. */
	if (!READ_ONCE(qp->max_dest_rd_atomic) ||
	    ((flags & SHCA_OP_READ) && dma_len > SHCA_MAX_MSG_SZ))
		return SHCA_NAK_INV_REQ;
	if ((flags & SHCA_OP_ATOMIC) && !IS_ALIGNED(va, sizeof(u64)))
		return SHCA_NAK_INV_REQ;
	return 0;
}

/*
 * Atomics are atomic with respect to every softhca atomic (IB_ATOMIC_HCA).
 * Innermost lock: taken with no QP, CQ or MR lock held, and only the
 * MR engine's lock (for the key lookup of the 8-byte copy) nests inside.
 */
static DEFINE_SPINLOCK(shca_atomic_lock);

/* Faults an atomic on an ODP page takes before it gives up. */
#define SHCA_ATOMIC_FAULTS	64

/**
 * shca_resp_atomic() - execute an atomic on memory a key names
 * @sdev: device of the key
 * @rt: the key, address, PD, rights and responder QP; changed
 * @cmp_swap: compare and swap (else fetch and add)
 * @compare_add: the compare value, or the value to add
 * @swap: the swap value
 * @orig: set to the value the memory held
 *
 * Atomic with respect to every other softhca atomic (IB_ATOMIC_HCA).
 *
 * Context: process context; may sleep to fault in an ODP page.
 * Return: 0, or the MR engine's error for the access.
 */
int shca_resp_atomic(struct shca_dev *sdev, struct shca_mem_target *rt,
		     bool cmp_swap, u64 compare_add, u64 swap, u64 *orig)
{
	unsigned long flags;
	unsigned int tries;
	u64 old, new;
	int err;

	/*
	 * Under the atomic lock nothing sleeps: a page of an ODP target that
	 * is not there (-EAGAIN, before anything is written) is faulted in
	 * with the lock dropped, and the atomic starts again.
	 */
	rt->no_sleep = true;
	for (tries = 0;; tries++) {
		spin_lock_irqsave(&shca_atomic_lock, flags);
		err = shca_mr_copy(sdev, rt, &old, sizeof(old),
				   SHCA_COPY_FROM_MR);
		if (!err) {
			if (cmp_swap)
				new = old == compare_add ? swap : old;
			else
				new = old + compare_add;
			err = shca_mr_copy(sdev, rt, &new, sizeof(new),
					   SHCA_COPY_TO_MR);
		}
		spin_unlock_irqrestore(&shca_atomic_lock, flags);
		if (err != -EAGAIN || tries >= SHCA_ATOMIC_FAULTS)
			break;
		err = shca_mr_fault(sdev, rt, sizeof(u64), true);
		if (err)
			break;
	}
	*orig = old;
	return err;
}

/**
 * shca_resp_dgram_too_long() - a datagram is dropped before it takes a receive
 * @qp: the receiving UD or GSI QP
 * @len: bytes of data
 *
 * Longer than the port's MTU, or for the GSI QP longer than a MAD (none
 * of the MAD layer's receives could take it, and it takes a receive
 * completed in error for a dead QP): dropped and counted, as a HCA drops
 * a malformed datagram, so that no sender can make a QP lose its
 * receives - the GSI QP least of all.
 *
 * Return: true to drop it.
 */
bool shca_resp_dgram_too_long(struct shca_qp *qp, u64 len)
{
	return len > shca_port_mtu(qp->sdev) ||
	       (qp->ibqp.qp_type == IB_QPT_GSI && len > IB_MGMT_MAD_SIZE);
}

/**
 * shca_resp_recv_done() - complete a receive WQE a request used
 * @qp: the responder
 * @r: the receive WQE, taken from @qp's receive queue or SRQ
 * @pkt: the request's (last) packet, or the memory link's message
 * @status: IB_WC_SUCCESS or the error of the receive
 * @byte_len: bytes received (with a datagram's GRH area)
 * @later: the requester executes from post_send: the CQ's handlers and
 *	the SRQ's limit event run later, from work items
 *
 * The completion says what a hardware responder's says: the source QP
 * (a datagram's, else the connection's), RECV, or
 * RECV_RDMA_WITH_IMM for a WRITE with immediate; the immediate data or
 * the invalidated key when successful; for a datagram the GRH, network
 * header type, source MAC and VLAN of the frame. A receive on an SRQ
 * counts towards the SRQ's limit and Last WQE Reached.
 *
 * Context: any context but hard IRQ; no QP lock held.
 */
void shca_resp_recv_done(struct shca_qp *qp, const struct shca_wqe *r,
			 const struct shca_pkt *pkt, enum ib_wc_status status,
			 u32 byte_len, bool later)
{
	u32 flags = pkt->op->flags;
	struct ib_wc wc __uninitialized;

	shca_wc_init(&wc, r->wr_id, status,
		     flags & SHCA_OP_WRITE ? IB_WC_RECV_RDMA_WITH_IMM :
					     IB_WC_RECV, &qp->ibqp);
	wc.byte_len = byte_len;
	wc.src_qp = shca_qp_datagram(qp) ? pkt->src_qp :
					   READ_ONCE(qp->dest_qpn);
	wc.port_num = SHCA_PORT;

	if (shca_qp_datagram(qp)) {
		wc.sl = pkt->sl;
		if (status == IB_WC_SUCCESS) {
			wc.wc_flags = IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
				      IB_WC_WITH_SMAC;
			wc.network_hdr_type = pkt->net_type;
			ether_addr_copy(wc.smac, pkt->smac);
			if (pkt->vlan_id < VLAN_N_VID) {
				wc.wc_flags |= IB_WC_WITH_VLAN;
				wc.vlan_id = pkt->vlan_id;
			}
		}
	}
	if (status == IB_WC_SUCCESS && (flags & SHCA_OP_IMM)) {
		wc.wc_flags |= IB_WC_WITH_IMM;
		wc.ex.imm_data = pkt->imm;
	} else if (status == IB_WC_SUCCESS && (flags & SHCA_OP_IETH)) {
		wc.wc_flags |= IB_WC_WITH_INVALIDATE;
		wc.ex.invalidate_rkey = pkt->ieth;
	}
	shca_cq_push(to_shca_cq(qp->ibqp.recv_cq), &wc, pkt->se, later);
	shca_qp_srq_check(qp, true, later);
}

/**
 * shca_resp_recv_error() - a receive WQE of the QP completed in error
 * @qp: the responder, which completed it (shca_resp_recv_done())
 *
 * A completion error ends the connection: the QP enters the error state
 * (a datagram QP only for an error of its own receive WQE, which is the
 * only one its callers report). No asynchronous event: the completion
 * reports the error.
 *
 * Context: any context but hard IRQ; no QP lock held.
 */
void shca_resp_recv_error(struct shca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	shca_qp_set_error(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
}

/**
 * shca_nak_status() - the requester's completion status for a NAK
 * @code: the NAK code (SHCA_NAK_*) of a refusal that ends the request
 *
 * Return: IB_WC_REM_ACCESS_ERR, IB_WC_REM_OP_ERR or IB_WC_REM_INV_REQ_ERR
 * (an invalid request, and any code this responder never sends).
 */
enum ib_wc_status shca_nak_status(u8 code)
{
	switch (code) {
	case SHCA_NAK_REM_ACCESS:
		return IB_WC_REM_ACCESS_ERR;
	case SHCA_NAK_REM_OP:
		return IB_WC_REM_OP_ERR;
	default:
		return IB_WC_REM_INV_REQ_ERR;
	}
}

/**
 * shca_nak_event() - the responder's asynchronous event for a NAK it sends
 * @code: the NAK code (SHCA_NAK_*), not a PSN sequence error
 *
 * The responder enters the error state with every NAK but a PSN
 * sequence error; its consumer hears why.
 *
 * Return: IB_EVENT_QP_REQ_ERR for an invalid request, else
 * IB_EVENT_QP_ACCESS_ERR.
 */
enum ib_event_type shca_nak_event(u8 code)
{
	return code == SHCA_NAK_INV_REQ ? IB_EVENT_QP_REQ_ERR :
					  IB_EVENT_QP_ACCESS_ERR;
}

/* The consumer's handlers of what @pkt causes run later (see shca_mreq). */
static bool shca_resp_later(const struct shca_pkt *pkt)
{
	return pkt->mreq && pkt->mreq->later;
}

/* ---- datagrams ------------------------------------------------------------ */

/**
 * shca_resp_datagram() - a datagram for a UD QP or the GSI QP
 * @qp: the receiving QP
 * @pkt: the datagram: its Q_Key, source QP and address fields, and its
 *	data (at @pkt->payload, or the memory link's message)
 * @grh: the 40 bytes the receive's GRH area gets
 * @r: room for the receive WQE the datagram takes (the caller's own)
 *
 * Taken by the next receive WQE if the QP receives, the Q_Key matches
 * and it is not too long; else dropped and counted at the device. The
 * receive gets the GRH area, then the data. A receive too short for it
 * completes with IB_WC_LOC_LEN_ERR and the QP goes on (the sender's
 * doing, not the consumer's); one whose memory is refused completes with
 * IB_WC_LOC_PROT_ERR and the QP enters the error state.
 *
 * Context: process context (a copy may fault in ODP pages); no QP lock
 * held.
 * Return: true if a receive took it, false if it was dropped.
 */
bool shca_resp_datagram(struct shca_qp *qp, const struct shca_pkt *pkt,
			const u8 *grh, struct shca_wqe *r)
{
	bool later = shca_resp_later(pkt);
	unsigned long flags;
	bool popped = false;
	int err;

	spin_lock_irqsave(&qp->lock, flags);
	if (shca_resp_receiving(qp) && pkt->qkey == qp->qkey &&
	    !shca_resp_dgram_too_long(qp, pkt->paylen))
		popped = shca_rq_pop(qp, r);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!popped) {
		atomic_long_inc(&qp->sdev->rx_dropped);
		return false;
	}
	if (SHCA_GRH_BYTES + (u64)pkt->paylen > shca_wqe_len(r)) {
		shca_resp_recv_done(qp, r, pkt, IB_WC_LOC_LEN_ERR, 0, later);
		return true;
	}
	err = shca_wqe_copy(qp, r, 0, (void *)grh, SHCA_GRH_BYTES,
			    IB_ACCESS_LOCAL_WRITE, SHCA_COPY_TO_MR);
	if (!err && pkt->mreq)
		err = shca_mlink_recv(pkt->mreq, qp, r, SHCA_GRH_BYTES,
				      pkt->paylen);
	else if (!err && pkt->paylen)
		err = shca_wqe_copy(qp, r, SHCA_GRH_BYTES,
				    (void *)pkt->payload, pkt->paylen,
				    IB_ACCESS_LOCAL_WRITE, SHCA_COPY_TO_MR);
	if (err) {
		/* With the receive still counted: a RESET waits for both. */
		shca_resp_recv_error(qp);
		shca_resp_recv_done(qp, r, pkt, IB_WC_LOC_PROT_ERR, 0, later);
		return true;
	}
	shca_resp_recv_done(qp, r, pkt, IB_WC_SUCCESS,
			    SHCA_GRH_BYTES + pkt->paylen, later);
	return true;
}

/**
 * shca_resp_ud_recv() - a datagram for a UD QP or the GSI QP, from the wire
 * @qp: the QP; the caller holds SHCA_QP_EXEC_BUSY
 * @skb: the packet (its IP header goes to the receive's GRH area)
 * @pkt: the packet, decoded
 */
void shca_resp_ud_recv(struct shca_qp *qp, struct sk_buff *skb,
		       const struct shca_pkt *pkt)
{
	u8 grh[SHCA_GRH_BYTES] = {};

	/* The GRH area: the IPv6 header, or the IPv4 one in its last bytes. */
	if (pkt->net_type == RDMA_NETWORK_IPV4)
		memcpy(grh + 20, ip_hdr(skb), sizeof(struct iphdr));
	else
		memcpy(grh, ipv6_hdr(skb), sizeof(struct ipv6hdr));
	if (shca_resp_datagram(qp, pkt, grh, qp->resp_wqe))
		shca_wire_rx_count(qp, skb);
	else
		shca_wire_drop(qp);
}

/* ---- RC and UC: answers --------------------------------------------------- */

/* READ responses one run of the work item sends. */
#define SHCA_WIRE_RD_BUDGET	64

/* What the READ being answered needs next (shca_resp_read_more()). */
enum shca_rd_more {
	SHCA_RD_DONE,		/* all sent, or given up on (sent no more) */
	SHCA_RD_MORE,		/* responses left for the next run */
	SHCA_RD_REFUSED,	/* the memory was refused: NAK */
};

static void shca_resp_send_ctl(struct shca_qp *qp, struct shca_pkt *pkt)
{
	struct sk_buff *skb;
	u8 *payload;

	pkt->op = shca_op_get(pkt->opcode);
	skb = shca_net_pkt(qp->sdev, &qp->path, pkt, 0, &payload);
	if (skb)
		shca_net_send(qp->sdev, &qp->path, skb);
}

/* Send an ACK or NAK for @psn with AETH syndrome @syndrome. */
static void shca_resp_ack(struct shca_qp *qp, u32 psn, u8 syndrome)
{
	struct shca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ACKNOWLEDGE,
		.qpn = qp->dest_qpn,
		.psn = psn,
		.aeth = (u32)syndrome << 24 | (qp->wresp.msn & IB_MSN_MASK),
	};

	shca_resp_send_ctl(qp, &pkt);
}

/*
 * A refusal with NAK @code (not a PSN sequence error) ends the
 * connection: the responder enters the error state, with the event the
 * code means (shca_nak_event()) if @notify: not when a receive WQE
 * completed with the error (the completion reports it), and not for a
 * QP that modify_qp reset meanwhile (a request of its last connection).
 */
static void shca_resp_fail(struct shca_qp *qp, u8 code, bool notify,
			   bool later)
{
	unsigned long flags;
	bool err;

	spin_lock_irqsave(&qp->lock, flags);
	shca_qp_set_error(qp);
	err = qp->state == IB_QPS_ERR;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!notify || !err)
		return;
	if (later)
		shca_qp_event_later(qp, shca_nak_event(code));
	else
		shca_qp_event(qp, shca_nak_event(code));
}

/* The UDP link: send NAK @code for @psn, and end the connection for it. */
static void shca_resp_nak(struct shca_qp *qp, u32 psn, u8 code, bool notify)
{
	static const u8 sent[] = {
		[SHCA_NAK_PSN_SEQ] = SHCA_WS_SEQ_NAKS_SENT,
		[SHCA_NAK_INV_REQ] = SHCA_WS_INV_NAKS_SENT,
		[SHCA_NAK_REM_ACCESS] = SHCA_WS_ACCESS_NAKS_SENT,
		[SHCA_NAK_REM_OP] = SHCA_WS_OP_NAKS_SENT,
	};

	shca_wstat_inc(qp->sdev, sent[code]);
	shca_resp_ack(qp, psn, SHCA_AETH_NAK | code);
	if (code != SHCA_NAK_PSN_SEQ)
		shca_resp_fail(qp, code, notify, false);
}

/* The memory link: the answer the requester reads back. */
static void shca_resp_answer(const struct shca_pkt *pkt, u8 syndrome)
{
	pkt->mreq->answered = true;
	pkt->mreq->syndrome = syndrome;
}

/* Refuse the request @pkt with NAK @code, on either link. */
static void shca_resp_refuse(struct shca_qp *qp, const struct shca_pkt *pkt,
			     u8 code, bool notify)
{
	if (!pkt->mreq) {
		shca_resp_nak(qp, pkt->psn, code, notify);
		return;
	}
	shca_resp_answer(pkt, SHCA_AETH_NAK | code);
	shca_resp_fail(qp, code, notify, pkt->mreq->later);
}

/* No receive WQE for @pkt: an RNR NAK with the QP's min_rnr_timer. */
static void shca_resp_rnr(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	u8 syndrome = SHCA_AETH_RNR_NAK | (READ_ONCE(qp->min_rnr_timer) & 0x1f);

	if (pkt->mreq) {
		shca_resp_answer(pkt, syndrome);
		return;
	}
	shca_wstat_inc(qp->sdev, SHCA_WS_RNR_NAKS_SENT);
	shca_resp_ack(qp, pkt->psn, syndrome);
}

/* ---- RC and UC: requests -------------------------------------------------- */

/*
 * The responder's end of a message: the receive WQE it used completes
 * with @status (if one was taken), and the MSN advances.
 */
static void shca_resp_msg_end(struct shca_qp *qp, const struct shca_pkt *pkt,
			      enum ib_wc_status status)
{
	struct shca_wresp *rs = &qp->wresp;

	if (rs->have_wqe) {
		shca_resp_recv_done(qp, rs->rwqe, pkt, status,
				    status == IB_WC_SUCCESS ? rs->off : 0,
				    shca_resp_later(pkt));
		rs->have_wqe = false;
	}
	if (status != IB_WC_SUCCESS)
		shca_resp_recv_error(qp);
	rs->in_msg = false;
	rs->off = 0;
	rs->msn++;
}

/**
 * shca_resp_flush_held() - flush the receive WQE a SEND in progress holds
 * @qp: a QP in the error state; the caller holds SHCA_QP_EXEC_BUSY
 *
 * A multi-packet SEND takes its receive WQE with its first packet; a QP
 * that enters the error state before the last one arrives completes it
 * with IB_WC_WR_FLUSH_ERR, ahead of the WQEs still queued, and a QP on
 * an SRQ counts it done (Last WQE Reached depends on it). A message the
 * memory link is handing over meanwhile ends its receive itself, and
 * kicks the QP (the queued receives wait for it: it is in flight).
 */
void shca_resp_flush_held(struct shca_qp *qp)
{
	struct shca_wresp *rs = &qp->wresp;
	struct ib_wc wc __uninitialized;

	if (!shca_resp_claim(qp))
		return;
	if (rs->have_wqe) {
		shca_wc_init(&wc, rs->rwqe->wr_id, IB_WC_WR_FLUSH_ERR,
			     IB_WC_RECV, &qp->ibqp);
		rs->have_wqe = false;
		rs->in_msg = false;
		rs->off = 0;
		shca_cq_push(to_shca_cq(qp->ibqp.recv_cq), &wc, false, false);
		shca_qp_srq_check(qp, true, false);
	}
	shca_resp_release(qp);
}

/*
 * Take a receive WQE for a SEND or WRITE with immediate. Return false if
 * there is none (the request gets an RNR NAK).
 */
static bool shca_resp_take_recv(struct shca_qp *qp)
{
	struct shca_wresp *rs = &qp->wresp;
	unsigned long flags;

	if (rs->have_wqe)
		return true;
	spin_lock_irqsave(&qp->lock, flags);
	rs->have_wqe = shca_rq_pop(qp, rs->rwqe);
	spin_unlock_irqrestore(&qp->lock, flags);
	return rs->have_wqe;
}

/* A READ or atomic request the responder keeps, to answer a duplicate. */
static struct shca_rd_res *shca_resp_res_new(struct shca_qp *qp)
{
	struct shca_wresp *rs = &qp->wresp;
	u32 n = clamp_t(u32, qp->max_dest_rd_atomic, 1, rs->res_size);
	u32 i = rs->res_next < n ? rs->res_next : 0;

	/* Only with max_dest_rd_atomic set: modify_qp made the room. */
	rs->res_next = i + 1 < n ? i + 1 : 0;
	return &rs->res[i];
}

static struct shca_rd_res *shca_resp_res_find(struct shca_qp *qp, u32 psn)
{
	u32 i, n = min_t(u32, qp->max_dest_rd_atomic, qp->wresp.res_size);

	for (i = 0; i < n; i++) {
		struct shca_rd_res *res = &qp->wresp.res[i];

		if (res->valid && shca_psn_diff(psn, res->psn) >= 0 &&
		    shca_psn_diff(psn, res->lpsn) <= 0)
			return res;
	}
	return NULL;
}

/*
 * Send the responses of the READ being answered (shca_wresp.rd_*), at most
 * SHCA_WIRE_RD_BUDGET of them: a READ of up to 2 GiB leaves over many
 * runs of the work item, with the QP's other work, its timers, a RESET
 * or destroy in between. A transmit error ends it (the requester asks
 * again for what is missing).
 */
static enum shca_rd_more shca_resp_read_more(struct shca_qp *qp)
{
	struct shca_wresp *rs = &qp->wresp;
	struct shca_rd_res *res = &rs->res[rs->rd_slot];
	u32 mtu = shca_wire_mtu(qp), first, n, i;
	struct shca_mem_target t = {
		.pd = qp->ibqp.pd,
		.key = res->rkey,
		.access = IB_ACCESS_REMOTE_READ,
		.qpn = qp->ibqp.qp_num,
	};
	struct shca_pkt pkt = { .qpn = qp->dest_qpn };
	struct sk_buff *skb;
	u8 *payload;

	if (!shca_resp_receiving(qp)) {
		rs->rd_active = false;
		return SHCA_RD_DONE;
	}
	n = res->len ? DIV_ROUND_UP(res->len, mtu) : 1;
	first = shca_psn_diff(rs->rd_psn, res->psn);
	for (i = first; i < n; i++) {
		u32 off = i * mtu, len = min(res->len - off, mtu);

		if (i - first == SHCA_WIRE_RD_BUDGET) {
			rs->rd_psn = shca_psn_add(res->psn, i);
			return SHCA_RD_MORE;
		}
		if (n == 1)
			pkt.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY;
		else if (i == 0)
			pkt.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST;
		else if (i == n - 1)
			pkt.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST;
		else
			pkt.opcode = IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;
		pkt.op = shca_op_get(pkt.opcode);
		pkt.psn = shca_psn_add(res->psn, i);
		pkt.aeth = (u32)(SHCA_AETH_ACK | SHCA_AETH_CREDIT_INVAL) << 24 |
			   (rs->msn & IB_MSN_MASK);
		skb = shca_net_pkt(qp->sdev, &qp->path, &pkt, len, &payload);
		if (!skb)
			break;	/* the requester asks again */
		t.iova = res->va + off;
		if (len && shca_mr_copy(qp->sdev, &t, payload, len,
					SHCA_COPY_FROM_MR)) {
			kfree_skb(skb);
			rs->rd_active = false;
			return SHCA_RD_REFUSED;
		}
		if (shca_net_send(qp->sdev, &qp->path, skb))
			break;
	}
	rs->rd_active = false;
	return SHCA_RD_DONE;
}

/*
 * Answer READ @res from PSN @psn on: the first responses now, the rest
 * from the next runs of the work item (shca_wire_rx_run()).
 */
static enum shca_rd_more shca_resp_read_respond(struct shca_qp *qp,
						struct shca_rd_res *res,
						u32 psn)
{
	struct shca_wresp *rs = &qp->wresp;

	rs->rd_active = true;
	rs->rd_slot = res - rs->res;
	rs->rd_psn = psn;
	return shca_resp_read_more(qp);
}

static void shca_resp_atomic_ack(struct shca_qp *qp, const struct shca_rd_res *res)
{
	struct shca_pkt pkt = {
		.opcode = IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE,
		.qpn = qp->dest_qpn,
		.psn = res->psn,
		.aeth = (u32)(SHCA_AETH_ACK | SHCA_AETH_CREDIT_INVAL) << 24 |
			(res->msn & IB_MSN_MASK),
		.atomic_orig = res->orig,
	};

	shca_resp_send_ctl(qp, &pkt);
}

/* Execute an atomic request; the rest was checked. */
static bool shca_resp_atomic_req(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_mem_target t = {
		.pd = qp->ibqp.pd,
		.key = pkt->rkey,
		.iova = pkt->va,
		.access = IB_ACCESS_REMOTE_ATOMIC,
		.qpn = qp->ibqp.qp_num,
	};
	struct shca_rd_res *res;
	bool cmp_swap;
	u64 orig;
	int err;

	cmp_swap = pkt->opcode == IB_OPCODE_RC_COMPARE_SWAP;
	err = shca_resp_atomic(qp->sdev, &t, cmp_swap,
			       cmp_swap ? pkt->compare : pkt->swap_add,
			       pkt->swap_add, &orig);
	if (err) {
		shca_resp_refuse(qp, pkt, SHCA_NAK_REM_ACCESS, true);
		return false;
	}
	qp->wresp.msn++;
	res = shca_resp_res_new(qp);
	*res = (struct shca_rd_res){
		.valid = true,
		.atomic = true,
		.psn = pkt->psn,
		.lpsn = pkt->psn,
		.orig = orig,
		.msn = qp->wresp.msn,
	};
	qp->rq_psn = shca_psn_add(pkt->psn, 1);
	if (pkt->mreq)
		pkt->mreq->orig = orig;
	else
		shca_resp_atomic_ack(qp, res);
	return true;
}

/*
 * The whole range a RETH names, checked before a byte moves: a WRITE or
 * READ that runs past its region is refused with its first packet, not
 * after it moved some. The memory link keeps what the check held for
 * its copy (shca_mreq.span), or checks the range whole with the copy
 * when no decision comes in between (shca_mreq.rt).
 */
static int shca_resp_check_reth(struct shca_qp *qp, const struct shca_pkt *pkt,
				int access)
{
	struct shca_mem_target t = {
		.pd = qp->ibqp.pd,
		.key = pkt->rkey,
		.iova = pkt->va,
		.access = access,
		.qpn = qp->ibqp.qp_num,
	};
	struct shca_span span;
	int err;

	if (!pkt->dma_len)
		return 0;
	if (pkt->mreq && !(pkt->op->flags & SHCA_OP_IMM)) {
		/* Checked whole as it is copied, before a byte moves. */
		pkt->mreq->rt = t;
		pkt->mreq->rsdev = qp->sdev;
		return 0;
	}
	err = shca_mr_hold(qp->sdev, &t, pkt->dma_len, &span);
	if (err)
		return err;
	if (pkt->mreq)
		pkt->mreq->span = span;
	else
		shca_mr_unhold(&span);
	return 0;
}

static bool shca_resp_read_req(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_mreq *m = pkt->mreq;
	struct shca_rd_res *res;
	u32 n;

	if (shca_resp_check_reth(qp, pkt, IB_ACCESS_REMOTE_READ)) {
		shca_resp_refuse(qp, pkt, SHCA_NAK_REM_ACCESS, true);
		return false;
	}
	qp->wresp.msn++;
	if (m) {
		/*
		 * The memory link answers once and never hands a duplicate
		 * over: no replay resource to keep.
		 */
		qp->rq_psn = shca_psn_add(pkt->psn, m->npsn);
		if (pkt->dma_len && shca_mlink_rdma(m, pkt->dma_len, true) &&
		    !m->local_err)
			goto refused;
		return true;
	}
	res = shca_resp_res_new(qp);
	n = pkt->dma_len ? DIV_ROUND_UP(pkt->dma_len, shca_wire_mtu(qp)) : 1;
	res->valid = true;
	res->atomic = false;
	res->psn = pkt->psn;
	res->lpsn = shca_psn_add(pkt->psn, n - 1);
	res->va = pkt->va;
	res->rkey = pkt->rkey;
	res->len = pkt->dma_len;
	res->orig = 0;
	res->msn = qp->wresp.msn;
	qp->rq_psn = shca_psn_add(pkt->psn, n);
	if (shca_resp_read_respond(qp, res, pkt->psn) == SHCA_RD_REFUSED) {
		res->valid = false;
		goto refused;
	}
	return true;

refused:
	shca_resp_refuse(qp, pkt, SHCA_NAK_REM_ACCESS, true);
	return false;
}

/*
 * The opcode fits the message in progress: a FIRST or ONLY packet starts
 * one, MIDDLE and LAST continue one of the same kind.
 */
static bool shca_resp_seq_ok(const struct shca_wresp *rs, u32 flags)
{
	if (flags & SHCA_OP_FIRST)
		return !rs->in_msg;
	return rs->in_msg &&
	       (flags & (SHCA_OP_SEND | SHCA_OP_WRITE)) == rs->kind;
}

/*
 * The shape of a SEND or WRITE packet: the kind of message in progress,
 * and on the wire, packets but the last carry exactly one MTU (the
 * memory link's ONLY packet carries the whole message).
 */
static bool shca_resp_shape_ok(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags, mtu;

	if (!shca_resp_seq_ok(&qp->wresp, flags))
		return false;
	if (pkt->mreq)
		return true;
	mtu = shca_wire_mtu(qp);
	return pkt->paylen <= mtu &&
	       ((flags & SHCA_OP_LAST) || pkt->paylen == mtu);
}

/* The first packet of a WRITE: the responder's rights and the whole range. */
static bool shca_resp_write_first(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wresp *rs = &qp->wresp;

	if (shca_resp_check(qp, pkt->op->flags, 0, 0) ||
	    shca_resp_check_reth(qp, pkt, IB_ACCESS_REMOTE_WRITE)) {
		if (qp->ibqp.qp_type == IB_QPT_RC)
			shca_resp_refuse(qp, pkt, SHCA_NAK_REM_ACCESS, true);
		return false;
	}
	rs->va = pkt->va;
	rs->rkey = pkt->rkey;
	rs->resid = pkt->dma_len;
	return true;
}

/* A SEND's data into the receive WQE it holds. */
static bool shca_resp_send_data(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wresp *rs = &qp->wresp;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC, local;
	int err;

	if (rs->off + pkt->paylen > shca_wqe_len(rs->rwqe)) {
		shca_resp_msg_end(qp, pkt, IB_WC_LOC_LEN_ERR);
		if (rc)
			shca_resp_refuse(qp, pkt, SHCA_NAK_INV_REQ, false);
		return false;
	}
	if (pkt->mreq)
		err = shca_mlink_recv(pkt->mreq, qp, rs->rwqe, rs->off,
				      pkt->paylen);
	else
		err = pkt->paylen ?
		      shca_wqe_copy(qp, rs->rwqe, rs->off,
				    (void *)pkt->payload, pkt->paylen,
				    IB_ACCESS_LOCAL_WRITE, SHCA_COPY_TO_MR) :
		      0;
	if (!err)
		return true;
	/* The memory link's source may fail: the requester's memory. */
	local = pkt->mreq && pkt->mreq->local_err;
	shca_resp_msg_end(qp, pkt, local ? IB_WC_REM_ABORT_ERR :
					   IB_WC_LOC_PROT_ERR);
	if (rc && !local)
		shca_resp_refuse(qp, pkt, SHCA_NAK_REM_OP, false);
	return false;
}

/* A WRITE's data into the range its first packet named. */
static bool shca_resp_write_data(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wresp *rs = &qp->wresp;
	u32 flags = pkt->op->flags;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	int err = 0;

	if (pkt->paylen > rs->resid ||
	    ((flags & SHCA_OP_LAST) && pkt->paylen != rs->resid)) {
		if (rc)
			shca_resp_refuse(qp, pkt, SHCA_NAK_INV_REQ, true);
		rs->in_msg = false;
		return false;
	}
	if (pkt->paylen && pkt->mreq) {
		err = shca_mlink_rdma(pkt->mreq, pkt->paylen, false);
	} else if (pkt->paylen) {
		struct shca_mem_target t = {
			.pd = qp->ibqp.pd,
			.key = rs->rkey,
			.iova = rs->va + rs->off,
			.access = IB_ACCESS_REMOTE_WRITE,
			.qpn = qp->ibqp.qp_num,
		};

		err = shca_mr_copy(qp->sdev, &t, (void *)pkt->payload,
				   pkt->paylen, SHCA_COPY_TO_MR);
	}
	if (err) {
		if (rc && !(pkt->mreq && pkt->mreq->local_err))
			shca_resp_refuse(qp, pkt, SHCA_NAK_REM_ACCESS, true);
		rs->in_msg = false;
		return false;
	}
	rs->resid -= pkt->paylen;
	return true;
}

/*
 * A SEND or WRITE packet with the expected PSN. Return false if it was
 * refused (and NAKed, or dropped on UC).
 */
static bool shca_resp_data(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wresp *rs = &qp->wresp;
	u32 flags = pkt->op->flags;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;

	if (!shca_resp_shape_ok(qp, pkt)) {
		if (rc)
			shca_resp_refuse(qp, pkt, SHCA_NAK_INV_REQ, true);
		rs->in_msg = false;
		return false;
	}
	if (flags & SHCA_OP_FIRST) {
		rs->kind = flags & (SHCA_OP_SEND | SHCA_OP_WRITE);
		rs->off = 0;
		if ((flags & SHCA_OP_WRITE) && !shca_resp_write_first(qp, pkt))
			return false;
	}
	/* A receive WQE: with the first packet of a SEND, with WRITE's IMM. */
	if (((flags & SHCA_OP_SEND) && (flags & SHCA_OP_FIRST)) ||
	    ((flags & SHCA_OP_WRITE) && (flags & SHCA_OP_IMM))) {
		if (!shca_resp_take_recv(qp)) {
			if (rc)
				shca_resp_rnr(qp, pkt);
			return false;
		}
	}
	if ((flags & SHCA_OP_SEND) ? !shca_resp_send_data(qp, pkt) :
				     !shca_resp_write_data(qp, pkt))
		return false;
	rs->off += pkt->paylen;
	rs->in_msg = true;
	if (!(flags & SHCA_OP_LAST))
		return true;

	if ((flags & SHCA_OP_IETH) &&
	    shca_mr_invalidate(qp->sdev, qp->ibqp.pd, qp->ibqp.qp_num,
			       pkt->ieth)) {
		shca_resp_msg_end(qp, pkt, IB_WC_LOC_PROT_ERR);
		if (rc)
			shca_resp_refuse(qp, pkt, SHCA_NAK_REM_OP, false);
		return false;
	}
	shca_resp_msg_end(qp, pkt, IB_WC_SUCCESS);
	return true;
}

/*
 * Execute a request with the expected PSN, from either link. Return true
 * if it was executed (a SEND or WRITE packet taken, a READ answered, an
 * atomic done); the requester's PSN then advances past it.
 */
static inline bool shca_resp_exec(struct shca_qp *qp,
				  const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	int nak;

	if (!(flags & (SHCA_OP_READ | SHCA_OP_ATOMIC))) {
		if (!shca_resp_data(qp, pkt))
			return false;
		qp->rq_psn = shca_psn_add(pkt->psn,
					  pkt->mreq ? pkt->mreq->npsn : 1);
		return true;
	}
	nak = qp->wresp.in_msg ? SHCA_NAK_INV_REQ :
	      shca_resp_check(qp, flags, pkt->va, pkt->dma_len);
	if (nak) {
		shca_resp_refuse(qp, pkt, nak, true);
		return false;
	}
	if (flags & SHCA_OP_READ)
		return shca_resp_read_req(qp, pkt);
	return shca_resp_atomic_req(qp, pkt);
}

/**
 * shca_resp_claim() - take the memory link's responder of a QP
 * @qp: the QP
 *
 * The responder state of a QP on the memory link belongs to whoever took
 * it: a peer's requester handing it a message (shca_resp_mem_request(),
 * which takes it in the lock section that checks the connection), the
 * QP's work item flushing a receive the responder holds, or
 * shca_qp_exec_stop(). Taken under the QP's lock, given back without it
 * (shca_resp_release()): a message costs no atomic operation of its own.
 *
 * Context: any context; takes the QP's lock.
 * Return: true if taken.
 */
bool shca_resp_claim(struct shca_qp *qp)
{
	unsigned long flags;
	bool taken;

	spin_lock_irqsave(&qp->lock, flags);
	/* Pairs with shca_resp_release(): the last holder's writes are seen. */
	taken = !smp_load_acquire(&qp->resp_busy);
	if (taken)
		qp->resp_busy = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	return taken;
}

/**
 * shca_resp_release() - give back what shca_resp_claim() took
 * @qp: the QP
 *
 * Context: any context.
 */
void shca_resp_release(struct shca_qp *qp)
{
	/* The responder state written so far, before the next holder's. */
	smp_store_release(&qp->resp_busy, false);
}

/**
 * shca_resp_mem_request() - a whole message from the memory link
 * @qp: the responder
 * @pkt: the message, as one ONLY packet of the requester's transport;
 *	@pkt->mreq is the link's side of it and takes the answer
 *
 * The responder takes a message only from its connection's peer, while
 * it receives, at the PSN it expects (RC; a UC responder takes any new
 * message), from one requester at a time (shca_resp_claim()), which a
 * RESET waits for, so that nothing of an earlier connection lands on a
 * QP reset and connected again. A QP whose connection runs on the wire
 * takes requests only from packets. What is not taken is not answered:
 * the requester retries it as a lost packet.
 *
 * The answer is what the UDP link would send: an ACK (with an atomic's
 * original value), an RNR NAK with the QP's min_rnr_timer, a NAK and its
 * code; the responder's own side of it (its receive completion, its
 * error state and event) is done as on the wire.
 *
 * Context: process context (a copy may fault in ODP pages) unless the
 * requester executes from post_send (then nothing here sleeps: the
 * requester defers what may); no QP lock held.
 */
void shca_resp_mem_request(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_mreq *m = pkt->mreq;
	unsigned long flags;
	bool ours;

	spin_lock_irqsave(&qp->lock, flags);
	/* As shca_resp_claim(), in the section that checks the connection. */
	ours = !smp_load_acquire(&qp->resp_busy) && !qp->wire &&
	       qp->dest_qpn == pkt->src_qp &&
	       qp->ibqp.qp_type == m->qp->ibqp.qp_type &&
	       shca_resp_receiving(qp) &&
	       (qp->ibqp.qp_type == IB_QPT_UC || qp->rq_psn == pkt->psn);
	if (ours)
		qp->resp_busy = true;
	spin_unlock_irqrestore(&qp->lock, flags);
	if (!ours)
		return;
	if (shca_resp_exec(qp, pkt))
		shca_resp_answer(pkt, SHCA_AETH_ACK | SHCA_AETH_CREDIT_INVAL);
	shca_resp_release(qp);
	/* Its work item flushes what the error state leaves. */
	if (READ_ONCE(qp->state) == IB_QPS_ERR)
		shca_qp_kick_now(qp);
}

/* ---- the UDP link's own: gaps, duplicates, coalesced ACKs ------------------ */

/* A request with an earlier PSN: answer it again, execute nothing. */
static void shca_resp_duplicate(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	struct shca_rd_res *res;

	shca_wstat_inc(qp->sdev, SHCA_WS_DUP_REQS);
	if (qp->ibqp.qp_type != IB_QPT_RC)
		return;
	if (flags & (SHCA_OP_READ | SHCA_OP_ATOMIC)) {
		res = shca_resp_res_find(qp, pkt->psn);
		if (!res)
			return;
		if (res->atomic)
			shca_resp_atomic_ack(qp, res);
		else if (pkt->psn == res->psn || (flags & SHCA_OP_READ))
			shca_resp_read_respond(qp, res, pkt->psn);
		/* A refusal now: the requester times out, as it would then. */
		return;
	}
	/* Everything before the expected PSN was executed: say so. */
	qp->wresp.ack_owed = true;
}

/**
 * shca_resp_request() - a request packet for an RC or UC QP
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 * @skb: the packet
 * @pkt: the packet, decoded; from the connection's peer
 *
 * A request with the expected PSN executes; an earlier one is a
 * duplicate (answered again, executed never); a later one gets one PSN
 * sequence error NAK (RC) or starts a new message (UC, a first packet).
 */
void shca_resp_request(struct shca_qp *qp, struct sk_buff *skb,
		       const struct shca_pkt *pkt)
{
	struct shca_wresp *rs = &qp->wresp;
	u32 flags = pkt->op->flags;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	s32 d;

	if (!shca_resp_receiving(qp)) {
		shca_wire_drop(qp);
		return;
	}
	d = shca_psn_diff(pkt->psn, qp->rq_psn);
	if (rc && d < 0) {
		shca_wire_rx_count(qp, skb);
		shca_resp_duplicate(qp, pkt);
		return;
	}
	if (d) {
		shca_wstat_inc(qp->sdev, SHCA_WS_OOS_REQS);
		if (!rc && (flags & SHCA_OP_FIRST)) {
			/* UC: what was lost is lost; resynchronise. */
			rs->in_msg = false;
			rs->off = 0;
		} else {
			/* Not taken: a UC message's rest, an RC gap. */
			shca_wire_drop(qp);
			rs->in_msg = rc && rs->in_msg;
			if (rc && !rs->nak_sent) {
				rs->nak_sent = true;
				shca_resp_nak(qp, qp->rq_psn, SHCA_NAK_PSN_SEQ, true);
			}
			return;
		}
	}
	shca_wire_rx_count(qp, skb);
	rs->nak_sent = false;

	if (shca_resp_exec(qp, pkt) && rc && pkt->ackreq &&
	    !(flags & (SHCA_OP_READ | SHCA_OP_ATOMIC)))
		rs->ack_owed = true;
}

/**
 * shca_resp_run() - what the responder does in each run before new packets
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 *
 * The READ being answered goes on (SHCA_WIRE_RD_BUDGET responses a run;
 * requests wait behind it, a memory refusal ends it with a NAK); the
 * caller runs again while shca_wresp.rd_active says one is.
 */
void shca_resp_run(struct shca_qp *qp)
{
	struct shca_wresp *rs = &qp->wresp;
	struct shca_rd_res *res;

	if (rs->rd_active && shca_resp_read_more(qp) == SHCA_RD_REFUSED) {
		res = &rs->res[rs->rd_slot];
		res->valid = false;
		shca_resp_nak(qp, res->psn, SHCA_NAK_REM_ACCESS, true);
	}
}

/**
 * shca_resp_ack_owed() - send the ACK a batch of requests asked for
 * @qp: the QP, on the wire; the caller holds SHCA_QP_EXEC_BUSY
 *
 * ACKs are coalesced: one, for everything before the expected PSN, after
 * the packets of a run that asked for one.
 */
void shca_resp_ack_owed(struct shca_qp *qp)
{
	if (!qp->wresp.ack_owed)
		return;
	qp->wresp.ack_owed = false;
	shca_resp_ack(qp, shca_psn_add(qp->rq_psn, SHCA_PSN_MASK),
		      SHCA_AETH_ACK | SHCA_AETH_CREDIT_INVAL);
}
