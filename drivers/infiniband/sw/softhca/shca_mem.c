// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - key resolution and the one copy engine: every byte that
 * moves through an lkey or rkey, for both links and every work request,
 * moves here.
 *
 * The copy path. shca_mr_copy() and shca_mr_copy_mr() are the only
 * functions that move bytes through an MR. They resolve (key, iova,
 * length, access, PD) under the MR's lock and refuse, with distinct
 * errors: an unknown or stale key (-ENOKEY), an invalidated or never
 * registered MR (-EKEYREVOKED), another PD (-EACCES), missing access
 * rights (-EPERM), an iova + length that wraps (-EOVERFLOW), a range
 * outside the region (-ERANGE) and a range the translation does not
 * cover (-EFAULT, an engine bug: never a silent short copy). The
 * translations of DMA, USER and DM MRs never change while published, so
 * their bytes move without the lock. Those of fast-reg MRs change with
 * every registration: their bytes move in chunks of SHCA_COPY_CHUNK,
 * each under the MR's lock and only while the registration the transfer
 * was resolved under is still the one in force (mr->gen). A transfer
 * racing an invalidation or re-registration therefore stops with
 * -EKEYREVOKED at a chunk boundary, and once shca_mr_invalidate() has
 * returned no byte moves through the old translation - what a ULP that
 * unmaps its buffers after LOCAL_INV completes relies on.
 */

#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/overflow.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "shca_mem.h"
#include "shca_verbs.h"

/* Bytes a transfer through a fast-reg MR moves per hold of its lock. */
#define SHCA_COPY_CHUNK		SZ_16K

/*
 * Check @t for @len bytes against @mr (under its lock unless nothing of
 * it can change) and describe the range in @span.
 */
static int shca_mr_check_target(struct shca_mr *mr,
				const struct shca_mem_target *t, u64 len,
				struct shca_span *span)
{
	u64 off = t->iova - mr->iova;
	int err;

	if (mr->mw_type)
		return shca_mw_check_target(mr, t, len, span);
	if (mr->key != t->key)
		err = -ENOKEY;
	else if (mr->state != SHCA_MR_VALID)
		err = -EKEYREVOKED;
	else if (mr->ibmr.pd != t->pd)
		err = -EACCES;
	else if ((mr->access & t->access) != t->access)
		err = -EPERM;
	else if (t->iova < mr->iova || off > mr->length ||
		 len > mr->length - off)
		err = -ERANGE;
	else if (mr->sig && mr->sig->pi)
		err = 0;	/* registration checked the translation */
	else if (len && (off > shca_map_len(mr->cur) ||
			 len > shca_map_len(mr->cur) - off))
		err = -EFAULT;
	else
		err = 0;
	span->mr = mr;
	span->map = mr->cur;
	span->off = off;
	span->gen = mr->gen;
	span->odp = mr->odp;
	span->no_sleep = t->no_sleep;
	span->locked = shca_mr_is_fast_reg(mr) || span->odp;
	span->sig = mr->sig && mr->sig->pi;
	return err;
}

/* What SHCA_LOCAL_DMA_LKEY translates through: every kernel address. */
static const struct shca_map shca_local_dma_map = {
	.data = { .kind = SHCA_XLAT_IDENTITY, .len = U64_MAX },
};

/*
 * The reserved lkey: what the DMA MR with local write that the core
 * would otherwise create for every kernel PD grants, without the MR (and
 * its lookup). Remote access and userspace PDs do not know the key.
 */
static int shca_local_dma_resolve(const struct shca_mem_target *t,
				  struct shca_span *span)
{
	if (!t->pd || t->pd->uobject || (t->access & ~IB_ACCESS_LOCAL_WRITE))
		return -ENOKEY;
	*span = (struct shca_span){ .map = &shca_local_dma_map,
				    .off = t->iova };
	return 0;
}

/* Drop the reference a resolved span holds, if any. */
static void shca_span_put(struct shca_span *span)
{
	if (span->mr)
		shca_mr_put(span->mr);
}

/*
 * Resolve @t for @len bytes: find the MR and check key, state, PD, access
 * and range. On success @span holds a reference to the MR (none for
 * SHCA_LOCAL_DMA_LKEY) and the translation in force.
 */
static int shca_mr_resolve(struct shca_dev *sdev,
			   const struct shca_mem_target *t, u64 len,
			   struct shca_span *span)
{
	unsigned long flags;
	struct shca_mr *mr;
	u64 end;
	int err;

