#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Two builds of softhca compared in one boot (make bench-ab): the kernel
# data-path cells of shca_dp_bench.ko, softhca0 -> softhca1, measured
# with build A and build B loaded in turn in the same VM guest (ABBA,
# tests/bench/ab-bench.sh), so that a change's cost is not lost in the
# difference between two boots (under TCG the host's speed moves by a
# third between them: PLATFORM.md). Prints the table (medians, spreads,
# B / A) and saves it as build/bench/ab-bench.txt.
#
# Usage: tests/bench/ab.sh [options] [LABEL=]A [[LABEL=]B]
#   A, B          a git revision (built once in a temporary worktree and
#                 kept in the cache by its commit) or a softhca.ko; B
#                 defaults to the working tree's module (make modules);
#                 LABEL names the column (default: the revision, or A
#                 and B for files)
#   --rounds N    ABBA rounds (default 6: three turns of each build first)
#   --cells LIST  shca_dp_bench cells, comma separated (default
#                 WRITE:64,READ:64,SEND:64,WRITE-lat:64,WRITE:4096,WRITE:1048576)
#   --ms MS       milliseconds per measurement (default 300)
#   --user LIST   perftest cells too, from userspace with the provider,
#                 e.g. write_bw:64,write_lat:64 (bw: message rate, lat:
#                 typical latency; 1 s each)
#   --out FILE    the table (default build/bench/ab-bench.txt)
#   -v            stream the guest's console
#
# A round of the default cells takes about a minute of the guest (TCG);
# six rounds and the boot, about 8 minutes.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BENCH_DIR=$ROOT/tests/bench
ROUNDS=6
CELLS=WRITE:64,READ:64,SEND:64,WRITE-lat:64,WRITE:4096,WRITE:1048576
MS=300
USER_CELLS=
OUT=$ROOT/build/bench/ab-bench.txt
VERBOSE=()
ARGS=()

die() { echo "ab: $*" >&2; exit 1; }
note() { echo "ab: $*" >&2; }

while [ $# -gt 0 ]; do
	case $1 in
	--rounds) ROUNDS=${2:?}; shift 2 ;;
	--cells) CELLS=${2:?}; shift 2 ;;
	--ms) MS=${2:?}; shift 2 ;;
	--user) USER_CELLS=${2:?}; shift 2 ;;
	--out) OUT=${2:?}; shift 2 ;;
	-v) VERBOSE=(-v); shift ;;
	-h | --help) sed -n '3,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (--help)" ;;
	*) ARGS+=("$1"); shift ;;
	esac
