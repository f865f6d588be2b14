#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# FRWR cycle benchmark in the VM guest, run by mr-bench.sh
# (tests/bench/run.sh --only frwr) with the devices it created: softhca0
# on eth0, softhca1 on eth1, rxe0 on eth0, rxe1 on eth1.
# shca_frwr_bench.ko runs, from the kernel through ib_core, the cycle
# nvme-rdma and nvmet-rdma run per I/O (see the module's header): the
# host maps the I/O's pages into an MR (ib_map_mr_sg), posts REG_MR
# chained before the command's SEND; the target RDMA READs (write I/O) or
# WRITEs (read I/O) through the rkey and answers with SEND_WITH_INV (or a
# SEND, and the host posts LOCAL_INV: the -linv cells), at 4 KiB, 64 KiB
# and 1 MiB, BENCH_FRWR_QD I/Os in flight, softhca0 -> softhca1 vs rxe0
# -> rxe1 (the pairs alternate ABBA, each cell warms up first), next to
# memcpy() of the same pages (the floor), and the same cycle without the
# RDMA READ/WRITE (reg) and without registration (send), from which the
# table splits the time of an I/O into messages + completions,
# registration + invalidation, and data.
#
# Prints raw records ("frwr-rec: ...") as they come, then the table
# between "=== FRWR-BENCH-TABLE" and "=== FRWR-BENCH-TABLE-END", every
# line prefixed with "frwr-table: ", then the plot data between
# "=== FRWR-BENCH-DATA" and "=== FRWR-BENCH-DATA-END" ("frwr-data: "; one
# row per size, for each series the median, minimum and maximum MB/s;
# tests/bench/frwr-bench.gp plots it). Exit status 0 if the table was
# printed; failing cells are reported in it, not by the status.
#
# Environment: BENCH_FRWR_MS (milliseconds per cell, default 200),
# BENCH_FRWR_REPS (repetitions, default 3), BENCH_FRWR_QD (I/Os in
# flight, default 16), BENCH_FRWR_BUDGET (seconds after which the module
# starts no further cell, default 300), BENCH_FRWR_PAIRS (HOST:TARGET
# pairs, comma separated, at most 4, default "softhca0:softhca1,rxe0:rxe1";
# the ratio column is the first over the second, the plot shows the first
# two), FRWR_KO (default /shca_frwr_bench.ko), BENCH_LIB (default
# /tests/bench-lib.sh, or bench-lib.sh next to this script).
# POSIX sh; every command is bounded by a timeout.

FRWR_KO=${FRWR_KO:-/shca_frwr_bench.ko}
MS=${BENCH_FRWR_MS:-200}
REPS=${BENCH_FRWR_REPS:-3}
QD=${BENCH_FRWR_QD:-16}
BUDGET=${BENCH_FRWR_BUDGET:-300}
PAIRS=${BENCH_FRWR_PAIRS:-softhca0:softhca1,rxe0:rxe1}
IB=/sys/class/infiniband
REC=/tmp/frwr-bench.rec
TAG=frwr-bench
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"


case $MS$REPS$QD$BUDGET in
'' | *[!0-9]*)
	say "BENCH_FRWR_MS='$MS', BENCH_FRWR_REPS='$REPS', BENCH_FRWR_QD='$QD' and BENCH_FRWR_BUDGET='$BUDGET' must be whole numbers"
	exit 1
	;;
esac
: >"$REC"

# rxe0 -> rxe1: packets for 10.0.3.15 leave eth0 (rxe routes by the GID's
# netdev) and come back in on eth1 through the hub; their source address
# is local, which Linux drops unless accept_local is set (as dp-bench.sh).
for c in all eth0 eth1; do
	echo 1 >"/proc/sys/net/ipv4/conf/$c/accept_local" 2>/dev/null
	echo 0 >"/proc/sys/net/ipv4/conf/$c/rp_filter" 2>/dev/null
done
if ! { timeout 10 arping -q -c 1 -w 3 -I eth0 10.0.3.15 &&
	timeout 10 arping -q -c 1 -w 3 -I eth1 10.0.2.15; }; then
	# rxe would queue its packets behind a failing ARP, and rdma_rxe
	# 6.12 can crash when such a QP is destroyed: do not try.
	say "eth0 and eth1 do not reach each other (no QEMU hub?): skipping rxe0 -> rxe1"
	rec "err rxe0:rxe1 - - - eth0-eth1-unreachable"
	PAIRS_RUN=$(echo ",$PAIRS," | sed 's/,rxe0:rxe1,/,/; s/^,//; s/,$//')
else
	PAIRS_RUN=$PAIRS
fi

run_pairs=
for pair in $(echo "$PAIRS_RUN" | tr ',' ' '); do
	ok=1
	for d in ${pair%:*} ${pair#*:}; do
		[ -d "$IB/$d" ] || { say "warning: no device $d"; ok=0; }
	done
	if [ $ok = 1 ]; then
		run_pairs="$run_pairs,$pair"
	else
		rec "err $pair - - - no-device"
	fi
done
run_pairs=${run_pairs#,}

if [ ! -r "$FRWR_KO" ]; then
	say "$FRWR_KO is missing"
elif [ -z "$run_pairs" ]; then
	say "no device pair to measure"
else
	say "\$ insmod shca_frwr_bench.ko pairs=$run_pairs cell_ms=$MS reps=$REPS qd=$QD budget_s=$BUDGET"
	before=$(dmesg | wc -l)
	t0=$(date +%s)
	# The module bounds itself (budget_s); a cell begun just before the
	# budget ran out, and the set-up.
	timeout -k 5 $((BUDGET + 120)) insmod "$FRWR_KO" pairs="$run_pairs" \
		cell_ms="$MS" reps="$REPS" qd="$QD" budget_s="$BUDGET" ||
		say "insmod shca_frwr_bench.ko: exit status $?"
	say "kernel benchmark ran for $(($(date +%s) - t0))s"
	dmesg | tail -n +"$((before + 1))" | sed -n 's/.*shca_frwr_bench: //p' >/tmp/frwr-kernel.out
	while read -r kind rest; do
		case $kind in
		io | err) rec "$kind $rest" ;;
		*) echo "frwr-rec: # $kind $rest" ;;
		esac
	done </tmp/frwr-kernel.out
	grep -q '^done' /tmp/frwr-kernel.out || say "no 'done' from shca_frwr_bench"
	grep -q '^shca_frwr_bench ' /proc/modules && timeout 30 rmmod shca_frwr_bench
fi

# ---- the table and the plot data ---------------------------------------------------

# tabulate table|data: the table, or one row per size for gnuplot
tabulate() {
	awk -v mode="$1" -v pairs="$PAIRS" -v ms="$MS" -v reps="$REPS" \
		-v qd="$QD" "$BENCH_AWK"'
function dev(p,    a) {
	split(p, a, ":")
	return a[1]
}
# median I/O rate of a cell, 0 if it has none
function rate(p, c, sz,    k) {
	k = p SUBSEP c SUBSEP sz
	return k in io ? median(io[k]) : 0
}
# "IO/s spread": the median and (max - min) / median, * when noisy
function cell(p, c, sz,    k, m, e) {
	k = p SUBSEP c SUBSEP sz
	if (!(k in io)) {
		e = err[k]
		if (e == "")
			e = err[p SUBSEP "-" SUBSEP "-"]
		if (e == "")
			return sprintf(" %9s %5s", "-", "")
		return sprintf(" %9s %5s", e == "skipped" ? "skipped" : "error", "")
	}
	m = f(median(io[k])) (k in failed ? "!" : "")
	if (noisy(io[k])) {
		noisylist[++nnoisy] = sprintf("%s %s %s: %s IO/s (runs in order: %s)",
					      p == "-" ? "CPU" : dev(p), c, szname(sz), m, runs(io[k]))
		return sprintf(" %9s %4.0f%%*", m, spread(io[k]))
	}
	return sprintf(" %9s %4.0f%% ", m, spread(io[k]))
}
$1 == "io" && $7 > 0 {
	# io PAIR CELL SIZE REP IOS NS
	k = $2 SUBSEP $3 SUBSEP $4
	x = $6 * 1e9 / $7
	io[k] = io[k] " " x
	next
}
$1 == "err" {
	k = $2 SUBSEP $3 SUBSEP $4
	if (err[k] == "" || err[k] == "skipped")
		err[k] = $6
	if ($6 != "skipped") {
		failed[k] = 1
		notes[++nnotes] = sprintf("%s %s %s run %s: %s", $2 == "-" ? "CPU" : $2,
					  $3, $4 == "-" ? "" : szname($4), $5, $6)
	}
	next
}
BEGIN {
	nc = split("write read write-linv read-linv reg send", C, " ")
	desc["write"] = "write I/O: RDMA READ, SEND_WITH_INV"
	desc["read"] = "read I/O: RDMA WRITE, SEND_WITH_INV"
	desc["write-linv"] = "write I/O: RDMA READ, LOCAL_INV"
	desc["read-linv"] = "read I/O: RDMA WRITE, LOCAL_INV"
	desc["reg"] = "REG_MR + SEND_WITH_INV, no data"
	desc["send"] = "SEND + SEND, no MR"
	np = split(pairs, P, ",")
	nz = split("4096 65536 1048576", Z, " ")
}
function usec(r) {
	return r > 0 ? 1e6 / r : 0
}
END {
	if (mode == "data") {
		h = "# size(bytes)"
		for (q = 1; q <= np; q++)
			h = h " " dev(P[q]) "-write(median,min,max) " dev(P[q]) "-read(median,min,max)"
		print h " memcpy(median,min,max)"
		for (z = 1; z <= nz; z++) {
			l = Z[z]
			for (q = 1; q <= np + 1; q++) {
				if (q > np) {
					m = 1; pc[1] = "-"; cc[1] = "memcpy"
				} else {
					m = 2; pc[1] = pc[2] = P[q]; cc[1] = "write"; cc[2] = "read"
				}
				for (j = 1; j <= m; j++) {
					k = pc[j] SUBSEP cc[j] SUBSEP Z[z]
					if (k in io) {
						n = sorted(io[k], v)
						l = l sprintf(" %.3f %.3f %.3f", median(io[k]) * Z[z] / 1e6,
							      v[1] * Z[z] / 1e6, v[n] * Z[z] / 1e6)
					} else {
						l = l " NaN NaN NaN"
					}
				}
			}
			print l
		}
		exit
	}
	print "The per-I/O FRWR cycle of nvme-rdma -> nvmet-rdma through ib_core (shca_frwr_bench.ko), host"
	print "device -> target device, " qd " I/Os in flight (one MR each), one polling thread: the host maps the"
	print "I/O'"'"'s pages (ib_dma_map_sg, ib_map_mr_sg), posts REG_MR + SEND(command); the target RDMA READs"
	print "(write I/O) or WRITEs (read I/O) the data through the rkey and answers with SEND_WITH_INV, or"
	print "with a SEND and the host posts LOCAL_INV (-linv). reg: the same without the READ/WRITE; send:"
	print "no MR at all. Every I/O'"'"'s sequence stamp and, after every cell, all the data are checked."
	print "IO/s: median of " reps " runs of " ms " ms after a warm-up, pairs in ABBA order; % = (max - min) /"
	print "median of the runs, * = noisy (over 10 %, the runs are listed below), ! = a run failed (the"
	print "errors are listed below, the median is of the other runs). MB/s = 10^6 bytes/s."
	print "memcpy: one CPU copying the same pages into a buffer, in the same run (the floor)."
	print ""
	for (z = 1; z <= nz; z++) {
		sz = Z[z]
		l = sprintf("%-48s", szname(sz) " I/Os")
		for (q = 1; q <= np; q++)
			l = l sprintf(" %16s %8s", dev(P[q]) " IO/s", "MB/s")
		if (np > 1)
			l = l sprintf(" %7s", dev(P[1]) "/" dev(P[2]))
		print l
		for (i = 1; i <= nc; i++) {
			l = sprintf("  %-46s", C[i] " (" desc[C[i]] ")")
			for (q = 1; q <= np; q++)
				l = l cell(P[q], C[i], sz) sprintf(" %8s", rate(P[q], C[i], sz) ? f(rate(P[q], C[i], sz) * sz / 1e6) : "")
			if (np > 1 && rate(P[1], C[i], sz) && rate(P[2], C[i], sz))
				l = l sprintf(" %6.2fx", rate(P[1], C[i], sz) / rate(P[2], C[i], sz))
			print l
		}
		l = sprintf("  %-46s", "memcpy (floor, one CPU)")
		l = l cell("-", "memcpy", sz) sprintf(" %8s", rate("-", "memcpy", sz) ? f(rate("-", "memcpy", sz) * sz / 1e6) : "")
		print l
		print ""
	}
	print "Where the microseconds of an I/O go: 1/IO-rate of each cell (time per I/O with " qd " in flight, not"
	print "latency), split as messages + completions = send; registration + invalidation = reg - send;"
	print "data = write (or read) - reg; shares of the write (read) cycle. A negative share: the two cells"
	print "differ by less than their noise."
	printf "%-10s %-9s %8s %8s %8s %8s  %-22s %-22s\n", "device", "size", "write us", "msg us", "reg us", "data us", "write: msg/reg/data", "read: msg/reg/data"
	for (q = 1; q <= np; q++)
		for (z = 1; z <= nz; z++) {
			sz = Z[z]
			s = usec(rate(P[q], "send", sz))
			g = usec(rate(P[q], "reg", sz))
			w = usec(rate(P[q], "write", sz))
			r = usec(rate(P[q], "read", sz))
			if (!s || !g || !w || !r) {
				printf "%-10s %-9s %8s\n", dev(P[q]), szname(sz), "n/a"
				continue
			}
			printf "%-10s %-9s %8.1f %8.1f %8.1f %8.1f  %-22s %-22s\n", dev(P[q]), szname(sz), w, s, g - s, w - g,
				sprintf("%.0f/%.0f/%.0f %%", 100 * s / w, 100 * (g - s) / w, 100 * (w - g) / w),
				sprintf("%.0f/%.0f/%.0f %%", 100 * s / r, 100 * (g - s) / r, 100 * (r - g) / r)
		}
	footer(noisylist, nnoisy, notes, nnotes)
}' "$REC"
}

tabulate table | bench_block FRWR-BENCH-TABLE frwr-table
tabulate data | bench_block FRWR-BENCH-DATA frwr-data
exit 0
