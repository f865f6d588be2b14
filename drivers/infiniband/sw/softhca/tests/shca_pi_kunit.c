// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for integrity MRs with the T10-DIF engine in the copy path
 * (shca_mem.c + shca_sig.c): what the key of a registered integrity MR
 * shows and takes.
 *
 * shca_pi_mr: every domain combination (insert, strip, pass, guard
 * conversion) x both intervals, read and written through the key in
 * pieces that cut blocks and tuples; each error type latched with its
 * exact fields and key, in both directions; starts inside a block;
 * registrations the engine refuses; integrity MR to integrity MR; the
 * fault-injection knob. Expected wire streams are built here from
 * crc_t10dif() and ip_compute_csum() over whole blocks.
 */

#include <linux/crc-t10dif.h>
#include <linux/fs.h>
#include <linux/random.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/unaligned.h>
#include <net/checksum.h>
#include <kunit/test.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

static const u8 shca_pi_mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x50, 0x49, 0x01 };

#define SHCA_PI_BLOCKS	6
#define SHCA_PI_REF	0x1000
#define SHCA_PI_APP	0x5a5a
#define SHCA_PI_ALL	(IB_SIG_CHECK_GUARD | IB_SIG_CHECK_APPTAG | \
			 IB_SIG_CHECK_REFTAG)

/* How a domain carries PI: not at all, CRC guard, IP-checksum guard. */
enum shca_pk { SHCA_PK_NONE, SHCA_PK_CRC, SHCA_PK_CSUM };

static const char * const shca_pk_name[] = { "none", "crc", "csum" };

/*
 * An integrity MR over SHCA_PI_BLOCKS blocks of data (three SG entries,
 * cut inside blocks) and their tuples (two SG entries, cut inside a
 * tuple), registered with @attrs.
 */
struct shca_pim {
	struct ib_mr *mr;
	struct ib_sig_attrs attrs;
	u8 *data;
	u8 *meta;
	u32 interval;
	u32 dlen;
	u32 mlen;
	u32 wlen;		/* bytes of the wire view */
	struct scatterlist dsg[3];
	struct scatterlist msg[2];
};

static u8 *shca_pi_dup(struct kunit *test, const void *src, size_t len,
		       gfp_t gfp)
{
	u8 *p = kunit_kmalloc(test, len, gfp);

	if (p)
		memcpy(p, src, len);
	return p;
}

static int shca_pi_init(struct kunit *test)
{
	test->priv = shca_kunit_mr_fix(test, "shcak_pi", shca_pi_mac);
	return 0;
}

static void shca_pi_domain(struct ib_sig_domain *d, enum shca_pk k,
			   u32 interval)
{
	memset(d, 0, sizeof(*d));
	if (k == SHCA_PK_NONE)
		return;
	d->sig_type = IB_SIG_TYPE_T10_DIF;
	d->sig.dif.bg_type = k == SHCA_PK_CRC ? IB_T10DIF_CRC : IB_T10DIF_CSUM;
	d->sig.dif.pi_interval = interval;
	d->sig.dif.ref_tag = SHCA_PI_REF;
	d->sig.dif.ref_remap = true;
	d->sig.dif.app_tag = SHCA_PI_APP;
	d->sig.dif.apptag_check_mask = 0xffff;
}

static void shca_pi_attrs(struct ib_sig_attrs *a, enum shca_pk mem,
			  enum shca_pk wire, u32 interval)
{
	memset(a, 0, sizeof(*a));
	a->check_mask = SHCA_PI_ALL;
	shca_pi_domain(&a->mem, mem, interval);
	shca_pi_domain(&a->wire, wire, interval);
}

/* The tuple of @block of @d over @data, by the reference functions. */
static void shca_pi_ref_tuple(const struct ib_sig_domain *d, u32 block,
			      const u8 *data, u8 *pi)
{
	const struct ib_t10_dif_domain *dif = &d->sig.dif;
	u16 guard;

	if (dif->bg_type == IB_T10DIF_CRC)
		guard = crc_t10dif(data, dif->pi_interval);
	else
		guard = be16_to_cpu((__force __be16)
				    ip_compute_csum(data, dif->pi_interval));
	put_unaligned_be16(guard, pi);
	put_unaligned_be16(dif->app_tag, pi + 2);
	put_unaligned_be32(dif->ref_tag + block, pi + 4);
}

