#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The wire benchmark (issue 14): softhca <-> softhca against rxe <-> rxe
# across the link of the two-guest wire tier (scripts/wire.sh: guests A,
# 10.0.9.1, and B, 10.0.9.2, on one virtual Ethernet link, a socketpair
# between the two QEMUs). tests/bench/run.sh --only wire boots both guests
# once with scripts/wire.sh --run on this script, which runs in both at
# the same time (a wire test: tests/wire/lib.sh, its control channel
# wire_send/wire_wait and the client/server steps of wire_pp).
#
# softhca and rdma_rxe both want UDP port 4791, so only one is loaded at a
# time: each repetition has two phases, one per driver, in ABBA order
# (softhca rxe, rxe softhca, ...). A phase loads the driver in both
# guests, creates softhca0 or rxe0 on eth0, runs an untimed warm-up
# (ib_write_bw, 4 KiB) and then every cell, deletes the device and
# unloads the driver (softhca releases the port with its last device,
# rdma_rxe with its module). B serves, A runs the clients:
#
#   ib_write_bw, ib_read_bw, ib_send_bw at 64 B, 4 KiB, 64 KiB, 1 MiB
#     with -x at the RoCE v2 GID of the guest's IPv4 address (wire_gid)
#     and -F --report_gbits; below 1 MiB in duration mode (-D SECS+2*MARGIN
#     -f MARGIN: MARGIN seconds of warm-up in the same process, SECS
#     measured), at 1 MiB with a count (-n ITERS_1M: perftest 4.5's
#     duration mode reports 0 for 1 MiB SENDs)
#   ib_write_lat, ib_send_lat at 64 B, -n LAT_ITERS: typical and fastest
#     one-way latency
#   nvme: B serves a memory-backed null_blk through nvmet-rdma at its
#     address, A connects nvme-rdma to it and writes, then reads, MIB
#     MiB with dd (bs=1M, O_DIRECT, one request at a time), timed from
#     /proc/uptime; a kernel log line about an NVMe timeout, reset or I/O
#     error during the cell makes it an error
#
# Guest A prints one record per run ("wire-rec: ...", see the tabulation
# below); the host cuts them out of A's console and tabulates them with
# this script (WIRE_BENCH_RETAB): a guest killed half-way still leaves a
# table of what it measured.
#
# Environment (scripts/wire.sh --env): BENCH_REPS (repetitions, default
# 3), BENCH_WIRE_DRIVERS (default "softhca,rxe", the ABBA pair),
# BENCH_WIRE_TOOLS (default
# "write_bw,read_bw,send_bw,write_lat,send_lat,nvme"), BENCH_WIRE_SIZES
# (bandwidth sizes, default "64,4096,65536,1048576"), BENCH_WIRE_SECS
# (measured seconds of a duration-mode run, default 1),
# BENCH_WIRE_MARGIN (its warm-up, default 1), BENCH_WIRE_ITERS_1M
# (messages of a 1 MiB run, default 20), BENCH_WIRE_LAT_ITERS (default
# 200), BENCH_WIRE_BIG_SECS (bound of a run with a count, default 40),
# BENCH_WIRE_NVME_MIB (default 64).
#
# Tabulation on the host: WIRE_BENCH_RETAB=RECORDS sh wire-bench.sh
# table|data, with the same BENCH_* as the run, prints the table or the
# plot data (tests/bench/wire-bench.gp) of RECORDS (the records without
# "wire-rec: "), through tests/bench/bench-lib.sh.
#
# POSIX sh; every program is bounded by a timeout.
# vm-test-timeout: 1800

REPS=${BENCH_REPS:-3}
DRIVERS=$(echo "${BENCH_WIRE_DRIVERS:-softhca,rxe}" | tr ',' ' ')
TOOLS=$(echo "${BENCH_WIRE_TOOLS:-write_bw,read_bw,send_bw,write_lat,send_lat,nvme}" | tr ',' ' ')
SIZES=$(echo "${BENCH_WIRE_SIZES:-64,4096,65536,1048576}" | tr ',' ' ')
SECS=${BENCH_WIRE_SECS:-1}
MARGIN=${BENCH_WIRE_MARGIN:-1}
ITERS_1M=${BENCH_WIRE_ITERS_1M:-20}
LAT_ITERS=${BENCH_WIRE_LAT_ITERS:-200}
BIG_SECS=${BENCH_WIRE_BIG_SECS:-40}
NVME_MIB=${BENCH_WIRE_NVME_MIB:-64}
LAT_SIZE=64

