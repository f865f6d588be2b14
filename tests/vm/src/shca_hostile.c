// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_hostile DEV0 DEV1 - crafted RoCE v2 packets against DEV0
 * (tests/vm/97-wire-hostile.sh).
 *
 * Runs in the network namespace of DEV1 (the other "host" of the wire of
 * tests/vm/lib.sh, wire_setup) and opens both devices. It sets up, over
 * the wire between DEV0 and DEV1:
 *
 *   - the victim: an RC connection whose DEV0 end has an MR with remote
 *     write, read and atomic rights in the middle of a buffer of canary
 *     bytes, receives posted, and requests of its own (a FETCH_ADD, a
 *     SEND, a READ, a WRITE) outstanding towards a DEV1 end moved to
 *     the error state, so that forged responses reach its completer too;
 *     over IPv4-mapped GIDs, i.e. from the address this program's raw
 *     IPv4 socket sends from;
 *   - a UC connection on the same PD (IPv4 GIDs too), a UD QP on DEV0;
 *   - the bystander: an RC connection between DEV0 and DEV1 on other PDs,
 *     over link-local GIDs: no packet of this program comes from its peer's
 *     address.
 *
 * Then it sends packets of its own making to DEV0 (UDP port 4791): from a
 * raw IPv4 socket (IP_HDRINCL: the IP header, identification included, is
 * the program's, so the ICRC can be computed; some packets from another
 * source address) and from a UDP socket over IPv6. Their opcodes are every
 * value 0..255 and those of RC, UC and UD; their QPNs the victim's, the UC
 * and UD QPs', the bystander's, 1, 0, 0xffffff, DEV1's, nobody's, random;
 * their PSNs the expected one, just before and after it, half the PSN
 * space away, random; rkeys the MR's, off by one in the key byte, the
 * bystander's, the local DMA lkey, random; addresses and lengths at and
 * across the MR's bounds, DMA lengths that disagree with the payload,
 * payloads above the path MTU, wrong pad counts, headers truncated at every
 * length, bad ICRCs (one bit, random, or computed without the masks), bad
 * P_Keys and transport versions, valid ICRCs over random headers.
 *
 * First a few probes, one packet each for one path of the receiver (the
 * ICRC of this program accepted over IPv4 and IPv6, a flipped bit, the
 * wrong transport, the wrong source, a duplicate, requests ahead of the
 * expected PSN on RC and UC, an ACK for nothing, a 600-byte datagram to
 * QP1, whose receives hold a MAD of 256 bytes, which must stay RTS).
 * Then most packets go one at a time ("lockstep"): after each the port
 * counters of DEV0 (read through RDMA netlink, as `rdma statistic` does)
 * must show it counted exactly once, in rx_packets, rx_dropped or
 * icrc_errors, and in the one a malformed, corrupted or misdirected packet
 * belongs to; a packet counted nowhere is reported with its kind, the
 * breakdown counters it moved (out_of_sequence, duplicate_requests) and
 * the first few as hex; a count that comes after the next packet was sent
 * is the earlier packet's. The victim's expected PSN is read back after
 * each (ibv_query_qp), a QP that went to the error state is reset and
 * connected again, QP1 is watched (`rdma res`). The rest goes in bursts
 * (FUZZ_HOSTILE_BURST). Then:
 *
 *   - the sum of the three counters moved by exactly the packets sent;
 *   - no byte outside the victim's MR changed (canaries), no byte of the MR
 *     that no WRITE or atomic with its rkey could reach changed, and those
 *     a WRITE could reach hold the only value WRITE payloads carry; the
 *     victim's receive buffers, its READ and atomic targets likewise;
 *   - the bystander still works, before, between batches and after: SEND
 *     both ways, WRITE, READ, every byte of both buffers as expected;
 *   - the victim, connected again with its peer, does WRITE and READ;
 *   - a UD datagram larger than the path MTU is dropped, the UD QP stays
 *     usable.
 *
 * Environment: FUZZ_SEED (default 1; printed), FUZZ_HOSTILE_PACKETS (default
 * 6000), FUZZ_HOSTILE_BURST (of those, sent in bursts; default 2000),
 * FUZZ_HOSTILE_WAIT_MS (how long a packet may take to be counted; 100).
 */
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>
#include <time.h>

#include <rdma/rdma_netlink.h>

#include "vmtest.h"

#define ROCE_PORT	4791
#define MTU		1024
#define PG		4096
#define CANARY		0xc3	/* around every registered region */
#define FILL		0x5a	/* the victim MR's bytes at the start */
#define WFILL		0xa5	/* every byte of every WRITE payload */
#define SRCFILL		0x77	/* the victim's own SEND and WRITE data */
#define MAXPKT		1600
#define GSI_QKEY	0x80010000u
#define UD_QKEY		0x11111111u
#define LOCAL_DMA_LKEY	0xffu	/* softhca's ib_device.local_dma_lkey */

static uint64_t seed = 1;
static long n_total = 6000, n_burst = 2000, wait_ms = 100;

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void sleep_us(long us)
{
	struct timespec ts = { us / 1000000, (us % 1000000) * 1000 };

	nanosleep(&ts, NULL);
}

/* ---- CRC-32 (the Ethernet polynomial, reflected) for the ICRC ------------ */

static uint32_t crc_tab[256];

static void crc_init(void)
{
	uint32_t i, c;
	int k;

	for (i = 0; i < 256; i++) {
		c = i;
		for (k = 0; k < 8; k++)
			c = (c & 1) ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_tab[i] = c;
	}
}

static uint32_t crc_upd(uint32_t c, const void *p, size_t n)
{
	const uint8_t *b = p;

	while (n--)
		c = crc_tab[(c ^ *b++) & 0xff] ^ (c >> 8);
	return c;
}

/* ---- port counters through RDMA netlink -------------------------------------- */

enum { C_RXP, C_RXD, C_ICRC, C_OOS, C_DUP, C_SEQN, C_INVN, C_ACCN, C_OPN,
       C_RNRN, C_TXP, C_UDD, C_MAX };
static const char *const cname[C_MAX] = {
	"rx_packets", "rx_dropped", "icrc_errors", "out_of_sequence",
	"duplicate_requests", "seq_naks_sent", "inv_req_naks_sent",
	"access_naks_sent", "rem_op_naks_sent", "rnr_naks_sent", "tx_packets",
	"ud_rx_dropped",
};

struct ctrs {
	uint64_t v[C_MAX];
};

static uint64_t csum3(const struct ctrs *c)
{
	return c->v[C_RXP] + c->v[C_RXD] + c->v[C_ICRC];
}

static int nlfd = -1;
static uint32_t nlseq;
static char nlbuf[65536];

static void nla_u32(char *buf, size_t *off, uint16_t type, uint32_t v)
{
	struct nlattr *a = (struct nlattr *)(buf + *off);

	a->nla_len = NLA_HDRLEN + 4;
	a->nla_type = type;
	memcpy(buf + *off + NLA_HDRLEN, &v, 4);
	*off += NLA_ALIGN(a->nla_len);
}

typedef void (*nl_cb)(const struct nlattr *a, int rem, void *arg);

/* One request, its answers handed to @cb (the attributes of each). */
static int nl_req(uint16_t op, uint16_t flags, int dev, int port, nl_cb cb,
		  void *arg)
{
	char req[128];
	struct nlmsghdr *h = (struct nlmsghdr *)req;
	size_t off = NLMSG_HDRLEN;

	memset(req, 0, sizeof(req));
	h->nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	h->nlmsg_flags = NLM_F_REQUEST | flags;
	h->nlmsg_seq = ++nlseq;
	if (dev >= 0)
		nla_u32(req, &off, RDMA_NLDEV_ATTR_DEV_INDEX, dev);
	if (port > 0)
		nla_u32(req, &off, RDMA_NLDEV_ATTR_PORT_INDEX, port);
	h->nlmsg_len = off;
	if (send(nlfd, req, off, 0) != (ssize_t)off)
		return -errno;
	for (;;) {
		int n = recv(nlfd, nlbuf, sizeof(nlbuf), 0);
		struct nlmsghdr *m;

		if (n < 0)
			return -errno;
		for (m = (struct nlmsghdr *)nlbuf; NLMSG_OK(m, n);
		     m = NLMSG_NEXT(m, n)) {
			if (m->nlmsg_seq != nlseq)
				continue;
			if (m->nlmsg_type == NLMSG_DONE)
				return 0;
			if (m->nlmsg_type == NLMSG_ERROR)
				return ((struct nlmsgerr *)NLMSG_DATA(m))->error;
			cb((const struct nlattr *)NLMSG_DATA(m),
			   m->nlmsg_len - NLMSG_HDRLEN, arg);
			if (!(flags & NLM_F_DUMP))
				return 0;
		}
	}
}

#define nla_for_each(a, head, rem_in, rem)				\
	for ((a) = (head), (rem) = (rem_in);				\
	     (rem) >= NLA_HDRLEN && (a)->nla_len >= NLA_HDRLEN &&	\
	     (a)->nla_len <= (rem);					\
	     (rem) -= NLA_ALIGN((a)->nla_len),				\
	     (a) = (const struct nlattr *)((const char *)(a) + NLA_ALIGN((a)->nla_len)))

#define nla_type_of(a)	((a)->nla_type & NLA_TYPE_MASK)
#define nla_data(a)	((const char *)(a) + NLA_HDRLEN)

struct dev_find {
	const char *name;
	int index;
};

static void dev_find_cb(const struct nlattr *head, int rem_in, void *arg)
{
	struct dev_find *f = arg;
	const struct nlattr *a;
	int rem, idx = -1;
	bool match = false;

	nla_for_each(a, head, rem_in, rem) {
		if (nla_type_of(a) == RDMA_NLDEV_ATTR_DEV_INDEX)
			memcpy(&idx, nla_data(a), 4);
		else if (nla_type_of(a) == RDMA_NLDEV_ATTR_DEV_NAME)
			match = !strcmp(nla_data(a), f->name);
	}
	if (match)
		f->index = idx;
}

static void stat_cb(const struct nlattr *head, int rem_in, void *arg)
{
	struct ctrs *c = arg;
	const struct nlattr *a, *e, *x;
	int rem, erem, xrem, i;

	nla_for_each(a, head, rem_in, rem) {
		if (nla_type_of(a) != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS)
			continue;
		nla_for_each(e, (const struct nlattr *)nla_data(a),
			     a->nla_len - NLA_HDRLEN, erem) {
			const char *name = NULL;
			uint64_t v = 0;

			if (nla_type_of(e) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY)
				continue;
			nla_for_each(x, (const struct nlattr *)nla_data(e),
				     e->nla_len - NLA_HDRLEN, xrem) {
				if (nla_type_of(x) == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME)
					name = nla_data(x);
				else if (nla_type_of(x) == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE)
					memcpy(&v, nla_data(x), 8);
			}
			for (i = 0; name && i < C_MAX; i++)
				if (!strcmp(name, cname[i]))
					c->v[i] = v;
		}
	}
}

static int dev_index(const char *name)
{
	struct dev_find f = { .name = name, .index = -1 };

	if (nl_req(RDMA_NLDEV_CMD_GET, NLM_F_DUMP, -1, 0, dev_find_cb, &f))
		return -1;
	return f.index;
}

static int idx0 = -1, idx1 = -1;

struct kqp {
	uint32_t qpn;
	int state;
};

static void kqp_cb(const struct nlattr *head, int rem_in, void *arg)
{
	struct kqp *k = arg;
	const struct nlattr *a, *e, *x;
	int rem, erem, xrem;

	nla_for_each(a, head, rem_in, rem) {
		if (nla_type_of(a) != RDMA_NLDEV_ATTR_RES_QP)
			continue;
		nla_for_each(e, (const struct nlattr *)nla_data(a),
			     a->nla_len - NLA_HDRLEN, erem) {
			uint32_t qpn = UINT32_MAX;
			int st = -1;

			if (nla_type_of(e) != RDMA_NLDEV_ATTR_RES_QP_ENTRY)
				continue;
			nla_for_each(x, (const struct nlattr *)nla_data(e),
				     e->nla_len - NLA_HDRLEN, xrem) {
				if (nla_type_of(x) == RDMA_NLDEV_ATTR_RES_LQPN)
					memcpy(&qpn, nla_data(x), 4);
				else if (nla_type_of(x) == RDMA_NLDEV_ATTR_RES_STATE)
					st = *(const uint8_t *)nla_data(x);
			}
			if (qpn == k->qpn)
				k->state = st;
		}
	}
}

