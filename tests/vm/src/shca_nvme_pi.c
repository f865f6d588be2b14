// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * shca_nvme_pi: one NVMe read or write of one logical block together with
 * its 8-byte T10 protection information tuple, through the namespace's
 * passthrough ioctl (NVME_IOCTL_IO_CMD with a metadata buffer), as
 * nvme-cli's "read/write --metadata" does. The block layer never asks for
 * an application tag check (PRCHK_APP, LBAT/LBATM) and never shows the
 * tuple to userspace; this does both, for tests/vm/87-nvme-pi.sh.
 *
 *   shca_nvme_pi DEV read LBA
 *	reads block LBA and its tuple with no check asked (PRINFO 0), prints
 *	"status 0x0 guard 0xGGGG crc 0xCCCC app 0xAAAA ref 0xRRRRRRRR":
 *	the tuple as the device stores it and the CRC16-T10DIF of the data
 *	that came with it
 *   shca_nvme_pi DEV write LBA APP
 *	writes block LBA (a pattern made from LBA and APP) with the tuple
 *	{CRC16-T10DIF of the data, APP, LBA} and every check asked
 *	(PRCHK_GUARD|APP|REF, reference tag LBA, LBAT APP, LBATM 0xffff),
 *	prints "status 0xSSS"
 *
 * The status is the command's NVMe status (0x282 guard, 0x283 application
 * tag, 0x284 reference tag check error); exit status 0 when it is 0, 1
 * when it is not, 2 when the command could not be issued.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/fs.h>
#include <linux/nvme_ioctl.h>

#define OP_WRITE	0x01
#define OP_READ		0x02
#define PRCHK_REF	(1u << 0)
#define PRCHK_APP	(1u << 1)
#define PRCHK_GUARD	(1u << 2)
#define PI_SIZE		8

/* CRC16-T10DIF: polynomial 0x8bb7, not reflected, no final xor, seed 0 */
static uint16_t crc_t10dif(const uint8_t *p, size_t len)
{
	uint16_t crc = 0;
	size_t i;
	int b;

	for (i = 0; i < len; i++) {
		crc ^= (uint16_t)p[i] << 8;
		for (b = 0; b < 8; b++)
			crc = crc & 0x8000 ? (uint16_t)(crc << 1) ^ 0x8bb7 :
					     (uint16_t)(crc << 1);
	}
	return crc;
}

static void put_be(uint8_t *p, uint32_t v, int n)
{
	while (n--) {
		p[n] = v & 0xff;
		v >>= 8;
	}
}

static uint32_t get_be(const uint8_t *p, int n)
{
	uint32_t v = 0;
	int i;

	for (i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static int usage(void)
{
	fprintf(stderr, "usage: shca_nvme_pi DEV read LBA\n"
			"       shca_nvme_pi DEV write LBA APP\n");
	return 2;
}

int main(int argc, char **argv)
{
	struct nvme_passthru_cmd cmd;
	uint8_t *data, *meta;
	unsigned long long lba;
	unsigned long app = 0;
	int fd, nsid, bs, ret, wr;
	size_t i;

	if (argc < 4)
		return usage();
	wr = !strcmp(argv[2], "write");
	if ((!wr && strcmp(argv[2], "read")) || (wr && argc < 5))
		return usage();
	lba = strtoull(argv[3], NULL, 0);
	if (wr)
		app = strtoul(argv[4], NULL, 0) & 0xffff;

	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
		return 2;
	}
	nsid = ioctl(fd, NVME_IOCTL_ID);
	if (nsid <= 0 || ioctl(fd, BLKSSZGET, &bs) || bs <= 0) {
		fprintf(stderr, "%s: not an NVMe namespace (%s)\n", argv[1],
			strerror(errno));
		return 2;
	}
	if (posix_memalign((void **)&data, 4096, bs) ||
	    posix_memalign((void **)&meta, 4096, 4096))
		return 2;
	memset(meta, 0, 4096);

	memset(&cmd, 0, sizeof(cmd));
	cmd.nsid = nsid;
	cmd.addr = (uintptr_t)data;
	cmd.data_len = bs;
	cmd.metadata = (uintptr_t)meta;
	cmd.metadata_len = PI_SIZE;
	cmd.cdw10 = (uint32_t)lba;
	cmd.cdw11 = (uint32_t)(lba >> 32);
	/* cdw12: number of blocks - 1 (0: one), PRINFO in bits 29:26 */
	if (wr) {
		for (i = 0; i < (size_t)bs; i++)
			data[i] = (uint8_t)(lba * 131 + app * 7 + i * 13 + (i >> 8));
		put_be(meta, crc_t10dif(data, bs), 2);
		put_be(meta + 2, app, 2);
		put_be(meta + 4, (uint32_t)lba, 4);
		cmd.opcode = OP_WRITE;
		cmd.cdw12 = (PRCHK_GUARD | PRCHK_APP | PRCHK_REF) << 26;
		cmd.cdw14 = (uint32_t)lba;		/* expected initial ref tag */
		cmd.cdw15 = app | 0xffffu << 16;	/* LBAT, LBATM */
	} else {
		memset(data, 0, bs);
		cmd.opcode = OP_READ;
	}
	ret = ioctl(fd, NVME_IOCTL_IO_CMD, &cmd);
	if (ret < 0) {
		fprintf(stderr, "NVME_IOCTL_IO_CMD: %s\n", strerror(errno));
		return 2;
	}
	if (wr || ret)
		printf("status 0x%x\n", ret);
	else
		printf("status 0x0 guard 0x%04x crc 0x%04x app 0x%04x ref 0x%08x\n",
		       get_be(meta, 2), crc_t10dif(data, bs), get_be(meta + 2, 2),
		       get_be(meta + 4, 4));
	close(fd);
	return ret ? 1 : 0;
}
