#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks in the VM guest (tests/bench/run.sh). Creates softhca0 on
# eth0, softhca1 on eth1, and rdma_rxe's rxe0 on eth0 and rxe1 on eth1 (a
# netdev carries an rxe and a softhca device at once). First the MR
# registration benchmark: softhca0 and rxe0 measured side by side by
# shca_mr_bench.ko through ib_core. Prints the module's "shca_mr_bench: "
# kernel-log lines between "=== MR-BENCH-TABLE" and "=== MR-BENCH-TABLE-END"
# for the host to extract. Then the userspace benchmark on the same two
# devices: shca_reg_bench (tests/vm/src) times ibv_reg_mr + ibv_dereg_mr
# through libibverbs and the providers for 4 KiB .. 1 GiB regions; its table
# goes between "=== REG-BENCH-TABLE" and "=== REG-BENCH-TABLE-END", every
# line prefixed with "reg-bench: ". Then the data-path benchmark,
# dp-bench.sh (its own table, see there), on all four devices, and the
# T10-DIF engine benchmark, pi-bench.sh (its own table, see there), on
# softhca0 and softhca1, and the FRWR cycle benchmark, frwr-bench.sh (its
# own table, see there), softhca0 -> softhca1 vs rxe0 -> rxe1. Then unloads everything and, unless BENCH_ULP=0,
# runs the ULP benchmark ulp-bench.sh (NVMe over Fabrics with fio, rdma_cm
# with cmtime; its own devices and table, see there) and, unless
# BENCH_NVMEPI=0, nvme-pi-bench.sh (nvme-rdma with T10-PI vs without over
# softhca0, and rxe0; its own devices and table too). BENCH_ONLY, a
# comma-separated list of some of mr, reg, dp, pi, frwr, ulp and nvmepi
# (default all of them), runs only those parts (rxe0 and rxe1 are created
# only for mr, reg, dp and frwr). Exit status 0 only if the tables were printed
# and the cleanups succeeded.
#
# Environment: BENCH_ITERS (default 2000), BENCH_PAGES (default 16),
# BENCH_REG_SECS (seconds per userspace cell, default 0.5),
# SOFTHCA_KO (default /softhca.ko), BENCH_KO (default /shca_mr_bench.ko),
# DP_BENCH (default /tests/dp-bench.sh) and the BENCH_DP_* knobs it reads,
# PI_BENCH (default /tests/pi-bench.sh), BENCH_PI_TIMEOUT (its bound in
# seconds, default 420) and the BENCH_PI_* knobs it reads,
# FRWR_BENCH (default /tests/frwr-bench.sh), BENCH_FRWR_TIMEOUT (its
# bound in seconds, default 420) and the BENCH_FRWR_* knobs it reads,
# BENCH_ULP (0: no ULP benchmark), BENCH_ULP_TIMEOUT (its bound in
# seconds, default 900), ULP_BENCH (default /tests/ulp-bench.sh) and the
# BENCH_ULP_* knobs it reads, BENCH_NVMEPI (0: no PI vs no PI NVMe
# benchmark), BENCH_NVMEPI_TIMEOUT (its bound in seconds, default 420),
# NVMEPI_BENCH (default /tests/nvme-pi-bench.sh) and the BENCH_NVMEPI_*
# knobs it reads.
# POSIX sh; every command is bounded by a timeout.

KO=${SOFTHCA_KO:-/softhca.ko}
BENCH_KO=${BENCH_KO:-/shca_mr_bench.ko}
DP_BENCH=${DP_BENCH:-/tests/dp-bench.sh}
PI_BENCH=${PI_BENCH:-/tests/pi-bench.sh}
PI_TIMEOUT=${BENCH_PI_TIMEOUT:-420}
FRWR_BENCH=${FRWR_BENCH:-/tests/frwr-bench.sh}
FRWR_TIMEOUT=${BENCH_FRWR_TIMEOUT:-420}
ONLY=$(echo "${BENCH_ONLY:-mr,reg,dp,pi,frwr,ulp,nvmepi}" | tr ',' ' ')
ULP_BENCH=${ULP_BENCH:-/tests/ulp-bench.sh}
ULP=${BENCH_ULP:-1}
ULP_TIMEOUT=${BENCH_ULP_TIMEOUT:-900}
NVMEPI_BENCH=${NVMEPI_BENCH:-/tests/nvme-pi-bench.sh}
NVMEPI=${BENCH_NVMEPI:-1}
NVMEPI_TIMEOUT=${BENCH_NVMEPI_TIMEOUT:-420}
ITERS=${BENCH_ITERS:-2000}
PAGES=${BENCH_PAGES:-16}
REG_SECS=${BENCH_REG_SECS:-0.5}
IB=/sys/class/infiniband
PREFIX='shca_mr_bench: '

