#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Userspace data path with mapped rings vs a system call per verb (issue
# 12), in the VM guest, run by mr-bench.sh (tests/bench/run.sh --only
# rings) with the devices it created: softhca0 on eth0, softhca1 on eth1,
# rxe0 on eth0, rxe1 on eth1. perftest (--use_old_post_send: every work
# request through ibv_post_send, one per call; no rdma_cm), server and
# client in this guest connected over TCP to 127.0.0.1, client on the
# first device of a pair, server on the second, in three columns:
#
#   rings     softhca0 -> softhca1, the provider's default: ibv_post_recv
#             writes the mapped receive ring (no system call),
#             ibv_post_send writes the send ring and rings one doorbell
#             (an ioctl) per call (SOFTHCA_RINGS=1 in both processes)
#   syscalls  softhca0 -> softhca1 with SOFTHCA_RINGS=0 in the environment
#             of both processes: every post is uverbs' POST_SEND or
#             POST_RECV write() command
#   rxe       rxe0 -> rxe1 (rdma_rxe, RoCE v2 through both virtio NICs),
#             rdma-core's rxe provider (its own mapped queues plus a
#             doorbell system call per post_send)
#
# Completions are polled from mapped rings in all three. Cells: message
# rate of ib_write_bw and ib_send_bw at 64 B and 4 KiB in duration mode
# (-D SECS+2*MARGIN -f MARGIN: MARGIN seconds of warm-up in the same
# process, then SECS measured), at 1 MiB in iteration mode (-n
# BW_ITERS_1M: perftest 4.5's duration mode reports 0 for 1 MiB SENDs
# while they complete), and the typical (median) one-way latency of
# ib_write_lat and ib_send_lat (-n LAT_ITERS, at 1 MiB -n LAT_ITERS_1M),
# at 64 B, 4 KiB and 1 MiB. Every cell BENCH_REPS times, the three
# columns taking turns in ABBA order (A B C, C B A, A B C, ...); the
# table shows the median and the spread of the runs and marks noisy
# cells. A run in iteration mode that does not finish within
# BENCH_RINGS_BIG_SECS (rxe at 1 MiB) is an error, and its cell is
# skipped in the later repetitions. As a check that the columns are what
# they claim, the first 64 B ib_write_bw run of each column counts the
# uverbs mappings of server and client (the CQ ring; softhca's send and
# receive rings add two each).
#
# Prints raw records ("rings-rec: ...") as they come, then the table
# between "=== RINGS-BENCH-TABLE" and "=== RINGS-BENCH-TABLE-END", every
# line prefixed with "rings-table: ", then the plot data between
# "=== RINGS-BENCH-DATA" and "=== RINGS-BENCH-DATA-END" ("rings-data: ";
# one row per size, per column and tool the median, minimum and maximum
# Mmsg/s or microseconds; tests/bench/rings-bench.gp plots it). Exit
# status 0 if the table was printed; failing cells are reported in it,
# not by the status.
#
# Environment: BENCH_REPS (runs of every cell, default 3),
# BENCH_RINGS_SECS (measured seconds per bandwidth run, default 1),
# BENCH_RINGS_MARGIN (seconds of warm-up before them, default 1),
# BENCH_RINGS_BW_ITERS_1M (messages per 1 MiB bandwidth run, default
# 100), BENCH_RINGS_LAT_ITERS (ping-pongs per latency run, default 200),
# BENCH_RINGS_LAT_ITERS_1M (the same at 1 MiB, default 20),
# BENCH_RINGS_BIG_SECS (the bound of an iteration-mode run, default 20),
# BENCH_RINGS_BUDGET (seconds after which the remaining runs are skipped,
# default 720, so that the table is always printed), BENCH_LIB (default
# /tests/bench-lib.sh, or bench-lib.sh next to this script),
# RINGS_RETAB (a file of the records of a run, "rings-rec: " cut off:
# measure nothing, print the table and the plot data of those records;
# the other knobs should be those of that run).
# POSIX sh; every command is bounded by a timeout.

