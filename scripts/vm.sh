#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# VM test tier: boot Debian's real kernel under QEMU with an initramfs holding
# busybox, the RDMA modules, rdma-core tools, the freshly built softhca.ko and
# tests/vm/*.sh; run the tests in the guest and report one line per test plus
# a final "vm: N passed, N failed".
#
# Usage: scripts/vm.sh [options] [TEST...]
#   TEST             run only these tests (10-link, 10-link.sh, link or 10);
#                    default: every tests/vm/NN-*.sh in order
#   --tour           run the demonstration tests/vm/tour.sh instead of tests
#   --run SCRIPT     run SCRIPT (POSIX sh, as a tests/vm/*.sh) in the guest
#                    as the only test, named after its file
#   --shell          boot into an interactive guest shell (debugging)
#   --kernel KVER    Debian kernel to boot (default: DEBIAN_KVER of
#                    scripts/versions.env, or $VM_KVER): installed, or
#                    unpacked into the cache by scripts/kernel-image.sh
#   --module PATH    module to test (default drivers/infiniband/sw/softhca/softhca.ko)
#   --provider PATH  rdma-core provider libsofthca-rdmav34.so to install in
#                    the guest (default: the newest one under providers/, if any)
#   --driver NAME    softhca (default) or rxe: run the same tests against
#                    rdma_rxe, to check the tests themselves
#   --tests-dir DIR  take the tests from DIR instead of tests/vm
#   --timeout SECS   bound for the whole VM run (default: 120 s plus
#                    test-timeout + 40 s per test, at most 1500 s; --shell: 1 h)
#   --test-timeout SECS  bound for each guest test (default 120)
#   -v, --verbose    stream the whole serial console
#   --rebuild        rebuild the cached base initramfs
#   --hardened       boot with the Debian kernel's own memory debugging, no
#                    rebuild: slub_debug=FZPU kfence.sample_interval=1
#                    page_poison=1 init_on_free=1 (red zones, poisoning and
#                    consistency checks of every slab cache, KFENCE sampling
#                    every millisecond, poisoned free pages); their reports
#                    fail a test (BAD in scripts/vm/init). Also VM_HARDENED=1;
#                    with --initrd-only, in boot.env's APPEND (the wire tier)
#   --label NAME     name of the final "NAME: N passed, N failed" line
#                    (default vm)
#
# For other harnesses that boot this guest (the benchmarks, tests/bench/run.sh):
#   --hub            eth0 and eth1 on one QEMU hub, as two ports of a switch,
#                    instead of two user-mode networks
#   --overlay DIR    copy DIR's files into the guest's root as well (kernel
#                    modules without debug info; the libraries that its
#                    programs need come along)
#   --env NAME=VALUE export NAME=VALUE to the guest's tests (plain values)
#   --show REGEX     stream the guest's console lines (from the first test
#                    on) that match REGEX, instead of one line per test
#   --console FILE   save the guest's console (without CRs) to FILE
#
# For the two-guest wire tier (scripts/wire.sh):
#   --wire           the guest runs tests/wire/NN-*.sh (or --tests-dir) as
#                    one of two guests on a link (tests/wire/wire-guest.sh);
#                    tests/vm/lib.sh comes along as /tests/vm-lib.sh
#   --initrd-only DIR  build the initramfs, write DIR/initrd.gz and
#                    DIR/boot.env (kernel, command line, accelerator, tests)
#                    and exit without booting
#
# Environment variables named FUZZ_*, RACE_* or VMT_* are passed to the guest
# tests (e.g. FUZZ_ITERS=1000000 FUZZ_SECS=0 make vm for a long fuzz run,
# RACE_SECS=600 scripts/vm.sh --hardened 95-race for a long race; see
# tests/vm/*.sh).
#
# Cache: ${XDG_CACHE_HOME:-$HOME/.cache}/softhca/vm/ (base initramfs, decompressed
# modules, console logs). Add kernel modules in scripts/vm/modules.list,
# programs in scripts/vm/binaries.list, compiled test programs in tests/vm/bin/.

set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
VMDIR=$ROOT/scripts/vm
DEBIAN_KVER=
if [ -r "$ROOT/scripts/versions.env" ]; then
	# shellcheck disable=SC1091
	. "$ROOT/scripts/versions.env"
fi
KVER=${VM_KVER:-${DEBIAN_KVER:-6.12.117+deb12-amd64}}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/vm
LIBDIR=/usr/lib/x86_64-linux-gnu
BASE_FORMAT=3	# bump when the layout of the base archive changes

