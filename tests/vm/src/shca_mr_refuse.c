// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr_refuse DEV: refused memory registrations leave nothing behind.
 *
 *  - RLIMIT_MEMLOCK: a child drops to uid/gid 65534 (no CAP_IPC_LOCK) with
 *    a 1 MiB RLIMIT_MEMLOCK; registering beyond it fails with ENOMEM (what
 *    ib_umem_get() reports), also cumulatively and for a rereg that grows
 *    the MR; what failed charged nothing (VmPin) and pinned nothing
 *    (/proc/vmstat, checked by the parent, which stays root).
 *  - address + length or iova + length wrapping around: EINVAL.
 *  - a destroyed handle: ibv_dereg_mr() through a copy of an already
 *    deregistered MR (and ibv_dealloc_pd() through a copy of a freed PD)
 *    fails with an error instead of crashing or destroying something else.
 */
#include <errno.h>
#include <grp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmtest.h"

#define LIMIT	(1UL << 20)	/* RLIMIT_MEMLOCK of the unprivileged child */
#define NOBODY	65534

/*
 * The start of rdma-core 44's struct verbs_mr (infiniband/driver.h, not
 * installed; see providers/softhca/verbs_private.h): ibv_dereg_mr() reads
 * these fields of the MR it is given.
 */
struct vt_verbs_mr {
	struct ibv_mr ibv_mr;
	int mr_type;
	int access;
};

static size_t page;

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		vt_bad("mmap %zu bytes: %s", len, strerror(errno));
		exit(2);
	}
	memset(p, 0x11, len);
	return p;
}

/* reg_mr expected to fail with @want; VmPin must not move */
static void expect_refused(struct ibv_pd *pd, const char *what, void *addr,
			   size_t len, int want)
{
	long pin0 = vt_status_kb("VmPin"), pin1;
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	if (mr) {
		vt_bad("reg_mr %s: expected %s, but it succeeded (lkey 0x%x)",
		       what, vt_errname(want), mr->lkey);
		ibv_dereg_mr(mr);
		return;
	}
	vt_check(errno == want, "reg_mr %s: %s (expected %s)", what,
		 vt_errname(errno), vt_errname(want));
	pin1 = vt_status_kb("VmPin");
	vt_check(pin1 == pin0, "  nothing charged: VmPin %ld kB (was %ld kB)", pin1, pin0);
}

static struct ibv_mr *expect_reg(struct ibv_pd *pd, const char *what,
				 void *addr, size_t len)
{
	struct ibv_mr *mr;

	mr = ibv_reg_mr(pd, addr, len, IBV_ACCESS_LOCAL_WRITE);
	vt_check(mr != NULL, "reg_mr %s: %s (VmPin %ld kB)", what,
		 mr ? "ok" : vt_errname(errno), vt_status_kb("VmPin"));
	return mr;
}