/* The tuples of every block of @data in domain @d. */
static void shca_pi_ref_meta(const struct ib_sig_domain *d, const u8 *data,
			     u32 interval, u8 *meta)
{
	u32 b;

	for (b = 0; b < SHCA_PI_BLOCKS; b++)
		shca_pi_ref_tuple(d, b, data + b * interval, meta + b * 8);
}

/* The wire stream of @data: blocks, each followed by its wire tuple. */
static u8 *shca_pi_ref_wire(struct kunit *test, const struct shca_pim *p,
			    const u8 *data)
{
	bool pi = p->attrs.wire.sig_type == IB_SIG_TYPE_T10_DIF;
	u32 step = p->interval + (pi ? 8 : 0), b;
	u8 *w = kunit_kzalloc(test, p->wlen, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, w);
	for (b = 0; b < SHCA_PI_BLOCKS; b++) {
		memcpy(w + b * step, data + b * p->interval, p->interval);
		if (pi)
			shca_pi_ref_tuple(&p->attrs.wire, b,
					  data + b * p->interval,
					  w + b * step + p->interval);
	}
	return w;
}

/* Map @p's lists into a new integrity MR; registration is separate. */
static void shca_pi_map(struct kunit *test, struct shca_pim *p,
			enum shca_pk mem, enum shca_pk wire, u32 interval)
{
	struct shca_mr_fix *f = test->priv;
	bool mem_pi = mem != SHCA_PK_NONE;
	u32 cut1 = interval / 2 + 3, cut2 = 3 * interval + 100;

	memset(p, 0, sizeof(*p));
	p->interval = interval;
	p->dlen = SHCA_PI_BLOCKS * interval;
	p->mlen = SHCA_PI_BLOCKS * 8;
	p->wlen = p->dlen + (wire != SHCA_PK_NONE ? p->mlen : 0);
	shca_pi_attrs(&p->attrs, mem, wire, interval);
	p->data = kunit_kzalloc(test, p->dlen, GFP_KERNEL);
	p->meta = kunit_kzalloc(test, p->mlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p->data);
	KUNIT_ASSERT_NOT_NULL(test, p->meta);
	get_random_bytes(p->data, p->dlen);

	sg_init_table(p->dsg, 3);
	sg_set_buf(&p->dsg[0], p->data, cut1);
	sg_set_buf(&p->dsg[1], p->data + cut1, cut2 - cut1);
	sg_set_buf(&p->dsg[2], p->data + cut2, p->dlen - cut2);
	sg_init_table(p->msg, 2);
	sg_set_buf(&p->msg[0], p->meta, 13);
	sg_set_buf(&p->msg[1], p->meta + 13, p->mlen - 13);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, p->dsg, 3,
					    DMA_BIDIRECTIONAL), 3);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, p->msg, 2,
					    DMA_BIDIRECTIONAL), 2);

	p->mr = ib_alloc_mr_integrity(f->pd, 3, 2);
	KUNIT_ASSERT_FALSE(test, IS_ERR(p->mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, p->mr);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(p->mr, p->dsg, 3, NULL,
					      mem_pi ? p->msg : NULL,
					      mem_pi ? 2 : 0, NULL, SZ_4K), 0);
	*p->mr->sig_attrs = p->attrs;
}

/* Execute IB_WR_REG_MR_INTEGRITY under a new key byte, as the QP would. */
static int shca_pi_reg(struct shca_pim *p)
{
	ib_update_fast_reg_key(p->mr, ib_inc_rkey(p->mr->rkey));
	return shca_mr_fast_reg_pi(to_shca_mr(p->mr), p->mr->rkey, SHCA_RW,
				   p->mr->sig_attrs);
}

