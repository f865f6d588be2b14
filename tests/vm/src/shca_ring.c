// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_ring DEV: a process that corrupts its own mapped work queues
 * (softhca-abi.h, struct softhca_wq_ring) hurts only itself.
 *
 * The provider maps a send and a receive ring for every RC QP and does
 * not say where: the rings are the mappings of the uverbs device that
 * appear in /proc/self/maps with the QP (their pgoff column is the mmap
 * offset), told apart by their sizes (SOFTHCA_WQ_RING_HDR + slots *
 * slot_size rounded to the page; slots the next power of two of max_wr).
 *
 *  (a) The rings: found, sized as the ABI says, written by ibv_post_recv
 *      and taken by the kernel; with SOFTHCA_RINGS=0 no ring is mapped
 *      and traffic works by system calls.
 *  (b) Receive ring corruption (a producer beyond max_recv_wr, far ahead,
 *      behind what the kernel took, wrapping; a slot with 1000 SGEs),
 *      found when the peer SENDs or when the doorbell rings: the QP goes
 *      to ERR with IBV_EVENT_QP_FATAL, the receives the kernel had taken
 *      are flushed (IBV_WC_WR_FLUSH_ERR) and the ones it never read do not
 *      complete, the sender's SEND fails with IBV_WC_RETRY_EXC_ERR (the
 *      responder in ERR takes nothing; with rnr_retry 7 only transport
 *      retries count), no byte lands; another QP pair of this process and
 *      one of another process keep working byte-exact and get no event.
 *      With the producer put back where the provider left it, RESET ->
 *      RTS makes the QP work again (RESET restarts the ring at the
 *      producer; the provider keeps its own copy of it, so a producer left
 *      corrupt would desynchronise the provider, not the kernel).
 *  (c) Send ring: a garbage slot (opcode 0xff, 1000 SGEs, unknown
 *      send_flags) at the provider's next position rung by a raw doorbell
 *      is refused with EINVAL, the consumer does not move, the QP stays
 *      RTS and works; a producer more than the ring's slots ahead (or
 *      behind): EINVAL; a hand-written valid slot goes; a doorbell for a
 *      queue without a ring (a QP made with SOFTHCA_RINGS=0)
 *      or an unknown queue: EINVAL.
 *  (d) Mappings: MAP_PRIVATE and a wrong length are refused (EINVAL); the
 *      ring maps again while the QP lives; after ibv_destroy_qp its offset
 *      maps no more but a mapping the process kept stays readable.
 *
 * Exit status: 0 all checks passed, 1 some failed, 2 could not start.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include "vmtest.h"

#include "../../../include/uapi/rdma/softhca-abi.h"

#define MSG		64	/* bytes per message */
#define BUF_LEN		8192	/* per QP, one MR */
#define SQ_WR		16	/* send ring: 16 slots of 1 SGE */
#define RQ_WR		512	/* receive ring: 512 slots of 1 SGE */
#define POLL_MS		10000	/* bound for an expected completion or event */
#define QUIET_MS	100	/* "nothing more arrives" window */
#define FILL		0xee	/* receive buffers before anything lands */
#define MAX_MAPS	256

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static size_t page;
static struct vt_dev dev;
static uint32_t next_psn = 0x1000;

/* ---- uverbs mappings of this process ------------------------------------ */

struct map {
	unsigned long start, end;
	unsigned long long off;		/* the mmap offset: pgoff in bytes */
};

/* The mappings of /dev/infiniband/uverbs* in /proc/self/maps. */
static int uverbs_maps(struct map *m, int max)
{
	char line[512], path[256];
	int n = 0;
	FILE *f;

	f = fopen("/proc/self/maps", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		struct map x;

		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %255s", &x.start,
			   &x.end, &x.off, path) < 3)
			continue;
		if (strncmp(path, "/dev/infiniband/uverbs", 22) || n >= max)
			continue;
		m[n++] = x;
	}
	fclose(f);
	return n;
}

static bool map_in(const struct map *m, int n, const struct map *x)
{
	int i;

	for (i = 0; i < n; i++)
		if (m[i].start == x->start && m[i].end == x->end &&
		    m[i].off == x->off)
			return true;
	return false;
}

/* The mappings in @after that are not in @before; their number. */
static int maps_new(const struct map *before, int nb, const struct map *after,
		    int na, struct map *out, int max)
{
	int i, n = 0;

	for (i = 0; i < na; i++)
		if (!map_in(before, nb, &after[i]) && n < max)
			out[n++] = after[i];
	return n;
}

static size_t ring_size(size_t slot, unsigned int wr)
{
	unsigned int slots = 1;

	while (slots < wr)
		slots <<= 1;
	return (SOFTHCA_WQ_RING_HDR + slots * slot + page - 1) / page * page;
}

/* ---- QPs ---------------------------------------------------------------- */

struct ring {
	struct softhca_wq_ring *r;	/* the provider's mapping, or NULL */
	size_t len;
	unsigned long long off;
	uint32_t slots, slot_size;
};

struct qpx {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;		/* send and receive completions */
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	unsigned char *buf;
	struct ring sq, rq;
	int nmaps;			/* uverbs mappings that came with it */
};

/* The ring's counters, as the provider reads and writes them. */
static uint32_t ring_load(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static void ring_store(uint32_t *p, uint32_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELEASE);
}

#define PROD(x)		ring_load(&(x)->r->producer)
#define CONS(x)		ring_load(&(x)->r->consumer)
#define DOORB(x)	ring_load(&(x)->r->doorbell)
#define SET_PROD(x, v)	ring_store(&(x)->r->producer, (v))

static void *ring_slot(struct ring *r, uint32_t idx)
{
	return (char *)r->r + SOFTHCA_WQ_RING_HDR +
	       (size_t)(idx & (r->slots - 1)) * r->slot_size;
}

