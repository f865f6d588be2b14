#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Re-registration under traffic. shca_stress runs, in one process, 4
# poster threads (each with its own RC QP pair and CQs, 16 signaled RDMA
# WRITEs, READs and SENDs outstanding) against 8 target MRs of the
# responder while 2 registrar threads keep re-registering them
# (ibv_rereg_mr of translation and of access, ibv_dereg_mr, ibv_reg_mr)
# and publishing the new keys, so the posters often use stale or revoked
# keys. Every completion must be SUCCESS, REM_ACCESS_ERR (only where the
# key was stale, dead or without the right) or WR_FLUSH_ERR after an
# error; after an error the poster resets its QP pair and goes on;
# posted = completed; the bytes of successful WRITEs, READs and SENDs are
# checked, and memory that is no longer registered is never written
# (see tests/vm/src/shca_stress.c). First softhca0 (eth0) <-> softhca1
# (eth1), then loopback on softhca0, then a run that is SIGKILLed in the
# middle. After each, nothing is left in `rdma res` (ctx, pd, mr, cq,
# qp), pinned pages are back at their baseline and the kernel log is
# clean.
#
# VMT_STRESS_SECS (default 15) is the length of the cross-device run,
# VMT_STRESS_LOOP_SECS (default 3) of the loopback run, VMT_STRESS_SEED
# (default 1) seeds the threads, VMT_STRESS_POSTERS (4),
# VMT_STRESS_REGISTRARS (2) and VMT_STRESS_TARGETS (8) size the run;
# scripts/vm.sh passes VMT_* through. The runner bounds a test to 120 s:
# for long runs also pass --test-timeout, e.g.
#   VMT_STRESS_SECS=300 scripts/vm.sh --test-timeout 500 99-stress
# With --driver rxe only the loopback run on rxe0 (rdma_rxe cannot reach
# another local device, see 97-datapath.sh).
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
D1=${DRV_TYPE}1
SECS=${VMT_STRESS_SECS:-${STRESS_SECS:-15}}
LOOP_SECS=${VMT_STRESS_LOOP_SECS:-3}
SEED=${VMT_STRESS_SEED:-1}
NP=${VMT_STRESS_POSTERS:-4}
NR=${VMT_STRESS_REGISTRARS:-2}
NK=${VMT_STRESS_TARGETS:-8}
# kernel log lines that fail a test: scripts/vm/init's list, and lockdep's and the
# hung-task detector's reports
KBAD='WARNING:|BUG:|Oops|Call Trace|general protection|refcount_t|KASAN|UBSAN|kernel BUG|blocked for more than|detected stall|possible circular locking|lock held when returning|INFO: task'
need_progs shca_stress
case $SECS$LOOP_SECS$SEED$NP$NR$NK in
*[!0-9]*) die "VMT_STRESS_SECS, _LOOP_SECS, _SEED, _POSTERS, _REGISTRARS and _TARGETS must be whole numbers" ;;
esac

# after_run: what the run held is all released, the kernel log is clean
after_run() {
	vm_leftovers 10
	_k=$(dmesg 2>/dev/null | grep -E "$KBAD")
	if [ -z "$_k" ]; then
		ok "kernel log clean ($(dmesg 2>/dev/null | wc -l) lines so far)"
	else
		bad "kernel log reports a problem:"
		dmesg | grep -E -A 25 "$KBAD" | head -n 80 | sed 's/^/    dmesg: /'
	fi
}

# stress_run SECS A B: the program; its lines are checks of this test
stress_run() {
	echo "  \$ shca_stress -p $NP -r $NR -k $NK -s $1 -S $SEED $2 $3"
	_t0=$(date +%s)
	timeout -k 5 $(($1 + 90)) shca_stress -p "$NP" -r "$NR" -k "$NK" -s "$1" -S "$SEED" \
		"$2" "$3" >/tmp/stress.out 2>&1
	_rc=$?
	_t=$(($(date +%s) - _t0))
	sed 's/^/    /' /tmp/stress.out
	_n=$(grep -c '^  ok - ' /tmp/stress.out)
	_f=$(grep -c '^  FAIL - ' /tmp/stress.out)
	if [ $_rc -eq 0 ] && grep -q '^stress ' /tmp/stress.out; then
		ok "shca_stress $2 -> $3: $_n checks passed in ${_t}s"
	elif [ $_rc -eq 124 ] || [ $_rc -eq 137 ]; then
		bad "shca_stress $2 -> $3: killed after ${_t}s (hung)"
	else
		bad "shca_stress $2 -> $3: exit status $_rc, $_f of $((_n + _f)) checks failed"
	fi
}

CROSS=1
[ "$DRV_TYPE" != rxe ] || CROSS=0

if [ $CROSS = 1 ]; then
	vm_setup "$D0" "$D1"
else
	vm_setup "$D0"
fi
if [ "$DRV_TYPE" = softhca ]; then
	# only the MAD layer's PD, CQ and GSI QP on a softhca port
	expect_eq "rdma res of $D0 before" " ctx=0 pd=1 mr=0 cq=1 qp=1 srq=0 cm_id=0" "$(res0 "$D0")"
	expect_eq "rdma res of $D1 before" " ctx=0 pd=1 mr=0 cq=1 qp=1 srq=0 cm_id=0" "$(res0 "$D1")"
fi

if [ $CROSS = 1 ]; then
	title "$SECS s: $D0 (requesters) -> $D1 (responders, target MRs)"
	stress_run "$SECS" "$D0" "$D1"
	after_run
else
	info "$DRV_TYPE: no traffic between two devices of one host; loopback only"
fi

title "$LOOP_SECS s: loopback on $D0"
stress_run "$LOOP_SECS" "$D0" "$D0"
after_run

qps_at_least() { [ "$(res_count "$D0" qp)" -ge "$1" ] 2>/dev/null; }
q0=$(res_count "$D0" qp)

title "SIGKILL in the middle of a run"
A=$D0
B=$D1
[ $CROSS = 1 ] || B=$D0
echo "  \$ shca_stress -p $NP -r $NR -k $NK -s 60 -S $SEED $A $B &"
# not under timeout(1): the pid must be the program's own (it ends by itself after 60 s)
shca_stress -p "$NP" -r "$NR" -k "$NK" -s 60 -S "$SEED" "$A" "$B" >/tmp/stress.kill 2>&1 &
spid=$!
if wait_for 30 qps_at_least $((q0 + NP)); then
	sleep 2
	if kill -0 $spid 2>/dev/null; then
		run kill -9 $spid
		# (no "Killed" from the shell)
		{ wait $spid; } 2>/dev/null
		expect_eq "shca_stress exit status (killed by SIGKILL)" 137 $?
	else
		wait $spid
		bad "shca_stress ended before it was killed: exit status $?"
	fi
else
	bad "shca_stress did not create its QPs within 30 s"
	kill -9 $spid 2>/dev/null
	wait $spid
fi
sed 's/^/    /' /tmp/stress.kill
after_run
