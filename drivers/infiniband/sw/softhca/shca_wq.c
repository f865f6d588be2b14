// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Work queues
 *
 * Posting to the send and receive queues of a QP: the post_send and
 * post_recv verbs, and the doorbells of the rings a process maps. A work
 * request is checked and written into the slot at the queue's tail under
 * the QP lock, then handed down to the executor (shca_exec.c). What the
 * engine takes from the queues is in shca_queue.c.
 */

#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/uaccess.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"

/*
 * A receive was posted: the connected requester may be waiting out an
 * RNR delay for it; let it retry now.
 */
static void shca_qp_wake_requester(struct shca_qp *qp, u32 dest_qpn)
{
	struct shca_qp *peer = shca_qp_get(dest_qpn);

	if (!peer)
		return;
	if (READ_ONCE(peer->dest_qpn) == qp->ibqp.qp_num &&
	    READ_ONCE(peer->req.waiting))
		shca_qp_kick_now(peer);
	shca_qp_put(peer);
}

/*
 * Receives were posted (to the receive queue, or taken from the ring):
 * drops @qp->lock, taken with @flags, then has the work item flush them
 * in the error state, or lets a connected requester waiting out an RNR
 * delay retry now.
 */
static void shca_qp_recv_posted(struct shca_qp *qp, unsigned long flags)
	__releases(&qp->lock)
{
	bool flush = qp->state == IB_QPS_ERR;
	bool connected = qp->ibqp.qp_type == IB_QPT_RC &&
			 (qp->state == IB_QPS_RTR || qp->state == IB_QPS_RTS);
	u32 dest_qpn = qp->dest_qpn;

	spin_unlock_irqrestore(&qp->lock, flags);
	if (flush)
		shca_qp_kick(qp);
	else if (connected)
		shca_qp_wake_requester(qp, dest_qpn);
}

/**
 * shca_qp_rq_doorbell() - the process posted to a receive ring that asked
 *	for a doorbell
 * @qp: the QP
 *
 * Takes what the ring holds; in the error state flushes it, otherwise
 * lets a requester waiting out an RNR delay retry now.
 *
 * Context: process context.
 * Return: 0, or -EINVAL for a QP without a receive ring.
 */
int shca_qp_rq_doorbell(struct shca_qp *qp)
{
	unsigned long flags;

	if (!qp->urq.ring)
		return -EINVAL;
	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != IB_QPS_ERR)
		WRITE_ONCE(qp->urq.ring->doorbell, 0);
	smp_mb(); /* flag cleared before the producer is read */
	shca_rq_import(qp);
	shca_qp_recv_posted(qp, flags);
	return 0;
}

static bool shca_wr_takes_inline(enum ib_wr_opcode op)
{
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV || op == IB_WR_RDMA_WRITE ||
	       op == IB_WR_RDMA_WRITE_WITH_IMM;
}

/* Copy inline data; may fault user memory (user QPs, no lock held). */
static int shca_wqe_inline(struct shca_qp *qp, const struct ib_send_wr *wr,
			   struct shca_wqe *w)
{
	void *dst = w->sge;
	u32 len = 0;
	int i;

	for (i = 0; i < wr->num_sge; i++) {
		const struct ib_sge *sge = &wr->sg_list[i];

		if (sge->length > qp->max_inline - len)
			return -EINVAL;
		if (qp->user) {
			if (copy_from_user(dst + len,
					   u64_to_user_ptr(sge->addr),
					   sge->length))
				return -EFAULT;
		} else {
			memcpy(dst + len, (void *)(uintptr_t)sge->addr,
			       sge->length);
		}
		len += sge->length;
	}
	w->inline_len = len;
	w->num_sge = 0;
	return 0;
}

/* UD: only SENDs, to an address handle of this device. */
static int shca_wqe_ud(struct shca_qp *qp, const struct ib_send_wr *wr,
		       struct shca_wqe *w)
{
	const struct ib_ud_wr *ud = ud_wr(wr);

	if ((wr->opcode != IB_WR_SEND && wr->opcode != IB_WR_SEND_WITH_IMM) ||
	    !ud->ah || ud->ah->device != qp->ibqp.device ||
	    ud->remote_qpn > SHCA_QPN_MAX)
		return -EINVAL;
	w->ud.av = to_shca_ah(ud->ah)->av;
	w->ud.remote_qpn = ud->remote_qpn;
	w->ud.remote_qkey = ud->remote_qkey;
	return 0;
}

