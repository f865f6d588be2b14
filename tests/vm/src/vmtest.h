/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the C test programs of the VM tier (tests/vm/src/).
 *
 * Output follows tests/vm/lib.sh: "  ok - ..." and "  FAIL - ..." lines,
 * "  # ..." for information. A program exits 0 only if no check failed,
 * 1 if one did, 2 on a usage error or when it cannot start at all.
 */
#ifndef SOFTHCA_VMTEST_H
#define SOFTHCA_VMTEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

static int vt_failures;

static inline void __attribute__((format(printf, 1, 2))) vt_ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  ok - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

static inline void __attribute__((format(printf, 1, 2))) vt_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  FAIL - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	vt_failures++;
}

static inline void __attribute__((format(printf, 1, 2))) vt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  # ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

/* vt_check(cond, desc...): ok or FAIL; returns cond. */
#define vt_check(cond, ...) \
	((cond) ? (vt_ok(__VA_ARGS__), 1) : (vt_bad(__VA_ARGS__), 0))

/* Exit status for main(). */
static inline int vt_exit(void)
{
	if (vt_failures)
		vt_info("%d check(s) failed", vt_failures);
	return vt_failures ? 1 : 0;
}

static inline const char *vt_errname(int err)
{
	switch (err) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSPC: return "ENOSPC";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case E2BIG: return "E2BIG";
	default: return strerror(err);
	}
}

/* Open the device called @name; exits with status 2 if impossible. */
static inline struct ibv_context *vt_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, num;

	list = ibv_get_device_list(&num);
	if (!list) {
		vt_bad("ibv_get_device_list: %s", strerror(errno));
		exit(2);
	}
	for (i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			vt_bad("ibv_open_device(%s): %s", name, strerror(errno));
			ibv_free_device_list(list);
			exit(2);
		}
		break;
	}
	ibv_free_device_list(list);
	if (!ctx) {
		vt_bad("device %s not found by libibverbs (%d devices)", name, num);
		exit(2);
	}
	return ctx;
}

static inline struct ibv_pd *vt_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd) {
		vt_bad("ibv_alloc_pd: %s", strerror(errno));
		exit(2);
	}
	return pd;
}

#endif /* SOFTHCA_VMTEST_H */
