// SPDX-License-Identifier: GPL-2.0
/*
 * shca_frwr_bench - the fast-registration (FRWR) cycle that nvme-rdma and
 * iSER run for every I/O, measured from inside the kernel through ib_core
 * only, on pairs of devices of this host:
 *
 *   insmod shca_frwr_bench.ko pairs=softhca0:softhca1,rxe0:rxe1
 *
 * The first device of a pair is the host (initiator), the second the
 * target. Per I/O, as nvme-rdma and nvmet-rdma do it:
 *
 *   host    DMA-maps a scatterlist of the I/O's pages (ib_dma_map_sg),
 *           gives its MR (one per slot) a new key (ib_update_fast_reg_key),
 *           maps the pages into it (ib_map_mr_sg) and posts an unsignaled
 *           IB_WR_REG_MR chained before a signaled SEND of a 64-byte
 *           command carrying the MR's address and rkey
 *   target  on receiving the command: for a write I/O an RDMA READ from
 *           the host's MR into its own buffer, then the response; for a
 *           read I/O an RDMA WRITE from its buffer into the host's MR
 *           chained before the response. The response is a SEND_WITH_INV
 *           of the rkey (remote invalidation, what nvme-rdma asks for)
 *           or, in the "-linv" cells, a plain SEND
 *   host    on the response: checks that the rkey was invalidated
 *           (IB_WC_WITH_INVALIDATE and the key), or posts a signaled
 *           IB_WR_LOCAL_INV and waits for it; unmaps the pages; the I/O is
 *           done when its SEND, the response and the LOCAL_INV completed
 *
 * Cells, for I/O sizes of 4 KiB, 64 KiB and 1 MiB:
 *
 *   write       write I/O (target RDMA READ), remote invalidation
 *   read        read I/O (target RDMA WRITE), remote invalidation
 *   write-linv  write I/O, LOCAL_INV by the host
 *   read-linv   read I/O, LOCAL_INV by the host
 *   reg         the cycle without the RDMA READ/WRITE: map, REG_MR + SEND,
 *               SEND_WITH_INV back (registration, invalidation, messages)
 *   send        SEND and SEND back only (messages and completions)
 *   memcpy      one CPU copying the I/O's pages into a buffer (the floor)
 *
 * qd I/Os are in flight, each slot with its pages, MR, target buffer and
 * messages. Every I/O is checked: its sequence number, stamped into the
 * first and the last 8 bytes of the data by whoever sends it, must arrive;
 * after every cell all the data moved is compared with what was sent.
 * Every cell gets fresh QPs and MRs and first runs warm I/Os untimed (the
 * warm-up of each device), then for cell_ms milliseconds. Every cell is
 * measured reps times; every other repetition runs the pairs in the
 * reverse order (A B, B A, A B: ABBA). Results go to the kernel log for
 * tests/bench/frwr-bench.sh to tabulate:
 *
 *   shca_frwr_bench: io PAIR CELL SIZE REP IOS NANOSECONDS
 *   shca_frwr_bench: err PAIR CELL SIZE REP REASON
 *   shca_frwr_bench: done
 *
 * PAIR is "-" for memcpy. Lines starting with "#" are diagnostics. All
 * the work happens in module init; rmmod the module afterwards. A
 * measurement, never a test: a failing device is reported, not fatal.
 * Cells that would start after budget_s seconds are reported as skipped.
 */

#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <rdma/ib_verbs.h>

#include "shca_bench.h"

#define FR_MAX_PAIRS	4
#define FR_MAX_QD	32
#define FR_MAX_SIZE	SZ_1M
#define FR_MAX_PAGES	(FR_MAX_SIZE / PAGE_SIZE)
#define FR_MSG		64		/* command and response bytes */
#define FR_POLL		16
#define FR_STALL_NS	(10ULL * NSEC_PER_SEC)
#define FR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE)

static char *pairs = "softhca0:softhca1,rxe0:rxe1";
module_param(pairs, charp, 0444);
MODULE_PARM_DESC(pairs, "comma-separated HOST:TARGET device pairs (at most 4)");

static int cell_ms = 200;
module_param(cell_ms, int, 0444);
MODULE_PARM_DESC(cell_ms, "milliseconds per measurement");

static int reps = 3;
module_param(reps, int, 0444);
MODULE_PARM_DESC(reps, "measurements of every cell");

static int qd = 16;
module_param(qd, int, 0444);
MODULE_PARM_DESC(qd, "I/Os in flight, each with its own pages, MR and buffer");

