// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_dm DEV: device memory through libibverbs: ibv_alloc_dm (zeroed,
 * alignment, limits, exhaustion), ibv_memcpy_to_dm/ibv_memcpy_from_dm
 * round trips and bounds, ibv_reg_dm_mr, ibv_free_dm against its MRs.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "vmtest.h"

static struct ibv_context *ctx;

static struct ibv_dm *alloc_dm(size_t length, uint32_t log_align)
{
	struct ibv_alloc_dm_attr attr = {
		.length = length,
		.log_align_req = log_align,
	};

	errno = 0;
	return ibv_alloc_dm(ctx, &attr);
}

static void test_round_trip(void)
{
	unsigned char in[4096], out[4096], expect[4096];
	struct ibv_dm *dm;
	size_t i;
	int ret;

	vt_info("---- copy round trips ----");
	dm = alloc_dm(sizeof(in), 0);
	if (!vt_check(dm != NULL, "alloc_dm 4096: %s", dm ? "ok" : vt_errname(errno)))
		return;

	memset(out, 0xff, sizeof(out));
	ret = ibv_memcpy_from_dm(out, dm, 0, sizeof(out));
	vt_check(ret == 0 && vt_all_bytes(out, sizeof(out), 0),
		 "a new DM reads back as zeroes (ret %d)", ret);

	for (i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7 + 3);
	ret = ibv_memcpy_to_dm(dm, 0, in, sizeof(in));
	vt_check(ret == 0, "memcpy_to_dm 4096 bytes: %s", vt_errname(ret));
	memset(out, 0, sizeof(out));
	ret = ibv_memcpy_from_dm(out, dm, 0, sizeof(out));
	vt_check(ret == 0 && !memcmp(in, out, sizeof(in)),
		 "memcpy_from_dm returns what was written (ret %d)", ret);

	memcpy(expect, in, sizeof(in));
	memset(expect + 100, 0xab, 200);
	memset(in, 0xab, 200);
	ret = ibv_memcpy_to_dm(dm, 100, in, 200);
	vt_check(ret == 0, "memcpy_to_dm at offset 100, 200 bytes: %s", vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 0, sizeof(out));
	vt_check(ret == 0 && !memcmp(expect, out, sizeof(out)),
		 "only bytes 100..299 changed");
	ret = ibv_memcpy_from_dm(out, dm, 4092, 4);
	vt_check(ret == 0 && !memcmp(out, expect + 4092, 4),
		 "last word alone: %s", vt_errname(ret));

	vt_info("---- 32-bit granularity (as mlx5) ----");
	memset(out, 0x5a, sizeof(out));
	ret = ibv_memcpy_to_dm(dm, 2, out, 4);
	vt_check(ret == EINVAL, "memcpy_to_dm at offset 2: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_to_dm(dm, 0, out, 3);
	vt_check(ret == EINVAL, "memcpy_to_dm of 3 bytes: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 4095, 1);
	vt_check(ret == EINVAL, "memcpy_from_dm of the last byte alone: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 4, 6);
	vt_check(ret == EINVAL, "memcpy_from_dm of 6 bytes: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 0, sizeof(out));
	vt_check(ret == 0 && !memcmp(expect, out, sizeof(out)),
		 "unaligned copies changed nothing");

	vt_info("---- bounds ----");
	ret = ibv_memcpy_to_dm(dm, 4000, in, 100);
	vt_check(ret == EINVAL, "memcpy_to_dm offset 4000 + 100 > 4096: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 4000, 100);
	vt_check(ret == EINVAL, "memcpy_from_dm offset 4000 + 100 > 4096: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 4096, 4);
	vt_check(ret == EINVAL, "memcpy_from_dm at offset 4096: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_to_dm(dm, UINT64_MAX - 3, in, 4);
	vt_check(ret == EINVAL, "memcpy_to_dm offset 2^64-4 (wraps): %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 8, SIZE_MAX & ~(size_t)3);
	vt_check(ret == EINVAL, "memcpy_from_dm length SIZE_MAX: %s (expected EINVAL)",
		 vt_errname(ret));
	ret = ibv_memcpy_to_dm(dm, 4096, in, 0);
	vt_check(ret == 0, "zero bytes at the very end: %s", vt_errname(ret));
	ret = ibv_memcpy_from_dm(out, dm, 0, sizeof(out));
	vt_check(ret == 0 && !memcmp(expect, out, sizeof(out)),
		 "refused copies changed nothing");

	ret = ibv_free_dm(dm);
	vt_check(ret == 0, "free_dm: %s", vt_errname(ret));

	/* A length that is not a page multiple: bounds are the length asked for. */
	dm = alloc_dm(100, 0);
	if (vt_check(dm != NULL, "alloc_dm 100 bytes: %s", dm ? "ok" : vt_errname(errno))) {
		ret = ibv_memcpy_to_dm(dm, 0, in, 100);
		vt_check(ret == 0, "memcpy_to_dm 100 bytes: %s", vt_errname(ret));
		ret = ibv_memcpy_to_dm(dm, 0, in, 104);
		vt_check(ret == EINVAL, "memcpy_to_dm 104 bytes: %s (expected EINVAL)",
			 vt_errname(ret));
		ret = ibv_memcpy_from_dm(out, dm, 52, 52);
		vt_check(ret == EINVAL, "memcpy_from_dm 52 + 52: %s (expected EINVAL)",
			 vt_errname(ret));
		vt_check(ibv_free_dm(dm) == 0, "free_dm");
	}
}

static void test_two_dms(void)
{
	unsigned char a[512], b[512], out[512];
	struct ibv_dm *dm1, *dm2;

	vt_info("---- independent allocations ----");
	dm1 = alloc_dm(sizeof(a), 12);
	dm2 = alloc_dm(sizeof(b), 0);
	if (!vt_check(dm1 && dm2, "two DMs (one 4 KiB aligned): %s",
		      dm1 && dm2 ? "ok" : vt_errname(errno)))
		goto out;
	memset(a, 0x11, sizeof(a));
	memset(b, 0x22, sizeof(b));
	vt_check(!ibv_memcpy_to_dm(dm1, 0, a, sizeof(a)) &&
		 !ibv_memcpy_to_dm(dm2, 0, b, sizeof(b)), "write both");
	vt_check(!ibv_memcpy_from_dm(out, dm1, 0, sizeof(out)) &&
		 vt_all_bytes(out, sizeof(out), 0x11), "the first holds its own data");
	vt_check(!ibv_memcpy_from_dm(out, dm2, 0, sizeof(out)) &&
		 vt_all_bytes(out, sizeof(out), 0x22), "the second holds its own data");
	vt_check(dm1->handle != dm2->handle, "distinct handles (%u, %u)",
		 dm1->handle, dm2->handle);
out:
	if (dm1)
		vt_check(ibv_free_dm(dm1) == 0, "free_dm first");
	if (dm2)
		vt_check(ibv_free_dm(dm2) == 0, "free_dm second");
}

static void test_dm_mr(struct ibv_pd *pd)
{
	const unsigned int zb = IBV_ACCESS_ZERO_BASED;
	struct ibv_mr *mr, *mr2, *mr0;
	struct ibv_dm *dm;
	int ret;

	vt_info("---- ibv_reg_dm_mr ----");
	dm = alloc_dm(8192, 0);
	if (!vt_check(dm != NULL, "alloc_dm 8192: %s", dm ? "ok" : vt_errname(errno)))
		return;

	mr = ibv_reg_dm_mr(pd, dm, 0, 8192, zb | IBV_ACCESS_LOCAL_WRITE |
			   IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (vt_check(mr != NULL, "reg_dm_mr whole DM, ZERO_BASED|LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE: %s",
		     mr ? "ok" : vt_errname(errno)))
		vt_check(mr->length == 8192 && mr->pd == pd && mr->context == ctx,
			 "ibv_mr length/pd/context set (lkey 0x%x rkey 0x%x)",
			 mr->lkey, mr->rkey);
	mr2 = ibv_reg_dm_mr(pd, dm, 1024, 1024, zb | IBV_ACCESS_REMOTE_READ);
	vt_check(mr2 != NULL, "reg_dm_mr [1024, 2048) read-only: %s",
		 mr2 ? "ok" : vt_errname(errno));
	if (mr && mr2)
		vt_check(mr->lkey != mr2->lkey, "the two DM MRs have distinct keys");

	errno = 0;
	vt_check(!ibv_reg_dm_mr(pd, dm, 0, 4096, IBV_ACCESS_LOCAL_WRITE) &&
		 errno == EINVAL,
		 "reg_dm_mr without ZERO_BASED: %s (expected EINVAL)",
		 vt_errname(errno));
	errno = 0;
	vt_check(!ibv_reg_dm_mr(pd, dm, 8000, 200, zb) && errno != 0,
		 "reg_dm_mr beyond the DM (8000 + 200 > 8192): %s", vt_errname(errno));
	/* Length 0 is accepted, as on mlx5 (shca_mr_review tests it further). */
	mr0 = ibv_reg_dm_mr(pd, dm, 0, 0, zb);
	vt_check(mr0 != NULL, "reg_dm_mr length 0: %s",
		 mr0 ? "ok" : vt_errname(errno));
	if (mr0)
		vt_check(ibv_dereg_mr(mr0) == 0, "dereg_mr of the zero-length MR");
	errno = 0;
	vt_check(!ibv_reg_dm_mr(pd, dm, 0, 4096, zb | IBV_ACCESS_REMOTE_WRITE) &&
		 errno == EINVAL,
		 "reg_dm_mr REMOTE_WRITE without LOCAL_WRITE: %s (expected EINVAL)",
		 vt_errname(errno));

	if (mr) {
		errno = 0;
		ret = ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL, 0,
				   IBV_ACCESS_LOCAL_WRITE);
		vt_check(ret != 0 && errno == EINVAL,
			 "rereg_mr of a DM MR: %d, %s (expected an error, EINVAL)",
			 ret, vt_errname(errno));
	}

	ret = ibv_free_dm(dm);
	vt_check(ret == EBUSY, "free_dm while MRs use it: %s (expected EBUSY)",
		 vt_errname(ret));
	if (ret == 0)
		return;	/* dm is gone; the MRs leak in the kernel until close */
	vt_check(ibv_memcpy_to_dm(dm, 0, "xyz", 4) == 0,
		 "the DM still works after the refused free");
	if (mr)
		vt_check(ibv_dereg_mr(mr) == 0, "dereg_mr whole-DM MR");
	if (mr2)
		vt_check(ibv_dereg_mr(mr2) == 0, "dereg_mr partial MR");
	ret = ibv_free_dm(dm);
	vt_check(ret == 0, "free_dm once its MRs are gone: %s", vt_errname(ret));
}

static void test_limits(uint64_t max)
{
	struct ibv_alloc_dm_attr attr = { .length = 4096, .comp_mask = 1 };
	size_t n, i, cap = max / 4096 + 1;
	struct ibv_dm *dm, **dms;
	uint32_t byte;
	int bad = 0;

	vt_info("---- limits (max_dm_size %llu) ----", (unsigned long long)max);
	dm = alloc_dm(max + 1, 0);
	vt_check(!dm, "alloc_dm max_dm_size + 1 fails: %s",
		 dm ? "it succeeded" : vt_errname(errno));
	if (dm)
		ibv_free_dm(dm);
	dm = alloc_dm(max * 2, 0);
	vt_check(!dm, "alloc_dm 2 * max_dm_size fails: %s",
		 dm ? "it succeeded" : vt_errname(errno));
	if (dm)
		ibv_free_dm(dm);
	dm = alloc_dm(0, 0);
	vt_check(!dm && errno == EINVAL, "alloc_dm length 0: %s (expected EINVAL)",
		 dm ? "it succeeded" : vt_errname(errno));
	if (dm)
		ibv_free_dm(dm);
	errno = 0;
	dm = ibv_alloc_dm(ctx, &attr);
	vt_check(!dm && errno == EINVAL, "alloc_dm with unknown comp_mask: %s (expected EINVAL)",
		 dm ? "it succeeded" : vt_errname(errno));
	if (dm)
		ibv_free_dm(dm);

	dm = alloc_dm(max, 0);
	if (vt_check(dm != NULL, "alloc_dm max_dm_size: %s",
		     dm ? "ok" : vt_errname(errno))) {
		byte = 0x77;
		vt_check(!ibv_memcpy_to_dm(dm, max - 4, &byte, 4) &&
			 !ibv_memcpy_from_dm(&byte, dm, max - 4, 4) && byte == 0x77,
			 "its last word is reachable");
		vt_check(ibv_free_dm(dm) == 0, "free_dm max_dm_size");
	}

	/* Exhaust the arena with 4 KiB allocations, then give it all back. */
	dms = calloc(cap, sizeof(*dms));
	if (!dms)
		return;
	for (n = 0; n < cap; n++) {
		dms[n] = alloc_dm(4096, 0);
		if (!dms[n])
			break;
		byte = (uint32_t)n;
		if (ibv_memcpy_to_dm(dms[n], n * 4 % 4096, &byte, 4))
			bad++;
	}
	vt_check(n > 0 && n < cap && n * 4096 <= max,
		 "4 KiB allocations until the arena is full: %zu (%zu KiB of %llu KiB), then %s",
		 n, n * 4, (unsigned long long)max / 1024,
		 n < cap ? vt_errname(errno) : "no failure");
	for (i = 0; i < n; i++) {
		byte = 0;
		if (ibv_memcpy_from_dm(&byte, dms[i], i * 4 % 4096, 4) ||
		    byte != (uint32_t)i)
			bad++;
	}
	vt_check(!bad, "each of them kept its own word (%d wrong)", bad);
	for (i = 0; i < n; i++)
		if (ibv_free_dm(dms[i]))
			bad++;
	vt_check(!bad, "freed all of them");
	free(dms);

	dm = alloc_dm(max, 0);
	vt_check(dm != NULL, "max_dm_size can be allocated again afterwards: %s",
		 dm ? "ok" : vt_errname(errno));
	if (dm)
		ibv_free_dm(dm);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	struct ibv_device_attr_ex attr;
	struct ibv_pd *pd;
	int err;

	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	memset(&attr, 0, sizeof(attr));
	err = ibv_query_device_ex(ctx, NULL, &attr);
	if (!vt_check(!err && attr.max_dm_size > 0,
		      "device memory advertised: max_dm_size %llu (%s)",
		      (unsigned long long)attr.max_dm_size, vt_errname(err)))
		return vt_exit();

	test_round_trip();
	test_two_dms();
	test_dm_mr(pd);
	test_limits(attr.max_dm_size);

	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	return vt_exit();
}
