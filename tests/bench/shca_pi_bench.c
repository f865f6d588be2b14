// SPDX-License-Identifier: GPL-2.0
/*
 * shca_pi_bench - throughput of softhca's T10-DIF signature engine
 * (integrity MRs) against the CPU doing the same work, measured from
 * inside the kernel through ib_core only, driven the way nvme-rdma,
 * nvmet-rdma and iSER drive integrity MRs.
 *
 *   insmod shca_pi_bench.ko pairs=softhca0:softhca1,softhca0:softhca0
 *
 * For a pi_interval of 512 and of 4096 bytes and 64 KiB and 1 MiB of
 * data per message, each of these cells runs for cell_ms milliseconds:
 *
 *   crc       crc_t10dif() over every block of the data, one thread, no
 *             device: the limit of an engine that computes each guard
 *             with this CPU
 *   crc+copy  the same, plus copying each block into an interleaved wire
 *             buffer followed by its tuple: PI insert done by the CPU
 *   memcpy    memcpy() of the data: the limit of the data path
 *   plain     RDMA WRITE of the data from a MEM_REG MR into a MEM_REG MR:
 *             the data path without the engine
 *   insert    RDMA WRITE from an integrity MR (memory domain NONE, wire
 *             T10-DIF CRC) into a MEM_REG MR: the engine generates the PI
 *   strip     RDMA WRITE of a valid wire stream (data with its tuples
 *             interleaved) from a MEM_REG MR into an integrity MR (wire
 *             T10-DIF CRC, memory NONE): the engine checks and strips it
 *   pass      integrity MR to integrity MR, T10-DIF CRC in memory (the
 *             tuples in a metadata buffer of their own) and on the wire at
 *             both ends, as between nvme-rdma and nvmet-rdma: the source's
 *             engine checks the memory PI, the destination's the wire PI
 *   csum      the same with the IP checksum as the guard in the source's
 *             memory (iSER's choice), converted to CRC on the wire, and
 *             CRC in the destination's memory
 *
 * Every device cell gets a fresh pair of RC QPs created with
 * IB_QP_CREATE_INTEGRITY_EN, A on the first device of the pair, B on the
 * second, connected by hand (RoCE v2). slots messages are in flight, each
 * with buffers and MRs of its own, recycled for every message as a ULP
 * recycles them: B maps its destination MR (ib_map_mr_sg() or
 * ib_map_mr_sg_pi() and the signature attributes) and posts LOCAL_INV
 * (from the second message on) + IB_WR_REG_MR or IB_WR_REG_MR_INTEGRITY;
 * when that completes, A does the same for its source MR and, in the same
 * post, the RDMA WRITE from the source MR's lkey at its iova to the
 * destination MR's rkey at its iova, over the wire view of the message
 * (the data, plus 8 bytes per block when the wire carries PI). When the
 * WRITE completes, ib_check_mr_status() reads the signature status of
 * every integrity MR involved - which the device requires before it
 * accepts the next registration - and any signature error is counted and
 * reported. After each cell every destination byte, PI included, is
 * compared with what the CPU computed, and the bytes after it must be
 * untouched: a device that moves nothing, or the wrong bytes, shows up
 * as an error, not as a fast result. The CPU cells use the buffers of
 * the first slot.
 *
 * Every cell is measured reps times; every other repetition runs the
 * cells in the reverse order. Results go to the kernel log, one record
 * per line, for tests/bench/pi-bench.sh to tabulate:
 *
 *   shca_pi_bench: bw PAIR CELL INTERVAL SIZE REP MESSAGES NANOSECONDS
 *   shca_pi_bench: sigerr PAIR CELL INTERVAL SIZE REP END COUNT TYPE
 *                  EXPECTED ACTUAL OFFSET
 *   shca_pi_bench: err PAIR CELL INTERVAL SIZE REP REASON
 *   shca_pi_bench: done
 *
 * PAIR is "-" for the CPU cells, SIZE the data bytes of a message, END
 * "src" or "dst", COUNT the messages whose status reported an error, the
 * rest the first error reported (struct ib_sig_err). Lines starting with
 * "#" are diagnostics.
 *
 * All the work happens in module init; the module then stays loaded doing
 * nothing, rmmod it afterwards. A measurement, never a test: it does not
 * fail on a slow or failing device, it reports it. Cells that would start
 * after budget_s seconds are reported as skipped.
 */

#include <linux/crc-t10dif.h>
#include <linux/ktime.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/t10-pi.h>
#include <net/checksum.h>
#include <rdma/ib_verbs.h>

#include "shca_bench.h"

#define PI_MAX_PAIRS	2
#define PI_MAX_SLOTS	8
#define PI_TUPLE	sizeof(struct t10_pi_tuple)
#define PI_MAX_DATA	SZ_1M		/* data bytes of the largest message */
#define PI_MIN_IVL	512
#define PI_MAX_META	(PI_MAX_DATA / PI_MIN_IVL * PI_TUPLE)
#define PI_MAX_WIRE	(PI_MAX_DATA + PI_MAX_META)
#define PI_TAIL		SZ_4K		/* must stay untouched after a buffer */
#define PI_POISON	0xa5
#define PI_APP_TAG	0x5aa5
#define PI_STALL_NS	(10ULL * NSEC_PER_SEC)
#define PI_POLL		16
#define PI_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

