/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca: rdma-core provider (libsofthca-rdmav<PABI>.so), private definitions.
 */
#ifndef SOFTHCA_PROVIDER_H
#define SOFTHCA_PROVIDER_H

#include <pthread.h>
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
struct shca_context {
	struct verbs_context vctx;	/* first: see shca_alloc_context() */
	size_t page_size;
};

static_assert(offsetof(struct shca_context, vctx) == 0,
	      "libibverbs is told the verbs_context sits at offset 0");

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
};

struct shca_qp {
	struct verbs_qp vqp;
};

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

static inline struct shca_qp *to_shca_qp(struct ibv_qp *ibqp)
{
	return shca_container_of(ibqp, struct shca_qp, vqp.qp);
}

static inline struct verbs_mr *to_verbs_mr(struct ibv_mr *ibmr)
{
	return shca_container_of(ibmr, struct verbs_mr, ibv_mr);
}

#endif /* SOFTHCA_PROVIDER_H */
