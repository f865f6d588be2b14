// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr_review DEV: memory-registration behaviour userspace sees, from
 * the review of issue 9, through libibverbs on one device (RC loopback):
 *
 *  - ibv_reg_dm_mr of length 0 is accepted anywhere within the DM, up to
 *    its end (as on mlx5), refused past it; a zero-length RDMA WRITE
 *    through it completes;
 *  - a dma-buf MR over udmabuf is the exporter's memory: an RDMA WRITE
 *    into it lands in the memfd behind the dma-buf, an RDMA READ from it
 *    returns what the process wrote into the memfd.
 *
 * Prints "ok"/"not ok" lines; exits non-zero if any check failed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/udmabuf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "vmtest.h"

static size_t page;

struct loop {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp[2];
};

static int loop_open(struct loop *l, const char *name)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct vt_rc_path p = {
		.access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			  IBV_ACCESS_REMOTE_READ,
		.psn = 0x1234, .rd_atom = 1, .min_rnr_timer = 12,
		.timeout = 14, .retry_cnt = 7, .rnr_retry = 7,
	};
	int i, gid_idx;

	l->ctx = vt_open(name);
	l->pd = vt_alloc_pd(l->ctx);
	l->cq = ibv_create_cq(l->ctx, 64, NULL, NULL, 0);
	if (!vt_check(l->cq != NULL, "create_cq: %s",
		      l->cq ? "ok" : vt_errname(errno)))
		return -1;
	ia.send_cq = l->cq;
	ia.recv_cq = l->cq;
	for (i = 0; i < 2; i++) {
		l->qp[i] = ibv_create_qp(l->pd, &ia);
		if (!vt_check(l->qp[i] != NULL, "create_qp %d: %s", i,
			      l->qp[i] ? "ok" : vt_errname(errno)))
			return -1;
	}
	gid_idx = vt_pick_gid(l->ctx, &p.dgid, &p.mtu);
	if (!vt_check(gid_idx >= 0, "a GID of %s", name))
		return -1;
	p.sgid_index = gid_idx;
	for (i = 0; i < 2; i++) {
		int ret;

		p.dest_qpn = l->qp[!i]->qp_num;
		ret = vt_rc_connect(l->qp[i], &p);
		if (!vt_check(ret == 0, "connect QP %d to QP %d in loopback: %s",
			      l->qp[i]->qp_num, p.dest_qpn, vt_errname(ret)))
			return -1;
	}
	return 0;
}

static void loop_close(struct loop *l)
{
	int i;

	for (i = 0; i < 2; i++)
		if (l->qp[i])
			ibv_destroy_qp(l->qp[i]);
	if (l->cq)
		ibv_destroy_cq(l->cq);
	ibv_dealloc_pd(l->pd);
	ibv_close_device(l->ctx);
}

/* Post one RDMA op on QP 0 and wait (bounded) for its completion. */
static int loop_rdma(struct loop *l, enum ibv_wr_opcode op, struct ibv_mr *mr,
		     void *addr, uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = {
		.addr = (uintptr_t)addr, .length = len, .lkey = mr->lkey,
	};
	struct ibv_send_wr wr = {
		.wr_id = 7, .sg_list = &sge, .num_sge = len ? 1 : 0,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.wr.rdma = { .remote_addr = raddr, .rkey = rkey },
	}, *bad;
	struct ibv_wc wc;
	int ret, tries;

	ret = ibv_post_send(l->qp[0], &wr, &bad);
	if (ret)
		return -ret;
	for (tries = 0; tries < 5000; tries++) {
		ret = ibv_poll_cq(l->cq, 1, &wc);
		if (ret < 0)
			return -EIO;
		if (ret == 1)
			return wc.status;
		usleep(1000);
	}
	return -ETIMEDOUT;
}

static const char *wc_str(int st)
{
	return st < 0 ? vt_errname(-st) : ibv_wc_status_str(st);
}

