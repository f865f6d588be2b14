// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the T10-DIF engine (shca_sig.c), on kernel buffers,
 * without MRs.
 *
 * shca_sig: published and independently computed guard values, PI
 * generation, every domain combination x guard type x interval x
 * direction through the streaming transform cut at awkward places, round
 * trips, each error type with exact expected/actual/offset, escapes,
 * check_mask subsets and the copy-or-regenerate rules.
 *
 * The guard constants below were computed outside the kernel with a
 * bit-by-bit Python implementation of CRC16/T10-DIF (polynomial 0x8BB7,
 * init 0, not reflected, no final xor; its check value for "123456789"
 * is the published 0xD0DB of the CRC catalogue) and of the RFC 1071
 * Internet checksum (16-bit big-endian words, end-around carry, one's
 * complement). Expected outputs of the transform are built here from
 * crc_t10dif() and ip_compute_csum() over whole blocks, never through
 * the engine's piecewise code.
 */

#include <linux/crc-t10dif.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <kunit/test.h>

#include "../shca_verbs.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

enum shca_sig_pat {
	SHCA_PAT_ZERO,
	SHCA_PAT_FF,
	SHCA_PAT_INC,	/* byte i = i & 0xff */
	SHCA_PAT_LCG,	/* x = x * 1103515245 + 12345 from x = 1; byte = x >> 16 */
};

static const char * const shca_pat_name[] = {
	[SHCA_PAT_ZERO] = "zeros",
	[SHCA_PAT_FF] = "0xff",
	[SHCA_PAT_INC] = "incrementing",
	[SHCA_PAT_LCG] = "lcg",
};

static void shca_pat_fill(u8 *p, size_t len, enum shca_sig_pat pat, u32 seed)
{
	u32 x = seed;
	size_t i;

	for (i = 0; i < len; i++) {
		switch (pat) {
		case SHCA_PAT_ZERO:
			p[i] = 0;
			break;
		case SHCA_PAT_FF:
			p[i] = 0xff;
			break;
		case SHCA_PAT_INC:
			p[i] = i & 0xff;
			break;
		case SHCA_PAT_LCG:
			x = x * 1103515245 + 12345;
			p[i] = (x >> 16) & 0xff;
			break;
		}
	}
}

static struct ib_t10_dif_domain shca_dif(enum ib_t10_dif_bg_type bg_type,
					 u16 interval)
{
	return (struct ib_t10_dif_domain){
		.bg_type = bg_type,
		.pi_interval = interval,
		.apptag_check_mask = 0xffff,
	};
}

/* The guard by the reference implementations, over a whole block. */
static u16 shca_ref_guard(enum ib_t10_dif_bg_type type, const u8 *p,
			  size_t len)
{
	if (type == IB_T10DIF_CRC)
		return crc_t10dif(p, len);
	return be16_to_cpu((__force __be16)ip_compute_csum(p, len));
}

/* The tuple of @block by the reference implementations. */
static void shca_ref_pi(const struct ib_t10_dif_domain *d, u32 block,
			const u8 *data, u8 *pi)
{
	put_unaligned_be16(shca_ref_guard(d->bg_type, data, d->pi_interval),
			   pi);
	put_unaligned_be16(d->app_tag, pi + 2);
	put_unaligned_be32(d->ref_remap ? d->ref_tag + block : d->ref_tag,
			   pi + 4);
}

/* ---- published and independently computed guard values ---- */

static void shca_sig_check_value(struct kunit *test)
{
	struct ib_t10_dif_domain crc = shca_dif(IB_T10DIF_CRC, 512);
	struct ib_t10_dif_domain csum = shca_dif(IB_T10DIF_CSUM, 512);
	static const char s[] = "123456789";

	/* The catalogue's check value of CRC-16/T10-DIF. */
	KUNIT_EXPECT_EQ(test, crc_t10dif((const u8 *)s, 9), 0xd0db);
	KUNIT_EXPECT_EQ(test, shca_sig_guard(&crc, s, 9), 0xd0db);
	/* bg seeds the CRC (the same polynomial run from init 0xffff). */
	crc.bg = 0xffff;
	KUNIT_EXPECT_EQ(test, shca_sig_guard(&crc, s, 9), 0x8e3c);
	/* RFC 1071 over "12" "34" "56" "78" "9\0" (Python). */
	KUNIT_EXPECT_EQ(test, shca_sig_guard(&csum, s, 9), 0xf62a);
}

struct shca_guard_vec {
	enum shca_sig_pat pat;
	u16 len;
	u16 crc;
	u16 csum;
};

static const struct shca_guard_vec shca_guard_vecs[] = {
	{ SHCA_PAT_ZERO, 512, 0x0000, 0xffff },
	{ SHCA_PAT_FF, 512, 0xe6a1, 0x0000 },
	{ SHCA_PAT_INC, 512, 0x4f10, 0x7f80 },
	{ SHCA_PAT_LCG, 512, 0xa470, 0xbff5 },
	{ SHCA_PAT_ZERO, 4096, 0x0000, 0xffff },
	{ SHCA_PAT_FF, 4096, 0x8b5d, 0x0000 },
	{ SHCA_PAT_INC, 4096, 0x8f6d, 0xfc03 },
	{ SHCA_PAT_LCG, 4096, 0xbc8a, 0x9794 },
};

static void shca_guard_vec_desc(const struct shca_guard_vec *v, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%u bytes of %s", v->len,
		 shca_pat_name[v->pat]);
}

KUNIT_ARRAY_PARAM(shca_guard_vec, shca_guard_vecs, shca_guard_vec_desc);

