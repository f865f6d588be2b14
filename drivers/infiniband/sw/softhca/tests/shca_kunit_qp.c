// SPDX-License-Identifier: GPL-2.0
/*
 * softhca KUnit fixture of the data-path suites (see shca_kunit_qp.h):
 * two ends a and b connected through the memory link or the UDP link,
 * driven through the kernel verbs a ULP uses (ib_alloc_cq, ib_create_qp,
 * ib_modify_qp, ib_post_send/recv, ib_poll_cq). Remote keys are fast-reg
 * MRs registered with IB_WR_REG_MR, as ULPs do.
 */

#include <linux/delay.h>
#include <rdma/ib_cache.h>

#include "shca_kunit_qp.h"

const u8 shca_qt_mac[2][ETH_ALEN] = {
	{ 0x02, 0x53, 0x48, 0x51, 0x50, 0x01 },
	{ 0x02, 0x53, 0x48, 0x51, 0x50, 0x02 },
};

/* Unset fields: see struct shca_qt_conn. */
const struct shca_qt_conn shca_qt_default_conn = {
	.timeout = 4, .retry_cnt = 3, .rnr_retry = 7,
};

static void shca_qt_free_pages(void *p)
{
	free_pages((unsigned long)p, get_order(SHCA_QT_BUF));
}

/**
 * shca_qt_event() - event handler of the fixture's QPs
 * @ev: the event
 * @ctx: the QP's end (struct shca_qt_end)
 *
 * Counts the event in the end's @events and keeps it in @last_event.
 */
void shca_qt_event(struct ib_event *ev, void *ctx)
{
	struct shca_qt_end *e = ctx;

	e->last_event = ev->event;
	WRITE_ONCE(e->events, e->events + 1);
}

/**
 * shca_qt_wait_events() - wait for an end's async events
 * @e: the end
 * @want: how many it should have seen in all
 * @ms: how long to wait, in milliseconds
 *
 * Async events come from the QP's work item, independently of the peer's
 * completions (as a hardware HCA's event queue and completion queues are
 * independent).
 *
 * Return: whether @e saw exactly @want events.
 */
bool shca_qt_wait_events(struct shca_qt_end *e, int want, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct shca_knet *net = shca_knet_pumped();

	while (READ_ONCE(e->events) < want && time_before(jiffies, end)) {
		if (net)
			shca_knet_run(net, 1);
		else
			usleep_range(500, 1000);
	}
	return READ_ONCE(e->events) == want;
}

/**
 * shca_qt_qp_make() - a QP of an end, destroyed with the test
 * @test: the test; aborts if the QP cannot be made
 * @e: the end: its PD, its CQ for both queues, shca_qt_event() with @e
 * @type: the QP type
 * @max_wr: send and receive WQEs
 * @max_sge: send and receive SGEs
 * @max_inline: inline data
 * @flags: create flags
 *
 * Return: the QP, in RESET, signalling the requests that ask for it.
 */
