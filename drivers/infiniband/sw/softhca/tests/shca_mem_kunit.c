// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for key resolution and the copy engine (shca_mem.c): every
 * input the engine refuses - at allocation, mapping and registration,
 * and above all when a key is resolved for a copy or a held span - with
 * its errno, and nothing changed by the refusal.
 *
 * shca_mr_refuse:   every refused input, with its errno, changing nothing
 */

#include <linux/dma-mapping.h>
#include <linux/mman.h>
#include <linux/scatterlist.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* Pass: alloc_mr takes MEM_REG and SG_GAPS with 1..max entries only. */
static void shca_mr_refuse_alloc(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u32 before = shca_kunit_count_mrs(f->sdev);
	struct ib_mr *mr;

	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(f->pd, IB_MR_TYPE_DMA, 4)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(f->pd, IB_MR_TYPE_USER, 4)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(f->pd, IB_MR_TYPE_DM, 4)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG,
						  0)), -EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr(f->pd, IB_MR_TYPE_SG_GAPS,
						  SHCA_MAX_FRPL + 1)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr_integrity(f->pd, 4, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_alloc_mr_integrity(f->pd, 0, 4)),
			-EINVAL);
	mr = ib_alloc_mr_integrity(f->pd, SHCA_MAX_PI_FRPL + 1, 1);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	/* At the limit it works. */
	shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG,
					      SHCA_MAX_FRPL));

	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev), before + 1);
}

/* Pass: page sizes outside page_size_cap and empty entries map nothing. */
static void shca_mr_refuse_map(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	static const u32 bad[] = { 0, 512, 1024, 3 * SZ_1K, SZ_4K + 1,
				   12 * SZ_1K };
	struct scatterlist sg[2];
	struct ib_mr *mr, *gaps;
	u8 *buf = shca_kunit_block(test, PAGE_SIZE);
	int i;

	sg_init_table(sg, 2);
	sg_set_buf(&sg[0], buf, 512);
	sg_set_buf(&sg[1], buf + 1024, 512);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, sg, 2,
					    DMA_BIDIRECTIONAL), 2);
	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 4));
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, ib_map_mr_sg(mr, sg, 1, NULL, bad[i]),
				    -EINVAL, "page size %u", bad[i]);

	gaps = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_SG_GAPS, 4));
	sg_dma_len(&sg[1]) = 0;
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(gaps, sg, 2, NULL, SZ_4K), -EINVAL);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(gaps, sg, 0, NULL, SZ_4K), -EINVAL);

	/* Integrity MRs need all entries mapped. */
	sg_dma_len(&sg[1]) = 512;
	mr = shca_kunit_track_mr(test, ib_alloc_mr_integrity(f->pd, 1, 1));
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg_pi(mr, sg, 2, NULL, sg, 1, NULL,
					      SZ_4K), -ENOMEM);
}

/*
 * Pass: every malformed copy request gets its own errno and moves no
 * byte: overflow, out of range, wrong PD, missing rights, unknown key,
 * stale key, never registered, after invalidation.
 */
static void shca_mr_refuse_copy(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *buf = shca_kunit_block(test, PAGE_SIZE), probe[16];
	struct shca_mem_target t;
	struct scatterlist sg;
	struct ib_mr *mr, *idle;
	u32 old_key;

	shca_kunit_fill(buf, 3, PAGE_SIZE, 0);
	sg_init_one(&sg, buf, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, IB_ACCESS_LOCAL_WRITE |
					    IB_ACCESS_REMOTE_READ), 0);
	memset(probe, 0x77, sizeof(probe));

