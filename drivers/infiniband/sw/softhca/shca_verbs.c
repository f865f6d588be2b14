// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - the verbs layer: the one ib_device_ops table (the mappings
 * and the driver's own uverbs methods are in shca_uverbs.c).
 *
 * Thin by design: argument checks, udata handling and translation between
 * ib_* objects and the engines. No translation tables or data movement
 * live here.
 */

#include <linux/netdevice.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <net/addrconf.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_umem.h>
#include <rdma/restrack.h>
#include <rdma/softhca-abi.h>
#include <rdma/uverbs_ioctl.h>

#include "shca_verbs.h"

static int shca_query_device(struct ib_device *ibdev,
			     struct ib_device_attr *attr,
			     struct ib_udata *udata)
{
	if (udata->inlen || udata->outlen)
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->vendor_id = SHCA_VENDOR_ID;
	attr->vendor_part_id = SHCA_VENDOR_PART_ID;
	attr->sys_image_guid = ibdev->node_guid;
	attr->max_pd = SHCA_MAX_PD;
	attr->max_mr = SHCA_MAX_MR;
	/* MRs and windows share the key table. */
	attr->max_mw = SHCA_MAX_MR;
	attr->max_mr_size = SHCA_MAX_MR_SIZE;
	attr->page_size_cap = SHCA_PAGE_SIZE_CAP;
	attr->max_fast_reg_page_list_len = SHCA_MAX_FRPL;
	attr->max_pi_fast_reg_page_list_len = SHCA_MAX_PI_FRPL;
	attr->max_dm_size = SHCA_DM_SIZE;
	attr->max_pkeys = SHCA_PKEY_TBL_LEN;
	attr->max_qp = SHCA_MAX_QP;
	attr->max_ah = SHCA_MAX_AH;
	attr->max_srq = SHCA_MAX_SRQ;
	attr->max_srq_wr = SHCA_MAX_SRQ_WR;
	attr->max_srq_sge = SHCA_MAX_SRQ_SGE;
	attr->max_mcast_grp = SHCA_MAX_MCAST_ATTACH;
	attr->max_mcast_qp_attach = SHCA_MAX_MCAST_QP_ATTACH;
	attr->max_total_mcast_qp_attach = SHCA_MAX_MCAST_ATTACH;
	attr->max_qp_wr = SHCA_MAX_QP_WR;
	attr->max_send_sge = SHCA_MAX_SGE;
	attr->max_recv_sge = SHCA_MAX_SGE;
	attr->max_sge_rd = SHCA_MAX_SGE;
	attr->max_cq = SHCA_MAX_CQ;
	attr->max_cqe = SHCA_MAX_CQE;
	attr->max_qp_rd_atom = SHCA_MAX_RD_ATOM;
	/* As rdma_rxe: perftest asks for the peer's responder resources. */
	attr->max_qp_init_rd_atom = SHCA_MAX_INIT_RD_ATOM;
	attr->max_res_rd_atom = SHCA_MAX_RD_ATOM * SHCA_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->device_cap_flags = IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_SYS_IMAGE_GUID;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_SG_GAPS_REG |
				 IBK_INTEGRITY_HANDOVER | IBK_LOCAL_DMA_LKEY;
#if SHCA_ODP
	/*
	 * On-demand paging (shca_odp.c): explicit and implicit MRs, every
	 * operation of every transport, as the copy path serves them all;
	 * no SRQ receives into ODP memory are excluded either.
	 */
	attr->kernel_cap_flags |= IBK_ON_DEMAND_PAGING;
	attr->odp_caps.general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	attr->odp_caps.per_transport_caps.rc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.uc_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_SRQ_RECV;
	attr->odp_caps.per_transport_caps.ud_odp_caps =
		IB_ODP_SUPPORT_SEND | IB_ODP_SUPPORT_RECV |
		IB_ODP_SUPPORT_SRQ_RECV;
#endif
	/* The T10-DIF engine (shca_sig.c): every type, both guards. */
	attr->sig_prot_cap = IB_PROT_T10DIF_TYPE_1 | IB_PROT_T10DIF_TYPE_2 |
			     IB_PROT_T10DIF_TYPE_3;
	attr->sig_guard_cap = IB_GUARD_T10DIF_CRC | IB_GUARD_T10DIF_CSUM;
	return 0;
}

static void shca_get_dev_fw_str(struct ib_device *ibdev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%s", SHCA_DRV_VERSION);
}

static int shca_query_port(struct ib_device *ibdev, u32 port_num,
			   struct ib_port_attr *attr)
{
	struct net_device *ndev;

	/* The core zeroes *attr and checks port_num. */
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = IB_MTU_256;
	attr->gid_tbl_len = SHCA_GID_TBL_LEN;
	attr->pkey_tbl_len = SHCA_PKEY_TBL_LEN;
	attr->max_msg_sz = SHCA_MAX_MSG_SZ;
	attr->active_width = IB_WIDTH_1X;
	attr->active_speed = IB_SPEED_SDR;
	attr->state = IB_PORT_DOWN;
	attr->phys_state = IB_PORT_PHYS_STATE_DISABLED;
	attr->port_cap_flags = IB_PORT_CM_SUP;

	ndev = ib_device_get_netdev(ibdev, port_num);
	if (!ndev)
		return 0;

