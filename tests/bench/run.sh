#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# The benchmarks (make bench): boot the VM of scripts/vm.sh once with
# eth0 and eth1 on one QEMU hub, run tests/bench/mr-bench.sh in it
# (softhca0 vs rxe0, softhca1 vs rxe1), print its tables and save them
# under build/bench/, each with its plot data (.dat) and, with gnuplot
# (Debian package gnuplot-nox; without it the plots are skipped, with a
# note), its plot (.png, from tests/bench/*.gp).
# The method (tests/bench/bench-lib.sh): every cell runs BENCH_REPS times
# (the pi, frwr, ulp and nvmepi parts: their own *_REPS), the devices
# taking turns in ABBA order (A B, B A, A B, ...), every run after a
# warm-up on its device; the tables show the median of the runs and their
# spread, (max - min) / median, and mark the cells whose spread is over
# 10 % as noisy ("*"), listing their runs in the order they ran; the
# plots show the median and the range.
#   mr-bench.txt   the MR registration benchmark from the kernel
#                  (tests/bench/shca_mr_bench.ko, softhca0 vs rxe0, both on
#                  eth0; USER reg+dereg next to its floor, ib_umem_get +
#                  ib_umem_release of the same memory), followed by the
#                  other tables; mr-bench.dat, mr-bench.png
#   reg-bench.txt  the userspace MR benchmark tests/bench/shca_reg_bench
#                  (ibv_reg_mr + ibv_dereg_mr, 4 KiB .. 1 GiB, same
#                  devices, next to the floor: ib_umem_get +
#                  ib_umem_release of the same buffer timed in the kernel
#                  by tests/bench/shca_umem_bench.ko; and on-demand
#                  paging: the same pairs with IBV_ACCESS_ON_DEMAND, and
#                  with ibv_advise_mr(PREFETCH_WRITE) of the whole region
#                  in between, the first-touch cost; n/a on rxe0 without
#                  ODP); reg-bench.dat, reg-bench.png (microseconds
#                  against the size)
#   dp-bench.txt   the data-path benchmark tests/bench/dp-bench.sh (RDMA
#                  WRITE/READ/SEND throughput and latency, softhca0 ->
#                  softhca1 vs rxe0 -> rxe1 vs memcpy, from the kernel with
#                  tests/bench/shca_dp_bench.ko and from userspace with
#                  perftest, one run per perftest cell);
#                  dp-bench-bw.dat/.png (kernel throughput against the
#                  message size), dp-bench-lat.dat/.png (kernel latency)
#   pi-bench.txt   the T10-DIF engine benchmark tests/bench/pi-bench.sh
#                  (tests/bench/shca_pi_bench.ko: RDMA WRITE through
#                  integrity MRs - PI insert, strip/verify, pass, IP
#                  checksum to CRC - vs plain MRs vs crc_t10dif() and
#                  memcpy() on one CPU), and pi-bench.dat and, with
#                  gnuplot (Debian package gnuplot-nox), pi-bench.png
#                  plotted from it by tests/bench/pi-bench.gp
#   frwr-bench.txt the FRWR cycle benchmark tests/bench/frwr-bench.sh
#                  (tests/bench/shca_frwr_bench.ko: nvme-rdma's per-I/O
#                  ib_map_mr_sg + REG_MR + SEND, the target's RDMA
#                  READ/WRITE through the rkey + SEND_WITH_INV, or LOCAL_INV,
#                  at 4 KiB, 64 KiB and 1 MiB, softhca0 -> softhca1 vs
#                  rxe0 -> rxe1 vs memcpy()), and frwr-bench.dat and, with
#                  gnuplot, frwr-bench.png plotted from it by
#                  tests/bench/frwr-bench.gp
#   rings-bench.txt  the userspace ring benchmark tests/bench/rings-bench.sh
#                  (issue 12): perftest's ib_write_bw and ib_send_bw
#                  message rate and ib_write_lat and ib_send_lat typical
#                  latency at 64 B, 4 KiB and 1 MiB (--use_old_post_send),
#                  softhca0 -> softhca1 with the provider's mapped send and
#                  receive rings vs the same with SOFTHCA_RINGS=0 (a
#                  system call per verb) vs rxe0 -> rxe1, the three in
#                  ABBA order; rings-bench.dat and, with gnuplot,
#                  rings-bench.png (message rate and latency against the
#                  size) plotted from it by tests/bench/rings-bench.gp
#   ulp-bench.txt  the ULP benchmark tests/bench/ulp-bench.sh (issue 10):
#                  fio over nvme-rdma -> nvmet-rdma on softhca0 (eth0) vs
#                  on rxe0 (eth1) vs the null_blk behind them without RDMA,
#                  4 KiB random-read IOPS and 128 KiB sequential read and
#                  write throughput; rdma_cm connection setup with cmtime.
#                  The guest gets the host's fio (and its ~80 MB of
#                  libraries; about 36 MB more initramfs) for this and
#                  the next part only.
#   nvme-pi-bench.txt  nvme-rdma -> nvmet-rdma with T10-PI vs without PI
#                  (tests/bench/nvme-pi-bench.sh): fio over softhca0 with
#                  PI, over softhca0 without, and over rxe0 without, one
#                  scsi_debug disk with DIF type 1 behind all three; 4 KiB
#                  random and 128 KiB sequential reads and writes; and
#                  nvme-pi-bench.dat and, with gnuplot, nvme-pi-bench.png
#                  plotted from it by tests/bench/nvme-pi-bench.gp
#   wire-bench.txt the wire benchmark tests/bench/wire-bench.sh (issue 14),
#                  in a boot of its own: the two guests of scripts/wire.sh
#                  (scripts/wire.sh --run), softhca <-> softhca vs rxe <->
#                  rxe across their link, one driver loaded at a time, in
#                  ABBA order: ib_write_bw, ib_read_bw, ib_send_bw at 64 B,
#                  4 KiB, 64 KiB and 1 MiB, ib_write_lat and ib_send_lat at
#                  64 B, nvme-rdma -> nvmet-rdma sequential write and read
#                  (dd, 1 MiB, O_DIRECT); wire-bench.dat and, with
#                  gnuplot, wire-bench.png (tests/bench/wire-bench.gp);
#                  the guests' consoles in build/bench/wire/
#
# Usage: tests/bench/run.sh [--only PARTS] [scripts/vm.sh options: -v,
#        --module PATH, --provider PATH, --timeout SECS, --test-timeout
#        SECS, --rebuild]
#   --only PARTS   run only these parts, comma separated: mr (the MR
#                  registration table), reg (userspace), dp (data path),
#                  pi (T10-DIF engine), frwr (FRWR cycle), rings
#                  (userspace rings vs system calls vs rxe), ulp, nvmepi
#                  (NVMe with PI vs without), wire (two guests, a boot
#                  of their own); e.g. --only frwr. The combined
#                  mr-bench.txt is written only when mr is one of them.
#
# Environment:
#   VM_TCG_THREAD (default multi here; scripts/vm.sh's own default is
#     single): without KVM, the guest's two vCPUs run on two host threads,
#     as two real CPUs would. Single-threaded TCG interleaves them on one,
#     which hides what a hand-off between CPUs costs: before post_send
#     executed small requests itself, 64-byte kernel WRITEs ran at 228k
#     msg/s single-threaded and 65k multi-threaded, where post_send and
#     the work item contend for the workqueue's and the CQ's locks
#     (tests/bench/profile.sh --mttcg)
#   BENCH_REPS (default 3): runs of every cell of the userspace MR, ring and
#     kernel data-path tables (median and spread)
#   BENCH_MR_REPS (default 15) and BENCH_ITERS (default 5000): runs of every
#     cell of the MR table and operations per run (shca_mr_bench.ko reps=
#     and iters=): under TCG runs of one MR cell differ by up to 2x, and
#     the median of 15 short runs held where 3 long ones did not (about
#     25 s); BENCH_PAGES (default 16): its pages=
#   BENCH_REG_SECS (default 0.5): shca_reg_bench's time per cell
#   BENCH_REG_MIB (default 1024): shca_reg_bench's largest region in MiB
#     (1..1024; the sizes 4 KiB, 64 KiB, 1 MiB, 16 MiB, 256 MiB, 1 GiB up
#     to it)
#   BENCH_DP_MS (default 300): kernel ms per data-path cell
#   BENCH_DP_KBUDGET (default from the above, about 4 min): s after which
#     the remaining kernel data-path cells are skipped
#   BENCH_DP_SECS (default 1): s per perftest run
#   BENCH_DP_BUDGET (default 200): s of perftest runs, after which the
#     remaining ones are skipped
#   BENCH_DP_PERFTEST=0: no perftest
#   BENCH_PI=0: no T10-DIF engine benchmark
#   BENCH_PI_MS (default 200): ms per T10-DIF cell
#   BENCH_PI_REPS (default 5): runs of each T10-DIF cell (median)
#   BENCH_PI_SLOTS (default 4): T10-DIF messages in flight
#   BENCH_PI_PAIRS (default softhca0:softhca1,softhca0:softhca0): the
#     device pairs of the T10-DIF benchmark
#   BENCH_PI_BUDGET (default from the above, about 4 min): s after which
#     the remaining T10-DIF cells are skipped
#   BENCH_FRWR=0: no FRWR cycle benchmark
#   BENCH_FRWR_MS (default 200): ms per FRWR cell
#   BENCH_FRWR_REPS (default 3): runs of each FRWR cell (median, spread)
#   BENCH_FRWR_QD (default 16): FRWR I/Os in flight
#   BENCH_FRWR_PAIRS (default softhca0:softhca1,rxe0:rxe1): the HOST:TARGET
#     device pairs of the FRWR benchmark, at most 4 (e.g.
#     softhca0:softhca0,rxe0:rxe0: each device talking to itself)
#   BENCH_FRWR_BUDGET (default from the above, about 4 min): s after
#     which the remaining FRWR cells are skipped
#   BENCH_RINGS=0: no ring benchmark
#   BENCH_RINGS_SECS (default 1): measured s per ib_*_bw run (64 B, 4 KiB)
#   BENCH_RINGS_MARGIN (default 1): s of warm-up before them (and after:
#     perftest -D SECS+2*MARGIN -f MARGIN)
#   BENCH_RINGS_BW_ITERS_1M (default 100): messages per 1 MiB ib_*_bw run
#   BENCH_RINGS_LAT_ITERS (default 200; 1 MiB: BENCH_RINGS_LAT_ITERS_1M,
#     default 20): ping-pongs per ib_*_lat run
#   BENCH_RINGS_BIG_SECS (default 20): the bound of a run with a fixed
#     count (a cell that hits it is skipped in later repetitions)
#   BENCH_RINGS_BUDGET (default from the above, about 12 min): s after
#     which the remaining perftest runs are skipped
#   BENCH_ULP=0: no ULP benchmark
#   BENCH_ULP_SECS (default 5): s per fio cell
#   BENCH_ULP_REPS (default 3): runs of each fio and cmtime cell (median)
#   BENCH_ULP_CONNS (default 100): cmtime's connections
#   BENCH_ULP_MIB (default 256): MiB of each block device fio uses
#   BENCH_ULP_BUDGET (default from the above, about 10 min): s after
#     which the remaining ULP cells are skipped
#   BENCH_PROFILE=0: no "where the time goes" table (with the mr or dp
#     part, tests/bench/profile.sh runs their main cells - MEM_REG, USER
#     and DMA on softhca0 and rxe0, 64-byte WRITE and SEND on both pairs -
#     under perf in a second boot, about 5 min, and the table of its
#     --shares follows the others: shares.txt)
#   BENCH_NVMEPI=0: no NVMe PI vs no PI benchmark
#   BENCH_NVMEPI_SECS (default 3): s per fio cell
#   BENCH_NVMEPI_REPS (default 3): runs of each cell (median and spread)
#   BENCH_NVMEPI_MIB (default 64): MiB of the scsi_debug disk (fio uses it all)
#   BENCH_NVMEPI_BUDGET (default from the above, about 4 min): s after
#     which the remaining cells are skipped
#   BENCH_WIRE=0: no wire benchmark (two guests, about 15-20 min)
#   BENCH_WIRE_TOOLS (default write_bw,read_bw,send_bw,write_lat,send_lat,nvme)
#     and BENCH_WIRE_SIZES (default 64,4096,65536,1048576): its cells (a
#     reduced set for trying it out: BENCH_REPS=1
#     BENCH_WIRE_TOOLS=write_bw,nvme BENCH_WIRE_SIZES=4096)
#   BENCH_WIRE_DRIVERS (default softhca,rxe): the driver pairs, in this
#     order first (softhca <-> softhca, rxe <-> rxe)
#   BENCH_WIRE_SECS (default 1) and BENCH_WIRE_MARGIN (default 1): measured
#     s and warm-up s of a bandwidth run below 1 MiB (perftest -D
#     SECS+2*MARGIN -f MARGIN)
#   BENCH_WIRE_ITERS_1M (default 20): messages of a 1 MiB bandwidth run
#   BENCH_WIRE_LAT_ITERS (default 200): ping-pongs of a latency run
#   BENCH_WIRE_BIG_SECS (default 40): the bound of a run with a count
#   BENCH_WIRE_NVME_MIB (default 64): MiB each dd moves
#   VM_TCG_THREAD also applies to the two guests of the wire part
# A short run: BENCH_ITERS=100 BENCH_REG_SECS=0.05 BENCH_DP_MS=20
#   BENCH_DP_PERFTEST=0 BENCH_PI_MS=20 BENCH_PI_REPS=1 BENCH_FRWR_MS=20
#   BENCH_FRWR_REPS=1 BENCH_RINGS_MARGIN=0 BENCH_ULP_SECS=1
#   BENCH_ULP_REPS=1 BENCH_NVMEPI_SECS=1 BENCH_NVMEPI_REPS=1 make bench
# Only the T10-DIF engine: tests/bench/run.sh --only pi (after make
#   modules; make bench BENCH_ARGS='--only pi' builds first)
# Only the ring comparison: tests/bench/run.sh --only rings (about 10 min)
# Only the userspace MR table, short: BENCH_REPS=2 BENCH_REG_SECS=0.1
#   BENCH_REG_MIB=256 BENCH_PROFILE=0 tests/bench/run.sh --only reg
#
# Exit status 0 only if all the tables of the parts that ran (eight with
# the T10-DIF, FRWR, ring, ULP and NVMe PI ones) were produced.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_DIR=$ROOT/tests/bench
OUT_DIR=$ROOT/build/bench
BENCH_OUT=$OUT_DIR/mr-bench.txt
MR_DAT=$OUT_DIR/mr-bench.dat
MR_PNG=$OUT_DIR/mr-bench.png
REG_OUT=$OUT_DIR/reg-bench.txt
REG_DAT=$OUT_DIR/reg-bench.dat
REG_PNG=$OUT_DIR/reg-bench.png
DP_OUT=$OUT_DIR/dp-bench.txt
DP_BW_DAT=$OUT_DIR/dp-bench-bw.dat
DP_BW_PNG=$OUT_DIR/dp-bench-bw.png
DP_LAT_DAT=$OUT_DIR/dp-bench-lat.dat
DP_LAT_PNG=$OUT_DIR/dp-bench-lat.png
PI_OUT=$OUT_DIR/pi-bench.txt
PI_DAT=$OUT_DIR/pi-bench.dat
PI_PNG=$OUT_DIR/pi-bench.png
FRWR_OUT=$OUT_DIR/frwr-bench.txt
FRWR_DAT=$OUT_DIR/frwr-bench.dat
FRWR_PNG=$OUT_DIR/frwr-bench.png
RINGS_OUT=$OUT_DIR/rings-bench.txt
RINGS_DAT=$OUT_DIR/rings-bench.dat
RINGS_PNG=$OUT_DIR/rings-bench.png
ULP_OUT=$OUT_DIR/ulp-bench.txt
NVMEPI_OUT=$OUT_DIR/nvme-pi-bench.txt
SHARES_OUT=$OUT_DIR/shares.txt
NVMEPI_DAT=$OUT_DIR/nvme-pi-bench.dat
NVMEPI_PNG=$OUT_DIR/nvme-pi-bench.png
BENCH_BIN=$OUT_DIR/bin
DEBIAN_KVER=
if [ -r "$ROOT/scripts/versions.env" ]; then
	# shellcheck disable=SC1091
	. "$ROOT/scripts/versions.env"
