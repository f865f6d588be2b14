/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - RoCE v2 on the wire: packet formats (shca_pkt.c), the UDP
 * link (shca_net.c) and the transport that runs over it (shca_wire.c).
 * See Documentation/wire.rst.
 */
#ifndef SHCA_WIRE_H
#define SHCA_WIRE_H

#include <linux/skbuff.h>
#include <rdma/ib_hdrs.h>
#include <rdma/ib_pack.h>

#include "shca.h"

struct udphdr;

/* Bytes of each header of a RoCE v2 packet after the UDP header. */
#define SHCA_BTH_BYTES		12
#define SHCA_RETH_BYTES		16
#define SHCA_AETH_BYTES		4
#define SHCA_ATMETH_BYTES	28
#define SHCA_ATMACK_BYTES	8
#define SHCA_IMM_BYTES		4
#define SHCA_IETH_BYTES		4
#define SHCA_DETH_BYTES		8
#define SHCA_ICRC_BYTES		4
/* The largest BTH + extension headers of any opcode (RC atomic). */
#define SHCA_MAX_HDR_BYTES	(SHCA_BTH_BYTES + SHCA_ATMETH_BYTES)

/* The P_Key every softhca packet carries (the default partition). */
#define SHCA_DEFAULT_PKEY	0xffff

/* AETH syndromes (IBTA 9.7.5.1.1): the top three bits say the kind. */
#define SHCA_AETH_ACK		0x00	/* | credit count */
#define SHCA_AETH_RNR_NAK	0x20	/* | RNR NAK timer code */
#define SHCA_AETH_NAK		0x60	/* | NAK code below */
#define SHCA_AETH_KIND_MASK	0xe0
#define SHCA_NAK_PSN_SEQ	0	/* PSN sequence error */
#define SHCA_NAK_INV_REQ	1	/* invalid request */
#define SHCA_NAK_REM_ACCESS	2	/* remote access error */
#define SHCA_NAK_REM_OP		3	/* remote operational error */
#define SHCA_NAK_INV_RD_REQ	4	/* invalid RD request */
/* "Credits invalid": a responder that does not do end-to-end credits. */
#define SHCA_AETH_CREDIT_INVAL	0x1f

/**
 * enum shca_op_flags - what an opcode's packets carry and mean
 * @SHCA_OP_RETH: an RDMA extended transport header (address, key, length)
 * @SHCA_OP_AETH: an ACK extended transport header
 * @SHCA_OP_ATMETH: an atomic extended transport header
 * @SHCA_OP_ATMACK: an atomic ACK extended transport header
 * @SHCA_OP_IMM: immediate data
 * @SHCA_OP_IETH: the rkey to invalidate
 * @SHCA_OP_DETH: a datagram extended transport header (Q_Key, source QP)
 * @SHCA_OP_PAYLOAD: carries data (possibly none, for a zero-length message)
 * @SHCA_OP_REQ: a request, for the responder
 * @SHCA_OP_FIRST: the first packet of a message
 * @SHCA_OP_LAST: the last packet of a message (ONLY is FIRST | LAST)
 * @SHCA_OP_SEND: a SEND (its data goes to a receive WQE)
 * @SHCA_OP_WRITE: an RDMA WRITE
 * @SHCA_OP_READ: an RDMA READ request
 * @SHCA_OP_ATOMIC: an atomic request
 * @SHCA_OP_RC: of the RC transport
 * @SHCA_OP_UC: of the UC transport
 * @SHCA_OP_UD: of the UD transport
 */
enum shca_op_flags {
	SHCA_OP_RETH	= BIT(0),
	SHCA_OP_AETH	= BIT(1),
	SHCA_OP_ATMETH	= BIT(2),
	SHCA_OP_ATMACK	= BIT(3),
	SHCA_OP_IMM	= BIT(4),
	SHCA_OP_IETH	= BIT(5),
	SHCA_OP_DETH	= BIT(6),
	SHCA_OP_PAYLOAD	= BIT(7),
	SHCA_OP_REQ	= BIT(8),
	SHCA_OP_FIRST	= BIT(9),
	SHCA_OP_LAST	= BIT(10),
	SHCA_OP_SEND	= BIT(11),
	SHCA_OP_WRITE	= BIT(12),
	SHCA_OP_READ	= BIT(13),
	SHCA_OP_ATOMIC	= BIT(14),
	SHCA_OP_RC	= BIT(15),
	SHCA_OP_UC	= BIT(16),
	SHCA_OP_UD	= BIT(17),
};

