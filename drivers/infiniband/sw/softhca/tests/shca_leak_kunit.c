// SPDX-License-Identifier: GPL-2.0
/*
 * shca_leak: kmemleak after every other softhca suite (this file links
 * last, so its suite runs last).
 *
 * kmemleak's own first scan comes a minute after boot, long after KUnit
 * is done, and debugfs is not mounted while the suites run. The suite
 * mounts a private instance of debugfs, asks kmemleak for a scan through
 * its control file and fails on every unreferenced object whose
 * allocation backtrace passes through softhca. Objects leaked by other
 * parts of the kernel are counted and ignored.
 *
 * Skipped unless the kernel has CONFIG_DEBUG_KMEMLEAK (the sanitizer
 * tier's configuration).
 */

#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/mount.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <kunit/test.h>

#define SHCA_LEAK_REPORT_MAX	SZ_256K

static void shca_leak_umount(void *mnt)
{
	kern_unmount(mnt);
}

static void shca_leak_fput(void *file)
{
	fput(file);
}

static struct file *shca_leak_open(struct kunit *test)
{
	struct file_system_type *fs;
	struct vfsmount *mnt;
	struct file *file;

	fs = get_fs_type("debugfs");
	KUNIT_ASSERT_NOT_NULL(test, fs);
	mnt = vfs_kern_mount(fs, 0, "debugfs", NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mnt), "mount debugfs: %ld",
			       PTR_ERR(mnt));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_leak_umount,
							mnt), 0);
	file = file_open_root_mnt(mnt, "kmemleak", O_RDWR, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "open kmemleak: %ld",
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, shca_leak_fput,
							file), 0);
	return file;
}

static void shca_leak_cmd(struct kunit *test, struct file *file,
			  const char *cmd)
{
	loff_t pos = 0;

	KUNIT_ASSERT_EQ_MSG(test, kernel_write(file, cmd, strlen(cmd), &pos),
			    (ssize_t)strlen(cmd), "kmemleak '%s'", cmd);
}

/*
 * Scan, then read the report: one block per object, each starting with
 * "unreferenced object". Fail on those allocated through softhca.
 */
static void shca_leak_scan(struct kunit *test)
{
	char *report, *block, *next;
	unsigned int ours = 0, others = 0;
	struct file *file;
	loff_t pos = 0;
	ssize_t n, len = 0;

	if (!IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		kunit_skip(test, "CONFIG_DEBUG_KMEMLEAK is off");

	file = shca_leak_open(test);
	/* kmemleak ignores objects younger than 5 s. */
	msleep(5500);
	shca_leak_cmd(test, file, "scan");
	shca_leak_cmd(test, file, "scan");

	report = kunit_kzalloc(test, SHCA_LEAK_REPORT_MAX + 1, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, report);
	while (len < SHCA_LEAK_REPORT_MAX) {
		n = kernel_read(file, report + len, SHCA_LEAK_REPORT_MAX - len,
				&pos);
		KUNIT_ASSERT_GE(test, n, 0);
		if (!n)
			break;
		len += n;
	}

	for (block = strstr(report, "unreferenced object"); block;
	     block = next) {
		next = strstr(block + 1, "unreferenced object");
		if (next)
			next[-1] = '\0';
		if (strstr(block, "shca_") || strstr(block, "softhca")) {
			ours++;
			kunit_err(test, "leak:\n%s", block);
		} else {
			others++;
		}
	}
	kunit_info(test, "kmemleak: %u objects leaked through softhca, %u elsewhere (ignored)",
		   ours, others);
	KUNIT_EXPECT_EQ(test, ours, 0);
}

static struct kunit_case shca_leak_cases[] = {
	KUNIT_CASE(shca_leak_scan),
	{}
};

static struct kunit_suite shca_leak_suite = {
	.name = "shca_leak",
	.test_cases = shca_leak_cases,
};

kunit_test_suites(&shca_leak_suite);
