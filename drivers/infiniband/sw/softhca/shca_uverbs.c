// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - what user processes reach beyond the standard verbs: the
 * memory they map (CQ and QP rings, device memory) and the driver's own
 * uverbs methods (the DM's mapping offset, POST_LOCAL for memory-window
 * binds and local invalidation, the doorbell of mapped rings). The ABI
 * is include/uapi/rdma/softhca-abi.h.
 */

#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <rdma/ib_verbs.h>
#include <rdma/softhca-abi.h>
#include <rdma/uverbs_ioctl.h>
#define UVERBS_MODULE_NAME softhca_ib
#include <rdma/uverbs_named_ioctl.h>
#include <rdma/uverbs_std_types.h>

#include "shca_verbs.h"

/* ---- mappings -------------------------------------------------------------- */

/*
 * Offer @size bytes at @addr for the process owning @ibuc to map, at an
 * offset the core chooses. On success the entry owns the
 * memory: shca_mmap_free() releases it once the object dropped the entry
 * and no mapping call uses it any more.
 */
static struct shca_mmap_entry *
shca_mmap_insert(struct ib_ucontext *ibuc, enum shca_mmap_kind kind,
		 unsigned long addr, u64 size)
{
	struct shca_mmap_entry *entry;
	int err;

	entry = shca_inject_fault() ? NULL :
		kzalloc(sizeof(*entry), GFP_KERNEL_ACCOUNT);
	if (!entry)
		return ERR_PTR(-ENOMEM);
	entry->kind = kind;
	entry->sdev = to_shca_dev(ibuc->device);
	entry->addr = addr;
	entry->size = size;
	err = rdma_user_mmap_entry_insert(ibuc, &entry->rdma_entry, size);
	if (err) {
		kfree(entry);
		return ERR_PTR(err);
	}
	return entry;
}

/**
 * shca_dm_mmap_insert() - offer a user DM to its process to map
 * @ibuc: the process's context
 * @dm: the device memory, just allocated
 * @attrs: the DM_ALLOC call, which returns the offset to map
 *
 * The core picks the offset (SOFTHCA_IB_ATTR_ALLOC_DM_MMAP_OFFSET). The
 * range belongs to the mmap entry afterwards, or is back in the arena if
 * this fails.
 *
 * Return: 0 or a negative errno.
 */
int shca_dm_mmap_insert(struct ib_ucontext *ibuc, struct shca_dm *dm,
			struct uverbs_attr_bundle *attrs)
{
	struct shca_mmap_entry *entry;
	u64 offset;
	int err;

	entry = shca_mmap_insert(ibuc, SHCA_MMAP_DM, dm->addr, dm->alloc_size);
	if (IS_ERR(entry)) {
		shca_dm_free(to_shca_dev(ibuc->device), dm->addr,
			     dm->alloc_size);
		return PTR_ERR(entry);
	}
	offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	err = uverbs_copy_to(attrs, SOFTHCA_IB_ATTR_ALLOC_DM_MMAP_OFFSET,
			     &offset, sizeof(offset));
	if (err) {
		/* The entry owns the range now and returns it to the arena. */
		rdma_user_mmap_entry_remove(&entry->rdma_entry);
		return err;
	}
	dm->mmap = entry;
	return 0;
}

/* Map the vmalloc()ed ring of a user CQ or QP, page by page. */
static int shca_mmap_vmalloc(struct vm_area_struct *vma, unsigned long addr)
{
	unsigned long off;
	int err;

	vm_flags_set(vma, VM_DONTEXPAND);
	for (off = 0; off < vma->vm_end - vma->vm_start; off += PAGE_SIZE) {
		err = vm_insert_page(vma, vma->vm_start + off,
				     vmalloc_to_page((void *)(addr + off)));
		if (err)
			return err;
	}
	return 0;
}

/**
 * shca_mmap() - the mmap verb: a process maps a ring or device memory
 * @ibuc: the process's context
 * @vma: the mapping, at the offset an mmap entry was offered at
 *
 * Return: 0 or a negative errno (-EINVAL for an unknown offset or a
 * private mapping).
 */
int shca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *rdma_entry;
	struct shca_mmap_entry *entry;
	int err;

	/* The core checks the length matches the entry's. */
	rdma_entry = rdma_user_mmap_entry_get(ibuc, vma);
	if (!rdma_entry)
		return -EINVAL;
	entry = container_of(rdma_entry, struct shca_mmap_entry, rdma_entry);
	if (!(vma->vm_flags & VM_SHARED)) {
		/* A private copy of device memory or a ring makes no sense. */
		err = -EINVAL;
	} else if (entry->kind == SHCA_MMAP_CQ || entry->kind == SHCA_MMAP_WQ) {
		/*
		 * The mapping holds references on the pages: they outlive
		 * the CQ or QP (and the vfree() in shca_mmap_free()) until
		 * the process unmaps them.
		 */
		err = shca_mmap_vmalloc(vma, entry->addr);
	} else {
		/* Ordinary cached memory: the "device" is the CPU. */
		err = rdma_user_mmap_io(ibuc, vma, PHYS_PFN(__pa(entry->addr)),
					entry->size, vma->vm_page_prot,
					rdma_entry);
	}
	rdma_user_mmap_entry_put(rdma_entry);
	return err;
}

