#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Where do the microseconds of one small work request go? The per-stage
# time of softhca's in-memory data path for one kernel cell of
# shca_dp_bench.ko (default WRITE:64 and SEND:64, RC, softhca0 ->
# softhca1), measured inside the guest with the TSC between checkpoints:
#
#   1. the tree's driver is copied to build/breakdown/, the checkpoints of
#      tests/bench/breakdown.patch applied and the module built (the
#      patch fails loudly when the data path changed under it: update
#      its context);
#   2. one boot of scripts/vm.sh (--hub) runs the cell with that module,
#      then with the tree's own module (the rate without checkpoints);
#   3. the module prints the time summed per checkpoint when it unloads;
#      this script prints nanoseconds per message per stage, their sum
#      and the rates.
#
# Each checkpoint reads the TSC twice (about 25 ns under TCG: stage 2,
# a few loads and one atomic, shows the cost), so the stages add up to
# more than 1 / rate of the plain module. A measurement, not a test; it
# is not part of make test or make bench.
#
# Usage: tests/bench/breakdown.sh [--cell NAME:SIZE]... [--ms MS] [--reps N]
#   --cell  shca_dp_bench.ko cells (default WRITE:64 and SEND:64)
#   --ms    cell_ms (default 1000); --reps  reps (default 3)
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/../.." && pwd)
# shellcheck source=scripts/versions.env
. "$ROOT/scripts/versions.env"
KVER=${VM_KVER:-$DEBIAN_KVER}
KDIR=/usr/src/linux-headers-$KVER
CELLS=()
MS=1000
REPS=3
die() { echo "breakdown: $*" >&2; exit 1; }
while [ $# -gt 0 ]; do
	case $1 in
	--cell) CELLS+=("${2:?--cell needs NAME:SIZE}"); shift ;;
	--ms) MS=${2:?}; shift ;;
	--reps) REPS=${2:?}; shift ;;
	-h | --help) sed -n '3,/^set -e/p' "$0" | sed 's/^# \{0,1\}//; /^set -e/d'; exit 0 ;;
	*) die "unknown argument $1" ;;
	esac
	shift