case $REPS$SECS$MARGIN$ITERS_1M$LAT_ITERS$BIG_SECS$NVME_MIB in
'' | *[!0-9]*)
	echo "wire-bench: BENCH_REPS and BENCH_WIRE_* must be whole numbers" >&2
	exit 1
	;;
esac

# ---- the table and the plot data (on the host) ---------------------------------

if [ -n "${WIRE_BENCH_RETAB:-}" ]; then
	BENCH_LIB=${BENCH_LIB:-$(dirname "$0")/bench-lib.sh}
	TAG=wire-bench
	REC=$WIRE_BENCH_RETAB
	# shellcheck source=tests/bench/bench-lib.sh
	. "$BENCH_LIB"
	awk -v mode="${1:-table}" -v drivers="$DRIVERS" -v tools="$TOOLS" \
		-v sizes="$SIZES" -v reps="$REPS" -v secs="$SECS" -v margin="$MARGIN" \
		-v iters1m="$ITERS_1M" -v liters="$LAT_ITERS" -v bigsecs="$BIG_SECS" \
		-v mib="$NVME_MIB" -v latsize="$LAT_SIZE" "$BENCH_AWK"'
BEGIN {
	nd = split(drivers, D, " ")
	nz = split(sizes, Z, " ")
	nbt = 0
	nlt = 0
	nvme = 0
	nt = split(tools, T, " ")
	for (i = 1; i <= nt; i++) {
		if (T[i] ~ /_bw$/)
			BT[++nbt] = T[i]
		else if (T[i] ~ /_lat$/)
			LT[++nlt] = T[i]
		else if (T[i] == "nvme")
			nvme = 1
	}
	label["softhca"] = "softhca<->softhca"
	label["rxe"] = "rxe<->rxe"
	desc["write_bw"] = "WRITE"
	desc["read_bw"] = "READ"
	desc["send_bw"] = "SEND"
	desc["write_lat"] = "WRITE"
	desc["send_lat"] = "SEND"
	desc["write"] = "write"
	desc["read"] = "read"
}
function num(x) { return x ~ /^[0-9]*\.?[0-9]+$/ && x + 0 > 0 }
$1 == "bw" && num($6) {
	# bw DRIVER TOOL SIZE REP GB/S MMSG/S MSGS SECS
	k = $2 SUBSEP $3 SUBSEP $4
	v[k] = v[k] " " $6 * 125
	if (num($7))
		rate[k] = rate[k] " " $7
	next
}
$1 == "lat" && num($6) {
	# lat DRIVER TOOL SIZE REP TYPICAL_US MIN_US ITERS SECS
	k = $2 SUBSEP $3 SUBSEP $4
	v[k] = v[k] " " $6
	if (num($7))
		vmin[k] = vmin[k] " " $7
	next
}
$1 == "nvme" && num($6) {
	# nvme DRIVER write|read BS REP MB/S MIB SECS
	k = $2 SUBSEP $3 SUBSEP $4
	v[k] = v[k] " " $6
	next
}
$1 == "err" {
	# err DRIVER TOOL SIZE REP REASON
	k = $2 SUBSEP $3 SUBSEP $4
	if (err[k] == "")
		err[k] = $6
	failed[k] = 1
	r = $6
	gsub(/_/, " ", r)
	notes[++nnotes] = sprintf("%s%s: %s", $2 == "-" ? "all" : label[$2] " phase",
				  $3 == "-" ? " run " $5 : " " $3 " " szname($4) " run " $5, r)
	next
}
# cell DRIVER TOOL SIZE UNIT W: median, spread, noisy mark
function cell(d, t, z, unit, w,    k) {
	k = d SUBSEP t SUBSEP z
	if (!(k in v))
		return sprintf(" %" w "s %5s", (k in err) || ((d SUBSEP "-" SUBSEP "-") in err) ? "error" : "-", "")
	if (noisy(v[k]))
		nlist[++nn] = sprintf("%s %s %s: %s %s (runs in order: %s)", label[d],
				      t, szname(z), f(median(v[k])), unit, runs(v[k]))
	return " " mcell(v[k], w, (k in failed) ? "!" : "")
}
# ratio TOOL SIZE A: first driver over second (A: the array of values)
function ratio(t, z,    a, b) {
	if (nd < 2)
		return ""
	a = D[1] SUBSEP t SUBSEP z
	b = D[2] SUBSEP t SUBSEP z
	if (!(a in v) || !(b in v) || median(v[b]) <= 0)
		return sprintf(" %9s", "-")
	return sprintf(" %8sx", f(median(v[a]) / median(v[b])))
}
function header(unit,    l, i) {
	l = sprintf("%-6s %-7s", "", "")
	for (i = 1; i <= nd; i++)
		l = l sprintf(" %17s", label[D[i]])
	if (nd > 1)
		l = l sprintf(" %9s", D[1] " /")
	print l
	l = sprintf("%-6s %-7s", "op", "size")
	for (i = 1; i <= nd; i++)
		l = l sprintf(" %11s %5s", unit, "%")
	if (nd > 1)
		l = l sprintf(" %9s", D[2])
	print l
}
END {
	if (mode == "data") {
		h = "# size(bytes)"
		for (t = 1; t <= nbt; t++)
			for (i = 1; i <= nd; i++)
				h = h " " D[i] "-" BT[t] "(median,min,max)"
		print h
		for (z = 1; z <= nz; z++) {
			l = Z[z]
			for (t = 1; t <= nbt; t++)
				for (i = 1; i <= nd; i++)
					l = l " " mmm(v[D[i], BT[t], Z[z]], 1)
			print l
		}
		exit
	}
	print "Guests A (10.0.9.1, clients) and B (10.0.9.2, servers), one virtual Ethernet link (MTU 1500,"
	print "RoCE MTU 1024), the same driver on both ends; one driver loaded at a time (both want UDP"
	print "port 4791), the drivers in ABBA order per repetition, each phase after a warm-up. Every cell"
	print reps " runs: median, % = (max - min) / median, * = noisy (over '"$BENCH_NOISY_PCT"' %, its runs below),"
	print "! = a run failed (listed below); the last column: " (nd > 1 ? D[1] " / " D[2] " of the medians." : "-")
	if (nbt) {
		print ""
		print "Throughput, MB/s (10^6 bytes/s, perftest'"'"'s BW average of the client, -F --report_gbits x 125):"
		print "below 1 MiB -D " secs + 2 * margin " -f " margin " (" secs " s measured), 1 MiB -n " iters1m " (bounded by " bigsecs " s)."
		header("MB/s")
		for (t = 1; t <= nbt; t++)
			for (z = 1; z <= nz; z++) {
				l = sprintf("%-6s %-7s", desc[BT[t]], szname(Z[z]))
				for (i = 1; i <= nd; i++)
					l = l cell(D[i], BT[t], Z[z], "MB/s", 11)
				print l ratio(BT[t], Z[z])
			}
		print ""
		print "Message rate, 10^3 messages/s (perftest'"'"'s MsgRate), medians of the same runs:"
		l = sprintf("%-6s %-7s", "op", "size")
		for (i = 1; i <= nd; i++)
			l = l sprintf(" %17s", label[D[i]])
		print l
		for (t = 1; t <= nbt; t++)
			for (z = 1; z <= nz; z++) {
				l = sprintf("%-6s %-7s", desc[BT[t]], szname(Z[z]))
				for (i = 1; i <= nd; i++) {
					k = D[i] SUBSEP BT[t] SUBSEP Z[z]
					l = l sprintf(" %17s", k in rate ? f(median(rate[k]) * 1000) : "-")
				}
				print l
			}
	}
	if (nlt) {
		print ""
		print "Latency, one way in microseconds (perftest'"'"'s t_typical, the median of " liters " iterations; both"
		print "processes busy-poll), and in brackets the median of the runs'"'"' fastest iteration (t_min):"
		header("us")
		for (t = 1; t <= nlt; t++) {
			l = sprintf("%-6s %-7s", desc[LT[t]], szname(latsize))
			for (i = 1; i <= nd; i++)
				l = l cell(D[i], LT[t], latsize, "us", 11)
			print l ratio(LT[t], latsize)
			l = sprintf("%-6s %-7s", "", "t_min")
			for (i = 1; i <= nd; i++) {
				k = D[i] SUBSEP LT[t] SUBSEP latsize
				l = l sprintf(" %17s", k in vmin ? "(" f(median(vmin[k])) ")" : "-")
			}
			print l
		}
	}
	if (nvme) {
		print ""
		print "NVMe over Fabrics, MB/s (10^6 bytes/s): nvme-rdma in A -> nvmet-rdma in B (a memory-backed"
		print "null_blk), dd bs=1M O_DIRECT of " mib " MiB, one request at a time, sequential write then read:"
		header("MB/s")
		for (t = 1; t <= 2; t++) {
			o = t == 1 ? "write" : "read"
			l = sprintf("%-6s %-7s", o, szname(1048576))
			for (i = 1; i <= nd; i++)
				l = l cell(D[i], o, 1048576, "MB/s", 11)
			print l ratio(o, 1048576)
		}
	}
	footer(nlist, nn, notes, nnotes)
}' "$REC"
	exit 0
