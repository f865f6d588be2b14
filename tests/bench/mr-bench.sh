#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Benchmarks in the VM guest (tests/bench/run.sh). Creates softhca0 on
# eth0, softhca1 on eth1, and rdma_rxe's rxe0 on eth0 and rxe1 on eth1 (a
# netdev carries an rxe and a softhca device at once). First the MR
# registration benchmark: softhca0 and rxe0 measured side by side by
# shca_mr_bench.ko through ib_core, BENCH_REPS runs of every cell, the
# devices in ABBA order. Its records ("mr-rec: ...") come as they are,
# then the table between "=== MR-BENCH-TABLE" and "=== MR-BENCH-TABLE-END"
# (every line prefixed with "mr-table: ": per MR type and device the
# median operations per second, the spread of the runs, noisy cells
# marked; the ratio of the first device to the second) and the plot data
# between "=== MR-BENCH-DATA" and "=== MR-BENCH-DATA-END" ("mr-data: ").
# Then the userspace benchmark on the same two devices: shca_reg_bench
# times ibv_reg_mr + ibv_dereg_mr through libibverbs and the providers
# for 4 KiB .. 1 GiB regions, and next to them the floor, ib_umem_get +
# ib_umem_release of the same buffer timed in the kernel by
# shca_umem_bench.ko, and on the devices with on-demand paging the same
# pairs with IBV_ACCESS_ON_DEMAND (odp) and with the whole region
# faulted in by ibv_advise_mr in between (odp-touch); records
# "reg-rec: ", table "=== REG-BENCH-TABLE" ("reg-table: ": the pinned
# columns, then the ODP ones, n/a for a device without ODP), plot data
# "=== REG-BENCH-DATA" ("reg-data: "). Then
# the data-path benchmark,
# dp-bench.sh (its own table, see there), on all four devices, and the
# T10-DIF engine benchmark, pi-bench.sh (its own table, see there), on
# softhca0 and softhca1, and the FRWR cycle benchmark, frwr-bench.sh (its
# own table, see there), softhca0 -> softhca1 vs rxe0 -> rxe1, and the
# userspace ring benchmark, rings-bench.sh (perftest with the provider's
# mapped rings vs a system call per verb vs rxe; its own table, see
# there). Then unloads everything and, unless BENCH_ULP=0,
# runs the ULP benchmark ulp-bench.sh (NVMe over Fabrics with fio, rdma_cm
# with cmtime; its own devices and table, see there) and, unless
# BENCH_NVMEPI=0, nvme-pi-bench.sh (nvme-rdma with T10-PI vs without over
# softhca0, and rxe0; its own devices and table too). BENCH_ONLY, a
# comma-separated list of some of mr, reg, dp, pi, frwr, rings, ulp and
# nvmepi (default all of them), runs only those parts (rxe0 and rxe1 are
# created only for mr, reg, dp, frwr and rings). Exit status 0 only if the tables were printed
# and the cleanups succeeded.
#
# Environment: BENCH_ITERS (default 2000), BENCH_PAGES (default 16),
# BENCH_REPS (runs of every userspace cell, default 3), BENCH_MR_REPS
# (runs of every MR cell, default BENCH_REPS; run.sh gives 15),
# BENCH_REG_SECS (seconds per userspace cell, default 0.5),
# BENCH_REG_MIB (the userspace benchmark's largest region in MiB, 1..1024,
# default 1024: the sizes up to it),
# BENCH_REG_TIMEOUT (the userspace benchmark's bound in seconds, default
# 240), SOFTHCA_KO (default /softhca.ko), BENCH_KO (default
# /shca_mr_bench.ko), UMEM_KO (default /shca_umem_bench.ko), BENCH_LIB
# (default /tests/bench-lib.sh, or bench-lib.sh next to this script),
# DP_BENCH (default /tests/dp-bench.sh), BENCH_DP_TIMEOUT (its bound in
# seconds, default 420) and the BENCH_DP_* knobs it reads,
# PI_BENCH (default /tests/pi-bench.sh), BENCH_PI_TIMEOUT (its bound in
# seconds, default 420) and the BENCH_PI_* knobs it reads,
# FRWR_BENCH (default /tests/frwr-bench.sh), BENCH_FRWR_TIMEOUT (its
# bound in seconds, default 420) and the BENCH_FRWR_* knobs it reads,
# RINGS_BENCH (default /tests/rings-bench.sh), BENCH_RINGS_TIMEOUT (its
# bound in seconds, default 900) and the BENCH_RINGS_* knobs it reads,
# BENCH_ULP (0: no ULP benchmark), BENCH_ULP_TIMEOUT (its bound in
# seconds, default 900), ULP_BENCH (default /tests/ulp-bench.sh) and the
# BENCH_ULP_* knobs it reads, BENCH_NVMEPI (0: no PI vs no PI NVMe
# benchmark), BENCH_NVMEPI_TIMEOUT (its bound in seconds, default 420),
# NVMEPI_BENCH (default /tests/nvme-pi-bench.sh) and the BENCH_NVMEPI_*
# knobs it reads.
# POSIX sh; every command is bounded by a timeout.