static void shca_pi_make(struct kunit *test, struct shca_pim *p,
			 enum shca_pk mem, enum shca_pk wire, u32 interval)
{
	shca_pi_map(test, p, mem, wire, interval);
	if (mem != SHCA_PK_NONE)
		shca_pi_ref_meta(&p->attrs.mem, p->data, interval, p->meta);
	KUNIT_ASSERT_EQ(test, shca_pi_reg(p), 0);
}

static struct shca_mem_target shca_pi_target(struct shca_pim *p, u64 off,
					     int access)
{
	return (struct shca_mem_target){ .pd = p->mr->pd, .key = p->mr->rkey,
					 .iova = off, .access = access };
}

/* Pieces that cut blocks, tuples and the copy chunk at odd places. */
static const u32 shca_pi_pieces[] = { 1, 7, 513, 8, 4099, 17000, 3 };

/* Move the wire view [0, len) in pieces; 0 or the first error. */
static int shca_pi_xfer(struct shca_mr_fix *f, struct shca_pim *p, u8 *buf,
			u32 len, enum shca_copy_dir dir)
{
	u32 off = 0, i = 0;
	int err;

	while (off < len) {
		u32 n = min(len - off, shca_pi_pieces[i++ %
						      ARRAY_SIZE(shca_pi_pieces)]);
		struct shca_mem_target t = shca_pi_target(p, off,
			dir == SHCA_COPY_TO_MR ? IB_ACCESS_REMOTE_WRITE :
						 IB_ACCESS_REMOTE_READ);

		err = shca_mr_copy(f->sdev, &t, buf + off, n, dir);
		if (err)
			return err;
		off += n;
	}
	return 0;
}

static void shca_pi_expect_clean(struct kunit *test, struct shca_pim *p)
{
	struct ib_mr_status st;

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(p->mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ_MSG(test, st.fail_status, 0,
			    "sig error type %d offset %llu", st.sig_err.err_type,
			    st.sig_err.sig_err_offset);
}

/* Read @p's status once: exactly this error, under @p's key. */
static void shca_pi_expect_err(struct kunit *test, struct shca_pim *p,
			       enum ib_sig_err_type type, u32 expected,
			       u32 actual, u64 offset)
{
	struct ib_mr_status st;

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(p->mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, st.sig_err.err_type, type);
	KUNIT_EXPECT_EQ(test, st.sig_err.expected, expected);
	KUNIT_EXPECT_EQ(test, st.sig_err.actual, actual);
	KUNIT_EXPECT_EQ(test, st.sig_err.sig_err_offset, offset);
	KUNIT_EXPECT_EQ(test, st.sig_err.key, p->mr->rkey);
}

struct shca_pi_case {
	enum shca_pk mem;
	enum shca_pk wire;
	u32 interval;
};

/* Every combination with PI somewhere x both intervals. */
static const struct shca_pi_case shca_pi_cases[] = {
	{ SHCA_PK_NONE, SHCA_PK_CRC, 512 },
	{ SHCA_PK_NONE, SHCA_PK_CRC, 4096 },
	{ SHCA_PK_NONE, SHCA_PK_CSUM, 512 },
	{ SHCA_PK_NONE, SHCA_PK_CSUM, 4096 },
	{ SHCA_PK_CRC, SHCA_PK_NONE, 512 },
	{ SHCA_PK_CRC, SHCA_PK_NONE, 4096 },
	{ SHCA_PK_CSUM, SHCA_PK_NONE, 512 },
	{ SHCA_PK_CSUM, SHCA_PK_NONE, 4096 },
	{ SHCA_PK_CRC, SHCA_PK_CRC, 512 },
	{ SHCA_PK_CRC, SHCA_PK_CRC, 4096 },
	{ SHCA_PK_CRC, SHCA_PK_CSUM, 512 },
	{ SHCA_PK_CRC, SHCA_PK_CSUM, 4096 },
	{ SHCA_PK_CSUM, SHCA_PK_CRC, 512 },
	{ SHCA_PK_CSUM, SHCA_PK_CRC, 4096 },
	{ SHCA_PK_CSUM, SHCA_PK_CSUM, 512 },
	{ SHCA_PK_CSUM, SHCA_PK_CSUM, 4096 },
};

static void shca_pi_case_desc(const struct shca_pi_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "mem %s wire %s %u",
		 shca_pk_name[c->mem], shca_pk_name[c->wire], c->interval);
}

