#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where does the time go? Profile benchmark cells of the kernel benchmark
# modules (tests/bench/shca_mr_bench.ko, shca_dp_bench.ko) with perf in the
# VM of scripts/vm.sh: one boot, the chosen cells run under
# "perf record -a -g -e cpu-clock" (QEMU TCG has no PMU), each cell cut out
# of the recording by time (kprobe markers, see tests/bench/profile-guest.sh),
# and, per cell (tests/bench/profile-guest.sh does the guest's half):
#   rate     the cell's rate under perf and without it (median of runs)
#   events   tracepoints in the cell per operation (context switches,
#            wake-ups, queue_work and work items run by function, IPIs by
#            call site, softirqs, timer interrupts, hrtimers by function)
#   0. busy samples by task (the benchmark's insmod, kworkers, ...)
#   1. samples per module / area: softhca, ib_core, rdma_rxe, mm (page
#      allocator, slab, vmalloc, GUP), xarray, RCU, scheduler/workqueue,
#      locks, memcpy/memset, rest of the kernel, idle, ...; as shares of
#      all and of the busy samples, and as CPU time per operation
#   2. focus groups: the busy samples with given functions anywhere on the
#      stack (xa_alloc, xa_erase, xa_node allocation and RCU freeing,
#      kzalloc/kvzalloc, get_random_*, kref/completion, try_to_wake_up,
#      __queue_work, schedule, softhca's copy path, key lookups, CQ
#      push/poll, spinlocks, ...), also counted only below a driver frame
#   3. the top symbols (self, self with irq-enable points charged to the
#      caller, inclusive) with their module;
#   4. softhca's calls out (its innermost function -> the callee) and its
#      call chains (the caller into softhca > ... > the sampled function).
# Reports and the folded stacks (flamegraph.pl input) are saved under
# build/prof/; --compare puts saved cells side by side.
#
# Usage: tests/bench/profile.sh [options] CELL...
#   CELL  mr:TYPE[:DEV]      shca_mr_bench.ko on DEV (default softhca0);
#                            TYPE mem_reg (MEM_REG alloc+map+dereg),
#                            sg_gaps, integrity, user (USER reg+dereg),
#                            umem (ib_umem_get+release), core (that
#                            and ib_core's MR tracking), dma (DMA
#                            get_dma_mr+dereg), dm; memreg etc. also do
#         dp:OP:SIZE[:A:B]   shca_dp_bench.ko, pair A:B (default
#                            softhca0:softhca1); OP write|read|send, SIZE
#                            64|4096|65536|1048576 (throughput cells)
#         e.g. mr:mem_reg:softhca0 mr:mem_reg:rxe0 dp:write:64 dp:send:64
#         Cells of one device (mr) or pair (dp) share one module run; a
#         cell's samples are those of all its repetitions (--reps).
#   --module PATH    softhca.ko to profile (default: this tree's
#                    drivers/infiniband/sw/softhca/softhca.ko)
#   --freq HZ        sampling frequency per CPU (default 1000)
#   --iters N        shca_mr_bench iters= (default 50000: with --reps 3, a
#                    few thousand samples per MR cell)
#   --pages N        shca_mr_bench pages= (default 16)
#   --cell-ms MS     shca_dp_bench cell_ms= (default 1000)
#   --reps N         the modules' reps= (default 3): each cell is measured
#                    (and profiled) N times
#   --depth N        shca_dp_bench depth= (default 32)
#   --base-reps N    runs without the profiler before the profiled one
#                    (default 1; their median rate is shown next to the
#                    profiled one)
#   --no-baseline    the same as --base-reps 0
#   --no-crng-init   leave the guest kernel's CRNG as the boot left it
#                    (uninitialised under TCG without virtio-rng, where
#                    every get_random_u8/u32() takes a slow irq-off path);
#                    by default a blocking read of /dev/random initialises
#                    it first, as on a real machine
#   --events LIST    tracepoints counted in each cell (comma separated
#                    SYSTEM:NAME; "" for none; default: context switches,
#                    wake-ups, queue_work, work items run, softirqs, IPIs,
#                    local timer interrupts, hrtimer expiries), recorded
#                    by a second perf without call chains
#   --top N          top symbols (default 25)
#   --chains N       softhca chains (default 20)
#   --focus NAME=REGEX  one more focus group (REGEX, extended, matched
#                    against each frame; module frames read
#                    module`function; "stack:REGEX" matches the whole
#                    stack, ";outermost;...;leaf")
#   --out DIR        where reports go (default build/prof)
#   --analyze FILE   no VM: report on a saved FILE.folded (with FILE.meta)
#   --shares FILE.folded...   no VM: one row per saved cell, the shares of
#                    its busy time (below a driver frame; by area) - the
#                    table make bench adds with BENCH_PROFILE=1
#   --compare FILE.folded...  no VM: the areas and focus groups of saved
#                    cells side by side, in CPU time per operation
#   --from-console FILE  no VM: the reports of all cells in a saved guest
#                    console (build/prof/console.txt, or a scripts/vm.sh
#                    log), saved again under --out
#   --mttcg          multi-threaded TCG (VM_TCG_THREAD=multi of scripts/vm.sh:
#                    one host thread per vCPU) instead of the default
#                    single thread that runs both vCPUs in turns (see below)
#   --timeout SECS   bound for the whole VM run
#   -v, --verbose    stream the guest's console
# Environment: PERF (the perf binary to copy into the guest; default
# /usr/bin/perf_<newest version> or /usr/bin/perf; linux-perf is
# installed with apt-get if there is none - for this tool only).
# Time: one boot plus, per device or pair, (--base-reps + 1) runs of the
# module and perf script; e.g. mr:mem_reg:softhca0 mr:dma:softhca0
# mr:umem:rxe0 dp:write:64 at --iters 20000, 4 min; a dp run does all 20
# cells --reps times, about 70 s at the default --cell-ms 1000 (2 busy
# cores).
#
# The guest kernel is Debian's 6.12 (scripts/vm.sh); perf 6.1 from Debian
# 12 records it fine. How to read the numbers:
# - cpu-clock is an hrtimer: code that runs with interrupts disabled is
#   sampled where it enables them again; the "eff" column and the areas
#   charge _raw_spin_unlock_irqrestore and friends to their caller, which
#   ran with interrupts off (the lock's hold time, any spinning included).
# - busy = all samples but the idle task's; under TCG a halted CPU's
#   sample arrives late, where the interrupt that woke it returns
#   (handle_softirqs as the leaf): counted as idle.
# - us/op = samples / Hz / (operations in the window): CPU time of both
#   CPUs per operation (message), under perf.
# - TCG emulation distorts instruction costs (string copies, atomics, TLB
#   flushes) compared with a real CPU. By default (single-threaded TCG)
#   both vCPUs run in turns on one host thread while each one's clock runs
#   on: when both are busy, each one's samples count wall time, not host
#   CPU time, and "busy" adds up to more than the host spent (a poller
#   waiting for a worker on the other vCPU looks expensive). Compare
#   shares within a context, or use --mttcg. The host's load makes rates
#   vary by 10-30 % between runs: repeat (--base-reps) and interleave.

