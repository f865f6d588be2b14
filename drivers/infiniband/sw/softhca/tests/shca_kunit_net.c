// SPDX-License-Identifier: GPL-2.0
/*
 * softhca KUnit fixture: the test network (see shca_kunit_net.h). Its
 * encoder of Ethernet, IP and UDP headers and of the ICRC placement is
 * the test's own: the suites do not reuse the code they test to build
 * what the receiver sees.
 */

#include <linux/delay.h>
#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <linux/unaligned.h>
#include <net/ip.h>
#include <net/ipv6.h>
#include <rdma/ib_cache.h>

#include "shca_kunit.h"
#include "shca_kunit_net.h"

/* The network whose devices' packets the hook takes. */
static struct shca_knet *shca_knet_cur;

/**
 * shca_knet_encap() - what the receiving side of shca_net_send() sees
 * @skb: a packet whose data is at the BTH
 * @path: the path it is sent on
 *
 * Puts Ethernet, IP and UDP headers in front (the network, transport and
 * MAC header offsets set) and the ICRC behind, and leaves the data at
 * the BTH, as shca_net_encap_rcv() leaves it.
 *
 * Return: 0, or -ENOMEM.
 */
int shca_knet_encap(struct sk_buff *skb, const struct shca_path *path)
{
	const struct shca_av *av = &path->av;
	bool v4 = av->net_type == RDMA_NETWORK_IPV4;
	u32 iplen = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	u32 len = skb->len, hdrs = ETH_HLEN + iplen + sizeof(struct udphdr);
	struct udphdr *uh;
	struct ethhdr *eth;
	void *iph;

	if (skb_cow_head(skb, hdrs) ||
	    (skb_tailroom(skb) < SHCA_ICRC_BYTES &&
	     pskb_expand_head(skb, 0, SHCA_ICRC_BYTES, GFP_ATOMIC)))
		return -ENOMEM;
	uh = skb_push(skb, sizeof(*uh));
	skb_reset_transport_header(skb);
	uh->source = htons(path->sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(sizeof(*uh) + len + SHCA_ICRC_BYTES);
	uh->check = 0;
	if (v4) {
		struct iphdr *ip = skb_push(skb, sizeof(*ip));

		memset(ip, 0, sizeof(*ip));
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
		ip->check = ip_fast_csum(ip, ip->ihl);
		skb->protocol = htons(ETH_P_IP);
		iph = ip;
	} else {
		struct ipv6hdr *ip6 = skb_push(skb, sizeof(*ip6));

		ip6_flow_hdr(ip6, av->traffic_class,
			     htonl(av->flow_label & IB_GRH_FLOW_MASK));
		ip6->payload_len = htons(sizeof(*uh) + len + SHCA_ICRC_BYTES);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit ? av->hop_limit : 64;
		memcpy(&ip6->saddr, av->sgid.raw, 16);
		memcpy(&ip6->daddr, av->dgid.raw, 16);
		skb->protocol = htons(ETH_P_IPV6);
		iph = ip6;
	}
	skb_reset_network_header(skb);
	eth = skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	eth_broadcast_addr(eth->h_dest);
	ether_addr_copy(eth->h_source, av->smac);
	eth->h_proto = skb->protocol;
	put_unaligned_le32(shca_icrc(iph, uh, (u8 *)(uh + 1), len),
			   skb_put(skb, SHCA_ICRC_BYTES));
	__skb_pull(skb, hdrs);
	return 0;
}

/* shca_net_send_hook: keep the packet for the pump. */
static int shca_knet_send(struct shca_dev *sdev, const struct shca_path *path,
			  struct sk_buff *skb)
{
	struct shca_knet *net = READ_ONCE(shca_knet_cur);

	if (!net || (sdev != net->sdev[0] && sdev != net->sdev[1]) ||
	    shca_knet_encap(skb, path)) {
		kfree_skb(skb);
		return -EHOSTUNREACH;
	}
	skb_queue_tail(&net->txq, skb);
	if (READ_ONCE(net->autopump) && !READ_ONCE(net->stopped))
		schedule_work(&net->work);
	return 0;
}

/**
 * shca_knet_which() - which device of the network owns a GID
 * @net: the network
 * @gid: the GID
 *
 * Return: 0 or 1, -1 for a GID of no device of the network.
 */
int shca_knet_which(struct shca_knet *net, const union ib_gid *gid)
{
	int i;

	for (i = 0; i < 2; i++)
		if (net->sdev[i] && !memcmp(gid, &net->gid[i], sizeof(*gid)))
			return i;
	return -1;
}

/**
 * shca_knet_rx() - hand a packet to a device, as the UDP socket would
 * @net: the network
 * @to: the device's number
 * @skb: the packet, consumed
 * @pkt: the packet, decoded
 */
void shca_knet_rx(struct shca_knet *net, int to, struct sk_buff *skb,
		  const struct shca_pkt *pkt)
{
	net->delivered[to]++;
	/* shca_wire_rx() runs in softirq context, under RCU. */
	local_bh_disable();
	rcu_read_lock();
	shca_wire_rx(net->sdev[to], skb, pkt);
	rcu_read_unlock();
	local_bh_enable();
}

/* Decode a packet softhca sent and deliver it; consumes @skb. */
static void shca_knet_deliver(struct shca_knet *net, struct sk_buff *skb)
{
	struct shca_pkt pkt;
	int to;

	if (shca_net_decode(skb, &pkt)) {
		KUNIT_FAIL(net->test, "softhca sent a packet that does not decode");
		kfree_skb(skb);
		return;
	}
	to = shca_knet_which(net, &pkt.dgid);
	if (to < 0) {
		net->stray++;
		kfree_skb(skb);
		return;
	}
	shca_knet_rx(net, to, skb, &pkt);
}

static void shca_knet_release(struct shca_knet *net, int from)
{
	struct sk_buff *skb;

	while ((skb = skb_dequeue(&net->held[from])))
		shca_knet_deliver(net, skb);
}

/* A fate drawn at random (xorshift32: reproducible from the seed). */
static enum shca_knet_fate shca_knet_chaos(struct shca_knet *net, u32 permille)
{
	u32 x = net->rnd ?: 1;

	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	net->rnd = x;
	x %= 1000;
	if (x < permille)
		return SHCA_KNET_DROP;
	if (x < 2 * permille)
		return SHCA_KNET_DUP;
	if (x < 3 * permille)
		return SHCA_KNET_HOLD;
	return SHCA_KNET_DELIVER;
}

static enum shca_knet_fate shca_knet_fate(struct shca_knet *net, int from)
{
	const struct shca_knet_rule *r = &net->rule;

	if ((r->from < 0 || r->from == from) &&
	    (r->nth < 0 || r->nth == net->count[from]))
		return r->fate == SHCA_KNET_CHAOS ?
		       shca_knet_chaos(net, r->permille) : r->fate;
	return SHCA_KNET_DELIVER;
}

/* Deliver one packet that was sent, doing to it what the rule says. */
static void shca_knet_pass(struct shca_knet *net, struct sk_buff *skb)
{
	enum shca_knet_fate fate;
	struct sk_buff *dup;
	struct shca_pkt pkt;
	int from;

	if (shca_net_decode(skb, &pkt)) {
		KUNIT_FAIL(net->test, "softhca sent a packet that does not decode");
		kfree_skb(skb);
		return;
	}
	from = shca_knet_which(net, &pkt.sgid);
	if (from < 0 || shca_knet_which(net, &pkt.dgid) < 0) {
		net->stray++;
		kfree_skb(skb);
		return;
	}
	fate = shca_knet_fate(net, from);
	net->seen[net->nseen++ % SHCA_KNET_LOG] = (struct shca_knet_seen){
		.from = from, .opcode = pkt.opcode, .fate = fate,
		.se = pkt.se, .psn = pkt.psn,
	};
	net->count[from]++;
	net->fates[fate]++;
	switch (fate) {
	case SHCA_KNET_DROP:
		kfree_skb(skb);
		break;
	case SHCA_KNET_HOLD:
		skb_queue_tail(&net->held[from], skb);
		break;
	case SHCA_KNET_DUP:
		dup = skb_copy(skb, GFP_KERNEL);
		shca_knet_deliver(net, skb);
		if (dup)
			shca_knet_deliver(net, dup);
		break;
	default:
		/* Decoded above: hand it over without decoding it again. */
		shca_knet_rx(net, shca_knet_which(net, &pkt.dgid), skb, &pkt);
		shca_knet_release(net, from);
		break;
	}
}

/**
 * shca_knet_pump() - deliver what was sent, in order
 * @net: the network
 *
 * Each packet gets what the network's rule says; packets held back go
 * after their sender's next packet, or after SHCA_KNET_HOLD_ROUNDS
 * rounds without a packet.
 */
void shca_knet_pump(struct shca_knet *net)
{
	struct sk_buff_head q;
	struct sk_buff *skb;
	unsigned long flags;
	int i;

	__skb_queue_head_init(&q);
	spin_lock_irqsave(&net->txq.lock, flags);
	skb_queue_splice_tail_init(&net->txq, &q);
	spin_unlock_irqrestore(&net->txq.lock, flags);
	if (skb_queue_empty(&q)) {
		if (++net->idle > SHCA_KNET_HOLD_ROUNDS)
			for (i = 0; i < 2; i++)
				shca_knet_release(net, i);
		return;
	}
	net->idle = 0;
	while ((skb = __skb_dequeue(&q)))
		shca_knet_pass(net, skb);
}

/**
 * shca_knet_run() - pump the network for a while
 * @net: the network
 * @ms: how long, in milliseconds
 */
void shca_knet_run(struct shca_knet *net, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		shca_knet_pump(net);
		usleep_range(100, 200);
	} while (time_before(jiffies, end));
	shca_knet_pump(net);
}

