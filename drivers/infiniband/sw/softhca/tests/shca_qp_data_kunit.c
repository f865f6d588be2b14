// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite shca_qp_data: every opcode, once between two QPs of one
 * device and once across two devices, over the memory link and over the
 * UDP link: SENDs gathering and scattering, immediate data, inline data,
 * REG_MR work requests, RDMA WRITE and READ through fast-reg MRs,
 * atomics, SEND_WITH_INV and LOCAL_INV; every byte compared.
 *
 * Driven through the kernel verbs a ULP uses; the fixture (ends a and
 * b, connections, completions) is shca_kunit_qp.c.
 */

#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit_qp.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/* SEND gathers 3 SGEs into a receive of 2; immediate data; inline. */
static void shca_qp_send(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge src[3] = {
		shca_qt_sge(&f->a, 100, 10),
		shca_qt_sge(&f->a, 5000, 0),
		shca_qt_sge(&f->a, 9000, 300),
	};
	struct ib_sge dst[2] = {
		shca_qt_sge(&f->b, 64, 200),
		shca_qt_sge(&f->b, 8192, 1000),
	};
	struct ib_send_wr wr = { .wr_id = 11, .opcode = IB_WR_SEND,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = src, .num_sge = 3 };
	struct ib_wc wc;

	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 1);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 21, dst, 2), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);

	shca_qt_expect_wc(test, f->a.cq, 11, IB_WC_SUCCESS, IB_WC_SEND, &wc);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->a.qp);
	shca_qt_expect_wc(test, f->b.cq, 21, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 310);
	KUNIT_EXPECT_EQ(test, wc.src_qp, f->a.qp->qp_num);
	KUNIT_EXPECT_PTR_EQ(test, wc.qp, f->b.qp);
	KUNIT_EXPECT_EQ(test, wc.wc_flags & IB_WC_WITH_IMM, 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 64, f->a.buf + 100, 10), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 74, f->a.buf + 9000, 190), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 8192, f->a.buf + 9190, 110),
			0);
	/* Nothing outside the scattered ranges. */
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 64, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 264, 8192 - 264, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 8302, 100, 0));

	/* SEND_WITH_IMM, unsignaled: only the receiver sees it. */
	wr.wr_id = 12;
	wr.opcode = IB_WR_SEND_WITH_IMM;
	wr.ex.imm_data = cpu_to_be32(0x12345678);
	wr.send_flags = 0;
	wr.num_sge = 1;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 22, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 22, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 10);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_IMM);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 0x12345678);
	shca_qt_expect_empty(test, f->a.cq);

	/* Inline: the source may change right after posting. */
	memset(f->a.buf, 0xab, 64);
	wr.wr_id = 13;
	wr.opcode = IB_WR_SEND;
	wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	src[0] = shca_qt_sge(&f->a, 0, 64);
	src[0].lkey = 0xdeadbeef;	/* inline data needs no key */
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 23, dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	memset(f->a.buf, 0x11, 64);
	shca_qt_expect_wc(test, f->b.cq, 23, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 64);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 64, 64, 0xab));
	shca_qt_expect_wc(test, f->a.cq, 13, IB_WC_SUCCESS, IB_WC_SEND, NULL);

	/* More inline data than granted is refused at post. */
	src[0].length = 65;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr), -EINVAL);
}

/* RDMA WRITE, WRITE_WITH_IMM and READ through a fast-reg MR. */
static void shca_qp_rdma(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 4096, 5000);
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 31, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
	};
	struct ib_sge rsge = shca_qt_sge(&f->b, 0, 0);
	struct ib_wc wc;
	u32 rkey;

	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 3);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);

	wr.remote_addr = f->b.mr->iova + 1000;
	wr.rkey = rkey;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 31, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 1000, f->a.buf + 4096, 5000),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 1000, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 6000, 1000, 0));

	/* WRITE_WITH_IMM consumes a receive and reports the length. */
	wr.wr.wr_id = 32;
	wr.wr.opcode = IB_WR_RDMA_WRITE_WITH_IMM;
	wr.wr.ex.imm_data = cpu_to_be32(7);
	wr.remote_addr = f->b.mr->iova + 20000;
	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 42, &rsge, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 42, IB_WC_SUCCESS,
			  IB_WC_RECV_RDMA_WITH_IMM, &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 5000);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(wc.ex.imm_data), 7);
	shca_qt_expect_wc(test, f->a.cq, 32, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 20000, f->a.buf + 4096,
				     5000), 0);

	/* READ it back into another place. */
	shca_qt_fill(f->b.buf + 40000, 3000, 99);
	sge = shca_qt_sge(&f->a, 50000, 3000);
	wr.wr.wr_id = 33;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.remote_addr = f->b.mr->iova + 40000;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 33, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 3000);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 50000, f->b.buf + 40000,
				     3000), 0);
}

