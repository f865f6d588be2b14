# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=sh
#
# Helpers of the ULP benchmarks in the VM guest, sourced by ulp-bench.sh
# and nvme-pi-bench.sh (tests/bench/run.sh puts this file next to them as
# /tests/ulp-lib.sh). Before sourcing it, the caller sets
#   TAG    the prefix of its console lines ("ulp-bench"): "TAG: " for
#          messages, "${TAG%-bench}-rec: " for records
#   REC    the file its records are collected in
#   START  $(date +%s) when it started
#   SECS, MIB, BUDGET  seconds per fio cell, MiB of each block device the
#          cells use, seconds after which cells are skipped
# and, for fio_cell, sets rep (the repetition) around each call. Sources
# bench-lib.sh (BENCH_LIB, default: next to ULP_LIB).
# POSIX sh; every command is bounded by a timeout.

IB=/sys/class/infiniband
CFS=/sys/kernel/config/nvmet
# What the kernel logs when an I/O of a cell went wrong: a PI check that
# failed (nvme_rdma/nvmet_rdma "PI error found", the block layer's "guard
# tag error", "protection error"), an NVMe or block I/O error, a timed-out
# command or a controller reset.
KLOG_BAD='PI error|tag error|protection error|I/O Error|I/O error|blk_update_request|nvme.*(timeout|reset)'

elapsed() { echo $(($(date +%s) - START)); }

# klog_mark; ...; klog_new: the kernel log lines since the mark
klog_mark() { _kmark=$(dmesg | wc -l); }
klog_new() { dmesg | tail -n +$((_kmark + 1)) | sed 's/^\[[ 0-9.]*\] //'; }

# reverse WORDS...: the words in reverse order
reverse() {
	_r=
	for _w in "$@"; do
		_r="$_w $_r"
	done
	echo "$_r"
}

# the whole-disk nvme namespaces, space separated
nvme_disks() {
	for _b in /sys/block/nvme*n*; do
		[ -e "$_b" ] || continue
		case ${_b##*/} in
		nvme*c*) ;;
		*) printf '%s ' "${_b##*/}" ;;
		esac
	done
}

# ulp_links DEV:NIC:ADDR...: softhca.ko (or modprobe softhca) and
# rdma_rxe loaded, each NIC up with ADDR/24 and RDMA device DEV (softhcaN
# or rxeN) on it
ulp_links() {
	if ! loaded softhca; then
		if [ -r "${SOFTHCA_KO:-/softhca.ko}" ]; then
			run 60 insmod "${SOFTHCA_KO:-/softhca.ko}" || return 1
		else
			run 60 modprobe softhca || return 1
		fi
	fi
	run 60 modprobe rdma_rxe || return 1
	for _c in "$@"; do
		IFS=: read -r _dev _nic _addr <<EOF
$_c
EOF
		[ -e "/sys/class/net/$_nic" ] || { say "the guest has no $_nic"; return 1; }
		ip link set "$_nic" up
		ip -4 addr show dev "$_nic" | grep -q "inet $_addr/" ||
			ip addr add "$_addr/24" dev "$_nic"
		run 30 rdma link add "$_dev" type "${_dev%%[0-9]*}" netdev "$_nic" || return 1
	done
	_n=0
	for _c in "$@"; do
		until [ -d "$IB/${_c%%:*}" ]; do
			[ $_n -lt 100 ] || { say "${_c%%:*} did not appear within 20s"; return 1; }
			sleep 0.2
			_n=$((_n + 1))
		done
	done
	run 30 rdma link show
}

# nvmet_modules: nvmet-rdma and nvme-rdma loaded, configfs mounted
nvmet_modules() {
	run 60 modprobe nvmet-rdma || return 1
	run 60 modprobe nvme-rdma || return 1
	grep -q ' /sys/kernel/config ' /proc/mounts ||
		mount -t configfs none /sys/kernel/config
}