fi

# ---- the measurement (in both guests) ---------------------------------------

# a bench, not a test: every step runs even after one hung
export WIRE_ALL_STEPS=1
# shellcheck disable=SC1091
. /tests/lib.sh

# wb_rec LINE: a record (guest A measures, its records make the table)
wb_rec() {
	[ "$WIRE_ROLE" = A ] || return 0
	echo "wire-rec: $*"
}

# use_driver softhca|rxe: the helpers of lib.sh work on this driver now
# shellcheck disable=SC2034 # lib.sh's variables
use_driver() {
	WIRE_DRIVER=$1
	PEER_DRIVER=$1
	WIRE_DEV=${1}0
	PEER_DEV=${1}0
	case $1 in
	rxe) DRV_MOD=rdma_rxe DRV_TYPE=rxe ;;
	*) DRV_MOD=softhca DRV_TYPE=softhca ;;
	esac
}

# shellcheck disable=SC2317 # called through wait_for
_wb_up() { port_is "$WIRE_DEV" state "4: ACTIVE" && wire_gid 4 >/dev/null; }

# phase_up: driver, device on eth0, port ACTIVE, the IPv4 RoCE v2 GID
phase_up() {
	if [ "$DRV_TYPE" = rxe ]; then
		run modprobe rdma_rxe || return 1
	else
		run insmod "$KO" || return 1
	fi
	link_add "$WIRE_DEV" "$WIRE_NETDEV" || return 1
	if ! wait_for 15 _wb_up; then
		info "$WIRE_DEV: port $(port_attr "$WIRE_DEV" state), no RoCE v2 GID of $WIRE_IP"
		return 1
	fi
	G4=$(wire_gid 4)
	info "$WIRE_DEV: RoCE v2 GID of $WIRE_IP at index $G4"
}

