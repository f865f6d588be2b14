// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_demo DEV [HOLD_FILE]: the tour's userspace demonstration. Through
 * Debian's libibverbs and the softhca provider: open DEV, allocate a PD,
 * register 1 MiB of ordinary memory with ibv_reg_mr and print its keys;
 * allocate device memory, copy a message into it and back (plain memory
 * copies through the mapping) and register it with ibv_reg_dm_mr. With
 * HOLD_FILE, create the file and wait (at most 60 s) until it is removed,
 * so `rdma res show mr` can be shown meanwhile. Then deregister and free
 * everything.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "vmtest.h"

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

int main(int argc, char **argv)
{
	/* device memory is copied in 32-bit words: a multiple of 4 bytes */
	static const char msg[36] = "hello from softhca device memory";
	const char *name = argc > 1 ? argv[1] : "softhca0";
	const size_t len = 1UL << 20;
	struct ibv_alloc_dm_attr dm_attr = { .length = 4096 };
	struct ibv_mr *mr, *dm_mr = NULL;
	struct ibv_context *ctx;
	struct ibv_dm *dm;
	struct ibv_pd *pd;
	char back[sizeof(msg)] = "";
	char *buf;
	int ret;

	ctx = vt_open(name);
	say("ibv_open_device(%s): ok", name);
	pd = vt_alloc_pd(ctx);
	say("ibv_alloc_pd: pd handle %u", pd->handle);

	buf = mmap(NULL, len, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED)
		return 2;
	mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE);
	if (!mr) {
		say("ibv_reg_mr failed: %s", strerror(errno));
		return 1;
	}
	say("ibv_reg_mr(1 MiB at %p, LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE): lkey 0x%08x rkey 0x%08x",
	    mr->addr, mr->lkey, mr->rkey);
	say("  the 256 pages are pinned now: VmPin of this process is %ld kB",
	    vt_status_kb("VmPin"));

	dm = ibv_alloc_dm(ctx, &dm_attr);
	if (dm) {
		ret = ibv_memcpy_to_dm(dm, 0, msg, sizeof(msg));
		say("ibv_alloc_dm(4096 bytes), ibv_memcpy_to_dm(\"%s\"): %s",
		    msg, ret ? strerror(ret) : "ok");
		ret = ibv_memcpy_from_dm(back, dm, 0, sizeof(back));
		say("ibv_memcpy_from_dm: \"%s\" (%s)", back,
		    ret ? strerror(ret) : !strcmp(back, msg) ? "the same" : "DIFFERENT");
		dm_mr = ibv_reg_dm_mr(pd, dm, 0, 4096, IBV_ACCESS_ZERO_BASED |
				      IBV_ACCESS_LOCAL_WRITE |
				      IBV_ACCESS_REMOTE_READ);
		if (dm_mr)
			say("ibv_reg_dm_mr(the 4096 bytes, zero-based): lkey 0x%08x rkey 0x%08x",
			    dm_mr->lkey, dm_mr->rkey);
		else
			say("ibv_reg_dm_mr failed: %s", strerror(errno));
	} else {
		say("ibv_alloc_dm failed: %s", strerror(errno));
	}

	if (argc > 2) {
		FILE *f = fopen(argv[2], "w");
		int waited;

		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
			for (waited = 0; waited < 600 && !access(argv[2], F_OK); waited++)
				usleep(100 * 1000);
			unlink(argv[2]);
		}
	}

	if (dm_mr)
		say("ibv_dereg_mr(DM MR): %s", strerror(ibv_dereg_mr(dm_mr)));
	if (dm)
		say("ibv_free_dm: %s", strerror(ibv_free_dm(dm)));
	ret = ibv_dereg_mr(mr);
	say("ibv_dereg_mr: %s; VmPin is %ld kB again", strerror(ret),
	    vt_status_kb("VmPin"));
	say("ibv_dealloc_pd: %s", strerror(ibv_dealloc_pd(pd)));
	say("ibv_close_device: %s", ibv_close_device(ctx) ? strerror(errno) : "Success");
	return ret ? 1 : 0;
}