static void shca_sig_guard_vectors(struct kunit *test)
{
	const struct shca_guard_vec *v = test->param_value;
	struct ib_t10_dif_domain crc = shca_dif(IB_T10DIF_CRC, v->len);
	struct ib_t10_dif_domain csum = shca_dif(IB_T10DIF_CSUM, v->len);
	u8 *p = kunit_kmalloc(test, v->len, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	shca_pat_fill(p, v->len, v->pat, 1);
	KUNIT_EXPECT_EQ(test, crc_t10dif(p, v->len), v->crc);
	KUNIT_EXPECT_EQ(test, shca_sig_guard(&crc, p, v->len), v->crc);
	KUNIT_EXPECT_EQ(test, shca_ref_guard(IB_T10DIF_CSUM, p, v->len),
			v->csum);
	KUNIT_EXPECT_EQ(test, shca_sig_guard(&csum, p, v->len), v->csum);
}

/* The tuple's bytes, big endian, for a fixed block. */
static void shca_sig_gen_bytes(struct kunit *test)
{
	struct ib_t10_dif_domain d = shca_dif(IB_T10DIF_CRC, 512);
	static const u8 remap[8] = { 0xa4, 0x70, 0x12, 0x34,
				     0xfe, 0xdc, 0xba, 0x9b };
	static const u8 fixed[8] = { 0xbf, 0xf5, 0x12, 0x34,
				     0xfe, 0xdc, 0xba, 0x98 };
	static const u8 wrap[8] = { 0xa4, 0x70, 0x12, 0x34,
				    0x00, 0x00, 0x00, 0x01 };
	struct t10_pi_tuple pi;
	u8 *p = kunit_kmalloc(test, 512, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	shca_pat_fill(p, 512, SHCA_PAT_LCG, 1);
	d.app_tag = 0x1234;
	d.ref_tag = 0xfedcba98;
	d.ref_remap = true;
	shca_sig_gen_pi(&d, 3, p, &pi);
	KUNIT_EXPECT_MEMEQ(test, &pi, remap, 8);
	/* Type 1/2 ref tags wrap around like the 32-bit LBA they carry. */
	d.ref_tag = 0xfffffffe;
	shca_sig_gen_pi(&d, 3, p, &pi);
	KUNIT_EXPECT_MEMEQ(test, &pi, wrap, 8);
	d.ref_tag = 0xfedcba98;
	d.ref_remap = false;
	d.bg_type = IB_T10DIF_CSUM;
	shca_sig_gen_pi(&d, 3, p, &pi);
	KUNIT_EXPECT_MEMEQ(test, &pi, fixed, 8);
}

/* ---- the streaming transform ---- */

enum shca_sk { SHCA_SK_NONE, SHCA_SK_CRC, SHCA_SK_CSUM };

static const char * const shca_sk_name[] = {
	[SHCA_SK_NONE] = "NONE", [SHCA_SK_CRC] = "CRC", [SHCA_SK_CSUM] = "CSUM",
};

static struct ib_sig_domain shca_dom(enum shca_sk k, u16 interval, u16 app,
				     u32 ref)
{
	struct ib_sig_domain d = {};

	if (k == SHCA_SK_NONE)
		return d;
	d.sig_type = IB_SIG_TYPE_T10_DIF;
	d.sig.dif = shca_dif(k == SHCA_SK_CRC ? IB_T10DIF_CRC : IB_T10DIF_CSUM,
			     interval);
	d.sig.dif.app_tag = app;
	d.sig.dif.ref_tag = ref;
	d.sig.dif.ref_remap = true;
	return d;
}

/* A whole transfer: data, memory PI and the wire stream. */
struct shca_sig_io {
	u8 *wire;
	size_t wire_len;
	u8 *data;
	size_t data_len;
	u8 *meta;
	size_t meta_len;
};

/* Largest windows handed to the engine per call (0: unlimited). */
struct shca_sig_split {
	size_t wire;
	size_t data;
	size_t meta;
};

static size_t shca_win(size_t left, size_t max)
{
	return max ? min(left, max) : left;
}

/* Feed a whole transfer through @st in windows of at most @sp bytes. */
static void shca_sig_run(struct kunit *test, struct shca_sig_stream *st,
			 const struct shca_sig_io *io,
			 const struct shca_sig_split *sp)
{
	size_t w = 0, d = 0, m = 0;

	while (w < io->wire_len || d < io->data_len || m < io->meta_len) {
		struct shca_sig_bufs b = {
			.wire = io->wire + w,
			.wire_len = shca_win(io->wire_len - w, sp->wire),
			.data = io->data + d,
			.data_len = shca_win(io->data_len - d, sp->data),
			.meta = io->meta + m,
			.meta_len = shca_win(io->meta_len - m, sp->meta),
		};
		size_t dw = b.wire_len, dd = b.data_len, dm = b.meta_len;

		shca_sig_stream_xfer(st, &b);
		dw -= b.wire_len;
		dd -= b.data_len;
		dm -= b.meta_len;
		KUNIT_ASSERT_PTR_EQ(test, b.wire, (void *)(io->wire + w + dw));
		KUNIT_ASSERT_PTR_EQ(test, b.data, (void *)(io->data + d + dd));
		KUNIT_ASSERT_PTR_EQ(test, b.meta, (void *)(io->meta + m + dm));
		KUNIT_ASSERT_GT_MSG(test, dw + dd + dm, 0,
				    "stalled at wire %zu data %zu meta %zu",
				    w, d, m);
		w += dw;
		d += dd;
		m += dm;
	}
	KUNIT_EXPECT_TRUE(test, shca_sig_stream_idle(st));
}

/*
 * A reference transfer of @nb blocks starting at block @first: the data,
 * the memory PI (when the memory domain has PI) and the wire stream
 * (data interleaved with the wire PI when the wire domain has PI), each
 * PI computed by the reference implementations.
 */
static struct shca_sig_io *shca_sig_ref_io(struct kunit *test,
					   const struct ib_sig_attrs *a,
					   u32 interval, u32 nb, u32 first,
					   u32 seed)
{
	struct shca_sig_io *io = kunit_kzalloc(test, sizeof(*io), GFP_KERNEL);
	bool mem_pi = a->mem.sig_type == IB_SIG_TYPE_T10_DIF;
	bool wire_pi = a->wire.sig_type == IB_SIG_TYPE_T10_DIF;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, io);
	io->data_len = (size_t)nb * interval;
	io->meta_len = mem_pi ? nb * SHCA_PI_SIZE : 0;
	io->wire_len = shca_sig_wire_len(a, io->data_len);
	KUNIT_ASSERT_EQ(test, io->wire_len,
			io->data_len + (wire_pi ? nb * SHCA_PI_SIZE : 0));
	io->data = kunit_kmalloc(test, io->data_len, GFP_KERNEL);
	io->meta = kunit_kzalloc(test, io->meta_len + 1, GFP_KERNEL);
	io->wire = kunit_kmalloc(test, io->wire_len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, io->data);
	KUNIT_ASSERT_NOT_NULL(test, io->meta);
	KUNIT_ASSERT_NOT_NULL(test, io->wire);
	shca_pat_fill(io->data, io->data_len, SHCA_PAT_LCG, seed);
	for (i = 0; i < nb; i++) {
		const u8 *blk = io->data + (size_t)i * interval;
		u8 *w = io->wire + (size_t)i * (interval +
						(wire_pi ? SHCA_PI_SIZE : 0));

		if (mem_pi)
			shca_ref_pi(&a->mem.sig.dif, first + i, blk,
				    io->meta + i * SHCA_PI_SIZE);
		memcpy(w, blk, interval);
		if (wire_pi)
			shca_ref_pi(&a->wire.sig.dif, first + i, blk,
				    w + interval);
	}
	return io;
}

/* Buffers for the output side of a transfer shaped like @ref. */
static struct shca_sig_io *shca_sig_out_io(struct kunit *test,
					   const struct shca_sig_io *ref,
					   bool to_wire)
{
	struct shca_sig_io *io = kunit_kzalloc(test, sizeof(*io), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, io);
	*io = *ref;
	if (to_wire) {
		io->wire = kunit_kzalloc(test, ref->wire_len, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, io->wire);
	} else {
		io->data = kunit_kzalloc(test, ref->data_len, GFP_KERNEL);
		io->meta = kunit_kzalloc(test, ref->meta_len + 1, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, io->data);
		KUNIT_ASSERT_NOT_NULL(test, io->meta);
	}
	return io;
}

struct shca_sig_xcase {
	enum shca_sk mem;
	enum shca_sk wire;
	u16 interval;
	bool to_wire;
};

static const struct shca_sig_xcase shca_sig_xcases[] = {
	{ SHCA_SK_NONE, SHCA_SK_NONE, 512, true },
	{ SHCA_SK_NONE, SHCA_SK_NONE, 512, false },
	{ SHCA_SK_NONE, SHCA_SK_NONE, 4096, true },
	{ SHCA_SK_NONE, SHCA_SK_NONE, 4096, false },
	{ SHCA_SK_NONE, SHCA_SK_CRC, 512, true },
	{ SHCA_SK_NONE, SHCA_SK_CRC, 512, false },
	{ SHCA_SK_NONE, SHCA_SK_CRC, 4096, true },
	{ SHCA_SK_NONE, SHCA_SK_CRC, 4096, false },
	{ SHCA_SK_NONE, SHCA_SK_CSUM, 512, true },
	{ SHCA_SK_NONE, SHCA_SK_CSUM, 512, false },
	{ SHCA_SK_NONE, SHCA_SK_CSUM, 4096, true },
	{ SHCA_SK_NONE, SHCA_SK_CSUM, 4096, false },
	{ SHCA_SK_CRC, SHCA_SK_NONE, 512, true },
	{ SHCA_SK_CRC, SHCA_SK_NONE, 512, false },
	{ SHCA_SK_CRC, SHCA_SK_NONE, 4096, true },
	{ SHCA_SK_CRC, SHCA_SK_NONE, 4096, false },
	{ SHCA_SK_CSUM, SHCA_SK_NONE, 512, true },
	{ SHCA_SK_CSUM, SHCA_SK_NONE, 512, false },
	{ SHCA_SK_CSUM, SHCA_SK_NONE, 4096, true },
	{ SHCA_SK_CSUM, SHCA_SK_NONE, 4096, false },
	{ SHCA_SK_CRC, SHCA_SK_CRC, 512, true },
	{ SHCA_SK_CRC, SHCA_SK_CRC, 512, false },
	{ SHCA_SK_CRC, SHCA_SK_CRC, 4096, true },
	{ SHCA_SK_CRC, SHCA_SK_CRC, 4096, false },
	{ SHCA_SK_CRC, SHCA_SK_CSUM, 512, true },
	{ SHCA_SK_CRC, SHCA_SK_CSUM, 512, false },
	{ SHCA_SK_CRC, SHCA_SK_CSUM, 4096, true },
	{ SHCA_SK_CRC, SHCA_SK_CSUM, 4096, false },
	{ SHCA_SK_CSUM, SHCA_SK_CRC, 512, true },
	{ SHCA_SK_CSUM, SHCA_SK_CRC, 512, false },
	{ SHCA_SK_CSUM, SHCA_SK_CRC, 4096, true },
	{ SHCA_SK_CSUM, SHCA_SK_CRC, 4096, false },
	{ SHCA_SK_CSUM, SHCA_SK_CSUM, 512, true },
	{ SHCA_SK_CSUM, SHCA_SK_CSUM, 512, false },
	{ SHCA_SK_CSUM, SHCA_SK_CSUM, 4096, true },
	{ SHCA_SK_CSUM, SHCA_SK_CSUM, 4096, false },
};

static const char *shca_sig_op(enum shca_sk mem, enum shca_sk wire,
			       bool to_wire)
{
	if (mem == SHCA_SK_NONE && wire == SHCA_SK_NONE)
		return "copy";
	if (mem == SHCA_SK_NONE)
		return to_wire ? "insert" : "strip";
	if (wire == SHCA_SK_NONE)
		return to_wire ? "strip" : "insert";
	return mem == wire ? "pass" : "convert";
}

static void shca_sig_xcase_desc(const struct shca_sig_xcase *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "mem %s wire %s %u %s %s",
		 shca_sk_name[c->mem], shca_sk_name[c->wire], c->interval,
		 c->to_wire ? "mem->wire" : "wire->mem",
		 shca_sig_op(c->mem, c->wire, c->to_wire));
}

