/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca: rdma-core provider (libsofthca-rdmav<PABI>.so), private definitions.
 */
#ifndef SOFTHCA_PROVIDER_H
#define SOFTHCA_PROVIDER_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <rdma/softhca-abi.h>

#include "verbs_compat.h"

#define shca_container_of(ptr, type, member) \
	((type *)((char *)(ptr) - offsetof(type, member)))

/* One per softhca ib_device; libibverbs owns it after alloc_device(). */
struct shca_device {
	struct verbs_device vdev;
};

/* One per ibv_open_device(). */
struct shca_parent;

struct shca_context {
	struct verbs_context vctx;	/* first: see shca_alloc_context() */
	size_t page_size;
	pthread_mutex_t pd_lock;	/* protects @parents */
	struct shca_parent *parents;	/* the parent domains of this context */
	uint32_t rings;			/* SOFTHCA_QP_* rings QPs ask for */
	char fw_ver[64];		/* sysfs fw_ver, read once; or "" */
};

static_assert(offsetof(struct shca_context, vctx) == 0,
	      "libibverbs is told the verbs_context sits at offset 0");

/*
 * A parent domain (ibv_alloc_parent_domain()): it carries its PD's context
 * and kernel handle, so every command that takes a PD works on it
 * unchanged, and the consumer's allocators, which the provider's memory
 * for QPs and CQs made on it comes from. Parent domains are found in
 * their context's list, never by casting an ibv_pd: a PD is libibverbs'
 * bare struct ibv_pd, and whatever pointer a consumer hands in (even a
 * copy of a freed PD) is only compared.
 */
struct shca_parent {
	struct ibv_pd ibpd;
	struct ibv_pd *protection;	/* the PD it extends */
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
	struct shca_parent *next;	/* in shca_context.parents */
};

/*
 * The resource types the allocators of a parent domain see: the driver id
 * (RDMA_DRIVER_UNKNOWN, 0, for softhca) in the upper 32 bits, the kind of
 * buffer in the lower ones.
 */
enum {
	SHCA_RES_TYPE_QP = 1,		/* struct shca_qp */
	SHCA_RES_TYPE_QP_WR = 2,	/* an ibv_wr_* batch's arrays */
	SHCA_RES_TYPE_CQ = 3,		/* struct shca_cq */
};

/*
 * Who gives a buffer back: @free NULL for calloc()'s, else the parent
 * domain's free with the arguments it wants (kept with the buffer, so
 * that freeing it does not depend on the parent domain).
 */
struct shca_allocator {
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	struct ibv_pd *pd;
	void *pd_context;
};

struct shca_parent *shca_parent_find(struct ibv_pd *pd);
void *shca_pd_zalloc(struct ibv_pd *pd, size_t size, uint32_t type,
		     struct shca_allocator *a);
void shca_pd_free(void *ptr, uint32_t type, struct shca_allocator a);

/*
 * Device memory: the kernel's allocation, mapped through the uverbs fd
 * (include/uapi/rdma/softhca-abi.h) for ibv_memcpy_{to,from}_dm().
 */
struct shca_dm {
	struct verbs_dm vdm;
	void *addr;		/* start of the mapping = DM offset 0 */
	size_t length;		/* bytes the user asked for */
	size_t map_len;		/* length rounded up to the page size */
};

/*
 * A completion queue is a ring the kernel fills and this process maps
 * (struct softhca_cq_ring); polling reads it without a system call. Queue
 * pairs live in the kernel; the provider only holds libibverbs' view of
 * them (see verbs_private.h for why it is the verbs_ wrapper and not the
 * bare public structure; in-tree, rdma-core's driver.h says the same).
 */
struct shca_cq {
	struct verbs_cq vcq;
	pthread_spinlock_t lock;	/* serialises consumers of @ring */
	struct softhca_cq_ring *ring;
	size_t map_len;
	uint32_t mask;			/* slots - 1 */
	uint32_t consumer;		/* our copy of ring->consumer */
	/* ibv_start_poll() .. ibv_end_poll(), under @lock: */
	uint32_t producer;		/* ring->producer as last read */
	const struct softhca_cqe *cur;	/* the current entry, or NULL */
	struct shca_allocator alloc;	/* of this structure */
};

/* ibv_qp_ex: one work request being built, see softhca_ex.c. */
struct shca_wr_slot {
	struct ibv_send_wr wr;		/* next, sg_list: set when posted */
	uint32_t sge_first;		/* its SGEs in shca_wr_batch.sge */
	uint32_t inl_off;		/* its inline data in .inl, or: */
#define SHCA_WR_NO_INLINE	UINT32_MAX
};