	attr->state = shca_port_state(ndev);
	if (attr->state == IB_PORT_ACTIVE)
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	else if (netif_running(ndev))
		attr->phys_state = IB_PORT_PHYS_STATE_POLLING;
	attr->active_mtu = iboe_get_mtu(READ_ONCE(ndev->mtu));
	dev_put(ndev);

	/* The netdev may be going away under us: keep the defaults then. */
	if (ib_get_eth_speed(ibdev, port_num, &attr->active_speed,
			     &attr->active_width)) {
		attr->active_width = IB_WIDTH_1X;
		attr->active_speed = IB_SPEED_SDR;
	}
	return 0;
}

static int shca_get_port_immutable(struct ib_device *ibdev, u32 port_num,
				   struct ib_port_immutable *immutable)
{
	/* RoCE v2 with a GSI QP: the MAD layer, the IB CM and rdma_cm. */
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->gid_tbl_len = SHCA_GID_TBL_LEN;
	immutable->pkey_tbl_len = SHCA_PKEY_TBL_LEN;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

/*
 * Port counters, in /sys/class/infiniband/DEV/ports/1/hw_counters/ and
 * "rdma statistic show link DEV/1": the wire's (enum shca_wire_stat),
 * then ud_rx_dropped, then wire_udp: 1 while the device's namespace has
 * softhca's UDP sockets (RoCE v2 to other hosts), 0 while it reaches
 * only the softhca devices of its host (UDP port 4791 taken).
 */
#define SHCA_STAT_UD_RX_DROPPED	SHCA_WS_MAX
#define SHCA_STAT_WIRE_UDP	(SHCA_WS_MAX + 1)
#define SHCA_STAT_MAX		(SHCA_WS_MAX + 2)

static const struct rdma_stat_desc shca_port_stats[SHCA_STAT_MAX] = {
	[SHCA_WS_TX_PKTS].name = "tx_packets",
	[SHCA_WS_TX_BYTES].name = "tx_bytes",
	[SHCA_WS_RX_PKTS].name = "rx_packets",
	[SHCA_WS_RX_BYTES].name = "rx_bytes",
	[SHCA_WS_TX_ERRORS].name = "tx_errors",
	[SHCA_WS_RETRANSMITS].name = "retransmits",
	[SHCA_WS_ACK_TIMEOUTS].name = "ack_timeouts",
	[SHCA_WS_SEQ_NAKS_RCVD].name = "seq_naks_rcvd",
	[SHCA_WS_SEQ_NAKS_SENT].name = "seq_naks_sent",
	[SHCA_WS_RNR_NAKS_RCVD].name = "rnr_naks_rcvd",
	[SHCA_WS_RNR_NAKS_SENT].name = "rnr_naks_sent",
	[SHCA_WS_INV_NAKS_RCVD].name = "inv_req_naks_rcvd",
	[SHCA_WS_INV_NAKS_SENT].name = "inv_req_naks_sent",
	[SHCA_WS_ACCESS_NAKS_RCVD].name = "access_naks_rcvd",
	[SHCA_WS_ACCESS_NAKS_SENT].name = "access_naks_sent",
	[SHCA_WS_OP_NAKS_RCVD].name = "rem_op_naks_rcvd",
	[SHCA_WS_OP_NAKS_SENT].name = "rem_op_naks_sent",
	[SHCA_WS_DUP_REQS].name = "duplicate_requests",
	[SHCA_WS_OOS_REQS].name = "out_of_sequence",
	[SHCA_WS_ICRC_ERRORS].name = "icrc_errors",
	[SHCA_WS_RX_DROPPED].name = "rx_dropped",
	[SHCA_STAT_UD_RX_DROPPED].name = "ud_rx_dropped",
	[SHCA_STAT_WIRE_UDP].name = "wire_udp",
};

static struct rdma_hw_stats *shca_alloc_hw_port_stats(struct ib_device *ibdev,
						      u32 port_num)
{
	return rdma_alloc_hw_stats_struct(shca_port_stats, SHCA_STAT_MAX,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int shca_get_hw_stats(struct ib_device *ibdev,
			     struct rdma_hw_stats *stats, u32 port, int index)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	int i;

	for (i = 0; i < SHCA_WS_MAX; i++)
		stats->value[i] = atomic64_read(&sdev->wstats[i]);
	stats->value[SHCA_STAT_UD_RX_DROPPED] =
		atomic_long_read(&sdev->rx_dropped);
	stats->value[SHCA_STAT_WIRE_UDP] = shca_net_has_wire(sdev);
	return SHCA_STAT_MAX;
}

static enum rdma_link_layer shca_get_link_layer(struct ib_device *ibdev,
						u32 port_num)
{
	return IB_LINK_LAYER_ETHERNET;
}

static int shca_query_pkey(struct ib_device *ibdev, u32 port_num, u16 index,
			   u16 *pkey)
{
	if (index >= SHCA_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

static int shca_alloc_ucontext(struct ib_ucontext *ibuc,
			       struct ib_udata *udata)
{
	xa_init_flags(&to_shca_uc(ibuc)->ahs, XA_FLAGS_ALLOC1);
	return 0;
}

static void shca_dealloc_ucontext(struct ib_ucontext *ibuc)
{
	/* The core destroyed every AH of the context before. */
	WARN_ON(!xa_empty(&to_shca_uc(ibuc)->ahs));
	xa_destroy(&to_shca_uc(ibuc)->ahs);
}

/*
 * The device is going away while processes hold contexts. The core has
 * already zapped their mappings of device memory (rdma_user_mmap_io()),
 * and every other user object is plain kernel memory that the core
 * destroys next; nothing of the hardware kind is left to revoke. Having
 * this op lets "rdma link delete", rmmod and netdev removal proceed at
 * once instead of waiting for the processes to close their files; they
 * get IBV_EVENT_DEVICE_FATAL and EIO.
 */
static void shca_disassociate_ucontext(struct ib_ucontext *ibuc)
{
}

static int shca_alloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);

	if (atomic_inc_return(&sdev->num_pds) > SHCA_MAX_PD) {
		atomic_dec(&sdev->num_pds);
		return -ENOMEM;
	}
	return 0;
}

static int shca_dealloc_pd(struct ib_pd *ibpd, struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);

	atomic_dec(&sdev->num_pds);
	return 0;
}

static struct ib_mr *shca_get_dma_mr(struct ib_pd *ibpd, int access)
{
	struct shca_mr *mr;
	int err;

