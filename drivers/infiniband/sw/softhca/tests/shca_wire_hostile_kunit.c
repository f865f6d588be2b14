// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_wire_hostile: hostile packets fed straight into
 * shca_wire_rx() and shca_net_decode(): random headers and payloads for
 * every opcode and QP type, truncated and corrupted packets, wrong
 * addressing, lying responses, junk judged in softirq, a SEND_FIRST
 * whose receive is flushed, a RETH past its region; each one accounted
 * for in rx_packets or rx_dropped.
 *
 * The network between a and b is the test network, pumped by the
 * test's thread; the fixture is shca_kunit_wire.c.
 */

#include <linux/prandom.h>
#include <linux/unaligned.h>
#include <kunit/test.h>
#include <net/ipv6.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_wire.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const enum ib_qp_type shca_wt_qp_types[] = {
	IB_QPT_RC, IB_QPT_UC, IB_QPT_UD,
};

KUNIT_ARRAY_PARAM(shca_wt_qp_types, shca_wt_qp_types, shca_wt_qp_type_desc);

/* Post receives over the first 32 KiB of b's buffer. */
static void shca_wt_hostile_recvs(struct kunit *test, struct ib_qp *qp,
				  struct shca_qt_end *e)
{
	int i;

	for (i = 0; i < 8; i++) {
		struct ib_sge sge = shca_qt_sge(e, i * 4096, 4096);

		KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(qp, 100 + i, &sge,
							   1),
				0);
	}
}

/*
 * Every opcode with a valid BTH and random bytes after it (extension
 * headers, payload of random length and pad), at the expected PSN and at
 * random ones, into a QP of each type of b (whose peer is a): each
 * packet is accounted for once, in rx_packets or rx_dropped; nothing
 * outside b's receive buffers changes (b has no MR for remote access);
 * KASAN, lockdep and UBSAN watch the rest. b's QP starts again from RTS
 * for each opcode.
 */
static void shca_wire_hostile_garbage(struct kunit *test)
{
	const enum ib_qp_type *type = test->param_value;
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qa = f->a.qp, *qb = f->b.qp;
	struct rnd_state rnd;
	u8 *pkt;
	u32 fed = 0, opcode;
	int v;

	pkt = kunit_kzalloc(test, 2048, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkt);
	prandom_seed_state(&rnd, 0x5eed0000 + *type);
	if (*type == IB_QPT_UD) {
		qb = shca_wt_ud_qp(test, &f->b);
	} else if (*type == IB_QPT_UC) {
		qa = shca_wt_qp(test, &f->a, IB_QPT_UC);
		qb = shca_wt_qp(test, &f->b, IB_QPT_UC);
	}
	if (*type != IB_QPT_UD)
		shca_wt_connect_qps(f, qa, qb, &shca_wt_calm);
	shca_wt_hostile_recvs(test, qb, &f->b);
	shca_knet_mark(f->net);

	for (opcode = 0; opcode < 256; opcode++) {
		const struct shca_op *op = shca_op_get(opcode);

		if (!op)
			continue;
		for (v = 0; v < 8; v++) {
			u32 paylen = 0, pad = 0, psn, len;

			if (op->flags & SHCA_OP_PAYLOAD) {
				paylen = prandom_u32_state(&rnd) %
					 (v < 4 ? SHCA_WT_MTU + 1 : 1400);
				if (v & 1)
					paylen = v < 4 ? SHCA_WT_MTU : 0;
				pad = paylen ? prandom_u32_state(&rnd) % 4 : 0;
				pad = min(pad, paylen);
			}
			len = op->hdr_len + paylen;
			psn = v & 2 ? prandom_u32_state(&rnd) :
				      READ_ONCE(to_shca_qp(qb)->rq_psn);
			prandom_bytes_state(&rnd, pkt, len);
			shca_wt_bth(pkt, opcode, pad, qb->qp_num,
				    prandom_u32_state(&rnd) & 1, psn);
			/* The controlled Q_Key half of the time. */
			if ((op->flags & SHCA_OP_DETH) && (v & 4))
				put_unaligned_be32(SHCA_WT_QKEY,
						   pkt + SHCA_BTH_BYTES);
			KUNIT_ASSERT_TRUE_MSG(test,
					      shca_wt_feed(f, 0, 1, pkt, len),
					      "opcode 0x%02x does not decode",
					      opcode);
			fed++;
		}
		if (!shca_wt_wait_counted(f, &f->b, fed, false)) {
			kunit_info(test, "after opcode 0x%02x", opcode);
			return;
		}
		/* Start again from RTS with receives. */
		shca_wt_drain_cq(f->b.cq);
		if (*type == IB_QPT_UD) {
			struct ib_qp_attr attr = {
				.qp_state = IB_QPS_RESET,
			};

			KUNIT_ASSERT_EQ(test, ib_modify_qp(qb, &attr,
							   IB_QP_STATE), 0);
			attr.qp_state = IB_QPS_INIT;
			attr.port_num = 1;
			attr.qkey = SHCA_WT_QKEY;
			KUNIT_ASSERT_EQ(test, ib_modify_qp(qb, &attr,
							   IB_QP_STATE |
							   IB_QP_PKEY_INDEX |
							   IB_QP_PORT |
							   IB_QP_QKEY), 0);
			attr.qp_state = IB_QPS_RTR;
			KUNIT_ASSERT_EQ(test, ib_modify_qp(qb, &attr,
							   IB_QP_STATE), 0);
			attr.qp_state = IB_QPS_RTS;
			KUNIT_ASSERT_EQ(test, ib_modify_qp(qb, &attr,
							   IB_QP_STATE |
							   IB_QP_SQ_PSN), 0);
		} else {
			shca_wt_restate(test, qb, &f->a, qa->qp_num,
					&shca_wt_calm);
		}
		shca_wt_hostile_recvs(test, qb, &f->b);
	}
	KUNIT_EXPECT_GT(test, fed, 8 * 30);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->b, fed, true));
	/* b answered some of it; a accounted for what reached it. */
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->a,
						     f->net->delivered[0], true));
	KUNIT_EXPECT_EQ(test, f->net->count[0], 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 32768, 32768, 0));
	shca_wt_drain_cq(f->a.cq);
}

