// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_fuzz DEV SEED ITERS [PROCS]: a bounded, deterministic fuzzer of the
 * uverbs interface of a softhca device.
 *
 * PROCS children (default 4) each open their own context and run ITERS
 * operations chosen by a xorshift generator seeded with SEED and the
 * child's number, mixing libibverbs calls with raw uverbs write() commands
 * on the context's cmd_fd (which carry values libibverbs would never send):
 *
 *   PD     ibv_alloc_pd/ibv_dealloc_pd, raw ALLOC_PD/DEALLOC_PD with live,
 *          stale, foreign-type, small and boundary handles
 *   MR     ibv_reg_mr_iova2 and raw REG_MR over good, read-only,
 *          PROT_NONE, unmapped, NULL, kernel-half, non-canonical and random
 *          addresses; lengths 0, 1, huge, wrapping, > max_mr_size; random
 *          iova; access flags from all 32 bits; bad response pointers
 *   REREG  ibv_rereg_mr and raw REREG_MR with random flags (all 32 bits),
 *          handles, PDs, translations and access
 *   DEREG  ibv_dereg_mr and raw DEREG_MR of live, stale and random handles
 *   HDR    raw commands with short in_words/out_words
 *   DM     ibv_alloc_dm (random length/alignment/comp_mask), ibv_free_dm,
 *          ibv_memcpy_to/from_dm (random offset/length), ibv_reg_dm_mr
 *          (random offset/length/access), raw mmap() of cmd_fd at random
 *          and at real DM offsets (then reg_mr on that VM_PFNMAP mapping)
 *   DMABUF ibv_reg_dmabuf_mr with a udmabuf, random fds, offsets, lengths
 *   VM     munmap/mremap/mmap of memory while it is registered
 *   CQ     ibv_create_cq (random, zero, negative and too large sizes,
 *          comp vectors), ibv_destroy_cq (EBUSY while a QP uses it),
 *          ibv_poll_cq and raw POLL_CQ with any handle
 *   QP     ibv_create_qp (every QP type, capabilities around the limits),
 *          ibv_modify_qp towards a random state with the right or random
 *          attributes, connected to itself or to another QP of the
 *          process, ibv_destroy_qp
 *   POST   ibv_post_send/ibv_post_recv chains with random opcodes, flags
 *          (inline included), SGE counts, addresses, lengths, lkeys,
 *          rkeys and remote addresses (live keys or not), executed by the
 *          device against the process' own memory
 *
 * Every result is checked against a model of the context (which handle is
 * what object, which PD and DM each MR uses, which memory is mapped how):
 * a success where an error was due, or an errno outside the expected set,
 * is an "unexpected" result and fails the run. Children 2, 5, ... (i % 3
 * == 2) are SIGKILLed half way; children 1, 4, ... exit without cleaning
 * up (the kernel tears their context down); children 0, 3, ... destroy
 * everything themselves, expecting success each time. The same seed gives
 * the same sequence of operations; addresses (ASLR), device-memory
 * contention between the processes and the moment of the kill vary. The parent
 * waits for all, prints per-operation counts and checks the system's
 * pinned pages (/proc/vmstat) are back to where they were.
 *
 * Exit status: 0 if there was no unexpected result, 1 otherwise, 2 if it
 * could not run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/udmabuf.h>
#include <rdma/ib_user_verbs.h>

#include "vmtest.h"

/* ---- the kernel's rules (6.12), as the oracle needs them ---------------- */

#define A_LW		(1U << 0)
#define A_RW		(1U << 1)
#define A_RR		(1U << 2)
#define A_RA		(1U << 3)
#define A_MW		(1U << 4)
#define A_ZB		(1U << 5)
#define A_ODP		(1U << 6)
#define A_HUGE		(1U << 7)
#define A_FLUSH_G	(1U << 8)
#define A_FLUSH_P	(1U << 9)
#define A_OPTIONAL	(((1U << 29) << 1) - (1U << 20))	/* bits 20..29 */
#define A_RELAXED	(1U << 20)
#define IB_ACCESS_SUPP	(A_HUGE | A_OPTIONAL | ((A_FLUSH_P << 1) - 1))
#define SHCA_ACCESS	(A_LW | A_RW | A_RR | A_RA | A_ZB)
#define A_WRITABLE	(A_LW | A_RW | A_RA | A_MW)	/* ib_access_writable() */

#define REREG_TRANS	1U
#define REREG_PD	2U
#define REREG_ACCESS	4U

#define MAX_MR_SIZE	(1ULL << 40)
#define DM_SIZE		(1ULL << 20)
#define DM_MAX_ALIGN	20

/* ib_check_mr_access() of the core: first error or 0 */
static int core_access_err(uint32_t a)
{
	if ((a & (A_RA | A_RW)) && !(a & A_LW))
		return EINVAL;
	if (a & ~IB_ACCESS_SUPP)
		return EINVAL;
	if (a & A_ODP)
		return EOPNOTSUPP;
	if (a & (A_FLUSH_G | A_FLUSH_P))
		return EOPNOTSUPP;
	return 0;
}

/* shca_mr_check_access() */
static int drv_access_err(uint32_t a)
{
	a &= ~A_OPTIONAL;
	if (a & ~IB_ACCESS_SUPP)
		return EINVAL;
	if ((a & (A_RW | A_RA)) && !(a & A_LW))
		return EINVAL;
	if (a & ~SHCA_ACCESS)
		return EOPNOTSUPP;
	return 0;
}

/* ---- expected results ---------------------------------------------------- */

/* set of acceptable outcomes: bit 0 = success, bit E = errno E (< 128) */
typedef unsigned __int128 expect_t;
#define XOK		((expect_t)1)
#define X(e)		((expect_t)1 << (e))

static int in_expect(expect_t x, int err)
{
	return err >= 0 && err < 128 && (x & X(err));
}

static const char *expect_str(expect_t x, char *buf, size_t size)
{
	size_t n = 0;
	int e;

	buf[0] = 0;
	for (e = 0; e < 128 && n < size; e++)
		if (x & X(e))
			n += snprintf(buf + n, size - n, "%s%s", n ? "|" : "",
				      e ? vt_errname(e) : "ok");
	return buf;
}

/* ---- random numbers -------------------------------------------------------- */

static uint64_t rng;

static uint64_t rnd(void)
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545F4914F6CDD1DULL;
}

static uint64_t rndn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

/* ---- statistics, shared with the parent ---------------------------------- */

enum op {
	OP_PD_ALLOC, OP_PD_ALLOC_RAW, OP_PD_DEALLOC, OP_PD_DEALLOC_RAW,
	OP_REG, OP_REG_RAW, OP_REREG, OP_REREG_RAW, OP_DEREG, OP_DEREG_RAW,
	OP_HDR_RAW, OP_DM_ALLOC, OP_DM_FREE, OP_DM_COPY, OP_DM_MR,
	OP_DM_MMAP, OP_DMABUF_MR, OP_VM, OP_CQ_CREATE, OP_CQ_DESTROY,
	OP_POLL, OP_POLL_RAW, OP_QP_CREATE, OP_QP_MODIFY, OP_QP_DESTROY,
	OP_POST_SEND, OP_POST_RECV, OP_CLEANUP, NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"alloc_pd", "raw ALLOC_PD", "dealloc_pd", "raw DEALLOC_PD",
	"reg_mr", "raw REG_MR", "rereg_mr", "raw REREG_MR", "dereg_mr",
	"raw DEREG_MR", "raw bad header", "alloc_dm", "free_dm",
	"memcpy to/from dm", "reg_dm_mr", "mmap cmd_fd", "reg_dmabuf_mr",
	"munmap/mremap", "create_cq", "destroy_cq", "poll_cq",
	"raw POLL_CQ", "create_qp", "modify_qp", "destroy_qp", "post_send",
	"post_recv", "final cleanup",
};

struct stats {
	uint64_t n[NR_OPS], ok[NR_OPS], err[NR_OPS], unexp[NR_OPS];
	uint64_t iters;
	int finished;
};

static struct stats *st;
static int child_no;
static uint64_t iter;
static unsigned int reported;

#define MAX_REPORTS 25

static void __attribute__((format(printf, 4, 5)))
account(enum op op, int err, expect_t x, const char *fmt, ...)
{
	char what[512], exp[160];
	va_list ap;

	st->n[op]++;
	if (in_expect(x, err)) {
		if (err)
			st->err[op]++;
		else
			st->ok[op]++;
		return;
	}
	st->unexp[op]++;
	if (reported++ >= MAX_REPORTS)
		return;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	vt_bad("[child %d iter %" PRIu64 "] %s %s: got %s, expected %s",
	       child_no, iter, op_names[op], what, vt_errname(err),
	       expect_str(x, exp, sizeof(exp)));
}

/* ---- the model of the context ------------------------------------------- */

enum { T_NONE, T_PD, T_MR, T_DM, T_CQ, T_QP };

#define MAXH	4096

struct kobj {
	int type;
	uint32_t pd;		/* MR: its PD's handle */
	int dm;			/* MR: DM handle or -1 */
	uint64_t len;		/* DM: length; user MR: length pinned */
	uint32_t access;	/* MR: its access flags */
	uint64_t start;		/* user MR: address (or dma-buf offset) pinned */
	uint64_t iova;		/* user MR: its iova */
	int wpin;		/* user MR: pinned for writing */
	int dmabuf;		/* user MR: over a dma-buf */
	uint32_t scq, rcq;	/* QP: its CQs' handles (and pd: its PD's) */
};

static struct kobj tab[MAXH];
/* Bumped whenever the mappings of cmd_fd may have changed. */
static unsigned int maps_gen;
static uint32_t freed[16];	/* recently destroyed handles */
static unsigned int nfreed;

static int ktype(uint32_t h)
{
	return h < MAXH ? tab[h].type : T_NONE;
}

static void kset(uint32_t h, int type)
{
	maps_gen++;
	if (h >= MAXH) {
		vt_bad("[child %d] the kernel returned handle %u, beyond the model's %u",
		       child_no, h, MAXH);
		exit(1);
	}
	if (tab[h].type != T_NONE)
		vt_bad("[child %d iter %" PRIu64 "] the kernel returned handle %u, which is still live in the model",
		       child_no, iter, h);
	memset(&tab[h], 0, sizeof(tab[h]));
	tab[h].type = type;
	tab[h].dm = -1;
}

static void kdel(uint32_t h)
{
	maps_gen++;
	if (h < MAXH)
		tab[h].type = T_NONE;
	freed[nfreed++ % 16] = h;
}