struct ib_qp *shca_qt_qp_make(struct kunit *test, struct shca_qt_end *e,
			      enum ib_qp_type type, u32 max_wr, u32 max_sge,
			      u32 max_inline, u32 flags)
{
	struct ib_qp_init_attr init = {
		.create_flags = flags,
		.event_handler = shca_qt_event,
		.qp_context = e,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = {
			.max_send_wr = max_wr,
			.max_recv_wr = max_wr,
			.max_send_sge = max_sge,
			.max_recv_sge = max_sge,
			.max_inline_data = max_inline,
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

/**
 * shca_qt_qp_flags() - an RC QP of an end, with create flags
 * @test: the test
 * @e: the end
 * @max_wr: send and receive WQEs
 * @max_sge: send and receive SGEs
 * @max_inline: inline data
 * @flags: create flags
 *
 * Return: the QP (see shca_qt_qp_make()).
 */
struct ib_qp *shca_qt_qp_flags(struct kunit *test, struct shca_qt_end *e,
			       u32 max_wr, u32 max_sge, u32 max_inline,
			       u32 flags)
{
	return shca_qt_qp_make(test, e, IB_QPT_RC, max_wr, max_sge,
			       max_inline, flags);
}

/**
 * shca_qt_qp() - an RC QP of an end
 * @test: the test
 * @e: the end
 * @max_wr: send and receive WQEs
 * @max_sge: send and receive SGEs
 * @max_inline: inline data
 *
 * Return: the QP (see shca_qt_qp_make()).
 */
struct ib_qp *shca_qt_qp(struct kunit *test, struct shca_qt_end *e,
			 u32 max_wr, u32 max_sge, u32 max_inline)
{
	return shca_qt_qp_flags(test, e, max_wr, max_sge, max_inline, 0);
}

/**
 * shca_qt_end_make() - make an end on a device
 * @test: the test; owns everything made here
 * @e: the end, filled in
 * @ibdev: the device
 * @ctx: polling context of the end's CQ
 * @cqe: size of the CQ
 * @max_sge: SGEs of the end's RC QP (SHCA_QT_WR WQEs, 64 bytes inline)
 */
void shca_qt_end_make(struct kunit *test, struct shca_qt_end *e,
		      struct ib_device *ibdev, enum ib_poll_context ctx,
		      int cqe, u32 max_sge)
{
	e->ibdev = ibdev;
	e->sdev = to_shca_dev(ibdev);
	KUNIT_ASSERT_EQ(test, rdma_query_gid(ibdev, 1, 0, &e->gid), 0);
	e->pd = shca_kunit_pd(test, ibdev);
	e->cq = ib_alloc_cq(ibdev, NULL, cqe, 0, ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->cq));
	shca_kunit_defer(test, shca_kunit_free_cq, e->cq);
	e->qp = shca_qt_qp(test, e, SHCA_QT_WR, max_sge, 64);

	e->buf = (u8 *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					get_order(SHCA_QT_BUF));
	KUNIT_ASSERT_NOT_NULL(test, e->buf);
	shca_kunit_defer(test, shca_qt_free_pages, e->buf);
	sg_init_one(&e->sg, e->buf, SHCA_QT_BUF);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(ibdev, &e->sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	e->mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG,
			    SHCA_QT_BUF / PAGE_SIZE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, e->mr);
}

/**
 * shca_qt_end_init() - make an end of the QP suites' shape
 * @test: the test
 * @e: the end
 * @ibdev: the device
 * @ctx: polling context of the end's CQ
 *
 * A CQ of SHCA_QT_CQE entries, a QP of 4 SGEs (see shca_qt_end_make()).
 */
void shca_qt_end_init(struct kunit *test, struct shca_qt_end *e,
		      struct ib_device *ibdev, enum ib_poll_context ctx)
{
	shca_qt_end_make(test, e, ibdev, ctx, SHCA_QT_CQE, 4);
}

/**
 * shca_qt_poll() - wait for one completion
 * @cq: the CQ
 * @wc: the completion, if one came
 * @ms: how long to wait, in milliseconds
 *
 * Return: whether a completion came.
 */
bool shca_qt_poll(struct ib_cq *cq, struct ib_wc *wc, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	struct shca_knet *net = shca_knet_pumped();

	/* The test's thread is the network: it pumps while it waits. */
	while (net) {
		shca_knet_pump(net);
		if (ib_poll_cq(cq, 1, wc) == 1)
			return true;
		if (time_after(jiffies, end))
			return false;
		usleep_range(100, 200);
	}
	do {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return true;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return ib_poll_cq(cq, 1, wc) == 1;
}

/**
 * shca_qt_expect_wc() - expect a completion, within 5 seconds
 * @test: the test; aborts if none comes
 * @cq: the CQ
 * @wr_id: the completion's wr_id
 * @status: its status
 * @opcode: its opcode (checked on success only)
 * @out: the completion, or NULL
 */
void shca_qt_expect_wc(struct kunit *test, struct ib_cq *cq, u64 wr_id,
		       enum ib_wc_status status, enum ib_wc_opcode opcode,
		       struct ib_wc *out)
{
	struct ib_wc wc;

	if (!shca_qt_poll(cq, &wc, 5000)) {
		struct shca_knet *net = shca_knet_pumped();

		if (net)
			shca_knet_dump(net);
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

/**
 * shca_qt_expect_none() - expect no completion now
 * @test: the test
 * @cq: the CQ
 */
void shca_qt_expect_none(struct kunit *test, struct ib_cq *cq)
{
	struct ib_wc wc;
	int n = ib_poll_cq(cq, 1, &wc);

	if (n == 1)
		KUNIT_FAIL(test, "unexpected completion: wr_id %llu, %s",
			   wc.wr_id, ib_wc_status_msg(wc.status));
	else
		KUNIT_EXPECT_EQ(test, n, 0);
}

/**
 * shca_qt_expect_empty() - expect no completion within 20 ms
 * @test: the test
 * @cq: the CQ
 */
void shca_qt_expect_empty(struct kunit *test, struct ib_cq *cq)
{
	struct shca_knet *net = shca_knet_pumped();

	if (net)
		shca_knet_run(net, 20);
	else
		msleep(20);
	shca_qt_expect_none(test, cq);
}

/**
 * shca_qt_state() - a QP's state, as query_qp reports it
 * @qp: the QP
 *
 * Return: the state, or -1 if query_qp fails.
 */
enum ib_qp_state shca_qt_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

/**
 * shca_qt_psn() - a QP's send or receive PSN, as query_qp reports it
 * @qp: the QP
 * @send: the send PSN (sq_psn), else the receive PSN (rq_psn)
 *
 * Return: the PSN, or U32_MAX if query_qp fails.
 */
u32 shca_qt_psn(struct ib_qp *qp, bool send)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_SQ_PSN | IB_QP_RQ_PSN, &init))
		return U32_MAX;
	return send ? attr.sq_psn : attr.rq_psn;
}

/**
 * shca_qt_to_init() - RESET -> INIT on port 1, P_Key index 0
 * @qp: an RC QP (every remote access allowed) or a UC QP (remote writes)
 *
 * Return: what ib_modify_qp() returns.
 */
int shca_qt_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = qp->qp_type == IB_QPT_RC ?
				   SHCA_QT_RW : IB_ACCESS_REMOTE_WRITE |
						IB_ACCESS_LOCAL_WRITE,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

/**
 * shca_qt_to_rts() - INIT -> RTR -> RTS towards a peer QP
 * @qp: an RC or UC QP
 * @peer_dev: the peer's device; the path goes to its GID 0
 * @dest_qpn: the peer QP's number
 * @c: the connection's attributes (UC takes no RC-only ones)
 *
 * Return: 0, or what the failing call returned.
 */
int shca_qt_to_rts(struct ib_qp *qp, struct ib_device *peer_dev,
		   u32 dest_qpn, const struct shca_qt_conn *c)
{
	bool rc = qp->qp_type == IB_QPT_RC;
	u8 rd = c->rd_atom ?: 4;
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	int err;

	err = rdma_query_gid(peer_dev, 1, 0, &dgid);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = c->mtu ?: IB_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = c->rq_psn;
	attr.max_dest_rd_atomic = c->no_dest_rd ? 0 : rd;
	attr.min_rnr_timer = c->min_rnr_timer ?: 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, 0, 64, 0);
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
	attr.sq_psn = c->sq_psn;
	attr.max_rd_atomic = c->no_init_rd ? 0 : rd;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN |
			    (rc ? IB_QP_TIMEOUT | IB_QP_RETRY_CNT |
				  IB_QP_RNR_RETRY | IB_QP_MAX_QP_RD_ATOMIC :
				  0));
}

