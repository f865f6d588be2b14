#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Guest side of the two-guest wire tier (scripts/wire.sh). Sourced by /init
# (VM_MODE=wire), which runs wire_main, and by tests/wire/lib.sh, for the
# control channel. POSIX sh (dash, busybox utilities).
#
# Two guests, A and B, are joined by one Ethernet link (eth0, a socketpair
# between the two QEMUs): A is 10.0.9.1/24 and fd00:9::1/64, B 10.0.9.2/24
# and fd00:9::2/64. Each guest loads one RDMA driver (wire_driver= on its
# kernel command line: rxe or softhca; only one, since both want UDP port
# 4791) and tests create its device, rxe0 or softhca0, on eth0.
#
# Rendezvous: a second socketpair joins a virtio-serial port named
# "wire.ctl" of each guest, out of band of the link under test (netem, a
# capture or a broken driver on the link do not touch it). Each guest opens
# its port once (file descriptor 8, inherited by the tests), and a
# background cat appends everything the peer sends to /tmp/wire.msgs; a
# message is one line "ROLE TEST TAG [WORDS]". wire_send appends a line,
# wire_wait polls the file for the peer's line: nothing is lost, order does
# not matter, a message sent before the peer listens waits in the socket
# (QEMU reads a virtio-serial port's chardev only while the guest has the
# port open). /init syncs both guests before and after each test
# ("start TEST", "end TEST", with TEST "-"); inside a test, wire_serve and
# wire_connect (tests/wire/lib.sh) sync server and client.
#
# A port named "wire.data" goes to a file on the host: wire_put_file sends
# a file there (base64 between marker lines); scripts/wire.sh extracts it
# and checks the captures (*.pcap) it finds.

# The role and the drivers come from the kernel command line
# (wire_role=A wire_driver=rxe wire_peer_driver=softhca), which the kernel
# hands to /init as environment variables as well.
# shellcheck disable=SC2154
WIRE_ROLE=${WIRE_ROLE:-${wire_role:-}}
# shellcheck disable=SC2154
WIRE_DRIVER=${WIRE_DRIVER:-${wire_driver:-}}
# shellcheck disable=SC2154
PEER_DRIVER=${PEER_DRIVER:-${wire_peer_driver:-}}
if [ -z "$WIRE_ROLE" ] && [ -r /proc/cmdline ]; then
	# shellcheck disable=SC2013
	for _w in $(cat /proc/cmdline); do
		case $_w in
		wire_role=*) WIRE_ROLE=${_w#*=} ;;
		wire_driver=*) WIRE_DRIVER=${_w#*=} ;;
		wire_peer_driver=*) PEER_DRIVER=${_w#*=} ;;
		esac
	done
fi
case $WIRE_ROLE in
B)	WIRE_PEER=A
	WIRE_IP=10.0.9.2 PEER_IP=10.0.9.1
	WIRE_IP6=fd00:9::2 PEER_IP6=fd00:9::1 ;;
*)	WIRE_ROLE=A WIRE_PEER=B
	WIRE_IP=10.0.9.1 PEER_IP=10.0.9.2
	WIRE_IP6=fd00:9::1 PEER_IP6=fd00:9::2 ;;
