#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# KASAN guest kernel for the VM tier (make vm-kasan):
#   scripts/kasan-kernel.sh [--rebuild] [--no-module] [--jobs N]
# builds a kernel from linux-source-6.12 (x86_64_defconfig plus the
# fragment scripts/vm/kasan.config: generic inline KASAN with vmalloc
# shadow, KFENCE, SLUB debugging, lockdep, sleep-in-atomic, list and object
# debugging, and the guest's drivers and RDMA/ULP modules), installs it
# where scripts/vm.sh --kernel KVER finds an unpacked kernel
# (${XDG_CACHE_HOME:-$HOME/.cache}/softhca/kernels/KVER/boot/vmlinuz-KVER
# and lib/modules/KVER/, with the .softhca-complete stamp), builds softhca
# against it into build/kernel-KVER/ (scripts/build-for.sh --kdir) and
# prints KVER (6.12.N-softhca-kasan) on stdout; progress goes to stderr.
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/softhca/kasan/: build/ (make O=),
# build.log, and linux-source-6.12/ when the KUnit tier's extracted tree
# (softhca/linux-source-6.12, used read-only here) is not there.
# The kernel is rebuilt only when the fragment, the source package or this
# script's FORMAT change, or with --rebuild (an incremental make); a warm
# run only rebuilds the module. Cold: about an hour on 2 busy cores.
#
#   --rebuild     run make in the kernel build tree even if it is up to date
#   --no-module   do not build softhca
#   --jobs N      parallel make jobs (default: nproc)
set -euo pipefail

FORMAT=1	# bump when the build or install steps change

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/versions.env
. "$repo/scripts/versions.env"

rebuild=0
module=1
jobs=$(nproc)
while [ $# -gt 0 ]; do
	case $1 in
	--rebuild) rebuild=1 ;;
	--no-module) module=0 ;;
	--jobs) jobs=${2:?--jobs needs a number}; shift ;;
	-h|--help) sed -n '4,/^set -e/s/^# \{0,1\}//p' "$0"; exit 0 ;;
	*) echo "usage: $0 [--rebuild] [--no-module] [--jobs N]" >&2; exit 2 ;;
	esac
	shift
done

say() { echo "kasan-kernel: $*" >&2; }
die() { say "error: $*"; exit 1; }

top=${XDG_CACHE_HOME:-$HOME/.cache}/softhca
cache=$top/kasan
build=$cache/build
log=$cache/build.log
kernels=$top/kernels
frag=$repo/scripts/vm/kasan.config
tarball=/usr/src/$DEBIAN_KSRC_PKG.tar.xz
[ -r "$tarball" ] || die "$tarball not found (scripts/deps.sh kunit)"
mkdir -p "$cache"

# One build at a time in this build cache.
exec 8>"$cache/.lock"
flock 8

# ---- source tree ------------------------------------------------------------

# The KUnit tier's tree (scripts/kunit.sh) when it is extracted from the
# current package; it is only read here (make O=), never written. Else
# our own copy. Once configured, the build keeps the tree it started with.
tstamp=$(stat -c '%s %Y' "$tarball")
src_ok() {
	[ -r "$1/Makefile" ] && [ -r "$1/.softhca-stamp" ] &&
		[ "$(cat "$1/.softhca-stamp")" = "$tstamp" ]
}
src=
if [ -r "$cache/source" ] && [ -r "$build/Makefile" ]; then
	src=$(cat "$cache/source")
	src_ok "$src" || src=
fi
if [ -z "$src" ]; then
	if src_ok "$top/$DEBIAN_KSRC_PKG"; then
		src=$top/$DEBIAN_KSRC_PKG
	else
		src=$cache/$DEBIAN_KSRC_PKG
		if ! src_ok "$src"; then
			say "extracting $tarball into $cache"
			rm -rf "$src"
			tar -xJf "$tarball" -C "$cache"
			echo "$tstamp" >"$src/.softhca-stamp"
		fi
	fi
	if [ "$(cat "$cache/source" 2>/dev/null)" != "$src" ]; then
		rm -rf "$build"
		echo "$src" >"$cache/source"
	fi
fi
# O= needs a clean source tree (no .config, no objects of an in-tree build).
if [ -e "$src/.config" ] || [ -d "$src/include/config" ]; then
	die "$src has an in-tree build (.config): cannot build with O="
fi

