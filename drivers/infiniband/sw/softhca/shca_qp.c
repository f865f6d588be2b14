// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Queue pairs
 *
 * The QP table, the state machine, and posting to the send and receive
 * queues of reliable-connected QPs.
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
 *
 * Queues are rings of fixed-size slots (struct shca_wqe plus room for the
 * scatter/gather list or inline data). The poster fills the slot at the
 * tail under the QP lock; the QP's work item executes the slot at the
 * head and advances the head only when the WQE has completed, so a slot
 * is never overwritten while it is being executed.
 *
 * The QP engine takes ib_send_wr, ib_recv_wr and ib_qp_attr directly:
 * they are this HCA's work-queue descriptors, and copying them into a
 * second set of structures would only add a layer.
 */

#include <linux/log2.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"
#include "shca_wire.h"

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
static int shca_gsi_publish(struct shca_qp *qp)
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

static void shca_qp_wake_requester(struct shca_qp *qp, u32 dest_qpn);
static void shca_qp_recv_posted(struct shca_qp *qp, unsigned long flags)
	__releases(&qp->lock);

/*
 * Mapped work queues (see softhca-abi.h). The process writes slots and,
 * for the receive ring, the producer; the kernel reads each value once
 * (READ_ONCE()) into its own queue and validates it there, so a process
 * changing its ring under the kernel changes nothing but what it posts.
 */

static void *shca_uring_slot(const struct shca_uring *u,
			     const struct shca_queue *q, u32 idx)
{
	return (void *)u->ring + SOFTHCA_WQ_RING_HDR +
	       (size_t)(idx & q->mask) * u->slot_size;
}

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

/* RESET: the receive ring restarts empty at the process' producer. */
static void shca_rq_reset(struct shca_qp *qp)
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

static int shca_qp_check_init_attr(const struct ib_qp_init_attr *init,
				   bool user)
{
	const struct ib_qp_cap *cap = &init->cap;

	if ((init->qp_type != IB_QPT_RC && init->qp_type != IB_QPT_UC &&
	     init->qp_type != IB_QPT_UD && init->qp_type != IB_QPT_GSI) ||
	    (init->create_flags & ~IB_QP_CREATE_INTEGRITY_EN) ||
	    init->rwq_ind_tbl)
		return -EOPNOTSUPP;
	/* Signature offload is for kernel RC connections (as on mlx5). */
	if ((init->create_flags & IB_QP_CREATE_INTEGRITY_EN) &&
	    (user || init->qp_type != IB_QPT_RC))
		return -EINVAL;
	if (init->srq && init->qp_type == IB_QPT_GSI)
		return -EINVAL;
	/* QP1 belongs to the kernel's MAD layer. */
	if (init->qp_type == IB_QPT_GSI &&
	    (user || init->port_num != SHCA_PORT))
		return -EINVAL;
	if (cap->max_send_wr > SHCA_MAX_QP_WR ||
	    (!init->srq && cap->max_recv_wr > SHCA_MAX_QP_WR) ||
	    cap->max_send_sge > SHCA_MAX_SGE ||
	    (!init->srq && cap->max_recv_sge > SHCA_MAX_SGE) ||
	    cap->max_inline_data > SHCA_MAX_INLINE)
		return -EINVAL;
	return 0;
}

/**
 * shca_qp_init() - set up a new QP and give it a number
 * @qp: QP being created (zeroed by the core)
 * @sdev: its device
 * @init: creation attributes; @init->cap is updated with what was granted
 * @user: created for a user context
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for a QP type or feature the device lacks
 * (only RC, UC, UD and GSI QPs without creation flags); -EINVAL for
 * capabilities above the device limits, a GSI QP for a user, another
 * port or on an SRQ; -EBUSY for a second GSI QP; -ENOMEM; -ENOSPC when the device has
 * SHCA_MAX_QP QPs.
 */
