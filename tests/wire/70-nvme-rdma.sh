#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's NVMe over Fabrics ULPs across the link: guest B is the
# target (nvmet-rdma serving a memory-backed null_blk disk at its IPv4
# address, port 4420), guest A the host (nvme-rdma). Every capsule, data
# transfer (the target's RDMA READs and WRITEs into the host's FRWR-
# registered buffers) and CM MAD crosses the link as RoCE v2.
#  - clean link: random data written through the host with O_DIRECT,
#    read back and compared on the host; its checksum sent to the target,
#    which reads the same range of its backing disk and compares; many
#    4 KiB writes the same way;
#  - 1% of each guest's packets lost (netem, both directions) while the
#    same checks run: the transports recover every loss by themselves, so
#    nvme-rdma must see no I/O timeout, error recovery or reconnect (the
#    connection itself is made on a clean link: a lost CM MAD waits out
#    the CM's timeout, which tests the MAD layer, not the transport).
# NVME_WIRE_MIB (default 4) sets the MiB each check writes.
# shellcheck disable=SC1091
. /tests/lib.sh

NQN=softhca-wire-pair
MIB=${NVME_WIRE_MIB:-4}

wire_setup

# target_check TAG: the target compares what the host says it wrote
# ("TAG MD5 SKIP COUNT BS") with its backing disk
target_check() {
	_tc=$(wire_wait 240 "$1") || { bad "$1: no word from the host"; return 1; }
	# shellcheck disable=SC2086
	set -- "$1" $_tc
	_sum=$(dd if=/dev/nullb0 bs="$5" skip="$3" count="$4" iflag=direct 2>/dev/null | md5sum)
	if [ "${_sum%% *}" = "$2" ]; then
		ok "$1: the $4 blocks of $5 bytes the host wrote at block $3 are on the target's disk"
	else
		bad "$1: the target's disk differs from what the host wrote (block $3, $4 of $5 bytes)"
	fi
	wire_send "$1 checked"
}

# host_write TAG BS COUNT SKIP [PER_BLOCK]: random data written through
# nvme-rdma (in one dd, or PER_BLOCK: COUNT writes of one block), read
# back and compared here, then checked by the target
host_write() {
	dd if=/dev/urandom of=/tmp/pat bs="$2" count="$3" 2>/dev/null
	if [ -n "${5:-}" ]; then
		run_t 120 dd if=/tmp/pat of=/dev/nvme0n1 bs="$2" seek="$4" oflag=direct
	else
		run_t 120 dd if=/tmp/pat of=/dev/nvme0n1 bs="$2" seek="$4" oflag=direct conv=fsync
	fi
	run_t 120 dd if=/dev/nvme0n1 of=/tmp/back bs="$2" skip="$4" count="$3" iflag=direct
	if cmp -s /tmp/pat /tmp/back; then
		ok "$1: $3 blocks of $2 bytes at block $4 read back equal"
	else
		bad "$1: $3 blocks of $2 bytes at block $4 read back differ"
	fi
	_sum=$(md5sum </tmp/pat)
	wire_send "$1" "${_sum%% *}" "$4" "$3" "$2"
	wire_wait 60 "$1 checked" >/dev/null || bad "$1: the target did not check"
	rm -f /tmp/pat /tmp/back
}

# nvme_clean: nvme-rdma saw no I/O timeout and did not recover or
# reconnect since klog_mark
nvme_clean() {
	klog_lacks "no nvme I/O timeout, error recovery or reconnect" \
		'nvme.*([Tt]imeout|timed out|[Rr]econnect|error recovery|resetting)'
}

if [ "$WIRE_ROLE" = B ]; then
	title "nvmet-rdma target on $WIRE_DEV ($WIRE_IP:4420)"
	nvme_modules
	if nvmet_setup "$WIRE_IP" && wait_for 10 cm_listening 4420; then
		ok "nvmet subsystem $NQN listening on rdma $WIRE_IP:4420"
		wire_send target ready
	else
		wire_send target fail
		die "nvmet-rdma does not listen on $WIRE_IP:4420"
	fi
	target_check data-clean
	target_check small-clean
	wire_wait 60 loss >/dev/null && must "netem loss 1% on $WIRE_NETDEV" wire_netem loss 1%
	wire_send loss on
	target_check data-loss
	target_check small-loss
	wire_netem off
	wire_wait 60 host finished >/dev/null || bad "the host did not finish"
	nvmet_teardown
	run rmmod nvmet_rdma nvmet
	run rmmod null_blk
else
	title "nvme-rdma host on $WIRE_DEV, target at $PEER_IP:4420"
	must "nvme-rdma" modprobe nvme-rdma
	wire_wait 60 target ready >/dev/null || die "the target is not ready"
	klog_mark
	TADDR=$PEER_IP connect || die "no controller"
	run rdma res show qp link "$WIRE_DEV/1"
	host_write data-clean 1M "$MIB" 0
	host_write small-clean 4k 256 77777 per-block
	nvme_clean

	title "1% of the packets lost each way (netem)"
	klog_mark
	wire_send loss
	must "netem loss 1% on $WIRE_NETDEV" wire_netem loss 1%
	wire_wait 60 loss on >/dev/null || bad "the target did not start its netem"
	t0=$(date +%s)
	host_write data-loss 1M "$MIB" 64
	host_write small-loss 4k 256 99999 per-block
	info "$MIB MiB and 256 writes of 4 KiB under loss: $(($(date +%s) - t0)) s"
	wire_netem off
	nvme_clean
	disconnect
	wire_send host finished
	run rmmod nvme_rdma
fi
kernel_quiet
# nvme-rdma and nvmet-rdma take their CQs from the core's per-device CQ
# pool, which keeps them until the device goes: everything else must be
# back
expect_pins 5
expect_eq "rdma res of $WIRE_DEV but the core's CQ pool" \
	"$(res0 "$WIRE_DEV" | sed 's/ cq=[0-9]*//')" \
	"$(res_of "$WIRE_DEV" | sed 's/ cq=[0-9]*//')"
