#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Helpers for the VM tests (tests/vm/NN-*.sh), sourced with ". /tests/lib.sh".
# POSIX sh (the guest runs them with dash, busybox provides the utilities).
#
# A test prints its steps ("ok - ...", "FAIL - ... expected X, saw Y"); a
# failed check with bad() lets the test go on, die() stops it. On exit,
# vm_cleanup() deletes every rdma link, the netdevs the test created and
# unloads the driver, so the next test starts clean. The exit status is 0
# only if no check failed.
#
# Most tests start with vm_setup (driver, devices on eth0/eth1, ports
# ACTIVE, the baseline of `rdma res` and pinned pages) and end with
# vm_leftovers (nothing left behind since that baseline).
#
# VMTEST_DRIVER=rxe (scripts/vm.sh --driver rxe) runs the same tests against
# rdma_rxe, to check the tests themselves.

VMTEST_DRIVER=${VMTEST_DRIVER:-softhca}
case $VMTEST_DRIVER in
rxe)	DRV_MOD=rdma_rxe
	DRV_TYPE=rxe ;;
*)	DRV_MOD=softhca
	DRV_TYPE=softhca ;;
esac
KO=${SOFTHCA_KO:-/softhca.ko}
IB=/sys/class/infiniband
FAILS=0
NETDEVS_CREATED=
NETNS_CREATED=
L2_LINKED=

info() { echo "  # $*"; }
ok() { echo "  ok - $*"; }
bad() {
	echo "  FAIL - $*"
	FAILS=$((FAILS + 1))
}
die() {
	bad "$@"
	exit 1
}
title() { echo "  # ---- $* ----"; }

# expect_eq DESC EXPECTED SEEN
expect_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1: '$3'"
	else
		bad "$1: expected '$2', saw '$3'"
	fi
}

# run CMD...: print the command, run it (bounded: RUN_TIMEOUT seconds, 30 by
# default), print its output indented; returns the command's exit status.
RUN_TIMEOUT=30
run() {
	echo "  \$ $*"
	_out=$(timeout -k 5 "$RUN_TIMEOUT" "$@" 2>&1)
	_rc=$?
	[ -z "$_out" ] || printf '%s\n' "$_out" | sed 's/^/    /'
	[ $_rc -eq 0 ] || echo "    (exit status $_rc)"
	return $_rc
}

# run_t SECS CMD...: run() bounded by SECS seconds
run_t() {
	RUN_TIMEOUT=$1
	shift
	run "$@"
	_rc=$?
	RUN_TIMEOUT=30
	return $_rc
}

# run_any CMD...: run() for a program; a shell function of this file (which
# runs its commands with run() itself) is called directly.
run_any() {
	case $(type "$1" 2>/dev/null) in
	*function*)
		"$@"
		_rc=$? ;;
	*)
		run "$@" ;;
	esac
	return $_rc
}

# exit status and output of the last run()
run_rc() { echo "$_rc"; }
run_out() { printf '%s\n' "$_out"; }

# rping_raced STATUS OUTPUT: did rping (rdma-core 44) lose the race with its
# own teardown? Its CM thread may still wait for an event when the main
# thread, done, destroys the event channel; the thread then exits the
# process with status 255 after printing "rdma_get_cm_event: Bad file
# descriptor" (rdma-core f3ae6534a, "rping: terminate CM event thread before
# exiting", fixed it in 2025). Only after the disconnect: the pings are done.
rping_raced() {
	[ "$1" = 255 ] &&
		printf '%s\n' "$2" | grep -q 'DISCONNECT EVENT' &&
		printf '%s\n' "$2" | grep -q -x 'rdma_get_cm_event: Bad file descriptor'
}

# must DESC CMD...: the command (or helper) must succeed, else the test stops.
must() {
	_d=$1
	shift
	if run_any "$@"; then
		ok "$_d"
	else
		die "$_d: expected success, got exit status $_rc"
	fi
}

# mustfail DESC CMD...: the command must fail (non-zero exit, no timeout).
mustfail() {
	_d=$1
	shift
	if run_any "$@"; then
		bad "$_d: expected failure, but the command succeeded"
		return 1
	elif [ $_rc -eq 124 ] || [ $_rc -eq 137 ]; then
		bad "$_d: the command hung (killed after 30s)"
		return 1
	fi
	ok "$_d (failed as expected)"
}

# wait_for SECS CMD...: poll CMD every 0.2 s until it succeeds; 1 on timeout.
wait_for() {
	_n=$(($1 * 5))
	shift
	while [ $_n -gt 0 ]; do
		"$@" && return 0
		sleep 0.2
		_n=$((_n - 1))
	done
	"$@"
}

# need_progs PROG...: the test programs of tests/vm/bin it needs, else it stops
need_progs() {
	for _p; do
		command -v "$_p" >/dev/null ||
			die "$_p missing: build tests/vm/bin with 'make vm-programs'"
	done
}

# ---- driver ------------------------------------------------------------------

drv_loaded() { grep -q "^$DRV_MOD " /proc/modules; }
drv_load() {
	if [ "$DRV_TYPE" = rxe ]; then
		run modprobe rdma_rxe
	else
		[ -r "$KO" ] || die "$KO is missing (build the module, or pass --module)"
		run insmod "$KO"
	fi
}
drv_unload() { run rmmod "$DRV_MOD"; }

