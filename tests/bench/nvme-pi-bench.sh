#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics with and without T10 protection information in the
# VM guest, run by mr-bench.sh (tests/bench/run.sh --only nvmepi, part of
# make bench) after the other benchmarks have removed their devices: what
# PI costs nvme-rdma -> nvmet-rdma over softhca, the same scsi_debug disk
# behind every column.
#
#   softhca0 PI     nvmet-rdma with T10-PI (port param_pi_enable=1,
#                   subsystem attr_pi_enable=1) on softhca0 (eth0,
#                   10.0.2.15:4420): the host namespace carries the disk's
#                   profile (integrity/format T10-DIF-TYPE1-CRC), so every
#                   read and write moves through integrity MRs and softhca's
#                   T10-DIF engine on both sides
#   softhca0 no PI  the same disk, PI disabled on the nvmet side
#                   (attr_pi_enable=0, param_pi_enable=0) on softhca0
#                   (10.0.2.15:4421): the host namespace has no integrity
#                   profile (format none), plain MRs
#   rxe0 no PI      the same as softhca0 no PI on rdma_rxe's rxe0 (eth1,
#                   10.0.3.15:4420), for reference (rxe has no
#                   IBK_INTEGRITY_HANDOVER, so no PI column)
#
# The disk: scsi_debug dif=1 dix=1 guard=0 (DIF type 1, CRC guard, DIX)
# with delay=0 (commands complete at once instead of after a jiffy),
# through sd_mod: its integrity/format is T10-DIF-TYPE1-CRC in every
# column. Without PI on the nvmet side the block layer under nvmet
# generates and verifies the disk's PI itself, so scsi_debug gets and
# checks tuples in all three columns; the PI column adds the host block
# layer generating and verifying them and softhca's engine checking them
# in the host's and the target's integrity MRs. All three controllers are
# connected, to three subsystems (the same disk as each one's namespace
# 1), for the whole run, so each cell measures a warm steady state.
#
# fio (libaio, O_DIRECT, --time_based; its buffers are page aligned, as
# O_DIRECT on a PI namespace needs, see Documentation/ulp-testing.rst)
# runs 4 KiB random reads and writes and 128 KiB sequential reads and
# writes, all at queue depth 16, over the first BENCH_NVMEPI_MIB MiB of
# the disk (written once before, so that every block read has PI to
# check). 128 KiB is also the largest I/O with PI: nvmet-rdma's MDTS with
# PI (NVMET_RDMA_MAX_METADATA_MDTS) caps the PI namespace's
# max_sectors_kb at 128. Every cell is repeated BENCH_NVMEPI_REPS times;
# within a repetition the three columns run one after the other, in
# reverse order every other time (ABC CBA ...); the table shows the
# median and the spread of the runs, and the ratio of PI to no PI on
# softhca0 (the median over the repetitions of the ratio within each).
#
# Checked: the disk's and every host namespace's integrity/format
# before each cell (T10-DIF-TYPE1-CRC with PI, none without), nvmet's
# "T10-PI is enabled" for the PI controller only, no "T10-PI is not
# supported", the ULPs' QPs on the device of their column (rdma res). A
# cell whose fio fails, or during which the kernel logs a PI error
# ("PI error found", a tag error), an I/O error, a timeout or a reset is
# an error, not a number.
#
# Prints raw records ("nvme-pi-rec: ...") as they come, then the table
# between "=== NVME-PI-BENCH-TABLE" and "=== NVME-PI-BENCH-TABLE-END",
# every line prefixed with "nvme-pi-table: ", then the plot data
# (one row per fio job: for each column the median, minimum and maximum
# MB/s; tests/bench/nvme-pi-bench.gp plots it) between
# "=== NVME-PI-BENCH-DATA" and "=== NVME-PI-BENCH-DATA-END"
# ("nvme-pi-data: "). Exit status 0 if the table was printed; failing
# cells are reported in it, not by the status.
#
# Environment: BENCH_NVMEPI_SECS (seconds per fio cell, default 3),
# BENCH_NVMEPI_REPS (repetitions, default 3), BENCH_NVMEPI_MIB (MiB of
# the disk, all of it used by fio, default 64), BENCH_NVMEPI_BUDGET
# (seconds after which the remaining cells are skipped so that the table
# is always printed, default 240), SOFTHCA_KO (default /softhca.ko),
# ULP_LIB (the helpers shared with ulp-bench.sh, default
# /tests/ulp-lib.sh, or ulp-lib.sh next to this script).
# POSIX sh; every command is bounded by a timeout.