/* The state of QP @qpn of @idx per `rdma res` (kernel QPs too), or -1. */
static int kqp_state(int idx, uint32_t qpn)
{
	struct kqp k = { .qpn = qpn, .state = -1 };

	if (nl_req(RDMA_NLDEV_CMD_RES_QP_GET, NLM_F_DUMP, idx, 0, kqp_cb, &k))
		return -1;
	return k.state;
}

static void ctr_read(int idx, struct ctrs *c)
{
	int err;

	memset(c, 0, sizeof(*c));
	err = nl_req(RDMA_NLDEV_CMD_STAT_GET, 0, idx, 1, stat_cb, c);
	if (err) {
		vt_bad("reading the port counters through netlink: %s",
		       strerror(-err));
		exit(2);
	}
}

/* Wait until DEV0's counters stop moving for @quiet_ms; the last reading. */
static void ctr_settle(struct ctrs *c, int quiet_ms, int max_ms)
{
	double t0 = now_ms(), last;
	struct ctrs prev;

	ctr_read(idx0, &prev);
	last = now_ms();
	while (now_ms() - t0 < max_ms) {
		sleep_us(10000);
		ctr_read(idx0, c);
		if (memcmp(c, &prev, sizeof(*c))) {
			prev = *c;
			last = now_ms();
		} else if (now_ms() - last >= quiet_ms) {
			return;
		}
	}
	*c = prev;
}

/* ---- memory: registered regions in the middle of canary bytes ------------ */

/*
 * An arena: pages of canary bytes with a registered region [mr_off,
 * mr_off + mr_len) and a shadow of what every byte must be; a mask byte
 * per byte says what may be there instead: M_EXACT the shadow only,
 * M_WFILL the shadow or WFILL, M_ANY anything.
 */
enum { M_EXACT, M_WFILL, M_ANY };

struct arena {
	const char *name;
	uint8_t *mem, *shadow, *mask;
	size_t len, mr_off, mr_len;
	struct ibv_mr *mr;
};

static void arena_init(struct arena *a, const char *name, struct ibv_pd *pd,
		       size_t pages, size_t mr_off, size_t mr_len, int access,
		       uint8_t fill)
{
	a->name = name;
	a->len = pages * PG;
	a->mr_off = mr_off;
	a->mr_len = mr_len;
	a->mem = mmap(NULL, a->len, PROT_READ | PROT_WRITE,
		      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	a->shadow = malloc(a->len);
	a->mask = calloc(1, a->len);
	if (a->mem == MAP_FAILED || !a->shadow || !a->mask) {
		vt_bad("%s: out of memory", name);
		exit(2);
	}
	memset(a->mem, CANARY, a->len);
	memset(a->mem + mr_off, fill, mr_len);
	memcpy(a->shadow, a->mem, a->len);
	a->mr = ibv_reg_mr(pd, a->mem + mr_off, mr_len, access);
	if (!a->mr) {
		vt_bad("%s: ibv_reg_mr: %s", name, vt_errname(errno));
		exit(2);
	}
}

static uint64_t aaddr(const struct arena *a, size_t off)
{
	return (uintptr_t)a->mem + a->mr_off + off;
}

/* Set bytes [off, off + len) of the MR, in memory and in the shadow. */
static void arena_set(struct arena *a, size_t off, const void *p, size_t len)
{
	memcpy(a->mem + a->mr_off + off, p, len);
	memcpy(a->shadow + a->mr_off + off, p, len);
}

static void arena_mask(struct arena *a, size_t off, size_t len, uint8_t m)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (a->mask[a->mr_off + off + i] < m)
			a->mask[a->mr_off + off + i] = m;
}

/* Mark the bytes of [va, va + len) inside the MR (any part) with @m. */
static void arena_mask_va(struct arena *a, uint64_t va, uint64_t len, uint8_t m)
{
	uint64_t lo = aaddr(a, 0), hi = aaddr(a, a->mr_len), s, e;

	s = va > lo ? va : lo;
	e = va + len < va ? hi : va + len;	/* wrapped: to the end */
	if (e > hi)
		e = hi;
	if (s < e)
		arena_mask(a, s - lo, e - s, m);
}

/*
 * Compare the arena with its shadow under its mask; one ok or FAIL line,
 * with the first differing bytes.
 */
static bool arena_check(const struct arena *a, const char *when)
{
	size_t i, bad = 0, first = 0, last = 0, out = 0, in_mr = 0;

	for (i = 0; i < a->len; i++) {
		uint8_t b = a->mem[i];

		if (b == a->shadow[i] || a->mask[i] == M_ANY ||
		    (a->mask[i] == M_WFILL && b == WFILL))
			continue;
		if (!bad)
			first = i;
		last = i;
		bad++;
		if (i < a->mr_off || i >= a->mr_off + a->mr_len)
			out++;
		else
			in_mr++;
	}
	if (!bad) {
		vt_ok("%s %s: the %zu canary bytes around the %zu-byte MR are intact, every byte of the MR as expected",
		      a->name, when, a->len - a->mr_len, a->mr_len);
		return true;
	}
	vt_bad("%s %s: %zu bytes changed (%zu outside the MR, %zu inside where nothing could write), offsets %zd..%zd from the MR's start; first: 0x%02x, expected 0x%02x",
	       a->name, when, bad, out, in_mr, (ssize_t)first - (ssize_t)a->mr_off,
	       (ssize_t)last - (ssize_t)a->mr_off, a->mem[first], a->shadow[first]);
	return false;
}

/* ---- devices, QPs ------------------------------------------------------------ */

struct dev {
	const char *name;
	struct ibv_context *ctx;
	int gid4, gidll, gidula;	/* GID indexes: IPv4-mapped, fe80::, fd00:: */
	union ibv_gid g4, gll, gula;
};

static struct dev d0, d1;

static int find_gid(struct dev *d, int kind, union ibv_gid *gid)
{
	struct ibv_port_attr pa;
	int i;

	if (ibv_query_port(d->ctx, 1, &pa))
		return -1;
	for (i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		struct ibv_gid_entry e;
		const uint8_t *r = e.gid.raw;
		bool v4;

		if (ibv_query_gid_ex(d->ctx, 1, i, &e, 0) ||
		    e.gid_type != IBV_GID_TYPE_ROCE_V2)
			continue;
		v4 = vt_all_bytes(r, 10, 0) && r[10] == 0xff && r[11] == 0xff;
		if ((kind == 0 && v4) ||
		    (kind == 1 && r[0] == 0xfe && (r[1] & 0xc0) == 0x80) ||
		    (kind == 2 && (r[0] & 0xfe) == 0xfc)) {
			*gid = e.gid;
			return i;
		}
	}
	return -1;
}

static void dev_open(struct dev *d, const char *name)
{
	d->name = name;
	d->ctx = vt_open(name);
	d->gid4 = find_gid(d, 0, &d->g4);
	d->gidll = find_gid(d, 1, &d->gll);
	d->gidula = find_gid(d, 2, &d->gula);
	if (d->gid4 < 0 || d->gidll < 0 || d->gidula < 0) {
		vt_bad("%s: no RoCE v2 GID of each kind (IPv4 %d, link-local %d, ULA %d)",
		       name, d->gid4, d->gidll, d->gidula);
		exit(2);
	}
}

static struct ibv_cq *mkcq(struct ibv_context *ctx, int n)
{
	struct ibv_cq *cq = ibv_create_cq(ctx, n, NULL, NULL, 0);

	if (!cq) {
		vt_bad("ibv_create_cq: %s", vt_errname(errno));
		exit(2);
	}
	return cq;
}

static struct ibv_qp *mkqp(struct ibv_pd *pd, struct ibv_cq *scq,
			   struct ibv_cq *rcq, enum ibv_qp_type type)
{
	struct ibv_qp_init_attr a = {
		.send_cq = scq,
		.recv_cq = rcq,
		.cap = { .max_send_wr = 32, .max_recv_wr = 32,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = type,
	};
	struct ibv_qp *qp = ibv_create_qp(pd, &a);

	if (!qp) {
		vt_bad("ibv_create_qp: %s", vt_errname(errno));
		exit(2);
	}
	return qp;
}

static int qp_state(struct ibv_qp *qp, uint32_t *rq_psn)
{
	struct ibv_qp_attr a;
	struct ibv_qp_init_attr ia;

	if (ibv_query_qp(qp, &a, IBV_QP_STATE | IBV_QP_RQ_PSN, &ia))
		return -1;
	if (rq_psn)
		*rq_psn = a.rq_psn;
	return a.qp_state;
}

static const char *state_name(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					 "SQE", "ERR" };

	return s >= 0 && s <= IBV_QPS_ERR ? n[s] : "?";
}

static int qp_reset(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_RESET };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

static int qp_error(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_ERR };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

/* RESET -> RTS of an RC or UC QP to @dqpn at @dgid. */
static int qp_connect(struct ibv_qp *qp, const union ibv_gid *dgid, int sgid,
		      uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn,
		      int access, int timeout)
{
	bool rc = qp->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = access,
	};
	int err;

	err = qp_reset(qp);
	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.grh.dgid = *dgid;
	a.ah_attr.grh.sgid_index = sgid;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.port_num = 1;
	err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER : 0));
	if (err)
		return err;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

static int ud_connect(struct ibv_qp *qp, uint32_t qkey)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = qkey,
	};
	int err = qp_reset(qp);

	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				    IBV_QP_PORT | IBV_QP_QKEY);
	a.qp_state = IBV_QPS_RTR;
	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE);
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 0;
	if (!err)
		err = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN);
	return err;
}

static int post_recv(struct ibv_qp *qp, uint64_t wr_id, uint64_t addr,
		     uint32_t len, uint32_t lkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	struct ibv_recv_wr *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

static int post_send(struct ibv_qp *qp, uint64_t wr_id, enum ibv_wr_opcode op,
		     uint64_t addr, uint32_t len, uint32_t lkey,
		     uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge sge = { .addr = addr, .length = len, .lkey = lkey };
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	};
	struct ibv_send_wr *bad;

	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = 1;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(qp, &wr, &bad);
}

/* Poll @cq until it gave one completion or @ms passed; 1, 0 or -1. */
static int poll1(struct ibv_cq *cq, struct ibv_wc *wc, int ms)
{
	double t0 = now_ms();

	do {
		int n = ibv_poll_cq(cq, 1, wc);

		if (n)
			return n;
		sleep_us(200);
	} while (now_ms() - t0 < ms);
	return 0;
}

/* ---- the setup ----------------------------------------------------------- */

static struct ibv_pd *pd0v, *pd0b, *pd1v, *pd1b;
static struct ibv_cq *vscq, *vrcq, *ucq, *udcq, *bcq0, *bcq1, *v1cq;
static struct ibv_qp *vic0, *vic1, *uc0, *uc1, *ud0, *byst0, *byst1;
static struct arena vmr;	/* the victim's MR, remote write/read/atomic */
static struct arena lbuf;	/* the victim's own requests' buffers */
static struct arena rbuf;	/* receive buffers of the victim, UC and UD QPs */
static struct arena b0, b1;	/* the bystander's MRs */
static struct arena v1mr;	/* the victim peer's MR (its READ source) */

#define VMR_OFF		(PG + 100)
#define VMR_LEN		8000
/* lbuf: the READ lands at 1000 (3000 bytes), the FETCH_ADD at 4096, the
 * SEND and WRITE data comes from 5000 (2100 bytes) */
#define L_READ		1000
#define L_READ_LEN	3000
#define L_ATOMIC	4096
#define L_SRC		5000
#define L_SRC_LEN	2100
/* rbuf: NRECV receives per QP, each RSTRIDE apart, the UD ones 40 + MTU */
#define NRECV		8
#define RC_RLEN		2048
#define UD_RLEN		(40 + MTU)
#define RSTRIDE		(RC_RLEN + 64)
#define R_VIC		0
#define R_UC		(NRECV * RSTRIDE)
#define R_UD		(2 * NRECV * RSTRIDE)
#define RBUF_LEN	(3 * NRECV * RSTRIDE)
/* the bystander's MRs: RDMA at 0..4095, receives at 4096, SEND data at 5200 */
#define B_LEN		6000
#define B_RECV		4096
#define B_SRC		5200

static uint32_t vic_sq_psn;	/* where the victim's own requests start */
static int vic_arms, uc_arms, ud_arms;
static int vic_reqs_done, vic_reqs_failed;