static unsigned int users_of(uint32_t h, int as_dm)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAXH; i++)
		if (tab[i].type == T_MR &&
		    (as_dm ? tab[i].dm == (int)h : tab[i].pd == h))
			n++;
	return n;
}

/* QPs of the model on PD @h (as_cq: using CQ @h) */
static unsigned int qp_users(uint32_t h, int as_cq)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAXH; i++)
		if (tab[i].type == T_QP &&
		    (as_cq ? tab[i].scq == h || tab[i].rcq == h : tab[i].pd == h))
			n++;
	return n;
}

/* errno of looking handle @h up as an object of @type (idr lookup rules) */
static int lookup_err(uint32_t h, int type)
{
	int t = ktype(h);

	if (t == T_NONE)
		return ENOENT;
	return t == type ? 0 : EINVAL;
}

/* a live handle of @type, or -1 */
static int64_t live_of(int type)
{
	unsigned int n = 0, i, pick;

	for (i = 0; i < MAXH; i++)
		if (tab[i].type == type)
			n++;
	if (!n)
		return -1;
	pick = rndn(n);
	for (i = 0; i < MAXH; i++)
		if (tab[i].type == type && !pick--)
			return i;
	return -1;
}

static uint32_t any_handle(int type)
{
	static const uint32_t boundary[] = {
		0, 1, 2, 0x7fffffffU, 0x80000000U, 0xfffffffeU, 0xffffffffU,
		0xffffU, 0x10000U, MAXH - 1, MAXH,
	};
	int64_t h;

	switch (rndn(10)) {
	case 0: case 1: case 2: case 3:
		h = live_of(type);
		if (h >= 0)
			return h;
		/* fall through */
	case 4: case 5:
		h = live_of(T_PD + rndn(5));
		if (h >= 0)
			return h;
		/* fall through */
	case 6:
		if (nfreed)
			return freed[rndn(nfreed < 16 ? nfreed : 16)];
		/* fall through */
	case 7: case 8:
		return rndn(64);
	default:
		return boundary[rndn(sizeof(boundary) / sizeof(boundary[0]))];
	}
}

/* userspace objects of libibverbs; may be stale (the model decides) */
#define MAX_PD	8
#define MAX_MR	96
#define MAX_DM	4
#define MAX_RAWMAP 4

static struct ibv_context *ctx;
static int cmd_fd;
static size_t page;
static struct ibv_pd *pds[MAX_PD];
static struct ibv_mr *mrs[MAX_MR];
static int mr_dmabuf[MAX_MR];
static struct ibv_dm *dms[MAX_DM];
static struct { void *addr; size_t len; } rawmaps[MAX_RAWMAP];

/* rdma-core 44's struct verbs_dm (infiniband/driver.h, not installed) */
struct vt_verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

static uint32_t dm_handle(struct ibv_dm *dm)
{
	return ((struct vt_verbs_dm *)dm)->handle;
}

/*
 * The mappings of cmd_fd in this process, from /proc/self/maps: addresses,
 * page offsets and lengths, at most @max. The provider maps each DM and
 * each CQ ring once, at an offset the kernel chose, and unmaps it when
 * the object goes; the others are this fuzzer's raw mappings.
 */
static int uverbs_maps(uint64_t *addr, uint64_t *pgoff, uint64_t *len,
		       int max)
{
	char line[512], path[256];
	unsigned long start, end;
	unsigned long long off;
	FILE *f = fopen("/proc/self/maps", "r");
	int n = 0;

	if (!f)
		return 0;
	while (n < max && fgets(line, sizeof(line), f)) {
		path[0] = 0;
		if (sscanf(line, "%lx-%lx %*s %llx %*s %*s %255s", &start, &end,
			   &off, path) == 4 && strstr(path, "uverbs")) {
			addr[n] = start;
			pgoff[n] = off / page;
			len[n++] = end - start;
		}
	}
	fclose(f);
	return n;
}

static unsigned int count_type(int type)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAXH; i++)
		n += tab[i].type == type;
	return n;
}

/* ---- memory -------------------------------------------------------------- */

/*
 * [guard][rw: RW_LEN][guard][ro: RO_LEN][guard][ro0: RO_LEN][guard]
 * rw is written, ro is written then made read-only, ro0 is read-only and
 * never touched (the zero page); the guards are PROT_NONE.
 */
#define RW_LEN	(256UL * 4096)
#define RO_LEN	(16UL * 4096)
#define NVOL	4
#define VOL_MAX	(16UL * 4096)

static char *arena, *rw, *ro, *ro0, *shm;
static size_t arena_len;
#define SHM_LEN	(32UL * 4096)

static struct vol {
	char *addr;	/* current mapping, NULL if unmapped */
	char *old;	/* an address it had before (maybe reused now) */
	size_t len;
} vol[NVOL];

static int dmabuf_fd = -1, memfd = -1, nullfd = -1;
static size_t dmabuf_len;

enum mem { M_RW, M_RO, M_BAD, M_UNKNOWN };

static int inside(uint64_t a, uint64_t len, const void *base, size_t blen)
{
	uint64_t b = (uintptr_t)base;

	return a >= b && a - b <= blen && len <= blen - (a - b);
}

/* what registering [a, a + len), len > 0 and not wrapping, will meet */
static enum mem classify(uint64_t a, uint64_t len)
{
	uint64_t ar = (uintptr_t)arena;
	unsigned int i;

	if (inside(a, len, rw, RW_LEN) || inside(a, len, shm, SHM_LEN))
		return M_RW;
	if (inside(a, len, ro, RO_LEN) || inside(a, len, ro0, RO_LEN))
		return M_RO;
	for (i = 0; i < NVOL; i++)
		if (vol[i].addr && inside(a, len, vol[i].addr, vol[i].len))
			return M_RW;
	/* the first page cannot be pinned */
	if (a < 0x10000 || a >= 0x00007ffffffff000ULL)
		return M_BAD;
	/*
	 * Starts in the arena but is not inside one of its parts: starts in
	 * a guard, or runs from a part into the guard after it.
	 */
	if (a >= ar && a - ar < arena_len)
		return M_BAD;
	/*
	 * Our own raw mappings of cmd_fd are device memory (VM_IO |
	 * VM_PFNMAP: never pinned) or a CQ ring (kernel pages: pinned like
	 * any shared page): M_UNKNOWN, like the rest.
	 */
	return M_UNKNOWN;
}

/* expected outcome of pinning, after every argument check passed */
static expect_t mem_expect(uint64_t a, uint64_t len, uint32_t access)
{
	int writable = !!(access & A_WRITABLE);

	if (a + len > 0xfffffffffffff000ULL)	/* PAGE_ALIGN(end) wraps */
		return X(EINVAL);
	switch (classify(a, len)) {
	case M_RW:
		return XOK;
	case M_RO:
		return writable ? X(EFAULT) : XOK;
	case M_BAD:
		return X(EFAULT);
	default:
		return XOK | X(EFAULT) | X(ENOMEM);
	}
}

/* the driver's range checks, then pinning */
static expect_t range_expect(uint64_t a, uint64_t len, uint64_t iova,
			     uint32_t access)
{
	int e = drv_access_err(access);

	if (e)
		return X(e);
	if (!len || len > MAX_MR_SIZE || a + len < a || iova + len < iova)
		return X(EINVAL);
	return mem_expect(a, len, access);
}

