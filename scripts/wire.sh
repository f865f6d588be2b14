#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The wire tier: two QEMU guests (Debian's kernel, the initramfs of
# scripts/vm.sh) joined by one virtual Ethernet link that stays on this
# machine, RoCE v2 (UDP port 4791) between them. Guest A is 10.0.9.1/24 and
# fd00:9::1/64 on eth0, guest B 10.0.9.2/24 and fd00:9::2/64; each loads one
# driver, rdma_rxe or softhca (both want UDP port 4791), and the tests
# create its device (rxe0 or softhca0) on eth0. Both guests run the same
# tests/wire/NN-*.sh in step (tests/wire/wire-guest.sh, lib.sh); a test
# passes if it passed in both guests, their kernel logs clean, and the
# captures it took decode cleanly on the host (tshark, ICRC:
# scripts/wire/pcap-check.py). Prints one line per test and driver pair,
# and a final "wire: N passed, N failed".
#
# Usage: scripts/wire.sh [options] [TEST...]
#   TEST               run only these tests (10-rc-pingpong, rc-pingpong or 10)
#   --a-driver NAME    guest A's driver: softhca (default) or rxe
#   --b-driver NAME    guest B's driver: rxe (default) or softhca
#   --pair A:B         a driver pair (softhca:rxe, rxe:rxe, ...); repeat it
#                      for several, each a boot of both guests; overrides
#                      --a-driver and --b-driver
#   --test-timeout SECS  bound for each test in each guest (default 180)
#   --timeout SECS     bound for each boot of the two guests (default:
#                      180 s plus test-timeout + 60 s per test)
#   --out DIR          consoles, extracted files and captures (default
#                      build/wire; DIR/A-B/ per driver pair)
#   --all-steps        run every step of a test even after one hung (by
#                      default a test stops at its first hung step: with a
#                      broken wire each further step would only hang too)
#   -v, --verbose      stream both consoles ("A| ...", "B| ...")
#   --show REGEX       also stream the console lines that match REGEX
#
# For other harnesses (the wire benchmark, tests/bench/run.sh --only wire):
#   --run SCRIPT       run SCRIPT (POSIX sh, written as a tests/wire test)
#                      in both guests as the only test, named after its
#                      file (no TEST names then)
#   --env NAME=VALUE   export NAME=VALUE to the tests of both guests
#   --overlay DIR      copy DIR's files into both guests' root as well
#   (as for scripts/vm.sh, which builds the initramfs)
#   --module PATH, --provider PATH, --kernel KVER, --rebuild
#                      as for scripts/vm.sh
#
# The link: a socketpair passed to both QEMUs as -netdev socket,fd=N (no
# TCP, no Nagle), virtio-net, MTU 1500 (RoCE active MTU 1024), MAC
# 52:54:00:00:09:01 and :02 (QEMU would give both the same one). The
# rendezvous: a second socketpair between two virtio-serial ports
# "wire.ctl" (see tests/wire/wire-guest.sh); a third port per guest,
# "wire.data", goes to a file here and brings files back (captures).
# Two guests of TCG on two cores: one thread each (VM_TCG_THREAD as in
# scripts/vm.sh).

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
A_DRIVER=softhca
B_DRIVER=rxe
PAIRS=()
SELECT=()
VM_ARGS=()
TEST_TIMEOUT=180
TOTAL_TIMEOUT=
OUT=$ROOT/build/wire
VERBOSE=0
SHOW=
LABEL=wire
WORK=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/wire

RUN=
PAIR_PID=
SUMMARY_DONE=0
NTESTS=1
on_exit() {
	local rc=$?
	if [ -n "$PAIR_PID" ]; then
		kill "$PAIR_PID" 2>/dev/null || true
		wait "$PAIR_PID" || true
	fi
	if [ -n "$RUN" ]; then rm -rf "$RUN"; fi
	if [ $SUMMARY_DONE = 0 ]; then
		echo "$LABEL: 0 passed, $NTESTS failed"
		[ $rc -ne 0 ] || rc=1
	fi
	exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM
die() { echo "wire: error: $*" >&2; exit 2; }
note() { echo "wire: $*"; }

while [ $# -gt 0 ]; do
	case $1 in
	--a-driver) A_DRIVER=${2:?--a-driver needs a driver}; shift ;;
	--b-driver) B_DRIVER=${2:?--b-driver needs a driver}; shift ;;
	--pair) PAIRS+=("${2:?--pair needs A:B}"); shift ;;
	--test-timeout) TEST_TIMEOUT=${2:?}; shift ;;
	--timeout) TOTAL_TIMEOUT=${2:?}; shift ;;
	--out) OUT=${2:?--out needs a directory}; shift ;;
	--all-steps) VM_ARGS+=(--env WIRE_ALL_STEPS=1) ;;
	-v|--verbose) VERBOSE=1 ;;
	--show) SHOW=${2:?--show needs a regular expression}; shift ;;
	--run|--env|--overlay) VM_ARGS+=("$1" "${2:?$1 needs a value}"); shift ;;
	--module|--provider|--kernel) VM_ARGS+=("$1" "${2:?$1 needs a value}"); shift ;;
	--rebuild) VM_ARGS+=("$1") ;;
	--label) LABEL=${2:?}; shift ;;
	-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; SUMMARY_DONE=1; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) SELECT+=("$1") ;;
	esac
	shift
