// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Queues as the engine takes them
 *
 * What the transport takes from the work queues, below the posting side
 * (shca_wq.c, the post_send and post_recv verbs and the doorbells, which
 * hand what they queued down to the executor) and below the SRQ object
 * (shca_srq.c): the send WQE to execute next, the receive WQE a request
 * fills (from the QP's receive queue, its mapped receive ring or its SRQ)
 * or a flush completes, resetting a receive queue, and the copy between
 * a buffer and a WQE's scatter/gather list.
 *
 * Queues are rings of fixed-size slots (struct shca_wqe plus room for the
 * scatter/gather list or inline data). The poster fills the slot at the
 * tail under the QP lock; the QP's work item executes the slot at the
 * head and advances the head only when the WQE has completed, so a slot
 * is never overwritten while it is being executed.
 */

#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"

/*
 * Mapped work queues (see softhca-abi.h and shca_uring_slot()).
 */

/**
 * shca_wq_ring_size() - bytes of a mapped work queue
 * @qp: the QP
 * @send: the send ring rather than the receive ring
 *
 * Return: the size of the mapping (header and slots), a multiple of
 * PAGE_SIZE.
 */
size_t shca_wq_ring_size(const struct shca_qp *qp, bool send)
{
	const struct shca_uring *u = send ? &qp->usq : &qp->urq;
	const struct shca_queue *q = send ? &qp->sq : &qp->rq;

	return PAGE_ALIGN(SOFTHCA_WQ_RING_HDR +
			  (size_t)(q->mask + 1) * u->slot_size);
}
EXPORT_SYMBOL_IF_KUNIT(shca_wq_ring_size);

/**
 * shca_qp_ring_init() - give a QP a send or receive ring a process maps
 * @qp: a new QP, not yet reachable by any peer; without an SRQ for the
 *	receive ring; RC, UC or UD for the send ring
 * @send: the send ring rather than the receive ring
 *
 * The ring (header and one slot per slot of the QP's queue, zeroed) is
 * charged to the caller's memory cgroup and belongs to the caller, who
 * frees it with vfree() after shca_qp_fini(), or once every mapping is
 * gone (the mmap entry, see shca_verbs.c).
 *
 * Context: process context.
 * Return: 0, -EINVAL for a QP that cannot have this ring, or -ENOMEM.
 */
int shca_qp_ring_init(struct shca_qp *qp, bool send)
{
	struct shca_uring *u = send ? &qp->usq : &qp->urq;
	const struct shca_queue *q = send ? &qp->sq : &qp->rq;

	if (send ? (qp->ibqp.qp_type != IB_QPT_RC &&
		    qp->ibqp.qp_type != IB_QPT_UC &&
		    qp->ibqp.qp_type != IB_QPT_UD) :
		   (qp->ibqp.srq || qp->ibqp.qp_type == IB_QPT_GSI))
		return -EINVAL;
	u->slot_size = send ?
		struct_size_t(struct softhca_swqe, sge, q->max_sge) :
		struct_size_t(struct softhca_rwqe, sge, q->max_sge);
	u->ring = shca_inject_fault() ? NULL :
		  __vmalloc(shca_wq_ring_size(qp, send),
			    SHCA_GFP_QUEUE | __GFP_ZERO);
	return u->ring ? 0 : -ENOMEM;
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_ring_init);

/* Tell the process how many receive requests the kernel has taken. */
static void shca_rq_ring_publish(struct shca_qp *qp)
{
	if (!qp->urq.ring)
		return;
	/* Pairs with the process' acquire: the slots are copied out. */
	smp_store_release(&qp->urq.ring->consumer, qp->rq.head);
}

/* Copy receive slot @idx into the receive queue; false if malformed. */
static bool shca_rwqe_import(struct shca_qp *qp, u32 idx)
{
	const struct softhca_rwqe *s = shca_uring_slot(&qp->urq, &qp->rq, idx);
	struct shca_wqe *w = shca_queue_slot(&qp->rq, idx);
	u32 i, n = READ_ONCE(s->num_sge);

	if (n > qp->rq.max_sge)
		return false;
	w->wr_id = READ_ONCE(s->wr_id);
	w->num_sge = n;
	w->inline_len = 0;
	for (i = 0; i < n; i++) {
		w->sge[i].addr = READ_ONCE(s->sge[i].addr);
		w->sge[i].length = READ_ONCE(s->sge[i].length);
		w->sge[i].lkey = READ_ONCE(s->sge[i].lkey);
	}
	return true;
}

/*
 * Receive slots one import copies at most: it runs under the QP's lock
 * with interrupts off, possibly in another poster's context; the rest is
 * taken when the queue runs empty.
 */
#define SHCA_RQ_IMPORT_BATCH	32

/**
 * shca_rq_import() - take what a process posted to its receive ring
 * @qp: the QP; caller holds @qp->lock
 *
 * Copies the slots between the receive queue's producer counter and the
 * ring's producer into the receive queue, at most SHCA_RQ_IMPORT_BATCH
 * of them (callers import again when the queue runs empty). A producer more than max_wr
 * ahead of the requests not yet taken, behind those already copied, or a
 * slot with too many SGEs means the ring is corrupt: the slots before the
 * bad one stay posted, the QP moves to the error state with
 * IB_EVENT_QP_FATAL (its work item flushes it) and the ring is not read
 * again until the QP is reset. Nothing is read in RESET.
 */
void shca_rq_import(struct shca_qp *qp)
{
	struct shca_queue *q = &qp->rq;
	struct shca_uring *u = &qp->urq;
	u32 prod;

	lockdep_assert_held(&qp->lock);
	if (!u->ring || u->dead || qp->state == IB_QPS_RESET)
		return;
	/* Pairs with the process' release store: slots before producer. */
	prod = smp_load_acquire(&u->ring->producer);
	if (prod == q->tail)
		return;
	if (shca_ring_used(prod, q->head) > q->max_wr ||
	    shca_ring_used(prod, q->head) < shca_ring_used(q->tail, q->head))
		goto corrupt;
	if (shca_ring_used(prod, q->tail) > SHCA_RQ_IMPORT_BATCH)
		prod = q->tail + SHCA_RQ_IMPORT_BATCH;
	for (; q->tail != prod; q->tail++)
		if (!shca_rwqe_import(qp, q->tail))
			goto corrupt;
	return;

corrupt:
	u->dead = true;
	if (qp->state != IB_QPS_ERR)
		shca_qp_set_error(qp);
	shca_qp_event_later(qp, IB_EVENT_QP_FATAL);
}
EXPORT_SYMBOL_IF_KUNIT(shca_rq_import);

/*
 * Whether the receive queue is empty after taking what the ring holds.
 * When it is, ask the process for a doorbell on its next post (it ends
 * a sender's RNR wait or lets the error state flush it): the flag is
 * set before the producer is read again, and the process writes the
 * producer before it reads the flag, both with a full barrier, so either
 * the kernel sees the request or the process sees the flag.
 */
static bool shca_rq_ring_empty(struct shca_qp *qp)
{
	struct shca_uring *u = &qp->urq;

	shca_rq_import(qp);
	/*
	 * A corrupt ring put the QP in the error state just now, under the
	 * lock the caller checked the state under: nothing more is received
	 * (what was imported is only flushed, see shca_rq_flush_head()).
	 */
	if (u->dead)
		return true;
	if (!shca_queue_empty(&qp->rq) || !u->ring)
		return shca_queue_empty(&qp->rq);
	if (!READ_ONCE(u->ring->doorbell))
		WRITE_ONCE(u->ring->doorbell, 1);
	smp_mb(); /* doorbell flag before the producer; see above */
	shca_rq_import(qp);
	return shca_queue_empty(&qp->rq);
}

/**
 * shca_rq_flush_head() - the receive WQE to flush next
 * @qp: the QP; caller holds @qp->lock
 *
 * Return: in the error state, the WQE at the head of the receive queue
 * (after taking what the process' ring holds), else or when there is
 * none NULL.
 */
struct shca_wqe *shca_rq_flush_head(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	/*
	 * A receive a requester is filling completes first; its completion
	 * lets the flush go on (shca_qp_srq_check()).
	 */
	if (qp->state != IB_QPS_ERR || qp->recv_inflight)
		return NULL;
	shca_rq_ring_empty(qp);
	return shca_queue_head(&qp->rq);
}

/**
 * shca_rq_flushed() - the WQE shca_rq_flush_head() returned is flushed
 * @qp: the QP; caller holds @qp->lock
 */
void shca_rq_flushed(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	qp->rq.head++;
	shca_rq_ring_publish(qp);
}

/**
 * shca_rq_reset() - empty the receive queue (RESET)
 * @qp: the QP; caller holds @qp->lock
 *
 * With a receive ring, the ring restarts empty at the process' producer.
 */
void shca_rq_reset(struct shca_qp *qp)
{
	struct shca_uring *u = &qp->urq;

	shca_queue_reset(&qp->rq);
	if (!u->ring)
		return;
	qp->rq.head = READ_ONCE(u->ring->producer);
	qp->rq.tail = qp->rq.head;
	u->dead = false;
	WRITE_ONCE(u->ring->doorbell, 0);
	shca_rq_ring_publish(qp);
}

/**
 * shca_sq_head() - the send WQE to execute next
 * @qp: the QP; caller holds @qp->lock
 *
 * Return: the WQE, or NULL if the send queue is empty.
 */
struct shca_wqe *shca_sq_head(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	return shca_queue_head(&qp->sq);
}

/**
 * shca_rq_pop() - take the receive WQE at the head of the receive queue
 * @qp: the QP; caller holds @qp->lock
 * @out: receives a copy of the WQE (room for SHCA_MAX_SGE entries)
 *
 * Return: true if a WQE was taken.
 */
bool shca_rq_pop(struct shca_qp *qp, struct shca_wqe *out)
{
	lockdep_assert_held(&qp->lock);
	if (qp->ibqp.srq) {
		if (!shca_srq_pop(to_shca_srq(qp->ibqp.srq), out))
			return false;
	} else {
		if (shca_rq_ring_empty(qp) || !shca_queue_take(&qp->rq, out))
			return false;
		shca_rq_ring_publish(qp);
	}
	/* Completed through shca_qp_srq_check(qp, true, ...). */
	qp->recv_inflight++;
	return true;
}

/**
 * shca_queue_take() - take the WQE at the head of a receive queue
 * @q: the queue; its owner's lock is held
 * @out: receives a copy of the WQE (room for SHCA_MAX_SGE entries)
 *
 * Return: true if a WQE was taken.
 */
bool shca_queue_take(struct shca_queue *q, struct shca_wqe *out)
{
	struct shca_wqe *w = shca_queue_head(q);

	if (!w)
		return false;
	memcpy(out, w, struct_size(w, sge, w->num_sge));
	q->head++;
	return true;
}

/**
 * shca_queue_put_recv() - append a receive work request to a queue
 * @q: the queue; its owner's lock is held
 * @wr: the work request
 *
 * Return: 0; -EINVAL for more SGEs than the queue takes; -ENOMEM when
 * the queue is full.
 */
int shca_queue_put_recv(struct shca_queue *q, const struct ib_recv_wr *wr)
{
	struct shca_wqe *w;

	if (wr->num_sge < 0 || wr->num_sge > q->max_sge)
		return -EINVAL;
	if (shca_queue_full(q))
		return -ENOMEM;
	w = shca_queue_slot(q, q->tail);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	w->inline_len = 0;
	memcpy(w->sge, wr->sg_list, array_size(wr->num_sge,
					       sizeof(*wr->sg_list)));
	q->tail++;
	return 0;
}

/**
 * shca_rq_empty() - no receive WQE is posted
 * @qp: the QP; caller holds @qp->lock
 *
 * Return: true if the receive queue is empty.
 */
bool shca_rq_empty(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->ibqp.srq)
		return shca_srq_empty(to_shca_srq(qp->ibqp.srq));
	return shca_rq_ring_empty(qp);
}

