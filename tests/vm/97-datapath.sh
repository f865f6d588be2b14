#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The RC data path end to end through libibverbs: shca_qp (every opcode
# with byte-exact checks, inline, gather/scatter, signaling, fences,
# completion channels, every error completion and the flush behind it,
# the QP state machine, the extended verbs: ibv_wr_* batches,
# ibv_start_poll, parent domains with allocators, ODP MRs under RC and
# UC QPs) between softhca0
# (eth0) and softhca1 (eth1) and in loopback on softhca0; then
# rdma-core's own ibv_rc_pingpong, server and client in this guest on
# the two devices, polling, with completion events and with ibv_wr_*
# (-N), with ODP MRs (-o, -P, -O), the other pingpongs, and perftest's
# bandwidth tools (SEND, WRITE, READ, atomics). Afterwards nothing is
# left in `rdma res` and the pinned-page counters are back at their
# baseline.
#
# DATAPATH_ITERS (default 200) sets ibv_rc_pingpong's iterations.
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
D1=${DRV_TYPE}1
ITERS=${DATAPATH_ITERS:-200}
need_progs shca_qp

vm_setup "$D0" "$D1"
# rdma_rxe cannot reach another local device's address (the route goes
# through lo, which rxe does not receive on): only loopback for it
CROSS=1
[ "$DRV_TYPE" != rxe ] || CROSS=0

# gid_index DEV: a link-local RoCE v2 GID of DEV, else any RoCE v2 GID.
# (The core resolves the destination MAC of any other GID through the IP
# route, which between two netdevs of one host leads through lo: modify_qp
# to RTR then fails with ETIMEDOUT.)
gid_index() {
	_best=
	for _f in "$IB/$1"/ports/1/gids/*; do
		_i=${_f##*/}
		_g=$(cat "$_f" 2>/dev/null)
		[ "$(cat "$IB/$1/ports/1/gid_attrs/types/$_i" 2>/dev/null)" = "RoCE v2" ] || continue
		case $_g in
		0000:0000:0000:0000:0000:0000:0000:0000) continue ;;
		fe80:*) echo "$_i"; return 0 ;;
		esac
		[ -n "$_best" ] || _best=$_i
	done
	[ -n "$_best" ] && echo "$_best"
}

# shca_qp_run A B: the conformance program; its lines are checks of this test
shca_qp_run() {
	echo "  \$ shca_qp $1 $2"
	timeout -k 5 100 shca_qp "$1" "$2" >/tmp/shca_qp.out 2>&1
	_rc=$?
	sed 's/^/    /' /tmp/shca_qp.out
	_n=$(grep -c '^  ok - ' /tmp/shca_qp.out)
	_f=$(grep -c '^  FAIL - ' /tmp/shca_qp.out)
	if [ $_rc -eq 0 ]; then
		ok "shca_qp $1 $2: $_n checks passed"
	else
		bad "shca_qp $1 $2: exit status $_rc, $_f of $((_n + _f)) checks failed"
	fi
}

if [ $CROSS = 1 ]; then
	title "conformance: $D0 <-> $D1"
	shca_qp_run "$D0" "$D1"
else
	info "$DRV_TYPE: no traffic between two devices of one host; loopback only"
fi
title "conformance: loopback on $D0"
shca_qp_run "$D0" "$D0"

# ibv_rc_pingpong and ibv_ud_pingpong listen on TCP port 18515 (0x4853)
pp_listening() { grep -q ':4853 00000000:0000 0A' /proc/net/tcp /proc/net/tcp6 2>/dev/null; }

# pingpong DESC SERVER_ARGS -- CLIENT_ARGS: $PP (default ibv_rc_pingpong)
# as server and as client
PP=ibv_rc_pingpong
pingpong() {
	_desc=$1
	shift
	_sargs=
	while [ "$1" != -- ]; do _sargs="$_sargs $1"; shift; done
	shift
	echo "  \$ $PP$_sargs &"
	# shellcheck disable=SC2086
	timeout -k 5 60 $PP $_sargs >/tmp/pp_srv.out 2>&1 &
	_spid=$!
	if ! wait_for 10 pp_listening; then
		bad "$_desc: the server does not listen"
		wait $_spid
		sed 's/^/    /' /tmp/pp_srv.out
		return
	fi
	run_t 60 $PP "$@"
	_crc=$?
	wait $_spid
	_src=$?
	sed 's/^/    server: /' /tmp/pp_srv.out
	_re=${PP_OK_RE:-"(^| )$ITERS iters in "}
	if [ $_crc -eq 0 ] && [ $_src -eq 0 ] &&
		run_out | grep -Eq "$_re" && grep -Eq "$_re" /tmp/pp_srv.out; then
		ok "$_desc: $ITERS iterations both ways"
	else
		bad "$_desc: client exit status $_crc, server $_src"
	fi
}

g0=$(gid_index "$D0")
g1=$(gid_index "$D1")
info "RoCE v2 GID index: $D0 $g0, $D1 $g1"
if [ -z "$g0" ] || [ -z "$g1" ]; then
	bad "no RoCE v2 GID on $D0 ('$g0') or $D1 ('$g1')"
