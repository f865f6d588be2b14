// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca: rdma-core provider for the softhca kernel module.
 *
 * Everything goes through the kernel's generic uverbs commands but
 * polling: post_send, post_recv and req_notify_cq are one system call
 * each (the work queues live in the kernel), while completions are read
 * from a ring this process maps. The softhca-specific ABI
 * (include/uapi/rdma/softhca-abi.h) is how devices are recognised, where
 * device memory is mapped (a driver attribute of the DM allocation) and
 * the completion ring.
 *
 * Error convention, as libibverbs expects it: operations returning a
 * pointer return NULL with errno set; operations returning int return 0 or
 * a positive errno value (and leave errno set to it).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rdma/rdma_user_ioctl_cmds.h>

#include <rdma/softhca-abi.h>

#include "softhca.h"

/* ---- context ------------------------------------------------------------ */

static int shca_query_device_ex(struct ibv_context *ibctx,
				const struct ibv_query_device_ex_input *input,
				struct ibv_device_attr_ex *attr,
				size_t attr_size)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	uint64_t fw;
	int err;

	err = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (err)
		return err;

	/*
	 * The kernel reports its firmware version as a string only (sysfs
	 * fw_ver, read when the context was made: a sysfs read per query
	 * made ibv_query_device eight times slower than rxe's); fall back
	 * to the numeric field if that could not be read.
	 */
	if (ctx->fw_ver[0]) {
		snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
			 "%s", ctx->fw_ver);
		return 0;
	}
	fw = resp.base.fw_ver;
	snprintf(attr->orig_attr.fw_ver, sizeof(attr->orig_attr.fw_ver),
		 "%u.%u.%u", (unsigned int)(fw >> 32) & 0xffff,
		 (unsigned int)(fw >> 16) & 0xffff, (unsigned int)fw & 0xffff);
	return 0;
}

static int shca_query_port(struct ibv_context *ibctx, uint8_t port_num,
			   struct ibv_port_attr *port_attr)
{
	struct ibv_query_port cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_port(ibctx, port_num, port_attr, &cmd,
				  sizeof(cmd));
}

/* ---- protection domains -------------------------------------------------- */

static struct ibv_pd *shca_alloc_pd(struct ibv_context *ibctx)
{
	struct ib_uverbs_alloc_pd_resp resp;
	struct ibv_alloc_pd cmd;
	struct ibv_pd *pd;
	int err;

	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_alloc_pd(ibctx, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(pd);
		errno = err;
		return NULL;
	}
	return pd;
}

/* The parent domain @pd is, if it is one; under ctx->pd_lock. */
static struct shca_parent *shca_parent_of(struct shca_context *ctx,
					  const struct ibv_pd *pd)
{
	struct shca_parent *p;

	for (p = ctx->parents; p; p = p->next)
		if (&p->ibpd == pd)
			return p;
	return NULL;
}

/**
 * shca_parent_find() - the parent domain behind a PD pointer
 * @pd: a PD, a parent domain, or NULL
 *
 * Return: the parent domain, or NULL if @pd is none (of its context).
 */
struct shca_parent *shca_parent_find(struct ibv_pd *pd)
{
	struct shca_context *ctx;
	struct shca_parent *p;

	if (!pd)
		return NULL;
	ctx = to_shca_ctx(pd->context);
	pthread_mutex_lock(&ctx->pd_lock);
	p = shca_parent_of(ctx, pd);
	pthread_mutex_unlock(&ctx->pd_lock);
	return p;
}

/*
 * A parent domain extends a PD of this context with the consumer's
 * allocators (and its context for them); thread domains do not exist
 * here (ibv_alloc_td() is EOPNOTSUPP), so none can be given. The PD stays
 * allocated while a parent domain extends it (its dealloc is EBUSY).
 */
static struct ibv_pd *
shca_alloc_parent_domain(struct ibv_context *ibctx,
			 struct ibv_parent_domain_init_attr *attr)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);
	struct shca_parent *pd;

	if (attr->comp_mask & ~(uint32_t)(IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
					  IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || attr->pd->context != ibctx || attr->td ||
	    ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	     (!attr->alloc || !attr->free))) {
		errno = EINVAL;
		return NULL;
	}
	pd = calloc(1, sizeof(*pd));
	if (!pd) {
		errno = ENOMEM;
		return NULL;
	}
	pd->ibpd.context = ibctx;
	pd->ibpd.handle = attr->pd->handle;
	pd->protection = attr->pd;
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pd->alloc = attr->alloc;
		pd->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pd->pd_context = attr->pd_context;

	pthread_mutex_lock(&ctx->pd_lock);
	/* A parent domain extends a PD, not another parent domain. */
	if (shca_parent_of(ctx, attr->pd)) {
		pthread_mutex_unlock(&ctx->pd_lock);
		free(pd);
		errno = EINVAL;
		return NULL;
	}
	pd->next = ctx->parents;
	ctx->parents = pd;
	pthread_mutex_unlock(&ctx->pd_lock);
	return &pd->ibpd;
}

static int shca_dealloc_pd(struct ibv_pd *ibpd)
{
	struct shca_context *ctx = to_shca_ctx(ibpd->context);
	struct shca_parent **pp, *p;
	bool extended = false;
	int err;

	pthread_mutex_lock(&ctx->pd_lock);
	for (pp = &ctx->parents; (p = *pp); pp = &p->next) {
		if (&p->ibpd == ibpd) {
			*pp = p->next;
			pthread_mutex_unlock(&ctx->pd_lock);
			free(p);
			return 0;
		}
		extended |= p->protection == ibpd;
	}
	pthread_mutex_unlock(&ctx->pd_lock);
	if (extended)
		return EBUSY;
	/* The kernel refuses a stale handle (a copy of a freed PD). */
	err = ibv_cmd_dealloc_pd(ibpd);
	if (err)
		return err;
	free(ibpd);
	return 0;
}

/**
 * shca_pd_zalloc() - zeroed memory for an object made on @pd
 * @pd: a PD, a parent domain or NULL
 * @size: bytes
 * @type: SHCA_RES_TYPE_*
 * @a: set to who gives the memory back, for shca_pd_free()
 *
 * A parent domain's allocator is asked first (alignment 64); when it
 * answers IBV_ALLOCATOR_USE_DEFAULT, or for a plain PD, calloc() serves.
 *
 * Return: the memory, or NULL with errno set.
 */
void *shca_pd_zalloc(struct ibv_pd *pd, size_t size, uint32_t type,
		     struct shca_allocator *a)
{
	struct shca_parent *p = shca_parent_find(pd);
	void *ptr;