/**
 * shca_mmap_free() - the mmap_free verb: an mmap entry's last user is gone
 * @rdma_entry: the entry; what it offered is freed (a ring) or returned
 *	to the device-memory arena
 */
void shca_mmap_free(struct rdma_user_mmap_entry *rdma_entry)
{
	struct shca_mmap_entry *entry =
		container_of(rdma_entry, struct shca_mmap_entry, rdma_entry);

	if (entry->kind == SHCA_MMAP_CQ || entry->kind == SHCA_MMAP_WQ)
		vfree((void *)entry->addr);
	else
		shca_dm_free(entry->sdev, entry->addr, entry->size);
	kfree(entry);
}

/**
 * shca_cq_mmap_insert() - hand a user CQ's ring to its process
 * @cq: the CQ, its ring allocated (@cq->uring)
 * @udata: the create_cq call's (struct softhca_create_cq_resp)
 *
 * From here on the mmap entry owns the ring, also when this fails.
 *
 * Return: 0 or a negative errno.
 */
int shca_cq_mmap_insert(struct shca_cq *cq, struct ib_udata *udata)
{
	struct shca_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct shca_ucontext, ibuc);
	size_t size = shca_cq_ring_size(cq->mask + 1);
	struct softhca_create_cq_resp resp = {};
	struct shca_mmap_entry *entry;
	int err;

	entry = shca_mmap_insert(&uc->ibuc, SHCA_MMAP_CQ,
				 (unsigned long)cq->uring, size);
	if (IS_ERR(entry)) {
		vfree(cq->uring);
		return PTR_ERR(entry);
	}
	resp.mmap_offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	resp.mmap_size = size;
	resp.slots = cq->mask + 1;
	err = ib_copy_to_udata(udata, &resp, sizeof(resp));
	if (err) {
		rdma_user_mmap_entry_remove(&entry->rdma_entry);
		return err;
	}
	cq->mmap = entry;
	return 0;
}

/* ---- QP rings ----------------------------------------------------------------- */

/**
 * shca_qp_rings_remove() - forget the mapped rings of a QP
 * @qp: the QP, being destroyed or failing creation
 *
 * Mappings keep their pages alive until the process unmaps them.
 */
void shca_qp_rings_remove(struct shca_qp *qp)
{
	struct shca_uring *u[] = { &qp->usq, &qp->urq };
	int i;

	for (i = 0; i < ARRAY_SIZE(u); i++) {
		if (u[i]->mmap)
			rdma_user_mmap_entry_remove(&u[i]->mmap->rdma_entry);
		else
			vfree(u[i]->ring);
		u[i]->mmap = NULL;
		u[i]->ring = NULL;
	}
}

/* Give @qp the ring @send says and offer it to the process to map. */
static int shca_qp_ring_insert(struct shca_qp *qp, bool send,
			       struct ib_udata *udata, u64 *offset, u32 *size)
{
	struct shca_ucontext *uc = rdma_udata_to_drv_context(udata,
					struct shca_ucontext, ibuc);
	struct shca_uring *u = send ? &qp->usq : &qp->urq;
	struct shca_mmap_entry *entry;
	int err;

	err = shca_qp_ring_init(qp, send);
	if (err)
		return err;
	*size = shca_wq_ring_size(qp, send);
	entry = shca_mmap_insert(&uc->ibuc, SHCA_MMAP_WQ,
				 (unsigned long)u->ring, *size);
	if (IS_ERR(entry))
		return PTR_ERR(entry);	/* the ring goes with the QP */
	u->mmap = entry;
	*offset = rdma_user_mmap_get_offset(&entry->rdma_entry);
	return 0;
}

/**
 * shca_qp_rings_create() - the mapped rings a user create_qp asked for
 * @qp: the QP, created
 * @ucmd: what the provider asked for (struct softhca_create_qp)
 * @udata: the call's, which returns what was granted (struct
 *	softhca_create_qp_resp)
 *
 * A ring the QP cannot have (a receive ring on an SRQ) is not granted;
 * the process keeps the system calls for that queue.
 *
 * Return: 0 or a negative errno; the caller removes what was made.
 */
