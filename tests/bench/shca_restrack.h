/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What ib_reg_user_mr() and ib_dereg_mr_user() call around a driver's
 * verbs: exported by ib_core (for ib_uverbs), declared only in its
 * private drivers/infiniband/core/restrack.h. For shca_mr_bench's "core"
 * cell, which times them without a driver.
 */
#ifndef SHCA_RESTRACK_H
#define SHCA_RESTRACK_H

#include <rdma/restrack.h>

void rdma_restrack_new(struct rdma_restrack_entry *res,
		       enum rdma_restrack_type type);
void rdma_restrack_parent_name(struct rdma_restrack_entry *dst,
			       const struct rdma_restrack_entry *parent);
void rdma_restrack_add(struct rdma_restrack_entry *res);
void rdma_restrack_del(struct rdma_restrack_entry *res);

#endif /* SHCA_RESTRACK_H */
