// SPDX-License-Identifier: GPL-2.0
/*
 * shca_dp_bench - RC data-path throughput and latency between pairs of
 * RDMA devices, measured from inside the kernel through ib_core only
 * (ib_post_send, ib_post_recv, ib_poll_cq), so that softhca and rdma_rxe
 * run exactly the same code around their verbs and no system call sits
 * between the benchmark and the device.
 *
 *   insmod shca_dp_bench.ko pairs=softhca0:softhca1,rxe0:rxe1 cell_ms=300 reps=3
 *
 * (cell=WRITE:64 and the like, or a comma-separated list of them: those
 * cells only, without the memcpy rows).
 *
 * For each pair "A:B" one RC QP on A is connected to one on B (RoCE v2,
 * the IPv4-mapped GID of each device when it has one) and, for 64 B,
 * 4 KiB, 64 KiB and 1 MiB messages, A streams RDMA WRITEs into B, RDMA
 * READs from B and SENDs to B for cell_ms milliseconds each, keeping up
 * to depth work requests (and at most 4 MiB) outstanding, every one
 * signaled (signal=N: one in N, as perftest's --cq-mod; the completion of
 * a signaled one counts for those before it). Remote memory is B's DMA MR
 * (IB_PD_UNSAFE_GLOBAL_RKEY). After
 * each cell every destination byte is checked against the source's
 * pattern, so a device that completes without moving data shows up as an
 * error, not as a fast result. Latency is a ping-pong at the same sizes,
 * once with SENDs and once with RDMA WRITEs whose arrival the peer
 * detects by polling the last byte (as perftest's ib_write_lat does); it
 * is reported one way (half a round trip). Next to them, the kernel's own
 * memcpy() between two buffers, one thread, for the same sizes: the
 * ceiling for a device that copies every byte once with the CPU.
 *
 * Every cell gets fresh QPs and warms up untimed on its pair first (a
 * window of messages, ten round trips), then runs for cell_ms. Every cell
 * is measured reps times: in each repetition the memcpy cells first, then
 * cell by cell the pairs take turns, every other repetition in the
 * reverse order (A B, B A, A B: ABBA). Cells that would start after
 * budget_s seconds are reported as skipped.
 *
 * Results go to the kernel log, one record per line, for a script to
 * tabulate (tests/bench/dp-bench.sh: median, spread):
 *
 *   shca_dp_bench: bw A:B OP SIZE REP MESSAGES NANOSECONDS
 *   shca_dp_bench: lat A:B OP SIZE REP ROUNDTRIPS NANOSECONDS
 *   shca_dp_bench: memcpy - - SIZE REP COPIES NANOSECONDS
 *   shca_dp_bench: err A:B OP SIZE REP REASON    (OP of latency: SEND-lat;
 *                                                 "- - -": the pair)
 *   shca_dp_bench: done
 *
 * All the work happens in module init; the module then stays loaded doing
 * nothing, rmmod it afterwards. A measurement, never a test: it does not
 * fail on a slow or failing device, it reports it.
 */

#include <linux/delay.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "shca_bench.h"

#define DP_MAX_PAIRS	4
#define DP_MAX_MSG	SZ_1M		/* the largest message */
#define DP_BUF_SIZE	(2 * DP_MAX_MSG)
#define DP_MAX_INFLIGHT	SZ_4M		/* bytes outstanding at most */
#define DP_LAT_SIZE	64
#define DP_LAT_OFF	DP_MAX_MSG	/* write ping-pong landing zone */
#define DP_STALL_NS	(5ULL * NSEC_PER_SEC)
#define DP_POLL		16

static char *pairs = "softhca0:softhca1,rxe0:rxe1";
module_param(pairs, charp, 0444);
MODULE_PARM_DESC(pairs, "comma-separated A:B device pairs; A sends to B");

static int cell_ms = 300;
module_param(cell_ms, int, 0444);
MODULE_PARM_DESC(cell_ms, "milliseconds per measurement");

static int depth = 32;
module_param(depth, int, 0444);
MODULE_PARM_DESC(depth, "work requests outstanding per QP");

