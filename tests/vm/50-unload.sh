#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Unloading the module removes every device; the module reloads and works.
# shellcheck disable=SC1091
. /tests/lib.sh

drv_load || die "loading $DRV_MOD failed"
must "rdma link add softhca0 netdev eth0" link_add softhca0 eth0
must "rdma link add softhca1 netdev eth1" link_add softhca1 eth1
run rdma dev show
for d in softhca0 softhca1; do
	dev_present "$d" || bad "$d not present before unload (devs: '$(devs)', sysfs: '$(ibdirs)')"
done

title "rmmod with two devices"
must "rmmod $DRV_MOD with softhca0 and softhca1 present" drv_unload
if drv_loaded; then bad "$DRV_MOD still in /proc/modules"; else ok "$DRV_MOD unloaded"; fi
for d in softhca0 softhca1; do
	if dev_gone "$d"; then ok "$d gone"; else bad "$d still present after rmmod (devs: '$(devs)', sysfs: '$(ibdirs)')"; fi
done
if rdma link show 2>/dev/null | grep -q '^link softhca'; then
	bad "rdma link show still lists softhca links: $(rdma link show 2>&1)"
fi

title "reload"
drv_load || die "reloading $DRV_MOD failed"
must "rdma link add softhca0 netdev eth0 after reload" link_add softhca0 eth0
expect_port softhca0 state "4: ACTIVE" 10
must "rdma link delete softhca0" link_del softhca0
must "rmmod $DRV_MOD" drv_unload
