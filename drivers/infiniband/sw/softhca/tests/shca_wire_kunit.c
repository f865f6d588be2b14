// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the transport on the wire (shca_wire.c): two softhca
 * devices whose connections are forced onto RoCE v2 packets
 * (shca_force_wire), with the test as the network between them.
 *
 * The network between them is the test network of shca_kunit_net.c:
 * shca_net_send() hands every packet to it (shca_net_send_hook), which
 * gives it the Ethernet, IP and UDP headers and the ICRC a receiver would
 * see and keeps it in a queue. Its pump, run by the test's thread while
 * it waits for completions, takes the packets in the order they were sent
 * and hands each to shca_wire_rx() of the device that owns its
 * destination GID, as shca_net_encap_rcv() does (the ICRC check is left
 * out: it has its own suite, shca_pkt). On the way it can drop,
 * duplicate or hold back (reorder) the packets a test chooses.
 *
 * shca_wire: every RC operation across the wire, byte-exact and in the
 *	packets it should take; the loss of each packet of a multi-packet
 *	WRITE, READ, SEND and atomic (go-back-N and the READ's own resume
 *	complete it, byte-exact, with retransmissions counted); every packet
 *	duplicated (an atomic executes once); packets reordered; answers
 *	that come after the ACK timeout ran out, in the same run (they still
 *	count, the request is not sent again); RNR NAKs
 *	(a late receive, rnr_retry exhausted); retry exhaustion and the
 *	flush; a wrong rkey (both ends); UC losing a message; UD datagrams
 *	(the GRH area, src_qp, the completion's flags, the drops); and
 *	hostile packets fed straight into shca_wire_rx() and
 *	shca_net_decode() (random headers and payloads for every opcode and
 *	QP type, truncated and corrupted packets, wrong addressing, lying
 *	responses), each one accounted for in rx_packets or rx_dropped.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/prandom.h>
#include <linux/scatterlist.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <kunit/test.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"
#include "shca_kunit_net.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_wt_mac[2][ETH_ALEN] = {
	{ 0x02, 0x53, 0x48, 0x57, 0x54, 0x01 },
	{ 0x02, 0x53, 0x48, 0x57, 0x54, 0x02 },
};

#define SHCA_WT_BUF	SZ_64K
#define SHCA_WT_CQE	512
#define SHCA_WT_WR	64
#define SHCA_WT_MTU	1024			/* path MTU on a 1500 netdev */
#define SHCA_WT_LEN	(3 * SHCA_WT_MTU + 100)	/* four packets */
#define SHCA_WT_A_OFF	4096			/* a's data */
#define SHCA_WT_B_OFF	(8192 + 100)		/* b's data, unaligned */
#define SHCA_WT_ATOM	49152			/* atomic target and result */
#define SHCA_WT_QKEY	0x11223344
#define SHCA_WT_RW	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

/* One end: device, PD, CQ, an RC QP, memory and a fast-reg MR over it. */
struct shca_wt_end {
	struct ib_device *ibdev;
	struct shca_dev *sdev;
	union ib_gid gid;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;		/* SHCA_WT_BUF bytes, page aligned */
	struct scatterlist sg;
	struct ib_mr *mr;
	int events;		/* async events seen */
	enum ib_event_type last_event;
};

struct shca_wt_fix {
	struct kunit *test;
	struct shca_wt_end a, b;	/* a on device 0, b on device 1 */
	struct shca_wt_end *ep[2];	/* &a, &b */
	struct shca_knet *net;		/* between them */
	u32 rkey;			/* b's MR, once registered */
};

/* ------------------------------------------------------------------ */
/* The network                                                         */

/* How much counter @s of @e's device grew since the mark. */
static u64 shca_wt_delta(struct shca_wt_fix *f, struct shca_wt_end *e,
			 enum shca_wire_stat s)
{
	return shca_knet_delta(f->net, e == &f->b, s);
}

/* Pump the network while waiting up to @ms for a completion on @cq. */
static bool shca_wt_poll(struct shca_wt_fix *f, struct ib_cq *cq,
			 struct ib_wc *wc, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	for (;;) {
		shca_knet_pump(f->net);
		if (ib_poll_cq(cq, 1, wc) == 1)
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
}

/* Pump the network until counter @s of @e grew by @n; false after @ms. */
static bool shca_wt_wait_stat(struct shca_wt_fix *f, struct shca_wt_end *e,
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

/* Pump the network for @ms. */
static void shca_wt_run(struct shca_wt_fix *f, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		shca_knet_pump(f->net);
		usleep_range(100, 200);
	} while (time_before(jiffies, end));
	shca_knet_pump(f->net);
}

static void shca_wt_expect_wc(struct shca_wt_fix *f, struct ib_cq *cq,
			      u64 wr_id, enum ib_wc_status status,
			      enum ib_wc_opcode opcode, struct ib_wc *out)
{
	struct kunit *test = f->test;
	struct ib_wc wc;

	if (!shca_wt_poll(f, cq, &wc, 5000)) {
		shca_knet_dump(f->net);
		KUNIT_FAIL_AND_ABORT(test, "no completion for wr_id %llu",
				     wr_id);
	}
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.status, status, "wr_id %llu: %s",
			    wr_id, ib_wc_status_msg(wc.status));
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.opcode, opcode);
	if (out)
		*out = wc;
}

static void shca_wt_expect_none(struct shca_wt_fix *f, struct ib_cq *cq)
{
	struct ib_wc wc;

	if (ib_poll_cq(cq, 1, &wc) == 1)
		KUNIT_FAIL(f->test, "unexpected completion: wr_id %llu, %s",
			   wc.wr_id, ib_wc_status_msg(wc.status));
}

/* No completion on @cq while the network runs for 20 ms. */
static void shca_wt_expect_empty(struct shca_wt_fix *f, struct ib_cq *cq)
{
	shca_wt_run(f, 20);
	shca_wt_expect_none(f, cq);
}

/* Empty @cq; return how many completions it had. */
static int shca_wt_drain_cq(struct ib_cq *cq)
{
	struct ib_wc wc;
	int n = 0;

	while (ib_poll_cq(cq, 1, &wc) == 1)
		n++;
	return n;
}

/* ------------------------------------------------------------------ */
/* The fixture                                                         */

static void shca_wt_event(struct ib_event *ev, void *ctx)
{
	struct shca_wt_end *e = ctx;

	e->last_event = ev->event;
	WRITE_ONCE(e->events, e->events + 1);
}

static bool shca_wt_wait_events(struct shca_wt_fix *f, struct shca_wt_end *e,
				int want, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (READ_ONCE(e->events) < want && time_before(jiffies, end))
		shca_wt_run(f, 1);
	return READ_ONCE(e->events) == want;
}

static void shca_wt_free_pages(void *p)
{
	free_pages((unsigned long)p, get_order(SHCA_WT_BUF));
}

static struct ib_qp *shca_wt_qp(struct kunit *test, struct shca_wt_end *e,
				enum ib_qp_type type)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_wt_event,
		.qp_context = e,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = {
			.max_send_wr = SHCA_WT_WR,
			.max_recv_wr = SHCA_WT_WR,
			.max_send_sge = 2,
			.max_recv_sge = 2,
			.max_inline_data = 64,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = type,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	return qp;
}

static void shca_wt_end_init(struct kunit *test, struct shca_wt_end *e,
			     int i)
{
	static const char * const names[] = { "shcak_w0", "shcak_w1" };
	struct net_device *ndev = shca_kunit_netdev(test, shca_wt_mac[i]);

	e->ibdev = shca_kunit_device(test, names[i], ndev);
	e->sdev = to_shca_dev(e->ibdev);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(e->ibdev, 1, 0, &e->gid), 0);
	e->pd = shca_kunit_pd(test, e->ibdev);
	e->cq = ib_alloc_cq(e->ibdev, NULL, SHCA_WT_CQE, 0, IB_POLL_DIRECT);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->cq));
	shca_kunit_defer(test, shca_kunit_free_cq, e->cq);
	e->qp = shca_wt_qp(test, e, IB_QPT_RC);

	e->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(SHCA_WT_BUF));
	KUNIT_ASSERT_NOT_NULL(test, e->buf);
	shca_kunit_defer(test, shca_wt_free_pages, e->buf);
	sg_init_one(&e->sg, e->buf, SHCA_WT_BUF);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(e->ibdev, &e->sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	e->mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG,
			    SHCA_WT_BUF / PAGE_SIZE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, e->mr);
}

static int shca_wt_init(struct kunit *test)
{
	struct shca_wt_fix *f;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	f->ep[0] = &f->a;
	f->ep[1] = &f->b;
	f->net = shca_knet_start(test);
	shca_wt_end_init(test, &f->a, 0);
	shca_wt_end_init(test, &f->b, 1);
	shca_knet_attach(f->net, 0, f->a.ibdev);
	shca_knet_attach(f->net, 1, f->b.ibdev);
	test->priv = f;
	return 0;
}

/*
 * Connection attributes. timeout: 4.096 us * 2^timeout; HZ is 100 under
 * UML, so 12 is two jiffies and 16 about a quarter of a second.
 */
struct shca_wt_conn {
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 rd_atom;	/* max_rd_atomic and max_dest_rd_atomic; 0: 4 */
	enum ib_mtu mtu;	/* path MTU; 0: 1024 */
};

/* No loss: nothing may time out while the test thread pumps. */
static const struct shca_wt_conn shca_wt_calm = {
	.timeout = 16, .retry_cnt = 7, .rnr_retry = 7,
};

/* Losses: the ACK timeout recovers quickly. */
static const struct shca_wt_conn shca_wt_lossy = {
	.timeout = 12, .retry_cnt = 7, .rnr_retry = 7,
};

