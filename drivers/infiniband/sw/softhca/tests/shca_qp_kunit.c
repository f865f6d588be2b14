// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for the data path: CQs, RC QPs and every work request,
 * driven through the kernel verbs a ULP uses (ib_alloc_cq, ib_create_qp,
 * ib_modify_qp, ib_post_send/recv, ib_poll_cq, ib_drain_qp). Remote keys
 * are fast-reg MRs registered with IB_WR_REG_MR, as ULPs do.
 *
 * shca_qp_verbs:  refused creations and attributes, the state machine
 * shca_qp_data:   every opcode, on one device and across two, byte-exact
 * shca_qp_errors: every completion error with its exact fields, flushes
 * shca_qp_drain:  ib_drain_qp() on workqueue-polled CQs
 * shca_qp_pi:     integrity MRs on integrity-enabled QPs, as nvme-rdma
 *                 and nvmet-rdma use them
 * shca_qp_stress: a poster against re-registration and invalidation
 */

#include <linux/crc-t10dif.h>
#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <linux/ipv6.h>
#include <linux/random.h>
#include <linux/unaligned.h>
#include <linux/vmalloc.h>
#include <kunit/test.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"
#include "shca_kunit_net.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_qp_mac[2][ETH_ALEN] = {
	{ 0x02, 0x53, 0x48, 0x51, 0x50, 0x01 },
	{ 0x02, 0x53, 0x48, 0x51, 0x50, 0x02 },
};

#define SHCA_QT_BUF	SZ_64K
#define SHCA_QT_CQE	256
#define SHCA_QT_WR	64
#define SHCA_QT_RW	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)

/* One end of a connection: device, PD, CQ, QP, memory and its MR. */
struct shca_qt_end {
	struct ib_device *ibdev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;		/* SHCA_QT_BUF bytes, page aligned */
	struct scatterlist sg;
	struct ib_mr *mr;	/* fast-reg MR over @buf */
	int events;		/* async events seen */
	enum ib_event_type last_event;
};

struct shca_qt_fix {
	struct ib_device *dev[2];
	struct shca_qt_end a, b;
	struct shca_knet *net;	/* the UDP link's network, or NULL */
};

/*
 * Where a case runs: a and b on one device or on two, connected through
 * the memory link or through the UDP link (the test network, delivering
 * each packet as it is sent). The cases that take this parameter must
 * give the same results over both links.
 */
struct shca_qt_where {
	bool two;
	bool wire;
};

static void shca_qt_free_pages(void *p)
{
	free_pages((unsigned long)p, get_order(SHCA_QT_BUF));
}

static void shca_qt_event(struct ib_event *ev, void *ctx)
{
	struct shca_qt_end *e = ctx;

	e->last_event = ev->event;
	WRITE_ONCE(e->events, e->events + 1);
}

/*
 * Wait up to @ms for @e's QP to have seen @want async events: they come
 * from the QP's work item, independently of the peer's completions (as a
 * hardware HCA's event queue and completion queues are independent).
 */
static bool shca_qt_wait_events(struct shca_qt_end *e, int want, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (READ_ONCE(e->events) < want && time_before(jiffies, end))
		usleep_range(500, 1000);
	return READ_ONCE(e->events) == want;
}

static struct ib_qp *shca_qt_qp_flags(struct kunit *test,
				      struct shca_qt_end *e, u32 max_wr,
				      u32 max_sge, u32 max_inline, u32 flags)
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
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	return qp;
}

static struct ib_qp *shca_qt_qp(struct kunit *test, struct shca_qt_end *e,
				u32 max_wr, u32 max_sge, u32 max_inline)
{
	return shca_qt_qp_flags(test, e, max_wr, max_sge, max_inline, 0);
}

static void shca_qt_end_init(struct kunit *test, struct shca_qt_end *e,
			     struct ib_device *ibdev, enum ib_poll_context ctx)
{
	e->ibdev = ibdev;
	e->pd = ib_alloc_pd(ibdev, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->pd));
	shca_kunit_defer(test, shca_kunit_dealloc_pd, e->pd);
	e->cq = ib_alloc_cq(ibdev, NULL, SHCA_QT_CQE, 0, ctx);
	KUNIT_ASSERT_FALSE(test, IS_ERR(e->cq));
	shca_kunit_defer(test, shca_kunit_free_cq, e->cq);
	e->qp = shca_qt_qp(test, e, SHCA_QT_WR, 4, 64);

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

/* Wait up to @ms milliseconds for one completion on @cq. */
static bool shca_qt_poll(struct ib_cq *cq, struct ib_wc *wc, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		if (ib_poll_cq(cq, 1, wc) == 1)
			return true;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return ib_poll_cq(cq, 1, wc) == 1;
}

static void shca_qt_expect_wc(struct kunit *test, struct ib_cq *cq,
			      u64 wr_id, enum ib_wc_status status,
			      enum ib_wc_opcode opcode, struct ib_wc *out)
{
	struct ib_wc wc;

	KUNIT_ASSERT_TRUE_MSG(test, shca_qt_poll(cq, &wc, 5000),
			      "no completion for wr_id %llu", wr_id);
	KUNIT_EXPECT_EQ(test, wc.wr_id, wr_id);
	KUNIT_EXPECT_EQ_MSG(test, wc.status, status, "wr_id %llu: %s",
			    wr_id, ib_wc_status_msg(wc.status));
	if (status == IB_WC_SUCCESS)
		KUNIT_EXPECT_EQ(test, wc.opcode, opcode);
	if (out)
		*out = wc;
}

static void shca_qt_expect_empty(struct kunit *test, struct ib_cq *cq)
{
	struct ib_wc wc;

	msleep(20);
	KUNIT_EXPECT_EQ(test, ib_poll_cq(cq, 1, &wc), 0);
}

static enum ib_qp_state shca_qt_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

static int shca_qt_to_init(struct ib_qp *qp)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = SHCA_QT_RW,
	};

	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			    IB_QP_PORT | IB_QP_ACCESS_FLAGS);
}

/*
 * Connection attributes of one end. Unset fields: min_rnr_timer 1
 * (10 us), 4 READs/atomics each way (unless no_init_rd / no_dest_rd),
 * PSNs 0.
 */
struct shca_qt_conn {
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	bool no_init_rd;
	bool no_dest_rd;
	u32 sq_psn;
	u32 rq_psn;
};

static const struct shca_qt_conn shca_qt_default_conn = {
	.timeout = 4, .retry_cnt = 3, .rnr_retry = 7,
};

static int shca_qt_to_rts(struct ib_qp *qp, struct ib_device *peer_dev,
			  u32 dest_qpn, const struct shca_qt_conn *c)
{
	struct ib_qp_attr attr = {};
	union ib_gid dgid;
	int err;

	err = rdma_query_gid(peer_dev, 1, 0, &dgid);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = IB_MTU_1024;
	attr.dest_qp_num = dest_qpn;
	attr.rq_psn = c->rq_psn;
	attr.max_dest_rd_atomic = c->no_dest_rd ? 0 : 4;
	attr.min_rnr_timer = c->min_rnr_timer ?: 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, 0, 64, 0);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = c->timeout;
	attr.retry_cnt = c->retry_cnt;
	attr.rnr_retry = c->rnr_retry;
	attr.sq_psn = c->sq_psn;
	attr.max_rd_atomic = c->no_init_rd ? 0 : 4;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* Connect @x and @y both ways. */
static void shca_qt_connect(struct kunit *test, struct shca_qt_end *x,
			    struct shca_qt_end *y,
			    const struct shca_qt_conn *c)
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

/* Bring @e back from any state: RESET, then INIT -> RTS towards @peer. */
static void shca_qt_restate(struct kunit *test, struct shca_qt_end *e,
			    struct shca_qt_end *peer,
			    const struct shca_qt_conn *c)
{
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };

	KUNIT_ASSERT_EQ(test, ib_modify_qp(e->qp, &reset, IB_QP_STATE), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(e->qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(e->qp, peer->ibdev,
					     peer->qp->qp_num, c), 0);
}

/* Register @e's MR over its buffer with IB_WR_REG_MR; returns the rkey. */
static u32 shca_qt_reg(struct kunit *test, struct shca_qt_end *e, int access)
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

static struct ib_sge shca_qt_sge(struct shca_qt_end *e, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = (u64)(uintptr_t)(e->buf + off),
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
}

static int shca_qt_post_recv(struct shca_qt_end *e, u64 wr_id,
			     struct ib_sge *sge, int n)
{
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				 .num_sge = n };
	const struct ib_recv_wr *bad;

	return ib_post_recv(e->qp, &wr, &bad);
}

static int shca_qt_post(struct shca_qt_end *e, struct ib_send_wr *wr)
{
	const struct ib_send_wr *bad;

	return ib_post_send(e->qp, wr, &bad);
}

static void shca_qt_fill(u8 *p, size_t len, u8 seed)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7;
}

static bool shca_qt_all(const u8 *p, size_t len, u8 v)
{
	return !memchr_inv(p, v, len);
}

/* Fixture: two devices on two test netdevs; a on dev[0], b on dev[param]. */
static int shca_qt_init_common(struct kunit *test, int two, bool wire,
			       enum ib_poll_context ctx)
{
	struct shca_qt_fix *f;
	int i;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	if (wire)
		f->net = shca_knet_start(test);
	for (i = 0; i < 2; i++) {
		static const char * const names[] = { "shcak_qp0", "shcak_qp1" };
		struct net_device *ndev = shca_kunit_netdev(test,
							    shca_qp_mac[i]);

		f->dev[i] = shca_kunit_device(test, names[i], ndev);
	}
	shca_qt_end_init(test, &f->a, f->dev[0], ctx);
	shca_qt_end_init(test, &f->b, f->dev[two], ctx);
	if (wire) {
		shca_knet_attach(f->net, 0, f->dev[0]);
		if (two)
			shca_knet_attach(f->net, 1, f->dev[1]);
		shca_knet_autopump(f->net);
	}
	test->priv = f;
	return 0;
}

static int shca_qt_init(struct kunit *test)
{
	const struct shca_qt_where *w = test->param_value;

	return shca_qt_init_common(test, w && w->two, w && w->wire,
				   IB_POLL_DIRECT);
}

/* a and b on devices of their own, whatever the test's parameter. */
static int shca_qt_init_two(struct kunit *test)
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

KUNIT_ARRAY_PARAM(shca_qt_where, shca_qt_where, shca_qt_where_desc);

/*
 * The memory link only: multicast datagrams reach the QPs of this host,
 * never the wire (Documentation/wire.rst).
 */
static const struct shca_qt_where shca_qt_mem[] = {
	{ .two = false }, { .two = true },
};

KUNIT_ARRAY_PARAM(shca_qt_mem, shca_qt_mem, shca_qt_where_desc);

/* Only "two devices": a and b on devices of their own. */
static const struct shca_qt_where shca_qt_apart[] = { { .two = true } };

KUNIT_ARRAY_PARAM(shca_qt_apart, shca_qt_apart, shca_qt_where_desc);

/* ------------------------------------------------------------------ */
/* shca_qp_verbs                                                       */

static void shca_qp_refuse_create(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_dev *sdev = to_shca_dev(f->dev[0]);
	struct ib_cq_init_attr cattr = { .cqe = SHCA_MAX_CQE + 1 };
	struct ib_qp_init_attr init = {
		.send_cq = f->a.cq, .recv_cq = f->a.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IB_QPT_RC,
	};
	int qps = atomic_read(&sdev->num_qps);
	int cqs = atomic_read(&sdev->num_cqs);
	struct ib_qp_init_attr bad;
	struct ib_cq *cq;

	cq = ib_create_cq(f->dev[0], NULL, NULL, NULL, &cattr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);
	cattr.cqe = 1;
	cattr.comp_vector = f->dev[0]->num_comp_vectors;
	cq = ib_create_cq(f->dev[0], NULL, NULL, NULL, &cattr);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(cq), -EINVAL);

	bad = init;
	bad.qp_type = IB_QPT_RAW_PACKET;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EOPNOTSUPP);
	bad = init;
	bad.create_flags = IB_QP_CREATE_BLOCK_MULTICAST_LOOPBACK;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EOPNOTSUPP);
	/* Signature offload is for RC connections. */
	bad = init;
	bad.qp_type = IB_QPT_UD;
	bad.create_flags = IB_QP_CREATE_INTEGRITY_EN;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);
	bad = init;
	bad.cap.max_send_wr = SHCA_MAX_QP_WR + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);
	bad = init;
	bad.cap.max_recv_sge = SHCA_MAX_SGE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);
	bad = init;
	bad.cap.max_inline_data = SHCA_MAX_INLINE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(ib_create_qp(f->a.pd, &bad)),
			-EINVAL);

	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->num_qps), qps);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->num_cqs), cqs);
}