static char *pairs = "softhca0:softhca1,softhca0:softhca0";
module_param(pairs, charp, 0444);
MODULE_PARM_DESC(pairs, "comma-separated A:B device pairs (at most 2); A writes to B");

static int cell_ms = 200;
module_param(cell_ms, int, 0444);
MODULE_PARM_DESC(cell_ms, "milliseconds per measurement");

static int reps = 5;
module_param(reps, int, 0444);
MODULE_PARM_DESC(reps, "measurements of every cell");

static int slots = 4;
module_param(slots, int, 0444);
MODULE_PARM_DESC(slots, "messages in flight, each with its own buffers and MRs");

static int budget_s = 600;
module_param(budget_s, int, 0444);
MODULE_PARM_DESC(budget_s, "seconds after which no further cell starts");

static const u32 pi_ivls[] = { 512, 4096 };
static const u32 pi_sizes[] = { SZ_64K, SZ_1M };
#define PI_NIVL		ARRAY_SIZE(pi_ivls)
#define PI_NSIZE	ARRAY_SIZE(pi_sizes)

/* What one end of a device cell is. */
enum pi_kind {
	PI_K_PLAIN,	/* MEM_REG MR */
	PI_K_INSERT,	/* integrity MR: memory NONE, wire CRC */
	PI_K_STRIP,	/* the same, as the destination */
	PI_K_PASS,	/* integrity MR: memory CRC, wire CRC */
	PI_K_CSUM,	/* integrity MR: memory IP checksum, wire CRC */
};

enum pi_cell {
	PI_CRC, PI_CRC_COPY, PI_MEMCPY,				/* CPU */
	PI_PLAIN, PI_INSERT, PI_STRIP, PI_PASS, PI_CSUM,	/* device */
	PI_NCELLS
};

#define PI_NCPU		PI_PLAIN
#define PI_NDEV		(PI_NCELLS - PI_PLAIN)

static const struct {
	const char *name;
	enum pi_kind src, dst;
} pi_cells[PI_NCELLS] = {
	[PI_CRC] = { "crc" },
	[PI_CRC_COPY] = { "crc+copy" },
	[PI_MEMCPY] = { "memcpy" },
	[PI_PLAIN] = { "plain", PI_K_PLAIN, PI_K_PLAIN },
	[PI_INSERT] = { "insert", PI_K_INSERT, PI_K_PLAIN },
	[PI_STRIP] = { "strip", PI_K_PLAIN, PI_K_STRIP },
	[PI_PASS] = { "pass", PI_K_PASS, PI_K_PASS },
	[PI_CSUM] = { "csum", PI_K_CSUM, PI_K_PASS },
};

/*
 * The buffers of one slot, shared by all pairs: the source data and, per
 * interval, what the CPU computes from it (golden copies, which are also
 * the sources of the cells that need them), and the destination.
 */
struct pi_bufs {
	u8 *data;			/* PI_MAX_DATA random bytes */
	u8 *wire[PI_NIVL];		/* the data with CRC tuples interleaved */
	u8 *crc_meta[PI_NIVL];		/* the CRC tuples */
	u8 *csum_meta[PI_NIVL];		/* the same with IP-checksum guards */
	u8 *dst;			/* PI_MAX_WIRE + PI_TAIL */
	u8 *dst_meta;			/* PI_MAX_META + PI_TAIL */
};

static struct pi_bufs pi_bufs[PI_MAX_SLOTS];

/* One MR of a slot and the work requests that register it. */
struct pi_mr {
	struct ib_mr *mr;
	enum pi_kind kind;
	struct ib_device *dev;
	struct scatterlist sg[2];	/* data, metadata */
	int nsg;			/* entries DMA-mapped */
	bool valid;			/* registered: LOCAL_INV before the next */
	u32 ref_tag;
	struct ib_send_wr inv;
	struct ib_reg_wr reg;
};

enum pi_state { PI_IDLE, PI_REG, PI_WRITE };

struct pi_slot {
	struct pi_mr src;		/* on A */
	struct pi_mr dst;		/* on B */
	enum pi_state state;
};

struct pi_end {
	struct ib_device *dev;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	int gid_index;
	union ib_gid gid;
	enum ib_mtu mtu;
};

struct pi_pair {
	const char *label;
	struct pi_end a;
	struct pi_end b;
	struct pi_slot slot[PI_MAX_SLOTS];
	const char *err;	/* why the current cell failed, or NULL */
	bool stalled;		/* a cell stalled: skip the rest of the pair */
};

/* One cell of one repetition. */
struct pi_run {
	enum pi_cell cell;
	int iv;			/* index into pi_ivls */
	u32 ivl;
	u32 size;		/* data bytes per message */
	u32 len;		/* bytes of the message on the wire */
	int rep;
	const char *label;
	u64 done;		/* WRITEs completed */
	u64 nerr[2];		/* messages with a signature error: src, dst */
	struct ib_sig_err first[2];
};