/*
 * Truncated and corrupted packets: shca_net_decode() refuses each;
 * handed to shca_wire_rx() anyway with the headers decoded before the
 * damage (the QP's work item decodes again), each is dropped and counted
 * in rx_dropped, none in rx_packets, and nothing is executed.
 */
static void shca_wire_hostile_truncated(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	u32 fed = 0, opcode;
	u8 pkt[SHCA_MAX_HDR_BYTES + 8];

	shca_wt_connect(f, &shca_wt_calm);
	shca_wt_hostile_recvs(test, f->b.qp, &f->b);
	shca_wt_hostile_recvs(test, ub, &f->b);
	shca_knet_mark(f->net);

	for (opcode = 0; opcode < 256; opcode++) {
		const struct shca_op *op = shca_op_get(opcode);
		u32 hdr, cut[6], qpn, i;

		if (!op)
			continue;
		hdr = op->hdr_len;
		qpn = op->flags & SHCA_OP_UD ? ub->qp_num : f->b.qp->qp_num;
		memset(pkt, 0, sizeof(pkt));
		shca_wt_bth(pkt, opcode, 0, qpn, true, 0);
		if (op->flags & SHCA_OP_DETH)
			put_unaligned_be32(SHCA_WT_QKEY, pkt + SHCA_BTH_BYTES);
		/* From nothing to one byte short of the ICRC. */
		cut[0] = 0;
		cut[1] = 1;
		cut[2] = SHCA_BTH_BYTES - 1;
		cut[3] = SHCA_BTH_BYTES;
		cut[4] = hdr - 1;
		cut[5] = hdr + SHCA_ICRC_BYTES - 1;
		for (i = 0; i < ARRAY_SIZE(cut) + 4; i++) {
			struct sk_buff *skb;
			struct shca_pkt good, bad;

			skb = shca_wt_forge(f, 0, 1, pkt, hdr);
			KUNIT_ASSERT_NOT_NULL(test, skb);
			KUNIT_ASSERT_EQ(test, shca_net_decode(skb, &good), 0);
			if (i < ARRAY_SIZE(cut)) {
				skb_trim(skb, cut[i]);
			} else if (i == ARRAY_SIZE(cut)) {
				skb->data[3] = 0xfe;	/* P_Key */
			} else if (i == ARRAY_SIZE(cut) + 1) {
				skb->data[1] |= 0x01;	/* version */
			} else if (i == ARRAY_SIZE(cut) + 2) {
				skb->data[0] = 0x1f;	/* no such opcode */
			} else {
				/* A pad longer than the payload. */
				skb->data[1] |= 0x30;
			}
			KUNIT_EXPECT_EQ_MSG(test, shca_net_decode(skb, &bad),
					    -EINVAL, "opcode 0x%02x case %u",
					    opcode, i);
			shca_knet_rx(f->net, 1, skb, &good);
			fed++;
		}
	}
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->b, fed, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), fed);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_wt_drain_cq(f->b.cq), 0);
	KUNIT_EXPECT_EQ(test, f->net->count[1], 0);

	/* A packet that is neither IPv4 nor IPv6. */
	{
		struct sk_buff *skb = shca_wt_forge(f, 0, 1, pkt, 16);
		struct shca_pkt p;

		KUNIT_ASSERT_NOT_NULL(test, skb);
		skb->protocol = htons(ETH_P_ARP);
		KUNIT_EXPECT_EQ(test, shca_net_decode(skb, &p), -EINVAL);
		kfree_skb(skb);
	}
}