KUNIT_ARRAY_PARAM(shca_pi, shca_pi_cases, shca_pi_case_desc);

/*
 * Pass: reading the key gives the reference wire stream (PI inserted,
 * stripped, passed or converted), the MR's length is the wire length;
 * writing that stream back into cleared memory restores the data and,
 * when memory carries PI, the reference tuples of the memory domain;
 * no error is latched either way.
 */
static void shca_pi_mr_transform(struct kunit *test)
{
	const struct shca_pi_case *c = test->param_value;
	struct shca_mr_fix *f = test->priv;
	u8 *wire, *out, *orig, *meta;
	struct shca_mem_target t;
	struct shca_pim p;

	shca_pi_make(test, &p, c->mem, c->wire, c->interval);
	KUNIT_EXPECT_EQ(test, p.mr->length,
			p.dlen + (c->mem != SHCA_PK_NONE ? p.mlen : 0));
	KUNIT_EXPECT_EQ(test, to_shca_mr(p.mr)->length, p.wlen);
	wire = shca_pi_ref_wire(test, &p, p.data);
	out = kunit_kzalloc(test, p.wlen, GFP_KERNEL);
	orig = shca_pi_dup(test, p.data, p.dlen, GFP_KERNEL);
	meta = kunit_kzalloc(test, p.mlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, orig);
	KUNIT_ASSERT_NOT_NULL(test, meta);

	KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, out, p.wlen,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, wire, p.wlen);
	shca_pi_expect_clean(test, &p);

	/* Nothing beyond the wire view. */
	t = shca_pi_target(&p, p.wlen, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 1,
					   SHCA_COPY_FROM_MR), -ERANGE);

	memset(p.data, 0, p.dlen);
	memset(p.meta, 0, p.mlen);
	KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, wire, p.wlen,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, p.data, orig, p.dlen);
	if (c->mem != SHCA_PK_NONE)
		shca_pi_ref_meta(&p.attrs.mem, orig, c->interval, meta);
	KUNIT_EXPECT_MEMEQ(test, p.meta, meta, p.mlen);
	shca_pi_expect_clean(test, &p);
}

struct shca_pi_ecase {
	const char *name;
	bool to_mr;		/* damage the wire stream written in */
	int byte;		/* tuple byte damaged */
	u32 block;
	enum ib_sig_err_type type;
};

static const struct shca_pi_ecase shca_pi_ecases[] = {
	{ "guard written", true, 0, 2, IB_SIG_BAD_GUARD },
	{ "apptag written", true, 3, 0, IB_SIG_BAD_APPTAG },
	{ "reftag written", true, 7, 5, IB_SIG_BAD_REFTAG },
	{ "guard read", false, 1, 1, IB_SIG_BAD_GUARD },
	{ "apptag read", false, 2, 4, IB_SIG_BAD_APPTAG },
	{ "reftag read", false, 4, 3, IB_SIG_BAD_REFTAG },
};

static void shca_pi_ecase_desc(const struct shca_pi_ecase *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_pi_err, shca_pi_ecases, shca_pi_ecase_desc);

/*
 * Pass: a damaged tuple in the input domain (the wire stream written
 * into the MR, or the metadata read out of it) is latched with its exact
 * type, expected and actual values, offset in the interleaved stream and
 * the key; the data still moves; the status reads once; a second damaged
 * tuple does not replace the first.
 */
