// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_mr_types: USER, dma-buf, DM, DMA and INTEGRITY
 * round trips: USER MRs over kunit_vm_mmap() memory (unaligned start,
 * iova different from the address, rereg of access in place and of
 * translation as a new key), dma-buf MRs through a minimal test
 * exporter, DM (alignment, zeroing, arena bounds, zero-based MRs), DMA
 * MRs, INTEGRITY (data + metadata, meta_length, writes straddling the
 * two).
 *
 * Every MR is made through the real entry points (ib_alloc_mr(),
 * ib_alloc_mr_integrity(), ib_reg_user_mr(), the DM ops, kernel PDs' DMA
 * MRs), registered through the engine hook the work-request executor
 * uses, and then read and written through the one copy path; every byte
 * is compared with the memory behind it. The fixture is
 * shca_kunit_mr_fix() (shca_kunit_util.c); the translation matrix is in
 * shca_xlat_kunit.c, the refused inputs in shca_mem_kunit.c.
 */

#include <linux/dma-buf.h>
#include <linux/dma-mapping.h>
#include <linux/fdtable.h>
#include <linux/mman.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);
MODULE_IMPORT_NS(SHCA_NS_DMA_BUF);

/* MRs made by the engine directly, without the core's bookkeeping. */
static void shca_destroy_mr_action(void *mr)
{
	shca_mr_destroy(mr);
}

/* How a USER MR translates its umem: chosen by size, or forced. */
struct shca_umem_xlat_case {
	const char *name;
	int force;			/* -1: chosen; 0: page list; 1: segments */
	int pages;			/* whole pages of the region (+ 123 bytes) */
};

static const struct shca_umem_xlat_case shca_umem_xlat_cases[] = {
	{ "translation chosen by size", -1, 5 },
	{ "page list", 0, 5 },
	{ "segment list", 1, 5 },
	/* 41 pages spanned: past the MR's inline list storage */
	{ "page list, allocated", 0, 40 },
};

static void shca_umem_xlat_desc(const struct shca_umem_xlat_case *c,
				char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_umem_xlat, shca_umem_xlat_cases, shca_umem_xlat_desc);

static bool shca_umem_force_pages(u64 nseg, u64 npages)
{
	return false;
}

static bool shca_umem_force_segs(u64 nseg, u64 npages)
{
	return true;
}

/*
 * Pass: a USER MR over user memory at an unaligned address, with an iova
 * of its own, reads and writes the process's bytes exactly, through a
 * page list and through a segment list, and refuses a byte outside.
 */
static void shca_mr_user_roundtrip(struct kunit *test)
{
	const struct shca_umem_xlat_case *c = test->param_value;
	struct shca_mr_fix *f = test->priv;
	const size_t len = c->pages * PAGE_SIZE + 123;
	const u64 iova = 0x7700000000ULL + 45;
	struct shca_mem_target t;
	unsigned long uaddr;
	u8 *src, *dst;
	struct ib_mr *mr;

	uaddr = kunit_vm_mmap(test, NULL, 0, len + PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, uaddr, 0, "no user memory");
	uaddr += 45;	/* an unaligned start */
	src = kunit_kmalloc(test, len, GFP_KERNEL);
	dst = kunit_kzalloc(test, len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	shca_kunit_fill(src, 9, len, 3);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)uaddr, src, len), 0);

	if (c->force >= 0)
		kunit_activate_static_stub(test, shca_umem_use_segs,
					   c->force ? shca_umem_force_segs :
						      shca_umem_force_pages);
	mr = shca_kunit_track_mr(test, ib_reg_user_mr(f->pd, uaddr, len, iova,
						      SHCA_RW));
	if (c->force >= 0)
		kunit_deactivate_static_stub(test, shca_umem_use_segs);
	KUNIT_EXPECT_EQ(test, mr->lkey, mr->rkey);
	KUNIT_EXPECT_EQ(test, to_shca_mr(mr)->type, IB_MR_TYPE_USER);
	if (c->force >= 0)
		KUNIT_EXPECT_EQ(test, to_shca_mr(mr)->cur->data.kind,
				c->force ? SHCA_XLAT_SEGS : SHCA_XLAT_PAGES);
	KUNIT_EXPECT_EQ(test, to_shca_mr(mr)->cur->data.len, len);
	/* A page list of up to SHCA_XLAT_INLINE pages lives in the MR. */
	if (!c->force) {
		bool inline_list = c->pages + 1 <= SHCA_XLAT_INLINE;

		KUNIT_EXPECT_EQ(test, to_shca_mr(mr)->cur->data.n,
				c->pages + 1);
		KUNIT_EXPECT_EQ(test, !to_shca_mr(mr)->xlat_mem, inline_list);
		KUNIT_EXPECT_EQ(test,
				(void *)to_shca_mr(mr)->cur->data.pages ==
				to_shca_mr(mr)->xlat_inline, inline_list);
	}

	t = shca_kunit_target(f->pd, mr->lkey, iova, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, dst, len,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, src, len);

	/* A remote write in the middle lands in the process's memory. */
	shca_kunit_fill(src, 10, 3000, 0);
	t = shca_kunit_target(f->pd, mr->rkey, iova + PAGE_SIZE - 1000,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, src, 3000,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(dst, (void __user *)uaddr, len),
			0);
	KUNIT_EXPECT_MEMEQ(test, dst + PAGE_SIZE - 1000, src, 3000);

	/* The iova space is [iova, iova + len): one byte out is refused. */
	t.iova = iova + len - 10;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, src, 11,
					   SHCA_COPY_TO_MR), -ERANGE);
	t.iova = iova - 1;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, src, 1,
					   SHCA_COPY_TO_MR), -ERANGE);
}

