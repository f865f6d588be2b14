// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: The responder's rules, for both links
 *
 * What a responder decides does not depend on how the request reached
 * it: in memory, a whole message a peer's requester hands over
 * (shca_exec.c), or RoCE v2 packets from the UDP link (shca_wire.c).
 * The rules both links share live here, once: when a QP takes requests
 * at all, what its attributes allow, how an atomic executes, when a
 * datagram is dropped unseen, how a receive WQE completes and when its
 * error ends the connection, and what each refusal (a NAK code) means
 * to the requester and to the responder.
 *
 * A request, whichever link carried it, is described by a
 * &struct shca_pkt: the memory link describes a whole message as one
 * ONLY packet (shca_resp_msg()).
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <rdma/ib_mad.h>

#include "shca_verbs.h"
#include "shca_wire.h"

/**
 * shca_resp_receiving() - the QP takes requests as a responder
 * @qp: the QP
 *
 * RTR, RTS, SQD and SQE (IBTA 10.3.1): a QP receives from RTR on, and
 * goes on receiving while its send queue is drained or in error.
 *
 * Context: any; the state is read once, unlocked, unless the caller
 * holds the QP's lock for a decision it makes under it.
 * Return: true if it does.
 */
bool shca_resp_receiving(const struct shca_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD || state == IB_QPS_SQE;
}

/**
 * shca_resp_msg() - describe a whole message of a send WQE as one packet
 * @qp: the requester's QP
 * @w: the send WQE (SEND, SEND_WITH_IMM, SEND_WITH_INV or
 *	RDMA_WRITE_WITH_IMM)
 * @pkt: filled: the opcode of an ONLY packet of @qp's transport, the
 *	solicited event bit, the immediate data or the key to invalidate,
 *	the source QP; for a datagram the address fields of its AV
 *
 * The memory link hands the responder whole messages; this is how it
 * tells the responder what the UDP link's packets tell it.
 */
void shca_resp_msg(const struct shca_qp *qp, const struct shca_wqe *w,
		   struct shca_pkt *pkt)
{
	bool ud = shca_qp_datagram(qp);
	u8 base = ud ? IB_OPCODE_UD :
		  qp->ibqp.qp_type == IB_QPT_UC ? IB_OPCODE_UC : IB_OPCODE_RC;

	*pkt = (struct shca_pkt){
		.se = !!(w->send_flags & IB_SEND_SOLICITED),
		.src_qp = qp->ibqp.qp_num,
		.vlan_id = 0xffff,
	};
	switch (w->opcode) {
	case IB_WR_SEND_WITH_IMM:
		pkt->opcode = base + IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE;
		pkt->imm = w->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		pkt->opcode = base + IB_OPCODE_SEND_ONLY_WITH_INVALIDATE;
		pkt->ieth = w->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		pkt->opcode = base + IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
		pkt->imm = w->ex.imm_data;
		break;
	default:
		pkt->opcode = base + IB_OPCODE_SEND_ONLY;
		break;
	}
	pkt->op = shca_op_get(pkt->opcode);
	if (ud) {
		pkt->net_type = w->ud.av.net_type;
		ether_addr_copy(pkt->smac, w->ud.av.smac);
		pkt->vlan_id = w->ud.av.vlan_id;
		pkt->sl = w->ud.av.sl;
	}
}

/**
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
int shca_resp_check(const struct shca_qp *qp, u32 flags, u64 va, u64 dma_len)
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
 * @pkt: the request's (last) packet, or the message (shca_resp_msg())
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
	struct ib_wc wc = {
		.wr_id = r->wr_id,
		.status = status,
		.opcode = flags & SHCA_OP_WRITE ? IB_WC_RECV_RDMA_WITH_IMM :
						  IB_WC_RECV,
		.byte_len = byte_len,
		.qp = &qp->ibqp,
		.src_qp = shca_qp_datagram(qp) ? pkt->src_qp :
						 READ_ONCE(qp->dest_qpn),
		.port_num = SHCA_PORT,
	};

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