# ---- rdma links and devices ---------------------------------------------------

link_add() { run rdma link add "$1" type "$DRV_TYPE" netdev "$2"; }
link_del() { run rdma link delete "$1"; }

# devs: names of all RDMA devices per `rdma dev show`, sorted, space separated
devs() {
	rdma dev show 2>/dev/null | sed -n 's/^[0-9]*: \([^:]*\): .*/\1/p' | sort | tr '\n' ' ' | sed 's/ $//'
}
# ibdirs: entries of /sys/class/infiniband, sorted, space separated
# shellcheck disable=SC2012
ibdirs() { ls "$IB" 2>/dev/null | sort | tr '\n' ' ' | sed 's/ $//'; }
dev_listed() { devs | tr ' ' '\n' | grep -qx "$1"; }
dev_gone() { ! dev_listed "$1" && [ ! -e "$IB/$1" ]; }
dev_present() { dev_listed "$1" && [ -d "$IB/$1" ]; }

# link_field DEV FIELD: a field of `rdma link show DEV/1` (netdev, state, ...)
link_field() {
	rdma link show "$1/1" 2>/dev/null |
		awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }'
}

# port_attr DEV ATTR: contents of /sys/class/infiniband/DEV/ports/1/ATTR
port_attr() { cat "$IB/$1/ports/1/$2" 2>/dev/null; }
port_is() { [ "$(port_attr "$1" "$2")" = "$3" ]; }

# expect_port DEV ATTR VALUE SECS: wait up to SECS for the port attribute
expect_port() {
	if wait_for "$4" port_is "$1" "$2" "$3"; then
		ok "$1 ports/1/$2 is '$3'"
	else
		bad "$1 ports/1/$2: expected '$3' within $4s, saw '$(port_attr "$1" "$2")'"
	fi
}

# ---- addresses -------------------------------------------------------------------

# mac_guid NETDEV: EUI-64 of the netdev's MAC, formatted like sysfs node_guid
mac_guid() {
	# shellcheck disable=SC2046
	set -- $(tr ':' ' ' <"/sys/class/net/$1/address")
	printf '%02x%s:%sff:fe%s:%s%s\n' $((0x$1 ^ 2)) "$2" "$3" "$4" "$5" "$6"
}

# ipv4_gid A.B.C.D: the IPv4-mapped GID as sysfs prints it
ipv4_gid() {
	# shellcheck disable=SC2046
	set -- $(echo "$1" | tr '.' ' ')
	printf '0000:0000:0000:0000:0000:ffff:%02x%02x:%02x%02x\n' "$1" "$2" "$3" "$4"
}

# ipv6_settled NETDEV: no IPv6 address of NETDEV is still in duplicate
# address detection (IFA_F_TENTATIVE, 0x40, in the flags of
# /proc/net/if_inet6). A tentative address cannot be a route's source: a
# MAD or connection to its GID waits out the core's 1 s resolution
# timeout (ETIMEDOUT). QEMU's router advertises a prefix a few seconds
# after boot.
ipv6_settled() {
	! awk -v d="$1" '$6 == d { print $5 }' /proc/net/if_inet6 | grep -q '^[4567cdef]'
}

# has_gid DEV GID: some entry of ports/1/gids/ equals GID
has_gid() { cat "$IB/$1"/ports/1/gids/* 2>/dev/null | grep -qx "$2"; }

# l2_link NETDEV_A NETDEV_B: make the addresses of each netdev resolvable
# from the other (permanent neighbour entries), as if both were on one
# Ethernet segment. For a user QP the RDMA core resolves the destination
# MAC of a RoCE v2 GID through the IP route of the source GID's netdev
# before modify_qp reaches the driver; the guest's eth0 and eth1 sit on two
# separate QEMU user networks, so without this a QP on eth0's device
# cannot be connected to one on eth1's (ETIMEDOUT). vm_cleanup removes them.
l2_link() {
	_ma=$(cat "/sys/class/net/$1/address")
	_mb=$(cat "/sys/class/net/$2/address")
	for _x in "$1 $2 $_mb" "$2 $1 $_ma"; do
		# shellcheck disable=SC2086
		set -- $_x
		for _a in $(ip -o addr show dev "$2" | awk '$3 == "inet" || $3 == "inet6" { sub(/\/.*/, "", $4); print $4 }'); do
			ip neigh replace "$_a" lladdr "$3" dev "$1" nud permanent || return 1
		done
		L2_LINKED="$L2_LINKED $1"
	done
}

# ---- pinned memory ----------------------------------------------------------------

# foll_pins: pages pinned with FOLL_PIN (ib_umem, ...) in the whole system,
# nr_foll_pin_acquired - nr_foll_pin_released of /proc/vmstat, after folding
# the per-CPU deltas into the global counters (stat_refresh)
foll_pins() {
	echo 1 >/proc/sys/vm/stat_refresh 2>/dev/null
	awk '$1 == "nr_foll_pin_acquired" { a = $2 }
		$1 == "nr_foll_pin_released" { r = $2 }
		END { print a - r }' /proc/vmstat
}

pins_are() { [ "$(foll_pins)" = "$1" ]; }

# ---- setup and "nothing left behind" ----------------------------------------------

