// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_traffic DEV_A DEV_B SECS STATE_DIR: RC traffic between two
 * processes, for tearing devices down under it (tests/vm/98-*.sh).
 *
 * The program forks: worker A (the parent) uses DEV_A, worker B (the
 * child) DEV_B (they may be the same device). Each opens its device only
 * after the fork, registers 1 MiB (and maps 64 KiB of device memory with
 * an MR on it, when the device has some), creates an RC QP and exchanges its QP
 * number, GID, buffer address and rkey with the other through a pipe.
 * Both then stream, with up to 16 work requests outstanding, 64 KiB
 * RDMA_WRITEs into the other's buffer and 256-byte SENDs into its posted
 * receives, until SECS seconds have passed or something fails: a verbs
 * call returns an error, a completion has an error status, or an
 * error event arrives on the async fd (polled all along; GID and port
 * events are recorded but do not stop the traffic).
 *
 * After that a worker drains its CQs for a moment (collecting the flush
 * of what was outstanding), tells the other it is done, waits (bounded)
 * for the other to say so as well, destroys everything and prints one
 * line:
 *
 *   traffic A softhca0: ops N stop REASON async EVENTS wc STATUS:COUNT,...
 *     errs CALL:ERRNO,... destroy qp=E cq=E,E mr=E dm=E,E pd=E close=0
 *
 * (dm: the device-memory MR and the allocation, "-" if the device has no
 * device memory; each worker holds 64 KiB of it, mapped, and writes into
 * the mapping all along.)
 *
 * REASON is "time" (SECS elapsed), "wc" (an error completion), "async"
 * (an error event), "post"/"poll" (the call failed) or "peer" (the
 * other worker never started). A worker whose partner stops keeps going
 * until its own requests fail. STATE_DIR/A.ready and B.ready appear
 * once a worker has completed 64 operations, STATE_DIR/A.pid and B.pid
 * hold the workers' pids. Exit status 0 when the worker ran (whatever
 * happened to the device), 2 when it could not start; the parent exits
 * with the larger of the two.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
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

#define BUF_LEN		(1u << 20)
#define WRITE_LEN	(64u << 10)
#define SEND_LEN	256u
#define DEPTH		16
#define RECVS		64
#define DM_LEN		(64u << 10)

struct peer_info {
	uint32_t qpn;
	uint32_t rkey;
	uint64_t addr;
	union ibv_gid gid;
};

struct worker {
	char side;			/* 'A' or 'B' */
	const char *dev;
	const char *dir;
	int rfd, wfd;			/* pipe from / to the other worker */
	struct vt_dev d;		/* context, PD, GID of port 1 */
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	struct ibv_dm *dm;		/* device memory, if the device has any */
	struct ibv_mr *dm_mr;
	unsigned char *buf;
	struct peer_info peer;

	unsigned long ops;
	int outstanding;
	bool saw_eio;			/* a call failed with EIO */
	bool fatal;			/* IBV_EVENT_DEVICE_FATAL arrived */
	const char *stop;
	char async[256];
	unsigned long wc_count[IBV_WC_GENERAL_ERR + 2];
	char errs[256];
};

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* An errno as one word: EIO, ENODEV, ... */
static const char *ename(int err)
{
	switch (err) {
	case 0: return "0";
	case -1: return "-";
	case EIO: return "EIO";
	case ENODEV: return "ENODEV";
	case EAGAIN: return "EAGAIN";
	case ENOENT: return "ENOENT";
	case EINVAL: return "EINVAL";
	case EBUSY: return "EBUSY";
	case ENOMEM: return "ENOMEM";
	case EFAULT: return "EFAULT";
	case EPERM: return "EPERM";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	default: return "other";
	}
}

static void add_err(struct worker *w, const char *call, int err)
{
	size_t l = strlen(w->errs);

	if (err == EIO)
		w->saw_eio = true;
	snprintf(w->errs + l, sizeof(w->errs) - l, "%s%s:%s", l ? "," : "",
		 call, err == EIO || err == ENODEV ? ename(err) : vt_errname(err));
	for (; w->errs[l]; l++)
		if (w->errs[l] == ' ')
			w->errs[l] = '_';
}

static void touch(const struct worker *w, const char *what, long val)
{
	char path[512];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%c.%s", w->dir, w->side, what);
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "%ld\n", val);
		fclose(f);
	}
}

/* Read exactly @len bytes from the other worker within @ms; 0 or -1. */
static int pipe_read(int fd, void *p, size_t len, int ms)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	uint64_t end = now_ms() + ms;
	size_t got = 0;
	ssize_t n;

	while (got < len) {
		int left = (int)(end - now_ms());

		if (left <= 0 || poll(&pfd, 1, left) != 1)
			return -1;
		n = read(fd, (char *)p + got, len - got);
		if (n <= 0)
			return -1;
		got += n;
	}
	return 0;
}

