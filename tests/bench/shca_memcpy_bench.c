// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_memcpy_bench - single-thread memcpy() bandwidth, the ceiling of a
 * software RDMA device that moves every byte once with the CPU.
 *
 *   shca_memcpy_bench [-t SECONDS] [SIZE...]
 *
 * Copies SIZE bytes (default 64, 4096, 65536 and 1048576) again and again
 * between the same two buffers, as a benchmark that streams messages of
 * one size through one pair of registered buffers does, for SECONDS
 * (default 0.15) per size. Prints one record per size:
 *
 *   memcpy SIZE COPIES NANOSECONDS
 *
 * The two buffers are page aligned and written once before timing, so
 * that no page fault is measured.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* memcpy through a volatile pointer: never inlined or elided. */
static void *(*volatile copy_fn)(void *, const void *, size_t) = memcpy;

static void usage(void)
{
	fprintf(stderr, "usage: shca_memcpy_bench [-t SECONDS] [SIZE...]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const size_t def_sizes[] = { 64, 4096, 65536, 1048576 };
	size_t sizes[32], nsizes = 0, max = 0, i;
	double secs = 0.15;
	char *src, *dst, *end;
	int a = 1;

	if (a + 1 < argc && !strcmp(argv[a], "-t")) {
		secs = strtod(argv[a + 1], &end);
		if (*end || secs <= 0 || secs > 60)
			usage();
		a += 2;
	}
	for (; a < argc; a++) {
		unsigned long long v;

		errno = 0;
		v = strtoull(argv[a], &end, 0);
		if (errno || *end || !v || v > (1ull << 30) || nsizes == 32)
			usage();
		sizes[nsizes++] = v;
	}
	if (!nsizes) {
		memcpy(sizes, def_sizes, sizeof(def_sizes));
		nsizes = sizeof(def_sizes) / sizeof(def_sizes[0]);
	}
	for (i = 0; i < nsizes; i++)
		if (sizes[i] > max)
			max = sizes[i];

	if (posix_memalign((void **)&src, 4096, max) ||
	    posix_memalign((void **)&dst, 4096, max)) {
		perror("posix_memalign");
		return 1;
	}
	memset(src, 0x5a, max);
	memset(dst, 0, max);

	for (i = 0; i < nsizes; i++) {
		uint64_t batch = 65536 / sizes[i], n = 0, t0, ns, deadline;
		uint64_t k;

		if (!batch)
			batch = 1;
		deadline = (uint64_t)(secs * 1e9);
		copy_fn(dst, src, sizes[i]);	/* warm up */
		t0 = now_ns();
		do {
			for (k = 0; k < batch; k++)
				copy_fn(dst, src, sizes[i]);
			n += batch;
			ns = now_ns() - t0;
		} while (ns < deadline);
		printf("memcpy %zu %llu %llu\n", sizes[i],
		       (unsigned long long)n, (unsigned long long)ns);
	}
	free(src);
	free(dst);
	return 0;
}
