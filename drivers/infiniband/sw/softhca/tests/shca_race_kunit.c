// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for verbs that race on one object. The core holds only a
 * shared lock on an object for most verbs (modify_qp among them), so two
 * threads may run them on one QP at once. Each case stops the first call
 * at a known point (a static stub), runs the second from a kernel
 * thread, and checks that the second waits or fails - never that both
 * change the object at once.
 *
 * shca_race: modify_qp against modify_qp
 * shca_race_netns: a network namespace ends under a live device
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <net/net_namespace.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"
#include "../shca_wire.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_race_mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x52, 0x43, 0x01 };

/**
 * struct shca_race_fix - fixture of the race suite
 * @ibdev: a device on a test netdev
 * @pd: a kernel PD of it
 * @cq: the CQ of @qp
 * @qp: an RC QP in INIT
 * @other: the racing call: its attributes and mask
 * @other_mask: IB_QP_* of @other
 * @other_err: what the racing call returned
 * @other_done: the racing call has returned
 * @raced: the racing call had returned while the first one was stopped
 * @fired: the stub ran (the first call reached its stopping point)
 */
struct shca_race_fix {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	struct ib_qp_attr other;
	int other_mask;
	int other_err;
	struct completion other_done;
	bool raced;
	bool fired;
};

/* The stubs run in the tested code, without the test's context. */
static struct shca_race_fix *shca_race_cur;

static int shca_race_init(struct kunit *test)
{
	struct shca_race_fix *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_READ,
	};

	KUNIT_ASSERT_NOT_NULL(test, x);
	x->ibdev = shca_kunit_device(test, "shcak_race",
				     shca_kunit_netdev(test, shca_race_mac));
	x->pd = shca_kunit_pd(test, x->ibdev);
	x->cq = ib_alloc_cq(x->ibdev, NULL, 16, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(x->cq));
	shca_kunit_defer(test, shca_kunit_free_cq, x->cq);
	init.send_cq = x->cq;
	init.recv_cq = x->cq;
	x->qp = ib_create_qp(x->pd, &init);
	KUNIT_ASSERT_FALSE(test, IS_ERR(x->qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, x->qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(x->qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), 0);
	init_completion(&x->other_done);
	shca_race_cur = x;
	test->priv = x;
	return 0;
}

/* INIT -> RTR to the device's own GID, with @rd responder resources. */
static int shca_race_rtr_attr(struct shca_race_fix *x, u8 rd,
			      struct ib_qp_attr *attr)
{
	union ib_gid dgid;
	int err = rdma_query_gid(x->ibdev, 1, 0, &dgid);

	if (err)
		return err;
	memset(attr, 0, sizeof(*attr));
	attr->qp_state = IB_QPS_RTR;
	attr->path_mtu = IB_MTU_1024;
	attr->dest_qp_num = x->qp->qp_num;
	attr->max_dest_rd_atomic = rd;
	attr->min_rnr_timer = 1;
	attr->ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr->ah_attr, 1);
	rdma_ah_set_grh(&attr->ah_attr, &dgid, 0, 0, 64, 0);
	return IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU | IB_QP_DEST_QPN |
	       IB_QP_RQ_PSN | IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER;
}

static int shca_race_other_fn(void *arg)
{
	struct shca_race_fix *x = arg;

	x->other_err = ib_modify_qp(x->qp, &x->other, x->other_mask);
	complete(&x->other_done);
	return 0;
}

/*
 * The first modify_qp has allocated its responder resources and not yet
 * installed them: run the racing one now, from another thread, and give
 * it 200 ms to return before the first goes on.
 */
static void shca_race_res_stub(struct shca_qp *qp)
{
	struct shca_race_fix *x = shca_race_cur;
	struct task_struct *task;

	if (x->fired || qp != to_shca_qp(x->qp))
		return;
	x->fired = true;
	task = kthread_run(shca_race_other_fn, x, "shca_race_modify");
	if (IS_ERR(task)) {
		complete(&x->other_done);
		return;
	}
	x->raced = wait_for_completion_timeout(&x->other_done,
					       msecs_to_jiffies(200));
}

