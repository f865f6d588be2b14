/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * softhca: the private provider ABI of libibverbs, IBVERBS_PRIVATE_34.
 *
 * rdma-core does not install its provider header (driver.h), so a provider
 * built outside the rdma-core tree has to declare what it uses itself.
 * This file declares exactly the part of the ABI softhca needs, for
 * rdma-core 44.0 as shipped by Debian 12 (x86-64, LP64). Nothing here is
 * checked by the compiler against libibverbs: a wrong layout is silent
 * memory corruption. Hence:
 *
 *  - every size and every member offset libibverbs and this provider
 *    exchange is pinned by a static assertion at the end of this file,
 *    with the value measured against rdma-core v44.0's own headers;
 *  - tests/layout-check.sh builds tests/layout_probe.c against this file
 *    and against an rdma-core v44.0 source tree and diffs the two;
 *  - the Makefile refuses to build unless the installed libibverbs
 *    exports verbs_register_driver_34@IBVERBS_PRIVATE_34.
 *
 * The member and type names follow rdma-core's so that the layout probe
 * and softhca.c compile against both. Only the standalone build includes
 * this file (through verbs_compat.h); other rdma-core releases build the
 * provider in their own source tree with their own driver.h
 * (CMakeLists.txt, intree-build.sh). Do not "fix" this header for a new
 * rdma-core ABI.
 */
#ifndef SOFTHCA_VERBS_PRIVATE_H
#define SOFTHCA_VERBS_PRIVATE_H

#include <assert.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

#include <infiniband/verbs.h>	/* public ABI, installed by libibverbs-dev */
#include <rdma/ib_user_verbs.h>	/* uverbs command ABI, from linux-libc-dev */
#include <rdma/rdma_user_ioctl_cmds.h>	/* uverbs ioctl ABI, from linux-libc-dev */

/* The private ABI number this header describes. */
#define SHCA_IBVERBS_PABI_VERSION	34

#if !defined(__x86_64__) || !defined(__LP64__)
#error "verbs_private.h is measured for x86-64 (LP64) only"
#endif

/* ccan's doubly linked list node, as embedded in libibverbs' structures. */
struct verbs_list_node {
	struct verbs_list_node *next;
	struct verbs_list_node *prev;
};

/*
 * The ioctl command builder of libibverbs (cmd_ioctl.h). A provider links
 * one of its own, holding driver attributes in hdr.attrs[], to a core
 * command (ibv_cmd_alloc_dm() ...); libibverbs merges the attributes into
 * its ioctl and copies them back. softhca builds it by hand with
 * shca_link_init() rather than with rdma-core's macros.
 */
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;	/* first unused of hdr.attrs[] */
	struct ib_uverbs_attr *last_attr;	/* end of hdr.attrs[] */
	uint8_t uhw_in_idx;			/* 0xff: none */
	uint8_t uhw_out_idx;			/* 0xff: none */
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error:1;
	uint8_t fallback_require_ex:1;
	uint8_t fallback_ioctl_only:1;
	struct ib_uverbs_ioctl_hdr hdr;		/* attrs[] follow it */
};

/* ---- device matching and registration ---------------------------------- */

enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

/* One entry of a provider's match table; a zeroed entry ends the table. */
struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

/* What libibverbs learnt about one uverbs device (netlink or sysfs). */
struct verbs_sysfs_dev {
	struct verbs_list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];	/* uverbsN */
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];	/* e.g. softhca0 */
	char ibdev_path[IBV_SYSFS_PATH_MAX];	/* .../class/infiniband/<ibdev> */
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;			/* enum rdma_driver_id */
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;			/* ib_device_ops.uverbs_abi_ver */
	struct timespec time_created;
};

struct verbs_device;

/* Handed to verbs_register_driver_34(); read by libibverbs. */
struct verbs_device_ops {
	const char *name;
	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

/*
 * Allocated by the provider's alloc_device(), filled in and owned by
 * libibverbs from then on; freed through uninit_device().
 */
struct verbs_device {
	struct ibv_device device;		/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct verbs_list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return (struct verbs_device *)((uintptr_t)dev -
				       offsetof(struct verbs_device, device));
}

/* ---- objects libibverbs looks into -------------------------------------- */

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

/* ibv_dereg_mr()/ibv_rereg_mr() read mr_type and access behind ibv_mr. */
struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

/*
 * Completion queues and queue pairs. libibverbs looks behind the public
 * object: ibv_cq_ex_to_cq()/ibv_qp_to_qp_ex() and friends treat an ibv_cq
 * as the start of a verbs_cq and an ibv_qp as the start of a verbs_qp, so
 * a provider allocates these, never the bare public structures.
 */
struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

struct verbs_xrcd;	/* XRC is not supported: only pointed to */

enum verbs_qp_mask {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;	/* valid only with VERBS_QP_EX */
	};
	uint32_t comp_mask;		/* enum verbs_qp_mask */
	struct verbs_xrcd *xrcd;
};