int shca_qp_init(struct shca_qp *qp, struct shca_dev *sdev,
		 struct ib_qp_init_attr *init, bool user)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 qpn;
	int err;

	err = shca_qp_check_init_attr(init, user);
	if (err)
		return err;
	if (atomic_inc_return(&sdev->num_qps) > SHCA_MAX_QP) {
		err = -ENOSPC;
		goto err_count;
	}

	qp->sdev = sdev;
	qp->user = user;
	qp->state = IB_QPS_RESET;
	qp->sq_sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->max_inline = cap->max_inline_data;
	qp->path_mtu = IB_MTU_1024;
	spin_lock_init(&qp->lock);
	mutex_init(&qp->post_mutex);
	mutex_init(&qp->modify_mutex);
	INIT_DELAYED_WORK(&qp->work, shca_qp_work);
	skb_queue_head_init(&qp->rxq);
	timer_setup(&qp->wtimer, shca_req_timer, 0);

	qp->link = shca_inject_fault() ? NULL :
		   kzalloc(sizeof(*qp->link), GFP_KERNEL_ACCOUNT);
	if (!qp->link) {
		err = -ENOMEM;
		goto err_count;
	}
	kref_init(&qp->link->ref);
	init_completion(&qp->link->released);
	qp->link->qp = qp;

	err = shca_queue_init(&qp->sq, cap->max_send_wr, cap->max_send_sge,
			      cap->max_inline_data);
	if (err)
		goto err_free_link;
	/* On an SRQ, receives come from the SRQ: an empty receive queue. */
	if (init->srq) {
		cap->max_recv_wr = 0;
		cap->max_recv_sge = 0;
	}
	err = shca_queue_init(&qp->rq, cap->max_recv_wr, cap->max_recv_sge, 0);
	if (err)
		goto err_free_sq;
	/* Responder scratch: a receive WQE popped from a peer. */
	qp->resp_wqe = shca_inject_fault() ? NULL :
		       kmalloc(struct_size(qp->resp_wqe, sge, SHCA_MAX_SGE),
			       GFP_KERNEL_ACCOUNT);
	if (!qp->resp_wqe) {
		err = -ENOMEM;
		goto err_free_rq;
	}
	qp->held = shca_inject_fault() ? NULL :
		       kcalloc(max(qp->sq.max_sge, 1U), sizeof(*qp->held),
			       GFP_KERNEL_ACCOUNT);
	if (!qp->held) {
		err = -ENOMEM;
		goto err_free_resp;
	}
	if (user) {
		qp->scratch = shca_inject_fault() ? NULL :
			      kmalloc(qp->sq.slot_size, GFP_KERNEL_ACCOUNT);
		if (!qp->scratch) {
			err = -ENOMEM;
			goto err_free_held;
		}
	}
	/* The receive WQE a SEND from the wire fills, packet by packet. */
	if (init->qp_type == IB_QPT_RC || init->qp_type == IB_QPT_UC) {
		qp->wresp.rwqe = shca_inject_fault() ? NULL :
			kmalloc(struct_size(qp->wresp.rwqe, sge, SHCA_MAX_SGE),
				GFP_KERNEL_ACCOUNT);
		if (!qp->wresp.rwqe) {
			err = -ENOMEM;
			goto err_free_scratch;
		}
	}

	if (init->qp_type == IB_QPT_GSI) {
		err = shca_gsi_publish(qp);
		if (err)
			goto err_free_scratch;
		return 0;
	}
	err = shca_inject_fault() ? -ENOMEM :
	      xa_alloc_cyclic(&shca_qp_xa, &qpn, qp->link,
			      XA_LIMIT(SHCA_QPN_MIN, SHCA_QPN_LAST),
			      &shca_qp_next, GFP_KERNEL);
	if (err < 0)
		goto err_free_scratch;
	qp->ibqp.qp_num = qpn;
	return 0;

err_free_scratch:
	kfree(qp->wresp.res);
	kfree(qp->wresp.rwqe);
	kfree(qp->scratch);
err_free_held:
	kfree(qp->held);
err_free_resp:
	kfree(qp->resp_wqe);
