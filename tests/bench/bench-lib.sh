# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# What the benchmark scripts in the VM guest share for their tables and
# plot data, and the helpers every guest script uses (say, rec, run,
# loaded, fail, bench_traps); sourced by mr-bench.sh, dp-bench.sh,
# pi-bench.sh, frwr-bench.sh, rings-bench.sh, ulp-bench.sh,
# nvme-pi-bench.sh (through ulp-lib.sh) and profile-guest.sh (tests/bench/run.sh and profile.sh put
# it next to them as /tests/bench-lib.sh). A script sets TAG, then finds it as
#   BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
#   [ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
#   . "$BENCH_LIB"
#
# The method every table follows: each cell is measured reps times (the
# devices, or columns, in ABBA order: A B, B A, A B, ...; each run after
# a warm-up on its device), the table shows the median of the runs and
# their spread, (max - min) / median in %, and marks a cell whose spread
# is over BENCH_NOISY_PCT (10) % as noisy with "*", listing its runs in
# the order they ran below the table; the plot data give median, minimum
# and maximum.
#
# POSIX sh and busybox awk.

BENCH_NOISY_PCT=10

# ---- what every guest script uses; TAG (set by the script) names it ------

say() { echo "$TAG: $*"; }

# rec LINE: a record for the tables, kept in $REC and shown on the console
rec() {
	echo "$*" >>"$REC"
	echo "${TAG%-bench}-rec: $*"
}

# run SECS CMD...: print and run a bounded command, output indented
run() {
	_t=$1
	shift
	say "\$ $*"
	_out=$(timeout -k 5 "$_t" "$@" 2>&1)
	_rc=$?
	[ -z "$_out" ] || printf '%s\n' "$_out" | sed "s/^/$TAG:     /"
	[ $_rc -eq 0 ] || say "    (exit status $_rc)"
	return $_rc
}

loaded() { grep -q "^$1 " /proc/modules; }

fail() {
	say "FAIL: $*"
	exit 1
}

# bench_links RXE: softhca0 on eth0 and softhca1 on eth1 (the module is
# loaded), with RXE=1 also rxe0 and rxe1 on the same NICs (rdma_rxe is
# loaded here); every failure ends the script
bench_links() {
	[ "$1" = 0 ] || run 60 modprobe rdma_rxe || fail "modprobe rdma_rxe failed"
	for _nic in eth0 eth1; do
		[ -e "/sys/class/net/$_nic" ] || fail "the guest has no $_nic"
		ip link set "$_nic" up
	done
	run 30 rdma link add softhca0 type softhca netdev eth0 || fail "rdma link add softhca0 failed"
	run 30 rdma link add softhca1 type softhca netdev eth1 || fail "rdma link add softhca1 failed"
	[ "$1" = 0 ] && return 0
	run 30 rdma link add rxe0 type rxe netdev eth0 || fail "rdma link add rxe0 failed"
	run 30 rdma link add rxe1 type rxe netdev eth1 || fail "rdma link add rxe1 failed"
}

# bench_net_hub: eth0 (10.0.2.15) and eth1 (10.0.3.15) on the QEMU hub
# of tests/bench/run.sh reach each other: a packet with a local source
# address is accepted (accept_local, no reverse-path filter) and each
# side's ARP entry for the other is made now. Returns 1 if they do not
# answer (no hub).
bench_net_hub() {
	for _c in all eth0 eth1; do
		echo 1 >"/proc/sys/net/ipv4/conf/$_c/accept_local" 2>/dev/null
		echo 0 >"/proc/sys/net/ipv4/conf/$_c/rp_filter" 2>/dev/null
	done
	timeout 10 arping -q -c 1 -w 3 -I eth0 10.0.3.15 &&
		timeout 10 arping -q -c 1 -w 3 -I eth1 10.0.2.15
}