static void rbuf_post(struct ibv_qp *qp, size_t base, uint32_t len, int i)
{
	if (post_recv(qp, base + i, aaddr(&rbuf, base + (size_t)i * RSTRIDE),
		      len, rbuf.mr->lkey))
		vt_info("post_recv: %s", vt_errname(errno));
}

static void drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];

	while (ibv_poll_cq(cq, 16, wc) > 0)
		;
}

/* (Re)connect the victim's DEV0 end and give it work. */
static void vic_arm(bool first)
{
	uint32_t rq_psn = vt_rnd() & 0xffffff;
	int err, i;

	/* every few times, PSNs at the ends of the space */
	if (vt_rndn(4) == 0)
		rq_psn = (0xfffff0 + vt_rndn(32)) & 0xffffff;
	vic_sq_psn = vt_rnd() & 0xffffff;
	drain(vscq);
	drain(vrcq);
	err = qp_connect(vic0, &d1.g4, d0.gid4, vic1->qp_num, rq_psn,
			 vic_sq_psn, IBV_ACCESS_LOCAL_WRITE |
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			 IBV_ACCESS_REMOTE_ATOMIC, 31);
	if (err) {
		vt_bad("connecting the victim: %s", vt_errname(err));
		exit(2);
	}
	drain(vscq);
	drain(vrcq);
	for (i = 0; i < NRECV; i++)
		rbuf_post(vic0, R_VIC, RC_RLEN, i);
	/*
	 * Requests its peer (in the error state) never answers: PSNs
	 * vic_sq_psn (the atomic), + 1 (the SEND), + 2..4 (the READ), + 5..6
	 * (the WRITE); forged responses may complete them.
	 */
	err = post_send(vic0, 100, IBV_WR_ATOMIC_FETCH_AND_ADD,
			aaddr(&lbuf, L_ATOMIC), 8, lbuf.mr->lkey,
			aaddr(&v1mr, 64), v1mr.mr->rkey) ||
	      post_send(vic0, 101, IBV_WR_SEND, aaddr(&lbuf, L_SRC), 100,
			lbuf.mr->lkey, 0, 0) ||
	      post_send(vic0, 102, IBV_WR_RDMA_READ, aaddr(&lbuf, L_READ),
			L_READ_LEN, lbuf.mr->lkey, aaddr(&v1mr, 0), v1mr.mr->rkey) ||
	      post_send(vic0, 103, IBV_WR_RDMA_WRITE, aaddr(&lbuf, L_SRC),
			2000, lbuf.mr->lkey, aaddr(&v1mr, 0), v1mr.mr->rkey);
	if (err)
		vt_info("victim: post_send: %s", vt_errname(errno));
	if (!first)
		vic_arms++;
}

static void uc_arm(bool first)
{
	int err, i;

	drain(ucq);
	err = qp_connect(uc0, &d1.g4, d0.gid4, uc1->qp_num, vt_rnd() & 0xffffff,
			 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE, 0);
	if (err) {
		vt_bad("connecting the UC QP: %s", vt_errname(err));
		exit(2);
	}
	drain(ucq);
	for (i = 0; i < NRECV; i++)
		rbuf_post(uc0, R_UC, RC_RLEN, i);
	if (!first)
		uc_arms++;
}

static void ud_arm(bool first)
{
	int i;

	drain(udcq);
	if (ud_connect(ud0, UD_QKEY)) {
		vt_bad("bringing the UD QP up: %s", vt_errname(errno));
		exit(2);
	}
	drain(udcq);
	for (i = 0; i < NRECV; i++)
		rbuf_post(ud0, R_UD, UD_RLEN, i);
	if (!first)
		ud_arms++;
}

