#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# vm-test-timeout: 300
#
# Hostile packets on the wire (wire_setup: softhca0 on va here, softhca1
# on vb in $WIRE_NS): shca_hostile, in the other namespace, connects a
# victim RC QP pair, a UC pair, a UD QP and a bystander RC pair between
# the two devices, then sends softhca0 RoCE v2 packets of its own making
# from a raw IPv4 socket and an IPv6 UDP socket - every opcode, QPNs,
# PSNs, rkeys, addresses and lengths at and across the bounds of the
# victim's MR, truncated headers, bad ICRCs, P_Keys and versions, garbage
# under a valid ICRC (see the program's header). It checks that every
# packet is counted once in rx_packets, rx_dropped or icrc_errors (each
# alone as it goes, then all in sum), that no byte outside what the
# victim's MR allows changed (canaries), that the bystander still works.
# Here: the program's exit status, QP1 of softhca0 still RTS and rdma_cm
# (which goes through it) still connecting, nothing left behind; the
# runner checks the kernel log.
#
# FUZZ_SEED, FUZZ_HOSTILE_PACKETS, FUZZ_HOSTILE_BURST and
# FUZZ_HOSTILE_WAIT_MS change the run (scripts/vm.sh --env NAME=VALUE).
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
D1=${DRV_TYPE}1
need_progs shca_hostile
[ "$DRV_TYPE" = softhca ] || { info "softhca only (shca_hostile reads softhca's port counters)"; exit 0; }

# qp_state DEV QPN: the state of a QP per `rdma res` (kernel QPs too)
qp_state() {
	rdma res show qp link "$1/1" lqpn "$2" 2>/dev/null |
		awk '{ for (i = 1; i < NF; i++) if ($i == "state") { print $(i + 1); exit } }'
}

wire_setup
expect_eq "QP1 of $D0 before the packets" RTS "$(qp_state "$D0" 1)"

title "hostile packets from $WIRE_NS to $D0"
echo "  \$ ip netns exec $WIRE_NS shca_hostile $D0 $D1"
ip netns exec "$WIRE_NS" timeout -k 5 240 shca_hostile "$D0" "$D1" >/tmp/hostile.out 2>&1
_rc=$?
sed 's/^/    /' /tmp/hostile.out
_n=$(grep -c '^  ok - ' /tmp/hostile.out)
_f=$(grep -c '^  FAIL - ' /tmp/hostile.out)
if [ $_rc -eq 0 ] && [ "$_n" -gt 10 ]; then
	ok "shca_hostile: $_n checks passed"
else
	bad "shca_hostile: exit status $_rc, $_f of $((_n + _f)) checks failed"
fi
run rdma statistic show link "$D0/1"

title "the management QP and rdma_cm after the packets"
# rping_once: a new rdma_cm connection to $D0 (through both QP1s)
rping_once() {
	echo "  \$ rping -s -a 10.9.0.1 -C 3 -v &"
	timeout -k 5 20 rping -s -a 10.9.0.1 -C 3 -v >/tmp/rping.out 2>&1 &
	_spid=$!
	sleep 1
	run_t 20 ip netns exec "$WIRE_NS" rping -c -a 10.9.0.1 -C 3 -v
	_crc=$?
	! rping_raced $_crc "$(run_out)" || _crc=0
	wait $_spid
	_src=$?
	! rping_raced $_src "$(cat /tmp/rping.out)" || _src=0
	if [ $_crc -eq 0 ] && [ $_src -eq 0 ] && run_out | grep -q "rdma-ping-2: "; then
		ok "rping: a new rdma_cm connection to $D0 after the packets"
	else
		bad "rping after the packets: client exit status $_crc, server $_src"
		sed 's/^/    server: /' /tmp/rping.out
	fi
}
# Among the program's datagrams to QP1: one of 600 bytes, more than a MAD.
expect_eq "QP1 of $D0 after the packets" RTS "$(qp_state "$D0" 1)"
if [ "$(qp_state "$D0" 1)" = RTS ]; then
	rping_once
else
	info "no rping: rdma_cm cannot connect through a QP1 in the error state"
fi

vm_leftovers 10
