#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Packaging tier: the two Debian packages of "make deb" on a clean Debian 12
# root. Builds the packages (lintian clean), installs them with dpkg in a
# throwaway chroot holding only dkms, kmod, libibverbs1 and the headers of
# both pinned kernels (6.12 and Debian 12's default 6.1), and checks that
# DKMS built and installed softhca.ko for each kernel, that the provider and
# its .driver file are where libibverbs looks, that DKMS's kernel hook brings
# the module back (a kernel upgrade), that the installed module and provider
# alone work in the VM tier's guest under each kernel (modprobe, rdma link
# add, ibv_devinfo, ibv_rc_pingpong), and that "apt-get purge" of both
# packages leaves no file of theirs behind.
# One line per check, "PKG <name> PASS|FAIL", then "pkg: N passed, N failed".
#
# Usage: scripts/pkgtest.sh [--rebuild-root] [--keep]
#   --rebuild-root  rebuild the cached Debian root
#   --keep          keep the chroot of this run (its path is printed)
#
# Cache: ${XDG_CACHE_HOME:-~/.cache}/softhca/pkg/root-<key>/, the Debian root
# from mmdebstrap (about 1 GB), rebuilt only when missing or when the package
# set changes. Each run works in an overlay on top of it (a copy where
# overlayfs is missing), so the cached root stays clean. Runs as root
# (chroot, mount).
set -uo pipefail

repo=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=scripts/versions.env
. "$repo/scripts/versions.env"
cd "$repo" || exit 1

KVERS="$DEBIAN_KVER $DEBIAN_KVER_61"
VERSION=$SOFTHCA_VERSION
MIRROR=${SOFTHCA_DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY=${SOFTHCA_DEBIAN_SECURITY:-http://deb.debian.org/debian-security}
# Both kernels as a server has them: image (its modules are not unpacked,
# see below; its postinst's depmod makes the module indexes) and headers.
ROOT_PKGS="dkms kmod iproute2 libibverbs1 linux-headers-$DEBIAN_KVER"
ROOT_PKGS="$ROOT_PKGS linux-image-$DEBIAN_KVER_61 linux-headers-$DEBIAN_KVER_61"
ROOT_FORMAT=3	# bump when the way the root is made changes
cache=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/pkg
logdir=${SOFTHCA_LOGDIR:-$repo/build/test-logs}/pkg
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || echo x86_64-linux-gnu)
arch=$(dpkg --print-architecture)

REBUILD=0
KEEP=0
for a; do
	case $a in
	--rebuild-root) REBUILD=1 ;;
	--keep) KEEP=1 ;;
	*) echo "pkgtest: unknown argument $a" >&2; echo "pkg: 0 passed, 1 failed"; exit 2 ;;
	esac
done