#define SHCA_EXPECT_REFUSED(t_, err_)					    \
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &(t_), probe, 16,	    \
					   SHCA_COPY_TO_MR), err_)

	t = shca_kunit_target(f->pd, mr->rkey, U64_MAX - 8, 0);
	SHCA_EXPECT_REFUSED(t, -EOVERFLOW);
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova + PAGE_SIZE - 15, 0);
	SHCA_EXPECT_REFUSED(t, -ERANGE);
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova - 16, 0);
	SHCA_EXPECT_REFUSED(t, -ERANGE);
	t = shca_kunit_target(f->pd2, mr->rkey, mr->iova, 0);
	SHCA_EXPECT_REFUSED(t, -EACCES);
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_REMOTE_WRITE);
	SHCA_EXPECT_REFUSED(t, -EPERM);
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_REMOTE_ATOMIC);
	SHCA_EXPECT_REFUSED(t, -EPERM);
	t = shca_kunit_target(f->pd, 0, mr->iova, 0);
	SHCA_EXPECT_REFUSED(t, -ENOKEY);
	t = shca_kunit_target(f->pd, mr->rkey ^ 0xff000000, mr->iova, 0);
	SHCA_EXPECT_REFUSED(t, -ENOKEY);
	KUNIT_EXPECT_EQ(test, buf[0], shca_kunit_pattern(3, 0, 0));
	KUNIT_EXPECT_EQ(test, buf[15], shca_kunit_pattern(3, 15, 0));

	/* Stale key: after invalidate + re-register under a new key byte. */
	old_key = mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	t = shca_kunit_target(f->pd, old_key, mr->iova, 0);
	SHCA_EXPECT_REFUSED(t, -EKEYREVOKED);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, IB_ACCESS_LOCAL_WRITE), 0);
	SHCA_EXPECT_REFUSED(t, -ENOKEY);
	t.key = mr->rkey;
	t.access = IB_ACCESS_LOCAL_WRITE;
	SHCA_EXPECT_REFUSED(t, 0);
	KUNIT_EXPECT_MEMEQ(test, buf, probe, 16);

	/* Allocated and mapped, never registered. */
	idle = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(idle, &sg, 1, NULL, PAGE_SIZE), 1);
	t = shca_kunit_target(f->pd, idle->rkey, idle->iova, 0);
	SHCA_EXPECT_REFUSED(t, -EKEYREVOKED);

	/* MR to MR: a refused side moves nothing. */
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_LOCAL_WRITE);
	{
		struct shca_mem_target s = shca_kunit_target(f->pd, idle->rkey,
						       idle->iova, 0);

		KUNIT_EXPECT_EQ(test, shca_mr_copy_mr(f->sdev, &t, &s, 16),
				-EKEYREVOKED);
		KUNIT_EXPECT_EQ(test, shca_mr_copy_mr(f->sdev, &s, &t, 16),
				-EKEYREVOKED);
	}
#undef SHCA_EXPECT_REFUSED
}

/*
 * Pass: a translation shorter than its region (an engine bug, made here
 * by hand) fails the copy with EFAULT before any byte moves - never a
 * silent short copy reported as success. The part it does translate
 * still works.
 */
static void shca_mr_refuse_hole(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *buf = shca_kunit_block(test, 4 * PAGE_SIZE), *in;
	struct shca_mem_target t;
	struct scatterlist sg;
	struct ib_mr *mr;

	in = shca_kunit_vbuf(test, 4 * PAGE_SIZE);
	memset(in, 0xe7, 4 * PAGE_SIZE);
	sg_init_one(&sg, buf, 4 * PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 4));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, SHCA_RW), 0);
	KUNIT_ASSERT_EQ(test, to_shca_mr(mr)->cur->data.n, 4);

	to_shca_mr(mr)->cur->data.n = 2;
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 4 * PAGE_SIZE,
					   SHCA_COPY_TO_MR), -EFAULT);
	t.iova = mr->iova + 2 * PAGE_SIZE;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 1,
					   SHCA_COPY_TO_MR), -EFAULT);
	KUNIT_EXPECT_EQ(test, shca_mr_copy_mr(f->sdev, &t,
					      &(struct shca_mem_target){
						.pd = f->pd,
						.key = f->pd->local_dma_lkey,
						.iova = (uintptr_t)in },
					      1), -EFAULT);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf, 0, 4 * PAGE_SIZE));

	t.iova = mr->iova;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 2 * PAGE_SIZE,
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf, 0xe7, 2 * PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf + 2 * PAGE_SIZE, 0,
					    2 * PAGE_SIZE));
	to_shca_mr(mr)->cur->data.n = 4;
}