static int shca_wt_to_rts(struct ib_qp *qp, struct shca_wt_end *peer,
			  u32 dest_qpn, const struct shca_wt_conn *c)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = rc ? SHCA_WT_RW : IB_ACCESS_REMOTE_WRITE |
						      IB_ACCESS_LOCAL_WRITE,
	};
	int err;

	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = c->mtu ?: IB_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.max_dest_rd_atomic = c->rd_atom ?: 4;
	attr.min_rnr_timer = 1;		/* 10 us */
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &peer->gid, 0, 0, 64, 0);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   (rc ? IB_QP_MAX_DEST_RD_ATOMIC |
				 IB_QP_MIN_RNR_TIMER : 0));
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = c->timeout;
	attr.retry_cnt = c->retry_cnt;
	attr.rnr_retry = c->rnr_retry;
	attr.max_rd_atomic = c->rd_atom ?: 4;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    (rc ? IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				  IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC :
				  0));
}

/* Bring @qp (of @e) from any state to RTS towards @peer's @dest_qpn. */
static void shca_wt_restate(struct kunit *test, struct ib_qp *qp,
			    struct shca_wt_end *peer, u32 dest_qpn,
			    const struct shca_wt_conn *c)
{
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_to_rts(qp, peer, dest_qpn, c), 0);
	/* The connection runs on the wire: the point of the suite. */
	KUNIT_ASSERT_TRUE(test, READ_ONCE(to_shca_qp(qp)->wire));
}

/* Connect two QPs of a and b, both ways. */
static void shca_wt_connect_qps(struct shca_wt_fix *f, struct ib_qp *qa,
				struct ib_qp *qb, const struct shca_wt_conn *c)
{
	shca_wt_restate(f->test, qa, &f->b, qb->qp_num, c);
	shca_wt_restate(f->test, qb, &f->a, qa->qp_num, c);
}

static void shca_wt_connect(struct shca_wt_fix *f,
			    const struct shca_wt_conn *c)
{
	shca_wt_connect_qps(f, f->a.qp, f->b.qp, c);
}

static enum ib_qp_state shca_wt_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/* Register @e's MR over its buffer with IB_WR_REG_MR; returns the rkey. */
static u32 shca_wt_reg(struct shca_wt_fix *f, struct shca_wt_end *e,
		       int access)
{
	struct kunit *test = f->test;
	struct ib_reg_wr wr = {
		.wr.opcode = IB_WR_REG_MR,
		.wr.send_flags = IB_SEND_SIGNALED,
		.wr.wr_id = 0x5e9,
		.mr = e->mr,
		.access = access,
	};
	const struct ib_send_wr *bad;

	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(e->mr, &e->sg, 1, NULL,
					   PAGE_SIZE), 1);
	ib_update_fast_reg_key(e->mr, ib_inc_rkey(e->mr->rkey));
	wr.key = e->mr->rkey;
	KUNIT_ASSERT_EQ(test, ib_post_send(e->qp, &wr.wr, &bad), 0);
	shca_wt_expect_wc(f, e->cq, 0x5e9, IB_WC_SUCCESS, IB_WC_REG_MR, NULL);
	return e->mr->rkey;
}

static struct ib_sge shca_wt_sge(struct shca_wt_end *e, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = (u64)(uintptr_t)(e->buf + off),
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
}

static int shca_wt_post_recv(struct ib_qp *qp, u64 wr_id, struct ib_sge *sge,
			     int n)
{
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				 .num_sge = n };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

static int shca_wt_post(struct ib_qp *qp, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

static void shca_wt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7 + (i >> 8);
}

static bool shca_wt_zero(const u8 *p, size_t len)
{
	return !memchr_inv(p, 0, len);
}

/* ------------------------------------------------------------------ */
/* RC operations                                                       */

struct shca_wt_op {
	const char *name;
	enum ib_wr_opcode opcode;
	u32 a_pkts;	/* packets a sends without loss */
	u32 b_pkts;	/* packets b sends */
};

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

KUNIT_ARRAY_PARAM(shca_wt_ops, shca_wt_ops, shca_wt_op_desc);

static bool shca_wt_is_atomic(enum ib_wr_opcode opcode)
{
	return opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Run one RC operation of a towards b over the connection (b's MR
 * registered here), with SHCA_WT_LEN bytes for the data operations, and
 * check it byte by byte: the completions on both sides, the data where it
 * belongs and nothing around it, an atomic's target and returned value.
 * The pump applies the test's rule meanwhile; the counts start here.
 */
static void shca_wt_do(struct shca_wt_fix *f, enum ib_wr_opcode opcode)
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
		f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	memset(f->a.buf, 0, SHCA_WT_BUF);
	memset(f->b.buf, 0, SHCA_WT_BUF);
	if (read)
		shca_wt_fill(f->b.buf + SHCA_WT_B_OFF, SHCA_WT_LEN, 2);
	else if (!atomic)
		shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN, 1);
	*remote = 100;

	if (send || imm) {
		rsge = shca_wt_sge(&f->b, SHCA_WT_B_OFF, 4096);
		KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 77, &rsge,
							send ? 1 : 0), 0);
	}
	if (atomic) {
		sge = shca_wt_sge(&f->a, SHCA_WT_ATOM, 8);
		awr.remote_addr = f->b.mr->iova + SHCA_WT_ATOM;
		awr.rkey = f->rkey;
		awr.compare_add = opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 100 : 5;
		awr.swap = 77;
		wr = &awr.wr;
	} else {
		sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
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
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 7, IB_WC_SUCCESS, wc_op[opcode], &wc);
	if (read)
		KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
	else if (atomic)
		KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	if (send || imm) {
		shca_wt_expect_wc(f, f->b.cq, 77, IB_WC_SUCCESS,
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
		KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->a.buf, SHCA_WT_A_OFF));
		KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->a.buf + SHCA_WT_A_OFF +
						     SHCA_WT_LEN, 8192));
	} else {
		KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
					     f->a.buf + SHCA_WT_A_OFF,
					     SHCA_WT_LEN), 0);
		KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf, SHCA_WT_B_OFF));
		KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + SHCA_WT_B_OFF +
						     SHCA_WT_LEN, 8192));
	}
	/* Nothing else completes, whatever the network did. */
	shca_wt_expect_empty(f, f->a.cq);
	shca_wt_expect_none(f, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_RTS);
}

/*
 * Each operation, four packets of data (3 x path MTU + 100), across the
 * wire: exactly the packets it takes (one ACK, or four READ responses)
 * and nothing sent again, dropped or left over.
 */
static void shca_wire_rc_op(struct kunit *test)
{
	const struct shca_wt_op *op = test->param_value;
	struct shca_wt_fix *f = test->priv;

	shca_wt_connect(f, &shca_wt_calm);
	shca_wt_do(f, op->opcode);
	KUNIT_EXPECT_EQ(test, f->net->count[0], op->a_pkts);
	KUNIT_EXPECT_EQ(test, f->net->count[1], op->b_pkts);
	KUNIT_EXPECT_EQ(test, f->net->stray, 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS),
			op->a_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_PKTS),
			op->b_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_DROPPED), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_DUP_REQS), 0);
	if (f->net->count[0] != op->a_pkts || f->net->count[1] != op->b_pkts)
		shca_knet_dump(f->net);
}

/*
 * WRITEs and READs of 0 to 10000 bytes in flight at once: completed in
 * order, each byte-exact (WRITEs from and to the first halves of the
 * buffers, READs from and to the second halves).
 */
static void shca_wire_rc_pipeline(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_rdma_wr wr[6] = {};
	struct ib_sge sge[6];
	struct ib_wc wc;
	u32 rkey, half = SHCA_WT_BUF / 2;
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	shca_wt_fill(f->a.buf, half, 5);
	shca_wt_fill(f->b.buf + half, half, 9);
	for (i = 0; i < 6; i++) {
		bool read = i & 1;
		u32 off = (read ? half : 0) + i * 3000;

		sge[i] = shca_wt_sge(&f->a, off, i * 2000);
		wr[i].wr.wr_id = i;
		wr[i].wr.opcode = read ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		wr[i].wr.send_flags = IB_SEND_SIGNALED;
		wr[i].wr.sg_list = &sge[i];
		wr[i].wr.num_sge = 1;
		wr[i].wr.next = i < 5 ? &wr[i + 1].wr : NULL;
		wr[i].remote_addr = f->b.mr->iova + off;
		wr[i].rkey = rkey;
	}
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr[0].wr), 0);
	for (i = 0; i < 6; i++) {
		shca_wt_expect_wc(f, f->a.cq, i, IB_WC_SUCCESS,
				  i & 1 ? IB_WC_RDMA_READ : IB_WC_RDMA_WRITE,
				  &wc);
		if (i & 1)
			KUNIT_EXPECT_EQ(test, wc.byte_len, i * 2000);
	}
	/* a's and b's buffers now hold the same bytes, where it was sent. */
	for (i = 0; i < 6; i++) {
		u32 off = (i & 1 ? half : 0) + i * 3000;

		KUNIT_EXPECT_EQ_MSG(test, memcmp(f->a.buf + off, f->b.buf + off,
						 i * 2000), 0, "%s %d",
				    i & 1 ? "READ" : "WRITE", i);
	}
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + 4 * 3000 + 8000,
					     half - 20000));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	/* A packet per WRITE MTU (one for 0 bytes), one per READ. */
	KUNIT_EXPECT_EQ(test, f->net->count[0], 1 + 1 + 4 + 1 + 8 + 1);
}

/*
 * Scatter and gather across packet boundaries (SEND and READ, two SGEs
 * each side), inline data, zero-length SEND and READ, SEND_WITH_INV
 * (the receiver sees the key, which no longer works), the solicited
 * event bit: each byte-exact, each completion's fields.
 */
