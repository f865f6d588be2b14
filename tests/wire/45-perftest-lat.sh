#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# perftest latency across the link, B serving, A connecting: ib_write_lat
# and ib_send_lat, with -x at the RoCE v2 IPv4 GID (index from sysfs,
# wire_gid) and through rdma_cm (-R); 30 iterations each (busy polling
# under TCG: tens of milliseconds per round trip).
# -F everywhere: perftest estimates the CPU clock for its report, and on a
# loaded TCG host the estimate fails ("Correlation coefficient r^2 < 0.9",
# "Can't produce a report", exit status 1) though the test itself went
# well; -F reports anyway (the figures are only informative here).
# perftest 4.5 (Debian 12) with -R first connects through rdma_cm for its
# own exchange, then listens again for the test's QP: a client that comes
# back before that listen is rejected (IB_CM_REJ_INVALID_SERVICE_ID, "RDMA
# CM event error: RDMA_CM_EVENT_REJECTED; error: 8"; seen under load with
# rdma_rxe on both sides). Later perftest retries that connect
# (retry_rdma_connect); Debian's 4.5-0.17 tries 10 times in 100 ms steps
# but its client crashes (SIGSEGV) in that error path. As in
# 40-perftest-bw (which explains it), the client's rdma_cm MADs leave
# late during -R steps (wire_cm_late), and a REJ runs the step again, up
# to five times (WIRE_RETRY, WIRE_TRIES).
# shellcheck disable=SC1091
. /tests/lib.sh

wire_setup
G4=$(wire_gid 4)
A_DRIVER=$WIRE_DRIVER B_DRIVER=$PEER_DRIVER
[ "$WIRE_ROLE" = A ] || { A_DRIVER=$PEER_DRIVER B_DRIVER=$WIRE_DRIVER; }

port=18660
for prog in ib_write_lat ib_send_lat; do
	title "$prog, GID index $G4"
	port=$((port + 1))
	wire_pp "$prog" 20 "tcp:$port" $prog -F -d "$WIRE_DEV" -x "$G4" -p $port -n 30
	title "$prog -R (rdma_cm)"
	port=$((port + 1))
	# shellcheck disable=SC2034  # read by wire_pp (lib.sh)
	WIRE_RETRY="RDMA_CM_EVENT_REJECTED; error: 8" WIRE_TRIES=5
	# With rdma_rxe as the client and softhca as the server, on a loaded
	# host the client's test connection met the race above three times
	# in a row (ib_write_lat; rdma res showed the server's second listen
	# within the same second): softhca serves rdma_cm to rdma_rxe in
	# 30-rping and in every -R step of 40-perftest-bw, so here the rxe
	# guest serves instead (see Documentation/testing.rst).
	# shellcheck disable=SC2034  # read by wire_pp (lib.sh)
	[ "$A_DRIVER" != rxe ] || [ "$B_DRIVER" != softhca ] || WIRE_SERVER=A
	wire_cm_late on
	wire_pp "$prog-R" 20 "cm:$port" $prog -R -F -d "$WIRE_DEV" -p $port -n 30
	wire_cm_late off "$prog-R"
	unset WIRE_RETRY WIRE_TRIES WIRE_SERVER
done

vm_leftovers 5