static void shca_qp_states(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp = f->a.qp;
	struct ib_qp_attr attr = {};
	struct ib_qp_init_attr init;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .opcode = IB_WR_SEND, .sg_list = &sge,
				 .num_sge = 1 };

	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_post_recv(&f->a, 1, &sge, 1), -EINVAL);

	/* RESET -> RTS is not a transition. */
	attr.qp_state = IB_QPS_RTS;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	/*
	 * INIT needs its attributes; a bad pkey index changes nothing. (A bad
	 * port is not tried: the core indexes its port array with it before
	 * asking the driver; uverbs checks ports, kernel ULPs must.)
	 */
	attr.qp_state = IB_QPS_INIT;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), -EINVAL);
	attr.port_num = 1;
	attr.pkey_index = 1;
	attr.qp_access_flags = SHCA_QT_RW;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_RESET);

	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_INIT);
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);
	/* Receives may be posted from INIT on. */
	KUNIT_EXPECT_EQ(test, shca_qt_post_recv(&f->a, 1, &sge, 1), 0);

	/* A timeout of 32 is refused without touching the QP. */
	attr = (struct ib_qp_attr){ .qp_state = IB_QPS_RTR, .timeout = 32 };
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_TIMEOUT), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_INIT);
	/* More responder resources than max_qp_rd_atom: the same. */
	attr = (struct ib_qp_attr){ .qp_state = IB_QPS_RTR,
				    .max_dest_rd_atomic = SHCA_MAX_RD_ATOM + 1 };
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_MAX_DEST_RD_ATOMIC), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(qp), IB_QPS_INIT);
	KUNIT_EXPECT_NULL(test, to_shca_qp(qp)->wresp.res);

	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(qp, f->b.ibdev, f->b.qp->qp_num,
					     &shca_qt_default_conn), 0);
	KUNIT_ASSERT_EQ(test, ib_query_qp(qp, &attr, IB_QP_STATE, &init), 0);
	KUNIT_EXPECT_EQ(test, attr.qp_state, IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, attr.dest_qp_num, f->b.qp->qp_num);
	KUNIT_EXPECT_EQ(test, attr.timeout, 4);
	KUNIT_EXPECT_EQ(test, attr.rnr_retry, 7);
	KUNIT_EXPECT_EQ(test, attr.qp_access_flags, SHCA_QT_RW);
	KUNIT_EXPECT_EQ(test, init.cap.max_send_sge, 4);
	KUNIT_EXPECT_EQ(test, init.cap.max_inline_data, 64);

	/* Too many SGEs is refused at post time. */
	wr.num_sge = 5;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);

	/* RESET drops the posted receive without a completion. */
	attr.qp_state = IB_QPS_RESET;
	KUNIT_EXPECT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE), 0);
	shca_qt_expect_empty(test, f->a.cq);
}

static struct kunit_case shca_qp_verbs_cases[] = {
	KUNIT_CASE(shca_qp_refuse_create),
	KUNIT_CASE(shca_qp_states),
	{}
};

static struct kunit_suite shca_qp_verbs_suite = {
	.name = "shca_qp_verbs",
	.init = shca_qt_init,
	.test_cases = shca_qp_verbs_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_data                                                        */

/* SEND gathers 3 SGEs into a receive of 2; immediate data; inline. */
static void shca_qp_send(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge src[3] = {
		shca_qt_sge(&f->a, 100, 10),
		shca_qt_sge(&f->a, 5000, 0),
		shca_qt_sge(&f->a, 9000, 300),
	};
	struct ib_sge dst[2] = {
		shca_qt_sge(&f->b, 64, 200),
		shca_qt_sge(&f->b, 8192, 1000),
	};
	struct ib_send_wr wr = { .wr_id = 11, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = src, .num_sge = 3 };
	struct ib_wc wc;

	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 1);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 21, dst, 2), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);

	shca_qt_expect_wc(test, f->a.cq, 11, IB_WC_SUCCESS, IB_WC_SEND, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->a.qp);
	shca_qt_expect_wc(test, f->b.cq, 21, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 310);
	KUNIT_EXPECT_EQ(test, wc.src_qp, f->a.qp->qp_num);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->b.qp);
	KUNIT_EXPECT_EQ(test, wc.wc_flags & IB_WC_WITH_IMM, 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 64, f->a.buf + 100, 10), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 74, f->a.buf + 9000, 190), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 8192, f->a.buf + 9190, 110),
			0);
	/* Nothing outside the scattered ranges. */
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 264, 8192 - 264, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 8302, 100, 0));

	/* SEND_WITH_IMM, unsignaled: only the receiver sees it. */
	wr.wr_id = 12;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.ex.imm_data = cpu_to_be32(0x12345678);
	wr.send_flags = 0;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 22, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 22, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 10);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x12345678);
	shca_qt_expect_empty(test, f->a.cq);

	/* Inline: the source may change right after posting. */
	memset(f->a.buf, 0xab, 64);
	wr.wr_id = 13;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	src[0] = shca_qt_sge(&f->a, 0, 64);
	src[0].lkey = 0xdeadbeef;	/* inline data needs no key */
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 23, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	memset(f->a.buf, 0x11, 64);
	shca_qt_expect_wc(test, f->b.cq, 23, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 64);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 64, 64, 0xab));
	shca_qt_expect_wc(test, f->a.cq, 13, IB_WC_SUCCESS, IB_WC_SEND, NULL);

	/* More inline data than granted is refused at post. */
	src[0].length = 65;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);
}

/* RDMA WRITE, WRITE_WITH_IMM and READ through a fast-reg MR. */
static void shca_qp_rdma(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 4096, 5000);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 31, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 0);
	struct ib_wc wc;
	u32 rkey;

	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 3);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);

	wr.remote_addr = f->b.mr->iova + 1000;
	wr.rkey = rkey;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 31, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 1000, f->a.buf + 4096, 5000),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 1000, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 6000, 1000, 0));

	/* WRITE_WITH_IMM consumes a receive and reports the length. */
	wr.wr.wr_id = 32;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(7);
	wr.remote_addr = f->b.mr->iova + 20000;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 42, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 42, IB_WC_SUCCESS,
			  IB_WC_RECV_RDMA_WITH_IMM, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 5000);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 7);
	shca_qt_expect_wc(test, f->a.cq, 32, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 20000, f->a.buf + 4096,
				     5000), 0);

	/* READ it back into another place. */
	shca_qt_fill(f->b.buf + 40000, 3000, 99);
	sge = shca_qt_sge(&f->a, 50000, 3000);
	wr.wr.wr_id = 33;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.remote_addr = f->b.mr->iova + 40000;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 33, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 3000);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 50000, f->b.buf + 40000,
				     3000), 0);
}

/*
 * RDMA WRITE and READ with scatter lists (an empty element among them)
 * and inline data: the bytes go element by element, nothing outside them
 * is touched, and a remote range the rkey does not cover fails the
 * request with nothing written.
 */
static void shca_qp_rdma_sgl(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sgl[3] = {
		shca_qt_sge(&f->a, 100, 700),
		shca_qt_sge(&f->a, 3000, 0),
		shca_qt_sge(&f->a, 8000, 1300),
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 35, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = sgl,
			.num_sge = 3 },
	};
	struct ib_wc wc;
	u32 rkey;

	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 5);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);

	wr.remote_addr = f->b.mr->iova + 500;
	wr.rkey = rkey;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 35, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 500, f->a.buf + 100, 700), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 1200, f->a.buf + 8000, 1300),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 500, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 2500, 1000, 0));

	/* READ 2000 bytes back into two other places. */
	shca_qt_fill(f->b.buf + 30000, 2000, 77);
	sgl[0] = shca_qt_sge(&f->a, 20000, 1500);
	sgl[1] = shca_qt_sge(&f->a, 40000, 500);
	wr.wr.wr_id = 36;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.num_sge = 2;
	wr.remote_addr = f->b.mr->iova + 30000;
	memset(f->a.buf + 20000, 0, 1600);
	memset(f->a.buf + 40000, 0, 600);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 36, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2000);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 20000, f->b.buf + 30000,
				     1500), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 40000, f->b.buf + 31500,
				     500), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf + 21500, 100, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf + 40500, 100, 0));

	/* Inline: the data is the WQE's, in one piece. */
	sgl[0] = shca_qt_sge(&f->a, 0, 20);
	sgl[1] = shca_qt_sge(&f->a, 1000, 40);
	sgl[0].lkey = 0xdeadbeef;	/* inline data needs no key */
	wr.wr.wr_id = 38;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	wr.remote_addr = f->b.mr->iova + 50000;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 38, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 50000, f->a.buf, 20), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 50020, f->a.buf + 1000, 40),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 50060, 100, 0));

	/*
	 * A WRITE past the end of the remote MR: refused before a byte
	 * moves, as a responder checks the whole range of a request (its
	 * RETH) first - not even the elements that fit arrive.
	 */
	sgl[0] = shca_qt_sge(&f->a, 100, 700);
	sgl[1] = shca_qt_sge(&f->a, 8000, 1300);
	wr.wr.send_flags = IB_SEND_SIGNALED;
	memset(f->b.buf, 0, SHCA_QT_BUF);
	wr.wr.wr_id = 37;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.remote_addr = f->b.mr->iova + f->b.mr->length - 1000;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 37, IB_WC_REM_ACCESS_ERR,
			  IB_WC_RDMA_WRITE, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
}

/* Atomics return the old value and store the new one. */
static void shca_qp_atomic(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 51, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
		.compare_add = 5,
	};
	u64 *remote = (u64 *)(f->b.buf + 64);
	u64 *local = (u64 *)f->a.buf;
	struct ib_wc wc;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + 64;
	*remote = 100;

	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 51, IB_WC_SUCCESS, IB_WC_FETCH_ADD,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	KUNIT_EXPECT_EQ(test, *local, 100);
	KUNIT_EXPECT_EQ(test, *remote, 105);

	/* Compare fails: nothing stored, old value returned. */
	wr.wr.wr_id = 52;
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	wr.compare_add = 1;
	wr.swap = 77;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 52, IB_WC_SUCCESS, IB_WC_COMP_SWAP,
			  NULL);
	KUNIT_EXPECT_EQ(test, *local, 105);
	KUNIT_EXPECT_EQ(test, *remote, 105);

	wr.wr.wr_id = 53;
	wr.compare_add = 105;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 53, IB_WC_SUCCESS, IB_WC_COMP_SWAP,
			  NULL);
	KUNIT_EXPECT_EQ(test, *local, 105);
	KUNIT_EXPECT_EQ(test, *remote, 77);

	/* An atomic needs exactly one 8-byte local SGE. */
	sge.length = 4;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
}

/* SEND_WITH_INV and LOCAL_INV end a registration; REG_MR renews it. */
static void shca_qp_invalidate(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 16);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr = { .wr_id = 61, .opcode = IB_WR_SEND_WITH_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr inv = { .wr_id = 62, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct shca_mem_target t = { .pd = f->b.pd,
				     .access = IB_ACCESS_REMOTE_READ };
	struct ib_wc wc;
	u8 byte;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	t.key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	t.iova = f->b.mr->iova;
	wr.ex.invalidate_rkey = t.key;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR), 0);

	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 63, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 63, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, t.key);
	shca_qt_expect_wc(test, f->a.cq, 61, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR),
			-EKEYREVOKED);

	/* Register again, invalidate locally. */
	t.key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR), 0);
	inv.ex.invalidate_rkey = t.key;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->b, &inv), 0);
	shca_qt_expect_wc(test, f->b.cq, 62, IB_WC_SUCCESS, IB_WC_LOCAL_INV,
			  NULL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR),
			-EKEYREVOKED);

	/* REG_MR of a VALID MR fails: the QP reports it and errors out. */
	shca_qt_reg(test, &f->b, SHCA_QT_RW);
	{
		struct ib_reg_wr reg = {
			.wr = { .wr_id = 64, .opcode = IB_WR_REG_MR,
				.send_flags = IB_SEND_SIGNALED },
			.mr = f->b.mr, .key = f->b.mr->rkey,
			.access = SHCA_QT_RW,
		};

		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->b, &reg.wr), 0);
		shca_qt_expect_wc(test, f->b.cq, 64, IB_WC_MW_BIND_ERR, 0,
				  NULL);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	}
}

static struct kunit_case shca_qp_data_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_send, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_rdma, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_rdma_sgl, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_atomic, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_invalidate, shca_qt_where_gen_params),
	{}
};

static struct kunit_suite shca_qp_data_suite = {
	.name = "shca_qp_data",
	.init = shca_qt_init,
	.test_cases = shca_qp_data_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_errors                                                      */

/* A bad lkey fails locally; what follows is flushed; the peer is fine. */
static void shca_qp_err_lkey(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 16);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr2 = { .wr_id = 2, .opcode = IB_WR_SEND,
				  .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1,
				 .next = &wr2 };
	struct ib_sge bad = sge;

	/* Over the UDP link: refused before a packet leaves. */
	if (f->net)
		f->net->silent = true;
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 9, &dst, 1), 0);
	bad.lkey ^= 0x80;
	wr.sg_list = &bad;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_LOC_PROT_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->b.cq);

	/* Posting to a QP in the error state completes with a flush. */
	wr.wr_id = 3;
	wr.next = NULL;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_WR_FLUSH_ERR, 0, NULL);
}

/* A bad rkey: REM_ACCESS_ERR here, the responder errors out too. */
static void shca_qp_err_rkey(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 16);
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 16);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
	};
	u32 rkey;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, IB_ACCESS_LOCAL_WRITE |
			   IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 7, &rsge, 1), 0);
	/* The MR grants remote read only. */
	wr.rkey = rkey;
	wr.remote_addr = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	shca_qt_expect_wc(test, f->b.cq, 7, IB_WC_WR_FLUSH_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 2000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_ACCESS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
}

/* Out of range, wrong PD and stale keys are all REM_ACCESS_ERR. */
static void shca_qp_err_remote_range(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 4096);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.sg_list = &sge, .num_sge = 1 },
	};

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + SHCA_QT_BUF - 4095;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, 4096, 0));
}

/*
 * A SEND larger than the receive: both sides report it, each with its
 * completion (shca_wire_recv_len_error: the same on the wire).
 */
static void shca_qp_err_len(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 101);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 100);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 5, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_INV_REQ_ERR, 0, NULL);
	shca_qt_expect_wc(test, f->b.cq, 5, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	/* The completion reports it: no event (as on the wire). */
	msleep(20);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
}

/*
 * Issue 30: a WRITE with immediate whose key the responder refuses, and
 * no receive posted for it: IB_WC_REM_ACCESS_ERR at once, the responder
 * in the error state - the range is judged before a receive is looked
 * for, as on the wire (shca_wire_write_imm_refused_first). Before, the
 * memory link waited out its RNR retries (IB_WC_RNR_RETRY_EXC_ERR).
 */
static void shca_qp_write_imm_refused_first(struct kunit *test)
{
	static const struct shca_qt_conn c = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 1,
	};
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};

	shca_qt_connect(test, &f->a, &f->b, &c);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW) ^ 0x100;
	wr.remote_addr = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
}

/* No receive posted: RNR retries, then RNR_RETRY_EXC_ERR. */
static void shca_qp_err_rnr(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 2,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };

	shca_qt_connect(test, &f->a, &f->b, &c);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
}

/* rnr_retry 7 waits for ever: a late receive still gets the SEND. */
static void shca_qp_rnr_late_recv(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	msleep(100);
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 2, &dst, 1), 0);
	shca_qt_expect_wc(test, f->b.cq, 2, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
}