/**
 * shca_qt_connect() - connect two ends' QPs, both ways, from RESET
 * @test: the test; aborts if a step fails
 * @x: one end
 * @y: the other
 * @c: the connection's attributes, the same for both
 *
 * Also checks that the connection took the link the case asked for: the
 * UDP link while a test network runs, else the memory link.
 */
void shca_qt_connect(struct kunit *test, struct shca_qt_end *x,
		     struct shca_qt_end *y, const struct shca_qt_conn *c)
{
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(x->qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(y->qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(x->qp, y->ibdev, y->qp->qp_num,
					     c), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(y->qp, x->ibdev, x->qp->qp_num,
					     c), 0);
	/* The link the case's parameter asked for. */
	KUNIT_ASSERT_EQ(test, READ_ONCE(to_shca_qp(x->qp)->wire),
			shca_knet_active());
	KUNIT_ASSERT_EQ(test, READ_ONCE(to_shca_qp(y->qp)->wire),
			shca_knet_active());
}

/**
 * shca_qt_restate_qp() - bring a QP back from any state to RTS
 * @test: the test; aborts if a step fails
 * @qp: the QP: RESET, then INIT -> RTS
 * @peer_dev: the peer's device
 * @dest_qpn: the peer QP's number
 * @c: the connection's attributes
 */
void shca_qt_restate_qp(struct kunit *test, struct ib_qp *qp,
			struct ib_device *peer_dev, u32 dest_qpn,
			const struct shca_qt_conn *c)
{
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(qp, peer_dev, dest_qpn, c), 0);
}

