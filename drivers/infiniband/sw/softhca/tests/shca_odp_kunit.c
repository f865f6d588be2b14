// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for on-demand paging MRs: user memory of the test's own mm
 * (kunit_vm_mmap()) registered without pinning, read and written through
 * the one copy path, which faults pages in; pages the kernel takes away
 * (MADV_DONTNEED, munmap) are refaulted or fail the access cleanly, never
 * read stale; accesses that cannot sleep fail with -EAGAIN and fault
 * nothing; implicit MRs over the whole address space; ibv_advise_mr()'s
 * prefetch with each advice and each refused input; copies racing a
 * thread that keeps invalidating the range.
 *
 * shca_odp: round trip, invalidation, unmapped memory, no-sleep
 * accesses, implicit MRs, prefetch, the notifier racing the copies
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/kthread.h>
#include <linux/mman.h>
#include <linux/sched/mm.h>
#include <linux/uaccess.h>
#include <rdma/ib_umem_odp.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

#if SHCA_ODP

static const u8 shca_odp_mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x4f, 0x44, 0x01 };

#define SHCA_ODP_PAGES	8
#define SHCA_ODP_LEN	(SHCA_ODP_PAGES * PAGE_SIZE)
#define SHCA_ODP_RW	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
			 IB_ACCESS_ON_DEMAND)
/* An iova that is not the user address: the MR translates between them. */
#define SHCA_ODP_IOVA	0x7700000000ULL

/**
 * struct shca_odp_fix - fixture of the ODP suite
 * @f: the MR fixture: a device and two PDs
 * @uaddr: SHCA_ODP_LEN bytes of the test's user memory, never touched
 *	before the test
 * @buf: a kernel buffer of SHCA_ODP_LEN bytes
 */
struct shca_odp_fix {
	struct shca_mr_fix *f;
	unsigned long uaddr;
	u8 *buf;
};

/*
 * The test thread's own address space, as kunit_vm_mmap() would attach
 * one, but given back at the end of the test (shca_odp_detach_mm()):
 * registering an ODP MR makes the mm an MMU notifier home, freed only
 * with the mm, and KUnit keeps the mm it attaches for ever (shca_leak
 * would see the leak). A test that aborts keeps it, as KUnit would.
 */
static void shca_odp_attach_mm(struct kunit *test)
{
	struct mm_struct *mm;

	KUNIT_ASSERT_NULL(test, current->mm);
	mm = mm_alloc();
	KUNIT_ASSERT_NOT_NULL(test, mm);
	mm->task_size = TASK_SIZE;
	arch_pick_mmap_layout(mm, &current->signal->rlim[RLIMIT_STACK]);
	kthread_use_mm(mm);
}

/*
 * The last step of each test, in the test thread: the address space goes
 * (its mappings with it); the MRs, destroyed after the test by its
 * actions, hold the mm_struct itself until they release their umems.
 */
static void shca_odp_detach_mm(void)
{
	struct mm_struct *mm = current->mm;

	kthread_unuse_mm(mm);
	mmput(mm);
}

static int shca_odp_test_init(struct kunit *test)
{
	struct shca_odp_fix *x = kunit_kzalloc(test, sizeof(*x), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, x);
	shca_odp_attach_mm(test);
	x->f = shca_kunit_mr_fix(test, "shcak_odp", shca_odp_mac);
	x->uaddr = kunit_vm_mmap(test, NULL, 0, SHCA_ODP_LEN,
				 PROT_READ | PROT_WRITE,
				 MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, x->uaddr, 0);
	x->buf = kunit_kzalloc(test, SHCA_ODP_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, x->buf);
	test->priv = x;
	return 0;
}

static void shca_odp_destroy_action(void *mr)
{
	shca_mr_destroy(mr);
}

static struct shca_mr *shca_odp_mr(struct kunit *test, u64 start, u64 len,
				   u64 iova, int access)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mr *mr;

	mr = shca_mr_create_odp(x->f->sdev, start, len, iova, access);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mr), "shca_mr_create_odp: %ld",
			       PTR_ERR_OR_ZERO(mr));
	mr->ibmr.pd = x->f->pd;
	shca_kunit_defer(test, shca_odp_destroy_action, mr);
	return mr;
}

