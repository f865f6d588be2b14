#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# 88-nfs-rdma's NFS over RDMA with every request on the wire: softhca's
# force_wire is set before nfsd listens and the client mounts, so
# rpcrdma's RC QPs on both sides, and the rdma_cm MADs of the GSI QP,
# exchange RoCE v2 packets through the IP stack instead of in memory.
# Server and client are on softhca0 (eth0, 10.0.2.15), as in 88-nfs-rdma:
# the packets go through lo (see 87-nvme-rdma-wire).
#
# - clean: the data checks of 88-nfs-rdma (O_DIRECT and page cache, read
#   back through the mount and compared in the export), the payloads in
#   RDMA chunks; the device's port counters grew both ways, with no ICRC
#   or send error, by at least the data, and lo carried the packets;
# - netem dropping 1% of lo's packets: the same data checks; the
#   requesters retransmitted, and the RPC layer saw no timeout or
#   reconnection: the transport recovered every loss by itself.
#
# NFS_WIRE_MIB (default 4) sets the MiB of data each check writes.
# vm-test-timeout: 180
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
A0=10.0.2.15
MIB=${NFS_WIRE_MIB:-4}
[ "$DRV_TYPE" = softhca ] ||
	{ info "softhca only (force_wire: rdma_rxe is always on its wire)"; exit 0; }

vm_setup "$D0"
dmesg -c >/dev/null
nfs_modules
must "force_wire: connections made from now on use RoCE v2 packets" force_wire Y

# rpc_recovered: the RPC client neither timed out nor reconnected since
# klog_mark (xprtrdma logs its reconnections, the NFS client a server
# that does not respond)
rpc_recovered() {
	klog_lacks "no RPC timeout or reconnection" \
		'not responding|timed out|rpcrdma.*(disconnect|closed|reconnect|error)'
}

title "server: nfsd on rdma $A0:$NFS_PORT exporting $EXP (tmpfs), on the wire"
nfs_server_start "$MIB" "$A0"

title "client: mount, data, on the wire"
wire_mark "$D0"
klog_mark
t0=$(date +%s)
nfs_mount "$A0"
nfs_data "$MIB"
t1=$(date +%s)
info "mount, $MIB MiB twice each way: $((t1 - t0)) s"
rpc_recovered
run rdma statistic show link "$D0/1"
wire_traffic "$D0"
wire_through_lo "$D0" $((MIB * 4 * 1048576)) "the $((MIB * 4)) MiB written and read"
info "recovery on a clean wire: $(wire_recovery "$D0")"

title "1% of lo's packets lost (netem)"
wire_mark "$D0"
klog_mark
t0=$(date +%s)
must "netem: loss 1% on lo" lo_netem loss 1%
lo_watchdog 60
nfs_data "$MIB"
lo_watchdog_end
t1=$(date +%s)
info "$MIB MiB twice each way under loss: $((t1 - t0)) s"
rpc_recovered
wire_traffic "$D0"
wire_retransmitted "$D0"
nfs_chunks $((MIB * 2))

title "unmount and stop"
nfs_stop
# res_back: softhca0 holds what it held at vm_setup (its GSI QP's objects)
res_back() { [ "$(res_of "$D0")" = "$(res0 "$D0")" ]; }
wait_for 10 res_back
vm_leftovers 5
