#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The kernel's NVMe over Fabrics ULPs over softhca0, nothing of ours on
# either side: the nvmet-rdma target serves a memory-backed null_blk
# device, the nvme-rdma host connects to it through rdma_cm
# (/dev/nvme-fabrics, as nvme-cli does). Random data written with
# O_DIRECT is read back and compared through the host and on the backing
# device; then a controller reset, polled I/O on poll queues
# (nr_poll_queues: IB_POLL_DIRECT CQs), the target on SRQs
# (nvmet-rdma use_srq=1), and device removal under a connected
# controller: `rdma link delete`, netdev removal and `rmmod softhca` go through
# the core's removal (RDMA_CM_EVENT_DEVICE_REMOVAL), the ULPs tear down,
# nothing hangs and no task is reported blocked.
#
# NVME_MIB (default 32) sets the MiB of data each check writes.
# vm-test-timeout: 240
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
A0=10.0.2.15
MIB=${NVME_MIB:-32}
NQN=softhca-test
need_progs shca_blkpoll

vm_setup "$D0"
# A task blocked for 20 s is reported (the default, 120 s, is beyond the test).
[ ! -w /proc/sys/kernel/hung_task_timeout_secs ] ||
	echo 20 >/proc/sys/kernel/hung_task_timeout_secs
dmesg -c >/dev/null

nvme_modules

title "target and host"
must "nvmet subsystem $NQN on rdma $A0:4420" nvmet_setup
connect || die "no controller"
run rdma res show qp
data_check "$MIB" 0
small_check 77777

title "controller reset"
echo 1 >"/sys/class/nvme/$(ctrl)/reset_controller"
sleep 1
if wait_for 30 ctrl_live; then
	ok "controller live again after reset"
	run_t 60 dd if=/dev/nvme0n1 of=/tmp/back bs=1M count="$MIB" iflag=direct
	if cmp -s /tmp/pat /tmp/back; then
		ok "data written before the reset reads back equal"
	else
		bad "data written before the reset differs"
	fi
	data_check 8 200
else
	bad "controller not live after reset: '$(ctrl_state)'"
fi
disconnect

title "poll queues (IB_POLL_DIRECT completion queues)"
if connect "nr_io_queues=1,nr_poll_queues=1"; then
	if dmesg | grep -q 'mapped 1/0/1 default/read/poll queues'; then
		ok "nvme-rdma mapped one poll queue"
	else
		bad "no poll queue mapped:"
		dmesg | grep 'mapped' | sed 's/^/    /'
	fi
	run_t 120 shca_blkpoll /dev/nvme0n1 8
	[ "$(run_rc)" = 0 ] && ok "polled I/O verified" || bad "polled I/O"
	disconnect
fi

title "nvmet-rdma with use_srq=1 (one SRQ per completion vector)"
rm "$CFS/ports/1/subsystems/$NQN"
run rmmod nvmet_rdma
must "nvmet-rdma use_srq=1" modprobe nvmet-rdma use_srq=1
ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
if wait_for 10 cm_listening 4420 && connect; then
	run rdma res show srq
	if run_out | grep -q 'nvmet_rdma'; then
		ok "nvmet-rdma's SRQs are in rdma res"
	else
		bad "no SRQ of nvmet-rdma in rdma res"
	fi
	data_check "$MIB" 400
	disconnect
fi

title "rdma link delete under a connected controller"
connect || die "no controller"
t0=$(date +%s)
must "rdma link delete $D0" run_t 60 rdma link delete "$D0"
t1=$(date +%s)
if wait_for 30 no_ctrl; then
	ok "the host deleted its controller ($((t1 - t0)) s for the device removal)"
else
	bad "controller still there: '$(ctrl_state)'"
fi
kernel_quiet

title "netdev removal under a connected controller"
# A second device on a dummy netdev, a second nvmet port on its address;
# deleting the netdev removes the device with the controller connected.
# softhca fails the device's QPs at once (IB_EVENT_DEVICE_FATAL, flushes),
# so the host's shutdown commands complete; rdma_rxe keeps retrying on
# the vanished port and blocks the removal for about a minute (seen:
# hung-task reports at 20 and 40 s), so the case is softhca's only.
if [ "$DRV_TYPE" = rxe ]; then
	info "rxe: skipped (the removal blocks for about a minute)"
elif add_dummy shd0 && run ip addr add 10.0.9.15/24 dev shd0 &&
	must "rdma link add shd9 on shd0" link_add shd9 shd0; then
	expect_port shd9 state "4: ACTIVE" 10
	mkdir "$CFS/ports/2"
	echo rdma >"$CFS/ports/2/addr_trtype"
	echo ipv4 >"$CFS/ports/2/addr_adrfam"
	echo 10.0.9.15 >"$CFS/ports/2/addr_traddr"
	echo 4420 >"$CFS/ports/2/addr_trsvcid"
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/2/subsystems/$NQN"
	if TADDR=10.0.9.15 connect; then
		run rdma res show qp link shd9/1
		run_t 60 dd if=/dev/nvme0n1 of=/dev/null bs=1M count=8 iflag=direct
		must "ip link del shd0" run_t 60 ip link del shd0
		if wait_for 30 no_ctrl; then
			ok "the host deleted its controller"
		else
			bad "controller still there: '$(ctrl_state)'"
		fi
		wait_for 10 dev_gone shd9 && ok "shd9 is gone" || bad "shd9 still there"
	fi
	rm -f "$CFS/ports/2/subsystems/$NQN"
	rmdir "$CFS/ports/2"
	kernel_quiet
fi

title "rmmod under a connected controller"
must "rdma link add $D0 again" link_add "$D0" eth0
expect_port "$D0" state "4: ACTIVE" 10
# nvmet-rdma drops a listener whose device went away (as with any RDMA
# driver): re-enable the port by unlinking and linking the subsystem
rm "$CFS/ports/1/subsystems/$NQN"
ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
if wait_for 10 cm_listening 4420; then
	ok "nvmet-rdma listens again"
else
	bad "nvmet-rdma does not listen again"
fi
connect && data_check 8 300
must "rmmod $DRV_MOD" run_t 60 rmmod "$DRV_MOD"
if wait_for 30 no_ctrl; then
	ok "the host deleted its controller"
else
	bad "controller still there: '$(ctrl_state)'"
fi
kernel_quiet

title "cleanup"
nvmet_teardown
run rmmod nvme_rdma nvmet_rdma
run rmmod null_blk
expect_pins 5
