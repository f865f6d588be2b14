// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_mr_lifetime: references, key rotation, mapping
 * while registered, an MR cut between two chunks of a transfer, many
 * alloc/dereg cycles, and a concurrency stress of registrations against
 * readers of their keys.
 *
 * Every MR is made through the real entry points (ib_alloc_mr(),
 * ib_alloc_mr_integrity(), ib_reg_user_mr(), the DM ops, kernel PDs' DMA
 * MRs), registered through the engine hook the work-request executor
 * uses, and then read and written through the one copy path; every byte
 * is compared with the memory behind it. The fixture is
 * shca_kunit_mr_fix() (shca_kunit_util.c); the translation matrix is in
 * shca_xlat_kunit.c, the refused inputs in shca_mem_kunit.c.
 */

#include <linux/delay.h>
#include <linux/dma-mapping.h>
#include <linux/kthread.h>
#include <linux/scatterlist.h>
#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

struct shca_dereg_ctx {
	struct ib_mr *mr;
	struct completion done;
};

static int shca_dereg_thread(void *p)
{
	struct shca_dereg_ctx *ctx = p;

	ib_dereg_mr(ctx->mr);
	complete(&ctx->done);
	return 0;
}

/*
 * Pass: dereg of an MR a lookup still holds waits for that reference;
 * the key is gone for new lookups at once.
 */
static void shca_mr_lifetime_dereg_waits(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct shca_dereg_ctx *ctx;
	struct task_struct *task;
	struct shca_mr *held;
	u32 key;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	init_completion(&ctx->done);
	ctx->mr = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ctx->mr));
	key = ctx->mr->rkey;

	held = shca_mr_get(f->sdev, key);
	KUNIT_ASSERT_PTR_EQ(test, held, to_shca_mr(ctx->mr));

	task = kthread_run(shca_dereg_thread, ctx, "shca_dereg");
	if (IS_ERR(task)) {
		shca_mr_put(held);
		ib_dereg_mr(ctx->mr);
		KUNIT_FAIL(test, "kthread_run: %ld", PTR_ERR(task));
		return;
	}
	/* Unpublished at once, freed only after our reference is gone. */
	msleep(100);
	KUNIT_EXPECT_NULL(test, shca_mr_get(f->sdev, key));
	KUNIT_EXPECT_FALSE(test, completion_done(&ctx->done));
	shca_mr_put(held);
	KUNIT_EXPECT_GT(test, wait_for_completion_timeout(&ctx->done, 10 * HZ),
			0);
}

/*
 * Pass: 256 key rotations come back to the start, each registration is
 * reachable only by its own key.
 */
static void shca_mr_lifetime_key_rotation(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *buf = shca_kunit_block(test, PAGE_SIZE), b;
	struct shca_mem_target t;
	struct scatterlist sg;
	struct ib_mr *mr;
	u32 first, prev;
	int i;

	sg_init_one(&sg, buf, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sg, 1,
					    DMA_BIDIRECTIONAL), 1);
	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sg, 1, NULL, PAGE_SIZE), 1);
	first = mr->rkey;
	for (i = 0; i < 256; i++) {
		prev = mr->rkey;
		KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, 0), 0);
		KUNIT_ASSERT_NE(test, mr->rkey, prev);
		KUNIT_ASSERT_EQ(test, mr->rkey >> 8, first >> 8);
		t = shca_kunit_target(f->pd, mr->rkey, mr->iova, 0);
		KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &b, 1,
						   SHCA_COPY_FROM_MR), 0);
		t.key = prev;
		KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &b, 1,
						   SHCA_COPY_FROM_MR), -ENOKEY);
		KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0,
							 mr->rkey), 0);
	}
	KUNIT_EXPECT_EQ(test, mr->rkey, first);
}

/*
 * Pass: a re-registration without a new map keeps the translation in
 * force; a map while VALID does not disturb it until the next
 * registration installs the new one.
 */
