/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - the transport, by role: the IBTA packet formats that
 * describe requests and responses on both links (shca_pkt.c), PSN
 * arithmetic, the state of the requester and completer (shca_req.c) and
 * of the responder (shca_resp.c) that each QP embeds, and their
 * interfaces. The links are below: the memory link
 * (shca_mlink.c), which hands a responder whole messages (struct
 * shca_mreq), and the UDP link (shca_wire.h).
 */
#ifndef SHCA_TRANSPORT_H
#define SHCA_TRANSPORT_H

#include <linux/if_ether.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <rdma/ib_hdrs.h>
#include <rdma/ib_pack.h>
#include <rdma/ib_verbs.h>

#include "shca_mem.h"

struct shca_dev;
struct shca_qp;
struct shca_wqe;

#define SHCA_PSN_MASK		0xffffff	/* 24-bit packet sequence numbers */

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
 * @paylen: bytes at @payload (without pad and ICRC); the memory link:
 *	bytes of the message
 * @mreq: the memory link's side of a whole message it hands over (the
 *	data is there, not at @payload; the answer goes there); NULL for a
 *	packet of the UDP link
 *
 * A member the memory link's requests carry is set by shca_mlink_msg(),
 * for every message.
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
	struct shca_mreq *mreq;
};

/**
 * struct shca_mreq - a message the memory link hands a responder whole
 * @qp: the requester; the local SGEs of @w are held (shca_qp.held)
 * @w: the requester's send WQE
 * @npsn: PSNs the message takes at the requester's path MTU
 * @later: the requester executes from post_send: the completion handlers
 *	and events the message causes at the responder run later
 * @span: the responder's memory the request names, held by the
 *	responder's check of the whole range (shca_resp.c) for the copy;
 *	dropped by the link
 * @rt: a WRITE without immediate data or a READ: the responder's memory
 *	the request names, for the link to check whole as it copies (no
 *	decision comes between the check and the copy); @span is not held
 * @rsdev: the device of @rt; @rt means something only once it is set
 * @answered: the responder took the message or refused it: @syndrome
 *	says how; else nobody took it (the requester retries)
 * @syndrome: the answer, as an AETH syndrome: ACK, RNR NAK with the
 *	timer code, or NAK with its code
 * @local_err: the requester's own memory refused a copy
 * @orig: an atomic's original remote value
 */
struct shca_mreq {
	struct shca_qp *qp;
	const struct shca_wqe *w;
	u32 npsn;
	bool later;
	struct shca_span span;
	struct shca_mem_target rt;
	struct shca_dev *rsdev;
	bool answered;
	u8 syndrome;
	bool local_err;
	u64 orig;
};

/* The transport state a QP embeds (struct shca_qp), by role. */

/**
 * struct shca_wreq - the requester and completer of a QP on the wire
 * @next: send queue counter of the next WQE to send packets of; WQEs from
 *	the queue's head up to it are in flight
 * @off: bytes of that WQE sent (a READ: asked for) so far
 * @psn: the PSN of the next packet to send
 * @una: the oldest PSN not acknowledged
 * @resend: going back over packets sent before, up to @resend_until
 * @resend_until: the PSN sending was at when it went back
 * @resend_next: the @next it was at then
 * @rd_out: READs and atomics in flight (max_rd_atomic)
 * @rd_off: bytes of the READ at the head received so far
 * @rd_gap_psn: the READ response PSN last asked again for a gap
 * @rnr_wait: waiting out an RNR NAK's timer, until @rnr_until
 * @rnr_until: see @rnr_wait
 * @nak_psn: the PSN of the last NAK acted on, if @nak_valid
 * @nak_valid: see @nak_psn
 *
 * Owned by the holder of SHCA_QP_EXEC_BUSY (the QP's work item).
 */
struct shca_wreq {
	u32 next;
	u64 off;
	u32 psn;
	u32 una;
	bool resend;
	u32 resend_until;
	u32 resend_next;
	u32 rd_out;
	u64 rd_off;
	u32 rd_gap_psn;
	bool rnr_wait;
	unsigned long rnr_until;
	u32 nak_psn;
	bool nak_valid;
};

/**
 * struct shca_rd_res - a READ or atomic request a responder keeps
 * @valid: in use
 * @atomic: an atomic (else a READ)
 * @psn: its PSN
 * @lpsn: the PSN of its last response
 * @va: READ: the address
 * @rkey: READ: the key
 * @len: READ: the length
 * @orig: atomic: the value it returned
 * @msn: the MSN it was answered with
 */
struct shca_rd_res {
	bool valid;
	bool atomic;
	u32 psn;
	u32 lpsn;
	u64 va;
	u32 rkey;
	u32 len;
	u64 orig;
	u32 msn;
};

/**
 * struct shca_wresp - the responder's state of an RC or UC QP
 * @rwqe: the receive WQE a SEND in progress fills (RC and UC QPs)
 * @have_wqe: @rwqe holds one
 * @in_msg: a multi-packet message is in progress
 * @kind: its kind: SHCA_OP_SEND or SHCA_OP_WRITE
 * @off: bytes of it received
 * @va: WRITE: the address of its first byte
 * @rkey: WRITE: its key
 * @resid: WRITE: bytes still to come
 * @msn: message sequence number
 * @nak_sent: a PSN sequence error NAK was sent for the expected PSN
 * @ack_owed: an ACK is to be sent after the packets at hand
 * @res: the last READ and atomic requests (max_dest_rd_atomic of them),
 *	allocated by modify_qp for @res_size entries
 * @res_size: entries @res has room for (the largest max_dest_rd_atomic
 *	asked for so far)
 * @res_next: where the next one goes
 * @rd_active: a READ is being answered: its responses leave over several
 *	runs of the work item (SHCA_WIRE_RD_BUDGET each)
 * @rd_slot: its entry in @res (an index: modify_qp may grow @res)
 * @rd_psn: PSN of its next response
 *
 * Owned by the holder of SHCA_QP_EXEC_BUSY on the wire, of
 * shca_qp.resp_busy on the memory link (the peer's requester, which hands
 * the responder whole messages); both to whoever stops the QP's
 * execution (shca_qp_exec_stop()).
 */
