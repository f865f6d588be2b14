// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_ud: UD QPs and address handles: datagrams with the
 * GRH area checked, drops counted at the receiving device, posting
 * rules, multicast groups.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/ipv6.h>
#include <kunit/test.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static int shca_qt_ud_send(struct shca_qt_end *e, struct ib_qp *qp,
			   struct ib_ah *ah, u32 qpn, u32 qkey, u64 wr_id,
			   u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, 0, len);
	struct ib_ud_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_SEND_WITH_IMM,
			.ex.imm_data = cpu_to_be32(0xfeed), .sg_list = &sge,
			.num_sge = 1 },
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = qkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/*
 * A datagram arrives with the GRH area a RoCE v2 HCA writes (here IPv6:
 * GID 0 is the link-local one), the data after it, and every field of
 * the completion the core and rdma_cm read; the core's own GRH parser
 * finds the sender's GID in it.
 */
static void shca_qp_ud_datagram(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_ud_qp(test, &f->a, SHCA_QT_QKEY);
	struct ib_qp *ub = shca_qt_ud_qp(test, &f->b, SHCA_QT_QKEY);
	union ib_gid dgid, sgid, got_s, got_d;
	struct ib_ah *ah = shca_qt_ah(test, &f->a, f->b.ibdev, &dgid);
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)f->b.buf;
	struct rdma_ah_attr q;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, rdma_query_gid(f->a.ibdev, 1, 0, &sgid), 0);
	shca_qt_fill(f->a.buf, 100, 3);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 7, 200), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_QT_QKEY, 8, 100), 0);
	shca_qt_expect_wc(test, f->a.cq, 8, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 7, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 140);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, ub);
	KUNIT_EXPECT_EQ(test, wc.wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
					     IB_WC_WITH_NETWORK_HDR_TYPE),
			IB_WC_GRH | IB_WC_WITH_IMM |
			IB_WC_WITH_NETWORK_HDR_TYPE);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeed);
	KUNIT_EXPECT_EQ(test, wc.pkey_index, 0);
	/* The frame's L2 fields: the sender's MAC, no VLAN tag. */
	KUNIT_EXPECT_EQ(test, wc.wc_flags & (IB_WC_WITH_SMAC | IB_WC_WITH_VLAN),
			IB_WC_WITH_SMAC);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, shca_qt_mac[0]));

	KUNIT_EXPECT_EQ(test, f->b.buf[0] >> 4, 6);	/* IPv6 version */
	KUNIT_EXPECT_EQ(test, ip6->nexthdr, IPPROTO_UDP);
	KUNIT_EXPECT_EQ(test, ip6->hop_limit, 33);
	KUNIT_EXPECT_EQ(test, f->b.buf[0] & 0xf, 2);	/* traffic class 0x28 */
	KUNIT_EXPECT_EQ(test, ip6->flow_lbl[0], 0x81);
	KUNIT_EXPECT_EQ(test, ip6->flow_lbl[1], 0x23);
	KUNIT_EXPECT_EQ(test, ip6->flow_lbl[2], 0x45);
	/* UDP 8 + BTH 12 + DETH 8 + immediate 4 + data + ICRC 4 */
	KUNIT_EXPECT_EQ(test, ntohs(ip6->payload_len), 136);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6->saddr, sgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6->daddr, dgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 40, f->a.buf, 100), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 140, 60, 0));
	KUNIT_ASSERT_EQ(test, ib_get_gids_from_rdma_hdr((void *)f->b.buf,
							RDMA_NETWORK_IPV6,
							&got_s, &got_d), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&got_s, &sgid, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&got_d, &dgid, 16), 0);

	KUNIT_ASSERT_EQ(test, rdma_query_ah(ah, &q), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&rdma_ah_read_grh(&q)->dgid, &dgid, 16),
			0);
	KUNIT_EXPECT_EQ(test, rdma_ah_read_grh(&q)->hop_limit, 33);
	KUNIT_EXPECT_EQ(test, rdma_ah_read_grh(&q)->flow_label, 0x12345);
}

