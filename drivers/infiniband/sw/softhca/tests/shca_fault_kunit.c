// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites for allocation failures: every creation path of the driver
 * with each of its own allocations failing in turn (shca_fault, through
 * the driver's fault-injection seam), and with every slab allocation on
 * the path failing in turn, whoever makes it (shca_failslab, through the
 * kernel's failslab; the sanitizer configuration only).
 */

#include <linux/fault-inject.h>
#include <linux/mman.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* Pages of the USER MR: its page list is longer than the MR's own storage. */
#define SHCA_FAULT_USER_PAGES	(2 * SHCA_XLAT_INLINE)

static const u8 shca_fault_mac[ETH_ALEN] = {
	0x02, 0x53, 0x48, 0x46, 0x4c, 0x01
};

static bool shca_fault_page_list(u64 nseg, u64 npages)
{
	return false;
}

static int shca_fault_test_init(struct kunit *test)
{
	test->priv = shca_kunit_mr_fix(test, "shcak_flt", shca_fault_mac);
	/*
	 * USER MRs translate by page list (SHCA_FAULT_USER_PAGES pages: more
	 * than an MR holds itself), so the list's allocation is on the path.
	 * Set here, before any allocation is made to fail: activating a stub
	 * allocates.
	 */
	kunit_activate_static_stub(test, shca_umem_use_segs,
				   shca_fault_page_list);
	return 0;
}

/* ------------------------------------------------------------------ */
/* shca_fault: every allocation of every creation path fails in turn   */

static int shca_fault_at;	/* fail the Nth fault point; 0 = none */
static int shca_fault_hits;	/* fault points reached so far */

static bool shca_fault_stub(void)
{
	return ++shca_fault_hits == shca_fault_at;
}

/* What a creation path leaves behind, to compare after a failure. */
struct shca_fault_snap {
	u32 mrs;
	size_t dm_avail;
	int pds;
	int cqs;
	int qps;
	int srqs;
};

static void shca_fault_snap(struct shca_mr_fix *f, struct shca_fault_snap *s)
{
	s->mrs = shca_kunit_count_mrs(f->sdev);
	s->dm_avail = gen_pool_avail(f->sdev->dm_pool);
	s->pds = atomic_read(&f->sdev->num_pds);
	s->cqs = atomic_read(&f->sdev->num_cqs);
	s->qps = atomic_read(&f->sdev->num_qps);
	s->srqs = atomic_read(&f->sdev->num_srqs);
}

/* Nothing was left behind since @before; @n names the failed allocation. */
static void shca_fault_expect_same(struct kunit *test, struct shca_mr_fix *f,
				   const struct shca_fault_snap *before, int n)
{
	struct shca_fault_snap after;

	shca_fault_snap(f, &after);
	KUNIT_EXPECT_EQ_MSG(test, after.mrs, before->mrs,
			    "allocation %d leaked an MR", n);
	KUNIT_EXPECT_EQ_MSG(test, after.dm_avail, before->dm_avail,
			    "allocation %d leaked DM", n);
	KUNIT_EXPECT_EQ_MSG(test, after.pds, before->pds,
			    "allocation %d leaked a PD", n);
	KUNIT_EXPECT_EQ_MSG(test, after.cqs, before->cqs,
			    "allocation %d leaked a CQ", n);
	KUNIT_EXPECT_EQ_MSG(test, after.qps, before->qps,
			    "allocation %d leaked a QP", n);
	KUNIT_EXPECT_EQ_MSG(test, after.srqs, before->srqs,
			    "allocation %d leaked an SRQ", n);
}

struct shca_fault_case {
	const char *name;
	/* Create one object; 0 or a negative errno. */
	int (*create)(struct kunit *test, struct shca_mr_fix *f, void **obj);
	void (*destroy)(struct shca_mr_fix *f, void *obj);
	/*
	 * Optional: the failed allocation was a client's of the core, which
	 * tolerates it (the object was created without that client's part).
	 */
	bool (*absorbed)(struct shca_mr_fix *f, void *obj);
};

static int shca_fault_mem_reg(struct kunit *test, struct shca_mr_fix *f,
			      void **obj)
{
	struct ib_mr *mr = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 64);

	*obj = mr;
	return PTR_ERR_OR_ZERO(mr);
}

static int shca_fault_sg_gaps(struct kunit *test, struct shca_mr_fix *f,
			      void **obj)
{
	struct ib_mr *mr = ib_alloc_mr(f->pd, IB_MR_TYPE_SG_GAPS, 64);

	*obj = mr;
	return PTR_ERR_OR_ZERO(mr);
}

static int shca_fault_integrity(struct kunit *test, struct shca_mr_fix *f,
				void **obj)
{
	struct ib_mr *mr = ib_alloc_mr_integrity(f->pd, 16, 4);

	*obj = mr;
	return PTR_ERR_OR_ZERO(mr);
}

static int shca_fault_user(struct kunit *test, struct shca_mr_fix *f,
			   void **obj)
{
	const size_t len = SHCA_FAULT_USER_PAGES * PAGE_SIZE;
	struct ib_mr *mr;

	/*
	 * Mapped once per test (kunit unmaps it at the end): a failed
	 * allocation inside kunit_vm_mmap() would leak KUnit's resource.
	 */
	if (!f->uaddr)
		f->uaddr = kunit_vm_mmap(test, NULL, 0, len,
					 PROT_READ | PROT_WRITE,
					 MAP_ANONYMOUS | MAP_PRIVATE, 0);
	if (!f->uaddr)
		return -EFAULT;
	mr = ib_reg_user_mr(f->pd, f->uaddr, len, f->uaddr, SHCA_RW);
	*obj = mr;
	return PTR_ERR_OR_ZERO(mr);
}

static void shca_fault_dereg(struct shca_mr_fix *f, void *obj)
{
	ib_dereg_mr(obj);
}

/*
 * A kernel PD with the unsafe global rkey: the core allocates it, the
 * driver makes its DMA MR (without the flag a kernel PD has none: local
 * access uses the reserved lkey).
 */
static int shca_fault_pd(struct kunit *test, struct shca_mr_fix *f,
			 void **obj)
{
	struct ib_pd *pd = ib_alloc_pd(f->ibdev, IB_PD_UNSAFE_GLOBAL_RKEY);

	*obj = pd;
	return PTR_ERR_OR_ZERO(pd);
}

static void shca_fault_dealloc_pd(struct shca_mr_fix *f, void *obj)
{
	ib_dealloc_pd(obj);
}

/* A DM allocation and an MR over it. */
struct shca_fault_dm {
	struct ib_dm *dm;
	struct ib_mr *mr;
};

static int shca_fault_dm(struct kunit *test, struct shca_mr_fix *f,
			 void **obj)
{
	struct ib_dm_alloc_attr attr = { .length = 4096, .alignment = 12 };
	struct ib_dm_mr_attr mattr = { .length = 4096,
				       .access_flags = IB_ZERO_BASED };
	struct shca_fault_dm *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	d->dm = f->ibdev->ops.alloc_dm(f->ibdev, NULL, &attr, NULL);
	if (IS_ERR(d->dm)) {
		int err = PTR_ERR(d->dm);

		kfree(d);
		return err;
	}
	d->dm->device = f->ibdev;
	d->dm->length = attr.length;
	d->mr = f->ibdev->ops.reg_dm_mr(f->pd, d->dm, &mattr, NULL);
	if (IS_ERR(d->mr)) {
		int err = PTR_ERR(d->mr);

		f->ibdev->ops.dealloc_dm(d->dm, NULL);
		kfree(d);
		return err;
	}
	*obj = d;
	return 0;
}

static void shca_fault_free_dm(struct shca_mr_fix *f, void *obj)
{
	struct shca_fault_dm *d = obj;

	f->ibdev->ops.dereg_mr(d->mr, NULL);
	f->ibdev->ops.dealloc_dm(d->dm, NULL);
	kfree(d);
}

static int shca_fault_cq(struct kunit *test, struct shca_mr_fix *f,
			 void **obj)
{
	struct ib_cq *cq = ib_alloc_cq(f->ibdev, NULL, 64, 0, IB_POLL_DIRECT);

	*obj = cq;
	return PTR_ERR_OR_ZERO(cq);
}

static void shca_fault_free_cq(struct shca_mr_fix *f, void *obj)
{
	ib_free_cq(obj);
}

static int shca_fault_srq(struct kunit *test, struct shca_mr_fix *f,
			  void **obj)
{
	struct ib_srq_init_attr init = {
		.attr = { .max_wr = 64, .max_sge = 4, .srq_limit = 8 },
		.srq_type = IB_SRQT_BASIC,
	};
	struct ib_srq *srq = ib_create_srq(f->pd, &init);

	*obj = srq;
	return PTR_ERR_OR_ZERO(srq);
}

static void shca_fault_destroy_srq(struct shca_mr_fix *f, void *obj)
{
	ib_destroy_srq(obj);
}

/* A CQ and an RC QP using it. */
struct shca_fault_qp {
	struct ib_cq *cq;
	struct ib_qp *qp;
};

static int shca_fault_qp(struct kunit *test, struct shca_mr_fix *f,
			 void **obj)
{
	struct ib_qp_init_attr init = {
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};
	struct shca_fault_qp *q = kzalloc(sizeof(*q), GFP_KERNEL);
	int err;

	if (!q)
		return -ENOMEM;
	q->cq = ib_alloc_cq(f->ibdev, NULL, 64, 0, IB_POLL_DIRECT);
	if (IS_ERR(q->cq)) {
		err = PTR_ERR(q->cq);
		goto err_free;
	}
	init.send_cq = q->cq;
	init.recv_cq = q->cq;
	q->qp = ib_create_qp(f->pd, &init);
	if (IS_ERR(q->qp)) {
		err = PTR_ERR(q->qp);
		goto err_cq;
	}
	*obj = q;
	return 0;

err_cq:
	ib_free_cq(q->cq);
err_free:
	kfree(q);
	return err;
}

static void shca_fault_destroy_qp(struct shca_mr_fix *f, void *obj)
{
	struct shca_fault_qp *q = obj;

	ib_destroy_qp(q->qp);
	ib_free_cq(q->cq);
	kfree(q);
}

/* A whole device, as "rdma link add" makes it. */
static int shca_fault_device(struct kunit *test, struct shca_mr_fix *f,
			     void **obj)
{
	static const u8 mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x46, 0x4c, 0x54 };

	if (!f->ndev2)
		f->ndev2 = shca_kunit_netdev(test, mac);
	*obj = f->ndev2;
	return shca_newlink("shcak_fault", f->ndev2);
}

