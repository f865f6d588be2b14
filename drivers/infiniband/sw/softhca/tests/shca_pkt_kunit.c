// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite for the RoCE v2 packet layer (shca_pkt.c).
 *
 * shca_pkt: the invariant CRC against packets whose ICRC was computed
 *	elsewhere (one captured from softhca and checked by
 *	tests/wire/roce-icrc.py, which implements the specification with
 *	Python's CRC-32; one built and computed by that script alone), a
 *	changed variant field leaving it alone and a changed invariant one
 *	not; every opcode's headers built and parsed back; malformed packets
 *	(each way a length, an opcode, a version or a P_Key can be wrong)
 *	refused.
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <kunit/test.h>

#include "shca_kunit.h"
#include "../shca_wire.h"

MODULE_IMPORT_NS(SHCA_NS_KUNIT);

/*
 * An RC ACK between two link-local IPv6 GIDs, IP header to ICRC, as
 * softhca sent it in the VM (tcpdump), ICRC 0xba6656f3.
 */
static const u8 shca_pkt_ack6[] = {
	0x60, 0x00, 0x00, 0x00, 0x00, 0x1c, 0x11, 0x40, 0xfe, 0x80, 0x00, 0x00,
	0x00, 0x00, 0x00, 0x00, 0x50, 0x54, 0x00, 0xff, 0xfe, 0x12, 0x34, 0x56,
	0xfe, 0x80, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x50, 0x54, 0x00, 0xff,
	0xfe, 0x12, 0x34, 0x57, 0xe2, 0x98, 0x12, 0xb7, 0x00, 0x1c, 0x25, 0xca,
	0x11, 0x00, 0xff, 0xff, 0x00, 0x59, 0x05, 0x1e, 0x00, 0xba, 0x4f, 0xdd,
	0x1f, 0x00, 0x00, 0x01, 0xf3, 0x56, 0x66, 0xba,
};

/*
 * RC RDMA WRITE only with immediate, 8 bytes, 10.0.9.1 -> 10.0.9.2, built
 * by hand; ICRC 0x94233959 computed by tests/wire/roce-icrc.py.
 */
static const u8 shca_pkt_write4[] = {
	0x45, 0x00, 0x00, 0x48, 0x00, 0x00, 0x40, 0x00, 0x40, 0x11, 0x00, 0x00,
	0x0a, 0x00, 0x09, 0x01, 0x0a, 0x00, 0x09, 0x02, 0xc1, 0x23, 0x12, 0xb7,
	0x00, 0x34, 0x00, 0x00, 0x0b, 0x00, 0xff, 0xff, 0x00, 0x12, 0x34, 0x56,
	0x80, 0x00, 0x00, 0x2a, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77, 0x88,
	0xab, 0xcd, 0xef, 0x01, 0x00, 0x00, 0x00, 0x08, 0xde, 0xad, 0xbe, 0xef,
	0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x59, 0x39, 0x23, 0x94,
};

/* The ICRC of a packet laid out as the vectors are (IP, UDP, BTH ...). */
static u32 shca_pkt_icrc_of(const u8 *p, u32 len)
{
	u32 ip = (p[0] >> 4) == 4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	const u8 *uh = p + ip, *bth = uh + sizeof(struct udphdr);

	return shca_icrc(p, (const struct udphdr *)uh, bth,
			 len - ip - sizeof(struct udphdr) - SHCA_ICRC_BYTES);
}

static void shca_pkt_icrc_vectors(struct kunit *test)
{
	KUNIT_EXPECT_EQ(test, shca_pkt_icrc_of(shca_pkt_ack6,
					       sizeof(shca_pkt_ack6)),
			0xba6656f3U);
	KUNIT_EXPECT_EQ(test, shca_pkt_icrc_of(shca_pkt_write4,
					       sizeof(shca_pkt_write4)),
			0x94233959U);
}

/*
 * Fields routers change (IPv4 TOS, TTL, checksum; IPv6 traffic class,
 * flow label, hop limit; the UDP checksum; FECN/BECN) are outside the
 * ICRC; any other byte is inside it.
 */
static void shca_pkt_icrc_masks(struct kunit *test)
{
	static const u8 variant4[] = { 1, 8, 10, 11, 26, 27, 32 };
	static const u8 variant6[] = { 0, 1, 2, 3, 7, 46, 47, 52 };
	u8 p[sizeof(shca_pkt_write4)];
	u32 i, want = 0x94233959U;

	for (i = 0; i < ARRAY_SIZE(variant4); i++) {
		memcpy(p, shca_pkt_write4, sizeof(p));
		/* The version nibble of IPv6's first byte stays. */
		p[variant4[i]] ^= 0xa5;
		KUNIT_EXPECT_EQ_MSG(test, shca_pkt_icrc_of(p, sizeof(p)), want,
				    "IPv4 byte %u", variant4[i]);
	}
	for (i = 0; i < sizeof(p) - SHCA_ICRC_BYTES; i++) {
		bool variant = memchr(variant4, i, sizeof(variant4));

		if (variant)
			continue;
		memcpy(p, shca_pkt_write4, sizeof(p));
		p[i] ^= 0x01;
		KUNIT_EXPECT_NE_MSG(test, shca_pkt_icrc_of(p, sizeof(p)), want,
				    "IPv4 byte %u", i);
	}

	want = 0xba6656f3U;
	for (i = 0; i < ARRAY_SIZE(variant6); i++) {
		u8 *q = p;

		memcpy(p, shca_pkt_ack6, sizeof(shca_pkt_ack6));
		q[variant6[i]] ^= variant6[i] ? 0xa5 : 0x05;
		KUNIT_EXPECT_EQ_MSG(test,
				    shca_pkt_icrc_of(p, sizeof(shca_pkt_ack6)),
				    want, "IPv6 byte %u", variant6[i]);
	}
	/* The payload length, an address, the QPN, the PSN: inside. */
	for (i = 4; i < sizeof(shca_pkt_ack6) - SHCA_ICRC_BYTES; i += 9) {
		if (memchr(variant6, i, sizeof(variant6)))
			continue;
		memcpy(p, shca_pkt_ack6, sizeof(shca_pkt_ack6));
		p[i] ^= 0x10;
		KUNIT_EXPECT_NE_MSG(test,
				    shca_pkt_icrc_of(p, sizeof(shca_pkt_ack6)),
				    want, "IPv6 byte %u", i);
	}
}

/* The vectors parse to what they say. */
static void shca_pkt_parse_vectors(struct kunit *test)
{
	struct shca_pkt pkt = {};
	const u8 *bth = shca_pkt_write4 + sizeof(struct iphdr) +
			sizeof(struct udphdr);

	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&pkt, bth,
					     shca_pkt_write4 +
					     sizeof(shca_pkt_write4) - bth), 0);
	KUNIT_EXPECT_EQ(test, pkt.opcode,
			(u8)IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE);
	KUNIT_EXPECT_EQ(test, pkt.qpn, 0x123456U);
	KUNIT_EXPECT_EQ(test, pkt.psn, 0x2aU);
	KUNIT_EXPECT_TRUE(test, pkt.ackreq);
	KUNIT_EXPECT_FALSE(test, pkt.se);
	KUNIT_EXPECT_EQ(test, pkt.va, 0x1122334455667788ULL);
	KUNIT_EXPECT_EQ(test, pkt.rkey, 0xabcdef01U);
	KUNIT_EXPECT_EQ(test, pkt.dma_len, 8U);
	KUNIT_EXPECT_EQ(test, be32_to_cpu(pkt.imm), 0xdeadbeefU);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 8U);
	KUNIT_EXPECT_EQ(test, pkt.payload[0], 1);
	KUNIT_EXPECT_EQ(test, pkt.payload[7], 8);

	bth = shca_pkt_ack6 + sizeof(struct ipv6hdr) + sizeof(struct udphdr);
	memset(&pkt, 0, sizeof(pkt));
	KUNIT_ASSERT_EQ(test, shca_pkt_parse(&pkt, bth,
					     shca_pkt_ack6 +
					     sizeof(shca_pkt_ack6) - bth), 0);
	KUNIT_EXPECT_EQ(test, pkt.opcode, (u8)IB_OPCODE_RC_ACKNOWLEDGE);
	KUNIT_EXPECT_EQ(test, pkt.qpn, 0x59051eU);
	KUNIT_EXPECT_EQ(test, pkt.aeth >> 24, 0x1fU);	/* ACK, no credits */
	KUNIT_EXPECT_EQ(test, pkt.aeth & 0xffffff, 1U);	/* MSN */
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
}