/*
 * Valid packets that must not be taken: for a QP number nobody has, for
 * a QP of the other device, of another transport than the QP's, from a
 * GID that is not the connection's peer (a WRITE that would land), over
 * IPv4 from a GID of no one: each dropped where it arrived and counted
 * there, memory untouched, the QPs in RTS.
 */
static void shca_wire_hostile_addressing(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	u8 pkt[SHCA_RETH_BYTES + SHCA_BTH_BYTES + 64] = {};
	u32 len = SHCA_BTH_BYTES + SHCA_RETH_BYTES + 64, rkey;
	struct shca_pkt p;
	struct sk_buff *skb;

	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_knet_mark(f->net);
	/* RC WRITE ONLY, 64 bytes, at PSN 0, through a valid rkey. */
	shca_wt_bth(pkt, IB_OPCODE_RC_RDMA_WRITE_ONLY, 0, f->b.qp->qp_num,
		    true, 0);
	put_unaligned_be64(f->b.mr->iova, pkt + SHCA_BTH_BYTES);
	put_unaligned_be32(rkey, pkt + SHCA_BTH_BYTES + 8);
	put_unaligned_be32(64, pkt + SHCA_BTH_BYTES + 12);
	memset(pkt + SHCA_BTH_BYTES + SHCA_RETH_BYTES, 0xee, 64);

	/* From b's own GID (not the peer's): dropped by the QP. */
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 1, 1, pkt, len));
	/* To b's QP, but arriving at a's device. */
	skb = shca_wt_forge(f, 0, 1, pkt, len);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_EQ(test, shca_net_decode(skb, &p), 0);
	shca_knet_rx(f->net, 0, skb, &p);
	/* To b's UD QP: not its transport. */
	put_unaligned_be32(ub->qp_num, pkt + 4);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	/* To a QP number nobody has. */
	put_unaligned_be32(SHCA_QPN_MAX - 1, pkt + 4);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	/* Over IPv4, from 192.0.2.1: not the peer. */
	put_unaligned_be32(f->b.qp->qp_num, pkt + 4);
	{
		struct shca_path path = {
			.av = { .net_type = RDMA_NETWORK_IPV4, .hop_limit = 1 },
			.sport = 0xc001,
		};

		ipv6_addr_set_v4mapped(htonl(0xc0000201),
				       (struct in6_addr *)path.av.sgid.raw);
		path.av.dgid = f->b.gid;
		skb = shca_wt_forge_path(&path, pkt, len);
		KUNIT_ASSERT_NOT_NULL(test, skb);
		KUNIT_ASSERT_EQ(test, shca_net_decode(skb, &p), 0);
		KUNIT_EXPECT_EQ(test, p.net_type, RDMA_NETWORK_IPV4);
		KUNIT_EXPECT_EQ(test, p.hop_limit, 1);
		KUNIT_EXPECT_EQ(test, p.sport, 0xc001);
		shca_knet_rx(f->net, 1, skb, &p);
	}
	/* A UD datagram to the RC QP. */
	shca_wt_bth(pkt, IB_OPCODE_UD_SEND_ONLY, 0, f->b.qp->qp_num, false, 0);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, 40));

	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->b, 5, true));
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->a, 1, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 5);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_DROPPED), 1);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));
	KUNIT_EXPECT_EQ(test, f->net->count[0] + f->net->count[1], 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_RTS);

	/* The same WRITE from the peer lands: the drops were for cause. */
	shca_wt_bth(pkt, IB_OPCODE_RC_RDMA_WRITE_ONLY, 0, f->b.qp->qp_num,
		    true, 0);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->b, 6, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf, 0xee, 64));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 64, 4096, 0));
}

