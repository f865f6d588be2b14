// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_qp DEV_A DEV_B: RC data-path conformance between a QP on DEV_A and
 * one on DEV_B (DEV_B may be DEV_A: loopback on one device).
 *
 * Device limits and refusals (QP types, capabilities, SRQ, MW, AH,
 * resize_cq, EBUSY for objects in use); connections over link-local and
 * over IPv4-mapped RoCE v2 GIDs;
 * every opcode (SEND, SEND_WITH_IMM, RDMA_WRITE, RDMA_WRITE_WITH_IMM,
 * RDMA_READ, both atomics) with byte-exact checks of what arrived and
 * that nothing outside the target range changed (each buffer has a shadow
 * copy of what it must hold); immediate data; inline data; gather/scatter
 * lists; unsignaled and sq_sig_all completions; ordering and FENCE; a QP
 * connected to itself; completion channels (next and solicited-only);
 * every error completion with its exact status, wr_id and qp_num and the
 * flush of whatever is outstanding behind it; the QP state machine
 * (illegal transitions, missing attributes, posting in the wrong state);
 * on-demand paging MRs under RC and under UC QPs.
 *
 * The rules checked are softhca's contract. On another driver (rdma_rxe,
 * to check this program) the points where that driver may legitimately
 * differ are reported as "# differs: ..." lines and do not fail; the
 * driver is softhca when its sysfs directory has softhca_abi_version.
 *
 * Exit status: 0 all checks passed, 1 some failed, 2 could not start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

/* WCX() below overrides its defaults with the caller's designators */
#pragma GCC diagnostic ignored "-Woverride-init"

#define BUF_LEN		(2u << 20)	/* per QP end; registered as one MR */
#define POLL_MS		10000		/* bound for any expected completion */
#define QUIET_MS	100		/* "nothing more arrives" window */

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)

static bool strict;		/* the device is softhca: its contract applies */
/*
 * SHCA_QP_WIRE=1: the two devices reach each other through RoCE v2
 * packets (tests/vm/97-wire.sh), where an RC packet does not name the QP
 * that sent it.
 */
static bool on_wire;
static const char *drv_name;

/*
 * Set around checks of completions whose exact values are softhca's
 * contract but where another driver legitimately differs (the IB spec
 * leaves them open, or the driver is known to differ): a mismatch then
 * fails only on softhca.
 */
static bool in_contract;

static void title(const char *s)
{
	printf("  # ---- %s ----\n", s);
}

/*
 * vt_contract(cond, ...): a check of softhca's contract. Against another
 * driver a failure is only noted.
 */
#define vt_contract(cond, ...) \
	((cond) ? (vt_ok(__VA_ARGS__), 1) : \
	 strict ? (vt_bad(__VA_ARGS__), 0) : (note_differs(__VA_ARGS__), 0))

static void __attribute__((format(printf, 1, 2))) note_differs(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("  # differs (%s, not softhca): ", drv_name);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

/* vt_bad(), or note_differs() inside in_contract on another driver. */
#define fail_or_differ(...) \
	do { \
		if (in_contract && !strict) \
			note_differs(__VA_ARGS__); \
		else \
			vt_bad(__VA_ARGS__); \
	} while (0)

/* ---- devices and QP ends -------------------------------------------------- */

struct end {
	struct vt_dev *d;
	struct ibv_cq *scq, *rcq;
	struct ibv_comp_channel *ch;	/* of rcq and scq, if any */
	struct ibv_qp *qp;
	struct ibv_qp_cap cap;
	unsigned char *buf;		/* BUF_LEN bytes, registered */
	unsigned char *shadow;		/* what buf must hold */
	struct ibv_mr *mr;
};

struct qp_opts {
	int sq_sig_all;
	unsigned int max_send_wr, max_recv_wr, max_sge, max_inline;
	int access;			/* qp_access_flags */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	bool channel;			/* CQs on a completion channel */
	bool cq_ex;			/* CQs of ibv_create_cq_ex() */
	bool uc;			/* a UC QP (else RC) */
	uint64_t send_ops;		/* ibv_create_qp_ex() with these, if any */
	struct ibv_pd *pd;		/* QP, CQs and MR on this PD or parent
					 * domain (CQs: cq_ex only); NULL: the
					 * device's PD */
};

static const struct qp_opts def_opts = {
	.sq_sig_all = 0,
	.max_send_wr = 256, .max_recv_wr = 256, .max_sge = 32,
	.max_inline = 256,
	.access = ACC_ALL,
	.timeout = 14, .retry_cnt = 7, .rnr_retry = 7, .min_rnr_timer = 12,
};

static const char *st_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };

	return s >= 0 && s < 7 ? n[s] : "?";
}

static const char *wc_op_name(int op)
{
	switch (op) {
	case IBV_WC_SEND: return "SEND";
	case IBV_WC_RDMA_WRITE: return "RDMA_WRITE";
	case IBV_WC_RDMA_READ: return "RDMA_READ";
	case IBV_WC_COMP_SWAP: return "COMP_SWAP";
	case IBV_WC_FETCH_ADD: return "FETCH_ADD";
	case IBV_WC_RECV: return "RECV";
	case IBV_WC_RECV_RDMA_WITH_IMM: return "RECV_RDMA_WITH_IMM";
	case IBV_WC_BIND_MW: return "BIND_MW";
	case IBV_WC_LOCAL_INV: return "LOCAL_INV";
	default: return "?";
	}
}

static void dev_open(struct vt_dev *d, const char *name)
{
	char gs[INET6_ADDRSTRLEN];

	vt_dev_open(d, name);
	inet_ntop(AF_INET6, d->gid.raw, gs, sizeof(gs));
	vt_info("%s: GID index %d (%s), active MTU %d, max_qp %d, max_qp_wr %d, max_sge %d, max_cqe %d, max_qp_rd_atom %d, max_qp_init_rd_atom %d, atomic_cap %d",
		name, d->gid_idx, gs, 128 << d->mtu, d->attr.max_qp,
		d->attr.max_qp_wr, d->attr.max_sge, d->attr.max_cqe,
		d->attr.max_qp_rd_atom, d->attr.max_qp_init_rd_atom,
		d->attr.atomic_cap);
	if (d->is_softhca)
		strict = true;
}

static int rd_atom(const struct vt_dev *d)
{
	int n = d->attr.max_qp_rd_atom;

	if (d->attr.max_qp_init_rd_atom < n)
		n = d->attr.max_qp_init_rd_atom;
	return n > 16 ? 16 : n;
}

/* Create the CQs, QP and buffer of @e on @d; 0 or an errno. */
static int end_create(struct end *e, struct vt_dev *d, const struct qp_opts *o)
{
	struct ibv_qp_init_attr ia;
	unsigned int sge = o->max_sge;

	memset(e, 0, sizeof(*e));
	e->d = d;
	if (sge > (unsigned int)d->attr.max_sge)
		sge = d->attr.max_sge;
	if (o->channel) {
		e->ch = ibv_create_comp_channel(d->ctx);
		if (!e->ch)
			return errno;
	}
	if (o->cq_ex) {
		struct ibv_cq_init_attr_ex ca = {
			.cqe = 1024, .cq_context = e, .channel = e->ch,
			.wc_flags = IBV_WC_STANDARD_FLAGS,
			.comp_mask = o->pd ? IBV_CQ_INIT_ATTR_MASK_PD : 0,
			.parent_domain = o->pd,
		};
		struct ibv_cq_ex *s = ibv_create_cq_ex(d->ctx, &ca);
		struct ibv_cq_ex *r = s ? ibv_create_cq_ex(d->ctx, &ca) : NULL;

		e->scq = s ? ibv_cq_ex_to_cq(s) : NULL;
		e->rcq = r ? ibv_cq_ex_to_cq(r) : NULL;
	} else {
		e->scq = ibv_create_cq(d->ctx, 1024, e, e->ch, 0);
		e->rcq = e->scq ? ibv_create_cq(d->ctx, 1024, e, e->ch, 0) : NULL;
	}
	if (!e->rcq)
		return errno;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = e->scq;
	ia.recv_cq = e->rcq;
	ia.qp_type = o->uc ? IBV_QPT_UC : IBV_QPT_RC;
	ia.sq_sig_all = o->sq_sig_all;
	ia.cap.max_send_wr = o->max_send_wr;
	ia.cap.max_recv_wr = o->max_recv_wr;
	ia.cap.max_send_sge = sge;
	ia.cap.max_recv_sge = sge;
	ia.cap.max_inline_data = o->max_inline;
	if (o->send_ops) {
		struct ibv_qp_init_attr_ex iax = {
			.send_cq = ia.send_cq, .recv_cq = ia.recv_cq,
			.cap = ia.cap, .qp_type = ia.qp_type,
			.sq_sig_all = ia.sq_sig_all,
			.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
			.pd = o->pd ? o->pd : d->pd, .send_ops_flags = o->send_ops,
		};

		e->qp = ibv_create_qp_ex(d->ctx, &iax);
		ia.cap = iax.cap;
	} else {
		e->qp = ibv_create_qp(o->pd ? o->pd : d->pd, &ia);
	}
	if (!e->qp)
		return errno;
	e->cap = ia.cap;
	e->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	e->shadow = malloc(BUF_LEN);
	if (e->buf == MAP_FAILED || !e->shadow)
		return ENOMEM;
	memset(e->buf, 0x5a, BUF_LEN);
	memset(e->shadow, 0x5a, BUF_LEN);
	e->mr = ibv_reg_mr(o->pd ? o->pd : d->pd, e->buf, BUF_LEN, ACC_ALL);
	if (!e->mr)
		return errno;
	return 0;
}

static void end_destroy(struct end *e)
{
	int ret;

	if (e->qp) {
		ret = ibv_destroy_qp(e->qp);
		if (ret)
			vt_bad("destroy_qp 0x%x: %s", e->qp->qp_num, vt_errname(ret));
	}
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->scq)
		ibv_destroy_cq(e->scq);
	if (e->rcq)
		ibv_destroy_cq(e->rcq);
	if (e->ch)
		ibv_destroy_comp_channel(e->ch);
	if (e->buf && e->buf != MAP_FAILED)
		munmap(e->buf, BUF_LEN);
	free(e->shadow);
	memset(e, 0, sizeof(*e));
}

static int qp_to_init(struct ibv_qp *qp, int access)
{
	return vt_qp_to_init(qp, access);
}

static void qp_path(struct vt_rc_path *p, const struct vt_dev *self,
		    const struct vt_dev *peer, uint32_t dqpn,
		    const struct qp_opts *o)
{
	*p = (struct vt_rc_path){
		.dgid = peer ? peer->gid : (union ibv_gid){},
		.dest_qpn = dqpn,
		.sgid_index = self->gid_idx,
		.mtu = peer && peer->mtu < self->mtu ? peer->mtu : self->mtu,
		.access = o->access,
		.psn = 0x1234,
		.rd_atom = rd_atom(self),
		.min_rnr_timer = o->min_rnr_timer,
		.timeout = o->timeout,
		.retry_cnt = o->retry_cnt,
		.rnr_retry = o->rnr_retry,
	};
}

static int qp_to_rtr(struct ibv_qp *qp, const struct vt_dev *self,
		     const struct vt_dev *peer, uint32_t dqpn,
		     const struct qp_opts *o)
{
	struct vt_rc_path p;

	qp_path(&p, self, peer, dqpn, o);
	return vt_qp_to_rtr(qp, &p);
}

static int qp_to_rts(struct ibv_qp *qp, const struct vt_dev *self,
		     const struct qp_opts *o)
{
	struct vt_rc_path p;

	qp_path(&p, self, NULL, 0, o);
	return vt_qp_to_rts(qp, &p);
}

/*
 * INIT -> RTR -> RTS of a UC QP: the path of an RC one without what UC
 * does not have (responder resources, RNR timer, ACK timeout, retries).
 */
static int uc_to_rts(struct ibv_qp *qp, const struct vt_dev *self,
		     const struct vt_dev *peer, uint32_t dqpn,
		     const struct qp_opts *o)
{
	struct vt_rc_path p;
	struct ibv_qp_attr a;
	int ret;

	qp_path(&p, self, peer, dqpn, o);
	a = (struct ibv_qp_attr){
		.qp_state = IBV_QPS_RTR,
		.path_mtu = p.mtu,
		.dest_qp_num = p.dest_qpn,
		.rq_psn = p.psn,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = p.dgid,
				.sgid_index = p.sgid_index,
				.hop_limit = 1,
			},
			.port_num = 1,
		},
	};
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN);
	if (ret)
		return ret;
	a = (struct ibv_qp_attr){ .qp_state = IBV_QPS_RTS, .sq_psn = p.psn };
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
}

/* RESET -> INIT -> RTR -> RTS, connected to @dqpn on @peer. */
static int end_connect(struct end *e, const struct vt_dev *peer, uint32_t dqpn,
		       const struct qp_opts *o)
{
	int ret;

	ret = qp_to_init(e->qp, o->access);
	if (!ret && o->uc)
		return uc_to_rts(e->qp, e->d, peer, dqpn, o);
	if (!ret)
		ret = qp_to_rtr(e->qp, e->d, peer, dqpn, o);
	if (!ret)
		ret = qp_to_rts(e->qp, e->d, o);
	return ret;
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

struct pair {
	struct end a, b;
};

/* A on @da, B on @db, each with its options, connected to each other. */
static bool pair_up2(struct pair *p, struct vt_dev *da, struct vt_dev *db,
		     const struct qp_opts *oa, const struct qp_opts *ob,
		     const char *what)
{
	int ret;

	memset(p, 0, sizeof(*p));
	ret = end_create(&p->a, da, oa);
	if (!ret)
		ret = end_create(&p->b, db, ob);
	if (!ret)
		ret = end_connect(&p->a, db, p->b.qp->qp_num, oa);
	if (!ret)
		ret = end_connect(&p->b, da, p->a.qp->qp_num, ob);
	if (ret) {
		vt_bad("%s: setting up a connected QP pair %s -> %s: %s", what,
		       da->name, db->name, vt_errname(ret));
		return false;
	}
	return true;
}

static void pair_down(struct pair *p)
{
	end_destroy(&p->a);
	end_destroy(&p->b);
}

/* ---- posting and polling -------------------------------------------------- */

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Poll @cq until @n completions are in @wc or @ms elapsed; the number got. */
static int poll_n(struct ibv_cq *cq, int n, struct ibv_wc *wc, unsigned int ms)
{
	uint64_t end = now_ms() + ms;
	int got = 0, spins = 0, ret;

	while (got < n) {
		ret = ibv_poll_cq(cq, n - got, wc + got);
		if (ret < 0) {
			vt_bad("ibv_poll_cq: returned %d (%s)", ret, strerror(errno));
			return got;
		}
		got += ret;
		if (got >= n)
			break;
		if (now_ms() > end)
			break;
		if (++spins > 50)
			usleep(1000);
	}
	return got;
}

/* Check that @cq stays empty for QUIET_MS; prints the stray completions. */
static int expect_empty(struct ibv_cq *cq, const char *what)
{
	struct ibv_wc wc[8];
	int n, i;

	n = poll_n(cq, 8, wc, QUIET_MS);
	if (n == 0)
		vt_ok("%s: no completion", what);
	else
		fail_or_differ("%s: %d unexpected completion(s)", what, n);
	if (n)
		for (i = 0; i < n; i++)
			vt_info("  unexpected: wr_id 0x%" PRIx64 " status %s opcode %d",
				wc[i].wr_id, ibv_wc_status_str(wc[i].status),
				wc[i].opcode);
	return n == 0;
}

struct wc_exp {
	int status;
	int opcode;		/* -1: not checked */
	uint64_t wr_id;
	uint32_t qp_num;
	int64_t byte_len;	/* -1: not checked */
	int wc_flags;		/* -1: not checked; else the IMM/INV bits */
	uint32_t imm;		/* host order, with IBV_WC_WITH_IMM */
	int64_t src_qp;		/* -1: not checked */
};

#define WCX(...) ((struct wc_exp){ .opcode = -1, .byte_len = -1, \
				   .wc_flags = -1, .src_qp = -1, __VA_ARGS__ })

/* One check line for a completion against what it must say. */
static int check_wc(const char *what, const struct ibv_wc *wc,
		    const struct wc_exp *x)
{
	char diff[512] = "";
	size_t l = 0;
	bool only_src_qp;

#define DIFF(...) (l += snprintf(diff + l, sizeof(diff) - l, __VA_ARGS__))
	if ((int)wc->status != x->status)
		DIFF(" status %s (expected %s)", ibv_wc_status_str(wc->status),
		     ibv_wc_status_str(x->status));
	if (x->opcode >= 0 && (int)wc->opcode != x->opcode)
		DIFF(" opcode %s/%d (expected %s)", wc_op_name(wc->opcode),
		     wc->opcode, wc_op_name(x->opcode));
	if (wc->wr_id != x->wr_id)
		DIFF(" wr_id 0x%" PRIx64 " (expected 0x%" PRIx64 ")", wc->wr_id,
		     x->wr_id);
	if (wc->qp_num != x->qp_num)
		DIFF(" qp_num 0x%x (expected 0x%x)", wc->qp_num, x->qp_num);
	if (x->byte_len >= 0 && wc->byte_len != x->byte_len)
		DIFF(" byte_len %u (expected %" PRId64 ")", wc->byte_len,
		     x->byte_len);
	if (x->wc_flags >= 0 &&
	    (wc->wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV)) != (unsigned int)x->wc_flags)
		DIFF(" wc_flags 0x%x (expected 0x%x)", wc->wc_flags, x->wc_flags);
	if (x->wc_flags >= 0 && (x->wc_flags & IBV_WC_WITH_IMM) &&
	    ntohl(wc->imm_data) != x->imm)
		DIFF(" imm_data 0x%x (expected 0x%x)", ntohl(wc->imm_data), x->imm);
	only_src_qp = l == 0;
	if (x->src_qp >= 0 && wc->src_qp != x->src_qp)
		DIFF(" src_qp 0x%x (expected 0x%" PRIx64 ")", wc->src_qp, x->src_qp);
	else
		only_src_qp = false;
#undef DIFF
	if (l == 0) {
		vt_ok("%s: wc %s%s%s wr_id 0x%" PRIx64 " qp 0x%x%s", what,
		      ibv_wc_status_str(wc->status), x->opcode >= 0 ? " " : "",
		      x->opcode >= 0 ? wc_op_name(wc->opcode) : "", wc->wr_id,
		      wc->qp_num, x->byte_len >= 0 ? " (byte_len checked)" : "");
		return 1;
	}
	/* src_qp of an RC receive: softhca's contract, not the IB spec's */
	if (only_src_qp && !strict)
		note_differs("%s: wc%s", what, diff);
	else
		fail_or_differ("%s: wc%s", what, diff);
	return 0;
}

/* Poll one completion from @cq and check it. */
static int expect_wc(struct ibv_cq *cq, const char *what, const struct wc_exp *x)
{
	struct ibv_wc wc;

	if (poll_n(cq, 1, &wc, POLL_MS) != 1) {
		fail_or_differ("%s: no completion within %d ms (expected %s wr_id 0x%" PRIx64 ")",
		       what, POLL_MS, ibv_wc_status_str(x->status), x->wr_id);
		return 0;
	}
	return check_wc(what, &wc, x);
}

/* Compare @e's buffer with its shadow; report the first difference. */
static int check_buf(const struct end *e, const char *what)
{
	size_t i, n = 0, first = 0;

	for (i = 0; i < BUF_LEN; i++) {
		if (e->buf[i] != e->shadow[i]) {
			if (!n++)
				first = i;
		}
	}
	if (n == 0) {
		vt_ok("%s: %s's %u KiB buffer holds exactly what it must", what,
		      e->d->name, BUF_LEN >> 10);
		return 1;
	}
	vt_bad("%s: %s's buffer differs in %zu bytes, first at offset %zu (0x%02x, expected 0x%02x)",
	       what, e->d->name, n, first, e->buf[first], e->shadow[first]);
	/* resynchronise so that one failure is reported once */
	memcpy(e->shadow, e->buf, BUF_LEN);
	return 0;
}

static unsigned int seed_ctr = 1;

/* Fill [off, off + len) of @e's buffer (and shadow) with a fresh pattern. */
static void fill(struct end *e, size_t off, size_t len)
{
	unsigned int s = seed_ctr++ * 2654435761u;
	size_t i;

	for (i = 0; i < len; i++) {
		s = s * 1103515245u + 12345u;
		e->buf[off + i] = e->shadow[off + i] = (unsigned char)(s >> 16);
	}
}

static struct ibv_sge sge_of(const struct end *e, size_t off, uint32_t len)
{
	return (struct ibv_sge){ .addr = (uintptr_t)(e->buf + off),
				 .length = len, .lkey = e->mr->lkey };
}

static int post_recv_sges(struct end *e, uint64_t id, struct ibv_sge *sg, int n)
{
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = sg, .num_sge = n };
	struct ibv_recv_wr *bad = NULL;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_recv1(struct end *e, uint64_t id, size_t off, uint32_t len)
{
	struct ibv_sge sg = sge_of(e, off, len);

	return post_recv_sges(e, id, &sg, 1);
}

static int post_send_wr(struct end *e, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(e->qp, wr, &bad);
}

/* One signaled work request of @op from @e with one SGE (len 0: none). */
static int post1(struct end *e, uint64_t id, enum ibv_wr_opcode op,
		 size_t loff, uint32_t len, uint64_t raddr, uint32_t rkey,
		 int flags)
{
	struct ibv_sge sg = sge_of(e, loff, len);
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = len ? 1 : 0,
		.opcode = op, .send_flags = flags | IBV_SEND_SIGNALED,
	};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return post_send_wr(e, &wr);
}

static uint64_t raddr_of(const struct end *e, size_t off)
{
	return (uintptr_t)(e->buf + off);
}

/* ---- capabilities ------------------------------------------------------- */

