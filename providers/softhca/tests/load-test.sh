#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#
# Load test of the softhca provider against the installed libibverbs, on a
# machine without any RDMA device:
#  1. dlopen(RTLD_NOW): every private symbol binds at IBVERBS_PRIVATE_34;
#  2. device matching, through libibverbs' sysfs fallback on a fake sysfs
#     tree ($SYSFS_PATH) in a private mount namespace (a tmpfs /dev holding
#     the /dev/infiniband/uverbsN names libibverbs checks for):
#       softhca0 (softhca_abi_version 2, current)    -> listed
#       foo0     (a renamed softhca device)          -> listed
#       old0     (softhca_abi_version 1)             -> refused, with a warning
#       other0   (no softhca_abi_version attribute)  -> not ours
#       badabi0  (uverbs abi_version 1)              -> refused by libibverbs
#     Skipped if RDMA netlink works here (libibverbs then ignores sysfs) or
#     mount namespaces are not available.
#
# Usage: load-test.sh /abs/path/libsofthca-rdmav34.so /abs/path/load_test
set -u

LIB=${1:?provider .so}
BIN=${2:?load_test binary}
PASS=0
FAIL=0
ok() { echo "ok - $*"; PASS=$((PASS + 1)); }
bad() { echo "FAIL - $*"; FAIL=$((FAIL + 1)); }
skip() { echo "skip - $*"; }

if "$BIN" dlopen "$LIB"; then
	ok "dlopen(RTLD_NOW) of $LIB binds every symbol"
else
	bad "dlopen of $LIB"
fi

fake_sysfs() {
	local tmp=$1 sys=$1/sys i=0 ibdev attr abi
	mkdir -p "$sys/class/infiniband_verbs" "$sys/class/infiniband"
	echo 6 >"$sys/class/infiniband_verbs/abi_version"
	while read -r ibdev attr abi; do
		local uv=$sys/class/infiniband_verbs/uverbs$i
		mkdir -p "$uv" "$sys/class/infiniband/$ibdev"
		echo "$ibdev" >"$uv/ibdev"
		echo "231:$((192 + i))" >"$uv/dev"
		echo "$abi" >"$uv/abi_version"
		echo "1: CA" >"$sys/class/infiniband/$ibdev/node_type"
		[ "$attr" = - ] || echo "$attr" >"$sys/class/infiniband/$ibdev/softhca_abi_version"
		i=$((i + 1))
	done <<-EOT
	softhca0 2 2
	foo0 2 2
	old0 1 2
	other0 - 2
	badabi0 2 1
	EOT
	echo $i
}

if "$BIN" netlink; then
	skip "device matching: RDMA netlink works on this host, libibverbs would not read the fake sysfs"
elif [ "$(id -u)" != 0 ] || ! unshare -m true 2>/dev/null; then
	skip "device matching: needs root and unshare -m (mount namespace)"
else
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	n=$(fake_sysfs "$tmp")
	out=$(unshare -m sh -c '
		mount -t tmpfs tmpfs /dev || exit 99
		mkdir /dev/infiniband
		i=0
		while [ $i -lt '"$n"' ]; do : >/dev/infiniband/uverbs$i; i=$((i + 1)); done
		exec env SYSFS_PATH="$0" RDMAV_DRIVERS="$1" "$2" list softhca0 foo0
		' "$tmp/sys" "${LIB%-rdmav34.so}" "$BIN" 2>&1)
	rc=$?
	printf '%s\n' "$out" | sed 's/^/    /'
	if [ $rc = 0 ]; then
		ok "ibv_get_device_list lists exactly softhca0 and foo0 (renamed), as CAs"
	else
		bad "ibv_get_device_list: expected exactly softhca0 and foo0 (exit status $rc)"
	fi
	if printf '%s\n' "$out" | grep -q "libsofthca: warning: device old0 has softhca_abi_version '1'"; then
		ok "a device with softhca_abi_version 1 is refused with a warning"
	else
		bad "no warning about old0's softhca_abi_version 1"
	fi
	if printf '%s\n' "$out" | grep -q 'does not support the kernel ABI of 1'; then
		ok "a device with uverbs abi_version 1 is refused by libibverbs"
	else
		bad "no libibverbs warning about badabi0's uverbs ABI 1"
	fi
fi

echo "provider load test: $PASS passed, $FAIL failed"
[ $FAIL = 0 ]