/* The unprivileged part; runs in a child, returns its exit status. */
static int memlock_child(const char *name)
{
	struct rlimit rl = { .rlim_cur = LIMIT, .rlim_max = LIMIT };
	struct ibv_mr *a, *b, *c;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;
	long caps = -1;
	int ret;

	if (setrlimit(RLIMIT_MEMLOCK, &rl) || setgroups(0, NULL) ||
	    setgid(NOBODY) || setuid(NOBODY)) {
		vt_bad("dropping to uid %d with RLIMIT_MEMLOCK 1 MiB: %s", NOBODY,
		       strerror(errno));
		return 2;
	}
	{
		FILE *f = fopen("/proc/self/status", "r");
		char line[256];

		while (f && fgets(line, sizeof(line), f))
			if (!strncmp(line, "CapEff:", 7))
				caps = strtol(line + 7, NULL, 16);
		if (f)
			fclose(f);
	}
	vt_check(getuid() == NOBODY && geteuid() == NOBODY && caps == 0,
		 "running as uid %d, no capabilities (CapEff %lx), RLIMIT_MEMLOCK 1 MiB",
		 (int)geteuid(), caps);

	ctx = vt_open(name);
	vt_ok("ibv_open_device(%s) as uid %d", name, (int)geteuid());
	pd = vt_alloc_pd(ctx);
	buf = map_anon(4 * LIMIT);

	expect_refused(pd, "2 MiB > RLIMIT_MEMLOCK", buf, 2 * LIMIT, ENOMEM);
	expect_refused(pd, "1 MiB + 1 page", buf, LIMIT + page, ENOMEM);
	a = expect_reg(pd, "256 KiB", buf, LIMIT / 4);
	expect_refused(pd, "then 1 MiB (1.25 MiB in all)", buf + LIMIT, LIMIT, ENOMEM);
	b = expect_reg(pd, "then 768 KiB (exactly the limit)", buf + LIMIT, 3 * LIMIT / 4);
	vt_check(vt_status_kb("VmPin") == LIMIT / 1024, "VmPin is the limit, %lu kB: %ld kB",
		 LIMIT / 1024, vt_status_kb("VmPin"));
	expect_refused(pd, "then one page more", buf + 2 * LIMIT, page, ENOMEM);
	/* Overlapping registrations are charged again (ib_umem counts pins). */
	expect_refused(pd, "then the same 256 KiB again", buf, LIMIT / 4, ENOMEM);

	if (a)
		vt_check(ibv_dereg_mr(a) == 0, "dereg_mr of the 256 KiB MR (VmPin %ld kB)",
			 vt_status_kb("VmPin"));
	if (b) {
		long pin0 = vt_status_kb("VmPin");

		/* The new translation is pinned before the old one is released. */
		errno = 0;
		ret = ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				   buf + 2 * LIMIT, LIMIT, 0);
		vt_check(ret == IBV_REREG_MR_ERR_CMD && errno == ENOMEM,
			 "rereg_mr TRANSLATION 768 KiB -> 1 MiB (1.75 MiB while both are pinned): %d, %s (expected IBV_REREG_MR_ERR_CMD, ENOMEM)",
			 ret, vt_errname(errno));
		vt_check(vt_status_kb("VmPin") == pin0 && b->length == 3 * LIMIT / 4 &&
			 b->addr == buf + LIMIT,
			 "  the MR is unchanged and nothing more is charged (VmPin %ld kB)",
			 vt_status_kb("VmPin"));
		ret = ibv_rereg_mr(b, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				   buf + 2 * LIMIT, LIMIT / 4, 0);
		vt_check(ret == 0, "rereg_mr TRANSLATION 768 KiB -> 256 KiB (1 MiB while both are pinned): %d (%s)",
			 ret, ret ? vt_errname(errno) : "ok");
		vt_check(vt_status_kb("VmPin") == (ret ? pin0 : (long)(LIMIT / 4096)),
			 "  the old translation is uncharged: VmPin %ld kB",
			 vt_status_kb("VmPin"));
		ret = ibv_dereg_mr(b);
		vt_check(ret == 0, "dereg_mr: %s", vt_errname(ret));
	}
	c = expect_reg(pd, "then 1 MiB, all of the limit, again", buf + LIMIT, LIMIT);
	if (c)
		vt_check(ibv_dereg_mr(c) == 0, "dereg_mr");
	vt_check(vt_status_kb("VmPin") == 0, "VmPin 0 kB at the end: %ld kB",
		 vt_status_kb("VmPin"));
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	munmap(buf, 4 * LIMIT);
	return vt_exit();
}

static void test_memlock(const char *name)
{
	long long pins0, pins1;
	int status;
	pid_t pid;

	vt_info("---- RLIMIT_MEMLOCK, unprivileged ----");
	pins0 = vt_foll_pins();
	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		vt_bad("fork: %s", strerror(errno));
		return;
	}
	if (!pid)
		_exit(memlock_child(name));
	if (waitpid(pid, &status, 0) != pid) {
		vt_bad("waitpid: %s", strerror(errno));
		return;
	}
	vt_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the unprivileged child passed its checks (status 0x%x)", status);
	pins1 = vt_foll_pins();
	vt_check(pins0 >= 0 && pins1 == pins0,
		 "pinned pages in the system (/proc/vmstat): %lld before, %lld after",
		 pins0, pins1);
}

