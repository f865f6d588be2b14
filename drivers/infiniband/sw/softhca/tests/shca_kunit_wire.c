// SPDX-License-Identifier: GPL-2.0
/*
 * softhca KUnit fixture of the wire suites (shca_wire_*_kunit.c): two
 * softhca devices whose connections are forced onto RoCE v2 packets
 * (shca_force_wire), with the test as the network between them, on top
 * of the data-path fixture (shca_kunit_qp.c). See shca_kunit_wire.h.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/unaligned.h>
#include <kunit/test.h>

#include "shca_kunit_wire.h"

/*
 * Connection attributes. timeout: 4.096 us * 2^timeout; HZ is 100 under
 * UML, so 12 is two jiffies and 16 about a quarter of a second.
 */

/* No loss: nothing may time out while the test thread pumps. */
const struct shca_qt_conn shca_wt_calm = {
	.timeout = 16, .retry_cnt = 7, .rnr_retry = 7,
};

/* Losses: the ACK timeout recovers quickly. */
const struct shca_qt_conn shca_wt_lossy = {
	.timeout = 12, .retry_cnt = 7, .rnr_retry = 7,
};

/**
 * shca_wt_init() - init of the wire suites
 * @test: the test
 *
 * a and b on devices of their own, their connections on the UDP link
 * through a test network that the test's thread pumps (shca_knet_pump();
 * the fixture's helpers pump it while they wait, see shca_qt_poll());
 * CQs of SHCA_WT_CQE entries, QPs of 2 SGEs.
 *
 * Return: 0.
 */
int shca_wt_init(struct kunit *test)
{
	static const struct shca_qt_opts o = {
		.two = true, .wire = true, .pumped = true,
		.ctx = IB_POLL_DIRECT, .cqe = SHCA_WT_CQE, .max_sge = 2,
	};

	return shca_qt_setup(test, &o);
}

/**
 * shca_wt_delta() - how much a wire counter of an end's device grew
 * @f: the fixture
 * @e: the end, &@f->a or &@f->b
 * @s: the counter
 *
 * Return: the growth since the network's mark (shca_knet_mark()).
 */
u64 shca_wt_delta(struct shca_qt_fix *f, struct shca_qt_end *e,
		  enum shca_wire_stat s)
{
	return shca_knet_delta(f->net, e == &f->b, s);
}

/**
 * shca_wt_wait_stat() - pump the network until a wire counter grew
 * @f: the fixture
 * @e: the end whose device's counter it is
 * @s: the counter
 * @n: by how much, since the mark
 * @ms: how long to wait, in milliseconds
 *
 * Return: whether it grew by @n.
 */
bool shca_wt_wait_stat(struct shca_qt_fix *f, struct shca_qt_end *e,
		       enum shca_wire_stat s, u64 n, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		shca_knet_pump(f->net);
		if (shca_wt_delta(f, e, s) >= n)
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
}

/**
 * shca_wt_drain_cq() - empty a CQ
 * @cq: the CQ
 *
 * Return: how many completions it had.
 */
int shca_wt_drain_cq(struct ib_cq *cq)
{
	struct ib_wc wc;
	int n = 0;

	while (ib_poll_cq(cq, 1, &wc) == 1)
		n++;
	return n;
}

/**
 * shca_wt_fill() - fill memory with the wire suites' pattern
 * @p: the memory
 * @len: its length
 * @seed: the pattern's seed
 *
 * Byte i is @seed + 7 i + i / 256: unlike shca_qt_fill()'s, the pattern
 * does not repeat every 256 bytes.
 */
void shca_wt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7 + (i >> 8);
}

/**
 * shca_wt_qp() - a QP of the wire suites' shape
 * @test: the test
 * @e: the end
 * @type: RC, UC or UD
 *
 * SHCA_QT_WR WQEs of 2 SGEs each way, 64 bytes inline (see
 * shca_qt_qp_make()).
 *
 * Return: the QP, in RESET.
 */
struct ib_qp *shca_wt_qp(struct kunit *test, struct shca_qt_end *e,
			 enum ib_qp_type type)
{
	return shca_qt_qp_make(test, e, type, SHCA_QT_WR, 2, 64, 0);
}

/**
 * shca_wt_ud_qp() - a UD QP of the wire suites' shape, in RTS
 * @test: the test; aborts if the QP cannot be made or moved
 * @e: the end
 *
 * Its Q_Key is SHCA_WT_QKEY.
 *
 * Return: the QP.
 */
