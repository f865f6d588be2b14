#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Pins are released when their owner dies: a process registers 1 GiB
# (shca_mr_hold, 262144 pages faulted in and pinned) and is killed with
# SIGKILL while holding it; the guest's pinned-page counters (/proc/vmstat
# nr_foll_pin_acquired - nr_foll_pin_released) and `rdma res show mr`
# return to where they were. Then the same once more, this time letting
# the process deregister by itself.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
MIB=1024
PAGES=$((MIB * 256))
hold=/tmp/shca_mr_hold.hold
need_progs shca_mr_hold

vm_setup "$DEV"

mrs_of() { rdma res show mr dev "$DEV" 2>/dev/null | grep -c "comm shca_mr_hold"; }

# hold_1g: start shca_mr_hold with 1 GiB; 0 once it holds it ($pid, $hpid set)
hold_1g() {
	rm -f "$hold"
	timeout -k 5 100 shca_mr_hold "$DEV" $MIB "$hold" >/tmp/shca_mr_hold.out 2>&1 &
	pid=$!
	if ! wait_for 80 test -s "$hold"; then
		bad "shca_mr_hold did not get to hold $MIB MiB within 80s"
		sed 's/^/    /' /tmp/shca_mr_hold.out
		return 1
	fi
	hpid=$(cat "$hold")
	ok "shca_mr_hold (pid $hpid) registered $MIB MiB"
	expect_eq "its MRs in rdma res show mr" 1 "$(mrs_of)"
	expect_eq "pages pinned in the system" $((PINS0 + PAGES)) "$(foll_pins)"
	expect_eq "its VmPin" "$((MIB * 1024)) kB" \
		"$(awk '$1 == "VmPin:" { print $2, $3 }' "/proc/$hpid/status")"
}

expect_eq "MRs listed before" 0 "$(mrs_of)"

title "SIGKILL while 1 GiB is registered"
if hold_1g; then
	run kill -9 "$hpid"
	wait $pid
	info "shca_mr_hold ended with status $? (137: killed)"
	rm -f "$hold"
	vm_leftovers 30
	expect_eq "MRs listed after SIGKILL" 0 "$(mrs_of)"
fi

title "the same, deregistered by the process itself"
if hold_1g; then
	rm -f "$hold"
	wait $pid
	rc=$?
	sed 's/^/    /' /tmp/shca_mr_hold.out
	expect_eq "shca_mr_hold exit status" 0 "$rc"
	vm_leftovers
	expect_eq "MRs listed after ibv_dereg_mr" 0 "$(mrs_of)"
fi