/*
 * A minimal dma-buf exporter over separate pages, for reg_user_mr_dmabuf.
 * Its kernel mapping is a vmap() of the pages (vmalloc space, not the
 * linear map). Variants: SHCA_EXP_BOUNCE hands devices bounce copies of
 * the pages, as swiotlb=force does (what a device writes reaches the
 * pages only on a sync, never here); SHCA_EXP_IOMEM claims its mapping
 * is I/O memory; SHCA_EXP_NO_VMAP has no kernel mapping at all.
 */
enum shca_exp_mode {
	SHCA_EXP_PLAIN,
	SHCA_EXP_BOUNCE,
	SHCA_EXP_IOMEM,
	SHCA_EXP_NO_VMAP,
};

struct shca_test_dmabuf {
	struct page *pages[4];
	struct page *bounce[4];
	unsigned int n;
	enum shca_exp_mode mode;
	void *vaddr;
	int vmaps;
	int vunmaps;
	struct dma_buf *dmabuf;
};

static struct sg_table *shca_exp_map(struct dma_buf_attachment *at,
				     enum dma_data_direction dir)
{
	struct shca_test_dmabuf *b = at->dmabuf->priv;
	struct sg_table *sgt = kzalloc(sizeof(*sgt), GFP_KERNEL);
	struct page **pages = b->pages;
	int err;

	if (!sgt)
		return ERR_PTR(-ENOMEM);
	if (b->mode == SHCA_EXP_BOUNCE) {
		unsigned int i;

		/* Copy in, as a DMA_TO_DEVICE sync of a bounce buffer. */
		for (i = 0; i < b->n; i++)
			memcpy(page_address(b->bounce[i]),
			       page_address(b->pages[i]), PAGE_SIZE);
		pages = b->bounce;
	}
	err = sg_alloc_table_from_pages(sgt, pages, b->n, 0,
					b->n * PAGE_SIZE, GFP_KERNEL);
	if (err) {
		kfree(sgt);
		return ERR_PTR(err);
	}
	err = dma_map_sgtable(at->dev, sgt, dir, 0);
	if (err) {
		sg_free_table(sgt);
		kfree(sgt);
		return ERR_PTR(err);
	}
	return sgt;
}

static void shca_exp_unmap(struct dma_buf_attachment *at,
			   struct sg_table *sgt, enum dma_data_direction dir)
{
	dma_unmap_sgtable(at->dev, sgt, dir, 0);
	sg_free_table(sgt);
	kfree(sgt);
}

static int shca_exp_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct shca_test_dmabuf *b = dmabuf->priv;

	b->vaddr = vmap(b->pages, b->n, VM_MAP, PAGE_KERNEL);
	if (!b->vaddr)
		return -ENOMEM;
	b->vmaps++;
	if (b->mode == SHCA_EXP_IOMEM)
		iosys_map_set_vaddr_iomem(map, (void __iomem __force *)b->vaddr);
	else
		iosys_map_set_vaddr(map, b->vaddr);
	return 0;
}

static void shca_exp_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct shca_test_dmabuf *b = dmabuf->priv;

	vunmap(b->vaddr);
	b->vaddr = NULL;
	b->vunmaps++;
}

