/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR BSD-2-Clause) */
/*
 * softhca: the ABI between the kernel module and its rdma-core provider
 * (providers/softhca, libsofthca-rdmav34.so).
 *
 * Everything not listed here uses the RDMA core's generic uverbs commands
 * unchanged; none of them carries softhca-specific data today.
 */
#ifndef SOFTHCA_ABI_USER_H
#define SOFTHCA_ABI_USER_H

#include <linux/types.h>

/*
 * ib_device_ops.uverbs_abi_ver. The provider accepts exactly this
 * version; bump it on any incompatible change below.
 */
#define SOFTHCA_UVERBS_ABI_VERSION	1

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
 * descriptor: the allocation whose uverbs handle is H is mapped by
 *
 *   mmap(NULL, round_up(length, page size), PROT_READ | PROT_WRITE,
 *        MAP_SHARED, cmd_fd,
 *        (SOFTHCA_MMAP_DM_PGOFF_BASE + H * SOFTHCA_MMAP_DM_PGOFF_STRIDE)
 *        * page size)
 *
 * and starts at offset 0 of that mapping. User DM allocations are page
 * aligned and page granular, so a mapping never exposes another
 * allocation; one allocation spans at most SOFTHCA_MMAP_DM_PGOFF_STRIDE
 * pages (max_dm_size is no larger).
 */
#define SOFTHCA_MMAP_DM_PGOFF_BASE	(1U << 24)
#define SOFTHCA_MMAP_DM_PGOFF_STRIDE	256U

#endif /* SOFTHCA_ABI_USER_H */
