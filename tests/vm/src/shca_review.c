// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * What a process sees of the review findings of issue 9, against
 * Debian's libibverbs:
 *
 *   shca_review ring DEV      completions come from a ring the process maps
 *                             and carry QP numbers; a destroyed QP's
 *                             completions are gone and never name a QP
 *                             created after it; the kernel's POLL_CQ
 *                             command is not offered; a process that
 *                             scribbles over its ring's consumer index
 *                             loses only its own completions
 *   shca_review restate DEV   rdma-core's tests/test_mr.py::test_mr_rereg_addr
 *                             flow: REM_OP_ERR after rereg, RESET -> RTS
 *                             of both QPs, then traffic works and no old
 *                             completion shows up
 *   shca_review memcg DEV     a QP and a CQ at the device limits are
 *                             charged to the caller's memory cgroup
 *                             (memory.current grows by their size)
 *   shca_review ud DEV        a UD datagram to the device's own IPv4-mapped
 *                             and IPv6 GIDs: the 40-byte GRH area holds the
 *                             IPv4 header (after 20 zero bytes, with a valid
 *                             checksum) or the IPv6 header a RoCE v2 HCA
 *                             writes, the data follows
 *   shca_review alloc DEV     create that QP and CQ and report the result
 *                             only (run inside a cgroup with a small
 *                             memory.max: ENOMEM)
 *
 * Exit status 0 when every check passed.
 */
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "vmtest.h"

#define BUF	4096

static struct vt_dev dev;

struct end {
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	char *buf;
};

static struct ibv_qp *make_qp(struct ibv_cq *cq)
{
	struct ibv_qp_init_attr init = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};

	return ibv_create_qp(dev.pd, &init);
}

