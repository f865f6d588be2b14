// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - the T10-DIF engine: computes, checks, inserts, strips and
 * converts T10 protection information the way an mlx5 signature MR does
 * (shared/reference/mr-types-and-integrity.md section 2).
 *
 * Blocks and tuples. Data is cut into blocks of pi_interval bytes; each
 * block has an 8-byte tuple (struct t10_pi_tuple, big endian): a guard
 * (CRC16-T10DIF of the block, seeded with the domain's bg, or its IP
 * checksum, which has no seed: bg is ignored for it - every ULP passes
 * 0), an application tag and a reference tag. The reference tag
 * of block i is ref_tag + i with ref_remap (types 1 and 2), else ref_tag.
 * In memory the tuples live in their own metadata buffer; on the wire
 * each follows its block ("interleaved").
 *
 * Checks run in the input domain, the one data comes from. check_mask
 * has one bit per byte of the tuple (bit 7 = byte 0: IB_SIG_CHECK_GUARD
 * 0xc0, IB_SIG_CHECK_APPTAG 0x30, IB_SIG_CHECK_REFTAG 0x0f); only the
 * selected bytes are compared, the app tag further through
 * apptag_check_mask. A block whose app tag is 0xffff is not checked when
 * app_escape is set; with ref_escape as well, only when its ref tag is
 * also 0xffffffff (type 3). ref_escape alone changes nothing, as on
 * mlx5. A block reports at most one error, guard before ref tag before
 * app tag; a transfer reports its first one. In a report, expected is
 * what the engine computed (guard) or the domain prescribes (tags) and
 * actual what the tuple carries; sig_err_offset is the offset of the
 * failing block in the interleaved stream, block * (pi_interval + 8),
 * counted from the start of the integrity MR, which is how iSER and
 * isert turn it back into a block number.
 *
 * Output. When both domains carry PI (same interval), a field of the
 * output tuple is copied from the input tuple when both domains agree on
 * it (guard type, app_tag, ref_tag), otherwise regenerated, as mlx5's
 * BSF copy masks do; a copied field carries a bad input value along.
 * Data always moves, even when a check fails: the error is reported
 * through the MR's status, not by stopping the transfer.
 *
 * Nothing here knows about MRs or keys: callers hand in byte windows.
 */

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/crc-t10dif.h>
#include <linux/debugfs.h>
#include <linux/log2.h>
#include <linux/math64.h>
#include <linux/minmax.h>
#include <linux/string.h>
#include <net/checksum.h>

#include "shca_verbs.h"

#define SHCA_SIG_MIN_INTERVAL	512
#define SHCA_SIG_MAX_INTERVAL	32768

/*
 * Fault injection (debugfs softhca/corrupt_{guard,apptag,reftag}, root
 * only, 0 by default): how many more tuples leaving memory for the wire
 * get that field damaged, as a flipped bit on a link would. The receiver
 * of the tuple detects it, whichever device or ULP it is.
 */
static atomic_t shca_sig_corrupt_guard = ATOMIC_INIT(0);
static atomic_t shca_sig_corrupt_app = ATOMIC_INIT(0);
static atomic_t shca_sig_corrupt_ref = ATOMIC_INIT(0);

/**
 * shca_sig_debugfs_init() - create the fault-injection files
 * @dir: the driver's debugfs directory
 */
void shca_sig_debugfs_init(struct dentry *dir)
{
	debugfs_create_atomic_t("corrupt_guard", 0600, dir,
				&shca_sig_corrupt_guard);
	debugfs_create_atomic_t("corrupt_apptag", 0600, dir,
				&shca_sig_corrupt_app);
	debugfs_create_atomic_t("corrupt_reftag", 0600, dir,
				&shca_sig_corrupt_ref);
}

/* Damage the wire tuple @pi as the fault-injection knobs ask. */
static void shca_sig_inject(struct t10_pi_tuple *pi)
{
	if (atomic_dec_if_positive(&shca_sig_corrupt_guard) >= 0)
		pi->guard_tag ^= cpu_to_be16(0x0100);
	if (atomic_dec_if_positive(&shca_sig_corrupt_app) >= 0)
		pi->app_tag ^= cpu_to_be16(0x0001);
	if (atomic_dec_if_positive(&shca_sig_corrupt_ref) >= 0)
		pi->ref_tag ^= cpu_to_be32(0x00000100);
}