	memset(a, 0, sizeof(*a));
	if (p && p->alloc) {
		ptr = p->alloc(pd, p->pd_context, size, 64, type);
		if (ptr != IBV_ALLOCATOR_USE_DEFAULT) {
			if (!ptr) {
				errno = ENOMEM;
				return NULL;
			}
			memset(ptr, 0, size);
			a->free = p->free;
			a->pd = pd;
			a->pd_context = p->pd_context;
			return ptr;
		}
	}
	ptr = calloc(1, size);
	if (!ptr)
		errno = ENOMEM;
	return ptr;
}

/**
 * shca_pd_free() - give back memory of shca_pd_zalloc()
 * @ptr: the memory, or NULL
 * @type: its SHCA_RES_TYPE_*
 * @a: who gives it back, as shca_pd_zalloc() said (a copy: @ptr may
 *	hold the original)
 */
void shca_pd_free(void *ptr, uint32_t type, struct shca_allocator a)
{
	if (!ptr)
		return;
	if (a.free)
		a.free(a.pd, a.pd_context, ptr, type);
	else
		free(ptr);
}

/* ---- memory regions ------------------------------------------------------ */

static struct ibv_mr *shca_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
				  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * ibv_advise_mr(): prefetch ranges of on-demand paging MRs, at once with
 * IBV_ADVISE_MR_FLAG_FLUSH, else in the background (the kernel checks
 * the keys first).
 */
static int shca_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			  uint32_t flags, struct ibv_sge *sg_list,
			  uint32_t num_sge)
{
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

static struct ibv_mr *shca_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
					 size_t length, uint64_t iova, int fd,
					 int access)
{
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = shca_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	vmr->access = access;
	return &vmr->ibv_mr;
}

static int shca_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		errno = err;
		return err;
	}
	if (flags & IBV_REREG_MR_CHANGE_ACCESS)
		vmr->access = access;
	return 0;
}

static int shca_dereg_mr(struct verbs_mr *vmr)
{
	int err;

	err = ibv_cmd_dereg_mr(vmr);
	if (err)
		return err;
	free(vmr);
	return 0;
}

/* ---- device memory ------------------------------------------------------- */

/*
 * 0 if [offset, offset + length) lies inside @dm and both are multiples
 * of 4 bytes (device memory is accessed in 32-bit words, as on mlx5),
 * else EINVAL; nothing is copied then.
 */
static int shca_dm_check(const struct shca_dm *dm, uint64_t offset,
			 size_t length)
{
	if ((offset | length) & 3 || offset > dm->length ||
	    length > dm->length - offset) {
		errno = EINVAL;
		return EINVAL;
	}
	return 0;
}

static int shca_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			     const void *host_addr, size_t length)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	int err;

	err = shca_dm_check(dm, dm_offset, length);
	if (err)
		return err;
	memcpy((char *)dm->addr + dm_offset, host_addr, length);
	return 0;
}

static int shca_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			       uint64_t dm_offset, size_t length)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	int err;

	err = shca_dm_check(dm, dm_offset, length);
	if (err)
		return err;
	memcpy(host_addr, (char *)dm->addr + dm_offset, length);
	return 0;
}

/* ---- memory windows ------------------------------------------------------ */

/*
 * Windows live in the kernel's key table, next to the MRs. Binding one
 * and local invalidation are work requests that uverbs' POST_SEND
 * command cannot carry: they go to the send queue through the driver
 * method SOFTHCA_IB_METHOD_QP_POST_LOCAL (<rdma/softhca-abi.h>), one per
 * call, in order with the requests around them.
 */
static struct ibv_mw *shca_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int err;

	mw = calloc(1, sizeof(*mw));
	if (!mw) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (err) {
		free(mw);
		errno = err;
		return NULL;
	}
	return mw;
}

static int shca_dealloc_mw(struct ibv_mw *mw)
{
	int err = ibv_cmd_dealloc_mw(mw);

	if (err)
		return err;
	free(mw);
	return 0;
}

/*
 * Run the driver method @method of UVERBS_OBJECT_QP: @hdr is followed in
 * memory by its @n attributes (ids, lengths and data set), all mandatory.
 * Raw RDMA_VERBS_IOCTL on cmd_fd: libibverbs 44 exports no way to add a
 * driver method of its own. Returns 0 or an errno.
 */
static int shca_qp_method(struct ibv_qp *qp, uint16_t method,
			  struct ib_uverbs_ioctl_hdr *hdr, uint16_t n)
{
	for (uint16_t i = 0; i < n; i++)
		hdr->attrs[i].flags = UVERBS_ATTR_F_MANDATORY;
	hdr->length = sizeof(*hdr) + n * sizeof(hdr->attrs[0]);
	hdr->object_id = UVERBS_OBJECT_QP;
	hdr->method_id = method;
	hdr->num_attrs = n;
	hdr->driver_id = RDMA_DRIVER_UNKNOWN;
	return ioctl(qp->context->cmd_fd, RDMA_VERBS_IOCTL, hdr) ? errno : 0;
}

/* Post one local operation to @qp's send queue; @mw, @mr may be NULL. */
static int shca_post_local(struct ibv_qp *qp,
			   const struct softhca_local_wr *lwr,
			   const struct ibv_mw *mw, const struct ibv_mr *mr)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[4];
	} cmd;
	uint16_t n = 0;

	memset(&cmd, 0, sizeof(cmd));
	cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_QP;
	cmd.attr[n++].data = qp->handle;
	cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_WR;
	cmd.attr[n].len = sizeof(*lwr);
	cmd.attr[n++].data = (uintptr_t)lwr;
	if (mw) {
		cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_MW;
		cmd.attr[n++].data = mw->handle;
	}
	if (mr) {
		cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_MR;
		cmd.attr[n++].data = mr->handle;
	}
	return shca_qp_method(qp, SOFTHCA_IB_METHOD_QP_POST_LOCAL, &cmd.hdr, n);
}

/* ibv_bind_mw(): type 1 windows; a zero length unbinds. */
static int shca_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
			struct ibv_mw_bind *mw_bind)
{
	const struct ibv_mw_bind_info *bi = &mw_bind->bind_info;
	struct softhca_local_wr lwr = {
		.wr_id = mw_bind->wr_id,
		.opcode = SOFTHCA_LOCAL_BIND_MW,
		.send_flags = mw_bind->send_flags,
		.key = ibv_inc_rkey(mw->rkey),
		.addr = bi->addr,
		.length = bi->length,
		.access = bi->mw_access_flags,
	};
	int err;

