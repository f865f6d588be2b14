/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - interfaces between the verbs layer, the engines and the
 * module glue.
 */
#ifndef SHCA_VERBS_H
#define SHCA_VERBS_H

#include <linux/t10-pi.h>

#include "shca.h"

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

/* shca_odp.c: on-demand paging */
#if SHCA_ODP
void *shca_odp_ptr(const struct shca_odp *odp, u64 va, bool write,
		   u64 *contig);
bool shca_odp_ready(const struct shca_odp *odp, u64 va, u64 len, bool write);
int shca_odp_fault(struct shca_mr *mr, u64 va, u64 len, bool write,
		   bool fault);
int shca_odp_retry(struct shca_mr *mr, u64 va, u64 len, bool write,
		   unsigned int *tries);
int shca_odp_init(struct shca_mr *mr, u64 start, u64 length, int access);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_odp_umem_made(struct ib_umem_odp *umem);
#endif
void shca_odp_fini(struct shca_mr *mr);
int shca_mr_advise(struct shca_dev *sdev, struct ib_pd *pd, u32 advice,
		   bool sync, const struct ib_sge *sge, u32 n);
#endif

/*
 * The MR engine (shca_mr.c, shca_xlat.c, shca_mw.c, shca_mem.c) is
 * declared in shca_mem.h, which shca.h includes.
 */

/* shca_sig.c: the T10-DIF engine */

u16 shca_sig_guard(const struct ib_t10_dif_domain *dif, const void *buf,
		   size_t len);
void shca_sig_gen_pi(const struct ib_t10_dif_domain *dif, u32 block,
		     const void *data, struct t10_pi_tuple *pi);
bool shca_sig_check_pi(const struct ib_t10_dif_domain *dif, u8 check_mask,
		       u32 block, const void *data,
		       const struct t10_pi_tuple *pi, struct ib_sig_err *err);
int shca_sig_attrs_check(const struct ib_sig_attrs *attrs);
u64 shca_sig_wire_len(const struct ib_sig_attrs *attrs, u64 data_len);
int shca_sig_stream_init(struct shca_sig_stream *st,
			 const struct ib_sig_attrs *attrs, bool to_wire,
			 u32 first_block);
void shca_sig_stream_xfer(struct shca_sig_stream *st,
			  struct shca_sig_bufs *b);
bool shca_sig_stream_idle(const struct shca_sig_stream *st);
bool shca_sig_stream_error(const struct shca_sig_stream *st,
			   struct ib_sig_err *err);
void shca_sig_debugfs_init(struct dentry *dir);

/* shca_cq.c: completion queues */
size_t shca_cq_ring_size(u32 slots);
int shca_cq_init(struct shca_cq *cq, u32 cqe, bool user);
void shca_cq_fini(struct shca_cq *cq);
void shca_cq_push(struct shca_cq *cq, const struct ib_wc *wc, bool solicited,
		  bool defer);
int shca_cq_poll(struct shca_cq *cq, int num, struct ib_wc *wc);
void shca_cq_purge(struct shca_cq *cq, struct ib_qp *qp);
int shca_cq_arm(struct shca_cq *cq, enum ib_cq_notify_flags flags);

/* shca_qp.c: queue pairs */
void shca_qp_table_init(void);
void shca_qp_table_fini(void);
void shca_qpn_release_all(void);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_qpn_set_next(u32 qpn);
#endif
int shca_qp_init(struct shca_qp *qp, struct shca_dev *sdev,
		 struct ib_qp_init_attr *init, bool user);
void shca_qp_fini(struct shca_qp *qp);
int shca_qpc_publish(struct shca_qp *qp, bool gsi);
void shca_qpc_unpublish(struct shca_qp *qp);
void shca_qpc_release_number(struct shca_qp *qp);
struct shca_qp *shca_qp_get(u32 qpn);
struct shca_qp *shca_gsi_get(const struct shca_dev *from,
			     const union ib_gid *dgid);
int shca_mcast_attach(struct shca_qp *qp, const union ib_gid *mgid);
int shca_mcast_detach(struct shca_qp *qp, const union ib_gid *mgid);
int shca_mcast_get(const struct shca_dev *from, const union ib_gid *mgid,
		   struct shca_qp **qps, int max);