static void shca_sig_acc_init(const struct ib_t10_dif_domain *dif,
			      struct shca_sig_acc *acc)
{
	acc->crc = dif->bg;
	acc->csum = 0;
}

/* Add @len bytes found at byte @pos of the block to the guard. */
static void shca_sig_acc_add(const struct ib_t10_dif_domain *dif,
			     struct shca_sig_acc *acc, u32 pos,
			     const void *buf, size_t len)
{
	if (dif->bg_type == IB_T10DIF_CRC)
		acc->crc = crc_t10dif_update(acc->crc, buf, len);
	else
		acc->csum = csum_block_add(acc->csum,
					   csum_partial(buf, len, 0), pos);
}

/* The guard as a number: its big-endian bytes are the tuple's. */
static u16 shca_sig_acc_final(const struct ib_t10_dif_domain *dif,
			      const struct shca_sig_acc *acc)
{
	if (dif->bg_type == IB_T10DIF_CRC)
		return acc->crc;
	return be16_to_cpu((__force __be16)csum_fold(acc->csum));
}

static u32 shca_sig_ref(const struct ib_t10_dif_domain *dif, u32 block)
{
	return dif->ref_remap ? dif->ref_tag + block : dif->ref_tag;
}

/* Bits of the PI bytes [first, first + n) that @check_mask selects. */
static u32 shca_sig_byte_mask(u8 check_mask, unsigned int first,
			      unsigned int n)
{
	u32 mask = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (check_mask & BIT(7 - (first + i)))
			mask |= 0xffU << (8 * (n - 1 - i));
	return mask;
}

/*
 * Check one tuple against the domain; @guard is the guard computed from
 * the block. Return true and fill @err (but its key) on an error.
 */
static bool shca_sig_verify(const struct ib_t10_dif_domain *dif,
			    u8 check_mask, u32 interval, u32 block, u16 guard,
			    const struct t10_pi_tuple *pi,
			    struct ib_sig_err *err)
{
	u16 app = be16_to_cpu(pi->app_tag);
	u32 ref = be32_to_cpu(pi->ref_tag);
	u32 want_ref = shca_sig_ref(dif, block);
	u32 app_mask, ref_mask, guard_mask;
	u16 pi_guard = be16_to_cpu(pi->guard_tag);

	if (dif->app_escape && app == 0xffff &&
	    (!dif->ref_escape || ref == 0xffffffff))
		return false;

	guard_mask = shca_sig_byte_mask(check_mask, 0, 2);
	app_mask = shca_sig_byte_mask(check_mask, 2, 2) &
		   dif->apptag_check_mask;
	ref_mask = shca_sig_byte_mask(check_mask, 4, 4);

	if ((guard ^ pi_guard) & guard_mask) {
		err->err_type = IB_SIG_BAD_GUARD;
		err->expected = guard;
		err->actual = pi_guard;
	} else if ((want_ref ^ ref) & ref_mask) {
		err->err_type = IB_SIG_BAD_REFTAG;
		err->expected = want_ref;
		err->actual = ref;
	} else if ((dif->app_tag ^ app) & app_mask) {
		err->err_type = IB_SIG_BAD_APPTAG;
		err->expected = dif->app_tag;
		err->actual = app;
	} else {
		return false;
	}
	err->sig_err_offset = (u64)block * (interval + SHCA_PI_SIZE);
	err->key = 0;
	return true;
}

/**
 * shca_sig_guard() - the guard of a buffer in a T10-DIF domain
 * @dif: the domain: bg_type (CRC16-T10DIF seeded with bg, or IP checksum)
 * @buf: the data
 * @len: its length (a block: pi_interval bytes)
 *
 * Return: the guard as a number; the tuple stores it big endian.
 */
u16 shca_sig_guard(const struct ib_t10_dif_domain *dif, const void *buf,
		   size_t len)
{
	struct shca_sig_acc acc;

	shca_sig_acc_init(dif, &acc);
	shca_sig_acc_add(dif, &acc, 0, buf, len);
	return shca_sig_acc_final(dif, &acc);
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_guard);

