// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: RoCE v2 packets
 *
 * The packet formats of RoCE v2 (IBTA vol. 1 ch. 9 and annex A17): after
 * the UDP header (destination port 4791) come the base transport header
 * (BTH), the extension headers the opcode implies, the payload padded to
 * a multiple of four bytes, and the invariant CRC (ICRC). The table below
 * says which headers each opcode softhca speaks carries; a packet with
 * any other opcode, another transport header version, a P_Key outside
 * the default partition, or lengths that do not add up is malformed and
 * never reaches a QP. Nothing here trusts a length it did not check.
 *
 * The ICRC is CRC-32 (the Ethernet polynomial, the kernel's crc32_le())
 * over the packet from the IP header to the end of the payload with the
 * fields routers may change masked to all ones - IPv4 TOS, TTL and
 * header checksum; IPv6 traffic class, flow label and hop limit; the UDP
 * checksum; the BTH's reserved byte (FECN/BECN) - preceded by eight bytes
 * of ones standing for InfiniBand's local route header. It is sent least
 * significant byte first.
 */

#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/checksum.h>

#include "shca_verbs.h"
#include "shca_wire.h"

/* Flag sets the table repeats. */
#define F_SEND	(SHCA_OP_REQ | SHCA_OP_SEND | SHCA_OP_PAYLOAD)
#define F_WRITE	(SHCA_OP_REQ | SHCA_OP_WRITE | SHCA_OP_PAYLOAD)
#define F_ONLY	(SHCA_OP_FIRST | SHCA_OP_LAST)
#define F_RESP	(SHCA_OP_RC | SHCA_OP_PAYLOAD)

#define OP(f, extra)	{ .flags = (f), .hdr_len = SHCA_BTH_BYTES + (extra) }

const struct shca_op shca_ops[256] = {
	[IB_OPCODE_RC_SEND_FIRST] = OP(SHCA_OP_RC | F_SEND | SHCA_OP_FIRST, 0),
	[IB_OPCODE_RC_SEND_MIDDLE] = OP(SHCA_OP_RC | F_SEND, 0),
	[IB_OPCODE_RC_SEND_LAST] = OP(SHCA_OP_RC | F_SEND | SHCA_OP_LAST, 0),
	[IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE] =
		OP(SHCA_OP_RC | F_SEND | SHCA_OP_LAST | SHCA_OP_IMM, SHCA_IMM_BYTES),
	[IB_OPCODE_RC_SEND_ONLY] = OP(SHCA_OP_RC | F_SEND | F_ONLY, 0),
	[IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE] =
		OP(SHCA_OP_RC | F_SEND | F_ONLY | SHCA_OP_IMM, SHCA_IMM_BYTES),
	[IB_OPCODE_RC_RDMA_WRITE_FIRST] =
		OP(SHCA_OP_RC | F_WRITE | SHCA_OP_FIRST | SHCA_OP_RETH, SHCA_RETH_BYTES),
	[IB_OPCODE_RC_RDMA_WRITE_MIDDLE] = OP(SHCA_OP_RC | F_WRITE, 0),
	[IB_OPCODE_RC_RDMA_WRITE_LAST] = OP(SHCA_OP_RC | F_WRITE | SHCA_OP_LAST, 0),
	[IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE] =
		OP(SHCA_OP_RC | F_WRITE | SHCA_OP_LAST | SHCA_OP_IMM, SHCA_IMM_BYTES),
	[IB_OPCODE_RC_RDMA_WRITE_ONLY] =
		OP(SHCA_OP_RC | F_WRITE | F_ONLY | SHCA_OP_RETH, SHCA_RETH_BYTES),
	[IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE] =
		OP(SHCA_OP_RC | F_WRITE | F_ONLY | SHCA_OP_RETH | SHCA_OP_IMM,
		   SHCA_RETH_BYTES + SHCA_IMM_BYTES),
	[IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE] =
		OP(SHCA_OP_RC | F_SEND | SHCA_OP_LAST | SHCA_OP_IETH,
		   SHCA_IETH_BYTES),
	[IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE] =
		OP(SHCA_OP_RC | F_SEND | F_ONLY | SHCA_OP_IETH,
		   SHCA_IETH_BYTES),
	[IB_OPCODE_RC_RDMA_READ_REQUEST] =
		OP(SHCA_OP_RC | SHCA_OP_REQ | SHCA_OP_READ | F_ONLY |
		   SHCA_OP_RETH, SHCA_RETH_BYTES),
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST] =
		OP(F_RESP | SHCA_OP_FIRST | SHCA_OP_AETH, SHCA_AETH_BYTES),
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE] = OP(F_RESP, 0),
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST] =
		OP(F_RESP | SHCA_OP_LAST | SHCA_OP_AETH, SHCA_AETH_BYTES),
	[IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY] =
		OP(F_RESP | F_ONLY | SHCA_OP_AETH, SHCA_AETH_BYTES),
	[IB_OPCODE_RC_ACKNOWLEDGE] =
		OP(SHCA_OP_RC | F_ONLY | SHCA_OP_AETH, SHCA_AETH_BYTES),
	[IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE] =
		OP(SHCA_OP_RC | F_ONLY | SHCA_OP_AETH | SHCA_OP_ATMACK,
		   SHCA_AETH_BYTES + SHCA_ATMACK_BYTES),
	[IB_OPCODE_RC_COMPARE_SWAP] =
		OP(SHCA_OP_RC | SHCA_OP_REQ | SHCA_OP_ATOMIC | F_ONLY |
		   SHCA_OP_ATMETH, SHCA_ATMETH_BYTES),
	[IB_OPCODE_RC_FETCH_ADD] =
		OP(SHCA_OP_RC | SHCA_OP_REQ | SHCA_OP_ATOMIC | F_ONLY |
		   SHCA_OP_ATMETH, SHCA_ATMETH_BYTES),
	[IB_OPCODE_UC_SEND_FIRST] = OP(SHCA_OP_UC | F_SEND | SHCA_OP_FIRST, 0),
	[IB_OPCODE_UC_SEND_MIDDLE] = OP(SHCA_OP_UC | F_SEND, 0),
	[IB_OPCODE_UC_SEND_LAST] = OP(SHCA_OP_UC | F_SEND | SHCA_OP_LAST, 0),
	[IB_OPCODE_UC_SEND_LAST_WITH_IMMEDIATE] =
		OP(SHCA_OP_UC | F_SEND | SHCA_OP_LAST | SHCA_OP_IMM, SHCA_IMM_BYTES),
	[IB_OPCODE_UC_SEND_ONLY] = OP(SHCA_OP_UC | F_SEND | F_ONLY, 0),
	[IB_OPCODE_UC_SEND_ONLY_WITH_IMMEDIATE] =
		OP(SHCA_OP_UC | F_SEND | F_ONLY | SHCA_OP_IMM, SHCA_IMM_BYTES),
	[IB_OPCODE_UC_RDMA_WRITE_FIRST] =
		OP(SHCA_OP_UC | F_WRITE | SHCA_OP_FIRST | SHCA_OP_RETH, SHCA_RETH_BYTES),
	[IB_OPCODE_UC_RDMA_WRITE_MIDDLE] = OP(SHCA_OP_UC | F_WRITE, 0),
	[IB_OPCODE_UC_RDMA_WRITE_LAST] = OP(SHCA_OP_UC | F_WRITE | SHCA_OP_LAST, 0),
	[IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE] =
		OP(SHCA_OP_UC | F_WRITE | SHCA_OP_LAST | SHCA_OP_IMM, SHCA_IMM_BYTES),
	[IB_OPCODE_UC_RDMA_WRITE_ONLY] =
		OP(SHCA_OP_UC | F_WRITE | F_ONLY | SHCA_OP_RETH, SHCA_RETH_BYTES),
	[IB_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE] =
		OP(SHCA_OP_UC | F_WRITE | F_ONLY | SHCA_OP_RETH | SHCA_OP_IMM,
		   SHCA_RETH_BYTES + SHCA_IMM_BYTES),
	[IB_OPCODE_UD_SEND_ONLY] =
		OP(SHCA_OP_UD | F_SEND | F_ONLY | SHCA_OP_DETH,
		   SHCA_DETH_BYTES),
	[IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE] =
		OP(SHCA_OP_UD | F_SEND | F_ONLY | SHCA_OP_DETH | SHCA_OP_IMM,
		   SHCA_DETH_BYTES + SHCA_IMM_BYTES),
};
EXPORT_SYMBOL_IF_KUNIT(shca_ops);