static void shca_wire_rc_misc(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct shca_mem_target t = { .pd = f->b.pd,
				     .access = IB_ACCESS_REMOTE_READ };
	struct ib_sge src[2] = {
		shca_wt_sge(&f->a, 0, 1500),
		shca_wt_sge(&f->a, 5000, 1000),
	};
	struct ib_sge dst[2] = {
		shca_wt_sge(&f->b, 0, 700),
		shca_wt_sge(&f->b, 9000, 3000),
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_SEND,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_SOLICITED,
			.sg_list = src, .num_sge = 2 },
	};
	struct ib_wc wc;
	u8 byte;

	shca_wt_connect(f, &shca_wt_calm);
	f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	shca_wt_fill(f->a.buf, SHCA_WT_BUF, 11);

	/* 2500 bytes from two SGEs into two, three packets. */
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 11, dst, 2), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->b.cq, 11, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2500);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 3);
	/* The solicited event bit, on the last packet only. */
	KUNIT_EXPECT_EQ(test, f->net->seen[2].opcode, IB_OPCODE_RC_SEND_LAST);
	KUNIT_EXPECT_TRUE(test, f->net->seen[2].se);
	KUNIT_EXPECT_FALSE(test, f->net->seen[0].se || f->net->seen[1].se);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 700), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 9000, f->a.buf + 700, 800), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 9800, f->a.buf + 5000, 1000),
			0);
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + 700, 9000 - 700));
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + 10800, 1200));

	/* READ the same 2500 bytes back, scattered the other way round. */
	src[0] = shca_wt_sge(&f->a, 30000, 2000);
	src[1] = shca_wt_sge(&f->a, 40000, 500);
	wr.wr.wr_id = 2;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.remote_addr = f->b.mr->iova + 9000;
	wr.rkey = f->rkey;
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2500);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 30000, f->b.buf + 9000, 2000),
			0);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 40000, f->b.buf + 11000, 500),
			0);

	/* Inline data (the source changes right after the post). */
	memset(f->a.buf, 0xab, 64);
	src[0] = shca_wt_sge(&f->a, 0, 64);
	src[0].lkey = 0xdeadbeef;	/* inline data needs no key */
	wr.wr.wr_id = 3;
	wr.wr.opcode = IB_WR_SEND;
	wr.wr.send_flags = IB_SEND_SIGNALED | IB_SEND_INLINE;
	wr.wr.num_sge = 1;
	dst[0] = shca_wt_sge(&f->b, 20000, 100);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 12, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	memset(f->a.buf, 0x11, 64);
	shca_wt_expect_wc(f, f->b.cq, 12, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 64);
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf + 20000, 0xab, 64));
	shca_wt_expect_wc(f, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);

	/* Zero bytes: a SEND and a READ. */
	wr.wr.wr_id = 4;
	wr.wr.send_flags = IB_SEND_SIGNALED;
	wr.wr.num_sge = 0;
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 13, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->b.cq, 13, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0);
	shca_wt_expect_wc(f, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	wr.wr.wr_id = 5;
	wr.wr.opcode = IB_WR_RDMA_READ;
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 0);

	/* SEND_WITH_INV: b's key, which then refuses. */
	t.key = f->rkey;
	t.iova = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->b.sdev, &t, &byte, 1,
					   SHCA_COPY_FROM_MR), 0);
	src[0] = shca_wt_sge(&f->a, 100, 16);
	wr.wr.wr_id = 6;
	wr.wr.opcode = IB_WR_SEND_WITH_INV;
	wr.wr.num_sge = 1;
	wr.wr.ex.invalidate_rkey = f->rkey;
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 14, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->b.cq, 14, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 16);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, f->rkey);
	shca_wt_expect_wc(f, f->a.cq, 6, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->b.sdev, &t, &byte, 1,
					   SHCA_COPY_FROM_MR), -EKEYREVOKED);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	shca_wt_expect_empty(f, f->a.cq);
	shca_wt_expect_none(f, f->b.cq);
}

/* ------------------------------------------------------------------ */
/* Loss, duplicates, reordering                                        */

enum shca_wt_how { SHCA_WT_BY_NAK, SHCA_WT_BY_TIMEOUT, SHCA_WT_BY_GAP };

struct shca_wt_case {
	const char *name;
	enum ib_wr_opcode opcode;
	int from;		/* 0: a's packet, 1: b's */
	int nth;		/* which one */
	enum shca_wt_how how;	/* what makes the requester send again */
};

static void shca_wt_case_desc(const struct shca_wt_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

static const struct shca_wt_case shca_wt_losses[] = {
	{ "WRITE first", IB_WR_RDMA_WRITE, 0, 0, SHCA_WT_BY_NAK },
	{ "WRITE second", IB_WR_RDMA_WRITE, 0, 1, SHCA_WT_BY_NAK },
	{ "WRITE third", IB_WR_RDMA_WRITE, 0, 2, SHCA_WT_BY_NAK },
	{ "WRITE last", IB_WR_RDMA_WRITE, 0, 3, SHCA_WT_BY_TIMEOUT },
	{ "WRITE ACK", IB_WR_RDMA_WRITE, 1, 0, SHCA_WT_BY_TIMEOUT },
	{ "READ request", IB_WR_RDMA_READ, 0, 0, SHCA_WT_BY_TIMEOUT },
	{ "READ response first", IB_WR_RDMA_READ, 1, 0, SHCA_WT_BY_GAP },
	{ "READ response second", IB_WR_RDMA_READ, 1, 1, SHCA_WT_BY_GAP },
	{ "READ response third", IB_WR_RDMA_READ, 1, 2, SHCA_WT_BY_GAP },
	{ "READ response last", IB_WR_RDMA_READ, 1, 3, SHCA_WT_BY_TIMEOUT },
	{ "SEND first", IB_WR_SEND, 0, 0, SHCA_WT_BY_NAK },
	{ "SEND last", IB_WR_SEND, 0, 3, SHCA_WT_BY_TIMEOUT },
	{ "WRITE_WITH_IMM middle", IB_WR_RDMA_WRITE_WITH_IMM, 0, 2,
	  SHCA_WT_BY_NAK },
	{ "FETCH_ADD request", IB_WR_ATOMIC_FETCH_AND_ADD, 0, 0,
	  SHCA_WT_BY_TIMEOUT },
	{ "FETCH_ADD ACK", IB_WR_ATOMIC_FETCH_AND_ADD, 1, 0,
	  SHCA_WT_BY_TIMEOUT },
	{ "CMP_SWP ACK", IB_WR_ATOMIC_CMP_AND_SWP, 1, 0, SHCA_WT_BY_TIMEOUT },
};

KUNIT_ARRAY_PARAM(shca_wt_losses, shca_wt_losses, shca_wt_case_desc);

/*
 * One packet lost, the first time it is sent: the operation still
 * completes once, byte-exact (an atomic whose ACK was lost is answered
 * again from the responder's memory, not executed twice), and the
 * requester sent again, after a NAK or the gap it saw in READ responses
 * without waiting for its ACK timeout, or after the timeout when nothing
 * else can tell it (a lost last packet, request or response).
 */
static void shca_wire_loss(struct kunit *test)
{
	const struct shca_wt_case *c = test->param_value;
	struct shca_wt_fix *f = test->priv;

	shca_wt_connect(f, c->how == SHCA_WT_BY_TIMEOUT ? &shca_wt_lossy :
							   &shca_wt_calm);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, c->from, c->nth };
	shca_wt_do(f, c->opcode);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	switch (c->how) {
	case SHCA_WT_BY_NAK:
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b,
						    SHCA_WS_SEQ_NAKS_SENT), 0);
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a,
						    SHCA_WS_SEQ_NAKS_RCVD), 0);
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b,
						    SHCA_WS_OOS_REQS), 0);
		break;
	case SHCA_WT_BY_TIMEOUT:
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a,
						    SHCA_WS_ACK_TIMEOUTS), 0);
		break;
	case SHCA_WT_BY_GAP:
		break;
	}
	if (c->how != SHCA_WT_BY_TIMEOUT)
		KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a,
						    SHCA_WS_ACK_TIMEOUTS), 0);
	/* What b had answered already, it answers again. */
	if (c->from == 1)
		KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->b,
						    SHCA_WS_DUP_REQS), 0);
}

/*
 * Every packet, both ways, arrives twice: each operation completes once
 * on each side, byte-exact, an atomic executes once, and the responder
 * counted the duplicates.
 */
static void shca_wire_dup(struct kunit *test)
{
	const struct shca_wt_op *op = test->param_value;
	struct shca_wt_fix *f = test->priv;

	shca_wt_connect(f, &shca_wt_calm);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DUP, -1, -1 };
	shca_wt_do(f, op->opcode);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->b, SHCA_WS_DUP_REQS),
			op->a_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
}

static const struct shca_wt_case shca_wt_reorders[] = {
	{ "WRITE first after second", IB_WR_RDMA_WRITE, 0, 0 },
	{ "WRITE second after third", IB_WR_RDMA_WRITE, 0, 1 },
	{ "WRITE third after last", IB_WR_RDMA_WRITE, 0, 2 },
	{ "SEND second after third", IB_WR_SEND, 0, 1 },
	{ "READ response first after second", IB_WR_RDMA_READ, 1, 0 },
	{ "READ response second after third", IB_WR_RDMA_READ, 1, 1 },
	{ "READ response third after last", IB_WR_RDMA_READ, 1, 2 },
};

KUNIT_ARRAY_PARAM(shca_wt_reorders, shca_wt_reorders, shca_wt_case_desc);