fi
KVER=${DEBIAN_KVER:-6.12.117+deb12-amd64}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/vm
BENCH_KO=$BENCH_DIR/shca_mr_bench.ko
DP_KO=$BENCH_DIR/shca_dp_bench.ko
PI_KO=$BENCH_DIR/shca_pi_bench.ko
FRWR_KO=$BENCH_DIR/shca_frwr_bench.ko
UMEM_KO=$BENCH_DIR/shca_umem_bench.ko

note() { echo "bench: $*"; }
die() { echo "bench: error: $*" >&2; exit 2; }
TMP=
DONE=0
# On any early exit (error, interrupt) still say that there is no table.
# shellcheck disable=SC2317
on_exit() {
	local rc=$?
	if [ -n "$TMP" ]; then rm -rf "$TMP"; fi
	if [ "$DONE" = 0 ]; then
		echo "bench: no table produced"
		[ "$rc" -ne 0 ] || rc=1
	fi
	exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT TERM

# ---- options and knobs -----------------------------------------------------------

VM_ARGS=()
WIRE_ARGS=()
MODULE=$ROOT/drivers/infiniband/sw/softhca/softhca.ko
TEST_TIMEOUT=300
HAVE_TIMEOUT=0
PARTS="mr reg dp pi frwr rings ulp nvmepi wire"
ONLY=$PARTS
while [ $# -gt 0 ]; do
	case $1 in
	-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; DONE=1; exit 0 ;;
	--only) ONLY=${2:?--only needs a list of parts}; shift ;;
	--only=*) ONLY=${1#*=} ;;
	--module) MODULE=${2:?--module needs a path}; VM_ARGS+=("$1" "$2"); shift ;;
	--module=*) MODULE=${1#*=}; VM_ARGS+=(--module "$MODULE") ;;
	--test-timeout) TEST_TIMEOUT=${2:?}; shift ;;
	--timeout) HAVE_TIMEOUT=1; VM_ARGS+=("$1" "${2:?$1 needs a value}"); shift ;;
	--timeout=*) HAVE_TIMEOUT=1; VM_ARGS+=("$1") ;;
	--provider) VM_ARGS+=("$1" "${2:?$1 needs a value}"); WIRE_ARGS+=("$1" "$2"); shift ;;
	--provider=*) VM_ARGS+=("$1"); WIRE_ARGS+=(--provider "${1#*=}") ;;
	-v|--verbose|--rebuild) VM_ARGS+=("$1"); WIRE_ARGS+=("$1") ;;
	*) die "unknown argument $1 (see --help)" ;;
	esac
	shift
