#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# fork() after ibv_reg_mr, as ibv_fork_init(3) documents it for a kernel
# that copies pinned pages on fork (shca_mr_fork): IBV_FORK_UNNEEDED, the
# parent's registered memory keeps its contents and its pages while the
# child writes its copy, the child exits cleanly, the parent deregisters;
# with RDMAV_FORK_SAFE=1, rdma-core 44 still marks registered ranges
# MADV_DONTFORK, so the child does not inherit them.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
need_progs shca_mr_fork

vm_setup "$DEV"

title "fork after registration"
run shca_mr_fork "$DEV" || bad "shca_mr_fork $DEV: exit status $(run_rc)"

title "with RDMAV_FORK_SAFE=1 (ibv_fork_init when libibverbs loads)"
run env RDMAV_FORK_SAFE=1 shca_mr_fork "$DEV" forksafe ||
	bad "RDMAV_FORK_SAFE=1 shca_mr_fork $DEV forksafe: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers
