// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - MR translations: the page and segment lists that map region
 * offsets to memory, built from a pinned umem (shca_mr_create_user()) or
 * from map_mr_sg() (fast-reg MRs), and looked up by the copy engine
 * (shca_mem.c).
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
 */

#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_umem.h>

#include "shca_mem.h"
#include "shca_verbs.h"

/**
 * shca_xlat_mem() - storage for an MR's translation lists
 * @mr: the MR, not yet published
 * @size: bytes of every list of its maps together
 * @gfp: allocation flags; __GFP_ZERO clears the storage
 *
 * The MR's inline array when they fit, so that a small MR costs no
 * allocation (a fifth of softhca's own share of registering a 16-page
 * user MR under TCG was kvmalloc() and kvfree()), else one kvmalloc()
 * freed with the MR.
 *
 * Return: the storage, or NULL.
 */
void *shca_xlat_mem(struct shca_mr *mr, size_t size, gfp_t gfp)
{
	if (size <= sizeof(mr->xlat_inline)) {
		if (gfp & __GFP_ZERO)
			memset(mr->xlat_inline, 0, size);
		return mr->xlat_inline;
	}
	mr->xlat_mem = shca_inject_fault() ? NULL : kvmalloc(size, gfp);
	return mr->xlat_mem;
}

/**
 * shca_xlat_carve() - give a translation its list storage
 * @x: the translation
 * @kind: SHCA_XLAT_PAGES or SHCA_XLAT_SEGS
 * @max: entries of the list
 * @mem: cursor in storage of shca_xlat_mem()
 *
 * Points @x at storage for @max entries taken from *@mem, and advances
 * *@mem past them.
 */
void shca_xlat_carve(struct shca_xlat *x, enum shca_xlat_kind kind, u32 max,
		     u8 **mem)
{
	x->kind = kind;
	x->max = max;
	x->pages = (u64 *)*mem;
	*mem += (size_t)max * shca_xlat_entry_size(kind);
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

/**
 * shca_xlat_from_umem() - translate a pinned umem into an MR's map
 * @mr: a USER MR, not yet published
 * @umem: memory pinned by ib_umem_get(), only read
 *
 * By its DMA segments or by pages, whichever list is smaller. The umem
 * was DMA-mapped for this virtual-DMA device, so its DMA addresses are
 * kernel virtual addresses; the umem itself is the core's and is only
 * read (its iova is not this MR's business). Registering a large region
 * should cost little more than pinning it.
 *
 * Return: 0; -EINVAL for a list over U32_MAX entries, -ENOMEM, or
 * -EFAULT for a umem whose DMA segments do not cover it.
 */
int shca_xlat_from_umem(struct shca_mr *mr, struct ib_umem *umem)
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

/**
 * shca_xlat_ptr() - translate an offset of a translation
 * @x: the translation (an ODP one under its MR's lock, after
 *	shca_span_odp_ready())
 * @off: offset in @x
 * @contig: set to the number of bytes contiguous from there
 *
 * Never indexes past what is in use, nor past the storage.
 *
 * Return: the kernel pointer of byte @off, or NULL when @x does not
 * translate @off.
 */
void *shca_xlat_ptr(const struct shca_xlat *x, u64 off, u64 *contig)
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

/**
 * shca_map_ptr() - translate a region offset of an MR's map
 * @m: the map
 * @off: region offset: into the data, or past it into the metadata
 * @contig: set to the number of bytes contiguous from there, within the
 *	data or the metadata
 *
 * Return: the kernel pointer of byte @off, or NULL when @m does not
 * translate @off.
 */
void *shca_map_ptr(const struct shca_map *m, u64 off, u64 *contig)
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

/**
 * shca_xlat_len() - bytes a translation covers
 * @x: the translation
 *
 * Return: the bytes from offset 0 that @x translates without a hole.
 */
u64 shca_xlat_len(const struct shca_xlat *x)
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

/**
 * shca_map_len() - bytes an MR's map covers
 * @m: the map
 *
 * Return: the bytes from region offset 0 that @m translates without a
 * hole: the data, and the metadata after it when the data is whole.
 */
u64 shca_map_len(const struct shca_map *m)
{
	u64 data = shca_xlat_len(&m->data);

	if (!m->meta.max || data < m->data.len)
		return data;
	return data + shca_xlat_len(&m->meta);
}
