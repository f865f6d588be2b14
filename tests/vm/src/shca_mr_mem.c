// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr_mem DEV [MAX_SIZE_MIB]: ibv_reg_mr on the kinds of memory a
 * program has besides heap and stack: MAP_HUGETLB mappings (huge pages
 * must be reserved beforehand: /proc/sys/vm/nr_hugepages), file-backed
 * mappings of a tmpfs file (MAP_SHARED and MAP_PRIVATE, writable and
 * read-only, past the end of the file), and anonymous regions of 4 KiB,
 * 64 KiB, 1 MiB, 16 MiB, 256 MiB and 1 GiB (or up to MAX_SIZE_MIB). While
 * an MR is registered its pages are charged to the process (VmPin); after
 * deregistration nothing is.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

#define RW	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ)

static size_t page;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* 1 if all @len bytes at @p are @v */
/*
 * Register [addr, addr + len) with @access; expect errno @want (0:
 * success: check the ibv_mr and VmPin, then deregister). Returns 1 if the
 * outcome was the expected one.
 */
static int expect_reg(const char *what, struct ibv_pd *pd, void *addr,
		      size_t len, int access, int want)
{
	long pin0 = vt_status_kb("VmPin"), pin1, pin2;
	size_t pages_spanned;
	struct ibv_mr *mr;
	int err, good;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (want) {
		if (mr) {
			vt_bad("reg_mr %s (%zu bytes): expected %s, but it succeeded",
			       what, len, vt_errname(want));
			ibv_dereg_mr(mr);
			return 0;
		}
		good = vt_check(errno == want, "reg_mr %s (%zu bytes): %s (expected %s)",
				what, len, vt_errname(errno), vt_errname(want));
		pin1 = vt_status_kb("VmPin");
		good &= vt_check(pin1 == pin0, "  nothing left pinned: VmPin %ld kB (was %ld kB)",
				 pin1, pin0);
		return good;
	}
	if (!mr) {
		vt_bad("reg_mr %s (%zu bytes): expected success, got %s", what,
		       len, vt_errname(errno));
		return 0;
	}
	good = vt_check(mr->addr == addr && mr->length == len && mr->pd == pd &&
			mr->lkey == mr->rkey,
			"reg_mr %s (%zu bytes): lkey 0x%x rkey 0x%x", what, len,
			mr->lkey, mr->rkey);
	pages_spanned = ((uintptr_t)addr + len + page - 1) / page -
			(uintptr_t)addr / page;
	pin1 = vt_status_kb("VmPin");
	good &= vt_check(pin1 - pin0 == (long)(pages_spanned * page / 1024),
			 "  VmPin grew by the %zu pages spanned: %ld kB -> %ld kB",
			 pages_spanned, pin0, pin1);
	err = ibv_dereg_mr(mr);
	good &= vt_check(!err, "  dereg_mr: %s", vt_errname(err));
	pin2 = vt_status_kb("VmPin");
	good &= vt_check(pin2 == pin0, "  VmPin back to %ld kB: %ld kB", pin0, pin2);
	return good;
}

/* HugePages_Free of /proc/meminfo; -1 if unknown */
static long hugepages_free(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	long v = -1;

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "HugePages_Free:", 15))
			v = strtol(line + 15, NULL, 10);
	if (f)
		fclose(f);
	return v;
}

static void test_hugetlb(struct ibv_pd *pd)
{
	const size_t huge = 2UL << 20, len = 4 * huge;
	long free_before, free_now;
	unsigned char *p;

	vt_info("---- MAP_HUGETLB (2 MiB pages) ----");
	free_before = hugepages_free();
	if (free_before < 4) {
		vt_bad("need 4 free 2 MiB huge pages, /proc/meminfo has %ld (set /proc/sys/vm/nr_hugepages)",
		       free_before);
		return;
	}
	p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB, -1, 0);
	if (!vt_check(p != MAP_FAILED, "mmap 8 MiB MAP_HUGETLB: %s",
		      p == MAP_FAILED ? strerror(errno) : "ok"))
		return;
	vt_check(((uintptr_t)p & (huge - 1)) == 0, "the mapping is 2 MiB aligned (%p)", p);

	expect_reg("hugetlb, untouched", pd, p, len, RW, 0);
	memset(p, 0x48, len);
	expect_reg("hugetlb, all 4 huge pages", pd, p, len, RW, 0);
	expect_reg("hugetlb, read-only access", pd, p, len, IBV_ACCESS_REMOTE_READ, 0);
	expect_reg("hugetlb, unaligned, across 2 huge pages", pd, p + 100,
		   huge + 5000, RW, 0);
	expect_reg("hugetlb, one byte in the last huge page", pd,
		   p + len - 1, 1, RW, 0);
	vt_check(vt_all_bytes(p, len, 0x48), "hugetlb contents unchanged by registration");

	if (!mprotect(p + 3 * huge, huge, PROT_READ)) {
		expect_reg("hugetlb, read-only huge page, LOCAL_WRITE", pd,
			   p + 3 * huge, huge, IBV_ACCESS_LOCAL_WRITE, EFAULT);
		expect_reg("hugetlb, read-only huge page, no write access", pd,
			   p + 3 * huge, huge, 0, 0);
	}
	munmap(p, len);
	free_now = hugepages_free();
	vt_check(free_now == free_before, "the huge pages are free again: %ld (was %ld)",
		 free_now, free_before);
}