enum { PI_WR_DST = 1, PI_WR_SRC, PI_WR_WRITE };
#define PI_WRID(slot, what)	((u64)(slot) << 8 | (what))

static u32 pi_wire_len(u32 size, u32 ivl)
{
	return size + size / ivl * PI_TUPLE;
}

static u32 pi_ref_tag(int slot)
{
	return 0x10000 * (slot + 1) + 7;
}

static void pi_tuple(u8 *p, __be16 guard, u32 ref)
{
	struct t10_pi_tuple *t = (struct t10_pi_tuple *)p;

	t->guard_tag = guard;
	t->app_tag = cpu_to_be16(PI_APP_TAG);
	t->ref_tag = cpu_to_be32(ref);
}

static void pi_bufs_free(void)
{
	int s, i;

	for (s = 0; s < PI_MAX_SLOTS; s++) {
		struct pi_bufs *b = &pi_bufs[s];

		kfree(b->data);
		kfree(b->dst);
		kfree(b->dst_meta);
		for (i = 0; i < PI_NIVL; i++) {
			kfree(b->wire[i]);
			kfree(b->crc_meta[i]);
			kfree(b->csum_meta[i]);
		}
		memset(b, 0, sizeof(*b));
	}
}

/* Random data per slot, and its wire streams and tuples per interval. */
static int pi_bufs_alloc(void)
{
	int s, i;
	u32 b;

	for (s = 0; s < slots; s++) {
		struct pi_bufs *pb = &pi_bufs[s];

		pb->data = kmalloc(PI_MAX_DATA, GFP_KERNEL);
		pb->dst = kmalloc(PI_MAX_WIRE + PI_TAIL, GFP_KERNEL);
		pb->dst_meta = kmalloc(PI_MAX_META + PI_TAIL, GFP_KERNEL);
		if (!pb->data || !pb->dst || !pb->dst_meta)
			return -ENOMEM;
		get_random_bytes(pb->data, PI_MAX_DATA);
		for (i = 0; i < PI_NIVL; i++) {
			u32 ivl = pi_ivls[i], nblk = PI_MAX_DATA / ivl;

			pb->wire[i] = kmalloc(pi_wire_len(PI_MAX_DATA, ivl),
					      GFP_KERNEL);
			pb->crc_meta[i] = kmalloc(nblk * PI_TUPLE, GFP_KERNEL);
			pb->csum_meta[i] = kmalloc(nblk * PI_TUPLE, GFP_KERNEL);
			if (!pb->wire[i] || !pb->crc_meta[i] ||
			    !pb->csum_meta[i])
				return -ENOMEM;
			for (b = 0; b < nblk; b++) {
				const u8 *blk = pb->data + b * ivl;
				u8 *w = pb->wire[i] + b * (ivl + PI_TUPLE);
				__be16 crc = cpu_to_be16(crc_t10dif(blk, ivl));
				__be16 csum = (__force __be16)
					      ip_compute_csum(blk, ivl);
				u32 ref = pi_ref_tag(s) + b;

				memcpy(w, blk, ivl);
				pi_tuple(w + ivl, crc, ref);
				pi_tuple(pb->crc_meta[i] + b * PI_TUPLE, crc,
					 ref);
				pi_tuple(pb->csum_meta[i] + b * PI_TUPLE, csum,
					 ref);
			}
			cond_resched();
		}
	}
	return 0;
}

/* ---- the CPU cells ------------------------------------------------------ */

static void pi_cpu_pass(const struct pi_run *r, const u8 *src, u8 *dst)
{
	u32 nblk = r->size / r->ivl, b;

	switch (r->cell) {
	case PI_CRC:
		for (b = 0; b < nblk; b++)
			crc_t10dif(src + b * r->ivl, r->ivl);
		break;
	case PI_CRC_COPY:
		for (b = 0; b < nblk; b++) {
			const u8 *blk = src + b * r->ivl;
			u8 *w = dst + b * (r->ivl + PI_TUPLE);

			memcpy(w, blk, r->ivl);
			pi_tuple(w + r->ivl,
				 cpu_to_be16(crc_t10dif(blk, r->ivl)),
				 pi_ref_tag(0) + b);
		}
		break;
	default:
		memcpy(dst, src, r->size);
		break;
	}
}

static void pi_cell_cpu(struct pi_run *r)
{
	const struct pi_bufs *pb = &pi_bufs[0];
	u64 dur = (u64)cell_ms * NSEC_PER_MSEC, n = 0, t0, ns;
	const char *err = NULL;
	u32 out;

	out = r->cell == PI_CRC_COPY ? pi_wire_len(r->size, r->ivl) : r->size;
	memset(pb->dst, PI_POISON, out + PI_TAIL);
	t0 = ktime_get_ns();
	do {
		u8 *dst = pb->dst;

		OPTIMIZER_HIDE_VAR(dst);
		pi_cpu_pass(r, pb->data, dst);
		n++;
		ns = ktime_get_ns() - t0;
		cond_resched();
	} while (ns < dur);

	if (r->cell == PI_CRC_COPY &&
	    memcmp(pb->dst, pb->wire[r->iv], out))
		err = "data-mismatch";
	else if (r->cell == PI_MEMCPY && memcmp(pb->dst, pb->data, out))
		err = "data-mismatch";
	if (err)
		pr_info("shca_pi_bench: err - %s %u %u %d %s\n",
			pi_cells[r->cell].name, r->ivl, r->size, r->rep, err);
	else
		pr_info("shca_pi_bench: bw - %s %u %u %d %llu %llu\n",
			pi_cells[r->cell].name, r->ivl, r->size, r->rep, n, ns);
}

