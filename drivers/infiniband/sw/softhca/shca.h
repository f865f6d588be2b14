/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - software RDMA host channel adapter: the device and the
 * objects (PD, CQ, SRQ, AH, WQE, QP). The MR engine's types (MRs,
 * windows, translations, spans) are in shca_mem.h, the transport's (the
 * packet formats and the requester's and responder's state a QP embeds)
 * in shca_transport.h, the UDP link's in shca_wire.h.
 *
 * Layering (see Documentation/overview.rst): shca_verbs.c is the only
 * file that parses ib_* arguments and udata; the engines (shca_mr.c, ...)
 * work on the types below; shca_main.c owns module init, the rdma link
 * type, the netdev notifier, the driver's registry of devices and their
 * lifetime (->dealloc_driver). shca_main.c calls into the verbs layer,
 * never the other way round.
 *
 * Locks, outermost first (a lock is only ever taken with the ones above
 * it held, never the other way round):
 *
 *   RTNL -> shca_devices_lock (shca_main.c)
 *   shca_qpn_held.lock (shca_qp.c) -> xa_lock(shca_qp_xa)
 *   shca_gsi_lock (shca_qp.c), shca_mcast_lock (shca_mcast.c): leaves; the
 *	readers of the GSI and multicast lists use RCU
 *   shca_qp.lock -> shca_srq.lock (a responder takes a receive WQE of
 *	the QP's SRQ under the QP's lock)
 *   shca_qp.modify_mutex -> shca_qp.lock (modify_qp; it also waits for
 *	the QP's work item, which never takes the mutex)
 *   shca_net_lock (shca_net.c): attach, detach and a namespace's end
 *   shca_atomic_lock (shca_resp.c) -> shca_mr.lock (the 8-byte copy)
 *   umem_mutex of an ODP umem -> shca_mr.lock (the MMU notifier clears
 *	an ODP MR's pages under both; shca_odp.c)
 *   shca_qp.lock, shca_cq.lock, shca_mr.lock: leaves. The execution
 *	engine and the responder hold at most one of them at a time: a
 *	peer's QP lock only with their own released, completions pushed
 *	with no QP lock held, bytes moved with none held at all.
 *
 * Ownership, not locks (taken with a try, or waited for only by
 * modify_qp and destroy, which hold no lock then): SHCA_QP_EXEC_BUSY
 * (the QP's executor, struct shca_qp.exec_flags) and shca_qp.resp_busy
 * (the memory link's responder, shca_resp_claim()).
 *
 * Lookups by number or key (QPs, MRs) run under RCU and take a kref; the
 * memory they read (an MR, a QP's struct shca_qp_link) outlives a grace
 * period after it is unpublished.
 */
#ifndef SHCA_H
#define SHCA_H

#include <linux/completion.h>
#include <linux/etherdevice.h>
#include <linux/genalloc.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/netdevice.h>
#include <linux/siphash.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/xarray.h>
#include <linux/sizes.h>
#include <linux/t10-pi.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>
#include <rdma/signature.h>
#include <rdma/softhca-abi.h>

#include "shca_compat.h"
#include "shca_mem.h"
#include "shca_queue.h"
#include "shca_transport.h"

/* Out of tree, Kbuild passes SOFTHCA_VERSION of scripts/versions.env. */
#ifndef SHCA_DRV_VERSION
#define SHCA_DRV_VERSION	"0.1.0"
#endif
#define SHCA_VENDOR_ID		0xffffff	/* no IEEE OUI: software device */
#define SHCA_VENDOR_PART_ID	0x5348		/* "SH" */

/* Limits the device advertises and enforces. */
#define SHCA_PORT		1
#define SHCA_MAX_PD		0x10000
#define SHCA_MR_INDEX_BITS	18
#define SHCA_MAX_MR		0x40000		/* MR key indices 1 .. SHCA_MAX_MR */
/*
 * The reserved lkey (IBK_LOCAL_DMA_LKEY): local access by a kernel PD to
 * the kernel's address space, no MR behind it. Index 0 never names an MR.
 */
#define SHCA_LOCAL_DMA_LKEY	0x000000ffU
#define SHCA_GID_TBL_LEN	256
#define SHCA_PKEY_TBL_LEN	1
#define SHCA_MAX_FRPL		4096		/* fast-reg page/SG list entries */
#define SHCA_MAX_PI_FRPL	SHCA_MAX_FRPL	/* per list of an integrity MR */
#define SHCA_PAGE_SIZE_CAP	GENMASK_ULL(31, 12)	/* 4 KiB .. 2 GiB */
#define SHCA_MAX_MR_SIZE	BIT_ULL(40)	/* 1 TiB */
#define SHCA_DM_SIZE		SZ_1M		/* device-memory arena */
#define SHCA_DM_MIN_ORDER	6		/* 64-byte granules */
#define SHCA_MAX_CQ		0x4000
#define SHCA_MAX_CQE		0x10000		/* completions per CQ */
#define SHCA_MAX_QP		0x4000
#define SHCA_QPN_MIN		2		/* QP0 and QP1 are reserved */
#define SHCA_QPN_MAX		0xffffff	/* 24-bit QP numbers */
/* The last number a QP gets: 0xffffff is the multicast QPN. */
#define SHCA_QPN_LAST		(IB_MULTICAST_QPN - 1)
#define SHCA_MAX_QP_WR		0x4000		/* per send or receive queue */
#define SHCA_MAX_SGE		32
#define SHCA_MAX_INLINE		512		/* bytes of inline send data */
#define SHCA_MAX_RD_ATOM	128		/* READs/atomics a responder keeps */
#define SHCA_MAX_INIT_RD_ATOM	128		/* ... a requester has outstanding */
#define SHCA_MAX_MSG_SZ		BIT(31)		/* bytes per message */
#define SHCA_GRH_BYTES		40		/* GRH area of a UD receive */
#define SHCA_MAX_AH		0x10000
#define SHCA_MAX_SRQ		0x4000
/* Children of implicit ODP MRs (64 MiB of address space each) per device. */
#define SHCA_ODP_MAX_CHILDREN	1024
#define SHCA_MAX_SRQ_WR		0x4000		/* receive WQEs per SRQ */
#define SHCA_MAX_SRQ_SGE	SHCA_MAX_SGE
#define SHCA_MCAST_QPN		0xffffff	/* a datagram to a group */
#define SHCA_MAX_MCAST_ATTACH	4096		/* attachments per device */
#define SHCA_MAX_MCAST_QP_ATTACH 64		/* QPs of a device per group */

/*
 * Memory a consumer makes the driver allocate for its queues (up to about
 * 20 MiB per QP, 2 MiB per CQ) is charged to its memory cgroup, and a
 * cgroup at its limit makes creation fail with -ENOMEM rather than wake
 * the OOM killer or warn (a user asked for too much, nothing is wrong).
 */
#define SHCA_GFP_QUEUE \
	(GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL | __GFP_NOWARN)

/**
 * enum shca_wire_stat - what the wire counts (port counters)
 * @SHCA_WS_TX_PKTS: packets sent
 * @SHCA_WS_TX_BYTES: bytes sent (RoCE v2 UDP payloads)
 * @SHCA_WS_RX_PKTS: packets received and accepted by a QP
 * @SHCA_WS_RX_BYTES: bytes of those packets
 * @SHCA_WS_TX_ERRORS: packets that could not be sent (no route, no memory)
 * @SHCA_WS_RETRANSMITS: request packets sent again
 * @SHCA_WS_ACK_TIMEOUTS: local ACK timeouts
 * @SHCA_WS_SEQ_NAKS_RCVD: PSN sequence error NAKs received
 * @SHCA_WS_SEQ_NAKS_SENT: PSN sequence error NAKs sent
 * @SHCA_WS_RNR_NAKS_RCVD: RNR NAKs received
 * @SHCA_WS_RNR_NAKS_SENT: RNR NAKs sent
 * @SHCA_WS_INV_NAKS_RCVD: invalid request NAKs received
 * @SHCA_WS_INV_NAKS_SENT: invalid request NAKs sent
 * @SHCA_WS_ACCESS_NAKS_RCVD: remote access error NAKs received
 * @SHCA_WS_ACCESS_NAKS_SENT: remote access error NAKs sent
 * @SHCA_WS_OP_NAKS_RCVD: remote operational error NAKs received
 * @SHCA_WS_OP_NAKS_SENT: remote operational error NAKs sent
 * @SHCA_WS_DUP_REQS: duplicate requests received (answered again)
 * @SHCA_WS_OOS_REQS: requests received out of sequence
 * @SHCA_WS_ICRC_ERRORS: packets dropped for a bad ICRC
 * @SHCA_WS_RX_DROPPED: other packets dropped: malformed, for no QP of the
 *	device, for a QP that does not take them
 * @SHCA_WS_MAX: number of counters
 */
enum shca_wire_stat {
	SHCA_WS_TX_PKTS,
	SHCA_WS_TX_BYTES,
	SHCA_WS_RX_PKTS,
	SHCA_WS_RX_BYTES,
	SHCA_WS_TX_ERRORS,
	SHCA_WS_RETRANSMITS,
	SHCA_WS_ACK_TIMEOUTS,
	SHCA_WS_SEQ_NAKS_RCVD,
	SHCA_WS_SEQ_NAKS_SENT,
	SHCA_WS_RNR_NAKS_RCVD,
	SHCA_WS_RNR_NAKS_SENT,
	SHCA_WS_INV_NAKS_RCVD,
	SHCA_WS_INV_NAKS_SENT,
	SHCA_WS_ACCESS_NAKS_RCVD,
	SHCA_WS_ACCESS_NAKS_SENT,
	SHCA_WS_OP_NAKS_RCVD,
	SHCA_WS_OP_NAKS_SENT,
	SHCA_WS_DUP_REQS,
	SHCA_WS_OOS_REQS,
	SHCA_WS_ICRC_ERRORS,
	SHCA_WS_RX_DROPPED,
	SHCA_WS_MAX,
};

/**
 * struct shca_dev - one softhca ib_device bound to one netdev
 * @ibdev: the core device; first member (ib_alloc_device() contract)
 * @list: entry in the driver registry, under shca_devices_lock
 * @netdev: the Ethernet netdev this device was created on; the core holds
 *	the reference (ib_device_set_netdev()). Cleared under
 *	shca_devices_lock when the netdev unregisters.
 * @registered: ib_register_device() succeeded; under shca_devices_lock
 * @netdev_gone: the netdev unregistered while the device was still being
 *	registered; under shca_devices_lock
 * @port_state: last port state reported by an IB event; under RTNL
 * @port_mtu: the port's active MTU in bytes (the IB MTU the netdev's MTU
 *	carries): the largest datagram; written under RTNL (newlink, the
 *	netdev notifier), read with READ_ONCE() (shca_port_mtu())
 * @fatal: the netdev is unregistering: the device executes nothing more
 *	(see shca_qp_device_fatal())
 * @num_pds: PDs allocated, bounded by SHCA_MAX_PD
 * @num_cqs: CQs allocated, bounded by SHCA_MAX_CQ
 * @num_qps: QPs allocated, bounded by SHCA_MAX_QP
 * @num_ahs: address handles allocated, bounded by SHCA_MAX_AH
 * @num_srqs: SRQs allocated, bounded by SHCA_MAX_SRQ
 * @num_mcast: multicast attachments of its QPs, bounded by
 *	SHCA_MAX_MCAST_ATTACH; under shca_mcast_lock
 * @mr_xa: MR key table: slot -> struct shca_mr, see shca_mr.c
 * @mr_next: cursor of xa_alloc_cyclic() over @mr_xa's slots, under its
 *	xa_lock
 * @mr_retired: the slot of the MR destroyed last, kept reserved (0:
 *	none), under @mr_xa's xa_lock; see shca_mr_unpublish()
 * @mr_round_key: keys of the slot <-> key index permutation, random
 * @mr_byte_key: key of the PRF that gives new MRs their key byte, random
 * @mr_seq: registrations so far, the PRF's input
 * @dm_pool: allocator over the device-memory arena
 * @dm_arena: the arena, SHCA_DM_SIZE physically contiguous bytes
 * @rx_dropped: datagrams for this device's UD and GSI QPs that were
 *	dropped (a wrong Q_Key, the QP not receiving, no receive posted);
 *	the port counter ud_rx_dropped
 * @wstats: what the wire counts (enum shca_wire_stat), port counters
 * @net_entry: entry in its network namespace's device list (shca_net.c)
 * @odp_children: child umems of implicit ODP MRs the device has made
 *	(each costs the kernel about 256 KiB: bounded by @odp_children_max)
 * @odp_children_max: SHCA_ODP_MAX_CHILDREN (tests lower it)
 * @wire_net: the namespace whose UDP sockets it uses; read through
 *	shca_net_of() (shca_net.c)
 * @wire_attached: shca_net_attach() put it on @wire_net's list, and
 *	neither shca_net_detach() nor the namespace's end took it off;
 *	written under shca_net_lock
 *
 * Lock order: RTNL -> shca_devices_lock -> xa_lock(@mr_xa).
 */
struct shca_dev {
	struct ib_device ibdev;
	struct list_head list;
	struct net_device *netdev;
	bool registered;
	bool netdev_gone;
	enum ib_port_state port_state;
	u32 port_mtu;
	bool fatal;
	atomic_t num_pds;
	atomic_t num_cqs;
	atomic_t num_qps;
	atomic_t num_ahs;
	atomic_t num_srqs;
	u32 num_mcast;
	struct xarray mr_xa;
	u32 mr_next;
	u32 mr_retired;
	u32 mr_round_key[4];
	siphash_key_t mr_byte_key;
	atomic64_t mr_seq;
	struct gen_pool *dm_pool;
	void *dm_arena;
	atomic_long_t rx_dropped;
	atomic64_t wstats[SHCA_WS_MAX];
	struct list_head net_entry;
	atomic_t odp_children;
	u32 odp_children_max;
	possible_net_t wire_net;
	bool wire_attached;
};

/**
 * struct shca_ucontext - a user context
 * @ibuc: the core object; first member (INIT_RDMA_OBJ_SIZE)
 * @ahs: the context's address handles by number (struct shca_ah.num),
 *	for UD send-ring slots; entries are read and copied under the
 *	xarray's lock, and removed before the core frees the AH
 */
struct shca_ucontext {
	struct ib_ucontext ibuc;
	struct xarray ahs;
};

/**
 * struct shca_pd - a protection domain
 * @ibpd: the core object; first member (INIT_RDMA_OBJ_SIZE)
 */
struct shca_pd {
	struct ib_pd ibpd;
};

/* Bytes of one T10 protection-information tuple (guard, app tag, ref tag). */
#define SHCA_PI_SIZE	sizeof(struct t10_pi_tuple)

/**
 * struct shca_sig_acc - guard of a block, computed piece by piece
 * @crc: CRC16-T10DIF so far (IB_T10DIF_CRC), seeded with the domain's bg
 * @csum: 32-bit one's-complement sum so far (IB_T10DIF_CSUM)
 */
struct shca_sig_acc {
	u16 crc;
	__wsum csum;
};

/**
 * struct shca_sig_stream - one transfer through the T10-DIF engine
 * @in: the input domain: the one data comes from, whose PI is checked
 * @out: the output domain, whose PI is copied or regenerated
 * @check_mask: ib_sig_attrs.check_mask, one bit per byte of the PI tuple
 *	(bit 7 = byte 0)
 * @to_wire: memory -> wire (input: memory domain); else wire -> memory
 * @in_pi: the input domain carries PI
 * @out_pi: the output domain carries PI
 * @in_guard: the input guard is computed (a guard byte is checked)
 * @out_guard: the output guard is computed from the data (not copied)
 * @share_guard: @out_guard is the same computation as @in_guard
 * @copy_guard: output guard copied from the input PI (same guard type)
 * @copy_app: output app tag copied (same app_tag in both domains)
 * @copy_ref: output ref tag copied (same ref_tag in both domains)
 * @pi_ready: @pi_out of the current block is built
 * @pi_in_off: bytes of the current block's input PI gathered
 * @pi_out_off: bytes of the current block's output PI emitted
 * @interval: data bytes per block (pi_interval)
 * @block: index of the current block, counted from the block whose ref
 *	tag is the domain's ref_tag (the start of the integrity MR)
 * @off: data bytes of the current block moved so far
 * @in_acc: the input-domain guard of the current block so far
 * @out_acc: the output-domain guard of the current block so far
 * @pi_in: the current block's input PI, as gathered
 * @pi_out: the current block's output PI
 * @err_valid: @err holds the first error of the transfer
 * @err: the first error found (its key is left 0 for the caller)
 *
 * Built by shca_sig_stream_init(), fed by shca_sig_stream_xfer() chunk by
 * chunk, in order; chunks may split blocks and PI tuples anywhere.
 */
struct shca_sig_stream {
	struct ib_t10_dif_domain in;
	struct ib_t10_dif_domain out;
	u8 check_mask;
	bool to_wire;
	bool in_pi;
	bool out_pi;
	bool in_guard;
	bool out_guard;
	bool share_guard;
	bool copy_guard;
	bool copy_app;
	bool copy_ref;
	bool pi_ready;
	u8 pi_in_off;
	u8 pi_out_off;
	u32 interval;
	u32 block;
	u32 off;
	struct shca_sig_acc in_acc;
	struct shca_sig_acc out_acc;
	struct t10_pi_tuple pi_in;
	struct t10_pi_tuple pi_out;
	bool err_valid;
	struct ib_sig_err err;
};

/**
 * struct shca_sig_bufs - the windows one shca_sig_stream_xfer() call works on
 * @wire: the wire stream (data, interleaved with PI when the wire domain
 *	carries it): read towards memory, written towards the wire
 * @wire_len: bytes available at @wire
 * @data: the memory data: read towards the wire, written towards memory
 * @data_len: bytes available at @data
 * @meta: the memory PI (8 bytes per block) when the memory domain
 *	carries it, else unused
 * @meta_len: bytes available at @meta
 *
 * shca_sig_stream_xfer() advances each pointer past the bytes it used and
 * lowers each length by as much, as zlib does with its stream windows.
 */
struct shca_sig_bufs {
	void *wire;
	size_t wire_len;
	void *data;
	size_t data_len;
	void *meta;
	size_t meta_len;
};

/* Wire bytes an integrity MR moves between two others per step. */
#define SHCA_SIG_BOUNCE		SZ_1K

/**
 * struct shca_sig_state - integrity MR: signature status and engine state
 * @err: the latched error, valid while @err_exists
 * @err_exists: an error was detected since the status was last read
 * @status_checked: check_mr_status() ran since the last registration;
 *	IB_WR_REG_MR_INTEGRITY is refused while false
 * @attrs: ib_sig_attrs snapshot taken when the registration was posted
 * @pi: a domain of @attrs carries PI: accesses go through the engine
 * @interval: data bytes per block (the PI-carrying domain's pi_interval)
 * @wire_block: bytes per block in the wire view: @interval, plus the
 *	tuple when the wire domain carries PI
 * @data_len: data bytes of the registration
 * @st: the transfer in progress through the MR
 * @live: @st continues at wire offset @wire_off, registration @gen
 * @reported: @st's first error was latched
 * @gen: shca_mr.gen when @st started
 * @wire_off: wire-view offset of the next byte of @st
 * @data_off: offset in the data translation of @st's next data byte
 * @meta_off: offset in the metadata translation of @st's next PI byte
 * @bounce: wire bytes on their way between this MR (the destination) and
 *	another integrity MR
 *
 * Everything is protected by the MR's lock.
 */
struct shca_sig_state {
	struct ib_sig_err err;
	bool err_exists;
	bool status_checked;
	struct ib_sig_attrs attrs;
	bool pi;
	u32 interval;
	u32 wire_block;
	u64 data_len;
	struct shca_sig_stream st;
	bool live;
	bool reported;
	u32 gen;
	u64 wire_off;
	u64 data_off;
	u64 meta_off;
	u8 bounce[SHCA_SIG_BOUNCE];
};

/**
 * enum shca_mmap_kind - what a user mapping of the uverbs file shows
 * @SHCA_MMAP_DM: a range of the device-memory arena
 * @SHCA_MMAP_CQ: the completion ring of a user CQ
 * @SHCA_MMAP_WQ: a mapped send or receive ring of a user QP
 */
enum shca_mmap_kind {
	SHCA_MMAP_DM,
	SHCA_MMAP_CQ,
	SHCA_MMAP_WQ,
};

/**
 * struct shca_mmap_entry - kernel memory a process may map
 * @rdma_entry: the core's entry; it names the mmap offset and its
 *	reference count keeps @addr alive while the object or a mapping
 *	call uses it
 * @kind: see enum shca_mmap_kind
 * @sdev: owning device
 * @addr: DM: kernel virtual address of the arena range; CQ, WQ: the
 *	vmalloc()ed ring
 * @size: its length, a multiple of PAGE_SIZE
 */
struct shca_mmap_entry {
	struct rdma_user_mmap_entry rdma_entry;
	enum shca_mmap_kind kind;
	struct shca_dev *sdev;
	unsigned long addr;
	u64 size;
};

/**
 * struct shca_dm - a device-memory allocation
 * @ibdm: the core object; driver-allocated
 * @addr: kernel virtual address of the allocation in the arena
 * @size: bytes usable (the requested length)
 * @alloc_size: bytes taken from the arena
 * @mmap: user allocations: the mmap entry that owns the range
 */
struct shca_dm {
	struct ib_dm ibdm;
	unsigned long addr;
	u64 size;
	u64 alloc_size;
	struct shca_mmap_entry *mmap;
};

/**
 * struct shca_cq - a completion queue
 * @ibcq: the core object; first member (INIT_RDMA_OBJ_SIZE)
 * @lock: protects everything below but @uring's @consumer, which the
 *	process writes
 * @ring: kernel CQs: @mask + 1 completions; @head is the next to poll
 * @uring: user CQs: the ring the process maps (struct softhca_cq_ring);
 *	completions carry QP numbers, never pointers, and the kernel never
 *	reads back what the process can write except the consumer index
 * @mmap: user CQs: the mmap entry that owns @uring
 * @mask: ring size - 1; the ring holds ibcq.cqe = @mask completions
 * @head: kernel CQs: consumer counter (user CQs: softhca_cq_ring.consumer)
 * @tail: producer counter (free-running)
 * @notify: IB_CQ_SOLICITED or IB_CQ_NEXT_COMP while armed, else 0
 * @overflowed: a completion was lost; IB_EVENT_CQ_ERR was reported
 * @deferred: SHCA_CQ_DEFER_* bits: handler calls owed to the consumer by
 *	completions added from a poster's context, made by @notify_work
 * @notify_work: calls the handlers @deferred asks for, in process
 *	context (see shca_cq_push())
 */
struct shca_cq {
	struct ib_cq ibcq;
	spinlock_t lock; /* see @lock above */
	struct ib_wc *ring;
	struct softhca_cq_ring *uring;
	struct shca_mmap_entry *mmap;
	u32 mask;
	u32 head;
	u32 tail;
	u8 notify;
	bool overflowed;
	unsigned long deferred;
	struct work_struct notify_work;
};

/* struct shca_cq.deferred */
enum {
	SHCA_CQ_DEFER_COMP,	/* comp_handler */
	SHCA_CQ_DEFER_ERR,	/* event_handler with IB_EVENT_CQ_ERR */
};

/**
 * struct shca_srq - a shared receive queue
 * @ibsrq: the core object; first member (INIT_RDMA_OBJ_SIZE)
 * @lock: protects @rq's indices and @limit; taken inside a QP's lock
 * @rq: the receive WQEs
 * @limit: armed limit (IB_SRQ_LIMIT), 0 when not armed
 * @limit_work: reports IB_EVENT_SRQ_LIMIT_REACHED in process context
 */
struct shca_srq {
	struct ib_srq ibsrq;
	spinlock_t lock; /* see @lock above */
	struct shca_queue rq;
	u32 limit;
	struct work_struct limit_work;
};

/**
 * struct shca_av - an address vector: where a datagram goes
 * @dgid: destination GID
 * @sgid: source GID (of the source GID index, when the AV was made)
 * @flow_label: GRH flow label
 * @sgid_index: source GID index
 * @traffic_class: GRH traffic class (IPv4 TOS)
 * @hop_limit: GRH hop limit (IPv4 TTL)
 * @sl: service level
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6, from the source GID
 * @vlan_id: VLAN of the source GID's netdev, 0xffff for none: the tag the
 *	datagram would carry on the wire
 * @smac: MAC address of the source GID's netdev
 * @ifindex: index of the source GID's netdev (a VLAN device for a GID of
 *	one), which packets on the wire leave by
 */
struct shca_av {
	union ib_gid dgid;
	union ib_gid sgid;
	u32 flow_label;
	u8 sgid_index;
	u8 traffic_class;
	u8 hop_limit;
	u8 sl;
	u8 net_type;
	u16 vlan_id;
	u8 smac[ETH_ALEN];
	int ifindex;
};

/**
 * struct shca_path - where a QP's packets go, and how
 * @av: source and destination addresses, traffic class, hop limit and
 *	the netdev of the source GID
 * @sport: UDP source port of the flow
 * @mtu: connections: the path MTU in bytes, no more than the netdev of
 *	the source GID carries
 */
struct shca_path {
	struct shca_av av;
	u16 sport;
	u32 mtu;
};

/**
 * struct shca_ah - an address handle
 * @ibah: the core object; first member (INIT_RDMA_OBJ_SIZE)
 * @av: its address vector, fixed at creation
 * @uc: user AHs: the context whose @ahs table numbers it
 * @num: user AHs: its number in @uc's table (UD send-ring slots name it
 *	by that), or 0
 */
struct shca_ah {
	struct ib_ah ibah;
	struct shca_av av;
	struct shca_ucontext *uc;
	u32 num;
};

/**
 * struct shca_wqe - a work request as the QP keeps it
 * @wr_id: the consumer's cookie
 * @opcode: send queue: enum ib_wr_opcode
 * @send_flags: send queue: IB_SEND_* flags
 * @num_sge: entries of @sge in use (0 for inline data)
 * @inline_len: bytes of inline data stored in place of @sge
 * @ex: immediate data or the rkey to invalidate
 * @rdma: RDMA READ/WRITE: remote address and key
 * @atomic: atomics: remote address, key and operands
 * @reg: REG_MR/REG_MR_INTEGRITY: the MR, key and rights to register
 * @bind: BIND_MW: the window, the MR and the range and rights to bind
 * @ud: UD sends: the address vector (copied from the AH at post time),
 *	destination QP number and Q_Key
 * @sig: REG_MR_INTEGRITY: signature attributes, snapshotted at post
 * @psn: on the wire: the first PSN of the request, set when it is sent
 * @lpsn: on the wire: its last PSN (a READ: of its last response)
 * @wire_done: on the wire: executed (a local operation, a UC message
 *	sent, a local error); completes with @wire_status in its turn
 * @wire_status: see @wire_done
 * @sge: the scatter/gather list, or inline data
 *
 * Slots of a queue are sizeof(struct shca_wqe) plus room for the larger
 * of max_sge entries and max_inline_data bytes.
 */
struct shca_wqe {
	u64 wr_id;
	u32 opcode;
	u32 send_flags;
	u32 num_sge;
	u32 inline_len;
	union {
		__be32 imm_data;
		u32 invalidate_rkey;
	} ex;
	union {
		struct {
			u64 remote_addr;
			u32 rkey;
		} rdma;
		struct {
			u64 remote_addr;
			u64 compare_add;
			u64 swap;
			u32 rkey;
		} atomic;
		struct {
			struct ib_mr *mr;
			u32 key;
			int access;
		} reg;
		struct {
			struct shca_av av;
			u32 remote_qpn;
			u32 remote_qkey;
		} ud;
		struct shca_bind bind;
	};
	struct ib_sig_attrs sig;
	u32 psn;
	u32 lpsn;
	bool wire_done;
	u8 wire_status;
	struct ib_sge sge[];
};

/**
 * shca_wqe_len() - the bytes a WQE's scatter list (or inline data) holds
 * @w: the WQE
 *
 * Return: the sum of its SGEs' lengths, or its inline length.
 */
static inline u64 shca_wqe_len(const struct shca_wqe *w)
{
	u64 len = 0;
	u32 i;

	if (!w->num_sge)
		return w->inline_len;
	for (i = 0; i < w->num_sge; i++)
		len += w->sge[i].length;
	return len;
}

/**
 * struct shca_qp_link - what a lookup by number finds of a QP
 * @ref: held by the QP (the initial reference, dropped by destroy) and
 *	by each lookup of a peer delivering to it
 * @released: completed when the last reference is gone
 * @qp: the QP; dereferenced only with a reference held
 * @gsi_entry: GSI QPs: entry in the list of every device's QP1 (under
 *	shca_gsi_lock, read under RCU)
 * @rcu: frees the link after the RCU readers that may have found it
 *
 * The QP table, the GSI list and the multicast attachments point at
 * links, not at QPs: the core frees a QP as soon as destroy_qp returns,
 * while a link outlives every RCU reader that found it, so a lookup that
 * loses the race with destroy reads only link memory (its kref fails)
 * and destroy need not wait for a grace period.
 */
struct shca_qp_link {
	struct kref ref;
	struct completion released;
	struct shca_qp *qp;
	struct list_head gsi_entry;
	struct rcu_head rcu;
};

/**
 * struct shca_uring - a work queue a process maps (see softhca-abi.h)
 * @ring: the vmalloc_user()ed header and slots; NULL without a ring. The
 *	kernel writes only @ring's consumer and doorbell fields and reads
 *	every other byte once, with READ_ONCE(), before validating it
 * @mmap: the mmap entry that owns @ring
 * @slot_size: bytes per slot
 * @cons: send ring: slots taken (the consumer the kernel publishes);
 *	under the QP's @post_mutex
 * @dead: receive ring: found corrupt; never read again (QP's @lock)
 */
struct shca_uring {
	struct softhca_wq_ring *ring;
	struct shca_mmap_entry *mmap;
	u32 slot_size;
	u32 cons;
	bool dead;
};

/**
 * struct shca_qp - a queue pair (RC, UC, UD or the GSI QP)
 * @ibqp: the core object; first member (INIT_RDMA_OBJ_SIZE)
 * @sdev: owning device
 * @link: what lookups by number find; holds the QP's reference count
 * @lock: protects @state, the connection attributes (@dest_qpn, @dgid,
 *	@sq_psn, @rq_psn ...), the @sq and @rq indices; never held while
 *	bytes move. A peer's lock is taken only with this one released.
 * @post_mutex: user QPs: serialises building WQEs that copy inline data
 *	from user memory
 * @modify_mutex: serialises modify_qp (the core holds only a shared lock
 *	on the QP): the check of a transition, the resources it grows
 *	(@wresp.res) and its application. Outside @lock; taken before it
 * @scratch: user QPs: one slot to build a WQE in, under @post_mutex
 * @resp_wqe: a receive WQE a datagram takes: of a UD peer this QP sends
 *	to in memory, or of this QP from the wire; used by the holder of
 *	SHCA_QP_EXEC_BUSY
 * @held: one per send SGE (@sq.max_sge), owned by the holder of
 *	SHCA_QP_EXEC_BUSY: the local SGEs of the request it executes,
 *	resolved once when the execution starts and used by every copy it
 *	makes; dropped before the request completes or waits
 * @work: executes the send queue, flushes in the error state, and
 *	reports the events in @events
 * @exec_flags: SHCA_QP_EXEC_BUSY while @work or a poster executes the
 *	send queue (one at a time; see shca_exec.c)
 * @events: affiliated events (bit = enum ib_event_type) due to the
 *	consumer, raised from a poster's context; @work reports them
 * @state: the QP state
 * @sq: send queue
 * @rq: receive queue
 * @usq: user QPs: the send ring the process maps, if it asked for one
 * @urq: user QPs: the receive ring the process maps, if it asked for
 *	one; its requests are imported into @rq under @lock (the @rq
 *	indices are the ring's counters)
 * @max_inline: inline data limit granted at creation
 * @sq_sig_all: every send WR completes (IB_SIGNAL_ALL_WR)
 * @user: created through uverbs
 * @access: qp_access_flags (responder rights)
 * @dest_qpn: connected peer QP number
 * @dgid: GID of the peer's port
 * @sgid_index: source GID index
 * @path_mtu: path MTU
 * @sq_psn: PSN of the next request this QP sends; advances by the
 *	packets of each request its peer accepts
 * @rq_psn: PSN the responder expects next; a request with another PSN is
 *	not accepted (a stale or forged connection), see shca_exec.c
 * @timeout: local ACK timeout (4.096 us * 2^timeout)
 * @retry_cnt: transport retries before IB_WC_RETRY_EXC_ERR
 * @rnr_retry: RNR retries before IB_WC_RNR_RETRY_EXC_ERR (7: forever)
 * @min_rnr_timer: RNR NAK timer this QP asks its requesters to wait
 * @max_rd_atomic: outstanding READs/atomics as requester
 * @max_dest_rd_atomic: outstanding READs/atomics as responder
 * @hop_limit: GRH hop limit of the path
 * @traffic_class: GRH traffic class
 * @flow_label: GRH flow label
 * @sl: service level
 * @qkey: UD: the QP's Q_Key
 * @req: the requester's view of the WQE at the head of the send queue,
 *	owned by whoever holds SHCA_QP_EXEC_BUSY (see struct shca_req)
 * @peer_sdev: device of the last peer whose GID was validated (work
 *	item; cleared by modify_qp when the address changes)
 * @recv_inflight: receive WQEs taken from the QP's receive queue or SRQ
 *	and not completed yet (by a peer's requester on the memory link,
 *	by the QP's own responder on the wire); the error state's flush and
 *	RESET wait for them, so that no completion overtakes them and no
 *	byte lands after a drain or RESET; under @lock
 * @last_wqe_sent: IB_EVENT_QP_LAST_WQE_REACHED was reported since the
 *	QP entered the error state; under @lock
 * @rxq: packets from the wire for this QP, taken by @work
 * @rxq_bytes: truesize of the packets in @rxq (bounds it)
 * @wtimer: on the wire: the local ACK timeout and the RNR wait
 * @wire: RC and UC: the connection runs on the wire (shca_wire.c), set
 *	when the QP enters RTR
 * @path: RC and UC: where its packets go
 * @wreq: on the wire: requester and completer state
 * @wresp: responder state (both links)
 * @resp_busy: the memory link's responder is taken: by a peer's
 *	requester handing it a message, or by shca_qp_exec_stop(). Set
 *	under @lock, cleared by its holder with a release store
 *	(shca_resp_claim(), shca_resp_release())
 */
struct shca_qp {
	struct ib_qp ibqp;
	struct shca_dev *sdev;
	struct shca_qp_link *link;
	spinlock_t lock; /* see @lock above */
	struct mutex post_mutex; /* see @post_mutex above */
	struct mutex modify_mutex; /* see @modify_mutex above */
	struct shca_wqe *scratch;
	struct shca_wqe *resp_wqe;
	struct shca_span *held;
	struct delayed_work work;
	unsigned long exec_flags;
	unsigned long events;
	enum ib_qp_state state;
	struct shca_queue sq;
	struct shca_queue rq;
	struct shca_uring usq;
	struct shca_uring urq;
	u32 max_inline;
	bool sq_sig_all;
	bool user;
	int access;
	u32 dest_qpn;
	union ib_gid dgid;
	u8 sgid_index;
	enum ib_mtu path_mtu;
	u32 sq_psn;
	u32 rq_psn;
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 max_rd_atomic;
	u8 max_dest_rd_atomic;
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	u8 sl;
	u32 qkey;
	struct shca_req req;
	const struct shca_dev *peer_sdev;
	u32 recv_inflight;
	bool last_wqe_sent;
	struct sk_buff_head rxq;
	atomic_t rxq_bytes;
	struct timer_list wtimer;
	bool wire;
	struct shca_path path;
	struct shca_wreq wreq;
	struct shca_wresp wresp;
	bool resp_busy;
};

/*
 * struct shca_qp.exec_flags: SHCA_QP_EXEC_BUSY while someone executes the
 * send queue; SHCA_QP_EXEC_POSTED when a poster found it taken and left
 * its WQEs to the holder (see shca_exec_release()).
 */
enum {
	SHCA_QP_EXEC_BUSY,
	SHCA_QP_EXEC_POSTED,
	SHCA_QP_EXEC_TIMEOUT,	/* the wire timer ran out (shca_wire.c) */
	SHCA_QP_EXEC_WREQ_START, /* RTS entered: wreq starts at sq_psn */
};

/**
 * shca_wc_init() - start a work completion
 * @wc: the completion; every member is set
 * @wr_id: its work request id
 * @status: its status
 * @opcode: its opcode
 * @qp: its QP
 *
 * One store per member, the others zero: a compound literal of struct
 * ib_wc is a string store, which an emulated CPU (QEMU TCG, where softhca
 * is tested and benchmarked) executes a word per step, and this runs for
 * every completion. Should struct ib_wc grow past the members listed
 * here, it is zeroed whole first.
 */
static inline void shca_wc_init(struct ib_wc *wc, u64 wr_id,
				enum ib_wc_status status,
				enum ib_wc_opcode opcode, struct ib_qp *qp)
{
	if (sizeof(*wc) != ALIGN(offsetofend(struct ib_wc, network_hdr_type),
				 __alignof__(struct ib_wc)))
		memset(wc, 0, sizeof(*wc));
	wc->wr_id = wr_id;
	wc->status = status;
	wc->opcode = opcode;
	wc->vendor_err = 0;
	wc->byte_len = 0;
	wc->qp = qp;
	wc->ex.imm_data = 0;
	wc->src_qp = 0;
	wc->slid = 0;
	wc->wc_flags = 0;
	wc->pkey_index = 0;
	wc->sl = 0;
	wc->dlid_path_bits = 0;
	wc->port_num = 0;
	eth_zero_addr(wc->smac);
	wc->vlan_id = 0;
	wc->network_hdr_type = 0;
}

/**
 * shca_resp_receiving() - the QP takes requests as a responder
 * @qp: the QP
 *
 * RTR, RTS, SQD and SQE (IBTA 10.3.1): a QP receives from RTR on, and
 * goes on receiving while its send queue is drained or in error.
 *
 * Context: any; the state is read once, unlocked, unless the caller
 * holds the QP's lock for a decision it makes under it.
 * Return: true if it does.
 */
static inline bool shca_resp_receiving(const struct shca_qp *qp)
{
	enum ib_qp_state state = READ_ONCE(qp->state);

	return state == IB_QPS_RTR || state == IB_QPS_RTS ||
	       state == IB_QPS_SQD || state == IB_QPS_SQE;
}

/**
 * shca_req_refused() - what a requester refuses of a WQE before it sends
 * @qp: the requester
 * @w: a remote operation, at its turn
 *
 * The same on both links: a READ or atomic without initiator resources
 * (max_rd_atomic 0: nothing may be outstanding) completes with
 * IB_WC_LOC_QP_OP_ERR, a message longer than SHCA_MAX_MSG_SZ with
 * IB_WC_LOC_LEN_ERR; nothing of it leaves.
 *
 * Return: IB_WC_SUCCESS, or the status to complete @w with.
 */
static inline enum ib_wc_status
shca_req_refused(const struct shca_qp *qp, const struct shca_wqe *w)
{
	if (shca_req_is_rdatomic(w->opcode) && !qp->max_rd_atomic)
		return IB_WC_LOC_QP_OP_ERR;
	if (shca_wqe_len(w) > SHCA_MAX_MSG_SZ)
		return IB_WC_LOC_LEN_ERR;
	return IB_WC_SUCCESS;
}

/**
 * shca_qp_datagram() - the QP has UD semantics
 * @qp: the QP
 *
 * Return: true for UD QPs and the GSI QP (QP1, which is a UD QP with a
 * fixed number and Q_Key).
 */
static inline bool shca_qp_datagram(const struct shca_qp *qp)
{
	return qp->ibqp.qp_type == IB_QPT_UD || qp->ibqp.qp_type == IB_QPT_GSI;
}

/**
 * shca_port_state() - port state implied by a netdev
 * @ndev: the bound netdev, or NULL once it is gone
 *
 * Return: IB_PORT_ACTIVE when @ndev is up with carrier, else IB_PORT_DOWN.
 */
static inline enum ib_port_state shca_port_state(struct net_device *ndev)
{
	if (ndev && netif_running(ndev) && netif_carrier_ok(ndev))
		return IB_PORT_ACTIVE;
	return IB_PORT_DOWN;
}

/*
 * The port's active MTU in bytes, as last seen by the netdev notifier:
 * read without taking the core's netdev lock (callers hold QP locks).
 */
static inline u32 shca_port_mtu(const struct shca_dev *sdev)
{
	return READ_ONCE(sdev->port_mtu);
}

/* The device's port is up (its netdev's carrier, as the core sees it). */
static inline bool shca_port_up(const struct shca_dev *sdev)
{
	return READ_ONCE(sdev->port_state) == IB_PORT_ACTIVE;
}

static inline struct shca_dev *to_shca_dev(struct ib_device *ibdev)
{
	return container_of(ibdev, struct shca_dev, ibdev);
}

static inline struct shca_pd *to_shca_pd(struct ib_pd *ibpd)
{
	return container_of(ibpd, struct shca_pd, ibpd);
}

static inline struct shca_mr *to_shca_mr(struct ib_mr *ibmr)
{
	return container_of(ibmr, struct shca_mr, ibmr);
}

static inline struct shca_mw *to_shca_mw(struct ib_mw *ibmw)
{
	return container_of(ibmw, struct shca_mw, ibmw);
}

static inline struct shca_cq *to_shca_cq(struct ib_cq *ibcq)
{
	return container_of(ibcq, struct shca_cq, ibcq);
}

static inline struct shca_qp *to_shca_qp(struct ib_qp *ibqp)
{
	return container_of(ibqp, struct shca_qp, ibqp);
}

static inline struct shca_srq *to_shca_srq(struct ib_srq *ibsrq)
{
	return container_of(ibsrq, struct shca_srq, ibsrq);
}

static inline struct shca_ah *to_shca_ah(struct ib_ah *ibah)
{
	return container_of(ibah, struct shca_ah, ibah);
}

static inline struct shca_dm *to_shca_dm(struct ib_dm *ibdm)
{
	return container_of(ibdm, struct shca_dm, ibdm);
}

#define shca_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

#endif /* SHCA_H */