/**
 * shca_sig_gen_pi() - generate the PI tuple of one block
 * @dif: the domain (bg_type, bg, pi_interval, app_tag, ref_tag, ref_remap)
 * @block: index of the block from the one whose ref tag is @dif->ref_tag
 * @data: the block, @dif->pi_interval bytes
 * @pi: filled with the tuple
 */
void shca_sig_gen_pi(const struct ib_t10_dif_domain *dif, u32 block,
		     const void *data, struct t10_pi_tuple *pi)
{
	pi->guard_tag = cpu_to_be16(shca_sig_guard(dif, data,
						   dif->pi_interval));
	pi->app_tag = cpu_to_be16(dif->app_tag);
	pi->ref_tag = cpu_to_be32(shca_sig_ref(dif, block));
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_gen_pi);

/**
 * shca_sig_check_pi() - check the PI tuple of one block
 * @dif: the domain the block comes from
 * @check_mask: bytes of the tuple to check (IB_SIG_CHECK_*)
 * @block: index of the block from the one whose ref tag is @dif->ref_tag
 * @data: the block, @dif->pi_interval bytes
 * @pi: its tuple
 * @err: filled on an error, except @err->key, which is the caller's
 *
 * Escapes, priorities and the meaning of @err are described at the top
 * of shca_sig.c.
 *
 * Return: true if the block fails a check.
 */
bool shca_sig_check_pi(const struct ib_t10_dif_domain *dif, u8 check_mask,
		       u32 block, const void *data,
		       const struct t10_pi_tuple *pi, struct ib_sig_err *err)
{
	return shca_sig_verify(dif, check_mask, dif->pi_interval, block,
			       shca_sig_guard(dif, data, dif->pi_interval),
			       pi, err);
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_check_pi);

static int shca_sig_domain_check(const struct ib_sig_domain *d)
{
	const struct ib_t10_dif_domain *dif = &d->sig.dif;

	if (d->sig_type == IB_SIG_TYPE_NONE)
		return 0;
	if (d->sig_type != IB_SIG_TYPE_T10_DIF)
		return -EINVAL;
	if (dif->bg_type != IB_T10DIF_CRC && dif->bg_type != IB_T10DIF_CSUM)
		return -EINVAL;
	if (!is_power_of_2(dif->pi_interval) ||
	    dif->pi_interval < SHCA_SIG_MIN_INTERVAL ||
	    dif->pi_interval > SHCA_SIG_MAX_INTERVAL)
		return -EINVAL;
	return 0;
}

/**
 * shca_sig_attrs_check() - can the engine carry out these attributes?
 * @attrs: signature attributes of an integrity MR
 *
 * Each domain is NONE or T10-DIF with a CRC or IP-checksum guard and a
 * power-of-two interval of 512 to 32768 bytes; when both carry PI their
 * intervals are equal.
 *
 * Return: 0, or -EINVAL.
 */
int shca_sig_attrs_check(const struct ib_sig_attrs *attrs)
{
	if (shca_sig_domain_check(&attrs->mem) ||
	    shca_sig_domain_check(&attrs->wire))
		return -EINVAL;
	if (attrs->mem.sig_type == IB_SIG_TYPE_T10_DIF &&
	    attrs->wire.sig_type == IB_SIG_TYPE_T10_DIF &&
	    attrs->mem.sig.dif.pi_interval != attrs->wire.sig.dif.pi_interval)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_attrs_check);

/**
 * shca_sig_wire_len() - bytes on the wire for an amount of data
 * @attrs: valid signature attributes (shca_sig_attrs_check())
 * @data_len: data bytes, a multiple of the interval when the wire domain
 *	carries PI
 *
 * Return: @data_len, plus 8 bytes per block when the wire carries PI.
 */
u64 shca_sig_wire_len(const struct ib_sig_attrs *attrs, u64 data_len)
{
	if (attrs->wire.sig_type != IB_SIG_TYPE_T10_DIF)
		return data_len;
	return data_len + div_u64(data_len, attrs->wire.sig.dif.pi_interval) *
			  SHCA_PI_SIZE;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_wire_len);

