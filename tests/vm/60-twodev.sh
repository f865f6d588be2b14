#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Two devices on two netdevs coexist and are independent.
# shellcheck disable=SC1091
. /tests/lib.sh

drv_load || die "loading $DRV_MOD failed"
must "rdma link add softhca0 netdev eth0" link_add softhca0 eth0
must "rdma link add softhca1 netdev eth1" link_add softhca1 eth1
run rdma link show

title "both present and active"
n=0
for x in "softhca0 eth0" "softhca1 eth1"; do
	# shellcheck disable=SC2086
	set -- $x
	if dev_present "$1"; then ok "$1 listed and in sysfs"; else bad "$1 missing (devs: '$(devs)', sysfs: '$(ibdirs)')"; fi
	expect_eq "netdev of $1" "$2" "$(link_field "$1" netdev)"
	expect_port "$1" state "4: ACTIVE" 10
	expect_eq "node_guid of $1" "$(mac_guid "$2")" "$(cat "$IB/$1/node_guid" 2>/dev/null)"
	n=$((n + 1))
done
g0=$(cat "$IB/softhca0/node_guid" 2>/dev/null)
g1=$(cat "$IB/softhca1/node_guid" 2>/dev/null)
[ "$g0" != "$g1" ] || bad "softhca0 and softhca1 have the same node_guid $g0"

title "port state is per device"
must "ip link set eth0 down" ip link set eth0 down
expect_port softhca0 state "1: DOWN" 10
expect_eq "softhca1 state while eth0 is down" "4: ACTIVE" "$(port_attr softhca1 state)"
must "ip link set eth0 up" ip link set eth0 up
expect_port softhca0 state "4: ACTIVE" 10

title "delete softhca0, softhca1 stays"
must "rdma link delete softhca0" link_del softhca0
if dev_gone softhca0; then ok "softhca0 gone"; else bad "softhca0 still present after delete"; fi
if dev_present softhca1; then ok "softhca1 still present"; else bad "softhca1 disappeared with softhca0"; fi
expect_eq "softhca1 state" "4: ACTIVE" "$(port_attr softhca1 state)"
expect_eq "softhca1 netdev" eth1 "$(link_field softhca1 netdev)"

title "re-add softhca0, delete softhca1, softhca0 stays"
must "rdma link add softhca0 netdev eth0" link_add softhca0 eth0
must "rdma link delete softhca1" link_del softhca1
if dev_gone softhca1; then ok "softhca1 gone"; else bad "softhca1 still present after delete"; fi
if dev_present softhca0; then ok "softhca0 still present"; else bad "softhca0 disappeared with softhca1"; fi
expect_port softhca0 state "4: ACTIVE" 10
must "rdma link delete softhca0" link_del softhca0
must "rmmod $DRV_MOD" drv_unload