static void shca_pi_mr_errors(struct kunit *test)
{
	const struct shca_pi_ecase *c = test->param_value;
	struct shca_mr_fix *f = test->priv;
	u32 step = 512 + 8, expected, actual, toff, later;
	u8 *wire, *out, *in, *good;
	struct shca_pim p;

	shca_pi_make(test, &p, SHCA_PK_CRC, SHCA_PK_CRC, 512);
	wire = shca_pi_ref_wire(test, &p, p.data);
	out = kunit_kzalloc(test, p.wlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	/* The input domain: the wire stream written in, or the metadata. */
	in = c->to_mr ? wire : p.meta;
	toff = c->to_mr ? c->block * step + 512 : c->block * 8;
	later = c->to_mr ? 5 * step + 512 : 5 * 8;
	good = shca_pi_dup(test, in, c->to_mr ? p.wlen : p.mlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, good);

	in[toff + c->byte] ^= 0x21;
	/* A later block damaged too: the first error is the one kept. */
	if (c->block != 5)
		in[later] ^= 0x01;

	switch (c->type) {
	case IB_SIG_BAD_GUARD:
		expected = get_unaligned_be16(good + toff);
		actual = get_unaligned_be16(in + toff);
		break;
	case IB_SIG_BAD_APPTAG:
		expected = SHCA_PI_APP;
		actual = get_unaligned_be16(in + toff + 2);
		break;
	default:
		expected = SHCA_PI_REF + c->block;
		actual = get_unaligned_be32(in + toff + 4);
		break;
	}

	if (c->to_mr) {
		memset(p.data, 0, p.dlen);
		KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, wire, p.wlen,
						   SHCA_COPY_TO_MR), 0);
		/* The data arrived all the same. */
		KUNIT_EXPECT_EQ(test, p.data[c->block * 512 + 9],
				wire[c->block * step + 9]);
	} else {
		KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, out, p.wlen,
						   SHCA_COPY_FROM_MR), 0);
		KUNIT_EXPECT_MEMEQ(test, out + c->block * step,
				   wire + c->block * step, 512);
	}

	shca_pi_expect_err(test, &p, c->type, expected, actual,
			   (u64)c->block * step);
	shca_pi_expect_clean(test, &p);
}

/*
 * Pass: a read that starts inside a block gives the same bytes as the
 * whole stream there (the block's first bytes are replayed); a write
 * that starts inside a block without continuing a transfer is refused
 * and changes nothing; one that continues where the previous one
 * stopped - in another call, as another work request would - goes on.
 */
static void shca_pi_mr_mid_block(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct shca_mem_target t;
	u8 *wire, *out, *orig;
	struct shca_pim p;

	shca_pi_make(test, &p, SHCA_PK_CRC, SHCA_PK_CRC, 512);
	wire = shca_pi_ref_wire(test, &p, p.data);
	out = kunit_kzalloc(test, p.wlen, GFP_KERNEL);
	orig = shca_pi_dup(test, p.data, p.dlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	KUNIT_ASSERT_NOT_NULL(test, orig);

	t = shca_pi_target(&p, 1000, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, out, 600,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, wire + 1000, 600);

	memset(p.data, 0, p.dlen);
	t = shca_pi_target(&p, 100, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, wire + 100, 50,
					   SHCA_COPY_TO_MR), -EINVAL);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(p.data, 0, p.dlen));

	/* From 0 to 700, then 700 to the end: the stream goes on. */
	t = shca_pi_target(&p, 0, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, wire, 700,
					   SHCA_COPY_TO_MR), 0);
	t = shca_pi_target(&p, 700, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, wire + 700,
					   p.wlen - 700, SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, p.data, orig, p.dlen);
	shca_pi_expect_clean(test, &p);
}

/*
 * Pass: IB_WR_REG_MR_INTEGRITY is refused, and changes nothing, for data
 * that is not a whole number of blocks, metadata short of a tuple per
 * block, an interval or a signature type the engine does not run.
 */