/*
 * Every operation a provider can implement, sorted by name. verbs_set_ops()
 * copies the non-NULL slots; unset ones answer EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(struct ibv_context *context,
					      struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
	struct ibv_counters *(*create_counters)(struct ibv_context *context,
						struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ---- write() command buffers: header + kernel payload + driver data ------ */

struct ibv_get_context {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_get_context core_payload;
};

struct ibv_alloc_pd {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_pd core_payload;
};

struct ibv_alloc_mw {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_alloc_mw core_payload;
};

struct ibv_query_port {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_port core_payload;
};

struct ibv_reg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_reg_mr core_payload;
};

struct ibv_rereg_mr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_rereg_mr core_payload;
};

struct ibv_create_cq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_cq core_payload;
};

struct ibv_create_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_qp core_payload;
};

struct ibv_query_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_qp core_payload;
};

struct ibv_modify_qp {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_qp core_payload;
};

struct ibv_create_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_create_srq core_payload;
};

struct ibv_modify_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_modify_srq core_payload;
};

struct ibv_query_srq {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_query_srq core_payload;
};

/* ---- functions exported by libibverbs.so.1 @IBVERBS_PRIVATE_34 ---------- */

/* Registration; the ABI number is part of the name. */
void verbs_register_driver_34(const struct verbs_device_ops *ops);

/*
 * Allocates alloc_size zeroed bytes holding a verbs_context at byte offset
 * (uintptr_t)context_offset and initialises it. Takes over cmd_fd: on
 * failure it is closed and NULL returned with errno set.
 */
void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);
void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);

/*
 * Every ibv_cmd_*() below returns 0 or a positive errno value (errno is set
 * as well).
 */
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);
int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
int ibv_cmd_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		      uint32_t flags, struct ibv_sge *sg_list,
		      uint32_t num_sge);
int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size,
		     struct ib_uverbs_alloc_mw_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);
int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_size, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_size);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);
/* The 7-argument form: rdma-core 54 changed it without an ABI bump. */
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr);
int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);

/*
 * Completion queues. create_cq fills in cq->context, handle and cqe (the
 * kernel's size); libibverbs' ibv_create_cq() then sets the channel and
 * cq_context (verbs_init_cq). poll_cq returns the number of completions
 * copied into wc, or -1 (the uverbs command failed; errno is set).
 * destroy_cq waits until every completion event of the CQ was acked.
 */
int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_poll_cq(struct ibv_cq *cq, int ne, struct ibv_wc *wc);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);

/*
 * Queue pairs. create_qp_ex fills in context, handle, qp_num, the CQs,
 * pd, srq, type, state (RESET), the events mutex/cond and writes the
 * kernel's capabilities back into attr_ex->cap. modify_qp updates
 * qp->state when the mask holds IBV_QP_STATE and the kernel agreed.
 * destroy_qp waits until every async event of the QP was acked.
 */
/* Address handles: the kernel resolves the destination MAC. */
int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);
int ibv_cmd_post_srq_recv(struct ibv_srq *srq, struct ibv_recv_wr *wr,
			  struct ibv_recv_wr **bad_wr);

/*
 * Work requests through the kernel (IB_USER_VERBS_CMD_POST_SEND/RECV).
 * On failure *bad_wr points at the first request the kernel did not take
 * (the first of the list if the command itself failed).
 */
int ibv_cmd_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		      struct ibv_send_wr **bad_wr);
int ibv_cmd_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);

/*
 * Reads <sysfs_dev->ibdev_path>/<fnfmt...> into buf, without the trailing
 * newline. Returns the length read, or -1 with errno set.
 */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/* ---- layout proofs (x86-64, rdma-core v44.0) ---------------------------- */

