#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# RC data-path benchmark in the VM guest, run by mr-bench.sh
# (tests/bench/run.sh) with the devices it created: softhca0 on eth0,
# softhca1 on eth1, rxe0 on eth0, rxe1 on eth1. eth0 and eth1 hang off one
# QEMU hub, so rxe0 -> rxe1 traffic really leaves eth0 and arrives on eth1
# (as UDP/IP through QEMU's virtio NICs); softhca delivers in memory from
# one device to the other. Measures, for WRITE, READ and SEND at 64 B,
# 4 KiB, 64 KiB and 1 MiB, throughput, and at the same sizes SEND and
# WRITE ping-pong latency:
#
#   kernel  shca_dp_bench.ko through ib_core (no system call per work
#           request): softhca0 -> softhca1 and rxe0 -> rxe1; every cell
#           BENCH_REPS times, the pairs in ABBA order, each run after a
#           warm-up on fresh QPs; the table shows the median and the
#           spread of the runs and marks noisy cells
#   user    perftest (ib_write_bw, ib_read_bw, ib_send_bw, ib_send_lat,
#           ib_write_lat; --use_old_post_send, no rdma_cm; duration mode),
#           server and client in this guest connected over TCP to
#           127.0.0.1: softhca0 -> softhca1 and rxe0 -> rxe1; one run
#           per cell, latency at 64 B only
#   limit   single-thread memcpy() between two buffers, same sizes: the
#           kernel's (measured by the module in every repetition) and
#           glibc's (shca_memcpy_bench, best of two runs)
#
# Prints raw records ("dp-rec: ...") as they come, then the table between
# "=== DP-BENCH-TABLE" and "=== DP-BENCH-TABLE-END", every line prefixed
# with "dp-table: ", then the plot data of the kernel cells: throughput
# between "=== DP-BENCH-BW" and "=== DP-BENCH-BW-END" ("dp-bw: "; per
# size, for each pair and operation and for memcpy the median, minimum
# and maximum GB/s; tests/bench/dp-bench-bw.gp plots it) and latency
# between "=== DP-BENCH-LAT" and "=== DP-BENCH-LAT-END" ("dp-lat: ";
# microseconds; memcpy: the time of one copy; tests/bench/dp-bench-lat.gp).
# Exit status 0 if the table was printed; failing cells are reported in
# it, not by the status.
#
# Environment: BENCH_DP_MS (kernel milliseconds per cell, default 300),
# BENCH_REPS (runs of every kernel cell, default 3), BENCH_DP_KBUDGET
# (seconds after which the module starts no further cell, default 300),
# BENCH_DP_PERFTEST (0 skips perftest; default 1), BENCH_DP_SECS (seconds
# per perftest run, default 1), BENCH_DP_BUDGET (seconds of perftest
# runs, after which the remaining ones are skipped, default 200, so that
# the table is always printed), DP_KO (default /shca_dp_bench.ko),
# DP_KPAIRS (default "softhca0:softhca1 rxe0:rxe1"; rxe0:rxe0 would be
# rdma_rxe's in-device loopback, but kernel QPs stall on it in this guest),
# BENCH_LIB (default /tests/bench-lib.sh, or bench-lib.sh next to this
# script).
# POSIX sh; every command is bounded by a timeout.

DP_KO=${DP_KO:-/shca_dp_bench.ko}
DP_MS=${BENCH_DP_MS:-300}
PERFTEST=${BENCH_DP_PERFTEST:-1}
PT_SECS=${BENCH_DP_SECS:-1}
BUDGET=${BENCH_DP_BUDGET:-200}
REPS=${BENCH_REPS:-3}
KBUDGET=${BENCH_DP_KBUDGET:-300}
START=$(date +%s)
IB=/sys/class/infiniband
REC=/tmp/dp-bench.rec
SIZES="64 4096 65536 1048576"
LAT_SIZE=64
TAG=dp-bench
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"
# the columns of the table (device pairs A:B) and the pairs measured
KPAIRS=${DP_KPAIRS:-softhca0:softhca1 rxe0:rxe1}
UPAIRS="softhca0:softhca1 rxe0:rxe1"
KRUN=$KPAIRS
URUN=$UPAIRS


