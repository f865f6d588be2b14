#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# RC SEND/RECV across the link: ibv_rc_pingpong (event-driven, -e: busy
# polling is 10x slower under TCG), B serving, A connecting, 4 KiB messages
# (four packets each at the link's RoCE MTU of 1024).
#  - without -g: rdma-core's pingpong then sends no GRH, and the RDMA core
#    refuses a RoCE address vector without one (modify_qp to RTR fails,
#    EINVAL) before any driver sees it: the server must fail that way,
#    the client (which then gets no answer) promptly too;
#  - -g at the RoCE v2 GID of each side's IPv4 address, then of its IPv6
#    address, each index found in sysfs (wire_gid: gid_attrs/types/N is
#    "RoCE v2" and gids/N the address), never assumed.
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)
G6=$(wire_gid 6)
info "$WIRE_DEV: $(ibv_devinfo -d "$WIRE_DEV" 2>/dev/null |
	awk '$1 == "active_mtu:" { print "active_mtu", $2, $3 }'), $WIRE_NETDEV mtu $(cat "/sys/class/net/$WIRE_NETDEV/mtu")"

title "RC without -g (no GRH): refused on RoCE"
# shellcheck disable=SC2034  # read by wire_pp (lib.sh)
WIRE_XFAIL="Failed to modify QP to RTR|Couldn't read/write remote address"
wire_pp rc-nog 15 tcp:18601 ibv_rc_pingpong -d "$WIRE_DEV" -p 18601 -n 10 -e
unset WIRE_XFAIL
title "RC, RoCE v2 IPv4 GID (index $G4)"
wire_pp rc-v4 15 tcp:18602 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" -p 18602 -n 50 -e
title "RC, RoCE v2 IPv6 GID (index $G6)"
wire_pp rc-v6 15 tcp:18603 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G6" -p 18603 -n 50 -e

vm_leftovers 5
