#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The other faults netem can make on the link, each guest's egress, one at
# a time: 5% of the packets duplicated, 25% reordered (a 2 ms delay that
# half of the next packets skip), 2% corrupted (a bit flipped anywhere in
# the frame: the receiver's ICRC check, or the IP/UDP checksums before it,
# must drop the packet, and the sender retransmits). Under each,
# ibv_rc_pingpong with its data checked (-c), and perftest's ib_write_bw
# and ib_read_bw, must complete. The end of ibv_rc_pingpong is not
# loss-tolerant whatever the driver (see 60-netem-loss): a failed run is
# run once more (WIRE_RETRY); a transport that cannot recover fails both.
# ib_read_bw runs with 4 READs outstanding (-o 4): with perftest's
# default, as many as the responder offers (128 for both drivers), the
# go-back-N after a reordered READ response asks again for every READ
# behind it, and Debian 6.12's rdma_rxe, answering those duplicates,
# died of a double fault in its receive path (rxe_receiver ->
# prepare_ack_packet -> __alloc_skb; softhca as requester, rxe as
# responder, reorder 25%): not what this test is about.
# softhca's port counters show what happened: duplicate requests
# answered again, out-of-sequence packets, ICRC errors.
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)

# wstat NAME: a softhca port counter of WIRE_DEV (0 for rxe)
wstat() {
	cat "$IB/$WIRE_DEV/ports/1/hw_counters/$1" 2>/dev/null || echo 0
}

port=18700
n=0
for imp in "duplicate 5%" "delay 2ms 1ms reorder 25% 50%" "corrupt 2%"; do
	n=$((n + 1))
	title "netem $imp on both sides"
	# shellcheck disable=SC2086
	must "netem $imp on $WIRE_NETDEV" wire_netem $imp
	port=$((port + 1))
	# shellcheck disable=SC2034  # read by wire_pp (lib.sh)
	WIRE_RETRY=".*"
	wire_pp "rc-$n" 60 "tcp:$port" ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" \
		-p $port -n 40 -s 4096 -e -c
	unset WIRE_RETRY
	port=$((port + 1))
	wire_pp "write-$n" 60 "tcp:$port" ib_write_bw -F -d "$WIRE_DEV" -x "$G4" \
		-p $port -n 40 -s 16384
	port=$((port + 1))
	wire_pp "read-$n" 60 "tcp:$port" ib_read_bw -F -d "$WIRE_DEV" -x "$G4" \
		-p $port -n 40 -s 16384 -o 4
	must "netem removed" wire_netem off
done
if [ "$WIRE_DRIVER" = softhca ]; then
	info "$WIRE_DEV: retransmits $(wstat retransmits), ack_timeouts $(wstat ack_timeouts), duplicate_requests $(wstat duplicate_requests), out_of_sequence $(wstat out_of_sequence), icrc_errors $(wstat icrc_errors), rx_dropped $(wstat rx_dropped)"
	if [ "$(wstat retransmits)" -gt 0 ]; then
		ok "$WIRE_DEV retransmitted"
	else
		bad "$WIRE_DEV never retransmitted: the faults did not reach the transport"
	fi
fi

vm_leftovers 5
