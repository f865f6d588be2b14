/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The interface of shca_umem_bench.ko, shared by the module and
 * shca_reg_bench: /dev/shca_umem_bench times ib_umem_get() +
 * ib_umem_release() of a buffer of the calling process.
 */

#ifndef SHCA_UMEM_BENCH_H
#define SHCA_UMEM_BENCH_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define SHCA_UMEM_BENCH_DEV	"shca_umem_bench"
#define SHCA_UMEM_BENCH_NAME_MAX	64	/* IB_DEVICE_NAME_MAX */
#define SHCA_UMEM_BENCH_MAX_COUNT	1000000

/**
 * struct shca_umem_bench_arg - one SHCA_UMEM_BENCH_TIME request
 * @dev: the ib_device whose ib_umem_get() maps the memory, NUL-terminated
 * @addr: start of the buffer in the calling process
 * @length: its length in bytes
 * @access: IB_ACCESS_* flags, as ibv_reg_mr()'s (LOCAL_WRITE 1,
 *	REMOTE_WRITE 2, REMOTE_READ 4, REMOTE_ATOMIC 8)
 * @count: ib_umem_get() + ib_umem_release() pairs to run, 1 ..
 *	SHCA_UMEM_BENCH_MAX_COUNT
 * @ns: out: the nanoseconds the @count pairs took, nothing else timed
 */
struct shca_umem_bench_arg {
	char dev[SHCA_UMEM_BENCH_NAME_MAX];
	__u64 addr;
	__u64 length;
	__u32 access;
	__u32 count;
	__u64 ns;
};

#define SHCA_UMEM_BENCH_TIME	_IOWR('S', 0x51, struct shca_umem_bench_arg)

#endif /* SHCA_UMEM_BENCH_H */
