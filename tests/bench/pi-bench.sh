#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# T10-DIF signature engine benchmark in the VM guest, run by mr-bench.sh
# (tests/bench/run.sh) with the devices it created: softhca0 on eth0 and
# softhca1 on eth1. shca_pi_bench.ko drives integrity MRs through ib_core
# as nvme-rdma, nvmet-rdma and iSER do and measures, for 512- and
# 4096-byte protection intervals and 64 KiB and 1 MiB of data per
# message, RDMA WRITE throughput over RC QPs from softhca0 to softhca1
# (and within softhca0, one device) in these cells:
#
#   plain   MEM_REG MR -> MEM_REG MR, no PI: the data path without engine
#   insert  integrity MR (memory NONE, wire CRC) -> MEM_REG MR
#   strip   MEM_REG MR holding data + tuples -> integrity MR (wire CRC,
#           memory NONE): checked and stripped
#   pass    integrity MR -> integrity MR, CRC in memory (separate
#           metadata buffers) and on the wire: both engines check
#   csum    the same with the IP checksum in the source's memory (iSER),
#           CRC on the wire and in the destination's memory
#
# next to what one CPU thread does on the same blocks without a device
# (the limit): crc_t10dif() alone, crc_t10dif() plus copying into an
# interleaved wire buffer, and memcpy(). Every cell runs BENCH_PI_REPS
# times, in alternating order; the table shows the median rate of data
# (PI bytes not counted) and, for the PI cells, its ratio to crc_t10dif
# alone. After each message the signature status of every integrity MR
# is read (ib_check_mr_status), after each cell every destination byte
# is checked; errors of either kind are reported in the table.
#
# Prints raw records ("pi-rec: ...") as they come, then the table between
# "=== PI-BENCH-TABLE" and "=== PI-BENCH-TABLE-END", every line prefixed
# with "pi-table: ", then the medians for plotting between
# "=== PI-BENCH-DATA" and "=== PI-BENCH-DATA-END" ("pi-data: "; one row
# per cell, for each interval and size the median, minimum and maximum
# MB/s; tests/bench/pi-bench.gp plots it). Exit status 0 if the table was
# printed; failing cells are reported in it, not by the status.
#
# Environment: BENCH_PI_MS (milliseconds per cell, default 200),
# BENCH_PI_REPS (repetitions, default 5), BENCH_PI_SLOTS (messages in
# flight, default 4), BENCH_PI_BUDGET (seconds after which the module
# starts no further cell, default 300), BENCH_PI_PAIRS (A:B pairs of
# devices, A writing to B, comma separated; default
# "softhca0:softhca1,softhca0:softhca0"), PI_KO (default
# /shca_pi_bench.ko), BENCH_LIB (default /tests/bench-lib.sh, or
# bench-lib.sh next to this script).
# POSIX sh; every command is bounded by a timeout.

PI_KO=${PI_KO:-/shca_pi_bench.ko}
MS=${BENCH_PI_MS:-200}
REPS=${BENCH_PI_REPS:-5}
SLOTS=${BENCH_PI_SLOTS:-4}
BUDGET=${BENCH_PI_BUDGET:-300}
PAIRS=${BENCH_PI_PAIRS:-softhca0:softhca1,softhca0:softhca0}
IB=/sys/class/infiniband
REC=/tmp/pi-bench.rec
TAG=pi-bench
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"


case $MS$REPS$SLOTS$BUDGET in
'' | *[!0-9]*)
	say "BENCH_PI_MS='$MS', BENCH_PI_REPS='$REPS', BENCH_PI_SLOTS='$SLOTS' and BENCH_PI_BUDGET='$BUDGET' must be whole numbers"
	exit 1
	;;
esac
: >"$REC"

run_pairs=
for pair in $(echo "$PAIRS" | tr ',' ' '); do
	ok=1
	for d in ${pair%:*} ${pair#*:}; do
		[ -d "$IB/$d" ] || { say "warning: no device $d"; ok=0; }
	done
	if [ $ok = 1 ]; then
		run_pairs="$run_pairs,$pair"
	else
		rec "err $pair - - - - no-device"
	fi
done
run_pairs=${run_pairs#,}

if [ ! -r "$PI_KO" ]; then
	say "$PI_KO is missing"
elif [ -z "$run_pairs" ]; then
	say "no device pair to measure"
else
	say "\$ insmod shca_pi_bench.ko pairs=$run_pairs cell_ms=$MS reps=$REPS slots=$SLOTS budget_s=$BUDGET"
	before=$(dmesg | wc -l)
	t0=$(date +%s)
	# The module bounds itself (budget_s); a cell begun just before the
	# budget ran out, 1 MiB messages on a slow host, and the set-up.
	timeout -k 5 $((BUDGET + 120)) insmod "$PI_KO" pairs="$run_pairs" \
		cell_ms="$MS" reps="$REPS" slots="$SLOTS" budget_s="$BUDGET" ||
		say "insmod shca_pi_bench.ko: exit status $?"
	say "kernel benchmark ran for $(($(date +%s) - t0))s"
	dmesg | tail -n +"$((before + 1))" | sed -n 's/.*shca_pi_bench: //p' >/tmp/pi-kernel.out
	while read -r kind rest; do
		case $kind in
		bw | sigerr | err) rec "$kind $rest" ;;
		\#) echo "pi-rec: # $rest" ;;
		*) echo "pi-rec: # $kind $rest" ;;
		esac
	done </tmp/pi-kernel.out
	grep -q '^done' /tmp/pi-kernel.out || say "no 'done' from shca_pi_bench"
	grep -q '^shca_pi_bench ' /proc/modules && timeout 30 rmmod shca_pi_bench
fi

# ---- the table and the plot data ---------------------------------------------------

# tabulate table|data: the table, or one row per cell for gnuplot
tabulate() {
	awk -v mode="$1" -v pairs="$PAIRS" -v ms="$MS" -v reps="$REPS" \
		-v slots="$SLOTS" "$BENCH_AWK"'
function plabel(p,    a) {
	split(p, a, ":")
	if (a[1] == a[2]) return a[1] " (one device)"
	return a[1] " -> " a[2]
}
function short(p,    a) {
	split(p, a, ":")
	if (a[1] == a[2]) return a[1] " only"
	return a[1] ">" a[2]
}
# error text of a cell, remembered for the notes below the table
function bad(k, p, c, iv, sz,    r) {
	r = err[k]
	if (r == "")
		r = err[p SUBSEP "-" SUBSEP "-" SUBSEP "-"]
	if (r == "")
		return "n/a"
	if (r != "skipped" && !((k, r) in noted)) {
		noted[k, r] = 1
		notes[++nnotes] = sprintf("%s %s, %s blocks, %s: %s", p == "-" ? "CPU" : plabel(p),
					  name[c], szname(iv), szname(sz), r)
	}
	return r == "skipped" ? "skipped" : "error"
}
# the cell: "MB/s ratio" (the ratio only for the PI cells): the median
# rate, and the median over the runs of the rate over that of crc_t10dif()
# in the same run (close in time: less exposed to a host whose load
# changes than the ratio of the medians)
function cell(p, c, iv, sz,    k, m, l, r, lk, n, q) {
	k = p SUBSEP c SUBSEP iv SUBSEP sz
	if (!(k in bw))
		return sprintf(" %9s %6s", bad(k, p, c, iv, sz), "")
	m = median(bw[k])
	l = f(m) (k in sig ? "!" : "")
	r = ""
	lk = "-" SUBSEP "crc" SUBSEP iv SUBSEP sz
	if (c != "crc" && c != "memcpy" && c != "plain") {
		q = ""
		for (n = 1; n <= maxrep; n++)
			if ((k, n) in run && (lk, n) in run && run[lk, n] > 0)
				q = q " " (run[k, n] / run[lk, n])
		if (q != "")
			r = sprintf("%.2fx", median(q))
	}
	return sprintf(" %9s %6s", l, r)
}
$1 == "bw" && $8 > 0 {
	# bw PAIR CELL IVL SIZE REP MSGS NS: MB/s of data
	k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	v = $5 * $7 * 1000 / $8
	bw[k] = bw[k] " " v
	run[k, $6] = v
	if ($6 > maxrep)
		maxrep = $6
	next
}
$1 == "sigerr" {
	# sigerr PAIR CELL IVL SIZE REP END COUNT TYPE EXPECTED ACTUAL OFFSET
	k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	sig[k] = 1
	t = $9 == 0 ? "guard" : $9 == 1 ? "ref tag" : $9 == 2 ? "app tag" : "type " $9
	signotes[++nsig] = sprintf("%s %s, %s blocks, %s, run %s: ib_check_mr_status of the %s MR reported a signature error for %s messages (the first: bad %s, expected %s, actual %s, offset %s)",
				   plabel($2), name[$3], szname($4), szname($5), $6, $7, $8, t, $10, $11, $12)
	next
}
$1 == "err" {
	k = $2 SUBSEP $3 SUBSEP $4 SUBSEP $5
	if (err[k] == "" || err[k] == "skipped")
		err[k] = $7
	next
}
BEGIN {
	ncpu = split("crc crc+copy memcpy", cpu, " ")
	ndev = split("plain insert strip pass csum", dev, " ")
	name["crc"] = "crc_t10dif"
	name["crc+copy"] = "crc_t10dif + memcpy"
	name["memcpy"] = "memcpy"
	name["plain"] = "plain (no PI)"
	name["insert"] = "insert"
	name["strip"] = "strip/verify"
	name["pass"] = "pass/verify both"
	name["csum"] = "csum -> crc"
	np = split(pairs, P, ",")
	ni = split("512 4096", IV, " ")
	ns = split("65536 1048576", SZ, " ")
}
function row(p, c, label,    l, i, s) {
	l = sprintf("  %-22s", label)
	for (i = 1; i <= ni; i++)
		for (s = 1; s <= ns; s++)
			l = l cell(p, c, IV[i], SZ[s])
	print l
}
# one plot row: label, then median, min and max for every interval and size
function prow(p, c, label,    l, i, s, k, v, n) {
	l = "\"" label "\""
	for (i = 1; i <= ni; i++)
		for (s = 1; s <= ns; s++) {
			k = p SUBSEP c SUBSEP IV[i] SUBSEP SZ[s]
			if (k in bw) {
				n = sorted(bw[k], v)
				l = l sprintf(" %.3f %.3f %.3f", median(bw[k]), v[1], v[n])
			} else {
				l = l " NaN NaN NaN"
			}
		}
	print l
}
END {
	if (mode == "data") {
		h = "# cell"
		for (i = 1; i <= ni; i++)
			for (s = 1; s <= ns; s++)
				h = h sprintf(" %s/%s(median,min,max)", IV[i], SZ[s])
		print h
		for (c = 1; c <= ncpu; c++)
			prow("-", cpu[c], name[cpu[c]])
		# the first pair'"'"'s cells unmarked, the others'"'"' with their pair
		for (q = 1; q <= np; q++)
			for (c = 1; c <= ndev; c++)
				prow(P[q], dev[c], name[dev[c]] (q > 1 ? ", " short(P[q]) : ""))
		exit
	}
	print "RDMA WRITE over RC QPs through ib_core (shca_pi_bench.ko) from the first device of a pair to"
	print "the second, " slots " messages in flight, each one recycling its MRs as a ULP does (map, LOCAL_INV,"
	print "REG_MR or REG_MR_INTEGRITY, WRITE, ib_check_mr_status); T10-DIF type 1 tuples, guard, app"
	print "and ref tag checked. plain: MEM_REG -> MEM_REG, no PI; insert: integrity MR (memory NONE,"
	print "wire CRC) -> MEM_REG; strip/verify: MEM_REG holding data + tuples -> integrity MR (wire CRC,"
	print "memory NONE); pass/verify both: integrity -> integrity, CRC in memory (separate PI buffers)"
	print "and on the wire (nvme-rdma <-> nvmet-rdma); csum -> crc: the same with the IP checksum in the"
	print "source'"'"'s memory (iSER). CPU: one thread on the same buffers, no device: crc_t10dif() per block,"
	print "crc_t10dif() + copying each block and its tuple into a wire buffer, memcpy()."
	print "MB/s = 10^6 data bytes per second (PI not counted), median of " reps " runs of " ms " ms, the cells"
	print "in alternating order; x = the rate over that of crc_t10dif alone on the same blocks and"
	print "size, in the same run (median of the runs); ! = ib_check_mr_status reported a signature"
	print "error (see below). Every destination byte (PI included) is checked after each cell."
	print ""
	l = sprintf("  %-22s", "")
	for (i = 1; i <= ni; i++)
		l = l sprintf(" %-33s", szname(IV[i]) " blocks")
	print l
	l = sprintf("  %-22s", "data per message")
	for (i = 1; i <= ni; i++)
		for (s = 1; s <= ns; s++)
			l = l sprintf(" %9s %6s", szname(SZ[s]), "")
	print l
	print "CPU, one thread (the limit)"
	for (c = 1; c <= ncpu; c++)
		row("-", cpu[c], name[cpu[c]])
	for (q = 1; q <= np; q++) {
		print plabel(P[q])
		for (c = 1; c <= ndev; c++)
			row(P[q], dev[c], name[dev[c]])
	}
	if (nnotes || nsig) {
		print ""
		for (i = 1; i <= nnotes; i++)
			print "error: " notes[i]
		for (i = 1; i <= nsig; i++)
			print "error: " signotes[i]
	}
}' "$REC"
}

tabulate table | bench_block PI-BENCH-TABLE pi-table
tabulate data | bench_block PI-BENCH-DATA pi-data
exit 0
