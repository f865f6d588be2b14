// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - addressing: address vectors (of AHs and of connected QPs'
 * paths), the GRH a UD receive starts with, and which devices an
 * address reaches (the device that owns a GID, and whether two devices
 * share an RDMA network namespace).
 */

#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <rdma/ib_addr.h>
#include <rdma/ib_cache.h>

#include "shca_qp_priv.h"
#include "shca_verbs.h"

/**
 * shca_av_init() - an address vector from the core's attributes
 * @av: filled in
 * @attr: the attributes; the core resolved the source GID
 *
 * Return: 0, or -EINVAL without a GRH, for another port or without a
 * source GID.
 */
int shca_av_init(struct shca_av *av, const struct rdma_ah_attr *attr)
{
	const struct ib_global_route *grh;
	struct net_device *ndev;

	if (!(rdma_ah_get_ah_flags(attr) & IB_AH_GRH) ||
	    rdma_ah_get_port_num(attr) != SHCA_PORT)
		return -EINVAL;
	grh = rdma_ah_read_grh(attr);
	if (!grh->sgid_attr)
		return -EINVAL;
	memset(av, 0, sizeof(*av));
	av->dgid = grh->dgid;
	av->sgid = grh->sgid_attr->gid;
	av->flow_label = grh->flow_label;
	av->sgid_index = grh->sgid_index;
	av->traffic_class = grh->traffic_class;
	av->hop_limit = grh->hop_limit;
	av->sl = rdma_ah_get_sl(attr);
	av->net_type = rdma_gid_attr_network_type(grh->sgid_attr);
	/* The L2 fields a receiver sees; a GID whose netdev is gone has none. */
	rdma_read_gid_l2_fields(grh->sgid_attr, &av->vlan_id, av->smac);
	rcu_read_lock();
	ndev = rdma_read_gid_attr_ndev_rcu(grh->sgid_attr);
	av->ifindex = IS_ERR(ndev) ? 0 : ndev->ifindex;
	rcu_read_unlock();
	return 0;
}

/* Bytes of RoCE v2 headers after the IP header: UDP, BTH, DETH, ICRC. */
#define SHCA_ROCE_UD_HDRS	(8 + 12 + 8 + 4)

/**
 * shca_ud_grh() - the GRH area of a UD receive
 * @grh: SHCA_GRH_BYTES, filled in
 * @av: the datagram's address vector
 * @len: bytes of payload
 * @imm: the datagram carries immediate data
 *
 * The 40 bytes a UD receive starts with, as a RoCE v2 HCA fills them: the
 * IPv6 header, or 20 zero bytes and the IPv4 header (checksummed, which
 * ib_get_gids_from_rdma_hdr() verifies).
 */
void shca_ud_grh(u8 *grh, const struct shca_av *av, u32 len, bool imm)
{
	u32 payload = SHCA_ROCE_UD_HDRS + (imm ? 4 : 0) + len;

	memset(grh, 0, SHCA_GRH_BYTES);
	if (av->net_type == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = (struct iphdr *)(grh + 20);

		ip->version = 4;
		ip->ihl = 5;
		ip->tos = av->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + payload);
		ip->frag_off = htons(IP_DF);
		ip->ttl = av->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, av->sgid.raw + 12, 4);
		memcpy(&ip->daddr, av->dgid.raw + 12, 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
	} else {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)grh;

		ip6->version = 6;
		ip6->priority = av->traffic_class >> 4;
		ip6->flow_lbl[0] = (av->traffic_class & 0xf) << 4 |
				   ((av->flow_label >> 16) & 0xf);
		ip6->flow_lbl[1] = av->flow_label >> 8;
		ip6->flow_lbl[2] = av->flow_label;
		ip6->payload_len = htons(payload);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit;
		memcpy(&ip6->saddr, av->sgid.raw, 16);
		memcpy(&ip6->daddr, av->dgid.raw, 16);
	}
}

/**
 * shca_dev_same_net() - two devices are in the same RDMA network namespace
 * @a: a device
 * @b: another device
 *
 * Return: true if a datagram or request of @a may reach @b.
 */
bool shca_dev_same_net(const struct shca_dev *a, const struct shca_dev *b)
{
	/* The core's rdma_dev_net(), which is not exported to drivers. */
	return net_eq(read_pnet(&a->ibdev.coredev.rdma_net),
		      read_pnet(&b->ibdev.coredev.rdma_net));
}

/**
 * shca_dev_owns_gid() - the device's port has a RoCE v2 GID
 * @sdev: the device
 * @gid: the GID
 *
 * Context: any context (the GID table's lock is a reader-writer spinlock).
 * Return: true if @gid is in @sdev's GID table as a RoCE v2 GID.
 */
bool shca_dev_owns_gid(struct shca_dev *sdev, const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;

	attr = rdma_find_gid_by_port(&sdev->ibdev, gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, SHCA_PORT,
				     NULL);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}