/*
 * Pass: two modify_qp INIT -> RTR on one RC QP, asking for 2 and 128
 * READ/atomic responder resources. The second (128) starts while the
 * first holds a 2-entry array it has not installed; it must wait for the
 * first and then fail (the QP is in RTR, INIT -> RTR no longer applies),
 * leaving the QP with 2 resources and room for them. Before the fix the
 * second grew the array to 128 entries meanwhile and the first then
 * copied 128 entries into its 2 (a heap overflow KASAN reports; here
 * @raced and the sizes tell).
 */
static void shca_race_modify_qp(struct kunit *test)
{
	struct shca_race_fix *x = test->priv;
	struct shca_qp *qp = to_shca_qp(x->qp);
	struct ib_qp_attr attr, got;
	struct ib_qp_init_attr init;
	int mask;

	mask = shca_race_rtr_attr(x, 2, &attr);
	KUNIT_ASSERT_GT(test, mask, 0);
	x->other_mask = shca_race_rtr_attr(x, 128, &x->other);
	kunit_activate_static_stub(test, shca_qp_res_alloced,
				   shca_race_res_stub);
	KUNIT_EXPECT_EQ(test, ib_modify_qp(x->qp, &attr, mask), 0);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&x->other_done,
							    10 * HZ));
	kunit_deactivate_static_stub(test, shca_qp_res_alloced);

	KUNIT_EXPECT_TRUE(test, x->fired);
	KUNIT_EXPECT_FALSE_MSG(test, x->raced,
			       "the second modify_qp ran inside the first");
	KUNIT_EXPECT_EQ(test, x->other_err, -EINVAL);
	KUNIT_ASSERT_EQ(test, ib_query_qp(x->qp, &got,
					  IB_QP_STATE | IB_QP_MAX_DEST_RD_ATOMIC,
					  &init), 0);
	KUNIT_EXPECT_EQ(test, got.qp_state, IB_QPS_RTR);
	KUNIT_EXPECT_EQ(test, got.max_dest_rd_atomic, 2);
	KUNIT_EXPECT_GE(test, qp->wresp.res_size, 2U);
	KUNIT_EXPECT_GE(test, ksize(qp->wresp.res),
			qp->wresp.res_size * sizeof(*qp->wresp.res));
}

/*
 * Pass: a modify_qp whose transition the IBTA forbids (here: responder
 * resources on a QP in INIT without a state change) grows nothing and
 * changes nothing. Before the fix the resources were allocated before
 * the transition was checked: two threads making such calls on fresh
 * QPs were the reproduction of the overflow.
 */
static void shca_race_refused_grows_nothing(struct kunit *test)
{
	struct shca_race_fix *x = test->priv;
	struct shca_qp *qp = to_shca_qp(x->qp);
	struct ib_qp_attr attr = { .max_dest_rd_atomic = 64 };

	KUNIT_EXPECT_EQ(test, ib_modify_qp(x->qp, &attr,
					   IB_QP_MAX_DEST_RD_ATOMIC), -EINVAL);
	KUNIT_EXPECT_EQ(test, qp->wresp.res_size, 0U);
	KUNIT_EXPECT_NULL(test, qp->wresp.res);
}

static struct kunit_case shca_race_cases[] = {
	KUNIT_CASE(shca_race_modify_qp),
	KUNIT_CASE(shca_race_refused_grows_nothing),
	{}
};

static struct kunit_suite shca_race_suite = {
	.name = "shca_race",
	.init = shca_race_init,
	.test_cases = shca_race_cases,
};

/* ------------------------------------------------------------------ */
/* shca_race_netns: a network namespace ends under a live device       */

static const u8 shca_race_ns_mac[ETH_ALEN] = {
	0x02, 0x53, 0x48, 0x52, 0x4e, 0x01
};

static void shca_race_put_net(void *net)
{
	put_net(net);
}

/*
 * Pass: a device made on a netdev of a namespace of its own ("rdma link
 * add" there) is taken off that namespace's wire when the namespace
 * ends, although the device itself is still alive (a reference held
 * here keeps the core's unregistration waiting); the device then goes
 * without touching the namespace. Before the fix the namespace's state
 * was freed with the device still on its list, and the device's later
 * detach wrote to freed memory (KASAN: use-after-free in
 * shca_net_detach()).
 */
