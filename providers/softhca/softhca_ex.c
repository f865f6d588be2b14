// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * softhca: the extended verbs of the provider.
 *
 * Queue pairs created with IBV_QP_INIT_ATTR_SEND_OPS_FLAGS get the
 * ibv_qp_ex work-request API (ibv_wr_start, ibv_wr_send ...,
 * ibv_wr_complete): the provider builds the requests in a batch of its
 * own and ibv_wr_complete() posts the batch as ibv_post_send() posts a
 * chain (one POST_SEND command, plus one command per window bind or
 * local invalidation), so the kernel checks them exactly as it checks
 * ibv_post_send()'s.
 * Inline data is copied when it is set (the caller may reuse its buffer
 * at once). Completion queues made with ibv_create_cq_ex() are the same
 * mapped rings as the others, read one entry at a time through
 * ibv_start_poll / ibv_next_poll / ibv_end_poll and the ibv_wc_read_*
 * accessors.
 */

#include <endian.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "softhca.h"

/* ---- ibv_qp_ex: building work requests ---------------------------------- */

static inline struct shca_qp *to_shca_qpx(struct ibv_qp_ex *qpx)
{
	return shca_container_of(qpx, struct shca_qp, vqp.qp_ex);
}

/*
 * Make room for @n more elements of @size bytes in *@arr (capacity *@cap,
 * @used in use, from *@by), from the QP's PD: a parent domain's allocator
 * if it has one.
 */
static int shca_grow(struct shca_qp *qp, void **arr, uint32_t *cap,
		     uint32_t used, uint32_t n, size_t size,
		     struct shca_allocator *by)
{
	uint32_t want = *cap ? *cap : 16;
	struct shca_allocator nby;
	void *p;

	if (n > UINT32_MAX - used)
		return ENOMEM;
	while (want < used + n) {
		if (want > UINT32_MAX / 2)
			return ENOMEM;
		want *= 2;
	}
	if (want == *cap)
		return 0;
	p = shca_pd_zalloc(qp->vqp.qp.pd, (size_t)want * size,
			   SHCA_RES_TYPE_QP_WR, &nby);
	if (!p)
		return ENOMEM;
	if (used)
		memcpy(p, *arr, (size_t)used * size);
	shca_pd_free(*arr, SHCA_RES_TYPE_QP_WR, *by);
	*arr = p;
	*cap = want;
	*by = nby;
	return 0;
}

/* The first error of the batch is the one ibv_wr_complete() returns. */
static void shca_wr_fail(struct shca_wr_batch *b, int err)
{
	if (!b->err)
		b->err = err;
}

/* Start the next work request of the batch. */
static struct shca_wr_slot *shca_wr_new(struct ibv_qp_ex *qpx,
					enum ibv_wr_opcode opcode)
{
	struct shca_qp *qp = to_shca_qpx(qpx);
	struct shca_wr_batch *b = &qp->batch;
	struct shca_wr_slot *s;
	int err;

	if (!b->open) {
		/* Not between ibv_wr_start() and ibv_wr_complete(). */
		shca_wr_fail(b, EINVAL);
		return NULL;
	}
	if (!(qp->send_ops & (1ULL << opcode))) {
		shca_wr_fail(b, EOPNOTSUPP);
		return NULL;
	}
	err = shca_grow(qp, (void **)&b->wr, &b->wr_cap, b->nwr, 1, sizeof(*s),
			&b->wr_by);
	if (err) {
		shca_wr_fail(b, err);
		return NULL;
	}
	s = &b->wr[b->nwr++];
	memset(s, 0, sizeof(*s));
	s->wr.wr_id = qpx->wr_id;
	s->wr.send_flags = qpx->wr_flags;
	s->wr.opcode = opcode;
	s->inl_off = SHCA_WR_NO_INLINE;
	return s;
}

/* The request the setters apply to: the last one started. */
static struct shca_wr_slot *shca_wr_cur(struct ibv_qp_ex *qpx)
{
	struct shca_wr_batch *b = &to_shca_qpx(qpx)->batch;

	if (!b->open || !b->nwr) {
		shca_wr_fail(b, EINVAL);
		return NULL;
	}
	return &b->wr[b->nwr - 1];
}

