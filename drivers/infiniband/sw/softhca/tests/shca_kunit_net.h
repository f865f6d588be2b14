/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca KUnit fixture: the test network. Connections of the devices it
 * knows are forced onto the UDP link (shca_force_wire); every packet
 * shca_net_send() would put on the wire is handed to the network instead
 * (shca_net_send_hook), which gives it the headers and ICRC a receiver
 * sees and delivers it to the device that owns its destination GID, as
 * the UDP socket would. Either the test's thread pumps it (and can drop,
 * duplicate or hold back the packets it chooses: the wire suites; the
 * data-path fixture's helpers pump it while they wait, see
 * shca_knet_pumped()), or a work item delivers each packet as it comes
 * (suites that run the same cases over both links).
 */
#ifndef SHCA_KUNIT_NET_H
#define SHCA_KUNIT_NET_H

#include <linux/skbuff.h>
#include <linux/workqueue.h>
#include <kunit/test.h>

#include "../shca_wire.h"

/* Packets the network remembers, for reports. */
#define SHCA_KNET_LOG	64
/* Pump rounds without a new packet before held packets go anyway. */
#define SHCA_KNET_HOLD_ROUNDS	40

enum shca_knet_fate {
	SHCA_KNET_DELIVER,
	SHCA_KNET_DROP,
	SHCA_KNET_DUP,		/* delivered twice */
	SHCA_KNET_HOLD,		/* delivered after the sender's next packet */
	SHCA_KNET_CHAOS,	/* a rule only: each of the three above, at random */
};

/**
 * struct shca_knet_rule - what the pump does to which packet
 * @fate: what it does
 * @from: to packets of device @from (0 or 1), -1 for either
 * @nth: to the @nth packet (counted from 0 since shca_knet_mark()) that
 *	device sends, -1 for every one
 * @permille: for SHCA_KNET_CHAOS: the chance, in thousandths, that a
 *	packet is dropped; the same that it is duplicated, and held back
 */
struct shca_knet_rule {
	enum shca_knet_fate fate;
	int from;
	int nth;
	u32 permille;
};

/* A packet the pump saw. */
struct shca_knet_seen {
	u8 from;
	u8 opcode;
	u8 fate;
	bool se;
	u32 psn;
};

/**
 * struct shca_knet - the test network between two softhca devices
 * @test: the test that owns it
 * @sdev: the devices, by number (shca_knet_attach())
 * @gid: their GID 0
 * @saved_force_wire: shca_force_wire before the test
 * @autopump: a work item delivers packets as they are sent
 * @silent: the case expects no packet to cross (an auto-pumped network
 *	checks at its end that packets crossed, or none if @silent)
 * @stopped: the work item is stopped for good (the devices are going)
 * @work: that work item
 * @txq: sent, not yet pumped
 * @held: held back, per sender
 * @rule: what the pump does to which packet
 * @idle: pump rounds without packets
 * @rnd: state of the random numbers SHCA_KNET_CHAOS draws (a test seeds
 *	it: the same seed, the same fates)
 * @count: packets each device sent since the mark
 * @fates: fates given since the mark
 * @delivered: packets handed to each device
 * @stray: packets to or from no GID of the network
 * @nseen: packets seen since the mark
 * @seen: the last SHCA_KNET_LOG of them
 * @mark: the devices' wire counters at the mark
 */
struct shca_knet {
	struct kunit *test;
	struct shca_dev *sdev[2];
	union ib_gid gid[2];
	bool saved_force_wire;
	bool autopump;
	bool silent;
	bool stopped;
	struct work_struct work;
	struct sk_buff_head txq;
	struct sk_buff_head held[2];
	struct shca_knet_rule rule;
	u32 idle;
	u32 rnd;
	u32 count[2];
	u32 fates[SHCA_KNET_CHAOS];
	u32 delivered[2];
	u32 stray;
	u32 nseen;
	struct shca_knet_seen seen[SHCA_KNET_LOG];
	u64 mark[2][SHCA_WS_MAX];
};

int shca_knet_encap(struct sk_buff *skb, const struct shca_path *path);
struct shca_knet *shca_knet_start(struct kunit *test);
void shca_knet_attach(struct shca_knet *net, int i, struct ib_device *ibdev);
void shca_knet_autopump(struct shca_knet *net);
bool shca_knet_active(void);
int shca_knet_which(struct shca_knet *net, const union ib_gid *gid);
void shca_knet_rx(struct shca_knet *net, int to, struct sk_buff *skb,
		  const struct shca_pkt *pkt);
void shca_knet_pump(struct shca_knet *net);
void shca_knet_run(struct shca_knet *net, int ms);
struct shca_knet *shca_knet_pumped(void);
void shca_knet_dump(struct shca_knet *net);
void shca_knet_mark(struct shca_knet *net);
u64 shca_knet_delta(struct shca_knet *net, int i, enum shca_wire_stat s);

#endif /* SHCA_KUNIT_NET_H */
