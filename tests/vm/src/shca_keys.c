// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_keys DEV [N]: isolation of MR handles between contexts, and keys
 * that are not predictable from one registration to the next.
 *
 *  (a) A victim registers MRs under one PD. Another process (its own
 *      context) and a second context of the victim's own process try every
 *      handle 0 .. HANDLES - 1 with raw uverbs DEREG_MR, REREG_MR
 *      (ACCESS; TRANS | PD | ACCESS) and DEALLOC_PD commands: uverbs
 *      handles belong to the context that created them, so every attempt
 *      must fail with ENOENT (an unknown handle) - the attacker even knows
 *      the victim's handle numbers, and holds no object of its own
 *      while it tries. Afterwards the victim's MRs are all
 *      listed by `rdma res show mr`, keep their keys, can still be
 *      re-registered in place and deregistered, and their PD is still busy.
 *      A second PD in the victim's context: registering, re-registering
 *      and deregistering under it and freeing it leaves the first PD's
 *      MRs untouched. (Within one context handles are not per PD: the
 *      owner of a context may destroy any of its MRs, as verbs define it.
 *      Keys on the data path are checked against the PD by the copy
 *      engine, which needs QPs to be reachable from userspace.)
 *  (b) N (default 1000) MRs registered in a row: lkey == rkey, all
 *      distinct; the key byte (low 8 bits) is not constant and fewer than
 *      10% of consecutive key differences repeat the previous difference,
 *      i.e. the keys are not an arithmetic sequence. Reports how the index
 *      part (key >> 8) moves.
 *  (c) Write access cannot be gained by re-registration: memory that is
 *      mapped read-only (a file opened O_RDONLY and mapped PROT_READ,
 *      MAP_SHARED; anonymous PROT_READ memory) is refused for
 *      IBV_ACCESS_LOCAL_WRITE with EFAULT, as ibv_reg_mr(3) and
 *      Documentation/provider.rst say; registered read-only and then
 *      given LOCAL_WRITE | REMOTE_WRITE with ibv_rereg_mr(ACCESS) it must
 *      be refused as well (the pages were pinned without FOLL_WRITE: a
 *      writable MR over them would let the data path write into the page
 *      cache of a file the process may not write, or into the shared zero
 *      page). The MR must keep its old access.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <rdma/ib_user_verbs.h>

#include "vmtest.h"

#define HANDLES	4096
#define NVICTIM	8

static size_t page;

/*
 * Every destroying or modifying command on handles 0 .. HANDLES - 1, from
 * the context behind @fd, except its own handles @own[0..nown). Returns
 * the number of attempts that did not fail with ENOENT.
 */
static long sweep(const char *who, int fd, const uint32_t *own, int nown,
		  void *buf)
{
	struct ib_uverbs_rereg_mr_resp rresp;
	struct ib_uverbs_dealloc_pd dpd;
	struct ib_uverbs_rereg_mr rr;
	struct ib_uverbs_dereg_mr dmr;
	long attempts = 0, wrong = 0;
	uint32_t h;
	int i, err, k;

	for (h = 0; h < HANDLES; h++) {
		for (i = 0; i < nown && own[i] != h; i++)
			;
		if (i < nown)
			continue;
		for (k = 0; k < 4; k++) {
			switch (k) {
			case 0:
				dmr.mr_handle = h;
				err = vt_raw_cmd(fd, IB_USER_VERBS_CMD_DEREG_MR, &dmr,
					      sizeof(dmr), 0);
				break;
			case 1:
			case 2:
				memset(&rr, 0, sizeof(rr));
				rr.response = (uintptr_t)&rresp;
				rr.mr_handle = h;
				rr.flags = k == 1 ? IBV_REREG_MR_CHANGE_ACCESS :
					   IBV_REREG_MR_CHANGE_TRANSLATION | IBV_REREG_MR_CHANGE_PD |
					   IBV_REREG_MR_CHANGE_ACCESS;
				rr.start = (uintptr_t)buf;
				rr.length = page;
				rr.hca_va = (uintptr_t)buf;
				rr.pd_handle = 0;	/* not looked up: the MR is unknown */
				rr.access_flags = IBV_ACCESS_LOCAL_WRITE |
						  IBV_ACCESS_REMOTE_WRITE |
						  IBV_ACCESS_REMOTE_READ;
				err = vt_raw_cmd(fd, IB_USER_VERBS_CMD_REREG_MR, &rr,
					      sizeof(rr), sizeof(rresp) / 4);
				break;
			default:
				dpd.pd_handle = h;
				err = vt_raw_cmd(fd, IB_USER_VERBS_CMD_DEALLOC_PD, &dpd,
					      sizeof(dpd), 0);
				break;
			}
			attempts++;
			if (err != ENOENT) {
				if (wrong++ < 10)
					vt_bad("%s: %s of handle %u: %s (expected ENOENT)",
					       who,
					       k == 0 ? "DEREG_MR" : k == 3 ? "DEALLOC_PD" :
					       k == 1 ? "REREG_MR ACCESS" :
					       "REREG_MR TRANS|PD|ACCESS",
					       h, vt_errname(err));
			}
		}
	}
	vt_check(!wrong, "%s: %ld raw DEREG_MR/REREG_MR/DEALLOC_PD commands on handles 0..%d, all ENOENT (%ld not)",
		 who, attempts, HANDLES - 1, wrong);
	return wrong;
}

