#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Packet loss on the link: netem drops 2% of what each guest sends (both
# directions), and ibv_rc_pingpong must still complete - the RC transport
# retransmits (the QP's timeout and retry count, sequence-error NAKs,
# duplicate requests re-acknowledged). The device's hw_counters, if it
# has any, show it happening (rdma_rxe: completer_retry_err,
# duplicate_request, rcvd_seq_err, ...).
# The end of ibv_rc_pingpong is not loss-tolerant whatever the driver: the
# side that finishes first destroys its QP, and if the acknowledgement of
# the other side's last message is lost, that side retransmits into
# nothing (seen once in a dozen runs with rdma_rxe on both sides): usually
# the server, whose last SEND answers the client's ("transport retry
# counter exceeded" while the client passed), in CI once the client. So
# a run that either side fails is run once more (WIRE_RETRY). rdma_rxe
# never fails there: it retries for ever at retry_cnt 7, and an rxe
# server stopped after its grace time, or an rxe client at its time
# limit, counts as a failed run (see wire_serve). A driver that cannot recover
# from loss fails both runs.
# wire_netem (tests/wire/lib.sh) is the hook for later fault tests (delay,
# reordering, duplication, corruption).
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)

must "netem loss 2% on $WIRE_NETDEV" wire_netem loss 2%
title "RC with 2% loss each way"
# shellcheck disable=SC2034  # read by wire_pp (lib.sh)
WIRE_RETRY=".*"
wire_pp rc-loss 40 tcp:18691 ibv_rc_pingpong -d "$WIRE_DEV" -g "$G4" -p 18691 -n 100 -e
unset WIRE_RETRY
run /usr/sbin/tc -s qdisc show dev "$WIRE_NETDEV"
info "netem dropped $(run_out | sed -n 's/.*dropped \([0-9]*\).*/\1/p' | head -n 1) packets here"
counters=$(wire_hw_counters)
info "$WIRE_DEV hw_counters: ${counters:-(none)}"
must "netem removed" wire_netem off

vm_leftovers 5