int shca_qp_rings_create(struct shca_qp *qp,
			 const struct softhca_create_qp *ucmd,
			 struct ib_udata *udata)
{
	struct softhca_create_qp_resp resp = {};
	enum ib_qp_type type = qp->ibqp.qp_type;
	int err;

	if ((ucmd->flags & SOFTHCA_QP_SQ_RING) &&
	    (type == IB_QPT_RC || type == IB_QPT_UC || type == IB_QPT_UD)) {
		err = shca_qp_ring_insert(qp, true, udata, &resp.sq_mmap_offset,
					  &resp.sq_mmap_size);
		if (err)
			return err;
		resp.sq_slots = qp->sq.mask + 1;
		resp.sq_slot_size = qp->usq.slot_size;
		resp.flags |= SOFTHCA_QP_SQ_RING;
	}
	if ((ucmd->flags & SOFTHCA_QP_RQ_RING) && !qp->ibqp.srq) {
		err = shca_qp_ring_insert(qp, false, udata,
					  &resp.rq_mmap_offset,
					  &resp.rq_mmap_size);
		if (err)
			return err;
		resp.rq_slots = qp->rq.mask + 1;
		resp.rq_slot_size = qp->urq.slot_size;
		resp.flags |= SOFTHCA_QP_RQ_RING;
	}
	if (udata->outlen < sizeof(resp))
		return resp.flags ? -EINVAL : 0;
	return ib_copy_to_udata(udata, &resp, sizeof(resp));
}

/**
 * shca_create_qp_ucmd() - read the driver data of a user create_qp
 * @udata: the call's, or NULL for a kernel QP
 * @ucmd: filled: struct softhca_create_qp; none (an older provider) asks
 *	for nothing
 *
 * Return: 0, -EINVAL for a short or malformed command, -EOPNOTSUPP for
 * fields this driver does not know.
 */
int shca_create_qp_ucmd(struct ib_udata *udata,
			struct softhca_create_qp *ucmd)
{
	int err;

	if (!udata || !udata->inlen)
		return 0;
	if (udata->inlen < sizeof(*ucmd))
		return -EINVAL;
	if (udata->inlen > sizeof(*ucmd) &&
	    !ib_is_udata_cleared(udata, sizeof(*ucmd),
				 udata->inlen - sizeof(*ucmd)))
		return -EOPNOTSUPP;
	err = ib_copy_from_udata(ucmd, udata, sizeof(*ucmd));
	if (err)
		return err;
	if ((ucmd->flags & ~(SOFTHCA_QP_SQ_RING | SOFTHCA_QP_RQ_RING)) ||
	    ucmd->reserved)
		return -EINVAL;
	return 0;
}

/* ---- driver methods ------------------------------------------------------------ */

/* The driver attribute of UVERBS_METHOD_DM_ALLOC: where to map the DM. */
ADD_UVERBS_ATTRIBUTES_SIMPLE(shca_dm_alloc_attrs, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(SOFTHCA_IB_ATTR_ALLOC_DM_MMAP_OFFSET,
						 UVERBS_ATTR_TYPE(u64),
						 UA_MANDATORY));

/*
 * SOFTHCA_IB_METHOD_QP_POST_LOCAL: the local operations uverbs'
 * POST_SEND cannot carry, memory-window binds and local invalidation,
 * posted to the send queue in order with the QP's other requests.
 */
static int
UVERBS_HANDLER(SOFTHCA_IB_METHOD_QP_POST_LOCAL)(struct uverbs_attr_bundle *attrs)
{
	struct ib_qp *ibqp = uverbs_attr_get_obj(attrs,
						 SOFTHCA_IB_ATTR_POST_LOCAL_QP);
	struct shca_bind_wr bwr = {};
	const struct ib_send_wr *bad;
	struct softhca_local_wr uwr;
	struct ib_mw *ibmw;
	struct ib_mr *ibmr;
	int err;

	err = uverbs_copy_from(&uwr, attrs, SOFTHCA_IB_ATTR_POST_LOCAL_WR);
	if (err)
		return err;
	if (uwr.send_flags & ~SOFTHCA_LOCAL_SEND_FLAGS)
		return -EINVAL;
	bwr.wr.wr_id = uwr.wr_id;
	bwr.wr.send_flags = uwr.send_flags;

	switch (uwr.opcode) {
	case SOFTHCA_LOCAL_INV:
		bwr.wr.opcode = IB_WR_LOCAL_INV;
		bwr.wr.ex.invalidate_rkey = uwr.key;
		break;
	case SOFTHCA_LOCAL_BIND_MW:
		ibmw = uverbs_attr_get_obj(attrs, SOFTHCA_IB_ATTR_POST_LOCAL_MW);
		if (IS_ERR(ibmw))
			return PTR_ERR(ibmw);
		bwr.wr.opcode = IB_WR_BIND_MW;
		/* The window's index and identity; the key byte is @new_key's. */
		bwr.bind.mw_key = READ_ONCE(to_shca_mw(ibmw)->win->key);
		bwr.bind.mw_id = to_shca_mw(ibmw)->win->id;
		bwr.bind.new_key = uwr.key;
		bwr.bind.addr = uwr.addr;
		bwr.bind.length = uwr.length;
		bwr.bind.access = uwr.access;
		/* Unbinding a type 1 window needs no MR. */
		ibmr = uverbs_attr_get_obj(attrs, SOFTHCA_IB_ATTR_POST_LOCAL_MR);
		if (!IS_ERR(ibmr)) {
			bwr.bind.mr_key = to_shca_mr(ibmr)->key;
			bwr.bind.mr_id = to_shca_mr(ibmr)->id;
		} else if (uwr.length || ibmw->type == IB_MW_TYPE_2) {
			return -EINVAL;
		}
		break;
	default:
		return -EINVAL;
	}
	return shca_qp_post_send(to_shca_qp(ibqp), &bwr.wr, &bad);
}