/*
 * An RC (or UD) QP with 16 send and 512 receive requests of one SGE on
 * @ctx, its CQ and an MR over a buffer; the rings it came with are found
 * in /proc/self/maps. Exits with status 2 if it cannot be made.
 */
static void qpx_create(struct qpx *x, struct ibv_context *ctx,
		       struct ibv_pd *pd, enum ibv_qp_type type)
{
	struct map before[MAX_MAPS], after[MAX_MAPS], added[8];
	struct ibv_qp_init_attr ia;
	int nb, na, i;
	size_t ssz, rsz;

	memset(x, 0, sizeof(*x));
	x->ctx = ctx;
	x->pd = pd;
	x->cq = ibv_create_cq(ctx, 1024, NULL, NULL, 0);
	x->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!x->cq || x->buf == MAP_FAILED) {
		vt_bad("create_cq/mmap: %s", vt_errname(errno));
		exit(2);
	}
	memset(x->buf, FILL, BUF_LEN);
	x->mr = ibv_reg_mr(pd, x->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!x->mr) {
		vt_bad("reg_mr: %s", vt_errname(errno));
		exit(2);
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = x->cq;
	ia.recv_cq = x->cq;
	ia.qp_type = type;
	ia.cap.max_send_wr = SQ_WR;
	ia.cap.max_recv_wr = RQ_WR;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	nb = uverbs_maps(before, MAX_MAPS);
	x->qp = ibv_create_qp(pd, &ia);
	na = uverbs_maps(after, MAX_MAPS);
	if (!x->qp || nb < 0 || na < 0) {
		vt_bad("create_qp: %s", vt_errname(errno));
		exit(2);
	}
	x->nmaps = maps_new(before, nb, after, na, added, 8);
	ssz = ring_size(sizeof(struct softhca_swqe) +
			ia.cap.max_send_sge * sizeof(struct ib_uverbs_sge),
			ia.cap.max_send_wr);
	rsz = ring_size(sizeof(struct softhca_rwqe) +
			ia.cap.max_recv_sge * sizeof(struct ib_uverbs_sge),
			ia.cap.max_recv_wr);
	for (i = 0; i < x->nmaps && i < 8; i++) {
		struct ring *r = NULL;
		size_t len = added[i].end - added[i].start;

		if (len == ssz && !x->sq.r)
			r = &x->sq;
		else if (len == rsz && !x->rq.r)
			r = &x->rq;
		if (!r)
			continue;
		r->r = (struct softhca_wq_ring *)added[i].start;
		r->len = len;
		r->off = added[i].off;
		if (r == &x->sq) {
			r->slots = SQ_WR;
			r->slot_size = sizeof(struct softhca_swqe) +
				       sizeof(struct ib_uverbs_sge);
		} else {
			r->slots = RQ_WR;
			r->slot_size = sizeof(struct softhca_rwqe) +
				       sizeof(struct ib_uverbs_sge);
		}
	}
}

static void qpx_destroy(struct qpx *x)
{
	if (x->qp && ibv_destroy_qp(x->qp))
		vt_bad("destroy_qp: %s", vt_errname(errno));
	if (ibv_dereg_mr(x->mr) || ibv_destroy_cq(x->cq))
		vt_bad("dereg_mr/destroy_cq: %s", vt_errname(errno));
	munmap(x->buf, BUF_LEN);
	memset(x, 0, sizeof(*x));
}

static int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE, &ia))
		return -1;
	return a.qp_state;
}

static const char *st_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };

	return s >= 0 && s < 7 ? n[s] : "?";
}

static int to_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* Connect @a and @b to each other (RESET -> RTS); 0 or an errno. */
static int connect_pair(struct qpx *a, struct qpx *b)
{
	struct vt_rc_path p = {
		.dgid = dev.gid,
		.sgid_index = dev.gid_idx,
		.mtu = dev.mtu,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		.rd_atom = 1,
		/* an RNR wait of 10 us, for ever; 3 tries of 4 ms for a
		 * peer that takes nothing (IBV_WC_RETRY_EXC_ERR)
		 */
		.min_rnr_timer = 1, .timeout = 10, .retry_cnt = 2,
		.rnr_retry = 7,
	};
	int err;

	p.psn = next_psn;
	next_psn += 0x100;
	p.dest_qpn = b->qp->qp_num;
	err = vt_rc_connect(a->qp, &p);
	if (err)
		return err;
	p.dest_qpn = a->qp->qp_num;
	return vt_rc_connect(b->qp, &p);
}

static int post_recv(struct qpx *x, uint64_t wr_id, size_t off)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->buf + off, .length = MSG,
		.lkey = x->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(x->qp, &wr, &bad);
}

/* SEND MSG bytes from offset @off of @x's buffer, signaled. */
static int post_send(struct qpx *x, uint64_t wr_id, size_t off)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->buf + off, .length = MSG,
		.lkey = x->mr->lkey,
	};
	struct ibv_send_wr wr = { .wr_id = wr_id, .sg_list = &sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_send_wr *bad;

	return ibv_post_send(x->qp, &wr, &bad);
}