passed=0
failed=0
result() {	# name, status (0 = pass), detail...
	local name=$1 st=$2
	shift 2
	if [ "$st" -eq 0 ]; then
		echo "PKG $name PASS"
		passed=$((passed + 1))
	else
		echo "PKG $name FAIL"
		[ $# -eq 0 ] || printf '    %s\n' "$@"
		failed=$((failed + 1))
	fi
}
finish() {
	echo "pkg: $passed passed, $failed failed"
	[ "$failed" -eq 0 ]
	exit
}

if [ "$(id -u)" -ne 0 ]; then
	result root-user 1 "the packaging tier needs root (chroot, mount)"
	finish
fi
rm -rf "$logdir"
mkdir -p "$cache" "$logdir"

# ---- the packages ------------------------------------------------------------

debdir=$logdir/deb
t0=$SECONDS
scripts/packaging/mkdeb.sh "$debdir" >"$logdir/mkdeb.log" 2>&1
result make-deb $? "$(tail -n 20 "$logdir/mkdeb.log")"
dkms_deb=$debdir/softhca-dkms_${VERSION}_all.deb
lib_deb=$debdir/libsofthca_${VERSION}_${arch}.deb
if [ ! -s "$dkms_deb" ] || [ ! -s "$lib_deb" ]; then
	result packages-present 1 "no $dkms_deb or $lib_deb"
	finish
fi
lintian --fail-on error,warning "$dkms_deb" "$lib_deb" >"$logdir/lintian.log" 2>&1
result lintian $? "$(grep -v 'root privileges' "$logdir/lintian.log")"
echo "pkgtest: packages built and checked in $((SECONDS - t0))s"

# ---- the Debian root (cached) --------------------------------------------------

key=$(echo "$ROOT_FORMAT $ROOT_PKGS $MIRROR $SECURITY" | sha256sum | cut -c1-12)
base=$cache/root-$key
exec 9>"$cache/.lock"
flock 9
if [ $REBUILD = 1 ] || [ ! -d "$base/usr/src/linux-headers-$DEBIAN_KVER" ] ||
	[ ! -d "$base/usr/src/linux-headers-$DEBIAN_KVER_61" ]; then
	t0=$SECONDS
	echo "pkgtest: building the Debian 12 root ($ROOT_PKGS) with mmdebstrap"
	# The kernel images come along (6.12's headers depend on it), but
	# neither its 5000 modules (building against the headers needs none,
	# and every depmod of DKMS would go through them) nor its initramfs
	# (minutes to make; a local diversion turns update-initramfs into true).
	# shellcheck disable=SC2016
	mmdebstrap --variant=apt --mode=root \
		--aptopt='APT::Install-Recommends "false"' \
		--dpkgopt='path-exclude=/lib/modules/*/kernel/*' \
		--essential-hook='chroot "$1" dpkg-divert --quiet --local --rename --add /usr/sbin/update-initramfs && ln -s /bin/true "$1/usr/sbin/update-initramfs"' \
		--include="${ROOT_PKGS// /,}" bookworm "$base.new" \
		"deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" \
		"deb $SECURITY bookworm-security main" >"$logdir/mmdebstrap.log" 2>&1
	st=$?
	rm -rf --one-file-system "$base"
	if [ $st -eq 0 ]; then
		mv "$base.new" "$base"
		find "$cache" -maxdepth 1 -name 'root-*' ! -name "$(basename "$base")" \
			-exec rm -rf --one-file-system {} +
		echo "pkgtest: root built in $((SECONDS - t0))s: $base"
	else
		rm -rf --one-file-system "$base.new"
	fi
	result debian-root $st "$(tail -n 20 "$logdir/mmdebstrap.log")"
	[ $st -eq 0 ] || finish
else
	result debian-root 0	# cached: the same count, cold or warm
fi
flock -s 9

t0=$SECONDS
run=$(mktemp -d "$cache/run.XXXXXX")
R=$run/root
# shellcheck disable=SC2317	# (called by the trap)
cleanup() {
	local m
	for m in "$R/proc" "$R"; do
		if mountpoint -q "$m"; then umount "$m" || umount -l "$m"; fi
		if mountpoint -q "$m"; then
			echo "pkgtest: $m still mounted; leaving $run" >&2
			return
		fi
	done
	if [ "$KEEP" = 1 ]; then
		echo "pkgtest: kept $run"
	else
		rm -rf --one-file-system "$run"
	fi
}
trap cleanup EXIT
mkdir -p "$R" "$run/upper" "$run/work"
if ! mount -t overlay overlay -o "lowerdir=$base,upperdir=$run/upper,workdir=$run/work" "$R" 2>/dev/null; then
	echo "pkgtest: no overlayfs; copying the root"
	cp -a "$base/." "$R/"
fi
mount -t proc proc "$R/proc"
echo "pkgtest: fresh root ready in $((SECONDS - t0))s"

in_root() { chroot "$R" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 "$@"; }

# What is there before: purging must come back to it.
snapshot() {
	in_root find / -xdev \( -path /proc -o -path /dev -o -path /sys -o -path /tmp \
		-o -path /run -o -path /var/log -o -path /var/cache -o -path /var/lib/dpkg \
		-o -path /var/lib/apt \) -prune -o -print | LC_ALL=C sort
}
snapshot >"$run/before.txt"

# ---- install -----------------------------------------------------------------

t0=$SECONDS
cp "$dkms_deb" "$lib_deb" "$R/tmp/"
in_root dpkg -i "/tmp/${dkms_deb##*/}" "/tmp/${lib_deb##*/}" >"$logdir/install.log" 2>&1
st=$?
result install $st "$(tail -n 30 "$logdir/install.log")"
if [ $st -ne 0 ]; then
	cp "$R/var/lib/dkms/softhca/$VERSION/build/make.log" "$logdir/dkms-make.log" 2>/dev/null
	finish
fi
echo "pkgtest: both packages installed in $((SECONDS - t0))s (DKMS build included)"

# Per kernel: DKMS built and installed it (dpkg's first install, in a chroot
# whose running kernel is not installed, builds for every kernel with
# headers); the module is under updates/dkms, the one modprobe resolves,
# with our version and that kernel's vermagic.
declare -A kos
for k in $KVERS; do
	status=$(in_root dkms status -m softhca -v "$VERSION" -k "$k" 2>&1)
	case $status in
	*"$k"*installed*) st=0 ;;
	*) st=1 ;;
	esac
	result "dkms-status-$k" $st "dkms status: $status"

	ko=
	for f in "$R/lib/modules/$k/updates/dkms/softhca.ko" "$R/lib/modules/$k/updates/dkms/softhca.ko.xz"; do
		[ ! -e "$f" ] || ko=$f
	done
	if [ -z "$ko" ]; then
		result "module-file-$k" 1 "no softhca.ko under /lib/modules/$k/updates/dkms: $(ls "$R/lib/modules/$k/updates/dkms" 2>&1)"
		continue
	fi
	result "module-file-$k" 0
	ver=$(in_root modinfo -F version "${ko#"$R"}")
	magic=$(in_root modinfo -F vermagic "${ko#"$R"}")
	path=$(in_root modinfo -k "$k" -n softhca 2>&1)
	st=0
	[ "$ver" = "$VERSION" ] && [ "${magic%% *}" = "$k" ] && [ "$path" = "${ko#"$R"}" ] || st=1
	result "module-modinfo-$k" $st "version '$ver' (want $VERSION), vermagic '$magic', modprobe resolves '$path'"
	# The guest loads it with modprobe: a plain .ko, copied before the
	# kernel upgrade below removes and reinstalls it.
	kos[$k]=$run/softhca-$k.ko
	case $ko in
	*.xz) xz -dc "$ko" >"${kos[$k]}" ;;
	*) cp "$ko" "${kos[$k]}" ;;
	esac
