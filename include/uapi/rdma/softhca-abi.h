/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softhca: the ABI between the kernel module and its rdma-core provider
 * (providers/softhca, libsofthca-rdmav34.so).
 *
 * Everything not listed here uses the RDMA core's generic uverbs commands
 * unchanged. Completion queues of a process are rings in memory it maps
 * (struct softhca_cq_ring): completions reach it as numbers, never as
 * kernel pointers, and polling needs no system call.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>

/*
 * ib_device_ops.uverbs_abi_ver. The provider accepts exactly this
 * version; bump it on any incompatible change below.
 */
#define SOFTHCA_UVERBS_ABI_VERSION	2

/*
 * Read-only sysfs attribute of every softhca device,
 * /sys/class/infiniband/<ibdev>/softhca_abi_version, holding
 * SOFTHCA_UVERBS_ABI_VERSION in decimal. The device reports
 * RDMA_DRIVER_UNKNOWN as its driver id (the kernel's enum has no entry
 * for out-of-tree drivers), so the provider recognises softhca devices by
 * this attribute, which survives "rdma dev set ... name".
 */
#define SOFTHCA_SYSFS_ABI_ATTR		"softhca_abi_version"

/*
 * Device memory is mapped into the process through the uverbs file
 * descriptor, at the offset UVERBS_METHOD_DM_ALLOC returns in the driver
 * attribute SOFTHCA_IB_ATTR_ALLOC_DM_MMAP_OFFSET (a __u64, mandatory):
 *
 *   mmap(NULL, round_up(length, page size), PROT_READ | PROT_WRITE,
 *        MAP_SHARED, cmd_fd, mmap_offset)
 *
 * The mapping starts at offset 0 of the allocation. User DM allocations
 * are page aligned and page granular, so a mapping never exposes another
 * allocation, and their memory returns to the device only once the
 * allocation is freed and every mapping of it is gone.
 */
enum softhca_ib_alloc_dm_attrs {
	SOFTHCA_IB_ATTR_ALLOC_DM_MMAP_OFFSET = (1U << UVERBS_ID_NS_SHIFT),
};

/*
 * Local operations that uverbs' POST_SEND command cannot carry: binding
 * a memory window (ibv_bind_mw(), IBV_WR_BIND_MW, ibv_wr_bind_mw()) and
 * local invalidation (IBV_WR_LOCAL_INV, ibv_wr_local_inv()). The driver
 * method SOFTHCA_IB_METHOD_QP_POST_LOCAL of UVERBS_OBJECT_QP posts one
 * struct softhca_local_wr to the QP's send queue, in order with the
 * requests POST_SEND posts; it completes like them (IBV_WC_BIND_MW,
 * IBV_WC_LOCAL_INV), and a bind the rules refuse completes with
 * IBV_WC_MW_BIND_ERR. Attributes:
 *   SOFTHCA_IB_ATTR_POST_LOCAL_QP  the QP (idr handle, mandatory)
 *   SOFTHCA_IB_ATTR_POST_LOCAL_MW  BIND_MW: the window (idr handle)
 *   SOFTHCA_IB_ATTR_POST_LOCAL_MR  BIND_MW: the MR (idr handle); may be
 *	absent only to unbind a type 1 window (length 0)
 *   SOFTHCA_IB_ATTR_POST_LOCAL_WR  struct softhca_local_wr (mandatory)
 */
enum softhca_ib_qp_methods {
	SOFTHCA_IB_METHOD_QP_POST_LOCAL = (1U << UVERBS_ID_NS_SHIFT),
};

enum softhca_ib_post_local_attrs {
	SOFTHCA_IB_ATTR_POST_LOCAL_QP = (1U << UVERBS_ID_NS_SHIFT),
	SOFTHCA_IB_ATTR_POST_LOCAL_MW,
	SOFTHCA_IB_ATTR_POST_LOCAL_MR,
	SOFTHCA_IB_ATTR_POST_LOCAL_WR,
};

/* struct softhca_local_wr.opcode */
enum softhca_local_opcode {
	SOFTHCA_LOCAL_BIND_MW = 1,
	SOFTHCA_LOCAL_INV = 2,
};

