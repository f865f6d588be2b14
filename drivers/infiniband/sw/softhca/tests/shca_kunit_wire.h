/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca KUnit fixture of the wire suites (shca_wire_*_kunit.c): the
 * transport on the wire (shca_wire.c) between two softhca devices whose
 * connections are forced onto RoCE v2 packets (shca_force_wire), with
 * the test as the network between them.
 *
 * The network between them is the test network of shca_kunit_net.c:
 * shca_net_send() hands every packet to it (shca_net_send_hook), which
 * gives it the Ethernet, IP and UDP headers and the ICRC a receiver would
 * see and keeps it in a queue. Its pump, run by the test's thread while
 * it waits for completions, takes the packets in the order they were sent
 * and hands each to shca_wire_rx() of the device that owns its
 * destination GID, as shca_net_encap_rcv() does (the ICRC check is left
 * out: it has its own suite, shca_pkt). On the way it can drop,
 * duplicate or hold back (reorder) the packets a test chooses.
 *
 * The ends, connections and completions are those of the data-path
 * fixture (shca_kunit_qp.h), a on device 0 and b on device 1; here are
 * what only the wire suites need: the wire counters, RC operations
 * checked byte by byte, and packets forged by the test (with its own
 * headers, never the driver's encoder) and fed to a device.
 */
#ifndef SHCA_KUNIT_WIRE_H
#define SHCA_KUNIT_WIRE_H

#include "shca_kunit_qp.h"

#define SHCA_WT_CQE	512
#define SHCA_WT_MTU	1024			/* path MTU on a 1500 netdev */
#define SHCA_WT_LEN	(3 * SHCA_WT_MTU + 100)	/* four packets */
#define SHCA_WT_A_OFF	4096			/* a's data */
#define SHCA_WT_B_OFF	(8192 + 100)		/* b's data, unaligned */
#define SHCA_WT_ATOM	49152			/* atomic target and result */
#define SHCA_WT_QKEY	0x11223344

/**
 * struct shca_wt_op - an RC operation and the packets it takes
 * @name: its name, the parameter's description
 * @opcode: the operation
 * @a_pkts: packets a sends without loss
 * @b_pkts: packets b sends
 */
struct shca_wt_op {
	const char *name;
	enum ib_wr_opcode opcode;
	u32 a_pkts;
	u32 b_pkts;
};

extern const struct shca_qt_conn shca_wt_calm;
extern const struct shca_qt_conn shca_wt_lossy;

int shca_wt_init(struct kunit *test);
u64 shca_wt_delta(struct shca_qt_fix *f, struct shca_qt_end *e,
		  enum shca_wire_stat s);
bool shca_wt_wait_stat(struct shca_qt_fix *f, struct shca_qt_end *e,
		       enum shca_wire_stat s, u64 n, int ms);
int shca_wt_drain_cq(struct ib_cq *cq);
void shca_wt_fill(u8 *p, size_t len, u8 seed);

/* QPs and connections on the wire */
struct ib_qp *shca_wt_qp(struct kunit *test, struct shca_qt_end *e,
			 enum ib_qp_type type);
struct ib_qp *shca_wt_ud_qp(struct kunit *test, struct shca_qt_end *e);
void shca_wt_restate(struct kunit *test, struct ib_qp *qp,
		     struct shca_qt_end *peer, u32 dest_qpn,
		     const struct shca_qt_conn *c);
void shca_wt_connect_qps(struct shca_qt_fix *f, struct ib_qp *qa,
			 struct ib_qp *qb, const struct shca_qt_conn *c);
void shca_wt_connect(struct shca_qt_fix *f, const struct shca_qt_conn *c);

/* RC operations */
const void *shca_wt_ops_gen_params(const void *prev, char *desc);
bool shca_wt_is_atomic(enum ib_wr_opcode opcode);
void shca_wt_do(struct shca_qt_fix *f, enum ib_wr_opcode opcode);

/* Packets forged by the test */
struct sk_buff *shca_wt_forge_path(const struct shca_path *path,
				   const u8 *bth, u32 len);
struct sk_buff *shca_wt_forge(struct shca_qt_fix *f, int from, int to,
			      const u8 *bth, u32 len);
void shca_wt_bth(u8 *bth, u8 opcode, u8 pad, u32 qpn, bool ackreq, u32 psn);
bool shca_wt_feed(struct shca_qt_fix *f, int from, int to, const u8 *bth,
		  u32 len);
bool shca_wt_wait_counted(struct shca_qt_fix *f, struct shca_qt_end *e,
			  u64 n, bool settle);
void shca_wt_qp_type_desc(const enum ib_qp_type *t, char *desc);

#endif /* SHCA_KUNIT_WIRE_H */