# bench_pick_gid DEV: an IPv4-mapped RoCE v2 GID index of DEV's port 1,
# else its first RoCE v2 one
bench_pick_gid() {
	_first=
	for _f in "/sys/class/infiniband/$1"/ports/1/gid_attrs/types/*; do
		_i=${_f##*/}
		_t=$(cat "$_f" 2>/dev/null) || continue
		[ "$_t" = "RoCE v2" ] || continue
		_g=$(cat "/sys/class/infiniband/$1/ports/1/gids/$_i" 2>/dev/null) || continue
		case $_g in
		0000:0000:0000:0000:0000:0000:0000:0000) continue ;;
		0000:0000:0000:0000:0000:ffff:*)
			echo "$_i"
			return 0
			;;
		esac
		[ -n "$_first" ] || _first=$_i
	done
	[ -n "$_first" ] && echo "$_first"
}

# bench_listening PID PORT: wait until TCP PORT listens (or PID died)
bench_listening() {
	_hex=$(printf '%04X' "$2")
	_n=0
	while [ $_n -lt 200 ]; do
		grep -q -E "^ *[0-9]+: [0-9A-F]+:$_hex [0-9A-F]+:0000 0A " \
			/proc/net/tcp /proc/net/tcp6 2>/dev/null && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.05
		_n=$((_n + 1))
	done
	return 1
}

# bench_perftest OUT PORT TOOL A B GIDA GIDB ARGS...: a perftest run in
# this guest, client on device A, server on B, their handshake over TCP
# PORT on 127.0.0.1, each bounded to 30 s; the client's output (or the
# server's, if only it failed) in OUT. Returns the client's status.
bench_perftest() {
	_out=$1 _port=$2 _tool=$3 _a=$4 _b=$5 _ga=$6 _gb=$7
	shift 7
	timeout -k 5 30 "$_tool" -d "$_b" -x "$_gb" -p "$_port" "$@" \
		>"$_out.srv" 2>&1 &
	_spid=$!
	if ! bench_listening "$_spid" "$_port"; then
		wait "$_spid"
		cp "$_out.srv" "$_out"
		return 1
	fi
	timeout -k 5 30 "$_tool" -d "$_a" -x "$_ga" -p "$_port" "$@" 127.0.0.1 \
		>"$_out" 2>&1
	_rc=$?
	wait "$_spid"
	_src=$?
	case $_rc in
	124 | 137) echo "timed out after 30s" >>"$_out" ;;
	esac
	if [ $_rc -eq 0 ] && [ $_src -ne 0 ]; then
		cp "$_out.srv" "$_out"
		_rc=$_src
	fi
	return $_rc
}

# bench_ptdata bw|lat FILE: from the first data line after perftest's
# "#bytes" header in FILE, "ITERATIONS AVG_Gb/s Mmsg/s" (bw) or
# "ITERATIONS AVG_us" (lat; the column under "t_avg", whose position
# depends on the mode)
bench_ptdata() {
	awk -v kind="$1" '
		/#bytes/ {
			h = 1
			for (i = 1; i <= NF; i++)
				if ($i ~ /^t_avg/)
					col = i
			next
		}
		h && $1 ~ /^[0-9]+$/ {
			if (kind == "bw" && NF >= 5)
				print $2, $4, $5
			else if (kind == "lat" && col)
				print $2, $col
			exit
		}' "$2"
}

# bench_why FILE: a short reason from perftest's output in FILE
bench_why() {
	_w=$(grep -i -o -m1 -E "(couldn't|unable|fail|error|not supported|invalid|skipped|timed out).*" "$1" |
		sed 's/^[ -]*//; s/[^A-Za-z0-9 ._:()-]//g' | cut -c1-70 | tr ' ' '_')
	echo "${_w:-no-result}"
}

# bench_traps: from now on the script's cleanup() runs when it exits (a
# failed cleanup fails the script), and INT/TERM (a timeout) end it
bench_traps() {
	trap bench_on_exit EXIT
	trap 'say "interrupted (timeout?)"; exit 124' INT TERM
}
# shellcheck disable=SC2317 # the EXIT trap calls it
bench_on_exit() {
	_status=$?
	trap - EXIT
	cleanup || { say "cleanup failed"; _status=1; }
	exit "$_status"
}

