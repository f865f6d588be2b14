// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "shca_device": the device lifecycle through the same entry
 * points "rdma link add/delete", the netdev notifier and the RDMA core
 * use: create on a netdev, query, port state following the netdev,
 * refused inputs, PDs and their DMA MRs, removal.
 */

#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>
#include <net/net_namespace.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_mad.h>
#include <kunit/test.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_mac_a[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x43, 0x41, 0x01 };
static const u8 shca_mac_b[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x43, 0x41, 0x02 };

/* Pass: attributes match the netdev and tell only what the device does. */
static void shca_dev_create_and_query(struct kunit *test)
{
	struct net_device *ndev = shca_kunit_netdev(test, shca_mac_a);
	struct ib_device *ibdev = shca_kunit_device(test, "shcak_q", ndev);
	struct ib_port_immutable imm = {};
	struct ib_port_attr pattr;
	struct net_device *bound;
	char fw[IB_FW_VERSION_NAME_MAX];
	__be64 guid;
	u16 pkey;

	KUNIT_EXPECT_STREQ(test, dev_name(&ibdev->dev), "shcak_q");
	KUNIT_EXPECT_EQ(test, ibdev->node_type, RDMA_NODE_IB_CA);
	KUNIT_EXPECT_EQ(test, ibdev->phys_port_cnt, 1);

	addrconf_addr_eui48((u8 *)&guid, ndev->dev_addr);
	KUNIT_EXPECT_EQ(test, ibdev->node_guid, guid);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.sys_image_guid, guid);
	/* 02:53:48:43:41:01 -> 0053:48ff:fe43:4101 */
	KUNIT_EXPECT_EQ(test, be64_to_cpu(guid), 0x005348fffe434101ULL);

	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_pd, SHCA_MAX_PD);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_mr, SHCA_MAX_MR);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_mr_size, SHCA_MAX_MR_SIZE);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.page_size_cap, SHCA_PAGE_SIZE_CAP);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_fast_reg_page_list_len,
			SHCA_MAX_FRPL);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_dm_size, SHCA_DM_SIZE);
	/*
	 * Exactly what works, integrity handover included (shca_pi_*), and
	 * the reserved lkey (shca_mr_local_dma_lkey) and on-demand paging
	 * (shca_odp) where the kernel has it.
	 */
	KUNIT_EXPECT_EQ(test, ibdev->attrs.kernel_cap_flags,
			IBK_ALLOW_USER_UNREG | IBK_SG_GAPS_REG |
			IBK_INTEGRITY_HANDOVER | IBK_LOCAL_DMA_LKEY |
			(SHCA_ODP ? IBK_ON_DEMAND_PAGING : 0));
	KUNIT_EXPECT_EQ(test, ibdev->attrs.odp_caps.general_caps,
			SHCA_ODP ? IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT : 0);
	KUNIT_EXPECT_EQ(test, ibdev->local_dma_lkey, SHCA_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_pi_fast_reg_page_list_len,
			SHCA_MAX_PI_FRPL);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.sig_prot_cap,
			IB_PROT_T10DIF_TYPE_1 | IB_PROT_T10DIF_TYPE_2 |
			IB_PROT_T10DIF_TYPE_3);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.sig_guard_cap,
			IB_GUARD_T10DIF_CRC | IB_GUARD_T10DIF_CSUM);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_qp, SHCA_MAX_QP);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_cqe, SHCA_MAX_CQE);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.atomic_cap, IB_ATOMIC_HCA);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.device_cap_flags,
			IB_DEVICE_MEM_MGT_EXTENSIONS | IB_DEVICE_MEM_WINDOW |
			IB_DEVICE_MEM_WINDOW_TYPE_2B |
			IB_DEVICE_RC_RNR_NAK_GEN | IB_DEVICE_SYS_IMAGE_GUID);
	KUNIT_EXPECT_EQ(test, ibdev->attrs.max_mw, SHCA_MAX_MR);
	/* A kernel verbs provider with a GSI QP: MADs and the CM. */
	KUNIT_EXPECT_TRUE(test, ibdev->kverbs_provider);
	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_mad(ibdev, 1));
	KUNIT_EXPECT_TRUE(test, rdma_cap_ib_cm(ibdev, 1));
	KUNIT_EXPECT_FALSE(test, rdma_cap_ib_smi(ibdev, 1));
	KUNIT_EXPECT_FALSE(test, rdma_cap_ib_sa(ibdev, 1));
	KUNIT_EXPECT_EQ(test, rdma_max_mad_size(ibdev, 1), IB_MGMT_MAD_SIZE);

	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, 1, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, pattr.phys_state, IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_EQ(test, pattr.port_cap_flags, IB_PORT_CM_SUP);
	KUNIT_EXPECT_EQ(test, pattr.gid_tbl_len, SHCA_GID_TBL_LEN);
	KUNIT_EXPECT_EQ(test, pattr.max_mtu, IB_MTU_4096);
	KUNIT_EXPECT_EQ(test, pattr.active_mtu, iboe_get_mtu(ndev->mtu));
	KUNIT_EXPECT_EQ(test, ib_query_port(ibdev, 2, &pattr), -EINVAL);

	KUNIT_EXPECT_EQ(test, rdma_port_get_link_layer(ibdev, 1),
			IB_LINK_LAYER_ETHERNET);
	KUNIT_EXPECT_TRUE(test, rdma_protocol_roce_udp_encap(ibdev, 1));
	KUNIT_EXPECT_FALSE(test, rdma_protocol_roce_eth_encap(ibdev, 1));
	KUNIT_ASSERT_EQ(test, ibdev->ops.get_port_immutable(ibdev, 1, &imm), 0);
	KUNIT_EXPECT_EQ(test, imm.core_cap_flags,
			RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP);

	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, 1, 0, &pkey), 0);
	KUNIT_EXPECT_EQ(test, pkey, IB_DEFAULT_PKEY_FULL);
	KUNIT_EXPECT_EQ(test, ib_query_pkey(ibdev, 1, 1, &pkey), -EINVAL);

	ib_get_device_fw_str(ibdev, fw);
	KUNIT_EXPECT_STREQ(test, fw, SHCA_DRV_VERSION);

	bound = ib_device_get_netdev(ibdev, 1);
	KUNIT_EXPECT_PTR_EQ(test, bound, ndev);
	dev_put(bound);
}