static uint64_t rnd_addr(void)
{
	static const uint64_t kernel[] = {
		0xffff888000000000ULL, 0xffffffff81000000ULL,
		0xffffffffff600000ULL, 0xffffc90000000000ULL,
		0x0000800000000000ULL, 0x00007ffffffff000ULL,
		0x8000000000000000ULL, 0xfffffffffffff000ULL,
	};
	unsigned int i;

	switch (rndn(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		return (uintptr_t)rw + rndn(RW_LEN);
	case 6:
		return (uintptr_t)rw + rndn(RW_LEN / page) * page;
	case 7:
		return (uintptr_t)ro + rndn(RO_LEN);
	case 8:
		return (uintptr_t)ro0 + rndn(RO_LEN);
	case 9:
		return (uintptr_t)shm + rndn(SHM_LEN);
	case 10:
		i = rndn(NVOL);
		if (vol[i].addr)
			return (uintptr_t)vol[i].addr + rndn(vol[i].len);
		return (uintptr_t)vol[i].old + rndn(page);
	case 11:
		return (uintptr_t)arena + rndn(arena_len);	/* guards too */
	case 12:
		return rndn(0x10000);				/* NULL page */
	case 13:
		return kernel[rndn(sizeof(kernel) / sizeof(kernel[0]))] + rndn(2) * rndn(1 << 20);
	case 14:
		return UINT64_MAX - rndn(4) * page - rndn(page);	/* wraps */
	case 15:
		if (rawmaps[i = rndn(MAX_RAWMAP)].addr)
			return (uintptr_t)rawmaps[i].addr + rndn(rawmaps[i].len);
		return rnd();
	case 16:
		return rnd() & 0x00007fffffffffffULL;
	default:
		return rnd();
	}
}

static uint64_t rnd_len(uint64_t a)
{
	switch (rndn(16)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return page;
	case 3: case 4: case 5: case 6:
		return 1 + rndn(4 * page);
	case 7: case 8:
		return 1 + rndn(RW_LEN);
	case 9:
		return MAX_MR_SIZE - rndn(2);
	case 10:
		return MAX_MR_SIZE + 1 + rndn(2);
	case 11:
		return -a;			/* a + len == 2^64 */
	case 12:
		return -a + 1 + rndn(page);	/* wraps */
	case 13:
		return UINT64_MAX - rndn(2);
	case 14:
		return 1ULL << rndn(64);
	default:
		return rnd();
	}
}

static uint32_t rnd_access(void)
{
	static const uint32_t good[] = {
		0, A_LW, A_LW | A_RW, A_LW | A_RR, A_LW | A_RW | A_RR | A_RA,
		A_RR, A_LW | A_RELAXED, A_LW | A_ZB, A_RW, A_RA, A_MW, A_ODP,
		A_HUGE, A_FLUSH_G | A_LW, A_FLUSH_P,
	};

	switch (rndn(4)) {
	case 0: case 1:
		return good[rndn(sizeof(good) / sizeof(good[0]))];
	case 2:
		return rnd() & 0x3ff;
	default:
		return rnd();
	}
}

/* a range inside memory that can be registered: [a, a + len) */
static void good_range(uint64_t *a, uint64_t *len)
{
	const char *base;
	size_t blen;
	unsigned int i;

	switch (rndn(8)) {
	case 0:
		base = ro;
		blen = RO_LEN;
		break;
	case 1:
		base = ro0;
		blen = RO_LEN;
		break;
	case 2:
		base = shm;
		blen = SHM_LEN;
		break;
	case 3:
		i = rndn(NVOL);
		if (vol[i].addr) {
			base = vol[i].addr;
			blen = vol[i].len;
			break;
		}
		/* fall through */
	default:
		base = rw;
		blen = RW_LEN;
		break;
	}
	*len = 1 + rndn(rndn(4) ? 4 * page : blen);
	if (*len > blen)
		*len = blen;
	*a = (uintptr_t)base + rndn(blen - *len + 1);
}

static uint32_t good_access(void)
{
	static const uint32_t good[] = {
		0, A_LW, A_LW | A_RW, A_LW | A_RR, A_LW | A_RW | A_RR | A_RA,
		A_RR, A_LW | A_RELAXED, A_LW | A_ZB, A_LW | A_RW | A_RR,
	};

	return good[rndn(sizeof(good) / sizeof(good[0]))];
}

/* an iova: mostly the address (same page offset), sometimes not */
static uint64_t rnd_iova(uint64_t a)
{
	switch (rndn(8)) {
	case 0:
		return rnd();
	case 1:
		return (rnd() & ~(uint64_t)(page - 1)) | (a & (page - 1));
	case 2:
		return UINT64_MAX - rndn(2 * page);
	case 3:
		return a & (page - 1);
	default:
		return a;
	}
}

/* ---- raw uverbs write() commands ------------------------------------------ */

static char ro_resp_page[4096] __attribute__((aligned(4096)));
static char *resp_ro;	/* a read-only page for responses */

/* response pointer: mostly good, sometimes not writable */
static uint64_t rnd_resp(void *good, int *bad)
{
	*bad = 1;
	switch (rndn(24)) {
	case 0:
		return 0;
	case 1:
		return 0xffff888000000000ULL;
	case 2:
		return (uintptr_t)resp_ro;
	case 3:
		return (uintptr_t)arena;	/* PROT_NONE guard */
	default:
		*bad = 0;
		return (uintptr_t)good;
	}
}

static int raw_cmd(uint32_t command, const void *req, size_t req_len,
		   unsigned int out_words)
{
	return vt_raw_cmd(cmd_fd, command, req, req_len, out_words);
}

/* ---- PD operations ----------------------------------------------------- */

static void pd_register(struct ibv_pd *pd)
{
	unsigned int i;

	for (i = 0; i < MAX_PD; i++)
		if (!pds[i]) {
			pds[i] = pd;
			return;
		}
}

static void op_pd_alloc(void)
{
	struct ibv_pd *pd;

	if (count_type(T_PD) >= MAX_PD)
		return;
	errno = 0;
	pd = ibv_alloc_pd(ctx);
	account(OP_PD_ALLOC, pd ? 0 : errno, XOK, "()");
	if (pd) {
		kset(pd->handle, T_PD);
		pd_register(pd);	/* full: the struct leaks, harmlessly */
	}
}

static void op_pd_alloc_raw(void)
{
	struct ib_uverbs_alloc_pd cmd;
	struct ib_uverbs_alloc_pd_resp resp;
	int err, bad;

	if (count_type(T_PD) >= MAX_PD)
		return;
	memset(&resp, 0, sizeof(resp));
	resp.pd_handle = 0xdeadbeef;
	cmd.response = rnd_resp(&resp, &bad);
	err = raw_cmd(IB_USER_VERBS_CMD_ALLOC_PD, &cmd, sizeof(cmd),
		      sizeof(resp) / 4);
	account(OP_PD_ALLOC_RAW, err, bad ? X(EFAULT) : XOK,
		"(response %#llx)", (unsigned long long)cmd.response);
	if (!err)
		kset(resp.pd_handle, T_PD);
}

static int dealloc_expect(uint32_t h)
{
	int e = lookup_err(h, T_PD);

	if (!e && (users_of(h, 0) || qp_users(h, 0)))
		e = EBUSY;
	return e;
}

static void op_pd_dealloc(void)
{
	unsigned int i = rndn(MAX_PD);
	struct ibv_pd *pd = pds[i];
	uint32_t h;
	int e, err;

	if (!pd)
		return;
	h = pd->handle;
	e = dealloc_expect(h);
	err = ibv_dealloc_pd(pd);
	account(OP_PD_DEALLOC, err, X(e), "(handle %u)", h);
	if (!err) {
		kdel(h);
		pds[i] = NULL;
	} else if (e != EBUSY) {
		pds[i] = NULL;	/* stale: forget it (the struct leaks) */
	}
}

static void op_pd_dealloc_raw(void)
{
	struct ib_uverbs_dealloc_pd cmd;
	int e, err;

	cmd.pd_handle = any_handle(T_PD);
	e = dealloc_expect(cmd.pd_handle);
	err = raw_cmd(IB_USER_VERBS_CMD_DEALLOC_PD, &cmd, sizeof(cmd), 0);
	account(OP_PD_DEALLOC_RAW, err, X(e), "(handle %u)", cmd.pd_handle);
	if (!err)
		kdel(cmd.pd_handle);
}

/* ---- MR operations ----------------------------------------------------- */

static int mr_slot(void)
{
	unsigned int i;

	for (i = 0; i < MAX_MR; i++)
		if (!mrs[i])
			return i;
	return -1;
}

/* a PD to register on: mostly a live one of libibverbs */
static struct ibv_pd *some_pd(void)
{
	unsigned int i, start = rndn(MAX_PD);

	for (i = 0; i < MAX_PD; i++)
		if (pds[(start + i) % MAX_PD])
			return pds[(start + i) % MAX_PD];
	return NULL;
}

static void mr_created(uint32_t h, uint32_t pd, int dm, uint32_t access)
{
	kset(h, T_MR);
	tab[h].pd = pd;
	tab[h].dm = dm;
	tab[h].access = access;
}

/* What a user MR pinned: a rereg adding write access re-pins it. */
static void mr_pinned(uint32_t h, uint64_t start, uint64_t len, uint64_t iova,
		      int dmabuf)
{
	tab[h].start = start;
	tab[h].len = len;
	tab[h].iova = iova;
	tab[h].wpin = !!(tab[h].access & A_WRITABLE);
	tab[h].dmabuf = dmabuf;
}

static void op_reg(void)
{
	struct ibv_pd *pd = some_pd();
	uint64_t a, len, iova;
	uint32_t access;
	struct ibv_mr *mr;
	expect_t x;
	int slot = mr_slot(), e;

	if (!pd || slot < 0 || count_type(T_MR) >= MAX_MR)
		return;
	if (rndn(2)) {
		good_range(&a, &len);
		iova = rndn(4) ? a : rnd_iova(a);
		access = rndn(4) ? good_access() : rnd_access();
	} else {
		a = rnd_addr();
		len = rnd_len(a);
		iova = rnd_iova(a);
		access = rnd_access();
	}
	if ((a & (page - 1)) != (iova & (page - 1)))
		x = X(EINVAL);
	else if ((access & A_ODP) && len == SIZE_MAX && a)
		x = X(EINVAL);	/* libibverbs: only implicit ODP may say SIZE_MAX */
	else if ((e = core_access_err(access)))
		x = X(e);
	else if ((e = lookup_err(pd->handle, T_PD)))
		x = X(e);
	else
		x = range_expect(a, len, iova, access);
	errno = 0;
	mr = ibv_reg_mr_iova2(pd, (void *)(uintptr_t)a, len, iova, access);
	account(OP_REG, mr ? 0 : errno, x,
		"(pd %u, addr %#llx, len %#llx, iova %#llx, access %#x)",
		pd->handle, (unsigned long long)a, (unsigned long long)len,
		(unsigned long long)iova, access);
	if (mr) {
		mr_created(mr->handle, pd->handle, -1, access);
		mr_pinned(mr->handle, a, len, iova, 0);
		mrs[slot] = mr;
		mr_dmabuf[slot] = 0;
	}
}

static void op_reg_raw(void)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ib_uverbs_reg_mr cmd;
	int bad, e, err;
	expect_t x;

	if (count_type(T_MR) >= MAX_MR)
		return;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.response = rnd_resp(&resp, &bad);
	if (rndn(2)) {
		uint64_t a, len;

		good_range(&a, &len);
		cmd.start = a;
		cmd.length = len;
		cmd.hca_va = rndn(4) ? cmd.start : rnd_iova(cmd.start);
		cmd.access_flags = rndn(4) ? good_access() : rnd_access();
	} else {
		cmd.start = rnd_addr();
		cmd.length = rnd_len(cmd.start);
		cmd.hca_va = rnd_iova(cmd.start);
		cmd.access_flags = rnd_access();
	}
	cmd.pd_handle = any_handle(T_PD);
	if ((cmd.start & (page - 1)) != (cmd.hca_va & (page - 1)))
		x = X(EINVAL);
	else if ((e = core_access_err(cmd.access_flags)))
		x = X(e);
	else if ((e = lookup_err(cmd.pd_handle, T_PD)))
		x = X(e);
	else
		x = range_expect(cmd.start, cmd.length, cmd.hca_va,
				 cmd.access_flags);
	/* the MR is created, then the response fails: it is destroyed again */
	if (bad && (x & XOK))
		x = (x & ~XOK) | X(EFAULT);
	err = raw_cmd(IB_USER_VERBS_CMD_REG_MR, &cmd, sizeof(cmd),
		      sizeof(resp) / 4);
	account(OP_REG_RAW, err, x,
		"(pd %u, start %#llx, len %#llx, hca_va %#llx, access %#x, response %#llx)",
		cmd.pd_handle, (unsigned long long)cmd.start,
		(unsigned long long)cmd.length, (unsigned long long)cmd.hca_va,
		cmd.access_flags, (unsigned long long)cmd.response);
	if (!err) {
		mr_created(resp.mr_handle, cmd.pd_handle, -1, cmd.access_flags);
		mr_pinned(resp.mr_handle, cmd.start, cmd.length, cmd.hca_va, 0);
	}
}

