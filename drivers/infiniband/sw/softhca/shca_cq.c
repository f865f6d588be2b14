// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - completion queues.
 *
 * A CQ is a ring of struct ib_wc filled by the QP engine (from its work
 * items, in process context) and drained by poll_cq (any context). The
 * ring is a power of two in size and holds one completion less than its
 * slots, so head == tail means empty. A completion that finds the ring
 * full is lost, the CQ reports IB_EVENT_CQ_ERR once and keeps working,
 * as a hardware CQ overrun does.
 *
 * Notification: req_notify_cq arms the CQ for the next completion or the
 * next solicited one; the completion that matches disarms it and calls
 * the consumer's handler, outside the CQ lock.
 */

#include <linux/log2.h>
#include <linux/slab.h>

#include "shca_verbs.h"

/**
 * shca_cq_init() - allocate the ring of a new CQ
 * @cq: CQ being created (zeroed by the core)
 * @cqe: completions it must hold, 1 .. SHCA_MAX_CQE
 *
 * Sets cq->ibcq.cqe to the capacity granted (at least @cqe).
 *
 * Context: process context.
 * Return: 0, -EINVAL for a bad @cqe or -ENOMEM.
 */
int shca_cq_init(struct shca_cq *cq, u32 cqe)
{
	u32 slots;

	if (!cqe || cqe > SHCA_MAX_CQE)
		return -EINVAL;
	slots = roundup_pow_of_two(cqe + 1);
	cq->ring = shca_inject_fault() ? NULL :
		   kvcalloc(slots, sizeof(*cq->ring), GFP_KERNEL);
	if (!cq->ring)
		return -ENOMEM;
	spin_lock_init(&cq->lock);
	cq->mask = slots - 1;
	cq->ibcq.cqe = cq->mask;
	return 0;
}

/**
 * shca_cq_fini() - free the ring of a CQ
 * @cq: CQ no QP uses any more (the core refuses to destroy it before)
 */
void shca_cq_fini(struct shca_cq *cq)
{
	kvfree(cq->ring);
	cq->ring = NULL;
}

/**
 * shca_cq_push() - add a completion
 * @cq: the CQ
 * @wc: the completion
 * @solicited: the completion is for a solicited message
 *
 * Context: any context; calls the CQ's completion or event handler.
 */
void shca_cq_push(struct shca_cq *cq, const struct ib_wc *wc, bool solicited)
{
	bool notify = false, overflow = false;
	unsigned long flags;

	spin_lock_irqsave(&cq->lock, flags);
	if (cq->tail - cq->head >= cq->mask) {
		overflow = !cq->overflowed;
		cq->overflowed = true;
	} else {
		cq->ring[cq->tail & cq->mask] = *wc;
		cq->tail++;
		if (cq->notify == IB_CQ_NEXT_COMP ||
		    (cq->notify == IB_CQ_SOLICITED &&
		     (solicited || wc->status != IB_WC_SUCCESS))) {
			cq->notify = 0;
			notify = true;
		}
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (overflow && cq->ibcq.event_handler) {
		struct ib_event ev = {
			.device = cq->ibcq.device,
			.element.cq = &cq->ibcq,
			.event = IB_EVENT_CQ_ERR,
		};

		cq->ibcq.event_handler(&ev, cq->ibcq.cq_context);
	}
	if (notify && cq->ibcq.comp_handler)
		cq->ibcq.comp_handler(&cq->ibcq, cq->ibcq.cq_context);
}

/**
 * shca_cq_poll() - take completions
 * @cq: the CQ
 * @num: at most this many
 * @wc: array of @num entries
 *
 * Context: any context.
 * Return: completions taken, 0 .. @num.
 */
int shca_cq_poll(struct shca_cq *cq, int num, struct ib_wc *wc)
{
	unsigned long flags;
	int n = 0;

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
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) && cq->head != cq->tail)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}