/*
 * RDMA WRITE and READ with scatter lists (an empty element among them)
 * and inline data: the bytes go element by element, nothing outside them
 * is touched, and a remote range the rkey does not cover fails the
 * request with nothing written.
 */
static void shca_qp_rdma_sgl(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sgl[3] = {
		shca_qt_sge(&f->a, 100, 700),
		shca_qt_sge(&f->a, 3000, 0),
		shca_qt_sge(&f->a, 8000, 1300),
	};
	struct ib_rdma_wr wr = {
		.wr = { .wr_id = 35, .opcode = IB_WR_RDMA_WRITE,
			.send_flags = IB_SEND_SIGNALED, .sg_list = sgl,
			.num_sge = 3 },
	};
	struct ib_wc wc;
	u32 rkey;

	shca_qt_fill(f->a.buf, SHCA_QT_BUF, 5);
	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);

	wr.remote_addr = f->b.mr->iova + 500;
	wr.rkey = rkey;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 35, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 500, f->a.buf + 100, 700), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 1200, f->a.buf + 8000, 1300),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, 500, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 2500, 1000, 0));

	/* READ 2000 bytes back into two other places. */
	shca_qt_fill(f->b.buf + 30000, 2000, 77);
	sgl[0] = shca_qt_sge(&f->a, 20000, 1500);
	sgl[1] = shca_qt_sge(&f->a, 40000, 500);
	wr.wr.wr_id = 36;
	wr.wr.opcode = IB_WR_RDMA_READ;
	wr.wr.num_sge = 2;
	wr.remote_addr = f->b.mr->iova + 30000;
	memset(f->a.buf + 20000, 0, 1600);
	memset(f->a.buf + 40000, 0, 600);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 36, IB_WC_SUCCESS, IB_WC_RDMA_READ,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 2000);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 20000, f->b.buf + 30000,
				     1500), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->a.buf + 40000, f->b.buf + 31500,
				     500), 0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf + 21500, 100, 0));
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->a.buf + 40500, 100, 0));

	/* Inline: the data is the WQE's, in one piece. */
	sgl[0] = shca_qt_sge(&f->a, 0, 20);
	sgl[1] = shca_qt_sge(&f->a, 1000, 40);
	sgl[0].lkey = 0xdeadbeef;	/* inline data needs no key */
	wr.wr.wr_id = 38;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.wr.send_flags = IB_SEND_INLINE | IB_SEND_SIGNALED;
	wr.remote_addr = f->b.mr->iova + 50000;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 38, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
			  NULL);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 50000, f->a.buf, 20), 0);
	KUNIT_EXPECT_EQ(test, memcmp(f->b.buf + 50020, f->a.buf + 1000, 40),
			0);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf + 50060, 100, 0));

	/*
	 * A WRITE past the end of the remote MR: refused before a byte
	 * moves, as a responder checks the whole range of a request (its
	 * RETH) first - not even the elements that fit arrive.
	 */
	sgl[0] = shca_qt_sge(&f->a, 100, 700);
	sgl[1] = shca_qt_sge(&f->a, 8000, 1300);
	wr.wr.send_flags = IB_SEND_SIGNALED;
	memset(f->b.buf, 0, SHCA_QT_BUF);
	wr.wr.wr_id = 37;
	wr.wr.opcode = IB_WR_RDMA_WRITE;
	wr.remote_addr = f->b.mr->iova + f->b.mr->length - 1000;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 37, IB_WC_REM_ACCESS_ERR,
			  IB_WC_RDMA_WRITE, NULL);
	KUNIT_EXPECT_TRUE(test, shca_qt_all(f->b.buf, SHCA_QT_BUF, 0));
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->a.qp), IB_QPS_ERR);
	KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
}

/* Atomics return the old value and store the new one. */
static void shca_qp_atomic(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 8);
	struct ib_atomic_wr wr = {
		.wr = { .wr_id = 51, .opcode = IB_WR_ATOMIC_FETCH_AND_ADD,
			.send_flags = IB_SEND_SIGNALED, .sg_list = &sge,
			.num_sge = 1 },
		.compare_add = 5,
	};
	u64 *remote = (u64 *)(f->b.buf + 64);
	u64 *local = (u64 *)f->a.buf;
	struct ib_wc wc;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	wr.rkey = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	wr.remote_addr = f->b.mr->iova + 64;
	*remote = 100;

	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 51, IB_WC_SUCCESS, IB_WC_FETCH_ADD,
			  &wc);
	KUNIT_EXPECT_EQ(test, wc.byte_len, 8);
	KUNIT_EXPECT_EQ(test, *local, 100);
	KUNIT_EXPECT_EQ(test, *remote, 105);

	/* Compare fails: nothing stored, old value returned. */
	wr.wr.wr_id = 52;
	wr.wr.opcode = IB_WR_ATOMIC_CMP_AND_SWP;
	wr.compare_add = 1;
	wr.swap = 77;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 52, IB_WC_SUCCESS, IB_WC_COMP_SWAP,
			  NULL);
	KUNIT_EXPECT_EQ(test, *local, 105);
	KUNIT_EXPECT_EQ(test, *remote, 105);

	wr.wr.wr_id = 53;
	wr.compare_add = 105;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr.wr), 0);
	shca_qt_expect_wc(test, f->a.cq, 53, IB_WC_SUCCESS, IB_WC_COMP_SWAP,
			  NULL);
	KUNIT_EXPECT_EQ(test, *local, 105);
	KUNIT_EXPECT_EQ(test, *remote, 77);

	/* An atomic needs exactly one 8-byte local SGE. */
	sge.length = 4;
	KUNIT_EXPECT_EQ(test, shca_qt_post(&f->a, &wr.wr), -EINVAL);
}

