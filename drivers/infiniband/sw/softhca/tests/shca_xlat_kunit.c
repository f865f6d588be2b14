// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for MR translations (shca_xlat.c). Fast-reg MRs of every
 * type are made with ib_alloc_mr() and ib_alloc_mr_integrity(), mapped
 * with ib_map_mr_sg()/ib_map_mr_sg_pi(), registered through the engine
 * hook the work-request executor uses, and then read and written through
 * the one copy path; every byte is compared with the memory behind the
 * SG list.
 *
 * shca_mr_map:      type x page size x SG geometry matrix
 */

#include <linux/dma-mapping.h>
#include <linux/scatterlist.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* Offsets and lengths in quarter pages plus bytes. */
struct shca_geo_ent {
	u8 block;
	u8 off_q;
	u16 off_b;
	u8 len_q;
	s16 len_b;
};

struct shca_geo {
	const char *name;
	u8 nents;
	u8 max_sg;		/* MR capacity */
	u8 mapped_mem_reg;	/* entries ib_map_mr_sg maps, per type */
	u8 mapped_sg_gaps;
	struct shca_geo_ent e[4];
};

static const struct shca_geo shca_geos[] = {
	{
		.name = "single", .nents = 1, .max_sg = 16,
		.mapped_mem_reg = 1, .mapped_sg_gaps = 1,
		.e = {
			{ .block = 0, .len_q = 7 },
		},
	},
	{
		.name = "contiguous", .nents = 3, .max_sg = 16,
		.mapped_mem_reg = 3, .mapped_sg_gaps = 3,
		.e = {
			{ .block = 0, .len_q = 4 },
			{ .block = 0, .off_q = 4, .len_q = 2 },
			{ .block = 0, .off_q = 6, .len_q = 2 },
		},
	},
	{
		.name = "aligned-gaps", .nents = 3, .max_sg = 16,
		.mapped_mem_reg = 3, .mapped_sg_gaps = 3,
		.e = {
			{ .block = 0, .len_q = 4 },
			{ .block = 1, .len_q = 8 },
			{ .block = 2, .len_q = 4 },
		},
	},
	{
		.name = "unaligned-ends", .nents = 3, .max_sg = 16,
		.mapped_mem_reg = 3, .mapped_sg_gaps = 3,
		.e = {
			{ .block = 0, .off_b = 100, .len_q = 4, .len_b = -100 },
			{ .block = 1, .len_q = 4 },
			{ .block = 2, .len_b = 777 },
		},
	},
	{
		.name = "too-many", .nents = 4, .max_sg = 2,
		.mapped_mem_reg = 2, .mapped_sg_gaps = 2,
		.e = {
			{ .block = 0, .len_q = 4 },
			{ .block = 1, .len_q = 4 },
			{ .block = 2, .len_q = 4 },
			{ .block = 3, .len_q = 4 },
		},
	},
	{
		.name = "unaligned-gaps", .nents = 3, .max_sg = 16,
		.mapped_mem_reg = 1, .mapped_sg_gaps = 3,
		.e = {
			{ .block = 0, .len_b = 1000 },
			{ .block = 1, .off_b = 24, .len_b = 3000 },
			{ .block = 2, .off_b = 5, .len_b = 17 },
		},
	},
};

struct shca_map_case {
	enum ib_mr_type type;
	u32 page_size;
	const struct shca_geo *geo;
};

/* Every geometry for every (type, page size) row. */
static const struct {
	enum ib_mr_type type;
	u32 page_size;
} shca_map_rows[] = {
	{ IB_MR_TYPE_MEM_REG, SZ_4K },
	{ IB_MR_TYPE_MEM_REG, SZ_8K },
	{ IB_MR_TYPE_MEM_REG, SZ_64K },
	{ IB_MR_TYPE_MEM_REG, SZ_2M },
	{ IB_MR_TYPE_SG_GAPS, SZ_4K },
	{ IB_MR_TYPE_SG_GAPS, SZ_2M },
	{ IB_MR_TYPE_INTEGRITY, SZ_4K },
	{ IB_MR_TYPE_INTEGRITY, SZ_64K },
};