	/*
	 * With a reserved lkey (IBK_LOCAL_DMA_LKEY), the core asks for the
	 * DMA MR of IB_PD_UNSAFE_GLOBAL_RKEY with remote rights only; the
	 * IBTA's rule (remote write needs local write) holds for the MR we
	 * make, which also grants local write, as before.
	 */
	if (access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC))
		access |= IB_ACCESS_LOCAL_WRITE;
	err = shca_mr_check_access(access);
	if (err)
		return ERR_PTR(err);
	mr = shca_mr_create_dma(to_shca_dev(ibpd->device), ibpd, access);
	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

static struct ib_mr *shca_alloc_mr(struct ib_pd *ibpd, enum ib_mr_type type,
				   u32 max_num_sg)
{
	struct shca_mr *mr;

	if (type != IB_MR_TYPE_MEM_REG && type != IB_MR_TYPE_SG_GAPS)
		return ERR_PTR(-EINVAL);
	mr = shca_mr_create_fast(to_shca_dev(ibpd->device), type, max_num_sg,
				 0);
	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

static struct ib_mr *shca_alloc_mr_integrity(struct ib_pd *ibpd,
					     u32 max_num_data_sg,
					     u32 max_num_meta_sg)
{
	struct shca_mr *mr;

	mr = shca_mr_create_fast(to_shca_dev(ibpd->device),
				 IB_MR_TYPE_INTEGRITY, max_num_data_sg,
				 max_num_meta_sg);
	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

static int shca_map_mr_sg(struct ib_mr *ibmr, struct scatterlist *sg,
			  int sg_nents, unsigned int *sg_offset)
{
	struct shca_mr *mr = to_shca_mr(ibmr);

	if (mr->type == IB_MR_TYPE_SG_GAPS)
		return shca_mr_map_segs(mr, sg, sg_nents, sg_offset);
	return shca_mr_map_pages(mr, sg, sg_nents, sg_offset, ibmr->page_size);
}

static int shca_map_mr_sg_pi(struct ib_mr *ibmr, struct scatterlist *data_sg,
			     int data_sg_nents, unsigned int *data_sg_offset,
			     struct scatterlist *meta_sg, int meta_sg_nents,
			     unsigned int *meta_sg_offset)
{
	return shca_mr_map_pi(to_shca_mr(ibmr), data_sg, data_sg_nents,
			      data_sg_offset, meta_sg, meta_sg_nents,
			      meta_sg_offset);
}

static int shca_check_mr_status(struct ib_mr *ibmr, u32 check_mask,
				struct ib_mr_status *mr_status)
{
	return shca_mr_check_status(to_shca_mr(ibmr), check_mask, mr_status);
}

/* Checks shared by every user MR path; nothing pinned yet. */
static int shca_check_user_range(u64 start, u64 length, u64 iova, int access)
{
	u64 end;
	int err;

	err = shca_mr_check_access(access);
	if (err)
		return err;
	if (!length || length > SHCA_MAX_MR_SIZE ||
	    check_add_overflow(start, length, &end) ||
	    check_add_overflow(iova, length, &end))
		return -EINVAL;
	return 0;
}

/*
 * IB_ACCESS_ON_DEMAND: nothing pinned now. Start 0 and length U64_MAX ask
 * for an implicit MR over the whole address space, at iova 0 (as mlx5).
 */
static struct ib_mr *shca_reg_odp_mr(struct ib_pd *ibpd, u64 start,
				     u64 length, u64 iova, int access)
{
#if SHCA_ODP
	struct shca_mr *mr;
	int err;

	/* HUGETLB: the umem's pages are the huge pages of a hugetlbfs VMA. */
	int odp = access & (IB_ACCESS_ON_DEMAND | IB_ACCESS_HUGETLB);

	access &= ~odp;
	if (!start && length == U64_MAX)
		err = iova || (odp & IB_ACCESS_HUGETLB) ? -EINVAL :
			      shca_mr_check_access(access);
	else
		err = shca_check_user_range(start, length, iova, access);
	if (err)
		return ERR_PTR(err);
	mr = shca_mr_create_odp(to_shca_dev(ibpd->device), start, length, iova,
				access | odp);
	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
#else
	return ERR_PTR(-EOPNOTSUPP);
#endif
}

/* @udata may be NULL: the REG_MR ioctl (6.17) passes none. */
static struct ib_mr *shca_reg_user_mr(struct ib_pd *ibpd, u64 start,
				      u64 length, u64 iova, int access,
				      struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibpd->device);
	struct ib_umem *umem;
	struct shca_mr *mr;
	int err;

	if (access & IB_ACCESS_ON_DEMAND)
		return shca_reg_odp_mr(ibpd, start, length, iova, access);
	err = shca_check_user_range(start, length, iova, access);
	if (err)
		return ERR_PTR(err);

	umem = ib_umem_get(&sdev->ibdev, start, length, access);
	if (IS_ERR(umem))
		return ERR_CAST(umem);
	mr = shca_mr_create_user(sdev, umem, iova, access);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		return ERR_CAST(mr);
	}
	return &mr->ibmr;
}

#ifdef HAVE_REG_USER_MR_DMAH
/*
 * Since 6.17 the core passes a DMA handle, which only exists on a device
 * with ->alloc_dmah: never here, but refuse one rather than ignore it.
 */
static struct ib_mr *shca_reg_user_mr_dmah(struct ib_pd *ibpd, u64 start,
					   u64 length, u64 iova, int access,
					   struct ib_dmah *dmah,
					   struct ib_udata *udata)
{
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
	return shca_reg_user_mr(ibpd, start, length, iova, access, udata);
}
#endif

static struct ib_mr *shca_reg_user_mr_dmabuf(struct ib_pd *ibpd, u64 offset,
					     u64 length, u64 iova, int fd,
					     int access,
#ifdef HAVE_REG_USER_MR_DMABUF_DMAH
					     struct ib_dmah *dmah,
#endif
					     struct shca_reg_dmabuf_arg *arg)
{
	struct shca_mr *mr;
	int err;

#ifdef HAVE_REG_USER_MR_DMABUF_DMAH
	if (dmah)
		return ERR_PTR(-EOPNOTSUPP);
#endif
	err = shca_check_user_range(offset, length, iova, access);
	if (err)
		return ERR_PTR(err);
	mr = shca_mr_create_dmabuf(to_shca_dev(ibpd->device), fd, offset,
				   length, iova, access);
	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

/*
 * rereg_user_mr making a new MR for @mr: the core destroys @mr if this
 * succeeds, so @mr is retired first - bound windows (they use its
 * translation, PD and rights) refuse the rereg with -EBUSY, and no window
 * binds to it while the new MR is made.
 */
static struct ib_mr *shca_rereg_new(struct shca_mr *mr, struct ib_pd *ibpd,
				    u64 start, u64 length, u64 iova,
				    int access, struct ib_udata *udata)
{
	struct ib_mr *ibmr;
	int err;

	err = shca_mr_retire(mr);
	if (err)
		return ERR_PTR(err);
	ibmr = shca_reg_user_mr(ibpd, start, length, iova, access, udata);
	if (IS_ERR(ibmr))
		shca_mr_unretire(mr);
	return ibmr;
}

static struct ib_mr *shca_rereg_user_mr(struct ib_mr *ibmr, int flags,
					u64 start, u64 length, u64 iova,
					int access, struct ib_pd *ibpd,
					struct ib_udata *udata)
{
	struct shca_mr *mr = to_shca_mr(ibmr);
	int err;