/*
 * Pass: a map that fails after a good one (an empty entry, a list too
 * short) does not leave a half-built list for the next registration:
 * that registration grants an empty region, so a copy over the length
 * the good map had is refused with ERANGE and touches neither buffer.
 * A good map afterwards works again.
 */
static void shca_mr_refuse_failed_map(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *a = shca_kunit_block(test, PAGE_SIZE), *b = shca_kunit_block(test, PAGE_SIZE);
	u8 *in = shca_kunit_block(test, PAGE_SIZE);
	struct scatterlist sa[3], sb[2];
	struct shca_mem_target t;
	struct ib_mr *mr, *pi;
	int i;

	memset(in, 0x99, PAGE_SIZE);
	sg_init_table(sa, 3);
	for (i = 0; i < 3; i++)
		sg_set_buf(&sa[i], a + i * 1024, 512);
	sg_init_table(sb, 2);
	sg_set_buf(&sb[0], b, 512);
	sg_set_buf(&sb[1], b + 1024, 512);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, sa, 3,
					    DMA_BIDIRECTIONAL), 3);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, sb, 2,
					    DMA_BIDIRECTIONAL), 2);

	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_SG_GAPS, 4));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sa, 3, NULL, SZ_4K), 3);
	KUNIT_EXPECT_EQ(test, mr->length, 3 * 512);
	sg_dma_len(&sb[1]) = 0;
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg(mr, sb, 2, NULL, SZ_4K), -EINVAL);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, SHCA_RW), 0);
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 3 * 512,
					   SHCA_COPY_TO_MR), -ERANGE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 1,
					   SHCA_COPY_TO_MR), -ERANGE);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(a, 0, PAGE_SIZE));
	KUNIT_EXPECT_TRUE(test, !memchr_inv(b, 0, PAGE_SIZE));

	/* A good map and registration work again. */
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, sa, 3, NULL, SZ_4K), 3);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, SHCA_RW), 0);
	t = shca_kunit_target(f->pd, mr->rkey, mr->iova, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 3 * 512,
					   SHCA_COPY_TO_MR), 0);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_TRUE(test, !memchr_inv(a + i * 1024, 0x99, 512));

	/* The same for an integrity MR whose metadata list is too short. */
	sg_dma_len(&sb[1]) = 512;
	pi = shca_kunit_track_mr(test, ib_alloc_mr_integrity(f->pd, 3, 1));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(pi, sa, 3, NULL, sb, 1, NULL,
					      SZ_4K), 0);
	KUNIT_EXPECT_EQ(test, ib_map_mr_sg_pi(pi, sa, 3, NULL, sb, 2, NULL,
					      SZ_4K), -ENOMEM);
	shca_kunit_sig_attrs_t10(pi->sig_attrs);
	ib_update_fast_reg_key(pi, ib_inc_rkey(pi->rkey));
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg_pi(to_shca_mr(pi), pi->rkey,
						  SHCA_RW, pi->sig_attrs), 0);
	t = shca_kunit_target(f->pd, pi->rkey, 0, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, in, 1,
					   SHCA_COPY_TO_MR), -ERANGE);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(b, 0, PAGE_SIZE));
}

