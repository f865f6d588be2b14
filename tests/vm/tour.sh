#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# A guided tour of softhca (scripts/vm.sh --tour): every command and its output.
# shellcheck disable=SC1091
. /tests/lib.sh

show() {
	echo
	echo "\$ $*"
	timeout -k 5 30 "$@" 2>&1
	_rc=$?
	[ $_rc -eq 0 ] || echo "(exit status $_rc)"
	return $_rc
}
A=/sys/class/infiniband/softhca0

if [ "$DRV_TYPE" = rxe ]; then
	show modprobe rdma_rxe || die "modprobe rdma_rxe failed"
else
	show insmod "$KO" || die "insmod $KO failed"
fi
show rdma link add softhca0 type "$DRV_TYPE" netdev eth0 || die "rdma link add failed"
wait_for 10 port_is softhca0 state "4: ACTIVE" >/dev/null
show rdma link show
show rdma dev show
show ls "$A"
for a in node_guid node_type fw_ver ports/1/state ports/1/phys_state \
	ports/1/link_layer ports/1/gids/0 ports/1/gid_attrs/types/0; do
	show cat "$A/$a"
done
if [ "$DRV_TYPE" != rxe ] && [ ! -e /etc/libibverbs.d/softhca.driver ]; then
	echo
	echo "# No rdma-core provider for softhca is installed in this guest yet, so"
	echo "# libibverbs (ibv_devices, ibv_devinfo) does not see softhca0."
fi
show ibv_devices
show ibv_devinfo -v -d softhca0

# Finally userspace: a program linked against Debian's libibverbs registers
# memory through the provider (tests/vm/src/shca_demo.c).
if command -v shca_demo >/dev/null && [ -e "/etc/libibverbs.d/$DRV_TYPE.driver" ]; then
	echo
	echo "# Userspace memory registration through rdma-core: shca_demo opens softhca0"
	echo "# with Debian's libibverbs, which loads our provider libsofthca-rdmav34.so;"
	echo "# ibv_reg_mr pins the pages (ib_umem) and the driver hands back the keys;"
	echo "# device memory is mapped into the process, so ibv_memcpy_to_dm is a memcpy."
	hold=/tmp/shca_demo.hold
	rm -f "$hold"
	echo
	echo "\$ shca_demo softhca0 $hold &"
	timeout -k 5 60 shca_demo softhca0 "$hold" &
	demo=$!
	if wait_for 30 test -s "$hold"; then
		echo
		echo "# While it holds them, the RDMA core lists what the process owns:"
		show rdma res show mr dev softhca0
		show rdma res show pd dev softhca0
		rm -f "$hold"
		echo
		echo "# ... and it deregisters everything:"
	fi
	wait $demo || bad "shca_demo failed"
fi

# rdma_cm over the GSI QP: rping against itself on softhca0's address.
if command -v rping >/dev/null; then
	echo
	echo "# Connections through rdma_cm: CM MADs travel over QP1 (the GSI QP the"
	echo "# kernel's MAD layer created on softhca0), then rping's RC QPs move data."
	timeout -k 5 30 rping -s -a 10.0.2.15 -C 5 -v >/tmp/rping.srv 2>&1 &
	srv=$!
	sleep 1
	show rping -c -a 10.0.2.15 -C 5 -v -V
	wait $srv
fi

# The kernel's NVMe over Fabrics: nvmet-rdma serves a RAM disk, nvme-rdma
# connects to it over softhca0.
if modprobe -q null_blk nr_devices=1 memory_backed=1 gb=1 &&
	modprobe -q nvmet-rdma && modprobe -q nvme-rdma; then
	C=/sys/kernel/config/nvmet
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs none /sys/kernel/config
	echo
	echo "# nvmet-rdma: subsystem 'tour' with /dev/nullb0, listening on 10.0.2.15:4420"
	mkdir $C/subsystems/tour $C/subsystems/tour/namespaces/1 $C/ports/1
	echo 1 >$C/subsystems/tour/attr_allow_any_host
	echo /dev/nullb0 >$C/subsystems/tour/namespaces/1/device_path
	echo 1 >$C/subsystems/tour/namespaces/1/enable
	echo rdma >$C/ports/1/addr_trtype
	echo ipv4 >$C/ports/1/addr_adrfam
	echo 10.0.2.15 >$C/ports/1/addr_traddr
	echo 4420 >$C/ports/1/addr_trsvcid
	ln -s $C/subsystems/tour $C/ports/1/subsystems/tour
	echo
	echo "\$ echo transport=rdma,traddr=10.0.2.15,trsvcid=4420,nqn=tour > /dev/nvme-fabrics"
	echo transport=rdma,traddr=10.0.2.15,trsvcid=4420,nqn=tour >/dev/nvme-fabrics
	wait_for 20 test -b /dev/nvme0n1
	show cat /sys/class/nvme/nvme0/transport /sys/class/nvme/nvme0/state \
		/sys/class/nvme/nvme0/address
	show rdma res show qp link softhca0/1
	show dd if=/dev/urandom of=/dev/nvme0n1 bs=1M count=16 oflag=direct
	show dd if=/dev/nvme0n1 of=/dev/null bs=1M count=16 iflag=direct
	echo 1 >/sys/class/nvme/nvme0/delete_controller
	wait_for 20 sh -c '! ls /sys/class/nvme/nvme0 >/dev/null 2>&1'
	rm $C/ports/1/subsystems/tour
	rmdir $C/ports/1 $C/subsystems/tour/namespaces/1 $C/subsystems/tour
	rmmod null_blk 2>/dev/null
