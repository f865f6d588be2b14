// SPDX-License-Identifier: GPL-2.0
/*
 * shca_umem_bench - the floor of user memory registration: what
 * ib_umem_get() + ib_umem_release() alone cost for a buffer, timed in the
 * kernel in the context of the process that owns the buffer. Every user
 * MR of every driver pays them (pinning the pages, building the
 * scatterlist, DMA-mapping it), so ibv_reg_mr() + ibv_dereg_mr() of the
 * same buffer cannot be faster; tests/bench/shca_reg_bench puts the two
 * side by side.
 *
 *   insmod shca_umem_bench.ko
 *   ioctl(open("/dev/shca_umem_bench"), SHCA_UMEM_BENCH_TIME, &arg)
 *
 * (struct shca_umem_bench_arg in shca_umem_bench.h.) The misc device is
 * root's only (mode 0600). A benchmark helper, not part of the driver.
 */

#include <linux/fs.h>
#include <linux/ktime.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "shca_umem_bench.h"

#define UMEM_BENCH_ACCESS	(IB_ACCESS_LOCAL_WRITE | \
				 IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | \
				 IB_ACCESS_REMOTE_ATOMIC)

static_assert(SHCA_UMEM_BENCH_NAME_MAX == IB_DEVICE_NAME_MAX);

/* @count pairs on @dev; the sum of their times in *@ns, or an errno. */
static int umem_bench_time(struct ib_device *dev,
			   const struct shca_umem_bench_arg *a, u64 *ns)
{
	struct ib_umem *umem;
	u64 t0, sum = 0;
	u32 i;

	for (i = 0; i < a->count; i++) {
		if (fatal_signal_pending(current))
			return -EINTR;
		t0 = ktime_get_ns();
		umem = ib_umem_get(dev, a->addr, a->length, a->access);
		if (IS_ERR(umem))
			return PTR_ERR(umem);
		ib_umem_release(umem);
		sum += ktime_get_ns() - t0;
		cond_resched();
	}
	*ns = sum;
	return 0;
}

static long umem_bench_ioctl(struct file *file, unsigned int cmd,
			     unsigned long arg)
{
	struct shca_umem_bench_arg __user *uarg = (void __user *)arg;
	struct shca_umem_bench_arg a;
	struct ib_device *dev;
	u64 ns;
	int err;

	if (cmd != SHCA_UMEM_BENCH_TIME)
		return -ENOTTY;
	if (copy_from_user(&a, uarg, sizeof(a)))
		return -EFAULT;
	if (!a.length || !a.count || a.count > SHCA_UMEM_BENCH_MAX_COUNT ||
	    (a.access & ~UMEM_BENCH_ACCESS))
		return -EINVAL;
	if (strnlen(a.dev, sizeof(a.dev)) == sizeof(a.dev))
		return -EINVAL;
	dev = ib_device_get_by_name(a.dev, RDMA_DRIVER_UNKNOWN);
	if (!dev)
		return -ENODEV;
	err = umem_bench_time(dev, &a, &ns);
	ib_device_put(dev);
	if (err)
		return err;
	if (put_user(ns, &uarg->ns))
		return -EFAULT;
	return 0;
}

static const struct file_operations umem_bench_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = umem_bench_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};

static struct miscdevice umem_bench_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = SHCA_UMEM_BENCH_DEV,
	.fops = &umem_bench_fops,
	.mode = 0600,
};

static int __init shca_umem_bench_init(void)
{
	return misc_register(&umem_bench_misc);
}

static void __exit shca_umem_bench_exit(void)
{
	misc_deregister(&umem_bench_misc);
}

module_init(shca_umem_bench_init);
module_exit(shca_umem_bench_exit);

MODULE_DESCRIPTION("ib_umem_get + ib_umem_release timing for the user MR benchmark (its floor)");
MODULE_LICENSE("GPL");
