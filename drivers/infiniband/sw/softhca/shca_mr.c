// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - MR objects: the key table, publication and lifetime, the MR
 * types and their registration. Translations are built in shca_xlat.c,
 * memory windows live in shca_mw.c, and bytes move through keys in
 * shca_mem.c; shca_mem.h is what the four share.
 *
 * Keys. An MR key is "index << 8 | key byte". The MR lives in slot
 * number s of the key table, slots handed out cyclically from a random
 * start (xa_alloc_cyclic(): the table stays dense, so registering and
 * deregistering reuses its nodes instead of allocating and RCU-freeing
 * a path of them each time; the slot of the MR destroyed last stays
 * reserved so that the table never empties, see shca_mr_unpublish()),
 * and its index is a keyed permutation of s
 * (shca_mr_slot_to_index(): a 4-round Feistel network on 18 bits with
 * random round keys of the device). With the initial key byte (a keyed
 * PRF, SipHash, of a per-device sequence number), keys are not
 * predictable from one registration to the next nor from each other:
 * consecutive slots have unrelated indices. lkey == rkey.
 * The device honours mr->key, which for fast-reg MRs changes only when a
 * registration executes.
 *
 * Publication. An MR takes its slot when it is allocated, with a
 * refcount of 0, so lookups miss it; the translation is built; then its
 * first reference is set, with release ordering. Nothing is findable
 * half-built.
 *
 * Lifetime. The key table holds the initial reference; lookups take
 * further ones under RCU with refcount_inc_not_zero_acquire() and check
 * the MR they got (the memory comes from a SLAB_TYPESAFE_BY_RCU cache and
 * may hold another MR by then, see shca_mr_get()). shca_mr_destroy()
 * unpublishes the key, drops the table's reference and waits until every
 * user has dropped theirs: deregistration never frees memory a lookup
 * still uses, and never fails.
 */

#include <linux/dma-buf.h>
#include <linux/hash.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_umem.h>

#include "shca_mem.h"
#include "shca_verbs.h"

MODULE_IMPORT_NS(SHCA_NS_DMA_BUF);

/*
 * The permutation between slots and indices: slot - 1 and index - 1 are
 * SHCA_MR_INDEX_BITS wide, split in two halves that each round mixes
 * with a hash of the other and the round's key.
 */
#define SHCA_MR_HALF_BITS	(SHCA_MR_INDEX_BITS / 2)
#define SHCA_MR_HALF_MASK	(BIT(SHCA_MR_HALF_BITS) - 1)
static_assert(BIT(SHCA_MR_INDEX_BITS) == SHCA_MAX_MR);
static_assert(SHCA_MR_INDEX_BITS % 2 == 0);

static u32 shca_mr_round(const struct shca_dev *sdev, int i, u32 half)
{
	return hash_32(half ^ sdev->mr_round_key[i], SHCA_MR_HALF_BITS);
}

/**
 * shca_mr_slot_to_index() - the key index of a key table slot
 * @sdev: the device, whose round keys select the permutation
 * @slot: 1 .. SHCA_MAX_MR
 *
 * Return: the index, 1 .. SHCA_MAX_MR.
 */
VISIBLE_IF_KUNIT u32 shca_mr_slot_to_index(const struct shca_dev *sdev,
					   u32 slot)
{
	u32 l = (slot - 1) >> SHCA_MR_HALF_BITS;
	u32 r = (slot - 1) & SHCA_MR_HALF_MASK;
	u32 t;
	int i;

	for (i = 0; i < ARRAY_SIZE(sdev->mr_round_key); i++) {
		t = r;
		r = l ^ shca_mr_round(sdev, i, r);
		l = t;
	}
	return (l << SHCA_MR_HALF_BITS | r) + 1;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_slot_to_index);

/**
 * shca_mr_key_slot() - the key table slot of a key
 * @sdev: the device
 * @key: an lkey or rkey; only its index counts
 *
 * Return: the slot, or 0 (no slot) for an index out of range.
 */
VISIBLE_IF_KUNIT u32 shca_mr_key_slot(const struct shca_dev *sdev, u32 key)
{
	u32 index = shca_mr_index(key), l, r, t;
	int i;

	if (!index || index > SHCA_MAX_MR)
		return 0;
	l = (index - 1) >> SHCA_MR_HALF_BITS;
	r = (index - 1) & SHCA_MR_HALF_MASK;
	for (i = ARRAY_SIZE(sdev->mr_round_key) - 1; i >= 0; i--) {
		t = l;
		l = r ^ shca_mr_round(sdev, i, l);
		r = t;
	}
	return (l << SHCA_MR_HALF_BITS | r) + 1;
}

/*
 * MRs (and the key table entries of memory windows) come from a cache of
 * their own, SLAB_TYPESAFE_BY_RCU: a deregistration hands the memory back
 * at once instead of after an RCU grace period (kfree_rcu() was a fifth
 * of the cost of registering and deregistering an MR under TCG), and a
 * lookup that raced with it finds either a refcount of 0 or another MR,
 * which shca_mr_get() tells apart from the one it looked for. The
 * constructor gives every object that enters the cache a refcount of 0;
 * an MR is freed only at 0, so a free MR's refcount is always 0.
 */