static void t_caps(struct vt_dev *d)
{
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	int ret;

	title("capabilities and refusals");
	vt_check(d->attr.max_qp > 0, "%s: max_qp %d > 0", d->name, d->attr.max_qp);
	vt_check(d->attr.max_cq > 0, "%s: max_cq %d > 0", d->name, d->attr.max_cq);
	vt_contract(d->attr.max_qp_wr == 16384, "%s: max_qp_wr %d (16384)",
		    d->name, d->attr.max_qp_wr);
	vt_contract(d->attr.max_sge == 32, "%s: max_sge %d (32)", d->name,
		    d->attr.max_sge);
	vt_contract(d->attr.max_cqe == 65536, "%s: max_cqe %d (65536)", d->name,
		    d->attr.max_cqe);
	vt_contract(d->attr.max_qp_rd_atom == 128 && d->attr.max_qp_init_rd_atom == 128,
		    "%s: max_qp_rd_atom %d, max_qp_init_rd_atom %d (128, 128)",
		    d->name, d->attr.max_qp_rd_atom, d->attr.max_qp_init_rd_atom);
	vt_check(d->attr.atomic_cap == IBV_ATOMIC_HCA, "%s: atomic_cap %d (IBV_ATOMIC_HCA)",
		 d->name, d->attr.atomic_cap);

	cq = ibv_create_cq(d->ctx, d->attr.max_cqe + 1, NULL, NULL, 0);
	vt_check(!cq, "create_cq with max_cqe + 1 entries refused: %s",
		 cq ? "created" : vt_errname(errno));
	if (cq)
		ibv_destroy_cq(cq);
	cq = ibv_create_cq(d->ctx, 16, NULL, NULL, 0);
	if (!vt_check(cq != NULL, "create_cq 16: %s", cq ? "ok" : vt_errname(errno)))
		return;
	vt_check(cq->cqe >= 16, "create_cq 16: cqe %d >= 16", cq->cqe);
	ret = ibv_resize_cq(cq, 64);
	vt_contract(ret == EOPNOTSUPP, "resize_cq: %s (EOPNOTSUPP)", vt_errname(ret));

	memset(&ia, 0, sizeof(ia));
	ia.send_cq = cq;
	ia.recv_cq = cq;
	ia.cap.max_send_wr = 4;
	ia.cap.max_recv_wr = 4;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	/* UD and UC QPs exist (ibv_ud_pingpong, ibv_uc_pingpong); raw ones not. */
	ia.qp_type = IBV_QPT_UD;
	qp = ibv_create_qp(d->pd, &ia);
	vt_check(qp != NULL, "create_qp UD: %s", qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ia.qp_type = IBV_QPT_UC;
	qp = ibv_create_qp(d->pd, &ia);
	vt_check(qp != NULL, "create_qp UC: %s", qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ia.qp_type = IBV_QPT_RAW_PACKET;
	errno = 0;
	qp = ibv_create_qp(d->pd, &ia);
	vt_contract(!qp && (errno == EOPNOTSUPP || errno == EPERM),
		    "create_qp RAW_PACKET: %s (EOPNOTSUPP or EPERM)",
		    qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = d->attr.max_qp_wr + 1;
	qp = ibv_create_qp(d->pd, &ia);
	vt_check(!qp, "create_qp with max_send_wr = max_qp_wr + 1 refused: %s",
		 qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_send_wr = 4;
	ia.cap.max_send_sge = d->attr.max_sge + 1;
	qp = ibv_create_qp(d->pd, &ia);
	vt_check(!qp, "create_qp with max_send_sge = max_sge + 1 refused: %s",
		 qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_send_sge = 1;
	ia.cap.max_inline_data = 513;
	qp = ibv_create_qp(d->pd, &ia);
	vt_contract(!qp, "create_qp with max_inline_data 513 refused: %s",
		    qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
	ia.cap.max_inline_data = 512;
	qp = ibv_create_qp(d->pd, &ia);
	if (vt_check(qp != NULL, "create_qp RC with max_inline_data 512: %s",
		     qp ? "ok" : vt_errname(errno))) {
		struct ibv_qp_init_attr qia;
		struct ibv_qp_attr qa;

		vt_check(ia.cap.max_inline_data >= 512 && ia.cap.max_send_wr >= 4 &&
			 ia.cap.max_recv_wr >= 4,
			 "granted caps: send_wr %u recv_wr %u send_sge %u recv_sge %u inline %u",
			 ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
			 ia.cap.max_recv_sge, ia.cap.max_inline_data);
		ret = ibv_query_qp(qp, &qa, IBV_QP_STATE | IBV_QP_CAP, &qia);
		vt_check(!ret && qa.qp_state == IBV_QPS_RESET &&
			 qia.qp_type == IBV_QPT_RC && qia.send_cq == cq,
			 "query_qp of a new QP: %s, state %s, type RC, its CQ",
			 vt_errname(ret), st_name(qa.qp_state));
		ret = ibv_destroy_cq(cq);
		vt_check(ret == EBUSY, "destroy_cq of a CQ a QP uses: %s (EBUSY)",
			 vt_errname(ret));
		ret = ibv_dealloc_pd(d->pd);
		if (!vt_check(ret == EBUSY, "dealloc_pd of a PD a QP uses: %s (EBUSY)",
			      vt_errname(ret)) && !ret)
			d->pd = vt_alloc_pd(d->ctx);
		ret = ibv_destroy_qp(qp);
		vt_check(!ret, "destroy_qp: %s", vt_errname(ret));
	}
	{
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_srq *srq = ibv_create_srq(d->pd, &sa);

		if (vt_check(srq != NULL, "create_srq: %s",
			     srq ? "ok" : vt_errname(errno))) {
			struct ibv_qp_init_attr sia = {
				.send_cq = cq, .recv_cq = cq, .srq = srq,
				.cap = { .max_send_wr = 4, .max_send_sge = 1 },
				.qp_type = IBV_QPT_RC,
			};
			struct ibv_qp *sq = ibv_create_qp(d->pd, &sia);
			struct ibv_recv_wr rwr = { .wr_id = 1 }, *badr;

			if (vt_check(sq != NULL, "create_qp on an SRQ: %s",
				     sq ? "ok" : vt_errname(errno))) {
				ret = ibv_post_recv(sq, &rwr, &badr);
				vt_check(ret == EINVAL,
					 "post_recv on a QP on an SRQ: %s (EINVAL)",
					 vt_errname(ret));
				ret = ibv_destroy_srq(srq);
				vt_check(ret == EBUSY,
					 "destroy_srq of an SRQ a QP uses: %s (EBUSY)",
					 vt_errname(ret));
				ret = ibv_destroy_qp(sq);
				vt_check(!ret, "destroy_qp: %s", vt_errname(ret));
			}
			ret = ibv_destroy_srq(srq);
			vt_check(!ret, "destroy_srq: %s", vt_errname(ret));
		}
	}
	{
		struct ibv_ah_attr aa = {
			.is_global = 1, .port_num = 1,
			.grh = { .dgid = d->gid, .sgid_index = d->gid_idx,
				 .hop_limit = 1 },
		};
		struct ibv_ah *ah = ibv_create_ah(d->pd, &aa);

		vt_check(ah != NULL, "create_ah for our own GID: %s",
			 ah ? "created" : vt_errname(errno));
		if (ah)
			vt_check(!ibv_destroy_ah(ah), "destroy_ah");
	}
	ret = ibv_destroy_cq(cq);
	vt_check(!ret, "destroy_cq: %s", vt_errname(ret));
}

/* ---- the QP state machine ------------------------------------------------- */

static void t_states(struct vt_dev *da, struct vt_dev *db)
{
	struct qp_opts o = def_opts;
	struct ibv_send_wr swr, *sbad;
	struct ibv_recv_wr rwr, *rbad;
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	struct ibv_sge sg;
	struct end e, peer;
	int ret, st;

	title("QP state machine");
	memset(&peer, 0, sizeof(peer));
	ret = end_create(&e, da, &o);
	ret = ret ? ret : end_create(&peer, db, &o);
	if (ret) {
		vt_bad("creating QPs for the state tests failed: %s", vt_errname(ret));
		end_destroy(&e);
		end_destroy(&peer);
		return;
	}
	sg = sge_of(&e, 0, 64);
	memset(&swr, 0, sizeof(swr));
	swr.wr_id = 1;
	swr.sg_list = &sg;
	swr.num_sge = 1;
	swr.opcode = IBV_WR_SEND;
	swr.send_flags = IBV_SEND_SIGNALED;
	memset(&rwr, 0, sizeof(rwr));
	rwr.wr_id = 2;
	rwr.sg_list = &sg;
	rwr.num_sge = 1;

	sbad = NULL;
	ret = ibv_post_send(e.qp, &swr, &sbad);
	vt_contract(ret == EINVAL && sbad == &swr, "post_send in RESET: %s (EINVAL, bad_wr = the WR)",
		    vt_errname(ret));
	rbad = NULL;
	ret = ibv_post_recv(e.qp, &rwr, &rbad);
	vt_contract(ret != 0 && rbad == &rwr, "post_recv in RESET fails: %s", vt_errname(ret));

	/* illegal transitions from RESET */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "RESET -> RTR: %s (EINVAL)", vt_errname(ret));
	a.qp_state = IBV_QPS_RTS;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "RESET -> RTS: %s (EINVAL)", vt_errname(ret));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = ACC_ALL;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_ACCESS_FLAGS);
	vt_check(ret == EINVAL, "RESET -> INIT without IBV_QP_PORT: %s (EINVAL)",
		 vt_errname(ret));
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS | IBV_QP_SQ_PSN);
	vt_check(ret == EINVAL, "RESET -> INIT with IBV_QP_SQ_PSN (not allowed there): %s (EINVAL)",
		 vt_errname(ret));
	a.port_num = 2;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	vt_check(ret == EINVAL, "RESET -> INIT on port 2 (the device has one): %s (EINVAL)",
		 vt_errname(ret));
	st = qp_state(e.qp);
	vt_check(st == IBV_QPS_RESET && e.qp->state == IBV_QPS_RESET,
		 "still RESET after the refusals (query_qp %s)", st_name(st));

	ret = qp_to_init(e.qp, ACC_ALL);
	vt_check(!ret, "RESET -> INIT: %s", vt_errname(ret));
	ret = ibv_query_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_ACCESS_FLAGS | IBV_QP_PORT |
			   IBV_QP_PKEY_INDEX, &ia);
	vt_check(!ret && a.qp_state == IBV_QPS_INIT && a.qp_access_flags == ACC_ALL &&
		 a.port_num == 1 && a.pkey_index == 0,
		 "query_qp in INIT: state %s, access 0x%x, port %u, pkey_index %u",
		 st_name(a.qp_state), a.qp_access_flags, a.port_num, a.pkey_index);
	sbad = NULL;
	ret = ibv_post_send(e.qp, &swr, &sbad);
	vt_contract(ret == EINVAL && sbad == &swr, "post_send in INIT: %s (EINVAL)",
		    vt_errname(ret));
	ret = ibv_post_recv(e.qp, &rwr, &rbad);
	vt_check(!ret, "post_recv in INIT: %s (allowed)", vt_errname(ret));
	ret = qp_to_init(e.qp, IBV_ACCESS_REMOTE_WRITE);
	vt_check(!ret, "INIT -> INIT (new access flags): %s", vt_errname(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 1;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 1;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			    IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
	vt_check(ret == EINVAL, "INIT -> RTS (skipping RTR): %s (EINVAL)", vt_errname(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = da->mtu;
	a.dest_qp_num = peer.qp->qp_num;
	a.rq_psn = 0;
	a.max_dest_rd_atomic = 1;
	a.min_rnr_timer = 12;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	vt_check(ret == EINVAL, "INIT -> RTR without IBV_QP_AV: %s (EINVAL)", vt_errname(ret));
	vt_check(qp_state(e.qp) == IBV_QPS_INIT, "still INIT (query_qp %s)",
		 st_name(qp_state(e.qp)));

	ret = qp_to_rtr(e.qp, da, db, peer.qp->qp_num, &o);
	vt_check(!ret, "INIT -> RTR: %s", vt_errname(ret));
	ret = ibv_query_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			   IBV_QP_PATH_MTU | IBV_QP_MAX_DEST_RD_ATOMIC |
			   IBV_QP_MIN_RNR_TIMER | IBV_QP_AV, &ia);
	vt_check(!ret && a.qp_state == IBV_QPS_RTR && a.dest_qp_num == peer.qp->qp_num &&
		 a.rq_psn == 0x1234 && a.path_mtu == (da->mtu < db->mtu ? da->mtu : db->mtu) &&
		 a.min_rnr_timer == 12 && a.ah_attr.is_global &&
		 !memcmp(a.ah_attr.grh.dgid.raw, db->gid.raw, 16) &&
		 a.ah_attr.grh.sgid_index == da->gid_idx,
		 "query_qp in RTR: state %s, dest_qp 0x%x, rq_psn 0x%x, path_mtu %d, min_rnr_timer %u, dgid %s, sgid_index %u",
		 st_name(a.qp_state), a.dest_qp_num, a.rq_psn, a.path_mtu,
		 a.min_rnr_timer,
		 !memcmp(a.ah_attr.grh.dgid.raw, db->gid.raw, 16) ? "the peer's" : "OTHER",
		 a.ah_attr.grh.sgid_index);
	vt_check(a.max_dest_rd_atomic == rd_atom(da), "query_qp: max_dest_rd_atomic %u (%d)",
		 a.max_dest_rd_atomic, rd_atom(da));
	sbad = NULL;
	ret = ibv_post_send(e.qp, &swr, &sbad);
	vt_contract(ret == EINVAL && sbad == &swr, "post_send in RTR: %s (EINVAL)",
		    vt_errname(ret));
	ret = ibv_post_recv(e.qp, &rwr, &rbad);
	vt_check(!ret, "post_recv in RTR: %s (allowed)", vt_errname(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "RTR -> INIT: %s (EINVAL)", vt_errname(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT);
	vt_check(ret == EINVAL, "RTR -> RTS without IBV_QP_SQ_PSN: %s (EINVAL)",
		 vt_errname(ret));

	ret = qp_to_rts(e.qp, da, &o);
	vt_check(!ret, "RTR -> RTS: %s", vt_errname(ret));
	ret = ibv_query_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
			   IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC, &ia);
	vt_check(!ret && a.qp_state == IBV_QPS_RTS && a.sq_psn == 0x1234 &&
		 a.timeout == o.timeout && a.retry_cnt == o.retry_cnt &&
		 a.rnr_retry == o.rnr_retry && a.max_rd_atomic == rd_atom(da),
		 "query_qp in RTS: state %s, sq_psn 0x%x, timeout %u, retry_cnt %u, rnr_retry %u, max_rd_atomic %u",
		 st_name(a.qp_state), a.sq_psn, a.timeout, a.retry_cnt, a.rnr_retry,
		 a.max_rd_atomic);
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "RTS -> RTR: %s (EINVAL)", vt_errname(ret));
	a.qp_state = IBV_QPS_INIT;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "RTS -> INIT: %s (EINVAL)", vt_errname(ret));
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.min_rnr_timer = 14;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE | IBV_QP_MIN_RNR_TIMER);
	vt_check(!ret, "RTS -> RTS (min_rnr_timer): %s", vt_errname(ret));

	/* to ERR: the posted receives (two) flush */
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(!ret && qp_state(e.qp) == IBV_QPS_ERR, "RTS -> ERR: %s, query_qp %s",
		 vt_errname(ret), st_name(qp_state(e.qp)));
	expect_wc(e.rcq, "receive posted in INIT, after -> ERR",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 2, .qp_num = e.qp->qp_num));
	expect_wc(e.rcq, "receive posted in RTR, after -> ERR",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 2, .qp_num = e.qp->qp_num));
	/* the sends refused in RESET, INIT and RTR left nothing queued */
	in_contract = true;
	expect_empty(e.scq, "send CQ after -> ERR with nothing posted");
	in_contract = false;
	a.qp_state = IBV_QPS_RTS;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "ERR -> RTS: %s (EINVAL)", vt_errname(ret));
	a.qp_state = IBV_QPS_INIT;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "ERR -> INIT without attributes: %s (EINVAL)",
		 vt_errname(ret));

	/* posting in ERR completes with FLUSH_ERR */
	swr.wr_id = 0x51;
	ret = ibv_post_send(e.qp, &swr, &sbad);
	vt_check(!ret, "post_send in ERR: %s (accepted, to be flushed)", vt_errname(ret));
	expect_wc(e.scq, "send posted in ERR",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x51, .qp_num = e.qp->qp_num));
	swr.wr_id = 0x52;
	swr.send_flags = 0;	/* unsignaled: a flush completes it all the same */
	ret = ibv_post_send(e.qp, &swr, &sbad);
	vt_check(!ret, "unsignaled post_send in ERR: %s", vt_errname(ret));
	expect_wc(e.scq, "unsignaled send posted in ERR",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x52, .qp_num = e.qp->qp_num));
	rwr.wr_id = 0x53;
	ret = ibv_post_recv(e.qp, &rwr, &rbad);
	vt_check(!ret, "post_recv in ERR: %s (accepted, to be flushed)", vt_errname(ret));
	in_contract = true;
	expect_wc(e.rcq, "receive posted in ERR",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x53, .qp_num = e.qp->qp_num));
	in_contract = false;

	/* ERR -> RESET -> INIT: usable again, nothing left */
	a.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(!ret && qp_state(e.qp) == IBV_QPS_RESET, "ERR -> RESET: %s, query_qp %s",
		 vt_errname(ret), st_name(qp_state(e.qp)));
	ret = qp_to_init(e.qp, ACC_ALL);
	vt_check(!ret, "RESET -> INIT again: %s", vt_errname(ret));
	a.qp_state = IBV_QPS_RESET;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(!ret, "INIT -> RESET: %s", vt_errname(ret));
	a.qp_state = IBV_QPS_ERR;
	ret = ibv_modify_qp(e.qp, &a, IBV_QP_STATE);
	vt_check(ret == EINVAL, "RESET -> ERR: %s (EINVAL: not in the core's transition table)",
		 vt_errname(ret));
	expect_empty(e.scq, "send CQ at the end of the state tests");
	expect_empty(e.rcq, "receive CQ at the end of the state tests");
	end_destroy(&e);
	end_destroy(&peer);
}

/* ---- data transfers ------------------------------------------------------- */

/* B posts a receive at @roff, A sends @len bytes from @soff. */
static void do_send(struct pair *p, uint32_t len, bool imm, uint64_t id)
{
	struct end *a = &p->a, *b = &p->b;
	size_t soff = 4096 + (id % 7) * 3, roff = 65536 + (id % 5) * 5;
	struct ibv_sge sg = sge_of(a, soff, len);
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = len ? 1 : 0,
		.opcode = imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xc0de0000u + (uint32_t)id),
	};
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "%s of %u bytes %s -> %s",
		 imm ? "SEND_WITH_IMM" : "SEND", len, a->d->name, b->d->name);
	fill(a, soff, len);
	ret = post_recv1(b, id + 1, roff, len + 128);
	ret = ret ? ret : post_send_wr(a, &wr);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return;
	memcpy(b->shadow + roff, a->shadow + soff, len);
	expect_wc(a->scq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND,
				     .wr_id = id, .qp_num = a->qp->qp_num));
	expect_wc(b->rcq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
				     .wr_id = id + 1, .qp_num = b->qp->qp_num,
				     .byte_len = len,
				     .wc_flags = imm ? IBV_WC_WITH_IMM : 0,
				     .imm = 0xc0de0000u + (uint32_t)id,
				     .src_qp = a->qp->qp_num));
	check_buf(b, what);
	check_buf(a, what);
}

static void do_write(struct pair *p, uint32_t len, size_t loff, size_t roff,
		     uint64_t id)
{
	struct end *a = &p->a, *b = &p->b;
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "RDMA_WRITE of %u bytes to offset %zu %s -> %s",
		 len, roff, a->d->name, b->d->name);
	fill(a, loff, len);
	ret = post1(a, id, IBV_WR_RDMA_WRITE, loff, len, raddr_of(b, roff),
		    b->mr->rkey, 0);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return;
	memcpy(b->shadow + roff, a->shadow + loff, len);
	expect_wc(a->scq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
				     .wr_id = id, .qp_num = a->qp->qp_num));
	check_buf(b, what);
}

static void do_read(struct pair *p, uint32_t len, size_t loff, size_t roff,
		    uint64_t id)
{
	struct end *a = &p->a, *b = &p->b;
	char what[96];
	int ret;

	snprintf(what, sizeof(what), "RDMA_READ of %u bytes from offset %zu %s <- %s",
		 len, roff, a->d->name, b->d->name);
	fill(b, roff, len);
	ret = post1(a, id, IBV_WR_RDMA_READ, loff, len, raddr_of(b, roff),
		    b->mr->rkey, 0);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return;
	memcpy(a->shadow + loff, b->shadow + roff, len);
	expect_wc(a->scq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_READ,
				     .wr_id = id, .qp_num = a->qp->qp_num));
	check_buf(a, what);
	check_buf(b, what);
}

static void do_write_imm(struct pair *p, uint32_t len, uint64_t id)
{
	struct end *a = &p->a, *b = &p->b;
	size_t loff = 8192 + 1, roff = 300000 + 3, rcvoff = 600000;
	struct ibv_sge sg = sge_of(a, loff, len);
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = len ? 1 : 0,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xfeed0000u + len),
	};
	char what[96];
	int ret;

	wr.wr.rdma.remote_addr = raddr_of(b, roff);
	wr.wr.rdma.rkey = b->mr->rkey;
	snprintf(what, sizeof(what), "RDMA_WRITE_WITH_IMM of %u bytes %s -> %s",
		 len, a->d->name, b->d->name);
	fill(a, loff, len);
	fill(b, rcvoff, 256);	/* the receive buffer: must stay as it is */
	ret = post_recv1(b, id + 1, rcvoff, 256);
	ret = ret ? ret : post_send_wr(a, &wr);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return;
	memcpy(b->shadow + roff, a->shadow + loff, len);
	expect_wc(a->scq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
				     .wr_id = id, .qp_num = a->qp->qp_num));
	expect_wc(b->rcq, what, &WCX(.status = IBV_WC_SUCCESS,
				     .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
				     .wr_id = id + 1, .qp_num = b->qp->qp_num,
				     .byte_len = len, .wc_flags = IBV_WC_WITH_IMM,
				     .imm = 0xfeed0000u + len,
				     .src_qp = a->qp->qp_num));
	check_buf(b, what);
}