/*
 * The attacker: its own context, with no object of its own during the
 * sweep (so no handle is skipped); then it checks its context still works.
 */
static int attacker(const char *name, int rfd)
{
	uint32_t victim[NVICTIM + 1];
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	char *buf;

	if (read(rfd, victim, sizeof(victim)) != (ssize_t)sizeof(victim)) {
		vt_bad("attacker: the victim did not start");
		return 2;
	}
	ctx = vt_open(name);
	buf = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	vt_info("attacker (pid %d, its own context): the victim's PD handle is %u, its MRs %u..%u",
		(int)getpid(), victim[0], victim[1], victim[NVICTIM]);
	sweep("another process", ctx->cmd_fd, NULL, 0, buf + 2 * page);
	pd = ibv_alloc_pd(ctx);
	mr = pd ? ibv_reg_mr(pd, buf, page, IBV_ACCESS_LOCAL_WRITE) : NULL;
	vt_check(mr != NULL, "attacker: its own context still works: alloc_pd + reg_mr: %s",
		 mr ? "ok" : vt_errname(errno));
	if (mr)
		vt_check(ibv_dereg_mr(mr) == 0, "attacker: its own MR deregisters");
	if (pd)
		vt_check(ibv_dealloc_pd(pd) == 0, "attacker: its own PD deallocates");
	ibv_close_device(ctx);
	return vt_exit();
}

/* MRs of pid @pid listed by `rdma res show mr dev @name`; -1 on error */
static int res_mrs(const char *name, pid_t pid)
{
	char cmd[160], line[512], pat[32];
	int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma res show mr dev %s 2>/dev/null", name);
	snprintf(pat, sizeof(pat), " pid %d ", (int)pid);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (strstr(line, pat))
			n++;
	pclose(f);
	return n;
}