/* RDMA WRITE with immediate of MSG bytes to offset @roff of @to's buffer. */
static int post_write_imm(struct qpx *x, uint64_t wr_id, struct qpx *to,
			  size_t roff)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)x->buf, .length = MSG,
		.lkey = x->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = wr_id, .sg_list = &sge, .num_sge = 1,
		.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
		.send_flags = IBV_SEND_SIGNALED, .imm_data = htonl(0x1234),
		.wr.rdma = { .remote_addr = (uintptr_t)to->buf + roff,
			     .rkey = to->mr->rkey },
	};
	struct ibv_send_wr *bad;

	return ibv_post_send(x->qp, &wr, &bad);
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { .tv_sec = ms / 1000,
			       .tv_nsec = (ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

/* Up to @n completions of @cq within @ms; their number (< 0: error). */
static int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	long end = now_ms() + ms;
	int got = 0, r;

	while (got < n) {
		r = ibv_poll_cq(cq, n - got, wc + got);
		if (r < 0)
			return r;
		got += r;
		if (got < n) {
			if (now_ms() > end)
				break;
			sleep_ms(1);
		}
	}
	return got;
}

/* One completion of @cq within POLL_MS; false if none. */
static bool poll_one(struct ibv_cq *cq, struct ibv_wc *wc)
{
	return poll_n(cq, wc, 1, POLL_MS) == 1;
}

static bool cq_quiet(struct ibv_cq *cq)
{
	struct ibv_wc wc;
	int r = poll_n(cq, &wc, 1, QUIET_MS);

	if (r)
		vt_info("unexpected completion: wr_id %llu status %s opcode %d",
			(unsigned long long)wc.wr_id,
			ibv_wc_status_str(wc.status), wc.opcode);
	return r == 0;
}

static void fill_msg(unsigned char *p, unsigned int seed)
{
	int i;

	for (i = 0; i < MSG; i++)
		p[i] = (unsigned char)(seed * 31 + i * 7 + 1);
}

/*
 * One SEND from @a to @b, byte-exact: both completions successful, the
 * bytes at offset @roff of @b's buffer, @b's buffer untouched elsewhere
 * (from @roff on). Returns true if all that held; says why not.
 */
static bool exchange(struct qpx *a, struct qpx *b, size_t roff,
		     unsigned int seed, bool post)
{
	struct ibv_wc sw, rw;
	int err;

	fill_msg(a->buf, seed);
	memset(b->buf + roff, FILL, BUF_LEN - roff);
	if (post) {
		err = post_recv(b, 7000 + seed, roff);
		if (err) {
			vt_info("post_recv: %s", vt_errname(err));
			return false;
		}
	}
	err = post_send(a, 9000 + seed, 0);
	if (err) {
		vt_info("post_send: %s", vt_errname(err));
		return false;
	}
	if (!poll_one(a->cq, &sw) || !poll_one(b->cq, &rw)) {
		vt_info("no completion");
		return false;
	}
	if (sw.status != IBV_WC_SUCCESS || sw.wr_id != 9000 + seed ||
	    rw.status != IBV_WC_SUCCESS || rw.byte_len != MSG ||
	    rw.opcode != IBV_WC_RECV) {
		vt_info("completions: send wr_id %llu %s, recv wr_id %llu %s %u bytes",
			(unsigned long long)sw.wr_id,
			ibv_wc_status_str(sw.status),
			(unsigned long long)rw.wr_id,
			ibv_wc_status_str(rw.status), rw.byte_len);
		return false;
	}
	if (memcmp(b->buf + roff, a->buf, MSG) ||
	    !vt_all_bytes(b->buf + roff + MSG, BUF_LEN - roff - MSG, FILL)) {
		vt_info("the bytes that arrived are wrong");
		return false;
	}
	return true;
}

/* ---- async events ------------------------------------------------------- */

/*
 * Wait up to @ms for @type on @qp; every other event is reported and,
 * if it concerns @watch, counted in *@stray.
 */
static bool wait_event(struct ibv_context *ctx, struct ibv_qp *qp,
		       enum ibv_event_type type, int ms, struct ibv_qp **watch,
		       int nwatch, int *stray)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	long end = now_ms() + ms;
	bool found = false;

	for (;;) {
		struct ibv_async_event ev;
		long left = end - now_ms();
		int i;

		if (found)
			left = 0;
		if (poll(&pfd, 1, left > 0 ? left : 0) <= 0)
			break;
		if (ibv_get_async_event(ctx, &ev))
			break;
		if (ev.event_type == type && ev.element.qp == qp) {
			found = true;
		} else {
			vt_info("async event %s", ibv_event_type_str(ev.event_type));
			for (i = 0; i < nwatch; i++)
				if (ev.element.qp == watch[i])
					(*stray)++;
		}
		ibv_ack_async_event(&ev);
	}
	return found;
}

/* ---- the doorbell, as the provider rings it ----------------------------- */

static int doorbell(struct ibv_qp *qp, uint32_t queue, uint32_t producer,
		    bool with_producer)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[3];
	} cmd;
	uint16_t n = 0, i;

	memset(&cmd, 0, sizeof(cmd));
	cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_QP;
	cmd.attr[n++].data = qp->handle;
	cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_QUEUE;
	cmd.attr[n].len = sizeof(queue);
	memcpy(&cmd.attr[n++].data, &queue, sizeof(queue));
	if (with_producer) {
		cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_PRODUCER;
		cmd.attr[n].len = sizeof(producer);
		memcpy(&cmd.attr[n++].data, &producer, sizeof(producer));
	}
	for (i = 0; i < n; i++)
		cmd.attr[i].flags = UVERBS_ATTR_F_MANDATORY;
	cmd.hdr.length = sizeof(cmd.hdr) + n * sizeof(cmd.attr[0]);
	cmd.hdr.object_id = UVERBS_OBJECT_QP;
	cmd.hdr.method_id = SOFTHCA_IB_METHOD_QP_DOORBELL;
	cmd.hdr.num_attrs = n;
	cmd.hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	return ioctl(qp->context->cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
}

/* ---- the other process -------------------------------------------------- */

static int to_child = -1, from_child = -1;
static pid_t child;

/*
 * The bystander process: its own context and QP pair; on each request a
 * byte-exact SEND, answered 'y' or 'n'; 'q' ends it.
 */
