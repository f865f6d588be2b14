#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Deleting the netdev under a device removes the device by itself.
# shellcheck disable=SC1091
. /tests/lib.sh

drv_load || die "loading $DRV_MOD failed"
must "ip link add dummy0 type dummy; ip link set dummy0 up" add_dummy dummy0
must "rdma link add softhca0 netdev dummy0" link_add softhca0 dummy0
must "rdma link add softhca1 netdev eth0 (bystander)" link_add softhca1 eth0
expect_eq "netdev of softhca0" dummy0 "$(link_field softhca0 netdev)"
dev_present softhca0 || die "softhca0 not present after link add"

title "delete dummy0"
# run() bounds the command by 30s: a hang shows up as exit status 124.
must "ip link del dummy0 (returns, no hang)" ip link del dummy0
if wait_for 10 dev_gone softhca0; then
	ok "softhca0 disappeared by itself"
else
	bad "softhca0 still present 10s after its netdev was deleted (devs: '$(devs)', sysfs: '$(ibdirs)')"
fi
if rdma link show 2>/dev/null | grep -q '^link softhca0/'; then
	bad "rdma link show still lists softhca0"
fi
if dev_present softhca1; then ok "softhca1 (eth0) unaffected"; else bad "softhca1 (eth0) disappeared too"; fi
expect_port softhca1 state "4: ACTIVE" 10

title "unload"
must "rdma link delete softhca1" link_del softhca1
must "rmmod $DRV_MOD" drv_unload
if drv_loaded; then bad "$DRV_MOD still loaded"; else ok "$DRV_MOD unloaded"; fi
