// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: QP contexts
 *
 * What the transport engine knows of a QP, as a hardware HCA's QP
 * context table is what its transport units see: the table QP numbers
 * resolve through, the references a lookup takes, the work item a QP
 * executes on and how it is kicked, the error state and the
 * asynchronous events the engine raises. The QP object itself (create,
 * modify, query, destroy: shca_qp.c) sits above the transport and
 * uses this; the transport (shca_exec.c, shca_wire.c, shca_req.c,
 * shca_resp.c) and the queues (shca_wq.c) call only this, never back up
 * into shca_qp.c.
 *
 * QP numbers are unique across every softhca device of the host (one
 * table, 24-bit numbers from a random start): a requester finds its peer
 * by dest_qp_num alone and then checks that the peer's device owns the
 * destination GID (see shca_exec.c). A destroyed QP's number is held
 * back from reuse for SHCA_QPN_HOLD (see shca_qpn_hold()).
 *
 * The GSI QP is the exception: every device has its own QP1, created by
 * the core's MAD layer when the device registers, so QP1s live in a list
 * of their own and a datagram to QP number 1 goes to the QP1 of the
 * device that owns its destination GID (shca_gsi_get()). QP0 (the SMI)
 * does not exist on a RoCE port.
 *
 * Lifetime rule for lookups by number: shca_qp_get() finds a QP's link
 * (struct shca_qp_link) under RCU and takes a reference only if the count
 * is not zero. The core kfree()s a QP as soon as ->destroy_qp returns, so
 * the reference count lives in the link, which is freed only after a
 * grace period: shca_qp_fini() unpublishes the link, drops the QP's own
 * reference, waits until no peer holds one and returns at once; a lookup
 * racing with it reads only the link and finds the count at zero.
 */

#include <linux/random.h>
#include <linux/workqueue.h>

#include "shca_verbs.h"

/* The driver's workqueue (shca_qpc_init()). */
struct workqueue_struct *shca_wq;

static DEFINE_XARRAY_ALLOC(shca_qp_xa);
static u32 shca_qp_next;

/* Every device's GSI QP; RCU readers, writers under shca_gsi_lock. */
static LIST_HEAD(shca_gsi_qps);
static DEFINE_SPINLOCK(shca_gsi_lock);

/*
 * Numbers of destroyed QPs stay reserved in shca_qp_xa (a NULL entry:
 * lookups find nothing, allocations skip it) for SHCA_QPN_HOLD, or until
 * SHCA_QPN_HELD newer ones are held, so that a requester still connected
 * to a destroyed QP cannot reach a QP that got its number.
 */
#define SHCA_QPN_HOLD	(10 * HZ)
#define SHCA_QPN_HELD	1024

static struct {
	struct mutex lock; /* protects everything below */
	u32 qpn[SHCA_QPN_HELD];
	unsigned long since[SHCA_QPN_HELD];
	u32 head;	/* oldest held number (free-running) */
	u32 tail;	/* next free slot (free-running) */
} shca_qpn_held = { .lock = __MUTEX_INITIALIZER(shca_qpn_held.lock) };

/* Release held numbers older than SHCA_QPN_HOLD; caller holds the lock. */
static void shca_qpn_release_old(bool all)
{
	lockdep_assert_held(&shca_qpn_held.lock);
	while (shca_qpn_held.head != shca_qpn_held.tail) {
		u32 i = shca_qpn_held.head % SHCA_QPN_HELD;

		if (!all && shca_qpn_held.tail - shca_qpn_held.head <
			    SHCA_QPN_HELD &&
		    time_before(jiffies, shca_qpn_held.since[i] + SHCA_QPN_HOLD))
			break;
		xa_erase(&shca_qp_xa, shca_qpn_held.qpn[i]);
		shca_qpn_held.head++;
	}
}

/* Keep @qpn reserved (its entry is NULL already) for a while. */
static void shca_qpn_hold(u32 qpn)
{
	u32 i;

	mutex_lock(&shca_qpn_held.lock);
	if (shca_qpn_held.tail - shca_qpn_held.head == SHCA_QPN_HELD) {
		/* Full: the oldest number goes back now. */
		xa_erase(&shca_qp_xa,
			 shca_qpn_held.qpn[shca_qpn_held.head % SHCA_QPN_HELD]);
		shca_qpn_held.head++;
	}
	i = shca_qpn_held.tail++ % SHCA_QPN_HELD;
	shca_qpn_held.qpn[i] = qpn;
	shca_qpn_held.since[i] = jiffies;
	shca_qpn_release_old(false);
	mutex_unlock(&shca_qpn_held.lock);
}