REPS=${BENCH_REPS:-3}
SECS=${BENCH_RINGS_SECS:-1}
MARGIN=${BENCH_RINGS_MARGIN:-1}
BW_ITERS_1M=${BENCH_RINGS_BW_ITERS_1M:-100}
LAT_ITERS=${BENCH_RINGS_LAT_ITERS:-200}
LAT_ITERS_1M=${BENCH_RINGS_LAT_ITERS_1M:-20}
BIG_SECS=${BENCH_RINGS_BIG_SECS:-20}
BUDGET=${BENCH_RINGS_BUDGET:-720}
IB=/sys/class/infiniband
REC=/tmp/rings-bench.rec
MEASURE=1
if [ -n "${RINGS_RETAB:-}" ]; then
	REC=$RINGS_RETAB
	MEASURE=0
fi
SIZES="64 4096 1048576"
# the columns: NAME:CLIENT:SERVER:SOFTHCA_RINGS (- = not set)
COLS="rings:softhca0:softhca1:1 syscalls:softhca0:softhca1:0 rxe:rxe0:rxe1:-"
TOOLS="write_bw send_bw write_lat send_lat"
TAG=rings-bench
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"

case $REPS$SECS$MARGIN$BW_ITERS_1M$LAT_ITERS$LAT_ITERS_1M$BIG_SECS$BUDGET in
'' | *[!0-9]*)
	say "BENCH_REPS='$REPS', BENCH_RINGS_SECS='$SECS', BENCH_RINGS_MARGIN='$MARGIN', BENCH_RINGS_BW_ITERS_1M='$BW_ITERS_1M', BENCH_RINGS_LAT_ITERS='$LAT_ITERS', BENCH_RINGS_LAT_ITERS_1M='$LAT_ITERS_1M', BENCH_RINGS_BIG_SECS='$BIG_SECS' and BENCH_RINGS_BUDGET='$BUDGET' must be whole numbers"
	exit 1
	;;
esac
if [ "$SECS" -lt 1 ] || [ "$BW_ITERS_1M" -lt 5 ] || [ "$LAT_ITERS" -lt 5 ] ||
	[ "$LAT_ITERS_1M" -lt 5 ] || [ "$BIG_SECS" -lt 1 ]; then
	say "BENCH_RINGS_SECS must be at least 1, the latency iterations at least 5 (perftest's minimum)"
	exit 1
fi
[ "$MEASURE" = 0 ] || : >"$REC"

# rxe0 -> rxe1: packets for 10.0.3.15 leave eth0 (rxe routes by the GID's
# netdev) and come back in on eth1 through the hub; their source address
# is local, which Linux drops unless accept_local is set (bench_net_hub).
RUNCOLS=$COLS
if [ "$MEASURE" = 1 ] && ! bench_net_hub; then
	# rxe would queue its packets behind a failing ARP, and rdma_rxe
	# 6.12 can crash when such a QP is destroyed: do not try.
	say "eth0 and eth1 do not reach each other (no QEMU hub?): skipping rxe0 -> rxe1"
	rec "err rxe - - - eth0-eth1-unreachable"
	RUNCOLS=$(echo "$COLS" | sed 's/ rxe:[^ ]*//')
fi

# ---- perftest ------------------------------------------------------------------

# maps: per perftest process now running, its mappings of the uverbs
# device (the CQ ring; softhca's send and receive rings add two)
maps() {
	for _p in /proc/[0-9]*; do
		case $(cat "$_p/comm" 2>/dev/null) in
		ib_*)
			_m=$(grep -c uverbs "$_p/maps" 2>/dev/null) && printf '%s ' "$_m"
			;;
		esac
	done
}

PORT=18600
# perftest SECS PROBE RINGS TOOL A B GIDA GIDB ARGS...: client on A,
# server on B, both with SOFTHCA_RINGS=RINGS in their environment (- :
# not set), each bounded by SECS; with PROBE=1 the uverbs mappings of
# both (maps) 1.5 s into the run are left in $PT_MAPS. The client's
# output is left in /tmp/rings-pt.cli. Returns the client's status (the
# server's if the client succeeded).
perftest() {
	_pt_secs=$1 _pt_probe=$2 _pt_rings=$3 _pt_tool=$4 _pt_a=$5 _pt_b=$6 _pt_ga=$7 _pt_gb=$8
	shift 8
	if [ "$_pt_rings" = - ]; then
		set -- env -u SOFTHCA_RINGS "$_pt_tool" "$@"
	else
		set -- env SOFTHCA_RINGS="$_pt_rings" "$_pt_tool" "$@"
	fi
	PORT=$((PORT + 1))
	timeout -k 5 "$_pt_secs" "$@" -d "$_pt_b" -x "$_pt_gb" -p "$PORT" \
		>/tmp/rings-pt.srv 2>&1 &
	_spid=$!
	if ! bench_listening "$_spid" "$PORT"; then
		wait "$_spid"
		cp /tmp/rings-pt.srv /tmp/rings-pt.cli
		return 1
	fi
	timeout -k 5 "$_pt_secs" "$@" -d "$_pt_a" -x "$_pt_ga" -p "$PORT" 127.0.0.1 \
		>/tmp/rings-pt.cli 2>&1 &
	_cpid=$!
	PT_MAPS=
	if [ "$_pt_probe" = 1 ]; then
		sleep 1.5
		PT_MAPS=$(maps)
	fi
	wait "$_cpid"
	_rc=$?
	wait "$_spid"
	_src=$?
	case $_rc in
	124 | 137) echo "timed out after ${_pt_secs}s" >>/tmp/rings-pt.cli ;;
	esac
	if [ $_rc -eq 0 ] && [ $_src -ne 0 ]; then
		cp /tmp/rings-pt.srv /tmp/rings-pt.cli
		_rc=$_src
	fi
	return $_rc
}