static int signal = 1;
module_param(signal, int, 0444);
MODULE_PARM_DESC(signal, "throughput cells: one work request in this many is signaled (perftest's --cq-mod); 1: every one");

static int reps = 3;
module_param(reps, int, 0444);
MODULE_PARM_DESC(reps, "measurements of every cell (pairs in ABBA order)");

static char *cell = "";
module_param(cell, charp, 0444);
MODULE_PARM_DESC(cell, "run only these cells, NAME:SIZE[,NAME:SIZE...] (WRITE:64, SEND-lat:4096, ...); default every cell");

static int budget_s = 300;
module_param(budget_s, int, 0444);
MODULE_PARM_DESC(budget_s, "seconds after which no further cell starts");

static const u32 dp_sizes[] = { 64, SZ_4K, SZ_64K, SZ_1M };

enum dp_op { DP_WRITE, DP_READ, DP_SEND };
static const char *const dp_op_names[] = {
	[DP_WRITE] = "WRITE", [DP_READ] = "READ", [DP_SEND] = "SEND",
};

/* One side of a pair: everything but the QP lives as long as the pair. */
struct dp_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *scq;
	struct ib_cq *rcq;
	struct ib_qp *qp;
	u8 *buf;
	u64 dma;
	int gid_index;
	union ib_gid gid;
	enum ib_mtu mtu;
};

struct dp_pair {
	const char *label;
	const char *setup_err;	/* the pair could not be set up */
	struct dp_end a;
	struct dp_end b;
	const char *err;	/* why the current cell failed, or NULL */
	bool stalled;		/* a cell stalled: skip the rest of the pair */
};

static void dp_end_teardown(struct dp_end *e)
{
	if (e->buf && e->dma)
		ib_dma_unmap_single(e->dev, e->dma, DP_BUF_SIZE,
				    DMA_BIDIRECTIONAL);
	kfree(e->buf);
	if (e->rcq)
		ib_free_cq(e->rcq);
	if (e->scq)
		ib_free_cq(e->scq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->dev)
		ib_device_put(e->dev);
	memset(e, 0, sizeof(*e));
}

static const char *dp_end_setup(struct dp_end *e, const char *name)
{
	struct ib_port_attr port;
	int cqe = 4 * depth + 8;

	e->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!e->dev)
		return "no-device";
	e->gid_index = shca_bench_pick_gid(e->dev, &e->gid);
	if (e->gid_index < 0)
		return "no-roce-v2-gid";
	if (ib_query_port(e->dev, 1, &port))
		return "query_port";
	if (port.state != IB_PORT_ACTIVE)
		return "port-down";
	e->mtu = port.active_mtu;
	e->pd = ib_alloc_pd(e->dev, IB_PD_UNSAFE_GLOBAL_RKEY);
	if (IS_ERR(e->pd)) {
		e->pd = NULL;
		return "alloc_pd";
	}
	e->scq = ib_alloc_cq(e->dev, NULL, cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->scq)) {
		e->scq = NULL;
		return "alloc_cq";
	}
	e->rcq = ib_alloc_cq(e->dev, NULL, cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->rcq)) {
		e->rcq = NULL;
		return "alloc_cq";
	}
	e->buf = kzalloc(DP_BUF_SIZE, GFP_KERNEL);
	if (!e->buf)
		return "no-memory";
	e->dma = ib_dma_map_single(e->dev, e->buf, DP_BUF_SIZE,
				   DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(e->dev, e->dma)) {
		e->dma = 0;
		return "dma-map";
	}
	return NULL;
}

static int dp_qp_create(struct dp_end *e)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->scq,
		.recv_cq = e->rcq,
		/*
		 * Twice the window: rdma_rxe posts a completion before it
		 * frees the queue slot, so a slot may still be taken just
		 * after its completion was reaped.
		 */
		.cap = {
			.max_send_wr = 2 * depth,
			.max_recv_wr = 2 * depth,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp)) {
		int err = PTR_ERR(e->qp);

		e->qp = NULL;
		return err;
	}
	return 0;
}

