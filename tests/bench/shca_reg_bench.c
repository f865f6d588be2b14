// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_reg_bench [-t SECONDS] [-m MAX_MIB] [-r REPS] [-f FLOOR_DEV]
 *                [-F PATH] DEV...
 *
 * Userspace memory registration benchmark through libibverbs, pinned and
 * on demand, next to its floor. For region sizes 4 KiB, 64 KiB, 1 MiB,
 * 16 MiB, 256 MiB and 1 GiB (up to MAX_MIB, default 1024) of pre-faulted
 * anonymous memory, access LOCAL_WRITE | REMOTE_READ | REMOTE_WRITE, the
 * columns are:
 *   reg    ibv_reg_mr + ibv_dereg_mr pairs, on every DEV;
 *   floor  ib_umem_get + ib_umem_release pairs of the same buffer with the
 *          same access, timed in the kernel in this process's context by
 *          shca_umem_bench.ko through PATH (default /dev/shca_umem_bench)
 *          on FLOOR_DEV (default the first DEV): what every driver's user
 *          MR pays for pinning and mapping, whatever else it does;
 *   cmd    ibv_alloc_pd + ibv_dealloc_pd pairs on every DEV: two uverbs
 *          commands that do next to nothing in any driver, the system
 *          calls and uverbs' object handling every ibv_reg_mr +
 *          ibv_dereg_mr pays on top of the pinning, whatever the driver
 *          does (with the floor: the least a pair can cost);
 *   odp    the same pairs with IBV_ACCESS_ON_DEMAND added, on every DEV
 *          with on-demand paging (odp_caps: IBV_ODP_SUPPORT): the cost of
 *          registering, nothing pinned or faulted in;
 *   odp-touch  ibv_reg_mr with IBV_ACCESS_ON_DEMAND + ibv_advise_mr
 *          (PREFETCH_WRITE, FLAG_FLUSH) of the whole region +
 *          ibv_dereg_mr, on the same devices: registering and faulting
 *          every page in, the first-touch cost to set against reg.
 * REPS (default 3) repetitions; in each, size by size, the columns take
 * turns, every other repetition in the reverse order (A B F Ac Bc Ao Bo
 * At Bt, Bt At Bo Ao Bc Ac F B A, ...: ABBA). Every run of a cell first does one
 * untimed pair on its device (the warm-up), then pairs for about SECONDS
 * (default 0.5), at least 3.
 *
 * Prints one record per line for tests/bench/mr-bench.sh to tabulate:
 *   # CONFIGURATION
 *   reg|cmd|odp|odp-touch DEV SIZE REP PAIRS NANOSECONDS
 *   floor DEV SIZE REP PAIRS NANOSECONDS   (the kernel's time of the pairs)
 *   err reg|cmd|odp|odp-touch|floor DEV SIZE|- REP|- REASON
 * A cell that fails is not tried again. A device without on-demand
 * paging gets "err odp DEV - - no-ODP" and "err odp-touch DEV - - no-ODP"
 * once, and no such columns. A measurement, not a test: the exit status
 * is 0 unless a registration (or prefetch) failed or the memory could
 * not be had (then 1; 2 on usage errors); no floor device and no ODP are
 * only reported.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <infiniband/verbs.h>

#include "shca_umem_bench.h"

#define MAX_DEVS	4
#define MIN_PAIRS	3
#define MAX_PAIRS	1000000
#define ACCESS		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_WRITE)

static const size_t sizes[] = {
	4UL << 10, 64UL << 10, 1UL << 20, 16UL << 20, 256UL << 20, 1UL << 30,
};
#define NSIZES	(sizeof(sizes) / sizeof(sizes[0]))

/*
 * A column: ibv_reg_mr on a device (pd), pinned or on demand, or the
 * floor (fd). The odp columns use their device's pd; the device's reg
 * column owns it and the ctx.
 */
struct column {
	const char *kind;	/* "reg", "cmd", "odp", "odp-touch", "floor" */
	const char *dev;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int access;		/* of ibv_reg_mr */
	int touch;		/* odp-touch: prefetch the whole region */
	int cmd;		/* cmd: ibv_alloc_pd + ibv_dealloc_pd */
	int fd;
	int failed[NSIZES];
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* One pair; returns 0 or an errno, and adds the time it took to *ns. */
static int pair(struct column *c, void *buf, size_t len, double *ns)
{
	struct shca_umem_bench_arg a;
	struct ibv_sge sge;
	struct ibv_mr *mr;
	double t0;
	int err;

	if (c->fd >= 0) {
		memset(&a, 0, sizeof(a));
		snprintf(a.dev, sizeof(a.dev), "%s", c->dev);
		a.addr = (unsigned long)buf;
		a.length = len;
		a.access = ACCESS;
		a.count = 1;
		if (ioctl(c->fd, SHCA_UMEM_BENCH_TIME, &a))
			return errno;
		*ns += a.ns;
		return 0;
	}
	t0 = now();
	if (c->cmd) {
		struct ibv_pd *pd = ibv_alloc_pd(c->ctx);

		if (!pd)
			return errno ? errno : EIO;
		err = ibv_dealloc_pd(pd);
		*ns += (now() - t0) * 1e9;
		return err;
	}
	mr = ibv_reg_mr(c->pd, buf, len, c->access);
	if (!mr)
		return errno ? errno : EIO;
	if (c->touch) {
		/* fault every page in, for writing, before returning */
		sge.addr = (uintptr_t)buf;
		sge.length = len;
		sge.lkey = mr->lkey;
		err = ibv_advise_mr(c->pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
				    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1);
		if (err) {
			ibv_dereg_mr(mr);
			return err;
		}
	}
	err = ibv_dereg_mr(mr);
	*ns += (now() - t0) * 1e9;
	return err;
}

/* One run of a cell: a warm-up pair, then pairs for @budget seconds. */
static int run(struct column *c, void *buf, size_t len, double budget,
	       long *pairs, double *ns)
{
	double t0, warm = 0;
	long n = 0;
	int err;

	*ns = 0;
	err = pair(c, buf, len, &warm);
	if (err)
		return err;
	t0 = now();
	do {
		err = pair(c, buf, len, ns);
		if (err)
			return err;
		n++;
	} while ((n < MIN_PAIRS || now() - t0 < budget) && n < MAX_PAIRS);
	*pairs = n;
	return 0;
}

/* A word for the records: the errno's name, or its number. */
static const char *errname(int err)
{
	static char other[24];

	switch (err) {
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EINTR: return "EINTR";
	case ENOTTY: return "ENOTTY";
	case ERANGE: return "ERANGE";
	case ENOKEY: return "ENOKEY";
	case EAGAIN: return "EAGAIN";
	}
	snprintf(other, sizeof(other), "errno-%d", err);
	return other;
}

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_context *ctx = NULL;
	struct ibv_device **list;
	int i, num;

	list = ibv_get_device_list(&num);
	if (!list)
		return NULL;
	for (i = 0; i < num && !ctx; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

/* Whether the device does on-demand paging (explicit ODP MRs). */
static int has_odp(struct ibv_context *ctx)
{
	struct ibv_device_attr_ex attr;

	memset(&attr, 0, sizeof(attr));
	if (ibv_query_device_ex(ctx, NULL, &attr))
		return 0;
	return !!(attr.odp_caps.general_caps & IBV_ODP_SUPPORT);
}

int main(int argc, char **argv)
{
	const char *floor_dev = NULL, *path = "/dev/" SHCA_UMEM_BENCH_DEV;
	static struct column cols[4 * MAX_DEVS + 1];
	size_t max = 1UL << 30, i;
	int ndev, ncol, d, k, t, opt, rep, reps = 3, failed = 0;
	double budget = 0.5, ns;
	long pairs;
	char *buf;

	while ((opt = getopt(argc, argv, "t:m:r:f:F:")) != -1) {
		switch (opt) {
		case 't':
			budget = strtod(optarg, NULL);
			break;
		case 'm':
			max = strtoul(optarg, NULL, 0) << 20;
			break;
		case 'r':
			reps = atoi(optarg);
			break;
		case 'f':
			floor_dev = optarg;
			break;
		case 'F':
			path = optarg;
			break;
		default:
			goto usage;
		}
	}
	ndev = argc - optind;
	if (ndev < 1 || ndev > MAX_DEVS || budget <= 0 || !max ||
	    max > (1UL << 30) || reps < 1 || reps > 100)
		goto usage;
	setvbuf(stdout, NULL, _IOLBF, 0);

	buf = mmap(NULL, max, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (buf == MAP_FAILED) {
		fprintf(stderr, "shca_reg_bench: mmap %zu bytes: %s\n", max,
			strerror(errno));
		return 1;
	}
	memset(buf, 0x5a, max);	/* pre-faulted: we time pinning, not faults */
	for (d = 0; d < ndev; d++) {
		struct column *c = &cols[d];

		c->kind = "reg";
		c->dev = argv[optind + d];
		c->access = ACCESS;
		c->fd = -1;
		c->ctx = open_dev(c->dev);
		c->pd = c->ctx ? ibv_alloc_pd(c->ctx) : NULL;
		if (!c->pd) {
			fprintf(stderr, "shca_reg_bench: %s: %s\n", c->dev,
				c->ctx ? "ibv_alloc_pd failed" :
				"no such device (libibverbs)");
			return 2;
		}
	}
	if (!floor_dev)
		floor_dev = cols[0].dev;
	ncol = ndev;
	cols[ncol].kind = "floor";
	cols[ncol].dev = floor_dev;
	cols[ncol].fd = open(path, O_RDWR);
	if (cols[ncol].fd >= 0)
		ncol++;
	else
		printf("err floor %s - - open-%s:%s\n", floor_dev, path,
		       errname(errno));
	/* then the commands' cost on every device */
	for (d = 0; d < ndev; d++) {
		struct column *c = &cols[ncol++];

		c->kind = "cmd";
		c->dev = cols[d].dev;
		c->ctx = cols[d].ctx;
		c->cmd = 1;
		c->fd = -1;
	}
	/* then odp on every device that has it, then odp-touch */
	for (t = 0; t < 2; t++) {
		for (d = 0; d < ndev; d++) {
			struct column *c = &cols[ncol];

			if (!has_odp(cols[d].ctx)) {
				printf("err %s %s - - no-ODP\n",
				       t ? "odp-touch" : "odp", cols[d].dev);
				continue;
			}
			c->kind = t ? "odp-touch" : "odp";
			c->dev = cols[d].dev;
			c->pd = cols[d].pd;
			c->access = ACCESS | IBV_ACCESS_ON_DEMAND;
			c->touch = t;
			c->fd = -1;
			ncol++;
		}
	}

	printf("# secs=%g reps=%d max=%zu access=%d floor=%s devices=",
	       budget, reps, max, ACCESS, floor_dev);
	for (d = 0; d < ndev; d++)
		printf("%s%s", d ? "," : "", cols[d].dev);
	printf("\n");
	for (rep = 1; rep <= reps; rep++) {
		for (i = 0; i < NSIZES && sizes[i] <= max; i++) {
			/* ABBA: every other repetition reversed */
			for (k = 0; k < ncol; k++) {
				struct column *c;
				int err;

				c = &cols[rep % 2 ? k : ncol - 1 - k];
				if (c->failed[i])
					continue;
				err = run(c, buf, sizes[i], budget, &pairs,
					  &ns);
				if (err) {
					c->failed[i] = 1;
					failed |= c->fd < 0;
					printf("err %s %s %zu %d %s\n", c->kind,
					       c->dev, sizes[i], rep,
					       errname(err));
					continue;
				}
				printf("%s %s %zu %d %ld %.0f\n", c->kind,
				       c->dev, sizes[i], rep, pairs, ns);
			}
		}
	}
	for (d = 0; d < ndev; d++) {
		ibv_dealloc_pd(cols[d].pd);
		ibv_close_device(cols[d].ctx);
	}
	for (k = ndev; k < ncol; k++)
		if (cols[k].fd >= 0)
			close(cols[k].fd);
	munmap(buf, max);
	return failed;

usage:
	fprintf(stderr, "usage: %s [-t SECONDS] [-m MAX_MIB (1..1024)] [-r REPS] [-f FLOOR_DEV] [-F PATH] DEV...\n",
		argv[0]);
	return 2;
}