else
	c=$D1
	gc=$g1
	if [ $CROSS = 0 ]; then
		c=$D0
		gc=$g0
	fi
	title "ibv_rc_pingpong $D0 (server) <-> $c (client)"
	pingpong "ibv_rc_pingpong, polling" -d "$D0" -g "$g0" -n "$ITERS" -- \
		-d "$c" -g "$gc" -n "$ITERS" localhost
	pingpong "ibv_rc_pingpong -e (completion events)" -d "$D0" -g "$g0" -n "$ITERS" -e -- \
		-d "$c" -g "$gc" -n "$ITERS" -e localhost
	pingpong "ibv_rc_pingpong -s 65536 (64 KiB messages)" -d "$D0" -g "$g0" -n "$ITERS" -s 65536 -- \
		-d "$c" -g "$gc" -n "$ITERS" -s 65536 localhost
	pingpong "ibv_rc_pingpong -N (ibv_wr_* work requests of ibv_create_qp_ex)" \
		-d "$D0" -g "$g0" -n "$ITERS" -N -- -d "$c" -g "$gc" -n "$ITERS" -N localhost
	[ $CROSS = 0 ] || pingpong "ibv_rc_pingpong on one device" -d "$D0" -g "$g0" -n "$ITERS" -- \
		-d "$D0" -g "$g0" -n "$ITERS" localhost
	# On-demand paging: the buffers registered without pinning, over
	# their range (-o, prefetched with ibv_advise_mr: -P) or over the
	# whole address space (implicit ODP, -O), on both sides. (A device
	# without ODP, rxe on 6.12, skips them.)
	ODP=0
	ibv_devinfo -v -d "$D0" | grep -q ODP_SUPPORT_IMPLICIT && ODP=1
	[ $ODP = 1 ] || info "$D0 has no on-demand paging: no ODP runs"
	[ $ODP = 0 ] || pingpong "ibv_rc_pingpong -o (ODP MRs)" -d "$D0" -g "$g0" -n "$ITERS" -o -- \
		-d "$c" -g "$gc" -n "$ITERS" -o localhost
	[ $ODP = 0 ] || pingpong "ibv_rc_pingpong -o -P (ODP MRs prefetched by ibv_advise_mr)" \
		-d "$D0" -g "$g0" -n "$ITERS" -o -P -- -d "$c" -g "$gc" -n "$ITERS" -o -P localhost
	[ $ODP = 0 ] || pingpong "ibv_rc_pingpong -O (implicit ODP: the whole address space)" \
		-d "$D0" -g "$g0" -n "$ITERS" -O -s 65536 -- -d "$c" -g "$gc" -n "$ITERS" -O -s 65536 localhost
	# UD: datagrams with address handles; 1000 bytes fit the 1024 MTU
	title "ibv_ud_pingpong $D0 (server) <-> $c (client)"
	PP=ibv_ud_pingpong
	pingpong "ibv_ud_pingpong" -d "$D0" -g "$g0" -n "$ITERS" -s 1000 -- \
		-d "$c" -g "$gc" -n "$ITERS" -s 1000 localhost
	pingpong "ibv_ud_pingpong -e (completion events)" -d "$D0" -g "$g0" -n "$ITERS" -s 1000 -e -- \
		-d "$c" -g "$gc" -n "$ITERS" -s 1000 -e localhost
	[ $CROSS = 0 ] || pingpong "ibv_ud_pingpong on one device" -d "$D0" -g "$g0" -n "$ITERS" -s 1000 -- \
		-d "$D0" -g "$g0" -n "$ITERS" -s 1000 localhost
	# UC: SENDs without acknowledgements (lossless here: receives are posted)
	title "ibv_uc_pingpong $D0 (server) <-> $c (client)"
	PP=ibv_uc_pingpong
	pingpong "ibv_uc_pingpong" -d "$D0" -g "$g0" -n "$ITERS" -- \
		-d "$c" -g "$gc" -n "$ITERS" localhost
	# SRQ: 16 RC QPs on each side take their receives from one SRQ
	title "ibv_srq_pingpong $D0 (server) <-> $c (client)"
	PP=ibv_srq_pingpong
	pingpong "ibv_srq_pingpong (16 QPs, one SRQ each side)" -d "$D0" -g "$g0" -n "$ITERS" -- \
		-d "$c" -g "$gc" -n "$ITERS" localhost
	pingpong "ibv_srq_pingpong -e (completion events)" -d "$D0" -g "$g0" -n "$ITERS" -e -- \
		-d "$c" -g "$gc" -n "$ITERS" -e localhost
	# perftest's bandwidth tools, every opcode (perftest keeps ibv_wr_*
	# for the vendors it lists); a row of results on both sides is success
	title "perftest, $D0 (server) <-> $c (client)"
	PP_OK_RE='^ *[0-9]+ +[0-9]+ +[0-9.]+ +[0-9.]+'
	for PP in ib_send_bw ib_write_bw ib_read_bw ib_atomic_bw; do
		if ! command -v $PP >/dev/null; then
			info "$PP is not in this guest"
			continue
		fi
		pingpong "$PP -n 200" -d "$D0" -x "$g0" -n 200 -F -- \
			-d "$c" -x "$gc" -n 200 -F localhost
	done
	# with its buffers registered for on-demand paging (--odp)
	for PP in ib_write_bw ib_read_bw; do
		if [ $ODP = 0 ] || ! command -v $PP >/dev/null; then
			continue
		fi
		pingpong "$PP --odp -n 200" -d "$D0" -x "$g0" -n 200 -F --odp -- \
			-d "$c" -x "$gc" -n 200 -F --odp localhost
	done
	PP_OK_RE=
	PP=ibv_rc_pingpong
fi

title "nothing left behind"
run rdma res show qp
vm_leftovers