DECLARE_UVERBS_NAMED_METHOD(SOFTHCA_IB_METHOD_QP_POST_LOCAL,
			    UVERBS_ATTR_IDR(SOFTHCA_IB_ATTR_POST_LOCAL_QP,
					    UVERBS_OBJECT_QP,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_IDR(SOFTHCA_IB_ATTR_POST_LOCAL_MW,
					    UVERBS_OBJECT_MW,
					    UVERBS_ACCESS_READ, UA_OPTIONAL),
			    UVERBS_ATTR_IDR(SOFTHCA_IB_ATTR_POST_LOCAL_MR,
					    UVERBS_OBJECT_MR,
					    UVERBS_ACCESS_READ, UA_OPTIONAL),
			    UVERBS_ATTR_PTR_IN(SOFTHCA_IB_ATTR_POST_LOCAL_WR,
					       UVERBS_ATTR_STRUCT(struct softhca_local_wr,
								  access),
					       UA_MANDATORY));

/*
 * SOFTHCA_IB_METHOD_QP_DOORBELL: a mapped send ring has requests up to
 * the producer given, or a receive ring that asked for a doorbell has new
 * receives (see softhca-abi.h).
 */
static int
UVERBS_HANDLER(SOFTHCA_IB_METHOD_QP_DOORBELL)(struct uverbs_attr_bundle *attrs)
{
	struct ib_qp *ibqp = uverbs_attr_get_obj(attrs,
						 SOFTHCA_IB_ATTR_DOORBELL_QP);
	struct ib_ucontext *uc;
	u32 queue, producer;
	int err;

	err = uverbs_copy_from(&queue, attrs, SOFTHCA_IB_ATTR_DOORBELL_QUEUE);
	if (err)
		return err;
	if (queue == SOFTHCA_DB_RQ)
		return shca_qp_rq_doorbell(to_shca_qp(ibqp));
	if (queue != SOFTHCA_DB_SQ)
		return -EINVAL;
	err = uverbs_copy_from(&producer, attrs,
			       SOFTHCA_IB_ATTR_DOORBELL_PRODUCER);
	if (err)
		return err;
	uc = ib_uverbs_get_ucontext(attrs);
	if (IS_ERR(uc))
		return PTR_ERR(uc);
	return shca_qp_sq_doorbell(to_shca_qp(ibqp), producer,
				   &to_shca_uc(uc)->ahs);
}

DECLARE_UVERBS_NAMED_METHOD(SOFTHCA_IB_METHOD_QP_DOORBELL,
			    UVERBS_ATTR_IDR(SOFTHCA_IB_ATTR_DOORBELL_QP,
					    UVERBS_OBJECT_QP,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(SOFTHCA_IB_ATTR_DOORBELL_QUEUE,
					       UVERBS_ATTR_TYPE(u32),
					       UA_MANDATORY),
			    UVERBS_ATTR_PTR_IN(SOFTHCA_IB_ATTR_DOORBELL_PRODUCER,
					       UVERBS_ATTR_TYPE(u32),
					       UA_OPTIONAL));

ADD_UVERBS_METHODS(shca_qp_methods, UVERBS_OBJECT_QP,
		   &UVERBS_METHOD(SOFTHCA_IB_METHOD_QP_POST_LOCAL),
		   &UVERBS_METHOD(SOFTHCA_IB_METHOD_QP_DOORBELL));

/* The driver's additions to uverbs, for shca_verbs_init_device(). */
const struct uapi_definition shca_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &shca_dm_alloc_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_QP, &shca_qp_methods),
	{}
};