/* Pages of an explicit ODP MR that are mapped for the device now. */
static int shca_odp_mapped(struct shca_mr *mr)
{
	struct ib_umem_odp *umem = mr->odp->umem;
	int n;

	mutex_lock(&umem->umem_mutex);
	n = umem->npages;
	mutex_unlock(&umem->umem_mutex);
	return n;
}

static struct shca_mem_target shca_odp_target(struct ib_pd *pd, u32 key,
					      u64 iova, int access)
{
	return (struct shca_mem_target){ .pd = pd, .key = key, .iova = iova,
					 .access = access };
}

static void shca_odp_fill(u8 *p, size_t len, u8 salt)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (u8)(i * 13 + (i >> 12) + salt);
}

/*
 * Pass: registering pins and maps nothing; a read through the key faults
 * the pages in and returns what the process wrote; a remote write lands
 * in the process's memory; the region's bounds and rights still hold.
 */
static void shca_odp_roundtrip(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct ib_pd *pd = x->f->pd;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u8 *src, *dst;

	src = kunit_kmalloc(test, SHCA_ODP_LEN, GFP_KERNEL);
	dst = kunit_kzalloc(test, SHCA_ODP_LEN, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	shca_odp_fill(src, SHCA_ODP_LEN, 1);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)x->uaddr, src,
					   SHCA_ODP_LEN), 0);

	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, SHCA_ODP_IOVA,
			 SHCA_ODP_RW);
	KUNIT_EXPECT_NULL(test, mr->umem);
	KUNIT_EXPECT_EQ(test, mr->cur->data.kind, SHCA_XLAT_ODP);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 0);

	t = shca_odp_target(pd, mr->key, SHCA_ODP_IOVA, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, dst, SHCA_ODP_LEN,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, dst, src, SHCA_ODP_LEN);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), SHCA_ODP_PAGES);

	/* A remote write across a page boundary, seen by the process. */
	shca_odp_fill(src, 3000, 77);
	t = shca_odp_target(pd, mr->key, SHCA_ODP_IOVA + PAGE_SIZE - 1000,
			    IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, src, 3000,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(dst, (void __user *)x->uaddr,
					     SHCA_ODP_LEN), 0);
	KUNIT_EXPECT_MEMEQ(test, dst + PAGE_SIZE - 1000, src, 3000);

	t.iova = SHCA_ODP_IOVA + SHCA_ODP_LEN - 8;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, src, 16,
					   SHCA_COPY_TO_MR), -ERANGE);
	t = shca_odp_target(x->f->pd2, mr->key, SHCA_ODP_IOVA,
			    IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, dst, 16,
					   SHCA_COPY_FROM_MR), -EACCES);
	shca_odp_detach_mm();
}

/*
 * Pass: pages the kernel takes away (MADV_DONTNEED) leave the device's
 * map at once; the next access faults them in again and sees the
 * memory as it is now (zeros), never the old page.
 */
static void shca_odp_invalidated(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u8 out[64], zero[64] = {};

	memset(x->buf, 0xab, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)x->uaddr, x->buf,
					   PAGE_SIZE), 0);
	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, x->uaddr, SHCA_ODP_RW);
	t = shca_odp_target(x->f->pd, mr->key, x->uaddr,
			    IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, out[0], 0xab);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 1);

	KUNIT_ASSERT_EQ(test, do_madvise(current->mm, x->uaddr, SHCA_ODP_LEN,
					 MADV_DONTNEED), 0);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, zero, sizeof(out));
	shca_odp_detach_mm();
}

/*
 * Pass: memory unmapped under the MR fails the access with -EFAULT and
 * moves nothing; what is still mapped keeps working.
 */
static void shca_odp_unmapped(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u8 in[64];

	memset(in, 0x5c, sizeof(in));
	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, x->uaddr, SHCA_ODP_RW);
	t = shca_odp_target(x->f->pd, mr->key, x->uaddr + PAGE_SIZE,
			    IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), 0);
	KUNIT_ASSERT_EQ(test, vm_munmap(x->uaddr + PAGE_SIZE, PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), -EFAULT);
	/* A transfer that crosses into the hole stops there. */
	t.iova = x->uaddr + PAGE_SIZE - 32;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), -EFAULT);
	t.iova = x->uaddr + 2 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), 0);
	shca_odp_detach_mm();
}

/* shca_odp_notifier_first: the registering process unmaps its memory. */
static unsigned long shca_odp_unmap_addr;

