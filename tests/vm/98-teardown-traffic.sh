#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Tearing devices down under traffic. shca_traffic runs two processes
# streaming RDMA_WRITEs and SENDs at each other over an RC QP pair, with
# MRs, CQs, QPs and mapped device memory (with an MR on it) held and
# written, and the device(s) under them go away:
#   a) rdma link delete of the peer's device (softhca1; traffic 0 <-> 1)
#   b) rdma link delete of the device of both (loopback on softhca0)
#   c) rmmod softhca with both devices in use
#   d) ip link delete of the netdev under softhca1 (dummy netdevs)
# Every time the command returns (no hang), the process on a removed
# device gets IBV_EVENT_DEVICE_FATAL and its calls fail, the process on
# the surviving device sees one request fail (RETRY_EXC_ERR once the
# other QP is gone; REM_OP_ERR or REM_ACCESS_ERR if it met the other
# side's MR already destroyed) and the rest flush, both exit by themselves; afterwards `rdma res` holds only what
# it held before, pinned pages are back at their baseline, and the kernel
# log stays clean (checked by the runner).
#
# The driver lets ib_uverbs disassociate user contexts
# (ib_device_ops.disassociate_ucontext), so a process holding objects
# neither blocks `rdma link delete` nor pins the module: rmmod succeeds.
# rdma_rxe does not; with --driver rxe only a clean run is checked.
#
# TEARDOWN_SECS (default 20) bounds each traffic run; the processes end
# long before when their device goes away. A teardown command that returns
# only when the processes have ended by themselves (after TEARDOWN_SECS:
# the core waited for them because the driver cannot disassociate) fails.
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
D1=${DRV_TYPE}1
SECS=${TEARDOWN_SECS:-20}
ST=/tmp/traffic
# what a worker's clean-up returns when its device is there (rxe: no DM)
DESTROY_OK="qp=0 cq=0,0 mr=0 dm=0,0 pd=0 close=0"
[ "$DRV_TYPE" != rxe ] || DESTROY_OK="qp=0 cq=0,0 mr=0 dm=-,- pd=0 close=0"
need_progs shca_traffic

# traffic_start A B [SECS]: start shca_traffic; 0 once both workers run
traffic_start() {
	rm -rf "$ST"
	mkdir -p "$ST"
	echo "  \$ shca_traffic $1 $2 ${3:-$SECS} $ST &"
	timeout -k 5 $((${3:-$SECS} + 60)) shca_traffic "$1" "$2" "${3:-$SECS}" "$ST" >"$ST/out" 2>&1 &
	TPID=$!
	if wait_for 60 test -e "$ST/A.ready" -a -e "$ST/B.ready"; then
		ok "traffic $1 <-> $2 flowing (A: $(cat "$ST/A.ready") ops, B: $(cat "$ST/B.ready") ops so far)"
		return 0
	fi
	bad "traffic $1 <-> $2 did not start within 60s"
	traffic_kill
	return 1
}

traffic_kill() {
	for _p in "$ST/A.pid" "$ST/B.pid"; do
		[ -r "$_p" ] && kill -9 "$(cat "$_p")" 2>/dev/null
	done
	kill -9 "$TPID" 2>/dev/null
	wait "$TPID" 2>/dev/null
	sed 's/^/    /' "$ST/out"
}

running() { kill -0 "$TPID" 2>/dev/null; }

# traffic_end SECS: the processes must end by themselves within SECS
traffic_end() {
	_t0=$(date +%s)
	if wait_for "$1" eval '! running'; then
		wait "$TPID"
		_trc=$?
		ok "both processes ended by themselves within $(($(date +%s) - _t0))s"
		sed 's/^/    /' "$ST/out"
		expect_eq "shca_traffic exit status" 0 "$_trc"
		return 0
	fi
	bad "the traffic processes still run $1s later"
	traffic_kill
	return 1
}

# field SIDE NAME: a field of the worker's summary line
field() {
	sed -n "s/^traffic $1 [^ ]*: .* $2 \([^ ]*\).*/\1/p" "$ST/out" | head -n1
}

