// SPDX-License-Identifier: GPL-2.0
/*
 * shca_mr_bench - MR registration throughput of any RDMA devices, side by
 * side, measured from inside the kernel through the ib_core API only (so
 * softhca and rdma_rxe run exactly the same code around their verbs).
 *
 *   insmod shca_mr_bench.ko devices=softhca0,rxe0 iters=2000 pages=16
 *
 * For every MR type a device supports, one operation is a full life:
 * allocate (or register), map, deregister. The module prints one table
 * to the kernel log (lines start with "shca_mr_bench:") and stays loaded
 * doing nothing; rmmod it afterwards. This is a measurement, not a test:
 * it never fails on a slow result.
 */

#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_verbs.h>

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

enum bench_type {
	BENCH_MEM_REG,
	BENCH_SG_GAPS,
	BENCH_INTEGRITY,
	BENCH_USER,
	BENCH_DMA,
	BENCH_DM,
	BENCH_NTYPES,
};

static const char *const bench_names[BENCH_NTYPES] = {
	[BENCH_MEM_REG] = "MEM_REG alloc+map+dereg",
	[BENCH_SG_GAPS] = "SG_GAPS alloc+map+dereg",
	[BENCH_INTEGRITY] = "INTEGRITY alloc+map_pi+dereg",
	[BENCH_USER] = "USER reg+dereg",
	[BENCH_DMA] = "DMA get_dma_mr+dereg",
	[BENCH_DM] = "DM reg_dm_mr+dereg",
};

struct bench_ctx {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct scatterlist *sgl;
	struct scatterlist *meta;
	void **bufs;
	unsigned long uaddr;
	struct ib_dm *dm;
};