static uint64_t get64(const unsigned char *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static void put64(struct end *e, size_t off, uint64_t v)
{
	memcpy(e->buf + off, &v, 8);
	memcpy(e->shadow + off, &v, 8);
}

static void do_atomic(struct pair *p, bool cas, uint64_t init, uint64_t cmp_add,
		      uint64_t swap, uint64_t id)
{
	struct end *a = &p->a, *b = &p->b;
	size_t roff = 1 << 20, loff = 3 * 4096 + 8;
	struct ibv_sge sg = sge_of(a, loff, 8);
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = cas ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD,
		.send_flags = IBV_SEND_SIGNALED,
	};
	uint64_t after;
	char what[128];
	int ret;

	wr.wr.atomic.remote_addr = raddr_of(b, roff);
	wr.wr.atomic.rkey = b->mr->rkey;
	wr.wr.atomic.compare_add = cmp_add;
	wr.wr.atomic.swap = swap;
	if (cas)
		snprintf(what, sizeof(what), "CMP_AND_SWP(0x%" PRIx64 ": 0x%" PRIx64 " -> 0x%" PRIx64 ")",
			 init, cmp_add, swap);
	else
		snprintf(what, sizeof(what), "FETCH_AND_ADD(0x%" PRIx64 " + 0x%" PRIx64 ")",
			 init, cmp_add);
	put64(b, roff, init);
	fill(a, loff - 8, 24);
	ret = post_send_wr(a, &wr);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return;
	if (cas)
		after = init == cmp_add ? swap : init;
	else
		after = init + cmp_add;
	expect_wc(a->scq, what, &WCX(.status = IBV_WC_SUCCESS,
				     .opcode = cas ? IBV_WC_COMP_SWAP : IBV_WC_FETCH_ADD,
				     .wr_id = id, .qp_num = a->qp->qp_num));
	vt_check(get64(a->buf + loff) == init, "%s: original value 0x%" PRIx64 " returned (got 0x%" PRIx64 ")",
		 what, init, get64(a->buf + loff));
	vt_check(get64(b->buf + roff) == after, "%s: remote now 0x%" PRIx64 " (got 0x%" PRIx64 ")",
		 what, after, get64(b->buf + roff));
	put64(a, loff, init);
	put64(b, roff, after);
	check_buf(a, what);
	check_buf(b, what);
}

static void t_inline(struct pair *p)
{
	struct end *a = &p->a, *b = &p->b;
	unsigned int max = a->cap.max_inline_data;
	unsigned char stackbuf[1024];
	struct ibv_sge sg[2];
	struct ibv_send_wr wr, *bad;
	uint32_t lens[3] = { 1, 100, max };
	int i, ret;

	title("inline data");
	vt_check(max >= 256, "granted max_inline_data %u >= 256 (asked)", max);
	if (max > sizeof(stackbuf))
		max = sizeof(stackbuf);
	for (i = 0; i < 3; i++) {
		uint32_t len = lens[i] > max ? max : lens[i];
		size_t roff = 700000 + i * 1024;
		char what[96];
		unsigned int j;

		snprintf(what, sizeof(what), "inline SEND of %u bytes from the stack", len);
		for (j = 0; j < len; j++)
			stackbuf[j] = (unsigned char)(j * 7 + i);
		memcpy(b->shadow + roff, stackbuf, len);
		ret = post_recv1(b, 0x700 + i, roff, 1024);
		sg[0] = (struct ibv_sge){ .addr = (uintptr_t)stackbuf, .length = len,
					  .lkey = 0 };
		memset(&wr, 0, sizeof(wr));
		wr.wr_id = 0x600 + i;
		wr.sg_list = sg;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
		ret = ret ? ret : ibv_post_send(a->qp, &wr, &bad);
		memset(stackbuf, 0xee, sizeof(stackbuf));	/* reused at once */
		if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
			continue;
		expect_wc(a->scq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND,
					     .wr_id = 0x600 + i, .qp_num = a->qp->qp_num));
		expect_wc(b->rcq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
					     .wr_id = 0x700 + i, .qp_num = b->qp->qp_num,
					     .byte_len = len, .wc_flags = 0));
		check_buf(b, what);
	}

	/* inline RDMA_WRITE gathered from two stack pieces */
	for (i = 0; i < 64; i++)
		stackbuf[i] = (unsigned char)(0x40 + i);
	for (i = 0; i < 64; i++)
		stackbuf[512 + i] = (unsigned char)(0x90 + i);
	memcpy(b->shadow + 800001, stackbuf, 64);
	memcpy(b->shadow + 800001 + 64, stackbuf + 512, 64);
	sg[0] = (struct ibv_sge){ .addr = (uintptr_t)stackbuf, .length = 64 };
	sg[1] = (struct ibv_sge){ .addr = (uintptr_t)(stackbuf + 512), .length = 64 };
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x610;
	wr.sg_list = sg;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_INLINE | IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr_of(b, 800001);
	wr.wr.rdma.rkey = b->mr->rkey;
	ret = ibv_post_send(a->qp, &wr, &bad);
	memset(stackbuf, 0xee, sizeof(stackbuf));
	if (vt_check(!ret, "inline RDMA_WRITE of 2 x 64 bytes: posted (%s)", vt_errname(ret))) {
		expect_wc(a->scq, "inline RDMA_WRITE",
			  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
			       .wr_id = 0x610, .qp_num = a->qp->qp_num));
		check_buf(b, "inline RDMA_WRITE");
	}

	/* more than max_inline_data: refused at post time */
	sg[0] = sge_of(a, 0, a->cap.max_inline_data + 1);
	wr.wr_id = 0x611;
	wr.sg_list = sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	bad = NULL;
	ret = ibv_post_send(a->qp, &wr, &bad);
	vt_contract(ret != 0 && bad == &wr, "inline SEND of max_inline_data + 1 bytes refused: %s",
		    vt_errname(ret));
	if (!ret) {
		struct ibv_wc wc;

		poll_n(a->scq, 1, &wc, POLL_MS);
		vt_info("it completed with %s", ibv_wc_status_str(wc.status));
	}
	vt_check(qp_state(a->qp) == IBV_QPS_RTS, "QP still RTS (%s)", st_name(qp_state(a->qp)));
}

static void t_sge(struct pair *p)
{
	struct end *a = &p->a, *b = &p->b;
	static const uint32_t gl[4] = { 3, 1000, 1, 5000 };	/* gather */
	static const uint32_t sl[3] = { 2000, 7, 6000 };	/* scatter */
	size_t goff[4] = { 100, 20000, 30001, 40000 };
	size_t soff[3] = { 900000, 950001, 960000 };
	struct ibv_sge gs[32], ss[32];
	struct ibv_send_wr wr, *bad;
	size_t pos, k;
	unsigned int n, i, max;
	int ret;

	title("gather and scatter lists");
	/* SEND: 4 gather pieces into 3 scatter pieces */
	for (i = 0; i < 4; i++) {
		fill(a, goff[i], gl[i]);
		gs[i] = sge_of(a, goff[i], gl[i]);
	}
	for (i = 0; i < 3; i++)
		ss[i] = sge_of(b, soff[i], sl[i]);
	/* where each byte of the stream lands */
	pos = 0;
	for (i = 0; i < 4; i++) {
		for (k = 0; k < gl[i]; k++, pos++) {
			size_t q = pos, j = 0;

			while (q >= sl[j]) {
				q -= sl[j];
				j++;
			}
			b->shadow[soff[j] + q] = a->shadow[goff[i] + k];
		}
	}
	ret = post_recv_sges(b, 0x801, ss, 3);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x800;
	wr.sg_list = gs;
	wr.num_sge = 4;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	ret = ret ? ret : ibv_post_send(a->qp, &wr, &bad);
	if (vt_check(!ret, "SEND 4 SGEs (6004 bytes) into a 3-SGE receive: posted (%s)",
		     vt_errname(ret))) {
		expect_wc(a->scq, "4-SGE SEND", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_SEND, .wr_id = 0x800, .qp_num = a->qp->qp_num));
		expect_wc(b->rcq, "3-SGE receive", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RECV, .wr_id = 0x801, .qp_num = b->qp->qp_num,
			  .byte_len = 6004));
		check_buf(b, "gather 4 -> scatter 3");
	}

	/* as many SGEs as granted, 17 bytes each, both ways */
	max = a->cap.max_send_sge;
	if (b->cap.max_recv_sge < max)
		max = b->cap.max_recv_sge;
	vt_contract(max == 32, "granted max_send_sge/max_recv_sge %u (32)", max);
	for (n = 0; n < max; n++) {
		fill(a, 200000 + n * 64, 17);
		gs[n] = sge_of(a, 200000 + n * 64, 17);
		ss[n] = sge_of(b, 1000000 + n * 100 + 1, 17);
		memcpy(b->shadow + 1000000 + n * 100 + 1, a->shadow + 200000 + n * 64, 17);
	}
	ret = post_recv_sges(b, 0x811, ss, max);
	wr.wr_id = 0x810;
	wr.num_sge = max;
	ret = ret ? ret : ibv_post_send(a->qp, &wr, &bad);
	if (vt_check(!ret, "SEND %u SGEs into a %u-SGE receive: posted (%s)", max, max,
		     vt_errname(ret))) {
		expect_wc(a->scq, "max-SGE SEND", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_SEND, .wr_id = 0x810, .qp_num = a->qp->qp_num));
		expect_wc(b->rcq, "max-SGE receive", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RECV, .wr_id = 0x811, .qp_num = b->qp->qp_num,
			  .byte_len = 17 * max));
		check_buf(b, "max SGEs");
	}

	/* RDMA_WRITE gathering 3 pieces into one contiguous range */
	pos = 1100000 + 5;
	for (i = 0; i < 3; i++) {
		fill(a, goff[i + 1], gl[i + 1]);
		gs[i] = sge_of(a, goff[i + 1], gl[i + 1]);
		memcpy(b->shadow + pos, a->shadow + goff[i + 1], gl[i + 1]);
		pos += gl[i + 1];
	}
	wr.wr_id = 0x820;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = raddr_of(b, 1100000 + 5);
	wr.wr.rdma.rkey = b->mr->rkey;
	ret = ibv_post_send(a->qp, &wr, &bad);
	if (vt_check(!ret, "RDMA_WRITE gathering 3 SGEs: posted (%s)", vt_errname(ret))) {
		expect_wc(a->scq, "3-SGE RDMA_WRITE", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RDMA_WRITE, .wr_id = 0x820,
			  .qp_num = a->qp->qp_num));
		check_buf(b, "3-SGE RDMA_WRITE");
	}

	/* RDMA_READ scattering one remote range into 3 local pieces */
	fill(b, 1200000, 6004);
	pos = 0;
	for (i = 0; i < 3; i++) {
		gs[i] = sge_of(a, soff[i] - 800000, sl[i]);
		memcpy(a->shadow + soff[i] - 800000, b->shadow + 1200000 + pos, sl[i]);
		pos += sl[i];
	}
	wr.wr_id = 0x830;
	wr.num_sge = 3;
	wr.opcode = IBV_WR_RDMA_READ;
	wr.wr.rdma.remote_addr = raddr_of(b, 1200000);
	ret = ibv_post_send(a->qp, &wr, &bad);
	if (vt_check(!ret, "RDMA_READ scattering into 3 SGEs: posted (%s)", vt_errname(ret))) {
		expect_wc(a->scq, "3-SGE RDMA_READ", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RDMA_READ, .wr_id = 0x830,
			  .qp_num = a->qp->qp_num));
		check_buf(a, "3-SGE RDMA_READ");
	}
}

/* Unsignaled requests, a chain of 16 in order, FENCE. */
static void t_signaling(struct pair *p)
{
	struct end *a = &p->a, *b = &p->b;
	struct ibv_send_wr wr[16], *bad;
	struct ibv_sge sg[16];
	struct ibv_wc wc[16];
	int i, ret, n;

	title("signaling, ordering, fence");
	for (i = 0; i < 5; i++) {
		fill(a, 400000 + i * 1000, 500);
		sg[i] = sge_of(a, 400000 + i * 1000, 500);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 0x900 + i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].send_flags = i == 4 ? IBV_SEND_SIGNALED : 0;
		wr[i].wr.rdma.remote_addr = raddr_of(b, 1300000 + i * 1000);
		wr[i].wr.rdma.rkey = b->mr->rkey;
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
		memcpy(b->shadow + 1300000 + i * 1000, a->shadow + 400000 + i * 1000, 500);
	}
	ret = ibv_post_send(a->qp, wr, &bad);
	if (vt_check(!ret, "4 unsignaled + 1 signaled RDMA_WRITE in one post: %s",
		     vt_errname(ret))) {
		expect_wc(a->scq, "the signaled one",
			  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
			       .wr_id = 0x904, .qp_num = a->qp->qp_num));
		expect_empty(a->scq, "no completion for the 4 unsignaled writes");
		check_buf(b, "5 writes");
	}

	/* 16 SENDs chained: completions on both sides in posting order */
	for (i = 0; i < 16; i++) {
		fill(a, 500000 + i * 256, 100 + i);
		sg[i] = sge_of(a, 500000 + i * 256, 100 + i);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 0xa00 + i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_SEND;
		wr[i].send_flags = IBV_SEND_SIGNALED;
		wr[i].next = i < 15 ? &wr[i + 1] : NULL;
		post_recv1(b, 0xb00 + i, 1400000 + i * 256, 256);
		memcpy(b->shadow + 1400000 + i * 256, a->shadow + 500000 + i * 256, 100 + i);
	}
	ret = ibv_post_send(a->qp, wr, &bad);
	if (vt_check(!ret, "16 chained SENDs: posted (%s)", vt_errname(ret))) {
		bool in_order = true;

		n = poll_n(a->scq, 16, wc, POLL_MS);
		for (i = 0; i < n; i++)
			if (wc[i].wr_id != 0xa00u + i || wc[i].status != IBV_WC_SUCCESS)
				in_order = false;
		vt_check(n == 16 && in_order, "16 send completions, successful, in posting order (%d)", n);
		n = poll_n(b->rcq, 16, wc, POLL_MS);
		in_order = true;
		for (i = 0; i < n; i++)
			if (wc[i].wr_id != 0xb00u + i || wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].byte_len != 100u + i)
				in_order = false;
		vt_check(n == 16 && in_order,
			 "16 receive completions in order, each message in its own receive (%d)", n);
		check_buf(b, "16 chained SENDs");
	}

	/* READ then FENCEd WRITE of the same range: the read sees the old data */
	fill(b, 1500000, 4096);
	sg[0] = sge_of(a, 600000, 4096);
	sg[1] = sge_of(a, 610000, 4096);
	fill(a, 610000, 4096);
	memcpy(a->shadow + 600000, b->shadow + 1500000, 4096);
	memcpy(b->shadow + 1500000, a->shadow + 610000, 4096);
	for (i = 0; i < 2; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 0xc00 + i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = i ? IBV_WR_RDMA_WRITE : IBV_WR_RDMA_READ;
		wr[i].send_flags = IBV_SEND_SIGNALED | (i ? IBV_SEND_FENCE : 0);
		wr[i].wr.rdma.remote_addr = raddr_of(b, 1500000);
		wr[i].wr.rdma.rkey = b->mr->rkey;
	}
	wr[0].next = &wr[1];
	ret = ibv_post_send(a->qp, wr, &bad);
	if (vt_check(!ret, "RDMA_READ + fenced RDMA_WRITE of one range: posted (%s)",
		     vt_errname(ret))) {
		expect_wc(a->scq, "the READ", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RDMA_READ, .wr_id = 0xc00, .qp_num = a->qp->qp_num));
		expect_wc(a->scq, "the fenced WRITE", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RDMA_WRITE, .wr_id = 0xc01, .qp_num = a->qp->qp_num));
		check_buf(a, "READ before the fenced WRITE returned the old data");
		check_buf(b, "fenced WRITE landed");
	}
}

static void t_sig_all(struct vt_dev *da, struct vt_dev *db)
{
	struct qp_opts o = def_opts;
	struct ibv_send_wr wr[3], *bad;
	struct ibv_sge sg[3];
	struct pair p;
	int i, ret;

	o.sq_sig_all = 1;
	if (!pair_up2(&p, da, db, &o, &def_opts, "sq_sig_all"))
		goto out;
	for (i = 0; i < 3; i++) {
		fill(&p.a, i * 100, 50);
		sg[i] = sge_of(&p.a, i * 100, 50);
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].wr_id = 0xd00 + i;
		wr[i].sg_list = &sg[i];
		wr[i].num_sge = 1;
		wr[i].opcode = IBV_WR_RDMA_WRITE;
		wr[i].wr.rdma.remote_addr = raddr_of(&p.b, 5000 + i * 100);
		wr[i].wr.rdma.rkey = p.b.mr->rkey;
		wr[i].next = i < 2 ? &wr[i + 1] : NULL;
		memcpy(p.b.shadow + 5000 + i * 100, p.a.shadow + i * 100, 50);
	}
	ret = ibv_post_send(p.a.qp, wr, &bad);
	if (vt_check(!ret, "sq_sig_all QP: 3 writes without IBV_SEND_SIGNALED: %s",
		     vt_errname(ret))) {
		for (i = 0; i < 3; i++)
			expect_wc(p.a.scq, "sq_sig_all: completes all the same",
				  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
				       .wr_id = 0xd00 + i, .qp_num = p.a.qp->qp_num));
		check_buf(&p.b, "sq_sig_all writes");
	}
out:
	pair_down(&p);
}

/* A QP connected to itself. */
static void t_self(struct vt_dev *d)
{
	struct qp_opts o = def_opts;
	struct pair p;	/* only p.a is used */
	struct end *e = &p.a;
	int ret;

	memset(&p, 0, sizeof(p));
	title("a QP connected to itself");
	ret = end_create(e, d, &o);
	if (!ret)
		ret = end_connect(e, d, e->qp->qp_num, &o);
	if (!vt_check(!ret, "%s: QP 0x%x connected to itself: %s", d->name,
		      e->qp ? e->qp->qp_num : 0, vt_errname(ret)))
		goto out;
	fill(e, 0, 3000);
	memcpy(e->shadow + 100000, e->shadow, 3000);
	ret = post_recv1(e, 2, 100000, 4096);
	ret = ret ? ret : post1(e, 1, IBV_WR_SEND, 0, 3000, 0, 0, 0);
	if (vt_check(!ret, "self SEND posted: %s", vt_errname(ret))) {
		expect_wc(e->scq, "self SEND", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_SEND, .wr_id = 1, .qp_num = e->qp->qp_num));
		expect_wc(e->rcq, "self SEND received", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RECV, .wr_id = 2, .qp_num = e->qp->qp_num,
			  .byte_len = 3000, .src_qp = e->qp->qp_num));
	}
	fill(e, 200000, 5000);
	memcpy(e->shadow + 300000, e->shadow + 200000, 5000);
	ret = post1(e, 3, IBV_WR_RDMA_WRITE, 200000, 5000, raddr_of(e, 300000),
		    e->mr->rkey, 0);
	if (vt_check(!ret, "self RDMA_WRITE posted: %s", vt_errname(ret)))
		expect_wc(e->scq, "self RDMA_WRITE", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RDMA_WRITE, .wr_id = 3, .qp_num = e->qp->qp_num));
	check_buf(e, "self traffic");
out:
	end_destroy(e);
}

static void t_data(struct vt_dev *da, struct vt_dev *db)
{
	static const uint32_t send_lens[] = { 0, 1, 63, 1024, 4097, 65536 };
	struct pair p;
	unsigned int i;

	title("data transfers");
	if (!pair_up2(&p, da, db, &def_opts, &def_opts, "data"))
		goto out;
	vt_info("QP 0x%x on %s <-> QP 0x%x on %s", p.a.qp->qp_num, da->name,
		p.b.qp->qp_num, db->name);
	for (i = 0; i < sizeof(send_lens) / sizeof(send_lens[0]); i++)
		do_send(&p, send_lens[i], false, 0x100 + 2 * i);
	do_send(&p, 17, true, 0x120);
	do_send(&p, 5000, true, 0x122);
	do_send(&p, 0, true, 0x124);

	do_write(&p, 1, 0, 1000, 0x200);
	do_write(&p, 4096 + 7, 4096 + 3, 1 << 19, 0x201);
	do_write(&p, 131072, 1 << 20, 3, 0x202);
	do_write(&p, 1 << 20, 0, 1 << 20, 0x203);
	do_write(&p, 0, 0, 0, 0x204);
	expect_empty(p.b.rcq, "RDMA_WRITE consumes no receive");

	do_write_imm(&p, 4000, 0x300);
	do_write_imm(&p, 0, 0x302);

	do_read(&p, 1, 100, 100, 0x400);
	do_read(&p, 4096, 1 << 19, 4096, 0x401);
	do_read(&p, 100000, 7, 500001, 0x402);
	do_read(&p, 1 << 20, 1 << 20, 0, 0x403);

	title("atomics");
	do_atomic(&p, true, 0x1111, 0x1111, 0x2222, 0x500);
	do_atomic(&p, true, 0x2222, 0x9999, 0x3333, 0x501);
	do_atomic(&p, false, 0x2222, 5, 0, 0x502);
	do_atomic(&p, false, UINT64_MAX, 2, 0, 0x503);
	do_atomic(&p, true, 0x8000000000000001ull, 0x8000000000000001ull,
		  0x0123456789abcdefull, 0x504);

	t_inline(&p);
	t_sge(&p);
	t_signaling(&p);
	expect_empty(p.a.scq, "A's send CQ after the data tests");
	expect_empty(p.b.rcq, "B's receive CQ after the data tests");
	vt_check(qp_state(p.a.qp) == IBV_QPS_RTS && qp_state(p.b.qp) == IBV_QPS_RTS,
		 "both QPs still RTS");
out:
	pair_down(&p);
	t_sig_all(da, db);
}