KO=${SOFTHCA_KO:-/softhca.ko}
BENCH_KO=${BENCH_KO:-/shca_mr_bench.ko}
UMEM_KO=${UMEM_KO:-/shca_umem_bench.ko}
DP_BENCH=${DP_BENCH:-/tests/dp-bench.sh}
DP_TIMEOUT=${BENCH_DP_TIMEOUT:-420}
PI_BENCH=${PI_BENCH:-/tests/pi-bench.sh}
PI_TIMEOUT=${BENCH_PI_TIMEOUT:-420}
FRWR_BENCH=${FRWR_BENCH:-/tests/frwr-bench.sh}
FRWR_TIMEOUT=${BENCH_FRWR_TIMEOUT:-420}
RINGS_BENCH=${RINGS_BENCH:-/tests/rings-bench.sh}
RINGS_TIMEOUT=${BENCH_RINGS_TIMEOUT:-900}
ONLY=$(echo "${BENCH_ONLY:-mr,reg,dp,pi,frwr,rings,ulp,nvmepi}" | tr ',' ' ')
ULP_BENCH=${ULP_BENCH:-/tests/ulp-bench.sh}
ULP=${BENCH_ULP:-1}
ULP_TIMEOUT=${BENCH_ULP_TIMEOUT:-900}
NVMEPI_BENCH=${NVMEPI_BENCH:-/tests/nvme-pi-bench.sh}
NVMEPI=${BENCH_NVMEPI:-1}
NVMEPI_TIMEOUT=${BENCH_NVMEPI_TIMEOUT:-420}
ITERS=${BENCH_ITERS:-2000}
PAGES=${BENCH_PAGES:-16}
REPS=${BENCH_REPS:-3}
MR_REPS=${BENCH_MR_REPS:-$REPS}
REG_SECS=${BENCH_REG_SECS:-0.5}
REG_MIB=${BENCH_REG_MIB:-1024}
REG_TIMEOUT=${BENCH_REG_TIMEOUT:-240}
IB=/sys/class/infiniband
PREFIX='shca_mr_bench: '
# the devices of the MR and userspace tables; the ratio is the first over
# the second
MR_DEVS=softhca0,rxe0
MR_REC=/tmp/mr-bench.rec
REG_REC=/tmp/reg-bench.rec
TAG=mr-bench
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"

# want PART: PART (mr, reg, dp, pi, frwr, rings, ulp or nvmepi) is to run
want() {
	case " $ONLY " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# the RDMA devices in sysfs, space separated
ibdevs() {
	for _d in "$IB"/*; do
		[ -e "$_d" ] && printf '%s ' "${_d##*/}"
	done
}

cleanup() {
	_ok=0
	for _m in shca_mr_bench shca_umem_bench shca_dp_bench shca_pi_bench shca_frwr_bench; do
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

bench_traps

case $ITERS$PAGES$REPS$MR_REPS$REG_TIMEOUT$DP_TIMEOUT in
'' | *[!0-9]*) fail "BENCH_ITERS='$ITERS', BENCH_PAGES='$PAGES', BENCH_REPS='$REPS', BENCH_MR_REPS='$MR_REPS', BENCH_REG_TIMEOUT and BENCH_DP_TIMEOUT must be whole numbers" ;;
esac