/*
 * Responses that lie to a requester whose READ (2000 bytes, two
 * packets) never reached the responder: a first response shorter than
 * the MTU, a response longer than the READ, an atomic ACK, an ACK for a
 * PSN never sent, a last response longer than what is left. None of it
 * lands; the true responses then complete the READ, byte-exact, and
 * nothing is written past it.
 */
static void shca_wt_resp(struct shca_qt_fix *f, u8 opcode, u32 psn,
			 const u8 *data, u32 n)
{
	u8 *pkt = kunit_kzalloc(f->test, n + 24, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(f->test, pkt);
	shca_wt_bth(pkt, opcode, -n & 3, f->a.qp->qp_num, false, psn);
	put_unaligned_be32(SHCA_AETH_CREDIT_INVAL << 24, pkt + SHCA_BTH_BYTES);
	memcpy(pkt + 16, data, n);
	KUNIT_ASSERT_TRUE(f->test, shca_wt_feed(f, 1, 0, pkt,
						16 + ALIGN(n, 4)));
	kunit_kfree(f->test, pkt);
}

static void shca_wire_hostile_responses(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 18, .retry_cnt = 7, .rnr_retry = 7,	/* 1 s */
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, 2000);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
		.remote_addr = 0x1000, .rkey = 0x1234,
	};
	u32 qpn = f->a.qp->qp_num, aeth = SHCA_AETH_CREDIT_INVAL << 24;
	u8 *pkt, *data;
	struct ib_wc wc;
	int i;

	pkt = kunit_kzalloc(test, 4096, GFP_KERNEL);
	data = kunit_kzalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, pkt);
	KUNIT_ASSERT_NOT_NULL(test, data);
	shca_wt_fill(data, 4096, 0x42);
	shca_wt_connect(f, &c);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 0, -1 };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, &wr.wr), 0);
	for (i = 0; i < 2000 && !f->net->count[0]; i++)
		shca_knet_run(f->net, 1);
	shca_knet_run(f->net, 2);
	KUNIT_ASSERT_EQ(test, f->net->count[0], 1);

	/* A first response must carry exactly one MTU. */
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 0, data, 1000);
	/* More than the READ asked for, in one packet. */
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, 0, data, 2004);
	/* An atomic ACK for the READ's PSN. */
	shca_wt_bth(pkt, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, 0, qpn, false, 0);
	put_unaligned_be32(aeth, pkt + SHCA_BTH_BYTES);
	put_unaligned_be64(0xbad, pkt + 16);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 1, 0, pkt, 24));
	/* An ACK for PSNs never sent: dropped. */
	shca_wt_bth(pkt, IB_OPCODE_RC_ACKNOWLEDGE, 0, qpn, false, 5);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 1, 0, pkt, 16));
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->a, 4, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_DROPPED), 1);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, SHCA_QT_BUF, 0));
	shca_qt_expect_empty(test, f->a.cq);

	/* The true first response, then a last one too long, then true. */
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 0, data,
		     SHCA_WT_MTU);
	memmove(data, data + SHCA_WT_MTU, 2000);
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, 1, data, 1000);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->a, 6, true));
	shca_qt_expect_empty(test, f->a.cq);
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, 1, data,
		     2000 - SHCA_WT_MTU);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2000);
	shca_wt_fill(data, 4096, 0x42);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF, data, 2000), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, SHCA_WT_A_OFF, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf + SHCA_WT_A_OFF + 2000,
					    8192, 0));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_PKTS), 6);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
}