/*
 * Nobody at the other end (a QP number nobody has, a peer that is not
 * connected back, a GID no softhca device owns): RETRY_EXC_ERR.
 */
static void shca_qp_err_no_peer(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 1, .retry_cnt = 2, .rnr_retry = 7,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };

	/* b is still in RESET: not connected back. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->a.qp, f->b.ibdev,
					     f->b.qp->qp_num, &c), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

/*
 * Keys of another PD, even on the same device: a peer QP in a different
 * PD can neither write nor read through them, a QP of another PD cannot
 * invalidate them locally or remotely, and they keep working for their
 * owner.
 */
static void shca_qp_err_other_pd(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_end *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge, .num_sge = 1 },
	};
	struct ib_send_wr inv = { .wr_id = 2, .opcode = IB_WR_LOCAL_INV };
	struct shca_mem_target t = { .access = IB_ACCESS_REMOTE_READ };
	struct ib_sge dst;
	u8 byte;

	KUNIT_ASSERT_NOT_NULL(test, c);
	shca_qt_end_init(test, c, f->b.ibdev, IB_POLL_DIRECT);
	dst = shca_qt_sge(c, 0, 64);
	/* b registers its MR over a loopback connection of its own. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->b.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->b.qp, f->b.ibdev,
					     f->b.qp->qp_num,
					     &shca_qt_default_conn), 0);
	t.key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	t.iova = f->b.mr->iova;
	t.pd = f->b.pd;

	/* a talks to c, which lives in another PD of b's device. */
	shca_qt_fill(f->a.buf, 64, 5);
	shca_qt_connect(test, &f->a, c, &shca_qt_default_conn);
	wr.rkey = t.key;
	wr.remote_addr = t.iova;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_ACCESS_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));

	/* c cannot invalidate b's key locally ... */
	inv.ex.invalidate_rkey = t.key;
	shca_qt_restate(test, c, &f->a, &shca_qt_default_conn);
	shca_qt_restate(test, &f->a, c, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post(c, &inv), 0);
	shca_qt_expect_wc(test, c->cq, 2, IB_WC_LOC_PROT_ERR, 0, NULL);

	/* ... nor can a make c invalidate it with SEND_WITH_INV. */
	shca_qt_restate(test, c, &f->a, &shca_qt_default_conn);
	shca_qt_restate(test, &f->a, c, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(c, 3, &dst, 1), 0);
	wr.wr.wr_id = 4;
	wr.wr.opcode = IB_WR_SEND_WITH_INV;
	wr.wr.ex.invalidate_rkey = t.key;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_REM_OP_ERR, 0, NULL);
	shca_qt_expect_wc(test, c->cq, 3, IB_WC_LOC_PROT_ERR, 0, NULL);

	/* The owner's key is still registered. */
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR), 0);
}

/*
 * Moving a QP to ERR flushes at once, even while its head request waits
 * out a long local ACK timeout (ib_drain_qp() depends on it).
 */
static void shca_qp_err_flush_cuts_retry(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 20, .retry_cnt = 7, .rnr_retry = 7,	/* 4.3 s */
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };
	struct ib_qp_attr attr = { .qp_state = IB_QPS_ERR };
	struct ib_wc wc;

	/* b stays in RESET: a retries. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->a.qp, f->b.ibdev,
					     f->b.qp->qp_num, &c), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	msleep(50);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->a.qp, &attr, IB_QP_STATE), 0);
	KUNIT_ASSERT_TRUE_MSG(test, shca_qt_poll(f->a.cq, &wc, 1000),
			      "no flush within about a second");
	KUNIT_EXPECT_EQ(test, wc.wr_id, 1);
	KUNIT_EXPECT_EQ(test, wc.status, IB_WC_WR_FLUSH_ERR);
}

static struct kunit_case shca_qp_errors_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_err_lkey, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_err_rkey, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_err_remote_range),
	KUNIT_CASE_PARAM(shca_qp_err_other_pd, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_err_len),
	KUNIT_CASE(shca_qp_write_imm_refused_first),
	KUNIT_CASE(shca_qp_err_rnr),
	KUNIT_CASE(shca_qp_rnr_late_recv),
	KUNIT_CASE(shca_qp_err_no_peer),
	KUNIT_CASE(shca_qp_err_flush_cuts_retry),
	{}
};

static struct kunit_suite shca_qp_errors_suite = {
	.name = "shca_qp_errors",
	.init = shca_qt_init,
	.test_cases = shca_qp_errors_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_review: the findings of the review (issue 9), one by one    */

static struct ib_qp *shca_qt_qp_nodefer(struct kunit *test,
					struct shca_qt_end *e)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %ld",
			       PTR_ERR(qp));
	return qp;
}

/*
 * Finding 1: a destroyed QP's completions leave its kernel CQs, so no
 * poll ever returns a pointer to freed memory (KASAN reports the read of
 * wc.qp below if one does).
 */
static void shca_qp_destroy_purges_cq(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_qp *qp = shca_qt_qp_nodefer(test, &f->a);
	struct ib_recv_wr wr2 = { .wr_id = 2, .sg_list = &sge, .num_sge = 1 };
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = &sge, .num_sge = 1,
				 .next = &wr2 };
	const struct ib_recv_wr *bad;
	u32 qpn = qp->qp_num;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	KUNIT_ASSERT_EQ(test, ib_post_recv(qp, &wr, &bad), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &err, IB_QP_STATE), 0);
	/* The first flush is here, so the second one is queued too. */
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_WR_FLUSH_ERR, 0, &wc);
	KUNIT_EXPECT_EQ(test, wc.qp->qp_num, qpn);
	msleep(20);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	if (ib_poll_cq(f->a.cq, 1, &wc) == 1)
		KUNIT_FAIL(test, "completion %llu of QP %u after its destroy",
			   wc.wr_id, wc.qp->qp_num);
}

/*
 * Finding 2: a lookup by number that found a QP just before its destroy
 * must not read freed memory. What it reads is the QP's link, which the
 * destroy frees only after a grace period: read right after destroy (no
 * grace period can have passed without this thread sleeping), the link
 * is still there with its count at zero (KASAN would report a link freed
 * at once), and no lookup finds the QP any more.
 */
static void shca_qp_destroy_link_outlives_readers(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp = shca_qt_qp_nodefer(test, &f->a);
	struct shca_qp_link *l = to_shca_qp(qp)->link;
	u32 qpn = qp->qp_num;
	unsigned long cookie;
	struct shca_qp *found;

	found = shca_qp_get(qpn);
	KUNIT_ASSERT_PTR_EQ(test, found, to_shca_qp(qp));
	shca_qp_put(found);

	cookie = get_state_synchronize_rcu();
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	rcu_read_lock();
	if (poll_state_synchronize_rcu(cookie)) {
		rcu_read_unlock();
		kunit_skip(test, "a grace period passed during the destroy");
	}
	KUNIT_EXPECT_EQ(test, kref_read(&l->ref), 0);
	KUNIT_EXPECT_FALSE(test, kref_get_unless_zero(&l->ref));
	rcu_read_unlock();
	KUNIT_EXPECT_NULL(test, shca_qp_get(qpn));
}

/*
 * Finding 5: a destroyed QP's number is held back from reuse, even when
 * the allocator comes round to it; released, it is used again.
 */
static void shca_qp_number_held(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp = shca_qt_qp_nodefer(test, &f->a);
	u32 qpn = qp->qp_num;

	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	shca_qpn_set_next(qpn);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_NE(test, qp->qp_num, qpn);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);

	shca_qpn_release_all();
	shca_qpn_set_next(qpn);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_EQ(test, qp->qp_num, qpn);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
}

/*
 * Issue 29, finding 10: the allocator never hands out the multicast QPN
 * (0xffffff): asked to go on from there, it wraps to the first number.
 */
static void shca_qp_number_not_multicast(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *qp;

	shca_qpn_set_next(IB_MULTICAST_QPN - 1);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_EQ(test, qp->qp_num, IB_MULTICAST_QPN - 1);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	shca_qpn_set_next(IB_MULTICAST_QPN);
	qp = shca_qt_qp_nodefer(test, &f->a);
	KUNIT_EXPECT_NE(test, qp->qp_num, IB_MULTICAST_QPN);
	KUNIT_EXPECT_GE(test, qp->qp_num, 2U);
	KUNIT_EXPECT_LT(test, qp->qp_num, IB_MULTICAST_QPN);
	KUNIT_ASSERT_EQ(test, ib_destroy_qp(qp), 0);
	shca_qpn_release_all();
}

/* shca_qp_recv_inflight: the responder is flushed in the middle of a SEND. */
static struct shca_qt_fix *shca_qt_inflight_fix;
static int shca_qt_inflight_chunks;
static struct ib_wc shca_qt_inflight_wc[4];
static int shca_qt_inflight_n;

static void shca_qt_inflight_poll(struct ib_cq *cq)
{
	while (shca_qt_inflight_n < ARRAY_SIZE(shca_qt_inflight_wc) &&
	       ib_poll_cq(cq, 1, &shca_qt_inflight_wc[shca_qt_inflight_n]) == 1)
		shca_qt_inflight_n++;
}

/*
 * After the first chunk of the SEND: the responder enters the error
 * state and its work item runs (it flushes what it may); what reached
 * its CQ meanwhile is recorded.
 */
static void shca_qt_inflight_stub(struct shca_mr *mr)
{
	struct shca_qt_fix *f = shca_qt_inflight_fix;
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };

	if (mr != to_shca_mr(f->b.mr) || ++shca_qt_inflight_chunks != 1)
		return;
	ib_modify_qp(f->b.qp, &err, IB_QP_STATE);
	msleep(50);
	shca_qt_inflight_poll(f->b.cq);
}

/*
 * Issue 29 (second review, F2): a receive a requester took and is still
 * filling when the responder enters the error state completes before the
 * receives behind it are flushed - the flush waits for it - so no
 * FLUSH_ERR overtakes it (ib_drain_qp() returns only once it is done: a
 * ULP then frees the buffers). Before the fix the flush completed the
 * queued receive during the transfer and the taken one after it.
 */
static void shca_qp_recv_inflight(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	u32 len = 3 * SZ_16K, key;
	struct ib_sge src = shca_qt_sge(&f->a, 0, len);
	struct ib_sge dst, dst2;
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };

	shca_qt_fill(f->a.buf, len, 3);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	/* Through b's fast-reg MR: its bytes move in 16 KiB chunks. */
	dst = (struct ib_sge){ .addr = f->b.mr->iova, .length = len,
			       .lkey = key };
	dst2 = (struct ib_sge){ .addr = f->b.mr->iova + len, .length = 64,
				.lkey = key };
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 11, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 12, &dst2, 1), 0);

	shca_qt_inflight_fix = f;
	shca_qt_inflight_chunks = 0;
	shca_qt_inflight_n = 0;
	kunit_activate_static_stub(test, shca_mr_copy_chunk_done,
				   shca_qt_inflight_stub);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	kunit_deactivate_static_stub(test, shca_mr_copy_chunk_done);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_chunks, 3);
	KUNIT_EXPECT_EQ_MSG(test, shca_qt_inflight_n, 0,
			    "completed during the transfer: wr_id %llu",
			    shca_qt_inflight_wc[0].wr_id);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	msleep(50);
	shca_qt_inflight_poll(f->b.cq);
	KUNIT_ASSERT_EQ(test, shca_qt_inflight_n, 2);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[0].wr_id, 11);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[0].status, IB_WC_SUCCESS);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[1].wr_id, 12);
	KUNIT_EXPECT_EQ(test, shca_qt_inflight_wc[1].status, IB_WC_WR_FLUSH_ERR);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, len), 0);
}

/*
 * Issue 29 (second review, F3): the data path's error never lands on a
 * QP in RESET (a request of the connection modify_qp just reset may
 * still be finishing); the QP stays in RESET and can be connected again.
 */
static void shca_qp_error_spares_reset(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *qp = to_shca_qp(f->a.qp);
	unsigned long flags;

	KUNIT_ASSERT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RESET);
	spin_lock_irqsave(&qp->lock, flags);
	shca_qp_set_error(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RESET);
	KUNIT_EXPECT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	spin_lock_irqsave(&qp->lock, flags);
	shca_qp_set_error(qp);
	spin_unlock_irqrestore(&qp->lock, flags);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

/* shca_qp_error_spares_new_connection: the responder reconnects mid-WRITE. */
static struct shca_qt_fix *shca_qt_epoch_fix;
static int shca_qt_epoch_chunks;
static int shca_qt_epoch_err;
static bool shca_qt_epoch_waited;
static DECLARE_COMPLETION(shca_qt_epoch_done);

/* Another thread resets b and connects it again (to a, as before). */
static int shca_qt_epoch_thread(void *arg)
{
	struct shca_qt_fix *f = arg;
	struct ib_qp_attr reset = { .qp_state = IB_QPS_RESET };
	int err;

	err = ib_modify_qp(f->b.qp, &reset, IB_QP_STATE);
	if (!err)
		err = shca_qt_to_init(f->b.qp);
	if (!err)
		err = shca_qt_to_rts(f->b.qp, f->a.ibdev, f->a.qp->qp_num,
				     &shca_qt_default_conn);
	WRITE_ONCE(shca_qt_epoch_err, err);
	complete(&shca_qt_epoch_done);
	return 0;
}

/*
 * After the first chunk of the WRITE: b's MR is invalidated (the next
 * chunk fails at b) and another thread resets b. The reset takes b out
 * of RTS at once, then waits for the message b's responder is taking.
 */
