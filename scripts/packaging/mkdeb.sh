#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# make deb: build the two Debian packages of softhca with dpkg-deb alone
#   softhca-dkms_<version>_all.deb     the module's source + dkms.conf in
#                                      /usr/src/softhca-<version>, built and
#                                      installed by DKMS (postinst), and the
#                                      softhca@.service template unit
#   libsofthca_<version>_<arch>.deb    the rdma-core provider
#                                      libsofthca-rdmav34.so and
#                                      /etc/libibverbs.d/softhca.driver
# <version> is SOFTHCA_VERSION of scripts/versions.env.
#
# Usage: scripts/packaging/mkdeb.sh [--lintian] [OUTDIR]   (default build/deb)
#   --lintian   run lintian on both packages; fail on any tag not overridden
# DEB_MAINTAINER overrides the Maintainer field.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
pkgdir=$repo/scripts/packaging
# shellcheck source=scripts/versions.env
. "$repo/scripts/versions.env"

run_lintian=0
outdir=
for a; do
	case $a in
	--lintian) run_lintian=1 ;;
	-*) echo "mkdeb: unknown option $a" >&2; exit 2 ;;
	*) outdir=$a ;;
	esac
done
outdir=${outdir:-$repo/build/deb}
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)

version=$SOFTHCA_VERSION
maintainer=${DEB_MAINTAINER:-softhca maintainers <maintainers@users.noreply.a-seed-29b0d51a.example>}
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
# Reproducible: every date and mtime is the last commit's.
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git -C "$repo" log -1 --format=%ct 2>/dev/null || date +%s)}
export SOURCE_DATE_EPOCH

# The header's fallback (in-tree builds) must not drift from the one version.
hdr=$(sed -n 's/^#define SHCA_DRV_VERSION[[:space:]]*"\(.*\)"$/\1/p' \
	"$repo/drivers/infiniband/sw/softhca/shca.h")
if [ "$hdr" != "$version" ]; then
	echo "mkdeb: shca.h's fallback SHCA_DRV_VERSION \"$hdr\" is not SOFTHCA_VERSION $version (scripts/versions.env)" >&2
	exit 1
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

subst() {	# template -> stdout
	sed -e "s|@VERSION@|$version|g" -e "s|@MAINTAINER@|$maintainer|g" "$1"
}

copyright_head() {	# license expression
	cat <<-EOF
	Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
	Upstream-Name: softhca
	Upstream-Contact: $maintainer

	Files: *
	Copyright: 2026 the softhca authors
	License: $1
	EOF
}

changelog() {	# package dir: the changelog of a native package
	local doc=$1/usr/share/doc/$2
	mkdir -p "$doc"
	{
		echo "$2 ($version) unstable; urgency=medium"
		echo
		echo "  * softhca $version, built from git $(git -C "$repo" describe --always --dirty 2>/dev/null || echo unknown)."
		echo
		echo " -- $maintainer  $(date -R -u -d "@$SOURCE_DATE_EPOCH")"
	} | gzip -9n >"$doc/changelog.gz"
}

