// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - on-demand paging: user MRs that pin nothing.
 *
 * An ODP MR (IB_ACCESS_ON_DEMAND) is an ib_umem_odp of the core: an MMU
 * interval notifier over the registered range and, per page, the address
 * the device may use once the page has been faulted in (dma_list; a
 * virtual-DMA device's "DMA address" is the page's kernel address) with
 * its read/write permission in the low bits. Nothing is pinned: the
 * kernel may unmap, migrate, swap or copy-on-write any page at any time,
 * and tells us first through the notifier, which clears the pages'
 * entries.
 *
 * Locking. A page's entry is read, and the page's bytes are moved, under
 * the MR's spinlock (shca_mr.lock), which the notifier also takes, inside
 * the umem's mutex, while it clears entries: once the notifier returns no
 * byte moves through the old page, and a copy in progress finishes its
 * chunk before the page goes. Faults run with no lock of ours held: the
 * copy path finds a page missing under the MR's lock, drops it, faults
 * the range in (ib_umem_odp_map_dma_and_lock(), which takes the mm's lock
 * and the umem's mutex) and tries again. A fault sleeps: it runs only
 * where the execution may sleep (a QP's work item, or post_send of a user
 * QP); elsewhere the copy returns -EAGAIN.
 *
 * Implicit ODP. An MR over the whole address space (start 0, length
 * U64_MAX) has a root umem and one child umem per SHCA_ODP_CHILD bytes,
 * made on the first fault in its range and freed with the MR. Children
 * exist only below the process' task size, and a device makes at most
 * SHCA_ODP_MAX_CHILDREN of them (each costs the core's page arrays,
 * about 256 KiB): a fault beyond fails with -ENOMEM.
 */

#include <linux/hmm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <rdma/ib_umem_odp.h>

#include "shca_verbs.h"

#if SHCA_ODP

/* Bytes of the address space one child of an implicit MR covers. */
#define SHCA_ODP_CHILD_SHIFT	26
#define SHCA_ODP_CHILD		BIT_ULL(SHCA_ODP_CHILD_SHIFT)

/*
 * Times the copy path faults a range in and finds it gone again before
 * it gives up (a process unmapping and touching the range in a loop).
 */
#define SHCA_ODP_RETRIES	64

static bool shca_odp_invalidate(struct mmu_interval_notifier *mni,
				const struct mmu_notifier_range *range,
				unsigned long cur_seq)
{
	struct ib_umem_odp *umem = container_of(mni, struct ib_umem_odp,
						notifier);
	struct shca_mr *mr;
	unsigned long flags;
	u64 start, end;

	if (!mmu_notifier_range_blockable(range))
		return false;

	mutex_lock(&umem->umem_mutex);
	mmu_interval_set_seq(mni, cur_seq);
	/*
	 * The notifier runs from the moment the core inserts it, before
	 * umem->private is set; nothing is mapped until a fault, which comes
	 * after: no page, nothing to clear (and maybe no MR yet).
	 */
	if (!umem->npages) {
		mutex_unlock(&umem->umem_mutex);
		return true;
	}
	mr = umem->private;
	start = max_t(u64, ib_umem_start(umem), range->start);
	end = min_t(u64, ib_umem_end(umem), range->end);
	/* Copies hold the MR's lock while they use a page. */
	spin_lock_irqsave(&mr->lock, flags);
	ib_umem_odp_unmap_dma_pages(umem, start, end);
	spin_unlock_irqrestore(&mr->lock, flags);
	mutex_unlock(&umem->umem_mutex);
	return true;
}

static const struct mmu_interval_notifier_ops shca_odp_ops = {
	.invalidate = shca_odp_invalidate,
};

/* The umem that covers @va, or NULL (implicit MRs: none made yet). */
static struct ib_umem_odp *shca_odp_umem(const struct shca_odp *odp, u64 va)
{
	if (!odp->implicit)
		return odp->umem;
	return xa_load((struct xarray *)&odp->children,
		       va >> SHCA_ODP_CHILD_SHIFT);
}

/**
 * shca_odp_ptr() - the kernel address of a byte of an ODP region
 * @odp: the MR's ODP state
 * @va: user virtual address of the byte
 * @write: the byte will be written
 * @contig: set to the bytes from @va to the end of its page
 *
 * Context: under the MR's lock.
 * Return: the address, or NULL when the page is not faulted in (with
 * write permission if @write).
 */
void *shca_odp_ptr(const struct shca_odp *odp, u64 va, bool write,
		   u64 *contig)
{
	struct ib_umem_odp *umem = shca_odp_umem(odp, va);
	u64 mask, dma, idx;

	if (!umem || va < ib_umem_start(umem) || va >= ib_umem_end(umem))
		return NULL;
	mask = BIT_ULL(umem->page_shift) - 1;
	idx = (va - ib_umem_start(umem)) >> umem->page_shift;
	dma = READ_ONCE(umem->dma_list[idx]);
	if (!(dma & (write ? ODP_WRITE_ALLOWED_BIT : ODP_READ_ALLOWED_BIT)))
		return NULL;
	*contig = mask + 1 - (va & mask);
	return (void *)(uintptr_t)((dma & ODP_DMA_ADDR_MASK) + (va & mask));
}

/**
 * shca_odp_ready() - is every page of a range faulted in?
 * @odp: the MR's ODP state
 * @va: first byte
 * @len: bytes
 * @write: with write permission
 *
 * Context: under the MR's lock, which keeps them there.
 * Return: true if the range can be copied now.
 */
bool shca_odp_ready(const struct shca_odp *odp, u64 va, u64 len, bool write)
{
	u64 contig;

	while (len) {
		if (!shca_odp_ptr(odp, va, write, &contig))
			return false;
		contig = min(contig, len);
		va += contig;
		len -= contig;
	}
	return true;
}

/* The child of an implicit MR that covers @va, made if need be. */
static struct ib_umem_odp *shca_odp_child(struct shca_mr *mr, u64 va)
{
	struct shca_odp *odp = mr->odp;
	u64 idx = va >> SHCA_ODP_CHILD_SHIFT;
	struct ib_umem_odp *child;
	int err;

	child = xa_load(&odp->children, idx);
	if (child)
		return child;
	/* Only the registering process' address space is there to map. */
	if (va >= odp->umem->umem.owning_mm->task_size)
		return ERR_PTR(-EFAULT);
	mutex_lock(&odp->lock);
	child = xa_load(&odp->children, idx);
	if (child)
		goto out;
	/* Each child costs kernel memory: a device makes only so many. */
	if (atomic_inc_return(&mr->sdev->odp_children) >
	    READ_ONCE(mr->sdev->odp_children_max)) {
		child = ERR_PTR(-ENOMEM);
		goto uncount;
	}
	child = ib_umem_odp_alloc_child(odp->umem, idx << SHCA_ODP_CHILD_SHIFT,
					SHCA_ODP_CHILD, &shca_odp_ops);
	if (IS_ERR(child))
		goto uncount;
	child->private = mr;
	err = xa_err(xa_store(&odp->children, idx, child, GFP_KERNEL_ACCOUNT));
	if (!err)
		goto out;
	ib_umem_odp_release(child);
	child = ERR_PTR(err);
uncount:
	atomic_dec(&mr->sdev->odp_children);
out:
	mutex_unlock(&odp->lock);
	return child;
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_odp_umem_made() - an ODP umem exists, its MR not yet (KUnit hook)
 * @umem: the umem; its MMU notifier is live, @umem->private not set
 *
 * KUnit tests redirect it to unmap the range there, as another thread
 * of the registering process may.
 */
void shca_odp_umem_made(struct ib_umem_odp *umem)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_odp_umem_made, umem);
}
EXPORT_SYMBOL_IF_KUNIT(shca_odp_umem_made);
#else
static inline void shca_odp_umem_made(struct ib_umem_odp *umem)
{
}
#endif