/**
 * shca_pkt_parse() - decode and check a packet's transport headers
 * @pkt: filled in (the address fields are left alone)
 * @bth: the packet from its BTH on
 * @len: bytes from @bth to the end of the ICRC
 *
 * Checks that the opcode is one softhca speaks, the transport header
 * version is 0, the P_Key is the default partition's, and the headers,
 * the pad and the ICRC fit in @len. The ICRC itself is the caller's
 * (it covers the IP and UDP headers).
 *
 * Return: 0, or -EINVAL for a malformed packet.
 */
int shca_pkt_parse(struct shca_pkt *pkt, const u8 *bth, u32 len)
{
	const struct shca_op *op;
	const u8 *h;
	u32 flags, b0, b1, b2;

	if (len < SHCA_BTH_BYTES + SHCA_ICRC_BYTES)
		return -EINVAL;
	b0 = get_unaligned_be32(bth);
	b1 = get_unaligned_be32(bth + 4);
	b2 = get_unaligned_be32(bth + 8);
	pkt->opcode = b0 >> 24;
	op = shca_op_get(pkt->opcode);
	if (!op)
		return -EINVAL;
	/* Transport header version 0; the default P_Key, either membership. */
	if ((b0 >> IB_BTH_TVER_SHIFT) & IB_BTH_TVER_MASK)
		return -EINVAL;
	if ((b0 & 0x7fff) != 0x7fff)
		return -EINVAL;
	if (len < op->hdr_len + SHCA_ICRC_BYTES)
		return -EINVAL;
	flags = op->flags;
	pkt->op = op;
	pkt->se = !!(b0 & IB_BTH_SOLICITED);
	pkt->pad = (b0 >> IB_BTH_PAD_SHIFT) & IB_BTH_PAD_MASK;
	pkt->qpn = b1 & SHCA_QPN_MAX;
	pkt->ackreq = !!(b2 & IB_BTH_REQ_ACK);
	pkt->psn = b2 & SHCA_PSN_MASK;
	pkt->paylen = len - op->hdr_len - SHCA_ICRC_BYTES;
	if (pkt->pad > pkt->paylen ||
	    (!(flags & SHCA_OP_PAYLOAD) && pkt->paylen))
		return -EINVAL;
	pkt->paylen -= pkt->pad;
	pkt->payload = bth + op->hdr_len;

	h = bth + SHCA_BTH_BYTES;
	if (flags & SHCA_OP_DETH) {
		pkt->qkey = get_unaligned_be32(h);
		pkt->src_qp = get_unaligned_be32(h + 4) & SHCA_QPN_MAX;
		h += SHCA_DETH_BYTES;
	}
	if (flags & SHCA_OP_RETH) {
		pkt->va = get_unaligned_be64(h);
		pkt->rkey = get_unaligned_be32(h + 8);
		pkt->dma_len = get_unaligned_be32(h + 12);
		h += SHCA_RETH_BYTES;
	}
	if (flags & SHCA_OP_ATMETH) {
		pkt->va = get_unaligned_be64(h);
		pkt->rkey = get_unaligned_be32(h + 8);
		pkt->swap_add = get_unaligned_be64(h + 12);
		pkt->compare = get_unaligned_be64(h + 20);
		h += SHCA_ATMETH_BYTES;
	}
	if (flags & SHCA_OP_AETH) {
		pkt->aeth = get_unaligned_be32(h);
		h += SHCA_AETH_BYTES;
	}
	if (flags & SHCA_OP_ATMACK) {
		pkt->atomic_orig = get_unaligned_be64(h);
		h += SHCA_ATMACK_BYTES;
	}
	if (flags & SHCA_OP_IMM) {
		memcpy(&pkt->imm, h, sizeof(pkt->imm));
		h += SHCA_IMM_BYTES;
	}
	if (flags & SHCA_OP_IETH) {
		pkt->ieth = get_unaligned_be32(h);
		h += SHCA_IETH_BYTES;
	}
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_pkt_parse);

