// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: The transport on the wire
 *
 * What a QP does when its peer is reached through RoCE v2 packets
 * (shca_net.c) rather than in memory: the IBTA reliable and unreliable
 * connection transports and the datagram transport, split by role as a
 * hardware HCA splits them.
 *
 * Everything runs in the QP's work item, holding SHCA_QP_EXEC_BUSY:
 * received packets wait in the QP's queue (shca_qp.rxq, filled from the
 * UDP socket in softirq context) and are taken in order; then the
 * requester sends what the window allows. Nothing here runs in softirq
 * context but the enqueueing, so every copy may fault in pages of an ODP
 * MR, and every copy goes through the MR engine with the same checks as
 * the in-memory link.
 *
 * Requester (RC): WQEs between the send queue's head and @wreq.next are
 * in flight; each took its PSNs when its first packet left (WRITE and
 * SEND: one per path-MTU of data; READ: one per response packet;
 * atomics: one). SENDs and WRITEs are cut at the path MTU; the last
 * packet of each message, and every SHCA_WIRE_ACKREQ-th packet, asks for
 * an acknowledgment. At most SHCA_WIRE_WINDOW PSNs are outstanding and
 * at most max_rd_atomic READs and atomics (IB_SEND_FENCE waits for those
 * to complete). A local ACK timeout, a PSN sequence error NAK or an RNR
 * NAK (after the timer it asks for) makes the requester go back to the
 * first unacknowledged PSN and send again from there (go-back-N); a READ
 * resumes with a request for the part not yet received. retry_cnt and
 * rnr_retry bound the retries (IB_WC_RETRY_EXC_ERR,
 * IB_WC_RNR_RETRY_EXC_ERR); other NAKs complete the WQE they name with
 * the matching remote error.
 *
 * Completer: an ACK completes every SEND and WRITE whose last PSN it
 * covers; READ responses are placed in the READ's own scatter list in
 * order and complete it with their last packet; an atomic ACK returns
 * the original value. Completions are in send-queue order; local
 * operations (REG_MR, LOCAL_INV, BIND_MW) execute when their turn to be
 * sent comes and complete in order with the rest.
 *
 * Responder (RC; shca_resp.c, the responder's file): a request with the
 * expected PSN is executed: SENDs into
 * the receive WQE they take with their first packet (none: an RNR NAK
 * with the QP's min_rnr_timer), WRITEs through the rkey with
 * IB_ACCESS_REMOTE_WRITE, READs and atomics through theirs; each refusal
 * is the NAK the specification names, and a remote access or invalid
 * request error moves the responder to the error state, as on the
 * in-memory link. A duplicate request (an earlier PSN) is acknowledged
 * again, a duplicate READ or atomic answered from the last
 * max_dest_rd_atomic READ and atomic requests it kept (an atomic is not
 * executed twice); a request beyond the expected PSN gets one PSN
 * sequence error NAK. ACKs are coalesced: one per batch of packets that
 * asked for one.
 *
 * UC: the same packets without acknowledgements; a lost packet loses its
 * message, the responder waits for the next first packet.
 *
 * UD and the GSI QP: one packet per datagram; the receive gets the IP
 * header of the packet in its 40-byte GRH area, as a RoCE v2 HCA does.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <rdma/ib_addr.h>

#include "shca_verbs.h"
#include "shca_wire.h"

/* PSNs a requester may have outstanding. */
#define SHCA_WIRE_WINDOW	64
/* A request packet asks for an ACK at least this often. */
#define SHCA_WIRE_ACKREQ	32
/*
 * Packets, and bytes of them (truesize), a QP keeps queued for its work
 * item before it drops more.
 */
#define SHCA_WIRE_RXQ_MAX	2048
#define SHCA_WIRE_RXQ_BYTES	SZ_4M
/* Packets one run of the work item receives, and sends. */
#define SHCA_WIRE_BUDGET	256
/**
 * shca_wire_mtu() - the path MTU of a connection on the wire
 * @qp: the QP (see shca_wire_start())
 *
 * Return: the payload bytes of every packet of a message but its last.
 */
u32 shca_wire_mtu(const struct shca_qp *qp)
{
	return qp->path.mtu;
}

static bool shca_wire_is_rdatomic(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

static bool shca_wire_is_local(u32 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_REG_MR_INTEGRITY ||
	       opcode == IB_WR_LOCAL_INV || opcode == IB_WR_BIND_MW;
}

/**
 * shca_wire_sg_copy() - copy between a buffer and a WQE's scatter list
 * @qp: the QP of the WQE (its PD)
 * @w: the WQE: its SGEs, or its inline data (read only)
 * @off: byte offset into the scatter list
 * @buf: the buffer (a packet's payload)
 * @len: bytes to copy
 * @access: the rights each SGE's key must grant
 * @dir: SHCA_COPY_TO_MR or SHCA_COPY_FROM_MR
 *
 * Context: process context; may fault in ODP pages.
 * Return: 0, -ERANGE past the list, or the MR engine's error.
 */
int shca_wire_sg_copy(struct shca_qp *qp, const struct shca_wqe *w, u64 off,
		      void *buf, u32 len, int access, enum shca_copy_dir dir)
{
	struct shca_mem_target t = { .pd = qp->ibqp.pd, .access = access };
	u32 i;
	int err;

	if (!w->num_sge) {
		if (off + len > w->inline_len || dir == SHCA_COPY_TO_MR)
			return -ERANGE;
		memcpy(buf, (const u8 *)w->sge + off, len);
		return 0;
	}
	for (i = 0; i < w->num_sge && len; i++) {
		u32 n;

		if (off >= w->sge[i].length) {
			off -= w->sge[i].length;
			continue;
		}
		n = min_t(u64, len, w->sge[i].length - off);
		t.key = w->sge[i].lkey;
		t.iova = w->sge[i].addr + off;
		err = shca_mr_copy(qp->sdev, &t, buf, n, dir);
		if (err)
			return err;
		buf += n;
		len -= n;
		off = 0;
	}
	return len ? -ERANGE : 0;
}

/**
 * shca_wire_wqe_len() - the bytes a WQE's scatter list (or inline data) holds
 * @w: the WQE
 *
 * Return: the sum of its SGEs' lengths, or its inline length.
 */
u64 shca_wire_wqe_len(const struct shca_wqe *w)
{
	u64 len = 0;
	u32 i;

	if (!w->num_sge)
		return w->inline_len;
	for (i = 0; i < w->num_sge; i++)
		len += w->sge[i].length;
	return len;
}

/**
 * shca_wire_pkt() - build a packet to send
 * @sdev: the sending device
 * @path: where it goes
 * @pkt: its headers (pad is set here)
 * @paylen: bytes of payload the caller fills in
 * @payload: set to where the payload goes
 *
 * The headers of @pkt, then @paylen bytes at *@payload, padded to four
 * bytes (the ICRC is computed when it is sent).
 *
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *shca_wire_pkt(struct shca_dev *sdev,
			      const struct shca_path *path,
			      struct shca_pkt *pkt, u32 paylen, u8 **payload)
{
	u32 hdr = pkt->op->hdr_len, pad = -paylen & 3;
	struct sk_buff *skb;
	u8 *bth;

	skb = shca_net_alloc(sdev, path, hdr + paylen + pad, &bth);
	if (!skb)
		return NULL;
	pkt->pad = pad;
	shca_pkt_build(bth, pkt);
	*payload = bth + hdr;
	memset(bth + hdr + paylen, 0, pad);
	return skb;
}

/* ---- received packets --------------------------------------------------- */

static struct shca_rx_cb *shca_rx_cb(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct shca_rx_cb) > sizeof_field(struct sk_buff, cb));
	return (struct shca_rx_cb *)skb->cb;
}

/* Keep what the outer headers and the netdev said with the packet. */
static void shca_rx_cb_save(struct sk_buff *skb, const struct shca_pkt *pkt)
{
	struct shca_rx_cb *cb = shca_rx_cb(skb);

	cb->sgid = pkt->sgid;
	cb->dgid = pkt->dgid;
	cb->flow_label = pkt->flow_label;
	cb->net_type = pkt->net_type;
	cb->sport = pkt->sport;
	cb->vlan_id = pkt->vlan_id;
	ether_addr_copy(cb->smac, pkt->smac);
	cb->tclass = pkt->tclass;
	cb->hop_limit = pkt->hop_limit;
}

/*
 * A queued packet's headers: the outer ones from its control block, the
 * BTH and its extensions parsed again from its bytes (checked in softirq
 * already: this cannot fail unless the bytes changed).
 */
static int shca_rx_cb_load(struct sk_buff *skb, struct shca_pkt *pkt)
{
	const struct shca_rx_cb *cb = shca_rx_cb(skb);

	pkt->sgid = cb->sgid;
	pkt->dgid = cb->dgid;
	pkt->flow_label = cb->flow_label;
	pkt->net_type = cb->net_type;
	pkt->sport = cb->sport;
	pkt->vlan_id = cb->vlan_id;
	ether_addr_copy(pkt->smac, cb->smac);
	pkt->tclass = cb->tclass;
	pkt->hop_limit = cb->hop_limit;
	return shca_pkt_parse(pkt, skb->data, skb->len);
}

/*
 * Whether a packet for @qp is worth queueing, judged in softirq from
 * what can be read without the QP's lock: the state, the connection's
 * peer (RC, UC), the Q_Key and the length (UD; a connection's packets
 * longer than its path MTU are NAKed by the responder). A filter only - the work
 * item checks again under the lock - but junk from anyone who guesses a
 * QP number never takes the room of the real peer's packets.
 */
static bool shca_wire_rx_admit(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	if (!shca_resp_receiving(qp))
		return false;
	if (shca_qp_datagram(qp))
		return pkt->qkey == READ_ONCE(qp->qkey) &&
		       !shca_resp_dgram_too_long(qp, pkt->paylen);
	if (!READ_ONCE(qp->wire))
		return false;
	/* A torn read (modify_qp changing the GID) only misjudges one. */
	return !data_race(memcmp(&pkt->sgid, &qp->dgid, sizeof(pkt->sgid)));
}

/* Queue @skb for @qp's work item, within the queue's bounds. */
static bool shca_wire_rxq_add(struct shca_qp *qp, struct sk_buff *skb)
{
	if (skb_queue_len(&qp->rxq) >= SHCA_WIRE_RXQ_MAX ||
	    atomic_add_return(skb->truesize, &qp->rxq_bytes) >
	    SHCA_WIRE_RXQ_BYTES) {
		if (skb_queue_len(&qp->rxq) < SHCA_WIRE_RXQ_MAX)
			atomic_sub(skb->truesize, &qp->rxq_bytes);
		return false;
	}
	skb_queue_tail(&qp->rxq, skb);
	return true;
}

static struct sk_buff *shca_wire_rxq_take(struct shca_qp *qp)
{
	struct sk_buff *skb = skb_dequeue(&qp->rxq);

	if (skb)
		atomic_sub(skb->truesize, &qp->rxq_bytes);
	return skb;
}

/* A queued packet is a request (its BTH was checked in softirq). */
static bool shca_wire_skb_is_req(const struct sk_buff *skb)
{
	const struct shca_op *op = shca_op_get(skb->data[0]);

	return op && (op->flags & SHCA_OP_REQ);
}

/*
 * The next packet for the work item. While a READ is being answered,
 * requests wait behind it (their responses follow its own) but the
 * acknowledgements of the QP's own requests are taken, in their order.
 */
static struct sk_buff *shca_wire_rxq_next(struct shca_qp *qp)
{
	struct sk_buff *skb, *found = NULL;
	unsigned long flags;

	if (!qp->wresp.rd_active)
		return shca_wire_rxq_take(qp);
	spin_lock_irqsave(&qp->rxq.lock, flags);
	skb_queue_walk(&qp->rxq, skb) {
		if (!shca_wire_skb_is_req(skb)) {
			__skb_unlink(skb, &qp->rxq);
			found = skb;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	if (found)
		atomic_sub(found->truesize, &qp->rxq_bytes);
	return found;
}

/**
 * shca_wire_rxq_purge() - drop the packets queued for a QP
 * @qp: the QP
 *
 * Context: any context.
 */
void shca_wire_rxq_purge(struct shca_qp *qp)
{
	struct sk_buff *skb;

	while ((skb = shca_wire_rxq_take(qp)))
		kfree_skb(skb);
}

/**
 * shca_wire_rx() - a packet for a device arrived
 * @sdev: the device that owns its destination address
 * @skb: the packet (its data at the BTH); consumed
 * @pkt: its headers, decoded and checked (ICRC included)
 *
 * Finds the QP the packet is for and queues the packet to its work item;
 * a packet for no QP of @sdev, or of a transport the QP does not speak,
 * is dropped and counted.
 *
 * Context: softirq, under RCU.
 */
void shca_wire_rx(struct shca_dev *sdev, struct sk_buff *skb,
		  const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	struct shca_qp *qp;
	bool ok;

	if (pkt->qpn == 1)
		qp = shca_gsi_get(sdev, &pkt->dgid);
	else
		qp = shca_qp_get(pkt->qpn);
	if (!qp)
		goto drop;
	switch (qp->ibqp.qp_type) {
	case IB_QPT_RC:
		ok = flags & SHCA_OP_RC;
		break;
	case IB_QPT_UC:
		ok = flags & SHCA_OP_UC;
		break;
	default:
		ok = flags & SHCA_OP_UD;
		break;
	}
	if (!ok || qp->sdev != sdev || !shca_wire_rx_admit(qp, pkt)) {
		if (ok && qp->sdev == sdev && shca_qp_datagram(qp))
			atomic_long_inc(&sdev->rx_dropped);
		shca_qp_put(qp);
		goto drop;
	}
	shca_rx_cb_save(skb, pkt);
	if (!shca_wire_rxq_add(qp, skb)) {
		shca_qp_put(qp);
		goto drop;
	}
	shca_qp_kick_now(qp);
	shca_qp_put(qp);
	return;

drop:
	shca_wstat_inc(sdev, SHCA_WS_RX_DROPPED);
	kfree_skb(skb);
}
EXPORT_SYMBOL_IF_KUNIT(shca_wire_rx);

/**
 * shca_wire_rx_count() - count a packet the QP took
 * @qp: the QP
 * @skb: the packet
 */
void shca_wire_rx_count(struct shca_qp *qp, const struct sk_buff *skb)
{
	shca_wstat_inc(qp->sdev, SHCA_WS_RX_PKTS);
	shca_wstat_add(qp->sdev, SHCA_WS_RX_BYTES, skb->len);
}

/**
 * shca_wire_drop() - count a packet the QP dropped
 * @qp: the QP
 */
void shca_wire_drop(struct shca_qp *qp)
{
	shca_wstat_inc(qp->sdev, SHCA_WS_RX_DROPPED);
}

/**
 * shca_wire_ud_send() - send a datagram on the wire
 * @qp: the UD or GSI QP; its work item or poster executes @w
 * @w: the send WQE; its local SGEs are held in @qp->held
 * @len: bytes of data
 *
 * Return: 0, or -ENOMEM / a local protection error of the copy (the
 * datagram is not sent); a datagram without a route is lost, as on a
 * network.
 */
int shca_wire_ud_send(struct shca_qp *qp, const struct shca_wqe *w, u32 len)
{
	struct shca_path path = { .av = w->ud.av };
	struct shca_pkt pkt = {
		.opcode = w->opcode == IB_WR_SEND_WITH_IMM ?
			  IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE :
			  IB_OPCODE_UD_SEND_ONLY,
		.se = !!(w->send_flags & IB_SEND_SOLICITED),
		.qpn = w->ud.remote_qpn,
		.qkey = (w->ud.remote_qkey & BIT(31)) ? qp->qkey :
			w->ud.remote_qkey,
		.src_qp = qp->ibqp.qp_num,
		.imm = w->ex.imm_data,
	};
	struct sk_buff *skb;
	u8 *payload;
	u32 off, i;
	int err;

	pkt.op = shca_op_get(pkt.opcode);
	path.sport = path.av.flow_label ?
		     rdma_flow_label_to_udp_sport(path.av.flow_label) :
		     shca_net_sport(qp->ibqp.qp_num, w->ud.remote_qpn);
	skb = shca_wire_pkt(qp->sdev, &path, &pkt, len, &payload);
	if (!skb)
		return -ENOMEM;
	if (!w->num_sge) {
		memcpy(payload, w->sge, len);
	} else {
		for (i = 0, off = 0; i < w->num_sge; i++) {
			if (!w->sge[i].length)
				continue;
			err = shca_mr_copy_held_buf(&qp->held[i], 0,
						    payload + off,
						    w->sge[i].length,
						    SHCA_COPY_FROM_MR);
			if (err) {
				kfree_skb(skb);
				return -EFAULT;
			}
			off += w->sge[i].length;
		}
	}
	shca_net_send(qp->sdev, &path, skb);
	return 0;
}

/* ---- RC and UC: requester and completer -------------------------------- */

static struct shca_wqe *shca_wire_sq_wqe(struct shca_qp *qp, u32 idx)
{
	return shca_queue_slot(&qp->sq, idx);
}

/* Complete the WQE at the head of the send queue with @wc. */
static void shca_wire_complete(struct shca_qp *qp, struct shca_wqe *w,
			       struct ib_wc *wc)
{
	if (shca_wire_is_rdatomic(w->opcode) && qp->wreq.rd_out)
		qp->wreq.rd_out--;
	qp->wreq.rd_off = 0;
	/* The wire's requester keeps its PSN in wreq. */
	shca_req_complete(qp, w, wc, 0, false);
}

/* The PSN after the last one sent (once at least). */
static u32 shca_wire_sent_psn(const struct shca_wreq *rq)
{
	return rq->resend ? rq->resend_until : rq->psn;
}

/* Packets were sent that are not acknowledged. */
static bool shca_wire_outstanding(const struct shca_wreq *rq)
{
	return shca_psn_diff(shca_wire_sent_psn(rq), rq->una) > 0;
}

/*
 * The WQE @w at the head just completed. If the requester was going back
 * over it (its ACK or response came after the timeout or NAK that sent
 * the requester back, and in the same run), it must not be sent again:
 * sending goes on from the WQE after it.
 */
static void shca_wire_skip_done(struct shca_qp *qp, const struct shca_wqe *w)
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
static u32 shca_wire_sent_end(const struct shca_wreq *rq)
{
	return rq->resend ? rq->resend_next : rq->next;
}

static void shca_wire_rewind(struct shca_qp *qp, u32 psn);

/*
 * An acknowledgment beyond the READ or atomic @w at the head, whose
 * answer did not (all) come: it was lost (an implied NAK). The oldest
 * unacknowledged PSN stays the first one missing, and the requester asks
 * again from there, once per gap as for a gap in READ responses.
 */
static void shca_wire_implied_nak(struct shca_qp *qp, const struct shca_wqe *w)
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
	shca_wire_rewind(qp, missing);
}

/*
 * Complete, in order, what is done: local operations and UC messages
 * that were executed or sent, and SENDs and WRITEs whose last PSN
 * @acked covers (@acked_valid). @acked past a READ or atomic still
 * waiting for its answer is an implied NAK.
 */
static void shca_wire_complete_upto(struct shca_qp *qp, u32 acked,
				    bool acked_valid)
{
	struct shca_wreq *rq = &qp->wreq;
	u32 end = shca_wire_sent_end(rq);
	struct shca_wqe *w;
	struct ib_wc wc;

	while (qp->sq.head != end) {
		w = shca_wire_sq_wqe(qp, qp->sq.head);
		if (w->wire_done) {
			shca_req_wc(qp, w, &wc, w->wire_status);
		} else if (!acked_valid || shca_psn_diff(acked, w->lpsn) < 0) {
			break;
		} else if (!shca_wire_is_rdatomic(w->opcode)) {
			shca_req_wc(qp, w, &wc, IB_WC_SUCCESS);
		} else {
			shca_wire_implied_nak(qp, w);
			return;
		}
		shca_wire_complete(qp, w, &wc);
		shca_wire_skip_done(qp, w);
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
			w = shca_wire_sq_wqe(qp, qp->sq.head);
			if (!w->wire_done && shca_wire_is_rdatomic(w->opcode) &&
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
static void shca_wire_rewind(struct shca_qp *qp, u32 psn)
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
		struct shca_wqe *w = shca_wire_sq_wqe(qp, idx);

		if (w->wire_done || shca_wire_is_local(w->opcode))
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
		if (shca_wire_is_rdatomic(w->opcode))
			rq->rd_out++;
	}
	/* Nothing sent has that PSN: carry on where sending was. */
	rq->resend = rq->next != rq->resend_next;
}

/* Arm the retransmission timer, unless it runs. */
static void shca_wire_arm(struct shca_qp *qp, unsigned long delay)
{
	if (!timer_pending(&qp->wtimer))
		mod_timer(&qp->wtimer, jiffies + delay);
}

/*
 * (Re)start the local ACK timer. A timeout of 0 is an infinite one (IBTA
 * C9-141): no timer, a lost packet is sent again only after a NAK.
 */
static void shca_wire_ack_timer(struct shca_qp *qp, bool restart)
{
	if (!qp->timeout)
		return;
	if (restart)
		mod_timer(&qp->wtimer, jiffies + shca_ack_timeout(qp));
	else
		shca_wire_arm(qp, shca_ack_timeout(qp));
}

static void shca_wire_fail_head(struct shca_qp *qp, enum ib_wc_status status)
{
	struct shca_wqe *w;
	struct ib_wc wc;

	/*
	 * Sent, even if the requester is going back over it, or only in
	 * part: a WQE longer than the window stops in the middle.
	 */
	if (qp->sq.head == shca_wire_sent_end(&qp->wreq) &&
	    !(qp->wreq.next == qp->sq.head && qp->wreq.off))
		return;
	w = shca_wire_sq_wqe(qp, qp->sq.head);
	shca_req_wc(qp, w, &wc, status);
	shca_wire_complete(qp, w, &wc);
}

/* A NAK or RNR NAK for @psn; the WQEs before it are done. */
static void shca_wire_nak_rcvd(struct shca_qp *qp, const struct shca_pkt *pkt)
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
	shca_wire_complete_upto(qp, before, true);
	rq->nak_psn = pkt->psn;
	rq->nak_valid = true;
	if ((syn & SHCA_AETH_KIND_MASK) == SHCA_AETH_RNR_NAK) {
		shca_wstat_inc(qp->sdev, SHCA_WS_RNR_NAKS_RCVD);
		status = shca_req_retry(qp, true);
		if (status != IB_WC_SUCCESS) {
			shca_wire_fail_head(qp, status);
			return;
		}
		shca_wire_rewind(qp, pkt->psn);
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
			shca_wire_fail_head(qp, status);
			return;
		}
		shca_wire_rewind(qp, pkt->psn);
		break;
	default:
		shca_wstat_inc(qp->sdev,
			       code == SHCA_NAK_REM_ACCESS ?
			       SHCA_WS_ACCESS_NAKS_RCVD :
			       code == SHCA_NAK_REM_OP ? SHCA_WS_OP_NAKS_RCVD :
			       SHCA_WS_INV_NAKS_RCVD);
		shca_wire_fail_head(qp, shca_nak_status(code));
		break;
	}
}

/* READ response data for the READ at the head, in order. */
static void shca_wire_read_resp(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wreq *rq = &qp->wreq;
	u32 flags = pkt->op->flags, mtu = shca_wire_mtu(qp), expect;
	struct shca_wqe *w;
	struct ib_wc wc;
	u64 len;

	/*
	 * A response says every request before the READ was executed. It
	 * may come after the requester went back over the READ (late): it
	 * still counts.
	 */
	if (qp->sq.head == shca_wire_sent_end(rq))
		return;
	w = shca_wire_sq_wqe(qp, qp->sq.head);
	if (w->opcode != IB_WR_RDMA_READ) {
		shca_wire_complete_upto(qp, shca_psn_add(pkt->psn,
							 SHCA_PSN_MASK), true);
		if (qp->sq.head == shca_wire_sent_end(rq))
			return;
		w = shca_wire_sq_wqe(qp, qp->sq.head);
		if (w->opcode != IB_WR_RDMA_READ)
			return;
	}
	expect = shca_psn_add(w->psn, rq->rd_off / mtu);
	if (pkt->psn != expect) {
		/* A gap: ask again from the first missing response. */
		if (shca_psn_diff(pkt->psn, expect) > 0 &&
		    rq->rd_gap_psn != expect) {
			rq->rd_gap_psn = expect;
			shca_wire_rewind(qp, expect);
		}
		return;
	}
	len = shca_wire_wqe_len(w);
	if (pkt->paylen > len - rq->rd_off ||
	    (!(flags & SHCA_OP_LAST) && pkt->paylen != mtu))
		return;
	if (pkt->paylen &&
	    shca_wire_sg_copy(qp, w, rq->rd_off, (void *)pkt->payload,
			      pkt->paylen, IB_ACCESS_LOCAL_WRITE,
			      SHCA_COPY_TO_MR)) {
		shca_wire_fail_head(qp, IB_WC_LOC_PROT_ERR);
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
	shca_wire_complete(qp, w, &wc);
	shca_wire_skip_done(qp, w);
}

static void shca_wire_atomic_resp(struct shca_qp *qp, const struct shca_pkt *pkt)
{
	struct shca_wreq *rq = &qp->wreq;
	struct shca_wqe *w;
	struct ib_wc wc;

	shca_wire_complete_upto(qp, shca_psn_add(pkt->psn, SHCA_PSN_MASK),
				true);
	if (qp->sq.head == shca_wire_sent_end(rq))
		return;
	w = shca_wire_sq_wqe(qp, qp->sq.head);
	if ((w->opcode != IB_WR_ATOMIC_CMP_AND_SWP &&
	     w->opcode != IB_WR_ATOMIC_FETCH_AND_ADD) || w->psn != pkt->psn)
		return;
	shca_req_wc(qp, w, &wc, IB_WC_SUCCESS);
	if (shca_wire_sg_copy(qp, w, 0, (void *)&pkt->atomic_orig,
			      sizeof(u64), IB_ACCESS_LOCAL_WRITE,
			      SHCA_COPY_TO_MR))
		wc.status = IB_WC_LOC_PROT_ERR;
	else
		wc.byte_len = sizeof(u64);
	rq->una = shca_psn_add(pkt->psn, 1);
	shca_wire_complete(qp, w, &wc);
	shca_wire_skip_done(qp, w);
}

/*
 * The requester runs: the QP is in RTS. wreq belongs to the holder of
 * SHCA_QP_EXEC_BUSY, so modify_qp does not write it when the QP enters
 * RTS (the work item may be using it at that moment); the holder starts
 * it here, at sq_psn, before it reads it.
 */
static bool shca_wire_req_rts(struct shca_qp *qp)
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

/* A response packet (ACK, NAK, READ response, atomic ACK). */
static void shca_wire_response(struct shca_qp *qp, struct sk_buff *skb,
			       const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	u8 syn = pkt->aeth >> 24;
	unsigned long irqf;
	bool rts;

	spin_lock_irqsave(&qp->lock, irqf);
	rts = shca_wire_req_rts(qp);
	spin_unlock_irqrestore(&qp->lock, irqf);
	if (qp->ibqp.qp_type != IB_QPT_RC || !rts) {
		shca_wire_drop(qp);
		return;
	}
	/* Only PSNs sent mean anything. */
	if (shca_psn_diff(pkt->psn, shca_wire_sent_psn(&qp->wreq)) >= 0) {
		shca_wire_drop(qp);
		return;
	}
	shca_wire_rx_count(qp, skb);
	if ((flags & SHCA_OP_AETH) && (syn & SHCA_AETH_KIND_MASK) != SHCA_AETH_ACK &&
	    pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE) {
		shca_wire_nak_rcvd(qp, pkt);
	} else if (pkt->opcode == IB_OPCODE_RC_ACKNOWLEDGE) {
		shca_req_progress(qp);
		shca_wire_complete_upto(qp, pkt->psn, true);
	} else if (pkt->opcode == IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE) {
		shca_wire_atomic_resp(qp, pkt);
	} else {
		shca_wire_read_resp(qp, pkt);
	}
	/*
	 * Progress restarts the timer, nothing outstanding stops it; an RNR
	 * wait keeps its own.
	 */
	if (qp->wreq.rnr_wait)
		return;
	if (!shca_wire_outstanding(&qp->wreq))
		timer_delete(&qp->wtimer);
	else
		shca_wire_ack_timer(qp, true);
}

/*
 * Send the next packet of @w, the WQE at @wreq.next; advance the cursor.
 * Return false if it could not leave (no memory: try again later).
 */
static bool shca_wire_send_pkt(struct shca_qp *qp, struct shca_wqe *w)
{
	struct shca_wreq *rq = &qp->wreq;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	u32 mtu = shca_wire_mtu(qp), paylen = 0;
	u64 len = shca_wire_wqe_len(w);
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
		else if (shca_wire_is_rdatomic(w->opcode))
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
	skb = shca_wire_pkt(qp->sdev, &qp->path, &pkt, paylen, &payload);
	if (!skb)
		return false;
	if (paylen && shca_wire_sg_copy(qp, w, rq->off, payload, paylen, 0,
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
		} else if (shca_wire_is_rdatomic(w->opcode)) {
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
		shca_wire_ack_timer(qp, false);
	return true;
}

/*
 * Send what the window allows. Return true if the budget ran out with
 * packets left to send.
 */
static bool shca_wire_send(struct shca_qp *qp)
{
	struct shca_wreq *rq = &qp->wreq;
	bool rc = qp->ibqp.qp_type == IB_QPT_RC;
	int budget = SHCA_WIRE_BUDGET;
	unsigned long flags;
	struct shca_wqe *w;
	struct ib_wc wc;
	bool ready;

	while (budget--) {
		spin_lock_irqsave(&qp->lock, flags);
		/* A device that is going away sends nothing more. */
		if (unlikely(READ_ONCE(qp->sdev->fatal)) &&
		    qp->state != IB_QPS_RESET)
			shca_qp_set_error(qp);
		ready = shca_wire_req_rts(qp) && rq->next != qp->sq.tail;
		if (ready && rq->next == qp->sq.head)
			qp->sq_psn = rq->psn;
		spin_unlock_irqrestore(&qp->lock, flags);
		if (!ready || rq->rnr_wait)
			return false;
		w = shca_wire_sq_wqe(qp, rq->next);
		/* Going back over what already completed its part. */
		if (rq->resend && w->wire_done) {
			rq->next++;
			continue;
		}
		if (rc && shca_psn_diff(rq->psn, rq->una) >= SHCA_WIRE_WINDOW)
			return false;
		if (shca_wire_is_local(w->opcode)) {
			/* Executed in turn, completed in order. */
			wc.status = IB_WC_SUCCESS;
			shca_req_local(qp, w, &wc);
			w->wire_done = true;
			w->wire_status = wc.status;
			rq->next++;
			continue;
		}
		if (rq->off == 0 && !rq->resend) {
			w->wire_done = false;
			if (shca_wire_is_rdatomic(w->opcode) &&
			    !qp->max_rd_atomic) {
				w->wire_done = true;
				w->wire_status = IB_WC_LOC_QP_OP_ERR;
				rq->next++;
				continue;
			}
			if (shca_wire_wqe_len(w) > SHCA_MAX_MSG_SZ) {
				w->wire_done = true;
				w->wire_status = IB_WC_LOC_LEN_ERR;
				rq->next++;
				continue;
			}
		}
		if (rq->off == 0 && shca_wire_is_rdatomic(w->opcode) &&
		    rq->rd_out >= qp->max_rd_atomic)
			return false;
		if (rq->off == 0 && (w->send_flags & IB_SEND_FENCE) &&
		    rq->rd_out)
			return false;
		if (!shca_wire_send_pkt(qp, w)) {
			shca_qp_kick(qp);
			return false;
		}
		shca_wire_complete_upto(qp, 0, false);
	}
	return true;
}

/* The timer ran out: an ACK timeout, or the end of an RNR wait. */
static void shca_wire_timeout(struct shca_qp *qp)
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
	if (!shca_wire_outstanding(rq) || qp->ibqp.qp_type != IB_QPT_RC)
		return;
	/* A timeout of 0 arms no timer (a stale expiry changes nothing). */
	if (!qp->timeout)
		return;
	shca_wstat_inc(qp->sdev, SHCA_WS_ACK_TIMEOUTS);
	status = shca_req_retry(qp, false);
	if (status != IB_WC_SUCCESS) {
		shca_wire_fail_head(qp, status);
		return;
	}
	shca_wire_rewind(qp, rq->una);
	shca_wire_ack_timer(qp, true);
}

/**
 * shca_wire_timer() - a QP's retransmission timer ran out
 * @t: &shca_qp.wtimer
 *
 * Context: timer (softirq).
 */
void shca_wire_timer(struct timer_list *t)
{
	struct shca_qp *qp = timer_container_of(qp, t, wtimer);

	set_bit(SHCA_QP_EXEC_TIMEOUT, &qp->exec_flags);
	shca_qp_kick_now(qp);
}

/* The packets waiting for the QP, in order. */
static void shca_wire_rx_run(struct shca_qp *qp)
{
	int budget = SHCA_WIRE_BUDGET;
	struct sk_buff *skb;
	struct shca_pkt pkt;

	/* The READ being answered goes on first; requests wait behind it. */
	shca_resp_run(qp);
	while (budget-- && (skb = shca_wire_rxq_next(qp))) {
		if (shca_rx_cb_load(skb, &pkt)) {
			shca_wire_drop(qp);
		} else if (shca_qp_datagram(qp)) {
			shca_resp_ud_recv(qp, skb, &pkt);
		} else if (!qp->wire ||
			   memcmp(&pkt.sgid, &qp->dgid, sizeof(pkt.sgid))) {
			/* Not from the peer of a connection on the wire. */
			shca_wire_drop(qp);
		} else {
			if (pkt.op->flags & SHCA_OP_REQ)
				shca_resp_request(qp, skb, &pkt);
			else
				shca_wire_response(qp, skb, &pkt);
		}
		kfree_skb(skb);
	}
	if (!skb_queue_empty(&qp->rxq) || qp->wresp.rd_active)
		shca_qp_kick(qp);
	shca_resp_ack_owed(qp);
}

/**
 * shca_wire_run() - one run of a wire QP's work item
 * @qp: the QP; the caller holds SHCA_QP_EXEC_BUSY
 *
 * Takes the packets that arrived, handles a timeout, then sends what the
 * window allows. A connected QP in the error state flushes instead.
 *
 * Return: true if work is left for another run.
 */
bool shca_wire_run(struct shca_qp *qp)
{
	bool more;

	if (test_and_clear_bit(SHCA_QP_EXEC_TIMEOUT, &qp->exec_flags))
		shca_wire_timeout(qp);
	shca_wire_rx_run(qp);
	if (shca_qp_datagram(qp) || !qp->wire)
		return false;
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		timer_delete(&qp->wtimer);
		qp->wreq.next = qp->sq.head;
		qp->wreq.resend = false;
		return false;
	}
	more = shca_wire_send(qp);
	/* Local operations executed meanwhile complete in their turn. */
	shca_wire_complete_upto(qp, 0, false);
	return more;
}
EXPORT_SYMBOL_IF_KUNIT(shca_wire_run);

/**
 * shca_wire_sq_psn() - the send PSN query_qp reports
 * @qp: the QP, its lock held
 *
 * On the wire the requester keeps its PSN in &shca_qp.wreq while WQEs
 * are in flight (shca_qp.sq_psn follows it only when the send queue is
 * idle): the PSN after the last request packet sent, as rdma_rxe and HCAs
 * report it, or shca_qp.sq_psn before the requester started.
 *
 * Return: the send PSN.
 */
u32 shca_wire_sq_psn(const struct shca_qp *qp)
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
 * shca_wire_reset() - forget the transport state (RESET, or a new path)
 * @qp: the QP; nothing executes it
 */
void shca_wire_reset(struct shca_qp *qp)
{
	struct shca_wresp *rs = &qp->wresp;
	struct shca_rd_res *res = rs->res;
	struct shca_wqe *r = rs->rwqe;
	u32 res_size = rs->res_size;
	unsigned long flags;

	/*
	 * RESET drops a receive WQE a SEND in progress holds, as it drops
	 * the queued ones: it no longer counts.
	 */
	if (rs->have_wqe) {
		spin_lock_irqsave(&qp->lock, flags);
		if (!WARN_ON_ONCE(!qp->recv_inflight))
			qp->recv_inflight--;
		spin_unlock_irqrestore(&qp->lock, flags);
	}
	timer_delete_sync(&qp->wtimer);
	shca_wire_rxq_purge(qp);
	memset(&qp->wreq, 0, sizeof(qp->wreq));
	memset(rs, 0, sizeof(*rs));
	rs->rwqe = r;
	/* The memory stays (modify_qp sized it); what it held does not. */
	if (res)
		memset(res, 0, res_size * sizeof(*res));
	rs->res = res;
	rs->res_size = res_size;
	clear_bit(SHCA_QP_EXEC_TIMEOUT, &qp->exec_flags);
}

/*
 * The path MTU, but no more than the source GID's netdev carries (an
 * application may ask for 4096 on a 1500-byte Ethernet: its packets would
 * never arrive), as the port's active MTU says.
 */
static u32 shca_wire_path_mtu(struct shca_qp *qp)
{
	u32 mtu = ib_mtu_enum_to_int(qp->path_mtu);
	struct net_device *ndev = NULL;
	struct net *net;

	rcu_read_lock();
	net = shca_net_of(qp->sdev);
	if (net)
		ndev = dev_get_by_index_rcu(net, qp->path.av.ifindex);
	if (ndev)
		mtu = min_t(u32, mtu,
			    ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(ndev->mtu))));
	rcu_read_unlock();
	return max_t(u32, mtu, 256);
}

