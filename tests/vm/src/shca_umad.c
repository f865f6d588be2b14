// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_umad UMAD_DEV IBDEV [GARBAGE [SEED]]: MADs from userspace through
 * ib_umad and the GSI QP (QP1) of an RDMA device.
 *
 *  1. well-formed vendor MADs (class 0x0a, GET) sent by one registered
 *     agent to QP1 of the device's own GID come back through a second
 *     agent registered for that class, byte for byte;
 *  2. registrations with bad QPNs, classes, versions, RMPP versions and
 *     flags, unregistration of ids that are not registered;
 *  3. GARBAGE (default 3000) writes of hostile MADs: random bytes,
 *     lengths 0 .. > 256, bad base/class versions, RMPP flags, bad agent
 *     ids, bad or foreign GIDs and GID indexes, no GRH, remote QPN 0, 1 or
 *     random, bad Q_Keys and P_Key indexes, response timeouts. Each write
 *     must return its length or fail with an errno (all are counted);
 *     what the kernel queues for the process is read and thrown away;
 *  4. the agents unregistered, step 1 once more: the path still works.
 *
 * A watchdog (alarm) turns any hang into a failure. Exit status 0 if every
 * check passed, 1 otherwise, 2 if it could not run.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <rdma/ib_user_mad.h>

#include "vmtest.h"

#define HDR		sizeof(struct ib_user_mad_hdr)
#define MAD_SIZE	256
#define VENDOR_CLASS	0x0a	/* vendor range 1: no OUI, no RMPP */
#define GSI_QKEY	0x80010000U
#define MGMT_GET	0x01

static const char *ibdev;
static int fd;
/* the device's GIDs at the start: index, raw GID */
static int gid_idx[16], ngids;
static uint8_t gid_raw[16][16];

static void on_alarm(int sig)
{
	static const char msg[] = "  FAIL - shca_umad: watchdog: hung for 120 s\n";

	(void)sig;
	if (write(1, msg, sizeof(msg) - 1) < 0)
		_exit(1);
	_exit(1);
}

/* the non-zero GIDs of port 1, from sysfs */
static void read_gids(void)
{
	char path[256], line[64];
	int i;

	for (i = 0; i < 256 && ngids < 16; i++) {
		unsigned int w[8];
		FILE *f;
		int j;

		snprintf(path, sizeof(path),
			 "/sys/class/infiniband/%s/ports/1/gids/%d", ibdev, i);
		f = fopen(path, "r");
		if (!f)
			break;
		if (!fgets(line, sizeof(line), f) ||
		    sscanf(line, "%x:%x:%x:%x:%x:%x:%x:%x", &w[0], &w[1], &w[2],
			   &w[3], &w[4], &w[5], &w[6], &w[7]) != 8) {
			fclose(f);
			continue;
		}
		fclose(f);
		for (j = 0; j < 8; j++) {
			gid_raw[ngids][2 * j] = w[j] >> 8;
			gid_raw[ngids][2 * j + 1] = w[j];
		}
		if (vt_all_bytes(gid_raw[ngids], 16, 0))
			continue;
		gid_idx[ngids++] = i;
	}
}

static int reg_agent(uint8_t qpn, uint8_t mgmt_class, uint8_t version,
		     uint8_t rmpp, int methods, uint32_t *id)
{
	struct ib_user_mad_reg_req req;

	memset(&req, 0, sizeof(req));
	req.qpn = qpn;
	req.mgmt_class = mgmt_class;
	req.mgmt_class_version = version;
	req.rmpp_version = rmpp;
	if (methods)
		req.method_mask[0] = 1UL << MGMT_GET;
	if (ioctl(fd, IB_USER_MAD_REGISTER_AGENT, &req))
		return errno;
	*id = req.id;
	return 0;
}