set -euo pipefail

# The whole script is one brace group, read before any of it runs: it can
# be edited while it runs (bash reads scripts as it goes).
{

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_DIR=$ROOT/tests/bench
DEBIAN_KVER=
if [ -r "$ROOT/scripts/versions.env" ]; then
	# shellcheck disable=SC1091
	. "$ROOT/scripts/versions.env"
fi
KVER=${DEBIAN_KVER:-6.12.117+deb12-amd64}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/vm

note() { echo "profile: $*"; }
die() { echo "profile: error: $*" >&2; exit 2; }
TMP=
trap '[ -z "$TMP" ] || rm -rf "$TMP"' EXIT
trap 'exit 130' INT TERM

MODULE=$ROOT/drivers/infiniband/sw/softhca/softhca.ko
FREQ=1000
ITERS=50000
PAGES=16
CELL_MS=1000
REPS=3
DEPTH=32
BASELINE=1
CRNG_INIT=1
EVENTS=sched:sched_switch,sched:sched_wakeup,workqueue:workqueue_queue_work,workqueue:workqueue_execute_start,irq:softirq_entry,ipi:ipi_send_cpu,irq_vectors:call_function_single_entry,irq_vectors:local_timer_entry,timer:hrtimer_expire_entry
TOP=25
NCHAINS=20
OUT=$ROOT/build/prof
ANALYZE=
COMPARE=
FROM_CONSOLE=
TIMEOUT=
VERBOSE=0
FOCUS_EXTRA=()
CELLS=()
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	--module) MODULE=${2:?--module needs a path}; shift ;;
	--freq) FREQ=${2:?}; shift ;;
	--iters) ITERS=${2:?}; shift ;;
	--pages) PAGES=${2:?}; shift ;;
	--cell-ms) CELL_MS=${2:?}; shift ;;
	--reps) REPS=${2:?}; shift ;;
	--depth) DEPTH=${2:?}; shift ;;
	--no-baseline) BASELINE=0 ;;
	--base-reps) BASELINE=${2:?}; shift ;;
	--no-crng-init) CRNG_INIT=0 ;;
	--events) EVENTS=${2?--events needs a list}; shift ;;
	--top) TOP=${2:?}; shift ;;
	--chains) NCHAINS=${2:?}; shift ;;
	--focus) FOCUS_EXTRA+=("${2:?--focus needs NAME=REGEX}"); shift ;;
	--out) OUT=${2:?}; shift ;;
	--analyze) ANALYZE=${2:?--analyze needs a .folded file}; shift ;;
	--from-console) FROM_CONSOLE=${2:?--from-console needs a file}; shift ;;
	--compare) COMPARE=1 ;;
	--shares) COMPARE=shares ;;
	--timeout) TIMEOUT=${2:?}; shift ;;
	-v|--verbose) VERBOSE=1 ;;
	--mttcg) export VM_TCG_THREAD=multi ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) CELLS+=("$1") ;;
	esac
	shift
done
[[ $EVENTS =~ ^[a-z0-9_:,]*$ ]] || die "--events: a comma-separated list of SYSTEM:TRACEPOINT"
for v in "$REPS" "$BASELINE" "$FREQ" "$ITERS" "$PAGES" "$CELL_MS" "$DEPTH" "$TOP" "$NCHAINS" ${TIMEOUT:+"$TIMEOUT"}; do
	[[ $v =~ ^[0-9]+$ ]] || die "'$v' is not a whole number"
done
if [ "$PAGES" -lt 1 ] || [ "$PAGES" -gt 256 ]; then die "--pages must be 1..256"; fi
if [ "$FREQ" -lt 10 ] || [ "$FREQ" -gt 20000 ]; then die "--freq must be 10..20000"; fi
if [ "$REPS" -lt 1 ] || [ "$REPS" -gt 100 ]; then die "--reps must be 1..100"; fi
for f in ${FOCUS_EXTRA[@]+"${FOCUS_EXTRA[@]}"}; do
	[[ $f == ?*=?* ]] || die "--focus $f: expected NAME=REGEX"
done

# ---- the report (from folded stacks) ---------------------------------------------

