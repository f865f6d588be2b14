// SPDX-License-Identifier: GPL-2.0
/**
 * DOC: The link: RoCE v2 over UDP
 *
 * Packets to a peer that is not a softhca device of this host (or to any
 * peer, with the force_wire module parameter) travel as RoCE v2: UDP
 * datagrams to port 4791 in IPv4 or IPv6, from the source GID's address
 * and netdev (a VLAN device for a GID of one: the frame leaves tagged),
 * with the traffic class and hop limit of the address vector and a UDP
 * source port derived from the flow label or the two QP numbers, as the
 * core's rdma_flow_label_to_udp_sport() does, so that ECMP spreads flows
 * and keeps each in order.
 *
 * Each network namespace with softhca devices has one pair of kernel UDP
 * tunnel sockets (IPv4 and IPv6) bound to port 4791, opened when its
 * first device is created and closed with its last. Only one owner of
 * that port can exist per namespace: where rdma_rxe holds it, softhca
 * devices say so once in the kernel log and reach only the softhca
 * devices of the host (the in-memory link), and rdma_rxe cannot be
 * loaded while softhca holds it.
 *
 * The IP and UDP headers are built here rather than by
 * udp_tunnel_xmit_skb(): the ICRC covers the IPv4 header's identification
 * and every address, so the header must be final before the CRC is
 * computed. The IPv4 UDP checksum is zero, as RoCE v2 allows; the IPv6
 * one is computed (udp6_set_csum()), which every receiver accepts.
 *
 * A received datagram is checked (headers, lengths, ICRC), matched to the
 * softhca device of the namespace that owns its destination address, and
 * handed to the transport (shca_wire.c) with the UDP header pulled off.
 */

#include <linux/etherdevice.h>
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/module.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ip6_checksum.h>
#include <net/ipv6.h>
#include <net/ipv6_stubs.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <net/route.h>
#include <net/udp_tunnel.h>

#include "shca_verbs.h"
#include "shca_wire.h"

bool shca_force_wire;
module_param_named(force_wire, shca_force_wire, bool, 0644);
MODULE_PARM_DESC(force_wire,
		 "send RoCE v2 packets to peers on this host too (connections and datagrams set up from now on)");
EXPORT_SYMBOL_IF_KUNIT(shca_force_wire);

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * The KUnit suites of the transport carry packets themselves: while set,
 * shca_net_send() hands every packet to this instead. Packets leave from
 * the QPs' work items, threads of their own, which a static stub (it
 * follows only the test's task) would never see.
 */
typeof(shca_net_send) *shca_net_send_hook;
EXPORT_SYMBOL_IF_KUNIT(shca_net_send_hook);
#endif

/*
 * shca_net_lock serialises attach, detach and the end of a namespace: it
 * protects every namespace's sockets and device list, and each device's
 * wire_attached and wire_net. A namespace can end before its devices are
 * freed (the core unregisters a device whose netdev goes in a work item,
 * after the netdev is gone): its exit takes the devices off the wire
 * itself, and a device's later detach finds nothing to do. Readers of a
 * device's namespace (senders, the path MTU, local GID lookups) use
 * shca_net_of() under RCU; the exit waits for them.
 */
static DEFINE_MUTEX(shca_net_lock);

/* The longest RoCE v2 datagram: headers, 4096 bytes and a pad, ICRC. */
#define SHCA_NET_MAX_DGRAM	(sizeof(struct udphdr) + SHCA_MAX_HDR_BYTES + \
				 4096 + 3 + SHCA_ICRC_BYTES)

/**
 * struct shca_net - softhca's state in a network namespace
 * @sk4: the IPv4 socket on port 4791, or NULL
 * @sk6: the IPv6 socket on port 4791, or NULL
 * @devs: the namespace's devices (shca_dev.net_entry), RCU for receivers
 * @users: devices attached
 * @reopen: opens the sockets once the port is free, if a device tried to
 *	send without them (rdma_rxe held the port, then went)
 * @net: the namespace
 *
 * Everything but @reopen is under shca_net_lock.
 */
struct shca_net {
	struct socket __rcu *sk4;
	struct socket __rcu *sk6;
	struct list_head devs;
	unsigned int users;
	struct delayed_work reopen;
	struct net *net;
};

static unsigned int shca_net_id;

