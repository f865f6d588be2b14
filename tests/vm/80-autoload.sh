#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# "rdma link add ... type softhca" loads the module by itself, through its
# rdma-link-softhca alias (scripts/vm.sh installs it where modprobe finds it).
# shellcheck disable=SC1091
. /tests/lib.sh

if drv_loaded; then die "$DRV_MOD is loaded at the start of the test"; fi
must "rdma link add softhca0 type $DRV_TYPE netdev eth0 (module not loaded)" link_add softhca0 eth0
if drv_loaded; then ok "$DRV_MOD was loaded on demand"; else bad "$DRV_MOD is not in /proc/modules after link add"; fi
if dev_present softhca0; then ok "softhca0 present"; else bad "softhca0 missing (devs: '$(devs)', sysfs: '$(ibdirs)')"; fi
expect_port softhca0 state "4: ACTIVE" 10
must "rdma link delete softhca0" link_del softhca0
must "rmmod $DRV_MOD" drv_unload
