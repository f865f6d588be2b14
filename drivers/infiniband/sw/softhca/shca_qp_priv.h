/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - what the files of the QP engine (shca_qp.c, shca_wq.c,
 * shca_av.c, shca_mcast.c) and the execution engine (shca_exec.c) share
 * beyond the interfaces in shca_verbs.h.
 */
#ifndef SHCA_QP_PRIV_H
#define SHCA_QP_PRIV_H

#include "shca.h"

/* shca_wq.c */
void shca_rq_reset(struct shca_qp *qp);

/* shca_av.c */
void shca_ud_grh(u8 *grh, const struct shca_av *av, u32 len, bool imm);

/* shca_mcast.c */
void shca_mcast_detach_all(struct shca_qp *qp);

#endif /* SHCA_QP_PRIV_H */
