// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - the memory-registration engine: keys and lifetime.
 *
 * Keys. An MR key is "index << 8 | key byte". The index comes from
 * xa_alloc_cyclic() over [1, SHCA_MAX_MR] starting at a random point, the
 * initial key byte is random, so keys are not predictable from one
 * registration to the next. lkey == rkey.
 *
 * Publication. shca_mr_alloc() reserves the index (the slot holds NULL, so
 * lookups miss it); the caller builds the translation and then calls
 * shca_mr_publish(). Nothing is findable half-built.
 *
 * Lifetime. The key table holds the initial reference. shca_mr_get()
 * takes further ones under RCU with kref_get_unless_zero().
 * shca_mr_destroy() unpublishes the key, drops the table's reference and
 * waits until every user has dropped theirs, so deregistration never
 * frees memory that a lookup still uses and never fails.
 */

#include <linux/random.h>
#include <linux/slab.h>

#include "shca_verbs.h"

#define SHCA_MR_KEY_BITS	8

static u32 shca_mr_index(u32 key)
{
	return key >> SHCA_MR_KEY_BITS;
}

/**
 * shca_mr_table_init() - set up a device's MR key table
 * @sdev: device being created
 */
void shca_mr_table_init(struct shca_dev *sdev)
{
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	sdev->mr_next = get_random_u32_inclusive(1, SHCA_MAX_MR);
}

/**
 * shca_mr_table_destroy() - tear down a device's MR key table
 * @sdev: device being freed; every MR was deregistered by the core
 */
void shca_mr_table_destroy(struct shca_dev *sdev)
{
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
}

/**
 * shca_mr_alloc() - allocate an MR and reserve its key
 * @sdev: owning device
 * @type: translation type
 * @access: IB_ACCESS_* flags, already validated by the caller
 *
 * The MR is not findable until shca_mr_publish().
 *
 * Return: the MR with lkey == rkey set, or ERR_PTR(-ENOMEM) when memory or
 * key indices (SHCA_MAX_MR) are exhausted.
 */
struct shca_mr *shca_mr_alloc(struct shca_dev *sdev, enum ib_mr_type type,
			      int access)
{
	struct shca_mr *mr;
	u32 index;
	int err;

	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);

	err = xa_alloc_cyclic(&sdev->mr_xa, &index, NULL,
			      XA_LIMIT(1, SHCA_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		kfree(mr);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}

	mr->sdev = sdev;
	kref_init(&mr->ref);
	init_completion(&mr->released);
	mr->type = type;
	mr->state = SHCA_MR_FREE;
	mr->access = access;
	mr->ibmr.lkey = index << SHCA_MR_KEY_BITS | get_random_u8();
	mr->ibmr.rkey = mr->ibmr.lkey;
	return mr;
}

/**
 * shca_mr_publish() - make a fully built MR findable by its key
 * @mr: MR from shca_mr_alloc()
 */
void shca_mr_publish(struct shca_mr *mr)
{
	/* The slot is reserved: storing into it cannot allocate or fail. */
	xa_store(&mr->sdev->mr_xa, shca_mr_index(mr->ibmr.lkey), mr, 0);
}

static void shca_mr_release(struct kref *ref)
{
	struct shca_mr *mr = container_of(ref, struct shca_mr, ref);

	complete(&mr->released);
}

/**
 * shca_mr_put() - drop a reference taken by shca_mr_get()
 * @mr: the MR
 */
void shca_mr_put(struct shca_mr *mr)
{
	kref_put(&mr->ref, shca_mr_release);
}

/**
 * shca_mr_get() - look up an MR by key and take a reference
 * @sdev: device the key belongs to
 * @key: lkey or rkey
 *
 * Context: any context.
 * Return: the MR, or NULL when no MR carries @key (unknown index, stale
 * key byte, or an MR being destroyed).
 */
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key)
{
	struct shca_mr *mr;

	rcu_read_lock();
	mr = xa_load(&sdev->mr_xa, shca_mr_index(key));
	if (mr && (mr->ibmr.lkey != key || !kref_get_unless_zero(&mr->ref)))
		mr = NULL;
	rcu_read_unlock();
	return mr;
}

/**
 * shca_mr_destroy() - unpublish an MR, wait for its users, free it
 * @mr: MR from shca_mr_alloc(), published or not
 *
 * Context: process context; sleeps until every reference is dropped.
 */
void shca_mr_destroy(struct shca_mr *mr)
{
	xa_erase(&mr->sdev->mr_xa, shca_mr_index(mr->ibmr.lkey));
	shca_mr_put(mr);
	wait_for_completion(&mr->released);
	/* A reader may still hold the pointer from xa_load() under RCU. */
	kfree_rcu(mr, rcu);
}

/**
 * shca_mr_init_dma() - make @mr a DMA MR
 * @mr: MR from shca_mr_alloc() of type IB_MR_TYPE_DMA
 *
 * A software device uses virtual DMA (ib_uses_virt_dma()): a DMA address
 * is a kernel virtual address, so the DMA MR is the identity over the
 * whole 64-bit address space.
 */
void shca_mr_init_dma(struct shca_mr *mr)
{
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->state = SHCA_MR_VALID;
}