# The kernel's random number generator: until it is initialised every
# get_random_u8/u32() takes an irq-off slow path, which QEMU without
# virtio-rng and a CPU without RDRAND leave in place for minutes (it was
# half the cost of an MR registration in the first tables). A blocking
# read of /dev/random makes the kernel gather jitter entropy and
# initialise it, as a real machine is seconds after boot.
if ! dmesg | grep -q 'crng init done'; then
	t0=$(date +%s)
	timeout 300 dd if=/dev/random of=/dev/null bs=16 count=1 2>/dev/null
	if dmesg | grep -q 'crng init done'; then
		say "crng: initialised by a blocking read of /dev/random in $(($(date +%s) - t0))s"
	else
		say "crng: NOT initialised: get_random_*() take their slow path"
	fi
fi

# Drivers and devices.
if ! loaded softhca; then
	if [ -r "$KO" ]; then
		run 60 insmod "$KO" || fail "insmod $KO failed"
	else
		run 60 modprobe softhca || fail "modprobe softhca failed"
	fi
fi
RXE=0
if want mr || want reg || want dp || want frwr || want rings; then
	RXE=1
fi
if want mr || want reg || want dp || want pi || want frwr || want rings; then
	bench_links $RXE
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

# ---- the MR and userspace tables -------------------------------------------------

# mr_tabulate table|data: the MR table, or one row per MR type for gnuplot
mr_tabulate() {
	awk -v mode="$1" -v devs="$MR_DEVS" "$BENCH_AWK"'
BEGIN {
	nt = split("mem_reg sg_gaps integrity user umem core dma dm", T, " ")
	desc["mem_reg"] = "MEM_REG alloc+map+dereg"
	desc["sg_gaps"] = "SG_GAPS alloc+map+dereg"
	desc["integrity"] = "INTEGRITY alloc+map_pi+dereg"
	desc["user"] = "USER reg+dereg"
	desc["umem"] = "  its floor: ib_umem_get+release"
	desc["core"] = "  floor + ib_core MR tracking"
	desc["dma"] = "DMA get_dma_mr+dereg"
	desc["dm"] = "DM reg_dm_mr+dereg"
	split("MEM_REG,SG_GAPS,INTEGRITY,USER,USER floor,USER core,DMA,DM", S, ",")
	for (t = 1; t <= nt; t++)
		short[T[t]] = S[t]
	nd = split(devs, D, ",")
}
# the value of NAME=VALUE in the configuration line
function conf(name,    i, n, w) {
	n = split(config, w, " ")
	for (i = 1; i <= n; i++)
		if (index(w[i], name "=") == 1)
			return substr(w[i], length(name) + 2)
	return "?"
}
$1 == "#" { config = $0; next }
$1 == "ops" && $6 > 0 {
	# ops DEV TYPE REP OPERATIONS NS: operations per second
	k = $2 SUBSEP $3
	v[k] = v[k] " " $5 * 1e9 / $6
	next
}
$1 == "err" {
	# err DEV TYPE REP ERRNO: the device lacks the type (EOPNOTSUPP,
	# EINVAL at the first try), or a failure
	k = $2 SUBSEP $3
	if ($3 == "-")
		deverr[$2] = $5
	else if (($5 == -95 || $5 == -22) && !(k in v))
		na[k] = 1
	else
		failed[k] = 1
	if ($3 == "-" || k in failed)
		notes[++nnotes] = sprintf("%s %s%s: errno %d", $2, $3 == "-" ? "setup" : desc[$3],
					  $3 == "-" ? "" : " run " $4, -$5)
	next
}
function cell(d, t,    k, what) {
	k = d SUBSEP t
	if (k in v) {
		if (noisy(v[k])) {
			what = desc[t]
			sub(/^ +/, "", what)
			nlist[++nn] = sprintf("%s %s: %s ops/s (runs in order: %s)", d,
					      what, f(median(v[k])), runs(v[k]))
		}
		return " " mcell(v[k], 10, k in failed ? "!" : "")
	}
	if (d in deverr)
		return sprintf(" %16s", deverr[d] == -19 ? "no device" : "error")
	if (k in na)
		return sprintf(" %16s", "n/a")
	return sprintf(" %16s", k in failed ? "error" : "-")
}
END {
	if (mode == "data") {
		h = "# operation"
		for (i = 1; i <= nd; i++)
			h = h " " D[i] "(median,min,max)"
		print h
		for (t = 1; t <= nt; t++) {
			l = "\"" short[T[t]] "\""
			for (i = 1; i <= nd; i++)
				l = l " " mmm(v[D[i] SUBSEP T[t]], 1)
			print l
		}
		exit
	}
	print "MR operations per second through ib_core (shca_mr_bench.ko), " conf("pages") " x " conf("page_size") "-byte pages per MR;"
	print "every cell measured " conf("reps") " times, " conf("iters") " operations each after " conf("warm") " untimed ones on the same"
	print "device, the devices taking turns in ABBA order (A B, B A, A B, ...). ops/s: the median of the runs;"
	print "% = (max - min) / median of the runs, * = noisy (over " '"$BENCH_NOISY_PCT"' " %, its runs are listed below),"
	print "! = a run failed (listed below). n/a: the device lacks the MR type. USER'"'"'s floor: ib_umem_get +"
	print "ib_umem_release of the same user memory, the pinning and mapping every driver'"'"'s user MR pays;"
	print "floor + ib_core MR tracking: that with what ib_reg_user_mr and ib_dereg_mr do around the driver"
	print "(PD use count, the restrack entry, whose xarray allocates and frees nodes under RCU), in the"
	print "same order as USER: USER minus it is the driver'"'"'s own share, below the table."
	print ""
	l = sprintf("%-33s", "")
	for (i = 1; i <= nd; i++)
		l = l sprintf(" %16s", D[i])
	print l
	l = sprintf("%-33s", "operation")
	for (i = 1; i <= nd; i++)
		l = l sprintf(" %10s %5s", "ops/s", "%")
	if (nd > 1)
		l = l sprintf(" %14s", D[1] "/" D[2])
	print l
	for (t = 1; t <= nt; t++) {
		l = sprintf("%-33s", desc[T[t]])
		for (i = 1; i <= nd; i++)
			l = l cell(D[i], T[t])
		k1 = D[1] SUBSEP T[t]
		k2 = D[2] SUBSEP T[t]
		if (nd > 1 && k1 in v && k2 in v && median(v[k2]) > 0)
			l = l sprintf(" %13.2fx", median(v[k1]) / median(v[k2]))
		print l
	}
	# the driver'"'"'s own share of USER: its time per operation minus core'"'"'s
	l = ""
	for (i = 1; i <= nd; i++) {
		ku = D[i] SUBSEP "user"
		kc = D[i] SUBSEP "core"
		if (!(ku in v) || !(kc in v) || median(v[ku]) <= 0 || median(v[kc]) <= 0)
			continue
		own[i] = 1e6 / median(v[ku]) - 1e6 / median(v[kc])
		l = l sprintf("%s%s %.2f us (of %.2f)", l == "" ? "" : ", ", D[i], own[i],
			      1e6 / median(v[ku]))
	}
	if (l != "") {
		if (nd > 1 && (1 in own) && (2 in own) && own[1] > 0)
			l = l sprintf("; %s/%s %.2fx", D[2], D[1], own[2] / own[1])
		print ""
		print "USER reg+dereg, the driver'"'"'s own time per operation (1/USER - 1/core): " l
	}
	footer(nlist, nn, notes, nnotes)
}' "$MR_REC"
}

