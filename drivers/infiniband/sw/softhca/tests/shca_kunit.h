/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca KUnit fixtures shared by the suites: test netdevs and devices
 * whose teardown is registered with the test, so a failing assertion
 * never leaks them.
 */
#ifndef SHCA_KUNIT_H
#define SHCA_KUNIT_H

#include <kunit/resource.h>
#include <kunit/test.h>

#include "../shca_verbs.h"

#define SHCA_RW (IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
		 IB_ACCESS_REMOTE_WRITE)

/**
 * struct shca_mr_fix - fixture of the MR suites: a device and two PDs
 * @ibdev: the device, on a test netdev
 * @sdev: the same, as softhca sees it
 * @pd: a PD
 * @pd2: another PD of the same device
 * @ndev2: a second netdev, made on demand
 * @uaddr: user memory, mapped on demand
 */
struct shca_mr_fix {
	struct ib_device *ibdev;
	struct shca_dev *sdev;
	struct ib_pd *pd;
	struct ib_pd *pd2;
	struct net_device *ndev2;	/* made on demand */
	unsigned long uaddr;		/* user memory, mapped on demand */
};

void shca_kunit_defer(struct kunit *test, kunit_action_t *action, void *ptr);
void shca_kunit_dealloc_pd(void *pd);
void shca_kunit_dereg_mr(void *mr);
void shca_kunit_free_cq(void *cq);
void shca_kunit_destroy_qp(void *qp);
struct ib_pd *shca_kunit_pd(struct kunit *test, struct ib_device *ibdev);
struct shca_mr_fix *shca_kunit_mr_fix(struct kunit *test, const char *name,
				      const u8 *mac);
u32 shca_kunit_count_mrs(struct shca_dev *sdev);

/* The MR suites (shca_mr_*_kunit.c, shca_xlat_kunit.c, shca_mem_kunit.c) */
int shca_kunit_mr_init(struct kunit *test);
struct ib_mr *shca_kunit_track_mr(struct kunit *test, struct ib_mr *mr);
void shca_kunit_untrack_dereg(struct kunit *test, struct ib_mr *mr);
void *shca_kunit_block(struct kunit *test, size_t size);
u8 *shca_kunit_vbuf(struct kunit *test, size_t size);
u8 shca_kunit_pattern(unsigned int block, size_t off, u8 salt);
void shca_kunit_fill(u8 *p, unsigned int block, size_t len, u8 salt);
struct shca_mem_target shca_kunit_target(struct ib_pd *pd, u32 key, u64 iova,
					 int access);
int shca_kunit_reg(struct ib_mr *mr, int access);
void shca_kunit_sig_attrs_t10(struct ib_sig_attrs *a);
void shca_kunit_sig_attrs_plain(struct ib_sig_attrs *a);
struct ib_mr *shca_kunit_dma_mr(struct kunit *test, struct ib_pd *pd,
				int access);
struct ib_mr *shca_kunit_pi_mr(struct kunit *test, struct shca_mr_fix *f,
			       u8 **data, u8 **meta, u32 *dlen, u32 *mlen);

struct net_device *shca_kunit_netdev(struct kunit *test, const u8 *mac);
struct net_device *shca_kunit_netdev_in(struct kunit *test, const u8 *mac,
					struct net *net);
void shca_kunit_netdev_remove(struct kunit *test, struct net_device *ndev);
struct ib_device *shca_kunit_device(struct kunit *test, const char *name,
				    struct net_device *ndev);
bool shca_kunit_wait_gone(const char *name);
struct file *shca_kunit_debugfs_open(struct kunit *test, const char *path);
void shca_kunit_file_write(struct kunit *test, struct file *file,
			   const char *str);

#endif /* SHCA_KUNIT_H */