done
[ -r "$MODULE" ] || die "module $MODULE not found (build it with 'make')"
ONLY=$(echo "$ONLY" | tr ',' ' ')
for p in $ONLY; do
	case " $PARTS " in
	*" $p "*) ;;
	*) die "--only: unknown part '$p' (parts: $PARTS)" ;;
	esac
done
# want PART: PART is to run
want() {
	case " $ONLY " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

BENCH_ITERS=${BENCH_ITERS:-5000}
BENCH_PAGES=${BENCH_PAGES:-16}
BENCH_REPS=${BENCH_REPS:-3}
BENCH_MR_REPS=${BENCH_MR_REPS:-15}
BENCH_REG_SECS=${BENCH_REG_SECS:-0.5}
BENCH_REG_MIB=${BENCH_REG_MIB:-1024}
BENCH_DP_MS=${BENCH_DP_MS:-300}
BENCH_DP_SECS=${BENCH_DP_SECS:-1}
BENCH_DP_BUDGET=${BENCH_DP_BUDGET:-200}
BENCH_DP_PERFTEST=${BENCH_DP_PERFTEST:-1}
case $BENCH_ITERS$BENCH_PAGES$BENCH_REPS$BENCH_MR_REPS in
*[!0-9]*) die "BENCH_ITERS='$BENCH_ITERS', BENCH_PAGES='$BENCH_PAGES', BENCH_REPS='$BENCH_REPS' and BENCH_MR_REPS='$BENCH_MR_REPS' must be whole numbers" ;;
esac
if [ "$BENCH_MR_REPS" -lt 1 ] || [ "$BENCH_MR_REPS" -gt 100 ]; then
	die "BENCH_MR_REPS must be 1..100"
fi
[ "$BENCH_ITERS" -gt 0 ] || die "BENCH_ITERS must be at least 1"
if [ "$BENCH_REPS" -lt 1 ] || [ "$BENCH_REPS" -gt 20 ]; then
	die "BENCH_REPS must be 1..20"
fi
if [ "$BENCH_PAGES" -lt 1 ] || [ "$BENCH_PAGES" -gt 256 ]; then
	die "BENCH_PAGES must be 1..256 (the module's limit)"
fi
[[ $BENCH_REG_SECS =~ ^[0-9]*\.?[0-9]+$ ]] || die "BENCH_REG_SECS='$BENCH_REG_SECS' must be a number of seconds"
if ! [[ $BENCH_REG_MIB =~ ^[0-9]+$ ]] || [ "$BENCH_REG_MIB" -lt 1 ] || [ "$BENCH_REG_MIB" -gt 1024 ]; then
	die "BENCH_REG_MIB='$BENCH_REG_MIB' must be 1..1024"
fi
# The userspace benchmark: per repetition 6 sizes x 7 columns (two
# devices pinned, on demand and on demand touched, and the floor), each
# its time plus up to 0.3 s of warm-up and the 1 GiB pairs under TCG;
# twice that, plus a minute for filling 1 GiB.
REG_TIMEOUT=0
if want reg; then
	REG_TIMEOUT=$(awk -v r="$BENCH_REPS" -v s="$BENCH_REG_SECS" \
		'BEGIN { printf "%d", 60 + 2 * r * 6 * 7 * (s + 0.3) }')
	TEST_TIMEOUT=$((TEST_TIMEOUT + REG_TIMEOUT))
fi
case $BENCH_DP_MS$BENCH_DP_SECS$BENCH_DP_BUDGET$BENCH_DP_PERFTEST in
*[!0-9]*) die "BENCH_DP_MS, BENCH_DP_SECS, BENCH_DP_BUDGET and BENCH_DP_PERFTEST must be whole numbers" ;;
esac
if [ "$BENCH_DP_MS" -lt 1 ] || [ "$BENCH_DP_MS" -gt 10000 ]; then
	die "BENCH_DP_MS must be 1..10000"
fi
if [ "$BENCH_DP_SECS" -lt 1 ] || [ "$BENCH_DP_SECS" -gt 60 ]; then
	die "BENCH_DP_SECS must be 1..60"
fi
case ${BENCH_DP_KBUDGET:-} in
*[!0-9]*) die "BENCH_DP_KBUDGET='$BENCH_DP_KBUDGET' must be a whole number" ;;
esac
# The kernel data-path cells: per repetition 20 cells (12 throughput, 8
# latency) per pair, 2 pairs, each its time plus about 0.4 s of set-up
# and warm-up under TCG, and 4 memcpy cells of half the time: twice that,
# plus a minute.
BENCH_DP_KBUDGET=${BENCH_DP_KBUDGET:-$((60 + 2 * BENCH_REPS * (40 * (BENCH_DP_MS + 400) + 2 * BENCH_DP_MS) / 1000))}
DP_TIMEOUT=0
if want dp; then
	# a cell begun just before the budget ran out, perftest, the table
	DP_TIMEOUT=$((BENCH_DP_KBUDGET + 180))
	[ "$BENCH_DP_PERFTEST" = 0 ] || DP_TIMEOUT=$((DP_TIMEOUT + BENCH_DP_BUDGET + 60))
	TEST_TIMEOUT=$((TEST_TIMEOUT + DP_TIMEOUT))
fi
BENCH_PI=${BENCH_PI:-1}
BENCH_PI_MS=${BENCH_PI_MS:-200}
BENCH_PI_REPS=${BENCH_PI_REPS:-5}
BENCH_PI_SLOTS=${BENCH_PI_SLOTS:-4}
BENCH_PI_PAIRS=${BENCH_PI_PAIRS:-softhca0:softhca1,softhca0:softhca0}
case $BENCH_PI$BENCH_PI_MS$BENCH_PI_REPS$BENCH_PI_SLOTS${BENCH_PI_BUDGET:-} in
*[!0-9]*) die "BENCH_PI, BENCH_PI_MS, BENCH_PI_REPS, BENCH_PI_SLOTS and BENCH_PI_BUDGET must be whole numbers" ;;
esac
if [ "$BENCH_PI_MS" -lt 1 ] || [ "$BENCH_PI_MS" -gt 10000 ]; then
	die "BENCH_PI_MS must be 1..10000"
fi
if [ "$BENCH_PI_REPS" -lt 1 ] || [ "$BENCH_PI_REPS" -gt 20 ]; then
	die "BENCH_PI_REPS must be 1..20"
fi
if [ "$BENCH_PI_SLOTS" -lt 1 ] || [ "$BENCH_PI_SLOTS" -gt 8 ]; then
	die "BENCH_PI_SLOTS must be 1..8 (the module's limit)"
fi
[[ $BENCH_PI_PAIRS =~ ^[A-Za-z0-9_]+:[A-Za-z0-9_]+(,[A-Za-z0-9_]+:[A-Za-z0-9_]+)?$ ]] ||
	die "BENCH_PI_PAIRS='$BENCH_PI_PAIRS' must be one or two A:B device pairs, comma separated"
[ "$BENCH_PI" != 0 ] || ONLY=$(echo " $ONLY " | sed 's/ pi / /')
# Each of the 4 interval-size combinations has 3 CPU cells and 5 device
# cells per pair, each taking its time plus about 0.15 s of set-up and
# draining under TCG: twice that, plus the setup.
pi_pairs=$(echo "$BENCH_PI_PAIRS" | tr ',' '\n' | wc -l)
BENCH_PI_BUDGET=${BENCH_PI_BUDGET:-$((60 + 2 * BENCH_PI_REPS * 4 * (3 + 5 * pi_pairs) * (BENCH_PI_MS + 150) / 1000))}
PI_TIMEOUT=0
if want pi; then
	# a cell started just before the budget ran out, table and cleanup
	PI_TIMEOUT=$((BENCH_PI_BUDGET + 180))
	TEST_TIMEOUT=$((TEST_TIMEOUT + PI_TIMEOUT))
fi
BENCH_FRWR=${BENCH_FRWR:-1}
BENCH_FRWR_MS=${BENCH_FRWR_MS:-200}
BENCH_FRWR_REPS=${BENCH_FRWR_REPS:-3}
BENCH_FRWR_QD=${BENCH_FRWR_QD:-16}
BENCH_FRWR_PAIRS=${BENCH_FRWR_PAIRS:-softhca0:softhca1,rxe0:rxe1}
[[ $BENCH_FRWR_PAIRS =~ ^[A-Za-z0-9_]+:[A-Za-z0-9_]+(,[A-Za-z0-9_]+:[A-Za-z0-9_]+){0,3}$ ]] ||
	die "BENCH_FRWR_PAIRS='$BENCH_FRWR_PAIRS' must be one to four A:B device pairs, comma separated"
case $BENCH_FRWR$BENCH_FRWR_MS$BENCH_FRWR_REPS$BENCH_FRWR_QD${BENCH_FRWR_BUDGET:-} in
*[!0-9]*) die "BENCH_FRWR, BENCH_FRWR_MS, BENCH_FRWR_REPS, BENCH_FRWR_QD and BENCH_FRWR_BUDGET must be whole numbers" ;;
esac
if [ "$BENCH_FRWR_MS" -lt 1 ] || [ "$BENCH_FRWR_MS" -gt 10000 ]; then
	die "BENCH_FRWR_MS must be 1..10000"
