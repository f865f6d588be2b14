/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - the one place where kernel versions differ.
 *
 * One source tree builds for every supported kernel (6.1 LTS to mainline).
 * shca_conftest.sh compiles small probes against the target kernel's
 * headers at build time and generates shca_conftest.h with one HAVE_*
 * macro per interface found; this header turns the answers into the
 * interface the rest of the driver is written against (the newest one).
 * Nothing else in the driver tests a kernel version; the only HAVE_*
 * tests outside this file pick the prototypes of the ib_device_ops entry
 * points in shca_verbs.c that gained a parameter (HAVE_REG_USER_MR_DMAH,
 * HAVE_REG_USER_MR_DMABUF_DMAH: the DMA handle of 6.17).
 */

#ifndef _SHCA_COMPAT_H
#define _SHCA_COMPAT_H

#include <linux/dma-buf.h>
#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>
#include <kunit/visibility.h>

#include "shca_conftest.h"

/*
 * Symbol namespaces: MODULE_IMPORT_NS() takes a bare token up to 6.12 and
 * a string since 6.13. MODULE_IMPORT_NS(SHCA_NS_DMA_BUF) works with both.
 */
#ifdef HAVE_MODULE_IMPORT_NS_TOKEN
#define SHCA_NS_DMA_BUF DMA_BUF
#define SHCA_NS_KUNIT EXPORTED_FOR_KUNIT_TESTING
#else
#define SHCA_NS_DMA_BUF "DMA_BUF"
#define SHCA_NS_KUNIT "EXPORTED_FOR_KUNIT_TESTING"
#endif

/*
 * KUnit hooks. <kunit/visibility.h> (VISIBLE_IF_KUNIT,
 * EXPORT_SYMBOL_IF_KUNIT) is in every supported kernel (6.2, and 6.1.y).
 * Static stubs (6.4) redirect a function to a test's replacement; without
 * them the redirect is a no-op and the suites that use one cannot be built
 * (KUnit needs a 6.4+ kernel).
 */
#ifdef HAVE_KUNIT_STATIC_STUB_H
#include <kunit/static_stub.h>
#else
#define KUNIT_STATIC_STUB_REDIRECT(real_fn_name, args...) ((void)(real_fn_name))
#endif

/* Unaligned access helpers moved to <linux/unaligned.h> in 6.12. */
#ifdef HAVE_LINUX_UNALIGNED_H
#include <linux/unaligned.h>
#else
#include <asm/unaligned.h>
#endif

/*
 * The refcount of an object whose memory may be reused under RCU readers
 * (SLAB_TYPESAFE_BY_RCU): set with release ordering once it is built,
 * taken with acquire ordering before the reader checks what it got.
 */
#ifndef HAVE_REFCOUNT_ACQUIRE_RELEASE
static inline void refcount_set_release(refcount_t *r, int n)
{
	atomic_set_release(&r->refs, n);
}

static inline bool refcount_inc_not_zero_acquire(refcount_t *r)
{
	if (!refcount_inc_not_zero(r))
		return false;
	smp_acquire__after_ctrl_dep();
	return true;
}
#endif

/* Timer names: timer_delete*() since 6.2, timer_container_of() since 6.16. */
#ifndef HAVE_TIMER_DELETE
#define timer_delete(t)		del_timer(t)
#define timer_delete_sync(t)	del_timer_sync(t)
#endif
#ifndef HAVE_TIMER_CONTAINER_OF
#define timer_container_of(var, t, field)	from_timer(var, t, field)
#endif

#ifndef HAVE_VM_FLAGS_SET
/* Before 6.3, vm_flags is a plain field the mmap handler may change. */
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}
#endif

#ifndef HAVE_DMA_BUF_VMAP_UNLOCKED
/* Before 6.2, dma_buf_vmap() takes the locks it needs itself. */
static inline int dma_buf_vmap_unlocked(struct dma_buf *dmabuf,
					struct iosys_map *map)
{
	return dma_buf_vmap(dmabuf, map);
}

static inline void dma_buf_vunmap_unlocked(struct dma_buf *dmabuf,
					   struct iosys_map *map)
{
	dma_buf_vunmap(dmabuf, map);
}
#endif

#ifndef HAVE_IB_DEVICE_GET_NETDEV
/*
 * Before 6.11 the core keeps the port's netdev (ib_device_set_netdev()) but
 * does not export its getter. The slot is RCU-protected and the netdev core
 * waits for a grace period after NETDEV_UNREGISTER before it drops the last
 * registration reference, so a reference taken under RCU is safe.
 */
static inline struct net_device *ib_device_get_netdev(struct ib_device *ibdev,
						      u32 port)
{
	struct net_device *ndev;

	if (!rdma_is_port_valid(ibdev, port))
		return NULL;
	rcu_read_lock();
	ndev = rcu_dereference(ibdev->port_data[port].netdev);
	dev_hold(ndev);
	rcu_read_unlock();
	return ndev;
}
#endif

#ifndef HAVE_IB_MARK_NAME_ASSIGNED_BY_USER
/*
 * Before 6.10 the core has no notion of a name the user chose ("rdma link
 * add NAME"); there is nothing to mark.
 */
static inline void ib_mark_name_assigned_by_user(struct ib_device *ibdev)
{
}
#endif

/*
 * The last parameter of ib_device_ops.create_cq: the uverbs attribute
 * bundle since 6.10 (NULL for kernel CQs), the udata before.
 * shca_create_cq_udata() gives the udata (NULL for kernel CQs) either way.
 */
#ifdef HAVE_CREATE_CQ_ATTRS
#define shca_create_cq_arg uverbs_attr_bundle
static inline struct ib_udata *
shca_create_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define shca_create_cq_arg ib_udata
static inline struct ib_udata *shca_create_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/*
 * The last parameter of ib_device_ops.reg_user_mr_dmabuf: the uverbs
 * attribute bundle since 6.10, the udata before. softhca reads neither.
 */
#if defined(HAVE_REG_USER_MR_DMABUF_ATTRS) || defined(HAVE_REG_USER_MR_DMABUF_DMAH)
#define shca_reg_dmabuf_arg uverbs_attr_bundle
#else
#define shca_reg_dmabuf_arg ib_udata
#endif

/*
 * Call ib_device_ops.reg_user_mr_dmabuf as the core does for a kernel
 * caller: no DMA handle (6.17 added the parameter), no bundle. For the
 * KUnit suites, which drive the op directly.
 */
static inline struct ib_mr *
shca_call_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset, u64 length,
			     u64 iova, int fd, int access)
{
#ifdef HAVE_REG_USER_MR_DMABUF_DMAH
	return pd->device->ops.reg_user_mr_dmabuf(pd, offset, length, iova, fd,
						  access, NULL, NULL);
#else
	return pd->device->ops.reg_user_mr_dmabuf(pd, offset, length, iova, fd,
						  access, NULL);
#endif
}

/*
 * On-demand paging (shca_odp.c) reads the core's per-page lists of an ODP
 * umem, which kernels up to 6.14 have; without them (or without
 * CONFIG_INFINIBAND_ON_DEMAND_PAGING) the device does not offer ODP.
 */
#if defined(HAVE_IB_UMEM_ODP_DMA_LIST) && \
	IS_ENABLED(CONFIG_INFINIBAND_ON_DEMAND_PAGING)
#define SHCA_ODP 1
#else
#define SHCA_ODP 0
#endif

#endif /* _SHCA_COMPAT_H */