bool shca_dev_same_net(const struct shca_dev *a, const struct shca_dev *b);
int shca_av_init(struct shca_av *av, const struct rdma_ah_attr *attr);
bool shca_dev_owns_gid(struct shca_dev *sdev, const union ib_gid *gid);
void shca_qp_put(struct shca_qp *qp);
int shca_qp_modify(struct shca_qp *qp, const struct ib_qp_attr *attr,
		   int mask);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_qp_res_alloced(struct shca_qp *qp);
#endif
void shca_qp_query(struct shca_qp *qp, struct ib_qp_attr *attr,
		   struct ib_qp_init_attr *init);
int shca_qp_post_send(struct shca_qp *qp, const struct ib_send_wr *wr,
		      const struct ib_send_wr **bad_wr);
int shca_qp_post_recv(struct shca_qp *qp, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
void shca_qp_kick(struct shca_qp *qp);
void shca_qp_kick_now(struct shca_qp *qp);
void shca_qp_set_error(struct shca_qp *qp);
struct shca_wqe *shca_sq_head(struct shca_qp *qp);
int shca_queue_init(struct shca_queue *q, u32 max_wr, u32 max_sge,
		    u32 max_inline);
bool shca_queue_take(struct shca_queue *q, struct shca_wqe *out);
int shca_queue_put_recv(struct shca_queue *q, const struct ib_recv_wr *wr);
void shca_qp_event(struct shca_qp *qp, enum ib_event_type type);
void shca_qp_event_later(struct shca_qp *qp, enum ib_event_type type);
void shca_qp_report_events(struct shca_qp *qp);
void shca_qp_srq_check(struct shca_qp *qp, bool done, bool defer);
void shca_qp_device_fatal(struct shca_dev *sdev);
size_t shca_wq_ring_size(const struct shca_qp *qp, bool send);
int shca_qp_ring_init(struct shca_qp *qp, bool send);
void shca_rq_import(struct shca_qp *qp);
struct shca_wqe *shca_rq_flush_head(struct shca_qp *qp);
void shca_rq_flushed(struct shca_qp *qp);
int shca_qp_rq_doorbell(struct shca_qp *qp);
int shca_qp_sq_doorbell(struct shca_qp *qp, u32 producer, struct xarray *ahs);

/* shca_srq.c */
int shca_srq_init(struct shca_srq *srq, struct ib_srq_init_attr *init);
void shca_srq_fini(struct shca_srq *srq);
int shca_srq_modify(struct shca_srq *srq, const struct ib_srq_attr *attr,
		    enum ib_srq_attr_mask mask);
void shca_srq_query(struct shca_srq *srq, struct ib_srq_attr *attr);
int shca_srq_post_recv(struct shca_srq *srq, const struct ib_recv_wr *wr,
		       const struct ib_recv_wr **bad_wr);
bool shca_srq_pop(struct shca_srq *srq, struct shca_wqe *out);
bool shca_srq_empty(struct shca_srq *srq);
bool shca_rq_pop(struct shca_qp *qp, struct shca_wqe *out);
int shca_wqe_copy(struct shca_qp *qp, const struct shca_wqe *w, u64 off,
		  void *buf, u32 len, int access, enum shca_copy_dir dir);
bool shca_rq_empty(struct shca_qp *qp);

/* shca_exec.c: executes work requests */
extern struct workqueue_struct *shca_wq;
int shca_qpc_init(void);
void shca_qpc_fini(void);
void shca_qp_work(struct work_struct *work);
void shca_qp_post_exec(struct shca_qp *qp);
bool shca_qp_post_claim(struct shca_qp *qp);
void shca_req_start_posted(struct shca_qp *qp, const struct shca_wqe *w);
void shca_qp_post_run(struct shca_qp *qp);
void shca_qp_exec_stop(struct shca_qp *qp);
void shca_qp_exec_resume(struct shca_qp *qp);

/* shca_dm.c: the device-memory arena */
int shca_dm_arena_init(struct shca_dev *sdev);
void shca_dm_arena_destroy(struct shca_dev *sdev);
int shca_dm_alloc(struct shca_dev *sdev, struct shca_dm *dm, u64 length,
		  u32 log_align, bool user);
void shca_dm_free(struct shca_dev *sdev, unsigned long addr, u64 alloc_size);

#endif /* SHCA_VERBS_H */