/**
 * shca_qpn_release_all() - release every held QP number
 *
 * For module exit and for tests.
 */
void shca_qpn_release_all(void)
{
	mutex_lock(&shca_qpn_held.lock);
	shca_qpn_release_old(true);
	mutex_unlock(&shca_qpn_held.lock);
}
EXPORT_SYMBOL_IF_KUNIT(shca_qpn_release_all);

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_qpn_set_next() - make @qpn the next number tried (KUnit)
 * @qpn: a QP number
 */
void shca_qpn_set_next(u32 qpn)
{
	shca_qp_next = qpn;
}
EXPORT_SYMBOL_IF_KUNIT(shca_qpn_set_next);
#endif

/**
 * shca_qp_get() - find a QP by number and take a reference
 * @qpn: QP number
 *
 * The reference is taken under RCU on the QP's link, which outlives a
 * grace period after shca_qp_fini() unpublished it (see the top of this
 * file).
 *
 * Context: any context.
 * Return: the QP, or NULL if there is none (or it is being destroyed).
 */
struct shca_qp *shca_qp_get(u32 qpn)
{
	struct shca_qp_link *l;
	struct shca_qp *qp = NULL;

	rcu_read_lock();
	l = xa_load(&shca_qp_xa, qpn);
	if (l && kref_get_unless_zero(&l->ref))
		qp = l->qp;
	rcu_read_unlock();
	return qp;
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_get);

/**
 * shca_gsi_get() - find the GSI QP a datagram to QP1 goes to
 * @from: device of the sender
 * @dgid: destination GID of the datagram
 *
 * Context: any context.
 * Return: the GSI QP, with a reference, of the device in @from's network
 * namespace that owns @dgid; NULL if there is none.
 */
struct shca_qp *shca_gsi_get(const struct shca_dev *from,
			     const union ib_gid *dgid)
{
	struct shca_qp *qp, *found = NULL;
	struct shca_qp_link *l;

	rcu_read_lock();
	list_for_each_entry_rcu(l, &shca_gsi_qps, gsi_entry) {
		/* The QP and its device only with a reference held. */
		if (!kref_get_unless_zero(&l->ref))
			continue;
		qp = l->qp;
		if (shca_dev_same_net(qp->sdev, from) &&
		    shca_dev_owns_gid(qp->sdev, dgid)) {
			found = qp;
			break;
		}
		shca_qp_put(qp);
	}
	rcu_read_unlock();
	return found;
}
EXPORT_SYMBOL_IF_KUNIT(shca_gsi_get);

/* Make @qp its device's QP1; -EBUSY if the device has one. */
static int shca_qpc_publish_gsi(struct shca_qp *qp)
{
	struct shca_qp_link *other;
	int err = 0;

	spin_lock(&shca_gsi_lock);
	/* Links in the list belong to QPs not destroyed yet. */
	list_for_each_entry(other, &shca_gsi_qps, gsi_entry) {
		if (other->qp->sdev == qp->sdev) {
			err = -EBUSY;
			goto out;
		}
	}
	qp->ibqp.qp_num = 1;
	list_add_tail_rcu(&qp->link->gsi_entry, &shca_gsi_qps);
out:
	spin_unlock(&shca_gsi_lock);
	return err;
}

/**
 * shca_qpc_publish() - give a new QP its number and make it findable
 * @qp: the QP, its link set up
 * @gsi: the GSI QP (number 1, one per device)
 *
 * Return: 0; -EBUSY for a second GSI QP of a device; -ENOMEM or -EBUSY
 * without a free number.
 */
int shca_qpc_publish(struct shca_qp *qp, bool gsi)
{
	u32 qpn;
	int err;

	if (gsi)
		return shca_qpc_publish_gsi(qp);
	err = xa_alloc_cyclic(&shca_qp_xa, &qpn, qp->link,
			      XA_LIMIT(SHCA_QPN_MIN, SHCA_QPN_LAST),
			      &shca_qp_next, GFP_KERNEL);
	if (err < 0)
		return err;
	qp->ibqp.qp_num = qpn;
	return 0;
}

/**
 * shca_qpc_unpublish() - lookups by number find a QP no more
 * @qp: the QP, being destroyed
 *
 * Its number stays reserved until shca_qpc_release_number().
 */
