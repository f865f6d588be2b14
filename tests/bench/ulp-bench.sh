#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ULP benchmark in the VM guest (issue 10), run by mr-bench.sh
# (tests/bench/run.sh) after the other benchmarks have removed their
# devices: the kernel's NVMe over Fabrics over softhca0 and over rdma_rxe's
# rxe0, next to the limit, and the rdma_cm connection setup rate.
#
#   softhca0  nvme-rdma host -> nvmet-rdma target, both on softhca0 (eth0,
#             10.0.2.15): the target serves the memory-backed null_blk
#             /dev/nullb1
#   rxe0      the same on rxe0 (eth1, 10.0.3.15), serving /dev/nullb2
#   limit     the same fio jobs on /dev/nullb0 directly, no RDMA
#
# fio (libaio, O_DIRECT, --time_based) runs 4 KiB random reads at queue
# depth 32 with one and with two jobs, and 128 KiB sequential reads and
# writes at queue depth 16, over the first BENCH_ULP_MIB MiB of each
# device (written once before, so that every cell moves real data).
# Every cell is repeated BENCH_ULP_REPS times; within a repetition the
# three columns run one after the other, in reverse order every other
# time; the table shows the median. Then cmtime (rdmacm-utils) opens and
# closes BENCH_ULP_CONNS RC connections through rdma_cm on each device,
# client and server on the same address, also alternated and repeated;
# the table shows the median of its per-step timings.
#
# Why each device has a netdev of its own: softhca0 and rxe0 can sit on
# one netdev together (mr-bench.sh does that), but then both hold the
# netdev's GIDs and rdma_cm binds an IP address to the first device
# (in registration order) whose GID table has it (cma_acquire_dev_by_src_ip),
# so nvme-rdma and nvmet-rdma could not be told which device to use.
# eth0 and eth1 are identical virtio NICs and neither device sends
# anything through them here: host and target share one device, softhca
# delivers in memory, rxe loops its packets back inside the driver
# (rxe_loopback) when the destination MAC is its own. Both controllers
# stay connected for the whole run, to two subsystems of their own (two
# null_blk devices of the same kind, so that multipath does not merge them),
# so each cell measures a warm steady state and alternating costs nothing.
# The devices are checked to carry the ULPs' QPs (rdma res) before the
# cells run, and each cell is checked to have completed without I/O errors.
#
# Prints raw records ("ulp-rec: ...") as they come, then the table between
# "=== ULP-BENCH-TABLE" and "=== ULP-BENCH-TABLE-END", every line prefixed
# with "ulp-table: ". Exit status 0 if the table was printed; failing
# cells are reported in it, not by the status.
#
# Environment: BENCH_ULP_SECS (seconds per fio cell, default 5),
# BENCH_ULP_REPS (repetitions, default 3), BENCH_ULP_CONNS (cmtime's
# connections, default 100), BENCH_ULP_MIB (MiB of each device fio uses,
# default 256), BENCH_ULP_BUDGET (seconds after which the remaining cells
# are skipped so that the table is always printed, default 600),
# SOFTHCA_KO (default /softhca.ko), ULP_LIB (its helpers, default
# /tests/ulp-lib.sh, or ulp-lib.sh next to it).
# POSIX sh; every command is bounded by a timeout.

SECS=${BENCH_ULP_SECS:-5}
REPS=${BENCH_ULP_REPS:-3}
CONNS=${BENCH_ULP_CONNS:-100}
MIB=${BENCH_ULP_MIB:-256}
BUDGET=${BENCH_ULP_BUDGET:-600}
START=$(date +%s)
TAG=ulp-bench
REC=/tmp/ulp-bench.rec
# column DEV ADDR NULLB: the devices, their netdevs' addresses and the
# null_blk each target serves
COLS="softhca0:eth0:10.0.2.15:nullb1 rxe0:eth1:10.0.3.15:nullb2"
# the fio jobs: NAME:RW:BS:IODEPTH:NUMJOBS
JOBS="rand4k1:randread:4k:32:1 rand4k2:randread:4k:32:2 seqr128k:read:128k:16:1 seqw128k:write:128k:16:1"

ULP_LIB=${ULP_LIB:-/tests/ulp-lib.sh}
[ -r "$ULP_LIB" ] || ULP_LIB=$(dirname "$0")/ulp-lib.sh
[ -r "$ULP_LIB" ] || { echo "$TAG: FAIL: $ULP_LIB is missing"; exit 1; }
# shellcheck source=tests/bench/ulp-lib.sh
. "$ULP_LIB"

cleanup() {
	pkill_cmtime
	ulp_cleanup null_blk "softhca0 rxe0"
}

