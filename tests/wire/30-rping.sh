#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# librdmacm across the link: rping (RC through rdma_cm: address and route
# resolution to the peer's RoCE v2 GID, CM MADs on QP1, RDMA READ and
# WRITE of the ping buffers), B serving, A connecting; "-v -C 20" over
# IPv4, a shorter run over IPv6. The client must print all its pings.
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup

# rping_pair TAG ADDR_OF_B PORT COUNT
rping_pair() {
	if wire_is_server; then
		wire_serve "$1" 15 "cm:$3" rping -s -v -C "$4" -a "$2" -p "$3"
	else
		wire_connect "$1" 15 rping -c -v -C "$4" -a "$2" -p "$3" &&
			expect_eq "$1: ping lines printed by the client" "$4" \
				"$(run_out | grep -c 'ping data: rdma-ping-')"
	fi
}

if [ "$WIRE_ROLE" = B ]; then
	B4=$WIRE_IP B6=$WIRE_IP6
else
	B4=$PEER_IP B6=$PEER_IP6
fi
title "rping over IPv4 ($B4)"
rping_pair rping-v4 "$B4" 7174 20
title "rping over IPv6 ($B6)"
rping_pair rping-v6 "$B6" 7176 5

vm_leftovers 5