/**
 * shca_queue_init() - allocate a work queue
 * @q: the queue
 * @max_wr: work requests it holds
 * @max_sge: scatter/gather entries per request
 * @max_inline: send queues: bytes of inline data per request
 *
 * Return: 0 or -ENOMEM.
 */
int shca_queue_init(struct shca_queue *q, u32 max_wr, u32 max_sge,
		    u32 max_inline)
{
	size_t room = max_t(size_t, array_size(max_sge, sizeof(struct ib_sge)),
			    max_inline);
	u32 slots = roundup_pow_of_two(max(max_wr, 1U));

	q->slot_size = ALIGN(sizeof(struct shca_wqe) + room, 8);
	q->buf = shca_inject_fault() ? NULL :
		 kvcalloc(slots, q->slot_size, SHCA_GFP_QUEUE);
	if (!q->buf)
		return -ENOMEM;
	q->mask = slots - 1;
	q->max_wr = max_wr;
	q->max_sge = max_sge;
	return 0;
}

/**
 * shca_srq_pop() - take the receive WQE at the head of an SRQ
 * @srq: the SRQ
 * @out: receives a copy of the WQE (room for SHCA_MAX_SGE entries)
 *
 * Fires the armed limit when fewer than it are left.
 *
 * Context: any context; the caller holds the lock of the QP it takes the
 * WQE for.
 * Return: true if a WQE was taken.
 */