fi
if [ "$BENCH_FRWR_REPS" -lt 1 ] || [ "$BENCH_FRWR_REPS" -gt 20 ]; then
	die "BENCH_FRWR_REPS must be 1..20"
fi
if [ "$BENCH_FRWR_QD" -lt 1 ] || [ "$BENCH_FRWR_QD" -gt 32 ]; then
	die "BENCH_FRWR_QD must be 1..32 (the module's limit)"
fi
[ "$BENCH_FRWR" != 0 ] || ONLY=$(echo " $ONLY " | sed 's/ frwr / /')
# Per repetition 3 sizes x (6 cells per pair + memcpy), each taking its
# time plus about 0.5 s of set-up, warm-up and checking under TCG: twice
# that, plus the setup.
frwr_pairs=$(echo "$BENCH_FRWR_PAIRS" | tr ',' '\n' | wc -l)
BENCH_FRWR_BUDGET=${BENCH_FRWR_BUDGET:-$((60 + 2 * BENCH_FRWR_REPS * 3 * (6 * frwr_pairs + 1) * (BENCH_FRWR_MS + 500) / 1000))}
FRWR_TIMEOUT=0
if want frwr; then
	# a cell started just before the budget ran out, table and cleanup
	FRWR_TIMEOUT=$((BENCH_FRWR_BUDGET + 180))
	TEST_TIMEOUT=$((TEST_TIMEOUT + FRWR_TIMEOUT))
fi
BENCH_RINGS=${BENCH_RINGS:-1}
BENCH_RINGS_SECS=${BENCH_RINGS_SECS:-1}
BENCH_RINGS_MARGIN=${BENCH_RINGS_MARGIN:-1}
BENCH_RINGS_BW_ITERS_1M=${BENCH_RINGS_BW_ITERS_1M:-100}
BENCH_RINGS_LAT_ITERS=${BENCH_RINGS_LAT_ITERS:-200}
BENCH_RINGS_LAT_ITERS_1M=${BENCH_RINGS_LAT_ITERS_1M:-20}
BENCH_RINGS_BIG_SECS=${BENCH_RINGS_BIG_SECS:-20}
case $BENCH_RINGS$BENCH_RINGS_SECS$BENCH_RINGS_MARGIN$BENCH_RINGS_BW_ITERS_1M$BENCH_RINGS_LAT_ITERS$BENCH_RINGS_LAT_ITERS_1M$BENCH_RINGS_BIG_SECS${BENCH_RINGS_BUDGET:-} in
*[!0-9]*) die "BENCH_RINGS, BENCH_RINGS_SECS, BENCH_RINGS_MARGIN, BENCH_RINGS_BW_ITERS_1M, BENCH_RINGS_LAT_ITERS, BENCH_RINGS_LAT_ITERS_1M, BENCH_RINGS_BIG_SECS and BENCH_RINGS_BUDGET must be whole numbers" ;;
esac
if [ "$BENCH_RINGS_SECS" -lt 1 ] || [ "$BENCH_RINGS_SECS" -gt 60 ]; then
	die "BENCH_RINGS_SECS must be 1..60"
fi
[ "$BENCH_RINGS_MARGIN" -le 10 ] || die "BENCH_RINGS_MARGIN must be 0..10"
if [ "$BENCH_RINGS_BW_ITERS_1M" -lt 5 ] || [ "$BENCH_RINGS_LAT_ITERS" -lt 5 ] ||
	[ "$BENCH_RINGS_LAT_ITERS_1M" -lt 5 ]; then
	die "BENCH_RINGS_BW_ITERS_1M, BENCH_RINGS_LAT_ITERS and BENCH_RINGS_LAT_ITERS_1M must be at least 5 (perftest's minimum)"
fi
if [ "$BENCH_RINGS_BIG_SECS" -lt 5 ] || [ "$BENCH_RINGS_BIG_SECS" -gt 120 ]; then
	die "BENCH_RINGS_BIG_SECS must be 5..120"
fi
[ "$BENCH_RINGS" != 0 ] || ONLY=$(echo " $ONLY " | sed 's/ rings / /')
# Per repetition and column 4 bandwidth runs of their duration plus about
# 4 s of start-up under TCG, and 8 runs with a fixed count of about 5 s;
# rxe's 1 MiB cells hitting their bound once; plus a minute.
BENCH_RINGS_BUDGET=${BENCH_RINGS_BUDGET:-$((60 + 4 * BENCH_RINGS_BIG_SECS + BENCH_REPS * 3 * (4 * (BENCH_RINGS_SECS + 2 * BENCH_RINGS_MARGIN + 4) + 8 * 5)))}
RINGS_TIMEOUT=0
if want rings; then
	# a run started just before the budget ran out, the table
	RINGS_TIMEOUT=$((BENCH_RINGS_BUDGET + BENCH_RINGS_BIG_SECS + 2 * BENCH_RINGS_SECS + 120))
	TEST_TIMEOUT=$((TEST_TIMEOUT + RINGS_TIMEOUT))
fi
BENCH_ULP=${BENCH_ULP:-1}
BENCH_ULP_SECS=${BENCH_ULP_SECS:-5}
BENCH_ULP_REPS=${BENCH_ULP_REPS:-3}
BENCH_ULP_CONNS=${BENCH_ULP_CONNS:-100}
BENCH_ULP_MIB=${BENCH_ULP_MIB:-256}
case $BENCH_ULP$BENCH_ULP_SECS$BENCH_ULP_REPS$BENCH_ULP_CONNS$BENCH_ULP_MIB${BENCH_ULP_BUDGET:-} in
*[!0-9]*) die "BENCH_ULP, BENCH_ULP_SECS, BENCH_ULP_REPS, BENCH_ULP_CONNS, BENCH_ULP_MIB and BENCH_ULP_BUDGET must be whole numbers" ;;
esac
if [ "$BENCH_ULP_SECS" -lt 1 ] || [ "$BENCH_ULP_SECS" -gt 120 ]; then
	die "BENCH_ULP_SECS must be 1..120"
fi
if [ "$BENCH_ULP_REPS" -lt 1 ] || [ "$BENCH_ULP_REPS" -gt 20 ]; then
	die "BENCH_ULP_REPS must be 1..20"
fi
if [ "$BENCH_ULP_CONNS" -lt 1 ] || [ "$BENCH_ULP_CONNS" -gt 1000 ]; then
	die "BENCH_ULP_CONNS must be 1..1000"
fi
if [ "$BENCH_ULP_MIB" -lt 16 ] || [ "$BENCH_ULP_MIB" -gt 1024 ]; then
	die "BENCH_ULP_MIB must be 16..1024 (the null_blk devices have 1 GiB)"
fi
# Twice what the 12 fio cells (about 1.5 s of start-up each under TCG)
# and the 2 cmtime cells per repetition need, plus the setup.
BENCH_ULP_BUDGET=${BENCH_ULP_BUDGET:-$((120 + BENCH_ULP_REPS * (12 * (2 * BENCH_ULP_SECS + 3) + 2 * (10 + BENCH_ULP_CONNS / 10))))}
[ "$BENCH_ULP" != 0 ] || ONLY=$(echo " $ONLY " | sed 's/ ulp / /')
ULP_TIMEOUT=0
if want ulp; then
	# a cell started just before the budget ran out, then table and cleanup
	ULP_TIMEOUT=$((BENCH_ULP_BUDGET + BENCH_ULP_SECS + 180))
	TEST_TIMEOUT=$((TEST_TIMEOUT + ULP_TIMEOUT))
	command -v fio >/dev/null ||
		note "warning: fio is not installed (scripts/deps.sh bench): no fio rows in the ULP table"
fi
BENCH_NVMEPI=${BENCH_NVMEPI:-1}
BENCH_NVMEPI_SECS=${BENCH_NVMEPI_SECS:-3}
BENCH_NVMEPI_REPS=${BENCH_NVMEPI_REPS:-3}
BENCH_NVMEPI_MIB=${BENCH_NVMEPI_MIB:-64}
case $BENCH_NVMEPI$BENCH_NVMEPI_SECS$BENCH_NVMEPI_REPS$BENCH_NVMEPI_MIB${BENCH_NVMEPI_BUDGET:-} in
*[!0-9]*) die "BENCH_NVMEPI, BENCH_NVMEPI_SECS, BENCH_NVMEPI_REPS, BENCH_NVMEPI_MIB and BENCH_NVMEPI_BUDGET must be whole numbers" ;;
esac
if [ "$BENCH_NVMEPI_SECS" -lt 1 ] || [ "$BENCH_NVMEPI_SECS" -gt 120 ]; then
	die "BENCH_NVMEPI_SECS must be 1..120"
fi
if [ "$BENCH_NVMEPI_REPS" -lt 1 ] || [ "$BENCH_NVMEPI_REPS" -gt 20 ]; then
	die "BENCH_NVMEPI_REPS must be 1..20"
fi
if [ "$BENCH_NVMEPI_MIB" -lt 16 ] || [ "$BENCH_NVMEPI_MIB" -gt 1024 ]; then
	die "BENCH_NVMEPI_MIB must be 16..1024 (the scsi_debug disk lives in the guest's 3 GiB)"
