#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the wire tests (tests/wire/NN-*.sh), sourced with
# ". /tests/lib.sh". A wire test is written once and runs in both guests at
# the same time (scripts/wire.sh); it knows its side from the environment:
#   WIRE_ROLE     A or B (WIRE_PEER: the other one)
#   WIRE_DRIVER   rxe or softhca: the driver of this guest (PEER_DRIVER: the
#                 other guest's); only this one is loaded
#   WIRE_DEV      the RDMA device the test creates: rxe0 or softhca0
#   WIRE_NETDEV   eth0, the link between the guests
#   WIRE_IP, WIRE_IP6   this guest's addresses (A: 10.0.9.1, fd00:9::1;
#                 B: 10.0.9.2, fd00:9::2), PEER_IP, PEER_IP6 the other's
#   WIRE_TEST     the test's name (the control messages carry it)
# It has everything of tests/vm/lib.sh (ok, bad, die, run, must, drv_load,
# link_add, expect_port, ...; the driver is WIRE_DRIVER) and the control
# channel of tests/wire/wire-guest.sh (wire_send, wire_wait). Each guest
# reports its own checks; scripts/wire.sh passes a test only if it passed
# in both guests.
#
# The usual shape: wire_setup (driver, device, GIDs, the peer answers a
# ping), then client/server steps with wire_pp (or wire_serve in one role
# and wire_connect in the other): B serves, A connects (WIRE_SERVER=A swaps
# them); every step is bounded, and a side that fails or ends tells the
# other (wire_send "TAG fail", "exit"), which stops waiting at once.

# shellcheck disable=SC1091,SC2153
. /tests/wire-guest.sh
# shellcheck disable=SC1091
. /tests/vm-lib.sh

WIRE_BG=		# the servers' state files (/tmp/wire-srv.PID.N), see wire_serve
WIRE_CAP_PID=
WIRE_CAP_NAME=
WIRE_CAPTURED=0
WIRE_NETEM=0
WIRE_GRACE=5		# seconds a server may take to end after its client
WIRE_HUNG=		# the step that hung (see _wire_go)
WIRE_ALL_STEPS=${WIRE_ALL_STEPS:-}
_WIRE_AGAIN=
_wire_n=0

# ---- setup ---------------------------------------------------------------------

# wire_gid 4|6 [DEV]: the index of DEV's (default WIRE_DEV) RoCE v2 GID of
# this guest's IPv4 (4) or IPv6 (6) address, found through
# ports/1/gid_attrs/types/N ("RoCE v2") and ports/1/gids/N
wire_gid() {
	_wd=${2:-$WIRE_DEV}
	if [ "$1" = 6 ]; then
		_wg=$WIRE_GID6
	else
		_wg=$(ipv4_gid "$WIRE_IP")
	fi
	for _wt in "$IB/$_wd"/ports/1/gid_attrs/types/*; do
		[ "$(cat "$_wt" 2>/dev/null)" = "RoCE v2" ] || continue
		_wi=${_wt##*/}
		[ "$(cat "$IB/$_wd/ports/1/gids/$_wi" 2>/dev/null)" = "$_wg" ] || continue
		echo "$_wi"
		return 0
	done
	return 1
}

_wire_gids() { wire_gid 4 >/dev/null && wire_gid 6 >/dev/null; }

# wire_show_gids: the non-zero GIDs of WIRE_DEV with their types
wire_show_gids() {
	_wd=$WIRE_DEV
	for _wt in "$IB/$_wd"/ports/1/gids/*; do
		_wg=$(cat "$_wt" 2>/dev/null)
		case $_wg in ''|0000:0000:0000:0000:0000:0000:0000:0000) continue ;; esac
		info "gid ${_wt##*/}: $_wg $(cat "$IB/$_wd/ports/1/gid_attrs/types/${_wt##*/}" 2>/dev/null)"
	done
}