/* expected result of a rereg of handle @h (rules of the core, then the driver) */
static expect_t rereg_expect(uint32_t h, uint32_t flags, uint64_t start,
			     uint64_t len, uint64_t iova, uint32_t pd,
			     uint32_t access)
{
	int e;

	if (!flags)
		return X(EINVAL);
	if (flags & ~7U)
		return X(EOPNOTSUPP);
	if ((flags & REREG_TRANS) && (start & (page - 1)) != (iova & (page - 1)))
		return X(EINVAL);
	if ((e = lookup_err(h, T_MR)))
		return X(e);
	if (tab[h].dm >= 0)
		return X(EINVAL);
	if ((flags & REREG_ACCESS) && (e = core_access_err(access)))
		return X(e);
	if ((flags & REREG_PD) && (e = lookup_err(pd, T_PD)))
		return X(e);
	if (!(flags & REREG_ACCESS))
		access = tab[h].access;
	if (flags & REREG_TRANS)
		return range_expect(start, len, iova, access);
	if (flags & REREG_ACCESS) {
		e = drv_access_err(access);
		if (e)
			return X(e);
		/*
		 * Write access over a read-only pin: the driver re-pins. A
		 * dma-buf MR has no pin direction: it changes in place.
		 */
		if ((access & A_WRITABLE) && !tab[h].wpin && !tab[h].dmabuf)
			return range_expect(tab[h].start, tab[h].len,
					    tab[h].iova, access);
		return XOK;
	}
	return XOK;
}

static void rereg_done(uint32_t h, uint32_t flags, uint32_t pd, uint32_t access,
		       uint64_t start, uint64_t len, uint64_t iova)
{
	if (flags & REREG_PD)
		tab[h].pd = pd;
	if (flags & REREG_ACCESS)
		tab[h].access = access;
	if (flags & REREG_TRANS)
		mr_pinned(h, start, len, iova, 0);
	else if (tab[h].access & A_WRITABLE)
		tab[h].wpin = 1;	/* an upgrade re-pinned for writing */
}

static uint32_t rnd_rereg_flags(void)
{
	switch (rndn(10)) {
	case 0:
		return 0;
	case 1:
		return rnd();
	case 2:
		return 1U << rndn(32);
	default:
		return 1 + rndn(7);
	}
}

static void op_rereg(void)
{
	unsigned int i = rndn(MAX_MR);
	struct ibv_mr *mr = mrs[i];
	struct ibv_pd *pd = NULL;
	uint64_t a = 0, len = 0;
	uint32_t flags, access = 0, h;
	expect_t x;
	int ret, err;

	if (!mr || mr_dmabuf[i])
		return;
	h = mr->handle;
	flags = 1 + rndn(7);
	if (flags & REREG_PD) {
		pd = some_pd();
		if (!pd)
			return;
	}
	if (flags & REREG_TRANS) {
		if (rndn(3)) {
			good_range(&a, &len);
		} else {
			a = rnd_addr();
			len = rnd_len(a);
		}
	}
	if (flags & REREG_ACCESS)
		access = rndn(3) ? good_access() : rnd_access();
	if ((flags & REREG_TRANS) && (!a || !len))
		x = X(EINVAL);		/* refused by libibverbs */
	else
		x = rereg_expect(h, flags, a, len, a, pd ? pd->handle : 0,
				 access);
	errno = 0;
	ret = ibv_rereg_mr(mr, flags, pd, (void *)(uintptr_t)a, len, access);
	err = ret == 0 ? 0 : (ret == IBV_REREG_MR_ERR_CMD ||
			      ret == IBV_REREG_MR_ERR_INPUT) ? errno : EPROTO;
	account(OP_REREG, err, x,
		"(handle %u, flags %#x, pd %d, addr %#llx, len %#llx, access %#x) = %d",
		h, flags, pd ? (int)pd->handle : -1, (unsigned long long)a,
		(unsigned long long)len, access, ret);
	if (!ret)
		rereg_done(h, flags, pd ? pd->handle : 0, access, a, len, a);
}

static void op_rereg_raw(void)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ib_uverbs_rereg_mr cmd;
	int bad = 0, err;
	expect_t x;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.mr_handle = any_handle(T_MR);
	cmd.flags = rnd_rereg_flags();
	if (rndn(2)) {
		uint64_t a, len;

		good_range(&a, &len);
		cmd.start = a;
		cmd.length = len;
		cmd.hca_va = rndn(4) ? cmd.start : rnd_iova(cmd.start);
		cmd.access_flags = rndn(4) ? good_access() : rnd_access();
	} else {
		cmd.start = rnd_addr();
		cmd.length = rnd_len(cmd.start);
		cmd.hca_va = rnd_iova(cmd.start);
		cmd.access_flags = rnd_access();
	}
	cmd.pd_handle = any_handle(T_PD);
	x = rereg_expect(cmd.mr_handle, cmd.flags, cmd.start, cmd.length,
			 cmd.hca_va, cmd.pd_handle, cmd.access_flags);
	/*
	 * A rereg whose response cannot be written has still happened, and
	 * every valid one changes the model (translation, PD, access or the
	 * pin): bad responses only for flags the kernel refuses anyway.
	 */
	if (!(cmd.flags & (REREG_TRANS | REREG_PD | REREG_ACCESS)))
		cmd.response = rnd_resp(&resp, &bad);
	else
		cmd.response = (uintptr_t)&resp;
	if (bad && (x & XOK))
		x = (x & ~XOK) | X(EFAULT);
	err = raw_cmd(IB_USER_VERBS_CMD_REREG_MR, &cmd, sizeof(cmd),
		      sizeof(resp) / 4);
	account(OP_REREG_RAW, err, x,
		"(handle %u, flags %#x, start %#llx, len %#llx, hca_va %#llx, pd %u, access %#x, response %#llx)",
		cmd.mr_handle, cmd.flags, (unsigned long long)cmd.start,
		(unsigned long long)cmd.length,
		(unsigned long long)cmd.hca_va, cmd.pd_handle,
		cmd.access_flags, (unsigned long long)cmd.response);
	if (!err)
		rereg_done(cmd.mr_handle, cmd.flags, cmd.pd_handle,
			   cmd.access_flags, cmd.start, cmd.length,
			   cmd.hca_va);
}

static void op_dereg(void)
{
	unsigned int i = rndn(MAX_MR);
	struct ibv_mr *mr = mrs[i];
	uint32_t h;
	int e, err;

	if (!mr)
		return;
	h = mr->handle;
	e = lookup_err(h, T_MR);
	err = ibv_dereg_mr(mr);
	account(OP_DEREG, err, X(e), "(handle %u)", h);
	if (!err)
		kdel(h);
	mrs[i] = NULL;	/* on failure it was stale: forget it */
}

static void op_dereg_raw(void)
{
	struct ib_uverbs_dereg_mr cmd;
	int e, err;

	cmd.mr_handle = any_handle(T_MR);
	e = lookup_err(cmd.mr_handle, T_MR);
	err = raw_cmd(IB_USER_VERBS_CMD_DEREG_MR, &cmd, sizeof(cmd), 0);
	account(OP_DEREG_RAW, err, X(e), "(handle %u)", cmd.mr_handle);
	if (!err)
		kdel(cmd.mr_handle);
}

/* commands whose header does not match what they carry: nothing happens */
static void op_hdr_raw(void)
{
	static const struct {
		uint32_t cmd;
		size_t req, resp;
	} cmds[] = {
		{ IB_USER_VERBS_CMD_ALLOC_PD, sizeof(struct ib_uverbs_alloc_pd),
		  sizeof(struct ib_uverbs_alloc_pd_resp) },
		{ IB_USER_VERBS_CMD_DEALLOC_PD, sizeof(struct ib_uverbs_dealloc_pd), 0 },
		{ IB_USER_VERBS_CMD_REG_MR, sizeof(struct ib_uverbs_reg_mr),
		  sizeof(struct ib_uverbs_reg_mr_resp) },
		{ IB_USER_VERBS_CMD_REREG_MR, sizeof(struct ib_uverbs_rereg_mr),
		  sizeof(struct ib_uverbs_rereg_mr_resp) },
		{ IB_USER_VERBS_CMD_DEREG_MR, sizeof(struct ib_uverbs_dereg_mr), 0 },
	};
	unsigned int c = rndn(sizeof(cmds) / sizeof(cmds[0]));
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		uint64_t body[16];
	} buf;
	char resp[64];
	size_t len;
	ssize_t ret;
	expect_t x;
	unsigned int i;

	memset(&buf, 0, sizeof(buf));
	for (i = 0; i < 16; i++)
		buf.body[i] = rnd();
	buf.body[0] = (uintptr_t)resp;	/* response, where there is one */
	buf.hdr.command = cmds[c].cmd;
	switch (rndn(5)) {
	case 0:		/* in_words does not match the write() size */
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4 + 1 + rndn(8);
		buf.hdr.out_words = cmds[c].resp / 4;
		x = X(EINVAL);
		break;
	case 1:		/* shorter than the command */
		len = sizeof(buf.hdr) + (cmds[c].req / 4 - 1 - rndn(cmds[c].req / 4)) * 4;
		buf.hdr.in_words = len / 4;
		buf.hdr.out_words = cmds[c].resp / 4;
		x = X(ENOSPC);
		break;
	case 2:		/* response space too small */
		if (!cmds[c].resp)
			return;
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4;
		buf.hdr.out_words = rndn(cmds[c].resp / 4);
		x = X(ENOSPC);
		break;
	case 3:		/* a command number that does not exist */
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4;
		buf.hdr.command = 100 + rndn(156);
		x = X(EOPNOTSUPP);
		break;
	default:	/* bits outside the command mask */
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4;
		buf.hdr.command |= 1U << (8 + rndn(23));
		x = X(EINVAL);
		break;
	}
	if (len < sizeof(buf.hdr))
		len = sizeof(buf.hdr);
	ret = write(cmd_fd, &buf, len);
	account(OP_HDR_RAW, ret < 0 ? errno : ret == (ssize_t)len ? 0 : EIO, x,
		"(command %#x, in_words %u, out_words %u, %zu bytes)",
		buf.hdr.command, buf.hdr.in_words, buf.hdr.out_words, len);
}

/* ---- device memory ------------------------------------------------------ */

static char hostbuf[DM_SIZE + 4096];

