#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Concurrent uverbs: shca_race has several threads and a forked child
# (sharing the context) call verbs on the *same* objects of softhca0 at
# once, phase after phase: MODIFY_QP with random masks and values (first
# the reproduction of the MODIFY_QP heap overflow: every thread sets
# max_dest_rd_atomic of one fresh RC QP at once) against post_send,
# post_recv, poll_cq, query_qp and destroy + recreate of the same RC, UC
# and UD QPs; rereg_mr, dereg_mr, bind_mw, dealloc_mw and advise_mr (with
# on-demand paging) of one MR under RDMA through its keys; modify_srq,
# query_srq and destroy_srq against post_srq_recv on one SRQ under
# traffic; attach_mcast/detach_mcast on UD QPs receiving the groups'
# datagrams; destroy of a CQ's last QP against poll_cq on that CQ. The
# verbs are never serialised against each other (a rwlock per object only
# keeps a destroy from freeing a struct another thread uses). Every result
# must be a success or an errno a race can produce for that verb; no
# hang; afterwards nothing is left: no user object of softhca0 in `rdma
# res`, no pinned page, the device still works, and the kernel log stays
# clean (checked by the runner: with scripts/vm.sh --hardened, slub_debug
# and KFENCE reports too).
#
# RACE_SECS (default 45: the phases share it), RACE_THREADS (default 4)
# and RACE_SEED (default 1) change the run when set in the guest, and
# RACE_PHASES=mr (a comma-separated list) runs only the phases named
# (scripts/vm.sh --env NAME=VALUE 95-race, or RACE_SECS=300 scripts/vm.sh
# --hardened --test-timeout 600 95-race: a run longer than the default
# needs a longer test timeout); the same seed gives each thread the same
# choices, the interleaving differs from run to run.
# About 50 s under TCG; the bounds leave room for a busy host and a
# hardened guest.
# vm-test-timeout: 240
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
SECS=${RACE_SECS:-45}
THREADS=${RACE_THREADS:-4}
SEED=${RACE_SEED:-1}

if [ "$DRV_TYPE" != softhca ]; then
	info "shca_race knows softhca's errnos and driver methods; nothing to do for $DRV_TYPE"
	exit 0
fi
need_progs shca_race shca_mr_many

vm_setup "$DEV"

title "racing verbs on shared objects: seed $SEED, $SECS s, $THREADS threads and a child"
# the phases, then up to 30 s for a stuck verb to be reported, and teardown
run_t $((SECS + 120)) shca_race "$DEV" "$SEED" "$SECS" "$THREADS" ||
	bad "shca_race $DEV $SEED $SECS $THREADS: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers 5
# user_res KIND: what `rdma res show KIND` lists for $DEV besides the
# kernel's own objects (the MAD layer's PD, CQ and GSI QP: comm [ib_core])
user_res() {
	case $1 in
	qp) rdma res show qp link "$DEV/1" 2>&1 ;;
	*) rdma res show "$1" dev "$DEV" 2>&1 ;;
	esac | grep -v 'comm \[ib_core\]'
}
for k in mr pd cq qp srq; do
	expect_eq "user ${k}s listed by rdma res show $k dev $DEV" "" "$(user_res $k)"
done
must "the device still works: shca_mr_many $DEV 100" shca_mr_many "$DEV" 100