/* ---- devices, QPs and MRs ----------------------------------------------- */

static void pi_end_teardown(struct pi_end *e)
{
	if (e->cq)
		ib_free_cq(e->cq);
	if (e->pd)
		ib_dealloc_pd(e->pd);
	if (e->dev)
		ib_device_put(e->dev);
	memset(e, 0, sizeof(*e));
}

static const char *pi_end_setup(struct pi_end *e, const char *name)
{
	struct ib_port_attr port;

	e->dev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (!e->dev)
		return "no-device";
	if (!(e->dev->attrs.kernel_cap_flags & IBK_INTEGRITY_HANDOVER))
		return "no-integrity-handover";
	e->gid_index = shca_bench_pick_gid(e->dev, &e->gid);
	if (e->gid_index < 0)
		return "no-roce-v2-gid";
	if (ib_query_port(e->dev, 1, &port))
		return "query_port";
	if (port.state != IB_PORT_ACTIVE)
		return "port-down";
	e->mtu = port.active_mtu;
	e->pd = ib_alloc_pd(e->dev, 0);
	if (IS_ERR(e->pd)) {
		e->pd = NULL;
		return "alloc_pd";
	}
	e->cq = ib_alloc_cq(e->dev, NULL, 4 * slots + 16, 0, IB_POLL_DIRECT);
	if (IS_ERR(e->cq)) {
		e->cq = NULL;
		return "alloc_cq";
	}
	return NULL;
}

static void pi_cq_drain(struct ib_cq *cq)
{
	struct ib_wc wc[PI_POLL];

	while (ib_poll_cq(cq, PI_POLL, wc) > 0)
		;
}

static void pi_qps_destroy(struct pi_pair *p)
{
	if (p->a.qp)
		ib_destroy_qp(p->a.qp);
	if (p->b.qp)
		ib_destroy_qp(p->b.qp);
	p->a.qp = NULL;
	p->b.qp = NULL;
	pi_cq_drain(p->a.cq);
	pi_cq_drain(p->b.cq);
}

static int pi_qp_create(struct pi_end *e)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		/* LOCAL_INV, REG and WRITE per slot, and some slack */
		.cap = {
			.max_send_wr = 3 * slots + 4,
			.max_recv_wr = 1,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
		.create_flags = IB_QP_CREATE_INTEGRITY_EN,
	};

	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp)) {
		e->qp = NULL;
		return -EIO;
	}
	return 0;
}

/* A fresh connected, integrity-enabled QP pair; sets p->err on failure. */
static int pi_qps_create(struct pi_pair *p)
{
	enum ib_mtu mtu = min(p->a.mtu, p->b.mtu);

	pi_cq_drain(p->a.cq);
	pi_cq_drain(p->b.cq);
	if (pi_qp_create(&p->a) || pi_qp_create(&p->b)) {
		p->err = "create_qp";
		goto err;
	}
	if (shca_bench_rc_connect(p->a.qp, p->a.gid_index, p->b.qp,
				  &p->b.gid, mtu) ||
	    shca_bench_rc_connect(p->b.qp, p->b.gid_index, p->a.qp,
				  &p->a.gid, mtu)) {
		p->err = "modify_qp";
		goto err;
	}
	return 0;
err:
	pi_qps_destroy(p);
	return -EIO;
}

static bool pi_kind_integrity(enum pi_kind k)
{
	return k != PI_K_PLAIN;
}

static bool pi_kind_meta(enum pi_kind k)
{
	return k == PI_K_PASS || k == PI_K_CSUM;
}

static void pi_mr_teardown(struct pi_mr *m)
{
	if (m->mr)
		ib_dereg_mr(m->mr);
	if (m->nsg > 1)
		ib_dma_unmap_sg(m->dev, &m->sg[1], 1, DMA_BIDIRECTIONAL);
	if (m->nsg > 0)
		ib_dma_unmap_sg(m->dev, &m->sg[0], 1, DMA_BIDIRECTIONAL);
	memset(m, 0, sizeof(*m));
}

/*
 * Allocate the MR of one end of slot @s for run @r over @len bytes at
 * @buf (and @meta_len bytes of tuples at @meta) and DMA-map them.
 */