static void shca_mr_lifetime_remap(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	u8 *a = shca_kunit_block(test, PAGE_SIZE), *b = shca_kunit_block(test, PAGE_SIZE);
	struct shca_mem_target t;
	struct scatterlist sa, sb;
	struct ib_mr *mr;
	u8 out;

	memset(a, 0xaa, PAGE_SIZE);
	memset(b, 0xbb, PAGE_SIZE);
	sg_init_one(&sa, a, PAGE_SIZE);
	sg_init_one(&sb, b, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sa, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sb, 1,
					    DMA_BIDIRECTIONAL), 1);
	mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 1));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sa, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, 0), 0);

	/* iSER order: map b while the registration of a is in force. */
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(mr, &sb, 1, NULL, PAGE_SIZE), 1);
	t = shca_kunit_target(f->pd, to_shca_mr(mr)->key,
			      (uintptr_t)a, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &out, 1,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, out, 0xaa);

	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0,
						 to_shca_mr(mr)->key), 0);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, 0), 0);
	t = shca_kunit_target(f->pd, mr->rkey, (uintptr_t)b, 0);
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &out, 1,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, out, 0xbb);

	/* Again without mapping: still b. */
	KUNIT_ASSERT_EQ(test, shca_mr_invalidate(f->sdev, f->pd, 0, mr->rkey), 0);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(mr, 0), 0);
	t.key = mr->rkey;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(f->sdev, &t, &out, 1,
					   SHCA_COPY_FROM_MR), 0);
	KUNIT_EXPECT_EQ(test, out, 0xbb);
}

/* What the stub does to a fast-reg MR between two chunks of a transfer. */
struct shca_inflight {
	struct shca_mr_fix *f;
	struct ib_mr *mr;
	struct scatterlist *remap;	/* mapped and registered */
	struct scatterlist *spare;	/* mapped, never registered */
	int steps;
	int err;
};

static struct shca_inflight *shca_inflight_ctx;

/*
 * After the first chunk: invalidate the MR, map and register another
 * buffer, invalidate again and map a third buffer without registering
 * it - which rebuilds the very list the transfer was resolved with.
 */
static void shca_inflight_stub(struct shca_mr *smr)
{
	struct shca_inflight *c = shca_inflight_ctx;
	struct shca_mr_fix *f = c->f;
	int err;

	if (smr != to_shca_mr(c->mr) || c->steps++)
		return;
	err = shca_mr_invalidate(f->sdev, f->pd, 0, c->mr->rkey);
	if (!err && ib_map_mr_sg(c->mr, c->remap, 1, NULL, PAGE_SIZE) != 1)
		err = -EIO;
	if (!err)
		err = shca_kunit_reg(c->mr, SHCA_RW);
	if (!err)
		err = shca_mr_invalidate(f->sdev, f->pd, 0, c->mr->rkey);
	if (!err && ib_map_mr_sg(c->mr, c->spare, 1, NULL, PAGE_SIZE) != 1)
		err = -EIO;
	c->err = err;
}

/*
 * Pass: a transfer through a fast-reg MR that is invalidated, remapped
 * and re-registered while its bytes move stops at the next chunk with
 * EKEYREVOKED: after the invalidation no byte reaches the old buffer,
 * and none ever reaches a buffer mapped (but not registered) meanwhile,
 * whether the transfer comes from a kernel buffer, a DMA MR or another
 * fast-reg MR.
 */