static void shca_exp_release(struct dma_buf *dmabuf)
{
	struct shca_test_dmabuf *b = dmabuf->priv;
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		__free_page(b->pages[i]);
		__free_page(b->bounce[i]);
	}
	kfree(b);
}

static const struct dma_buf_ops shca_exp_ops = {
	.map_dma_buf = shca_exp_map,
	.unmap_dma_buf = shca_exp_unmap,
	.vmap = shca_exp_vmap,
	.vunmap = shca_exp_vunmap,
	.release = shca_exp_release,
};

static const struct dma_buf_ops shca_exp_novmap_ops = {
	.map_dma_buf = shca_exp_map,
	.unmap_dma_buf = shca_exp_unmap,
	.release = shca_exp_release,
};

static void shca_close_fd_action(void *fd)
{
	close_fd((uintptr_t)fd);
}

/* Export @n fresh pages (filled with a pattern) and return an fd. */
static int shca_test_dmabuf_fd_mode(struct kunit *test, unsigned int n,
				    enum shca_exp_mode mode,
				    struct shca_test_dmabuf **exp)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct shca_test_dmabuf *b;
	struct dma_buf *dmabuf;
	unsigned int i;
	int fd;

	b = kzalloc(sizeof(*b), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	b->mode = mode;
	for (i = 0; i < n; i++) {
		b->pages[i] = alloc_page(GFP_KERNEL);
		b->bounce[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!b->pages[i] || !b->bounce[i]) {
			if (b->pages[i])
				__free_page(b->pages[i]);
			if (b->bounce[i])
				__free_page(b->bounce[i]);
			break;
		}
		b->n++;
		shca_kunit_fill(page_address(b->pages[i]), 30 + i, PAGE_SIZE, 0);
	}
	info.ops = mode == SHCA_EXP_NO_VMAP ? &shca_exp_novmap_ops :
					      &shca_exp_ops;
	info.size = (size_t)n * PAGE_SIZE;
	info.flags = O_RDWR;
	info.priv = b;
	dmabuf = b->n == n ? dma_buf_export(&info) : ERR_PTR(-ENOMEM);
	if (IS_ERR(dmabuf)) {
		shca_exp_release(&(struct dma_buf){ .priv = b });
		KUNIT_FAIL_AND_ABORT(test, "dma_buf_export: %ld",
				     PTR_ERR(dmabuf));
	}
	b->dmabuf = dmabuf;
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		KUNIT_FAIL_AND_ABORT(test, "dma_buf_fd: %d", fd);
	}
	shca_kunit_defer(test, shca_close_fd_action, (void *)(uintptr_t)fd);
	*exp = b;
	return fd;
}

static int shca_test_dmabuf_fd(struct kunit *test, unsigned int n,
			       struct page ***pages)
{
	struct shca_test_dmabuf *b;
	int fd = shca_test_dmabuf_fd_mode(test, n, SHCA_EXP_PLAIN, &b);

	*pages = b->pages;
	return fd;
}

/* The core's bookkeeping around ops.reg_user_mr_dmabuf. */
static struct ib_mr *shca_reg_dmabuf(struct ib_pd *pd, u64 offset, u64 len,
				     u64 iova, int fd, int access)
{
	struct ib_mr *mr = shca_call_reg_user_mr_dmabuf(pd, offset, len, iova,
							fd, access);

	if (!IS_ERR(mr)) {
		mr->device = pd->device;
		mr->pd = pd;
		mr->type = IB_MR_TYPE_USER;
		mr->iova = iova;
		mr->length = len;
		atomic_inc(&pd->usecnt);
	}
	return mr;
}

/*
 * Pass: a dma-buf MR over four separate pages reads and writes them
 * byte-exactly from an unaligned offset; bad fds and ranges are refused.
 */