	if (mr->type != IB_MR_TYPE_USER ||
	    (flags & ~(IB_MR_REREG_TRANS | IB_MR_REREG_PD |
		       IB_MR_REREG_ACCESS)))
		return ERR_PTR(-EINVAL);
	if (!(flags & IB_MR_REREG_ACCESS))
		access = mr->access;

	/* A new translation is a new MR with a new key; the core swaps. */
	if (flags & IB_MR_REREG_TRANS)
		return shca_rereg_new(mr, ibpd, start, length, iova, access,
				      udata);
	/* In or out of on-demand paging: the same range, made anew. */
	if ((access & IB_ACCESS_ON_DEMAND) || mr->odp) {
		if (!mr->odp && !mr->umem)
			return ERR_PTR(-EOPNOTSUPP);
		return shca_rereg_new(mr, ibpd, mr->odp ? mr->cur->data.base :
							mr->umem->address,
				      mr->length, mr->iova, access, udata);
	}

	/*
	 * Write access over pages pinned for reading needs a writable pin of
	 * the same range, refused as a fresh registration would be (EFAULT
	 * for read-only memory): never grant writes to a read-only mapping,
	 * the shared zero page or a file's page cache. A dma-buf MR (no
	 * umem) has no pin direction: registering it writable again is no
	 * more than a fresh registration would give, so it changes in place.
	 */
	if (ib_access_writable(access) && mr->umem && !mr->umem->writable)
		return shca_rereg_new(mr, ibpd, mr->umem->address,
				      mr->umem->length, mr->iova, access, udata);

