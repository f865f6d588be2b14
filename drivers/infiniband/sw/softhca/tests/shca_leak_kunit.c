// SPDX-License-Identifier: GPL-2.0
/*
 * shca_leak: kmemleak after every other softhca suite (this file links
 * last, so its suite runs last).
 *
 * kmemleak's own first scan comes a minute after boot, long after KUnit
 * is done, and debugfs is not mounted while the suites run. The suite
 * mounts a private instance of debugfs, asks kmemleak for a scan through
 * its control file and fails on every unreferenced object that a softhca
 * test thread allocated (directly or through the driver and the RDMA
 * core) or whose backtrace names softhca. Objects leaked by other parts
 * of the kernel (boot, other tasks) are listed and ignored.
 *
 * Skipped unless the kernel has CONFIG_DEBUG_KMEMLEAK (the sanitizer
 * tier's configuration).
 */

#include <linux/delay.h>
#include <linux/mman.h>
#include <linux/mm_types.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <kunit/test.h>

#include "shca_kunit.h"

#define SHCA_LEAK_REPORT_MAX	SZ_256K

/*
 * Scan, then read the report: one block per object, each starting with
 * "unreferenced object". Fail on those allocated through softhca.
 */
static void shca_leak_scan(struct kunit *test)
{
	char *report, *block, *next;
	unsigned int ours = 0, others = 0, kunit_mm = 0;
	char mm_tag[32];
	unsigned long ubuf;
	struct file *file;
	loff_t pos = 0;
	ssize_t n, len = 0;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		kunit_skip(test, "CONFIG_DEBUG_KMEMLEAK is off");

	/* The mm_struct cache's object size, as kernel/fork.c makes it. */
	snprintf(mm_tag, sizeof(mm_tag), "(size %zu)",
		 sizeof(struct mm_struct) + cpumask_size() + mm_cid_size());
	file = shca_kunit_debugfs_open(test, "kmemleak");
	/* kmemleak ignores objects younger than 5 s. */
	msleep(5500);
	shca_kunit_file_write(test, file, "scan");
	shca_kunit_file_write(test, file, "scan");

	/* The report is a seq_file with a plain .read, too. */
	report = kunit_kzalloc(test, SHCA_LEAK_REPORT_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, report);
	ubuf = kunit_vm_mmap(test, NULL, 0, SHCA_LEAK_REPORT_MAX,
			     PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, ubuf, 0);
	while (len < SHCA_LEAK_REPORT_MAX) {
		n = file->f_op->read(file, (char __user *)ubuf + len,
				     SHCA_LEAK_REPORT_MAX - len, &pos);
		KUNIT_ASSERT_GE(test, n, 0);
		if (!n)
			break;
		len += n;
	}
	KUNIT_ASSERT_EQ(test, copy_from_user(report, (void __user *)ubuf,
					     len), 0);

	for (block = strstr(report, "unreferenced object"); block;
	     block = next) {
		next = strstr(block + 1, "unreferenced object");
		if (next)
			next[-1] = '\0';
		/*
		 * UML records no allocation backtraces, so attribute by the
		 * allocating task: every softhca suite runs in a KUnit test
		 * thread (or a thread it started, named shca_*). One object
		 * of those is not ours: KUnit's own kunit_attach_mm() (behind
		 * kunit_vm_mmap()) never drops the test thread's mm_struct.
		 */
		if (strstr(block, mm_tag)) {
			kunit_mm++;
		} else if (strstr(block, "comm \"kunit_try_catch\"") ||
			   strstr(block, "comm \"shca_") ||
			   strstr(block, "shca_") || strstr(block, "softhca")) {
			if (ours++ < 5)
				kunit_err(test, "leak:\n%.700s", block);
		} else {
			others++;
		}
	}
	kunit_info(test, "kmemleak: %u objects leaked through softhca; ignored: %u test-thread mm_structs (KUnit), %u elsewhere",
		   ours, kunit_mm, others);
	KUNIT_EXPECT_EQ(test, ours, 0);
}

static struct kunit_case shca_leak_cases[] = {
	KUNIT_CASE_SLOW(shca_leak_scan),
	{}
};

static struct kunit_suite shca_leak_suite = {
	.name = "shca_leak",
	.test_cases = shca_leak_cases,
};

kunit_test_suites(&shca_leak_suite);