err_free_rq:
	kvfree(qp->rq.buf);
err_free_sq:
	kvfree(qp->sq.buf);
err_free_link:
	kfree(qp->link);
err_count:
	atomic_dec(&sdev->num_qps);
	return err;
}

/* Drop @qp's completions from its kernel CQs (reset, destroy). */
static void shca_qp_purge_cqs(struct shca_qp *qp)
{
	shca_cq_purge(to_shca_cq(qp->ibqp.send_cq), &qp->ibqp);
	if (qp->ibqp.recv_cq != qp->ibqp.send_cq)
		shca_cq_purge(to_shca_cq(qp->ibqp.recv_cq), &qp->ibqp);
}

/**
 * shca_qp_fini() - destroy a QP
 * @qp: the QP
 *
 * Detaches it from its multicast groups, unpublishes its link (its
 * number is held back from reuse for a while), drops its own reference
 * and waits until no peer delivering to it holds one, stops its work
 * item, drops its completions from its kernel CQs and frees its queues;
 * the link goes after a grace period. No grace period is waited for: a
 * lookup racing with destroy reads only the link. Outstanding work
 * requests are dropped without completions (consumers drain first).
 *
 * Context: process context; sleeps.
 */
void shca_qp_fini(struct shca_qp *qp)
{
	unsigned long flags;

	spin_lock_irqsave(&qp->lock, flags);
	qp->state = IB_QPS_RESET;
	spin_unlock_irqrestore(&qp->lock, flags);

	shca_mcast_detach_all(qp);
	if (qp->ibqp.qp_type == IB_QPT_GSI) {
		spin_lock(&shca_gsi_lock);
		list_del_rcu(&qp->link->gsi_entry);
		spin_unlock(&shca_gsi_lock);
	} else {
		/* NULL keeps the number reserved; shca_qpn_hold() frees it. */
		xa_store(&shca_qp_xa, qp->ibqp.qp_num, NULL, GFP_KERNEL);
	}
	shca_qp_put(qp);
	wait_for_completion(&qp->link->released);
	/* No peer can queue our work any more; stop it for good. */
	shca_qp_exec_stop(qp);
	/* Its timer may queue the work item once more: stop both again. */
	timer_delete_sync(&qp->wtimer);
	cancel_delayed_work_sync(&qp->work);
	shca_wire_rxq_purge(qp);
	shca_qp_purge_cqs(qp);
	if (qp->ibqp.qp_type != IB_QPT_GSI)
		shca_qpn_hold(qp->ibqp.qp_num);

	kfree_rcu(qp->link, rcu);
	kfree(qp->wresp.res);
	kfree(qp->wresp.rwqe);
	kfree(qp->scratch);
	kfree(qp->held);
	kfree(qp->resp_wqe);
	kvfree(qp->rq.buf);
	kvfree(qp->sq.buf);
	atomic_dec(&qp->sdev->num_qps);
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

/*
 * qp_access_flags: the responder's remote rights are what counts; other
 * IB_ACCESS_* flags are taken and ignored, as mlx5 and rxe do (rdma-core's
 * tests pass an MR's access flags, IB_ACCESS_ON_DEMAND included).
 * Undefined bits are refused.
 */
#define SHCA_QP_ACCESS_FLAGS	IB_ACCESS_SUPPORTED

#define SHCA_QP_ATTR_SUPPORTED \
	(IB_QP_STATE | IB_QP_CUR_STATE | IB_QP_ACCESS_FLAGS | \
	 IB_QP_PKEY_INDEX | IB_QP_PORT | IB_QP_AV | IB_QP_PATH_MTU | \
	 IB_QP_TIMEOUT | IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_RQ_PSN | \
	 IB_QP_MAX_QP_RD_ATOMIC | IB_QP_MIN_RNR_TIMER | IB_QP_SQ_PSN | \
	 IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_DEST_QPN | IB_QP_QKEY)

static int shca_qp_check_attr(const struct ib_qp_attr *attr, int mask)
{
	if (mask & ~SHCA_QP_ATTR_SUPPORTED)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_ACCESS_FLAGS) &&
	    (attr->qp_access_flags & ~SHCA_QP_ACCESS_FLAGS))
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SHCA_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PORT) && attr->port_num != SHCA_PORT)
		return -EINVAL;
	if (mask & IB_QP_AV) {
		const struct rdma_ah_attr *ah = &attr->ah_attr;

		if (!(rdma_ah_get_ah_flags(ah) & IB_AH_GRH) ||
		    rdma_ah_read_grh(ah)->sgid_index >= SHCA_GID_TBL_LEN)
			return -EINVAL;
	}
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SHCA_MAX_INIT_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SHCA_MAX_RD_ATOM)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SHCA_QPN_MAX)
		return -EINVAL;
	return 0;
}