# res_count DEV FIELD: the FIELD (pd, mr, ctx) count of `rdma res show` for DEV
res_count() {
	rdma res show 2>/dev/null |
		awk -v d="$1:" -v f="$2" '$2 == d { for (i = 3; i < NF; i++) if ($i == f) print $(i + 1) }'
}

# res_of DEV: what DEV holds per `rdma res show`,
# " ctx=N pd=N mr=N cq=N qp=N srq=N cm_id=N"
res_of() {
	for _f in ctx pd mr cq qp srq cm_id; do
		printf ' %s=%s' $_f "$(res_count "$1" $_f)"
	done
}

# vm_setup DEV0 [DEV1]: how most tests start. Load the driver, add DEV0 on
# eth0 and wait for its port to be ACTIVE; with DEV1 the same for DEV1 on
# eth1, and eth0 and eth1 resolve each other's addresses (l2_link), so QPs
# of the two devices can be connected. Then vm_baseline DEV0 [DEV1].
vm_setup() {
	drv_load || die "loading $DRV_MOD failed"
	must "rdma link add $1 type $DRV_TYPE netdev eth0" link_add "$1" eth0
	expect_port "$1" state "4: ACTIVE" 10
	if [ $# -gt 1 ]; then
		must "rdma link add $2 type $DRV_TYPE netdev eth1" link_add "$2" eth1
		expect_port "$2" state "4: ACTIVE" 10
		must "eth0 and eth1 resolve each other's addresses (static neighbours)" \
			l2_link eth0 eth1
	fi
	vm_baseline "$@"
}

# _vm_var DEV: DEV as part of a variable name
_vm_var() { printf '%s' "$1" | tr -c 'A-Za-z0-9_' _; }

# vm_baseline DEV...: remember what vm_leftovers compares with: the pages
# pinned in the system ($PINS0) and what each DEV holds in `rdma res`
# (res0 DEV; the kernel's own objects, such as a GSI QP, stay)
vm_baseline() {
	PINS0=$(foll_pins)
	VM_DEVS=$*
	_vmsg="baseline: pinned pages $PINS0"
	for _vd; do
		_vr=$(res_of "$_vd")
		eval "VM_RES0_$(_vm_var "$_vd")=\$_vr"
		_vmsg="$_vmsg; rdma res $_vd:$_vr"
	done
	info "$_vmsg"
}

# res0 DEV: what DEV held in `rdma res` at vm_baseline
res0() { eval "printf '%s' \"\${VM_RES0_$(_vm_var "$1"):-}\""; }

# expect_pins [SECS]: the pages pinned in the system are back at the
# baseline $PINS0, within SECS seconds (default 0: now)
expect_pins() {
	if wait_for "${1:-0}" pins_are "$PINS0"; then
		ok "pinned pages back to $PINS0"
	else
		bad "pinned pages: expected $PINS0, saw $(foll_pins)"
	fi
}

# vm_leftovers [SECS [DEV...]]: nothing is left behind since vm_baseline:
# the pinned pages are back at the baseline (expect_pins SECS), and each DEV
# (default: those of vm_baseline) holds in `rdma res` what it held then.
vm_leftovers() {
	expect_pins "${1:-0}"
	[ $# -eq 0 ] || shift
	# shellcheck disable=SC2086
	[ $# -gt 0 ] || set -- $VM_DEVS
	for _vd; do
		expect_eq "rdma res of $_vd" "$(res0 "$_vd")" "$(res_of "$_vd")"
	done
}

# ---- a wire inside the guest ------------------------------------------------------

# wire_setup: two "hosts" joined by a wire: a veth pair, va in this network
# namespace (10.9.0.1/24, fd00:9::1/64) and vb in the namespace $WIRE_NS
# (10.9.0.2/24, fd00:9::2/64), $D0 (e.g. softhca0) on va and $D1 on vb.
# Devices of different namespaces are not local to each other: everything
# between them travels as RoCE v2 packets over the veth.
WIRE_NS=shcawire
wire_setup() {
	drv_load || die "loading $DRV_MOD failed"
	run modprobe veth || die "modprobe veth failed"
	run ip netns add "$WIRE_NS" || die "ip netns add failed"
	NETNS_CREATED="$NETNS_CREATED $WIRE_NS"
	run ip link add va type veth peer name vb || die "veth pair failed"
	NETDEVS_CREATED="$NETDEVS_CREATED va"
	run ip link set vb netns "$WIRE_NS"
	run ip addr add 10.9.0.1/24 dev va
	run ip -6 addr add fd00:9::1/64 dev va nodad
	run ip link set va up
	wns ip link set lo up
	wns ip addr add 10.9.0.2/24 dev vb
	wns ip -6 addr add fd00:9::2/64 dev vb nodad
	wns ip link set vb up
	must "rdma link add $D0 type $DRV_TYPE netdev va" link_add "$D0" va
	must "rdma link add $D1 type $DRV_TYPE netdev vb (in $WIRE_NS)" \
		wns rdma link add "$D1" type "$DRV_TYPE" netdev vb
	expect_port "$D0" state "4: ACTIVE" 10
	expect_port "$D1" state "4: ACTIVE" 10
	wait_for 10 wire_gids_ready || bad "the GIDs of va and vb did not appear"
	vm_baseline "$D0" "$D1"
}

# wns CMD...: run CMD (with run()) in the other namespace
wns() { run ip netns exec "$WIRE_NS" "$@"; }

# gid_of DEV KIND: index of a RoCE v2 GID of DEV: KIND ipv4 (IPv4-mapped),
# ll (link-local IPv6) or ula (fd00::/8)
gid_of() {
	for _f in "$IB/$1"/ports/1/gids/*; do
		_i=${_f##*/}
		[ "$(cat "$IB/$1/ports/1/gid_attrs/types/$_i" 2>/dev/null)" = "RoCE v2" ] || continue
		case $2:$(cat "$_f" 2>/dev/null) in
		ipv4:0000:0000:0000:0000:0000:ffff:*|ll:fe80:*|ula:fd*)
			echo "$_i"
			return 0 ;;
		esac
	done
	return 1
}
wire_gids_ready() {
	for _k in ipv4 ll ula; do
		gid_of "$D0" $_k >/dev/null && gid_of "$D1" $_k >/dev/null || return 1
	done
}

# wire_stat DEV NAME: a port counter of DEV (rdma statistic)
wire_stat() {
	rdma statistic show link "$1/1" 2>/dev/null |
		awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }'
}

