#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# KUnit tier: overlay the driver into a linux-source-6.12 tree kept in a
# cache outside the work tree, build a UML kernel with kunit.py and run the
# softhca suites. Cold: ~12 min on 2 cores; warm: ~20 s.
#
#   scripts/kunit.sh [--sanitizers] [--kunitconfig FILE] [--build-name NAME]
#                    [--label LABEL] [-- KUNIT_ARGS]
#
# --sanitizers uses tests/kunit/softhca-debug.kunitconfig (KASAN, lockdep,
# UBSAN, debugobjects, list debugging) in its own build directory.
# Ends with one line "LABEL: N passed, N failed" (LABEL: kunit, or
# kunit-san with --sanitizers).
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/versions.env
. "$repo/scripts/versions.env"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/softhca
kunitconfig=$repo/tests/kunit/softhca.kunitconfig
build_name=kunit-build
label=kunit
extra=()
while [ $# -gt 0 ]; do
	case $1 in
	--sanitizers)
		kunitconfig=$repo/tests/kunit/softhca-debug.kunitconfig
		build_name=kunit-debug-build
		label=kunit-san
		shift ;;
	--kunitconfig) kunitconfig=$(realpath "$2"); shift 2 ;;
	--build-name) build_name=$2; shift 2 ;;
	--label) label=$2; shift 2 ;;
	--) shift; extra=("$@"); break ;;
	*) echo "usage: $0 [--sanitizers] [--kunitconfig FILE] [--build-name NAME] [--label LABEL] [-- KUNIT_ARGS]" >&2; exit 2 ;;
	esac
done

tarball=/usr/src/$DEBIAN_KSRC_PKG.tar.xz
src=$cache/$DEBIAN_KSRC_PKG
build=$cache/$build_name
log=$cache/$build_name.log
mkdir -p "$cache"

# (Re-)extract the kernel source when the package changed.
stamp=$(stat -c '%s %Y' "$tarball")
if [ ! -f "$src/.softhca-stamp" ] || [ "$(cat "$src/.softhca-stamp")" != "$stamp" ]; then
	echo "$label: extracting $tarball"
	rm -rf "$src" "$build"
	tar -xJf "$tarball" -C "$cache"
	echo "$stamp" > "$src/.softhca-stamp"
fi

# Overlay the driver as drivers/infiniband/sw/softhca (with its compile
# probes, shca_conftest.sh, which run in-tree as they do out of tree; a
# shca_conftest.h left in the work tree by an out-of-tree build is not
# copied). Copy only files whose content changed, so make rebuilds only
# what really changed.
dst=$src/drivers/infiniband/sw/softhca
mkdir -p "$dst"
(cd "$repo/drivers/infiniband/sw/softhca" && find . -type f \( -name '*.[ch]' -o -name '*.sh' -o -name Makefile -o -name Kconfig \) ! -name shca_conftest.h) |
while read -r f; do
	mkdir -p "$(dirname "$dst/$f")"
	cmp -s "$repo/drivers/infiniband/sw/softhca/$f" "$dst/$f" ||
		cp "$repo/drivers/infiniband/sw/softhca/$f" "$dst/$f"
done
(cd "$dst" && find . -type f \( -name '*.[ch]' -o -name '*.sh' -o -name Makefile -o -name Kconfig \)) |
while read -r f; do
	[ -e "$repo/drivers/infiniband/sw/softhca/$f" ] || rm -f "$dst/$f"
done
rm -f "$dst/shca_conftest.h"
grep -q 'sw/softhca/Kconfig' "$src/drivers/infiniband/Kconfig" ||
	sed -i 's|^source "drivers/infiniband/sw/siw/Kconfig"|&\nsource "drivers/infiniband/sw/softhca/Kconfig"|' \
		"$src/drivers/infiniband/Kconfig"
grep -q 'softhca' "$src/drivers/infiniband/sw/Makefile" ||
	echo 'obj-$(CONFIG_INFINIBAND_SOFTHCA)	+= softhca/' >> "$src/drivers/infiniband/sw/Makefile"
# The driver includes the uapi ABI header as <rdma/softhca-abi.h>.
for h in "$repo"/include/uapi/rdma/*.h; do
	[ -e "$h" ] || continue
	cmp -s "$h" "$src/include/uapi/rdma/$(basename "$h")" ||
		cp "$h" "$src/include/uapi/rdma/"
done

echo "$label: building in $build (log: $log)"
cd "$src"
set +e
python3 tools/testing/kunit/kunit.py run --build_dir="$build" \
	--kunitconfig="$kunitconfig" --jobs="$(nproc)" --timeout=900 \
	--kernel_args=mem=1G \
	"${extra[@]}" > "$log" 2>&1
rc=$?
set -e
# Show the KTAP result tree and the per-test verdicts.
grep -E '^\[[0-9:]+\] ' "$log" | sed 's/^\[[0-9:]*\] //' |
	grep -vE '^(Configuring|Building|Starting|Populating|Generating|Regenerating|\$ )' || true

# Kernel reports (KASAN, lockdep, UBSAN, debugobjects, list/refcount
# checks, warnings) anywhere after the tests started fail the tier, even
# when every assertion passed. Boot noise before KTAP starts (UML's own
# PCI warning) is not ours. kmemleak's summary line is not a report here:
# the shca_leak suite reads kmemleak's list and fails on softhca's leaks.
reports=$build/reports.txt
awk '/KTAP version/ { on = 1 } on' "$build/test.log" 2>/dev/null |
	grep -E 'BUG:|WARNING:|KASAN|UBSAN|possible recursive locking|possible circular locking|inconsistent lock state|suspicious RCU usage|ODEBUG:|list_(add|del) corruption|refcount_t:|Kernel panic' \
	> "$reports" || true

passed=$(grep -cE '^\[[0-9:]+\] +\[PASSED\]' "$log" || true)
failed=$(grep -cE '^\[[0-9:]+\] +\[(FAILED|CRASHED)\]' "$log" || true)
skipped=$(grep -cE '^\[[0-9:]+\] +\[SKIPPED\]' "$log" || true)
if [ "$rc" -ne 0 ] && [ "$failed" -eq 0 ]; then
	echo "$label: kunit.py failed (rc=$rc); last lines of $log:"
	tail -40 "$log"
	failed=1
fi
if [ -s "$reports" ]; then
	echo "$label: the kernel reported problems while the tests ran (see $build/test.log):"
	sed 's/^/    /' "$reports" | head -40
	failed=$((failed + 1))
fi
echo "$label: $passed passed, $failed failed, $skipped skipped"
[ "$rc" -eq 0 ] && [ "$failed" -eq 0 ]