static void test_file(struct ibv_pd *pd, const char *dir)
{
	const size_t len = 64 * 4096;
	char path[256], *buf;
	unsigned char *shared, *priv, *ro, *past;
	int fd, rofd;

	vt_info("---- file-backed mappings (tmpfs file in %s) ----", dir);
	snprintf(path, sizeof(path), "%s/shca_mr_mem.XXXXXX", dir);
	fd = mkstemp(path);
	if (!vt_check(fd >= 0, "create %s: %s", path, fd < 0 ? strerror(errno) : "ok"))
		return;
	buf = malloc(len);
	if (!buf)
		exit(2);
	memset(buf, 0x46, len);
	if (pwrite(fd, buf, len, 0) != (ssize_t)len) {
		vt_bad("writing %s: %s", path, strerror(errno));
		goto out;
	}
	rofd = open(path, O_RDONLY);

	shared = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (vt_check(shared != MAP_FAILED, "mmap MAP_SHARED, read-write")) {
		struct ibv_mr *mr;

		expect_reg("MAP_SHARED file, untouched", pd, shared, len, RW, 0);
		expect_reg("MAP_SHARED file, read access", pd, shared, len,
			   IBV_ACCESS_REMOTE_READ, 0);
		expect_reg("MAP_SHARED file, unaligned middle", pd, shared + 4000,
			   8 * 4096, RW, 0);
		/* While registered, the mapping still is the file. */
		mr = ibv_reg_mr(pd, shared, len, RW);
		if (vt_check(mr != NULL, "reg_mr MAP_SHARED file, held: %s",
			     mr ? "ok" : vt_errname(errno))) {
			char c = 0;

			shared[5000] = 0x77;
			vt_check(pread(fd, &c, 1, 5000) == 1 && c == 0x77,
				 "a store through the registered MAP_SHARED mapping reaches the file");
			c = 0x78;
			vt_check(pwrite(fd, &c, 1, 6000) == 1 && shared[6000] == 0x78,
				 "a write to the file shows in the registered mapping");
			vt_check(ibv_dereg_mr(mr) == 0, "dereg_mr");
		}
		munmap(shared, len);
	}

	priv = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
	if (vt_check(priv != MAP_FAILED, "mmap MAP_PRIVATE, read-write")) {
		struct ibv_mr *mr;
		char c = 0;

		expect_reg("MAP_PRIVATE file, read access (file pages)", pd, priv,
			   len, IBV_ACCESS_REMOTE_READ, 0);
		/* LOCAL_WRITE breaks copy-on-write: private copies get pinned. */
		mr = ibv_reg_mr(pd, priv, len, RW);
		if (vt_check(mr != NULL, "reg_mr MAP_PRIVATE file, LOCAL_WRITE: %s",
			     mr ? "ok" : vt_errname(errno))) {
			vt_check(pread(fd, buf, len, 0) == (ssize_t)len &&
				 !memcmp(priv, buf, len),
				 "the private copy holds the file's contents");
			priv[100] = 0x55;
			vt_check(pread(fd, &c, 1, 100) == 1 && c == 0x46,
				 "a store to the private mapping does not reach the file");
			vt_check(ibv_dereg_mr(mr) == 0, "dereg_mr");
		}
		munmap(priv, len);
	}

	ro = rofd >= 0 ? mmap(NULL, len, PROT_READ, MAP_SHARED, rofd, 0) : MAP_FAILED;
	if (vt_check(ro != MAP_FAILED, "mmap MAP_SHARED, read-only file descriptor")) {
		expect_reg("read-only MAP_SHARED file, no write access", pd, ro,
			   len, IBV_ACCESS_REMOTE_READ, 0);
		expect_reg("read-only MAP_SHARED file, LOCAL_WRITE", pd, ro, len,
			   IBV_ACCESS_LOCAL_WRITE, EFAULT);
		munmap(ro, len);
	}
	ro = rofd >= 0 ? mmap(NULL, len, PROT_READ, MAP_PRIVATE, rofd, 0) : MAP_FAILED;
	if (vt_check(ro != MAP_FAILED, "mmap MAP_PRIVATE, PROT_READ")) {
		expect_reg("read-only MAP_PRIVATE file, no write access", pd, ro,
			   len, 0, 0);
		expect_reg("read-only MAP_PRIVATE file, LOCAL_WRITE", pd, ro, len,
			   IBV_ACCESS_LOCAL_WRITE, EFAULT);
		munmap(ro, len);
	}

	/* A mapping longer than the file: the pages past EOF do not exist. */
	past = mmap(NULL, len + 4 * 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (vt_check(past != MAP_FAILED, "mmap MAP_SHARED 4 pages past the end of the file")) {
		expect_reg("file mapping past EOF", pd, past + len - 4096,
			   2 * 4096, RW, EFAULT);
		expect_reg("file mapping up to EOF", pd, past + len - 4096, 4096,
			   RW, 0);
		munmap(past, len + 4 * 4096);
	}
	if (rofd >= 0)
		close(rofd);
out:
	free(buf);
	close(fd);
	unlink(path);
}

static void test_sizes(struct ibv_pd *pd, size_t max)
{
	static const size_t sizes[] = {
		4UL << 10, 64UL << 10, 1UL << 20, 16UL << 20, 256UL << 20,
		1UL << 30,
	};
	unsigned char *p;
	char sz[32];
	unsigned int i;
	double t;

	vt_info("---- region sizes 4 KiB .. %s (anonymous memory) ----",
		vt_size_str(max, sz, sizeof(sz)));
	p = mmap(NULL, max, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (!vt_check(p != MAP_FAILED, "mmap %s: %s", sz,
		      p == MAP_FAILED ? strerror(errno) : "ok"))
		return;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]) && sizes[i] <= max; i++) {
		char what[64];

		snprintf(what, sizeof(what), "%s region",
			 vt_size_str(sizes[i], sz, sizeof(sz)));
		t = now();
		expect_reg(what, pd, p, sizes[i], RW, 0);
		vt_info("  %s: registered and deregistered in %.2f s", sz, now() - t);
	}
	/* The biggest region again, now in use, with a pattern to keep. */
	for (i = 0; i < max / page; i++)
		p[i * page] = (unsigned char)i;
	t = now();
	{
		struct ibv_mr *mr = ibv_reg_mr(pd, p, max, RW);
		size_t bad = 0;

		if (vt_check(mr != NULL, "reg_mr %s region, written: %s",
			     vt_size_str(max, sz, sizeof(sz)),
			     mr ? "ok" : vt_errname(errno))) {
			for (i = 0; i < max / page; i++)
				bad += p[i * page] != (unsigned char)i;
			vt_check(bad == 0, "  contents intact while registered (%zu pages differ)", bad);
			vt_check(ibv_dereg_mr(mr) == 0, "  dereg_mr");
		}
	}
	vt_info("  %s, written: %.2f s", sz, now() - t);
	munmap(p, max);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	size_t max = (argc > 2 ? strtoul(argv[2], NULL, 0) : 1024) << 20;
	const char *dir = getenv("SHCA_TMPFS") ? getenv("SHCA_TMPFS") : "/dev/shm";
	struct ibv_context *ctx;
	struct ibv_pd *pd;

	page = sysconf(_SC_PAGESIZE);
	if (!max || max > (1UL << 30)) {
		fprintf(stderr, "usage: %s DEV [MAX_SIZE_MIB (1..1024)]\n", argv[0]);
		return 2;
	}
	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);

	test_hugetlb(pd);
	test_file(pd, dir);
	test_sizes(pd, max);

	vt_check(vt_status_kb("VmPin") == 0, "nothing of this process is pinned any more (VmPin %ld kB)",
		 vt_status_kb("VmPin"));
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	return vt_exit();
}