/* RESET -> INIT -> RTR -> RTS, connected to @peer's QP. */
static int dp_qp_connect(struct dp_end *e, struct dp_end *peer)
{
	return shca_bench_rc_connect(e->qp, e->gid_index, peer->qp,
				     &peer->gid, min(e->mtu, peer->mtu));
}

static void dp_cq_drain(struct ib_cq *cq)
{
	struct ib_wc wc[DP_POLL];

	while (ib_poll_cq(cq, DP_POLL, wc) > 0)
		;
}

static void dp_qps_destroy(struct dp_pair *p)
{
	if (p->a.qp)
		ib_destroy_qp(p->a.qp);
	if (p->b.qp)
		ib_destroy_qp(p->b.qp);
	p->a.qp = NULL;
	p->b.qp = NULL;
	dp_cq_drain(p->a.scq);
	dp_cq_drain(p->a.rcq);
	dp_cq_drain(p->b.scq);
	dp_cq_drain(p->b.rcq);
}

/* A fresh connected QP pair for one cell; sets p->err on failure. */
static int dp_qps_create(struct dp_pair *p)
{
	dp_cq_drain(p->a.scq);
	dp_cq_drain(p->a.rcq);
	dp_cq_drain(p->b.scq);
	dp_cq_drain(p->b.rcq);
	if (dp_qp_create(&p->a) || dp_qp_create(&p->b)) {
		p->err = "create_qp";
		goto err;
	}
	if (dp_qp_connect(&p->a, &p->b) || dp_qp_connect(&p->b, &p->a)) {
		p->err = "modify_qp";
		goto err;
	}
	return 0;
err:
	dp_qps_destroy(p);
	return -EIO;
}

static struct ib_sge dp_sge(struct dp_end *e, u32 off, u32 len)
{
	return (struct ib_sge){
		.addr = e->dma + off,
		.length = len,
		.lkey = e->pd->local_dma_lkey,
	};
}

static int dp_post_recv(struct dp_end *e, u32 off, u32 len)
{
	struct ib_sge sge = dp_sge(e, off, len);
	struct ib_recv_wr wr = { .sg_list = &sge, .num_sge = 1 };

	return ib_post_recv(e->qp, &wr, NULL);
}

/*
 * Post one @op of @len bytes from @e at @off to @peer at @roff, signaled
 * unless @quiet.
 */
static int dp_post_wr(struct dp_end *e, struct dp_end *peer, enum dp_op op,
		      u32 off, u32 roff, u32 len, bool quiet)
{
	struct ib_sge sge = dp_sge(e, off, len);
	struct ib_rdma_wr wr = {
		.wr = {
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = quiet ? 0 : IB_SEND_SIGNALED,
		},
		.remote_addr = peer->dma + roff,
		.rkey = peer->pd->unsafe_global_rkey,
	};

	switch (op) {
	case DP_WRITE:
		wr.wr.opcode = IB_WR_RDMA_WRITE;
		break;
	case DP_READ:
		wr.wr.opcode = IB_WR_RDMA_READ;
		break;
	default:
		wr.wr.opcode = IB_WR_SEND;
		break;
	}
	return ib_post_send(e->qp, &wr.wr, NULL);
}

/* Post one signaled @op of @len bytes from @e at @off to @peer at @roff. */
static int dp_post(struct dp_end *e, struct dp_end *peer, enum dp_op op,
		   u32 off, u32 roff, u32 len)
{
	return dp_post_wr(e, peer, op, off, roff, len, false);
}

/*
 * Reap up to DP_POLL completions of @cq; returns how many, or -EIO (and
 * sets p->err) for an unsuccessful one.
 */
static int dp_reap(struct dp_pair *p, struct ib_cq *cq)
{
	struct ib_wc wc[DP_POLL];
	int n, i;

	n = ib_poll_cq(cq, DP_POLL, wc);
	if (n < 0) {
		p->err = "poll_cq";
		return -EIO;
	}
	for (i = 0; i < n; i++) {
		if (wc[i].status != IB_WC_SUCCESS) {
			pr_info("shca_dp_bench: %s: completion status %s\n",
				p->label, ib_wc_status_msg(wc[i].status));
			p->err = "wc-error";
			return -EIO;
		}
	}
	return n;
}