fi

# T10 protection information end to end: the same ULPs with PI, over a
# disk that stores a tuple per block; softhca's T10-DIF engine checks and
# moves the tuples, and a damaged one is caught and reported through
# check_mr_status.
if [ "$DRV_TYPE" != rxe ] && modprobe -q nvmet-rdma && modprobe -q nvme-rdma &&
	modprobe -q scsi_debug dif=1 dix=1 guard=0 dev_size_mb=16 &&
	modprobe -q sd_mod && wait_for 15 test -b /dev/sda; then
	C=/sys/kernel/config/nvmet
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs none /sys/kernel/config
	echo
	echo "# A disk with DIF type 1 and a CRC guard (scsi_debug), served by"
	echo "# nvmet-rdma with PI (attr_pi_enable, param_pi_enable):"
	show cat /sys/block/sda/integrity/format
	mkdir $C/subsystems/pi $C/subsystems/pi/namespaces/1 $C/ports/1
	echo 1 >$C/subsystems/pi/attr_allow_any_host
	echo 1 >$C/subsystems/pi/attr_pi_enable
	echo /dev/sda >$C/subsystems/pi/namespaces/1/device_path
	echo 1 >$C/subsystems/pi/namespaces/1/enable
	echo rdma >$C/ports/1/addr_trtype
	echo ipv4 >$C/ports/1/addr_adrfam
	echo 10.0.2.15 >$C/ports/1/addr_traddr
	echo 4420 >$C/ports/1/addr_trsvcid
	echo 1 >$C/ports/1/param_pi_enable
	ln -s $C/subsystems/pi $C/ports/1/subsystems/pi
	echo
	echo "\$ echo transport=rdma,traddr=10.0.2.15,trsvcid=4420,nqn=pi > /dev/nvme-fabrics"
	echo transport=rdma,traddr=10.0.2.15,trsvcid=4420,nqn=pi >/dev/nvme-fabrics
	wait_for 20 test -b /dev/nvme0n1
	echo
	echo "# The host's namespace carries the same protection: every I/O now"
	echo "# moves through integrity MRs (IB_WR_REG_MR_INTEGRITY) on both sides."
	show cat /sys/block/nvme0n1/integrity/format
	show dd if=/dev/urandom of=/dev/nvme0n1 bs=4k count=256 oflag=direct
	show dd if=/dev/nvme0n1 of=/dev/null bs=4k count=256 iflag=direct
	echo
	echo "# Now damage the guard of the next tuples leaving memory for the wire"
	echo "# (debugfs, root only), one for each attempt of a one-block read"
	echo "# (nvme_core retries a failed command max_retries times). The host's"
	echo "# integrity MR catches each; nvme-rdma reads the error with"
	echo "# ib_check_mr_status() and fails the read with a guard check error."
	r=$(cat /sys/module/nvme_core/parameters/max_retries 2>/dev/null || echo 5)
	show sh -c "echo $((r + 1)) > /sys/kernel/debug/softhca/corrupt_guard"
	show dd if=/dev/nvme0n1 of=/dev/null bs=4k count=512 skip=4096 \
		iflag=direct,count_bytes,skip_bytes
	show cat /sys/kernel/debug/softhca/corrupt_guard
	echo
	echo "# The next read is clean."
	show dd if=/dev/nvme0n1 of=/dev/null bs=4k count=512 skip=4096 \
		iflag=direct,count_bytes,skip_bytes
	echo 1 >/sys/class/nvme/nvme0/delete_controller
	wait_for 20 sh -c '! ls /sys/class/nvme/nvme0 >/dev/null 2>&1'
	rm $C/ports/1/subsystems/pi
	rmdir $C/ports/1 $C/subsystems/pi/namespaces/1 $C/subsystems/pi
fi
rmmod nvme_rdma nvmet_rdma sd_mod scsi_debug 2>/dev/null
echo
show rdma link delete softhca0 || bad "rdma link delete failed"
echo
