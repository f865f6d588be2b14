/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - software RDMA host channel adapter: object types.
 *
 * Layering (see Documentation/design.rst): shca_verbs.c is the only file
 * that parses ib_* arguments and udata; the engines (shca_mr.c, ...) work
 * on the types below; shca_main.c owns module init, the rdma link type,
 * the netdev notifier and the driver's registry of devices.
 */
#ifndef SHCA_H
#define SHCA_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#define SHCA_DRV_VERSION	"0.1.0"
#define SHCA_UVERBS_ABI_VERSION	1
#define SHCA_VENDOR_ID		0xffffff	/* no IEEE OUI: software device */
#define SHCA_VENDOR_PART_ID	0x5348		/* "SH" */

/* Limits the device advertises and enforces. */
#define SHCA_PORT		1
#define SHCA_MAX_PD		0x10000
#define SHCA_MAX_MR		0x40000		/* MR key indices 1 .. SHCA_MAX_MR */
#define SHCA_GID_TBL_LEN	256
#define SHCA_PKEY_TBL_LEN	1

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
 * @num_pds: PDs allocated, bounded by SHCA_MAX_PD
 * @mr_xa: MR key index -> struct shca_mr, see shca_mr.c
 * @mr_next: cursor of xa_alloc_cyclic(), under the xa_lock of @mr_xa
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
	atomic_t num_pds;
	struct xarray mr_xa;
	u32 mr_next;
};

/**
 * struct shca_ucontext - a user context
 * @ibuc: the core object; first member (INIT_RDMA_OBJ_SIZE)
 */
struct shca_ucontext {
	struct ib_ucontext ibuc;
};

/**
 * struct shca_pd - a protection domain
 * @ibpd: the core object; first member (INIT_RDMA_OBJ_SIZE)
 */
struct shca_pd {
	struct ib_pd ibpd;
};

/**
 * enum shca_mr_state - life of an MR as the data path sees it
 * @SHCA_MR_FREE: allocated, no translation mapped or key invalidated
 * @SHCA_MR_VALID: translation established, key usable
 */
enum shca_mr_state {
	SHCA_MR_FREE,
	SHCA_MR_VALID,
};

/**
 * struct shca_mr - a memory region
 * @ibmr: the core object
 * @sdev: owning device
 * @ref: held by the key table (initial reference) and by each lookup
 * @released: completed when the last reference is gone
 * @type: translation type, set at creation and never changed
 * @state: see enum shca_mr_state
 * @access: IB_ACCESS_* flags the key grants
 * @iova: first address of the region in the MR's address space
 * @length: bytes covered by the region
 * @rcu: defers the free past RCU readers of &shca_dev.mr_xa
 *
 * An MR is published in &shca_dev.mr_xa only after it is fully built and
 * unpublished before it is torn down; lookups take @ref under RCU.
 */
struct shca_mr {
	struct ib_mr ibmr;
	struct shca_dev *sdev;
	struct kref ref;
	struct completion released;
	enum ib_mr_type type;
	enum shca_mr_state state;
	int access;
	u64 iova;
	u64 length;
	struct rcu_head rcu;
};

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

#define shca_dbg(sdev, fmt, ...) \
	ibdev_dbg(&(sdev)->ibdev, "%s: " fmt, __func__, ##__VA_ARGS__)

#endif /* SHCA_H */