static int setup(struct worker *w)
{
	struct ibv_device_attr_ex dattr;
	struct ibv_qp_init_attr ia;
	struct peer_info me;
	int flags;

	vt_dev_open(&w->d, w->dev);
	flags = fcntl(w->d.ctx->async_fd, F_GETFL);
	fcntl(w->d.ctx->async_fd, F_SETFL, flags | O_NONBLOCK);
	w->scq = ibv_create_cq(w->d.ctx, 256, NULL, NULL, 0);
	w->rcq = ibv_create_cq(w->d.ctx, 256, NULL, NULL, 0);
	if (!w->scq || !w->rcq) {
		vt_bad("%c: create_cq: %s", w->side, vt_errname(errno));
		return -1;
	}
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = w->scq;
	ia.recv_cq = w->rcq;
	ia.qp_type = IBV_QPT_RC;
	ia.cap.max_send_wr = DEPTH;
	ia.cap.max_recv_wr = RECVS;
	ia.cap.max_send_sge = 1;
	ia.cap.max_recv_sge = 1;
	w->qp = ibv_create_qp(w->d.pd, &ia);
	if (!w->qp) {
		vt_bad("%c: create_qp: %s", w->side, vt_errname(errno));
		return -1;
	}
	w->buf = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (w->buf == MAP_FAILED) {
		w->buf = NULL;
		return -1;
	}
	memset(w->buf, w->side, BUF_LEN);
	w->mr = ibv_reg_mr(w->d.pd, w->buf, BUF_LEN, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	if (!w->mr) {
		vt_bad("%c: reg_mr: %s", w->side, vt_errname(errno));
		return -1;
	}
	/* device memory, mapped into this process, with an MR on it */
	if (!ibv_query_device_ex(w->d.ctx, NULL, &dattr) && dattr.max_dm_size >= DM_LEN) {
		struct ibv_alloc_dm_attr da = { .length = DM_LEN };

		w->dm = ibv_alloc_dm(w->d.ctx, &da);
		if (!w->dm) {
			vt_bad("%c: alloc_dm: %s", w->side, vt_errname(errno));
			return -1;
		}
		w->dm_mr = ibv_reg_dm_mr(w->d.pd, w->dm, 0, DM_LEN,
					 IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
					 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
		if (!w->dm_mr) {
			vt_bad("%c: reg_dm_mr: %s", w->side, vt_errname(errno));
			return -1;
		}
	}
	me.qpn = w->qp->qp_num;
	me.rkey = w->mr->rkey;
	me.addr = (uintptr_t)w->buf;
	me.gid = w->d.gid;
	if (write(w->wfd, &me, sizeof(me)) != sizeof(me) ||
	    pipe_read(w->rfd, &w->peer, sizeof(w->peer), 30000)) {
		vt_bad("%c: exchanging QP numbers failed", w->side);
		return -1;
	}
	return 0;
}

static int connect_qp(struct worker *w)
{
	const struct vt_rc_path p = {
		.dgid = w->peer.gid,
		.dest_qpn = w->peer.qpn,
		.sgid_index = w->d.gid_idx,
		.mtu = w->d.mtu,
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		.rd_atom = 1,
		.min_rnr_timer = 12,
		.timeout = 14,		/* 67 ms */
		.retry_cnt = 3,
		/*
		 * RNR for ever: while the other process' device goes away
		 * its QP may sit for a moment without receives before it is
		 * destroyed; the send must then fail because the QP is gone
		 * (RETRY_EXC_ERR).
		 */
		.rnr_retry = 7,
	};

	return vt_rc_connect(w->qp, &p);
}

static int post_recv(struct worker *w, unsigned int slot)
{
	struct ibv_sge sg = {
		.addr = (uintptr_t)(w->buf + BUF_LEN - (slot + 1) * SEND_LEN),
		.length = SEND_LEN, .lkey = w->mr->lkey,
	};
	struct ibv_recv_wr wr = { .wr_id = slot, .sg_list = &sg, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(w->qp, &wr, &bad);
}

static int post_one(struct worker *w)
{
	bool write = w->ops % 2 == 0;
	struct ibv_sge sg = {
		.addr = (uintptr_t)w->buf,
		.length = write ? WRITE_LEN : SEND_LEN,
		.lkey = w->mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = w->ops, .sg_list = &sg, .num_sge = 1,
		.opcode = write ? IBV_WR_RDMA_WRITE : IBV_WR_SEND,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	wr.wr.rdma.remote_addr = w->peer.addr + (w->ops / 2 % 8) * WRITE_LEN;
	wr.wr.rdma.rkey = w->peer.rkey;
	return ibv_post_send(w->qp, &wr, &bad);
}

static void check_async(struct worker *w)
{
	struct ibv_async_event ev;
	size_t l;

	while (ibv_get_async_event(w->d.ctx, &ev) == 0) {
		l = strlen(w->async);
		snprintf(w->async + l, sizeof(w->async) - l, "%s%s", l ? "," : "",
			 ev.event_type == IBV_EVENT_DEVICE_FATAL ? "DEVICE_FATAL" :
			 ibv_event_type_str(ev.event_type));
		for (; w->async[l]; l++)
			if (w->async[l] == ' ')
				w->async[l] = '_';
		ibv_ack_async_event(&ev);
		/* GID and port changes are news, not failures */
		switch (ev.event_type) {
		case IBV_EVENT_DEVICE_FATAL:
			w->fatal = true;
			/* fall through */
		case IBV_EVENT_CQ_ERR:
		case IBV_EVENT_QP_FATAL:
		case IBV_EVENT_QP_REQ_ERR:
		case IBV_EVENT_QP_ACCESS_ERR:
			if (!w->stop)
				w->stop = "async";
			break;
		default:
			break;
		}
	}
}

/* Poll both CQs once; 0, or -1 if polling failed. */
static int reap(struct worker *w)
{
	struct ibv_wc wc[DEPTH];
	int n, i, ret;

	n = ibv_poll_cq(w->scq, DEPTH, wc);
	if (n < 0) {
		add_err(w, "poll_cq", errno);
		return -1;
	}
	for (i = 0; i < n; i++) {
		w->outstanding--;
		w->wc_count[wc[i].status <= IBV_WC_GENERAL_ERR ? wc[i].status :
			    IBV_WC_GENERAL_ERR + 1]++;
		if (wc[i].status == IBV_WC_SUCCESS)
			w->ops++;
		else if (!w->stop)
			w->stop = "wc";
	}
	n = ibv_poll_cq(w->rcq, DEPTH, wc);
	if (n < 0) {
		add_err(w, "poll_cq", errno);
		return -1;
	}
	for (i = 0; i < n; i++) {
		w->wc_count[wc[i].status <= IBV_WC_GENERAL_ERR ? wc[i].status :
			    IBV_WC_GENERAL_ERR + 1]++;
		if (wc[i].status != IBV_WC_SUCCESS) {
			if (!w->stop)
				w->stop = "wc";
			continue;
		}
		/*
		 * Keep receives posted while draining too: the other worker
		 * may still be sending until it stops itself.
		 */
		ret = post_recv(w, wc[i].wr_id);
		if (ret && !w->stop) {
			add_err(w, "post_recv", ret);
			w->stop = "post";
		}
	}
	return 0;
}

static void run(struct worker *w, unsigned int secs)
{
	bool ready = false;
	uint64_t end;
	unsigned int i;
	char go = 'g';
	int ret;

	for (i = 0; i < RECVS; i++) {
		ret = post_recv(w, i);
		if (ret) {
			add_err(w, "post_recv", ret);
			w->stop = "post";
			return;
		}
	}
	/* both have their receives posted before anyone sends */
	if (write(w->wfd, &go, 1) != 1 || pipe_read(w->rfd, &go, 1, 30000)) {
		w->stop = "peer";
		return;
	}
	end = now_ms() + secs * 1000ull;
	while (!w->stop) {
		check_async(w);
		/*
		 * Keep touching the device memory mapping: once the device is
		 * gone the core has zapped it (writes land in a dummy page).
		 */
		if (w->dm)
			ibv_memcpy_to_dm(w->dm, (w->ops % (DM_LEN / 64)) * 64,
					 w->buf, 64);
		while (!w->stop && w->outstanding < DEPTH) {
			ret = post_one(w);
			if (ret) {
				add_err(w, "post_send", ret);
				w->stop = "post";
				break;
			}
			w->outstanding++;
		}
		if (reap(w)) {
			if (!w->stop)
				w->stop = "poll";
			break;
		}
		if (!ready && w->ops >= 64) {
			ready = true;
			touch(w, "ready", (long)w->ops);
		}
		if (!w->stop && now_ms() > end)
			w->stop = "time";
	}
}

/* After stopping: collect what is still outstanding for up to @ms. */
static void drain(struct worker *w, unsigned int ms)
{
	uint64_t end = now_ms() + ms;

	while (w->outstanding > 0 && now_ms() < end) {
		check_async(w);
		if (reap(w))
			break;
		usleep(2000);
	}
	/* the receives flush too if the QP is in error: count them */
	reap(w);
	check_async(w);
}

static void finish(struct worker *w)
{
	int qp = -1, scq = -1, rcq = -1, mr = -1, dmmr = -1, dm = -1, pd = -1, cl;
	char wcs[512] = "";
	size_t l = 0;
	char done = 'd';
	unsigned int i;

	if (write(w->wfd, &done, 1) != 1)
		add_err(w, "pipe", errno);
	/* the other worker may still send to us until it stops: wait for it */
	for (i = 0; i < 2; i++) {
		char c;

		if (pipe_read(w->rfd, &c, 1, 20000))
			break;
		if (c == 'd')
			break;
	}
	check_async(w);
	/*
	 * When the device goes away the core fails every command with EIO
	 * first and queues IBV_EVENT_DEVICE_FATAL only when it gets to this
	 * process' objects: give it time before closing the async fd.
	 */
	if (w->saw_eio && !w->fatal) {
		struct pollfd pfd = { .fd = w->d.ctx->async_fd, .events = POLLIN };
		uint64_t end = now_ms() + 10000;

		while (!w->fatal && now_ms() < end) {
			poll(&pfd, 1, 100);
			check_async(w);
		}
	}
	if (w->qp)
		qp = ibv_destroy_qp(w->qp);
	if (w->mr)
		mr = ibv_dereg_mr(w->mr);
	if (w->dm_mr)
		dmmr = ibv_dereg_mr(w->dm_mr);
	if (w->dm)
		dm = ibv_free_dm(w->dm);
	if (w->scq)
		scq = ibv_destroy_cq(w->scq);
	if (w->rcq)
		rcq = ibv_destroy_cq(w->rcq);
	if (w->d.pd)
		pd = ibv_dealloc_pd(w->d.pd);
	cl = ibv_close_device(w->d.ctx);

	for (i = 0; i < sizeof(w->wc_count) / sizeof(w->wc_count[0]); i++) {
		if (!w->wc_count[i])
			continue;
		l += snprintf(wcs + l, sizeof(wcs) - l, "%s%s:%lu", l ? "," : "",
			      i <= IBV_WC_GENERAL_ERR ? ibv_wc_status_str(i) : "other",
			      w->wc_count[i]);
	}
	/* status strings have spaces: make them one word */
	for (i = 0; wcs[i]; i++)
		if (wcs[i] == ' ')
			wcs[i] = '_';
	printf("traffic %c %s: ops %lu stop %s async %s wc %s errs %s destroy qp=%s cq=%s,%s mr=%s dm=%s,%s pd=%s close=%d\n",
	       w->side, w->dev, w->ops, w->stop ? w->stop : "?",
	       w->async[0] ? w->async : "-", wcs[0] ? wcs : "-",
	       w->errs[0] ? w->errs : "-", ename(qp), ename(scq),
	       ename(rcq), ename(mr), ename(dmmr), ename(dm), ename(pd), cl);
	fflush(stdout);
}

static int worker(struct worker *w, unsigned int secs)
{
	int ret;

	touch(w, "pid", (long)getpid());
	if (setup(w))
		return 2;
	ret = connect_qp(w);
	if (ret) {
		vt_bad("%c: connecting QP 0x%x on %s to 0x%x: %s", w->side,
		       w->qp->qp_num, w->dev, w->peer.qpn, vt_errname(ret));
		return 2;
	}
	run(w, secs);
	drain(w, 3000);
	finish(w);
	return 0;
}

int main(int argc, char **argv)
{
	struct worker a = { .side = 'A' }, b = { .side = 'B' };
	int ab[2], ba[2], status, ra, rb;
	unsigned int secs;
	pid_t pid;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 5 || !(secs = strtoul(argv[3], NULL, 0))) {
		fprintf(stderr, "usage: %s DEV_A DEV_B SECS STATE_DIR\n", argv[0]);
		return 2;
	}
	signal(SIGPIPE, SIG_IGN);
	if (pipe(ab) || pipe(ba)) {
		perror("pipe");
		return 2;
	}
	a.dev = argv[1];
	b.dev = argv[2];
	a.dir = b.dir = argv[4];
	a.rfd = ba[0];
	a.wfd = ab[1];
	b.rfd = ab[0];
	b.wfd = ba[1];
	pid = fork();
	if (pid < 0) {
		perror("fork");
		return 2;
	}
	if (pid == 0) {
		close(ab[1]);
		close(ba[0]);
		_exit(worker(&b, secs));
	}
	close(ab[0]);
	close(ba[1]);
	ra = worker(&a, secs);
	/* B ends by itself; if it does not within 60 s, it is stuck */
	for (secs = 0; secs < 600; secs++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			break;
		usleep(100 * 1000);
	}
	if (secs == 600) {
		vt_bad("worker B (pid %d) did not end within 60 s after A", (int)pid);
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
		return 1;
	}
	rb = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (rb)
		vt_info("worker B exited with status %d", rb);
	return ra > rb ? ra : rb;
}