done
if [ ${#ARGS[@]} -lt 1 ] || [ ${#ARGS[@]} -gt 2 ]; then
	die "usage: $0 [options] A [B] (--help)"
fi
if ! [[ $ROUNDS =~ ^[1-9][0-9]*$ && $MS =~ ^[1-9][0-9]*$ ]]; then
	die "--rounds and --ms take whole numbers"
fi

# shellcheck source=scripts/versions.env
. "$ROOT/scripts/versions.env"
KVER=${DEBIAN_KVER:?}
KDIR=/usr/src/linux-headers-$KVER
[ -r "$KDIR/Makefile" ] || die "$KDIR not found (install linux-headers-$KVER)"
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/ab
mkdir -p "$CACHE"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/softhca-ab.XXXXXX")
WT=
cleanup() {
	if [ -n "$WT" ]; then
		git -C "$ROOT" worktree remove --force "$WT" >/dev/null 2>&1 || true
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

# module [LABEL=]SPEC DEFAULT LABELVAR KOVAR: the module of a revision or a
# file, and its column's name (LABEL; else the revision as given, or
# DEFAULT for a file)
module() {
	local spec=$1 label=$2 sha ko
	if [[ $spec == *=* ]]; then
		label=${spec%%=*}
		spec=${spec#*=}
	elif [ ! -f "$spec" ]; then
		label=$spec
	fi
	printf -v "$3" '%s' "${label//[^A-Za-z0-9._-]/_}"
	if [ -f "$spec" ]; then
		printf -v "$4" '%s' "$(realpath "$spec")"
		return
	fi
	sha=$(git -C "$ROOT" rev-parse --verify -q "$spec^{commit}") ||
		die "$spec is neither a file nor a git revision"
	ko=$CACHE/softhca-$sha.ko
	if [ ! -s "$ko" ]; then
		note "building $spec (${sha:0:12}) in a temporary worktree"
		WT=$TMP/wt
		git -C "$ROOT" worktree add --detach -q "$WT" "$sha"
		make -C "$WT" -s modules >"$TMP/build-$sha.log" 2>&1 ||
			{ cat "$TMP/build-$sha.log" >&2; die "building $spec failed"; }
		cp "$WT/drivers/infiniband/sw/softhca/softhca.ko" "$ko.tmp"
		mv "$ko.tmp" "$ko"
		git -C "$ROOT" worktree remove --force "$WT"
		WT=
	fi
	printf -v "$4" '%s' "$ko"
}

LABEL_A='' KO_A='' LABEL_B='' KO_B=''
module "${ARGS[0]}" A LABEL_A KO_A
if [ ${#ARGS[@]} = 2 ]; then
	module "${ARGS[1]}" B LABEL_B KO_B
else
	module "worktree=$ROOT/drivers/infiniband/sw/softhca/softhca.ko" B \
		LABEL_B KO_B
	[ -s "$KO_B" ] || die "$KO_B not built (make modules)"
fi
[ "$LABEL_A" != "$LABEL_B" ] || { LABEL_A=A-$LABEL_A; LABEL_B=B-$LABEL_B; }

note "building shca_dp_bench.ko"
make -C "$KDIR" M="$BENCH_DIR" modules >"$TMP/bench-build.log" 2>&1 ||
	{ cat "$TMP/bench-build.log" >&2; die "building the benchmark modules failed"; }

ov=$TMP/overlay
mkdir -p "$ov/tests"
cp "$KO_A" "$ov/softhca-a.ko"
cp "$KO_B" "$ov/softhca-b.ko"
cp "$BENCH_DIR/shca_dp_bench.ko" "$ov/"
install -m 0644 "$BENCH_DIR/bench-lib.sh" "$ov/tests/bench-lib.sh"

note "$LABEL_A ($KO_A) vs $LABEL_B ($KO_B): $ROUNDS rounds of $CELLS"
CONSOLE=$TMP/console.txt
export VM_TCG_THREAD=${VM_TCG_THREAD:-multi}
ncells=$(tr ',' '\n' <<<"$CELLS" | wc -l)
nuser=$(tr ',' '\n' <<<"$USER_CELLS" | grep -c . || true)
secs=$((ROUNDS * 2 * (ncells * (MS / 1000 + 8) + nuser * 10) + 120))
"$ROOT/scripts/vm.sh" "${VERBOSE[@]}" --hub --overlay "$ov" \
	--run "$BENCH_DIR/ab-bench.sh" --console "$CONSOLE" \
	--test-timeout "$secs" \
	--show '^(ab-bench|ab-rec|vm-init): |^VMTEST ab-bench ' \
	--env "AB_ROUNDS=$ROUNDS" --env "AB_CELLS=$CELLS" --env "AB_MS=$MS" \
	--env "AB_A_LABEL=$LABEL_A" --env "AB_B_LABEL=$LABEL_B" \
	--env "AB_USER=$USER_CELLS" || true

sed -n '/^=== AB-BENCH-TABLE$/,/^=== AB-BENCH-TABLE-END$/p' "$CONSOLE" |
	sed -n 's/^ab-table: //p' >"$TMP/table"
[ -s "$TMP/table" ] || die "no table (console: see above)"
mkdir -p "$(dirname "$OUT")"
{
	echo "# softhca A/B, kernel verbs softhca0 -> softhca1, one boot, $ROUNDS ABBA rounds of $MS ms; $(date -u '+%Y-%m-%d %H:%M UTC')"
	echo "# A = $LABEL_A ($(basename "$KO_A")), B = $LABEL_B ($(basename "$KO_B")); ratio = B / A of the medians; paired = median (spread) of each round's B / A; spread = (max - min) / median"
	cat "$TMP/table"
} | tee "$OUT"
note "saved to ${OUT#"$ROOT"/}"