# phase_down: delete every device, unload the driver
phase_down() {
	for _l in $(rdma link show 2>/dev/null | awk '/^link /{ split($2, a, "/"); print a[1] }' | sort -u); do
		run rdma link delete "$_l"
	done
	if drv_loaded; then
		run rmmod "$DRV_MOD" || bad "rmmod $DRV_MOD failed"
	fi
}

PORT=18700
# perftest TAG SECS ARGS...: one run of a perftest program, B serving, A
# connecting (wire_pp); in A the client's output is run_out's
perftest() {
	_pt=$1 _ps=$2
	shift 2
	PORT=$((PORT + 1))
	wire_pp "$_pt" "$_ps" "tcp:$PORT" "$@" -d "$WIRE_DEV" -x "$G4" -p "$PORT"
}

# ptdata bw|lat: from the client's first data line after perftest's
# "#bytes" header, "GB/S MMSG/S ITERATIONS" (bw, with --report_gbits) or
# "TYPICAL_US MIN_US ITERATIONS" (lat)
ptdata() {
	run_out | awk -v kind="$1" '
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
				print $4, $5, $2
			else if (kind == "lat" && col && mcol)
				print $col, $mcol, $2
			exit
		}'
}

# why: a short reason from the client's output
why() {
	# a work completion's status first ("Failed status 12": retry
	# exceeded), else the first complaint
	_w=$(run_out | grep -o -m1 -E 'Failed status [0-9]+' |
		sed 's/^Failed status \([0-9]*\)$/completion_status_\1/; s/_12$/_12_(retry_exceeded)/')
	[ -n "$_w" ] || _w=$(run_out | grep -i -o -m1 -E "(couldn't|unable|fail|error|not supported|invalid|timed out|killed).*" |
		sed 's/^[ -]*//; s/[^A-Za-z0-9 ._:()-]//g' | cut -c1-60 | tr ' ' '_')
	echo "${_w:-exit_status_$(run_rc)}"
}