static int warm = 32;
module_param(warm, int, 0444);
MODULE_PARM_DESC(warm, "untimed I/Os before every measurement");

static int budget_s = 300;
module_param(budget_s, int, 0444);
MODULE_PARM_DESC(budget_s, "seconds after which no further cell starts");

static const u32 fr_sizes[] = { SZ_4K, SZ_64K, SZ_1M };

/* What the target does for an I/O. */
enum fr_op { FR_OP_NONE, FR_OP_REG, FR_OP_WRITE, FR_OP_READ };

enum fr_cell {
	FR_MEMCPY, FR_WRITE, FR_READ, FR_WRITE_LINV, FR_READ_LINV, FR_REG,
	FR_SEND, FR_NCELLS
};

static const struct {
	const char *name;
	enum fr_op op;
	bool linv;		/* LOCAL_INV by the host, not SEND_WITH_INV */
} fr_cells[FR_NCELLS] = {
	[FR_MEMCPY] = { "memcpy" },
	[FR_WRITE] = { "write", FR_OP_WRITE },
	[FR_READ] = { "read", FR_OP_READ },
	[FR_WRITE_LINV] = { "write-linv", FR_OP_WRITE, true },
	[FR_READ_LINV] = { "read-linv", FR_OP_READ, true },
	[FR_REG] = { "reg", FR_OP_REG },
	[FR_SEND] = { "send", FR_OP_NONE },
};

/* The command (host to target) and the response (target to host). */
struct fr_msg {
	u32 slot;
	u32 op;
	u32 len;
	u32 rkey;
	u64 addr;
	u64 seq;
};

/* wr_id: what completed in its high bits, the slot or buffer below. */
enum fr_wr { FR_W_HSEND = 1, FR_W_HRECV, FR_W_HINV, FR_W_REG, FR_W_TRECV,
	     FR_W_TREAD, FR_W_TSEND };
#define FR_WRID(w, i)	(((u64)(w) << 16) | (i))

/* What a host slot still waits for. */
#define FR_P_SEND	BIT(0)
#define FR_P_RESP	BIT(1)
#define FR_P_INV	BIT(2)

/*
 * The buffers, shared by the pairs: per slot the host's pages and the
 * target's buffer; the golden data each side sends.
 */
static struct page *fr_pages[FR_MAX_QD][FR_MAX_PAGES];
static u8 *fr_tbuf[FR_MAX_QD];
static u8 *fr_hgold, *fr_tgold;

struct fr_slot {
	struct scatterlist sg[FR_MAX_PAGES];
	int nents;			/* entries DMA-mapped, 0: none */
	struct ib_mr *mr;
	struct ib_reg_wr reg;
	u32 pending;
	bool busy;
	u64 seq;
};

/* The target's copy of a command, per slot. */
struct fr_tslot {
	struct fr_msg cmd;
};

struct fr_pair {
	char label[48];
	struct shca_bench_end h, t;
	u8 *hmsg, *tmsg;		/* qd commands/responses, 2 * qd receives */
	u64 hmsg_dma, tmsg_dma;
	u64 tdma[FR_MAX_QD];
	bool tmapped;
	struct fr_slot slot[FR_MAX_QD];
	struct fr_tslot tslot[FR_MAX_QD];
	const char *err;
};

struct fr_run {
	enum fr_cell cell;
	u32 size;
	u32 npages;
	u64 seq;
	u64 done;
	u64 bad;			/* I/Os whose stamp did not arrive */
};

static struct fr_pair fr_pairs[FR_MAX_PAIRS];

/* ---- buffers ------------------------------------------------------------ */

static void fr_bufs_free(void)
{
	int s, i;

	for (s = 0; s < FR_MAX_QD; s++) {
		for (i = 0; i < FR_MAX_PAGES; i++) {
			if (fr_pages[s][i])
				__free_page(fr_pages[s][i]);
			fr_pages[s][i] = NULL;
		}
		if (fr_tbuf[s])
			free_pages((unsigned long)fr_tbuf[s],
				   get_order(FR_MAX_SIZE));
		fr_tbuf[s] = NULL;
	}
	kvfree(fr_hgold);
	kvfree(fr_tgold);
	fr_hgold = NULL;
	fr_tgold = NULL;
}