static void shca_qt_epoch_stub(struct shca_mr *mr)
{
	struct shca_qt_fix *f = shca_qt_epoch_fix;
	struct task_struct *task;
	int i;

	if (mr != to_shca_mr(f->b.mr) || ++shca_qt_epoch_chunks != 1)
		return;
	if (shca_mr_invalidate(to_shca_dev(f->b.ibdev), f->b.pd, 0,
			       f->b.mr->rkey))
		return;
	task = kthread_run(shca_qt_epoch_thread, f, "shca_qt_reset");
	if (IS_ERR(task))
		return;
	for (i = 0; i < 200 && shca_qt_state(f->b.qp) != IB_QPS_RESET; i++)
		usleep_range(5000, 6000);
	msleep(20);
	/* In RESET, and still waiting for this message to end. */
	shca_qt_epoch_waited = shca_qt_state(f->b.qp) == IB_QPS_RESET &&
			       READ_ONCE(shca_qt_epoch_err) == -EINPROGRESS;
}

/*
 * Issue 29 (second review, F3), issue 30: a request of a connection the
 * responder is resetting fails at the responder; the requester's
 * completion says so, but the reset waits for it (the memory link's
 * responder is taken, SHCA_QP_EXEC_RESP), and the responder's new
 * connection stays in RTS with no event (it saw none of it). Before
 * issue 29 the failure put the new connection in the error state.
 */
static void shca_qp_error_spares_new_connection(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	u32 len = 3 * SZ_16K, key;
	struct ib_sge src = shca_qt_sge(&f->a, 0, len);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &src,
			.num_sge = 1 },
	};

	shca_qt_fill(f->a.buf, len, 5);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova;
	wr.rkey = key;

	shca_qt_epoch_fix = f;
	shca_qt_epoch_chunks = 0;
	shca_qt_epoch_err = -EINPROGRESS;
	shca_qt_epoch_waited = false;
	reinit_completion(&shca_qt_epoch_done);
	kunit_activate_static_stub(test, shca_mr_copy_chunk_done,
				   shca_qt_epoch_stub);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	kunit_deactivate_static_stub(test, shca_mr_copy_chunk_done);
	KUNIT_ASSERT_TRUE(test, wait_for_completion_timeout(&shca_qt_epoch_done,
							    5 * HZ));
	KUNIT_ASSERT_EQ(test, shca_qt_epoch_err, 0);
	KUNIT_EXPECT_EQ(test, shca_qt_epoch_chunks, 1);
	KUNIT_EXPECT_TRUE(test, shca_qt_epoch_waited);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_REM_ACCESS_ERR,
			  IB_WC_RDMA_WRITE, NULL);
	msleep(20);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
}

static u32 shca_qt_psn(struct ib_qp *qp, bool send)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;

	if (ib_query_qp(qp, &attr, IB_QP_SQ_PSN | IB_QP_RQ_PSN, &init))
		return U32_MAX;
	return send ? attr.sq_psn : attr.rq_psn;
}

/*
 * Issue 29, finding 5: SQ drain (SQD) is refused with -EOPNOTSUPP from
 * RTS; the QP stays in RTS with its PSNs as they were, and the next
 * messages arrive. Before the fix RTS -> SQD -> RTS restarted the
 * requester from a stale PSN on the wire, and the next message completed
 * without being delivered.
 */
static void shca_qp_sqd_refused(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp_attr sqd = { .qp_state = IB_QPS_SQD };
	struct ib_sge src = shca_qt_sge(&f->a, 0, 32);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 32);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };
	u32 psn;
	int i;

	shca_qt_fill(f->a.buf, 64, 9);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	for (i = 0; i < 2; i++) {
		psn = shca_qt_psn(f->a.qp, true);
		KUNIT_EXPECT_EQ(test, ib_modify_qp(f->a.qp, &sqd, IB_QP_STATE),
				-EOPNOTSUPP);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
		KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true), psn);
		memset(f->b.buf, 0, 32);
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 10 + i, &dst, 1),
				0);
		wr.wr_id = 1 + i;
		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
		shca_qt_expect_wc(test, f->a.cq, 1 + i, IB_WC_SUCCESS,
				  IB_WC_SEND, NULL);
		shca_qt_expect_wc(test, f->b.cq, 10 + i, IB_WC_SUCCESS,
				  IB_WC_RECV, NULL);
		KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 32), 0);
	}
}

/*
 * Finding 5: PSNs. Each request takes one PSN per packet at the path MTU
 * (1024 here; a READ its response packets; an atomic one) on both ends;
 * a requester whose PSN is not the one the responder expects is not
 * accepted (RETRY_EXC_ERR) and moves nothing.
 */
static void shca_qp_psn(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 1, .retry_cnt = 1, .rnr_retry = 7,
		.sq_psn = 0xfffffe, .rq_psn = 0xfffffe,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 2500);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 4096);
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 2, .opcode = IB_WR_RDMA_READ,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	static const struct shca_qt_conn ahead = {
		.timeout = 1, .retry_cnt = 1, .rnr_retry = 7, .sq_psn = 6,
	};

	shca_qt_connect(test, &f->a, &f->b, &c);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 9, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 9, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	/* 2500 bytes: 3 packets, wrapping at 2^24. */
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true), 1);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, false), 1);

	rd.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	rd.remote_addr = f->b.mr->iova;
	sge.length = 4096;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &rd.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->a.qp, true), 5);
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, false), 5);
	/* The responder's own send PSN did not move. */
	KUNIT_EXPECT_EQ(test, shca_qt_psn(f->b.qp, true), 0xfffffe);

	/* b expects PSN 5: a reconnected with PSN 6 is not accepted. */
	memset(f->b.buf, 0, SHCA_QT_BUF);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 10, &dst, 1), 0);
	shca_qt_restate(test, &f->a, &f->b, &ahead);
	shca_qt_fill(f->a.buf, 64, 3);
	sge.length = 64;
	wr.wr_id = 3;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_RETRY_EXC_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->b.cq);
}

/*
 * Finding 7: after an error, RESET -> INIT -> RTR -> RTS with the same
 * attributes gives a working QP: RESET empties the queues and drops the
 * QP's old completions (the order rdma-core's tests restate QPs in).
 */
static void shca_qp_reset_reuse(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 32);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_sge stale = dst;
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	int i;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	/* b's first receive names a key nobody has: REM_OP_ERR for a. */
	stale.lkey = 0x5a5a5a00;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 7, &stale, 1), 0);
	for (i = 0; i < 3; i++)
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 8, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_OP_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	msleep(20);	/* the flushes are queued, and not polled */

	shca_qt_restate(test, &f->b, &f->a, &shca_qt_default_conn);
	shca_qt_restate(test, &f->a, &f->b, &shca_qt_default_conn);

	/* Old completions are gone; new traffic completes in both ways. */
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_expect_empty(test, f->b.cq);
	shca_qt_fill(f->a.buf, 32, 9);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 11, &dst, 1), 0);
	wr.wr_id = 12;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 12, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 11, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf, f->b.buf, 32), 0);
}

/*
 * Finding 9: a misaligned atomic is an invalid request: the responder
 * goes to the error state and says so (IB_EVENT_QP_REQ_ERR).
 */
static void shca_qp_atomic_misaligned(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.sg_list = &sge, .num_sge = 1 },
		.compare_add = 1,
	};

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + 4;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_REM_INV_REQ_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 2000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_REQ_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 16, 0));
}

/*
 * Finding 9: READ/atomic resources of 0. A requester granted none cannot
 * issue a READ (LOC_QP_OP_ERR); a responder granted none refuses one as
 * an invalid request.
 */
static void shca_qp_rd_atomic_zero(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn none = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 7,
		.no_init_rd = true, .no_dest_rd = true,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 64);
	struct ib_rdma_wr rd = {
		.wr = { .wr_id = 1, .opcode = IB_WR_RDMA_READ,
			.sg_list = &sge, .num_sge = 1 },
	};

	shca_qt_fill(f->b.buf, 64, 1);
	/* a has no initiator resources. */
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->a.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(f->b.qp), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->b.qp, f->a.ibdev,
					     f->a.qp->qp_num,
					     &shca_qt_default_conn), 0);
	rd.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	rd.remote_addr = f->b.mr->iova;
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(f->a.qp, f->b.ibdev,
					     f->b.qp->qp_num, &none), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &rd.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_LOC_QP_OP_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, 64, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_RTS);

	/* b has no responder resources. */
	shca_qt_restate(test, &f->b, &f->a, &none);
	shca_qt_restate(test, &f->a, &f->b, &shca_qt_default_conn);
	rd.wr.wr_id = 2;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &rd.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_REM_INV_REQ_ERR, 0, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf, 64, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
}

/*
 * Finding 9: the requester waits the RNR NAK timer the responder asks for
 * (its min_rnr_timer, IBTA table) between RNR retries: code 28 is
 * 163.84 ms, so three retries take at least 491 ms.
 */
static void shca_qp_rnr_timer(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn slow = {
		.timeout = 4, .retry_cnt = 3, .rnr_retry = 3,
		.min_rnr_timer = 28,
	};
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .sg_list = &sge, .num_sge = 1 };
	ktime_t start;
	s64 ms;

	shca_qt_connect(test, &f->a, &f->b, &slow);
	start = ktime_get();
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RNR_RETRY_EXC_ERR, 0, NULL);
	ms = ktime_ms_delta(ktime_get(), start);
	KUNIT_EXPECT_GE_MSG(test, ms, 491, "3 RNR waits of 163.84 ms took %lld ms",
			    ms);
}

/*
 * Finding 9: IB_WR_REG_MR_INTEGRITY needs an integrity-enabled QP: refused
 * at post time with EINVAL, and the QP stays usable.
 */
static void shca_qp_reg_integrity_needs_qp_flag(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_mr *mr = ib_alloc_mr_integrity(f->a.pd, 4, 4);
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE,
	};

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, mr);
	wr.mr = mr;
	wr.key = mr->rkey;
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_reg(test, &f->a, SHCA_QT_RW);
}

static void shca_qt_vfree(void *p)
{
	vfree(p);
}

/*
 * Finding 3: large requests do not monopolise the executor. A run of a
 * QP's work item stops after SHCA_EXEC_BYTES and copies with reschedule
 * points, so a small SEND of another QP, posted behind eight 16 MiB SENDs,
 * completes long before the eighth of them (on a uniprocessor kernel
 * without preemption, where a run that never yields would finish all
 * eight first).
 */
static void shca_qp_exec_yields(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_end *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	struct shca_qt_end *d = kunit_kzalloc(test, sizeof(*d), GFP_KERNEL);
	const int big = 8;
	u8 *src = vzalloc(SZ_16M), *dst = vzalloc(SZ_16M);
	struct ib_sge bsge = { .length = SZ_16M };
	struct ib_sge rsge = { .length = SZ_16M };
	struct ib_send_wr wr = { .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &bsge, .num_sge = 1 };
	struct ib_sge sge, small;
	struct ib_wc wc;
	int i, done = 0;

	KUNIT_ASSERT_NOT_NULL(test, src);
	shca_kunit_defer(test, shca_qt_vfree, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	shca_kunit_defer(test, shca_qt_vfree, dst);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, d);
	shca_qt_end_init(test, c, f->a.ibdev, IB_POLL_DIRECT);
	shca_qt_end_init(test, d, f->a.ibdev, IB_POLL_DIRECT);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_connect(test, c, d, &shca_qt_default_conn);

	bsge.addr = (u64)(uintptr_t)src;
	bsge.lkey = f->a.pd->local_dma_lkey;
	rsge.addr = (u64)(uintptr_t)dst;
	rsge.lkey = f->b.pd->local_dma_lkey;
	sge = shca_qt_sge(d, 0, 64);
	small = shca_qt_sge(c, 0, 64);
	for (i = 0; i < big; i++)
		KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, i, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(d, 100, &sge, 1), 0);
	/* a's eight SENDs go first, then c's small one. */
	for (i = 0; i < big; i++) {
		wr.wr_id = i;
		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	}
	wr.wr_id = 100;
	wr.sg_list = &small;
	KUNIT_ASSERT_EQ(test, shca_qt_post(c, &wr), 0);

	shca_qt_expect_wc(test, c->cq, 100, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	while (ib_poll_cq(f->a.cq, 1, &wc) == 1) {
		KUNIT_EXPECT_EQ(test, wc.status, IB_WC_SUCCESS);
		done++;
	}
	KUNIT_EXPECT_LT_MSG(test, done, big,
			    "all %d large SENDs completed before the small one",
			    done);
	/* They all complete, and the data is intact. */
	for (; done < big; done++)
		shca_qt_expect_wc(test, f->a.cq, done, IB_WC_SUCCESS,
				  IB_WC_SEND, NULL);
	for (i = 0; i < big; i++)
		shca_qt_expect_wc(test, f->b.cq, i, IB_WC_SUCCESS, IB_WC_RECV,
				  NULL);
}

struct shca_qt_netns {
	struct ib_device *ibdev;
	struct net *net;
};

static void shca_qt_restore_net(void *p)
{
	struct shca_qt_netns *n = p;

	write_pnet(&n->ibdev->coredev.rdma_net, n->net);
}

/*
 * Finding 5: a peer in another RDMA network namespace is not reachable,
 * whatever its number, GID and state. (The test moves b's device to a
 * namespace of its own by setting the core's field, for the length of
 * one request; nothing dereferences it meanwhile.)
 */
static void shca_qp_other_netns(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	static const struct shca_qt_conn c = {
		.timeout = 1, .retry_cnt = 1, .rnr_retry = 7,
	};
	struct shca_qt_netns *n = kunit_kzalloc(test, sizeof(*n), GFP_KERNEL);
	struct net *other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 8);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };

	KUNIT_ASSERT_NOT_NULL(test, n);
	KUNIT_ASSERT_NOT_NULL(test, other);
	shca_qt_connect(test, &f->a, &f->b, &c);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 2, &dst, 1), 0);
	shca_qt_fill(f->a.buf, 8, 4);

	n->ibdev = f->b.ibdev;
	n->net = read_pnet(&f->b.ibdev->coredev.rdma_net);
	write_pnet(&f->b.ibdev->coredev.rdma_net, other);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_qt_restore_net,
							n), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR, 0, NULL);
	kunit_release_action(test, shca_qt_restore_net, n);

	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 8, 0));
	shca_qt_expect_empty(test, f->b.cq);
}