/* Receives that completed are posted again; the victim's requests noted. */
static void reap(void)
{
	struct ibv_wc wc[16];
	int n, i;

	while ((n = ibv_poll_cq(vrcq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			if (wc[i].status == IBV_WC_SUCCESS)
				rbuf_post(vic0, R_VIC, RC_RLEN, wc[i].wr_id - R_VIC);
	while ((n = ibv_poll_cq(ucq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			if (wc[i].status == IBV_WC_SUCCESS)
				rbuf_post(uc0, R_UC, RC_RLEN, wc[i].wr_id - R_UC);
	while ((n = ibv_poll_cq(udcq, 16, wc)) > 0)
		for (i = 0; i < n; i++)
			if (wc[i].status == IBV_WC_SUCCESS)
				rbuf_post(ud0, R_UD, UD_RLEN, wc[i].wr_id - R_UD);
	while ((n = ibv_poll_cq(vscq, 16, wc)) > 0)
		for (i = 0; i < n; i++) {
			if (wc[i].status == IBV_WC_SUCCESS)
				vic_reqs_done++;
			else if (wc[i].status != IBV_WC_WR_FLUSH_ERR)
				vic_reqs_failed++;
		}
}

/* ---- the bystander ------------------------------------------------------- */

static bool byst_wait(struct ibv_cq *cq, uint64_t wr_id, uint32_t len,
		      const char *what)
{
	struct ibv_wc wc;

	if (poll1(cq, &wc, 10000) != 1) {
		vt_info("bystander %s: no completion in 10 s", what);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != wr_id ||
	    (len != UINT32_MAX && wc.byte_len != len)) {
		vt_info("bystander %s: completion %s, wr_id %llu, %u bytes",
			what, ibv_wc_status_str(wc.status),
			(unsigned long long)wc.wr_id, wc.byte_len);
		return false;
	}
	return true;
}

static void pattern(uint8_t *p, size_t len, unsigned int k)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = (uint8_t)(k * 31 + i * 7 + (i >> 8));
}

/*
 * SEND both ways, WRITE and READ both ways over the bystander, with
 * completions and every byte of both MRs checked against their shadows.
 */
static bool byst_round(unsigned int k)
{
	uint8_t tmp[2048];
	size_t wo = (k * 97) % 2500, ro = (k * 61) % 2500;
	bool ok = true;

	/* DEV1 -> DEV0: SEND 300 bytes */
	pattern(tmp, 300, k);
	arena_set(&b1, B_SRC, tmp, 300);
	ok &= !post_recv(byst0, 1, aaddr(&b0, B_RECV), 1024, b0.mr->lkey);
	ok &= !post_send(byst1, 2, IBV_WR_SEND, aaddr(&b1, B_SRC), 300,
			 b1.mr->lkey, 0, 0);
	ok = ok && byst_wait(bcq1, 2, UINT32_MAX, "SEND from DEV1") &&
	     byst_wait(bcq0, 1, 300, "receive on DEV0");
	if (ok)
		memcpy(b0.shadow + b0.mr_off + B_RECV, tmp, 300);
	/* DEV0 -> DEV1: SEND 200 bytes */
	pattern(tmp, 200, k + 1);
	arena_set(&b0, B_SRC, tmp, 200);
	ok = ok && !post_recv(byst1, 3, aaddr(&b1, B_RECV), 1024, b1.mr->lkey);
	ok = ok && !post_send(byst0, 4, IBV_WR_SEND, aaddr(&b0, B_SRC), 200,
			      b0.mr->lkey, 0, 0);
	ok = ok && byst_wait(bcq0, 4, UINT32_MAX, "SEND from DEV0") &&
	     byst_wait(bcq1, 3, 200, "receive on DEV1");
	if (ok)
		memcpy(b1.shadow + b1.mr_off + B_RECV, tmp, 200);
	/* DEV1 WRITEs 1500 bytes into DEV0's MR, READs 1500 back elsewhere */
	pattern(tmp, 1500, k + 2);
	arena_set(&b1, 2000, tmp, 1500);
	ok = ok && !post_send(byst1, 5, IBV_WR_RDMA_WRITE, aaddr(&b1, 2000),
			      1500, b1.mr->lkey, aaddr(&b0, wo), b0.mr->rkey);
	ok = ok && byst_wait(bcq1, 5, UINT32_MAX, "WRITE from DEV1");
	if (ok)
		memcpy(b0.shadow + b0.mr_off + wo, tmp, 1500);
	ok = ok && !post_send(byst1, 6, IBV_WR_RDMA_READ, aaddr(&b1, 0), 1500,
			      b1.mr->lkey, aaddr(&b0, ro), b0.mr->rkey);
	ok = ok && byst_wait(bcq1, 6, 1500, "READ by DEV1");
	if (ok)
		memcpy(b1.shadow + b1.mr_off, b0.shadow + b0.mr_off + ro, 1500);
	/* DEV0 WRITEs 700 bytes into DEV1's MR, READs 512 from it */
	pattern(tmp, 700, k + 3);
	arena_set(&b0, B_SRC, tmp, 700);
	ok = ok && !post_send(byst0, 7, IBV_WR_RDMA_WRITE, aaddr(&b0, B_SRC),
			      700, b0.mr->lkey, aaddr(&b1, 3200), b1.mr->rkey);
	ok = ok && byst_wait(bcq0, 7, UINT32_MAX, "WRITE from DEV0");
	if (ok)
		memcpy(b1.shadow + b1.mr_off + 3200, tmp, 700);
	ok = ok && !post_send(byst0, 8, IBV_WR_RDMA_READ, aaddr(&b0, 3600), 512,
			      b0.mr->lkey, aaddr(&b1, 3000), b1.mr->rkey);
	ok = ok && byst_wait(bcq0, 8, 512, "READ by DEV0");
	if (ok)
		memcpy(b0.shadow + b0.mr_off + 3600, b1.shadow + b1.mr_off + 3000,
		       512);
	if (!ok)
		return false;
	if (memcmp(b0.mem, b0.shadow, b0.len) || memcmp(b1.mem, b1.shadow, b1.len)) {
		vt_info("bystander round %u: the bytes of its buffers differ from what it sent", k);
		return false;
	}
	return true;
}

/* ---- packets ---------------------------------------------------------------- */

/* What an opcode's packets carry (IBTA vol. 1 9.2-9.4, this program's own table). */
enum { X_DETH = 1, X_RETH = 2, X_ATMETH = 4, X_AETH = 8, X_ATMACK = 16,
       X_IMM = 32, X_IETH = 64, X_PAY = 128, X_RC = 256, X_UC = 512,
       X_UD = 1024, X_REQ = 2048, X_WRITE = 4096, X_FIRST = 8192,
       X_LAST = 16384 };

struct opi {
	const char *name;
	int x;
};

static struct opi ops[256];

static void ops_init(void)
{
	static const struct { int code; const char *name; int x; } t[] = {
		{ 0x00, "SEND_FIRST", X_PAY | X_REQ | X_FIRST },
		{ 0x01, "SEND_MIDDLE", X_PAY | X_REQ },
		{ 0x02, "SEND_LAST", X_PAY | X_REQ | X_LAST },
		{ 0x03, "SEND_LAST_IMM", X_PAY | X_REQ | X_LAST | X_IMM },
		{ 0x04, "SEND_ONLY", X_PAY | X_REQ | X_FIRST | X_LAST },
		{ 0x05, "SEND_ONLY_IMM", X_PAY | X_REQ | X_FIRST | X_LAST | X_IMM },
		{ 0x06, "WRITE_FIRST", X_PAY | X_REQ | X_WRITE | X_FIRST | X_RETH },
		{ 0x07, "WRITE_MIDDLE", X_PAY | X_REQ | X_WRITE },
		{ 0x08, "WRITE_LAST", X_PAY | X_REQ | X_WRITE | X_LAST },
		{ 0x09, "WRITE_LAST_IMM", X_PAY | X_REQ | X_WRITE | X_LAST | X_IMM },
		{ 0x0a, "WRITE_ONLY", X_PAY | X_REQ | X_WRITE | X_FIRST | X_LAST | X_RETH },
		{ 0x0b, "WRITE_ONLY_IMM", X_PAY | X_REQ | X_WRITE | X_FIRST | X_LAST | X_RETH | X_IMM },
		{ 0x0c, "READ_REQUEST", X_REQ | X_FIRST | X_LAST | X_RETH },
		{ 0x0d, "READ_RESP_FIRST", X_PAY | X_AETH },
		{ 0x0e, "READ_RESP_MIDDLE", X_PAY },
		{ 0x0f, "READ_RESP_LAST", X_PAY | X_AETH },
		{ 0x10, "READ_RESP_ONLY", X_PAY | X_AETH },
		{ 0x11, "ACK", X_AETH },
		{ 0x12, "ATOMIC_ACK", X_AETH | X_ATMACK },
		{ 0x13, "CMP_SWAP", X_REQ | X_FIRST | X_LAST | X_ATMETH },
		{ 0x14, "FETCH_ADD", X_REQ | X_FIRST | X_LAST | X_ATMETH },
		{ 0x16, "SEND_LAST_INV", X_PAY | X_REQ | X_LAST | X_IETH },
		{ 0x17, "SEND_ONLY_INV", X_PAY | X_REQ | X_FIRST | X_LAST | X_IETH },
	};
	static char names[256][24];
	size_t i;

	for (i = 0; i < 256; i++) {
		snprintf(names[i], sizeof(names[i]), "op_0x%02zx", i);
		ops[i].name = names[i];
	}
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		snprintf(names[t[i].code], sizeof(names[0]), "RC_%s", t[i].name);
		ops[t[i].code].x = t[i].x | X_RC;
		/* UC has RC's SEND and WRITE opcodes, 0x20 on */
		if (t[i].code <= 0x0b) {
			snprintf(names[0x20 + t[i].code], sizeof(names[0]),
				 "UC_%s", t[i].name);
			ops[0x20 + t[i].code].x = t[i].x | X_UC;
		}
	}
	snprintf(names[0x64], sizeof(names[0]), "UD_SEND_ONLY");
	ops[0x64].x = X_PAY | X_REQ | X_FIRST | X_LAST | X_DETH | X_UD;
	snprintf(names[0x65], sizeof(names[0]), "UD_SEND_ONLY_IMM");
	ops[0x65].x = X_PAY | X_REQ | X_FIRST | X_LAST | X_DETH | X_UD | X_IMM;
}

static int hdr_len(int x)
{
	return 12 + (x & X_DETH ? 8 : 0) + (x & X_RETH ? 16 : 0) +
	       (x & X_ATMETH ? 28 : 0) + (x & X_AETH ? 4 : 0) +
	       (x & X_ATMACK ? 8 : 0) + (x & X_IMM ? 4 : 0) +
	       (x & X_IETH ? 4 : 0);
}

static bool op_valid(int op)
{
	return ops[op].x & (X_RC | X_UC | X_UD);
}

/* where packets go, what they are */
enum { F_V4, F_V4SPOOF, F_V6, F_MAX };
static const char *const fam_name[F_MAX] = { "v4", "v4-spoofed", "v6" };

enum { T_VIC, T_UC, T_UD, T_BYST, T_GSI, T_QP0, T_MCAST, T_DEV1, T_NONE,
       T_RAND, T_MAX };
static const char *const tgt_name[T_MAX] = {
	"victim", "uc", "ud", "bystander", "qp1", "qp0", "qp_ffffff",
	"dev1-qp", "no-qp", "random-qpn",
};

enum { V_OK, V_TRUNC, V_BADICRC, V_UNMASKED, V_TVER, V_PKEY, V_PAD,
       V_JUNKPAY, V_GARBAGE, V_MAX };
static const char *const var_name[V_MAX] = {
	"well-formed", "truncated", "bad-icrc", "icrc-unmasked", "bad-tver",
	"bad-pkey", "bad-pad", "payload-on-no-payload-op", "garbage-headers",
};

enum { P_NA, P_EXP, P_DUP, P_AHEAD, P_HALF, P_RAND, P_MAX };
static const char *const psn_name[P_MAX] = {
	"", " psn=expected", " psn=behind", " psn=ahead", " psn=+-2^23",
	" psn=random",
};

/* what a packet's arrival must do to the counters */
enum { E_DROP, E_ICRC, E_DROP_OR_ICRC, E_ANY };
static const char *const exp_name[] = {
	"rx_dropped", "icrc_errors", "rx_dropped or icrc_errors",
	"rx_packets or rx_dropped",
};

struct pkt {
	int fam, tgt, var, psnrel, expect;
	uint8_t b[MAXPKT];	/* from the BTH to the end of the ICRC */
	uint32_t len;
	uint8_t tos, ttl;
	uint16_t ipid, sport;
};

static struct in_addr a4_src, a4_dst, a4_spoof;
static struct in6_addr a6_src, a6_dst;
static uint16_t v6_sport, ipid = 1;
static int raw4 = -1, udp6 = -1;

static void put16(uint8_t *p, uint32_t v)
{
	p[0] = v >> 8;
	p[1] = v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, v >> 16);
	put16(p + 2, v);
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | p[1] << 16 | p[2] << 8 | p[3];
}

static uint64_t get64(const uint8_t *p)
{
	return (uint64_t)get32(p) << 32 | get32(p + 4);
}

/* The IP and UDP headers DEV0 will see for @p, @n bytes of RoCE. */
static size_t ip_udp(const struct pkt *p, uint32_t n, uint8_t *h)
{
	size_t l;

	if (p->fam != F_V6) {
		memset(h, 0, 20);
		h[0] = 0x45;
		h[1] = p->tos;
		put16(h + 2, 20 + 8 + n);
		put16(h + 4, p->ipid);
		put16(h + 6, 0x4000);	/* DF */
		h[8] = p->ttl;
		h[9] = IPPROTO_UDP;
		memcpy(h + 12, p->fam == F_V4SPOOF ? &a4_spoof : &a4_src, 4);
		memcpy(h + 16, &a4_dst, 4);
		l = 20;
	} else {
		put32(h, 6u << 28 | (uint32_t)p->tos << 20);
		put16(h + 4, 8 + n);
		h[6] = IPPROTO_UDP;
		h[7] = p->ttl;
		memcpy(h + 8, &a6_src, 16);
		memcpy(h + 24, &a6_dst, 16);
		l = 40;
	}
	put16(h + l, p->sport);
	put16(h + l + 2, ROCE_PORT);
	put16(h + l + 4, 8 + n);
	put16(h + l + 6, 0);
	return l + 8;
}

/*
 * The ICRC of @p over its first @n bytes (BTH to the end of the pad):
 * CRC-32 over eight bytes of ones, the IP and UDP headers and the BTH with
 * the fields that may change on the way set to ones, then the rest.
 * @masked false leaves them as they are (a sender that forgot).
 */
static uint32_t icrc(const struct pkt *p, uint32_t n, bool masked)
{
	static const uint8_t ones[8] = { 0xff, 0xff, 0xff, 0xff,
					 0xff, 0xff, 0xff, 0xff };
	uint8_t h[40 + 8 + 12];
	size_t l = ip_udp(p, n + 4, h);
	uint32_t c;

	if (masked && p->fam != F_V6) {
		h[1] = 0xff;
		h[8] = 0xff;
		h[10] = h[11] = 0xff;
	} else if (masked) {
		h[0] |= 0x0f;
		h[1] = h[2] = h[3] = 0xff;
		h[7] = 0xff;
	}
	if (masked)
		h[l - 2] = h[l - 1] = 0xff;
	memcpy(h + l, p->b, 12);
	if (masked)
		h[l + 4] = 0xff;
	c = crc_upd(0xffffffffu, ones, 8);
	c = crc_upd(c, h, l + 12);
	c = crc_upd(c, p->b + 12, n - 12);
	return ~c;
}

static long n_sent, n_send_err;

/* IPv4 identification: never 0, which would make the kernel choose one */
static uint16_t next_ipid(void)
{
	if (!++ipid)
		ipid = 1;
	return ipid;
}

static bool send_pkt(struct pkt *p)
{
	ssize_t r;

	if (p->fam != F_V6) {
		uint8_t buf[28 + MAXPKT];
		struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr = a4_dst };
		size_t l = ip_udp(p, p->len, buf);

		memcpy(buf + l, p->b, p->len);
		r = sendto(raw4, buf, l + p->len, 0, (struct sockaddr *)&to,
			   sizeof(to));
		r = r == (ssize_t)(l + p->len) ? 0 : -1;
	} else {
		struct sockaddr_in6 to = { .sin6_family = AF_INET6,
					   .sin6_port = htons(ROCE_PORT),
					   .sin6_addr = a6_dst };
		struct iovec iov = { .iov_base = p->b, .iov_len = p->len };
		union {
			char buf[CMSG_SPACE(sizeof(int)) * 2];
			struct cmsghdr align;
		} u;
		struct msghdr msg = {
			.msg_name = &to, .msg_namelen = sizeof(to),
			.msg_iov = &iov, .msg_iovlen = 1,
			.msg_control = u.buf, .msg_controllen = sizeof(u.buf),
		};
		struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
		int tc = p->tos, hl = p->ttl;

		memset(u.buf, 0, sizeof(u.buf));
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_TCLASS;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &tc, sizeof(int));
		cm = CMSG_NXTHDR(&msg, cm);
		cm->cmsg_level = IPPROTO_IPV6;
		cm->cmsg_type = IPV6_HOPLIMIT;
		cm->cmsg_len = CMSG_LEN(sizeof(int));
		memcpy(CMSG_DATA(cm), &hl, sizeof(int));
		r = sendmsg(udp6, &msg, 0);
		r = r == (ssize_t)p->len ? 0 : -1;
	}
	if (r) {
		n_send_err++;
		if (n_send_err <= 3)
			vt_info("sending a %u-byte packet: %s", p->len,
				strerror(errno));
		return false;
	}
	n_sent++;
	return true;
}

static void hexdump(const struct pkt *p)
{
	uint32_t i;
	char line[120];
	int o = 0;

	char src[INET6_ADDRSTRLEN], dst[INET6_ADDRSTRLEN];

	if (p->fam == F_V6) {
		inet_ntop(AF_INET6, &a6_src, src, sizeof(src));
		inet_ntop(AF_INET6, &a6_dst, dst, sizeof(dst));
	} else {
		inet_ntop(AF_INET, p->fam == F_V4 ? &a4_src : &a4_spoof, src,
			  sizeof(src));
		inet_ntop(AF_INET, &a4_dst, dst, sizeof(dst));
	}
	printf("    # IPv%d %s -> %s, tos 0x%02x, ttl %u, ip id %u, udp %u -> %u, %u bytes from the BTH on (ICRC included):\n",
	       p->fam == F_V6 ? 6 : 4, src, dst, p->tos, p->ttl,
	       p->fam == F_V6 ? 0 : p->ipid, p->sport, ROCE_PORT, p->len);
	for (i = 0; i < p->len && i < 96; i++) {
		o += snprintf(line + o, sizeof(line) - o, "%02x%s", p->b[i],
			      i % 4 == 3 ? " " : "");
		if (i % 32 == 31 || i + 1 == p->len || i == 95) {
			printf("    #   %s%s\n", line,
			       i == 95 && p->len > 96 ? "..." : "");
			o = 0;
		}
	}
}

/* ---- the model: what DEV0 must count a packet as ------------------------------ */

static uint32_t qpn_of(struct ibv_qp *qp)
{
	return qp->qp_num;
}

static int model(const struct pkt *p, bool icrc_good)
{
	uint32_t len = p->len, qpn;
	int op = p->b[0], x, h, pad;

	if (len < 16 || !op_valid(op))
		return icrc_good ? E_DROP : E_DROP_OR_ICRC;
	x = ops[op].x;
	h = hdr_len(x);
	pad = (p->b[1] >> 4) & 3;
	if ((p->b[1] & 0x0f) || (((p->b[2] << 8) | p->b[3]) & 0x7fff) != 0x7fff ||
	    len < (uint32_t)h + 4 || (uint32_t)pad > len - h - 4 ||
	    (!(x & X_PAY) && len - h - 4))
		return icrc_good ? E_DROP : E_DROP_OR_ICRC;
	if (!icrc_good)
		return E_ICRC;
	qpn = get32(p->b + 4) & 0xffffff;
	if (qpn == 1)
		return x & X_UD ? E_ANY : E_DROP;
	if (qpn == qpn_of(vic0))
		return (x & X_RC) && p->fam == F_V4 ? E_ANY : E_DROP;
	if (qpn == qpn_of(uc0))
		return (x & X_UC) && p->fam == F_V4 ? E_ANY : E_DROP;
	if (qpn == qpn_of(ud0))
		return x & X_UD ? E_ANY : E_DROP;
	/* the bystander's peer has a link-local address: never ours */
	return E_DROP;
}

/* ---- the generator --------------------------------------------------------------- */

static uint32_t vic_rq_psn, uc_rq_psn;	/* as last read back */
static int vic_st = IBV_QPS_RTS;
static unsigned int op_cycle, trunc_cycle;
static uint8_t op_seen[256];

static int pick(const int *w, int n)
{
	int i, sum = 0, r;

	for (i = 0; i < n; i++)
		sum += w[i];
	r = vt_rndn(sum);
	for (i = 0; i < n; i++) {
		if (r < w[i])
			return i;
		r -= w[i];
	}
	return n - 1;
}

static uint32_t pick_rkey(void)
{
	uint32_t k = vmr.mr->rkey;

	switch (vt_rndn(12)) {
	case 0: case 1: case 2: case 3: case 4: return k;
	case 5: return (k & ~0xffu) | ((k + 1) & 0xff);	/* key byte + 1 */
	case 6: return (k & ~0xffu) | ((k - 1) & 0xff);	/* key byte - 1 */
	case 7: return k ^ 0x100;			/* another index */
	case 8: return b0.mr->rkey;			/* another PD's */
	case 9: return vt_rndn(2) ? LOCAL_DMA_LKEY : lbuf.mr->lkey;
	case 10: return vt_rndn(2) ? 0 : 0xffffffffu;
	default: return vt_rnd();
	}
}

static uint64_t pick_va(uint32_t len)
{
	uint64_t lo = aaddr(&vmr, 0), hi = aaddr(&vmr, VMR_LEN);

	switch (vt_rndn(14)) {
	case 0: case 1: return lo;
	case 2: case 3: case 4: return lo + vt_rndn(VMR_LEN);
	case 5: return hi - len;			/* to the last byte */
	case 6: return hi - len + 1 + vt_rndn(16);	/* across the end */
	case 7: return hi + vt_rndn(64);		/* after it */
	case 8: return lo - 1 - vt_rndn(64);		/* before it, across */
	case 9: return (hi - 8 - vt_rndn(64)) & ~7ull;	/* aligned, near the end */
	case 10: return 0;
	case 11: return ~0ull - vt_rndn(4096);		/* wraps */
	case 12: return lo + 0x100000000ull;		/* 32-bit aliases */
	default: return vt_rnd();
	}
}

static uint32_t pick_dma_len(uint32_t paylen)
{
	switch (vt_rndn(12)) {
	case 0: case 1: case 2: case 3: return paylen;
	case 4: return paylen + 1;
	case 5: return paylen ? paylen - 1 : 0;
	case 6: return 0;
	case 7: return VMR_LEN;
	case 8: return VMR_LEN + 1 + vt_rndn(4096);
	case 9: return vt_rndn(2) ? 0xffffffffu : 0x80000000u;
	case 10: return MTU * (1 + vt_rndn(8));
	default: return vt_rndn(3 * MTU);
	}
}

static uint32_t pick_paylen(int x)
{
	if (!(x & X_PAY))
		return 0;
	if (x & X_UD) {
		switch (vt_rndn(8)) {
		case 0: case 1: case 2: case 3: return vt_rndn(257);
		case 4: case 5: return 257 + vt_rndn(MTU - 256);
		case 6: return MTU + 1 + vt_rndn(400);
		default: return vt_rndn(2) ? 0 : MTU;
		}
	}
	/* packets that are not the last of a message carry the MTU */
	if (!(x & X_LAST) && (x & (X_REQ | X_AETH)) != X_AETH && vt_rndn(3))
		return MTU;
	switch (vt_rndn(10)) {
	case 0: return 0;
	case 1: return 1 + vt_rndn(4);
	case 2: return MTU;
	case 3: return MTU - 1;
	case 4: return MTU + 1 + vt_rndn(350);
	default: return vt_rndn(vt_rndn(2) ? 300 : MTU + 1);
	}
}

static uint32_t pick_psn(int tgt, int x, int *rel)
{
	uint32_t exp = tgt == T_VIC ? vic_rq_psn : uc_rq_psn;
	int r;

	if (tgt == T_VIC && !(x & X_REQ)) {
		/* a response: around the victim's own requests' PSNs */
		*rel = P_NA;
		if (vt_rndn(5))
			return (vic_sq_psn - 3 + vt_rndn(12)) & 0xffffff;
		return vt_rnd() & 0xffffff;
	}
	if (tgt != T_VIC && tgt != T_UC) {
		*rel = P_NA;
		r = vt_rndn(4);
		return r == 0 ? 0 : r == 1 ? 0xffffff : vt_rnd() & 0xffffff;
	}
	r = pick((const int[]){ 45, 12, 15, 5, 23 }, 5);
	*rel = P_EXP + r;
	switch (r) {
	case 0: return exp;
	case 1: return (exp - 1 - (vt_rndn(3) ? 0 : vt_rndn(64))) & 0xffffff;
	case 2: return (exp + 1 + (vt_rndn(3) ? 0 : vt_rndn(64))) & 0xffffff;
	case 3: return (exp + 0x800000 - 1 + vt_rndn(3)) & 0xffffff;
	default: return vt_rnd() & 0xffffff;
	}
}

static uint32_t tgt_qpn(int t)
{
	switch (t) {
	case T_VIC: return qpn_of(vic0);
	case T_UC: return qpn_of(uc0);
	case T_UD: return qpn_of(ud0);
	case T_BYST: return qpn_of(byst0);
	case T_GSI: return 1;
	case T_QP0: return 0;
	case T_MCAST: return 0xffffff;
	case T_DEV1: {
		struct ibv_qp *q[] = { vic1, uc1, byst1 };

		return q[vt_rndn(3)]->qp_num;
	}
	case T_NONE: return qpn_of(byst0) + 100 + vt_rndn(1000);
	default: return vt_rnd() & 0xffffff;
	}
}

static int fitting_opcode(int t)
{
	static const int rc[] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06,
				  0x07, 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d,
				  0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14,
				  0x16, 0x17 };
	/* victim: writes, reads, atomics, sends, responses */
	static const int vw[] = { 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0a, 0x0b,
				  0x0c, 0x0c, 0x13, 0x14, 0x04, 0x05, 0x00,
				  0x01, 0x02, 0x03, 0x16, 0x17, 0x0d, 0x0e,
				  0x0f, 0x10, 0x11, 0x11, 0x12 };

	switch (t) {
	case T_VIC:
		return vw[vt_rndn(sizeof(vw) / sizeof(vw[0]))];
	case T_UC:
		return 0x20 + vt_rndn(12);
	case T_UD:
	case T_GSI:
		if (vt_rndn(6))
			return 0x64 + vt_rndn(2);
		/* fall through */
	default:
		switch (vt_rndn(3)) {
		case 0: return 0x64 + vt_rndn(2);
		case 1: return 0x20 + vt_rndn(12);
		default: return rc[vt_rndn(sizeof(rc) / sizeof(rc[0]))];
		}
	}
}