# bench_block NAME PREFIX: standard input between the lines "=== NAME" and
# "=== NAME-END", every line prefixed with "PREFIX: " (the host's
# tests/bench/run.sh cuts the blocks out of the guest's console)
bench_block() {
	echo "=== $1"
	sed "s/^/$2: /"
	echo "=== $1-END"
}

# awk functions, to put in front of an awk program ("$BENCH_AWK"'...'):
#   f(x)              three significant digits, no exponent down to 0.0001
#   szname(s)         4096 -> "4 KiB"
#   sorted(list, v)   the n numbers of the space-separated list into v[1..n],
#                     ascending; returns n
#   median(list)      the median of the list's numbers
#   spread(list)      (max - min) / median in %, 0 for fewer than 2 numbers
#   noisy(list)       1 if more than one number and spread over the limit
#   runs(list)        the numbers in the order they were added, f() each
#   mcell(list, w, mark)  a table cell: the median (followed by mark, if
#                     given: "!" for a cell with a failed run) in w
#                     columns, the spread in 5 (" 12%"), then "*" if noisy,
#                     else " "; w + 6 columns
#   mmm(list, scale)  plot data: "MEDIAN MIN MAX" times scale, or
#                     "NaN NaN NaN" for an empty list
#   footer(nl, nn, notes, nnotes)  after a table: its noisy cells
#                     (nl[1..nn], "noisy: ...") and errors
#                     (notes[1..nnotes], "error: ..."), each list after an
#                     empty line
# shellcheck disable=SC2034 # used by the scripts that source this file
BENCH_AWK='
function f(x) {
	x += 0
	if (x < 0) return "-" f(-x)
	if (x >= 100) return sprintf("%.0f", x)
	if (x >= 10) return sprintf("%.1f", x)
	if (x >= 1) return sprintf("%.2f", x)
	if (x >= 0.1) return sprintf("%.3f", x)
	if (x >= 0.01) return sprintf("%.4f", x)
	if (x >= 0.001) return sprintf("%.5f", x)
	if (x >= 0.0001) return sprintf("%.6f", x)
	if (x == 0) return "0"
	return sprintf("%.1e", x)
}
function szname(s) {
	if (s >= 1073741824) return (s / 1073741824) " GiB"
	if (s >= 1048576) return (s / 1048576) " MiB"
	if (s >= 1024) return (s / 1024) " KiB"
	return s " B"
}
function sorted(list, v,    n, i, j, t) {
	n = split(list, v, " ")
	for (i = 2; i <= n; i++)
		for (j = i; j > 1 && v[j - 1] + 0 > v[j] + 0; j--) {
			t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
		}
	return n
}
function median(list,    v, n) {
	n = sorted(list, v)
	if (n == 0)
		return 0
	if (n % 2)
		return v[(n + 1) / 2] + 0
	return (v[n / 2] + v[n / 2 + 1]) / 2
}
function spread(list,    v, n, m) {
	n = sorted(list, v)
	m = median(list)
	if (n < 2 || m <= 0)
		return 0
	return 100 * (v[n] - v[1]) / m
}
function noisy(list,    v) {
	return sorted(list, v) > 1 && spread(list) > '"$BENCH_NOISY_PCT"'
}
function runs(list,    v, n, i, s) {
	n = split(list, v, " ")
	s = ""
	for (i = 1; i <= n; i++)
		s = s (i > 1 ? " " : "") f(v[i])
	return s
}
function mcell(list, w, mark,    l) {
	l = sprintf("%" w "s", f(median(list)) mark)
	return l sprintf(" %3.0f%%%s", spread(list), noisy(list) ? "*" : " ")
}
function footer(nl, nn, notes, nnotes,    i) {
	if (nn) {
		print ""
		for (i = 1; i <= nn; i++)
			print "noisy: " nl[i]
	}
	if (nnotes) {
		print ""
		for (i = 1; i <= nnotes; i++)
			print "error: " notes[i]
	}
}
function mmm(list, scale,    v, n) {
	n = sorted(list, v)
	if (n == 0)
		return "NaN NaN NaN"
	return sprintf("%.6g %.6g %.6g", median(list) * scale, v[1] * scale,
		       v[n] * scale)
}
'
