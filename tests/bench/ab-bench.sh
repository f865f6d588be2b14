#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Two builds of softhca in one boot (tests/bench/ab.sh runs it in the VM
# guest of scripts/vm.sh --hub): /softhca-a.ko and /softhca-b.ko take
# turns, AB_ROUNDS rounds in ABBA order (A B, B A, A B, ...). A turn
# loads its module, creates softhca0 on eth0 and softhca1 on eth1, runs
# the kernel data-path cells AB_CELLS of shca_dp_bench.ko (softhca0 ->
# softhca1, one measurement of AB_MS milliseconds per cell, after its
# warm-up) and unloads everything again. So both builds meet the same
# boot, the same host load over time and the same guest, which separate
# boots (a third of the host's speed apart under TCG) do not give.
#
# Prints every measurement as it comes, "ab-rec: LABEL ROUND RECORD" with
# RECORD as shca_dp_bench logs it (bw|lat|err ...), then the table
# between "=== AB-BENCH-TABLE" and "=== AB-BENCH-TABLE-END" ("ab-table: "
# lines): per cell the median of each build, its spread, B / A of the
# medians, and "paired": the median and spread of the rounds' own B / A
# (each round runs the two builds back to back, so a host whose speed
# drifts moves both; the better number on a busy host).
#
# With AB_USER, each turn also runs those perftest cells from userspace
# (libibverbs and the softhca provider, client on softhca0, server on
# softhca1, --use_old_post_send), e.g. write_bw:64,write_lat:64: message
# rate (bw) or typical latency (lat), AB_USER_SECS seconds each.
#
# Environment: AB_ROUNDS (default 6), AB_CELLS (default
# WRITE:64,READ:64,SEND:64,WRITE-lat:64,WRITE:4096,WRITE:1048576), AB_MS
# (default 300), AB_USER (default none), AB_USER_SECS (default 1),
# AB_A_LABEL / AB_B_LABEL (default A / B: the column names), BENCH_LIB
# (default /tests/bench-lib.sh).
# POSIX sh; every command is bounded by a timeout.

# shellcheck disable=SC2034 # bench-lib.sh's say and rec use it
TAG=ab-bench
ROUNDS=${AB_ROUNDS:-6}
CELLS=${AB_CELLS:-WRITE:64,READ:64,SEND:64,WRITE-lat:64,WRITE:4096,WRITE:1048576}
MS=${AB_MS:-300}
USER_CELLS=${AB_USER:-}
USER_SECS=${AB_USER_SECS:-1}
LABEL_A=${AB_A_LABEL:-A}
LABEL_B=${AB_B_LABEL:-B}
DP_KO=${DP_KO:-/shca_dp_bench.ko}
IB=/sys/class/infiniband
REC=/tmp/ab-bench.rec
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"

case $ROUNDS$MS$USER_SECS in
'' | *[!0-9]*) fail "AB_ROUNDS='$ROUNDS', AB_MS='$MS' and AB_USER_SECS='$USER_SECS' must be whole numbers" ;;
esac
for f in /softhca-a.ko /softhca-b.ko "$DP_KO"; do
	[ -r "$f" ] || fail "$f is missing"
done
: >"$REC"

cleanup() {
	_ok=0
	if loaded shca_dp_bench; then
		run 30 rmmod shca_dp_bench || _ok=1
	fi
	for _d in softhca0 softhca1; do
		if [ -e "$IB/$_d" ]; then
			run 30 rdma link delete "$_d" || _ok=1
		fi
	done
	if loaded softhca; then
		run 30 rmmod softhca || _ok=1
	fi
	return $_ok
}
bench_traps

# As mr-bench.sh: without an initialised CRNG every get_random_*() takes
# a slow path for minutes in this guest.
timeout 300 dd if=/dev/random of=/dev/null bs=16 count=1 2>/dev/null

# turn LABEL KO ROUND: one build's turn
turn() {
	run 60 insmod "$2" || fail "insmod $2 failed"
	bench_links 0
	[ -z "$USER_CELLS" ] || bench_net_hub ||
		say "eth0 and eth1 do not reach each other: the perftest cells will fail"
	_n=0
	until [ -d "$IB/softhca0" ] && [ -d "$IB/softhca1" ]; do
		[ $_n -lt 100 ] || fail "softhca0/1 did not appear"
		sleep 0.2
		_n=$((_n + 1))
	done
	_before=$(dmesg | wc -l)
	run $((MS * 20 / 1000 + 120)) insmod "$DP_KO" pairs=softhca0:softhca1 \
		cell_ms="$MS" reps=1 budget_s=3600 cell="$CELLS" ||
		say "insmod shca_dp_bench.ko: exit status $?"
	dmesg | tail -n +"$((_before + 1))" |
		sed -n 's/.*shca_dp_bench: //p' | grep -E '^(bw|lat|err) ' |
		while read -r _line; do
			rec "$1 $3 $_line"
		done
	run 30 rmmod shca_dp_bench
	user_cells "$1" "$3"
	cleanup || fail "unloading $2 failed"
}

