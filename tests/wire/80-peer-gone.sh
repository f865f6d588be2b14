#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A peer that disappears: B serves a long ibv_rc_pingpong, A connects;
# a few seconds in, B takes its end of the link down (its packets and
# the peer's go nowhere) and, later, up again. A's send in flight must end
# with IBV_WC_RETRY_EXC_ERR ("transport retry counter exceeded", status
# 12) once retry_cnt ACK timeouts have passed, promptly, without hanging
# either side; B's server fails as well (its own requests meet the same
# fate, or its port went down). Afterwards the link and a new connection
# work again.
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)

title "B's link goes down during a pingpong"
if wire_is_server; then
	(
		sleep 4
		ip link set "$WIRE_NETDEV" down
		sleep 6
		ip link set "$WIRE_NETDEV" up
	) &
	_flap=$!
	# shellcheck disable=SC2034  # read by wire_serve (lib.sh)
	WIRE_XFAIL="[Ff]ailed|error"
	wire_serve gone 40 tcp:18750 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" \
		-p 18750 -n 1000000 -e
	unset WIRE_XFAIL
	wait $_flap
else
	# shellcheck disable=SC2034  # read by wire_connect (lib.sh)
	WIRE_XFAIL="transport retry counter exceeded \(12\)"
	wire_connect gone 40 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" \
		-p 18750 -n 1000000 -e "$PEER_IP"
	unset WIRE_XFAIL
fi
wire_sync 30 flapped

title "the link back"
expect_port "$WIRE_DEV" state "4: ACTIVE" 20
wait_for 20 _wire_gids || bad "$WIRE_DEV: RoCE v2 GIDs not back"
wait_for 20 ping -c 1 -W 2 "$PEER_IP" >/dev/null ||
	bad "guest $WIRE_PEER does not answer at $PEER_IP again"
wire_pp again 20 tcp:18751 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" -p 18751 -n 20 -e

vm_leftovers 5