/*
 * Where a checked packet goes up (shca_wire_rx(), the UDP link's
 * executor, which registers it in shca_net_init()): the socket below
 * knows nothing of QPs.
 */
static shca_net_rx_t shca_net_rx __read_mostly;

static struct shca_net *shca_net(const struct net *net)
{
	return net_generic(net, shca_net_id);
}

/**
 * shca_net_of() - the namespace whose wire a device uses
 * @sdev: the device
 *
 * Context: under rcu_read_lock(); the namespace stays valid until it is
 * dropped.
 * Return: the namespace, or NULL for a device not (or no longer) on a
 * wire.
 */
struct net *shca_net_of(struct shca_dev *sdev)
{
	RCU_LOCKDEP_WARN(!rcu_read_lock_held(), "no RCU read lock held");
	if (!READ_ONCE(sdev->wire_attached))
		return NULL;
	return read_pnet(&sdev->wire_net);
}

/**
 * shca_net_sport() - UDP source port of a flow between two QPs
 * @a: a QP number
 * @b: the other
 *
 * Return: a port in the range RoCE v2 reserves for flows (0xc000 up),
 * the same for both directions.
 */
u16 shca_net_sport(u32 a, u32 b)
{
	return rdma_flow_label_to_udp_sport(rdma_calc_flow_label(a, b));
}

/* The address of a packet's IP header as a GID; the network type. */
static int shca_net_addrs(struct sk_buff *skb, struct shca_pkt *pkt)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *ip = ip_hdr(skb);

		ipv6_addr_set_v4mapped(ip->saddr, (struct in6_addr *)pkt->sgid.raw);
		ipv6_addr_set_v4mapped(ip->daddr, (struct in6_addr *)pkt->dgid.raw);
		pkt->net_type = RDMA_NETWORK_IPV4;
		pkt->tclass = ip->tos;
		pkt->hop_limit = ip->ttl;
		pkt->flow_label = 0;
	} else if (skb->protocol == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6 = ipv6_hdr(skb);

		memcpy(pkt->sgid.raw, &ip6->saddr, sizeof(pkt->sgid));
		memcpy(pkt->dgid.raw, &ip6->daddr, sizeof(pkt->dgid));
		pkt->net_type = RDMA_NETWORK_IPV6;
		pkt->tclass = ip6_tclass(ip6_flowinfo(ip6));
		pkt->hop_limit = ip6->hop_limit;
		pkt->flow_label = be32_to_cpu(ip6_flowlabel(ip6));
	} else {
		return -EINVAL;
	}
	return 0;
}

/**
 * shca_net_decode() - decode a received RoCE v2 packet
 * @skb: the packet, linear, its data at the BTH (UDP header pulled)
 * @pkt: filled in
 *
 * Return: 0, or -EINVAL if it is malformed.
 */
int shca_net_decode(struct sk_buff *skb, struct shca_pkt *pkt)
{
	int err;

	err = shca_net_addrs(skb, pkt);
	if (err)
		return err;
	pkt->sport = ntohs(udp_hdr(skb)->source);
	if (skb_mac_header_was_set(skb) &&
	    skb_mac_header_len(skb) >= ETH_HLEN)
		ether_addr_copy(pkt->smac, eth_hdr(skb)->h_source);
	else
		eth_zero_addr(pkt->smac);
	pkt->vlan_id = skb->dev && is_vlan_dev(skb->dev) ?
		       vlan_dev_vlan_id(skb->dev) : 0xffff;
	return shca_pkt_parse(pkt, skb->data, skb->len);
}
EXPORT_SYMBOL_IF_KUNIT(shca_net_decode);

/* The device of @net that owns the packet's destination address. */
static struct shca_dev *shca_net_find_dev(struct shca_net *sn,
					  const union ib_gid *dgid)
{
	struct shca_dev *sdev;

	list_for_each_entry_rcu(sdev, &sn->devs, net_entry)
		if (shca_dev_owns_gid(sdev, dgid))
			return sdev;
	return NULL;
}

/**
 * shca_net_gid_local() - a softhca device of this host owns a GID
 * @sdev: the device asking (its namespace is searched)
 * @gid: the GID
 *
 * A device without a wire reaches only local devices: true for it.
 *
 * Context: any context.
 * Return: true if a device of @sdev's namespace owns @gid.
 */
bool shca_net_gid_local(struct shca_dev *sdev, const union ib_gid *gid)
{
	struct net *net;
	bool found;

	rcu_read_lock();
	net = shca_net_of(sdev);
	found = !net || shca_net_find_dev(shca_net(net), gid);
	rcu_read_unlock();
	return found;
}

/*
 * A datagram to port 4791 (softirq, under RCU). Consumes @skb; returning
 * 0 tells UDP it is taken care of.
 */
static int shca_net_encap_rcv(struct sock *sk, struct sk_buff *skb)
{
	struct shca_net *sn = shca_net(sock_net(sk));
	struct shca_dev *sdev;
	struct shca_pkt pkt;
	u32 icrc;

	/* Longer than any RoCE packet: not worth linearising. */
	if (skb->len > SHCA_NET_MAX_DGRAM || skb_linearize(skb))
		goto drop;
	/* From here on the data is at the BTH. */
	__skb_pull(skb, sizeof(struct udphdr));
	if (shca_net_addrs(skb, &pkt))
		goto drop;
	sdev = shca_net_find_dev(sn, &pkt.dgid);
	if (!sdev)
		goto drop;
	if (shca_net_decode(skb, &pkt)) {
		shca_wstat_inc(sdev, SHCA_WS_RX_DROPPED);
		goto drop;
	}
	icrc = shca_icrc(skb_network_header(skb), udp_hdr(skb), skb->data,
			 skb->len - SHCA_ICRC_BYTES);
	if (icrc != get_unaligned_le32(skb->data + skb->len - SHCA_ICRC_BYTES)) {
		shca_wstat_inc(sdev, SHCA_WS_ICRC_ERRORS);
		goto drop;
	}
	shca_net_rx(sdev, skb, &pkt);
	return 0;

drop:
	kfree_skb(skb);
	return 0;
}

static struct socket *shca_net_open(struct net *net, bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.encap_type = 1,
		.encap_rcv = shca_net_encap_rcv,
	};
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct socket *sock;
	int err;

	err = shca_inject_fault() ? -ENOMEM : udp_sock_create(net, &cfg, &sock);
	if (err)
		return ERR_PTR(err);
	setup_udp_tunnel_sock(net, sock, &tcfg);
	return sock;
}

static void shca_net_close(struct shca_net *sn)
{
	struct socket *sk4, *sk6;

	lockdep_assert_held(&shca_net_lock);
	sk4 = rcu_replace_pointer(sn->sk4, NULL,
				  lockdep_is_held(&shca_net_lock));
	sk6 = rcu_replace_pointer(sn->sk6, NULL,
				  lockdep_is_held(&shca_net_lock));
	/* Each waits for the receivers and senders that may still use it. */
	if (sk4)
		udp_tunnel_sock_release(sk4);
	if (sk6)
		udp_tunnel_sock_release(sk6);
}

/* Open the namespace's sockets if they are not open. */
static int shca_net_open_socks(struct shca_net *sn, struct net *net)
{
	struct socket *sock;

	lockdep_assert_held(&shca_net_lock);
	if (rcu_access_pointer(sn->sk4))
		return 0;
	sock = shca_net_open(net, false);
	if (IS_ERR(sock))
		return PTR_ERR(sock);
	rcu_assign_pointer(sn->sk4, sock);
	if (IS_ENABLED(CONFIG_IPV6)) {
		/* IPv6 may be disabled: then IPv4 only. */
		sock = shca_net_open(net, true);
		if (!IS_ERR(sock))
			rcu_assign_pointer(sn->sk6, sock);
	}
	return 0;
}

/* A device wanted to send without sockets: try the port again. */
static void shca_net_reopen(struct work_struct *work)
{
	struct shca_net *sn = container_of(to_delayed_work(work),
					   struct shca_net, reopen);

	mutex_lock(&shca_net_lock);
	if (sn->users && !rcu_access_pointer(sn->sk4) &&
	    !shca_net_open_socks(sn, sn->net))
		pr_info("softhca: UDP port %u is softhca's again: RoCE v2 to other hosts works\n",
			ROCE_V2_UDP_DPORT);
	mutex_unlock(&shca_net_lock);
}

/**
 * shca_net_has_wire() - the device's namespace has softhca's UDP sockets
 * @sdev: the device
 *
 * False for a device that reaches only the softhca devices of its host:
 * UDP port 4791 was taken (by rdma_rxe) when it was made, and no packet
 * has been sent since the port became free (the next one opens it).
 *
 * Context: any context.
 * Return: true if RoCE v2 packets leave and arrive.
 */