/**
 * shca_wire_start() - a connected QP enters RTR or RTS
 * @qp: the QP; its lock is held
 * @next: the state it enters
 *
 * Entering RTR decides whether the connection runs on the wire: with
 * force_wire, or when no softhca device of the host's namespace owns the
 * destination GID; entering RTS starts the requester at sq_psn.
 */
void shca_wire_start(struct shca_qp *qp, enum ib_qp_state next)
{
	lockdep_assert_held(&qp->lock);
	if (next == IB_QPS_RTR) {
		qp->path.av.dgid = qp->dgid;
		qp->path.av.flow_label = qp->flow_label;
		qp->path.av.traffic_class = qp->traffic_class;
		qp->path.av.hop_limit = qp->hop_limit;
		qp->path.sport = qp->flow_label ?
			rdma_flow_label_to_udp_sport(qp->flow_label) :
			shca_net_sport(qp->ibqp.qp_num, qp->dest_qpn);
		qp->path.mtu = shca_wire_path_mtu(qp);
		WRITE_ONCE(qp->wire, READ_ONCE(qp->sdev->wire_attached) &&
			   (shca_force_wire ||
			    !shca_net_gid_local(qp->sdev, &qp->dgid)));
	} else if (next == IB_QPS_RTS) {
		/* The owner of wreq starts it (shca_wire_req_rts()). */
		set_bit(SHCA_QP_EXEC_WREQ_START, &qp->exec_flags);
	}
}