# wire_mark DEV...: remember the port counters of each DEV (wire_delta),
# and the packets lo carried (wire_through_lo)
wire_mark() {
	_lo0=$(cat /sys/class/net/lo/statistics/tx_packets)
	for _wd; do
		rdma statistic show link "$_wd/1" >"/tmp/wire_mark.$_wd" 2>/dev/null
	done
}

# wire_delta DEV NAME: how much the port counter NAME of DEV grew since
# wire_mark DEV
wire_delta() {
	_w0=$(awk -v f="$2" '{ for (i = 1; i < NF; i++) if ($i == f) { print $(i + 1); exit } }' \
		"/tmp/wire_mark.$1" 2>/dev/null)
	echo $(($(wire_stat "$1" "$2") - ${_w0:-0}))
}

# ---- the wire between devices of this guest (force_wire) ---------------------
#
# With softhca's force_wire parameter set, connections and datagrams set
# up from then on travel as RoCE v2 packets even between softhca devices
# of this guest. The kernel's ULPs make their rdma_cm IDs in init_net, so
# both ends of a ULP are here: with force_wire their packets go through
# the IP stack, and since the destination address is one of the guest's
# own, through the loopback netdev lo, whatever netdevs the GIDs belong
# to. Unloading the module (vm_cleanup) resets the parameter.

FORCE_WIRE=/sys/module/softhca/parameters/force_wire

# force_wire Y|N: set the parameter; fails if it is not there or not set
force_wire() {
	echo "  \$ echo $1 > $FORCE_WIRE"
	echo "$1" >"$FORCE_WIRE" 2>/dev/null && [ "$(cat "$FORCE_WIRE")" = "$1" ]
}

# wire_through_lo DEV BYTES WHAT: since wire_mark DEV, DEV sent at least
# BYTES bytes, WHAT had to go (the data, not only the CM's MADs), and lo
# carried at least as many packets as DEV sent (DEV talked to itself)
wire_through_lo() {
	_wb=$(wire_delta "$1" tx_bytes)
	if [ "$_wb" -ge "$2" ]; then
		ok "$1 sent $_wb bytes, at least $3"
	else
		bad "$1 sent $_wb bytes, less than $3 ($2 bytes)"
	fi
	_wp=$(wire_delta "$1" tx_packets)
	_wl=$(($(cat /sys/class/net/lo/statistics/tx_packets) - _lo0))
	if [ "$_wl" -ge "$_wp" ]; then
		ok "lo carried $_wl packets, $1 sent $_wp"
	else
		bad "lo carried $_wl packets, fewer than the $_wp $1 sent"
	fi
}

# wire_traffic DEV...: each DEV sent and received RoCE v2 packets since
# wire_mark DEV, none failed to leave and none arrived with a bad ICRC
wire_traffic() {
	for _wd; do
		_tx=$(wire_delta "$_wd" tx_packets)
		_rx=$(wire_delta "$_wd" rx_packets)
		if [ "$_tx" -gt 0 ] && [ "$_rx" -gt 0 ]; then
			ok "$_wd on the wire: $_tx packets sent ($(wire_delta "$_wd" tx_bytes) bytes), $_rx received ($(wire_delta "$_wd" rx_bytes) bytes)"
		else
			bad "$_wd on the wire: $_tx packets sent, $_rx received (expected both > 0)"
		fi
		expect_eq "$_wd icrc_errors" 0 "$(wire_stat "$_wd" icrc_errors)"
		expect_eq "$_wd tx_errors" 0 "$(wire_stat "$_wd" tx_errors)"
	done
}

# wire_recovery DEV...: what the transport of the DEVs did about lost
# packets since wire_mark, as "retransmits N ack_timeouts N ..." summed
# over them
wire_recovery() {
	for _wc in retransmits ack_timeouts seq_naks_sent seq_naks_rcvd \
		duplicate_requests out_of_sequence; do
		_ws=0
		for _wd; do
			_ws=$((_ws + $(wire_delta "$_wd" $_wc)))
		done
		printf '%s %s ' $_wc $_ws
	done
	echo
}