/* Every opcode softhca speaks: built, parsed back, fields kept. */
static void shca_pkt_round_trip(struct kunit *test)
{
	u8 buf[SHCA_MAX_HDR_BYTES + 8 + SHCA_ICRC_BYTES];
	unsigned int opcode, n = 0;

	for (opcode = 0; opcode < 256; opcode++) {
		const struct shca_op *op = shca_op_get(opcode);
		struct shca_pkt in = {
			.opcode = opcode,
			.op = op,
			.se = true,
			.ackreq = true,
			.qpn = 0xabcdef,
			.psn = 0xfffffe,
			.va = 0x0102030405060708ULL,
			.rkey = 0x11223344,
			.dma_len = 0x55667788,
			.swap_add = 0x99aabbccddeeff00ULL,
			.compare = 0x1020304050607080ULL,
			.aeth = 0x60123456,
			.atomic_orig = 0xfedcba9876543210ULL,
			.imm = cpu_to_be32(0xcafef00d),
			.ieth = 0x0badcafe,
			.qkey = 0x80010000,
			.src_qp = 0x000001,
		}, out = {};
		u32 len, paylen;

		if (!op)
			continue;
		n++;
		paylen = (op->flags & SHCA_OP_PAYLOAD) ? 5 : 0;
		in.pad = -paylen & 3;
		len = shca_pkt_build(buf, &in);
		KUNIT_EXPECT_EQ_MSG(test, len, (u32)op->hdr_len, "opcode %#x",
				    opcode);
		memset(buf + len, 0x5a, paylen + in.pad + SHCA_ICRC_BYTES);
		len += paylen + in.pad + SHCA_ICRC_BYTES;
		KUNIT_ASSERT_EQ_MSG(test, shca_pkt_parse(&out, buf, len), 0,
				    "opcode %#x", opcode);
		KUNIT_EXPECT_EQ(test, out.opcode, (u8)opcode);
		KUNIT_EXPECT_PTR_EQ(test, out.op, op);
		KUNIT_EXPECT_TRUE(test, out.se);
		KUNIT_EXPECT_TRUE(test, out.ackreq);
		KUNIT_EXPECT_EQ(test, out.qpn, in.qpn);
		KUNIT_EXPECT_EQ(test, out.psn, in.psn);
		KUNIT_EXPECT_EQ(test, out.paylen, paylen);
		KUNIT_EXPECT_PTR_EQ(test, out.payload, (const u8 *)buf + op->hdr_len);
		if (op->flags & (SHCA_OP_RETH | SHCA_OP_ATMETH)) {
			KUNIT_EXPECT_EQ(test, out.va, in.va);
			KUNIT_EXPECT_EQ(test, out.rkey, in.rkey);
		}
		if (op->flags & SHCA_OP_RETH)
			KUNIT_EXPECT_EQ(test, out.dma_len, in.dma_len);
		if (op->flags & SHCA_OP_ATMETH) {
			KUNIT_EXPECT_EQ(test, out.swap_add, in.swap_add);
			KUNIT_EXPECT_EQ(test, out.compare, in.compare);
		}
		if (op->flags & SHCA_OP_AETH)
			KUNIT_EXPECT_EQ(test, out.aeth, in.aeth);
		if (op->flags & SHCA_OP_ATMACK)
			KUNIT_EXPECT_EQ(test, out.atomic_orig, in.atomic_orig);
		if (op->flags & SHCA_OP_IMM)
			KUNIT_EXPECT_EQ(test, out.imm, in.imm);
		if (op->flags & SHCA_OP_IETH)
			KUNIT_EXPECT_EQ(test, out.ieth, in.ieth);
		if (op->flags & SHCA_OP_DETH) {
			KUNIT_EXPECT_EQ(test, out.qkey, in.qkey);
			KUNIT_EXPECT_EQ(test, out.src_qp, in.src_qp);
		}
		/* One transport, and a request or not by the table's rule. */
		KUNIT_EXPECT_EQ(test, hweight32(op->flags & (SHCA_OP_RC |
				SHCA_OP_UC | SHCA_OP_UD)), 1U);
	}
	/* RC 23, UC 12, UD 2 */
	KUNIT_EXPECT_EQ(test, n, 37U);
}