/**
 * shca_qt_restate() - bring an end's QP back to RTS towards a peer's
 * @test: the test
 * @e: the end
 * @peer: the peer end
 * @c: the connection's attributes
 */
void shca_qt_restate(struct kunit *test, struct shca_qt_end *e,
		     struct shca_qt_end *peer, const struct shca_qt_conn *c)
{
	shca_qt_restate_qp(test, e->qp, peer->ibdev, peer->qp->qp_num, c);
}

/**
 * shca_qt_reg() - register an end's MR over its buffer with IB_WR_REG_MR
 * @test: the test; aborts if the registration fails
 * @e: the end; its QP must be in RTS
 * @access: the access rights
 *
 * Return: the new rkey (the key byte is incremented each time).
 */
u32 shca_qt_reg(struct kunit *test, struct shca_qt_end *e, int access)
{
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
	shca_qt_expect_wc(test, e->cq, 0x5e9, IB_WC_SUCCESS, IB_WC_REG_MR,
			  NULL);
	return e->mr->rkey;
}

/**
 * shca_qt_sge() - an SGE over an end's buffer, with the PD's local lkey
 * @e: the end
 * @off: offset in the buffer
 * @len: length
 *
 * Return: the SGE.
 */
struct ib_sge shca_qt_sge(struct shca_qt_end *e, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = (u64)(uintptr_t)(e->buf + off),
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
}

/**
 * shca_qt_post_recv_qp() - post one receive on a QP
 * @qp: the QP
 * @wr_id: the receive's wr_id
 * @sge: its SGEs
 * @n: how many
 *
 * Return: what ib_post_recv() returns.
 */
int shca_qt_post_recv_qp(struct ib_qp *qp, u64 wr_id, struct ib_sge *sge,
			 int n)
{
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				 .num_sge = n };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

/**
 * shca_qt_post_recv() - post one receive on an end's QP
 * @e: the end
 * @wr_id: the receive's wr_id
 * @sge: its SGEs
 * @n: how many
 *
 * Return: what ib_post_recv() returns.
 */
int shca_qt_post_recv(struct shca_qt_end *e, u64 wr_id, struct ib_sge *sge,
		      int n)
{
	return shca_qt_post_recv_qp(e->qp, wr_id, sge, n);
}

/**
 * shca_qt_post_qp() - post send work requests on a QP
 * @qp: the QP
 * @wr: the first request
 *
 * Return: what ib_post_send() returns.
 */
int shca_qt_post_qp(struct ib_qp *qp, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(qp, wr, &bad);
}

/**
 * shca_qt_post() - post send work requests on an end's QP
 * @e: the end
 * @wr: the first request
 *
 * Return: what ib_post_send() returns.
 */
int shca_qt_post(struct shca_qt_end *e, struct ib_send_wr *wr)
{
	return shca_qt_post_qp(e->qp, wr);
}