	/* PD and access change in place, unless a window got bound. */
	err = shca_mr_set_access(mr, (flags & IB_MR_REREG_PD) ? ibpd :
							       mr->ibmr.pd,
				 access);
	return err ? ERR_PTR(err) : NULL;
}

/* Refused (-EBUSY) while memory windows are bound to the MR. */
static int shca_dereg_mr(struct ib_mr *ibmr, struct ib_udata *udata)
{
	struct shca_mr *mr = to_shca_mr(ibmr);
	int err;

	err = shca_mr_retire(mr);
	if (err)
		return err;
	shca_mr_destroy(mr);
	return 0;
}

#if SHCA_ODP
static int shca_advise_mr(struct ib_pd *ibpd,
			  enum ib_uverbs_advise_mr_advice advice, u32 flags,
			  struct ib_sge *sg_list, u32 num_sge,
			  struct uverbs_attr_bundle *attrs)
{
	int err = shca_mr_advise(to_shca_dev(ibpd->device), ibpd, advice,
				 flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH,
				 sg_list, num_sge);

	/* A key that names no MR of the process: ENOENT, as mlx5 says. */
	return err == -ENOKEY ? -ENOENT : err;
}
#endif

static int shca_alloc_mw(struct ib_mw *ibmw, struct ib_udata *udata)
{
	struct shca_mw *mw = to_shca_mw(ibmw);
	struct shca_mr *win;

	if (udata->inlen || udata->outlen)
		return -EINVAL;
	win = shca_mw_create(to_shca_dev(ibmw->device), ibmw->pd, ibmw->type);
	if (IS_ERR(win))
		return PTR_ERR(win);
	mw->win = win;
	ibmw->rkey = win->key;
	return 0;
}

static int shca_dealloc_mw(struct ib_mw *ibmw)
{
	shca_mw_destroy(to_shca_mw(ibmw)->win);
	return 0;
}

static struct ib_dm *shca_alloc_dm(struct ib_device *ibdev,
				   struct ib_ucontext *ibuc,
				   struct ib_dm_alloc_attr *attr,
				   struct uverbs_attr_bundle *attrs)
{
	struct shca_dev *sdev = to_shca_dev(ibdev);
	struct shca_dm *dm;
	int err;

	if (attr->flags)
		return ERR_PTR(-EOPNOTSUPP);
	dm = shca_inject_fault() ? NULL : kzalloc(sizeof(*dm), GFP_KERNEL);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	err = shca_dm_alloc(sdev, dm, attr->length, attr->alignment, ibuc);
	if (err)
		goto err_free_dm;
	if (ibuc) {
		err = shca_dm_mmap_insert(ibuc, dm, attrs);
		if (err)
			goto err_free_dm;
	}
	return &dm->ibdm;

err_free_dm:
	kfree(dm);
	return ERR_PTR(err);
}

static int shca_dealloc_dm(struct ib_dm *ibdm,
			   struct uverbs_attr_bundle *attrs)
{
	struct shca_dm *dm = to_shca_dm(ibdm);

	/* A mapped range returns to the arena in shca_mmap_free(). */
	if (dm->mmap)
		rdma_user_mmap_entry_remove(&dm->mmap->rdma_entry);
	else
		shca_dm_free(to_shca_dev(ibdm->device), dm->addr,
			     dm->alloc_size);
	kfree(dm);
	return 0;
}

static struct ib_mr *shca_reg_dm_mr(struct ib_pd *ibpd, struct ib_dm *ibdm,
				    struct ib_dm_mr_attr *attr,
				    struct uverbs_attr_bundle *attrs)
{
	struct shca_mr *mr;
	int err;

	err = shca_mr_check_access(attr->access_flags);
	if (err)
		return ERR_PTR(err);
	mr = shca_mr_create_dm(to_shca_dev(ibpd->device), to_shca_dm(ibdm),
			       attr->offset, attr->length, attr->access_flags);
	return IS_ERR(mr) ? ERR_CAST(mr) : &mr->ibmr;
}

static int shca_check_cq_attr(const struct ib_cq_init_attr *attr,
			      struct ib_device *ibdev, struct ib_udata *udata)
{
	if (attr->flags)
		return -EOPNOTSUPP;
	if (attr->comp_vector >= ibdev->num_comp_vectors)
		return -EINVAL;
	/* A user CQ is a ring the process maps: it must learn where. */
	if (udata && udata->outlen < sizeof(struct softhca_create_cq_resp))
		return -EINVAL;
	return 0;
}

static int shca_create_cq(struct ib_cq *ibcq, const struct ib_cq_init_attr *attr,
			  struct shca_create_cq_arg *arg)
{
	struct ib_udata *udata = shca_create_cq_udata(arg);
	struct shca_dev *sdev = to_shca_dev(ibcq->device);
	struct shca_cq *cq = to_shca_cq(ibcq);
	int err;

