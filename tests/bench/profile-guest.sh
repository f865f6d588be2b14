#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of tests/bench/profile.sh: runs benchmark cells of
# shca_mr_bench.ko / shca_dp_bench.ko under perf (cpu-clock sampling of
# all CPUs with kernel call chains) and prints, per cell, the folded call
# stacks of the samples taken while that cell ran, for the host to analyse.
#
# A cell (PROF_CELLS, comma separated):
#   mr:TYPE:DEV            TYPE mem_reg|sg_gaps|integrity|user|umem|core|dma|dm
#                          of shca_mr_bench.ko devices=DEV (softhca0, rxe0)
#   dp:OP:SIZE:A:B         OP write|read|send, SIZE 64|4096|65536|1048576
#                          of shca_dp_bench.ko pairs=A:B
# Cells of one run (mr on one device, dp on one pair) share one perf
# recording of the whole module run (reps=PROF_REPS repetitions of every
# cell); each cell is cut out of it by time, all its repetitions:
#   mr: the module's "ops DEV TYPE REP N NS" record follows its timed loop
#       at once: [printk time - NS, printk time]
#   dp: a kprobe and a kretprobe on shca_dp_bench:dp_stream() (the timed
#       calls are those with max = U64_MAX), or else the "bw" record's
#       printk time minus its duration (a little late: the record follows
#       the destruction of the cell's QPs)
# Before the profiled run the same run goes PROF_BASELINE times without
# the profiler, so the rate perf costs is visible. A second perf records
# the tracepoints of PROF_EVENTS (no call chains); each cell gets their
# counts in its windows, by kind (work function, timer function, IPI call
# site, woken task, switched tasks, softirq).
#
# Output, every line prefixed (the host collects them):
#   profile: ...                 progress
#   prof-meta: CELL KEY VALUE    rate, window, samples, events, notes
#   prof-fold: CELL STACK COUNT  folded stacks (comm;outermost;...;leaf),
#                                module frames as module`function
#   === PROF-CELL CELL / === PROF-CELL-END CELL around each cell
#
# Environment: PROF_CELLS, PROF_FREQ (Hz, default 1000), PROF_ITERS
# (default 50000), PROF_PAGES (default 16), PROF_MS (dp cell_ms, default
# 2000), PROF_DEPTH (default 32), PROF_REPS (the modules' reps=, default
# 3), PROF_BASELINE (runs without the profiler first, default 1), PROF_EVENTS (tracepoints counted in each cell, comma
# separated; empty: none), PROF_CRNG (default 1: initialise the kernel's
# CRNG first, see below), PROF_RUN_TIMEOUT (bound of one module run,
# default 900 s), PERF (default perf), SOFTHCA_KO (default /softhca.ko),
# MR_KO, DP_KO.
# POSIX sh; every command is bounded by a timeout.

CELLS=$(echo "${PROF_CELLS:-dp:write:64:softhca0:softhca1}" | tr ',' ' ')
FREQ=${PROF_FREQ:-1000}
ITERS=${PROF_ITERS:-50000}
PAGES=${PROF_PAGES:-16}
MS=${PROF_MS:-2000}
DEPTH=${PROF_DEPTH:-32}
BASE_REPS=${PROF_BASELINE:-1}
REPS=${PROF_REPS:-3}
EVENTS=${PROF_EVENTS-sched:sched_switch,sched:sched_wakeup,workqueue:workqueue_queue_work,workqueue:workqueue_execute_start,irq:softirq_entry,ipi:ipi_send_cpu,irq_vectors:call_function_single_entry,irq_vectors:local_timer_entry,timer:hrtimer_expire_entry}
PERF=${PERF:-perf}
KO=${SOFTHCA_KO:-/softhca.ko}
MR_KO=${MR_KO:-/shca_mr_bench.ko}
DP_KO=${DP_KO:-/shca_dp_bench.ko}
IB=/sys/class/infiniband
TR=/sys/kernel/tracing
W=/tmp/prof
# seconds a module run may take (the module's init cannot be interrupted)
RUN_TMO=${PROF_RUN_TIMEOUT:-900}