static void op_dm_alloc(void)
{
	struct ibv_alloc_dm_attr attr = {};
	struct ibv_dm *dm;
	unsigned int i;
	expect_t x;

	for (i = 0; i < MAX_DM && dms[i]; i++)
		;
	if (i == MAX_DM)
		return;
	switch (rndn(10)) {
	case 0:
		attr.length = 0;
		break;
	case 1:
		/* the whole arena, rarely: it starves the other processes */
		attr.length = DM_SIZE + (rndn(50) != 0);
		break;
	case 2:
		attr.length = rnd();
		break;
	case 3:
		attr.length = SIZE_MAX - rndn(2 * page);
		break;
	default:
		attr.length = 1 + rndn(rndn(2) ? 4 * page : 64 * 1024);
		break;
	}
	attr.log_align_req = rndn(4) ? rndn(16) : rndn(3) ? rndn(40) : (uint32_t)rnd();
	attr.comp_mask = rndn(10) ? 0 : (uint32_t)rnd();
	if (attr.comp_mask || !attr.length || attr.length > SIZE_MAX - (page - 1))
		x = X(EINVAL);			/* refused by the provider */
	else if (attr.log_align_req > DM_MAX_ALIGN)
		x = X(EINVAL);
	else if (attr.length > DM_SIZE)
		x = X(ENOMEM);
	else
		x = XOK | X(ENOMEM);		/* the arena is shared */
	errno = 0;
	dm = ibv_alloc_dm(ctx, &attr);
	account(OP_DM_ALLOC, dm ? 0 : errno, x,
		"(length %#llx, log_align %u, comp_mask %#x)",
		(unsigned long long)attr.length, attr.log_align_req,
		attr.comp_mask);
	if (dm) {
		uint32_t h = dm_handle(dm);

		kset(h, T_DM);
		tab[h].len = attr.length;
		dms[i] = dm;
	}
}

static void op_dm_free(void)
{
	unsigned int i = rndn(MAX_DM);
	uint32_t h;
	int e, err;

	if (!dms[i])
		return;
	h = dm_handle(dms[i]);
	e = users_of(h, 1) ? EBUSY : 0;
	err = ibv_free_dm(dms[i]);
	account(OP_DM_FREE, err, X(e), "(handle %u)", h);
	if (!err) {
		kdel(h);
		dms[i] = NULL;
	}
}

static uint64_t rnd_dm_off(uint64_t len)
{
	switch (rndn(8)) {
	case 0:
		return 0;
	case 1:
		return len;
	case 2:
		return len + 1 + rndn(page);
	case 3:
		return rnd();
	case 4:
		return UINT64_MAX - rndn(page);
	default:
		return rndn(len);
	}
}

static uint64_t rnd_dm_len(uint64_t len, uint64_t off)
{
	switch (rndn(8)) {
	case 0:
		return 0;
	case 1:
		return len - off;
	case 2:
		return len - off + 1;
	case 3:
		return rnd();
	case 4:
		return -off;
	default:
		return off < len ? 1 + rndn(len - off) : rndn(page);
	}
}

static void op_dm_copy(void)
{
	unsigned int i = rndn(MAX_DM);
	uint64_t len, off, n;
	int to = rndn(2), err;
	expect_t x;

	if (!dms[i])
		return;
	len = tab[dm_handle(dms[i])].len;
	off = rnd_dm_off(len);
	n = rnd_dm_len(len, off);
	x = (off | n) & 3 || off > len || n > len - off ? X(EINVAL) : XOK;
	if (to) {
		memset(hostbuf, (int)iter, n < sizeof(hostbuf) ? n : 64);
		err = ibv_memcpy_to_dm(dms[i], off, hostbuf, n);
	} else {
		err = ibv_memcpy_from_dm(hostbuf, dms[i], off, n);
	}
	account(OP_DM_COPY, err, x, "(%s, dm length %#llx, offset %#llx, length %#llx)",
		to ? "to dm" : "from dm", (unsigned long long)len,
		(unsigned long long)off, (unsigned long long)n);
}

static void op_dm_mr(void)
{
	unsigned int i = rndn(MAX_DM);
	struct ibv_pd *pd = some_pd();
	uint64_t len, off, n;
	uint32_t access, h;
	struct ibv_mr *mr;
	int slot = mr_slot(), e;
	expect_t x;

	if (!dms[i] || !pd || slot < 0 || count_type(T_MR) >= MAX_MR)
		return;
	h = dm_handle(dms[i]);
	len = tab[h].len;
	if (rndn(2)) {
		off = rndn(len);
		n = 1 + rndn(len - off);
		access = good_access() | A_ZB;
	} else {
		off = rnd_dm_off(len);
		n = rnd_dm_len(len, off);
		access = rnd_access();
		if (rndn(4))
			access |= A_ZB;
	}
	if ((e = lookup_err(pd->handle, T_PD)))
		/* libibverbs may refuse a missing ZERO_BASED before the kernel */
		x = X(e) | (access & A_ZB ? 0 : X(EINVAL));
	else if (access & ~IB_ACCESS_SUPP)
		x = X(EINVAL);
	else if (!(access & A_ZB))
		x = X(EINVAL);
	else if ((e = core_access_err(access)))
		x = X(e);
	else if (off > len || n > len || n > len - off)
		x = X(EINVAL);
	else if ((e = drv_access_err(access)))
		x = X(e);
	else	/* length 0 is accepted, as on mlx5 */
		x = XOK;
	errno = 0;
	mr = ibv_reg_dm_mr(pd, dms[i], off, n, access);
	account(OP_DM_MR, mr ? 0 : errno, x,
		"(pd %u, dm %u length %#llx, offset %#llx, length %#llx, access %#x)",
		pd->handle, h, (unsigned long long)len, (unsigned long long)off,
		(unsigned long long)n, access);
	if (mr) {
		mr_created(mr->handle, pd->handle, h, access);
		mrs[slot] = mr;
		mr_dmabuf[slot] = 1;	/* not for ibv_rereg_mr */
	}
}

/*
 * mmap() of cmd_fd: only a live DM's or CQ ring's exact offset and size,
 * shared, works. Their offsets are those of the provider's own mappings.
 */
static void op_dm_mmap(void)
{
	static uint64_t pg[64], mlen[64];
	static unsigned int seen = ~0U;
	static int live;
	uint64_t addr[64], pgoff, len;
	int shared = rndn(5) != 0, prot, err, n, i, j;
	expect_t x = X(EINVAL);
	unsigned int r;
	void *p;

	/*
	 * A mapping keeps its DM's range out of the arena even after
	 * ibv_free_dm(): drop one now and then.
	 */
	r = rndn(MAX_RAWMAP);
	if (rawmaps[r].addr && !rndn(3)) {
		munmap(rawmaps[r].addr, rawmaps[r].len);
		rawmaps[r].addr = NULL;
		maps_gen++;
	}
	for (r = 0; r < MAX_RAWMAP && rawmaps[r].addr; r++)
		;
	if (r == MAX_RAWMAP) {
		r = rndn(MAX_RAWMAP);
		munmap(rawmaps[r].addr, rawmaps[r].len);
		rawmaps[r].addr = NULL;
		maps_gen++;
	}
	/* The provider's mappings: those that are not raw ones of ours. */
	if (seen != maps_gen) {
		seen = maps_gen;
		live = 0;
		n = uverbs_maps(addr, pg, mlen, 64);
		for (i = 0; i < n; i++) {
			for (j = 0; j < MAX_RAWMAP &&
				    (uintptr_t)rawmaps[j].addr != addr[i]; j++)
				;
			if (j == MAX_RAWMAP) {
				pg[live] = pg[i];
				mlen[live++] = mlen[i];
			}
		}
	}
	i = live ? (int)rndn(live) : -1;
	pgoff = i >= 0 ? pg[i] : rndn(64);
	len = i >= 0 ? mlen[i] : page;
	switch (rndn(6)) {
	case 0:
		pgoff += 1 + rndn(255);
		break;
	case 1:
		pgoff = rndn(1ULL << 33);
		break;
	default:
		break;
	}
	if (!rndn(3))
		len = page * (1 + rndn(8));
	for (i = 0; i < live; i++)
		if (shared && pg[i] == pgoff && mlen[i] == len)
			x = XOK;
	prot = rndn(4) ? PROT_READ | PROT_WRITE : PROT_READ;
	p = mmap(NULL, len, prot, shared ? MAP_SHARED : MAP_PRIVATE, cmd_fd,
		 (off_t)(pgoff * page));
	err = p == MAP_FAILED ? errno : 0;
	account(OP_DM_MMAP, err, x, "(pgoff %#llx, length %#llx, %s)",
		(unsigned long long)pgoff, (unsigned long long)len,
		shared ? "MAP_SHARED" : "MAP_PRIVATE");
	if (!err) {
		volatile char c = *(volatile char *)p;	/* it is readable */

		(void)c;
		rawmaps[r].addr = p;
		rawmaps[r].len = len;
		maps_gen++;
	}
}

static void op_dmabuf_mr(void)
{
	struct ibv_pd *pd = some_pd();
	uint64_t off, len, iova, dlen = dmabuf_len ? dmabuf_len : 16 * page;
	uint32_t access;
	struct ibv_mr *mr;
	int slot = mr_slot(), fd, e;
	expect_t x;

	if (!pd || slot < 0 || count_type(T_MR) >= MAX_MR)
		return;
	switch (dmabuf_fd >= 0 && rndn(2) ? 12 : rndn(12)) {
	case 0: fd = memfd; break;
	case 1: fd = nullfd; break;
	case 2: fd = cmd_fd; break;
	case 3: fd = -1; break;
	case 4: fd = 1000 + rndn(1000); break;	/* not open */
	case 5: fd = (int)rnd(); break;
	default: fd = dmabuf_fd; break;
	}
	switch (rndn(6)) {
	case 0: off = rnd(); break;
	case 1: off = dlen; break;
	case 2: off = rndn(dlen); break;
	default: off = rndn(dlen / page) * page; break;
	}
	switch (rndn(8)) {
	case 0: len = 0; break;
	case 1: len = rnd(); break;
	case 2: len = -off + rndn(2); break;
	case 3: len = dlen - off + 1; break;
	case 4: len = MAX_MR_SIZE + 1; break;
	default: len = off < dlen ? 1 + rndn(dlen - off) : 1 + rndn(page); break;
	}
	iova = rnd_iova(off);
	access = rndn(3) ? (uint32_t)rndn(16) | (rndn(4) ? 0 : A_RELAXED) : rnd_access();
	if (fd == dmabuf_fd && rndn(2)) {
		off = rndn(dlen / page) * page;
		len = 1 + rndn(dlen - off);
		iova = rndn(2) ? off : rnd_iova(off);
		access = good_access() & ~A_ZB;
	}

	if ((e = lookup_err(pd->handle, T_PD)))
		x = X(e);
	else if ((off & (page - 1)) != (iova & (page - 1)))
		x = X(EINVAL);
	else if (access & ~(A_LW | A_RR | A_RW | A_RA | A_RELAXED))
		x = X(EINVAL);
	else if ((e = core_access_err(access)))
		x = X(e);
	else if ((e = drv_access_err(access)))
		x = X(e);
	else if (!len || len > MAX_MR_SIZE || off + len < off || iova + len < iova)
		x = X(EINVAL);
	else if (fd < 0 || fcntl(fd, F_GETFD) < 0)
		x = X(EBADF);
	else if (fd != dmabuf_fd)
		x = X(EINVAL);
	else if (off + len > dmabuf_len)
		x = X(EINVAL);
	else
		x = XOK;
	errno = 0;
	mr = ibv_reg_dmabuf_mr(pd, off, len, iova, fd, access);
	account(OP_DMABUF_MR, mr ? 0 : errno, x,
		"(pd %u, fd %d, offset %#llx, length %#llx, iova %#llx, access %#x)",
		pd->handle, fd, (unsigned long long)off, (unsigned long long)len,
		(unsigned long long)iova, access);
	if (mr) {
		mr_created(mr->handle, pd->handle, -1, access);
		mr_pinned(mr->handle, off, len, iova, 1);
		mrs[slot] = mr;
		mr_dmabuf[slot] = 1;
	}
}

