/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Helpers shared by the C test programs of the VM tier (tests/vm/src/).
 *
 * Output follows tests/vm/lib.sh: "  ok - ..." and "  FAIL - ..." lines,
 * "  # ..." for information. A program exits 0 only if no check failed,
 * 1 if one did, 2 on a usage error or when it cannot start at all.
 */
#ifndef SOFTHCA_VMTEST_H
#define SOFTHCA_VMTEST_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fcntl.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/udmabuf.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

static int vt_failures;

static inline void __attribute__((format(printf, 1, 2))) vt_ok(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  ok - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

static inline void __attribute__((format(printf, 1, 2))) vt_bad(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  FAIL - ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
	vt_failures++;
}

static inline void __attribute__((format(printf, 1, 2))) vt_info(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fputs("  # ", stdout);
	vprintf(fmt, ap);
	putchar('\n');
	va_end(ap);
	fflush(stdout);
}

/* vt_check(cond, desc...): ok or FAIL; returns cond. */
#define vt_check(cond, ...) \
	((cond) ? (vt_ok(__VA_ARGS__), 1) : (vt_bad(__VA_ARGS__), 0))

/*
 * A small seeded PRNG (xorshift64*) for the randomised programs: the same
 * seed (vt_seed()) gives the same sequence, so a run can be repeated.
 */
static inline uint64_t *vt_rng(void)
{
	static uint64_t state = 1;

	return &state;
}

static inline void vt_seed(uint64_t seed)
{
	*vt_rng() = seed * 0x9E3779B97F4A7C15ULL + 1;
}

static inline uint64_t vt_rnd(void)
{
	uint64_t *s = vt_rng();

	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

/* A number in [0, n), 0 for n == 0. */
static inline uint64_t vt_rndn(uint64_t n)
{
	return n ? vt_rnd() % n : 0;
}

/* Exit status for main(). */
static inline int vt_exit(void)
{
	if (vt_failures)
		vt_info("%d check(s) failed", vt_failures);
	return vt_failures ? 1 : 0;
}

static inline const char *vt_errname(int err)
{
	switch (err) {
	case 0: return "0";
	case EINVAL: return "EINVAL";
	case EFAULT: return "EFAULT";
	case ENOMEM: return "ENOMEM";
	case EBUSY: return "EBUSY";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EPERM: return "EPERM";
	case EACCES: return "EACCES";
	case ENOSPC: return "ENOSPC";
	case ENOENT: return "ENOENT";
	case ENODEV: return "ENODEV";
	case E2BIG: return "E2BIG";
	default: return strerror(err);
	}
}

/*
 * Issue a raw write()-style uverbs command on @fd (bypassing libibverbs'
 * own checks). Returns 0, the errno of write(), or EIO for a short write.
 */
static inline int vt_raw_cmd(int fd, uint32_t command, const void *req,
			     size_t req_len, unsigned int out_words)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		char body[256];
	} buf;
	size_t len = sizeof(buf.hdr) + req_len;
	ssize_t ret;

	if (req_len > sizeof(buf.body))
		return EINVAL;
	memset(&buf, 0, sizeof(buf));
	buf.hdr.command = command;
	buf.hdr.in_words = len / 4;
	buf.hdr.out_words = out_words;
	memcpy(buf.body, req, req_len);
	ret = write(fd, &buf, len);
	if (ret < 0)
		return errno;
	return ret == (ssize_t)len ? 0 : EIO;
}

/* True if all @len bytes at @p equal @v. */
static inline int vt_all_bytes(const void *p, size_t len, unsigned char v)
{
	const unsigned char *b = p;
	size_t i;

	for (i = 0; i < len; i++)
		if (b[i] != v)
			return 0;
	return 1;
}

/* Open the device called @name; exits with status 2 if impossible. */
static inline struct ibv_context *vt_open(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int i, num;

	list = ibv_get_device_list(&num);
	if (!list) {
		vt_bad("ibv_get_device_list: %s", strerror(errno));
		exit(2);
	}
	for (i = 0; i < num; i++) {
		if (strcmp(ibv_get_device_name(list[i]), name))
			continue;
		ctx = ibv_open_device(list[i]);
		if (!ctx) {
			vt_bad("ibv_open_device(%s): %s", name, strerror(errno));
			ibv_free_device_list(list);
			exit(2);
		}
		break;
	}
	ibv_free_device_list(list);
	if (!ctx) {
		vt_bad("device %s not found by libibverbs (%d devices)", name, num);
		exit(2);
	}
	return ctx;
}

