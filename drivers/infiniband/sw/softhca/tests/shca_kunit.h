/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca KUnit fixtures shared by the suites: test netdevs and devices
 * whose teardown is registered with the test, so a failing assertion
 * never leaks them.
 */
#ifndef SHCA_KUNIT_H
#define SHCA_KUNIT_H

#include <kunit/test.h>

#include "../shca_verbs.h"

struct net_device *shca_kunit_netdev(struct kunit *test, const u8 *mac);
void shca_kunit_netdev_remove(struct kunit *test, struct net_device *ndev);
struct ib_device *shca_kunit_device(struct kunit *test, const char *name,
				    struct net_device *ndev);
bool shca_kunit_wait_gone(const char *name);
struct file *shca_kunit_debugfs_open(struct kunit *test, const char *path);
void shca_kunit_file_write(struct kunit *test, struct file *file,
			   const char *str);

#endif /* SHCA_KUNIT_H */