/*
 * One packet overtaken by the next: completes once, byte-exact, without
 * waiting for an ACK timeout.
 */
static void shca_wire_reorder(struct kunit *test)
{
	const struct shca_wt_case *c = test->param_value;
	struct shca_wt_fix *f = test->priv;

	shca_wt_connect(f, &shca_wt_calm);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_HOLD, c->from, c->nth };
	shca_wt_do(f, c->opcode);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_HOLD], 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
}

/*
 * READ responses overtaking each other, READ after READ on one
 * connection: each completes, byte-exact; then a fenced WRITE, which
 * waits for the READs before it, still leaves and completes (the READs
 * in flight are counted right whatever the order of the responses and
 * the going back they cause).
 */
static void shca_wire_reorder_reads(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 8);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 9, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED | IB_SEND_FENCE,
			.sg_list = &sge, .num_sge = 1 },
	};
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	for (i = 0; i < 3; i++) {
		f->net->rule = (struct shca_knet_rule){ SHCA_KNET_HOLD, 1, i };
		shca_wt_do(f, IB_WR_RDMA_READ);
		KUNIT_EXPECT_EQ_MSG(test, f->net->fates[SHCA_KNET_HOLD], 1,
				    "READ %d", i);
		f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DELIVER, -1, -1 };
		wr.remote_addr = f->b.mr->iova;
		wr.rkey = f->rkey;
		KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
		shca_wt_expect_wc(f, f->a.cq, 9, IB_WC_SUCCESS,
				  IB_WC_RDMA_WRITE, NULL);
		if (test->status == KUNIT_FAILURE)
			return;
	}
}

/*
 * Responder resources as deep as rdma_rxe's (rdma_cm gives a requester
 * what the peer offers: 128 against rxe): 48 READs in flight at once; the
 * response of the 30th is lost. The READs behind it are asked again, and
 * the responder answers them from the READs it kept (duplicates, not new
 * executions); every READ completes, in order, byte-exact.
 */
static void shca_wire_deep_reads(struct kunit *test)
{
	static const struct shca_wt_conn deep = {
		.timeout = 12, .retry_cnt = 7, .rnr_retry = 7,
		.rd_atom = SHCA_MAX_RD_ATOM,
	};
	struct shca_wt_fix *f = test->priv;
	const int n = 48, lost = 30;
	struct ib_rdma_wr *wr;
	struct ib_sge *sge;
	struct ib_wc wc;
	int i;

	wr = kunit_kcalloc(test, n, sizeof(*wr), GFP_KERNEL);
	sge = kunit_kcalloc(test, n, sizeof(*sge), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, wr);
	KUNIT_ASSERT_NOT_NULL(test, sge);
	shca_wt_connect(f, &deep);
	KUNIT_EXPECT_EQ(test, to_shca_qp(f->b.qp)->wresp.res_size,
			SHCA_MAX_RD_ATOM);
	f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	shca_wt_fill(f->b.buf, SHCA_WT_BUF, 5);
	for (i = 0; i < n; i++) {
		sge[i] = shca_wt_sge(&f->a, 100 * i, 100);
		wr[i] = (struct ib_rdma_wr){
			.wr = { .wr_id = i, .opcode = IB_WR_RDMA_READ,
				.send_flags = IB_SEND_SIGNALED,
				.sg_list = &sge[i], .num_sge = 1,
				.next = i + 1 < n ? &wr[i + 1].wr : NULL },
			.remote_addr = f->b.mr->iova + 20000 + 300 * i,
			.rkey = f->rkey,
		};
	}

	shca_knet_mark(f->net);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 1, lost };
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr[0].wr), 0);
	for (i = 0; i < n; i++) {
		shca_wt_expect_wc(f, f->a.cq, i, IB_WC_SUCCESS,
				  IB_WC_RDMA_READ, &wc);
		KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(f->a.buf + 100 * i,
						 f->b.buf + 20000 + 300 * i,
						 100), 0, "READ %d", i);
		if (test->status == KUNIT_FAILURE)
			return;
	}
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->b, SHCA_WS_DUP_REQS),
			n - lost);
	shca_wt_expect_empty(f, f->a.cq);
}

static u32 shca_wt_psn(struct ib_qp *qp, int mask)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, mask, &init))
		return U32_MAX;
	return mask == IB_QP_SQ_PSN ? attr.sq_psn : attr.rq_psn;
}

/*
 * query_qp's send PSN while requests are in flight: the PSN after the
 * last packet sent (rdma res shows it), not the one the send queue had
 * when it was last idle; the responder's receive PSN the same.
 */
static void shca_wire_query_psn(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_rdma_wr w2, w1 = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1, .next = &w2.wr },
	};
	u32 p0;
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	w1.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	w1.rkey = f->rkey;
	w2 = w1;
	w2.wr.wr_id = 2;
	w2.wr.next = NULL;
	p0 = shca_wt_psn(f->a.qp, IB_QP_SQ_PSN);
	KUNIT_EXPECT_EQ(test, shca_wt_psn(f->b.qp, IB_QP_RQ_PSN), p0);

	/* b's ACKs are lost: both WRITEs stay in flight. */
	shca_knet_mark(f->net);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 1, -1 };
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &w1.wr), 0);
	for (i = 0; i < 500 && f->net->count[0] < 8; i++) {
		shca_knet_pump(f->net);
		usleep_range(500, 1000);
	}
	KUNIT_ASSERT_EQ(test, f->net->count[0], 8);
	KUNIT_EXPECT_EQ(test, shca_wt_psn(f->a.qp, IB_QP_SQ_PSN),
			(p0 + 8) & SHCA_PSN_MASK);
	KUNIT_EXPECT_EQ(test, shca_wt_psn(f->b.qp, IB_QP_RQ_PSN),
			(p0 + 8) & SHCA_PSN_MASK);
	shca_wt_expect_none(f, f->a.cq);

	/* The ACK timeout sends them again; now the ACKs come. */
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DELIVER, -1, -1 };
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_psn(f->a.qp, IB_QP_SQ_PSN),
			(p0 + 8) & SHCA_PSN_MASK);
}

/*
 * A local ACK timeout of 0 is infinite (IBTA C9-141): a lost request is
 * not sent again by a timer, however long; the next request, arriving
 * beyond the expected PSN, draws a sequence NAK, and the NAK sends both.
 */
static void shca_wire_infinite_timeout(struct kunit *test)
{
	static const struct shca_wt_conn forever = {
		.timeout = 0, .retry_cnt = 1, .rnr_retry = 7,
	};
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, 500);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_wt_connect(f, &forever);
	f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, 1000, 9);
	wr.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	wr.rkey = f->rkey;

	shca_knet_mark(f->net);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 0, 0 };
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	/* 30 jiffies under UML (HZ 100): a timer would have fired. */
	shca_wt_run(f, 300);
	shca_wt_expect_none(f, f->a.cq);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);

	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DELIVER, -1, -1 };
	sge.addr += 500;
	wr.wr.wr_id = 2;
	wr.remote_addr += 500;
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
				     f->a.buf + SHCA_WT_A_OFF, 1000), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_SEQ_NAKS_RCVD),
			1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
}

/*
 * Keep @ibqp's work item from running (it retries every jiffy), so that
 * what arrives meanwhile is taken in one run; shca_wt_thaw() lets it go.
 */
static void shca_wt_freeze(struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);

	while (test_and_set_bit_lock(SHCA_QP_EXEC_BUSY, &qp->exec_flags))
		usleep_range(10, 100);
}

static void shca_wt_thaw(struct ib_qp *ibqp)
{
	clear_bit_unlock(SHCA_QP_EXEC_BUSY, &to_shca_qp(ibqp)->exec_flags);
}

struct shca_wt_late {
	const char *name;
	enum ib_wr_opcode opcode;
	bool bad_rkey;	/* the responder NAKs: a remote access error */
	u32 a_pkts;
	u32 b_pkts;
};

static const struct shca_wt_late shca_wt_lates[] = {
	{ "WRITE ACK", IB_WR_RDMA_WRITE, false, 4, 1 },
	{ "READ responses", IB_WR_RDMA_READ, false, 1, 4 },
	{ "FETCH_ADD ACK", IB_WR_ATOMIC_FETCH_AND_ADD, false, 1, 1 },
	{ "WRITE access NAK", IB_WR_RDMA_WRITE, true, 4, 1 },
	{ "READ access NAK", IB_WR_RDMA_READ, true, 1, 1 },
};