# expect_fatal SIDE: the worker on a removed device
expect_fatal() {
	case $(field "$1" async) in
	*DEVICE_FATAL*) ok "worker $1: IBV_EVENT_DEVICE_FATAL on its async fd" ;;
	*) bad "worker $1: no IBV_EVENT_DEVICE_FATAL (async: '$(field "$1" async)')" ;;
	esac
	case $(field "$1" errs) in
	*EIO*) ok "worker $1: its verbs calls fail with EIO ($(field "$1" errs))" ;;
	*) info "worker $1: no verbs call failed (errs: '$(field "$1" errs)')" ;;
	esac
	info "worker $1: destroy after the device left: $(sed -n "s/^traffic $1 .*destroy //p" "$ST/out")"
}

# expect_peer_gone SIDE: the worker whose peer device went away
expect_peer_gone() {
	_wc=$(field "$1" wc)
	# The core destroys the other process' objects one by one: a request
	# meets its MR gone (remote access / operation error), its QP without
	# receives, then gone (transport retries exhausted).
	_errs=$(echo "$_wc" | tr ',' '\n' | grep -v -e '^success:' -e '^Work_Request_Flushed_Error:')
	case $(echo "$_errs" | tr '\n' ' ') in
	"transport_retry_counter_exceeded:1 "|"remote_operation_error:1 "|"remote_access_error:1 ")
		ok "worker $1: one request failed ($_errs)" ;;
	*)	bad "worker $1: expected one RETRY_EXC_ERR, REM_OP_ERR or REM_ACCESS_ERR completion (wc: '$_wc')" ;;
	esac
	case $_wc in
	*Work_Request_Flushed_Error:*) ok "worker $1: what was outstanding flushed" ;;
	*) info "worker $1: nothing was left to flush (wc: '$_wc')" ;;
	esac
	expect_eq "worker $1: stopped because of" wc "$(field "$1" stop)"
	case $(field "$1" async) in
	*DEVICE_FATAL*) bad "worker $1: IBV_EVENT_DEVICE_FATAL although its device stays" ;;
	*) ok "worker $1: no DEVICE_FATAL (async: $(field "$1" async))" ;;
	esac
	expect_eq "worker $1: destroy results" "$DESTROY_OK" \
		"$(sed -n "s/^traffic $1 .*destroy //p" "$ST/out")"
}

# teardown DESC CMD...: run the command that removes a device under the
# traffic; it must succeed and return at once (within 10 s), not when the
# processes give up by themselves
teardown() {
	_d=$1
	shift
	_t0=$(date +%s)
	run_t $((SECS + 30)) "$@"
	_rc=$?
	_t=$(($(date +%s) - _t0))
	if [ $_rc -ne 0 ]; then
		bad "$_d: exit status $_rc after ${_t}s (124: hung)"
	elif [ $_t -gt 10 ]; then
		bad "$_d: returned only after ${_t}s, when the processes had ended by themselves (blocked in the meantime)"
	else
		ok "$_d: returned after ${_t}s"
	fi
}

vm_setup "$D0" "$D1"

if [ "$DRV_TYPE" = rxe ]; then
	title "rxe: a clean run only (no disassociation, no traffic between two local devices)"
	if traffic_start "$D0" "$D0" 3; then
		traffic_end 30
		for s in A B; do
			expect_eq "worker $s: stopped because of" time "$(field $s stop)"
			expect_eq "worker $s: errors" - "$(field $s errs)"
		done
	fi
	vm_leftovers 20 "$D0"
	exit 0
fi

title "a clean run: 3 s of traffic $D0 <-> $D1"
if traffic_start "$D0" "$D1" 3; then
	traffic_end 30
	for s in A B; do
		expect_eq "worker $s: stopped because of" time "$(field $s stop)"
		case $(field $s async) in
		*FATAL*|*ERR*|*error*) bad "worker $s: async events '$(field $s async)'" ;;
		*) ok "worker $s: no error events (async: $(field $s async))" ;;
		esac
		expect_eq "worker $s: errors" - "$(field $s errs)"
		expect_eq "worker $s: destroy results" "$DESTROY_OK" \
			"$(sed -n "s/^traffic $s .*destroy //p" "$ST/out")"
		case $(field $s wc) in
		success:[0-9]*) ok "worker $s: only successful completions ($(field $s wc))" ;;
		*) bad "worker $s: completions '$(field $s wc)'" ;;
		esac
	done