/* a well-formed vendor GET from agent @id to QP1 at GID @g (index @gi) */
static void vendor_mad(unsigned char *buf, uint32_t id, int gi,
		       const uint8_t *g, uint32_t tid)
{
	struct ib_user_mad_hdr *h = (void *)buf;
	unsigned char *m = buf + HDR;
	unsigned int i;

	memset(buf, 0, HDR + MAD_SIZE);
	h->id = id;
	h->qpn = htonl(1);
	h->qkey = htonl(GSI_QKEY);
	h->grh_present = 1;
	h->gid_index = gi;
	h->hop_limit = 64;
	memcpy(h->gid, g, 16);
	m[0] = 1;			/* base version */
	m[1] = VENDOR_CLASS;
	m[2] = 1;			/* class version */
	m[3] = MGMT_GET;
	memcpy(m + 12, &tid, 4);	/* low half of the TID */
	m[16] = 0x12;			/* attribute id */
	for (i = 24; i < MAD_SIZE; i++)
		m[i] = (unsigned char)(i ^ tid);
}

/* read what is queued for the file, waiting up to @ms for the first */
static int drain(int ms, unsigned char *buf, size_t len)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = 0;

	while (poll(&p, 1, n ? 0 : ms) > 0) {
		if (read(fd, buf, len) < 0 && errno != ENOSPC)
			break;
		n++;
	}
	return n;
}

/*
 * Send @count vendor MADs from agent @tx to QP1 of the device's GIDs in
 * turn; each must arrive at agent @rx, intact (but for the upper half of
 * the TID, which the MAD layer sets).
 */
static void exchange(uint32_t tx, uint32_t rx, int count, const char *when)
{
	unsigned char out[HDR + MAD_SIZE], in[HDR + MAD_SIZE + 64];
	int i, sent = 0, got = 0, intact = 0;

	for (i = 0; i < count; i++) {
		int g = i % ngids;
		uint32_t tid = 0x5ca1ab1e + i;
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t r;

		vendor_mad(out, tx, gid_idx[g], gid_raw[g], tid);
		r = write(fd, out, sizeof(out));
		/*
		 * A GID whose IPv6 address is still in duplicate address
		 * detection does not resolve yet: once more, a bit later.
		 */
		if (r < 0 && errno == ETIMEDOUT) {
			vt_info("%s: GID index %d does not resolve yet; again in 2 s",
				when, gid_idx[g]);
			sleep(2);
			r = write(fd, out, sizeof(out));
		}
		if (r != (ssize_t)sizeof(out)) {
			vt_info("%s: write of MAD %d (GID index %d): %s", when, i,
				gid_idx[g], r < 0 ? strerror(errno) : "short");
			continue;
		}
		sent++;
		while (poll(&p, 1, 3000) > 0) {
			struct ib_user_mad_hdr *h = (void *)in;

			r = read(fd, in, sizeof(in));
			if (r < (ssize_t)HDR)
				break;
			if (h->id != rx || h->status)
				continue;	/* a send completion */
			got++;
			if (r == (ssize_t)(HDR + MAD_SIZE) &&
			    !memcmp(in + HDR, out + HDR, 8) &&
			    !memcmp(in + HDR + 12, out + HDR + 12, MAD_SIZE - 12) &&
			    ntohl(h->qpn) == 1)
				intact++;
			else
				vt_info("%s: MAD %d came back as %zd bytes from QPN %u, status %u",
					when, i, r, ntohl(h->qpn), h->status);
			break;
		}
	}
	vt_check(sent == count, "%s: %d of %d vendor MADs sent to QP1 of %s's own GIDs",
		 when, sent, count, ibdev);
	vt_check(got == sent && intact == got,
		 "%s: %d of them received by the second agent, %d intact",
		 when, got, intact);
}

static const uint8_t *rnd_gid(uint8_t *buf)
{
	static const uint8_t other[][16] = {
		{ 0xff, 0x02, [15] = 1 },
		{ [10] = 0xff, [11] = 0xff, 224, 0, 0, 1 },
		{ [10] = 0xff, [11] = 0xff, 10, 0, 2, 2 },
		{ 0x20, 0x01, 0x0d, 0xb8, [15] = 1 },
		{ 0 },
	};
	unsigned int i;

	switch (vt_rndn(8)) {
	case 0: case 1: case 2: case 3: case 4:
		return gid_raw[vt_rndn(ngids)];
	case 5: case 6:
		return other[vt_rndn(5)];
	default:
		for (i = 0; i < 16; i++)
			buf[i] = vt_rnd();
		buf[0] = 0x20 | (buf[0] & 0x1f);	/* global: routed */
		return buf;
	}
}