static void shca_odp_unmap_stub(struct ib_umem_odp *umem)
{
	vm_munmap(shca_odp_unmap_addr, SHCA_ODP_LEN);
}

/*
 * Issue 29 (second review, F1): the MMU notifier of an ODP umem runs
 * from the moment the core inserts it, before the MR is attached to the
 * umem; another thread of the registering process that unmaps the range
 * then must find nothing to do. The registration goes on; the memory is
 * gone, so an access fails with -EFAULT. Before the fix the notifier
 * dereferenced the MR pointer that was still NULL.
 */
static void shca_odp_notifier_first(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u8 in[64] = {};

	shca_odp_unmap_addr = x->uaddr;
	kunit_activate_static_stub(test, shca_odp_umem_made,
				   shca_odp_unmap_stub);
	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, x->uaddr, SHCA_ODP_RW);
	kunit_deactivate_static_stub(test, shca_odp_umem_made);
	t = shca_odp_target(x->f->pd, mr->key, x->uaddr,
			    IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), -EFAULT);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 0);
	shca_odp_detach_mm();
}

/*
 * Pass: an access that cannot sleep fails with -EAGAIN while its pages
 * are not there, and faults nothing; once shca_mr_fault() has faulted
 * them in (as the executor does for atomics), it succeeds.
 */
static void shca_odp_no_sleep(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u64 v = 0x1122334455667788ULL, got = 0;

	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, x->uaddr, SHCA_ODP_RW);
	t = shca_odp_target(x->f->pd, mr->key, x->uaddr + 64,
			    IB_ACCESS_REMOTE_ATOMIC);
	t.no_sleep = true;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, &v, sizeof(v),
					   SHCA_COPY_TO_MR), -EAGAIN);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 0);
	KUNIT_ASSERT_EQ(test, shca_mr_fault(x->f->sdev, &t, sizeof(v), true), 0);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 1);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, &v, sizeof(v),
					   SHCA_COPY_TO_MR), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(&got,
					     (void __user *)(x->uaddr + 64),
					     sizeof(got)), 0);
	KUNIT_EXPECT_EQ(test, got, v);
	/* Faulting checks the access like a copy would. */
	t.iova = x->uaddr + SHCA_ODP_LEN;
	KUNIT_EXPECT_EQ(test, shca_mr_fault(x->f->sdev, &t, sizeof(v), true),
			-ERANGE);
	shca_odp_detach_mm();
}

/*
 * Pass: an implicit MR covers the whole address space at iova 0: any
 * mapped address of the process reads and writes, an unmapped one fails
 * with -EFAULT.
 */
static void shca_odp_implicit(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u8 in[100], out[100];

	shca_odp_fill(in, sizeof(in), 9);
	mr = shca_odp_mr(test, 0, U64_MAX, 0, SHCA_ODP_RW);
	KUNIT_EXPECT_TRUE(test, mr->odp->implicit);
	t = shca_odp_target(x->f->pd, mr->key, x->uaddr + 3 * PAGE_SIZE - 50,
			    IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, in, sizeof(in),
					   SHCA_COPY_TO_MR), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(out, (void __user *)t.iova,
					     sizeof(out)), 0);
	KUNIT_EXPECT_MEMEQ(test, out, in, sizeof(in));
	t.access = IB_ACCESS_REMOTE_READ;
	memset(out, 0, sizeof(out));
	KUNIT_ASSERT_EQ(test, shca_mr_copy(x->f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, in, sizeof(in));
	KUNIT_EXPECT_FALSE(test, xa_empty(&mr->odp->children));
	/* Page 0 is never mapped. */
	t.iova = 64;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(x->f->sdev, &t, out, 8,
					   SHCA_COPY_FROM_MR), -EFAULT);
	shca_odp_detach_mm();
}

/*
 * Issue 29, finding 8: an implicit MR makes children only for addresses
 * of the process (a fault at or above its task size fails with -EFAULT
 * and makes none), and a device makes only so many (here lowered to 3):
 * a fault in a fourth 64 MiB region fails with -ENOMEM, the regions made
 * keep working, and deregistration gives the budget back. Before the fix
 * every first touch of a region, anywhere, made a child for good.
 */