/* struct softhca_local_wr.send_flags: IBV_SEND_FENCE | SIGNALED | SOLICITED */
#define SOFTHCA_LOCAL_SEND_FLAGS	(1U << 0 | 1U << 1 | 1U << 2)

/**
 * struct softhca_local_wr - one local operation
 * @wr_id: the work request's cookie
 * @addr: BIND_MW: first address of the window in the MR's address space
 * @length: BIND_MW: bytes of the window (0: unbind a type 1 window)
 * @opcode: enum softhca_local_opcode
 * @send_flags: IBV_SEND_* flags among SOFTHCA_LOCAL_SEND_FLAGS
 * @key: BIND_MW: the rkey the window takes (the window's index, a new
 *	key byte); LOCAL_INV: the key to invalidate
 * @access: BIND_MW: IBV_ACCESS_REMOTE_* and IBV_ACCESS_ZERO_BASED
 */
struct softhca_local_wr {
	__aligned_u64 wr_id;
	__aligned_u64 addr;
	__aligned_u64 length;
	__u32 opcode;
	__u32 send_flags;
	__u32 key;
	__u32 access;
};

/* struct softhca_cqe.flags */
enum {
	SOFTHCA_CQE_WITH_IMM = 1 << 0,	/* @ex is immediate data */
	SOFTHCA_CQE_WITH_INV = 1 << 1,	/* @ex is the invalidated rkey */
	SOFTHCA_CQE_GRH = 1 << 2,	/* a GRH precedes the data (UD) */
};

/**
 * struct softhca_cqe - one completion in a user CQ ring
 * @wr_id: the work request's cookie
 * @byte_len: bytes received, read or returned by an atomic
 * @ex: immediate data (network byte order) or the invalidated rkey, as
 *	@flags says
 * @qp_num: number of the QP the work request was posted to
 * @src_qp: the sending QP (receive completions)
 * @status: enum ib_wc_status (equal to enum ibv_wc_status)
 * @opcode: enum ib_uverbs_wc_opcode (equal to enum ibv_wc_opcode)
 * @flags: SOFTHCA_CQE_*
 * @sl: service level
 * @pkey_index: P_Key index
 * @reserved: zero
 */
struct softhca_cqe {
	__aligned_u64 wr_id;
	__u32 byte_len;
	__u32 ex;
	__u32 qp_num;
	__u32 src_qp;
	__u8 status;
	__u8 opcode;
	__u8 flags;
	__u8 sl;
	__u16 pkey_index;
	__u16 reserved;
};

/**
 * struct softhca_cq_ring - the memory a process maps for one CQ
 * @producer: completions the kernel has written (free-running); written
 *	only by the kernel, with release ordering after the entry
 * @reserved0: keeps @consumer on its own cache line
 * @consumer: completions the process has taken (free-running); written
 *	only by the process, read by the kernel to see free slots
 * @reserved1: pads the header to 128 bytes
 * @cqe: the ring: softhca_create_cq_resp.slots entries (a power of two),
 *	completion n at index n & (slots - 1). The kernel never writes more
 *	than slots - 1 completions ahead of @consumer; a consumer value
 *	that does not make sense only loses the process its completions.
 */
struct softhca_cq_ring {
	__u32 producer;
	__u32 reserved0[15];
	__u32 consumer;
	__u32 reserved1[15];
	struct softhca_cqe cqe[];
};

/**
 * struct softhca_create_cq_resp - driver data of the create_cq response
 * @mmap_offset: mmap() offset on the uverbs file of the ring (from the
 *	core's allocator: rdma_user_mmap_get_offset())
 * @mmap_size: bytes to map (a multiple of the page size)
 * @slots: entries of softhca_cq_ring.cqe
 * @reserved: zero
 */
struct softhca_create_cq_resp {
	__aligned_u64 mmap_offset;
	__u32 mmap_size;
	__u32 slots;
	__aligned_u64 reserved;
};

#endif /* SOFTHCA_ABI_USER_H */