# ptdata bw|lat: from the first data line after perftest's "#bytes" header,
# "ITERATIONS Gb/s Mmsg/s" (bw) or "ITERATIONS TYPICAL_us MIN_us" (lat:
# the columns under "t_typical", the median of the iterations, and
# "t_min", the fastest)
ptdata() {
	awk -v kind="$1" '
		/#bytes/ {
			h = 1
			for (i = 1; i <= NF; i++)
				if ($i ~ /^t_typical/)
					col = i
				else if ($i ~ /^t_min/)
					mcol = i
			next
		}
		h && $1 ~ /^[0-9]+$/ {
			if (kind == "bw" && NF >= 5)
				print $2, $4, $5
			else if (kind == "lat" && col && mcol)
				print $2, $col, $mcol
			exit
		}' /tmp/rings-pt.cli
}

# one COLSPEC TOOL SIZE REP: one run of a cell, its record; a cell that
# timed out is skipped in the later repetitions
one() {
	_name=${1%%:*}
	_r=${1#*:}
	_a=${_r%%:*}
	_r=${_r#*:}
	_b=${_r%%:*}
	_rings=${_r#*:}
	eval "_ga=\$gid_$_a _gb=\$gid_$_b _dead=\${dead_${_name}_$2_$3:-}"
	if [ -n "$_dead" ]; then
		rec "err $_name $2 $3 $4 skipped"
		return
	fi
	if [ -z "$_ga" ] || [ -z "$_gb" ]; then
		rec "err $_name $2 $3 $4 no-roce-v2-gid"
		return
	fi
	_probe=0
	case $2 in
	*_bw)
		if [ "$3" -ge 1048576 ]; then
			set -- "$@" bw "$BIG_SECS" -s "$3" -n "$BW_ITERS_1M"
		else
			set -- "$@" bw $((SECS + 2 * MARGIN + 30)) -s "$3" \
				-D $((SECS + 2 * MARGIN)) -f "$MARGIN"
			# the mappings, once per column
			eval "[ -n \"\${probed_$_name:-}\" ]" || _probe=1
			eval "probed_$_name=1"
		fi
		set -- "$@" -F --report_gbits --use_old_post_send
		;;
	*)
		_n=$LAT_ITERS
		[ "$3" -lt 1048576 ] || _n=$LAT_ITERS_1M
		set -- "$@" lat "$BIG_SECS" -s "$3" -n "$_n" -F --use_old_post_send
		;;
	esac
	_tool=$2 _size=$3 _rep=$4 _kind=$5 _secs=$6
	shift 6
	_t0=$(date +%s)
	perftest "$_secs" "$_probe" "$_rings" "ib_$_tool" "$_a" "$_b" "$_ga" "$_gb" "$@"
	_prc=$?
	[ -z "$PT_MAPS" ] || rec "maps $_name $PT_MAPS"
	if [ $_prc -eq 0 ] && _line=$(ptdata "$_kind") && [ -n "$_line" ]; then
		# shellcheck disable=SC2086 # its fields
		set -- $_line
		# perftest converts cycles with the CPU MHz it measures, which
		# TCG on a busy host sometimes gets wrong: inf, nan or 0
		_v=$2
		[ "$_kind" = lat ] || _v=$3
		if ! awk -v x="$_v" 'BEGIN { exit !(x ~ /^[0-9]*\.?[0-9]+$/ && x + 0 > 0) }'; then
			if [ "$_kind" = bw ]; then
				rec "err $_name $_tool $_size $_rep perftest_reported_$3_Mmsg/s_($1_messages)"
			else
				rec "err $_name $_tool $_size $_rep perftest_reported_$2_us"
			fi
			return
		fi
		if [ "$_kind" = bw ]; then
			# bw COLUMN TOOL SIZE REP MMSG/S GB/S MSGS SECS
			rec "bw $_name $_tool $_size $_rep $3 $2 $1 $(($(date +%s) - _t0))"
		else
			# lat COLUMN TOOL SIZE REP TYPICAL_US ITERS SECS MIN_US
			rec "lat $_name $_tool $_size $_rep $2 $1 $(($(date +%s) - _t0)) $3"
		fi
	else
		if grep -q '^timed out' /tmp/rings-pt.cli; then
			eval "dead_${_name}_${_tool}_$_size=1"
		fi
		rec "err $_name $_tool $_size $_rep $(bench_why /tmp/rings-pt.cli)"
		sed 's/^/rings-bench:     /' /tmp/rings-pt.cli | tail -n 8
	fi
}

START=$(date +%s)
if [ "$MEASURE" = 0 ]; then
	say "the table of $REC"
elif ! command -v ib_write_bw >/dev/null; then
	say "perftest is not installed: no rows"
	rec "err - - - - perftest-not-installed"
else
	for d in softhca0 softhca1 rxe0 rxe1; do
		g=$(bench_pick_gid $d)
		eval "gid_$d=\$g"
		say "$d: RoCE v2 GID index ${g:-none}"
	done
	# the columns in ABBA order: forward, then backward, flipping with
	# every cell
	fwd=$RUNCOLS
	bwd=
	for c in $RUNCOLS; do bwd="$c $bwd"; done
	flip=0
	rep=1
	while [ $rep -le "$REPS" ]; do
		for tool in $TOOLS; do
			for size in $SIZES; do
				if [ $flip = 0 ]; then order=$fwd; else order=$bwd; fi
				flip=$((1 - flip))
				for c in $order; do
					if [ $(($(date +%s) - START)) -ge "$BUDGET" ]; then
						rec "err ${c%%:*} $tool $size $rep skipped"
						continue
					fi
					one "$c" "$tool" "$size" "$rep"
				done
			done
		done
		rep=$((rep + 1))
	done
	say "perftest ran for $(($(date +%s) - START))s"
fi

# ---- the table and the plot data -----------------------------------------------------

# tabulate table|data: the table, or one row per size for gnuplot
tabulate() {
	awk -v mode="$1" -v cols="$COLS" -v sizes="$SIZES" -v reps="$REPS" \
		-v secs="$SECS" -v margin="$MARGIN" -v liters="$LAT_ITERS" \
		-v liters1m="$LAT_ITERS_1M" -v bwiters1m="$BW_ITERS_1M" \
		-v bigsecs="$BIG_SECS" "$BENCH_AWK"'
BEGIN {
	nc = split(cols, C, " ")
	for (i = 1; i <= nc; i++) {
		split(C[i], w, ":")
		col[i] = w[1]
	}
	label["rings"] = "softhca rings"
	label["syscalls"] = "softhca syscalls"
	label["rxe"] = "rxe"
	nz = split(sizes, Z, " ")
	nt = split("write_bw send_bw write_lat send_lat", T, " ")
	desc["write_bw"] = "WRITE"
	desc["send_bw"] = "SEND"
	desc["write_lat"] = "WRITE"
	desc["send_lat"] = "SEND"
}
$1 == "bw" && $6 ~ /^[0-9]*\.?[0-9]+$/ && $6 > 0 {
	# bw COLUMN TOOL SIZE REP MMSG/S GB/S MSGS SECS
	k = $2 SUBSEP $3 SUBSEP $4
	v[k] = v[k] " " $6
	next
}
$1 == "lat" && $6 ~ /^[0-9]*\.?[0-9]+$/ && $6 > 0 {
	# lat COLUMN TOOL SIZE REP TYPICAL_US ITERS SECS MIN_US
	k = $2 SUBSEP $3 SUBSEP $4
	v[k] = v[k] " " $6
	if ($9 ~ /^[0-9]*\.?[0-9]+$/ && $9 > 0)
		vmin[k] = vmin[k] " " $9
	next
}
$1 == "maps" {
	# maps COLUMN N... (per perftest process)
	m = ""
	for (i = 3; i <= NF; i++)
		m = m (i > 3 ? ", " : "") $i
	maps[$2] = m
	next
}
$1 == "err" {
	# err COLUMN TOOL SIZE REP REASON
	k = $2 SUBSEP $3 SUBSEP $4
	if (err[k] == "" || err[k] == "skipped")
		err[k] = $6
	if ($6 != "skipped") {
		failed[k] = 1
		r = $6
		gsub(/_/, " ", r)
		notes[++nnotes] = sprintf("%s%s: %s", $2 == "-" ? "all" : label[$2],
					  $3 == "-" ? "" : " " $3 " " szname($4) " run " $5, r)
	}
	next
}
# a cell: the median in 9 columns, the spread, the noisy mark
function cell(c, t, z,    k, e) {
	k = c SUBSEP t SUBSEP z
	if (!(k in v)) {
		e = err[k]
		if (e == "")
			e = err[c SUBSEP "-" SUBSEP "-"]
		if (e == "")
			return sprintf(" %9s %5s", "-", "")
		return sprintf(" %9s %5s", e == "skipped" ? "skipped" : "error", "")
	}
	if (noisy(v[k]))
		nlist[++nn] = sprintf("%s %s %s: %s %s (runs in order: %s)", label[c],
				      t, szname(z), f(median(v[k])),
				      t ~ /_bw$/ ? "Mmsg/s" : "us", runs(v[k]))
	return " " mcell(v[k], 9, (k in failed) ? "!" : "")
}
# rings compared with syscalls: how many times faster (rate: rings over
# syscalls; latency: syscalls over rings)
function ratio(t, z,    a, b) {
	a = "rings" SUBSEP t SUBSEP z
	b = "syscalls" SUBSEP t SUBSEP z
	if (!(a in v) || !(b in v) || median(v[a]) <= 0 || median(v[b]) <= 0)
		return sprintf(" %9s", "-")
	if (t ~ /_bw$/)
		return sprintf(" %8sx", f(median(v[a]) / median(v[b])))
	return sprintf(" %8sx", f(median(v[b]) / median(v[a])))
}
END {
	if (mode == "data") {
		h = "# size(bytes)"
		for (t = 1; t <= nt; t++)
			for (i = 1; i <= nc; i++)
				h = h " " col[i] "-" T[t] "(median,min,max)"
		print h
		for (z = 1; z <= nz; z++) {
			l = Z[z]
			for (t = 1; t <= nt; t++)
				for (i = 1; i <= nc; i++)
					l = l " " mmm(v[col[i], T[t], Z[z]], 1)
			print l
		}
		exit
	}
	print "perftest over libibverbs (rdma-core 44), --use_old_post_send (one ibv_post_send per work request),"
	print "TCP handshake on 127.0.0.1, client on A, server on B, both in this guest. Columns:"
	print "  softhca rings     softhca0 -> softhca1, mapped send and receive rings (the default): ibv_post_recv"
	print "                    writes the receive ring, no system call; ibv_post_send writes the send ring"
	print "                    and rings one doorbell (ioctl) per call"
	print "  softhca syscalls  the same devices with SOFTHCA_RINGS=0 for server and client: every post is a"
	print "                    uverbs POST_SEND/POST_RECV command with its per-WR kmalloc and copy (rdma-core"
	print "                    44 sends these write() commands as an ioctl, UVERBS_METHOD_INVOKE_WRITE)"
	print "  rxe               rxe0 (eth0) -> rxe1 (eth1), rdma_rxe, RoCE v2 through both virtio NICs"
	print "Completions come from mapped CQ rings in all three. Every cell " reps " runs, the columns in ABBA"
	print "order (A B C, C B A, ...); median, % = (max - min) / median of the runs, * = noisy (over '"$BENCH_NOISY_PCT"' %,"
	print "its runs listed below), ! = a run failed (listed below); rings vs syscalls: how many times"
	print "faster the rings are (message rate: rings / syscalls; latency: syscalls / rings)."
	print ""
	print "Message rate, Mmsg/s (10^6 messages/s, perftest'"'"'s MsgRate of the client): ib_write_bw, ib_send_bw;"
	print "64 B and 4 KiB: -D " secs + 2 * margin " -f " margin " (" margin " s of warm-up in the same process, " secs " s measured, " margin " s more;"
	print "a run reporting 0 is an error); 1 MiB: -n " bwiters1m " (perftest'"'"'s duration mode reports 0 for 1 MiB"
	print "SENDs), bounded by " bigsecs " s."
	l = sprintf("%-6s %-7s", "", "")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %16s", label[col[i]])
	print l sprintf(" %9s", "rings vs")
	l = sprintf("%-6s %-7s", "op", "size")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %9s %5s", "Mmsg/s", "%")
	print l sprintf(" %9s", "syscalls")
	for (t = 1; t <= 2; t++)
		for (z = 1; z <= nz; z++) {
			l = sprintf("%-6s %-7s", desc[T[t]], szname(Z[z]))
			for (i = 1; i <= nc; i++)
				l = l cell(col[i], T[t], Z[z])
			print l ratio(T[t], Z[z])
		}
	print ""
	print "The same in GB/s (10^9 bytes/s, size x median message rate)."
	l = sprintf("%-6s %-7s", "op", "size")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %16s", label[col[i]])
	print l
	for (t = 1; t <= 2; t++)
		for (z = 1; z <= nz; z++) {
			l = sprintf("%-6s %-7s", desc[T[t]], szname(Z[z]))
			for (i = 1; i <= nc; i++) {
				k = col[i] SUBSEP T[t] SUBSEP Z[z]
				l = l sprintf(" %16s", k in v ? f(median(v[k]) * Z[z] / 1e3) : "-")
			}
			print l
		}
	print ""
	print "Latency, typical (median of the iterations, perftest'"'"'s t_typical) one way in microseconds:"
	print "ib_write_lat, ib_send_lat, -n " liters " (1 MiB: -n " liters1m "), bounded by " bigsecs " s; both processes busy-poll."
	l = sprintf("%-6s %-7s", "", "")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %16s", label[col[i]])
	print l sprintf(" %9s", "rings vs")
	l = sprintf("%-6s %-7s", "op", "size")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %9s %5s", "us", "%")
	print l sprintf(" %9s", "syscalls")
	for (t = 3; t <= 4; t++)
		for (z = 1; z <= nz; z++) {
			l = sprintf("%-6s %-7s", desc[T[t]], szname(Z[z]))
			for (i = 1; i <= nc; i++)
				l = l cell(col[i], T[t], Z[z])
			print l ratio(T[t], Z[z])
		}
	print ""
	print "Latency, fastest iteration (perftest'"'"'s t_min) one way in microseconds, median of the runs: the"
	print "same runs; less exposed than the typical value to the host descheduling a virtual CPU (a"
	print "ping-pong then waits for the guest'"'"'s 4 ms timer tick, and typical values of about 4000 us"
	print "mean that the host was busy, not the device)."
	l = sprintf("%-6s %-7s", "", "")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %16s", label[col[i]])
	print l sprintf(" %9s", "rings vs")
	l = sprintf("%-6s %-7s", "op", "size")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %16s", "us")
	print l sprintf(" %9s", "syscalls")
	for (t = 3; t <= 4; t++)
		for (z = 1; z <= nz; z++) {
			l = sprintf("%-6s %-7s", desc[T[t]], szname(Z[z]))
			for (i = 1; i <= nc; i++) {
				k = col[i] SUBSEP T[t] SUBSEP Z[z]
				l = l sprintf(" %16s", k in vmin ? f(median(vmin[k])) : "-")
			}
			a = "rings" SUBSEP T[t] SUBSEP Z[z]
			b = "syscalls" SUBSEP T[t] SUBSEP Z[z]
			if ((a in vmin) && (b in vmin) && median(vmin[a]) > 0)
				l = l sprintf(" %8sx", f(median(vmin[b]) / median(vmin[a])))
			else
				l = l sprintf(" %9s", "-")
			print l
		}
	print ""
	print "Check: mappings of the uverbs device per perftest process (server, client), sampled during the"
	print "first 64 B ib_write_bw run of each column: softhca maps its CQ ring, with rings also the send"
	print "and receive rings (3; with SOFTHCA_RINGS=0: 1); rxe maps its CQ, SQ and RQ (3)."
	for (i = 1; i <= nc; i++)
		printf "  %-17s %s\n", label[col[i]], col[i] in maps ? maps[col[i]] : "-"
	footer(nlist, nn, notes, nnotes)
}' "$REC"
}

tabulate table | bench_block RINGS-BENCH-TABLE rings-table
tabulate data | bench_block RINGS-BENCH-DATA rings-data
exit 0
