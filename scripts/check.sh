#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Tier 1: build and static checks of the kernel sources.
#   scripts/check.sh [FILE...]      (default: every driver .c/.h)
# Each check is one test: build (W=1), layers (no cycle in the calls
# between the driver's files, scripts/layers.sh), sparse, checkpatch
# --strict, kernel-doc; build (W=1) and sparse again for Debian 12's 6.1 kernel
# (DEBIAN_KVER_61, in build/kernel-KVER/: the compile probes pick the
# other interfaces). Ends with one line "static: N passed, N failed".
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/versions.env
. "$repo/scripts/versions.env"
cd "$repo"

KDIR=${KDIR:-/usr/src/linux-headers-$DEBIAN_KVER}
cache=${XDG_CACHE_HOME:-$HOME/.cache}/softhca
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

if [ $# -eq 0 ]; then
	mapfile -t files < <(find drivers include -name '*.[ch]' ! -name '*.mod.c' \
		! -name shca_conftest.h 2>/dev/null | sort)
else
	files=("$@")
fi

passed=0
failed=0
result() {	# name, status, logfile
	if [ "$2" -eq 0 ]; then
		echo "STATIC $1 PASS"
		passed=$((passed + 1))
	else
		echo "STATIC $1 FAIL"
		sed 's/^/    /' "$3" | head -60
		failed=$((failed + 1))
	fi
}

# checkpatch.pl and its data files come with the kernel source package.
checkpatch=$cache/$DEBIAN_KSRC_PKG/scripts/checkpatch.pl
if [ ! -f "$checkpatch" ]; then
	checkpatch=$cache/checkpatch/$DEBIAN_KSRC_PKG/scripts/checkpatch.pl
	if [ ! -f "$checkpatch" ]; then
		mkdir -p "$cache/checkpatch"
		tar -xJf "/usr/src/$DEBIAN_KSRC_PKG.tar.xz" -C "$cache/checkpatch" \
			--wildcards '*/scripts/checkpatch.pl' '*/scripts/spelling.txt' \
			'*/scripts/const_structs.checkpatch'
	fi
fi
kerneldoc=$KDIR/scripts/kernel-doc
[ -x "$kerneldoc" ] || kerneldoc=$(ls /usr/src/linux-headers-*-common/scripts/kernel-doc 2>/dev/null | head -1)

kbuild=(-C "$KDIR" M="$repo" CONFIG_INFINIBAND_SOFTHCA=m)

# 1. Build with W=1: no warnings allowed.
make "${kbuild[@]}" clean > /dev/null 2>&1
make "${kbuild[@]}" W=1 modules > "$out/build" 2>&1
st=$?
grep -E 'warning:|error:' "$out/build" > "$out/build.w" && st=1
[ $st -eq 0 ] || cat "$out/build.w" >> "$out/build"
result build-W1 $st "$out/build"

# 1b. Layers: no cycle in the calls between the driver's files.
scripts/layers.sh > "$out/layers" 2>&1
result layers $? "$out/layers"

# 2. sparse on every file (C=2 checks without rebuilding).
make "${kbuild[@]}" C=2 CHECK="sparse -Wno-unknown-attribute" modules > "$out/sparse" 2>&1
st=$?
grep -E 'warning:|error:' "$out/sparse" > "$out/sparse.w" && st=1
[ $st -eq 0 ] || cat "$out/sparse.w" >> "$out/sparse"
result sparse $st "$out/sparse"

# 2b. The same two for Debian 12's 6.1 kernel, out of the work tree.
if [ -n "${DEBIAN_KVER_61:-}" ]; then
	scripts/build-for.sh --clean "$DEBIAN_KVER_61" W=1 > "$out/build61" 2>&1
	st=$?
	grep -E 'warning:|error:' "$out/build61" > "$out/build61.w" && st=1
	[ $st -eq 0 ] || cat "$out/build61.w" >> "$out/build61"
	result "build-W1-$DEBIAN_KVER_61" $st "$out/build61"
	scripts/build-for.sh "$DEBIAN_KVER_61" C=2 \
		CHECK="sparse -Wno-unknown-attribute" > "$out/sparse61" 2>&1
	st=$?
	grep -E 'warning:|error:' "$out/sparse61" > "$out/sparse61.w" && st=1
	[ $st -eq 0 ] || cat "$out/sparse61.w" >> "$out/sparse61"
	result "sparse-$DEBIAN_KVER_61" $st "$out/sparse61"
fi

# 3. checkpatch --strict.
perl "$checkpatch" --no-tree --strict --terse --show-types -f "${files[@]}" \
	> "$out/checkpatch" 2>&1
grep -qE 'ERROR|WARNING|CHECK' "$out/checkpatch"
st=$(( $? == 0 ))
result checkpatch $st "$out/checkpatch"

# 4. kernel-doc: every documented function is documented correctly.
perl "$kerneldoc" -none -Wall "${files[@]}" > "$out/kdoc" 2>&1
st=$?
[ -s "$out/kdoc" ] && st=1
result kernel-doc $st "$out/kdoc"

# 5. The rdma-core provider: builds -Werror against Debian's libibverbs,
#    exports nothing, imports only IBVERBS_PRIVATE_34, loads (host test).
make -C providers/softhca clean > /dev/null 2>&1
{ make -C providers/softhca && make -C providers/softhca test; } > "$out/provider" 2>&1
result provider $? "$out/provider"

echo "static: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
