#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# 87-nvme-rdma's NVMe over Fabrics ULPs with every request on the wire:
# softhca's force_wire is set before the connections are made, so the
# host's and the target's RC QPs, and the rdma_cm MADs of the GSI QP,
# exchange RoCE v2 packets through the IP stack instead of in memory. As
# in 87-nvme-rdma both ends are on softhca0 (eth0, 10.0.2.15): a packet
# to the guest's own address of the source GID's netdev goes through lo,
# and softhca's receive path hands it to the device that owns its
# destination address. (Two devices on eth0 and eth1 would not do: a
# packet from eth0's address to eth1's is routed out of eth0, the source
# GID's netdev, onto a QEMU network where eth1 is not.)
#
# - clean: random data written and read back through the host with
#   O_DIRECT, compared there and on the backing device, many 4 KiB
#   writes; the device's port counters grew both ways, with no ICRC or
#   send error, and lo carried at least as many packets as it sent;
# - netem dropping 1% of lo's packets (every packet, request or
#   response, crosses lo once): the same checks, the
#   requesters retransmitted (retransmits > 0), and nvme-rdma saw no I/O
#   timeout, error recovery or reconnect: the transport recovered every
#   loss by itself.
#
# The connections and the disconnections are made without loss: a lost
# CM MAD waits out the CM's response timeout (seconds), which would only
# make the test slow, and tests the MAD layer rather than the transport.
#
# NVME_WIRE_MIB (default 4) sets the MiB of data each check writes.
# vm-test-timeout: 180
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
A0=10.0.2.15
MIB=${NVME_WIRE_MIB:-4}
NQN=softhca-wire
[ "$DRV_TYPE" = softhca ] ||
	{ info "softhca only (force_wire: rdma_rxe is always on its wire)"; exit 0; }

vm_setup "$D0"
# A task blocked for 20 s is reported (the default, 120 s, is beyond the test).
[ ! -w /proc/sys/kernel/hung_task_timeout_secs ] ||
	echo 20 >/proc/sys/kernel/hung_task_timeout_secs
dmesg -c >/dev/null
nvme_modules
must "force_wire: connections made from now on use RoCE v2 packets" force_wire Y

# ulp_qps: the host's queues and the target's are connected RC QPs of
# $D0 (an admin and an I/O queue at least, each with its two ends)
ulp_qps() {
	run rdma res show qp link "$D0/1"
	_n=$(rdma res show qp link "$D0/1" 2>/dev/null | grep -c 'type RC state RTS .*comm \[rdma_cm\]')
	if [ "$_n" -ge 4 ]; then
		ok "$_n RC QPs of rdma_cm IDs in RTS on $D0 (the queues' two ends)"
	else
		bad "expected at least 4 RC QPs in RTS on $D0, saw $_n"
	fi
}

# nvme_recovered: nvme-rdma saw no I/O timeout and did not recover or
# reconnect since klog_mark
nvme_recovered() {
	klog_lacks "no nvme I/O timeout, error recovery or reconnect" \
		'nvme.*([Tt]imeout|timed out|[Rr]econnect|error recovery|resetting)'
}

title "target and host on $D0 ($A0), on the wire"
must "nvmet subsystem $NQN on rdma $A0:4420" nvmet_setup
wait_for 10 cm_listening 4420 || bad "nvmet-rdma does not listen on 4420"
wire_mark "$D0"
klog_mark
t0=$(date +%s)
connect || die "no controller"
ulp_qps
data_check "$MIB" 0
small_check 77777
disconnect
t1=$(date +%s)
info "connect, $MIB MiB each way, 256 writes of 4 KiB, disconnect: $((t1 - t0)) s"
nvme_recovered
run rdma statistic show link "$D0/1"
wire_traffic "$D0"
wire_through_lo "$D0" $((MIB * 2 * 1048576)) "the $((MIB * 2)) MiB written and read"
info "recovery on a clean wire: $(wire_recovery "$D0")"

if [ "${VMT_WIRE_LOSS:-1}" = 1 ]; then
	title "1% of lo's packets lost (netem)"
	connect || die "no controller"
	wire_mark "$D0"
	klog_mark
	t0=$(date +%s)
	must "netem: loss 1% on lo" lo_netem loss 1%
	lo_watchdog 60
	data_check "$MIB" 100
	small_check 99999
	lo_watchdog_end
	t1=$(date +%s)
	info "$MIB MiB each way and 256 writes of 4 KiB under loss: $((t1 - t0)) s"
	nvme_recovered
	wire_traffic "$D0"
	wire_retransmitted "$D0"
	disconnect
	kernel_quiet
else
	info "the loss phase is off (VMT_WIRE_LOSS=0)"
fi

title "cleanup"
nvmet_teardown
run rmmod nvme_rdma nvmet_rdma
run rmmod null_blk
# The CQs of nvmet-rdma come from the device's CQ pool (ib_cq_pool_get),
# which the core keeps until the device goes away
expect_pins 5
nocq() { sed 's/ cq=[0-9]*//'; }
expect_eq "rdma res of $D0 (but the CQ pool)" "$(res0 "$D0" | nocq)" "$(res_of "$D0" | nocq)"