#define SHCA_ABI_SIZE(type, size) \
	static_assert(sizeof(type) == (size), "sizeof(" #type ") != " #size)
#define SHCA_ABI_OFF(type, member, off) \
	static_assert(offsetof(type, member) == (off), \
		      "offsetof(" #type ", " #member ") != " #off)
/* verbs_context_ops: slot n (alphabetical) sits at n pointers. */
#define SHCA_ABI_OP(member, n) \
	SHCA_ABI_OFF(struct verbs_context_ops, member, (n) * 8)

/* Public structures the private ones embed or that providers embed. */
SHCA_ABI_SIZE(struct ibv_device, 664);
SHCA_ABI_SIZE(struct ibv_context, 328);
SHCA_ABI_SIZE(struct verbs_context, 648);
SHCA_ABI_OFF(struct verbs_context, context, 320);
SHCA_ABI_SIZE(struct ibv_mr, 48);
SHCA_ABI_SIZE(struct ibv_dm, 32);

SHCA_ABI_SIZE(struct verbs_list_node, 16);

SHCA_ABI_SIZE(struct verbs_match_ent, 24);
SHCA_ABI_OFF(struct verbs_match_ent, driver_data, 0);
SHCA_ABI_OFF(struct verbs_match_ent, u.modalias, 8);
SHCA_ABI_OFF(struct verbs_match_ent, u.driver_id, 8);
SHCA_ABI_OFF(struct verbs_match_ent, vendor, 16);
SHCA_ABI_OFF(struct verbs_match_ent, device, 18);
SHCA_ABI_OFF(struct verbs_match_ent, kind, 20);

SHCA_ABI_SIZE(struct verbs_sysfs_dev, 992);
SHCA_ABI_OFF(struct verbs_sysfs_dev, entry, 0);
SHCA_ABI_OFF(struct verbs_sysfs_dev, provider_data, 16);
SHCA_ABI_OFF(struct verbs_sysfs_dev, match, 24);
SHCA_ABI_OFF(struct verbs_sysfs_dev, flags, 32);
SHCA_ABI_OFF(struct verbs_sysfs_dev, sysfs_name, 36);
SHCA_ABI_OFF(struct verbs_sysfs_dev, sysfs_cdev, 104);
SHCA_ABI_OFF(struct verbs_sysfs_dev, ibdev_name, 112);
SHCA_ABI_OFF(struct verbs_sysfs_dev, ibdev_path, 176);
SHCA_ABI_OFF(struct verbs_sysfs_dev, modalias, 432);
SHCA_ABI_OFF(struct verbs_sysfs_dev, node_guid, 944);
SHCA_ABI_OFF(struct verbs_sysfs_dev, driver_id, 952);
SHCA_ABI_OFF(struct verbs_sysfs_dev, node_type, 956);
SHCA_ABI_OFF(struct verbs_sysfs_dev, ibdev_idx, 960);
SHCA_ABI_OFF(struct verbs_sysfs_dev, num_ports, 964);
SHCA_ABI_OFF(struct verbs_sysfs_dev, abi_ver, 968);
SHCA_ABI_OFF(struct verbs_sysfs_dev, time_created, 976);

SHCA_ABI_SIZE(struct verbs_device_ops, 72);
SHCA_ABI_OFF(struct verbs_device_ops, name, 0);
SHCA_ABI_OFF(struct verbs_device_ops, match_min_abi_version, 8);
SHCA_ABI_OFF(struct verbs_device_ops, match_max_abi_version, 12);
SHCA_ABI_OFF(struct verbs_device_ops, match_table, 16);
SHCA_ABI_OFF(struct verbs_device_ops, static_providers, 24);
SHCA_ABI_OFF(struct verbs_device_ops, match_device, 32);
SHCA_ABI_OFF(struct verbs_device_ops, alloc_context, 40);
SHCA_ABI_OFF(struct verbs_device_ops, import_context, 48);
SHCA_ABI_OFF(struct verbs_device_ops, alloc_device, 56);
SHCA_ABI_OFF(struct verbs_device_ops, uninit_device, 64);

SHCA_ABI_SIZE(struct verbs_device, 712);
SHCA_ABI_OFF(struct verbs_device, device, 0);
SHCA_ABI_OFF(struct verbs_device, ops, 664);
SHCA_ABI_OFF(struct verbs_device, refcount, 672);
SHCA_ABI_OFF(struct verbs_device, entry, 680);
SHCA_ABI_OFF(struct verbs_device, sysfs, 696);
SHCA_ABI_OFF(struct verbs_device, core_support, 704);

SHCA_ABI_SIZE(struct verbs_mr, 56);
SHCA_ABI_OFF(struct verbs_mr, ibv_mr, 0);
SHCA_ABI_OFF(struct verbs_mr, mr_type, 48);
SHCA_ABI_OFF(struct verbs_mr, access, 52);
SHCA_ABI_SIZE(enum ibv_mr_type, 4);

SHCA_ABI_SIZE(struct verbs_dm, 40);
SHCA_ABI_SIZE(struct ibv_command_buffer, 56);
SHCA_ABI_OFF(struct ibv_command_buffer, next_attr, 8);
SHCA_ABI_OFF(struct ibv_command_buffer, last_attr, 16);
SHCA_ABI_OFF(struct ibv_command_buffer, uhw_in_idx, 24);
SHCA_ABI_OFF(struct ibv_command_buffer, uhw_out_headroom_dwords, 27);
SHCA_ABI_OFF(struct ibv_command_buffer, hdr, 32);
SHCA_ABI_OFF(struct verbs_dm, dm, 0);
SHCA_ABI_OFF(struct verbs_dm, handle, 32);

SHCA_ABI_SIZE(struct ibv_cq, 128);
SHCA_ABI_SIZE(struct ibv_cq_ex, 288);
SHCA_ABI_SIZE(struct verbs_cq, 288);
SHCA_ABI_OFF(struct verbs_cq, cq, 0);
SHCA_ABI_OFF(struct verbs_cq, cq_ex, 0);
SHCA_ABI_SIZE(struct ibv_qp, 160);
SHCA_ABI_SIZE(struct ibv_qp_ex, 352);
SHCA_ABI_SIZE(struct verbs_qp, 368);
SHCA_ABI_OFF(struct verbs_qp, qp, 0);
SHCA_ABI_OFF(struct verbs_qp, qp_ex, 0);
SHCA_ABI_OFF(struct verbs_qp, comp_mask, 352);
SHCA_ABI_OFF(struct verbs_qp, xrcd, 360);

SHCA_ABI_SIZE(struct ib_uverbs_cmd_hdr, 8);
SHCA_ABI_SIZE(struct ibv_get_context, 16);
SHCA_ABI_OFF(struct ibv_get_context, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_alloc_pd, 16);
SHCA_ABI_OFF(struct ibv_alloc_pd, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_query_port, 24);
SHCA_ABI_OFF(struct ibv_query_port, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_reg_mr, 48);
SHCA_ABI_OFF(struct ibv_reg_mr, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_rereg_mr, 56);
SHCA_ABI_OFF(struct ibv_rereg_mr, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_create_cq, 40);
SHCA_ABI_OFF(struct ibv_create_cq, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_create_qp, 64);
SHCA_ABI_OFF(struct ibv_create_qp, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_query_qp, 24);
SHCA_ABI_OFF(struct ibv_query_qp, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_modify_qp, 120);
SHCA_ABI_OFF(struct ibv_modify_qp, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_create_srq, 40);
SHCA_ABI_OFF(struct ibv_create_srq, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_modify_srq, 24);
SHCA_ABI_OFF(struct ibv_modify_srq, core_payload, 8);
SHCA_ABI_SIZE(struct ibv_query_srq, 24);
SHCA_ABI_OFF(struct ibv_query_srq, core_payload, 8);
SHCA_ABI_SIZE(struct ib_uverbs_create_srq_resp, 16);
SHCA_ABI_SIZE(struct ib_uverbs_get_context_resp, 8);
SHCA_ABI_SIZE(struct ib_uverbs_alloc_pd_resp, 4);
SHCA_ABI_SIZE(struct ib_uverbs_reg_mr_resp, 12);
SHCA_ABI_SIZE(struct ib_uverbs_rereg_mr_resp, 8);
SHCA_ABI_SIZE(struct ib_uverbs_ex_query_device_resp, 304);
SHCA_ABI_SIZE(struct ib_uverbs_create_cq_resp, 8);
SHCA_ABI_SIZE(struct ib_uverbs_create_qp_resp, 32);

SHCA_ABI_SIZE(struct verbs_context_ops, 76 * 8);
SHCA_ABI_OP(advise_mr, 0);
SHCA_ABI_OP(alloc_dm, 1);
SHCA_ABI_OP(alloc_mw, 2);
SHCA_ABI_OP(alloc_null_mr, 3);
SHCA_ABI_OP(alloc_parent_domain, 4);
SHCA_ABI_OP(alloc_pd, 5);
SHCA_ABI_OP(alloc_td, 6);
SHCA_ABI_OP(async_event, 7);
SHCA_ABI_OP(attach_counters_point_flow, 8);
SHCA_ABI_OP(attach_mcast, 9);
SHCA_ABI_OP(bind_mw, 10);
SHCA_ABI_OP(close_xrcd, 11);
SHCA_ABI_OP(cq_event, 12);
SHCA_ABI_OP(create_ah, 13);
SHCA_ABI_OP(create_counters, 14);
SHCA_ABI_OP(create_cq, 15);
SHCA_ABI_OP(create_cq_ex, 16);
SHCA_ABI_OP(create_flow, 17);
SHCA_ABI_OP(create_flow_action_esp, 18);
SHCA_ABI_OP(create_qp, 19);
SHCA_ABI_OP(create_qp_ex, 20);
SHCA_ABI_OP(create_rwq_ind_table, 21);
SHCA_ABI_OP(create_srq, 22);
SHCA_ABI_OP(create_srq_ex, 23);
SHCA_ABI_OP(create_wq, 24);
SHCA_ABI_OP(dealloc_mw, 25);
SHCA_ABI_OP(dealloc_pd, 26);
SHCA_ABI_OP(dealloc_td, 27);
SHCA_ABI_OP(dereg_mr, 28);
SHCA_ABI_OP(destroy_ah, 29);
SHCA_ABI_OP(destroy_counters, 30);
SHCA_ABI_OP(destroy_cq, 31);
SHCA_ABI_OP(destroy_flow, 32);
SHCA_ABI_OP(destroy_flow_action, 33);
SHCA_ABI_OP(destroy_qp, 34);
SHCA_ABI_OP(destroy_rwq_ind_table, 35);
SHCA_ABI_OP(destroy_srq, 36);
SHCA_ABI_OP(destroy_wq, 37);
SHCA_ABI_OP(detach_mcast, 38);
SHCA_ABI_OP(free_context, 39);
SHCA_ABI_OP(free_dm, 40);
SHCA_ABI_OP(get_srq_num, 41);
SHCA_ABI_OP(import_dm, 42);
SHCA_ABI_OP(import_mr, 43);
SHCA_ABI_OP(import_pd, 44);
SHCA_ABI_OP(modify_cq, 45);
SHCA_ABI_OP(modify_flow_action_esp, 46);
SHCA_ABI_OP(modify_qp, 47);
SHCA_ABI_OP(modify_qp_rate_limit, 48);
SHCA_ABI_OP(modify_srq, 49);
SHCA_ABI_OP(modify_wq, 50);
SHCA_ABI_OP(open_qp, 51);
SHCA_ABI_OP(open_xrcd, 52);
SHCA_ABI_OP(poll_cq, 53);
SHCA_ABI_OP(post_recv, 54);
SHCA_ABI_OP(post_send, 55);
SHCA_ABI_OP(post_srq_ops, 56);
SHCA_ABI_OP(post_srq_recv, 57);
SHCA_ABI_OP(query_device_ex, 58);
SHCA_ABI_OP(query_ece, 59);
SHCA_ABI_OP(query_port, 60);
SHCA_ABI_OP(query_qp, 61);
SHCA_ABI_OP(query_qp_data_in_order, 62);
SHCA_ABI_OP(query_rt_values, 63);
SHCA_ABI_OP(query_srq, 64);
SHCA_ABI_OP(read_counters, 65);
SHCA_ABI_OP(reg_dm_mr, 66);
SHCA_ABI_OP(reg_dmabuf_mr, 67);
SHCA_ABI_OP(reg_mr, 68);
SHCA_ABI_OP(req_notify_cq, 69);
SHCA_ABI_OP(rereg_mr, 70);
SHCA_ABI_OP(resize_cq, 71);
SHCA_ABI_OP(set_ece, 72);
SHCA_ABI_OP(unimport_dm, 73);
SHCA_ABI_OP(unimport_mr, 74);
SHCA_ABI_OP(unimport_pd, 75);

#endif /* SOFTHCA_VERBS_PRIVATE_H */