# nvmet_target NQN DEVICE ADDR SVCID PORT [PI]: subsystem NQN serving
# block device DEVICE as namespace 1 on port PORT, rdma ADDR:SVCID; with
# PI 1, T10-PI enabled on both (subsystem attr_pi_enable, port
# param_pi_enable), with PI 0 disabled on both, without PI as configfs
# leaves them (disabled)
nvmet_target() {
	_s=$CFS/subsystems/$1
	_p=$CFS/ports/$5
	mkdir "$_s" &&
	echo 1 >"$_s/attr_allow_any_host" &&
	{ [ -z "${6:-}" ] || echo "$6" >"$_s/attr_pi_enable"; } &&
	mkdir "$_s/namespaces/1" &&
	echo "$2" >"$_s/namespaces/1/device_path" &&
	echo 1 >"$_s/namespaces/1/enable" &&
	mkdir "$_p" &&
	echo rdma >"$_p/addr_trtype" &&
	echo ipv4 >"$_p/addr_adrfam" &&
	echo "$3" >"$_p/addr_traddr" &&
	echo "$4" >"$_p/addr_trsvcid" &&
	{ [ -z "${6:-}" ] || echo "$6" >"$_p/param_pi_enable"; } &&
	ln -s "$_s" "$_p/subsystems/$1"
}

# nvme_connect NQN ADDR SVCID: connect the host to NQN at ADDR:SVCID;
# sets DISK to its new namespace (/dev/nvmeXnY)
nvme_connect() {
	_before=" $(nvme_disks)"
	_opts="transport=rdma,traddr=$2,trsvcid=$3,nqn=$1"
	say "\$ echo $_opts > /dev/nvme-fabrics"
	timeout -k 5 60 sh -c "echo '$_opts' >/dev/nvme-fabrics" || return 1
	_n=0
	while [ $_n -lt 150 ]; do
		for _d in $(nvme_disks); do
			case $_before in
			*" $_d "*) ;;
			*) DISK=/dev/$_d; [ -b "$DISK" ] && return 0 ;;
			esac
		done
		sleep 0.2
		_n=$((_n + 1))
	done
	return 1
}

# ulp_qps DEV: the RC QPs of kernel ULPs on DEV (rdma res names them after
# rdma_cm, which created them for nvme-rdma and nvmet-rdma)
ulp_qps() {
	rdma res show qp link "$1/1" 2>/dev/null | grep 'type RC' | grep -c 'comm \[rdma_cm\]'
}

