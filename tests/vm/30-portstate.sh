#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The port state follows the netdev: eth0 down -> DOWN/Disabled, up -> ACTIVE.
# shellcheck disable=SC1091
. /tests/lib.sh

drv_load || die "loading $DRV_MOD failed"
must "rdma link add softhca0 type $DRV_TYPE netdev eth0" link_add softhca0 eth0
[ -d "$IB/softhca0" ] || die "$IB/softhca0 missing after link add"
expect_port softhca0 state "4: ACTIVE" 10

title "eth0 down"
must "ip link set eth0 down" ip link set eth0 down
expect_port softhca0 state "1: DOWN" 10
expect_port softhca0 phys_state "3: Disabled" 10
info "rdma link show: $(rdma link show softhca0/1 2>&1)"

title "eth0 up"
must "ip link set eth0 up" ip link set eth0 up
expect_port softhca0 state "4: ACTIVE" 10
expect_port softhca0 phys_state "5: LinkUp" 10
info "rdma link show: $(rdma link show softhca0/1 2>&1)"
gid4=$(ipv4_gid 10.0.2.15)
if wait_for 10 has_gid softhca0 "$gid4"; then
	ok "IPv4-mapped GID $gid4 present after link up"
else
	bad "IPv4-mapped GID $gid4 missing 10s after eth0 came back up"
fi

title "down and up again"
must "ip link set eth0 down" ip link set eth0 down
expect_port softhca0 state "1: DOWN" 10
must "ip link set eth0 up" ip link set eth0 up
expect_port softhca0 state "4: ACTIVE" 10

must "rdma link delete softhca0" link_del softhca0