static struct kunit_case shca_qp_review_cases[] = {
	KUNIT_CASE(shca_qp_destroy_purges_cq),
	KUNIT_CASE(shca_qp_destroy_link_outlives_readers),
	KUNIT_CASE(shca_qp_number_held),
	KUNIT_CASE(shca_qp_number_not_multicast),
	KUNIT_CASE(shca_qp_sqd_refused),
	KUNIT_CASE_SLOW(shca_qp_recv_inflight),
	KUNIT_CASE(shca_qp_error_spares_reset),
	KUNIT_CASE(shca_qp_error_spares_new_connection),
	KUNIT_CASE_PARAM(shca_qp_other_netns, shca_qt_apart_gen_params),
	KUNIT_CASE_PARAM(shca_qp_psn, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_reset_reuse, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_atomic_misaligned),
	KUNIT_CASE(shca_qp_rd_atomic_zero),
	KUNIT_CASE(shca_qp_rnr_timer),
	KUNIT_CASE(shca_qp_reg_integrity_needs_qp_flag),
	KUNIT_CASE_SLOW(shca_qp_exec_yields),
	{}
};

static struct kunit_suite shca_qp_review_suite = {
	.name = "shca_qp_review",
	.init = shca_qt_init,
	.test_cases = shca_qp_review_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_ud: UD QPs and address handles                              */

#define SHCA_QT_QKEY	0x1234567

/* A UD QP on @e's PD and CQ, in RTS with Q_Key @qkey. */
static struct ib_qp *shca_qt_ud_qp(struct kunit *test, struct shca_qt_end *e,
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

static void shca_qt_destroy_ah(void *ah)
{
	rdma_destroy_ah(ah, RDMA_DESTROY_AH_SLEEPABLE);
}

/* An address handle on @e's PD for GID 0 of @peer's device. */
static struct ib_ah *shca_qt_ah(struct kunit *test, struct shca_qt_end *e,
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

static int shca_qt_ud_recv(struct shca_qt_end *e, struct ib_qp *qp,
			   u64 wr_id, u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, 0, len);
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
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
	KUNIT_EXPECT_TRUE(test, ether_addr_equal(wc.smac, shca_qp_mac[0]));

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

/* ------------------------------------------------------------------ */
/* shca_qp_srq: shared receive queues                                  */

static void shca_qt_srq_event(struct ib_event *ev, void *ctx)
{
	atomic_t *limit_events = ctx;

	if (ev->event == IB_EVENT_SRQ_LIMIT_REACHED)
		atomic_inc(limit_events);
}

static void shca_qt_destroy_srq(void *srq)
{
	ib_destroy_srq(srq);
}

/* An SRQ on @e's PD: @max_wr WQEs of 2 SGEs; limit events count in @n. */
static struct ib_srq *shca_qt_srq(struct kunit *test, struct shca_qt_end *e,
				  u32 max_wr, atomic_t *n)
{
	struct ib_srq_init_attr init = {
		.event_handler = shca_qt_srq_event,
		.srq_context = n,
		.attr = { .max_wr = max_wr, .max_sge = 2 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq *srq = ib_create_srq(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(srq), "create_srq: %ld",
			       PTR_ERR(srq));
	shca_kunit_defer(test, shca_qt_destroy_srq, srq);
	KUNIT_EXPECT_EQ(test, init.attr.max_wr, max_wr);
	return srq;
}

/* An RC QP of @e, on @srq if not NULL, in INIT. */
static struct ib_qp *shca_qt_srq_qp(struct kunit *test, struct shca_qt_end *e,
				    struct ib_srq *srq)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_qt_event,
		.qp_context = e,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.srq = srq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_RC,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create_qp: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	if (srq)
		KUNIT_EXPECT_EQ(test, init.cap.max_recv_wr, 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_init(qp), 0);
	return qp;
}

static void shca_qt_pair(struct kunit *test, struct ib_qp *x,
			 struct ib_device *xdev, struct ib_qp *y,
			 struct ib_device *ydev)
{
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(x, ydev, y->qp_num,
					     &shca_qt_default_conn), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_to_rts(y, xdev, x->qp_num,
					     &shca_qt_default_conn), 0);
}

static int shca_qt_srq_recv(struct ib_srq *srq, struct shca_qt_end *e,
			    u64 wr_id, u32 off)
{
	struct ib_sge sge = shca_qt_sge(e, off, 256);
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_srq_recv(srq, &wr, &bad);
}

static int shca_qt_send_from(struct ib_qp *qp, struct shca_qt_end *e,
			     u64 wr_id, u32 off, u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, off, len);
	struct ib_send_wr wr = { .wr_id = wr_id, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr, &bad);
}

static bool shca_qt_wait_atomic(atomic_t *v, int want, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	while (atomic_read(v) != want && time_before(jiffies, end))
		usleep_range(500, 1000);
	return atomic_read(v) == want;
}

/*
 * Two RC QPs share one SRQ: receive WQEs are taken in posting order by
 * whichever QP a message arrives on, the completion names that QP, the
 * armed limit fires once when fewer than it are left, an empty SRQ
 * makes the requester wait (RNR) until a WQE is posted.
 */
static void shca_qp_srq_shared(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	atomic_t limit_events = ATOMIC_INIT(0);
	struct ib_srq *srq = shca_qt_srq(test, &f->b, 8, &limit_events);
	struct ib_qp *b1 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *b2 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *a1 = shca_qt_srq_qp(test, &f->a, NULL);
	struct ib_qp *a2 = shca_qt_srq_qp(test, &f->a, NULL);
	struct ib_srq_attr sattr = { .srq_limit = 2 };
	struct ib_wc wc;
	int i;

	shca_qt_pair(test, a1, f->a.ibdev, b1, f->b.ibdev);
	shca_qt_pair(test, a2, f->a.ibdev, b2, f->b.ibdev);
	shca_qt_fill(f->a.buf, 4096, 5);
	for (i = 0; i < 4; i++)
		KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 100 + i,
						       i * 256), 0);
	KUNIT_ASSERT_EQ(test, ib_modify_srq(srq, &sattr, IB_SRQ_LIMIT), 0);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 2);
	KUNIT_EXPECT_EQ(test, sattr.max_wr, 8);

	/* a1 then a2: WQEs 100 and 101, on b1 and b2; 2 left, no event. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 1, 0, 100), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 100, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b1);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a2, &f->a, 2, 1000, 200), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 101, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b2);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 200);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 100), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 256, f->a.buf + 1000, 200), 0);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&limit_events), 0);

	/* WQE 102 leaves one, below the limit: one event, limit disarmed. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 3, 0, 8), 0);
	shca_qt_expect_wc(test, f->b.cq, 102, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_atomic(&limit_events, 1, 1000));
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 0);
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a2, &f->a, 4, 0, 8), 0);
	shca_qt_expect_wc(test, f->b.cq, 103, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b2);
	msleep(20);
	KUNIT_EXPECT_EQ(test, atomic_read(&limit_events), 1);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);

	/* Empty: the send waits (RNR) until a WQE is posted. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 5, 0, 8), 0);
	shca_qt_expect_empty(test, f->b.cq);
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 104, 0), 0);
	shca_qt_expect_wc(test, f->b.cq, 104, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, b1);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);
}

/* What an SRQ refuses, each with its errno, changing nothing. */
static void shca_qp_srq_refuse(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	atomic_t n = ATOMIC_INIT(0);
	struct ib_srq *srq = shca_qt_srq(test, &f->b, 4, &n);
	struct ib_qp *b1 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_srq_init_attr bad = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq_attr sattr = { .max_wr = 16, .srq_limit = 5 };
	struct ib_sge sge[3] = {};
	struct ib_recv_wr wr = { .wr_id = 1, .sg_list = sge, .num_sge = 3 };
	const struct ib_recv_wr *badwr;
	struct ib_srq *s;
	int i;

	/* No WQEs, too many, too many SGEs, a limit above max_wr, XRC. */
	bad.attr.max_wr = 0;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.max_wr = SHCA_MAX_SRQ_WR + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.max_wr = 4;
	bad.attr.max_sge = SHCA_MAX_SRQ_SGE + 1;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.max_sge = 1;
	bad.attr.srq_limit = 5;
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_create_srq(f->b.pd, &bad)), -EINVAL);
	bad.attr.srq_limit = 0;
	s = ib_create_srq(f->b.pd, &bad);
	KUNIT_ASSERT_FALSE(test, IS_ERR(s));
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(s, NULL), 0);

	/* Resizing is not offered; a limit above max_wr is refused. */
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &sattr, IB_SRQ_MAX_WR),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, ib_modify_srq(srq, &sattr, IB_SRQ_LIMIT),
			-EINVAL);
	/* Too many SGEs; a full SRQ; a QP on an SRQ has no receive queue. */
	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &badwr), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, badwr, (const struct ib_recv_wr *)&wr);
	wr.num_sge = 1;
	for (i = 0; i < 4; i++)
		KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &badwr), 0);
	KUNIT_EXPECT_EQ(test, ib_post_srq_recv(srq, &wr, &badwr), -ENOMEM);
	KUNIT_EXPECT_EQ(test, ib_post_recv(b1, &wr, &badwr), -EINVAL);
	/* In use by a QP: the core refuses to destroy it. */
	KUNIT_EXPECT_EQ(test, ib_destroy_srq_user(srq, NULL), -EBUSY);
	KUNIT_ASSERT_EQ(test, ib_query_srq(srq, &sattr), 0);
	KUNIT_EXPECT_EQ(test, sattr.max_wr, 4);
	KUNIT_EXPECT_EQ(test, sattr.srq_limit, 0);
}

/*
 * ib_drain_qp() of a QP on an SRQ: the QP goes to the error state and
 * reports Last WQE Reached at once (the core waits up to a minute for
 * it); the SRQ's WQEs stay for the other QPs.
 */
static void shca_qp_srq_drain(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	atomic_t n = ATOMIC_INIT(0);
	struct ib_srq *srq = shca_qt_srq(test, &f->b, 4, &n);
	struct ib_qp *b1 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *b2 = shca_qt_srq_qp(test, &f->b, srq);
	struct ib_qp *a1 = shca_qt_srq_qp(test, &f->a, NULL);
	struct ib_qp *a2 = shca_qt_srq_qp(test, &f->a, NULL);
	unsigned long t0;

	shca_qt_pair(test, a1, f->a.ibdev, b1, f->b.ibdev);
	shca_qt_pair(test, a2, f->a.ibdev, b2, f->b.ibdev);
	KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 200, 0), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_srq_recv(srq, &f->b, 201, 256), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a1, &f->a, 1, 0, 64), 0);
	shca_qt_expect_wc(test, f->b.cq, 200, IB_WC_SUCCESS, IB_WC_RECV, NULL);

	t0 = jiffies;
	ib_drain_qp(b1);
	KUNIT_EXPECT_LT(test, jiffies_to_msecs(jiffies - t0), 5000);
	KUNIT_EXPECT_EQ(test, f->b.events, 1);
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_LAST_WQE_REACHED);
	KUNIT_EXPECT_EQ(test, shca_qt_state(b1), IB_QPS_ERR);

	/* WQE 201 was not flushed: b2 takes it. */
	KUNIT_ASSERT_EQ(test, shca_qt_send_from(a2, &f->a, 2, 0, 64), 0);
	shca_qt_expect_wc(test, f->b.cq, 201, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	ib_drain_qp(b2);
	KUNIT_EXPECT_EQ(test, f->b.events, 2);
}

static struct kunit_case shca_qp_srq_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_srq_shared, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_srq_refuse),
	KUNIT_CASE_PARAM(shca_qp_srq_drain, shca_qt_where_gen_params),
	{}
};

static struct kunit_suite shca_qp_srq_suite = {
	.name = "shca_qp_srq",
	.init = shca_qt_init,
	.test_cases = shca_qp_srq_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_uc: unreliable connected QPs                                */

/* A UC QP of @e in INIT, taking RDMA WRITEs. */
static struct ib_qp *shca_qt_uc_qp(struct kunit *test, struct shca_qt_end *e)
{
	struct ib_qp_init_attr init = {
		.event_handler = shca_qt_event,
		.qp_context = e,
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = { .max_send_wr = 8, .max_recv_wr = 8,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.sq_sig_type = IB_SIGNAL_ALL_WR,
		.qp_type = IB_QPT_UC,
	};
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT, .port_num = 1,
		.qp_access_flags = IB_ACCESS_REMOTE_WRITE,
	};
	struct ib_qp *qp = ib_create_qp(e->pd, &init);

	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(qp), "create UC QP: %ld",
			       PTR_ERR(qp));
	shca_kunit_defer(test, shca_kunit_destroy_qp, qp);
	KUNIT_ASSERT_EQ(test, ib_modify_qp(qp, &attr, IB_QP_STATE |
					   IB_QP_PKEY_INDEX | IB_QP_PORT |
					   IB_QP_ACCESS_FLAGS), 0);
	return qp;
}

static int shca_qt_uc_rts(struct ib_qp *qp, struct ib_device *peer_dev,
			  u32 dest_qpn, u32 rq_psn, u32 sq_psn)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_RTR, .path_mtu = IB_MTU_1024,
		.dest_qp_num = dest_qpn, .rq_psn = rq_psn,
		.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE,
	};
	union ib_gid dgid;
	int err;

	err = rdma_query_gid(peer_dev, 1, 0, &dgid);
	if (err)
		return err;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, &dgid, 0, 0, 64, 0);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN);
	if (err)
		return err;
	attr.qp_state = IB_QPS_RTS;
	attr.sq_psn = sq_psn;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_SQ_PSN);
}

static int shca_qt_uc_recv(struct ib_qp *qp, struct shca_qt_end *e,
			   u64 wr_id, u32 off, u32 len)
{
	struct ib_sge sge = shca_qt_sge(e, off, len);
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				 .num_sge = 1 };
	const struct ib_recv_wr *bad;

	return ib_post_recv(qp, &wr, &bad);
}

static int shca_qt_uc_post(struct ib_qp *qp, struct shca_qt_end *e,
			   enum ib_wr_opcode op, u64 wr_id, u32 len,
			   u64 raddr, u32 rkey)
{
	struct ib_sge sge = shca_qt_sge(e, 0, len);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .ex.imm_data = cpu_to_be32(0xc0de) },
		.remote_addr = raddr,
		.rkey = rkey,
	};
	const struct ib_send_wr *bad;

	return ib_post_send(qp, &wr.wr, &bad);
}