/**
 * shca_qt_fill() - fill memory with a pattern
 * @p: the memory
 * @len: its length
 * @seed: the pattern's seed (byte i is @seed + 7 i)
 */
void shca_qt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7;
}

/**
 * shca_qt_all() - whether every byte of memory has one value
 * @p: the memory
 * @len: its length
 * @v: the value
 *
 * Return: true if every byte is @v.
 */
bool shca_qt_all(const u8 *p, size_t len, u8 v)
{
	return !memchr_inv(p, v, len);
}

/**
 * shca_qt_setup() - make the fixture, as a suite's init
 * @test: the test; the fixture is its priv
 * @o: what to make
 *
 * Two devices on two test netdevs (the test network started first when
 * @o->wire, and the devices attached to it); a on the first device, b on
 * the first or the second.
 *
 * Return: 0.
 */
int shca_qt_setup(struct kunit *test, const struct shca_qt_opts *o)
{
	struct shca_qt_fix *f;
	int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->test = test;
	f->ep[0] = &f->a;
	f->ep[1] = &f->b;
	if (o->wire)
		f->net = shca_knet_start(test);
	for (i = 0; i < 2; i++) {
		static const char * const names[] = { "shcak_qp0", "shcak_qp1" };
		struct net_device *ndev = shca_kunit_netdev(test,
							    shca_qt_mac[i]);

		f->dev[i] = shca_kunit_device(test, names[i], ndev);
	}
	shca_qt_end_make(test, &f->a, f->dev[0], o->ctx, o->cqe, o->max_sge);
	shca_qt_end_make(test, &f->b, f->dev[o->two], o->ctx, o->cqe,
			 o->max_sge);
	if (o->wire) {
		shca_knet_attach(f->net, 0, f->dev[0]);
		if (o->two)
			shca_knet_attach(f->net, 1, f->dev[1]);
		if (!o->pumped)
			shca_knet_autopump(f->net);
	}
	test->priv = f;
	return 0;
}

/**
 * shca_qt_init_common() - the QP suites' fixture
 * @test: the test
 * @two: b on a device of its own
 * @wire: connections through the UDP link, delivered as they are sent
 * @ctx: polling context of the CQs
 *
 * Ends of the QP suites' shape (shca_qt_end_init()).
 *
 * Return: 0.
 */
int shca_qt_init_common(struct kunit *test, int two, bool wire,
			enum ib_poll_context ctx)
{
	const struct shca_qt_opts o = {
		.two = two, .wire = wire, .ctx = ctx,
		.cqe = SHCA_QT_CQE, .max_sge = 4,
	};

	return shca_qt_setup(test, &o);
}

/**
 * shca_qt_init() - init of the suites whose cases take a place
 * @test: the test; its parameter, a struct shca_qt_where or none, says
 *	where a and b are (none: one device, the memory link)
 *
 * Return: 0.
 */
int shca_qt_init(struct kunit *test)
{
	const struct shca_qt_where *w = test->param_value;

	return shca_qt_init_common(test, w && w->two, w && w->wire,
				   IB_POLL_DIRECT);
}

/**
 * shca_qt_init_two() - a and b on devices of their own
 * @test: the test, whatever its parameter
 *
 * Return: 0.
 */
int shca_qt_init_two(struct kunit *test)
{
	return shca_qt_init_common(test, 1, false, IB_POLL_DIRECT);
}

static const struct shca_qt_where shca_qt_where[] = {
	{ .two = false }, { .two = true },
	{ .two = false, .wire = true }, { .two = true, .wire = true },
};

static void shca_qt_where_desc(const struct shca_qt_where *w, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s%s",
		 w->two ? "two devices" : "one device",
		 w->wire ? ", UDP link" : "");
}

KUNIT_ARRAY_PARAM(shca_qt_where_all, shca_qt_where, shca_qt_where_desc);

/**
 * shca_qt_where_gen_params() - every place: one device or two, either link
 * @prev: the previous parameter, NULL for the first
 * @desc: its description
 *
 * Return: the next parameter (a struct shca_qt_where), NULL after the last.
 */
