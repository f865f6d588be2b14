// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - the device-memory arena.
 *
 * Each device owns SHCA_DM_SIZE bytes of "device memory" (advertised as
 * max_dm_size), carved up by a genalloc pool in 64-byte granules.
 * Allocations honour the requested alignment (ibv_alloc_dm()'s
 * log_align_req) and are zeroed, so one user never sees another's data.
 *
 * The arena is physically contiguous so that a process can map its
 * allocations with rdma_user_mmap_io(): the RDMA core then holds the
 * mapping's reference on the mmap entry, and an allocation returns to the
 * pool only in ->mmap_free(), once it is deallocated AND unmapped. User
 * allocations are page aligned and page granular, so a mapping never
 * shows another allocation.
 */

#include <linux/genalloc.h>
#include <linux/gfp.h>
#include <linux/mm.h>

#include "shca_verbs.h"

#define SHCA_DM_MAX_LOG_ALIGN	ilog2(SHCA_DM_SIZE)

/**
 * shca_dm_arena_init() - create a device's device-memory arena
 * @sdev: device being created
 *
 * Return: 0 or -ENOMEM.
 */
int shca_dm_arena_init(struct shca_dev *sdev)
{
	int err;

	sdev->dm_arena = shca_inject_fault() ? NULL :
			 alloc_pages_exact(SHCA_DM_SIZE,
					   GFP_KERNEL | __GFP_ZERO);
	if (!sdev->dm_arena)
		return -ENOMEM;
	sdev->dm_pool = shca_inject_fault() ? NULL :
			gen_pool_create(SHCA_DM_MIN_ORDER, NUMA_NO_NODE);
	if (!sdev->dm_pool) {
		err = -ENOMEM;
		goto err_free_arena;
	}
	err = shca_inject_fault() ? -ENOMEM :
	      gen_pool_add(sdev->dm_pool, (unsigned long)sdev->dm_arena,
			   SHCA_DM_SIZE, NUMA_NO_NODE);
	if (err)
		goto err_destroy_pool;
	return 0;

err_destroy_pool:
	gen_pool_destroy(sdev->dm_pool);
	sdev->dm_pool = NULL;
err_free_arena:
	free_pages_exact(sdev->dm_arena, SHCA_DM_SIZE);
	sdev->dm_arena = NULL;
	return err;
}

/**
 * shca_dm_arena_destroy() - free a device's arena
 * @sdev: device being freed; every allocation was released by the core
 */
void shca_dm_arena_destroy(struct shca_dev *sdev)
{
	if (sdev->dm_pool)
		gen_pool_destroy(sdev->dm_pool);
	if (sdev->dm_arena)
		free_pages_exact(sdev->dm_arena, SHCA_DM_SIZE);
	sdev->dm_pool = NULL;
	sdev->dm_arena = NULL;
}

/**
 * shca_dm_alloc() - allocate device memory
 * @sdev: owning device
 * @dm: the allocation to fill in
 * @length: bytes, 1 .. SHCA_DM_SIZE
 * @log_align: log2 of the required alignment (0 = any)
 * @user: the allocation will be mapped into a process: page aligned and
 *	page granular
 *
 * Return: 0; -EINVAL for a zero length or an alignment larger than the
 * arena; -ENOMEM when the arena has no such free range.
 */
int shca_dm_alloc(struct shca_dev *sdev, struct shca_dm *dm, u64 length,
		  u32 log_align, bool user)
{
	struct genpool_data_align align = {};
	unsigned long addr;
	u64 size = length;

	if (!length || log_align > SHCA_DM_MAX_LOG_ALIGN)
		return -EINVAL;
	if (length > SHCA_DM_SIZE)
		return -ENOMEM;

	align.align = max(1UL << log_align, 1UL << SHCA_DM_MIN_ORDER);
	if (user) {
		align.align = max_t(unsigned long, align.align, PAGE_SIZE);
		size = PAGE_ALIGN(length);
	}
	addr = shca_inject_fault() ? 0 :
	       gen_pool_alloc_algo(sdev->dm_pool, size,
				   gen_pool_first_fit_align, &align);
	if (!addr)
		return -ENOMEM;
	memset((void *)addr, 0, size);
	dm->addr = addr;
	dm->size = length;
	dm->alloc_size = size;
	return 0;
}

/**
 * shca_dm_free() - return device memory to the arena
 * @sdev: owning device
 * @addr: address of an allocation from shca_dm_alloc()
 * @alloc_size: its alloc_size
 */
void shca_dm_free(struct shca_dev *sdev, unsigned long addr, u64 alloc_size)
{
	gen_pool_free(sdev->dm_pool, addr, alloc_size);
}
