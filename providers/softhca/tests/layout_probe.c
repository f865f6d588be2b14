// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Layout probe for the libibverbs private ABI (IBVERBS_PRIVATE_34).
 *
 * Prints "name value" lines for every size, offset and constant that
 * providers/softhca/verbs_private.h declares. Built twice by
 * layout-check.sh: once against our verbs_private.h, once against
 * rdma-core v44.0's own libibverbs/driver.h. The two outputs must be
 * identical.
 */
#include <stddef.h>
#include <stdio.h>

#ifdef PROBE_UPSTREAM
#include <infiniband/driver.h>
#else
#include "../verbs_private.h"
#endif

#define SIZE(type)	printf("sizeof(%s) %zu\n", #type, sizeof(type))
#define OFF(type, m)	printf("offsetof(%s, %s) %zu\n", #type, #m, \
			       offsetof(type, m))
#define VAL(c)		printf("%s %lld\n", #c, (long long)(c))

#define OPS_OFF(m)	OFF(struct verbs_context_ops, m)

int main(void)
{
	/* Public structures embedded in private ones. */
	SIZE(struct ibv_device);
	SIZE(struct ibv_context);
	SIZE(struct verbs_context);
	OFF(struct verbs_context, context);
	SIZE(struct ibv_mr);
	SIZE(struct ibv_dm);

	SIZE(struct verbs_match_ent);
	OFF(struct verbs_match_ent, driver_data);
	OFF(struct verbs_match_ent, u.modalias);
	OFF(struct verbs_match_ent, u.driver_id);
	OFF(struct verbs_match_ent, vendor);
	OFF(struct verbs_match_ent, device);
	OFF(struct verbs_match_ent, kind);
	VAL(VERBS_MATCH_SENTINEL);
	VAL(VERBS_MATCH_PCI);
	VAL(VERBS_MATCH_MODALIAS);
	VAL(VERBS_MATCH_DRIVER_ID);

	SIZE(struct verbs_sysfs_dev);
	OFF(struct verbs_sysfs_dev, entry);
	OFF(struct verbs_sysfs_dev, provider_data);
	OFF(struct verbs_sysfs_dev, match);
	OFF(struct verbs_sysfs_dev, flags);
	OFF(struct verbs_sysfs_dev, sysfs_name);
	OFF(struct verbs_sysfs_dev, sysfs_cdev);
	OFF(struct verbs_sysfs_dev, ibdev_name);
	OFF(struct verbs_sysfs_dev, ibdev_path);
	OFF(struct verbs_sysfs_dev, modalias);
	OFF(struct verbs_sysfs_dev, node_guid);
	OFF(struct verbs_sysfs_dev, driver_id);
	OFF(struct verbs_sysfs_dev, node_type);
	OFF(struct verbs_sysfs_dev, ibdev_idx);
	OFF(struct verbs_sysfs_dev, num_ports);
	OFF(struct verbs_sysfs_dev, abi_ver);
	OFF(struct verbs_sysfs_dev, time_created);

	SIZE(struct verbs_device_ops);
	OFF(struct verbs_device_ops, name);
	OFF(struct verbs_device_ops, match_min_abi_version);
	OFF(struct verbs_device_ops, match_max_abi_version);
	OFF(struct verbs_device_ops, match_table);
	OFF(struct verbs_device_ops, static_providers);
	OFF(struct verbs_device_ops, match_device);
	OFF(struct verbs_device_ops, alloc_context);
	OFF(struct verbs_device_ops, import_context);
	OFF(struct verbs_device_ops, alloc_device);
	OFF(struct verbs_device_ops, uninit_device);

	SIZE(struct verbs_device);
	OFF(struct verbs_device, device);
	OFF(struct verbs_device, ops);
	OFF(struct verbs_device, refcount);
	OFF(struct verbs_device, entry);
	OFF(struct verbs_device, sysfs);
	OFF(struct verbs_device, core_support);

	SIZE(struct verbs_mr);
	OFF(struct verbs_mr, ibv_mr);
	OFF(struct verbs_mr, mr_type);
	OFF(struct verbs_mr, access);
	VAL(IBV_MR_TYPE_MR);
	VAL(IBV_MR_TYPE_NULL_MR);
	VAL(IBV_MR_TYPE_IMPORTED_MR);
	VAL(IBV_MR_TYPE_DMABUF_MR);

	SIZE(struct verbs_dm);
	OFF(struct verbs_dm, dm);
	OFF(struct verbs_dm, handle);
	SIZE(struct ibv_command_buffer);
	OFF(struct ibv_command_buffer, next);
	OFF(struct ibv_command_buffer, next_attr);
	OFF(struct ibv_command_buffer, last_attr);
	OFF(struct ibv_command_buffer, uhw_in_idx);
	OFF(struct ibv_command_buffer, uhw_out_idx);
	OFF(struct ibv_command_buffer, uhw_in_headroom_dwords);
	OFF(struct ibv_command_buffer, uhw_out_headroom_dwords);
	OFF(struct ibv_command_buffer, hdr);

	SIZE(struct ibv_cq);
	SIZE(struct ibv_cq_ex);
	SIZE(struct verbs_cq);
	OFF(struct verbs_cq, cq);
	OFF(struct verbs_cq, cq_ex);
	SIZE(struct ibv_qp);
	SIZE(struct ibv_qp_ex);
	SIZE(struct verbs_qp);
	OFF(struct verbs_qp, qp);
	OFF(struct verbs_qp, qp_ex);
	OFF(struct verbs_qp, comp_mask);
	OFF(struct verbs_qp, xrcd);
	VAL(VERBS_QP_XRCD);
	VAL(VERBS_QP_EX);

	SIZE(struct ibv_get_context);
	OFF(struct ibv_get_context, core_payload);
	SIZE(struct ibv_alloc_pd);
	OFF(struct ibv_alloc_pd, core_payload);
	SIZE(struct ibv_query_port);
	OFF(struct ibv_query_port, core_payload);
	SIZE(struct ibv_reg_mr);
	OFF(struct ibv_reg_mr, core_payload);
	SIZE(struct ibv_rereg_mr);
	OFF(struct ibv_rereg_mr, core_payload);
	SIZE(struct ibv_create_cq);
	OFF(struct ibv_create_cq, core_payload);
	SIZE(struct ibv_create_qp);
	OFF(struct ibv_create_qp, core_payload);
	SIZE(struct ibv_query_qp);
	OFF(struct ibv_query_qp, core_payload);
	SIZE(struct ibv_modify_qp);
	OFF(struct ibv_modify_qp, core_payload);
	SIZE(struct ib_uverbs_get_context_resp);
	SIZE(struct ib_uverbs_alloc_pd_resp);
	SIZE(struct ib_uverbs_reg_mr_resp);
	SIZE(struct ib_uverbs_rereg_mr_resp);
	SIZE(struct ib_uverbs_ex_query_device_resp);
	SIZE(struct ib_uverbs_create_cq_resp);
	SIZE(struct ib_uverbs_create_qp_resp);

	SIZE(struct verbs_context_ops);
	OPS_OFF(advise_mr);
	OPS_OFF(alloc_dm);
	OPS_OFF(alloc_mw);
	OPS_OFF(alloc_null_mr);
	OPS_OFF(alloc_parent_domain);
	OPS_OFF(alloc_pd);
	OPS_OFF(alloc_td);
	OPS_OFF(async_event);
	OPS_OFF(attach_counters_point_flow);
	OPS_OFF(attach_mcast);
	OPS_OFF(bind_mw);
	OPS_OFF(close_xrcd);
	OPS_OFF(cq_event);
	OPS_OFF(create_ah);
	OPS_OFF(create_counters);
	OPS_OFF(create_cq);
	OPS_OFF(create_cq_ex);
	OPS_OFF(create_flow);
	OPS_OFF(create_flow_action_esp);
	OPS_OFF(create_qp);
	OPS_OFF(create_qp_ex);
	OPS_OFF(create_rwq_ind_table);
	OPS_OFF(create_srq);
	OPS_OFF(create_srq_ex);
	OPS_OFF(create_wq);
	OPS_OFF(dealloc_mw);
	OPS_OFF(dealloc_pd);
	OPS_OFF(dealloc_td);
	OPS_OFF(dereg_mr);
	OPS_OFF(destroy_ah);
	OPS_OFF(destroy_counters);
	OPS_OFF(destroy_cq);
	OPS_OFF(destroy_flow);
	OPS_OFF(destroy_flow_action);
	OPS_OFF(destroy_qp);
	OPS_OFF(destroy_rwq_ind_table);
	OPS_OFF(destroy_srq);
	OPS_OFF(destroy_wq);
	OPS_OFF(detach_mcast);
	OPS_OFF(free_context);
	OPS_OFF(free_dm);
	OPS_OFF(get_srq_num);
	OPS_OFF(import_dm);
	OPS_OFF(import_mr);
	OPS_OFF(import_pd);
	OPS_OFF(modify_cq);
	OPS_OFF(modify_flow_action_esp);
	OPS_OFF(modify_qp);
	OPS_OFF(modify_qp_rate_limit);
	OPS_OFF(modify_srq);
	OPS_OFF(modify_wq);
	OPS_OFF(open_qp);
	OPS_OFF(open_xrcd);
	OPS_OFF(poll_cq);
	OPS_OFF(post_recv);
	OPS_OFF(post_send);
	OPS_OFF(post_srq_ops);
	OPS_OFF(post_srq_recv);
	OPS_OFF(query_device_ex);
	OPS_OFF(query_ece);
	OPS_OFF(query_port);
	OPS_OFF(query_qp);
	OPS_OFF(query_qp_data_in_order);
	OPS_OFF(query_rt_values);
	OPS_OFF(query_srq);
	OPS_OFF(read_counters);
	OPS_OFF(reg_dm_mr);
	OPS_OFF(reg_dmabuf_mr);
	OPS_OFF(reg_mr);
	OPS_OFF(req_notify_cq);
	OPS_OFF(rereg_mr);
	OPS_OFF(resize_cq);
	OPS_OFF(set_ece);
	OPS_OFF(unimport_dm);
	OPS_OFF(unimport_mr);
	OPS_OFF(unimport_pd);
	return 0;
}