static inline struct ibv_pd *vt_alloc_pd(struct ibv_context *ctx)
{
	struct ibv_pd *pd = ibv_alloc_pd(ctx);

	if (!pd) {
		vt_bad("ibv_alloc_pd: %s", strerror(errno));
		exit(2);
	}
	return pd;
}

/*
 * Pages pinned with FOLL_PIN in the whole system: nr_foll_pin_acquired
 * minus nr_foll_pin_released of /proc/vmstat, after folding the per-CPU
 * counter deltas into the global ones (/proc/sys/vm/stat_refresh, root
 * only; without it the result may lag by a few pages). -1 if unknown.
 */
static inline long long vt_foll_pins(void)
{
	long long acq = -1, rel = -1, v;
	char key[64];
	FILE *f;

	f = fopen("/proc/sys/vm/stat_refresh", "w");
	if (f) {
		fputs("1\n", f);
		fclose(f);
	}
	f = fopen("/proc/vmstat", "r");
	if (!f)
		return -1;
	while (fscanf(f, "%63s %lld", key, &v) == 2) {
		if (!strcmp(key, "nr_foll_pin_acquired"))
			acq = v;
		else if (!strcmp(key, "nr_foll_pin_released"))
			rel = v;
	}
	fclose(f);
	return acq < 0 || rel < 0 ? -1 : acq - rel;
}

/*
 * A "Key:   N kB" field of /proc/self/status (VmPin: what ib_umem charged
 * to this process' pinned_vm, VmRSS, ...), in kB; -1 if unknown.
 */
static inline long vt_status_kb(const char *key)
{
	size_t klen = strlen(key);
	char line[256];
	long v = -1;
	FILE *f;

	f = fopen("/proc/self/status", "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		if (!strncmp(line, key, klen) && line[klen] == ':') {
			v = strtol(line + klen + 1, NULL, 10);
			break;
		}
	}
	fclose(f);
	return v;
}

/* "4 KiB", "16 MiB", "1 GiB": @len in the largest whole binary unit. */
static inline const char *vt_size_str(size_t len, char *buf, size_t size)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	unsigned int u = 0;

	while (u < 4 && len >= 1024 && !(len % 1024)) {
		len /= 1024;
		u++;
	}
	snprintf(buf, size, "%zu %s", len, units[u]);
	return buf;
}

/*
 * The GID to reach a device's port 1 by: a RoCE v2 GID, link-local if
 * there is one. For a user QP, modify_qp to RTR resolves the destination
 * MAC of a RoCE GID; a link-local GID carries it, any other goes through
 * the IP route, and between two devices of one host that route leads
 * through lo (the resolution then fails with ETIMEDOUT). Also returns
 * the port's active MTU. Returns the GID index, or -1.
 */
static inline int vt_pick_gid(struct ibv_context *ctx, union ibv_gid *gid,
			      enum ibv_mtu *mtu)
{
	struct ibv_port_attr pa;
	int i, best = -1, best_rank = 0;

	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	*mtu = pa.active_mtu;
	for (i = 0; i < pa.gid_tbl_len && i < 256; i++) {
		struct ibv_gid_entry ent;
		int rank;

		if (ibv_query_gid_ex(ctx, 1, i, &ent, 0) ||
		    vt_all_bytes(ent.gid.raw, 16, 0))
			continue;
		rank = 1;
		if (ent.gid_type == IBV_GID_TYPE_ROCE_V2) {
			rank = 2;
			if (ent.gid.raw[0] == 0xfe &&
			    (ent.gid.raw[1] & 0xc0) == 0x80)
				rank = 3;
		}
		if (rank > best_rank) {
			best_rank = rank;
			best = i;
			*gid = ent.gid;
		}
	}
	return best;
}

/*
 * A device opened as the programs use it: a context, one PD, the device's
 * attributes and the GID and MTU of port 1 that vt_pick_gid() chose.
 */
struct vt_dev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_device_attr attr;
	enum ibv_mtu mtu;
	int gid_idx;
	union ibv_gid gid;
	int is_softhca;		/* softhca's sysfs attributes are there */
};

/*
 * Open the device called @name into @d: the context, a PD, the device
 * attributes and a GID of port 1 (vt_pick_gid()). Exits with status 2 if
 * any of them fails, as vt_open() does.
 */