SECS=${BENCH_NVMEPI_SECS:-3}
REPS=${BENCH_NVMEPI_REPS:-3}
MIB=${BENCH_NVMEPI_MIB:-64}
BUDGET=${BENCH_NVMEPI_BUDGET:-240}
START=$(date +%s)
TAG=nvme-pi-bench
REC=/tmp/nvme-pi-bench.rec
# the devices: DEV:NIC:ADDR
LINKS="softhca0:eth0:10.0.2.15 rxe0:eth1:10.0.3.15"
# the columns: NAME:DEV:ADDR:SVCID:PI (PI 1: param_pi_enable and
# attr_pi_enable 1, the host namespace T10-DIF-TYPE1-CRC; 0: both 0, none)
COLS="shca_pi:softhca0:10.0.2.15:4420:1 shca_nopi:softhca0:10.0.2.15:4421:0 rxe_nopi:rxe0:10.0.3.15:4420:0"
# the fio jobs: NAME:RW:BS:IODEPTH:NUMJOBS
JOBS="rr4k:randread:4k:16:1 rw4k:randwrite:4k:16:1 sr128k:read:128k:16:1 sw128k:write:128k:16:1"
PIFMT=T10-DIF-TYPE1-CRC

ULP_LIB=${ULP_LIB:-/tests/ulp-lib.sh}
[ -r "$ULP_LIB" ] || ULP_LIB=$(dirname "$0")/ulp-lib.sh
[ -r "$ULP_LIB" ] || { echo "$TAG: FAIL: $ULP_LIB is missing"; exit 1; }
# shellcheck source=tests/bench/ulp-lib.sh
. "$ULP_LIB"

cleanup() { ulp_cleanup "sd_mod scsi_debug" "softhca0 rxe0"; }

bench_traps

case $SECS$REPS$MIB$BUDGET in
'' | *[!0-9]*) fail "BENCH_NVMEPI_SECS='$SECS', BENCH_NVMEPI_REPS='$REPS', BENCH_NVMEPI_MIB='$MIB' and BENCH_NVMEPI_BUDGET='$BUDGET' must be whole numbers" ;;
esac
if [ "$SECS" -lt 1 ] || [ "$REPS" -lt 1 ] || [ "$MIB" -lt 16 ] || [ "$MIB" -gt 1024 ]; then
	fail "BENCH_NVMEPI_SECS and _REPS must be at least 1, BENCH_NVMEPI_MIB 16..1024"
fi
: >"$REC"
FIO=1
command -v fio >/dev/null || { say "fio is missing: no numbers"; FIO=0; }

# ---- devices, the disk, targets and hosts ---------------------------------------

# shellcheck disable=SC2086 # one word per link
ulp_links $LINKS || fail "creating softhca0 on eth0 and rxe0 on eth1 failed"

klog_mark
run 60 modprobe scsi_debug dif=1 dix=1 guard=0 dev_size_mb="$MIB" delay=0 ||
	fail "modprobe scsi_debug failed"
run 60 modprobe sd_mod || fail "modprobe sd_mod failed"
sd_disk() {
	for _d in /sys/block/sd*; do
		[ -e "$_d" ] && grep -q scsi_debug "$_d/device/model" 2>/dev/null &&
			echo "${_d##*/}" && return 0
	done
	return 1
}
n=0
until SD=$(sd_disk) && [ -b "/dev/$SD" ]; do
	[ $n -lt 75 ] || fail "no scsi_debug disk appeared within 15s"
	sleep 0.2
	n=$((n + 1))