static void shca_mr_lifetime_inflight(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	const size_t len = 8 * PAGE_SIZE;
	struct scatterlist sa, sr, ss, so;
	struct shca_mem_target t, src;
	struct shca_inflight *c;
	u8 *a, *r, *sp, *in;
	struct ib_mr *other;
	int pass;

	a = shca_kunit_block(test, len);
	r = shca_kunit_block(test, len);
	sp = shca_kunit_block(test, len);
	in = shca_kunit_block(test, len);
	c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	memset(in, 0x6b, len);
	sg_init_one(&sa, a, len);
	sg_init_one(&sr, r, len);
	sg_init_one(&ss, sp, len);
	sg_init_one(&so, in, len);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sa, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &sr, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &ss, 1,
					    DMA_BIDIRECTIONAL), 1);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &so, 1,
					    DMA_BIDIRECTIONAL), 1);
	other = shca_kunit_track_mr(test, ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 8));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg(other, &so, 1, NULL, PAGE_SIZE), 1);
	KUNIT_ASSERT_EQ(test, shca_kunit_reg(other, SHCA_RW), 0);

	c->f = f;
	c->remap = &sr;
	c->spare = &ss;
	shca_inflight_ctx = c;
	kunit_activate_static_stub(test, shca_mr_copy_chunk_done,
				   shca_inflight_stub);

	for (pass = 0; pass < 3; pass++) {
		bool dst_failed;
		int err;

		memset(a, 0, len);
		memset(r, 0, len);
		memset(sp, 0, len);
		c->mr = shca_kunit_track_mr(test, ib_alloc_mr(f->pd,
							      IB_MR_TYPE_MEM_REG, 8));
		c->steps = 0;
		c->err = 0;
		KUNIT_ASSERT_EQ(test, ib_map_mr_sg(c->mr, &sa, 1, NULL,
						   PAGE_SIZE), 1);
		KUNIT_ASSERT_EQ(test, shca_kunit_reg(c->mr, SHCA_RW), 0);
		t = shca_kunit_target(f->pd, c->mr->rkey, c->mr->iova,
				      IB_ACCESS_REMOTE_WRITE);
		if (pass == 0) {
			err = shca_mr_copy(f->sdev, &t, in, len,
					   SHCA_COPY_TO_MR);
		} else {
			src = pass == 1 ?
			      shca_kunit_target(f->pd, f->pd->local_dma_lkey,
						(uintptr_t)in, 0) :
			      shca_kunit_target(f->pd, other->rkey, other->iova, 0);
			err = shca_mr_copy_xdev(f->sdev, &t, f->sdev, &src,
						len, &dst_failed);
			/* The destination's registration changed. */
			KUNIT_EXPECT_TRUE(test, dst_failed);
		}
		KUNIT_EXPECT_EQ_MSG(test, err, -EKEYREVOKED, "pass %d", pass);
		KUNIT_EXPECT_EQ(test, c->steps, 1);
		KUNIT_EXPECT_EQ(test, c->err, 0);
		/* The first chunk moved, before the invalidation. */
		KUNIT_EXPECT_TRUE(test, !memchr_inv(a, 0x6b, PAGE_SIZE));
		KUNIT_EXPECT_TRUE_MSG(test, !memchr_inv(a + len / 2, 0,
							len / 2),
				      "pass %d: bytes after the invalidation",
				      pass);
		KUNIT_EXPECT_TRUE(test, !memchr_inv(r, 0, len));
		KUNIT_EXPECT_TRUE_MSG(test, !memchr_inv(sp, 0, len),
				      "pass %d: bytes in an unregistered map",
				      pass);
		shca_kunit_untrack_dereg(test, c->mr);
	}
	kunit_deactivate_static_stub(test, shca_mr_copy_chunk_done);
}

/*
 * Pass: thousands of alloc/dereg cycles of every kernel-allocatable type
 * leave exactly the objects that were there before; keys are not
 * predictable from one MR to the next.
 */
static void shca_mr_lifetime_cycles(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	static const enum ib_mr_type types[] = { IB_MR_TYPE_MEM_REG,
						 IB_MR_TYPE_SG_GAPS };
	u32 before = shca_kunit_count_mrs(f->sdev), key_bytes_same = 0;
	u32 prev_byte = 0;
	int i;

	for (i = 0; i < 3000; i++) {
		struct ib_mr *mr;

		if (i % 3 == 2)
			mr = ib_alloc_mr_integrity(f->pd, 8, 2);
		else
			mr = ib_alloc_mr(f->pd, types[i % 3], 8);
		KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
		if (i && (mr->rkey & 0xff) == prev_byte)
			key_bytes_same++;
		prev_byte = mr->rkey & 0xff;
		KUNIT_ASSERT_EQ(test, ib_dereg_mr(mr), 0);
	}
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev), before);
	/* Random key bytes: about 3000/256 repeats expected, not 2999. */
	KUNIT_EXPECT_LT(test, key_bytes_same, 100);
}