/* The requests between ibv_wr_start() and ibv_wr_complete(). */
struct shca_wr_batch {
	struct shca_wr_slot *wr;
	struct ibv_sge *sge;
	uint8_t *inl;
	uint32_t nwr, wr_cap;
	uint32_t nsge, sge_cap;
	uint32_t ninl, inl_cap;
	struct shca_allocator wr_by, sge_by, inl_by;
	int err;			/* first error; ibv_wr_complete() returns it */
	bool open;
};

/*
 * A work queue mapped from the kernel (struct softhca_wq_ring), or none
 * (@ring NULL): then the queue's verbs are system calls.
 */
struct shca_wq {
	struct softhca_wq_ring *ring;
	size_t map_len;
	uint32_t slots;			/* a power of two */
	uint32_t slot_size;
	uint32_t max_wr;		/* receive ring: requests outstanding */
	uint32_t max_sge;		/* SGEs a slot holds */
	uint32_t prod;			/* next slot to write; under @lock */
	pthread_mutex_t lock;		/* serialises posters */
	/*
	 * Receive ring: the QP is in RESET (created, or moved there by
	 * modify_qp; nothing else moves a QP to RESET), where posting a
	 * receive is an error, as the kernel's POST_RECV says.
	 */
	bool reset;
};

static inline void *shca_wq_slot(const struct shca_wq *wq, uint32_t idx)
{
	return (uint8_t *)wq->ring + SOFTHCA_WQ_RING_HDR +
	       (size_t)(idx & (wq->slots - 1)) * wq->slot_size;
}

struct shca_qp {
	struct verbs_qp vqp;
	struct shca_wq sq, rq;		/* mapped send and receive rings */
	struct shca_allocator alloc;	/* of this structure */
	/*
	 * The ibv_qp_ex work-request API (IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
	 * vqp.comp_mask then has VERBS_QP_EX):
	 */
	pthread_spinlock_t batch_lock;	/* held from wr_start to complete/abort */
	struct shca_wr_batch batch;
	uint64_t send_ops;		/* bit (1 << IBV_WR_*) per allowed op */
	uint32_t max_send_sge;
	uint32_t max_inline;
};

/* The IBV_WC_* flags of a completion entry. */
static inline unsigned int shca_cqe_wc_flags(const struct softhca_cqe *e)
{
	unsigned int flags = 0;

	if (e->flags & SOFTHCA_CQE_WITH_IMM)
		flags |= IBV_WC_WITH_IMM;
	else if (e->flags & SOFTHCA_CQE_WITH_INV)
		flags |= IBV_WC_WITH_INV;
	if (e->flags & SOFTHCA_CQE_GRH)
		flags |= IBV_WC_GRH;
	return flags;
}

/* softhca.c */
int shca_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		   struct ibv_send_wr **bad_wr);

/* softhca_ex.c */
int shca_qp_ex_check(enum ibv_qp_type qp_type, uint64_t send_ops_flags);
void shca_qp_ex_init(struct shca_qp *qp,
		     const struct ibv_qp_init_attr_ex *attr);
void shca_qp_ex_fini(struct shca_qp *qp);
int shca_cq_ex_check(const struct ibv_cq_init_attr_ex *attr);
void shca_cq_ex_init(struct shca_cq *cq);

static inline struct shca_context *to_shca_ctx(struct ibv_context *ibctx)
{
	return shca_container_of(ibctx, struct shca_context, vctx.context);
}

static inline struct shca_dm *to_shca_dm(struct ibv_dm *ibdm)
{
	return shca_container_of(ibdm, struct shca_dm, vdm.dm);
}

static inline struct shca_cq *to_shca_cq(struct ibv_cq *ibcq)
{
	return shca_container_of(ibcq, struct shca_cq, vcq.cq);
}

/* An address handle and the number UD send-ring slots name it by. */
struct shca_ah {
	struct ibv_ah ibah;
	uint32_t num;			/* 0: UD sends with it by POST_SEND */
};

static inline struct shca_ah *to_shca_ah(struct ibv_ah *ibah)
{
	return shca_container_of(ibah, struct shca_ah, ibah);
}

static inline struct shca_qp *to_shca_qp(struct ibv_qp *ibqp)
{
	return shca_container_of(ibqp, struct shca_qp, vqp.qp);
}

static inline struct verbs_mr *to_verbs_mr(struct ibv_mr *ibmr)
{
	return shca_container_of(ibmr, struct verbs_mr, ibv_mr);
}

#endif /* SOFTHCA_PROVIDER_H */