static void shca_wt_late_desc(const struct shca_wt_late *l, char *desc)
{
	strscpy(desc, l->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_wt_lates, shca_wt_lates, shca_wt_late_desc);

/*
 * The answer to a request arrives late: after the ACK timeout ran out,
 * and taken in the same run of the requester as the timeout, which
 * decided to send the request again. The answer still counts: the
 * request completes once, byte-exact, and is not sent again once
 * complete; a fenced WRITE after it (which waits for the READs and
 * atomics in flight) leaves and completes, and so does a READ. A NAK for
 * a remote access error completes it with that error, as it would have
 * on time.
 */
static void shca_wire_late_answer(struct kunit *test)
{
	static const struct shca_wt_conn c = {
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,	/* 67 ms */
	};
	const struct shca_wt_late *l = test->param_value;
	struct shca_wt_fix *f = test->priv;
	struct shca_qp *qa = to_shca_qp(f->a.qp);
	bool read = l->opcode == IB_WR_RDMA_READ;
	bool atomic = l->opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge asge = shca_wt_sge(&f->a, SHCA_WT_ATOM, 8);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = l->opcode,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_atomic_wr awr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &asge,
			.num_sge = 1 },
		.compare_add = 5,
	};
	u64 *remote = (u64 *)(f->b.buf + SHCA_WT_ATOM);
	unsigned long end;
	int i;

	shca_wt_connect(f, &c);
	f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	/* A WRITE first, so that the request's PSN is not 0. */
	shca_wt_do(f, IB_WR_RDMA_WRITE);
	memset(f->a.buf, 0, SHCA_WT_BUF);
	memset(f->b.buf, 0, SHCA_WT_BUF);
	shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN, 6);
	if (read)
		shca_wt_fill(f->b.buf + SHCA_WT_B_OFF, SHCA_WT_LEN, 7);
	*remote = 1000;
	wr.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	wr.rkey = f->rkey ^ (l->bad_rkey ? 0x100 : 0);
	awr.remote_addr = f->b.mr->iova + SHCA_WT_ATOM;
	awr.rkey = f->rkey;

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, atomic ? &awr.wr : &wr.wr),
			0);
	/* The request reaches b; a stops before the answer comes. */
	end = jiffies + msecs_to_jiffies(2000);
	while (f->net->count[0] < l->a_pkts && time_before(jiffies, end)) {
		usleep_range(50, 100);
		shca_knet_pump(f->net);
	}
	shca_wt_freeze(f->a.qp);
	KUNIT_ASSERT_EQ(test, f->net->count[0], l->a_pkts);
	KUNIT_ASSERT_FALSE(test, test_bit(SHCA_QP_EXEC_TIMEOUT,
					  &qa->exec_flags));
	/* b answers, the timer runs out: both wait for a's one run. */
	end = jiffies + msecs_to_jiffies(2000);
	while ((f->net->count[1] < l->b_pkts ||
		!test_bit(SHCA_QP_EXEC_TIMEOUT, &qa->exec_flags)) &&
	       time_before(jiffies, end)) {
		usleep_range(100, 200);
		shca_knet_pump(f->net);
	}
	KUNIT_EXPECT_EQ(test, f->net->count[1], l->b_pkts);
	KUNIT_EXPECT_TRUE(test, test_bit(SHCA_QP_EXEC_TIMEOUT,
					 &qa->exec_flags));
	shca_wt_thaw(f->a.qp);

	if (l->bad_rkey) {
		shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
		KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
		shca_wt_run(f, 20);
		KUNIT_EXPECT_EQ(test, f->net->count[0], l->a_pkts);
		return;
	}
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS,
			  read ? IB_WC_RDMA_READ : atomic ? IB_WC_FETCH_ADD :
			  IB_WC_RDMA_WRITE, NULL);
	if (read) {
		KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF,
					     f->b.buf + SHCA_WT_B_OFF,
					     SHCA_WT_LEN), 0);
	} else if (atomic) {
		KUNIT_EXPECT_EQ(test, *(u64 *)(f->a.buf + SHCA_WT_ATOM), 1000);
		KUNIT_EXPECT_EQ(test, *remote, 1005);
	} else {
		KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
					     f->a.buf + SHCA_WT_A_OFF,
					     SHCA_WT_LEN), 0);
	}
	/* Complete: not sent again, no more timeouts. */
	shca_wt_run(f, 30);
	KUNIT_EXPECT_EQ(test, f->net->count[0], l->a_pkts);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	if (f->net->count[0] != l->a_pkts)
		shca_knet_dump(f->net);

	/* A fenced WRITE, then a READ: nothing is left in flight. */
	wr.rkey = f->rkey;
	for (i = 0; i < 2; i++) {
		struct ib_rdma_wr w2 = wr;

		w2.wr.wr_id = 2 + i;
		w2.wr.opcode = i ? IB_WR_RDMA_READ : IB_WR_RDMA_WRITE;
		w2.wr.send_flags |= i ? 0 : IB_SEND_FENCE;
		KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &w2.wr), 0);
		shca_wt_expect_wc(f, f->a.cq, 2 + i, IB_WC_SUCCESS,
				  i ? IB_WC_RDMA_READ : IB_WC_RDMA_WRITE, NULL);
	}
}

static const struct shca_wt_case shca_wt_implied[] = {
	{ "READ last response", IB_WR_RDMA_READ, 1, 3 },
	{ "FETCH_ADD ACK", IB_WR_ATOMIC_FETCH_AND_ADD, 1, 0 },
	{ "CMP_SWP ACK", IB_WR_ATOMIC_CMP_AND_SWP, 1, 0 },
};

KUNIT_ARRAY_PARAM(shca_wt_implied, shca_wt_implied, shca_wt_case_desc);

/*
 * A READ or atomic, then a WRITE; the READ's last response (the atomic's
 * ACK) is lost, the WRITE's ACK comes. That ACK covers the READ's PSNs
 * without its data (an implied NAK): the requester asks again for what
 * is missing, at once, and both complete, byte-exact, the atomic
 * executed once.
 */
static void shca_wire_implied_nak(struct kunit *test)
{
	const struct shca_wt_case *c = test->param_value;
	struct shca_wt_fix *f = test->priv;
	bool atomic = shca_wt_is_atomic(c->opcode);
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge asge = shca_wt_sge(&f->a, SHCA_WT_ATOM, 8);
	struct ib_sge wsge = shca_wt_sge(&f->a, 100, 500);
	struct ib_rdma_wr w2 = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &wsge,
			.num_sge = 1 },
	};
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1, .next = &w2.wr },
	};
	struct ib_atomic_wr awr = {
		.wr = { .wr_id = 1, .opcode = c->opcode,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &asge,
			.num_sge = 1, .next = &w2.wr },
		.compare_add = c->opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 1000 : 5,
		.swap = 77,
	};
	u64 *remote = (u64 *)(f->b.buf + SHCA_WT_ATOM);
	struct ib_wc wc;

	shca_wt_connect(f, &shca_wt_calm);
	f->rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	shca_wt_fill(f->a.buf, SHCA_WT_A_OFF, 3);
	shca_wt_fill(f->b.buf + SHCA_WT_B_OFF, SHCA_WT_LEN, 4);
	*remote = 1000;
	rd.remote_addr = f->b.mr->iova + SHCA_WT_B_OFF;
	rd.rkey = f->rkey;
	awr.remote_addr = f->b.mr->iova + SHCA_WT_ATOM;
	awr.rkey = f->rkey;
	w2.remote_addr = f->b.mr->iova + 20000;
	w2.rkey = f->rkey;

	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, c->from, c->nth };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, atomic ? &awr.wr : &rd.wr),
			0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS,
			  !atomic ? IB_WC_RDMA_READ :
			  c->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			  IB_WC_COMP_SWAP : IB_WC_FETCH_ADD, &wc);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, f->net->fates[SHCA_KNET_DROP], 1);
	if (atomic) {
		KUNIT_EXPECT_EQ(test, *(u64 *)(f->a.buf + SHCA_WT_ATOM), 1000);
		KUNIT_EXPECT_EQ(test, *remote,
				c->opcode == IB_WR_ATOMIC_CMP_AND_SWP ? 77 :
				1005);
	} else {
		KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
		KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF,
					     f->b.buf + SHCA_WT_B_OFF,
					     SHCA_WT_LEN), 0);
	}
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 20000, f->a.buf + 100, 500),
			0);
	KUNIT_EXPECT_GT(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 0);
	shca_wt_expect_empty(f, f->a.cq);
}

/* ------------------------------------------------------------------ */
/* RNR, retries, remote errors                                         */

/*
 * A SEND without a receive posted gets RNR NAKs (rnr_retry 7: for ever)
 * until one is posted; then it completes, byte-exact.
 */
static void shca_wire_rnr(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge dst = shca_wt_sge(&f->b, SHCA_WT_B_OFF, 4096);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	struct ib_wc wc;

	shca_wt_connect(f, &shca_wt_calm);
	shca_wt_fill(f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN, 3);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr), 0);
	/* At least one RNR wait over and the SEND sent again. */
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_stat(f, &f->a, SHCA_WS_RETRANSMITS,
						  4, 2000));
	shca_wt_expect_empty(f, f->a.cq);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->b, SHCA_WS_RNR_NAKS_SENT),
			2);
	KUNIT_EXPECT_GE(test, shca_wt_delta(f, &f->a, SHCA_WS_RNR_NAKS_RCVD),
			2);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 2, &dst, 1), 0);
	shca_wt_expect_wc(f, f->b.cq, 2, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_WT_LEN);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + SHCA_WT_B_OFF,
				     f->a.buf + SHCA_WT_A_OFF, SHCA_WT_LEN), 0);
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + SHCA_WT_B_OFF +
					     SHCA_WT_LEN, 4096 - SHCA_WT_LEN));
	shca_wt_expect_empty(f, f->b.cq);
}

/*
 * rnr_retry 2: the third RNR NAK ends the SEND with RNR_RETRY_EXC_ERR,
 * after two retransmissions; the next request is flushed; the responder
 * is fine.
 */
static void shca_wire_rnr_exhausted(struct kunit *test)
{
	static const struct shca_wt_conn c = {
		.timeout = 16, .retry_cnt = 7, .rnr_retry = 2,
	};
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 8);
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1, .next = &wr2 };

	shca_wt_connect(f, &c);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0, NULL);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RNR_NAKS_RCVD),
			3);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RNR_NAKS_SENT),
			3);
	shca_wt_expect_empty(f, f->b.cq);
}

/*
 * The network loses everything: retry_cnt 2 makes three ACK timeouts,
 * two of them sending both requests again, then RETRY_EXC_ERR for the
 * first and a flush for the second.
 */
static void shca_wire_retry_exhausted(struct kunit *test)
{
	static const struct shca_wt_conn c = {
		.timeout = 10, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 8);
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1, .next = &wr2 };

	shca_wt_connect(f, &c);
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, -1, -1 };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 3);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RETRANSMITS), 4);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 6);
	KUNIT_EXPECT_EQ(test, f->net->count[1], 0);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 0);
	/* In the error state nothing more leaves. */
	shca_wt_run(f, 30);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 6);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_RTS);
}

