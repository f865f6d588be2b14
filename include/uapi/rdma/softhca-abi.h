/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softhca: the ABI between the kernel module and its rdma-core provider
 * (providers/softhca, libsofthca-rdmav34.so).
 *
 * Everything not listed here uses the RDMA core's generic uverbs commands
 * unchanged. Completion queues of a process are rings in memory it maps
 * (struct softhca_cq_ring): completions reach it as numbers, never as
 * kernel pointers, and polling needs no system call. Work queues may be
 * mapped rings too (struct softhca_wq_ring): posting a receive needs no
 * system call, posting sends one doorbell per batch.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>

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
	SOFTHCA_IB_METHOD_QP_DOORBELL,
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

/*
 * Mapped work queues. A process asks for them in create_qp's driver data
 * (struct softhca_create_qp); the response (struct softhca_create_qp_resp)
 * says which it got and where to map them:
 *
 *   mmap(NULL, mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED, cmd_fd,
 *        mmap_offset)
 *
 * Each ring is a struct softhca_wq_ring header followed by @slots slots
 * of @slot_size bytes; work request n lives in slot n & (slots - 1).
 * Counters are free-running 32-bit numbers. Everything the process writes
 * is read by the kernel once, into its own memory, and validated there:
 * a ring with impossible indices or a malformed slot costs the process
 * that QP, nothing else.
 *
 * Receive ring (SOFTHCA_QP_RQ_RING; QPs without an SRQ): ibv_post_recv
 * writes struct softhca_rwqe slots and then, with release ordering,
 * @producer; no system call. The kernel takes them when a message needs
 * one and publishes in @consumer how many it has taken (completed or
 * being filled), so producer - consumer is at most max_recv_wr. After
 * writing @producer, the process must read @doorbell (with a full barrier
 * between the two) and, if it is not zero, ring SOFTHCA_DB_RQ: the kernel
 * sets it while the QP is in the error state (receives posted then are
 * flushed by the doorbell) and when a sender found the queue empty (the
 * doorbell ends its RNR wait). A producer more than max_recv_wr ahead of
 * @consumer, or behind requests already taken, or a slot with more than
 * max_recv_sge entries puts the QP in the error state with
 * IB_EVENT_QP_FATAL, and the ring is not read again. Moving the QP to
 * RESET drops what was posted: @consumer becomes the current @producer.
 *
 * Send ring (SOFTHCA_QP_SQ_RING; RC, UC and UD QPs): ibv_post_send writes
 * struct softhca_swqe slots and rings SOFTHCA_DB_SQ with the new
 * producer value as SOFTHCA_IB_ATTR_DOORBELL_PRODUCER (the header's
 * @producer is not read). The kernel posts the slots in order, as
 * POST_SEND would (the same checks; inline data is copied from the
 * addresses in the SGEs while the doorbell runs), and publishes in
 * @consumer how many slots it has taken. It stops at the first request
 * it refuses and returns that errno: the requests before it were posted,
 * slot @consumer is the refused one. A producer more than @slots ahead of
 * @consumer is refused with EINVAL and nothing is posted. Memory-window
 * binds go through SOFTHCA_IB_METHOD_QP_POST_LOCAL after a doorbell. A UD
 * slot names its address handle by the number create_ah returned
 * (struct softhca_create_ah_resp), which is valid in the uverbs context
 * that created the AH until the AH is destroyed.
 */
enum softhca_create_qp_flags {
	SOFTHCA_QP_RQ_RING = 1 << 0,
	SOFTHCA_QP_SQ_RING = 1 << 1,
};

/**
 * struct softhca_create_qp - driver data of the create_qp command
 * @flags: SOFTHCA_QP_* rings asked for
 * @reserved: zero
 */
struct softhca_create_qp {
	__u32 flags;
	__u32 reserved;
};

/**
 * struct softhca_create_qp_resp - driver data of the create_qp response
 * @rq_mmap_offset: receive ring: mmap() offset on the uverbs file
 * @sq_mmap_offset: send ring: mmap() offset on the uverbs file
 * @rq_mmap_size: receive ring: bytes to map
 * @sq_mmap_size: send ring: bytes to map
 * @rq_slots: receive ring: slots (a power of two)
 * @sq_slots: send ring: slots (a power of two)
 * @rq_slot_size: receive ring: bytes per slot
 * @sq_slot_size: send ring: bytes per slot
 * @flags: SOFTHCA_QP_* rings granted (the others' fields are zero)
 * @reserved: zero
 */
struct softhca_create_qp_resp {
	__aligned_u64 rq_mmap_offset;
	__aligned_u64 sq_mmap_offset;
	__u32 rq_mmap_size;
	__u32 sq_mmap_size;
	__u32 rq_slots;
	__u32 sq_slots;
	__u32 rq_slot_size;
	__u32 sq_slot_size;
	__u32 flags;
	__u32 reserved;
};