# wire_setup: load WIRE_DRIVER, create WIRE_DEV on WIRE_NETDEV, wait for its
# port to be ACTIVE and for its RoCE v2 GIDs of WIRE_IP and WIRE_IP6; the
# peer answers a ping; then vm_baseline WIRE_DEV (for vm_leftovers).
wire_setup() {
	drv_load || die "loading $DRV_MOD failed"
	must "rdma link add $WIRE_DEV type $DRV_TYPE netdev $WIRE_NETDEV" \
		link_add "$WIRE_DEV" "$WIRE_NETDEV"
	expect_port "$WIRE_DEV" state "4: ACTIVE" 10
	if wait_for 10 _wire_gids; then
		ok "$WIRE_DEV: RoCE v2 GID of $WIRE_IP at index $(wire_gid 4), of $WIRE_IP6 at index $(wire_gid 6)"
	else
		wire_show_gids
		die "$WIRE_DEV: no RoCE v2 GID of $WIRE_IP and $WIRE_IP6 within 10s"
	fi
	must "guest $WIRE_PEER answers at $PEER_IP" ping -c 1 -W 5 "$PEER_IP"
	vm_baseline "$WIRE_DEV"
}

# ---- client and server ------------------------------------------------------------

# wire_is_server: this guest serves (B, or WIRE_SERVER)
wire_is_server() { [ "$WIRE_ROLE" = "${WIRE_SERVER:-B}" ]; }

# _wire_ready SPEC STATEFILE: the server is ready to be connected to:
# tcp:PORT (a TCP listener on PORT), cm:PORT (an rdma_cm listener on PORT,
# per rdma res), now
_wire_ready() {
	[ ! -e "$2.rc" ] || return 2
	case $1 in
	tcp:*) netstat -ltn 2>/dev/null | awk -v p=":${1#tcp:}" '
		substr($4, length($4) - length(p) + 1) == p { f = 1 } END { exit !f }' ;;
	cm:*) rdma res show cm_id 2>/dev/null | grep -q -e "state LISTEN .*:${1#cm:} " ;;
	*) true ;;
	esac
}

# _wire_go TAG: may the step TAG run? Not once the peer's side of the test
# has ended. And once a step has hung (killed at its time limit) the rest
# of the test would most likely hang as well, one time limit each: the test
# ends there (the peer learns it from the "exit" message and stops
# waiting), unless WIRE_ALL_STEPS=1 (scripts/wire.sh --all-steps).
_wire_go() {
	wire_peer_alive ||
		die "$1 and the rest of this test not run: guest $WIRE_PEER is gone (its QEMU exited)"
	if wire_seen exit >/dev/null; then
		die "$1 and the rest of this test not run: the test ended in guest $WIRE_PEER"
	fi
	[ -n "$WIRE_HUNG" ] && [ -z "$WIRE_ALL_STEPS" ] || return 0
	die "$1 and the rest of this test not run: step $WIRE_HUNG hung (scripts/wire.sh --all-steps runs them all)"
}

# _wire_verdict TAG WHAT STATUS OUTPUT [stopped]: check a client's or
# server's exit status: 0, or with WIRE_XFAIL=ERE set, a failure (not a
# timeout) whose output matches ERE. "stopped": a server that wire_serve
# stopped after its client had ended (not a hang of its own)
_wire_verdict() {
	if [ "${5:-}" = stopped ]; then
		if [ -n "${WIRE_XFAIL:-}" ]; then
			bad "$1: $2 was still running ${WIRE_GRACE}s after its client ended, expected it to fail ($WIRE_XFAIL)"
		else
			bad "$1: $2 was still running ${WIRE_GRACE}s after its client ended: stopped"
		fi
		return
	fi
	case $3 in 124|137|143) WIRE_HUNG=$1 ;; esac
	if [ -z "${WIRE_XFAIL:-}" ]; then
		if [ "$3" = 0 ]; then
			ok "$1: $2"
		else
			case $3 in
			124|137|143) bad "$1: $2: killed at its time limit (exit status $3)" ;;
			*) bad "$1: $2: exit status $3" ;;
			esac
		fi
		return
	fi
	case $3 in
	0) bad "$1: $2 succeeded, expected a failure ($WIRE_XFAIL)" ;;
	124|137|143) bad "$1: $2 hung (killed, exit status $3), expected a failure ($WIRE_XFAIL)" ;;
	*)	_wv=$(printf '%s\n' "$4" | grep -E -e "$WIRE_XFAIL" | head -n 1)
		if [ -n "$_wv" ]; then
			ok "$1: $2 failed as expected: '$_wv'"
		else
			bad "$1: $2 failed (exit status $3) without '$WIRE_XFAIL'"
		fi ;;
	esac
}