/* Concurrency stress: registrations churn while readers use their keys. */
#define SHCA_STRESS_SLOTS	16
#define SHCA_STRESS_WRITERS	2
#define SHCA_STRESS_READERS	2

struct shca_stress {
	struct shca_mr_fix *f;
	struct scatterlist sg;
	u8 *buf;
	atomic_t keys[SHCA_STRESS_SLOTS];
	atomic_t stop;
	atomic_t bad_errno;
	atomic_long_t copies_ok;
	atomic_long_t copies_refused;
	atomic_long_t cycles;
	struct completion done[SHCA_STRESS_WRITERS + SHCA_STRESS_READERS];
};

struct shca_stress_arg {
	struct shca_stress *st;
	int id;
};

static int shca_stress_writer(void *p)
{
	struct shca_stress_arg *a = p;
	struct shca_stress *st = a->st;
	unsigned int slot = a->id;

	while (!atomic_read(&st->stop)) {
		struct ib_mr *mr = ib_alloc_mr(st->f->pd, IB_MR_TYPE_MEM_REG, 1);

		if (IS_ERR(mr)) {
			atomic_set(&st->bad_errno, PTR_ERR(mr));
			break;
		}
		if (ib_map_mr_sg(mr, &st->sg, 1, NULL, PAGE_SIZE) != 1 ||
		    shca_kunit_reg(mr, SHCA_RW)) {
			atomic_set(&st->bad_errno, -EIO);
			ib_dereg_mr(mr);
			break;
		}
		atomic_set(&st->keys[slot], mr->rkey);
		cond_resched();
		shca_mr_invalidate(st->f->sdev, st->f->pd, 0, mr->rkey);
		if (!shca_kunit_reg(mr, SHCA_RW))
			atomic_set(&st->keys[(slot + 1) % SHCA_STRESS_SLOTS],
				   mr->rkey);
		cond_resched();
		/* The slots keep the keys: readers now hit stale ones. */
		ib_dereg_mr(mr);
		atomic_long_inc(&st->cycles);
		slot = (slot + SHCA_STRESS_WRITERS) % SHCA_STRESS_SLOTS;
	}
	complete(&st->done[a->id]);
	return 0;
}

static int shca_stress_reader(void *p)
{
	struct shca_stress_arg *a = p;
	struct shca_stress *st = a->st;
	u8 data[64];
	u32 i = a->id;

	memset(data, a->id, sizeof(data));
	while (!atomic_read(&st->stop)) {
		u32 key = atomic_read(&st->keys[i++ % SHCA_STRESS_SLOTS]);
		struct shca_mem_target t = shca_kunit_target(st->f->pd, key,
						       (uintptr_t)st->buf,
						       IB_ACCESS_REMOTE_WRITE);
		int err = shca_mr_copy(st->f->sdev, &t, data, sizeof(data),
				       SHCA_COPY_TO_MR);

		if (!err)
			atomic_long_inc(&st->copies_ok);
		else if (err == -ENOKEY || err == -EKEYREVOKED)
			atomic_long_inc(&st->copies_refused);
		else
			atomic_set(&st->bad_errno, err);
		if (!(i % 64))
			cond_resched();
	}
	complete(&st->done[a->id]);
	return 0;
}

/*
 * Pass: for two seconds, writers allocate, register, invalidate,
 * re-register and deregister MRs while readers copy through the keys
 * they published (live, invalidated, stale and freed): every copy
 * succeeds or is refused as ENOKEY/EKEYREVOKED, nothing else, and no MR
 * is left behind. Run under KASAN and lockdep by the debug kunitconfig.
 */