void shca_qpc_unpublish(struct shca_qp *qp)
{
	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		spin_lock(&shca_gsi_lock);
		list_del_rcu(&qp->link->gsi_entry);
		spin_unlock(&shca_gsi_lock);
	} else {
		/* NULL keeps the number reserved; shca_qpn_hold() frees it. */
		xa_store(&shca_qp_xa, qp->ibqp.qp_num, NULL, GFP_KERNEL);
	}
}

/**
 * shca_qpc_release_number() - a destroyed QP's number, held back a while
 * @qp: the QP, unpublished, no peer holding it
 */
void shca_qpc_release_number(struct shca_qp *qp)
{
	if (qp->ibqp.qp_type != IB_QPT_GSI)
		shca_qpn_hold(qp->ibqp.qp_num);
}

static void shca_qp_release(struct kref *ref)
{
	complete(&container_of(ref, struct shca_qp_link, ref)->released);
}

/**
 * shca_qp_put() - drop a reference taken by shca_qp_get()
 * @qp: the QP
 */
void shca_qp_put(struct shca_qp *qp)
{
	kref_put(&qp->link->ref, shca_qp_release);
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_put);

/**
 * shca_qp_event() - report an affiliated asynchronous event of a QP
 * @qp: the QP
 * @type: the event
 *
 * Context: process context, no lock of the driver held, not inside the
 * consumer's post_send (see shca_qp_event_later()).
 */
void shca_qp_event(struct shca_qp *qp, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = qp->ibqp.device,
		.element.qp = &qp->ibqp,
		.event = type,
	};

	if (qp->ibqp.event_handler)
		qp->ibqp.event_handler(&ev, qp->ibqp.qp_context);
}

/**
 * shca_qp_event_later() - have the QP's work item report an event
 * @qp: the QP; the caller holds a reference or owns it
 * @type: the event
 *
 * For events caused from a poster's context: the consumer's handler must
 * not run inside its own post_send. Each kind of event is reported once
 * however often it is raised before the work item runs.
 *
 * Context: any context.
 */
void shca_qp_event_later(struct shca_qp *qp, enum ib_event_type type)
{
	set_bit(type, &qp->events);
	shca_qp_kick_now(qp);
}

/**
 * shca_qp_report_events() - report the events raised with
 *	shca_qp_event_later()
 * @qp: the QP
 *
 * Context: the QP's work item.
 */
void shca_qp_report_events(struct shca_qp *qp)
{
	unsigned long ev = xchg(&qp->events, 0);
	unsigned int type;

	for_each_set_bit(type, &ev, BITS_PER_LONG)
		shca_qp_event(qp, type);
}

/*
 * A QP on an SRQ in the error state takes no more receive WQEs from it
 * once the ones its peers already took have completed: then, once, it
 * reports IB_EVENT_QP_LAST_WQE_REACHED (ib_drain_qp() waits for it).
 */
static bool shca_qp_last_wqe_due(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (!qp->ibqp.srq || qp->state != IB_QPS_ERR || qp->recv_inflight ||
	    qp->last_wqe_sent)
		return false;
	qp->last_wqe_sent = true;
	return true;
}

/**
 * shca_qp_srq_check() - account a completed receive; Last WQE Reached
 * @qp: a QP, possibly on an SRQ
 * @done: a receive WQE it took (shca_rq_pop()) has just completed
 * @defer: called from a poster's context: report it from the work item
 *
 * In the error state, the last receive in flight lets the flush of the
 * rest go on; on an SRQ, it reports IB_EVENT_QP_LAST_WQE_REACHED if due.
 *
 * Context: process context, no lock of the driver held; with @defer, any
 * context.
 */