fi
# 4 fio jobs x 3 columns per repetition, about 1 s of fio start-up each
# under TCG: this, plus a minute for setting up and slack.
BENCH_NVMEPI_BUDGET=${BENCH_NVMEPI_BUDGET:-$((60 + BENCH_NVMEPI_REPS * 12 * (BENCH_NVMEPI_SECS + 2)))}
[ "$BENCH_NVMEPI" != 0 ] || ONLY=$(echo " $ONLY " | sed 's/ nvmepi / /')
NVMEPI_TIMEOUT=0
if want nvmepi; then
	# a cell started just before the budget ran out, then table and cleanup
	NVMEPI_TIMEOUT=$((BENCH_NVMEPI_BUDGET + BENCH_NVMEPI_SECS + 120))
	TEST_TIMEOUT=$((TEST_TIMEOUT + NVMEPI_TIMEOUT))
	command -v fio >/dev/null ||
		note "warning: fio is not installed (scripts/deps.sh bench): no numbers in the NVMe PI table"
fi
BENCH_WIRE=${BENCH_WIRE:-1}
BENCH_WIRE_TOOLS=${BENCH_WIRE_TOOLS:-write_bw,read_bw,send_bw,write_lat,send_lat,nvme}
BENCH_WIRE_SIZES=${BENCH_WIRE_SIZES:-64,4096,65536,1048576}
BENCH_WIRE_DRIVERS=${BENCH_WIRE_DRIVERS:-softhca,rxe}
BENCH_WIRE_SECS=${BENCH_WIRE_SECS:-1}
BENCH_WIRE_MARGIN=${BENCH_WIRE_MARGIN:-1}
BENCH_WIRE_ITERS_1M=${BENCH_WIRE_ITERS_1M:-20}
BENCH_WIRE_LAT_ITERS=${BENCH_WIRE_LAT_ITERS:-200}
BENCH_WIRE_BIG_SECS=${BENCH_WIRE_BIG_SECS:-40}
BENCH_WIRE_NVME_MIB=${BENCH_WIRE_NVME_MIB:-64}
case $BENCH_WIRE$BENCH_WIRE_SECS$BENCH_WIRE_MARGIN$BENCH_WIRE_ITERS_1M$BENCH_WIRE_LAT_ITERS$BENCH_WIRE_BIG_SECS$BENCH_WIRE_NVME_MIB in
*[!0-9]*) die "BENCH_WIRE, BENCH_WIRE_SECS, BENCH_WIRE_MARGIN, BENCH_WIRE_ITERS_1M, BENCH_WIRE_LAT_ITERS, BENCH_WIRE_BIG_SECS and BENCH_WIRE_NVME_MIB must be whole numbers" ;;
esac
[[ $BENCH_WIRE_TOOLS =~ ^(write_bw|read_bw|send_bw|write_lat|send_lat|nvme)(,(write_bw|read_bw|send_bw|write_lat|send_lat|nvme))*$ ]] ||
	die "BENCH_WIRE_TOOLS='$BENCH_WIRE_TOOLS': a comma-separated list of write_bw, read_bw, send_bw, write_lat, send_lat, nvme"
[[ $BENCH_WIRE_SIZES =~ ^[0-9]+(,[0-9]+)*$ ]] ||
	die "BENCH_WIRE_SIZES='$BENCH_WIRE_SIZES': comma-separated message sizes in bytes"
[[ $BENCH_WIRE_DRIVERS =~ ^(softhca|rxe)(,(softhca|rxe))?$ ]] ||
	die "BENCH_WIRE_DRIVERS='$BENCH_WIRE_DRIVERS': softhca,rxe, rxe,softhca, softhca or rxe"
if [ "$BENCH_WIRE_SECS" -lt 1 ] || [ "$BENCH_WIRE_SECS" -gt 60 ] || [ "$BENCH_WIRE_MARGIN" -gt 10 ]; then
	die "BENCH_WIRE_SECS must be 1..60, BENCH_WIRE_MARGIN 0..10"
fi
if [ "$BENCH_WIRE_ITERS_1M" -lt 5 ] || [ "$BENCH_WIRE_LAT_ITERS" -lt 5 ]; then
	die "BENCH_WIRE_ITERS_1M and BENCH_WIRE_LAT_ITERS must be at least 5 (perftest's minimum)"
fi
if [ "$BENCH_WIRE_BIG_SECS" -lt 5 ] || [ "$BENCH_WIRE_BIG_SECS" -gt 300 ]; then
	die "BENCH_WIRE_BIG_SECS must be 5..300"
fi
if [ "$BENCH_WIRE_NVME_MIB" -lt 4 ] || [ "$BENCH_WIRE_NVME_MIB" -gt 1024 ]; then
	die "BENCH_WIRE_NVME_MIB must be 4..1024 (the null_blk disk has 1 GiB)"
fi
[ "$BENCH_WIRE" != 0 ] || ONLY=$(echo " $ONLY " | sed 's/ wire / /')
# The bound of the wire benchmark in the guests: per repetition and
# driver a minute of set-up and warm-up, every bandwidth run below 1 MiB
# its duration plus 15 s (perftest's start-up under TCG, the rendezvous),
# every run with a count its bound, and the NVMe cells a minute plus a
# second per MiB each way.
WIRE_TIMEOUT=0
if want wire; then
	wsmall=0 wbig=0 wlat=0 wnvme=0
	for t in ${BENCH_WIRE_TOOLS//,/ }; do
		case $t in
		*_bw)	for z in ${BENCH_WIRE_SIZES//,/ }; do
				if [ "$z" -ge 1048576 ]; then wbig=$((wbig + 1)); else wsmall=$((wsmall + 1)); fi
			done ;;
		*_lat) wlat=$((wlat + 1)) ;;
		nvme) wnvme=1 ;;
		esac
	done
	wdrivers=$(echo "$BENCH_WIRE_DRIVERS" | tr ',' '\n' | wc -l)
	WIRE_TIMEOUT=$((120 + BENCH_REPS * wdrivers * (60 + wsmall * (BENCH_WIRE_SECS + 2 * BENCH_WIRE_MARGIN + 15) + (wbig + wlat) * BENCH_WIRE_BIG_SECS + wnvme * (60 + 2 * BENCH_WIRE_NVME_MIB))))
fi
command -v gnuplot >/dev/null ||
	note "warning: gnuplot is not installed (scripts/deps.sh bench): no plots"
# as scripts/vm.sh computes it, without its 900 s cap
[ "$HAVE_TIMEOUT" = 1 ] || VM_ARGS+=(--timeout "$((120 + TEST_TIMEOUT + 40))")
ONLY=$(echo "$ONLY" | xargs)
[ -n "$ONLY" ] || die "no part left to run (--only, BENCH_PI=0, BENCH_FRWR=0, BENCH_RINGS=0, BENCH_ULP=0, BENCH_NVMEPI=0, BENCH_WIRE=0)"
# the parts of the one-guest boot (the wire part boots two guests of its own)
VM_PARTS=$(echo " $ONLY " | sed 's/ wire / /' | xargs)

# ---- the wire benchmark: two guests (scripts/wire.sh) ------------------------------

