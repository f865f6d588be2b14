// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: Queue pairs
 *
 * The QP object and its state machine: creating, modifying, querying and
 * destroying QPs. What the transport engine sees of a QP (the QP number
 * table, references, kicks, the error state, events) is in shca_qpc.c,
 * below both this file and the transport; the send and receive queues,
 * and posting to them, are in shca_wq.c; address vectors in shca_av.c;
 * multicast attachments in shca_mcast.c.
 *
 * The QP engine takes ib_send_wr, ib_recv_wr and ib_qp_attr directly:
 * they are this HCA's work-queue descriptors, and copying them into a
 * second set of structures would only add a layer.
 */

#include <linux/overflow.h>
#include <linux/slab.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"
#include "shca_wire.h"

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

	err = shca_inject_fault() ? -ENOMEM :
	      shca_qpc_publish(qp, init->qp_type == IB_QPT_GSI);
	if (err)
		goto err_free_scratch;
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
	shca_qpc_unpublish(qp);
	shca_qp_put(qp);
	wait_for_completion(&qp->link->released);
	/* No peer can queue our work any more; stop it for good. */
	shca_qp_exec_stop(qp);
	/* Its timer may queue the work item once more: stop both again. */
	timer_delete_sync(&qp->wtimer);
	cancel_delayed_work_sync(&qp->work);
	shca_wire_rxq_purge(qp);
	shca_qp_purge_cqs(qp);
	shca_qpc_release_number(qp);

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