# lo_netem NETEM...: impair the loopback netdev with `tc qdisc ... netem
# NETEM...`; "lo_netem none" removes it, and so does vm_cleanup
LO_NETEM=
lo_netem() {
	/usr/sbin/tc qdisc del dev lo root 2>/dev/null
	LO_NETEM=
	[ "$1" != none ] || return 0
	[ -x /usr/sbin/tc ] || { bad "no /usr/sbin/tc in the guest"; return 1; }
	run modprobe sch_netem || return 1
	LO_NETEM=1
	run /usr/sbin/tc qdisc add dev lo root netem "$@"
}

# lo_watchdog SECS: lift lo's netem after SECS seconds. A transport that
# stopped recovering from the losses would leave the I/O to the ULP's own
# timeouts and reconnections, and the test to its time limit: with the
# loss lifted the test goes on, to fail. lo_watchdog_end stops it, says
# whether it had to act, and removes the netem.
lo_watchdog() {
	(sleep "$1"; /usr/sbin/tc qdisc del dev lo root) 2>/dev/null &
	_lo_wd=$!
	_lo_wd_secs=$1
}
lo_watchdog_end() {
	kill "$_lo_wd" 2>/dev/null
	wait "$_lo_wd" 2>/dev/null
	if /usr/sbin/tc qdisc show dev lo | grep -q netem; then
		ok "the I/O under loss was done within $_lo_wd_secs s"
		run /usr/sbin/tc -s qdisc show dev lo
	else
		bad "the I/O under loss took more than $_lo_wd_secs s: the watchdog lifted the loss"
	fi
	lo_netem none
}

# wire_retransmitted DEV...: the requesters of the DEVs went back and
# sent packets again since wire_mark (what the transport did is shown)
wire_retransmitted() {
	_wr=$(wire_recovery "$@")
	info "recovery: $_wr"
	# shellcheck disable=SC2086
	set -- $_wr
	if [ "$2" -gt 0 ]; then
		ok "the requesters retransmitted $2 packets"
	else
		bad "no retransmission: was anything lost? ($_wr)"
	fi
}

# ---- cleanup -------------------------------------------------------------------

# add_dummy NAME: create an up dummy netdev, deleted again by vm_cleanup
add_dummy() {
	run ip link add "$1" type dummy || return 1
	NETDEVS_CREATED="$NETDEVS_CREATED $1"
	run ip link set "$1" up
}

vm_cleanup() {
	_ok=0
	for _l in $(rdma link show 2>/dev/null | awk '/^link /{ split($2, a, "/"); print a[1] }' | sort -u); do
		timeout 30 rdma link delete "$_l" || _ok=1
	done
	for _n in $NETDEVS_CREATED; do
		[ ! -e "/sys/class/net/$_n" ] || ip link del "$_n" || _ok=1
	done
	for _n in $NETNS_CREATED; do
		ip netns del "$_n" || _ok=1
	done
	for _n in $L2_LINKED; do
		[ ! -e "/sys/class/net/$_n" ] || ip neigh flush dev "$_n" nud permanent
	done
	for _n in eth0 eth1; do
		ip link set "$_n" up 2>/dev/null
	done
	[ -z "$LO_NETEM" ] || /usr/sbin/tc qdisc del dev lo root || _ok=1
	if drv_loaded; then
		timeout 30 rmmod "$DRV_MOD" || _ok=1
	fi
	return $_ok
}

# klog_mark; ...; klog_new: the kernel log lines since the mark (the log is
# not cleared: /init checks the whole test's log afterwards)
klog_mark() { _kmark=$(dmesg | wc -l); }
klog_new() { dmesg | tail -n +$((_kmark + 1)) | sed 's/^\[[ 0-9.]*\] //'; }

# klog_has DESC ERE: some line since the mark matches ERE
klog_has() {
	if klog_new | grep -q -E -e "$2"; then
		ok "$1: '$(klog_new | grep -E -e "$2" | head -n 1)'"
	else
		bad "$1: no kernel log line matching '$2' in:"
		klog_new | sed 's/^/    /'
	fi
}
# klog_lacks DESC ERE: no line since the mark matches ERE
klog_lacks() {
	if klog_new | grep -E -e "$2" >/tmp/klog.bad; then
		bad "$1: unexpected:"
		sed 's/^/    /' /tmp/klog.bad
	else
		ok "$1"
	fi
}

# NVMe over Fabrics host helpers (87-*): the first controller, its state;
# connect [OPTIONS] connects to subsystem $NQN at ${TADDR:-$A0}:4420
# (",OPTIONS" appended), disconnect deletes the controller.
ctrl() { ls /sys/class/nvme 2>/dev/null | head -n 1; }
ctrl_state() { cat "/sys/class/nvme/$(ctrl)/state" 2>/dev/null; }
ctrl_live() { [ "$(ctrl_state)" = live ] && [ -b /dev/nvme0n1 ]; }
no_ctrl() { [ -z "$(ctrl)" ]; }

# connect [OPTIONS]: connect the host to $NQN (",OPTIONS" appended)
connect() {
	_opts="transport=rdma,traddr=${TADDR:-$A0},trsvcid=4420,nqn=$NQN${1:+,$1}"
	echo "  \$ echo $_opts > /dev/nvme-fabrics"
	if ! echo "$_opts" >/dev/nvme-fabrics; then
		bad "connect ($_opts) failed"
		dmesg | tail -n 20 | sed 's/^/    /'
		return 1
	fi
	if wait_for 20 ctrl_live; then
		ok "controller $(ctrl) live over $(cat "/sys/class/nvme/$(ctrl)/transport")"
	else
		bad "controller not live: '$(ctrl_state)'"
		return 1
	fi
}

