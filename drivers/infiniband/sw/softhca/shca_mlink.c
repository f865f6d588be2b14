// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: The memory link
 *
 * What carries a request from a requester to a responder of this host
 * (a QP of any softhca device in the same network namespace) without
 * packets: the whole message at once, described by one ONLY packet
 * (&struct shca_pkt) whose data stays where it is, in the requester's
 * memory (&struct shca_mreq). The responder (shca_resp.c) checks it as
 * it checks a packet from the UDP link, and moves its bytes with the copy
 * functions here: once, directly between the two QPs' memory, through
 * the MR engine, which checks every key, range, PD and right. The
 * requester's own SGEs come resolved (shca_qp.held); the responder's
 * side is the range its RETH check held, or a receive WQE's SGEs,
 * resolved piece by piece.
 *
 * Bytes move in SHCA_MLINK_CHUNK pieces with a reschedule point between
 * them (the requester executes a larger request from its work item, not
 * from post_send), so one large request does not hog a CPU.
 */

#include <linux/etherdevice.h>
#include <linux/sched.h>

#include "shca_verbs.h"
#include "shca_transport.h"

/*
 * One side of a transfer: a scatter/gather list of keys on a device, or
 * (source only) inline data, with a cursor. The requester's own SGEs
 * come resolved (@held, one span per SGE); the other side's are resolved
 * piece by piece.
 */
struct shca_xfer {
	struct shca_dev *sdev;
	struct ib_pd *pd;
	int access;
	u32 qpn;
	const struct ib_sge *sge;
	const struct shca_span *held;
	u32 num_sge;
	const u8 *inl;
	u32 inl_len;
	u32 i;
	u64 off;
};

/* Bytes left in the current element of @x, skipping empty ones. */
static u64 shca_xfer_left(struct shca_xfer *x)
{
	if (x->inl)
		return x->inl_len - x->off;
	while (x->i < x->num_sge && x->off == x->sge[x->i].length) {
		x->i++;
		x->off = 0;
	}
	return x->i < x->num_sge ? x->sge[x->i].length - x->off : 0;
}

static void shca_xfer_target(const struct shca_xfer *x,
			     struct shca_mem_target *t)
{
	t->pd = x->pd;
	t->key = x->sge[x->i].lkey;
	t->iova = x->sge[x->i].addr + x->off;
	t->access = x->access;
	t->qpn = x->qpn;
}

/*
 * Move @len bytes from @src to @dst. On error, *@dst_failed says which
 * side refused; bytes before the failing element may have moved.
 */
static int shca_xfer(struct shca_xfer *dst, struct shca_xfer *src, u64 len,
		     bool *dst_failed)
{
	struct shca_mem_target dt, st;
	u64 moved = 0;
	int err;

	while (len) {
		u64 s = shca_xfer_left(src), d = shca_xfer_left(dst);
		u64 n = min3(len, s, d);

		n = min_t(u64, n, SHCA_MLINK_CHUNK);

		if (!n) {
			*dst_failed = !d;
			return -ERANGE;
		}
		if (src->inl) {
			*dst_failed = true;
			shca_xfer_target(dst, &dt);
			err = shca_mr_copy(dst->sdev, &dt,
					   (void *)(src->inl + src->off), n,
					   SHCA_COPY_TO_MR);
		} else if (src->held) {
			shca_xfer_target(dst, &dt);
			err = shca_mr_copy_held(&src->held[src->i], src->off,
						dst->sdev, &dt, n, false,
						dst_failed);
		} else {
			/* One side is always the requester's own, held. */
			shca_xfer_target(src, &st);
			err = shca_mr_copy_held(&dst->held[dst->i], dst->off,
						src->sdev, &st, n, true,
						dst_failed);
		}
		if (err)
			return err;
		src->off += n;
		dst->off += n;
		len -= n;
		/* Never reached from post_send (SHCA_POST_EXEC_BYTES). */
		moved += n;
		if (len && moved >= SHCA_MLINK_CHUNK) {
			moved = 0;
			cond_resched();
		}
	}
	return 0;
}

static void shca_xfer_local(struct shca_xfer *x, struct shca_qp *qp,
			    const struct shca_wqe *w, int access)
{
	*x = (struct shca_xfer){
		.sdev = qp->sdev,
		.pd = qp->ibqp.pd,
		.access = access,
		.sge = w->sge,
		.num_sge = w->num_sge,
	};
	if (!w->num_sge && w->inline_len) {
		x->inl = (const u8 *)w->sge;
		x->inl_len = w->inline_len;
	}
}

/* The requester's own SGEs of @w, held by shca_hold_local(). */
static void shca_xfer_held(struct shca_xfer *x, struct shca_qp *qp,
			   const struct shca_wqe *w, int access)
{
	shca_xfer_local(x, qp, w, access);
	x->held = qp->held;
}

/*
 * Move @len bytes between the requester's held SGEs of @w (or its inline
 * data) and @other, another QP's memory held whole: into it, or out of
 * it (@to_local). On error, *@dst_failed says which side refused.
 */