CMT_PIDS=
pkill_cmtime() {
	for _p in $CMT_PIDS; do
		kill "$_p" 2>/dev/null
	done
	CMT_PIDS=
}

bench_traps

case $SECS$REPS$CONNS$MIB$BUDGET in
'' | *[!0-9]*) fail "BENCH_ULP_SECS='$SECS', BENCH_ULP_REPS='$REPS', BENCH_ULP_CONNS='$CONNS', BENCH_ULP_MIB='$MIB' and BENCH_ULP_BUDGET='$BUDGET' must be whole numbers" ;;
esac
if [ "$SECS" -lt 1 ] || [ "$REPS" -lt 1 ] || [ "$CONNS" -lt 1 ] || [ "$MIB" -lt 16 ] || [ "$MIB" -gt 1024 ]; then
	fail "BENCH_ULP_SECS, _REPS and _CONNS must be at least 1, BENCH_ULP_MIB 16..1024"
fi
: >"$REC"
FIO=1
command -v fio >/dev/null || { say "fio is missing: no fio rows"; FIO=0; }
CMTIME=1
command -v cmtime >/dev/null || { say "cmtime is missing (rdmacm-utils): no cmtime rows"; CMTIME=0; }

# ---- devices, null_blk, target and hosts ----------------------------------------

LINKS=
for c in $COLS; do
	LINKS="$LINKS ${c%:*}"
done
# shellcheck disable=SC2086 # one word per link
ulp_links $LINKS || fail "creating softhca0 on eth0 and rxe0 on eth1 failed"

run 60 modprobe null_blk nr_devices=3 memory_backed=1 gb=1 ||
	fail "modprobe null_blk failed"
for b in nullb0 nullb1 nullb2; do
	[ -b "/dev/$b" ] || fail "no /dev/$b"
	run 120 dd if=/dev/zero of="/dev/$b" bs=1M count="$MIB" oflag=direct ||
		fail "filling /dev/$b failed"
done
nvmet_modules || fail "loading nvmet-rdma and nvme-rdma failed"

port=0
DEVS=
for c in $COLS; do
	IFS=: read -r dev _nic addr nb <<EOF
$c
EOF
	port=$((port + 1))
	nvmet_target "ulp-$dev" "/dev/$nb" "$addr" 4420 "$port" ||
		fail "nvmet subsystem ulp-$dev on rdma $addr:4420 failed"
	nvme_connect "ulp-$dev" "$addr" 4420 || {
		dmesg | tail -n 20 | sed 's/^/ulp-bench:     /'
		fail "nvme-rdma did not connect to ulp-$dev at $addr"
	}
	q=$(ulp_qps "$dev")
	say "$dev: $DISK; $q kernel RC QPs on $dev (host and target, admin and I/O queues)"
	# admin + 2 I/O queues on each side at least
	[ "$q" -ge 4 ] || {
		run 30 rdma res show qp
		fail "the ULPs' QPs of ulp-$dev are not on $dev"
	}
	DEVS="$DEVS $dev:$DISK"
done
DEVS="$DEVS limit:/dev/nullb0"
run 30 rdma res show qp
say "setup took $(elapsed)s"

# ---- fio ------------------------------------------------------------------------

if [ $FIO = 1 ]; then
	t0=$(date +%s)
	for job in $JOBS; do
		rep=1
		while [ $rep -le "$REPS" ]; do
			order=$DEVS
			# shellcheck disable=SC2086 # one word per column
			[ $((rep % 2)) -eq 1 ] || order=$(reverse $DEVS)
			for d in $order; do
				fio_cell "${d%%:*}" "${d#*:}" "$job"
			done
			rep=$((rep + 1))
		done
	done
	say "fio ran for $(($(date +%s) - t0))s"
else
	rec "err - - - fio is not installed"
fi

# ---- cmtime ---------------------------------------------------------------------