/**
 * shca_knet_dump() - tell what the pump saw last, when a test is failing
 * @net: the network
 */
void shca_knet_dump(struct shca_knet *net)
{
	static const char * const fates[] = { "", " dropped", " duplicated",
					      " held" };
	u32 i = net->nseen > SHCA_KNET_LOG ? net->nseen - SHCA_KNET_LOG : 0;

	kunit_info(net->test, "packets since the mark: a %u, b %u; last:",
		   net->count[0], net->count[1]);
	for (; i < net->nseen; i++) {
		const struct shca_knet_seen *s = &net->seen[i % SHCA_KNET_LOG];

		kunit_info(net->test, "  %c opcode 0x%02x psn %u%s",
			   s->from ? 'b' : 'a', s->opcode, s->psn,
			   fates[s->fate]);
	}
}

/**
 * shca_knet_mark() - count packets and fates from here
 * @net: the network; what was sent so far is delivered first
 *
 * Also takes the devices' wire counters (see shca_knet_delta()).
 */
void shca_knet_mark(struct shca_knet *net)
{
	int i, s;

	shca_knet_pump(net);
	net->count[0] = 0;
	net->count[1] = 0;
	memset(net->fates, 0, sizeof(net->fates));
	net->nseen = 0;
	for (i = 0; i < 2; i++)
		for (s = 0; s < SHCA_WS_MAX; s++)
			net->mark[i][s] = atomic64_read(&net->sdev[i]->wstats[s]);
}