struct shca_wresp {
	struct shca_wqe *rwqe;
	bool have_wqe;
	bool in_msg;
	u32 kind;
	u64 off;
	u64 va;
	u32 rkey;
	u32 resid;
	u32 msn;
	bool nak_sent;
	bool ack_owed;
	struct shca_rd_res *res;
	u32 res_size;
	u32 res_next;
	bool rd_active;
	u32 rd_slot;
	u32 rd_psn;
};

/**
 * struct shca_req - the request the work item of a QP is executing
 * @dest_qpn: peer QP number, snapshot of shca_qp.dest_qpn under the lock
 * @dgid: peer GID, snapshot of shca_qp.dgid
 * @psn: PSN of the request, snapshot of shca_qp.sq_psn
 * @npsn: PSNs the request takes: its packets at the path MTU (READ: its
 *	response packets), at least one
 * @accepted: the responder took the request and advanced its PSN
 * @rnr_timer: RNR NAK timer code (IBTA table) the responder answered with
 * @retries: transport retries of this WQE so far (retry_cnt)
 * @rnr_retries: RNR retries of this WQE so far (rnr_retry)
 * @waiting: the WQE waits out a retry delay; read by post_recv of the
 *	peer to cut an RNR wait short
 * @in_post: executing from post_send (see shca_exec.c): the handlers of
 *	the completions and events it causes run later, from work items
 * @started: shca_req_start_posted() started the head WQE in the lock
 *	section that queued it; the poster's shca_sq_run() goes on from there
 * @mpkt: the memory link's packet of the request (shca_mlink_msg()); the
 *	members a request does not set keep their zero from the QP's
 *	creation
 */
struct shca_req {
	u32 dest_qpn;
	union ib_gid dgid;
	u32 psn;
	u32 npsn;
	bool accepted;
	u8 rnr_timer;
	u8 retries;
	u8 rnr_retries;
	bool waiting;
	bool in_post;
	bool started;
	struct shca_pkt mpkt;
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

extern const struct shca_op shca_ops[256];

/**
 * shca_op_get() - what an opcode's packets carry
 * @opcode: BTH opcode
 *
 * Return: the opcode's entry, or NULL for an opcode softhca does not
 * speak (reserved ones, RD, XRC, CNP, FLUSH, ATOMIC WRITE).
 */
static inline const struct shca_op *shca_op_get(u8 opcode)
{
	const struct shca_op *op = &shca_ops[opcode];

	return op->hdr_len ? op : NULL;
}

int shca_pkt_parse(struct shca_pkt *pkt, const u8 *bth, u32 len);
u32 shca_pkt_build(u8 *bth, const struct shca_pkt *pkt);

/* The operation is a READ or an atomic: initiator resources, local writes. */
static inline bool shca_req_is_rdatomic(u32 opcode)
{
	return opcode == IB_WR_RDMA_READ || opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	       opcode == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/* The operation executes at the requester (shca_req_local()). */
static inline bool shca_req_is_local(u32 opcode)
{
	return opcode == IB_WR_REG_MR || opcode == IB_WR_REG_MR_INTEGRITY ||
	       opcode == IB_WR_LOCAL_INV || opcode == IB_WR_BIND_MW;
}

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
int shca_req_fill_res(struct sk_buff *msg, struct shca_qp *qp);
void shca_req_wc(struct shca_qp *qp, const struct shca_wqe *w,
		 struct ib_wc *wc, enum ib_wc_status status);
bool shca_req_complete(struct shca_qp *qp, const struct shca_wqe *w,
		       struct ib_wc *wc, u32 npsn, bool later);

/* The responder's rules, for both links (shca_resp.c). */
void shca_resp_mem_request(struct shca_qp *qp, const struct shca_pkt *pkt);
bool shca_resp_claim(struct shca_qp *qp);
void shca_resp_release(struct shca_qp *qp);
bool shca_resp_datagram(struct shca_qp *qp, const struct shca_pkt *pkt,
			const u8 *grh, struct shca_wqe *r);
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

/*
 * The memory link (shca_mlink.c): what carries a message whole (struct
 * shca_mreq), and what the responder calls to move its bytes.
 */
/* Bytes copied between two reschedule points. */
#define SHCA_MLINK_CHUNK	SZ_256K

void shca_mlink_msg(struct shca_qp *qp, const struct shca_wqe *w,
		    struct shca_pkt *pkt, struct shca_mreq *m);

/**
 * shca_mlink_end() - drop what the responder held of a message's memory
 * @m: the message, answered
 */
static inline void shca_mlink_end(struct shca_mreq *m)
{
	if (m->span.mr)
		shca_mr_unhold(&m->span);
}

int shca_mlink_recv(struct shca_mreq *m, struct shca_qp *qp,
		    const struct shca_wqe *r, u64 off, u64 len);
int shca_mlink_rdma(struct shca_mreq *m, u64 len, bool read);

#endif /* SHCA_TRANSPORT_H */
