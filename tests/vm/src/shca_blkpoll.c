// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_blkpoll DEV MIB: polled block I/O (the path of a ULP's poll queues,
 * e.g. nvme-rdma's nr_poll_queues, whose completion queues are
 * IB_POLL_DIRECT): write MIB MiB of pseudo-random 4 KiB blocks to DEV with
 * O_DIRECT and pwritev2(RWF_HIPRI), read them back with preadv2(RWF_HIPRI)
 * in another order, and compare every byte. No block tool offers this
 * without fio, whose libraries would triple the guest's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vmtest.h"

#define BLK 4096

static void fill(uint8_t *p, uint64_t blk)
{
	uint64_t x = blk * 0x9e3779b97f4a7c15ULL + 1;
	size_t i;

	for (i = 0; i < BLK; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(p + i, &x, 8);
	}
}

int main(int argc, char **argv)
{
	const char *dev = argc > 1 ? argv[1] : "/dev/nvme0n1";
	long mib = argc > 2 ? atol(argv[2]) : 8;
	uint64_t n = (uint64_t)mib * (1 << 20) / BLK, i, bad = 0, errs = 0;
	uint8_t *buf, *want;
	struct iovec iov;
	int fd;

	if (posix_memalign((void **)&buf, BLK, BLK) ||
	    posix_memalign((void **)&want, BLK, BLK))
		return 2;
	fd = open(dev, O_RDWR | O_DIRECT);
	if (!vt_check(fd >= 0, "open %s O_DIRECT: %s", dev,
		      fd >= 0 ? "ok" : strerror(errno)))
		return vt_exit();
	iov.iov_base = buf;
	iov.iov_len = BLK;

	for (i = 0; i < n; i++) {
		fill(buf, i);
		if (pwritev2(fd, &iov, 1, i * BLK, RWF_HIPRI) != BLK)
			errs++;
	}
	vt_check(!errs, "%llu polled 4 KiB writes (%llu failed)",
		 (unsigned long long)n, (unsigned long long)errs);
	errs = 0;
	/* Read back odd blocks first, then even ones. */
	for (i = 0; i < n; i++) {
		uint64_t b = i < (n + 1) / 2 ? 2 * i : 2 * (i - (n + 1) / 2) + 1;

		if (b >= n)
			continue;
		memset(buf, 0, BLK);
		if (preadv2(fd, &iov, 1, b * BLK, RWF_HIPRI) != BLK) {
			errs++;
			continue;
		}
		fill(want, b);
		if (memcmp(buf, want, BLK))
			bad++;
	}
	vt_check(!errs && !bad,
		 "%llu polled 4 KiB reads: %llu failed, %llu differ",
		 (unsigned long long)n, (unsigned long long)errs,
		 (unsigned long long)bad);
	close(fd);
	free(buf);
	free(want);
	return vt_exit();
}
