// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - multicast: UD QPs attached to multicast groups (attach_mcast,
 * detach_mcast) and the QPs a datagram to a group reaches.
 *
 * One list for every device of the host: a group's members are the UD
 * QPs attached to its GID on the devices of the sender's network
 * namespace (shca_mcast_get()); shca_exec.c delivers to each of them.
 */

#include <linux/rculist.h>
#include <linux/slab.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"

/**
 * struct shca_mcast - a UD QP attached to a multicast group
 * @entry: in shca_mcasts (RCU readers, writers under shca_mcast_lock)
 * @rcu: defers the free past readers
 * @mgid: the group
 * @link: the QP's link; attachments go before the QP (detach, or its
 *	destroy), and readers take a reference before looking at the QP
 */
struct shca_mcast {
	struct list_head entry;
	struct rcu_head rcu;
	union ib_gid mgid;
	struct shca_qp_link *link;
};

static LIST_HEAD(shca_mcasts);
static DEFINE_SPINLOCK(shca_mcast_lock);

/**
 * shca_mcast_attach() - attach a UD QP to a multicast group
 * @qp: the QP (the core checked that it is UD and @mgid multicast)
 * @mgid: the group's GID
 *
 * Context: process context.
 * Return: 0; -EEXIST if @qp is attached to @mgid already (the core
 * counts every successful attach as a use of the QP); -ENOMEM when the
 * device has SHCA_MAX_MCAST_ATTACH attachments or the group
 * SHCA_MAX_MCAST_QP_ATTACH QPs of the device.
 */
int shca_mcast_attach(struct shca_qp *qp, const union ib_gid *mgid)
{
	struct shca_mcast *m, *new;
	u32 in_group = 0;
	int err = 0;

	new = kzalloc(sizeof(*new), GFP_KERNEL_ACCOUNT);
	if (!new)
		return -ENOMEM;
	new->mgid = *mgid;
	new->link = qp->link;

	spin_lock(&shca_mcast_lock);
	list_for_each_entry(m, &shca_mcasts, entry) {
		if (memcmp(&m->mgid, mgid, sizeof(*mgid)))
			continue;
		if (m->link == qp->link) {
			err = -EEXIST;
			goto out;
		}
		if (m->link->qp->sdev == qp->sdev)
			in_group++;
	}
	if (in_group >= SHCA_MAX_MCAST_QP_ATTACH ||
	    qp->sdev->num_mcast >= SHCA_MAX_MCAST_ATTACH) {
		err = -ENOMEM;
		goto out;
	}
	qp->sdev->num_mcast++;
	list_add_tail_rcu(&new->entry, &shca_mcasts);
	new = NULL;
out:
	spin_unlock(&shca_mcast_lock);
	kfree(new);
	return err;
}

/* Unlink @m; the caller holds shca_mcast_lock and frees it after RCU. */
static void shca_mcast_unlink(struct shca_mcast *m)
{
	lockdep_assert_held(&shca_mcast_lock);
	list_del_rcu(&m->entry);
	m->link->qp->sdev->num_mcast--;
}

/**
 * shca_mcast_detach() - detach a UD QP from a multicast group
 * @qp: the QP
 * @mgid: the group's GID
 *
 * Return: 0; -EINVAL if @qp is not attached to @mgid.
 */
int shca_mcast_detach(struct shca_qp *qp, const union ib_gid *mgid)
{
	struct shca_mcast *m;

	spin_lock(&shca_mcast_lock);
	list_for_each_entry(m, &shca_mcasts, entry) {
		if (m->link == qp->link &&
		    !memcmp(&m->mgid, mgid, sizeof(*mgid))) {
			shca_mcast_unlink(m);
			spin_unlock(&shca_mcast_lock);
			kfree_rcu(m, rcu);
			return 0;
		}
	}
	spin_unlock(&shca_mcast_lock);
	return -EINVAL;
}

/**
 * shca_mcast_detach_all() - detach a QP from every group
 * @qp: the QP, being destroyed
 *
 * Readers still looking at an attachment are gone after a grace period,
 * which the attachments' frees wait for.
 *
 * Context: process context.
 */
void shca_mcast_detach_all(struct shca_qp *qp)
{
	struct shca_mcast *m, *tmp;

	spin_lock(&shca_mcast_lock);
	list_for_each_entry_safe(m, tmp, &shca_mcasts, entry) {
		if (m->link == qp->link) {
			shca_mcast_unlink(m);
			kfree_rcu(m, rcu);
		}
	}
	spin_unlock(&shca_mcast_lock);
}

/**
 * shca_mcast_get() - the QPs a multicast datagram goes to
 * @from: device of the sender
 * @mgid: the destination group
 * @qps: receives up to @max QPs, each with a reference
 * @max: room in @qps
 *
 * Every UD QP attached to @mgid on a device in @from's network namespace.
 *
 * Context: any context.
 * Return: the number of QPs stored.
 */
int shca_mcast_get(const struct shca_dev *from, const union ib_gid *mgid,
		   struct shca_qp **qps, int max)
{
	struct shca_mcast *m;
	int n = 0;

	rcu_read_lock();
	list_for_each_entry_rcu(m, &shca_mcasts, entry) {
		struct shca_qp *qp;

		if (n == max)
			break;
		if (memcmp(&m->mgid, mgid, sizeof(*mgid)) ||
		    !kref_get_unless_zero(&m->link->ref))
			continue;
		qp = m->link->qp;
		if (shca_dev_same_net(qp->sdev, from))
			qps[n++] = qp;
		else
			shca_qp_put(qp);
	}
	rcu_read_unlock();
	return n;
}
