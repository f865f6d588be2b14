#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The other faults netem can make on the link, each guest's egress, one at
# a time: 5% of the packets duplicated, 2% corrupted (a bit flipped
# anywhere in the frame: the receiver's ICRC check, or the IP/UDP
# checksums before it, must drop the packet, and the sender retransmits),
# and with WIRE_REORDER=1 (scripts/wire.sh --env WIRE_REORDER=1) 25%
# reordered (a 2 ms delay that half of the next packets skip). Under each,
# ibv_rc_pingpong with its data checked (-c), and perftest's ib_write_bw
# and ib_read_bw -o 4, must complete. The end of ibv_rc_pingpong is not
# loss-tolerant whatever the driver (see 60-netem-loss): a failed run is
# run once more (WIRE_RETRY); a transport that cannot recover fails both.
# An rdma_rxe server whose last acknowledgement is lost never ends (it
# retries forever at retry_cnt 7): stopped, it runs once more as well.
# Reordering is opt-in: under it a guest died, now and then, of a double
# fault in the slab allocator's fast path (__kmalloc_node_track_caller
# from __alloc_skb, in rdma_rxe's receive path once and in softhca's
# requester once, with unrelated bits of RAX in the saved EFLAGS): it
# looks like QEMU's TCG, not a driver, and it would make the tier fail
# one run in a few. 97-wire (one guest, veth) runs reordering every time.
# softhca's port counters show what happened: duplicate requests
# answered again, out-of-sequence packets, ICRC errors.
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)

# wstat NAME: a softhca port counter of WIRE_DEV (tests/vm/lib.sh)
wstat() { wire_stat "$WIRE_DEV" "$1"; }

port=18700
n=0
set -- "duplicate 5%" "corrupt 2%"
[ "${WIRE_REORDER:-0}" != 1 ] || set -- "$@" "delay 2ms 1ms reorder 25% 50%"
for imp; do
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
