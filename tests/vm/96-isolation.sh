#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Isolation and keys (shca_keys): another process, and a second context of
# the same process, cannot deregister, re-register or free the MRs and PD
# of a victim by trying every handle 0..4095 with raw uverbs commands
# (handles belong to their context: all ENOENT); the victim's MRs stay
# listed by `rdma res`, keep their keys and still work; a second PD in the
# victim's context leaves the first PD's MRs alone. 1000 MRs registered in
# a row have distinct keys that are not an arithmetic sequence (the key
# byte varies, < 10% of consecutive differences repeat). Afterwards
# nothing is left in `rdma res` and no page is pinned. And write access
# cannot be gained by re-registration: an MR registered read-only over a
# read-only mapping must not become writable through ibv_rereg_mr(ACCESS)
# (registering it writable is refused with EFAULT).
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
if [ "$DRV_TYPE" != softhca ]; then
	info "shca_keys expects softhca's rereg semantics (rdma_rxe refuses rereg of access); nothing to do for $DRV_TYPE"
	exit 0
fi
need_progs shca_keys

vm_setup "$DEV"

title "handle isolation and key predictability"
run_t 90 shca_keys "$DEV" 1000 || bad "shca_keys $DEV 1000: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers
