#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Invalid rdma link add requests fail and change nothing.
# shellcheck disable=SC1091
. /tests/lib.sh

drv_load || die "loading $DRV_MOD failed"

# unchanged DESC: the device set is the same as in $snap_devs/$snap_sysfs
snapshot() {
	snap_devs=$(devs)
	snap_sysfs=$(ibdirs)
}
unchanged() {
	expect_eq "rdma dev show after $1" "$snap_devs" "$(devs)"
	expect_eq "$IB after $1" "$snap_sysfs" "$(ibdirs)"
}

title "unknown netdev"
snapshot
mustfail "rdma link add softhca0 netdev nosuch0" link_add softhca0 nosuch0
unchanged "netdev nosuch0"

title "name already taken"
must "rdma link add softhca0 type $DRV_TYPE netdev eth0" link_add softhca0 eth0
snapshot
mustfail "second rdma link add softhca0 (netdev eth1)" link_add softhca0 eth1
unchanged "duplicate name"
expect_eq "softhca0 still on" eth0 "$(link_field softhca0 netdev)"

title "second device on the same netdev"
mustfail "rdma link add softhca1 netdev eth0 (eth0 already has softhca0)" link_add softhca1 eth0
unchanged "second device on eth0"

title "name with '%'"
mustfail "rdma link add 'soft%dhca' netdev eth1" link_add 'soft%dhca' eth1
unchanged "name with %"
if dev_listed softhca1 || [ -e "$IB/softhca1" ]; then
	bad "a device softhca1 appeared (a '%d' name must not be expanded)"
fi

title "the device still works"
expect_port softhca0 state "4: ACTIVE" 10
must "rdma link delete softhca0" link_del softhca0
if dev_gone softhca0; then ok "softhca0 deleted"; else bad "softhca0 still present after delete"; fi
must "rmmod $DRV_MOD" drv_unload
