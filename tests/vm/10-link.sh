#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# rdma link add / show / delete, re-add, and module unload afterwards.
# shellcheck disable=SC1091
. /tests/lib.sh

title "load the driver"
drv_load || die "loading $DRV_MOD failed"
if drv_loaded; then ok "$DRV_MOD is in /proc/modules"; else die "$DRV_MOD is not in /proc/modules after loading"; fi
before=$(devs)
info "devices before: '${before}'"

title "add softhca0 on eth0"
must "rdma link add softhca0 type $DRV_TYPE netdev eth0" link_add softhca0 eth0
run rdma link show
expect_eq "rdma link show: netdev of softhca0" eth0 "$(link_field softhca0 netdev)"
run rdma dev show
if dev_listed softhca0; then ok "rdma dev show lists softhca0"; else bad "rdma dev show does not list softhca0 (saw: '$(devs)')"; fi
if [ -d "$IB/softhca0" ]; then ok "$IB/softhca0 exists"; else bad "$IB/softhca0 missing (have: '$(ibdirs)')"; fi

title "delete softhca0"
must "rdma link delete softhca0" link_del softhca0
if dev_listed softhca0; then bad "rdma dev show still lists softhca0 after delete"; else ok "softhca0 gone from rdma dev show"; fi
if [ -e "$IB/softhca0" ]; then bad "$IB/softhca0 still exists after delete"; else ok "$IB/softhca0 gone"; fi
if rdma link show 2>/dev/null | grep -q '^link softhca0/'; then bad "rdma link show still lists softhca0"; else ok "softhca0 gone from rdma link show"; fi
expect_eq "devices after delete" "$before" "$(devs)"

title "re-add and delete again"
must "re-add softhca0 on eth0" link_add softhca0 eth0
expect_eq "netdev of re-added softhca0" eth0 "$(link_field softhca0 netdev)"
if dev_present softhca0; then ok "softhca0 listed and in sysfs"; else bad "re-added softhca0 not listed or not in sysfs (devs: '$(devs)', sysfs: '$(ibdirs)')"; fi
must "delete softhca0 again" link_del softhca0
if dev_gone softhca0; then ok "softhca0 gone again"; else bad "softhca0 still present after the second delete"; fi

title "unload"
must "rmmod $DRV_MOD" drv_unload
if drv_loaded; then bad "$DRV_MOD still in /proc/modules after rmmod"; else ok "$DRV_MOD unloaded"; fi