/**
 * struct softhca_wq_ring - header of a mapped work queue
 * @producer: receive ring: requests the process has written
 *	(free-running); written only by the process
 * @reserved0: keeps the kernel's fields on their own cache line
 * @consumer: slots the kernel has taken (free-running); written only by
 *	the kernel
 * @doorbell: receive ring: non-zero when the process must ring
 *	SOFTHCA_DB_RQ after writing @producer; written only by the kernel
 * @reserved1: pads the header to SOFTHCA_WQ_RING_HDR bytes
 */
struct softhca_wq_ring {
	__u32 producer;
	__u32 reserved0[15];
	__u32 consumer;
	__u32 doorbell;
	__u32 reserved1[14];
};

/* Slot 0 of a mapped work queue starts this many bytes into the mapping. */
#define SOFTHCA_WQ_RING_HDR	128

/**
 * struct softhca_rwqe - a slot of a receive ring
 * @wr_id: the work request's cookie
 * @num_sge: entries of @sge (at most max_recv_sge)
 * @reserved: ignored
 * @sge: the scatter list
 */
struct softhca_rwqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	struct ib_uverbs_sge sge[];
};

/**
 * struct softhca_swqe - a slot of a send ring
 * @wr_id: the work request's cookie
 * @opcode: IBV_WR_* (enum ib_uverbs_wr_opcode): SEND, SEND_WITH_IMM,
 *	SEND_WITH_INV, RDMA_WRITE, RDMA_WRITE_WITH_IMM, RDMA_READ,
 *	ATOMIC_CMP_AND_SWP, ATOMIC_FETCH_AND_ADD, LOCAL_INV
 * @send_flags: IBV_SEND_FENCE, SIGNALED, SOLICITED, INLINE
 * @num_sge: entries of @sge (at most max_send_sge)
 * @ex: immediate data (network byte order) or the rkey to invalidate
 * @remote_addr: RDMA and atomic operations: the remote address
 * @compare_add: atomics: compare (CMP_AND_SWP) or add (FETCH_AND_ADD)
 * @swap: CMP_AND_SWP: the swap value
 * @ah: UD: the address handle's number (softhca_create_ah_resp.ah_num)
 * @remote_qpn: UD: the destination QP
 * @remote_qkey: UD: the Q_Key (high-order bit set: the QP's own)
 * @ud_reserved: ignored
 * @rkey: RDMA and atomic operations: the remote key
 * @reserved: ignored
 * @sge: the gather list; with IBV_SEND_INLINE the bytes are copied from
 *	these addresses of the process while the doorbell runs
 */
struct softhca_swqe {
	__aligned_u64 wr_id;
	__u32 opcode;
	__u32 send_flags;
	__u32 num_sge;
	__u32 ex;
	__aligned_u64 remote_addr;
	union {
		struct {
			__aligned_u64 compare_add;
			__aligned_u64 swap;
		};
		struct {
			__u32 ah;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 ud_reserved;
		};
	};
	__u32 rkey;
	__u32 reserved;
	struct ib_uverbs_sge sge[];
};

/**
 * struct softhca_create_ah_resp - driver data of a user create_ah response
 * @ah_num: the AH's number for UD send-ring slots (struct softhca_swqe),
 *	never 0
 * @reserved: zero
 */
struct softhca_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* SOFTHCA_IB_ATTR_DOORBELL_QUEUE */
enum softhca_doorbell_queue {
	SOFTHCA_DB_SQ = 0,
	SOFTHCA_DB_RQ = 1,
};

/*
 * SOFTHCA_IB_METHOD_QP_DOORBELL of UVERBS_OBJECT_QP: a mapped work queue
 * has new requests. Attributes:
 *   SOFTHCA_IB_ATTR_DOORBELL_QP        the QP (idr handle, mandatory)
 *   SOFTHCA_IB_ATTR_DOORBELL_QUEUE     __u32, enum softhca_doorbell_queue
 *	(mandatory)
 *   SOFTHCA_IB_ATTR_DOORBELL_PRODUCER  __u32, SOFTHCA_DB_SQ: the send
 *	ring's producer (mandatory there, ignored for the receive ring)
 * EINVAL for a QP without that ring; the rest as described above.
 */
enum softhca_ib_doorbell_attrs {
	SOFTHCA_IB_ATTR_DOORBELL_QP = (1U << UVERBS_ID_NS_SHIFT),
	SOFTHCA_IB_ATTR_DOORBELL_QUEUE,
	SOFTHCA_IB_ATTR_DOORBELL_PRODUCER,
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
