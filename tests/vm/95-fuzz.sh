#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Hostile userspace: shca_fuzz drives the uverbs interface of softhca0 with
# random and boundary values, through libibverbs and through raw uverbs
# write() commands on the context's cmd_fd (REG_MR, REREG_MR, DEREG_MR,
# ALLOC_PD, DEALLOC_PD with any handle, address, length, iova, access and
# response pointer; device memory, dma-bufs, munmap/mremap of registered
# memory; CQs and RC, UD (and UC, where softhca has them) QPs created,
# modified towards random states and destroyed, work requests with random
# opcodes, flags, SGEs, keys and addresses executed against the process'
# own memory, CQs polled; SRQs created, modified, queried, posted to and
# destroyed (also while QPs use them), QPs on SRQs; address handles to
# the device's, multicast and foreign GIDs with any source GID index and
# port; UD sends to the process' QPs, to QP1 and to QPNs nobody has; raw
# CREATE/MODIFY/QUERY/DESTROY_SRQ, POST_SRQ_RECV, CREATE/DESTROY_AH with
# garbage handles and lengths; memory windows allocated, bound to the
# process' MRs (ibv_bind_mw, IBV_WR_BIND_MW, LOCAL_INV), used as rkeys and
# deallocated, raw ALLOC_MW/DEALLOC_MW and raw ioctls of softhca's
# POST_LOCAL method with any handle, attribute, request and header; the
# QPs' mapped send and receive rings written into behind the provider's
# back and raw DOORBELL ioctls with any handle, queue, producer, attribute
# and header; rings mapped again, privately, with the wrong length and
# after their QP is gone), in
# several processes at once, some of them SIGKILLed half way, windows
# bound or not.
# Every result must be a success or an expected errno; afterwards nothing
# is left: no user object of softhca0 in `rdma res` (windows are not
# listed there - the core does not track them - but each holds its PD,
# and an MR a window is bound to cannot go), no pinned page (/proc/vmstat),
# and the kernel log stays clean (checked by the runner).
#
# FUZZ_SEED (default 1), FUZZ_ITERS (iterations per process, default
# 120000: about 70 s under TCG), FUZZ_PROCS (default 6) and FUZZ_SECS
# (time budget, default 100 s: a busy host runs fewer iterations instead
# of failing on time; 0 for none) change the run when set in the guest
# (scripts/vm.sh --shell, then sh /tests/95-fuzz.sh, or scripts/vm.sh
# --env NAME=VALUE 95); the same seed gives the same sequence of
# operations. On-demand paging registrations are fuzzed too; FUZZ_NO_ODP=1
# leaves them out (to tell a pinned-memory failure from an ODP one).
# shca_fuzz reads FUZZ_NO_ODP from its environment.
# About 65 s of fuzzing under TCG on a quiet host; the bounds leave room
# for a busy one.
# vm-test-timeout: 200
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
SEED=${FUZZ_SEED:-1}
ITERS=${FUZZ_ITERS:-120000}
PROCS=${FUZZ_PROCS:-6}
SECS=${FUZZ_SECS:-100}

if [ "$DRV_TYPE" != softhca ]; then
	info "shca_fuzz knows softhca's rules (errnos, device memory); nothing to do for $DRV_TYPE"
	exit 0
fi
need_progs shca_fuzz

vm_setup "$DEV"

title "fuzzing: seed $SEED, $ITERS iterations x $PROCS processes"
run_t 160 shca_fuzz "$DEV" "$SEED" "$ITERS" "$PROCS" "$SECS" ||
	bad "shca_fuzz $DEV $SEED $ITERS $PROCS $SECS: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers
# user_res KIND: what `rdma res show KIND` lists for $DEV besides the
# kernel's own objects (the MAD layer's PD, CQ and GSI QP: comm [ib_core])
# (QPs are filtered by link, the others by dev)
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
expect_pins