/*
 * A WRITE of 65 packets, one more than the PSNs a requester may have
 * outstanding, into a network that loses everything: sending stops in
 * the middle of it, each ACK timeout sends the same 64 packets again, and
 * the third ends it with RETRY_EXC_ERR and flushes the SEND behind it.
 * (The requester used to wait for ever there: a WQE sent only in part
 * did not count as sent.)
 */
static void shca_wire_retry_exhausted_window(struct kunit *test)
{
	static const struct shca_wt_conn c = {
		.timeout = 10, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge[2] = {
		shca_wt_sge(&f->a, 0, 32 * SHCA_WT_MTU),
		shca_wt_sge(&f->a, 0, 33 * SHCA_WT_MTU),
	};
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = sge, .num_sge = 1 };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = sge,
			.num_sge = 2, .next = &wr2 },
	};

	shca_wt_connect(f, &c);
	wr.rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	wr.remote_addr = f->b.mr->iova;
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, -1, -1 };
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACK_TIMEOUTS), 3);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 3 * 64);
	/* In the error state nothing more leaves. */
	shca_wt_run(f, 30);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 3 * 64);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 0);
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf, SHCA_WT_BUF));
}

/*
 * A four-packet WRITE with a wrong rkey: REM_ACCESS_ERR at the requester
 * (then in ERR), the responder NAKs the first packet, goes to ERR with
 * QP_ACCESS_ERR, drops the other three, flushes its receive; its memory
 * is untouched.
 */
static void shca_wire_bad_rkey(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge rsge = shca_wt_sge(&f->b, 0, 16);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_wt_connect(f, &shca_wt_calm);
	wr.rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW) ^ 0x100;
	wr.remote_addr = f->b.mr->iova;
	shca_wt_fill(f->a.buf, SHCA_WT_BUF, 4);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 9, &rsge, 1), 0);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
	shca_wt_expect_wc(f, f->b.cq, 9, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_events(f, &f->b, 1, 2000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_ACCESS_ERR);
	KUNIT_EXPECT_EQ(test, f->a.events, 0);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 4);
	KUNIT_EXPECT_EQ(test, f->net->count[1], 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_ACCESS_NAKS_SENT),
			1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_ACCESS_NAKS_RCVD),
			1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 3);
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf, SHCA_WT_BUF));
}

/* ------------------------------------------------------------------ */
/* UC and UD                                                           */

/*
 * UC: a WRITE and a SEND arrive as on RC, without ACKs; a SEND that lost
 * its middle packet completes at the sender and is lost at the receiver,
 * whose receive takes the next message whole.
 */
static void shca_wire_uc(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *qa = shca_wt_qp(test, &f->a, IB_QPT_UC);
	struct ib_qp *qb = shca_wt_qp(test, &f->b, IB_QPT_UC);
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, SHCA_WT_LEN);
	struct ib_sge dst = shca_wt_sge(&f->b, SHCA_WT_B_OFF, 4096);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_wc wc;

	shca_wt_connect_qps(f, qa, qb, &shca_wt_calm);
	/* b's MR, registered over b's RC QP (left alone otherwise). */
	shca_wt_restate(test, f->b.qp, &f->a, f->a.qp->qp_num, &shca_wt_calm);
	wr.rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	wr.remote_addr = f->b.mr->iova + 20000;
	shca_wt_fill(f->a.buf, SHCA_WT_BUF, 6);

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(qa, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);

	/* A SEND whose second packet is lost. */
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(qb, 2, &dst, 1), 0);
	wr.wr.wr_id = 3;
	wr.wr.opcode = IB_WR_SEND;
	f->net->rule = (struct shca_knet_rule){ SHCA_KNET_DROP, 0, 5 };
	KUNIT_ASSERT_EQ(test, shca_wt_post(qa, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_empty(f, f->b.cq);

	/* The next SEND, with immediate data, is whole. */
	sge = shca_wt_sge(&f->a, 30000, SHCA_WT_LEN - 50);
	wr.wr.wr_id = 4;
	wr.wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(0x55);
	KUNIT_ASSERT_EQ(test, shca_wt_post(qa, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 2, IB_WC_SUCCESS, IB_WC_RECV, &wc);
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
	shca_wt_expect_empty(f, f->b.cq);
}

/* A UD QP of @e in RTS. */
static struct ib_qp *shca_wt_ud_qp(struct kunit *test, struct shca_wt_end *e)
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

static void shca_wt_destroy_ah(void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

static int shca_wt_ud_send(struct shca_wt_end *e, struct ib_qp *qp,
			   struct ib_ah *ah, u32 qpn, u32 qkey, u64 wr_id,
			   u32 off, u32 len)
{
	struct ib_sge sge = shca_wt_sge(e, off, len);
	struct ib_ud_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_SEND_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED,
			.ex.imm_data = cpu_to_be32(0xfeed), .sg_list = &sge,
			.num_sge = 1 },
		.ah = ah,
		.remote_qpn = qpn,
		.remote_qkey = qkey,
	};

	return shca_wt_post(qp, &wr.wr);
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
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *ua = shca_wt_ud_qp(test, &f->a);
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	const struct ipv6hdr *ip6 = (const struct ipv6hdr *)f->b.buf;
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	struct ib_sge rsge = shca_wt_sge(&f->b, 0, 1200);
	long dropped = atomic_long_read(&f->b.sdev->rx_dropped);
	union ib_gid got_s, got_d;
	struct ib_ah *ah;
	struct ib_wc wc;

	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, &f->b.gid, 0x12345, 0, 33, 0x28);
	ah = rdma_create_ah(f->a.pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ah));
	shca_kunit_defer(test, shca_wt_destroy_ah, ah);
	shca_wt_fill(f->a.buf, SHCA_WT_BUF, 8);

	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(ub, 10, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 1, 100, 1000), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 10, IB_WC_SUCCESS, IB_WC_RECV, &wc);
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
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, shca_wt_mac[0]));
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
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + SHCA_GRH_BYTES + 1000,
					     4096));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);

	/* No receive posted, then a wrong Q_Key: lost, counted. */
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 2, 0, 8), 0);
	shca_wt_expect_wc(f, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_stat(f, &f->b, SHCA_WS_RX_DROPPED,
						  1, 2000));
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(ub, 11, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY + 1, 3, 0, 8), 0);
	shca_wt_expect_wc(f, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_empty(f, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_DROPPED), 2);
	KUNIT_EXPECT_EQ(test, atomic_long_read(&f->b.sdev->rx_dropped),
			dropped + 2);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);

	/* The controlled Q_Key bit: the sender's own, which matches. */
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      BIT(31), 4, 0, 8), 0);
	shca_wt_expect_wc(f, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 11, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_GRH_BYTES + 8);

	/*
	 * A receive too small for GRH and data: LOC_LEN_ERR for that
	 * receive only; the QP goes on (a remote sender must not be able
	 * to put a UD QP, QP1 above all, in the error state).
	 */
	rsge.length = SHCA_GRH_BYTES + 7;
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(ub, 12, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 5, 0, 8), 0);
	shca_wt_expect_wc(f, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 12, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(ub), IB_QPS_RTS);
	rsge.length = SHCA_GRH_BYTES + 8;
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(ub, 13, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_ud_send(&f->a, ua, ah, ub->qp_num,
					      SHCA_WT_QKEY, 6, 0, 8), 0);
	shca_wt_expect_wc(f, f->a.cq, 6, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 13, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_GRH_BYTES + 8);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 6);
	KUNIT_EXPECT_EQ(test, f->net->stray, 0);
}

/* ------------------------------------------------------------------ */
/* Hostile packets                                                     */

/*
 * A packet from @from's GID to @to's, its transport headers at @bth
 * (@len bytes, to which the ICRC is added), as the wire would bring it;
 * NULL without memory.
 */