/* Progress watchdog: true (and p->err set) after DP_STALL_NS idle. */
static bool dp_stalled(struct dp_pair *p, bool progress, u64 now, u64 *last)
{
	if (progress) {
		*last = now;
		return false;
	}
	if (now - *last < DP_STALL_NS)
		return false;
	p->err = "stalled";
	p->stalled = true;
	return true;
}

/*
 * Let the device's worker run: under QEMU's single-threaded TCG a busy
 * loop would otherwise keep the other virtual CPU off the host CPU (PAUSE
 * hands it over), and on one CPU the worker may be queued behind us.
 */
static void dp_idle(void)
{
	cpu_relax();
	cond_resched();
}

/* At most this many messages in flight: depth, and DP_MAX_INFLIGHT bytes. */
static u32 dp_window(u32 size)
{
	return clamp_t(u32, DP_MAX_INFLIGHT / size, 1, depth);
}

/*
 * Stream @op messages of @size bytes from A to B until @max messages were
 * posted or @dur_ns passed, then wait for all of them. One message in
 * signal (at most the window) is signaled and its completion counts for
 * the ones before it; the stream stops after a signaled one. For SEND, B
 * has a window of receives posted and keeps it so. Returns 0 with *@msgs
 * completed in *@ns, or -EIO with p->err set.
 */
static int dp_stream(struct dp_pair *p, enum dp_op op, u32 size, u64 max,
		     u64 dur_ns, u64 *msgs, u64 *ns)
{
	u32 window = dp_window(size), every = min_t(u32, signal, window);
	u64 posted = 0, done = 0, reaped = 0, t0, now, last;
	bool stop = false, ending = false, quiet;
	int n, i;

	t0 = ktime_get_ns();
	last = t0;
	for (;;) {
		bool progress = false;

		/* A SEND also needs a receive at B: at most window unreaped. */
		while (!stop && posted - done < window &&
		       (op != DP_SEND || posted - reaped < window)) {
			quiet = (posted + 1) % every != 0;
			if (dp_post_wr(&p->a, &p->b, op, 0, 0, size, quiet)) {
				p->err = "post_send";
				return -EIO;
			}
			posted++;
			/* The last message of a stream is a signaled one. */
			stop = (posted >= max || ending) && !quiet;
		}
		n = dp_reap(p, p->a.scq);
		if (n < 0)
			return n;
		done += (u64)n * every;
		progress = n > 0;
		if (op == DP_SEND) {
			n = dp_reap(p, p->b.rcq);
			if (n < 0)
				return n;
			for (i = 0; i < n; i++) {
				if (dp_post_recv(&p->b, 0, size)) {
					p->err = "post_recv";
					return -EIO;
				}
			}
			reaped += n;
			progress |= n > 0;
		}
		now = ktime_get_ns();
		/* Time is up: stop at (or after) a signaled message. */
		if (now - t0 >= dur_ns) {
			ending = true;
			stop = stop || posted % every == 0;
		}
		if (stop && done == posted &&
		    (op != DP_SEND || reaped == posted))
			break;
		if (dp_stalled(p, progress, now, &last))
			return -EIO;
		if (!progress)
			dp_idle();
	}
	*msgs = done;
	*ns = now - t0;
	return 0;
}

/*
 * One throughput cell. The bytes are checked afterwards: the source holds
 * one pattern, the destination another, and every destination byte must
 * end up holding the source's.
 */
