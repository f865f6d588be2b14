// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - module glue: the "softhca" rdma link type, the netdev notifier
 * and the driver's own registry of devices.
 *
 * The RDMA core has no driver id for an out-of-tree driver, so it cannot
 * find "our" devices by id; the registry below is the authority. A device
 * enters it (under RTNL, so that its netdev cannot be unregistering) before
 * ib_register_device() and leaves it in ->dealloc_driver(), which the core
 * calls on every unregistration path: "rdma link delete", the netdev
 * going away, and module unload.
 *
 * Lock order: RTNL -> shca_devices_lock. ib_register_device() takes RTNL
 * itself (GID table rescan), so neither lock is held across it.
 */

#include <linux/debugfs.h>
#include <linux/if_arp.h>
#include <linux/if_vlan.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/rdma_netlink.h>

#include "shca_verbs.h"
#include "shca_wire.h"

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_inject_fault() - the driver's fault-injection point (KUnit builds)
 *
 * Return: false, unless a KUnit test redirected it to inject a failure.
 */
bool shca_inject_fault(void)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_inject_fault);
	return false;
}
EXPORT_SYMBOL_IF_KUNIT(shca_inject_fault);
#endif

static DEFINE_MUTEX(shca_devices_lock);
static LIST_HEAD(shca_devices);

static struct shca_dev *shca_find_by_netdev(struct net_device *ndev)
{
	struct shca_dev *sdev;

	lockdep_assert_held(&shca_devices_lock);

	list_for_each_entry(sdev, &shca_devices, list)
		if (sdev->netdev == ndev)
			return sdev;
	return NULL;
}

/*
 * Cache the netdev's MTU as the port's: the data path reads it under QP
 * locks, where the core's netdev lookup (its lock is not irq-safe) must
 * not be taken.
 */
static void shca_port_mtu_update(struct shca_dev *sdev,
				 struct net_device *ndev)
{
	WRITE_ONCE(sdev->port_mtu,
		   ib_mtu_enum_to_int(iboe_get_mtu(READ_ONCE(ndev->mtu))));
}

/*
 * Reserve @ndev for @sdev: refuse a netdev that is going away or already
 * carries a softhca device, then bind the port to it and enter the
 * registry.
 */
static int shca_reserve_netdev(struct shca_dev *sdev, struct net_device *ndev)
{
	int err;

	ASSERT_RTNL();
	mutex_lock(&shca_devices_lock);
	if (ndev->reg_state != NETREG_REGISTERED) {
		err = -ENODEV;
		goto out;
	}
	if (shca_find_by_netdev(ndev)) {
		err = -EEXIST;
		goto out;
	}
	err = shca_inject_fault() ? -ENOMEM :
	      ib_device_set_netdev(&sdev->ibdev, ndev, SHCA_PORT);
	if (err)
		goto out;
	sdev->netdev = ndev;
	list_add_tail(&sdev->list, &shca_devices);
out:
	mutex_unlock(&shca_devices_lock);
	return err;
}

/*
 * ->dealloc_driver: leave the registry and undo shca_verbs_init_device().
 * Called by the core once per device, after it is unregistered or from
 * ib_dealloc_device() when creation failed (then it may never have
 * entered the registry).
 */
static void shca_dealloc_driver(struct ib_device *ibdev)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);

	mutex_lock(&shca_devices_lock);
	list_del_init(&sdev->list);
	mutex_unlock(&shca_devices_lock);
	shca_net_detach(sdev);
	shca_verbs_fini_device(sdev);
}

/* What this file adds to the verbs layer's ops: the device's lifetime. */
static const struct ib_device_ops shca_main_ops = {
	.dealloc_driver = shca_dealloc_driver,
};

/**
 * shca_newlink() - create a softhca device on a netdev
 * @ibdev_name: name of the new ib_device
 * @ndev: Ethernet netdev to bind port 1 to; the caller holds a reference
 *
 * The rdma_link_ops.newlink handler behind
 * "rdma link add NAME type softhca netdev DEV".
 *
 * Context: process context, no locks held.
 * Return: 0 on success; -EEXIST if @ibdev_name is taken or @ndev already
 * carries a softhca device; -EOPNOTSUPP if @ndev is not a plain Ethernet
 * device; -ENODEV if @ndev is being unregistered; another negative errno
 * from the RDMA core. On failure nothing is left behind.
 */
VISIBLE_IF_KUNIT int shca_newlink(const char *ibdev_name,
				  struct net_device *ndev)
{
	struct shca_dev *sdev;
	bool gone;
	int err;

	if (ndev->type != ARPHRD_ETHER || is_vlan_dev(ndev) ||
	    (ndev->flags & IFF_LOOPBACK))
		return -EOPNOTSUPP;

	sdev = shca_inject_fault() ? NULL : ib_alloc_device(shca_dev, ibdev);
	if (!sdev)
		return -ENOMEM;
	/* On failure nothing is set up and no ops are installed yet. */
	err = shca_verbs_init_device(sdev, ndev);
	if (err) {
		ib_dealloc_device(&sdev->ibdev);
		return err;
	}
	/* From here on ib_dealloc_device() undoes it all. */
	INIT_LIST_HEAD(&sdev->list);
	sdev->port_state = shca_port_state(ndev);
	shca_port_mtu_update(sdev, ndev);
	ib_set_device_ops(&sdev->ibdev, &shca_main_ops);
	ib_mark_name_assigned_by_user(&sdev->ibdev);

	rtnl_lock();
	err = shca_reserve_netdev(sdev, ndev);
	rtnl_unlock();
	if (err)
		goto err_dealloc;
	/* RoCE v2 packets from and to other hosts (shca_net.c). */
	err = shca_net_attach(sdev);
	if (err)
		goto err_dealloc;