/* SEND_WITH_INV and LOCAL_INV end a registration; REG_MR renews it. */
static void shca_qp_invalidate(struct kunit *test)
{
	struct shca_qt_fix *f = test->priv;
	struct ib_sge sge = shca_qt_sge(&f->a, 0, 16);
	struct ib_sge dst = shca_qt_sge(&f->b, 0, 64);
	struct ib_send_wr wr = { .wr_id = 61, .opcode = IB_WR_SEND_WITH_INV,
				 .send_flags = IB_SEND_SIGNALED,
				 .sg_list = &sge, .num_sge = 1 };
	struct ib_send_wr inv = { .wr_id = 62, .opcode = IB_WR_LOCAL_INV,
				  .send_flags = IB_SEND_SIGNALED };
	struct shca_mem_target t = { .pd = f->b.pd,
				     .access = IB_ACCESS_REMOTE_READ };
	struct ib_wc wc;
	u8 byte;

	shca_qt_connect(test, &f->a, &f->b, &shca_qt_default_conn);
	t.key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	t.iova = f->b.mr->iova;
	wr.ex.invalidate_rkey = t.key;
	KUNIT_ASSERT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR), 0);

	KUNIT_ASSERT_EQ(test, shca_qt_post_recv(&f->b, 63, &dst, 1), 0);
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->a, &wr), 0);
	shca_qt_expect_wc(test, f->b.cq, 63, IB_WC_SUCCESS, IB_WC_RECV, &wc);
	KUNIT_EXPECT_TRUE(test, wc.wc_flags & IB_WC_WITH_INVALIDATE);
	KUNIT_EXPECT_EQ(test, wc.ex.invalidate_rkey, t.key);
	shca_qt_expect_wc(test, f->a.cq, 61, IB_WC_SUCCESS, IB_WC_SEND, NULL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR),
			-EKEYREVOKED);

	/* Register again, invalidate locally. */
	t.key = shca_qt_reg(test, &f->b, SHCA_QT_RW);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR), 0);
	inv.ex.invalidate_rkey = t.key;
	KUNIT_ASSERT_EQ(test, shca_qt_post(&f->b, &inv), 0);
	shca_qt_expect_wc(test, f->b.cq, 62, IB_WC_SUCCESS, IB_WC_LOCAL_INV,
			  NULL);
	KUNIT_EXPECT_EQ(test, shca_mr_copy(to_shca_dev(f->b.ibdev), &t, &byte,
					   1, SHCA_COPY_FROM_MR),
			-EKEYREVOKED);

	/* REG_MR of a VALID MR fails: the QP reports it and errors out. */
	shca_qt_reg(test, &f->b, SHCA_QT_RW);
	{
		struct ib_reg_wr reg = {
			.wr = { .wr_id = 64, .opcode = IB_WR_REG_MR,
				.send_flags = IB_SEND_SIGNALED },
			.mr = f->b.mr, .key = f->b.mr->rkey,
			.access = SHCA_QT_RW,
		};

		KUNIT_ASSERT_EQ(test, shca_qt_post(&f->b, &reg.wr), 0);
		shca_qt_expect_wc(test, f->b.cq, 64, IB_WC_MW_BIND_ERR, 0,
				  NULL);
		KUNIT_EXPECT_EQ(test, shca_qt_state(f->b.qp), IB_QPS_ERR);
	}
}

static struct kunit_case shca_qp_data_cases[] = {
	KUNIT_CASE_PARAM(shca_qp_send, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_rdma, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_rdma_sgl, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_atomic, shca_qt_where_gen_params),
	KUNIT_CASE_PARAM(shca_qp_invalidate, shca_qt_where_gen_params),
	{}
};

static struct kunit_suite shca_qp_data_suite = {
	.name = "shca_qp_data",
	.init = shca_qt_init,
	.test_cases = shca_qp_data_cases,
};

kunit_test_suites(&shca_qp_data_suite);