struct shca_event_counter {
	struct ib_event_handler handler;
	atomic_t active;
	atomic_t err;
};

static void shca_count_event(struct ib_event_handler *h, struct ib_event *ev)
{
	struct shca_event_counter *c =
		container_of(h, struct shca_event_counter, handler);

	if (ev->element.port_num != 1)
		return;
	if (ev->event == IB_EVENT_PORT_ACTIVE)
		atomic_inc(&c->active);
	else if (ev->event == IB_EVENT_PORT_ERR)
		atomic_inc(&c->err);
}

static bool shca_wait_count(atomic_t *v, int want)
{
	int i;

	for (i = 0; i < 250 && atomic_read(v) != want; i++)
		msleep(20);
	return atomic_read(v) == want;
}

static void shca_unregister_event_handler(void *ptr)
{
	ib_unregister_event_handler(ptr);
}

/* Pass: "ip link set down/up" moves the port and raises one event each. */
static void shca_dev_port_follows_netdev(struct kunit *test)
{
	struct net_device *ndev = shca_kunit_netdev(test, shca_mac_a);
	struct ib_device *ibdev = shca_kunit_device(test, "shcak_p", ndev);
	struct shca_event_counter *c;
	struct ib_port_attr pattr;

	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	INIT_IB_EVENT_HANDLER(&c->handler, ibdev, shca_count_event);
	ib_register_event_handler(&c->handler);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test,
						  shca_unregister_event_handler,
						  &c->handler), 0);

	rtnl_lock();
	dev_close(ndev);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, 1, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.state, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, pattr.phys_state, IB_PORT_PHYS_STATE_DISABLED);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&c->err, 1));

	rtnl_lock();
	KUNIT_EXPECT_EQ(test, dev_open(ndev, NULL), 0);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, 1, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.state, IB_PORT_ACTIVE);
	KUNIT_EXPECT_EQ(test, pattr.phys_state, IB_PORT_PHYS_STATE_LINK_UP);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&c->active, 1));
	KUNIT_EXPECT_EQ(test, atomic_read(&c->err), 1);

	/* Carrier loss while up: port down, physical state polling. */
	netif_carrier_off(ndev);
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, 1, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.state, IB_PORT_DOWN);
	KUNIT_EXPECT_EQ(test, pattr.phys_state, IB_PORT_PHYS_STATE_POLLING);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&c->err, 2));
	netif_carrier_on(ndev);
	KUNIT_EXPECT_TRUE(test, shca_wait_count(&c->active, 2));

	/*
	 * The MTU: the data path's copy (read under QP locks, where the
	 * core's netdev lookup must not be taken) follows the netdev's, as
	 * query_port does. 1500 carries 1024, 700 carries 512.
	 */
	KUNIT_EXPECT_EQ(test, shca_port_mtu(to_shca_dev(ibdev)),
			ib_mtu_enum_to_int(iboe_get_mtu(ndev->mtu)));
	rtnl_lock();
	KUNIT_EXPECT_EQ(test, dev_set_mtu(ndev, 700), 0);
	rtnl_unlock();
	KUNIT_EXPECT_EQ(test, shca_port_mtu(to_shca_dev(ibdev)), 512);
	KUNIT_ASSERT_EQ(test, ib_query_port(ibdev, 1, &pattr), 0);
	KUNIT_EXPECT_EQ(test, pattr.active_mtu, IB_MTU_512);
	rtnl_lock();
	KUNIT_EXPECT_EQ(test, dev_set_mtu(ndev, 1500), 0);
	rtnl_unlock();
	KUNIT_EXPECT_EQ(test, shca_port_mtu(to_shca_dev(ibdev)), 1024);
}