# ulp_cleanup "MODULES" "LINKS": delete the nvme controllers and the
# nvmet configuration, unload nvme-rdma, nvmet-rdma and MODULES, delete
# the RDMA LINKS, unload softhca and rdma_rxe; status 1 if some of it failed
ulp_cleanup() {
	_ok=0
	for _c in /sys/class/nvme/nvme*; do
		[ -e "$_c/delete_controller" ] || continue
		echo 1 >"$_c/delete_controller" 2>/dev/null
	done
	_n=0
	while ls /sys/class/nvme/nvme* >/dev/null 2>&1; do
		[ "$_n" -lt 100 ] || { say "nvme controllers left: $(ls /sys/class/nvme)"; _ok=1; break; }
		sleep 0.2
		_n=$((_n + 1))
	done
	for _p in "$CFS"/ports/*; do
		[ -d "$_p" ] || continue
		for _l in "$_p/subsystems"/*; do
			[ -L "$_l" ] && rm -f "$_l"
		done
		rmdir "$_p"
	done
	for _s in "$CFS"/subsystems/*; do
		[ -d "$_s" ] || continue
		[ -d "$_s/namespaces/1" ] && rmdir "$_s/namespaces/1"
		rmdir "$_s"
	done
	for _m in nvme_rdma nvmet_rdma $1; do
		if loaded "$_m"; then
			run 60 rmmod "$_m" || _ok=1
		fi
	done
	for _d in $2; do
		if [ -e "$IB/$_d" ]; then
			run 30 rdma link delete "$_d" || _ok=1
		fi
	done
	for _m in softhca rdma_rxe; do
		if loaded "$_m"; then
			run 30 rmmod "$_m" || _ok=1
		fi
	done
	return "$_ok"
}

# fio_cell COLUMN DISK JOB: one fio run of JOB (NAME:RW:BS:IODEPTH:NUMJOBS;
# libaio, O_DIRECT, time based, over the first MIB MiB of DISK); records
# "fio COLUMN NAME REP KIOPS MBS LAT_US" or "err COLUMN NAME REP REASON"
# (REASON: the rest of the line, words).
# A cell is an error, not a number, when fio fails or reports an error,
# when the kernel logs I/O trouble (KLOG_BAD) while it runs, or when
# FIO_PRECHECK (a command, if set) called with COLUMN and DISK fails; its
# output is then the reason. After BUDGET seconds cells are "skipped".
# shellcheck disable=SC2154 # rep: the caller's
fio_cell() {
	IFS=: read -r _name _rw _bs _qd _nj <<EOF
$3
EOF
	if [ "$(elapsed)" -ge "$BUDGET" ]; then
		rec "err $1 $_name $rep skipped"
		return
	fi
	if [ -n "${FIO_PRECHECK:-}" ] && ! _w=$($FIO_PRECHECK "$1" "$2"); then
		rec "err $1 $_name $rep ${_w:-precheck failed}"
		return
	fi
	klog_mark
	timeout -k 5 $((SECS + 60)) fio --name="$_name" --filename="$2" \
		--ioengine=libaio --direct=1 --rw="$_rw" --bs="$_bs" \
		--iodepth="$_qd" --numjobs="$_nj" --group_reporting \
		--size="${MIB}M" --time_based --runtime="$SECS" \
		--output-format=terse --terse-version=3 >/tmp/ulp-fio.out 2>/tmp/ulp-fio.err
	_rc=$?
	_line=$(grep "^3;" /tmp/ulp-fio.out | tail -n 1)
	if [ $_rc -ne 0 ] || [ -z "$_line" ]; then
		_w=$(cat /tmp/ulp-fio.err /tmp/ulp-fio.out | grep -v '^3;' | head -n 1 |
			sed 's/[^A-Za-z0-9 ._:()-]//g' | cut -c1-60)
		[ $_rc -ne 124 ] && [ $_rc -ne 137 ] || _w="timed out"
		rec "err $1 $_name $rep ${_w:-exit status $_rc}"
		sed "s/^/$TAG:     /" /tmp/ulp-fio.err | tail -n 5
		return
	fi
	if klog_new | grep -E -e "$KLOG_BAD" >/tmp/ulp-klog.bad; then
		_w=$(head -n 1 /tmp/ulp-klog.bad | sed 's/[^A-Za-z0-9 ._:()-]//g' |
			cut -c1-80)
		rec "err $1 $_name $rep kernel log: $_w"
		sed "s/^/$TAG:     dmesg: /" /tmp/ulp-klog.bad | tail -n 5
		return
	fi
	# terse v3: 5 error, 7/8 read KiB/s and IOPS, 40 read mean latency
	# (us), 48/49/81 the same for writes
	echo "$_line" | awk -F';' -v c="$1" -v j="$_name" -v r="$rep" -v rw="$_rw" '
		{
			if ($5 != 0) { print "err", c, j, r, "fio error " $5; exit }
			if (rw ~ /read/) { bw = $7; iops = $8; lat = $40 }
			else { bw = $48; iops = $49; lat = $81 }
			printf "fio %s %s %s %.3f %.1f %.1f\n", c, j, r, iops / 1000, bw * 1024 / 1e6, lat
		}' >/tmp/ulp-fio.rec
	rec "$(cat /tmp/ulp-fio.rec)"
}

# The table helpers of all the benchmarks (BENCH_AWK, bench_block):
# bench-lib.sh, next to this file.
BENCH_LIB=${BENCH_LIB:-${ULP_LIB%/*}/bench-lib.sh}
# shellcheck source=tests/bench/bench-lib.sh
. "$BENCH_LIB"