	if (check_add_overflow(t->iova, len, &end))
		return -EOVERFLOW;
	if (t->key == SHCA_LOCAL_DMA_LKEY)
		return shca_local_dma_resolve(t, span);

	mr = shca_mr_get(sdev, t->key);
	if (!mr)
		return -ENOKEY;

	if (mr->type == IB_MR_TYPE_DMA) {
		/*
		 * Nothing of a DMA MR changes once it is published (the
		 * lookup's RCU dereference ordered its initialisation
		 * before us): the kernel ULPs' local_dma_lkey path takes no
		 * lock.
		 */
		err = shca_mr_check_target(mr, t, len, span);
	} else {
		spin_lock_irqsave(&mr->lock, flags);
		err = shca_mr_check_target(mr, t, len, span);
		spin_unlock_irqrestore(&mr->lock, flags);
	}

	if (err)
		shca_mr_put(mr);
	return err;
}

/*
 * Lock what the next chunk of a transfer from @b to @a needs: the MRs
 * whose translation can change, in address order (the same MR once), and
 * check that the registration each side was resolved under is still in
 * force (*@a_failed says whether @a's is not). IRQs stay off until
 * shca_spans_unlock(). For sparse, every path takes both contexts, real
 * or not.
 */
static int shca_spans_lock(struct shca_span *a, struct shca_span *b,
			   unsigned long *flags, bool *a_failed)
	__acquires(&a->mr->lock) __acquires(&b->mr->lock)
{
	struct shca_mr *x = a->locked ? a->mr : NULL;
	struct shca_mr *y = b->locked ? b->mr : NULL;

	if (x == y)
		y = NULL;
	if (!x)
		swap(x, y);
	if (y && y < x)
		swap(x, y);

	local_irq_save(*flags);
	if (x)
		spin_lock(&x->lock);
	else
		__acquire(&a->mr->lock);
	if (y)
		spin_lock_nested(&y->lock, SINGLE_DEPTH_NESTING);
	else
		__acquire(&b->mr->lock);

	*a_failed = a->locked && a->mr->gen != a->gen;
	if (*a_failed || (b->locked && b->mr->gen != b->gen))
		return -EKEYREVOKED;
	return 0;
}

static void shca_spans_unlock(struct shca_span *a, struct shca_span *b,
			      unsigned long flags)
	__releases(&a->mr->lock) __releases(&b->mr->lock)
{
	if (b->locked && b->mr != a->mr)
		spin_unlock(&b->mr->lock);
	else
		__release(&b->mr->lock);
	if (a->locked)
		spin_unlock(&a->mr->lock);
	else
		__release(&a->mr->lock);
	local_irq_restore(flags);
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_mr_copy_chunk_done() - a transfer moved a chunk (KUnit hook)
 * @mr: the MR the chunk moved through
 *
 * Called between chunks, without locks. KUnit tests redirect it to
 * change the MR in the middle of a transfer.
 */
void shca_mr_copy_chunk_done(struct shca_mr *mr)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_mr_copy_chunk_done, mr);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_chunk_done);
#else
static inline void shca_mr_copy_chunk_done(struct shca_mr *mr)
{
}
#endif

/*
 * Copy @len bytes between @m at region offset @off and @buf. Only a
 * translation that breaks its own invariants has a hole here
 * (shca_mr_resolve() checked the range against the map's length).
 */