/**
 * struct shca_op - an opcode softhca sends and accepts
 * @flags: enum shca_op_flags
 * @hdr_len: bytes of the BTH and the extension headers
 */
struct shca_op {
	u32 flags;
	u8 hdr_len;
};

/**
 * struct shca_pkt - a RoCE v2 packet, decoded
 * @sgid: source address, as a GID (IPv4-mapped for IPv4)
 * @dgid: destination address, as a GID
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @tclass: IP traffic class (IPv4 TOS)
 * @hop_limit: IP hop limit (IPv4 TTL)
 * @flow_label: IPv6 flow label
 * @sport: UDP source port
 * @smac: source MAC address of the frame (received packets)
 * @vlan_id: VLAN the frame came on, 0xffff for none (received packets)
 * @opcode: BTH opcode
 * @op: what the opcode carries
 * @se: BTH solicited event
 * @ackreq: BTH acknowledge request
 * @pad: BTH pad count
 * @qpn: BTH destination QP
 * @psn: BTH packet sequence number
 * @va: RETH or AtomicETH virtual address
 * @rkey: RETH or AtomicETH remote key
 * @dma_len: RETH DMA length
 * @swap_add: AtomicETH swap or add data
 * @compare: AtomicETH compare data
 * @aeth: AETH: syndrome << 24 | MSN
 * @atomic_orig: AtomicAckETH original remote data
 * @imm: immediate data, as on the wire
 * @ieth: IETH: the rkey to invalidate
 * @qkey: DETH Q_Key
 * @src_qp: DETH source QP
 * @sl: service level (a datagram the memory link carries; 0 on the wire)
 * @payload: the data the packet carries
 * @paylen: bytes at @payload (without pad and ICRC)
 */
struct shca_pkt {
	union ib_gid sgid;
	union ib_gid dgid;
	u8 net_type;
	u8 tclass;
	u8 hop_limit;
	u32 flow_label;
	u16 sport;
	u8 smac[ETH_ALEN];
	u16 vlan_id;
	u8 opcode;
	const struct shca_op *op;
	bool se;
	bool ackreq;
	u8 pad;
	u32 qpn;
	u32 psn;
	u64 va;
	u32 rkey;
	u32 dma_len;
	u64 swap_add;
	u64 compare;
	u32 aeth;
	u64 atomic_orig;
	__be32 imm;
	u32 ieth;
	u32 qkey;
	u32 src_qp;
	u8 sl;
	const u8 *payload;
	u32 paylen;
};

/**
 * struct shca_rx_cb - a queued packet's outer headers, in its skb->cb
 * @sgid: source address, as a GID
 * @dgid: destination address, as a GID
 * @flow_label: IPv6 flow label (0 for IPv4)
 * @net_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @sport: UDP source port
 * @vlan_id: VLAN of the netdev it arrived on, 0xffff for none
 * @smac: source MAC address
 * @tclass: traffic class (TOS)
 * @hop_limit: hop limit (TTL)
 *
 * Decoded once, in softirq (shca_wire_rx()), from the headers and the
 * netdev the packet arrived on: a queued skb holds no reference on that
 * netdev, so the work item never reads skb->dev. The work item parses
 * the BTH and what follows from the packet's own bytes.
 */
struct shca_rx_cb {
	union ib_gid sgid;
	union ib_gid dgid;
	u32 flow_label : 20;
	u32 net_type : 4;
	u16 sport;
	u16 vlan_id;
	u8 smac[ETH_ALEN];
	u8 tclass;
	u8 hop_limit;
};

/* shca_pkt.c */
/* a - b in the 24-bit PSN space, as a signed distance */
static inline s32 shca_psn_diff(u32 a, u32 b)
{
	return (s32)((a - b) << 8) >> 8;
}

static inline u32 shca_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SHCA_PSN_MASK;
}

const struct shca_op *shca_op_get(u8 opcode);
int shca_pkt_parse(struct shca_pkt *pkt, const u8 *bth, u32 len);
u32 shca_pkt_build(u8 *bth, const struct shca_pkt *pkt);
u32 shca_icrc(const void *iph, const struct udphdr *uh, const u8 *bth,
	      u32 len);

static inline void shca_wstat_add(struct shca_dev *sdev,
				  enum shca_wire_stat s, u64 n)
{
	atomic64_add(n, &sdev->wstats[s]);
}

static inline void shca_wstat_inc(struct shca_dev *sdev, enum shca_wire_stat s)
{
	shca_wstat_add(sdev, s, 1);
}