done

# The provider: where this libibverbs1 looks for providers and .driver files.
prov=/usr/lib/$multiarch/libibverbs/libsofthca-rdmav34.so
ibv=$(in_root sh -c 'readlink -f /usr/lib/*/libibverbs.so.1')
st=0
detail=()
[ -s "$R$prov" ] || { st=1; detail+=("$prov missing"); }
grep -aq "/usr/lib/$multiarch/libibverbs/lib%s-rdmav34.so" "$R$ibv" ||
	{ st=1; detail+=("$ibv does not look for providers in /usr/lib/$multiarch/libibverbs"); }
grep -aq "/etc/libibverbs.d" "$R$ibv" || { st=1; detail+=("$ibv does not read /etc/libibverbs.d"); }
drv=$(grep -v '^#' "$R/etc/libibverbs.d/softhca.driver" 2>/dev/null)
[ "$drv" = "driver softhca" ] || { st=1; detail+=("softhca.driver says '$drv'"); }
result provider-files $st "${detail[@]}"

st=0
[ -s "$R/lib/systemd/system/softhca@.service" ] && [ -s "$R/usr/src/softhca-$VERSION/dkms.conf" ] || st=1
result unit-and-source $st "softhca@.service or /usr/src/softhca-$VERSION/dkms.conf missing"
# The unit as systemd reads it (the host's systemd-analyze, when there).
if command -v systemd-analyze >/dev/null && [ -s "$R/lib/systemd/system/softhca@.service" ]; then
	mkdir -p "$run/unit"
	cp "$R/lib/systemd/system/softhca@.service" "$run/unit/"
	out=$(systemd-analyze verify --man=no "$run/unit/softhca@eth0.service" 2>&1)
	st=$?
	[ -z "$out" ] || st=1
	result unit-verify $st "$out"
fi

# ---- the installed files alone, in the VM tier's guest (in the background,
# while the kernel upgrade below is tried) --------------------------------------