/*
 * Issue 29, finding 9: packets a QP would refuse are judged in softirq,
 * before they take room in its queue: WRITEs to a connected QP from a
 * GID that is not its peer, datagrams with another Q_Key. With the QPs'
 * work items stopped, none of them is queued (each is counted dropped at
 * once) while the peer's packet is; once the work item runs, the peer's
 * WRITE lands. Before the fix every one was queued (2048 junk packets
 * filled the queue and the peer's were dropped).
 */
static void shca_wire_rx_judged_in_softirq(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	struct shca_qp *b = to_shca_qp(f->b.qp), *u = to_shca_qp(ub);
	u8 pkt[SHCA_BTH_BYTES + SHCA_RETH_BYTES + 64] = {};
	u32 len = sizeof(pkt), rkey;
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	shca_knet_mark(f->net);
	shca_qp_exec_stop(b);
	shca_qp_exec_stop(u);

	shca_wt_bth(pkt, IB_OPCODE_RC_RDMA_WRITE_ONLY, 0, b->ibqp.qp_num,
		    false, 0);
	put_unaligned_be64(f->b.mr->iova, pkt + SHCA_BTH_BYTES);
	put_unaligned_be32(rkey, pkt + SHCA_BTH_BYTES + 8);
	put_unaligned_be32(64, pkt + SHCA_BTH_BYTES + 12);
	memset(pkt + SHCA_BTH_BYTES + SHCA_RETH_BYTES, 0x77, 64);
	/* From b's own GID: not the connection's peer. */
	for (i = 0; i < 100; i++)
		KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 1, 1, pkt, len));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&b->rxq), 0U);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 100);
	/* Datagrams with a Q_Key the UD QP does not have. */
	shca_wt_bth(pkt, IB_OPCODE_UD_SEND_ONLY, 0, ub->qp_num, false, 0);
	put_unaligned_be32(SHCA_WT_QKEY + 1, pkt + SHCA_BTH_BYTES);
	put_unaligned_be32(0x123, pkt + SHCA_BTH_BYTES + 4);
	for (i = 0; i < 10; i++)
		KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, 40));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&u->rxq), 0U);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 110);
	KUNIT_EXPECT_EQ(test, atomic_read(&u->rxq_bytes), 0);

	/* The peer's WRITE is queued, and lands once the work item runs. */
	shca_wt_bth(pkt, IB_OPCODE_RC_RDMA_WRITE_ONLY, 0, b->ibqp.qp_num,
		    false, 0);
	put_unaligned_be64(f->b.mr->iova, pkt + SHCA_BTH_BYTES);
	put_unaligned_be32(rkey, pkt + SHCA_BTH_BYTES + 8);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	KUNIT_EXPECT_EQ(test, skb_queue_len(&b->rxq), 1U);
	KUNIT_EXPECT_GT(test, atomic_read(&b->rxq_bytes), 0);
	shca_qp_exec_resume(u);
	shca_qp_exec_resume(b);
	shca_qp_kick(b);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_stat(f, &f->b, SHCA_WS_RX_PKTS, 1,
						  3000));
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf, 0x77, 64));
	KUNIT_EXPECT_EQ(test, atomic_read(&b->rxq_bytes), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
}

/*
 * Issue 29, finding 6: a SEND whose first packet took a receive WQE and
 * whose last never comes. When the QP enters the error state, that WQE
 * completes with IB_WC_WR_FLUSH_ERR before the ones still queued (the
 * consumer gets its buffer back; ib_drain_qp() sees every receive).
 * Before the fix it was neither flushed nor completed.
 */