static void test_wrap(struct ibv_pd *pd)
{
	char *buf = map_anon(4 * page);
	struct ibv_mr *mr;

	vt_info("---- ranges wrapping around ----");
	expect_refused(pd, "address 2^64 - 1 page, 2 pages (address + length wraps)",
		       (void *)(UINTPTR_MAX - page + 1), 2 * page, EINVAL);
	expect_refused(pd, "address 2^64 - 1 page, 2^64 - 1 page long",
		       (void *)(UINTPTR_MAX - page + 1), SIZE_MAX - page + 1, EINVAL);
	errno = 0;
	mr = ibv_reg_mr_iova(pd, buf, 2 * page, UINT64_MAX - page + 1,
			     IBV_ACCESS_LOCAL_WRITE);
	vt_check(!mr && errno == EINVAL,
		 "reg_mr_iova with iova 2^64 - 1 page, 2 pages (iova + length wraps): %s (expected EINVAL)",
		 mr ? "it succeeded" : vt_errname(errno));
	if (mr)
		ibv_dereg_mr(mr);
	munmap(buf, 4 * page);
}

static void test_stale(struct ibv_context *ctx)
{
	struct ibv_pd *pd, *pd2, pd_copy;
	struct vt_verbs_mr copy;
	struct ibv_mr *mr, *other;
	char *buf = map_anon(4 * page);
	uint32_t handle;
	int ret;

	vt_info("---- destroyed handles ----");
	pd = vt_alloc_pd(ctx);
	other = ibv_reg_mr(pd, buf + 2 * page, page, IBV_ACCESS_LOCAL_WRITE);
	mr = ibv_reg_mr(pd, buf, page, IBV_ACCESS_LOCAL_WRITE);
	if (!vt_check(mr && other, "two MRs registered: %s",
		      mr && other ? "ok" : vt_errname(errno)))
		exit(2);
	memcpy(&copy, mr, sizeof(copy));
	handle = mr->handle;
	ret = ibv_dereg_mr(mr);
	vt_check(ret == 0, "dereg_mr (handle %u): %s", handle, vt_errname(ret));

	errno = 0;
	ret = ibv_dereg_mr(&copy.ibv_mr);
	vt_check(ret != 0, "dereg_mr again, through a copy of the deregistered MR: %s (an error)",
		 vt_errname(ret));
	ret = ibv_dereg_mr(&copy.ibv_mr);
	vt_check(ret != 0, "and once more: %s", vt_errname(ret));

	ret = ibv_dealloc_pd(pd);
	vt_check(ret == EBUSY, "the other MR is still there: dealloc_pd is %s (expected EBUSY)",
		 vt_errname(ret));
	ret = ibv_dereg_mr(other);
	vt_check(ret == 0, "the other MR deregisters normally: %s", vt_errname(ret));

	pd2 = vt_alloc_pd(ctx);
	memcpy(&pd_copy, pd, sizeof(pd_copy));
	ret = ibv_dealloc_pd(pd);
	vt_check(ret == 0, "dealloc_pd: %s", vt_errname(ret));
	ret = ibv_dealloc_pd(&pd_copy);
	vt_check(ret != 0, "dealloc_pd again, through a copy of the freed PD: %s (an error)",
		 vt_errname(ret));
	mr = ibv_reg_mr(pd2, buf, page, IBV_ACCESS_LOCAL_WRITE);
	vt_check(mr != NULL, "the context still works: reg_mr on another PD: %s",
		 mr ? "ok" : vt_errname(errno));
	if (mr)
		vt_check(ibv_dereg_mr(mr) == 0, "dereg_mr");
	vt_check(ibv_dealloc_pd(pd2) == 0, "dealloc_pd");
	munmap(buf, 4 * page);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	page = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);

	test_memlock(name);

	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	test_wrap(pd);
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	test_stale(ctx);
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	return vt_exit();
}