/* ---- completion channels ---------------------------------------------------- */

/* Wait up to @ms for an event on @e's channel; 1 if one is pending. */
static int chan_ready(struct end *e, int ms)
{
	struct pollfd pfd = { .fd = e->ch->fd, .events = POLLIN };

	return poll(&pfd, 1, ms) == 1;
}

static void t_events(struct vt_dev *da, struct vt_dev *db)
{
	struct qp_opts o = def_opts;
	struct ibv_cq *ev_cq;
	struct ibv_wc wc;
	void *ev_ctx;
	struct pair p;
	int ret;

	title("completion channels");
	o.channel = true;
	if (!pair_up2(&p, da, db, &o, &o, "events"))
		goto out;

	ret = ibv_req_notify_cq(p.a.scq, 0);
	vt_check(!ret, "req_notify_cq(send CQ, next): %s", vt_errname(ret));
	vt_check(!chan_ready(&p.a, 50), "no event before any completion");
	fill(&p.a, 0, 100);
	memcpy(p.b.shadow + 0, p.a.shadow, 100);
	ret = post1(&p.a, 0xe00, IBV_WR_RDMA_WRITE, 0, 100, raddr_of(&p.b, 0),
		    p.b.mr->rkey, 0);
	if (vt_check(!ret, "RDMA_WRITE posted: %s", vt_errname(ret))) {
		if (vt_check(chan_ready(&p.a, POLL_MS), "completion event within %d ms",
			     POLL_MS)) {
			ret = ibv_get_cq_event(p.a.ch, &ev_cq, &ev_ctx);
			vt_check(!ret && ev_cq == p.a.scq && ev_ctx == &p.a,
				 "ibv_get_cq_event: the send CQ and its cq_context");
			if (!ret)
				ibv_ack_cq_events(ev_cq, 1);
		}
		expect_wc(p.a.scq, "the write", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RDMA_WRITE, .wr_id = 0xe00,
			  .qp_num = p.a.qp->qp_num));
	}
	/* not re-armed: the next completion raises no event */
	ret = post1(&p.a, 0xe01, IBV_WR_RDMA_WRITE, 0, 100, raddr_of(&p.b, 0),
		    p.b.mr->rkey, 0);
	if (!ret && poll_n(p.a.scq, 1, &wc, POLL_MS) == 1)
		vt_check(!chan_ready(&p.a, QUIET_MS), "without re-arming, no event for the next completion");
	else
		vt_bad("second write: %s", vt_errname(ret));
	/* re-armed: the next one does */
	ret = ibv_req_notify_cq(p.a.scq, 0);
	ret = ret ? ret : post1(&p.a, 0xe02, IBV_WR_RDMA_WRITE, 0, 100,
				raddr_of(&p.b, 0), p.b.mr->rkey, 0);
	if (!ret && vt_check(chan_ready(&p.a, POLL_MS), "re-armed: event for the next completion")) {
		ret = ibv_get_cq_event(p.a.ch, &ev_cq, &ev_ctx);
		if (!ret)
			ibv_ack_cq_events(ev_cq, 1);
		poll_n(p.a.scq, 1, &wc, POLL_MS);
	}

	/* solicited only */
	ret = ibv_req_notify_cq(p.b.rcq, 1);
	vt_check(!ret, "req_notify_cq(receive CQ, solicited only): %s", vt_errname(ret));
	post_recv1(&p.b, 0xe11, 10000, 100);
	post_recv1(&p.b, 0xe12, 10100, 100);
	memcpy(p.b.shadow + 10000, p.a.shadow, 10);
	memcpy(p.b.shadow + 10100, p.a.shadow, 10);
	ret = post1(&p.a, 0xe10, IBV_WR_SEND, 0, 10, 0, 0, 0);
	if (!ret && poll_n(p.b.rcq, 1, &wc, POLL_MS) == 1) {
		vt_check(wc.wr_id == 0xe11 && wc.status == IBV_WC_SUCCESS,
			 "unsolicited SEND received");
		vt_check(!chan_ready(&p.b, QUIET_MS), "no event for an unsolicited SEND");
	} else {
		vt_bad("unsolicited SEND: %s / no completion", vt_errname(ret));
	}
	ret = post1(&p.a, 0xe13, IBV_WR_SEND, 0, 10, 0, 0, IBV_SEND_SOLICITED);
	if (vt_check(!ret, "SEND with IBV_SEND_SOLICITED posted: %s", vt_errname(ret)) &&
	    vt_check(chan_ready(&p.b, POLL_MS), "event for the solicited SEND")) {
		ret = ibv_get_cq_event(p.b.ch, &ev_cq, &ev_ctx);
		vt_check(!ret && ev_cq == p.b.rcq && ev_ctx == &p.b,
			 "ibv_get_cq_event: the receive CQ");
		if (!ret)
			ibv_ack_cq_events(ev_cq, 1);
		expect_wc(p.b.rcq, "the solicited SEND", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RECV, .wr_id = 0xe12, .qp_num = p.b.qp->qp_num,
			  .byte_len = 10));
	}
	{
		struct ibv_wc two[2];

		poll_n(p.a.scq, 2, two, POLL_MS);	/* the two SENDs */
	}
	check_buf(&p.b, "writes under notification");
out:
	pair_down(&p);
}

/* ---- error completions ------------------------------------------------------ */

/*
 * Post @wr (which must fail with @st at A) followed by a signaled SEND and
 * an unsignaled RDMA_WRITE; check A's completions: the error, then both
 * flushed; A's two pre-posted receives flushed; A in ERR.
 */
static uint64_t err_ms;	/* post to error completion, last expect_err_and_flush() */

static void expect_err_and_flush(struct pair *p, const char *what,
				 struct ibv_send_wr *wr, int st)
{
	struct end *a = &p->a;
	struct ibv_send_wr more[2], *bad;
	struct ibv_sge sg = sge_of(a, 0, 16);
	char d[160];
	int ret, s;

	post_recv1(a, 0xf1, 0, 64);
	post_recv1(a, 0xf2, 64, 64);
	memset(more, 0, sizeof(more));
	more[0].wr_id = 0xf3;
	more[0].sg_list = &sg;
	more[0].num_sge = 1;
	more[0].opcode = IBV_WR_SEND;
	more[0].send_flags = IBV_SEND_SIGNALED;
	more[0].next = &more[1];
	more[1] = more[0];
	more[1].wr_id = 0xf4;
	more[1].opcode = IBV_WR_RDMA_WRITE;
	more[1].send_flags = 0;
	more[1].wr.rdma.remote_addr = raddr_of(&p->b, 0);
	more[1].wr.rdma.rkey = p->b.mr->rkey;
	more[1].next = NULL;
	wr->next = more;
	err_ms = now_ms();
	ret = ibv_post_send(a->qp, wr, &bad);
	if (!vt_check(!ret, "%s: posted with 2 more behind it (%s)", what, vt_errname(ret)))
		return;
	snprintf(d, sizeof(d), "%s", what);
	expect_wc(a->scq, d, &WCX(.status = st, .wr_id = wr->wr_id,
				  .qp_num = a->qp->qp_num));
	err_ms = now_ms() - err_ms;
	snprintf(d, sizeof(d), "%s: the signaled SEND behind it", what);
	expect_wc(a->scq, d, &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0xf3,
				  .qp_num = a->qp->qp_num));
	snprintf(d, sizeof(d), "%s: the unsignaled WRITE behind it", what);
	expect_wc(a->scq, d, &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0xf4,
				  .qp_num = a->qp->qp_num));
	snprintf(d, sizeof(d), "%s: A's receive 1", what);
	expect_wc(a->rcq, d, &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0xf1,
				  .qp_num = a->qp->qp_num));
	snprintf(d, sizeof(d), "%s: A's receive 2", what);
	expect_wc(a->rcq, d, &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0xf2,
				  .qp_num = a->qp->qp_num));
	s = qp_state(a->qp);
	vt_check(s == IBV_QPS_ERR, "%s: requester QP in ERR (%s)", what, st_name(s));
	snprintf(d, sizeof(d), "%s: A's send CQ afterwards", what);
	expect_empty(a->scq, d);
}

/* Report the responder's state and what its CQ got (contract: unspecified). */
static void note_responder(struct pair *p, const char *what)
{
	struct ibv_wc wc[4];
	int n, i;

	n = poll_n(p->b.rcq, 4, wc, QUIET_MS);
	vt_info("%s: responder QP %s, %d receive completion(s)%s", what,
		st_name(qp_state(p->b.qp)), n, n ? ":" : "");
	for (i = 0; i < n; i++)
		vt_info("  wr_id 0x%" PRIx64 " %s", wc[i].wr_id,
			ibv_wc_status_str(wc[i].status));
}

enum err_kind {
	E_LKEY, E_LLEN, E_LRIGHTS_READ, E_LRIGHTS_ATOMIC,
	E_RKEY, E_RRANGE, E_MR_NO_RW, E_MR_NO_RR, E_MR_NO_RA,
	E_QP_NO_RW, E_QP_NO_RR, E_QP_NO_RA, E_LKEY_KERNEL, E_RKEY_KERNEL,
};

static const char *const err_desc[] = {
	[E_LKEY] = "SEND with a bad lkey",
	[E_LLEN] = "SEND beyond the end of the local MR",
	[E_LRIGHTS_READ] = "RDMA_READ into a local MR without LOCAL_WRITE",
	[E_LRIGHTS_ATOMIC] = "FETCH_AND_ADD result into a local MR without LOCAL_WRITE",
	[E_RKEY] = "RDMA_WRITE with a bad rkey",
	[E_RRANGE] = "RDMA_WRITE beyond the end of the remote MR",
	[E_MR_NO_RW] = "RDMA_WRITE to an MR without REMOTE_WRITE",
	[E_MR_NO_RR] = "RDMA_READ of an MR without REMOTE_READ",
	[E_MR_NO_RA] = "atomic on an MR without REMOTE_ATOMIC",
	[E_QP_NO_RW] = "RDMA_WRITE to a QP without REMOTE_WRITE in qp_access_flags",
	[E_QP_NO_RR] = "RDMA_READ from a QP without REMOTE_READ in qp_access_flags",
	[E_QP_NO_RA] = "atomic at a QP without REMOTE_ATOMIC in qp_access_flags",
	[E_LKEY_KERNEL] = "SEND with the kernel's reserved lkey (IBK_LOCAL_DMA_LKEY)",
	[E_RKEY_KERNEL] = "RDMA_WRITE with the kernel's reserved lkey as rkey",
};

/* softhca's reserved lkey (SHCA_LOCAL_DMA_LKEY): kernel PDs only. */
#define KERNEL_LOCAL_DMA_LKEY 0xffU

static void t_access_err(struct vt_dev *da, struct vt_dev *db, enum err_kind k)
{
	struct qp_opts ob = def_opts;
	const char *what = err_desc[k];
	struct ibv_mr *xmr = NULL;
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct pair p;
	int st;

	if (k == E_QP_NO_RW)
		ob.access = ACC_ALL & ~IBV_ACCESS_REMOTE_WRITE;
	else if (k == E_QP_NO_RR)
		ob.access = ACC_ALL & ~IBV_ACCESS_REMOTE_READ;
	else if (k == E_QP_NO_RA)
		ob.access = ACC_ALL & ~IBV_ACCESS_REMOTE_ATOMIC;
	if (!pair_up2(&p, da, db, &def_opts, &ob, what))
		goto out;
	fill(&p.b, 0, 4096);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0xbad0 + k;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.send_flags = IBV_SEND_SIGNALED;
	sg = sge_of(&p.a, 4096, 64);
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.wr.rdma.remote_addr = raddr_of(&p.b, 0);
	wr.wr.rdma.rkey = p.b.mr->rkey;
	st = IBV_WC_REM_ACCESS_ERR;
	switch (k) {
	case E_LKEY:
		wr.opcode = IBV_WR_SEND;
		sg.lkey ^= 0x55aa00;
		st = IBV_WC_LOC_PROT_ERR;
		break;
	case E_LKEY_KERNEL:
		/* Any address would do for the kernel: a kernel one. */
		wr.opcode = IBV_WR_SEND;
		sg.lkey = KERNEL_LOCAL_DMA_LKEY;
		sg.addr = 0xffffffff81000000ULL;
		st = IBV_WC_LOC_PROT_ERR;
		break;
	case E_RKEY_KERNEL:
		wr.wr.rdma.rkey = KERNEL_LOCAL_DMA_LKEY;
		wr.wr.rdma.remote_addr = 0xffffffff81000000ULL;
		break;
	case E_LLEN:
		wr.opcode = IBV_WR_SEND;
		sg = sge_of(&p.a, BUF_LEN - 32, 64);
		st = IBV_WC_LOC_PROT_ERR;
		break;
	case E_LRIGHTS_READ:
	case E_LRIGHTS_ATOMIC:
		xmr = ibv_reg_mr(p.a.d->pd, p.a.buf, 8192, 0);
		if (!xmr) {
			vt_bad("%s: reg_mr: %s", what, vt_errname(errno));
			goto out;
		}
		sg.lkey = xmr->lkey;
		sg.addr = (uintptr_t)p.a.buf;
		sg.length = 8;
		if (k == E_LRIGHTS_READ) {
			wr.opcode = IBV_WR_RDMA_READ;
		} else {
			wr.opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			wr.wr.atomic.remote_addr = raddr_of(&p.b, 0);
			wr.wr.atomic.rkey = p.b.mr->rkey;
			wr.wr.atomic.compare_add = 1;
		}
		st = IBV_WC_LOC_PROT_ERR;
		break;
	case E_RKEY:
		wr.wr.rdma.rkey ^= 0x55aa00;
		break;
	case E_RRANGE:
		wr.wr.rdma.remote_addr = raddr_of(&p.b, BUF_LEN - 32);
		break;
	case E_MR_NO_RW:
	case E_MR_NO_RR:
	case E_MR_NO_RA:
		xmr = ibv_reg_mr(p.b.d->pd, p.b.buf, 8192,
				 k == E_MR_NO_RW ? IBV_ACCESS_LOCAL_WRITE |
						   IBV_ACCESS_REMOTE_READ |
						   IBV_ACCESS_REMOTE_ATOMIC :
				 k == E_MR_NO_RR ? IBV_ACCESS_LOCAL_WRITE |
						   IBV_ACCESS_REMOTE_WRITE |
						   IBV_ACCESS_REMOTE_ATOMIC :
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ);
		if (!xmr) {
			vt_bad("%s: reg_mr: %s", what, vt_errname(errno));
			goto out;
		}
		wr.wr.rdma.rkey = xmr->rkey;
		/* fall through */
	case E_QP_NO_RW:
	case E_QP_NO_RR:
	case E_QP_NO_RA:
		if (k == E_MR_NO_RR || k == E_QP_NO_RR) {
			wr.opcode = IBV_WR_RDMA_READ;
		} else if (k == E_MR_NO_RA || k == E_QP_NO_RA) {
			uint32_t rkey = wr.wr.rdma.rkey;

			wr.opcode = IBV_WR_ATOMIC_CMP_AND_SWP;
			sg.length = 8;
			wr.wr.atomic.remote_addr = raddr_of(&p.b, 0);
			wr.wr.atomic.rkey = rkey;
			wr.wr.atomic.compare_add = 0;
			wr.wr.atomic.swap = 1;
		}
		break;
	}
	/*
	 * rxe completes local errors as flushes; the IB spec answers a QP
	 * without the remote right with an Invalid Request NAK.
	 */
	in_contract = k == E_LKEY || k == E_LKEY_KERNEL || k == E_LLEN ||
		      k == E_LRIGHTS_READ ||
		      k == E_LRIGHTS_ATOMIC || k == E_QP_NO_RW ||
		      k == E_QP_NO_RR || k == E_QP_NO_RA;
	expect_err_and_flush(&p, what, &wr, st);
	in_contract = false;
	if (k == E_LRIGHTS_ATOMIC) {
		/* whether the remote atomic ran first is not specified */
		vt_info("%s: remote value now 0x%" PRIx64 " (was 0x%" PRIx64 ")", what,
			get64(p.b.buf), get64(p.b.shadow));
		memcpy(p.b.shadow, p.b.buf, 8);
	}
	check_buf(&p.b, what);	/* nothing reached the responder's memory */
	if (st == IBV_WC_REM_ACCESS_ERR)
		note_responder(&p, what);
	else
		vt_check(qp_state(p.b.qp) == IBV_QPS_RTS && expect_empty(p.b.rcq, "responder"),
			 "%s: responder untouched, still RTS", what);
out:
	if (xmr)
		ibv_dereg_mr(xmr);
	pair_down(&p);
}

/* SEND larger than the receive, and a receive with a bad lkey. */
static void t_recv_err(struct vt_dev *da, struct vt_dev *db, bool badlkey)
{
	const char *what = badlkey ? "SEND into a receive with a bad lkey" :
				     "SEND larger than the posted receive";
	struct ibv_sge rs;
	struct ibv_wc wc;
	struct pair p;
	int ret, s;

	if (!pair_up2(&p, da, db, &def_opts, &def_opts, what))
		goto out;
	rs = sge_of(&p.b, 0, 100);
	if (badlkey)
		rs.lkey ^= 0x33cc00;
	ret = post_recv_sges(&p.b, 0x71, &rs, 1);
	ret = ret ? ret : post_recv1(&p.b, 0x72, 200, 100);
	ret = ret ? ret : post_recv1(&p.b, 0x73, 400, 100);
	fill(&p.a, 0, 200);
	ret = ret ? ret : post1(&p.a, 0x70, IBV_WR_SEND, 0, badlkey ? 50 : 101, 0, 0, 0);
	ret = ret ? ret : post1(&p.a, 0x74, IBV_WR_SEND, 0, 10, 0, 0, 0);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		goto out;
	in_contract = true;	/* rxe: REM_OP_ERR and LOC_QP_OP_ERR */
	expect_wc(p.a.scq, what, &WCX(.status = badlkey ? IBV_WC_REM_OP_ERR :
							  IBV_WC_REM_INV_REQ_ERR,
				      .wr_id = 0x70, .qp_num = p.a.qp->qp_num));
	expect_wc(p.a.scq, "the SEND behind it",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x74, .qp_num = p.a.qp->qp_num));
	expect_wc(p.b.rcq, "responder's receive",
		  &WCX(.status = badlkey ? IBV_WC_LOC_PROT_ERR : IBV_WC_LOC_LEN_ERR,
		       .wr_id = 0x71, .qp_num = p.b.qp->qp_num));
	expect_wc(p.b.rcq, "responder's next receive",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x72, .qp_num = p.b.qp->qp_num));
	expect_wc(p.b.rcq, "responder's third receive",
		  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x73, .qp_num = p.b.qp->qp_num));
	in_contract = false;
	s = qp_state(p.a.qp);
	vt_check(s == IBV_QPS_ERR, "%s: requester in ERR (%s)", what, st_name(s));
	s = qp_state(p.b.qp);
	vt_check(s == IBV_QPS_ERR, "%s: responder in ERR (%s)", what, st_name(s));
	/* the responder's memory outside the receive is untouched */
	if (badlkey) {
		check_buf(&p.b, what);
	} else {
		size_t i;
		bool outside = true;

		for (i = 100; i < BUF_LEN; i++)
			if (p.b.buf[i] != p.b.shadow[i])
				outside = false;
		vt_check(outside, "%s: nothing written beyond the 100-byte receive", what);
	}
	ret = post1(&p.b, 0x75, IBV_WR_SEND, 0, 10, 0, 0, 0);
	if (vt_check(!ret, "responder in ERR: post_send accepted (%s)", vt_errname(ret)))
		expect_wc(p.b.scq, "responder's send posted in ERR",
			  &WCX(.status = IBV_WC_WR_FLUSH_ERR, .wr_id = 0x75,
			       .qp_num = p.b.qp->qp_num));
	vt_check(poll_n(p.a.rcq, 1, &wc, QUIET_MS) == 0, "requester's receive CQ empty");
out:
	pair_down(&p);
}

/* No receive at the responder: RNR retries, then RNR_RETRY_EXC_ERR. */
static void t_rnr(struct vt_dev *da, struct vt_dev *db)
{
	struct qp_opts oa = def_opts, ob = def_opts;
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct pair p;
	int ret;

	title("receiver not ready");
	oa.rnr_retry = 1;
	ob.min_rnr_timer = 1;	/* 0.01 ms */
	if (!pair_up2(&p, da, db, &oa, &ob, "RNR"))
		goto out;
	memset(&wr, 0, sizeof(wr));
	sg = sge_of(&p.a, 0, 32);
	wr.wr_id = 0x60;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	expect_err_and_flush(&p, "SEND with no receive posted, rnr_retry 1", &wr,
			     IBV_WC_RNR_RETRY_EXC_ERR);
	vt_info("RNR_RETRY_EXC_ERR %" PRIu64 " ms after the post", err_ms);
	ret = qp_state(p.b.qp);
	vt_check(ret == IBV_QPS_RTS, "responder still RTS (%s)", st_name(ret));
	expect_empty(p.b.rcq, "responder's receive CQ");
	pair_down(&p);

	/* rnr_retry 7 (infinite): the SEND waits for the receive */
	if (!pair_up2(&p, da, db, &def_opts, &def_opts, "RNR, infinite"))
		goto out;
	fill(&p.a, 0, 32);
	memcpy(p.b.shadow + 4096, p.a.shadow, 32);
	ret = post1(&p.a, 0x61, IBV_WR_SEND, 0, 32, 0, 0, 0);
	if (vt_check(!ret, "SEND with no receive posted, rnr_retry 7: posted (%s)",
		     vt_errname(ret))) {
		expect_empty(p.a.scq, "not completed while no receive is posted");
		ret = post_recv1(&p.b, 0x62, 4096, 64);
		vt_check(!ret, "receive posted %d ms later: %s", QUIET_MS, vt_errname(ret));
		expect_wc(p.a.scq, "the waiting SEND", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_SEND, .wr_id = 0x61, .qp_num = p.a.qp->qp_num));
		expect_wc(p.b.rcq, "the late receive", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RECV, .wr_id = 0x62, .qp_num = p.b.qp->qp_num,
			  .byte_len = 32));
		check_buf(&p.b, "SEND after RNR waits");
	}