static void test_dm_zero_length(struct loop *l)
{
	const unsigned int zb = IBV_ACCESS_ZERO_BASED;
	const unsigned int rw = IBV_ACCESS_LOCAL_WRITE |
				IBV_ACCESS_REMOTE_WRITE |
				IBV_ACCESS_REMOTE_READ;
	struct ibv_alloc_dm_attr attr = { .length = 4096 };
	struct ibv_mr *mr0, *mr1, *mr2, *lmr;
	struct ibv_dm *dm;
	char buf[16] = { 0 };
	int st;

	vt_info("---- ibv_reg_dm_mr of length 0 ----");
	dm = ibv_alloc_dm(l->ctx, &attr);
	if (!vt_check(dm != NULL, "alloc_dm 4096: %s",
		      dm ? "ok" : vt_errname(errno)))
		return;
	mr0 = ibv_reg_dm_mr(l->pd, dm, 0, 0, zb | rw);
	vt_check(mr0 != NULL, "reg_dm_mr offset 0 length 0: %s (mlx5 accepts it)",
		 mr0 ? "ok" : vt_errname(errno));
	if (mr0)
		vt_check(mr0->length == 0, "its length is 0 (%zu)",
			 mr0->length);
	mr1 = ibv_reg_dm_mr(l->pd, dm, 1000, 0, zb | IBV_ACCESS_REMOTE_READ);
	vt_check(mr1 != NULL, "reg_dm_mr offset 1000 length 0: %s",
		 mr1 ? "ok" : vt_errname(errno));
	mr2 = ibv_reg_dm_mr(l->pd, dm, 4096, 0, zb);
	vt_check(mr2 != NULL, "reg_dm_mr at the very end (offset 4096) length 0: %s",
		 mr2 ? "ok" : vt_errname(errno));
	errno = 0;
	vt_check(!ibv_reg_dm_mr(l->pd, dm, 4097, 0, zb) && errno == EINVAL,
		 "reg_dm_mr offset 4097 length 0: %s (expected EINVAL)",
		 vt_errname(errno));

	lmr = ibv_reg_mr(l->pd, buf, sizeof(buf), IBV_ACCESS_LOCAL_WRITE);
	if (mr0 && lmr) {
		st = loop_rdma(l, IBV_WR_RDMA_WRITE, lmr, buf, 0, 0, mr0->rkey);
		vt_check(st == IBV_WC_SUCCESS,
			 "zero-length RDMA WRITE through it: %s", wc_str(st));
	}
	if (lmr)
		ibv_dereg_mr(lmr);
	if (mr0)
		vt_check(ibv_dereg_mr(mr0) == 0, "dereg_mr offset 0");
	if (mr1)
		vt_check(ibv_dereg_mr(mr1) == 0, "dereg_mr offset 1000");
	if (mr2)
		vt_check(ibv_dereg_mr(mr2) == 0, "dereg_mr offset 4096");
	vt_check(ibv_free_dm(dm) == 0, "free_dm after its MRs are gone");
}

static void test_dmabuf_data(struct loop *l)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	const uint64_t iova = 0x100000;
	const size_t len = 2 * page - 200;
	struct ibv_mr *dmr = NULL, *lmr = NULL;
	unsigned char *mem, *buf;
	size_t i, bad;
	int fd, st;

	vt_info("---- dma-buf MR data path (udmabuf) ----");
	fd = vt_make_dmabuf(4 * page, &mem);
	if (fd < 0) {
		vt_info("no udmabuf (%s): dma-buf data path not tested",
			strerror(errno));
		if (mem != MAP_FAILED)
			munmap(mem, 4 * page);
		return;
	}
	buf = calloc(1, 2 * page);
	if (!vt_check(buf != NULL, "buffer"))
		goto out;
	memset(mem, 0x11, 4 * page);
	/* pages 1..2 of the dma-buf at iova 0x100000 */
	dmr = ibv_reg_dmabuf_mr(l->pd, page, 2 * page, iova, fd, rw);
	if (!vt_check(dmr != NULL, "reg_dmabuf_mr pages 1..2: %s",
		      dmr ? "ok" : vt_errname(errno)))
		goto out;
	lmr = ibv_reg_mr(l->pd, buf, 2 * page, rw);
	if (!vt_check(lmr != NULL, "reg_mr of the local buffer: %s",
		      lmr ? "ok" : vt_errname(errno)))
		goto out;

	for (i = 0; i < len; i++)
		buf[i] = (unsigned char)(i * 7 + 3);
	st = loop_rdma(l, IBV_WR_RDMA_WRITE, lmr, buf, len, iova + 100,
		       dmr->rkey);
	if (vt_check(st == IBV_WC_SUCCESS, "RDMA WRITE %zu bytes into the dma-buf MR: %s",
		     len, wc_str(st))) {
		for (bad = 0, i = 0; i < len; i++)
			bad += mem[page + 100 + i] != (unsigned char)(i * 7 + 3);
		vt_check(bad == 0, "the bytes are in the memfd behind the dma-buf (%zu differ)",
			 bad);
		vt_check(vt_all_bytes(mem, page + 100, 0x11) &&
			 vt_all_bytes(mem + page + 100 + len,
				      4 * page - (page + 100 + len), 0x11),
			 "nothing outside [iova + 100, + %zu) changed", len);
	}

	for (i = 0; i < 2 * page; i++)
		mem[page + i] = (unsigned char)(i * 13 + 5);
	memset(buf, 0, 2 * page);
	st = loop_rdma(l, IBV_WR_RDMA_READ, lmr, buf, 2 * page, iova,
		       dmr->rkey);
	if (vt_check(st == IBV_WC_SUCCESS, "RDMA READ of the whole dma-buf MR: %s",
		     wc_str(st))) {
		for (bad = 0, i = 0; i < 2 * page; i++)
			bad += buf[i] != (unsigned char)(i * 13 + 5);
		vt_check(bad == 0, "it returns what the process wrote into the memfd (%zu differ)",
			 bad);
	}
out:
	if (lmr)
		ibv_dereg_mr(lmr);
	if (dmr)
		vt_check(ibv_dereg_mr(dmr) == 0, "dereg_mr of the dma-buf MR");
	free(buf);
	close(fd);
	munmap(mem, 4 * page);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	struct loop l = { 0 };

	page = sysconf(_SC_PAGESIZE);
	if (!loop_open(&l, name)) {
		test_dm_zero_length(&l);
		test_dmabuf_data(&l);
	}
	loop_close(&l);
	return vt_exit();
}