/*
 * Map [@va, @va + @len) of one umem: fault it in (@fault) or take only
 * the pages that are there.
 */
static int shca_odp_map(struct ib_umem_odp *umem, u64 va, u64 len, bool write,
			bool fault)
{
	u64 access = ODP_READ_ALLOWED_BIT | (write ? ODP_WRITE_ALLOWED_BIT : 0);
	int np;

	np = ib_umem_odp_map_dma_and_lock(umem, va, len, access, fault);
	if (np < 0)
		return np;
	mutex_unlock(&umem->umem_mutex);
	return 0;
}

/**
 * shca_odp_fault() - fault a range of an ODP MR in
 * @mr: an ODP MR
 * @va: first byte
 * @len: bytes
 * @write: with write permission
 * @fault: fault pages that are not there (else take only those that are)
 *
 * Context: process context, no lock held; sleeps.
 * Return: 0, or -EFAULT for memory that is not mapped (or not writable
 * for @write), -ENOMEM, or another error of hmm_range_fault().
 */
int shca_odp_fault(struct shca_mr *mr, u64 va, u64 len, bool write,
		   bool fault)
{
	struct ib_umem_odp *umem;
	u64 end, n;
	int err;

	might_sleep();
	if (check_add_overflow(va, len, &end))
		return -EFAULT;
	while (va < end) {
		umem = mr->odp->implicit ? shca_odp_child(mr, va) :
					   mr->odp->umem;
		if (IS_ERR(umem))
			return PTR_ERR(umem);
		if (va < ib_umem_start(umem) || va >= ib_umem_end(umem))
			return -EFAULT;
		n = min_t(u64, end, ib_umem_end(umem)) - va;
		err = shca_odp_map(umem, va, n, write, fault);
		if (err)
			return err;
		va += n;
	}
	return 0;
}