# cmtime_cell DEV ADDR: server and client on ADDR; records "cm DEV REP
# STEP VALUE..." for each of cmtime's step lines, or "cmerr DEV REP REASON"
CMPORT=7470
cmtime_cell() {
	if [ "$(elapsed)" -ge "$BUDGET" ]; then
		rec "cmerr $1 $rep skipped"
		return
	fi
	CMPORT=$((CMPORT + 1))
	timeout -k 5 120 cmtime -b "$2" -p "$CMPORT" -c "$CONNS" >/tmp/ulp-cms.out 2>&1 &
	CMT_PIDS=$!
	sleep 1
	timeout -k 5 120 cmtime -s "$2" -p "$CMPORT" -c "$CONNS" >/tmp/ulp-cmc.out 2>&1
	_rc=$?
	_n=0
	while kill -0 "$CMT_PIDS" 2>/dev/null && [ $_n -lt 50 ]; do
		sleep 0.1
		_n=$((_n + 1))
	done
	pkill_cmtime
	if [ $_rc -ne 0 ]; then
		_w=$(head -n 1 /tmp/ulp-cmc.out | sed 's/[^A-Za-z0-9 ._:()-]//g' | cut -c1-60 | tr ' ' '_')
		[ $_rc -ne 124 ] && [ $_rc -ne 137 ] || _w=timed_out
		rec "cmerr $1 $rep ${_w:-exit_status_$_rc}"
		sed 's/^/ulp-bench:     /' /tmp/ulp-cmc.out /tmp/ulp-cms.out | tail -n 10
		return
	fi
	# its table: "step : total_ms max_ms min_us us_per_conn"
	awk -v d="$1" -v r="$rep" -F':' '
		NF == 2 && split($2, v, " ") == 4 {
			s = $1; gsub(/^ +| +$/, "", s); gsub(/ /, "_", s)
			print "cm", d, r, s, v[1], v[2], v[3], v[4]
		}' /tmp/ulp-cmc.out >/tmp/ulp-cm.rec
	grep -q ' connect ' /tmp/ulp-cm.rec || {
		rec "cmerr $1 $rep no-timings"
		sed 's/^/ulp-bench:     /' /tmp/ulp-cmc.out | tail -n 10
		return
	}
	while read -r line; do
		rec "$line"
	done </tmp/ulp-cm.rec
}

if [ $CMTIME = 1 ]; then
	t0=$(date +%s)
	rep=1
	CMCOLS="softhca0:10.0.2.15 rxe0:10.0.3.15"
	while [ $rep -le "$REPS" ]; do
		order=$CMCOLS
		# shellcheck disable=SC2086 # one word per column
		[ $((rep % 2)) -eq 1 ] || order=$(reverse $CMCOLS)
		for c in $order; do
			cmtime_cell "${c%%:*}" "${c#*:}"
		done
		rep=$((rep + 1))
	done
	say "cmtime ran for $(($(date +%s) - t0))s"
fi

# the controllers are still live, and no I/O error was logged
for d in $DEVS; do
	case $d in
	limit:*) ;;
	*) [ -b "${d#*:}" ] || say "warning: ${d#*:} (${d%%:*}) disappeared" ;;
	esac
done
if dmesg | grep -i -E 'I/O error|blk_update_request|nvme.*(timeout|reset)' | tail -n 5 >/tmp/ulp-dmesg.bad &&
	[ -s /tmp/ulp-dmesg.bad ]; then
	say "warning: the kernel logged I/O trouble:"
	sed 's/^/ulp-bench:     /' /tmp/ulp-dmesg.bad
fi

# ---- the table --------------------------------------------------------------------

awk -v jobs="$JOBS" -v secs="$SECS" -v reps="$REPS" -v conns="$CONNS" \
	-v mib="$MIB" -v cmtime="$CMTIME" "$BENCH_AWK"'