disconnect() {
	_c=$(ctrl)
	[ -n "$_c" ] || return 0
	echo 1 >"/sys/class/nvme/$_c/delete_controller"
	if wait_for 20 no_ctrl; then
		ok "controller $_c deleted"
	else
		bad "controller $_c still there: '$(ctrl_state)'"
	fi
}

# the nvmet configfs
CFS=/sys/kernel/config/nvmet

# nvme_modules: the ULPs of the 87-* tests and a memory-backed 1 GiB
# null_blk disk, /dev/nullb0 (the namespace nvmet_setup serves)
nvme_modules() {
	must "null_blk: a memory-backed 1 GiB disk" \
		modprobe null_blk nr_devices=1 memory_backed=1 gb=1
	must "nvmet-rdma" modprobe nvmet-rdma
	must "nvme-rdma" modprobe nvme-rdma
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs none /sys/kernel/config
}

# nvmet_setup [ADDR]: subsystem $NQN with
# /dev/nullb0 as namespace 1, on an RDMA port at ADDR (default $A0):4420
nvmet_setup() {
	mkdir "$CFS/subsystems/$NQN" &&
	echo 1 >"$CFS/subsystems/$NQN/attr_allow_any_host" &&
	mkdir "$CFS/subsystems/$NQN/namespaces/1" &&
	echo /dev/nullb0 >"$CFS/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 >"$CFS/subsystems/$NQN/namespaces/1/enable" &&
	mkdir "$CFS/ports/1" &&
	echo rdma >"$CFS/ports/1/addr_trtype" &&
	echo ipv4 >"$CFS/ports/1/addr_adrfam" &&
	echo "${1:-$A0}" >"$CFS/ports/1/addr_traddr" &&
	echo 4420 >"$CFS/ports/1/addr_trsvcid" &&
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
}

nvmet_teardown() {
	rm -f "$CFS/ports/1/subsystems/$NQN"
	rmdir "$CFS/ports/1" "$CFS/subsystems/$NQN/namespaces/1" \
		"$CFS/subsystems/$NQN" 2>/dev/null
	return 0
}

# cm_listening PORT: an rdma_cm ID listens on PORT
cm_listening() {
	rdma res show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ":$1 "
}

# data_check MIB SEEK_MIB: random data through the host, compared on the
# host and on the backing device
data_check() {
	dd if=/dev/urandom of=/tmp/pat bs=1M count="$1" 2>/dev/null
	run_t 120 dd if=/tmp/pat of=/dev/nvme0n1 bs=1M seek="$2" oflag=direct conv=fsync
	run_t 120 dd if=/dev/nvme0n1 of=/tmp/back bs=1M skip="$2" count="$1" iflag=direct
	if cmp -s /tmp/pat /tmp/back; then
		ok "$1 MiB at $2 MiB read back through nvme-rdma equal"
	else
		bad "$1 MiB at $2 MiB read back through nvme-rdma differ"
	fi
	run_t 60 dd if=/dev/nullb0 of=/tmp/back bs=1M skip="$2" count="$1" iflag=direct
	if cmp -s /tmp/pat /tmp/back; then
		ok "$1 MiB at $2 MiB on the backing device equal"
	else
		bad "$1 MiB at $2 MiB on the backing device differ"
	fi
	rm -f /tmp/back
}

# small_check BLOCK: 256 writes of 4 KiB at the odd 4 KiB block BLOCK
# (many small requests), compared on the backing device
small_check() {
	dd if=/dev/urandom of=/tmp/small bs=4k count=256 2>/dev/null
	run_t 60 dd if=/tmp/small of=/dev/nvme0n1 bs=4k seek="$1" oflag=direct
	run_t 60 dd if=/dev/nullb0 of=/tmp/small.back bs=4k skip="$1" count=256 iflag=direct
	if cmp -s /tmp/small /tmp/small.back; then
		ok "256 writes of 4 KiB at block $1 on the backing device"
	else
		bad "256 writes of 4 KiB at block $1 differ on the backing device"
	fi
	rm -f /tmp/small /tmp/small.back
}

# kernel_quiet: no warning, oops or blocked task in the kernel log
kernel_quiet() {
	if dmesg | grep -E 'WARNING:|BUG:|Oops|blocked for more than|hung_task' >/tmp/dmesg.bad; then
		bad "the kernel complained:"
		sed 's/^/    /' /tmp/dmesg.bad
	else
		ok "no warning, oops or blocked task in the kernel log"
	fi
}