/* Make a packet; p->expect says what DEV0 must count it as (model()). */
static void gen(struct pkt *p)
{
	int op, x, h, rel = P_NA, var;
	uint32_t paylen, dma_len, psn, pad, padf, n, i;
	uint8_t *q;
	bool icrc_good = true;

	memset(p, 0, sizeof(*p));
	p->fam = pick((const int[]){ 72, 5, 23 }, F_MAX);
	p->tgt = pick((const int[]){ 38, 12, 12, 5, 6, 2, 2, 3, 3, 4 }, T_MAX);
	p->tos = vt_rndn(3) ? 0 : vt_rnd();
	p->ttl = vt_rndn(3) ? 64 : 1 + vt_rndn(254);
	p->ipid = next_ipid();
	p->sport = p->fam == F_V6 ? v6_sport : 0xc000 + vt_rndn(0x4000);

	switch (vt_rndn(20)) {
	case 0: case 1:
		op = op_cycle++ & 0xff;		/* every opcode in turn */
		break;
	case 2:
		op = vt_rndn(256);
		break;
	default:
		op = fitting_opcode(p->tgt);
	}
	op_seen[op] = 1;
	x = ops[op].x;
	if (!op_valid(op))
		x = vt_rnd() & (X_RETH | X_AETH | X_IMM | X_PAY);
	h = hdr_len(x);
	var = pick((const int[]){ 70, 7, 6, 2, 3, 3, 3, 2, 4 }, V_MAX);
	if (var == V_JUNKPAY && (x & X_PAY))
		var = V_OK;
	p->var = var;

	paylen = pick_paylen(x);
	if (p->tgt == T_GSI && (x & X_UD) && vt_rndn(2))
		paylen = 256;	/* a MAD */
	if (var == V_JUNKPAY)
		paylen = 1 + vt_rndn(8);
	psn = pick_psn(p->tgt, x, &rel);
	p->psnrel = rel;

	/* BTH */
	q = p->b;
	pad = -paylen & 3;
	padf = pad;
	if (var == V_PAD)
		padf = paylen + pad < 3 ? paylen + pad + 1 + vt_rndn(3 - paylen - pad) :
		       (pad + 1 + vt_rndn(3)) & 3;
	q[0] = op;
	q[1] = (vt_rndn(4) ? 0 : 0x80) | (vt_rndn(8) ? 0 : 0x40) | padf << 4;
	put16(q + 2, vt_rndn(12) ? 0xffff : 0x7fff);
	if (var == V_TVER)
		q[1] |= 1 + vt_rndn(15);
	if (var == V_PKEY) {
		uint16_t k;

		do
			k = vt_rnd();
		while ((k & 0x7fff) == 0x7fff);
		put16(q + 2, k);
	}
	put32(q + 4, (vt_rndn(16) ? 0 : vt_rnd() & 0xff000000u) | tgt_qpn(p->tgt));
	put32(q + 8, (vt_rndn(3) ? 0x80000000u : 0) |
		     (vt_rndn(16) ? 0 : vt_rnd() & 0x7f000000u) | psn);
	q += 12;

	/* extension headers */
	if (var == V_GARBAGE) {
		for (i = 12; i < (uint32_t)h; i++)
			*q++ = vt_rnd();
	} else {
		if (x & X_DETH) {
			uint32_t qk = p->tgt == T_GSI ? GSI_QKEY : UD_QKEY;

			put32(q, vt_rndn(5) ? qk : vt_rndn(2) ? vt_rnd() : qk ^ 1);
			put32(q + 4, vt_rndn(3) ? vic1->qp_num :
				     vt_rndn(2) ? 1 : vt_rnd());
			q += 8;
		}
		if (x & (X_RETH | X_ATMETH)) {
			bool atomic = x & X_ATMETH;
			uint64_t va;

			dma_len = pick_dma_len(paylen);
			va = pick_va(atomic ? 8 : dma_len);
			if (atomic && vt_rndn(4))
				va &= ~7ull;
			put64(q, va);
			put32(q + 8, pick_rkey());
			if (atomic) {
				put64(q + 12, vt_rndn(2) ? 1 : vt_rnd());
				put64(q + 20, vt_rndn(2) ? FILL * 0x0101010101010101ull :
					      vt_rnd());
				q += 28;
			} else {
				put32(q + 12, dma_len);
				q += 16;
			}
		}
		if (x & X_AETH) {
			static const uint8_t syn[] = { 0x1f, 0x00, 0x1f, 0x20,
						       0x2e, 0x60, 0x61, 0x62,
						       0x63, 0x64 };
			uint8_t s = vt_rndn(8) ? syn[vt_rndn(sizeof(syn))] :
					(uint8_t)vt_rnd();

			put32(q, (uint32_t)s << 24 | (vt_rnd() & 0xffffff));
			q += 4;
		}
		if (x & X_ATMACK) {
			put64(q, vt_rnd());
			q += 8;
		}
		if (x & X_IMM) {
			put32(q, vt_rnd());
			q += 4;
		}
		if (x & X_IETH) {
			put32(q, vt_rndn(2) ? vmr.mr->rkey :
				 vt_rndn(2) ? b0.mr->rkey : vt_rnd());
			q += 4;
		}
	}
	/* payload, pad */
	if (x & X_WRITE) {
		memset(q, WFILL, paylen);
	} else {
		for (i = 0; i < paylen; i++)
			q[i] = vt_rnd();
	}
	if (p->tgt == T_GSI && paylen >= 24 && vt_rndn(4)) {
		/*
		 * Most datagrams to QP1 look like MADs (base version 1, a
		 * class the core knows, CM attributes), to reach further
		 * into the MAD layer than its version check.
		 */
		static const uint8_t cls[] = { 0x01, 0x03, 0x04, 0x06, 0x07,
					       0x07, 0x07, 0x0a, 0x81 };
		static const uint8_t meth[] = { 0x01, 0x02, 0x03, 0x06, 0x07,
						0x81, 0x86 };

		q[0] = 1;
		q[1] = cls[vt_rndn(sizeof(cls))];
		q[2] = q[1] == 0x07 ? 2 : vt_rndn(3);
		q[3] = meth[vt_rndn(sizeof(meth))];
		if (q[1] == 0x07)
			put16(q + 16, 0x0010 + vt_rndn(10));	/* REQ .. LAP */
	}
	q += paylen;
	memset(q, 0, pad);
	q += pad;
	n = q - p->b;
	/* ICRC */
	put32(q, 0);
	{
		uint32_t c = icrc(p, n, var != V_UNMASKED);

		if (var == V_UNMASKED) {
			/* only wrong if a masked field is not all ones */
			icrc_good = c == icrc(p, n, true);
		}
		if (var == V_BADICRC) {
			c = vt_rndn(2) ? c ^ (1u << vt_rndn(32)) : (uint32_t)vt_rnd();
			icrc_good = c == icrc(p, n, true);
		}
		q[0] = c;
		q[1] = c >> 8;
		q[2] = c >> 16;
		q[3] = c >> 24;
	}
	p->len = n + 4;
	if (var == V_TRUNC) {
		/* every length from 0 to just short of the headers and ICRC */
		p->len = trunc_cycle++ % (h + 4);
		icrc_good = false;
	}
	p->expect = model(p, icrc_good);
}

