/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - the UDP link (RoCE v2): the socket and routes (shca_net.c),
 * packets queued and handed to the transport's roles (shca_wire.c).
 * The packet formats and the roles are in shca_transport.h. See
 * Documentation/wire.rst.
 */
#ifndef SHCA_WIRE_H
#define SHCA_WIRE_H

#include <linux/skbuff.h>

#include "shca_transport.h"

struct udphdr;

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

/* shca_pkt.c: the ICRC of a RoCE v2 packet (its IP and UDP headers too) */
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
typedef void (*shca_net_rx_t)(struct shca_dev *sdev, struct sk_buff *skb,
			      const struct shca_pkt *pkt);
int shca_net_init(shca_net_rx_t rx);
void shca_net_fini(void);
int shca_net_attach(struct shca_dev *sdev);
void shca_net_detach(struct shca_dev *sdev);
struct net *shca_net_of(struct shca_dev *sdev);
struct sk_buff *shca_net_alloc(struct shca_dev *sdev, const struct shca_path *path,
			       u32 len, u8 **bth);
int shca_net_send(struct shca_dev *sdev, const struct shca_path *path,
		  struct sk_buff *skb);
struct sk_buff *shca_net_pkt(struct shca_dev *sdev, const struct shca_path *path,
			     struct shca_pkt *pkt, u32 paylen, u8 **payload);
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

/*
 * What the roles use of the UDP link besides shca_net_pkt() and
 * shca_net_send(): the path MTU (the payload bytes of every packet of a
 * message but its last; see shca_wire_start()) and the counters of the
 * packets a QP took or dropped.
 */
static inline u32 shca_wire_mtu(const struct shca_qp *qp)
{
	return qp->path.mtu;
}

static inline void shca_wire_rx_count(struct shca_qp *qp,
				      const struct sk_buff *skb)
{
	shca_wstat_inc(qp->sdev, SHCA_WS_RX_PKTS);
	shca_wstat_add(qp->sdev, SHCA_WS_RX_BYTES, skb->len);
}

static inline void shca_wire_drop(struct shca_qp *qp)
{
	shca_wstat_inc(qp->sdev, SHCA_WS_RX_DROPPED);
}

#endif /* SHCA_WIRE_H */