TAG=profile
BENCH_LIB=${BENCH_LIB:-/tests/bench-lib.sh}
[ -r "$BENCH_LIB" ] || BENCH_LIB=$(dirname "$0")/bench-lib.sh
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"

meta() { echo "prof-meta: $*"; }

cleanup() {
	_ok=0
	for _m in shca_mr_bench shca_dp_bench; do
		if loaded "$_m"; then run 30 rmmod "$_m" || _ok=1; fi
	done
	[ ! -w $TR/kprobe_events ] || echo >$TR/kprobe_events 2>/dev/null
	for _d in softhca0 softhca1 rxe0 rxe1; do
		if [ -e "$IB/$_d" ]; then run 30 rdma link delete "$_d" || _ok=1; fi
	done
	for _m in softhca rdma_rxe; do
		if loaded "$_m"; then run 30 rmmod "$_m" || _ok=1; fi
	done
	return $_ok
}
bench_traps

case $FREQ$ITERS$PAGES$MS$DEPTH$BASE_REPS$REPS in
'' | *[!0-9]*) fail "PROF_FREQ, PROF_ITERS, PROF_PAGES, PROF_MS, PROF_DEPTH, PROF_BASELINE and PROF_REPS must be whole numbers" ;;
esac
command -v "$PERF" >/dev/null || fail "$PERF is not in the guest"
say "$(timeout 10 "$PERF" --version), kernel $(uname -r), $(nproc) CPUs"
mkdir -p $W

# ---- devices --------------------------------------------------------------

need_rxe=0
for c in $CELLS; do
	case $c in *rxe*) need_rxe=1 ;; esac
done
if ! loaded softhca; then
	run 60 insmod "$KO" || fail "insmod $KO failed"
fi
bench_links $need_rxe
if [ $need_rxe = 1 ]; then
	# rxe0 -> rxe1 through the QEMU hub (as tests/bench/dp-bench.sh)
	for c in all eth0 eth1; do
		echo 1 >"/proc/sys/net/ipv4/conf/$c/accept_local" 2>/dev/null
		echo 0 >"/proc/sys/net/ipv4/conf/$c/rp_filter" 2>/dev/null
	done
	timeout 10 arping -q -c 1 -w 3 -I eth0 10.0.3.15
	timeout 10 arping -q -c 1 -w 3 -I eth1 10.0.2.15
fi
n=0
until [ -d $IB/softhca0 ] && [ -d $IB/softhca1 ] &&
	{ [ $need_rxe = 0 ] || { [ -d $IB/rxe0 ] && [ -d $IB/rxe1 ]; }; }; do
	[ $n -lt 100 ] || fail "the RDMA devices did not appear within 20s"
	sleep 0.2
	n=$((n + 1))
done

# ---- the kernel's random number generator -----------------------------------

# Until the CRNG is initialised, every get_random_u8/u32() takes the
# irq-off slow path (_get_random_bytes() under base_crng.lock) instead of
# its per-CPU batch. QEMU without virtio-rng and a CPU model without
# RDRAND leave it uninitialised for minutes; a blocking read of
# /dev/random makes the kernel generate jitter entropy and initialise it,
# as a real machine is a few seconds after boot (PROF_CRNG=0: leave it).
crng_ready() { dmesg | grep -q 'crng init done'; }
if crng_ready; then
	CRNG="ready at boot"
elif [ "${PROF_CRNG:-1}" = 1 ]; then
	t0=$(date +%s)
	timeout 300 dd if=/dev/random of=/dev/null bs=16 count=1 2>/dev/null
	if crng_ready; then
		CRNG="ready (initialised by a blocking read of /dev/random in $(($(date +%s) - t0))s)"
	else
		CRNG="NOT ready (a blocking read of /dev/random did not initialise it)"
	fi
else
	CRNG="NOT ready (PROF_CRNG=0): get_random_*() take their slow path"
fi
say "crng: $CRNG"

# ---- profiler set-up ---------------------------------------------------------

