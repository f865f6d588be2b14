// SPDX-License-Identifier: GPL-2.0
/*
 * shca_mr_bench - MR registration throughput of any RDMA devices, side by
 * side, measured from inside the kernel through the ib_core API only (so
 * softhca and rdma_rxe run exactly the same code around their verbs).
 *
 *   insmod shca_mr_bench.ko devices=softhca0,rxe0 iters=2000 pages=16 reps=3
 *
 * For every MR type a device supports, one operation is a full life:
 * allocate (or register), map, deregister. Next to USER reg+dereg, its
 * floor: ib_umem_get() + ib_umem_release() of the same user memory, the
 * pinning every user MR pays whatever the driver; and that floor with
 * what ib_reg_user_mr() and ib_dereg_mr() do around the driver's verbs
 * (the PD's use count, the restrack entry every MR gets: "core"), so
 * that USER minus core is the driver's own share. Every cell (MR type x
 * device) is measured reps times, iters operations each after warm
 * untimed ones on the same device; in every repetition the devices take
 * turns type by type, every other repetition in the reverse order (A B,
 * B A, A B: ABBA), so that a host whose load changes hits both alike.
 *
 * Results go to the kernel log, one record per line, for a script to
 * tabulate (tests/bench/mr-bench.sh: median, spread, ratio):
 *
 *   shca_mr_bench: # CONFIGURATION
 *   shca_mr_bench: ops DEV TYPE REP OPERATIONS NANOSECONDS
 *   shca_mr_bench: err DEV TYPE REP ERRNO   (TYPE and REP "-": the device)
 *   shca_mr_bench: done
 *
 * A type that fails (-EOPNOTSUPP or -EINVAL: the device lacks it) is
 * reported once and not tried again on that device. All the work happens
 * in module init; the module then stays loaded doing nothing, rmmod it
 * afterwards. This is a measurement, not a test: it never fails on a slow
 * result.
 */

#include <linux/ktime.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "shca_restrack.h"

#define BENCH_MAX_DEVS	4

static char *devices = "softhca0,rxe0";
module_param(devices, charp, 0444);
MODULE_PARM_DESC(devices, "comma-separated ib_device names to compare");

static int iters = 2000;
module_param(iters, int, 0444);
MODULE_PARM_DESC(iters, "operations per measurement");

static int pages = 16;
module_param(pages, int, 0444);
MODULE_PARM_DESC(pages, "pages (of PAGE_SIZE) per MR");

static int reps = 3;
module_param(reps, int, 0444);
MODULE_PARM_DESC(reps, "measurements of every cell (devices in ABBA order)");

static int warm = -1;
module_param(warm, int, 0444);
MODULE_PARM_DESC(warm, "untimed operations before every measurement (-1: iters / 10 + 1)");

enum bench_type {
	BENCH_MEM_REG,
	BENCH_SG_GAPS,
	BENCH_INTEGRITY,
	BENCH_USER,
	BENCH_UMEM,
	BENCH_CORE,
	BENCH_DMA,
	BENCH_DM,
	BENCH_NTYPES,
};

/* The TYPE of the records; tests/bench/mr-bench.sh knows them. */
static const char *const bench_keys[BENCH_NTYPES] = {
	[BENCH_MEM_REG] = "mem_reg",
	[BENCH_SG_GAPS] = "sg_gaps",
	[BENCH_INTEGRITY] = "integrity",
	[BENCH_USER] = "user",
	[BENCH_UMEM] = "umem",
	[BENCH_CORE] = "core",
	[BENCH_DMA] = "dma",
	[BENCH_DM] = "dm",
};

/* One device: its objects, and SG lists mapped for it. */
struct bench_ctx {
	const char *name;
	struct ib_device *dev;
	struct ib_pd *pd;
	struct scatterlist *sgl;
	struct scatterlist *meta;
	unsigned long uaddr;
	struct ib_dm *dm;
	struct ib_mr *core_mr;	/* the core cell's stand-in for a driver MR */
	int err;		/* setting the device up failed */
	unsigned long failed;	/* BIT(type): failed once, not tried again */
};

/* Shared by all devices: the pages behind the SG lists. */
static void **bench_bufs;