	if (mw->type != IBV_MW_TYPE_1 || (bi->length && !bi->mr))
		return EINVAL;
	err = shca_post_local(qp, &lwr, mw, bi->length ? bi->mr : NULL);
	if (!err)
		mw->rkey = lwr.key;
	return err;
}

static bool shca_wr_is_local(const struct ibv_send_wr *wr)
{
	return wr->opcode == IBV_WR_BIND_MW || wr->opcode == IBV_WR_LOCAL_INV;
}

/* IBV_WR_BIND_MW (type 2 windows) or IBV_WR_LOCAL_INV. */
static int shca_post_one_local(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct softhca_local_wr lwr = {
		.wr_id = wr->wr_id,
		.send_flags = wr->send_flags,
	};
	struct ibv_mw *mw = wr->bind_mw.mw;
	int err;

	if (wr->opcode == IBV_WR_LOCAL_INV) {
		lwr.opcode = SOFTHCA_LOCAL_INV;
		lwr.key = wr->invalidate_rkey;
		return shca_post_local(qp, &lwr, NULL, NULL);
	}
	if (!mw || mw->type != IBV_MW_TYPE_2 || !wr->bind_mw.bind_info.mr)
		return EINVAL;
	lwr.opcode = SOFTHCA_LOCAL_BIND_MW;
	lwr.key = wr->bind_mw.rkey;
	lwr.addr = wr->bind_mw.bind_info.addr;
	lwr.length = wr->bind_mw.bind_info.length;
	lwr.access = wr->bind_mw.bind_info.mw_access_flags;
	err = shca_post_local(qp, &lwr, mw, wr->bind_mw.bind_info.mr);
	if (!err)
		mw->rkey = lwr.key;
	return err;
}

/*
 * A command buffer holding one driver attribute, to link into a core
 * command: libibverbs merges it into its ioctl and writes it back.
 */
struct shca_link {
	struct ibv_command_buffer cmdb;
	struct ib_uverbs_attr attr;	/* cmdb.hdr.attrs[0] */
};

static_assert(offsetof(struct shca_link, attr) ==
	      offsetof(struct shca_link, cmdb.hdr.attrs),
	      "the attribute must be hdr.attrs[0]");

/* @link carries an output attribute: @len bytes the kernel writes to @out. */
static void shca_link_init(struct shca_link *link, uint16_t object,
			   uint16_t method, uint16_t attr_id, void *out,
			   uint16_t len)
{
	memset(link, 0, sizeof(*link));
	link->cmdb.hdr.object_id = object;
	link->cmdb.hdr.method_id = method;
	link->cmdb.uhw_in_idx = 0xff;
	link->cmdb.uhw_out_idx = 0xff;
	link->attr.attr_id = attr_id;
	link->attr.flags = UVERBS_ATTR_F_MANDATORY;
	link->attr.len = len;
	link->attr.data = (uintptr_t)out;
	link->cmdb.next_attr = &link->attr + 1;
	link->cmdb.last_attr = &link->attr + 1;
}

static struct ibv_dm *shca_alloc_dm(struct ibv_context *ibctx,
				    struct ibv_alloc_dm_attr *attr)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);
	size_t page = ctx->page_size;
	uint64_t mmap_offset = 0;
	struct shca_link link;
	struct shca_dm *dm;
	int err;

	/* No comp_mask bits are defined for ibv_alloc_dm_attr in rdma-core 44. */
	if (attr->comp_mask || !attr->length ||
	    attr->length > SIZE_MAX - (page - 1)) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm) {
		errno = ENOMEM;
		return NULL;
	}
	dm->length = attr->length;
	dm->map_len = (attr->length + page - 1) & ~(page - 1);

	/* The kernel says where the allocation is mapped. */
	shca_link_init(&link, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC,
		       SOFTHCA_IB_ATTR_ALLOC_DM_MMAP_OFFSET, &mmap_offset,
		       sizeof(mmap_offset));
	err = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, &link.cmdb);
	if (err)
		goto err_free;

	dm->addr = mmap(NULL, dm->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			ibctx->cmd_fd, (off_t)mmap_offset);
	if (dm->addr == MAP_FAILED) {
		err = errno;
		goto err_free_dm;
	}

	dm->vdm.dm.memcpy_to_dm = shca_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = shca_memcpy_from_dm;
	return &dm->vdm.dm;

err_free_dm:
	ibv_cmd_free_dm(&dm->vdm);
err_free:
	free(dm);
	errno = err;
	return NULL;
}

static int shca_free_dm(struct ibv_dm *ibdm)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	int err;

	/* Fails (EBUSY) while an MR still uses it; the DM stays usable then. */
	err = ibv_cmd_free_dm(&dm->vdm);
	if (err)
		return err;
	munmap(dm->addr, dm->map_len);
	free(dm);
	return 0;
}

static struct ibv_mr *shca_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
				     uint64_t dm_offset, size_t length,
				     unsigned int access)
{
	struct shca_dm *dm = to_shca_dm(ibdm);
	struct verbs_mr *vmr;
	int err;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	err = ibv_cmd_reg_dm_mr(pd, &dm->vdm, dm_offset, length, access, vmr,
				NULL);
	if (err) {
		free(vmr);
		errno = err;
		return NULL;
	}
	vmr->access = access;
	return &vmr->ibv_mr;
}

/* ---- completion queues --------------------------------------------------- */

/*
 * The kernel writes completions into a ring this process maps (struct
 * softhca_cq_ring in <rdma/softhca-abi.h>) and publishes them with the
 * producer index; poll_cq reads them and returns the slots with the
 * consumer index. Completions carry QP numbers. CQs of ibv_create_cq_ex()
 * are the same rings, read through the ibv_cq_ex calls (softhca_ex.c).
 * resize_cq is not offered; libibverbs answers EOPNOTSUPP for it.
 */
struct shca_create_cq_resp {
	struct ib_uverbs_create_cq_resp ibv_resp;
	struct softhca_create_cq_resp drv;
};

