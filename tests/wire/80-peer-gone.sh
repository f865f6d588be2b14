#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A peer that disappears: A streams RDMA WRITEs to B (ib_write_bw, a run
# far longer than the step), and a few seconds in B takes its end of the
# link down (every packet either way is lost) and, later, up again. A's
# WRITEs in flight must end with IBV_WC_RETRY_EXC_ERR ("Failed status
# 12") once retry_cnt ACK timeouts have passed, promptly; B's perftest
# server, waiting on its TCP connection for the end, fails once A has
# gone; nothing hangs. (A pingpong would not do: when the link goes, the
# side waiting for the other's message has nothing outstanding, and
# rightly waits for ever.) Afterwards the link and a new connection work.
# shellcheck disable=SC1091
. /tests/lib.sh

# The requester whose WRITEs meet the dead link is A: the test is about
# softhca's retries (rdma_rxe as requester here hung for the whole step,
# its own business), so it runs when A is softhca.
_a_driver=$WIRE_DRIVER
[ "$WIRE_ROLE" = A ] || _a_driver=$PEER_DRIVER
if [ "$_a_driver" != softhca ]; then
	info "guest A runs $_a_driver: the requester must be softhca"
	exit 0
fi

wire_setup
G4=$(wire_gid 4)

title "B's link goes down during a stream of WRITEs"
# streaming: A's ib_write_bw QP is in RTS and the link carries its packets
streaming() {
	rdma res show qp link "$WIRE_DEV/1" 2>/dev/null |
		grep -q 'type RC state RTS .*comm ib_write_bw' || return 1
	_t1=$(cat "/sys/class/net/$WIRE_NETDEV/statistics/tx_packets")
	sleep 0.5
	_t2=$(cat "/sys/class/net/$WIRE_NETDEV/statistics/tx_packets")
	[ $((_t2 - _t1)) -gt 50 ]
}
# shellcheck disable=SC2034  # read by wire_serve and wire_connect (lib.sh)
if wire_is_server; then
	(
		wire_wait 60 streaming >/dev/null || exit 0
		ip link set "$WIRE_NETDEV" down
		sleep 8
		ip link set "$WIRE_NETDEV" up
		# IPv6 addresses go with the link (keep_addr_on_down is 0)
		ip -6 addr replace "$WIRE_IP6/64" dev "$WIRE_NETDEV" nodad
	) &
	_flap=$!
	# its TCP connection learns of the client's end only once the link
	# is back and TCP's retransmission backs off: a long grace
	WIRE_XFAIL="[Ff]ail|[Ee]rror|Couldn't" WIRE_GRACE=30
	wire_serve gone 60 tcp:18750 ib_write_bw -F -d "$WIRE_DEV" -x "$G4" \
		-p 18750 -n 100000000 -s 65536
	WIRE_GRACE=5
	wait $_flap
else
	(
		wait_for 40 streaming && wire_send streaming
	) &
	_watch=$!
	WIRE_XFAIL="Failed status 12"
	# what the requester did, second by second, shown if it hung
	wire_watch start
	wire_connect gone 60 ib_write_bw -F -d "$WIRE_DEV" -x "$G4" \
		-p 18750 -n 100000000 -s 65536 "$PEER_IP"
	if [ "$(run_rc)" = 124 ]; then
		wire_watch stop show
		# a CPU looping in the kernel, a task blocked in it
		echo l >/proc/sysrq-trigger 2>/dev/null
		echo w >/proc/sysrq-trigger 2>/dev/null
	else
		wire_watch stop
	fi
	info "$WIRE_DEV counters: $(wire_hw_counters)"
	wait $_watch
fi
unset WIRE_XFAIL
wire_sync 30 flapped

title "the link back"
expect_port "$WIRE_DEV" state "4: ACTIVE" 20
wait_for 20 _wire_gids || bad "$WIRE_DEV: RoCE v2 GIDs of $WIRE_IP and $WIRE_IP6 not back"
wait_for 20 ping -c 1 -W 2 "$PEER_IP" >/dev/null ||
	bad "guest $WIRE_PEER does not answer at $PEER_IP again"
wire_pp again 20 tcp:18751 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" -p 18751 -n 20 -e

vm_leftovers 5