static void shca_mr_lifetime_stress(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	const int n = SHCA_STRESS_WRITERS + SHCA_STRESS_READERS;
	struct shca_stress_arg *args;
	u32 before = shca_kunit_count_mrs(f->sdev);
	struct shca_stress *st;
	int i, started = 0;

	st = kunit_kzalloc(test, sizeof(*st), GFP_KERNEL);
	args = kunit_kcalloc(test, n, sizeof(*args), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, st);
	KUNIT_ASSERT_NOT_NULL(test, args);
	st->f = f;
	st->buf = shca_kunit_block(test, PAGE_SIZE);
	sg_init_one(&st->sg, st->buf, PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, &st->sg, 1,
					    DMA_BIDIRECTIONAL), 1);

	for (i = 0; i < n; i++) {
		struct task_struct *task;

		init_completion(&st->done[i]);
		args[i].st = st;
		args[i].id = i;
		task = kthread_run(i < SHCA_STRESS_WRITERS ?
				   shca_stress_writer : shca_stress_reader,
				   &args[i], "shca_stress%d", i);
		if (IS_ERR(task))
			break;
		started++;
	}
	if (started == n)
		msleep(2000);
	atomic_set(&st->stop, 1);
	for (i = 0; i < started; i++)
		wait_for_completion(&st->done[i]);
	KUNIT_ASSERT_EQ(test, started, n);

	kunit_info(test, "%ld register cycles, %ld copies done, %ld refused",
		   atomic_long_read(&st->cycles),
		   atomic_long_read(&st->copies_ok),
		   atomic_long_read(&st->copies_refused));
	KUNIT_EXPECT_EQ(test, atomic_read(&st->bad_errno), 0);
	KUNIT_EXPECT_GT(test, atomic_long_read(&st->cycles), 0);
	KUNIT_EXPECT_EQ(test, shca_kunit_count_mrs(f->sdev), before);
}

/*
 * Key indices are a permutation of the key table's slots: every slot has
 * its own index in [1, SHCA_MAX_MR], every key finds the slot back, an
 * index out of range finds none, and consecutive slots (what cyclic
 * allocation hands out) do not give neighbouring indices.
 */
static void shca_mr_key_permutation(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	unsigned long *seen;
	u32 slot, index, prev = 0, adjacent = 0;

	seen = kunit_kcalloc(test, BITS_TO_LONGS(SHCA_MAX_MR + 1),
			     sizeof(long), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, seen);
	for (slot = 1; slot <= SHCA_MAX_MR; slot++) {
		index = shca_mr_slot_to_index(f->sdev, slot);
		KUNIT_ASSERT_TRUE(test, index >= 1 && index <= SHCA_MAX_MR);
		KUNIT_ASSERT_FALSE_MSG(test, test_and_set_bit(index, seen),
				       "index %u twice", index);
		KUNIT_ASSERT_EQ(test, shca_mr_key_slot(f->sdev,
						       index << 8 | (slot & 0xff)),
				slot);
		if (prev && (index == prev + 1 || index + 1 == prev))
			adjacent++;
		prev = index;
	}
	KUNIT_EXPECT_EQ(test, shca_mr_key_slot(f->sdev, 0xff), 0);
	KUNIT_EXPECT_EQ(test, shca_mr_key_slot(f->sdev, (SHCA_MAX_MR + 1) << 8),
			0);
	KUNIT_EXPECT_EQ(test, shca_mr_key_slot(f->sdev, U32_MAX), 0);
	KUNIT_EXPECT_LT_MSG(test, adjacent, SHCA_MAX_MR / 100,
			    "%u consecutive slots with neighbouring indices",
			    adjacent);
}