/* Turn @wr into the WQE @w; returns -EINVAL for a malformed request. */
static int shca_wqe_from_send_wr(struct shca_qp *qp,
				 const struct ib_send_wr *wr,
				 struct shca_wqe *w)
{
	u32 len = 0;
	int i;

	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->inline_len = 0;
	w->ex.imm_data = 0;

	if (shca_qp_datagram(qp)) {
		i = shca_wqe_ud(qp, wr, w);
		if (i)
			return i;
	}

	/* UC: SENDs and RDMA WRITEs only. */
	if (qp->ibqp.qp_type == IB_QPT_UC &&
	    (wr->opcode == IB_WR_RDMA_READ || wr->opcode == IB_WR_SEND_WITH_INV ||
	     wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD))
		return -EINVAL;

	switch (wr->opcode) {
	case IB_WR_SEND:
		break;
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		w->ex.imm_data = wr->ex.imm_data;
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		w->ex.invalidate_rkey = wr->ex.invalidate_rkey;
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		if (wr->num_sge != 1 || wr->sg_list[0].length != sizeof(u64))
			return -EINVAL;
		w->atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->atomic.compare_add = atomic_wr(wr)->compare_add;
		w->atomic.swap = atomic_wr(wr)->swap;
		w->atomic.rkey = atomic_wr(wr)->rkey;
		break;
	case IB_WR_BIND_MW:
		/*
		 * Memory windows are a userspace feature: only the driver's
		 * POST_LOCAL method makes these (uverbs' POST_SEND refuses
		 * the opcode), wrapped in a struct shca_bind_wr. UD QPs
		 * refused it above.
		 */
		if (!qp->user)
			return -EINVAL;
		w->bind = container_of(wr, struct shca_bind_wr, wr)->bind;
		w->num_sge = 0;
		return 0;
	case IB_WR_REG_MR:
	case IB_WR_REG_MR_INTEGRITY:
		if (qp->user || !reg_wr(wr)->mr)
			return -EINVAL;
		/* Integrity registrations need an integrity-enabled QP. */
		if (wr->opcode == IB_WR_REG_MR_INTEGRITY &&
		    !qp->ibqp.integrity_en)
			return -EINVAL;
		w->reg.mr = reg_wr(wr)->mr;
		w->reg.key = reg_wr(wr)->key;
		w->reg.access = reg_wr(wr)->access;
		if (wr->opcode == IB_WR_REG_MR_INTEGRITY) {
			/* Refused at once, as mlx5 refuses it at post. */
			if (wr->num_sge || !w->reg.mr->sig_attrs ||
			    shca_mr_pi_postable(to_shca_mr(w->reg.mr),
						w->reg.access,
						w->reg.mr->sig_attrs))
				return -EINVAL;
			w->sig = *w->reg.mr->sig_attrs;
		}
		w->num_sge = 0;
		return 0;
	default:
		return -EINVAL;
	}
	if (wr->opcode == IB_WR_RDMA_WRITE ||
	    wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
	    wr->opcode == IB_WR_RDMA_READ) {
		w->rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->rdma.rkey = rdma_wr(wr)->rkey;
	}
	if (wr->opcode == IB_WR_LOCAL_INV) {
		w->num_sge = 0;
		return 0;
	}

	if ((wr->send_flags & IB_SEND_INLINE) &&
	    shca_wr_takes_inline(wr->opcode))
		return shca_wqe_inline(qp, wr, w);

	if (wr->num_sge < 0 || wr->num_sge > qp->sq.max_sge)
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		if (check_add_overflow(len, wr->sg_list[i].length, &len))
			return -EINVAL;
		w->sge[i] = wr->sg_list[i];
	}
	w->num_sge = wr->num_sge;
	return 0;
}

/*
 * Queue @wr; with @start (the poster claimed the queue, see
 * shca_qp_post_claim()), start it in the same lock section if it is next.
 */