/* shca_net.c */
extern bool shca_force_wire;
int shca_net_init(void);
void shca_net_fini(void);
int shca_net_attach(struct shca_dev *sdev);
void shca_net_detach(struct shca_dev *sdev);
struct net *shca_net_of(struct shca_dev *sdev);
struct sk_buff *shca_net_alloc(struct shca_dev *sdev, const struct shca_path *path,
			       u32 len, u8 **bth);
int shca_net_send(struct shca_dev *sdev, const struct shca_path *path,
		  struct sk_buff *skb);
#if IS_ENABLED(CONFIG_KUNIT)
extern typeof(shca_net_send) *shca_net_send_hook;
#endif
u16 shca_net_sport(u32 a, u32 b);
int shca_net_decode(struct sk_buff *skb, struct shca_pkt *pkt);

bool shca_net_gid_local(struct shca_dev *sdev, const union ib_gid *gid);

/* shca_wire.c */
void shca_wire_rx(struct shca_dev *sdev, struct sk_buff *skb,
		  const struct shca_pkt *pkt);
int shca_wire_ud_send(struct shca_qp *qp, const struct shca_wqe *w, u32 len);
bool shca_wire_run(struct shca_qp *qp);
void shca_wire_reset(struct shca_qp *qp);
void shca_wire_rxq_purge(struct shca_qp *qp);
void shca_wire_start(struct shca_qp *qp, enum ib_qp_state next);
u32 shca_wire_mtu(const struct shca_qp *qp);
int shca_wire_sg_copy(struct shca_qp *qp, const struct shca_wqe *w, u64 off,
		      void *buf, u32 len, int access, enum shca_copy_dir dir);
u64 shca_wire_wqe_len(const struct shca_wqe *w);
struct sk_buff *shca_wire_pkt(struct shca_dev *sdev,
			      const struct shca_path *path,
			      struct shca_pkt *pkt, u32 paylen, u8 **payload);
void shca_wire_rx_count(struct shca_qp *qp, const struct sk_buff *skb);
void shca_wire_drop(struct shca_qp *qp);

/* The requester's rules, for both links (shca_req.c). */
unsigned long shca_ack_timeout(const struct shca_qp *qp);
unsigned long shca_rnr_delay(u8 code);
enum ib_wc_status shca_req_retry(struct shca_qp *qp, bool rnr);
void shca_req_progress(struct shca_qp *qp);
void shca_req_local(struct shca_qp *qp, struct shca_wqe *w, struct ib_wc *wc);
enum ib_wc_opcode shca_wc_opcode(u32 wr_opcode);
void shca_req_complete_upto(struct shca_qp *qp, u32 acked, bool acked_valid);
void shca_req_response(struct shca_qp *qp, struct sk_buff *skb,
		       const struct shca_pkt *pkt);
bool shca_req_send(struct shca_qp *qp);
void shca_req_timeout(struct shca_qp *qp);
void shca_req_timer(struct timer_list *t);
u32 shca_req_sq_psn(const struct shca_qp *qp);
void shca_req_wc(struct shca_qp *qp, const struct shca_wqe *w,
		 struct ib_wc *wc, enum ib_wc_status status);
bool shca_req_complete(struct shca_qp *qp, const struct shca_wqe *w,
		       struct ib_wc *wc, u32 npsn, bool later);

/* The responder's rules, for both links (shca_resp.c). */
bool shca_resp_receiving(const struct shca_qp *qp);
int shca_resp_check(const struct shca_qp *qp, u32 flags, u64 va, u64 dma_len);
void shca_resp_msg(const struct shca_qp *qp, const struct shca_wqe *w,
		   struct shca_pkt *pkt);
void shca_resp_recv_done(struct shca_qp *qp, const struct shca_wqe *r,
			 const struct shca_pkt *pkt, enum ib_wc_status status,
			 u32 byte_len, bool later);
void shca_resp_recv_error(struct shca_qp *qp);
int shca_resp_atomic(struct shca_dev *sdev, struct shca_mem_target *rt,
		     bool cmp_swap, u64 compare_add, u64 swap, u64 *orig);
bool shca_resp_dgram_too_long(struct shca_qp *qp, u64 len);
void shca_resp_ud_recv(struct shca_qp *qp, struct sk_buff *skb,
		       const struct shca_pkt *pkt);
void shca_resp_request(struct shca_qp *qp, struct sk_buff *skb,
		       const struct shca_pkt *pkt);
void shca_resp_flush_held(struct shca_qp *qp);
void shca_resp_run(struct shca_qp *qp);
void shca_resp_ack_owed(struct shca_qp *qp);
enum ib_wc_status shca_nak_status(u8 code);
enum ib_event_type shca_nak_event(u8 code);

#endif /* SHCA_WIRE_H */