static void shca_pi_mr_refuse(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_sig_attrs *a;
	struct shca_mem_target t;
	struct shca_pim p;
	u8 byte;

	shca_pi_map(test, &p, SHCA_PK_CRC, SHCA_PK_CRC, 512);
	a = p.mr->sig_attrs;

	a->mem.sig.dif.pi_interval = 4096;	/* 3072 bytes of data */
	a->wire.sig.dif.pi_interval = 4096;
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), -EINVAL);
	a->mem.sig.dif.pi_interval = 520;
	a->wire.sig.dif.pi_interval = 520;
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), -EINVAL);
	a->mem.sig.dif.pi_interval = 512;
	a->wire.sig.dif.pi_interval = 1024;	/* domains disagree */
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), -EINVAL);
	a->wire.sig.dif.pi_interval = 512;
	a->wire.sig_type = IB_SIG_TYPE_T10_DIF + 1;
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), -EINVAL);
	a->wire.sig_type = IB_SIG_TYPE_T10_DIF;
	a->mem.sig.dif.bg_type = IB_T10DIF_CSUM + 1;
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), -EINVAL);
	a->mem.sig.dif.bg_type = IB_T10DIF_CRC;

	/* Metadata for five blocks of six. */
	sg_dma_len(&p.msg[0]) = 5 * 8;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(p.mr, p.dsg, 3, NULL, p.msg, 1,
					      NULL, SZ_4K), 0);
	*p.mr->sig_attrs = p.attrs;
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), -EINVAL);

	/* Nothing was registered: the key moves nothing. */
	t = shca_pi_target(&p, 0, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &byte, 1,
					   SHCA_COPY_FROM_MR), -ENOKEY);

	/* The right lists register. */
	sg_dma_len(&p.msg[0]) = 13;
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(p.mr, p.dsg, 3, NULL, p.msg, 2,
					      NULL, SZ_4K), 0);
	*p.mr->sig_attrs = p.attrs;
	KUNIT_EXPECT_EQ(test, shca_pi_reg(&p), 0);
}

/*
 * Pass: an error latched by the engine under one key, reported after the
 * MR was invalidated and given a new key byte (iSER checks the status
 * when it unregisters), is reported as mlx5 does: a guard error at
 * offset 0 carrying the key it happened under.
 */
static void shca_pi_mr_old_key(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_mr_status st;
	struct shca_pim p;
	u32 old;
	u8 *out;

	shca_pi_make(test, &p, SHCA_PK_CRC, SHCA_PK_CRC, 4096);
	out = kunit_kzalloc(test, p.wlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);
	p.meta[4 * 8 + 7] ^= 0x10;	/* ref tag of block 4 */
	KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, out, p.wlen,
					   SHCA_COPY_FROM_MR), 0);
	old = p.mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, old), 0);
	ib_update_fast_reg_key(p.mr, ib_inc_rkey(p.mr->rkey));

	KUNIT_ASSERT_EQ(test, ib_check_mr_status(p.mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_EXPECT_EQ(test, st.fail_status, IB_MR_CHECK_SIG_STATUS);
	KUNIT_EXPECT_EQ(test, st.sig_err.err_type, IB_SIG_BAD_GUARD);
	KUNIT_EXPECT_EQ(test, st.sig_err.sig_err_offset, 0);
	KUNIT_EXPECT_EQ(test, st.sig_err.key, old);
	KUNIT_EXPECT_NE(test, st.sig_err.key, p.mr->rkey);
	shca_pi_expect_clean(test, &p);
}

/*
 * Pass: integrity MR to integrity MR (as nvmet-rdma's MR and nvme-rdma's
 * meet on the wire): data and tuples arrive; a damaged tuple in the
 * source's memory is caught by both engines - the source's check, and,
 * as the guard is copied to the wire, the destination's - at the same
 * offset, each under its own key.
 */
static void shca_pi_mr_to_mr(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct shca_mem_target s, d;
	struct ib_mr_status st;
	struct shca_pim a, b;
	u32 step = 4096 + 8;
	u16 guard;

	shca_pi_make(test, &a, SHCA_PK_CRC, SHCA_PK_CRC, 4096);
	shca_pi_make(test, &b, SHCA_PK_CRC, SHCA_PK_CRC, 4096);
	memset(b.data, 0, b.dlen);
	memset(b.meta, 0, b.mlen);

	s = shca_pi_target(&a, 0, IB_ACCESS_REMOTE_READ);
	d = shca_pi_target(&b, 0, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy_mr(f->sdev, &d, &s, a.wlen), 0);
	KUNIT_EXPECT_MEMEQ(test, b.data, a.data, a.dlen);
	KUNIT_EXPECT_MEMEQ(test, b.meta, a.meta, a.mlen);
	shca_pi_expect_clean(test, &a);
	shca_pi_expect_clean(test, &b);

	guard = get_unaligned_be16(a.meta + 3 * 8);
	a.meta[3 * 8 + 1] ^= 0x80;
	KUNIT_ASSERT_EQ(test, ib_check_mr_status(a.mr, IB_MR_CHECK_SIG_STATUS,
						 &st), 0);
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, a.mr->rkey),
			0);
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, b.mr->rkey),
			0);
	KUNIT_ASSERT_EQ(test, shca_pi_reg(&a), 0);
	KUNIT_ASSERT_EQ(test, shca_pi_reg(&b), 0);
	s = shca_pi_target(&a, 0, IB_ACCESS_REMOTE_READ);
	d = shca_pi_target(&b, 0, IB_ACCESS_REMOTE_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_copy_mr(f->sdev, &d, &s, a.wlen), 0);

	shca_pi_expect_err(test, &a, IB_SIG_BAD_GUARD, guard, guard ^ 0x80,
			   3 * step);
	shca_pi_expect_err(test, &b, IB_SIG_BAD_GUARD, guard, guard ^ 0x80,
			   3 * step);
	KUNIT_EXPECT_MEMEQ(test, b.meta, a.meta, a.mlen);

	/* Not into itself: one MR carries one transfer at a time. */
	d = shca_pi_target(&a, step, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy_mr(f->sdev, &d, &s, step), -EINVAL);
}