[ -d $TR/events ] || mount -t tracefs nodev $TR 2>/dev/null
echo 0 >/proc/sys/kernel/kptr_restrict 2>/dev/null
echo -1 >/proc/sys/kernel/perf_event_paranoid 2>/dev/null
# kprobe NAME DEFINITION: define shcaprof:NAME; false if the kernel refuses
kprobe() {
	[ -w $TR/kprobe_events ] || return 1
	[ -d "$TR/events/shcaprof/$1" ] && return 0
	echo "$2" >>$TR/kprobe_events 2>/dev/null
}
# The timed dp_stream() calls of shca_dp_bench (max = U64_MAX) as window
# markers; a probe on a module not loaded yet arms itself when it loads.
HAVE_DPS=0
# shellcheck disable=SC2016 # $retval is the kprobe syntax
kprobe dps 'p:shcaprof/dps shca_dp_bench:dp_stream op=%si:u32 size=%dx:u32 max=%cx:x64' &&
	kprobe dpr 'r:shcaprof/dpr shca_dp_bench:dp_stream ret=$retval:s32' && HAVE_DPS=1
say "markers: dp_stream probes $HAVE_DPS"

# Tracepoints counted along (each one recorded, without a call chain):
# those this kernel has
COUNT_EV=
for _e in $(echo "$EVENTS" | tr ',' ' '); do
	if [ -d "$TR/events/${_e%%:*}/${_e#*:}" ]; then
		COUNT_EV="$COUNT_EV $_e"
	else
		say "no tracepoint $_e in this kernel: not counted"
	fi
done
COUNT_EV=${COUNT_EV# }

# ---- runs ------------------------------------------------------------------------

unload_bench() {
	for _m in shca_mr_bench shca_dp_bench; do
		if loaded $_m; then timeout 30 rmmod $_m; fi
	done
}

# modrun OUT CMD...: run insmod CMD (bounded), keep the module's new kernel
# log lines (prefix stripped, with their printk times) in OUT and
# /proc/modules in OUT.modules; the module stays loaded (perf script needs
# its symbols)
modrun() {
	_out=$1
	shift
	_before=$(dmesg | wc -l)
	_t0=$(date +%s)
	"$@" >$W/run.log 2>&1
	_rc=$?
	sed 's/^/profile:     /' $W/run.log | grep -v -e 'Woken up' -e '^profile:     $' | tail -n 5
	say "    (${_rc:+exit status $_rc, }$(($(date +%s) - _t0))s)"
	dmesg | tail -n +"$((_before + 1))" | sed -n 's/^\[ *\([0-9.]*\)\] shca_[a-z]*_bench: /\1 /p' >"$_out"
	cat /proc/modules >"$_out.modules"
	return $_rc
}

# the insmod command of a run key
run_cmd() {
	case $1 in
	mr:*) echo "insmod $MR_KO devices=${1#mr:} iters=$ITERS pages=$PAGES reps=$REPS" ;;
	dp:*) echo "insmod $DP_KO pairs=${1#dp:} cell_ms=$MS depth=$DEPTH reps=$REPS budget_s=$RUN_TMO" ;;
	esac
}

