#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# UD SEND/RECV across the link: ibv_ud_pingpong (event-driven), B serving,
# A connecting, 512-byte messages (a UD message fits the RoCE MTU of 1024),
# through an address handle on the RoCE v2 GID of each side's IPv4 address,
# then of its IPv6 address (indexes from sysfs, wire_gid).
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)
G6=$(wire_gid 6)

title "UD, RoCE v2 IPv4 GID (index $G4)"
wire_pp ud-v4 15 tcp:18621 ibv_ud_pingpong -d "$WIRE_DEV" -g "$G4" -p 18621 -n 50 -s 512 -e
title "UD, RoCE v2 IPv6 GID (index $G6)"
wire_pp ud-v6 15 tcp:18622 ibv_ud_pingpong -d "$WIRE_DEV" -g "$G6" -p 18622 -n 50 -s 512 -e

vm_leftovers 5