/**
 * shca_knet_delta() - how much a wire counter grew since the mark
 * @net: the network
 * @i: the device's number
 * @s: the counter
 *
 * Return: the growth.
 */
u64 shca_knet_delta(struct shca_knet *net, int i, enum shca_wire_stat s)
{
	return atomic64_read(&net->sdev[i]->wstats[s]) - net->mark[i][s];
}

/* The work item of an auto-pumped network: deliver until nothing is left. */
static void shca_knet_work(struct work_struct *work)
{
	struct shca_knet *net = container_of(work, struct shca_knet, work);

	while (!skb_queue_empty_lockless(&net->txq) && !READ_ONCE(net->stopped))
		shca_knet_pump(net);
}

/*
 * Runs after everything else of the test is gone (registered before the
 * devices): no QP is left to send, so no thread is in the hook.
 */
static void shca_knet_exit(void *p)
{
	struct shca_knet *net = p;
	int i;

	WRITE_ONCE(net->stopped, true);
	cancel_work_sync(&net->work);
	WRITE_ONCE(shca_net_send_hook, NULL);
	WRITE_ONCE(shca_knet_cur, NULL);
	shca_force_wire = net->saved_force_wire;
	skb_queue_purge(&net->txq);
	for (i = 0; i < 2; i++)
		skb_queue_purge(&net->held[i]);
}