KUNIT_ARRAY_PARAM(shca_sig_xcase, shca_sig_xcases, shca_sig_xcase_desc);

/*
 * Every domain combination through the transform, whole and cut in 1-,
 * 7- and odd-sized windows, wire windows ending inside a PI tuple, and
 * the three windows cut differently from each other. Both domains carry
 * different app and ref tags, so tags are regenerated; guards of the
 * same type are copied, of different types regenerated.
 */
static void shca_sig_transform(struct kunit *test)
{
	const struct shca_sig_xcase *c = test->param_value;
	const u32 iv = c->interval, nb = 3, first = 5;
	const struct shca_sig_split splits[] = {
		{ 0, 0, 0 },
		{ 1, 1, 1 },
		{ 7, 7, 7 },
		{ iv + 3, iv - 1, 5 },	/* wire cut mid-PI */
		{ 3, 1000, 1 },
		{ 2 * iv + 13, 0, 8 },
	};
	struct ib_sig_attrs a = {
		.check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG |
			      IB_SIG_CHECK_REFTAG,
		.mem = shca_dom(c->mem, iv, 0x1111, 0x100),
		.wire = shca_dom(c->wire, iv, 0x2222, 0x20000),
	};
	struct shca_sig_io *ref = shca_sig_ref_io(test, &a, iv, nb, first, 7);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(splits); i++) {
		struct shca_sig_io *out = shca_sig_out_io(test, ref,
							  c->to_wire);
		struct shca_sig_stream st;
		struct ib_sig_err err;

		KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, c->to_wire,
							   first), 0);
		shca_sig_run(test, &st, out, &splits[i]);
		KUNIT_EXPECT_FALSE_MSG(test, shca_sig_stream_error(&st, &err),
				       "split %u: error type %d at %llu", i,
				       err.err_type, err.sig_err_offset);
		if (c->to_wire) {
			KUNIT_EXPECT_MEMEQ_MSG(test, out->wire, ref->wire,
					       ref->wire_len, "split %u", i);
		} else {
			KUNIT_EXPECT_MEMEQ_MSG(test, out->data, ref->data,
					       ref->data_len, "split %u", i);
			KUNIT_EXPECT_MEMEQ_MSG(test, out->meta, ref->meta,
					       ref->meta_len, "split %u", i);
		}
	}
}