static void test_isolation(const char *name)
{
	struct ibv_mr *mr[NVICTIM], *mr2[4];
	uint32_t keys[NVICTIM], msg[NVICTIM + 1];
	struct ibv_context *ctx, *ctx2;
	struct ibv_pd *pd, *pd2, *pdx;
	int p[2], status, i, ok, ret;
	char *buf;
	pid_t pid;

	vt_info("---- (a) handles are per context ----");
	if (pipe(p)) {
		vt_bad("pipe: %s", strerror(errno));
		return;
	}
	fflush(stdout);
	/* forked before the victim opens the device: it shares nothing */
	pid = fork();
	if (pid < 0) {
		vt_bad("fork: %s", strerror(errno));
		return;
	}
	if (!pid) {
		close(p[1]);
		_exit(attacker(name, p[0]));
	}
	close(p[0]);

	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	buf = mmap(NULL, 64 * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		vt_bad("mmap: %s", strerror(errno));
		exit(2);
	}
	memset(buf, 0x5a, 64 * page);
	msg[0] = pd->handle;
	for (i = 0; i < NVICTIM; i++) {
		mr[i] = ibv_reg_mr(pd, buf + i * page, page,
				   i % 2 ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ : IBV_ACCESS_LOCAL_WRITE);
		if (!mr[i]) {
			vt_bad("victim: reg_mr #%d: %s", i, vt_errname(errno));
			exit(2);
		}
		keys[i] = mr[i]->lkey;
		msg[1 + i] = mr[i]->handle;
	}
	vt_ok("victim (pid %d): PD handle %u, %d MRs, handles %u..%u",
	      (int)getpid(), pd->handle, NVICTIM, msg[1], msg[NVICTIM]);
	vt_check(res_mrs(name, getpid()) == NVICTIM,
		 "rdma res show mr lists the victim's %d MRs: %d", NVICTIM,
		 res_mrs(name, getpid()));
	if (write(p[1], msg, sizeof(msg)) != (ssize_t)sizeof(msg))
		vt_bad("telling the attacker: %s", strerror(errno));
	close(p[1]);
	if (waitpid(pid, &status, 0) != pid)
		vt_bad("waitpid: %s", strerror(errno));
	else
		vt_check(WIFEXITED(status) && WEXITSTATUS(status) == 0,
			 "the attacker process passed its checks (status %#x)", status);

	/* a second context of this very process */
	ctx2 = vt_open(name);
	sweep("a second context of the victim's process", ctx2->cmd_fd, NULL, 0,
	      buf + 32 * page);
	pdx = vt_alloc_pd(ctx2);
	vt_check(ibv_dealloc_pd(pdx) == 0, "second context: alloc_pd + dealloc_pd work");
	vt_check(ibv_close_device(ctx2) == 0, "second context closed");

	/* a second PD in the victim's own context */
	pd2 = vt_alloc_pd(ctx);
	for (i = 0, ok = 1; i < 4; i++) {
		mr2[i] = ibv_reg_mr(pd2, buf + (16 + i) * page, 2 * page,
				    IBV_ACCESS_LOCAL_WRITE);
		if (!mr2[i]) {
			vt_bad("reg_mr on the second PD: %s", vt_errname(errno));
			ok = 0;
			continue;
		}
		for (int j = 0; j < NVICTIM; j++)
			if (mr2[i]->lkey == keys[j] || mr2[i]->handle == msg[1 + j])
				ok = 0;
	}
	vt_check(ok, "4 MRs on a second PD of the same context: keys and handles differ from the first PD's");
	ret = mr2[0] ? ibv_rereg_mr(mr2[0], IBV_REREG_MR_CHANGE_TRANSLATION |
				   IBV_REREG_MR_CHANGE_ACCESS, NULL,
				   buf + 24 * page, page,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ) : -1;
	vt_check(ret == 0, "rereg_mr of a second-PD MR (new translation): %d", ret);
	for (i = 0, ok = 1; i < 4; i++)
		if (mr2[i] && ibv_dereg_mr(mr2[i]))
			ok = 0;
	vt_check(ok, "the second PD's MRs deregister");
	vt_check(ibv_dealloc_pd(pd2) == 0, "the second PD deallocates");

	/* the victim's MRs are intact */
	vt_check(res_mrs(name, getpid()) == NVICTIM,
		 "after all that, rdma res show mr still lists the victim's %d MRs: %d",
		 NVICTIM, res_mrs(name, getpid()));
	ret = ibv_dealloc_pd(pd);
	vt_check(ret == EBUSY, "the victim's PD is still in use: dealloc_pd is %s (expected EBUSY)",
		 vt_errname(ret));
	for (i = 0, ok = 0; i < NVICTIM; i++) {
		ret = ibv_rereg_mr(mr[i], IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
		if (!ret && mr[i]->lkey == keys[i] && mr[i]->rkey == keys[i])
			ok++;
	}
	vt_check(ok == NVICTIM, "each victim MR still re-registers in place (access) and keeps its key: %d of %d",
		 ok, NVICTIM);
	for (i = 0, ok = 0; i < NVICTIM; i++)
		ok += ibv_dereg_mr(mr[i]) == 0;
	vt_check(ok == NVICTIM, "each victim MR deregisters: %d of %d", ok, NVICTIM);
	vt_check(res_mrs(name, getpid()) == 0, "none listed afterwards: %d",
		 res_mrs(name, getpid()));
	vt_check(ibv_dealloc_pd(pd) == 0, "the victim's PD deallocates");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	munmap(buf, 64 * page);
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void test_keys(const char *name, long n)
{
	uint32_t *keys = calloc(n, sizeof(*keys)), *sorted = calloc(n, sizeof(*keys));
	long i, got = 0, dup = 0, rep = 0, idx_step1 = 0, bad_rkey = 0;
	struct ibv_mr **mrs = calloc(n, sizeof(*mrs));
	unsigned int bytes[256] = { 0 }, nbytes = 0;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	double frac;
	char *buf;

	vt_info("---- (b) %ld keys in a row ----", n);
	buf = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!keys || !sorted || !mrs || buf == MAP_FAILED) {
		vt_bad("allocating memory for %ld MRs", n);
		exit(2);
	}
	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	for (i = 0; i < n; i++) {
		mrs[i] = ibv_reg_mr(pd, buf + i * page, page, IBV_ACCESS_LOCAL_WRITE);
		if (!mrs[i]) {
			vt_bad("reg_mr #%ld: %s", i, vt_errname(errno));
			break;
		}
		keys[i] = mrs[i]->lkey;
		bad_rkey += mrs[i]->rkey != mrs[i]->lkey;
		got++;
	}
	vt_check(got == n, "registered %ld MRs one after the other", got);
	vt_check(!bad_rkey, "lkey == rkey for each (%ld differ)", bad_rkey);
	vt_info("first keys: %#x %#x %#x %#x %#x %#x", keys[0], keys[1],
		keys[2], keys[3], keys[4], keys[5]);

	memcpy(sorted, keys, got * sizeof(*keys));
	qsort(sorted, got, sizeof(*sorted), cmp_u32);
	for (i = 1; i < got; i++)
		dup += sorted[i] == sorted[i - 1];
	vt_check(!dup, "the %ld keys are distinct (%ld duplicates)", got, dup);

	for (i = 0; i < got; i++)
		if (!bytes[keys[i] & 0xff]++)
			nbytes++;
	vt_check(nbytes > 1, "the key byte (low 8 bits) is not constant: %u distinct values of 256",
		 nbytes);

	for (i = 2; i < got; i++)
		rep += keys[i] - keys[i - 1] == keys[i - 1] - keys[i - 2];
	frac = got > 2 ? (double)rep / (got - 2) : 1;
	vt_check(got > 2 && frac < 0.10,
		 "consecutive key differences that repeat the previous one: %ld of %ld (%.1f%%, must be < 10%%): not an arithmetic sequence",
		 rep, got - 2, 100 * frac);

	for (i = 1; i < got; i++)
		idx_step1 += (keys[i] >> 8) - (keys[i - 1] >> 8) == 1;
	vt_check(got > 1 && idx_step1 * 10 < got - 1,
		 "the index part (key >> 8) grew by exactly 1 in %ld of %ld steps (must be < 10%%): indices are random, so a neighbour's key does not follow from one's own",
		 idx_step1, got - 1);

	for (i = 0; i < got; i++)
		if (ibv_dereg_mr(mrs[i]))
			dup++;
	vt_check(!dup, "deregistered all %ld", got);
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	munmap(buf, n * page);
	free(keys);
	free(sorted);
	free(mrs);
}

/* reg with @access0, then rereg ACCESS to writable: must be refused */
static void no_write_upgrade(struct ibv_pd *pd, const char *what, char *p,
			     size_t len)
{
	int wr = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		 IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr;
	int ret;

	errno = 0;
	mr = ibv_reg_mr(pd, p, len, IBV_ACCESS_LOCAL_WRITE);
	vt_check(!mr && errno == EFAULT, "%s: reg_mr LOCAL_WRITE is refused: %s (expected EFAULT)",
		 what, mr ? "it succeeded" : vt_errname(errno));
	if (mr)
		ibv_dereg_mr(mr);
	mr = ibv_reg_mr(pd, p, len, IBV_ACCESS_REMOTE_READ);
	if (!vt_check(mr != NULL, "%s: reg_mr REMOTE_READ (read-only): %s", what,
		      mr ? "ok" : vt_errname(errno)))
		return;
	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0, wr);
	vt_check(ret != 0,
		 "%s: rereg_mr ACCESS -> LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ over pages pinned read-only is refused: %s",
		 what, ret ? vt_errname(errno) :
		 "it SUCCEEDED: the MR now grants write access to read-only memory");
	vt_check(ibv_dereg_mr(mr) == 0, "%s: dereg_mr", what);
}