static const char *pi_mr_setup(struct pi_mr *m, struct pi_end *e,
			       enum pi_kind kind, int s, void *buf, u32 len,
			       void *meta, u32 meta_len)
{
	memset(m, 0, sizeof(*m));
	m->kind = kind;
	m->dev = e->dev;
	m->ref_tag = pi_ref_tag(s);
	if (pi_kind_integrity(kind))
		m->mr = ib_alloc_mr_integrity(e->pd,
					      DIV_ROUND_UP(PI_MAX_DATA, SZ_4K) + 1,
					      DIV_ROUND_UP(PI_MAX_META, SZ_4K) + 1);
	else
		m->mr = ib_alloc_mr(e->pd, IB_MR_TYPE_MEM_REG,
				    DIV_ROUND_UP(PI_MAX_WIRE, SZ_4K) + 1);
	if (IS_ERR(m->mr)) {
		m->mr = NULL;
		return "alloc_mr";
	}
	sg_init_one(&m->sg[0], buf, len);
	if (ib_dma_map_sg(e->dev, &m->sg[0], 1, DMA_BIDIRECTIONAL) != 1)
		return "dma-map";
	m->nsg = 1;
	if (meta) {
		sg_init_one(&m->sg[1], meta, meta_len);
		if (ib_dma_map_sg(e->dev, &m->sg[1], 1,
				  DMA_BIDIRECTIONAL) != 1)
			return "dma-map";
		m->nsg = 2;
	}
	return NULL;
}

static void pi_dif(struct ib_sig_domain *d, enum ib_t10_dif_bg_type bg,
		   u32 ivl, u32 ref_tag)
{
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = bg;
	d->sig.dif.pi_interval = ivl;
	d->sig.dif.bg = 0;
	d->sig.dif.app_tag = PI_APP_TAG;
	d->sig.dif.ref_tag = ref_tag;
	d->sig.dif.ref_remap = true;
	d->sig.dif.apptag_check_mask = 0xffff;
}

/*
 * Map @m for the next message and prepare its [LOCAL_INV +] REG under a
 * new key; returns the first work request (the REG is the last), or NULL
 * with p->err set.
 */
static struct ib_send_wr *pi_mr_prepare(struct pi_pair *p,
					const struct pi_run *r,
					struct pi_mr *m, u64 wr_id)
{
	struct ib_sig_attrs *a = m->mr->sig_attrs;

	if (!pi_kind_integrity(m->kind)) {
		if (ib_map_mr_sg(m->mr, &m->sg[0], 1, NULL, SZ_4K) != 1) {
			p->err = "map_mr_sg";
			return NULL;
		}
	} else {
		if (ib_map_mr_sg_pi(m->mr, &m->sg[0], 1, NULL,
				    m->nsg > 1 ? &m->sg[1] : NULL, m->nsg - 1,
				    NULL, SZ_4K)) {
			p->err = "map_mr_sg_pi";
			return NULL;
		}
		/* As nvme-rdma does: the attributes after the mapping. */
		memset(a, 0, sizeof(*a));
		a->check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG |
				IB_SIG_CHECK_REFTAG;
		a->mem.sig_type = IB_SIG_TYPE_NONE;
		if (m->kind == PI_K_PASS)
			pi_dif(&a->mem, IB_T10DIF_CRC, r->ivl, m->ref_tag);
		else if (m->kind == PI_K_CSUM)
			pi_dif(&a->mem, IB_T10DIF_CSUM, r->ivl, m->ref_tag);
		pi_dif(&a->wire, IB_T10DIF_CRC, r->ivl, m->ref_tag);
	}

	m->inv = (struct ib_send_wr){
		.wr_id = wr_id,
		.opcode = IB_WR_LOCAL_INV,
		.ex.invalidate_rkey = m->mr->rkey,
		.next = &m->reg.wr,
	};
	ib_update_fast_reg_key(m->mr, ib_inc_rkey(m->mr->rkey));
	m->reg = (struct ib_reg_wr){
		.wr = {
			.wr_id = wr_id,
			.opcode = pi_kind_integrity(m->kind) ?
				  IB_WR_REG_MR_INTEGRITY : IB_WR_REG_MR,
		},
		.mr = m->mr,
		.key = m->mr->rkey,
		.access = PI_ACCESS,
	};
	return m->valid ? &m->inv : &m->reg.wr;
}

/* B: register slot @s's destination MR for the next message. */
static int pi_post_dst(struct pi_pair *p, const struct pi_run *r, int s)
{
	struct pi_mr *m = &p->slot[s].dst;
	struct ib_send_wr *first = pi_mr_prepare(p, r, m, PI_WRID(s, PI_WR_DST));

	if (!first)
		return -EIO;
	m->reg.wr.send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(p->b.qp, first, NULL)) {
		p->err = "post_send-reg";
		return -EIO;
	}
	m->valid = true;
	p->slot[s].state = PI_REG;
	return 0;
}

