/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - what the files of the QP engine (shca_qp.c, shca_wq.c,
 * shca_queue.c, shca_av.c, shca_mcast.c) and the execution engine
 * (shca_exec.c) share beyond the interfaces in shca_verbs.h.
 */
#ifndef SHCA_QP_PRIV_H
#define SHCA_QP_PRIV_H

#include "shca.h"

/*
 * Mapped work queues (see softhca-abi.h). The process writes slots and,
 * for the receive ring, the producer; the kernel reads each value once
 * (READ_ONCE()) into its own queue and validates it there, so a process
 * changing its ring under the kernel changes nothing but what it posts.
 */
static inline void *shca_uring_slot(const struct shca_uring *u,
				    const struct shca_queue *q, u32 idx)
{
	return (void *)u->ring + SOFTHCA_WQ_RING_HDR +
	       (size_t)(idx & q->mask) * u->slot_size;
}

/* shca_queue.c */
void shca_rq_reset(struct shca_qp *qp);

/* shca_av.c */
void shca_ud_grh(u8 *grh, const struct shca_av *av, u32 len, bool imm);

/* shca_mcast.c */
void shca_mcast_detach_all(struct shca_qp *qp);

#endif /* SHCA_QP_PRIV_H */