/*
 * Pass: debugfs softhca/corrupt_guard = 2 damages the guards of the next
 * two tuples that leave memory for the wire, and no more; the reader's
 * data is intact.
 */
static void shca_pi_mr_inject(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct file *knob;
	u8 *wire, *out;
	struct shca_pim p;
	u32 step = 512 + 8, b;

	if (!IS_ENABLED(CONFIG_DEBUG_FS))
		kunit_skip(test, "no debugfs in this build (kunit-san has it)");
	knob = shca_kunit_debugfs_open(test, "softhca/corrupt_guard");
	shca_pi_make(test, &p, SHCA_PK_NONE, SHCA_PK_CRC, 512);
	wire = shca_pi_ref_wire(test, &p, p.data);
	out = kunit_kzalloc(test, p.wlen, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, out);

	shca_kunit_file_write(test, knob, "2");
	KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, out, p.wlen,
					   SHCA_COPY_FROM_MR), 0);
	for (b = 0; b < SHCA_PI_BLOCKS; b++) {
		u8 *w = wire + b * step + 512;

		KUNIT_EXPECT_MEMEQ(test, out + b * step, wire + b * step, 512);
		KUNIT_EXPECT_EQ_MSG(test, get_unaligned_be16(out + b * step +
							     512),
				    get_unaligned_be16(w) ^ (b < 2 ? 0x0100 : 0),
				    "block %u", b);
		KUNIT_EXPECT_MEMEQ(test, out + b * step + 514, w + 2, 6);
	}
	/* Spent: the next read is clean. */
	KUNIT_ASSERT_EQ(test, shca_pi_xfer(f, &p, out, p.wlen,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, wire, p.wlen);
}

static struct kunit_case shca_pi_mr_cases[] = {
	KUNIT_CASE_PARAM(shca_pi_mr_transform, shca_pi_gen_params),
	KUNIT_CASE_PARAM(shca_pi_mr_errors, shca_pi_err_gen_params),
	KUNIT_CASE(shca_pi_mr_mid_block),
	KUNIT_CASE(shca_pi_mr_refuse),
	KUNIT_CASE(shca_pi_mr_old_key),
	KUNIT_CASE(shca_pi_mr_to_mr),
	KUNIT_CASE(shca_pi_mr_inject),
	{}
};

static struct kunit_suite shca_pi_mr_suite = {
	.name = "shca_pi_mr",
	.init = shca_pi_init,
	.test_cases = shca_pi_mr_cases,
};

kunit_test_suite(shca_pi_mr_suite);