struct shca_sig_rt {
	enum shca_sk mem;
	enum shca_sk wire;
	u16 interval;
};

static const struct shca_sig_rt shca_sig_rts[] = {
	{ SHCA_SK_NONE, SHCA_SK_CRC, 512 },
	{ SHCA_SK_NONE, SHCA_SK_CSUM, 512 },
	{ SHCA_SK_NONE, SHCA_SK_CRC, 4096 },
	{ SHCA_SK_NONE, SHCA_SK_CSUM, 4096 },
	{ SHCA_SK_CSUM, SHCA_SK_CRC, 512 },
	{ SHCA_SK_CRC, SHCA_SK_CSUM, 512 },
	{ SHCA_SK_CSUM, SHCA_SK_CRC, 4096 },
	{ SHCA_SK_CRC, SHCA_SK_CSUM, 4096 },
};

static void shca_sig_rt_desc(const struct shca_sig_rt *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s mem %s wire %s %u",
		 c->mem == SHCA_SK_NONE ? "insert+strip" : "convert+back",
		 shca_sk_name[c->mem], shca_sk_name[c->wire], c->interval);
}

KUNIT_ARRAY_PARAM(shca_sig_rt, shca_sig_rts, shca_sig_rt_desc);

/*
 * Memory to wire and back gives back the data (and the memory PI); the
 * wire in between carries the wire domain's PI. Only the engine makes
 * PI here: the reference model only checks the wire.
 */
static void shca_sig_round_trip(struct kunit *test)
{
	const struct shca_sig_rt *c = test->param_value;
	const struct shca_sig_split cut = { 7, 1, 3 };
	const u32 iv = c->interval, nb = 4, first = 0;
	struct ib_sig_attrs a = {
		.check_mask = 0xff,
		.mem = shca_dom(c->mem, iv, 0xbeef, 0x77),
		.wire = shca_dom(c->wire, iv, 0xcafe, 0x99),
	};
	struct shca_sig_io *ref = shca_sig_ref_io(test, &a, iv, nb, first, 3);
	struct shca_sig_io *wire = shca_sig_out_io(test, ref, true);
	struct shca_sig_io *back;
	struct shca_sig_stream st;
	struct ib_sig_err err;

	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, true, first), 0);
	shca_sig_run(test, &st, wire, &cut);
	KUNIT_EXPECT_FALSE(test, shca_sig_stream_error(&st, &err));
	KUNIT_EXPECT_MEMEQ(test, wire->wire, ref->wire, ref->wire_len);

	back = shca_sig_out_io(test, wire, false);
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, false, first), 0);
	shca_sig_run(test, &st, back, &cut);
	KUNIT_EXPECT_FALSE(test, shca_sig_stream_error(&st, &err));
	KUNIT_EXPECT_MEMEQ(test, back->data, ref->data, ref->data_len);
	KUNIT_EXPECT_MEMEQ(test, back->meta, ref->meta, ref->meta_len);
}

/* ---- errors ---- */