static void garbage(const uint32_t *ids, int nids, int count)
{
	static const uint8_t classes[] = {
		0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x09, 0x0a, 0x10,
		0x21, 0x30, 0x4f, 0x81, 0x83,
	};
	static unsigned char buf[HDR + 4096 + 64], in[HDR + 4096];
	long errs[134] = { 0 };
	int i, ok = 0, e, drained = 0;

	for (i = 0; i < count; i++) {
		struct ib_user_mad_hdr *h = (void *)buf;
		unsigned char *m = buf + HDR;
		uint8_t gbuf[16];
		size_t len;
		ssize_t r;
		unsigned int j;

		for (j = 0; j < HDR + 320; j += 8) {
			uint64_t v = vt_rnd();

			memcpy(buf + j, &v, 8);
		}
		if (vt_rndn(10)) {		/* a header that mostly makes sense */
			int g = vt_rndn(ngids);

			h->id = vt_rndn(12) ? ids[vt_rndn(nids)] : vt_rndn(4) ? vt_rndn(40) : (uint32_t)vt_rnd();
			h->status = 0;
			h->timeout_ms = vt_rndn(4) ? 0 : vt_rndn(30);
			h->retries = vt_rndn(3);
			h->qpn = htonl(vt_rndn(3) ? 1 : vt_rndn(2) ? 0 : vt_rndn(2) ? vt_rndn(0x1000000) : (uint32_t)vt_rnd());
			h->qkey = htonl(vt_rndn(2) ? GSI_QKEY : vt_rndn(2) ? 0x80000000U | (uint32_t)vt_rnd() : (uint32_t)vt_rnd());
			h->grh_present = vt_rndn(12) ? 1 : 0;
			h->gid_index = vt_rndn(6) ? (unsigned int)gid_idx[g] :
					     (unsigned int)vt_rndn(256);
			memcpy(h->gid, vt_rndn(3) ? gid_raw[g] : rnd_gid(gbuf), 16);
			h->hop_limit = vt_rndn(2) ? 64 : vt_rnd();
			h->pkey_index = vt_rndn(6) ? 0 : vt_rndn(2) ? vt_rndn(4) : vt_rnd();
			m[0] = vt_rndn(24) ? 1 : vt_rnd();			/* base version */
			m[1] = vt_rndn(5) ? classes[vt_rndn(sizeof(classes))] : vt_rnd();
			m[2] = vt_rndn(4) ? 1 + vt_rndn(2) : vt_rnd();		/* class version */
			m[3] = vt_rndn(2) ? 1 + vt_rndn(0x20) : vt_rnd();	/* method, R bit */
			if (vt_rndn(4) == 0) {				/* RMPP header */
				m[24] = 1;				/* rmpp version */
				m[25] = 1 + vt_rndn(4);			/* type */
				m[26] = vt_rnd();				/* flags */
				m[27] = vt_rnd();				/* status */
			}
		}
		switch (vt_rndn(10)) {
		case 0: len = vt_rndn(HDR + 24); break;		/* short */
		case 1: len = HDR + MAD_SIZE + 1 + vt_rndn(64); break;
		case 2: len = HDR + MAD_SIZE + vt_rndn(4096 - MAD_SIZE); break;
		case 3: len = HDR + 24 + vt_rndn(MAD_SIZE - 24); break;
		default: len = HDR + MAD_SIZE; break;
		}
		errno = 0;
		r = write(fd, buf, len);
		if (r == (ssize_t)len) {
			ok++;
		} else {
			e = r < 0 ? errno : 0;
			errs[e >= 0 && e < 133 ? e : 133]++;
		}
		/* keep what the kernel queues for us (receives, timeouts) low */
		if (i % 64 == 63)
			drained += drain(0, in, sizeof(in));
	}
	drained += drain(200, in, sizeof(in));
	vt_info("%d garbage writes: %d accepted; %d MADs or completions read back",
		count, ok, drained);
	for (e = 0; e < 134; e++)
		if (errs[e])
			vt_info("  %-14s %ld", e == 133 ? "other" : e ? vt_errname(e) : "short write",
				errs[e]);
	vt_check(!errs[0] && !errs[133],
		 "every garbage write returned its length or an errno");
}