static void shca_wr_send(struct ibv_qp_ex *qpx)
{
	shca_wr_new(qpx, IBV_WR_SEND);
}

static void shca_wr_send_imm(struct ibv_qp_ex *qpx, __be32 imm_data)
{
	struct shca_wr_slot *s = shca_wr_new(qpx, IBV_WR_SEND_WITH_IMM);

	if (s)
		s->wr.imm_data = imm_data;
}

static void shca_wr_send_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct shca_wr_slot *s = shca_wr_new(qpx, IBV_WR_SEND_WITH_INV);

	if (s)
		s->wr.invalidate_rkey = invalidate_rkey;
}

static void shca_wr_rdma(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			 uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct shca_wr_slot *s = shca_wr_new(qpx, opcode);

	if (!s)
		return;
	s->wr.wr.rdma.rkey = rkey;
	s->wr.wr.rdma.remote_addr = remote_addr;
	s->wr.imm_data = imm_data;
}

static void shca_wr_rdma_write(struct ibv_qp_ex *qpx, uint32_t rkey,
			       uint64_t remote_addr)
{
	shca_wr_rdma(qpx, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void shca_wr_rdma_write_imm(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, __be32 imm_data)
{
	shca_wr_rdma(qpx, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		     imm_data);
}

static void shca_wr_rdma_read(struct ibv_qp_ex *qpx, uint32_t rkey,
			      uint64_t remote_addr)
{
	shca_wr_rdma(qpx, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void shca_wr_atomic(struct ibv_qp_ex *qpx, enum ibv_wr_opcode opcode,
			   uint32_t rkey, uint64_t remote_addr,
			   uint64_t compare_add, uint64_t swap)
{
	struct shca_wr_slot *s = shca_wr_new(qpx, opcode);

	if (!s)
		return;
	s->wr.wr.atomic.rkey = rkey;
	s->wr.wr.atomic.remote_addr = remote_addr;
	s->wr.wr.atomic.compare_add = compare_add;
	s->wr.wr.atomic.swap = swap;
}

static void shca_wr_atomic_cmp_swp(struct ibv_qp_ex *qpx, uint32_t rkey,
				   uint64_t remote_addr, uint64_t compare,
				   uint64_t swap)
{
	shca_wr_atomic(qpx, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		       compare, swap);
}

static void shca_wr_atomic_fetch_add(struct ibv_qp_ex *qpx, uint32_t rkey,
				     uint64_t remote_addr, uint64_t add)
{
	shca_wr_atomic(qpx, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		       add, 0);
}

/* Type 2 windows; posted through the driver's POST_LOCAL method. */
static void shca_wr_bind_mw(struct ibv_qp_ex *qpx, struct ibv_mw *mw,
			    uint32_t rkey,
			    const struct ibv_mw_bind_info *bind_info)
{
	struct shca_wr_slot *s = shca_wr_new(qpx, IBV_WR_BIND_MW);

	if (!s)
		return;
	s->wr.bind_mw.mw = mw;
	s->wr.bind_mw.rkey = rkey;
	s->wr.bind_mw.bind_info = *bind_info;
}

static void shca_wr_local_inv(struct ibv_qp_ex *qpx, uint32_t invalidate_rkey)
{
	struct shca_wr_slot *s = shca_wr_new(qpx, IBV_WR_LOCAL_INV);

	if (s)
		s->wr.invalidate_rkey = invalidate_rkey;
}

static void shca_wr_set_ud_addr(struct ibv_qp_ex *qpx, struct ibv_ah *ah,
				uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct shca_wr_slot *s = shca_wr_cur(qpx);

	if (!s)
		return;
	if (qpx->qp_base.qp_type != IBV_QPT_UD || !ah) {
		shca_wr_fail(&to_shca_qpx(qpx)->batch, EINVAL);
		return;
	}
	s->wr.wr.ud.ah = ah;
	s->wr.wr.ud.remote_qpn = remote_qpn;
	s->wr.wr.ud.remote_qkey = remote_qkey;
}

/* Replace the data of the current request by @n SGEs (inline data too). */
static void shca_wr_set_sges(struct ibv_qp_ex *qpx, size_t n,
			     const struct ibv_sge *sg)
{
	struct shca_qp *qp = to_shca_qpx(qpx);
	struct shca_wr_batch *b = &qp->batch;
	struct shca_wr_slot *s = shca_wr_cur(qpx);
	int err;

	if (!s)
		return;
	if (n > qp->max_send_sge) {
		shca_wr_fail(b, EINVAL);
		return;
	}
	s->wr.send_flags &= ~IBV_SEND_INLINE;
	s->inl_off = SHCA_WR_NO_INLINE;
	err = shca_grow(qp, (void **)&b->sge, &b->sge_cap, b->nsge, n,
			sizeof(*sg), &b->sge_by);
	if (err) {
		shca_wr_fail(b, err);
		return;
	}
	s->sge_first = b->nsge;
	s->wr.num_sge = n;
	if (n)
		memcpy(&b->sge[b->nsge], sg, n * sizeof(*sg));
	b->nsge += n;
}

static void shca_wr_set_sge(struct ibv_qp_ex *qpx, uint32_t lkey,
			    uint64_t addr, uint32_t length)
{
	struct ibv_sge sg = { .addr = addr, .length = length, .lkey = lkey };

	shca_wr_set_sges(qpx, 1, &sg);
}

static void shca_wr_set_sge_list(struct ibv_qp_ex *qpx, size_t num_sge,
				 const struct ibv_sge *sg_list)
{
	shca_wr_set_sges(qpx, num_sge, sg_list);
}

/*
 * Inline data is copied now, into the batch: one SGE over the copy,
 * pointed at it when the batch is posted (the buffer may move as it
 * grows).
 */
static void shca_wr_set_inline(struct ibv_qp_ex *qpx, size_t n,
			       const struct ibv_data_buf *buf)
{
	struct shca_qp *qp = to_shca_qpx(qpx);
	struct shca_wr_batch *b = &qp->batch;
	struct shca_wr_slot *s = shca_wr_cur(qpx);
	struct ibv_sge sg = {};
	size_t len = 0, i;
	int err;

	if (!s)
		return;
	for (i = 0; i < n; i++) {
		if (buf[i].length > qp->max_inline - len) {
			shca_wr_fail(b, EINVAL);
			return;
		}
		len += buf[i].length;
	}
	shca_wr_set_sges(qpx, 1, &sg);
	if (b->err)
		return;
	err = shca_grow(qp, (void **)&b->inl, &b->inl_cap, b->ninl, len, 1,
			&b->inl_by);
	if (err) {
		shca_wr_fail(b, err);
		return;
	}
	s->inl_off = b->ninl;
	b->sge[s->sge_first].length = len;
	for (i = 0; i < n; i++) {
		if (buf[i].length)
			memcpy(b->inl + b->ninl, buf[i].addr, buf[i].length);
		b->ninl += buf[i].length;
	}
	s->wr.send_flags |= IBV_SEND_INLINE;
}

static void shca_wr_set_inline_data(struct ibv_qp_ex *qpx, void *addr,
				    size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	shca_wr_set_inline(qpx, 1, &buf);
}

static void shca_wr_set_inline_data_list(struct ibv_qp_ex *qpx,
					 size_t num_buf,
					 const struct ibv_data_buf *buf_list)
{
	shca_wr_set_inline(qpx, num_buf, buf_list);
}

static void shca_wr_reset(struct shca_wr_batch *b)
{
	b->nwr = 0;
	b->nsge = 0;
	b->ninl = 0;
	b->err = 0;
	b->open = false;
}

/*
 * One batch at a time per QP: ibv_wr_start() takes the QP's builder lock,
 * ibv_wr_complete() and ibv_wr_abort() give it back.
 */
static void shca_wr_start(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = to_shca_qpx(qpx);

	pthread_spin_lock(&qp->batch_lock);
	shca_wr_reset(&qp->batch);
	qp->batch.open = true;
}

static void shca_wr_abort(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = to_shca_qpx(qpx);

	shca_wr_reset(&qp->batch);
	pthread_spin_unlock(&qp->batch_lock);
}

static int shca_wr_complete(struct ibv_qp_ex *qpx)
{
	struct shca_qp *qp = to_shca_qpx(qpx);
	struct shca_wr_batch *b = &qp->batch;
	struct ibv_send_wr *bad;
	uint32_t i;
	int err = b->err;

	if (!err && b->nwr) {
		for (i = 0; i < b->nwr; i++) {
			struct shca_wr_slot *s = &b->wr[i];

			s->wr.next = i + 1 < b->nwr ? &b->wr[i + 1].wr : NULL;
			s->wr.sg_list = s->wr.num_sge ? &b->sge[s->sge_first] :
							NULL;
			if (s->inl_off != SHCA_WR_NO_INLINE)
				b->sge[s->sge_first].addr =
					(uintptr_t)(b->inl + s->inl_off);
		}
		err = shca_post_send(&qpx->qp_base, &b->wr[0].wr, &bad);
	}
	shca_wr_reset(b);
	pthread_spin_unlock(&qp->batch_lock);
	return err;
}

/*
 * What ibv_wr_* can post, by QP type: memory-window binds and local
 * invalidation on connected QPs only.
 */
#define SHCA_SEND_OPS_UD	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_SEND_WITH_IMM)
#define SHCA_SEND_OPS_UC	(SHCA_SEND_OPS_UD | IBV_QP_EX_WITH_RDMA_WRITE | \
				 IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM | \
				 IBV_QP_EX_WITH_BIND_MW | \
				 IBV_QP_EX_WITH_LOCAL_INV)
#define SHCA_SEND_OPS_RC	(SHCA_SEND_OPS_UC | IBV_QP_EX_WITH_SEND_WITH_INV | \
				 IBV_QP_EX_WITH_RDMA_READ | \
				 IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP | \
				 IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD)

/**
 * shca_qp_ex_check() - can a QP of this type offer these send ops
 * @qp_type: IBV_QPT_*
 * @send_ops_flags: IBV_QP_EX_WITH_* asked for
 *
 * Return: 0 or EOPNOTSUPP.
 */
int shca_qp_ex_check(enum ibv_qp_type qp_type, uint64_t send_ops_flags)
{
	uint64_t ok = qp_type == IBV_QPT_RC ? SHCA_SEND_OPS_RC :
		      qp_type == IBV_QPT_UC ? SHCA_SEND_OPS_UC :
					      SHCA_SEND_OPS_UD;

	return send_ops_flags & ~ok ? EOPNOTSUPP : 0;
}

/* IBV_QP_EX_WITH_* -> the bit of its IBV_WR_* opcode in shca_qp.send_ops */
static uint64_t shca_send_ops_opcodes(uint64_t flags)
{
	static const struct {
		uint64_t flag;
		enum ibv_wr_opcode op;
	} map[] = {
		{ IBV_QP_EX_WITH_RDMA_WRITE, IBV_WR_RDMA_WRITE },
		{ IBV_QP_EX_WITH_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_WRITE_WITH_IMM },
		{ IBV_QP_EX_WITH_SEND, IBV_WR_SEND },
		{ IBV_QP_EX_WITH_SEND_WITH_IMM, IBV_WR_SEND_WITH_IMM },
		{ IBV_QP_EX_WITH_RDMA_READ, IBV_WR_RDMA_READ },
		{ IBV_QP_EX_WITH_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_CMP_AND_SWP },
		{ IBV_QP_EX_WITH_ATOMIC_FETCH_AND_ADD, IBV_WR_ATOMIC_FETCH_AND_ADD },
		{ IBV_QP_EX_WITH_SEND_WITH_INV, IBV_WR_SEND_WITH_INV },
		{ IBV_QP_EX_WITH_BIND_MW, IBV_WR_BIND_MW },
		{ IBV_QP_EX_WITH_LOCAL_INV, IBV_WR_LOCAL_INV },
	};
	uint64_t ops = 0;
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (flags & map[i].flag)
			ops |= 1ULL << map[i].op;
	return ops;
}

/**
 * shca_qp_ex_init() - give a new QP the ibv_qp_ex work-request API
 * @qp: the QP, created by the kernel
 * @attr: its creation attributes, with the capabilities granted
 */
void shca_qp_ex_init(struct shca_qp *qp, const struct ibv_qp_init_attr_ex *attr)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	pthread_spin_init(&qp->batch_lock, PTHREAD_PROCESS_PRIVATE);
	qp->send_ops = shca_send_ops_opcodes(attr->send_ops_flags);
	qp->max_send_sge = attr->cap.max_send_sge;
	qp->max_inline = attr->cap.max_inline_data;

	qpx->wr_start = shca_wr_start;
	qpx->wr_complete = shca_wr_complete;
	qpx->wr_abort = shca_wr_abort;
	qpx->wr_send = shca_wr_send;
	qpx->wr_send_imm = shca_wr_send_imm;
	qpx->wr_send_inv = shca_wr_send_inv;
	qpx->wr_rdma_write = shca_wr_rdma_write;
	qpx->wr_rdma_write_imm = shca_wr_rdma_write_imm;
	qpx->wr_rdma_read = shca_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = shca_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = shca_wr_atomic_fetch_add;
	qpx->wr_bind_mw = shca_wr_bind_mw;
	qpx->wr_local_inv = shca_wr_local_inv;
	qpx->wr_set_ud_addr = shca_wr_set_ud_addr;
	qpx->wr_set_sge = shca_wr_set_sge;
	qpx->wr_set_sge_list = shca_wr_set_sge_list;
	qpx->wr_set_inline_data = shca_wr_set_inline_data;
	qpx->wr_set_inline_data_list = shca_wr_set_inline_data_list;
	qp->vqp.comp_mask |= VERBS_QP_EX;
}

/**
 * shca_qp_ex_fini() - free what the work-request API allocated
 * @qp: a QP being destroyed
 */
void shca_qp_ex_fini(struct shca_qp *qp)
{
	struct shca_wr_batch *b = &qp->batch;

	if (!(qp->vqp.comp_mask & VERBS_QP_EX))
		return;
	shca_pd_free(b->wr, SHCA_RES_TYPE_QP_WR, b->wr_by);
	shca_pd_free(b->sge, SHCA_RES_TYPE_QP_WR, b->sge_by);
	shca_pd_free(b->inl, SHCA_RES_TYPE_QP_WR, b->inl_by);
	pthread_spin_destroy(&qp->batch_lock);
}

/* ---- ibv_cq_ex: reading completions one at a time ------------------------ */

static inline struct shca_cq *to_shca_cqx(struct ibv_cq_ex *cqx)
{
	return shca_container_of(cqx, struct shca_cq, vcq.cq_ex);
}

/* Make the entry at the consumer index current, if the kernel wrote it. */
static int shca_cqx_load(struct shca_cq *cq)
{
	const struct softhca_cqe *e;

	if (cq->consumer == cq->producer) {
		cq->producer = __atomic_load_n(&cq->ring->producer,
					       __ATOMIC_ACQUIRE);
		if (cq->consumer == cq->producer) {
			cq->cur = NULL;
			return ENOENT;
		}
	}
	e = &cq->ring->cqe[cq->consumer & cq->mask];
	cq->cur = e;
	cq->vcq.cq_ex.wr_id = e->wr_id;
	cq->vcq.cq_ex.status = e->status;
	return 0;
}

static int shca_start_poll(struct ibv_cq_ex *cqx, struct ibv_poll_cq_attr *attr)
{
	struct shca_cq *cq = to_shca_cqx(cqx);
	int err;

	if (attr->comp_mask)
		return EINVAL;
	pthread_spin_lock(&cq->lock);
	cq->producer = cq->consumer;	/* reloaded by shca_cqx_load() */
	err = shca_cqx_load(cq);
	/* Nothing to poll: ibv_end_poll() is not called after ENOENT. */
	if (err)
		pthread_spin_unlock(&cq->lock);
	return err;
}

static int shca_next_poll(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = to_shca_cqx(cqx);

	if (cq->cur)
		cq->consumer++;
	return shca_cqx_load(cq);
}

static void shca_end_poll(struct ibv_cq_ex *cqx)
{
	struct shca_cq *cq = to_shca_cqx(cqx);

	if (cq->cur)
		cq->consumer++;
	cq->cur = NULL;
	__atomic_store_n(&cq->ring->consumer, cq->consumer, __ATOMIC_RELEASE);
	pthread_spin_unlock(&cq->lock);
}

static enum ibv_wc_opcode shca_read_opcode(struct ibv_cq_ex *cqx)
{
	return to_shca_cqx(cqx)->cur->opcode;
}

static uint32_t shca_read_vendor_err(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint32_t shca_read_byte_len(struct ibv_cq_ex *cqx)
{
	return to_shca_cqx(cqx)->cur->byte_len;
}

/*
 * Immediate data, in network order as the kernel keeps it; with
 * IBV_WC_WITH_INV the invalidated rkey, which the CQE holds in host order
 * and ibv_wc_read_invalidated_rkey() converts back from network order.
 */
static __be32 shca_read_imm_data(struct ibv_cq_ex *cqx)
{
	const struct softhca_cqe *e = to_shca_cqx(cqx)->cur;

	if (e->flags & SOFTHCA_CQE_WITH_INV)
		return htobe32(e->ex);
	return (__be32)e->ex;
}

static uint32_t shca_read_qp_num(struct ibv_cq_ex *cqx)
{
	return to_shca_cqx(cqx)->cur->qp_num;
}

static uint32_t shca_read_src_qp(struct ibv_cq_ex *cqx)
{
	return to_shca_cqx(cqx)->cur->src_qp;
}

static unsigned int shca_read_wc_flags(struct ibv_cq_ex *cqx)
{
	return shca_cqe_wc_flags(to_shca_cqx(cqx)->cur);
}

/* RoCE: no LIDs. */
static uint32_t shca_read_slid(struct ibv_cq_ex *cqx)
{
	return 0;
}

static uint8_t shca_read_sl(struct ibv_cq_ex *cqx)
{
	return to_shca_cqx(cqx)->cur->sl;
}

static uint8_t shca_read_dlid_path_bits(struct ibv_cq_ex *cqx)
{
	return 0;
}

/**
 * shca_cq_ex_check() - can a CQ be made with these extended attributes
 * @attr: ibv_create_cq_ex()'s attributes
 *
 * Every standard field can be read; completion timestamps, flow tags,
 * VLANs and tag matching cannot, nor can a CQ ignore overruns. A CQ may
 * be made on a parent domain (its allocators then serve).
 *
 * Return: 0 or EOPNOTSUPP.
 */
int shca_cq_ex_check(const struct ibv_cq_init_attr_ex *attr)
{
	if (attr->wc_flags & ~(uint64_t)IBV_WC_STANDARD_FLAGS)
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(uint32_t)(IBV_CQ_INIT_ATTR_MASK_FLAGS |
					  IBV_CQ_INIT_ATTR_MASK_PD))
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	    (attr->flags & ~(uint32_t)IBV_CREATE_CQ_ATTR_SINGLE_THREADED))
		return EOPNOTSUPP;
	return 0;
}

/**
 * shca_cq_ex_init() - give a new CQ the ibv_cq_ex polling API
 * @cq: the CQ, its ring mapped
 */
void shca_cq_ex_init(struct shca_cq *cq)
{
	struct ibv_cq_ex *cqx = &cq->vcq.cq_ex;

	cqx->start_poll = shca_start_poll;
	cqx->next_poll = shca_next_poll;
	cqx->end_poll = shca_end_poll;
	cqx->read_opcode = shca_read_opcode;
	cqx->read_vendor_err = shca_read_vendor_err;
	cqx->read_byte_len = shca_read_byte_len;
	cqx->read_imm_data = shca_read_imm_data;
	cqx->read_qp_num = shca_read_qp_num;
	cqx->read_src_qp = shca_read_src_qp;
	cqx->read_wc_flags = shca_read_wc_flags;
	cqx->read_slid = shca_read_slid;
	cqx->read_sl = shca_read_sl;
	cqx->read_dlid_path_bits = shca_read_dlid_path_bits;
}