static void shca_fault_unlink(struct shca_mr_fix *f, void *obj)
{
	struct ib_device *ibdev = ib_device_get_by_name("shcak_fault",
							RDMA_DRIVER_UNKNOWN);

	if (ibdev)
		ib_unregister_device_and_put(ibdev);
}

/*
 * The core's MAD layer opens the new device's port after registration:
 * when one of its objects (PD, CQ, QP1) fails, it logs "Couldn't open
 * port" and the device lives on without MADs on that port, with nothing
 * of the MAD layer's left in it.
 */
static bool shca_fault_mad_absorbed(struct shca_mr_fix *f, void *obj)
{
	struct ib_device *ibdev = ib_device_get_by_name("shcak_fault",
							RDMA_DRIVER_UNKNOWN);
	struct shca_dev *sdev;
	bool gone;

	if (!ibdev)
		return false;
	sdev = to_shca_dev(ibdev);
	gone = !atomic_read(&sdev->num_qps) && !atomic_read(&sdev->num_pds) &&
	       !atomic_read(&sdev->num_cqs) && !shca_kunit_count_mrs(sdev);
	ib_device_put(ibdev);
	return gone;
}

static const struct shca_fault_case shca_fault_cases[] = {
	{ .name = "MEM_REG alloc_mr", .create = shca_fault_mem_reg,
	  .destroy = shca_fault_dereg },
	{ .name = "SG_GAPS alloc_mr", .create = shca_fault_sg_gaps,
	  .destroy = shca_fault_dereg },
	{ .name = "INTEGRITY alloc_mr_integrity", .create = shca_fault_integrity,
	  .destroy = shca_fault_dereg },
	{ .name = "USER reg_user_mr", .create = shca_fault_user,
	  .destroy = shca_fault_dereg },
	{ .name = "PD + DMA MR (global rkey)", .create = shca_fault_pd,
	  .destroy = shca_fault_dealloc_pd },
	{ .name = "DM alloc_dm + reg_dm_mr", .create = shca_fault_dm,
	  .destroy = shca_fault_free_dm },
	{ .name = "CQ create_cq", .create = shca_fault_cq,
	  .destroy = shca_fault_free_cq },
	{ .name = "CQ + RC QP create_qp", .create = shca_fault_qp,
	  .destroy = shca_fault_destroy_qp },
	{ .name = "SRQ create_srq", .create = shca_fault_srq,
	  .destroy = shca_fault_destroy_srq },
	{ .name = "device newlink", .create = shca_fault_device,
	  .destroy = shca_fault_unlink, .absorbed = shca_fault_mad_absorbed },
};