/*
 * UD is unreliable: a wrong Q_Key, a QP number nobody has, or no receive
 * posted complete successfully at the sender and are dropped (and
 * counted) at the receiver. The controlled-Q_Key bit sends with the QP's
 * own Q_Key. More than the MTU is a local length error.
 */
static void shca_qp_ud_drops(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_ud_qp(test, &f->a, SHCA_QT_QKEY);
	struct ib_qp *ub = shca_qt_ud_qp(test, &f->b, SHCA_QT_QKEY);
	struct shca_dev *sb = to_shca_dev(f->b.ibdev);
	union ib_gid dgid;
	struct ib_ah *ah = shca_qt_ah(test, &f->a, f->b.ibdev, &dgid);
	long dropped = atomic_long_read(&sb->rx_dropped);

	/* No receive posted. */
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_QT_QKEY, 1, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&sb->rx_dropped), dropped + 1);

	/* A wrong Q_Key, then a QP number nobody has. */
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 9, 200), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_QT_QKEY + 1, 2, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&sb->rx_dropped), dropped + 2);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, SHCA_QPN_MAX,
					      SHCA_QT_QKEY, 3, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_empty(test, f->b.cq);

	/* The controlled Q_Key: the sender's own, which matches. */
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, ub->qp_num,
					      BIT(31), 4, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 9, IB_WC_SUCCESS, IB_WC_RECV, NULL);

	/* The drops are the port counter ud_rx_dropped. */
	{
		struct ib_device *ibdev = f->b.ibdev;
		struct rdma_hw_stats *st = ibdev->ops.alloc_hw_port_stats(ibdev,
									   1);

		int i, n;

		KUNIT_ASSERT_NOT_NULL(test, st);
		n = st->num_counters;
		KUNIT_EXPECT_EQ(test, ibdev->ops.get_hw_stats(ibdev, st, 1, n),
				n);
		for (i = 0; i < n; i++)
			if (!strcmp(st->descs[i].name, "ud_rx_dropped"))
				break;
		KUNIT_ASSERT_LT(test, i, n);
		KUNIT_EXPECT_EQ(test, st->value[i], dropped + 2);
		/* The in-memory link sent nothing on the wire. */
		KUNIT_EXPECT_EQ(test, st->value[0], 0);
		KUNIT_EXPECT_STREQ(test, st->descs[0].name, "tx_packets");
		rdma_free_hw_stats_struct(st);
	}

	/* More than the port's MTU (1024 on a 1500-byte netdev). */
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 10, 2048), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_QT_QKEY, 5, 1025), 0);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_LOC_LEN_ERR, 0, NULL);
	shca_qt_expect_empty(test, f->b.cq);
}

/* UD posting rules: only SENDs, with an AH of this device. */
static void shca_qp_ud_refuse(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_ud_qp(test, &f->a, SHCA_QT_QKEY);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	union ib_gid dgid;
	struct ib_ah *ah = shca_qt_ah(test, &f->a, f->b.ibdev, &dgid);
	struct ib_ud_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
		.ah = ah, .remote_qpn = 5, .remote_qkey = SHCA_QT_QKEY,
	};
	const struct ib_send_wr *bad;

	KUNIT_EXPECT_EQ(test, ib_post_send(ua, &wr.wr, &bad), -EINVAL);
	wr.wr.opcode = IB_WR_SEND;
	wr.ah = NULL;
	KUNIT_EXPECT_EQ(test, ib_post_send(ua, &wr.wr, &bad), -EINVAL);
	shca_qt_expect_empty(test, f->a.cq);
}

struct shca_qt_mcast {
	struct ib_qp *qp;
	union ib_gid mgid;
};

static void shca_qt_mcast_detach(void *p)
{
	struct shca_qt_mcast *m = p;

	ib_detach_mcast(m->qp, &m->mgid, 0);
}