static void shca_mr_dmabuf_roundtrip(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	const u64 off = 100, len = 3 * PAGE_SIZE, iova = 0x500000000ULL + 100;
	struct shca_mem_target t;
	struct page **pages;
	u8 *out, *expect;
	struct ib_mr *mr;
	int fd, i;

	fd = shca_test_dmabuf_fd(test, 4, &pages);
	expect = shca_kunit_vbuf(test, 4 * PAGE_SIZE);
	out = shca_kunit_vbuf(test, len);
	for (i = 0; i < 4; i++)
		memcpy(expect + i * PAGE_SIZE, page_address(pages[i]),
		       PAGE_SIZE);

	mr = shca_kunit_track_mr(test, shca_reg_dmabuf(f->pd, off, len, iova, fd,
						       SHCA_RW));
	t = shca_kunit_target(f->pd, mr->lkey, iova, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, len,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, expect + off, len);

	/* A remote write across the second page boundary. */
	memset(out, 0x5d, 64);
	t = shca_kunit_target(f->pd, mr->rkey, iova + 2 * PAGE_SIZE - 100 - 32,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, 64,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv((u8 *)page_address(pages[1]) +
					    PAGE_SIZE - 32, 0x5d, 32));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(page_address(pages[2]), 0x5d,
					    32));
	t.iova = iova + len - 1;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 2,
					   SHCA_COPY_TO_MR), -ERANGE);

	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_reg_dmabuf(f->pd, 0, PAGE_SIZE, 0,
						      -1, 0)), -EBADF);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_reg_dmabuf(f->pd, PAGE_SIZE,
						      4 * PAGE_SIZE,
						      PAGE_SIZE, fd, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_reg_dmabuf(f->pd, 0, PAGE_SIZE, 0,
						      fd,
						      IB_ACCESS_REMOTE_WRITE)),
			-EINVAL);
}

/*
 * Pass: the exporter hands devices bounce copies of its pages (as
 * swiotlb=force does), yet a write through a dma-buf MR lands in the
 * exporter's own memory and a read sees what the exporter holds now: the
 * MR goes through the buffer's kernel mapping, not through DMA
 * addresses. Deregistration gives the mapping and the reference back.
 */
static void shca_mr_dmabuf_bounced(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	const u64 iova = 0x600000000ULL;
	struct shca_test_dmabuf *b;
	struct shca_mem_target t;
	long refs;
	u8 in[64], out[64];
	struct ib_mr *mr;
	int fd;

	fd = shca_test_dmabuf_fd_mode(test, 2, SHCA_EXP_BOUNCE, &b);
	refs = file_count(b->dmabuf->file);
	mr = shca_kunit_track_mr(test, shca_reg_dmabuf(f->pd, 0, 2 * PAGE_SIZE, iova,
						       fd, SHCA_RW));
	KUNIT_EXPECT_EQ(test, b->vmaps, 1);

	/* A remote write across the page boundary reaches the pages. */
	memset(in, 0xc3, sizeof(in));
	t = shca_kunit_target(f->pd, mr->rkey, iova + PAGE_SIZE - 32,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv((u8 *)page_address(b->pages[0]) +
					    PAGE_SIZE - 32, 0xc3, 32));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(page_address(b->pages[1]), 0xc3,
					    32));

	/* What the exporter writes now is what a remote read returns. */
	memset(page_address(b->pages[1]) + 100, 0x3c, sizeof(out));
	t = shca_kunit_target(f->pd, mr->rkey, iova + PAGE_SIZE + 100,
			      IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(out, 0x3c, sizeof(out)));

	shca_kunit_untrack_dereg(test, mr);
	KUNIT_EXPECT_EQ(test, b->vunmaps, 1);
	KUNIT_EXPECT_EQ(test, b->dmabuf->vmapping_counter, 0);
	KUNIT_EXPECT_EQ(test, file_count(b->dmabuf->file), refs);
}

/*
 * Pass: a dma-buf the CPU cannot map as memory - no kernel mapping, or
 * one of I/O memory - is refused with EOPNOTSUPP, and the refusal leaves
 * no MR, no mapping and no reference behind.
 */
static void shca_mr_dmabuf_refused(struct kunit *test)
{
	static const enum shca_exp_mode modes[] = { SHCA_EXP_NO_VMAP,
						    SHCA_EXP_IOMEM };
	struct shca_mr_fix *f = test->priv;
	u32 before = shca_kunit_count_mrs(f->sdev);
	struct shca_test_dmabuf *b;
	int i, fd;
	long refs;

	for (i = 0; i < ARRAY_SIZE(modes); i++) {
		struct ib_mr *mr;

		fd = shca_test_dmabuf_fd_mode(test, 1, modes[i], &b);
		refs = file_count(b->dmabuf->file);
		mr = shca_reg_dmabuf(f->pd, 0, PAGE_SIZE, 0, fd, SHCA_RW);
		KUNIT_EXPECT_EQ_MSG(test, PTR_ERR(mr), -EOPNOTSUPP,
				    "exporter mode %d", modes[i]);
		if (!IS_ERR(mr)) {
			ib_dereg_mr(mr);
			continue;
		}
		KUNIT_EXPECT_EQ(test, b->vmaps, b->vunmaps);
		KUNIT_EXPECT_EQ(test, b->dmabuf->vmapping_counter, 0);
		KUNIT_EXPECT_EQ(test, file_count(b->dmabuf->file), refs);
	}
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev), before);
}