static void shca_map_case_desc(const struct shca_map_case *c, char *desc)
{
	static const char * const names[] = {
		[IB_MR_TYPE_MEM_REG] = "MEM_REG",
		[IB_MR_TYPE_SG_GAPS] = "SG_GAPS",
		[IB_MR_TYPE_INTEGRITY] = "INTEGRITY",
	};

	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s %uK %s", names[c->type],
		 c->page_size / SZ_1K, c->geo->name);
}

static struct shca_map_case
	shca_map_cases[ARRAY_SIZE(shca_map_rows) * ARRAY_SIZE(shca_geos)];

static const void *shca_map_gen_params(const void *prev, char *desc)
{
	const struct shca_map_case *c = prev ? prev : shca_map_cases - 1;
	size_t i;

	if (!prev) {
		for (i = 0; i < ARRAY_SIZE(shca_map_cases); i++) {
			shca_map_cases[i].type =
				shca_map_rows[i / ARRAY_SIZE(shca_geos)].type;
			shca_map_cases[i].page_size =
				shca_map_rows[i / ARRAY_SIZE(shca_geos)].page_size;
			shca_map_cases[i].geo =
				&shca_geos[i % ARRAY_SIZE(shca_geos)];
		}
	}
	if (++c >= shca_map_cases + ARRAY_SIZE(shca_map_cases))
		return NULL;
	shca_map_case_desc(c, desc);
	return c;
}

static u64 shca_geo_off(const struct shca_geo_ent *e, u32 ps)
{
	return (u64)e->off_q * (ps / 4) + e->off_b;
}

static u64 shca_geo_len(const struct shca_geo_ent *e, u32 ps)
{
	return (u64)e->len_q * (ps / 4) + e->len_b;
}

/* One SG entry of a case, resolved to a block and a byte range. */
struct shca_ent {
	unsigned int block;
	u64 off;
	u64 len;
};

#define SHCA_MAX_BLOCKS	5	/* 4 data blocks + 1 for integrity metadata */

static bool shca_ent_has(const struct shca_ent *ents, int n,
			 unsigned int block, u64 off)
{
	int e;

	for (e = 0; e < n; e++)
		if (ents[e].block == block && off >= ents[e].off &&
		    off < ents[e].off + ents[e].len)
			return true;
	return false;
}

/*
 * Pass: the MR maps exactly the entries the type allows (an integrity MR
 * all or nothing), its iova and length are those of the mapped entries
 * (zero-based data + metadata for INTEGRITY), a full read through the key
 * returns their bytes in order, a full write lands in them and nowhere
 * else, and nothing moves before registration or after invalidation.
 */