# _wire_rping_raced PROG STATUS OUTPUT: PROG is rping and lost its own
# teardown race (rping_raced, tests/vm/lib.sh): say so, in step $_wtag.
_wire_rping_raced() {
	[ "$1" = rping ] && rping_raced "$2" "$3" || return 1
	info "$_wtag: rping's own teardown race (exit 255 after the disconnect): not a failure"
}

# wire_serve TAG SECS READY CMD...: run the server CMD (bounded by SECS) in
# the background; tell the client "TAG ready" once READY (see _wire_ready)
# holds, or "TAG fail" if it does not within 20 s; wait for the server to
# end, but no more than WIRE_GRACE seconds after the client's "TAG done"
# (or its test's end); print its output, check its exit status (0, or see
# WIRE_XFAIL in _wire_verdict) unless the step runs again (WIRE_RETRY, see
# wire_pp) and tell the client "TAG served STATUS [again]".
# Returns the server's exit status.
wire_serve() {
	_wtag=$1 _wsecs=$2 _wready=$3
	shift 3
	_wire_go "$_wtag"
	_wire_n=$((_wire_n + 1))
	_wsf=/tmp/wire-srv.$$.$_wire_n
	rm -f "$_wsf".*
	WIRE_BG="$WIRE_BG $_wsf"
	echo "  \$ $* (server $_wtag)"
	(
		timeout -k 3 "$_wsecs" "$@" >"$_wsf.out" 2>&1 &
		echo $! >"$_wsf.pid"
		wait $!
		echo $? >"$_wsf.rc"
	) &
	_wn=100
	until _wire_ready "$_wready" "$_wsf"; do
		if [ -e "$_wsf.rc" ] || [ $_wn -le 0 ]; then
			_wn=-1
			break
		fi
		_wn=$((_wn - 1))
		sleep 0.2
	done
	_wn_ready=no
	if [ $_wn -ge 0 ]; then
		_wn_ready=yes
		wire_send "$_wtag ready"
	else
		wire_send "$_wtag fail"
		if [ -e "$_wsf.rc" ]; then
			bad "$_wtag: the server ended before it was ready ($_wready)"
		else
			bad "$_wtag: the server did not get ready ($_wready) within 20s"
		fi
	fi
	_wn=$(((_wsecs + 10) * 5))
	_wg=
	while [ ! -e "$_wsf.rc" ] && [ $_wn -gt 0 ]; do
		if [ -z "$_wg" ]; then
			if wire_wait 0 "$_wtag done" >/dev/null; [ $? != 1 ]; then
				_wg=$((WIRE_GRACE * 5))
			fi
		else
			_wg=$((_wg - 1))
			[ "$_wg" -gt 0 ] || break
		fi
		_wn=$((_wn - 1))
		sleep 0.2
	done
	_wstop=
	if [ ! -e "$_wsf.rc" ]; then
		_wstop=stopped
		_wire_stop "$_wsf"
	fi
	_wrc=$(cat "$_wsf.rc" 2>/dev/null || echo 124)
	sed 's/^/    /' "$_wsf.out"
	[ "$_wrc" = 0 ] || echo "    (exit status $_wrc)"
	if [ -z "$_wstop" ] && _wire_rping_raced "$1" "$_wrc" "$(cat "$_wsf.out")"; then
		_wrc=0
	fi
	# Run the step again (WIRE_RETRY, see wire_pp)? If the client asks
	# for it in "TAG done", or if this server failed (not stopped) with
	# output matching WIRE_RETRY; the client learns it from "TAG served".
	_WIRE_AGAIN=
	_wsw=
	if [ -n "${WIRE_RETRY:-}" ] && [ "${_WIRE_ATTEMPT:-1}" -lt "${WIRE_TRIES:-2}" ]; then
		# The client may still be running when this server has ended
		# (its last SEND unacknowledged, retried into a destroyed QP):
		# its word comes at the latest SECS after it started.
		_wsd=$(wire_wait $((_wsecs + 10)) "$_wtag done")
		_wsdrc=$?
		case " $_wsd " in
		*" again "*) _WIRE_AGAIN=1 _wsw="the client asks for the step again" ;;
		esac
		# Only after a run of the client that told its end ("TAG done"):
		# not for a server that never got ready, or a client that gave up.
		# A server stopped after its grace time counts only on rdma_rxe:
		# it takes retry_cnt 7 (ibv_rc_pingpong's) as "retry forever"
		# (rxe_comp.c), so where the acknowledgement of its last message
		# is lost after the client destroyed its QP it never ends; IBTA
		# has 7 retries and then "transport retry counter exceeded",
		# which softhca reports, a failure like any other. A program
		# stopped may have written nothing (stdout to a file is
		# buffered): its output is at least one empty line, as a
		# client's (run_out), which WIRE_RETRY '.*' matches.
		if [ -n "$_wstop" ] && [ "$WIRE_DRIVER" != rxe ]; then
			_wsretry=
		else
			_wsretry=1
		fi
		if [ -z "$_WIRE_AGAIN" ] && [ "$_wrc" != 0 ] && [ -n "$_wsretry" ] &&
			[ "$_wn_ready" = yes ] && [ "$_wsdrc" = 0 ] &&
			printf '%s\n' "$(cat "$_wsf.out")" |
			grep -q -E -e "$WIRE_RETRY"; then
			_WIRE_AGAIN=1
			_wsw="the step once more (WIRE_RETRY '$WIRE_RETRY')"
		fi
	fi
	if [ -n "$_WIRE_AGAIN" ]; then
		wire_send "$_wtag served $_wrc again"
		info "$_wtag: server $1 ended with status $_wrc; $_wsw"
	else
		wire_send "$_wtag served $_wrc"
		_wire_verdict "$_wtag" "server $1" "$_wrc" "$(cat "$_wsf.out")" $_wstop
	fi
	return "$_wrc"
}