/* Pass: registration and invalidation refuse what the IBTA forbids. */
static void shca_mr_refuse_reg(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct ib_mr *mr, *other, *dma;

	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	other = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));

	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), other->rkey,
					       0), -EINVAL);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey,
					       IB_ACCESS_REMOTE_WRITE),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey,
					       IB_ACCESS_REMOTE_ATOMIC),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey,
					       IB_ACCESS_ON_DEMAND),
			-EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey,
					       1 << 30), -EINVAL);
	KUNIT_ASSERT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey, 0), 0);
	/* VALID: must be invalidated before it registers again. */
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(mr), mr->rkey, 0),
			-EBUSY);
	dma = shca_kunit_dma_mr(test, f->pd, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(dma), dma->lkey, 0),
			-EINVAL);

	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd2, 0, mr->rkey),
			-EACCES);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0,
						 mr->rkey + 1), -ENOKEY);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, dma->lkey),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	/* Invalidating twice is harmless. */
	KUNIT_EXPECT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
}

/* Pass: reg_user_mr refuses bad ranges, rights and addresses cleanly. */
static void shca_mr_refuse_user(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	unsigned long rw, ro;
	struct ib_mr *mr;
	u32 before;

	rw = kunit_vm_mmap(test, NULL, 0, 4 * PAGE_SIZE,
			   PROT_READ | PROT_WRITE,
			   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	ro = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ,
			   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, rw, 0);
	KUNIT_ASSERT_NE(test, ro, 0);
	before = shca_kunit_count_mrs(f->sdev);

	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(f->pd, rw, 0, rw, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(f->pd, rw, PAGE_SIZE,
						     U64_MAX - 10, 0)),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(f->pd, U64_MAX - 100,
						     PAGE_SIZE, 0, 0)),
			-EINVAL);
	mr = ib_reg_user_mr(f->pd, rw, PAGE_SIZE, rw, IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EINVAL);
	mr = ib_reg_user_mr(f->pd, rw, PAGE_SIZE, rw, IB_ACCESS_FLUSH_GLOBAL);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EOPNOTSUPP);
	/* Not mapped at all. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(f->pd, PAGE_SIZE,
						     PAGE_SIZE, 0, 0)),
			-EFAULT);
	/* Runs off the end of the mapping. */
	KUNIT_EXPECT_EQ(test, PTR_ERR(ib_reg_user_mr(f->pd, rw,
						     64 * PAGE_SIZE, rw, 0)),
			-EFAULT);
	/* Local write on a read-only mapping. */
	mr = ib_reg_user_mr(f->pd, ro, PAGE_SIZE, ro, IB_ACCESS_LOCAL_WRITE);
	KUNIT_EXPECT_EQ(test, PTR_ERR(mr), -EFAULT);
	/* Read-only access to it is fine. */
	shca_kunit_track_mr(test, ib_reg_user_mr(f->pd, ro, PAGE_SIZE, ro, 0));

	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev), before + 1);
}

/*
 * Pass: a held span (the data path resolves a request's own SGEs once)
 * is refused exactly as a copy would be, moves bytes at any offset of
 * its range to and from buffers and other keys, and stops moving them
 * once its MR is invalidated or re-registered (-EKEYREVOKED, with the
 * side that failed); a refused other side moves nothing either.
 */