	err = shca_check_cq_attr(attr, ibcq->device, udata);
	if (err)
		goto err_out;
	if (atomic_inc_return(&sdev->num_cqs) > SHCA_MAX_CQ) {
		err = -ENOSPC;
		goto err_count;
	}
	err = shca_cq_init(cq, attr->cqe, !!udata);
	if (err)
		goto err_count;
	if (udata) {
		err = shca_cq_mmap_insert(cq, udata);
		if (err)
			goto err_count;
	}
	return 0;

err_count:
	atomic_dec(&sdev->num_cqs);
err_out:
	shca_dbg(sdev, "cqe %u vector %u flags %#x user %d: %d\n", attr->cqe,
		 attr->comp_vector, attr->flags, !!udata, err);
	return err;
}

static int shca_destroy_cq(struct ib_cq *ibcq, struct ib_udata *udata)
{
	struct shca_cq *cq = to_shca_cq(ibcq);

	shca_cq_fini(cq);
	if (cq->mmap)
		rdma_user_mmap_entry_remove(&cq->mmap->rdma_entry);
	atomic_dec(&to_shca_dev(ibcq->device)->num_cqs);
	return 0;
}

static int shca_poll_cq(struct ib_cq *ibcq, int num_entries, struct ib_wc *wc)
{
	return shca_cq_poll(to_shca_cq(ibcq), num_entries, wc);
}

static int shca_req_notify_cq(struct ib_cq *ibcq, enum ib_cq_notify_flags flags)
{
	return shca_cq_arm(to_shca_cq(ibcq), flags);
}

/*
 * A user AH gets a number in its context's table for UD send-ring slots
 * (struct softhca_create_ah_resp), if the provider has room for it.
 */
static int shca_ah_number(struct shca_ah *ah, struct ib_udata *udata,
			  gfp_t gfp)
{
	struct softhca_create_ah_resp resp = {};
	struct shca_ucontext *uc;
	int err;

	if (!udata || udata->outlen < sizeof(resp))
		return 0;
	uc = rdma_udata_to_drv_context(udata, struct shca_ucontext, ibuc);
	err = shca_inject_fault() ? -ENOMEM :
	      xa_alloc(&uc->ahs, &ah->num, ah, xa_limit_32b, gfp);
	if (err)
		return err;
	ah->uc = uc;
	resp.ah_num = ah->num;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		xa_erase(&uc->ahs, ah->num);
		ah->num = 0;
	}
	return err;
}

static int shca_create_ah(struct ib_ah *ibah,
			  struct rdma_ah_init_attr *init_attr,
			  struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibah->device);
	struct shca_ah *ah = to_shca_ah(ibah);
	int err;

	err = shca_av_init(&ah->av, init_attr->ah_attr);
	if (!err && atomic_inc_return(&sdev->num_ahs) > SHCA_MAX_AH) {
		atomic_dec(&sdev->num_ahs);
		err = -ENOMEM;
	}
	if (!err) {
		err = shca_ah_number(ah, udata,
				     (init_attr->flags &
				      RDMA_CREATE_AH_SLEEPABLE) ?
				     GFP_KERNEL : GFP_ATOMIC);
		if (err)
			atomic_dec(&sdev->num_ahs);
	}
	if (err)
		shca_dbg(sdev, "AH refused: %d\n", err);
	return err;
}

static int shca_query_ah(struct ib_ah *ibah, struct rdma_ah_attr *attr)
{
	struct shca_av *av = &to_shca_ah(ibah)->av;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, SHCA_PORT);
	rdma_ah_set_sl(attr, av->sl);
	rdma_ah_set_grh(attr, &av->dgid, av->flow_label, av->sgid_index,
			av->hop_limit, av->traffic_class);
	return 0;
}

static int shca_destroy_ah(struct ib_ah *ibah, u32 flags)
{
	struct shca_ah *ah = to_shca_ah(ibah);

	/* No doorbell finds it from here on; the core frees it after. */
	if (ah->num)
		xa_erase(&ah->uc->ahs, ah->num);
	atomic_dec(&to_shca_dev(ibah->device)->num_ahs);
	return 0;
}

static int shca_create_srq(struct ib_srq *ibsrq,
			   struct ib_srq_init_attr *init,
			   struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibsrq->device);
	int err;

	if (udata && (udata->inlen || udata->outlen))
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_srqs) > SHCA_MAX_SRQ) {
		err = -ENOSPC;
		goto err_count;
	}
	err = shca_srq_init(to_shca_srq(ibsrq), init);
	if (err)
		goto err_count;
	return 0;

err_count:
	atomic_dec(&sdev->num_srqs);
	shca_dbg(sdev, "type %d wr %u sge %u limit %u: %d\n", init->srq_type,
		 init->attr.max_wr, init->attr.max_sge, init->attr.srq_limit,
		 err);
	return err;
}

static int shca_modify_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr,
			   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	if (udata && udata->inlen)
		return -EOPNOTSUPP;
	return shca_srq_modify(to_shca_srq(ibsrq), attr, mask);
}

static int shca_query_srq(struct ib_srq *ibsrq, struct ib_srq_attr *attr)
{
	shca_srq_query(to_shca_srq(ibsrq), attr);
	return 0;
}

static int shca_destroy_srq(struct ib_srq *ibsrq, struct ib_udata *udata)
{
	shca_srq_fini(to_shca_srq(ibsrq));
	atomic_dec(&to_shca_dev(ibsrq->device)->num_srqs);
	return 0;
}

static int shca_post_srq_recv(struct ib_srq *ibsrq,
			      const struct ib_recv_wr *wr,
			      const struct ib_recv_wr **bad_wr)
{
	return shca_srq_post_recv(to_shca_srq(ibsrq), wr, bad_wr);
}

static int shca_attach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return shca_mcast_attach(to_shca_qp(ibqp), gid);
}

static int shca_detach_mcast(struct ib_qp *ibqp, union ib_gid *gid, u16 lid)
{
	return shca_mcast_detach(to_shca_qp(ibqp), gid);
}

