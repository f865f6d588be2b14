/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca: which provider API the provider is compiled against, and the
 * shims for the rdma-core versions whose provider API differs.
 *
 * Two builds share softhca.c:
 *
 *  - standalone (Makefile): against the installed libibverbs of Debian 12
 *    (rdma-core 44, IBVERBS_PRIVATE_34), whose provider header is not
 *    installed; verbs_private.h declares that ABI and proves its layout.
 *  - in-tree (CMakeLists.txt, rdma_provider()): providers/softhca/ inside
 *    an rdma-core source tree, any release from 44 on. The CMake file
 *    defines SOFTHCA_IN_RDMA_CORE and SOFTHCA_RDMA_CORE_MAJOR (the major
 *    number of rdma-core's PACKAGE_VERSION); rdma-core's own
 *    <infiniband/driver.h> then declares everything.
 *
 * Every difference between rdma-core releases that the provider meets is
 * resolved here, keyed on SHCA_RDMA_CORE_MAJOR; softhca.c calls the
 * shca_cmd_*() wrappers below and never tests a version itself. The
 * private ABI number alone is not enough: rdma-core 54 changed
 * ibv_cmd_reg_dmabuf_mr() while it stayed at 34.
 *
 * Provider API changes since 44 (first release carrying each, verified in
 * the rdma-core history):
 *   54  ibv_cmd_reg_dmabuf_mr() gains a driver command buffer (4c461218d,
 *       no PABI bump)
 *   57  ibv_cmd_get_context() gains a struct ibv_fd_arr * (f4d7c01a0,
 *       PABI 57)
 *   59  ibv_cmd_create_cq_ex() gains struct verbs_create_cq_prov_attr *
 *       (8d0ce825e, PABI 59)
 *   64  ibv_cmd_create_qp_ex2() gains a driver command buffer (97de057bb,
 *       PABI 64)
 * and verbs_context_ops grew (59, 62, 64) - harmless in-tree, where the
 * structure comes from rdma-core itself.
 */
#ifndef SOFTHCA_VERBS_COMPAT_H
#define SOFTHCA_VERBS_COMPAT_H

#include <assert.h>
#include <stddef.h>
#include <stdint.h>

#ifdef SOFTHCA_IN_RDMA_CORE

#include <infiniband/driver.h>	/* rdma-core's provider header, with config.h */

#ifndef SOFTHCA_RDMA_CORE_MAJOR
#error "SOFTHCA_RDMA_CORE_MAJOR is set by providers/softhca/CMakeLists.txt"
#endif
#define SHCA_RDMA_CORE_MAJOR		SOFTHCA_RDMA_CORE_MAJOR
#define SHCA_IBVERBS_PABI_VERSION	IBVERBS_PABI_VERSION

/* The version and the private ABI number must tell the same story. */
#if (SHCA_RDMA_CORE_MAJOR >= 64 && IBVERBS_PABI_VERSION < 64) || \
	(SHCA_RDMA_CORE_MAJOR >= 59 && IBVERBS_PABI_VERSION < 59) || \
	(SHCA_RDMA_CORE_MAJOR >= 57 && IBVERBS_PABI_VERSION < 57) || \
	(SHCA_RDMA_CORE_MAJOR < 57 && IBVERBS_PABI_VERSION != 34)
#error "rdma-core PACKAGE_VERSION and IBVERBS_PABI_VERSION disagree"
#endif

/* The constructor registering the provider under this tree's ABI number. */
#define SHCA_PROVIDER_DRIVER(ops)	PROVIDER_DRIVER(softhca, ops)

#else /* standalone: Debian 12's rdma-core 44 */

#include "verbs_private.h"

#define SHCA_RDMA_CORE_MAJOR		44

#define SHCA_PROVIDER_DRIVER(ops)					\
	static void __attribute__((constructor))			\
	shca_register_driver(void)					\
	{								\
		verbs_register_driver_34(&(ops));			\
	}

#endif /* SOFTHCA_IN_RDMA_CORE */

/* ---- shims --------------------------------------------------------------- */

static inline int
shca_cmd_get_context(struct verbs_context *vctx, struct ibv_get_context *cmd,
		     size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
		     size_t resp_size)
{
#if SHCA_RDMA_CORE_MAJOR >= 57
	/* No file descriptors to hand to the kernel. */
	return ibv_cmd_get_context(vctx, cmd, cmd_size, NULL, resp, resp_size);
#else
	return ibv_cmd_get_context(vctx, cmd, cmd_size, resp, resp_size);
#endif
}

static inline int
shca_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
		       uint64_t iova, int fd, int access, struct verbs_mr *vmr)
{
#if SHCA_RDMA_CORE_MAJOR >= 54
	/* No driver attributes. */
	return ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr,
				     NULL);
#else
	return ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr);
#endif
}

#ifdef SOFTHCA_IN_RDMA_CORE
/*
 * Not used by softhca.c yet (it has no extended CQ and creates QPs through
 * ibv_cmd_create_qp_ex()); here so that code which starts using them gets
 * one signature on every release, and compiled (type-checked) by every
 * in-tree build. The standalone build would first need the structures
 * these take declared and proven in verbs_private.h.
 */
static inline int
shca_cmd_create_cq_ex(struct ibv_context *context,
		      const struct ibv_cq_init_attr_ex *cq_attr,
		      struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
		      size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp,
		      size_t resp_size, uint32_t cmd_flags)
{
#if SHCA_RDMA_CORE_MAJOR >= 59
	/* No provider-supplied CQ buffer. */
	return ibv_cmd_create_cq_ex(context, cq_attr, NULL, cq, cmd, cmd_size,
				    resp, resp_size, cmd_flags);
#else
	return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size, resp,
				    resp_size, cmd_flags);
#endif
}

static inline int
shca_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
		       struct ibv_qp_init_attr_ex *qp_attr,
		       struct ibv_create_qp_ex *cmd, size_t cmd_size,
		       struct ib_uverbs_ex_create_qp_resp *resp,
		       size_t resp_size)
{
#if SHCA_RDMA_CORE_MAJOR >= 64
	/* No driver attributes. */
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size, NULL);
#else
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size);
#endif
}
#endif /* SOFTHCA_IN_RDMA_CORE */

#endif /* SOFTHCA_VERBS_COMPAT_H */