done
fmt=$(cat "/sys/block/$SD/integrity/format")
[ "$fmt" = "$PIFMT" ] || fail "/dev/$SD integrity/format is '$fmt', not $PIFMT"
say "/dev/$SD: scsi_debug, $(($(cat "/sys/block/$SD/size") / 2048)) MiB, integrity/format $fmt"
run 120 dd if=/dev/zero of="/dev/$SD" bs=1M count="$MIB" oflag=direct ||
	fail "filling /dev/$SD failed"
nvmet_modules || fail "loading nvmet-rdma and nvme-rdma failed"

port=0
DEVS=
for c in $COLS; do
	IFS=: read -r name dev addr svc pi <<EOF
$c
EOF
	port=$((port + 1))
	nqn=nvme-pi-$name
	nvmet_target "$nqn" "/dev/$SD" "$addr" "$svc" "$port" "$pi" ||
		fail "nvmet subsystem $nqn on rdma $addr:$svc failed"
	klog_mark
	nvme_connect "$nqn" "$addr" "$svc" || {
		dmesg | tail -n 20 | sed "s/^/$TAG:     /"
		fail "nvme-rdma did not connect to $nqn at $addr:$svc"
	}
	# the target's line for this controller: with PI it ends in "T10-PI
	# is enabled.", without in the host NQN and "."
	line=$(klog_new | grep "nvmet: creating nvm controller [0-9]* for subsystem $nqn for NQN " | head -n 1)
	case $pi:$line in
	*:) fail "no 'creating nvm controller' line for $nqn in the kernel log" ;;
	1:*" T10-PI is enabled.") ;;
	1:*) fail "$nqn: the target created the controller without PI: '$line'" ;;
	0:*" T10-PI is enabled.") fail "$nqn: the target created the controller with PI: '$line'" ;;
	esac
	want=none
	[ "$pi" = 0 ] || want=$PIFMT
	fmt=$(cat "/sys/block/${DISK#/dev/}/integrity/format")
	[ "$fmt" = "$want" ] || fail "$nqn: host $DISK integrity/format is '$fmt', not $want"
	say "$name: $DISK (nqn $nqn, rdma $addr:$svc on $dev), integrity/format $fmt, max_sectors_kb $(cat "/sys/block/${DISK#/dev/}/queue/max_sectors_kb")"
	DEVS="$DEVS $name:$DISK:$want"
done
if dmesg | grep -q 'T10-PI is not supported'; then
	dmesg | grep 'T10-PI is not supported' | sed "s/^/$TAG:     /"
	fail "nvmet-rdma says T10-PI is not supported"
fi
# Host and target, admin and at least one I/O queue each, per controller:
# two controllers on softhca0, one on rxe0.
for d in softhca0:8 rxe0:4; do
	q=$(ulp_qps "${d%:*}")
	say "${d%:*}: $q kernel RC QPs (host and target, admin and I/O queues)"
	[ "$q" -ge "${d#*:}" ] || {
		run 30 rdma res show qp
		fail "the ULPs' QPs are not on ${d%:*}"
	}
done
say "setup took $(elapsed)s"

# ---- fio ------------------------------------------------------------------------

# check_format COLUMN DISK: before a cell, the disk's and DISK's
# integrity/format are what COLUMN needs (prints the reason if not)
# shellcheck disable=SC2317 # fio_cell calls it (FIO_PRECHECK)
check_format() {
	for _d in $DEVS; do
		[ "${_d%%:*}" = "$1" ] || continue
		_want=${_d##*:}
		_fmt=$(cat "/sys/block/$SD/integrity/format" 2>/dev/null)
		if [ "$_fmt" != "$PIFMT" ]; then
			echo "$SD integrity/format $_fmt"
			return 1
		fi
		_fmt=$(cat "/sys/block/${2#/dev/}/integrity/format" 2>/dev/null)
		if [ "$_fmt" != "$_want" ]; then
			echo "host integrity/format ${_fmt:-missing}, not $_want"
			return 1
		fi
		return 0
	done
	echo "unknown column $1"
	return 1
}
FIO_PRECHECK=check_format

if [ $FIO = 1 ]; then
	t0=$(date +%s)
	for job in $JOBS; do
		rep=1
		while [ $rep -le "$REPS" ]; do
			order=$DEVS
			# shellcheck disable=SC2086 # one word per column
			[ $((rep % 2)) -eq 1 ] || order=$(reverse $DEVS)
			for d in $order; do
				c=${d%%:*}
				d=${d#*:}
				fio_cell "$c" "${d%:*}" "$job"
			done
			rep=$((rep + 1))
		done
	done
	say "fio ran for $(($(date +%s) - t0))s"
else
	rec "err - - - fio is not installed"
fi

# ---- the table and the plot data ------------------------------------------------

# tabulate table|data: the table, or one row per fio job for gnuplot
tabulate() {
	awk -v mode="$1" -v jobs="$JOBS" -v secs="$SECS" -v reps="$REPS" \
		-v mib="$MIB" "$BENCH_AWK"'
function add(key, val) { vals[key] = vals[key] " " val }
# a cell: "median +-spread%", the spread being half the range of the runs
# in % of the median; "error" if any run of it failed, "skipped" if runs
# were skipped (the budget ran out)
function cell(key, w,    n, v, m) {
	if (key in why)
		return sprintf(" %" w "s", why[key])
	if (!(key in vals))
		return sprintf(" %" w "s", "n/a")
	n = sorted(vals[key], v)
	m = median(vals[key])
	if (n < 2 || m == 0)
		return sprintf(" %" w "s", f(m))
	return sprintf(" %" w "s", sprintf("%s +-%.0f%%", f(m), 50 * (v[n] - v[1]) / m))
}
# the median over the repetitions of the ratio of column a to column b
# in the same repetition
function ratio(a, b, j, m,    r, q) {
	q = ""
	if ((a SUBSEP j SUBSEP m) in why || (b SUBSEP j SUBSEP m) in why)
		return sprintf(" %9s", "")
	for (r = 1; r <= maxrep; r++)
		if ((a, j, m, r) in run && (b, j, m, r) in run && run[b, j, m, r] > 0)
			q = q " " run[a, j, m, r] / run[b, j, m, r]
	if (q == "")
		return sprintf(" %9s", "")
	return sprintf(" %8.2fx", median(q))
}
$1 == "fio" {
	# fio COLUMN JOB REP KIOPS MBS LAT
	add($2 SUBSEP $3 SUBSEP "iops", $5)
	add($2 SUBSEP $3 SUBSEP "mbs", $6)
	add($2 SUBSEP $3 SUBSEP "lat", $7)
	run[$2, $3, "iops", $4] = $5
	run[$2, $3, "mbs", $4] = $6
	if ($4 > maxrep)
		maxrep = $4
	next
}
$1 == "err" {
	# err COLUMN JOB REP REASON...
	r = $0; sub(/^err +[^ ]+ +[^ ]+ +[^ ]+ +/, "", r)
	k = $2 SUBSEP $3 SUBSEP "iops"
	w = (r == "skipped" && (!(k in why) || why[k] == "skipped")) ? "skipped" : "error"
	why[k] = why[$2 SUBSEP $3 SUBSEP "mbs"] = why[$2 SUBSEP $3 SUBSEP "lat"] = w
	if (!(($2, $3, r) in noted)) {
		noted[$2, $3, r] = 1
		if ($2 == "-")
			notes[++nnotes] = r
		else
			notes[++nnotes] = "fio " (($2 in cname) ? cname[$2] : $2) " " $3 ", run " $4 ": " \
				(r == "skipped" ? "skipped (the time budget ran out)" : r)
	}
	next
}
BEGIN {
	nc = split("shca_pi shca_nopi rxe_nopi", C, " ")
	cname["shca_pi"] = "softhca0 PI"
	cname["shca_nopi"] = "softhca0 no PI"
	cname["rxe_nopi"] = "rxe0 no PI"
	nj = split(jobs, J, " ")
}
# jobname(i): the fio job J[i] in words; sets p[] to its fields
function jobname(i) {
	split(J[i], p, ":")
	bs = p[3] == "4k" ? "4 KiB" : p[3] == "128k" ? "128 KiB" : p[3]
	rw = p[2] == "randread" ? "random read" : p[2] == "randwrite" ? "random write" : p[2] == "read" ? "seq. read" : p[2] == "write" ? "seq. write" : p[2]
	return sprintf("%s %s QD%d", bs, rw, p[4])
}
END {
	if (mode == "data") {
		h = "# fio job"
		for (c = 1; c <= nc; c++)
			h = h sprintf(" \"%s\"(median,min,max)", cname[C[c]])
		print h
		for (i = 1; i <= nj; i++) {
			l = "\"" jobname(i) "\""
			for (c = 1; c <= nc; c++) {
				k = C[c] SUBSEP p[1] SUBSEP "mbs"
				if ((k in vals) && !(k in why)) {
					n = sorted(vals[k], v)
					l = l sprintf(" %.3f %.3f %.3f", median(vals[k]), v[1], v[n])
				} else {
					l = l " NaN NaN NaN"
				}
			}
			print l
		}
		exit
	}
	print "NVMe over Fabrics with and without T10-PI: the kernel nvme-rdma host connected to the kernel"
	print "nvmet-rdma target on the same device; behind every column the same scsi_debug disk (DIF type 1,"
	print "CRC guard, DIX, delay=0). softhca0 PI: nvmet port param_pi_enable=1 and subsystem attr_pi_enable=1,"
	print "host namespace integrity/format T10-DIF-TYPE1-CRC: integrity MRs and softhca'"'"'s T10-DIF engine on"
	print "both sides, the host block layer generating and verifying PI. no PI: both 0, format none, plain"
	print "MRs (the block layer under nvmet makes the disk'"'"'s PI); rxe0 (no PI handover) for reference."
	print "fio libaio, O_DIRECT, over the " mib " MiB of the disk, " secs " s per cell; median +- half the range of " reps
	print "runs (in % of the median), the columns alternated (ABC CBA ...). kIOPS = 10^3 I/Os per second,"
	print "MB/s = 10^6 bytes per second, lat = fio'"'"'s mean I/O latency (median); PI/no PI: softhca0 PI over"
	print "softhca0 no PI, the median of the ratios within each run (below 1: what PI costs)."
	printf "%-24s %-7s %16s %16s %16s %9s\n", "fio job", "", cname["shca_pi"], cname["shca_nopi"], cname["rxe_nopi"], "PI/no PI"
	for (i = 1; i <= nj; i++) {
		name = jobname(i)
		m = p[3] == "4k" ? "iops" : "mbs"
		l = sprintf("%-24s %-7s", name, m == "iops" ? "kIOPS" : "MB/s")
		for (c = 1; c <= nc; c++)
			l = l cell(C[c] SUBSEP p[1] SUBSEP m, 16)
		print l ratio("shca_pi", "shca_nopi", p[1], m)
		l = sprintf("%-24s %-7s", "", "lat us")
		for (c = 1; c <= nc; c++) {
			k = C[c] SUBSEP p[1] SUBSEP "lat"
			if (k in why)
				l = l sprintf(" %16s", why[k])
			else if (k in vals)
				l = l sprintf(" %16s", f(median(vals[k])))
			else
				l = l sprintf(" %16s", "n/a")
		}
		print l
	}
	if (nnotes) {
		print ""
		for (i = 1; i <= nnotes; i++)
			print "error: " notes[i]
	}
}' "$REC"
}

tabulate table | bench_block NVME-PI-BENCH-TABLE nvme-pi-table
tabulate data | bench_block NVME-PI-BENCH-DATA nvme-pi-data

# no PI complaint anywhere in the run (outside the cells too)
if dmesg | grep -E -e 'PI error|tag error|T10-PI is not supported' | tail -n 5 >/tmp/nvme-pi-dmesg.bad &&
	[ -s /tmp/nvme-pi-dmesg.bad ]; then
	say "warning: the kernel logged PI errors:"
	sed "s/^/$TAG:     /" /tmp/nvme-pi-dmesg.bad
fi

cleanup || fail "cleanup failed"
say "done"
exit 0