# Focus groups: NAME<TAB>REGEX, matched against every frame of a stack
# (kernel frames read "function", module frames "module`function").
FOCUS='softhca (any frame)	^softhca`
ib_core (any frame)	^ib_core`
rdma_rxe (any frame)	^rdma_rxe`
ib_core restrack (rdma_restrack_*)	^ib_core`rdma_restrack_
xarray: xa_alloc*	^(__)?xa_alloc
xarray: xa_erase	^(__)?xa_erase
xarray: xa_load	^xa_load$
xarray: any xa_*/xas_*	^(__)?xas?_
xa_node alloc (xas_alloc, xas_nomem)	^xas_(alloc|nomem)$
xa_node RCU free (radix_tree_node_rcu_free)	^radix_tree_node_rcu_free
RCU callback slab frees (xa_node free + its tail call)	stack:;rcu_do_batch;(radix_tree_node_rcu_free|kmem_cache_free)(;|$)
kmalloc/kzalloc (__kmalloc*)	^(__kmalloc|kmalloc)
kvmalloc/kvzalloc	^(__)?kvmalloc
kmem_cache_alloc*	^kmem_cache_alloc
kfree/kvfree/kmem_cache_free	^(kfree|kvfree|kmem_cache_free)($|_)
vmalloc/vfree	^(__)?(vmalloc|vfree|vzalloc)
get_random_*	^(get_random_|_get_random_bytes|__get_random|crng_|chacha)
kref/completion	^(kref_|complete$|complete_all|wait_for_completion|__wait_for_common|do_wait_for_common)
RCU callbacks (rcu_core)	^rcu_core$
call_rcu/kfree_rcu/synchronize_rcu	^(call_rcu|kvfree_call_rcu|kfree_rcu|synchronize_rcu)
ib_umem get/release	^ib_core`ib_umem_
pin/unpin user pages	^(pin_user_pages|__gup_longterm|unpin_user_page|gup_|__get_user_pages|get_user_pages)
DMA map/unmap	^(dma_map|dma_unmap|__dma_map|dma_direct)
try_to_wake_up	^try_to_wake_up$
__queue_work/queue_work_on	^(__queue_work|queue_work_on)$
schedule/__schedule	^(__)?schedule$
worker: process_one_work	^process_one_work$
softirq/irq handling	^(handle_softirqs|__irq_exit_rcu|asm_sysvec_|sysvec_)
softhca post_send	^softhca`shca_(post_send|qp_post_send)$
softhca work item (shca_qp_work)	^softhca`shca_qp_work$
softhca kick (shca_qp_kick*)	^softhca`shca_qp_kick
softhca copy path (shca_mr_copy*, spans, xlat)	^softhca`shca_(mr_copy|span_|map_copy|xlat_ptr|map_ptr|sig_copy)
softhca key lookups (mr_get/resolve, qp_get, peer)	^softhca`shca_(mr_get|mr_resolve|mr_put|qp_get|qp_put|exec_peer|peer_)
softhca CQ push	^softhca`shca_cq_push$
softhca CQ poll (shca_poll_cq/shca_cq_poll)	^softhca`shca_(poll_cq|cq_poll)$
memcpy/memmove	^(__)?(memcpy|memmove)
memset	^(__)?memset
spinlocks (lock, unlock, irqrestore)	^(_raw_spin_|queued_spin_lock|native_queued_spin|__pv_queued)
irq-enable points (_raw_spin_unlock_irqrestore ...)	^(_raw_spin_unlock_irq|_raw_spin_unlock_bh|__local_bh_enable_ip)'
for f in ${FOCUS_EXTRA[@]+"${FOCUS_EXTRA[@]}"}; do
	FOCUS="$FOCUS
${f%%=*}	${f#*=}"
done

# report FOLDED META [tsv]: print the report of one cell (tsv: the
# records --compare tabulates)
report() {
	local folded=$1 metaf=$2 tsv=${3:-} total
	total=$(awk '{ n += $NF } END { print n + 0 }' "$folded")
	if [ -n "$tsv" ]; then
		awk -v focus="$FOCUS" -v tsv=1 -v ops="$(ops_of "$metaf")" \
			-v freq="$(meta_get "$metaf" freq)" -f <(analysis_awk) "$folded"
		return 0
	fi
	echo "cell $(meta_get "$metaf" cell)"
	echo "  module:     $(meta_get "$metaf" module)"
	echo "  benchmark:  $(meta_get "$metaf" command)"
	echo "  rate:       $(meta_get "$metaf" rate-prof) under perf; $(meta_get "$metaf" rate-base) without"
	echo "  crng:       $(meta_get "$metaf" crng)"
	echo "  window:     $(meta_get "$metaf" window-text); $total samples ($(meta_get "$metaf" cpus) CPUs, $(meta_get "$metaf" freq) Hz cpu-clock)"
	if [ "$total" = 0 ]; then
		echo "  no samples"
		return 0
	fi
	local ops
	ops=$(ops_of "$metaf")
	if grep -q '^event ' "$metaf"; then
		echo "  events:     tracepoints in the window (all CPUs), and their three most frequent kinds"
		awk -v ops="$ops" -v u="$(meta_get "$metaf" rate-prof | awk '{ print ($2 == "msg/s" ? "message" : "operation") }')" '
			$1 == "event" { n[$2] = $3 }
			$1 == "evkey" { k[$2] = k[$2] "\t" $4 " " $3 }
			END {
				for (e in n) {
					v = n[e]
					printf "%d\t              %-40s %9d  %s\n", v, e, v,
						(ops > 0 ? sprintf("%.3f per %s", v / ops, u) : "")
					# its three most frequent kinds, with their share
					m = split(substr(k[e], 2), kk, "\t")
					for (r = 1; r <= 3; r++) {
						best = 0
						for (j = 1; j <= m; j++) {
							split(kk[j], f, " ")
							if (f[1] > best) { best = f[1]; bj = j }
						}
						if (!best)
							break
						split(kk[bj], f, " ")
						printf "%d\t                %5.1f%%  %s\n", v, 100 * f[1] / n[e], f[2]
						kk[bj] = "0 -"
					}
				}
			}' "$metaf" | sort -s -t "$(printf '\t')" -k1,1nr | cut -f2-
	fi
	echo
	awk -v focus="$FOCUS" -v top="$TOP" -v nchains="$NCHAINS" -v ops="$ops" \
		-v freq="$(meta_get "$metaf" freq)" -v unit="$(meta_get "$metaf" rate-prof | awk '{ print $2 }')" \
		-f <(analysis_awk) "$folded"
}
# operations (messages) in the windows, under perf
ops_of() {	# META
	local n
	n=$(meta_get "$1" ops)
	echo "${n:-0}"
}
# compare FOLDED...: the areas and focus groups of several cells side by
# side, in CPU time per operation (message)
compare() {
	local f n=0 names=()
	TMP=${TMP:-$(mktemp -d "${TMPDIR:-/tmp}/softhca-prof.XXXXXX")}
	for f in "$@"; do
		[ -r "$f" ] || die "$f not found"
		n=$((n + 1))
		names+=("$(meta_get "${f%.folded}.meta" cell)")
		[ -n "${names[-1]}" ] || names[-1]=$(basename "$f" .folded)
		report "$f" "${f%.folded}.meta" tsv >"$TMP/cmp.$n"
	done
	echo "CPU time per operation (message) in microseconds, both CPUs, under perf; drv: below a driver frame"
	for ((i = 1; i <= n; i++)); do
		f=${*:i:1}
		printf '  [%d] %s: %s under perf, %s without\n' "$i" "${names[i - 1]}" \
			"$(meta_get "${f%.folded}.meta" rate-prof)" "$(meta_get "${f%.folded}.meta" rate-base)"
	done
	awk -v n="$n" -F '\t' '
		FNR == 1 { file++ }
		{ key = $1 "\t" $2; if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
		  v[key, file] = $4; s[key, file] = $3 }
		END {
			printf "  %-5s %-50s", "", ""
			for (i = 1; i <= n; i++) printf " %9s", "[" i "]"
			printf "\n"
			for (k = 1; k <= nk; k++) {
				split(order[k], kk, "\t")
				any = 0
				for (i = 1; i <= n; i++) if (s[order[k], i] > 0) any = 1
				if (!any) continue
				printf "  %-5s %-50s", kk[1], substr(kk[2], 1, 50)
				for (i = 1; i <= n; i++) printf " %9s", v[order[k], i] == "" ? "-" : v[order[k], i]
				printf "\n"
			}
		}' "$TMP"/cmp.*
}
# shares FOLDED...: one row per cell, where its busy time goes: below a
# driver frame (the driver's code and what it calls), and by area (where
# the samples land: the driver's own code, ib_core, mm, xarray, RCU, the
# scheduler and interrupts, locks, the rest)
shares() {
	local f n=0
	TMP=${TMP:-$(mktemp -d "${TMPDIR:-/tmp}/softhca-prof.XXXXXX")}
	echo "Where the time goes: perf (cpu-clock, ${FREQ} Hz, call graphs) in the same kind of guest,"
	echo "one module run per cell; rate and busy (CPU time per operation or message, both CPUs)"
	echo "under perf, which slows the cells down; the other tables have the rates without it."
	echo "Shares of the busy time: 'in driver' = samples with a driver (softhca or rdma_rxe) frame"
	echo "on the stack, whatever they called; the other columns are where the samples land"
	echo "(exclusive): the driver's own code, ib_core's, mm (slab, pages, GUP), xarray, RCU, the"
	echo "scheduler/workqueues/interrupts, locks (irq-off sections are charged where interrupts come"
	echo "back on), and the rest (memcpy included). tests/bench/profile.sh CELL gives the whole report."
	printf '%-34s %10s %9s %9s %7s %8s %6s %7s %6s %7s %6s %6s\n' cell "rate/s" "busy us" \
		"in drv" "drv" "ib_core" mm xarray RCU "sch/irq" locks rest
	for f in "$@"; do
		[ -r "$f" ] || die "$f not found"
		n=$((n + 1))
		report "$f" "${f%.folded}.meta" tsv >"$TMP/shr.$n"
		awk -F '\t' -v cell="$(meta_get "${f%.folded}.meta" cell)" \
			-v rate="$(meta_get "${f%.folded}.meta" rate-prof | awk '{ print $1 }')" '
			$1 == "area" { a[$2] = $3; u[$2] = $4 }
			$1 == "focus" && $2 ~ /^(softhca|rdma_rxe) \(any frame\)$/ { d += $3 }
			END {
				b = a["busy (all but idle)"]
				if (!b) { printf "%-34s no samples\n", cell; exit }
				own = a["softhca"] + a["rdma_rxe"]
				sch = a["scheduler/workqueue/tick"] + a["irq entry/exit (sample points)"]
				rest = b - own - a["ib_core"] - a["mm (page alloc/slab/vmalloc/GUP)"] \
				       - a["xarray/radix tree"] - a["RCU"] - sch - a["locks (spin/mutex/rwsem)"]
				printf "%-34s %10s %9.2f %8.0f%% %6.0f%% %7.0f%% %5.0f%% %6.0f%% %5.0f%% %6.0f%% %5.0f%% %5.0f%%\n",
					substr(cell, 1, 34), rate == "" ? "-" : rate, u["busy (all but idle)"],
					100 * d / b, 100 * own / b, 100 * a["ib_core"] / b,
					100 * a["mm (page alloc/slab/vmalloc/GUP)"] / b,
					100 * a["xarray/radix tree"] / b, 100 * a["RCU"] / b, 100 * sch / b,
					100 * a["locks (spin/mutex/rwsem)"] / b, 100 * rest / b
			}' "$TMP/shr.$n"
	done
}
meta_get() {	# META KEY
	awk -v k="$2" '$1 == k { $1 = ""; sub(/^ /, ""); print; exit }' "$1"
}

analysis_awk() {
	cat <<'EOF'
function areaof(f, comm, nf,    fn) {
	fn = f
	if (comm ~ /^perf/ || fn ~ /^perf_/) return "profiler (perf)"
	if (idle && fn ~ IDLE) return "idle"
	if (fn == "[user]") return "user space"
	if (fn == "[module-init]") return "benchmark module"
	if (index(fn, "`")) {
		mod = substr(fn, 1, index(fn, "`") - 1)
		if (mod == "softhca") return "softhca"
		if (mod == "ib_core") return "ib_core"
		if (mod == "rdma_rxe") return "rdma_rxe"
		if (mod ~ /^shca_.*bench/) return "benchmark module"
		return "other modules"
	}
	if (fn ~ IDLE) return "idle"
	if (fn ~ /^(handle_softirqs|__softirqentry_text_end|__irq_exit_rcu|irq_exit_rcu|asm_sysvec_.*|sysvec_.*|__sysvec_.*|irqentry_.*|asm_common_interrupt|common_interrupt|__common_interrupt)$/) return "irq entry/exit (sample points)"
	if (fn ~ /^(_raw_spin_|_raw_read_|_raw_write_|queued_spin_lock|native_queued_spin|__pv_queued|queued_read|queued_write|mutex_|__mutex|rwsem|down_read|down_write|up_read|up_write|osq_|__down|percpu_down|percpu_up)/) return "locks (spin/mutex/rwsem)"
	if (fn ~ /^(__)?(memcpy|memmove|memset|memcmp|bcmp|memchr_inv|memcpy_orig|memset_orig|copy_page|clear_page|rep_movs|rep_stos|_copy_from_user|_copy_to_user|copy_user|__copy_user)/) return "memcpy/memset/clear_page"
	if (fn ~ /^(__)?(xa_|xas_|radix_tree_|idr_|ida_)/) return "xarray/radix tree"
	if (fn ~ /^(kmem_cache_|__kmem_cache|kmalloc|__kmalloc|kfree|__kfree|kvmalloc|__kvmalloc|kvfree|krealloc|kmemdup|__slab|slab_|___slab|__put_partials|put_cpu_partial|get_partial|allocate_slab|new_slab|discard_slab|deactivate_slab|setup_object|shuffle_freelist|init_object|memcg_|__memcg|mem_cgroup|obj_cgroup|__obj_cgroup|mod_objcg|refill_obj|consume_obj|drain_obj|__mod_memcg|__mod_lruvec|mod_lruvec|__count_memcg|alloc_pages|__alloc_pages|alloc_page|get_page_from_freelist|rmqueue|__rmqueue|free_pages|__free_pages|free_unref|free_pcppages|__free_one_page|free_one_page|__get_free_pages|get_zeroed_page|vmalloc|__vmalloc|vzalloc|vfree|__vfree|vmap|vunmap|__vunmap|remove_vm_area|find_vm_area|alloc_vmap|__alloc_vmap|purge_vmap|free_vmap|__purge_vmap|pcpu_|folio_|__folio|page_|__page|put_page|get_user_pages|__get_user_pages|pin_user_pages|unpin_user_page|__gup|gup_|follow_page|try_grab|mmap_|__mm_populate|handle_mm_fault|__handle_mm_fault|do_anonymous_page|lru_|__lru|release_pages|mlock|munlock|kasan|__kasan|should_failslab|prep_new_page|post_alloc_hook|free_tail_page|__free_pages_ok|free_pages_prepare|zone_|__zone_|__rcu_free_sheaf|kvfree_rcu_bulk|kfree_rcu_work|__kfree_rcu|kmem_|__kmem|slub_|__slub)/) return "mm (page alloc/slab/vmalloc/GUP)"
	if (fn ~ /^(__)?(rcu_|rcu|call_rcu|kvfree_call_rcu|kfree_rcu|synchronize_rcu|note_gp_changes|invoke_rcu|srcu_|__srcu|kfree_rcu_)/) return "RCU"
	if (fn ~ /^(__)?(schedule|try_to_wake_up|ttwu_|wake_up|__wake_up|enqueue_|dequeue_|pick_next|pick_task|pick_eevdf|put_prev|set_next|update_curr|update_load|update_rq|update_cfs|__update_load|sched_|select_task_rq|select_idle|check_preempt|wakeup_preempt|resched_|finish_task_switch|__switch_to|switch_mm|switch_fpu|context_switch|prepare_task_switch|psi_|cpuacct|reweight|place_entity|raw_spin_rq|do_sched|yield|cond_resched|preempt_schedule|queue_work|insert_work|worker_thread|process_one_work|kick_pool|wq_|flush_work|kthread|idle_cpu|available_idle|nohz|tick_nohz|update_min_vruntime|hrtick|task_tick|scheduler_tick|sched_tick|account_|newidle|load_balance|find_busiest|rebalance|run_rebalance|activate_task|deactivate_task|migrate_|set_task_cpu|mm_cid|finish_lock_switch|balance_|vruntime|avg_vruntime|entity_|set_rq|attach_entity|detach_entity|rq_|task_work|__task_rq|get_nohz|cpu_util|cpudl|cpupri|pull_|push_|need_resched|__need_resched|record_times|autoremove_wake_function|default_wake_function|woken_wake_function|prepare_to_wait|finish_wait|schedule_timeout|io_schedule|__cond_resched|dynamic_cond_resched|__flush_work|queue_delayed_work|__queue_delayed_work|mod_delayed_work|delayed_work_timer|pwq_|put_pwq|get_pwq|worker_|__kthread|to_kthread|tick_sched|timekeeping|update_process_times|hrtimer_|__hrtimer|irqtime|vtime)/) return "scheduler/workqueue/tick"
	return "rest of kernel"
}
# the frame a sample is charged to: the leaf, unless it is where interrupts
# (or bottom halves) were enabled again: then its caller, which ran with
# them disabled and could not be sampled before
function effleaf(nf,    i) {
	for (i = nf; i > 2; i--)
		if (fr[i] !~ SKIP)
			return i
	return i
}
function bare(f) {
	sub(/^softhca`/, "", f)
	return f
}
function pct(n, t) { return t ? sprintf("%5.1f%%", 100 * n / t) : "  -  " }
# CPU time per operation (message) of n samples, in microseconds
function us(n) { return ops > 0 && freq > 0 ? sprintf("%7.2f", n * 1e6 / freq / ops) : "      -" }
BEGIN {
	IDLE = "^(pv_native_safe_halt|native_safe_halt|default_idle|default_idle_call|arch_cpu_idle|cpu_idle_poll|acpi_idle_.*|acpi_safe_halt|mwait_idle.*|intel_idle.*|cpuidle_enter.*|do_idle|poll_idle|cpu_startup_entry|halt)$"
	SKIP = "^(_raw_spin_unlock_irqrestore|_raw_spin_unlock_irq|_raw_spin_unlock_bh|_raw_read_unlock_irqrestore|_raw_write_unlock_irqrestore|_raw_read_unlock_irq|_raw_write_unlock_irq|__local_bh_enable_ip|local_bh_enable|__raw_spin_unlock_irqrestore)$"
	ng = split(focus, gl, "\n")
	for (g = 1; g <= ng; g++) {
		split(gl[g], gp, "\t")
		gname[g] = gp[1]
		gre[g] = gp[2]
		# "stack:REGEX": matched against ";frame;frame;...;leaf"
		if (gre[g] ~ /^stack:/) {
			gstack[g] = 1
			gre[g] = substr(gre[g], 7)
		}
	}
	na = split("softhca|ib_core|rdma_rxe|benchmark module|other modules|mm (page alloc/slab/vmalloc/GUP)|xarray/radix tree|RCU|scheduler/workqueue/tick|locks (spin/mutex/rwsem)|memcpy/memset/clear_page|irq entry/exit (sample points)|rest of kernel|user space|profiler (perf)|idle", aorder, "|")
}
{
	c = $NF
	stack = $0
	sub(/ [0-9]+$/, "", stack)
	nf = split(stack, fr, ";")
	comm = fr[1]
	total += c
	# idle: the idle task outside interrupts; and the idle task where an
	# interrupt that woke it enables interrupts again (handle_softirqs
	# and the like as the leaf): under TCG the sampling timer of a halted
	# CPU is delivered there, late, so these are idle time too
	idle = 0
	if (comm == "swapper") {
		idle = 1
		for (i = 2; i <= nf; i++)
			if (fr[i] ~ /^(asm_|sysvec_|common_interrupt|handle_softirqs|__do_softirq|irq_exit)/) {
				idle = 0
				break
			}
		if (!idle && fr[nf] ~ /^(handle_softirqs|__irq_exit_rcu|irq_exit_rcu|__softirqentry_text_end)$/)
			for (i = 2; i < nf; i++)
				if (fr[i] ~ IDLE) {
					idle = 1
					break
				}
	}
	e = effleaf(nf)
	a = idle ? "idle" : areaof(fr[e], comm, nf)
	if (comm ~ /^perf/)
		a = "profiler (perf)"
	area[a] += c
	# the rest (symbols, focus groups, chains) is about the busy samples
	if (a == "idle")
		next
	busy += c
	task[comm] += c
	selfraw[fr[nf]] += c
	selfeff[fr[e]] += c
	delete seen
	for (i = 2; i <= nf; i++) {
		if (fr[i] in seen)
			continue
		seen[fr[i]] = 1
		incl[fr[i]] += c
	}
	# the outermost driver frame: what lies below it the driver called
	drv = 0
	for (i = 2; i <= nf; i++)
		if (fr[i] ~ /^(softhca|rdma_rxe)`/) {
			drv = i
			break
		}
	# the stack as one string, for "stack:" groups, and its part below
	# the driver frame up to the first interrupt
	whole = ""
	for (i = 2; i <= nf; i++)
		whole = whole ";" fr[i]
	below = ""
	if (drv)
		for (i = drv + 1; i <= nf && fr[i] !~ /^asm_/; i++)
			below = below ";" fr[i]
	for (g = 1; g <= ng; g++) {
		if (gstack[g]) {
			if (whole ~ gre[g])
				gcnt[g] += c
			if (drv && below ~ gre[g])
				gdrv[g] += c
			continue
		}
		for (i = 2; i <= nf; i++)
			if (fr[i] ~ gre[g]) {
				gcnt[g] += c
				break
			}
		# (not what an interrupt of the driver did)
		if (drv)
			for (i = drv + 1; i <= nf && fr[i] !~ /^asm_/; i++)
				if (fr[i] ~ gre[g]) {
					gdrv[g] += c
					break
				}
	}
	# softhca: the chain from the caller into softhca to the leaf, and
	# the call out of the innermost softhca frame
	o = 0
	for (i = 2; i <= nf; i++)
		if (fr[i] ~ /^softhca`/) {
			o = i
			break
		}
	if (o) {
		sh += c
		ch = ""
		for (i = (o > 2 ? o - 1 : o); i <= nf; i++)
			ch = ch (ch == "" ? "" : " > ") bare(fr[i])
		chains[ch] += c
		for (i = nf; i >= o; i--)
			if (fr[i] ~ /^softhca`/)
				break
		if (i == nf)
			out[bare(fr[i]) " (self)"] += c
		else
			out[bare(fr[i]) " -> " fr[i + 1]] += c
	}
}
END {
	if (tsv) {
		# for --compare: KIND NAME SAMPLES US
		for (i = 1; i <= na; i++)
			printf "area\t%s\t%d\t%s\n", aorder[i], area[aorder[i]], us(area[aorder[i]])
		printf "area\tbusy (all but idle)\t%d\t%s\n", busy, us(busy)
		for (g = 1; g <= ng; g++)
			printf "focus\t%s\t%d\t%s\n", gname[g], gcnt[g], us(gcnt[g])
		for (g = 1; g <= ng; g++)
			printf "drv\t%s\t%d\t%s\n", gname[g], gdrv[g], us(gdrv[g])
		exit
	}
	if (ops > 0)
		printf "  %d %s in the window; us/%s: CPU time per %s (both CPUs, under perf)\n\n",
			ops, unit == "msg/s" ? "messages" : "operations", unit == "msg/s" ? "msg" : "op",
			unit == "msg/s" ? "message" : "operation"
	u = unit == "msg/s" ? "us/msg" : "us/op"
	printf "  0. Busy samples by task (kworker: workqueue workers; swapper: interrupts on an idle CPU)\n"
	cmd = "sort -t '\t' -k1,1nr | head -n 8 | cut -f2-"
	for (t in task)
		printf "%d\t     %-34s %8d %7s %7s\n", task[t], t, task[t], pct(task[t], busy), us(task[t]) | cmd
	close(cmd)
	printf "\n"
	printf "  1. Samples by area (charged to the sampled function; irq-enable points to their caller)\n"
	printf "     %-34s %8s %7s %7s %7s\n", "area", "samples", "all", "busy", u
	for (i = 1; i <= na; i++) {
		a = aorder[i]
		if (!(a in area))
			continue
		printf "     %-34s %8d %7s %7s %7s\n", a, area[a], pct(area[a], total),
			a == "idle" ? "" : pct(area[a], busy), us(area[a])
	}
	printf "     %-34s %8d %7s %7s %7s\n", "total", total, pct(total, total), pct(busy, busy), ""
	printf "     %-34s %8d %7s %7s %7s\n", "busy (all but idle)", busy, pct(busy, total), "", us(busy)
	printf "\n  2. Focus: busy samples with these functions anywhere on the stack (inclusive);\n"
	printf "     drv: only where a driver function (softhca or rdma_rxe) called them (not in interrupts)\n"
	printf "     %-50s %7s %7s %7s %7s %7s\n", "group", "samples", "all", "busy", u, "drv"
	for (g = 1; g <= ng; g++)
		if (gcnt[g] > 0)
			printf "     %-50s %7d %7s %7s %7s %7s\n", substr(gname[g], 1, 50), gcnt[g],
				pct(gcnt[g], total), pct(gcnt[g], busy), us(gcnt[g]), pct(gdrv[g], busy)
	printf "\n  3. Top %d symbols by self samples, the larger of self and eff (self: leaf; eff: irq-enable points charged to the caller; incl: anywhere on the stack; %% of busy)\n", top
	printf "     %6s %6s %6s  %-44s %s\n", "self", "eff", "incl", "symbol", "module"
	cmd = "sort -t '\t' -k1,1nr -k2,2nr | head -n " top " | cut -f3-"
	for (f in incl) {
		if (f == "[user]" || f ~ IDLE)
			continue
		if (!(f in selfraw) && !(f in selfeff))
			continue
		m = "kernel"
		s = f
		if (index(f, "`")) {
			m = substr(f, 1, index(f, "`") - 1)
			s = substr(f, index(f, "`") + 1)
		}
		printf "%d\t%d\t     %6s %6s %6s  %-44s %s\n",
			(selfraw[f] > selfeff[f] ? selfraw[f] : selfeff[f]), incl[f],
			pct(selfraw[f], busy), pct(selfeff[f], busy), pct(incl[f], busy), s, m | cmd
	}
	close(cmd)
	printf "\n  4. softhca: %d samples (%s of busy) have a softhca frame\n", sh, pct(sh, busy)
	if (sh > 0) {
		printf "     a) softhca's calls out (innermost softhca function -> callee), inclusive, %% of busy\n"
		cmd = "sort -t '\t' -k1,1nr | head -n " nchains " | cut -f2-"
		for (k in out)
			printf "%d\t     %6s  %s\n", out[k], pct(out[k], busy), k | cmd
		close(cmd)
		printf "     b) top %d chains: caller into softhca > ... > sampled function, %% of busy\n", nchains
		for (k in chains)
			printf "%d\t     %6s  %s\n", chains[k], pct(chains[k], busy), k | cmd
		close(cmd)
	}
}
EOF
}