t_vm=$SECONDS
ov=$run/overlay
mkdir -p "$ov/pkgroot/etc/libibverbs.d"
cp "$R/etc/libibverbs.d/softhca.driver" "$ov/pkgroot/etc/libibverbs.d/"
cp "$R$prov" "$run/libsofthca-rdmav34.so" 2>/dev/null
# One guest per kernel, one after the other (each boots that kernel with
# the module DKMS built for it).
vm_installed() {
	local k
	for k in $KVERS; do
		if [ ! -s "${kos[$k]:-}" ] || [ ! -s "$run/libsofthca-rdmav34.so" ]; then
			echo "vm-installed-$k: no installed module or provider to boot with"
			continue
		fi
		if [ "$k" != "$DEBIAN_KVER" ] && ! scripts/kernel-image.sh "$k"; then
			echo "vm-installed-$k: kernel image $k unavailable"
			continue
		fi
		scripts/vm.sh --kernel "$k" --label "vm-installed-$k" \
			--module "${kos[$k]}" --provider "$run/libsofthca-rdmav34.so" \
			--overlay "$ov" --env "PKG_VERSION=$VERSION" \
			--run tests/pkg/guest-installed.sh
	done
}
vm_installed >"$logdir/vm.log" 2>&1 </dev/null &
vmpid=$!

# ---- a kernel upgrade: DKMS's hook (what installing linux-headers-<kver>
# runs) installs the module again (AUTOINSTALL) for a kernel that does not
# have it -- here Debian 12's 6.1. Uninstalled, not unbuilt: the postinst
# already showed the build, and a second one would cost a minute. ---------

t0=$SECONDS
UK=$DEBIAN_KVER_61
in_root dkms uninstall -m softhca -v "$VERSION" -k "$UK" >"$logdir/upgrade.log" 2>&1
hook=/etc/kernel/header_postinst.d/dkms
if [ -e "$R/lib/modules/$UK/updates/dkms/softhca.ko" ] ||
	[ -e "$R/lib/modules/$UK/updates/dkms/softhca.ko.xz" ]; then
	result kernel-upgrade 1 "dkms uninstall -k $UK left the module"
elif [ ! -x "$R$hook" ]; then
	result kernel-upgrade 1 "$hook missing in dkms"
else
	in_root "$hook" "$UK" >>"$logdir/upgrade.log" 2>&1
	status=$(in_root dkms status -m softhca -v "$VERSION" -k "$UK" 2>&1)
	case $status in
	*"$UK"*installed*) st=0 ;;
	*) st=1 ;;
	esac
	result kernel-upgrade $st "after $hook $UK: dkms status '$status'" \
		"$(tail -n 20 "$logdir/upgrade.log")"
	echo "pkgtest: module reinstalled by the kernel hook in $((SECONDS - t0))s"
fi

wait "$vmpid"
for k in $KVERS; do
	grep -q "^vm-installed-$k: 1 passed, 0 failed" "$logdir/vm.log"
	result "vm-installed-$k" $? "$(grep -A60 "vm-installed-$k" "$logdir/vm.log" | tail -n 60)"
done
echo "pkgtest: VMs with the installed files done after $((SECONDS - t_vm))s"

# ---- purge: nothing of ours is left -------------------------------------------

in_root apt-get purge -y -q libsofthca softhca-dkms >"$logdir/purge.log" 2>&1
result purge $? "$(tail -n 20 "$logdir/purge.log")"
rm -f "$R/tmp/${dkms_deb##*/}" "$R/tmp/${lib_deb##*/}"
snapshot >"$run/after.txt"
# DKMS's own signing key (made at its first build, for every module) is
# dkms's, not ours.
left=$(LC_ALL=C comm -13 "$run/before.txt" "$run/after.txt" |
	grep -v -E '^/var/lib/dkms/mok\.(key|pub)$')
st=0
[ -z "$left" ] || st=1
for k in $KVERS; do
	if grep -q softhca "$R/lib/modules/$k/modules.dep" 2>/dev/null; then
		st=1
		left="$left
$k's modules.dep still lists softhca"
	fi
done
if in_root dkms status 2>/dev/null | grep -q softhca; then
	st=1
	left="$left
dkms status still lists softhca"
fi
mapfile -t lines <<<"$left"
result purge-clean $st "left behind:" "${lines[@]}"

finish