/* How one block of the input is damaged. */
struct shca_sig_bad {
	u8 block;
	u16 guard_xor;
	u16 app_xor;
	u32 ref_xor;
	bool data_flip;
};

struct shca_sig_ecase {
	const char *name;
	struct shca_sig_bad bad[2];
	enum ib_sig_err_type type;
	u8 block;	/* the block the report names */
};

static const struct shca_sig_ecase shca_sig_ecases[] = {
	{ "guard tag, block 0", { { 0, 0x8001, 0, 0 } }, IB_SIG_BAD_GUARD, 0 },
	{ "data byte, block 2", { { 2, 0, 0, 0, true } }, IB_SIG_BAD_GUARD, 2 },
	{ "ref tag, block 1", { { 1, 0, 0, 0x10000 } }, IB_SIG_BAD_REFTAG, 1 },
	{ "app tag, block 2", { { 2, 0, 0x0100, 0 } }, IB_SIG_BAD_APPTAG, 2 },
	{ "all three: guard first", { { 1, 1, 1, 1 } }, IB_SIG_BAD_GUARD, 1 },
	{ "ref and app: ref first", { { 1, 0, 1, 1 } }, IB_SIG_BAD_REFTAG, 1 },
	{ "app in 0, guard in 2: first block kept",
	  { { 0, 0, 0x8000, 0 }, { 2, 0x4000, 0, 0 } }, IB_SIG_BAD_APPTAG, 0 },
};

static void shca_sig_ecase_desc(const struct shca_sig_ecase *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_sig_ecase, shca_sig_ecases, shca_sig_ecase_desc);

/* Damage block @b->block of the input as @b says. */
static void shca_sig_damage(const struct shca_sig_bad *b,
			    struct shca_sig_io *io, u32 iv, bool to_wire)
{
	u8 *blk, *pi;

	if (!b->guard_xor && !b->app_xor && !b->ref_xor && !b->data_flip)
		return;
	blk = to_wire ? io->data + b->block * iv :
	      io->wire + b->block * (iv + 8);
	pi = to_wire ? io->meta + b->block * 8 : blk + iv;
	if (b->data_flip)
		blk[iv / 3] ^= 0x20;
	put_unaligned_be16(get_unaligned_be16(pi) ^ b->guard_xor, pi);
	put_unaligned_be16(get_unaligned_be16(pi + 2) ^ b->app_xor, pi + 2);
	put_unaligned_be32(get_unaligned_be32(pi + 4) ^ b->ref_xor, pi + 4);
}

static void shca_sig_error_run(struct kunit *test,
			       const struct shca_sig_ecase *c, u32 iv,
			       bool to_wire)
{
	const u32 nb = 3, first = 4;
	struct ib_sig_attrs a = {
		.check_mask = 0xff,
		.mem = shca_dom(to_wire ? SHCA_SK_CRC : SHCA_SK_NONE, iv,
				0x4242, 10),
		.wire = shca_dom(to_wire ? SHCA_SK_NONE : SHCA_SK_CRC, iv,
				 0x4242, 10),
	};
	const struct shca_sig_split cut = { 7, 5, 3 };
	struct shca_sig_io *ref, *out;
	struct shca_sig_stream st;
	struct ib_sig_err err = {};
	unsigned int k;
	u8 *blk, *pi;

	ref = shca_sig_ref_io(test, &a, iv, nb, first, 11);
	for (k = 0; k < ARRAY_SIZE(c->bad); k++)
		shca_sig_damage(&c->bad[k], ref, iv, to_wire);
	out = shca_sig_out_io(test, ref, to_wire);
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, to_wire, first),
			0);
	shca_sig_run(test, &st, out, &cut);
	KUNIT_ASSERT_TRUE_MSG(test, shca_sig_stream_error(&st, &err), "%u %s",
			      iv, to_wire ? "mem->wire" : "wire->mem");

	blk = to_wire ? ref->data + c->block * iv :
	      ref->wire + c->block * (iv + 8);
	pi = to_wire ? ref->meta + c->block * 8 : blk + iv;
	KUNIT_EXPECT_EQ(test, err.err_type, c->type);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset,
			(u64)(first + c->block) * (iv + 8));
	KUNIT_EXPECT_EQ(test, err.key, 0);
	switch (c->type) {
	case IB_SIG_BAD_GUARD:
		KUNIT_EXPECT_EQ(test, err.expected, crc_t10dif(blk, iv));
		KUNIT_EXPECT_EQ(test, err.actual, get_unaligned_be16(pi));
		break;
	case IB_SIG_BAD_REFTAG:
		KUNIT_EXPECT_EQ(test, err.expected, 10 + first + c->block);
		KUNIT_EXPECT_EQ(test, err.actual, get_unaligned_be32(pi + 4));
		break;
	case IB_SIG_BAD_APPTAG:
		KUNIT_EXPECT_EQ(test, err.expected, 0x4242);
		KUNIT_EXPECT_EQ(test, err.actual, get_unaligned_be16(pi + 2));
		break;
	}
	/* The data moved all the same. */
	if (to_wire)
		KUNIT_EXPECT_MEMEQ(test, out->wire, ref->data, ref->data_len);
	else
		KUNIT_EXPECT_EQ(test,
				!memcmp(out->data, ref->data, ref->data_len),
				!c->bad[0].data_flip);
}

/*
 * Damage the input in the domain data comes from (the memory PI towards
 * the wire, the wire PI towards memory) and check the report: type,
 * expected (computed guard, prescribed tag), actual (what the tuple
 * carries), offset block * (interval + 8) from the start of the MR.
 */
static void shca_sig_errors(struct kunit *test)
{
	const struct shca_sig_ecase *c = test->param_value;

	shca_sig_error_run(test, c, 512, true);
	shca_sig_error_run(test, c, 512, false);
	shca_sig_error_run(test, c, 4096, true);
	shca_sig_error_run(test, c, 4096, false);
}