const void *shca_qt_where_gen_params(const void *prev, char *desc)
{
	return shca_qt_where_all_gen_params(prev, desc);
}

/*
 * The memory link only: multicast datagrams reach the QPs of this host,
 * never the wire (Documentation/wire.rst).
 */
static const struct shca_qt_where shca_qt_mem[] = {
	{ .two = false }, { .two = true },
};

KUNIT_ARRAY_PARAM(shca_qt_mem_all, shca_qt_mem, shca_qt_where_desc);

/**
 * shca_qt_mem_gen_params() - one device or two, the memory link only
 * @prev: the previous parameter, NULL for the first
 * @desc: its description
 *
 * Return: the next parameter (a struct shca_qt_where), NULL after the last.
 */
const void *shca_qt_mem_gen_params(const void *prev, char *desc)
{
	return shca_qt_mem_all_gen_params(prev, desc);
}

/* Only "two devices": a and b on devices of their own. */
static const struct shca_qt_where shca_qt_apart[] = { { .two = true } };

KUNIT_ARRAY_PARAM(shca_qt_apart_all, shca_qt_apart, shca_qt_where_desc);

/**
 * shca_qt_apart_gen_params() - only "two devices", the memory link
 * @prev: the previous parameter, NULL for the first
 * @desc: its description
 *
 * Return: the next parameter (a struct shca_qt_where), NULL after the last.
 */
const void *shca_qt_apart_gen_params(const void *prev, char *desc)
{
	return shca_qt_apart_all_gen_params(prev, desc);
}

/**
 * shca_qt_ud_qp() - a UD QP of an end, in RTS
 * @test: the test; aborts if the QP cannot be made or moved
 * @e: the end: its PD and CQ
 * @qkey: the QP's Q_Key
 *
 * 8 WQEs of 2 SGEs each way, every request signalled, no event handler.
 *
 * Return: the QP.
 */
struct ib_qp *shca_qt_ud_qp(struct kunit *test, struct shca_qt_end *e,
			    u32 qkey)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_UD,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .pkey_index = 0, .port_num = 1,
		.qkey = qkey,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create UD QP: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_QKEY), 0);
	attr.qp_state = IB_QPS_RTR;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), 0);
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = 0;
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_SQ_PSN), 0);
	return qp;
}

/**
 * shca_qt_destroy_ah() - destroy an address handle (a test action)
 * @ah: the address handle
 */
void shca_qt_destroy_ah(void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/**
 * shca_qt_ah() - an address handle for GID 0 of a peer device
 * @test: the test; owns the AH, aborts if it cannot be made
 * @e: the end whose PD the AH is on
 * @peer: the peer's device
 * @dgid: the peer's GID, filled in
 *
 * Flow label 0x12345, hop limit 33, traffic class 0x28.
 *
 * Return: the AH.
 */
struct ib_ah *shca_qt_ah(struct kunit *test, struct shca_qt_end *e,
			 struct ib_device *peer, union ib_gid *dgid)
{
	struct rdma_ah_attr attr = { .type = RDMA_AH_ATTR_TYPE_ROCE };
	struct ib_ah *ah;

	KUNIT_ASSERT_EQ(test, rdma_query_gid(peer, 1, 0, dgid), 0);
	rdma_ah_set_port_num(&attr, 1);
	rdma_ah_set_grh(&attr, dgid, 0x12345, 0, 33, 0x28);
	ah = rdma_create_ah(e->pd, &attr, RDMA_CREATE_AH_SLEEPABLE);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(ah), "create_ah: %ld",
			       PTR_ERR(ah));
	shca_kunit_defer(test, shca_qt_destroy_ah, ah);
	return ah;
}

/**
 * shca_qt_ud_recv() - post a receive over the start of an end's buffer
 * @e: the end
 * @qp: the QP (of @e)
 * @wr_id: the receive's wr_id
 * @len: its length
 *
 * Return: what ib_post_recv() returns.
 */
int shca_qt_ud_recv(struct shca_qt_end *e, struct ib_qp *qp, u64 wr_id,
		    u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, 0, len);
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}