/*
 * Pass: registering a user MR reads the core's umem and never writes it
 * (here its iova was set by ib_umem_find_best_pgsz(), as the core's
 * helpers do), and the MR still translates every byte.
 */
static void shca_mr_user_umem_untouched(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	const size_t len = 3 * PAGE_SIZE - 200;
	const u64 iova = 0x4400000000ULL + 100;	/* same page offset */
	struct shca_mem_target t;
	struct ib_umem *umem, *snap;
	unsigned long uaddr;
	struct shca_mr *mr;
	u8 *src, *dst;

	uaddr = kunit_vm_mmap(test, NULL, 0, 3 * PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, uaddr, 0);
	uaddr += 100;
	src = kunit_kmalloc(test, len, GFP_KERNEL);
	dst = kunit_kzalloc(test, len, GFP_KERNEL);
	snap = kunit_kmalloc(test, sizeof(*snap), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	KUNIT_ASSERT_NOT_NULL(test, snap);
	shca_kunit_fill(src, 11, len, 2);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)uaddr, src, len), 0);

	umem = ib_umem_get(f->ibdev, uaddr, len, IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(umem));
	KUNIT_EXPECT_EQ(test, ib_umem_find_best_pgsz(umem, PAGE_SIZE, iova),
			PAGE_SIZE);
	memcpy(snap, umem, sizeof(*snap));
	mr = shca_mr_create_user(f->sdev, umem, iova, SHCA_RW);
	if (IS_ERR(mr)) {
		ib_umem_release(umem);
		KUNIT_FAIL_AND_ABORT(test, "shca_mr_create_user: %ld",
				     PTR_ERR(mr));
	}
	shca_kunit_defer(test, shca_destroy_mr_action, mr);
	KUNIT_EXPECT_MEMEQ(test, umem, snap, sizeof(*snap));

	t = shca_kunit_target(NULL, mr->key, iova, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, dst, len,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, src, len);
}