static struct kmem_cache *shca_mr_cache;

static void shca_mr_ctor(void *obj)
{
	struct shca_mr *mr = obj;

	refcount_set(&mr->ref, 0);
}

/**
 * shca_mr_cache_init() - create the cache MRs come from
 *
 * Return: 0 or -ENOMEM.
 */
int shca_mr_cache_init(void)
{
	/*
	 * uverbs copies the keys to userspace straight out of the ib_mr
	 * (uverbs_copy_to() of DM_MR_REG and the like): hardened usercopy
	 * allows that only from a cache's whitelisted region.
	 */
	shca_mr_cache = kmem_cache_create_usercopy("shca_mr",
						   sizeof(struct shca_mr), 0,
						   SLAB_TYPESAFE_BY_RCU,
						   offsetof(struct shca_mr, ibmr),
						   sizeof(struct ib_mr),
						   shca_mr_ctor);
	return shca_mr_cache ? 0 : -ENOMEM;
}

/**
 * shca_mr_cache_fini() - destroy the cache; every MR is gone
 *
 * Waits for the RCU readers that may still look at a freed MR.
 */
void shca_mr_cache_fini(void)
{
	kmem_cache_destroy(shca_mr_cache);
}

/**
 * shca_mr_table_init() - set up a device's MR key table
 * @sdev: device being created
 */
void shca_mr_table_init(struct shca_dev *sdev)
{
	xa_init_flags(&sdev->mr_xa, XA_FLAGS_ALLOC1);
	sdev->mr_next = get_random_u32_inclusive(1, SHCA_MAX_MR);
	get_random_bytes(sdev->mr_round_key, sizeof(sdev->mr_round_key));
	get_random_bytes(&sdev->mr_byte_key, sizeof(sdev->mr_byte_key));
	atomic64_set(&sdev->mr_seq, 0);
}

/**
 * shca_mr_table_destroy() - tear down a device's MR key table
 * @sdev: device being freed; every MR was deregistered by the core
 */
void shca_mr_table_destroy(struct shca_dev *sdev)
{
	if (sdev->mr_retired)
		xa_erase(&sdev->mr_xa, sdev->mr_retired);
	WARN_ON(!xa_empty(&sdev->mr_xa));
	xa_destroy(&sdev->mr_xa);
}

/**
 * shca_mr_alloc() - allocate an MR in a slot of the key table
 * @sdev: owning device
 * @type: its translation type
 * @access: IB_ACCESS_* flags, already validated (0 for a fast-reg MR or
 *	a window)
 *
 * The MR sits in its slot from now on, but with no reference: lookups do
 * not find it until shca_mr_publish().
 *
 * Context: process context.
 * Return: the MR, FREE, with its first key; or ERR_PTR(-ENOMEM).
 */
struct shca_mr *shca_mr_alloc(struct shca_dev *sdev, enum ib_mr_type type,
			      int access)
{
	struct shca_mr *mr;
	u32 slot;
	u64 seq;
	int err;

	mr = shca_inject_fault() ? NULL :
	     kmem_cache_alloc(shca_mr_cache, GFP_KERNEL);
	if (!mr)
		return ERR_PTR(-ENOMEM);
	/*
	 * A lookup that found this memory as an MR freed since may be
	 * trying the refcount (which stays 0 until published); it reads
	 * nothing else without a reference. Everything else starts clear,
	 * but for the inline translation storage, written before it is read.
	 */
	BUILD_BUG_ON(offsetof(struct shca_mr, ref));
	BUILD_BUG_ON(offsetofend(struct shca_mr, xlat_inline) !=
		     sizeof(struct shca_mr));
	memset((u8 *)mr + sizeof(mr->ref), 0,
	       offsetof(struct shca_mr, xlat_inline) - sizeof(mr->ref));

	err = shca_inject_fault() ? -ENOMEM :
	      xa_alloc_cyclic(&sdev->mr_xa, &slot, mr,
			      XA_LIMIT(1, SHCA_MAX_MR), &sdev->mr_next,
			      GFP_KERNEL);
	if (err < 0) {
		kmem_cache_free(shca_mr_cache, mr);
		return ERR_PTR(err == -EBUSY ? -ENOMEM : err);
	}

	mr->sdev = sdev;
	init_completion(&mr->released);
	spin_lock_init(&mr->lock);
	mr->type = type;
	mr->state = SHCA_MR_FREE;
	mr->access = access;
	/*
	 * The initial key byte: a keyed PRF of a sequence number, as
	 * unpredictable as the RNG's but without its cost per registration.
	 */
	seq = atomic64_inc_return(&sdev->mr_seq);
	mr->id = seq;
	mr->key = shca_mr_slot_to_index(sdev, slot) << SHCA_MR_KEY_BITS |
		  (u8)siphash_1u64(seq, &sdev->mr_byte_key);
	mr->ibmr.lkey = mr->key;
	mr->ibmr.rkey = mr->key;
	mr->cur = &mr->maps[0];
	mr->next = &mr->maps[1];
	return mr;
}