/* munmap, mremap or mmap memory that may be registered */
static void op_vm(void)
{
	struct vol *v = &vol[rndn(NVOL)];
	size_t len = page * (1 + rndn(VOL_MAX / page));
	void *p;
	int err = 0;

	if (!v->addr) {
		p = mmap(NULL, len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED) {
			err = errno;
		} else {
			memset(p, 0x5a, len);
			v->addr = p;
			v->len = len;
		}
		account(OP_VM, err, XOK, "(mmap %zu bytes)", len);
		return;
	}
	v->old = v->addr;
	if (rndn(2)) {
		err = munmap(v->addr, v->len) ? errno : 0;
		v->addr = NULL;
		account(OP_VM, err, XOK, "(munmap)");
		return;
	}
	p = mremap(v->addr, v->len, len, MREMAP_MAYMOVE);
	if (p == MAP_FAILED) {
		err = errno;
		v->addr = NULL;		/* unknown: forget it */
	} else {
		v->addr = p;
		v->len = len;
	}
	account(OP_VM, err, XOK, "(mremap to %zu bytes)", len);
}

/* ---- one child ----------------------------------------------------------- */

static void setup_memory(void)
{
	unsigned int i;

	arena_len = 4 * page + RW_LEN + 2 * RO_LEN;
	arena = mmap(NULL, arena_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		     -1, 0);
	shm = MAP_FAILED;
	memfd = memfd_create("shca_fuzz", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd >= 0 && !ftruncate(memfd, SHM_LEN))
		shm = mmap(NULL, SHM_LEN, PROT_READ | PROT_WRITE, MAP_SHARED,
			   memfd, 0);
	if (arena == MAP_FAILED || shm == MAP_FAILED) {
		vt_bad("[child %d] setting up memory: %s", child_no, strerror(errno));
		exit(2);
	}
	memset(shm, 0x33, SHM_LEN);
	rw = arena + page;
	ro = rw + RW_LEN + page;
	ro0 = ro + RO_LEN + page;
	if (mprotect(rw, RW_LEN, PROT_READ | PROT_WRITE) ||
	    mprotect(ro, RO_LEN, PROT_READ | PROT_WRITE) ||
	    mprotect(ro0, RO_LEN, PROT_READ)) {
		vt_bad("[child %d] mprotect: %s", child_no, strerror(errno));
		exit(2);
	}
	memset(rw, 0x11, RW_LEN);
	memset(ro, 0x22, RO_LEN);
	mprotect(ro, RO_LEN, PROT_READ);
	resp_ro = ro_resp_page;
	mprotect(resp_ro, 4096, PROT_READ);
	for (i = 0; i < NVOL; i++) {
		vol[i].len = VOL_MAX;
		vol[i].addr = mmap(NULL, VOL_MAX, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (vol[i].addr == MAP_FAILED)
			vol[i].addr = NULL;
		else
			memset(vol[i].addr, 0x44, VOL_MAX);
		vol[i].old = vol[i].addr;
	}
	nullfd = open("/dev/null", O_RDWR | O_CLOEXEC);

	/* a dma-buf: udmabuf over a sealed memfd, 16 pages */
	{
		struct udmabuf_create create = { .flags = UDMABUF_FLAGS_CLOEXEC };
		int dev = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
		int mfd = memfd_create("shca_fuzz_dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);

		if (dev >= 0 && mfd >= 0 && !ftruncate(mfd, 16 * page) &&
		    !fcntl(mfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
			create.memfd = mfd;
			create.size = 16 * page;
			dmabuf_fd = ioctl(dev, UDMABUF_CREATE, &create);
			if (dmabuf_fd >= 0)
				dmabuf_len = 16 * page;
		}
		if (mfd >= 0)
			close(mfd);
		if (dev >= 0)
			close(dev);
	}
}


/* ---- CQs, QPs and work requests ----------------------------------------- */

#define MAX_CQ	6
#define MAX_QP	6
#define SHCA_MAX_CQE	65536
#define SHCA_MAX_QP_WR	16384
#define SHCA_MAX_SGE	32
#define SHCA_MAX_INLINE	512

static struct ibv_cq *cqs[MAX_CQ];
static struct ibv_qp *qps[MAX_QP];
static int gid_index = -1;	/* a GID of the device, to connect QPs */
static union ibv_gid gid;

static void find_gid(void)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(ctx, 1, &pa))
		return;
	for (i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		struct ibv_gid_entry e;

		if (ibv_query_gid_ex(ctx, 1, i, &e, 0) ||
		    vt_all_bytes(e.gid.raw, 16, 0))
			continue;
		gid_index = i;
		gid = e.gid;
		if (e.gid.raw[0] == 0xfe)	/* link-local: preferred */
			break;
	}
}

static void op_cq_create(void)
{
	unsigned int i;
	struct ibv_cq *cq;
	int cqe, vec;
	expect_t x;

	for (i = 0; i < MAX_CQ && cqs[i]; i++)
		;
	if (i == MAX_CQ)
		return;
	switch (rndn(8)) {
	case 0: cqe = 0; break;
	case 1: cqe = -(int)rndn(3) - 1; break;
	case 2: cqe = SHCA_MAX_CQE + (rndn(8) ? 1 : 0); break;
	case 3: cqe = (int)rnd(); break;
	default: cqe = 1 + rndn(rndn(2) ? 8 : 512); break;
	}
	vec = rndn(6) ? 0 : rndn(2) ? (int)rndn(8) : (int)rnd();
	if (vec < 0 || vec >= ctx->num_comp_vectors || cqe <= 0 ||
	    cqe > SHCA_MAX_CQE)
		x = X(EINVAL);
	else
		x = XOK | X(ENOMEM);
	errno = 0;
	cq = ibv_create_cq(ctx, cqe, NULL, NULL, vec);
	account(OP_CQ_CREATE, cq ? 0 : errno, x, "(cqe %d, comp_vector %d)", cqe, vec);
	if (cq) {
		kset(cq->handle, T_CQ);
		cqs[i] = cq;
	}
}

static void op_cq_destroy(void)
{
	unsigned int i = rndn(MAX_CQ);
	uint32_t h;
	int e, err;

	if (!cqs[i])
		return;
	h = cqs[i]->handle;
	e = qp_users(h, 1) ? EBUSY : 0;
	err = ibv_destroy_cq(cqs[i]);
	account(OP_CQ_DESTROY, err, X(e), "(handle %u)", h);
	if (!err) {
		kdel(h);
		cqs[i] = NULL;
	}
}

static void op_poll(void)
{
	struct ibv_wc wc[32];
	unsigned int i = rndn(MAX_CQ);
	int n, ne = rndn(33), k, bad = 0;

	if (!cqs[i])
		return;
	errno = 0;
	n = ibv_poll_cq(cqs[i], ne, wc);
	for (k = 0; k < n && k < ne; k++)
		if (wc[k].status > IBV_WC_GENERAL_ERR)
			bad = 1;
	account(OP_POLL, n < 0 ? errno : n > ne || bad ? EPROTO : 0, XOK,
		"(cq %u, %d entries: %d%s)", cqs[i]->handle, ne, n,
		bad ? ", invalid status" : "");
}

static void op_poll_raw(void)
{
	struct {
		struct ib_uverbs_poll_cq_resp resp;
		struct ib_uverbs_wc wc[8];
	} out;
	struct ib_uverbs_poll_cq cmd;
	int e, err, bad;

	memset(&cmd, 0, sizeof(cmd));
	cmd.cq_handle = any_handle(T_CQ);
	/*
	 * The kernel copies up to ne entries behind the response without
	 * looking at out_words: never ask for more than there is room for.
	 */
	cmd.ne = rndn(9);
	cmd.response = rnd_resp(&out, &bad);
	e = lookup_err(cmd.cq_handle, T_CQ);
	err = raw_cmd(IB_USER_VERBS_CMD_POLL_CQ, &cmd, sizeof(cmd),
		      sizeof(out) / 4);
	/*
	 * softhca CQs are polled from the ring the process maps: the kernel
	 * does not offer POLL_CQ at all, whatever the handle.
	 */
	(void)e;
	(void)bad;
	account(OP_POLL_RAW, err, X(EOPNOTSUPP),
		"(handle %u, ne %u, response %#llx)", cmd.cq_handle, cmd.ne,
		(unsigned long long)cmd.response);
}

static struct ibv_cq *some_cq(void)
{
	unsigned int i, start = rndn(MAX_CQ);

	for (i = 0; i < MAX_CQ; i++)
		if (cqs[(start + i) % MAX_CQ])
			return cqs[(start + i) % MAX_CQ];
	return NULL;
}

/* a capability: mostly small (the limit itself rarely: it costs memory) */
static uint32_t rnd_cap(uint32_t small, uint32_t max)
{
	switch (rndn(12)) {
	case 0: return 0;
	case 1: return rndn(8) ? max : max + 1 + rndn(2);
	case 2: return max + 1 + rndn(2);
	case 3: return (uint32_t)rnd();
	default: return 1 + rndn(small);
	}
}

/* the attributes each transition of an RC QP needs */
static int qp_mask_for(enum ibv_qp_state to)
{
	switch (to) {
	case IBV_QPS_INIT:
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       IBV_QP_ACCESS_FLAGS;
	case IBV_QPS_RTR:
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
	case IBV_QPS_RTS:
		return IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT |
		       IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
		       IBV_QP_MAX_QP_RD_ATOMIC;
	default:
		return IBV_QP_STATE;
	}
}

/* RESET -> INIT -> RTR -> RTS towards itself or another QP of ours */
/* A UD QP to RTS: INIT with a Q_Key, RTR, RTS with a send PSN. */
static void qp_ud_ready(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT, .port_num = 1, .qkey = rnd(),
	};
	int err;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	err = err ? err : ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = rnd() & 0xffffff;
	err = err ? err : ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	account(OP_QP_MODIFY, err, XOK, "(qp %u, UD to RTS)", qp->handle);
}