/*
 * UC: SENDs and RDMA WRITEs (with immediate) arrive as on RC; without
 * acknowledgements, what the responder cannot take (no receive WQE, a
 * bad R_Key, PSNs out of sequence) is lost and the request still
 * completes successfully; READs and atomics are refused at post time; a
 * SEND longer than the receive buffer is the responder's own error.
 */
static void shca_qp_uc(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_uc_qp(test, &f->a);
	struct ib_qp *ub = shca_qt_uc_qp(test, &f->b);
	u64 raddr;
	u32 rkey;
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qt_uc_rts(ua, f->b.ibdev, ub->qp_num, 0,
					     100), 0);
	/* The responder expects PSN 7: UC resynchronises on the first. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_rts(ub, f->a.ibdev, ua->qp_num, 7,
					     0), 0);
	/* b's MR, registered through its RC QP (keys belong to the PD). */
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	raddr = f->b.mr->iova;
	shca_qt_fill(f->a.buf, 4096, 9);

	/* SEND. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_recv(ub, &f->b, 10, 0, 512), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND, 1, 300,
					      0, 0), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 10, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 300);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 300), 0);

	/* RDMA WRITE, then WRITE with immediate. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_RDMA_WRITE, 2,
					      2000, raddr + 4096, rkey), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 4096, f->a.buf, 2000), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_recv(ub, &f->b, 11, 0, 8), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a,
					      IB_WR_RDMA_WRITE_WITH_IMM, 3, 16,
					      raddr + 8192, rkey), 0);
	shca_qt_expect_wc(test, f->a.cq, 3, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 11, IB_WC_SUCCESS,
			  IB_WC_RECV_RDMA_WITH_IMM, &wc);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xc0de);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 8192, f->a.buf, 16), 0);

	/* Lost, but complete at the sender: no receive WQE, a bad R_Key. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND, 4, 8,
					      0, 0), 0);
	shca_qt_expect_wc(test, f->a.cq, 4, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	memset(f->b.buf + 12288, 0, 64);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_RDMA_WRITE, 5,
					      64, raddr + 12288, rkey + 1), 0);
	shca_qt_expect_wc(test, f->a.cq, 5, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 12288, 64, 0));
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_RTS);
	KUNIT_EXPECT_EQ(test, f->b.events, 0);

	/* READ and atomics do not exist on UC. */
	KUNIT_EXPECT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_RDMA_READ, 6, 8,
					      raddr, rkey), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND_WITH_INV,
					      6, 8, 0, 0), -EINVAL);

	/* Too long for the receive buffer: the responder's local error. */
	KUNIT_ASSERT_EQ(test, shca_qt_uc_recv(ub, &f->b, 12, 0, 16), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_uc_post(ua, &f->a, IB_WR_SEND, 7, 100,
					      0, 0), 0);
	shca_qt_expect_wc(test, f->a.cq, 7, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 12, IB_WC_LOC_LEN_ERR, 0, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ub), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(ua), IB_QPS_RTS);
}

static struct kunit_case shca_qp_uc_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_uc, shca_qt_where_gen_params),
	{}
};

static struct kunit_suite shca_qp_uc_suite = {
	.name = "shca_qp_uc",
	.init = shca_qt_init,
	.test_cases = shca_qp_uc_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_drain, shca_qp_stress                                       */

/* The CQ polling contexts of ib_alloc_cq(), each with its name. */
static const enum ib_poll_context shca_qt_pollctx[] = {
	IB_POLL_DIRECT, IB_POLL_SOFTIRQ, IB_POLL_WORKQUEUE,
	IB_POLL_UNBOUND_WORKQUEUE,
};

static void shca_qt_pollctx_desc(const enum ib_poll_context *ctx, char *desc)
{
	static const char * const names[] = {
		[IB_POLL_DIRECT] = "IB_POLL_DIRECT",
		[IB_POLL_SOFTIRQ] = "IB_POLL_SOFTIRQ",
		[IB_POLL_WORKQUEUE] = "IB_POLL_WORKQUEUE",
		[IB_POLL_UNBOUND_WORKQUEUE] = "IB_POLL_UNBOUND_WORKQUEUE",
	};

	strscpy(desc, names[*ctx], KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_qt_pollctx, shca_qt_pollctx, shca_qt_pollctx_desc);

/* Fixture of shca_qp_drain: two devices, CQs of the context param. */
static int shca_qt_init_wq(struct kunit *test)
{
	const enum ib_poll_context *ctx = test->param_value;

	return shca_qt_init_common(test, 1, false,
				   ctx ? *ctx : IB_POLL_WORKQUEUE);
}

struct shca_qt_count {
	struct ib_cqe cqe;
	atomic_t done;
	atomic_t ok;
};

static void shca_qt_count_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct shca_qt_count *c = container_of(wc->wr_cqe,
					       struct shca_qt_count, cqe);

	if (wc->status == IB_WC_SUCCESS)
		atomic_inc(&c->ok);
	atomic_inc(&c->done);
}

/*
 * ib_drain_qp() of a busy pair returns once everything posted has
 * completed, successfully or flushed; every successful SEND consumed
 * exactly one receive. With CQs of every polling context a ULP uses.
 */
static void shca_qp_drain_busy(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 8);
	struct shca_qt_count *sends, *recvs;
	const struct ib_recv_wr *rbad;
	int i;

	sends = kunit_kzalloc(test, sizeof(*sends), GFP_KERNEL);
	recvs = kunit_kzalloc(test, sizeof(*recvs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sends);
	KUNIT_ASSERT_NOT_NULL(test, recvs);
	sends->cqe.done = shca_qt_count_done;
	recvs->cqe.done = shca_qt_count_done;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	for (i = 0; i < 16; i++) {
		struct ib_recv_wr wr = { .wr_cqe = &recvs->cqe,
					 .sg_list = &dst, .num_sge = 1 };

		KUNIT_ASSERT_EQ(test, ib_post_recv(f->b.qp, &wr, &rbad), 0);
	}
	for (i = 0; i < 16; i++) {
		struct ib_send_wr wr = { .wr_cqe = &sends->cqe,
					 .opcode = IB_WR_SEND,
					 .send_flags = IB_SEND_SIGNALED,
					 .sg_list = &sge, .num_sge = 1 };

		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	}
	ib_drain_qp(f->a.qp);
	ib_drain_qp(f->b.qp);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, atomic_read(&sends->done), 16);
	KUNIT_EXPECT_EQ(test, atomic_read(&recvs->done), 16);
	KUNIT_EXPECT_EQ(test, atomic_read(&sends->ok),
			atomic_read(&recvs->ok));
	kunit_info(test, "drained: %d of 16 SENDs had completed",
		   atomic_read(&sends->ok));
}

struct shca_qt_stress {
	struct shca_qt_fix *f;
	struct ib_cq *cq;	/* a's completions, polled by the poster */
	atomic_t stop;
	u32 rkey;		/* current rkey of b's MR, or 0 */
	spinlock_t lock;	/* protects rkey */
	u64 posted, ok, access_err, flushed, other, rereg, resets;
};

/* Post RDMA WRITEs on b's current key; reconnect after errors. */
static int shca_qt_stress_poster(void *arg)
{
	struct shca_qt_stress *s = arg;
	struct shca_qt_fix *f = s->f;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 4096);
	u64 outstanding = 0;
	bool broken = false;
	struct ib_wc wc;

	while (!atomic_read(&s->stop) || outstanding) {
		struct ib_rdma_wr wr = {
			.wr = { .opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED,
				.sg_list = &sge, .num_sge = 1 },
		};
		if (!broken && !atomic_read(&s->stop) && outstanding < 16) {
			spin_lock(&s->lock);
			wr.rkey = s->rkey;
			spin_unlock(&s->lock);
			wr.remote_addr = f->b.mr->iova +
					 (s->posted % 8) * 4096;
			if (!shca_qt_post(&f->a, &wr.wr)) {
				s->posted++;
				outstanding++;
			}
		}
		while (ib_poll_cq(f->a.cq, 1, &wc) == 1) {
			outstanding--;
			if (wc.status == IB_WC_SUCCESS)
				s->ok++;
			else if (wc.status == IB_WC_REM_ACCESS_ERR)
				s->access_err++;
			else if (wc.status == IB_WC_WR_FLUSH_ERR)
				s->flushed++;
			else
				s->other++;
			broken |= wc.status != IB_WC_SUCCESS;
		}
		if (broken && !outstanding) {
			struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

			/* Reconnect both ends from RESET. */
			ib_modify_qp(f->a.qp, &attr, IB_QP_STATE);
			ib_modify_qp(f->b.qp, &attr, IB_QP_STATE);
			if (shca_qt_to_init(f->a.qp) ||
			    shca_qt_to_init(f->b.qp) ||
			    shca_qt_to_rts(f->a.qp, f->b.ibdev,
					   f->b.qp->qp_num,
					   &shca_qt_default_conn) ||
			    shca_qt_to_rts(f->b.qp, f->a.ibdev,
					   f->a.qp->qp_num,
					   &shca_qt_default_conn))
				s->other++;
			s->resets++;
			broken = false;
		}
		cond_resched();
	}
	return 0;
}

/*
 * Posters write through b's key while b's owner keeps invalidating and
 * re-registering it (through the engine, as its own REG_MR/LOCAL_INV
 * would): every WRITE completes exactly once, as success, REM_ACCESS_ERR
 * or a flush, and the counts add up. KASAN and lockdep watch in the
 * sanitizer tier.
 */
static void shca_qp_stress_rereg(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_dev *sdev = to_shca_dev(f->b.ibdev);
	struct shca_qt_stress *s;
	struct task_struct *t;
	unsigned long end;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->f = f;
	spin_lock_init(&s->lock);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	s->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);

	t = kthread_run(shca_qt_stress_poster, s, "shca_qt_poster");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);

	end = jiffies + 2 * HZ;
	while (time_before(jiffies, end)) {
		u32 key;

		spin_lock(&s->lock);
		key = s->rkey;
		spin_unlock(&s->lock);
		KUNIT_EXPECT_EQ(test, shca_mr_invalidate(sdev, f->b.pd, 0, key),
				0);
		ib_update_fast_reg_key(f->b.mr, ib_inc_rkey(f->b.mr->rkey));
		KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(f->b.mr),
						       f->b.mr->rkey,
						       SHCA_QT_RW), 0);
		spin_lock(&s->lock);
		s->rkey = f->b.mr->rkey;
		spin_unlock(&s->lock);
		s->rereg++;
		usleep_range(100, 300);
	}
	atomic_set(&s->stop, 1);
	kthread_stop(t);
	put_task_struct(t);

	kunit_info(test,
		   "2 s: %llu re-registrations, %llu WRITEs posted: %llu ok, %llu REM_ACCESS_ERR, %llu flushed, %llu reconnects",
		   s->rereg, s->posted, s->ok, s->access_err, s->flushed,
		   s->resets);
	KUNIT_EXPECT_EQ(test, s->other, 0);
	KUNIT_EXPECT_EQ(test, s->posted,
			s->ok + s->access_err + s->flushed);
	KUNIT_EXPECT_GT(test, s->ok, 0);
	KUNIT_EXPECT_GT(test, s->rereg, 0);
}

static struct kunit_case shca_qp_drain_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_drain_busy, shca_qt_pollctx_gen_params),
	{}
};

static struct kunit_suite shca_qp_drain_suite = {
	.name = "shca_qp_drain",
	.init = shca_qt_init_wq,
	.test_cases = shca_qp_drain_cases,
};

static struct kunit_case shca_qp_stress_cases[] = {
	KUNIT_CASE_SLOW(shca_qp_stress_rereg),
	{}
};

static struct kunit_suite shca_qp_stress_suite = {
	.name = "shca_qp_stress",
	.init = shca_qt_init_two,
	.test_cases = shca_qp_stress_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_pi                                                          */

#define SHCA_PI_NBLK	8
#define SHCA_PI_IVL	512
#define SHCA_PI_STEP	(SHCA_PI_IVL + 8)
#define SHCA_PI_WLEN	(SHCA_PI_NBLK * SHCA_PI_STEP)

/* An integrity MR over data and metadata in kernel memory. */
struct shca_qt_pi {
	struct ib_mr *mr;
	u8 *data;
	u8 *meta;
	struct scatterlist sg[2];
};

/* Replace @e's QP by an integrity-enabled one (nvme-rdma's I/O queues). */
static void shca_qt_pi_qp(struct kunit *test, struct shca_qt_end *e)
{
	e->qp = shca_qt_qp_flags(test, e, SHCA_QT_WR, 4, 0,
				 IB_QP_CREATE_INTEGRITY_EN);
	KUNIT_ASSERT_TRUE(test, e->qp->integrity_en);
}

/* Random data and, by crc_t10dif(), the tuples of @ref_tag's blocks. */
static void shca_qt_pi_fill(struct shca_qt_pi *p, u32 ref_tag)
{
	u32 b;

	get_random_bytes(p->data, SHCA_PI_NBLK * SHCA_PI_IVL);
	for (b = 0; b < SHCA_PI_NBLK; b++) {
		u8 *t = p->meta + b * 8;

		put_unaligned_be16(crc_t10dif(p->data + b * SHCA_PI_IVL,
					      SHCA_PI_IVL), t);
		put_unaligned_be16(0x1234, t + 2);
		put_unaligned_be32(ref_tag + b, t + 4);
	}
}

/* Post IB_WR_REG_MR_INTEGRITY for @p on @e's QP under a new key byte. */
static int shca_qt_pi_post_reg(struct shca_qt_end *e, struct shca_qt_pi *p,
			       int access, u64 wr_id)
{
	struct ib_reg_wr wr = {
		.wr = { .wr_id = wr_id, .opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.mr = p->mr,
		.access = access,
	};

	ib_update_fast_reg_key(p->mr, ib_inc_rkey(p->mr->rkey));
	wr.key = p->mr->rkey;
	return shca_qt_post(e, &wr.wr);
}

/*
 * Map and register an integrity MR on @e: T10-DIF CRC in memory and on
 * the wire, 512-byte blocks, ref tags from @ref_tag, everything checked
 * (nvmet-rdma's choice).
 */
static void shca_qt_pi_mr(struct kunit *test, struct shca_qt_end *e,
			  struct shca_qt_pi *p, u32 ref_tag)
{
	struct ib_sig_attrs *a;

	p->data = kunit_kzalloc(test, SHCA_PI_NBLK * SHCA_PI_IVL, GFP_KERNEL);
	p->meta = kunit_kzalloc(test, SHCA_PI_NBLK * 8, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->data);
	KUNIT_ASSERT_NOT_NULL(test, p->meta);
	shca_qt_pi_fill(p, ref_tag);
	sg_init_one(&p->sg[0], p->data, SHCA_PI_NBLK * SHCA_PI_IVL);
	sg_init_one(&p->sg[1], p->meta, SHCA_PI_NBLK * 8);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(e->ibdev, &p->sg[0], 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(e->ibdev, &p->sg[1], 1,
					    DMA_BIDIRECTIONAL), 1);
	p->mr = ib_alloc_mr_integrity(e->pd, 1, 1);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, p->mr);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(p->mr, &p->sg[0], 1, NULL,
					      &p->sg[1], 1, NULL, SZ_4K), 0);