# _wire_stop STATEFILE: stop a wire_serve server (its timeout passes the
# signal on, then kills after 3 s) and wait for its end
_wire_stop() {
	[ -e "$1.rc" ] && return 0
	_wp=$(cat "$1.pid" 2>/dev/null)
	[ -z "$_wp" ] || kill "$_wp" 2>/dev/null
	wait_for 6 test -e "$1.rc"
}

# wire_connect TAG SECS CMD...: wait (40 s at most) for the server's "TAG
# ready", run the client CMD bounded by SECS, tell the server "TAG done
# STATUS", check the exit status (0) and wait for the server's end (its
# "TAG served"). Returns the client's exit status.
wire_connect() {
	_wtag=$1 _wsecs=$2
	shift 2
	_WIRE_AGAIN=
	_wire_go "$_wtag"
	wire_wait 40 "$_wtag ready" >/dev/null
	case $? in
	0) ;;
	3) die "$_wtag: guest $WIRE_PEER is gone (its QEMU exited)" ;;
	*)	wire_send "$_wtag fail"
		bad "$_wtag: the server (guest $WIRE_PEER) did not get ready"
		return 1 ;;
	esac
	_wt0=$(date +%s)
	run_t "$_wsecs" "$@"
	_wrc=$(run_rc)
	if _wire_rping_raced "$1" "$_wrc" "$(run_out)"; then
		_wrc=0
	fi
	_wt1=$(($(date +%s) - _wt0))
	_WIRE_AGAIN=
	if [ -n "${WIRE_RETRY:-}" ] && [ "${_WIRE_ATTEMPT:-1}" -lt "${WIRE_TRIES:-2}" ]; then
		# Either side's failure matching WIRE_RETRY runs the step again:
		# the server decides it (see wire_serve) and says so in "TAG served".
		if [ "$_wrc" != 0 ] && run_out | grep -q -E -e "$WIRE_RETRY"; then
			wire_send "$_wtag done $_wrc again"
			info "$_wtag: client $1 failed (exit status $_wrc; WIRE_RETRY '$WIRE_RETRY'): the step once more"
		else
			wire_send "$_wtag done $_wrc"
		fi
		_wsv=$(wire_wait $((WIRE_GRACE + 10)) "$_wtag served") ||
			info "$_wtag: no word of the server's end"
		case " $_wsv " in
		*" again "*) _WIRE_AGAIN=1 ;;
		*) _wire_verdict "$_wtag" "client $1 (${_wt1}s)" "$_wrc" "$(run_out)" ;;
		esac
	else
		wire_send "$_wtag done $_wrc"
		_wire_verdict "$_wtag" "client $1 (${_wt1}s)" "$_wrc" "$(run_out)"
		_wsv=$(wire_wait $((WIRE_GRACE + 10)) "$_wtag served") ||
			info "$_wtag: no word of the server's end"
	fi
	[ -z "$_wsv" ] || info "$_wtag: server (guest $WIRE_PEER) exit status $_wsv"
	return "$_wrc"
}