# user_cells LABEL ROUND: the perftest cells of AB_USER
PORT=18600
user_cells() {
	[ -n "$USER_CELLS" ] || return 0
	_ga=$(bench_pick_gid softhca0) _gb=$(bench_pick_gid softhca1)
	for _c in $(echo "$USER_CELLS" | tr ',' ' '); do
		_tool=ib_${_c%:*} _size=${_c#*:}
		_op=$(echo "${_tool#ib_}" | cut -d_ -f1 | tr '[:lower:]' '[:upper:]')
		PORT=$((PORT + 1))
		case $_tool in
		*_bw) _kind=bw _args="--report_gbits" ;;
		*) _kind=lat _args= ;;
		esac
		# shellcheck disable=SC2086 # _args: none or one
		if bench_perftest /tmp/ab-pt.out "$PORT" "$_tool" softhca0 softhca1 \
			"$_ga" "$_gb" -s "$_size" -D "$USER_SECS" -f 0 -F \
			--use_old_post_send $_args &&
			_l=$(bench_ptdata "$_kind" /tmp/ab-pt.out) && [ -n "$_l" ]; then
			# shellcheck disable=SC2086 # its fields
			set -- "$1" "$2" $_l
			if [ "$_kind" = bw ]; then
				rec "$1 $2 ubw softhca0:softhca1 $_op $_size $2 $5"
			else
				rec "$1 $2 ulat softhca0:softhca1 $_op $_size $2 $4"
			fi
		else
			rec "$1 $2 err softhca0:softhca1 user-$_c $_size $2 $(bench_why /tmp/ab-pt.out)"
			say "    perftest (GIDs $_ga, $_gb) said:"
			tail -n 8 /tmp/ab-pt.out | sed "s/^/$TAG:     /"
		fi
	done
}

say "$ROUNDS rounds of $CELLS, $MS ms each: $LABEL_A (/softhca-a.ko) vs $LABEL_B (/softhca-b.ko), ABBA"
r=1
while [ $r -le "$ROUNDS" ]; do
	if [ $((r % 2)) = 1 ]; then
		turn "$LABEL_A" /softhca-a.ko $r
		turn "$LABEL_B" /softhca-b.ko $r
	else
		turn "$LABEL_B" /softhca-b.ko $r
		turn "$LABEL_A" /softhca-a.ko $r
	fi
	say "round $r of $ROUNDS done"
	r=$((r + 1))
done

# LABEL ROUND bw PAIR OP SIZE REP MSGS NS | LABEL ROUND lat PAIR OP SIZE REP RTS NS
awk -v la="$LABEL_A" -v lb="$LABEL_B" -v rounds="$ROUNDS" "$BENCH_AWK"'
$3 == "bw" || $3 == "lat" || $3 == "ubw" || $3 == "ulat" {
	cell = ($3 ~ /^u/ ? "user " : "") ($3 ~ /lat$/ ? $5 "-lat" : $5) " " $6
	if (!(cell in seen)) { seen[cell] = 1; order[++nc] = cell }
	if ($3 == "bw")
		v = $8 / ($9 / 1e9) / 1e6	# million messages per second
	else if ($3 == "lat")
		v = $9 / $8 / 2 / 1000		# one way, microseconds
	else
		v = $8				# perftest: Mmsg/s, or us
	unit[cell] = $3 ~ /bw$/ ? "Mmsg/s" : "us"
	val[$1, cell] = val[$1, cell] (val[$1, cell] == "" ? "" : " ") v
	by[$1, cell, $2] = v
	next
}
$3 == "err" { notes[++nn] = $0 }
END {
	printf "%-18s %-7s %16s %16s %7s %15s\n", "cell", "unit", la, lb, "ratio",
		"paired"
	for (i = 1; i <= nc; i++) {
		c = order[i]
		a = val[la, c]; b = val[lb, c]
		ratio = median(a) > 0 ? sprintf("%.3f", median(b) / median(a)) : "-"
		# each round: the two builds back to back, B / A
		pr = ""
		for (r = 1; r <= rounds; r++)
			if (by[la, c, r] > 0 && by[lb, c, r] != "")
				pr = pr (pr == "" ? "" : " ") by[lb, c, r] / by[la, c, r]
		printf "%-18s %-7s %16s %16s %7s %15s\n", c, unit[c], mcell(a, 9, ""),
			mcell(b, 9, ""), ratio, pr == "" ? "-" : mcell(pr, 9, "")
		if (noisy(a)) nl[++nnl] = la " " c ": " runs(a)
		if (noisy(b)) nl[++nnl] = lb " " c ": " runs(b)
	}
	footer(nl, nnl, notes, nn)
}' "$REC" | bench_block AB-BENCH-TABLE ab-table