/* Pass: rereg of access applies in place; TRANS makes a new key. */
static void shca_mr_user_rereg(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct shca_mem_target t;
	unsigned long uaddr;
	struct ib_mr *mr, *nmr;
	u8 buf[64] = {};

	uaddr = kunit_vm_mmap(test, NULL, 0, 2 * PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, uaddr, 0);
	mr = shca_kunit_track_mr(test, ib_reg_user_mr(f->pd, uaddr, PAGE_SIZE,
						      uaddr, IB_ACCESS_LOCAL_WRITE));
	t = shca_kunit_target(f->pd, mr->rkey, uaddr, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, buf, 64,
					   SHCA_COPY_TO_MR), -EPERM);

	nmr = f->ibdev->ops.rereg_user_mr(mr, IB_MR_REREG_ACCESS, 0, 0, 0,
					  SHCA_RW, f->pd, NULL);
	KUNIT_EXPECT_NULL(test, nmr);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, buf, 64,
					   SHCA_COPY_TO_MR), 0);

	/* A forbidden combination changes nothing. */
	nmr = f->ibdev->ops.rereg_user_mr(mr, IB_MR_REREG_ACCESS, 0, 0, 0,
					  IB_ACCESS_REMOTE_WRITE, f->pd, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(nmr), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, buf, 64,
					   SHCA_COPY_TO_MR), 0);

	nmr = f->ibdev->ops.rereg_user_mr(mr, IB_MR_REREG_TRANS,
					  uaddr + PAGE_SIZE, PAGE_SIZE,
					  uaddr + PAGE_SIZE, 0, f->pd, NULL);
	KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(nmr));
	KUNIT_EXPECT_NE(test, nmr->rkey, mr->rkey);
	/* The core would do this bookkeeping, then deregister the old MR. */
	nmr->device = f->ibdev;
	nmr->pd = f->pd;
	nmr->type = IB_MR_TYPE_USER;
	atomic_inc(&f->pd->usecnt);
	shca_kunit_track_mr(test, nmr);
	t = shca_kunit_target(f->pd, nmr->rkey, uaddr + PAGE_SIZE,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, buf, 64,
					   SHCA_COPY_TO_MR), 0);

	/*
	 * Write access cannot be added over a read-only pin: over a writable
	 * mapping rereg re-pins (a new MR), over a read-only one it fails
	 * like a fresh registration would.
	 */
	{
		unsigned long ro = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
						 PROT_READ,
						 MAP_ANONYMOUS | MAP_PRIVATE,
						 0);
		struct ib_mr *rmr;

		KUNIT_ASSERT_NE(test, ro, 0);
		rmr = shca_kunit_track_mr(test, ib_reg_user_mr(f->pd, ro, PAGE_SIZE,
							       ro, 0));
		nmr = f->ibdev->ops.rereg_user_mr(rmr, IB_MR_REREG_ACCESS, 0,
						  0, 0, SHCA_RW, f->pd, NULL);
		KUNIT_EXPECT_EQ(test, PTR_ERR(nmr), -EFAULT);
		t = shca_kunit_target(f->pd, rmr->rkey, ro, IB_ACCESS_REMOTE_WRITE);
		KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, buf, 1,
						   SHCA_COPY_TO_MR), -EPERM);

		rmr = shca_kunit_track_mr(test, ib_reg_user_mr(f->pd, uaddr,
							       PAGE_SIZE, uaddr, 0));
		nmr = f->ibdev->ops.rereg_user_mr(rmr, IB_MR_REREG_ACCESS, 0,
						  0, 0, SHCA_RW, f->pd, NULL);
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(nmr));
		nmr->device = f->ibdev;
		nmr->pd = f->pd;
		nmr->type = IB_MR_TYPE_USER;
		atomic_inc(&f->pd->usecnt);
		shca_kunit_track_mr(test, nmr);
		KUNIT_EXPECT_EQ(test, nmr->iova, uaddr);
		KUNIT_EXPECT_EQ(test, nmr->length, PAGE_SIZE);
		t = shca_kunit_target(f->pd, nmr->rkey, uaddr,
				      IB_ACCESS_REMOTE_WRITE);
		KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, buf, 64,
						   SHCA_COPY_TO_MR), 0);
	}

	/* rereg is for user MRs only. */
	nmr = f->ibdev->ops.rereg_user_mr(shca_kunit_dma_mr(test, f->pd,
						      IB_ACCESS_LOCAL_WRITE),
					  IB_MR_REREG_ACCESS, 0, 0, 0, 0,
					  f->pd, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(nmr), -EINVAL);
}

static void shca_free_dm_action(void *p)
{
	struct ib_dm *dm = p;

	dm->device->ops.dealloc_dm(dm, NULL);
}

/* The core's bookkeeping around ops.alloc_dm; freed with the test. */
static struct ib_dm *shca_test_dm(struct kunit *test, struct ib_device *ibdev,
				  u64 len, u32 log_align)
{
	struct ib_dm_alloc_attr attr = { .length = len,
					 .alignment = log_align };
	struct ib_dm *dm = ibdev->ops.alloc_dm(ibdev, NULL, &attr, NULL);

	if (!IS_ERR(dm)) {
		dm->device = ibdev;
		dm->length = len;
		shca_kunit_defer(test, shca_free_dm_action, dm);
	}
	return dm;
}

static void shca_free_dm(struct kunit *test, struct ib_dm *dm)
{
	kunit_release_action(test, shca_free_dm_action, dm);
}

static struct ib_mr *shca_test_dm_mr(struct ib_pd *pd, struct ib_dm *dm,
				     u64 off, u64 len, int access)
{
	struct ib_dm_mr_attr attr = { .offset = off, .length = len,
				      .access_flags = access | IB_ZERO_BASED };
	struct ib_mr *mr = pd->device->ops.reg_dm_mr(pd, dm, &attr, NULL);

	if (!IS_ERR(mr)) {
		mr->device = pd->device;
		mr->pd = pd;
		mr->type = IB_MR_TYPE_DM;
		mr->dm = dm;
		atomic_inc(&pd->usecnt);
	}
	return mr;
}

/*
 * Pass: DM allocations are aligned and zeroed, bounded by the arena, a
 * DM MR is zero-based over its slice of the allocation.
 */