static void dp_bw(struct dp_pair *p, enum dp_op op, u32 size, u8 pattern,
		  int rep)
{
	struct dp_end *src = op == DP_READ ? &p->b : &p->a;
	struct dp_end *dst = op == DP_READ ? &p->a : &p->b;
	u64 msgs, ns;
	int err = 0;
	u32 i;

	p->err = NULL;
	if (p->stalled) {
		p->err = "skipped-after-stall";
		goto out;
	}
	if (dp_qps_create(p))
		goto out;
	memset(src->buf, pattern, size);
	memset(dst->buf, (u8)~pattern, size);
	for (i = 0; op == DP_SEND && i < dp_window(size) && !err; i++)
		err = dp_post_recv(&p->b, 0, size);
	if (err) {
		p->err = "post_recv";
		goto destroy;
	}
	/* Warm up with one window of messages, then measure. */
	err = dp_stream(p, op, size, dp_window(size), U64_MAX, &msgs, &ns);
	if (!err)
		err = dp_stream(p, op, size, U64_MAX,
				(u64)cell_ms * NSEC_PER_MSEC, &msgs, &ns);
	if (!err && memchr_inv(dst->buf, pattern, size)) {
		p->err = "data-mismatch";
		err = -EIO;
	}
destroy:
	dp_qps_destroy(p);
	if (!err)
		pr_info("shca_dp_bench: bw %s %s %u %d %llu %llu\n", p->label,
			dp_op_names[op], size, rep, msgs, ns);
out:
	if (p->err)
		pr_info("shca_dp_bench: err %s %s %u %d %s\n", p->label,
			dp_op_names[op], size, rep, p->err);
}

/* Wait for a receive completion on @e and repost the receive. */
static int dp_wait_recv(struct dp_pair *p, struct dp_end *e, u32 size)
{
	u64 last = ktime_get_ns();
	int n;

	for (;;) {
		n = dp_reap(p, e->rcq);
		if (n < 0)
			return n;
		if (n) {
			while (n--) {
				if (dp_post_recv(e, 0, size)) {
					p->err = "post_recv";
					return -EIO;
				}
			}
			return 0;
		}
		if (dp_stalled(p, false, ktime_get_ns(), &last))
			return -EIO;
		dp_idle();
	}
}

static int dp_wait_byte(struct dp_pair *p, struct dp_end *e, u32 off, u8 val)
{
	u64 last = ktime_get_ns();

	while (READ_ONCE(e->buf[off]) != val) {
		if (dp_stalled(p, false, ktime_get_ns(), &last))
			return -EIO;
		dp_idle();
	}
	return 0;
}

/*
 * One round trip: A -> B -> A. Send completions are reaped lazily;
 * *@sq counts the unreaped ones of each side.
 */
static int dp_pingpong_one(struct dp_pair *p, enum dp_op op, u32 size,
			   u8 val, u32 *sq)
{
	struct dp_end *e[2] = { &p->a, &p->b };
	int side, n;
	u64 last;

	for (side = 0; side < 2; side++) {
		struct dp_end *me = e[side], *peer = e[!side];

		/* Keep a free send slot; reap what has completed. */
		last = ktime_get_ns();
		for (;;) {
			n = dp_reap(p, me->scq);
			if (n < 0)
				return n;
			sq[side] -= n;
			if (sq[side] < depth - 1)
				break;
			if (dp_stalled(p, n > 0, ktime_get_ns(), &last))
				return -EIO;
			dp_idle();
		}

		if (op == DP_WRITE) {
			/* The last byte of the message says "arrived". */
			WRITE_ONCE(me->buf[size - 1], val);
			if (dp_post(me, peer, op, 0, DP_LAT_OFF, size))
				goto err_post;
			sq[side]++;
			if (dp_wait_byte(p, peer, DP_LAT_OFF + size - 1, val))
				return -EIO;
		} else {
			if (dp_post(me, peer, op, 0, 0, size))
				goto err_post;
			sq[side]++;
			if (dp_wait_recv(p, peer, size))
				return -EIO;
		}
	}
	return 0;

err_post:
	p->err = "post_send";
	return -EIO;
}

