// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_wire_uc_ud: UC losing a message; UD datagrams
 * (the GRH area, src_qp, the completion's flags, the drops), over IPv6
 * and over IPv4; the completion reporting what softirq decoded.
 *
 * The network between a and b is the test network, pumped by the
 * test's thread; the fixture is shca_kunit_wire.c.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/unaligned.h>
#include <kunit/test.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_wire.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/*
 * UC: a WRITE and a SEND arrive as on RC, without ACKs; a SEND that lost
 * its middle packet completes at the sender and is lost at the receiver,
 * whose receive takes the next message whole.
 */
static void shca_wire_uc(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qa = shca_wt_qp(test, &f->a, IB_QPT_UC);
	struct ib_qp *qb = shca_wt_qp(test, &f->b, IB_QPT_UC);
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge dst = shca_qt_sge(&f->b, SHCA_WT_B_OFF, 4096);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_wc wc;

	shca_wt_connect_qps(f, qa, qb, &shca_wt_calm);
	/* b's MR, registered over b's RC QP (left alone otherwise). */
	shca_wt_restate(test, f->b.qp, &f->a, f->a.qp->qp_num, &shca_wt_calm);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + 20000;
	shca_wt_fill(f->a.buf, SHCA_QT_BUF, 6);

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(qa, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);

	/* A SEND whose second packet is lost. */
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(qb, 2, &dst, 1), 0);
	wr.wr.wr_id = 3;
	wr.wr.opcode = IB_WR_SEND;
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 0, 5 };
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(qa, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_empty(test, f->b.cq);

	/* The next SEND, with immediate data, is whole. */
	sge = shca_qt_sge(&f->a, 30000, SHCA_WT_LEN - 50);
	wr.wr.wr_id = 4;
	wr.wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(0x55);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(qa, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 2, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN - 50);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, qb);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF, f->a.buf + 30000,
				     SHCA_WT_LEN - 50), 0);
	/* The WRITE arrived before the SENDs that followed it. */
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 20000, f->a.buf + SHCA_WT_A_OFF,
				     SHCA_WT_LEN), 0);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 12);
	KUNIT_EXPECT_EQ(test, f->net->count[1], 0);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b, SHCA_WS_OOS_REQS), 0);
	KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	shca_qt_expect_empty(test, f->b.cq);
}

static int shca_wt_ud_send(struct shca_qt_end *e, struct ib_qp *qp,
			   struct ib_ah *ah, u32 qpn, u32 qkey, u64 wr_id,
			   u32 off, u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, off, len);
	struct ib_ud_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_SEND_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0xfeed), .sg_list = &sge,
			.num_sge = 1 },
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = qkey,
	};

	return shca_qt_post_qp(qp, &wr.wr);
}

/*
 * UD across the wire: the receive gets the packet's IPv6 header in its
 * GRH area (traffic class, flow label, hop limit, lengths, addresses, as
 * the core's GRH parser reads them), then the data; the completion has
 * the source QP, the immediate data, the network header type and the
 * sender's MAC. A wrong Q_Key, no receive posted, or a receive too small
 * lose the datagram at the receiver, counted; the sender never knows.
 */