bool shca_net_has_wire(struct shca_dev *sdev)
{
	struct net *net;
	bool ok;

	rcu_read_lock();
	net = shca_net_of(sdev);
	ok = net && rcu_access_pointer(shca_net(net)->sk4);
	rcu_read_unlock();
	return ok;
}
EXPORT_SYMBOL_IF_KUNIT(shca_net_has_wire);

/**
 * shca_net_attach() - put a new device on the wire of its namespace
 * @sdev: the device; its netdev is set
 *
 * Opens the namespace's sockets if they are not open. A port taken by
 * someone else is not an error: the device then has no wire (logged)
 * until a packet it sends finds the port free (shca_net_has_wire()).
 *
 * Context: process context, RTNL not held.
 * Return: 0, or -ENOMEM.
 */
int shca_net_attach(struct shca_dev *sdev)
{
	struct net *net = dev_net(sdev->netdev);
	struct shca_net *sn = shca_net(net);
	int err;

	mutex_lock(&shca_net_lock);
	err = shca_net_open_socks(sn, net);
	if (err == -ENOMEM) {
		mutex_unlock(&shca_net_lock);
		return err;
	}
	if (err)
		pr_warn_ratelimited("softhca: UDP port %u is taken (by rdma_rxe?): %s reaches only softhca devices of this host (error %d)\n",
				    ROCE_V2_UDP_DPORT, dev_name(&sdev->ibdev.dev),
				    err);
	write_pnet(&sdev->wire_net, net);
	list_add_tail_rcu(&sdev->net_entry, &sn->devs);
	sn->users++;
	WRITE_ONCE(sdev->wire_attached, true);
	mutex_unlock(&shca_net_lock);
	return 0;
}

/* Take @sdev off @sn's list; the last device closes the sockets. */
static void shca_net_unlist(struct shca_net *sn, struct shca_dev *sdev)
{
	lockdep_assert_held(&shca_net_lock);
	list_del_rcu(&sdev->net_entry);
	WRITE_ONCE(sdev->wire_attached, false);
	if (!--sn->users)
		shca_net_close(sn);
}

/**
 * shca_net_detach() - take a device off the wire
 * @sdev: a device shca_net_attach() attached, or one it did not
 *
 * Closes the namespace's sockets with its last device. A device whose
 * namespace ended first was taken off by the namespace's exit: nothing
 * is left to do (the namespace may be freed already).
 *
 * Context: process context; waits for an RCU grace period.
 */
void shca_net_detach(struct shca_dev *sdev)
{
	mutex_lock(&shca_net_lock);
	if (!sdev->wire_attached) {
		mutex_unlock(&shca_net_lock);
		return;
	}
	shca_net_unlist(shca_net(read_pnet(&sdev->wire_net)), sdev);
	mutex_unlock(&shca_net_lock);
	/* No receiver or sender still looks at the device's namespace. */
	synchronize_rcu();
}

/**
 * shca_net_alloc() - a packet to fill
 * @sdev: the sending device
 * @path: where it goes
 * @len: bytes from the BTH to the end of the payload and pad
 * @bth: set to where the BTH goes; @len bytes are there, then room for
 *	the ICRC
 *
 * Context: any context.
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *shca_net_alloc(struct shca_dev *sdev,
			       const struct shca_path *path, u32 len, u8 **bth)
{
	u32 hdrs = sizeof(struct udphdr) +
		   (path->av.net_type == RDMA_NETWORK_IPV4 ?
		    sizeof(struct iphdr) : sizeof(struct ipv6hdr));
	u32 head = LL_MAX_HEADER + hdrs;
	struct sk_buff *skb;

	skb = alloc_skb(head + len + SHCA_ICRC_BYTES, GFP_ATOMIC | __GFP_NOWARN);
	if (!skb)
		return NULL;
	skb_reserve(skb, head);
	*bth = skb_put(skb, len);
	return skb;
}

/**
 * shca_net_pkt() - build a packet to send
 * @sdev: the sending device
 * @path: where it goes
 * @pkt: its headers (pad is set here)
 * @paylen: bytes of payload the caller fills in
 * @payload: set to where the payload goes
 *
 * The headers of @pkt, then @paylen bytes at *@payload, padded to four
 * bytes (the ICRC is computed when it is sent).
 *
 * Return: the packet, or NULL without memory.
 */