# ---- NFS over RDMA (88-*) ------------------------------------------------------
#
# The kernel's nfsd serves a tmpfs directory, $EXP, through its
# RPC-over-RDMA listener (svcrdma) on port $NFS_PORT; the kernel's NFSv4.2
# client mounts it on $MNT with proto=rdma (xprtrdma). No nfs-utils in the
# guest: the export is put into nfsd's export caches by hand, with the
# lines rpc.mountd writes when it answers nfsd's upcalls (ip_map_parse,
# svc_export_parse and expkey_parse in the kernel), and busybox's mount
# hands the options to the kernel unchanged, so they name the server's
# address (addr=) and the client's (clientaddr=), which mount.nfs would
# add. NFSv4 only: no rpcbind, mountd or lockd needed. See
# Documentation/ulp-testing.rst.
NFS_PORT=20049
EXP=/srv/nfs
MNT=/mnt/nfs
NFSD=/proc/fs/nfsd
RPC=/proc/net/rpc
# the auth_domain the client's address maps to (any name)
NFS_DOM=softhca-test
# nfsd's legacy NFSv4 client recovery directory (nfs4_recoverydir): with
# it nfsd tracks its clients without nfsdcld, and its grace period can be
# ended at once through v4_end_grace
NFS_RECDIR=/var/lib/nfs/v4recovery
# export flags (include/uapi/linux/nfsd/export.h): INSECURE_PORT 0x2,
# NOSUBTREECHECK 0x400, FSID 0x2000 (tmpfs has no device number: the
# export is known by its fsid, 0, which makes it the NFSv4 root)
NFS_FLAGS=$((0x2 | 0x400 | 0x2000))
# the cache entries' expiry, in seconds since the epoch: never
NFS_NEVER=2147483647

# wr FILE LINE: write LINE to a control file (bounded, as every step)
wr() {
	echo "  \$ echo \"$2\" > $1"
	# shellcheck disable=SC2016
	timeout -k 5 30 sh -c 'printf "%s\n" "$2" >"$1"' wr "$1" "$2"
	_rc=$?
	[ $_rc -eq 0 ] || echo "    (exit status $_rc)"
	return $_rc
}

# nfs_ulp_qps: the local QP numbers of rpcrdma's connected rdma_cm IDs
nfs_ulp_qps() {
	rdma res show cm_id 2>/dev/null |
		awk '/comm \[rpcrdma\]/ && / state CONNECT / {
			for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }'
}

no_ulp_cm_id() { ! rdma res show cm_id 2>/dev/null | grep -q 'comm \[rpcrdma\]'; }
mounted() { grep -q " $MNT nfs4 " /proc/mounts; }

# same DESC A B: files A and B are equal (cmp, bounded)
same() {
	if timeout -k 5 60 cmp -s "$2" "$3"; then
		ok "$1 equal"
	else
		bad "$1 differ"
	fi
}

# nfs_modules: rpcrdma (svcrdma and xprtrdma), nfsd, the NFSv4 client
nfs_modules() {
	must "rpcrdma (svcrdma and xprtrdma)" modprobe rpcrdma
	must "nfsd" modprobe nfsd
	must "nfsv4 client" modprobe nfsv4
}

# nfs_server_start MIB ADDR: nfsd on rdma $NFS_PORT exporting $EXP, a
# tmpfs with room for two files of MIB MiB, to the client at ADDR
nfs_server_start() {
	mkdir -p "$EXP" "$MNT" "$NFS_RECDIR"
	must "tmpfs on $EXP" run mount -t tmpfs -o size=$(($1 * 2 + 16))m nfsexport "$EXP"
	must "nfsd control filesystem on $NFSD" run mount -t nfsd nfsd "$NFSD"
	must "NFSv4.x only" wr "$NFSD/versions" "-3 +4 +4.1 +4.2"
	must "an RPC-over-RDMA listener on port $NFS_PORT" wr "$NFSD/portlist" "rdma $NFS_PORT"
	must "2 nfsd threads" wr "$NFSD/threads" 2
	run cat "$NFSD/portlist" "$NFSD/versions" "$NFSD/threads"
	if wait_for 10 cm_listening $NFS_PORT; then
		ok "an rdma_cm ID listens on port $NFS_PORT"
	else
		bad "nobody listens on port $NFS_PORT"
		run rdma res show cm_id
	fi
	# The export, as rpc.mountd would answer nfsd's upcalls: the
	# client's address belongs to $NFS_DOM; $NFS_DOM may use $EXP; fsid
	# 0 (FSID_NUM, type 1) is $EXP.
	must "auth.unix.ip: $2 is $NFS_DOM" wr "$RPC/auth.unix.ip/channel" \
		"nfsd $2 $NFS_NEVER $NFS_DOM"
	must "nfsd.export: $NFS_DOM may use $EXP" wr "$RPC/nfsd.export/channel" \
		"$NFS_DOM $EXP $NFS_NEVER $NFS_FLAGS 65534 65534 0"
	must "nfsd.fh: fsid 0 is $EXP" wr "$RPC/nfsd.fh/channel" \
		"$NFS_DOM 1 \\x00000000 $NFS_NEVER $EXP"
	# No client of an earlier instance can reclaim state: end the grace
	# period now rather than waiting 90 s before the first OPEN.
	must "NFSv4 grace period ended" wr "$NFSD/v4_end_grace" Y
}