static struct shca_cq *shca_cq_create(struct ibv_context *ibctx, int cqe,
				      struct ibv_comp_channel *channel,
				      int comp_vector, struct ibv_pd *pd)
{
	struct shca_create_cq_resp resp;
	struct shca_allocator a;
	struct ibv_create_cq cmd;
	struct shca_cq *cq;
	int err;

	cq = shca_pd_zalloc(pd, sizeof(*cq), SHCA_RES_TYPE_CQ, &a);
	if (!cq)
		return NULL;
	cq->alloc = a;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd, sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err)
		goto err_free;
	if (!resp.drv.slots || resp.drv.slots & (resp.drv.slots - 1) ||
	    resp.drv.mmap_size < sizeof(struct softhca_cq_ring) +
				 (size_t)resp.drv.slots *
				 sizeof(struct softhca_cqe)) {
		err = EPROTO;
		goto err_destroy;
	}
	cq->map_len = resp.drv.mmap_size;
	cq->mask = resp.drv.slots - 1;
	cq->ring = mmap(NULL, cq->map_len, PROT_READ | PROT_WRITE, MAP_SHARED,
			ibctx->cmd_fd, (off_t)resp.drv.mmap_offset);
	if (cq->ring == MAP_FAILED) {
		err = errno;
		goto err_destroy;
	}
	cq->consumer = cq->ring->consumer;
	pthread_spin_init(&cq->lock, PTHREAD_PROCESS_PRIVATE);
	return cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	shca_pd_free(cq, SHCA_RES_TYPE_CQ, a);
	errno = err;
	return NULL;
}

static struct ibv_cq *shca_create_cq(struct ibv_context *ibctx, int cqe,
				     struct ibv_comp_channel *channel,
				     int comp_vector)
{
	struct shca_cq *cq = shca_cq_create(ibctx, cqe, channel, comp_vector,
					    NULL);

	return cq ? &cq->vcq.cq : NULL;
}

/* libibverbs' ibv_create_cq_ex() sets the channel and cq_context after. */
static struct ibv_cq_ex *shca_create_cq_ex(struct ibv_context *ibctx,
					   struct ibv_cq_init_attr_ex *attr)
{
	struct shca_cq *cq;
	int err;

	err = shca_cq_ex_check(attr);
	if (err) {
		errno = err;
		return NULL;
	}
	if (attr->cqe > INT32_MAX) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) &&
	    (!attr->parent_domain || attr->parent_domain->context != ibctx ||
	     !shca_parent_find(attr->parent_domain))) {
		errno = EINVAL;		/* a parent domain of this context */
		return NULL;
	}
	cq = shca_cq_create(ibctx, attr->cqe, attr->channel, attr->comp_vector,
			    (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) ?
			    attr->parent_domain : NULL);
	if (!cq)
		return NULL;
	shca_cq_ex_init(cq);
	return &cq->vcq.cq_ex;
}

static void shca_wc_from_cqe(struct ibv_wc *wc, const struct softhca_cqe *e)
{
	memset(wc, 0, sizeof(*wc));
	wc->wr_id = e->wr_id;
	wc->status = e->status;
	wc->opcode = e->opcode;
	wc->byte_len = e->byte_len;
	wc->qp_num = e->qp_num;
	wc->src_qp = e->src_qp;
	wc->pkey_index = e->pkey_index;
	wc->sl = e->sl;
	wc->wc_flags = shca_cqe_wc_flags(e);
	if (e->flags & SOFTHCA_CQE_WITH_IMM)
		wc->imm_data = e->ex;	/* network order, as the kernel keeps it */
	else if (e->flags & SOFTHCA_CQE_WITH_INV)
		wc->invalidated_rkey = e->ex;
}

static int shca_poll_cq(struct ibv_cq *ibcq, int num_entries,
			struct ibv_wc *wc)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	uint32_t producer;
	int n = 0;

	pthread_spin_lock(&cq->lock);
	/* Entries up to the producer index are complete (release/acquire). */
	producer = __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE);
	while (n < num_entries && cq->consumer != producer) {
		shca_wc_from_cqe(&wc[n++],
				 &cq->ring->cqe[cq->consumer & cq->mask]);
		cq->consumer++;
	}
	if (n)
		__atomic_store_n(&cq->ring->consumer, cq->consumer,
				 __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
	return n;
}

/*
 * Drop every completion of QP @qp_num that the process has not polled:
 * the QP was reset or destroyed, and its old completions must not be
 * reported against a QP that reuses the number (a hardware provider does
 * the same). The kernel only writes at and after the producer index, so
 * completions that stay are moved towards it and the freed slots are
 * returned by advancing the consumer index.
 */
static void shca_cq_clean(struct ibv_cq *ibcq, uint32_t qp_num)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	uint32_t producer, i, dropped = 0;
	struct softhca_cqe *e;

	pthread_spin_lock(&cq->lock);
	producer = __atomic_load_n(&cq->ring->producer, __ATOMIC_ACQUIRE);
	for (i = producer; i != cq->consumer;) {
		i--;
		e = &cq->ring->cqe[i & cq->mask];
		if (e->qp_num == qp_num)
			dropped++;
		else if (dropped)
			cq->ring->cqe[(i + dropped) & cq->mask] = *e;
	}
	if (dropped) {
		cq->consumer += dropped;
		__atomic_store_n(&cq->ring->consumer, cq->consumer,
				 __ATOMIC_RELEASE);
	}
	pthread_spin_unlock(&cq->lock);
}

static void shca_qp_clean_cqs(struct ibv_qp *ibqp)
{
	shca_cq_clean(ibqp->send_cq, ibqp->qp_num);
	if (ibqp->recv_cq != ibqp->send_cq)
		shca_cq_clean(ibqp->recv_cq, ibqp->qp_num);
}

static int shca_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

static int shca_destroy_cq(struct ibv_cq *ibcq)
{
	struct shca_cq *cq = to_shca_cq(ibcq);
	int err;

	err = ibv_cmd_destroy_cq(ibcq);
	if (err)
		return err;
	munmap(cq->ring, cq->map_len);
	pthread_spin_destroy(&cq->lock);
	shca_pd_free(cq, SHCA_RES_TYPE_CQ, cq->alloc);
	return 0;
}

/* ---- queue pairs --------------------------------------------------------- */

/*
 * What create_qp_ex accepts: RC, UC and UD queue pairs on a PD, without
 * XRC, receive hashing or TSO; with the ibv_qp_ex work-request API for the
 * send operations the kernel's POST_SEND carries (softhca_ex.c).
 * Everything else is EOPNOTSUPP here rather than a kernel refusal with a
 * vaguer errno.
 */
#define SHCA_QP_INIT_ATTR_MASK	(IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS | \
				 IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)

struct shca_create_qp_cmd {
	struct ibv_create_qp ibv_cmd;
	struct softhca_create_qp drv;
};

struct shca_create_qp_resp {
	struct ib_uverbs_create_qp_resp ibv_resp;
	struct softhca_create_qp_resp drv;
};