/*
 * Pass: a lookup takes a reference only to a published MR that still sits
 * in the slot it searched, of its device: the memory of a freed MR may
 * hold another MR by the time the lookup tries its refcount
 * (SLAB_TYPESAFE_BY_RCU), or one not yet published (refcount 0). A
 * refused try leaves the refcount as it found it.
 */
static void shca_mr_lifetime_stale_lookup(struct kunit *test)
{
	struct shca_mr_fix *f = test->priv;
	struct shca_dev *other;
	struct shca_mr *b, *fake;
	struct ib_mr *ma, *mb;
	u32 slot_a, slot_b;

	ma = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 4);
	KUNIT_ASSERT_FALSE(test, IS_ERR(ma));
	mb = ib_alloc_mr(f->pd, IB_MR_TYPE_MEM_REG, 4);
	if (IS_ERR(mb)) {
		ib_dereg_mr(ma);
		KUNIT_FAIL(test, "ib_alloc_mr: %ld", PTR_ERR(mb));
		return;
	}
	b = to_shca_mr(mb);
	slot_a = shca_mr_key_slot(f->sdev, ma->rkey);
	slot_b = shca_mr_key_slot(f->sdev, mb->rkey);
	KUNIT_EXPECT_NE(test, slot_a, slot_b);

	rcu_read_lock();
	/* The MR its slot holds: found, with a reference. */
	KUNIT_EXPECT_PTR_EQ(test, shca_mr_try_get(f->sdev, mb->rkey, b), b);
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 2);
	shca_mr_put(b);
	/* A's lookup that found A's memory holding B now: refused. */
	KUNIT_EXPECT_NULL(test, shca_mr_try_get(f->sdev, ma->rkey, b));
	KUNIT_EXPECT_EQ(test, refcount_read(&b->ref), 1);
	rcu_read_unlock();

	fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	other = kunit_kzalloc(test, sizeof(*other), GFP_KERNEL);
	if (!fake || !other)
		goto out;
	fake->sdev = f->sdev;
	fake->key = ma->rkey;
	init_completion(&fake->released);
	rcu_read_lock();
	/* Refcount 0: free, or being built in that slot; not raised. */
	KUNIT_EXPECT_NULL(test, shca_mr_try_get(f->sdev, ma->rkey, fake));
	KUNIT_EXPECT_EQ(test, refcount_read(&fake->ref), 0);
	/* Published, with A's key, but an MR of another device. */
	refcount_set(&fake->ref, 1);
	fake->sdev = other;
	KUNIT_EXPECT_NULL(test, shca_mr_try_get(f->sdev, ma->rkey, fake));
	KUNIT_EXPECT_EQ(test, refcount_read(&fake->ref), 1);
	rcu_read_unlock();
out:
	/* The real lookups are untouched by all this. */
	KUNIT_EXPECT_PTR_EQ(test, shca_mr_get(f->sdev, ma->rkey), to_shca_mr(ma));
	shca_mr_put(to_shca_mr(ma));
	ib_dereg_mr(mb);
	ib_dereg_mr(ma);
	KUNIT_EXPECT_TRUE(test, fake && other);
}

static struct kunit_case shca_mr_lifetime_cases[] = {
	KUNIT_CASE(shca_mr_key_permutation),
	KUNIT_CASE(shca_mr_lifetime_stale_lookup),
	KUNIT_CASE(shca_mr_lifetime_dereg_waits),
	KUNIT_CASE(shca_mr_lifetime_key_rotation),
	KUNIT_CASE(shca_mr_lifetime_remap),
	KUNIT_CASE(shca_mr_lifetime_inflight),
	KUNIT_CASE_SLOW(shca_mr_lifetime_cycles),
	KUNIT_CASE_SLOW(shca_mr_lifetime_stress),
	{}
};

static struct kunit_suite shca_mr_lifetime_suite = {
	.name = "shca_mr_lifetime",
	.init = shca_kunit_mr_init,
	.test_cases = shca_mr_lifetime_cases,
};

kunit_test_suites(&shca_mr_lifetime_suite);
