// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_open DEV: open an RDMA device through libibverbs and its provider;
 * query the device and port 1; PDs; a CQ; an SRQ (create, limit, query,
 * post, refusals); operations the provider leaves unset (resize_cq,
 * memory windows) answer EOPNOTSUPP.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "vmtest.h"

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	struct ibv_device_attr_ex attr;
	struct ibv_port_attr port;
	struct ibv_context *ctx;
	struct ibv_pd *pd1, *pd2;
	struct ibv_cq *cq;
	union ibv_gid gid;
	int err;

	ctx = vt_open(name);
	vt_ok("ibv_open_device(%s)", name);

	memset(&attr, 0, sizeof(attr));
	err = ibv_query_device_ex(ctx, NULL, &attr);
	if (vt_check(!err, "ibv_query_device_ex: %s", vt_errname(err))) {
		vt_info("fw_ver '%s' max_mr %d max_mr_size 0x%llx page_size_cap 0x%llx max_pd %d max_qp %d max_dm_size %llu",
			attr.orig_attr.fw_ver, attr.orig_attr.max_mr,
			(unsigned long long)attr.orig_attr.max_mr_size,
			(unsigned long long)attr.orig_attr.page_size_cap,
			attr.orig_attr.max_pd, attr.orig_attr.max_qp,
			(unsigned long long)attr.max_dm_size);
		vt_check(attr.orig_attr.phys_port_cnt == 1,
			 "phys_port_cnt is 1 (saw %u)", attr.orig_attr.phys_port_cnt);
		vt_check(attr.orig_attr.max_mr > 0 && attr.orig_attr.max_pd > 0,
			 "max_mr and max_pd are positive");
		vt_check(attr.orig_attr.fw_ver[0] != '\0', "fw_ver is set: '%s'",
			 attr.orig_attr.fw_ver);
		vt_check(attr.max_dm_size > 0, "max_dm_size is reported: %llu",
			 (unsigned long long)attr.max_dm_size);
	}

	err = ibv_query_port(ctx, 1, &port);
	if (vt_check(!err, "ibv_query_port(1): %s", vt_errname(err))) {
		vt_check(port.state == IBV_PORT_ACTIVE, "port 1 is %s",
			 ibv_port_state_str(port.state));
		vt_check(port.link_layer == IBV_LINK_LAYER_ETHERNET,
			 "port 1 link layer is Ethernet (saw %u)", port.link_layer);
		vt_info("active_mtu %d gid_tbl_len %d", port.active_mtu,
			port.gid_tbl_len);
	}
	err = ibv_query_port(ctx, 2, &port);
	vt_check(err != 0, "ibv_query_port(2) fails: %s", vt_errname(err));

	err = ibv_query_gid(ctx, 1, 0, &gid);
	vt_check(!err, "ibv_query_gid(1, 0): %s", err ? strerror(errno) : "ok");

	pd1 = ibv_alloc_pd(ctx);
	vt_check(pd1 != NULL, "ibv_alloc_pd: %s", pd1 ? "ok" : strerror(errno));
	pd2 = ibv_alloc_pd(ctx);
	vt_check(pd2 != NULL, "second ibv_alloc_pd: %s", pd2 ? "ok" : strerror(errno));
	if (pd1 && pd2)
		vt_check(pd1->handle != pd2->handle, "the PDs have distinct handles (%u, %u)",
			 pd1->handle, pd2->handle);
	if (pd2) {
		err = ibv_dealloc_pd(pd2);
		vt_check(!err, "ibv_dealloc_pd: %s", vt_errname(err));
	}

	/* CQs and SRQs exist; memory windows and resize_cq do not. */
	errno = 0;
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	if (vt_check(cq != NULL, "ibv_create_cq: %s", cq ? "ok" : vt_errname(errno))) {
		err = ibv_resize_cq(cq, 32);
		vt_check(err == EOPNOTSUPP, "ibv_resize_cq: EOPNOTSUPP (saw %s)",
			 vt_errname(err));
		err = ibv_destroy_cq(cq);
		vt_check(!err, "ibv_destroy_cq: %s", vt_errname(err));
	}
	if (pd1) {
		struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
		struct ibv_srq *srq;
		struct ibv_mw *mw;

		errno = 0;
		srq = ibv_create_srq(pd1, &sa);
		if (vt_check(srq != NULL, "ibv_create_srq: %s",
			     srq ? "ok" : vt_errname(errno))) {
			struct ibv_srq_attr q = { .srq_limit = 2 };
			struct ibv_sge sge = { .addr = 0, .length = 0 };
			struct ibv_recv_wr rwr = { .wr_id = 1, .sg_list = &sge,
						   .num_sge = 1 };
			struct ibv_recv_wr *badr;
			int i;

			vt_check(sa.attr.max_wr == 4 && sa.attr.max_sge == 1,
				 "granted max_wr %u max_sge %u", sa.attr.max_wr,
				 sa.attr.max_sge);
			err = ibv_modify_srq(srq, &q, IBV_SRQ_LIMIT);
			vt_check(!err, "ibv_modify_srq(IBV_SRQ_LIMIT 2): %s",
				 vt_errname(err));
			q.max_wr = 8;
			err = ibv_modify_srq(srq, &q, IBV_SRQ_MAX_WR);
			vt_check(err == EOPNOTSUPP,
				 "ibv_modify_srq(IBV_SRQ_MAX_WR): EOPNOTSUPP (saw %s)",
				 vt_errname(err));
			memset(&q, 0, sizeof(q));
			err = ibv_query_srq(srq, &q);
			vt_check(!err && q.max_wr == 4 && q.srq_limit == 2,
				 "ibv_query_srq: %s, max_wr %u limit %u",
				 vt_errname(err), q.max_wr, q.srq_limit);
			for (i = 0, err = 0; i < 4 && !err; i++)
				err = ibv_post_srq_recv(srq, &rwr, &badr);
			vt_check(!err, "4 ibv_post_srq_recv: %s", vt_errname(err));
			err = ibv_post_srq_recv(srq, &rwr, &badr);
			vt_check(err == ENOMEM && badr == &rwr,
				 "a fifth ibv_post_srq_recv: ENOMEM (saw %s)",
				 vt_errname(err));
			err = ibv_destroy_srq(srq);
			vt_check(!err, "ibv_destroy_srq: %s", vt_errname(err));
		}
		sa.attr.max_wr = 0;
		errno = 0;
		srq = ibv_create_srq(pd1, &sa);
		vt_check(!srq && errno == EINVAL,
			 "ibv_create_srq with max_wr 0: EINVAL (saw %s)",
			 srq ? "created" : vt_errname(errno));
		if (srq)
			ibv_destroy_srq(srq);
		errno = 0;
		mw = ibv_alloc_mw(pd1, IBV_MW_TYPE_1);
		vt_check(mw && mw->type == IBV_MW_TYPE_1 && mw->pd == pd1,
			 "ibv_alloc_mw: a type 1 window of the PD (%s)",
			 mw ? "allocated" : vt_errname(errno));
		if (mw) {
			err = ibv_dealloc_mw(mw);
			vt_check(!err, "ibv_dealloc_mw: %s", vt_errname(err));
		}
	}

	if (pd1) {
		err = ibv_dealloc_pd(pd1);
		vt_check(!err, "ibv_dealloc_pd: %s", vt_errname(err));
	}
	err = ibv_close_device(ctx);
	vt_check(!err, "ibv_close_device: %s", vt_errname(err));
	return vt_exit();
}