out:
	pair_down(&p);
}

/*
 * The peer cannot answer: missing, not RTR/RTS, or connected elsewhere.
 * Transport retries, then RETRY_EXC_ERR.
 */
static void t_retry(struct vt_dev *da, struct vt_dev *db)
{
	static const char *const how[] = {
		"destroyed", "in RESET", "in INIT", "in ERR", "connected to another QP",
	};
	struct qp_opts oa = def_opts;
	struct ibv_qp_attr attr;
	struct ibv_send_wr wr;
	struct ibv_sge sg;
	struct end c;
	struct pair p;
	char what[96];
	unsigned int i;

	title("peer unreachable: transport retries");
	oa.timeout = 10;	/* 4 ms */
	oa.retry_cnt = 2;
	for (i = 0; i < 5; i++) {
		memset(&p, 0, sizeof(p));
		memset(&c, 0, sizeof(c));
		snprintf(what, sizeof(what), "SEND to a peer QP %s", how[i]);
		if (end_create(&p.a, da, &oa) || end_create(&p.b, db, &def_opts)) {
			vt_bad("%s: creating QPs: %s", what, vt_errname(errno));
			pair_down(&p);
			continue;
		}
		if (end_connect(&p.a, db, p.b.qp->qp_num, &oa)) {
			vt_bad("%s: connecting A: %s", what, vt_errname(errno));
			pair_down(&p);
			continue;
		}
		switch (i) {
		case 0:
			ibv_destroy_qp(p.b.qp);
			p.b.qp = NULL;
			break;
		case 1:
			break;
		case 2:
			qp_to_init(p.b.qp, ACC_ALL);
			break;
		case 3:
			end_connect(&p.b, da, p.a.qp->qp_num, &def_opts);
			memset(&attr, 0, sizeof(attr));
			attr.qp_state = IBV_QPS_ERR;
			ibv_modify_qp(p.b.qp, &attr, IBV_QP_STATE);
			break;
		case 4:
			if (end_create(&c, da, &def_opts) ||
			    end_connect(&p.b, da, c.qp->qp_num, &def_opts)) {
				vt_bad("%s: third QP: %s", what, vt_errname(errno));
				end_destroy(&c);
				pair_down(&p);
				continue;
			}
			break;
		}
		if (p.b.qp)
			post_recv1(&p.b, 0x41, 0, 64);
		memset(&wr, 0, sizeof(wr));
		sg = sge_of(&p.a, 0, 32);
		wr.wr_id = 0x40 + i;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		if (i == 4 && on_wire) {
			/*
			 * On the wire nothing tells B who sent the SEND (the
			 * BTH names only the destination QP): B takes it with
			 * the PSN it expects and acknowledges to the QP it is
			 * connected to; A never hears back.
			 */
			expect_err_and_flush(&p, what, &wr, IBV_WC_RETRY_EXC_ERR);
			expect_wc(p.b.rcq, "on the wire, B took the SEND",
				  &WCX(.status = IBV_WC_SUCCESS,
				       .opcode = IBV_WC_RECV, .wr_id = 0x41,
				       .qp_num = p.b.qp->qp_num, .byte_len = 32));
		} else if (i == 4 && !strict) {
			/*
			 * On a real fabric (and rxe) nothing tells a
			 * responder who sent a packet: it is accepted.
			 */
			struct ibv_send_wr *bad;
			struct ibv_wc wc;

			ibv_post_send(p.a.qp, &wr, &bad);
			if (poll_n(p.a.scq, 1, &wc, POLL_MS) == 1 &&
			    wc.status != IBV_WC_RETRY_EXC_ERR)
				note_differs("%s: wc %s", what, ibv_wc_status_str(wc.status));
		} else {
			expect_err_and_flush(&p, what, &wr, IBV_WC_RETRY_EXC_ERR);
			vt_info("RETRY_EXC_ERR %" PRIu64 " ms after the post (timeout 4 ms, retry_cnt 2)",
				err_ms);
		}
		if (p.b.qp && i != 3 && (i != 4 || (strict && !on_wire)))
			expect_empty(p.b.rcq, "nothing delivered to the peer");
		end_destroy(&c);
		pair_down(&p);
	}
}

/* Index of an IPv4-mapped RoCE v2 GID of @d (its value in @gid), or -1. */
static int ipv4_gid(struct vt_dev *d, union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(d->ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		struct ibv_gid_entry ent;

		if (ibv_query_gid_ex(d->ctx, 1, i, &ent, 0) ||
		    ent.gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    !vt_all_bytes(ent.gid.raw, 10, 0) ||
		    ent.gid.raw[10] != 0xff || ent.gid.raw[11] != 0xff)
			continue;
		*gid = ent.gid;
		return i;
	}
	return -1;
}

/*
 * A SEND between QPs connected through IPv4-mapped GIDs (the rest of the
 * program uses link-local ones).
 */
static void t_ipv4_gid(struct vt_dev *da, struct vt_dev *db)
{
	struct vt_dev a4 = *da, b4 = *db;
	struct pair p;
	int ret;

	title("IPv4-mapped GIDs");
	a4.gid_idx = ipv4_gid(da, &a4.gid);
	b4.gid_idx = ipv4_gid(db, &b4.gid);
	if (!vt_check(a4.gid_idx >= 0 && b4.gid_idx >= 0,
		      "IPv4-mapped RoCE v2 GIDs: %s index %d, %s index %d", da->name,
		      a4.gid_idx, db->name, b4.gid_idx))
		return;
	if (!pair_up2(&p, &a4, &b4, &def_opts, &def_opts, "IPv4-mapped GIDs"))
		goto out;
	fill(&p.a, 0, 100);
	memcpy(p.b.shadow + 4096, p.a.shadow, 100);
	ret = post_recv1(&p.b, 2, 4096, 100);
	ret = ret ? ret : post1(&p.a, 1, IBV_WR_SEND, 0, 100, 0, 0, 0);
	if (vt_check(!ret, "SEND over IPv4-mapped GIDs: posted (%s)", vt_errname(ret))) {
		expect_wc(p.a.scq, "SEND over IPv4-mapped GIDs", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_SEND, .wr_id = 1, .qp_num = p.a.qp->qp_num));
		expect_wc(p.b.rcq, "its receive", &WCX(.status = IBV_WC_SUCCESS,
			  .opcode = IBV_WC_RECV, .wr_id = 2, .qp_num = p.b.qp->qp_num,
			  .byte_len = 100));
		check_buf(&p.b, "SEND over IPv4-mapped GIDs");
	}
out:
	pair_down(&p);
}


/* ---- extended verbs: ibv_qp_ex and ibv_cq_ex ------------------------------ */

/* softhca's resource types for the allocators of a parent domain. */
enum { SHCA_TEST_RES_QP = 1, SHCA_TEST_RES_QP_WR = 2, SHCA_TEST_RES_CQ = 3 };

#define RC_SEND_OPS (IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM | \
		     IBV_QP_EX_WITH_SEND_WITH_INV | IBV_QP_EX_WITH_RDMA_WRITE | \
		     IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | IBV_QP_EX_WITH_RDMA_READ | \
		     IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
		     IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/*
 * Read @n completions of @cq with ibv_start_poll/ibv_next_poll/ibv_end_poll
 * and the ibv_wc_read_* accessors into @wc (the fields ibv_poll_cq fills).
 */
static int poll_ex(struct ibv_cq *cq, int n, struct ibv_wc *wc)
{
	struct ibv_cq_ex *cx = (struct ibv_cq_ex *)cq;
	struct ibv_poll_cq_attr pa = {};
	uint64_t end = now_ms() + POLL_MS;
	int got = 0, ret;

	while (got < n && now_ms() < end) {
		ret = ibv_start_poll(cx, &pa);
		if (ret == ENOENT) {
			usleep(1000);
			continue;
		}
		if (ret) {
			vt_bad("ibv_start_poll: %s", vt_errname(ret));
			return got;
		}
		do {
			struct ibv_wc *w = &wc[got++];

			memset(w, 0, sizeof(*w));
			w->wr_id = cx->wr_id;
			w->status = cx->status;
			w->opcode = ibv_wc_read_opcode(cx);
			w->byte_len = ibv_wc_read_byte_len(cx);
			w->qp_num = ibv_wc_read_qp_num(cx);
			w->src_qp = ibv_wc_read_src_qp(cx);
			w->wc_flags = ibv_wc_read_wc_flags(cx);
			w->sl = ibv_wc_read_sl(cx);
			if (w->wc_flags & IBV_WC_WITH_IMM)
				w->imm_data = ibv_wc_read_imm_data(cx);
			if (w->wc_flags & IBV_WC_WITH_INV)
				w->invalidated_rkey = ibv_wc_read_invalidated_rkey(cx);
		} while (got < n && ibv_next_poll(cx) == 0);
		ibv_end_poll(cx);
	}
	return got;
}

/* A batch that must fail at ibv_wr_complete() with @err and post nothing. */
static void expect_batch_refused(struct pair *p, const char *what, int err, int ret)
{
	vt_contract(ret == err, "%s: ibv_wr_complete %s (%s)", what,
		    vt_errname(ret), vt_errname(err));
	expect_empty(p->a.scq, what);
	expect_empty(p->b.rcq, what);
}

/* ibv_create_cq_ex() with @ca must fail with @err (softhca's contract). */
static void expect_cq_ex_refused(struct vt_dev *d, struct ibv_cq_init_attr_ex *ca,
				 int err, const char *what)
{
	struct ibv_cq_ex *cqx = ibv_create_cq_ex(d->ctx, ca);

	vt_contract(!cqx && errno == err, "create_cq_ex %s: %s (%s)", what,
		    cqx ? "created" : vt_errname(errno), vt_errname(err));
	if (cqx)
		ibv_destroy_cq(ibv_cq_ex_to_cq(cqx));
}

/* ibv_create_qp_ex() with @iax must fail with EOPNOTSUPP. */
static void expect_qp_ex_refused(struct vt_dev *d, struct ibv_qp_init_attr_ex *iax,
				 const char *what)
{
	struct ibv_qp *qp = ibv_create_qp_ex(d->ctx, iax);

	vt_contract(!qp && errno == EOPNOTSUPP, "create_qp_ex %s: %s (EOPNOTSUPP)",
		    what, qp ? "created" : vt_errname(errno));
	if (qp)
		ibv_destroy_qp(qp);
}

static void t_qp_ex(struct vt_dev *da, struct vt_dev *db)
{
	const size_t atom = 1 << 20;
	struct qp_opts o = def_opts;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct ibv_qp_init_attr_ex iax;
	struct ibv_data_buf bufs[2];
	unsigned char inl[40], inl_a[24], inl_b[40];
	struct ibv_wc wc[8];
	struct ibv_sge sl[3];
	struct ibv_qp_ex *qx;
	struct pair p;
	int ret, n, i;
	uint32_t ak, bk;

	title("extended verbs: ibv_wr_* work requests, ibv_start_poll completions");
	if (!strict) {
		/*
		 * Not compared: with rdma_rxe of Debian's 6.12 every request of
		 * the first batch completed flushed, and the misuse cases below
		 * (a setter before any request) are undefined for rxe, which
		 * then crashed the program. ibv_rc_pingpong -N runs on both.
		 */
		vt_info("%s: the ibv_wr_* batch checks are softhca's; not run here",
			da->name);
		return;
	}
	o.cq_ex = true;
	o.send_ops = RC_SEND_OPS;
	if (!pair_up2(&p, da, db, &o, &o, "qp_ex"))
		goto out;
	qx = ibv_qp_to_qp_ex(p.a.qp);
	if (!vt_check(qx != NULL, "ibv_qp_to_qp_ex of a QP made with send_ops_flags"))
		goto out;
	ak = p.a.mr->lkey;
	bk = p.b.mr->rkey;
	fill(&p.a, 0, 65536);
	fill(&p.b, 512 << 10, 4096);
	put64(&p.b, atom, 100);
	for (i = 0; i < (int)sizeof(inl); i++)
		inl[i] = (unsigned char)(0xa0 + i);
	memset(inl_a, 0x3c, sizeof(inl_a));
	memset(inl_b, 0xc3, sizeof(inl_b));
	ret = post_recv1(&p.b, 0x300, 0, 4096);
	ret = ret ? ret : post_recv1(&p.b, 0x301, 4096, 4096);
	ret = ret ? ret : post_recv1(&p.b, 0x302, 8192, 0);
	if (!vt_check(!ret, "qp_ex: receives posted (%s)", vt_errname(ret)))
		goto out;

	/* Every RC operation in one batch, one command. */
	ibv_wr_start(qx);
	qx->wr_flags = IBV_SEND_SIGNALED;
	qx->wr_id = 0x200;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, 0), 1000);
	qx->wr_id = 0x201;
	ibv_wr_send_imm(qx, htonl(0x1234));
	ibv_wr_set_inline_data(qx, inl, sizeof(inl));
	memset(inl, 0, sizeof(inl));	/* copied when set: reusable at once */
	qx->wr_id = 0x202;
	ibv_wr_rdma_write(qx, bk, raddr_of(&p.b, 64 << 10));
	sl[0] = sge_of(&p.a, 100, 300);
	sl[1] = sge_of(&p.a, 5000, 1);
	sl[2] = sge_of(&p.a, 20000, 3000);
	ibv_wr_set_sge_list(qx, 3, sl);
	qx->wr_id = 0x203;
	ibv_wr_rdma_write_imm(qx, bk, raddr_of(&p.b, 128 << 10), htonl(0xabcd));
	bufs[0] = (struct ibv_data_buf){ .addr = inl_a, .length = sizeof(inl_a) };
	bufs[1] = (struct ibv_data_buf){ .addr = inl_b, .length = sizeof(inl_b) };
	ibv_wr_set_inline_data_list(qx, 2, bufs);
	qx->wr_id = 0x204;
	ibv_wr_rdma_read(qx, bk, raddr_of(&p.b, 512 << 10));
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, 256 << 10), 4096);
	qx->wr_id = 0x205;
	ibv_wr_atomic_fetch_add(qx, bk, raddr_of(&p.b, atom), 5);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, atom), 8);
	qx->wr_id = 0x206;
	ibv_wr_atomic_cmp_swp(qx, bk, raddr_of(&p.b, atom), 105, 7);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, atom + 8), 8);
	ret = ibv_wr_complete(qx);
	if (!vt_check(!ret, "qp_ex: a batch of SEND, SEND_IMM (inline), WRITE (3 SGEs), "
		      "WRITE_IMM (inline list), READ, FETCH_ADD, CMP_SWP: posted (%s)",
		      vt_errname(ret)))
		goto out;

	n = poll_ex(p.a.scq, 7, wc);
	vt_check(n == 7, "qp_ex: 7 send completions through ibv_start_poll/ibv_next_poll (%d)", n);
	{
		static const int op[7] = { IBV_WC_SEND, IBV_WC_SEND, IBV_WC_RDMA_WRITE,
					   IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ,
					   IBV_WC_FETCH_ADD, IBV_WC_COMP_SWAP };

		for (i = 0; i < n; i++)
			check_wc("qp_ex: send completion, read with ibv_wc_read_*", &wc[i],
				 &WCX(.status = IBV_WC_SUCCESS, .opcode = op[i],
				      .wr_id = 0x200 + i, .qp_num = p.a.qp->qp_num,
				      .byte_len = i == 4 ? 4096 : i >= 5 ? 8 : -1));
	}
	n = poll_ex(p.b.rcq, 3, wc);
	vt_check(n == 3, "qp_ex: 3 receive completions (%d)", n);
	if (n == 3) {
		check_wc("qp_ex: SEND received", &wc[0],
			 &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .wr_id = 0x300,
			      .qp_num = p.b.qp->qp_num, .byte_len = 1000, .wc_flags = 0));
		check_wc("qp_ex: SEND_IMM of inline data received", &wc[1],
			 &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .wr_id = 0x301,
			      .qp_num = p.b.qp->qp_num, .byte_len = 40,
			      .wc_flags = IBV_WC_WITH_IMM, .imm = 0x1234));
		check_wc("qp_ex: WRITE_IMM received", &wc[2],
			 &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV_RDMA_WITH_IMM,
			      .wr_id = 0x302, .qp_num = p.b.qp->qp_num, .byte_len = 64,
			      .wc_flags = IBV_WC_WITH_IMM, .imm = 0xabcd));
	}
	/* What the bytes must be now. */
	memcpy(p.b.shadow, p.a.buf, 1000);
	for (i = 0; i < 40; i++)
		p.b.shadow[4096 + i] = (unsigned char)(0xa0 + i);
	memcpy(p.b.shadow + (64 << 10), p.a.buf + 100, 300);
	memcpy(p.b.shadow + (64 << 10) + 300, p.a.buf + 5000, 1);
	memcpy(p.b.shadow + (64 << 10) + 301, p.a.buf + 20000, 3000);
	memset(p.b.shadow + (128 << 10), 0x3c, 24);
	memset(p.b.shadow + (128 << 10) + 24, 0xc3, 40);
	memcpy(p.a.shadow + (256 << 10), p.b.buf + (512 << 10), 4096);
	put64(&p.a, atom, 100);
	put64(&p.a, atom + 8, 105);
	memcpy(p.b.shadow + atom, &(uint64_t){ 7 }, 8);
	check_buf(&p.b, "qp_ex: the batch at the responder");
	check_buf(&p.a, "qp_ex: the batch at the requester (READ, atomics)");

	/* The same CQ through ibv_poll_cq, a QP through ibv_post_send. */
	ret = post_recv1(&p.b, 0x310, 0, 4096);
	ret = ret ? ret : post1(&p.a, 0x210, IBV_WR_SEND, 0, 64, 0, 0, 0);
	if (vt_check(!ret, "qp_ex: ibv_post_send on the same QP (%s)", vt_errname(ret))) {
		expect_wc(p.a.scq, "qp_ex: ibv_poll_cq on a CQ of ibv_create_cq_ex",
			  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND, .wr_id = 0x210,
			       .qp_num = p.a.qp->qp_num));
		expect_wc(p.b.rcq, "qp_ex: its receive",
			  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .wr_id = 0x310,
			       .qp_num = p.b.qp->qp_num, .byte_len = 64));
	}

	/* Batches that post nothing. */
	ibv_wr_start(qx);
	ret = ibv_wr_complete(qx);
	vt_check(!ret, "qp_ex: an empty batch completes (%s)", vt_errname(ret));
	ibv_wr_start(qx);
	qx->wr_id = 0x220;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, 0), 64);
	ibv_wr_abort(qx);
	expect_empty(p.a.scq, "qp_ex: ibv_wr_abort posts nothing");
	ibv_wr_start(qx);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, 0), 64);
	qx->wr_id = 0x221;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, 0), 64);
	expect_batch_refused(&p, "qp_ex: an SGE set before any work request",
			     EINVAL, ibv_wr_complete(qx));
	ibv_wr_start(qx);
	qx->wr_id = 0x222;
	ibv_wr_send(qx);
	{
		static unsigned char big[4096];

		ibv_wr_set_inline_data(qx, big, p.a.cap.max_inline_data + 1);
	}
	expect_batch_refused(&p, "qp_ex: inline data over max_inline_data", EINVAL,
			     ibv_wr_complete(qx));
	ibv_wr_start(qx);
	qx->wr_id = 0x223;
	ibv_wr_send(qx);
	ibv_wr_set_sge_list(qx, p.a.cap.max_send_sge + 1, sl);
	expect_batch_refused(&p, "qp_ex: more SGEs than max_send_sge", EINVAL,
			     ibv_wr_complete(qx));
	ret = post_recv1(&p.b, 0x311, 0, 4096);
	ibv_wr_start(qx);
	qx->wr_id = 0x224;
	ibv_wr_send(qx);
	ibv_wr_set_sge(qx, ak, raddr_of(&p.a, 0), 64);
	ret = ret ? ret : ibv_wr_complete(qx);
	if (vt_check(!ret, "qp_ex: the QP posts again after refused batches (%s)",
		     vt_errname(ret)))
		expect_wc(p.a.scq, "qp_ex: and completes",
			  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND,
			       .wr_id = 0x224, .qp_num = p.a.qp->qp_num));
	expect_wc(p.b.rcq, "qp_ex: its receive",
		  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .wr_id = 0x311,
		       .qp_num = p.b.qp->qp_num, .byte_len = 64));

	/* What the device cannot do, refused when asked for. */
	memset(&iax, 0, sizeof(iax));
	iax.send_cq = p.a.scq;
	iax.recv_cq = p.a.rcq;
	iax.qp_type = IBV_QPT_RC;
	iax.cap = (struct ibv_qp_cap){ .max_send_wr = 4, .max_recv_wr = 4,
				       .max_send_sge = 1, .max_recv_sge = 1 };
	iax.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	iax.pd = da->pd;
	iax.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_TSO;
	expect_qp_ex_refused(da, &iax, "of an RC QP with IBV_QP_EX_WITH_TSO");
	iax.qp_type = IBV_QPT_UD;
	iax.send_ops_flags = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE;
	expect_qp_ex_refused(da, &iax, "of a UD QP with RDMA_WRITE");
	ca.wc_flags = IBV_WC_STANDARD_FLAGS | IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	expect_cq_ex_refused(da, &ca, EOPNOTSUPP, "with completion timestamps (no clock)");
out:
	pair_down(&p);

	/* Only SEND asked for: an RDMA WRITE is refused at ibv_wr_complete. */
	o.send_ops = IBV_QP_EX_WITH_SEND;
	if (!pair_up2(&p, da, db, &o, &o, "qp_ex, SEND only"))
		goto out2;
	qx = ibv_qp_to_qp_ex(p.a.qp);
	ibv_wr_start(qx);
	qx->wr_id = 0x230;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_rdma_write(qx, p.b.mr->rkey, raddr_of(&p.b, 0));
	ibv_wr_set_sge(qx, p.a.mr->lkey, raddr_of(&p.a, 0), 64);
	expect_batch_refused(&p, "qp_ex: RDMA_WRITE on a QP made for SEND only",
			     EOPNOTSUPP, ibv_wr_complete(qx));
	check_buf(&p.b, "qp_ex: nothing written");
