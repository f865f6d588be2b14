// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - the memory-registration engine.
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
 *
 * Translations. Every MR maps region offsets [0, length) through a
 * struct shca_map: identity (DMA MR, device memory, dma-buf), fixed-size
 * blocks (MEM_REG with any page size in SHCA_PAGE_SIZE_CAP, USER with
 * PAGE_SIZE blocks of the pinned umem) or byte-granular segments
 * (SG_GAPS, the data and metadata lists of INTEGRITY, and USER when the
 * umem's DMA segments make the shorter list). Fast-reg MRs
 * own two maps: map_mr_sg() fills the spare one, and the registration
 * work request installs it, so mapping while a previous registration is
 * still valid (iSER maps, then posts LOCAL_INV + REG_MR) never disturbs
 * it. A map is built under the MR's lock, and a map that fails leaves an
 * empty translation behind: a registration that follows it grants
 * nothing, never a half-built list.
 *
 * The copy path. shca_mr_copy() and shca_mr_copy_mr() are the only
 * functions that move bytes through an MR. They resolve (key, iova,
 * length, access, PD) under the MR's lock and refuse, with distinct
 * errors: an unknown or stale key (-ENOKEY), an invalidated or never
 * registered MR (-EKEYREVOKED), another PD (-EACCES), missing access
 * rights (-EPERM), an iova + length that wraps (-EOVERFLOW), a range
 * outside the region (-ERANGE) and a range the translation does not
 * cover (-EFAULT, an engine bug: never a silent short copy). The
 * translations of DMA, USER and DM MRs never change while published, so
 * their bytes move without the lock. Those of fast-reg MRs change with
 * every registration: their bytes move in chunks of SHCA_COPY_CHUNK,
 * each under the MR's lock and only while the registration the transfer
 * was resolved under is still the one in force (mr->gen). A transfer
 * racing an invalidation or re-registration therefore stops with
 * -EKEYREVOKED at a chunk boundary, and once shca_mr_invalidate() has
 * returned no byte moves through the old translation - what a ULP that
 * unmaps its buffers after LOCAL_INV completes relies on.
 */

#include <linux/dma-buf.h>
#include <linux/hash.h>
#include <linux/siphash.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_umem.h>

#include "shca_verbs.h"

MODULE_IMPORT_NS(SHCA_NS_DMA_BUF);

#define SHCA_MR_KEY_BITS	8

/* Bytes a transfer through a fast-reg MR moves per hold of its lock. */
#define SHCA_COPY_CHUNK		SZ_16K

static u32 shca_mr_index(u32 key)
{
	return key >> SHCA_MR_KEY_BITS;
}

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

static bool shca_mr_is_fast_reg(const struct shca_mr *mr)
{
	return mr->type == IB_MR_TYPE_MEM_REG ||
	       mr->type == IB_MR_TYPE_SG_GAPS ||
	       mr->type == IB_MR_TYPE_INTEGRITY;
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

/*
 * Allocate an MR in a slot of the key table. It sits there from now on,
 * but with no reference: lookups do not find it until shca_mr_publish().
 */
static struct shca_mr *shca_mr_alloc(struct shca_dev *sdev,
				     enum ib_mr_type type, int access)
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

/*
 * Make a fully built MR findable: its first reference, the key table's.
 * The release orders every store that built it before lookups can take
 * a reference (shca_mr_get()).
 */
static void shca_mr_publish(struct shca_mr *mr)
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

/* The object in @key's slot if it is registration @id, with a reference. */
static struct shca_mr *shca_mr_get_id(struct shca_dev *sdev, u32 key, u64 id)
{
	struct shca_mr *mr = shca_mr_get(sdev, key);

	if (mr && mr->id != id) {
		shca_mr_put(mr);
		return NULL;
	}
	return mr;
}

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

static size_t shca_xlat_entry_size(enum shca_xlat_kind kind)
{
	return kind == SHCA_XLAT_PAGES ? sizeof(u64) : sizeof(struct shca_seg);
}

/*
 * Storage for @size bytes of @mr's translation lists: the MR's inline
 * array when they fit, so that a small MR costs no allocation (a fifth of
 * softhca's own share of registering a 16-page user MR under TCG was
 * kvmalloc() and kvfree()), else one kvmalloc() freed with the MR.
 */
static void *shca_xlat_mem(struct shca_mr *mr, size_t size, gfp_t gfp)
{
	if (size <= sizeof(mr->xlat_inline)) {
		if (gfp & __GFP_ZERO)
			memset(mr->xlat_inline, 0, size);
		return mr->xlat_inline;
	}
	mr->xlat_mem = shca_inject_fault() ? NULL : kvmalloc(size, gfp);
	return mr->xlat_mem;
}

/* Point @x at storage for @max entries taken from *@mem, and advance it. */
static void shca_xlat_carve(struct shca_xlat *x, enum shca_xlat_kind kind,
			    u32 max, u8 **mem)
{
	x->kind = kind;
	x->max = max;
	x->pages = (u64 *)*mem;
	*mem += (size_t)max * shca_xlat_entry_size(kind);
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

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_umem_use_segs() - translate a umem by its DMA segments?
 * @nseg: DMA segments of the umem
 * @npages: pages it spans
 *
 * The segment list is chosen when it is the smaller one. KUnit tests
 * redirect this to try either translation on the same memory.
 *
 * Return: true for a segment list, false for a page list.
 */
bool shca_umem_use_segs(u64 nseg, u64 npages)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_umem_use_segs, nseg, npages);
	return nseg * sizeof(struct shca_seg) < npages * sizeof(u64);
}
EXPORT_SYMBOL_IF_KUNIT(shca_umem_use_segs);
#else
static inline bool shca_umem_use_segs(u64 nseg, u64 npages)
{
	return nseg * sizeof(struct shca_seg) < npages * sizeof(u64);
}
#endif

/*
 * The umem's DMA segments as a segment list: the first one from the
 * pinned address's offset in its page on, the last one cut at the end of
 * the region. Memory backed by huge pages has few, large segments: a
 * 1 GiB region then costs a few kilobytes of list instead of 2 MiB of
 * page array.
 */
static int shca_xlat_segs_from_umem(struct shca_xlat *x, struct ib_umem *umem)
{
	u64 skip = umem->address & ~PAGE_MASK, left = umem->length;
	struct scatterlist *sg;
	unsigned int i;

	for_each_sgtable_dma_sg(&umem->sgt_append.sgt, sg, i) {
		u64 addr = sg_dma_address(sg), len = sg_dma_len(sg);

		if (!left)
			break;
		if (skip >= len) {
			skip -= len;
			continue;
		}
		addr += skip;
		len -= skip;
		skip = 0;
		len = min(len, left);
		if (x->n == x->max)
			return -EFAULT;
		x->segs[x->n].addr = addr;
		x->segs[x->n].len = len;
		x->segs[x->n].off = umem->length - left;
		x->n++;
		left -= len;
	}
	return left ? -EFAULT : 0;
}

/*
 * The PAGE_SIZE block list of the umem, counted from the pinned address.
 * One plain loop per segment, where rdma_for_each_block() would make a
 * call per page; the cursor lives in locals (the kernel is built with
 * -fno-strict-aliasing, so a store through x->pages would make the
 * compiler reload x->n and x->pages for every page).
 */
static int shca_xlat_pages_from_umem(struct shca_xlat *x, struct ib_umem *umem)
{
	u64 *const first = x->pages, *const lim = first + x->max;
	struct scatterlist *sg;
	u64 *p = first;
	unsigned int i;
	u64 page, end;

	for_each_sgtable_dma_sg(&umem->sgt_append.sgt, sg, i) {
		page = sg_dma_address(sg) & PAGE_MASK;
		end = sg_dma_address(sg) + sg_dma_len(sg);
		/* A segment that starts in the page the last one ended in. */
		if (p != first && p[-1] == page)
			page += PAGE_SIZE;
		for (; page < end && p < lim; page += PAGE_SIZE)
			*p++ = page;
	}
	x->n = p - first;
	if (p != lim)
		return -EFAULT;
	x->page_shift = PAGE_SHIFT;
	x->fbo = umem->address & ~PAGE_MASK;
	return 0;
}

/*
 * Translate a umem pinned by ib_umem_get() into @mr's map, by its DMA
 * segments or by pages, whichever list is smaller. The umem was
 * DMA-mapped for this virtual-DMA device, so its DMA addresses are
 * kernel virtual addresses; the umem itself is the core's and is only
 * read (its iova is not this MR's business). Registering a large region
 * should cost little more than pinning it.
 */
static int shca_xlat_from_umem(struct shca_mr *mr, struct ib_umem *umem)
{
	struct shca_xlat *x = &mr->cur->data;
	u64 first = umem->address & PAGE_MASK;
	u64 n = (PAGE_ALIGN(umem->address + umem->length) - first) >>
		PAGE_SHIFT;
	u64 nseg = umem->sgt_append.sgt.nents;
	enum shca_xlat_kind kind;
	u8 *mem;
	int err;

	kind = shca_umem_use_segs(nseg, n) ? SHCA_XLAT_SEGS : SHCA_XLAT_PAGES;
	if (kind == SHCA_XLAT_PAGES ? n > U32_MAX : nseg > U32_MAX)
		return -EINVAL;
	if (kind == SHCA_XLAT_PAGES)
		nseg = n;
	/*
	 * Every entry is written below (or the MR is refused): no zeroing.
	 * nseg <= U32_MAX entries of at most 24 bytes: no overflow.
	 */
	mem = shca_xlat_mem(mr, nseg * shca_xlat_entry_size(kind), GFP_KERNEL);
	if (!mem)
		return -ENOMEM;
	shca_xlat_carve(x, kind, nseg, &mem);
	err = kind == SHCA_XLAT_SEGS ? shca_xlat_segs_from_umem(x, umem) :
				       shca_xlat_pages_from_umem(x, umem);
	if (err)
		return err;
	x->len = umem->length;
	return 0;
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

static int shca_set_page(struct ib_mr *ibmr, u64 addr)
{
	struct shca_xlat *x = &to_shca_mr(ibmr)->next->data;

	if (x->n >= x->max)
		return -ENOMEM;
	x->pages[x->n++] = addr;
	return 0;
}

/*
 * Start building @mr's next translation: whatever happens, a
 * registration that executes from now on installs what this map leaves
 * in @mr->next, which is empty until the map succeeds.
 */
static void shca_map_begin(struct shca_mr *mr)
{
	struct shca_map *m = mr->next;

	lockdep_assert_held(&mr->lock);
	m->data.n = 0;
	m->data.len = 0;
	m->meta.n = 0;
	m->meta.len = 0;
	mr->next_fresh = true;
}

/* A map failed: leave an empty region that grants nothing. */
static void shca_map_fail(struct shca_mr *mr)
{
	shca_map_begin(mr);
	mr->ibmr.length = 0;
}

/**
 * shca_mr_map_pages() - build the page list of a MEM_REG MR
 * @mr: a MEM_REG MR
 * @sg: DMA-mapped scatterlist
 * @nents: entries in @sg
 * @sg_offset: offset into the first entry, or NULL
 * @page_size: block size, a power of two within SHCA_PAGE_SIZE_CAP
 *
 * Follows the ib_sg_to_pages() rules: a gap that is not page aligned, or
 * a full list, ends the mapping. The list is built under the MR's lock
 * and installed by the next registration; the translation in force is
 * not touched.
 *
 * Context: any context; does not sleep.
 * Return: number of entries mapped; -EINVAL for an unsupported page
 * size or an MR of another type (nothing changes); -ENOMEM if not even
 * the first entry fits (the next registration then grants an empty
 * region).
 */
int shca_mr_map_pages(struct shca_mr *mr, struct scatterlist *sg, int nents,
		      unsigned int *sg_offset, u32 page_size)
{
	struct shca_xlat *x;
	unsigned long flags;
	int n;

	if (mr->type != IB_MR_TYPE_MEM_REG || !is_power_of_2(page_size) ||
	    !(page_size & SHCA_PAGE_SIZE_CAP))
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	/* Under the lock: a REG_MR executing swaps next and cur. */
	x = &mr->next->data;
	shca_map_begin(mr);
	x->page_shift = ilog2(page_size);
	n = ib_sg_to_pages(&mr->ibmr, sg, nents, sg_offset, shca_set_page);
	if (n < 0) {
		shca_map_fail(mr);
	} else {
		x->fbo = mr->ibmr.iova & (page_size - 1);
		x->len = mr->ibmr.length;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return n;
}

/*
 * Append @nents entries of @sg (the first one from @offset on) to the
 * segment list @x, merging contiguous entries. Return the number of
 * entries mapped whole, or -EINVAL for an empty entry.
 */
static int shca_xlat_add_sg(struct shca_xlat *x, struct scatterlist *sg,
			    int nents, unsigned int offset)
{
	struct scatterlist *s;
	int i;

	for_each_sg(sg, s, nents, i) {
		u64 addr = sg_dma_address(s) + offset;
		u64 len;

		if (offset >= sg_dma_len(s))
			return -EINVAL;
		len = sg_dma_len(s) - offset;
		offset = 0;

		if (x->n && x->segs[x->n - 1].addr +
			    x->segs[x->n - 1].len == addr) {
			x->segs[x->n - 1].len += len;
		} else if (x->n < x->max) {
			x->segs[x->n].addr = addr;
			x->segs[x->n].len = len;
			x->segs[x->n].off = x->len;
			x->n++;
		} else {
			return i;
		}
		x->len += len;
	}
	return nents;
}

/**
 * shca_mr_map_segs() - build the segment list of an SG_GAPS MR
 * @mr: an SG_GAPS MR
 * @sg: DMA-mapped scatterlist: any alignment, gaps and lengths
 * @nents: entries in @sg
 * @sg_offset: offset into the first entry, or NULL
 *
 * The region's iova is the DMA address of its first byte; the region is
 * the concatenation of the entries. The list is built under the MR's
 * lock and installed by the next registration.
 *
 * Context: any context; does not sleep.
 * Return: number of entries mapped (fewer than @nents when the list is
 * full); -EINVAL for an MR of another type or no entries (nothing
 * changes) or an empty entry (the next registration then grants an
 * empty region).
 */
int shca_mr_map_segs(struct shca_mr *mr, struct scatterlist *sg, int nents,
		     unsigned int *sg_offset)
{
	unsigned int offset = sg_offset ? *sg_offset : 0;
	struct shca_xlat *x;
	unsigned long flags;
	int n;

	if (mr->type != IB_MR_TYPE_SG_GAPS || nents <= 0)
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	x = &mr->next->data;
	shca_map_begin(mr);
	n = shca_xlat_add_sg(x, sg, nents, offset);
	if (n < 0) {
		shca_map_fail(mr);
	} else {
		mr->ibmr.iova = sg_dma_address(sg) + offset;
		mr->ibmr.length = x->len;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return n;
}

/**
 * shca_mr_map_pi() - build the data and metadata lists of an integrity MR
 * @mr: an INTEGRITY MR
 * @data_sg: DMA-mapped data scatterlist
 * @data_nents: entries in @data_sg
 * @data_offset: offset into its first entry, or NULL
 * @meta_sg: DMA-mapped protection-information scatterlist, or NULL
 * @meta_nents: entries in @meta_sg
 * @meta_offset: offset into its first entry, or NULL
 *
 * As mlx5 does for its KLM layout: the MR is zero-based, the data comes
 * first and the metadata follows at offset data length; ibmr.length is
 * data + metadata and sig_attrs->meta_length the metadata length.
 *
 * The lists are built under the MR's lock and installed by the next
 * registration.
 *
 * Context: any context; does not sleep.
 * Return: 0 when every entry is mapped; -EINVAL for an MR of another
 * type or missing lists (nothing changes); -ENOMEM when a list is too
 * short or -EINVAL for an empty entry (the next registration then
 * grants an empty region).
 */
int shca_mr_map_pi(struct shca_mr *mr, struct scatterlist *data_sg,
		   int data_nents, unsigned int *data_offset,
		   struct scatterlist *meta_sg, int meta_nents,
		   unsigned int *meta_offset)
{
	struct shca_map *m;
	unsigned long flags;
	int n;

	if (mr->type != IB_MR_TYPE_INTEGRITY || data_nents <= 0 ||
	    meta_nents < 0 || (meta_nents && !meta_sg))
		return -EINVAL;

	spin_lock_irqsave(&mr->lock, flags);
	m = mr->next;
	shca_map_begin(mr);
	n = shca_xlat_add_sg(&m->data, data_sg, data_nents,
			     data_offset ? *data_offset : 0);
	if (n >= 0 && n < data_nents)
		n = -ENOMEM;
	if (n >= 0 && meta_nents) {
		n = shca_xlat_add_sg(&m->meta, meta_sg, meta_nents,
				     meta_offset ? *meta_offset : 0);
		if (n >= 0 && n < meta_nents)
			n = -ENOMEM;
	}
	if (n < 0) {
		shca_map_fail(mr);
	} else {
		n = 0;
		mr->ibmr.iova = 0;
		mr->ibmr.length = m->data.len + m->meta.len;
		if (mr->ibmr.sig_attrs)
			mr->ibmr.sig_attrs->meta_length = m->meta.len;
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return n;
}

/*
 * Translate region offset @off of @x into a kernel pointer; *@contig is
 * set to the number of bytes contiguous from there. NULL when @x does
 * not translate @off: never index past what is in use, nor past the
 * storage.
 */
static void *shca_xlat_ptr(const struct shca_xlat *x, u64 off, u64 *contig)
{
	u32 n = min(x->n, x->max);
	const struct shca_seg *s;
	void __maybe_unused *p;
	u64 pos, mask;
	u32 lo, hi;

	switch (x->kind) {
	case SHCA_XLAT_IDENTITY:
		if (off >= x->len)
			return NULL;
		*contig = x->len - off;
		return (void *)(uintptr_t)(x->base + off);
	case SHCA_XLAT_PAGES:
		pos = off + x->fbo;
		mask = (1ULL << x->page_shift) - 1;
		if ((pos >> x->page_shift) >= n)
			return NULL;
		*contig = mask + 1 - (pos & mask);
		return (void *)(uintptr_t)(x->pages[pos >> x->page_shift] +
					   (pos & mask));
	case SHCA_XLAT_SEGS:
		/* The last segment whose offset is <= off. */
		lo = 0;
		hi = n;
		while (hi - lo > 1) {
			u32 mid = lo + (hi - lo) / 2;

			if (x->segs[mid].off <= off)
				lo = mid;
			else
				hi = mid;
		}
		s = &x->segs[lo];
		if (!n || off < s->off || off - s->off >= s->len)
			return NULL;
		*contig = s->len - (off - s->off);
		return (void *)(uintptr_t)(s->addr + (off - s->off));
	case SHCA_XLAT_ODP:
#if SHCA_ODP
		/* Under the MR's lock, after shca_span_odp_ready(). */
		p = off < x->len ? shca_odp_ptr(x->odp, x->base + off, false,
						contig) : NULL;
		if (p)
			*contig = min(*contig, x->len - off);
		return p;
#else
		break;
#endif
	}
	return NULL;
}

static void *shca_map_ptr(const struct shca_map *m, u64 off, u64 *contig)
{
	void *p;

	if (m->meta.max && off >= m->data.len)
		return shca_xlat_ptr(&m->meta, off - m->data.len, contig);
	p = shca_xlat_ptr(&m->data, off, contig);
	/* The data part ends where the metadata begins. */
	if (p && m->meta.max)
		*contig = min(*contig, m->data.len - off);
	return p;
}

/* Bytes from offset 0 that @x translates without a hole. */
static u64 shca_xlat_len(const struct shca_xlat *x)
{
	u32 n = min(x->n, x->max);

	switch (x->kind) {
	case SHCA_XLAT_IDENTITY:
		return x->len;
	case SHCA_XLAT_PAGES:
		if (((u64)n << x->page_shift) <= x->fbo)
			return 0;
		return min(x->len, ((u64)n << x->page_shift) - x->fbo);
	case SHCA_XLAT_SEGS:
		/* Segments are contiguous in region offsets. */
		if (!n)
			return 0;
		return min(x->len, x->segs[n - 1].off + x->segs[n - 1].len);
	case SHCA_XLAT_ODP:
		/* A page not there is faulted in, not a hole. */
		return x->len;
	}
	return 0;
}

/* Bytes from region offset 0 that @m translates without a hole. */
static u64 shca_map_len(const struct shca_map *m)
{
	u64 data = shca_xlat_len(&m->data);

	if (!m->meta.max || data < m->data.len)
		return data;
	return data + shca_xlat_len(&m->meta);
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
 * then names the wire view of the MR (see shca_mr.c) and every access
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

/* Unbind a window, under its lock; *@parent: the MR it was bound to. */
static void shca_mw_unbind_locked(struct shca_mr *win, struct shca_mr **parent)
{
	lockdep_assert_held(&win->lock);

	*parent = win->parent;
	win->parent = NULL;
	win->state = SHCA_MR_FREE;
	/* Transfers in flight through the window stop at their next chunk. */
	win->gen++;
}

/*
 * Invalidate a window, under its lock (the key matched): only a bound
 * type 2 window of @pd, through the QP it was bound through.
 */
static int shca_mw_invalidate_locked(struct shca_mr *win, struct ib_pd *pd,
				     u32 qpn, struct shca_mr **parent)
{
	lockdep_assert_held(&win->lock);

	if (win->mw_type != IB_MW_TYPE_2)
		return -EINVAL;
	if (win->state != SHCA_MR_VALID)
		return -EKEYREVOKED;
	if (win->ibmr.pd != pd || win->qpn != qpn)
		return -EACCES;
	shca_mw_unbind_locked(win, parent);
	return 0;
}

/**
 * shca_mr_invalidate() - execute a local or remote invalidation
 * @sdev: device the key belongs to
 * @pd: PD of the QP that invalidates
 * @qpn: number of that QP (LOCAL_INV: the requester; SEND_WITH_INV: the
 *	responder)
 * @key: the key to invalidate
 *
 * A fast-reg MR becomes FREE; a type 2 memory window is unbound.
 *
 * Context: any context.
 * Return: 0; -ENOKEY for an unknown or stale key; -EACCES for an MR or
 * window of another PD, or a type 2 window bound through another QP;
 * -EINVAL for an MR that is not a fast-reg MR (DMA, USER and DM MRs
 * cannot be invalidated) or a type 1 window; -EBUSY for an MR that
 * windows are bound to; -EKEYREVOKED for a window that is not bound.
 * Nothing changes on error.
 */
int shca_mr_invalidate(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		       u32 key)
{
	struct shca_mr *mr, *parent = NULL;
	unsigned long flags;
	int err = 0;

	mr = shca_mr_get(sdev, key);
	if (!mr)
		return -ENOKEY;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key)
		err = -ENOKEY;
	else if (mr->mw_type)
		err = shca_mw_invalidate_locked(mr, pd, qpn, &parent);
	else if (!shca_mr_is_fast_reg(mr))
		err = -EINVAL;
	else if (mr->ibmr.pd != pd)
		err = -EACCES;
	else if (atomic_read(&mr->windows))
		err = -EBUSY;
	if (!err && !mr->mw_type) {
		mr->state = SHCA_MR_FREE;
		/* Transfers in flight through the MR stop at their next chunk. */
		mr->gen++;
	}
	spin_unlock_irqrestore(&mr->lock, flags);

	if (parent)
		atomic_dec(&parent->windows);
	shca_mr_put(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_invalidate);

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
 * shca_mw_create() - make the key table entry of a memory window
 * @sdev: owning device
 * @pd: the window's PD
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2
 *
 * The window is published unbound: its key names nothing until a bind
 * executes.
 *
 * Context: process context.
 * Return: the window or ERR_PTR(-ENOMEM).
 */
struct shca_mr *shca_mw_create(struct shca_dev *sdev, struct ib_pd *pd,
			       u8 type)
{
	struct shca_mr *win = shca_mr_alloc(sdev, IB_MR_TYPE_USER, 0);

	if (IS_ERR(win))
		return win;
	win->mw_type = type;
	win->ibmr.pd = pd;
	shca_mr_publish(win);
	return win;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_create);

/**
 * shca_mw_destroy() - unbind a memory window, unpublish and free it
 * @win: a window of shca_mw_create()
 *
 * Transfers through the window stop at their next chunk; the MR it was
 * bound to can be deregistered once this returns.
 *
 * Context: process context; sleeps until the window's users are gone.
 */
void shca_mw_destroy(struct shca_mr *win)
{
	struct shca_mr *parent;
	unsigned long flags;

	spin_lock_irqsave(&win->lock, flags);
	/* A bind that found the window before it was unpublished fails. */
	win->dying = true;
	shca_mw_unbind_locked(win, &parent);
	spin_unlock_irqrestore(&win->lock, flags);
	if (parent)
		atomic_dec(&parent->windows);
	shca_mr_destroy(win);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_destroy);

/*
 * Count a window @b binds to @mr, under the MR's lock: the checks that
 * concern the MR, made while it cannot change.
 */
static int shca_mw_attach(struct shca_mr *mr, struct ib_pd *pd,
			  const struct shca_bind *b)
{
	unsigned long flags;
	u64 end;
	int err = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != b->mr_key)
		err = -ENOKEY;
	else if (mr->ibmr.pd != pd)
		err = -EACCES;
	else if (mr->state != SHCA_MR_VALID || mr->dying)
		err = -EKEYREVOKED;
	else if (!(mr->access & IB_ACCESS_MW_BIND) || mr->sig || mr->odp)
		err = -EPERM;
	/* A window cannot give writes to memory the MR cannot write. */
	else if ((b->access &
		  (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
		 !(mr->access & IB_ACCESS_LOCAL_WRITE))
		err = -EPERM;
	else if (check_add_overflow(b->addr, b->length, &end) ||
		 b->addr < mr->iova || end - mr->iova > mr->length)
		err = -ERANGE;
	else
		atomic_inc(&mr->windows);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_mw_bind_found() - a bind found its window and MR (KUnit hook)
 * @win: the window, a reference held
 *
 * Called before the bind takes the window's lock. KUnit tests redirect
 * it to destroy the window in the middle of the bind.
 */
void shca_mw_bind_found(struct shca_mr *win)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_mw_bind_found, win);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_bind_found);
#else
static inline void shca_mw_bind_found(struct shca_mr *win)
{
}
#endif

/**
 * shca_mw_bind() - execute a memory-window bind
 * @sdev: device of the QP that binds
 * @pd: PD of that QP
 * @qpn: its number; a type 2 window answers only this QP from now on
 * @b: the bind
 *
 * The IBTA's rules: the window, the MR and the QP share one PD; the MR
 * is valid and was registered with IB_ACCESS_MW_BIND; the window lies
 * within the MR; it grants remote rights only, and remote write or
 * atomic access only over an MR with local write; a type 2 window must
 * be unbound (invalidate it first) and may be zero-based, a type 1
 * window is rebound in place and a zero @b->length unbinds it. The
 * window takes @b->new_key, whose index must be the window's.
 *
 * Context: any context.
 * Return: 0; -ENOKEY when the window or the MR is gone or the MR's key
 * is stale; -EINVAL for a key of another index, unknown access flags, a
 * zero-based type 1 window or a bound type 2 window; -EACCES for another
 * PD; -EPERM for an MR without IB_ACCESS_MW_BIND (or an integrity MR),
 * or a write to an MR without local write; -EKEYREVOKED for an MR that
 * is invalid or being deregistered; -ERANGE for a window beyond the MR;
 * -ENOKEY also for a window whose deallocation began meanwhile (its MR
 * then keeps no count of it). Nothing changes on error.
 */
int shca_mw_bind(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		 const struct shca_bind *b)
{
	struct shca_mr *win, *mr = NULL, *old = NULL;
	unsigned long flags;
	int err = 0;

	win = shca_mr_get_id(sdev, b->mw_key, b->mw_id);
	if (!win)
		return -ENOKEY;
	if (!win->mw_type)
		err = -ENOKEY;
	else if (shca_mr_index(b->new_key) != shca_mr_index(win->key) ||
		 (b->access & ~(SHCA_MW_ACCESS_REMOTE | IB_ACCESS_LOCAL_WRITE |
				IB_ZERO_BASED)) ||
		 ((b->access & IB_ZERO_BASED) && win->mw_type == IB_MW_TYPE_1))
		err = -EINVAL;
	else if (win->ibmr.pd != pd)
		err = -EACCES;
	if (err)
		goto out;

	/* A type 1 window of length 0 is unbound; any other names an MR. */
	if (b->length || win->mw_type == IB_MW_TYPE_2) {
		mr = shca_mr_get_id(sdev, b->mr_key, b->mr_id);
		err = !mr || mr->mw_type ? -ENOKEY : shca_mw_attach(mr, pd, b);
		if (err)
			goto out;
	}

	shca_mw_bind_found(win);
	spin_lock_irqsave(&win->lock, flags);
	if (win->dying) {
		err = -ENOKEY;
	} else if (win->mw_type == IB_MW_TYPE_2 &&
		   win->state == SHCA_MR_VALID) {
		err = -EINVAL;
	} else {
		shca_mw_unbind_locked(win, &old);
		win->key = b->new_key;
		if (mr) {
			win->parent = mr;
			win->win_off = b->addr - mr->iova;
			win->access = b->access & (SHCA_MW_ACCESS_REMOTE |
						   IB_ZERO_BASED);
			win->iova = b->access & IB_ZERO_BASED ? 0 : b->addr;
			win->length = b->length;
			win->qpn = qpn;
			win->state = SHCA_MR_VALID;
		}
	}
	spin_unlock_irqrestore(&win->lock, flags);
	/* A type 1 unbind (no MR) counted nothing to take back. */
	if (err && mr)
		atomic_dec(&mr->windows);
	if (old)
		atomic_dec(&old->windows);
out:
	if (mr)
		shca_mr_put(mr);
	shca_mr_put(win);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_bind);

/*
 * Check @t for @len bytes against the window @win (under its lock) and
 * describe the range in @span: the window's bytes of the MR it is bound
 * to, moved under the window's lock chunk by chunk (span->locked), so a
 * transfer stops at the next chunk once the window is invalidated,
 * rebound or deallocated. The MR's translation is stable meanwhile: an
 * MR with bound windows cannot be invalidated, re-registered or freed.
 */
static int shca_mw_check_target(struct shca_mr *win,
				const struct shca_mem_target *t, u64 len,
				struct shca_span *span)
{
	u64 map_len = win->parent ? shca_map_len(win->parent->cur) : 0;
	u64 off = t->iova - win->iova;
	int err;

	lockdep_assert_held(&win->lock);

	/* A window has an rkey, no lkey. */
	if (win->key != t->key || !(t->access & SHCA_MW_ACCESS_REMOTE))
		err = -ENOKEY;
	else if (win->state != SHCA_MR_VALID)
		err = -EKEYREVOKED;
	else if (win->ibmr.pd != t->pd ||
		 (win->mw_type == IB_MW_TYPE_2 && win->qpn != t->qpn))
		err = -EACCES;
	else if ((win->access & t->access) != t->access)
		err = -EPERM;
	else if (t->iova < win->iova || off > win->length ||
		 len > win->length - off)
		err = -ERANGE;
	else if (len && (off + win->win_off > map_len ||
			 len > map_len - (off + win->win_off)))
		err = -EFAULT;
	else
		err = 0;
	*span = (struct shca_span){ .mr = win, .off = off + win->win_off,
				    .gen = win->gen, .locked = true };
	if (!err)
		span->map = win->parent->cur;
	return err;
}

/*
 * Check @t for @len bytes against @mr (under its lock unless nothing of
 * it can change) and describe the range in @span.
 */
static int shca_mr_check_target(struct shca_mr *mr,
				const struct shca_mem_target *t, u64 len,
				struct shca_span *span)
{
	u64 off = t->iova - mr->iova;
	int err;

	if (mr->mw_type)
		return shca_mw_check_target(mr, t, len, span);
	if (mr->key != t->key)
		err = -ENOKEY;
	else if (mr->state != SHCA_MR_VALID)
		err = -EKEYREVOKED;
	else if (mr->ibmr.pd != t->pd)
		err = -EACCES;
	else if ((mr->access & t->access) != t->access)
		err = -EPERM;
	else if (t->iova < mr->iova || off > mr->length ||
		 len > mr->length - off)
		err = -ERANGE;
	else if (mr->sig && mr->sig->pi)
		err = 0;	/* registration checked the translation */
	else if (len && (off > shca_map_len(mr->cur) ||
			 len > shca_map_len(mr->cur) - off))
		err = -EFAULT;
	else
		err = 0;
	span->mr = mr;
	span->map = mr->cur;
	span->off = off;
	span->gen = mr->gen;
	span->odp = mr->odp;
	span->no_sleep = t->no_sleep;
	span->locked = shca_mr_is_fast_reg(mr) || span->odp;
	span->sig = mr->sig && mr->sig->pi;
	return err;
}

/* What SHCA_LOCAL_DMA_LKEY translates through: every kernel address. */
static const struct shca_map shca_local_dma_map = {
	.data = { .kind = SHCA_XLAT_IDENTITY, .len = U64_MAX },
};

/*
 * The reserved lkey: what the DMA MR with local write that the core
 * would otherwise create for every kernel PD grants, without the MR (and
 * its lookup). Remote access and userspace PDs do not know the key.
 */
static int shca_local_dma_resolve(const struct shca_mem_target *t,
				  struct shca_span *span)
{
	if (!t->pd || t->pd->uobject || (t->access & ~IB_ACCESS_LOCAL_WRITE))
		return -ENOKEY;
	*span = (struct shca_span){ .map = &shca_local_dma_map,
				    .off = t->iova };
	return 0;
}

/* Drop the reference a resolved span holds, if any. */
static void shca_span_put(struct shca_span *span)
{
	if (span->mr)
		shca_mr_put(span->mr);
}

/*
 * Resolve @t for @len bytes: find the MR and check key, state, PD, access
 * and range. On success @span holds a reference to the MR (none for
 * SHCA_LOCAL_DMA_LKEY) and the translation in force.
 */
static int shca_mr_resolve(struct shca_dev *sdev,
			   const struct shca_mem_target *t, u64 len,
			   struct shca_span *span)
{
	unsigned long flags;
	struct shca_mr *mr;
	u64 end;
	int err;

	if (check_add_overflow(t->iova, len, &end))
		return -EOVERFLOW;
	if (t->key == SHCA_LOCAL_DMA_LKEY)
		return shca_local_dma_resolve(t, span);

	mr = shca_mr_get(sdev, t->key);
	if (!mr)
		return -ENOKEY;

	if (mr->type == IB_MR_TYPE_DMA) {
		/*
		 * Nothing of a DMA MR changes once it is published (the
		 * lookup's RCU dereference ordered its initialisation
		 * before us): the kernel ULPs' local_dma_lkey path takes no
		 * lock.
		 */
		err = shca_mr_check_target(mr, t, len, span);
	} else {
		spin_lock_irqsave(&mr->lock, flags);
		err = shca_mr_check_target(mr, t, len, span);
		spin_unlock_irqrestore(&mr->lock, flags);
	}

	if (err)
		shca_mr_put(mr);
	return err;
}

/*
 * Lock what the next chunk of a transfer from @b to @a needs: the MRs
 * whose translation can change, in address order (the same MR once), and
 * check that the registration each side was resolved under is still in
 * force (*@a_failed says whether @a's is not). IRQs stay off until
 * shca_spans_unlock(). For sparse, every path takes both contexts, real
 * or not.
 */
static int shca_spans_lock(struct shca_span *a, struct shca_span *b,
			   unsigned long *flags, bool *a_failed)
	__acquires(&a->mr->lock) __acquires(&b->mr->lock)
{
	struct shca_mr *x = a->locked ? a->mr : NULL;
	struct shca_mr *y = b->locked ? b->mr : NULL;

	if (x == y)
		y = NULL;
	if (!x)
		swap(x, y);
	if (y && y < x)
		swap(x, y);

	local_irq_save(*flags);
	if (x)
		spin_lock(&x->lock);
	else
		__acquire(&a->mr->lock);
	if (y)
		spin_lock_nested(&y->lock, SINGLE_DEPTH_NESTING);
	else
		__acquire(&b->mr->lock);

	*a_failed = a->locked && a->mr->gen != a->gen;
	if (*a_failed || (b->locked && b->mr->gen != b->gen))
		return -EKEYREVOKED;
	return 0;
}

static void shca_spans_unlock(struct shca_span *a, struct shca_span *b,
			      unsigned long flags)
	__releases(&a->mr->lock) __releases(&b->mr->lock)
{
	if (b->locked && b->mr != a->mr)
		spin_unlock(&b->mr->lock);
	else
		__release(&b->mr->lock);
	if (a->locked)
		spin_unlock(&a->mr->lock);
	else
		__release(&a->mr->lock);
	local_irq_restore(flags);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_mr_copy_chunk_done() - a transfer moved a chunk (KUnit hook)
 * @mr: the MR the chunk moved through
 *
 * Called between chunks, without locks. KUnit tests redirect it to
 * change the MR in the middle of a transfer.
 */
void shca_mr_copy_chunk_done(struct shca_mr *mr)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_mr_copy_chunk_done, mr);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_chunk_done);
#else
static inline void shca_mr_copy_chunk_done(struct shca_mr *mr)
{
}
#endif

/*
 * Copy @len bytes between @m at region offset @off and @buf. Only a
 * translation that breaks its own invariants has a hole here
 * (shca_mr_resolve() checked the range against the map's length).
 */
static int shca_map_copy(const struct shca_map *m, u64 off, void *buf,
			 u64 len, enum shca_copy_dir dir)
{
	while (len) {
		u64 contig;
		void *p = shca_map_ptr(m, off, &contig);
		u64 n;

		if (!p)
			return -EFAULT;
		n = min(len, contig);
		if (dir == SHCA_COPY_TO_MR)
			memcpy(p, buf, n);
		else
			memcpy(buf, p, n);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/* Keep the first signature error since the status was last read. */
static void shca_mr_sig_latch(struct shca_mr *mr, const struct ib_sig_err *err)
{
	lockdep_assert_held(&mr->lock);

	if (!mr->sig->err_exists) {
		mr->sig->err = *err;
		mr->sig->err_exists = true;
	}
}

/*
 * Run the MR's stream over @len bytes of wire at @wire: read towards
 * the wire, written towards memory, as the stream was started. Latch
 * the stream's first error, with the key it came through.
 */
static int shca_sig_pump(struct shca_mr *mr, const struct shca_map *m,
			 void *wire, u64 len)
{
	struct shca_sig_state *s = mr->sig;
	struct ib_sig_err err;

	lockdep_assert_held(&mr->lock);

	/* Go on after the wire is done: the last tuple may still be due. */
	for (;;) {
		struct shca_sig_bufs b = { .wire = wire, .wire_len = len };
		u64 dc = 0, mc = 0, used;

		b.data = shca_xlat_ptr(&m->data, s->data_off, &dc);
		b.data_len = b.data ? dc : 0;
		b.meta = shca_xlat_ptr(&m->meta, s->meta_off, &mc);
		b.meta_len = b.meta ? mc : 0;
		shca_sig_stream_xfer(&s->st, &b);

		used = len - b.wire_len;
		wire += used;
		len -= used;
		s->wire_off += used;
		s->data_off += dc - b.data_len;
		s->meta_off += mc - b.meta_len;
		if (!used && dc == b.data_len && mc == b.meta_len)
			break;
	}
	if (!s->reported && shca_sig_stream_error(&s->st, &err)) {
		err.key = mr->key;
		shca_mr_sig_latch(mr, &err);
		s->reported = true;
	}
	/* Registration checked the translation: a hole is an engine bug. */
	return len ? -EFAULT : 0;
}

/*
 * Start a transfer through the wire view at @off. Towards the wire, one
 * that starts inside a block replays the block's first bytes, so that
 * the block is checked and its PI built whole; towards memory, those
 * bytes (and maybe the PI) are gone, so such a start is refused unless
 * it continues the MR's transfer in progress (shca_sig_copy()).
 */
static int shca_sig_start(struct shca_mr *mr, const struct shca_map *m,
			  u64 off, bool to_wire)
{
	struct shca_sig_state *s = mr->sig;
	bool mem_pi = s->attrs.mem.sig_type == IB_SIG_TYPE_T10_DIF;
	u8 scratch[64];
	u32 skip, block;
	int err;

	lockdep_assert_held(&mr->lock);

	block = div_u64_rem(off, s->wire_block, &skip);
	if (skip && !to_wire)
		return -EINVAL;
	err = shca_sig_stream_init(&s->st, &s->attrs, to_wire, block);
	if (WARN_ON_ONCE(err))
		return err;
	s->live = true;
	s->reported = false;
	s->gen = mr->gen;
	s->wire_off = off - skip;
	s->data_off = (u64)block * s->interval;
	s->meta_off = mem_pi ? (u64)block * SHCA_PI_SIZE : 0;
	while (skip) {
		u32 n = min_t(u32, skip, sizeof(scratch));

		err = shca_sig_pump(mr, m, scratch, n);
		if (err)
			return err;
		skip -= n;
	}
	return 0;
}

/*
 * Move @len bytes between @buf (wire bytes) and the wire view of @span
 * at @span->off: from it with @to_wire, else into it. A transfer goes
 * on where the MR's previous one stopped if it starts there in the same
 * direction under the same registration; so chunks, SGEs and even work
 * requests may split blocks and tuples anywhere.
 */
static int shca_sig_copy(struct shca_span *span, void *buf, u64 len,
			 bool to_wire)
{
	struct shca_mr *mr = span->mr;
	struct shca_sig_state *s = mr->sig;
	int err;

	lockdep_assert_held(&mr->lock);

	if (!s->live || s->gen != mr->gen || s->st.to_wire != to_wire ||
	    s->wire_off != span->off) {
		err = shca_sig_start(mr, span->map, span->off, to_wire);
		if (err)
			goto fail;
	}
	err = shca_sig_pump(mr, span->map, buf, len);
	if (!err)
		return 0;
fail:
	s->live = false;
	return err;
}

#if SHCA_ODP
/*
 * An ODP span: are the pages of its next @len bytes there (with write
 * permission for @write)? Under the MR's lock.
 */
static bool shca_span_odp_ready(const struct shca_span *s, u64 len,
				bool write)
{
	const struct shca_xlat *x;

	if (!s->odp)
		return true;
	lockdep_assert_held(&s->mr->lock);
	x = &s->map->data;
	return shca_odp_ready(x->odp, x->base + s->off, len, write);
}

/*
 * Fault in the next @len bytes of an ODP span, no lock held: 0 to try
 * again, -EAGAIN where the transfer cannot sleep, or an error to fail.
 */
static int shca_span_odp_fault(const struct shca_span *s, u64 len,
			       bool write, unsigned int *tries)
{
	if (s->no_sleep)
		return -EAGAIN;
	return shca_odp_retry(s->mr, s->map->data.base + s->off, len, write,
			      tries);
}
#else
static bool shca_span_odp_ready(const struct shca_span *s, u64 len,
				bool write)
{
	return true;
}

static int shca_span_odp_fault(const struct shca_span *s, u64 len,
			       bool write, unsigned int *tries)
{
	return -EFAULT;
}
#endif

/* Move @len bytes between @span and @buf, chunk by chunk. */
static int shca_span_copy(struct shca_span *span, void *buf, u64 len,
			  enum shca_copy_dir dir)
{
	bool write = dir == SHCA_COPY_TO_MR, absent;
	struct shca_mr *mr = span->mr;
	unsigned int tries = 0;
	unsigned long flags;
	int err;

	if (!span->locked)
		return shca_map_copy(span->map, span->off, buf, len, dir);

	while (len) {
		u64 n = min_t(u64, len, SHCA_COPY_CHUNK);

		spin_lock_irqsave(&mr->lock, flags);
		absent = false;
		if (mr->gen != span->gen)
			err = -EKEYREVOKED;
		else if (!shca_span_odp_ready(span, n, write))
			absent = true;
		else if (span->sig)
			err = shca_sig_copy(span, buf, n,
					    dir == SHCA_COPY_FROM_MR);
		else
			err = shca_map_copy(span->map, span->off, buf, n, dir);
		spin_unlock_irqrestore(&mr->lock, flags);
		if (absent) {
			err = shca_span_odp_fault(span, n, write, &tries);
			if (!err)
				continue;
		}
		if (err)
			return err;
		tries = 0;
		span->off += n;
		buf += n;
		len -= n;
		shca_mr_copy_chunk_done(mr);
	}
	return 0;
}

/*
 * Move @len wire bytes between two integrity MRs through @dst's bounce
 * buffer: @dst's lock is held.
 */
static int shca_span_move_sig(struct shca_span *dst, struct shca_span *src,
			      u64 len, bool *dst_failed)
{
	u8 *bounce = dst->mr->sig->bounce;
	int err;

	/* One MR keeps one transfer: it cannot be read and written at once. */
	if (dst->mr == src->mr) {
		*dst_failed = true;
		return -EINVAL;
	}
	while (len) {
		u64 n = min_t(u64, len, SHCA_SIG_BOUNCE);

		*dst_failed = false;
		err = shca_sig_copy(src, bounce, n, true);
		if (err)
			return err;
		*dst_failed = true;
		err = shca_sig_copy(dst, bounce, n, false);
		if (err)
			return err;
		src->off += n;
		dst->off += n;
		len -= n;
	}
	return 0;
}

/*
 * Move @len bytes from @src to @dst, advancing both: straight from the
 * source's memory into the destination's, or through the engine of the
 * one that is an integrity MR.
 */
static int shca_span_move(struct shca_span *dst, struct shca_span *src,
			  u64 len, bool *dst_failed)
{
	if (dst->sig && src->sig)
		return shca_span_move_sig(dst, src, len, dst_failed);

	while (len) {
		struct shca_span *mem = src->sig ? dst : src;
		u64 contig, n;
		void *p = shca_map_ptr(mem->map, mem->off, &contig);
		int err;

		*dst_failed = mem == dst;
		if (!p)
			return -EFAULT;
		n = min(len, contig);
		*dst_failed = !src->sig;
		if (src->sig)
			err = shca_sig_copy(src, p, n, true);
		else if (dst->sig)
			err = shca_sig_copy(dst, p, n, false);
		else
			err = shca_map_copy(dst->map, dst->off, p, n,
					    SHCA_COPY_TO_MR);
		if (err)
			return err;
		src->off += n;
		dst->off += n;
		len -= n;
	}
	return 0;
}

/* Move @len bytes from @src to @dst, chunk by chunk when either can change. */
static int shca_span_copy_span(struct shca_span *dst, struct shca_span *src,
			       u64 len, bool *dst_failed)
{
	unsigned long flags;
	int err;

	struct shca_span *absent;
	unsigned int tries = 0;

	if (!dst->locked && !src->locked)
		return shca_span_move(dst, src, len, dst_failed);

	while (len) {
		u64 n = min_t(u64, len, SHCA_COPY_CHUNK);

		absent = NULL;
		err = shca_spans_lock(dst, src, &flags, dst_failed);
		if (!err && !shca_span_odp_ready(dst, n, true))
			absent = dst;
		else if (!err && !shca_span_odp_ready(src, n, false))
			absent = src;
		else if (!err)
			err = shca_span_move(dst, src, n, dst_failed);
		shca_spans_unlock(dst, src, flags);
		if (absent) {
			*dst_failed = absent == dst;
			err = shca_span_odp_fault(absent, n, absent == dst,
						  &tries);
			if (!err)
				continue;
		}
		if (err)
			return err;
		tries = 0;
		len -= n;
		shca_mr_copy_chunk_done(dst->mr);
	}
	return 0;
}

/**
 * shca_mr_copy() - move bytes between a buffer and memory named by a key
 * @sdev: device the key belongs to
 * @t: the key, iova, PD and required access (IB_ACCESS_LOCAL_WRITE to
 *	write locally, IB_ACCESS_REMOTE_* for a remote peer, 0 to read
 *	locally)
 * @buf: kernel buffer
 * @len: bytes to move
 * @dir: SHCA_COPY_TO_MR or SHCA_COPY_FROM_MR
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or -ENOKEY, -EKEYREVOKED, -EACCES, -EPERM, -EOVERFLOW,
 * -ERANGE, -EFAULT (see the file comment); nothing is copied then. A
 * fast-reg MR invalidated or re-registered while the bytes move stops
 * the transfer at a chunk boundary with -EKEYREVOKED; the chunks before
 * it have moved.
 */
int shca_mr_copy(struct shca_dev *sdev, const struct shca_mem_target *t,
		 void *buf, u64 len, enum shca_copy_dir dir)
{
	struct shca_span span;
	int err;

	err = shca_mr_resolve(sdev, t, len, &span);
	if (err)
		return err;
	err = shca_span_copy(&span, buf, len, dir);
	shca_span_put(&span);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy);

/**
 * shca_mr_copy_xdev() - move bytes between keyed regions of two devices
 * @dst_sdev: device of the destination key
 * @dst: destination key, iova, PD and required access
 * @src_sdev: device of the source key
 * @src: source key, iova, PD and required access
 * @len: bytes to move
 * @dst_failed: set on error: true if the destination was refused (or its
 *	registration changed under the transfer), false if the source was
 *
 * Both regions are resolved and checked before any byte moves.
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or an error of shca_mr_copy() for either side.
 */
int shca_mr_copy_xdev(struct shca_dev *dst_sdev,
		      const struct shca_mem_target *dst,
		      struct shca_dev *src_sdev,
		      const struct shca_mem_target *src, u64 len,
		      bool *dst_failed)
{
	struct shca_span s;
	int err;

	*dst_failed = false;
	err = shca_mr_hold(src_sdev, src, len, &s);
	if (err)
		return err;
	err = shca_mr_copy_held(&s, 0, dst_sdev, dst, len, false, dst_failed);
	shca_mr_unhold(&s);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_xdev);

/**
 * shca_mr_copy_mr() - move bytes from one keyed region to another
 * @sdev: device both keys belong to
 * @dst: destination key, iova, PD and required access
 * @src: source key, iova, PD and required access
 * @len: bytes to move
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or an error of shca_mr_copy() for either side.
 */
int shca_mr_copy_mr(struct shca_dev *sdev, const struct shca_mem_target *dst,
		    const struct shca_mem_target *src, u64 len)
{
	bool dst_failed;

	return shca_mr_copy_xdev(sdev, dst, sdev, src, len, &dst_failed);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_mr);

/**
 * shca_mr_hold() - resolve an access through a key and keep it
 * @sdev: device the key belongs to
 * @t: the key, iova, PD and required access
 * @len: bytes the access will cover
 * @span: filled on success; give it back with shca_mr_unhold()
 *
 * The checks of shca_mr_copy(), made once for a range that a request
 * then moves in pieces with shca_mr_copy_held() and
 * shca_mr_copy_held_buf(). Holding defers the MR's deregistration, so
 * a span is held only while one request executes, never across a wait.
 *
 * Context: any context; does not sleep.
 * Return: 0, or the error shca_mr_copy() would return (@span->mr is
 * then NULL: nothing to give back).
 */
int shca_mr_hold(struct shca_dev *sdev, const struct shca_mem_target *t,
		 u64 len, struct shca_span *span)
{
	int err = shca_mr_resolve(sdev, t, len, span);

	if (err)
		span->mr = NULL;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_hold);

/**
 * shca_mr_fault() - fault in the pages an access through a key will use
 * @sdev: device the key belongs to
 * @t: the key, iova, PD and required access
 * @len: bytes the access will cover
 * @write: the access writes
 *
 * For callers that must then move the bytes where they cannot sleep (an
 * atomic, under shca_atomic_lock): the access checks of shca_mr_copy(),
 * and the pages of an ODP MR faulted in. Nothing to do for other MRs.
 *
 * Context: process context, no lock held; sleeps.
 * Return: 0, or the error the access or the fault gets.
 */
int shca_mr_fault(struct shca_dev *sdev, const struct shca_mem_target *t,
		  u64 len, bool write)
{
	struct shca_span span;
	unsigned int tries = 0;
	int err;

	err = shca_mr_resolve(sdev, t, len, &span);
	if (err)
		return err;
	span.no_sleep = false;
	err = span.odp ? shca_span_odp_fault(&span, len, write, &tries) : 0;
	shca_span_put(&span);
	return err;
}

/**
 * shca_mr_unhold() - drop a span of shca_mr_hold()
 * @span: the span; its MR may be freed on return
 *
 * Context: any context; does not sleep.
 */
void shca_mr_unhold(struct shca_span *span)
{
	shca_span_put(span);
	span->mr = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_unhold);

/**
 * shca_mr_copy_held() - move bytes between a held span and a keyed region
 * @held: a span of shca_mr_hold(), not changed
 * @off: offset in @held of the first byte; @off + @len must lie within
 *	the length it was held for
 * @sdev: device of the other key
 * @t: the other key, iova, PD and required access
 * @len: bytes to move
 * @to_held: move from @t into @held, else from @held to @t
 * @dst_failed: set on error: true if the destination was refused (or
 *	its registration changed under the transfer), false if the source
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or an error of shca_mr_copy(): for @t, or -EKEYREVOKED if
 * @held's MR was invalidated or re-registered since it was held.
 */
int shca_mr_copy_held(const struct shca_span *held, u64 off,
		      struct shca_dev *sdev, const struct shca_mem_target *t,
		      u64 len, bool to_held, bool *dst_failed)
{
	struct shca_span h = *held, o;
	int err;

	h.off += off;
	err = shca_mr_resolve(sdev, t, len, &o);
	if (err) {
		*dst_failed = !to_held;
		return err;
	}
	*dst_failed = false;
	if (to_held)
		err = shca_span_copy_span(&h, &o, len, dst_failed);
	else
		err = shca_span_copy_span(&o, &h, len, dst_failed);
	shca_span_put(&o);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_held);

/**
 * shca_mr_copy_held_buf() - move bytes between a held span and a buffer
 * @held: a span of shca_mr_hold(), not changed
 * @off: offset in @held of the first byte, as for shca_mr_copy_held()
 * @buf: kernel buffer
 * @len: bytes to move
 * @dir: SHCA_COPY_TO_MR or SHCA_COPY_FROM_MR
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or -EKEYREVOKED if @held's MR was invalidated or
 * re-registered since it was held.
 */
int shca_mr_copy_held_buf(const struct shca_span *held, u64 off, void *buf,
			  u64 len, enum shca_copy_dir dir)
{
	struct shca_span h = *held;

	h.off += off;
	return shca_span_copy(&h, buf, len, dir);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_held_buf);

/**
 * shca_mr_copy_spans() - move bytes between two held spans
 * @dst: the destination, a span of shca_mr_hold(), not changed
 * @dst_off: offset in @dst of the first byte; @dst_off + @len must lie
 *	within the length it was held for
 * @src: the source, a span of shca_mr_hold(), not changed
 * @src_off: offset in @src of the first byte, likewise
 * @len: bytes to move
 * @dst_failed: set on error: true if the destination's registration
 *	changed since it was held, false if the source's
 *
 * For a request that checked both ranges whole before moving anything
 * and then moves them piece by piece.
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or -EKEYREVOKED if either MR was invalidated or
 * re-registered since it was held (or the error of an ODP page that is
 * not there, as for shca_mr_copy_held()).
 */
int shca_mr_copy_spans(const struct shca_span *dst, u64 dst_off,
		       const struct shca_span *src, u64 src_off, u64 len,
		       bool *dst_failed)
{
	struct shca_span d = *dst, s = *src;

	d.off += dst_off;
	s.off += src_off;
	*dst_failed = false;
	return shca_span_copy_span(&d, &s, len, dst_failed);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_spans);

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