# pcell TOOL SIZE REP: one perftest run of a cell, its record
pcell() {
	_tool=$1 _size=$2 _rep=$3
	case $_tool in
	*_bw)
		_kind=bw
		if [ "$_size" -ge 1048576 ]; then
			set -- "$BIG_SECS" "ib_$_tool" -s "$_size" -n "$ITERS_1M"
		else
			set -- $((SECS + 2 * MARGIN + 30)) "ib_$_tool" -s "$_size" \
				-D $((SECS + 2 * MARGIN)) -f "$MARGIN"
		fi
		set -- "$@" -F --report_gbits
		;;
	*)
		_kind=lat
		set -- "$BIG_SECS" "ib_$_tool" -s "$_size" -n "$LAT_ITERS" -F
		;;
	esac
	_t0=$(date +%s)
	perftest "r$_rep-$WIRE_DRIVER-$_tool-$_size" "$@"
	_prc=$?
	[ "$WIRE_ROLE" = A ] || return 0
	_secs=$(($(date +%s) - _t0))
	_line=
	[ "$_prc" != 0 ] || _line=$(ptdata "$_kind")
	if [ -z "$_line" ]; then
		wb_rec "err $WIRE_DRIVER $_tool $_size $_rep $(why)"
		return
	fi
	# shellcheck disable=SC2086 # its fields
	set -- $_line
	# perftest converts cycles with the CPU MHz it measures, which TCG
	# on a busy host sometimes gets wrong: inf, nan or 0
	if ! awk -v x="$1" 'BEGIN { exit !(x ~ /^[0-9]*\.?[0-9]+$/ && x + 0 > 0) }'; then
		wb_rec "err $WIRE_DRIVER $_tool $_size $_rep perftest_reported_$1"
		return
	fi
	# bw DRIVER TOOL SIZE REP GB/S MMSG/S MSGS SECS
	# lat DRIVER TOOL SIZE REP TYPICAL_US MIN_US ITERS SECS
	wb_rec "$_kind $WIRE_DRIVER $_tool $_size $_rep $1 $2 $3 $_secs"
}

# ---- NVMe over Fabrics ---------------------------------------------------------

# shellcheck disable=SC2034 # read by connect and nvmet_setup (tests/vm/lib.sh)
NQN=softhca-wire-bench TADDR=$PEER_IP
NVME_LOADED=0
# nvme_load: null_blk (B), nvmet-rdma (B), nvme-rdma (A), once
nvme_load() {
	[ "$NVME_LOADED" = 0 ] || return 0
	if wire_is_server; then
		run modprobe null_blk nr_devices=1 memory_backed=1 gb=1 || return 1
		run modprobe nvmet-rdma || return 1
		grep -q ' /sys/kernel/config ' /proc/mounts ||
			mount -t configfs none /sys/kernel/config
	else
		run modprobe nvme-rdma || return 1
	fi
	NVME_LOADED=1
}

# uptime_cs: centiseconds since boot
uptime_cs() {
	read -r _u _ </proc/uptime
	echo "${_u%.*}${_u#*.}" | sed 's/^0*//'
}

# nvme_dd write|read REP: one timed dd of NVME_MIB MiB through
# /dev/nvme0n1 (A), its record
nvme_dd() {
	klog_mark
	_c0=$(uptime_cs)
	if [ "$1" = write ]; then
		run_t $((NVME_MIB + 60)) dd if=/dev/zero of=/dev/nvme0n1 bs=1M count="$NVME_MIB" oflag=direct
	else
		run_t $((NVME_MIB + 60)) dd if=/dev/nvme0n1 of=/dev/null bs=1M count="$NVME_MIB" iflag=direct
	fi
	_drc=$(run_rc)
	_c1=$(uptime_cs)
	_kl=$(klog_new | grep -i -m1 -E 'nvme.*(timeout|timed out|reset|reconnect|I/O error|error recovery)|I/O error' |
		sed 's/[^A-Za-z0-9 ._:()-]//g' | cut -c1-60 | tr ' ' '_')
	if [ "$_drc" != 0 ]; then
		wb_rec "err $WIRE_DRIVER $1 1048576 $2 dd_exit_status_$_drc"
	elif [ -n "$_kl" ]; then
		wb_rec "err $WIRE_DRIVER $1 1048576 $2 kernel:_$_kl"
	elif [ $((_c1 - _c0)) -le 0 ]; then
		wb_rec "err $WIRE_DRIVER $1 1048576 $2 no_time_measured"
	else
		# nvme DRIVER write|read BS REP MB/S MIB SECS
		wb_rec "nvme $WIRE_DRIVER $1 1048576 $2 $(awk -v m="$NVME_MIB" -v c=$((_c1 - _c0)) \
			'BEGIN { printf "%.2f", m * 1.048576 / (c / 100) }') $NVME_MIB $(awk -v c=$((_c1 - _c0)) 'BEGIN { printf "%.2f", c / 100 }')"
	fi
}