/* Map a ring the kernel granted; EPROTO if its geometry makes no sense. */
static int shca_wq_map(struct ibv_context *ibctx, struct shca_wq *wq,
		       uint64_t offset, uint32_t size, uint32_t slots,
		       uint32_t slot_size, size_t min_slot, uint32_t max_sge)
{
	if (!slots || (slots & (slots - 1)) || slot_size < min_slot ||
	    (slot_size - min_slot) / sizeof(struct ib_uverbs_sge) < max_sge ||
	    size < SOFTHCA_WQ_RING_HDR + (uint64_t)slots * slot_size)
		return EPROTO;
	wq->ring = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED,
			ibctx->cmd_fd, (off_t)offset);
	if (wq->ring == MAP_FAILED) {
		wq->ring = NULL;
		return errno;
	}
	wq->map_len = size;
	wq->slots = slots;
	wq->slot_size = slot_size;
	wq->max_sge = max_sge;
	wq->prod = wq->ring->consumer;
	wq->reset = true;
	pthread_mutex_init(&wq->lock, NULL);
	return 0;
}

static void shca_wq_unmap(struct shca_wq *wq)
{
	if (!wq->ring)
		return;
	munmap(wq->ring, wq->map_len);
	pthread_mutex_destroy(&wq->lock);
	wq->ring = NULL;
}

/* The rings the kernel granted in @r; on failure none stays mapped. */
static int shca_qp_map_rings(struct ibv_context *ibctx, struct shca_qp *qp,
			     const struct softhca_create_qp_resp *r,
			     const struct ibv_qp_cap *cap)
{
	int err;

	if (r->flags & SOFTHCA_QP_SQ_RING) {
		err = shca_wq_map(ibctx, &qp->sq, r->sq_mmap_offset,
				  r->sq_mmap_size, r->sq_slots, r->sq_slot_size,
				  sizeof(struct softhca_swqe), cap->max_send_sge);
		if (err)
			return err;
		qp->sq.max_wr = cap->max_send_wr;
	}
	if (r->flags & SOFTHCA_QP_RQ_RING) {
		err = shca_wq_map(ibctx, &qp->rq, r->rq_mmap_offset,
				  r->rq_mmap_size, r->rq_slots, r->rq_slot_size,
				  sizeof(struct softhca_rwqe), cap->max_recv_sge);
		if (err) {
			shca_wq_unmap(&qp->sq);
			return err;
		}
		qp->rq.max_wr = cap->max_recv_wr;
	}
	return 0;
}

static struct ibv_qp *shca_create_qp_ex(struct ibv_context *ibctx,
					struct ibv_qp_init_attr_ex *attr)
{
	struct shca_create_qp_resp resp;
	struct ibv_qp_init_attr_ex attr_ex;
	struct shca_create_qp_cmd cmd;
	struct shca_allocator a;
	struct shca_qp *qp;
	int err;

	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd) {
		errno = EINVAL;
		return NULL;
	}
	if ((attr->comp_mask & ~SHCA_QP_INIT_ATTR_MASK) ||
	    ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	     attr->create_flags) ||
	    (attr->qp_type != IBV_QPT_RC && attr->qp_type != IBV_QPT_UC &&
	     attr->qp_type != IBV_QPT_UD)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->send_cq || !attr->recv_cq) {
		errno = EINVAL;
		return NULL;
	}
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) {
		err = shca_qp_ex_check(attr->qp_type, attr->send_ops_flags);
		if (err) {
			errno = err;
			return NULL;
		}
	}

	qp = shca_pd_zalloc(attr->pd, sizeof(*qp), SHCA_RES_TYPE_QP, &a);
	if (!qp)
		return NULL;
	qp->alloc = a;
	/*
	 * libibverbs' write path refuses CREATE_FLAGS even when they are 0;
	 * the send ops are the provider's business.
	 */
	attr_ex = *attr;
	attr_ex.comp_mask &= ~(IBV_QP_INIT_ATTR_CREATE_FLAGS |
			       IBV_QP_INIT_ATTR_SEND_OPS_FLAGS);
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv.flags = to_shca_ctx(ibctx)->rings;
	err = ibv_cmd_create_qp_ex(ibctx, &qp->vqp, &attr_ex, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (err) {
		shca_pd_free(qp, SHCA_RES_TYPE_QP, a);
		errno = err;
		return NULL;
	}
	err = shca_qp_map_rings(ibctx, qp, &resp.drv, &attr_ex.cap);
	if (err) {
		ibv_cmd_destroy_qp(&qp->vqp.qp);
		shca_pd_free(qp, SHCA_RES_TYPE_QP, a);
		errno = err;
		return NULL;
	}
	attr->cap = attr_ex.cap;	/* what the kernel granted */
	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		shca_qp_ex_init(qp, attr);
	return &qp->vqp.qp;
}

static struct ibv_qp *shca_create_qp(struct ibv_pd *pd,
				     struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex;
	struct ibv_qp *qp;

	memset(&attr_ex, 0, sizeof(attr_ex));
	attr_ex.qp_context = attr->qp_context;
	attr_ex.send_cq = attr->send_cq;
	attr_ex.recv_cq = attr->recv_cq;
	attr_ex.srq = attr->srq;
	attr_ex.cap = attr->cap;
	attr_ex.qp_type = attr->qp_type;
	attr_ex.sq_sig_all = attr->sq_sig_all;
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;

	qp = shca_create_qp_ex(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

static int shca_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

static int shca_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
			  int attr_mask)
{
	struct shca_wq *rq = &to_shca_qp(ibqp)->rq;
	struct ibv_modify_qp cmd;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	err = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (!err && (attr_mask & IBV_QP_STATE) && rq->ring) {
		pthread_mutex_lock(&rq->lock);
		rq->reset = attr->qp_state == IBV_QPS_RESET;
		pthread_mutex_unlock(&rq->lock);
	}
	/* RESET empties the queues, and so the QP's completions. */
	if (!err && (attr_mask & IBV_QP_STATE) &&
	    attr->qp_state == IBV_QPS_RESET)
		shca_qp_clean_cqs(ibqp);
	return err;
}

static int shca_destroy_qp(struct ibv_qp *ibqp)
{
	int err;

	err = ibv_cmd_destroy_qp(ibqp);
	if (err)
		return err;
	/* The kernel produces nothing for the QP any more. */
	shca_qp_clean_cqs(ibqp);
	shca_wq_unmap(&to_shca_qp(ibqp)->sq);
	shca_wq_unmap(&to_shca_qp(ibqp)->rq);
	shca_qp_ex_fini(to_shca_qp(ibqp));
	shca_pd_free(to_shca_qp(ibqp), SHCA_RES_TYPE_QP,
		     to_shca_qp(ibqp)->alloc);
	return 0;
}

/* Ring a mapped queue's doorbell (SOFTHCA_IB_METHOD_QP_DOORBELL). */
static int shca_doorbell(struct ibv_qp *qp, uint32_t queue, uint32_t producer)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[3];
	} cmd;
	uint16_t n = 0;

	memset(&cmd, 0, sizeof(cmd));
	cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_QP;
	cmd.attr[n++].data = qp->handle;
	cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_QUEUE;
	cmd.attr[n].len = sizeof(queue);
	memcpy(&cmd.attr[n++].data, &queue, sizeof(queue));
	if (queue == SOFTHCA_DB_SQ) {
		cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_PRODUCER;
		cmd.attr[n].len = sizeof(producer);
		memcpy(&cmd.attr[n++].data, &producer, sizeof(producer));
	}
	return shca_qp_method(qp, SOFTHCA_IB_METHOD_QP_DOORBELL, &cmd.hdr, n);
}