struct ib_qp *shca_wt_ud_qp(struct kunit *test, struct shca_qt_end *e)
{
	struct ib_qp *qp = shca_wt_qp(test, e, IB_QPT_UD);
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = SHCA_WT_QKEY,
	};

	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_QKEY), 0);
	attr.qp_state = IB_QPS_RTR;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), 0);
	attr.qp_state = IB_QPS_RTS;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_SQ_PSN), 0);
	return qp;
}

/**
 * shca_wt_restate() - bring a QP back from any state to RTS, on the wire
 * @test: the test; aborts if a step fails
 * @qp: a QP of one end
 * @peer: the other end
 * @dest_qpn: the number of the peer's QP
 * @c: the connection's attributes
 *
 * shca_qt_restate_qp(), then a check that the connection runs on the
 * wire: the point of the wire suites.
 */
void shca_wt_restate(struct kunit *test, struct ib_qp *qp,
		     struct shca_qt_end *peer, u32 dest_qpn,
		     const struct shca_qt_conn *c)
{
	shca_qt_restate_qp(test, qp, peer->ibdev, dest_qpn, c);
	KUNIT_ASSERT_TRUE(test, READ_ONCE(to_shca_qp(qp)->wire));
}

/**
 * shca_wt_connect_qps() - connect a QP of a and a QP of b, both ways
 * @f: the fixture
 * @qa: the QP of a
 * @qb: the QP of b
 * @c: the connection's attributes
 *
 * From any state (see shca_wt_restate()).
 */
void shca_wt_connect_qps(struct shca_qt_fix *f, struct ib_qp *qa,
			 struct ib_qp *qb, const struct shca_qt_conn *c)
{
	shca_wt_restate(f->test, qa, &f->b, qb->qp_num, c);
	shca_wt_restate(f->test, qb, &f->a, qa->qp_num, c);
}

/**
 * shca_wt_connect() - connect a's and b's RC QPs, both ways
 * @f: the fixture
 * @c: the connection's attributes
 */
void shca_wt_connect(struct shca_qt_fix *f, const struct shca_qt_conn *c)
{
	shca_wt_connect_qps(f, f->a.qp, f->b.qp, c);
}

static const struct shca_wt_op shca_wt_ops[] = {
	{ "SEND", IB_WR_SEND, 4, 1 },
	{ "SEND_WITH_IMM", IB_WR_SEND_WITH_IMM, 4, 1 },
	{ "RDMA_WRITE", IB_WR_RDMA_WRITE, 4, 1 },
	{ "RDMA_WRITE_WITH_IMM", IB_WR_RDMA_WRITE_WITH_IMM, 4, 1 },
	{ "RDMA_READ", IB_WR_RDMA_READ, 1, 4 },
	{ "ATOMIC_CMP_AND_SWP", IB_WR_ATOMIC_CMP_AND_SWP, 1, 1 },
	{ "ATOMIC_FETCH_AND_ADD", IB_WR_ATOMIC_FETCH_AND_ADD, 1, 1 },
};

