// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Completion queues
 *
 * A CQ is a ring filled by the QP engine (from its work items, in process
 * context). The ring is a power of two in size and holds one completion
 * less than its slots, so head == tail means empty. A completion that
 * finds the ring full is lost, the CQ reports IB_EVENT_CQ_ERR once and
 * keeps working, as a hardware CQ overrun does.
 *
 * Kernel CQs keep struct ib_wc entries that poll_cq copies out. Their
 * wc->qp pointers stay valid because a QP's entries are purged from its
 * CQs when it is reset or destroyed (shca_cq_purge()), as a hardware
 * driver cleans its CQs.
 *
 * User CQs are rings the process maps (struct softhca_cq_ring in
 * <rdma/softhca-abi.h>) and polls itself: their completions carry QP
 * numbers, never kernel pointers, so nothing a process reads can outlive
 * the object it names. The kernel writes entries and the producer index,
 * and reads only the consumer index back, which a process can at worst
 * set so that it loses its own completions.
 *
 * Notification: req_notify_cq arms the CQ for the next completion or the
 * next solicited one; the completion that matches disarms it and calls
 * the consumer's handler, outside the CQ lock. Completions that a
 * poster's own context adds (post_send executes small requests at once,
 * see shca_exec.c) defer that call, and the one of IB_EVENT_CQ_ERR, to
 * the CQ's work item: a handler never runs inside the consumer's
 * post_send, where it could find the consumer's own locks held or post
 * again and recurse. The completion itself is in the ring before
 * post_send returns.
 */

#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "shca_verbs.h"

/**
 * shca_cq_ring_size() - bytes of the ring of a user CQ
 * @slots: entries, a power of two
 *
 * Return: the size of the mapping, a multiple of PAGE_SIZE.
 */
size_t shca_cq_ring_size(u32 slots)
{
	return PAGE_ALIGN(struct_size_t(struct softhca_cq_ring, cqe, slots));
}

static void shca_cq_notify_work(struct work_struct *work);

/**
 * shca_cq_init() - allocate the ring of a new CQ
 * @cq: CQ being created (zeroed by the core)
 * @cqe: completions it must hold, 1 .. SHCA_MAX_CQE
 * @user: the ring is for a process to map (cq->uring) rather than for
 *	poll_cq (cq->ring)
 *
 * Sets cq->ibcq.cqe to the capacity granted (at least @cqe). Both rings
 * are charged to the caller's memory cgroup. A user ring belongs to the
 * caller afterwards (the mmap entry that frees it, see shca_verbs.c).
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad @cqe or -ENOMEM.
 */
int shca_cq_init(struct shca_cq *cq, u32 cqe, bool user)
{
	u32 slots;

	if (!cqe || cqe > SHCA_MAX_CQE)
		return -EINVAL;
	slots = roundup_pow_of_two(cqe + 1);
	if (shca_inject_fault())
		return -ENOMEM;
	if (user) {
		cq->uring = __vmalloc(shca_cq_ring_size(slots),
				      SHCA_GFP_QUEUE | __GFP_ZERO);
		if (!cq->uring)
			return -ENOMEM;
	} else {
		cq->ring = kvcalloc(slots, sizeof(*cq->ring), SHCA_GFP_QUEUE);
		if (!cq->ring)
			return -ENOMEM;
	}
	spin_lock_init(&cq->lock);
	INIT_WORK(&cq->notify_work, shca_cq_notify_work);
	cq->mask = slots - 1;
	cq->ibcq.cqe = cq->mask;
	return 0;
}

/**
 * shca_cq_fini() - stop a CQ's work item; free the ring of a kernel CQ
 * @cq: CQ no QP uses any more (the core refuses to destroy it before), so
 *	nothing adds completions to it
 *
 * The ring of a user CQ is freed with its mmap entry instead.
 *
 * Context: process context; sleeps.
 */
void shca_cq_fini(struct shca_cq *cq)
{
	cancel_work_sync(&cq->notify_work);
	kvfree(cq->ring);
	cq->ring = NULL;
}

/* The user ring's view of a completion: numbers only. */
static void shca_cqe_from_wc(struct softhca_cqe *e, const struct ib_wc *wc)
{
	e->wr_id = wc->wr_id;
	e->byte_len = wc->byte_len;
	e->ex = 0;
	e->flags = 0;
	if (wc->wc_flags & IB_WC_WITH_IMM) {
		e->ex = (__force u32)wc->ex.imm_data;
		e->flags |= SOFTHCA_CQE_WITH_IMM;
	} else if (wc->wc_flags & IB_WC_WITH_INVALIDATE) {
		e->ex = wc->ex.invalidate_rkey;
		e->flags |= SOFTHCA_CQE_WITH_INV;
	}
	if (wc->wc_flags & IB_WC_GRH)
		e->flags |= SOFTHCA_CQE_GRH;
	e->qp_num = wc->qp->qp_num;
	e->src_qp = wc->src_qp;
	e->status = wc->status;
	e->opcode = wc->opcode;
	e->sl = wc->sl;
	e->pkey_index = wc->pkey_index;
	e->reserved = 0;
}