/* A: register slot @s's source MR and WRITE the message to B. */
static int pi_post_write(struct pi_pair *p, const struct pi_run *r, int s)
{
	struct pi_slot *sl = &p->slot[s];
	struct ib_send_wr *first;
	struct ib_sge sge;
	struct ib_rdma_wr wr;

	first = pi_mr_prepare(p, r, &sl->src, PI_WRID(s, PI_WR_SRC));
	if (!first)
		return -EIO;
	sge = (struct ib_sge){
		.addr = sl->src.mr->iova,
		.length = r->len,
		.lkey = sl->src.mr->lkey,
	};
	wr = (struct ib_rdma_wr){
		.wr = {
			.wr_id = PI_WRID(s, PI_WR_WRITE),
			.opcode = IB_WR_RDMA_WRITE,
			.sg_list = &sge,
			.num_sge = 1,
			.send_flags = IB_SEND_SIGNALED,
		},
		.remote_addr = sl->dst.mr->iova,
		.rkey = sl->dst.mr->rkey,
	};
	sl->src.reg.wr.next = &wr.wr;
	if (ib_post_send(p->a.qp, first, NULL)) {
		p->err = "post_send-write";
		return -EIO;
	}
	sl->src.valid = true;
	sl->state = PI_WRITE;
	return 0;
}

/* Read the signature status of @m (end @end of the run), if it has one. */
static int pi_mr_status(struct pi_pair *p, struct pi_run *r, struct pi_mr *m,
			int end)
{
	struct ib_mr_status st;

	if (!pi_kind_integrity(m->kind))
		return 0;
	if (ib_check_mr_status(m->mr, IB_MR_CHECK_SIG_STATUS, &st)) {
		p->err = "check_mr_status";
		return -EIO;
	}
	if (st.fail_status & IB_MR_CHECK_SIG_STATUS) {
		if (!r->nerr[end])
			r->first[end] = st.sig_err;
		r->nerr[end]++;
	}
	return 0;
}

/*
 * Reap the completions of @e's CQ and take each slot a step further:
 * B's registration done -> A's WRITE; WRITE done -> status read, slot
 * idle. Returns the number reaped, or -EIO with p->err set.
 */
static int pi_reap(struct pi_pair *p, struct pi_run *r, struct pi_end *e)
{
	struct ib_wc wc[PI_POLL];
	int n, i;

	n = ib_poll_cq(e->cq, PI_POLL, wc);
	if (n < 0) {
		p->err = "poll_cq";
		return -EIO;
	}
	for (i = 0; i < n; i++) {
		int s = wc[i].wr_id >> 8, what = wc[i].wr_id & 0xff;
		struct pi_slot *sl;

		if (wc[i].status != IB_WC_SUCCESS) {
			pr_info("shca_pi_bench: # %s %s %u %u: slot %d %s completion status %s\n",
				p->label, pi_cells[r->cell].name, r->ivl,
				r->size, s, what == PI_WR_DST ? "dst-reg" :
				what == PI_WR_SRC ? "src-reg" : "write",
				ib_wc_status_msg(wc[i].status));
			p->err = "wc-error";
			return -EIO;
		}
		if (s >= slots) {
			p->err = "bad-wr_id";
			return -EIO;
		}
		sl = &p->slot[s];
		if (what == PI_WR_DST && sl->state == PI_REG) {
			if (pi_post_write(p, r, s))
				return -EIO;
		} else if (what == PI_WR_WRITE && sl->state == PI_WRITE) {
			if (pi_mr_status(p, r, &sl->src, 0) ||
			    pi_mr_status(p, r, &sl->dst, 1))
				return -EIO;
			sl->state = PI_IDLE;
			r->done++;
		} else {
			p->err = "unexpected-completion";
			return -EIO;
		}
	}
	return n;
}

/*
 * Send messages through all slots until @max were started or @dur_ns
 * passed, then wait for all of them. Returns 0 with *@msgs completed in
 * *@ns, or -EIO with p->err set.
 */
static int pi_stream(struct pi_pair *p, struct pi_run *r, u64 max,
		     u64 dur_ns, u64 *msgs, u64 *ns)
{
	u64 started = 0, done0 = r->done, t0, now, last;
	bool stop = false;
	int s, n;

	t0 = ktime_get_ns();
	last = t0;
	for (;;) {
		bool progress = false;

		for (s = 0; s < slots && !stop; s++) {
			if (p->slot[s].state != PI_IDLE)
				continue;
			if (pi_post_dst(p, r, s))
				return -EIO;
			started++;
			stop = started >= max;
		}
		n = pi_reap(p, r, &p->b);
		if (n < 0)
			return n;
		progress = n > 0;
		n = pi_reap(p, r, &p->a);
		if (n < 0)
			return n;
		progress |= n > 0;
		now = ktime_get_ns();
		if (now - t0 >= dur_ns)
			stop = true;
		if (stop && r->done - done0 == started)
			break;
		if (progress) {
			last = now;
			continue;
		}
		if (now - last >= PI_STALL_NS) {
			p->err = "stalled";
			p->stalled = true;
			return -EIO;
		}
		/* Let the devices' work items run (see shca_dp_bench). */
		cpu_relax();
		cond_resched();
	}
	*msgs = r->done - done0;
	*ns = now - t0;
	return 0;
}