kmake() {
	nice -n 10 make -C "$src" O="$build" LOCALVERSION= "$@"
}

# ---- configure and build ----------------------------------------------------

key=$( { echo "format $FORMAT src $src $tstamp"; cat "$frag"; } | sha256sum | cut -c1-16)
built=0
if [ -r "$build/.softhca-kasan-key" ] && [ "$(cat "$build/.softhca-kasan-key")" = "$key" ]; then
	built=1
fi

# check_config: every line of the fragment made it into .config
check_config() {
	local line sym bad=0
	while IFS= read -r line; do
		case $line in
		"# CONFIG_"*" is not set")
			sym=${line#\# }
			sym=${sym%% *}
			if grep -q "^$sym=" "$build/.config"; then
				say "config: $sym is set, the fragment says not"
				bad=1
			fi ;;
		CONFIG_*)
			if ! grep -qxF "$line" "$build/.config"; then
				say "config: wanted $line, got: $(grep "^${line%%=*}=" "$build/.config" ||
					echo "${line%%=*} not set")"
				bad=1
			fi ;;
		esac
	done <"$frag"
	return $bad
}

if [ $built = 0 ] || [ $rebuild = 1 ]; then
	mkdir -p "$build"
	if [ $built = 0 ]; then
		say "configuring $build (x86_64_defconfig + $frag)"
		kmake -s x86_64_defconfig >&2
		"$src/scripts/kconfig/merge_config.sh" -m -O "$build" \
			"$build/.config" "$frag" >"$cache/merge.log" 2>&1 ||
			{ cat "$cache/merge.log" >&2; die "merge_config.sh failed"; }
		kmake -s olddefconfig >&2
		check_config || die "fix $frag (the options above did not resolve)"
	fi
	say "building in $build with $jobs jobs (log: $log); cold: about an hour"
	t0=$SECONDS
	kmake -j"$jobs" bzImage modules >"$log" 2>&1 || {
		tail -n 40 "$log" >&2
		die "kernel build failed (log: $log)"
	}
	say "kernel built in $((SECONDS - t0))s"
fi
kver=$(kmake -s kernelrelease)
case $kver in
*-softhca-kasan) ;;
*) die "unexpected kernelrelease '$kver'" ;;
esac

# ---- install: the layout of scripts/kernel-image.sh -------------------------

root=$kernels/$kver
if [ $built = 0 ] || [ $rebuild = 1 ] || [ ! -r "$root/.softhca-complete" ] ||
	[ "$build/arch/x86/boot/bzImage" -nt "$root/.softhca-complete" ] ||
	[ -n "$(find "$build" -name '*.ko' -newer "$root/.softhca-complete" -print -quit)" ]; then
	say "installing $kver into $root"
	mkdir -p "$kernels"
	tmp=$(mktemp -d "$kernels/.kasan.XXXXXX")
	trap 'rm -rf "$tmp"' EXIT
	chmod 0755 "$tmp"	# mktemp's 0700 would stay on the installed root
	mkdir -p "$tmp/boot"
	cp "$build/arch/x86/boot/bzImage" "$tmp/boot/vmlinuz-$kver"
	cp "$build/.config" "$tmp/boot/config-$kver"
	cp "$build/System.map" "$tmp/boot/System.map-$kver"
	kmake -s INSTALL_MOD_PATH="$tmp" INSTALL_MOD_STRIP=1 DEPMOD=true \
		modules_install >>"$log" 2>&1 || die "modules_install failed (log: $log)"
	# no build/source links into the cache from the guest's module tree
	rm -f "$tmp/lib/modules/$kver/build" "$tmp/lib/modules/$kver/source"
	depmod -b "$tmp" "$kver"
	touch "$tmp/.softhca-complete"
	rm -rf "$root"
	mv "$tmp" "$root"
	trap - EXIT
	# older KASAN kernels (another sublevel) are not needed any more
	for d in "$kernels"/*-softhca-kasan; do
		[ "$d" = "$root" ] || [ ! -d "$d" ] || rm -rf "$d"
	done
fi
echo "$key" >"$build/.softhca-kasan-key"

# ---- the module under test --------------------------------------------------

if [ $module = 1 ]; then
	say "building softhca for $kver into build/kernel-$kver/"
	"$repo/scripts/build-for.sh" --kdir "$build" "$kver" >&2 ||
		die "softhca does not build against $kver"
fi
echo "$kver"
