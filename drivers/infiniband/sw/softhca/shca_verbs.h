/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - what the verbs layer (shca_verbs.c, shca_uverbs.c) and the
 * module glue (shca_main.c) share: the engines' own interfaces are in
 * shca_mem.h (the MR engine: keys, translations, windows, copies, ODP,
 * T10-DIF, device memory), shca_qp.h (QPs, their queues, SRQs, CQs, the
 * executor), shca_transport.h (the roles) and shca_wire.h (the UDP link).
 */
#ifndef SHCA_VERBS_H
#define SHCA_VERBS_H

#include <linux/t10-pi.h>

#include "shca.h"
#include "shca_qp.h"

struct dentry;
struct net_device;

/* shca_verbs.c */
int shca_verbs_init_device(struct shca_dev *sdev, struct net_device *ndev);
void shca_verbs_fini_device(struct shca_dev *sdev);

/* shca_uverbs.c: mappings and the driver's own uverbs methods */
struct softhca_create_qp;
struct uverbs_attr_bundle;
extern const struct uapi_definition shca_uapi_defs[];
int shca_mmap(struct ib_ucontext *ibuc, struct vm_area_struct *vma);
void shca_mmap_free(struct rdma_user_mmap_entry *rdma_entry);
int shca_dm_mmap_insert(struct ib_ucontext *ibuc, struct shca_dm *dm,
			struct uverbs_attr_bundle *attrs);
int shca_cq_mmap_insert(struct shca_cq *cq, struct ib_udata *udata);
int shca_create_qp_ucmd(struct ib_udata *udata,
			struct softhca_create_qp *ucmd);
int shca_qp_rings_create(struct shca_qp *qp,
			 const struct softhca_create_qp *ucmd,
			 struct ib_udata *udata);
void shca_qp_rings_remove(struct shca_qp *qp);

static inline struct shca_ucontext *to_shca_uc(struct ib_ucontext *ibuc)
{
	return container_of(ibuc, struct shca_ucontext, ibuc);
}

/*
 * The driver's fault-injection point: every allocation softhca makes on
 * its own asks it first. Without KUnit it is constant false; the KUnit
 * fault suite redirects it to fail the Nth allocation of an operation,
 * for every N in turn.
 */
#if IS_ENABLED(CONFIG_KUNIT)
bool shca_inject_fault(void);
#else
static inline bool shca_inject_fault(void)
{
	return false;
}
#endif

/* shca_main.c */
/* reached by the KUnit suites to create devices */
#if IS_ENABLED(CONFIG_KUNIT)
int shca_newlink(const char *ibdev_name, struct net_device *ndev);
#endif

/* shca_net.c: what the verbs layer shows of the wire */
bool shca_net_has_wire(struct shca_dev *sdev);

/**
 * struct shca_bind_wr - IB_WR_BIND_MW as the POST_LOCAL method posts it
 * @wr: the request; @wr.opcode is IB_WR_BIND_MW
 * @bind: the window, MR, range and rights
 */
struct shca_bind_wr {
	struct ib_send_wr wr;
	struct shca_bind bind;
};

#endif /* SHCA_VERBS_H */