	a = p->mr->sig_attrs;
	memset(a, 0, sizeof(*a));
	a->check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_REFTAG |
			IB_SIG_CHECK_APPTAG;
	a->mem.sig_type = IB_SIG_TYPE_T10_DIF;
	a->mem.sig.dif.bg_type = IB_T10DIF_CRC;
	a->mem.sig.dif.pi_interval = SHCA_PI_IVL;
	a->mem.sig.dif.ref_tag = ref_tag;
	a->mem.sig.dif.ref_remap = true;
	a->mem.sig.dif.app_tag = 0x1234;
	a->mem.sig.dif.apptag_check_mask = 0xffff;
	a->wire = a->mem;

	KUNIT_ASSERT_EQ(test, shca_qt_pi_post_reg(e, p, SHCA_QT_RW &
						  ~IB_ACCESS_REMOTE_ATOMIC,
						  0x9e9), 0);
	shca_qt_expect_wc(test, e->cq, 0x9e9, IB_WC_SUCCESS, IB_WC_REG_MR,
			  NULL);
}

/* Read the status once; return fail_status, the error in @err. */
static u32 shca_qt_pi_status(struct kunit *test, struct shca_qt_pi *p,
			     struct ib_sig_err *err)
{
	struct ib_mr_status st;

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(p->mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	*err = st.sig_err;
	return st.fail_status;
}

/* LOCAL_INV and a new registration, as a ULP recycles its MR. */
static void shca_qt_pi_recycle(struct kunit *test, struct shca_qt_end *e,
			       struct shca_qt_pi *p)
{
	struct ib_send_wr inv = {
		.wr_id = 0x1ee, .opcode = IB_WR_LOCAL_INV,
		.send_flags = IB_SEND_SIGNALED,
		.ex.invalidate_rkey = p->mr->rkey,
	};

	KUNIT_ASSERT_EQ(test, shca_qt_post(e, &inv), 0);
	shca_qt_expect_wc(test, e->cq, 0x1ee, IB_WC_SUCCESS, IB_WC_LOCAL_INV,
			  NULL);
	KUNIT_ASSERT_EQ(test, shca_qt_pi_post_reg(e, p, SHCA_QT_RW &
						  ~IB_ACCESS_REMOTE_ATOMIC,
						  0x9e9), 0);
	shca_qt_expect_wc(test, e->cq, 0x9e9, IB_WC_SUCCESS, IB_WC_REG_MR,
			  NULL);
}

/* The target (b) READs the host's (a) wire view into its own MR, or WRITEs. */
static void shca_qt_pi_rdma(struct kunit *test, struct shca_qt_fix *f,
			    struct shca_qt_pi *host, struct shca_qt_pi *tgt,
			    enum ib_wr_opcode op)
{
	struct ib_sge sge = { .addr = 0, .length = SHCA_PI_WLEN,
			      .lkey = tgt->mr->lkey };
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 0x7d, .opcode = op, .sg_list = &sge,
			.num_sge = 1, .send_flags = IB_SEND_SIGNALED },
		.remote_addr = 0,
		.rkey = host->mr->rkey,
	};

	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->b, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 0x7d, IB_WC_SUCCESS,
			  op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
						  IB_WC_RDMA_WRITE, NULL);
}

/*
 * Pass: nvme-rdma's and nvmet-rdma's use of integrity MRs, between
 * integrity-enabled QPs: the target READs the host's data and tuples
 * (a write I/O) and WRITEs them back (a read I/O), byte-exact; a damaged
 * tuple is caught by the engine of each MR it passes (the source checks
 * its memory, the destination the wire) and is latched before the
 * completion the ULP checks the status from; the next I/O, after
 * LOCAL_INV and re-registration, is clean.
 */
static void shca_qp_pi_nvme(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_pi host, tgt;
	struct ib_sig_err err;
	u16 guard;

	shca_qt_pi_qp(test, &f->a);
	shca_qt_pi_qp(test, &f->b);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_pi_mr(test, &f->a, &host, 100);
	shca_qt_pi_mr(test, &f->b, &tgt, 100);
	memset(tgt.data, 0, SHCA_PI_NBLK * SHCA_PI_IVL);
	memset(tgt.meta, 0, SHCA_PI_NBLK * 8);

	/* Write I/O: the target pulls data and PI. */
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_READ);
	KUNIT_EXPECT_MEMEQ(test, tgt.data, host.data,
			   SHCA_PI_NBLK * SHCA_PI_IVL);
	KUNIT_EXPECT_MEMEQ(test, tgt.meta, host.meta, SHCA_PI_NBLK * 8);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err), 0);

	/* A flipped guard bit in the host's PI buffer. */
	shca_qt_pi_recycle(test, &f->a, &host);
	shca_qt_pi_recycle(test, &f->b, &tgt);
	guard = get_unaligned_be16(host.meta + 6 * 8);
	host.meta[6 * 8] ^= 0x04;
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_READ);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, err.expected, guard);
	KUNIT_EXPECT_EQ(test, err.actual, guard ^ 0x0400);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 6 * SHCA_PI_STEP);
	KUNIT_EXPECT_EQ(test, err.key, tgt.mr->rkey);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, err.key, host.mr->rkey);
	host.meta[6 * 8] ^= 0x04;

	/* Read I/O: the target pushes, with a wrong ref tag in block 2. */
	shca_qt_pi_recycle(test, &f->a, &host);
	shca_qt_pi_recycle(test, &f->b, &tgt);
	shca_qt_pi_fill(&tgt, 100);
	put_unaligned_be32(7, tgt.meta + 2 * 8 + 4);
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_WRITE);
	KUNIT_EXPECT_MEMEQ(test, host.data, tgt.data,
			   SHCA_PI_NBLK * SHCA_PI_IVL);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_REFTAG);
	KUNIT_EXPECT_EQ(test, err.expected, 102);
	KUNIT_EXPECT_EQ(test, err.actual, 7);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 2 * SHCA_PI_STEP);
	KUNIT_EXPECT_EQ(test, err.key, host.mr->rkey);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err),
			IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_REFTAG);

	/* The next I/O is clean. */
	shca_qt_pi_recycle(test, &f->a, &host);
	shca_qt_pi_recycle(test, &f->b, &tgt);
	shca_qt_pi_fill(&tgt, 100);
	shca_qt_pi_rdma(test, f, &host, &tgt, IB_WR_RDMA_WRITE);
	KUNIT_EXPECT_MEMEQ(test, host.meta, tgt.meta, SHCA_PI_NBLK * 8);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &host, &err), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &tgt, &err), 0);
}

/*
 * Pass: SEND from an integrity MR into a receive buffer that is one:
 * the wire stream (data with PI) is what the SEND carries, and the
 * receiver's engine strips it back into data and metadata.
 */
static void shca_qp_pi_send(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qt_pi src, dst;
	struct ib_sge s, r;
	struct ib_send_wr wr = { .wr_id = 0x5e, .opcode = IB_WR_SEND,
				 .sg_list = &s, .num_sge = 1,
				 .send_flags = IB_SEND_SIGNALED };
	struct ib_sig_err err;
	struct ib_wc wc;

	shca_qt_pi_qp(test, &f->a);
	shca_qt_pi_qp(test, &f->b);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_pi_mr(test, &f->a, &src, 5);
	shca_qt_pi_mr(test, &f->b, &dst, 5);
	memset(dst.data, 0, SHCA_PI_NBLK * SHCA_PI_IVL);
	memset(dst.meta, 0, SHCA_PI_NBLK * 8);

	r = (struct ib_sge){ .addr = 0, .length = SHCA_PI_WLEN,
			     .lkey = dst.mr->lkey };
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 0x4ec, &r, 1), 0);
	s = (struct ib_sge){ .addr = 0, .length = SHCA_PI_WLEN,
			     .lkey = src.mr->lkey };
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 0x5e, IB_WC_SUCCESS, IB_WC_SEND,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 0x4ec, IB_WC_SUCCESS, IB_WC_RECV,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, SHCA_PI_WLEN);
	KUNIT_EXPECT_MEMEQ(test, dst.data, src.data,
			   SHCA_PI_NBLK * SHCA_PI_IVL);
	KUNIT_EXPECT_MEMEQ(test, dst.meta, src.meta, SHCA_PI_NBLK * 8);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &src, &err), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &dst, &err), 0);
}

/*
 * Pass: IB_WR_REG_MR_INTEGRITY is refused when posted (-EINVAL, the QP
 * untouched), as on mlx5: with SGEs, with remote atomic access, on an MR
 * that is not an integrity MR, with attributes the engine cannot run,
 * and before the status of the previous registration was read.
 */
static void shca_qp_pi_post_refused(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_reg_wr wr = {
		.wr = { .wr_id = 1, .opcode = IB_WR_REG_MR_INTEGRITY,
			.send_flags = IB_SEND_SIGNALED },
		.access = IB_ACCESS_LOCAL_WRITE,
	};
	struct shca_qt_pi p;
	struct ib_sig_err err;

	shca_qt_pi_qp(test, &f->a);
	shca_qt_pi_qp(test, &f->b);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	shca_qt_pi_mr(test, &f->a, &p, 0);

	/* Registered and not checked since: refused. */
	KUNIT_EXPECT_EQ(test, shca_qt_pi_post_reg(&f->a, &p,
						  IB_ACCESS_LOCAL_WRITE, 1),
			-EINVAL);
	/* The key in force is still the registered one. */
	ib_update_fast_reg_key(p.mr, (u8)(p.mr->rkey - 1));
	KUNIT_EXPECT_EQ(test, shca_qt_pi_status(test, &p, &err), 0);

	wr.mr = p.mr;
	wr.key = p.mr->rkey;
	wr.wr.sg_list = &sge;
	wr.wr.num_sge = 1;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	wr.wr.num_sge = 0;
	wr.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	wr.access = IB_ACCESS_LOCAL_WRITE;
	p.mr->sig_attrs->wire.sig.dif.pi_interval = 520;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
	p.mr->sig_attrs->wire.sig.dif.pi_interval = SHCA_PI_IVL;
	wr.mr = f->a.mr;
	wr.key = f->a.mr->rkey;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);

	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);
	shca_qt_expect_empty(test, f->a.cq);
	/* Status read: the recycle (LOCAL_INV + registration) goes through. */
	shca_qt_pi_recycle(test, &f->a, &p);
}

static struct kunit_case shca_qp_pi_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_pi_nvme, shca_qt_where_gen_params),
	KUNIT_CASE(shca_qp_pi_send),
	KUNIT_CASE(shca_qp_pi_post_refused),
	{}
};

static struct kunit_suite shca_qp_pi_suite = {
	.name = "shca_qp_pi",
	.init = shca_qt_init,
	.test_cases = shca_qp_pi_cases,
};

/* ------------------------------------------------------------------ */
/* shca_qp_ring: mapped work queues (what a process writes is hostile)  */

/* Write receive slot @idx of @qp's ring: @n SGEs of @sge. */
static void shca_qt_rwqe(struct shca_qp *qp, u32 idx, u64 wr_id,
			 const struct ib_sge *sge, u32 n)
{
	struct softhca_rwqe *s = (void *)qp->urq.ring + SOFTHCA_WQ_RING_HDR +
				 (idx & qp->rq.mask) * qp->urq.slot_size;
	u32 i;

	s->wr_id = wr_id;
	s->num_sge = n;
	for (i = 0; i < n && i < qp->rq.max_sge; i++) {
		s->sge[i].addr = sge[i].addr;
		s->sge[i].length = sge[i].length;
		s->sge[i].lkey = sge[i].lkey;
	}
}

static void shca_qt_rq_produce(struct shca_qp *qp, u32 producer)
{
	/* As a process does: the slots before the producer. */
	smp_store_release(&qp->urq.ring->producer, producer);
}

/* The consumer a ring publishes, as a process reads it. */
static u32 shca_qt_ring_cons(const struct shca_uring *u)
{
	/* Pairs with the kernel's release store. */
	return smp_load_acquire(&u->ring->consumer);
}

/*
 * Receives through a receive ring: taken without post_recv, consumer
 * published; a sender finding it empty asks for a doorbell, and the
 * doorbell ends the RNR wait; post_recv is refused on such a QP.
 */