static int bystander(const char *name, int in, int out)
{
	struct qpx a, b;
	unsigned int round = 0;
	struct vt_dev d;
	char c;
	bool ok;

	vt_dev_open(&d, name);
	dev = d;
	qpx_create(&a, d.ctx, d.pd, IBV_QPT_RC);
	qpx_create(&b, d.ctx, d.pd, IBV_QPT_RC);
	ok = !connect_pair(&a, &b);
	while (read(in, &c, 1) == 1 && c != 'q') {
		ok = ok && exchange(&a, &b, 0, 100 + round++, true) &&
		     qp_state(a.qp) == IBV_QPS_RTS &&
		     qp_state(b.qp) == IBV_QPS_RTS;
		c = ok ? 'y' : 'n';
		if (write(out, &c, 1) != 1)
			return 1;
	}
	qpx_destroy(&a);
	qpx_destroy(&b);
	ibv_dealloc_pd(d.pd);
	ibv_close_device(d.ctx);
	return ok ? 0 : 1;
}

static void start_bystander(const char *name)
{
	int p1[2], p2[2];

	if (pipe(p1) || pipe(p2)) {
		vt_bad("pipe: %s", strerror(errno));
		exit(2);
	}
	fflush(stdout);
	child = fork();
	if (child < 0) {
		vt_bad("fork: %s", strerror(errno));
		exit(2);
	}
	if (!child) {
		close(p1[1]);
		close(p2[0]);
		_exit(bystander(name, p1[0], p2[1]));
	}
	close(p1[0]);
	close(p2[1]);
	to_child = p1[1];
	from_child = p2[0];
}

/* The bystander process' QPs still work; false if not. */
static bool bystander_round(void)
{
	char c = 'r';

	if (write(to_child, &c, 1) != 1 || read(from_child, &c, 1) != 1)
		return false;
	return c == 'y';
}

static void stop_bystander(void)
{
	char c = 'q';
	int st;

	if (write(to_child, &c, 1) != 1)
		vt_bad("other process: gone");
	if (waitpid(child, &st, 0) != child)
		st = -1;
	vt_check(WIFEXITED(st) && !WEXITSTATUS(st),
		 "other process: its QPs worked throughout and it exits cleanly (status %#x)",
		 st);
	close(to_child);
	close(from_child);
}

/* ---- (a) the rings ------------------------------------------------------ */