# wire_pp TAG SECS READY PROG ARGS...: the usual client/server pair of one
# program: the server runs PROG ARGS, the client PROG ARGS SERVER_ADDRESS
# (PEER_IP), as ibv_*_pingpong and perftest take them. With WIRE_RETRY=ERE
# set, a client or a server that fails with output matching ERE (a server
# stopped after its grace time only on rdma_rxe, see wire_serve) has both
# sides run the step once more (as TAG.2; WIRE_TRIES runs in all, default 2): for a
# known race of the program itself, not of the wire.
wire_pp() {
	_wpt=$1 _wps=$2 _wpr=$3
	shift 3
	_WIRE_ATTEMPT=1
	while :; do
		if wire_is_server; then
			wire_serve "$_wpt" "$_wps" "$_wpr" "$@"
		else
			wire_connect "$_wpt" "$_wps" "$@" "$PEER_IP"
		fi
		_wpx=$?
		if [ -z "$_WIRE_AGAIN" ] || [ $_WIRE_ATTEMPT -ge "${WIRE_TRIES:-2}" ]; then
			break
		fi
		_WIRE_ATTEMPT=$((_WIRE_ATTEMPT + 1))
		_wpt=${_wpt%.[0-9]}.$_WIRE_ATTEMPT
	done
	_WIRE_ATTEMPT=1
	return "$_wpx"
}

# ---- the link ---------------------------------------------------------------------

# wire_netem ARGS...: netem on this guest's side of the link (egress), e.g.
# wire_netem loss 2%; wire_netem off removes it (and the test's end does).
# iproute2's tc: busybox's applet cannot do netem.
wire_netem() {
	if [ "$1" = off ]; then
		WIRE_NETEM=0
		run /usr/sbin/tc qdisc del dev "$WIRE_NETDEV" root
		return
	fi
	WIRE_NETEM=1
	run /usr/sbin/tc qdisc replace dev "$WIRE_NETDEV" root netem "$@"
}