WIRE_OUT=$OUT_DIR/wire-bench.txt
WIRE_DAT=$OUT_DIR/wire-bench.dat
WIRE_PNG=$OUT_DIR/wire-bench.png
WIRE_SAVED=
# wire_part: boot the two guests of scripts/wire.sh once with
# tests/bench/wire-bench.sh as their only test, tabulate guest A's
# records (wire-bench.sh itself, WIRE_BENCH_RETAB) into WIRE_OUT and
# WIRE_DAT, plot WIRE_PNG; fails if there is no table
wire_part() {
	local wdir=$OUT_DIR/wire console recs wrc=0 wenv=() knobs=() e where
	[ -n "$TMP" ] || TMP=$(mktemp -d "${TMPDIR:-/tmp}/softhca-bench.XXXXXX")
	for e in BENCH_REPS BENCH_WIRE_TOOLS BENCH_WIRE_SIZES BENCH_WIRE_DRIVERS \
		BENCH_WIRE_SECS BENCH_WIRE_MARGIN BENCH_WIRE_ITERS_1M \
		BENCH_WIRE_LAT_ITERS BENCH_WIRE_BIG_SECS BENCH_WIRE_NVME_MIB; do
		wenv+=(--env "$e=${!e}")
		knobs+=("$e=${!e}")
	done
	note "wire: two guests, softhca <-> softhca vs rxe <-> rxe (tests/bench/wire-bench.sh, up to $((WIRE_TIMEOUT / 60)) min); consoles in ${wdir#"$ROOT"/}/softhca-softhca/"
	mkdir -p "$OUT_DIR"
	"$ROOT/scripts/wire.sh" ${WIRE_ARGS[@]+"${WIRE_ARGS[@]}"} --module "$MODULE" \
		--pair softhca:softhca --label wire-bench --out "$wdir" \
		--run "$BENCH_DIR/wire-bench.sh" --test-timeout "$WIRE_TIMEOUT" \
		--timeout $((WIRE_TIMEOUT + 300)) --show '^wire-rec: ' "${wenv[@]}" || wrc=$?
	console=$wdir/softhca-softhca/A.txt
	recs=$TMP/wire-recs.txt
	: >"$recs"
	if [ -r "$console" ]; then sed -n 's/^wire-rec: //p' "$console" >"$recs"; fi
	if ! grep -q -E '^(bw|lat|nvme|err) ' "$recs"; then
		note "wire: no records (scripts/wire.sh exit status $wrc; consoles in $wdir)"
		return 1
	fi
	[ "$wrc" = 0 ] || note "wire: scripts/wire.sh exit status $wrc: a step failed or the guests were stopped (the errors below the table; consoles in $wdir)"
	if [ -e /dev/kvm ] && [ -w /dev/kvm ]; then
		where="one boot of two QEMU KVM guests"
	else
		where="one boot of two QEMU TCG guests (software CPU emulation, no KVM; tcg thread=${VM_TCG_THREAD:-single}): absolute numbers are slow, compare the columns"
	fi
	{
		echo "Wire benchmark: softhca <-> softhca vs rxe <-> rxe across two guests, perftest and nvme-rdma (tests/bench/wire-bench.sh)"
		echo "Ran in $where; kernel $KVER, $(date -u '+%Y-%m-%d %H:%M UTC')."
		echo
		env "${knobs[@]}" WIRE_BENCH_RETAB="$recs" sh "$BENCH_DIR/wire-bench.sh" table
	} >"$WIRE_OUT.tmp"
	mv "$WIRE_OUT.tmp" "$WIRE_OUT"
	echo
	cat "$WIRE_OUT"
	echo
	WIRE_SAVED="${WIRE_OUT#"$ROOT"/}"
	{
		echo "# Wire benchmark (tests/bench/wire-bench.sh), kernel $KVER, $(date -u '+%Y-%m-%d %H:%M UTC')"
		echo "# MB/s per message size and driver pair: median, minimum, maximum of $BENCH_REPS runs"
		env "${knobs[@]}" WIRE_BENCH_RETAB="$recs" sh "$BENCH_DIR/wire-bench.sh" data
	} >"$WIRE_DAT"
	WIRE_SAVED="$WIRE_SAVED, ${WIRE_DAT#"$ROOT"/}"
	if ! command -v gnuplot >/dev/null; then
		note "no plot ${WIRE_PNG##*/}: gnuplot is not installed (scripts/deps.sh bench)"
	elif gnuplot -e "datafile='$WIRE_DAT'; outfile='$WIRE_PNG.tmp'; subtitle='$BENCH_REPS runs per cell, drivers in ABBA order; $(date -u '+%Y-%m-%d %H:%M UTC')'" \
		"$BENCH_DIR/wire-bench.gp" 2>"$TMP/gnuplot-wire.err"; then
		mv "$WIRE_PNG.tmp" "$WIRE_PNG"
		WIRE_SAVED="$WIRE_SAVED, ${WIRE_PNG#"$ROOT"/} (plot)"
	else
		rm -f "$WIRE_PNG.tmp"
		note "gnuplot failed on wire-bench.gp:"
		sed 's/^/  /' "$TMP/gnuplot-wire.err" >&2
	fi
}
wire_ok=1
if want wire; then
	# two threads per guest, as for the one-guest boot below: with one,
	# a polling perftest and the guest's network path share a host thread
	export VM_TCG_THREAD=${VM_TCG_THREAD:-multi}
	wire_part || wire_ok=0
fi
if [ -z "$VM_PARTS" ]; then
	[ -z "$WIRE_SAVED" ] || note "saved to $WIRE_SAVED"
	[ "$wire_ok" = 1 ] || note "no wire table (see the output above)"
	DONE=1
	[ "$wire_ok" = 1 ] || exit 1
	exit 0
fi

# ---- the benchmark modules and programs --------------------------------------------

BENCH_KDIR=/usr/src/linux-headers-$KVER
[ -r "$BENCH_KDIR/Makefile" ] || die "$BENCH_KDIR not found (install linux-headers-$KVER)"
command -v make >/dev/null || die "make not found"
note "building $BENCH_KO, $UMEM_KO, $DP_KO, $PI_KO, $FRWR_KO and the benchmark programs"
mkdir -p "$CACHE/logs"
blog=$CACHE/logs/bench-build.log
# Serialise with other benchmark runs building the same directory.
if ! flock "$CACHE/.bench-build.lock" \
	make -C "$BENCH_KDIR" M="$BENCH_DIR" modules >"$blog" 2>&1; then
	cat "$blog" >&2
	die "building the benchmark module failed (log: $blog)"
fi
[ -r "$BENCH_KO" ] || die "$BENCH_KO was not built (log: $blog)"
[ -r "$DP_KO" ] || die "$DP_KO was not built (log: $blog)"
[ -r "$PI_KO" ] || die "$PI_KO was not built (log: $blog)"
[ -r "$FRWR_KO" ] || die "$FRWR_KO was not built (log: $blog)"
[ -r "$UMEM_KO" ] || die "$UMEM_KO was not built (log: $blog)"
if ! flock "$CACHE/.bench-build.lock" \
	make -C "$BENCH_DIR" OUT="$BENCH_BIN" >>"$blog" 2>&1; then
	cat "$blog" >&2
	die "building the benchmark programs failed (log: $blog)"
fi
grep -E 'warning:|error:' "$blog" >&2 || true