static void shca_odp_implicit_bounded(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_dev *sdev = x->f->sdev;
	u32 saved = sdev->odp_children_max;
	struct shca_mem_target t;
	struct shca_mr *mr;
	u8 out[8];
	int i;

	mr = shca_odp_mr(test, 0, U64_MAX, 0, SHCA_ODP_RW);
	t = shca_odp_target(x->f->pd, mr->key, TASK_SIZE,
			    IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), -EFAULT);
	t.iova = U64_MAX - PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), -EFAULT);
	KUNIT_EXPECT_TRUE(test, xa_empty(&mr->odp->children));
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->odp_children), 0);

	sdev->odp_children_max = 3;
	/* Three regions far apart (nothing mapped there): children made. */
	for (i = 1; i <= 3; i++) {
		t.iova = (u64)i << 32;
		KUNIT_EXPECT_EQ(test, shca_mr_copy(sdev, &t, out, sizeof(out),
						   SHCA_COPY_FROM_MR), -EFAULT);
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->odp_children), 3);
	t.iova = 4ULL << 32;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), -ENOMEM);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->odp_children), 3);
	sdev->odp_children_max = saved;
	kunit_release_action(test, shca_odp_destroy_action, mr);
	KUNIT_EXPECT_EQ(test, atomic_read(&sdev->odp_children), 0);
	shca_odp_detach_mm();
}

#define SHCA_ADV_PREFETCH		IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH
#define SHCA_ADV_PREFETCH_WRITE		IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE
#define SHCA_ADV_PREFETCH_NO_FAULT	IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT

/* One range, synchronously (IB_UVERBS_ADVISE_MR_FLAG_FLUSH). */
static int shca_odp_advise1(struct shca_mr_fix *f, struct ib_pd *pd,
			    u32 advice, const struct ib_sge *sge)
{
	return shca_mr_advise(f->sdev, pd, advice, true, sge, 1);
}

/*
 * Pass: each advice prefetches what it says (PREFETCH_NO_FAULT maps only
 * pages that are there), synchronously with the flush flag; every refused
 * range gets its errno and prefetches nothing.
 */
static void shca_odp_advise(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_mr_fix *f = x->f;
	struct ib_sge sge;
	struct shca_mr *mr, *pinned;
	struct ib_umem *umem;
	unsigned long plain;

	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, SHCA_ODP_IOVA,
			 SHCA_ODP_RW);
	sge = (struct ib_sge){ .addr = SHCA_ODP_IOVA, .length = 2 * PAGE_SIZE,
			       .lkey = mr->key };
	/* Nothing touched yet: no page to take without faulting. */
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, SHCA_ADV_PREFETCH_NO_FAULT, &sge), 0);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 0);
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, SHCA_ADV_PREFETCH_WRITE, &sge), 0);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 2);
	sge.addr += 2 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, SHCA_ADV_PREFETCH, &sge), 0);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 4);

	/* Refused, each with nothing prefetched. */
	sge.addr = SHCA_ODP_IOVA + 4 * PAGE_SIZE;
	sge.length = PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, 7, &sge),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd2, SHCA_ADV_PREFETCH, &sge),
			-EACCES);
	sge.lkey = ib_inc_rkey(mr->key);
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, SHCA_ADV_PREFETCH, &sge),
			-ENOKEY);
	sge.lkey = mr->key;
	sge.length = SHCA_ODP_LEN;
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, SHCA_ADV_PREFETCH, &sge),
			-ERANGE);
	KUNIT_EXPECT_EQ(test, shca_odp_mapped(mr), 4);

	/* A pinned MR has nothing to prefetch. */
	plain = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, plain, 0);
	umem = ib_umem_get(f->ibdev, plain, PAGE_SIZE, IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_FALSE(test, IS_ERR(umem));
	pinned = shca_mr_create_user(f->sdev, umem, plain,
				     IB_ACCESS_LOCAL_WRITE);
	if (IS_ERR(pinned)) {
		ib_umem_release(umem);
		KUNIT_FAIL_AND_ABORT(test, "shca_mr_create_user: %ld",
				     PTR_ERR(pinned));
	}
	pinned->ibmr.pd = f->pd;
	shca_kunit_defer(test, shca_odp_destroy_action, pinned);
	sge = (struct ib_sge){ .addr = plain, .length = 8,
			       .lkey = pinned->key };
	KUNIT_EXPECT_EQ(test, shca_odp_advise1(f, f->pd, SHCA_ADV_PREFETCH, &sge),
			-EINVAL);
	shca_odp_detach_mm();
}