static void shca_mr_map_matrix(struct kunit *test)
{
	const struct shca_map_case *c = test->param_value;
	const bool pi = c->type == IB_MR_TYPE_INTEGRITY;
	u8 *blocks[SHCA_MAX_BLOCKS] = {}, *linear, *expect;
	struct shca_ent ents[ARRAY_SIZE(shca_geos[0].e) + 1];
	const struct shca_geo *g = c->geo;
	struct shca_mr_fix *f = test->priv;
	struct scatterlist *sgl, meta_sg;
	u32 ps = c->page_size;
	size_t bsize = 2 * (size_t)ps;
	struct shca_mem_target t;
	u64 total = 0, pos, iova;
	int i, n, want, nents;
	struct ib_mr *mr;

	for (i = 0; i < g->nents; i++) {
		ents[i].block = g->e[i].block;
		ents[i].off = shca_geo_off(&g->e[i], ps);
		ents[i].len = shca_geo_len(&g->e[i], ps);
	}
	nents = g->nents;
	switch (c->type) {
	case IB_MR_TYPE_MEM_REG:
		want = g->mapped_mem_reg;
		break;
	case IB_MR_TYPE_SG_GAPS:
		want = g->mapped_sg_gaps;
		break;
	default:
		/* All or nothing; 64 bytes of PI in their own block follow. */
		want = g->mapped_sg_gaps == g->nents ? g->nents + 1 : -ENOMEM;
		ents[nents].block = SHCA_MAX_BLOCKS - 1;
		ents[nents].off = 8;
		ents[nents].len = 64;
		nents++;
		break;
	}

	for (i = 0; i < nents; i++) {
		unsigned int b = ents[i].block;

		if (!blocks[b]) {
			blocks[b] = shca_kunit_block(test, bsize);
			shca_kunit_fill(blocks[b], b, bsize, 0);
		}
	}
	sgl = kunit_kcalloc(test, g->nents, sizeof(*sgl), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sgl);
	sg_init_table(sgl, g->nents);
	for (i = 0; i < g->nents; i++)
		sg_set_buf(&sgl[i], blocks[ents[i].block] + ents[i].off,
			   ents[i].len);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, sgl, g->nents,
					    DMA_BIDIRECTIONAL), g->nents);
	if (pi) {
		sg_init_one(&meta_sg, blocks[ents[g->nents].block] +
				      ents[g->nents].off, ents[g->nents].len);
		KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &meta_sg, 1,
						    DMA_BIDIRECTIONAL), 1);
		mr = shca_kunit_track_mr(test, ib_alloc_mr_integrity(f->pd,
								     g->max_sg, 1));
		n = ib_map_mr_sg_pi(mr, sgl, g->nents, NULL, &meta_sg, 1,
				    NULL, ps);
		KUNIT_ASSERT_EQ(test, n, want < 0 ? want : 0);
		iova = 0;
	} else {
		mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, c->type,
							   g->max_sg));
		n = ib_map_mr_sg(mr, sgl, g->nents, NULL, ps);
		KUNIT_ASSERT_EQ(test, n, want);
		iova = (uintptr_t)sg_virt(&sgl[0]);
	}
	if (want < 0) {
		/* Nothing registrable was built: the key moves nothing. */
		t = shca_kunit_target(f->pd, mr->rkey, 0, 0);
		KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, &pos, 1,
						   SHCA_COPY_FROM_MR),
				-EKEYREVOKED);
		return;
	}

	for (i = 0; i < want; i++)
		total += ents[i].len;
	expect = shca_kunit_vbuf(test, total);
	linear = shca_kunit_vbuf(test, total);
	for (i = 0, pos = 0; i < want; i++) {
		memcpy(expect + pos, blocks[ents[i].block] + ents[i].off,
		       ents[i].len);
		pos += ents[i].len;
	}
	KUNIT_EXPECT_EQ(test, mr->iova, iova);
	KUNIT_EXPECT_EQ(test, mr->length, total);

	/* Mapped, not registered: the key moves nothing yet. */
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, linear, total,
					   SHCA_COPY_FROM_MR), -EKEYREVOKED);

	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	if (pi) {
		shca_kunit_sig_attrs_plain(mr->sig_attrs);
		KUNIT_ASSERT_EQ(test, shca_mr_fast_reg_pi(to_shca_mr(mr),
							  mr->rkey, SHCA_RW,
							  mr->sig_attrs), 0);
	} else {
		KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr),
						       mr->rkey, SHCA_RW), 0);
	}
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_REMOTE_READ);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, linear, total,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, linear, expect, total);

	/* Write everything through the key; check each block byte. */
	for (pos = 0; pos < total; pos++)
		linear[pos] = ~expect[pos];
	t.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, linear, total,
					   SHCA_COPY_TO_MR), 0);
	for (i = 0; i < SHCA_MAX_BLOCKS; i++) {
		size_t off;

		if (!blocks[i])
			continue;
		for (off = 0; off < bsize; off++) {
			u8 want_byte = shca_kunit_pattern(i, off, 0);

			if (shca_ent_has(ents, want, i, off))
				want_byte = ~want_byte;
			if (blocks[i][off] != want_byte) {
				KUNIT_FAIL(test, "block %d byte %zu: %#x, want %#x",
					   i, off, blocks[i][off], want_byte);
				return;
			}
		}
	}

	/* Invalidate: the key is refused, the memory untouched. */
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, expect, total,
					   SHCA_COPY_TO_MR), -EKEYREVOKED);
	KUNIT_EXPECT_EQ(test, ((u8 *)sg_virt(&sgl[0]))[0],
			(u8)~expect[0]);
}

static struct kunit_case shca_mr_map_cases[] = {
	KUNIT_CASE_PARAM(shca_mr_map_matrix, shca_map_gen_params),
	{}
};

static struct kunit_suite shca_mr_map_suite = {
	.name = "shca_mr_map",
	.init = shca_kunit_mr_init,
	.test_cases = shca_mr_map_cases,
};

kunit_test_suite(shca_mr_map_suite);