out2:
	pair_down(&p);
}

/* ---- parent domains with custom allocators --------------------------------- */

#define PD_LIVE_MAX 64

/* What the test's allocator saw, and how it answers. */
static struct pd_alloc_log {
	enum { PDA_SERVE, PDA_DEFAULT, PDA_FAIL } mode;
	struct ibv_pd *pd;		/* the parent domain it must be asked by */
	int bad;			/* calls with a wrong pd, context or alignment */
	int allocs[4], frees[4];	/* by resource type 1..3 */
	void *live[PD_LIVE_MAX];
	uint64_t live_type[PD_LIVE_MAX];
	int unknown_free;		/* frees of what it did not hand out */
} pdlog;

static void *pd_test_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			   size_t alignment, uint64_t resource_type)
{
	uint32_t t = (uint32_t)resource_type;
	void *p;
	int i;

	if (pd != pdlog.pd || pd_context != &pdlog || !alignment ||
	    (alignment & (alignment - 1)) || resource_type >> 32 || t < 1 || t > 3)
		pdlog.bad++;
	if (pdlog.mode == PDA_DEFAULT)
		return IBV_ALLOCATOR_USE_DEFAULT;
	if (pdlog.mode == PDA_FAIL)
		return NULL;
	p = aligned_alloc(alignment, (size + alignment - 1) & ~(alignment - 1));
	if (!p)
		return NULL;
	memset(p, 0xa5, size);	/* the provider must not expect zeroes */
	for (i = 0; i < PD_LIVE_MAX && pdlog.live[i]; i++)
		;
	if (i == PD_LIVE_MAX) {
		pdlog.bad++;
		free(p);
		return NULL;
	}
	pdlog.live[i] = p;
	pdlog.live_type[i] = resource_type;
	pdlog.allocs[t & 3]++;
	return p;
}

static void pd_test_free(struct ibv_pd *pd, void *pd_context, void *ptr,
			 uint64_t resource_type)
{
	int i;

	if (pd != pdlog.pd || pd_context != &pdlog)
		pdlog.bad++;
	for (i = 0; i < PD_LIVE_MAX && pdlog.live[i] != ptr; i++)
		;
	if (i == PD_LIVE_MAX || pdlog.live_type[i] != resource_type) {
		pdlog.unknown_free++;
		return;
	}
	pdlog.live[i] = NULL;
	pdlog.frees[resource_type & 3]++;
	free(ptr);
}

static int pd_live(void)
{
	int i, n = 0;

	for (i = 0; i < PD_LIVE_MAX; i++)
		n += pdlog.live[i] != NULL;
	return n;
}

static struct ibv_pd *parent_of(struct vt_dev *d, struct ibv_pd *pd, bool allocators)
{
	struct ibv_parent_domain_init_attr pa = {
		.pd = pd,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.pd_context = &pdlog,
	};

	if (allocators) {
		pa.comp_mask |= IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
		pa.alloc = pd_test_alloc;
		pa.free = pd_test_free;
	}
	return ibv_alloc_parent_domain(d->ctx, &pa);
}

/* ibv_alloc_parent_domain() with @pa must fail with @err. */
static void expect_pd_refused(struct vt_dev *d, struct ibv_parent_domain_init_attr *pa,
			      int err, const char *what)
{
	struct ibv_pd *pd = ibv_alloc_parent_domain(d->ctx, pa);

	vt_check(!pd && errno == err, "parent domain %s: %s (%s)", what,
		 pd ? "allocated" : vt_errname(errno), vt_errname(err));
	if (pd)
		ibv_dealloc_pd(pd);
}

static void t_parent_domain(struct vt_dev *da, struct vt_dev *db)
{
	struct ibv_parent_domain_init_attr pa;
	struct ibv_cq_init_attr_ex ca = { .cqe = 16, .wc_flags = IBV_WC_STANDARD_FLAGS };
	struct qp_opts o = def_opts;
	struct ibv_pd *pdom, *pd2, *p2;
	struct ibv_qp_ex *qx;
	struct pair p;
	char msg[48];
	int ret;

	title("parent domains with custom allocators");
	if (!strict) {
		vt_info("%s: parent domains are checked on softhca only", da->name);
		return;
	}
	memset(&pdlog, 0, sizeof(pdlog));

	/* Refusals. */
	memset(&pa, 0, sizeof(pa));
	expect_pd_refused(da, &pa, EINVAL, "without a PD");
	pa.pd = da->pd;
	pa.td = (struct ibv_td *)&pa;
	expect_pd_refused(da, &pa, EINVAL, "with a thread domain (none exist)");
	pa.td = NULL;
	pa.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	pa.alloc = pd_test_alloc;
	expect_pd_refused(da, &pa, EINVAL, "with alloc but no free");
	pa.comp_mask = 1u << 7;
	expect_pd_refused(da, &pa, EOPNOTSUPP, "with an unknown comp_mask bit");

	/* A PD stays while a parent domain extends it; a parent of a parent is refused. */
	pd2 = ibv_alloc_pd(da->ctx);
	pdom = pd2 ? parent_of(da, pd2, false) : NULL;
	if (vt_check(pdom != NULL, "parent domain without allocators: %s",
		     pdom ? "allocated" : vt_errname(errno))) {
		p2 = parent_of(da, pdom, false);
		vt_check(!p2, "parent domain of a parent domain: %s (EINVAL)",
			 p2 ? "allocated" : vt_errname(errno));
		ret = ibv_dealloc_pd(pd2);
		vt_check(ret == EBUSY, "dealloc of a PD a parent domain extends: %s (EBUSY)",
			 vt_errname(ret));
		ret = ibv_dealloc_pd(pdom);
		vt_check(!ret, "dealloc of the parent domain (%s)", vt_errname(ret));
	}
	if (pd2) {
		ret = ibv_dealloc_pd(pd2);
		vt_check(!ret, "then of the PD (%s)", vt_errname(ret));
	}

	/* QP, CQs, MR and ibv_wr_* batches on a parent domain with allocators. */
	pdom = parent_of(da, da->pd, true);
	if (!vt_check(pdom != NULL, "parent domain with allocators: %s",
		      pdom ? "allocated" : vt_errname(errno)))
		return;
	pdlog.pd = pdom;
	o.cq_ex = true;
	o.send_ops = RC_SEND_OPS;
	o.pd = pdom;
	if (pair_up2(&p, da, db, &o, &def_opts, "parent domain")) {
		vt_check(p.a.qp->pd == pdom, "the QP's pd is the parent domain");
		vt_check(p.a.mr->pd == pdom, "ibv_reg_mr on the parent domain");
		vt_check(pdlog.allocs[SHCA_TEST_RES_QP] == 1 && pdlog.allocs[SHCA_TEST_RES_CQ] == 2,
			 "the allocator made the QP (%d) and the two CQs (%d)",
			 pdlog.allocs[SHCA_TEST_RES_QP], pdlog.allocs[SHCA_TEST_RES_CQ]);
		qx = ibv_qp_to_qp_ex(p.a.qp);
		fill(&p.a, 0, 4096);
		ret = post_recv1(&p.b, 0x400, 0, 4096);
		snprintf(msg, sizeof(msg), "parent domain, inline data");
		ibv_wr_start(qx);
		qx->wr_flags = IBV_SEND_SIGNALED;
		qx->wr_id = 0x401;
		ibv_wr_send(qx);
		ibv_wr_set_sge(qx, p.a.mr->lkey, raddr_of(&p.a, 0), 2048);
		qx->wr_id = 0x402;
		ibv_wr_rdma_write(qx, p.b.mr->rkey, raddr_of(&p.b, 8192));
		ibv_wr_set_inline_data(qx, msg, sizeof(msg));
		ret = ret ? ret : ibv_wr_complete(qx);
		if (vt_check(!ret, "parent domain: a batch posted (%s)", vt_errname(ret))) {
			expect_wc(p.a.scq, "parent domain: SEND",
				  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND,
				       .wr_id = 0x401, .qp_num = p.a.qp->qp_num));
			expect_wc(p.a.scq, "parent domain: WRITE",
				  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RDMA_WRITE,
				       .wr_id = 0x402, .qp_num = p.a.qp->qp_num));
			expect_wc(p.b.rcq, "parent domain: the receive",
				  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV,
				       .wr_id = 0x400, .qp_num = p.b.qp->qp_num, .byte_len = 2048));
			memcpy(p.b.shadow, p.a.buf, 2048);
			memcpy(p.b.shadow + 8192, msg, sizeof(msg));
			check_buf(&p.b, "parent domain");
		}
		vt_check(pdlog.allocs[SHCA_TEST_RES_QP_WR] >= 3,
			 "the allocator made the batch's arrays (%d)",
			 pdlog.allocs[SHCA_TEST_RES_QP_WR]);
		ret = ibv_dealloc_pd(da->pd);
		vt_check(ret == EBUSY, "dealloc of the device PD under the parent domain: %s (EBUSY)",
			 vt_errname(ret));
	}
	pair_down(&p);
	vt_check(!pd_live() && !pdlog.unknown_free && !pdlog.bad,
		 "every buffer of the allocator freed through it (%d left, %d unknown frees, %d bad calls)",
		 pd_live(), pdlog.unknown_free, pdlog.bad);

	/* IBV_ALLOCATOR_USE_DEFAULT: the provider allocates, and frees, itself. */
	memset(pdlog.allocs, 0, sizeof(pdlog.allocs));
	memset(pdlog.frees, 0, sizeof(pdlog.frees));
	pdlog.mode = PDA_DEFAULT;
	if (pair_up2(&p, da, db, &o, &def_opts, "parent domain, default allocation"))
		do_send(&p, 100, false, 0x410);
	pair_down(&p);
	vt_check(!pdlog.frees[1] && !pdlog.frees[2] && !pdlog.frees[3] && !pdlog.bad,
		 "IBV_ALLOCATOR_USE_DEFAULT: the allocator frees nothing (%d %d %d)",
		 pdlog.frees[1], pdlog.frees[2], pdlog.frees[3]);

	/* An allocator that fails: the objects are refused with ENOMEM. */
	pdlog.mode = PDA_FAIL;
	ca.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD;
	ca.parent_domain = pdom;
	expect_cq_ex_refused(da, &ca, ENOMEM, "with a failing allocator");
	ca.parent_domain = da->pd;
	expect_cq_ex_refused(da, &ca, EINVAL, "on a PD that is no parent domain");
	ret = end_create(&p.a, da, &o);
	end_destroy(&p.a);
	vt_check(ret == ENOMEM && !pd_live(),
		 "CQs and QP on a failing allocator: %s (ENOMEM), nothing left (%d)",
		 vt_errname(ret), pd_live());
	ret = ibv_dealloc_pd(pdom);
	vt_check(!ret, "dealloc of the parent domain (%s)", vt_errname(ret));
}

/* ---- main ----------------------------------------------------------------- */

/* ---- memory windows ------------------------------------------------------ */

/* What an MR behind windows needs: local write and MW_BIND, no remote right. */
#define ACC_MW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND)
#define ACC_RW	(IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ)

/* A window of @e's PD and the MR (over @e's buffer) it binds to. */
struct mw_side {
	struct end *e;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	uint32_t rkey;		/* the key of the last bind posted */
};

static bool mw_setup(struct mw_side *s, struct end *e, enum ibv_mw_type type,
		     int mr_access, const char *what)
{
	memset(s, 0, sizeof(*s));
	s->e = e;
	s->mr = ibv_reg_mr(e->d->pd, e->buf, BUF_LEN, mr_access);
	if (!s->mr) {
		vt_bad("%s: reg_mr for windows: %s", what, vt_errname(errno));
		return false;
	}
	s->mw = ibv_alloc_mw(e->d->pd, type);
	if (!s->mw) {
		vt_bad("%s: alloc_mw type %d: %s", what, type, vt_errname(errno));
		return false;
	}
	s->rkey = s->mw->rkey;
	return true;
}

static void mw_teardown(struct mw_side *s)
{
	if (s->mw)
		ibv_dealloc_mw(s->mw);
	if (s->mr)
		ibv_dereg_mr(s->mr);
	memset(s, 0, sizeof(*s));
}

/* The bind of [@off, @off + @len) of the side's buffer as a work request. */
static void mw_bind_wr(struct ibv_send_wr *wr, struct mw_side *s, uint64_t id,
		       size_t off, size_t len, int access)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = IBV_WR_BIND_MW;
	wr->send_flags = IBV_SEND_SIGNALED;
	wr->bind_mw.mw = s->mw;
	wr->bind_mw.rkey = ibv_inc_rkey(s->rkey);
	wr->bind_mw.bind_info = (struct ibv_mw_bind_info){
		.mr = s->mr, .addr = raddr_of(s->e, off), .length = len,
		.mw_access_flags = access,
	};
}

/*
 * Bind the side's window (ibv_bind_mw() for type 1, IBV_WR_BIND_MW for
 * type 2) and expect its completion; *s->rkey is the window's key then.
 */
static bool mw_bind(struct mw_side *s, uint64_t id, size_t off, size_t len,
		    int access, const char *what)
{
	struct end *e = s->e;
	struct ibv_send_wr wr;
	int ret;

	mw_bind_wr(&wr, s, id, off, len, access);
	if (s->mw->type == IBV_MW_TYPE_1) {
		struct ibv_mw_bind b = {
			.wr_id = id, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = wr.bind_mw.bind_info,
		};

		ret = ibv_bind_mw(e->qp, s->mw, &b);
		if (!ret)
			s->rkey = s->mw->rkey;
	} else {
		ret = post_send_wr(e, &wr);
		if (!ret)
			s->rkey = wr.bind_mw.rkey;
	}
	if (!vt_check(!ret, "%s: bind of type %d posted (%s)", what,
		      s->mw->type, vt_errname(ret)))
		return false;
	return expect_wc(e->scq, what, &WCX(.status = IBV_WC_SUCCESS,
					    .opcode = IBV_WC_BIND_MW,
					    .wr_id = id, .qp_num = e->qp->qp_num));
}

/* A's @len bytes at @loff go through the window to @rdst; expect success. */
static void mw_write(struct pair *p, struct mw_side *s, size_t loff,
		     uint32_t len, uint64_t rdst, size_t boff, const char *what)
{
	int ret;

	fill(&p->a, loff, len);
	ret = post1(&p->a, 0x3001, IBV_WR_RDMA_WRITE, loff, len, rdst, s->rkey, 0);
	if (!vt_check(!ret, "%s: WRITE through the window posted (%s)", what,
		      vt_errname(ret)))
		return;
	if (expect_wc(p->a.scq, what, &WCX(.status = IBV_WC_SUCCESS,
					   .opcode = IBV_WC_RDMA_WRITE, .wr_id = 0x3001,
					   .qp_num = p->a.qp->qp_num)))
		memcpy(p->b.shadow + boff, p->a.buf + loff, len);
	check_buf(&p->b, what);
}

/* SEND_WITH_INV of @rkey from A; B's receive reports it invalidated. */
static void mw_send_inv(struct pair *p, uint32_t rkey, const char *what)
{
	struct ibv_send_wr wr;
	struct ibv_sge sg = sge_of(&p->a, 0, 16);
	struct ibv_wc wc;
	int ret;

	post_recv1(&p->b, 0x3101, 0, 64);
	fill(&p->a, 0, 16);
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 0x3102;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_SEND_WITH_INV;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.invalidate_rkey = rkey;
	ret = post_send_wr(&p->a, &wr);
	if (!vt_check(!ret, "%s: SEND_WITH_INV posted (%s)", what, vt_errname(ret)))
		return;
	expect_wc(p->a.scq, what, &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND,
				       .wr_id = 0x3102, .qp_num = p->a.qp->qp_num));
	if (!vt_check(poll_n(p->b.rcq, 1, &wc, POLL_MS) == 1,
		      "%s: B's receive completed", what))
		return;
	vt_check(wc.status == IBV_WC_SUCCESS && (wc.wc_flags & IBV_WC_WITH_INV) &&
		 wc.invalidated_rkey == rkey,
		 "%s: B's receive %s, WITH_INV %s, invalidated rkey 0x%x (0x%x)", what,
		 ibv_wc_status_str(wc.status),
		 wc.wc_flags & IBV_WC_WITH_INV ? "set" : "unset",
		 wc.invalidated_rkey, rkey);
	memcpy(p->b.shadow, p->b.buf, 16);
}

/* The bytes a READ through the window brought back: A's buffer at @loff. */
static void mw_read(struct pair *p, struct mw_side *s, size_t loff,
		    uint32_t len, uint64_t rsrc, size_t boff, const char *what)
{
	int ret = post1(&p->a, 0x3201, IBV_WR_RDMA_READ, loff, len, rsrc,
			s->rkey, 0);

	if (!vt_check(!ret, "%s: READ through the window posted (%s)", what,
		      vt_errname(ret)))
		return;
	if (expect_wc(p->a.scq, what, &WCX(.status = IBV_WC_SUCCESS,
					   .opcode = IBV_WC_RDMA_READ, .wr_id = 0x3201,
					   .qp_num = p->a.qp->qp_num)))
		memcpy(p->a.shadow + loff, p->b.buf + boff, len);
	check_buf(&p->a, what);
}

/*
 * Windows of both types between two QPs: bind, remote WRITE, READ and
 * atomics through them (the MR behind them has no remote right of its
 * own), an MR that cannot be deregistered while bound, rebinding,
 * zero-based windows, local and remote invalidation, the extended-verbs
 * binds, and a chain mixing binds with other requests.
 */
static void t_mw(struct vt_dev *da, struct vt_dev *db)
{
	struct qp_opts ob = def_opts;
	struct mw_side s = { 0 };
	struct pair p;
	char what[96];
	int type, ret;

	title("memory windows");
	vt_check(da->attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW,
		 "%s: device_cap_flags has MEM_WINDOW", da->name);
	vt_contract(da->attr.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B,
		    "%s: device_cap_flags has MEM_WINDOW_TYPE_2B", da->name);
	vt_check(da->attr.max_mw > 0, "%s: max_mw %d", da->name, da->attr.max_mw);

	for (type = IBV_MW_TYPE_1; type <= IBV_MW_TYPE_2; type++) {
		snprintf(what, sizeof(what), "type %d window", type);
		if (!pair_up2(&p, da, db, &def_opts, &def_opts, what))
			goto next;
		if (!mw_setup(&s, &p.b, type, ACC_MW, what))
			goto next;
		if (!mw_bind(&s, 0x3000 + type, 4096, 8192,
			     ACC_RW | (type == 2 ? IBV_ACCESS_REMOTE_ATOMIC : 0),
			     what))
			goto next;
		mw_write(&p, &s, 0, 1000, raddr_of(&p.b, 4196), 4196, what);
		mw_read(&p, &s, 65536, 512, raddr_of(&p.b, 4096 + 8192 - 512),
			4096 + 8192 - 512, what);

		/* A bound MR stays; the refusal changes nothing. */
		errno = 0;
		ret = ibv_dereg_mr(s.mr);
		vt_contract(ret == EBUSY, "%s: dereg_mr of the MR behind it: EBUSY (saw %s)",
			    what, vt_errname(ret));
		if (!ret)
			s.mr = NULL;
		mw_write(&p, &s, 2048, 64, raddr_of(&p.b, 4096), 4096, what);

		if (type == IBV_MW_TYPE_1) {
			/* Rebound in place under a new key. */
			uint32_t old = s.rkey;

			if (mw_bind(&s, 0x3010, 0, 64, IBV_ACCESS_REMOTE_READ, what)) {
				vt_check(s.rkey != old && (s.rkey >> 8) == (old >> 8),
					 "%s: rebound under a new key byte (0x%x -> 0x%x)",
					 what, old, s.rkey);
				mw_read(&p, &s, 70000, 64, raddr_of(&p.b, 0), 0, what);
			}
		} else {
			struct ibv_send_wr wr = {
				.wr_id = 0x3020, .opcode = IBV_WR_LOCAL_INV,
				.send_flags = IBV_SEND_SIGNALED,
				.invalidate_rkey = s.rkey,
			};

			ret = post_send_wr(&p.b, &wr);
			if (vt_check(!ret, "%s: LOCAL_INV posted (%s)", what, vt_errname(ret)))
				expect_wc(p.b.scq, what, &WCX(.status = IBV_WC_SUCCESS,
							      .opcode = IBV_WC_LOCAL_INV,
							      .wr_id = 0x3020,
							      .qp_num = p.b.qp->qp_num));
			/* Free again: zero-based this time (rxe refuses it). */
			snprintf(what, sizeof(what), "type 2 window, zero-based");
			in_contract = true;
			if (mw_bind(&s, 0x3021, 8192, 4096,
				    IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_ZERO_BASED, what))
				mw_write(&p, &s, 0, 300, 100, 8192 + 100, what);
			in_contract = false;
			if (qp_state(p.b.qp) != IBV_QPS_RTS)
				goto next;
			snprintf(what, sizeof(what), "type 2 window, remote invalidation");
			mw_send_inv(&p, s.rkey, what);
			if (mw_bind(&s, 0x3022, 0, 4096, IBV_ACCESS_REMOTE_WRITE, what))
				mw_write(&p, &s, 0, 128, raddr_of(&p.b, 512), 512, what);
		}
		ret = ibv_dealloc_mw(s.mw);
		vt_check(!ret, "%s: dealloc_mw of a bound window: %s", what, vt_errname(ret));
		s.mw = NULL;
		if (s.mr) {
			ret = ibv_dereg_mr(s.mr);
			vt_check(!ret, "%s: the MR deregisters once the window is gone: %s",
				 what, vt_errname(ret));
			s.mr = NULL;
		}
next:
		mw_teardown(&s);
		pair_down(&p);
	}

	/* The extended verbs: ibv_wr_bind_mw, ibv_wr_local_inv, in a batch. */
	ob.send_ops = IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_BIND_MW |
		      IBV_QP_EX_WITH_LOCAL_INV;
	snprintf(what, sizeof(what), "ibv_wr_bind_mw batch");
	if (pair_up2(&p, da, db, &def_opts, &ob, what) &&
	    mw_setup(&s, &p.b, IBV_MW_TYPE_2, ACC_MW, what)) {
		struct ibv_qp_ex *qpx = ibv_qp_to_qp_ex(p.b.qp);
		struct ibv_mw_bind_info bi = {
			.mr = s.mr, .addr = raddr_of(&p.b, 0), .length = 4096,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE,
		};
		uint32_t rkey = ibv_inc_rkey(s.mw->rkey);

		post_recv1(&p.a, 0x3301, 0, 64);
		fill(&p.b, 65536, 32);
		ibv_wr_start(qpx);
		qpx->wr_id = 0x3302;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_bind_mw(qpx, s.mw, rkey, &bi);
		qpx->wr_id = 0x3303;
		ibv_wr_send(qpx);
		ibv_wr_set_sge(qpx, p.b.mr->lkey, raddr_of(&p.b, 65536), 32);
		ret = ibv_wr_complete(qpx);
		if (vt_check(!ret, "%s: [BIND_MW, SEND] posted (%s)", what, vt_errname(ret))) {
			expect_wc(p.b.scq, what, &WCX(.status = IBV_WC_SUCCESS,
						      .opcode = IBV_WC_BIND_MW,
						      .wr_id = 0x3302, .qp_num = p.b.qp->qp_num));
			expect_wc(p.b.scq, what, &WCX(.status = IBV_WC_SUCCESS,
						      .opcode = IBV_WC_SEND,
						      .wr_id = 0x3303, .qp_num = p.b.qp->qp_num));
			expect_wc(p.a.rcq, what, &WCX(.status = IBV_WC_SUCCESS,
						      .opcode = IBV_WC_RECV, .wr_id = 0x3301,
						      .qp_num = p.a.qp->qp_num, .byte_len = 32));
			memcpy(p.a.shadow, p.b.buf + 65536, 32);
			check_buf(&p.a, what);
			s.rkey = rkey;
			mw_write(&p, &s, 4096, 256, raddr_of(&p.b, 1000), 1000, what);
		}
		ibv_wr_start(qpx);
		qpx->wr_id = 0x3304;
		qpx->wr_flags = IBV_SEND_SIGNALED;
		ibv_wr_local_inv(qpx, rkey);
		ret = ibv_wr_complete(qpx);
		if (vt_check(!ret, "%s: ibv_wr_local_inv posted (%s)", what, vt_errname(ret)))
			expect_wc(p.b.scq, what, &WCX(.status = IBV_WC_SUCCESS,
						      .opcode = IBV_WC_LOCAL_INV,
						      .wr_id = 0x3304, .qp_num = p.b.qp->qp_num));
		ret = ibv_dereg_mr(s.mr);
		vt_check(!ret, "%s: the MR of an invalidated window deregisters: %s",
			 what, vt_errname(ret));
		if (!ret)
			s.mr = NULL;
	}
	mw_teardown(&s);
	pair_down(&p);
}

