#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Refused registrations leave nothing behind (shca_mr_refuse): more than
# RLIMIT_MEMLOCK pinned by an unprivileged user (uid 65534, no
# CAP_IPC_LOCK) gets ENOMEM, ranges that wrap around get EINVAL, and
# deregistering an MR (or freeing a PD) whose handle was already destroyed
# is an error, not a crash. Afterwards no MR is listed and no page pinned.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
command -v shca_mr_refuse >/dev/null || die "shca_mr_refuse missing: build tests/vm/bin with 'make vm-programs'"

drv_load || die "loading $DRV_MOD failed"
must "rdma link add $DEV type $DRV_TYPE netdev eth0" link_add "$DEV" eth0
expect_port "$DEV" state "4: ACTIVE" 10
pins0=$(foll_pins)
info "pinned pages in the system: $pins0"

title "refused registrations"
run shca_mr_refuse "$DEV" || bad "shca_mr_refuse $DEV: exit status $(run_rc)"

title "nothing left behind"
run rdma res show
if run_out | grep -Eq "^[0-9]+: $DEV: .* mr 0 ctx 0( |\$)"; then
	ok "rdma res show counts mr 0 and ctx 0 for $DEV"
else
	bad "rdma res show does not count mr 0 and ctx 0 for $DEV"
fi
expect_eq "pinned pages in the system" "$pins0" "$(foll_pins)"