function add(key, val) { vals[key] = vals[key] " " val; cnt[key]++ }
function cell(key) {
	if (key in vals)
		return sprintf(" %10s", f(median(vals[key])))
	return sprintf(" %10s", key in why ? "error" : "n/a")
}
function ratio(a, b) {
	if (!(a in vals) || !(b in vals) || median(vals[b]) == 0)
		return sprintf(" %11s", "")
	return sprintf(" %10.2fx", median(vals[a]) / median(vals[b]))
}
$1 == "fio" {
	add($2 SUBSEP $3 SUBSEP "iops", $5)
	add($2 SUBSEP $3 SUBSEP "mbs", $6)
	add($2 SUBSEP $3 SUBSEP "lat", $7)
	next
}
$1 == "err" {
	# err COLUMN JOB REP REASON...
	r = $0; sub(/^err +[^ ]+ +[^ ]+ +[^ ]+ +/, "", r)
	why[$2 SUBSEP $3 SUBSEP "iops"] = why[$2 SUBSEP $3 SUBSEP "mbs"] = why[$2 SUBSEP $3 SUBSEP "lat"] = 1
	if (!(($2, $3, r) in noted)) {
		noted[$2, $3, r] = 1
		notes[++nnotes] = "fio " $2 " " $3 ": " r
	}
	next
}
$1 == "cm" {
	add($2 SUBSEP $4 SUBSEP "total", $5)
	add($2 SUBSEP $4 SUBSEP "per", $8)
	if (!($4 in seen)) { seen[$4] = 1; steps[++nsteps] = $4 }
	next
}
$1 == "cmerr" {
	r = $4; gsub(/_/, " ", r)
	cmwhy[$2] = 1
	if (!(($2, r) in noted)) {
		noted[$2, r] = 1
		notes[++nnotes] = "cmtime " $2 ": " r
	}
	next
}
END {
	nj = split(jobs, J, " ")
	split("softhca0 rxe0 limit", C, " ")
	print "NVMe over Fabrics: the kernel nvme-rdma host connected to the kernel nvmet-rdma target on the"
	print "same device (softhca0 on eth0, rxe0 on eth1), each target serving a memory-backed null_blk;"
	print "limit: the same fio jobs on a third such null_blk directly, no RDMA. fio " "libaio, O_DIRECT, over"
	print "the first " mib " MiB of each device; " secs " s per cell; median of " reps " runs, the columns alternated."
	print "kIOPS = 10^3 I/Os per second, MB/s = 10^6 bytes per second, lat = fio'"'"'s mean I/O latency;"
	print "vs rxe: softhca0'"'"'s rate over rxe0'"'"'s (above 1: softhca is faster)."
	printf "%-38s %10s %10s %10s %11s\n", "fio job", "softhca0", "rxe0", "limit", "vs rxe"
	for (i = 1; i <= nj; i++) {
		split(J[i], p, ":")
		bs = p[3] == "4k" ? "4 KiB" : p[3] == "128k" ? "128 KiB" : p[3]
		rw = p[2] == "randread" ? "random read" : p[2] == "read" ? "seq. read" : p[2] == "write" ? "seq. write" : p[2]
		name = sprintf("%s %s QD%d %d job%s", bs, rw, p[4], p[5], p[5] > 1 ? "s" : "")
		m = p[3] == "4k" ? "iops" : "mbs"
		l = sprintf("%-30s %-7s", name, m == "iops" ? "kIOPS" : "MB/s")
		for (c = 1; c <= 3; c++)
			l = l cell(C[c] SUBSEP p[1] SUBSEP m)
		print l ratio("softhca0" SUBSEP p[1] SUBSEP m, "rxe0" SUBSEP p[1] SUBSEP m)
		l = sprintf("%-30s %-7s", "", "lat us")
		for (c = 1; c <= 3; c++)
			l = l cell(C[c] SUBSEP p[1] SUBSEP "lat")
		print l
	}
	if (cmtime) {
		print ""
		print "rdma_cm connection setup: cmtime (rdmacm-utils) opening and closing " conns " RC connections, client"
		print "and server on the same device and address; \"total ms\" is the wall time of a step for all"
		print "connections, \"us/conn\" that divided by " conns "; median of " reps " runs, alternated."
		print "cmtime 44 issues each step for all connections before it waits, except \"disconnect\":"
		print "rdma_disconnect + rdma_destroy_qp, one connection after the other, on the client."
		print "vs rxe: rxe0'"'"'s time over softhca0'"'"'s (above 1: softhca is faster)."
		printf "%-16s %10s %10s %10s %10s %11s\n", "", "softhca0", "", "rxe0", "", "vs rxe"
		printf "%-16s %10s %10s %10s %10s\n", "cmtime step", "total ms", "us/conn", "total ms", "us/conn"
		for (i = 1; i <= nsteps; i++) {
			s = steps[i]; n = s; gsub(/_/, " ", n)
			l = sprintf("%-16s", n)
			for (c = 1; c <= 2; c++)
				l = l cell(C[c] SUBSEP s SUBSEP "total") cell(C[c] SUBSEP s SUBSEP "per")
			print l ratio("rxe0" SUBSEP s SUBSEP "total", "softhca0" SUBSEP s SUBSEP "total")
		}
		if (nsteps == 0)
			printf "%-16s %10s %10s %10s %10s\n", "(all)", "error", "error", "error", "error"
		l = sprintf("%-16s", "connects/s")
		for (c = 1; c <= 2; c++) {
			k = C[c] SUBSEP "connect" SUBSEP "total"
			if (k in vals && median(vals[k]) > 0)
				l = l sprintf(" %10s %10s", f(conns * 1000 / median(vals[k])), "")
			else
				l = l sprintf(" %10s %10s", "n/a", "")
		}
		print l
	}
	if (nnotes) {
		print ""
		for (i = 1; i <= nnotes; i++)
			print "error: " notes[i]
	}
}' "$REC" | bench_block ULP-BENCH-TABLE ulp-table

cleanup || fail "cleanup failed"
say "done"
exit 0