/* Refused when posted: nothing reaches the send queue. */
static void t_mw_refused(struct vt_dev *da, struct vt_dev *db)
{
	struct ibv_send_wr wr, send, *bad;
	struct mw_side s1, s2;
	struct ibv_sge sg;
	struct ibv_mw *mw;
	struct pair p;
	int ret;

	title("memory windows: refused at post");
	errno = 0;
	mw = ibv_alloc_mw(da->pd, 3);
	vt_check(!mw && errno == EINVAL, "alloc_mw of type 3: EINVAL (saw %s)",
		 mw ? "allocated" : vt_errname(errno));
	if (mw)
		ibv_dealloc_mw(mw);
	memset(&s2, 0, sizeof(s2));
	if (!pair_up2(&p, da, db, &def_opts, &def_opts, "refused binds") ||
	    !mw_setup(&s1, &p.b, IBV_MW_TYPE_1, ACC_MW, "refused binds") ||
	    !mw_setup(&s2, &p.b, IBV_MW_TYPE_2, ACC_MW, "refused binds"))
		goto out;

	/* A type 1 window is bound by ibv_bind_mw() only, a type 2 never by it. */
	mw_bind_wr(&wr, &s1, 0x3401, 0, 64, IBV_ACCESS_REMOTE_READ);
	sg = sge_of(&p.b, 0, 16);
	memset(&send, 0, sizeof(send));
	send.wr_id = 0x3400;
	send.opcode = IBV_WR_SEND;
	send.sg_list = &sg;
	send.num_sge = 1;
	send.send_flags = IBV_SEND_SIGNALED;
	send.next = &wr;
	post_recv1(&p.a, 0x3410, 0, 64);
	bad = NULL;
	in_contract = true;
	ret = ibv_post_send(p.b.qp, &send, &bad);
	vt_contract(ret == EINVAL && bad == &wr,
		 "[SEND, BIND_MW of a type 1 window]: EINVAL at the bind (saw %s, bad_wr %s)",
		 vt_errname(ret), bad == &wr ? "the bind" : bad ? "another" : "unset");
	expect_wc(p.b.scq, "the SEND before the refused bind",
		  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_SEND, .wr_id = 0x3400,
		       .qp_num = p.b.qp->qp_num));
	expect_wc(p.a.rcq, "the SEND before the refused bind: received",
		  &WCX(.status = IBV_WC_SUCCESS, .opcode = IBV_WC_RECV, .wr_id = 0x3410,
		       .qp_num = p.a.qp->qp_num, .byte_len = 16));
	in_contract = false;
	memcpy(p.a.shadow, p.b.buf, 16);
	{
		struct ibv_mw_bind b = {
			.wr_id = 0x3402, .send_flags = IBV_SEND_SIGNALED,
			.bind_info = { .mr = s2.mr, .addr = raddr_of(&p.b, 0),
				       .length = 64,
				       .mw_access_flags = IBV_ACCESS_REMOTE_READ },
		};

		ret = ibv_bind_mw(p.b.qp, s2.mw, &b);
		vt_check(ret == EINVAL, "ibv_bind_mw of a type 2 window: EINVAL (saw %s)",
			 vt_errname(ret));
	}
	/* rxe's provider dereferences the missing MR: softhca only. */
	mw_bind_wr(&wr, &s2, 0x3403, 0, 64, IBV_ACCESS_REMOTE_READ);
	wr.bind_mw.bind_info.mr = NULL;
	ret = strict ? post_send_wr(&p.b, &wr) : EINVAL;
	vt_check(ret == EINVAL, "IBV_WR_BIND_MW without an MR: EINVAL (saw %s)",
		 vt_errname(ret));
	mw_bind_wr(&wr, &s2, 0x3404, 0, 64, IBV_ACCESS_REMOTE_READ);
	wr.send_flags |= IBV_SEND_INLINE;
	ret = post_send_wr(&p.b, &wr);
	vt_contract(ret == EINVAL, "IBV_WR_BIND_MW with IBV_SEND_INLINE: EINVAL (saw %s)",
		    vt_errname(ret));
	expect_empty(p.b.scq, "after the refused binds");
	/* Still usable: the QP was never touched. */
	if (mw_bind(&s2, 0x3405, 0, 4096, IBV_ACCESS_REMOTE_WRITE, "after the refusals"))
		mw_write(&p, &s2, 0, 64, raddr_of(&p.b, 0), 0, "after the refusals");
	vt_check(qp_state(p.b.qp) == IBV_QPS_RTS, "B's QP still RTS");
	check_buf(&p.a, "refused binds");
out:
	mw_teardown(&s2);
	mw_teardown(&s1);
	pair_down(&p);
}

enum mw_err {
	MW_E_RANGE, MW_E_RIGHTS, MW_E_UNBOUND, MW_E_INVALIDATED,
	MW_E_REMOTE_INV, MW_E_DEALLOC, MW_E_OTHER_QP, MW_E_AS_LKEY,
	MW_B_RANGE, MW_B_NO_BIND, MW_B_WRITE_RO, MW_B_BOUND, MW_B_PD,
};

static const char *const mw_err_desc[] = {
	[MW_E_RANGE] = "RDMA_WRITE beyond the end of a window",
	[MW_E_RIGHTS] = "RDMA_READ through a write-only window",
	[MW_E_UNBOUND] = "RDMA_WRITE through a type 1 window after it was unbound",
	[MW_E_INVALIDATED] = "RDMA_WRITE through a type 2 window after LOCAL_INV",
	[MW_E_REMOTE_INV] = "RDMA_WRITE through a type 2 window after SEND_WITH_INV",
	[MW_E_DEALLOC] = "RDMA_WRITE through a deallocated window",
	[MW_E_OTHER_QP] = "RDMA_WRITE through a type 2 window at another QP of its PD",
	[MW_E_AS_LKEY] = "SEND with a window's key as lkey",
	[MW_B_RANGE] = "bind beyond the end of the MR",
	[MW_B_NO_BIND] = "bind to an MR without MW_BIND",
	[MW_B_WRITE_RO] = "bind of a writable window to an MR without local write",
	[MW_B_BOUND] = "bind of a type 2 window that is bound",
	[MW_B_PD] = "bind of a window of another PD",
};

/*
 * One refused use of a window: the request completes in error, what
 * follows is flushed, and no byte reaches the memory behind the window.
 * Binds are refused by the binding QP (MW_BIND_ERR); accesses by the
 * responder (REM_ACCESS_ERR at the requester).
 */
static void t_mw_err(struct vt_dev *da, struct vt_dev *db, enum mw_err k)
{
	const char *what = mw_err_desc[k];
	bool bind_err = k >= MW_B_RANGE;
	struct ibv_pd *pd2 = NULL;
	struct ibv_mw *mw2 = NULL;
	struct pair p, p2 = {};
	struct ibv_send_wr wr;
	struct mw_side s;
	struct ibv_sge sg;
	int st, ret;

	memset(&s, 0, sizeof(s));
	if (!pair_up2(&p, da, db, &def_opts, &def_opts, what))
		goto out;
	/* Binds refused are posted by A on its own memory; else B binds. */
	if (!mw_setup(&s, bind_err || k == MW_E_AS_LKEY ? &p.a : &p.b,
		      k == MW_E_UNBOUND || k == MW_E_AS_LKEY ? IBV_MW_TYPE_1 :
							       IBV_MW_TYPE_2,
		      k == MW_B_WRITE_RO ? IBV_ACCESS_MW_BIND : ACC_MW, what))
		goto out;
	fill(&p.b, 0, 8192);
	if (bind_err) {
		st = IBV_WC_MW_BIND_ERR;
		mw_bind_wr(&wr, &s, 0xbad0 + k, 0, 4096, IBV_ACCESS_REMOTE_WRITE);
		if (k == MW_B_RANGE)
			wr.bind_mw.bind_info.length = BUF_LEN + 1;
		else if (k == MW_B_NO_BIND)
			wr.bind_mw.bind_info.mr = p.a.mr;
		else if (k == MW_B_BOUND && !mw_bind(&s, 0x3500, 0, 64,
						     IBV_ACCESS_REMOTE_READ, what))
			goto out;
		else if (k == MW_B_BOUND)
			wr.bind_mw.rkey = ibv_inc_rkey(s.rkey);
		if (k == MW_B_PD) {
			pd2 = ibv_alloc_pd(da->ctx);
			mw2 = pd2 ? ibv_alloc_mw(pd2, IBV_MW_TYPE_2) : NULL;
			if (!vt_check(mw2, "%s: a window of a second PD: %s", what,
				      vt_errname(errno)))
				goto out;
			wr.bind_mw.mw = mw2;
			wr.bind_mw.rkey = ibv_inc_rkey(mw2->rkey);
		}
		in_contract = true;
		expect_err_and_flush(&p, what, &wr, st);
		in_contract = false;
		check_buf(&p.a, what);
		goto out;
	}

	if (k == MW_E_AS_LKEY) {
		if (!mw_bind(&s, 0x3501, 0, 4096, ACC_RW, what))
			goto out;
		memset(&wr, 0, sizeof(wr));
		sg = sge_of(&p.a, 0, 64);
		sg.lkey = s.rkey;
		wr.wr_id = 0xbad0 + k;
		wr.sg_list = &sg;
		wr.num_sge = 1;
		wr.opcode = IBV_WR_SEND;
		wr.send_flags = IBV_SEND_SIGNALED;
		in_contract = true;
		expect_err_and_flush(&p, what, &wr, IBV_WC_LOC_PROT_ERR);
		in_contract = false;
		check_buf(&p.b, what);
		goto out;
	}

	if (!mw_bind(&s, 0x3502, 0, 4096,
		     k == MW_E_RIGHTS ? IBV_ACCESS_REMOTE_WRITE : ACC_RW, what))
		goto out;
	memset(&wr, 0, sizeof(wr));
	sg = sge_of(&p.a, 4096, 64);
	wr.wr_id = 0xbad0 + k;
	wr.sg_list = &sg;
	wr.num_sge = 1;
	wr.opcode = IBV_WR_RDMA_WRITE;
	wr.send_flags = IBV_SEND_SIGNALED;
	wr.wr.rdma.remote_addr = raddr_of(&p.b, 0);
	wr.wr.rdma.rkey = s.rkey;
	switch (k) {
	case MW_E_RANGE:
		wr.wr.rdma.remote_addr = raddr_of(&p.b, 4096 - 32);
		break;
	case MW_E_RIGHTS:
		wr.opcode = IBV_WR_RDMA_READ;
		break;
	case MW_E_UNBOUND:
		if (!mw_bind(&s, 0x3503, 0, 0, 0, what))
			goto out;
		vt_check(s.rkey != wr.wr.rdma.rkey, "%s: unbinding changed the key", what);
		wr.wr.rdma.rkey = s.rkey;
		break;
	case MW_E_INVALIDATED: {
		struct ibv_send_wr inv = {
			.wr_id = 0x3504, .opcode = IBV_WR_LOCAL_INV,
			.send_flags = IBV_SEND_SIGNALED, .invalidate_rkey = s.rkey,
		};

		ret = post_send_wr(&p.b, &inv);
		if (!vt_check(!ret, "%s: LOCAL_INV posted (%s)", what, vt_errname(ret)))
			goto out;
		expect_wc(p.b.scq, what, &WCX(.status = IBV_WC_SUCCESS,
					      .opcode = IBV_WC_LOCAL_INV,
					      .wr_id = 0x3504, .qp_num = p.b.qp->qp_num));
		break;
	}
	case MW_E_REMOTE_INV:
		mw_send_inv(&p, s.rkey, what);
		break;
	case MW_E_DEALLOC:
		ret = ibv_dealloc_mw(s.mw);
		vt_check(!ret, "%s: dealloc_mw: %s", what, vt_errname(ret));
		s.mw = NULL;
		break;
	case MW_E_OTHER_QP:
		/* A second pair, its responder on B's PD: not the bound QP. */
		if (!pair_up2(&p2, da, db, &def_opts, &def_opts, what))
			goto out;
		in_contract = true;
		expect_err_and_flush(&p2, what, &wr, IBV_WC_REM_ACCESS_ERR);
		in_contract = false;
		check_buf(&p.b, what);
		goto out;
	default:
		break;
	}
	expect_err_and_flush(&p, what, &wr, IBV_WC_REM_ACCESS_ERR);
	check_buf(&p.b, what);	/* nothing reached the memory behind it */
	note_responder(&p, what);
out:
	if (mw2)
		ibv_dealloc_mw(mw2);
	if (pd2)
		ibv_dealloc_pd(pd2);
	mw_teardown(&s);
	if (p2.a.d)
		pair_down(&p2);
	pair_down(&p);
}

/* ---- on-demand paging ----------------------------------------------------- */

#define ODP_LEN		(8u << 20)	/* each ODP region of these tests */
#define ACC_ODP		(ACC_ALL | IBV_ACCESS_ON_DEMAND)

/* Fresh anonymous memory nobody has touched: no page behind it yet. */
static unsigned char *odp_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	return p == MAP_FAILED ? NULL : p;
}

/* Pages of [p, p + len) that are resident (mincore()). */
static size_t odp_resident(const void *p, size_t len)
{
	size_t pg = sysconf(_SC_PAGESIZE), n = (len + pg - 1) / pg, i, r = 0;
	unsigned char *v = calloc(n, 1);

	if (!v || mincore((void *)p, len, v)) {
		free(v);
		return (size_t)-1;
	}
	for (i = 0; i < n; i++)
		r += v[i] & 1;
	free(v);
	return r;
}

/* One signaled request of A with its SGE on @lmr; expect @st. */
static bool odp_post(struct pair *p, const char *what, enum ibv_wr_opcode op,
		     struct ibv_mr *lmr, void *laddr, uint32_t len,
		     uint64_t raddr, uint32_t rkey, int st)
{
	struct ibv_sge sg = { .addr = (uintptr_t)laddr, .length = len,
			      .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = 0x4000 + op, .sg_list = &sg, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
	};
	int ret;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 5;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	ret = post_send_wr(&p->a, &wr);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return false;
	return expect_wc(p->a.scq, what, &WCX(.status = st, .wr_id = wr.wr_id,
					      .qp_num = p->a.qp->qp_num));
}

/*
 * On-demand paging MRs on both sides of a connection: registration pins
 * nothing; WRITE, READ, atomics, SEND and receives fault the pages in on
 * first touch; pages the kernel takes back (MADV_DONTNEED, fork's
 * copy-on-write) are refaulted, never read stale; an implicit MR over the
 * whole address space; ibv_advise_mr() prefetches; memory unmapped under
 * an MR fails the access, with nothing written.
 */