/* One operation of @type; returns 0, or a negative errno (unsupported). */
static int bench_one(struct bench_ctx *c, enum bench_type type)
{
	struct ib_dm_mr_attr dm_attr = {
		.length = PAGE_SIZE,
		.access_flags = IB_ACCESS_LOCAL_WRITE | IB_ZERO_BASED,
	};
	struct ib_umem *umem;
	struct ib_mr *mr;
	int n;

	if ((type == BENCH_USER || type == BENCH_UMEM || type == BENCH_CORE) &&
	    !c->uaddr)
		return -ENOMEM;
	switch (type) {
	case BENCH_MEM_REG:
	case BENCH_SG_GAPS:
		mr = ib_alloc_mr(c->pd, type == BENCH_MEM_REG ?
				 IB_MR_TYPE_MEM_REG : IB_MR_TYPE_SG_GAPS,
				 pages);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		n = ib_map_mr_sg(mr, c->sgl, pages, NULL, PAGE_SIZE);
		ib_dereg_mr(mr);
		return n == pages ? 0 : -EIO;
	case BENCH_INTEGRITY:
		mr = ib_alloc_mr_integrity(c->pd, pages, 1);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		n = ib_map_mr_sg_pi(mr, c->sgl, pages, NULL, c->meta, 1, NULL,
				    PAGE_SIZE);
		ib_dereg_mr(mr);
		return n;
	case BENCH_USER:
		mr = ib_reg_user_mr(c->pd, c->uaddr, (u64)pages * PAGE_SIZE,
				    c->uaddr, IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		return ib_dereg_mr(mr);
	case BENCH_UMEM:
		umem = ib_umem_get(c->dev, c->uaddr, (size_t)pages * PAGE_SIZE,
				   IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(umem))
			return PTR_ERR(umem);
		ib_umem_release(umem);
		return 0;
	case BENCH_CORE:
		/*
		 * ib_reg_user_mr() with a driver that only pins, then
		 * ib_dereg_mr(): the stand-in MR is tracked between the two
		 * restrack calls, as a registered one would be.
		 */
		umem = ib_umem_get(c->dev, c->uaddr, (size_t)pages * PAGE_SIZE,
				   IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(umem))
			return PTR_ERR(umem);
		mr = c->core_mr;
		mr->device = c->dev;
		mr->type = IB_MR_TYPE_USER;
		mr->pd = c->pd;
		atomic_inc(&c->pd->usecnt);
		mr->iova = c->uaddr;
		mr->length = (u64)pages * PAGE_SIZE;
		rdma_restrack_new(&mr->res, RDMA_RESTRACK_MR);
		rdma_restrack_parent_name(&mr->res, &c->pd->res);
		rdma_restrack_add(&mr->res);
		rdma_restrack_del(&mr->res);
		atomic_dec(&c->pd->usecnt);
		ib_umem_release(umem);
		return 0;
	case BENCH_DMA:
		if (!c->dev->ops.get_dma_mr)
			return -EOPNOTSUPP;
		mr = c->dev->ops.get_dma_mr(c->pd, IB_ACCESS_LOCAL_WRITE);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		return c->dev->ops.dereg_mr(mr, NULL);
	case BENCH_DM:
		if (!c->dm)
			return -EOPNOTSUPP;
		mr = c->dev->ops.reg_dm_mr(c->pd, c->dm, &dm_attr, NULL);
		if (IS_ERR(mr))
			return PTR_ERR(mr);
		return c->dev->ops.dereg_mr(mr, NULL);
	default:
		return -EINVAL;
	}
}

/*
 * One measurement of @type on @c's device: warm untimed operations (which
 * also find out whether the device has the type), then iters timed ones.
 */
static void bench_cell(struct bench_ctx *c, enum bench_type type, int rep,
		       int nwarm)
{
	u64 start, ns;
	int i, err = 0;

	if (c->err || (c->failed & BIT(type)))
		return;
	for (i = 0; i < nwarm && !err; i++)
		err = bench_one(c, type);
	if (err)
		goto fail;
	start = ktime_get_ns();
	for (i = 0; i < iters; i++) {
		err = bench_one(c, type);
		if (err)
			goto fail;
	}
	ns = ktime_get_ns() - start;
	pr_info("shca_mr_bench: ops %s %s %d %d %llu\n", c->name,
		bench_keys[type], rep, iters, ns);
	return;
fail:
	c->failed |= BIT(type);
	pr_info("shca_mr_bench: err %s %s %d %d\n", c->name, bench_keys[type],
		rep, err);
}

static void bench_teardown(struct bench_ctx *c)
{
	int i;

	if (!c->dev)
		return;
	if (c->sgl)
		for (i = 0; i < pages; i++)
			if (sg_dma_address(&c->sgl[i]))
				ib_dma_unmap_page(c->dev,
						  sg_dma_address(&c->sgl[i]),
						  PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (c->meta && sg_dma_address(c->meta))
		ib_dma_unmap_page(c->dev, sg_dma_address(c->meta), PAGE_SIZE,
				  DMA_BIDIRECTIONAL);
	if (c->dm)
		c->dev->ops.dealloc_dm(c->dm, NULL);
	if (c->pd)
		ib_dealloc_pd(c->pd);
	ib_device_put(c->dev);
	c->dev = NULL;
}

/* Everything but the shared pages and user memory; 0 or a negative errno. */
static int bench_setup(struct bench_ctx *c)
{
	struct ib_dm_alloc_attr dm_attr = { .length = PAGE_SIZE };
	u64 dma;
	int i;

	c->dev = ib_device_get_by_name(c->name, RDMA_DRIVER_UNKNOWN);
	if (!c->dev)
		return -ENODEV;
	c->pd = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(c->pd)) {
		int err = PTR_ERR(c->pd);

		c->pd = NULL;
		return err;
	}
	if (c->dev->ops.alloc_dm) {
		c->dm = c->dev->ops.alloc_dm(c->dev, NULL, &dm_attr, NULL);
		if (IS_ERR(c->dm)) {
			c->dm = NULL;
		} else {
			c->dm->device = c->dev;
			c->dm->length = dm_attr.length;
		}
	}
	c->sgl = kcalloc(pages, sizeof(*c->sgl), GFP_KERNEL);
	c->meta = kzalloc(sizeof(*c->meta), GFP_KERNEL);
	c->core_mr = kzalloc(sizeof(*c->core_mr), GFP_KERNEL);
	if (!c->sgl || !c->meta || !c->core_mr)
		return -ENOMEM;
	/* Separate pages: a page list with page-aligned gaps. */
	sg_init_table(c->sgl, pages);
	for (i = 0; i < pages; i++) {
		sg_set_buf(&c->sgl[i], bench_bufs[i], PAGE_SIZE);
		dma = ib_dma_map_page(c->dev, virt_to_page(bench_bufs[i]), 0,
				      PAGE_SIZE, DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(c->dev, dma))
			return -ENOMEM;
		sg_dma_address(&c->sgl[i]) = dma;
		sg_dma_len(&c->sgl[i]) = PAGE_SIZE;
	}
	sg_init_one(c->meta, bench_bufs[pages], 8 * pages);
	dma = ib_dma_map_page(c->dev, virt_to_page(bench_bufs[pages]), 0,
			      PAGE_SIZE, DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(c->dev, dma))
		return -ENOMEM;
	sg_dma_address(c->meta) = dma;
	sg_dma_len(c->meta) = 8 * pages;
	return 0;
}

static int __init shca_mr_bench_init(void)
{
	unsigned long len = (unsigned long)pages * PAGE_SIZE, uaddr;
	int ndev = 0, nwarm, rep, i, k, t, err = 0;
	struct bench_ctx *ctx;
	char *list, *cur, *name;

	if (iters <= 0 || pages <= 0 || pages > 256 || reps <= 0 ||
	    reps > 100 || warm < -1)
		return -EINVAL;
	nwarm = warm < 0 ? iters / 10 + 1 : warm;
	bench_bufs = kcalloc(pages + 1, sizeof(*bench_bufs), GFP_KERNEL);
	ctx = kcalloc(BENCH_MAX_DEVS, sizeof(*ctx), GFP_KERNEL);
	list = kstrdup(devices, GFP_KERNEL);
	if (!bench_bufs || !ctx || !list) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i <= pages; i++) {
		bench_bufs[i] = (void *)get_zeroed_page(GFP_KERNEL);
		if (!bench_bufs[i]) {
			err = -ENOMEM;
			goto out;
		}
	}

	/* User memory in the mm of the process that loads us (insmod). */
	uaddr = vm_mmap(NULL, 0, len, PROT_READ | PROT_WRITE,
			MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (IS_ERR_VALUE(uaddr)) {
		uaddr = 0;
	} else if (clear_user((void __user *)uaddr, len)) {
		vm_munmap(uaddr, len);
		uaddr = 0;
	}

	pr_info("shca_mr_bench: # iters=%d pages=%d page_size=%lu reps=%d warm=%d devices=%s\n",
		iters, pages, PAGE_SIZE, reps, nwarm, devices);
	cur = list;
	while ((name = strsep(&cur, ",")) && ndev < BENCH_MAX_DEVS) {
		if (!*name)
			continue;
		ctx[ndev].name = name;
		ctx[ndev].uaddr = uaddr;
		ctx[ndev].err = bench_setup(&ctx[ndev]);
		if (ctx[ndev].err)
			pr_info("shca_mr_bench: err %s - - %d\n", name,
				ctx[ndev].err);
		ndev++;
	}

	for (rep = 1; rep <= reps; rep++) {
		for (t = 0; t < BENCH_NTYPES; t++) {
			/* ABBA: every other repetition reversed */
			for (k = 0; k < ndev; k++) {
				i = rep % 2 ? k : ndev - 1 - k;
				bench_cell(&ctx[i], t, rep, nwarm);
				cond_resched();
			}
		}
	}
	pr_info("shca_mr_bench: done\n");

	if (uaddr)
		vm_munmap(uaddr, len);
out:
	if (ctx) {
		for (i = 0; i < ndev; i++) {
			bench_teardown(&ctx[i]);
			kfree(ctx[i].sgl);
			kfree(ctx[i].meta);
			kfree(ctx[i].core_mr);
		}
	}
	if (bench_bufs)
		for (i = 0; i <= pages; i++)
			free_page((unsigned long)bench_bufs[i]);
	kfree(bench_bufs);
	kfree(ctx);
	kfree(list);
	return err;
}

static void __exit shca_mr_bench_exit(void)
{
}

module_init(shca_mr_bench_init);
module_exit(shca_mr_bench_exit);

MODULE_DESCRIPTION("MR registration benchmark for RDMA devices (softhca vs rdma_rxe)");
MODULE_LICENSE("GPL");
