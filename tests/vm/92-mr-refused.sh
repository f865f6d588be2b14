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
need_progs shca_mr_refuse

vm_setup "$DEV"

title "refused registrations"
run shca_mr_refuse "$DEV" || bad "shca_mr_refuse $DEV: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers
