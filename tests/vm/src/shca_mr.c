// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr DEV: user memory registration through libibverbs: ibv_reg_mr on
 * heap, stack, anonymous and read-only mappings, every valid combination
 * of access flags, the invalid ones, bad ranges; ibv_rereg_mr (access,
 * translation, PD); ibv_dereg_mr; ibv_reg_dmabuf_mr over udmabuf; PD
 * lifetime against its MRs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <linux/udmabuf.h>

#include "vmtest.h"

static struct ibv_context *ctx;
static size_t page;

static const char *access_str(int access)
{
	static char buf[160];

	buf[0] = '\0';
	if (!access)
		return "0";
	if (access & IBV_ACCESS_LOCAL_WRITE)
		strcat(buf, "|LOCAL_WRITE");
	if (access & IBV_ACCESS_REMOTE_WRITE)
		strcat(buf, "|REMOTE_WRITE");
	if (access & IBV_ACCESS_REMOTE_READ)
		strcat(buf, "|REMOTE_READ");
	if (access & IBV_ACCESS_REMOTE_ATOMIC)
		strcat(buf, "|REMOTE_ATOMIC");
	if (access & IBV_ACCESS_MW_BIND)
		strcat(buf, "|MW_BIND");
	if (access & IBV_ACCESS_ZERO_BASED)
		strcat(buf, "|ZERO_BASED");
	if (access & IBV_ACCESS_ON_DEMAND)
		strcat(buf, "|ON_DEMAND");
	if (access & IBV_ACCESS_RELAXED_ORDERING)
		strcat(buf, "|RELAXED_ORDERING");
	access &= ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
		    IBV_ACCESS_MW_BIND | IBV_ACCESS_ZERO_BASED |
		    IBV_ACCESS_ON_DEMAND | IBV_ACCESS_RELAXED_ORDERING);
	if (access)
		snprintf(buf + strlen(buf), sizeof(buf) - strlen(buf), "|0x%x",
			 (unsigned int)access);
	return buf + 1;
}

/*
 * Register [addr, addr + len) with @access; expect errno @want (0: success,
 * then check the MR and deregister it).
 */
static void expect_reg(const char *what, struct ibv_pd *pd, void *addr,
		       size_t len, int access, int want)
{
	struct ibv_mr *mr;
	int err;

	errno = 0;
	mr = ibv_reg_mr(pd, addr, len, access);
	if (!want) {
		if (!mr) {
			vt_bad("reg_mr %s len %zu access %s: expected success, got %s",
			       what, len, access_str(access), vt_errname(errno));
			return;
		}
		if (mr->addr != addr || mr->length != len || mr->pd != pd ||
		    mr->context != ctx)
			vt_bad("reg_mr %s: ibv_mr fields wrong (addr %p/%p length %zu/%zu)",
			       what, mr->addr, addr, mr->length, len);
		else
			vt_ok("reg_mr %s len %zu access %s: lkey 0x%x rkey 0x%x",
			      what, len, access_str(access), mr->lkey, mr->rkey);
		err = ibv_dereg_mr(mr);
		if (err)
			vt_bad("dereg_mr %s: %s", what, vt_errname(err));
		return;
	}
	if (mr) {
		vt_bad("reg_mr %s len %zu access %s: expected %s, but it succeeded",
		       what, len, access_str(access), vt_errname(want));
		ibv_dereg_mr(mr);
		return;
	}
	vt_check(errno == want, "reg_mr %s len %zu access %s: %s (expected %s)",
		 what, len, access_str(access), vt_errname(errno),
		 vt_errname(want));
}

static void *map_anon(size_t len, int prot)
{
	void *p = mmap(NULL, len, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		vt_bad("mmap %zu bytes: %s", len, strerror(errno));
		exit(2);
	}
	return p;
}

static void test_buffers(struct ibv_pd *pd)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	char stack_buf[2 * 4096];
	char *heap, *anon, *ro, *gone, *half;

	vt_info("---- memory kinds ----");
	heap = malloc(3 * page + 123);
	if (!heap)
		exit(2);
	memset(heap, 0x5a, 3 * page + 123);
	expect_reg("heap (unaligned)", pd, heap + 7, 3 * page + 100, rw, 0);
	free(heap);

	memset(stack_buf, 0xa5, sizeof(stack_buf));
	expect_reg("stack", pd, stack_buf + 100, sizeof(stack_buf) - 200, rw, 0);

	anon = map_anon(16 * page, PROT_READ | PROT_WRITE);
	expect_reg("anonymous mmap, untouched", pd, anon, 16 * page, rw, 0);
	memset(anon, 1, 16 * page);
	expect_reg("anonymous mmap", pd, anon, 16 * page, rw, 0);
	expect_reg("one byte", pd, anon + 5, 1, rw, 0);
	expect_reg("page-crossing 2 bytes", pd, anon + page - 1, 2, rw, 0);

	ro = map_anon(4 * page, PROT_READ | PROT_WRITE);
	memset(ro, 3, 4 * page);
	if (mprotect(ro, 4 * page, PROT_READ))
		exit(2);
	expect_reg("read-only mapping", pd, ro, 4 * page, 0, 0);
	expect_reg("read-only mapping", pd, ro, 4 * page,
		   IBV_ACCESS_REMOTE_READ, 0);
	expect_reg("read-only mapping", pd, ro, 4 * page,
		   IBV_ACCESS_LOCAL_WRITE, EFAULT);
	expect_reg("read-only mapping", pd, ro, 4 * page, rw, EFAULT);

	gone = map_anon(4 * page, PROT_READ | PROT_WRITE);
	munmap(gone, 4 * page);
	expect_reg("unmapped range", pd, gone, 4 * page, 0, EFAULT);
	expect_reg("unmapped range", pd, gone, 4 * page,
		   IBV_ACCESS_LOCAL_WRITE, EFAULT);
	/* Mapped first half, hole behind it. */
	half = map_anon(8 * page, PROT_READ | PROT_WRITE);
	munmap(half + 4 * page, 4 * page);
	memset(half, 4, 4 * page);
	expect_reg("range running into unmapped memory", pd, half + 2 * page,
		   4 * page, 0, EFAULT);
	munmap(half, 4 * page);
	expect_reg("NULL address", pd, NULL, page, 0, EFAULT);

	vt_info("---- bad lengths ----");
	expect_reg("length 0", pd, anon, 0, rw, EINVAL);
	expect_reg("length 0", pd, anon, 0, 0, EINVAL);
	expect_reg("length 2^41 (> max_mr_size)", pd, anon, 1ULL << 41, 0,
		   EINVAL);

	munmap(ro, 4 * page);
	munmap(anon, 16 * page);
}

/*
 * The core refuses IBV_ACCESS_ON_DEMAND on a device without ODP before the
 * driver is called (ib_check_mr_access()): EOPNOTSUPP in 6.12, EINVAL in
 * 6.1.
 */
static int no_odp_errno(void)
{
	struct utsname u;
	int major = 0, minor = 0;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return EOPNOTSUPP;
	return major < 6 || (major == 6 && minor < 2) ? EINVAL : EOPNOTSUPP;
}

/* What ON_DEMAND gets: 0 where the device pages on demand. */
static int odp_errno(struct ibv_context *dctx)
{
	struct ibv_query_device_ex_input in = { 0 };
	struct ibv_device_attr_ex ax;

	if (!ibv_query_device_ex(dctx, &in, &ax) &&
	    (ax.odp_caps.general_caps & IBV_ODP_SUPPORT))
		return 0;
	return no_odp_errno();
}

static void test_access(struct ibv_pd *pd)
{
	static const int bits[] = {
		IBV_ACCESS_LOCAL_WRITE, IBV_ACCESS_REMOTE_WRITE,
		IBV_ACCESS_REMOTE_READ, IBV_ACCESS_REMOTE_ATOMIC,
	};
	char *buf = map_anon(4 * page, PROT_READ | PROT_WRITE);
	unsigned int combo, i;

	vt_info("---- access flags ----");
	for (combo = 0; combo < 16; combo++) {
		int access = 0, want = 0;

		for (i = 0; i < 4; i++)
			if (combo & (1U << i))
				access |= bits[i];
		/* Remote write and atomics need local write (IBA o10-37). */
		if ((access & (IBV_ACCESS_REMOTE_WRITE |
			       IBV_ACCESS_REMOTE_ATOMIC)) &&
		    !(access & IBV_ACCESS_LOCAL_WRITE))
			want = EINVAL;
		expect_reg("combination", pd, buf, 4 * page, access, want);
	}
	/* Optional flags are dropped when unsupported, never an error. */
	expect_reg("optional flag", pd, buf, 4 * page,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING, 0);
	/* On-demand paging where the device offers it, else refused. */
	expect_reg("ON_DEMAND", pd, buf, 4 * page,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_ON_DEMAND,
		   odp_errno(pd->context));
	expect_reg("memory windows may bind", pd, buf, 4 * page,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND, 0);
	expect_reg("undefined flag bit 30", pd, buf, 4 * page, 1 << 30, EINVAL);

	/* iova != address */
	{
		struct ibv_mr *mr = ibv_reg_mr_iova(pd, buf, 4 * page, 0x100000,
						    IBV_ACCESS_LOCAL_WRITE);

		if (vt_check(mr != NULL, "reg_mr_iova iova 0x100000: %s",
			     mr ? "ok" : vt_errname(errno)))
			ibv_dereg_mr(mr);
		errno = 0;
		mr = ibv_reg_mr_iova(pd, buf, 4 * page, 0x100001,
				     IBV_ACCESS_LOCAL_WRITE);
		if (mr) {
			vt_bad("reg_mr_iova with iova and address at different page offsets succeeded");
			ibv_dereg_mr(mr);
		} else {
			vt_check(errno == EINVAL,
				 "reg_mr_iova with iova and address at different page offsets: %s (expected EINVAL)",
				 vt_errname(errno));
		}
	}
	munmap(buf, 4 * page);
}

static void test_rereg(struct ibv_pd *pd)
{
	const int lw = IBV_ACCESS_LOCAL_WRITE;
	char *buf1 = map_anon(4 * page, PROT_READ | PROT_WRITE);
	char *buf2 = map_anon(4 * page, PROT_READ | PROT_WRITE);
	char *gone = map_anon(page, PROT_READ | PROT_WRITE);
	struct ibv_pd *pd2 = vt_alloc_pd(ctx);
	struct ibv_mr *mr;
	int ret;

	vt_info("---- ibv_rereg_mr ----");
	munmap(gone, page);
	mr = ibv_reg_mr(pd, buf1, 4 * page, lw);
	if (!vt_check(mr != NULL, "reg_mr for rereg: %s",
		      mr ? "ok" : vt_errname(errno)))
		goto out;
	vt_info("lkey 0x%x rkey 0x%x", mr->lkey, mr->rkey);

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   lw | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	vt_check(ret == 0, "rereg ACCESS -> LOCAL_WRITE|REMOTE_WRITE|REMOTE_READ: %d (%s)",
		 ret, ret ? vt_errname(errno) : "ok");

	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
			   IBV_ACCESS_REMOTE_WRITE);
	vt_check(ret == IBV_REREG_MR_ERR_CMD && errno == EINVAL,
		 "rereg ACCESS -> REMOTE_WRITE alone: %d, %s (expected IBV_REREG_MR_ERR_CMD, EINVAL)",
		 ret, vt_errname(errno));

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, buf2,
			   2 * page, 0);
	if (vt_check(ret == 0, "rereg TRANSLATION -> other buffer, 2 pages: %d (%s)",
		     ret, ret ? vt_errname(errno) : "ok")) {
		vt_check(mr->addr == buf2 && mr->length == 2 * page,
			 "ibv_mr addr/length follow the new translation");
		vt_info("lkey 0x%x rkey 0x%x", mr->lkey, mr->rkey);
	}

	errno = 0;
	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL, gone,
			   page, 0);
	vt_check(ret == IBV_REREG_MR_ERR_CMD && errno == EFAULT,
		 "rereg TRANSLATION -> unmapped range: %d, %s (expected IBV_REREG_MR_ERR_CMD, EFAULT)",
		 ret, vt_errname(errno));
	vt_check(mr->addr == buf2, "a failed rereg leaves the MR as it was");

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0);
	if (vt_check(ret == 0, "rereg PD -> second PD: %d (%s)", ret,
		     ret ? vt_errname(errno) : "ok")) {
		vt_check(mr->pd == pd2, "ibv_mr pd follows");
		ret = ibv_dealloc_pd(pd2);
		vt_check(ret == EBUSY,
			 "dealloc_pd of the PD the MR moved to: %s (expected EBUSY)",
			 vt_errname(ret));
	}

	ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION |
			   IBV_REREG_MR_CHANGE_PD | IBV_REREG_MR_CHANGE_ACCESS,
			   pd, buf1, 4 * page, lw | IBV_ACCESS_REMOTE_READ);
	vt_check(ret == 0 && mr->pd == pd && mr->addr == buf1,
		 "rereg TRANSLATION|PD|ACCESS back to the first buffer and PD: %d (%s)",
		 ret, ret ? vt_errname(errno) : "ok");

	errno = 0;
	ret = ibv_rereg_mr(mr, 0, NULL, NULL, 0, 0);
	vt_check(ret != 0 && errno == EINVAL,
		 "rereg with no flags: %d, %s (expected an error, EINVAL)", ret,
		 vt_errname(errno));

	ret = ibv_dereg_mr(mr);
	vt_check(ret == 0, "dereg_mr after rereg: %s", vt_errname(ret));