static void shca_race_netns_exit(struct kunit *test)
{
	struct ib_device *ibdev;
	struct net_device *ndev;
	struct shca_dev *sdev;
	struct net *net;
	bool attached;
	int i;

	net = copy_net_ns(CLONE_NEWNET, &init_user_ns, &init_net);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(net), "copy_net_ns: %ld",
			       PTR_ERR(net));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_race_put_net,
							net), 0);
	ndev = shca_kunit_netdev_in(test, shca_race_ns_mac, net);
	shca_kunit_device(test, "shcak_race_ns", ndev);
	ibdev = ib_device_get_by_name("shcak_race_ns", RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	sdev = container_of(ibdev, struct shca_dev, ibdev);
	attached = READ_ONCE(sdev->wire_attached);
	KUNIT_EXPECT_TRUE(test, attached);

	/*
	 * The namespace ends: its netdev moves back to init_net (the device
	 * unregisters, waiting for our reference), then its pernet state
	 * goes.
	 */
	kunit_release_action(test, shca_race_put_net, net);
	for (i = 0; i < 500 && READ_ONCE(sdev->wire_attached); i++)
		msleep(20);
	attached = READ_ONCE(sdev->wire_attached);
	KUNIT_EXPECT_FALSE_MSG(test, attached,
			       "the device is still on the ended namespace's wire");
	KUNIT_EXPECT_PTR_EQ(test, dev_net(ndev), &init_net);
	ib_device_put(ibdev);
	KUNIT_EXPECT_TRUE(test, shca_kunit_wait_gone("shcak_race_ns"));
}

static void shca_race_release_sock(void *sock)
{
	udp_tunnel_sock_release(sock);
}

/*
 * Issue 29, finding 14: a device made while another owner (rdma_rxe)
 * holds UDP port 4791 in its namespace says so where people look (the
 * wire_udp port counter, the "wire" attribute: "local"), and regains the
 * wire without a new link once the port is free: the next packet it
 * tries to send opens the sockets within a second. Before the fix the
 * device looked healthy and never got its sockets.
 */
static void shca_race_wire_regained(struct kunit *test)
{
	static const u8 mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x52, 0x57, 0x01 };
	struct udp_port_cfg cfg = {
		.family = AF_INET,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct shca_path path = { .av = { .net_type = RDMA_NETWORK_IPV4 } };
	struct ib_device *ibdev;
	struct shca_dev *sdev;
	struct sk_buff *skb;
	struct socket *sock;
	struct net *net;
	u8 *bth;
	int i;

	net = copy_net_ns(CLONE_NEWNET, &init_user_ns, &init_net);
	KUNIT_ASSERT_FALSE(test, IS_ERR(net));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_race_put_net,
							net), 0);
	/* The port's other owner. */
	KUNIT_ASSERT_EQ(test, udp_sock_create(net, &cfg, &sock), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_race_release_sock,
							sock), 0);
	ibdev = shca_kunit_device(test, "shcak_race_wire",
				  shca_kunit_netdev_in(test, mac, net));
	sdev = container_of(ibdev, struct shca_dev, ibdev);
	KUNIT_EXPECT_FALSE(test, shca_net_has_wire(sdev));

	/* The other owner goes; the device sends (and fails to, once). */
	kunit_release_action(test, shca_race_release_sock, sock);
	KUNIT_EXPECT_FALSE(test, shca_net_has_wire(sdev));
	ipv6_addr_set_v4mapped(htonl(0xc0000201),
			       (struct in6_addr *)path.av.sgid.raw);
	ipv6_addr_set_v4mapped(htonl(0xc0000202),
			       (struct in6_addr *)path.av.dgid.raw);
	skb = shca_net_alloc(sdev, &path, SHCA_BTH_BYTES, &bth);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	memset(bth, 0, SHCA_BTH_BYTES);
	KUNIT_EXPECT_EQ(test, shca_net_send(sdev, &path, skb), -EHOSTUNREACH);
	for (i = 0; i < 150 && !shca_net_has_wire(sdev); i++)
		msleep(20);
	KUNIT_EXPECT_TRUE(test, shca_net_has_wire(sdev));
}

static struct kunit_case shca_race_netns_cases[] = {
	KUNIT_CASE_SLOW(shca_race_netns_exit),
	KUNIT_CASE_SLOW(shca_race_wire_regained),
	{}
};

static struct kunit_suite shca_race_netns_suite = {
	.name = "shca_race_netns",
	.test_cases = shca_race_netns_cases,
};

kunit_test_suites(&shca_race_suite, &shca_race_netns_suite);