static void shca_wire_ud(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_wt_ud_qp(test, &f->a);
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)f->b.buf;
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 1200);
	long dropped = atomic_long_read(&f->b.sdev->rx_dropped);
	union ib_gid got_s, got_d;
	struct ib_ah *ah;
	struct ib_wc wc;

	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &f->b.gid, 0x12345, 0, 33, 0x28);
	ah = rdma_create_ah(f->a.pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	shca_kunit_defer(test, shca_qt_destroy_ah, ah);
	shca_wt_fill(f->a.buf, SHCA_QT_BUF, 8);

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(ub, 10, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 1, 100, 1000), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 10, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 1);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_GRH_BYTES + 1000);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, ub);
	KUNIT_EXPECT_EQ(test, wc.wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
					     IB_WC_WITH_NETWORK_HDR_TYPE |
					     IB_WC_WITH_SMAC | IB_WC_WITH_VLAN |
					     IB_WC_WITH_INVALIDATE),
			IB_WC_GRH | IB_WC_WITH_IMM |
			IB_WC_WITH_NETWORK_HDR_TYPE | IB_WC_WITH_SMAC);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV6);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeed);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, shca_qt_mac[0]));
	/* The GRH area. */
	KUNIT_EXPECT_EQ(test, f->b.buf[0] >> 4, 6);
	KUNIT_EXPECT_EQ(test, ip6_tclass(ip6_flowinfo(ip6)), 0x28);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(ip6_flowlabel(ip6)), 0x12345);
	KUNIT_EXPECT_EQ(test, ip6->hop_limit, 33);
	KUNIT_EXPECT_EQ(test, ip6->nexthdr, IPPROTO_UDP);
	/* UDP 8 + BTH 12 + DETH 8 + immediate 4 + data + ICRC 4 */
	KUNIT_EXPECT_EQ(test, ntohs(ip6->payload_len), 1036);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6->saddr, f->a.gid.raw, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&ip6->daddr, f->b.gid.raw, 16), 0);
	KUNIT_ASSERT_EQ(test, ib_get_gids_from_rdma_hdr((void *)f->b.buf,
							RDMA_NETWORK_IPV6,
							&got_s, &got_d), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&got_s, &f->a.gid, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&got_d, &f->b.gid, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_GRH_BYTES, f->a.buf + 100,
				     1000), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + SHCA_GRH_BYTES + 1000,
					    4096, 0));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);

	/* No receive posted, then a wrong Q_Key: lost, counted. */
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 2, 0, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_stat(f, &f->b, SHCA_WS_RX_DROPPED,
						  1, 2000));
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(ub, 11, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY + 1, 3, 0, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&f->b.sdev->rx_dropped),
			dropped + 2);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);

	/* The controlled Q_Key bit: the sender's own, which matches. */
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      BIT(31), 4, 0, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 11, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_GRH_BYTES + 8);

	/*
	 * A receive too small for GRH and data: LOC_LEN_ERR for that
	 * receive only; the QP goes on (a remote sender must not be able
	 * to put a UD QP, QP1 above all, in the error state).
	 */
	rsge.length = SHCA_GRH_BYTES + 7;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(ub, 12, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 5, 0, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 12, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_RTS);
	rsge.length = SHCA_GRH_BYTES + 8;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(ub, 13, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 6, 0, 8), 0);
	shca_qt_expect_wc(test, f->a.cq, 6, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 13, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_GRH_BYTES + 8);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 6);
	KUNIT_EXPECT_EQ(test, f->net->stray, 0);
}

/*
 * A UD datagram "datagram" from 192.0.2.1 (source QP 0x123, TOS 0x10, TTL
 * 7) to 192.0.2.2, QP @qpn of device b, forged and decoded into @p; the
 * test fails and aborts if it cannot be.
 */
static struct sk_buff *shca_wt_ud_ipv4_dgram(struct shca_qt_fix *f, u32 qpn,
					     struct shca_pkt *p)
{
	struct shca_path path = {
		.av = { .net_type = RDMA_NETWORK_IPV4, .traffic_class = 0x10,
			.hop_limit = 7,
			.smac = { 0x02, 0x00, 0x5e, 0x00, 0x53, 0x01 } },
		.sport = 0xc123,
	};
	u8 pkt[SHCA_BTH_BYTES + SHCA_DETH_BYTES + 8];
	struct sk_buff *skb;

	ipv6_addr_set_v4mapped(htonl(0xc0000201),
			       (struct in6_addr *)path.av.sgid.raw);
	ipv6_addr_set_v4mapped(htonl(0xc0000202),
			       (struct in6_addr *)path.av.dgid.raw);
	shca_wt_bth(pkt, IB_OPCODE_UD_SEND_ONLY, 0, qpn, false, 0);
	put_unaligned_be32(SHCA_WT_QKEY, pkt + SHCA_BTH_BYTES);
	put_unaligned_be32(0x123, pkt + SHCA_BTH_BYTES + 4);
	memcpy(pkt + SHCA_BTH_BYTES + SHCA_DETH_BYTES, "datagram", 8);
	skb = shca_wt_forge_path(&path, pkt, sizeof(pkt));
	KUNIT_ASSERT_NOT_NULL(f->test, skb);
	KUNIT_ASSERT_EQ(f->test, shca_net_decode(skb, p), 0);
	return skb;
}

/*
 * Issue 29, finding 4: the work item takes what softirq decoded - the
 * VLAN of the netdev the packet came through, the source MAC - from the
 * packet's control block, never from skb->dev (a queued skb holds no
 * reference on it: the netdev may be gone). Here the decoded headers say
 * VLAN 42 and another source MAC than the frame's, and the skb has no
 * device: the completion must report what softirq saw. Before the fix
 * the work item decoded the packet again, from skb->dev and the frame.
 */