static void shca_mr_refuse_held(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *buf = shca_kunit_block(test, 4 * PAGE_SIZE), *obuf, out[32];
	struct shca_mem_target t, o;
	struct shca_span span = {};
	struct scatterlist sg, osg;
	struct ib_mr *mr, *other;
	bool dst_failed;

	shca_kunit_fill(buf, 5, 4 * PAGE_SIZE, 0);
	obuf = shca_kunit_block(test, PAGE_SIZE);
	memset(obuf, 0, PAGE_SIZE);
	sg_init_one(&sg, buf, 4 * PAGE_SIZE);
	sg_init_one(&osg, obuf, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &osg, 1,
					    DMA_BIDIRECTIONAL), 1);
	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 4));
	other = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(other, &osg, 1, NULL, PAGE_SIZE),
			1);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, IB_ACCESS_LOCAL_WRITE), 0);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(other, SHCA_RW), 0);

	/* Refused as shca_mr_copy() refuses, holding nothing. */
	t = shca_kunit_target(f->pd, mr->lkey, mr->iova + 3 * PAGE_SIZE, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_hold(f->sdev, &t, PAGE_SIZE + 1, &span),
			-ERANGE);
	t.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, shca_mr_hold(f->sdev, &t, 16, &span), -EPERM);
	t = shca_kunit_target(f->pd2, mr->lkey, mr->iova, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_hold(f->sdev, &t, 16, &span), -EACCES);
	t = shca_kunit_target(f->pd, mr->lkey ^ 0xff, mr->iova, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_hold(f->sdev, &t, 16, &span), -ENOKEY);

	/* Pages 1 and 2, held once, used at several offsets. */
	t = shca_kunit_target(f->pd, mr->lkey, mr->iova + PAGE_SIZE,
			      IB_ACCESS_LOCAL_WRITE);
	KUNIT_ASSERT_EQ(test, shca_mr_hold(f->sdev, &t, 2 * PAGE_SIZE, &span),
			0);
	KUNIT_EXPECT_PTR_EQ(test, span.mr, to_shca_mr(mr));
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held_buf(&span, PAGE_SIZE - 8, out,
						    sizeof(out),
						    SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, buf + 2 * PAGE_SIZE - 8, sizeof(out));
	KUNIT_EXPECT_EQ(test, span.off, PAGE_SIZE);

	/* Held -> key and key -> held. */
	o = shca_kunit_target(f->pd, other->rkey, other->iova + 100,
			      IB_ACCESS_REMOTE_WRITE);
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 40, f->sdev, &o, 200,
						false, &dst_failed), 0);
	KUNIT_EXPECT_MEMEQ(test, obuf + 100, buf + PAGE_SIZE + 40, 200);
	memset(obuf, 0xc3, 64);
	o = shca_kunit_target(f->pd, other->rkey, other->iova, IB_ACCESS_REMOTE_READ);
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 2 * PAGE_SIZE - 64,
						f->sdev, &o, 64, true,
						&dst_failed), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf + 3 * PAGE_SIZE - 64, 0xc3,
					    64));

	/* The other side refused: which side, and nothing moved. */
	o.key ^= 0xff;
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 0, f->sdev, &o, 64,
						true, &dst_failed), -ENOKEY);
	KUNIT_EXPECT_FALSE(test, dst_failed);
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 0, f->sdev, &o, 64,
						false, &dst_failed), -ENOKEY);
	KUNIT_EXPECT_TRUE(test, dst_failed);
	KUNIT_EXPECT_EQ(test, buf[PAGE_SIZE], shca_kunit_pattern(5, PAGE_SIZE, 0));

	/* Invalidated, then re-registered under a new key: revoked. */
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->lkey), 0);
	memset(out, 0x5a, sizeof(out));
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held_buf(&span, 0, out, sizeof(out),
						    SHCA_COPY_TO_MR),
			-EKEYREVOKED);
	o.key ^= 0xff;
	o.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 0, f->sdev, &o, 64,
						true, &dst_failed),
			-EKEYREVOKED);
	KUNIT_EXPECT_TRUE(test, dst_failed);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, IB_ACCESS_LOCAL_WRITE), 0);
	o.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 0, f->sdev, &o, 64,
						false, &dst_failed),
			-EKEYREVOKED);
	KUNIT_EXPECT_FALSE(test, dst_failed);
	KUNIT_EXPECT_EQ(test, buf[PAGE_SIZE], shca_kunit_pattern(5, PAGE_SIZE, 0));
	KUNIT_EXPECT_EQ(test, obuf[0], 0xc3);

	shca_mr_unhold(&span);
	KUNIT_EXPECT_NULL(test, span.mr);
}

/*
 * Pass: the reserved lkey (IBK_LOCAL_DMA_LKEY) is the kernel PDs' local
 * DMA key: the core hands it out instead of a DMA MR per PD; it moves
 * bytes at any kernel address for local access, to and from other keys;
 * remote access, a userspace PD and invalidation do not know it.
 */