static void shca_wt_op_desc(const struct shca_wt_op *op, char *desc)
{
	strscpy(desc, op->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_wt_ops_all, shca_wt_ops, shca_wt_op_desc);

/**
 * shca_wt_ops_gen_params() - every RC operation, with the packets it takes
 * @prev: the previous parameter, NULL for the first
 * @desc: its description
 *
 * Return: the next parameter (a struct shca_wt_op), NULL after the last.
 */
const void *shca_wt_ops_gen_params(const void *prev, char *desc)
{
	return shca_wt_ops_all_gen_params(prev, desc);
}

/**
 * shca_wt_is_atomic() - whether an opcode is an atomic
 * @opcode: the opcode
 *
 * Return: true for CMP_AND_SWP and FETCH_AND_ADD.
 */
bool shca_wt_is_atomic(enum ib_wr_opcode opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/**
 * shca_wt_do() - run one RC operation of a towards b, and check it
 * @f: the fixture, a and b connected
 * @opcode: the operation
 *
 * b's MR is registered here (once). SHCA_WT_LEN bytes for the data
 * operations, checked byte by byte: the completions on both sides, the
 * data where it belongs and nothing around it, an atomic's target and
 * returned value. The pump applies the test's rule meanwhile; the counts
 * start here.
 */
void shca_wt_do(struct shca_qt_fix *f, enum ib_wr_opcode opcode)
{
	static const enum ib_wc_opcode wc_op[] = {
		[IB_WR_SEND] = IB_WC_SEND,
		[IB_WR_SEND_WITH_IMM] = IB_WC_SEND,
		[IB_WR_RDMA_WRITE] = IB_WC_RDMA_WRITE,
		[IB_WR_RDMA_WRITE_WITH_IMM] = IB_WC_RDMA_WRITE,
		[IB_WR_RDMA_READ] = IB_WC_RDMA_READ,
		[IB_WR_ATOMIC_CMP_AND_SWP] = IB_WC_COMP_SWAP,
		[IB_WR_ATOMIC_FETCH_AND_ADD] = IB_WC_FETCH_ADD,
	};
	struct kunit *test = f->test;
	bool atomic = shca_wt_is_atomic(opcode);
	bool read = opcode == IB_WR_RDMA_READ;
	bool send = opcode == IB_WR_SEND || opcode == IB_WR_SEND_WITH_IMM;
	bool imm = opcode == IB_WR_SEND_WITH_IMM ||
		   opcode == IB_WR_RDMA_WRITE_WITH_IMM;
	u64 *remote = (u64 *)(f->b.buf + SHCA_WT_ATOM);
	u64 *local = (u64 *)(f->a.buf + SHCA_WT_ATOM);
	struct ib_sge sge, rsge;
	struct ib_atomic_wr awr = {};
	struct ib_rdma_wr rwr = {};
	struct ib_send_wr *wr;
	struct ib_wc wc;

	/* A fast-reg MR is registered once: again would fail (VALID). */
	if (!f->rkey)
		f->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	memset(f->a.buf, 0, SHCA_QT_BUF);
	memset(f->b.buf, 0, SHCA_QT_BUF);
	if (read)
		shca_wt_fill(f->b.buf + SHCA_WT_B_OFF, SHCA_WT_LEN, 2);
	else if (!atomic)
		shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN, 1);
	*remote = 100;

	if (send || imm) {
		rsge = shca_qt_sge(&f->b, SHCA_WT_B_OFF, 4096);
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv_qp(f->b.qp, 77, &rsge,
							   send ? 1 : 0), 0);
	}
	if (atomic) {
		sge = shca_qt_sge(&f->a, SHCA_WT_ATOM, 8);
		awr.remote_addr = f->b.mr->iova + SHCA_WT_ATOM;
		awr.rkey = f->rkey;
		awr.compare_add = opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 100 : 5;
		awr.swap = 77;
		wr = &awr.wr;
	} else {
		sge = shca_qt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
		rwr.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
		rwr.rkey = f->rkey;
		wr = &rwr.wr;
	}
	wr->wr_id = 7;
	wr->opcode = opcode;
	wr->send_flags = IB_SEND_SIGNALED;
	wr->sg_list = &sge;
	wr->num_sge = 1;
	wr->ex.imm_data = cpu_to_be32(0xc0ffee);

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_qt_post_qp(f->a.qp, wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 7, IB_WC_SUCCESS, wc_op[opcode], &wc);
	if (read)
		KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
	else if (atomic)
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	if (send || imm) {
		shca_qt_expect_wc(test, f->b.cq, 77, IB_WC_SUCCESS,
				  send ? IB_WC_RECV : IB_WC_RECV_RDMA_WITH_IMM,
				  &wc);
		KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
		KUNIT_EXPECT_EQ(test, wc.src_qp, f->a.qp->qp_num);
		KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->b.qp);
		KUNIT_EXPECT_EQ(test, !!(wc.wc_flags & IB_WC_WITH_IMM), imm);
		if (imm)
			KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data),
					0xc0ffee);
	}

	if (atomic) {
		KUNIT_EXPECT_EQ(test, *local, 100);
		KUNIT_EXPECT_EQ(test, *remote,
				opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 77 : 105);
	} else if (read) {
		KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF,
					     f->b.buf + SHCA_WT_B_OFF,
					     SHCA_WT_LEN), 0);
		KUNIT_EXPECT_TRUE(test,
				  shca_qt_all(f->a.buf, SHCA_WT_A_OFF, 0));
		KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf + SHCA_WT_A_OFF +
						    SHCA_WT_LEN, 8192, 0));
	} else {
		KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
					     f->a.buf + SHCA_WT_A_OFF,
					     SHCA_WT_LEN), 0);
		KUNIT_EXPECT_TRUE(test,
				  shca_qt_all(f->b.buf, SHCA_WT_B_OFF, 0));
		KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + SHCA_WT_B_OFF +
						    SHCA_WT_LEN, 8192, 0));
	}
	/* Nothing else completes, whatever the network did. */
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_expect_none(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
}

/**
 * shca_wt_forge_path() - a packet as the wire would bring it
 * @path: the path it comes on
 * @bth: its transport headers and payload
 * @len: their length (the ICRC is added)
 *
 * Headers and ICRC by the test network's own encoder (shca_knet_encap()).
 *
 * Return: the packet, its data at the BTH; NULL without memory.
 */