/*
 * A request a send-ring slot holds: everything but binds and LOCAL_INV
 * (shca_post_one_local()), within the slot's SGEs; on UD, with an AH the
 * kernel numbered.
 */
static bool shca_wr_fits_ring(const struct ibv_qp *qp,
			      const struct shca_wq *sq,
			      const struct ibv_send_wr *wr)
{
	if (qp->qp_type == IBV_QPT_UD &&
	    (!wr->wr.ud.ah || !to_shca_ah(wr->wr.ud.ah)->num))
		return false;
	return !shca_wr_is_local(wr) && wr->num_sge >= 0 &&
	       (uint32_t)wr->num_sge <= sq->max_sge;
}

static void shca_swqe_write(const struct ibv_qp *qp, struct softhca_swqe *s,
			    const struct ibv_send_wr *wr)
{
	s->wr_id = wr->wr_id;
	s->opcode = wr->opcode;
	s->send_flags = wr->send_flags;
	s->num_sge = wr->num_sge;
	s->ex = 0;
	if (wr->opcode == IBV_WR_SEND_WITH_IMM ||
	    wr->opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		s->ex = wr->imm_data;
	else if (wr->opcode == IBV_WR_SEND_WITH_INV)
		s->ex = wr->invalidate_rkey;
	if (qp->qp_type == IBV_QPT_UD) {
		s->ah = to_shca_ah(wr->wr.ud.ah)->num;
		s->remote_qpn = wr->wr.ud.remote_qpn;
		s->remote_qkey = wr->wr.ud.remote_qkey;
	} else if (wr->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		   wr->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		s->remote_addr = wr->wr.atomic.remote_addr;
		s->compare_add = wr->wr.atomic.compare_add;
		s->swap = wr->wr.atomic.swap;
		s->rkey = wr->wr.atomic.rkey;
	} else {
		s->remote_addr = wr->wr.rdma.remote_addr;
		s->rkey = wr->wr.rdma.rkey;
	}
	for (int i = 0; i < wr->num_sge; i++) {
		s->sge[i].addr = wr->sg_list[i].addr;
		s->sge[i].length = wr->sg_list[i].length;
		s->sge[i].lkey = wr->sg_list[i].lkey;
	}
}

/*
 * Ring the send doorbell for the @n slots written since the kernel's
 * consumer, the first holding @first. On a refusal the kernel's consumer
 * names the refused slot: *@bad_wr is its request, and the slots after
 * it are forgotten (the producer goes back to the consumer).
 */
static int shca_sq_ring(struct ibv_qp *ibqp, struct ibv_send_wr *first,
			uint32_t n, struct ibv_send_wr **bad_wr)
{
	struct shca_wq *sq = &to_shca_qp(ibqp)->sq;
	uint32_t cons, taken;
	int err;

	if (!n)
		return 0;
	err = shca_doorbell(ibqp, SOFTHCA_DB_SQ, sq->prod);
	if (!err)
		return 0;
	cons = __atomic_load_n(&sq->ring->consumer, __ATOMIC_ACQUIRE);
	taken = cons - (sq->prod - n);
	if (taken > n)
		taken = 0;
	for (*bad_wr = first; taken--; *bad_wr = (*bad_wr)->next)
		;
	sq->prod = cons;
	return err;
}

/* One request the send ring cannot carry, by the system call path. */
static int shca_post_send_cmd(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			      struct ibv_send_wr **bad_wr)
{
	struct ibv_send_wr *next = wr->next;
	int err;

	if (shca_wr_is_local(wr)) {
		err = shca_post_one_local(ibqp, wr);
		if (err)
			*bad_wr = wr;
		return err;
	}
	/* The request alone: the caller's chain is restored at once. */
	wr->next = NULL;
	err = ibv_cmd_post_send(ibqp, wr, bad_wr);
	wr->next = next;
	return err;
}

/*
 * The send ring: requests are written into slots and handed over with one
 * doorbell per call (or per ring full); the kernel takes them during
 * the doorbell, inline data included, so buffers may be reused as soon as
 * post_send returns. Requests a slot cannot hold go by the system call
 * path, in order.
 */
static int shca_post_send_ring(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
			       struct ibv_send_wr **bad_wr)
{
	struct shca_wq *sq = &to_shca_qp(ibqp)->sq;
	struct ibv_send_wr *first = wr;
	uint32_t n = 0;
	int err = 0;

	pthread_mutex_lock(&sq->lock);
	for (; wr; wr = wr->next) {
		bool fits = shca_wr_fits_ring(ibqp, sq, wr);

		if (!fits || n == sq->slots) {
			err = shca_sq_ring(ibqp, first, n, bad_wr);
			n = 0;
			first = wr;
			if (err)
				break;
		}
		if (!fits) {
			err = shca_post_send_cmd(ibqp, wr, bad_wr);
			if (err)
				break;
			first = wr->next;
			continue;
		}
		shca_swqe_write(ibqp, shca_wq_slot(sq, sq->prod), wr);
		sq->prod++;
		n++;
	}
	if (!err)
		err = shca_sq_ring(ibqp, first, n, bad_wr);
	pthread_mutex_unlock(&sq->lock);
	return err;
}

/**
 * shca_post_send() - post a chain of send work requests
 * @ibqp: the QP
 * @wr: the chain
 * @bad_wr: set to the first request not posted
 *
 * With a send ring (shca_post_send_ring()) one doorbell per call;
 * without, one command per run of requests the POST_SEND command
 * carries, and one per memory-window bind or local invalidation
 * (shca_post_local()), in order. Either way the kernel validates the
 * requests and copies inline data from this process' memory before
 * post_send returns, so the caller may reuse an inline buffer at once.
 *
 * Return: 0 or an errno; the requests before *@bad_wr were posted.
 */
int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr)
{
	struct ibv_send_wr *last, *next;
	int err;

	if (to_shca_qp(ibqp)->sq.ring)
		return shca_post_send_ring(ibqp, wr, bad_wr);
	while (wr) {
		if (shca_wr_is_local(wr)) {
			err = shca_post_send_cmd(ibqp, wr, bad_wr);
			if (err)
				return err;
			wr = wr->next;
			continue;
		}
		for (last = wr; last->next && !shca_wr_is_local(last->next);
		     last = last->next)
			;
		next = last->next;
		if (!next)
			return ibv_cmd_post_send(ibqp, wr, bad_wr);
		/* The run alone: the caller's chain is restored at once. */
		last->next = NULL;
		err = ibv_cmd_post_send(ibqp, wr, bad_wr);
		last->next = next;
		if (err)
			return err;
		wr = next;
	}
	return 0;
}