/* One operation of @type; returns 0, or a negative errno (unsupported). */
static int bench_one(struct bench_ctx *c, enum bench_type type)
{
	struct ib_dm_mr_attr dm_attr = {
		.length = PAGE_SIZE,
		.access_flags = IB_ACCESS_LOCAL_WRITE | IB_ZERO_BASED,
	};
	struct ib_mr *mr;
	int n;

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

/* Operations per second, or a negative errno. */
static s64 bench_rate(struct bench_ctx *c, enum bench_type type)
{
	u64 start, ns;
	int i, err;

	err = bench_one(c, type);	/* warm up, and probe support */
	if (err)
		return err;
	start = ktime_get_ns();
	for (i = 0; i < iters; i++) {
		err = bench_one(c, type);
		if (err)
			return err;
	}
	ns = ktime_get_ns() - start;
	return div64_u64((u64)iters * NSEC_PER_SEC, ns ?: 1);
}

static int bench_setup(struct bench_ctx *c, const char *name)
{
	struct ib_dm_alloc_attr dm_attr = { .length = PAGE_SIZE };
	int i;

	c->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!c->dev)
		return -ENODEV;
	c->pd = ib_alloc_pd(c->dev, 0);
	if (IS_ERR(c->pd)) {
		ib_device_put(c->dev);
		return PTR_ERR(c->pd);
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
	/* The SG lists and user memory are shared by all devices. */
	for (i = 0; i < pages; i++)
		sg_dma_address(&c->sgl[i]) = ib_dma_map_page(c->dev,
				virt_to_page(c->bufs[i]), 0, PAGE_SIZE,
				DMA_BIDIRECTIONAL);
	sg_dma_address(c->meta) = ib_dma_map_page(c->dev,
				virt_to_page(c->bufs[pages]), 0, PAGE_SIZE,
				DMA_BIDIRECTIONAL);
	return 0;
}

static void bench_teardown(struct bench_ctx *c)
{
	if (c->dm)
		c->dev->ops.dealloc_dm(c->dm, NULL);
	ib_dealloc_pd(c->pd);
	ib_device_put(c->dev);
}

static int __init shca_mr_bench_init(void)
{
	char *list, *cur, *name, *names[BENCH_MAX_DEVS];
	s64 rate[BENCH_MAX_DEVS][BENCH_NTYPES];
	struct bench_ctx c = {};
	int ndev = 0, i, t, err = 0;
	char line[160];
	int len;

	if (iters <= 0 || pages <= 0 || pages > 256)
		return -EINVAL;
	c.bufs = kcalloc(pages + 1, sizeof(*c.bufs), GFP_KERNEL);
	c.sgl = kcalloc(pages, sizeof(*c.sgl), GFP_KERNEL);
	c.meta = kzalloc(sizeof(*c.meta), GFP_KERNEL);
	list = kstrdup(devices, GFP_KERNEL);
	if (!c.bufs || !c.sgl || !c.meta || !list) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i <= pages; i++) {
		c.bufs[i] = (void *)get_zeroed_page(GFP_KERNEL);
		if (!c.bufs[i]) {
			err = -ENOMEM;
			goto out;
		}
	}
	/* Separate pages: a page list with page-aligned gaps. */
	sg_init_table(c.sgl, pages);
	for (i = 0; i < pages; i++) {
		sg_set_buf(&c.sgl[i], c.bufs[i], PAGE_SIZE);
		sg_dma_len(&c.sgl[i]) = PAGE_SIZE;
	}
	sg_init_one(c.meta, c.bufs[pages], 8 * pages);
	sg_dma_len(c.meta) = 8 * pages;

	/* User memory in the mm of the process that loads us (insmod). */
	c.uaddr = vm_mmap(NULL, 0, (unsigned long)pages * PAGE_SIZE,
			  PROT_READ | PROT_WRITE, MAP_ANONYMOUS | MAP_PRIVATE,
			  0);
	if (IS_ERR_VALUE(c.uaddr) ||
	    clear_user((void __user *)c.uaddr, (unsigned long)pages * PAGE_SIZE))
		c.uaddr = 0;

	cur = list;
	while ((name = strsep(&cur, ",")) && ndev < BENCH_MAX_DEVS) {
		if (!*name)
			continue;
		names[ndev] = name;
		err = bench_setup(&c, name);
		for (t = 0; t < BENCH_NTYPES; t++) {
			if (err)
				rate[ndev][t] = err;
			else if (t == BENCH_USER && !c.uaddr)
				rate[ndev][t] = -ENOMEM;
			else
				rate[ndev][t] = bench_rate(&c, t);
		}
		if (!err)
			bench_teardown(&c);
		c.dev = NULL;
		c.dm = NULL;
		ndev++;
	}
	err = 0;

	pr_info("shca_mr_bench: MR operations per second, %d x %lu-byte pages per MR, %d operations each\n",
		pages, PAGE_SIZE, iters);
	len = scnprintf(line, sizeof(line), "%-30s", "operation");
	for (i = 0; i < ndev; i++)
		len += scnprintf(line + len, sizeof(line) - len, " %14s",
				 names[i]);
	pr_info("shca_mr_bench: %s\n", line);
	for (t = 0; t < BENCH_NTYPES; t++) {
		len = scnprintf(line, sizeof(line), "%-30s", bench_names[t]);
		for (i = 0; i < ndev; i++) {
			if (rate[i][t] >= 0)
				len += scnprintf(line + len, sizeof(line) - len,
						 " %14lld", rate[i][t]);
			else
				len += scnprintf(line + len, sizeof(line) - len,
						 " %14s", rate[i][t] == -ENODEV ?
						 "no device" : "n/a");
		}
		pr_info("shca_mr_bench: %s\n", line);
	}
	pr_info("shca_mr_bench: done\n");

	if (c.uaddr)
		vm_munmap(c.uaddr, (unsigned long)pages * PAGE_SIZE);
out:
	if (c.bufs)
		for (i = 0; i <= pages; i++)
			free_page((unsigned long)c.bufs[i]);
	kfree(c.bufs);
	kfree(c.sgl);
	kfree(c.meta);
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
