// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Queue pairs
 *
 * The QP table and the state machine: creating, modifying, querying and
 * destroying QPs. Their send and receive queues, and posting to them,
 * are in shca_wq.c; address vectors in shca_av.c; multicast attachments
 * in shca_mcast.c.
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
 * The QP engine takes ib_send_wr, ib_recv_wr and ib_qp_attr directly:
 * they are this HCA's work-queue descriptors, and copying them into a
 * second set of structures would only add a layer.
 */

#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/slab.h>

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
	if (mask & IB_QP_STATE)
		qp->state = attr->qp_state;
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