static void shca_qp_apply_attr(struct shca_qp *qp,
			       const struct ib_qp_attr *attr, int mask)
{
	lockdep_assert_held(&qp->lock);

	if (mask & IB_QP_ACCESS_FLAGS)
		qp->access = attr->qp_access_flags;
	if (mask & IB_QP_AV) {
		const struct ib_global_route *grh =
			rdma_ah_read_grh(&attr->ah_attr);

		qp->dgid = grh->dgid;
		qp->sgid_index = grh->sgid_index;
		qp->hop_limit = grh->hop_limit;
		qp->traffic_class = grh->traffic_class;
		qp->flow_label = grh->flow_label;
		qp->sl = rdma_ah_get_sl(&attr->ah_attr);
		WRITE_ONCE(qp->peer_sdev, NULL);
		/* Checked by shca_qp_check_attr(): it cannot fail here. */
		shca_av_init(&qp->path.av, &attr->ah_attr);
	}
	if (mask & IB_QP_PATH_MTU)
		qp->path_mtu = attr->path_mtu;
	if (mask & IB_QP_TIMEOUT)
		qp->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		qp->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		qp->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_MIN_RNR_TIMER)
		qp->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_RQ_PSN)
		qp->rq_psn = attr->rq_psn & SHCA_QPN_MAX;
	if (mask & IB_QP_SQ_PSN)
		qp->sq_psn = attr->sq_psn & SHCA_QPN_MAX;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		qp->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		qp->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		qp->dest_qpn = attr->dest_qp_num;
	if (mask & IB_QP_QKEY)
		qp->qkey = attr->qkey;
	if (mask & IB_QP_STATE) {
		if (attr->qp_state == IB_QPS_RESET)
			qp->epoch++;
		qp->state = attr->qp_state;
	}
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_qp_res_alloced() - modify_qp allocated responder resources (KUnit hook)
 * @qp: the QP being modified
 *
 * Called between the allocation and the swap of the READ/atomic
 * responder resources. KUnit tests redirect it to run another modify_qp
 * on the same QP in the middle.
 */
void shca_qp_res_alloced(struct shca_qp *qp)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_qp_res_alloced, qp);
}
EXPORT_SYMBOL_IF_KUNIT(shca_qp_res_alloced);
#else
static inline void shca_qp_res_alloced(struct shca_qp *qp)
{
}
#endif

/*
 * Room for the READ and atomic requests a responder on the wire keeps
 * (max_dest_rd_atomic of them, up to SHCA_MAX_RD_ATOM), made before the
 * attribute is applied: the array only grows, and is swapped with
 * nothing executing the QP. Allocated on demand, as most QPs ask for a
 * few or none. Under the QP's modify_mutex, once the transition was
 * checked: res_size cannot change meanwhile.
 */