# What the guest gets besides scripts/vm.sh's usual files: the modules in
# its root, dp-bench.sh next to the tests, the programs in its $PATH.
[ -n "$TMP" ] || TMP=$(mktemp -d "${TMPDIR:-/tmp}/softhca-bench.XXXXXX")
ov=$TMP/overlay
mkdir -p "$ov/tests/bin"
cp "$BENCH_KO" "$UMEM_KO" "$DP_KO" "$PI_KO" "$FRWR_KO" "$ov/"
install -m 0755 "$BENCH_DIR/dp-bench.sh" "$ov/tests/dp-bench.sh"
install -m 0755 "$BENCH_DIR/pi-bench.sh" "$ov/tests/pi-bench.sh"
install -m 0755 "$BENCH_DIR/frwr-bench.sh" "$ov/tests/frwr-bench.sh"
install -m 0755 "$BENCH_DIR/rings-bench.sh" "$ov/tests/rings-bench.sh"
install -m 0755 "$BENCH_DIR/ulp-bench.sh" "$ov/tests/ulp-bench.sh"
install -m 0755 "$BENCH_DIR/nvme-pi-bench.sh" "$ov/tests/nvme-pi-bench.sh"
install -m 0644 "$BENCH_DIR/ulp-lib.sh" "$ov/tests/ulp-lib.sh"
install -m 0644 "$BENCH_DIR/bench-lib.sh" "$ov/tests/bench-lib.sh"
for f in "$BENCH_BIN"/*; do
	if [ -f "$f" ] && [ -x "$f" ]; then cp -L "$f" "$ov/tests/bin/"; fi
done
# fio for the ULP benchmarks only: scripts/vm.sh adds the libraries that
# ldd lists for it (not in scripts/vm/binaries.list, which every test
# boot carries)
if { want ulp || want nvmepi; } && command -v fio >/dev/null; then
	cp -L "$(command -v fio)" "$ov/tests/bin/"
fi

# ---- the run -----------------------------------------------------------------------

CLEAN=$TMP/console.txt
vm_rc=0
export VM_TCG_THREAD=${VM_TCG_THREAD:-multi}
"$ROOT/scripts/vm.sh" "${VM_ARGS[@]}" --run "$BENCH_DIR/mr-bench.sh" --hub \
	--overlay "$ov" --console "$CLEAN" --test-timeout "$TEST_TIMEOUT" \
	--show '^(mr-bench|dp-bench|pi-bench|frwr-bench|rings-bench|ulp-bench|nvme-pi-bench|vm-init): |^  dmesg: |^VMTEST mr-bench ' \
	--env "BENCH_ITERS=$BENCH_ITERS" --env "BENCH_PAGES=$BENCH_PAGES" \
	--env "BENCH_REPS=$BENCH_REPS" --env "BENCH_REG_TIMEOUT=$REG_TIMEOUT" \
	--env "BENCH_MR_REPS=$BENCH_MR_REPS" \
	--env "BENCH_REG_SECS=$BENCH_REG_SECS" --env "BENCH_REG_MIB=$BENCH_REG_MIB" \
	--env "BENCH_DP_MS=$BENCH_DP_MS" \
	--env "BENCH_DP_SECS=$BENCH_DP_SECS" --env "BENCH_DP_BUDGET=$BENCH_DP_BUDGET" \
	--env "BENCH_DP_PERFTEST=$BENCH_DP_PERFTEST" --env "BENCH_ULP=$BENCH_ULP" \
	--env "BENCH_DP_KBUDGET=$BENCH_DP_KBUDGET" --env "BENCH_DP_TIMEOUT=$DP_TIMEOUT" \
	--env "BENCH_ULP_SECS=$BENCH_ULP_SECS" --env "BENCH_ULP_REPS=$BENCH_ULP_REPS" \
	--env "BENCH_ULP_CONNS=$BENCH_ULP_CONNS" --env "BENCH_ULP_MIB=$BENCH_ULP_MIB" \
	--env "BENCH_ULP_BUDGET=$BENCH_ULP_BUDGET" --env "BENCH_ULP_TIMEOUT=$ULP_TIMEOUT" \
	--env "BENCH_PI_MS=$BENCH_PI_MS" --env "BENCH_PI_REPS=$BENCH_PI_REPS" \
	--env "BENCH_PI_SLOTS=$BENCH_PI_SLOTS" --env "BENCH_PI_PAIRS=$BENCH_PI_PAIRS" \
	--env "BENCH_PI_BUDGET=$BENCH_PI_BUDGET" --env "BENCH_PI_TIMEOUT=$PI_TIMEOUT" \
	--env "BENCH_FRWR_MS=$BENCH_FRWR_MS" --env "BENCH_FRWR_REPS=$BENCH_FRWR_REPS" \
	--env "BENCH_FRWR_QD=$BENCH_FRWR_QD" --env "BENCH_FRWR_BUDGET=$BENCH_FRWR_BUDGET" \
	--env "BENCH_FRWR_TIMEOUT=$FRWR_TIMEOUT" --env "BENCH_FRWR_PAIRS=$BENCH_FRWR_PAIRS" \
	--env "BENCH_RINGS_SECS=$BENCH_RINGS_SECS" --env "BENCH_RINGS_MARGIN=$BENCH_RINGS_MARGIN" \
	--env "BENCH_RINGS_BW_ITERS_1M=$BENCH_RINGS_BW_ITERS_1M" \
	--env "BENCH_RINGS_LAT_ITERS=$BENCH_RINGS_LAT_ITERS" \
	--env "BENCH_RINGS_LAT_ITERS_1M=$BENCH_RINGS_LAT_ITERS_1M" \
	--env "BENCH_RINGS_BIG_SECS=$BENCH_RINGS_BIG_SECS" \
	--env "BENCH_RINGS_BUDGET=$BENCH_RINGS_BUDGET" --env "BENCH_RINGS_TIMEOUT=$RINGS_TIMEOUT" \
	--env "BENCH_NVMEPI=$BENCH_NVMEPI" --env "BENCH_NVMEPI_SECS=$BENCH_NVMEPI_SECS" \
	--env "BENCH_NVMEPI_REPS=$BENCH_NVMEPI_REPS" --env "BENCH_NVMEPI_MIB=$BENCH_NVMEPI_MIB" \
	--env "BENCH_NVMEPI_BUDGET=$BENCH_NVMEPI_BUDGET" --env "BENCH_NVMEPI_TIMEOUT=$NVMEPI_TIMEOUT" \
	--env "BENCH_ONLY=$(echo "$VM_PARTS" | tr ' ' ',')" || vm_rc=$?
[ -r "$CLEAN" ] || die "no console output from the VM (scripts/vm.sh exit status $vm_rc)"

# ---- the tables --------------------------------------------------------------------

# guest_table START END PREFIX: the PREFIX lines between the markers
guest_table() {
	awk -v s="=== $1" -v e="=== $2" -v p="$3" '
		$0 == s { on = 1; next }
		$0 == e { on = 0; done = 1; next }
		on && index($0, p) == 1 { print substr($0, length(p) + 1) }
		END { exit !done }' "$CLEAN"
}
table=$TMP/table.txt
guest_table MR-BENCH-TABLE MR-BENCH-TABLE-END 'mr-table: ' >"$table" || : >"$table"
mrdata=$TMP/mr-data.txt
guest_table MR-BENCH-DATA MR-BENCH-DATA-END 'mr-data: ' >"$mrdata" || : >"$mrdata"
regtable=$TMP/reg-table.txt
guest_table REG-BENCH-TABLE REG-BENCH-TABLE-END 'reg-table: ' >"$regtable" || : >"$regtable"
regdata=$TMP/reg-data.txt
guest_table REG-BENCH-DATA REG-BENCH-DATA-END 'reg-data: ' >"$regdata" || : >"$regdata"
dptable=$TMP/dp-table.txt
guest_table DP-BENCH-TABLE DP-BENCH-TABLE-END 'dp-table: ' >"$dptable" || : >"$dptable"
dpbw=$TMP/dp-bw.txt
guest_table DP-BENCH-BW DP-BENCH-BW-END 'dp-bw: ' >"$dpbw" || : >"$dpbw"
dplat=$TMP/dp-lat.txt
guest_table DP-BENCH-LAT DP-BENCH-LAT-END 'dp-lat: ' >"$dplat" || : >"$dplat"
pitable=$TMP/pi-table.txt
guest_table PI-BENCH-TABLE PI-BENCH-TABLE-END 'pi-table: ' >"$pitable" || : >"$pitable"
pidata=$TMP/pi-data.txt
guest_table PI-BENCH-DATA PI-BENCH-DATA-END 'pi-data: ' >"$pidata" || : >"$pidata"
frwrtable=$TMP/frwr-table.txt
guest_table FRWR-BENCH-TABLE FRWR-BENCH-TABLE-END 'frwr-table: ' >"$frwrtable" || : >"$frwrtable"
frwrdata=$TMP/frwr-data.txt
guest_table FRWR-BENCH-DATA FRWR-BENCH-DATA-END 'frwr-data: ' >"$frwrdata" || : >"$frwrdata"
ringstable=$TMP/rings-table.txt
guest_table RINGS-BENCH-TABLE RINGS-BENCH-TABLE-END 'rings-table: ' >"$ringstable" || : >"$ringstable"
ringsdata=$TMP/rings-data.txt
guest_table RINGS-BENCH-DATA RINGS-BENCH-DATA-END 'rings-data: ' >"$ringsdata" || : >"$ringsdata"
ulptable=$TMP/ulp-table.txt
guest_table ULP-BENCH-TABLE ULP-BENCH-TABLE-END 'ulp-table: ' >"$ulptable" || : >"$ulptable"
nvmepitable=$TMP/nvme-pi-table.txt
guest_table NVME-PI-BENCH-TABLE NVME-PI-BENCH-TABLE-END 'nvme-pi-table: ' >"$nvmepitable" || : >"$nvmepitable"
nvmepidata=$TMP/nvme-pi-data.txt
guest_table NVME-PI-BENCH-DATA NVME-PI-BENCH-DATA-END 'nvme-pi-data: ' >"$nvmepidata" || : >"$nvmepidata"
if want mr && [ ! -s "$table" ]; then
	note "no table produced"
	DONE=1
	exit 1
fi

if [ -e /dev/kvm ] && [ -w /dev/kvm ]; then	# as scripts/vm.sh decides
	where="a QEMU KVM guest"
else
	where="a QEMU TCG guest (software CPU emulation, no KVM; tcg thread=$VM_TCG_THREAD): absolute numbers are slow, the comparison between the columns is what matters"
fi
mkdir -p "$OUT_DIR"
when="kernel $KVER, $(date -u '+%Y-%m-%d %H:%M UTC')"
: >"$BENCH_OUT.tmp"
if want mr; then
	{
		echo "MR registration benchmark: shca_mr_bench.ko, devices=softhca0,rxe0 iters=$BENCH_ITERS pages=$BENCH_PAGES reps=$BENCH_MR_REPS"
		echo "Ran in $where; $when."
		echo
		cat "$table"
	} >"$BENCH_OUT.tmp"
	same="Ran in the same guest, same boot"
else
	same="Ran in $where"
fi
# add_table TABLE OUT TITLE WHERE: if TABLE has rows, save it as OUT under
# its title and where it ran, and append it to the combined file
add_table() {
	[ -s "$1" ] || return 0
	{
		echo "$3"
		echo "$4; $when."
		echo
		cat "$1"
	} >"$2.tmp"
	if [ -s "$BENCH_OUT.tmp" ]; then
		{ echo; echo; } >>"$BENCH_OUT.tmp"
	fi
	cat "$2.tmp" >>"$BENCH_OUT.tmp"
	mv "$2.tmp" "$2"
}
add_table "$regtable" "$REG_OUT" \
	"Userspace MR registration benchmark: shca_reg_bench through libibverbs (rdma-core 44), devices=softhca0,rxe0, floor ib_umem_get+ib_umem_release (shca_umem_bench.ko), pinned and on-demand paging (ODP)" \
	"$same"
add_table "$dptable" "$DP_OUT" \
	"Data-path benchmark: RDMA WRITE/READ/SEND throughput and latency (tests/bench/dp-bench.sh)" \
	"$same, eth0 and eth1 on one QEMU hub"
add_table "$pitable" "$PI_OUT" \
	"T10-DIF signature engine benchmark: PI insert, strip/verify and pass through integrity MRs vs crc_t10dif() (tests/bench/pi-bench.sh)" \
	"$same"
add_table "$frwrtable" "$FRWR_OUT" \
	"FRWR cycle benchmark: nvme-rdma's per-I/O registration, RDMA READ/WRITE and invalidation, softhca0 -> softhca1 vs rxe0 -> rxe1 (tests/bench/frwr-bench.sh)" \
	"$same, eth0 and eth1 on one QEMU hub"
add_table "$ringstable" "$RINGS_OUT" \
	"Userspace data path: mapped rings vs a system call per verb vs rdma_rxe, perftest message rate and latency (tests/bench/rings-bench.sh)" \
	"$same, eth0 and eth1 on one QEMU hub"
add_table "$ulptable" "$ULP_OUT" \
	"ULP benchmark: NVMe over Fabrics (nvme-rdma, nvmet-rdma) with fio and rdma_cm with cmtime (tests/bench/ulp-bench.sh)" \
	"$same"
add_table "$nvmepitable" "$NVMEPI_OUT" \
	"NVMe over Fabrics with T10-PI vs without: nvme-rdma -> nvmet-rdma over softhca0 with and without PI, rxe0 without (tests/bench/nvme-pi-bench.sh)" \
	"$same"
# The wire table (its own boot, above) joins the combined file.
if [ -n "$WIRE_SAVED" ] && [ -s "$BENCH_OUT.tmp" ]; then
	{ echo; echo; cat "$WIRE_OUT"; } >>"$BENCH_OUT.tmp"
fi
# Where the time goes: the main MR and data-path cells under perf, in a
# second boot (perf's sampling would slow the tables above down).
rm -f "$SHARES_OUT"
if [ "${BENCH_PROFILE:-1}" != 0 ] && { want mr || want dp; }; then
	pcells=()
	! want mr || pcells+=(mr:mem_reg:softhca0 mr:mem_reg:rxe0 mr:user:softhca0
			      mr:user:rxe0 mr:dma:softhca0 mr:dma:rxe0)
	! want dp || pcells+=(dp:write:64 dp:send:64 dp:write:64:rxe0:rxe1
			      dp:send:64:rxe0:rxe1)
	rm -rf "$OUT_DIR/prof"
	if "$BENCH_DIR/profile.sh" --mttcg --no-baseline --reps 1 --module "$MODULE" \
		--out "$OUT_DIR/prof" "${pcells[@]}" >"$TMP/profile.log" 2>&1 &&
		"$BENCH_DIR/profile.sh" --shares "$OUT_DIR"/prof/*.folded >"$TMP/shares.txt"; then
		add_table "$TMP/shares.txt" "$SHARES_OUT" \
			"Where the time goes: the main MR and data-path cells under perf (tests/bench/profile.sh; reports in build/bench/prof/)" \
			"Ran in a second boot of the same guest"
	else
		note "tests/bench/profile.sh failed; no shares table (its output: $OUT_DIR/profile.log)"
		cp "$TMP/profile.log" "$OUT_DIR/profile.log"
	fi
fi
echo
cat "$BENCH_OUT.tmp"
echo
saved=
if want mr; then
	mv "$BENCH_OUT.tmp" "$BENCH_OUT"
	saved="${BENCH_OUT#"$ROOT"/} (all tables)"
else
	rm -f "$BENCH_OUT.tmp"
fi
[ ! -s "$regtable" ] || saved="$saved, ${REG_OUT#"$ROOT"/} (userspace MR)"
[ ! -s "$dptable" ] || saved="$saved, ${DP_OUT#"$ROOT"/} (data path)"
[ ! -s "$pitable" ] || saved="$saved, ${PI_OUT#"$ROOT"/} (T10-DIF engine)"
[ ! -s "$frwrtable" ] || saved="$saved, ${FRWR_OUT#"$ROOT"/} (FRWR cycle)"
[ ! -s "$ringstable" ] || saved="$saved, ${RINGS_OUT#"$ROOT"/} (rings vs system calls)"
[ ! -s "$ulptable" ] || saved="$saved, ${ULP_OUT#"$ROOT"/} (ULPs)"
[ ! -s "$nvmepitable" ] || saved="$saved, ${NVMEPI_OUT#"$ROOT"/} (NVMe PI vs no PI)"
[ ! -s "$SHARES_OUT" ] || saved="$saved, ${SHARES_OUT#"$ROOT"/} (where the time goes)"
[ -z "$WIRE_SAVED" ] || saved="$saved, $WIRE_SAVED (wire)"
# plot DATA DAT PNG GP HEADER SUBTITLE: save the guest's plot data DATA as
# DAT under the comment lines HEADER and, with gnuplot, plot it with GP
# into PNG (gnuplot -e "datafile=...; outfile=...; subtitle=..." GP)
plot() {
	[ -s "$1" ] || return 0
	{
		printf '%s\n' "$5"
		cat "$1"
	} >"$2"
	saved="$saved, ${2#"$ROOT"/}"
	if ! command -v gnuplot >/dev/null; then
		note "no plot ${3##*/}: gnuplot is not installed (scripts/deps.sh bench)"
	elif gnuplot -e "datafile='$2'; outfile='$3.tmp'; subtitle='$6'" \
		"$4" 2>"$TMP/gnuplot.err"; then
		mv "$3.tmp" "$3"
		saved="$saved, ${3#"$ROOT"/} (plot)"
	else
		rm -f "$3.tmp"
		note "gnuplot failed on ${4##*/}:"
		sed 's/^/  /' "$TMP/gnuplot.err" >&2
	fi
}
# The MR plot: operations per second per MR type and device.
plot "$mrdata" "$MR_DAT" "$MR_PNG" "$BENCH_DIR/mr-bench.gp" \
	"# MR registration benchmark (shca_mr_bench.ko, tests/bench/mr-bench.sh), $when
