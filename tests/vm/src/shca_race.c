// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_race [DEV [SEED [SECS [THREADS]]]]: a time-boxed concurrent fuzzer
 * of the uverbs interface of one context (tests/vm/95-race.sh).
 *
 * uverbs takes only a shared lock on an object for most verbs (MODIFY_QP,
 * POST_SEND, MODIFY_SRQ, POST_SRQ_RECV, ATTACH_MCAST, the driver's
 * methods, ...): the driver sees them at the same time on one object.
 * THREADS threads (default 4) and one forked child work on the *same*
 * objects of one context at once, phase after phase, each phase with its
 * own objects (defaults: DEV softhca0, SEED 1, SECS 45 shared by the
 * phases: qp 32 %, the others 16-20 %):
 *
 *   qp     first (a third of the phase) the exact reproduction of the
 *          MODIFY_QP heap overflow: rounds of a fresh RC QP that every
 *          thread (and the child) modifies at once with
 *          IBV_QP_MAX_DEST_RD_ATOMIC alone, thread i asking for 128, 64,
 *          16 or 2 (i % 4); every other round the fresh QP is in INIT and
 *          every thread moves it to RTR at once with its own
 *          max_dest_rd_atomic (a transition that grows the responder
 *          resources: exactly one may succeed); then one RC, one UC
 *          (where the device has them) and one UD QP on one CQ, and every
 *          thread: ibv_modify_qp with random masks and values (states,
 *          max_dest_rd_atomic and max_rd_atomic 0..255, AV, path MTU,
 *          timeout, retry counts, PSNs, Q_Key, access flags, and the
 *          masks of real transitions), RESET -> RTS connections to itself,
 *          post_send, post_recv, poll_cq, query_qp, and destroy +
 *          recreate of the same QP;
 *   mr     one MR over one of two buffers, one type 1 window and one RC
 *          QP connected to itself: ibv_rereg_mr (translation, PD, access,
 *          into and out of on-demand paging where the device pages on
 *          demand), ibv_dereg_mr + ibv_reg_mr, ibv_bind_mw (and unbind),
 *          ibv_dealloc_mw + ibv_alloc_mw, ibv_advise_mr (only with ODP),
 *          RDMA WRITE and READ through the MR's and the window's keys;
 *   srq    one SRQ with an RC QP on it connected to itself:
 *          ibv_modify_srq (limits, resizing), ibv_query_srq,
 *          ibv_post_srq_recv, SENDs that consume its WQEs, ibv_destroy_srq
 *          while the QP uses it (EBUSY), destroy + recreate of both;
 *   mcast  two UD QPs: ibv_attach_mcast / ibv_detach_mcast of four
 *          groups (and of a unicast GID), datagrams to the groups,
 *          receives, destroy + recreate of a QP with its attachments;
 *   cq     one CQ with two RC QPs connected to themselves carrying SENDs,
 *          WRITEs with immediate and WRITEs: ibv_poll_cq and
 *          ibv_req_notify_cq against destroy of the CQ's last QP (and then
 *          of the CQ), and recreation.
 *
 * The forked child shares the context (the same uverbs file) and works
 * on the same objects with raw commands: write() commands through the
 * ioctl UVERBS_METHOD_INVOKE_WRITE (uverbs refuses a write() from
 * another process with EACCES: the file's credentials are not the
 * child's; the child tries one and says so), softhca's POST_LOCAL method
 * for binds; the parent publishes the objects' handles in shared memory.
 *
 * An object's userspace struct must not be freed under a thread that uses
 * it: a pthread rwlock per object, taken shared by the verbs and
 * exclusively by destroy (as the kernel's core does with its objects).
 * The verbs themselves are never serialised against each other.
 *
 * Every result must be a success or an errno a race can produce for that
 * verb (expect_of(), verb by verb); completions must
 * carry a valid status, a work request id of the phase and, when
 * successful, a valid opcode. No hang: a thread or the child stuck in a
 * verb for 30 s past the end of its phase fails the run (with the kernel
 * stacks of the stuck tasks). The kernel log is checked by the runner.
 * Afterwards everything is destroyed (each destroy must succeed) and the
 * system's pinned pages are back where they were.
 *
 * RACE_PHASES=mr,srq in the environment runs only the phases named, in
 * SECS shared in their proportions (to aim a reproduction at one phase).
 *
 * Exit status: 0 if there was no unexpected result, 1 otherwise, 2 if it
 * could not run.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/rdma_user_ioctl.h>

#include "vmtest.h"
/* the driver's uverbs ABI (SOFTHCA_IB_METHOD_QP_POST_LOCAL) */
#include "../../../include/uapi/rdma/softhca-abi.h"

#define MAX_THREADS	16
#define MAX_REPORTS	5	/* unexpected results printed per verb and phase */
#define HANG_SECS	30
#define BUF_LEN		(64 * 1024)
#define QDEPTH		32	/* send and receive WRs per QP */
#define CQ_DEPTH	4096	/* no overflow: a few QPs of QDEPTH each */
#define NGROUPS		4

/* ---- verbs, phases and what each may answer --------------------------- */

enum phase { PH_QP, PH_MR, PH_SRQ, PH_MCAST, PH_CQ, NR_PH };

static const char *const ph_names[NR_PH] = { "qp", "mr", "srq", "mcast", "cq" };
/* share of SECS per phase, in percent */
static const unsigned int ph_share[NR_PH] = { 32, 20, 16, 16, 16 };
/* the phases that run (RACE_PHASES), and the sum of their shares */
static bool ph_on[NR_PH] = { true, true, true, true, true };
static unsigned int share_sum = 100;

/*
 * RACE_PHASES=mr,cq: only these phases, sharing SECS in their
 * proportions (to aim a reproduction at one phase). 0, or -1 if a name
 * is unknown.
 */
static int select_phases(const char *list)
{
	char buf[128], *tok, *save = NULL;
	int p;

	if (!list || !*list)
		return 0;
	snprintf(buf, sizeof(buf), "%s", list);
	memset(ph_on, 0, sizeof(ph_on));
	share_sum = 0;
	for (tok = strtok_r(buf, ", ", &save); tok;
	     tok = strtok_r(NULL, ", ", &save)) {
		for (p = 0; p < NR_PH && strcmp(tok, ph_names[p]); p++)
			;
		if (p == NR_PH)
			return -1;
		if (!ph_on[p])
			share_sum += ph_share[p];
		ph_on[p] = true;
	}
	return share_sum ? 0 : -1;
}

enum verb {
	V_REPRO, V_GROW, V_MODIFY, V_CONNECT, V_QUERY_QP, V_POST_SEND, V_POST_RECV,
	V_POLL, V_NOTIFY, V_DESTROY_QP, V_CREATE_QP, V_REREG, V_DEREG,
	V_REG, V_BIND, V_DEALLOC_MW, V_ALLOC_MW, V_ADVISE, V_MODIFY_SRQ,
	V_QUERY_SRQ, V_POST_SRQ, V_DESTROY_SRQ, V_CREATE_SRQ, V_ATTACH,
	V_DETACH, V_DESTROY_CQ, V_CREATE_CQ,
	/* the child's raw commands */
	C_MODIFY, C_QUERY_QP, C_REREG, C_BIND, C_MODIFY_SRQ, C_QUERY_SRQ,
	C_POST_SRQ, C_ATTACH, C_DETACH, C_NOTIFY,
	V_CLEANUP, NR_V
};

static const char *const v_names[NR_V] = {
	"modify_qp (repro)", "modify_qp (INIT>RTR)", "modify_qp", "connect (modify)", "query_qp",
	"post_send", "post_recv", "poll_cq", "req_notify_cq", "destroy_qp",
	"create_qp", "rereg_mr", "dereg_mr", "reg_mr", "bind_mw",
	"dealloc_mw", "alloc_mw", "advise_mr", "modify_srq", "query_srq",
	"post_srq_recv", "destroy_srq", "create_srq", "attach_mcast",
	"detach_mcast", "destroy_cq", "create_cq",
	"child MODIFY_QP", "child QUERY_QP", "child REREG_MR",
	"child POST_LOCAL bind", "child MODIFY_SRQ", "child QUERY_SRQ",
	"child POST_SRQ_RECV", "child ATTACH_MCAST", "child DETACH_MCAST",
	"child REQ_NOTIFY_CQ", "cleanup",
};

/* set of acceptable outcomes: bit 0 = success, bit E = errno E (< 128) */
typedef unsigned __int128 expect_t;
#define XOK		((expect_t)1)
#define X(e)		((expect_t)1 << (e))
#define NERR		128

/*
 * What each verb may answer while the other threads and the child use the
 * same objects. A verb's object is never destroyed under it by this
 * process's threads (the rwlocks), so the kernel's own lookups of the
 * parent's verbs do not fail; the child has no such lock.
 */
static expect_t expect_of(enum verb v)
{
	switch (v) {
	case V_REPRO:
		/*
		 * A fresh QP in RESET: IB_QP_MAX_DEST_RD_ATOMIC alone is no
		 * transition (EINVAL), after the responder resources were
		 * sized (ENOMEM).
		 */
		return X(EINVAL) | X(ENOMEM);
	case V_GROW:
		/*
		 * INIT -> RTR of a fresh QP by every thread at once: the first
		 * wins, the others find RTR (EINVAL); ENOMEM for the
		 * resources. Exactly one success per round (repro_run()).
		 */
		return XOK | X(EINVAL) | X(ENOMEM);
	case V_MODIFY:
	case V_CONNECT:
		/*
		 * Any state the others left: a forbidden transition or
		 * value (EINVAL), attributes the device does not implement
		 * (EOPNOTSUPP: alternate path, SQD notification, capabilities),
		 * an empty GID table entry (ENODATA), the responder resources
		 * or the core's attribute copy (ENOMEM).
		 */
		return XOK | X(EINVAL) | X(EOPNOTSUPP) | X(ENODATA) | X(ENOMEM);
	case V_QUERY_QP:
	case V_QUERY_SRQ:
		return XOK | X(ENOMEM);
	case V_POST_SEND:
		/* RESET, INIT, RTR or the child's RESET (EINVAL); full (ENOMEM) */
		return XOK | X(EINVAL) | X(ENOMEM);
	case V_POST_RECV:
		return XOK | X(EINVAL) | X(ENOMEM);
	case V_POLL:
	case V_NOTIFY:
		return XOK;
	case V_DESTROY_QP:
		/*
		 * The child's command holds the QP (uverbs' lookup lock), or
		 * attached it to a group after this process detached them
		 * all (the core refuses to destroy a QP with attachments)
		 */
		return XOK | X(EBUSY);
	case V_DESTROY_CQ:
		/* the child's command holds it */
		return XOK | X(EBUSY);
	case V_CREATE_QP:
	case V_CREATE_SRQ:
	case V_CREATE_CQ:
	case V_REG:
	case V_ALLOC_MW:
		return XOK | X(ENOMEM);
	/*
	 * A rereg of translation makes a new MR: the core swaps its new
	 * uobject into the MR's handle, which names nothing (ENOENT) until
	 * the new one is committed. Every lookup of the MR at that moment,
	 * by a thread or the child, fails so.
	 */
	case V_REREG:
		/*
		 * Windows bound (softhca), the core's exclusive lookup of the
		 * MR while another rereg, a bind or the child holds it
		 * (EBUSY); the swap (ENOENT); the new uobject or MR (ENOMEM).
		 */
		return XOK | X(EBUSY) | X(ENOENT) | X(ENOMEM);
	case V_DEREG:
		/* windows bound, the child's command holds it (EBUSY); the swap */
		return XOK | X(EBUSY) | X(ENOENT);
	case V_BIND:
		/*
		 * The QP not in RTS (EINVAL) or full (ENOMEM); the MR held by
		 * a rereg (EBUSY) or swapped (ENOENT); its PD changed by a
		 * rereg: libibverbs' own check (EPERM).
		 */
		return XOK | X(EINVAL) | X(ENOMEM) | X(EBUSY) | X(ENOENT) |
		       X(EPERM);
	case V_DEALLOC_MW:
		return XOK | X(EBUSY);
	case V_ADVISE:
		/*
		 * softhca's rules after any rereg: a key gone (ENOENT), an MR
		 * not on demand (EINVAL), of the other PD (EACCES), without
		 * local write for PREFETCH_WRITE (EPERM), a range outside it
		 * (ERANGE), a fault that failed (EFAULT); ENOMEM.
		 */
		return XOK | X(ENOENT) | X(EINVAL) | X(EACCES) | X(EPERM) |
		       X(ERANGE) | X(EFAULT) | X(ENOMEM);
	case V_MODIFY_SRQ:
		/* a limit above max_wr (EINVAL); resizing (EOPNOTSUPP) */
		return XOK | X(EINVAL) | X(EOPNOTSUPP);
	case V_POST_SRQ:
		/* too many SGEs (EINVAL); full (ENOMEM) */
		return XOK | X(EINVAL) | X(ENOMEM);
	case V_DESTROY_SRQ:
		/* a QP on it, or the child's command holds it (EBUSY) */
		return XOK | X(EBUSY);
	case V_ATTACH:
		/* a unicast GID (EINVAL); the device's limits (ENOMEM) */
		return XOK | X(EINVAL) | X(ENOMEM);
	case V_DETACH:
		/* not attached (EINVAL) */
		return XOK | X(EINVAL);
	case C_MODIFY:
	case C_QUERY_QP:
	case C_REREG:
	case C_BIND:
	case C_MODIFY_SRQ:
	case C_QUERY_SRQ:
	case C_POST_SRQ:
	case C_ATTACH:
	case C_DETACH:
	case C_NOTIFY:
		/*
		 * The parent's rules for the same verb, and a handle the
		 * parent is destroying (EBUSY), destroyed (ENOENT, EINVAL:
		 * out of range) or gave to an object of its next round.
		 */
		return expect_of(v == C_MODIFY ? V_MODIFY :
				 v == C_QUERY_QP ? V_QUERY_QP :
				 v == C_REREG ? V_REREG :
				 v == C_BIND ? V_BIND :
				 v == C_MODIFY_SRQ ? V_MODIFY_SRQ :
				 v == C_QUERY_SRQ ? V_QUERY_SRQ :
				 v == C_POST_SRQ ? V_POST_SRQ :
				 v == C_ATTACH ? V_ATTACH :
				 v == C_DETACH ? V_DETACH : V_NOTIFY) |
		       X(EBUSY) | X(ENOENT) | X(EINVAL);
	case V_CLEANUP:
	default:
		return XOK;
	}
}

/* ---- statistics, shared with the child --------------------------------- */

struct vstat {
	uint64_t n, ok, unexp, err[NERR];
};

#define NR_WCS	(IBV_WC_GENERAL_ERR + 1)
#define NR_EVS	(IBV_EVENT_WQ_FATAL + 1)

struct shared {
	/*
	 * Phase control: the parent sets phase, then run to a token (the
	 * phase + 1); at the end run to 0 and stop to the token, and waits
	 * until the child, between two commands, acknowledges it in ack.
	 */
	int phase, run, stop, ack, quit;
	/* handles of the phase's objects (-1: none) */
	int64_t h_qp[4], h_srq, h_mr, h_mw, h_cq, h_pd;
	uint32_t mw_rkey;
	uint64_t buf_a, buf_b;		/* the parent's buffers (same in the child) */
	uint32_t mr_lkey;
	union ibv_gid gid;
	int gid_idx, mtu;
	/* results */
	struct vstat st[NR_PH][NR_V];
	uint64_t iters[NR_PH], child_iters[NR_PH], repro_rounds;
	uint64_t wc[NR_PH][NR_WCS];
	uint64_t events[NR_EVS];
	uint64_t reports[NR_PH];	/* of report()s outside account() */
	uint64_t unexp_total;
};

static struct shared *sh;

/* ---- random numbers, one generator per thread -------------------------- */

static __thread uint64_t rs = 1;

static void rseed(uint64_t seed, uint64_t salt)
{
	rs = seed * 0x9E3779B97F4A7C15ULL + salt * 0xBF58476D1CE4E5B9ULL + 1;
	if (!rs)
		rs = 1;
}

static uint64_t rnd(void)
{
	rs ^= rs >> 12;
	rs ^= rs << 25;
	rs ^= rs >> 27;
	return rs * 0x2545F4914F6CDD1DULL;
}

static uint64_t rndn(uint64_t n)
{
	return n ? rnd() % n : 0;
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

/* ---- accounting -------------------------------------------------------- */

static __thread int cur_phase;
static __thread const char *who = "main";

static void __attribute__((format(printf, 2, 3)))
report(uint64_t *count, const char *fmt, ...)
{
	char line[768];
	va_list ap;
	int n;

	__atomic_add_fetch(&sh->unexp_total, 1, __ATOMIC_RELAXED);
	if (__atomic_fetch_add(count, 1, __ATOMIC_RELAXED) >= MAX_REPORTS)
		return;
	n = snprintf(line, sizeof(line), "  FAIL - [%s, phase %s] ", who,
		     ph_names[cur_phase]);
	va_start(ap, fmt);
	vsnprintf(line + n, sizeof(line) - n, fmt, ap);
	va_end(ap);
	/* one write: lines of threads and the child do not interleave */
	strncat(line, "\n", sizeof(line) - strlen(line) - 1);
	fputs(line, stdout);
	fflush(stdout);
}

static const char *expect_str(expect_t x, char *buf, size_t size)
{
	size_t n = 0;
	int e;

	buf[0] = 0;
	for (e = 0; e < NERR && n < size; e++)
		if (x & X(e))
			n += snprintf(buf + n, size - n, "%s%s", n ? "|" : "",
				      e ? vt_errname(e) : "ok");
	return buf;
}

/* Count one result of @v; a result outside its set is reported. */
static int __attribute__((format(printf, 3, 4)))
account(enum verb v, int err, const char *fmt, ...)
{
	struct vstat *s = &sh->st[cur_phase][v];
	expect_t x = expect_of(v);
	char what[384], exp[160];
	va_list ap;

	__atomic_add_fetch(&s->n, 1, __ATOMIC_RELAXED);
	if (!err)
		__atomic_add_fetch(&s->ok, 1, __ATOMIC_RELAXED);
	else if (err > 0 && err < NERR)
		__atomic_add_fetch(&s->err[err], 1, __ATOMIC_RELAXED);
	if (err >= 0 && err < NERR && (x & X(err)))
		return 0;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	report(&s->unexp, "%s %s: got %s, expected %s", v_names[v], what,
	       err ? vt_errname(err) : "success", expect_str(x, exp, sizeof(exp)));
	return -1;
}

/* ---- the context and the objects of a phase --------------------------- */

static struct vt_dev dev;
static struct ibv_pd *pd2;		/* a second PD for rereg_mr */
static int dev_odp, have_uc;
static uint8_t *buf_a, *buf_b, *buf_q;	/* MR buffers, QP traffic buffer */
static struct ibv_mr *mr_q;		/* over buf_q, for QP traffic */
static pid_t child_pid = -1;
static volatile int async_stop;

/* an object whose struct a destroy frees: rwlock (writer preferred) */
struct slot {
	pthread_rwlock_t lock;
	void *obj;
	int idx;			/* h_qp[] index the child sees, or -1 */
	enum ibv_qp_type type;		/* QP */
	uint32_t psn;
	int broken;			/* an error completion: reconnect */
	uint32_t qkey;
};

static void slot_init(struct slot *s, int idx)
{
	pthread_rwlockattr_t a;

	memset(s, 0, sizeof(*s));
	pthread_rwlockattr_init(&a);
	pthread_rwlockattr_setkind_np(&a,
				      PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP);
	pthread_rwlock_init(&s->lock, &a);
	pthread_rwlockattr_destroy(&a);
	s->idx = idx;
}

static void rd(struct slot *s) { pthread_rwlock_rdlock(&s->lock); }
static void wr(struct slot *s) { pthread_rwlock_wrlock(&s->lock); }
static void un(struct slot *s) { pthread_rwlock_unlock(&s->lock); }

/* the phase's objects */
static struct slot q[4];		/* QPs (h_qp[0..3]) */
static struct slot s_cq, s_mr, s_mw, s_srq;
static struct ibv_ah *ah_self;		/* UD: to the device's own GID */
static struct ibv_ah *ah_group[NGROUPS];
static union ibv_gid groups[NGROUPS];
static int nq;				/* QPs in use in this phase */
static volatile int repro_end, repro_grow;
static int repro_wins;		/* INIT -> RTR that succeeded this round */
static struct ibv_qp *repro_qp;
static pthread_barrier_t bar;
static int nthreads;

/* wr_id: phase << 56 | slot << 48 | a tag << 40 | sequence */
enum { T_SEND = 1, T_RECV, T_BIND, T_SRQ };

static uint64_t wr_id(int slot, int tag)
{
	static uint64_t seq;

	return (uint64_t)(cur_phase + 1) << 56 | (uint64_t)slot << 48 |
	       (uint64_t)tag << 40 |
	       (__atomic_add_fetch(&seq, 1, __ATOMIC_RELAXED) & 0xffffffffffULL);
}

static void publish_qp(int i)
{
	struct ibv_qp *qp = q[i].obj;

	__atomic_store_n(&sh->h_qp[i], qp ? (int64_t)qp->handle : -1,
			 __ATOMIC_RELEASE);
}

static void publish(int64_t *h, int64_t v)
{
	__atomic_store_n(h, v, __ATOMIC_RELEASE);
}

static struct ibv_cq *make_cq(void)
{
	struct ibv_cq *cq;

	errno = 0;
	cq = ibv_create_cq(dev.ctx, CQ_DEPTH, NULL, NULL, 0);
	account(V_CREATE_CQ, cq ? 0 : errno, "(%d entries)", CQ_DEPTH);
	return cq;
}

/* A QP of @type on @cq (and @srq) into slot @i; NULL if refused. */
static struct ibv_qp *make_qp(int i, enum ibv_qp_type type, struct ibv_cq *cq,
			      struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = cq, .recv_cq = cq, .srq = srq, .qp_type = type,
		.cap = {
			.max_send_wr = QDEPTH, .max_recv_wr = QDEPTH,
			.max_send_sge = 2, .max_recv_sge = 2,
			.max_inline_data = 64,
		},
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp(dev.pd, &ia);
	account(V_CREATE_QP, qp ? 0 : errno, "(slot %d, type %d%s)", i, type,
		srq ? ", on the SRQ" : "");
	q[i].obj = qp;
	q[i].type = type;
	q[i].broken = 0;
	publish_qp(i);
	return qp;
}

static void detach_all(struct ibv_qp *qp, enum verb v)
{
	int g, err;

	for (g = 0; g < NGROUPS; g++) {
		err = ibv_detach_mcast(qp, &groups[g], 0);
		account(v, err == EINVAL && v == V_CLEANUP ? 0 : err,
			"(qp %u, group %d, before destroy)", qp->qp_num, g);
	}
}

/*
 * Destroy slot @i's QP, held exclusively; EBUSY (the child) is retried.
 * A user's destroy of a QP with multicast attachments is refused by the
 * core: in the mcast phase every group is detached first, each time.
 */
static void drop_qp(int i, enum verb v)
{
	struct ibv_qp *qp = q[i].obj;
	int err, tries = 0;

	if (!qp)
		return;
	publish(&sh->h_qp[i], -1);
	do {
		if (cur_phase == PH_MCAST)
			detach_all(qp, V_DETACH);
		err = ibv_destroy_qp(qp);
		account(v, err, "(slot %d, qp %u)", i, qp->qp_num);
		if (err == EBUSY)
			usleep(100);
	} while (err == EBUSY && ++tries < 1000);
	if (!err)
		q[i].obj = NULL;
	else
		publish_qp(i);
}

/* ---- QP transitions ---------------------------------------------------- */

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define QKEY	0x11111111u

/*
 * RESET -> INIT -> RTR -> RTS of @s's QP, connected to itself (RC, UC)
 * or ready for datagrams (UD); each step counted as V_CONNECT. Returns
 * 0 if all steps succeeded.
 */
static int connect_qp(struct slot *s)
{
	struct ibv_qp *qp = s->obj;
	struct ibv_qp_attr a;
	int err, mask;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RESET;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	account(V_CONNECT, err, "(qp %u to RESET)", qp->qp_num);

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.port_num = 1;
	mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;
	if (s->type == IBV_QPT_UD) {
		a.qkey = s->qkey = QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = s->type == IBV_QPT_RC ? ACC_ALL :
				    IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	err = ibv_modify_qp(qp, &a, mask);
	account(V_CONNECT, err, "(qp %u to INIT)", qp->qp_num);
	if (err)
		return err;

	s->psn = rnd() & 0xffffff;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (s->type != IBV_QPT_UD) {
		a.path_mtu = dev.mtu;
		a.dest_qp_num = qp->qp_num;
		a.rq_psn = s->psn;
		a.ah_attr.is_global = 1;
		a.ah_attr.grh.dgid = dev.gid;
		a.ah_attr.grh.sgid_index = dev.gid_idx;
		a.ah_attr.grh.hop_limit = 1;
		a.ah_attr.port_num = 1;
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (s->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 1 + rndn(32);
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;
		}
	}
	err = ibv_modify_qp(qp, &a, mask);
	account(V_CONNECT, err, "(qp %u to RTR)", qp->qp_num);
	if (err)
		return err;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = s->psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (s->type == IBV_QPT_RC) {
		a.timeout = 10;
		a.retry_cnt = 2;
		a.rnr_retry = 2;
		a.max_rd_atomic = 1 + rndn(32);
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	err = ibv_modify_qp(qp, &a, mask);
	account(V_CONNECT, err, "(qp %u to RTS)", qp->qp_num);
	if (!err)
		s->broken = 0;
	return err;
}

/* the masks of the IBTA's transitions (what ib_modify_qp_is_ok wants) */
static int transition_mask(enum ibv_qp_type t, enum ibv_qp_state to)
{
	switch (to) {
	case IBV_QPS_INIT:
		return IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT |
		       (t == IBV_QPT_UD ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS);
	case IBV_QPS_RTR:
		if (t == IBV_QPT_UD)
			return IBV_QP_STATE;
		return IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
		       IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
		       (t == IBV_QPT_RC ? IBV_QP_MAX_DEST_RD_ATOMIC |
					  IBV_QP_MIN_RNR_TIMER : 0);
	case IBV_QPS_RTS:
		return IBV_QP_STATE | IBV_QP_SQ_PSN |
		       (t == IBV_QPT_RC ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
					  IBV_QP_RNR_RETRY |
					  IBV_QP_MAX_QP_RD_ATOMIC : 0);
	default:
		return IBV_QP_STATE;
	}
}

/* max_dest_rd_atomic / max_rd_atomic: 0..255, a third each <= 16, <= 128, above */
static uint8_t rnd_rd_atom(void)
{
	switch (rndn(3)) {
	case 0:
		return rndn(17);
	case 1:
		return 17 + rndn(112);
	default:
		return rndn(256);
	}
}

/*
 * Random attributes for a QP of type @t numbered @qpn: half the time the
 * mask of a real transition (the values mostly valid), else random mask
 * bits up to IBV_QP_DEST_QPN. Returns the mask.
 */
static int rnd_qp_attr(struct ibv_qp_attr *a, enum ibv_qp_type t, uint32_t qpn)
{
	int mask;

	memset(a, 0, sizeof(*a));
	a->qp_state = rndn(8) ? IBV_QPS_INIT + rndn(3) : rndn(8);
	if (rndn(2)) {
		mask = transition_mask(t, a->qp_state);
		if (!rndn(4))
			mask |= 1 << rndn(21);
	} else {
		mask = (int)(rnd() & ((IBV_QP_DEST_QPN << 1) - 1));
	}
	a->cur_qp_state = rndn(7);
	a->en_sqd_async_notify = rndn(2);
	a->qp_access_flags = rndn(4) ? ACC_ALL : rnd() & 0xff;
	a->pkey_index = rndn(8) ? 0 : rndn(4);
	a->port_num = rndn(16) ? 1 : rndn(3);
	a->qkey = rnd() & 0x7fffffff;
	a->path_mtu = rndn(4) ? dev.mtu : rndn(8);
	a->timeout = rndn(8) ? 8 + rndn(8) : rndn(41);
	a->retry_cnt = rndn(10);
	a->rnr_retry = rndn(10);
	a->min_rnr_timer = rndn(41);
	/* 24 bits: the core masks wider ones with a warning each, unlimited */
	a->rq_psn = rnd() & 0xffffff;
	a->sq_psn = rnd() & 0xffffff;
	a->max_rd_atomic = rnd_rd_atom();
	a->max_dest_rd_atomic = rnd_rd_atom();
	a->dest_qp_num = rndn(4) ? qpn : rnd() & (rndn(4) ? 0xffffff : 0xffffffff);
	a->path_mig_state = rndn(3);
	a->cap.max_send_wr = rndn(64);
	a->ah_attr.is_global = rndn(16) != 0;
	a->ah_attr.port_num = rndn(16) ? 1 : rndn(3);
	a->ah_attr.sl = rndn(16);
	a->ah_attr.grh.dgid = dev.gid;
	if (!rndn(16))
		a->ah_attr.grh.dgid = groups[rndn(NGROUPS)];
	a->ah_attr.grh.sgid_index = rndn(8) ? (uint64_t)dev.gid_idx :
				    rndn(dev.gid_idx + 4);
	a->ah_attr.grh.hop_limit = rndn(4) ? 1 : rndn(256);
	a->ah_attr.grh.traffic_class = rndn(4) ? 0 : rndn(256);
	a->ah_attr.grh.flow_label = rndn(4) ? 0 : rnd() & 0xfffff;
	a->alt_port_num = 1;
	a->alt_ah_attr = a->ah_attr;
	return mask;
}

/* ---- traffic ----------------------------------------------------------- */

static const enum ibv_wc_opcode wc_ops[] = {
	IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_READ, IBV_WC_COMP_SWAP,
	IBV_WC_FETCH_ADD, IBV_WC_BIND_MW, IBV_WC_LOCAL_INV, IBV_WC_RECV,
	IBV_WC_RECV_RDMA_WITH_IMM,
};

/* Poll @cq (held shared by the caller, or never destroyed) and check. */
static int poll_cq(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	int n, i, k, total = 0;

	do {
		n = ibv_poll_cq(cq, 16, wc);
		account(V_POLL, n < 0 ? EIO : 0, "(returned %d)", n);
		for (i = 0; i < n; i++) {
			const struct ibv_wc *w = &wc[i];
			int slot = (w->wr_id >> 48) & 0xff;
			int ok_op = 0;

			if (w->status < NR_WCS)
				__atomic_add_fetch(&sh->wc[cur_phase][w->status], 1,
						   __ATOMIC_RELAXED);
			if (w->status >= NR_WCS)
				report(&sh->reports[cur_phase], "completion with status %d (wr_id %#llx, qp %u)",
				       w->status, (unsigned long long)w->wr_id,
				       w->qp_num);
			if ((int)(w->wr_id >> 56) != cur_phase + 1 ||
			    !((w->wr_id >> 40) & 0xff) || ((w->wr_id >> 40) & 0xff) > T_SRQ)
				report(&sh->reports[cur_phase], "completion with a wr_id this phase never posted: %#llx (status %d, qp %u)",
				       (unsigned long long)w->wr_id, w->status,
				       w->qp_num);
			if (w->status == IBV_WC_SUCCESS) {
				for (k = 0; k < (int)(sizeof(wc_ops) / sizeof(wc_ops[0])); k++)
					ok_op |= w->opcode == wc_ops[k];
				if (!ok_op)
					report(&sh->reports[cur_phase], "successful completion with opcode %d (wr_id %#llx)",
					       w->opcode, (unsigned long long)w->wr_id);
			} else if (w->status != IBV_WC_WR_FLUSH_ERR && slot < 4) {
				__atomic_store_n(&q[slot].broken, 1, __ATOMIC_RELAXED);
			}
		}
		total += n > 0 ? n : 0;
	} while (n == 16 && total < 256);
	return total;
}

/*
 * Post 1-2 requests on slot @i's QP (held shared) to itself: RC WRITE,
 * WRITE with immediate, SEND, READ; UC the same but READ; UD SENDs.
 * @rkey/@raddr: the remote key and address to use (0: the QP buffer's MR).
 */
static void post_traffic(int i, uint32_t lkey, uint64_t laddr, uint32_t rkey,
			 uint64_t raddr, uint32_t rlen)
{
	struct ibv_qp *qp = q[i].obj;
	struct ibv_send_wr w[2], *bad = NULL;
	struct ibv_sge sg[2];
	unsigned int n = 1 + rndn(2), k;
	int err;

	if (!rkey) {
		rkey = mr_q->rkey;
		raddr = (uintptr_t)buf_q + BUF_LEN / 2;
		rlen = BUF_LEN / 2;
	}
	if (!lkey) {
		lkey = mr_q->lkey;
		laddr = (uintptr_t)buf_q;
	}
	memset(w, 0, sizeof(w));
	for (k = 0; k < n; k++) {
		uint32_t len = 1 + rndn(256);

		sg[k].addr = laddr + rndn(4096 - 256);
		sg[k].length = len;
		sg[k].lkey = lkey;
		w[k].wr_id = wr_id(i, T_SEND);
		w[k].sg_list = &sg[k];
		w[k].num_sge = 1;
		w[k].send_flags = IBV_SEND_SIGNALED;
		if (qp->qp_type == IBV_QPT_UD) {
			int g = rndn(NGROUPS + 2);

			w[k].opcode = IBV_WR_SEND;
			w[k].wr.ud.ah = g < NGROUPS && ah_group[g] ? ah_group[g] :
					ah_self;
			w[k].wr.ud.remote_qpn = g < NGROUPS && ah_group[g] ?
						0xffffff : qp->qp_num;
			w[k].wr.ud.remote_qkey = QKEY;
			if (!w[k].wr.ud.ah)
				return;
		} else {
			static const enum ibv_wr_opcode ops[] = {
				IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM,
				IBV_WR_SEND, IBV_WR_RDMA_READ,
			};

			w[k].opcode = ops[rndn(qp->qp_type == IBV_QPT_RC ? 4 : 3)];
			w[k].wr.rdma.rkey = rkey;
			w[k].wr.rdma.remote_addr = raddr + rndn(rlen > len ? rlen - len : 1);
			w[k].imm_data = rnd();
		}
		if (k)
			w[k - 1].next = &w[k];
	}
	err = ibv_post_send(qp, w, &bad);
	account(V_POST_SEND, err, "(slot %d, qp %u type %d, %u WRs, first opcode %d)",
		i, qp->qp_num, qp->qp_type, n, w[0].opcode);
}

static void post_recvs(int i)
{
	struct ibv_qp *qp = q[i].obj;
	struct ibv_recv_wr w[2], *bad = NULL;
	struct ibv_sge sg[2];
	unsigned int n = 1 + rndn(2), k;
	int err;

	memset(w, 0, sizeof(w));
	for (k = 0; k < n; k++) {
		sg[k].addr = (uintptr_t)buf_q + BUF_LEN / 2 + k * 4096;
		sg[k].length = 4096;
		sg[k].lkey = mr_q->lkey;
		w[k].wr_id = wr_id(i, T_RECV);
		w[k].sg_list = &sg[k];
		w[k].num_sge = 1;
		if (k)
			w[k - 1].next = &w[k];
	}
	err = ibv_post_recv(qp, w, &bad);
	account(V_POST_RECV, err, "(slot %d, qp %u, %u WRs)", i, qp->qp_num, n);
}

/* slot @i's QP in error after a completion, or not in RTS: reconnect */
static void maybe_recover(int i)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	int err;

	if (!q[i].obj)
		return;
	if (!__atomic_load_n(&q[i].broken, __ATOMIC_RELAXED)) {
		err = ibv_query_qp(q[i].obj, &a, IBV_QP_STATE, &init);
		account(V_QUERY_QP, err, "(slot %d)", i);
		if (err || a.qp_state == IBV_QPS_RTS)
			return;
	}
	connect_qp(&q[i]);
}

/* ---- the raw commands of the child ------------------------------------ */

static int cmd_fd;

/*
 * A write() command through the ioctl interface (UVERBS_METHOD_INVOKE_WRITE):
 * @req without its header, @resp the response (or NULL). 0 or an errno.
 */
static int invoke_write(uint32_t cmd, const void *req, size_t req_len,
			void *resp, size_t resp_len)
{
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[3];
	} c;
	uint16_t n = 0;

	memset(&c, 0, sizeof(c));
	c.attr[n].attr_id = UVERBS_ATTR_WRITE_CMD;
	c.attr[n].flags = UVERBS_ATTR_F_MANDATORY;
	c.attr[n].len = sizeof(uint64_t);
	c.attr[n++].data = cmd;
	c.attr[n].attr_id = UVERBS_ATTR_CORE_IN;
	c.attr[n].flags = UVERBS_ATTR_F_MANDATORY;
	c.attr[n].len = req_len;
	/* up to 8 bytes travel in the attribute itself, not behind a pointer */
	if (req_len <= sizeof(c.attr[n].data))
		memcpy(&c.attr[n++].data, req, req_len);
	else
		c.attr[n++].data = (uintptr_t)req;
	if (resp_len) {
		c.attr[n].attr_id = UVERBS_ATTR_CORE_OUT;
		c.attr[n].flags = UVERBS_ATTR_F_MANDATORY;
		c.attr[n].len = resp_len;
		c.attr[n++].data = (uintptr_t)resp;
	}
	c.hdr.length = sizeof(c.hdr) + n * sizeof(c.attr[0]);
	c.hdr.object_id = UVERBS_OBJECT_DEVICE;
	c.hdr.method_id = UVERBS_METHOD_INVOKE_WRITE;
	c.hdr.num_attrs = n;
	c.hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	return ioctl(cmd_fd, RDMA_VERBS_IOCTL, &c) ? errno : 0;
}

static int64_t pick_qp_handle(void)
{
	int i;

	for (i = 0; i < 4; i++) {
		int64_t h = __atomic_load_n(&sh->h_qp[rndn(4)], __ATOMIC_ACQUIRE);

		if (h >= 0)
			return h;
	}
	return -1;
}

static void child_modify(int64_t h, int repro)
{
	struct ib_uverbs_modify_qp c;
	struct ibv_qp_attr a;
	int mask, err;

	memset(&c, 0, sizeof(c));
	if (repro) {
		static const uint8_t v[] = { 128, 64, 16, 2 };

		mask = IBV_QP_MAX_DEST_RD_ATOMIC;
		memset(&a, 0, sizeof(a));
		a.max_dest_rd_atomic = v[rndn(4)];
	} else {
		mask = rnd_qp_attr(&a, rndn(3) ? IBV_QPT_RC : IBV_QPT_UD,
				   rnd() & 0xffffff);
	}
	memcpy(c.dest.dgid, a.ah_attr.grh.dgid.raw, 16);
	c.dest.flow_label = a.ah_attr.grh.flow_label;
	c.dest.sgid_index = a.ah_attr.grh.sgid_index;
	c.dest.hop_limit = a.ah_attr.grh.hop_limit;
	c.dest.traffic_class = a.ah_attr.grh.traffic_class;
	c.dest.sl = a.ah_attr.sl;
	c.dest.is_global = a.ah_attr.is_global;
	c.dest.port_num = a.ah_attr.port_num;
	c.alt_dest = c.dest;
	c.qp_handle = h;
	c.attr_mask = mask;
	c.qkey = a.qkey;
	c.rq_psn = a.rq_psn;
	c.sq_psn = a.sq_psn;
	c.dest_qp_num = a.dest_qp_num;
	c.qp_access_flags = a.qp_access_flags;
	c.pkey_index = a.pkey_index;
	c.qp_state = a.qp_state;
	c.cur_qp_state = a.cur_qp_state;
	c.path_mtu = a.path_mtu;
	c.path_mig_state = a.path_mig_state;
	c.en_sqd_async_notify = a.en_sqd_async_notify;
	c.max_rd_atomic = a.max_rd_atomic;
	c.max_dest_rd_atomic = a.max_dest_rd_atomic;
	c.min_rnr_timer = a.min_rnr_timer;
	c.port_num = a.port_num;
	c.timeout = a.timeout;
	c.retry_cnt = a.retry_cnt;
	c.rnr_retry = a.rnr_retry;
	c.alt_port_num = a.alt_port_num;
	err = invoke_write(IB_USER_VERBS_CMD_MODIFY_QP, &c, sizeof(c), NULL, 0);
	account(C_MODIFY, err, "(handle %lld, mask %#x, state %d, max_dest_rd_atomic %u%s)",
		(long long)h, mask, a.qp_state, a.max_dest_rd_atomic,
		repro ? ", repro" : "");
}

static void child_query_qp(int64_t h)
{
	struct ib_uverbs_query_qp_resp resp;
	struct ib_uverbs_query_qp c = {
		.response = (uintptr_t)&resp,
		.qp_handle = h,
		.attr_mask = rnd() & ((IBV_QP_DEST_QPN << 1) - 1),
	};
	int err;

	err = invoke_write(IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c), &resp,
			   sizeof(resp));
	if (!err && (resp.qp_state > IBV_QPS_ERR ||
		     resp.max_dest_rd_atomic > 128 || resp.max_rd_atomic > 128))
		err = EPROTO;
	account(C_QUERY_QP, err, "(handle %lld: state %u, rd_atomic %u/%u)",
		(long long)h, resp.qp_state, resp.max_rd_atomic,
		resp.max_dest_rd_atomic);
}

static uint32_t rnd_mr_access(void)
{
	uint32_t a = IBV_ACCESS_LOCAL_WRITE;

	if (rndn(4))
		a |= IBV_ACCESS_REMOTE_WRITE;
	if (rndn(4))
		a |= IBV_ACCESS_REMOTE_READ;
	if (rndn(2))
		a |= IBV_ACCESS_REMOTE_ATOMIC;
	if (rndn(4))
		a |= IBV_ACCESS_MW_BIND;
	if (!rndn(8))
		a &= ~(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_ATOMIC);
	if (dev_odp && !rndn(4))
		a |= IBV_ACCESS_ON_DEMAND;
	return a;
}

/* a range of buf_a or buf_b for a rereg of translation */
static void rnd_range(uint64_t *addr, uint64_t *len)
{
	uint64_t base = rndn(2) ? sh->buf_a : sh->buf_b;

	if (rndn(2)) {
		*addr = base;
		*len = BUF_LEN;
	} else {
		*addr = base + rndn(BUF_LEN / 4096 / 2) * 4096;
		*len = BUF_LEN / 2;
	}
}

static int child_rereg(void)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ib_uverbs_rereg_mr c;
	int64_t h = __atomic_load_n(&sh->h_mr, __ATOMIC_ACQUIRE);
	uint64_t addr, len;
	int err;

	if (h < 0)
		return 0;
	memset(&c, 0, sizeof(c));
	c.response = (uintptr_t)&resp;
	c.mr_handle = h;
	c.flags = 1 + rndn(7);
	rnd_range(&addr, &len);
	c.start = addr;
	c.length = len;
	c.hca_va = addr;
	c.pd_handle = sh->h_pd;
	c.access_flags = rnd_mr_access();
	err = invoke_write(IB_USER_VERBS_CMD_REREG_MR, &c, sizeof(c), &resp,
			   sizeof(resp));
	account(C_REREG, err, "(handle %lld, flags %#x, access %#x)",
		(long long)h, c.flags, c.access_flags);
	return 1;
}

static int child_bind(void)
{
	int64_t qh = __atomic_load_n(&sh->h_qp[0], __ATOMIC_ACQUIRE);
	int64_t mw = __atomic_load_n(&sh->h_mw, __ATOMIC_ACQUIRE);
	int64_t mr = __atomic_load_n(&sh->h_mr, __ATOMIC_ACQUIRE);
	struct softhca_local_wr lwr;
	struct {
		struct ib_uverbs_ioctl_hdr hdr;
		struct ib_uverbs_attr attr[4];
	} c;
	uint16_t n = 0;
	int err;

	if (qh < 0 || mw < 0 || mr < 0)
		return 0;
	memset(&lwr, 0, sizeof(lwr));
	lwr.wr_id = wr_id(0, T_BIND);
	lwr.opcode = SOFTHCA_LOCAL_BIND_MW;
	lwr.send_flags = IBV_SEND_SIGNALED;
	lwr.key = ibv_inc_rkey(__atomic_load_n(&sh->mw_rkey, __ATOMIC_RELAXED));
	lwr.addr = sh->buf_a + rndn(4096);
	lwr.length = rndn(8) ? 1 + rndn(8192) : 0;
	lwr.access = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	memset(&c, 0, sizeof(c));
	c.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_QP;
	c.attr[n++].data = qh;
	c.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_WR;
	c.attr[n].len = sizeof(lwr);
	c.attr[n++].data = (uintptr_t)&lwr;
	c.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_MW;
	c.attr[n++].data = mw;
	if (lwr.length) {
		c.attr[n].attr_id = SOFTHCA_IB_ATTR_POST_LOCAL_MR;
		c.attr[n++].data = mr;
	}
	for (uint16_t k = 0; k < n; k++)
		c.attr[k].flags = UVERBS_ATTR_F_MANDATORY;
	c.hdr.length = sizeof(c.hdr) + n * sizeof(c.attr[0]);
	c.hdr.object_id = UVERBS_OBJECT_QP;
	c.hdr.method_id = SOFTHCA_IB_METHOD_QP_POST_LOCAL;
	c.hdr.num_attrs = n;
	c.hdr.driver_id = RDMA_DRIVER_UNKNOWN;
	err = ioctl(cmd_fd, RDMA_VERBS_IOCTL, &c) ? errno : 0;
	account(C_BIND, err, "(qp %lld, mw %lld, mr %lld, length %llu)",
		(long long)qh, (long long)mw, (long long)mr,
		(unsigned long long)lwr.length);
	return 1;
}

static int child_srq(void)
{
	int64_t h = __atomic_load_n(&sh->h_srq, __ATOMIC_ACQUIRE);
	int err;

	if (h < 0)
		return 0;
	switch (rndn(3)) {
	case 0: {
		struct ib_uverbs_modify_srq c = {
			.srq_handle = h,
			.attr_mask = rndn(8) ? IBV_SRQ_LIMIT : 1 + rndn(3),
			.max_wr = rndn(256),
			.srq_limit = rndn(2 * QDEPTH * 2),
		};

		err = invoke_write(IB_USER_VERBS_CMD_MODIFY_SRQ, &c, sizeof(c),
				   NULL, 0);
		account(C_MODIFY_SRQ, err, "(handle %lld, mask %#x, limit %u)",
			(long long)h, c.attr_mask, c.srq_limit);
		break;
	}
	case 1: {
		struct ib_uverbs_query_srq_resp resp;
		struct ib_uverbs_query_srq c = {
			.response = (uintptr_t)&resp,
			.srq_handle = h,
		};

		err = invoke_write(IB_USER_VERBS_CMD_QUERY_SRQ, &c, sizeof(c),
				   &resp, sizeof(resp));
		if (!err && resp.srq_limit > resp.max_wr)
			err = EPROTO;
		account(C_QUERY_SRQ, err, "(handle %lld: max_wr %u, limit %u)",
			(long long)h, resp.max_wr, resp.srq_limit);
		break;
	}
	default: {
		struct {
			struct ib_uverbs_post_srq_recv c;
			struct ib_uverbs_recv_wr w;
			struct ib_uverbs_sge s[2];
		} r;
		struct ib_uverbs_post_srq_recv_resp resp;

		memset(&r, 0, sizeof(r));
		r.c.response = (uintptr_t)&resp;
		r.c.srq_handle = h;
		r.c.wr_count = 1;
		r.c.sge_count = 1 + !rndn(8);
		r.c.wqe_size = sizeof(r.w);
		r.w.wr_id = wr_id(0, T_SRQ);
		r.w.num_sge = r.c.sge_count;
		r.s[0].addr = sh->buf_a;
		r.s[0].length = 1024;
		r.s[0].lkey = sh->mr_lkey;
		r.s[1] = r.s[0];
		err = invoke_write(IB_USER_VERBS_CMD_POST_SRQ_RECV, &r,
				   sizeof(r.c) + sizeof(r.w) +
				   r.c.sge_count * sizeof(r.s[0]),
				   &resp, sizeof(resp));
		account(C_POST_SRQ, err, "(handle %lld, %u SGEs)", (long long)h,
			r.c.sge_count);
		break;
	}
	}
	return 1;
}

static int child_mcast(void)
{
	struct ib_uverbs_attach_mcast c;
	int64_t h = pick_qp_handle();
	int attach = rndn(2), err, g = rndn(NGROUPS + 1);

	if (h < 0)
		return 0;
	memset(&c, 0, sizeof(c));
	memcpy(c.gid, g < NGROUPS ? groups[g].raw : sh->gid.raw, 16);
	c.qp_handle = h;
	err = invoke_write(attach ? IB_USER_VERBS_CMD_ATTACH_MCAST :
				    IB_USER_VERBS_CMD_DETACH_MCAST,
			   &c, sizeof(c), NULL, 0);
	account(attach ? C_ATTACH : C_DETACH, err, "(handle %lld, group %d)",
		(long long)h, g);
	return 1;
}

static int child_notify(void)
{
	int64_t h = __atomic_load_n(&sh->h_cq, __ATOMIC_ACQUIRE);
	struct ib_uverbs_req_notify_cq c;
	int err;

	if (h < 0)
		return 0;
	c.cq_handle = h;
	c.solicited_only = rndn(2);
	err = invoke_write(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ, &c, sizeof(c),
			   NULL, 0);
	account(C_NOTIFY, err, "(handle %lld)", (long long)h);
	return 1;
}

/* One command of the phase; 0 if there was no object to send it to. */
static int child_step(void)
{
	int64_t h;

	switch (cur_phase) {
	case PH_QP:
		h = pick_qp_handle();
		if (h < 0)
			return 0;
		if (rndn(4))
			child_modify(h, __atomic_load_n(&sh->h_qp[3], __ATOMIC_RELAXED) == h);
		else
			child_query_qp(h);
		return 1;
	case PH_MR:
		return rndn(2) ? child_rereg() : child_bind();
	case PH_SRQ:
		return child_srq();
	case PH_MCAST:
		return child_mcast();
	case PH_CQ:
		if (rndn(2)) {
			h = pick_qp_handle();
			if (h < 0)
				return 0;
			child_query_qp(h);
			return 1;
		}
		return child_notify();
	}
	return 0;
}

/*
 * A write() command on the inherited file: uverbs refuses it (EACCES)
 * unless the caller has the credentials of the process that opened it.
 */
static void child_write_probe(void)
{
	struct ib_uverbs_query_qp_resp resp;
	struct ib_uverbs_query_qp c = {
		.response = (uintptr_t)&resp,
		.qp_handle = __atomic_load_n(&sh->h_qp[0], __ATOMIC_ACQUIRE),
	};
	int err;

	err = vt_raw_cmd(cmd_fd, IB_USER_VERBS_CMD_QUERY_QP, &c, sizeof(c),
			 sizeof(resp) / 4);
	vt_info("child: a write() of QUERY_QP on the parent's file: %s; through the ioctl: %s",
		vt_errname(err),
		vt_errname(invoke_write(IB_USER_VERBS_CMD_QUERY_QP, &c,
					sizeof(c), &resp, sizeof(resp))));
}

/* The child: follows the parent's phases until told to quit. */
static int child_main(uint64_t seed)
{
	int last = -1, stop;

	who = "child";
	while (!__atomic_load_n(&sh->quit, __ATOMIC_ACQUIRE)) {
		if (!__atomic_load_n(&sh->run, __ATOMIC_ACQUIRE)) {
			/* between two commands: the parent may tear down */
			stop = __atomic_load_n(&sh->stop, __ATOMIC_ACQUIRE);
			if (stop)
				__atomic_store_n(&sh->ack, stop, __ATOMIC_RELEASE);
			usleep(500);
			continue;
		}
		cur_phase = __atomic_load_n(&sh->phase, __ATOMIC_ACQUIRE);
		if (cur_phase != last) {
			rseed(seed, 1000 + cur_phase);
			if (last < 0)
				child_write_probe();
			last = cur_phase;
		}
		if (child_step())
			sh->child_iters[cur_phase]++;
		else
			usleep(50);	/* the objects are being remade */
	}
	fflush(stdout);
	return 0;
}

/* ---- async events ------------------------------------------------------ */

/*
 * Every async event is acknowledged at once: ibv_destroy_qp/srq/cq wait
 * until the events the kernel reported for the object were.
 */
static void *async_thread(void *arg)
{
	struct pollfd p = { .fd = dev.ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	/* ibv_get_async_event() then returns EAGAIN when there is none */
	fcntl(p.fd, F_SETFL, fcntl(p.fd, F_GETFL) | O_NONBLOCK);
	while (!async_stop) {
		if (poll(&p, 1, 50) <= 0)
			continue;
		while (!ibv_get_async_event(dev.ctx, &ev)) {
			if ((unsigned int)ev.event_type < NR_EVS)
				__atomic_add_fetch(&sh->events[ev.event_type], 1,
						   __ATOMIC_RELAXED);
			else
				report(&sh->reports[cur_phase], "async event of type %d", ev.event_type);
			ibv_ack_async_event(&ev);
		}
	}
	return NULL;
}

/* ---- phase qp ---------------------------------------------------------- */

static struct ibv_cq *qp_phase_cq;

static void qp_setup(void)
{
	qp_phase_cq = make_cq();
	if (!qp_phase_cq)
		return;
	publish(&sh->h_cq, qp_phase_cq->handle);
	nq = 0;
	make_qp(nq++, IBV_QPT_RC, qp_phase_cq, NULL);
	make_qp(nq++, IBV_QPT_UD, qp_phase_cq, NULL);
	if (have_uc)
		make_qp(nq++, IBV_QPT_UC, qp_phase_cq, NULL);
	for (int i = 0; i < nq; i++)
		if (q[i].obj)
			connect_qp(&q[i]);
}

/* the exact reproduction: rounds of a fresh RC QP, modified at once */
static void repro_worker(int tid)
{
	static const uint8_t vals[] = { 128, 64, 16, 2 };
	struct ibv_qp_attr a;
	int k, err;

	for (;;) {
		pthread_barrier_wait(&bar);
		if (repro_end)
			return;
		for (k = 0; k < 8; k++) {
			memset(&a, 0, sizeof(a));
			a.max_dest_rd_atomic = vals[tid % 4];
			if (!repro_grow) {
				err = ibv_modify_qp(repro_qp, &a,
						    IBV_QP_MAX_DEST_RD_ATOMIC);
				account(V_REPRO, err, "(qp %u, max_dest_rd_atomic %u)",
					repro_qp->qp_num, a.max_dest_rd_atomic);
				continue;
			}
			a.qp_state = IBV_QPS_RTR;
			a.path_mtu = dev.mtu;
			a.dest_qp_num = repro_qp->qp_num;
			a.rq_psn = k;
			a.min_rnr_timer = 1;
			a.ah_attr.is_global = 1;
			a.ah_attr.grh.dgid = dev.gid;
			a.ah_attr.grh.sgid_index = dev.gid_idx;
			a.ah_attr.grh.hop_limit = 1;
			a.ah_attr.port_num = 1;
			err = ibv_modify_qp(repro_qp, &a,
					    transition_mask(IBV_QPT_RC, IBV_QPS_RTR));
			account(V_GROW, err, "(qp %u to RTR, max_dest_rd_atomic %u)",
				repro_qp->qp_num, a.max_dest_rd_atomic);
			if (!err)
				__atomic_add_fetch(&repro_wins, 1, __ATOMIC_RELAXED);
		}
		pthread_barrier_wait(&bar);
	}
}

/* the main thread's side of the reproduction, until @deadline */
static void repro_run(double deadline)
{
	struct ibv_qp_init_attr ia = {
		.send_cq = qp_phase_cq, .recv_cq = qp_phase_cq,
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	int err, tries;

	for (;;) {
		repro_qp = NULL;
		if (now_s() < deadline) {
			errno = 0;
			repro_qp = ibv_create_qp(dev.pd, &ia);
			account(V_CREATE_QP, repro_qp ? 0 : errno, "(repro)");
		}
		repro_end = !repro_qp;
		repro_grow = sh->repro_rounds & 1;
		repro_wins = 0;
		if (repro_qp && repro_grow) {
			struct ibv_qp_attr a = {
				.qp_state = IBV_QPS_INIT, .port_num = 1,
				.qp_access_flags = ACC_ALL,
			};

			err = ibv_modify_qp(repro_qp, &a,
					    transition_mask(IBV_QPT_RC, IBV_QPS_INIT));
			account(V_CONNECT, err, "(repro qp %u to INIT)",
				repro_qp->qp_num);
		}
		if (repro_qp)
			publish(&sh->h_qp[3], repro_qp->handle);
		pthread_barrier_wait(&bar);
		if (repro_end)
			break;
		pthread_barrier_wait(&bar);
		if (repro_grow && repro_wins != 1)
			report(&sh->reports[cur_phase],
			       "%d threads at once moved QP %u from INIT to RTR %d times (once expected)",
			       nthreads, repro_qp->qp_num, repro_wins);
		publish(&sh->h_qp[3], -1);
		tries = 0;
		do {
			err = ibv_destroy_qp(repro_qp);
			account(V_DESTROY_QP, err, "(repro qp %u)", repro_qp->qp_num);
			if (err == EBUSY)
				usleep(100);
		} while (err == EBUSY && ++tries < 1000);
		sh->repro_rounds++;
	}
}

static void qp_step(int tid)
{
	int i = rndn(nq), err, mask;
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr a;
	struct ibv_qp *qp;
	unsigned int r = rndn(24);

	if (r == 0) {
		/* destroy and recreate the same QP */
		wr(&q[i]);
		if (q[i].obj) {
			enum ibv_qp_type t = q[i].type;

			drop_qp(i, V_DESTROY_QP);
			if (!q[i].obj && make_qp(i, t, qp_phase_cq, NULL))
				connect_qp(&q[i]);
		}
		un(&q[i]);
		return;
	}
	rd(&q[i]);
	qp = q[i].obj;
	if (!qp) {
		un(&q[i]);
		return;
	}
	if (r < 12) {
		mask = rnd_qp_attr(&a, q[i].type, qp->qp_num);
		err = ibv_modify_qp(qp, &a, mask);
		account(V_MODIFY, err,
			"(qp %u type %d, mask %#x, state %d, rd_atomic %u/%u, mtu %d, sgid %u)",
			qp->qp_num, q[i].type, mask, a.qp_state, a.max_rd_atomic,
			a.max_dest_rd_atomic, a.path_mtu, a.ah_attr.grh.sgid_index);
	} else if (r < 14) {
		connect_qp(&q[i]);
	} else if (r < 17) {
		post_traffic(i, 0, 0, 0, 0, 0);
	} else if (r < 19) {
		post_recvs(i);
	} else if (r < 21) {
		err = ibv_query_qp(qp, &a, (int)(rnd() & ((IBV_QP_DEST_QPN << 1) - 1)) |
				   IBV_QP_STATE, &init);
		if (!err && (a.qp_state > IBV_QPS_ERR ||
			     a.max_dest_rd_atomic > 128 || a.max_rd_atomic > 128 ||
			     a.timeout > 31 || a.retry_cnt > 7 || a.rnr_retry > 7))
			err = EPROTO;
		account(V_QUERY_QP, err,
			"(qp %u: state %d, rd_atomic %u/%u, timeout %u, retry %u/%u)",
			qp->qp_num, a.qp_state, a.max_rd_atomic,
			a.max_dest_rd_atomic, a.timeout, a.retry_cnt, a.rnr_retry);
	} else {
		poll_cq(qp_phase_cq);
	}
	un(&q[i]);
}

/* ---- phase mr ---------------------------------------------------------- */

#define MR_ACC	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_MW_BIND)

static struct ibv_cq *mr_cq;

static struct ibv_mr *reg_mr(struct ibv_pd *pd, uint8_t *buf, int access)
{
	struct ibv_mr *mr;

	errno = 0;
	mr = ibv_reg_mr(pd, buf, BUF_LEN, access);
	account(V_REG, mr ? 0 : errno, "(access %#x)", access);
	if (mr) {
		__atomic_store_n(&sh->mr_lkey, mr->lkey, __ATOMIC_RELAXED);
		publish(&sh->h_mr, mr->handle);
	}
	return mr;
}

static struct ibv_mw *alloc_mw(void)
{
	struct ibv_mw *mw;

	errno = 0;
	mw = ibv_alloc_mw(dev.pd, IBV_MW_TYPE_1);
	account(V_ALLOC_MW, mw ? 0 : errno, "(type 1)");
	if (mw) {
		__atomic_store_n(&sh->mw_rkey, mw->rkey, __ATOMIC_RELAXED);
		publish(&sh->h_mw, mw->handle);
	}
	return mw;
}

static int free_mw(struct ibv_mw *mw)
{
	int err, tries = 0;

	publish(&sh->h_mw, -1);
	do {
		err = ibv_dealloc_mw(mw);
		account(V_DEALLOC_MW, err, "(rkey %#x)", mw->rkey);
		if (err == EBUSY)
			usleep(100);
	} while (err == EBUSY && ++tries < 1000);
	return err;
}

static void mr_setup(void)
{
	mr_cq = make_cq();
	if (!mr_cq)
		return;
	publish(&sh->h_cq, mr_cq->handle);
	nq = 1;
	if (make_qp(0, IBV_QPT_RC, mr_cq, NULL))
		connect_qp(&q[0]);
	s_mr.obj = reg_mr(dev.pd, buf_a, MR_ACC);
	s_mw.obj = alloc_mw();
}

static void mr_step(int tid)
{
	unsigned int r = rndn(dev_odp ? 20 : 18);
	struct ibv_mr *mr;
	struct ibv_mw *mw;
	int err;

	if (r == 0) {
		/* dereg + reg; the window first if one is bound */
		wr(&s_mr);
		mr = s_mr.obj;
		if (mr) {
			publish(&sh->h_mr, -1);
			err = ibv_dereg_mr(mr);
			account(V_DEREG, err, "(lkey %#x)", mr->lkey);
			if (err == EBUSY) {
				wr(&s_mw);
				if (s_mw.obj && !free_mw(s_mw.obj))
					s_mw.obj = alloc_mw();
				un(&s_mw);
				err = ibv_dereg_mr(mr);
				account(V_DEREG, err, "(lkey %#x, window gone)",
					mr->lkey);
			}
			if (!err)
				s_mr.obj = reg_mr(dev.pd, rndn(2) ? buf_a : buf_b,
						  MR_ACC);
			else
				publish(&sh->h_mr, mr->handle);
		}
		un(&s_mr);
		return;
	}
	if (r == 1) {
		wr(&s_mw);
		if (s_mw.obj && !free_mw(s_mw.obj))
			s_mw.obj = alloc_mw();
		un(&s_mw);
		return;
	}
	if (r < 5) {
		/* rereg: translation, PD, access (the MR's struct is kept) */
		uint64_t addr, len;
		int flags = 1 + rndn(7), ret;
		/* libibverbs refuses access flags without CHANGE_ACCESS */
		int access = flags & IBV_REREG_MR_CHANGE_ACCESS ? rnd_mr_access() : 0;
		struct ibv_pd *pd = rndn(4) ? dev.pd : pd2;

		rnd_range(&addr, &len);
		rd(&s_mr);
		mr = s_mr.obj;
		if (mr) {
			errno = 0;
			ret = ibv_rereg_mr(mr, flags, pd, (void *)(uintptr_t)addr,
					   len, access);
			err = !ret ? 0 : errno ? errno : EPROTO;
			account(V_REREG, err,
				"(flags %#x, pd %s, addr %#llx, len %#llx, access %#x) = %d",
				flags, pd == dev.pd ? "1" : "2",
				(unsigned long long)addr, (unsigned long long)len,
				access, ret);
			if (!ret)
				__atomic_store_n(&sh->mr_lkey, mr->lkey,
						 __ATOMIC_RELAXED);
		}
		un(&s_mr);
		return;
	}
	if (r >= 18) {
		/* advise: prefetch (only where the device pages on demand) */
		static const enum ibv_advise_mr_advice adv[] = {
			IBV_ADVISE_MR_ADVICE_PREFETCH,
			IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
		};
		struct ibv_sge sg;

		rd(&s_mr);
		mr = s_mr.obj;
		if (mr) {
			sg.addr = (uintptr_t)mr->addr + rndn(BUF_LEN / 2);
			sg.length = 1 + rndn(BUF_LEN / 2);
			sg.lkey = mr->lkey;
			err = ibv_advise_mr(mr->pd, adv[rndn(3)],
					    rndn(2) ? IBV_ADVISE_MR_FLAG_FLUSH : 0,
					    &sg, 1);
			account(V_ADVISE, err, "(lkey %#x, addr %#llx, len %u)",
				sg.lkey, (unsigned long long)sg.addr, sg.length);
		}
		un(&s_mr);
		return;
	}

	/* the rest with the QP: locks in order QP, MR, window */
	rd(&q[0]);
	if (!q[0].obj) {
		un(&q[0]);
		return;
	}
	if (r < 8) {
		rd(&s_mr);
		rd(&s_mw);
		mr = s_mr.obj;
		mw = s_mw.obj;
		if (mr && mw) {
			struct ibv_mw_bind b = {
				.wr_id = wr_id(0, T_BIND),
				.send_flags = IBV_SEND_SIGNALED,
				.bind_info = {
					.mr = mr,
					.addr = (uintptr_t)mr->addr + rndn(4096),
					.length = rndn(8) ? 1 + rndn(8192) : 0,
					.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
							   IBV_ACCESS_REMOTE_READ,
				},
			};

			err = ibv_bind_mw(q[0].obj, mw, &b);
			account(V_BIND, err, "(rkey %#x, length %llu)", mw->rkey,
				(unsigned long long)b.bind_info.length);
			if (!err)
				__atomic_store_n(&sh->mw_rkey, mw->rkey,
						 __ATOMIC_RELAXED);
		}
		un(&s_mw);
		un(&s_mr);
	} else if (r < 13) {
		/* RDMA through the MR's or the window's key */
		rd(&s_mr);
		rd(&s_mw);
		mr = s_mr.obj;
		mw = s_mw.obj;
		if (mr) {
			uint64_t base = (uintptr_t)mr->addr;

			if (mw && rndn(2))
				post_traffic(0, mr->lkey, base, mw->rkey, base, 8192);
			else
				post_traffic(0, mr->lkey, base, mr->rkey,
					     base + BUF_LEN / 4, BUF_LEN / 4);
		}
		un(&s_mw);
		un(&s_mr);
	} else if (r < 16) {
		poll_cq(mr_cq);
	} else {
		maybe_recover(0);
	}
	un(&q[0]);
}

/* ---- phase srq --------------------------------------------------------- */

static struct ibv_cq *srq_cq;

static struct ibv_srq *make_srq(void)
{
	struct ibv_srq_init_attr ia = {
		.attr = { .max_wr = 2 * QDEPTH, .max_sge = 1, .srq_limit = 0 },
	};
	struct ibv_srq *srq;

	errno = 0;
	srq = ibv_create_srq(dev.pd, &ia);
	account(V_CREATE_SRQ, srq ? 0 : errno, "(max_wr %u)", ia.attr.max_wr);
	publish(&sh->h_srq, srq ? (int64_t)srq->handle : -1);
	return srq;
}

static void srq_setup(void)
{
	srq_cq = make_cq();
	if (!srq_cq)
		return;
	publish(&sh->h_cq, srq_cq->handle);
	s_srq.obj = make_srq();
	nq = 1;
	if (s_srq.obj && make_qp(0, IBV_QPT_RC, srq_cq, s_srq.obj))
		connect_qp(&q[0]);
}

/* destroy the SRQ (held exclusively); EBUSY from the child is retried */
static int drop_srq(struct ibv_srq *srq, int users)
{
	int err, tries = 0;

	publish(&sh->h_srq, -1);
	do {
		err = ibv_destroy_srq(srq);
		account(V_DESTROY_SRQ, err, "(%d QPs on it)", users);
		if (err == EBUSY && !users)
			usleep(100);
	} while (err == EBUSY && !users && ++tries < 1000);
	if (err)
		publish(&sh->h_srq, srq->handle);
	return err;
}

static void srq_step(int tid)
{
	unsigned int r = rndn(20);
	struct ibv_srq *srq;
	int err;

	if (r == 0) {
		/* destroy + recreate of the QP and the SRQ: locks QP, SRQ */
		wr(&q[0]);
		wr(&s_srq);
		drop_qp(0, V_DESTROY_QP);
		if (!q[0].obj && s_srq.obj && !drop_srq(s_srq.obj, 0)) {
			s_srq.obj = make_srq();
			if (s_srq.obj && make_qp(0, IBV_QPT_RC, srq_cq, s_srq.obj))
				connect_qp(&q[0]);
		}
		un(&s_srq);
		un(&q[0]);
		return;
	}
	if (r == 1) {
		/* while the QP uses it: EBUSY (a success is reported) */
		wr(&s_srq);
		srq = s_srq.obj;
		if (srq && q[0].obj) {
			publish(&sh->h_srq, -1);
			err = ibv_destroy_srq(srq);
			if (!err) {
				report(&sh->reports[cur_phase], "ibv_destroy_srq succeeded while a QP uses the SRQ");
				s_srq.obj = NULL;
			} else {
				account(V_DESTROY_SRQ, err, "(a QP on it)");
				publish(&sh->h_srq, srq->handle);
			}
		}
		un(&s_srq);
		return;
	}
	if (r < 12) {
		rd(&s_srq);
		srq = s_srq.obj;
		if (!srq) {
			un(&s_srq);
			return;
		}
		if (r < 7) {
			struct ibv_recv_wr w[4], *bad = NULL;
			struct ibv_sge sg[4][2];
			unsigned int n = 1 + rndn(4), k, nsge = rndn(10) ? 1 : 2;

			memset(w, 0, sizeof(w));
			for (k = 0; k < n; k++) {
				sg[k][0].addr = (uintptr_t)buf_q + BUF_LEN / 2 + k * 4096;
				sg[k][0].length = 4096;
				sg[k][0].lkey = mr_q->lkey;
				sg[k][1] = sg[k][0];
				w[k].wr_id = wr_id(0, T_SRQ);
				w[k].sg_list = sg[k];
				w[k].num_sge = nsge;
				if (k)
					w[k - 1].next = &w[k];
			}
			err = ibv_post_srq_recv(srq, w, &bad);
			account(V_POST_SRQ, err, "(%u WRs, %u SGEs)", n, nsge);
		} else if (r < 10) {
			struct ibv_srq_attr a = {
				.max_wr = rndn(4 * QDEPTH),
				.srq_limit = rndn(3 * QDEPTH),
			};
			int mask = rndn(8) ? IBV_SRQ_LIMIT : (int)(1 + rndn(3));

			err = ibv_modify_srq(srq, &a, mask);
			account(V_MODIFY_SRQ, err, "(mask %#x, max_wr %u, limit %u)",
				mask, a.max_wr, a.srq_limit);
		} else {
			struct ibv_srq_attr a;

			err = ibv_query_srq(srq, &a);
			if (!err && (a.max_wr < 2 * QDEPTH || a.max_sge < 1 ||
				     a.srq_limit > a.max_wr))
				err = EPROTO;
			account(V_QUERY_SRQ, err, "(max_wr %u, max_sge %u, limit %u)",
				a.max_wr, a.max_sge, a.srq_limit);
		}
		un(&s_srq);
		return;
	}
	rd(&q[0]);
	if (q[0].obj) {
		if (r < 16)
			post_traffic(0, 0, 0, 0, 0, 0);
		else if (r < 19)
			poll_cq(srq_cq);
		else
			maybe_recover(0);
	}
	un(&q[0]);
}

/* ---- phase mcast ------------------------------------------------------- */

static struct ibv_cq *mc_cq;

static void mc_setup(void)
{
	int i;

	mc_cq = make_cq();
	if (!mc_cq)
		return;
	publish(&sh->h_cq, mc_cq->handle);
	nq = 2;
	for (i = 0; i < nq; i++)
		if (make_qp(i, IBV_QPT_UD, mc_cq, NULL))
			connect_qp(&q[i]);
}

static void mc_step(int tid)
{
	int i = rndn(nq), g = rndn(NGROUPS + 1), err;
	unsigned int r = rndn(16);
	struct ibv_qp *qp;

	if (r == 0) {
		wr(&q[i]);
		if (q[i].obj) {
			drop_qp(i, V_DESTROY_QP);
			if (!q[i].obj && make_qp(i, IBV_QPT_UD, mc_cq, NULL))
				connect_qp(&q[i]);
		}
		un(&q[i]);
		return;
	}
	rd(&q[i]);
	qp = q[i].obj;
	if (!qp) {
		un(&q[i]);
		return;
	}
	if (r < 7) {
		/* group g, or (g == NGROUPS) the device's own unicast GID */
		const union ibv_gid *gid = g < NGROUPS ? &groups[g] : &dev.gid;

		if (rndn(2)) {
			err = ibv_attach_mcast(qp, gid, 0);
			account(V_ATTACH, err, "(qp %u, group %d)", qp->qp_num, g);
		} else {
			err = ibv_detach_mcast(qp, gid, 0);
			account(V_DETACH, err, "(qp %u, group %d)", qp->qp_num, g);
		}
	} else if (r < 10) {
		post_traffic(i, 0, 0, 0, 0, 0);
	} else if (r < 12) {
		post_recvs(i);
	} else if (r < 15) {
		poll_cq(mc_cq);
	} else {
		maybe_recover(i);
	}
	un(&q[i]);
}

/* ---- phase cq ---------------------------------------------------------- */

static void cq_setup(void)
{
	int i;

	s_cq.obj = make_cq();
	if (!s_cq.obj)
		return;
	publish(&sh->h_cq, ((struct ibv_cq *)s_cq.obj)->handle);
	nq = 2;
	for (i = 0; i < nq; i++)
		if (make_qp(i, IBV_QPT_RC, s_cq.obj, NULL))
			connect_qp(&q[i]);
}

static void cq_step(int tid)
{
	unsigned int r = rndn(20);
	int i = rndn(nq), err;

	if (r == 0) {
		/*
		 * Destroy the CQ's QPs, the last one with completions in
		 * flight, while the others poll; sometimes the CQ too.
		 * Locks: the QPs in order, then the CQ.
		 */
		wr(&q[0]);
		wr(&q[1]);
		drop_qp(0, V_DESTROY_QP);
		drop_qp(1, V_DESTROY_QP);
		if (!q[0].obj && !q[1].obj && !rndn(3)) {
			wr(&s_cq);
			publish(&sh->h_cq, -1);
			err = ibv_destroy_cq(s_cq.obj);
			account(V_DESTROY_CQ, err, "(no QP on it)");
			if (!err)
				s_cq.obj = make_cq();
			if (s_cq.obj)
				publish(&sh->h_cq, ((struct ibv_cq *)s_cq.obj)->handle);
			un(&s_cq);
		}
		for (i = 0; i < nq; i++)
			if (!q[i].obj && s_cq.obj &&
			    make_qp(i, IBV_QPT_RC, s_cq.obj, NULL))
				connect_qp(&q[i]);
		un(&q[1]);
		un(&q[0]);
		return;
	}
	if (r < 9) {
		rd(&s_cq);
		if (s_cq.obj) {
			poll_cq(s_cq.obj);
			if (!rndn(4)) {
				err = ibv_req_notify_cq(s_cq.obj, rndn(2));
				account(V_NOTIFY, err, "(cq)");
			}
		}
		un(&s_cq);
		return;
	}
	rd(&q[i]);
	if (q[i].obj) {
		if (r < 15)
			post_traffic(i, 0, 0, 0, 0, 0);
		else if (r < 18)
			post_recvs(i);
		else
			maybe_recover(i);
	}
	un(&q[i]);
}

/* ---- running a phase --------------------------------------------------- */

struct worker {
	pthread_t th;
	int tid;
	uint64_t seed;
	double deadline;
	uint64_t iters;
	volatile int done;
};

static void (*const steps[NR_PH])(int) = {
	qp_step, mr_step, srq_step, mc_step, cq_step,
};
static int phase_now;

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	char name[16];

	cur_phase = phase_now;
	snprintf(name, sizeof(name), "thread %d", w->tid);
	who = name;
	rseed(w->seed, 100 * (cur_phase + 1) + w->tid);
	if (cur_phase == PH_QP)
		repro_worker(w->tid);
	while (now_s() < w->deadline) {
		steps[cur_phase](w->tid);
		w->iters++;
	}
	w->done = 1;
	return NULL;
}

/* kernel stacks of this process's threads and of the child */
static void dump_stacks(void)
{
	char cmd[256];

	fflush(stdout);
	snprintf(cmd, sizeof(cmd),
		 "for t in /proc/%d/task/* /proc/%d/task/*; do [ -r $t/stack ] && "
		 "{ echo \"  # task $t ($(cat $t/wchan 2>/dev/null)):\"; sed 's/^/  #   /' $t/stack; }; done",
		 (int)getpid(), (int)child_pid);
	if (system(cmd))
		vt_info("(could not read the kernel stacks)");
}

static void teardown(void)
{
	int i, err;

	for (i = 0; i < 4; i++) {
		publish(&sh->h_qp[i], -1);
		if (q[i].obj) {
			if (cur_phase == PH_MCAST)
				detach_all(q[i].obj, V_CLEANUP);
			err = ibv_destroy_qp(q[i].obj);
			account(V_CLEANUP, err, "(destroy_qp, slot %d)", i);
			q[i].obj = NULL;
		}
	}
	if (s_mw.obj) {
		err = ibv_dealloc_mw(s_mw.obj);
		account(V_CLEANUP, err, "(dealloc_mw)");
		s_mw.obj = NULL;
	}
	if (s_mr.obj) {
		err = ibv_dereg_mr(s_mr.obj);
		account(V_CLEANUP, err, "(dereg_mr)");
		s_mr.obj = NULL;
	}
	if (s_srq.obj) {
		err = ibv_destroy_srq(s_srq.obj);
		account(V_CLEANUP, err, "(destroy_srq)");
		s_srq.obj = NULL;
	}
	{
		struct ibv_cq *cqs[] = { qp_phase_cq, mr_cq, srq_cq, mc_cq, s_cq.obj };

		for (i = 0; i < 5; i++) {
			if (!cqs[i])
				continue;
			err = ibv_destroy_cq(cqs[i]);
			account(V_CLEANUP, err, "(destroy_cq)");
		}
		qp_phase_cq = mr_cq = srq_cq = mc_cq = NULL;
		s_cq.obj = NULL;
	}
	publish(&sh->h_mr, -1);
	publish(&sh->h_mw, -1);
	publish(&sh->h_srq, -1);
	publish(&sh->h_cq, -1);
}

static void print_phase(int p, double secs, int threads)
{
	uint64_t calls = 0, unexp = 0;
	char errs[512];
	int v, e, s;
	size_t n;

	vt_info("phase %s: %d threads + child, %.1f s: %llu iterations, child %llu",
		ph_names[p], threads, secs, (unsigned long long)sh->iters[p],
		(unsigned long long)sh->child_iters[p]);
	if (p == PH_QP)
		vt_info("  reproduction: %llu rounds of a fresh RC QP modified by every thread at once (every other one INIT -> RTR)",
			(unsigned long long)sh->repro_rounds);
	for (v = 0; v < NR_V; v++) {
		const struct vstat *st = &sh->st[p][v];

		if (!st->n)
			continue;
		n = 0;
		errs[0] = 0;
		for (e = 1; e < NERR && n < sizeof(errs); e++)
			if (st->err[e])
				n += snprintf(errs + n, sizeof(errs) - n, " %s %llu",
					      vt_errname(e),
					      (unsigned long long)st->err[e]);
		vt_info("  %-22s %8llu calls, %8llu ok;%s%s", v_names[v],
			(unsigned long long)st->n, (unsigned long long)st->ok,
			n ? errs : " no errno",
			st->unexp ? " (UNEXPECTED results)" : "");
		calls += st->n;
		unexp += st->unexp;
	}
	n = 0;
	errs[0] = 0;
	for (s = 0; s < NR_WCS && n < sizeof(errs); s++)
		if (sh->wc[p][s])
			n += snprintf(errs + n, sizeof(errs) - n, "%s%s %llu",
				      n ? ", " : "", ibv_wc_status_str(s),
				      (unsigned long long)sh->wc[p][s]);
	vt_info("  completions: %s", n ? errs : "none");
	vt_info("  %llu calls, %llu unexpected", (unsigned long long)calls,
		(unsigned long long)unexp);
}

static int run_phase(int p, double secs, int threads, uint64_t seed)
{
	static void (*const setups[NR_PH])(void) = {
		qp_setup, mr_setup, srq_setup, mc_setup, cq_setup,
	};
	struct worker w[MAX_THREADS];
	double t0 = now_s(), deadline, wait_end;
	int i, stuck = 0;

	phase_now = cur_phase = p;
	rseed(seed, 10 + p);
	for (i = 0; i < 4; i++) {
		slot_init(&q[i], i);
		publish(&sh->h_qp[i], -1);
	}
	slot_init(&s_cq, -1);
	slot_init(&s_mr, -1);
	slot_init(&s_mw, -1);
	slot_init(&s_srq, -1);
	setups[p]();

	sh->phase = p;
	__atomic_store_n(&sh->stop, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->run, p + 1, __ATOMIC_RELEASE);

	deadline = t0 + secs;
	nthreads = threads;
	if (p == PH_QP)
		pthread_barrier_init(&bar, NULL, threads + 1);
	for (i = 0; i < threads; i++) {
		w[i].tid = i;
		w[i].seed = seed;
		w[i].deadline = deadline;
		w[i].iters = 0;
		w[i].done = 0;
		if (pthread_create(&w[i].th, NULL, worker_main, &w[i])) {
			vt_bad("pthread_create: %s", strerror(errno));
			exit(2);
		}
	}
	if (p == PH_QP)
		repro_run(t0 + secs / 3);

	/* wait for the threads and the child, at most HANG_SECS past the end */
	wait_end = deadline + HANG_SECS;
	for (i = 0; i < threads; i++) {
		struct timespec ts;
		double t;

		/* pthread_timedjoin_np() counts in CLOCK_REALTIME */
		clock_gettime(CLOCK_REALTIME, &ts);
		t = ts.tv_sec + ts.tv_nsec / 1e9 + (wait_end - now_s());
		ts.tv_sec = (time_t)t;
		ts.tv_nsec = (long)((t - ts.tv_sec) * 1e9);
		if (pthread_timedjoin_np(w[i].th, NULL, &ts)) {
			report(&sh->reports[cur_phase], "thread %d still busy %d s after the end of the phase (hang)",
			       i, HANG_SECS);
			stuck = 1;
			continue;
		}
		sh->iters[p] += w[i].iters;
	}
	__atomic_store_n(&sh->run, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&sh->stop, p + 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&sh->ack, __ATOMIC_ACQUIRE) != p + 1 &&
	       now_s() < wait_end + 5)
		usleep(1000);
	if (__atomic_load_n(&sh->ack, __ATOMIC_ACQUIRE) != p + 1) {
		report(&sh->reports[cur_phase], "the child is still busy %d s after the end of the phase (hang)",
		       HANG_SECS);
		stuck = 1;
	}
	if (stuck) {
		dump_stacks();
		return -1;
	}
	if (p == PH_QP)
		pthread_barrier_destroy(&bar);
	teardown();
	print_phase(p, now_s() - t0, threads);
	return 0;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	uint64_t seed = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	double secs = argc > 3 ? atof(argv[3]) : 45;
	int threads = argc > 4 ? atoi(argv[4]) : 4;
	struct ibv_query_device_ex_input in = { 0 };
	struct ibv_device_attr_ex ax;
	struct ibv_qp_init_attr ia;
	long long pins0, pins1;
	pthread_t async;
	int i, status = 0, p, waited;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	double t0;

	if (argc > 5 || secs <= 0 || threads < 1 || threads > MAX_THREADS) {
		fprintf(stderr, "usage: %s [DEV [SEED [SECS (> 0, default 45) [THREADS (1..%d, default 4)]]]]\n",
			argv[0], MAX_THREADS);
		return 2;
	}
	if (select_phases(getenv("RACE_PHASES"))) {
		fprintf(stderr, "RACE_PHASES: a comma-separated list of qp, mr, srq, mcast, cq\n");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		vt_bad("mmap: %s", strerror(errno));
		return 2;
	}
	memset(sh, 0, sizeof(*sh));
	for (i = 0; i < 4; i++)
		sh->h_qp[i] = -1;
	sh->h_srq = sh->h_mr = sh->h_mw = sh->h_cq = -1;
	pins0 = vt_foll_pins();

	vt_dev_open(&dev, name);
	cmd_fd = dev.ctx->cmd_fd;
	pd2 = vt_alloc_pd(dev.ctx);
	dev_odp = !ibv_query_device_ex(dev.ctx, &in, &ax) &&
		  (ax.odp_caps.general_caps & IBV_ODP_SUPPORT);
	sh->h_pd = dev.pd->handle;
	sh->gid = dev.gid;
	sh->gid_idx = dev.gid_idx;
	sh->mtu = dev.mtu;
	for (i = 0; i < NGROUPS; i++) {
		/* ff0e::5ace:N, RoCE groups (the MAC 33:33:00:00:5a:ce..) */
		memset(&groups[i], 0, sizeof(groups[i]));
		groups[i].raw[0] = 0xff;
		groups[i].raw[1] = 0x0e;
		groups[i].raw[13] = 0x5a;
		groups[i].raw[14] = 0xce;
		groups[i].raw[15] = i + 1;
	}

	buf_a = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf_b = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	buf_q = mmap(NULL, BUF_LEN, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf_a == MAP_FAILED || buf_b == MAP_FAILED || buf_q == MAP_FAILED) {
		vt_bad("mmap: %s", strerror(errno));
		return 2;
	}
	memset(buf_a, 0xa5, BUF_LEN);
	memset(buf_b, 0x5a, BUF_LEN);
	memset(buf_q, 0x33, BUF_LEN);
	sh->buf_a = (uintptr_t)buf_a;
	sh->buf_b = (uintptr_t)buf_b;
	mr_q = ibv_reg_mr(dev.pd, buf_q, BUF_LEN, ACC_ALL);
	if (!mr_q) {
		vt_bad("ibv_reg_mr: %s", vt_errname(errno));
		return 2;
	}
	{
		struct ibv_ah_attr aa = {
			.is_global = 1,
			.grh = { .dgid = dev.gid, .sgid_index = dev.gid_idx,
				 .hop_limit = 1 },
			.port_num = 1,
		};

		ah_self = ibv_create_ah(dev.pd, &aa);
		if (!ah_self) {
			vt_bad("ibv_create_ah (own GID): %s", vt_errname(errno));
			return 2;
		}
		for (i = 0; i < NGROUPS; i++) {
			aa.grh.dgid = groups[i];
			ah_group[i] = ibv_create_ah(dev.pd, &aa);
			if (!ah_group[i])
				vt_info("ibv_create_ah (group %d): %s", i,
					vt_errname(errno));
		}
	}
	/* UC QPs, where the device makes them */
	cq = ibv_create_cq(dev.ctx, 4, NULL, NULL, 0);
	memset(&ia, 0, sizeof(ia));
	ia.send_cq = ia.recv_cq = cq;
	ia.qp_type = IBV_QPT_UC;
	ia.cap.max_send_wr = ia.cap.max_recv_wr = 1;
	ia.cap.max_send_sge = ia.cap.max_recv_sge = 1;
	qp = cq ? ibv_create_qp(dev.pd, &ia) : NULL;
	have_uc = qp != NULL;
	if (qp)
		ibv_destroy_qp(qp);
	if (cq)
		ibv_destroy_cq(cq);

	vt_info("seed %llu, %.0f s, %d threads and a forked child on %s; on-demand paging %s, UC QPs %s; pinned pages before: %lld",
		(unsigned long long)seed, secs, threads, name,
		dev_odp ? "yes" : "no", have_uc ? "yes" : "no", pins0);

	/* the child, before any thread exists (fork copies only the caller) */
	fflush(stdout);
	child_pid = fork();
	if (child_pid < 0) {
		vt_bad("fork: %s", strerror(errno));
		return 2;
	}
	if (!child_pid)
		_exit(child_main(seed));

	if (pthread_create(&async, NULL, async_thread, NULL)) {
		vt_bad("pthread_create: %s", strerror(errno));
		return 2;
	}

	t0 = now_s();
	for (p = 0; p < NR_PH; p++)
		if (ph_on[p] &&
		    run_phase(p, secs * ph_share[p] / share_sum, threads, seed)) {
			/* a hang: nothing can be cleaned up */
			kill(child_pid, SIGKILL);
			vt_bad("a verb hung (see above); giving up");
			return 1;
		}

	__atomic_store_n(&sh->quit, 1, __ATOMIC_RELEASE);
	waited = 0;
	while (waitpid(child_pid, &status, WNOHANG) == 0 &&
	       waited++ < 100 * HANG_SECS)
		usleep(10000);
	if (waited > 100 * HANG_SECS) {
		vt_bad("the child did not end (hang)");
		dump_stacks();
		kill(child_pid, SIGKILL);
		waitpid(child_pid, &status, 0);
	} else {
		vt_check(WIFEXITED(status) && !WEXITSTATUS(status),
			 "the child ended cleanly (status %#x)", status);
	}
	async_stop = 1;
	pthread_join(async, NULL);

	account(V_CLEANUP, ibv_destroy_ah(ah_self), "(destroy_ah)");
	for (i = 0; i < NGROUPS; i++)
		if (ah_group[i])
			account(V_CLEANUP, ibv_destroy_ah(ah_group[i]), "(destroy_ah)");
	account(V_CLEANUP, ibv_dereg_mr(mr_q), "(dereg_mr)");
	account(V_CLEANUP, ibv_dealloc_pd(pd2), "(dealloc_pd)");
	account(V_CLEANUP, ibv_dealloc_pd(dev.pd), "(dealloc_pd)");
	account(V_CLEANUP, ibv_close_device(dev.ctx), "(close_device)");

	{
		char evs[512];
		size_t n = 0;
		int e;

		evs[0] = 0;
		for (e = 0; e < NR_EVS && n < sizeof(evs); e++)
			if (sh->events[e])
				n += snprintf(evs + n, sizeof(evs) - n, "%s%s %llu",
					      n ? ", " : "", ibv_event_type_str(e),
					      (unsigned long long)sh->events[e]);
		vt_info("async events: %s", n ? evs : "none");
	}
	{
		uint64_t it = 0, cit = 0;

		for (p = 0; p < NR_PH; p++) {
			it += sh->iters[p];
			cit += sh->child_iters[p];
		}
		vt_info("%llu iterations in %d threads, %llu in the child, %.1f s",
			(unsigned long long)it, threads, (unsigned long long)cit,
			now_s() - t0);
		for (p = 0; p < NR_PH; p++)
			vt_check(!ph_on[p] ||
				 (sh->iters[p] > 0 && sh->child_iters[p] > 0),
				 "phase %s ran (%llu iterations, child %llu)",
				 ph_names[p], (unsigned long long)sh->iters[p],
				 (unsigned long long)sh->child_iters[p]);
	}
	vt_check(sh->unexp_total == 0, "no unexpected result (%llu)",
		 (unsigned long long)sh->unexp_total);

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
