#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Packet loss on the link: netem drops 2% of what each guest sends (both
# directions), and ibv_rc_pingpong must still complete - the RC transport
# retransmits (the QP's timeout and retry count, and NAK-driven resends).
# wire_netem (tests/wire/lib.sh) is the hook for later fault tests (delay,
# reordering, duplication, corruption).
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)

must "netem loss 2% on $WIRE_NETDEV" wire_netem loss 2%
title "RC with 2% loss each way"
wire_pp rc-loss 60 tcp:18691 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" -p 18691 -n 100 -e
run /usr/sbin/tc -s qdisc show dev "$WIRE_NETDEV"
info "netem dropped $(run_out | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1) packets here"
must "netem removed" wire_netem off

vm_leftovers 5
