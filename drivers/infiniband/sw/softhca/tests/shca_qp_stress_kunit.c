// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_stress: a thread posts RDMA WRITEs through a
 * peer's key while the key's owner invalidates and re-registers it.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <linux/delay.h>
#include <linux/kthread.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

struct shca_qt_stress {
	struct shca_qt_fix *f;
	struct ib_cq *cq;	/* a's completions, polled by the poster */
	atomic_t stop;
	u32 rkey;		/* current rkey of b's MR, or 0 */
	spinlock_t lock;	/* protects rkey */
	u64 posted, ok, access_err, flushed, other, rereg, resets;
};

/* Post RDMA WRITEs on b's current key; reconnect after errors. */
static int shca_qt_stress_poster(void *arg)
{
	struct shca_qt_stress *s = arg;
	struct shca_qt_fix *f = s->f;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 4096);
	u64 outstanding = 0;
	bool broken = false;
	struct ib_wc wc;

	while (!atomic_read(&s->stop) || outstanding) {
		struct ib_rdma_wr wr = {
			.wr = { .opcode = IB_WR_RDMA_WRITE,
				.send_flags = IB_SEND_SIGNALED,
				.sg_list = &sge, .num_sge = 1 },
		};
		if (!broken && !atomic_read(&s->stop) && outstanding < 16) {
			spin_lock(&s->lock);
			wr.rkey = s->rkey;
			spin_unlock(&s->lock);
			wr.remote_addr = f->b.mr->iova +
					 (s->posted % 8) * 4096;
			if (!shca_qt_post(&f->a, &wr.wr)) {
				s->posted++;
				outstanding++;
			}
		}
		while (ib_poll_cq(f->a.cq, 1, &wc) == 1) {
			outstanding--;
			if (wc.status == IB_WC_SUCCESS)
				s->ok++;
			else if (wc.status == IB_WC_REM_ACCESS_ERR)
				s->access_err++;
			else if (wc.status == IB_WC_WR_FLUSH_ERR)
				s->flushed++;
			else
				s->other++;
			broken |= wc.status != IB_WC_SUCCESS;
		}
		if (broken && !outstanding) {
			struct ib_qp_attr attr = { .qp_state = IB_QPS_RESET };

			/* Reconnect both ends from RESET. */
			ib_modify_qp(f->a.qp, &attr, IB_QP_STATE);
			ib_modify_qp(f->b.qp, &attr, IB_QP_STATE);
			if (shca_qt_to_init(f->a.qp) ||
			    shca_qt_to_init(f->b.qp) ||
			    shca_qt_to_rts(f->a.qp, f->b.ibdev,
					   f->b.qp->qp_num,
					   &shca_qt_default_conn) ||
			    shca_qt_to_rts(f->b.qp, f->a.ibdev,
					   f->a.qp->qp_num,
					   &shca_qt_default_conn))
				s->other++;
			s->resets++;
			broken = false;
		}
		cond_resched();
	}
	return 0;
}

/*
 * Posters write through b's key while b's owner keeps invalidating and
 * re-registering it (through the engine, as its own REG_MR/LOCAL_INV
 * would): every WRITE completes exactly once, as success, REM_ACCESS_ERR
 * or a flush, and the counts add up. KASAN and lockdep watch in the
 * sanitizer tier.
 */
static void shca_qp_stress_rereg(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct shca_dev *sdev = to_shca_dev(f->b.ibdev);
	struct shca_qt_stress *s;
	struct task_struct *t;
	unsigned long end;

	s = kunit_kzalloc(test, sizeof(*s), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, s);
	s->f = f;
	spin_lock_init(&s->lock);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	s->rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);

	t = kthread_run(shca_qt_stress_poster, s, "shca_qt_poster");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	get_task_struct(t);

	end = jiffies + 2 * HZ;
	while (time_before(jiffies, end)) {
		u32 key;

		spin_lock(&s->lock);
		key = s->rkey;
		spin_unlock(&s->lock);
		KUNIT_EXPECT_EQ(test, shca_mr_invalidate(sdev, f->b.pd, 0, key),
				0);
		ib_update_fast_reg_key(f->b.mr, ib_inc_rkey(f->b.mr->rkey));
		KUNIT_EXPECT_EQ(test, shca_mr_fast_reg(to_shca_mr(f->b.mr),
						       f->b.mr->rkey,
						       SHCA_QT_RW), 0);
		spin_lock(&s->lock);
		s->rkey = f->b.mr->rkey;
		spin_unlock(&s->lock);
		s->rereg++;
		usleep_range(100, 300);
	}
	atomic_set(&s->stop, 1);
	kthread_stop(t);
	put_task_struct(t);

	kunit_info(test,
		   "2 s: %llu re-registrations, %llu WRITEs posted: %llu ok, %llu REM_ACCESS_ERR, %llu flushed, %llu reconnects",
		   s->rereg, s->posted, s->ok, s->access_err, s->flushed,
		   s->resets);
	KUNIT_EXPECT_EQ(test, s->other, 0);
	KUNIT_EXPECT_EQ(test, s->posted,
			s->ok + s->access_err + s->flushed);
	KUNIT_EXPECT_GT(test, s->ok, 0);
	KUNIT_EXPECT_GT(test, s->rereg, 0);
}

static struct kunit_case shca_qp_stress_cases[] = {
	KUNIT_CASE_SLOW(shca_qp_stress_rereg),
	{}
};

static struct kunit_suite shca_qp_stress_suite = {
	.name = "shca_qp_stress",
	.init = shca_qt_init_two,
	.test_cases = shca_qp_stress_cases,
};

kunit_test_suites(&shca_qp_stress_suite);