static int shca_qp_size_res(struct shca_qp *qp, const struct ib_qp_attr *attr,
			    int mask)
{
	struct shca_wresp *rs = &qp->wresp;
	struct shca_rd_res *res, *old;
	u32 n;

	lockdep_assert_held(&qp->modify_mutex);
	if (!(mask & IB_QP_MAX_DEST_RD_ATOMIC) ||
	    qp->ibqp.qp_type != IB_QPT_RC)
		return 0;
	n = max_t(u32, attr->max_dest_rd_atomic, 1);
	if (n <= rs->res_size)
		return 0;
	res = shca_inject_fault() ? NULL : kcalloc(n, sizeof(*res), GFP_KERNEL);
	if (!res)
		return -ENOMEM;
	shca_qp_res_alloced(qp);
	shca_qp_exec_stop(qp);
	old = rs->res;
	if (old)
		memcpy(res, old, rs->res_size * sizeof(*res));
	rs->res = res;
	rs->res_size = n;
	shca_qp_exec_resume(qp);
	kfree(old);
	/* The work item was cancelled: what it had to do is still there. */
	shca_qp_kick_now(qp);
	return 0;
}

/*
 * The transition @attr and @mask ask for, checked against the IBTA table
 * (ib_modify_qp_is_ok()) from the QP's current state: @cur and @next.
 */
static int shca_qp_check_transition(struct shca_qp *qp,
				    const struct ib_qp_attr *attr, int mask,
				    enum ib_qp_state *cur,
				    enum ib_qp_state *next)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	*cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	*next = (mask & IB_QP_STATE) ? attr->qp_state : *cur;
	if (*cur != qp->state ||
	    !ib_modify_qp_is_ok(*cur, *next, qp->ibqp.qp_type, mask))
		err = -EINVAL;
	/*
	 * SQ drain (SQD) is not implemented: refused, so that no QP ever
	 * leaves RTS for it and comes back with its requester out of step.
	 */
	else if (*next == IB_QPS_SQD)
		err = -EOPNOTSUPP;
	spin_unlock_irqrestore(&qp->lock, flags);
	return err;
}

/*
 * Apply a checked transition. The data path may have moved the QP to the
 * error state since it was checked: then nothing is applied.
 */
static int shca_qp_transition(struct shca_qp *qp,
			      const struct ib_qp_attr *attr, int mask,
			      enum ib_qp_state cur, enum ib_qp_state next)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&qp->lock, flags);
	if (qp->state != cur) {
		err = -EINVAL;
	} else {
		shca_qp_apply_attr(qp, attr, mask);
		if (next != cur &&
		    (next == IB_QPS_RTR || next == IB_QPS_RTS) &&
		    !shca_qp_datagram(qp))
			shca_wire_start(qp, next);
	}
	spin_unlock_irqrestore(&qp->lock, flags);
	return err;
}

/*
 * Wait until no peer's requester fills a receive it took from @qp (the
 * QP is in RESET: no new one is taken).
 */
static void shca_qp_wait_recvs(struct shca_qp *qp)
{
	while (READ_ONCE(qp->recv_inflight))
		usleep_range(100, 1000);
}

/* RESET empties both queues and drops the QP's completions. */
static void shca_qp_reset_queues(struct shca_qp *qp)
{
	unsigned long flags;

	shca_qp_exec_stop(qp);
	shca_wire_reset(qp);
	shca_qp_wait_recvs(qp);
	WRITE_ONCE(qp->wire, false);
	spin_lock_irqsave(&qp->lock, flags);
	shca_queue_reset(&qp->sq);
	shca_rq_reset(qp);
	memset(&qp->req, 0, sizeof(qp->req));
	qp->last_wqe_sent = false;
	spin_unlock_irqrestore(&qp->lock, flags);
	shca_qp_exec_resume(qp);
	shca_qp_purge_cqs(qp);
}

/**
 * shca_qp_modify() - the modify_qp verb
 * @qp: the QP
 * @attr: new attributes
 * @mask: IB_QP_* bits of @attr to apply
 *
 * Checks the transition against the IBTA table (ib_modify_qp_is_ok())
 * and every attribute against the device limits before changing
 * anything. Entering the error state flushes the outstanding work
 * requests; entering RESET empties both queues without completions and
 * drops the QP's completions from its kernel CQs (a process's provider
 * cleans its own CQ rings).
 *
 * Calls on one QP are serialised by its @modify_mutex: each is checked,
 * grows what it needs and applies whole before the next one starts.
 *
 * Context: process context (RESET waits for the QP's work item).
 * Return: 0; -EINVAL for a forbidden transition or attribute value;
 * -EOPNOTSUPP for attributes the device does not implement (alternate
 * paths, SQ-drained notification, resizing) and for the SQ drain state
 * (SQD).
 */