case $DP_MS$PT_SECS$BUDGET$REPS$KBUDGET in
'' | *[!0-9]*)
	say "BENCH_DP_MS='$DP_MS', BENCH_DP_SECS='$PT_SECS', BENCH_DP_BUDGET='$BUDGET', BENCH_REPS='$REPS' and BENCH_DP_KBUDGET='$KBUDGET' must be whole numbers"
	exit 1
	;;
esac
: >"$REC"

for d in softhca0 softhca1 rxe0 rxe1; do
	[ -d "$IB/$d" ] || say "warning: no device $d"
done

# rxe0 -> rxe1: packets for 10.0.3.15 leave eth0 (rxe routes by the GID's
# netdev) and come back in on eth1 through the hub; their source address
# is local, which Linux drops unless accept_local is set.
if bench_net_hub; then
	say "eth0 and eth1 reach each other (QEMU hub): rxe0 -> rxe1 is measured"
else
	# rxe would queue its packets behind a failing ARP, and rdma_rxe
	# 6.12 can crash when such a QP is destroyed: do not try.
	say "eth0 and eth1 do not reach each other (no QEMU hub?): skipping rxe0 -> rxe1"
	KRUN=$(echo "$KPAIRS" | sed 's/rxe0:rxe1//')
	URUN=$(echo "$UPAIRS" | sed 's/rxe0:rxe1//')
	rec "kerr rxe0:rxe1 - - - eth0-eth1-unreachable"
	rec "uerr rxe0:rxe1 - - eth0-eth1-unreachable"
fi

# ---- the memcpy limit (before and after the rest; the table takes the best) ----

umemcpy() {
	if command -v shca_memcpy_bench >/dev/null; then
		# shellcheck disable=SC2086 # one argument per size
		timeout -k 5 30 shca_memcpy_bench $SIZES >/tmp/dp-memcpy.out 2>&1
		while read -r w size n ns; do
			[ "$w" = memcpy ] && rec "umemcpy $size $n $ns"
		done </tmp/dp-memcpy.out
	else
		say "shca_memcpy_bench is missing"
	fi
}
umemcpy

# ---- kernel verbs ---------------------------------------------------------------

# shellcheck disable=SC2086 # squeezes the blanks a removed pair left
kpairs=$(echo $KRUN | tr ' ' ',')
if [ -r "$DP_KO" ]; then
	say "\$ insmod shca_dp_bench.ko pairs=$kpairs cell_ms=$DP_MS reps=$REPS budget_s=$KBUDGET"
	before=$(dmesg | wc -l)
	t0=$(date +%s)
	# The module bounds itself (budget_s); a cell begun just before the
	# budget ran out (1 MiB ping-pongs over rxe stall for 5 s at most),
	# and the set-up.
	timeout -k 5 $((KBUDGET + 120)) insmod "$DP_KO" pairs="$kpairs" \
		cell_ms="$DP_MS" reps="$REPS" budget_s="$KBUDGET" ||
		say "insmod shca_dp_bench.ko: exit status $?"
	say "kernel benchmark ran for $(($(date +%s) - t0))s"
	dmesg | tail -n +"$((before + 1))" | sed -n 's/.*shca_dp_bench: //p' >/tmp/dp-kernel.out
	while read -r kind rest; do
		case $kind in
		bw | lat | memcpy | err) rec "k$kind $rest" ;;
		*) echo "dp-rec: # $kind $rest" ;;
		esac
	done </tmp/dp-kernel.out
	grep -q '^done' /tmp/dp-kernel.out || say "no 'done' from shca_dp_bench"
	grep -q '^shca_dp_bench ' /proc/modules && timeout 30 rmmod shca_dp_bench
else
	say "$DP_KO is missing"
fi

# ---- userspace: perftest ----------------------------------------------------------