# reg_tabulate table|data: the userspace table, or one row per size for
# gnuplot
reg_tabulate() {
	awk -v mode="$1" -v devs="$MR_DEVS" "$BENCH_AWK"'
BEGIN {
	what["reg"] = "ibv_reg_mr on"
	what["floor"] = "floor on"
	what["cmd"] = "ibv_alloc_pd + ibv_dealloc_pd on"
	what["odp"] = "ODP ibv_reg_mr on"
	what["odp-touch"] = "ODP ibv_reg_mr + ibv_advise_mr on"
}
function conf(name,    i, n, w) {
	n = split(config, w, " ")
	for (i = 1; i <= n; i++)
		if (index(w[i], name "=") == 1)
			return substr(w[i], length(name) + 2)
	return "?"
}
# the column of a record: the device for reg, "floor", else KIND:DEV
function col(kind, dev) {
	if (kind == "floor")
		return "floor"
	if (kind == "reg")
		return dev
	return kind ":" dev
}
$1 == "#" { config = $0; next }
($1 == "reg" || $1 == "floor" || $1 == "cmd" || $1 == "odp" || $1 == "odp-touch") && $5 > 0 {
	# reg|floor|cmd|odp|odp-touch DEV SIZE REP PAIRS NS: microseconds per pair
	k = col($1, $2) SUBSEP $3
	us[k] = us[k] " " $6 / $5 / 1000
	have[col($1, $2)] = 1
	if ($1 == "floor")
		floordev = $2
	if ($1 == "odp" || $1 == "odp-touch")
		odp = 1
	if (!($3 in seen)) {
		seen[$3] = 1
		Z[++nz] = $3
	}
	next
}
$1 == "err" {
	# err reg|floor|cmd|odp|odp-touch DEV SIZE|- REP|- REASON
	c = col($2, $3)
	k = c SUBSEP $4
	if ($2 == "odp" || $2 == "odp-touch")
		odp = 1
	if ($4 == "-")
		colerr[c] = $6
	else
		failed[k] = 1
	if ($6 == "no-ODP")
		next	# n/a: said above the table
	notes[++nnotes] = sprintf("%s %s%s: %s", what[$2], $3,
				  $4 == "-" ? "" : " " szname($4) " run " $5, $6)
	next
}
function cell(c, z,    k) {
	k = c SUBSEP z
	if (k in us) {
		if (noisy(us[k]))
			nlist[++nn] = sprintf("%s %s: %s us (runs in order: %s)",
					      c, szname(z), f(median(us[k])), runs(us[k]))
		return " " mcell(us[k], 10, k in failed ? "!" : "")
	}
	if (c in colerr)
		return sprintf(" %16s", "n/a")
	return sprintf(" %16s", k in failed ? "error" : "-")
}
# the ratio of the medians of two columns at size z
function ratio(a, b, z) {
	if (!((a SUBSEP z) in us) || !((b SUBSEP z) in us) || median(us[b SUBSEP z]) <= 0)
		return sprintf(" %15s", "")
	return sprintf(" %14.2fx", median(us[a SUBSEP z]) / median(us[b SUBSEP z]))
}
# the ratio of the median of device d to the least a pair can cost on it: the
# floor plus its two commands (the cmd column), at size z
function cmdratio(d, z,    b) {
	if (!((d SUBSEP z) in us) || !(("floor" SUBSEP z) in us) || !(("cmd:" d SUBSEP z) in us))
		return sprintf(" %15s", "")
	b = median(us["floor" SUBSEP z]) + median(us["cmd:" d SUBSEP z])
	return b > 0 ? sprintf(" %14.2fx", median(us[d SUBSEP z]) / b) : sprintf(" %15s", "")
}
END {
	nd = split(devs, D, ",")
	D[nd + 1] = "floor"
	if (floordev == "")
		floordev = conf("floor")
	# the ODP columns that have numbers (data), the devices with some (ratios)
	ne = no = 0
	for (t = 1; t <= 2; t++)
		for (i = 1; i <= nd; i++)
			if (((t == 1 ? "odp:" : "odp-touch:") D[i]) in have)
				E[++ne] = (t == 1 ? "odp:" : "odp-touch:") D[i]
	for (i = 1; i <= nd; i++)
		if (("odp:" D[i]) in have || ("odp-touch:" D[i]) in have)
			O[++no] = D[i]
	if (mode == "data") {
		h = "# size(bytes)"
		for (i = 1; i <= nd; i++)
			h = h " " D[i] "(median,min,max)"
		h = h " floor(median,min,max)"
		for (i = 1; i <= ne; i++)
			h = h " " E[i] "(median,min,max)"
		print h
		for (z = 1; z <= nz; z++) {
			l = Z[z]
			for (i = 1; i <= nd + 1; i++)
				l = l " " mmm(us[D[i] SUBSEP Z[z]], 1)
			for (i = 1; i <= ne; i++)
				l = l " " mmm(us[E[i] SUBSEP Z[z]], 1)
			print l
		}
		exit
	}
	print "ibv_reg_mr + ibv_dereg_mr from userspace (shca_reg_bench through libibverbs), pre-faulted anonymous memory,"
	print "access LOCAL_WRITE|REMOTE_READ|REMOTE_WRITE; floor: ib_umem_get + ib_umem_release alone of the same buffer"
	print "with the same access, timed in the kernel in the same process (shca_umem_bench.ko, on " floordev "): the pinning"
	print "and mapping under every user MR. us/pair: the median of " conf("reps") " runs of about " conf("secs") " s (at least 3 pairs"
	print "each, after an untimed warm-up pair), the columns in ABBA order (A B floor, floor B A, ...); % = (max - min) /"
	print "median of the runs, * = noisy (over " '"$BENCH_NOISY_PCT"' " %, its runs are listed below), ! = a run failed. The ratios"
	print "are of times: below 1, the first device is faster."
	if (("cmd:" D[1]) in have) {
		print "cmd: ibv_alloc_pd + ibv_dealloc_pd pairs on the device, in the same turns: two uverbs commands that"
		print "do next to nothing in any driver, the system calls and uverbs object handling every ibv_reg_mr +"
		print "ibv_dereg_mr pays on top of the pinning; DEV/(floor+cmd) is the device over the least a pair can cost on it (fl+cmd)."
	}
	if (odp) {
		print "Below, on-demand paging (ODP) of the same buffer, taking its turns with the columns above (A B floor"
		print "A-odp B-odp A-odp-touch B-odp-touch, then reversed): odp = ibv_reg_mr with IBV_ACCESS_ON_DEMAND too +"
		print "ibv_dereg_mr, nothing pinned or faulted in; odp-touch = the same with ibv_advise_mr(PREFETCH_WRITE,"
		print "FLAG_FLUSH) of the whole region in between, every page faulted in: the first-touch cost, to set against"
		print "the pinned ibv_reg_mr above (ratios of times per device: odp/reg, odp-touch/reg). n/a: the device has"
		print "no on-demand paging (its odp_caps)."
	}
	# the devices with a cmd column
	nc = 0
	for (i = 1; i <= nd; i++)
		if (("cmd:" D[i]) in have)
			C[++nc] = D[i]
	print ""
	l = sprintf("%-8s", "")
	for (i = 1; i <= nd + 1; i++)
		l = l sprintf(" %16s", D[i])
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %16s", "cmd " C[i])
	print l
	l = sprintf("%-8s", "size")
	for (i = 1; i <= nd + 1 + nc; i++)
		l = l sprintf(" %10s %5s", "us/pair", "%")
	if (nd > 1)
		l = l sprintf(" %15s", D[1] "/" D[2])
	l = l sprintf(" %15s", D[1] "/floor")
	if (nd > 1)
		l = l sprintf(" %15s", D[2] "/floor")
	for (i = 1; i <= nc; i++)
		l = l sprintf(" %15s", C[i] "/fl+cmd")
	print l
	for (z = 1; z <= nz; z++) {
		l = sprintf("%-8s", szname(Z[z]))
		for (i = 1; i <= nd + 1; i++)
			l = l cell(D[i], Z[z])
		for (i = 1; i <= nc; i++)
			l = l cell("cmd:" C[i], Z[z])
		if (nd > 1)
			l = l ratio(D[1], D[2], Z[z])
		l = l ratio(D[1], "floor", Z[z])
		if (nd > 1)
			l = l ratio(D[2], "floor", Z[z])
		for (i = 1; i <= nc; i++)
			l = l cmdratio(C[i], Z[z])
		print l
	}
	if (odp) {
		print ""
		l = sprintf("%-8s", "")
		for (i = 1; i <= nd; i++)
			l = l sprintf(" %16s %16s", "odp", "odp-touch")
		for (i = 1; i <= no; i++)
			l = l sprintf(" %15s %15s", "odp/reg", "odp-touch/reg")
		print l
		l = sprintf("%-8s", "")
		for (i = 1; i <= nd; i++)
			l = l sprintf(" %16s %16s", D[i], D[i])
		for (i = 1; i <= no; i++)
			l = l sprintf(" %15s %15s", O[i], O[i])
		print l
		l = sprintf("%-8s", "size")
		for (i = 1; i <= nd; i++)
			l = l sprintf(" %10s %5s %10s %5s", "us/pair", "%", "us/pair", "%")
		print l
		for (z = 1; z <= nz; z++) {
			l = sprintf("%-8s", szname(Z[z]))
			for (i = 1; i <= nd; i++)
				l = l cell("odp:" D[i], Z[z]) cell("odp-touch:" D[i], Z[z])
			for (i = 1; i <= no; i++)
				l = l ratio("odp:" O[i], O[i], Z[z]) ratio("odp-touch:" O[i], O[i], Z[z])
			print l
		}
	}
	footer(nlist, nn, notes, nnotes)
}' "$REG_REC"
}

