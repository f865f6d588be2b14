/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca KUnit fixture of the data-path suites (shca_qp_*_kunit.c and
 * shca_wire_*_kunit.c): two ends, a and b, each a PD, a CQ, an RC QP and
 * SHCA_QT_BUF bytes of memory with a fast-reg MR over them, on one device
 * or on two, connected through the memory link or through the UDP link
 * (the test network of shca_kunit_net.c); and what the cases do with
 * them: connect, register, post, wait for and check completions.
 *
 * The helpers that wait (shca_qt_poll() and those built on it) pump the
 * test network while they wait when the test's thread is the one that
 * pumps it (the wire suites, see shca_knet_pumped()); otherwise they
 * only wait.
 */
#ifndef SHCA_KUNIT_QP_H
#define SHCA_KUNIT_QP_H

#include <linux/etherdevice.h>
#include <linux/scatterlist.h>
#include <kunit/test.h>
#include <rdma/ib_verbs.h>

#include "shca_kunit.h"
#include "shca_kunit_net.h"

#define SHCA_QT_BUF	SZ_64K
#define SHCA_QT_CQE	256
#define SHCA_QT_WR	64
#define SHCA_QT_RW	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_READ | \
			 IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)
#define SHCA_QT_QKEY	0x1234567

/* The MACs of the fixture's two test netdevs. */
extern const u8 shca_qt_mac[2][ETH_ALEN];

/**
 * struct shca_qt_end - one end of a connection
 * @ibdev: its device
 * @sdev: the same, as softhca sees it
 * @gid: GID 0 of @ibdev
 * @pd: a PD of @ibdev
 * @cq: a CQ, the send and receive CQ of @qp
 * @qp: an RC QP, in RESET
 * @buf: SHCA_QT_BUF bytes, page aligned, zeroed
 * @sg: @buf, DMA-mapped
 * @mr: a fast-reg MR for @buf, not registered (shca_qt_reg())
 * @events: async events seen by the QPs of the end (shca_qt_event())
 * @last_event: the last of them
 */
struct shca_qt_end {
	struct ib_device *ibdev;
	struct shca_dev *sdev;
	union ib_gid gid;
	struct ib_pd *pd;
	struct ib_cq *cq;
	struct ib_qp *qp;
	u8 *buf;
	struct scatterlist sg;
	struct ib_mr *mr;
	int events;
	enum ib_event_type last_event;
};

/**
 * struct shca_qt_fix - the fixture: two devices and two ends
 * @test: the test that owns it
 * @dev: the devices, each on a test netdev of its own
 * @a: an end on @dev[0]
 * @b: an end on @dev[0] or @dev[1]
 * @ep: &@a and &@b, by number
 * @net: the UDP link's test network, or NULL for the memory link
 * @rkey: b's MR once a case registered it, for cases that do it once
 */
struct shca_qt_fix {
	struct kunit *test;
	struct ib_device *dev[2];
	struct shca_qt_end a, b;
	struct shca_qt_end *ep[2];
	struct shca_knet *net;
	u32 rkey;
};

/**
 * struct shca_qt_opts - how shca_qt_setup() makes the fixture
 * @two: b on a device of its own (else on a's)
 * @wire: connections through the UDP link (the test network)
 * @pumped: the test's thread pumps the network; else a work item
 *	delivers each packet as it is sent
 * @ctx: polling context of the ends' CQs
 * @cqe: size of the ends' CQs
 * @max_sge: send and receive SGEs of the ends' QPs
 */
struct shca_qt_opts {
	bool two;
	bool wire;
	bool pumped;
	enum ib_poll_context ctx;
	int cqe;
	u32 max_sge;
};

/*
 * Where a case runs: a and b on one device or on two, connected through
 * the memory link or through the UDP link (the test network, delivering
 * each packet as it is sent). The cases that take this parameter must
 * give the same results over both links.
 */
struct shca_qt_where {
	bool two;
	bool wire;
};

/**
 * struct shca_qt_conn - connection attributes of one end
 * @timeout: local ACK timeout (4.096 us * 2^timeout; 0: infinite)
 * @retry_cnt: retries after a timeout
 * @rnr_retry: retries after an RNR NAK (7: for ever)
 * @min_rnr_timer: RNR timer the responder asks for; 0: 1 (10 us)
 * @rd_atom: READs/atomics each way (max_rd_atomic, max_dest_rd_atomic);
 *	0: 4
 * @mtu: path MTU; 0: IB_MTU_1024
 * @no_init_rd: no READs/atomics as the requester (max_rd_atomic 0)
 * @no_dest_rd: none as the responder (max_dest_rd_atomic 0)
 * @sq_psn: first PSN sent
 * @rq_psn: first PSN expected
 */