# nfs_mount ADDR: mount the server at ADDR on $MNT over RDMA, the client
# at ADDR too; rpcrdma's QPs (client and server) are connected RC QPs
nfs_mount() {
	_o=vers=4.2,proto=rdma,port=$NFS_PORT,addr=$1,clientaddr=$1
	must "mount -t nfs4 -o $_o $1:/ $MNT" \
		run_t 60 mount -t nfs4 -o "$_o" "$1:/" "$MNT"
	run grep " $MNT " /proc/mounts
	if mounted && grep " $MNT nfs4 " /proc/mounts | grep -q ',proto=rdma,'; then
		ok "/proc/mounts: nfs4 with proto=rdma"
	else
		bad "$MNT is not an nfs4 mount with proto=rdma"
	fi
	run rdma res show cm_id
	run rdma res show qp
	_nq=0
	for _q in $(nfs_ulp_qps); do
		if rdma res show qp lqpn "$_q" 2>/dev/null | grep -q 'type RC state RTS'; then
			_nq=$((_nq + 1))
		else
			bad "rpcrdma's QP $_q is not an RC QP in RTS"
		fi
	done
	if [ $_nq -ge 2 ]; then
		ok "$_nq RC QPs in RTS belong to rpcrdma's connected rdma_cm IDs (client and server)"
	else
		bad "rpcrdma holds $_nq connected RC QPs, expected at least 2"
	fi
}

# nfs_data MIB: MIB MiB of random data written through the mount with
# O_DIRECT and through the page cache, read back through the mount
# (O_DIRECT, and after drop_caches) and compared there and in the
# server's $EXP
nfs_data() {
	dd if=/dev/urandom of=/tmp/pat bs=1M count="$1" 2>/dev/null
	run_t 120 dd if=/tmp/pat of="$MNT/direct" bs=1M oflag=direct conv=fsync
	run_t 120 dd if="$MNT/direct" of=/tmp/back bs=1M iflag=direct
	same "$1 MiB written and read back with O_DIRECT through the mount" /tmp/pat /tmp/back
	same "$1 MiB in the server's $EXP/direct" /tmp/pat "$EXP/direct"
	dd if=/dev/urandom of=/tmp/pat2 bs=1M count="$1" 2>/dev/null
	run_t 120 dd if=/tmp/pat2 of="$MNT/cached" bs=64k conv=fsync
	echo 3 >/proc/sys/vm/drop_caches
	same "$1 MiB written through the page cache, read back after drop_caches," \
		/tmp/pat2 "$MNT/cached"
	same "$1 MiB in the server's $EXP/cached" /tmp/pat2 "$EXP/cached"
	rm -f /tmp/back /tmp/pat /tmp/pat2
}

# nfs_chunks MIB: the client's RPC-over-RDMA counters
# (xprt_rdma_print_stats) show the payloads moved in RDMA chunks: read
# chunks (WRITE payloads the server pulled with RDMA READ), write chunks
# and the bytes the server wrote into them with RDMA WRITE (READ
# payloads: the two files of nfs_data MIB, once each), no reply the
# client could not parse
nfs_chunks() {
	run grep 'xprt:' /proc/self/mountstats
	# shellcheck disable=SC2046
	set -- "$1" $(awk -v m="$MNT" '$1 == "device" { on = ($5 == m) }
		on && $1 == "xprt:" && $2 == "rdma" { print $13, $14, $17, $22; exit }' \
		/proc/self/mountstats)
	if [ $# -ne 5 ]; then
		bad "no rdma transport statistics for $MNT in /proc/self/mountstats"
	elif [ "$2" -gt 0 ] && [ "$3" -gt 0 ] &&
		[ "$4" -ge $(($1 * 2 * 1048576)) ] && [ "$5" -eq 0 ]; then
		ok "xprtrdma: $2 read chunks, $3 write chunks, $4 bytes written by the server with RDMA WRITE, no bad reply"
	else
		bad "xprtrdma: $2 read chunks, $3 write chunks, $4 bytes by RDMA WRITE (expected >= $(($1 * 2)) MiB), $5 bad replies"
	fi
}

nfs_server_stop() {
	_r=0
	if [ -e "$NFSD/threads" ]; then
		wr "$NFSD/threads" 0 || _r=1
		for _c in nfsd.fh nfsd.export auth.unix.ip; do
			wr "$RPC/$_c/flush" "$(date +%s)" || _r=1
		done
	fi
	! grep -q " $NFSD " /proc/mounts || run umount "$NFSD" || _r=1
	! grep -q " $EXP " /proc/mounts || run umount "$EXP" || _r=1
	rm -rf /var/lib/nfs
	return $_r
}

# nfs_stop: unmount, stop nfsd, and no rdma_cm ID of rpcrdma is left;
# unload the modules; the kernel did not complain
nfs_stop() {
	must "umount $MNT" run_t 60 umount "$MNT"
	! mounted || bad "$MNT still mounted"
	must "nfsd stopped, its caches flushed, $EXP unmounted" nfs_server_stop
	if wait_for 10 no_ulp_cm_id; then
		ok "no rdma_cm ID of rpcrdma left (connections and listeners gone)"
	else
		bad "rpcrdma still holds rdma_cm IDs:"
		run rdma res show cm_id
	fi
	run rmmod nfsv4 nfs nfsd rpcrdma
	kernel_quiet
}

_vm_exit() {
	_rc=$?
	trap - EXIT
	if ! vm_cleanup; then
		echo "  FAIL - cleanup at the end of the test failed (see above)"
		FAILS=$((FAILS + 1))
	fi
	[ $FAILS -eq 0 ] || [ $_rc -ne 0 ] || _rc=1
	if [ $_rc -eq 0 ]; then
		echo "  # result: all checks passed"
	else
		echo "  # result: $FAILS check(s) failed"
	fi
	exit $_rc
}
trap _vm_exit EXIT
trap 'echo "  # interrupted (timeout?)"; exit 124' INT TERM