static void qp_connect(struct ibv_qp *qp)
{
	struct ibv_qp *peer = qps[rndn(MAX_QP)];
	struct ibv_qp_attr a;
	int err;

	if (qp->qp_type == IBV_QPT_UD) {
		qp_ud_ready(qp);
		return;
	}
	if (gid_index < 0)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	err = ibv_modify_qp(qp, &a, qp_mask_for(IBV_QPS_INIT));
	account(OP_QP_MODIFY, err, XOK, "(qp %u, connect: INIT)", qp->handle);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer ? peer->qp_num : qp->qp_num;
	a.max_dest_rd_atomic = 1 + rndn(16);
	a.min_rnr_timer = rndn(32);
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	err = err ? err : ibv_modify_qp(qp, &a, qp_mask_for(IBV_QPS_RTR));
	account(OP_QP_MODIFY, err, XOK, "(qp %u, connect: RTR)", qp->handle);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 8 + rndn(4);
	a.retry_cnt = rndn(3);
	a.rnr_retry = rndn(3);
	a.max_rd_atomic = 1 + rndn(16);
	err = err ? err : ibv_modify_qp(qp, &a, qp_mask_for(IBV_QPS_RTS));
	account(OP_QP_MODIFY, err, XOK, "(qp %u, connect: RTS)", qp->handle);
}

static void op_qp_create(void)
{
	static const enum ibv_qp_type types[] = {
		IBV_QPT_UC, IBV_QPT_UD, IBV_QPT_RAW_PACKET, IBV_QPT_XRC_SEND,
		IBV_QPT_DRIVER,
	};
	struct ibv_qp_init_attr ia;
	struct ibv_pd *pd = some_pd();
	struct ibv_qp *qp;
	unsigned int i;
	expect_t x;

	for (i = 0; i < MAX_QP && qps[i]; i++)
		;
	if (i == MAX_QP || !pd || !some_cq())
		return;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = some_cq();
	ia.recv_cq = rndn(2) ? ia.send_cq : some_cq();
	ia.qp_type = rndn(10) ? IBV_QPT_RC : types[rndn(5)];
	ia.sq_sig_all = rndn(2);
	ia.cap.max_send_wr = rnd_cap(64, SHCA_MAX_QP_WR);
	ia.cap.max_recv_wr = rnd_cap(64, SHCA_MAX_QP_WR);
	ia.cap.max_send_sge = rnd_cap(4, SHCA_MAX_SGE);
	ia.cap.max_recv_sge = rnd_cap(4, SHCA_MAX_SGE);
	ia.cap.max_inline_data = rndn(3) ? 0 : rnd_cap(256, SHCA_MAX_INLINE);
	if (ia.qp_type != IBV_QPT_RC && ia.qp_type != IBV_QPT_UD)
		x = X(EOPNOTSUPP);	/* refused by the provider */
	else if (lookup_err(pd->handle, T_PD))
		x = X(lookup_err(pd->handle, T_PD));	/* a stale PD */
	else if (ia.cap.max_send_wr > SHCA_MAX_QP_WR ||
		 ia.cap.max_recv_wr > SHCA_MAX_QP_WR ||
		 ia.cap.max_send_sge > SHCA_MAX_SGE ||
		 ia.cap.max_recv_sge > SHCA_MAX_SGE ||
		 ia.cap.max_inline_data > SHCA_MAX_INLINE)
		x = X(EINVAL);
	else
		x = XOK | X(ENOMEM);
	errno = 0;
	qp = ibv_create_qp(pd, &ia);
	account(OP_QP_CREATE, qp ? 0 : errno, x,
		"(type %d, wr %u/%u, sge %u/%u, inline %u)", ia.qp_type,
		ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
		ia.cap.max_recv_sge, ia.cap.max_inline_data);
	if (qp) {
		kset(qp->handle, T_QP);
		tab[qp->handle].pd = pd->handle;
		tab[qp->handle].scq = ia.send_cq->handle;
		tab[qp->handle].rcq = ia.recv_cq->handle;
		qps[i] = qp;
		if (rndn(4))
			qp_connect(qp);
	}
}

static void op_qp_modify(void)
{
	static const enum ibv_qp_state next[] = {
		[IBV_QPS_RESET] = IBV_QPS_INIT, [IBV_QPS_INIT] = IBV_QPS_RTR,
		[IBV_QPS_RTR] = IBV_QPS_RTS, [IBV_QPS_RTS] = IBV_QPS_RTS,
		[IBV_QPS_SQD] = IBV_QPS_RTS, [IBV_QPS_SQE] = IBV_QPS_RTS,
		[IBV_QPS_ERR] = IBV_QPS_RESET,
	};
	struct ibv_qp *qp = qps[rndn(MAX_QP)], *peer = qps[rndn(MAX_QP)];
	struct ibv_qp_attr a;
	int mask, err;

	if (!qp || gid_index < 0)
		return;
	memset(&a, 0, sizeof(a));
	/* mostly the next state of a connection, with what it needs */
	a.qp_state = rndn(4) ? next[qp->state <= IBV_QPS_ERR ? qp->state : 0] :
		     (enum ibv_qp_state)rndn(8);
	mask = qp_mask_for(a.qp_state);
	if (!rndn(8))
		mask = rnd() & ((IBV_QP_DEST_QPN << 1) - 1);
	a.port_num = rndn(16) ? 1 : rndn(4);
	a.pkey_index = rndn(16) ? 0 : rndn(4);
	a.qp_access_flags = rndn(4) ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : rnd() & 0xff;
	a.path_mtu = rndn(8) ? IBV_MTU_1024 : rndn(8);
	a.dest_qp_num = peer && rndn(8) ? peer->qp_num : (uint32_t)rnd() & 0xffffff;
	a.rq_psn = rnd() & 0xffffff;
	a.sq_psn = rnd() & 0xffffff;
	a.max_dest_rd_atomic = rndn(20);
	a.max_rd_atomic = rndn(20);
	a.min_rnr_timer = rndn(32);
	a.timeout = rndn(4) ? 8 + rndn(4) : rndn(32);	/* ~1 ms .. 8 ms */
	a.retry_cnt = rndn(3);
	a.rnr_retry = rndn(4);
	a.ah_attr.is_global = rndn(16) != 0;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = rndn(16) ? (uint8_t)gid_index : rndn(256);
	a.ah_attr.grh.hop_limit = 1;
	/* the result depends on the QP's state: not predicted, only bounded */
	err = ibv_modify_qp(qp, &a, mask);
	account(OP_QP_MODIFY, err, XOK | X(EINVAL) | X(EOPNOTSUPP) | X(ENODATA) |
		X(ENOENT), "(qp %u, to state %d, mask %#x)", qp->handle,
		a.qp_state, mask);
}

static void op_qp_destroy(void)
{
	unsigned int i = rndn(MAX_QP);
	uint32_t h;
	int err;

	if (!qps[i])
		return;
	h = qps[i]->handle;
	err = ibv_destroy_qp(qps[i]);
	account(OP_QP_DESTROY, err, XOK, "(handle %u)", h);
	if (!err) {
		kdel(h);
		qps[i] = NULL;
	}
}

/* an SGE: mostly in rw with a live lkey, else anything */
static struct ibv_sge rnd_sge(void)
{
	struct ibv_mr *mr = mrs[rndn(MAX_MR)];
	struct ibv_sge sg;

	sg.addr = rndn(4) ? (uintptr_t)rw + rndn(RW_LEN) : rnd_addr();
	sg.length = rndn(8) ? rndn(rndn(2) ? 64 : 8192) : (uint32_t)rnd();
	sg.lkey = mr && rndn(4) ? mr->lkey : (uint32_t)rnd();
	return sg;
}

static void op_post_send(void)
{
	static const enum ibv_wr_opcode opcodes[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp *qp = qps[rndn(MAX_QP)];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3][40];
	unsigned int n = 1 + rndn(3), k, j;
	int err;

	if (!qp)
		return;
	/*
	 * libibverbs dereferences wr.ud.ah of a UD send: the random RDMA
	 * fields below would be a wild pointer there.
	 */
	if (qp->qp_type == IBV_QPT_UD)
		return;
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		struct ibv_mr *mr = mrs[rndn(MAX_MR)];

		wr[k].wr_id = rnd();
		wr[k].opcode = rndn(16) ? opcodes[rndn(8)] : (enum ibv_wr_opcode)rndn(32);
		wr[k].send_flags = rndn(2) ? IBV_SEND_SIGNALED :
				   rndn(6) ? rnd() & (IBV_SEND_SIGNALED | IBV_SEND_FENCE |
						      IBV_SEND_SOLICITED | IBV_SEND_INLINE) :
					     (unsigned int)rnd();
		wr[k].num_sge = rndn(8) ? rndn(4) : rndn(40);
		for (j = 0; j < (unsigned int)wr[k].num_sge; j++)
			sg[k][j] = rnd_sge();
		wr[k].sg_list = sg[k];
		wr[k].imm_data = rnd();
		if (wr[k].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr[k].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			/* mostly 8-byte aligned inside a live MR */
			wr[k].wr.atomic.remote_addr = mr && rndn(4) ?
				(uint64_t)(uintptr_t)mr->addr +
				(rndn(4) ? rndn(64) & ~7ULL : rndn(64)) : rnd();
			wr[k].wr.atomic.rkey = mr && rndn(4) ? mr->rkey : (uint32_t)rnd();
			wr[k].wr.atomic.compare_add = rnd();
			wr[k].wr.atomic.swap = rnd();
		} else {
			wr[k].wr.rdma.remote_addr = mr && rndn(4) ?
				(uint64_t)(uintptr_t)mr->addr + rndn(mr->length + 1) : rnd();
			wr[k].wr.rdma.rkey = mr && rndn(4) ? mr->rkey : (uint32_t)rnd();
		}
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	err = ibv_post_send(qp, wr, &bad);
	/* accepted, or refused at post time: bounded, not predicted */
	account(OP_POST_SEND, err, XOK | X(EINVAL) | X(ENOMEM) | X(EFAULT) |
		X(EOPNOTSUPP), "(qp %u, %u WRs, first opcode %d flags %#x sges %d)",
		qp->handle, n, wr[0].opcode, wr[0].send_flags, wr[0].num_sge);
}