static void shca_wire_rx_cb(struct kunit *test)
{
	static const u8 seen_mac[ETH_ALEN] = { 0x02, 0x00, 0x5e, 0x00, 0x53, 0x2a };
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 200);
	struct sk_buff *skb;
	struct shca_pkt p;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(ub, 1, &rsge, 1), 0);
	shca_knet_mark(f->net);
	skb = shca_wt_ud_ipv4_dgram(f, ub->qp_num, &p);
	KUNIT_EXPECT_EQ(test, p.vlan_id, 0xffff);
	p.vlan_id = 42;
	ether_addr_copy(p.smac, seen_mac);
	skb->dev = NULL;
	shca_knet_rx(f->net, 1, skb, &p);

	shca_qt_expect_wc(test, f->b.cq, 1, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0x123);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_VLAN);
	KUNIT_EXPECT_EQ(test, wc.vlan_id, 42);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, seen_mac));
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV4);
}

/*
 * A datagram over IPv4 (from an address no device here has: UD takes
 * it): its IPv4 header is in the last 20 bytes of the GRH area, the
 * first 20 are zero; the completion says IPv4, the source QP of the
 * DETH, the Ethernet source; the core's GRH parser finds the addresses.
 */
static void shca_wire_ud_ipv4(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 200);
	const struct iphdr *ip = (const struct iphdr *)(f->b.buf + 20);
	union ib_gid got_s, got_d, want_s, want_d;
	struct sk_buff *skb;
	struct shca_pkt p;
	struct ib_wc wc;

	memset(f->b.buf, 0x5a, 256);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(ub, 1, &rsge, 1), 0);
	shca_knet_mark(f->net);
	skb = shca_wt_ud_ipv4_dgram(f, ub->qp_num, &p);
	want_s = p.sgid;
	want_d = p.dgid;
	shca_knet_rx(f->net, 1, skb, &p);

	shca_qt_expect_wc(test, f->b.cq, 1, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_GRH_BYTES + 8);
	KUNIT_EXPECT_EQ(test, wc.src_qp, 0x123);
	KUNIT_EXPECT_EQ(test, wc.network_hdr_type, RDMA_NETWORK_IPV4);
	KUNIT_EXPECT_EQ(test, wc.wc_flags & (IB_WC_GRH | IB_WC_WITH_IMM |
					     IB_WC_WITH_NETWORK_HDR_TYPE |
					     IB_WC_WITH_SMAC),
			IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE |
			IB_WC_WITH_SMAC);
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, p.smac));
	KUNIT_EXPECT_EQ(test, p.smac[5], 0x01);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 20, 0));
	KUNIT_EXPECT_EQ(test, (u32)ip->version, 4);
	KUNIT_EXPECT_EQ(test, (u32)ip->ihl, 5);
	KUNIT_EXPECT_EQ(test, ip->tos, 0x10);
	KUNIT_EXPECT_EQ(test, ip->ttl, 7);
	KUNIT_EXPECT_EQ(test, ip->protocol, IPPROTO_UDP);
	/* IP 20 + UDP 8 + BTH 12 + DETH 8 + data 8 + ICRC 4 */
	KUNIT_EXPECT_EQ(test, ntohs(ip->tot_len), 60);
	KUNIT_EXPECT_EQ(test, ntohl(ip->saddr), 0xc0000201);
	KUNIT_EXPECT_EQ(test, ntohl(ip->daddr), 0xc0000202);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_GRH_BYTES, "datagram", 8),
			0);
	KUNIT_EXPECT_EQ(test, f->b.buf[SHCA_GRH_BYTES + 8], 0x5a);
	KUNIT_ASSERT_EQ(test, ib_get_gids_from_rdma_hdr((void *)f->b.buf,
							RDMA_NETWORK_IPV4,
							&got_s, &got_d), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&got_s, &want_s, 16), 0);
	KUNIT_EXPECT_EQ(test, memcmp(&got_d, &want_d, 16), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(want_s.raw + 12), 0xc0000201);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
}

static struct kunit_case shca_wire_uc_ud_cases[] = {
	KUNIT_CASE(shca_wire_uc),
	KUNIT_CASE(shca_wire_ud),
	KUNIT_CASE(shca_wire_ud_ipv4),
	KUNIT_CASE(shca_wire_rx_cb),
	{}
};

static struct kunit_suite shca_wire_uc_ud_suite = {
	.name = "shca_wire_uc_ud",
	.init = shca_wt_init,
	.test_cases = shca_wire_uc_ud_cases,
};

kunit_test_suites(&shca_wire_uc_ud_suite);