/* Where the ends of slot @s point in run @r. */
static void pi_slot_bufs(const struct pi_run *r, int s, bool src, u8 **buf,
			 u32 *len, u8 **meta, u32 *meta_len)
{
	struct pi_bufs *pb = &pi_bufs[s];
	enum pi_kind k = src ? pi_cells[r->cell].src : pi_cells[r->cell].dst;

	*meta = NULL;
	*meta_len = 0;
	*len = r->size;
	if (src)
		*buf = r->cell == PI_STRIP ? pb->wire[r->iv] : pb->data;
	else
		*buf = pb->dst;
	if ((src && r->cell == PI_STRIP) || (!src && r->cell == PI_INSERT))
		*len = r->len;
	if (pi_kind_meta(k)) {
		*meta_len = r->size / r->ivl * PI_TUPLE;
		if (!src)
			*meta = pb->dst_meta;
		else if (k == PI_K_CSUM)
			*meta = pb->csum_meta[r->iv];
		else
			*meta = pb->crc_meta[r->iv];
	}
}

/* Report the first byte where @got and @want differ. */
static void pi_report_mismatch(const struct pi_run *r, int s,
			       const char *what, const u8 *got,
			       const u8 *want, u32 len)
{
	u32 i;

	for (i = 0; i < len && got[i] == want[i]; i++)
		;
	pr_info("shca_pi_bench: # %s %s %u %u: slot %d %s differs from byte %u of %u on: got %*ph want %*ph\n",
		r->label, pi_cells[r->cell].name, r->ivl, r->size, s, what, i,
		len, (int)min_t(u32, 16, len - i), got + i,
		(int)min_t(u32, 16, len - i), want + i);
}

/*
 * Every destination byte of every slot against what the CPU computed,
 * and the PI_TAIL bytes after it untouched.
 */
static const char *pi_verify(const struct pi_run *r)
{
	u32 mlen = r->size / r->ivl * PI_TUPLE;
	int s;

	for (s = 0; s < slots; s++) {
		struct pi_bufs *pb = &pi_bufs[s];
		const u8 *want = r->cell == PI_INSERT ? pb->wire[r->iv] :
				 pb->data;
		u32 len = r->cell == PI_INSERT ? r->len : r->size;
		bool meta = pi_kind_meta(pi_cells[r->cell].dst);

		if (memcmp(pb->dst, want, len)) {
			pi_report_mismatch(r, s, "data", pb->dst, want, len);
			return "data-mismatch";
		}
		if (memchr_inv(pb->dst + len, PI_POISON, PI_TAIL))
			return "data-overrun";
		if (!meta)
			continue;
		if (memcmp(pb->dst_meta, pb->crc_meta[r->iv], mlen)) {
			pi_report_mismatch(r, s, "pi", pb->dst_meta,
					   pb->crc_meta[r->iv], mlen);
			return "pi-mismatch";
		}
		if (memchr_inv(pb->dst_meta + mlen, PI_POISON, PI_TAIL))
			return "pi-overrun";
	}
	return NULL;
}

static void pi_cell_dev(struct pi_pair *p, struct pi_run *r)
{
	static const char *const ends[2] = { "src", "dst" };
	u64 msgs = 0, ns = 0;
	int s, i, err = 0;

	p->err = NULL;
	if (p->stalled) {
		p->err = "skipped-after-stall";
		goto out;
	}
	if (pi_qps_create(p))
		goto out;
	for (s = 0; s < slots; s++) {
		struct pi_slot *sl = &p->slot[s];
		u32 len, meta_len;
		u8 *buf, *meta;

		pi_slot_bufs(r, s, true, &buf, &len, &meta, &meta_len);
		p->err = pi_mr_setup(&sl->src, &p->a, pi_cells[r->cell].src,
				     s, buf, len, meta, meta_len);
		if (p->err)
			break;
		pi_slot_bufs(r, s, false, &buf, &len, &meta, &meta_len);
		p->err = pi_mr_setup(&sl->dst, &p->b, pi_cells[r->cell].dst,
				     s, buf, len, meta, meta_len);
		if (p->err)
			break;
		memset(buf, PI_POISON, len + PI_TAIL);
		if (meta)
			memset(meta, PI_POISON, meta_len + PI_TAIL);
		sl->state = PI_IDLE;
	}
	if (p->err)
		goto destroy;
	/* Warm up with one message per slot, then measure. */
	err = pi_stream(p, r, slots, U64_MAX, &msgs, &ns);
	if (!err)
		err = pi_stream(p, r, U64_MAX, (u64)cell_ms * NSEC_PER_MSEC,
				&msgs, &ns);
	if (!err) {
		p->err = pi_verify(r);
		err = p->err ? -EIO : 0;
	}
destroy:
	pi_qps_destroy(p);
	for (s = 0; s < slots; s++) {
		pi_mr_teardown(&p->slot[s].src);
		pi_mr_teardown(&p->slot[s].dst);
	}
	if (!err && !p->err)
		pr_info("shca_pi_bench: bw %s %s %u %u %d %llu %llu\n",
			p->label, pi_cells[r->cell].name, r->ivl, r->size,
			r->rep, msgs, ns);
	for (i = 0; i < 2; i++) {
		const struct ib_sig_err *e = &r->first[i];

		if (!r->nerr[i])
			continue;
		pr_info("shca_pi_bench: sigerr %s %s %u %u %d %s %llu %d 0x%x 0x%x %llu\n",
			p->label, pi_cells[r->cell].name, r->ivl, r->size,
			r->rep, ends[i], r->nerr[i], e->err_type, e->expected,
			e->actual, e->sig_err_offset);
	}
out:
	if (p->err)
		pr_info("shca_pi_bench: err %s %s %u %u %d %s\n", p->label,
			pi_cells[r->cell].name, r->ivl, r->size, r->rep,
			p->err);
}