static void op_post_recv(void)
{
	struct ibv_qp *qp = qps[rndn(MAX_QP)];
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3][40];
	unsigned int n = 1 + rndn(3), k, j;
	int err;

	if (!qp)
		return;
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		wr[k].wr_id = rnd();
		wr[k].num_sge = rndn(8) ? rndn(4) : rndn(40);
		for (j = 0; j < (unsigned int)wr[k].num_sge; j++)
			sg[k][j] = rnd_sge();
		wr[k].sg_list = sg[k];
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	err = ibv_post_recv(qp, wr, &bad);
	account(OP_POST_RECV, err, XOK | X(EINVAL) | X(ENOMEM),
		"(qp %u, %u WRs, sges %d)", qp->handle, n, wr[0].num_sge);
}

static const struct {
	void (*fn)(void);
	unsigned int weight;
} ops[] = {
	{ op_pd_alloc, 4 }, { op_pd_alloc_raw, 3 }, { op_pd_dealloc, 2 },
	{ op_pd_dealloc_raw, 4 }, { op_reg, 14 }, { op_reg_raw, 16 },
	{ op_rereg, 6 }, { op_rereg_raw, 10 }, { op_dereg, 6 },
	{ op_dereg_raw, 8 }, { op_hdr_raw, 3 }, { op_dm_alloc, 3 },
	{ op_dm_free, 2 }, { op_dm_copy, 4 }, { op_dm_mr, 4 },
	{ op_dm_mmap, 3 }, { op_dmabuf_mr, 5 }, { op_vm, 3 },
	{ op_cq_create, 1 }, { op_cq_destroy, 1 }, { op_poll, 2 },
	{ op_poll_raw, 1 }, { op_qp_create, 1 }, { op_qp_modify, 2 },
	{ op_qp_destroy, 1 }, { op_post_send, 2 }, { op_post_recv, 1 },
};

/*
 * A PD that should be free is still in use: show what the model holds
 * and what the kernel lists, to tell a model slip from a leak.
 */
static void dump_state(uint32_t pd)
{
	unsigned int j;

	vt_info("[child %d] PD %u busy at cleanup; the model holds:", child_no, pd);
	for (j = 0; j < MAXH; j++)
		if (tab[j].type != T_NONE)
			vt_info("  handle %u type %d pd %u", j, tab[j].type, tab[j].pd);
	fflush(stdout);
	if (system("rdma res show qp; rdma res show cq; rdma res show mr; rdma res show pd"))
		vt_info("rdma res show failed");
}

static void cleanup(void)
{
	struct ib_uverbs_dereg_mr dmr;
	struct ib_uverbs_dealloc_pd dpd;
	unsigned int i;
	int err;

	for (i = 0; i < MAX_QP; i++) {
		if (!qps[i])
			continue;
		err = ibv_destroy_qp(qps[i]);
		account(OP_CLEANUP, err, XOK, "(destroy_qp %u)", qps[i]->handle);
		if (!err)
			kdel(qps[i]->handle);
	}
	for (i = 0; i < MAX_CQ; i++) {
		if (!cqs[i])
			continue;
		err = ibv_destroy_cq(cqs[i]);
		account(OP_CLEANUP, err, XOK, "(destroy_cq %u)", cqs[i]->handle);
		if (!err)
			kdel(cqs[i]->handle);
	}
	for (i = 0; i < MAXH; i++) {
		if (tab[i].type != T_MR)
			continue;
		dmr.mr_handle = i;
		err = raw_cmd(IB_USER_VERBS_CMD_DEREG_MR, &dmr, sizeof(dmr), 0);
		account(OP_CLEANUP, err, XOK, "(raw DEREG_MR %u)", i);
		if (!err)
			kdel(i);
	}
	for (i = 0; i < MAX_DM; i++) {
		if (!dms[i])
			continue;
		err = ibv_free_dm(dms[i]);
		account(OP_CLEANUP, err, XOK, "(free_dm %u)", dm_handle(dms[i]));
		if (!err)
			kdel(dm_handle(dms[i]));
	}
	for (i = 0; i < MAXH; i++) {
		if (tab[i].type != T_PD)
			continue;
		dpd.pd_handle = i;
		err = raw_cmd(IB_USER_VERBS_CMD_DEALLOC_PD, &dpd, sizeof(dpd), 0);
		account(OP_CLEANUP, err, XOK, "(raw DEALLOC_PD %u)", i);
		if (err == EBUSY)
			dump_state(i);
		if (!err)
			kdel(i);
	}
	for (i = 0; i < MAX_RAWMAP; i++)
		if (rawmaps[i].addr)
			munmap(rawmaps[i].addr, rawmaps[i].len);
	err = ibv_close_device(ctx);
	account(OP_CLEANUP, err, XOK, "(close_device)");
}

/* mode 0: clean up at the end; 1: just exit; 2: to be killed half way */
static int child(const char *name, uint64_t seed, uint64_t iters, int mode,
		 int kill_fd)
{
	unsigned int total = 0, i;
	uint64_t pick;

	rng = seed * 0x9E3779B97F4A7C15ULL + child_no + 1;
	if (!rng)
		rng = 1;
	page = sysconf(_SC_PAGESIZE);
	setup_memory();
	ctx = vt_open(name);
	cmd_fd = ctx->cmd_fd;
	find_gid();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		total += ops[i].weight;

	for (iter = 0; iter < iters; iter++) {
		if (mode == 2 && iter == iters / 2 && kill_fd >= 0) {
			if (write(kill_fd, "k", 1) != 1)
				vt_info("[child %d] cannot ask to be killed", child_no);
		}
		pick = rndn(total);
		for (i = 0; pick >= ops[i].weight; i++)
			pick -= ops[i].weight;
		/* keep room: when full, destroy instead of creating */
		if (count_type(T_MR) >= MAX_MR && rndn(2))
			op_dereg_raw();
		else
			ops[i].fn();
		st->iters = iter + 1;
	}
	if (mode == 0)
		cleanup();
	st->finished = 1;
	fflush(stdout);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	uint64_t iters = argc > 3 ? strtoull(argv[3], NULL, 0) : 2000;
	int procs = argc > 4 ? atoi(argv[4]) : 4;
	uint64_t tot_n = 0, tot_unexp = 0, tot_iters = 0;
	long long pins0, pins1;
	int killfd[64], status, i, op, waited;
	struct timespec t0, t1;
	pid_t pids[64];
	struct stats *all;

	if (argc < 4 || procs < 1 || procs > 64 || !iters) {
		fprintf(stderr, "usage: %s DEV SEED ITERS [PROCS (1..64, default 4)]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	all = mmap(NULL, procs * sizeof(*all), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED) {
		vt_bad("mmap: %s", strerror(errno));
		return 2;
	}
	memset(all, 0, procs * sizeof(*all));
	pins0 = vt_foll_pins();
	vt_info("seed %llu, %llu iterations in each of %d processes; pinned pages before: %lld",
		(unsigned long long)seed, (unsigned long long)iters, procs, pins0);
	clock_gettime(CLOCK_MONOTONIC, &t0);

	for (i = 0; i < procs; i++) {
		int fds[2] = { -1, -1 };
		int mode = i % 3 == 2 ? 2 : i % 3;

		killfd[i] = -1;
		if (mode == 2 && pipe(fds)) {
			vt_bad("pipe: %s", strerror(errno));
			return 2;
		}
		fflush(stdout);
		pids[i] = fork();
		if (pids[i] < 0) {
			vt_bad("fork: %s", strerror(errno));
			return 2;
		}
		if (!pids[i]) {
			if (fds[0] >= 0)
				close(fds[0]);
			child_no = i;
			st = &all[i];
			_exit(child(name, seed, iters, mode, fds[1]));
		}
		if (fds[1] >= 0)
			close(fds[1]);
		killfd[i] = fds[0];
	}
	for (i = 0; i < procs; i++) {
		char c;

		if (killfd[i] < 0)
			continue;
		if (read(killfd[i], &c, 1) == 1) {
			kill(pids[i], SIGKILL);
			vt_info("child %d (pid %d) SIGKILLed at iteration %llu", i,
				(int)pids[i], (unsigned long long)all[i].iters);
		} else {
			vt_bad("child %d (pid %d) ended before it could be killed", i,
			       (int)pids[i]);
		}
		close(killfd[i]);
	}
	for (i = 0; i < procs; i++) {
		int want_kill = i % 3 == 2;

		if (waitpid(pids[i], &status, 0) != pids[i]) {
			vt_bad("waitpid %d: %s", (int)pids[i], strerror(errno));
			continue;
		}
		if (want_kill)
			vt_check(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
				 "child %d (seed %llu) was killed by SIGKILL after %llu iterations",
				 i, (unsigned long long)seed, (unsigned long long)all[i].iters);
		else
			vt_check(WIFEXITED(status) && WEXITSTATUS(status) == 0 && all[i].finished,
				 "child %d (seed %llu) ran %llu iterations and %s (status %#x)",
				 i, (unsigned long long)seed, (unsigned long long)all[i].iters,
				 i % 3 ? "exited without cleaning up" : "cleaned up", status);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);

	vt_info("%-20s %8s %8s %8s %10s", "operation", "calls", "ok", "errno", "unexpected");
	for (op = 0; op < NR_OPS; op++) {
		uint64_t n = 0, ok = 0, err = 0, un = 0;

		for (i = 0; i < procs; i++) {
			n += all[i].n[op];
			ok += all[i].ok[op];
			err += all[i].err[op];
			un += all[i].unexp[op];
		}
		vt_info("%-20s %8llu %8llu %8llu %10llu", op_names[op],
			(unsigned long long)n, (unsigned long long)ok,
			(unsigned long long)err, (unsigned long long)un);
		tot_n += n;
		tot_unexp += un;
	}
	for (i = 0; i < procs; i++)
		tot_iters += all[i].iters;
	vt_info("%llu iterations in %d processes, %llu calls, %llu unexpected results, %.1f s",
		(unsigned long long)tot_iters, procs, (unsigned long long)tot_n,
		(unsigned long long)tot_unexp,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	vt_check(tot_unexp == 0, "no unexpected result (%llu)", (unsigned long long)tot_unexp);

	/* the killed processes' contexts are torn down as their files close */
	for (waited = 0; waited < 100; waited++) {
		pins1 = vt_foll_pins();
		if (pins1 == pins0)
			break;
		usleep(100000);
	}
	vt_check(pins0 >= 0 && pins1 == pins0,
		 "pinned pages in the system back to %lld: %lld", pins0, pins1);
	return vt_exit();
}