done
[ ${#PAIRS[@]} -gt 0 ] || PAIRS=("$A_DRIVER:$B_DRIVER")
need_softhca=0
for p in "${PAIRS[@]}"; do
	case $p in
	softhca:softhca|softhca:rxe|rxe:softhca|rxe:rxe) ;;
	*) die "driver pair '$p': expected A:B, each softhca or rxe" ;;
	esac
	case $p in *softhca*) need_softhca=1 ;; esac
done
case $TEST_TIMEOUT$TOTAL_TIMEOUT in
*[!0-9]*) die "timeouts are whole seconds" ;;
esac
for tool in python3 qemu-system-x86_64 base64; do
	command -v "$tool" >/dev/null || die "$tool not found (scripts/deps.sh wire)"
done
command -v tshark >/dev/null ||
	note "warning: tshark not found (scripts/deps.sh wire): the capture check will fail"

# ---- the initramfs: scripts/vm.sh's, with tests/wire ----------------------------

mkdir -p "$WORK" "$OUT"
RUN=$(mktemp -d "$WORK/run.XXXXXX")
drv=rxe
[ $need_softhca = 0 ] || drv=softhca
t0=$SECONDS
if ! "$ROOT/scripts/vm.sh" --wire --initrd-only "$RUN/boot" --driver "$drv" \
	--test-timeout "$TEST_TIMEOUT" --label wire-initrd \
	${VM_ARGS[@]+"${VM_ARGS[@]}"} ${SELECT[@]+"${SELECT[@]}"} >"$RUN/initrd.log" 2>&1; then
	cat "$RUN/initrd.log"
	die "scripts/vm.sh could not build the initramfs"