static int fr_bufs_alloc(void)
{
	int s, i;

	fr_hgold = kvmalloc(FR_MAX_SIZE, GFP_KERNEL);
	fr_tgold = kvmalloc(FR_MAX_SIZE, GFP_KERNEL);
	if (!fr_hgold || !fr_tgold)
		goto err;
	get_random_bytes(fr_hgold, FR_MAX_SIZE);
	get_random_bytes(fr_tgold, FR_MAX_SIZE);
	for (s = 0; s < qd; s++) {
		/* Separate pages, as a bio's are; the target's in one piece. */
		for (i = 0; i < FR_MAX_PAGES; i++) {
			fr_pages[s][i] = alloc_page(GFP_KERNEL);
			if (!fr_pages[s][i])
				goto err;
		}
		fr_tbuf[s] = (u8 *)__get_free_pages(GFP_KERNEL,
						    get_order(FR_MAX_SIZE));
		if (!fr_tbuf[s])
			goto err;
	}
	return 0;
err:
	fr_bufs_free();
	return -ENOMEM;
}

/* Copy @len bytes of @src into slot @s's host pages, or out of them. */
static void fr_pages_copy(int s, u8 *buf, u32 len, bool to_pages)
{
	u32 off;

	for (off = 0; off < len; off += PAGE_SIZE) {
		u8 *va = page_address(fr_pages[s][off / PAGE_SIZE]);
		u32 n = min_t(u32, PAGE_SIZE, len - off);

		if (to_pages)
			memcpy(va, buf + off, n);
		else
			memcpy(buf + off, va, n);
	}
}

/* The 8 bytes at @off of slot @s's host pages. */
static u64 *fr_page_word(int s, u32 off)
{
	return page_address(fr_pages[s][off / PAGE_SIZE]) + off % PAGE_SIZE;
}

/* ---- QPs and MRs -------------------------------------------------------- */

static int fr_qp_create(struct shca_bench_end *e, int send_wr)
{
	struct ib_qp_init_attr init = {
		.send_cq = e->cq,
		.recv_cq = e->cq,
		.cap = {
			.max_send_wr = send_wr,
			.max_recv_wr = 2 * qd,
			.max_send_sge = 1,
			.max_recv_sge = 1,
		},
		.sq_sig_type = IB_SIGNAL_REQ_WR,
		.qp_type = IB_QPT_RC,
	};

	e->qp = ib_create_qp(e->pd, &init);
	if (IS_ERR(e->qp)) {
		e->qp = NULL;
		return -EIO;
	}
	return 0;
}