PORT=18515
# perftest TOOL A B GIDA GIDB ARGS...: client on A, server on B; the
# client's output is left in /tmp/dp-pt.cli. Returns the client's status;
# 2 without running anything once the time budget is spent.
perftest() {
	if [ $(($(date +%s) - START)) -ge "$BUDGET" ]; then
		echo "skipped: time budget of ${BUDGET}s spent" >/tmp/dp-pt.cli
		return 2
	fi
	PORT=$((PORT + 1))
	bench_perftest /tmp/dp-pt.cli "$PORT" "$@"
}

pick_gid() { bench_pick_gid "$1"; }
ptdata() { bench_ptdata "$1" /tmp/dp-pt.cli; }
why() { bench_why "$1"; }

upper() { echo "$1" | tr '[:lower:]' '[:upper:]'; }

# the perftest budget counts from here
START=$(date +%s)
if [ "$PERFTEST" = 0 ]; then
	say "perftest skipped (BENCH_DP_PERFTEST=0)"
elif ! command -v ib_write_bw >/dev/null; then
	say "perftest is not installed: no userspace rows"
	rec "uerr - - - perftest-not-installed"
else
	t0=$(date +%s)
	for pair in $URUN; do
		a=${pair%:*} b=${pair#*:}
		ga=$(pick_gid "$a") gb=$(pick_gid "$b")
		if [ -z "$ga" ] || [ -z "$gb" ]; then
			rec "uerr $pair - - no-roce-v2-gid"
			continue
		fi
		say "perftest $a (GID $ga) -> $b (GID $gb)"
		for op in write read send; do
			skip=
			for size in $SIZES; do
				OP=$(upper "$op")
				if [ -n "$skip" ]; then
					rec "uerr $pair $OP $size skipped"
					continue
				fi
				t1=$(date +%s)
				if perftest "ib_${op}_bw" "$a" "$b" "$ga" "$gb" -s "$size" \
					-D "$PT_SECS" -f 0 -F --report_gbits --use_old_post_send &&
					line=$(ptdata bw) && [ -n "$line" ]; then
					# shellcheck disable=SC2086 # its fields
					set -- $line
					rec "ubw $pair $OP $size $2 $3 $1 $(($(date +%s) - t1))"
				else
					rec "uerr $pair $OP $size $(why /tmp/dp-pt.cli)"
					sed 's/^/dp-bench:     /' /tmp/dp-pt.cli | tail -n 8
					skip=1
				fi
			done
		done
		for op in send write; do
			OP=$(upper "$op")
			if perftest "ib_${op}_lat" "$a" "$b" "$ga" "$gb" -s "$LAT_SIZE" \
				-D "$PT_SECS" -f 0 -F --use_old_post_send &&
				line=$(ptdata lat) && [ -n "$line" ]; then
				# shellcheck disable=SC2086 # its fields
				set -- $line
				rec "ulat $pair $OP $LAT_SIZE $2 $1"
			else
				rec "uerr $pair $OP-lat $LAT_SIZE $(why /tmp/dp-pt.cli)"
				sed 's/^/dp-bench:     /' /tmp/dp-pt.cli | tail -n 8
			fi
		done
	done
	say "perftest ran for $(($(date +%s) - t0))s"
fi
umemcpy

# ---- the table and the plot data ----------------------------------------------------

# tabulate table|bw|lat: the table, or the plot data of the kernel cells
tabulate() {
	awk -v mode="$1" -v kpairs="$KPAIRS" -v upairs="$UPAIRS" -v sizes="$SIZES" \
		-v lat="$LAT_SIZE" -v ms="$DP_MS" -v ptsecs="$PT_SECS" -v reps="$REPS" \
		"$BENCH_AWK"'
function label(p) {
	if (p == "softhca0:softhca1") return "softhca"
	if (p == "rxe0:rxe1") return "rxe"
	if (p == "rxe0:rxe0") return "rxe0 loopback"
	return p
}
# a label without blanks, for the plot data header
function tok(p,    l) {
	l = label(p)
	gsub(/ /, "_", l)
	return l
}
# the faster of two memcpy runs: "COPIES NS"
function best(old, n, ns,    v) {
	if (old == "")
		return n " " ns
	split(old, v, " ")
	return n / ns > v[1] / v[2] ? n " " ns : old
}
function cell(v) { return sprintf(" %8s", v) }
# error text of a kernel (k) or user (u) cell, also remembered for the
# notes below the table
function bad(kind, p, op, size,    r) {
	r = err[kind, p, op, size]
	if (r == "")
		r = err[kind, p, "-", "-"]
	if (r == "")
		return "n/a"
	gsub(/_/, " ", r)
	# the kernel'"'"'s errors are noted as they are read
	if (kind == "u" && !((kind, p, op, size, r) in noted)) {
		noted[kind, p, op, size, r] = 1
		notes[++nnotes] = sprintf("%s %s %s %s: %s", kind == "k" ? "kernel" : "user",
					  label(p), op, size == "-" ? "" : szname(size), r)
	}
	return r == "skipped" ? "skipped" : "error"
}
# a kernel throughput cell: GB/s and Mmsg/s of the median rate, the
# spread; k indexes kr[] (messages per second of every run)
function kbwcell(k, size, what,    m) {
	m = median(kr[k])
	if (noisy(kr[k]))
		nlist[++nn] = sprintf("%s: %s Mmsg/s (runs in order, Mmsg/s: %s)", what,
				      f(m / 1e6), runs(scaled(kr[k], 1e-6)))
	return cell(f(size * m / 1e9) (k in kfail ? "!" : "")) cell(f(m / 1e6)) \
		sprintf(" %3.0f%%%s", spread(kr[k]), noisy(kr[k]) ? "*" : " ")
}
# the list times x
function scaled(list, x,    v, n, i, l) {
	n = split(list, v, " ")
	l = ""
	for (i = 1; i <= n; i++)
		l = l " " v[i] * x
	return l
}
# the list of 1/x of each
function inv(list, x,    v, n, i, l) {
	n = split(list, v, " ")
	l = ""
	for (i = 1; i <= n; i++)
		if (v[i] > 0)
			l = l " " x / v[i]
	return l
}
$1 == "kbw" || $1 == "kmemcpy" {
	# kbw PAIR OP SIZE REP MSGS NS, kmemcpy - - SIZE REP COPIES NS
	if ($7 <= 0)
		next
	k = ($1 == "kmemcpy" ? "memcpy" : $2) SUBSEP ($1 == "kmemcpy" ? "-" : $3) SUBSEP $4
	kr[k] = kr[k] " " $6 * 1e9 / $7
	next
}
$1 == "klat" && $6 > 0 {
	# klat PAIR OP SIZE REP ROUNDTRIPS NS: one way, microseconds
	k = $2 SUBSEP $3 SUBSEP $4
	kl[k] = kl[k] " " $7 / $6 / 2 / 1000
	next
}
$1 == "umemcpy" { umem[$2] = best(umem[$2], $3, $4); next }
$1 == "ubw" { ubw[$2, $3, $4] = $5 " " $6; next }
$1 == "ulat" { ulat[$2, $3, $4] = $5; next }
$1 == "kerr" {
	# kerr PAIR OP SIZE REP REASON (OP of latency: SEND-lat)
	op = $3
	if (op ~ /-lat$/) {
		sub(/-lat$/, "", op)
		op = "lat-" op
	}
	if ($6 != "skipped") {
		kfail[$2, op, $4] = 1
		r = $6
		gsub(/_/, " ", r)
		notes[++nnotes] = sprintf("kernel %s%s: %s", label($2),
					  $3 == "-" ? "" : " " $3 " " szname($4) " run " $5, r)
	}
	if (err["k", $2, op, $4] == "" || err["k", $2, op, $4] == "skipped")
		err["k", $2, op, $4] = $6
	next
}
$1 == "uerr" {
	op = $3; sub(/-lat$/, "", op)
	err["u", $2, ($3 ~ /-lat$/ ? "lat-" op : op), $4] = $5
	next
}
END {
	nk = split(kpairs, kp, " ")
	nu = split(upairs, up, " ")
	ns = split(sizes, sz, " ")
	nops = split("WRITE READ SEND", ops, " ")

	if (mode == "bw") {
		h = "# size(bytes)"
		for (i = 1; i <= nk; i++)
			for (o = 1; o <= nops; o++)
				h = h " " tok(kp[i]) "-" ops[o] "(median,min,max)"
		print h " memcpy(median,min,max)"
		for (s = 1; s <= ns; s++) {
			l = sz[s]
			for (i = 1; i <= nk; i++)
				for (o = 1; o <= nops; o++)
					l = l " " mmm(kr[kp[i], ops[o], sz[s]], sz[s] / 1e9)
			print l " " mmm(kr["memcpy", "-", sz[s]], sz[s] / 1e9)
		}
		exit
	}
	if (mode == "lat") {
		h = "# size(bytes)"
		for (i = 1; i <= nk; i++)
			h = h " " tok(kp[i]) "-SEND(median,min,max) " tok(kp[i]) "-WRITE(median,min,max)"
		print h " memcpy(median,min,max)"
		for (s = 1; s <= ns; s++) {
			l = sz[s]
			for (i = 1; i <= nk; i++)
				l = l " " mmm(kl[kp[i], "SEND", sz[s]], 1) " " mmm(kl[kp[i], "WRITE", sz[s]], 1)
			print l " " mmm(inv(kr["memcpy", "-", sz[s]], 1e6), 1)
		}
		exit
	}

	print "RC, one QP on A connected to one on B; A streams WRITEs and SENDs to B and READs from B."
	print "softhca: softhca0 (eth0) -> softhca1 (eth1), delivered in memory by the driver; rxe: rxe0 (eth0)"
	print "-> rxe1 (eth1), RoCE v2 packets through both virtio NICs. memcpy: one thread copying the same"
	print "sizes between two buffers, the ceiling of a device that moves every byte once with the CPU."
	print "GB/s = 10^9 bytes/s, Mmsg/s = 10^6 messages/s; latency: half a ping-pong round trip."
	print ""
	print "Kernel verbs: shca_dp_bench.ko, ib_post_send/ib_poll_cq, every WR signaled, up to 32 WRs and"
	print "4 MiB in flight, destination bytes checked after each cell. The median of " reps " runs of " ms " ms,"
	print "each on fresh QPs after an untimed warm-up, the pairs in ABBA order (memcpy first in every"
	print "repetition); % = (max - min) / median of the runs, * = noisy (over '"$BENCH_NOISY_PCT"' %, its runs are"
	print "listed below), ! = a run failed (listed below)."
	l = sprintf("%-7s %-7s", "", "")
	for (i = 1; i <= nk; i++)
		l = l sprintf(" %23s", label(kp[i]))
	print l sprintf(" %23s", "memcpy (kernel)")
	l = sprintf("%-7s %-7s", "op", "size")
	for (i = 1; i <= nk + 1; i++)
		l = l cell("GB/s") cell("Mmsg/s") sprintf(" %5s", "%")
	print l
	for (o = 1; o <= nops; o++) {
		for (s = 1; s <= ns; s++) {
			l = sprintf("%-7s %-7s", ops[o], szname(sz[s]))
			for (i = 1; i <= nk; i++) {
				k = kp[i] SUBSEP ops[o] SUBSEP sz[s]
				if (k in kr) {
					l = l kbwcell(k, sz[s], label(kp[i]) " " ops[o] " " szname(sz[s]))
				} else {
					b = bad("k", kp[i], ops[o], sz[s])
					l = l cell(b) cell("") sprintf(" %5s", "")
				}
			}
			k = "memcpy" SUBSEP "-" SUBSEP sz[s]
			if (o == 1 && k in kr)
				l = l kbwcell(k, sz[s], "memcpy " szname(sz[s]))
			else if (k in kr)
				l = l cell(f(sz[s] * median(kr[k]) / 1e9)) cell(f(median(kr[k]) / 1e6)) \
					sprintf(" %3.0f%%%s", spread(kr[k]), noisy(kr[k]) ? "*" : " ")
			else
				l = l cell("n/a") cell("n/a")
			print l
		}
	}
	print ""
	print "Kernel latency, one way (half a ping-pong round trip; WRITE: the peer polls the last byte),"
	print "microseconds, median of " reps " runs; memcpy: the time of one copy of that size."
	l = sprintf("%-7s %-7s", "", "")
	for (i = 1; i <= nk; i++)
		l = l sprintf(" %16s", label(kp[i]))
	print l sprintf(" %16s", "memcpy (kernel)")
	l = sprintf("%-7s %-7s", "op", "size")
	for (i = 1; i <= nk + 1; i++)
		l = l sprintf(" %10s %5s", "us", "%")
	print l
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "SEND" : "WRITE"
		for (s = 1; s <= ns; s++) {
			l = sprintf("%-7s %-7s", op, szname(sz[s]))
			for (i = 1; i <= nk; i++) {
				k = kp[i] SUBSEP op SUBSEP sz[s]
				if (k in kl) {
					if (noisy(kl[k]))
						nlist[++nn] = sprintf("%s %s latency %s: %s us (runs in order: %s)",
								      label(kp[i]), op, szname(sz[s]),
								      f(median(kl[k])), runs(kl[k]))
					l = l " " mcell(kl[k], 10, (kp[i] SUBSEP "lat-" op SUBSEP sz[s]) in kfail ? "!" : "")
				} else {
					l = l sprintf(" %16s", bad("k", kp[i], "lat-" op, sz[s]))
				}
			}
			k = "memcpy" SUBSEP "-" SUBSEP sz[s]
			if (k in kr)
				l = l " " mcell(inv(kr[k], 1e6), 10)
			else
				l = l sprintf(" %16s", "n/a")
			print l
		}
	}
	print ""
	print "Userspace: perftest over libibverbs (--use_old_post_send, TCP handshake on 127.0.0.1), client on A,"
	print "server on B; one run of " ptsecs " s per cell (-D " ptsecs " -f 0). In the latency rows both processes busy-poll;"
	print "without KVM, QEMU runs the two virtual CPUs in turns and switches at the guest timer tick"
	print "(4 ms), which dominates those two rows; the kernel rows show the latency of the devices."
	print "0 = not one message completed within the cell. memcpy (glibc): the better of two runs."
	l = sprintf("%-7s %-7s", "", "")
	for (i = 1; i <= nu; i++)
		l = l sprintf(" %17s", label(up[i]))
	print l sprintf(" %17s", "memcpy (glibc)")
	l = sprintf("%-7s %-7s", "op", "size")
	for (i = 1; i <= nu + 1; i++)
		l = l cell("GB/s") cell("Mmsg/s")
	print l
	for (o = 1; o <= nops; o++) {
		for (s = 1; s <= ns; s++) {
			l = sprintf("%-7s %-7s", ops[o], szname(sz[s]))
			for (i = 1; i <= nu; i++) {
				if ((up[i], ops[o], sz[s]) in ubw) {
					split(ubw[up[i], ops[o], sz[s]], v, " ")
					l = l cell(f(v[1] / 8)) cell(f(v[2]))
				} else {
					b = bad("u", up[i], ops[o], sz[s])
					l = l cell(b) cell(b)
				}
			}
			if (sz[s] in umem) {
				split(umem[sz[s]], v, " ")
				l = l cell(f(sz[s] * v[1] / v[2])) cell(f(v[1] * 1000 / v[2]))
			} else {
				l = l cell("n/a") cell("n/a")
			}
			print l
		}
	}
	for (o = 1; o <= 2; o++) {
		op = o == 1 ? "SEND" : "WRITE"
		l = sprintf("%-7s %-7s", op, "latency")
		for (i = 1; i <= nu; i++) {
			if ((up[i], op, lat) in ulat)
				l = l sprintf(" %14.1f us", ulat[up[i], op, lat])
			else
				l = l sprintf(" %17s", bad("u", up[i], "lat-" op, lat))
		}
		print l
	}
	footer(nlist, nn, notes, nnotes)
}' "$REC"
}

tabulate table | bench_block DP-BENCH-TABLE dp-table
tabulate bw | bench_block DP-BENCH-BW dp-bw
tabulate lat | bench_block DP-BENCH-LAT dp-lat
exit 0
