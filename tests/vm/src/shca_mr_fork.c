// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr_fork DEV [forksafe]: fork() after ibv_reg_mr on a kernel that
 * copies pinned pages on fork (Linux >= 5.13), as ibv_fork_init(3) and
 * ibv_is_fork_initialized(3) document it.
 *
 * Default: ibv_is_fork_initialized() reports IBV_FORK_UNNEEDED, so the
 * program never calls ibv_fork_init() before registering (calling it
 * afterwards is refused with EINVAL by rdma-core 44: "there had been RDMA
 * memory registration already"; newer rdma-core returns 0). The registered
 * pages stay the parent's: the child gets its own copy of a private
 * mapping, writes to it without disturbing the parent (same physical pages,
 * same contents), shares a MAP_SHARED mapping as usual, may open the
 * device itself, and exits cleanly; the parent then deregisters normally.
 *
 * forksafe (run with RDMAV_FORK_SAFE=1, which calls ibv_fork_init() when
 * libibverbs loads): rdma-core 44 then still marks registered ranges
 * MADV_DONTFORK (smaps "dc"), so the child has no mapping there at all;
 * deregistration clears the mark again.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "vmtest.h"

#define NPAGES	8

static size_t page;

static const char *fork_str(enum ibv_fork_status s)
{
	switch (s) {
	case IBV_FORK_DISABLED: return "IBV_FORK_DISABLED";
	case IBV_FORK_ENABLED: return "IBV_FORK_ENABLED";
	case IBV_FORK_UNNEEDED: return "IBV_FORK_UNNEEDED";
	}
	return "?";
}

/* Physical frame of the page at @addr (/proc/self/pagemap); 0 if unknown. */
static uint64_t pfn_of(const void *addr)
{
	uint64_t ent = 0;
	int fd = open("/proc/self/pagemap", O_RDONLY);

	if (fd < 0)
		return 0;
	if (pread(fd, &ent, sizeof(ent), (uintptr_t)addr / page * sizeof(ent)) !=
	    (ssize_t)sizeof(ent))
		ent = 0;
	close(fd);
	if (!(ent & (1ULL << 63)))
		return 0;
	return ent & ((1ULL << 55) - 1);
}

/* 1 if the mapping holding @addr is marked MADV_DONTFORK (smaps VmFlags dc) */
static int dontfork(const void *addr)
{
	FILE *f = fopen("/proc/self/smaps", "r");
	unsigned long lo, hi;
	char line[512];
	int in = 0, dd = 0;

	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2)	/* a mapping's header */
			in = (uintptr_t)addr >= lo && (uintptr_t)addr < hi;
		else if (in && !strncmp(line, "VmFlags:", 8))
			dd = strstr(line, " dc") != NULL;
	}
	if (f)
		fclose(f);
	return dd;
}

/* 1 if some mapping of this process contains @addr (/proc/self/maps) */
static int mapped(const void *addr)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long lo, hi;
	char line[512];
	int found = 0;

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &lo, &hi) == 2 &&
		    (uintptr_t)addr >= lo && (uintptr_t)addr < hi)
			found = 1;
	if (f)
		fclose(f);
	return found;
}

