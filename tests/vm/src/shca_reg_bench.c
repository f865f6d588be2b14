// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_reg_bench [-t SECONDS] [-m MAX_MIB] DEV...: userspace memory
 * registration benchmark through libibverbs. For region sizes 4 KiB,
 * 64 KiB, 1 MiB, 16 MiB, 256 MiB and 1 GiB (up to MAX_MIB, default 1024)
 * and every DEV in turn, time ibv_reg_mr + ibv_dereg_mr pairs on
 * pre-faulted anonymous memory (LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE)
 * for about SECONDS (default 0.5) per cell, at least 3 pairs after one
 * untimed warm-up pair; print one table: microseconds per pair and GiB
 * registered per second, per device.
 *
 * A measurement, not a test: the exit status is 0 unless a registration
 * failed or the memory could not be had (then 1, or 2 on usage errors).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vmtest.h"

#define MAX_DEVS	4
#define MIN_PAIRS	3
#define MAX_PAIRS	1000000

static const size_t sizes[] = {
	4UL << 10, 64UL << 10, 1UL << 20, 16UL << 20, 256UL << 20, 1UL << 30,
};
#define NSIZES	(sizeof(sizes) / sizeof(sizes[0]))

struct cell {
	double us;	/* per reg + dereg pair */
	long pairs;
	int err;	/* errno of a failed registration */
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int pair(struct ibv_pd *pd, void *buf, size_t len)
{
	struct ibv_mr *mr = ibv_reg_mr(pd, buf, len, IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_WRITE);
	int err;

	if (!mr)
		return errno ? errno : EIO;
	err = ibv_dereg_mr(mr);
	return err;
}

static void measure(struct ibv_pd *pd, void *buf, size_t len, double budget,
		    struct cell *c)
{
	double t0, t;
	long n = 0;

	c->err = pair(pd, buf, len);	/* warm-up, untimed */
	if (c->err)
		return;
	t0 = now();
	do {
		c->err = pair(pd, buf, len);
		if (c->err)
			return;
		n++;
		t = now() - t0;
	} while ((n < MIN_PAIRS || t < budget) && n < MAX_PAIRS);
	c->pairs = n;
	c->us = t * 1e6 / n;
}

int main(int argc, char **argv)
{
	struct ibv_context *ctx[MAX_DEVS];
	struct ibv_pd *pd[MAX_DEVS];
	static struct cell cells[NSIZES][MAX_DEVS];
	size_t max = 1UL << 30, i;
	double budget = 0.5;
	int ndev, d, opt, failed = 0;
	char *buf;

	while ((opt = getopt(argc, argv, "t:m:")) != -1) {
		switch (opt) {
		case 't':
			budget = strtod(optarg, NULL);
			break;
		case 'm':
			max = strtoul(optarg, NULL, 0) << 20;
			break;
		default:
			goto usage;
		}
	}
	ndev = argc - optind;
	if (ndev < 1 || ndev > MAX_DEVS || budget <= 0 || !max || max > (1UL << 30))
		goto usage;

	buf = mmap(NULL, max, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		fprintf(stderr, "shca_reg_bench: mmap %zu bytes: %s\n", max,
			strerror(errno));
		return 1;
	}
	memset(buf, 0x5a, max);	/* pre-faulted: we time pinning, not faults */
	for (d = 0; d < ndev; d++) {
		ctx[d] = vt_open(argv[optind + d]);
		pd[d] = vt_alloc_pd(ctx[d]);
	}
	/* Interleave the devices per size, so both see the same conditions. */
	for (i = 0; i < NSIZES && sizes[i] <= max; i++)
		for (d = 0; d < ndev; d++)
			measure(pd[d], buf, sizes[i], budget, &cells[i][d]);

	printf("ibv_reg_mr + ibv_dereg_mr from userspace (libibverbs), pre-faulted anonymous memory,\n");
	printf("access LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE; ~%.2g s per cell, >= %d pairs after a warm-up pair\n",
	       budget, MIN_PAIRS);
	printf("%-8s", "");
	for (d = 0; d < ndev; d++)
		printf("  %29s", argv[optind + d]);
	printf("\n%-8s", "size");
	for (d = 0; d < ndev; d++)
		printf("  %11s %9s %7s", "us/pair", "GiB/s", "pairs");
	printf("\n");
	for (i = 0; i < NSIZES && sizes[i] <= max; i++) {
		char sz[32];

		printf("%-8s", vt_size_str(sizes[i], sz, sizeof(sz)));
		for (d = 0; d < ndev; d++) {
			struct cell *c = &cells[i][d];

			if (c->err) {
				printf("  %29s", vt_errname(c->err));
				failed = 1;
				continue;
			}
			printf("  %11.1f %9.3f %7ld", c->us,
			       sizes[i] / (c->us / 1e6) / (1UL << 30), c->pairs);
		}
		printf("\n");
	}
	for (d = 0; d < ndev; d++) {
		ibv_dealloc_pd(pd[d]);
		ibv_close_device(ctx[d]);
	}
	munmap(buf, max);
	return failed;

usage:
	fprintf(stderr, "usage: %s [-t SECONDS] [-m MAX_MIB (1..1024)] DEV...\n",
		argv[0]);
	return 2;
}
