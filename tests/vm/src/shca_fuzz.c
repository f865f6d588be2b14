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
 *          iova; access flags from all 32 bits (ON_DEMAND included:
 *          on-demand paging registrations, explicit, implicit and
 *          HUGETLB, where the device pages on demand - not with
 *          FUZZ_NO_ODP=1 - and EOPNOTSUPP/EINVAL where it does not);
 *          bad response pointers
 *   REREG  ibv_rereg_mr and raw REREG_MR with random flags (all 32 bits),
 *          handles, PDs, translations and access
 *   DEREG  ibv_dereg_mr and raw DEREG_MR of live, stale and random handles
 *   HDR    raw commands (the MR, PD, AH, SRQ and MW ones) with short
 *          in_words/out_words
 *   DM     ibv_alloc_dm (random length/alignment/comp_mask), ibv_free_dm,
 *          ibv_memcpy_to/from_dm (random offset/length), ibv_reg_dm_mr
 *          (random offset/length/access), raw mmap() of cmd_fd at random
 *          and at real DM offsets (then reg_mr on that VM_PFNMAP mapping)
 *   DMABUF ibv_reg_dmabuf_mr with a udmabuf, random fds, offsets, lengths
 *   VM     munmap/mremap/mmap of memory while it is registered
 *   CQ     ibv_create_cq (random, zero, negative and too large sizes,
 *          comp vectors), ibv_destroy_cq (EBUSY while a QP uses it),
 *          ibv_poll_cq and raw POLL_CQ with any handle
 *   QP     ibv_create_qp (RC, UD, UC - fuzzed like RC where the device
 *          makes UC QPs, EOPNOTSUPP where it does not - and the other
 *          types; capabilities around the limits; on live or destroyed
 *          SRQs), ibv_modify_qp towards a random state with the right or
 *          random attributes, connected to itself or to another QP of the
 *          process, ibv_destroy_qp
 *   POST   ibv_post_send/ibv_post_recv chains with random opcodes, flags
 *          (inline included), SGE counts, addresses, lengths, lkeys,
 *          rkeys and remote addresses (live keys or not), executed by the
 *          device against the process' own memory; ibv_post_recv on a QP
 *          in RESET or on an SRQ (EINVAL)
 *   SRQ    ibv_create_srq (random and boundary max_wr, max_sge,
 *          srq_limit), ibv_modify_srq (random masks and limits),
 *          ibv_query_srq (checked against the model), ibv_post_srq_recv
 *          (too many SGEs, into a full SRQ), ibv_destroy_srq (EBUSY while
 *          QPs use it); raw CREATE_SRQ, MODIFY_SRQ, QUERY_SRQ, DESTROY_SRQ
 *          with any handle, driver data and response pointer, raw
 *          POST_SRQ_RECV with garbled WQE sizes, WR and SGE counts
 *   AH     ibv_create_ah and raw CREATE_AH: the device's GIDs, multicast
 *          GIDs and GIDs no device owns, any source GID index (empty
 *          entries, the other address family), ports 0/1/2, no GRH,
 *          random hop limit, traffic class, flow label; ibv_destroy_ah
 *          and raw DESTROY_AH of live, stale and random handles
 *   UD     UD sends with the process' own (live or destroyed) AHs to its
 *          UD QPs, to QP1 (MAD-like datagrams with the GSI Q_Key), to QP
 *          numbers 0, 0xffffff and beyond, controlled Q_Keys, inline data,
 *          lengths above the MTU; receives on UD QPs
 *   MW     ibv_alloc_mw and raw ALLOC_MW (any type, truncated to the
 *          command's byte, any PD handle, driver data, bad response
 *          pointers), ibv_dealloc_mw and raw DEALLOC_MW of live, stale
 *          and random handles; binds of the process' windows to its MRs
 *          (ibv_bind_mw for type 1, IBV_WR_BIND_MW for type 2, followed
 *          by LOCAL_INV of the new key at times) on its QPs in any state,
 *          mostly well-formed (one PD, a range inside an MR registered
 *          with MW_BIND, remote rights), else with other ranges, rights,
 *          keys and flags; RDMA through the windows' keys; the driver
 *          method SOFTHCA_IB_METHOD_QP_POST_LOCAL as a raw ioctl with any
 *          QP, MW and MR handle (freed, of another type, beyond 32 bits,
 *          negative), attributes missing, repeated, unknown, reordered,
 *          short, long or unreadable work requests, any opcode, flags,
 *          key, range and rights, bad headers
 *   RING   the mapped send and receive rings the provider gives RC, UC
 *          and UD QPs (softhca-abi.h, struct softhca_wq_ring; found as the
 *          mappings of cmd_fd that come with the QP, told apart by size)
 *          written into behind the provider's back: a receive ring's
 *          producer beyond max_recv_wr, behind the consumer or anything,
 *          receive slots with too many SGEs and wild ones, send slots with
 *          any opcode (LOCAL_INV and BIND_MW included), flags, SGE count,
 *          keys and addresses, random bytes in headers and slots; then
 *          the doorbell. Such a QP is "poisoned": it may be in the error
 *          state (the kernel's answer to a corrupt receive ring), its
 *          completions are the hostile requests' (statuses and opcodes
 *          still valid), and any window may have been invalidated; posts
 *          to it are bounded, not predicted, and normal traffic goes on
 *   DOORBELL  SOFTHCA_IB_METHOD_QP_DOORBELL as a raw ioctl with live
 *          (rings or not), freed and foreign handles, both queues and
 *          unknown ones, producers equal to the consumer (0), ahead by up
 *          to the ring's slots (old slots reposted: poisoned) or beyond
 *          (EINVAL), attributes missing (QP, QUEUE: EINVAL; PRODUCER of
 *          the send queue: ENOENT), repeated, unknown, reordered, of the
 *          wrong length or with reserved bits, bad headers; POST_LOCAL's
 *          raw ioctls may name it too (the method after POST_LOCAL)
 *   MMAP   the rings mapped again (MAP_SHARED, their size: fine),
 *          MAP_PRIVATE, with another length, and after their QP is gone
 *          (EINVAL, unless the offset was handed out again)
 *
 * Every result is checked against a model of the context (which handle is
 * what object, which PD and DM each MR uses, which memory is mapped how
 * (the provider maps DMs, CQ rings and QP rings, at offsets the kernel
 * hands out from one allocator and hands out again once freed),
 * which MRs each window may be bound to - a bind's outcome shows only in
 * its completion, so an MR a bind was posted to may refuse dereg_mr and
 * rereg_mr with EBUSY until it or the window is gone):
 * a success where an error was due, or an errno outside the expected set,
 * is an "unexpected" result and fails the run. Children 2, 5, ... (i % 3
 * == 2) are SIGKILLed half way; children 1, 4, ... exit without cleaning
 * up (the kernel tears their context down, windows bound or not);
 * children 0, 3, ... destroy everything themselves, expecting success
 * each time (the QPs, then the windows: every MR must then deregister).
 * The same seed gives the same sequence of operations; addresses (ASLR),
 * device-memory contention between the processes and the moment of the
 * kill vary. The parent waits for all, prints per-operation counts (and
 * how the binds completed) and checks the system's pinned pages
 * (/proc/vmstat) are back to where they were.
 *
 * Exit status: 0 if there was no unexpected result, 1 otherwise, 2 if it
 * could not run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/udmabuf.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl_cmds.h>

#include "vmtest.h"
/* the driver's uverbs ABI (SOFTHCA_IB_METHOD_QP_POST_LOCAL) */
#include "../../../include/uapi/rdma/softhca-abi.h"

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
/* IB_ACCESS_SUPPORTED: without the FLUSH bits before 6.2 (core_rules()) */
#define IB_ACCESS_SUPP	ib_access_supp
static uint32_t ib_access_supp = A_HUGE | A_OPTIONAL | ((A_FLUSH_P << 1) - 1);
/* ib_check_mr_access() says EINVAL for ODP on a device without it in 6.1 */
static int odp_errno = EOPNOTSUPP;
/* the device pages on demand: ODP registrations follow odp_expect() */
static int dev_odp;
/* FUZZ_NO_ODP=1: ON_DEMAND is not asked for (rnd_access()) */
static int no_odp;
#define SHCA_ACCESS	(A_LW | A_RW | A_RR | A_RA | A_MW | A_ZB)
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
	if ((a & A_ODP) && !dev_odp)
		return odp_errno;
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

/* ---- statistics, shared with the parent ---------------------------------- */

enum op {
	OP_PD_ALLOC, OP_PD_ALLOC_RAW, OP_PD_DEALLOC, OP_PD_DEALLOC_RAW,
	OP_REG, OP_REG_RAW, OP_REREG, OP_REREG_RAW, OP_DEREG, OP_DEREG_RAW,
	OP_HDR_RAW, OP_DM_ALLOC, OP_DM_FREE, OP_DM_COPY, OP_DM_MR,
	OP_DM_MMAP, OP_DMABUF_MR, OP_VM, OP_CQ_CREATE, OP_CQ_DESTROY,
	OP_POLL, OP_POLL_RAW, OP_QP_CREATE, OP_QP_MODIFY, OP_QP_DESTROY,
	OP_POST_SEND, OP_POST_RECV, OP_SRQ_CREATE, OP_SRQ_DESTROY,
	OP_SRQ_MODIFY, OP_SRQ_QUERY, OP_SRQ_POST, OP_SRQ_CREATE_RAW,
	OP_SRQ_MODIFY_RAW, OP_SRQ_QUERY_RAW, OP_SRQ_DESTROY_RAW,
	OP_SRQ_POST_RAW, OP_AH_CREATE, OP_AH_DESTROY, OP_AH_CREATE_RAW,
	OP_AH_DESTROY_RAW, OP_UD_SEND, OP_MW_ALLOC, OP_MW_ALLOC_RAW,
	OP_MW_DEALLOC, OP_MW_DEALLOC_RAW, OP_MW_BIND, OP_POST_LOCAL,
	OP_RING, OP_DOORBELL, OP_CLEANUP, NR_OPS
};

static const char *const op_names[NR_OPS] = {
	"alloc_pd", "raw ALLOC_PD", "dealloc_pd", "raw DEALLOC_PD",
	"reg_mr", "raw REG_MR", "rereg_mr", "raw REREG_MR", "dereg_mr",
	"raw DEREG_MR", "raw bad header", "alloc_dm", "free_dm",
	"memcpy to/from dm", "reg_dm_mr", "mmap cmd_fd", "reg_dmabuf_mr",
	"munmap/mremap", "create_cq", "destroy_cq", "poll_cq",
	"raw POLL_CQ", "create_qp", "modify_qp", "destroy_qp", "post_send",
	"post_recv", "create_srq", "destroy_srq", "modify_srq", "query_srq",
	"post_srq_recv", "raw CREATE_SRQ", "raw MODIFY_SRQ", "raw QUERY_SRQ",
	"raw DESTROY_SRQ", "raw POST_SRQ_RECV", "create_ah", "destroy_ah",
	"raw CREATE_AH", "raw DESTROY_AH", "UD post_send", "alloc_mw",
	"raw ALLOC_MW", "dealloc_mw", "raw DEALLOC_MW", "bind_mw/BIND_MW",
	"raw POST_LOCAL", "ring scribble", "raw DOORBELL", "final cleanup",
};

/* how polled completions of binds (WC_BIND) and LOCAL_INVs (WC_INV) ended */
enum { WC_BIND, WC_INV, NR_WCK };
enum { WC_OK, WC_ERR, WC_FLUSH, NR_WCS };

struct stats {
	uint64_t n[NR_OPS], ok[NR_OPS], err[NR_OPS], unexp[NR_OPS];
	uint64_t wc[NR_WCK][NR_WCS];
	/* dereg_mr/rereg_mr refused with EBUSY; the model knew it would be */
	uint64_t mr_busy, mr_busy_sure;
	uint64_t odp_regs;	/* on-demand paging registrations made */
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

enum { T_NONE, T_PD, T_MR, T_DM, T_CQ, T_QP, T_SRQ, T_AH, T_MW, NR_T };

#define MAXH	4096
#define MW_MRS	8

struct kobj {
	int type;
	uint32_t pd;		/* MR, MW: its PD's handle */
	int dm;			/* MR: DM handle or -1 */
	uint64_t len;		/* DM: length; user MR: length pinned;
				 * MW: length of the last bind posted */
	uint32_t access;	/* MR: its access flags; MW: the rights
				 * of the last bind posted */
	uint64_t start;		/* user MR: address (or dma-buf offset)
				 * pinned; MW: the last bind's address */
	uint64_t iova;		/* user MR: its iova */
	int wpin;		/* user MR: pinned for writing */
	int dmabuf;		/* user MR: over a dma-buf */
	int odp;		/* user MR: on-demand paging, nothing pinned */
	uint32_t scq, rcq;	/* QP: its CQs' handles (and pd: its PD's) */
	int srq;		/* QP: its SRQ's handle or -1 */
	uint32_t max_wr;	/* SRQ: WQEs it holds */
	uint32_t max_sge;	/* SRQ: SGEs per WQE; QP: send SGEs */
	uint32_t rsge;		/* QP: receive SGEs */
	uint32_t max_inline;	/* QP: inline bytes */
	uint32_t limit;		/* SRQ: the limit, as last set */
	uint32_t qkey;		/* UD QP: its Q_Key, as last set */
	uint64_t posted;	/* SRQ: WQEs ever posted (>= those queued) */
	int exact;		/* SRQ: posted == queued (no QP took one) */
	int mw_type;		/* MW: 1 or 2 */
	uint32_t key;		/* MW: its rkey, as the last bind set it */
	/*
	 * MW: the MRs binds were posted to since it was allocated (it may
	 * be bound to one of them), less those deregistered since; -1: more
	 * than MW_MRS, any MR.
	 */
	int nbound;
	uint32_t bound[MW_MRS];
	/*
	 * MW: what the model knows for sure. Requests naming a window are
	 * numbered (seq); all went to one QP (post_qp) unless multi. If the
	 * last one, a bind to MR seq_mr, completed successfully, the window
	 * is bound to it (sure) until the next request names the window:
	 * one send queue executes in order.
	 */
	uint32_t seq;
	int64_t seq_mr, sure;
	uint32_t post_qp;
	int nposts, multi;
	unsigned int mwrefs;	/* MR: windows that list it in bound[] */
	unsigned int mwsure;	/* MR: windows surely bound to it */
};

static struct kobj tab[MAXH];
/* live windows that may be bound to any MR (nbound -1) */
static unsigned int mw_any;
/* numbers requests that may name a window (wr_id), never twice */
static uint32_t post_seq;
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
	/*
	 * the provider maps a DM and a CQ ring when it creates them, and
	 * a QP's send and receive rings (the mmap offsets of all of them
	 * come from one allocator: a freed offset may be handed out again)
	 */
	if (type == T_DM || type == T_CQ || type == T_QP)
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
	tab[h].srq = -1;
}

/*
 * Memory windows and the MRs they may be bound to. A bind executes after
 * it was posted and its outcome shows only in its completion: the model
 * knows which MRs a window may be bound to (bound[]), and which one it is
 * bound to when the last request naming it was a bind that completed
 * successfully (sure). softhca refuses dereg_mr and rereg_mr (EBUSY) of
 * an MR a window is bound to.
 */

/* window @w is surely bound to MR @mr (-1: not known to be bound) */
static void mw_set_sure(struct kobj *w, int64_t mr)
{
	if (w->sure >= 0)
		tab[w->sure].mwsure--;
	w->sure = mr;
	if (mr >= 0)
		tab[mr].mwsure++;
}

/* MR @h was deregistered: no window is bound to it, none will be */
static void mw_forget_mr(uint32_t h)
{
	unsigned int i;
	int k;

	for (i = 0; i < MAXH && (tab[h].mwrefs || tab[h].mwsure); i++) {
		struct kobj *w = &tab[i];

		if (w->type != T_MW)
			continue;
		if (w->sure == h)
			mw_set_sure(w, -1);
		if (w->seq_mr == h)
			w->seq_mr = -1;
		for (k = 0; k < w->nbound; k++)
			if (w->bound[k] == h) {
				w->bound[k] = w->bound[--w->nbound];
				tab[h].mwrefs--;
				break;		/* listed once */
			}
	}
}

/* window @h was deallocated: bound to nothing */
static void mw_gone(uint32_t h)
{
	struct kobj *w = &tab[h];
	int k;

	mw_set_sure(w, -1);
	if (w->nbound < 0)
		mw_any--;
	for (k = 0; k < w->nbound; k++)
		tab[w->bound[k]].mwrefs--;
}

static void kdel(uint32_t h)
{
	if (h < MAXH) {
		if (tab[h].type == T_DM || tab[h].type == T_CQ ||
		    tab[h].type == T_QP)
			maps_gen++;
		if (tab[h].type == T_MR)
			mw_forget_mr(h);
		else if (tab[h].type == T_MW)
			mw_gone(h);
		tab[h].type = T_NONE;
	}
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

/* objects of the model that hold PD @h: MRs, QPs, SRQs, AHs and MWs */
static unsigned int pd_users(uint32_t h)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAXH; i++)
		if ((tab[i].type == T_MR || tab[i].type == T_QP ||
		     tab[i].type == T_SRQ || tab[i].type == T_AH ||
		     tab[i].type == T_MW) &&
		    tab[i].pd == h)
			n++;
	return n;
}

/* a window allocated: bound to nothing */
static void mw_created(uint32_t h, uint32_t pd, int type, uint32_t key)
{
	kset(h, T_MW);
	tab[h].pd = pd;
	tab[h].mw_type = type;
	tab[h].key = key;
	tab[h].seq_mr = -1;
	tab[h].sure = -1;
}

/*
 * Request number @seq, naming window @mw (a bind to MR @mr, or -1), was
 * posted to QP @qp: the window's state is unknown until it completes.
 */
static void mw_posted(uint32_t mw, uint32_t qp, int64_t mr, uint32_t seq)
{
	struct kobj *w = &tab[mw];

	if (w->nposts++ && w->post_qp != qp)
		w->multi = 1;
	w->post_qp = qp;
	w->seq = seq;
	w->seq_mr = mr;
	mw_set_sure(w, -1);
}

/*
 * Request number @seq, an invalidation of @key, was posted to QP @qp
 * (or, remote, to its peer: @qp -1): the windows that may have the key.
 */
static void mw_key_posted(int64_t qp, uint32_t key, uint32_t seq)
{
	unsigned int i;

	for (i = 0; i < MAXH; i++) {
		if (tab[i].type != T_MW || tab[i].key != key)
			continue;
		mw_posted(i, qp < 0 ? tab[i].post_qp : qp, -1, seq);
		if (qp < 0)
			tab[i].multi = 1;
	}
}

/* request number @seq, a bind, completed successfully */
static void mw_bind_done(uint32_t seq)
{
	unsigned int i;

	for (i = 0; i < MAXH; i++) {
		struct kobj *w = &tab[i];

		if (w->type == T_MW && w->seq == seq) {
			if (!w->multi && w->seq_mr >= 0 &&
			    ktype(w->seq_mr) == T_MR)
				mw_set_sure(w, w->seq_mr);
			return;
		}
	}
}

/* a bind of window @mw to MR @mr was posted */
static void mw_may_bind(uint32_t mw, uint32_t mr)
{
	struct kobj *w = &tab[mw];
	int k;

	if (w->nbound < 0)
		return;
	for (k = 0; k < w->nbound; k++)
		if (w->bound[k] == mr)
			return;
	if (w->nbound < MW_MRS) {
		w->bound[w->nbound++] = mr;
		tab[mr].mwrefs++;
		return;
	}
	/* too many to list: any MR from now on */
	for (k = 0; k < w->nbound; k++)
		tab[w->bound[k]].mwrefs--;
	w->nbound = -1;
	mw_any++;
}

/* a window may be bound to MR @h */
static int mr_windows_maybe(uint32_t h)
{
	return mw_any || tab[h].mwrefs;
}

/* QPs of the model on SRQ @h */
static unsigned int srq_users(uint32_t h)
{
	unsigned int i, n = 0;

	for (i = 0; i < MAXH; i++)
		if (tab[i].type == T_QP && tab[i].srq == (int)h)
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
	pick = vt_rndn(n);
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

	switch (vt_rndn(10)) {
	case 0: case 1: case 2: case 3:
		h = live_of(type);
		if (h >= 0)
			return h;
		/* fall through */
	case 4: case 5:
		h = live_of(T_PD + vt_rndn(NR_T - T_PD));
		if (h >= 0)
			return h;
		/* fall through */
	case 6:
		if (nfreed)
			return freed[vt_rndn(nfreed < 16 ? nfreed : 16)];
		/* fall through */
	case 7: case 8:
		return vt_rndn(64);
	default:
		return boundary[vt_rndn(sizeof(boundary) / sizeof(boundary[0]))];
	}
}

/* userspace objects of libibverbs; may be stale (the model decides) */
#define MAX_PD	8
#define MAX_MR	96
#define MAX_DM	4
#define MAX_MW	8
#define MAX_RAWMAP 4

static struct ibv_context *ctx;
static int cmd_fd;
static size_t page;
static struct ibv_pd *pds[MAX_PD];
static struct ibv_mr *mrs[MAX_MR];
static int mr_dmabuf[MAX_MR];
static struct ibv_dm *dms[MAX_DM];
static struct ibv_mw *mws[MAX_MW];
static struct { void *addr; size_t len; } rawmaps[MAX_RAWMAP];

/* offsets of rings whose QP is gone: they map no more (unless reused) */
#define DEAD_RINGS 8
static struct { uint64_t pgoff, len; } dead_ring[DEAD_RINGS];
static unsigned int ndead_ring;

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
/* the end of rw, registered as ud_mr on ud_pd: UD payloads and receives */
#define UDBUF_LEN	(16UL * 4096)
static char *udbuf;
static struct ibv_pd *ud_pd;
static struct ibv_mr *ud_mr;
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

/*
 * An on-demand paging registration (the device has ODP): softhca's rules
 * (shca_reg_odp_mr()), then the core's ib_umem_odp_get(), which looks at
 * no page - the memory behind the range does not matter - but may find
 * the range too large to track (ENOMEM) or to round (EOVERFLOW).
 * HUGETLB goes with ODP (a range without huge pages registers and its
 * accesses fail). Start 0 and length SIZE_MAX: implicit ODP at iova 0.
 */
static expect_t odp_expect(uint64_t a, uint64_t len, uint64_t iova,
			   uint32_t access)
{
	int e = drv_access_err(access & ~(A_ODP | A_HUGE));

	if (!a && len == UINT64_MAX) {
		if (iova || (access & A_HUGE))
			return X(EINVAL);
		return e ? X(e) : XOK | X(ENOMEM);
	}
	if (e)
		return X(e);
	if (!len || len > MAX_MR_SIZE || a + len < a || iova + len < iova)
		return X(EINVAL);
	return XOK | X(ENOMEM) | X(EOVERFLOW);
}

/*
 * The length of an explicit ODP registration the fuzzer sends. The
 * core's ib_umem_odp_get() allocates two lists of 8 bytes per page of
 * the range (kvcalloc(), GFP_KERNEL) - 2 GiB each for a range of
 * MAX_MR_SIZE - and vmalloc really tries any size below the RAM's: a few
 * such registrations at once in the 3 GiB guest wake the OOM killer,
 * which SIGKILLs the fuzzer's children (the first run with ODP on by
 * default: 4 of 6 killed, 0 unexpected results). That allocation is the
 * core's, not softhca's: an ODP length above ODP_MAX_LEN is cut to it
 * (1 MiB of lists), unless the driver refuses it before any allocation
 * (above MAX_MR_SIZE; implicit ODP has no lists).
 */