if [ "$COMPARE" = shares ]; then
	shares ${CELLS[@]+"${CELLS[@]}"}
	exit 0
elif [ -n "$COMPARE" ]; then
	compare ${CELLS[@]+"${CELLS[@]}"}
	exit 0
fi
if [ -n "$ANALYZE" ]; then
	[ -r "$ANALYZE" ] || die "$ANALYZE not found"
	metaf=${ANALYZE%.folded}.meta
	[ -r "$metaf" ] || metaf=/dev/null
	report "$ANALYZE" "$metaf"
	exit 0
fi

if [ -n "$FROM_CONSOLE" ]; then
	[ -r "$FROM_CONSOLE" ] || die "$FROM_CONSOLE not found"
	FROM_CONSOLE=$(readlink -f "$FROM_CONSOLE")
	TMP=$(mktemp -d "${TMPDIR:-/tmp}/softhca-prof.XXXXXX")
	tr -d '\r' <"$FROM_CONSOLE" >"$TMP/console.txt"
	FROM_CONSOLE=$TMP/console.txt
fi

# ---- cells --------------------------------------------------------------------------

if [ -z "$FROM_CONSOLE" ]; then

[ ${#CELLS[@]} -gt 0 ] || die "no cell given (see --help), e.g. dp:write:64"
GCELLS=()
for c in "${CELLS[@]}"; do
	IFS=: read -r -a p <<<"$c"
	case ${p[0]:-} in
	mr)
		t=$(echo "${p[1]:-}" | tr '[:upper:]' '[:lower:]' | tr -d '_-')
		case $t in
		memreg) t=mem_reg ;;
		sggaps) t=sg_gaps ;;
		integrity|user|umem|core|dma|dm) ;;
		*) die "cell $c: MR type must be mem_reg, sg_gaps, integrity, user, umem, core, dma or dm" ;;
		esac
		[ ${#p[@]} -le 3 ] || die "cell $c: mr:TYPE[:DEV]"
		d=${p[2]:-softhca0}
		[[ $d =~ ^[a-z_]+[0-9]+$ ]] || die "cell $c: bad device '$d'"
		GCELLS+=("mr:$t:$d")
		;;
	dp)
		o=$(echo "${p[1]:-}" | tr '[:upper:]' '[:lower:]')
		case $o in write|read|send) ;; *) die "cell $c: OP must be write, read or send" ;; esac
		s=${p[2]:-}
		case $s in 64|4096|65536|1048576) ;; *) die "cell $c: SIZE must be 64, 4096, 65536 or 1048576" ;; esac
		a=${p[3]:-softhca0} b=${p[4]:-softhca1}
		[ ${#p[@]} -le 5 ] || die "cell $c: dp:OP:SIZE[:A:B]"
		[[ $a$b =~ ^[a-z_]+[0-9]+[a-z_]+[0-9]+$ ]] || die "cell $c: bad pair '$a:$b'"
		GCELLS+=("dp:$o:$s:$a:$b")
		;;
	*) die "cell $c: must start with mr: or dp:" ;;
	esac
done
# one module run per device (mr) or pair (dp)
nkeys=$(printf '%s\n' "${GCELLS[@]}" | sed -E 's/^(mr):[^:]*:/\1:/; s/^(dp):[^:]*:[^:]*:/\1:/' | sort -u | wc -l)

# ---- perf ------------------------------------------------------------------------------

is_elf() { [ "$(head -c 4 "$1" 2>/dev/null | od -An -c | tr -d ' ')" = '177ELF' ]; }
find_perf() {
	local p
	if [ -n "${PERF:-}" ]; then
		p=$(command -v "$PERF" || true)
		[ -n "$p" ] && is_elf "$(readlink -f "$p")" && { readlink -f "$p"; return 0; }
		return 1
	fi
	# Debian's linux-perf: perf_<version> behind a wrapper, or perf itself
	for p in $(find /usr/bin -maxdepth 1 -name 'perf_[0-9]*' 2>/dev/null | sort -V -r) /usr/bin/perf; do
		if [ -x "$p" ] && is_elf "$(readlink -f "$p")"; then
			readlink -f "$p"
			return 0
		fi
	done
	return 1
}
if ! PERF_BIN=$(find_perf); then
	[ -z "${PERF:-}" ] || die "PERF=$PERF is not an executable ELF file"
	command -v apt-get >/dev/null || die "perf not found, and no apt-get to install linux-perf"
	note "perf not found: installing linux-perf (for this tool only)"
	sudo=
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	export DEBIAN_FRONTEND=noninteractive
	$sudo apt-get update -qq >/dev/null 2>&1 || true
	$sudo apt-get install -y -qq --no-install-recommends linux-perf >/tmp/softhca-perf-apt.log 2>&1 ||
		die "apt-get install linux-perf failed (log: /tmp/softhca-perf-apt.log)"
	PERF_BIN=$(find_perf) || die "linux-perf installed, but no perf binary found"
fi
if ldd "$PERF_BIN" | grep -q 'not found'; then
	die "$PERF_BIN misses libraries: $(ldd "$PERF_BIN" | grep 'not found' | tr -s ' \t' ' ')"
fi
note "perf: $PERF_BIN ($("$PERF_BIN" --version 2>/dev/null || echo '?'))"

# ---- the VM's other needs ----------------------------------------------------------

[ -r "$MODULE" ] || die "module $MODULE not found (make modules KDIR=/usr/src/linux-headers-$KVER)"
MODULE=$(readlink -f "$MODULE")
for t in qemu-system-x86_64 cpio busybox; do
	command -v "$t" >/dev/null || command -v "$t.static" >/dev/null || {
		note "$t missing: scripts/deps.sh vm build"
		"$ROOT/scripts/deps.sh" vm build
		break
	}
done
BENCH_KDIR=/usr/src/linux-headers-$KVER
[ -r "$BENCH_KDIR/Makefile" ] || "$ROOT/scripts/deps.sh" build
[ -r "$BENCH_KDIR/Makefile" ] || die "$BENCH_KDIR not found (install linux-headers-$KVER)"
mkdir -p "$CACHE/logs"
blog=$CACHE/logs/profile-build.log
note "building the benchmark modules in ${BENCH_DIR#"$ROOT"/}"
# serialised with tests/bench/run.sh, which builds the same directory
if ! flock "$CACHE/.bench-build.lock" make -C "$BENCH_KDIR" M="$BENCH_DIR" modules >"$blog" 2>&1; then
	cat "$blog" >&2
	die "building the benchmark modules failed (log: $blog)"
fi
for m in shca_mr_bench shca_dp_bench; do
	[ -r "$BENCH_DIR/$m.ko" ] || die "$BENCH_DIR/$m.ko was not built (log: $blog)"
done

TMP=$(mktemp -d "${TMPDIR:-/tmp}/softhca-prof.XXXXXX")
ov=$TMP/overlay
mkdir -p "$ov/usr/bin" "$ov/tests"
cp -L "$PERF_BIN" "$ov/usr/bin/perf"
cp "$BENCH_DIR/shca_mr_bench.ko" "$BENCH_DIR/shca_dp_bench.ko" "$ov/"
cp "$BENCH_DIR/bench-lib.sh" "$ov/tests/"

# ---- the run -------------------------------------------------------------------------------

TEST_TIMEOUT=$((300 + nkeys * 600 * (BASELINE + 2)))
[ -n "$TIMEOUT" ] || TIMEOUT=$((TEST_TIMEOUT + 200))
CONSOLE=$TMP/console.txt
cells_env=$(IFS=,; echo "${GCELLS[*]}")
VM_ARGS=(--module "$MODULE" --run "$BENCH_DIR/profile-guest.sh" --hub --overlay "$ov"
	--console "$CONSOLE" --test-timeout "$TEST_TIMEOUT" --timeout "$TIMEOUT" --label profile
	--env "PROF_CELLS=$cells_env" --env "PROF_FREQ=$FREQ" --env "PROF_ITERS=$ITERS"
	--env "PROF_PAGES=$PAGES" --env "PROF_MS=$CELL_MS" --env "PROF_DEPTH=$DEPTH"
	--env "PROF_REPS=$REPS"
	--env "PROF_BASELINE=$BASELINE" --env "PROF_CRNG=$CRNG_INIT"
	--env "PROF_EVENTS=$EVENTS")
if [ $VERBOSE = 1 ]; then
	VM_ARGS+=(-v)
else
	VM_ARGS+=(--show '^(profile|vm-init): |^  dmesg: ')
fi
note "cells: ${GCELLS[*]}"
vm_rc=0
"$ROOT/scripts/vm.sh" "${VM_ARGS[@]}" || vm_rc=$?
[ -r "$CONSOLE" ] || die "no console output from the VM (scripts/vm.sh exit status $vm_rc)"

fi	# not --from-console

# ---- the reports -------------------------------------------------------------------------------

# reports CONSOLE CELL...: cut each cell's records out of the guest's
# console, save them under $OUT and print the reports
reports() {
	local console=$1 cell name folded metaf modinfo_v modinfo_s
	shift
	mkdir -p "$OUT"
	modinfo_v=$(modinfo -F version "$MODULE" 2>/dev/null || true)
	modinfo_s=$(modinfo -F srcversion "$MODULE" 2>/dev/null || true)
	ok=1
	echo
	for cell in "$@"; do
		name=$(echo "$cell" | tr ':' '-')
		folded=$OUT/$name.folded
		metaf=$OUT/$name.meta
		awk -v c="$cell" '
			$0 == "=== PROF-CELL " c { on = 1; next }
			$0 == "=== PROF-CELL-END " c { on = 0; next }
			on && $1 == "prof-fold:" && $2 == c && NF == 4 { print $3, $4 }' "$console" >"$folded"
		{
			echo "cell $cell"
			echo "module $MODULE${modinfo_v:+ version $modinfo_v}${modinfo_s:+ srcversion $modinfo_s}"
			awk -v c="$cell" '$1 == "prof-meta:" && $2 == c { $1 = ""; $2 = ""; sub(/^  /, ""); print }' "$console"
		} >"$metaf"
		if [ ! -s "$folded" ]; then
			note "cell $cell: no samples ($(meta_get "$metaf" error))"
			ok=0
			continue
		fi
		report "$folded" "$metaf" | tee "$OUT/$name.txt"
		echo
	done
}

if [ -n "$FROM_CONSOLE" ]; then
	mapfile -t GCELLS < <(sed -n 's/^=== PROF-CELL \([^ ]*\)$/\1/p' "$FROM_CONSOLE")
	[ ${#GCELLS[@]} -gt 0 ] || die "no cells in $FROM_CONSOLE"
	reports "$FROM_CONSOLE" "${GCELLS[@]}"
else
	mkdir -p "$OUT"
	cp "$CONSOLE" "$OUT/console.txt"
	reports "$CONSOLE" "${GCELLS[@]}"
fi
note "saved to ${OUT#"$ROOT"/}/: CELL.txt (report), CELL.folded (flamegraph.pl input), CELL.meta, console.txt"
[ "$ok" = 1 ] && [ "${vm_rc:-0}" = 0 ] || exit 1
exit 0
}