static void shca_fault_case_desc(const struct shca_fault_case *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_fault, shca_fault_cases, shca_fault_case_desc);

/*
 * Pass: for N = 1, 2, ... the Nth allocation the driver makes on the path
 * fails: the call returns -ENOMEM and leaves nothing behind (no MR key,
 * no DM arena space, no PD count, no device, the netdev free again), until
 * an N beyond the path's last allocation lets it succeed, after which the
 * object works and is destroyed normally.
 */
static void shca_fault_inject(struct kunit *test)
{
	const struct shca_fault_case *c = test->param_value;
	struct shca_mr_fix *f = test->priv;
	struct shca_fault_snap before;
	void *obj = NULL;
	int n, err, points = 0, absorbed = 0;

	shca_fault_snap(f, &before);
	kunit_activate_static_stub(test, shca_inject_fault, shca_fault_stub);
	for (n = 1; n < 64; n++) {
		shca_fault_hits = 0;
		shca_fault_at = n;
		err = c->create(test, f, &obj);
		if (shca_fault_hits < n) {
			/* The path has fewer allocations: it ran clean. */
			KUNIT_ASSERT_EQ(test, err, 0);
			points = shca_fault_hits;
			break;
		}
		if (!err && c->absorbed && c->absorbed(f, obj)) {
			absorbed++;
			c->destroy(f, obj);
			shca_fault_expect_same(test, f, &before, n);
			continue;
		}
		KUNIT_EXPECT_EQ_MSG(test, err, -ENOMEM, "allocation %d", n);
		if (!err) {
			c->destroy(f, obj);
			continue;
		}
		shca_fault_expect_same(test, f, &before, n);
		KUNIT_EXPECT_TRUE_MSG(test, shca_kunit_wait_gone("shcak_fault"),
				      "allocation %d left a device", n);
	}
	shca_fault_at = 0;
	kunit_deactivate_static_stub(test, shca_inject_fault);
	KUNIT_ASSERT_GT_MSG(test, points, 0, "no fault point on the path");
	kunit_info(test, "%d allocations failed in turn, each cleanly (%d of them absorbed by the core's clients)",
		   points, absorbed);
	c->destroy(f, obj);
	shca_fault_expect_same(test, f, &before, 0);
}