static void shca_mr_dm_roundtrip(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_dm *dm, *dm2, *big;
	struct shca_mem_target t;
	u8 in[300], out[300];
	struct ib_mr *mr;

	dm = shca_test_dm(test, f->ibdev, 4096, 12);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dm));
	KUNIT_EXPECT_EQ(test, to_shca_dm(dm)->addr % 4096, 0);
	dm2 = shca_test_dm(test, f->ibdev, 100, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dm2));
	KUNIT_EXPECT_EQ(test, to_shca_dm(dm2)->addr % 64, 0);

	mr = shca_kunit_track_mr(test, shca_test_dm_mr(f->pd, dm, 1000, 300,
						       SHCA_RW));
	KUNIT_EXPECT_EQ(test, mr->iova, 0);
	KUNIT_EXPECT_EQ(test, mr->length, 300);
	t = shca_kunit_target(f->pd, mr->lkey, 0, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, 300,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(out, 0, 300));
	shca_kunit_fill(in, 1, 300, 1);
	t.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, in, 300,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, (u8 *)to_shca_dm(dm)->addr + 1000, in, 300);
	t.iova = 1;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 300,
					   SHCA_COPY_TO_MR), -ERANGE);

	/* Out of the allocation: refused. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm_mr(f->pd, dm, 4000, 97, 0)),
			-EINVAL);

	/* Bad sizes and alignment; a full arena says ENOMEM. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm(test, f->ibdev, 0, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm(test, f->ibdev,
						   SHCA_DM_SIZE + 1, 0)),
			-ENOMEM);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm(test, f->ibdev, 64, 40)),
			-EINVAL);
	big = shca_test_dm(test, f->ibdev, SHCA_DM_SIZE / 2, 0);
	KUNIT_EXPECT_FALSE(test, IS_ERR(big));
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm(test, f->ibdev,
						   SHCA_DM_SIZE / 2, 0)),
			-ENOMEM);

	shca_kunit_untrack_dereg(test, mr);
	if (!IS_ERR(big))
		shca_free_dm(test, big);
	shca_free_dm(test, dm2);
	/* Freed memory comes back zeroed to the next user. */
	memset((void *)to_shca_dm(dm)->addr, 0xa5, 4096);
	shca_free_dm(test, dm);
	dm = shca_test_dm(test, f->ibdev, SHCA_DM_SIZE, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dm));
	KUNIT_EXPECT_TRUE(test, !memchr_inv((void *)to_shca_dm(dm)->addr, 0,
					    SHCA_DM_SIZE));
}

/*
 * Pass: a zero-length DM MR is accepted anywhere within the allocation,
 * up to its very end (as on mlx5): it covers no byte, so only zero-length
 * accesses pass; an offset past the end is refused and leaves no MR.
 */
static void shca_mr_dm_zero_length(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u32 before = shca_kunit_count_mrs(f->sdev);
	struct shca_mem_target t;
	static const u64 offs[] = { 0, 1000, 4096 };
	struct ib_dm *dm;
	struct ib_mr *mr;
	u8 byte = 0x5a;
	int i;

	dm = shca_test_dm(test, f->ibdev, 4096, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR(dm));
	for (i = 0; i < ARRAY_SIZE(offs); i++) {
		mr = shca_kunit_track_mr(test, shca_test_dm_mr(f->pd, dm, offs[i], 0,
							       SHCA_RW));
		KUNIT_EXPECT_EQ(test, mr->iova, 0);
		KUNIT_EXPECT_EQ(test, mr->length, 0);
		t = shca_kunit_target(f->pd, mr->rkey, 0, IB_ACCESS_REMOTE_WRITE);
		KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &byte, 0,
						   SHCA_COPY_TO_MR), 0);
		KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &byte, 1,
						   SHCA_COPY_TO_MR), -ERANGE);
		t.iova = 1;
		KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &byte, 0,
						   SHCA_COPY_TO_MR), -ERANGE);
	}
	KUNIT_EXPECT_TRUE(test, !memchr_inv((void *)to_shca_dm(dm)->addr, 0,
					    4096));
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev),
			before + ARRAY_SIZE(offs));
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm_mr(f->pd, dm, 4097, 0, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(shca_test_dm_mr(f->pd, dm, U64_MAX, 0,
						      0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev),
			before + ARRAY_SIZE(offs));
}