int shca_qp_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		   int mask)
{
	enum ib_qp_state cur, next;
	int err;

	err = shca_qp_check_attr(attr, mask);
	if (err)
		return err;

	/*
	 * uverbs holds only a shared lock on the QP: two modify_qp may run at
	 * once. The mutex makes each one whole - checked, resources grown,
	 * applied - before the next looks at the QP.
	 */
	mutex_lock(&qp->modify_mutex);
	err = shca_qp_check_transition(qp, attr, mask, &cur, &next);
	if (!err)
		err = shca_qp_size_res(qp, attr, mask);
	if (!err)
		err = shca_qp_transition(qp, attr, mask, cur, next);
	if (err)
		goto out;

	if (next == IB_QPS_RESET && cur != IB_QPS_RESET)
		shca_qp_reset_queues(qp);
	else if (next == IB_QPS_ERR)
		shca_qp_kick_now(qp);
	else if (next == IB_QPS_RTS)
		shca_qp_kick(qp);
out:
	mutex_unlock(&qp->modify_mutex);
	return err;
}

/**
 * shca_qp_query() - the query_qp verb
 * @qp: the QP
 * @attr: filled with the current attributes
 * @init: filled with the creation attributes
 */
void shca_qp_query(struct shca_qp *qp, struct ib_qp_attr *attr,
		   struct ib_qp_init_attr *init)
{
	unsigned long flags;

	memset(attr, 0, sizeof(*attr));
	memset(init, 0, sizeof(*init));

	spin_lock_irqsave(&qp->lock, flags);
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	attr->path_mtu = qp->path_mtu;
	attr->path_mig_state = IB_MIG_MIGRATED;
	attr->qp_access_flags = qp->access;
	attr->pkey_index = 0;
	attr->port_num = SHCA_PORT;
	attr->sq_psn = shca_req_sq_psn(qp);
	attr->rq_psn = qp->rq_psn;
	attr->dest_qp_num = qp->dest_qpn;
	attr->timeout = qp->timeout;
	attr->retry_cnt = qp->retry_cnt;
	attr->rnr_retry = qp->rnr_retry;
	attr->min_rnr_timer = qp->min_rnr_timer;
	attr->max_rd_atomic = qp->max_rd_atomic;
	attr->max_dest_rd_atomic = qp->max_dest_rd_atomic;
	attr->qkey = qp->qkey;
	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr->ah_attr, SHCA_PORT);
	rdma_ah_set_sl(&attr->ah_attr, qp->sl);
	rdma_ah_set_grh(&attr->ah_attr, &qp->dgid, qp->flow_label,
			qp->sgid_index, qp->hop_limit, qp->traffic_class);
	spin_unlock_irqrestore(&qp->lock, flags);

	attr->cap.max_send_wr = qp->sq.max_wr;
	attr->cap.max_recv_wr = qp->rq.max_wr;
	attr->cap.max_send_sge = qp->sq.max_sge;
	attr->cap.max_recv_sge = qp->rq.max_sge;
	attr->cap.max_inline_data = qp->max_inline;
	init->cap = attr->cap;
	init->qp_type = qp->ibqp.qp_type;
	init->sq_sig_type = qp->sq_sig_all ? IB_SIGNAL_ALL_WR :
					     IB_SIGNAL_REQ_WR;
	init->send_cq = qp->ibqp.send_cq;
	init->recv_cq = qp->ibqp.recv_cq;
	init->srq = qp->ibqp.srq;
	if (qp->ibqp.integrity_en)
		init->create_flags = IB_QP_CREATE_INTEGRITY_EN;
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