MODE=tests
MODULE=$ROOT/drivers/infiniband/sw/softhca/softhca.ko
PROVIDER=
DRIVER=softhca
TOTAL_TIMEOUT=
TEST_TIMEOUT=
VERBOSE=0
REBUILD=0
SELECT=()
TESTDIR=$ROOT/tests/vm
RUN_SCRIPT=
HUB=0
OVERLAYS=()
GUEST_ENV=()
SHOW=
CONSOLE_OUT=
LABEL=vm
INITRD_ONLY=
TESTDIR_SET=0
HARDENED=${VM_HARDENED:-0}
# The Debian kernel has SLUB_DEBUG, KFENCE (sample interval 0 by default)
# and PAGE_POISONING built in: these turn them on for every cache and
# allocation. slub_debug=FZPU: sanity checks (F), red zones (Z), poisoning
# (P), alloc/free owner tracking (U); kfence.sample_interval=1: a KFENCE
# object every millisecond; page_poison=1, init_on_free=1: freed pages
# poisoned and objects zeroed on free (a use after free reads garbage).
HARDENED_APPEND="slub_debug=FZPU kfence.sample_interval=1 page_poison=1 init_on_free=1"

die() { echo "vm: error: $*" >&2; exit 2; }
TESTS=()
RUN=
SUMMARY_DONE=0
# On any early exit (error, interrupt) still end with the summary line.
on_exit() {
	local rc=$?
	if [ -n "$RUN" ]; then rm -rf "$RUN"; fi
	if [ $SUMMARY_DONE = 0 ] && [ "$MODE" != shell ]; then
		local n=${#TESTS[@]}
		[ "$n" -gt 0 ] || n=1
		echo "$LABEL: 0 passed, $n failed"
		[ $rc -ne 0 ] || rc=1
	fi
	exit $rc
}
trap on_exit EXIT
trap 'exit 130' INT TERM
note() { echo "vm: $*"; }

while [ $# -gt 0 ]; do
	case $1 in
	--tour) MODE=tour ;;
	--wire) MODE=wire ;;
	--initrd-only) INITRD_ONLY=${2:?--initrd-only needs a directory}; shift ;;
	--run) RUN_SCRIPT=${2:?--run needs a script}; shift ;;
	--run=*) RUN_SCRIPT=${1#*=} ;;
	--hub) HUB=1 ;;
	--bench) die "the benchmarks are tests/bench/run.sh now (make bench)" ;;
	--overlay) OVERLAYS+=("${2:?--overlay needs a directory}"); shift ;;
	--env) GUEST_ENV+=("${2:?--env needs NAME=VALUE}"); shift ;;
	--show) SHOW=${2:?--show needs a regular expression}; shift ;;
	--console) CONSOLE_OUT=${2:?--console needs a file}; shift ;;
	--shell) MODE=shell ;;
	--kernel) KVER=${2:?--kernel needs a kernel version}; shift ;;
	--kernel=*) KVER=${1#*=} ;;
	--module) MODULE=${2:?--module needs a path}; shift ;;
	--module=*) MODULE=${1#*=} ;;
	--provider) PROVIDER=${2:?--provider needs a path}; shift ;;
	--provider=*) PROVIDER=${1#*=} ;;
	--driver) DRIVER=${2:?--driver needs a name}; shift ;;
	--driver=*) DRIVER=${1#*=} ;;
	--tests-dir) TESTDIR=$(cd "${2:?--tests-dir needs a directory}" && pwd); TESTDIR_SET=1; shift ;;
	--timeout) TOTAL_TIMEOUT=${2:?}; shift ;;
	--test-timeout) TEST_TIMEOUT=${2:?}; shift ;;
	-v|--verbose) VERBOSE=1 ;;
	--rebuild) REBUILD=1 ;;
	--hardened) HARDENED=1 ;;
	--label) LABEL=${2:?--label needs a name}; shift ;;
	-h|--help) sed -n '4,/^$/s/^# \{0,1\}//p' "$0"; SUMMARY_DONE=1; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) SELECT+=("$1") ;;
	esac
	shift
done

case $DRIVER in
softhca|rxe) ;;
*) die "--driver must be softhca or rxe" ;;
esac
case $HARDENED in
0|1) ;;
*) die "VM_HARDENED must be 0 or 1" ;;
esac
if [ "$MODE" = wire ] && [ $TESTDIR_SET = 0 ]; then
	TESTDIR=$ROOT/tests/wire