# ncell REP: the NVMe cells of a phase: B sets up the target and says
# "TAG ready" (or "TAG fail"), A connects, warms up, writes, reads,
# disconnects and says "TAG done", B removes the target
ncell() {
	_nt=r$1-$WIRE_DRIVER-nvme
	if wire_is_server; then
		if nvme_load && nvmet_setup "$WIRE_IP" && wait_for 10 cm_listening 4420; then
			wire_send "$_nt ready"
		else
			bad "$_nt: no nvmet-rdma target on $WIRE_IP:4420"
			wire_send "$_nt fail"
		fi
		wire_wait $((4 * NVME_MIB + 180)) "$_nt done" >/dev/null ||
			bad "$_nt: no word of the host's end"
		nvmet_teardown
		wire_send "$_nt served"
		return
	fi
	_nok=0
	if ! nvme_load; then
		wb_rec "err $WIRE_DRIVER write 1048576 $1 modprobe_nvme-rdma_failed"
	elif ! wire_wait 60 "$_nt ready" >/dev/null; then
		wb_rec "err $WIRE_DRIVER write 1048576 $1 no_target"
	elif ! connect; then
		wb_rec "err $WIRE_DRIVER write 1048576 $1 connect_failed"
	else
		_nok=1
	fi
	if [ $_nok = 1 ]; then
		# warm-up
		run_t 60 dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=4 oflag=direct
		nvme_dd write "$1"
		nvme_dd read "$1"
		disconnect
	fi
	wire_send "$_nt done"
	wire_wait 60 "$_nt served" >/dev/null || info "$_nt: no word of the target's end"
}

# ---- the run ------------------------------------------------------------------------

# phase DRIVER REP: one driver in both guests, its cells
phase() {
	use_driver "$1"
	_ph=r$2-$1
	title "repetition $2: $1 <-> $1"
	_up=ok
	phase_up || _up=fail
	wire_send "$_ph-up $_up"
	_peer=$(wire_wait 120 "$_ph-up") || _peer=fail
	if [ "$_up" != ok ] || [ "$_peer" != ok ]; then
		bad "$_ph: the device is not up (here: $_up, in guest $WIRE_PEER: $_peer)"
		wb_rec "err $1 - - $2 device_setup_failed_(A:_${_up}_B:_$_peer)"
	else
		# warm-up, untimed
		perftest "$_ph-warm" 60 ib_write_bw -s 4096 -n 200 -F
		for _tool in $TOOLS; do
			case $_tool in
			*_bw)
				for _size in $SIZES; do
					pcell "$_tool" "$_size" "$2"
				done
				;;
			*_lat) pcell "$_tool" "$LAT_SIZE" "$2" ;;
			nvme) ncell "$2" ;;
			esac
		done
	fi
	phase_down
	wire_sync 120 "$_ph-down" || info "$_ph: guest $WIRE_PEER did not finish the phase"
}

command -v ib_write_bw >/dev/null || die "perftest is not in the guest"
START=$(date +%s)
fwd=$DRIVERS
bwd=
for d in $DRIVERS; do bwd="$d $bwd"; done
rep=1
while [ "$rep" -le "$REPS" ]; do
	if [ $((rep % 2)) = 1 ]; then order=$fwd; else order=$bwd; fi
	for d in $order; do
		phase "$d" "$rep"
	done
	rep=$((rep + 1))
done
info "the benchmark ran for $(($(date +%s) - START))s"
wb_rec "end $(($(date +%s) - START))"
exit 0