say() { echo "mr-bench: $*"; }

# want PART: PART (mr, reg, dp, pi, frwr, ulp or nvmepi) is to run
want() {
	case " $ONLY " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# run SECS CMD...: print and run a bounded command, output indented
run() {
	_t=$1
	shift
	say "\$ $*"
	_out=$(timeout -k 5 "$_t" "$@" 2>&1)
	_rc=$?
	[ -z "$_out" ] || printf '%s\n' "$_out" | sed 's/^/mr-bench:     /'
	[ $_rc -eq 0 ] || say "    (exit status $_rc)"
	return $_rc
}

loaded() { grep -q "^$1 " /proc/modules; }

# the RDMA devices in sysfs, space separated
ibdevs() {
	for _d in "$IB"/*; do
		[ -e "$_d" ] && printf '%s ' "${_d##*/}"
	done
}

cleanup() {
	_ok=0
	for _m in shca_mr_bench shca_dp_bench shca_pi_bench shca_frwr_bench; do
		if loaded "$_m"; then
			run 30 rmmod "$_m" || _ok=1
		fi
	done
	for _d in softhca0 softhca1 rxe0 rxe1; do
		if [ -e "$IB/$_d" ]; then
			run 30 rdma link delete "$_d" || _ok=1
		fi
	done
	for _m in softhca rdma_rxe; do
		if loaded "$_m"; then
			run 30 rmmod "$_m" || _ok=1
		fi
	done
	return $_ok
}

on_exit() {
	_status=$?
	trap - EXIT
	cleanup || { say "cleanup failed"; _status=1; }
	exit $_status
}
trap on_exit EXIT
trap 'say "interrupted (timeout?)"; exit 124' INT TERM

fail() {
	say "FAIL: $*"
	exit 1
}

case $ITERS$PAGES in
'' | *[!0-9]*) fail "BENCH_ITERS='$ITERS' and BENCH_PAGES='$PAGES' must be whole numbers" ;;
esac

# Drivers and devices.
if ! loaded softhca; then
	if [ -r "$KO" ]; then
		run 60 insmod "$KO" || fail "insmod $KO failed"
	else
		run 60 modprobe softhca || fail "modprobe softhca failed"
	fi
fi
RXE=0
if want mr || want reg || want dp || want frwr; then
	RXE=1
fi
if want mr || want reg || want dp || want pi || want frwr; then
	[ $RXE = 0 ] || run 60 modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
	for nic in eth0 eth1; do
		[ -e "/sys/class/net/$nic" ] || fail "the guest has no $nic"
		ip link set "$nic" up
	done
	run 30 rdma link add softhca0 type softhca netdev eth0 || fail "rdma link add softhca0 failed"
	run 30 rdma link add softhca1 type softhca netdev eth1 || fail "rdma link add softhca1 failed"
	if [ $RXE = 1 ]; then
		run 30 rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
		run 30 rdma link add rxe1 type rxe netdev eth1 || fail "rdma link add rxe1 failed"
	fi
	n=0
	until [ -d "$IB/softhca0" ] && [ -d "$IB/softhca1" ] &&
		{ [ $RXE = 0 ] || { [ -d "$IB/rxe0" ] && [ -d "$IB/rxe1" ]; }; }; do
		[ $n -lt 100 ] || fail "softhca0/1 and rxe0/1 did not all appear within 20s (have: $(ibdevs))"
		sleep 0.2
		n=$((n + 1))
	done
	run 30 rdma link show
	say "devices: $(ibdevs)"
fi