bool shca_srq_pop(struct shca_srq *srq, struct shca_wqe *out)
{
	bool taken, fire = false;

	spin_lock(&srq->lock);
	taken = shca_queue_take(&srq->rq, out);
	if (taken && srq->limit &&
	    shca_ring_used(srq->rq.tail, srq->rq.head) < srq->limit) {
		srq->limit = 0;
		fire = true;
	}
	spin_unlock(&srq->lock);
	if (fire)
		queue_work(shca_wq, &srq->limit_work);
	return taken;
}

/**
 * shca_srq_empty() - no receive WQE is posted to the SRQ
 * @srq: the SRQ
 *
 * Return: true if the SRQ is empty.
 */
bool shca_srq_empty(struct shca_srq *srq)
{
	bool empty;

	spin_lock(&srq->lock);
	empty = shca_queue_empty(&srq->rq);
	spin_unlock(&srq->lock);
	return empty;
}

/**
 * shca_wqe_copy() - copy between a buffer and a WQE's scatter list
 * @qp: the QP of the WQE (its PD)
 * @w: the WQE: its SGEs, or its inline data (read only)
 * @off: byte offset into the scatter list
 * @buf: the buffer (a packet's payload, a GRH, an atomic's value)
 * @len: bytes to copy
 * @access: the rights each SGE's key must grant
 * @dir: SHCA_COPY_TO_MR or SHCA_COPY_FROM_MR
 *
 * Context: process context; may fault in ODP pages.
 * Return: 0, -ERANGE past the list, or the MR engine's error.
 */
int shca_wqe_copy(struct shca_qp *qp, const struct shca_wqe *w, u64 off,
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