static void t_odp(struct vt_dev *da, struct vt_dev *db)
{
	struct ibv_query_device_ex_input in = { 0 };
	struct ibv_device_attr_ex ax;
	unsigned char *ab = NULL, *bb = NULL, *heap = NULL;
	struct ibv_mr *amr = NULL, *bmr = NULL, *imr = NULL;
	uint32_t rc_need = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			   IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
			   IBV_ODP_SUPPORT_ATOMIC;
	const char *what = "ODP";
	struct ibv_sge sge;
	long pin0;
	struct pair p;
	pid_t child;
	int ret;

	title("on-demand paging");
	memset(&p, 0, sizeof(p));
	ret = ibv_query_device_ex(db->ctx, &in, &ax);
	if (!vt_check(!ret, "query_device_ex: %s", vt_errname(ret)))
		return;
	vt_contract(ax.odp_caps.general_caps ==
		    (IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT),
		    "%s: odp_caps.general_caps 0x%" PRIx64 " (ODP and implicit ODP)",
		    db->name, ax.odp_caps.general_caps);
	vt_contract((ax.odp_caps.per_transport_caps.rc_odp_caps & rc_need) == rc_need,
		    "%s: rc_odp_caps 0x%x (SEND, RECV, WRITE, READ, ATOMIC)",
		    db->name, ax.odp_caps.per_transport_caps.rc_odp_caps);
	if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    (ax.odp_caps.per_transport_caps.rc_odp_caps & rc_need) != rc_need) {
		note_differs("%s: no ODP for RC, not tested", db->name);
		return;
	}
	if (!pair_up2(&p, da, db, &def_opts, &def_opts, what))
		goto out;
	ab = odp_map(ODP_LEN);
	bb = odp_map(ODP_LEN);
	if (!vt_check(ab && bb, "%s: two %u MiB mappings", what, ODP_LEN >> 20))
		goto out;
	pin0 = vt_status_kb("VmPin");
	amr = ibv_reg_mr(da->pd, ab, ODP_LEN, ACC_ODP);
	bmr = ibv_reg_mr(db->pd, bb, ODP_LEN, ACC_ODP);
	if (!vt_check(amr && bmr, "%s: reg_mr with ON_DEMAND on both sides (%s)",
		      what, amr && bmr ? "registered" : vt_errname(errno)))
		goto out;
	vt_check(vt_status_kb("VmPin") == pin0 && odp_resident(bb, ODP_LEN) == 0,
		 "%s: nothing pinned, nothing faulted (VmPin %ld kB, was %ld; %zu pages resident)",
		 what, vt_status_kb("VmPin"), pin0, odp_resident(bb, ODP_LEN));

	/* WRITE from A's ODP memory into B's: both faulted on first touch. */
	memset(ab, 0x3c, 65536);
	if (odp_post(&p, "ODP: RDMA_WRITE of 64 KiB, ODP to ODP", IBV_WR_RDMA_WRITE,
		     amr, ab, 65536, (uintptr_t)(bb + (1u << 20) + 100), bmr->rkey,
		     IBV_WC_SUCCESS))
		vt_check(vt_all_bytes(bb + (1u << 20) + 100, 65536, 0x3c) &&
			 bb[(1u << 20) + 99] == 0 && bb[(1u << 20) + 100 + 65536] == 0,
			 "ODP: the bytes are in B's memory, nothing around them");
	vt_check(vt_status_kb("VmPin") == pin0, "ODP: still nothing pinned");
	/* READ of memory B never touched: the zero page. */
	memset(ab + 65536, 0xee, 4096);
	if (odp_post(&p, "ODP: RDMA_READ of untouched memory", IBV_WR_RDMA_READ,
		     amr, ab + 65536, 4096, (uintptr_t)(bb + (4u << 20)), bmr->rkey,
		     IBV_WC_SUCCESS))
		vt_check(vt_all_bytes(ab + 65536, 4096, 0), "ODP: it reads as zeros");
	/* An atomic on a page nobody touched. */
	if (odp_post(&p, "ODP: FETCH_AND_ADD on an untouched page",
		     IBV_WR_ATOMIC_FETCH_AND_ADD, amr, ab + 131072, 8,
		     (uintptr_t)(bb + (5u << 20)), bmr->rkey, IBV_WC_SUCCESS))
		vt_check(get64(ab + 131072) == 0 && get64(bb + (5u << 20)) == 5,
			 "ODP: old value 0 returned, 5 now (0x%" PRIx64 ", 0x%" PRIx64 ")",
			 get64(ab + 131072), get64(bb + (5u << 20)));
	/* SEND from ODP memory into a receive in ODP memory. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)(bb + (6u << 20)), .length = 4096,
				.lkey = bmr->lkey };
	ret = post_recv_sges(&p.b, 0x4100, &sge, 1);
	memset(ab + 200000, 0x77, 3000);
	if (vt_check(!ret, "ODP: receive posted into ODP memory (%s)", vt_errname(ret)) &&
	    odp_post(&p, "ODP: SEND from ODP memory into an ODP receive", IBV_WR_SEND,
		     amr, ab + 200000, 3000, 0, 0, IBV_WC_SUCCESS) &&
	    expect_wc(p.b.rcq, "ODP: the receive", &WCX(.status = IBV_WC_SUCCESS,
							 .opcode = IBV_WC_RECV, .wr_id = 0x4100,
							 .qp_num = p.b.qp->qp_num,
							 .byte_len = 3000)))
		vt_check(vt_all_bytes(bb + (6u << 20), 3000, 0x77),
			 "ODP: the received bytes are in B's memory");

	/* Pages taken back by the kernel are refaulted: never stale. */
	ret = madvise(bb + (1u << 20), 1u << 20, MADV_DONTNEED);
	vt_check(!ret && odp_resident(bb + (1u << 20), 1u << 20) == 0,
		 "ODP: MADV_DONTNEED dropped B's written pages");
	memset(ab + 65536, 0xee, 4096);
	if (odp_post(&p, "ODP: RDMA_READ after MADV_DONTNEED", IBV_WR_RDMA_READ,
		     amr, ab + 65536, 4096, (uintptr_t)(bb + (1u << 20) + 100),
		     bmr->rkey, IBV_WC_SUCCESS))
		vt_check(vt_all_bytes(ab + 65536, 4096, 0),
			 "ODP: reads the memory as it is now (zeros), not the old page");

	/* fork(): B's pages become copy-on-write; a write lands in B's. */
	bb[(2u << 20)] = 1;
	child = fork();
	if (child == 0) {
		usleep(300000);
		_exit(bb[(2u << 20)] == 1 ? 0 : 1);
	}
	memset(ab + 300000, 0x42, 512);
	if (odp_post(&p, "ODP: RDMA_WRITE after fork()", IBV_WR_RDMA_WRITE, amr,
		     ab + 300000, 512, (uintptr_t)(bb + (2u << 20)), bmr->rkey,
		     IBV_WC_SUCCESS))
		vt_check(vt_all_bytes(bb + (2u << 20), 512, 0x42),
			 "ODP: after fork() the write is in the parent's memory");
	if (child > 0) {
		int status = -1;

		waitpid(child, &status, 0);
		vt_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "ODP: the child's copy kept the old byte");
	}

	/* Implicit ODP: one key for the whole address space of B. */
	heap = malloc(100000);
	imr = ibv_reg_mr(db->pd, NULL, SIZE_MAX, ACC_ODP);
	if (vt_check(imr && heap, "ODP: implicit MR (NULL, SIZE_MAX): %s",
		     imr ? "registered" : vt_errname(errno)) &&
	    odp_post(&p, "ODP: RDMA_WRITE through the implicit MR into malloc()ed memory",
		     IBV_WR_RDMA_WRITE, amr, ab + 300000, 512,
		     (uintptr_t)(heap + 5000), imr->rkey, IBV_WC_SUCCESS))
		vt_check(vt_all_bytes(heap + 5000, 512, 0x42),
			 "ODP: the bytes are in B's heap");

	/* ibv_advise_mr(): prefetch for write, synchronously. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)(bb + (7u << 20)),
				.length = 256 * 1024, .lkey = bmr->lkey };
	ret = ibv_advise_mr(db->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	vt_check(!ret && odp_resident(bb + (7u << 20), 256 * 1024) == 64,
		 "ODP: advise_mr PREFETCH_WRITE (flush): %s, %zu of 64 pages resident",
		 vt_errname(ret), odp_resident(bb + (7u << 20), 256 * 1024));
	sge.lkey ^= 0x100;
	ret = ibv_advise_mr(db->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	vt_contract(ret == ENOENT, "ODP: advise_mr with a stale lkey: ENOENT (saw %s)",
		    vt_errname(ret));
	sge.lkey = p.b.mr->lkey;
	sge.addr = (uintptr_t)p.b.buf;
	ret = ibv_advise_mr(db->pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
	vt_contract(ret == EINVAL, "ODP: advise_mr of a pinned MR: EINVAL (saw %s)",
		    vt_errname(ret));

	/* Memory unmapped under the MR: the next access fails, cleanly. */
	ret = munmap(bb + (3u << 20), 1u << 20);
	if (vt_check(!ret, "ODP: 1 MiB of B's region unmapped")) {
		struct ibv_sge sg = { .addr = (uintptr_t)ab, .length = 64,
				      .lkey = amr->lkey };
		struct ibv_send_wr wr = {
			.wr_id = 0x4200, .sg_list = &sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE, .send_flags = IBV_SEND_SIGNALED,
		};

		wr.wr.rdma.remote_addr = (uintptr_t)(bb + (3u << 20) + 8);
		wr.wr.rdma.rkey = bmr->rkey;
		expect_err_and_flush(&p, "ODP: RDMA_WRITE into unmapped memory", &wr,
				     IBV_WC_REM_ACCESS_ERR);
	}
out:
	if (imr)
		ibv_dereg_mr(imr);
	if (amr)
		ibv_dereg_mr(amr);
	if (bmr)
		ibv_dereg_mr(bmr);
	free(heap);
	if (ab)
		munmap(ab, ODP_LEN);
	if (bb)
		munmap(bb, ODP_LEN);
	pair_down(&p);
}

/* ---- on-demand paging on UC ----------------------------------------------- */

#define ACC_UC_ODP	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_ON_DEMAND)
#define UC_IMM		0x0dc0de00u	/* + the wr_id's low byte */

/* Fill @len bytes at @buf and at @shadow (what @buf must hold) alike. */
static void odp_fill(unsigned char *buf, unsigned char *shadow, size_t len)
{
	unsigned int s = seed_ctr++ * 2654435761u;
	size_t i;

	for (i = 0; i < len; i++) {
		s = s * 1103515245u + 12345u;
		buf[i] = (unsigned char)(s >> 16);
		shadow[i] = buf[i];
	}
}

/* Wait until @len bytes at @p are those at @want (at most POLL_MS). */
static bool odp_arrived(const void *p, const void *want, size_t len)
{
	uint64_t end = now_ms() + POLL_MS;

	while (memcmp(p, want, len)) {
		if (now_ms() > end)
			return false;
		usleep(1000);
	}
	return true;
}

/* [off, off + len) of @buf against @shadow: the first difference or -1. */
static long odp_differs(const unsigned char *buf, const unsigned char *shadow,
			size_t off, size_t len)
{
	size_t i;

	for (i = off; i < off + len; i++)
		if (buf[i] != shadow[i])
			return i;
	return -1;
}

/*
 * One signaled request @id of A on a UC connection, its SGE on @lmr.
 * Without acknowledgements it completes successfully whatever the
 * responder made of it; the completion must say SEND or RDMA_WRITE.
 */
static bool uc_odp_post(struct pair *p, const char *what, uint64_t id,
			enum ibv_wr_opcode op, struct ibv_mr *lmr, void *laddr,
			uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sg = { .addr = (uintptr_t)laddr, .length = len,
			      .lkey = lmr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &sg, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(UC_IMM + (uint8_t)id),
	};
	bool send = op == IBV_WR_SEND || op == IBV_WR_SEND_WITH_IMM;
	int ret;

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	ret = post_send_wr(&p->a, &wr);
	if (!vt_check(!ret, "%s: posted (%s)", what, vt_errname(ret)))
		return false;
	return expect_wc(p->a.scq, what,
			 &WCX(.status = IBV_WC_SUCCESS,
			      .opcode = send ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
			      .wr_id = id, .qp_num = p->a.qp->qp_num));
}

/* B's next receive completion: @id, @op, @len bytes, @id_imm's immediate. */
static bool uc_odp_recv(struct pair *p, const char *what, uint64_t id, int op,
			uint32_t len, int64_t id_imm)
{
	return expect_wc(p->b.rcq, what,
			 &WCX(.status = IBV_WC_SUCCESS, .opcode = op,
			      .wr_id = id, .qp_num = p->b.qp->qp_num,
			      .byte_len = len,
			      .wc_flags = id_imm >= 0 ? IBV_WC_WITH_IMM : 0,
			      .imm = UC_IMM + (uint8_t)id_imm));
}

/*
 * On-demand paging under UC QPs (uc_odp_caps): both sides' buffers are
 * explicit ODP MRs over memory nobody touched; SEND into a receive in ODP
 * memory, RDMA_WRITE and RDMA_WRITE_WITH_IMM into B's MR, byte-exact,
 * nothing pinned. Then writes into memory unmapped under B's MR: UC has
 * no acknowledgements, so the requester completes successfully, and
 * softhca's responder drops the message (shca_exec_write(): no byte
 * written, no receive consumed, no completion, no error state): B takes
 * the next message into the receive posted before. B's whole region is
 * compared with a shadow at the end: nothing landed anywhere else.
 */
static void t_odp_uc(struct vt_dev *da, struct vt_dev *db)
{
	struct ibv_query_device_ex_input in = { 0 };
	struct ibv_device_attr_ex ax;
	struct qp_opts uo = def_opts;
	uint32_t uc_need = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
			   IBV_ODP_SUPPORT_WRITE;
	unsigned char *ab = NULL, *bb = NULL, *bs = NULL, *as = NULL;
	size_t hole = 5u << 20, rcv = 6u << 20, hole_len = 1u << 20;
	struct ibv_mr *amr = NULL, *bmr = NULL;
	const char *what = "UC ODP";
	struct ibv_sge sge;
	long pin0, d1, d2;
	struct pair p;
	int ret, s;

	title("on-demand paging on UC");
	memset(&p, 0, sizeof(p));
	ret = ibv_query_device_ex(db->ctx, &in, &ax);
	if (!vt_check(!ret, "query_device_ex: %s", vt_errname(ret)))
		return;
	vt_contract((ax.odp_caps.per_transport_caps.uc_odp_caps & uc_need) == uc_need,
		    "%s: uc_odp_caps 0x%x (SEND, RECV, WRITE)",
		    db->name, ax.odp_caps.per_transport_caps.uc_odp_caps);
	if (!(ax.odp_caps.general_caps & IBV_ODP_SUPPORT) ||
	    (ax.odp_caps.per_transport_caps.uc_odp_caps & uc_need) != uc_need) {
		note_differs("%s: no ODP for UC, not tested", db->name);
		return;
	}
	uo.uc = true;
	uo.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
	if (!pair_up2(&p, da, db, &uo, &uo, what))
		goto out;
	vt_check(p.a.qp->qp_type == IBV_QPT_UC && p.b.qp->qp_type == IBV_QPT_UC &&
		 qp_state(p.a.qp) == IBV_QPS_RTS && qp_state(p.b.qp) == IBV_QPS_RTS,
		 "UC ODP: a UC QP pair connected, both in RTS");
	ab = odp_map(ODP_LEN);
	bb = odp_map(ODP_LEN);
	as = calloc(ODP_LEN, 1);
	bs = calloc(ODP_LEN, 1);
	if (!vt_check(ab && bb && as && bs, "%s: two %u MiB mappings", what,
		      ODP_LEN >> 20))
		goto out;
	pin0 = vt_status_kb("VmPin");
	amr = ibv_reg_mr(da->pd, ab, ODP_LEN, ACC_UC_ODP);
	bmr = ibv_reg_mr(db->pd, bb, ODP_LEN, ACC_UC_ODP);
	if (!vt_check(amr && bmr, "%s: reg_mr with ON_DEMAND on both sides (%s)",
		      what, amr && bmr ? "registered" : vt_errname(errno)))
		goto out;
	vt_check(vt_status_kb("VmPin") == pin0 && odp_resident(ab, ODP_LEN) == 0 &&
		 odp_resident(bb, ODP_LEN) == 0,
		 "UC ODP: nothing pinned, nothing faulted on either side (VmPin %ld kB, was %ld; %zu + %zu pages resident)",
		 vt_status_kb("VmPin"), pin0, odp_resident(ab, ODP_LEN),
		 odp_resident(bb, ODP_LEN));

	/* SEND of several packets into a receive at an odd offset. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)(bb + (1u << 20) + 5),
				.length = 16384, .lkey = bmr->lkey };
	ret = post_recv_sges(&p.b, 0x4400, &sge, 1);
	odp_fill(ab + 7, as + 7, 12388);
	memcpy(bs + (1u << 20) + 5, as + 7, 12388);
	if (vt_check(!ret, "UC ODP: receive posted into untouched ODP memory (%s)",
		     vt_errname(ret)) &&
	    uc_odp_post(&p, "UC ODP: SEND of 12388 bytes from ODP memory",
			0x4401, IBV_WR_SEND, amr, ab + 7, 12388, 0, 0) &&
	    uc_odp_recv(&p, "UC ODP: the receive", 0x4400, IBV_WC_RECV, 12388, -1))
		vt_check(!memcmp(bb + (1u << 20) + 5, ab + 7, 12388) &&
			 vt_all_bytes(bb + (1u << 20) + 5 + 12388, 16384 - 12388, 0),
			 "UC ODP: the received bytes are in B's memory, the rest of the receive buffer untouched");

	/* SEND_WITH_IMM: the immediate in the receive's completion. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)(bb + (1u << 20) + 65536),
				.length = 4096, .lkey = bmr->lkey };
	ret = post_recv_sges(&p.b, 0x4402, &sge, 1);
	odp_fill(ab + 65536, as + 65536, 1000);
	memcpy(bs + (1u << 20) + 65536, as + 65536, 1000);
	if (vt_check(!ret, "UC ODP: another receive posted (%s)", vt_errname(ret)) &&
	    uc_odp_post(&p, "UC ODP: SEND_WITH_IMM of 1000 bytes", 0x4403,
			IBV_WR_SEND_WITH_IMM, amr, ab + 65536, 1000, 0, 0) &&
	    uc_odp_recv(&p, "UC ODP: its receive", 0x4402, IBV_WC_RECV, 1000, 0x4403))
		vt_check(!memcmp(bb + (1u << 20) + 65536, ab + 65536, 1000),
			 "UC ODP: the SEND_WITH_IMM's bytes are in B's memory");

	/* RDMA_WRITE of 64 KiB into pages nobody touched. */
	odp_fill(ab + 131072, as + 131072, 65536);
	memcpy(bs + (2u << 20) + 100, as + 131072, 65536);
	if (uc_odp_post(&p, "UC ODP: RDMA_WRITE of 64 KiB, ODP to ODP", 0x4404,
			IBV_WR_RDMA_WRITE, amr, ab + 131072, 65536,
			(uintptr_t)(bb + (2u << 20) + 100), bmr->rkey))
		vt_check(odp_arrived(bb + (2u << 20) + 100, ab + 131072, 65536) &&
			 bb[(2u << 20) + 99] == 0 && bb[(2u << 20) + 100 + 65536] == 0,
			 "UC ODP: the written bytes are in B's memory, nothing around them");

	/* RDMA_WRITE_WITH_IMM: the data, and the immediate in a receive. */
	sge = (struct ibv_sge){ .addr = (uintptr_t)(bb + (4u << 20)),
				.length = 256, .lkey = bmr->lkey };
	ret = post_recv_sges(&p.b, 0x4405, &sge, 1);
	odp_fill(ab + 262144, as + 262144, 5000);
	memcpy(bs + (3u << 20) + 7, as + 262144, 5000);
	if (vt_check(!ret, "UC ODP: receive posted for the immediate (%s)",
		     vt_errname(ret)) &&
	    uc_odp_post(&p, "UC ODP: RDMA_WRITE_WITH_IMM of 5000 bytes", 0x4406,
			IBV_WR_RDMA_WRITE_WITH_IMM, amr, ab + 262144, 5000,
			(uintptr_t)(bb + (3u << 20) + 7), bmr->rkey) &&
	    uc_odp_recv(&p, "UC ODP: the immediate's receive", 0x4405,
			IBV_WC_RECV_RDMA_WITH_IMM, 5000, 0x4406))
		vt_check(!memcmp(bb + (3u << 20) + 7, ab + 262144, 5000) &&
			 vt_all_bytes(bb + (4u << 20), 256, 0),
			 "UC ODP: the bytes are in B's memory; the receive's buffer untouched");
	vt_check(vt_status_kb("VmPin") == pin0, "UC ODP: still nothing pinned");

	/*
	 * Memory unmapped under B's MR: the writes are dropped at the
	 * responder; the requester cannot know (success). The receive
	 * posted before them stays for the next message.
	 */
	ret = munmap(bb + hole, hole_len);
	if (!vt_check(!ret, "UC ODP: 1 MiB of B's region unmapped"))
		goto out;
	sge = (struct ibv_sge){ .addr = (uintptr_t)(bb + rcv), .length = 4096,
				.lkey = bmr->lkey };
	ret = post_recv_sges(&p.b, 0x4410, &sge, 1);
	vt_check(!ret, "UC ODP: a receive posted before the writes into the hole (%s)",
		 vt_errname(ret));
	odp_fill(ab + 400000, as + 400000, 4096);
	uc_odp_post(&p, "UC ODP: RDMA_WRITE into unmapped memory (success: UC has no ACK)",
		    0x4411, IBV_WR_RDMA_WRITE, amr, ab + 400000, 4096,
		    (uintptr_t)(bb + hole + 8), bmr->rkey);
	uc_odp_post(&p, "UC ODP: RDMA_WRITE_WITH_IMM into unmapped memory (success)",
		    0x4412, IBV_WR_RDMA_WRITE_WITH_IMM, amr, ab + 400000, 4096,
		    (uintptr_t)(bb + hole + 8192), bmr->rkey);
	expect_empty(p.b.rcq,
		     "UC ODP: B after the writes into the hole (dropped: no receive consumed)");
	expect_empty(p.a.scq, "UC ODP: A's send CQ after them");
	s = qp_state(p.b.qp);
	vt_contract(s == IBV_QPS_RTS, "UC ODP: the responder QP is still in RTS (%s)",
		    st_name(s));
	s = qp_state(p.a.qp);
	vt_check(s == IBV_QPS_RTS, "UC ODP: the requester QP is still in RTS (%s)",
		 st_name(s));
	odp_fill(ab + 500000, as + 500000, 777);
	memcpy(bs + rcv, as + 500000, 777);
	if (uc_odp_post(&p, "UC ODP: SEND after the dropped writes", 0x4413,
			IBV_WR_SEND, amr, ab + 500000, 777, 0, 0) &&
	    uc_odp_recv(&p, "UC ODP: it takes the receive posted before the dropped writes",
			0x4410, IBV_WC_RECV, 777, -1))
		vt_check(!memcmp(bb + rcv, ab + 500000, 777),
			 "UC ODP: the SEND's bytes are in B's memory");
	/* Right below the hole the memory is there: a write lands. */
	odp_fill(ab + 600000, as + 600000, 4096);
	memcpy(bs + hole - 4096, as + 600000, 4096);
	if (uc_odp_post(&p, "UC ODP: RDMA_WRITE to the last page before the hole",
			0x4414, IBV_WR_RDMA_WRITE, amr, ab + 600000, 4096,
			(uintptr_t)(bb + hole - 4096), bmr->rkey))
		vt_check(odp_arrived(bb + hole - 4096, ab + 600000, 4096),
			 "UC ODP: those bytes are in B's memory");

	/* Nothing landed anywhere else; A's memory as A wrote it. */
	d1 = odp_differs(bb, bs, 0, hole);
	d2 = odp_differs(bb, bs, hole + hole_len, ODP_LEN - hole - hole_len);
	vt_check(d1 < 0 && d2 < 0,
		 "UC ODP: B's %u MiB outside the hole hold exactly what arrived (first difference at %ld, -1: none)",
		 (ODP_LEN - (unsigned int)hole_len) >> 20, d1 >= 0 ? d1 : d2);
	d1 = odp_differs(ab, as, 0, ODP_LEN);
	vt_check(d1 < 0,
		 "UC ODP: A's region unchanged by the transfers (first difference at %ld, -1: none)",
		 d1);
	vt_check(vt_status_kb("VmPin") == pin0, "UC ODP: nothing pinned at the end");
out:
	if (amr)
		ibv_dereg_mr(amr);
	if (bmr)
		ibv_dereg_mr(bmr);
	if (ab)
		munmap(ab, ODP_LEN);
	if (bb)
		munmap(bb, ODP_LEN);
	free(as);
	free(bs);
	pair_down(&p);
}

int main(int argc, char **argv)
{
	static struct vt_dev d0, d1;
	struct vt_dev *da, *db;
	int i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV_A DEV_B (DEV_B = DEV_A: loopback)\n", argv[0]);
		return 2;
	}
	drv_name = argv[1];
	on_wire = getenv("SHCA_QP_WIRE") && !strcmp(getenv("SHCA_QP_WIRE"), "1");
	dev_open(&d0, argv[1]);
	da = &d0;
	if (strcmp(argv[1], argv[2])) {
		dev_open(&d1, argv[2]);
		db = &d1;
	} else {
		db = &d0;
	}
	vt_info("%s -> %s, %s rules", da->name, db->name,
		strict ? "softhca" : "softhca's contract with noted differences:");

	t_caps(da);
	t_ipv4_gid(da, db);
	t_states(da, db);
	t_data(da, db);
	t_self(da);
	t_events(da, db);
	t_qp_ex(da, db);
	t_parent_domain(da, db);
	t_mw(da, db);
	t_mw_refused(da, db);
	t_odp(da, db);
	t_odp_uc(da, db);

	title("error completions");
	for (i = E_LKEY; i <= E_RKEY_KERNEL; i++)
		t_access_err(da, db, i);
	t_recv_err(da, db, false);
	t_recv_err(da, db, true);
	t_rnr(da, db);
	t_retry(da, db);
	for (i = MW_E_RANGE; i <= MW_B_PD; i++)
		t_mw_err(da, db, i);

	ibv_dealloc_pd(d0.pd);
	ibv_close_device(d0.ctx);
	if (db != da) {
		ibv_dealloc_pd(d1.pd);
		ibv_close_device(d1.ctx);
	}
	return vt_exit();
}