static void shca_sig_block_start(struct shca_sig_stream *st)
{
	st->off = 0;
	st->pi_in_off = 0;
	st->pi_out_off = 0;
	st->pi_ready = false;
	shca_sig_acc_init(&st->in, &st->in_acc);
	shca_sig_acc_init(&st->out, &st->out_acc);
}

/**
 * shca_sig_stream_init() - start a transfer through the engine
 * @st: the stream state, owned by the caller
 * @attrs: signature attributes (the snapshot REG_MR_INTEGRITY took)
 * @to_wire: true when data moves from memory to the wire (the MR is the
 *	source of a WRITE or SEND, or is read remotely); the memory domain
 *	is then the input domain, else the wire domain is
 * @first_block: index of the first block of the transfer, counted from
 *	the start of the integrity MR (its ref tag is ref_tag + @first_block
 *	with ref_remap)
 *
 * Transfers start at a block boundary.
 *
 * Return: 0, or -EINVAL for attributes shca_sig_attrs_check() refuses.
 */
int shca_sig_stream_init(struct shca_sig_stream *st,
			 const struct ib_sig_attrs *attrs, bool to_wire,
			 u32 first_block)
{
	const struct ib_sig_domain *in, *out;

	if (shca_sig_attrs_check(attrs))
		return -EINVAL;
	in = to_wire ? &attrs->mem : &attrs->wire;
	out = to_wire ? &attrs->wire : &attrs->mem;

	memset(st, 0, sizeof(*st));
	st->to_wire = to_wire;
	st->check_mask = attrs->check_mask;
	st->in_pi = in->sig_type == IB_SIG_TYPE_T10_DIF;
	st->out_pi = out->sig_type == IB_SIG_TYPE_T10_DIF;
	if (st->in_pi)
		st->in = in->sig.dif;
	if (st->out_pi)
		st->out = out->sig.dif;
	/* Without PI anywhere, blocks only pace the copy. */
	st->interval = st->in_pi ? st->in.pi_interval :
		       st->out_pi ? st->out.pi_interval : PAGE_SIZE;
	st->block = first_block;

	st->in_guard = st->in_pi &&
		       shca_sig_byte_mask(st->check_mask, 0, 2);
	if (st->in_pi && st->out_pi) {
		st->copy_guard = st->in.bg_type == st->out.bg_type;
		st->copy_app = st->in.app_tag == st->out.app_tag;
		st->copy_ref = st->in.ref_tag == st->out.ref_tag;
	}
	st->out_guard = st->out_pi && !st->copy_guard;
	st->share_guard = st->in_guard && st->out_guard &&
			  st->in.bg_type == st->out.bg_type &&
			  st->in.bg == st->out.bg;
	shca_sig_block_start(st);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_stream_init);

/* Advance a window past up to @want of its bytes; return how many. */
static size_t shca_sig_take(void **win, size_t *len, size_t want)
{
	size_t n = min(*len, want);

	*win += n;
	*len -= n;
	return n;
}

/* The current block's data is complete: check it and build its output. */
static void shca_sig_block_end(struct shca_sig_stream *st)
{
	struct t10_pi_tuple *o = &st->pi_out;
	const struct t10_pi_tuple *i = &st->pi_in;
	u16 guard = 0, out_guard;

	if (st->in_guard)
		guard = shca_sig_acc_final(&st->in, &st->in_acc);
	if (st->in_pi && !st->err_valid)
		st->err_valid = shca_sig_verify(&st->in, st->check_mask,
						st->interval, st->block, guard,
						i, &st->err);
	if (st->out_pi) {
		if (st->copy_guard) {
			o->guard_tag = i->guard_tag;
		} else {
			out_guard = st->share_guard ? guard :
				    shca_sig_acc_final(&st->out, &st->out_acc);
			o->guard_tag = cpu_to_be16(out_guard);
		}
		o->app_tag = st->copy_app ? i->app_tag :
			     cpu_to_be16(st->out.app_tag);
		o->ref_tag = st->copy_ref ? i->ref_tag :
			     cpu_to_be32(shca_sig_ref(&st->out, st->block));
		if (st->to_wire)
			shca_sig_inject(o);
	}
	st->pi_ready = true;
}

