#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Build-time guards for the softhca provider (see verbs_private.h).
#
#   check-libibverbs.sh LIBIBVERBS PABI
#       LIBIBVERBS (the libibverbs.so.1 we link against) must export
#       verbs_register_driver_<PABI>@IBVERBS_PRIVATE_<PABI>: the private ABI
#       verbs_private.h describes.
#   check-libibverbs.sh --provider PROVIDER.so PABI
#       the built provider must export no symbol and import its libibverbs
#       private symbols at IBVERBS_PRIVATE_<PABI> only.
set -eu

die() {
	echo "softhca provider: error: $*" >&2
	exit 1
}

# dynsyms FILE: "name@version" of the dynamic symbol table, "U name@version"
# for undefined ones.
dynsyms() {
	if nm -D --with-symbol-versions "$1" >/dev/null 2>&1; then
		nm -D --with-symbol-versions "$1" |
			awk '{ if (NF == 2) print "U " $2; else print $3 }'
	elif command -v objdump >/dev/null; then
		objdump -T "$1" | awk '$NF != "" && $4 ~ /^\*UND\*$/ { print "U " $NF "@" $(NF-1); next }
			/DF|DO/ { print $NF "@" $(NF-1) }'
	else
		die "neither nm (binutils >= 2.35) nor objdump found: cannot check $1"
	fi
}

if [ "${1:-}" = --provider ]; then
	so=${2:?provider path}
	pabi=${3:?private ABI number}
	syms=$(dynsyms "$so")
	exported=$(printf '%s\n' "$syms" | grep -v '^U ' | grep -v '^$' || true)
	[ -z "$exported" ] ||
		die "$so exports symbols (the version script must hide everything): $exported"
	printf '%s\n' "$syms" | grep -q "^U verbs_register_driver_$pabi@IBVERBS_PRIVATE_$pabi\$" ||
		die "$so does not import verbs_register_driver_$pabi@IBVERBS_PRIVATE_$pabi"
	wrong=$(printf '%s\n' "$syms" | grep '@IBVERBS_PRIVATE_' |
		grep -v "@IBVERBS_PRIVATE_$pabi\$" || true)
	[ -z "$wrong" ] || die "$so imports another private ABI: $wrong"
	exit 0
fi

lib=${1:?libibverbs path}
pabi=${2:?private ABI number}
[ -e "$lib" ] ||
	die "libibverbs not found ('$lib'); install libibverbs-dev (rdma-core 44)"
[ -r /usr/include/infiniband/verbs.h ] ||
	die "<infiniband/verbs.h> not found; install libibverbs-dev (rdma-core 44)"
dynsyms "$lib" | grep -Eq "^verbs_register_driver_$pabi@@?IBVERBS_PRIVATE_$pabi\$" || {
	found=$(dynsyms "$lib" | grep -o 'IBVERBS_PRIVATE_[0-9]*' | sort -u | tr '\n' ' ')
	die "$lib does not export verbs_register_driver_$pabi@IBVERBS_PRIVATE_$pabi" \
		"(it has: ${found:-no private ABI}). verbs_private.h describes IBVERBS_PRIVATE_34" \
		"(rdma-core 34..56, measured on 44.0); this libibverbs needs another header."
}
exit 0