static int fr_post_recv(struct shca_bench_end *e, u64 dma, int w, int idx)
{
	struct ib_sge sge = {
		.addr = dma + (qd + idx) * FR_MSG,
		.length = FR_MSG,
		.lkey = e->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = {
		.wr_id = FR_WRID(w, idx),
		.sg_list = &sge,
		.num_sge = 1,
	};

	return ib_post_recv(e->qp, &wr, NULL);
}

/* Undo fr_cell_setup(): QPs, then MRs (all the I/Os are over). */
static void fr_cell_teardown(struct fr_pair *p)
{
	int s;

	if (p->h.qp)
		ib_destroy_qp(p->h.qp);
	if (p->t.qp)
		ib_destroy_qp(p->t.qp);
	p->h.qp = NULL;
	p->t.qp = NULL;
	shca_bench_cq_drain(p->h.cq);
	shca_bench_cq_drain(p->t.cq);
	for (s = 0; s < qd; s++) {
		struct fr_slot *sl = &p->slot[s];

		if (sl->nents)
			ib_dma_unmap_sg(p->h.dev, sl->sg, sl->nents,
					DMA_BIDIRECTIONAL);
		sl->nents = 0;
		if (sl->mr)
			ib_dereg_mr(sl->mr);
		sl->mr = NULL;
		sl->busy = false;
	}
}

/* Fresh connected QPs with their receives posted, fresh MRs. */
static const char *fr_cell_setup(struct fr_pair *p)
{
	enum ib_mtu mtu = min(p->h.mtu, p->t.mtu);
	int s;

	shca_bench_cq_drain(p->h.cq);
	shca_bench_cq_drain(p->t.cq);
	/*
	 * host: REG_MR, SEND, LOCAL_INV; target: WRITE or READ, SEND. A
	 * send queue entry is free only once the peer acknowledged it, which
	 * can lag the I/O's end: room for two I/Os per slot.
	 */
	if (fr_qp_create(&p->h, 6 * qd + 4) || fr_qp_create(&p->t, 4 * qd + 4))
		return "create_qp";
	if (shca_bench_rc_connect(p->h.qp, p->h.gid_index, p->t.qp,
				  &p->t.gid, mtu) ||
	    shca_bench_rc_connect(p->t.qp, p->t.gid_index, p->h.qp,
				  &p->h.gid, mtu))
		return "modify_qp";
	for (s = 0; s < 2 * qd; s++)
		if (fr_post_recv(&p->h, p->hmsg_dma, FR_W_HRECV, s) ||
		    fr_post_recv(&p->t, p->tmsg_dma, FR_W_TRECV, s))
			return "post_recv";
	for (s = 0; s < qd; s++) {
		struct fr_slot *sl = &p->slot[s];

		sl->mr = ib_alloc_mr(p->h.pd, IB_MR_TYPE_MEM_REG, FR_MAX_PAGES);
		if (IS_ERR(sl->mr)) {
			sl->mr = NULL;
			return "alloc_mr";
		}
		sl->busy = false;
	}
	return NULL;
}

/* ---- the cycle ---------------------------------------------------------- */

/* Host: start an I/O in slot @s. */
static int fr_start(struct fr_pair *p, struct fr_run *r, int s)
{
	enum fr_op op = fr_cells[r->cell].op;
	struct fr_slot *sl = &p->slot[s];
	struct fr_msg *m = (struct fr_msg *)(p->hmsg + s * FR_MSG);
	struct ib_sge sge = {
		.addr = p->hmsg_dma + s * FR_MSG,
		.length = FR_MSG,
		.lkey = p->h.pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.wr_id = FR_WRID(FR_W_HSEND, s),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};
	const struct ib_send_wr *first = &send;
	int n;

	sl->seq = ++r->seq;
	memset(m, 0, sizeof(*m));
	m->slot = s;
	m->op = op;
	m->len = r->size;
	m->seq = sl->seq;
	sl->pending = FR_P_SEND | FR_P_RESP;
	if (op != FR_OP_NONE) {
		if (op == FR_OP_WRITE) {
			*fr_page_word(s, 0) = sl->seq;
			*fr_page_word(s, r->size - 8) = sl->seq;
		}
		n = ib_dma_map_sg(p->h.dev, sl->sg, r->npages,
				  DMA_BIDIRECTIONAL);
		if (n <= 0) {
			p->err = "dma_map_sg";
			return -EIO;
		}
		sl->nents = n;
		ib_update_fast_reg_key(sl->mr, ib_inc_rkey(sl->mr->rkey));
		if (ib_map_mr_sg(sl->mr, sl->sg, n, NULL, PAGE_SIZE) != n) {
			p->err = "map_mr_sg";
			return -EIO;
		}
		memset(&sl->reg, 0, sizeof(sl->reg));
		sl->reg.wr.wr_id = FR_WRID(FR_W_REG, s);
		sl->reg.wr.opcode = IB_WR_REG_MR;
		sl->reg.wr.next = &send;
		sl->reg.mr = sl->mr;
		sl->reg.key = sl->mr->rkey;
		sl->reg.access = FR_ACCESS;
		first = &sl->reg.wr;
		m->rkey = sl->mr->rkey;
		m->addr = sl->mr->iova;
	}
	ib_dma_sync_single_for_device(p->h.dev, sge.addr, FR_MSG,
				      DMA_BIDIRECTIONAL);
	if (ib_post_send(p->h.qp, first, NULL)) {
		p->err = "post_send";
		return -EIO;
	}
	sl->busy = true;
	return 0;
}

/* Target: send the response to slot @s's command, after @data if any. */
static int fr_respond(struct fr_pair *p, struct fr_run *r, int s,
		      struct ib_send_wr *data)
{
	struct fr_msg *cmd = &p->tslot[s].cmd;
	struct fr_msg *m = (struct fr_msg *)(p->tmsg + s * FR_MSG);
	struct ib_sge sge = {
		.addr = p->tmsg_dma + s * FR_MSG,
		.length = FR_MSG,
		.lkey = p->t.pd->local_dma_lkey,
	};
	struct ib_send_wr send = {
		.wr_id = FR_WRID(FR_W_TSEND, s),
		.sg_list = &sge,
		.num_sge = 1,
		.opcode = IB_WR_SEND,
		.send_flags = IB_SEND_SIGNALED,
	};

	*m = *cmd;
	if (cmd->op != FR_OP_NONE && !fr_cells[r->cell].linv) {
		send.opcode = IB_WR_SEND_WITH_INV;
		send.ex.invalidate_rkey = cmd->rkey;
	}
	ib_dma_sync_single_for_device(p->t.dev, sge.addr, FR_MSG,
				      DMA_BIDIRECTIONAL);
	if (data)
		data->next = &send;
	if (ib_post_send(p->t.qp, data ? data : &send, NULL)) {
		p->err = "target-post_send";
		return -EIO;
	}
	return 0;
}

/* Target: a command arrived in receive buffer @idx. */
static int fr_target_cmd(struct fr_pair *p, struct fr_run *r, int idx)
{
	struct fr_msg *in = (struct fr_msg *)(p->tmsg + (qd + idx) * FR_MSG);
	struct ib_rdma_wr rdma = {};
	struct ib_sge sge;
	struct fr_msg *cmd;
	u8 *buf;

	ib_dma_sync_single_for_cpu(p->t.dev, p->tmsg_dma + (qd + idx) * FR_MSG,
				   FR_MSG, DMA_BIDIRECTIONAL);
	if (in->slot >= qd || in->len > FR_MAX_SIZE || in->len < 16) {
		p->err = "bad-command";
		return -EIO;
	}
	cmd = &p->tslot[in->slot].cmd;
	*cmd = *in;
	if (fr_post_recv(&p->t, p->tmsg_dma, FR_W_TRECV, idx)) {
		p->err = "target-post_recv";
		return -EIO;
	}
	if (cmd->op != FR_OP_WRITE && cmd->op != FR_OP_READ)
		return fr_respond(p, r, cmd->slot, NULL);

	buf = fr_tbuf[cmd->slot];
	if (cmd->op == FR_OP_READ) {
		memcpy(buf, &cmd->seq, 8);
		memcpy(buf + cmd->len - 8, &cmd->seq, 8);
	}
	sge.addr = p->tdma[cmd->slot];
	sge.length = cmd->len;
	sge.lkey = p->t.pd->local_dma_lkey;
	rdma.wr.sg_list = &sge;
	rdma.wr.num_sge = 1;
	rdma.remote_addr = cmd->addr;
	rdma.rkey = cmd->rkey;
	if (cmd->op == FR_OP_READ) {
		/* a read I/O: WRITE the data, the response right behind */
		rdma.wr.wr_id = FR_WRID(FR_W_TREAD, cmd->slot);
		rdma.wr.opcode = IB_WR_RDMA_WRITE;
		return fr_respond(p, r, cmd->slot, &rdma.wr);
	}
	/* a write I/O: READ the data, respond when it is here */
	rdma.wr.wr_id = FR_WRID(FR_W_TREAD, cmd->slot);
	rdma.wr.opcode = IB_WR_RDMA_READ;
	rdma.wr.send_flags = IB_SEND_SIGNALED;
	if (ib_post_send(p->t.qp, &rdma.wr, NULL)) {
		p->err = "target-post_read";
		return -EIO;
	}
	return 0;
}

/* Target: the RDMA READ of slot @s completed. */
static int fr_target_read_done(struct fr_pair *p, struct fr_run *r, int s)
{
	struct fr_msg *cmd = &p->tslot[s].cmd;
	u8 *buf = fr_tbuf[s];

	if (memcmp(buf, &cmd->seq, 8) || memcmp(buf + cmd->len - 8,
						&cmd->seq, 8))
		r->bad++;
	return fr_respond(p, r, s, NULL);
}

/* Host: an I/O's last completion came; unmap and check. */
static void fr_host_done(struct fr_pair *p, struct fr_run *r, int s)
{
	struct fr_slot *sl = &p->slot[s];

	if (sl->nents)
		ib_dma_unmap_sg(p->h.dev, sl->sg, sl->nents,
				DMA_BIDIRECTIONAL);
	sl->nents = 0;
	if (fr_cells[r->cell].op == FR_OP_READ &&
	    (*fr_page_word(s, 0) != sl->seq ||
	     *fr_page_word(s, r->size - 8) != sl->seq))
		r->bad++;
	sl->busy = false;
	r->done++;
}

/* Host: the response for receive buffer @idx came with @wc. */
static int fr_host_resp(struct fr_pair *p, struct fr_run *r, int idx,
			const struct ib_wc *wc)
{
	struct fr_msg *m = (struct fr_msg *)(p->hmsg + (qd + idx) * FR_MSG);
	struct fr_slot *sl;
	u32 s;

	ib_dma_sync_single_for_cpu(p->h.dev, p->hmsg_dma + (qd + idx) * FR_MSG,
				   FR_MSG, DMA_BIDIRECTIONAL);
	s = m->slot;
	if (s >= qd || !p->slot[s].busy || m->seq != p->slot[s].seq ||
	    !(p->slot[s].pending & FR_P_RESP)) {
		p->err = "bad-response";
		return -EIO;
	}
	sl = &p->slot[s];
	if (fr_post_recv(&p->h, p->hmsg_dma, FR_W_HRECV, idx)) {
		p->err = "post_recv";
		return -EIO;
	}
	sl->pending &= ~FR_P_RESP;
	if (fr_cells[r->cell].op != FR_OP_NONE) {
		if (!fr_cells[r->cell].linv) {
			if (!(wc->wc_flags & IB_WC_WITH_INVALIDATE) ||
			    wc->ex.invalidate_rkey != sl->mr->rkey) {
				p->err = "not-invalidated";
				return -EIO;
			}
		} else {
			struct ib_send_wr inv = {
				.wr_id = FR_WRID(FR_W_HINV, s),
				.opcode = IB_WR_LOCAL_INV,
				.send_flags = IB_SEND_SIGNALED,
				.ex.invalidate_rkey = sl->mr->rkey,
			};

			if (ib_post_send(p->h.qp, &inv, NULL)) {
				p->err = "post_local_inv";
				return -EIO;
			}
			sl->pending |= FR_P_INV;
		}
	}
	if (!sl->pending)
		fr_host_done(p, r, s);
	return 0;
}

/* Reap what @e's CQ holds and take each I/O a step further. */
static int fr_reap(struct fr_pair *p, struct fr_run *r,
		   struct shca_bench_end *e)
{
	struct ib_wc wc[FR_POLL];
	int n, i, err = 0;

	n = ib_poll_cq(e->cq, FR_POLL, wc);
	if (n < 0) {
		p->err = "poll_cq";
		return -EIO;
	}
	for (i = 0; i < n && !err; i++) {
		int w = wc[i].wr_id >> 16, s = wc[i].wr_id & 0xffff;

		if (wc[i].status != IB_WC_SUCCESS) {
			pr_info("shca_frwr_bench: # %s %s %u: wr kind %d index %d: %s\n",
				p->label, fr_cells[r->cell].name, r->size, w,
				s, ib_wc_status_msg(wc[i].status));
			p->err = "wc-error";
			return -EIO;
		}
		switch (w) {
		case FR_W_HSEND:
		case FR_W_HINV:
			if (s >= qd || !p->slot[s].busy) {
				p->err = "unexpected-completion";
				return -EIO;
			}
			p->slot[s].pending &= w == FR_W_HSEND ? ~FR_P_SEND :
							       ~FR_P_INV;
			if (!p->slot[s].pending)
				fr_host_done(p, r, s);
			break;
		case FR_W_HRECV:
			err = fr_host_resp(p, r, s, &wc[i]);
			break;
		case FR_W_TRECV:
			err = fr_target_cmd(p, r, s);
			break;
		case FR_W_TREAD:
			err = fr_target_read_done(p, r, s);
			break;
		case FR_W_TSEND:
			break;
		default:
			p->err = "unexpected-completion";
			return -EIO;
		}
	}
	return err ? err : n;
}

/*
 * Start I/Os in all free slots until @max were started or @dur_ns
 * passed, then wait for all of them. Returns 0 with *@ios completed in
 * *@ns, or -EIO with p->err set.
 */
static int fr_stream(struct fr_pair *p, struct fr_run *r, u64 max,
		     u64 dur_ns, u64 *ios, u64 *ns)
{
	u64 started = 0, done0 = r->done, t0, now, last;
	bool stop = false;
	int s, n;

	t0 = ktime_get_ns();
	last = t0;
	for (;;) {
		bool progress;

		for (s = 0; s < qd && !stop; s++) {
			if (p->slot[s].busy)
				continue;
			if (fr_start(p, r, s))
				return -EIO;
			started++;
			stop = started >= max;
		}
		n = fr_reap(p, r, &p->t);
		if (n < 0)
			return n;
		progress = n > 0;
		n = fr_reap(p, r, &p->h);
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
		if (now - last >= FR_STALL_NS) {
			p->err = "stalled";
			return -EIO;
		}
		/* Let the devices' work items run. */
		cpu_relax();
		cond_resched();
	}
	*ios = r->done - done0;
	*ns = now - t0;
	return 0;
}

/* After a cell: every byte moved must be what was sent. */
static bool fr_verify(const struct fr_run *r)
{
	u8 *tmp;
	bool ok = true;
	int s;

	if (fr_cells[r->cell].op == FR_OP_WRITE) {
		for (s = 0; s < qd && ok; s++)
			ok = !memcmp(fr_tbuf[s] + 8, fr_hgold + 8,
				     r->size - 16);
		return ok;
	}
	if (fr_cells[r->cell].op != FR_OP_READ)
		return true;
	tmp = fr_tbuf[0];	/* the read cells never need it afterwards */
	for (s = 0; s < qd && ok; s++) {
		fr_pages_copy(s, tmp, r->size, false);
		ok = !memcmp(tmp + 8, fr_tgold + 8, r->size - 16);
	}
	return ok;
}

static void fr_cell_memcpy(struct fr_run *r, int rep)
{
	u64 t0, now, n = 0, dur = (u64)cell_ms * NSEC_PER_MSEC;

	t0 = ktime_get_ns();
	do {
		fr_pages_copy(n % qd, fr_tbuf[n % qd], r->size, false);
		n++;
		now = ktime_get_ns();
		if (!(n % 64))
			cond_resched();
	} while (now - t0 < dur);
	if (memcmp(fr_tbuf[0], page_address(fr_pages[0][0]), 8))
		pr_info("shca_frwr_bench: err - memcpy %u %d copy-mismatch\n",
			r->size, rep);
	else
		pr_info("shca_frwr_bench: io - memcpy %u %d %llu %llu\n",
			r->size, rep, n, now - t0);
}

static void fr_cell_dev(struct fr_pair *p, struct fr_run *r, int rep)
{
	const char *name = fr_cells[r->cell].name;
	u64 ios = 0, ns = 0;
	const char *err;
	int s, i;

	/* The data each side sends; the host's pages also for read cells. */
	for (s = 0; s < qd; s++) {
		fr_pages_copy(s, fr_hgold, r->size, true);
		memcpy(fr_tbuf[s], fr_tgold, r->size);
		sg_init_table(p->slot[s].sg, r->npages);
		for (i = 0; i < r->npages; i++)
			sg_set_page(&p->slot[s].sg[i], fr_pages[s][i],
				    PAGE_SIZE, 0);
	}
	r->seq = 0;
	r->done = 0;
	r->bad = 0;
	p->err = NULL;
	err = fr_cell_setup(p);
	if (err) {
		p->err = err;
		goto out;
	}
	if ((warm && fr_stream(p, r, warm, U64_MAX, &ios, &ns)) ||
	    fr_stream(p, r, U64_MAX, (u64)cell_ms * NSEC_PER_MSEC, &ios, &ns))
		goto out;
	if (r->bad)
		p->err = "stamp-mismatch";
	else if (!fr_verify(r))
		p->err = "data-mismatch";
out:
	fr_cell_teardown(p);
	if (p->err)
		pr_info("shca_frwr_bench: err %s %s %u %d %s\n", p->label,
			name, r->size, rep, p->err);
	else
		pr_info("shca_frwr_bench: io %s %s %u %d %llu %llu\n",
			p->label, name, r->size, rep, ios, ns);
}

/* ---- pairs and the run -------------------------------------------------- */

static void fr_pair_teardown(struct fr_pair *p)
{
	int s;

	if (p->tmapped)
		for (s = 0; s < qd; s++)
			ib_dma_unmap_single(p->t.dev, p->tdma[s], FR_MAX_SIZE,
					    DMA_BIDIRECTIONAL);
	p->tmapped = false;
	if (p->hmsg) {
		ib_dma_unmap_single(p->h.dev, p->hmsg_dma, 3 * qd * FR_MSG,
				    DMA_BIDIRECTIONAL);
		kfree(p->hmsg);
	}
	if (p->tmsg) {
		ib_dma_unmap_single(p->t.dev, p->tmsg_dma, 3 * qd * FR_MSG,
				    DMA_BIDIRECTIONAL);
		kfree(p->tmsg);
	}
	p->hmsg = NULL;
	p->tmsg = NULL;
	shca_bench_end_teardown(&p->h);
	shca_bench_end_teardown(&p->t);
}

static u8 *fr_msgs(struct shca_bench_end *e, u64 *dma)
{
	u8 *m = kzalloc(3 * qd * FR_MSG, GFP_KERNEL);

	if (!m)
		return NULL;
	*dma = ib_dma_map_single(e->dev, m, 3 * qd * FR_MSG,
				 DMA_BIDIRECTIONAL);
	if (ib_dma_mapping_error(e->dev, *dma)) {
		kfree(m);
		return NULL;
	}
	return m;
}

static const char *fr_pair_setup(struct fr_pair *p, char *spec)
{
	char *colon = strchr(spec, ':');
	const char *err;
	int s;

	if (!colon)
		return "bad-pair";
	strscpy(p->label, spec, sizeof(p->label));
	*colon = '\0';
	/* the send queue (see fr_cell_setup()) and 2 * qd receives */
	err = shca_bench_end_setup(&p->h, spec, 8 * qd + 16);
	if (!err)
		err = shca_bench_end_setup(&p->t, colon + 1, 8 * qd + 16);
	if (err)
		return err;
	if (p->h.dev->attrs.max_fast_reg_page_list_len < FR_MAX_PAGES)
		return "frpl-too-short";
	p->hmsg = fr_msgs(&p->h, &p->hmsg_dma);
	p->tmsg = fr_msgs(&p->t, &p->tmsg_dma);
	if (!p->hmsg || !p->tmsg)
		return "msg-buffers";
	for (s = 0; s < qd; s++) {
		p->tdma[s] = ib_dma_map_single(p->t.dev, fr_tbuf[s],
					       FR_MAX_SIZE, DMA_BIDIRECTIONAL);
		if (ib_dma_mapping_error(p->t.dev, p->tdma[s])) {
			while (s--)
				ib_dma_unmap_single(p->t.dev, p->tdma[s],
						    FR_MAX_SIZE,
						    DMA_BIDIRECTIONAL);
			return "dma_map";
		}
	}
	p->tmapped = true;
	return NULL;
}

static int __init shca_frwr_bench_init(void)
{
	static const char *pair_err[FR_MAX_PAIRS];
	char *list, *cur, *spec;
	u64 deadline;
	int np = 0, rep, z, c, k, i;

	if (qd < 1 || qd > FR_MAX_QD || reps < 1 || cell_ms < 1 || warm < 0)
		return -EINVAL;
	if (fr_bufs_alloc())
		return -ENOMEM;
	list = kstrdup(pairs, GFP_KERNEL);
	if (!list) {
		fr_bufs_free();
		return -ENOMEM;
	}
	cur = list;
	while ((spec = strsep(&cur, ",")) && np < FR_MAX_PAIRS) {
		if (!*spec)
			continue;
		pair_err[np] = fr_pair_setup(&fr_pairs[np], spec);
		if (pair_err[np])
			pr_info("shca_frwr_bench: err %s - - - %s\n",
				fr_pairs[np].label[0] ? fr_pairs[np].label :
				spec, pair_err[np]);
		np++;
	}
	pr_info("shca_frwr_bench: # qd=%d cell_ms=%d reps=%d warm=%d pairs=%s\n",
		qd, cell_ms, reps, warm, pairs);

	deadline = ktime_get_ns() + (u64)budget_s * NSEC_PER_SEC;
	for (rep = 1; rep <= reps; rep++) {
		for (z = 0; z < ARRAY_SIZE(fr_sizes); z++) {
			for (c = 0; c < FR_NCELLS; c++) {
				struct fr_run r = {
					.cell = c,
					.size = fr_sizes[z],
					.npages = fr_sizes[z] / PAGE_SIZE,
				};
				bool late = ktime_get_ns() > deadline;

				if (c == FR_MEMCPY) {
					if (late)
						pr_info("shca_frwr_bench: err - memcpy %u %d skipped\n",
							r.size, rep);
					else
						fr_cell_memcpy(&r, rep);
					continue;
				}
				/* ABBA: every other repetition reversed */
				for (k = 0; k < np; k++) {
					i = rep % 2 ? k : np - 1 - k;
					if (pair_err[i])
						continue;
					if (ktime_get_ns() > deadline) {
						pr_info("shca_frwr_bench: err %s %s %u %d skipped\n",
							fr_pairs[i].label,
							fr_cells[c].name,
							r.size, rep);
						continue;
					}
					fr_cell_dev(&fr_pairs[i], &r, rep);
				}
			}
		}
	}
	for (i = 0; i < np; i++)
		fr_pair_teardown(&fr_pairs[i]);
	kfree(list);
	fr_bufs_free();
	pr_info("shca_frwr_bench: done\n");
	return 0;
}

static void __exit shca_frwr_bench_exit(void)
{
}

module_init(shca_frwr_bench_init);
module_exit(shca_frwr_bench_exit);

MODULE_DESCRIPTION("FRWR cycle benchmark (nvme-rdma's per-I/O registration) for softhca and rdma_rxe");
MODULE_LICENSE("GPL");