static struct sk_buff *shca_wt_forge_path(const struct shca_path *path,
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

static struct sk_buff *shca_wt_forge(struct shca_wt_fix *f, int from, int to,
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

	ether_addr_copy(path.av.smac, shca_wt_mac[from]);
	return shca_wt_forge_path(&path, bth, len);
}

/* Write a BTH: the default P_Key, version 0. */
static void shca_wt_bth(u8 *bth, u8 opcode, u8 pad, u32 qpn, bool ackreq,
			u32 psn)
{
	put_unaligned_be32((u32)opcode << 24 | (u32)(pad & 3) << 20 |
			   SHCA_DEFAULT_PKEY, bth);
	put_unaligned_be32(qpn & SHCA_QPN_MAX, bth + 4);
	put_unaligned_be32((ackreq ? BIT(31) : 0) | (psn & SHCA_PSN_MASK),
			   bth + 8);
}

/* Feed a forged packet to @to's device; false if it does not decode. */
static bool shca_wt_feed(struct shca_wt_fix *f, int from, int to,
			 const u8 *bth, u32 len)
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

/*
 * Wait until @e's device accounted for @n packets since the mark, in
 * rx_packets or rx_dropped; with @settle, let the network run a little
 * longer to see that no packet was counted twice (the counts add up, so
 * a later call sees it too).
 */
static bool shca_wt_wait_counted(struct shca_wt_fix *f, struct shca_wt_end *e,
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
		shca_wt_run(f, 1);
	got = shca_wt_delta(f, e, SHCA_WS_RX_PKTS) +
	      shca_wt_delta(f, e, SHCA_WS_RX_DROPPED);
	KUNIT_EXPECT_EQ(f->test, got, n);
	return got == n;
}

static const enum ib_qp_type shca_wt_qp_types[] = {
	IB_QPT_RC, IB_QPT_UC, IB_QPT_UD,
};

static void shca_wt_qp_type_desc(const enum ib_qp_type *t, char *desc)
{
	strscpy(desc, *t == IB_QPT_RC ? "RC" : *t == IB_QPT_UC ? "UC" : "UD",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_wt_qp_types, shca_wt_qp_types, shca_wt_qp_type_desc);

/* Post receives over the first 32 KiB of b's buffer. */
static void shca_wt_hostile_recvs(struct kunit *test, struct ib_qp *qp,
				  struct shca_wt_end *e)
{
	int i;

	for (i = 0; i < 8; i++) {
		struct ib_sge sge = shca_wt_sge(e, i * 4096, 4096);

		KUNIT_ASSERT_EQ(test, shca_wt_post_recv(qp, 100 + i, &sge, 1),
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
	struct shca_wt_fix *f = test->priv;
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
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + 32768, 32768));
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
	struct shca_wt_fix *f = test->priv;
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
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_wt_state(ub), IB_QPS_RTS);
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
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	u8 pkt[SHCA_RETH_BYTES + SHCA_BTH_BYTES + 64] = {};
	u32 len = SHCA_BTH_BYTES + SHCA_RETH_BYTES + 64, rkey;
	struct shca_pkt p;
	struct sk_buff *skb;

	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
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
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf, SHCA_WT_BUF));
	KUNIT_EXPECT_EQ(test, f->net->count[0] + f->net->count[1], 0);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, shca_wt_state(ub), IB_QPS_RTS);

	/* The same WRITE from the peer lands: the drops were for cause. */
	shca_wt_bth(pkt, IB_OPCODE_RC_RDMA_WRITE_ONLY, 0, f->b.qp->qp_num,
		    true, 0);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->b, 6, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf, 0xee, 64));
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + 64, 4096));
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
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	struct shca_qp *b = to_shca_qp(f->b.qp), *u = to_shca_qp(ub);
	u8 pkt[SHCA_BTH_BYTES + SHCA_RETH_BYTES + 64] = {};
	u32 len = sizeof(pkt), rkey;
	int i;

	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
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
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_RTS);
}

/*
 * Issue 29, finding 7: a READ's responses leave at most 64 per run of the
 * responder's work item (here 256 responses at a 256-byte MTU), so a
 * READ of up to 2 GiB never holds the QP, its timers, a RESET or the
 * poster of a user QP for all of them; the READ completes with every
 * byte. Before the fix one run sent all 256.
 */
static void shca_wire_read_budget(struct kunit *test)
{
	static const struct shca_wt_conn small = {
		.timeout = 16, .retry_cnt = 7, .rnr_retry = 7,
		.mtu = IB_MTU_256,
	};
	struct shca_wt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge sge = shca_wt_sge(&f->a, 0, SHCA_WT_BUF);
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 7, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED,
			.sg_list = &sge, .num_sge = 1 },
	};
	const struct ib_send_wr *bad;
	unsigned long end;
	u32 sent;
	int i;

	for (i = 0; i < SHCA_WT_BUF; i++)
		f->b.buf[i] = (u8)(i * 13 + 1);
	shca_wt_connect(f, &small);
	rd.rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
	rd.remote_addr = f->b.mr->iova;
	shca_qp_exec_stop(b);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a.qp, &rd.wr, &bad), 0);
	/* The request reaches b's queue; b's work item cannot run. */
	end = jiffies + 3 * HZ;
	while (!skb_queue_len(&b->rxq) && time_before(jiffies, end)) {
		shca_knet_pump(f->net);
		usleep_range(100, 200);
	}
	KUNIT_ASSERT_EQ(test, skb_queue_len(&b->rxq), 1U);
	for (i = 1; i <= 4; i++) {
		shca_wire_run(b);
		sent = skb_queue_len(&f->net->txq);
		KUNIT_EXPECT_EQ_MSG(test, sent, 64U * i, "after run %d", i);
	}
	KUNIT_EXPECT_FALSE(test, b->wresp.rd_active);
	shca_qp_exec_resume(b);
	shca_qp_kick(b);
	shca_wt_expect_wc(f, f->a.cq, 7, IB_WC_SUCCESS, IB_WC_RDMA_READ, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf, f->b.buf, SHCA_WT_BUF), 0);
}

/*
 * Issue 29 (second review, F7): after IB_EVENT_DEVICE_FATAL a QP on the
 * wire brought back to RTS sends nothing: its requests complete flushed,
 * as on the memory link. Before the fix the wire requester never looked
 * at the device's state and sent them.
 */
static void shca_wire_fatal_sends_nothing(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 64);
	struct ib_send_wr wr = { .wr_id = 3, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	const struct ib_send_wr *bad;

	shca_wt_connect(f, &shca_wt_calm);
	shca_qp_device_fatal(f->a.sdev);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
	shca_wt_restate(test, f->a.qp, &f->b, f->b.qp->qp_num, &shca_wt_calm);
	shca_wt_drain_cq(f->a.cq);
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a.qp, &wr, &bad), 0);
	shca_wt_expect_wc(f, f->a.cq, 3, IB_WC_WR_FLUSH_ERR, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, f->net->count[0], 0U);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_ERR);
}

/*
 * Issue 29 (second review, F6): entering RTS does not write the
 * requester's state (struct shca_wreq belongs to whoever executes the
 * QP, and the work item may be using it at that moment): the executor
 * starts it at sq_psn when it next runs. Here the test holds the QP's
 * executor bit across RTR -> RTS: the requester's state stays as it
 * was, query_qp reports the new sq_psn, and once the executor runs, the
 * next message goes out at that PSN and arrives. Before the fix
 * modify_qp wrote the PSNs under the executor's feet.
 */
static void shca_wire_rts_leaves_wreq(struct kunit *test)
{
	struct shca_wt_fix *f = test->priv;
	struct shca_qp *qp = to_shca_qp(f->a.qp);
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 64);
	struct ib_sge rsge = shca_wt_sge(&f->b, 0, 64);
	struct ib_send_wr wr = { .wr_id = 4, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	const struct ib_send_wr *bad;
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	shca_wt_connect(f, &shca_wt_calm);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a.qp, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_FALSE(test, test_and_set_bit(SHCA_QP_EXEC_BUSY,
						  &qp->exec_flags));
	qp->wreq.psn = 0x123456;
	qp->wreq.una = 0x123456;
	KUNIT_EXPECT_EQ(test, shca_wt_to_rts(f->a.qp, &f->b, f->b.qp->qp_num,
					     &shca_wt_calm), 0);
	KUNIT_EXPECT_EQ(test, qp->wreq.psn, 0x123456);
	KUNIT_EXPECT_EQ(test, qp->wreq.una, 0x123456);
	KUNIT_EXPECT_EQ(test, ib_query_qp(f->a.qp, &attr, IB_QP_SQ_PSN,
					  &init), 0);
	KUNIT_EXPECT_EQ(test, attr.sq_psn, 0);
	clear_bit(SHCA_QP_EXEC_BUSY, &qp->exec_flags);

	shca_wt_drain_cq(f->a.cq);
	shca_wt_fill(f->a.buf, 64, 9);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 5, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, ib_post_send(f->a.qp, &wr, &bad), 0);
	shca_wt_expect_wc(f, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 5, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_MEMEQ(test, f->b.buf, f->a.buf, 64);
	KUNIT_EXPECT_EQ(test, ib_query_qp(f->a.qp, &attr, IB_QP_SQ_PSN,
					  &init), 0);
	KUNIT_EXPECT_EQ(test, attr.sq_psn, 1);
}

static const enum ib_qp_type shca_wt_conn_types[] = { IB_QPT_RC, IB_QPT_UC };

KUNIT_ARRAY_PARAM(shca_wt_conn_types, shca_wt_conn_types,
		  shca_wt_qp_type_desc);

/*
 * Issue 30: a SEND longer than its receive ends the responder's
 * connection as on the memory link (shca_qp_err_len): the receive
 * completes with IB_WC_LOC_LEN_ERR, the responder enters the error state
 * on RC and on UC, and no asynchronous event comes (the completion
 * reports the error); the RC requester completes with
 * IB_WC_REM_INV_REQ_ERR, the UC one successfully. Before, the wire
 * responder also raised IB_EVENT_QP_REQ_ERR on RC and went on receiving
 * on UC.
 */
static void shca_wire_recv_len_error(struct kunit *test)
{
	const enum ib_qp_type *type = test->param_value;
	bool rc = *type == IB_QPT_RC;
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *qa = rc ? f->a.qp : shca_wt_qp(test, &f->a, *type);
	struct ib_qp *qb = rc ? f->b.qp : shca_wt_qp(test, &f->b, *type);
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 101);
	struct ib_sge dst = shca_wt_sge(&f->b, 0, 100);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };

	shca_wt_connect_qps(f, qa, qb, &shca_wt_calm);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(qb, 5, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_post(qa, &wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1,
			  rc ? IB_WC_REM_INV_REQ_ERR : IB_WC_SUCCESS,
			  IB_WC_SEND, NULL);
	shca_wt_expect_wc(f, f->b.cq, 5, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(qb), IB_QPS_ERR);
	msleep(50);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
	KUNIT_EXPECT_EQ(test, shca_wt_state(qa), rc ? IB_QPS_ERR : IB_QPS_RTS);
}

/*
 * Issue 30: the wire's half of shca_qp_write_imm_refused_first - a WRITE
 * with immediate through a refused key, no receive posted: a remote
 * access NAK, not an RNR NAK; the links agree.
 */
