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
 * Requester (RC; shca_req.c, with the completer): WQEs between the send
 * queue's head and @wreq.next are
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

/*
 * Packets, and bytes of them (truesize), a QP keeps queued for its work
 * item before it drops more.
 */
#define SHCA_WIRE_RXQ_MAX	2048
#define SHCA_WIRE_RXQ_BYTES	SZ_4M
/* Packets one run of the work item receives. */
#define SHCA_WIRE_BUDGET	256

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
	skb = shca_net_pkt(qp->sdev, &path, &pkt, len, &payload);
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
				shca_req_response(qp, skb, &pkt);
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
		shca_req_timeout(qp);
	shca_wire_rx_run(qp);
	if (shca_qp_datagram(qp) || !qp->wire)
		return false;
	if (READ_ONCE(qp->state) == IB_QPS_ERR) {
		timer_delete(&qp->wtimer);
		qp->wreq.next = qp->sq.head;
		qp->wreq.resend = false;
		return false;
	}
	more = shca_req_send(qp);
	/* Local operations executed meanwhile complete in their turn. */
	shca_req_complete_upto(qp, 0, false);
	return more;
}
EXPORT_SYMBOL_IF_KUNIT(shca_wire_run);

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
		/* The owner of wreq starts it (shca_req_rts()). */
		set_bit(SHCA_QP_EXEC_WREQ_START, &qp->exec_flags);
	}
}