# record KEY: the baseline and the profiled run of KEY (once)
record() {
	_k=$(echo "$1" | tr ':' '_')
	[ -e "$W/$_k.done" ] && return 0
	: >"$W/$_k.done"
	_i=0
	while [ "$_i" -lt "$BASE_REPS" ]; do
		_i=$((_i + 1))
		say "baseline run $_i/$BASE_REPS (no profiler): $(run_cmd "$1")"
		# shellcheck disable=SC2046 # the command's words
		modrun "$W/$_k.base.$_i" timeout -k 5 "$RUN_TMO" $(run_cmd "$1")
		unload_bench
	done
	_ev=
	case $1 in
	dp:*) [ $HAVE_DPS = 0 ] || _ev="-e shcaprof:dps -e shcaprof:dpr" ;;
	esac
	# The counted tracepoints go to a second perf, without call chains;
	# both time-stamp with the same clock.
	_evpid=
	if [ -n "$COUNT_EV" ]; then
		say "counting: $COUNT_EV"
		# shellcheck disable=SC2046 # -e EVENT per tracepoint
		timeout -s INT -k 10 "$RUN_TMO" "$PERF" record -q -a \
			$(for _e in $COUNT_EV; do printf -- '-e %s ' "$_e"; done) \
			-o "$W/$_k.ev.data" >"$W/ev.log" 2>&1 &
		_evpid=$!
		sleep 2
	fi
	say "profiled run: $PERF record -a -g -e cpu-clock (${FREQ} Hz) $_ev -- $(run_cmd "$1")"
	# shellcheck disable=SC2046,SC2086 # the words of the command and events
	modrun "$W/$_k.prof" timeout -k 10 "$RUN_TMO" "$PERF" record -q -a -g -m 1024 \
		-e "cpu-clock/freq=$FREQ/" $_ev -o "$W/$_k.data" -- $(run_cmd "$1")
	if [ -n "$_evpid" ]; then
		kill -INT "$_evpid" 2>/dev/null
		wait "$_evpid"
		grep -v -e '^$' -e 'Woken up' "$W/ev.log" | sed 's/^/profile:     counting perf: /' | tail -n 3
	fi
	: >"$W/$_k.marks"
	[ -z "$_ev" ] || timeout 600 "$PERF" script -i "$W/$_k.data" -G -F comm,tid,time,event,trace \
		2>/dev/null | grep -F 'shcaprof:' >"$W/$_k.marks"
	timeout 120 "$PERF" report -i "$W/$_k.data" --stats 2>/dev/null |
		grep -E 'TOTAL events|SAMPLE events|LOST' | head -n 6 | sed 's/^/profile:     stats: /'
}

# The module's records of a cell, from a run's log ("TIME RECORD"):
#   mr:TYPE:DEV       TIME ops DEV TYPE REP OPERATIONS NANOSECONDS
#   dp:OP:SIZE:A:B    TIME bw A:B OP SIZE REP MESSAGES NANOSECONDS
# printed: "TIME REP COUNT NS", one line per repetition
records() {	# CELL LOG
	# shellcheck disable=SC2046 # KIND X Y [A B]
	set -- $(echo "$1" | tr ':' ' ') "$2"
	case $1 in
	mr) awk -v t="$2" -v d="$3" '$2 == "ops" && $3 == d && $4 == t { print $1, $5, $6, $7 }' "$4" ;;
	dp) awk -v op="$(echo "$2" | tr '[:lower:]' '[:upper:]')" -v s="$3" -v p="$4:$5" \
		'$2 == "bw" && $3 == p && $4 == op && $5 == s { print $1, $6, $7, $8 }' "$6" ;;
	esac
}
# rates CELL LOG: the cell's rate (per second) in each repetition
rates() {
	records "$1" "$2" | awk '$4 > 0 { printf "%.0f\n", $3 * 1e9 / $4 }'
}
# median of the numbers on stdin, and all of them: "MEDIAN (median of A B C)"
median() {
	sort -n | awk '{ v[++n] = $1 }
		END { if (n) { printf "%d", n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
			if (n > 1) { printf " (median of"; for (i = 1; i <= n; i++) printf " %d", v[i]; printf ")" } } }'
}

# windows CELL KEYFILE: the perf time ranges of CELL's repetitions,
# "START,END START,END ...", or nothing
windows() {
	case $1 in
	mr:*)
		# the record comes right after the timed loop: [TIME - NS, TIME]
		records "$1" "$2.prof" | awk '{ printf "%s%.6f,%s", n++ ? " " : "", $1 - $4 / 1e9, $1 } END { if (n) print "" }'
		;;
	dp:*)
		# shellcheck disable=SC2046 # dp OP SIZE A B KEYFILE
		set -- $(echo "$1" | tr ':' ' ') "$2"
		case $2 in write) _n=0 ;; read) _n=1 ;; *) _n=2 ;; esac
		_w=$(awk -v op="$_n" -v s="$3" '
			/shcaprof:dps:/ && index($0, " op=" op " size=" s " max=0xffffffffffffffff") {
				t = $3; sub(/:$/, "", t); on = 1; next
			}
			on && /shcaprof:dpr:/ {
				e = $3; sub(/:$/, "", e); printf "%s%s,%s", n++ ? " " : "", t, e; on = 0
			}
			END { if (n) print "" }' "$6.marks")
		if [ -n "$_w" ]; then
			echo "$_w"
			return 0
		fi
		# no probes: the bw record, printed after the cell (and the
		# destruction of its QPs): [TIME - NS, TIME], a little late
		records "$1:$2:$3:$4:$5" "$6.prof" |
			awk '{ printf "%s%.6f,%s", n++ ? " " : "", $1 - $4 / 1e9, $1 } END { if (n) print "" }'
		;;
	esac
}