/* A malformed packet, and why it is one. */
struct shca_pkt_bad {
	const char *name;
	u8 opcode;
	u8 b1;		/* second BTH byte: SE, M, pad, version */
	u16 pkey;
	int len;	/* bytes from the BTH on; negative: header length + */
};

static const struct shca_pkt_bad shca_pkt_bad_cases[] = {
	{ "shorter than a BTH", IB_OPCODE_RC_SEND_ONLY, 0, 0xffff, 10 },
	{ "BTH without ICRC", IB_OPCODE_RC_SEND_ONLY, 0, 0xffff, 12 },
	{ "reserved opcode 0x15", 0x15, 0, 0xffff, 64 },
	{ "RD opcode", 0x40, 0, 0xffff, 64 },
	{ "CNP", 0x81, 0, 0xffff, 64 },
	{ "FLUSH", IB_OPCODE_RC_FLUSH, 0, 0xffff, 64 },
	{ "UC READ request", IB_OPCODE_UC | IB_OPCODE_RDMA_READ_REQUEST, 0,
	  0xffff, 64 },
	{ "UD SEND first", IB_OPCODE_UD | IB_OPCODE_SEND_FIRST, 0, 0xffff, 64 },
	{ "transport version 1", IB_OPCODE_RC_SEND_ONLY, 0x01, 0xffff, 64 },
	{ "another partition", IB_OPCODE_RC_SEND_ONLY, 0, 0x8001, 64 },
	{ "RETH cut short", IB_OPCODE_RC_RDMA_WRITE_ONLY, 0, 0xffff,
	  SHCA_BTH_BYTES + 8 + SHCA_ICRC_BYTES },
	{ "AtomicETH cut short", IB_OPCODE_RC_FETCH_ADD, 0, 0xffff,
	  SHCA_BTH_BYTES + SHCA_ATMETH_BYTES },
	{ "DETH cut short", IB_OPCODE_UD_SEND_ONLY, 0, 0xffff,
	  SHCA_BTH_BYTES + 4 + SHCA_ICRC_BYTES },
	{ "pad longer than the payload", IB_OPCODE_RC_SEND_ONLY, 0x30, 0xffff,
	  SHCA_BTH_BYTES + 2 + SHCA_ICRC_BYTES },
	{ "payload on an ACK", IB_OPCODE_RC_ACKNOWLEDGE, 0, 0xffff,
	  SHCA_BTH_BYTES + SHCA_AETH_BYTES + 4 + SHCA_ICRC_BYTES },
	{ "payload on a READ request", IB_OPCODE_RC_RDMA_READ_REQUEST, 0,
	  0xffff, SHCA_BTH_BYTES + SHCA_RETH_BYTES + 4 + SHCA_ICRC_BYTES },
	{ "pad on an atomic", IB_OPCODE_RC_COMPARE_SWAP, 0x10, 0xffff,
	  SHCA_BTH_BYTES + SHCA_ATMETH_BYTES + SHCA_ICRC_BYTES },
};

