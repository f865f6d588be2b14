#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# What a process sees of the review findings of issue 9 (shca_review):
# completions come from a ring the process maps and name QPs by number; a
# destroyed QP's completions are gone; a scribbled ring hurts only its
# owner; rdma-core's test_mr_rereg_addr flow (error, RESET -> RTS of both
# QPs, traffic) works; and the kernel memory of QPs and CQs is charged to
# the caller's memory cgroup, so a cgroup's memory.max bounds what its
# processes make the kernel allocate. A UD datagram to an IPv4-mapped and to
# an IPv6 GID starts with the GRH area a RoCE v2 HCA writes.
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
need_progs shca_review

vm_setup "$D0"

# review_run TEST: one mode of shca_review; its lines are checks of this test
review_run() {
	if run_t 60 shca_review "$1" "$D0"; then
		ok "shca_review $1: $(run_out | grep -c '^  ok - ') checks passed"
	else
		bad "shca_review $1: exit status $(run_rc)"
	fi
}

title "the completion ring"
review_run ring
title "error, restate, traffic"
review_run restate
title "UD datagrams: the GRH area for IPv4 and IPv6 GIDs"
review_run ud

title "memory cgroups"
CG=/sys/fs/cgroup
[ -f $CG/cgroup.controllers ] || mount -t cgroup2 none $CG ||
	die "cannot mount cgroup2"
grep -qw memory $CG/cgroup.controllers || die "no memory controller"
echo +memory > $CG/cgroup.subtree_control
mkdir -p $CG/shca-big $CG/shca-small
echo 8M > $CG/shca-small/memory.max
# in_cgroup NAME CMD...: run CMD as the only process of cgroup NAME
in_cgroup() {
	_cg=$1
	shift
	# shellcheck disable=SC2016
	run_t 60 sh -c 'echo $$ > "$0/cgroup.procs" && exec "$@"' "$CG/$_cg" "$@"
}
if in_cgroup shca-big shca_review memcg "$D0"; then
	ok "QP and CQ memory is charged to the caller's cgroup"
else
	bad "shca_review memcg: exit status $(run_rc)"
fi
in_cgroup shca-small shca_review alloc "$D0"
expect_eq "a QP at the device limits in a cgroup with memory.max 8M" \
	"alloc: ENOMEM" "$(run_out | grep '^alloc:')"
rmdir $CG/shca-big $CG/shca-small