# fold CELL MODULES: perf script samples on stdin -> "prof-fold: CELL
# STACK COUNT"; a frame's module comes from its address and MODULES (a
# copy of /proc/modules), not from perf, whose module maps vary
fold() {
	awk -v cell="$1" -v mods="$2" '
	function hex(s) {
		s = tolower(s)
		sub(/^0x/, "", s)
		while (length(s) < 16)
			s = "0" s
		return s
	}
	function h2n(s,    v, k) {
		v = 0
		for (k = 1; k <= length(s); k++)
			v = v * 16 + index("0123456789abcdef", substr(s, k, 1)) - 1
		return v
	}
	# 8 hex digits of 0 <= v < 2^32 (%x of busybox awk stops at 2^31)
	function n2h(v,    s, k, d) {
		s = ""
		for (k = 0; k < 8; k++) {
			d = v - 16 * int(v / 16)
			s = substr("0123456789abcdef", d + 1, 1) s
			v = int(v / 16)
		}
		return s
	}
	function modof(a,    j) {
		for (j = 1; j <= nm; j++)
			if (a >= mlo[j] && a < mhi[j])
				return mname[j]
		return ""
	}
	BEGIN {
		while ((getline l < mods) > 0) {
			split(l, f, " ")
			if (f[6] == "")
				continue
			b = hex(f[6])
			e = h2n(substr(b, 9)) + f[2]
			if (e > 4294967295)
				e = 4294967295
			mname[++nm] = f[1]
			mlo[nm] = b
			mhi[nm] = substr(b, 1, 8) n2h(e)
		}
	}
	function flush(    s, i, k) {
		if (insample && nf > 0) {
			s = comm
			for (i = nf; i >= 1; i--)
				s = s ";" fr[i]
			cnt[s]++
			total++
		}
		insample = 0
		nf = 0
	}
	/^[^\t]/ {
		flush()
		if ($0 !~ /cpu-clock/)
			next
		insample = 1
		comm = $1
		# kworker/1:2H-ib-comp -> kworker, swapper/1 -> swapper
		sub(/\/.*/, "", comm)
		gsub(/;/, "_", comm)
		next
	}
	/^\t/ && insample {
		addr = $1
		dso = $NF
		sym = $2
		for (i = 3; i < NF; i++)
			sym = sym "_" $i
		gsub(/[()]/, "", dso)
		a = hex(addr)
		if (length(addr) < 16 || addr !~ /^ffff/)
			f = "[user]"
		else if (a >= "ffffffffc0000000") {
			m = modof(a)
			if (m != "")
				f = m "`" sym
			else if (sym != "[unknown]")
				f = sym
			else	# freed module init text
				f = "[module-init]"
		} else
			f = sym
		gsub(/;/, "_", f)
		if (f == "[user]" && nf > 0 && fr[nf] == "[user]")
			next
		fr[++nf] = f
		next
	}
	/^$/ { flush() }
	END {
		flush()
		for (s in cnt)
			print "prof-fold: " cell " " s " " cnt[s]
		print "prof-meta: " cell " samples " total + 0
	}'
}

# ---- the cells ------------------------------------------------------------------

# the run key of a cell: mr:DEV or dp:A:B
cell_key() {
	case $1 in
	mr:*:*) echo "mr:${1#mr:*:}" ;;
	dp:*:*:*:*) echo "dp:${1#dp:*:*:}" ;;
	esac
}
ok=0
KEYS=
for cell in $CELLS; do
	key=$(cell_key "$cell")
	if [ -z "$key" ]; then
		say "bad cell '$cell'"
		ok=1
		continue
	fi
	case " $KEYS " in *" $key "*) ;; *) KEYS="$KEYS $key" ;; esac
done
# Each run once, then its cells, then the next run: the benchmark module
# stays loaded until its cells are cut out, for perf to name its functions.
for key in $KEYS; do
	k=$(echo "$key" | tr ':' '_')
	record "$key"
	for cell in $CELLS; do
		[ "$(cell_key "$cell")" = "$key" ] || continue
		echo "=== PROF-CELL $cell"
		meta "$cell command $(run_cmd "$key" | sed 's|^insmod /||')"
		meta "$cell freq $FREQ"
		meta "$cell cpus $(nproc)"
		meta "$cell crng $CRNG"
		unit=op/s
		case $cell in dp:*) unit=msg/s ;; esac
		v=$(rates "$cell" "$W/$k.prof" | median)
		meta "$cell rate-prof ${v:-none} $unit"
		v=$(for r in "$W/$k".base.*; do
			case $r in *.modules) continue ;; esac
			[ ! -e "$r" ] || rates "$cell" "$r"
		done | median)
		[ -z "$v" ] || meta "$cell rate-base $v $unit"
		# operations in the windows, under perf
		meta "$cell ops $(records "$cell" "$W/$k.prof" | awk '{ n += $3 } END { print n + 0 }')"
		win=$(windows "$cell" "$W/$k")
		if [ -z "$win" ]; then
			say "$cell: no time window (the device lacks the MR type, or the cell failed)"
			meta "$cell error no-window"
			echo "=== PROF-CELL-END $cell"
			ok=1
			continue
		fi
		len=$(echo "$win" | tr ' ,' '\n ' | awk '{ t += $2 - $1; n++ } END { printf "%.3f s in %d range%s", t, n, (n > 1 ? "s" : "") }')
		meta "$cell window $win"
		meta "$cell window-text $len"
		say "$cell: $len"
		timeout 900 "$PERF" script -i "$W/$k.data" --time "$win" \
			-F comm,tid,event,ip,sym,dso 2>/dev/null | fold "$cell" "$W/$k.prof.modules"
		if [ -s "$W/$k.ev.data" ]; then
			# per event: the count, and what it was about (the
			# work function, the timer function, who woke whom...)
			timeout 600 "$PERF" script -i "$W/$k.ev.data" --time "$win" -F event,trace 2>/dev/null |
				awk -v c="$cell" '
				function task(t) { sub(/\/.*/, "", t); sub(/-[0-9]+$/, "", t); return t }
				{
					e = $1
					sub(/:$/, "", e)
					n[e]++
					k = ""
					if (match($0, /function[= ][^ ]+/))
						k = substr($0, RSTART + 9, RLENGTH - 9)
					else if (match($0, /callsite=[^ ]+/))
						k = substr($0, RSTART + 9, RLENGTH - 9)
					else if (e == "sched:sched_switch" && match($0, /prev_comm=[^ ]+/)) {
						k = task(substr($0, RSTART + 10, RLENGTH - 10))
						if (match($0, /next_comm=[^ ]+/))
							k = k "->" task(substr($0, RSTART + 10, RLENGTH - 10))
					} else if (match($0, /comm=[^ ]+/))
						k = task(substr($0, RSTART + 5, RLENGTH - 5))
					else if (match($0, /action=[A-Z_]+/))
						k = substr($0, RSTART + 7, RLENGTH - 7)
					sub(/\+0x.*/, "", k)
					if (k != "")
						nk[e " " k]++
				}
				END {
					for (x in n)
						print "prof-meta: " c " event " x " " n[x]
					for (x in nk)
						print "prof-meta: " c " evkey " x " " nk[x]
				}'
		fi
		echo "=== PROF-CELL-END $cell"
	done
	unload_bench
	rm -f "$W/$k.data" "$W/$k.ev.data"
done

cleanup || fail "cleanup failed"
say "done"
exit $ok