struct sk_buff *shca_wt_forge_path(const struct shca_path *path,
				   const u8 *bth, u32 len)
{
	struct sk_buff *skb;

	skb = alloc_skb(128 + len + SHCA_ICRC_BYTES, GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, 128);
	skb_put_data(skb, bth, len);
	if (shca_knet_encap(skb, path)) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}

/**
 * shca_wt_forge() - a packet from an end's GID to an end's, over IPv6
 * @f: the fixture
 * @from: the sending end's number
 * @to: the receiving end's number
 * @bth: its transport headers and payload
 * @len: their length
 *
 * Return: the packet (see shca_wt_forge_path()).
 */
struct sk_buff *shca_wt_forge(struct shca_qt_fix *f, int from, int to,
			      const u8 *bth, u32 len)
{
	struct shca_path path = {
		.av = {
			.sgid = f->ep[from]->gid,
			.dgid = f->ep[to]->gid,
			.net_type = RDMA_NETWORK_IPV6,
			.hop_limit = 64,
		},
		.sport = 0xc000,
	};

	ether_addr_copy(path.av.smac, shca_qt_mac[from]);
	return shca_wt_forge_path(&path, bth, len);
}

/**
 * shca_wt_bth() - write a BTH: the default P_Key, version 0
 * @bth: where
 * @opcode: the opcode
 * @pad: the pad count
 * @qpn: the destination QP
 * @ackreq: the AckReq bit
 * @psn: the PSN
 */
void shca_wt_bth(u8 *bth, u8 opcode, u8 pad, u32 qpn, bool ackreq, u32 psn)
{
	put_unaligned_be32((u32)opcode << 24 | (u32)(pad & 3) << 20 |
			   SHCA_DEFAULT_PKEY, bth);
	put_unaligned_be32(qpn & SHCA_QPN_MAX, bth + 4);
	put_unaligned_be32((ackreq ? BIT(31) : 0) | (psn & SHCA_PSN_MASK),
			   bth + 8);
}

/**
 * shca_wt_feed() - hand a forged packet to an end's device
 * @f: the fixture
 * @from: the sending end's number
 * @to: the receiving end's number
 * @bth: the packet's transport headers and payload
 * @len: their length
 *
 * Return: false if the packet does not decode (it is not handed over).
 */
bool shca_wt_feed(struct shca_qt_fix *f, int from, int to, const u8 *bth,
		  u32 len)
{
	struct sk_buff *skb = shca_wt_forge(f, from, to, bth, len);
	struct shca_pkt pkt;

	KUNIT_ASSERT_NOT_NULL(f->test, skb);
	if (shca_net_decode(skb, &pkt)) {
		kfree_skb(skb);
		return false;
	}
	shca_knet_rx(f->net, to, skb, &pkt);
	return true;
}

/**
 * shca_wt_wait_counted() - wait until a device accounted for packets
 * @f: the fixture
 * @e: the end whose device it is
 * @n: how many packets since the mark, in rx_packets or rx_dropped
 * @settle: let the network run a little longer, to see that no packet
 *	was counted twice (the counts add up, so a later call sees it too)
 *
 * Return: whether exactly @n were counted (expected).
 */
bool shca_wt_wait_counted(struct shca_qt_fix *f, struct shca_qt_end *e,
			  u64 n, bool settle)
{
	unsigned long end = jiffies + msecs_to_jiffies(3000);
	u64 got;

	do {
		shca_knet_pump(f->net);
		got = shca_wt_delta(f, e, SHCA_WS_RX_PKTS) +
		      shca_wt_delta(f, e, SHCA_WS_RX_DROPPED);
		if (got >= n)
			break;
		usleep_range(50, 100);
	} while (time_before(jiffies, end));
	if (settle)
		shca_knet_run(f->net, 1);
	got = shca_wt_delta(f, e, SHCA_WS_RX_PKTS) +
	      shca_wt_delta(f, e, SHCA_WS_RX_DROPPED);
	KUNIT_EXPECT_EQ(f->test, got, n);
	return got == n;
}

/**
 * shca_wt_qp_type_desc() - "RC", "UC" or "UD"
 * @t: the QP type
 * @desc: its description
 */
void shca_wt_qp_type_desc(const enum ib_qp_type *t, char *desc)
{
	strscpy(desc, *t == IB_QPT_RC ? "RC" : *t == IB_QPT_UC ? "UC" : "UD",
		KUNIT_PARAM_DESC_SIZE);
}
