// SPDX-License-Identifier: GPL-2.0
/*
 * softhca KUnit fixtures: a minimal Ethernet netdev that drops what it is
 * given, and softhca devices created through the real "rdma link add"
 * handler, both torn down by KUnit actions in reverse order of creation.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <kunit/resource.h>

#include "shca_kunit.h"

static netdev_tx_t shca_kunit_xmit(struct sk_buff *skb,
				   struct net_device *ndev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops shca_kunit_netdev_ops = {
	.ndo_start_xmit = shca_kunit_xmit,
	.ndo_set_mac_address = eth_mac_addr,
};

static void shca_kunit_netdev_free(void *ptr)
{
	struct net_device *ndev = ptr;

	unregister_netdev(ndev);
	free_netdev(ndev);
}

/**
 * shca_kunit_netdev() - register an Ethernet netdev that is up
 * @test: the test; owns the netdev
 * @mac: its MAC address
 *
 * Return: the netdev; the test fails and aborts if it cannot be made.
 */
struct net_device *shca_kunit_netdev(struct kunit *test, const u8 *mac)
{
	struct net_device *ndev;
	int err;

	ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->netdev_ops = &shca_kunit_netdev_ops;
	eth_hw_addr_set(ndev, mac);
	strscpy(ndev->name, "shcak%d", sizeof(ndev->name));

	err = register_netdev(ndev);
	if (err)
		free_netdev(ndev);
	KUNIT_ASSERT_EQ(test, err, 0);
	err = kunit_add_action_or_reset(test, shca_kunit_netdev_free, ndev);
	KUNIT_ASSERT_EQ(test, err, 0);

	rtnl_lock();
	err = dev_open(ndev, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, err, 0);
	return ndev;
}

/**
 * shca_kunit_netdev_remove() - unregister a test netdev now
 * @test: the test that owns @ndev
 * @ndev: netdev from shca_kunit_netdev()
 */
void shca_kunit_netdev_remove(struct kunit *test, struct net_device *ndev)
{
	kunit_release_action(test, shca_kunit_netdev_free, ndev);
}

/**
 * shca_kunit_wait_gone() - wait until no ib_device is called @name
 * @name: device name
 *
 * Unregistration after a netdev goes away runs from a workqueue.
 *
 * Return: true once the name is free, false after 10 s.
 */
bool shca_kunit_wait_gone(const char *name)
{
	struct ib_device *ibdev;
	int i;

	for (i = 0; i < 500; i++) {
		ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			return true;
		ib_device_put(ibdev);
		msleep(20);
	}
	return false;
}

static void shca_kunit_device_free(void *ptr)
{
	const char *name = ptr;
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (ibdev)
		ib_unregister_device_and_put(ibdev);
	shca_kunit_wait_gone(name);
}

/**
 * shca_kunit_device() - create a softhca device as "rdma link add" does
 * @test: the test; unregisters the device at the end unless it is gone
 * @name: device name
 * @ndev: netdev to bind it to
 *
 * Return: the registered device; the test aborts if creation fails.
 */
struct ib_device *shca_kunit_device(struct kunit *test, const char *name,
				    struct net_device *ndev)
{
	struct ib_device *ibdev;
	char *owned;
	int err;

	owned = kunit_kstrdup(test, name, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, owned);
	err = shca_newlink(owned, ndev);
	KUNIT_ASSERT_EQ(test, err, 0);
	err = kunit_add_action_or_reset(test, shca_kunit_device_free, owned);
	KUNIT_ASSERT_EQ(test, err, 0);

	ibdev = ib_device_get_by_name(owned, RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	/* The action above owns the device; the name pins nothing. */
	ib_device_put(ibdev);
	return ibdev;
}