static int end_init(struct end *e)
{
	memset(e, 0, sizeof(*e));
	e->cq = ibv_create_cq(dev.ctx, 64, NULL, NULL, 0);
	if (!e->cq)
		return errno;
	e->qp = make_qp(e->cq);
	if (!e->qp)
		return errno;
	e->buf = aligned_alloc(4096, BUF);
	if (!e->buf)
		return ENOMEM;
	memset(e->buf, 0, BUF);
	e->mr = ibv_reg_mr(dev.pd, e->buf, BUF, IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return e->mr ? 0 : errno;
}

static void end_fini(struct end *e)
{
	if (e->qp)
		ibv_destroy_qp(e->qp);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	free(e->buf);
}

static int connect_to(struct ibv_qp *qp, uint32_t dest_qpn)
{
	struct vt_rc_path p = {
		.dgid = dev.gid,
		.dest_qpn = dest_qpn,
		.sgid_index = dev.gid_idx,
		.mtu = dev.mtu,
		.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		.psn = 0x123,
		.rd_atom = 1,
		.min_rnr_timer = 1,
		.timeout = 10,
		.retry_cnt = 2,
		.rnr_retry = 7,
	};

	return vt_rc_connect(qp, &p);
}

static int reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int to_err(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int post_recv(struct end *e, uint64_t id, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = 64,
			       .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(e->qp, &wr, &bad);
}

static int post_send(struct end *e, uint64_t id)
{
	struct ibv_sge sge = { .addr = (uintptr_t)e->buf, .length = 32,
			       .lkey = e->mr->lkey };
	struct ibv_send_wr wr = { .wr_id = id, .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED,
				  .sg_list = &sge, .num_sge = 1 };
	struct ibv_send_wr *bad;

	return ibv_post_send(e->qp, &wr, &bad);
}

/* Poll up to @ms for one completion; 1, 0 or -1. */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	int i, n;

	for (i = 0; i <= ms; i++) {
		n = ibv_poll_cq(cq, 1, wc);
		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

static void expect_wc(struct ibv_cq *cq, uint64_t id, enum ibv_wc_status st,
		      uint32_t qpn, const char *what)
{
	struct ibv_wc wc;
	int n = poll1(cq, &wc, 3000);

	if (n != 1) {
		vt_bad("%s: no completion (%d)", what, n);
		return;
	}
	vt_check(wc.wr_id == id && wc.status == st && wc.qp_num == qpn,
		 "%s: wr_id %llu, %s, QP %u (expected %llu, %s, QP %u)", what,
		 (unsigned long long)wc.wr_id, ibv_wc_status_str(wc.status),
		 wc.qp_num, (unsigned long long)id, ibv_wc_status_str(st), qpn);
}

/*
 * The mapping of the first CQ's ring (no DM is mapped here): of the
 * uverbs file's mappings, the one at the lowest offset, since the CQ was
 * made before its QP's send and receive rings (struct softhca_cq_ring:
 * producer at 0, consumer at 64).
 */
struct ring_view {
	volatile uint32_t *producer;
	volatile uint32_t *consumer;
};

static struct ring_view find_ring(void)
{
	struct ring_view v = { NULL, NULL };
	unsigned long start, end, off, best = ~0UL;
	char line[512], path[256];
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return v;
	while (fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &start, &end,
			   &off, path) < 4)
			continue;
		if (!strstr(path, "uverbs") || off >= best)
			continue;
		best = off;
		v.producer = (volatile uint32_t *)start;
		v.consumer = (volatile uint32_t *)(start + 64);
	}
	fclose(f);
	return v;
}

static void test_ring(void)
{
	struct end a, b;
	struct ibv_wc wc;
	struct ibv_qp *gone, *later;
	struct ring_view v;
	struct {
		struct ib_uverbs_poll_cq_resp resp;
		struct ib_uverbs_wc wc[4];
	} out;
	struct ib_uverbs_poll_cq cmd;
	uint32_t gone_qpn, saved;
	struct ibv_async_event ev;
	int i, n, err, seen;

	vt_info("---- completions from the mapped ring ----");
	if (!vt_check(!end_init(&a), "a: QP, CQ, MR"))
		return;
	v = find_ring();
	vt_check(v.producer != NULL, "a's CQ ring is mapped from the uverbs file");
	if (!vt_check(!end_init(&b), "b: QP, CQ, MR"))
		return;
	vt_check(!connect_to(a.qp, b.qp->qp_num) && !connect_to(b.qp, a.qp->qp_num),
		 "connect a <-> b");
	strcpy(a.buf, "through the ring");
	vt_check(!post_recv(&b, 7, b.mr->lkey) && !post_send(&a, 8), "post");
	expect_wc(a.cq, 8, IBV_WC_SUCCESS, a.qp->qp_num, "send completion names a's QP");
	expect_wc(b.cq, 7, IBV_WC_SUCCESS, b.qp->qp_num, "receive completion names b's QP");
	vt_check(!strcmp(b.buf, "through the ring"), "the bytes arrived");

	memset(&cmd, 0, sizeof(cmd));
	cmd.cq_handle = a.cq->handle;
	cmd.ne = 4;
	cmd.response = (uintptr_t)&out;
	err = vt_raw_cmd(dev.ctx->cmd_fd, IB_USER_VERBS_CMD_POLL_CQ, &cmd,
			 sizeof(cmd), sizeof(out) / 4);
	vt_check(err == EOPNOTSUPP, "raw POLL_CQ command: %s (expected EOPNOTSUPP)",
		 vt_errname(err));

	vt_info("---- a destroyed QP's completions are gone ----");
	gone = make_qp(a.cq);
	if (!vt_check(gone != NULL, "a third QP on a's CQ"))
		goto out;
	gone_qpn = gone->qp_num;
	vt_check(!connect_to(gone, b.qp->qp_num), "connect it");
	for (i = 0; i < 4; i++)
		post_recv(&(struct end){ .qp = gone, .buf = a.buf }, 100 + i,
			  a.mr->lkey);
	vt_check(!to_err(gone), "move it to ERR (4 receives to flush)");
	usleep(50000);
	vt_check(!ibv_destroy_qp(gone), "destroy it without polling");
	later = make_qp(a.cq);
	vt_check(later != NULL, "create a QP after it (QP %u, destroyed %u)",
		 later ? later->qp_num : 0, gone_qpn);
	n = ibv_poll_cq(a.cq, 1, &wc);
	vt_check(n == 0, "a's CQ holds nothing of the destroyed QP (%d, QP %u)",
		 n, n ? wc.qp_num : 0);
	if (later)
		ibv_destroy_qp(later);

	vt_info("---- a scribbled consumer index loses only this process' completions ----");
	if (!v.producer)
		goto out;
	saved = *v.consumer;
	*v.consumer = *v.producer + 5;	/* "ahead" of the kernel: full */
	post_recv(&b, 9, b.mr->lkey);
	post_send(&a, 10);
	usleep(100000);
	seen = 0;
	while (!seen && poll1(a.cq, &wc, 0) == 0) {
		struct pollfd pfd = { .fd = dev.ctx->async_fd, .events = POLLIN };

		if (poll(&pfd, 1, 2000) != 1)
			break;
		if (ibv_get_async_event(dev.ctx, &ev))
			break;
		seen = ev.event_type == IBV_EVENT_CQ_ERR &&
		       ev.element.cq == a.cq;
		ibv_ack_async_event(&ev);
	}
	vt_check(seen, "the kernel reports the overrun (IBV_EVENT_CQ_ERR) and drops the completion");
	expect_wc(b.cq, 9, IBV_WC_SUCCESS, b.qp->qp_num, "the peer's completion is unaffected");
	*v.consumer = saved;
	post_recv(&b, 11, b.mr->lkey);
	post_send(&a, 12);
	expect_wc(a.cq, 12, IBV_WC_SUCCESS, a.qp->qp_num,
		  "with the index restored completions flow again");
	expect_wc(b.cq, 11, IBV_WC_SUCCESS, b.qp->qp_num, "and at the peer");
out:
	end_fini(&a);
	end_fini(&b);
}

static void test_restate(void)
{
	struct end s, c;
	struct ibv_mr *mr2;
	char *other = aligned_alloc(4096, BUF);
	struct ibv_wc wc;
	int n;

	vt_info("---- test_mr_rereg_addr: error, restate, traffic ----");
	if (!vt_check(other && !end_init(&s) && !end_init(&c), "server and client"))
		return;
	vt_check(!connect_to(s.qp, c.qp->qp_num) && !connect_to(c.qp, s.qp->qp_num),
		 "connect");
	vt_check(!post_recv(&s, 1, s.mr->lkey) && !post_recv(&s, 2, s.mr->lkey),
		 "server posts two receives");
	mr2 = s.mr;
	vt_check(!ibv_rereg_mr(s.mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
			       other, BUF, 0),
		 "server re-registers its MR elsewhere (new lkey %#x)", mr2->lkey);
	vt_check(!post_send(&c, 3), "client sends");
	expect_wc(c.cq, 3, IBV_WC_REM_OP_ERR, c.qp->qp_num, "client: remote operation error");
	usleep(50000);

	vt_check(!reset(s.qp) && !connect_to(s.qp, c.qp->qp_num), "restate the server");
	vt_check(!reset(c.qp) && !connect_to(c.qp, s.qp->qp_num), "restate the client");
	n = ibv_poll_cq(s.cq, 1, &wc);
	vt_check(n == 0, "no old completion at the server (%d: wr_id %llu, %s)", n,
		 n ? (unsigned long long)wc.wr_id : 0ULL,
		 n ? ibv_wc_status_str(wc.status) : "-");
	n = ibv_poll_cq(c.cq, 1, &wc);
	vt_check(n == 0, "no old completion at the client (%d)", n);

	s.buf = other;
	strcpy(c.buf, "after the restate");
	vt_check(!post_recv(&s, 4, s.mr->lkey) && !post_send(&c, 5), "traffic again");
	expect_wc(c.cq, 5, IBV_WC_SUCCESS, c.qp->qp_num, "client send succeeds");
	expect_wc(s.cq, 4, IBV_WC_SUCCESS, s.qp->qp_num, "server receive succeeds");
	vt_check(!strcmp(other, "after the restate"), "the bytes arrived");
	s.buf = NULL;
	end_fini(&s);
	end_fini(&c);
	free(other);
}

/* memory.current of this process' cgroup (v2), or -1. */
static long long memcg_current(void)
{
	char line[512], path[600];
	long long v = -1;
	FILE *f = fopen("/proc/self/cgroup", "r");

	if (!f)
		return -1;
	if (fgets(line, sizeof(line), f) && !strncmp(line, "0::", 3)) {
		line[strcspn(line, "\n")] = 0;
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current",
			 line + 3);
		fclose(f);
		f = fopen(path, "r");
		if (f && fscanf(f, "%lld", &v) != 1)
			v = -1;
	}
	if (f)
		fclose(f);
	return v;
}