struct shca_qt_conn {
	u8 timeout;
	u8 retry_cnt;
	u8 rnr_retry;
	u8 min_rnr_timer;
	u8 rd_atom;
	enum ib_mtu mtu;
	bool no_init_rd;
	bool no_dest_rd;
	u32 sq_psn;
	u32 rq_psn;
};

extern const struct shca_qt_conn shca_qt_default_conn;

/* The fixture, as a suite's init */
int shca_qt_setup(struct kunit *test, const struct shca_qt_opts *o);
int shca_qt_init_common(struct kunit *test, int two, bool wire,
			enum ib_poll_context ctx);
int shca_qt_init(struct kunit *test);
int shca_qt_init_two(struct kunit *test);
const void *shca_qt_where_gen_params(const void *prev, char *desc);
const void *shca_qt_mem_gen_params(const void *prev, char *desc);
const void *shca_qt_apart_gen_params(const void *prev, char *desc);

/* Ends and QPs */
void shca_qt_event(struct ib_event *ev, void *ctx);
bool shca_qt_wait_events(struct shca_qt_end *e, int want, int ms);
struct ib_qp *shca_qt_qp_make(struct kunit *test, struct shca_qt_end *e,
			      enum ib_qp_type type, u32 max_wr, u32 max_sge,
			      u32 max_inline, u32 flags);
struct ib_qp *shca_qt_qp_flags(struct kunit *test, struct shca_qt_end *e,
			       u32 max_wr, u32 max_sge, u32 max_inline,
			       u32 flags);
struct ib_qp *shca_qt_qp(struct kunit *test, struct shca_qt_end *e,
			 u32 max_wr, u32 max_sge, u32 max_inline);
void shca_qt_end_make(struct kunit *test, struct shca_qt_end *e,
		      struct ib_device *ibdev, enum ib_poll_context ctx,
		      int cqe, u32 max_sge);
void shca_qt_end_init(struct kunit *test, struct shca_qt_end *e,
		      struct ib_device *ibdev, enum ib_poll_context ctx);

/* Completions */
bool shca_qt_poll(struct ib_cq *cq, struct ib_wc *wc, int ms);
void shca_qt_expect_wc(struct kunit *test, struct ib_cq *cq, u64 wr_id,
		       enum ib_wc_status status, enum ib_wc_opcode opcode,
		       struct ib_wc *out);
void shca_qt_expect_none(struct kunit *test, struct ib_cq *cq);
void shca_qt_expect_empty(struct kunit *test, struct ib_cq *cq);

/* States and connections */
enum ib_qp_state shca_qt_state(struct ib_qp *qp);
u32 shca_qt_psn(struct ib_qp *qp, bool send);
int shca_qt_to_init(struct ib_qp *qp);
int shca_qt_to_rts(struct ib_qp *qp, struct ib_device *peer_dev,
		   u32 dest_qpn, const struct shca_qt_conn *c);
void shca_qt_connect(struct kunit *test, struct shca_qt_end *x,
		     struct shca_qt_end *y, const struct shca_qt_conn *c);
void shca_qt_restate_qp(struct kunit *test, struct ib_qp *qp,
			struct ib_device *peer_dev, u32 dest_qpn,
			const struct shca_qt_conn *c);
void shca_qt_restate(struct kunit *test, struct shca_qt_end *e,
		     struct shca_qt_end *peer, const struct shca_qt_conn *c);

/* Memory and work requests */
u32 shca_qt_reg(struct kunit *test, struct shca_qt_end *e, int access);
struct ib_sge shca_qt_sge(struct shca_qt_end *e, u32 off, u32 len);
int shca_qt_post_recv_qp(struct ib_qp *qp, u64 wr_id, struct ib_sge *sge,
			 int n);
int shca_qt_post_recv(struct shca_qt_end *e, u64 wr_id, struct ib_sge *sge,
		      int n);
int shca_qt_post_qp(struct ib_qp *qp, struct ib_send_wr *wr);
int shca_qt_post(struct shca_qt_end *e, struct ib_send_wr *wr);
void shca_qt_fill(u8 *p, size_t len, u8 seed);
bool shca_qt_all(const u8 *p, size_t len, u8 v);

/* UD QPs and address handles */
struct ib_qp *shca_qt_ud_qp(struct kunit *test, struct shca_qt_end *e,
			    u32 qkey);
void shca_qt_destroy_ah(void *ah);
struct ib_ah *shca_qt_ah(struct kunit *test, struct shca_qt_end *e,
			 struct ib_device *peer, union ib_gid *dgid);
int shca_qt_ud_recv(struct shca_qt_end *e, struct ib_qp *qp, u64 wr_id,
		    u32 len);

#endif /* SHCA_KUNIT_QP_H */