/**
 * shca_knet_start() - put the test's connections on the test network
 * @test: the test; owns the network
 *
 * Call before the devices are made (the network goes after them), then
 * shca_knet_attach() each device. Connections that reach RTR from now
 * on, and UD sends, take the UDP link; their packets wait for
 * shca_knet_pump() unless shca_knet_autopump() was called.
 *
 * Return: the network.
 */
struct shca_knet *shca_knet_start(struct kunit *test)
{
	struct shca_knet *net;
	int i;

	net = kunit_kzalloc(test, sizeof(*net), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, net);
	net->test = test;
	INIT_WORK(&net->work, shca_knet_work);
	skb_queue_head_init(&net->txq);
	for (i = 0; i < 2; i++)
		skb_queue_head_init(&net->held[i]);
	net->saved_force_wire = shca_force_wire;
	shca_kunit_defer(test, shca_knet_exit, net);
	shca_force_wire = true;
	WRITE_ONCE(shca_knet_cur, net);
	WRITE_ONCE(shca_net_send_hook, shca_knet_send);
	return net;
}

/**
 * shca_knet_attach() - a device of the network
 * @net: the network
 * @i: its number (0 or 1); packets to its GID 0 go to it
 * @ibdev: the device
 */
void shca_knet_attach(struct shca_knet *net, int i, struct ib_device *ibdev)
{
	KUNIT_ASSERT_EQ(net->test, rdma_query_gid(ibdev, 1, 0, &net->gid[i]), 0);
	WRITE_ONCE(net->sdev[i], to_shca_dev(ibdev));
}

/* Teardown action of an auto-pumped network: stop before the devices go. */
static void shca_knet_stop(void *p)
{
	struct shca_knet *net = p;

	WRITE_ONCE(net->stopped, true);
	cancel_work_sync(&net->work);
	/* A case run over the UDP link that never used it proves nothing. */
	if (net->silent)
		KUNIT_EXPECT_EQ_MSG(net->test, net->delivered[0] +
				    net->delivered[1], 0,
				    "packets crossed the test network");
	else
		KUNIT_EXPECT_GT_MSG(net->test, net->delivered[0] +
				    net->delivered[1], 0,
				    "no packet crossed the test network");
}

/**
 * shca_knet_active() - whether a test network takes the packets now
 *
 * Return: true between shca_knet_start() and the end of its test.
 */
bool shca_knet_active(void)
{
	return !!READ_ONCE(shca_knet_cur);
}

/**
 * shca_knet_pumped() - the test network, if the test's thread pumps it
 *
 * Return: the network between shca_knet_start() and the end of its
 * test, unless shca_knet_autopump() was called; else NULL.
 */
struct shca_knet *shca_knet_pumped(void)
{
	struct shca_knet *net = READ_ONCE(shca_knet_cur);

	return net && !READ_ONCE(net->autopump) ? net : NULL;
}

/**
 * shca_knet_autopump() - deliver each packet as it is sent
 * @net: the network, its devices attached
 *
 * A work item pumps the network (no rule: every packet is delivered), as
 * a real network would without the test's thread; it stops before the
 * devices attached so far are removed.
 */
void shca_knet_autopump(struct shca_knet *net)
{
	shca_kunit_defer(net->test, shca_knet_stop, net);
	WRITE_ONCE(net->autopump, true);
	schedule_work(&net->work);
}
