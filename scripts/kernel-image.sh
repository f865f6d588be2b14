#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Make Debian's kernel KVER bootable by scripts/vm.sh without installing it:
#   scripts/kernel-image.sh KVER
# prints the root directory that holds boot/vmlinuz-KVER and
# lib/modules/KVER/ (with modules.dep). "/" when the kernel is installed;
# otherwise the linux-image-KVER package is downloaded with apt-get and
# unpacked with dpkg-deb -x into ${XDG_CACHE_HOME:-$HOME/.cache}/softhca/
# kernels/KVER/ once: no initramfs is generated, no bootloader hook runs,
# nothing outside the cache changes (seconds instead of minutes).
set -euo pipefail

kver=${1:?usage: $0 KVER}
if [ -r "/boot/vmlinuz-$kver" ] && [ -r "/lib/modules/$kver/modules.dep" ]; then
	echo /
	exit 0
fi

cache=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/kernels
root=$cache/$kver
if [ -r "$root/.softhca-complete" ]; then
	echo "$root"
	exit 0
fi

mkdir -p "$cache"
tmp=$(mktemp -d "$cache/.unpack.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
echo "kernel-image: unpacking linux-image-$kver into $root" >&2
# apt-get download as root: let the _apt user write the file.
chmod 0777 "$tmp"
(cd "$tmp" && apt-get download -q "linux-image-$kver" >&2) || {
	echo "kernel-image: cannot download linux-image-$kver (apt-get update?)" >&2
	exit 1
}
dpkg-deb -x "$tmp"/linux-image-"$kver"_*.deb "$tmp/root"
[ -r "$tmp/root/boot/vmlinuz-$kver" ] || {
	echo "kernel-image: linux-image-$kver has no /boot/vmlinuz-$kver" >&2
	exit 1
}
depmod -b "$tmp/root" "$kver"
touch "$tmp/root/.softhca-complete"
rm -rf "$root"
mv "$tmp/root" "$root"
echo "$root"