/*
 * What a packet could write into the victim's MR if DEV0 executed it:
 * WRITEs with its rkey from their address for their DMA length (payload
 * bytes are always WFILL), atomics with its rkey the eight bytes.
 */
static void shadow_pkt(const struct pkt *p)
{
	int op = p->b[0], x = ops[op].x, h = hdr_len(x);
	const uint8_t *e = p->b + 12;

	if (!op_valid(op) || p->len < (uint32_t)h)
		return;
	if (x & X_DETH)
		e += 8;
	if ((x & X_RETH) && (x & X_WRITE) && get32(e + 8) == vmr.mr->rkey)
		arena_mask_va(&vmr, get64(e), get32(e + 12), M_WFILL);
	if ((x & X_ATMETH) && get32(e + 8) == vmr.mr->rkey)
		arena_mask_va(&vmr, get64(e), 8, M_ANY);
}

/* ---- accounting of the lockstep packets, by kind --------------------------------- */

struct kind {
	char name[96];
	long sent, unaccounted, twice, wrong, late;
	const struct pkt *first;	/* a copy of the first problem packet */
	struct ctrs moved;		/* what its first problem moved instead */
};

#define NKIND 2048
static struct kind kinds[NKIND];
static int nkinds;

static struct kind *kind_of(const struct pkt *p)
{
	char name[96];
	int i, op = p->b[0];

	if (p->var == V_TRUNC)
		snprintf(name, sizeof(name), "%s %s truncated",
			 fam_name[p->fam], tgt_name[p->tgt]);
	else
		snprintf(name, sizeof(name), "%s %s %s %s%s", fam_name[p->fam],
			 tgt_name[p->tgt], ops[op].name, var_name[p->var],
			 p->var == V_OK ? psn_name[p->psnrel] : "");
	for (i = 0; i < nkinds; i++)
		if (!strcmp(kinds[i].name, name))
			return &kinds[i];
	if (nkinds == NKIND)
		return &kinds[NKIND - 1];
	snprintf(kinds[nkinds].name, sizeof(kinds[0].name), "%s", name);
	return &kinds[nkinds++];
}

static long acc_sent, acc_counted, acc_unaccounted, acc_twice, acc_wrong;
static long acc_late, acc_extra;
static long last_d;		/* how often the last packet was counted */
static bool patient;		/* probes: wait the full second for a count */
static double wait_total;	/* ms spent waiting for the counters */

/*
 * Which of the breakdown counters the packets counted nowhere moved, with
 * the kind of the first: the driver's path that forgets them.
 */
struct sig {
	char moved[160];
	long n;
	char sample[96];
};

static struct sig sigs[32];
static int nsigs;

static int sig_note(const struct ctrs *moved, const char *kind)
{
	char m[160];
	int o = 0, i;

	static const int breakdown[] = { C_OOS, C_DUP, C_UDD };

	m[0] = 0;
	for (i = 0; i < 3; i++)
		if (moved->v[breakdown[i]])
			o += snprintf(m + o, sizeof(m) - o, "%s%s", o ? ", " : "",
				      cname[breakdown[i]]);
	if (!o)
		snprintf(m, sizeof(m), "none of %s, %s, %s", cname[C_OOS],
			 cname[C_DUP], cname[C_UDD]);
	for (i = 0; i < nsigs; i++)
		if (!strcmp(sigs[i].moved, m))
			break;
	if (i == nsigs) {
		if (nsigs == 32)
			return -1;
		nsigs++;
		snprintf(sigs[i].moved, sizeof(sigs[i].moved), "%s", m);
		snprintf(sigs[i].sample, sizeof(sigs[i].sample), "%s", kind);
	}
	sigs[i].n++;
	return i;
}

/*
 * Packets not counted when their wait ended: a count that comes later
 * (the work item was slow) is theirs, not a second one of the packet in
 * whose wait it shows.
 */
struct pend {
	struct kind *k;
	int sig;
};

static struct pend pend[64];
static int npend;

/* @extra counts arrived that no packet being waited for made. */
static void late_counts(long extra)
{
	while (extra > 0 && npend > 0) {
		struct pend *q = &pend[--npend];

		q->k->unaccounted--;
		q->k->late++;
		acc_unaccounted--;
		acc_late++;
		if (q->sig >= 0)
			sigs[q->sig].n--;
		extra--;
	}
	acc_extra += extra;
}

/* Wait for the counters to rest; what moved meanwhile came late. */
static void absorb(struct ctrs *base)
{
	struct ctrs c;
	long extra;

	ctr_settle(&c, 30, 2000);
	extra = csum3(&c) - csum3(base);
	acc_counted += extra;
	late_counts(extra);
	*base = c;
}

/*
 * Send @p and wait until DEV0 counted it; note how. A packet that moved
 * out_of_sequence or duplicate_requests but none of the three counters
 * within a few milliseconds is not waited for longer.
 */
static long send_counted(struct pkt *p, struct ctrs *base)
{
	struct ctrs c, moved;
	double t0, brk = 0;
	uint64_t d, dp, dd, di;
	struct kind *k;
	bool good, merged = false;
	int i;

	if (!send_pkt(p))
		return -1;
	acc_sent++;
	t0 = now_ms();
	for (;;) {
		ctr_read(idx0, &c);
		if (csum3(&c) != csum3(base))
			break;
		if (!patient && (c.v[C_OOS] != base->v[C_OOS] ||
				 c.v[C_DUP] != base->v[C_DUP] ||
				 c.v[C_SEQN] != base->v[C_SEQN])) {
			if (!brk)
				brk = now_ms();
			else if (now_ms() - brk > 5)
				break;
		}
		if (now_ms() - t0 > (patient ? 1000 : wait_ms))
			break;
		sleep_us(50);
	}
	wait_total += now_ms() - t0;
	for (i = 0; i < C_MAX; i++)
		moved.v[i] = c.v[i] - base->v[i];
	dp = c.v[C_RXP] - base->v[C_RXP];
	dd = c.v[C_RXD] - base->v[C_RXD];
	di = c.v[C_ICRC] - base->v[C_ICRC];
	d = dp + dd + di;
	acc_counted += d;
	if (d > 1 && npend) {
		long use = (long)d - 1 < npend ? (long)d - 1 : npend;

		late_counts(use);
		d -= use;
		merged = true;
	}
	switch (p->expect) {
	case E_DROP: good = dd == 1; break;
	case E_ICRC: good = di == 1; break;
	case E_DROP_OR_ICRC: good = dd + di == 1; break;
	default: good = dp + dd == 1; break;
	}
	/* with a late count in the same window, which was which is unknown */
	good = (good || merged) && d == 1;
	k = kind_of(p);
	k->sent++;
	if (!good) {
		if (!d) {
			k->unaccounted++;
			acc_unaccounted++;
			if (npend == 64)
				memmove(pend, pend + 1, sizeof(pend[0]) * --npend);
			pend[npend].k = k;
			pend[npend++].sig = sig_note(&moved, k->name);
		} else if (d > 1) {
			k->twice++;
			acc_twice++;
		} else {
			k->wrong++;
			acc_wrong++;
		}
		if (!k->first) {
			struct pkt *cp = malloc(sizeof(*cp));

			if (cp) {
				*cp = *p;
				k->first = cp;
			}
			k->moved = moved;
		}
	}
	*base = c;
	last_d = d;
	return d;
}

static void report_kinds(void)
{
	int i, j, shown = 0;

	for (i = 0; i < nsigs; i++)
		vt_info("%ld lockstep packets counted in none of rx_packets, rx_dropped, icrc_errors moved %s (the first: %s)",
			sigs[i].n, sigs[i].moved, sigs[i].sample);

	for (i = 0; i < nkinds; i++) {
		struct kind *k = &kinds[i];
		char moved[256];
		int o = 0;

		if (!k->unaccounted && !k->twice && !k->wrong)
			continue;
		if (shown++ >= 24) {
			vt_info("(more kinds left out)");
			break;
		}
		for (j = 0; j < C_MAX && k->first; j++)
			if (k->moved.v[j])
				o += snprintf(moved + o, sizeof(moved) - o, " %s%+lld",
					      cname[j], (long long)k->moved.v[j]);
		if (!o)
			snprintf(moved, sizeof(moved), " nothing");
		vt_info("%s: %ld sent, %ld counted nowhere, %ld counted more than once, %ld counted as other than %s; the first moved:%s",
			k->name, k->sent, k->unaccounted, k->twice, k->wrong,
			exp_name[k->first ? k->first->expect : 0], moved);
		if (k->first && shown <= 6)
			hexdump(k->first);
	}
}

/* ---- phases ------------------------------------------------------------------- */

/* The victim, UC and UD QPs: in the error state, made new. */
static void rearm(struct pkt *p, struct ctrs *base)
{
	int s;

	reap();
	s = qp_state(vic0, &vic_rq_psn);
	vic_st = s;
	if (s == IBV_QPS_ERR || s < 0) {
		/*
		 * Nothing of ours may be waiting in its queue when it resets
		 * (the reset drops it): the last packet was counted, or the
		 * counters have come to rest.
		 */
		if (last_d <= 0)
			absorb(base);
		vic_arm(false);
		qp_state(vic0, &vic_rq_psn);
	}
	if (!p || p->tgt == T_UC) {
		s = qp_state(uc0, &uc_rq_psn);
		if (s == IBV_QPS_ERR || s < 0) {
			if (last_d <= 0)
				absorb(base);
			uc_arm(false);
			qp_state(uc0, &uc_rq_psn);
		}
	}
	if (!p || p->tgt == T_UD || p->tgt == T_RAND) {
		s = qp_state(ud0, NULL);
		if (s == IBV_QPS_ERR || s < 0) {
			if (last_d <= 0)
				absorb(base);
			ud_arm(false);
		}
	}
}

/* A packet of one's own making, to probe one path of the receiver. */
static void probe_pkt(struct pkt *p, int fam, int op, uint32_t qpn,
		      uint32_t psn, const void *ext, int extlen, uint32_t paylen,
		      bool bad_icrc)
{
	uint32_t n, c, pad = -paylen & 3;

	memset(p, 0, sizeof(*p));
	p->fam = fam;
	p->ttl = 64;
	p->ipid = next_ipid();
	p->sport = fam == F_V6 ? v6_sport : 0xc123;
	p->b[0] = op;
	p->b[1] = pad << 4;
	put16(p->b + 2, 0xffff);
	put32(p->b + 4, qpn);
	put32(p->b + 8, 0x80000000u | (psn & 0xffffff));
	memcpy(p->b + 12, ext, extlen);
	memset(p->b + 12 + extlen, 0x3c, paylen);
	memset(p->b + 12 + extlen + paylen, 0, pad);
	n = 12 + extlen + paylen + pad;
	c = icrc(p, n, true) ^ (bad_icrc ? 0x10 : 0);
	p->b[n] = c;
	p->b[n + 1] = c >> 8;
	p->b[n + 2] = c >> 16;
	p->b[n + 3] = c >> 24;
	p->len = n + 4;
}

/*
 * Each path of the receiver once, in order, with what it must count;
 * returns true if the UD QP received the two datagrams meant to show that
 * the ICRC of this program is right (IPv4 and IPv6).
 */