# The MR benchmark: all the work happens in its module init, i.e. in
# insmod. The guest's /init bounds this whole script (tests/bench/run.sh
# --test-timeout); a signal would not stop a module init early.
if want mr; then
	[ -r "$BENCH_KO" ] || fail "$BENCH_KO is missing"
	before=$(dmesg | wc -l)
	t0=$(date +%s)
	run 3600 insmod "$BENCH_KO" devices="$MR_DEVS" iters="$ITERS" \
		pages="$PAGES" reps="$MR_REPS" ||
		fail "insmod $BENCH_KO failed"
	say "benchmark ran for $(($(date +%s) - t0))s"
	dmesg | tail -n +"$((before + 1))" | sed -n "s/.*$PREFIX//p" >/tmp/mr-kernel.out
	: >"$MR_REC"
	while read -r kind rest; do
		case $kind in
		ops | err | \#) echo "$kind $rest" >>"$MR_REC" ;;
		esac
		echo "mr-rec: $kind $rest"
	done </tmp/mr-kernel.out
	grep -q '^done' /tmp/mr-kernel.out ||
		fail "no '${PREFIX}done' line in the kernel log"
	run 30 rmmod shca_mr_bench || fail "rmmod shca_mr_bench failed"
	mr_tabulate table | bench_block MR-BENCH-TABLE mr-table
	mr_tabulate data | bench_block MR-BENCH-DATA mr-data