esac
WIRE_DRIVER=${WIRE_DRIVER:-softhca}
PEER_DRIVER=${PEER_DRIVER:-$WIRE_DRIVER}
WIRE_NETDEV=eth0
WIRE_DEV=${WIRE_DRIVER}0
PEER_DEV=${PEER_DRIVER}0
# GIDs as sysfs prints them (ports/1/gids/N)
WIRE_GID6=fd00:0009:0000:0000:0000:0000:0000:000${WIRE_IP6##*:}
WIRE_TEST=${WIRE_TEST:--}
WIRE_MSGS=/tmp/wire.msgs
# /init's kernel log check: a program's own crash ("traps: ib_read_bw[123]
# general protection fault ... in librdmacm.so.1": perftest 4.5 after an
# rdma_cm rejection) is the program's, and its step sees its exit status
# shellcheck disable=SC2034  # read by /init's klog_bad
BAD_EXCEPT='^\[[ 0-9.]*\] traps: [^ ]+\[[0-9]+\] '
VMTEST_DRIVER=$WIRE_DRIVER
export WIRE_ROLE WIRE_PEER WIRE_DRIVER PEER_DRIVER WIRE_NETDEV WIRE_DEV \
	PEER_DEV WIRE_IP PEER_IP WIRE_IP6 PEER_IP6 WIRE_GID6 WIRE_TEST \
	WIRE_MSGS VMTEST_DRIVER

_wsay() { echo "wire: $*"; }

# ---- the link ----------------------------------------------------------------

# net_setup (replaces /init's): eth0 up with the role's addresses, no qdisc
# left by a test (netem); idempotent, /init calls it after every test.
net_setup() {
	[ -e "/sys/class/net/$WIRE_NETDEV" ] || { _wsay "no $WIRE_NETDEV"; return 1; }
	if /usr/sbin/tc qdisc show dev "$WIRE_NETDEV" 2>/dev/null | grep -q netem; then
		/usr/sbin/tc qdisc del dev "$WIRE_NETDEV" root
	fi
	ip link set "$WIRE_NETDEV" up
	ip -4 addr show dev "$WIRE_NETDEV" | grep -q "inet $WIRE_IP/" ||
		ip addr add "$WIRE_IP/24" dev "$WIRE_NETDEV"
	ip -6 addr show dev "$WIRE_NETDEV" | grep -q "inet6 $WIRE_IP6/" ||
		ip -6 addr add "$WIRE_IP6/64" dev "$WIRE_NETDEV" nodad
}

# ---- control channel ----------------------------------------------------------

# wire_port NAME: the /dev node of the virtio-serial port NAME
wire_port() {
	for _p in /sys/class/virtio-ports/*; do
		[ "$(cat "$_p/name" 2>/dev/null)" = "$1" ] || continue
		echo "/dev/${_p##*/}"
		return 0
	done
	return 1
}

# wire_ctl_start: open the control port as fd 8 and collect the peer's lines
wire_ctl_start() {
	_port=$(wire_port wire.ctl) || { _wsay "no virtio-serial port wire.ctl"; return 1; }
	: >"$WIRE_MSGS"
	exec 8<>"$_port"
	cat <&8 >>"$WIRE_MSGS" &
	WIRE_CTL_PID=$!
	export WIRE_CTL_PID
}