static void shca_wire_held_recv_flushed(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 4096);
	struct ib_sge rsge2 = shca_qt_sge(&f->b, 4096, 4096);
	u32 len = SHCA_BTH_BYTES + 1024;
	u8 *pkt = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	shca_wt_connect(f, &shca_wt_calm);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 7, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 8, &rsge2, 1), 0);
	shca_knet_mark(f->net);
	shca_wt_bth(pkt, IB_OPCODE_RC_SEND_FIRST, 0, f->b.qp->qp_num, false,
		    0);
	memset(pkt + SHCA_BTH_BYTES, 0xab, 1024);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	KUNIT_ASSERT_TRUE(test, shca_wt_wait_counted(f, &f->b, 1, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf, 0xab, 1024));
	shca_qt_expect_none(test, f->b.cq);

	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b.qp, &err, IB_QP_STATE), 0);
	shca_qt_expect_wc(test, f->b.cq, 7, IB_WC_WR_FLUSH_ERR, IB_WC_RECV,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 8, IB_WC_WR_FLUSH_ERR, IB_WC_RECV,
			  NULL);
	shca_qt_expect_empty(test, f->b.cq);
}

/*
 * Issue 29, finding 12: a WRITE whose RETH runs past the end of its
 * region is refused with its first packet, before a byte moves, as the
 * memory link refuses it: a NAK (remote access error), the responder in
 * the error state, the region untouched. Before the fix the first packet
 * (inside the region) was written and only a later one refused. The same
 * for a READ: no response leaves.
 */
static void shca_wire_reth_range(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	u32 len = SHCA_BTH_BYTES + SHCA_RETH_BYTES + 1024, rkey;
	u8 *pkt = kunit_kzalloc(test, len, GFP_KERNEL);
	const u64 tail = SHCA_QT_BUF - 1024;
	int read;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	for (read = 0; read < 2; read++) {
		if (read)
			shca_wt_connect(f, &shca_wt_calm);
		memset(f->b.buf + tail, 0, 1024);
		shca_knet_mark(f->net);
		/* 4 KiB from 1 KiB before the end: 3 KiB past it. */
		shca_wt_bth(pkt, read ? IB_OPCODE_RC_RDMA_READ_REQUEST :
					IB_OPCODE_RC_RDMA_WRITE_FIRST,
			    0, f->b.qp->qp_num, read, 0);
		put_unaligned_be64(f->b.mr->iova + tail, pkt + SHCA_BTH_BYTES);
		put_unaligned_be32(rkey, pkt + SHCA_BTH_BYTES + 8);
		put_unaligned_be32(4096, pkt + SHCA_BTH_BYTES + 12);
		memset(pkt + SHCA_BTH_BYTES + SHCA_RETH_BYTES, 0xcd, 1024);
		KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt,
						     read ? SHCA_BTH_BYTES +
						     SHCA_RETH_BYTES : len));
		KUNIT_EXPECT_TRUE(test, shca_wt_wait_stat(f, &f->b,
							  SHCA_WS_ACCESS_NAKS_SENT,
							  1, 3000));
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
		KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + tail, 1024, 0));
		/* The NAK, and no READ response before it. */
		shca_knet_run(f->net, 20);
		KUNIT_EXPECT_EQ(test, f->net->count[1], 1U);
	}
}

static struct kunit_case shca_wire_hostile_cases[] = {
	KUNIT_CASE_PARAM(shca_wire_hostile_garbage,
			 shca_wt_qp_types_gen_params),
	KUNIT_CASE(shca_wire_hostile_truncated),
	KUNIT_CASE(shca_wire_hostile_addressing),
	KUNIT_CASE(shca_wire_hostile_responses),
	KUNIT_CASE(shca_wire_rx_judged_in_softirq),
	KUNIT_CASE(shca_wire_held_recv_flushed),
	KUNIT_CASE_SLOW(shca_wire_reth_range),
	{}
};

static struct kunit_suite shca_wire_hostile_suite = {
	.name = "shca_wire_hostile",
	.init = shca_wt_init,
	.test_cases = shca_wire_hostile_cases,
};

kunit_test_suites(&shca_wire_hostile_suite);