fi

# The userspace benchmark, same devices, same boot, and its floor.
if want reg; then
	command -v shca_reg_bench >/dev/null ||
		fail "shca_reg_bench is missing (tests/bench/run.sh builds it)"
	floor=
	if [ -r "$UMEM_KO" ] && run 30 insmod "$UMEM_KO"; then
		# devtmpfs makes the node; else make it from sysfs
		n=0
		while [ ! -c /dev/shca_umem_bench ] && [ $n -lt 20 ]; do
			sleep 0.1
			n=$((n + 1))
		done
		if [ ! -c /dev/shca_umem_bench ] && [ -r /sys/class/misc/shca_umem_bench/dev ]; then
			mm=$(cat /sys/class/misc/shca_umem_bench/dev)
			mknod /dev/shca_umem_bench c "${mm%:*}" "${mm#*:}"
		fi
		floor=1
	else
		say "warning: no $UMEM_KO: no floor column"
	fi
	# shellcheck disable=SC2046 # one argument per device
	set -- -t "$REG_SECS" -r "$REPS" -m "$REG_MIB" $(echo "$MR_DEVS" | tr ',' ' ')
	say "\$ shca_reg_bench $*"
	t0=$(date +%s)
	timeout -k 5 "$REG_TIMEOUT" shca_reg_bench "$@" >/tmp/reg-bench.out 2>&1
	rc=$?
	say "userspace benchmark ran for $(($(date +%s) - t0))s"
	: >"$REG_REC"
	while read -r kind rest; do
		case $kind in
		reg | cmd | odp | odp-touch | floor | err | \#) echo "$kind $rest" >>"$REG_REC" ;;
		esac
		echo "reg-rec: $kind $rest"
	done </tmp/reg-bench.out
	[ -z "$floor" ] || run 30 rmmod shca_umem_bench || fail "rmmod shca_umem_bench failed"
	reg_tabulate table | bench_block REG-BENCH-TABLE reg-table
	reg_tabulate data | bench_block REG-BENCH-DATA reg-data
	[ $rc -eq 0 ] || fail "shca_reg_bench: exit status $rc"
fi

# The data-path benchmark, same devices, same boot.
if want dp; then
	[ -r "$DP_BENCH" ] || fail "$DP_BENCH is missing"
	say "\$ sh $DP_BENCH"
	t0=$(date +%s)
	timeout -k 5 "$DP_TIMEOUT" sh "$DP_BENCH"
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

# Userspace rings vs system calls vs rxe (perftest), same devices, same boot.
if want rings; then
	[ -r "$RINGS_BENCH" ] || fail "$RINGS_BENCH is missing"
	say "\$ sh $RINGS_BENCH"
	t0=$(date +%s)
	timeout -k 5 "$RINGS_TIMEOUT" sh "$RINGS_BENCH"
	rc=$?
	say "ring benchmark ran for $(($(date +%s) - t0))s"
	[ $rc -eq 0 ] || fail "$RINGS_BENCH: exit status $rc"
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