# operations/s per MR type: median, minimum, maximum of $BENCH_MR_REPS runs" \
	"$BENCH_MR_REPS runs of $BENCH_ITERS operations per cell, $BENCH_PAGES pages per MR, devices in ABBA order; $when"
# The userspace MR plot: microseconds per pair against the size.
plot "$regdata" "$REG_DAT" "$REG_PNG" "$BENCH_DIR/reg-bench.gp" \
	"# Userspace MR registration benchmark (shca_reg_bench, shca_umem_bench.ko), $when
# microseconds per reg + dereg pair (floor: ib_umem_get + ib_umem_release; odp:DEV with IBV_ACCESS_ON_DEMAND; odp-touch:DEV the same plus ibv_advise_mr PREFETCH_WRITE of the whole region) per size: median, minimum, maximum of $BENCH_REPS runs" \
	"$BENCH_REPS runs of ${BENCH_REG_SECS} s per cell, columns in ABBA order; $when"
# The data-path plots: throughput and latency against the message size.
plot "$dpbw" "$DP_BW_DAT" "$DP_BW_PNG" "$BENCH_DIR/dp-bench-bw.gp" \
	"# Data-path benchmark, kernel verbs (shca_dp_bench.ko, tests/bench/dp-bench.sh), $when
# GB/s per message size: median, minimum, maximum of $BENCH_REPS runs" \
	"$BENCH_REPS runs of $BENCH_DP_MS ms per cell, pairs in ABBA order; $when"
plot "$dplat" "$DP_LAT_DAT" "$DP_LAT_PNG" "$BENCH_DIR/dp-bench-lat.gp" \
	"# Data-path benchmark, kernel verbs (shca_dp_bench.ko, tests/bench/dp-bench.sh), $when
# one-way latency in microseconds per message size (memcpy: one copy): median, minimum, maximum of $BENCH_REPS runs" \
	"$BENCH_REPS runs of $BENCH_DP_MS ms per cell, pairs in ABBA order; $when"
# The T10-DIF plot: the medians (and the spread) of each cell.
plot "$pidata" "$PI_DAT" "$PI_PNG" "$BENCH_DIR/pi-bench.gp" \
	"# T10-DIF engine benchmark (tests/bench/pi-bench.sh), $when
# MB/s of data per interval/size: median, minimum, maximum of $BENCH_PI_REPS runs" \
	"$BENCH_PI_REPS runs of $BENCH_PI_MS ms, $BENCH_PI_SLOTS messages in flight; $when"
# The FRWR plot: MB/s against the I/O size, median and spread.
plot "$frwrdata" "$FRWR_DAT" "$FRWR_PNG" "$BENCH_DIR/frwr-bench.gp" \
	"# FRWR cycle benchmark (tests/bench/frwr-bench.sh), $when
# MB/s per I/O size: median, minimum, maximum of $BENCH_FRWR_REPS runs" \
	"QD $BENCH_FRWR_QD, $BENCH_FRWR_REPS runs of $BENCH_FRWR_MS ms per cell, ABBA; $when"
# The ring plot: message rate and latency against the size.
plot "$ringsdata" "$RINGS_DAT" "$RINGS_PNG" "$BENCH_DIR/rings-bench.gp" \
	"# Userspace rings vs system calls vs rxe (perftest, tests/bench/rings-bench.sh), $when
# per size, column and tool: Mmsg/s (ib_*_bw) or typical one-way microseconds (ib_*_lat), median, minimum, maximum of $BENCH_REPS runs" \
	"$BENCH_REPS runs per cell, ${BENCH_RINGS_SECS} s measured per bandwidth run (1 MiB: $BENCH_RINGS_BW_ITERS_1M messages), $BENCH_RINGS_LAT_ITERS ping-pongs per latency run ($BENCH_RINGS_LAT_ITERS_1M at 1 MiB), columns in ABBA order; $when"
# The NVMe PI plot: the medians (and the spread) of each fio job.
plot "$nvmepidata" "$NVMEPI_DAT" "$NVMEPI_PNG" "$BENCH_DIR/nvme-pi-bench.gp" \
	"# NVMe over Fabrics with and without T10-PI (tests/bench/nvme-pi-bench.sh), $when
# MB/s per column: median, minimum, maximum of $BENCH_NVMEPI_REPS runs" \
	"fio libaio O_DIRECT QD16, $BENCH_NVMEPI_REPS runs of $BENCH_NVMEPI_SECS s, one scsi_debug disk (DIF type 1) behind all; $when"
note "saved to ${saved#, }"
ok=1
# need PART TABLE WHAT: PART ran but produced no TABLE
need() {
	if want "$1" && [ ! -s "$2" ]; then
		note "no $3 table (see the console log above)"
		ok=0
	fi
}
need reg "$regtable" "userspace MR"
need dp "$dptable" "data-path"
need pi "$pitable" "T10-DIF engine"
need frwr "$frwrtable" "FRWR cycle"
need rings "$ringstable" "ring"
need ulp "$ulptable" "ULP"
need nvmepi "$nvmepitable" "NVMe PI"
if want wire && [ "$wire_ok" != 1 ]; then
	note "no wire table (see the output above)"
	ok=0
fi
DONE=1
[ "$ok" = 1 ] || exit 1
exit 0