static int child(const char *name, unsigned char *priv, unsigned char *shared,
		 int forksafe)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;

	vt_failures = 0;	/* the child's own checks decide its exit status */
	if (forksafe) {
		vt_check(!mapped(priv) && !mapped(shared),
			 "child: the registered (MADV_DONTFORK) ranges are not mapped in the child");
		return vt_exit();
	}
	vt_check(vt_all_bytes(priv, NPAGES * page, 'P'),
		 "child: its copy of the registered private buffer holds the parent's data");
	memset(priv, 'C', NPAGES * page);
	vt_check(vt_all_bytes(priv, NPAGES * page, 'C'), "child: wrote its copy");
	memset(shared, 'S', page);

	/* The parent's verbs objects are not the child's; its own are fine. */
	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	mr = ibv_reg_mr(pd, priv, NPAGES * page, IBV_ACCESS_LOCAL_WRITE);
	if (vt_check(mr != NULL, "child: opens %s itself and registers its copy: %s",
		     name, mr ? "ok" : vt_errname(errno)))
		vt_check(ibv_dereg_mr(mr) == 0, "child: dereg_mr");
	vt_check(ibv_dealloc_pd(pd) == 0, "child: dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "child: close_device");
	return vt_exit();
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	int forksafe = argc > 2 && !strcmp(argv[2], "forksafe");
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	uint64_t pfn0[NPAGES], pfn1[NPAGES];
	unsigned char *priv, *shared;
	struct ibv_context *ctx;
	enum ibv_fork_status fs;
	struct ibv_mr *mr, *smr;
	struct ibv_pd *pd;
	int i, moved, status, ret;
	pid_t pid;

	page = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);

	fs = ibv_is_fork_initialized();
	vt_check(fs == IBV_FORK_UNNEEDED, "ibv_is_fork_initialized(): %s (expected IBV_FORK_UNNEEDED: the kernel copies pinned pages on fork)",
		 fork_str(fs));
	if (forksafe) {
		ret = ibv_fork_init();
		vt_check(ret == 0, "RDMAV_FORK_SAFE set: ibv_fork_init() again: %s",
			 vt_errname(ret));
	}

	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	priv = mmap(NULL, NPAGES * page, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	shared = mmap(NULL, page, PROT_READ | PROT_WRITE,
		      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (priv == MAP_FAILED || shared == MAP_FAILED) {
		vt_bad("mmap: %s", strerror(errno));
		return 2;
	}
	memset(priv, 'P', NPAGES * page);
	memset(shared, 'p', page);
	mr = ibv_reg_mr(pd, priv, NPAGES * page, rw);
	smr = ibv_reg_mr(pd, shared, page, rw);
	if (!vt_check(mr && smr, "reg_mr of a private and a shared buffer: %s",
		      mr && smr ? "ok" : vt_errname(errno)))
		return 1;
	if (forksafe) {
		vt_check(dontfork(priv) && dontfork(shared),
			 "RDMAV_FORK_SAFE: the registered ranges are MADV_DONTFORK (smaps dc)");
	} else {
		vt_check(!dontfork(priv) && !dontfork(shared),
			 "the registered ranges are not MADV_DONTFORK (no smaps dc)");
		ret = ibv_fork_init();
		vt_check(ret == 0 || ret == EINVAL,
			 "ibv_fork_init() after registering: %s (rdma-core 44: EINVAL, too late; newer: 0, unneeded)",
			 vt_errname(ret));
		vt_check(!dontfork(priv) && ibv_is_fork_initialized() == IBV_FORK_UNNEEDED,
			 "  and changes nothing: still IBV_FORK_UNNEEDED, no MADV_DONTFORK");
	}
	for (i = 0; i < NPAGES; i++)
		pfn0[i] = pfn_of(priv + i * page);
	vt_check(pfn0[0] != 0, "physical pages of the registered buffer known (pagemap; pfn 0x%llx..)",
		 (unsigned long long)pfn0[0]);

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		vt_bad("fork: %s", strerror(errno));
		return 1;
	}
	if (!pid)
		_exit(child(name, priv, shared, forksafe));

	if (waitpid(pid, &status, 0) != pid) {
		vt_bad("waitpid: %s", strerror(errno));
		return 1;
	}
	vt_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		 "the child exited cleanly (status 0x%x)", status);
	vt_check(vt_all_bytes(priv, NPAGES * page, 'P'), forksafe ?
		 "the parent's registered buffer kept its contents" :
		 "the parent's registered buffer kept its contents after the child wrote its copy");
	if (!forksafe)
		vt_check(vt_all_bytes(shared, page, 'S'),
			 "the registered MAP_SHARED page is shared with the child as usual");
	memset(priv, 'Q', NPAGES * page);
	for (moved = 0, i = 0; i < NPAGES; i++) {
		pfn1[i] = pfn_of(priv + i * page);
		moved += pfn1[i] != pfn0[i];
	}
	vt_check(moved == 0,
		 "after fork and writes, the buffer is still on the registered pages (%d of %d moved)",
		 moved, NPAGES);

	ret = ibv_dereg_mr(mr);
	vt_check(ret == 0, "dereg_mr of the private buffer: %s", vt_errname(ret));
	ret = ibv_dereg_mr(smr);
	vt_check(ret == 0, "dereg_mr of the shared buffer: %s", vt_errname(ret));
	if (forksafe)
		vt_check(!dontfork(priv) && !dontfork(shared),
			 "deregistration cleared MADV_DONTFORK (no smaps dc)");
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	munmap(priv, NPAGES * page);
	munmap(shared, page);
	return vt_exit();
}