/* Undo shca_mr_alloc() for an MR that was never published. */
static void shca_mr_abort(struct shca_mr *mr)
{
	xa_erase(&mr->sdev->mr_xa, shca_mr_key_slot(mr->sdev, mr->key));
	kvfree(mr->xlat_mem);
	kfree(mr->sig);
	/* Its refcount is still 0, as a free MR's must be. */
	kmem_cache_free(shca_mr_cache, mr);
}

/**
 * shca_mr_publish() - make a fully built MR findable
 * @mr: an MR of shca_mr_alloc(), built
 *
 * Sets its first reference, the key table's. The release orders every
 * store that built it before lookups can take a reference
 * (shca_mr_get()).
 */
void shca_mr_publish(struct shca_mr *mr)
{
	refcount_set_release(&mr->ref, 1);
}

/**
 * shca_mr_put() - drop a reference taken by shca_mr_get()
 * @mr: the MR
 */
void shca_mr_put(struct shca_mr *mr)
{
	if (refcount_dec_and_test(&mr->ref))
		complete(&mr->released);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_put);

/**
 * shca_mr_try_get() - take a reference to what a key table lookup found
 * @sdev: the device whose table was searched
 * @key: the key looked up; only its index counts
 * @mr: what xa_load() returned for the key's slot, or NULL
 *
 * The memory may have been freed and reused by another MR, of this
 * device or another, since xa_load() returned it (SLAB_TYPESAFE_BY_RCU).
 * A refcount of 0 is a free MR or one not yet published; otherwise the
 * reference taken is a real one, to whatever MR lives there now, and its
 * acquire orders the reads of the check after it. A key's index never
 * changes and names one slot of its device, so the index tells whether
 * that MR is the one looked for.
 *
 * Context: the RCU read-side section of the lookup.
 * Return: @mr with a reference held, or NULL.
 */
VISIBLE_IF_KUNIT struct shca_mr *shca_mr_try_get(struct shca_dev *sdev,
						 u32 key, struct shca_mr *mr)
{
	if (!mr || !refcount_inc_not_zero_acquire(&mr->ref))
		return NULL;
	if (mr->sdev != sdev ||
	    shca_mr_index(READ_ONCE(mr->key)) != shca_mr_index(key)) {
		shca_mr_put(mr);
		return NULL;
	}
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_try_get);

/**
 * shca_mr_get() - look up an MR by the index part of a key
 * @sdev: device the key belongs to
 * @key: lkey or rkey; only its index selects the MR, callers compare the
 *	whole key under the MR's lock
 *
 * Context: any context.
 * Return: the MR with a reference held, or NULL when no published MR has
 * that index.
 */
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key)
{
	struct shca_mr *mr;

	rcu_read_lock();
	mr = shca_mr_try_get(sdev, key,
			     xa_load(&sdev->mr_xa, shca_mr_key_slot(sdev, key)));
	rcu_read_unlock();
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_get);

/*
 * Take @mr out of the key table. Its slot stays reserved (a lookup finds
 * nothing there) until the next MR is unpublished, and the slot before
 * it is released now: a table that empties would make the xarray free
 * its whole node path (under RCU) and allocate it again for the next
 * MR, which is what registering and deregistering one MR at a time
 * does. Slots are taken cyclically, so the reserved one is never the
 * next one wanted.
 */
static void shca_mr_unpublish(struct shca_mr *mr)
{
	struct shca_dev *sdev = mr->sdev;
	u32 slot = shca_mr_key_slot(sdev, mr->key);

	xa_lock(&sdev->mr_xa);
	/* NULL in an allocating xarray keeps the slot reserved. */
	__xa_store(&sdev->mr_xa, slot, NULL, 0);
	if (sdev->mr_retired)
		__xa_erase(&sdev->mr_xa, sdev->mr_retired);
	sdev->mr_retired = slot;
	xa_unlock(&sdev->mr_xa);
}

/**
 * shca_mr_destroy() - unpublish an MR, wait for its users, free it
 * @mr: a published MR
 *
 * Context: process context; sleeps until every reference is dropped.
 */
void shca_mr_destroy(struct shca_mr *mr)
{
	shca_mr_unpublish(mr);
	/* Dropping the last reference here completes nothing to wait for. */
	if (!refcount_dec_and_test(&mr->ref))
		wait_for_completion(&mr->released);

	if (mr->umem)
		ib_umem_release(mr->umem);
#if SHCA_ODP
	if (mr->odp)
		shca_odp_fini(mr);
#endif
	if (mr->dmabuf) {
		dma_buf_vunmap_unlocked(mr->dmabuf, &mr->dmabuf_map);
		dma_buf_put(mr->dmabuf);
	}
	kvfree(mr->xlat_mem);
	kfree(mr->sig);
	/*
	 * Its refcount is 0. A reader may still hold the pointer from
	 * xa_load() under RCU: the cache keeps the memory an MR's for it
	 * (see shca_mr_get()).
	 */
	kmem_cache_free(shca_mr_cache, mr);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_destroy);

