// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_stress [-p POSTERS] [-r REGISTRARS] [-k TARGETS] [-s SECS] [-S SEED]
 *             [-d USECS] DEV_REQ DEV_RESP
 *
 * Concurrency stress of MR re-registration under traffic, in one process
 * (tests/vm/99-stress.sh). DEV_RESP may equal DEV_REQ (loopback).
 *
 * On DEV_RESP live K "target" MRs (default 8), each over one of two
 * buffers of its own, and one "stable" MR that never changes. Their keys
 * are published in a shared table: per target one 64-bit word holding
 * the rkey, which buffer, the remote rights, whether it is registered at
 * all, and a version that is odd while a registrar is changing it.
 *
 * R registrar threads (default 2) loop over random targets, under the
 * target's mutex: ibv_rereg_mr(CHANGE_TRANSLATION) to the target's other
 * buffer (new rkey; a quarter of them with CHANGE_ACCESS too),
 * ibv_rereg_mr(CHANGE_ACCESS) to another combination of LOCAL_WRITE /
 * REMOTE_WRITE / REMOTE_READ (an upgrade over a read-only pin makes a new
 * MR: new rkey), ibv_dereg_mr, and ibv_reg_mr of a deregistered target on
 * either buffer (new rkey); then they publish, and pause for up to USECS
 * (default 1000; 0: not at all).
 *
 * P poster threads (default 4), each with its own RC QP pair (requester
 * on DEV_REQ, responder on DEV_RESP) and its own two CQs, keep up to 16
 * signaled RDMA WRITEs, RDMA READs and SENDs outstanding (16 bytes to
 * 8 KiB, at any offset of the work request's own 8 KiB slot, so most cross
 * a page), against the stable MR or a random target with the key and
 * address from the table (one in eight from the poster's own older copy
 * of it: a stale key on purpose). Every completion must be:
 *   - IBV_WC_SUCCESS; or
 *   - IBV_WC_REM_ACCESS_ERR for a WRITE/READ to a target, unless the
 *     table said (with an even version that did not change until the
 *     completion) that the key was valid with the right: then it must
 *     succeed; and a key the table said was dead or without the right
 *     must fail;
 *   - IBV_WC_WR_FLUSH_ERR after an error, in the same connection.
 * Completions arrive in posting order (wr_id checked). After an error the
 * poster drains its send queue, moves the responder to ERR, collects the
 * flushed receives, resets both QPs (RESET -> INIT -> RTR -> RTS) and
 * goes on: posted == completed for sends and for receives, every time.
 *
 * Bytes: a successful WRITE to the stable MR must be there byte for byte,
 * a READ of it must return what the poster last wrote; a successful WRITE
 * to a target whose table word is still the same must be there (checked
 * under the target's mutex); a SEND arrives whole in its receive. A
 * buffer that is not registered (its target deregistered, or translated
 * to the other buffer) is filled with a poison byte when it leaves, and
 * must still hold only poison when it is registered again and at the end:
 * nothing may be written through a key after ibv_dereg_mr or a
 * translation change returned.
 *
 * Prints one "stress ..." summary line and ok/FAIL checks. Exit status 0
 * all checks passed, 1 some failed, 2 could not start.
 *
 * On a driver other than softhca (no softhca_abi_version in sysfs)
 * re-registration may be refused; the registrars then use dereg + reg.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

#define SLOT		8192u		/* bytes of one work request's slot */
#define DEPTH		16u		/* outstanding sends per poster */
#define CHAIN		4u		/* work requests per ibv_post_send */
#define RECVS		32u		/* receives per responder */
#define SENDQ		256u		/* SEND records awaiting their receive */
#define POISON		0xee
#define STABLE_INIT	0x11
#define DRAIN_MS	20000		/* bound for any expected completion */
#define MAX_P		64
#define MAX_R		16
#define MAX_K		64

#define ACC_LW	IBV_ACCESS_LOCAL_WRITE
#define ACC_RW	IBV_ACCESS_REMOTE_WRITE
#define ACC_RR	IBV_ACCESS_REMOTE_READ

/* Access combinations a target cycles through. */
static const int accs[] = {
	ACC_LW | ACC_RW | ACC_RR, ACC_LW | ACC_RW, ACC_LW | ACC_RR, ACC_RR, ACC_LW,
};
#define NACCS	((int)(sizeof(accs) / sizeof(accs[0])))

/* ---- the published table --------------------------------------------------- */

/* state word: rkey 0..31, registered 32, buffer 33, RW 34, RR 35, version 36.. */
#define ST_REG		(1ull << 32)
#define ST_BUF		(1ull << 33)
#define ST_RW		(1ull << 34)
#define ST_RR		(1ull << 35)
#define ST_VSHIFT	36

static inline uint32_t st_rkey(uint64_t s) { return (uint32_t)s; }
static inline int st_buf(uint64_t s) { return !!(s & ST_BUF); }
static inline uint64_t st_ver(uint64_t s) { return s >> ST_VSHIFT; }
static inline bool st_busy(uint64_t s) { return st_ver(s) & 1; }

struct target {
	pthread_mutex_t lock;		/* registrars; posters checking bytes */
	struct ibv_mr *mr;		/* NULL while deregistered */
	unsigned char *buf[2];
	int cur;			/* buffer of mr (or of the last one) */
	int acc;			/* index into accs[] */
	uint32_t last_rkey;
	uint64_t ver;
	_Atomic uint64_t state;
};

/* ---- configuration and shared state ----------------------------------------- */

static unsigned int nposters = 4, nregs = 2, ntargets = 8, secs = 15, seed = 1;
static unsigned int reg_delay = 1000;	/* us, at most, between a registrar's calls */
static struct vt_dev sides[2];
static struct vt_dev *req_side, *resp_side;
static bool loopback, strict;
static size_t tlen;			/* bytes of a target buffer */
static struct target targets[MAX_K];
static unsigned char *stable_buf;
static struct ibv_mr *stable_mr;
static atomic_bool stop_flag, async_stop;
static atomic_bool rereg_refused;	/* not softhca: rereg refused, use dereg + reg */

/* ---- failures (any thread): counted, the first few printed ------------------ */

enum fail_kind {
	F_STATUS,	/* a completion status outside the three allowed */
	F_ORDER,	/* wr_id out of order, success after error, flush without one */
	F_EXPECT_OK,	/* REM_ACCESS_ERR although the key was valid and unchanged */
	F_EXPECT_ERR,	/* success through a dead key or without the right */
	F_BYTES,	/* bytes wrong after a successful WRITE / READ / SEND */
	F_POISON,	/* an unregistered buffer was written */
	F_VERB,		/* a verbs call failed */
	F_LOST,		/* a completion did not arrive */
	F_RECV,		/* receive side: no SEND for it, or a SEND without it */
	F_ASYNC,	/* an unexpected async event */
	F_NR
};

static const char *const fail_desc[F_NR] = {
	[F_STATUS] = "completion statuses other than SUCCESS, REM_ACCESS_ERR, WR_FLUSH_ERR",
	[F_ORDER] = "completions out of order (wr_id, success after an error, flush without one)",
	[F_EXPECT_OK] = "REM_ACCESS_ERR for a key that was valid, with the right, and unchanged",
	[F_EXPECT_ERR] = "success through a dead key or a key without the right",
	[F_BYTES] = "wrong bytes after a successful WRITE, READ or SEND",
	[F_POISON] = "writes into a buffer after its MR was deregistered or translated away",
	[F_VERB] = "verbs calls that failed",
	[F_LOST] = "completions that never arrived",
	[F_RECV] = "receives without their SEND or SENDs without their receive",
	[F_ASYNC] = "unexpected async events",
};

static atomic_ulong fails[F_NR];
static pthread_mutex_t print_lock = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((format(printf, 2, 3))) failf(enum fail_kind k, const char *fmt, ...)
{
	unsigned long n = atomic_fetch_add(&fails[k], 1);
	va_list ap;

	if (n >= 5)
		return;
	pthread_mutex_lock(&print_lock);
	va_start(ap, fmt);
	fputs("  # FAILED: ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static void __attribute__((format(printf, 1, 2))) infof(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&print_lock);
	va_start(ap, fmt);
	fputs("  # ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&print_lock);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static uint32_t rnd(uint32_t *s)
{
	uint32_t x = *s;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	return *s = x;
}

/* The bytes a work request with @seed carries: consecutive bytes differ. */
static inline uint8_t pat(uint32_t seed_, size_t i)
{
	return (uint8_t)(seed_ * 0x9du + (seed_ >> 8) + i * 7u + (i >> 8) * 3u);
}

static void pat_fill(unsigned char *p, uint32_t seed_, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = pat(seed_, i);
}

/* Index of the first byte that differs from the pattern, or -1. */
static long pat_check(const unsigned char *p, uint32_t seed_, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pat(seed_, i))
			return (long)i;
	return -1;
}

static long first_not(const unsigned char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			return (long)i;
	return -1;
}

/* ---- devices and QPs ---------------------------------------------------------- */

static void side_open(struct vt_dev *d, const char *name)
{
	int fl;

	vt_dev_open(d, name);
	fl = fcntl(d->ctx->async_fd, F_GETFL);
	fcntl(d->ctx->async_fd, F_SETFL, fl | O_NONBLOCK);
	strict = d->is_softhca;
}

static int rd_atom(const struct vt_dev *d)
{
	int n = d->attr.max_qp_rd_atom;

	if (d->attr.max_qp_init_rd_atom < n)
		n = d->attr.max_qp_init_rd_atom;
	if (n > 16)
		n = 16;
	return n < 1 ? 1 : n;
}

static int modify_state(struct ibv_qp *qp, enum ibv_qp_state st)
{
	struct ibv_qp_attr a = { .qp_state = st };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* RESET -> INIT -> RTR -> RTS, @qp on @self connected to @dqpn on @peer. */
static int connect_qp(struct ibv_qp *qp, const struct vt_dev *self,
		      const struct vt_dev *peer, uint32_t dqpn)
{
	const struct vt_rc_path p = {
		.dgid = peer->gid,
		.dest_qpn = dqpn,
		.sgid_index = self->gid_idx,
		.mtu = self->mtu < peer->mtu ? self->mtu : peer->mtu,
		.access = ACC_LW | ACC_RW | ACC_RR,
		.rd_atom = rd_atom(self),
		.min_rnr_timer = 12,
		.timeout = 14,
		.retry_cnt = 7,
		.rnr_retry = 7,
	};

	return vt_rc_connect(qp, &p);
}

/* ---- posters ------------------------------------------------------------------ */

enum op { OP_WRITE, OP_READ, OP_SEND, OP_NR };
static const char *const op_name[OP_NR] = { "write", "read", "send" };

struct wr_rec {				/* an outstanding send work request */
	uint64_t wr_id;
	enum op op;
	int tgt;			/* -1: the stable MR */
	uint64_t state;			/* target's table word used */
	bool has;			/* the word said: valid key with the right */
	uint32_t len;
	uint32_t off;			/* of the bytes in the slot (crossing pages) */
	uint32_t seed;
	uint64_t sendq_seq;		/* SEND: its record in sendq */
};

struct send_rec {			/* a SEND awaiting its receive */
	uint32_t seed, len;
	int status;			/* its send completion, -1 not yet */
};

struct poster {
	int id;
	pthread_t th;
	uint32_t rs;
	struct ibv_cq *cq_req, *cq_resp;
	struct ibv_qp *rq, *pq;		/* requester, responder */
	unsigned char *lbuf;		/* 2 * DEPTH slots: sources, READ targets */
	struct ibv_mr *lmr;
	unsigned char *rbuf;		/* RECVS slots on the responder */
	struct ibv_mr *rmr;
	unsigned char *shadow;		/* what the stable MR's slots hold */
	uint64_t cache[MAX_K];		/* this poster's older copy of the table */

	struct wr_rec rec[DEPTH];
	unsigned int freeslots[DEPTH], nfree;
	unsigned int ring[DEPTH], rhead, nout;	/* posting order */
	uint64_t seq;

	uint64_t recv_wrid[RECVS];
	unsigned int rfree[RECVS], nrfree;
	unsigned int rring[RECVS], rrhead, nrout;
	uint64_t rseq;

	struct send_rec sendq[SENDQ];
	uint64_t sq_head, sq_tail;	/* sequence numbers */

	bool err;			/* an error completion in this connection */
	bool rflushed;			/* a flushed receive in this connection */
	bool dead;			/* gave up (lost completions, failed verbs) */
	bool end_err;			/* stopped with an error not yet reset */

	/* counters */
	unsigned long posted[OP_NR], ok[OP_NR], rae[OP_NR], flushed, other;
	unsigned long completed;
	unsigned long rposted, rcompleted, rok, rflush;
	unsigned long reconnects, stale_used;
	unsigned long wr_verified, wr_unverified, rd_verified, send_verified;
	unsigned long expect_ok_n, expect_err_n;
	unsigned long must_ok, must_err;	/* outcomes the table dictated */
};

static struct poster posters[MAX_P];

static unsigned char *lsrc(struct poster *p, unsigned int slot)
{
	return p->lbuf + (size_t)slot * SLOT;
}

static unsigned char *ldst(struct poster *p, unsigned int slot)
{
	return p->lbuf + (size_t)(DEPTH + slot) * SLOT;
}

/* Offset of poster @p's slot @slot in a target buffer or the stable MR. */
static size_t roff(const struct poster *p, unsigned int slot)
{
	return ((size_t)p->id * DEPTH + slot) * SLOT;
}

static int post_recvs(struct poster *p)
{
	struct ibv_recv_wr wrs[RECVS], *bad;
	struct ibv_sge sges[RECVS];
	unsigned int n = 0, i;
	int ret;

	while (p->nrfree) {
		unsigned int slot = p->rfree[--p->nrfree];

		sges[n] = (struct ibv_sge){
			.addr = (uintptr_t)(p->rbuf + (size_t)slot * SLOT),
			.length = SLOT, .lkey = p->rmr->lkey,
		};
		p->recv_wrid[slot] = (p->rseq++ << 8) | slot;
		wrs[n] = (struct ibv_recv_wr){
			.wr_id = p->recv_wrid[slot], .sg_list = &sges[n],
			.num_sge = 1, .next = NULL,
		};
		if (n)
			wrs[n - 1].next = &wrs[n];
		n++;
	}
	if (!n)
		return 0;
	ret = ibv_post_recv(p->pq, wrs, &bad);
	for (i = 0; i < n; i++) {
		unsigned int slot = wrs[i].wr_id & 0xff;

		if (ret && &wrs[i] == bad) {
			/* this one and the rest were not posted */
			for (; i < n; i++)
				p->rfree[p->nrfree++] = wrs[i].wr_id & 0xff;
			break;
		}
		p->rring[(p->rrhead + p->nrout) % RECVS] = slot;
		p->nrout++;
		p->rposted++;
	}
	if (ret) {
		failf(F_VERB, "poster %d: ibv_post_recv: %s", p->id, vt_errname(ret));
		p->dead = true;
	}
	return ret;
}

/* Fill one work request for a free slot; returns the slot. */
static unsigned int prepare(struct poster *p, struct ibv_send_wr *wr,
			    struct ibv_sge *sg)
{
	unsigned int slot = p->freeslots[--p->nfree];
	struct wr_rec *r = &p->rec[slot];
	uint32_t x = rnd(&p->rs);

	memset(r, 0, sizeof(*r));
	r->op = x % 3;
	r->len = 16 + rnd(&p->rs) % ((x >> 26) % 4 ? SLOT - 15 : 256);
	r->off = rnd(&p->rs) % (SLOT - r->len + 1);
	r->seed = (uint32_t)p->id << 24 ^ (uint32_t)p->seq;
	r->wr_id = (p->seq++ << 8) | slot;
	r->tgt = -1;
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = r->wr_id;
	wr->sg_list = sg;
	wr->num_sge = 1;
	wr->send_flags = IBV_SEND_SIGNALED;
	sg->length = r->len;
	sg->lkey = p->lmr->lkey;

	if (r->op != OP_SEND && (x >> 8) % 2) {
		/* a target, by the table or by this poster's older copy */
		unsigned int t = (x >> 12) % ntargets;
		uint64_t fresh = atomic_load(&targets[t].state);
		uint64_t s = fresh;

		if ((x >> 20) % 8 == 0 && p->cache[t]) {
			s = p->cache[t];
			if (s != fresh)
				p->stale_used++;
		}
		if ((x >> 24) % 4 == 0)
			p->cache[t] = fresh;
		r->tgt = t;
		r->state = s;
		r->has = !st_busy(s) && (s & ST_REG) &&
			 (s & (r->op == OP_WRITE ? ST_RW : ST_RR));
		wr->wr.rdma.rkey = st_rkey(s);
		wr->wr.rdma.remote_addr =
			(uintptr_t)(targets[t].buf[st_buf(s)] + roff(p, slot) + r->off);
	} else if (r->op != OP_SEND) {
		r->has = true;
		wr->wr.rdma.rkey = stable_mr->rkey;
		wr->wr.rdma.remote_addr = (uintptr_t)(stable_buf + roff(p, slot) + r->off);
	}
	switch (r->op) {
	case OP_WRITE:
		wr->opcode = IBV_WR_RDMA_WRITE;
		pat_fill(lsrc(p, slot) + r->off, r->seed, r->len);
		sg->addr = (uintptr_t)(lsrc(p, slot) + r->off);
		break;
	case OP_READ:
		wr->opcode = IBV_WR_RDMA_READ;
		memset(ldst(p, slot) + r->off, 0, r->len);
		sg->addr = (uintptr_t)(ldst(p, slot) + r->off);
		break;
	default:
		wr->opcode = IBV_WR_SEND;
		pat_fill(lsrc(p, slot) + r->off, r->seed, r->len);
		sg->addr = (uintptr_t)(lsrc(p, slot) + r->off);
		break;
	}
	return slot;
}

static void post_some(struct poster *p)
{
	struct ibv_send_wr wrs[CHAIN], *bad = NULL;
	struct ibv_sge sges[CHAIN];
	unsigned int slots[CHAIN], n = 0, i;
	int ret;

	while (n < CHAIN && p->nfree) {
		/* a SEND needs room for its record until its receive is polled */
		if (p->sq_tail - p->sq_head >= SENDQ - CHAIN)
			break;
		slots[n] = prepare(p, &wrs[n], &sges[n]);
		if (n)
			wrs[n - 1].next = &wrs[n];
		if (p->rec[slots[n]].op == OP_SEND) {
			struct send_rec *s = &p->sendq[p->sq_tail % SENDQ];

			s->seed = p->rec[slots[n]].seed;
			s->len = p->rec[slots[n]].len;
			s->status = -1;
			p->rec[slots[n]].sendq_seq = p->sq_tail++;
		}
		n++;
	}
	if (!n)
		return;
	ret = ibv_post_send(p->rq, wrs, &bad);
	for (i = 0; i < n; i++) {
		if (ret && &wrs[i] == bad)
			break;
		p->ring[(p->rhead + p->nout) % DEPTH] = slots[i];
		p->nout++;
		p->posted[p->rec[slots[i]].op]++;
	}
	if (ret) {
		failf(F_VERB, "poster %d: ibv_post_send: %s", p->id, vt_errname(ret));
		/* give the slots, and the SEND records (the newest), back */
		for (; i < n; i++) {
			if (p->rec[slots[i]].op == OP_SEND)
				p->sq_tail--;
			p->freeslots[p->nfree++] = slots[i];
		}
		p->dead = true;
	}
}

/* The table word of @r's target has not changed since it was read. */
static bool unchanged(const struct wr_rec *r)
{
	return r->tgt >= 0 && !st_busy(r->state) &&
	       atomic_load(&targets[r->tgt].state) == r->state;
}

static void check_success(struct poster *p, struct wr_rec *r, unsigned int slot,
			  const struct ibv_wc *wc)
{
	static const enum ibv_wc_opcode want[OP_NR] = {
		IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_SEND,
	};
	long bad;

	if (wc->opcode != want[r->op])
		failf(F_STATUS, "poster %d: %s wr_id 0x%" PRIx64 " completed with opcode %d",
		      p->id, op_name[r->op], r->wr_id, wc->opcode);
	if (r->tgt >= 0 && !r->has && unchanged(r)) {
		failf(F_EXPECT_ERR, "poster %d: %s through rkey 0x%x of target %d (%s%s%s, version %" PRIu64 ", unchanged) succeeded",
		      p->id, op_name[r->op], st_rkey(r->state), r->tgt,
		      r->state & ST_REG ? "registered" : "deregistered",
		      r->state & ST_RW ? ", remote write" : "",
		      r->state & ST_RR ? ", remote read" : "", st_ver(r->state));
		p->expect_err_n++;
	}
	if (r->op == OP_WRITE && r->tgt < 0) {
		unsigned char *d = stable_buf + roff(p, slot) + r->off;

		bad = pat_check(d, r->seed, r->len);
		if (bad >= 0)
			failf(F_BYTES, "poster %d: WRITE of %u bytes to the stable MR: byte %ld is 0x%02x, expected 0x%02x",
			      p->id, r->len, bad, d[bad], pat(r->seed, bad));
		memcpy(p->shadow + (size_t)slot * SLOT + r->off, d, r->len);
		p->wr_verified++;
	} else if (r->op == OP_WRITE) {
		struct target *t = &targets[r->tgt];
		bool checked = false;

		pthread_mutex_lock(&t->lock);
		if (atomic_load(&t->state) == r->state && !st_busy(r->state)) {
			unsigned char *d = t->buf[st_buf(r->state)] + roff(p, slot) + r->off;

			bad = pat_check(d, r->seed, r->len);
			if (bad >= 0)
				failf(F_BYTES, "poster %d: WRITE of %u bytes to target %d (rkey 0x%x, unchanged): byte %ld is 0x%02x, expected 0x%02x",
				      p->id, r->len, r->tgt, st_rkey(r->state), bad,
				      d[bad], pat(r->seed, bad));
			checked = true;
		}
		pthread_mutex_unlock(&t->lock);
		if (checked)
			p->wr_verified++;
		else
			p->wr_unverified++;
	} else if (r->op == OP_READ && r->tgt < 0) {
		const unsigned char *d = ldst(p, slot) + r->off;
		const unsigned char *s = p->shadow + (size_t)slot * SLOT + r->off;

		if (wc->byte_len != r->len)
			failf(F_BYTES, "poster %d: READ of %u bytes: byte_len %u",
			      p->id, r->len, wc->byte_len);
		if (memcmp(d, s, r->len)) {
			size_t i = 0;

			while (d[i] == s[i])
				i++;
			failf(F_BYTES, "poster %d: READ of %u bytes from the stable MR: byte %zu is 0x%02x, expected 0x%02x",
			      p->id, r->len, i, d[i], s[i]);
		}
		p->rd_verified++;
	}
}

static void handle_send_wc(struct poster *p, const struct ibv_wc *wc)
{
	unsigned int slot;
	struct wr_rec *r;

	if (!p->nout) {
		failf(F_ORDER, "poster %d: completion wr_id 0x%" PRIx64 " status %s with nothing outstanding",
		      p->id, wc->wr_id, ibv_wc_status_str(wc->status));
		return;
	}
	slot = p->ring[p->rhead];
	r = &p->rec[slot];
	if (wc->wr_id != r->wr_id || wc->qp_num != p->rq->qp_num)
		failf(F_ORDER, "poster %d: completion wr_id 0x%" PRIx64 " qp 0x%x, expected wr_id 0x%" PRIx64 " qp 0x%x",
		      p->id, wc->wr_id, wc->qp_num, r->wr_id, p->rq->qp_num);
	p->rhead = (p->rhead + 1) % DEPTH;
	p->nout--;
	p->freeslots[p->nfree++] = slot;
	p->completed++;

	if (r->op == OP_SEND) {
		uint64_t q = r->sendq_seq;

		if (q < p->sq_head) {
			/* its receive completed already */
			if (wc->status != IBV_WC_SUCCESS)
				failf(F_RECV, "poster %d: SEND wr_id 0x%" PRIx64 " arrived in its receive but completed with %s",
				      p->id, r->wr_id, ibv_wc_status_str(wc->status));
		} else {
			p->sendq[q % SENDQ].status = wc->status;
		}
	}

	if ((wc->status == IBV_WC_SUCCESS || wc->status == IBV_WC_REM_ACCESS_ERR) &&
	    unchanged(r)) {
		if (r->has)
			p->must_ok++;
		else
			p->must_err++;
	}
	switch (wc->status) {
	case IBV_WC_SUCCESS:
		p->ok[r->op]++;
		if (p->err)
			failf(F_ORDER, "poster %d: %s wr_id 0x%" PRIx64 " succeeded after an error completion",
			      p->id, op_name[r->op], r->wr_id);
		check_success(p, r, slot, wc);
		break;
	case IBV_WC_REM_ACCESS_ERR:
		p->rae[r->op]++;
		if (p->err)
			failf(F_ORDER, "poster %d: a second error completion (REM_ACCESS_ERR, %s) instead of a flush",
			      p->id, op_name[r->op]);
		p->err = true;
		if (r->op == OP_SEND || r->tgt < 0) {
			failf(F_EXPECT_OK, "poster %d: %s to %s completed with REM_ACCESS_ERR",
			      p->id, op_name[r->op], r->tgt < 0 ? "the stable MR" : "a receive");
			p->expect_ok_n++;
		} else if (r->has && unchanged(r)) {
			failf(F_EXPECT_OK, "poster %d: %s through rkey 0x%x of target %d (valid with the right, version %" PRIu64 ", unchanged): REM_ACCESS_ERR",
			      p->id, op_name[r->op], st_rkey(r->state), r->tgt,
			      st_ver(r->state));
			p->expect_ok_n++;
		}
		break;
	case IBV_WC_WR_FLUSH_ERR:
		p->flushed++;
		if (!p->err)
			failf(F_ORDER, "poster %d: %s wr_id 0x%" PRIx64 " flushed without an error before it",
			      p->id, op_name[r->op], r->wr_id);
		p->err = true;
		break;
	default:
		p->other++;
		p->err = true;
		failf(F_STATUS, "poster %d: %s wr_id 0x%" PRIx64 " to %s%d: status %s (%d), vendor_err 0x%x",
		      p->id, op_name[r->op], r->wr_id, r->tgt < 0 ? "stable " : "target ",
		      r->tgt, ibv_wc_status_str(wc->status), wc->status, wc->vendor_err);
		break;
	}
}

static void handle_recv_wc(struct poster *p, const struct ibv_wc *wc)
{
	struct send_rec *s;
	unsigned int slot;
	long bad;

	if (!p->nrout) {
		failf(F_ORDER, "poster %d: receive completion wr_id 0x%" PRIx64 " status %s with none posted",
		      p->id, wc->wr_id, ibv_wc_status_str(wc->status));
		return;
	}
	slot = p->rring[p->rrhead];
	if (wc->wr_id != p->recv_wrid[slot] || wc->qp_num != p->pq->qp_num)
		failf(F_ORDER, "poster %d: receive completion wr_id 0x%" PRIx64 " qp 0x%x, expected 0x%" PRIx64 " qp 0x%x",
		      p->id, wc->wr_id, wc->qp_num, p->recv_wrid[slot], p->pq->qp_num);
	p->rrhead = (p->rrhead + 1) % RECVS;
	p->nrout--;
	p->rfree[p->nrfree++] = slot;
	p->rcompleted++;

	if (wc->status == IBV_WC_WR_FLUSH_ERR) {
		p->rflush++;
		p->rflushed = true;
		return;
	}
	if (wc->status != IBV_WC_SUCCESS) {
		p->other++;
		p->rflushed = true;
		failf(F_STATUS, "poster %d: receive: status %s (%d)", p->id,
		      ibv_wc_status_str(wc->status), wc->status);
		return;
	}
	p->rok++;
	if (p->rflushed)
		failf(F_ORDER, "poster %d: a receive succeeded after one was flushed", p->id);
	if (wc->opcode != IBV_WC_RECV)
		failf(F_STATUS, "poster %d: receive completed with opcode %d", p->id, wc->opcode);
	if (p->sq_head == p->sq_tail) {
		failf(F_RECV, "poster %d: a receive of %u bytes completed with no SEND outstanding",
		      p->id, wc->byte_len);
		return;
	}
	s = &p->sendq[p->sq_head++ % SENDQ];
	if (s->status > 0)
		failf(F_RECV, "poster %d: the SEND for this receive completed with %s",
		      p->id, ibv_wc_status_str(s->status));
	if (wc->byte_len != s->len) {
		failf(F_BYTES, "poster %d: receive byte_len %u, the SEND had %u",
		      p->id, wc->byte_len, s->len);
		return;
	}
	bad = pat_check(p->rbuf + (size_t)slot * SLOT, s->seed, s->len);
	if (bad >= 0)
		failf(F_BYTES, "poster %d: received SEND of %u bytes: byte %ld differs",
		      p->id, s->len, bad);
	p->send_verified++;
}

/* Poll both CQs once; the number of completions. */
static int poll_once(struct poster *p)
{
	struct ibv_wc wc[32];
	int n, i, total = 0;

	n = ibv_poll_cq(p->cq_req, 32, wc);
	if (n < 0) {
		failf(F_VERB, "poster %d: ibv_poll_cq: %d", p->id, n);
		p->dead = true;
		return 0;
	}
	for (i = 0; i < n; i++)
		handle_send_wc(p, &wc[i]);
	total += n;
	n = ibv_poll_cq(p->cq_resp, 32, wc);
	if (n < 0) {
		failf(F_VERB, "poster %d: ibv_poll_cq: %d", p->id, n);
		p->dead = true;
		return total;
	}
	for (i = 0; i < n; i++)
		handle_recv_wc(p, &wc[i]);
	return total + n;
}

/* Poll until nothing is outstanding on @what (nout or nrout); false on timeout. */
static bool drain(struct poster *p, const unsigned int *what, const char *desc)
{
	uint64_t end = now_ms() + DRAIN_MS;

	while (*what) {
		if (!poll_once(p)) {
			if (p->dead || now_ms() > end)
				break;
			usleep(200);
		}
	}
	if (*what) {
		failf(F_LOST, "poster %d: %u %s still outstanding after %d s",
		      p->id, *what, desc, DRAIN_MS / 1000);
		p->dead = true;
		return false;
	}
	return true;
}

/* SENDs that succeeded must have met their receive; drop the rest. */
static void sendq_settle(struct poster *p)
{
	while (p->sq_head < p->sq_tail) {
		struct send_rec *s = &p->sendq[p->sq_head++ % SENDQ];

		if (s->status == IBV_WC_SUCCESS)
			failf(F_RECV, "poster %d: a SEND of %u bytes completed successfully, its receive never did",
			      p->id, s->len);
	}
}

/* Both QPs to ERR, everything collected. */
static bool quiesce(struct poster *p)
{
	int ret;

	ret = modify_state(p->rq, IBV_QPS_ERR);
	if (!ret)
		ret = modify_state(p->pq, IBV_QPS_ERR);
	if (ret) {
		failf(F_VERB, "poster %d: modify_qp to ERR: %s", p->id, vt_errname(ret));
		p->dead = true;
		return false;
	}
	if (!drain(p, &p->nout, "send completions") ||
	    !drain(p, &p->nrout, "receive completions"))
		return false;
	sendq_settle(p);
	return true;
}

static void reconnect(struct poster *p)
{
	int ret;

	if (!quiesce(p))
		return;
	ret = modify_state(p->rq, IBV_QPS_RESET);
	if (!ret)
		ret = modify_state(p->pq, IBV_QPS_RESET);
	if (!ret)
		ret = connect_qp(p->pq, resp_side, req_side, p->rq->qp_num);
	if (!ret)
		ret = connect_qp(p->rq, req_side, resp_side, p->pq->qp_num);
	if (ret) {
		failf(F_VERB, "poster %d: reconnecting: %s", p->id, vt_errname(ret));
		p->dead = true;
		return;
	}
	p->err = false;
	p->rflushed = false;
	p->reconnects++;
	post_recvs(p);
}

static void *poster_main(void *arg)
{
	struct poster *p = arg;
	unsigned int idle = 0;

	post_recvs(p);
	while (!atomic_load(&stop_flag) && !p->dead) {
		if (!p->err && !p->rflushed) {
			post_some(p);
			post_recvs(p);
		}
		if (poll_once(p)) {
			idle = 0;
		} else if (++idle > 4) {
			usleep(100);
			idle = 0;
		}
		if (p->err || p->rflushed) {
			/*
			 * The responder flushes its receives when a request
			 * failed there: that request's completion is still
			 * on its way to the requester's CQ.
			 */
			if (!p->err && p->nout)
				continue;
			if (!p->err)
				failf(F_ORDER, "poster %d: receives flushed, but no request failed",
				      p->id);
			reconnect(p);
		}
	}
	if (p->dead)
		return NULL;
	/* the end: what is outstanding completes, then both QPs flush */
	if (!drain(p, &p->nout, "send completions"))
		return NULL;
	p->end_err = p->err || p->rflushed;
	if (!p->err) {
		uint64_t end = now_ms() + DRAIN_MS;

		/* every SEND that succeeded has its receive completed */
		while (p->sq_head < p->sq_tail &&
		       p->sendq[p->sq_head % SENDQ].status == IBV_WC_SUCCESS &&
		       now_ms() < end)
			if (!poll_once(p))
				usleep(200);
		if (p->rflushed)
			failf(F_ORDER, "poster %d: receives flushed without an error", p->id);
	}
	quiesce(p);
	return NULL;
}

static int poster_setup(struct poster *p, int id)
{
	struct ibv_qp_init_attr ia;
	unsigned int i;
	int ret;

	p->id = id;
	p->rs = seed * 2654435761u + id * 40503u + 1;
	if (!p->rs)
		p->rs = 1;
	p->cq_req = ibv_create_cq(req_side->ctx, DEPTH * 2, NULL, NULL, 0);
	p->cq_resp = ibv_create_cq(resp_side->ctx, RECVS * 2, NULL, NULL, 0);
	if (!p->cq_req || !p->cq_resp) {
		vt_bad("poster %d: ibv_create_cq: %s", id, vt_errname(errno));
		return -1;
	}
	memset(&ia, 0, sizeof(ia));
	ia.qp_type = IBV_QPT_RC;
	ia.send_cq = ia.recv_cq = p->cq_req;
	ia.cap.max_send_wr = DEPTH;
	ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	p->rq = ibv_create_qp(req_side->pd, &ia);
	ia.send_cq = ia.recv_cq = p->cq_resp;
	ia.cap.max_send_wr = 1;
	ia.cap.max_recv_wr = RECVS;
	p->pq = p->rq ? ibv_create_qp(resp_side->pd, &ia) : NULL;
	if (!p->pq) {
		vt_bad("poster %d: ibv_create_qp: %s", id, vt_errname(errno));
		return -1;
	}
	p->lbuf = mmap(NULL, 2 * DEPTH * SLOT, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p->rbuf = mmap(NULL, RECVS * SLOT, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	p->shadow = malloc(DEPTH * SLOT);
	if (p->lbuf == MAP_FAILED || p->rbuf == MAP_FAILED || !p->shadow) {
		vt_bad("poster %d: out of memory", id);
		return -1;
	}
	memset(p->shadow, STABLE_INIT, DEPTH * SLOT);
	memset(p->lbuf, 0, 2 * DEPTH * SLOT);
	memset(p->rbuf, 0, RECVS * SLOT);
	p->lmr = ibv_reg_mr(req_side->pd, p->lbuf, 2 * DEPTH * SLOT, ACC_LW);
	p->rmr = ibv_reg_mr(resp_side->pd, p->rbuf, RECVS * SLOT, ACC_LW);
	if (!p->lmr || !p->rmr) {
		vt_bad("poster %d: ibv_reg_mr: %s", id, vt_errname(errno));
		return -1;
	}
	for (i = 0; i < DEPTH; i++)
		p->freeslots[p->nfree++] = i;
	for (i = 0; i < RECVS; i++)
		p->rfree[p->nrfree++] = i;
	ret = connect_qp(p->pq, resp_side, req_side, p->rq->qp_num);
	if (!ret)
		ret = connect_qp(p->rq, req_side, resp_side, p->pq->qp_num);
	if (ret) {
		vt_bad("poster %d: connecting QP 0x%x (%s) and 0x%x (%s): %s", id,
		       p->rq->qp_num, req_side->name, p->pq->qp_num,
		       resp_side->name, vt_errname(ret));
		return -1;
	}
	return 0;
}

/* ---- registrars ----------------------------------------------------------------- */

struct registrar {
	int id;
	pthread_t th;
	uint32_t rs;
	unsigned long trans, access, dereg, reg, fallback;
	unsigned long poison_checks;
};

static struct registrar registrars[MAX_R];

/* Publish the target's state; called with its lock held. */
static void publish(struct target *t, bool busy)
{
	uint64_t s;

	t->ver++;
	if (busy != (bool)(t->ver & 1))
		t->ver++;
	s = (uint64_t)t->last_rkey | t->ver << ST_VSHIFT;
	if (t->mr)
		s |= ST_REG;
	if (t->cur)
		s |= ST_BUF;
	if (accs[t->acc] & ACC_RW)
		s |= ST_RW;
	if (accs[t->acc] & ACC_RR)
		s |= ST_RR;
	atomic_store(&t->state, s);
}

/* @b leaves registration: poison it. */
static void poison(struct target *t, int b)
{
	memset(t->buf[b], POISON, tlen);
}

/* @b is about to be registered: nothing may have written it. */
static void check_poison(struct registrar *g, int ti, int b)
{
	struct target *t = &targets[ti];
	long bad = first_not(t->buf[b], tlen, POISON);

	g->poison_checks++;
	if (bad < 0)
		return;
	failf(F_POISON, "target %d buffer %d (not registered) was written at offset %ld (poster %ld's slot %ld, byte %ld): 0x%02x",
	      ti, b, bad, bad / (long)(DEPTH * SLOT), bad / (long)SLOT % (long)DEPTH,
	      bad % (long)SLOT, t->buf[b][bad]);
	poison(t, b);
}

static int rereg(struct registrar *g, struct target *t, int flags, void *addr,
		 int acc)
{
	/* libibverbs refuses an access without CHANGE_ACCESS (EINVAL) */
	int ret = ibv_rereg_mr(t->mr, flags, NULL, addr, addr ? tlen : 0,
			       flags & IBV_REREG_MR_CHANGE_ACCESS ? acc : 0);

	int err = errno;

	if (ret && !strict) {
		if (!atomic_exchange(&rereg_refused, true))
			infof("%s refuses ibv_rereg_mr (%d, %s): dereg + reg instead",
			      resp_side->name, ret, vt_errname(err));
	} else if (ret) {
		failf(F_VERB, "registrar %d: ibv_rereg_mr(%s%s) of target %ld: %d, %s",
		      g->id, flags & IBV_REREG_MR_CHANGE_TRANSLATION ? "CHANGE_TRANSLATION" : "",
		      flags == IBV_REREG_MR_CHANGE_ACCESS ? "CHANGE_ACCESS" :
		      flags & IBV_REREG_MR_CHANGE_ACCESS ? " | CHANGE_ACCESS" : "",
		      (long)(t - targets), ret, vt_errname(err));
	}
	return ret;
}

static void do_reg(struct registrar *g, int ti, int b, int acc)
{
	struct target *t = &targets[ti];

	check_poison(g, ti, b);
	t->mr = ibv_reg_mr(resp_side->pd, t->buf[b], tlen, accs[acc]);
	if (!t->mr) {
		failf(F_VERB, "registrar %d: ibv_reg_mr of target %d: %s", g->id, ti,
		      vt_errname(errno));
		return;
	}
	t->cur = b;
	t->acc = acc;
	t->last_rkey = t->mr->rkey;
	g->reg++;
}

static void registrar_op(struct registrar *g)
{
	uint32_t x = rnd(&g->rs);
	int ti = x % ntargets, op = (x >> 8) % 3, acc, nb, flags;
	struct target *t = &targets[ti];

	/* a new access: back to full access half of the time, else any other */
	if (t->acc && (x >> 20) % 2)
		acc = 0;
	else
		acc = (t->acc + 1 + (x >> 16) % (NACCS - 1)) % NACCS;

	pthread_mutex_lock(&t->lock);
	publish(t, true);
	if (!t->mr) {
		do_reg(g, ti, (x >> 12) & 1, acc);
	} else if (op == 2 || atomic_load(&rereg_refused)) {
		if (ibv_dereg_mr(t->mr)) {
			failf(F_VERB, "registrar %d: ibv_dereg_mr of target %d: %s",
			      g->id, ti, vt_errname(errno));
		} else {
			t->mr = NULL;
			poison(t, t->cur);
			g->dereg++;
			if (op != 2)
				g->fallback++;
		}
	} else if (op == 0) {
		/* a quarter of them change the access at the same time */
		flags = IBV_REREG_MR_CHANGE_TRANSLATION;
		if ((x >> 24) % 4 == 0)
			flags |= IBV_REREG_MR_CHANGE_ACCESS;
		nb = !t->cur;
		check_poison(g, ti, nb);
		if (!rereg(g, t, flags, t->buf[nb], accs[acc])) {
			poison(t, t->cur);
			t->cur = nb;
			if (flags & IBV_REREG_MR_CHANGE_ACCESS)
				t->acc = acc;
			t->last_rkey = t->mr->rkey;
			g->trans++;
		}
	} else {
		if (!rereg(g, t, IBV_REREG_MR_CHANGE_ACCESS, NULL, accs[acc])) {
			t->acc = acc;
			t->last_rkey = t->mr->rkey;
			g->access++;
		}
	}
	publish(t, false);
	pthread_mutex_unlock(&t->lock);
}

static void *registrar_main(void *arg)
{
	struct registrar *g = arg;

	while (!atomic_load(&stop_flag)) {
		registrar_op(g);
		/* leave the posters some of the CPUs */
		if (reg_delay)
			usleep(reg_delay / 5 + rnd(&g->rs) % (reg_delay - reg_delay / 5 + 1));
	}
	return NULL;
}

/* ---- async events ------------------------------------------------------------------ */

static unsigned long ev_count[IBV_EVENT_WQ_FATAL + 2];

static void *async_main(void *arg)
{
	struct pollfd pfd[2];
	int n = loopback ? 1 : 2, i;

	(void)arg;
	for (i = 0; i < n; i++)
		pfd[i] = (struct pollfd){ .fd = sides[i].ctx->async_fd, .events = POLLIN };
	while (!atomic_load(&async_stop)) {
		poll(pfd, n, 100);
		for (i = 0; i < n; i++) {
			struct ibv_async_event ev;

			while (ibv_get_async_event(sides[i].ctx, &ev) == 0) {
				unsigned int e = ev.event_type;

				ev_count[e <= IBV_EVENT_WQ_FATAL ? e : IBV_EVENT_WQ_FATAL + 1]++;
				switch (ev.event_type) {
				case IBV_EVENT_QP_ACCESS_ERR:
				case IBV_EVENT_PORT_ACTIVE:
				case IBV_EVENT_GID_CHANGE:
				case IBV_EVENT_COMM_EST:
					break;
				case IBV_EVENT_QP_FATAL:
				case IBV_EVENT_QP_REQ_ERR:
					if (!strict)
						break;
					/* fall through */
				default:
					failf(F_ASYNC, "%s: async event %s", sides[i].name,
					      ibv_event_type_str(ev.event_type));
					break;
				}
				ibv_ack_async_event(&ev);
			}
		}
	}
	return NULL;
}

/* ---- main ------------------------------------------------------------------------------ */

static void usage(const char *argv0)
{
	fprintf(stderr,
		"usage: %s [-p POSTERS] [-r REGISTRARS] [-k TARGETS] [-s SECS] [-S SEED] [-d USECS] DEV_REQ DEV_RESP\n",
		argv0);
	exit(2);
}

static unsigned int num_arg(const char *s, unsigned int lo, unsigned int hi,
			    const char *argv0)
{
	char *end;
	unsigned long v = strtoul(s, &end, 0);

	if (*end || v < lo || v > hi)
		usage(argv0);
	return v;
}

static int join_by(pthread_t th, uint64_t deadline_ms, const char *what, int id)
{
	struct timespec ts;
	uint64_t ms;

	clock_gettime(CLOCK_REALTIME, &ts);
	ms = deadline_ms > now_ms() ? deadline_ms - now_ms() : 0;
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (ms % 1000) * 1000000;
	if (ts.tv_nsec >= 1000000000) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000;
	}
	if (pthread_timedjoin_np(th, NULL, &ts)) {
		vt_bad("%s %d did not finish (stuck in a verbs call?)", what, id);
		vt_info("giving up without cleanup");
		fflush(stdout);
		_exit(1);
	}
	return 0;
}

int main(int argc, char **argv)
{
	unsigned long posted = 0, completed = 0, ok[OP_NR] = { 0 }, rae[OP_NR] = { 0 };
	unsigned long flushed = 0, other = 0, rposted = 0, rcompleted = 0, rok = 0, rflush = 0;
	unsigned long reconnects = 0, stale = 0, wrv = 0, wru = 0, rdv = 0, sdv = 0;
	unsigned long must_ok = 0, must_err = 0;
	unsigned long trans = 0, accn = 0, dereg = 0, reg = 0, fallback = 0, pchecks = 0;
	unsigned long pst[OP_NR] = { 0 }, rae_all, ok_all, dead = 0, end_err = 0;
	pthread_t async_th;
	uint64_t t0, deadline;
	unsigned int i, j;
	double elapsed;
	int opt, ret, errs;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "p:r:k:s:S:d:")) != -1) {
		switch (opt) {
		case 'p': nposters = num_arg(optarg, 1, MAX_P, argv[0]); break;
		case 'r': nregs = num_arg(optarg, 0, MAX_R, argv[0]); break;
		case 'k': ntargets = num_arg(optarg, 1, MAX_K, argv[0]); break;
		case 's': secs = num_arg(optarg, 1, 3600, argv[0]); break;
		case 'S': seed = num_arg(optarg, 0, UINT32_MAX, argv[0]); break;
		case 'd': reg_delay = num_arg(optarg, 0, 1000000, argv[0]); break;
		default: usage(argv[0]);
		}
	}
	if (argc - optind != 2)
		usage(argv[0]);

	side_open(&sides[0], argv[optind]);
	req_side = resp_side = &sides[0];
	loopback = !strcmp(argv[optind], argv[optind + 1]);
	if (!loopback) {
		bool s0 = strict;

		side_open(&sides[1], argv[optind + 1]);
		resp_side = &sides[1];
		strict = strict && s0;
	}
	vt_info("%s -> %s%s: %u posters (RC QP pairs, %u WRs outstanding each), %u registrars, %u target MRs, %u s, seed %u%s",
		req_side->name, resp_side->name, loopback ? " (loopback)" : "",
		nposters, DEPTH, nregs, ntargets, secs, seed,
		strict ? "" : "; not softhca: checks of its contract relaxed");

	/* the responder's memory: targets and the stable MR */
	tlen = (size_t)nposters * DEPTH * SLOT;
	stable_buf = mmap(NULL, tlen, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stable_buf == MAP_FAILED) {
		vt_bad("mmap: %s", vt_errname(errno));
		return 2;
	}
	memset(stable_buf, STABLE_INIT, tlen);
	stable_mr = ibv_reg_mr(resp_side->pd, stable_buf, tlen, ACC_LW | ACC_RW | ACC_RR);
	if (!stable_mr) {
		vt_bad("ibv_reg_mr (stable MR): %s", vt_errname(errno));
		return 2;
	}
	for (i = 0; i < ntargets; i++) {
		struct target *t = &targets[i];

		pthread_mutex_init(&t->lock, NULL);
		for (j = 0; j < 2; j++) {
			t->buf[j] = mmap(NULL, tlen, PROT_READ | PROT_WRITE,
					 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (t->buf[j] == MAP_FAILED) {
				vt_bad("mmap: %s", vt_errname(errno));
				return 2;
			}
			memset(t->buf[j], POISON, tlen);
		}
		t->acc = 0;
		t->mr = ibv_reg_mr(resp_side->pd, t->buf[0], tlen, accs[0]);
		if (!t->mr) {
			vt_bad("ibv_reg_mr (target %u): %s", i, vt_errname(errno));
			return 2;
		}
		t->last_rkey = t->mr->rkey;
		publish(t, false);
	}
	for (i = 0; i < nposters; i++)
		if (poster_setup(&posters[i], i))
			return 2;
	vt_ok("%u QP pairs connected %s <-> %s, %u target MRs and a stable one registered",
	      nposters, req_side->name, resp_side->name, ntargets);

	if (pthread_create(&async_th, NULL, async_main, NULL)) {
		vt_bad("pthread_create failed");
		return 2;
	}
	t0 = now_ms();
	for (i = 0; i < nposters; i++)
		if (pthread_create(&posters[i].th, NULL, poster_main, &posters[i])) {
			vt_bad("pthread_create failed");
			return 2;
		}
	for (i = 0; i < nregs; i++) {
		registrars[i].id = i;
		registrars[i].rs = seed * 747796405u + i * 2891336453u + 7;
		if (!registrars[i].rs)
			registrars[i].rs = 1;
		if (pthread_create(&registrars[i].th, NULL, registrar_main, &registrars[i])) {
			vt_bad("pthread_create failed");
			return 2;
		}
	}
	while (now_ms() - t0 < secs * 1000ull)
		usleep(50 * 1000);
	atomic_store(&stop_flag, true);
	deadline = now_ms() + 3 * DRAIN_MS + 10000;
	for (i = 0; i < nregs; i++)
		join_by(registrars[i].th, deadline, "registrar", i);
	for (i = 0; i < nposters; i++)
		join_by(posters[i].th, deadline, "poster", i);
	elapsed = (now_ms() - t0) / 1000.0;

	/* the tables: no buffer that is not registered was written */
	for (i = 0; i < ntargets; i++) {
		struct target *t = &targets[i];

		for (j = 0; j < 2; j++) {
			if (t->mr && (int)j == t->cur)
				continue;
			check_poison(&registrars[0], i, j);
		}
	}
	/* the stable MR holds what each poster last wrote into it */
	errs = 0;
	for (i = 0; i < nposters; i++)
		if (memcmp(stable_buf + roff(&posters[i], 0), posters[i].shadow, DEPTH * SLOT))
			errs++;

	for (i = 0; i < nposters; i++) {
		struct poster *p = &posters[i];

		for (j = 0; j < OP_NR; j++) {
			pst[j] += p->posted[j];
			ok[j] += p->ok[j];
			rae[j] += p->rae[j];
		}
		completed += p->completed;
		flushed += p->flushed;
		other += p->other;
		rposted += p->rposted;
		rcompleted += p->rcompleted;
		rok += p->rok;
		rflush += p->rflush;
		reconnects += p->reconnects;
		stale += p->stale_used;
		wrv += p->wr_verified;
		wru += p->wr_unverified;
		rdv += p->rd_verified;
		sdv += p->send_verified;
		dead += p->dead;
		end_err += p->end_err;
		must_ok += p->must_ok;
		must_err += p->must_err;
	}
	for (i = 0; i < nregs; i++) {
		trans += registrars[i].trans;
		accn += registrars[i].access;
		dereg += registrars[i].dereg;
		reg += registrars[i].reg;
		fallback += registrars[i].fallback;
		pchecks += registrars[i].poison_checks;
	}
	posted = pst[OP_WRITE] + pst[OP_READ] + pst[OP_SEND];
	ok_all = ok[OP_WRITE] + ok[OP_READ] + ok[OP_SEND];
	rae_all = rae[OP_WRITE] + rae[OP_READ] + rae[OP_SEND];

	printf("stress %s -> %s: %u posters + %u registrars x %.1f s: posted %lu (write %lu, read %lu, send %lu), completed %lu: success %lu, remote_access_error %lu (write %lu, read %lu), flushed %lu, other %lu; receives posted %lu, completed %lu (success %lu, flushed %lu); reconnects %lu; re-registrations %lu (rereg translation %lu, rereg access %lu, dereg %lu, reg %lu); stale keys used on purpose %lu; outcomes dictated by an unchanged key: must succeed %lu, must fail %lu; bytes checked: writes %lu (+%lu whose key changed), reads %lu, sends %lu, unregistered buffers %lu\n",
	       req_side->name, resp_side->name, nposters, nregs, elapsed, posted,
	       pst[OP_WRITE], pst[OP_READ], pst[OP_SEND], completed, ok_all,
	       rae_all, rae[OP_WRITE], rae[OP_READ], flushed, other, rposted,
	       rcompleted, rok, rflush, reconnects, trans + accn + dereg + reg,
	       trans, accn, dereg, reg, stale, must_ok, must_err, wrv, wru, rdv, sdv, pchecks);

	/* tear down, with the async thread still acknowledging events */
	ret = 0;
	for (i = 0; i < nposters; i++) {
		struct poster *p = &posters[i];

		ret |= ibv_destroy_qp(p->rq) ? 1 : 0;
		ret |= ibv_destroy_qp(p->pq) ? 2 : 0;
	}
	atomic_store(&async_stop, true);
	pthread_join(async_th, NULL);
	for (i = 0; i < nposters; i++) {
		struct poster *p = &posters[i];

		ret |= ibv_dereg_mr(p->lmr) ? 4 : 0;
		ret |= ibv_dereg_mr(p->rmr) ? 4 : 0;
		ret |= ibv_destroy_cq(p->cq_req) ? 8 : 0;
		ret |= ibv_destroy_cq(p->cq_resp) ? 8 : 0;
	}
	for (i = 0; i < ntargets; i++)
		if (targets[i].mr)
			ret |= ibv_dereg_mr(targets[i].mr) ? 4 : 0;
	ret |= ibv_dereg_mr(stable_mr) ? 4 : 0;
	for (i = 0; i < (loopback ? 1u : 2u); i++) {
		ret |= ibv_dealloc_pd(sides[i].pd) ? 16 : 0;
		ret |= ibv_close_device(sides[i].ctx) ? 32 : 0;
	}

	vt_check(!dead, "every poster ran to the end (%lu gave up)", dead);
	vt_check(posted == completed && posted > 0,
		 "every work request completed exactly once: posted %lu, completed %lu", posted, completed);
	vt_check(rposted == rcompleted,
		 "every receive completed exactly once: posted %lu, completed %lu", rposted, rcompleted);
	vt_check(completed == ok_all + rae_all + flushed && !other,
		 "completions are SUCCESS, REM_ACCESS_ERR or WR_FLUSH_ERR only (%lu others)", other);
	vt_check(ok[OP_SEND] == rok,
		 "SENDs that succeeded (%lu) = receives that succeeded (%lu)", ok[OP_SEND], rok);
	vt_check(reconnects + end_err == rae_all + other,
		 "each error ended its connection: %lu reconnects (+%lu at the end) for %lu error completions",
		 reconnects, end_err, rae_all + other);
	for (i = 0; i < F_NR; i++)
		vt_check(!atomic_load(&fails[i]), "%s: %lu", fail_desc[i], atomic_load(&fails[i]));
	vt_check(!errs, "the stable MR holds what each poster last wrote into it (%d posters differ)", errs);
	vt_check(wrv > 0 && rdv > 0 && sdv > 0,
		 "bytes verified: %lu WRITEs, %lu READs, %lu SENDs", wrv, rdv, sdv);
	vt_check(ok_all > 0 && rae_all > 0 && must_ok > 0 && must_err > 0,
		 "stale and revoked keys met the posters: %lu successes, %lu REM_ACCESS_ERR (%lu and %lu of them dictated by the table)",
		 ok_all, rae_all, must_ok, must_err);
	if (strict) {
		vt_check(trans > 0 && accn > 0 && dereg > 0 && reg > 0,
			 "every kind of re-registration ran: translation %lu, access %lu, dereg %lu, reg %lu",
			 trans, accn, dereg, reg);
		vt_check(ev_count[IBV_EVENT_QP_ACCESS_ERR] == rae_all,
			 "one IBV_EVENT_QP_ACCESS_ERR per REM_ACCESS_ERR: %lu events, %lu completions",
			 ev_count[IBV_EVENT_QP_ACCESS_ERR], rae_all);
	} else {
		vt_check(dereg > 0 && reg > 0, "re-registrations ran: translation %lu, access %lu, dereg %lu (%lu instead of a refused rereg), reg %lu",
			 trans, accn, dereg, fallback, reg);
		vt_info("async events: QP_ACCESS_ERR %lu, QP_FATAL %lu, QP_REQ_ERR %lu",
			ev_count[IBV_EVENT_QP_ACCESS_ERR], ev_count[IBV_EVENT_QP_FATAL],
			ev_count[IBV_EVENT_QP_REQ_ERR]);
	}
	vt_check(!ret, "destroying QPs, MRs, CQs, PDs and closing the devices: all 0 (mask 0x%x)", ret);
	return vt_exit();
}