static void bad_registrations(void)
{
	static const struct { uint8_t qpn, cls, ver, rmpp; } regs[] = {
		{ 0, 0, 0, 0 },			/* QP0: no SMI on RoCE */
		{ 2, 0, 0, 0 }, { 255, 0x0a, 1, 0 },
		{ 1, 0x0a, 0, 0 }, { 1, 0x0a, 255, 0 }, { 1, 0x80, 1, 0 },
		{ 1, 0xff, 1, 0 }, { 1, 0x03, 2, 7 }, { 1, 0x0a, 1, 1 },
		{ 1, 0x01, 1, 0 }, { 1, 0x81, 1, 0 }, { 1, 0x30, 1, 1 },
	};
	struct ib_user_mad_reg_req2 req2;
	unsigned int i, ok = 0, refused = 0;
	uint32_t id, bogus;

	for (i = 0; i < sizeof(regs) / sizeof(regs[0]); i++) {
		int err = reg_agent(regs[i].qpn, regs[i].cls, regs[i].ver,
				    regs[i].rmpp, 1, &id);

		if (err) {
			refused++;
			continue;
		}
		ok++;
		if (ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &id))
			vt_bad("unregistering agent %u: %s", id, strerror(errno));
	}
	memset(&req2, 0, sizeof(req2));
	req2.qpn = 1;
	req2.mgmt_class = 0x0b;
	req2.mgmt_class_version = 1;
	req2.flags = 0x80000000U;	/* unknown flag: refused, told which */
	if (!ioctl(fd, IB_USER_MAD_REGISTER_AGENT2, &req2)) {
		vt_bad("REGISTER_AGENT2 with unknown flags succeeded");
		ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &req2.id);
	}
	for (bogus = 20; bogus < 40; bogus += 7)
		if (!ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &bogus))
			vt_bad("unregistering agent %u, never registered, succeeded", bogus);
	vt_info("odd registrations: %u accepted (and unregistered), %u refused",
		 ok, refused);
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : NULL;
	int count = argc > 3 ? atoi(argv[3]) : 3000;
	uint32_t tx, rx, ids[3];
	int err, nids = 0, i;

	if (argc < 3) {
		fprintf(stderr, "usage: %s /dev/infiniband/umadN IBDEV [GARBAGE [SEED]]\n",
			argv[0]);
		return 2;
	}
	ibdev = argv[2];
	vt_seed(argc > 4 ? strtoull(argv[4], NULL, 0) : 1);
	setvbuf(stdout, NULL, _IOLBF, 0);
	signal(SIGALRM, on_alarm);
	alarm(120);

	read_gids();
	if (!ngids) {
		vt_bad("%s has no GID on port 1", ibdev);
		return 2;
	}
	fd = open(path, O_RDWR);
	if (fd < 0) {
		vt_bad("open %s: %s", path, strerror(errno));
		return 2;
	}
	vt_check(!ioctl(fd, IB_USER_MAD_ENABLE_PKEY),
		 "IB_USER_MAD_ENABLE_PKEY (the 64-byte header with a P_Key index)");

	err = reg_agent(1, 0, 0, 0, 0, &tx);
	vt_check(!err, "agent on QP1 for sending: %s", err ? strerror(err) : "registered");
	err = err ? err : reg_agent(1, VENDOR_CLASS, 1, 0, 1, &rx);
	vt_check(!err, "agent on QP1 for vendor class %#x GETs: %s", VENDOR_CLASS,
		 err ? strerror(err) : "registered");
	if (err)
		return vt_exit();
	ids[nids++] = tx;
	ids[nids++] = rx;
	/* a kernel-RMPP agent for the SA class, if the MAD layer takes it */
	if (!reg_agent(1, 0, 0, 1, 0, &ids[nids]))
		nids++;

	exchange(tx, rx, 2 * ngids, "before");
	bad_registrations();
	garbage(ids, nids, count);
	exchange(tx, rx, 2 * ngids, "after the garbage");

	for (i = 0; i < nids; i++)
		vt_check(!ioctl(fd, IB_USER_MAD_UNREGISTER_AGENT, &ids[i]),
			 "unregister agent %u", ids[i]);
	vt_check(!close(fd), "close %s", path);
	return vt_exit();
}