static struct kunit_case shca_fault_test_cases[] = {
	KUNIT_CASE_PARAM(shca_fault_inject, shca_fault_gen_params),
	{}
};

static struct kunit_suite shca_fault_suite = {
	.name = "shca_fault",
	.init = shca_fault_test_init,
	.test_cases = shca_fault_test_cases,
};

/* ------------------------------------------------------------------ */
/* shca_failslab: every slab allocation of the path, the core's too     */

#if IS_ENABLED(CONFIG_FAILSLAB)
static void shca_failslab_restore(void *file)
{
	current->fail_nth = 0;
}

/*
 * Pass, as for shca_fault, but with the kernel's failslab and the task's
 * fail-nth counter: the Nth slab allocation made in this thread fails,
 * whoever makes it (softhca, the RDMA core, the xarray, KUnit's helpers),
 * for N = 1, 2, ... until the path runs clean. Each failure returns an
 * error and leaves nothing behind; the next attempt succeeds. Device
 * creation is left to shca_fault: a failure deep in driver-core and sysfs
 * registration is the driver core's business, and it warns.
 */
static void shca_failslab_inject(struct kunit *test)
{
	const struct shca_fault_case *c = test->param_value;
	struct shca_mr_fix *f = test->priv;
	struct shca_fault_snap before;
	int n, err, points = 0, nomem = 0, absorbed = 0;
	struct file *file;
	void *obj = NULL;

	if (c->create == shca_fault_device)
		kunit_skip(test, "device creation: see shca_fault");

	/* failslab skips sleeping allocations unless told otherwise. */
	file = shca_kunit_debugfs_open(test, "failslab/ignore-gfp-wait");
	shca_kunit_file_write(test, file, "N");
	file = shca_kunit_debugfs_open(test, "failslab/verbose");
	shca_kunit_file_write(test, file, "0");
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_failslab_restore,
							NULL), 0);

	/* One clean run first: KUnit's own lazy set-up stays out of it. */
	KUNIT_ASSERT_EQ(test, c->create(test, f, &obj), 0);
	c->destroy(f, obj);

	shca_fault_snap(f, &before);
	for (n = 1; n < 400; n++) {
		unsigned int left;

		current->fail_nth = n;
		err = c->create(test, f, &obj);
		left = current->fail_nth;
		current->fail_nth = 0;
		if (left) {
			/* Fewer than n allocations: it ran clean. */
			KUNIT_ASSERT_EQ_MSG(test, err, 0, "clean run");
			points = n - 1;
			break;
		}
		if (!err) {
			/* A fallback absorbed the failure (kvmalloc). */
			absorbed++;
			c->destroy(f, obj);
			continue;
		}
		if (err == -ENOMEM)
			nomem++;
		else
			kunit_info(test, "allocation %d: %d", n, err);
		shca_fault_expect_same(test, f, &before, n);
	}
	KUNIT_ASSERT_GT_MSG(test, points, 0, "no slab allocation on the path");
	kunit_info(test, "%d slab allocations failed in turn: %d -ENOMEM, %d absorbed by a fallback, %d other errors; each cleanly",
		   points, nomem, absorbed, points - nomem - absorbed);
	c->destroy(f, obj);
	shca_fault_expect_same(test, f, &before, 0);
}
#else
static void shca_failslab_inject(struct kunit *test)
{
	kunit_skip(test, "CONFIG_FAILSLAB is off");
}
#endif

static struct kunit_case shca_failslab_test_cases[] = {
	KUNIT_CASE_PARAM(shca_failslab_inject, shca_fault_gen_params),
	{}
};

static struct kunit_suite shca_failslab_suite = {
	.name = "shca_failslab",
	.init = shca_fault_test_init,
	.test_cases = shca_failslab_test_cases,
};

kunit_test_suites(&shca_fault_suite, &shca_failslab_suite);
