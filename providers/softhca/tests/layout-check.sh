#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Compare the private-ABI layout declared by verbs_private.h with rdma-core's
# own headers: build tests/layout_probe.c against both and diff the output.
# Not needed for building the provider; run it when verbs_private.h changes.
#
# Usage: layout-check.sh RDMA_CORE_SRC
#   RDMA_CORE_SRC: an rdma-core source tree at tag v44.0, e.g.
#     git clone --branch v44.0 https://github.com/linux-rdma/rdma-core
# Needs python3 (rdma-core's buildlib/make_abi_structs.py generates
# kernel-abi/ib_user_verbs.h, as rdma-core's cmake would).
set -euo pipefail

SRC=${1:-}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CC=${CC:-gcc}
[ -n "$SRC" ] || { echo "usage: $0 RDMA_CORE_SRC (rdma-core v44.0 tree)" >&2; exit 2; }
for f in libibverbs/driver.h buildlib/config.h.in buildlib/make_abi_structs.py \
	kernel-headers/rdma/ib_user_verbs.h ccan/list.h; do
	[ -r "$SRC/$f" ] || { echo "layout-check: $SRC/$f missing (not an rdma-core tree?)" >&2; exit 2; }
done
pabi=$(sed -n 's/^set(IBVERBS_PABI_VERSION "\([0-9]*\)").*/\1/p' "$SRC/CMakeLists.txt")
[ "$pabi" = 34 ] || { echo "layout-check: $SRC has IBVERBS_PABI_VERSION '$pabi', expected 34" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
inc=$tmp/include
mkdir -p "$inc/infiniband" "$inc/kernel-abi" "$inc/rdma" "$inc/ccan" "$inc/util"
cp "$SRC"/libibverbs/*.h "$inc/infiniband/"
cp "$SRC"/kernel-headers/rdma/*.h "$inc/rdma/"
cp "$SRC"/ccan/*.h "$inc/ccan/"
cp "$SRC"/util/*.h "$inc/util/"
python3 "$SRC/buildlib/make_abi_structs.py" "$SRC/kernel-headers/rdma/ib_user_verbs.h" \
	"$inc/kernel-abi/ib_user_verbs.h"
sed -e 's/^#cmakedefine \(.*\)/#define \1/' \
	-e 's/@SIZEOF_LONG_CODE@/#define SIZEOF_LONG 8/' \
	-e 's/@IOCTL_MODE_NUM@/3/' \
	-e 's/@IBVERBS_PABI_VERSION@/34/' \
	-e 's/@[A-Za-z_]*@/0/g' "$SRC/buildlib/config.h.in" >"$inc/config.h"

"$CC" -std=gnu11 -Wall -DPROBE_UPSTREAM -I"$inc" -o "$tmp/upstream" "$HERE/layout_probe.c"
"$CC" -std=gnu11 -Wall -Wextra -I"$HERE/../../../include/uapi" -o "$tmp/ours" "$HERE/layout_probe.c"
"$tmp/upstream" >"$tmp/upstream.txt"
"$tmp/ours" >"$tmp/ours.txt"
if diff -u "$tmp/upstream.txt" "$tmp/ours.txt"; then
	echo "layout-check: $(wc -l <"$tmp/ours.txt") sizes, offsets and constants identical to rdma-core v44.0"
else
	echo "layout-check: verbs_private.h differs from rdma-core (- upstream, + ours)" >&2
	exit 1
fi
