#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What goes on the wire, decoded by someone else: guest A captures its side
# of the link (tcpdump, UDP port 4791) while the two guests run a little of
# everything - RC SEND over IPv4 and IPv6 GIDs, RDMA WRITE, RDMA READ,
# atomic fetch-and-add and compare-and-swap, UD SEND, and rping's rdma_cm
# connection (CM MADs on QP1) - and sends the capture to the host
# (wire_capture_finish; also when a step hung and the test stopped early). scripts/wire.sh then checks every RoCE v2 packet in it:
# its ICRC and word alignment (scripts/wire/pcap-check.py), and tshark's
# InfiniBand dissector must decode each without a malformed packet or an
# expert error.
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)
G6=$(wire_gid 6)

[ "$WIRE_ROLE" != A ] || wire_capture_start wire.pcap udp port 4791

title "traffic to capture"
wire_pp rc-v4 15 tcp:18681 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" -p 18681 -n 5 -s 2500 -e
wire_pp rc-v6 15 tcp:18682 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G6" -p 18682 -n 5 -s 700 -e
wire_pp ud-v4 15 tcp:18683 ibv_ud_pingpong -d "$WIRE_DEV" -g "$G4" -p 18683 -n 5 -s 300 -e
# perftest with -F: see 40-perftest-bw.sh
wire_pp write 15 tcp:18684 ib_write_bw -F -d "$WIRE_DEV" -x "$G4" -p 18684 -n 5 -s 3000
wire_pp read 15 tcp:18685 ib_read_bw -F -d "$WIRE_DEV" -x "$G4" -p 18685 -n 5 -s 3000
wire_pp fadd 15 tcp:18686 ib_atomic_bw -F -d "$WIRE_DEV" -x "$G4" -p 18686 -n 5
wire_pp cswap 15 tcp:18687 ib_atomic_bw -F -d "$WIRE_DEV" -x "$G4" -p 18687 -n 5 -A CMP_AND_SWAP
if wire_is_server; then
	wire_serve rping 15 cm:7175 rping -s -C 3 -a "$WIRE_IP" -p 7175
else
	wire_connect rping 15 rping -c -C 3 -a "$PEER_IP" -p 7175
fi

if [ "$WIRE_ROLE" = A ]; then
	title "the capture"
	wire_capture_finish
	[ "$WIRE_CAPTURED" -gt 0 ] || bad "nothing captured"
fi

vm_leftovers 5