static void shca_qp_ring_recv(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 100);
	struct ib_sge dst = shca_qt_sge(&f->b, 4096, 200);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };
	struct ib_wc wc;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(b, false), 0);
	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 5);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_EXPECT_EQ(test, shca_qt_post_recv(&f->b, 9, &dst, 1), -EINVAL);

	shca_qt_rwqe(b, 0, 41, &dst, 1);
	shca_qt_rq_produce(b, 1);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 41, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 100);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 4096, f->a.buf, 100), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->urq.ring->doorbell), 0);

	/* Nothing posted: the sender waits out RNR and asks for a doorbell. */
	wr.wr_id = 2;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	KUNIT_EXPECT_FALSE(test, shca_qt_poll(f->a.cq, &wc, 20));
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->urq.ring->doorbell), 1);
	shca_qt_rwqe(b, 1, 42, &dst, 1);
	shca_qt_rq_produce(b, 2);
	KUNIT_EXPECT_EQ(test, shca_qp_rq_doorbell(b), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(b->urq.ring->doorbell), 0);
	shca_qt_expect_wc(test, f->a.cq, 2, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 42, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 2);

	/* No ring: no doorbell. */
	KUNIT_EXPECT_EQ(test, shca_qp_rq_doorbell(to_shca_qp(f->a.qp)),
			-EINVAL);
}

/*
 * Issue 29, finding 13: one import takes at most 32 receive slots under
 * the QP's lock (it runs with interrupts off, maybe in another poster's
 * context); the rest are taken as the queue runs empty, none lost, in
 * order. Before the fix a doorbell copied every slot (up to 16K slots of
 * 32 SGEs) in one go.
 */
static void shca_qp_ring_import_bounded(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_qp_attr err = { .qp_state = IB_QPS_ERR };
	u32 i;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(b, false), 0);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	for (i = 0; i < SHCA_QT_WR; i++)
		shca_qt_rwqe(b, i, 100 + i, &dst, 1);
	shca_qt_rq_produce(b, SHCA_QT_WR);
	KUNIT_ASSERT_EQ(test, shca_qp_rq_doorbell(b), 0);
	KUNIT_EXPECT_EQ(test, b->rq.tail - b->rq.head, 32U);

	KUNIT_ASSERT_EQ(test, ib_modify_qp(f->b.qp, &err, IB_QP_STATE), 0);
	for (i = 0; i < SHCA_QT_WR; i++)
		shca_qt_expect_wc(test, f->b.cq, 100 + i, IB_WC_WR_FLUSH_ERR,
				  IB_WC_RECV, NULL);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), SHCA_QT_WR);
}

/* How a receive ring is corrupted; each costs the QP, nothing else. */
struct shca_qt_ring_bad {
	const char *name;
	u32 producer;		/* after one good request at slot 0 ... */
	u32 bad_sge;		/* ... num_sge of slot 1, if @producer > 1 */
	int good;		/* requests flushed (imported before the bad) */
	bool by_sender;		/* slot 0 imported first; a SEND finds it */
};

static const struct shca_qt_ring_bad shca_qt_ring_bads[] = {
	{ "producer past max_wr", SHCA_QT_WR + 1, 0, 0 },
	{ "producer far ahead", 0x80000000, 0, 0 },
	{ "producer behind", 0xffffffff, 0, 0 },
	{ "too many SGEs", 2, 5, 1 },
	{ "SGE count wraps", 2, 0xffffffff, 1 },
	{ "found by a SEND, far ahead", 0x80000000, 0, 1, true },
	{ "found by a SEND, too many SGEs", 2, 5, 1, true },
};

static void shca_qt_ring_bad_desc(const struct shca_qt_ring_bad *b,
				  char *desc)
{
	strscpy(desc, b->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_qt_ring_bad, shca_qt_ring_bads, shca_qt_ring_bad_desc);

/*
 * A corrupt receive ring: the QP goes to the error state with
 * IB_EVENT_QP_FATAL, the requests before the bad one are flushed, no byte
 * lands, the ring is not read again until RESET, and after RESET it
 * works from the producer the process left.
 */
static void shca_qp_ring_corrupt(struct kunit *test)
{
	const struct shca_qt_ring_bad *bad = test->param_value;
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *b = to_shca_qp(f->b.qp);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 64);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr = { .wr_id = 1, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &src, .num_sge = 1 };
	struct ib_wc wc;
	int i;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(b, false), 0);
	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 6);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);

	shca_qt_rwqe(b, 0, 50, &dst, 1);
	shca_qt_rwqe(b, 1, 51, &dst, 1);
	if (bad->by_sender) {
		/* The kernel holds slot 0 when the ring goes bad. */
		shca_qt_rq_produce(b, 1);
		KUNIT_ASSERT_EQ(test, shca_qp_rq_doorbell(b), 0);
	}
	if (bad->producer == 2)
		((struct softhca_rwqe *)((void *)b->urq.ring +
					 SOFTHCA_WQ_RING_HDR +
					 b->urq.slot_size))->num_sge =
			bad->bad_sge;
	shca_qt_rq_produce(b, bad->producer);
	if (bad->by_sender) {
		/* Nothing is received through a ring found corrupt. */
		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
		shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_RETRY_EXC_ERR,
				  IB_WC_SEND, NULL);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
		shca_qt_restate(test, &f->a, &f->b, &shca_qt_default_conn);
	} else {
		KUNIT_ASSERT_EQ(test, shca_qp_rq_doorbell(b), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	KUNIT_EXPECT_TRUE(test, shca_qt_wait_events(&f->b, 1, 1000));
	KUNIT_EXPECT_EQ(test, f->b.last_event, IB_EVENT_QP_FATAL);
	for (i = 0; i < bad->good; i++)
		shca_qt_expect_wc(test, f->b.cq, 50 + i, IB_WC_WR_FLUSH_ERR,
				  IB_WC_RECV, NULL);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq),
			bad->good);

	/* Dead: a fixed producer is not read until RESET. */
	shca_qt_rq_produce(b, 1);
	KUNIT_EXPECT_EQ(test, shca_qp_rq_doorbell(b), 0);
	shca_qt_expect_empty(test, f->b.cq);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
	shca_qt_expect_empty(test, f->a.cq);

	/* RESET: the ring restarts at the producer the process left. */
	shca_qt_restate(test, &f->b, &f->a, &shca_qt_default_conn);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 1);
	shca_qt_rwqe(b, 1, 52, &dst, 1);
	shca_qt_rq_produce(b, 2);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 1, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 52, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf, f->a.buf, 64), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&b->urq), 2);
}

/* Write send slot @idx of @qp's ring. */
static struct softhca_swqe *shca_qt_swqe(struct shca_qp *qp, u32 idx,
					 u64 wr_id, u32 opcode,
					 const struct ib_sge *sge, u32 n)
{
	struct softhca_swqe *s = (void *)qp->usq.ring + SOFTHCA_WQ_RING_HDR +
				 (idx & qp->sq.mask) * qp->usq.slot_size;
	u32 i;

	memset(s, 0, qp->usq.slot_size);
	s->wr_id = wr_id;
	s->opcode = opcode;
	s->send_flags = IB_SEND_SIGNALED;
	s->num_sge = n;
	for (i = 0; i < n; i++) {
		s->sge[i].addr = sge[i].addr;
		s->sge[i].length = sge[i].length;
		s->sge[i].lkey = sge[i].lkey;
	}
	return s;
}

/*
 * A send ring: a doorbell posts the slots in order (WRITE, SEND with
 * immediate, READ, an atomic); a refused slot stops it with its errno
 * and a consumer naming it; a producer beyond the ring posts nothing.
 */
static void shca_qp_ring_send(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_qp *a = to_shca_qp(f->a.qp);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 300);
	struct ib_sge dst = shca_qt_sge(&f->b, 8192, 300);
	struct ib_sge res = shca_qt_sge(&f->a, 16384, 8);
	struct softhca_swqe *s;
	struct ib_wc wc;
	u32 rkey;

	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(a, true), 0);
	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 7);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	memset(f->b.buf + 12288, 0, 8);

	s = shca_qt_swqe(a, 0, 61, IB_WR_RDMA_WRITE, &src, 1);
	s->remote_addr = f->b.mr->iova + 100;
	s->rkey = rkey;
	s = shca_qt_swqe(a, 1, 62, IB_WR_SEND_WITH_IMM, &src, 1);
	s->ex = (__force u32)cpu_to_be32(0xabcd);
	s = shca_qt_swqe(a, 2, 63, IB_WR_ATOMIC_FETCH_AND_ADD, &res, 1);
	s->remote_addr = f->b.mr->iova + 12288;
	s->rkey = rkey;
	s->compare_add = 5;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 71, &dst, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 3, NULL), 0);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 3);
	shca_qt_expect_wc(test, f->a.cq, 61, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	shca_qt_expect_wc(test, f->a.cq, 62, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->a.cq, 63, IB_WC_SUCCESS, IB_WC_FETCH_ADD,
			  NULL);
	shca_qt_expect_wc(test, f->b.cq, 71, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xabcd);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 100, f->a.buf, 300), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 8192, f->a.buf, 300), 0);
	KUNIT_EXPECT_EQ(test, get_unaligned((u64 *)(f->b.buf + 12288)), 5);

	/* Slot 4 refused (an opcode POST_SEND has not): 3 posted, 4 named. */
	shca_qt_swqe(a, 3, 64, IB_WR_SEND, &src, 1);
	shca_qt_swqe(a, 4, 65, IB_WR_REG_MR, &src, 1);
	shca_qt_swqe(a, 5, 66, IB_WR_SEND, &src, 1);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 72, &dst, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 6, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 4);
	shca_qt_expect_wc(test, f->a.cq, 64, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 72, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	shca_qt_expect_empty(test, f->a.cq);

	/* Too many SGEs, bad flags: refused, nothing taken. */
	shca_qt_swqe(a, 4, 67, IB_WR_SEND, &src, 1)->num_sge = 5;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 5, NULL), -EINVAL);
	shca_qt_swqe(a, 4, 68, IB_WR_SEND, &src, 1)->send_flags = 1U << 30;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 5, NULL), -EINVAL);
	/* A producer beyond the ring: nothing posted at all. */
	shca_qt_swqe(a, 4, 69, IB_WR_SEND, &src, 1);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 4 + a->sq.mask + 2, NULL),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 3, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 4);
	shca_qt_expect_empty(test, f->a.cq);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_RTS);

	/* The same slot, fixed, goes; no ring on b's send queue. */
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 73, &dst, 1), 0);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 5, NULL), 0);
	shca_qt_expect_wc(test, f->a.cq, 69, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 73, IB_WC_SUCCESS, IB_WC_RECV, NULL);
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(to_shca_qp(f->b.qp), 1, NULL),
			-EINVAL);
}

/*
 * A UD send ring: slots name address handles by number in a table the
 * doorbell is given (a process's context: struct shca_ucontext.ahs); a
 * number not in it, or an RDMA opcode, refuses the slot.
 */
static void shca_qp_ring_ud(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_qp *ua = shca_qt_ud_qp(test, &f->a, SHCA_QT_QKEY);
	struct ib_qp *ub = shca_qt_ud_qp(test, &f->b, SHCA_QT_QKEY);
	struct shca_qp *a = to_shca_qp(ua);
	struct ib_sge src = shca_qt_sge(&f->a, 0, 100);
	union ib_gid dgid;
	struct ib_ah *ah = shca_qt_ah(test, &f->a, f->b.ibdev, &dgid);
	struct softhca_swqe *s;
	struct ib_wc wc;
	struct xarray ahs;
	u32 num;

	xa_init_flags(&ahs, XA_FLAGS_ALLOC1);
	KUNIT_ASSERT_EQ(test, xa_alloc(&ahs, &num, to_shca_ah(ah), xa_limit_32b,
				       GFP_KERNEL), 0);
	KUNIT_ASSERT_EQ(test, shca_qp_ring_init(a, true), 0);
	shca_qt_fill(f->a.buf, 100, 9);

	KUNIT_ASSERT_EQ(test, shca_qt_ud_recv(&f->b, ub, 81, 200), 0);
	s = shca_qt_swqe(a, 0, 91, IB_WR_SEND_WITH_IMM, &src, 1);
	s->ex = (__force u32)cpu_to_be32(0xfeed);
	s->ah = num;
	s->remote_qpn = ub->qp_num;
	s->remote_qkey = SHCA_QT_QKEY;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 1, &ahs), 0);
	shca_qt_expect_wc(test, f->a.cq, 91, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	shca_qt_expect_wc(test, f->b.cq, 81, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 140);
	KUNIT_EXPECT_EQ(test, wc.src_qp, ua->qp_num);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0xfeed);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 40, f->a.buf, 100), 0);

	/* An AH number not in the table; an RDMA WRITE on UD. */
	s = shca_qt_swqe(a, 1, 92, IB_WR_SEND, &src, 1);
	s->ah = num + 1;
	s->remote_qpn = ub->qp_num;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 2, &ahs), -EINVAL);
	s = shca_qt_swqe(a, 1, 93, IB_WR_RDMA_WRITE, &src, 1);
	s->ah = num;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 2, &ahs), -EINVAL);
	/* The AH gone from the table (destroyed): refused too. */
	xa_erase(&ahs, num);
	s = shca_qt_swqe(a, 1, 94, IB_WR_SEND, &src, 1);
	s->ah = num;
	s->remote_qpn = ub->qp_num;
	KUNIT_EXPECT_EQ(test, shca_qp_sq_doorbell(a, 2, &ahs), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_qt_ring_cons(&a->usq), 1);
	shca_qt_expect_empty(test, f->a.cq);
	shca_qt_expect_empty(test, f->b.cq);
	xa_destroy(&ahs);
}

static struct kunit_case shca_qp_ring_cases[] = {
	KUNIT_CASE(shca_qp_ring_recv),
	KUNIT_CASE(shca_qp_ring_import_bounded),
	KUNIT_CASE_PARAM(shca_qp_ring_corrupt, shca_qt_ring_bad_gen_params),
	KUNIT_CASE(shca_qp_ring_send),
	KUNIT_CASE(shca_qp_ring_ud),
	{}
};

static struct kunit_suite shca_qp_ring_suite = {
	.name = "shca_qp_ring",
	.init = shca_qt_init_two,
	.test_cases = shca_qp_ring_cases,
};

kunit_test_suites(&shca_qp_verbs_suite, &shca_qp_data_suite,
		  &shca_qp_errors_suite, &shca_qp_review_suite,
		  &shca_qp_ud_suite, &shca_qp_srq_suite, &shca_qp_uc_suite,
		  &shca_qp_drain_suite, &shca_qp_pi_suite,
		  &shca_qp_ring_suite, &shca_qp_stress_suite);