static int shca_post_one_send(struct shca_qp *qp, const struct ib_send_wr *wr,
			      bool start)
{
	struct shca_wqe *w;
	unsigned long flags;
	int err = 0;

	/* User QPs build in scratch: inline data may fault. */
	if (qp->user) {
		err = shca_wqe_from_send_wr(qp, wr, qp->scratch);
		if (err)
			return err;
	}

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state == IB_QPS_RESET || qp->state == IB_QPS_INIT ||
	    qp->state == IB_QPS_RTR) {
		err = -EINVAL;
		goto out;
	}
	if (shca_queue_full(&qp->sq)) {
		err = -ENOMEM;
		goto out;
	}
	w = shca_queue_slot(&qp->sq, qp->sq.tail);
	if (qp->user)
		memcpy(w, qp->scratch, qp->sq.slot_size);
	else
		err = shca_wqe_from_send_wr(qp, wr, w);
	if (!err) {
		qp->sq.tail++;
		if (start)
			shca_req_start_posted(qp, w);
	}
out:
	spin_unlock_irqrestore(&qp->lock, flags);
	return err;
}

/**
 * shca_qp_post_send() - the post_send verb
 * @qp: the QP
 * @wr: chain of work requests
 * @bad_wr: set to the first request not posted
 *
 * Small requests execute before it returns (shca_qp_post_exec()).
 *
 * Context: any context for kernel QPs; process context for user QPs
 * (inline data is copied from user memory).
 * Return: 0; -EINVAL for a QP in RESET, INIT or RTR or a malformed
 * request (also IB_WR_REG_MR_INTEGRITY on a QP created without
 * IB_QP_CREATE_INTEGRITY_EN); -ENOMEM when the send queue is full;
 * -EFAULT for unreadable inline data.
 */
int shca_qp_post_send(struct shca_qp *qp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr)
{
	bool claimed = shca_qp_post_claim(qp), start = claimed;
	int err = 0;

	if (qp->user)
		mutex_lock(&qp->post_mutex);
	for (; wr; wr = wr->next) {
		err = shca_post_one_send(qp, wr, start);
		if (err)
			break;
		start = false;
	}
	if (qp->user)
		mutex_unlock(&qp->post_mutex);
	if (err)
		*bad_wr = wr;
	if (claimed)
		shca_qp_post_run(qp);
	else
		shca_qp_post_exec(qp);
	return err;
}

/*
 * UD: the address handle slot @s names in @ahs, copied into @ah (an AH
 * destroyed meanwhile is not found, or its address vector was copied
 * before it went); -EINVAL if there is none.
 */
static int shca_swqe_ud(struct shca_qp *qp, const struct softhca_swqe *s,
			struct xarray *ahs, struct shca_ah *ah,
			struct ib_ud_wr *ud)
{
	struct shca_ah *found;

	xa_lock(ahs);
	found = xa_load(ahs, READ_ONCE(s->ah));
	if (found)
		ah->av = found->av;
	xa_unlock(ahs);
	if (!found)
		return -EINVAL;
	ah->ibah.device = qp->ibqp.device;
	ud->ah = &ah->ibah;
	ud->remote_qpn = READ_ONCE(s->remote_qpn);
	ud->remote_qkey = READ_ONCE(s->remote_qkey);
	return 0;
}