static const char *pi_pair_setup(struct pi_pair *p, char *spec)
{
	char *name_b = strchr(spec, ':');
	const char *err;

	p->label = spec;
	if (!name_b)
		return "bad-pair";
	*name_b = '\0';
	err = pi_end_setup(&p->a, spec);
	if (!err)
		err = pi_end_setup(&p->b, name_b + 1);
	*name_b = ':';
	if (err)
		return err;
	pr_info("shca_pi_bench: pair %s gid %d:%pI6 -> %d:%pI6 mtu %d\n",
		p->label, p->a.gid_index, p->a.gid.raw, p->b.gid_index,
		p->b.gid.raw, ib_mtu_enum_to_int(min(p->a.mtu, p->b.mtu)));
	return NULL;
}

/*
 * Run the @idx-th cell of a repetition: per interval and size, the CPU
 * cells, then each pair's device cells.
 */
static void pi_run_one(struct pi_pair *pp, int npairs, int idx, int rep,
		       u64 deadline)
{
	int per = PI_NCPU + npairs * PI_NDEV, j = idx % per;
	int combo = idx / per;
	struct pi_run r = {
		.iv = combo / PI_NSIZE,
		.size = pi_sizes[combo % PI_NSIZE],
		.rep = rep,
	};
	struct pi_pair *p = NULL;

	r.ivl = pi_ivls[r.iv];
	if (j < PI_NCPU) {
		r.cell = j;
		r.label = "-";
	} else {
		p = &pp[(j - PI_NCPU) / PI_NDEV];
		r.cell = PI_PLAIN + (j - PI_NCPU) % PI_NDEV;
		r.label = p->label;
		if (!p->a.dev)
			return;		/* the pair failed to set up */
	}
	r.len = r.cell == PI_PLAIN ? r.size : pi_wire_len(r.size, r.ivl);
	if (ktime_get_ns() >= deadline) {
		pr_info("shca_pi_bench: err %s %s %u %u %d skipped\n",
			r.label, pi_cells[r.cell].name, r.ivl, r.size, rep);
		return;
	}
	if (p)
		pi_cell_dev(p, &r);
	else
		pi_cell_cpu(&r);
}

static int __init shca_pi_bench_init(void)
{
	struct pi_pair *pp;
	char *list, *cur, *spec;
	int npairs = 0, rep, i, total, err;
	u64 deadline;

	if (cell_ms <= 0 || cell_ms > 60000 || reps < 1 || reps > 100 ||
	    slots < 1 || slots > PI_MAX_SLOTS || budget_s < 1)
		return -EINVAL;
	list = kstrdup(pairs, GFP_KERNEL);
	pp = kcalloc(PI_MAX_PAIRS, sizeof(*pp), GFP_KERNEL);
	err = list && pp ? pi_bufs_alloc() : -ENOMEM;
	if (err) {
		pi_bufs_free();
		kfree(pp);
		kfree(list);
		return err;
	}
	deadline = ktime_get_ns() + (u64)budget_s * NSEC_PER_SEC;
	pr_info("shca_pi_bench: config cell_ms %d reps %d slots %d budget_s %d\n",
		cell_ms, reps, slots, budget_s);

	cur = list;
	while ((spec = strsep(&cur, ",")) && npairs < PI_MAX_PAIRS) {
		const char *why;

		if (!*spec)
			continue;
		why = pi_pair_setup(&pp[npairs], spec);
		if (why) {
			pr_info("shca_pi_bench: err %s - - - - %s\n", spec, why);
			pi_end_teardown(&pp[npairs].b);
			pi_end_teardown(&pp[npairs].a);
		}
		npairs++;
	}

	total = PI_NIVL * PI_NSIZE * (PI_NCPU + npairs * PI_NDEV);
	for (rep = 0; rep < reps; rep++)
		for (i = 0; i < total; i++)
			pi_run_one(pp, npairs, rep % 2 ? total - 1 - i : i,
				   rep + 1, deadline);

	for (i = 0; i < npairs; i++) {
		pi_end_teardown(&pp[i].b);
		pi_end_teardown(&pp[i].a);
	}
	pi_bufs_free();
	kfree(pp);
	kfree(list);
	pr_info("shca_pi_bench: done\n");
	return 0;
}

static void __exit shca_pi_bench_exit(void)
{
}

module_init(shca_pi_bench_init);
module_exit(shca_pi_bench_exit);

MODULE_DESCRIPTION("T10-DIF signature engine benchmark for softhca integrity MRs");
MODULE_LICENSE("GPL");