fi
vm_leftovers 20

title "a) rdma link delete $D1 (the peer's device) under traffic $D0 <-> $D1"
if traffic_start "$D0" "$D1"; then
	teardown "rdma link delete $D1" rdma link delete "$D1"
	if traffic_end 30; then
		expect_fatal B
		expect_peer_gone A
	fi
	if dev_gone "$D1"; then ok "$D1 gone"; else bad "$D1 still present"; fi
	vm_leftovers 20 "$D0"
fi
must "rdma link add $D1 netdev eth1 again" link_add "$D1" eth1
expect_port "$D1" state "4: ACTIVE" 10

title "b) rdma link delete $D0 under loopback traffic on it"
if traffic_start "$D0" "$D0"; then
	teardown "rdma link delete $D0" rdma link delete "$D0"
	if traffic_end 30; then
		expect_fatal A
		expect_fatal B
	fi
	if dev_gone "$D0"; then ok "$D0 gone"; else bad "$D0 still present"; fi
	vm_leftovers 20 "$D1"
fi
must "rdma link add $D0 netdev eth0 again" link_add "$D0" eth0
expect_port "$D0" state "4: ACTIVE" 10

title "c) rmmod $DRV_MOD under traffic $D0 <-> $D1"
if traffic_start "$D0" "$D1"; then
	# ib_uverbs takes no module reference for a device that can be
	# disassociated: rmmod unregisters both devices under the processes
	teardown "rmmod $DRV_MOD while processes hold QPs, CQs and MRs (1: module in use)" \
		rmmod "$DRV_MOD"
	if traffic_end 30; then
		# The devices go one after the other: the worker on the one
		# that goes second may first see its peer vanish, stop on that
		# error completion and exit before its own device is removed.
		for _w in A B; do
			if [ "$(field $_w stop)" = wc ] &&
			   ! field $_w async | grep -q DEVICE_FATAL; then
				info "worker $_w: its peer's device went first: stopped on an error completion ($(field $_w wc))"
				field $_w wc | grep -qE 'remote_access_error|remote_operation_error|transport_retry_counter_exceeded' ||
					bad "worker $_w: stopped without an error completion (wc: '$(field $_w wc)')"
			else
				expect_fatal $_w
			fi
		done
	fi
	if drv_loaded; then bad "$DRV_MOD still loaded"; else ok "$DRV_MOD unloaded"; fi
	expect_eq "RDMA devices left" "" "$(devs)"
	expect_pins 20
fi
drv_loaded || drv_load || die "reloading $DRV_MOD failed"

title "d) ip link delete of the netdev under $D1 (dummy netdevs)"
must "dummy0 up, 10.9.0.1/24" add_dummy dummy0
must "dummy1 up, 10.9.1.1/24" add_dummy dummy1
run ip addr add 10.9.0.1/24 dev dummy0
run ip addr add 10.9.1.1/24 dev dummy1
for l in "$D0" "$D1"; do
	dev_listed "$l" && link_del "$l"
done
must "rdma link add $D0 netdev dummy0" link_add "$D0" dummy0
must "rdma link add $D1 netdev dummy1" link_add "$D1" dummy1
expect_port "$D0" state "4: ACTIVE" 10
expect_port "$D1" state "4: ACTIVE" 10
vm_baseline "$D0"
if traffic_start "$D0" "$D1"; then
	teardown "ip link delete dummy1" ip link delete dummy1
	if traffic_end 30; then
		expect_fatal B
		expect_peer_gone A
	fi
	if wait_for 10 dev_gone "$D1"; then ok "$D1 gone with dummy1"; else bad "$D1 still present"; fi
	vm_leftovers 20
fi

title "the survivor still works"
if traffic_start "$D0" "$D0" 2; then
	traffic_end 30
	expect_eq "worker A: stopped because of" time "$(field A stop)"
	expect_eq "worker B: stopped because of" time "$(field B stop)"
fi
vm_leftovers 20
