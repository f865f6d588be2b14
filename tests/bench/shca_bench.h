/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the kernel benchmark modules (shca_dp_bench.c,
 * shca_pi_bench.c, shca_frwr_bench.c): the GID a benchmark QP uses,
 * connecting two RC QPs of this host by hand (RoCE v2, no rdma_cm), and
 * one end of such a connection (device, PD, polled CQ).
 */

#ifndef SHCA_BENCH_H
#define SHCA_BENCH_H

#include <linux/minmax.h>
#include <linux/string.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>

/*
 * The GID to use: RoCE v2 and IPv4-mapped if the device has one (rxe also
 * lists RoCE v1 GIDs, and only IPv4 routes between two netdevs of one
 * host without further setup), else the first RoCE v2 GID. Returns its
 * index and sets *@gid, or -ENODATA.
 */
static inline int shca_bench_pick_gid(struct ib_device *dev,
				      union ib_gid *gid)
{
	const struct ib_gid_attr *attr;
	int idx, first = -1;

	for (idx = 0; idx < 256; idx++) {
		attr = rdma_get_gid_attr(dev, 1, idx);
		if (IS_ERR(attr)) {
			if (PTR_ERR(attr) == -EINVAL)
				break;	/* past the end of the table */
			continue;
		}
		if (attr->gid_type == IB_GID_TYPE_ROCE_UDP_ENCAP) {
			bool v4 = ipv6_addr_v4mapped((struct in6_addr *)
						     attr->gid.raw);

			if (first < 0 || v4) {
				first = idx;
				*gid = attr->gid;
			}
			if (v4) {
				rdma_put_gid_attr(attr);
				return idx;
			}
		}
		rdma_put_gid_attr(attr);
	}
	return first < 0 ? -ENODATA : first;
}

/*
 * Take the RC QP @qp (port 1, source GID @sgid_index) from RESET through
 * INIT and RTR to RTS, connected to @peer, whose GID is @dgid, at path
 * MTU @mtu. Both QPs start at PSN 0; all remote access rights are
 * granted.
 */
static inline int shca_bench_rc_connect(struct ib_qp *qp, int sgid_index,
					struct ib_qp *peer,
					union ib_gid *dgid,
					enum ib_mtu mtu)
{
	struct ib_qp_attr attr = {
		.qp_state = IB_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = IB_ACCESS_LOCAL_WRITE |
				   IB_ACCESS_REMOTE_WRITE |
				   IB_ACCESS_REMOTE_READ,
	};
	int rd_atom = min3(qp->device->attrs.max_qp_rd_atom,
			   peer->device->attrs.max_qp_init_rd_atom, 16);
	int err;

	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_PKEY_INDEX |
			   IB_QP_PORT | IB_QP_ACCESS_FLAGS);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTR;
	attr.path_mtu = mtu;
	attr.dest_qp_num = peer->qp_num;
	attr.rq_psn = 0;
	attr.max_dest_rd_atomic = rd_atom;
	attr.min_rnr_timer = 1;
	attr.ah_attr.type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(&attr.ah_attr, 1);
	rdma_ah_set_grh(&attr.ah_attr, dgid, 0, sgid_index, 64, 0);
	err = ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_AV |
			   IB_QP_PATH_MTU | IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			   IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER);
	if (err)
		return err;

	memset(&attr, 0, sizeof(attr));
	attr.qp_state = IB_QPS_RTS;
	attr.timeout = 14;
	attr.retry_cnt = 7;
	attr.rnr_retry = 7;
	attr.sq_psn = 0;
	attr.max_rd_atomic = rd_atom;
	return ib_modify_qp(qp, &attr, IB_QP_STATE | IB_QP_TIMEOUT |
			    IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			    IB_QP_MAX_QP_RD_ATOMIC);
}

/* One end of a benchmark connection: a device, its PD, a polled CQ, a QP. */
struct shca_bench_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	union ib_gid gid;
	int gid_index;
	enum ib_mtu mtu;
};

/* Drop everything shca_bench_end_setup() took (not the QP). */
static inline void shca_bench_end_teardown(struct shca_bench_end *e)
{
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->dev)
		ib_device_put(e->dev);
	memset(e, 0, sizeof(*e));
}

/*
 * Take the device @name, its RoCE v2 GID and active MTU, a PD and a CQ of
 * @cqe entries polled directly. Returns NULL, or what failed (a word for
 * the benchmark's "err" records); shca_bench_end_teardown() cleans up
 * either way.
 */
static inline const char *shca_bench_end_setup(struct shca_bench_end *e,
					       const char *name, int cqe)
{
	struct ib_port_attr port;

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
	e->pd = ib_alloc_pd(e->dev, 0);
	if (IS_ERR(e->pd)) {
		e->pd = NULL;
		return "alloc_pd";
	}
	e->cq = ib_alloc_cq(e->dev, NULL, cqe, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq)) {
		e->cq = NULL;
		return "alloc_cq";
	}
	return NULL;
}

/* Throw away whatever completions @cq still holds. */
static inline void shca_bench_cq_drain(struct ib_cq *cq)
{
	struct ib_wc wc[16];

	while (ib_poll_cq(cq, ARRAY_SIZE(wc), wc) > 0)
		;
}

#endif /* SHCA_BENCH_H */