#define ODP_MAX_LEN	(256ULL << 20)

static uint64_t odp_len(uint64_t len, int odp)
{
	if (dev_odp && odp && len > ODP_MAX_LEN && len <= MAX_MR_SIZE)
		return ODP_MAX_LEN;
	return len;
}

/* pinned or on-demand paging, as @access says */
static expect_t reg_expect(uint64_t a, uint64_t len, uint64_t iova,
			   uint32_t access)
{
	if (dev_odp && (access & A_ODP))
		return odp_expect(a, len, iova, access);
	return range_expect(a, len, iova, access);
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

	switch (vt_rndn(20)) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		return (uintptr_t)rw + vt_rndn(RW_LEN);
	case 6:
		return (uintptr_t)rw + vt_rndn(RW_LEN / page) * page;
	case 7:
		return (uintptr_t)ro + vt_rndn(RO_LEN);
	case 8:
		return (uintptr_t)ro0 + vt_rndn(RO_LEN);
	case 9:
		return (uintptr_t)shm + vt_rndn(SHM_LEN);
	case 10:
		i = vt_rndn(NVOL);
		if (vol[i].addr)
			return (uintptr_t)vol[i].addr + vt_rndn(vol[i].len);
		return (uintptr_t)vol[i].old + vt_rndn(page);
	case 11:
		return (uintptr_t)arena + vt_rndn(arena_len);	/* guards too */
	case 12:
		return vt_rndn(0x10000);				/* NULL page */
	case 13:
		return kernel[vt_rndn(sizeof(kernel) / sizeof(kernel[0]))] + vt_rndn(2) * vt_rndn(1 << 20);
	case 14:
		return UINT64_MAX - vt_rndn(4) * page - vt_rndn(page);	/* wraps */
	case 15:
		if (rawmaps[i = vt_rndn(MAX_RAWMAP)].addr)
			return (uintptr_t)rawmaps[i].addr + vt_rndn(rawmaps[i].len);
		return vt_rnd();
	case 16:
		return vt_rnd() & 0x00007fffffffffffULL;
	default:
		return vt_rnd();
	}
}

static uint64_t rnd_len(uint64_t a)
{
	switch (vt_rndn(16)) {
	case 0:
		return 0;
	case 1:
		return 1;
	case 2:
		return page;
	case 3: case 4: case 5: case 6:
		return 1 + vt_rndn(4 * page);
	case 7: case 8:
		return 1 + vt_rndn(RW_LEN);
	case 9:
		return MAX_MR_SIZE - vt_rndn(2);
	case 10:
		return MAX_MR_SIZE + 1 + vt_rndn(2);
	case 11:
		return -a;			/* a + len == 2^64 */
	case 12:
		return -a + 1 + vt_rndn(page);	/* wraps */
	case 13:
		return UINT64_MAX - vt_rndn(2);
	case 14:
		return 1ULL << vt_rndn(64);
	default:
		return vt_rnd();
	}
}

static uint32_t rnd_access(void)
{
	static const uint32_t good[] = {
		0, A_LW, A_LW | A_RW, A_LW | A_RR, A_LW | A_RW | A_RR | A_RA,
		A_RR, A_LW | A_RELAXED, A_LW | A_ZB, A_RW, A_RA, A_MW, A_ODP,
		A_HUGE, A_FLUSH_G | A_LW, A_FLUSH_P,
	};
	uint32_t a;

	switch (vt_rndn(4)) {
	case 0: case 1:
		a = good[vt_rndn(sizeof(good) / sizeof(good[0]))];
		break;
	case 2:
		a = vt_rnd() & 0x3ff;
		break;
	default:
		a = vt_rnd();
		break;
	}
	/*
	 * On-demand paging is fuzzed by default (FUZZ_NO_ODP=1 leaves it
	 * out, to tell a pinned-memory failure from an ODP one). Its last
	 * misprediction was a rereg into or out of ODP (rereg_done(): a new
	 * MR, pinned as its new access says); ten runs passed after that
	 * fix, and its lengths are bounded by odp_len().
	 */
	return dev_odp && no_odp ? a & ~A_ODP : a;
}

