// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Shared receive queues
 *
 * An SRQ is a receive queue that many QPs (RC and UD) take their receive
 * WQEs from. A responder delivering to a QP on an SRQ takes the WQE at
 * the head of the SRQ under the QP's lock, then the SRQ's (the only place
 * the two nest). The SRQ's limit, once armed with IB_SRQ_LIMIT, fires
 * IB_EVENT_SRQ_LIMIT_REACHED when a WQE taken leaves fewer than the limit
 * posted, and disarms itself; the event is reported from a work item, in
 * process context.
 *
 * A QP on an SRQ that enters the error state reports
 * IB_EVENT_QP_LAST_WQE_REACHED once the WQEs its peers already took from
 * the SRQ have completed (see shca_qp_srq_check()); WQEs still in the SRQ
 * belong to the SRQ and are not flushed. The core keeps an SRQ that QPs
 * use from being destroyed (-EBUSY).
 */

#include <linux/slab.h>

#include "shca_verbs.h"

static void shca_srq_limit_work(struct work_struct *work)
{
	struct shca_srq *srq = container_of(work, struct shca_srq,
					    limit_work);
	struct ib_event ev = {
		.device = srq->ibsrq.device,
		.element.srq = &srq->ibsrq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ibsrq.event_handler)
		srq->ibsrq.event_handler(&ev, srq->ibsrq.srq_context);
}

/**
 * shca_srq_init() - set up a new SRQ
 * @srq: the SRQ being created (zeroed by the core)
 * @init: creation attributes; @init->attr is updated with what was granted
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for an SRQ type other than IB_SRQT_BASIC;
 * -EINVAL for no or too many WQEs or SGEs, or a limit above max_wr;
 * -ENOMEM.
 */
int shca_srq_init(struct shca_srq *srq, struct ib_srq_init_attr *init)
{
	struct ib_srq_attr *attr = &init->attr;
	int err;

	if (init->srq_type != IB_SRQT_BASIC)
		return -EOPNOTSUPP;
	if (!attr->max_wr || attr->max_wr > SHCA_MAX_SRQ_WR ||
	    !attr->max_sge || attr->max_sge > SHCA_MAX_SRQ_SGE ||
	    attr->srq_limit > attr->max_wr)
		return -EINVAL;
	err = shca_queue_init(&srq->rq, attr->max_wr, attr->max_sge, 0);
	if (err)
		return err;
	spin_lock_init(&srq->lock);
	INIT_WORK(&srq->limit_work, shca_srq_limit_work);
	srq->limit = attr->srq_limit;
	return 0;
}

/**
 * shca_srq_fini() - destroy an SRQ no QP uses any more
 * @srq: the SRQ
 *
 * Its WQEs are dropped without completions.
 *
 * Context: process context; sleeps.
 */
void shca_srq_fini(struct shca_srq *srq)
{
	cancel_work_sync(&srq->limit_work);
	kvfree(srq->rq.buf);
}

/**
 * shca_srq_modify() - the modify_srq verb
 * @srq: the SRQ
 * @attr: new attributes
 * @mask: IB_SRQ_LIMIT arms the limit; resizing (IB_SRQ_MAX_WR) is not
 *	offered
 *
 * Return: 0; -EOPNOTSUPP for IB_SRQ_MAX_WR or unknown bits; -EINVAL for a
 * limit above max_wr.
 */
int shca_srq_modify(struct shca_srq *srq, const struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask)
{
	unsigned long flags;

	if (mask & ~IB_SRQ_LIMIT)
		return -EOPNOTSUPP;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->rq.max_wr)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

/**
 * shca_srq_query() - the query_srq verb
 * @srq: the SRQ
 * @attr: filled with max_wr, max_sge and the armed limit (0: not armed)
 */
void shca_srq_query(struct shca_srq *srq, struct ib_srq_attr *attr)
{
	unsigned long flags;

	spin_lock_irqsave(&srq->lock, flags);
	attr->max_wr = srq->rq.max_wr;
	attr->max_sge = srq->rq.max_sge;
	attr->srq_limit = srq->limit;
	spin_unlock_irqrestore(&srq->lock, flags);
}

/**
 * shca_srq_post_recv() - the post_srq_recv verb
 * @srq: the SRQ
 * @wr: chain of receive work requests
 * @bad_wr: set to the first request not posted
 *
 * Context: any context.
 * Return: 0; -EINVAL for too many SGEs; -ENOMEM when the SRQ is full.
 */
int shca_srq_post_recv(struct shca_srq *srq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		err = shca_queue_put_recv(&srq->rq, wr);
		if (err)
			break;
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (err)
		*bad_wr = wr;
	return err;
}