/* Post send slot @idx of the QP's send ring, as POST_SEND would. */
static int shca_swqe_post(struct shca_qp *qp, u32 idx, struct xarray *ahs)
{
	const struct softhca_swqe *s = shca_uring_slot(&qp->usq, &qp->sq, idx);
	struct ib_sge sge[SHCA_MAX_SGE];
	union {
		struct ib_rdma_wr rdma;
		struct ib_atomic_wr atomic;
		struct ib_ud_wr ud;
	} x = {};
	struct ib_send_wr *wr = &x.rdma.wr;
	struct shca_ah ah = {};
	u32 i, n = READ_ONCE(s->num_sge);
	int err;

	BUILD_BUG_ON(offsetof(struct ib_atomic_wr, wr) ||
		     offsetof(struct ib_rdma_wr, wr) ||
		     offsetof(struct ib_ud_wr, wr));
	if (n > qp->sq.max_sge)
		return -EINVAL;
	wr->wr_id = READ_ONCE(s->wr_id);
	wr->opcode = READ_ONCE(s->opcode);
	wr->send_flags = READ_ONCE(s->send_flags);
	if (wr->send_flags & ~(IB_SEND_FENCE | IB_SEND_SIGNALED |
			       IB_SEND_SOLICITED | IB_SEND_INLINE))
		return -EINVAL;
	switch (wr->opcode) {
	case IB_WR_SEND:
		break;
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		wr->ex.imm_data = (__force __be32)READ_ONCE(s->ex);
		break;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_LOCAL_INV:
		wr->ex.invalidate_rkey = READ_ONCE(s->ex);
		break;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_READ:
		break;
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		x.atomic.remote_addr = READ_ONCE(s->remote_addr);
		x.atomic.compare_add = READ_ONCE(s->compare_add);
		x.atomic.swap = READ_ONCE(s->swap);
		x.atomic.rkey = READ_ONCE(s->rkey);
		break;
	default:
		return -EINVAL;
	}
	if (shca_qp_datagram(qp)) {
		/* Only SENDs; the atomic and RDMA fields are the AV's. */
		if (wr->opcode != IB_WR_SEND &&
		    wr->opcode != IB_WR_SEND_WITH_IMM)
			return -EINVAL;
		err = shca_swqe_ud(qp, s, ahs, &ah, &x.ud);
		if (err)
			return err;
	} else if (wr->opcode == IB_WR_RDMA_WRITE ||
		   wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM ||
		   wr->opcode == IB_WR_RDMA_READ) {
		x.rdma.remote_addr = READ_ONCE(s->remote_addr);
		x.rdma.rkey = READ_ONCE(s->rkey);
	}
	for (i = 0; i < n; i++) {
		sge[i].addr = READ_ONCE(s->sge[i].addr);
		sge[i].length = READ_ONCE(s->sge[i].length);
		sge[i].lkey = READ_ONCE(s->sge[i].lkey);
	}
	wr->sg_list = sge;
	wr->num_sge = n;
	return shca_post_one_send(qp, wr, false);
}

/**
 * shca_qp_sq_doorbell() - post what a process wrote into its send ring
 * @qp: the QP; it has a send ring (shca_qp_ring_init())
 * @producer: the ring's producer as the process gives it
 * @ahs: UD: the address handles slots may name (struct shca_ucontext.ahs)
 *
 * Posts the slots from the ring's consumer up to @producer, in order and
 * with the checks of shca_qp_post_send(), stopping at the first refused;
 * publishes in the ring how many were taken (the refused one is slot
 * consumer), then executes what it can, as post_send does.
 *
 * Context: process context.
 * Return: 0; -EINVAL for a QP without a send ring or @producer more than
 * the ring's slots ahead (nothing posted); else shca_qp_post_send()'s
 * errno for the first slot refused.
 */
int shca_qp_sq_doorbell(struct shca_qp *qp, u32 producer, struct xarray *ahs)
{
	struct shca_uring *u = &qp->usq;
	int err = 0;

	if (!u->ring)
		return -EINVAL;
	mutex_lock(&qp->post_mutex);
	if (shca_ring_used(producer, u->cons) > qp->sq.mask + 1) {
		err = -EINVAL;
	} else {
		for (; u->cons != producer; u->cons++) {
			err = shca_swqe_post(qp, u->cons, ahs);
			if (err)
				break;
		}
		/* Pairs with the process' acquire: slots copied out. */
		smp_store_release(&u->ring->consumer, u->cons);
	}
	mutex_unlock(&qp->post_mutex);
	shca_qp_post_exec(qp);
	return err;
}

/**
 * shca_qp_post_recv() - the post_recv verb
 * @qp: the QP
 * @wr: chain of receive work requests
 * @bad_wr: set to the first request not posted
 *
 * Context: any context.
 * Return: 0; -EINVAL for a QP in RESET, on an SRQ or with a receive ring,
 * or too many SGEs; -ENOMEM when the receive queue is full.
 */
int shca_qp_post_recv(struct shca_qp *qp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	for (; wr; wr = wr->next) {
		/*
		 * A QP on an SRQ has no receive queue of its own; one with
		 * a receive ring takes receives only from the ring.
		 */
		if (qp->state == IB_QPS_RESET || qp->ibqp.srq || qp->urq.ring) {
			err = -EINVAL;
			break;
		}
		err = shca_queue_put_recv(&qp->rq, wr);
		if (err)
			break;
	}
	shca_qp_recv_posted(qp, flags);
	if (err)
		*bad_wr = wr;
	return err;
}