/* Pass: each refused "rdma link add" says why and registers nothing. */
static void shca_dev_refuses_bad_links(struct kunit *test)
{
	struct net_device *a = shca_kunit_netdev(test, shca_mac_a);
	struct net_device *b = shca_kunit_netdev(test, shca_mac_b);
	struct ib_device *other;

	shca_kunit_device(test, "shcak_r", a);

	/* Second device on the same netdev. */
	KUNIT_EXPECT_EQ(test, shca_newlink("shcak_r2", a), -EEXIST);
	other = ib_device_get_by_name("shcak_r2", RDMA_DRIVER_UNKNOWN);
	KUNIT_EXPECT_NULL(test, other);

	/* A name already taken. */
	KUNIT_EXPECT_EQ(test, shca_newlink("shcak_r", b), -EEXIST);

	/* Loopback is not an Ethernet port. */
	KUNIT_EXPECT_EQ(test, shca_newlink("shcak_lo", init_net.loopback_dev),
			-EOPNOTSUPP);
	other = ib_device_get_by_name("shcak_lo", RDMA_DRIVER_UNKNOWN);
	KUNIT_EXPECT_NULL(test, other);

	/* Nothing was left reserving netdev b: it takes a device now. */
	shca_kunit_device(test, "shcak_r3", b);
}

