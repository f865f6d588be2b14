#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest half of the packaging tier (scripts/pkgtest.sh): the module and the
# provider that the two Debian packages installed in a clean Debian 12 root
# (DKMS built the module there) are this guest's softhca.ko (modprobe finds
# it), libsofthca-rdmav34.so and, from /pkgroot, softhca.driver. With them
# alone: modprobe, rdma link add, ibv_devinfo -d softhca0, ibv_rc_pingpong.
# PKG_VERSION (--env) is the version the module must report.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=softhca0
DRIVER_FILE=/etc/libibverbs.d/softhca.driver

[ -r /pkgroot$DRIVER_FILE ] || die "/pkgroot$DRIVER_FILE missing (scripts/pkgtest.sh passes it)"
run cat /pkgroot$DRIVER_FILE
cp /pkgroot$DRIVER_FILE $DRIVER_FILE || die "cannot install the packaged $DRIVER_FILE"

must "modprobe softhca (the installed module)" modprobe softhca
expect_eq "module version" "${PKG_VERSION:-unset}" "$(cat /sys/module/softhca/version 2>/dev/null)"
must "rdma link add $DEV type softhca netdev eth0" rdma link add $DEV type softhca netdev eth0
expect_port $DEV state "4: ACTIVE" 10
expect_eq "fw_ver" "${PKG_VERSION:-unset}" "$(cat "$IB/$DEV/fw_ver" 2>/dev/null)"

if run ibv_devinfo -d $DEV && run_out | grep -Eq "state:[[:space:]]+PORT_ACTIVE"; then
	ok "ibv_devinfo -d $DEV: PORT_ACTIVE"
else
	bad "ibv_devinfo -d $DEV failed or shows no active port"
fi

# a RoCE v2 GID of the device (the link-local one if there is one)
gid=
for f in "$IB/$DEV"/ports/1/gids/*; do
	i=${f##*/}
	[ "$(cat "$IB/$DEV/ports/1/gid_attrs/types/$i" 2>/dev/null)" = "RoCE v2" ] || continue
	case $(cat "$f") in
	0000:0000:0000:0000:0000:0000:0000:0000) continue ;;
	fe80:*) gid=$i; break ;;
	esac
	[ -n "$gid" ] || gid=$i
done
[ -n "$gid" ] || die "no RoCE v2 GID on $DEV"
# A link-local address is tentative for a second after the link comes up
# (duplicate address detection): the core cannot route from it, and
# modify_qp to RTR fails (CI saw it once on 6.1, 5 s after boot).
wait_for 10 ipv6_settled eth0 || info "eth0 still has tentative IPv6 addresses"

ITERS=200
timeout -k 5 60 ibv_rc_pingpong -d $DEV -g "$gid" -n $ITERS >/tmp/pp_srv.out 2>&1 &
spid=$!
# ibv_rc_pingpong listens on TCP port 18515 (0x4853)
# shellcheck disable=SC2317	# (called through wait_for)
pp_listening() { grep -q ':4853 00000000:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
wait_for 10 pp_listening ||
	bad "ibv_rc_pingpong server does not listen"
run_t 60 ibv_rc_pingpong -d $DEV -g "$gid" -n $ITERS localhost
crc=$?
wait $spid
src=$?
sed 's/^/    server: /' /tmp/pp_srv.out
if [ $crc -eq 0 ] && [ $src -eq 0 ] && run_out | grep -q "$ITERS iters in " &&
	grep -q "$ITERS iters in " /tmp/pp_srv.out; then
	ok "ibv_rc_pingpong: $ITERS iterations both ways"
else
	bad "ibv_rc_pingpong: client exit status $crc, server $src"
fi

must "rdma link delete $DEV" rdma link delete $DEV
must "rmmod softhca" rmmod softhca
exit $((FAILS > 0))
