// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_mr_hold DEV SIZE_MIB HOLD_FILE: register SIZE_MIB MiB of anonymous
 * memory (LOCAL_WRITE, so every page is faulted in and pinned), write this
 * process' pid into HOLD_FILE and wait (at most 300 s) until someone
 * removes the file or kills the process; then deregister. Used to check
 * that the kernel releases the pins of a process killed with its MRs
 * registered.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmtest.h"

int main(int argc, char **argv)
{
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_mr *mr;
	size_t len;
	char *buf;
	FILE *f;
	int waited, ret;

	if (argc != 4 || strtoul(argv[2], NULL, 0) == 0) {
		fprintf(stderr, "usage: %s DEV SIZE_MIB HOLD_FILE\n", argv[0]);
		return 2;
	}
	len = strtoul(argv[2], NULL, 0) << 20;
	ctx = vt_open(argv[1]);
	pd = vt_alloc_pd(ctx);
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (buf == MAP_FAILED) {
		vt_bad("mmap %zu bytes: %s", len, strerror(errno));
		return 2;
	}
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!vt_check(mr != NULL, "reg_mr %s MiB: %s", argv[2],
		      mr ? "ok" : vt_errname(errno)))
		return 1;
	vt_info("lkey 0x%x, VmPin %ld kB", mr->lkey, vt_status_kb("VmPin"));

	f = fopen(argv[3], "w");
	if (!f) {
		vt_bad("creating %s: %s", argv[3], strerror(errno));
		return 1;
	}
	fprintf(f, "%d\n", (int)getpid());
	fclose(f);
	for (waited = 0; waited < 3000 && !access(argv[3], F_OK); waited++)
		usleep(100 * 1000);
	vt_check(access(argv[3], F_OK) != 0, "released by removal of %s", argv[3]);

	ret = ibv_dereg_mr(mr);
	vt_check(!ret, "dereg_mr: %s", vt_errname(ret));
	vt_check(ibv_dealloc_pd(pd) == 0, "dealloc_pd");
	vt_check(ibv_close_device(ctx) == 0, "close_device");
	return vt_exit();
}