static void dp_lat(struct dp_pair *p, enum dp_op op, u32 size, int rep)
{
	u64 t0, ns = 0, iters = 0, dur = (u64)cell_ms * NSEC_PER_MSEC;
	u32 sq[2] = { 0, 0 };
	int i, err = 0;

	p->err = NULL;
	if (p->stalled) {
		p->err = "skipped-after-stall";
		goto out;
	}
	if (dp_qps_create(p))
		goto out;
	if (op == DP_SEND) {
		for (i = 0; i < 2 && !err; i++)
			err = dp_post_recv(&p->a, 0, size) ?:
			      dp_post_recv(&p->b, 0, size);
		if (err) {
			p->err = "post_recv";
			goto destroy;
		}
	}
	memset(p->a.buf + DP_LAT_OFF, 0, size);
	memset(p->b.buf + DP_LAT_OFF, 0, size);
	/* Ten untimed round trips, then as many as fit in the cell. */
	for (i = 0; i < 10 && !err; i++)
		err = dp_pingpong_one(p, op, size, (u8)(i + 1), sq);
	t0 = ktime_get_ns();
	while (!err) {
		/* 20..219: never the warm-up's 1..10, never twice in a row */
		err = dp_pingpong_one(p, op, size, (u8)(iters % 200 + 20), sq);
		if (err)
			break;
		iters++;
		ns = ktime_get_ns() - t0;
		if (ns >= dur)
			break;
	}
destroy:
	dp_qps_destroy(p);
	if (!err)
		pr_info("shca_dp_bench: lat %s %s %u %d %llu %llu\n", p->label,
			dp_op_names[op], size, rep, iters, ns);
out:
	if (p->err)
		pr_info("shca_dp_bench: err %s %s-lat %u %d %s\n", p->label,
			dp_op_names[op], size, rep, p->err);
}

/* The kernel's memcpy() between two buffers, one thread, every size. */
static void dp_memcpy(int rep)
{
	u64 dur = (u64)cell_ms * NSEC_PER_MSEC / 2;
	u8 *src, *dst;
	int s;

	src = kmalloc(DP_MAX_MSG, GFP_KERNEL);
	dst = kmalloc(DP_MAX_MSG, GFP_KERNEL);
	if (!src || !dst)
		goto out;
	memset(src, 0x5a, DP_MAX_MSG);
	memset(dst, 0, DP_MAX_MSG);
	for (s = 0; s < ARRAY_SIZE(dp_sizes); s++) {
		u32 size = dp_sizes[s];
		u32 batch = max_t(u32, 1, SZ_64K / size);
		u64 n = 0, t0, ns;
		u32 i;

		/* warm up: caches and TLB */
		for (i = 0; i < batch; i++) {
			OPTIMIZER_HIDE_VAR(dst);
			memcpy(dst, src, size);
		}
		t0 = ktime_get_ns();
		do {
			for (i = 0; i < batch; i++) {
				OPTIMIZER_HIDE_VAR(dst);
				memcpy(dst, src, size);
			}
			n += batch;
			ns = ktime_get_ns() - t0;
			cond_resched();
		} while (ns < dur);
		pr_info("shca_dp_bench: memcpy - - %u %d %llu %llu\n", size,
			rep, n, ns);
	}
out:
	kfree(src);
	kfree(dst);
}

/* Both ends of the pair @spec ("A:B"); returns NULL or what failed. */
static const char *dp_pair_setup(struct dp_pair *p, char *spec)
{
	char *name_b = strchr(spec, ':');
	const char *err;

	p->label = spec;
	if (!name_b)
		return "bad-pair";
	*name_b++ = '\0';
	err = dp_end_setup(&p->a, spec);
	if (!err)
		err = dp_end_setup(&p->b, name_b);
	name_b[-1] = ':';
	if (err)
		return err;
	pr_info("shca_dp_bench: pair %s gid %d:%pI6 -> %d:%pI6 mtu %d\n",
		p->label, p->a.gid_index, p->a.gid.raw, p->b.gid_index,
		p->b.gid.raw, ib_mtu_enum_to_int(min(p->a.mtu, p->b.mtu)));
	return NULL;
}

/*
 * The cells of a repetition, in order: throughput for every operation
 * and size, then latency with SENDs and with WRITEs for every size.
 */
#define DP_NSIZES	ARRAY_SIZE(dp_sizes)
#define DP_NBW		(3 * DP_NSIZES)
#define DP_NCELLS	(DP_NBW + 2 * DP_NSIZES)