/* One report with every number written out. */
static void shca_sig_error_literal(struct kunit *test)
{
	struct ib_t10_dif_domain d = shca_dif(IB_T10DIF_CRC, 512);
	u8 *p = kunit_kzalloc(test, 512, GFP_KERNEL);
	struct t10_pi_tuple pi = {
		.guard_tag = cpu_to_be16(0xbeef),
		.app_tag = cpu_to_be16(0x1234),
		.ref_tag = cpu_to_be32(8),
	};
	struct ib_sig_err err = {};

	KUNIT_ASSERT_NOT_NULL(test, p);
	d.app_tag = 0x1234;
	d.ref_tag = 7;
	d.ref_remap = true;
	/* Block 1 of zeros: guard 0x0000, ref tag 7 + 1. */
	KUNIT_EXPECT_TRUE(test, shca_sig_check_pi(&d, 0xff, 1, p, &pi, &err));
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, err.expected, 0x0000);
	KUNIT_EXPECT_EQ(test, err.actual, 0xbeef);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 520);

	pi.guard_tag = 0;
	pi.ref_tag = cpu_to_be32(9);
	KUNIT_EXPECT_TRUE(test, shca_sig_check_pi(&d, 0xff, 1, p, &pi, &err));
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_REFTAG);
	KUNIT_EXPECT_EQ(test, err.expected, 8);
	KUNIT_EXPECT_EQ(test, err.actual, 9);

	d.pi_interval = 4096;
	p = kunit_kzalloc(test, 4096, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	pi.ref_tag = cpu_to_be32(7 + 5);
	pi.app_tag = cpu_to_be16(0x1235);
	KUNIT_EXPECT_TRUE(test, shca_sig_check_pi(&d, 0xff, 5, p, &pi, &err));
	KUNIT_EXPECT_EQ(test, err.err_type, IB_SIG_BAD_APPTAG);
	KUNIT_EXPECT_EQ(test, err.expected, 0x1234);
	KUNIT_EXPECT_EQ(test, err.actual, 0x1235);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 5 * 4104);

	pi.app_tag = cpu_to_be16(0x1234);
	KUNIT_EXPECT_FALSE(test, shca_sig_check_pi(&d, 0xff, 5, p, &pi, &err));
}

/* ---- escapes and check masks, on one block ---- */

struct shca_sig_ccase {
	const char *name;
	u8 check_mask;
	u16 apptag_check_mask;
	bool app_escape;
	bool ref_escape;
	u16 guard_xor;
	u16 app;	/* the tuple's app tag; the domain's is 0x1234 */
	u32 ref;	/* the tuple's ref tag; the domain's is 0x5678 */
	int type;	/* expected error, or -1 */
};

#define SHCA_ALL	0xff
#define SHCA_OK		(-1)

static const struct shca_sig_ccase shca_sig_ccases[] = {
	/* escapes */
	{ "app escape: app 0xffff skips a bad guard", SHCA_ALL, 0xffff,
	  true, false, 1, 0xffff, 0x5678, SHCA_OK },
	{ "app escape: app 0xffff skips a bad ref", SHCA_ALL, 0xffff,
	  true, false, 0, 0xffff, 0x1, SHCA_OK },
	{ "app escape: app 0xfffe is checked", SHCA_ALL, 0xffff,
	  true, false, 1, 0xfffe, 0x5678, IB_SIG_BAD_GUARD },
	{ "no escape: app 0xffff is an app error", SHCA_ALL, 0xffff,
	  false, false, 0, 0xffff, 0x5678, IB_SIG_BAD_APPTAG },
	{ "app+ref escape: 0xffff/0xffffffff skips", SHCA_ALL, 0xffff,
	  true, true, 1, 0xffff, 0xffffffff, SHCA_OK },
	{ "app+ref escape: ref not 0xffffffff is checked", SHCA_ALL, 0xffff,
	  true, true, 1, 0xffff, 0x5678, IB_SIG_BAD_GUARD },
	{ "ref escape alone: no effect", SHCA_ALL, 0xffff,
	  false, true, 1, 0xffff, 0xffffffff, IB_SIG_BAD_GUARD },
	/* check_mask subsets */
	{ "guard only: bad app and ref pass", IB_SIG_CHECK_GUARD, 0xffff,
	  false, false, 0, 0x4321, 0x8765, SHCA_OK },
	{ "guard only: bad guard", IB_SIG_CHECK_GUARD, 0xffff,
	  false, false, 0x0100, 0x4321, 0x8765, IB_SIG_BAD_GUARD },
	{ "ref only: bad guard and app pass", IB_SIG_CHECK_REFTAG, 0xffff,
	  false, false, 1, 0x4321, 0x5678, SHCA_OK },
	{ "ref only: bad ref", IB_SIG_CHECK_REFTAG, 0xffff,
	  false, false, 1, 0x4321, 0x5679, IB_SIG_BAD_REFTAG },
	{ "app only, mask 0xff00: low byte ignored", IB_SIG_CHECK_APPTAG,
	  0xff00, false, false, 1, 0x12cd, 0x1, SHCA_OK },
	{ "app only, mask 0xff00: high byte checked", IB_SIG_CHECK_APPTAG,
	  0xff00, false, false, 1, 0x1334, 0x1, IB_SIG_BAD_APPTAG },
	{ "app bits, apptag_check_mask 0: nothing", IB_SIG_CHECK_APPTAG, 0,
	  false, false, 0, 0xabcd, 0x5678, SHCA_OK },
	{ "guard byte 0 only: byte 1 ignored", 0x80, 0xffff,
	  false, false, 0x00ff, 0x1234, 0x5678, SHCA_OK },
	{ "guard byte 0 only: byte 0 checked", 0x80, 0xffff,
	  false, false, 0x0100, 0x1234, 0x5678, IB_SIG_BAD_GUARD },
	{ "ref byte 7 only: byte 6 ignored", 0x01, 0xffff,
	  false, false, 0, 0x1234, 0x5778, SHCA_OK },
	{ "ref byte 7 only: byte 7 checked", 0x01, 0xffff,
	  false, false, 0, 0x1234, 0x5679, IB_SIG_BAD_REFTAG },
	{ "app byte 3 only: byte 2 ignored", 0x10, 0xffff,
	  false, false, 0, 0x1334, 0x5678, SHCA_OK },
	{ "nothing checked", 0, 0xffff,
	  false, false, 0xffff, 0, 0, SHCA_OK },
	{ "guard+ref (nvme-rdma): bad app passes",
	  IB_SIG_CHECK_GUARD | IB_SIG_CHECK_REFTAG, 0xffff,
	  false, false, 0, 0x4321, 0x5678, SHCA_OK },
};