static int shca_xfer_span(struct shca_qp *qp, const struct shca_wqe *w,
			  struct shca_span *other, u64 len, bool to_local,
			  bool *dst_failed)
{
	u64 off = 0, moved = 0, done, n;
	u32 i;
	int err;

	if (!w->num_sge) {
		/* Inline data, which only a SEND or a WRITE carries. */
		*dst_failed = true;
		return shca_mr_copy_held_buf(other, 0, (void *)w->sge, len,
					     SHCA_COPY_TO_MR);
	}
	for (i = 0; i < w->num_sge; i++) {
		for (done = 0; done < w->sge[i].length; done += n) {
			n = min_t(u64, w->sge[i].length - done,
				  SHCA_MLINK_CHUNK);
			err = to_local ?
			      shca_mr_copy_spans(&qp->held[i], done, other,
						 off, n, dst_failed) :
			      shca_mr_copy_spans(other, off, &qp->held[i],
						 done, n, dst_failed);
			if (err)
				return err;
			off += n;
			moved += n;
			/* Never reached from post_send (SHCA_POST_EXEC_BYTES). */
			if (off < len && moved >= SHCA_MLINK_CHUNK) {
				moved = 0;
				cond_resched();
			}
		}
	}
	return 0;
}

/*
 * Move @len bytes between the requester's held SGEs of @w (or its inline
 * data) and one range of another QP's memory, @t: into @t, or out of it
 * (@to_local). The range is resolved and checked whole before a byte
 * moves, and the request moves its bytes under one registration.
 * On error, *@dst_failed says which side refused.
 */
static int shca_xfer_one(struct shca_qp *qp, const struct shca_wqe *w,
			 struct shca_dev *sdev, const struct shca_mem_target *t,
			 u64 len, bool to_local, bool *dst_failed)
{
	struct shca_span other;
	int err;

	/* The common small message: one call of the MR engine. */
	if (w->num_sge == 1 && len <= SHCA_MLINK_CHUNK)
		return shca_mr_copy_held(&qp->held[0], 0, sdev, t, len,
					 to_local, dst_failed);

	err = shca_mr_hold(sdev, t, len, &other);
	if (err) {
		*dst_failed = !to_local;
		return err;
	}
	err = shca_xfer_span(qp, w, &other, len, to_local, dst_failed);
	shca_mr_unhold(&other);
	return err;
}

/* Move the cursor of @x @off bytes on (a receive's GRH area). */
static void shca_xfer_seek(struct shca_xfer *x, u64 off)
{
	u64 n;

	while (off && shca_xfer_left(x)) {
		n = min(off, shca_xfer_left(x));
		x->off += n;
		off -= n;
	}
}

/**
 * shca_mlink_recv() - the memory link: a message's data into a receive WQE
 * @m: the message; the requester's SGEs (or inline data) are the source
 * @qp: the responder, whose receive WQE @r is
 * @r: the receive WQE, written with local rights from byte @off on
 * @off: where in @r the data goes
 * @len: bytes of data
 *
 * Context: see shca_resp_mem_request().
 * Return: 0, or the MR engine's error; @m->local_err says whether the
 * requester's own memory refused it.
 */
int shca_mlink_recv(struct shca_mreq *m, struct shca_qp *qp,
		    const struct shca_wqe *r, u64 off, u64 len)
{
	/* Set whole by shca_xfer_local(), if the one-SGE path is not taken. */
	struct shca_xfer dst __uninitialized, src __uninitialized;
	bool dst_failed = false;
	int err;

	if (!len)
		return 0;
	if (r->num_sge == 1 && !off) {
		struct shca_mem_target t = {
			.pd = qp->ibqp.pd,
			.key = r->sge[0].lkey,
			.iova = r->sge[0].addr,
			.access = IB_ACCESS_LOCAL_WRITE,
		};

		err = shca_xfer_one(m->qp, m->w, qp->sdev, &t, len, false,
				    &dst_failed);
	} else {
		shca_xfer_local(&dst, qp, r, IB_ACCESS_LOCAL_WRITE);
		shca_xfer_seek(&dst, off);
		shca_xfer_held(&src, m->qp, m->w, 0);
		err = shca_xfer(&dst, &src, len, &dst_failed);
	}
	m->local_err = err && !dst_failed;
	return err;
}

/**
 * shca_mlink_rdma() - the memory link: a WRITE's or a READ's data
 * @m: the message; the responder's range is held in @m->span, or named
 *	by @m->rt (checked whole here, before a byte moves)
 * @len: bytes of data
 * @read: a READ: from the responder's range to the requester's SGEs
 *	(else a WRITE: the other way)
 *
 * Return: 0, or the MR engine's error; @m->local_err says whether the
 * requester's own memory refused it (a READ's destination, a WRITE's
 * source).
 */
int shca_mlink_rdma(struct shca_mreq *m, u64 len, bool read)
{
	bool dst_failed = false;
	int err;

	if (!len)
		return 0;
	if (!m->span.mr)
		err = shca_xfer_one(m->qp, m->w, m->rsdev, &m->rt, len, read,
				    &dst_failed);
	/* The common small message: one SGE, one copy. */
	else if (m->w->num_sge == 1 && len <= SHCA_MLINK_CHUNK)
		err = read ? shca_mr_copy_spans(&m->qp->held[0], 0, &m->span,
						0, len, &dst_failed) :
			     shca_mr_copy_spans(&m->span, 0, &m->qp->held[0],
						0, len, &dst_failed);
	else
		err = shca_xfer_span(m->qp, m->w, &m->span, len, read,
				     &dst_failed);
	m->local_err = err && dst_failed == read;
	return err;
}

