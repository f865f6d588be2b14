// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr_many DEV N [HOLD_FILE]: register N MRs (one page each), check
 * their keys are distinct, then deregister all of them. With HOLD_FILE,
 * create that file once all N are registered and wait (at most 120 s)
 * until someone removes it before deregistering: meanwhile the MRs can be
 * inspected from outside (rdma res show mr).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmtest.h"

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "softhca0";
	long n = argc > 2 ? strtol(argv[2], NULL, 0) : 1000;
	const char *hold = argc > 3 ? argv[3] : NULL;
	size_t page = sysconf(_SC_PAGESIZE);
	struct ibv_context *ctx;
	struct ibv_mr **mrs;
	struct ibv_pd *pd;
	uint32_t *keys;
	long i, got = 0, dup = 0, bad_dereg = 0;
	char *buf;

	if (n <= 0 || n > 1000000) {
		fprintf(stderr, "usage: %s DEV N [HOLD_FILE]\n", argv[0]);
		return 2;
	}
	ctx = vt_open(name);
	pd = vt_alloc_pd(ctx);
	mrs = calloc(n, sizeof(*mrs));
	keys = calloc(n, sizeof(*keys));
	buf = mmap(NULL, n * page, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (!mrs || !keys || buf == MAP_FAILED) {
		vt_bad("allocating %ld MRs' worth of memory", n);
		return 2;
	}

	for (i = 0; i < n; i++) {
		mrs[i] = ibv_reg_mr(pd, buf + i * page, page,
				    IBV_ACCESS_LOCAL_WRITE |
				    IBV_ACCESS_REMOTE_READ);
		if (!mrs[i]) {
			vt_bad("reg_mr #%ld: %s", i, vt_errname(errno));
			break;
		}
		keys[i] = mrs[i]->lkey;
		got++;
	}
	vt_check(got == n, "registered %ld of %ld MRs", got, n);

	qsort(keys, got, sizeof(*keys), cmp_u32);
	for (i = 1; i < got; i++)
		if (keys[i] == keys[i - 1])
			dup++;
	vt_check(dup == 0, "their lkeys are distinct (%ld duplicates)", dup);

	if (hold) {
		FILE *f = fopen(hold, "w");
		int waited;

		if (!f) {
			vt_bad("creating %s: %s", hold, strerror(errno));
		} else {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
			for (waited = 0; waited < 1200 && !access(hold, F_OK); waited++)
				usleep(100 * 1000);
			vt_check(access(hold, F_OK) != 0,
				 "released by removal of %s", hold);
			unlink(hold);
		}
	}

	for (i = 0; i < got; i++) {
		int err = ibv_dereg_mr(mrs[i]);

		if (err && bad_dereg++ < 5)
			vt_bad("dereg_mr #%ld: %s", i, vt_errname(err));
	}
	vt_check(bad_dereg == 0, "deregistered all %ld MRs (%ld failures)", got,
		 bad_dereg);
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd after deregistering all");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	munmap(buf, n * page);
	free(keys);
	free(mrs);
	return vt_exit();
}