/* Store one completion; false if the ring is full. */
static bool shca_cq_store(struct shca_cq *cq, const struct ib_wc *wc)
{
	lockdep_assert_held(&cq->lock);

	if (cq->uring) {
		/* Any consumer value the process wrote only bounds its ring. */
		if (!shca_ring_room(cq->tail, READ_ONCE(cq->uring->consumer),
				    cq->mask))
			return false;
		shca_cqe_from_wc(&cq->uring->cqe[cq->tail & cq->mask], wc);
		cq->tail++;
		/* The entry is visible before the index that publishes it. */
		smp_store_release(&cq->uring->producer, cq->tail);
		return true;
	}
	if (!shca_ring_room(cq->tail, cq->head, cq->mask))
		return false;
	cq->ring[cq->tail & cq->mask] = *wc;
	cq->tail++;
	return true;
}

/* Completions waiting to be polled; caller holds @cq->lock. */
static bool shca_cq_pending(struct shca_cq *cq)
{
	lockdep_assert_held(&cq->lock);
	if (cq->uring)
		return cq->tail != READ_ONCE(cq->uring->consumer);
	return cq->head != cq->tail;
}

static void shca_cq_handlers(struct shca_cq *cq, bool comp, bool err)
{
	if (err && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (comp && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

static void shca_cq_notify_work(struct work_struct *work)
{
	struct shca_cq *cq = container_of(work, struct shca_cq, notify_work);

	shca_cq_handlers(cq,
			 test_and_clear_bit(SHCA_CQ_DEFER_COMP, &cq->deferred),
			 test_and_clear_bit(SHCA_CQ_DEFER_ERR, &cq->deferred));
}

/**
 * shca_cq_push() - add a completion
 * @cq: the CQ
 * @wc: the completion; @wc->qp is the QP it belongs to, alive during
 *	the call
 * @solicited: the completion is for a solicited message
 * @defer: called from a poster's context: the CQ's handlers run later,
 *	from its work item, instead of from here
 *
 * Context: any context; without @defer, calls the CQ's completion or
 * event handler.
 */
void shca_cq_push(struct shca_cq *cq, const struct ib_wc *wc, bool solicited,
		  bool defer)
{
	bool notify = false, overflow = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (!shca_cq_store(cq, wc)) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else if (cq->notify == IB_CQ_NEXT_COMP ||
		   (cq->notify == IB_CQ_SOLICITED &&
		    (solicited || wc->status != IB_WC_SUCCESS))) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (!notify && !overflow)
		return;
	if (!defer) {
		shca_cq_handlers(cq, notify, overflow);
		return;
	}
	if (overflow)
		set_bit(SHCA_CQ_DEFER_ERR, &cq->deferred);
	if (notify)
		set_bit(SHCA_CQ_DEFER_COMP, &cq->deferred);
	queue_work(shca_wq, &cq->notify_work);
}

/**
 * shca_cq_purge() - drop every completion of a QP from a kernel CQ
 * @cq: the CQ
 * @qp: the QP being reset or destroyed; nothing adds completions for it
 *	any more
 *
 * Keeps the order of the other completions. User CQs are left alone:
 * their entries hold QP numbers only, and the provider cleans its ring
 * itself when it resets or destroys a QP.
 *
 * Context: any context.
 */
void shca_cq_purge(struct shca_cq *cq, struct ib_qp *qp)
{
	unsigned long flags;
	u32 from, to;

	if (!cq->ring)
		return;
	spin_lock_irqsave(&cq->lock, flags);
	for (from = cq->head, to = cq->head; from != cq->tail; from++) {
		if (cq->ring[from & cq->mask].qp == qp)
			continue;
		if (to != from)
			cq->ring[to & cq->mask] = cq->ring[from & cq->mask];
		to++;
	}
	cq->tail = to;
	spin_unlock_irqrestore(&cq->lock, flags);
}

/**
 * shca_cq_poll() - take completions
 * @cq: the CQ
 * @num: at most this many
 * @wc: array of @num entries
 *
 * Context: any context.
 * Return: completions taken, 0 .. @num; -EOPNOTSUPP for a user CQ.
 */
int shca_cq_poll(struct shca_cq *cq, int num, struct ib_wc *wc)
{
	unsigned long flags;
	int n = 0;

	/* A process polls the ring it maps (uverbs has no POLL_CQ here). */
	if (!cq->ring)
		return -EOPNOTSUPP;
	spin_lock_irqsave(&cq->lock, flags);
	while (n < num && cq->head != cq->tail) {
		wc[n++] = cq->ring[cq->head & cq->mask];
		cq->head++;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * shca_cq_arm() - request a notification
 * @cq: the CQ
 * @flags: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP, optionally with
 *	IB_CQ_REPORT_MISSED_EVENTS
 *
 * Context: any context.
 * Return: 0; with IB_CQ_REPORT_MISSED_EVENTS, 1 if completions are
 * already waiting (the caller must poll again).
 */
int shca_cq_arm(struct shca_cq *cq, enum ib_cq_notify_flags flags)
{
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	/* A pending request for every completion is not narrowed. */
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && shca_cq_pending(cq))
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