# The benchmark: all the work happens in its module init, i.e. in insmod.
# The guest's /init bounds this whole script (tests/bench/run.sh
# --test-timeout, 420 s by default); a signal would not stop a module init early.
if want mr; then
	[ -r "$BENCH_KO" ] || fail "$BENCH_KO is missing"
	before=$(dmesg | wc -l)
	t0=$(date +%s)
	run 3600 insmod "$BENCH_KO" devices=softhca0,rxe0 iters="$ITERS" pages="$PAGES" ||
		fail "insmod $BENCH_KO failed"
	say "benchmark ran for $(($(date +%s) - t0))s"

	echo "=== MR-BENCH-TABLE"
	dmesg | tail -n +"$((before + 1))" | grep -F "$PREFIX"
	echo "=== MR-BENCH-TABLE-END"
	dmesg | tail -n +"$((before + 1))" | grep -q -F "${PREFIX}done" ||
		fail "no '${PREFIX}done' line in the kernel log"
	run 30 rmmod shca_mr_bench || fail "rmmod shca_mr_bench failed"
fi

# The userspace benchmark, same devices, same boot.
if want reg; then
	command -v shca_reg_bench >/dev/null ||
		fail "shca_reg_bench is missing (build tests/vm/bin with 'make vm-programs')"
	say "\$ shca_reg_bench -t $REG_SECS softhca0 rxe0"
	t0=$(date +%s)
	echo "=== REG-BENCH-TABLE"
	timeout -k 5 240 shca_reg_bench -t "$REG_SECS" softhca0 rxe0 >/tmp/reg-bench.out 2>&1
	rc=$?
	sed 's/^/reg-bench: /' /tmp/reg-bench.out
	echo "=== REG-BENCH-TABLE-END"
	say "userspace benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "shca_reg_bench: exit status $rc"
fi

# The data-path benchmark, same devices, same boot.
if want dp; then
	[ -r "$DP_BENCH" ] || fail "$DP_BENCH is missing"
	say "\$ sh $DP_BENCH"
	t0=$(date +%s)
	timeout -k 5 280 sh "$DP_BENCH"
	rc=$?
	say "data-path benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "$DP_BENCH: exit status $rc"
fi

# The T10-DIF engine benchmark, softhca0 and softhca1, same boot.
if want pi; then
	[ -r "$PI_BENCH" ] || fail "$PI_BENCH is missing"
	say "\$ sh $PI_BENCH"
	t0=$(date +%s)
	timeout -k 5 "$PI_TIMEOUT" sh "$PI_BENCH"
	rc=$?
	say "T10-DIF engine benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "$PI_BENCH: exit status $rc"
fi

# The FRWR cycle benchmark, softhca0 -> softhca1 vs rxe0 -> rxe1, same boot.
if want frwr; then
	[ -r "$FRWR_BENCH" ] || fail "$FRWR_BENCH is missing"
	say "\$ sh $FRWR_BENCH"
	t0=$(date +%s)
	timeout -k 5 "$FRWR_TIMEOUT" sh "$FRWR_BENCH"
	rc=$?
	say "FRWR cycle benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "$FRWR_BENCH: exit status $rc"
fi

cleanup || fail "cleanup failed"

# The ULP benchmark, same boot, devices of its own.
if [ "$ULP" != 0 ] && want ulp; then
	[ -r "$ULP_BENCH" ] || fail "$ULP_BENCH is missing"
	say "\$ sh $ULP_BENCH"
	t0=$(date +%s)
	timeout -k 5 "$ULP_TIMEOUT" sh "$ULP_BENCH"
	rc=$?
	say "ULP benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "$ULP_BENCH: exit status $rc"
else
	say "ULP benchmark skipped (BENCH_ULP=0 or BENCH_ONLY)"
fi

# NVMe over Fabrics with and without T10-PI, same boot, devices of its own.
if [ "$NVMEPI" != 0 ] && want nvmepi; then
	[ -r "$NVMEPI_BENCH" ] || fail "$NVMEPI_BENCH is missing"
	say "\$ sh $NVMEPI_BENCH"
	t0=$(date +%s)
	timeout -k 5 "$NVMEPI_TIMEOUT" sh "$NVMEPI_BENCH"
	rc=$?
	say "NVMe PI benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "$NVMEPI_BENCH: exit status $rc"
else
	say "NVMe PI benchmark skipped (BENCH_NVMEPI=0 or BENCH_ONLY)"
fi
say "done"