/* Attach @qp to @mgid; detached again at the end of the test. */
static int shca_qt_mcast_attach(struct kunit *test, struct ib_qp *qp,
				const union ib_gid *mgid)
{
	struct shca_qt_mcast *m = kunit_kzalloc(test, sizeof(*m), GFP_KERNEL);
	int err;

	KUNIT_ASSERT_NOT_NULL(test, m);
	m->qp = qp;
	m->mgid = *mgid;
	err = ib_attach_mcast(qp, &m->mgid, 0);
	if (!err)
		shca_kunit_defer(test, shca_qt_mcast_detach, m);
	return err;
}

/*
 * Multicast: a datagram to QP 0xffffff and a multicast GID reaches every
 * UD QP attached to the group (on one device and across two), each with
 * the GRH area naming the group as destination; a detached QP gets
 * nothing more; attach/detach refusals.
 */
static void shca_qp_ud_multicast(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_ud_qp(test, &f->a, SHCA_QT_QKEY);
	struct ib_qp *ub = shca_qt_ud_qp(test, &f->b, SHCA_QT_QKEY);
	struct ib_qp *uc = shca_qt_ud_qp(test, &f->b, SHCA_QT_QKEY);
	union ib_gid mgid = { .raw = { 0xff, 0x0e, [14] = 0x12, [15] = 0x34 } };
	union ib_gid ucast;
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)f->b.buf;
	struct ib_ah *ah;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qt_mcast_attach(test, ub, &mgid), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_mcast_attach(test, uc, &mgid), 0);
	/* Once per QP and group (the core counts each attach as a use). */
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(uc, &mgid, 0), -EEXIST);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &mgid, 0, 0, 1, 0);
	ah = rdma_create_ah(f->a.pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	shca_kunit_defer(test, shca_qt_destroy_ah, ah);

	shca_qt_fill(f->a.buf, 64, 11);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 20, 200), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, 0xffffff,
					      SHCA_QT_QKEY, 1, 64), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 20, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, ub);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6->daddr, mgid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 40, f->a.buf, 64), 0);
	/* uc was attached but had no receive: dropped there, counted. */
	shca_qt_expect_empty(test, f->b.cq);

	/* Both with receives: both get it. */
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 21, 200), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, uc, 22, 200), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, 0xffffff,
					      SHCA_QT_QKEY, 2, 64), 0);
	shca_qt_expect_wc(test, f->b.cq, 21, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, ub);
	shca_qt_expect_wc(test, f->b.cq, 22, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, uc);

	/* Detached: nothing more for ub; a unicast QPN is not the group. */
	KUNIT_ASSERT_EQ(test, ib_detach_mcast(ub, &mgid, 0), 0);
	KUNIT_EXPECT_EQ(test, ib_detach_mcast(ub, &mgid, 0), -EINVAL);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 23, 200), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, 0xffffff,
					      SHCA_QT_QKEY, 3, 64), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_QT_QKEY, 4, 64), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_empty(test, f->b.cq);

	/* Only UD QPs, only multicast GIDs (the core checks both). */
	KUNIT_ASSERT_EQ(test, rdma_query_gid(f->b.ibdev, 1, 0, &ucast), 0);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(ub, &ucast, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_attach_mcast(f->b.qp, &mgid, 0), -EINVAL);
}

static struct kunit_case shca_qp_ud_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_ud_datagram, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_ud_drops, shca_qt_apart_gen_params),
	KUNIT_CASE(shca_qp_ud_refuse),
	KUNIT_CASE_PARAM(shca_qp_ud_multicast, shca_qt_mem_gen_params),
	{}
};

static struct kunit_suite shca_qp_ud_suite = {
	.name = "shca_qp_ud",
	.init = shca_qt_init,
	.test_cases = shca_qp_ud_cases,
};

kunit_test_suites(&shca_qp_ud_suite);