/**
 * shca_sig_stream_xfer() - move bytes of a transfer through the engine
 * @st: a stream started by shca_sig_stream_init()
 * @b: the windows; advanced past what was used
 *
 * Copies data between @b->data and @b->wire, computing guards on the
 * way; gathers the input PI (from @b->meta towards the wire, from the
 * wire towards memory) and, once a block is complete, checks it and
 * emits the output PI (to the wire, or to @b->meta). Stops when a window
 * the next byte needs is exhausted, so the caller may cut every window
 * anywhere and call again with the next piece. Check failures do not
 * stop the transfer: the first is kept for shca_sig_stream_error().
 *
 * Context: any context; does not sleep.
 */
void shca_sig_stream_xfer(struct shca_sig_stream *st,
			  struct shca_sig_bufs *b)
{
	void **src, **dst, **pi_src, **pi_dst;
	size_t *src_len, *dst_len, *pi_src_len, *pi_dst_len;

	if (st->to_wire) {
		src = &b->data;
		src_len = &b->data_len;
		dst = &b->wire;
		dst_len = &b->wire_len;
		pi_src = &b->meta;
		pi_src_len = &b->meta_len;
		pi_dst = &b->wire;
		pi_dst_len = &b->wire_len;
	} else {
		src = &b->wire;
		src_len = &b->wire_len;
		dst = &b->data;
		dst_len = &b->data_len;
		pi_src = &b->wire;
		pi_src_len = &b->wire_len;
		pi_dst = &b->meta;
		pi_dst_len = &b->meta_len;
	}

	for (;;) {
		size_t n;

		if (st->off < st->interval) {
			n = min3((size_t)(st->interval - st->off), *src_len,
				 *dst_len);
			if (!n)
				return;
			if (st->in_guard)
				shca_sig_acc_add(&st->in, &st->in_acc, st->off,
						 *src, n);
			if (st->out_guard && !st->share_guard)
				shca_sig_acc_add(&st->out, &st->out_acc,
						 st->off, *src, n);
			memcpy(*dst, *src, n);
			shca_sig_take(src, src_len, n);
			shca_sig_take(dst, dst_len, n);
			st->off += n;
			continue;
		}
		if (st->in_pi && st->pi_in_off < SHCA_PI_SIZE) {
			n = min(SHCA_PI_SIZE - st->pi_in_off, *pi_src_len);
			if (!n)
				return;
			memcpy((u8 *)&st->pi_in + st->pi_in_off, *pi_src, n);
			shca_sig_take(pi_src, pi_src_len, n);
			st->pi_in_off += n;
			continue;
		}
		if (!st->pi_ready)
			shca_sig_block_end(st);
		if (st->out_pi && st->pi_out_off < SHCA_PI_SIZE) {
			n = min(SHCA_PI_SIZE - st->pi_out_off, *pi_dst_len);
			if (!n)
				return;
			memcpy(*pi_dst, (u8 *)&st->pi_out + st->pi_out_off, n);
			shca_sig_take(pi_dst, pi_dst_len, n);
			st->pi_out_off += n;
			continue;
		}
		st->block++;
		shca_sig_block_start(st);
	}
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_stream_xfer);

/**
 * shca_sig_stream_idle() - is the stream at a block boundary?
 * @st: the stream
 *
 * A transfer that ends while its stream is not idle ended inside a block
 * or its PI: its last block was neither checked nor given PI. Without PI
 * in either domain there are no blocks, and the stream is always idle.
 *
 * Return: true if every block begun was completed, PI included.
 */
bool shca_sig_stream_idle(const struct shca_sig_stream *st)
{
	if (!st->in_pi && !st->out_pi)
		return true;
	return st->off == 0 && !st->pi_in_off && !st->pi_out_off;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_stream_idle);

/**
 * shca_sig_stream_error() - the first check failure of a transfer
 * @st: the stream
 * @err: filled with the error if there is one; its key is 0, for the
 *	caller to set to the key the MR was accessed with
 *
 * Return: true if a block failed a check.
 */
bool shca_sig_stream_error(const struct shca_sig_stream *st,
			   struct ib_sig_err *err)
{
	if (st->err_valid)
		*err = st->err;
	return st->err_valid;
}
EXPORT_SYMBOL_IF_KUNIT(shca_sig_stream_error);