static void shca_sig_ccase_desc(const struct shca_sig_ccase *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_sig_ccase, shca_sig_ccases, shca_sig_ccase_desc);

/* One block through shca_sig_check_pi() and through the stream. */
static void shca_sig_checks(struct kunit *test)
{
	const struct shca_sig_ccase *c = test->param_value;
	const u32 iv = 512, block = 0;
	struct ib_sig_attrs a = {
		.check_mask = c->check_mask,
		.wire = shca_dom(SHCA_SK_CRC, iv, 0x1234, 0x5678),
	};
	struct ib_t10_dif_domain *d = &a.wire.sig.dif;
	u8 *wire = kunit_kmalloc(test, iv + 8, GFP_KERNEL);
	u8 *data = kunit_kmalloc(test, iv, GFP_KERNEL);
	const struct shca_sig_split cut = { 0, 0, 0 };
	struct shca_sig_io io = {
		.wire = wire, .wire_len = iv + 8,
		.data = data, .data_len = iv,
		.meta = data, .meta_len = 0,
	};
	struct t10_pi_tuple pi;
	struct shca_sig_stream st;
	struct ib_sig_err err = {}, serr = {};
	bool bad, sbad;

	KUNIT_ASSERT_NOT_NULL(test, wire);
	KUNIT_ASSERT_NOT_NULL(test, data);
	d->apptag_check_mask = c->apptag_check_mask;
	d->app_escape = c->app_escape;
	d->ref_escape = c->ref_escape;
	shca_pat_fill(wire, iv, SHCA_PAT_INC, 0);
	pi.guard_tag = cpu_to_be16(crc_t10dif(wire, iv) ^ c->guard_xor);
	pi.app_tag = cpu_to_be16(c->app);
	pi.ref_tag = cpu_to_be32(c->ref);
	memcpy(wire + iv, &pi, 8);

	bad = shca_sig_check_pi(d, c->check_mask, block, wire, &pi, &err);
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, false, block), 0);
	shca_sig_run(test, &st, &io, &cut);
	sbad = shca_sig_stream_error(&st, &serr);
	KUNIT_EXPECT_EQ(test, bad, sbad);
	if (c->type == SHCA_OK) {
		KUNIT_EXPECT_FALSE(test, bad);
		return;
	}
	KUNIT_ASSERT_TRUE(test, bad);
	KUNIT_EXPECT_EQ(test, err.err_type, c->type);
	KUNIT_EXPECT_EQ(test, err.sig_err_offset, 0);
	KUNIT_EXPECT_EQ(test, serr.err_type, err.err_type);
	KUNIT_EXPECT_EQ(test, serr.expected, err.expected);
	KUNIT_EXPECT_EQ(test, serr.actual, err.actual);
	switch (c->type) {
	case IB_SIG_BAD_GUARD:
		KUNIT_EXPECT_EQ(test, err.expected, crc_t10dif(wire, iv));
		KUNIT_EXPECT_EQ(test, err.actual, crc_t10dif(wire, iv) ^
				c->guard_xor);
		break;
	case IB_SIG_BAD_REFTAG:
		KUNIT_EXPECT_EQ(test, err.expected, 0x5678);
		KUNIT_EXPECT_EQ(test, err.actual, c->ref);
		break;
	case IB_SIG_BAD_APPTAG:
		KUNIT_EXPECT_EQ(test, err.expected, 0x1234);
		KUNIT_EXPECT_EQ(test, err.actual, c->app);
		break;
	}
}

/* ---- copy or regenerate, attributes, lengths ---- */

/*
 * Both domains carry PI: a field is copied when the domains agree on it
 * (guard type, app_tag, ref_tag) - a bad input value travels on - and
 * regenerated otherwise. Nothing is checked here (check_mask 0).
 */