void shca_qp_srq_check(struct shca_qp *qp, bool done, bool defer)
{
	unsigned long flags;
	bool due, flush;

	if (!qp->ibqp.srq && !done)
		return;
	spin_lock_irqsave(&qp->lock, flags);
	if (done && !WARN_ON_ONCE(!qp->recv_inflight))
		qp->recv_inflight--;
	flush = done && !qp->recv_inflight && qp->state == IB_QPS_ERR;
	due = shca_qp_last_wqe_due(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	if (flush)
		shca_qp_kick(qp);
	if (due && defer)
		shca_qp_event_later(qp, IB_EVENT_QP_LAST_WQE_REACHED);
	else if (due)
		shca_qp_event(qp, IB_EVENT_QP_LAST_WQE_REACHED);
}

/**
 * shca_qp_kick() - let the QP's work item run
 * @qp: the QP; the caller holds a reference or owns it
 *
 * Context: any context.
 */
void shca_qp_kick(struct shca_qp *qp)
{
	queue_delayed_work(shca_wq, &qp->work, 0);
}

/**
 * shca_qp_kick_now() - run the QP's work item now, cutting a retry delay
 * @qp: the QP; the caller holds a reference or owns it
 *
 * For the error state: the flush must not wait out an RNR or ACK timeout
 * (ib_drain_qp() waits for it).
 *
 * Context: any context.
 */
void shca_qp_kick_now(struct shca_qp *qp)
{
	mod_delayed_work(shca_wq, &qp->work, 0);
}

/**
 * shca_qp_set_error() - move a QP to the error state
 * @qp: the QP; caller holds @qp->lock
 *
 * The caller kicks the QP afterwards so that its work item flushes the
 * outstanding work requests. A QP in RESET stays there: the data path
 * may still be finishing a request of the connection modify_qp just
 * reset, whose error must not land on the QP after the reset.
 */
void shca_qp_set_error(struct shca_qp *qp)
{
	lockdep_assert_held(&qp->lock);
	if (qp->state != IB_QPS_RESET)
		qp->state = IB_QPS_ERR;
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_set_error);

/* The QP of @l, if it is @sdev's: to the error state, flushed. */
static void shca_qp_link_fatal(struct shca_qp_link *l, struct shca_dev *sdev)
{
	unsigned long flags;
	struct shca_qp *qp;

	if (!kref_get_unless_zero(&l->ref))
		return;
	qp = l->qp;
	if (qp->sdev == sdev) {
		spin_lock_irqsave(&qp->lock, flags);
		if (qp->state != IB_QPS_RESET)
			shca_qp_set_error(qp);
		spin_unlock_irqrestore(&qp->lock, flags);
		shca_qp_kick_now(qp);
	}
	shca_qp_put(qp);
}

/**
 * shca_qp_device_fatal() - the device is going away under its users
 * @sdev: the device; its netdev is unregistering
 *
 * As a hardware HCA does on a catastrophic error: report
 * IB_EVENT_DEVICE_FATAL, move every QP of the device to the error state
 * and flush it, and execute nothing more on it (a QP brought back to RTS
 * is moved to the error state again). ULPs tearing down then see their
 * work requests complete with IB_WC_WR_FLUSH_ERR at once instead of
 * waiting out transport timeouts on a port that is gone.
 *
 * Context: process context.
 */
void shca_qp_device_fatal(struct shca_dev *sdev)
{
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = SHCA_PORT,
		.event = IB_EVENT_DEVICE_FATAL,
	};
	struct shca_qp_link *l;
	unsigned long idx;

	WRITE_ONCE(sdev->fatal, true);
	rcu_read_lock();
	xa_for_each(&shca_qp_xa, idx, l)
		shca_qp_link_fatal(l, sdev);
	list_for_each_entry_rcu(l, &shca_gsi_qps, gsi_entry)
		shca_qp_link_fatal(l, sdev);
	rcu_read_unlock();
	ib_dispatch_event(&ev);
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_device_fatal);

/**
 * shca_qp_table_fini() - forget the held QP numbers; every QP is gone
 */
void shca_qp_table_fini(void)
{
	shca_qpn_release_all();
	xa_destroy(&shca_qp_xa);
}

/**
 * shca_qp_table_init() - seed the QP number allocator
 */
void shca_qp_table_init(void)
{
	shca_qp_next = get_random_u32_inclusive(SHCA_QPN_MIN, SHCA_QPN_LAST);
}

/**
 * shca_qpc_init() - create the driver's workqueue: QPs execute on it,
 *	CQ handlers and SRQ limit events run on it, ODP faults resolve on it
 *
 * Return: 0 or -ENOMEM.
 */
int shca_qpc_init(void)
{
	/* Storage ULPs may need their QPs to progress to reclaim memory. */
	shca_wq = alloc_workqueue("softhca", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return shca_wq ? 0 : -ENOMEM;
}

/**
 * shca_qpc_fini() - destroy the workqueue; every QP is gone
 */
void shca_qpc_fini(void)
{
	destroy_workqueue(shca_wq);
}
