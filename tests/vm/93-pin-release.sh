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
command -v shca_mr_hold >/dev/null || die "shca_mr_hold missing: build tests/vm/bin with 'make vm-programs'"

drv_load || die "loading $DRV_MOD failed"
must "rdma link add $DEV type $DRV_TYPE netdev eth0" link_add "$DEV" eth0
expect_port "$DEV" state "4: ACTIVE" 10

mrs_of() { rdma res show mr dev "$DEV" 2>/dev/null | grep -c "comm shca_mr_hold"; }
pins_are() { [ "$(foll_pins)" = "$1" ]; }

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
	expect_eq "pages pinned in the system" $((pins0 + PAGES)) "$(foll_pins)"
	expect_eq "its VmPin" "$((MIB * 1024)) kB" \
		"$(awk '$1 == "VmPin:" { print $2, $3 }' "/proc/$hpid/status")"
}

pins0=$(foll_pins)
info "pinned pages in the system before: $pins0"
expect_eq "MRs listed before" 0 "$(mrs_of)"

title "SIGKILL while 1 GiB is registered"
if hold_1g; then
	run kill -9 "$hpid"
	wait $pid
	info "shca_mr_hold ended with status $? (137: killed)"
	rm -f "$hold"
	if wait_for 30 pins_are "$pins0"; then
		ok "pinned pages back to $pins0 after SIGKILL"
	else
		bad "pinned pages after SIGKILL: expected $pins0, saw $(foll_pins)"
	fi
	expect_eq "MRs listed after SIGKILL" 0 "$(mrs_of)"
	run rdma res show
	if run_out | grep -Eq "^[0-9]+: $DEV: .* mr 0 ctx 0( |\$)"; then
		ok "rdma res show counts mr 0 and ctx 0 for $DEV"
	else
		bad "rdma res show does not count mr 0 and ctx 0 for $DEV"
	fi
fi

title "the same, deregistered by the process itself"
if hold_1g; then
	rm -f "$hold"
	wait $pid
	rc=$?
	sed 's/^/    /' /tmp/shca_mr_hold.out
	expect_eq "shca_mr_hold exit status" 0 "$rc"
	expect_eq "pinned pages after ibv_dereg_mr" "$pins0" "$(foll_pins)"
	expect_eq "MRs listed after ibv_dereg_mr" 0 "$(mrs_of)"
fi
