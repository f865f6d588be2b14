/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - the QP engine's interfaces: QP contexts as the transport sees
 * them (shca_qpc.c), QP objects (shca_qp.c), posting (shca_wq.c), what the
 * engine takes from the queues (shca_queue.c), SRQs (shca_srq.c), CQs
 * (shca_cq.c), the executor's entry points (shca_exec.c), multicast
 * (shca_mcast.c) and addressing (shca_av.c). The structures are in
 * shca.h; what only these files share, in shca_qp_priv.h.
 */
#ifndef SHCA_QP_H
#define SHCA_QP_H

#include "shca.h"

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

#endif /* SHCA_QP_H */