fi
if [ -n "$INITRD_ONLY" ]; then
	[ "$MODE" != shell ] || die "--initrd-only and --shell exclude each other"
	mkdir -p "$INITRD_ONLY"
	INITRD_ONLY=$(cd "$INITRD_ONLY" && pwd)
fi
case $MODULE in
/*) ;;
*) MODULE=$PWD/$MODULE ;;
esac
for d in ${OVERLAYS[@]+"${OVERLAYS[@]}"}; do
	[ -d "$d" ] || die "--overlay $d: not a directory"
done
for e in ${GUEST_ENV[@]+"${GUEST_ENV[@]}"}; do
	[[ $e =~ ^[A-Za-z_][A-Za-z0-9_]*=[A-Za-z0-9._,:-]*$ ]] ||
		die "--env $e: expected NAME=VALUE, the value plain (letters, digits, . _ , : -)"
done

for tool in qemu-system-x86_64 cpio gzip xz modinfo depmod ldd timeout flock; do
	command -v "$tool" >/dev/null || die "$tool not found"
done

# The guest kernel: installed (/boot, /lib/modules), or unpacked into the
# cache by scripts/kernel-image.sh (KROOT/boot, KROOT/lib/modules).
KROOT=
if [ ! -r "/boot/vmlinuz-$KVER" ] || [ ! -d "/lib/modules/$KVER/kernel" ]; then
	KROOT=${XDG_CACHE_HOME:-$HOME/.cache}/softhca/kernels/$KVER
	[ -r "$KROOT/.softhca-complete" ] ||
		die "kernel $KVER is neither installed nor unpacked (scripts/kernel-image.sh $KVER)"
fi
KDIR=$KROOT/lib/modules/$KVER
KERNEL=$KROOT/boot/vmlinuz-$KVER
[ -r "$KERNEL" ] || die "$KERNEL not found (install linux-image-$KVER)"
[ -d "$KDIR/kernel" ] || die "$KDIR/kernel not found"
BUSYBOX=$(command -v busybox.static 2>/dev/null || echo /bin/busybox)
[ -x "$BUSYBOX" ] || die "busybox not found (install busybox-static)"

mkdir -p "$CACHE/logs" "$CACHE/kmod"

# ---- which tests ---------------------------------------------------------

ALL_TESTS=()
for f in "$TESTDIR"/[0-9][0-9]-*.sh; do
	[ -e "$f" ] && ALL_TESTS+=("$(basename "$f" .sh)")
done
if [ "$MODE" = tour ]; then
	[ -r "$TESTDIR/tour.sh" ] || die "$TESTDIR/tour.sh not found"
	TESTS=(tour)
elif [ "$MODE" != shell ] && [ -n "$RUN_SCRIPT" ]; then
	[ ${#SELECT[@]} -eq 0 ] || die "--run takes no test names"
	[ -r "$RUN_SCRIPT" ] || die "$RUN_SCRIPT not found"
	TESTS=("$(basename "$RUN_SCRIPT" .sh)")
elif [ "$MODE" != shell ]; then
	if [ ${#SELECT[@]} -eq 0 ]; then
		TESTS=("${ALL_TESTS[@]}")
	else
		for s in "${SELECT[@]}"; do
			s=$(basename "$s" .sh)
			found=
			for t in "${ALL_TESTS[@]}"; do
				if [ "$t" = "$s" ] || [ "${t#[0-9][0-9]-}" = "$s" ] || [ "${t%%-*}" = "$s" ]; then
					found=$t
					break
				fi
			done
			[ -n "$found" ] || die "no test '$s' in $TESTDIR (have: ${ALL_TESTS[*]})"
			TESTS+=("$found")
		done
		mapfile -t TESTS < <(printf '%s\n' "${TESTS[@]}" | sort -u)
	fi
	[ ${#TESTS[@]} -gt 0 ] || die "no tests in $TESTDIR"
fi

TEST_TIMEOUT=${TEST_TIMEOUT:-120}
case $TEST_TIMEOUT$TOTAL_TIMEOUT in
*[!0-9]*) die "timeouts are whole seconds" ;;
esac
if [ -z "$TOTAL_TIMEOUT" ]; then
	# A test may ask for more (a "# vm-test-timeout: SECS" header line).
	TOTAL_TIMEOUT=120
	for t in "${TESTS[@]}"; do
		f=$TESTDIR/$t.sh
		[ -z "$RUN_SCRIPT" ] || f=$RUN_SCRIPT
		tmo=$(sed -n 's/^# vm-test-timeout: *\([0-9][0-9]*\)$/\1/p' "$f" 2>/dev/null | head -n 1)
		[ -n "$tmo" ] && [ "$tmo" -gt "$TEST_TIMEOUT" ] || tmo=$TEST_TIMEOUT
		TOTAL_TIMEOUT=$((TOTAL_TIMEOUT + tmo + 40))
	done
	[ "$TOTAL_TIMEOUT" -le 1800 ] || TOTAL_TIMEOUT=1800
	[ "$MODE" != shell ] || TOTAL_TIMEOUT=3600
fi

# ---- the module under test ----------------------------------------------

HAVE_MODULE=0
MODULE_DEPS=
if [ "$DRIVER" = softhca ]; then
	if [ -r "$MODULE" ]; then
		HAVE_MODULE=1
		MODULE_DEPS=$(modinfo -F depends "$MODULE" | tr ',' ' ')
		vermagic=$(modinfo -F vermagic "$MODULE")
		case $vermagic in
		"$KVER "*) ;;
		*) note "warning: $MODULE has vermagic '$vermagic', guest kernel is $KVER" ;;
		esac
	else
		note "warning: module $MODULE not found (build it with 'make'); tests needing it will fail"
	fi
	if [ -z "$PROVIDER" ] && [ -d "$ROOT/providers" ]; then
		PROVIDER=$(find "$ROOT/providers" -name 'libsofthca-rdmav34.so' -printf '%T@ %p\n' 2>/dev/null |
			sort -rn | head -n1 | cut -d' ' -f2-)
	fi
fi
if [ -n "$PROVIDER" ]; then
	[ -r "$PROVIDER" ] || die "provider $PROVIDER not found"
fi

# ---- kernel modules: dependency closure -----------------------------------

declare -A MOD_PATH=()
mod_add() {	# name: add it and its dependencies to MOD_PATH
	local name=${1//-/_} path dep soft
	[ -n "$name" ] || return 0
	[ -z "${MOD_PATH[$name]+x}" ] || return 0
	path=$(modinfo -b "${KROOT:-/}" -k "$KVER" -n "$name" 2>/dev/null) || path=
	if [ "$(printf '%s\n' "$path" | wc -l)" -gt 1 ]; then
		# an alias that several modules provide (6.1's softdep
		# "crct10dif": generic and pclmul): take them all
		MOD_PATH[$name]="alias"
		for dep in $path; do
			dep=${dep##*/}
			mod_add "${dep%%.ko*}"
		done
		return 0
	fi
	case $path in
	/*) ;;
	*)	# built in (modinfo resolves aliases such as crypto-md5 to
		# "(builtin)"), or unknown to this kernel
		if [ "$path" != "(builtin)" ] &&
			! grep -q "/$name.ko" "$KDIR/modules.builtin" 2>/dev/null; then
			note "warning: module $name not found for $KVER"
		fi
		MOD_PATH[$name]=builtin
		return 0 ;;
	esac
	MOD_PATH[$name]=$path
	for dep in $(modinfo -F depends "$path" | tr ',' ' '); do
		mod_add "$dep"
	done
	soft=$(modinfo -F softdep "$path" | tr ' ' '\n' | grep -v -e ':$' -e '^$' || true)
	for dep in $soft; do
		mod_add "$dep"
	done
}

BASE_MODULES=()
while read -r m opt _; do
	case $m in ''|'#'*) continue ;; esac
	[ "$opt" = noload ] || BASE_MODULES+=("$m")
	mod_add "$m"
done <"$VMDIR/modules.list"
for m in $MODULE_DEPS; do
	mod_add "$m"
done

# ---- userspace programs ----------------------------------------------------

BINS=()
while read -r b _; do
	case $b in ''|'#'*) continue ;; esac
	optional=0
	case $b in '?'*) optional=1; b=${b#?} ;; esac
	if p=$(command -v "$b" 2>/dev/null) && [ -x "$p" ]; then
		BINS+=("$(readlink -f "$p")")
	elif [ $optional = 0 ]; then
		die "$b not found (see scripts/vm/binaries.list)"
	fi
done <"$VMDIR/binaries.list"
# The guest's /bin/sh is dash when available: Debian's static busybox ash
# prefers its own applets over $PATH, so "ip" would be busybox's, not iproute2's.
DASH=
if [ -x /bin/dash ]; then
	DASH=$(readlink -f /bin/dash)
	BINS+=("$DASH")
fi
PROVIDER_LIBS=("$LIBDIR"/libibverbs/lib*-rdmav34.so)
DRIVER_FILES=(/etc/libibverbs.d/*.driver)

# libs NEEDED by the given ELF files, as absolute paths (ldd's view)
ldd_libs() {
	local f
	for f in "$@"; do
		ldd "$f" 2>/dev/null | awk '
			$2 == "=>" && $3 ~ /^\// { print $3 }
			$1 ~ /^\// { print $1 }'
	done | sort -u
}

# copy file $1 to $2/$1 (following symlinks)
stage_copy() {
	mkdir -p "$2$(dirname "$1")"
	cp -L "$1" "$2$1"
}

# ---- base initramfs (cached) ----------------------------------------------

# The key covers everything that goes into the base archive: kernel version,
# module set, program/library/provider files (by size and mtime), busybox,
# and this script's base format.
mapfile -t LIBS < <(ldd_libs "${BINS[@]}" "${PROVIDER_LIBS[@]}")
# glibc dlopen()s libgcc_s for pthread_exit() and cancellation (rping, ...)
[ ! -e "$LIBDIR/libgcc_s.so.1" ] || LIBS+=("$LIBDIR/libgcc_s.so.1")
base_key=$(
	{
		echo "format $BASE_FORMAT kver $KVER"
		for m in "${!MOD_PATH[@]}"; do echo "mod $m ${MOD_PATH[$m]}"; done | sort
		stat -L -c '%n %s %Y' "$BUSYBOX" "${BINS[@]}" "${LIBS[@]}" \
			"${PROVIDER_LIBS[@]}" "${DRIVER_FILES[@]}" "$KDIR/modules.builtin" \
			"$KDIR/modules.order"
	} | sha256sum | cut -c1-16
)
BASE=$CACHE/base-$KVER-$base_key.cpio.gz
BASE_MODS=$CACHE/base-$KVER-$base_key.modules

build_base() {
	local st rel ko dst m a
	st=$(mktemp -d "$CACHE/base-stage.XXXXXX")
	mkdir -p "$st"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,run,root,mnt}
	mkdir -p "$st/usr/lib/x86_64-linux-gnu/libibverbs" "$st/etc/libibverbs.d"

	cp "$BUSYBOX" "$st/bin/busybox"
	for a in $("$BUSYBOX" --list); do
		[ "$a" = busybox ] || ln -s busybox "$st/bin/$a"
	done
	if [ -n "$DASH" ]; then
		rm "$st/bin/sh"
		ln -s ../usr/bin/dash "$st/bin/sh"
	fi
	ln -s ../bin/busybox "$st/sbin/modprobe"	# the kernel's modprobe_path

	# kernel modules, decompressed once into $CACHE/kmod
	for m in "${!MOD_PATH[@]}"; do
		ko=${MOD_PATH[$m]}
		case $ko in
		/*) ;;
		*) continue ;;	# built in, or an alias of other modules
		esac
		rel=${ko#"$KDIR"/}
		rel=${rel%.xz}
		rel=${rel%.zst}
		rel=${rel%.gz}
		dst=$CACHE/kmod/$KVER/$rel
		if [ ! -s "$dst" ] || [ "$ko" -nt "$dst" ]; then
			mkdir -p "$(dirname "$dst")"
			case $ko in
			*.xz) xz -dc "$ko" >"$dst.tmp" ;;
			*.zst) zstd -qdc "$ko" >"$dst.tmp" ;;
			*.gz) gzip -dc "$ko" >"$dst.tmp" ;;
			*) cp "$ko" "$dst.tmp" ;;
			esac
			mv "$dst.tmp" "$dst"
		fi
		mkdir -p "$st/lib/modules/$KVER/$(dirname "$rel")"
		cp "$dst" "$st/lib/modules/$KVER/$rel"
	done
	cp "$KDIR/modules.order" "$KDIR/modules.builtin" "$st/lib/modules/$KVER/"
	if [ -r "$KDIR/modules.builtin.modinfo" ]; then
		cp "$KDIR/modules.builtin.modinfo" "$st/lib/modules/$KVER/"
	fi
	depmod -b "$st" "$KVER"
	# kept to re-run depmod with the module under test (see the overlay)
	rm -rf "$BASE_MODS"
	cp -a "$st/lib/modules/$KVER" "$BASE_MODS"

	# programs, rdma-core providers and their libraries
	for b in "${BINS[@]}"; do
		case $b in
		*/sbin/*) cp "$b" "$st/usr/sbin/" ;;
		*) cp "$b" "$st/usr/bin/" ;;
		esac
	done
	for a in "${LIBS[@]}" "${PROVIDER_LIBS[@]}" "${DRIVER_FILES[@]}"; do
		stage_copy "$a" "$st"
	done
	mkdir -p "$st/etc/modprobe.d"
	echo "options dummy numdummies=0" >"$st/etc/modprobe.d/vm.conf"
	echo "root:x:0:0:root:/root:/bin/sh" >"$st/etc/passwd"
	echo "root:x:0:" >"$st/etc/group"
	printf '127.0.0.1 localhost\n10.0.2.15 vm\n' >"$st/etc/hosts"

	(cd "$st" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) |
		gzip -6 >"$BASE.tmp"
	mv "$BASE.tmp" "$BASE"
	rm -rf "$st"
}

# Exclusive lock to build (and prune old bases), then a shared one until this
# run has taken what it needs from the cache, so parallel runs are safe.
exec 9>"$CACHE/.lock"
flock 9
if [ $REBUILD = 1 ] || [ ! -s "$BASE" ] || [ ! -d "$BASE_MODS" ]; then
	t0=$SECONDS
	note "building base initramfs ($KVER, ${#MOD_PATH[@]} modules, ${#BINS[@]} programs)"
	build_base
	find "$CACHE" -maxdepth 1 -name "base-$KVER-*" ! -name "$(basename "$BASE")" \
		! -name "$(basename "$BASE_MODS")" -exec rm -rf {} +
	note "base initramfs built in $((SECONDS - t0))s: $BASE"
fi
flock -s 9

# ---- per-run overlay: init, tests, module, provider -------------------------

RUN=$(mktemp -d "$CACHE/run.XXXXXX")

ov=$RUN/overlay
mkdir -p "$ov/etc" "$ov/tests"
install -m 0755 "$VMDIR/init" "$ov/init"
for f in "$TESTDIR"/*.sh; do
	[ -e "$f" ] && install -m 0755 "$f" "$ov/tests/"
done
if [ "$MODE" = wire ]; then
	install -m 0755 "$ROOT/tests/vm/lib.sh" "$ov/tests/vm-lib.sh"
fi
if [ -d "$TESTDIR/bin" ]; then
	mkdir -p "$ov/tests/bin"
	tbins=()
	for f in "$TESTDIR"/bin/*; do
		if [ ! -f "$f" ] || [ ! -x "$f" ]; then continue; fi
		cp -L "$f" "$ov/tests/bin/"
		tbins+=("$f")
	done
	if [ ${#tbins[@]} -gt 0 ]; then
		for a in $(ldd_libs "${tbins[@]}"); do
			stage_copy "$a" "$ov"
		done
	fi
fi
if [ $HAVE_MODULE = 1 ]; then
	if command -v strip >/dev/null; then
		strip --strip-debug -o "$ov/softhca.ko" "$MODULE"
	else
		cp "$MODULE" "$ov/softhca.ko"
	fi
	# Also make it known to modprobe (extra/softhca.ko -> /softhca.ko), so
	# that "modprobe softhca" and the rdma-link-softhca alias work.
	dm=$RUN/depmod
	mkdir -p "$dm/lib/modules"
	cp -al "$BASE_MODS" "$dm/lib/modules/$KVER"
	mkdir -p "$dm/lib/modules/$KVER/extra" "$ov/lib/modules/$KVER/extra"
	cp "$ov/softhca.ko" "$dm/lib/modules/$KVER/extra/softhca.ko"
	depmod -b "$dm" "$KVER"
	cp "$dm/lib/modules/$KVER"/modules.* "$ov/lib/modules/$KVER/"
	ln -s /softhca.ko "$ov/lib/modules/$KVER/extra/softhca.ko"
fi
if [ -n "$RUN_SCRIPT" ]; then
	install -m 0755 "$RUN_SCRIPT" "$ov/tests/${TESTS[0]}.sh"
fi
for d in ${OVERLAYS[@]+"${OVERLAYS[@]}"}; do
	cp -RL "$d/." "$ov/"
	obins=()
	while IFS= read -r -d '' f; do
		rel=${f#"$d"}
		case $f in
		*.ko)
			if command -v strip >/dev/null; then
				strip --strip-debug -o "$ov$rel" "$f"
			fi ;;
		*)	if [ -x "$f" ]; then obins+=("$f"); fi ;;
		esac
	done < <(find "$d" -type f -print0)
	if [ ${#obins[@]} -gt 0 ]; then
		for a in $(ldd_libs "${obins[@]}"); do
			[ -e "$ov$a" ] || stage_copy "$a" "$ov"
		done
	fi
done
if [ -n "$PROVIDER" ]; then
	note "provider: $PROVIDER"
	mkdir -p "$ov$LIBDIR/libibverbs" "$ov/etc/libibverbs.d"
	cp -L "$PROVIDER" "$ov$LIBDIR/libibverbs/libsofthca-rdmav34.so"
	echo "driver softhca" >"$ov/etc/libibverbs.d/softhca.driver"
	for a in $(ldd_libs "$PROVIDER"); do
		[ -e "$ov$a" ] || stage_copy "$a" "$ov"
	done
fi
{
	echo "VM_MODE=$MODE"
	echo "VM_TESTS='${TESTS[*]}'"
	echo "VM_TEST_TIMEOUT=$TEST_TIMEOUT"
	echo "VM_BASE_MODULES='${BASE_MODULES[*]}'"
	echo "VM_MODULE_DEPS='$MODULE_DEPS'"
	echo "VMTEST_DRIVER=$DRIVER"
	# Knobs of the guest tests pass through: FUZZ_* (95-fuzz.sh),
	# RACE_* (95-race.sh) and VMT_* (long variants, see tests/vm/*.sh);
	# plain values only.
	env | grep -E '^(FUZZ|RACE|VMT)_[A-Z0-9_]*=[A-Za-z0-9._,:-]*$' |
		sed 's/^/export /' || true
	for e in ${GUEST_ENV[@]+"${GUEST_ENV[@]}"}; do
		echo "export $e"
	done
} >"$ov/etc/vmtest.conf"
(cd "$ov" && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -1 >"$RUN/overlay.cpio.gz"
cat "$BASE" "$RUN/overlay.cpio.gz" >"$RUN/initrd.gz"
flock -u 9

# ---- boot ------------------------------------------------------------------

# no_timer_check: under TCG on a loaded host the kernel's check that the
# 8254 timer reaches the IO-APIC can fail ("IO-APIC + timer doesn't
# work!") and panic the boot; the emulated timer is known to work.
APPEND="console=ttyS0 quiet panic=-1 no_timer_check"
if [ "$HARDENED" = 1 ]; then
	APPEND="$APPEND $HARDENED_APPEND"
	note "hardened guest: $HARDENED_APPEND"
fi
if [ -e /dev/kvm ] && [ -w /dev/kvm ]; then
	ACCEL=(-accel kvm -cpu host)
else
	# Single-threaded TCG: as fast here as multi-threaded for these tests,
	# and immune to the cross-CPU code-patching race once seen with MTTCG
	# (an early-boot "Oops: int3" in a just-patched static branch).
	# VM_TCG_THREAD=multi switches back.
	ACCEL=(-accel "tcg,thread=${VM_TCG_THREAD:-single}")
fi

if [ -n "$INITRD_ONLY" ]; then	# another harness boots it (scripts/wire.sh)
	mv "$RUN/initrd.gz" "$INITRD_ONLY/initrd.gz"
	{
		printf 'KVER=%q\n' "$KVER"
		printf 'KERNEL=%q\n' "$KERNEL"
		printf 'APPEND=%q\n' "$APPEND"
		printf 'ACCEL=(%s)\n' "$(printf '%q ' "${ACCEL[@]}")"
		printf 'TESTS=(%s)\n' "$(printf '%q ' "${TESTS[@]}")"
		printf 'HAVE_MODULE=%q\n' "$HAVE_MODULE"
	} >"$INITRD_ONLY/boot.env"
	SUMMARY_DONE=1
	exit 0
fi

LOG=$CACHE/logs/vm-$(date +%Y%m%d-%H%M%S)-$$.log
ln -sfn "$(basename "$LOG")" "$CACHE/logs/last.log"
find "$CACHE/logs" -name 'vm-*.log' -printf '%T@ %p\n' | sort -rn | tail -n +31 |
	cut -d' ' -f2- | xargs -r rm -f
note "console log: $LOG"
# shellcheck disable=SC2054
QEMU=(qemu-system-x86_64 -m 3072 -smp 2 -nographic -no-reboot
	-kernel "$KERNEL" -initrd "$RUN/initrd.gz" -append "$APPEND")
if [ $HUB = 1 ]; then
	# eth0 and eth1 on one hub, as two ports of a switch: rxe0 (eth0) and
	# rxe1 (eth1) can then talk through the NICs, which two user-mode
	# networks cannot do (a packet for the other NIC's address would be
	# ARPed for on the sending NIC and never answered).
	# shellcheck disable=SC2054
	QEMU+=(-netdev hubport,id=bn0,hubid=0 -device virtio-net-pci,netdev=bn0
		-netdev hubport,id=bn1,hubid=0 -device virtio-net-pci,netdev=bn1)
else
	# shellcheck disable=SC2054
	QEMU+=(-nic user,model=virtio-net-pci
		-nic user,model=virtio-net-pci,net=10.0.3.0/24)
fi
QEMU+=("${ACCEL[@]}")

start=$SECONDS
rc=0
if [ "$MODE" = shell ]; then
	timeout --foreground "$TOTAL_TIMEOUT" "${QEMU[@]}" | tee "$LOG" || rc=$?
	exit "$rc"
fi

# Show progress: every VMTEST line as it arrives, or everything in verbose/tour mode.
if [ $VERBOSE = 1 ]; then
	filter() { tr -d '\r'; }
elif [ "$MODE" = tour ]; then
	filter() { tr -d '\r' | sed -u -n '/^=== VMTEST-START/,$p'; }
elif [ -n "$SHOW" ]; then
	filter() {
		tr -d '\r' | sed -u -n '/^=== VMTEST-START/,$p' |
			grep --line-buffered -a -E -e "$SHOW" | sed -u 's/^/  /'
	}
else
	filter() { tr -d '\r' | grep --line-buffered -a -o -E 'VMTEST [^ ]+ (PASS|FAIL)' | sed -u 's/^VMTEST /  ... /'; }
fi
set +e
timeout -k 10 "$TOTAL_TIMEOUT" "${QEMU[@]}" </dev/null 2>&1 | tee "$LOG" | filter
rc=${PIPESTATUS[0]}
set -e
elapsed=$((SECONDS - start))
if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	note "guest did not finish within ${TOTAL_TIMEOUT}s; killed"
elif [ "$rc" != 0 ]; then
	note "qemu exited with status $rc"
fi

# ---- results ----------------------------------------------------------------

CLEAN=$RUN/console.txt
tr -d '\r' <"$LOG" >"$CLEAN"

if [ -n "$CONSOLE_OUT" ]; then
	cp "$CLEAN" "$CONSOLE_OUT"
fi

declare -A RESULT=()
while read -r _ name verdict; do
	[ -z "${RESULT[$name]+x}" ] && RESULT[$name]=$verdict
done < <(grep -a -o -E 'VMTEST [^ ]+ (PASS|FAIL)' "$CLEAN" || true)

pass=0
fail=0
shown_tail=0
lines=()
for t in "${TESTS[@]}"; do
	v=${RESULT[$t]:-}
	case $v in
	PASS) pass=$((pass + 1)); lines+=("VMTEST $t PASS") ;;
	FAIL)
		fail=$((fail + 1)); lines+=("VMTEST $t FAIL")
		if [ $VERBOSE = 0 ] && [ "$MODE" != tour ]; then
			echo "----- $t (from $LOG) -----"
			awk -v t="$t" '
				$0 ~ "^=== VMTEST-START " t "$" { on = 1 }
				on { print }
				on && $0 ~ "VMTEST " t " (PASS|FAIL)" { exit }' "$CLEAN"
		fi ;;
	*)
		fail=$((fail + 1)); lines+=("VMTEST $t FAIL")
		echo "----- $t: no result from the guest (crashed, hung or not run) -----"
		if grep -a -q -E "^=== VMTEST-START $t\$" "$CLEAN"; then
			shown_tail=1
			awk -v t="$t" '$0 ~ "^=== VMTEST-START " t "$" { on = 1 } on { print }' "$CLEAN" | tail -n 60
		fi ;;
	esac
done
if [ $fail -gt 0 ] && [ $shown_tail = 0 ] && ! grep -a -q '^VMTEST-END' "$CLEAN"; then
	echo "----- console tail (guest never finished) -----"
	tail -n 40 "$CLEAN"
fi
printf '%s\n' "${lines[@]}"
note "console log: $LOG (${elapsed}s in the VM)"
echo "$LABEL: $pass passed, $fail failed"
SUMMARY_DONE=1
[ $fail -eq 0 ]
