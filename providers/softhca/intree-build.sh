#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build the softhca provider inside an rdma-core source tree, as an in-tree
# provider (providers/softhca/ + rdma_provider()), with that tree's own
# provider headers. Not part of CI (CI has no rdma-core source); run it by
# hand against a fetched tree:
#
#   git clone https://github.com/linux-rdma/rdma-core   (or: git archive TAG)
#   providers/softhca/intree-build.sh [--symlink] [--load-test] TREE [BUILDDIR]
#
#   TREE       an rdma-core source tree, release 44.0 or later
#   BUILDDIR   CMake build directory (default TREE/build-softhca)
#   --symlink  link TREE/providers/softhca to this directory instead of
#              copying it (edits here then rebuild there)
#   --load-test  for a tree of private ABI 34 (rdma-core 34..56): also run
#              tests/load-test.sh with the built plugin under the installed
#              (Debian 12) libibverbs
#
# What it does:
#   1. TREE/providers/softhca: CMakeLists.txt, softhca.c, softhca_ex.c, softhca.h,
#      verbs_compat.h and uapi/rdma/softhca-abi.h (a copy, or --symlink);
#   2. add_subdirectory(providers/softhca) into TREE/CMakeLists.txt after
#      the siw line, unless it is there already;
#   3. cmake -GNinja (no man pages, no pyverbs, no rpath, -Werror for
#      softhca) and ninja softhca-rdmav<PABI>, which builds only what the
#      plugin needs (libibverbs, the generated kernel-abi headers);
#   4. checks the plugin: no exported symbol, every private import at
#      IBVERBS_PRIVATE_<PABI> (check-libibverbs.sh --provider).
# Prints the plugin's path last.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)

die() {
	echo "intree-build: error: $*" >&2
	exit 1
}

symlink=0
load_test=0
while [ $# -gt 0 ]; do
	case $1 in
	--symlink) symlink=1 ;;
	--load-test) load_test=1 ;;
	-h | --help) awk 'NR > 3 && /^#/ { sub(/^# ?/, ""); print; next } NR > 3 { exit }' "$0"; exit 0 ;;
	-*) die "unknown option $1" ;;
	*) break ;;
	esac
	shift
done
[ $# -ge 1 ] || die "usage: $0 [--symlink] [--load-test] RDMA_CORE_TREE [BUILDDIR]"
TREE=$(cd "$1" && pwd) || die "no such directory: $1"
BUILD=${2:-$TREE/build-softhca}

top_cmake=$TREE/CMakeLists.txt
for f in "$top_cmake" "$TREE/libibverbs/driver.h" "$TREE/buildlib/rdma_functions.cmake"; do
	[ -r "$f" ] || die "$TREE is not an rdma-core source tree (no $f)"
done
version=$(sed -n 's/^set(PACKAGE_VERSION "\([^"]*\)").*/\1/p' "$top_cmake")
pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)").*/\1/p' "$top_cmake")
if [ -z "$version" ] || [ -z "$pabi" ]; then
	die "cannot read PACKAGE_VERSION/IBVERBS_PABI_VERSION from $top_cmake"
fi
[ "${version%%.*}" -ge 44 ] 2>/dev/null || die "rdma-core $version: 44.0 or later needed"
echo "intree-build: rdma-core $version (private ABI $pabi) in $TREE"

# 1. The provider directory.
dest=$TREE/providers/softhca
if [ -L "$dest" ]; then
	rm -f "$dest"
elif [ -e "$dest" ]; then
	[ -f "$dest/verbs_compat.h" ] || die "$dest exists and is not softhca's"
	rm -rf "$dest"
fi
if [ $symlink = 1 ]; then
	ln -s "$HERE" "$dest"
else
	mkdir -p "$dest/uapi/rdma"
	cp "$HERE"/CMakeLists.txt "$HERE"/softhca.c "$HERE"/softhca_ex.c "$HERE"/softhca.h \
		"$HERE"/verbs_compat.h "$dest/"
	cp "$TOP/include/uapi/rdma/softhca-abi.h" "$dest/uapi/rdma/"
fi

# 2. The one line in the top CMakeLists.txt.
line='add_subdirectory(providers/softhca)'
if ! grep -qxF "$line" "$top_cmake"; then
	grep -qx 'add_subdirectory(providers/siw)' "$top_cmake" ||
		die "no add_subdirectory(providers/siw) line in $top_cmake to put ours after"
	sed -i "/^add_subdirectory(providers\/siw)\$/a $line" "$top_cmake"
fi

# 3. Configure and build the plugin only.
gen=()
if command -v ninja >/dev/null; then
	gen=(-GNinja)
fi
mkdir -p "$BUILD"
log=$BUILD/softhca-cmake.log
cmake -S "$TREE" -B "$BUILD" "${gen[@]}" -DNO_MAN_PAGES=1 -DNO_PYVERBS=1 \
	-DCMAKE_SKIP_RPATH=ON -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSOFTHCA_WERROR=ON \
	-DCMAKE_C_FLAGS="${CFLAGS:-}" >"$log" 2>&1 ||
	{ tail -40 "$log" >&2; die "cmake failed (log: $log)"; }
grep -F 'softhca: in-tree provider' "$log" || true
target=softhca-rdmav$pabi
cmake --build "$BUILD" --target "$target" -- ${JOBS:+-j"$JOBS"} ||
	die "building $target failed"
so=$BUILD/lib/lib$target.so
[ -f "$so" ] || die "$so was not built"

# 4. The plugin's dynamic symbols.
"$HERE/check-libibverbs.sh" --provider "$so" "$pabi"
echo "intree-build: $so: exports nothing, imports IBVERBS_PRIVATE_$pabi only"

if [ $load_test = 1 ]; then
	[ "$pabi" = 34 ] ||
		die "--load-test: the installed libibverbs is IBVERBS_PRIVATE_34, this plugin is $pabi"
	make -s -C "$HERE" tests/load_test
	"$HERE/tests/load-test.sh" "$so" "$HERE/tests/load_test"
fi
echo "$so"