static bool probes(struct ctrs *base)
{
	uint8_t deth[8], reth[16];
	struct pkt p;
	struct ibv_wc wc;
	struct ctrs c;
	uint32_t psn;
	bool icrc_ok = true;
	int i;

	patient = true;
	put32(deth, UD_QKEY);
	put32(deth + 4, vic1->qp_num);
	for (i = 0; i < 2; i++) {
		int fam = i ? F_V6 : F_V4;
		uint8_t *buf = rbuf.mem + rbuf.mr_off + R_UD;

		drain(udcq);
		probe_pkt(&p, fam, 0x64, qpn_of(ud0), 0, deth, 8, 64, false);
		p.tgt = T_UD;
		p.expect = E_ANY;
		send_counted(&p, base);
		if (poll1(udcq, &wc, 2000) == 1 && wc.status == IBV_WC_SUCCESS &&
		    wc.byte_len == 40 + 64) {
			size_t off = (wc.wr_id - R_UD) * RSTRIDE;

			vt_check(vt_all_bytes(buf + off + 40, 64, 0x3c),
				 "probe: a UD datagram over %s with this program's ICRC reaches the UD QP: 64 bytes after the 40-byte GRH area",
				 fam == F_V6 ? "IPv6" : "IPv4");
			rbuf_post(ud0, R_UD, UD_RLEN, wc.wr_id - R_UD);
		} else {
			vt_bad("probe: a UD datagram over %s with this program's ICRC did not reach the UD QP (the ICRC computation or the wire is broken)",
			       fam == F_V6 ? "IPv6" : "IPv4");
			icrc_ok = false;
		}
	}
	if (!icrc_ok) {
		patient = false;
		return false;
	}

	struct {
		const char *desc;
		int fam, op;
		struct ibv_qp *qp;
		int dpsn;		/* from the victim's expected PSN */
		int ext;		/* 0 none, 1 DETH, 2 RETH */
		uint32_t paylen;
		bool bad_icrc;
		int expect;
	} t[] = {
		{ "the same datagram with one ICRC bit flipped", F_V4, 0x64,
		  ud0, 0, 1, 64, true, E_ICRC },
		{ "an RC SEND_ONLY to the UD QP", F_V4, 0x04, ud0, 0, 0, 8,
		  false, E_DROP },
		{ "a SEND_ONLY to the victim from another address (10.9.0.3)",
		  F_V4SPOOF, 0x04, vic0, 0, 0, 8, false, E_DROP },
		{ "a SEND_ONLY to the bystander, whose peer is link-local, from fd00:9::2",
		  F_V6, 0x04, byst0, 0, 0, 8, false, E_DROP },
		{ "a SEND_ONLY to the victim one PSN behind (a duplicate)", F_V4,
		  0x04, vic0, -1, 0, 8, false, E_ANY },
		{ "a SEND_ONLY to the victim one PSN ahead (out of sequence)",
		  F_V4, 0x04, vic0, 1, 0, 8, false, E_ANY },
		{ "a READ_REQUEST to the victim ten PSNs ahead", F_V4, 0x0c,
		  vic0, 10, 2, 0, false, E_ANY },
		{ "a UC SEND_MIDDLE to the UC QP, PSN ahead", F_V4, 0x21, uc0,
		  5, 0, MTU, false, E_ANY },
		{ "a UC SEND_ONLY to the UC QP, PSN ahead", F_V4, 0x24, uc0, 7,
		  0, 8, false, E_ANY },
		{ "an ACK to the victim for a PSN it never sent", F_V4, 0x11,
		  vic0, 0, 0, 0, false, E_ANY },
	};

	for (i = 0; i < (int)(sizeof(t) / sizeof(t[0])); i++) {
		uint8_t *ext = NULL;
		int extlen = 0;
		long before_unacc = acc_unaccounted + acc_twice + acc_wrong;
		struct ctrs b = *base;

		rearm(NULL, base);
		b = *base;
		if (t[i].qp == uc0)
			psn = uc_rq_psn + t[i].dpsn;
		else if (t[i].op == 0x11)
			psn = vic_sq_psn + 0x1000;
		else
			psn = vic_rq_psn + t[i].dpsn;
		if (t[i].ext == 1) {
			ext = deth;
			extlen = 8;
		} else if (t[i].ext == 2) {
			put64(reth, aaddr(&vmr, 0));
			put32(reth + 8, vmr.mr->rkey);
			put32(reth + 12, 16);
			ext = reth;
			extlen = 16;
		} else if (t[i].op == 0x11) {
			static uint8_t aeth[4] = { 0x1f };

			ext = aeth;
			extlen = 4;
		}
		probe_pkt(&p, t[i].fam, t[i].op, qpn_of(t[i].qp), psn, ext,
			  extlen, t[i].paylen, t[i].bad_icrc);
		p.tgt = t[i].qp == vic0 ? T_VIC : t[i].qp == uc0 ? T_UC :
			t[i].qp == ud0 ? T_UD : T_BYST;
		p.expect = t[i].expect;
		p.var = t[i].bad_icrc ? V_BADICRC : V_OK;
		p.psnrel = t[i].dpsn < 0 ? P_DUP : t[i].dpsn > 0 ? P_AHEAD : P_EXP;
		send_counted(&p, base);
		c = *base;
		if (acc_unaccounted + acc_twice + acc_wrong == before_unacc) {
			vt_ok("probe: %s: counted once, in %s (rx_packets %+lld, rx_dropped %+lld, icrc_errors %+lld)",
			      t[i].desc, exp_name[t[i].expect],
			      (long long)(c.v[C_RXP] - b.v[C_RXP]),
			      (long long)(c.v[C_RXD] - b.v[C_RXD]),
			      (long long)(c.v[C_ICRC] - b.v[C_ICRC]));
		} else {
			char moved[256];
			int o = 0, j;

			for (j = 0; j < C_MAX; j++)
				if (c.v[j] != b.v[j])
					o += snprintf(moved + o, sizeof(moved) - o,
						      " %s%+lld", cname[j],
						      (long long)(c.v[j] - b.v[j]));
			vt_bad("probe: %s: expected one count in %s, the counters moved:%s",
			       t[i].desc, exp_name[t[i].expect],
			       o ? moved : " not at all");
			hexdump(&p);
		}
	}

	/* QP1: a datagram within the path MTU, longer than a MAD */
	put32(deth, GSI_QKEY);
	put32(deth + 4, 1);
	probe_pkt(&p, F_V4, 0x64, 1, 0, deth, 8, 600, false);
	p.tgt = T_GSI;
	p.expect = E_ANY;
	send_counted(&p, base);
	sleep_us(100000);
	i = kqp_state(idx0, 1);
	if (!vt_check(i == IBV_QPS_RTS,
		      "probe: a 600-byte datagram to QP1 (a MAD is 256 bytes, the path MTU %u): QP1 is %s, expected RTS (what its receives cannot hold is dropped)",
		      MTU, state_name(i)))
		hexdump(&p);
	patient = false;
	return true;
}

static void fuzz_lockstep(long n, struct ctrs *base, long *excluded)
{
	struct pkt p;
	long i;
	struct ctrs a, b;
	double t0 = now_ms();
	bool gsi_dead = kqp_state(idx0, 1) != IBV_QPS_RTS;

	if (gsi_dead)
		vt_info("QP1 of %s is not RTS before the packets (%d)", d0.name,
			kqp_state(idx0, 1));
	for (i = 0; i < n; i++) {
		gen(&p);
		shadow_pkt(&p);
		send_counted(&p, base);
		rearm(&p, base);
		/* the packet that puts QP1 in the error state, if one does */
		if (!gsi_dead && p.len >= 8 && (get32(p.b + 4) & 0xffffff) == 1 &&
		    kqp_state(idx0, 1) == IBV_QPS_ERR) {
			gsi_dead = true;
			vt_bad("QP1 of %s is in the error state after packet %ld, a %s (payload %u bytes): no MAD, no rdma_cm connection reaches %s any more",
			       d0.name, i, kind_of(&p)->name,
			       p.len - hdr_len(ops[p.b[0]].x) - 4, d0.name);
			hexdump(&p);
		}
		if (i && i % 2000 == 0) {
			vt_info("%ld lockstep packets, %.1f s; victim reset %d times, UC %d, UD %d",
				i, (now_ms() - t0) / 1000, vic_arms, uc_arms, ud_arms);
			/* the bystander, between two batches */
			absorb(base);
			b = *base;
			if (!byst_round(100 + i / 2000))
				vt_bad("the bystander failed after %ld hostile packets", i);
			ctr_settle(&a, 100, 3000);
			*excluded += csum3(&a) - csum3(&b);
			*base = a;
		}
	}
	absorb(base);
}

static void fuzz_burst(long n, long *sent)
{
	struct pkt p;
	long i;

	for (i = 0; i < n; i++) {
		gen(&p);
		shadow_pkt(&p);
		if (send_pkt(&p))
			(*sent)++;
		/* let the receiver's softirq and work items breathe */
		if (i % 64 == 63)
			sleep_us(500);
	}
}

static long softnet_dropped(void)
{
	FILE *f = fopen("/proc/net/softnet_stat", "r");
	unsigned long a, d;
	long sum = 0;
	char line[512];

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx %lx", &a, &d) == 2)
			sum += d;
	fclose(f);
	return sum;
}

/* ---- main --------------------------------------------------------------------------- */

static void sockets(void)
{
	struct sockaddr_in6 me = { .sin6_family = AF_INET6, .sin6_addr = a6_src };
	socklen_t sl = sizeof(me);
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };

	raw4 = socket(AF_INET, SOCK_RAW, IPPROTO_RAW);
	udp6 = socket(AF_INET6, SOCK_DGRAM, 0);
	nlfd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (raw4 < 0 || udp6 < 0 || nlfd < 0) {
		vt_bad("sockets (raw IPv4, UDP IPv6, RDMA netlink): %s",
		       strerror(errno));
		exit(2);
	}
	if (bind(udp6, (struct sockaddr *)&me, sizeof(me)) ||
	    getsockname(udp6, (struct sockaddr *)&me, &sl)) {
		vt_bad("binding a UDP socket to the IPv6 address of DEV1's GID: %s (run this in DEV1's namespace)",
		       strerror(errno));
		exit(2);
	}
	v6_sport = ntohs(me.sin6_port);
	if (bind(nlfd, (struct sockaddr *)&nl, sizeof(nl))) {
		vt_bad("netlink: %s", strerror(errno));
		exit(2);
	}
}

static long envl(const char *name, long def)
{
	const char *s = getenv(name);

	return s && *s ? strtol(s, NULL, 0) : def;
}