/* The other side of shca_odp_race: the kernel taking the pages back. */
struct shca_odp_zapper {
	struct mm_struct *mm;
	unsigned long uaddr;
	atomic_t stop;
	atomic_t zaps;
	struct completion done;
};

static int shca_odp_zap_fn(void *arg)
{
	struct shca_odp_zapper *z = arg;

	kthread_use_mm(z->mm);
	while (!atomic_read(&z->stop)) {
		if (!do_madvise(z->mm, z->uaddr, SHCA_ODP_LEN, MADV_DONTNEED))
			atomic_inc(&z->zaps);
		cond_resched();
	}
	kthread_unuse_mm(z->mm);
	complete(&z->done);
	return 0;
}

/*
 * Pass: while another thread drops the pages again and again
 * (MADV_DONTNEED, the MMU notifier), writes and reads through the ODP MR
 * all succeed, and every byte read back is either the value just written
 * or zero (the page was dropped in between) - never the value of an
 * earlier round, which only a page used after its invalidation could
 * hold.
 */
static void shca_odp_race(struct kunit *test)
{
	struct shca_odp_fix *x = test->priv;
	struct shca_odp_zapper *z;
	struct task_struct *task;
	struct shca_mem_target t;
	u32 round, stale = 0, errs = 0, i;
	struct shca_mr *mr;
	u8 *out;

	out = kunit_kmalloc(test, SHCA_ODP_LEN, GFP_KERNEL);
	z = kunit_kzalloc(test, sizeof(*z), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, z);
	mr = shca_odp_mr(test, x->uaddr, SHCA_ODP_LEN, x->uaddr, SHCA_ODP_RW);
	z->mm = current->mm;
	z->uaddr = x->uaddr;
	init_completion(&z->done);
	mmgrab(z->mm);
	task = kthread_run(shca_odp_zap_fn, z, "shcak_odp_zap");
	if (IS_ERR(task)) {
		mmdrop(z->mm);
		KUNIT_FAIL_AND_ABORT(test, "kthread_run: %ld", PTR_ERR(task));
	}

	for (round = 0; round < 2000; round++) {
		u8 v = round % 250 + 1;

		memset(x->buf, v, SHCA_ODP_LEN);
		t = shca_odp_target(x->f->pd, mr->key, x->uaddr,
				    IB_ACCESS_REMOTE_WRITE);
		if (shca_mr_copy(x->f->sdev, &t, x->buf, SHCA_ODP_LEN,
				 SHCA_COPY_TO_MR))
			errs++;
		t.access = IB_ACCESS_REMOTE_READ;
		if (shca_mr_copy(x->f->sdev, &t, out, SHCA_ODP_LEN,
				 SHCA_COPY_FROM_MR))
			errs++;
		for (i = 0; i < SHCA_ODP_LEN; i++)
			if (out[i] != v && out[i])
				stale++;
		if (round % 64 == 0)
			cond_resched();
	}
	atomic_set(&z->stop, 1);
	wait_for_completion(&z->done);
	mmdrop(z->mm);
	KUNIT_EXPECT_EQ(test, errs, 0);
	KUNIT_EXPECT_EQ(test, stale, 0);
	KUNIT_EXPECT_GT(test, atomic_read(&z->zaps), 0);
	kunit_info(test, "2000 rounds of 32 KiB, %d invalidations of the range",
		   atomic_read(&z->zaps));
	shca_odp_detach_mm();
}

static struct kunit_case shca_odp_cases[] = {
	KUNIT_CASE(shca_odp_roundtrip),
	KUNIT_CASE(shca_odp_invalidated),
	KUNIT_CASE(shca_odp_unmapped),
	KUNIT_CASE(shca_odp_notifier_first),
	KUNIT_CASE(shca_odp_no_sleep),
	KUNIT_CASE(shca_odp_implicit),
	KUNIT_CASE(shca_odp_implicit_bounded),
	KUNIT_CASE(shca_odp_advise),
	KUNIT_CASE_SLOW(shca_odp_race),
	{}
};

static struct kunit_suite shca_odp_suite = {
	.name = "shca_odp",
	.init = shca_odp_test_init,
	.test_cases = shca_odp_cases,
};

kunit_test_suites(&shca_odp_suite);

#endif /* SHCA_ODP */