gpl2_text() {
	cat <<-'EOF'
	License: GPL-2
	 This program is free software; you can redistribute it and/or modify it
	 under the terms of the GNU General Public License version 2 as published
	 by the Free Software Foundation.
	 .
	 On Debian systems, the full text of the GNU General Public License
	 version 2 can be found in the file `/usr/share/common-licenses/GPL-2'.
	EOF
}

bsd2_text() {
	cat <<-'EOF'
	License: BSD-2-clause
	 Redistribution and use in source and binary forms, with or without
	 modification, are permitted provided that the following conditions are
	 met:
	 .
	 1. Redistributions of source code must retain the above copyright
	    notice, this list of conditions and the following disclaimer.
	 .
	 2. Redistributions in binary form must reproduce the above copyright
	    notice, this list of conditions and the following disclaimer in the
	    documentation and/or other materials provided with the distribution.
	 .
	 THIS SOFTWARE IS PROVIDED BY THE COPYRIGHT HOLDERS AND CONTRIBUTORS
	 "AS IS" AND ANY EXPRESS OR IMPLIED WARRANTIES, INCLUDING, BUT NOT
	 LIMITED TO, THE IMPLIED WARRANTIES OF MERCHANTABILITY AND FITNESS FOR A
	 PARTICULAR PURPOSE ARE DISCLAIMED. IN NO EVENT SHALL THE COPYRIGHT
	 HOLDER OR CONTRIBUTORS BE LIABLE FOR ANY DIRECT, INDIRECT, INCIDENTAL,
	 SPECIAL, EXEMPLARY, OR CONSEQUENTIAL DAMAGES (INCLUDING, BUT NOT LIMITED
	 TO, PROCUREMENT OF SUBSTITUTE GOODS OR SERVICES; LOSS OF USE, DATA, OR
	 PROFITS; OR BUSINESS INTERRUPTION) HOWEVER CAUSED AND ON ANY THEORY OF
	 LIABILITY, WHETHER IN CONTRACT, STRICT LIABILITY, OR TORT (INCLUDING
	 NEGLIGENCE OR OTHERWISE) ARISING IN ANY WAY OUT OF THE USE OF THIS
	 SOFTWARE, EVEN IF ADVISED OF THE POSSIBILITY OF SUCH DAMAGE.
	EOF
}

# DEBIAN/md5sums, normalised modes and mtimes, then dpkg-deb --build.
finish() {	# package dir, deb file
	local p=$1
	(cd "$p" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z |
		xargs -0 -r md5sum) >"$p/DEBIAN/md5sums"
	find "$p" -type d -exec chmod 0755 {} +
	find "$p" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
	dpkg-deb --root-owner-group -Zxz --build "$p" "$2" >/dev/null
	echo "mkdeb: $2"
}

# ---- softhca-dkms -------------------------------------------------------------

p=$work/softhca-dkms
src=$p/usr/src/softhca-$version
mkdir -p "$src" "$p/DEBIAN"
mapfile -t paths < <(grep -v -e '^#' -e '^$' "$pkgdir/dkms-files")
# The tracked files (with their git modes), taken from the work tree.
git -C "$repo" ls-files -s -z -- "${paths[@]}" |
while IFS= read -r -d '' entry; do
	mode=${entry%% *}
	f=${entry#*$'\t'}
	[ "$mode" = 100755 ] && m=0755 || m=0644
	install -D -m "$m" "$repo/$f" "$src/$f"
done
[ -r "$src/drivers/infiniband/sw/softhca/shca_main.c" ] ||
	{ echo "mkdeb: no driver sources (not a git work tree?)" >&2; exit 1; }
subst "$pkgdir/dkms.conf.in" >"$src/dkms.conf"
install -D -m 0644 "$pkgdir/softhca@.service" "$p/lib/systemd/system/softhca@.service"
install -D -m 0644 "$pkgdir/README.Debian" "$p/usr/share/doc/softhca-dkms/README.Debian"
{ copyright_head GPL-2; echo; gpl2_text; } >"$p/usr/share/doc/softhca-dkms/copyright"
changelog "$p" softhca-dkms
install -D -m 0644 "$pkgdir/softhca-dkms.lintian-overrides" \
	"$p/usr/share/lintian/overrides/softhca-dkms"
for s in postinst prerm postrm; do
	subst "$pkgdir/$s.in" >"$p/DEBIAN/$s"
	chmod 0755 "$p/DEBIAN/$s"
done
size=$(du -sk --exclude=DEBIAN "$p" | cut -f1)
cat >"$p/DEBIAN/control" <<EOF
Package: softhca-dkms
Version: $version
Architecture: all
Maintainer: $maintainer
Installed-Size: $size
Depends: dkms (>= 3.0), kmod, iproute2
Recommends: libsofthca
Section: kernel
Priority: optional
Description: softhca software RDMA HCA kernel module (DKMS source)
 softhca is a software RDMA host channel adapter: an RDMA device on top of
 an Ethernet netdev, for development and testing of RDMA applications and
 kernel upper-layer protocols.
 .
 This package holds the module's source; DKMS builds and installs it for
 every installed kernel with headers, and again for each new kernel. The
 softhca@<netdev>.service unit creates a device on a netdev at boot.
EOF
finish "$p" "$outdir/softhca-dkms_${version}_all.deb"

# ---- libsofthca -------------------------------------------------------------

# Built from a copy of its tracked sources (providers/softhca keeps the
# developer's own objects), with Debian's hardening flags (from the
# environment, so that the Makefile's own flags still apply).
b=$work/provider-src
git -C "$repo" ls-files -z -- providers/softhca include/uapi |
while IFS= read -r -d '' f; do
	install -D -m 0644 "$repo/$f" "$b/$f"
	[ ! -x "$repo/$f" ] || chmod 0755 "$b/$f"
done
flags=()
if command -v dpkg-buildflags >/dev/null; then
	flags=(CFLAGS="$(dpkg-buildflags --get CFLAGS)" CPPFLAGS="$(dpkg-buildflags --get CPPFLAGS)"
		LDFLAGS="$(dpkg-buildflags --get LDFLAGS)")
fi
env "${flags[@]}" make -s -C "$b/providers/softhca" libsofthca-rdmav34.so >"$work/provider.log" 2>&1 ||
	{ cat "$work/provider.log" >&2; exit 1; }
b=$b/providers/softhca
p=$work/libsofthca
mkdir -p "$p/DEBIAN"
lib=$p/usr/lib/$multiarch/libibverbs/libsofthca-rdmav34.so
install -D -m 0644 "$b/libsofthca-rdmav34.so" "$lib"
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$lib"
install -D -m 0644 "$repo/providers/softhca/softhca.driver" "$p/etc/libibverbs.d/softhca.driver"
echo /etc/libibverbs.d/softhca.driver >"$p/DEBIAN/conffiles"
mkdir -p "$p/usr/share/doc/libsofthca"
{
	copyright_head "GPL-2 or BSD-2-clause"
	echo
	gpl2_text
	echo
	bsd2_text
} >"$p/usr/share/doc/libsofthca/copyright"
changelog "$p" libsofthca
install -D -m 0644 "$pkgdir/libsofthca.lintian-overrides" \
	"$p/usr/share/lintian/overrides/libsofthca"
# The provider uses libibverbs' private ABI (IBVERBS_PRIVATE_34 with the
# structure layouts of the rdma-core release it was built against): only
# that release's libibverbs1 may load it.
ibv=$(dpkg-query -W -f='${Version}' libibverbs1)
ibv_major=${ibv%%.*}
glibc=$(objdump -T "$lib" | sed -n 's/.*GLIBC_\([0-9.]*\).*/\1/p' | sort -V | tail -n 1)
size=$(du -sk --exclude=DEBIAN "$p" | cut -f1)
cat >"$p/DEBIAN/control" <<EOF
Package: libsofthca
Version: $version
Architecture: $arch
Multi-Arch: same
Maintainer: $maintainer
Installed-Size: $size
Depends: libc6 (>= $glibc), libibverbs1 (>= $ibv_major), libibverbs1 (<< $((ibv_major + 1))~)
Recommends: softhca-dkms
Section: libs
Priority: optional
Description: softhca software RDMA HCA: rdma-core provider (libibverbs plugin)
 softhca is a software RDMA host channel adapter: an RDMA device on top of
 an Ethernet netdev, for development and testing of RDMA applications and
 kernel upper-layer protocols.
 .
 This package holds the userspace driver libibverbs loads for softhca
 devices. It is built for libibverbs1 $ibv_major (rdma-core $ibv_major, private
 ABI 34) and works with that release only.
EOF
finish "$p" "$outdir/libsofthca_${version}_${arch}.deb"

if [ $run_lintian = 1 ]; then
	lintian --fail-on error,warning \
		"$outdir/softhca-dkms_${version}_all.deb" "$outdir/libsofthca_${version}_${arch}.deb"
	echo "mkdeb: lintian clean"
fi