static void test_no_write_upgrade(const char *name)
{
	const char *path = "/tmp/shca_keys.ro";
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *fmap, *anon, data[4 * 4096];
	int fd;

	vt_info("---- (c) no write access through re-registration ----");
	memset(data, 0x77, sizeof(data));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0444);
	if (fd < 0 || write(fd, data, sizeof(data)) != (ssize_t)sizeof(data)) {
		vt_bad("creating %s: %s", path, strerror(errno));
		return;
	}
	close(fd);
	fd = open(path, O_RDONLY);
	fmap = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof(data), PROT_READ, MAP_SHARED, fd, 0);
	anon = mmap(NULL, sizeof(data), PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fmap == MAP_FAILED || anon == MAP_FAILED) {
		vt_bad("mapping read-only memory: %s", strerror(errno));
		return;
	}
	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	no_write_upgrade(pd, "file opened O_RDONLY, mmap PROT_READ MAP_SHARED", fmap,
			 sizeof(data));
	no_write_upgrade(pd, "anonymous PROT_READ, never written (zero page)", anon,
			 sizeof(data));
	vt_check(fmap[0] == 0x77 && fmap[sizeof(data) - 1] == 0x77,
		 "the file's contents are unchanged");
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	munmap(fmap, sizeof(data));
	munmap(anon, sizeof(data));
	close(fd);
	unlink(path);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 1000;

	if (n < 3 || n > 100000) {
		fprintf(stderr, "usage: %s DEV [N (3..100000, default 1000)]\n", argv[0]);
		return 2;
	}
	page = sysconf(_SC_PAGESIZE);
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_isolation(name);
	test_keys(name, n);
	test_no_write_upgrade(name);
	return vt_exit();
}