fi
grep -v '^vm: console log' "$RUN/initrd.log" | sed 's/^vm: /wire: /' || true
KERNEL='' APPEND='' ACCEL=() TESTS=() HAVE_MODULE=0
# shellcheck disable=SC1091
. "$RUN/boot/boot.env"
NTESTS=$((${#TESTS[@]} * ${#PAIRS[@]}))
note "initramfs ready in $((SECONDS - t0))s; tests: ${TESTS[*]}"
if [ $need_softhca = 1 ] && [ "$HAVE_MODULE" != 1 ]; then
	note "warning: no softhca.ko (make modules): the softhca guests will fail"
fi
if [ -z "$TOTAL_TIMEOUT" ]; then
	TOTAL_TIMEOUT=$((180 + ${#TESTS[@]} * (TEST_TIMEOUT + 60)))
fi

# qemu_cmd ROLE DRIVER PEER_DRIVER DATAFILE: one guest's QEMU command line,
# @SOCK0@ (the link) and @SOCK1@ (the control port) filled in by pair.py
qemu_cmd() {
	local role=$1 mac
	case $role in A) mac=52:54:00:00:09:01 ;; *) mac=52:54:00:00:09:02 ;; esac
	# shellcheck disable=SC2054
	QCMD=(qemu-system-x86_64 -m 2048 -smp 2 -nographic -no-reboot
		-kernel "$KERNEL" -initrd "$RUN/boot/initrd.gz"
		-append "$APPEND wire_role=$role wire_driver=$2 wire_peer_driver=$3"
		"${ACCEL[@]}"
		-netdev socket,id=wire,fd=@SOCK0@
		-device "virtio-net-pci,netdev=wire,mac=$mac"
		-device virtio-serial-pci
		-chardev socket,id=ctl,fd=@SOCK1@
		-device virtserialport,chardev=ctl,name=wire.ctl
		-chardev "file,id=data,path=$4"
		-device virtserialport,chardev=data,name=wire.data)
}

# extract DATAFILE DIR: the files a guest sent (wire_put_file) into DIR,
# named ROLE-TEST-NAME; prints "TEST PATH" for each
extract() {
	local line role test name out='' dest=$2
	while IFS= read -r line; do
		case $line in
		"=== WIRE-FILE "*)
			# shellcheck disable=SC2086
			set -- ${line#=== WIRE-FILE }
			role=$1 test=$2 name=${3//\//_}
			out=$dest/$role-$test-$name
			: >"$out.b64" ;;
		"=== WIRE-END")
			if [ -n "$out" ]; then
				base64 -d "$out.b64" >"$out" && echo "$test $out"
				rm -f "$out.b64"
			fi
			out= ;;
		*) [ -z "$out" ] || printf '%s\n' "$line" >>"$out.b64" ;;
		esac
	done < <(tr -d '\r' <"$1")
}

# section LOG TEST: a test's part of a guest's console
section() {
	awk -v t="$2" '
		$0 ~ "^=== VMTEST-START " t "$" { on = 1 }
		on { print }
		on && $0 ~ "^VMTEST " t " (PASS|FAIL)" { exit }' "$1"
}

# ---- boot each pair ---------------------------------------------------------------

pass=0
fail=0
lines=()
for p in "${PAIRS[@]}"; do
	a=${p%%:*}
	b=${p#*:}
	tag=$a-$b
	dir=$OUT/$tag
	rm -rf "$dir"
	mkdir -p "$dir"
	qemu_cmd A "$a" "$b" "$dir/A.data"
	cmd_a=("${QCMD[@]}")
	qemu_cmd B "$b" "$a" "$dir/B.data"
	cmd_b=("${QCMD[@]}")
	show=(--show "^(VMTEST [^ ]+ (PASS|FAIL)|wire: role)${SHOW:+|$SHOW}")
	[ $VERBOSE = 0 ] || show=(-v)
	note "guest A: $a, guest B: $b; consoles: $dir/A.log, $dir/B.log"
	start=$SECONDS
	rc=0
	# in the background, so that a signal's trap runs at once (and kills it)
	python3 "$ROOT/scripts/wire/pair.py" --timeout "$TOTAL_TIMEOUT" --grace 60 \
		"${show[@]}" "$dir/A.log" "$dir/B.log" -- "${cmd_a[@]}" -- "${cmd_b[@]}" </dev/null &
	PAIR_PID=$!
	wait "$PAIR_PID" || rc=$?
	PAIR_PID=
	elapsed=$((SECONDS - start))
	[ $rc = 0 ] || note "guests ended with status $rc (124: killed at the time limit)"

	declare -A RES_A=() RES_B=() SECS_A=() SECS_B=() HOST=()
	for g in A B; do
		tr -d '\r' <"$dir/$g.log" >"$dir/$g.txt"
		while read -r _ name verdict; do
			if [ $g = A ]; then RES_A[$name]=$verdict; else RES_B[$name]=$verdict; fi
		done < <(grep -a -o -E '^VMTEST [^ ]+ (PASS|FAIL)' "$dir/$g.txt" || true)
		while read -r name secs; do
			if [ $g = A ]; then SECS_A[$name]=$secs; else SECS_B[$name]=$secs; fi
		done < <(sed -n 's/^vm-init: \([^ ]*\): \([0-9]*\)s$/\1 \2/p' "$dir/$g.txt")
		if [ -s "$dir/$g.data" ]; then
			while read -r test file; do
				case $file in
				*.pcap)
					if python3 "$ROOT/scripts/wire/pcap-check.py" "$file" >"$file.check" 2>&1; then
						HOST[$test]="${HOST[$test]:-} ok:$file"
					else
						HOST[$test]="${HOST[$test]:-} bad:$file"
					fi ;;
				esac
			done < <(extract "$dir/$g.data" "$dir")
		fi
	done

	for t in "${TESTS[@]}"; do
		va=${RES_A[$t]:-none}
		vb=${RES_B[$t]:-none}
		verdict=PASS
		[ "$va" = PASS ] && [ "$vb" = PASS ] || verdict=FAIL
		case " ${HOST[$t]:-} " in *" bad:"*) verdict=FAIL ;; esac
		secs="A ${SECS_A[$t]:-?}s, B ${SECS_B[$t]:-?}s"
		if [ $verdict = PASS ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1))
			for g in A B; do
				echo "----- $tag $t: guest $g ($([ $g = A ] && echo "$a $va" || echo "$b $vb"); $dir/$g.log) -----"
				if grep -a -q -E "^=== VMTEST-START $t\$" "$dir/$g.txt"; then
					section "$dir/$g.txt" "$t" | tail -n 150
				else
					echo "(not started)"
				fi
			done
		fi
		for h in ${HOST[$t]:-}; do
			echo "----- $tag $t: ${h#*:} -----"
			cat "${h#*:}.check"
		done
		lines+=("WIRETEST $tag $t $verdict ($secs)")
	done
	for g in A B; do
		if grep -a -q "^WIRE-KLOG $g BAD" "$dir/$g.txt"; then
			fail=$((fail + 1))
			lines+=("WIRETEST $tag kernel-log-$g FAIL")
			grep -a -A 30 'kernel log after the tests reports' "$dir/$g.txt" | head -n 40
		fi
	done
	if ! grep -a -q '^VMTEST-END' "$dir/A.txt" || ! grep -a -q '^VMTEST-END' "$dir/B.txt"; then
		for g in A B; do
			grep -a -q '^VMTEST-END' "$dir/$g.txt" && continue
			echo "----- $tag: guest $g never finished; console tail -----"
			tail -n 40 "$dir/$g.txt"
		done
	fi
	note "$tag: ${elapsed}s for both guests"
	unset RES_A RES_B SECS_A SECS_B HOST
done

printf '%s\n' "${lines[@]}"
note "consoles and captures: $OUT"
echo "$LABEL: $pass passed, $fail failed"
SUMMARY_DONE=1
[ $fail -eq 0 ]