static int shca_create_qp(struct ib_qp *ibqp, struct ib_qp_init_attr *init,
			  struct ib_udata *udata)
{
	struct shca_dev *sdev = to_shca_dev(ibqp->device);
	struct softhca_create_qp ucmd = {};
	struct shca_qp *qp = to_shca_qp(ibqp);
	int err;

	err = shca_create_qp_ucmd(udata, &ucmd);
	if (err)
		goto out;
	err = shca_qp_init(qp, sdev, init, !!udata);
	if (err || !udata)
		goto out;
	err = shca_qp_rings_create(qp, &ucmd, udata);
	if (err) {
		shca_qp_fini(qp);
		shca_qp_rings_remove(qp);
	}
out:
	if (err)
		shca_dbg(sdev, "type %d flags %#x wr %u/%u sge %u/%u inline %u rings %#x: %d\n",
			 init->qp_type, init->create_flags,
			 init->cap.max_send_wr, init->cap.max_recv_wr,
			 init->cap.max_send_sge, init->cap.max_recv_sge,
			 init->cap.max_inline_data, ucmd.flags, err);
	return err;
}

static int shca_modify_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			  int mask, struct ib_udata *udata)
{
	int err;

	if (udata && udata->inlen)
		return -EOPNOTSUPP;
	err = shca_qp_modify(to_shca_qp(ibqp), attr, mask);
	if (err)
		shca_dbg(to_shca_dev(ibqp->device),
			 "QP %u to state %d, mask %#x: %d\n", ibqp->qp_num,
			 (mask & IB_QP_STATE) ? attr->qp_state : -1, mask, err);
	return err;
}

static int shca_query_qp(struct ib_qp *ibqp, struct ib_qp_attr *attr,
			 int mask, struct ib_qp_init_attr *init)
{
	shca_qp_query(to_shca_qp(ibqp), attr, init);
	return 0;
}

/*
 * "rdma res show qp -dd": the link a connection runs on, WQEs queued and,
 * on the UDP link, what its requester is at (shca_req_fill_res()).
 */