/* A QP and a CQ at the device limits; 0 or the errno. */
static int alloc_big(struct ibv_cq **cq, struct ibv_qp **qp)
{
	const struct ibv_device_attr *da = &dev.attr;
	struct ibv_qp_init_attr init = { .qp_type = IBV_QPT_RC };

	*cq = ibv_create_cq(dev.ctx, da->max_cqe, NULL, NULL, 0);
	if (!*cq)
		return errno;
	init.send_cq = *cq;
	init.recv_cq = *cq;
	init.cap.max_send_wr = da->max_qp_wr;
	init.cap.max_recv_wr = da->max_qp_wr;
	init.cap.max_send_sge = da->max_sge;
	init.cap.max_recv_sge = da->max_sge;
	*qp = ibv_create_qp(dev.pd, &init);
	return *qp ? 0 : errno;
}

static void test_memcg(void)
{
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	long long before, after;
	int err;

	vt_info("---- kernel memory of QPs and CQs is charged to the caller ----");
	before = memcg_current();
	if (!vt_check(before >= 0, "memory.current of this cgroup: %lld", before))
		return;
	err = alloc_big(&cq, &qp);
	after = memcg_current();
	vt_check(!err, "a CQ and a QP at the device limits: %s", vt_errname(err));
	vt_check(after - before >= 16 << 20,
		 "memory.current grew by %lld KiB (at least 16 MiB expected)",
		 (after - before) >> 10);
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

/* Index of a RoCE v2 GID of port 1 that is IPv4-mapped (@v4) or not. */
static int gid_of_kind(int v4, union ibv_gid *gid)
{
	static const uint8_t mapped[12] = { [10] = 0xff, [11] = 0xff };
	struct ibv_gid_entry ent;
	int i;

	for (i = 0; i < 256; i++) {
		if (ibv_query_gid_ex(dev.ctx, 1, i, &ent, 0))
			continue;
		if (ent.gid_type != IBV_GID_TYPE_ROCE_V2 ||
		    vt_all_bytes(ent.gid.raw, 16, 0) ||
		    (memcmp(ent.gid.raw, mapped, 12) == 0) != v4)
			continue;
		*gid = ent.gid;
		return i;
	}
	return -1;
}

static uint16_t ip_csum(const uint8_t *p, int len)
{
	uint32_t sum = 0;
	int i;

	for (i = 0; i < len; i += 2)
		sum += p[i] << 8 | p[i + 1];
	while (sum >> 16)
		sum = (sum & 0xffff) + (sum >> 16);
	return sum;
}

/* One datagram of 64 bytes from a UD QP to another, to GID @idx. */
static void ud_one(int v4)
{
	const uint32_t qkey = 0x11223344, len = 64;
	struct ibv_qp_init_attr init = {
		.cap = { .max_send_wr = 2, .max_recv_wr = 2,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_UD, .sq_sig_all = 1,
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = qkey };
	struct ibv_ah_attr aa = { .is_global = 1, .port_num = 1 };
	struct ibv_qp *qp[2] = { NULL, NULL };
	struct ibv_ah *ah = NULL;
	struct ibv_cq *cq;
	struct ibv_mr *mr;
	struct ibv_wc wc;
	union ibv_gid gid;
	uint8_t *buf = aligned_alloc(4096, BUF);
	const uint8_t *g;
	int i, idx = gid_of_kind(v4, &gid);

	vt_info("---- UD datagram, %s GID ----", v4 ? "IPv4-mapped" : "IPv6");
	if (!vt_check(idx >= 0 && buf, "a RoCE v2 %s GID: index %d",
		      v4 ? "IPv4-mapped" : "IPv6", idx))
		goto out_buf;
	memset(buf, 0, BUF);
	cq = ibv_create_cq(dev.ctx, 8, NULL, NULL, 0);
	mr = ibv_reg_mr(dev.pd, buf, BUF, IBV_ACCESS_LOCAL_WRITE);
	if (!vt_check(cq && mr, "CQ and MR"))
		goto out;
	init.send_cq = cq;
	init.recv_cq = cq;
	for (i = 0; i < 2; i++) {
		qp[i] = ibv_create_qp(dev.pd, &init);
		a.qp_state = IBV_QPS_INIT;
		if (!vt_check(qp[i] && !ibv_modify_qp(qp[i], &a, IBV_QP_STATE |
				IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY),
			      "UD QP %d to INIT", i))
			goto out;
		a.qp_state = IBV_QPS_RTR;
		ibv_modify_qp(qp[i], &a, IBV_QP_STATE);
		a.qp_state = IBV_QPS_RTS;
		vt_check(!ibv_modify_qp(qp[i], &a, IBV_QP_STATE | IBV_QP_SQ_PSN),
			 "UD QP %d to RTS", i);
	}
	aa.grh.dgid = gid;
	aa.grh.sgid_index = idx;
	/* The core replaces a user AH's hop limit by the route's. */
	aa.grh.hop_limit = 9;
	aa.grh.traffic_class = 0x20;
	ah = ibv_create_ah(dev.pd, &aa);
	if (!vt_check(ah != NULL, "create_ah to our own GID: %s",
		      ah ? "ok" : vt_errname(errno)))
		goto out;
	{
		struct ibv_sge rs = { (uintptr_t)buf, 1024, mr->lkey };
		struct ibv_sge ss = { (uintptr_t)buf + 2048, len, mr->lkey };
		struct ibv_recv_wr rw = { .wr_id = 1, .sg_list = &rs,
					  .num_sge = 1 }, *rbad;
		struct ibv_send_wr sw = { .wr_id = 2, .opcode = IBV_WR_SEND,
					  .sg_list = &ss, .num_sge = 1 }, *sbad;

		for (i = 0; i < (int)len; i++)
			buf[2048 + i] = (uint8_t)(i * 5 + 1);
		sw.wr.ud.ah = ah;
		sw.wr.ud.remote_qpn = qp[1]->qp_num;
		sw.wr.ud.remote_qkey = qkey;
		vt_check(!ibv_post_recv(qp[1], &rw, &rbad) &&
			 !ibv_post_send(qp[0], &sw, &sbad), "post");
	}
	for (i = 0; i < 2; i++) {
		if (!vt_check(poll1(cq, &wc, 3000) == 1 &&
			      wc.status == IBV_WC_SUCCESS,
			      "completion %d: %s", i,
			      ibv_wc_status_str(wc.status)))
			goto out;
		if (wc.wr_id != 1)
			continue;
		vt_check(wc.byte_len == 40 + len && (wc.wc_flags & IBV_WC_GRH) &&
			 wc.src_qp == qp[0]->qp_num && wc.qp_num == qp[1]->qp_num,
			 "receive: %u bytes, GRH flag %d, src_qp %u, qp %u",
			 wc.byte_len, !!(wc.wc_flags & IBV_WC_GRH), wc.src_qp,
			 wc.qp_num);
	}
	if (v4) {
		g = buf + 20;
		vt_check(vt_all_bytes(buf, 20, 0), "bytes 0..19 are zero");
		vt_check(g[0] == 0x45 && g[1] == 0x20 &&
			 (g[2] << 8 | g[3]) == 20 + 8 + 12 + 8 + len + 4 &&
			 g[8] && g[9] == 17,
			 "IPv4 header: %#x, TOS %#x, total length %u, TTL %u, protocol %u",
			 g[0], g[1], g[2] << 8 | g[3], g[8], g[9]);
		vt_check(ip_csum(g, 20) == 0xffff, "IPv4 header checksum valid");
		vt_check(!memcmp(g + 12, gid.raw + 12, 4) &&
			 !memcmp(g + 16, gid.raw + 12, 4),
			 "source and destination addresses are the GID's");
	} else {
		g = buf;
		vt_check((g[0] >> 4) == 6 && ((g[0] & 0xf) << 4 | g[1] >> 4) == 0x20 &&
			 (g[4] << 8 | g[5]) == 8 + 12 + 8 + len + 4 &&
			 g[6] == 17 && g[7],
			 "IPv6 header: version %u, traffic class %#x, payload length %u, next header %u, hop limit %u",
			 g[0] >> 4, (g[0] & 0xf) << 4 | g[1] >> 4,
			 g[4] << 8 | g[5], g[6], g[7]);
		vt_check(!memcmp(g + 8, gid.raw, 16) && !memcmp(g + 24, gid.raw, 16),
			 "source and destination addresses are the GID");
	}
	vt_check(!memcmp(buf + 40, buf + 2048, len), "the data follows the GRH area");
out:
	if (ah)
		ibv_destroy_ah(ah);
	for (i = 0; i < 2; i++)
		if (qp[i])
			ibv_destroy_qp(qp[i]);
	if (mr)
		ibv_dereg_mr(mr);
	if (cq)
		ibv_destroy_cq(cq);
out_buf:
	free(buf);
}

static void test_ud(void)
{
	ud_one(1);
	ud_one(0);
}

static void test_alloc(void)
{
	struct ibv_cq *cq = NULL;
	struct ibv_qp *qp = NULL;
	int err = alloc_big(&cq, &qp);

	printf("alloc: %s\n", vt_errname(err));
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: %s ring|restate|ud|memcg|alloc DEV\n", argv[0]);
		return 2;
	}
	vt_dev_open(&dev, argv[2]);
	if (!strcmp(argv[1], "ring"))
		test_ring();
	else if (!strcmp(argv[1], "restate"))
		test_restate();
	else if (!strcmp(argv[1], "memcg"))
		test_memcg();
	else if (!strcmp(argv[1], "ud"))
		test_ud();
	else if (!strcmp(argv[1], "alloc")) {
		test_alloc();
		return 0;
	} else {
		fprintf(stderr, "unknown test %s\n", argv[1]);
		return 2;
	}
	ibv_dealloc_pd(dev.pd);
	ibv_close_device(dev.ctx);
	return vt_exit();
}