	/*
	 * Sit under the NIC's device, as an HCA does: tools find the netdev
	 * through /sys/class/infiniband/DEV/device/net/ (rdma-core's tests
	 * do). DMA stays virtual: no DMA device is passed.
	 */
	sdev->ibdev.dev.parent = ndev->dev.parent;
	err = shca_inject_fault() ? -ENOMEM :
	      ib_register_device(&sdev->ibdev, ibdev_name, NULL);
	/*
	 * The core refuses a taken name with ENFILE (its only ENFILE); say
	 * what it is. There is no looking the name up first: the core stopped
	 * exporting ib_device_get_by_name() in 7.0, and its own check is the
	 * one that counts.
	 */
	if (err == -ENFILE)
		err = -EEXIST;

	mutex_lock(&shca_devices_lock);
	if (err)
		list_del_init(&sdev->list);
	else
		sdev->registered = true;
	gone = sdev->netdev_gone;
	mutex_unlock(&shca_devices_lock);
	if (err)
		goto err_dealloc;

	if (gone) {
		/* The netdev vanished while we registered: undo. */
		ib_unregister_device(&sdev->ibdev);
		return -ENODEV;
	}
	return 0;

err_dealloc:
	/* Calls ->dealloc_driver, which undoes shca_verbs_init_device(). */
	ib_dealloc_device(&sdev->ibdev);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_newlink);

static void shca_port_event(struct shca_dev *sdev, struct net_device *ndev)
{
	enum ib_port_state state = shca_port_state(ndev);
	struct ib_event ev = {
		.device = &sdev->ibdev,
		.element.port_num = SHCA_PORT,
	};

	ASSERT_RTNL();
	if (state == sdev->port_state)
		return;
	sdev->port_state = state;
	ev.event = state == IB_PORT_ACTIVE ? IB_EVENT_PORT_ACTIVE :
					     IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

static void shca_netdev_gone(struct shca_dev *sdev)
{
	lockdep_assert_held(&shca_devices_lock);

	sdev->netdev = NULL;
	if (!sdev->registered) {
		/* shca_newlink() undoes the registration when it finishes. */
		sdev->netdev_gone = true;
		ib_device_set_netdev(&sdev->ibdev, NULL, SHCA_PORT);
		return;
	}
	/*
	 * A device that is already unregistering holds no reference we
	 * could take; the unregistration in flight releases the netdev.
	 */
	if (ib_device_try_get(&sdev->ibdev)) {
		/* Consumers tear down on a device that fails fast. */
		shca_qp_device_fatal(sdev);
		ib_unregister_device_queued(&sdev->ibdev);
		ib_device_put(&sdev->ibdev);
	}
}

static int shca_netdev_event(struct notifier_block *nb, unsigned long event,
			     void *ptr)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(ptr);
	struct shca_dev *sdev;

	mutex_lock(&shca_devices_lock);
	sdev = shca_find_by_netdev(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		shca_netdev_gone(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		if (sdev->registered)
			shca_port_event(sdev, ndev);
		break;
	case NETDEV_CHANGEMTU:
		shca_port_mtu_update(sdev, ndev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&shca_devices_lock);
	return NOTIFY_DONE;
}

static struct notifier_block shca_netdev_notifier = {
	.notifier_call = shca_netdev_event,
};

static struct rdma_link_ops shca_link_ops = {
	.type = "softhca",
	.newlink = shca_newlink,
};

/* Unregister every device; returns once each one is gone. */
static void shca_unregister_all(void)
{
	struct shca_dev *sdev;

	for (;;) {
		mutex_lock(&shca_devices_lock);
		sdev = list_first_entry_or_null(&shca_devices, struct shca_dev,
						list);
		/* Still listed, so ->dealloc_driver has not run: safe to pin. */
		if (sdev)
			get_device(&sdev->ibdev.dev);
		mutex_unlock(&shca_devices_lock);
		if (!sdev)
			break;
		/* Waits for any unregistration of it already in flight. */
		ib_unregister_device(&sdev->ibdev);
		put_device(&sdev->ibdev.dev);
	}
}

/* Root-only knobs for fault injection; see shca_sig_debugfs_init(). */
static struct dentry *shca_debugfs;

static int __init shca_init(void)
{
	int err;

	err = shca_mr_cache_init();
	if (err)
		return err;
	shca_qp_table_init();
	err = shca_qpc_init();
	if (err)
		goto err_qp_table;
	err = shca_net_init(shca_wire_rx);
	if (err)
		goto err_exec;
	err = register_netdevice_notifier(&shca_netdev_notifier);
	if (err)
		goto err_net;
	shca_debugfs = debugfs_create_dir("softhca", NULL);
	shca_sig_debugfs_init(shca_debugfs);
	rdma_link_register(&shca_link_ops);
	return 0;

err_net:
	shca_net_fini();
err_exec:
	shca_qpc_fini();
err_qp_table:
	shca_qp_table_fini();
	shca_mr_cache_fini();
	return err;
}

static void __exit shca_exit(void)
{
	/* Waits for newlink calls in flight; no new device after this. */
	rdma_link_unregister(&shca_link_ops);
	shca_unregister_all();
	debugfs_remove(shca_debugfs);
	unregister_netdevice_notifier(&shca_netdev_notifier);
	shca_net_fini();
	shca_qpc_fini();
	shca_qp_table_fini();
	shca_mr_cache_fini();
}

module_init(shca_init);
module_exit(shca_exit);

MODULE_AUTHOR("The softhca developers");
MODULE_DESCRIPTION("softhca: software RDMA HCA with a complete memory-registration unit");
MODULE_LICENSE("GPL");
MODULE_VERSION(SHCA_DRV_VERSION);
MODULE_ALIAS_RDMA_LINK("softhca");