static int shca_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ibqp)
{
	struct shca_qp *qp = to_shca_qp(ibqp);
	bool wire = READ_ONCE(qp->wire);
	struct nlattr *table;

	/* The driver's attributes go in a table of their own. */
	table = nla_nest_start(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	if (rdma_nl_put_driver_string(msg, "link", wire ? "udp" : "memory") ||
	    rdma_nl_put_driver_u32(msg, "sq-wqes", READ_ONCE(qp->sq.tail) -
						  READ_ONCE(qp->sq.head)) ||
	    (wire && ibqp->qp_type != IB_QPT_UD &&
	     ibqp->qp_type != IB_QPT_GSI && shca_req_fill_res(msg, qp))) {
		nla_nest_cancel(msg, table);
		return -EMSGSIZE;
	}
	nla_nest_end(msg, table);
	return 0;
}

static int shca_destroy_qp(struct ib_qp *ibqp, struct ib_udata *udata)
{
	shca_qp_fini(to_shca_qp(ibqp));
	/* Nothing reads or writes the rings any more. */
	shca_qp_rings_remove(to_shca_qp(ibqp));
	return 0;
}

static int shca_post_send(struct ib_qp *ibqp, const struct ib_send_wr *wr,
			  const struct ib_send_wr **bad_wr)
{
	int err = shca_qp_post_send(to_shca_qp(ibqp), wr, bad_wr);

	if (err)
		shca_dbg(to_shca_dev(ibqp->device),
			 "QP %u: WR %llu opcode %d: %d\n", ibqp->qp_num,
			 (*bad_wr)->wr_id, (*bad_wr)->opcode, err);
	return err;
}

static int shca_post_recv(struct ib_qp *ibqp, const struct ib_recv_wr *wr,
			  const struct ib_recv_wr **bad_wr)
{
	int err = shca_qp_post_recv(to_shca_qp(ibqp), wr, bad_wr);

	if (err)
		shca_dbg(to_shca_dev(ibqp->device), "QP %u: WR %llu: %d\n",
			 ibqp->qp_num, (*bad_wr)->wr_id, err);
	return err;
}

static ssize_t softhca_abi_version_show(struct device *device,
					struct device_attribute *attr,
					char *buf)
{
	return sysfs_emit(buf, "%u\n", SOFTHCA_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(softhca_abi_version);

/* "udp": RoCE v2 to other hosts; "local": this host's softhca devices only. */
static ssize_t wire_show(struct device *device, struct device_attribute *attr,
			 char *buf)
{
	struct shca_dev *sdev = rdma_device_to_drv_device(device,
							  struct shca_dev,
							  ibdev);

	return sysfs_emit(buf, "%s\n", shca_net_has_wire(sdev) ? "udp" :
							      "local");
}
static DEVICE_ATTR_RO(wire);

static struct attribute *shca_dev_attrs[] = {
	&dev_attr_softhca_abi_version.attr,
	&dev_attr_wire.attr,
	NULL
};

static const struct attribute_group shca_dev_attr_group = {
	.attrs = shca_dev_attrs,
};

static const struct ib_device_ops shca_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SOFTHCA_UVERBS_ABI_VERSION,
	.device_group = &shca_dev_attr_group,

#if SHCA_ODP
	.advise_mr = shca_advise_mr,
#endif
	.alloc_dm = shca_alloc_dm,
	.alloc_hw_port_stats = shca_alloc_hw_port_stats,
	.alloc_mr = shca_alloc_mr,
	.alloc_mr_integrity = shca_alloc_mr_integrity,
	.alloc_mw = shca_alloc_mw,
	.alloc_pd = shca_alloc_pd,
	.alloc_ucontext = shca_alloc_ucontext,
	.attach_mcast = shca_attach_mcast,
	.check_mr_status = shca_check_mr_status,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_qp = shca_create_qp,
	.create_srq = shca_create_srq,
	.create_user_ah = shca_create_ah,
	.dealloc_dm = shca_dealloc_dm,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dealloc_ucontext = shca_dealloc_ucontext,
	.destroy_ah = shca_destroy_ah,
	.dereg_mr = shca_dereg_mr,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.detach_mcast = shca_detach_mcast,
	.disassociate_ucontext = shca_disassociate_ucontext,
	.fill_res_qp_entry = shca_fill_res_qp_entry,
	.get_dev_fw_str = shca_get_dev_fw_str,
	.get_dma_mr = shca_get_dma_mr,
	.get_hw_stats = shca_get_hw_stats,
	.get_link_layer = shca_get_link_layer,
	.get_port_immutable = shca_get_port_immutable,
	.map_mr_sg = shca_map_mr_sg,
	.map_mr_sg_pi = shca_map_mr_sg_pi,
	.mmap = shca_mmap,
	.mmap_free = shca_mmap_free,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_ah = shca_query_ah,
	.query_device = shca_query_device,
	.query_pkey = shca_query_pkey,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.reg_dm_mr = shca_reg_dm_mr,
#ifdef HAVE_REG_USER_MR_DMAH
	.reg_user_mr = shca_reg_user_mr_dmah,
#else
	.reg_user_mr = shca_reg_user_mr,
#endif
	.reg_user_mr_dmabuf = shca_reg_user_mr_dmabuf,
	.req_notify_cq = shca_req_notify_cq,
	.rereg_user_mr = shca_rereg_user_mr,

	INIT_RDMA_OBJ_SIZE(ib_ah, shca_ah, ibah),
	INIT_RDMA_OBJ_SIZE(ib_cq, shca_cq, ibcq),
	INIT_RDMA_OBJ_SIZE(ib_mw, shca_mw, ibmw),
	INIT_RDMA_OBJ_SIZE(ib_pd, shca_pd, ibpd),
	INIT_RDMA_OBJ_SIZE(ib_qp, shca_qp, ibqp),
	INIT_RDMA_OBJ_SIZE(ib_srq, shca_srq, ibsrq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, shca_ucontext, ibuc),
};

/**
 * shca_verbs_init_device() - prepare a freshly allocated device
 * @sdev: device from ib_alloc_device(), not yet registered
 * @ndev: the netdev it will be bound to
 *
 * Sets the engines' per-device state, the node attributes derived from
 * @ndev (node GUID from the MAC address, as EUI-64) and, last, the verbs
 * ops. The caller owns the device's lifetime: it installs
 * ->dealloc_driver, which undoes this with shca_verbs_fini_device().
 *
 * Return: 0 or -ENOMEM; on failure nothing needs undoing.
 */
int shca_verbs_init_device(struct shca_dev *sdev, struct net_device *ndev)
{
	struct ib_device *ibdev = &sdev->ibdev;
	int err, i;

	err = shca_dm_arena_init(sdev);
	if (err)
		return err;
	atomic_set(&sdev->num_pds, 0);
	atomic_set(&sdev->num_cqs, 0);
	atomic_set(&sdev->num_qps, 0);
	atomic_set(&sdev->num_ahs, 0);
	atomic_set(&sdev->odp_children, 0);
	sdev->odp_children_max = SHCA_ODP_MAX_CHILDREN;
	atomic_long_set(&sdev->rx_dropped, 0);
	for (i = 0; i < SHCA_WS_MAX; i++)
		atomic64_set(&sdev->wstats[i], 0);
	INIT_LIST_HEAD(&sdev->net_entry);
	shca_mr_table_init(sdev);

	ib_set_device_ops(ibdev, &shca_dev_ops);
	ibdev->driver_def = shca_uapi_defs;
	/* The data-path write commands are opt-in for uverbs. */
	ibdev->uverbs_cmd_mask |= BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_POST_SRQ_RECV) |
				  BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	ibdev->node_type = RDMA_NODE_IB_CA;
	ibdev->phys_port_cnt = 1;
	ibdev->num_comp_vectors = num_possible_cpus();
	ibdev->local_dma_lkey = SHCA_LOCAL_DMA_LKEY;
	strscpy(ibdev->node_desc, "softhca", sizeof(ibdev->node_desc));
	addrconf_addr_eui48((unsigned char *)&ibdev->node_guid,
			    ndev->dev_addr);
	return 0;
}

/**
 * shca_verbs_fini_device() - release what shca_verbs_init_device() set up
 * @sdev: device that is unregistered or was never registered
 */
void shca_verbs_fini_device(struct shca_dev *sdev)
{
	shca_mr_table_destroy(sdev);
	shca_dm_arena_destroy(sdev);
}
