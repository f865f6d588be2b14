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
struct ib_umem;
struct net_device;
struct scatterlist;

/* shca_verbs.c */
int shca_verbs_init_device(struct shca_dev *sdev, struct net_device *ndev);
void shca_verbs_fini_device(struct shca_dev *sdev);

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

/* shca_mr.c: the memory-registration engine */
int shca_mr_cache_init(void);
void shca_mr_cache_fini(void);
void shca_mr_table_init(struct shca_dev *sdev);
void shca_mr_table_destroy(struct shca_dev *sdev);
int shca_mr_check_access(int access);
struct shca_mr *shca_mr_create_dma(struct shca_dev *sdev, struct ib_pd *pd,
				   int access);
struct shca_mr *shca_mr_create_fast(struct shca_dev *sdev,
				    enum ib_mr_type type, u32 max_data,
				    u32 max_meta);
struct shca_mr *shca_mr_create_odp(struct shca_dev *sdev, u64 start,
				   u64 length, u64 iova, int access);
int shca_mr_fault(struct shca_dev *sdev, const struct shca_mem_target *t,
		  u64 len, bool write);
struct shca_mr *shca_mr_create_user(struct shca_dev *sdev,
				    struct ib_umem *umem, u64 iova, int access);
struct shca_mr *shca_mr_create_dmabuf(struct shca_dev *sdev, int fd,
				      u64 offset, u64 length, u64 iova,
				      int access);
struct shca_mr *shca_mr_create_dm(struct shca_dev *sdev, struct shca_dm *dm,
				  u64 offset, u64 length, int access);
void shca_mr_destroy(struct shca_mr *mr);
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key);
#if IS_ENABLED(CONFIG_KUNIT)
bool shca_umem_use_segs(u64 nseg, u64 npages);
u32 shca_mr_slot_to_index(const struct shca_dev *sdev, u32 slot);
u32 shca_mr_key_slot(const struct shca_dev *sdev, u32 key);
struct shca_mr *shca_mr_try_get(struct shca_dev *sdev, u32 key,
				struct shca_mr *mr);
#endif
void shca_mr_put(struct shca_mr *mr);
int shca_mr_map_pages(struct shca_mr *mr, struct scatterlist *sg, int nents,
		      unsigned int *sg_offset, u32 page_size);
int shca_mr_map_segs(struct shca_mr *mr, struct scatterlist *sg, int nents,
		     unsigned int *sg_offset);
int shca_mr_map_pi(struct shca_mr *mr, struct scatterlist *data_sg,
		   int data_nents, unsigned int *data_offset,
		   struct scatterlist *meta_sg, int meta_nents,
		   unsigned int *meta_offset);
int shca_mr_fast_reg(struct shca_mr *mr, u32 key, int access);
int shca_mr_fast_reg_pi(struct shca_mr *mr, u32 key, int access,
			const struct ib_sig_attrs *attrs);
int shca_mr_pi_postable(struct shca_mr *mr, int access,
			const struct ib_sig_attrs *attrs);
int shca_mr_invalidate(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		       u32 key);
int shca_mr_retire(struct shca_mr *mr);
void shca_mr_unretire(struct shca_mr *mr);
struct shca_mr *shca_mw_create(struct shca_dev *sdev, struct ib_pd *pd,
			       u8 type);
void shca_mw_destroy(struct shca_mr *win);
int shca_mw_bind(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		 const struct shca_bind *b);
int shca_mr_set_access(struct shca_mr *mr, struct ib_pd *pd, int access);
int shca_mr_copy(struct shca_dev *sdev, const struct shca_mem_target *t,
		 void *buf, u64 len, enum shca_copy_dir dir);
int shca_mr_copy_mr(struct shca_dev *sdev, const struct shca_mem_target *dst,
		    const struct shca_mem_target *src, u64 len);
int shca_mr_copy_xdev(struct shca_dev *dst_sdev,
		      const struct shca_mem_target *dst,
		      struct shca_dev *src_sdev,
		      const struct shca_mem_target *src, u64 len,
		      bool *dst_failed);
int shca_mr_hold(struct shca_dev *sdev, const struct shca_mem_target *t,
		 u64 len, struct shca_span *span);
void shca_mr_unhold(struct shca_span *span);
int shca_mr_copy_held(const struct shca_span *held, u64 off,
		      struct shca_dev *sdev, const struct shca_mem_target *t,
		      u64 len, bool to_held, bool *dst_failed);
int shca_mr_copy_held_buf(const struct shca_span *held, u64 off, void *buf,
			  u64 len, enum shca_copy_dir dir);
int shca_mr_copy_spans(const struct shca_span *dst, u64 dst_off,
		       const struct shca_span *src, u64 src_off, u64 len,
		       bool *dst_failed);
void shca_mr_sig_error(struct shca_mr *mr, const struct ib_sig_err *err);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_mr_copy_chunk_done(struct shca_mr *mr);
void shca_mw_bind_found(struct shca_mr *win);
#endif
int shca_mr_check_status(struct shca_mr *mr, u32 check_mask,
			 struct ib_mr_status *status);

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
bool shca_rq_empty(struct shca_qp *qp);

/* shca_exec.c: executes work requests */
extern struct workqueue_struct *shca_wq;
int shca_exec_init(void);
void shca_exec_fini(void);
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