/**
 * shca_odp_retry() - fault a range in for the copy path, boundedly
 * @mr: an ODP MR
 * @va: first byte
 * @len: bytes
 * @write: with write permission
 * @tries: the caller's count of faults for this piece, 0 at first
 *
 * Context: see shca_odp_fault().
 * Return: 0 to try the copy again, or an error to give up with: the
 * fault's, or -EFAULT when the range went away SHCA_ODP_RETRIES times
 * between the fault and the copy.
 */
int shca_odp_retry(struct shca_mr *mr, u64 va, u64 len, bool write,
		   unsigned int *tries)
{
	if ((*tries)++ >= SHCA_ODP_RETRIES)
		return -EFAULT;
	if (*tries > 1)
		cond_resched();
	return shca_odp_fault(mr, va, len, write, true);
}

/**
 * shca_odp_init() - make an MR an ODP MR
 * @mr: an MR being built (not published)
 * @start: user virtual address of the region
 * @length: bytes; @start 0 and @length U64_MAX: implicit ODP, the whole
 *	address space of the process
 * @access: IB_ACCESS_* flags of the registration
 *
 * Context: the registering process.
 * Return: 0, or an error of ib_umem_odp_get() / _alloc_implicit().
 */
int shca_odp_init(struct shca_mr *mr, u64 start, u64 length, int access)
{
	struct shca_xlat *x = &mr->cur->data;
	struct ib_umem_odp *umem;
	struct shca_odp *odp;

	odp = shca_inject_fault() ? NULL : kzalloc(sizeof(*odp), GFP_KERNEL);
	if (!odp)
		return -ENOMEM;
	odp->implicit = !start && length == U64_MAX;
	mutex_init(&odp->lock);
	xa_init(&odp->children);
	if (odp->implicit)
		umem = ib_umem_odp_alloc_implicit(&mr->sdev->ibdev, access);
	else
		umem = ib_umem_odp_get(&mr->sdev->ibdev, start, length, access,
				       &shca_odp_ops);
	if (IS_ERR(umem)) {
		kfree(odp);
		return PTR_ERR(umem);
	}
	shca_odp_umem_made(umem);
	umem->private = mr;
	odp->umem = umem;
	mr->odp = odp;
	x->kind = SHCA_XLAT_ODP;
	x->odp = odp;
	x->base = start;
	x->len = length;
	return 0;
}

/**
 * shca_odp_fini() - release what shca_odp_init() and faults made
 * @mr: an ODP MR nobody uses any more
 *
 * Context: process context.
 */
void shca_odp_fini(struct shca_mr *mr)
{
	struct shca_odp *odp = mr->odp;
	struct ib_umem_odp *child;
	unsigned long idx;

	xa_for_each(&odp->children, idx, child) {
		ib_umem_odp_release(child);
		atomic_dec(&mr->sdev->odp_children);
	}
	xa_destroy(&odp->children);
	ib_umem_odp_release(odp->umem);
	mutex_destroy(&odp->lock);
	kfree(odp);
	mr->odp = NULL;
}

#endif /* SHCA_ODP */
