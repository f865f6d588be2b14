#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Build the module for another kernel without touching the work tree's
# objects: copy the kernel sources into build/kernel-KVER/ and run kbuild
# there (kernels before 6.13 build external modules only in place).
#   scripts/build-for.sh [--clean] [--kdir DIR] KVER [MAKE_ARGS...]
# KVER names the headers in /usr/src/linux-headers-KVER, or --kdir gives
# the kernel build tree (a make O= directory, e.g. the KASAN kernel of
# scripts/kasan-kernel.sh). The module ends up in
# build/kernel-KVER/drivers/infiniband/sw/softhca/softhca.ko.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
clean=0
kdir=
while [ $# -gt 0 ]; do
	case $1 in
	--clean) clean=1; shift ;;
	--kdir) kdir=${2:?--kdir needs a directory}; shift 2 ;;
	*) break ;;
	esac
done
kver=${1:?usage: $0 [--clean] [--kdir DIR] KVER [MAKE_ARGS...]}
shift
kdir=${kdir:-/usr/src/linux-headers-$kver}
[ -r "$kdir/Makefile" ] || { echo "build-for: $kdir not found" >&2; exit 1; }
out=$repo/build/kernel-$kver

# Sources only, and only those that changed (make then rebuilds only them);
# files gone from the work tree go from the copy too.
mkdir -p "$out"
cd "$repo"
{ echo scripts/versions.env; find Kbuild drivers include -type f \( -name '*.[ch]' -o -name '*.sh' -o \
	-name Makefile -o -name Kconfig -o -name Kbuild \) ! -name '*.mod.c' \
	! -name shca_conftest.h; } | sort > "$out/.sources.new"
while read -r f; do
	cmp -s "$f" "$out/$f" 2>/dev/null || { mkdir -p "$out/$(dirname "$f")"; cp "$f" "$out/$f"; }
done < "$out/.sources.new"
if [ -r "$out/.sources" ]; then
	comm -23 "$out/.sources" "$out/.sources.new" | (cd "$out" && xargs -r rm -f)
fi
mv "$out/.sources.new" "$out/.sources"

if [ $clean = 1 ]; then
	make -C "$kdir" M="$out" CONFIG_INFINIBAND_SOFTHCA=m clean > /dev/null
fi
exec make -C "$kdir" M="$out" CONFIG_INFINIBAND_SOFTHCA=m "$@" modules