static void shca_wire_write_imm_refused_first(struct kunit *test)
{
	static const struct shca_wt_conn c = {
		.timeout = 16, .retry_cnt = 7, .rnr_retry = 1,
	};
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_wt_connect(f, &c);
	wr.rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW) ^ 0x100;
	wr.remote_addr = f->b.mr->iova;
	shca_knet_mark(f->net);
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RNR_NAKS_SENT),
			0);
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
	struct shca_wt_fix *f = test->priv;
	u32 len = SHCA_BTH_BYTES + SHCA_RETH_BYTES + 1024, rkey;
	u8 *pkt = kunit_kzalloc(test, len, GFP_KERNEL);
	const u64 tail = SHCA_WT_BUF - 1024;
	int read;

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	shca_wt_connect(f, &shca_wt_calm);
	rkey = shca_wt_reg(f, &f->b, SHCA_WT_RW);
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
		KUNIT_EXPECT_EQ(test, shca_wt_state(f->b.qp), IB_QPS_ERR);
		KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf + tail, 1024));
		/* The NAK, and no READ response before it. */
		shca_wt_run(f, 20);
		KUNIT_EXPECT_EQ(test, f->net->count[1], 1U);
	}
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
	struct shca_wt_fix *f = test->priv;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_sge rsge = shca_wt_sge(&f->b, 0, 4096);
	struct ib_sge rsge2 = shca_wt_sge(&f->b, 4096, 4096);
	u32 len = SHCA_BTH_BYTES + 1024;
	u8 *pkt = kunit_kzalloc(test, len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, pkt);
	shca_wt_connect(f, &shca_wt_calm);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 7, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(f->b.qp, 8, &rsge2, 1), 0);
	shca_knet_mark(f->net);
	shca_wt_bth(pkt, IB_OPCODE_RC_SEND_FIRST, 0, f->b.qp->qp_num, false,
		    0);
	memset(pkt + SHCA_BTH_BYTES, 0xab, 1024);
	KUNIT_ASSERT_TRUE(test, shca_wt_feed(f, 0, 1, pkt, len));
	KUNIT_ASSERT_TRUE(test, shca_wt_wait_counted(f, &f->b, 1, true));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->b, SHCA_WS_RX_PKTS), 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(f->b.buf, 0xab, 1024));
	shca_wt_expect_none(f, f->b.cq);

	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b.qp, &err, IB_QP_STATE), 0);
	shca_wt_expect_wc(f, f->b.cq, 7, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, NULL);
	shca_wt_expect_wc(f, f->b.cq, 8, IB_WC_WR_FLUSH_ERR, IB_WC_RECV, NULL);
	shca_wt_expect_empty(f, f->b.cq);
}

/*
 * A UD datagram "datagram" from 192.0.2.1 (source QP 0x123, TOS 0x10, TTL
 * 7) to 192.0.2.2, QP @qpn of device b, forged and decoded into @p; the
 * test fails and aborts if it cannot be.
 */
static struct sk_buff *shca_wt_ud_ipv4_dgram(struct shca_wt_fix *f, u32 qpn,
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
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	struct ib_sge rsge = shca_wt_sge(&f->b, 0, 200);
	struct sk_buff *skb;
	struct shca_pkt p;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(ub, 1, &rsge, 1), 0);
	shca_knet_mark(f->net);
	skb = shca_wt_ud_ipv4_dgram(f, ub->qp_num, &p);
	KUNIT_EXPECT_EQ(test, p.vlan_id, 0xffff);
	p.vlan_id = 42;
	ether_addr_copy(p.smac, seen_mac);
	skb->dev = NULL;
	shca_knet_rx(f->net, 1, skb, &p);

	shca_wt_expect_wc(f, f->b.cq, 1, IB_WC_SUCCESS, IB_WC_RECV, &wc);
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
	struct shca_wt_fix *f = test->priv;
	struct ib_qp *ub = shca_wt_ud_qp(test, &f->b);
	struct ib_sge rsge = shca_wt_sge(&f->b, 0, 200);
	const struct iphdr *ip = (const struct iphdr *)(f->b.buf + 20);
	union ib_gid got_s, got_d, want_s, want_d;
	struct sk_buff *skb;
	struct shca_pkt p;
	struct ib_wc wc;

	memset(f->b.buf, 0x5a, 256);
	KUNIT_ASSERT_EQ(test, shca_wt_post_recv(ub, 1, &rsge, 1), 0);
	shca_knet_mark(f->net);
	skb = shca_wt_ud_ipv4_dgram(f, ub->qp_num, &p);
	want_s = p.sgid;
	want_d = p.dgid;
	shca_knet_rx(f->net, 1, skb, &p);

	shca_wt_expect_wc(f, f->b.cq, 1, IB_WC_SUCCESS, IB_WC_RECV, &wc);
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
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->b.buf, 20));
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

/*
 * Responses that lie to a requester whose READ (2000 bytes, two
 * packets) never reached the responder: a first response shorter than
 * the MTU, a response longer than the READ, an atomic ACK, an ACK for a
 * PSN never sent, a last response longer than what is left. None of it
 * lands; the true responses then complete the READ, byte-exact, and
 * nothing is written past it.
 */
static void shca_wt_resp(struct shca_wt_fix *f, u8 opcode, u32 psn,
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
	static const struct shca_wt_conn c = {
		.timeout = 18, .retry_cnt = 7, .rnr_retry = 7,	/* 1 s */
	};
	struct shca_wt_fix *f = test->priv;
	struct ib_sge sge = shca_wt_sge(&f->a, SHCA_WT_A_OFF, 2000);
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
	KUNIT_ASSERT_EQ(test, shca_wt_post(f->a.qp, &wr.wr), 0);
	for (i = 0; i < 2000 && !f->net->count[0]; i++)
		shca_wt_run(f, 1);
	shca_wt_run(f, 2);
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
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->a.buf, SHCA_WT_BUF));
	shca_wt_expect_empty(f, f->a.cq);

	/* The true first response, then a last one too long, then true. */
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, 0, data,
		     SHCA_WT_MTU);
	memmove(data, data + SHCA_WT_MTU, 2000);
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, 1, data, 1000);
	KUNIT_EXPECT_TRUE(test, shca_wt_wait_counted(f, &f->a, 6, true));
	shca_wt_expect_empty(f, f->a.cq);
	shca_wt_resp(f, IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, 1, data,
		     2000 - SHCA_WT_MTU);
	shca_wt_expect_wc(f, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_RDMA_READ, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2000);
	shca_wt_fill(data, 4096, 0x42);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + SHCA_WT_A_OFF, data, 2000), 0);
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->a.buf, SHCA_WT_A_OFF));
	KUNIT_EXPECT_TRUE(test, shca_wt_zero(f->a.buf + SHCA_WT_A_OFF + 2000,
					     8192));
	KUNIT_EXPECT_EQ(test, shca_wt_delta(f, &f->a, SHCA_WS_RX_PKTS), 6);
	KUNIT_EXPECT_EQ(test, shca_wt_state(f->a.qp), IB_QPS_RTS);
}

static struct kunit_case shca_wire_cases[] = {
	KUNIT_CASE_PARAM(shca_wire_rc_op, shca_wt_ops_gen_params),
	KUNIT_CASE(shca_wire_rc_pipeline),
	KUNIT_CASE(shca_wire_rc_misc),
	KUNIT_CASE_PARAM(shca_wire_loss, shca_wt_losses_gen_params),
	KUNIT_CASE_PARAM(shca_wire_dup, shca_wt_ops_gen_params),
	KUNIT_CASE_PARAM(shca_wire_reorder, shca_wt_reorders_gen_params),
	KUNIT_CASE(shca_wire_reorder_reads),
	KUNIT_CASE(shca_wire_deep_reads),
	KUNIT_CASE(shca_wire_query_psn),
	KUNIT_CASE(shca_wire_infinite_timeout),
	KUNIT_CASE_PARAM(shca_wire_late_answer, shca_wt_lates_gen_params),
	KUNIT_CASE_PARAM(shca_wire_implied_nak, shca_wt_implied_gen_params),
	KUNIT_CASE(shca_wire_rnr),
	KUNIT_CASE(shca_wire_rnr_exhausted),
	KUNIT_CASE(shca_wire_retry_exhausted),
	KUNIT_CASE(shca_wire_retry_exhausted_window),
	KUNIT_CASE(shca_wire_bad_rkey),
	KUNIT_CASE(shca_wire_uc),
	KUNIT_CASE(shca_wire_ud),
	KUNIT_CASE_PARAM(shca_wire_hostile_garbage,
			 shca_wt_qp_types_gen_params),
	KUNIT_CASE(shca_wire_hostile_truncated),
	KUNIT_CASE(shca_wire_hostile_addressing),
	KUNIT_CASE(shca_wire_hostile_responses),
	KUNIT_CASE(shca_wire_ud_ipv4),
	KUNIT_CASE(shca_wire_rx_cb),
	KUNIT_CASE(shca_wire_rx_judged_in_softirq),
	KUNIT_CASE(shca_wire_held_recv_flushed),
	KUNIT_CASE_SLOW(shca_wire_reth_range),
	KUNIT_CASE(shca_wire_read_budget),
	KUNIT_CASE(shca_wire_fatal_sends_nothing),
	KUNIT_CASE(shca_wire_rts_leaves_wreq),
	KUNIT_CASE(shca_wire_write_imm_refused_first),
	KUNIT_CASE_PARAM(shca_wire_recv_len_error,
			 shca_wt_conn_types_gen_params),
	{}
};

static struct kunit_suite shca_wire_suite = {
	.name = "shca_wire",
	.init = shca_wt_init,
	.test_cases = shca_wire_cases,
};

kunit_test_suites(&shca_wire_suite);