struct sk_buff *shca_net_pkt(struct shca_dev *sdev, const struct shca_path *path,
			     struct shca_pkt *pkt, u32 paylen, u8 **payload)
{
	u32 hdr = pkt->op->hdr_len, pad = -paylen & 3;
	struct sk_buff *skb;
	u8 *bth;

	skb = shca_net_alloc(sdev, path, hdr + paylen + pad, &bth);
	if (!skb)
		return NULL;
	pkt->pad = pad;
	shca_pkt_build(bth, pkt);
	*payload = bth + hdr;
	memset(bth + hdr + paylen, 0, pad);
	return skb;
}

static struct dst_entry *shca_net_route4(struct net *net,
					 const struct shca_path *path)
{
	struct flowi4 fl = {
		.flowi4_oif = path->av.ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.flowi4_tos = path->av.traffic_class & ~INET_ECN_MASK,
	};
	struct rtable *rt;

	memcpy(&fl.saddr, path->av.sgid.raw + 12, 4);
	memcpy(&fl.daddr, path->av.dgid.raw + 12, 4);
	rt = ip_route_output_key(net, &fl);
	return IS_ERR(rt) ? NULL : &rt->dst;
}

static struct dst_entry *shca_net_route6(struct net *net, struct sock *sk,
					 const struct shca_path *path)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct flowi6 fl = {
		.flowi6_oif = path->av.ifindex,
		.flowi6_proto = IPPROTO_UDP,
	};
	struct dst_entry *dst;

	memcpy(&fl.saddr, path->av.sgid.raw, 16);
	memcpy(&fl.daddr, path->av.dgid.raw, 16);
	dst = ipv6_stub->ipv6_dst_lookup_flow(net, sk, &fl, NULL);
	if (IS_ERR(dst))
		return NULL;
	if (dst->error) {
		dst_release(dst);
		return NULL;
	}
	return dst;
#else
	return NULL;
#endif
}

/*
 * Push the UDP and IP headers in front of the BTH at skb->data, and the
 * ICRC behind the payload.
 */
static void shca_net_headers(struct net *net, const struct shca_path *path,
			     struct sk_buff *skb)
{
	const struct shca_av *av = &path->av;
	u32 len = skb->len;
	struct udphdr *uh;
	void *iph;

	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(path->sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(sizeof(*uh) + len + SHCA_ICRC_BYTES);
	uh->check = 0;

	if (av->net_type == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = skb_push(skb, sizeof(*ip));

		skb_reset_network_header(skb);
		skb->protocol = htons(ETH_P_IP);
		ip->version = 4;
		ip->ihl = sizeof(*ip) >> 2;
		ip->tos = av->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + sizeof(*uh) + len +
				    SHCA_ICRC_BYTES);
		ip->frag_off = htons(IP_DF);
		ip->ttl = av->hop_limit ? av->hop_limit : 64;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, av->sgid.raw + 12, 4);
		memcpy(&ip->daddr, av->dgid.raw + 12, 4);
		ip_select_ident(net, skb, NULL);
		iph = ip;
	} else {
		struct ipv6hdr *ip6 = skb_push(skb, sizeof(*ip6));

		skb_reset_network_header(skb);
		skb->protocol = htons(ETH_P_IPV6);
		ip6_flow_hdr(ip6, av->traffic_class,
			     htonl(av->flow_label & IB_GRH_FLOW_MASK));
		ip6->payload_len = htons(sizeof(*uh) + len + SHCA_ICRC_BYTES);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit ? av->hop_limit : 64;
		memcpy(&ip6->saddr, av->sgid.raw, 16);
		memcpy(&ip6->daddr, av->dgid.raw, 16);
		iph = ip6;
	}
	put_unaligned_le32(shca_icrc(iph, uh, (u8 *)(uh + 1), len),
			   skb_put(skb, SHCA_ICRC_BYTES));
}

/**
 * shca_net_send() - send a packet shca_net_alloc() made
 * @sdev: the sending device
 * @path: where it goes
 * @skb: the packet, its BTH, headers and payload written; consumed
 *
 * Context: any context but hard interrupts.
 * Return: 0 if it left, -EHOSTUNREACH without a route or a socket, or
 * the error of the IP layer. A packet that left may still be lost.
 */