static int shca_map_copy(const struct shca_map *m, u64 off, void *buf,
			 u64 len, enum shca_copy_dir dir)
{
	while (len) {
		u64 contig;
		void *p = shca_map_ptr(m, off, &contig);
		u64 n;

		if (!p)
			return -EFAULT;
		n = min(len, contig);
		if (dir == SHCA_COPY_TO_MR)
			memcpy(p, buf, n);
		else
			memcpy(buf, p, n);
		buf += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Run the MR's stream over @len bytes of wire at @wire: read towards
 * the wire, written towards memory, as the stream was started. Latch
 * the stream's first error, with the key it came through.
 */
static int shca_sig_pump(struct shca_mr *mr, const struct shca_map *m,
			 void *wire, u64 len)
{
	struct shca_sig_state *s = mr->sig;
	struct ib_sig_err err;

	lockdep_assert_held(&mr->lock);

	/* Go on after the wire is done: the last tuple may still be due. */
	for (;;) {
		struct shca_sig_bufs b = { .wire = wire, .wire_len = len };
		u64 dc = 0, mc = 0, used;

		b.data = shca_xlat_ptr(&m->data, s->data_off, &dc);
		b.data_len = b.data ? dc : 0;
		b.meta = shca_xlat_ptr(&m->meta, s->meta_off, &mc);
		b.meta_len = b.meta ? mc : 0;
		shca_sig_stream_xfer(&s->st, &b);

		used = len - b.wire_len;
		wire += used;
		len -= used;
		s->wire_off += used;
		s->data_off += dc - b.data_len;
		s->meta_off += mc - b.meta_len;
		if (!used && dc == b.data_len && mc == b.meta_len)
			break;
	}
	if (!s->reported && shca_sig_stream_error(&s->st, &err)) {
		err.key = mr->key;
		shca_mr_sig_latch(mr, &err);
		s->reported = true;
	}
	/* Registration checked the translation: a hole is an engine bug. */
	return len ? -EFAULT : 0;
}

/*
 * Start a transfer through the wire view at @off. Towards the wire, one
 * that starts inside a block replays the block's first bytes, so that
 * the block is checked and its PI built whole; towards memory, those
 * bytes (and maybe the PI) are gone, so such a start is refused unless
 * it continues the MR's transfer in progress (shca_sig_copy()).
 */
static int shca_sig_start(struct shca_mr *mr, const struct shca_map *m,
			  u64 off, bool to_wire)
{
	struct shca_sig_state *s = mr->sig;
	bool mem_pi = s->attrs.mem.sig_type == IB_SIG_TYPE_T10_DIF;
	u8 scratch[64];
	u32 skip, block;
	int err;

	lockdep_assert_held(&mr->lock);

	block = div_u64_rem(off, s->wire_block, &skip);
	if (skip && !to_wire)
		return -EINVAL;
	err = shca_sig_stream_init(&s->st, &s->attrs, to_wire, block);
	if (WARN_ON_ONCE(err))
		return err;
	s->live = true;
	s->reported = false;
	s->gen = mr->gen;
	s->wire_off = off - skip;
	s->data_off = (u64)block * s->interval;
	s->meta_off = mem_pi ? (u64)block * SHCA_PI_SIZE : 0;
	while (skip) {
		u32 n = min_t(u32, skip, sizeof(scratch));

		err = shca_sig_pump(mr, m, scratch, n);
		if (err)
			return err;
		skip -= n;
	}
	return 0;
}

/*
 * Move @len bytes between @buf (wire bytes) and the wire view of @span
 * at @span->off: from it with @to_wire, else into it. A transfer goes
 * on where the MR's previous one stopped if it starts there in the same
 * direction under the same registration; so chunks, SGEs and even work
 * requests may split blocks and tuples anywhere.
 */
static int shca_sig_copy(struct shca_span *span, void *buf, u64 len,
			 bool to_wire)
{
	struct shca_mr *mr = span->mr;
	struct shca_sig_state *s = mr->sig;
	int err;

	lockdep_assert_held(&mr->lock);

	if (!s->live || s->gen != mr->gen || s->st.to_wire != to_wire ||
	    s->wire_off != span->off) {
		err = shca_sig_start(mr, span->map, span->off, to_wire);
		if (err)
			goto fail;
	}
	err = shca_sig_pump(mr, span->map, buf, len);
	if (!err)
		return 0;
fail:
	s->live = false;
	return err;
}

#if SHCA_ODP
/*
 * An ODP span: are the pages of its next @len bytes there (with write
 * permission for @write)? Under the MR's lock.
 */
static bool shca_span_odp_ready(const struct shca_span *s, u64 len,
				bool write)
{
	const struct shca_xlat *x;

	if (!s->odp)
		return true;
	lockdep_assert_held(&s->mr->lock);
	x = &s->map->data;
	return shca_odp_ready(x->odp, x->base + s->off, len, write);
}

/*
 * Fault in the next @len bytes of an ODP span, no lock held: 0 to try
 * again, -EAGAIN where the transfer cannot sleep, or an error to fail.
 */
static int shca_span_odp_fault(const struct shca_span *s, u64 len,
			       bool write, unsigned int *tries)
{
	if (s->no_sleep)
		return -EAGAIN;
	return shca_odp_retry(s->mr, s->map->data.base + s->off, len, write,
			      tries);
}
#else
static bool shca_span_odp_ready(const struct shca_span *s, u64 len,
				bool write)
{
	return true;
}

static int shca_span_odp_fault(const struct shca_span *s, u64 len,
			       bool write, unsigned int *tries)
{
	return -EFAULT;
}
#endif

/* Move @len bytes between @span and @buf, chunk by chunk. */
static int shca_span_copy(struct shca_span *span, void *buf, u64 len,
			  enum shca_copy_dir dir)
{
	bool write = dir == SHCA_COPY_TO_MR, absent;
	struct shca_mr *mr = span->mr;
	unsigned int tries = 0;
	unsigned long flags;
	int err;

	if (!span->locked)
		return shca_map_copy(span->map, span->off, buf, len, dir);

	while (len) {
		u64 n = min_t(u64, len, SHCA_COPY_CHUNK);

		spin_lock_irqsave(&mr->lock, flags);
		absent = false;
		if (mr->gen != span->gen)
			err = -EKEYREVOKED;
		else if (!shca_span_odp_ready(span, n, write))
			absent = true;
		else if (span->sig)
			err = shca_sig_copy(span, buf, n,
					    dir == SHCA_COPY_FROM_MR);
		else
			err = shca_map_copy(span->map, span->off, buf, n, dir);
		spin_unlock_irqrestore(&mr->lock, flags);
		if (absent) {
			err = shca_span_odp_fault(span, n, write, &tries);
			if (!err)
				continue;
		}
		if (err)
			return err;
		tries = 0;
		span->off += n;
		buf += n;
		len -= n;
		shca_mr_copy_chunk_done(mr);
	}
	return 0;
}

/*
 * Move @len wire bytes between two integrity MRs through @dst's bounce
 * buffer: @dst's lock is held.
 */
static int shca_span_move_sig(struct shca_span *dst, struct shca_span *src,
			      u64 len, bool *dst_failed)
{
	u8 *bounce = dst->mr->sig->bounce;
	int err;

	/* One MR keeps one transfer: it cannot be read and written at once. */
	if (dst->mr == src->mr) {
		*dst_failed = true;
		return -EINVAL;
	}
	while (len) {
		u64 n = min_t(u64, len, SHCA_SIG_BOUNCE);

		*dst_failed = false;
		err = shca_sig_copy(src, bounce, n, true);
		if (err)
			return err;
		*dst_failed = true;
		err = shca_sig_copy(dst, bounce, n, false);
		if (err)
			return err;
		src->off += n;
		dst->off += n;
		len -= n;
	}
	return 0;
}

/*
 * Move @len bytes from @src to @dst, advancing both: straight from the
 * source's memory into the destination's, or through the engine of the
 * one that is an integrity MR.
 */
static int shca_span_move(struct shca_span *dst, struct shca_span *src,
			  u64 len, bool *dst_failed)
{
	if (dst->sig && src->sig)
		return shca_span_move_sig(dst, src, len, dst_failed);

	while (len) {
		struct shca_span *mem = src->sig ? dst : src;
		u64 contig, n;
		void *p = shca_map_ptr(mem->map, mem->off, &contig);
		int err;

		*dst_failed = mem == dst;
		if (!p)
			return -EFAULT;
		n = min(len, contig);
		*dst_failed = !src->sig;
		if (src->sig)
			err = shca_sig_copy(src, p, n, true);
		else if (dst->sig)
			err = shca_sig_copy(dst, p, n, false);
		else
			err = shca_map_copy(dst->map, dst->off, p, n,
					    SHCA_COPY_TO_MR);
		if (err)
			return err;
		src->off += n;
		dst->off += n;
		len -= n;
	}
	return 0;
}

/* Move @len bytes from @src to @dst, chunk by chunk when either can change. */
static int shca_span_copy_span(struct shca_span *dst, struct shca_span *src,
			       u64 len, bool *dst_failed)
{
	unsigned long flags;
	int err;

	struct shca_span *absent;
	unsigned int tries = 0;

	if (!dst->locked && !src->locked)
		return shca_span_move(dst, src, len, dst_failed);

	while (len) {
		u64 n = min_t(u64, len, SHCA_COPY_CHUNK);

		absent = NULL;
		err = shca_spans_lock(dst, src, &flags, dst_failed);
		if (!err && !shca_span_odp_ready(dst, n, true))
			absent = dst;
		else if (!err && !shca_span_odp_ready(src, n, false))
			absent = src;
		else if (!err)
			err = shca_span_move(dst, src, n, dst_failed);
		shca_spans_unlock(dst, src, flags);
		if (absent) {
			*dst_failed = absent == dst;
			err = shca_span_odp_fault(absent, n, absent == dst,
						  &tries);
			if (!err)
				continue;
		}
		if (err)
			return err;
		tries = 0;
		len -= n;
		shca_mr_copy_chunk_done(dst->mr);
	}
	return 0;
}

/**
 * shca_mr_copy() - move bytes between a buffer and memory named by a key
 * @sdev: device the key belongs to
 * @t: the key, iova, PD and required access (IB_ACCESS_LOCAL_WRITE to
 *	write locally, IB_ACCESS_REMOTE_* for a remote peer, 0 to read
 *	locally)
 * @buf: kernel buffer
 * @len: bytes to move
 * @dir: SHCA_COPY_TO_MR or SHCA_COPY_FROM_MR
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or -ENOKEY, -EKEYREVOKED, -EACCES, -EPERM, -EOVERFLOW,
 * -ERANGE, -EFAULT (see the file comment); nothing is copied then. A
 * fast-reg MR invalidated or re-registered while the bytes move stops
 * the transfer at a chunk boundary with -EKEYREVOKED; the chunks before
 * it have moved.
 */
int shca_mr_copy(struct shca_dev *sdev, const struct shca_mem_target *t,
		 void *buf, u64 len, enum shca_copy_dir dir)
{
	struct shca_span span;
	int err;

	err = shca_mr_resolve(sdev, t, len, &span);
	if (err)
		return err;
	err = shca_span_copy(&span, buf, len, dir);
	shca_span_put(&span);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy);

/**
 * shca_mr_copy_xdev() - move bytes between keyed regions of two devices
 * @dst_sdev: device of the destination key
 * @dst: destination key, iova, PD and required access
 * @src_sdev: device of the source key
 * @src: source key, iova, PD and required access
 * @len: bytes to move
 * @dst_failed: set on error: true if the destination was refused (or its
 *	registration changed under the transfer), false if the source was
 *
 * Both regions are resolved and checked before any byte moves.
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or an error of shca_mr_copy() for either side.
 */
int shca_mr_copy_xdev(struct shca_dev *dst_sdev,
		      const struct shca_mem_target *dst,
		      struct shca_dev *src_sdev,
		      const struct shca_mem_target *src, u64 len,
		      bool *dst_failed)
{
	struct shca_span s;
	int err;

	*dst_failed = false;
	err = shca_mr_hold(src_sdev, src, len, &s);
	if (err)
		return err;
	err = shca_mr_copy_held(&s, 0, dst_sdev, dst, len, false, dst_failed);
	shca_mr_unhold(&s);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_xdev);

/**
 * shca_mr_copy_mr() - move bytes from one keyed region to another
 * @sdev: device both keys belong to
 * @dst: destination key, iova, PD and required access
 * @src: source key, iova, PD and required access
 * @len: bytes to move
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or an error of shca_mr_copy() for either side.
 */
int shca_mr_copy_mr(struct shca_dev *sdev, const struct shca_mem_target *dst,
		    const struct shca_mem_target *src, u64 len)
{
	bool dst_failed;

	return shca_mr_copy_xdev(sdev, dst, sdev, src, len, &dst_failed);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_mr);

/**
 * shca_mr_hold() - resolve an access through a key and keep it
 * @sdev: device the key belongs to
 * @t: the key, iova, PD and required access
 * @len: bytes the access will cover
 * @span: filled on success; give it back with shca_mr_unhold()
 *
 * The checks of shca_mr_copy(), made once for a range that a request
 * then moves in pieces with shca_mr_copy_held() and
 * shca_mr_copy_held_buf(). Holding defers the MR's deregistration, so
 * a span is held only while one request executes, never across a wait.
 *
 * Context: any context; does not sleep.
 * Return: 0, or the error shca_mr_copy() would return (@span->mr is
 * then NULL: nothing to give back).
 */
int shca_mr_hold(struct shca_dev *sdev, const struct shca_mem_target *t,
		 u64 len, struct shca_span *span)
{
	int err = shca_mr_resolve(sdev, t, len, span);

	if (err)
		span->mr = NULL;
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_hold);

/**
 * shca_mr_fault() - fault in the pages an access through a key will use
 * @sdev: device the key belongs to
 * @t: the key, iova, PD and required access
 * @len: bytes the access will cover
 * @write: the access writes
 *
 * For callers that must then move the bytes where they cannot sleep (an
 * atomic, under shca_atomic_lock): the access checks of shca_mr_copy(),
 * and the pages of an ODP MR faulted in. Nothing to do for other MRs.
 *
 * Context: process context, no lock held; sleeps.
 * Return: 0, or the error the access or the fault gets.
 */
int shca_mr_fault(struct shca_dev *sdev, const struct shca_mem_target *t,
		  u64 len, bool write)
{
	struct shca_span span;
	unsigned int tries = 0;
	int err;

	err = shca_mr_resolve(sdev, t, len, &span);
	if (err)
		return err;
	span.no_sleep = false;
	err = span.odp ? shca_span_odp_fault(&span, len, write, &tries) : 0;
	shca_span_put(&span);
	return err;
}

/**
 * shca_mr_unhold() - drop a span of shca_mr_hold()
 * @span: the span; its MR may be freed on return
 *
 * Context: any context; does not sleep.
 */
void shca_mr_unhold(struct shca_span *span)
{
	shca_span_put(span);
	span->mr = NULL;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_unhold);

/**
 * shca_mr_copy_held() - move bytes between a held span and a keyed region
 * @held: a span of shca_mr_hold(), not changed
 * @off: offset in @held of the first byte; @off + @len must lie within
 *	the length it was held for
 * @sdev: device of the other key
 * @t: the other key, iova, PD and required access
 * @len: bytes to move
 * @to_held: move from @t into @held, else from @held to @t
 * @dst_failed: set on error: true if the destination was refused (or
 *	its registration changed under the transfer), false if the source
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or an error of shca_mr_copy(): for @t, or -EKEYREVOKED if
 * @held's MR was invalidated or re-registered since it was held.
 */
int shca_mr_copy_held(const struct shca_span *held, u64 off,
		      struct shca_dev *sdev, const struct shca_mem_target *t,
		      u64 len, bool to_held, bool *dst_failed)
{
	struct shca_span h = *held, o;
	int err;

	h.off += off;
	err = shca_mr_resolve(sdev, t, len, &o);
	if (err) {
		*dst_failed = !to_held;
		return err;
	}
	*dst_failed = false;
	if (to_held)
		err = shca_span_copy_span(&h, &o, len, dst_failed);
	else
		err = shca_span_copy_span(&o, &h, len, dst_failed);
	shca_span_put(&o);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_held);

/**
 * shca_mr_copy_held_buf() - move bytes between a held span and a buffer
 * @held: a span of shca_mr_hold(), not changed
 * @off: offset in @held of the first byte, as for shca_mr_copy_held()
 * @buf: kernel buffer
 * @len: bytes to move
 * @dir: SHCA_COPY_TO_MR or SHCA_COPY_FROM_MR
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or -EKEYREVOKED if @held's MR was invalidated or
 * re-registered since it was held.
 */
int shca_mr_copy_held_buf(const struct shca_span *held, u64 off, void *buf,
			  u64 len, enum shca_copy_dir dir)
{
	struct shca_span h = *held;

	h.off += off;
	return shca_span_copy(&h, buf, len, dir);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_held_buf);

/**
 * shca_mr_copy_spans() - move bytes between two held spans
 * @dst: the destination, a span of shca_mr_hold(), not changed
 * @dst_off: offset in @dst of the first byte; @dst_off + @len must lie
 *	within the length it was held for
 * @src: the source, a span of shca_mr_hold(), not changed
 * @src_off: offset in @src of the first byte, likewise
 * @len: bytes to move
 * @dst_failed: set on error: true if the destination's registration
 *	changed since it was held, false if the source's
 *
 * For a request that checked both ranges whole before moving anything
 * and then moves them piece by piece.
 *
 * Context: process context when an ODP MR is involved and the target
 * (or the target a span was held for) does not say @no_sleep: its pages
 * are faulted in, which sleeps; with @no_sleep, or without ODP, any
 * context, and a page that is not present fails with -EAGAIN.
 * Return: 0, or -EKEYREVOKED if either MR was invalidated or
 * re-registered since it was held (or the error of an ODP page that is
 * not there, as for shca_mr_copy_held()).
 */
int shca_mr_copy_spans(const struct shca_span *dst, u64 dst_off,
		       const struct shca_span *src, u64 src_off, u64 len,
		       bool *dst_failed)
{
	struct shca_span d = *dst, s = *src;

	d.off += dst_off;
	s.off += src_off;
	*dst_failed = false;
	return shca_span_copy_span(&d, &s, len, dst_failed);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_copy_spans);

#if SHCA_ODP

/* ---- ibv_advise_mr(): the keys resolved, the ranges faulted in ---------- */

/**
 * struct shca_prefetch - an asynchronous ibv_advise_mr() prefetch
 * @work: runs it
 * @write: fault with write permission
 * @fault: fault pages in (else take only those that are there)
 * @n: entries of @range
 * @range: the MRs (a reference held on each) and their ranges
 */
struct shca_prefetch {
	struct work_struct work;
	bool write;
	bool fault;
	u32 n;
	struct {
		struct shca_mr *mr;
		u64 va;
		u64 len;
	} range[];
};

static void shca_prefetch_work(struct work_struct *work)
{
	struct shca_prefetch *p = container_of(work, struct shca_prefetch,
					       work);
	u32 i;

	for (i = 0; i < p->n; i++) {
		/* Advice: a range that cannot be faulted is not an error. */
		shca_odp_fault(p->range[i].mr, p->range[i].va, p->range[i].len,
			       p->write, p->fault);
		shca_mr_put(p->range[i].mr);
	}
	kfree(p);
}

/**
 * shca_mr_advise() - ibv_advise_mr(): prefetch ranges of ODP MRs
 * @sdev: the device
 * @pd: the PD the keys must belong to
 * @advice: IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH (read), _PREFETCH_WRITE,
 *	or _PREFETCH_NO_FAULT (take pages that are mapped, fault nothing)
 * @sync: IB_UVERBS_ADVISE_MR_FLAG_FLUSH: done before returning, with the
 *	first error; else queued, keys checked now
 * @sge: the ranges: lkey, address, length
 * @n: entries of @sge
 *
 * Context: process context.
 * Return: 0; -EOPNOTSUPP for another advice; -ENOKEY for a key that
 * names no MR; -EACCES for an MR of another PD; -EINVAL for an MR that
 * is not an ODP MR; -EPERM for PREFETCH_WRITE of an MR without local
 * write; -ERANGE for a range outside the MR; -ENOMEM; with @sync, an
 * error of the fault (-EFAULT for memory that is not mapped).
 */
int shca_mr_advise(struct shca_dev *sdev, struct ib_pd *pd, u32 advice,
		   bool sync, const struct ib_sge *sge, u32 n)
{
	bool write = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE;
	bool fault = advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct shca_prefetch *p;
	int err = 0;
	u32 i;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	p = shca_inject_fault() ? NULL :
	    kzalloc(struct_size(p, range, n), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->write = write;
	p->fault = fault;
	for (i = 0; i < n && !err; i++) {
		struct shca_mr *mr = shca_mr_get(sdev, sge[i].lkey);
		unsigned long flags;
		u64 off;

		if (!mr) {
			err = -ENOKEY;
			break;
		}
		spin_lock_irqsave(&mr->lock, flags);
		off = sge[i].addr - mr->iova;
		if (mr->key != sge[i].lkey || mr->mw_type)
			err = -ENOKEY;
		else if (mr->ibmr.pd != pd)
			err = -EACCES;
		else if (!mr->odp)
			err = -EINVAL;
		else if (write && !(mr->access & IB_ACCESS_LOCAL_WRITE))
			err = -EPERM;
		else if (sge[i].addr < mr->iova || off > mr->length ||
			 sge[i].length > mr->length - off)
			err = -ERANGE;
		spin_unlock_irqrestore(&mr->lock, flags);
		if (err) {
			shca_mr_put(mr);
			break;
		}
		p->range[p->n].mr = mr;
		p->range[p->n].va = mr->cur->data.base + off;
		p->range[p->n].len = sge[i].length;
		p->n++;
	}
	if (err || sync) {
		for (i = 0; i < p->n; i++) {
			if (!err)
				err = shca_odp_fault(p->range[i].mr,
						     p->range[i].va,
						     p->range[i].len, write,
						     fault);
			shca_mr_put(p->range[i].mr);
		}
		kfree(p);
		return err;
	}
	INIT_WORK(&p->work, shca_prefetch_work);
	queue_work(shca_wq, &p->work);
	return 0;
}

#endif /* SHCA_ODP */