static void dp_cell(struct dp_pair *p, unsigned int c, int rep)
{
	u32 size = dp_sizes[c % DP_NSIZES];

	if (c < DP_NBW) {
		enum dp_op op = c / DP_NSIZES;

		dp_bw(p, op, size, 0x11 * (c + 1), rep);
	} else {
		dp_lat(p, c < DP_NBW + DP_NSIZES ? DP_SEND : DP_WRITE, size,
		       rep);
	}
}

static const char *dp_cell_name(unsigned int c)
{
	static const char *const lat[] = { "SEND-lat", "WRITE-lat" };

	if (c < DP_NBW)
		return dp_op_names[c / DP_NSIZES];
	return lat[(c - DP_NBW) / DP_NSIZES];
}

/* Whether the cell= parameter names cell @c (or names none). */
static bool dp_cell_wanted(unsigned int c)
{
	const char *p = cell;
	char name[32];
	size_t n;

	if (!*cell)
		return true;
	n = snprintf(name, sizeof(name), "%s:%u", dp_cell_name(c),
		     dp_sizes[c % DP_NSIZES]);
	while (*p) {
		size_t len = strcspn(p, ",\n");

		if (len == n && !strncmp(p, name, n))
			return true;
		p += len;
		if (*p)
			p++;
	}
	return false;
}

static struct dp_pair dp_pairs[DP_MAX_PAIRS];

static int __init shca_dp_bench_init(void)
{
	char *list, *cur, *spec;
	int np = 0, rep, k, i;
	unsigned int c;
	u64 deadline;

	if (cell_ms <= 0 || cell_ms > 60000 || depth < 2 || depth > 1024 ||
	    signal < 1 || signal > depth || reps < 1 || reps > 100 ||
	    budget_s < 1)
		return -EINVAL;
	list = kstrdup(pairs, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	pr_info("shca_dp_bench: config cell_ms %d depth %d signal %d max_inflight %d reps %d budget_s %d\n",
		cell_ms, depth, signal, DP_MAX_INFLIGHT, reps, budget_s);
	cur = list;
	while ((spec = strsep(&cur, ",")) && np < DP_MAX_PAIRS) {
		struct dp_pair *p = &dp_pairs[np];

		if (!*spec)
			continue;
		memset(p, 0, sizeof(*p));
		p->setup_err = dp_pair_setup(p, spec);
		if (p->setup_err)
			pr_info("shca_dp_bench: err %s - - - %s\n", p->label,
				p->setup_err);
		np++;
	}

	deadline = ktime_get_ns() + (u64)budget_s * NSEC_PER_SEC;
	for (rep = 1; rep <= reps; rep++) {
		/* cell=: one cell of the devices, without the memcpy rows */
		if (!*cell && ktime_get_ns() > deadline)
			pr_info("shca_dp_bench: err - memcpy - %d skipped\n",
				rep);
		else if (!*cell)
			dp_memcpy(rep);
		for (c = 0; c < DP_NCELLS; c++) {
			if (!dp_cell_wanted(c))
				continue;
			/* ABBA: every other repetition reversed */
			for (k = 0; k < np; k++) {
				struct dp_pair *p;

				i = rep % 2 ? k : np - 1 - k;
				p = &dp_pairs[i];
				if (p->setup_err)
					continue;
				if (ktime_get_ns() > deadline) {
					pr_info("shca_dp_bench: err %s %s %u %d skipped\n",
						p->label, dp_cell_name(c),
						dp_sizes[c % DP_NSIZES], rep);
					continue;
				}
				dp_cell(p, c, rep);
			}
		}
	}
	for (i = 0; i < np; i++) {
		dp_end_teardown(&dp_pairs[i].b);
		dp_end_teardown(&dp_pairs[i].a);
	}
	pr_info("shca_dp_bench: done\n");
	kfree(list);
	return 0;
}

static void __exit shca_dp_bench_exit(void)
{
}

module_init(shca_dp_bench_init);
module_exit(shca_dp_bench_exit);

MODULE_DESCRIPTION("RC data-path benchmark for RDMA devices (softhca vs rdma_rxe)");
MODULE_LICENSE("GPL");