/* Pass: a DMA MR with local write reads and writes kernel memory. */
static void shca_mr_dma_roundtrip(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_mr *dma = shca_kunit_dma_mr(test, f->pd, IB_ACCESS_LOCAL_WRITE);
	struct shca_mem_target t;
	u8 *buf, out[256];

	buf = kunit_kmalloc(test, 256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	shca_kunit_fill(buf, 2, 256, 5);
	t = shca_kunit_target(f->pd, dma->lkey, (uintptr_t)buf, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, 256,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, buf, 256);
	t.access = IB_ACCESS_LOCAL_WRITE;
	memset(out, 0x3c, sizeof(out));
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, 256,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, buf, out, 256);

	/* It grants local access only ... */
	t.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 1,
					   SHCA_COPY_FROM_MR), -EPERM);
	/* ... and belongs to its own PD. */
	t = shca_kunit_target(f->pd2, dma->lkey, (uintptr_t)buf, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 1,
					   SHCA_COPY_FROM_MR), -EACCES);
}

/*
 * Pass: an integrity MR is zero-based, data then metadata, length
 * data + metadata, meta_length reported; both lists read and write
 * byte-exactly.
 */
static void shca_mr_integrity_roundtrip(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *data, *meta, *out, *expect;
	struct shca_mem_target t;
	u32 dlen, mlen;
	struct ib_mr *mr;

	mr = shca_kunit_pi_mr(test, f, &data, &meta, &dlen, &mlen);
	KUNIT_EXPECT_EQ(test, mr->iova, 0);
	KUNIT_EXPECT_EQ(test, mr->length, dlen + mlen);
	KUNIT_EXPECT_EQ(test, mr->sig_attrs->meta_length, mlen);

	shca_kunit_sig_attrs_plain(mr->sig_attrs);
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg_pi(to_shca_mr(mr), mr->rkey,
						  SHCA_RW, mr->sig_attrs), 0);
	KUNIT_EXPECT_EQ(test, to_shca_mr(mr)->sig->attrs.mem.sig.dif.ref_tag,
			1000);

	expect = kunit_kmalloc(test, dlen + mlen, GFP_KERNEL);
	out = kunit_kmalloc(test, dlen + mlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, expect);
	KUNIT_ASSERT_NOT_NULL(test, out);
	memcpy(expect, data + 100, 1000);
	memcpy(expect + 1000, data + PAGE_SIZE + 7, 548);
	memcpy(expect + 1548, data + 2 * PAGE_SIZE, 500);
	memcpy(expect + dlen, meta + 3, 16);
	memcpy(expect + dlen + 16, meta + 64, 16);

	t = shca_kunit_target(f->pd, mr->rkey, 0, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, dlen + mlen,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, expect, dlen + mlen);

	/* A write straddling data and metadata. */
	memset(out, 0xee, 40);
	t = shca_kunit_target(f->pd, mr->rkey, dlen - 20, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, 40,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(data + 2 * PAGE_SIZE + 480, 0xee,
					    20));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(meta + 3, 0xee, 16));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(meta + 64, 0xee, 4));
	KUNIT_EXPECT_EQ(test, meta[68], shca_kunit_pattern(21, 68, 0));

	/* Remote atomics are refused on an integrity MR (as mlx5). */
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	KUNIT_EXPECT_EQ(test,
			shca_mr_fast_reg_pi(to_shca_mr(mr), mr->rkey,
					    SHCA_RW | IB_ACCESS_REMOTE_ATOMIC,
					    mr->sig_attrs),
			-EINVAL);
}

static struct kunit_case shca_mr_types_cases[] = {
	KUNIT_CASE_PARAM(shca_mr_user_roundtrip, shca_umem_xlat_gen_params),
	KUNIT_CASE(shca_mr_user_rereg),
	KUNIT_CASE(shca_mr_dmabuf_roundtrip),
	KUNIT_CASE(shca_mr_dmabuf_bounced),
	KUNIT_CASE(shca_mr_dmabuf_refused),
	KUNIT_CASE(shca_mr_user_umem_untouched),
	KUNIT_CASE(shca_mr_dm_roundtrip),
	KUNIT_CASE(shca_mr_dm_zero_length),
	KUNIT_CASE(shca_mr_dma_roundtrip),
	KUNIT_CASE(shca_mr_integrity_roundtrip),
	{}
};

static struct kunit_suite shca_mr_types_suite = {
	.name = "shca_mr_types",
	.init = shca_kunit_mr_init,
	.test_cases = shca_mr_types_cases,
};

kunit_test_suites(&shca_mr_types_suite);