/*
 * The receive ring: a receive is a slot and a producer store, with a
 * doorbell only when the kernel asked for one (a sender found the queue
 * empty, or the QP is in the error state and the receive must be
 * flushed). The kernel checks every slot again.
 */
static int shca_post_recv_ring(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			       struct ibv_recv_wr **bad_wr)
{
	struct shca_wq *rq = &to_shca_qp(ibqp)->rq;
	uint32_t cons, start;
	int err = 0;

	pthread_mutex_lock(&rq->lock);
	start = rq->prod;
	cons = __atomic_load_n(&rq->ring->consumer, __ATOMIC_ACQUIRE);
	for (; wr; wr = wr->next) {
		struct softhca_rwqe *s;

		if (rq->reset || wr->num_sge < 0 ||
		    (uint32_t)wr->num_sge > rq->max_sge) {
			err = EINVAL;
			break;
		}
		if (rq->prod - cons >= rq->max_wr) {
			cons = __atomic_load_n(&rq->ring->consumer,
					       __ATOMIC_ACQUIRE);
			if (rq->prod - cons >= rq->max_wr) {
				err = ENOMEM;
				break;
			}
		}
		s = shca_wq_slot(rq, rq->prod);
		s->wr_id = wr->wr_id;
		s->num_sge = wr->num_sge;
		for (int i = 0; i < wr->num_sge; i++) {
			s->sge[i].addr = wr->sg_list[i].addr;
			s->sge[i].length = wr->sg_list[i].length;
			s->sge[i].lkey = wr->sg_list[i].lkey;
		}
		rq->prod++;
	}
	if (rq->prod != start) {
		__atomic_store_n(&rq->ring->producer, rq->prod,
				 __ATOMIC_RELEASE);
		/* The producer before the flag; pairs with the kernel's. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		if (__atomic_load_n(&rq->ring->doorbell, __ATOMIC_RELAXED))
			shca_doorbell(ibqp, SOFTHCA_DB_RQ, 0);
	}
	pthread_mutex_unlock(&rq->lock);
	if (err)
		*bad_wr = wr;
	return err;
}

static int shca_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr)
{
	if (to_shca_qp(ibqp)->rq.ring)
		return shca_post_recv_ring(ibqp, wr, bad_wr);
	return ibv_cmd_post_recv(ibqp, wr, bad_wr);
}

/* Multicast attachments of UD QPs are kept by the kernel. */
static int shca_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			     uint16_t lid)
{
	return ibv_cmd_attach_mcast(qp, gid, lid);
}

static int shca_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			     uint16_t lid)
{
	return ibv_cmd_detach_mcast(qp, gid, lid);
}

/* ---- shared receive queues ---------------------------------------------- */

/*
 * SRQs live in the kernel like the QPs' queues: receive work requests go
 * through the kernel's POST_SRQ_RECV command.
 */
static struct ibv_srq *shca_create_srq(struct ibv_pd *pd,
				       struct ibv_srq_init_attr *attr)
{
	struct ib_uverbs_create_srq_resp resp;
	struct ibv_create_srq cmd;
	struct ibv_srq *srq;
	int err;

	srq = calloc(1, sizeof(*srq));
	if (!srq) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_srq(pd, srq, attr, &cmd, sizeof(cmd), &resp,
				 sizeof(resp));
	if (err) {
		free(srq);
		errno = err;
		return NULL;
	}
	return srq;
}

static int shca_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr,
			   int attr_mask)
{
	struct ibv_modify_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_modify_srq(srq, attr, attr_mask, &cmd, sizeof(cmd));
}

static int shca_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	memset(&cmd, 0, sizeof(cmd));
	return ibv_cmd_query_srq(srq, attr, &cmd, sizeof(cmd));
}

static int shca_destroy_srq(struct ibv_srq *srq)
{
	int err = ibv_cmd_destroy_srq(srq);

	if (err)
		return err;
	free(srq);
	return 0;
}

static int shca_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			      struct ibv_recv_wr **bad_wr)
{
	return ibv_cmd_post_srq_recv(srq, wr, bad_wr);
}

/* ---- address handles ---------------------------------------------------- */

struct shca_create_ah_resp {
	struct ib_uverbs_create_ah_resp ibv_resp;
	struct softhca_create_ah_resp drv;
};

/* The kernel numbers the AH for UD send-ring slots (0: it did not). */
static struct ibv_ah *shca_create_ah(struct ibv_pd *pd,
				     struct ibv_ah_attr *attr)
{
	struct shca_create_ah_resp resp;
	struct shca_ah *ah;
	int err;