int shca_net_send(struct shca_dev *sdev, const struct shca_path *path,
		  struct sk_buff *skb)
{
	struct net *net;
	struct shca_net *sn;
	struct dst_entry *dst = NULL;
	struct socket *sock;
	u32 len = skb->len;
	int err;

#if IS_ENABLED(CONFIG_KUNIT)
	{
		typeof(shca_net_send_hook) hook = READ_ONCE(shca_net_send_hook);

		if (hook)
			return hook(sdev, path, skb);
	}
#endif
	rcu_read_lock();
	net = shca_net_of(sdev);
	if (!net) {
		rcu_read_unlock();
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	sn = shca_net(net);
	if (path->av.net_type == RDMA_NETWORK_IPV4) {
		sock = rcu_dereference(sn->sk4);
		if (sock)
			dst = shca_net_route4(net, path);
	} else {
		sock = rcu_dereference(sn->sk6);
		if (sock)
			dst = shca_net_route6(net, sock->sk, path);
	}
	/* No socket: the port was taken; try it again within a second. */
	if (!rcu_access_pointer(sn->sk4) && !delayed_work_pending(&sn->reopen))
		queue_delayed_work(system_wq, &sn->reopen, HZ);
	if (!dst) {
		rcu_read_unlock();
		kfree_skb(skb);
		shca_wstat_inc(sdev, SHCA_WS_TX_ERRORS);
		return -EHOSTUNREACH;
	}
	memset(IPCB(skb), 0, sizeof(*IPCB(skb)));
	skb_dst_set(skb, dst);
	shca_net_headers(net, path, skb);
	if (path->av.net_type == RDMA_NETWORK_IPV4) {
		err = ip_local_out(net, sock->sk, skb);
	} else {
		udp6_set_csum(false, skb, (struct in6_addr *)path->av.sgid.raw,
			      (struct in6_addr *)path->av.dgid.raw,
			      ntohs(udp_hdr(skb)->len));
		err = ip6_local_out(net, sock->sk, skb);
	}
	rcu_read_unlock();
	err = net_xmit_eval(err);
	if (err) {
		shca_wstat_inc(sdev, SHCA_WS_TX_ERRORS);
		return err;
	}
	shca_wstat_inc(sdev, SHCA_WS_TX_PKTS);
	shca_wstat_add(sdev, SHCA_WS_TX_BYTES, len + SHCA_ICRC_BYTES);
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(shca_net_send);

static int __net_init shca_net_init_ns(struct net *net)
{
	struct shca_net *sn = shca_net(net);

	INIT_LIST_HEAD(&sn->devs);
	INIT_DELAYED_WORK(&sn->reopen, shca_net_reopen);
	sn->net = net;
	return 0;
}

/*
 * The namespace ends. Its netdevs are gone, but their softhca devices
 * may not be freed yet (the core unregisters them in a work item): take
 * them off the wire now, and wait for whoever still reads the namespace
 * through one of them before it is freed.
 */
static void __net_exit shca_net_exit_ns(struct net *net)
{
	struct shca_net *sn = shca_net(net);
	struct shca_dev *sdev, *next;

	mutex_lock(&shca_net_lock);
	list_for_each_entry_safe(sdev, next, &sn->devs, net_entry)
		shca_net_unlist(sn, sdev);
	/* Without devices the sockets are closed already; be sure. */
	shca_net_close(sn);
	mutex_unlock(&shca_net_lock);
	synchronize_rcu();
	/* No sender is left to queue it again. */
	cancel_delayed_work_sync(&sn->reopen);
}

static struct pernet_operations shca_net_ops = {
	.init = shca_net_init_ns,
	.exit = shca_net_exit_ns,
	.id = &shca_net_id,
	.size = sizeof(struct shca_net),
};

/**
 * shca_net_init() - set up softhca's state in every network namespace
 * @rx: what takes the packets received (shca_wire_rx())
 *
 * Return: 0 or a negative errno.
 */
int shca_net_init(shca_net_rx_t rx)
{
	shca_net_rx = rx;
	return register_pernet_subsys(&shca_net_ops);
}

/**
 * shca_net_fini() - undo shca_net_init(); every device is gone
 */
void shca_net_fini(void)
{
	unregister_pernet_subsys(&shca_net_ops);
}