# wire_cm_delay MS: this guest's RoCE v2 packets to QP1 over IPv4 - the
# rdma_cm's MADs (REQ, REP, RTU, DREQ ...) - leave MS milliseconds late;
# all else leaves as before (a prio qdisc whose third band, netem, only a
# u32 filter on UDP port 4791 and the BTH's destination QP fills).
# wire_cm_delay off removes it (and the test's end does, as wire_netem).
# For programs that connect back before their peer listens (perftest -R,
# 40-perftest-bw).
# Before it removes the delay, "off" sets WIRE_CM_DELAYED to the number
# of packets it delayed (tc -s: what the netem band sent).
wire_cm_delay() {
	if [ "$1" = off ]; then
		WIRE_CM_DELAYED=$(/usr/sbin/tc -s qdisc show dev "$WIRE_NETDEV" |
			awk '$1 == "qdisc" { q = ($2 == "netem" && $3 == "30:") }
			q && $1 == "Sent" { print $4; exit }')
		wire_netem off
		return
	fi
	WIRE_NETEM=1
	/usr/sbin/tc qdisc replace dev "$WIRE_NETDEV" root handle 1: prio bands 3 &&
		/usr/sbin/tc qdisc add dev "$WIRE_NETDEV" parent 1:3 handle 30: \
			netem delay "${1}ms" &&
		# IPv4 (20 bytes), UDP (8), BTH: resv8a at 32, DestQP at 33-35
		/usr/sbin/tc filter add dev "$WIRE_NETDEV" parent 1: protocol ip \
			prio 1 u32 match ip protocol 17 0xff match ip dport 4791 0xffff \
			match u32 0x00000001 0x00ffffff at 32 flowid 1:3
}

# wire_cm_late on | off TAG: around a step (wire_pp) whose client connects
# back through rdma_cm before its server listens again, perftest -R's race
# (40-perftest-bw): on the client's side, the rdma_cm's MADs leave
# WIRE_CM_LATE ms (default 100) late (wire_cm_delay), so that its REQ
# meets the new listen. "off TAG" checks that some were delayed.
wire_cm_late() {
	wire_is_server && return 0
	if [ "$1" = on ]; then
		must "the rdma_cm's MADs from here ${WIRE_CM_LATE:-100} ms late" \
			wire_cm_delay "${WIRE_CM_LATE:-100}"
		return
	fi
	wire_cm_delay off
	if [ "${WIRE_CM_DELAYED:-0}" -gt 0 ]; then
		ok "$2: $WIRE_CM_DELAYED rdma_cm packets from here left late"
	else
		bad "$2: no rdma_cm packet left late: the filter missed them"
	fi
}

# wire_capture_start NAME [FILTER...]: tcpdump on the link (whole
# packets) into /tmp/NAME, until wire_capture_finish, which sends it to the
# host (as ROLE-TEST-NAME); a test that ends early (die, a hung step)
# still sends what it captured.
wire_capture_start() {
	command -v tcpdump >/dev/null ||
		die "tcpdump is not in the guest (install it on the host: scripts/deps.sh wire)"
	WIRE_CAP_NAME=$1
	_wcf=/tmp/$1
	shift
	echo "  \$ tcpdump -i $WIRE_NETDEV -w $_wcf $* &"
	tcpdump -Z root --immediate-mode -U -n -s 0 -i "$WIRE_NETDEV" -w "$_wcf" "$@" \
		>"$_wcf.log" 2>&1 &
	WIRE_CAP_PID=$!
	if wait_for 10 grep -q "listening on" "$_wcf.log"; then
		ok "capturing on $WIRE_NETDEV into $_wcf"
	else
		sed 's/^/    /' "$_wcf.log"
		die "tcpdump did not start"
	fi
}

# wire_capture_finish: stop the capture (a second after the last packet),
# print tcpdump's summary and send the capture to the host; WIRE_CAPTURED
# is the number of packets captured
wire_capture_finish() {
	[ -n "$WIRE_CAP_PID" ] || return 1
	sleep 1
	kill -INT "$WIRE_CAP_PID" 2>/dev/null
	wait "$WIRE_CAP_PID"
	WIRE_CAP_PID=
	_wcf=/tmp/$WIRE_CAP_NAME
	grep -E 'packets (captured|received|dropped)' "$_wcf.log" | sed 's/^/    /'
	WIRE_CAPTURED=$(sed -n 's/^\([0-9]*\) packets\{0,1\} captured$/\1/p' "$_wcf.log")
	WIRE_CAPTURED=${WIRE_CAPTURED:-0}
	if wire_put_file "$WIRE_CAP_NAME" "$_wcf"; then
		ok "capture of $WIRE_CAPTURED packets sent to the host ($(wc -c <"$_wcf") bytes), which checks it"
	else
		bad "could not send the capture to the host (virtio-serial port wire.data)"
	fi
}

# ---- what the device counted --------------------------------------------------------

# wire_hw_counters: this guest's device's port counters that are not 0
# (not "lifespan", the core's caching time of them), as
# "name=value ..." (rdma_rxe: completer_retry_err, ...; softhca:
# ack_timeouts, retransmits, ...), or nothing.
wire_hw_counters() {
	_whc=
	for _whf in "$IB/$WIRE_DEV"/ports/1/hw_counters/*; do
		[ "${_whf##*/}" != lifespan ] || continue
		[ -r "$_whf" ] || continue
		_whv=$(cat "$_whf" 2>/dev/null)
		[ -z "$_whv" ] || [ "$_whv" = 0 ] || _whc="$_whc ${_whf##*/}=$_whv"
	done
	echo "${_whc# }"
}