int main(int argc, char **argv)
{
	struct ctrs start, base, end;
	long excluded = 0, burst_sent = 0, nd0, nd1, lock_n;
	cpu_set_t cpus;
	double t0 = now_ms();
	int s;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: %s DEV0 DEV1 (run in DEV1's network namespace)\n",
			argv[0]);
		return 2;
	}
	seed = envl("FUZZ_SEED", 1);
	n_total = envl("FUZZ_HOSTILE_PACKETS", 6000);
	n_burst = envl("FUZZ_HOSTILE_BURST", 2000);
	wait_ms = envl("FUZZ_HOSTILE_WAIT_MS", 100);
	if (n_burst > n_total)
		n_burst = n_total;
	lock_n = n_total - n_burst;
	vt_seed(seed);
	vt_info("seed %llu (FUZZ_SEED), %ld packets (FUZZ_HOSTILE_PACKETS), %ld of them in bursts (FUZZ_HOSTILE_BURST)",
		(unsigned long long)seed, n_total, n_burst);
	crc_init();
	ops_init();
	/* one CPU: packets arrive in the order they are sent */
	CPU_ZERO(&cpus);
	CPU_SET(sched_getcpu(), &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);

	dev_open(&d0, argv[1]);
	dev_open(&d1, argv[2]);
	memcpy(&a4_dst, d0.g4.raw + 12, 4);
	memcpy(&a4_src, d1.g4.raw + 12, 4);
	a4_spoof.s_addr = htonl(ntohl(a4_src.s_addr) + 1);
	memcpy(&a6_dst, d0.gula.raw, 16);
	memcpy(&a6_src, d1.gula.raw, 16);
	sockets();
	idx0 = dev_index(d0.name);
	idx1 = dev_index(d1.name);
	if (idx0 < 0 || idx1 < 0) {
		vt_bad("RDMA netlink does not know %s or %s", d0.name, d1.name);
		return 2;
	}

	/* the victim's, UC and UD QPs share a PD; the bystander has its own */
	pd0v = vt_alloc_pd(d0.ctx);
	pd0b = vt_alloc_pd(d0.ctx);
	pd1v = vt_alloc_pd(d1.ctx);
	pd1b = vt_alloc_pd(d1.ctx);
	arena_init(&vmr, "victim MR", pd0v, 4, VMR_OFF, VMR_LEN,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, FILL);
	arena_init(&lbuf, "victim's request buffers", pd0v, 4, PG + 10, 2 * PG,
		   IBV_ACCESS_LOCAL_WRITE, FILL);
	memset(lbuf.mem + lbuf.mr_off + L_SRC, SRCFILL, L_SRC_LEN);
	memset(lbuf.shadow + lbuf.mr_off + L_SRC, SRCFILL, L_SRC_LEN);
	arena_mask(&lbuf, L_READ, L_READ_LEN, M_ANY);
	arena_mask(&lbuf, L_ATOMIC, 8, M_ANY);
	arena_init(&rbuf, "receive buffers", pd0v,
		   (RBUF_LEN + 2 * PG + PG - 1) / PG + 1, PG + 40, RBUF_LEN,
		   IBV_ACCESS_LOCAL_WRITE, FILL);
	for (s = 0; s < NRECV; s++) {
		arena_mask(&rbuf, R_VIC + s * RSTRIDE, RC_RLEN, M_ANY);
		arena_mask(&rbuf, R_UC + s * RSTRIDE, RC_RLEN, M_ANY);
		arena_mask(&rbuf, R_UD + s * RSTRIDE, UD_RLEN, M_ANY);
	}
	arena_init(&b0, "bystander MR on DEV0", pd0b, 3, PG + 200, B_LEN,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ, 0);
	arena_init(&b1, "bystander MR on DEV1", pd1b, 3, PG + 300, B_LEN,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ, 0);
	arena_init(&v1mr, "victim peer's MR", pd1v, 3, PG, 2 * PG,
		   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC, 0);

	vscq = mkcq(d0.ctx, 128);
	vrcq = mkcq(d0.ctx, 128);
	ucq = mkcq(d0.ctx, 128);
	udcq = mkcq(d0.ctx, 128);
	bcq0 = mkcq(d0.ctx, 64);
	bcq1 = mkcq(d1.ctx, 64);
	v1cq = mkcq(d1.ctx, 64);
	vic0 = mkqp(pd0v, vscq, vrcq, IBV_QPT_RC);
	vic1 = mkqp(pd1v, v1cq, v1cq, IBV_QPT_RC);
	uc0 = mkqp(pd0v, ucq, ucq, IBV_QPT_UC);
	uc1 = mkqp(pd1v, v1cq, v1cq, IBV_QPT_UC);
	ud0 = mkqp(pd0v, udcq, udcq, IBV_QPT_UD);
	byst0 = mkqp(pd0b, bcq0, bcq0, IBV_QPT_RC);
	byst1 = mkqp(pd1b, bcq1, bcq1, IBV_QPT_RC);

	/* the victim's peer: connected, then in the error state for good */
	if (qp_connect(vic1, &d0.g4, d1.gid4, vic0->qp_num, 0, 0,
		       IBV_ACCESS_LOCAL_WRITE, 14) || qp_error(vic1) ||
	    qp_connect(uc1, &d0.g4, d1.gid4, uc0->qp_num, 0, 0,
		       IBV_ACCESS_LOCAL_WRITE, 0) ||
	    qp_connect(byst0, &d1.gll, d0.gidll, byst1->qp_num, 0x123456,
		       0x654321, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 18) ||
	    qp_connect(byst1, &d0.gll, d1.gidll, byst0->qp_num, 0x654321,
		       0x123456, IBV_ACCESS_LOCAL_WRITE |
		       IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ, 18)) {
		vt_bad("connecting the QPs: %s", vt_errname(errno));
		return 2;
	}
	vic_arm(true);
	uc_arm(true);
	ud_arm(true);
	qp_state(vic0, &vic_rq_psn);
	qp_state(uc0, &uc_rq_psn);
	vt_info("%s: victim QP %u (RC, IPv4 GIDs, MR rkey 0x%x at 0x%llx, %u bytes), UC QP %u, UD QP %u; bystander QP %u (link-local GIDs, another PD) <-> %s QP %u",
		d0.name, vic0->qp_num, vmr.mr->rkey,
		(unsigned long long)aaddr(&vmr, 0), VMR_LEN, uc0->qp_num,
		ud0->qp_num, byst0->qp_num, d1.name, byst1->qp_num);

	vt_check(byst_round(1),
		 "the bystander works before the packets: SEND both ways, WRITE and READ both ways, every byte as sent");

	/* the counters from here on: everything reaching DEV0 is ours */
	ctr_settle(&start, 100, 3000);
	base = start;
	nd0 = softnet_dropped();

	if (!probes(&base)) {
		vt_bad("the probes failed: no fuzzing with a wrong ICRC");
		return vt_exit();
	}
	fuzz_lockstep(lock_n, &base, &excluded);
	vt_info("lockstep: %ld packets sent in %.1f s (%.1f s waiting for the counters), %ld counted (%ld of them late: after the wait of the next packet began), %ld counted nowhere, %ld more than once, %ld in another counter than expected; %ld counts of no packet",
		acc_sent, (now_ms() - t0) / 1000, wait_total / 1000, acc_counted,
		acc_late, acc_unaccounted, acc_twice, acc_wrong, acc_extra);
	vic_st = qp_state(vic0, NULL);
	fuzz_burst(n_burst, &burst_sent);
	{
		int i, n = 0;

		for (i = 0; i < 256; i++)
			n += op_seen[i];
		vt_info("%d of the 256 opcode values sent", n);
	}
	ctr_settle(&end, 500, 20000);
	nd1 = softnet_dropped();
	reap();

	/* the accounting */
	{
		long total = n_sent, counted = (long)(csum3(&end) - csum3(&start)) - excluded;
		long dropped_before = nd1 - nd0;

		vt_info("%s after %ld packets (%ld lockstep, %ld burst): rx_packets %+lld, rx_dropped %+lld, icrc_errors %+lld; out_of_sequence %+lld, duplicate_requests %+lld, NAKs sent: seq %+lld inv %+lld access %+lld op %+lld rnr %+lld; %ld counted from the bystander's checks left out; %ld dropped by the kernel before UDP (softnet)",
			d0.name, total, acc_sent, burst_sent,
			(long long)(end.v[C_RXP] - start.v[C_RXP]),
			(long long)(end.v[C_RXD] - start.v[C_RXD]),
			(long long)(end.v[C_ICRC] - start.v[C_ICRC]),
			(long long)(end.v[C_OOS] - start.v[C_OOS]),
			(long long)(end.v[C_DUP] - start.v[C_DUP]),
			(long long)(end.v[C_SEQN] - start.v[C_SEQN]),
			(long long)(end.v[C_INVN] - start.v[C_INVN]),
			(long long)(end.v[C_ACCN] - start.v[C_ACCN]),
			(long long)(end.v[C_OPN] - start.v[C_OPN]),
			(long long)(end.v[C_RNRN] - start.v[C_RNRN]),
			excluded, dropped_before);
		if (n_send_err)
			vt_info("%ld packets could not be sent (not counted as sent)",
				n_send_err);
		report_kinds();
		vt_check(acc_unaccounted + acc_twice + acc_wrong == 0,
			 "lockstep: each of the %ld packets counted once, in the counter its kind belongs to (%ld nowhere, %ld more than once, %ld elsewhere)",
			 acc_sent, acc_unaccounted, acc_twice, acc_wrong);
		vt_check(counted == total - dropped_before,
			 "accounting: rx_packets + rx_dropped + icrc_errors moved by %ld for the %ld packets sent to %s (%ld of them dropped before reaching it): %ld missing, %ld of them among the lockstep packets",
			 counted, total, d0.name, dropped_before,
			 total - dropped_before - counted, acc_unaccounted);
	}

	/* memory */
	arena_check(&vmr, "after the packets");
	arena_check(&lbuf, "after the packets");
	arena_check(&rbuf, "after the packets");
	arena_check(&b0, "after the packets");
	{
		size_t i, w = 0, a = 0, wr = 0;

		for (i = 0; i < VMR_LEN; i++) {
			uint8_t m = vmr.mask[vmr.mr_off + i];

			w += m == M_WFILL;
			a += m == M_ANY;
			wr += vmr.mem[vmr.mr_off + i] != FILL;
		}
		vt_info("victim MR: %zu of %zu bytes reachable by WRITEs with its rkey, %zu by atomics; %zu bytes were written",
			w, (size_t)VMR_LEN, a, wr);
	}

	/* the QPs */
	s = qp_state(vic0, NULL);
	vt_info("victim QP: %s after the lockstep packets, %s after the bursts; reset and connected again %d times (UC %d, UD %d) after the error state; its own requests: %d completed by forged responses, %d with an error",
		state_name(vic_st), state_name(s), vic_arms, uc_arms, ud_arms,
		vic_reqs_done, vic_reqs_failed);
	vt_check(byst_round(2) && byst_round(3),
		 "the bystander works after the packets: SEND both ways, WRITE and READ both ways, every byte as sent");
	vt_check(qp_state(byst0, NULL) == IBV_QPS_RTS &&
		 qp_state(byst1, NULL) == IBV_QPS_RTS,
		 "the bystander's QPs are still RTS");
	arena_check(&b0, "after the bystander's last checks");

	/* the victim, with its peer again */
	{
		uint8_t tmp[3000];
		struct ibv_wc wc;
		bool ok;

		ok = !qp_connect(vic0, &d1.g4, d0.gid4, vic1->qp_num, 0x1000,
				 0x2000, IBV_ACCESS_LOCAL_WRITE |
				 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
				 IBV_ACCESS_REMOTE_ATOMIC, 18) &&
		     !qp_connect(vic1, &d0.g4, d1.gid4, vic0->qp_num, 0x2000,
				 0x1000, IBV_ACCESS_LOCAL_WRITE, 18);
		drain(vscq);
		drain(vrcq);
		drain(v1cq);
		pattern(tmp, 3000, 77);
		memcpy(v1mr.mem + v1mr.mr_off, tmp, 3000);
		ok = ok && !post_send(vic1, 1, IBV_WR_RDMA_WRITE, aaddr(&v1mr, 0),
				      3000, v1mr.mr->lkey, aaddr(&vmr, 2000),
				      vmr.mr->rkey) &&
		     poll1(v1cq, &wc, 10000) == 1 && wc.status == IBV_WC_SUCCESS;
		ok = ok && !memcmp(vmr.mem + vmr.mr_off + 2000, tmp, 3000);
		memset(v1mr.mem + v1mr.mr_off + 4096, 0, 3000);
		ok = ok && !post_send(vic1, 2, IBV_WR_RDMA_READ,
				      aaddr(&v1mr, 4096), 3000, v1mr.mr->lkey,
				      aaddr(&vmr, 2000), vmr.mr->rkey) &&
		     poll1(v1cq, &wc, 10000) == 1 && wc.status == IBV_WC_SUCCESS;
		ok = ok && !memcmp(v1mr.mem + v1mr.mr_off + 4096, tmp, 3000);
		vt_check(ok, "the victim, reset and connected to its peer again, takes a 3000-byte WRITE into its MR and answers a READ of it");
	}

	/* datagrams longer than the path MTU */
	{
		uint8_t deth[8];
		struct pkt p;
		struct ctrs b;

		ud_arm(false);
		patient = true;
		put32(deth, UD_QKEY);
		put32(deth + 4, vic1->qp_num);
		ctr_settle(&b, 30, 2000);
		probe_pkt(&p, F_V4, 0x64, qpn_of(ud0), 0, deth, 8, MTU + 76,
			  false);
		p.tgt = T_UD;
		p.expect = E_ANY;
		send_counted(&p, &b);
		sleep_us(100000);
		reap();
		s = qp_state(ud0, NULL);
		if (!vt_check(s == IBV_QPS_RTS,
			      "a %u-byte UD datagram (path MTU %u) to the UD QP: the QP is %s, expected RTS (dropped, counted)",
			      MTU + 76, MTU, state_name(s)))
			hexdump(&p);
	}
	vt_info("%.1f s in all", (now_ms() - t0) / 1000);
	return vt_exit();
}