# wire_peer_alive: the collector still runs. When the other QEMU exits
# (the guest crashed, or was killed) the control socket closes, the port
# reads end of file and cat ends.
wire_peer_alive() {
	[ -n "${WIRE_CTL_PID:-}" ] || return 0
	# shell builtins only: this runs in every polling loop, and a process
	# costs milliseconds under TCG. /proc/PID/stat: "PID (comm) STATE ..."
	read -r _wpa 2>/dev/null <"/proc/$WIRE_CTL_PID/stat" || return 1
	_wpa=${_wpa##*) }
	[ "${_wpa%% *}" != Z ]
}

# wire_send TAG [WORDS]: send "ROLE TEST TAG [WORDS]" to the peer (a write
# to a port whose other end is gone would block: bounded)
wire_send() {
	wire_peer_alive || return 1
	# shellcheck disable=SC2016
	timeout 5 sh -c 'printf "%s\n" "$1" >&8' sh "$WIRE_ROLE $WIRE_TEST $*"
}

# wire_seen TAG [WORDS]: the peer sent "PEER TEST TAG [WORDS]" (followed by
# nothing or by more words); prints the first such line's remaining words
wire_seen() {
	awk -v p="$WIRE_PEER $WIRE_TEST $*" '
		$0 == p { found = 1; exit }
		index($0, p " ") == 1 { print substr($0, length(p) + 2); found = 1; exit }
		END { exit !found }' "$WIRE_MSGS"
}

# wire_wait SECS TAG [WORDS]: wait up to SECS for the peer's message (its
# remaining words on stdout). 0: seen; 2: the peer's test ended instead
# ("exit") or it sent "TAG fail"; 3: the peer is gone (wire_peer_alive);
# 1: timed out. Polls every 0.2 s, one awk a round.
wire_wait() {
	_ws=$(($1 * 5))
	shift
	_wwt=$*
	_wwt=${_wwt%% *}
	_wwx=1
	[ "$WIRE_TEST" != - ] || _wwx=
	while :; do
		_wwr=$(awk -v p="$WIRE_PEER $WIRE_TEST $*" -v x="$_wwx" \
			-v e="$WIRE_PEER $WIRE_TEST exit" -v f="$WIRE_PEER $WIRE_TEST $_wwt fail" '
			!m && $0 == p { m = 1; next }
			!m && index($0, p " ") == 1 { m = 1; r = substr($0, length(p) + 2); next }
			x && ($0 == e || index($0, e " ") == 1 || $0 == f || index($0, f " ") == 1) { s = 1 }
			END { if (m) print "0 " r; else if (s) print "2"; else print "1" }' "$WIRE_MSGS")
		case $_wwr in
		0*)	_wwr=${_wwr#0}
			_wwr=${_wwr# }
			[ -z "$_wwr" ] || echo "$_wwr"
			return 0 ;;
		2) return 2 ;;
		esac
		wire_peer_alive || return 3
		[ "$_ws" -gt 0 ] || return 1
		_ws=$((_ws - 1))
		sleep 0.2
	done
}

# wire_sync SECS TAG: both guests meet at TAG (each sends it, waits for the peer's)
wire_sync() {
	wire_send "$2"
	wire_wait "$1" "$2" >/dev/null
}

# wire_put_file NAME FILE: send FILE to the host (scripts/wire.sh keeps it
# as build/wire/COMBO/ROLE-TEST-NAME)
wire_put_file() {
	_port=$(wire_port wire.data) || return 1
	{
		echo "=== WIRE-FILE $WIRE_ROLE $WIRE_TEST $1"
		base64 "$2"
		echo "=== WIRE-END"
	} >"$_port"
}

# ---- the run ------------------------------------------------------------------

# wire_hello SECS: both guests are up (repeated: harmless duplicates)
wire_hello() {
	_wh=0
	while [ $_wh -lt "$1" ]; do
		wire_send hello
		wire_wait 2 hello >/dev/null && return 0
		_wh=$((_wh + 2))
	done
	return 1
}

# wire_main: run VM_TESTS in step with the peer; /init's run_test runs each
# (timeout, cleanup_state, kernel log check, "VMTEST NAME PASS|FAIL").
wire_main() {
	_lost=
	if ! wire_ctl_start; then
		_lost="no control port"
	elif ! wire_hello 240; then
		_lost="the peer never answered on the control port"
	fi
	[ -n "$_lost" ] || _wsay "role $WIRE_ROLE: $WIRE_DRIVER ($WIRE_DEV on $WIRE_NETDEV, $WIRE_IP, $WIRE_IP6); peer $WIRE_PEER: $PEER_DRIVER ($PEER_IP)"
	for _t in $VM_TESTS; do
		if [ -z "$_lost" ] && ! wire_sync 120 "start $_t"; then
			_lost="the peer did not start $_t within 120s"
		fi
		wire_peer_alive || _lost="the peer is gone (its QEMU exited)"
		if [ -n "$_lost" ]; then
			echo "=== VMTEST-START $_t"
			_wsay "$_t: not run: $_lost"
			echo "VMTEST $_t FAIL"
			continue
		fi
		WIRE_TEST=$_t
		if [ -r "/tests/$_t.sh" ]; then
			run_test "$_t" "/tests/$_t.sh"
		else
			echo "VMTEST $_t FAIL"
		fi
		WIRE_TEST=-
		# the peer's test has its own bound (run_test: timeout -k 10,
		# then up to 60 s of cleanup)
		_wt=$(sed -n 's/^# vm-test-timeout: *\([0-9][0-9]*\)$/\1/p' "/tests/$_t.sh" 2>/dev/null | head -n 1)
		[ -n "$_wt" ] && [ "$_wt" -gt "$VM_TEST_TIMEOUT" ] || _wt=$VM_TEST_TIMEOUT
		wire_sync $((_wt + 90)) "end $_t" || _lost="the peer did not finish $_t"
		wire_peer_alive || _lost="the peer is gone (its QEMU exited)"
	done
	# the kernel log since the last test (between the tests nothing runs;
	# run_test checked each test's)
	dmesg -c >/tmp/dmesg.test 2>/dev/null
	if klog_bad /tmp/dmesg.test; then
		_wsay "kernel log after the tests reports a problem:"
		grep -n -E -A 25 "$BAD" /tmp/dmesg.test | head -n 80 | sed 's/^/  dmesg: /'
		echo "WIRE-KLOG $WIRE_ROLE BAD"
	else
		echo "WIRE-KLOG $WIRE_ROLE clean"
	fi
	[ -n "$_lost" ] || wire_sync 20 bye
}