# wire_watch start | stop [show]: once a second, in the background, the
# time, the device's counters, its QPs (rdma -dd res show qp: state,
# PSNs and, for softhca, what the requester is at) and where the perftest
# processes are (state, kernel wait channel) to a file; "stop" ends it
# and prints, with "show", what it recorded (for a step that hung: did
# the requester time out, retransmit, hear from its peer?).
WIRE_WATCH_PID=
wire_watch() {
	_wwf=/tmp/wire-watch.$$
	if [ "$1" = start ]; then
		(
			while :; do
				echo "$(date +%s) $(wire_hw_counters)"
				rdma -dd res show qp link "$WIRE_DEV/1" 2>/dev/null |
					grep -v ' type GSI ' | sed 's/^/    /'
				for _wwp in $(pidof ib_write_bw ib_read_bw ib_send_bw); do
					echo "    pid $_wwp state $(cut -d' ' -f3 "/proc/$_wwp/stat" 2>/dev/null) wchan $(cat "/proc/$_wwp/wchan" 2>/dev/null)"
				done
				sleep 1
			done
		) >"$_wwf" 2>&1 &
		WIRE_WATCH_PID=$!
		return
	fi
	[ -z "$WIRE_WATCH_PID" ] || kill "$WIRE_WATCH_PID" 2>/dev/null
	WIRE_WATCH_PID=
	if [ "${2:-}" = show ]; then
		info "$WIRE_DEV once a second (epoch, counters; QPs):"
		sed 's/^/    /' "$_wwf"
	fi
	rm -f "$_wwf"
}

# ---- the end ----------------------------------------------------------------------

# On exit: stop what is still running, send a capture still running to the
# host, remove netem, tell the peer ("exit STATUS": it stops waiting for
# this side), then tests/vm/lib.sh's cleanup.
_wire_exit() {
	_wrc=$?
	for _wsf in $WIRE_BG; do
		_wire_stop "$_wsf"
	done
	[ -z "$WIRE_CAP_PID" ] || wire_capture_finish
	[ -z "$WIRE_WATCH_PID" ] || wire_watch stop
	[ $WIRE_NETEM = 0 ] || /usr/sbin/tc qdisc del dev "$WIRE_NETDEV" root 2>/dev/null
	wire_send exit "$_wrc" 2>/dev/null
	(exit "$_wrc")
	_vm_exit
}
trap _wire_exit EXIT