	ah = calloc(1, sizeof(*ah));
	if (!ah) {
		errno = ENOMEM;
		return NULL;
	}
	memset(&resp, 0, sizeof(resp));
	err = ibv_cmd_create_ah(pd, &ah->ibah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (err) {
		free(ah);
		errno = err;
		return NULL;
	}
	ah->num = resp.drv.ah_num;
	return &ah->ibah;
}

static int shca_destroy_ah(struct ibv_ah *ibah)
{
	int err = ibv_cmd_destroy_ah(ibah);

	if (err)
		return err;
	free(to_shca_ah(ibah));
	return 0;
}

/* ---- context and device lifetime ----------------------------------------- */

static void shca_free_context(struct ibv_context *ibctx)
{
	struct shca_context *ctx = to_shca_ctx(ibctx);
	struct shca_parent *p;

	/* Parent domains the consumer did not deallocate. */
	while ((p = ctx->parents)) {
		ctx->parents = p->next;
		free(p);
	}
	pthread_mutex_destroy(&ctx->pd_lock);
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
}

static const struct verbs_context_ops shca_ctx_ops = {
	.advise_mr = shca_advise_mr,
	.alloc_dm = shca_alloc_dm,
	.alloc_mw = shca_alloc_mw,
	.alloc_parent_domain = shca_alloc_parent_domain,
	.alloc_pd = shca_alloc_pd,
	.attach_mcast = shca_attach_mcast,
	.bind_mw = shca_bind_mw,
	.create_ah = shca_create_ah,
	.create_cq = shca_create_cq,
	.create_cq_ex = shca_create_cq_ex,
	.create_qp = shca_create_qp,
	.create_qp_ex = shca_create_qp_ex,
	.create_srq = shca_create_srq,
	.dealloc_mw = shca_dealloc_mw,
	.dealloc_pd = shca_dealloc_pd,
	.dereg_mr = shca_dereg_mr,
	.destroy_ah = shca_destroy_ah,
	.destroy_cq = shca_destroy_cq,
	.destroy_qp = shca_destroy_qp,
	.destroy_srq = shca_destroy_srq,
	.detach_mcast = shca_detach_mcast,
	.free_context = shca_free_context,
	.free_dm = shca_free_dm,
	.modify_qp = shca_modify_qp,
	.modify_srq = shca_modify_srq,
	.poll_cq = shca_poll_cq,
	.post_recv = shca_post_recv,
	.post_send = shca_post_send,
	.post_srq_recv = shca_post_srq_recv,
	.query_device_ex = shca_query_device_ex,
	.query_port = shca_query_port,
	.query_qp = shca_query_qp,
	.query_srq = shca_query_srq,
	.reg_dm_mr = shca_reg_dm_mr,
	.reg_dmabuf_mr = shca_reg_dmabuf_mr,
	.reg_mr = shca_reg_mr,
	.req_notify_cq = shca_req_notify_cq,
	.rereg_mr = shca_rereg_mr,
};

static struct verbs_context *shca_alloc_context(struct ibv_device *ibdev,
						int cmd_fd, void *private_data)
{
	struct ib_uverbs_get_context_resp resp;
	struct ibv_get_context cmd;
	struct shca_context *ctx;
	struct verbs_device *vdev;
	long page;
	int err;

	/*
	 * Takes over cmd_fd: closed on failure, by verbs_uninit_context()
	 * later. The context sits at offset 0 (offsetof(.., vctx) == 0).
	 */
	ctx = _verbs_init_and_alloc_context(ibdev, cmd_fd, sizeof(*ctx), NULL,
					    RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	page = sysconf(_SC_PAGESIZE);
	if (page <= 0 || (page & (page - 1))) {
		err = EINVAL;
		goto err_uninit;
	}
	ctx->page_size = page;
	pthread_mutex_init(&ctx->pd_lock, NULL);
	/* SOFTHCA_RINGS=0: every post is a system call (benchmarks). */
	ctx->rings = SOFTHCA_QP_SQ_RING | SOFTHCA_QP_RQ_RING;
	if (getenv("SOFTHCA_RINGS") && !strcmp(getenv("SOFTHCA_RINGS"), "0"))
		ctx->rings = 0;

	memset(&cmd, 0, sizeof(cmd));
	err = shca_cmd_get_context(&ctx->vctx, &cmd, sizeof(cmd), &resp,
				   sizeof(resp));
	if (err)
		goto err_uninit;

	vdev = verbs_get_device(ibdev);
	if (vdev->sysfs &&
	    ibv_read_ibdev_sysfs_file(ctx->fw_ver, sizeof(ctx->fw_ver),
				      vdev->sysfs, "fw_ver") <= 0)
		ctx->fw_ver[0] = '\0';

	verbs_set_ops(&ctx->vctx, &shca_ctx_ops);
	return &ctx->vctx;

err_uninit:
	verbs_uninit_context(&ctx->vctx);
	free(ctx);
	errno = err;
	return NULL;
}

static struct verbs_device *shca_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct shca_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev) {
		errno = ENOMEM;
		return NULL;
	}
	return &dev->vdev;
}

static void shca_uninit_device(struct verbs_device *vdev)
{
	free(shca_container_of(vdev, struct shca_device, vdev));
}

/*
 * A softhca device reports RDMA_DRIVER_UNKNOWN (the kernel has no id for
 * out-of-tree drivers); what identifies it is its softhca_abi_version sysfs
 * attribute, which survives "rdma dev set ... name". A device holding
 * another version belongs to another build of softhca: refuse it, loudly,
 * rather than talk a different ABI.
 */
static bool shca_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	unsigned long ver;
	char value[16];
	char *end;

	if (sysfs_dev->driver_id != RDMA_DRIVER_UNKNOWN)
		return false;
	if (ibv_read_ibdev_sysfs_file(value, sizeof(value), sysfs_dev,
				      SOFTHCA_SYSFS_ABI_ATTR) <= 0)
		return false;

	errno = 0;
	ver = strtoul(value, &end, 10);
	if (errno || end == value || *end != '\0' ||
	    ver != SOFTHCA_UVERBS_ABI_VERSION) {
		fprintf(stderr,
			"libsofthca: warning: device %s has %s '%s', this provider supports %u; ignoring the device\n",
			sysfs_dev->ibdev_name, SOFTHCA_SYSFS_ABI_ATTR, value,
			SOFTHCA_UVERBS_ABI_VERSION);
		return false;
	}
	return true;
}

/* Never matches by itself (libibverbs skips id 0); match_device decides. */
static const struct verbs_match_ent shca_match_table[] = {
	{ .u.driver_id = RDMA_DRIVER_UNKNOWN, .kind = VERBS_MATCH_DRIVER_ID },
	{}
};

static const struct verbs_device_ops shca_dev_ops = {
	.name = "softhca",
	.match_min_abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	.match_max_abi_version = SOFTHCA_UVERBS_ABI_VERSION,
	.match_table = shca_match_table,
	.match_device = shca_match_device,
	.alloc_device = shca_alloc_device,
	.uninit_device = shca_uninit_device,
	.alloc_context = shca_alloc_context,
};

SHCA_PROVIDER_DRIVER(shca_dev_ops);