/* a range inside memory that can be registered: [a, a + len) */
static void good_range(uint64_t *a, uint64_t *len)
{
	const char *base;
	size_t blen;
	unsigned int i;

	switch (vt_rndn(8)) {
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
		i = vt_rndn(NVOL);
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
	*len = 1 + vt_rndn(vt_rndn(4) ? 4 * page : blen);
	if (*len > blen)
		*len = blen;
	*a = (uintptr_t)base + vt_rndn(blen - *len + 1);
}

static uint32_t good_access(void)
{
	static const uint32_t good[] = {
		0, A_LW, A_LW | A_RW, A_LW | A_RR, A_LW | A_RW | A_RR | A_RA,
		A_RR, A_LW | A_RELAXED, A_LW | A_ZB, A_LW | A_RW | A_RR,
	};

	return good[vt_rndn(sizeof(good) / sizeof(good[0]))];
}

/* an iova: mostly the address (same page offset), sometimes not */
static uint64_t rnd_iova(uint64_t a)
{
	switch (vt_rndn(8)) {
	case 0:
		return vt_rnd();
	case 1:
		return (vt_rnd() & ~(uint64_t)(page - 1)) | (a & (page - 1));
	case 2:
		return UINT64_MAX - vt_rndn(2 * page);
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
	switch (vt_rndn(24)) {
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

	if (!e && pd_users(h))
		e = EBUSY;
	return e;
}

static void op_pd_dealloc(void)
{
	unsigned int i = vt_rndn(MAX_PD);
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
	unsigned int i, start = vt_rndn(MAX_PD);

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
	tab[h].odp = dev_odp && (tab[h].access & A_ODP);
	if (st)
		st->odp_regs += tab[h].odp;
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
	if (vt_rndn(2)) {
		good_range(&a, &len);
		iova = vt_rndn(4) ? a : rnd_iova(a);
		access = vt_rndn(4) ? good_access() : rnd_access();
		/* windows may be bound to some */
		if (!vt_rndn(3))
			access |= A_MW;
	} else {
		a = rnd_addr();
		len = rnd_len(a);
		iova = rnd_iova(a);
		access = rnd_access();
	}
	len = odp_len(len, access & A_ODP);
	if ((a & (page - 1)) != (iova & (page - 1)))
		x = X(EINVAL);
	else if ((access & A_ODP) && len == SIZE_MAX && a)
		x = X(EINVAL);	/* libibverbs: only implicit ODP may say SIZE_MAX */
	else if ((e = core_access_err(access)))
		x = X(e);
	else if ((e = lookup_err(pd->handle, T_PD)))
		x = X(e);
	else
		x = reg_expect(a, len, iova, access);
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
	if (vt_rndn(2)) {
		uint64_t a, len;

		good_range(&a, &len);
		cmd.start = a;
		cmd.length = len;
		cmd.hca_va = vt_rndn(4) ? cmd.start : rnd_iova(cmd.start);
		cmd.access_flags = vt_rndn(4) ? good_access() : rnd_access();
	} else {
		cmd.start = rnd_addr();
		cmd.length = rnd_len(cmd.start);
		cmd.hca_va = rnd_iova(cmd.start);
		cmd.access_flags = rnd_access();
	}
	cmd.length = odp_len(cmd.length, cmd.access_flags & A_ODP);
	cmd.pd_handle = any_handle(T_PD);
	if ((cmd.start & (page - 1)) != (cmd.hca_va & (page - 1)))
		x = X(EINVAL);
	else if ((e = core_access_err(cmd.access_flags)))
		x = X(e);
	else if ((e = lookup_err(cmd.pd_handle, T_PD)))
		x = X(e);
	else
		x = reg_expect(cmd.start, cmd.length, cmd.hca_va,
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

/* a dereg_mr or rereg_mr refused (@err EBUSY): a window was bound to it */
static void count_busy(int err, expect_t x)
{
	if (err != EBUSY)
		return;
	st->mr_busy++;
	if (x == X(EBUSY))
		st->mr_busy_sure++;
}

/* the driver's rereg of MR @h, no window bound to it */
static expect_t rereg_drv_expect(uint32_t h, uint32_t flags, uint64_t start,
				 uint64_t len, uint64_t iova, uint32_t access)
{
	int e;

	if (!(flags & REREG_ACCESS))
		access = tab[h].access;
	if (flags & REREG_TRANS)
		return reg_expect(start, len, iova, access);
	/* In or out of on-demand paging: a new MR over the same range. */
	if (dev_odp && ((access & A_ODP) || tab[h].odp)) {
		if (!tab[h].odp && tab[h].dmabuf)
			return X(EOPNOTSUPP);
		return reg_expect(tab[h].start, tab[h].len, tab[h].iova,
				  access);
	}
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
	/* softhca first refuses an MR windows are bound to */
	if (tab[h].mwsure)
		return X(EBUSY);
	return (mr_windows_maybe(h) ? X(EBUSY) : 0) |
	       rereg_drv_expect(h, flags, start, len, iova, access);
}

static void rereg_done(uint32_t h, uint32_t flags, uint32_t pd, uint32_t access,
		       uint64_t start, uint64_t len, uint64_t iova)
{
	int was_odp = tab[h].odp;

	if (flags & REREG_PD)
		tab[h].pd = pd;
	if (flags & REREG_ACCESS)
		tab[h].access = access;
	tab[h].odp = dev_odp && (tab[h].access & A_ODP);
	if (flags & REREG_TRANS)
		mr_pinned(h, start, len, iova, 0);
	else if (was_odp || tab[h].odp)
		/* a new MR over the range: pinned as its access says */
		tab[h].wpin = !!(tab[h].access & A_WRITABLE);
	else if (tab[h].access & A_WRITABLE)
		tab[h].wpin = 1;	/* an upgrade re-pinned for writing */
}

static uint32_t rnd_rereg_flags(void)
{
	switch (vt_rndn(10)) {
	case 0:
		return 0;
	case 1:
		return vt_rnd();
	case 2:
		return 1U << vt_rndn(32);
	default:
		return 1 + vt_rndn(7);
	}
}

static void op_rereg(void)
{
	unsigned int i = vt_rndn(MAX_MR);
	struct ibv_mr *mr = mrs[i];
	struct ibv_pd *pd = NULL;
	uint64_t a = 0, len = 0;
	uint32_t flags, access = 0, h;
	expect_t x;
	int ret, err;

	if (!mr || mr_dmabuf[i])
		return;
	h = mr->handle;
	flags = 1 + vt_rndn(7);
	if (flags & REREG_PD) {
		pd = some_pd();
		if (!pd)
			return;
	}
	if (flags & REREG_TRANS) {
		if (vt_rndn(3)) {
			good_range(&a, &len);
		} else {
			a = rnd_addr();
			len = rnd_len(a);
		}
	}
	if (flags & REREG_ACCESS)
		access = vt_rndn(3) ? good_access() : rnd_access();
	len = odp_len(len, (flags & REREG_ACCESS ? access : tab[h].access) & A_ODP);
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
	count_busy(err, x);
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
	if (vt_rndn(2)) {
		uint64_t a, len;

		good_range(&a, &len);
		cmd.start = a;
		cmd.length = len;
		cmd.hca_va = vt_rndn(4) ? cmd.start : rnd_iova(cmd.start);
		cmd.access_flags = vt_rndn(4) ? good_access() : rnd_access();
	} else {
		cmd.start = rnd_addr();
		cmd.length = rnd_len(cmd.start);
		cmd.hca_va = rnd_iova(cmd.start);
		cmd.access_flags = rnd_access();
	}
	/* the new MR is ODP if its new or its old access says so */
	cmd.length = odp_len(cmd.length, (cmd.access_flags & A_ODP) ||
			     (ktype(cmd.mr_handle) == T_MR && tab[cmd.mr_handle].odp));
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
		"(handle %u, flags %#x, start %#llx, len %#llx, hca_va %#llx, pd %u, access %#x, response %#llx; model: start %#llx len %#llx access %#x wpin %d odp %d)",
		cmd.mr_handle, cmd.flags, (unsigned long long)cmd.start,
		(unsigned long long)cmd.length,
		(unsigned long long)cmd.hca_va, cmd.pd_handle,
		cmd.access_flags, (unsigned long long)cmd.response,
		(unsigned long long)tab[cmd.mr_handle % MAXH].start,
		(unsigned long long)tab[cmd.mr_handle % MAXH].len,
		tab[cmd.mr_handle % MAXH].access, tab[cmd.mr_handle % MAXH].wpin,
		tab[cmd.mr_handle % MAXH].odp);
	count_busy(err, x);
	if (!err)
		rereg_done(cmd.mr_handle, cmd.flags, cmd.pd_handle,
			   cmd.access_flags, cmd.start, cmd.length,
			   cmd.hca_va);
}

/* dereg_mr of handle @h: EBUSY while a window is bound to it */
static expect_t dereg_expect(uint32_t h)
{
	int e = lookup_err(h, T_MR);

	if (e)
		return X(e);
	if (tab[h].mwsure)
		return X(EBUSY);
	return XOK | (mr_windows_maybe(h) ? X(EBUSY) : 0);
}

static void op_dereg(void)
{
	unsigned int i = vt_rndn(MAX_MR);
	struct ibv_mr *mr = mrs[i];
	uint32_t h;
	expect_t x;
	int err;

	if (!mr)
		return;
	h = mr->handle;
	x = dereg_expect(h);
	err = ibv_dereg_mr(mr);
	account(OP_DEREG, err, x, "(handle %u)", h);
	count_busy(err, x);
	if (!err)
		kdel(h);
	if (err != EBUSY)
		mrs[i] = NULL;	/* on failure it was stale: forget it */
}

static void op_dereg_raw(void)
{
	struct ib_uverbs_dereg_mr cmd;
	expect_t x;
	int err;

	cmd.mr_handle = any_handle(T_MR);
	x = dereg_expect(cmd.mr_handle);
	err = raw_cmd(IB_USER_VERBS_CMD_DEREG_MR, &cmd, sizeof(cmd), 0);
	account(OP_DEREG_RAW, err, x, "(handle %u)", cmd.mr_handle);
	count_busy(err, x);
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
		{ IB_USER_VERBS_CMD_CREATE_AH, sizeof(struct ib_uverbs_create_ah),
		  sizeof(struct ib_uverbs_create_ah_resp) },
		{ IB_USER_VERBS_CMD_DESTROY_AH, sizeof(struct ib_uverbs_destroy_ah), 0 },
		{ IB_USER_VERBS_CMD_CREATE_SRQ, sizeof(struct ib_uverbs_create_srq),
		  sizeof(struct ib_uverbs_create_srq_resp) },
		{ IB_USER_VERBS_CMD_MODIFY_SRQ, sizeof(struct ib_uverbs_modify_srq), 0 },
		{ IB_USER_VERBS_CMD_QUERY_SRQ, sizeof(struct ib_uverbs_query_srq),
		  sizeof(struct ib_uverbs_query_srq_resp) },
		{ IB_USER_VERBS_CMD_DESTROY_SRQ, sizeof(struct ib_uverbs_destroy_srq),
		  sizeof(struct ib_uverbs_destroy_srq_resp) },
		{ IB_USER_VERBS_CMD_POST_SRQ_RECV, sizeof(struct ib_uverbs_post_srq_recv),
		  sizeof(struct ib_uverbs_post_srq_recv_resp) },
		{ IB_USER_VERBS_CMD_ALLOC_MW, sizeof(struct ib_uverbs_alloc_mw),
		  sizeof(struct ib_uverbs_alloc_mw_resp) },
		{ IB_USER_VERBS_CMD_DEALLOC_MW, sizeof(struct ib_uverbs_dealloc_mw), 0 },
	};
	unsigned int c = vt_rndn(sizeof(cmds) / sizeof(cmds[0]));
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
		buf.body[i] = vt_rnd();
	buf.body[0] = (uintptr_t)resp;	/* response, where there is one */
	buf.hdr.command = cmds[c].cmd;
	switch (vt_rndn(5)) {
	case 0:		/* in_words does not match the write() size */
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4 + 1 + vt_rndn(8);
		buf.hdr.out_words = cmds[c].resp / 4;
		x = X(EINVAL);
		break;
	case 1:		/* shorter than the command */
		len = sizeof(buf.hdr) + (cmds[c].req / 4 - 1 - vt_rndn(cmds[c].req / 4)) * 4;
		buf.hdr.in_words = len / 4;
		buf.hdr.out_words = cmds[c].resp / 4;
		x = X(ENOSPC);
		break;
	case 2:		/* response space too small */
		if (!cmds[c].resp)
			return;
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4;
		buf.hdr.out_words = vt_rndn(cmds[c].resp / 4);
		x = X(ENOSPC);
		break;
	case 3:		/* a command number that does not exist */
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4;
		buf.hdr.command = 100 + vt_rndn(156);
		x = X(EOPNOTSUPP);
		break;
	default:	/* bits outside the command mask */
		len = sizeof(buf.hdr) + cmds[c].req;
		buf.hdr.in_words = len / 4;
		buf.hdr.command |= 1U << (8 + vt_rndn(23));
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
	switch (vt_rndn(10)) {
	case 0:
		attr.length = 0;
		break;
	case 1:
		/* the whole arena, rarely: it starves the other processes */
		attr.length = DM_SIZE + (vt_rndn(50) != 0);
		break;
	case 2:
		attr.length = vt_rnd();
		break;
	case 3:
		attr.length = SIZE_MAX - vt_rndn(2 * page);
		break;
	default:
		attr.length = 1 + vt_rndn(vt_rndn(2) ? 4 * page : 64 * 1024);
		break;
	}
	attr.log_align_req = vt_rndn(4) ? vt_rndn(16) : vt_rndn(3) ? vt_rndn(40) : (uint32_t)vt_rnd();
	attr.comp_mask = vt_rndn(10) ? 0 : (uint32_t)vt_rnd();
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
	unsigned int i = vt_rndn(MAX_DM);
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
	switch (vt_rndn(8)) {
	case 0:
		return 0;
	case 1:
		return len;
	case 2:
		return len + 1 + vt_rndn(page);
	case 3:
		return vt_rnd();
	case 4:
		return UINT64_MAX - vt_rndn(page);
	default:
		return vt_rndn(len);
	}
}

static uint64_t rnd_dm_len(uint64_t len, uint64_t off)
{
	switch (vt_rndn(8)) {
	case 0:
		return 0;
	case 1:
		return len - off;
	case 2:
		return len - off + 1;
	case 3:
		return vt_rnd();
	case 4:
		return -off;
	default:
		return off < len ? 1 + vt_rndn(len - off) : vt_rndn(page);
	}
}

static void op_dm_copy(void)
{
	unsigned int i = vt_rndn(MAX_DM);
	uint64_t len, off, n;
	int to = vt_rndn(2), err;
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
	unsigned int i = vt_rndn(MAX_DM);
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
	if (vt_rndn(2)) {
		off = vt_rndn(len);
		n = 1 + vt_rndn(len - off);
		access = good_access() | A_ZB;
	} else {
		off = rnd_dm_off(len);
		n = rnd_dm_len(len, off);
		access = rnd_access();
		if (vt_rndn(4))
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
	int shared = vt_rndn(5) != 0, prot, err, n, i, j;
	expect_t x = X(EINVAL);
	unsigned int r;
	void *p;

	/*
	 * A mapping keeps its DM's range out of the arena even after
	 * ibv_free_dm(): drop one now and then.
	 */
	r = vt_rndn(MAX_RAWMAP);
	if (rawmaps[r].addr && !vt_rndn(3)) {
		munmap(rawmaps[r].addr, rawmaps[r].len);
		rawmaps[r].addr = NULL;
		maps_gen++;
	}
	for (r = 0; r < MAX_RAWMAP && rawmaps[r].addr; r++)
		;
	if (r == MAX_RAWMAP) {
		r = vt_rndn(MAX_RAWMAP);
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
	i = live ? (int)vt_rndn(live) : -1;
	pgoff = i >= 0 ? pg[i] : vt_rndn(64);
	len = i >= 0 ? mlen[i] : page;
	/* a ring of a destroyed QP: gone (unless its offset was reused) */
	if (ndead_ring && !vt_rndn(4)) {
		j = vt_rndn(ndead_ring < DEAD_RINGS ? ndead_ring : DEAD_RINGS);
		pgoff = dead_ring[j].pgoff;
		len = dead_ring[j].len;
	}
	switch (vt_rndn(6)) {
	case 0:
		pgoff += 1 + vt_rndn(255);
		break;
	case 1:
		pgoff = vt_rndn(1ULL << 33);
		break;
	default:
		break;
	}
	if (!vt_rndn(3))
		len = page * (1 + vt_rndn(8));
	for (i = 0; i < live; i++)
		if (shared && pg[i] == pgoff && mlen[i] == len)
			x = XOK;
	prot = vt_rndn(4) ? PROT_READ | PROT_WRITE : PROT_READ;
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
	switch (dmabuf_fd >= 0 && vt_rndn(2) ? 12 : vt_rndn(12)) {
	case 0: fd = memfd; break;
	case 1: fd = nullfd; break;
	case 2: fd = cmd_fd; break;
	case 3: fd = -1; break;
	case 4: fd = 1000 + vt_rndn(1000); break;	/* not open */
	case 5: fd = (int)vt_rnd(); break;
	default: fd = dmabuf_fd; break;
	}
	switch (vt_rndn(6)) {
	case 0: off = vt_rnd(); break;
	case 1: off = dlen; break;
	case 2: off = vt_rndn(dlen); break;
	default: off = vt_rndn(dlen / page) * page; break;
	}
	switch (vt_rndn(8)) {
	case 0: len = 0; break;
	case 1: len = vt_rnd(); break;
	case 2: len = -off + vt_rndn(2); break;
	case 3: len = dlen - off + 1; break;
	case 4: len = MAX_MR_SIZE + 1; break;
	default: len = off < dlen ? 1 + vt_rndn(dlen - off) : 1 + vt_rndn(page); break;
	}
	iova = rnd_iova(off);
	access = vt_rndn(3) ? (uint32_t)vt_rndn(16) | (vt_rndn(4) ? 0 : A_RELAXED) : rnd_access();
	if (fd == dmabuf_fd && vt_rndn(2)) {
		off = vt_rndn(dlen / page) * page;
		len = 1 + vt_rndn(dlen - off);
		iova = vt_rndn(2) ? off : rnd_iova(off);
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
	struct vol *v = &vol[vt_rndn(NVOL)];
	size_t len = page * (1 + vt_rndn(VOL_MAX / page));
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
	if (vt_rndn(2)) {
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
	udbuf = rw + RW_LEN - UDBUF_LEN;
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
#define SHCA_MAX_SRQ_WR	16384
#define SHCA_MAX_SRQ_SGE	32
#define MAX_SRQ	4
#define MAX_AH	8
#define UD_QKEY	0x11111111U
#define QP1_QKEY	0x80010000U

static struct ibv_cq *cqs[MAX_CQ];
static struct ibv_qp *qps[MAX_QP];
static int gid_index = -1;	/* a GID of the device, to connect QPs */
static union ibv_gid gid;
/* the GID table at the start: address handles are checked against it */
static union ibv_gid gids[256];

static int gid_v4(const union ibv_gid *g)
{
	static const unsigned char v4[12] = { [10] = 0xff, [11] = 0xff };

	return !memcmp(g->raw, v4, sizeof(v4));
}

/* fe80::/10, not the site-local fec0::/10 */
static int gid_link_local(const union ibv_gid *g)
{
	return g->raw[0] == 0xfe && (g->raw[1] & 0xc0) == 0x80;
}

static unsigned char gid_valid[256];
static int gid_list[256], ngids;
/*
 * The GIDs address handles go to: IPv4-mapped and link-local ones. The
 * site-local one QEMU's router advertises (fec0::/64) at times resolves
 * only when the core retries after its 1 s timeout: too slow here.
 */
static int ah_gid_list[256], nahgids;

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
		gids[i] = e.gid;
		gid_valid[i] = 1;
		gid_list[ngids++] = i;
		if (gid_v4(&e.gid) || gid_link_local(&e.gid))
			ah_gid_list[nahgids++] = i;
		/* link-local preferred for connecting */
		if (gid_index < 0 || !gid_link_local(&gid)) {
			gid_index = i;
			gid = e.gid;
		}
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
	switch (vt_rndn(8)) {
	case 0: cqe = 0; break;
	case 1: cqe = -(int)vt_rndn(3) - 1; break;
	case 2: cqe = SHCA_MAX_CQE + (vt_rndn(8) ? 1 : 0); break;
	case 3: cqe = (int)vt_rnd(); break;
	default: cqe = 1 + vt_rndn(vt_rndn(2) ? 8 : 512); break;
	}
	vec = vt_rndn(6) ? 0 : vt_rndn(2) ? (int)vt_rndn(8) : (int)vt_rnd();
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
	unsigned int i = vt_rndn(MAX_CQ);
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

/*
 * wr_id of the binds and LOCAL_INVs this fuzzer posts: a tag in the upper
 * half (random wr_ids of other requests have it once in 2^32), the
 * request's number (post_seq) in the lower one.
 */
#define WR_TAG_BIND	0xb1d0b1d0U
#define WR_TAG_INV	0x1a7a1a7aU
#define WR_ID(tag, seq)	((uint64_t)(tag) << 32 | (uint32_t)(seq))

/*
 * A completion of a tagged request: a successful one must have its
 * opcode; a bind that succeeded tells the model where its window is.
 * Returns 1 for a wrong opcode.
 */
static int wc_tagged(const struct ibv_wc *wc)
{
	uint32_t tag = wc->wr_id >> 32;
	int kind, s;

	if (tag != WR_TAG_BIND && tag != WR_TAG_INV)
		return 0;
	kind = tag == WR_TAG_BIND ? WC_BIND : WC_INV;
	s = wc->status == IBV_WC_SUCCESS ? WC_OK :
	    wc->status == IBV_WC_WR_FLUSH_ERR ? WC_FLUSH : WC_ERR;
	st->wc[kind][s]++;
	if (s != WC_OK)
		return 0;
	if (wc->opcode != (kind == WC_BIND ? IBV_WC_BIND_MW : IBV_WC_LOCAL_INV))
		return 1;
	if (kind == WC_BIND)
		mw_bind_done((uint32_t)wc->wr_id);
	return 0;
}

static void op_poll(void)
{
	struct ibv_wc wc[32];
	unsigned int i = vt_rndn(MAX_CQ);
	int n, ne = vt_rndn(33), k, bad = 0, badop = 0;

	if (!cqs[i])
		return;
	errno = 0;
	n = ibv_poll_cq(cqs[i], ne, wc);
	for (k = 0; k < n && k < ne; k++) {
		if (wc[k].status > IBV_WC_GENERAL_ERR)
			bad = 1;
		if (wc_tagged(&wc[k]))
			badop = 1;
	}
	account(OP_POLL, n < 0 ? errno : n > ne || bad || badop ? EPROTO : 0, XOK,
		"(cq %u, %d entries: %d%s%s)", cqs[i]->handle, ne, n,
		bad ? ", invalid status" : "",
		badop ? ", a bind or LOCAL_INV completed with another opcode" : "");
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
	cmd.ne = vt_rndn(9);
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
	unsigned int i, start = vt_rndn(MAX_CQ);

	for (i = 0; i < MAX_CQ; i++)
		if (cqs[(start + i) % MAX_CQ])
			return cqs[(start + i) % MAX_CQ];
	return NULL;
}

/* a capability: mostly small (the limit itself rarely: it costs memory) */
static uint32_t rnd_cap(uint32_t small, uint32_t max)
{
	switch (vt_rndn(12)) {
	case 0: return 0;
	case 1: return vt_rndn(8) ? max : max + 1 + vt_rndn(2);
	case 2: return max + 1 + vt_rndn(2);
	case 3: return (uint32_t)vt_rnd();
	default: return 1 + vt_rndn(small);
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
		.qp_state = IBV_QPS_INIT, .port_num = 1,
		.qkey = vt_rndn(4) ? UD_QKEY : (uint32_t)vt_rnd(),
	};
	int err;

	tab[qp->handle].qkey = a.qkey;

	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	err = err ? err : ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = vt_rnd() & 0xffffff;
	err = err ? err : ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	account(OP_QP_MODIFY, err, XOK, "(qp %u, UD to RTS)", qp->handle);
}

static void qp_connect(struct ibv_qp *qp)
{
	struct ibv_qp *peer = qps[vt_rndn(MAX_QP)];
	struct ibv_qp_attr a;
	int err, uc;

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
	uc = qp->qp_type == IBV_QPT_UC;
	err = ibv_modify_qp(qp, &a, qp_mask_for(IBV_QPS_INIT));
	account(OP_QP_MODIFY, err, XOK, "(qp %u, connect: INIT)", qp->handle);
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = peer ? peer->qp_num : qp->qp_num;
	a.max_dest_rd_atomic = 1 + vt_rndn(16);
	a.min_rnr_timer = vt_rndn(32);
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = gid_index;
	a.ah_attr.grh.hop_limit = 1;
	err = err ? err : ibv_modify_qp(qp, &a, qp_mask_for(IBV_QPS_RTR) &
				       ~(uc ? IBV_QP_MAX_DEST_RD_ATOMIC |
					      IBV_QP_MIN_RNR_TIMER : 0));
	account(OP_QP_MODIFY, err, XOK, "(qp %u, connect: RTR)", qp->handle);
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 8 + vt_rndn(4);
	a.retry_cnt = vt_rndn(3);
	a.rnr_retry = vt_rndn(3);
	a.max_rd_atomic = 1 + vt_rndn(16);
	err = err ? err : ibv_modify_qp(qp, &a, qp_mask_for(IBV_QPS_RTS) &
				       ~(uc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					      IBV_QP_RNR_RETRY |
					      IBV_QP_MAX_QP_RD_ATOMIC : 0));
	account(OP_QP_MODIFY, err, XOK, "(qp %u, connect: RTS)", qp->handle);
}

static struct ibv_srq *srqs[MAX_SRQ];
static struct ibv_ah *ahs[MAX_AH];
/*
 * ahs[i] was destroyed behind the provider's back (raw DESTROY_AH): its
 * handle may name a new AH now, but the number the kernel gave it for
 * send-ring slots names nothing, or a newer AH of the process.
 */
static int ah_stale[MAX_AH];

static int ah_is_stale(const struct ibv_ah *ah)
{
	unsigned int i;

	for (i = 0; i < MAX_AH; i++)
		if (ahs[i] == ah)
			return ah_stale[i];
	return 1;
}
static int uc_qps;	/* ibv_create_qp() makes UC QPs (else EOPNOTSUPP) */

/*
 * The mapped work queues of the QPs (softhca-abi.h, struct
 * softhca_wq_ring). The provider maps them in ibv_create_qp() and does not
 * say where: they are the mappings of cmd_fd that appear with the QP,
 * told apart by their sizes (SOFTHCA_WQ_RING_HDR + slots * slot_size,
 * rounded to the page; slots: max_wr rounded up to a power of two). The
 * kernel grants a send ring to RC, UC and UD QPs and a receive ring to QPs
 * without an SRQ, unless the provider asks for none (SOFTHCA_RINGS=0).
 */
struct wq_map {
	uint8_t *addr;		/* NULL: not found */
	size_t len;
	uint64_t pgoff;
	uint32_t slots, slot_size;	/* 0: the geometry is not known */
};

static struct qp_rings {
	struct wq_map sq, rq;
	/*
	 * This process wrote into a ring behind the provider's back (or rang
	 * a doorbell that reposted old slots): the QP may be in the error
	 * state (a corrupt receive ring), its completions are the hostile
	 * requests' (still valid statuses and opcodes), the provider's idea
	 * of its producers is off, and a window may have been invalidated
	 * by a request the model never saw.
	 */
	int poisoned;
	/* two rings of one size: which is which was guessed */
	int guess;
} qpr[MAX_QP];

static int rings_off;	/* SOFTHCA_RINGS=0: the provider asks for none */

static int qp_sq_ring(const struct ibv_qp *qp)
{
	return !rings_off &&
	       (qp->qp_type == IBV_QPT_RC || qp->qp_type == IBV_QPT_UC ||
		qp->qp_type == IBV_QPT_UD);
}

static int qp_rq_ring(const struct ibv_qp *qp)
{
	return !rings_off && !qp->srq;
}

static uint32_t pow2_up(uint32_t v)
{
	uint32_t p = 1;

	while (p < v && p < (1U << 31))
		p <<= 1;
	return p;
}

static size_t ring_bytes(uint32_t slots, uint32_t slot_size)
{
	return (SOFTHCA_WQ_RING_HDR + (size_t)slots * slot_size + page - 1) /
	       page * page;
}

#define MAX_UMAPS 64
static uint64_t umap_addr[MAX_UMAPS], umap_pg[MAX_UMAPS], umap_len[MAX_UMAPS];
static int numaps;

/* a mapping of cmd_fd that was not there at the last uverbs_maps() */
static int umap_new(uint64_t a, uint64_t pg)
{
	int i;

	for (i = 0; i < numaps; i++)
		if (umap_addr[i] == a && umap_pg[i] == pg)
			return 0;
	return 1;
}

/*
 * QP @qp (qps[@slot]) was created with capabilities @cap (as granted):
 * find its rings among the mappings that came with it. A ring of the
 * expected geometry is taken as that ring; if both have the same size,
 * which is which is a guess (harmless: writing into either poisons the
 * QP, and the doorbells' outcomes do not depend on it).
 */
static void qp_rings_find(unsigned int slot, const struct ibv_qp *qp,
			  const struct ibv_qp_cap *cap)
{
	uint64_t a[MAX_UMAPS], pg[MAX_UMAPS], len[MAX_UMAPS];
	struct qp_rings *r = &qpr[slot];
	int n, i, k = 0, want, nw[2];
	uint32_t ss = sizeof(struct softhca_swqe) +
		      cap->max_send_sge * sizeof(struct ib_uverbs_sge);
	uint32_t rs = sizeof(struct softhca_rwqe) +
		      cap->max_recv_sge * sizeof(struct ib_uverbs_sge);
	uint32_t sn = pow2_up(cap->max_send_wr), rn = pow2_up(cap->max_recv_wr);

	memset(r, 0, sizeof(*r));
	n = uverbs_maps(a, pg, len, MAX_UMAPS);
	want = qp_sq_ring(qp) + qp_rq_ring(qp);
	for (i = 0; i < n; i++)
		if (umap_new(a[i], pg[i]) && k < 2)
			nw[k++] = i;
		else if (umap_new(a[i], pg[i]))
			k++;
	if (k != want) {
		account(OP_QP_CREATE, EPROTO, XOK,
			"(qp %u, type %d%s: %d new mappings of cmd_fd, expected %d rings)",
			qp->handle, qp->qp_type, qp->srq ? ", on an SRQ" : "", k,
			want);
		return;
	}
	if (k == 2) {
		int sr = len[nw[0]] == ring_bytes(sn, ss) &&
			 len[nw[1]] == ring_bytes(rn, rs);
		int rs_ = len[nw[0]] == ring_bytes(rn, rs) &&
			  len[nw[1]] == ring_bytes(sn, ss);

		if (rs_ && !sr) {
			i = nw[0];
			nw[0] = nw[1];
			nw[1] = i;
		}
		r->guess = sr == rs_;
	}
	for (i = 0; i < k; i++) {
		int send = qp_sq_ring(qp) && i == 0;
		struct wq_map *m = send ? &r->sq : &r->rq;
		uint32_t slots = send ? sn : rn, size = send ? ss : rs;

		m->addr = (uint8_t *)(uintptr_t)a[nw[i]];
		m->len = len[nw[i]];
		m->pgoff = pg[nw[i]];
		if (m->len == ring_bytes(slots, size)) {
			m->slots = slots;
			m->slot_size = size;
		}
	}
}

/* QP @h's rings were written into behind the provider's back */
static int qp_poisoned(uint32_t h)
{
	unsigned int i;

	for (i = 0; i < MAX_QP; i++)
		if (qps[i] && qps[i]->handle == h)
			return qpr[i].poisoned;
	return 0;
}

/* qps[@slot] is gone: so are its rings (and their offsets) */
static void qp_rings_gone(unsigned int slot)
{
	struct wq_map *m[] = { &qpr[slot].sq, &qpr[slot].rq };
	unsigned int i;

	for (i = 0; i < 2; i++)
		if (m[i]->addr) {
			dead_ring[ndead_ring % DEAD_RINGS].pgoff = m[i]->pgoff;
			dead_ring[ndead_ring++ % DEAD_RINGS].len = m[i]->len;
		}
	memset(&qpr[slot], 0, sizeof(qpr[slot]));
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
	unsigned int i, r;
	expect_t x;
	int e;

	for (i = 0; i < MAX_QP && qps[i]; i++)
		;
	if (i == MAX_QP || !pd || !some_cq())
		return;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = some_cq();
	ia.recv_cq = vt_rndn(2) ? ia.send_cq : some_cq();
	r = vt_rndn(20);
	ia.qp_type = r < 10 ? IBV_QPT_RC : r < 15 ? IBV_QPT_UD :
		     r < 17 ? IBV_QPT_UC : types[vt_rndn(5)];
	/* on an SRQ (maybe one the kernel no longer has) */
	if (vt_rndn(3) == 0)
		ia.srq = srqs[vt_rndn(MAX_SRQ)];
	ia.sq_sig_all = vt_rndn(2);
	ia.cap.max_send_wr = rnd_cap(64, SHCA_MAX_QP_WR);
	ia.cap.max_recv_wr = rnd_cap(64, SHCA_MAX_QP_WR);
	ia.cap.max_send_sge = rnd_cap(4, SHCA_MAX_SGE);
	ia.cap.max_recv_sge = rnd_cap(4, SHCA_MAX_SGE);
	ia.cap.max_inline_data = vt_rndn(3) ? 0 : rnd_cap(256, SHCA_MAX_INLINE);
	if (ia.qp_type != IBV_QPT_RC && ia.qp_type != IBV_QPT_UD &&
	    (ia.qp_type != IBV_QPT_UC || !uc_qps))
		x = X(EOPNOTSUPP);	/* refused by the provider */
	else if (ia.srq && (e = lookup_err(ia.srq->handle, T_SRQ)))
		/* the order of the lookups is the core's business */
		x = X(e) | (lookup_err(pd->handle, T_PD) ?
			    X(lookup_err(pd->handle, T_PD)) : 0);
	else if (lookup_err(pd->handle, T_PD))
		x = X(lookup_err(pd->handle, T_PD));	/* a stale PD */
	else if (ia.cap.max_send_wr > SHCA_MAX_QP_WR ||
		 (!ia.srq && ia.cap.max_recv_wr > SHCA_MAX_QP_WR) ||
		 ia.cap.max_send_sge > SHCA_MAX_SGE ||
		 (!ia.srq && ia.cap.max_recv_sge > SHCA_MAX_SGE) ||
		 ia.cap.max_inline_data > SHCA_MAX_INLINE)
		x = X(EINVAL);
	else
		x = XOK | X(ENOMEM);
	numaps = uverbs_maps(umap_addr, umap_pg, umap_len, MAX_UMAPS);
	errno = 0;
	qp = ibv_create_qp(pd, &ia);
	account(OP_QP_CREATE, qp ? 0 : errno, x,
		"(type %d, srq %d, wr %u/%u, sge %u/%u, inline %u)", ia.qp_type,
		ia.srq ? (int)ia.srq->handle : -1,
		ia.cap.max_send_wr, ia.cap.max_recv_wr, ia.cap.max_send_sge,
		ia.cap.max_recv_sge, ia.cap.max_inline_data);
	if (qp) {
		kset(qp->handle, T_QP);
		tab[qp->handle].pd = pd->handle;
		tab[qp->handle].scq = ia.send_cq->handle;
		tab[qp->handle].rcq = ia.recv_cq->handle;
		tab[qp->handle].max_sge = ia.cap.max_send_sge;
		tab[qp->handle].rsge = ia.srq ? 0 : ia.cap.max_recv_sge;
		tab[qp->handle].max_inline = ia.cap.max_inline_data;
		if (ia.srq) {
			tab[qp->handle].srq = ia.srq->handle;
			tab[ia.srq->handle].exact = 0;	/* it may take WQEs */
		}
		qps[i] = qp;
		qp_rings_find(i, qp, &ia.cap);
		if (vt_rndn(4))
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
	struct ibv_qp *qp = qps[vt_rndn(MAX_QP)], *peer = qps[vt_rndn(MAX_QP)];
	struct ibv_qp_attr a;
	int mask, err;

	if (!qp || gid_index < 0)
		return;
	memset(&a, 0, sizeof(a));
	/* mostly the next state of a connection, with what it needs */
	a.qp_state = vt_rndn(4) ? next[qp->state <= IBV_QPS_ERR ? qp->state : 0] :
		     (enum ibv_qp_state)vt_rndn(8);
	mask = qp_mask_for(a.qp_state);
	if (!vt_rndn(8))
		mask = vt_rnd() & ((IBV_QP_DEST_QPN << 1) - 1);
	a.port_num = vt_rndn(16) ? 1 : vt_rndn(4);
	a.pkey_index = vt_rndn(16) ? 0 : vt_rndn(4);
	a.qp_access_flags = vt_rndn(4) ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
			    IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC : vt_rnd() & 0xff;
	a.path_mtu = vt_rndn(8) ? IBV_MTU_1024 : vt_rndn(8);
	a.dest_qp_num = peer && vt_rndn(8) ? peer->qp_num : (uint32_t)vt_rnd() & 0xffffff;
	a.rq_psn = vt_rnd() & 0xffffff;
	a.sq_psn = vt_rnd() & 0xffffff;
	a.max_dest_rd_atomic = vt_rndn(20);
	a.max_rd_atomic = vt_rndn(20);
	a.min_rnr_timer = vt_rndn(32);
	a.timeout = vt_rndn(4) ? 8 + vt_rndn(4) : vt_rndn(32);	/* ~1 ms .. 8 ms */
	a.retry_cnt = vt_rndn(3);
	a.rnr_retry = vt_rndn(4);
	a.ah_attr.is_global = vt_rndn(16) != 0;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.dgid = gid;
	a.ah_attr.grh.sgid_index = vt_rndn(16) ? (uint8_t)gid_index : vt_rndn(256);
	a.ah_attr.grh.hop_limit = 1;
	/* the result depends on the QP's state: not predicted, only bounded */
	err = ibv_modify_qp(qp, &a, mask);
	account(OP_QP_MODIFY, err, XOK | X(EINVAL) | X(EOPNOTSUPP) | X(ENODATA) |
		X(ENOENT), "(qp %u, to state %d, mask %#x)", qp->handle,
		a.qp_state, mask);
}

static void op_qp_destroy(void)
{
	unsigned int i = vt_rndn(MAX_QP);
	uint32_t h;
	int err;

	if (!qps[i])
		return;
	h = qps[i]->handle;
	err = ibv_destroy_qp(qps[i]);
	account(OP_QP_DESTROY, err, XOK, "(handle %u%s)", h,
		qpr[i].poisoned ? ", rings written into" : "");
	if (!err) {
		kdel(h);
		qps[i] = NULL;
		qp_rings_gone(i);
	}
}

/* an SGE: mostly in rw with a live lkey, else anything */
static struct ibv_sge rnd_sge(void)
{
	struct ibv_mr *mr = mrs[vt_rndn(MAX_MR)];
	struct ibv_sge sg;

	/* the buffer of UD datagrams: the PD of UD QPs created on ud_pd */
	if (ud_mr && !vt_rndn(4)) {
		sg.addr = (uintptr_t)udbuf + vt_rndn(UDBUF_LEN / 2);
		sg.length = vt_rndn(2048);
		sg.lkey = ud_mr->lkey;
		return sg;
	}
	sg.addr = vt_rndn(4) ? (uintptr_t)rw + vt_rndn(RW_LEN) : rnd_addr();
	sg.length = vt_rndn(8) ? vt_rndn(vt_rndn(2) ? 64 : 8192) : (uint32_t)vt_rnd();
	sg.lkey = mr && vt_rndn(4) ? mr->lkey : (uint32_t)vt_rnd();
	return sg;
}

static void op_post_send(void)
{
	static const enum ibv_wr_opcode opcodes[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
	};
	struct ibv_qp *qp = qps[vt_rndn(MAX_QP)];
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3][40];
	unsigned int n = 1 + vt_rndn(3), k, j;
	int64_t mw;
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
		struct ibv_mr *mr = mrs[vt_rndn(MAX_MR)];

		wr[k].wr_id = vt_rnd();
		wr[k].opcode = vt_rndn(16) ? opcodes[vt_rndn(8)] : (enum ibv_wr_opcode)vt_rndn(32);
		wr[k].send_flags = vt_rndn(2) ? IBV_SEND_SIGNALED :
				   vt_rndn(6) ? vt_rnd() & (IBV_SEND_SIGNALED | IBV_SEND_FENCE |
						      IBV_SEND_SOLICITED | IBV_SEND_INLINE) :
					     (unsigned int)vt_rnd();
		wr[k].num_sge = vt_rndn(8) ? vt_rndn(4) : vt_rndn(40);
		for (j = 0; j < (unsigned int)wr[k].num_sge; j++)
			sg[k][j] = rnd_sge();
		wr[k].sg_list = sg[k];
		wr[k].imm_data = vt_rnd();
		if (wr[k].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
		    wr[k].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			/* mostly 8-byte aligned inside a live MR */
			wr[k].wr.atomic.remote_addr = mr && vt_rndn(4) ?
				(uint64_t)(uintptr_t)mr->addr +
				(vt_rndn(4) ? vt_rndn(64) & ~7ULL : vt_rndn(64)) : vt_rnd();
			wr[k].wr.atomic.rkey = mr && vt_rndn(4) ? mr->rkey : (uint32_t)vt_rnd();
			wr[k].wr.atomic.compare_add = vt_rnd();
			wr[k].wr.atomic.swap = vt_rnd();
		} else {
			wr[k].wr.rdma.remote_addr = mr && vt_rndn(4) ?
				(uint64_t)(uintptr_t)mr->addr + vt_rndn(mr->length + 1) : vt_rnd();
			wr[k].wr.rdma.rkey = mr && vt_rndn(4) ? mr->rkey : (uint32_t)vt_rnd();
		}
		/* through a window, inside its last bind's range (mostly) */
		if (!vt_rndn(6) && (mw = live_of(T_MW)) >= 0) {
			const struct kobj *w = &tab[mw];
			uint64_t ra = (w->access & A_ZB ? 0 : w->start) +
				      vt_rndn(w->len + 1);

			if (wr[k].opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
			    wr[k].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
				wr[k].wr.atomic.remote_addr = ra & ~7ULL;
				wr[k].wr.atomic.rkey = w->key;
			} else {
				wr[k].wr.rdma.remote_addr = ra;
				wr[k].wr.rdma.rkey = w->key;
			}
		}
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	err = ibv_post_send(qp, wr, &bad);
	/* accepted, or refused at post time: bounded, not predicted */
	account(OP_POST_SEND, err, XOK | X(EINVAL) | X(ENOMEM) | X(EFAULT) |
		X(EOPNOTSUPP), "(qp %u, %u WRs, first opcode %d flags %#x sges %d)",
		qp->handle, n, wr[0].opcode, wr[0].send_flags, wr[0].num_sge);
	/* invalidations, posted or not, of a key a window may have */
	for (k = 0; k < n; k++)
		if (wr[k].opcode == IBV_WR_LOCAL_INV ||
		    wr[k].opcode == IBV_WR_SEND_WITH_INV)
			mw_key_posted(wr[k].opcode == IBV_WR_LOCAL_INV ?
				      (int64_t)qp->handle : -1,
				      wr[k].invalidate_rkey, ++post_seq);
}

/*
 * ibv_post_recv(): refused for a QP in RESET or on an SRQ and for more
 * SGEs than the QP takes; a full receive queue is ENOMEM. The SGEs
 * themselves are checked only when a message arrives.
 */
static void op_post_recv(void)
{
	struct ibv_qp *qp = qps[vt_rndn(MAX_QP)];
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3][40];
	unsigned int n = 1 + vt_rndn(3), k, j;
	struct kobj *o;
	expect_t x = 0;
	int err;

	if (!qp)
		return;
	o = &tab[qp->handle];
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		wr[k].wr_id = vt_rnd();
		wr[k].num_sge = vt_rndn(8) ? vt_rndn(o->rsge + 2) : vt_rndn(40);
		for (j = 0; j < (unsigned int)wr[k].num_sge; j++)
			sg[k][j] = rnd_sge();
		wr[k].sg_list = sg[k];
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	for (k = 0; k < n; k++) {
		if (qp->state == IBV_QPS_RESET || o->srq >= 0 ||
		    (uint32_t)wr[k].num_sge > o->rsge) {
			x |= X(EINVAL);
			break;
		}
		x |= X(ENOMEM);
	}
	if (k == n)
		x |= XOK;
	err = ibv_post_recv(qp, wr, &bad);
	account(OP_POST_RECV, err, x, "(qp %u%s, state %d, %u WRs, sges %d/%d/%d of %u)",
		qp->handle, o->srq >= 0 ? " on an SRQ" : "", qp->state, n,
		wr[0].num_sge, n > 1 ? wr[1].num_sge : -1,
		n > 2 ? wr[2].num_sge : -1, o->rsge);
}

/* ---- shared receive queues ------------------------------------------------ */

static uint32_t rnd_srq_wr(void)
{
	switch (vt_rndn(12)) {
	case 0: return 0;
	/* the limit itself rarely: 16384 WQEs of 32 SGEs are ~10 MB */
	case 1: return vt_rndn(8) ? SHCA_MAX_SRQ_WR + 1 + vt_rndn(2) : SHCA_MAX_SRQ_WR;
	case 2: return (uint32_t)vt_rnd();
	case 3: case 4: return 1 + vt_rndn(3);
	default: return 1 + vt_rndn(vt_rndn(2) ? 16 : 256);
	}
}

static uint32_t rnd_srq_sge(void)
{
	switch (vt_rndn(10)) {
	case 0: return 0;
	case 1: return SHCA_MAX_SRQ_SGE + vt_rndn(2);
	case 2: return (uint32_t)vt_rnd();
	default: return 1 + vt_rndn(4);
	}
}

static uint32_t rnd_srq_limit(uint32_t max_wr)
{
	switch (vt_rndn(8)) {
	case 0: case 1: case 2: return 0;
	case 3: return max_wr;
	case 4: return max_wr + 1;
	case 5: return (uint32_t)vt_rnd();
	default: return vt_rndn((uint64_t)max_wr + 1);
	}
}

static uint32_t rnd_srq_mask(void)
{
	switch (vt_rndn(8)) {
	case 0: return 0;
	case 1: return IBV_SRQ_MAX_WR;
	case 2: return IBV_SRQ_MAX_WR | IBV_SRQ_LIMIT;
	case 3: return (uint32_t)vt_rnd();
	case 4: return IBV_SRQ_LIMIT | 1U << vt_rndn(32);
	default: return IBV_SRQ_LIMIT;
	}
}

/* create_srq: the core looks the PD up, softhca checks the rest */
static expect_t srq_create_expect(uint32_t pd, uint32_t wr, uint32_t sge,
				  uint32_t limit, int udata)
{
	int e = lookup_err(pd, T_PD);

	if (e)
		return X(e);
	if (udata)
		return X(EINVAL);	/* softhca takes no driver data */
	if (!wr || wr > SHCA_MAX_SRQ_WR || !sge || sge > SHCA_MAX_SRQ_SGE ||
	    limit > wr)
		return X(EINVAL);
	return XOK | X(ENOMEM);
}

static void srq_created(uint32_t h, uint32_t pd, uint32_t wr, uint32_t sge,
			uint32_t limit)
{
	kset(h, T_SRQ);
	tab[h].pd = pd;
	tab[h].max_wr = wr;
	tab[h].max_sge = sge;
	tab[h].limit = limit;
	tab[h].exact = 1;
}

/* modify_srq: only arming the limit (IB_SRQ_LIMIT) is offered */
static expect_t srq_modify_expect(uint32_t h, uint32_t mask, uint32_t limit,
				  int udata)
{
	int e = lookup_err(h, T_SRQ);

	if (e)
		return X(e);
	if (udata || (mask & ~(uint32_t)IBV_SRQ_LIMIT))
		return X(EOPNOTSUPP);
	if ((mask & IBV_SRQ_LIMIT) && limit > tab[h].max_wr)
		return X(EINVAL);
	return XOK;
}

/*
 * Posting receive WRs with @nsge SGEs each to live SRQ @h: EINVAL at the
 * first with too many SGEs, ENOMEM once the SRQ may be full - certainly
 * full if no QP ever took a WQE from it.
 */
static expect_t srq_post_expect(uint32_t h, const uint32_t *nsge,
				unsigned int n)
{
	const struct kobj *o = &tab[h];
	expect_t x = 0;
	unsigned int k;

	for (k = 0; k < n; k++) {
		if (nsge[k] > o->max_sge)
			return x | X(EINVAL);
		if (o->posted + k >= o->max_wr) {
			if (o->exact)
				return x | X(ENOMEM);
			x |= X(ENOMEM);
		}
	}
	return x | XOK;
}

/* a query's answer: the limit reads 0 once it fired */
static int srq_attr_ok(uint32_t h, uint32_t max_wr, uint32_t max_sge,
		       uint32_t limit)
{
	return max_wr == tab[h].max_wr && max_sge == tab[h].max_sge &&
	       (limit == tab[h].limit || limit == 0);
}

static void op_srq_create(void)
{
	struct ibv_srq_init_attr ia;
	struct ibv_pd *pd = some_pd();
	uint32_t wr, sge, limit;
	struct ibv_srq *srq;
	unsigned int i;
	expect_t x;
	int err;

	for (i = 0; i < MAX_SRQ && srqs[i]; i++)
		;
	if (i == MAX_SRQ || !pd)
		return;
	memset(&ia, 0, sizeof(ia));
	wr = ia.attr.max_wr = rnd_srq_wr();
	sge = ia.attr.max_sge = rnd_srq_sge();
	limit = ia.attr.srq_limit = rnd_srq_limit(wr);
	x = srq_create_expect(pd->handle, wr, sge, limit, 0);
	errno = 0;
	srq = ibv_create_srq(pd, &ia);
	err = !srq ? errno : ia.attr.max_wr != wr || ia.attr.max_sge != sge ?
	      EPROTO : 0;
	account(OP_SRQ_CREATE, err, x,
		"(pd %u, max_wr %u, max_sge %u, limit %u; granted %u, %u)",
		pd->handle, wr, sge, limit, ia.attr.max_wr, ia.attr.max_sge);
	if (srq) {
		srq_created(srq->handle, pd->handle, wr, sge, limit);
		srqs[i] = srq;
	}
}

static void op_srq_destroy(void)
{
	unsigned int i = vt_rndn(MAX_SRQ);
	uint32_t h;
	int e, err;

	if (!srqs[i])
		return;
	h = srqs[i]->handle;
	e = lookup_err(h, T_SRQ);
	if (!e && srq_users(h))
		e = EBUSY;
	err = ibv_destroy_srq(srqs[i]);
	account(OP_SRQ_DESTROY, err, X(e), "(handle %u, %u QPs on it)", h,
		ktype(h) == T_SRQ ? srq_users(h) : 0);
	if (!err) {
		kdel(h);
		srqs[i] = NULL;
	} else if (e != EBUSY) {
		srqs[i] = NULL;	/* stale: forget it (the struct leaks) */
	}
}

static void op_srq_modify(void)
{
	unsigned int i = vt_rndn(MAX_SRQ);
	struct ibv_srq_attr a;
	uint32_t h, mask;
	int err;

	if (!srqs[i])
		return;
	h = srqs[i]->handle;
	mask = rnd_srq_mask();
	a.max_wr = vt_rndn(2) ? rnd_srq_wr() : 0;
	a.max_sge = vt_rnd();
	a.srq_limit = rnd_srq_limit(ktype(h) == T_SRQ ? tab[h].max_wr :
				    rnd_srq_wr());
	err = ibv_modify_srq(srqs[i], &a, (int)mask);
	account(OP_SRQ_MODIFY, err, srq_modify_expect(h, mask, a.srq_limit, 0),
		"(handle %u, mask %#x, max_wr %u, limit %u)", h, mask,
		a.max_wr, a.srq_limit);
	if (!err && (mask & IBV_SRQ_LIMIT))
		tab[h].limit = a.srq_limit;
}

static void op_srq_query(void)
{
	unsigned int i = vt_rndn(MAX_SRQ);
	struct ibv_srq_attr a;
	uint32_t h;
	int e, err;

	if (!srqs[i])
		return;
	h = srqs[i]->handle;
	e = lookup_err(h, T_SRQ);
	memset(&a, 0xa5, sizeof(a));
	err = ibv_query_srq(srqs[i], &a);
	if (!err && !e && !srq_attr_ok(h, a.max_wr, a.max_sge, a.srq_limit))
		err = EPROTO;
	account(OP_SRQ_QUERY, err, X(e),
		"(handle %u: max_wr %u, max_sge %u, limit %u; model %u, %u, %u)",
		h, a.max_wr, a.max_sge, a.srq_limit, tab[h].max_wr,
		tab[h].max_sge, tab[h].limit);
}

static void op_srq_post(void)
{
	unsigned int i = vt_rndn(MAX_SRQ), n = 1 + vt_rndn(3), k, j, posted;
	struct ibv_recv_wr wr[3], *bad = NULL;
	struct ibv_sge sg[3][40];
	uint32_t h, nsge[3], maxs;
	expect_t x;
	int e, err;

	if (!srqs[i])
		return;
	h = srqs[i]->handle;
	e = lookup_err(h, T_SRQ);
	maxs = e ? 4 : tab[h].max_sge;
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		wr[k].wr_id = vt_rnd();
		wr[k].num_sge = vt_rndn(8) ? vt_rndn(maxs + 2) : vt_rndn(40);
		nsge[k] = wr[k].num_sge;
		for (j = 0; j < nsge[k]; j++)
			sg[k][j] = rnd_sge();
		wr[k].sg_list = sg[k];
		wr[k].next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	x = e ? X(e) : srq_post_expect(h, nsge, n);
	err = ibv_post_srq_recv(srqs[i], wr, &bad);
	account(OP_SRQ_POST, err, x,
		"(handle %u, %u WRs, sges %u/%d/%d, max_wr %u, max_sge %u, %llu posted%s)",
		h, n, nsge[0], n > 1 ? (int)nsge[1] : -1,
		n > 2 ? (int)nsge[2] : -1, tab[h].max_wr, tab[h].max_sge,
		(unsigned long long)tab[h].posted,
		tab[h].exact ? "" : " at most");
	if (e)
		return;
	posted = !err ? n : bad >= wr && bad < wr + n ? (unsigned int)(bad - wr) : 0;
	tab[h].posted += posted;
}

/* a raw command with @extra more words after @req: zeroes or @junk */
static int raw_cmd_x(uint32_t command, const void *req, size_t req_len,
		     unsigned int extra, int junk, unsigned int out_words)
{
	unsigned char buf[256];
	unsigned int i;

	memcpy(buf, req, req_len);
	for (i = 0; i < extra * 4; i++)
		buf[req_len + i] = junk ? (unsigned char)(vt_rnd() | 1) : 0;
	return raw_cmd(command, buf, req_len + extra * 4, out_words);
}

static void op_srq_create_raw(void)
{
	struct ib_uverbs_create_srq cmd;
	struct {
		struct ib_uverbs_create_srq_resp resp;
		uint32_t more[4];
	} out;
	unsigned int in_x = 0, out_x = 0;
	int bad, err, junk = 0;
	expect_t x;

	if (count_type(T_SRQ) >= 2 * MAX_SRQ)
		return;
	memset(&cmd, 0, sizeof(cmd));
	memset(&out, 0, sizeof(out));
	cmd.response = rnd_resp(&out, &bad);
	cmd.user_handle = vt_rnd();
	cmd.pd_handle = any_handle(T_PD);
	cmd.max_wr = rnd_srq_wr();
	cmd.max_sge = rnd_srq_sge();
	cmd.srq_limit = rnd_srq_limit(cmd.max_wr);
	if (!vt_rndn(6)) {		/* driver data in or out */
		in_x = vt_rndn(3);
		out_x = in_x ? vt_rndn(2) : 1 + vt_rndn(3);
		junk = vt_rndn(2);
	}
	x = srq_create_expect(cmd.pd_handle, cmd.max_wr, cmd.max_sge,
			      cmd.srq_limit, in_x || out_x);
	/* created, then the response fails: it is destroyed again */
	if (bad && (x & XOK))
		x = (x & ~XOK) | X(EFAULT);
	err = raw_cmd_x(IB_USER_VERBS_CMD_CREATE_SRQ, &cmd, sizeof(cmd), in_x,
			junk, sizeof(out.resp) / 4 + out_x);
	account(OP_SRQ_CREATE_RAW, err, x,
		"(pd %u, max_wr %u, max_sge %u, limit %u, +%u/+%u words, response %#llx)",
		cmd.pd_handle, cmd.max_wr, cmd.max_sge, cmd.srq_limit, in_x,
		out_x, (unsigned long long)cmd.response);
	if (!err)
		srq_created(out.resp.srq_handle, cmd.pd_handle, cmd.max_wr,
			    cmd.max_sge, cmd.srq_limit);
}

static void op_srq_modify_raw(void)
{
	struct ib_uverbs_modify_srq cmd;
	unsigned int in_x = vt_rndn(8) ? 0 : 1 + vt_rndn(3);
	expect_t x;
	int err;

	memset(&cmd, 0, sizeof(cmd));
	cmd.srq_handle = any_handle(T_SRQ);
	cmd.attr_mask = rnd_srq_mask();
	cmd.max_wr = vt_rnd();
	cmd.srq_limit = rnd_srq_limit(ktype(cmd.srq_handle) == T_SRQ ?
				      tab[cmd.srq_handle].max_wr :
				      rnd_srq_wr());
	x = srq_modify_expect(cmd.srq_handle, cmd.attr_mask, cmd.srq_limit,
			      in_x);
	err = raw_cmd_x(IB_USER_VERBS_CMD_MODIFY_SRQ, &cmd, sizeof(cmd), in_x,
			vt_rndn(2), 0);
	account(OP_SRQ_MODIFY_RAW, err, x,
		"(handle %u, mask %#x, max_wr %u, limit %u, +%u words)",
		cmd.srq_handle, cmd.attr_mask, cmd.max_wr, cmd.srq_limit, in_x);
	if (!err && (cmd.attr_mask & IBV_SRQ_LIMIT))
		tab[cmd.srq_handle].limit = cmd.srq_limit;
}

static void op_srq_query_raw(void)
{
	struct ib_uverbs_query_srq_resp resp;
	struct ib_uverbs_query_srq cmd;
	unsigned int in_x = vt_rndn(8) ? 0 : 1 + vt_rndn(3);
	int bad, e, err, junk = vt_rndn(2);
	expect_t x;

	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0xa5, sizeof(resp));
	cmd.response = rnd_resp(&resp, &bad);
	cmd.srq_handle = any_handle(T_SRQ);
	cmd.reserved = vt_rndn(4) ? 0 : vt_rnd();
	if (in_x && junk)
		x = X(EOPNOTSUPP);	/* bytes the core does not know */
	else if ((e = lookup_err(cmd.srq_handle, T_SRQ)))
		x = X(e);
	else
		x = bad ? X(EFAULT) : XOK;
	err = raw_cmd_x(IB_USER_VERBS_CMD_QUERY_SRQ, &cmd, sizeof(cmd), in_x,
			junk, sizeof(resp) / 4);
	if (!err && !srq_attr_ok(cmd.srq_handle, resp.max_wr, resp.max_sge,
				 resp.srq_limit))
		err = EPROTO;
	account(OP_SRQ_QUERY_RAW, err, x,
		"(handle %u, +%u words%s, response %#llx: max_wr %u, max_sge %u, limit %u)",
		cmd.srq_handle, in_x, junk ? " of junk" : "",
		(unsigned long long)cmd.response, resp.max_wr, resp.max_sge,
		resp.srq_limit);
}

static void op_srq_destroy_raw(void)
{
	struct ib_uverbs_destroy_srq_resp resp;
	struct ib_uverbs_destroy_srq cmd;
	int bad, e, err;
	expect_t x;

	memset(&cmd, 0, sizeof(cmd));
	cmd.response = rnd_resp(&resp, &bad);
	cmd.srq_handle = any_handle(T_SRQ);
	cmd.reserved = vt_rndn(4) ? 0 : vt_rnd();
	e = lookup_err(cmd.srq_handle, T_SRQ);
	if (!e && srq_users(cmd.srq_handle))
		e = EBUSY;
	/* destroyed, then the response fails */
	x = e ? X(e) : bad ? X(EFAULT) : XOK;
	err = raw_cmd(IB_USER_VERBS_CMD_DESTROY_SRQ, &cmd, sizeof(cmd),
		      sizeof(resp) / 4);
	account(OP_SRQ_DESTROY_RAW, err, x, "(handle %u, response %#llx)",
		cmd.srq_handle, (unsigned long long)cmd.response);
	if (!err || (!e && bad && err == EFAULT))
		kdel(cmd.srq_handle);
}

/*
 * POST_SRQ_RECV with its variable part garbled: WQE size, WR and SGE
 * counts that do not match what follows, trailing bytes, WRs claiming
 * more SGEs than there are.
 */
static void op_srq_post_raw(void)
{
	struct {
		struct ib_uverbs_post_srq_recv cmd;
		unsigned char data[224];
	} req;
	struct ib_uverbs_post_srq_recv_resp resp;
	uint32_t h = any_handle(T_SRQ), nsge[8], wr_count, sge_count, wqe_size;
	uint64_t need;
	size_t plen;
	unsigned int k, sg_left, posted = 0;
	int bad, e, err, junk = 0;
	expect_t x;

	memset(&req, 0, sizeof(req));
	req.cmd.response = rnd_resp(&resp, &bad);
	req.cmd.srq_handle = h;
	wr_count = vt_rndn(16) ? vt_rndn(4) : vt_rndn(2) ? 4 + vt_rndn(5) : (uint32_t)vt_rnd();
	sge_count = vt_rndn(16) ? vt_rndn(6) : (uint32_t)vt_rnd();
	switch (vt_rndn(12)) {
	case 0: wqe_size = vt_rndn(16); break;			/* too small */
	case 1: wqe_size = 16 + 8 * (1 + vt_rndn(3)); break;	/* larger */
	case 2: wqe_size = 0x80000000U >> vt_rndn(2); break;	/* huge */
	default: wqe_size = sizeof(struct ib_uverbs_recv_wr); break;
	}
	req.cmd.wr_count = wr_count;
	req.cmd.sge_count = sge_count;
	req.cmd.wqe_size = wqe_size;
	need = (uint64_t)wqe_size * wr_count + (uint64_t)sge_count * 16;
	/* what follows: mostly exactly that, else shorter or longer */
	if (need <= sizeof(req.data) && vt_rndn(5))
		plen = need;
	else
		plen = 4 * vt_rndn(sizeof(req.data) / 4 + 1);
	/* the WRs: their SGE counts mostly within sge_count */
	sg_left = sge_count;
	for (k = 0; k < wr_count && k < 8 && (uint64_t)wqe_size * (k + 1) <= plen; k++) {
		struct ib_uverbs_recv_wr *w =
			(void *)(req.data + (size_t)wqe_size * k);

		w->wr_id = vt_rnd();
		w->num_sge = vt_rndn(8) ? vt_rndn(sg_left + 1) : vt_rndn(4) ? sg_left + 1 : (uint32_t)vt_rnd();
		w->reserved = vt_rndn(4) ? 0 : vt_rnd();
		nsge[k] = w->num_sge;
		sg_left -= nsge[k] <= sg_left ? nsge[k] : sg_left;
	}
	if (wqe_size <= sizeof(req.data) && wr_count <= 8 &&
	    need <= plen) {
		struct ib_uverbs_sge *s = (void *)(req.data + (size_t)wqe_size * wr_count);

		for (k = 0; k < sge_count; k++) {
			struct ibv_sge g = rnd_sge();

			s[k].addr = g.addr;
			s[k].length = g.length;
			s[k].lkey = g.lkey;
		}
		if (plen > need && vt_rndn(2)) {
			junk = 1;
			req.data[need + vt_rndn(plen - need)] = 1 | vt_rnd();
		}
	}

	/* ib_uverbs_unmarshall_recv(), then the SRQ, then softhca */
	if (wqe_size < sizeof(struct ib_uverbs_recv_wr)) {
		x = X(EINVAL);
	} else if ((uint64_t)wqe_size * wr_count > plen ||
		   need > plen) {
		x = X(ENOSPC);
	} else if (junk) {
		x = X(EOPNOTSUPP);
	} else if (!wr_count && wqe_size >= 0x40000000U) {
		x = X(ENOMEM);		/* kmalloc(wqe_size) */
	} else {
		uint32_t used = 0;

		x = 0;
		for (k = 0; k < wr_count; k++) {
			if (nsge[k] > sge_count - used) {
				x = X(EINVAL);
				break;
			}
			used += nsge[k];
		}
		if (!x) {
			e = lookup_err(h, T_SRQ);
			if (e)
				x = X(e);
			else if (bad)
				x = X(EFAULT);	/* whatever was posted */
			else
				x = srq_post_expect(h, nsge, wr_count);
		}
	}
	memset(&resp, 0, sizeof(resp));
	err = raw_cmd(IB_USER_VERBS_CMD_POST_SRQ_RECV, &req,
		      sizeof(req.cmd) + plen, sizeof(resp) / 4);
	account(OP_SRQ_POST_RAW, err, x,
		"(handle %u, %u WRs of %u bytes, %u SGEs, %zu bytes follow%s, response %#llx)",
		h, wr_count, wqe_size, sge_count, plen, junk ? " with junk" : "",
		(unsigned long long)req.cmd.response);
	if (ktype(h) != T_SRQ || !(x & (XOK | X(ENOMEM) | X(EINVAL) | X(EFAULT))))
		return;
	if (bad) {
		if (err == EFAULT) {	/* some may have been posted */
			tab[h].posted += wr_count;
			tab[h].exact = 0;
		}
		return;
	}
	if (!err)
		posted = wr_count;
	else if ((err == EINVAL || err == ENOMEM) && resp.bad_wr)
		posted = resp.bad_wr - 1;
	tab[h].posted += posted;
}

/* ---- address handles -------------------------------------------------------- */

static const char *gid_str(const void *g, char *buf)
{
	const unsigned char *r = g;
	unsigned int i;

	for (i = 0; i < 16; i++)
		sprintf(buf + 2 * i + i / 2, "%02x%s", r[i],
			i % 2 && i < 15 ? ":" : "");
	return buf;
}

enum { G_OWN, G_MCAST, G_OTHER };

/*
 * A destination GID: one of the device's, a multicast one, or one no
 * device owns: QEMU's gateway, global IPv6 addresses (routed through
 * QEMU's router), ::1 and ::. Not addresses whose resolution times out
 * after a second (127.0.0.1, an unrouted IPv4 address, an on-link address
 * nobody answers): that is the core's timeout, and it costs time.
 */
static int rnd_dgid(union ibv_gid *g)
{
	static const unsigned char mcast[][16] = {
		{ 0xff, 0x02, [15] = 1 },
		{ 0xff, 0x0e, [14] = 0x12, [15] = 0x34 },
		{ [10] = 0xff, [11] = 0xff, 224, 0, 0, 251 },
		{ [10] = 0xff, [11] = 0xff, 239, 1, 2, 3 },
	};
	static const unsigned char other[][16] = {
		{ [10] = 0xff, [11] = 0xff, 10, 0, 2, 2 },	/* QEMU's gateway */
		{ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },		/* documentation */
		{ [15] = 1 },					/* ::1 */
		{ 0 },						/* :: */
	};
	unsigned int i;

	switch (vt_rndn(10)) {
	case 0: case 1: case 2: case 3: case 4: case 5:
		if (nahgids) {
			*g = gids[ah_gid_list[vt_rndn(nahgids)]];
			return G_OWN;
		}
		/* fall through */
	case 6:
		memcpy(g->raw, mcast[vt_rndn(4)], 16);
		return G_MCAST;
	case 7: case 8:
		memcpy(g->raw, other[vt_rndn(4)], 16);
		return G_OTHER;
	default:		/* global unicast, 2000::/3 */
		for (i = 0; i < 16; i++)
			g->raw[i] = vt_rnd();
		g->raw[0] = 0x20 | (g->raw[0] & 0x1f);
		return G_OTHER;
	}
}

/* what resolving a route to a GID nobody owns may give */
#define AH_ROUTE	(XOK | X(ENETUNREACH) | X(EHOSTUNREACH) | X(ETIMEDOUT) | \
			 X(EADDRNOTAVAIL) | X(ENODEV))

/*
 * create_ah: the core checks the port, the PD, the GRH and the source GID
 * (an empty entry: ENODATA), then resolves the destination MAC: a
 * multicast GID maps to one directly; a unicast one is resolved by route
 * from the source GID's address, which must be of the same family
 * (EINVAL otherwise); softhca's own GIDs always resolve.
 */
static expect_t ah_expect(uint32_t pd, unsigned int port, int global,
			  unsigned int sgid, const union ibv_gid *dgid,
			  int kind)
{
	expect_t x;
	int e;

	if (port != 1)
		return X(EINVAL);
	if ((e = lookup_err(pd, T_PD)))
		return X(e);
	if (!global)
		return X(EINVAL);	/* RoCE needs a GRH */
	/* an empty entry; the table may have grown since the start */
	if (!gid_valid[sgid])
		return X(ENODATA) | X(EINVAL) | AH_ROUTE;
	if (kind == G_MCAST)
		x = XOK;
	else if (gid_v4(&gids[sgid]) != gid_v4(dgid))
		x = X(EINVAL);
	else if (kind == G_OWN)
		x = XOK;
	else
		x = AH_ROUTE;
	return x;
}

static void rnd_ah_attr(struct ibv_ah_attr *a, int *kind)
{
	memset(a, 0, sizeof(*a));
	*kind = rnd_dgid(&a->grh.dgid);
	a->grh.sgid_index = vt_rndn(4) && nahgids ? (unsigned int)ah_gid_list[vt_rndn(nahgids)] :
			  (unsigned int)vt_rndn(256);
	a->grh.hop_limit = vt_rndn(3) ? 64 : vt_rnd();
	a->grh.traffic_class = vt_rnd();
	a->grh.flow_label = vt_rndn(2) ? 0 : vt_rnd();
	a->is_global = vt_rndn(12) != 0;
	a->port_num = vt_rndn(10) ? 1 : vt_rndn(3);
	a->sl = vt_rnd();
	a->dlid = vt_rnd();
	a->src_path_bits = vt_rnd();
	a->static_rate = vt_rnd();
}

static void op_ah_create(void)
{
	struct ibv_pd *pd = some_pd();
	struct ibv_ah_attr a;
	struct ibv_ah *ah;
	unsigned int i;
	char gs[48];
	expect_t x;
	int kind;

	for (i = 0; i < MAX_AH && ahs[i]; i++)
		;
	/* half as often as the weight says: a unicast AH resolves a route */
	if (i == MAX_AH || !pd || vt_rndn(2))
		return;
	rnd_ah_attr(&a, &kind);
	x = ah_expect(pd->handle, a.port_num, a.is_global, a.grh.sgid_index,
		      &a.grh.dgid, kind);
	errno = 0;
	ah = ibv_create_ah(pd, &a);
	account(OP_AH_CREATE, ah ? 0 : errno, x,
		"(pd %u, port %u, global %u, sgid %u, dgid %s)", pd->handle,
		a.port_num, a.is_global, a.grh.sgid_index,
		gid_str(a.grh.dgid.raw, gs));
	if (ah) {
		kset(ah->handle, T_AH);
		tab[ah->handle].pd = pd->handle;
		ahs[i] = ah;
		ah_stale[i] = 0;
	}
}

static void op_ah_destroy(void)
{
	unsigned int i = vt_rndn(MAX_AH);
	uint32_t h;
	int e, err;

	if (!ahs[i])
		return;
	h = ahs[i]->handle;
	e = lookup_err(h, T_AH);
	err = ibv_destroy_ah(ahs[i]);
	account(OP_AH_DESTROY, err, X(e), "(handle %u)", h);
	if (!err) {
		unsigned int j;

		kdel(h);
		ahs[i] = NULL;
		/* a stale struct's handle named another AH: that one went */
		for (j = 0; j < MAX_AH; j++)
			if (ahs[j] && ahs[j]->handle == h)
				ah_stale[j] = 1;
	} else if (vt_rndn(2)) {
		ahs[i] = NULL;	/* stale: forget it (the struct leaks) */
	}
}

static void op_ah_create_raw(void)
{
	struct ib_uverbs_create_ah cmd;
	struct {
		struct ib_uverbs_create_ah_resp resp;
		uint32_t more[4];
	} out;
	unsigned int in_x = 0, out_x = 0;
	struct ibv_ah_attr a;
	int bad, err, kind;
	char gs[48];
	expect_t x;

	if (count_type(T_AH) >= 2 * MAX_AH || vt_rndn(2))
		return;
	memset(&cmd, 0, sizeof(cmd));
	memset(&out, 0, sizeof(out));
	rnd_ah_attr(&a, &kind);
	cmd.response = rnd_resp(&out, &bad);
	cmd.user_handle = vt_rnd();
	cmd.pd_handle = any_handle(T_PD);
	cmd.reserved = vt_rndn(4) ? 0 : vt_rnd();
	memcpy(cmd.attr.grh.dgid, a.grh.dgid.raw, 16);
	cmd.attr.grh.flow_label = a.grh.flow_label;
	cmd.attr.grh.sgid_index = a.grh.sgid_index;
	cmd.attr.grh.hop_limit = a.grh.hop_limit;
	cmd.attr.grh.traffic_class = a.grh.traffic_class;
	cmd.attr.grh.reserved = vt_rndn(4) ? 0 : vt_rnd();
	cmd.attr.dlid = a.dlid;
	cmd.attr.sl = a.sl;
	cmd.attr.src_path_bits = a.src_path_bits;
	cmd.attr.static_rate = a.static_rate;
	cmd.attr.is_global = vt_rndn(8) ? a.is_global : vt_rnd();
	cmd.attr.port_num = vt_rndn(8) ? a.port_num : vt_rnd();
	cmd.attr.reserved = vt_rndn(4) ? 0 : vt_rnd();
	if (!vt_rndn(6)) {		/* driver data: softhca takes none, ignores it */
		in_x = vt_rndn(4);
		out_x = vt_rndn(3);
	}
	x = ah_expect(cmd.pd_handle, cmd.attr.port_num, cmd.attr.is_global,
		      cmd.attr.grh.sgid_index, &a.grh.dgid, kind);
	if (bad && (x & XOK))
		x = (x & ~XOK) | X(EFAULT);
	err = raw_cmd_x(IB_USER_VERBS_CMD_CREATE_AH, &cmd, sizeof(cmd), in_x,
			vt_rndn(2), sizeof(out.resp) / 4 + out_x);
	account(OP_AH_CREATE_RAW, err, x,
		"(pd %u, port %u, global %u, sgid %u, dgid %s, +%u/+%u words, response %#llx)",
		cmd.pd_handle, cmd.attr.port_num, cmd.attr.is_global,
		cmd.attr.grh.sgid_index, gid_str(cmd.attr.grh.dgid, gs), in_x,
		out_x, (unsigned long long)cmd.response);
	if (!err) {
		kset(out.resp.ah_handle, T_AH);
		tab[out.resp.ah_handle].pd = cmd.pd_handle;
	}
}

static void op_ah_destroy_raw(void)
{
	struct ib_uverbs_destroy_ah cmd;
	int e, err;

	cmd.ah_handle = any_handle(T_AH);
	e = lookup_err(cmd.ah_handle, T_AH);
	err = raw_cmd(IB_USER_VERBS_CMD_DESTROY_AH, &cmd, sizeof(cmd), 0);
	account(OP_AH_DESTROY_RAW, err, X(e), "(handle %u)", cmd.ah_handle);
	if (!err) {
		unsigned int i;

		kdel(cmd.ah_handle);
		for (i = 0; i < MAX_AH; i++)
			if (ahs[i] && ahs[i]->handle == cmd.ah_handle)
				ah_stale[i] = 1;
	}
}

/* ---- UD sends ------------------------------------------------------------- */

/* a QP of @type, or NULL */
static struct ibv_qp *some_qp_of(enum ibv_qp_type type)
{
	unsigned int i, start = vt_rndn(MAX_QP);

	for (i = 0; i < MAX_QP; i++) {
		struct ibv_qp *qp = qps[(start + i) % MAX_QP];

		if (qp && qp->qp_type == type)
			return qp;
	}
	return NULL;
}

/* a MAD-like datagram in the upper half of udbuf, for QP1 */
static uint64_t fill_mad(void)
{
	static const unsigned char classes[] = {
		0x01, 0x03, 0x04, 0x06, 0x07, 0x09, 0x0a, 0x10, 0x21, 0x30,
		0x81,
	};
	unsigned char *m = (unsigned char *)udbuf + UDBUF_LEN / 2 +
			   256 * vt_rndn(UDBUF_LEN / 2 / 256 - 2);
	uint64_t v;
	unsigned int i;

	for (i = 0; i < 256; i += 8) {
		v = vt_rnd();
		memcpy(m + i, &v, 8);
	}
	m[0] = vt_rndn(4) ? 1 : vt_rnd();			/* base version */
	m[1] = vt_rndn(4) ? classes[vt_rndn(sizeof(classes))] : vt_rnd();
	m[2] = vt_rndn(3) ? 1 + vt_rndn(2) : vt_rnd();		/* class version */
	m[3] = vt_rndn(2) ? 1 + vt_rndn(0x20) : vt_rnd();	/* method */
	return (uintptr_t)m;
}

/* what softhca checks of one UD send WR, after the core's checks */
static int ud_wr_err(const struct kobj *o, const struct ibv_send_wr *w,
		     expect_t *maybe)
{
	uint32_t len = 0;
	int i;

	if (w->wr.ud.remote_qpn > 0xffffff)
		return EINVAL;
	if (w->send_flags & IBV_SEND_INLINE) {
		/* copied from the process while posting */
		for (i = 0; i < w->num_sge; i++) {
			const struct ibv_sge *s = &w->sg_list[i];

			if (s->length > o->max_inline - len)
				return EINVAL;
			if (s->length) {
				if (s->addr + s->length < s->addr)
					return EFAULT;
				switch (classify(s->addr, s->length)) {
				case M_RW:
				case M_RO:
					break;
				case M_BAD:
					return EFAULT;
				default:
					*maybe |= X(EFAULT);
					break;
				}
			}
			len += s->length;
		}
		return 0;
	}
	if ((uint32_t)w->num_sge > o->max_sge)
		return EINVAL;
	for (i = 0; i < w->num_sge; i++) {
		if (len + w->sg_list[i].length < len)
			return EINVAL;
		len += w->sg_list[i].length;
	}
	return 0;
}

/* a request the provider posts alone, through POST_LOCAL */
static int wr_local(const struct ibv_send_wr *w)
{
	return w->opcode == IBV_WR_BIND_MW || w->opcode == IBV_WR_LOCAL_INV;
}

/*
 * the requests [@wr, @end), which the provider posts in one POST_SEND, or
 * (a send ring) in one doorbell
 */
static expect_t ud_run_expect(struct ibv_qp *qp, struct ibv_send_wr *wr,
			      struct ibv_send_wr *end)
{
	const struct kobj *o = &tab[qp->handle];
	struct ibv_send_wr *w;
	expect_t x = 0;
	int e;

	/*
	 * Without a send ring the core converts the whole chain before
	 * softhca sees any. With one, the provider writes a slot per request
	 * and the kernel takes them in order, naming each AH by the number
	 * it gave it in this context: a request after a refused one is not
	 * posted, those before are; an AH destroyed behind the provider's
	 * back (raw DESTROY_AH) is an unknown number (EINVAL) or, once the
	 * number went to a new AH of the process, that AH (the send goes).
	 */
	for (w = wr; w != end && !qp_sq_ring(qp); w = w->next) {
		if (w->opcode != IBV_WR_SEND && w->opcode != IBV_WR_SEND_WITH_IMM)
			return X(EINVAL);
		if ((e = lookup_err(w->wr.ud.ah->handle, T_AH)))
			return X(e);
	}
	for (w = wr; w != end; w = w->next) {
		if (qp_sq_ring(qp)) {
			/* more SGEs than a slot holds: POST_SEND, alone */
			int slot = w->num_sge >= 0 &&
				   (uint32_t)w->num_sge <= o->max_sge;

			if (w->opcode != IBV_WR_SEND &&
			    w->opcode != IBV_WR_SEND_WITH_IMM)
				return x | X(EINVAL);
			e = lookup_err(w->wr.ud.ah->handle, T_AH);
			if (slot && (e || ah_is_stale(w->wr.ud.ah)))
				/* then anything the rest may give */
				return x | XOK | X(EINVAL) | X(ENOENT) |
				       X(ENOMEM) | X(EFAULT);
			if (e)
				return x | X(e);
			/* a slot takes the flags softhca knows, no more */
			if (slot && (w->send_flags &
				     ~(IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				       IBV_SEND_SOLICITED | IBV_SEND_INLINE)))
				return x | X(EINVAL);
		}
		e = ud_wr_err(o, w, &x);
		if (e)
			return x | X(e);
		if (qp->state == IBV_QPS_RESET ||
		    (qp->state == IBV_QPS_INIT && !qp_poisoned(qp->handle)))
			return x | X(EINVAL);
		/*
		 * RTR: or in the error state by now; INIT too once its
		 * receive ring was written into (a corrupt one: ERR)
		 */
		if (qp->state == IBV_QPS_RTR || qp->state == IBV_QPS_INIT)
			x |= X(EINVAL);
		x |= X(ENOMEM);		/* the send queue may be full */
	}
	return x | XOK;
}

/*
 * The provider posts a chain in runs: the requests before a memory-window
 * bind or a LOCAL_INV in one POST_SEND command, each of those alone
 * (SOFTHCA_IB_METHOD_QP_POST_LOCAL, which a UD QP refuses).
 */
static expect_t ud_send_expect(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *w = wr, *end;
	expect_t x = 0, r;

	/*
	 * A send ring written into behind the provider's back: the kernel's
	 * consumer and the provider's producer need not agree any more (the
	 * process confuses only its own provider), so a post may be taken,
	 * refused or find nothing new, as on RC (qp_post_expect()).
	 */
	if (qp_sq_ring(qp) && qp_poisoned(qp->handle))
		return XOK | X(EINVAL) | X(ENOMEM) | X(EFAULT) | X(ENOENT);

	while (w) {
		if (wr_local(w))
			return x | X(EINVAL);
		for (end = w; end && !wr_local(end); end = end->next)
			;
		r = ud_run_expect(qp, w, end);
		if (!(r & XOK))
			return x | r;
		x |= r & ~XOK;
		w = end;
	}
	return x | XOK;
}

/*
 * UD sends with live (or destroyed) address handles of the process, to
 * its own UD QPs, to QP1 (MAD-like datagrams with the GSI Q_Key), to QP
 * numbers 0, 0xffffff and beyond, with controlled Q_Keys and lengths
 * above the MTU.
 */
static void op_ud_send(void)
{
	static const uint32_t qpns[] = { 0, 1, 0xffffff, 0x1000000, 0xffffffff };
	struct ibv_qp *qp = some_qp_of(IBV_QPT_UD), *peer;
	struct ibv_send_wr wr[3], *bad = NULL;
	struct ibv_ah *live[MAX_AH];
	struct ibv_sge sg[3][40];
	unsigned int n = 1 + vt_rndn(3), k, j, nah = 0;
	const struct kobj *o;
	expect_t x;
	int err;

	if (!qp)
		return;
	for (k = 0; k < MAX_AH; k++)
		if (ahs[k])
			live[nah++] = ahs[k];
	if (!nah)
		return;
	o = &tab[qp->handle];
	memset(wr, 0, sizeof(wr));
	for (k = 0; k < n; k++) {
		struct ibv_send_wr *w = &wr[k];

		w->wr_id = vt_rnd();
		w->opcode = vt_rndn(24) ? (vt_rndn(2) ? IBV_WR_SEND : IBV_WR_SEND_WITH_IMM) :
			    (enum ibv_wr_opcode)vt_rndn(16);
		w->send_flags = vt_rndn(2) ? IBV_SEND_SIGNALED :
				vt_rndn(4) ? vt_rnd() & (IBV_SEND_SIGNALED | IBV_SEND_SOLICITED |
						   IBV_SEND_INLINE) :
					  (unsigned int)vt_rnd();
		w->imm_data = vt_rnd();
		w->wr.ud.ah = live[vt_rndn(nah)];
		peer = some_qp_of(IBV_QPT_UD);
		switch (vt_rndn(8)) {
		case 0:
			w->wr.ud.remote_qpn = 1;
			w->wr.ud.remote_qkey = vt_rndn(4) ? QP1_QKEY : vt_rnd();
			break;
		case 1:
			w->wr.ud.remote_qpn = qpns[vt_rndn(5)];
			w->wr.ud.remote_qkey = vt_rnd();
			break;
		case 2:
			w->wr.ud.remote_qpn = vt_rnd() & 0xffffff;
			w->wr.ud.remote_qkey = vt_rnd();
			break;
		default:
			w->wr.ud.remote_qpn = peer->qp_num;
			w->wr.ud.remote_qkey = vt_rndn(4) ? tab[peer->handle].qkey :
					       vt_rndn(2) ? 0x80000000U | (uint32_t)vt_rnd() :
							 (uint32_t)vt_rnd();
			break;
		}
		if (w->wr.ud.remote_qpn == 1 && ud_mr && vt_rndn(4)) {
			w->num_sge = 1;
			sg[k][0].addr = fill_mad();
			sg[k][0].length = vt_rndn(4) ? 256 : vt_rndn(512);
			sg[k][0].lkey = ud_mr->lkey;
		} else {
			w->num_sge = vt_rndn(8) ? vt_rndn(o->max_sge + 1) : vt_rndn(40);
			for (j = 0; j < (unsigned int)w->num_sge; j++)
				sg[k][j] = rnd_sge();
		}
		w->sg_list = sg[k];
		w->next = k + 1 < n ? &wr[k + 1] : NULL;
	}
	x = ud_send_expect(qp, wr);
	err = ibv_post_send(qp, wr, &bad);
	{
		char more[256] = "";
		size_t at = 0;

		/* the requests after the first, for a report */
		for (k = 1; k < n && at < sizeof(more); k++) {
			uint64_t len = 0;

			for (j = 0; j < (unsigned int)wr[k].num_sge && j < 40; j++)
				len += wr[k].sg_list[j].length;
			at += snprintf(more + at, sizeof(more) - at,
				       "; #%u opcode %d flags %#x sges %d bytes %llu ah %u%s qpn %#x",
				       k, wr[k].opcode, wr[k].send_flags,
				       wr[k].num_sge, (unsigned long long)len,
				       wr[k].wr.ud.ah->handle,
				       ah_is_stale(wr[k].wr.ud.ah) ? " (stale)" : "",
				       wr[k].wr.ud.remote_qpn);
		}
		account(OP_UD_SEND, err, x,
			"(qp %u state %d, %u WRs, first: opcode %d flags %#x sges %d of %u (inline %u, bytes %u), ah %u%s, qpn %#x, qkey %#x; bad #%d%s)",
			qp->handle, qp->state, n, wr[0].opcode, wr[0].send_flags,
			wr[0].num_sge, o->max_sge, o->max_inline,
			wr[0].num_sge > 0 ? wr[0].sg_list[0].length : 0,
			wr[0].wr.ud.ah->handle,
			ah_is_stale(wr[0].wr.ud.ah) ? " (stale)" : "",
			wr[0].wr.ud.remote_qpn, wr[0].wr.ud.remote_qkey,
			bad ? (int)(bad - wr) : -1, more);
	}
}

/* ---- memory windows ---------------------------------------------------- */

/* a type for alloc_mw: mostly 1 or 2; the command carries one byte of it */
static int rnd_mw_type(void)
{
	switch (vt_rndn(12)) {
	case 0: return 0;
	case 1: return 3 + vt_rndn(253);
	case 2: return 0x100 | (1 + vt_rndn(2));	/* 1 or 2 in the byte */
	case 3: return (int)vt_rnd();
	default: return 1 + vt_rndn(2);
	}
}

/* alloc_mw: the core looks the PD up and checks the type, then softhca */
static expect_t mw_alloc_expect(uint32_t pd, int type, int udata)
{
	int e = lookup_err(pd, T_PD);

	if (e)
		return X(e);
	if ((uint8_t)type != 1 && (uint8_t)type != 2)
		return X(EINVAL);
	if (udata)
		return X(EINVAL);	/* softhca takes no driver data */
	return XOK;
}

static void op_mw_alloc(void)
{
	struct ibv_qp *qp = qps[vt_rndn(MAX_QP)];
	struct ibv_pd *pd;
	struct ibv_mw *mw;
	unsigned int i;
	expect_t x;
	int type;

	for (i = 0; i < MAX_MW && mws[i]; i++)
		;
	if (i == MAX_MW)
		return;
	/* mostly on a QP's PD: there it can be bound */
	pd = qp && vt_rndn(3) ? qp->pd : some_pd();
	if (!pd)
		return;
	type = rnd_mw_type();
	x = mw_alloc_expect(pd->handle, type, 0);
	errno = 0;
	mw = ibv_alloc_mw(pd, (enum ibv_mw_type)type);
	account(OP_MW_ALLOC, mw ? 0 : errno, x, "(pd %u, type %#x)", pd->handle,
		type);
	if (mw) {
		mw_created(mw->handle, pd->handle, (uint8_t)type, mw->rkey);
		mws[i] = mw;
	}
}

static void op_mw_alloc_raw(void)
{
	struct ib_uverbs_alloc_mw cmd;
	struct {
		struct ib_uverbs_alloc_mw_resp resp;
		uint32_t more[4];
	} out;
	unsigned int in_x = 0, out_x = 0, i;
	int bad, err, type, junk = 0;
	expect_t x;

	if (count_type(T_MW) >= 2 * MAX_MW)
		return;
	memset(&cmd, 0, sizeof(cmd));
	memset(&out, 0, sizeof(out));
	cmd.response = rnd_resp(&out, &bad);
	cmd.pd_handle = any_handle(T_PD);
	type = rnd_mw_type();
	cmd.mw_type = type;
	for (i = 0; i < sizeof(cmd.reserved); i++)	/* not checked */
		cmd.reserved[i] = vt_rndn(4) ? 0 : vt_rnd();
	if (!vt_rndn(6)) {		/* driver data in or out */
		in_x = vt_rndn(3);
		out_x = in_x ? vt_rndn(2) : 1 + vt_rndn(3);
		junk = vt_rndn(2);
	}
	x = mw_alloc_expect(cmd.pd_handle, type, in_x || out_x);
	/* allocated, then the response fails: it is deallocated again */
	if (bad && (x & XOK))
		x = (x & ~XOK) | X(EFAULT);
	err = raw_cmd_x(IB_USER_VERBS_CMD_ALLOC_MW, &cmd, sizeof(cmd), in_x,
			junk, sizeof(out.resp) / 4 + out_x);
	account(OP_MW_ALLOC_RAW, err, x,
		"(pd %u, type %u, +%u/+%u words, response %#llx)",
		cmd.pd_handle, cmd.mw_type, in_x, out_x,
		(unsigned long long)cmd.response);
	if (!err)
		mw_created(out.resp.mw_handle, cmd.pd_handle, cmd.mw_type,
			   out.resp.rkey);
}

/* ibv_dealloc_mw() of mws[@i]: a bound window is unbound */
static void mw_dealloc_slot(unsigned int i)
{
	uint32_t h;
	int e, err;

	if (!mws[i])
		return;
	h = mws[i]->handle;
	e = lookup_err(h, T_MW);
	err = ibv_dealloc_mw(mws[i]);
	account(OP_MW_DEALLOC, err, X(e), "(handle %u)", h);
	if (!err)
		kdel(h);
	mws[i] = NULL;	/* on failure it was stale: forget it (struct leaked) */
}

static void op_mw_dealloc(void)
{
	mw_dealloc_slot(vt_rndn(MAX_MW));
}

static void op_mw_dealloc_raw(void)
{
	struct ib_uverbs_dealloc_mw cmd;
	int e, err;

	cmd.mw_handle = any_handle(T_MW);
	e = lookup_err(cmd.mw_handle, T_MW);
	err = raw_cmd(IB_USER_VERBS_CMD_DEALLOC_MW, &cmd, sizeof(cmd), 0);
	account(OP_MW_DEALLOC_RAW, err, X(e), "(handle %u)", cmd.mw_handle);
	if (!err)
		kdel(cmd.mw_handle);
}

/* the QP of handle @h, or NULL */
static struct ibv_qp *qp_of(uint32_t h)
{
	unsigned int i;

	for (i = 0; i < MAX_QP; i++)
		if (qps[i] && qps[i]->handle == h)
			return qps[i];
	return NULL;
}

/*
 * Posting a well-formed local request to QP @h: a UD QP takes none, nor
 * does a QP in RESET, INIT or RTR (one in RTR may be in the error state
 * by now, which takes them), nor a full send queue (ENOMEM).
 */
static expect_t qp_post_expect(uint32_t h)
{
	struct ibv_qp *qp = qp_of(h);

	if (!qp)
		return XOK | X(EINVAL) | X(ENOMEM);
	if (qp->qp_type == IBV_QPT_UD || qp->state == IBV_QPS_RESET)
		return X(EINVAL);
	/* a corrupt receive ring may have put it in the error state */
	if (qp_poisoned(h))
		return XOK | X(EINVAL) | X(ENOMEM);
	if (qp->state == IBV_QPS_INIT)
		return X(EINVAL);
	if (qp->state == IBV_QPS_RTR)
		return X(EINVAL) | XOK | X(ENOMEM);
	return XOK | X(ENOMEM);
}

/*
 * SOFTHCA_IB_METHOD_QP_POST_LOCAL once its attributes were looked up:
 * live QP @qp, window @mw and MR @mr (-1: the attribute is absent), the
 * request's opcode, flags and length. How the bind itself ends (the
 * IBTA's rules: PDs, rights, range, key) shows only in its completion.
 */
static expect_t local_handler_expect(uint32_t qp, int64_t mw, int64_t mr,
				     uint32_t opcode, uint32_t flags,
				     uint64_t length)
{
	if (flags & ~SOFTHCA_LOCAL_SEND_FLAGS)
		return X(EINVAL);
	switch (opcode) {
	case SOFTHCA_LOCAL_INV:
		break;
	case SOFTHCA_LOCAL_BIND_MW:
		/* uverbs_attr_get_obj() of an absent attribute */
		if (mw < 0)
			return X(ENOENT);
		/* only a type 1 window is unbound without an MR */
		if (mr < 0 && (length || tab[mw].mw_type == 2))
			return X(EINVAL);
		break;
	default:
		return X(EINVAL);
	}
	return qp_post_expect(qp);
}

/* the same with the provider's attributes: QP, WR, then MW and MR if given */
static expect_t local_expect(uint32_t qp, int64_t mw, int64_t mr,
			     uint32_t opcode, uint32_t flags, uint64_t length)
{
	int e;

	if ((e = lookup_err(qp, T_QP)) ||
	    (mw >= 0 && (e = lookup_err(mw, T_MW))) ||
	    (mr >= 0 && (e = lookup_err(mr, T_MR))))
		return X(e);
	return local_handler_expect(qp, mw, mr, opcode, flags, length);
}

/*
 * A bind of window @mw (with MR @mr, or -1), request number @seq, reached
 * QP @qp's send queue.
 */
static void bind_posted(uint32_t qp, uint32_t mw, int64_t mr, uint64_t addr,
			uint64_t len, uint32_t access, uint32_t key,
			uint32_t seq)
{
	struct kobj *w = &tab[mw];

	if (mr >= 0 && !len && w->mw_type == 1)
		mr = -1;		/* an unbind: the MR is not looked at */
	mw_posted(mw, qp, mr, seq);
	w->key = key;
	w->start = addr;
	w->len = len;
	w->access = access;
	if (mr >= 0)
		mw_may_bind(mw, mr);
}

/* a window of mws[]: one on @pd if there is one, else any */
static int some_mw_on(const struct ibv_pd *pd)
{
	unsigned int i, start = vt_rndn(MAX_MW);
	int any = -1;

	for (i = 0; i < MAX_MW; i++) {
		unsigned int j = (start + i) % MAX_MW;

		if (!mws[j])
			continue;
		if (mws[j]->pd == pd)
			return j;
		if (any < 0)
			any = j;
	}
	return any;
}

/* @pd if it is one of pds[] (its struct was not freed), else NULL */
static struct ibv_pd *pd_listed(struct ibv_pd *pd)
{
	unsigned int i;

	for (i = 0; i < MAX_PD; i++)
		if (pds[i] && pds[i] == pd)
			return pd;
	return NULL;
}

/* an MR of mrs[] on @pd that windows may bind to, or NULL */
static struct ibv_mr *some_mr_on(const struct ibv_pd *pd)
{
	unsigned int i, start = vt_rndn(MAX_MR);

	for (i = 0; i < MAX_MR; i++) {
		struct ibv_mr *mr = mrs[(start + i) % MAX_MR];

		if (mr && mr->pd == pd && ktype(mr->handle) == T_MR &&
		    tab[mr->handle].pd == pd->handle &&
		    (tab[mr->handle].access & A_MW))
			return mr;
	}
	return NULL;
}

/*
 * An MR on @pd that windows may bind to: one of mrs[], else a new one in
 * rw with every right (NULL when there is no room or it fails).
 */
static struct ibv_mr *mr_for_binds(struct ibv_pd *pd)
{
	const uint32_t access = A_LW | A_RW | A_RR | A_RA | A_MW;
	struct ibv_mr *mr = some_mr_on(pd);
	uint64_t len = page * (1 + vt_rndn(8)), a;
	int slot = mr_slot(), e;
	expect_t x;

	if (mr || slot < 0 || count_type(T_MR) >= MAX_MR)
		return mr;
	a = (uintptr_t)rw + vt_rndn(RW_LEN - len + 1);
	e = lookup_err(pd->handle, T_PD);
	x = e ? X(e) : range_expect(a, len, a, access);
	errno = 0;
	mr = ibv_reg_mr(pd, (void *)(uintptr_t)a, len, access);
	account(OP_REG, mr ? 0 : errno, x,
		"(for windows: pd %u, addr %#llx, len %#llx, access %#x)",
		pd->handle, (unsigned long long)a, (unsigned long long)len,
		access);
	if (mr) {
		mr_created(mr->handle, pd->handle, -1, access);
		mr_pinned(mr->handle, a, len, a, 0);
		mrs[slot] = mr;
		mr_dmabuf[slot] = 0;
	}
	return mr;
}

/* MR @h's address space: iova and length (a DM MR is zero-based) */
static void mr_space(uint32_t h, const struct ibv_mr *mr, uint64_t *base,
		     uint64_t *len)
{
	if (ktype(h) == T_MR && tab[h].dm < 0) {
		*base = tab[h].iova;
		*len = tab[h].len;
	} else {
		*base = ktype(h) == T_MR ? 0 : mr ? (uintptr_t)mr->addr : 0;
		*len = mr ? mr->length : 0;
	}
}

/* a window's range in an MR's [base, base + mlen): mostly inside */
static void bind_range(uint64_t base, uint64_t mlen, uint64_t *addr,
		       uint64_t *len)
{
	uint64_t off = vt_rndn(mlen + 1);

	*addr = base + off;
	switch (vt_rndn(12)) {
	case 0:
		*len = 0;			/* unbinds a type 1 window */
		break;
	case 1:
		*len = mlen - off + 1;		/* one byte beyond the MR */
		break;
	case 2:
		*len = -*addr + vt_rndn(2);	/* to 2^64, or wrapping */
		break;
	case 3:
		*addr = base - 1 - vt_rndn(page);	/* before the MR */
		*len = 1 + vt_rndn(2 * page);
		break;
	case 4:
		*addr = vt_rnd();
		*len = vt_rndn(2) ? vt_rnd() : 1 + vt_rndn(page);
		break;
	default:
		*len = off < mlen ? 1 + vt_rndn(mlen - off) : 0;
		break;
	}
}

/* rights a window grants: mostly remote ones */
static uint32_t rnd_mw_access(void)
{
	static const uint32_t good[] = {
		A_RR, A_RW, A_RR | A_RW, A_RA, A_RR | A_RW | A_RA, 0,
		A_RR | A_ZB, A_RW | A_ZB, A_LW | A_RR,
	};

	switch (vt_rndn(8)) {
	case 0:
		return vt_rnd() & 0x3f;		/* MW_BIND, ZERO_BASED, ... */
	case 1:
		return vt_rnd();
	default:
		return good[vt_rndn(sizeof(good) / sizeof(good[0]))];
	}
}

/* send_flags of a local request: SOFTHCA_LOCAL_SEND_FLAGS, or others */
static uint32_t rnd_local_flags(void)
{
	switch (vt_rndn(8)) {
	case 0:
		return vt_rnd() & (IBV_SEND_FENCE | IBV_SEND_SIGNALED |
				   IBV_SEND_SOLICITED | IBV_SEND_INLINE);
	case 1:
		return vt_rnd();
	case 2:
		return 0;
	default:
		return IBV_SEND_SIGNALED | (vt_rndn(4) ? 0 : IBV_SEND_FENCE);
	}
}

/*
 * An RC or UC QP in the error state (a request failed, a bind refused
 * among them) back to RTS, at times: binds complete in error meanwhile.
 */
static void qp_revive(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr ia;
	struct ibv_qp_attr a;
	int err;

	if (qp->qp_type == IBV_QPT_UD || vt_rndn(2))
		return;
	/* (libibverbs notes the state it reads in qp->state) */
	err = ibv_query_qp(qp, &a, IBV_QP_STATE, &ia);
	account(OP_QP_MODIFY, err, XOK, "(qp %u, query)", qp->handle);
	if (err || a.qp_state != IBV_QPS_ERR)
		return;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	account(OP_QP_MODIFY, err, XOK, "(qp %u, ERR to RESET)", qp->handle);
	if (!err)
		qp_connect(qp);
}

/* a chain's outcome: @first's, then @next's if @first may succeed */
static expect_t expect_then(expect_t first, expect_t next)
{
	return first & XOK ? (first & ~XOK) | next : first;
}

/*
 * Binds of the process' windows to its MRs on one of its QPs: mostly as
 * an application makes them - a window, MR and QP of one PD, a range
 * inside an MR registered with MW_BIND (one is registered if need be),
 * remote rights, ibv_bind_mw() for a type 1 window and IBV_WR_BIND_MW
 * for a type 2 one, after a LOCAL_INV of its key at times (a bound type
 * 2 window is invalidated before it binds again) - else with any MR,
 * range, rights, flags, key and API; at times followed by a LOCAL_INV of
 * the new key. The provider and the kernel refuse some at once; whether
 * the others bind shows in their completions (op_poll()): the model
 * notes the MR the window may now be bound to.
 */
static void op_mw_bind(void)
{
	static const uint32_t rights[] = {
		A_RR, A_RW, A_RR | A_RW, A_RA, A_RR | A_RW | A_RA,
	};
	struct ibv_qp *qp = qps[vt_rndn(MAX_QP)];
	struct ibv_send_wr wr[3], *bad = NULL;
	int good = vt_rndn(4) != 0, j, k, err, api1, type, n = 0, b = 0;
	uint64_t base = 0, mlen = 0, addr, len;
	uint32_t access, flags, h, key;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	int64_t mra;
	expect_t x;

	if (!qp)
		return;
	j = some_mw_on(good || vt_rndn(2) ? qp->pd : NULL);
	if (j < 0)
		return;
	qp_revive(qp);
	mw = mws[j];
	h = mw->handle;
	type = ktype(h) == T_MW ? tab[h].mw_type : (int)mw->type;
	if (good) {
		/* (a stale window's PD may be gone, its struct freed) */
		pd = mw->pd == qp->pd ? qp->pd : pd_listed(mw->pd);
		mr = pd ? mr_for_binds(pd) : NULL;
	} else {
		mr = mrs[vt_rndn(MAX_MR)];
	}
	if (mr)
		mr_space(mr->handle, mr, &base, &mlen);
	if (good && mr && mlen) {
		uint64_t off = vt_rndn(mlen);

		addr = base + off;
		len = 1 + vt_rndn(mlen - off);
		access = rights[vt_rndn(sizeof(rights) / sizeof(rights[0]))];
		if (type == 2 && !vt_rndn(4))
			access |= A_ZB;
		flags = IBV_SEND_SIGNALED | (vt_rndn(4) ? 0 : IBV_SEND_FENCE);
		api1 = mw->type == IBV_MW_TYPE_1;
		key = ibv_inc_rkey(mw->rkey);
	} else {
		bind_range(base, mlen, &addr, &len);
		access = rnd_mw_access();
		flags = rnd_local_flags();
		/* mostly the API of the window's type */
		api1 = vt_rndn(8) ? mw->type == IBV_MW_TYPE_1 : (int)vt_rndn(2);
		key = vt_rndn(8) ? ibv_inc_rkey(mw->rkey) :
		      vt_rndn(2) ? mw->rkey : (uint32_t)vt_rnd();
	}
	if (api1) {
		uint32_t seq = ++post_seq;
		struct ibv_mw_bind bind = {
			.wr_id = WR_ID(WR_TAG_BIND, seq),
			.send_flags = flags,
			.bind_info = {
				.mr = mr, .addr = addr, .length = len,
				.mw_access_flags = access,
			},
		};

		/* libibverbs, the provider, then the kernel */
		mra = mr && len ? (int64_t)mr->handle : -1;
		if (mw->type != IBV_MW_TYPE_1 || (!mr && (addr || len)))
			x = X(EINVAL);
		else if (mr && mr->pd != mw->pd)
			x = X(EPERM);
		else
			x = local_expect(qp->handle, h, mra,
					 SOFTHCA_LOCAL_BIND_MW, flags, len);
		key = ibv_inc_rkey(mw->rkey);	/* what the provider gives */
		err = ibv_bind_mw(qp, mw, &bind);
		if (!err)
			bind_posted(qp->handle, h, mra, addr, len, access, key,
				    seq);
	} else {
		memset(wr, 0, sizeof(wr));
		x = XOK;
		/* invalidated first: its key as last bound */
		if (good && type == 2 && vt_rndn(2)) {
			wr[n].wr_id = WR_ID(WR_TAG_INV, ++post_seq);
			wr[n].opcode = IBV_WR_LOCAL_INV;
			wr[n].send_flags = IBV_SEND_SIGNALED;
			wr[n++].invalidate_rkey = mw->rkey;
			x = qp_post_expect(qp->handle);
		}
		b = n;
		wr[n].wr_id = WR_ID(WR_TAG_BIND, ++post_seq);
		wr[n].opcode = IBV_WR_BIND_MW;
		wr[n].send_flags = flags;
		wr[n].bind_mw.mw = mw;
		wr[n].bind_mw.rkey = key;	/* its index must be the window's */
		wr[n].bind_mw.bind_info.mr = mr;
		wr[n].bind_mw.bind_info.addr = addr;
		wr[n].bind_mw.bind_info.length = len;
		wr[n++].bind_mw.bind_info.mw_access_flags = access;
		mra = mr ? (int64_t)mr->handle : -1;
		if (mw->type != IBV_MW_TYPE_2 || !mr)
			x = expect_then(x, X(EINVAL));	/* refused by the provider */
		else
			x = expect_then(x, local_expect(qp->handle, h, mra,
						 SOFTHCA_LOCAL_BIND_MW, flags,
						 len));
		/* then the new key invalidated */
		if (!vt_rndn(4)) {
			wr[n].wr_id = WR_ID(WR_TAG_INV, ++post_seq);
			wr[n].opcode = IBV_WR_LOCAL_INV;
			wr[n].send_flags = IBV_SEND_SIGNALED;
			wr[n++].invalidate_rkey = key;
			x = expect_then(x, qp_post_expect(qp->handle));
		}
		for (k = 0; k + 1 < n; k++)
			wr[k].next = &wr[k + 1];
		err = ibv_post_send(qp, wr, &bad);
		/* those before bad_wr were posted */
		for (k = 0; k < n && (!err || &wr[k] < bad); k++) {
			if (k == b)
				bind_posted(qp->handle, h, mra, addr, len,
					    access, key, wr[k].wr_id);
			else
				mw_key_posted(qp->handle,
					      wr[k].invalidate_rkey,
					      wr[k].wr_id);
		}
	}
	account(OP_MW_BIND, err, x,
		"(%s%s%s, qp %u type %d state %d, window %u type %d, mr %d, addr %#llx, length %#llx, rights %#x, flags %#x, key %#x)",
		b ? "LOCAL_INV + " : "",
		api1 ? "ibv_bind_mw" : "IBV_WR_BIND_MW",
		n > b + 1 ? " + LOCAL_INV" : "", qp->handle, qp->qp_type,
		qp->state, h, type, mr ? (int)mr->handle : -1,
		(unsigned long long)addr, (unsigned long long)len, access,
		flags, key);
	/* deallocated while the bind may still be executing */
	if (!err && !vt_rndn(8))
		mw_dealloc_slot(j);
}

/* a value for an idr attribute: mostly a handle, else beyond 32 bits */
static uint64_t rnd_attr_handle(int type)
{
	uint64_t h = any_handle(type);

	switch (vt_rndn(24)) {
	case 0:
		return h | 1ULL << 63;		/* negative: refused */
	case 1:
		return h | (1 + vt_rndn(0x7fffffff)) << 32;
	default:
		return h;
	}
}

/* uverbs' lookup of idr attribute value @v as an object of @type */
static int attr_lookup_err(uint64_t v, int type)
{
	if ((int64_t)v < 0)
		return EINVAL;
	if (v > UINT32_MAX)
		return ENOENT;
	return lookup_err(v, type);
}

/*
 * The driver methods of UVERBS_OBJECT_QP as the core knows them
 * (DECLARE_UVERBS_NAMED_METHOD in shca_verbs.c): the raw ioctls below
 * may name either, whatever attributes they carry.
 */
enum { AS_IDR, AS_PTR_IN };

struct attr_spec {
	uint16_t id;
	int kind;		/* AS_IDR or AS_PTR_IN */
	int type;		/* AS_IDR: T_* of the object */
	uint16_t min_len, len;	/* AS_PTR_IN */
	int zero_trailing;	/* AS_PTR_IN: UVERBS_ATTR_STRUCT: longer if zeroes */
	int mandatory;
};

static const struct attr_spec local_spec[] = {
	{ SOFTHCA_IB_ATTR_POST_LOCAL_QP, AS_IDR, T_QP, 0, 0, 0, 1 },
	{ SOFTHCA_IB_ATTR_POST_LOCAL_MW, AS_IDR, T_MW, 0, 0, 0, 0 },
	{ SOFTHCA_IB_ATTR_POST_LOCAL_MR, AS_IDR, T_MR, 0, 0, 0, 0 },
	{ SOFTHCA_IB_ATTR_POST_LOCAL_WR, AS_PTR_IN, T_NONE,
	  offsetof(struct softhca_local_wr, access) + sizeof(uint32_t),
	  sizeof(struct softhca_local_wr), 1, 1 },
};

static const struct attr_spec db_spec[] = {
	{ SOFTHCA_IB_ATTR_DOORBELL_QP, AS_IDR, T_QP, 0, 0, 0, 1 },
	{ SOFTHCA_IB_ATTR_DOORBELL_QUEUE, AS_PTR_IN, T_NONE, 4, 4, 0, 1 },
	{ SOFTHCA_IB_ATTR_DOORBELL_PRODUCER, AS_PTR_IN, T_NONE, 4, 4, 0, 0 },
};

#define NSPEC(a)	(sizeof(a) / sizeof((a)[0]))
#define MAX_SPEC	4

/* bytes @from.. of PTR_IN attribute @a are zeroes (ib_is_buffer_cleared()) */
static int attr_tail_clear(const struct ib_uverbs_attr *a, unsigned int from,
			   int unreadable)
{
	const uint8_t *p;
	unsigned int i;

	if (a->len <= sizeof(a->data))
		p = (const uint8_t *)&a->data;	/* inline */
	else if (unreadable)
		return 0;
	else
		p = (const uint8_t *)(uintptr_t)a->data;
	for (i = from; i < a->len; i++)
		if (p[i])
			return 0;
	return 1;
}

/*
 * The core's checks of a driver method's ioctl, in its order
 * (ib_uverbs_ioctl(), ib_uverbs_cmd_verbs(), ib_uverbs_run_method(),
 * uverbs_set_attr(), uverbs_process_attr()): the header, the method, each
 * attribute in turn (lookups included), then the mandatory ones. Returns
 * the errno due, or 0 when the handler runs: *@spec is then the method's
 * and @at[k] the index in @attr of its attribute k (-1: absent). Bit i of
 * @unreadable: attribute i points at memory that cannot be read.
 */
static int ioctl_core_err(const struct ib_uverbs_ioctl_hdr *hdr,
			  const struct ib_uverbs_attr *attr,
			  uint32_t unreadable, const struct attr_spec **spec,
			  int *at)
{
	const struct attr_spec *sp;
	unsigned int ns, i, k;
	uint32_t seen = 0;
	int e;

	if (hdr->length != sizeof(*hdr) + hdr->num_attrs * sizeof(*attr))
		return EINVAL;
	if (hdr->reserved1 || hdr->reserved2)
		return EPROTONOSUPPORT;
	if (hdr->driver_id != RDMA_DRIVER_UNKNOWN)
		return EINVAL;
	if (hdr->object_id != UVERBS_OBJECT_QP)
		return EPROTONOSUPPORT;
	if (hdr->method_id == SOFTHCA_IB_METHOD_QP_POST_LOCAL) {
		sp = local_spec;
		ns = NSPEC(local_spec);
	} else if (hdr->method_id == SOFTHCA_IB_METHOD_QP_DOORBELL) {
		sp = db_spec;
		ns = NSPEC(db_spec);
	} else {
		return EPROTONOSUPPORT;
	}
	for (k = 0; k < ns; k++)
		at[k] = -1;
	for (i = 0; i < hdr->num_attrs; i++) {
		const struct ib_uverbs_attr *a = &attr[i];

		for (k = 0; k < ns && sp[k].id != a->attr_id; k++)
			;
		if (k == ns) {
			/* unknown to the method: refused if mandatory */
			if (a->flags & UVERBS_ATTR_F_MANDATORY)
				return EPROTONOSUPPORT;
			continue;
		}
		if (seen & 1U << k)
			return EINVAL;		/* given twice */
		if (sp[k].kind == AS_IDR) {
			/* an idr attribute has neither length nor reserved bits */
			e = a->attr_data.reserved || a->len ? EINVAL :
			    attr_lookup_err(a->data, sp[k].type);
		} else {
			if (a->len > sp[k].len && sp[k].zero_trailing &&
			    !attr_tail_clear(a, sp[k].len, unreadable >> i & 1))
				return EOPNOTSUPP;
			e = a->len < sp[k].min_len ||
			    (!sp[k].zero_trailing && a->len > sp[k].len) ||
			    a->attr_data.reserved ? EINVAL : 0;
		}
		if (e)
			return e;
		seen |= 1U << k;
		at[k] = i;
	}
	for (k = 0; k < ns; k++)
		if (sp[k].mandatory && !(seen & 1U << k))
			return EINVAL;		/* a mandatory one is missing */
	*spec = sp;
	return 0;
}

/* a PTR_IN attribute of at most 8 bytes, as the handler copies it */
static uint32_t attr_u32(const struct ib_uverbs_attr *a)
{
	uint32_t v = 0;

	memcpy(&v, &a->data, a->len < sizeof(v) ? a->len : sizeof(v));
	return v;
}

static expect_t db_handler_expect(uint32_t h, uint32_t queue, int has_prod,
				  uint32_t prod, int *may_post);
static void db_posted(uint32_t h);

/* the attributes of POST_LOCAL by their index (softhca_ib_post_local_attrs) */
#define LA(id)	((id) - SOFTHCA_IB_ATTR_POST_LOCAL_QP)
#define LA_QP	LA(SOFTHCA_IB_ATTR_POST_LOCAL_QP)
#define LA_MW	LA(SOFTHCA_IB_ATTR_POST_LOCAL_MW)
#define LA_MR	LA(SOFTHCA_IB_ATTR_POST_LOCAL_MR)
#define LA_WR	LA(SOFTHCA_IB_ATTR_POST_LOCAL_WR)

static int local_attr_index(uint16_t id)
{
	return id >= SOFTHCA_IB_ATTR_POST_LOCAL_QP &&
	       id <= SOFTHCA_IB_ATTR_POST_LOCAL_WR ?
	       id - SOFTHCA_IB_ATTR_POST_LOCAL_QP : -1;
}

/*
 * SOFTHCA_IB_METHOD_QP_POST_LOCAL as a raw ioctl, as the provider's
 * shca_post_local() makes it, then garbled: any QP, MW and MR handle,
 * attributes missing, repeated, unknown (mandatory or not) or in another
 * order, a work request that is short, long (zeroes or not beyond the
 * struct) or unreadable, any opcode, flags, key, range and rights, and a
 * header with a wrong length, reserved bits, driver id or method. The
 * core checks the header, then each attribute in order (the lookups
 * included), then that QP and WR are there; then the handler runs.
 */
static void op_post_local(void)
{
	static const uint16_t unknown[] = {
		SOFTHCA_IB_ATTR_POST_LOCAL_WR + 1,
		SOFTHCA_IB_ATTR_POST_LOCAL_WR + 7, 0, 1, 5, 0xffff,
	};
	static const int types[] = {
		[LA_QP] = T_QP, [LA_MW] = T_MW, [LA_MR] = T_MR, [LA_WR] = T_NONE,
	};
	/* the provider's order */
	static const int order[] = { LA_QP, LA_WR, LA_MW, LA_MR };
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[8];
	} cmd;
	struct {
		struct softhca_local_wr wr;
		uint64_t more[2];
	} buf;
	uint64_t val[4], base = 0, mlen = 0, addr, len, wr_ptr;
	unsigned int n = 0, i, k, has = 0;
	uint16_t wr_len = sizeof(buf.wr);
	uint32_t seq, unreadable = 0;
	int wr_bad = 0, junk = 0, may_post = 0, e, err;
	int at[MAX_SPEC] = { -1, -1, -1, -1 };
	const struct attr_spec *spec = NULL;
	char desc[160];
	size_t dl = 0;
	expect_t x;

	memset(&cmd, 0, sizeof(cmd));
	memset(&buf, 0, sizeof(buf));

	/* the request, and the attributes that come with it */
	buf.wr.opcode = vt_rndn(8) ? (vt_rndn(4) ? SOFTHCA_LOCAL_BIND_MW :
				      SOFTHCA_LOCAL_INV) :
			vt_rndn(2) ? vt_rndn(4) : (uint32_t)vt_rnd();
	if (vt_rndn(16))
		has |= 1U << LA_QP;
	if (vt_rndn(16))
		has |= 1U << LA_WR;
	if (buf.wr.opcode == SOFTHCA_LOCAL_BIND_MW ? vt_rndn(8) : !vt_rndn(4))
		has |= 1U << LA_MW;
	if (vt_rndn(4))
		has |= 1U << LA_MR;
	for (i = 0; i < 4; i++)
		val[i] = types[i] != T_NONE && (has & 1U << i) ?
			 rnd_attr_handle(types[i]) : 0;
	seq = ++post_seq;
	buf.wr.wr_id = WR_ID(buf.wr.opcode == SOFTHCA_LOCAL_INV ? WR_TAG_INV :
			     WR_TAG_BIND, seq);
	buf.wr.send_flags = rnd_local_flags();
	if ((has & 1U << LA_MR) && val[LA_MR] < MAXH)
		mr_space(val[LA_MR], NULL, &base, &mlen);
	bind_range(base, mlen, &addr, &len);
	buf.wr.addr = addr;
	buf.wr.length = len;
	buf.wr.access = rnd_mw_access();
	if (buf.wr.opcode == SOFTHCA_LOCAL_INV) {
		int64_t w = live_of(T_MW);
		struct ibv_mr *mr = mrs[vt_rndn(MAX_MR)];

		buf.wr.key = w >= 0 && vt_rndn(2) ? tab[w].key :
			     mr && vt_rndn(2) ? mr->lkey : (uint32_t)vt_rnd();
	} else if (val[LA_MW] < MAXH && ktype(val[LA_MW]) == T_MW &&
		   vt_rndn(8)) {
		buf.wr.key = ibv_inc_rkey(tab[val[LA_MW]].key);
	} else {
		buf.wr.key = vt_rnd();
	}
	wr_ptr = (uintptr_t)&buf;
	switch (vt_rndn(24)) {
	case 0:			/* short */
		wr_len = vt_rndn(sizeof(buf.wr));
		break;
	case 1:			/* longer, zeroes beyond */
		wr_len = sizeof(buf.wr) + 8 * (1 + vt_rndn(2));
		break;
	case 2:			/* longer, not zeroes beyond */
		wr_len = sizeof(buf.wr) + 8 * (1 + vt_rndn(2));
		buf.more[vt_rndn((wr_len - sizeof(buf.wr)) / 8)] = vt_rnd() | 1;
		junk = 1;
		break;
	case 3:			/* unreadable */
		wr_ptr = vt_rndn(2) ? (uintptr_t)arena : 0xffff888000000000ULL;
		wr_bad = 1;
		if (vt_rndn(2))
			wr_len = sizeof(buf.wr) + 8;
		break;
	default:
		break;
	}

	/* the attributes, in the provider's order */
	for (i = 0; i < 4; i++) {
		struct ib_uverbs_attr *a = &cmd.attr[n];

		if (!(has & 1U << order[i]))
			continue;
		a->attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_QP + order[i];
		a->flags = UVERBS_ATTR_F_MANDATORY;
		if (order[i] == LA_WR) {
			a->len = wr_len;
			a->attr_data.reserved = vt_rndn(32) ? 0 : 1 + vt_rndn(0xffff);
			a->data = wr_ptr;
		} else {
			a->data = val[order[i]];
			/* an idr attribute has neither length nor reserved bits */
			if (!vt_rndn(48)) {
				if (vt_rndn(2))
					a->len = 1 + vt_rndn(64);
				else
					a->attr_data.reserved = 1 + vt_rndn(0xffff);
			}
		}
		n++;
	}
	/* in another order, repeated, unknown */
	if (n > 1 && !vt_rndn(8))
		for (i = n - 1; i > 0; i--) {
			struct ib_uverbs_attr t = cmd.attr[i];

			k = vt_rndn(i + 1);
			cmd.attr[i] = cmd.attr[k];
			cmd.attr[k] = t;
		}
	if (n && !vt_rndn(24)) {
		cmd.attr[n] = cmd.attr[vt_rndn(n)];
		n++;
	}
	if (!vt_rndn(16)) {
		k = vt_rndn(n + 1);
		memmove(&cmd.attr[k + 1], &cmd.attr[k],
			(n - k) * sizeof(cmd.attr[0]));
		memset(&cmd.attr[k], 0, sizeof(cmd.attr[k]));
		cmd.attr[k].attr_id =
			unknown[vt_rndn(sizeof(unknown) / sizeof(unknown[0]))];
		cmd.attr[k].flags = vt_rndn(2) ? UVERBS_ATTR_F_MANDATORY : 0;
		cmd.attr[k].data = vt_rnd();
		n++;
	}

	cmd.hdr.length = sizeof(cmd.hdr) + n * sizeof(cmd.attr[0]);
	cmd.hdr.object_id = UVERBS_OBJECT_QP;
	cmd.hdr.method_id = SOFTHCA_IB_METHOD_QP_POST_LOCAL;
	cmd.hdr.num_attrs = n;
	cmd.hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	switch (vt_rndn(48)) {
	case 0:
		cmd.hdr.length = vt_rndn(2) ? cmd.hdr.length + sizeof(cmd.attr[0]) :
				 cmd.hdr.length - sizeof(cmd.attr[0]);
		break;
	case 1:
		cmd.hdr.reserved1 = 1ULL << vt_rndn(64);
		break;
	case 2:
		cmd.hdr.reserved2 = 1 + vt_rndn(0xffffffff);
		break;
	case 3:
		cmd.hdr.driver_id = 1 + vt_rndn(32);
		break;
	case 4:
		cmd.hdr.method_id += 1 + vt_rndn(3);
		break;
	default:
		break;
	}

	/* the core's checks, then the handler of the method named */
	for (i = 0; i < n; i++)
		if (wr_bad && local_attr_index(cmd.attr[i].attr_id) == LA_WR)
			unreadable |= 1U << i;
	e = ioctl_core_err(&cmd.hdr, cmd.attr, unreadable, &spec, at);
	if (e)
		x = X(e);
	else if (spec == db_spec)
		/* the method after POST_LOCAL: a doorbell (rarely well-formed) */
		x = db_handler_expect(cmd.attr[at[0]].data,
				      attr_u32(&cmd.attr[at[1]]), at[2] >= 0,
				      at[2] >= 0 ? attr_u32(&cmd.attr[at[2]]) : 0,
				      &may_post);
	/* the handler: uverbs_copy_from() of the request, then its checks */
	else if (wr_len > sizeof(buf.wr))
		x = X(EINVAL);
	else if (wr_bad)
		x = X(EFAULT);
	else
		x = local_handler_expect(val[LA_QP],
					 at[LA_MW] >= 0 ? (int64_t)val[LA_MW] : -1,
					 at[LA_MR] >= 0 ? (int64_t)val[LA_MR] : -1,
					 buf.wr.opcode, buf.wr.send_flags,
					 buf.wr.length);
	err = ioctl(cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
	for (i = 0; i < n && dl < sizeof(desc); i++) {
		const struct ib_uverbs_attr *a = &cmd.attr[i];
		int ai = local_attr_index(a->attr_id);

		dl += snprintf(desc + dl, sizeof(desc) - dl, "%s%s", i ? " " : "",
			       ai == LA_QP ? "QP" : ai == LA_MW ? "MW" :
			       ai == LA_MR ? "MR" : ai == LA_WR ? "WR" : "?");
		if (dl < sizeof(desc) && ai != LA_WR)
			dl += snprintf(desc + dl, sizeof(desc) - dl, "=%#llx",
				       (unsigned long long)a->data);
	}
	account(OP_POST_LOCAL, err, x,
		"(hdr length %u method %#x driver %u reserved %#llx/%#x; attrs %s; wr %u bytes at %#llx%s: opcode %u flags %#x key %#x addr %#llx length %#llx rights %#x)",
		cmd.hdr.length, cmd.hdr.method_id, cmd.hdr.driver_id,
		(unsigned long long)cmd.hdr.reserved1, cmd.hdr.reserved2,
		n ? desc : "none", wr_len, (unsigned long long)wr_ptr,
		junk ? " and junk" : "", buf.wr.opcode, buf.wr.send_flags,
		buf.wr.key, (unsigned long long)buf.wr.addr,
		(unsigned long long)buf.wr.length, buf.wr.access);
	if (spec == db_spec) {
		if (may_post)
			db_posted(cmd.attr[at[0]].data);
		return;
	}
	if (err)
		return;
	if (buf.wr.opcode == SOFTHCA_LOCAL_BIND_MW)
		bind_posted(val[LA_QP], val[LA_MW],
			    at[LA_MR] >= 0 ? (int64_t)val[LA_MR] : -1,
			    buf.wr.addr, buf.wr.length, buf.wr.access,
			    buf.wr.key, seq);
	else
		mw_key_posted(val[LA_QP], buf.wr.key, seq);
}

/* ---- mapped rings and doorbells ------------------------------------------ */

/* the slot of qps[] with handle @h, or -1 */
static int qp_slot(uint32_t h)
{
	unsigned int i;

	for (i = 0; i < MAX_QP; i++)
		if (qps[i] && qps[i]->handle == h)
			return i;
	return -1;
}

/* what a send doorbell may return once it posts (shca_qp_post_send()) */
#define DB_SQ_ANY	(XOK | X(EINVAL) | X(ENOMEM) | X(EFAULT))

/* the ring's consumer, as the kernel published it */
static uint32_t ring_consumer(const struct wq_map *m)
{
	return __atomic_load_n(&((struct softhca_wq_ring *)m->addr)->consumer,
			       __ATOMIC_ACQUIRE);
}

/*
 * SOFTHCA_IB_METHOD_QP_DOORBELL's handler for live QP @h, @queue and the
 * producer (if given): the receive doorbell is 0 with a receive ring,
 * else EINVAL; an unknown queue EINVAL; the send doorbell needs the
 * producer (uverbs_copy_from(): ENOENT) and a send ring (EINVAL). Of a
 * ring nobody wrote into behind the provider's back the consumer is
 * known: a producer equal to it posts nothing (0), one more than the
 * ring's slots ahead is EINVAL, one in between reposts the slots the
 * provider wrote last time around (*@may_post): whatever POST_SEND says
 * of them.
 */
static expect_t db_handler_expect(uint32_t h, uint32_t queue, int has_prod,
				  uint32_t prod, int *may_post)
{
	int i = qp_slot(h);
	const struct qp_rings *r = i >= 0 ? &qpr[i] : NULL;
	uint32_t d;

	*may_post = 0;
	if (i < 0)	/* not one of qps[]: the model has no such QP */
		return XOK | X(EINVAL) | X(ENOENT) | X(ENOMEM) | X(EFAULT);
	if (queue == SOFTHCA_DB_RQ)
		return qp_rq_ring(qps[i]) ? XOK : X(EINVAL);
	if (queue != SOFTHCA_DB_SQ)
		return X(EINVAL);
	if (!has_prod)
		return X(ENOENT);
	if (!qp_sq_ring(qps[i]))
		return X(EINVAL);
	if (r->poisoned || r->guess || !r->sq.addr || !r->sq.slots) {
		*may_post = 1;
		return DB_SQ_ANY;
	}
	d = prod - ring_consumer(&r->sq);
	if (!d)
		return XOK;
	if (d > r->sq.slots)
		return X(EINVAL);
	*may_post = 1;
	return DB_SQ_ANY;
}

/*
 * Requests the model never saw may have been posted to QP @h: it is
 * poisoned, and any window may have been invalidated (LOCAL_INV,
 * SEND_WITH_INV) by now or later: none is known to be bound any more.
 */
static void db_posted(uint32_t h)
{
	int i = qp_slot(h);
	unsigned int w;

	if (i >= 0)
		qpr[i].poisoned = 1;
	for (w = 0; w < MAXH; w++)
		if (tab[w].type == T_MW) {
			mw_posted(w, h, -1, ++post_seq);
			tab[w].multi = 1;
		}
}

/* a wr_id no tagged request has (wc_tagged()) */
static uint64_t rnd_wr_id(void)
{
	uint64_t id = vt_rnd();

	if ((id >> 32) == WR_TAG_BIND || (id >> 32) == WR_TAG_INV)
		id ^= 1ULL << 40;
	return id;
}

/* an SGE count for a slot of @max_sge: mostly fitting, else anything */
static uint32_t rnd_nsge(uint32_t max_sge)
{
	switch (vt_rndn(8)) {
	case 0: return max_sge + 1 + vt_rndn(2);
	case 1: return vt_rndn(2) ? 1000 : (uint32_t)vt_rnd();
	default: return vt_rndn(max_sge + 1);
	}
}

/* random bytes at a random place of mapping @m */
static void ring_garble(const struct wq_map *m)
{
	size_t off = vt_rndn(m->len), n = 1 + vt_rndn(64), i;

	if (!vt_rndn(2))
		off = vt_rndn(SOFTHCA_WQ_RING_HDR);	/* the header */
	for (i = 0; i < n && off + i < m->len; i++)
		m->addr[off + i] = vt_rnd();
}

/* a hostile receive slot */
static void rwqe_write(const struct wq_map *m, uint32_t idx, uint32_t max_sge)
{
	struct softhca_rwqe *s = (void *)(m->addr + SOFTHCA_WQ_RING_HDR +
					  (size_t)(idx & (m->slots - 1)) *
					  m->slot_size);
	uint32_t k, n = rnd_nsge(max_sge);

	s->wr_id = rnd_wr_id();
	s->num_sge = n;
	s->reserved = vt_rndn(4) ? 0 : vt_rnd();
	for (k = 0; k < n && k < max_sge; k++) {
		struct ibv_sge sg = rnd_sge();

		s->sge[k].addr = sg.addr;
		s->sge[k].length = sg.length;
		s->sge[k].lkey = sg.lkey;
	}
}

/* a hostile send slot: any opcode, flags, SGEs, keys and addresses */
static void swqe_write(const struct wq_map *m, uint32_t idx, uint32_t max_sge)
{
	static const uint32_t opcodes[] = {
		IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_SEND_WITH_INV,
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
		IBV_WR_RDMA_READ, IBV_WR_ATOMIC_CMP_AND_SWP,
		IBV_WR_ATOMIC_FETCH_AND_ADD, IBV_WR_LOCAL_INV,
		IBV_WR_BIND_MW,
	};
	struct softhca_swqe *s = (void *)(m->addr + SOFTHCA_WQ_RING_HDR +
					  (size_t)(idx & (m->slots - 1)) *
					  m->slot_size);
	struct ibv_mr *mr = mrs[vt_rndn(MAX_MR)];
	int64_t w = live_of(T_MW);
	uint32_t k, n = rnd_nsge(max_sge);

	s->wr_id = rnd_wr_id();
	s->opcode = vt_rndn(8) ? opcodes[vt_rndn(10)] : vt_rndn(2) ?
		    vt_rndn(32) : (uint32_t)vt_rnd();
	s->send_flags = vt_rndn(8) ? vt_rnd() & (IBV_SEND_SIGNALED |
			IBV_SEND_FENCE | IBV_SEND_SOLICITED | IBV_SEND_INLINE) :
			(uint32_t)vt_rnd();
	s->num_sge = n;
	s->ex = w >= 0 && vt_rndn(2) ? tab[w].key :
		mr && vt_rndn(2) ? mr->rkey : (uint32_t)vt_rnd();
	s->remote_addr = mr && vt_rndn(4) ?
		(uint64_t)(uintptr_t)mr->addr + (vt_rndn(64) & ~7ULL) :
		rnd_addr();
	s->rkey = w >= 0 && !vt_rndn(4) ? tab[w].key :
		  mr && vt_rndn(3) ? mr->rkey : (uint32_t)vt_rnd();
	s->compare_add = vt_rnd();
	s->swap = vt_rnd();
	s->reserved = vt_rndn(4) ? 0 : vt_rnd();
	for (k = 0; k < n && k < max_sge; k++) {
		struct ibv_sge sg = rnd_sge();

		s->sge[k].addr = sg.addr;
		s->sge[k].length = sg.length;
		s->sge[k].lkey = sg.lkey;
	}
}

/*
 * A process writes into its own rings behind the provider's back:
 * a receive ring's producer set beyond max_recv_wr, behind what the kernel
 * took, to anything, slots with too many SGEs, wild SGEs and wr_ids; a
 * send ring's slots with any opcode, flags, SGE count, key and address,
 * handed over by a doorbell (with the right producer or any); random
 * bytes anywhere. The QP is poisoned from then on; the doorbells answer
 * as documented, the kernel stays healthy (the runner checks its log),
 * and the process' other QPs and the other processes do not notice.
 */
static void op_ring(void)
{
	unsigned int i = vt_rndn(MAX_QP), k, nslots;
	struct qp_rings *r = &qpr[i];
	struct ibv_qp *qp = qps[i];
	const struct wq_map *m;
	uint32_t cons, prod, max;
	int send, err, may_post;
	expect_t x;

	if (!qp || (!r->sq.addr && !r->rq.addr))
		return;
	send = r->sq.addr && (!r->rq.addr || vt_rndn(2));
	m = send ? &r->sq : &r->rq;
	r->poisoned = 1;
	if (!m->slots || !vt_rndn(6)) {
		ring_garble(m);
		account(OP_RING, 0, XOK, "(qp %u, %s ring: random bytes)",
			qp->handle, send ? "send" : "receive");
		if (send)
			db_posted(qp->handle);	/* a doorbell may follow */
		return;
	}
	cons = ring_consumer(m);
	max = send ? tab[qp->handle].max_sge : tab[qp->handle].rsge;
	nslots = 1 + vt_rndn(4);
	for (k = 0; k < nslots; k++) {
		if (send)
			swqe_write(m, cons + k, max);
		else
			rwqe_write(m, ((struct softhca_wq_ring *)m->addr)->producer + k,
				   max);
	}
	if (!send) {
		struct softhca_wq_ring *h = (void *)m->addr;

		switch (vt_rndn(6)) {
		case 0:		/* beyond max_recv_wr */
			prod = cons + m->slots + 1 + vt_rndn(8);
			break;
		case 1:		/* behind what the kernel took */
			prod = cons - 1 - vt_rndn(4);
			break;
		case 2:
			prod = vt_rnd();
			break;
		default:	/* the slots just written */
			prod = h->producer + nslots;
			break;
		}
		__atomic_store_n(&h->producer, prod, __ATOMIC_RELEASE);
		account(OP_RING, 0, XOK, "(qp %u, receive ring: producer %#x, consumer %#x)",
			qp->handle, prod, cons);
		/* the doorbell of a receive ring: taken, whatever it holds */
		if (vt_rndn(2)) {
			err = 0;
			x = db_handler_expect(qp->handle, SOFTHCA_DB_RQ, 0, 0,
					      &may_post);
			goto ring;
		}
		return;
	}
	prod = vt_rndn(4) ? cons + nslots : vt_rndn(2) ? cons + m->slots +
	       1 + vt_rndn(4) : (uint32_t)vt_rnd();
	x = db_handler_expect(qp->handle, SOFTHCA_DB_SQ, 1, prod, &may_post);
	db_posted(qp->handle);
ring:
	{
		struct {
			struct ib_uverbs_ioctl_hdr hdr;
			struct ib_uverbs_attr attr[3];
		} cmd;
		uint32_t q = send ? SOFTHCA_DB_SQ : SOFTHCA_DB_RQ;
		unsigned int n = 0;

		memset(&cmd, 0, sizeof(cmd));
		cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_QP;
		cmd.attr[n].flags = UVERBS_ATTR_F_MANDATORY;
		cmd.attr[n++].data = qp->handle;
		cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_QUEUE;
		cmd.attr[n].flags = UVERBS_ATTR_F_MANDATORY;
		cmd.attr[n].len = sizeof(q);
		memcpy(&cmd.attr[n++].data, &q, sizeof(q));
		if (send) {
			cmd.attr[n].attr_id = SOFTHCA_IB_ATTR_DOORBELL_PRODUCER;
			cmd.attr[n].flags = UVERBS_ATTR_F_MANDATORY;
			cmd.attr[n].len = sizeof(prod);
			memcpy(&cmd.attr[n++].data, &prod, sizeof(prod));
		}
		cmd.hdr.length = sizeof(cmd.hdr) + n * sizeof(cmd.attr[0]);
		cmd.hdr.object_id = UVERBS_OBJECT_QP;
		cmd.hdr.method_id = SOFTHCA_IB_METHOD_QP_DOORBELL;
		cmd.hdr.num_attrs = n;
		cmd.hdr.driver_id = RDMA_DRIVER_UNKNOWN;
		err = ioctl(cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
		account(OP_DOORBELL, err, x,
			"(qp %u state %d, %s ring written into: %u slots from %#x, producer %#x)",
			qp->handle, qp->state, send ? "send" : "receive",
			nslots, cons, prod);
	}
}

/*
 * SOFTHCA_IB_METHOD_QP_DOORBELL as a raw ioctl, as the provider's
 * shca_doorbell() makes it, then garbled: any QP handle (live with or
 * without rings, freed, of another type, beyond 32 bits, negative), any
 * queue, producers equal to the consumer, ahead by up to the ring's slots
 * (old slots reposted: the QP is poisoned) or beyond; attributes missing,
 * repeated, unknown, reordered, of the wrong length (short, long, through
 * a pointer) or with reserved bits; a header with a wrong length,
 * reserved bits, driver id or method (POST_LOCAL and beyond included).
 */
static void op_doorbell(void)
{
	static const uint16_t unknown[] = {
		SOFTHCA_IB_ATTR_DOORBELL_PRODUCER + 1,
		SOFTHCA_IB_ATTR_DOORBELL_PRODUCER + 7, 0, 1, 5, 0xffff,
	};
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[8];
	} cmd;
	uint64_t wide[2] = { 0, 0 };
	const struct attr_spec *spec = NULL;
	int at[MAX_SPEC] = { -1, -1, -1, -1 }, e, err, may_post = 0, i;
	unsigned int n = 0, k, has = 0;
	uint32_t queue, prod = vt_rnd(), h;
	int64_t live = live_of(T_QP);
	char desc[160];
	size_t dl = 0;
	expect_t x;

	memset(&cmd, 0, sizeof(cmd));
	h = live >= 0 && vt_rndn(4) ? (uint32_t)live : any_handle(T_QP);
	queue = vt_rndn(8) ? vt_rndn(2) : vt_rndn(2) ? 2 + vt_rndn(4) :
		(uint32_t)vt_rnd();
	i = qp_slot(h);
	if (i >= 0 && qpr[i].sq.addr && qpr[i].sq.slots && vt_rndn(4)) {
		uint32_t c = ring_consumer(&qpr[i].sq);

		switch (vt_rndn(5)) {
		case 0: case 1: prod = c; break;
		case 2: prod = c + 1 + vt_rndn(qpr[i].sq.slots); break;
		case 3: prod = c + qpr[i].sq.slots + 1 + vt_rndn(4); break;
		default: prod = c - 1 - vt_rndn(4); break;
		}
	}
	if (vt_rndn(24))
		has |= 1U << 0;
	if (vt_rndn(24))
		has |= 1U << 1;
	if (queue == SOFTHCA_DB_SQ ? vt_rndn(12) : !vt_rndn(3))
		has |= 1U << 2;
	for (k = 0; k < 3; k++) {
		struct ib_uverbs_attr *a = &cmd.attr[n];
		uint32_t v = k == 1 ? queue : prod;

		if (!(has & 1U << k))
			continue;
		a->attr_id = db_spec[k].id;
		a->flags = UVERBS_ATTR_F_MANDATORY;
		if (k == 0) {
			a->data = vt_rndn(8) ? h : rnd_attr_handle(T_QP);
			if (!vt_rndn(48)) {
				if (vt_rndn(2))
					a->len = 1 + vt_rndn(64);
				else
					a->attr_data.reserved = 1 + vt_rndn(0xffff);
			}
		} else {
			a->len = sizeof(v);
			memcpy(&a->data, &v, sizeof(v));
			switch (vt_rndn(32)) {
			case 0:		/* short or long, inline */
				a->len = vt_rndn(9);
				break;
			case 1:		/* long, through a pointer */
				wide[0] = v;
				a->len = sizeof(wide);
				a->data = (uintptr_t)wide;
				break;
			case 2:
				a->attr_data.reserved = 1 + vt_rndn(0xffff);
				break;
			case 3:
				a->flags = 0;
				break;
			default:
				break;
			}
		}
		n++;
	}
	/* in another order, repeated, unknown */
	if (n > 1 && !vt_rndn(8))
		for (k = n - 1; k > 0; k--) {
			struct ib_uverbs_attr t = cmd.attr[k];
			unsigned int j = vt_rndn(k + 1);

			cmd.attr[k] = cmd.attr[j];
			cmd.attr[j] = t;
		}
	if (n && !vt_rndn(24)) {
		cmd.attr[n] = cmd.attr[vt_rndn(n)];
		n++;
	}
	if (!vt_rndn(16)) {
		k = vt_rndn(n + 1);
		memmove(&cmd.attr[k + 1], &cmd.attr[k],
			(n - k) * sizeof(cmd.attr[0]));
		memset(&cmd.attr[k], 0, sizeof(cmd.attr[k]));
		cmd.attr[k].attr_id =
			unknown[vt_rndn(sizeof(unknown) / sizeof(unknown[0]))];
		cmd.attr[k].flags = vt_rndn(2) ? UVERBS_ATTR_F_MANDATORY : 0;
		cmd.attr[k].data = vt_rnd();
		n++;
	}
	cmd.hdr.length = sizeof(cmd.hdr) + n * sizeof(cmd.attr[0]);
	cmd.hdr.object_id = UVERBS_OBJECT_QP;
	cmd.hdr.method_id = SOFTHCA_IB_METHOD_QP_DOORBELL;
	cmd.hdr.num_attrs = n;
	cmd.hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	switch (vt_rndn(48)) {
	case 0:
		cmd.hdr.length = vt_rndn(2) ? cmd.hdr.length + sizeof(cmd.attr[0]) :
				 cmd.hdr.length - sizeof(cmd.attr[0]);
		break;
	case 1:
		cmd.hdr.reserved1 = 1ULL << vt_rndn(64);
		break;
	case 2:
		cmd.hdr.reserved2 = 1 + vt_rndn(0xffffffff);
		break;
	case 3:
		cmd.hdr.driver_id = 1 + vt_rndn(32);
		break;
	case 4:
		cmd.hdr.method_id += 1 + vt_rndn(3);
		break;
	default:
		break;
	}

	e = ioctl_core_err(&cmd.hdr, cmd.attr, 0, &spec, at);
	if (e)
		x = X(e);
	else if (spec == db_spec)
		x = db_handler_expect(cmd.attr[at[0]].data,
				      attr_u32(&cmd.attr[at[1]]), at[2] >= 0,
				      at[2] >= 0 ? attr_u32(&cmd.attr[at[2]]) : 0,
				      &may_post);
	else
		x = 0;		/* POST_LOCAL needs its WR: never here */
	err = ioctl(cmd_fd, RDMA_VERBS_IOCTL, &cmd) ? errno : 0;
	for (k = 0; k < n && dl < sizeof(desc); k++) {
		const struct ib_uverbs_attr *a = &cmd.attr[k];
		uint16_t id = a->attr_id;

		dl += snprintf(desc + dl, sizeof(desc) - dl, "%s%s=%#llx/%u",
			       k ? " " : "",
			       id == SOFTHCA_IB_ATTR_DOORBELL_QP ? "QP" :
			       id == SOFTHCA_IB_ATTR_DOORBELL_QUEUE ? "QUEUE" :
			       id == SOFTHCA_IB_ATTR_DOORBELL_PRODUCER ? "PRODUCER" :
			       "?", (unsigned long long)a->data, a->len);
	}
	account(OP_DOORBELL, err, x,
		"(hdr length %u method %#x driver %u reserved %#llx/%#x; attrs %s)",
		cmd.hdr.length, cmd.hdr.method_id, cmd.hdr.driver_id,
		(unsigned long long)cmd.hdr.reserved1, cmd.hdr.reserved2,
		n ? desc : "none");
	if (may_post)
		db_posted(cmd.attr[at[0]].data);
}

static const struct {
	void (*fn)(void);
	unsigned int weight;
} ops[] = {
	{ op_pd_alloc, 4 }, { op_pd_alloc_raw, 3 }, { op_pd_dealloc, 2 },
	{ op_pd_dealloc_raw, 4 }, { op_reg, 12 }, { op_reg_raw, 13 },
	{ op_rereg, 6 }, { op_rereg_raw, 8 }, { op_dereg, 6 },
	{ op_dereg_raw, 7 }, { op_hdr_raw, 3 }, { op_dm_alloc, 3 },
	{ op_dm_free, 2 }, { op_dm_copy, 4 }, { op_dm_mr, 4 },
	{ op_dm_mmap, 3 }, { op_dmabuf_mr, 5 }, { op_vm, 3 },
	{ op_cq_create, 1 }, { op_cq_destroy, 1 }, { op_poll, 2 },
	{ op_poll_raw, 1 }, { op_qp_create, 1 }, { op_qp_modify, 2 },
	{ op_qp_destroy, 1 }, { op_post_send, 2 }, { op_post_recv, 2 },
	{ op_srq_create, 1 }, { op_srq_destroy, 1 }, { op_srq_modify, 1 },
	{ op_srq_query, 1 }, { op_srq_post, 2 }, { op_srq_create_raw, 1 },
	{ op_srq_modify_raw, 1 }, { op_srq_query_raw, 1 },
	{ op_srq_destroy_raw, 1 }, { op_srq_post_raw, 2 }, { op_ah_create, 1 },
	{ op_ah_destroy, 1 }, { op_ah_create_raw, 1 }, { op_ah_destroy_raw, 1 },
	{ op_ud_send, 3 }, { op_mw_alloc, 2 }, { op_mw_alloc_raw, 2 },
	{ op_mw_dealloc, 2 }, { op_mw_dealloc_raw, 2 }, { op_mw_bind, 5 },
	{ op_post_local, 5 }, { op_ring, 2 }, { op_doorbell, 3 },
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
	struct ib_uverbs_destroy_srq_resp dsrq_resp;
	struct ib_uverbs_destroy_srq dsrq = {};
	struct ib_uverbs_destroy_ah dah;
	struct ib_uverbs_dealloc_mw dmw;
	unsigned int i;
	int err;

	/* (the provider frees a QP or CQ it destroys: keep the handle) */
	for (i = 0; i < MAX_QP; i++) {
		uint32_t h;

		if (!qps[i])
			continue;
		h = qps[i]->handle;
		err = ibv_destroy_qp(qps[i]);
		account(OP_CLEANUP, err, XOK, "(destroy_qp %u%s)", h,
			qpr[i].poisoned ? ", rings written into" : "");
		if (!err) {
			kdel(h);
			qps[i] = NULL;
			qp_rings_gone(i);
		}
	}
	for (i = 0; i < MAXH; i++) {
		if (tab[i].type == T_SRQ) {
			dsrq.srq_handle = i;
			dsrq.response = (uintptr_t)&dsrq_resp;
			err = raw_cmd(IB_USER_VERBS_CMD_DESTROY_SRQ, &dsrq,
				      sizeof(dsrq), sizeof(dsrq_resp) / 4);
			account(OP_CLEANUP, err, XOK, "(raw DESTROY_SRQ %u)", i);
		} else if (tab[i].type == T_AH) {
			dah.ah_handle = i;
			err = raw_cmd(IB_USER_VERBS_CMD_DESTROY_AH, &dah,
				      sizeof(dah), 0);
			account(OP_CLEANUP, err, XOK, "(raw DESTROY_AH %u)", i);
		} else if (tab[i].type == T_MW) {
			/* no bind can execute any more: every MR is free after */
			dmw.mw_handle = i;
			err = raw_cmd(IB_USER_VERBS_CMD_DEALLOC_MW, &dmw,
				      sizeof(dmw), 0);
			account(OP_CLEANUP, err, XOK, "(raw DEALLOC_MW %u)", i);
		} else {
			continue;
		}
		if (!err)
			kdel(i);
	}
	for (i = 0; i < MAX_CQ; i++) {
		uint32_t h;

		if (!cqs[i])
			continue;
		h = cqs[i]->handle;
		err = ibv_destroy_cq(cqs[i]);
		account(OP_CLEANUP, err, XOK, "(destroy_cq %u)", h);
		if (!err)
			kdel(h);
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
		uint32_t h;

		if (!dms[i])
			continue;
		h = dm_handle(dms[i]);
		err = ibv_free_dm(dms[i]);
		account(OP_CLEANUP, err, XOK, "(free_dm %u)", h);
		if (!err)
			kdel(h);
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

/*
 * A PD with an MR over udbuf for UD payloads (among the PDs ibv_create_qp
 * picks from), and whether UC QPs exist: a UC QP, created and destroyed.
 */
static void setup_ud(void)
{
	struct ibv_qp_init_attr ia;
	struct ibv_cq *cq;
	struct ibv_qp *qp;

	ud_pd = ibv_alloc_pd(ctx);
	account(OP_PD_ALLOC, ud_pd ? 0 : errno, XOK, "(for UD)");
	if (!ud_pd)
		return;
	kset(ud_pd->handle, T_PD);
	pd_register(ud_pd);
	ud_mr = ibv_reg_mr(ud_pd, udbuf, UDBUF_LEN, IBV_ACCESS_LOCAL_WRITE);
	account(OP_REG, ud_mr ? 0 : errno, XOK, "(udbuf)");
	if (ud_mr) {
		mr_created(ud_mr->handle, ud_pd->handle, -1, IBV_ACCESS_LOCAL_WRITE);
		mr_pinned(ud_mr->handle, (uintptr_t)udbuf, UDBUF_LEN,
			  (uintptr_t)udbuf, 0);
	}
	cq = ibv_create_cq(ctx, 4, NULL, NULL, 0);
	if (!cq)
		return;
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_UC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	errno = 0;
	qp = ibv_create_qp(ud_pd, &ia);
	account(OP_QP_CREATE, qp ? 0 : errno, XOK | X(EOPNOTSUPP), "(UC probe)");
	if (qp) {
		uc_qps = 1;
		ibv_destroy_qp(qp);
	}
	ibv_destroy_cq(cq);
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/*
 * mode 0: clean up at the end; 1: just exit; 2: to be killed half way.
 * The run ends after @iters iterations or at @deadline (0: none), so a
 * slow or busy machine runs fewer iterations instead of failing on time;
 * "half way" is then half the time.
 */
static int child(const char *name, uint64_t seed, uint64_t iters, int mode,
		 int kill_fd, double deadline)
{
	double half = deadline ? (now_s() + deadline) / 2 : 0;
	unsigned int total = 0, i;
	bool asked = false;
	uint64_t pick;

	/* each child its own sequence, the same for the same seed */
	*vt_rng() = seed * 0x9E3779B97F4A7C15ULL + child_no + 1;
	if (!*vt_rng())
		*vt_rng() = 1;
	page = sysconf(_SC_PAGESIZE);
	setup_memory();
	ctx = vt_open(name);
	cmd_fd = ctx->cmd_fd;
	{
		struct ibv_query_device_ex_input in = { 0 };
		struct ibv_device_attr_ex ax;

		no_odp = getenv("FUZZ_NO_ODP") && atoi(getenv("FUZZ_NO_ODP"));
		/* as the provider reads it */
		rings_off = getenv("SOFTHCA_RINGS") &&
			    !strcmp(getenv("SOFTHCA_RINGS"), "0");
		dev_odp = !ibv_query_device_ex(ctx, &in, &ax) &&
			  (ax.odp_caps.general_caps & IBV_ODP_SUPPORT);
	}
	find_gid();
	setup_ud();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		total += ops[i].weight;

	for (iter = 0; iter < iters; iter++) {
		double t = deadline ? now_s() : 0;

		if (mode == 2 && !asked && kill_fd >= 0 &&
		    (iter == iters / 2 || (deadline && t >= half))) {
			asked = true;
			if (write(kill_fd, "k", 1) != 1)
				vt_info("[child %d] cannot ask to be killed", child_no);
		}
		if (mode != 2 && deadline && t >= deadline)
			break;
		pick = vt_rndn(total);
		for (i = 0; pick >= ops[i].weight; i++)
			pick -= ops[i].weight;
		/* keep room: when full, destroy instead of creating */
		if (count_type(T_MR) >= MAX_MR && vt_rndn(2))
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

/* The oracle follows 6.12's core; 6.1's ib_check_mr_access() differs. */
static void core_rules(void)
{
	struct utsname u;
	int major, minor;

	if (uname(&u) || sscanf(u.release, "%d.%d", &major, &minor) != 2)
		return;
	if (major < 6 || (major == 6 && minor < 2)) {
		ib_access_supp = A_HUGE | A_OPTIONAL | ((A_HUGE << 1) - 1);
		odp_errno = EINVAL;
	}
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	uint64_t iters = argc > 3 ? strtoull(argv[3], NULL, 0) : 2000;
	int procs = argc > 4 ? atoi(argv[4]) : 4;
	double secs = argc > 5 ? atof(argv[5]) : 0, deadline;
	uint64_t tot_n = 0, tot_unexp = 0, tot_iters = 0;
	long long pins0, pins1;
	int killfd[64], status, i, op, waited;
	struct timespec t0, t1;
	pid_t pids[64];
	struct stats *all;

	if (argc < 4 || procs < 1 || procs > 64 || !iters) {
		fprintf(stderr, "usage: %s DEV SEED ITERS [PROCS (1..64, default 4) [SECS (time budget, default none)]]\n",
			argv[0]);
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	core_rules();
	all = mmap(NULL, procs * sizeof(*all), PROT_READ | PROT_WRITE,
		   MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (all == MAP_FAILED) {
		vt_bad("mmap: %s", strerror(errno));
		return 2;
	}
	memset(all, 0, procs * sizeof(*all));
	pins0 = vt_foll_pins();
	vt_info("seed %llu, %llu iterations in each of %d processes (time budget %s%.0f s); pinned pages before: %lld",
		(unsigned long long)seed, (unsigned long long)iters, procs,
		secs > 0 ? "" : "none ", secs > 0 ? secs : 0.0, pins0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	deadline = secs > 0 ? now_s() + secs : 0;

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
			_exit(child(name, seed, iters, mode, fds[1], deadline));
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
	{
		static const char *const kind[NR_WCK] = { "binds", "LOCAL_INVs" };
		uint64_t wc[NR_WCK][NR_WCS] = {}, busy = 0, sure = 0, odp = 0;
		int s;

		for (i = 0; i < procs; i++) {
			busy += all[i].mr_busy;
			sure += all[i].mr_busy_sure;
			odp += all[i].odp_regs;
			for (op = 0; op < NR_WCK; op++)
				for (s = 0; s < NR_WCS; s++)
					wc[op][s] += all[i].wc[op][s];
		}
		for (op = 0; op < NR_WCK; op++)
			vt_info("%s of the fuzzer polled: %llu succeeded, %llu failed, %llu flushed",
				kind[op], (unsigned long long)wc[op][WC_OK],
				(unsigned long long)wc[op][WC_ERR],
				(unsigned long long)wc[op][WC_FLUSH]);
		vt_info("dereg_mr/rereg_mr refused with EBUSY (a window bound): %llu, %llu of them when the model knew a bind had succeeded",
			(unsigned long long)busy, (unsigned long long)sure);
		vt_info("on-demand paging MRs registered: %llu",
			(unsigned long long)odp);
	}
	vt_info("%llu iterations in %d processes, %llu calls, %llu unexpected results, %.1f s",
		(unsigned long long)tot_iters, procs, (unsigned long long)tot_n,
		(unsigned long long)tot_unexp,
		(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9);
	vt_check(tot_unexp == 0, "no unexpected result (%llu)", (unsigned long long)tot_unexp);
	/* a time budget cuts the run short on a slow host, not to nothing */
	vt_check(tot_iters >= (iters < 2000 ? iters : 2000) * procs / 2,
		 "enough iterations ran (%llu, at least %llu)",
		 (unsigned long long)tot_iters,
		 (unsigned long long)(iters < 2000 ? iters : 2000) * procs / 2);

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