/* Pass: two devices on two netdevs coexist and go away independently. */
static void shca_dev_two_devices(struct kunit *test)
{
	struct net_device *a = shca_kunit_netdev(test, shca_mac_a);
	struct net_device *b = shca_kunit_netdev(test, shca_mac_b);
	struct ib_device *da = shca_kunit_device(test, "shcak_a", a);
	struct ib_device *db = shca_kunit_device(test, "shcak_b", b);
	struct ib_device *ibdev;

	KUNIT_EXPECT_NE(test, da->node_guid, db->node_guid);

	/* "rdma link delete shcak_a" */
	ibdev = ib_device_get_by_name("shcak_a", RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	ib_unregister_device_and_put(ibdev);
	KUNIT_EXPECT_TRUE(test, shca_kunit_wait_gone("shcak_a"));

	ibdev = ib_device_get_by_name("shcak_b", RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	KUNIT_EXPECT_PTR_EQ(test, ibdev, db);
	ib_device_put(ibdev);

	/* The freed netdev takes a new device again. */
	shca_kunit_device(test, "shcak_a2", a);
}

/* Pass: unregistering the netdev removes its device, without a hang. */
static void shca_dev_netdev_unregister(struct kunit *test)
{
	struct net_device *ndev = shca_kunit_netdev(test, shca_mac_a);

	shca_kunit_device(test, "shcak_u", ndev);
	shca_kunit_netdev_remove(test, ndev);
	KUNIT_EXPECT_TRUE(test, shca_kunit_wait_gone("shcak_u"));
}

/* Pass: kernel PDs each get a distinct DMA MR lkey; counts return to 0. */
static void shca_dev_pd_alloc_free(struct kunit *test)
{
	struct net_device *ndev = shca_kunit_netdev(test, shca_mac_a);
	struct ib_device *ibdev = shca_kunit_device(test, "shcak_pd", ndev);
	struct shca_dev *sdev = to_shca_dev(ibdev);
	const int n = 64;
	struct ib_pd **pds;
	int i, j;

	/* The MAD layer's PD is there from the start. */
	const int pds0 = atomic_read(&sdev->num_pds);
	const u32 mrs0 = shca_kunit_count_mrs(sdev);

	KUNIT_EXPECT_EQ(test, pds0, 1);
	pds = kunit_kcalloc(test, n, sizeof(*pds), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pds);

	for (i = 0; i < n; i++) {
		/* Every other PD gets the DMA MR of the unsafe global rkey. */
		pds[i] = ib_alloc_pd(ibdev, i & 1 ? IB_PD_UNSAFE_GLOBAL_RKEY : 0);
		KUNIT_ASSERT_FALSE(test, IS_ERR(pds[i]));
		/* The reserved lkey: no DMA MR per PD for local access. */
		KUNIT_EXPECT_EQ(test, pds[i]->local_dma_lkey,
				SHCA_LOCAL_DMA_LKEY);
		if (!(i & 1)) {
			KUNIT_EXPECT_NULL(test, pds[i]->__internal_mr);
			continue;
		}
		KUNIT_ASSERT_NOT_NULL(test, pds[i]->__internal_mr);
		KUNIT_EXPECT_EQ(test, pds[i]->__internal_mr->type,
				IB_MR_TYPE_DMA);
		KUNIT_EXPECT_EQ(test, pds[i]->unsafe_global_rkey,
				pds[i]->__internal_mr->rkey);
		KUNIT_EXPECT_PTR_EQ(test, pds[i]->__internal_mr->pd, pds[i]);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->num_pds), pds0 + n);
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(sdev), mrs0 + n / 2);
	for (i = 1; i < n; i += 2)
		for (j = i + 2; j < n; j += 2)
			KUNIT_EXPECT_NE(test, pds[i]->unsafe_global_rkey,
					pds[j]->unsafe_global_rkey);

	for (i = 0; i < n; i++)
		ib_dealloc_pd(pds[i]);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->num_pds), pds0);
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(sdev), mrs0);
}

static struct kunit_case shca_dev_cases[] = {
	KUNIT_CASE(shca_dev_create_and_query),
	KUNIT_CASE(shca_dev_port_follows_netdev),
	KUNIT_CASE(shca_dev_refuses_bad_links),
	KUNIT_CASE(shca_dev_two_devices),
	KUNIT_CASE(shca_dev_netdev_unregister),
	KUNIT_CASE(shca_dev_pd_alloc_free),
	{}
};

static struct kunit_suite shca_dev_suite = {
	.name = "shca_device",
	.test_cases = shca_dev_cases,
};

kunit_test_suite(shca_dev_suite);

MODULE_DESCRIPTION("KUnit tests for the softhca driver");
MODULE_LICENSE("GPL");
