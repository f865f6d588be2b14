#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Install the Debian packages a tier needs; a no-op when they are there.
#   scripts/deps.sh [build|check|kunit|vm|vm61|pkg|bench|wire|all]...
# all = the tiers of make test (build, check, kunit, vm, wire, vm61, pkg); vm61 =
# the headers of Debian 12's 6.1 kernel (DEBIAN_KVER_61; its image is
# unpacked by scripts/kernel-image.sh, not installed); pkg = make deb and its
# test (dpkg-deb, lintian, mmdebstrap for a clean Debian root); bench = what make
# bench needs on top of vm and build (fio for the ULP benchmark, gnuplot-nox
# for the plots next to the tables); make test never installs it. wire =
# the two-guest wire tier (make wire) on top of vm: tshark to decode its
# capture, python3 for its QEMU launcher and capture check.
set -euo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/versions.env
. "$repo/scripts/versions.env"

pkgs_build="gcc make libc6-dev linux-headers-$DEBIAN_KVER libibverbs-dev"
pkgs_vm61="linux-headers-$DEBIAN_KVER_61"
pkgs_check="$pkgs_build $pkgs_vm61 sparse perl $DEBIAN_KSRC_PKG xz-utils"
pkgs_kunit="$DEBIAN_KSRC_PKG xz-utils python3 gcc make bc flex bison libelf-dev libssl-dev dwarves"
pkgs_vm="linux-image-$DEBIAN_KVER qemu-system-x86 busybox-static cpio kmod
	iproute2 rdma-core ibverbs-utils ibverbs-providers libibverbs-dev
	librdmacm-dev rdmacm-utils perftest xz-utils gzip"
# iscsid and iscsiadm in the guest (89-iser-pi); tcpdump in the guest (the
# capture of the wire tier)
pkgs_vm="$pkgs_vm open-iscsi tcpdump"
pkgs_wire="$pkgs_vm tshark python3"
pkgs_bench="fio gnuplot-nox"
pkgs_pkg="dpkg-dev lintian mmdebstrap git"

want=""
[ $# -gt 0 ] || set -- all
for tier in "$@"; do
	case $tier in
	build) want="$want $pkgs_build" ;;
	check) want="$want $pkgs_check" ;;
	kunit) want="$want $pkgs_kunit" ;;
	vm) want="$want $pkgs_vm" ;;
	vm61) want="$want $pkgs_vm61" ;;
	pkg) want="$want $pkgs_build $pkgs_pkg" ;;
	bench) want="$want $pkgs_bench" ;;
	wire) want="$want $pkgs_wire" ;;
	all) want="$want $pkgs_build $pkgs_check $pkgs_kunit $pkgs_vm $pkgs_wire $pkgs_vm61 $pkgs_pkg" ;;
	*) echo "deps: unknown tier $tier" >&2; exit 2 ;;
	esac
done

missing=""
for p in $want; do
	case " $missing " in *" $p "*) continue ;; esac
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done
[ -n "$missing" ] || exit 0

echo "deps: installing$missing"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
case " $missing " in
*" tshark "*)	# wireshark-common asks whether non-root users may capture: no
	echo "wireshark-common wireshark-common/install-setuid boolean false" |
		$sudo debconf-set-selections ;;
esac
$sudo apt-get update -qq
# shellcheck disable=SC2086
$sudo apt-get install -y -qq --no-install-recommends $missing > /tmp/softhca-apt.log 2>&1 || {
	tail -30 /tmp/softhca-apt.log
	exit 1
}