/**
 * shca_mlink_msg() - describe a WQE as the memory link's one packet
 * @qp: the requester, executing @w (its connection's snapshot in
 *	&shca_qp.req)
 * @w: the send WQE; its local SGEs are held
 * @pkt: &qp->req.mpkt, filled: the one ONLY packet of @qp's transport the
 *	memory link hands the responder: the BTH (destination, PSN,
 *	solicited event), the RETH or AtomicETH, immediate data or the key
 *	to invalidate, the message's length; for a datagram the DETH and the
 *	address fields of its AV. Every member a request may carry is set;
 *	the others (outer headers, pad, AETH, payload) stay zero from the
 *	QP's creation: the packet is the QP's, not a stack object cleared
 *	per message
 * @m: filled: the message's memory-link side, which @pkt points to, not
 *	answered yet (@m->rt is set with @m->rsdev, by the responder)
 *
 * The executor hands @pkt to the peer's responder (shca_resp_mem_request(),
 * shca_resp_datagram()), then calls shca_mlink_end(). Nothing else
 * initialises @m: the caller's may be uninitialised stack.
 */
void shca_mlink_msg(struct shca_qp *qp, const struct shca_wqe *w,
		    struct shca_pkt *pkt, struct shca_mreq *m)
{
	bool ud = shca_qp_datagram(qp);
	u8 base = ud ? IB_OPCODE_UD :
		  qp->ibqp.qp_type == IB_QPT_UC ? IB_OPCODE_UC : IB_OPCODE_RC;

	/* Field by field: a compound literal would zero @rt for nothing. */
	m->qp = qp;
	m->w = w;
	m->npsn = qp->req.npsn;
	m->later = qp->req.in_post;
	m->span.mr = NULL;
	m->rsdev = NULL;
	m->answered = false;
	m->syndrome = 0;
	m->local_err = false;
	m->orig = 0;
	pkt->se = !!(w->send_flags & IB_SEND_SOLICITED);
	pkt->qpn = qp->req.dest_qpn;
	pkt->psn = qp->req.psn;
	pkt->src_qp = qp->ibqp.qp_num;
	pkt->vlan_id = 0xffff;
	pkt->paylen = shca_wqe_len(w);
	pkt->mreq = m;
	pkt->va = 0;
	pkt->rkey = 0;
	pkt->dma_len = 0;
	pkt->imm = 0;
	pkt->ieth = 0;
	pkt->swap_add = 0;
	pkt->compare = 0;
	switch (w->opcode) {
	case IB_WR_SEND_WITH_IMM:
		pkt->opcode = IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE;
		pkt->imm = w->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
		pkt->opcode = IB_OPCODE_SEND_ONLY_WITH_INVALIDATE;
		pkt->ieth = w->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE_WITH_IMM:
		pkt->opcode = IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE;
		pkt->imm = w->ex.imm_data;
		fallthrough;
	case IB_WR_RDMA_WRITE:
		if (w->opcode == IB_WR_RDMA_WRITE)
			pkt->opcode = IB_OPCODE_RDMA_WRITE_ONLY;
		pkt->va = w->rdma.remote_addr;
		pkt->rkey = w->rdma.rkey;
		pkt->dma_len = pkt->paylen;
		break;
	case IB_WR_RDMA_READ:
		pkt->opcode = IB_OPCODE_RDMA_READ_REQUEST;
		pkt->va = w->rdma.remote_addr;
		pkt->rkey = w->rdma.rkey;
		pkt->dma_len = pkt->paylen;
		pkt->paylen = 0;
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		pkt->opcode = IB_OPCODE_COMPARE_SWAP;
		pkt->compare = w->atomic.compare_add;
		pkt->swap_add = w->atomic.swap;
		goto atomic;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		pkt->opcode = IB_OPCODE_FETCH_ADD;
		pkt->swap_add = w->atomic.compare_add;
atomic:
		pkt->va = w->atomic.remote_addr;
		pkt->rkey = w->atomic.rkey;
		pkt->paylen = 0;
		break;
	default:
		pkt->opcode = IB_OPCODE_SEND_ONLY;
		break;
	}
	pkt->opcode += base;
	pkt->op = shca_op_get(pkt->opcode);
	if (ud) {
		pkt->qpn = w->ud.remote_qpn;
		/* The high-order bit asks for the QP's own ("controlled") Q_Key. */
		pkt->qkey = (w->ud.remote_qkey & BIT(31)) ? qp->qkey :
			    w->ud.remote_qkey;
		pkt->net_type = w->ud.av.net_type;
		ether_addr_copy(pkt->smac, w->ud.av.smac);
		pkt->vlan_id = w->ud.av.vlan_id;
		pkt->sl = w->ud.av.sl;
	}
}