static void shca_sig_copy_rules(struct kunit *test)
{
	const u32 iv = 512;
	struct ib_sig_attrs a = {
		.mem = shca_dom(SHCA_SK_CRC, iv, 0x1111, 50),
		.wire = shca_dom(SHCA_SK_CRC, iv, 0x1111, 50),
	};
	u8 *data = kunit_kmalloc(test, iv, GFP_KERNEL);
	u8 *wire = kunit_kzalloc(test, iv + 8, GFP_KERNEL);
	struct t10_pi_tuple in = {
		.guard_tag = cpu_to_be16(0xdead),
		.app_tag = cpu_to_be16(0xaaaa),
		.ref_tag = cpu_to_be32(0xbbbbbbbb),
	};
	struct t10_pi_tuple want;
	const struct shca_sig_split cut = { 3, 0, 1 };
	struct shca_sig_io io = {
		.wire = wire, .wire_len = iv + 8,
		.data = data, .data_len = iv,
		.meta = (u8 *)&in, .meta_len = 8,
	};
	struct shca_sig_stream st;

	KUNIT_ASSERT_NOT_NULL(test, data);
	KUNIT_ASSERT_NOT_NULL(test, wire);
	shca_pat_fill(data, iv, SHCA_PAT_LCG, 9);

	/* Everything agrees: the tuple is copied as it is. */
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, true, 2), 0);
	shca_sig_run(test, &st, &io, &cut);
	KUNIT_EXPECT_MEMEQ(test, wire + iv, &in, 8);

	/* Nothing agrees: the tuple is the output domain's. */
	a.wire = shca_dom(SHCA_SK_CSUM, iv, 0x2222, 60);
	shca_ref_pi(&a.wire.sig.dif, 2, data, (u8 *)&want);
	memset(wire, 0, iv + 8);
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, true, 2), 0);
	shca_sig_run(test, &st, &io, &cut);
	KUNIT_EXPECT_MEMEQ(test, wire + iv, &want, 8);
	KUNIT_EXPECT_EQ(test, get_unaligned_be32(wire + iv + 4), 62);

	/* Only the app tag agrees. */
	a.wire.sig.dif.app_tag = 0x1111;
	want.app_tag = in.app_tag;
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, true, 2), 0);
	shca_sig_run(test, &st, &io, &cut);
	KUNIT_EXPECT_MEMEQ(test, wire + iv, &want, 8);

	/* Guard type and ref tag agree, app tag not. */
	a.wire = shca_dom(SHCA_SK_CRC, iv, 0x3333, 50);
	want = in;
	want.app_tag = cpu_to_be16(0x3333);
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, true, 2), 0);
	shca_sig_run(test, &st, &io, &cut);
	KUNIT_EXPECT_MEMEQ(test, wire + iv, &want, 8);
}

static void shca_sig_attrs(struct kunit *test)
{
	struct ib_sig_attrs a = {
		.mem = shca_dom(SHCA_SK_CRC, 512, 0, 0),
		.wire = shca_dom(SHCA_SK_CSUM, 512, 0, 0),
	};
	struct shca_sig_stream st;

	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), 0);
	a.wire.sig.dif.pi_interval = 4096;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_sig_stream_init(&st, &a, true, 0), -EINVAL);
	a.mem.sig.dif.pi_interval = 4096;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), 0);
	a.mem.sig.dif.pi_interval = 520;
	a.wire.sig.dif.pi_interval = 520;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), -EINVAL);
	a.mem.sig.dif.pi_interval = 256;
	a.wire.sig_type = IB_SIG_TYPE_NONE;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), -EINVAL);
	a.mem.sig.dif.pi_interval = 512;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), 0);
	a.mem.sig.dif.bg_type = 7;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), -EINVAL);
	a.mem.sig_type = 5;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), -EINVAL);
	a.mem.sig_type = IB_SIG_TYPE_NONE;
	KUNIT_EXPECT_EQ(test, shca_sig_attrs_check(&a), 0);

	a.wire = shca_dom(SHCA_SK_CRC, 4096, 0, 0);
	KUNIT_EXPECT_EQ(test, shca_sig_wire_len(&a, 3 * 4096), 3 * 4104);
	a.wire.sig_type = IB_SIG_TYPE_NONE;
	KUNIT_EXPECT_EQ(test, shca_sig_wire_len(&a, 3 * 4096), 3 * 4096);
}

/* A transfer cut inside a block or its PI is not idle. */
static void shca_sig_idle(struct kunit *test)
{
	struct ib_sig_attrs a = {
		.wire = shca_dom(SHCA_SK_CRC, 512, 0, 0),
	};
	u8 *data = kunit_kzalloc(test, 512, GFP_KERNEL);
	u8 *wire = kunit_kzalloc(test, 520, GFP_KERNEL);
	struct shca_sig_bufs b = { .data = data, .data_len = 100,
				   .wire = wire, .wire_len = 520 };
	struct shca_sig_stream st;

	KUNIT_ASSERT_NOT_NULL(test, data);
	KUNIT_ASSERT_NOT_NULL(test, wire);
	KUNIT_ASSERT_EQ(test, shca_sig_stream_init(&st, &a, true, 0), 0);
	KUNIT_EXPECT_TRUE(test, shca_sig_stream_idle(&st));
	shca_sig_stream_xfer(&st, &b);
	KUNIT_EXPECT_FALSE(test, shca_sig_stream_idle(&st));
	KUNIT_EXPECT_EQ(test, b.wire_len, 420);
	b.data_len = 412;
	b.wire_len = 415;	/* the rest of the block and 3 bytes of PI */
	shca_sig_stream_xfer(&st, &b);
	KUNIT_EXPECT_FALSE(test, shca_sig_stream_idle(&st));
	KUNIT_EXPECT_EQ(test, b.data_len, 0);
	b.wire_len = 5;
	shca_sig_stream_xfer(&st, &b);
	KUNIT_EXPECT_TRUE(test, shca_sig_stream_idle(&st));
	KUNIT_EXPECT_EQ(test, b.wire_len, 0);
}

static struct kunit_case shca_sig_cases[] = {
	KUNIT_CASE(shca_sig_check_value),
	KUNIT_CASE_PARAM(shca_sig_guard_vectors, shca_guard_vec_gen_params),
	KUNIT_CASE(shca_sig_gen_bytes),
	KUNIT_CASE_PARAM(shca_sig_transform, shca_sig_xcase_gen_params),
	KUNIT_CASE_PARAM(shca_sig_round_trip, shca_sig_rt_gen_params),
	KUNIT_CASE_PARAM(shca_sig_errors, shca_sig_ecase_gen_params),
	KUNIT_CASE(shca_sig_error_literal),
	KUNIT_CASE_PARAM(shca_sig_checks, shca_sig_ccase_gen_params),
	KUNIT_CASE(shca_sig_copy_rules),
	KUNIT_CASE(shca_sig_attrs),
	KUNIT_CASE(shca_sig_idle),
	{}
};

static struct kunit_suite shca_sig_suite = {
	.name = "shca_sig",
	.test_cases = shca_sig_cases,
};

kunit_test_suites(&shca_sig_suite);