/**
 * shca_mr_retire() - begin the deregistration of an MR
 * @mr: a published MR (not a window)
 *
 * An MR that memory windows are bound to cannot go (the IBTA's rule: a
 * window outlives nothing it depends on); otherwise it binds no window
 * from now on and the caller goes on with shca_mr_destroy().
 *
 * Context: any context.
 * Return: 0, or -EBUSY while a window is bound to @mr; nothing changes
 * then.
 */
int shca_mr_retire(struct shca_mr *mr)
{
	unsigned long flags;
	int err = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (atomic_read(&mr->windows))
		err = -EBUSY;
	else
		mr->dying = true;
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_retire);

/**
 * shca_mr_unretire() - undo shca_mr_retire() of an MR that stays
 * @mr: an MR shca_mr_retire() succeeded on, not destroyed
 *
 * For rereg_user_mr: the MR it replaces is retired before the new one is
 * made (no window binds to it meanwhile, so the core's deregistration of
 * it cannot fail); when making the new one fails, the old MR goes on.
 *
 * Context: any context.
 */
void shca_mr_unretire(struct shca_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	mr->dying = false;
	spin_unlock_irqrestore(&mr->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_unretire);

/**
 * shca_mr_create_dma() - create a DMA MR
 * @sdev: owning device
 * @pd: its PD
 * @access: IB_ACCESS_* flags, already validated
 *
 * A software device uses virtual DMA (ib_uses_virt_dma()): a DMA address
 * is a kernel virtual address, so the DMA MR is the identity over the
 * whole 64-bit address space. Nothing of it changes once published: the
 * copy path reads it without its lock (the core stores the same @pd
 * again when we return).
 *
 * Return: the published MR or an ERR_PTR().
 */
struct shca_mr *shca_mr_create_dma(struct shca_dev *sdev, struct ib_pd *pd,
				   int access)
{
	struct shca_mr *mr = shca_mr_alloc(sdev, IB_MR_TYPE_DMA, access);

	if (IS_ERR(mr))
		return mr;
	mr->cur->data.kind = SHCA_XLAT_IDENTITY;
	mr->cur->data.len = U64_MAX;
	mr->ibmr.pd = pd;
	mr->iova = 0;
	mr->length = U64_MAX;
	mr->state = SHCA_MR_VALID;
	shca_mr_publish(mr);
	return mr;
}

/**
 * shca_mr_create_fast() - create a fast-registration MR
 * @sdev: owning device
 * @type: IB_MR_TYPE_MEM_REG, IB_MR_TYPE_SG_GAPS or IB_MR_TYPE_INTEGRITY
 * @max_data: capacity of the (data) page or segment list
 * @max_meta: INTEGRITY: capacity of the metadata segment list, else 0
 *
 * The MR starts FREE: it translates nothing until mapped and registered.
 *
 * Return: the published MR, ERR_PTR(-EINVAL) for an unsupported type or
 * a capacity of 0 or over the device limit, ERR_PTR(-ENOMEM).
 */
struct shca_mr *shca_mr_create_fast(struct shca_dev *sdev,
				    enum ib_mr_type type, u32 max_data,
				    u32 max_meta)
{
	enum shca_xlat_kind kind;
	struct shca_mr *mr;
	size_t size;
	int i, err;
	u8 *mem;

	switch (type) {
	case IB_MR_TYPE_MEM_REG:
		kind = SHCA_XLAT_PAGES;
		break;
	case IB_MR_TYPE_SG_GAPS:
		kind = SHCA_XLAT_SEGS;
		break;
	case IB_MR_TYPE_INTEGRITY:
		kind = SHCA_XLAT_SEGS;
		if (!max_meta || max_meta > SHCA_MAX_PI_FRPL ||
		    max_data > SHCA_MAX_PI_FRPL)
			return ERR_PTR(-EINVAL);
		break;
	default:
		return ERR_PTR(-EINVAL);
	}
	if (!max_data || max_data > SHCA_MAX_FRPL)
		return ERR_PTR(-EINVAL);

	mr = shca_mr_alloc(sdev, type, 0);
	if (IS_ERR(mr))
		return mr;
	mr->max_data = max_data;
	mr->max_meta = type == IB_MR_TYPE_INTEGRITY ? max_meta : 0;

	/* Every list of both maps in one allocation. */
	size = ARRAY_SIZE(mr->maps) *
	       ((size_t)max_data * shca_xlat_entry_size(kind) +
		(size_t)mr->max_meta * sizeof(struct shca_seg));
	mem = shca_xlat_mem(mr, size, GFP_KERNEL | __GFP_ZERO);
	if (!mem) {
		err = -ENOMEM;
		goto err_abort;
	}
	for (i = 0; i < ARRAY_SIZE(mr->maps); i++) {
		shca_xlat_carve(&mr->maps[i].data, kind, max_data, &mem);
		if (mr->max_meta)
			shca_xlat_carve(&mr->maps[i].meta, SHCA_XLAT_SEGS,
					mr->max_meta, &mem);
	}
	if (type == IB_MR_TYPE_INTEGRITY) {
		mr->sig = shca_inject_fault() ? NULL :
			  kzalloc(sizeof(*mr->sig), GFP_KERNEL);
		if (!mr->sig) {
			err = -ENOMEM;
			goto err_abort;
		}
		mr->sig->status_checked = true;
	}
	shca_mr_publish(mr);
	return mr;

err_abort:
	shca_mr_abort(mr);
	return ERR_PTR(err);
}

/* Publish a USER MR whose translation is built. */
static void shca_mr_publish_user(struct shca_mr *mr, u64 iova, u64 length)
{
	mr->iova = iova;
	mr->length = length;
	/* The core sets these for reg_user_mr, not for an MR rereg makes. */
	mr->ibmr.iova = iova;
	mr->ibmr.length = length;
	mr->state = SHCA_MR_VALID;
	shca_mr_publish(mr);
}

/**
 * shca_mr_create_user() - create a user MR over pinned memory
 * @sdev: owning device
 * @umem: memory pinned by ib_umem_get() for this device; owned by the MR
 *	on success, never modified
 * @iova: address of the region's first byte in the MR's address space
 * @access: IB_ACCESS_* flags, already validated
 *
 * Return: the published MR, ERR_PTR(-EINVAL) if @iova + length wraps or
 * the region exceeds SHCA_MAX_MR_SIZE, ERR_PTR(-ENOMEM).
 */
struct shca_mr *shca_mr_create_user(struct shca_dev *sdev,
				    struct ib_umem *umem, u64 iova, int access)
{
	struct shca_mr *mr;
	u64 end;
	int err;

	if (!umem->length || umem->length > SHCA_MAX_MR_SIZE ||
	    check_add_overflow(iova, (u64)umem->length, &end))
		return ERR_PTR(-EINVAL);

	mr = shca_mr_alloc(sdev, IB_MR_TYPE_USER, access);
	if (IS_ERR(mr))
		return mr;
	err = shca_xlat_from_umem(mr, umem);
	if (err) {
		shca_mr_abort(mr);
		return ERR_PTR(err);
	}
	mr->umem = umem;
	shca_mr_publish_user(mr, iova, umem->length);
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_create_user);

#if SHCA_ODP
/**
 * shca_mr_create_odp() - create an on-demand paging user MR
 * @sdev: owning device
 * @start: user virtual address of the region; 0 with @length U64_MAX for
 *	an implicit MR over the whole address space (@iova then 0)
 * @length: bytes of the region
 * @iova: address of the region's first byte in the MR's address space
 * @access: IB_ACCESS_* flags including IB_ACCESS_ON_DEMAND, validated
 *
 * Nothing is pinned: pages are faulted in when the data path first
 * touches them (see shca_odp.c).
 *
 * Context: the registering process.
 * Return: the published MR, or an ERR_PTR() of shca_odp_init().
 */
struct shca_mr *shca_mr_create_odp(struct shca_dev *sdev, u64 start,
				   u64 length, u64 iova, int access)
{
	struct shca_mr *mr = shca_mr_alloc(sdev, IB_MR_TYPE_USER, access);
	int err;

	if (IS_ERR(mr))
		return mr;
	err = shca_odp_init(mr, start, length, access);
	if (err) {
		shca_mr_abort(mr);
		return ERR_PTR(err);
	}
	shca_mr_publish_user(mr, iova, length);
	return mr;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_create_odp);
#endif

/**
 * shca_mr_create_dmabuf() - create a user MR over a dma-buf
 * @sdev: owning device
 * @fd: file descriptor of the dma-buf
 * @offset: offset of the region in the dma-buf
 * @length: bytes of the region
 * @iova: address of the region's first byte in the MR's address space
 * @access: IB_ACCESS_* flags, already validated
 *
 * A device importer attaches to a dma-buf and DMAs to the bus addresses
 * the exporter maps for it. softhca has no DMA engine: the CPU moves
 * every byte, so what it needs is the CPU's view of the buffer, and that
 * is what dma_buf_vmap() gives - the exporter's own kernel mapping of
 * its memory, whatever that memory is (pages outside the linear map,
 * vmalloc, carve-outs). Bus addresses would be the wrong thing even if
 * they could be turned back into kernel addresses: with an IOMMU they
 * are IOVAs, with swiotlb bounce buffers whose contents reach the
 * exporter's memory only on a sync the CPU path never makes. So there is
 * no attachment at all (attaching to a non-dynamic exporter would make
 * it map the buffer for a device that does not exist): the MR holds a
 * reference to the dma-buf and its vmap for as long as it is registered.
 * The exporter keeps a vmap valid, and the memory behind it in place,
 * until it is unmapped (exporters of movable buffers pin them for the
 * life of a vmap), which is the pinning an RDMA MR needs; a dma-buf MR
 * is the identity over the mapped range. Exporters that cannot give the
 * CPU a mapping of system memory are refused.
 *
 * Context: process context; takes the dma-buf's reservation lock.
 * Return: the published MR; ERR_PTR(-EBADF) or ERR_PTR(-EINVAL) for an
 * @fd that is not a dma-buf (dma_buf_get()); ERR_PTR(-EINVAL) for a zero
 * @length, a region past the end of the dma-buf or beyond
 * SHCA_MAX_MR_SIZE, or an @iova + @length that wraps;
 * ERR_PTR(-EOPNOTSUPP) for a dma-buf without a kernel mapping or whose
 * mapping is I/O memory; ERR_PTR(-ENOMEM), or another error of the
 * exporter's vmap. Nothing is left behind on error.
 */
struct shca_mr *shca_mr_create_dmabuf(struct shca_dev *sdev, int fd,
				      u64 offset, u64 length, u64 iova,
				      int access)
{
	struct dma_buf *dmabuf;
	struct iosys_map map;
	struct shca_mr *mr;
	u64 end, last;
	int err;

	if (!length || length > SHCA_MAX_MR_SIZE ||
	    check_add_overflow(iova, length, &last) ||
	    check_add_overflow(offset, length, &end))
		return ERR_PTR(-EINVAL);

	dmabuf = dma_buf_get(fd);
	if (IS_ERR(dmabuf))
		return ERR_CAST(dmabuf);
	if (end > dmabuf->size) {
		err = -EINVAL;
		goto err_put;
	}
	/* dma_buf_vmap() says -EINVAL when the exporter has no vmap. */
	err = dma_buf_vmap_unlocked(dmabuf, &map);
	if (err) {
		if (err == -EINVAL)
			err = -EOPNOTSUPP;
		goto err_put;
	}
	/* The copy path uses memcpy(): not valid on __iomem. */
	if (map.is_iomem) {
		err = -EOPNOTSUPP;
		goto err_vunmap;
	}

	mr = shca_mr_alloc(sdev, IB_MR_TYPE_USER, access);
	if (IS_ERR(mr)) {
		err = PTR_ERR(mr);
		goto err_vunmap;
	}
	mr->dmabuf = dmabuf;
	mr->dmabuf_map = map;
	mr->cur->data.kind = SHCA_XLAT_IDENTITY;
	mr->cur->data.base = (uintptr_t)map.vaddr + offset;
	mr->cur->data.len = length;
	shca_mr_publish_user(mr, iova, length);
	return mr;

err_vunmap:
	dma_buf_vunmap_unlocked(dmabuf, &map);
err_put:
	dma_buf_put(dmabuf);
	return ERR_PTR(err);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_create_dmabuf);

/**
 * shca_mr_create_dm() - create an MR over device memory
 * @sdev: owning device
 * @dm: the device-memory allocation
 * @offset: offset of the region in @dm, at most its size
 * @length: bytes of the region; 0 is allowed (as on mlx5 and in the
 *	core's own check): the MR then covers no byte, and only
 *	zero-length accesses at iova 0 pass through it
 * @access: IB_ACCESS_* flags, already validated
 *
 * DM MRs are zero-based: iova 0 is byte @offset of @dm.
 *
 * Return: the published MR, ERR_PTR(-EINVAL) for a range outside @dm,
 * ERR_PTR(-ENOMEM).
 */
struct shca_mr *shca_mr_create_dm(struct shca_dev *sdev, struct shca_dm *dm,
				  u64 offset, u64 length, int access)
{
	struct shca_mr *mr;

	if (offset > dm->size || length > dm->size - offset)
		return ERR_PTR(-EINVAL);

	mr = shca_mr_alloc(sdev, IB_MR_TYPE_DM, access);
	if (IS_ERR(mr))
		return mr;
	mr->cur->data.kind = SHCA_XLAT_IDENTITY;
	mr->cur->data.base = dm->addr + offset;
	mr->cur->data.len = length;
	mr->iova = 0;
	mr->length = length;
	/* The core sets neither for DM MRs (it does for user MRs). */
	mr->ibmr.iova = 0;
	mr->ibmr.length = length;
	mr->state = SHCA_MR_VALID;
	shca_mr_publish(mr);
	return mr;
}

/**
 * shca_mr_check_access() - validate registration access flags
 * @access: IB_ACCESS_* flags
 *
 * Optional flags (IB_ACCESS_OPTIONAL, e.g. relaxed ordering) are hints
 * and ignored.
 *
 * Return: 0; -EINVAL for unknown flags or a combination the IBTA forbids
 * (remote write or atomic without local write); -EOPNOTSUPP for a valid
 * flag this device does not implement (memory windows, on-demand paging,
 * flush).
 */
int shca_mr_check_access(int access)
{
	access &= ~IB_ACCESS_OPTIONAL;
	if (access & ~IB_ACCESS_SUPPORTED)
		return -EINVAL;
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	if (access & ~SHCA_MR_ACCESS_SUPPORTED)
		return -EOPNOTSUPP;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_check_access);

static int shca_mr_fast_reg_locked(struct shca_mr *mr, u32 key, int access)
{
	int err;

	lockdep_assert_held(&mr->lock);

	if (shca_mr_index(key) != shca_mr_index(mr->key))
		return -EINVAL;
	if (mr->state != SHCA_MR_FREE)
		return -EBUSY;
	err = shca_mr_check_access(access);
	if (err)
		return err;

	if (mr->next_fresh) {
		swap(mr->cur, mr->next);
		mr->next_fresh = false;
	}
	mr->key = key;
	mr->access = access;
	mr->iova = mr->ibmr.iova;
	mr->length = mr->ibmr.length;
	mr->state = SHCA_MR_VALID;
	mr->gen++;
	return 0;
}

/**
 * shca_mr_fast_reg() - execute IB_WR_REG_MR
 * @mr: a MEM_REG or SG_GAPS MR
 * @key: the key to register under; its index must be @mr's
 * @access: IB_ACCESS_* flags the registration grants
 *
 * Installs the translation built by the last map_mr_sg() (or keeps the
 * current one if nothing was mapped since), the MR's current iova and
 * length, @key and @access, and makes the MR VALID.
 *
 * Context: any context.
 * Return: 0; -EINVAL for a key of another MR, an MR of another type or
 * an access combination the IBTA forbids; -EBUSY if the MR is VALID
 * (invalidate it first).
 */
int shca_mr_fast_reg(struct shca_mr *mr, u32 key, int access)
{
	unsigned long flags;
	int err;

	if (mr->type != IB_MR_TYPE_MEM_REG && mr->type != IB_MR_TYPE_SG_GAPS)
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	err = shca_mr_fast_reg_locked(mr, key, access);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_fast_reg);

/**
 * shca_mr_fast_reg_pi() - execute IB_WR_REG_MR_INTEGRITY
 * @mr: an INTEGRITY MR
 * @key: the key to register under; its index must be @mr's
 * @access: IB_ACCESS_* flags; remote atomics are refused (as mlx5)
 * @attrs: signature attributes, snapshotted now (nvme-rdma sets them
 *	after mapping, before posting)
 *
 * Refused, as on mlx5, until check_mr_status() has read the status of the
 * previous registration. When a domain of @attrs carries PI, the key
 * then names the wire view of the MR (see shca_mem.c) and every access
 * through it goes through the T10-DIF engine; otherwise it names the
 * data followed by the metadata, as mapped.
 *
 * Context: any context.
 * Return: 0, or -EINVAL (see shca_mr_fast_reg(), plus: status not yet
 * checked, remote atomic access, no @attrs, attributes the engine
 * refuses (shca_sig_attrs_check()), data that is not a whole number of
 * blocks, metadata shorter than 8 bytes per block when the memory domain
 * carries PI), -EBUSY if VALID. Nothing changes on error.
 */
int shca_mr_fast_reg_pi(struct shca_mr *mr, u32 key, int access,
			const struct ib_sig_attrs *attrs)
{
	bool mem_pi, wire_pi;
	const struct shca_map *m;
	struct shca_sig_state *s;
	unsigned long flags;
	u32 interval = 0;
	u64 blocks = 0;
	int err;

	if (mr->type != IB_MR_TYPE_INTEGRITY || !attrs ||
	    (access & IB_ACCESS_REMOTE_ATOMIC) || shca_sig_attrs_check(attrs))
		return -EINVAL;
	mem_pi = attrs->mem.sig_type == IB_SIG_TYPE_T10_DIF;
	wire_pi = attrs->wire.sig_type == IB_SIG_TYPE_T10_DIF;
	if (mem_pi || wire_pi)
		interval = wire_pi ? attrs->wire.sig.dif.pi_interval :
				     attrs->mem.sig.dif.pi_interval;

	s = mr->sig;
	spin_lock_irqsave(&mr->lock, flags);
	if (!s->status_checked) {
		err = -EINVAL;
		goto out;
	}
	/* The translation this registration installs: whole blocks, all PI. */
	m = mr->next_fresh ? mr->next : mr->cur;
	if (interval) {
		blocks = div_u64(m->data.len, interval);
		if (blocks * interval != m->data.len ||
		    (mem_pi && shca_xlat_len(&m->meta) < blocks * SHCA_PI_SIZE)) {
			err = -EINVAL;
			goto out;
		}
	}
	err = shca_mr_fast_reg_locked(mr, key, access);
	if (err)
		goto out;
	s->attrs = *attrs;
	s->status_checked = false;
	s->pi = interval != 0;
	s->interval = interval;
	s->wire_block = interval + (wire_pi ? SHCA_PI_SIZE : 0);
	s->data_len = mr->cur->data.len;
	s->live = false;
	/* The key sees the wire view: data, interleaved with PI on the wire. */
	if (s->pi)
		mr->length = blocks * s->wire_block;
out:
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_fast_reg_pi);

/**
 * shca_mr_pi_postable() - may IB_WR_REG_MR_INTEGRITY be posted now?
 * @mr: the MR the work request registers
 * @access: IB_ACCESS_* flags it asks for
 * @attrs: its signature attributes
 *
 * The checks mlx5 makes when the work request is posted: an integrity
 * MR, no remote atomics, the status of the previous registration read;
 * and attributes the engine can run. shca_mr_fast_reg_pi() checks again
 * when the request executes.
 *
 * Context: any context.
 * Return: 0, or -EINVAL.
 */
int shca_mr_pi_postable(struct shca_mr *mr, int access,
			const struct ib_sig_attrs *attrs)
{
	unsigned long flags;
	bool checked;

	if (mr->type != IB_MR_TYPE_INTEGRITY ||
	    (access & IB_ACCESS_REMOTE_ATOMIC) || shca_sig_attrs_check(attrs))
		return -EINVAL;
	spin_lock_irqsave(&mr->lock, flags);
	checked = mr->sig->status_checked;
	spin_unlock_irqrestore(&mr->lock, flags);
	return checked ? 0 : -EINVAL;
}

/**
 * shca_mr_set_access() - change the PD and access rights of a user MR in
 *	place (rereg_user_mr without a new translation)
 * @mr: a USER MR
 * @pd: its new PD
 * @access: new IB_ACCESS_* flags
 *
 * Under the MR's lock, which binds take to check a window against the
 * MR (shca_mw_attach()): a window bound before sees the MR as it was
 * and keeps it from changing, one bound after sees it changed. The core
 * sets ibmr->pd to @pd again once rereg returns.
 *
 * Return: 0; -EINVAL for a forbidden combination; -EBUSY while a window
 * is bound to @mr. Nothing changes on failure.
 */
int shca_mr_set_access(struct shca_mr *mr, struct ib_pd *pd, int access)
{
	unsigned long flags;
	int err;

	err = shca_mr_check_access(access);
	if (err)
		return err;
	spin_lock_irqsave(&mr->lock, flags);
	if (atomic_read(&mr->windows)) {
		err = -EBUSY;
	} else {
		mr->ibmr.pd = pd;
		mr->access = access;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

/**
 * shca_mr_sig_latch() - latch a signature error, under the MR's lock
 * @mr: an INTEGRITY MR, its lock held
 * @err: the error, with the key it came through
 *
 * Keeps the first signature error since the status was last read.
 */
void shca_mr_sig_latch(struct shca_mr *mr, const struct ib_sig_err *err)
{
	lockdep_assert_held(&mr->lock);

	if (!mr->sig->err_exists) {
		mr->sig->err = *err;
		mr->sig->err_exists = true;
	}
}

/**
 * shca_mr_sig_error() - latch a signature error on an integrity MR
 * @mr: an INTEGRITY MR
 * @err: the error the T10-DIF engine detected; its key is the key the
 *	MR was accessed with
 *
 * Only the first error since the status was last read is kept.
 *
 * Context: any context.
 */
void shca_mr_sig_error(struct shca_mr *mr, const struct ib_sig_err *err)
{
	unsigned long flags;

	if (WARN_ON_ONCE(mr->type != IB_MR_TYPE_INTEGRITY))
		return;
	spin_lock_irqsave(&mr->lock, flags);
	shca_mr_sig_latch(mr, err);
	spin_unlock_irqrestore(&mr->lock, flags);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_sig_error);

/**
 * shca_mr_check_status() - the check_mr_status verb, as mlx5 implements it
 * @mr: any MR
 * @check_mask: IB_MR_CHECK_SIG_STATUS or 0
 * @status: filled with the result
 *
 * Reading the signature status re-arms registration of an integrity MR
 * and clears the latched error (read-once). An error latched under an
 * older key is reported as a guard error at offset 0 with that key.
 *
 * Return: 0, or -EINVAL for unknown mask bits or a signature check on an
 * MR that is not an integrity MR.
 */
int shca_mr_check_status(struct shca_mr *mr, u32 check_mask,
			 struct ib_mr_status *status)
{
	struct shca_sig_state *sig = mr->sig;
	unsigned long flags;

	if (check_mask & ~IB_MR_CHECK_SIG_STATUS)
		return -EINVAL;
	status->fail_status = 0;
	if (!(check_mask & IB_MR_CHECK_SIG_STATUS))
		return 0;
	if (mr->type != IB_MR_TYPE_INTEGRITY)
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	sig->status_checked = true;
	if (sig->err_exists) {
		if (sig->err.key == mr->ibmr.lkey) {
			status->sig_err = sig->err;
		} else {
			status->sig_err.err_type = IB_SIG_BAD_GUARD;
			status->sig_err.expected = 0;
			status->sig_err.actual = 0;
			status->sig_err.sig_err_offset = 0;
			status->sig_err.key = sig->err.key;
		}
		sig->err_exists = false;
		status->fail_status |= IB_MR_CHECK_SIG_STATUS;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return 0;
}