out:
	ret = ibv_dealloc_pd(pd2);
	vt_check(ret == 0, "dealloc_pd of the emptied second PD: %s",
		 vt_errname(ret));
	munmap(buf1, 4 * page);
	munmap(buf2, 4 * page);
}

static void test_dmabuf(struct ibv_pd *pd)
{
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	struct ibv_mr *mr;
	int fd, ret;

	vt_info("---- ibv_reg_dmabuf_mr ----");
	fd = vt_make_dmabuf(4 * page, NULL);
	if (fd < 0) {
		vt_info("no udmabuf (%s): dma-buf MRs not tested", strerror(errno));
		return;
	}
	mr = ibv_reg_dmabuf_mr(pd, 0, 4 * page, 0, fd, rw);
	if (vt_check(mr != NULL, "reg_dmabuf_mr 4 pages at iova 0: %s",
		     mr ? "ok" : vt_errname(errno))) {
		vt_check(mr->length == 4 * page && mr->pd == pd,
			 "ibv_mr fields set (lkey 0x%x)", mr->lkey);
		errno = 0;
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				   0, IBV_ACCESS_LOCAL_WRITE);
		vt_check(ret == IBV_REREG_MR_ERR_INPUT && errno == EINVAL,
			 "rereg_mr of a dma-buf MR is refused by libibverbs: %d, %s",
			 ret, vt_errname(errno));
		ret = ibv_dereg_mr(mr);
		vt_check(ret == 0, "dereg_mr of the dma-buf MR: %s", vt_errname(ret));
	}
	mr = ibv_reg_dmabuf_mr(pd, page, 2 * page, 0x200000, fd,
			       IBV_ACCESS_REMOTE_READ);
	vt_check(mr != NULL, "reg_dmabuf_mr pages 1..2 at iova 0x200000: %s",
		 mr ? "ok" : vt_errname(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 2 * page, 4 * page, 0, fd, rw);
	vt_check(!mr && errno == EINVAL,
		 "reg_dmabuf_mr beyond the dma-buf: %s (expected EINVAL)",
		 mr ? "it succeeded" : vt_errname(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, page, 0, fd, IBV_ACCESS_REMOTE_WRITE);
	vt_check(!mr && errno == EINVAL,
		 "reg_dmabuf_mr REMOTE_WRITE without LOCAL_WRITE: %s (expected EINVAL)",
		 mr ? "it succeeded" : vt_errname(errno));
	if (mr)
		ibv_dereg_mr(mr);
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, 0, page, 0, 0, rw);
	vt_check(!mr && errno != 0, "reg_dmabuf_mr on a non-dma-buf fd: %s",
		 mr ? "it succeeded" : vt_errname(errno));
	if (mr)
		ibv_dereg_mr(mr);
	close(fd);
}

static void test_pd_lifetime(void)
{
	struct ibv_pd *pd = vt_alloc_pd(ctx);
	char *buf = map_anon(page, PROT_READ | PROT_WRITE);
	struct ibv_mr *mr;
	int ret;

	vt_info("---- PD lifetime ----");
	mr = ibv_reg_mr(pd, buf, page, IBV_ACCESS_LOCAL_WRITE);
	if (!vt_check(mr != NULL, "reg_mr: %s", mr ? "ok" : vt_errname(errno)))
		goto out;
	ret = ibv_dealloc_pd(pd);
	vt_check(ret == EBUSY, "dealloc_pd with an MR on it: %s (expected EBUSY)",
		 vt_errname(ret));
	ret = ibv_dereg_mr(mr);
	vt_check(ret == 0, "dereg_mr: %s", vt_errname(ret));
out:
	ret = ibv_dealloc_pd(pd);
	vt_check(ret == 0, "dealloc_pd: %s", vt_errname(ret));
	munmap(buf, page);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	struct ibv_pd *pd;

	page = sysconf(_SC_PAGESIZE);
	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);

	test_buffers(pd);
	test_access(pd);
	test_rereg(pd);
	test_dmabuf(pd);
	test_pd_lifetime();

	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	return vt_exit();
}