static void shca_mr_local_dma_lkey(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *buf = shca_kunit_block(test, PAGE_SIZE), out[64], save[64];
	struct ib_pd upd = *f->pd;
	struct shca_mem_target t, o;
	struct shca_span span = {};
	bool dst_failed;

	KUNIT_EXPECT_TRUE(test, f->ibdev->attrs.kernel_cap_flags &
				IBK_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_EQ(test, f->pd->local_dma_lkey, SHCA_LOCAL_DMA_LKEY);
	KUNIT_EXPECT_NULL(test, f->pd->__internal_mr);

	shca_kunit_fill(buf, 9, PAGE_SIZE, 0);
	t = shca_kunit_target(f->pd, SHCA_LOCAL_DMA_LKEY, (uintptr_t)buf + 100, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_MEMEQ(test, out, buf + 100, sizeof(out));
	t.access = IB_ACCESS_LOCAL_WRITE;
	memset(out, 0x3c, sizeof(out));
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_TO_MR), 0);
	KUNIT_EXPECT_TRUE(test, !memchr_inv(buf + 100, 0x3c, sizeof(out)));

	/* Held: no MR, no reference; to another kernel address. */
	KUNIT_ASSERT_EQ(test, shca_mr_hold(f->sdev, &t, 64, &span), 0);
	KUNIT_EXPECT_NULL(test, span.mr);
	o = shca_kunit_target(f->pd, SHCA_LOCAL_DMA_LKEY, (uintptr_t)buf, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy_held(&span, 0, f->sdev, &o, 64,
						true, &dst_failed), 0);
	KUNIT_EXPECT_MEMEQ(test, buf + 100, buf, 64);
	shca_mr_unhold(&span);

	/* Not for remote access, another device's ... */
	memset(out, 0x77, sizeof(out));
	t.access = IB_ACCESS_REMOTE_READ;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_FROM_MR), -ENOKEY);
	t.access = IB_ACCESS_REMOTE_WRITE;
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_TO_MR), -ENOKEY);
	t.access = IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_ATOMIC;
	KUNIT_EXPECT_EQ(test, shca_mr_hold(f->sdev, &t, 8, &span), -ENOKEY);
	/* ... nor a userspace PD (a copy of the PD with an owner) ... */
	memcpy(save, buf + 100, sizeof(save));
	upd.uobject = (struct ib_uobject *)&upd;
	t = shca_kunit_target(&upd, SHCA_LOCAL_DMA_LKEY, (uintptr_t)buf, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, sizeof(out),
					   SHCA_COPY_TO_MR), -ENOKEY);
	KUNIT_EXPECT_MEMEQ(test, buf + 100, save, sizeof(save));
	/* ... and nothing invalidates it. */
	KUNIT_EXPECT_NE(test, shca_mr_invalidate(f->sdev, f->pd, 0,
						 SHCA_LOCAL_DMA_LKEY), 0);
	t = shca_kunit_target(f->pd, SHCA_LOCAL_DMA_LKEY, (uintptr_t)buf, 0);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(f->sdev, &t, out, 1,
					   SHCA_COPY_FROM_MR), 0);
}

static struct kunit_case shca_mr_refuse_cases[] = {
	KUNIT_CASE(shca_mr_refuse_alloc),
	KUNIT_CASE(shca_mr_refuse_map),
	KUNIT_CASE(shca_mr_refuse_copy),
	KUNIT_CASE(shca_mr_refuse_held),
	KUNIT_CASE(shca_mr_local_dma_lkey),
	KUNIT_CASE(shca_mr_refuse_hole),
	KUNIT_CASE(shca_mr_refuse_failed_map),
	KUNIT_CASE(shca_mr_refuse_reg),
	KUNIT_CASE(shca_mr_refuse_user),
	{}
};

static struct kunit_suite shca_mr_refuse_suite = {
	.name = "shca_mr_refuse",
	.init = shca_kunit_mr_init,
	.test_cases = shca_mr_refuse_cases,
};

kunit_test_suite(shca_mr_refuse_suite);