/**
 * shca_pkt_build() - write a packet's transport headers
 * @bth: where the BTH goes; room for SHCA_MAX_HDR_BYTES
 * @pkt: the packet: @pkt->op (of @pkt->opcode) says which fields count
 *
 * Return: bytes written (the opcode's header length).
 */
u32 shca_pkt_build(u8 *bth, const struct shca_pkt *pkt)
{
	u32 flags = pkt->op->flags;
	u8 *h;

	put_unaligned_be32((u32)pkt->opcode << 24 |
			   (pkt->se ? IB_BTH_SOLICITED : 0) |
			   (u32)(pkt->pad & IB_BTH_PAD_MASK) << IB_BTH_PAD_SHIFT |
			   SHCA_DEFAULT_PKEY, bth);
	put_unaligned_be32(pkt->qpn & SHCA_QPN_MAX, bth + 4);
	put_unaligned_be32((pkt->ackreq ? IB_BTH_REQ_ACK : 0) |
			   (pkt->psn & SHCA_PSN_MASK), bth + 8);

	h = bth + SHCA_BTH_BYTES;
	if (flags & SHCA_OP_DETH) {
		put_unaligned_be32(pkt->qkey, h);
		put_unaligned_be32(pkt->src_qp & SHCA_QPN_MAX, h + 4);
		h += SHCA_DETH_BYTES;
	}
	if (flags & SHCA_OP_RETH) {
		put_unaligned_be64(pkt->va, h);
		put_unaligned_be32(pkt->rkey, h + 8);
		put_unaligned_be32(pkt->dma_len, h + 12);
		h += SHCA_RETH_BYTES;
	}
	if (flags & SHCA_OP_ATMETH) {
		put_unaligned_be64(pkt->va, h);
		put_unaligned_be32(pkt->rkey, h + 8);
		put_unaligned_be64(pkt->swap_add, h + 12);
		put_unaligned_be64(pkt->compare, h + 20);
		h += SHCA_ATMETH_BYTES;
	}
	if (flags & SHCA_OP_AETH) {
		put_unaligned_be32(pkt->aeth, h);
		h += SHCA_AETH_BYTES;
	}
	if (flags & SHCA_OP_ATMACK) {
		put_unaligned_be64(pkt->atomic_orig, h);
		h += SHCA_ATMACK_BYTES;
	}
	if (flags & SHCA_OP_IMM) {
		memcpy(h, &pkt->imm, sizeof(pkt->imm));
		h += SHCA_IMM_BYTES;
	}
	if (flags & SHCA_OP_IETH) {
		put_unaligned_be32(pkt->ieth, h);
		h += SHCA_IETH_BYTES;
	}
	return h - bth;
}
EXPORT_SYMBOL_IF_KUNIT(shca_pkt_build);