done
[ ${#CELLS[@]} -gt 0 ] || CELLS=(WRITE:64 SEND:64)
[ -r "$KDIR/Makefile" ] || die "$KDIR not found (scripts/deps.sh build)"

OUT=$ROOT/build/breakdown
rm -rf "$OUT"
mkdir -p "$OUT/src" "$OUT/overlay"
# the instrumented driver, built out of tree like the real one
(cd "$ROOT" && cp -r Kbuild Kconfig Makefile drivers include scripts "$OUT/src/")
find "$OUT/src" -name '*.o' -o -name '*.ko' -o -name '*.mod*' -o -name '.*.cmd' | xargs rm -f
(cd "$OUT/src" && git apply --unidiff-zero "$ROOT/tests/bench/breakdown.patch") ||
	die "tests/bench/breakdown.patch does not apply to this tree: update its context"
echo "breakdown: building the instrumented module"
make -s -C "$OUT/src" KDIR="$KDIR" modules >"$OUT/build.log" 2>&1 ||
	{ tail -20 "$OUT/build.log"; die "the instrumented module did not build"; }
make -s -C "$ROOT" modules KDIR="$KDIR" >>"$OUT/build.log" 2>&1 ||
	{ tail -20 "$OUT/build.log"; die "the module did not build"; }
make -s -C "$KDIR" M="$ROOT/tests/bench" modules >>"$OUT/build.log" 2>&1 ||
	{ tail -20 "$OUT/build.log"; die "the benchmark modules did not build"; }
cp "$OUT/src/drivers/infiniband/sw/softhca/softhca.ko" "$OUT/overlay/softhca-bd.ko"
cp "$ROOT/drivers/infiniband/sw/softhca/softhca.ko" "$OUT/overlay/softhca-plain.ko"
cp "$ROOT/tests/bench/shca_dp_bench.ko" "$OUT/overlay/"

cat >"$OUT/guest.sh" <<GUEST
#!/bin/sh
# the guest half of tests/bench/breakdown.sh
ip link set eth0 up
ip link set eth1 up
# an initialised CRNG (see tests/bench/profile.sh --no-crng-init)
dd if=/dev/random of=/dev/null bs=1 count=1 2>/dev/null
rc=0
for cell in ${CELLS[*]}; do
	for m in bd plain; do
		insmod /softhca-\$m.ko || exit 1
		rdma link add softhca0 type softhca netdev eth0
		rdma link add softhca1 type softhca netdev eth1
		dmesg -c >/dev/null
		insmod /shca_dp_bench.ko pairs=softhca0:softhca1 cell=\$cell cell_ms=$MS reps=$REPS budget_s=600 || rc=1
		rmmod shca_dp_bench
		rdma link delete softhca0
		rdma link delete softhca1
		rmmod softhca
		dmesg | sed -n "s/.*\\(shca_dp_bench: \\(bw\\|lat\\|err\\)\\|softhca-breakdown:\\)/BD \$m \$cell \\1/p"
	done
done
[ \$rc = 0 ] && echo PASS
GUEST
chmod +x "$OUT/guest.sh"

echo "breakdown: booting the VM (cells ${CELLS[*]}, ${MS} ms x $REPS each, with and without checkpoints)"
"$ROOT/scripts/vm.sh" --hub --overlay "$OUT/overlay" --run "$OUT/guest.sh" \
	--test-timeout $((120 + 2 * ${#CELLS[@]} * REPS * (MS / 1000 + 5))) \
	--console "$OUT/console.txt" >"$OUT/vm.log" 2>&1 ||
	{ tail -20 "$OUT/vm.log"; die "the VM run failed (console: $OUT/console.txt)"; }

tr -d '\r' <"$OUT/console.txt" | grep '^BD ' >"$OUT/records.txt" || true
awk '
BEGIN {
	st[1] = "post_send: claim, queue and start the WQE (QP lock)"
	st[2] = "to the executor (post_exec: its claim of the queue)"
	st[3] = "sq_run: the head WQE (QP lock unless post_send started it)"
	st[4] = "completion set up, local SGE checks (shca_hold_local)"
	st[5] = "the peer QP by number (xarray, RCU, kref), port state"
	st[6] = "WRITE: responder checks under the peer lock"
	st[7] = "WRITE: remote key lookup and checks, the copy"
	st[8] = "SEND: all of the responder; WRITE: return, drop holds"
	st[9] = "sq_run: QP lock, retire the WQE"
	st[10] = "the send completion into the CQ (CQ lock)"
	st[11] = "release the queue, return to the caller"
	st[15] = "the caller between two posts (SEND: + recv CQ, post_recv)"
	st[13] = "ib_poll_cq (one call reaps up to 16)"
}
$5 == "bw" { rate[$2 SUBSEP $3] = rate[$2 SUBSEP $3] " " sprintf("%.0f", $10 / ($11 / 1e9)); cells[$3] = 1 }
$5 == "err" { print "breakdown: " $2 " " $3 ": error " $NF }
$4 == "softhca-breakdown:" && $2 == "bd" { n[$3 SUBSEP $5] = $6; ns[$3 SUBSEP $5] = $7; cells[$3] = 1 }
END {
	for (c in cells) {
		msgs = n[c SUBSEP 11]
		printf "\n%s, softhca0 -> softhca1, RC, kernel verbs (shca_dp_bench.ko cell=%s)\n", c, c
		printf "rate: %s msg/s with checkpoints, %s without (each run)\n", rate["bd" SUBSEP c], rate["plain" SUBSEP c]
		if (!msgs) { print "no checkpoint data"; continue }
		printf "%-3s %-58s %9s %6s\n", "", "stage", "ns/msg", "share"
		tot = 0
		split("15 1 2 3 4 5 6 7 8 9 10 11 13", order, " ")
		for (k = 1; k <= 13; k++) {
			i = order[k]
			if (i == 6 || i == 7) { if (!n[c SUBSEP i]) continue }
			v[i] = ns[c SUBSEP i] / msgs
			tot += v[i]
		}
		for (k = 1; k <= 13; k++) {
			i = order[k]
			if ((i == 6 || i == 7) && !n[c SUBSEP i])
				continue
			printf "%-3s %-58s %9.0f %5.1f%%\n", i, st[i], v[i], 100 * v[i] / tot
		}
		printf "%-3s %-58s %9.0f  (%.0f msg/s)\n", "", "sum", tot, 1e9 / tot
	}
}' "$OUT/records.txt" | tee "$OUT/breakdown.txt"
echo "breakdown: saved to build/breakdown/breakdown.txt (records: records.txt, console: console.txt)"