static inline void vt_dev_open(struct vt_dev *d, const char *name)
{
	char path[256];

	d->name = name;
	d->ctx = vt_open(name);
	d->pd = vt_alloc_pd(d->ctx);
	if (ibv_query_device(d->ctx, &d->attr)) {
		vt_bad("ibv_query_device(%s): %s", name, vt_errname(errno));
		exit(2);
	}
	d->gid_idx = vt_pick_gid(d->ctx, &d->gid, &d->mtu);
	if (d->gid_idx < 0) {
		vt_bad("%s: no usable GID on port 1", name);
		exit(2);
	}
	snprintf(path, sizeof(path),
		 "/sys/class/infiniband/%s/softhca_abi_version", name);
	d->is_softhca = access(path, F_OK) == 0;
}

/*
 * An RC connection as ibv_rc_pingpong makes one: the remote end's GID and
 * QP number, and the attributes of each transition.
 */
struct vt_rc_path {
	union ibv_gid dgid;		/* a GID of the peer's port */
	uint32_t dest_qpn;
	uint8_t sgid_index;		/* our GID index */
	enum ibv_mtu mtu;
	int access;			/* qp_access_flags */
	uint32_t psn;			/* sq_psn and rq_psn */
	uint8_t rd_atom;		/* max_rd_atomic and max_dest_rd_atomic */
	uint8_t min_rnr_timer, timeout, retry_cnt, rnr_retry;
};

static inline int vt_qp_to_init(struct ibv_qp *qp, int access)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.pkey_index = 0,
		.port_num = 1,
		.qp_access_flags = access,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			     IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static inline int vt_qp_to_rtr(struct ibv_qp *qp, const struct vt_rc_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTR,
		.path_mtu = p->mtu,
		.dest_qp_num = p->dest_qpn,
		.rq_psn = p->psn,
		.max_dest_rd_atomic = p->rd_atom,
		.min_rnr_timer = p->min_rnr_timer,
		.ah_attr = {
			.is_global = 1,
			.grh = {
				.dgid = p->dgid,
				.sgid_index = p->sgid_index,
				.hop_limit = 1,
			},
			.port_num = 1,
		},
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			     IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			     IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			     IBV_QP_MIN_RNR_TIMER);
}

static inline int vt_qp_to_rts(struct ibv_qp *qp, const struct vt_rc_path *p)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_RTS,
		.sq_psn = p->psn,
		.timeout = p->timeout,
		.retry_cnt = p->retry_cnt,
		.rnr_retry = p->rnr_retry,
		.max_rd_atomic = p->rd_atom,
	};

	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* RESET -> INIT -> RTR -> RTS along @p; 0 or the first errno. */
static inline int vt_rc_connect(struct ibv_qp *qp, const struct vt_rc_path *p)
{
	int ret = vt_qp_to_init(qp, p->access);

	if (!ret)
		ret = vt_qp_to_rtr(qp, p);
	if (!ret)
		ret = vt_qp_to_rts(qp, p);
	return ret;
}

/*
 * A dma-buf from /dev/udmabuf over a sealed memfd of @len bytes (a page
 * multiple); if @map is not NULL, *@map is a shared mapping of the memfd
 * (the dma-buf's memory) or MAP_FAILED. Returns the dma-buf fd, or -1.
 */
static inline int vt_make_dmabuf(size_t len, unsigned char **map)
{
	struct udmabuf_create create = {
		.flags = UDMABUF_FLAGS_CLOEXEC,
		.size = len,
	};
	int memfd, devfd, fd = -1;

	if (map)
		*map = MAP_FAILED;
	devfd = open("/dev/udmabuf", O_RDWR | O_CLOEXEC);
	if (devfd < 0)
		return -1;
	memfd = memfd_create("vt_dmabuf", MFD_ALLOW_SEALING | MFD_CLOEXEC);
	if (memfd >= 0 && !ftruncate(memfd, len) &&
	    !fcntl(memfd, F_ADD_SEALS, F_SEAL_SHRINK)) {
		create.memfd = memfd;
		if (map)
			*map = mmap(NULL, len, PROT_READ | PROT_WRITE,
				    MAP_SHARED, memfd, 0);
		if (!map || *map != MAP_FAILED)
			fd = ioctl(devfd, UDMABUF_CREATE, &create);
	}
	if (memfd >= 0)
		close(memfd);
	close(devfd);
	return fd;
}

#endif /* SOFTHCA_VMTEST_H */