/**
 * shca_icrc() - the invariant CRC of a packet
 * @iph: its IPv4 or IPv6 header (the version field says which; IPv4
 *	without options)
 * @uh: its UDP header
 * @bth: its BTH
 * @len: bytes from @bth to the end of the payload and pad (without the
 *	ICRC)
 *
 * The headers may be anywhere; the bytes from @bth on are contiguous.
 *
 * Return: the ICRC, to be stored with cpu_to_le32().
 */
u32 shca_icrc(const void *iph, const struct udphdr *uh, const u8 *bth,
	      u32 len)
{
	static const u8 lrh[8] = { 0xff, 0xff, 0xff, 0xff,
				   0xff, 0xff, 0xff, 0xff };
	u8 ph[sizeof(struct ipv6hdr) + sizeof(struct udphdr) + SHCA_BTH_BYTES];
	struct udphdr *u;
	u32 n, crc;

	if ((*(const u8 *)iph >> 4) == 4) {
		struct iphdr *ip = (struct iphdr *)ph;

		memcpy(ip, iph, sizeof(*ip));
		ip->tos = 0xff;
		ip->ttl = 0xff;
		ip->check = CSUM_MANGLED_0;
		n = sizeof(*ip);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)ph;

		memcpy(ip6, iph, sizeof(*ip6));
		ip6->priority = 0xf;
		memset(ip6->flow_lbl, 0xff, sizeof(ip6->flow_lbl));
		ip6->hop_limit = 0xff;
		n = sizeof(*ip6);
	}
	u = (struct udphdr *)(ph + n);
	memcpy(u, uh, sizeof(*u));
	u->check = CSUM_MANGLED_0;
	n += sizeof(*u);
	memcpy(ph + n, bth, SHCA_BTH_BYTES);
	ph[n + 4] = 0xff;	/* resv8a: FECN, BECN, reserved */
	n += SHCA_BTH_BYTES;

	crc = crc32_le(~0U, lrh, sizeof(lrh));
	crc = crc32_le(crc, ph, n);
	crc = crc32_le(crc, bth + SHCA_BTH_BYTES, len - SHCA_BTH_BYTES);
	return ~crc;
}
EXPORT_SYMBOL_IF_KUNIT(shca_icrc);