static void shca_pkt_bad_desc(const struct shca_pkt_bad *c, char *desc)
{
	strscpy(desc, c->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(shca_pkt_bad, shca_pkt_bad_cases, shca_pkt_bad_desc);

static void shca_pkt_malformed(struct kunit *test)
{
	const struct shca_pkt_bad *c = test->param_value;
	struct shca_pkt pkt = {};
	u8 buf[64] = {};

	buf[0] = c->opcode;
	buf[1] = c->b1;
	put_unaligned_be16(c->pkey, buf + 2);
	put_unaligned_be32(0x123456, buf + 4);
	KUNIT_EXPECT_EQ(test, shca_pkt_parse(&pkt, buf, c->len), -EINVAL);
}

/* The limited-membership default P_Key is the default partition too. */
static void shca_pkt_pkey(struct kunit *test)
{
	struct shca_pkt pkt = {};
	u8 buf[SHCA_BTH_BYTES + SHCA_ICRC_BYTES] = {
		IB_OPCODE_RC_SEND_ONLY, 0, 0x7f, 0xff,
	};

	KUNIT_EXPECT_EQ(test, shca_pkt_parse(&pkt, buf, sizeof(buf)), 0);
	KUNIT_EXPECT_EQ(test, pkt.paylen, 0U);
}

static struct kunit_case shca_pkt_cases[] = {
	KUNIT_CASE(shca_pkt_icrc_vectors),
	KUNIT_CASE(shca_pkt_icrc_masks),
	KUNIT_CASE(shca_pkt_parse_vectors),
	KUNIT_CASE(shca_pkt_round_trip),
	KUNIT_CASE_PARAM(shca_pkt_malformed, shca_pkt_bad_gen_params),
	KUNIT_CASE(shca_pkt_pkey),
	{}
};

static struct kunit_suite shca_pkt_suite = {
	.name = "shca_pkt",
	.test_cases = shca_pkt_cases,
};

kunit_test_suites(&shca_pkt_suite);