static void check_rings(void)
{
	size_t ssz, rsz;
	struct qpx a, b;
	struct ibv_wc wc = {};
	uint32_t p0;

	printf("  # ---- the rings of a QP ----\n");
	qpx_create(&a, dev.ctx, dev.pd, IBV_QPT_RC);
	qpx_create(&b, dev.ctx, dev.pd, IBV_QPT_RC);
	ssz = ring_size(sizeof(struct softhca_swqe) + 16, SQ_WR);
	rsz = ring_size(sizeof(struct softhca_rwqe) + 16, RQ_WR);
	vt_check(a.nmaps == 2 && a.sq.r && a.rq.r,
		 "create_qp (max_send_wr %d, max_recv_wr %d, 1 SGE) maps two rings of the uverbs device: %zu bytes (send) and %zu bytes (receive) (%d new mappings)",
		 SQ_WR, RQ_WR, ssz, rsz, a.nmaps);
	if (!a.sq.r || !a.rq.r || !b.rq.r) {
		vt_bad("no rings: nothing else to check");
		exit(1);
	}
	vt_check(a.sq.off != a.rq.off && a.sq.off % page == 0 &&
		 a.rq.off % page == 0,
		 "they are at distinct page-aligned offsets (%#llx, %#llx)",
		 a.sq.off, a.rq.off);
	vt_check(PROD(&b.rq) == 0 && CONS(&b.rq) == 0 && CONS(&a.sq) == 0 &&
		 DOORB(&b.rq) == 0,
		 "a new ring starts at producer 0, consumer 0, no doorbell");
	if (connect_pair(&a, &b)) {
		vt_bad("connect: %s", vt_errname(errno));
		exit(1);
	}
	p0 = PROD(&b.rq);
	post_recv(&b, 1, 0);
	post_recv(&b, 2, MSG);
	vt_check(PROD(&b.rq) == p0 + 2 && CONS(&b.rq) == 0,
		 "ibv_post_recv writes the receive ring: producer %u (+2), consumer still %u",
		 PROD(&b.rq), CONS(&b.rq));
	fill_msg(a.buf, 1);
	post_send(&a, 3, 0);
	vt_check(poll_one(a.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		 poll_one(b.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		 wc.wr_id == 1 && !memcmp(b.buf, a.buf, MSG),
		 "a SEND lands in the first receive of the ring");
	vt_check(CONS(&a.sq) == 1 && CONS(&b.rq) == 1,
		 "the kernel publishes what it took: send consumer %u, receive consumer %u",
		 CONS(&a.sq), CONS(&b.rq));
	post_send(&a, 4, 0);
	vt_check(poll_one(a.cq, &wc) && wc.status == IBV_WC_SUCCESS &&
		 poll_one(b.cq, &wc) && wc.wr_id == 2 &&
		 !memcmp(b.buf + MSG, a.buf, MSG) && CONS(&b.rq) == 2,
		 "the second SEND takes the second receive (consumer 2)");
	qpx_destroy(&a);
	qpx_destroy(&b);
}

/* SOFTHCA_RINGS=0 (read when the context is made): system calls only. */
static void check_no_rings(void)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct qpx a, b;
	bool ok;

	printf("  # ---- SOFTHCA_RINGS=0 ----\n");
	setenv("SOFTHCA_RINGS", "0", 1);
	ctx = vt_open(dev.name);
	unsetenv("SOFTHCA_RINGS");
	pd = vt_alloc_pd(ctx);
	qpx_create(&a, ctx, pd, IBV_QPT_RC);
	qpx_create(&b, ctx, pd, IBV_QPT_RC);
	vt_check(!a.nmaps && !b.nmaps,
		 "with SOFTHCA_RINGS=0 create_qp maps nothing (%d, %d new uverbs mappings)",
		 a.nmaps, b.nmaps);
	ok = !connect_pair(&a, &b);
	ok = ok && exchange(&a, &b, 0, 1, true) && exchange(&b, &a, 0, 2, true);
	vt_check(ok, "SEND both ways by system calls, byte-exact");
	vt_check(doorbell(a.qp, SOFTHCA_DB_RQ, 0, false) == EINVAL &&
		 doorbell(a.qp, SOFTHCA_DB_SQ, 1, true) == EINVAL,
		 "a doorbell for a QP without rings: EINVAL (both queues)");
	qpx_destroy(&a);
	qpx_destroy(&b);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
}

/* ---- (b) receive ring corruption ---------------------------------------- */

enum rq_bad {
	RQ_PAST_MAX,		/* consumer + max_recv_wr + 1 */
	RQ_FAR,			/* 0x80000000 */
	RQ_WRAP,		/* consumer - 1 */
	RQ_BEHIND,		/* behind what the kernel imported */
	RQ_SGE,			/* a slot with 1000 SGEs */
};

struct rq_case {
	const char *name;
	enum rq_bad bad;
	int posted;		/* receives posted through the provider */
	bool warm;		/* one SEND first: the kernel imports them */
	bool by_doorbell;	/* found by a raw RQ doorbell, not a SEND */
	bool write_imm;		/* the peer WRITEs with immediate, not SENDs */
};

#define RQ(n, b, p, w, d, i) \
	{ .name = (n), .bad = (b), .posted = (p), .warm = (w), \
	  .by_doorbell = (d), .write_imm = (i) }

static const struct rq_case rq_cases[] = {
	/* these the kernel handles as it should */
	RQ("producer = consumer + max_recv_wr + 1, nothing imported",
	   RQ_PAST_MAX, 4, false, false, false),
	RQ("producer = consumer - 1 (wraps), nothing imported",
	   RQ_WRAP, 4, false, false, false),
	RQ("producer = consumer + max_recv_wr + 1, found by the doorbell",
	   RQ_PAST_MAX, 4, true, true, false),
	RQ("producer behind what was imported, found by the doorbell",
	   RQ_BEHIND, 4, true, true, false),
	RQ("a slot with num_sge 1000, found by the doorbell",
	   RQ_SGE, 3, false, true, false),
	RQ("producer = consumer + max_recv_wr + 1, nothing imported, RDMA WRITE with immediate",
	   RQ_PAST_MAX, 4, false, false, true),
	/*
	 * Found by the peer while the kernel holds receives it imported:
	 * the responder's import moves the QP to ERR under the peer lock
	 * after the connection was checked (shca_exec_send(),
	 * shca_peer_check()); the message must still not be taken.
	 */
	RQ("producer = 0x80000000, 3 receives imported",
	   RQ_FAR, 4, true, false, false),
	RQ("producer behind what was imported",
	   RQ_BEHIND, 4, true, false, false),
	RQ("a slot with num_sge 1000 after 3 good ones",
	   RQ_SGE, 3, false, false, false),
	RQ("producer = 0x80000000, 3 receives imported, RDMA WRITE with immediate",
	   RQ_FAR, 4, true, false, true),
};

static void rq_corrupt(const struct rq_case *c, struct qpx *by_a,
		       struct qpx *by_b, unsigned int round)
{
	struct ibv_qp *watch[2] = { by_a->qp, by_b->qp };
	int i, n, imported, stray = 0, st;
	struct ibv_wc wc[8] = {}, sw = {};
	uint32_t saved, cons;
	const char *op;
	struct qpx a, b;
	bool ok;

	printf("  # ---- receive ring: %s ----\n", c->name);
	qpx_create(&a, dev.ctx, dev.pd, IBV_QPT_RC);
	qpx_create(&b, dev.ctx, dev.pd, IBV_QPT_RC);
	if (!b.rq.r || connect_pair(&a, &b)) {
		vt_bad("victim pair: no ring or no connection");
		goto out;
	}
	for (i = 0; i < c->posted; i++)
		post_recv(&b, 100 + i, i * MSG);
	imported = 0;
	if (c->warm) {
		fill_msg(a.buf, 50);
		post_send(&a, 1, 0);
		ok = poll_one(a.cq, &sw) && sw.status == IBV_WC_SUCCESS &&
		     poll_one(b.cq, wc) && wc[0].status == IBV_WC_SUCCESS &&
		     wc[0].wr_id == 100 && !memcmp(b.buf, a.buf, MSG);
		vt_check(ok && CONS(&b.rq) == 1,
			 "a first SEND lands (the kernel imports the %d receives, takes one: consumer %u)",
			 c->posted, CONS(&b.rq));
		imported = c->posted - 1;
	}
	saved = PROD(&b.rq);
	cons = CONS(&b.rq);
	switch (c->bad) {
	case RQ_PAST_MAX:
		SET_PROD(&b.rq, cons + RQ_WR + 1);
		break;
	case RQ_FAR:
		SET_PROD(&b.rq, 0x80000000);
		break;
	case RQ_WRAP:
		SET_PROD(&b.rq, cons - 1);
		break;
	case RQ_BEHIND:
		SET_PROD(&b.rq, saved - 1);
		break;
	case RQ_SGE: {
		struct softhca_rwqe *s = ring_slot(&b.rq, saved);

		s->wr_id = 666;
		s->num_sge = 1000;
		SET_PROD(&b.rq, saved + 1);
		imported = c->posted;
		break;
	}
	}
	vt_info("producer %u -> %u (consumer %u)", saved, PROD(&b.rq), cons);
	if (c->by_doorbell) {
		st = doorbell(b.qp, SOFTHCA_DB_RQ, 0, false);
		vt_check(!st, "the receive doorbell returns 0 (%s)", vt_errname(st));
	}
	fill_msg(a.buf, 51);
	op = c->write_imm ? "RDMA WRITE with immediate" : "SEND";
	st = c->write_imm ? post_write_imm(&a, 2, &b, BUF_LEN / 2) :
			    post_send(&a, 2, 0);
	vt_check(!st, "the peer posts a %s (%s)", op, vt_errname(st));

	vt_check(poll_one(a.cq, &sw) && sw.wr_id == 2 &&
		 sw.status == IBV_WC_RETRY_EXC_ERR,
		 "the peer's %s fails with IBV_WC_RETRY_EXC_ERR (saw wr_id %llu %s)",
		 op, (unsigned long long)sw.wr_id, ibv_wc_status_str(sw.status));
	st = qp_state(b.qp);
	vt_check(st == IBV_QPS_ERR, "the corrupted QP is in ERR (%s)", st_name(st));
	vt_check(wait_event(dev.ctx, b.qp, IBV_EVENT_QP_FATAL, POLL_MS, watch, 2,
			    &stray),
		 "IBV_EVENT_QP_FATAL for the corrupted QP");
	n = poll_n(b.cq, wc, imported, imported ? POLL_MS : 0);
	ok = n == imported;
	for (i = 0; ok && i < n; i++)
		ok = wc[i].status == IBV_WC_WR_FLUSH_ERR &&
		     wc[i].wr_id == (uint64_t)(100 + c->posted - imported + i) &&
		     wc[i].opcode == IBV_WC_RECV;
	if (!ok && n > 0)
		vt_info("first receive completion: wr_id %llu %s",
			(unsigned long long)wc[0].wr_id,
			ibv_wc_status_str(wc[0].status));
	vt_check(ok, "the %d receive(s) the kernel had taken are flushed in order (%d completions)",
		 imported, n);
	vt_check(cq_quiet(b.cq), "nothing else completes on the corrupted QP");
	vt_check(CONS(&b.rq) == cons + imported,
		 "its ring's consumer says what was flushed: %u (was %u)",
		 CONS(&b.rq), cons);
	vt_check(vt_all_bytes(b.buf + (c->warm ? MSG : 0),
			      BUF_LEN - (c->warm ? MSG : 0), FILL),
		 "no byte of the %s landed in the corrupted QP's buffers", op);

	/* the others */
	vt_check(exchange(by_a, by_b, 0, round, true) &&
		 exchange(by_b, by_a, 0, round + 1, true),
		 "another QP pair of this process: SEND both ways, byte-exact");
	vt_check(qp_state(by_a->qp) == IBV_QPS_RTS &&
		 qp_state(by_b->qp) == IBV_QPS_RTS && !stray,
		 "it stays RTS and gets no async event");
	vt_check(bystander_round(),
		 "another process' QP pair: SEND byte-exact, still RTS");

	/* back to work */
	SET_PROD(&b.rq, saved);
	st = to_reset(b.qp);
	vt_check(!st && CONS(&b.rq) == saved,
		 "with the producer put back (%u), RESET restarts the ring there: consumer %u",
		 saved, CONS(&b.rq));
	to_reset(a.qp);
	while (ibv_poll_cq(b.cq, 8, wc) > 0 || ibv_poll_cq(a.cq, 8, wc) > 0)
		;
	st = connect_pair(&a, &b);
	vt_check(!st, "RESET -> INIT -> RTR -> RTS again (%s)", vt_errname(st));
	vt_check(!st && exchange(&a, &b, 0, round + 2, true) &&
		 exchange(&a, &b, MSG, round + 3, true),
		 "the QP works again: two SENDs land byte-exact");
out:
	qpx_destroy(&a);
	qpx_destroy(&b);
}

/* ---- (c) send ring ------------------------------------------------------- */

struct sq_garbage {
	const char *name;
	uint32_t opcode, flags, num_sge;
};

static const struct sq_garbage sq_garbage[] = {
	{ "opcode 0xff, 1000 SGEs, unknown send_flags", 0xff, 0xffff0000u, 1000 },
	{ "1000 SGEs", IBV_WR_SEND, IBV_SEND_SIGNALED, 1000 },
	{ "opcode 0xff", 0xff, IBV_SEND_SIGNALED, 1 },
	{ "unknown send_flags", IBV_WR_SEND, IBV_SEND_SIGNALED | 1u << 20, 1 },
};

static void sq_slot_write(struct qpx *x, uint32_t idx, uint64_t wr_id,
			  uint32_t opcode, uint32_t flags, uint32_t num_sge)
{
	struct softhca_swqe *s = ring_slot(&x->sq, idx);

	memset(s, 0, x->sq.slot_size);
	s->wr_id = wr_id;
	s->opcode = opcode;
	s->send_flags = flags;
	s->num_sge = num_sge;
	s->sge[0].addr = (uintptr_t)x->buf;
	s->sge[0].length = MSG;
	s->sge[0].lkey = x->mr->lkey;
}

static void check_send_ring(void)
{
	struct qpx a, b, u;
	struct ibv_wc wc = {};
	unsigned int i;
	uint32_t cons;
	int err, st;
	bool ok;

	printf("  # ---- send ring ----\n");
	qpx_create(&a, dev.ctx, dev.pd, IBV_QPT_RC);
	qpx_create(&b, dev.ctx, dev.pd, IBV_QPT_RC);
	if (!a.sq.r || connect_pair(&a, &b)) {
		vt_bad("no send ring or no connection");
		goto out;
	}
	vt_check(exchange(&a, &b, 0, 1, true),
		 "a SEND through the provider's ring");
	cons = CONS(&a.sq);
	err = doorbell(a.qp, SOFTHCA_DB_SQ, cons, true);
	vt_check(!err && CONS(&a.sq) == cons,
		 "a raw doorbell with producer == consumer (%u): 0, nothing posted (%s)",
		 cons, vt_errname(err));
	for (i = 0; i < ARRAY_SIZE(sq_garbage); i++) {
		const struct sq_garbage *g = &sq_garbage[i];

		cons = CONS(&a.sq);
		sq_slot_write(&a, cons, 500 + i, g->opcode, g->flags,
			      g->num_sge);
		err = doorbell(a.qp, SOFTHCA_DB_SQ, cons + 1, true);
		st = qp_state(a.qp);
		vt_check(err == EINVAL && CONS(&a.sq) == cons &&
			 st == IBV_QPS_RTS,
			 "slot %s: doorbell %s (EINVAL), consumer %u (was %u), QP %s",
			 g->name, vt_errname(err), CONS(&a.sq), cons,
			 st_name(st));
		vt_check(cq_quiet(a.cq) && cq_quiet(b.cq),
			 "  nothing completes for the refused slot");
		vt_check(exchange(&a, &b, 0, 10 + i, true),
			 "  the provider's next SEND (into that slot) works");
	}
	cons = CONS(&a.sq);
	sq_slot_write(&a, cons, 600, IBV_WR_SEND, IBV_SEND_SIGNALED, 1);
	err = doorbell(a.qp, SOFTHCA_DB_SQ, cons + SQ_WR + 1, true);
	vt_check(err == EINVAL && CONS(&a.sq) == cons,
		 "producer %d ahead of the consumer (%d slots): EINVAL (%s), nothing posted",
		 SQ_WR + 1, SQ_WR, vt_errname(err));
	err = doorbell(a.qp, SOFTHCA_DB_SQ, cons - 1, true);
	vt_check(err == EINVAL && CONS(&a.sq) == cons,
		 "producer one behind the consumer: EINVAL (%s), nothing posted",
		 vt_errname(err));
	err = doorbell(a.qp, SOFTHCA_DB_SQ, 0x80000000u + cons, true);
	vt_check(err == EINVAL && CONS(&a.sq) == cons,
		 "producer 2^31 ahead: EINVAL (%s), nothing posted",
		 vt_errname(err));
	err = doorbell(a.qp, 7, cons + 1, true);
	vt_check(err == EINVAL && CONS(&a.sq) == cons,
		 "an unknown queue (7): EINVAL (%s)", vt_errname(err));
	err = doorbell(a.qp, SOFTHCA_DB_SQ, 0, false);
	vt_check(err && CONS(&a.sq) == cons,
		 "a send doorbell without a producer is refused (%s)",
		 vt_errname(err));
	vt_check(cq_quiet(a.cq) && cq_quiet(b.cq) &&
		 qp_state(a.qp) == IBV_QPS_RTS && qp_state(b.qp) == IBV_QPS_RTS,
		 "nothing completed, both QPs still RTS");
	vt_check(exchange(&a, &b, 0, 20, true), "the QP still works");

	/* a valid slot written by hand: the raw doorbell is the real one */
	cons = CONS(&a.sq);
	fill_msg(a.buf, 30);
	memset(b.buf, FILL, BUF_LEN);
	post_recv(&b, 31, 0);
	sq_slot_write(&a, cons, 601, IBV_WR_SEND, IBV_SEND_SIGNALED, 1);
	err = doorbell(a.qp, SOFTHCA_DB_SQ, cons + 1, true);
	ok = !err && CONS(&a.sq) == cons + 1 && poll_one(a.cq, &wc) &&
	     wc.wr_id == 601 && wc.status == IBV_WC_SUCCESS &&
	     poll_one(b.cq, &wc) && wc.wr_id == 31 &&
	     wc.status == IBV_WC_SUCCESS && !memcmp(b.buf, a.buf, MSG);
	vt_check(ok, "a valid slot written by hand and rung by the raw doorbell is sent (%s)",
		 vt_errname(err));

	/*
	 * UD: a send ring too; its slots name address handles by the
	 * number the kernel gave them in this context: an unknown number
	 * or an RDMA opcode is refused at that slot, nothing taken.
	 */
	qpx_create(&u, dev.ctx, dev.pd, IBV_QPT_UD);
	vt_check(u.sq.r && u.rq.r,
		 "a UD QP gets a send and a receive ring (%d new mappings)",
		 u.nmaps);
	if (u.sq.r) {
		struct softhca_swqe *s;

		cons = CONS(&u.sq);
		err = doorbell(u.qp, SOFTHCA_DB_SQ, cons, true);
		vt_check(!err, "an empty send doorbell on the UD QP: 0 (%s)",
			 vt_errname(err));
		sq_slot_write(&u, cons, 701, IBV_WR_SEND, IBV_SEND_SIGNALED, 1);
		s = ring_slot(&u.sq, cons);
		s->ah = 0x7fffffff;
		s->remote_qpn = u.qp->qp_num;
		s->remote_qkey = 0x11111111;
		err = doorbell(u.qp, SOFTHCA_DB_SQ, cons + 1, true);
		vt_check(err == EINVAL && CONS(&u.sq) == cons,
			 "a UD slot naming an AH number nobody has: EINVAL, nothing taken (%s)",
			 vt_errname(err));
		sq_slot_write(&u, cons, 702, IBV_WR_RDMA_WRITE,
			      IBV_SEND_SIGNALED, 1);
		err = doorbell(u.qp, SOFTHCA_DB_SQ, cons + 1, true);
		vt_check(err == EINVAL && CONS(&u.sq) == cons,
			 "an RDMA WRITE slot on the UD QP: EINVAL, nothing taken (%s)",
			 vt_errname(err));
		vt_check(cq_quiet(u.cq),
			 "no completion for the refused UD slots");
	}
	qpx_destroy(&u);
out:
	qpx_destroy(&a);
	qpx_destroy(&b);
}

/* ---- (d) mappings ------------------------------------------------------- */

static void check_mappings(void)
{
	struct map m[MAX_MAPS];
	unsigned long long off;
	struct softhca_wq_ring *kept;
	char *unused;
	uint32_t prod, cons;
	struct qpx a, b;
	void *again, *bad;
	int n, i, left;
	size_t len;

	printf("  # ---- mappings ----\n");
	qpx_create(&a, dev.ctx, dev.pd, IBV_QPT_RC);
	qpx_create(&b, dev.ctx, dev.pd, IBV_QPT_RC);
	if (!a.rq.r || connect_pair(&a, &b)) {
		vt_bad("no ring or no connection");
		qpx_destroy(&a);
		qpx_destroy(&b);
		return;
	}
	/* something in the ring to recognise */
	post_recv(&a, 1, 0);
	post_recv(&a, 2, MSG);
	exchange(&b, &a, 0, 1, false);
	prod = PROD(&a.rq);
	cons = CONS(&a.rq);
	off = a.rq.off;
	len = a.rq.len;

	bad = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		   a.ctx->cmd_fd, off);
	vt_check(bad == MAP_FAILED && errno == EINVAL,
		 "mmap of the receive ring with MAP_PRIVATE: EINVAL (%s)",
		 bad == MAP_FAILED ? vt_errname(errno) : "mapped");
	if (bad != MAP_FAILED)
		munmap(bad, len);
	bad = mmap(NULL, page, PROT_READ, MAP_SHARED, a.ctx->cmd_fd, off);
	vt_check(bad == MAP_FAILED && errno == EINVAL,
		 "mmap of its first page only (the ring has %zu): EINVAL (%s)",
		 len, bad == MAP_FAILED ? vt_errname(errno) : "mapped");
	if (bad != MAP_FAILED)
		munmap(bad, page);
	again = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		     a.ctx->cmd_fd, off);
	vt_check(again != MAP_FAILED,
		 "mmap of the ring again at its offset %#llx while the QP lives (%s)",
		 off, again == MAP_FAILED ? vt_errname(errno) : "0");
	if (again == MAP_FAILED)
		goto out;
	kept = again;
	vt_check(ring_load(&kept->producer) == prod &&
		 ring_load(&kept->consumer) == cons && prod == 2 && cons == 1,
		 "it shows the same ring: producer %u, consumer %u",
		 ring_load(&kept->producer), ring_load(&kept->consumer));

	vt_check(!ibv_destroy_qp(a.qp), "destroy the QP");
	a.qp = NULL;
	n = uverbs_maps(m, MAX_MAPS);
	left = 0;
	for (i = 0; i < n; i++)
		if (m[i].off == off || m[i].off == a.sq.off)
			left++;
	vt_check(left == 1,
		 "the provider unmapped its rings; only the second mapping is left (%d)",
		 left);
	unused = (char *)again + SOFTHCA_WQ_RING_HDR + 2 * a.rq.slot_size;
	vt_check(ring_load(&kept->producer) == prod &&
		 ring_load(&kept->consumer) == cons &&
		 vt_all_bytes(unused, (char *)again + len - unused, 0),
		 "the kept mapping stays readable after destroy (producer %u, consumer %u, the unused slots zero)",
		 ring_load(&kept->producer), ring_load(&kept->consumer));
	ring_store(&kept->producer, 12345);
	vt_check(ring_load(&kept->producer) == 12345,
		 "and writable, to no effect on anyone");
	bad = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   a.ctx->cmd_fd, off);
	vt_check(bad == MAP_FAILED && errno == EINVAL,
		 "its offset maps no more after destroy: EINVAL (%s)",
		 bad == MAP_FAILED ? vt_errname(errno) : "mapped");
	if (bad != MAP_FAILED)
		munmap(bad, len);
	bad = mmap(NULL, a.sq.len, PROT_READ | PROT_WRITE, MAP_SHARED,
		   a.ctx->cmd_fd, a.sq.off);
	vt_check(bad == MAP_FAILED && errno == EINVAL,
		 "nor does the send ring's: EINVAL (%s)",
		 bad == MAP_FAILED ? vt_errname(errno) : "mapped");
	if (bad != MAP_FAILED)
		munmap(bad, a.sq.len);
	vt_check(!munmap(again, len), "munmap of the kept mapping");
out:
	qpx_destroy(&a);
	qpx_destroy(&b);
}

int main(int argc, char **argv)
{
	struct qpx c, d;
	unsigned int i;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DEV\n", argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	page = sysconf(_SC_PAGESIZE);
	/* before this process opens anything */
	start_bystander(argv[1]);
	vt_dev_open(&dev, argv[1]);
	if (!dev.is_softhca) {
		vt_info("%s is not softhca: no mapped rings to check", argv[1]);
		stop_bystander();
		return vt_exit();
	}
	vt_check(bystander_round(), "another process has a working QP pair");

	check_rings();
	check_no_rings();

	/* the bystander pair of this process */
	qpx_create(&c, dev.ctx, dev.pd, IBV_QPT_RC);
	qpx_create(&d, dev.ctx, dev.pd, IBV_QPT_RC);
	if (connect_pair(&c, &d)) {
		vt_bad("bystander pair: no connection");
		exit(2);
	}
	for (i = 0; i < ARRAY_SIZE(rq_cases); i++)
		rq_corrupt(&rq_cases[i], &c, &d, 10 * i + 1);
	check_send_ring();
	check_mappings();
	vt_check(exchange(&c, &d, 0, 200, true),
		 "the bystander pair of this process still works at the end");
	vt_check(bystander_round(),
		 "the other process' pair still works at the end");
	qpx_destroy(&c);
	qpx_destroy(&d);
	stop_bystander();
	ibv_dealloc_pd(dev.pd);
	ibv_close_device(dev.ctx);
	return vt_exit();
}
