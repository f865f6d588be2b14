#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# NVMe over Fabrics with T10 protection information over softhca0, the
# kernel's ULPs on both sides: nvmet-rdma (port param_pi_enable, subsystem
# attr_pi_enable) serves a scsi_debug disk with DIF type 1 and DIX (CRC
# guard), the nvme-rdma host connects through /dev/nvme-fabrics. PI is
# negotiated end to end (the host namespace's integrity/format is
# T10-DIF-TYPE1-CRC), so every I/O moves through integrity MRs
# (IB_WR_REG_MR_INTEGRITY, rdma_rw_ctx_signature_init) and softhca's
# T10-DIF engine: 21 MiB of random data written O_DIRECT in writes of
# 4 KiB to 1 MiB, some at offsets that are not 4 KiB aligned, is read
# back equal through the host and straight from the disk (both reads
# verify the PI in the block layer, scsi_debug checks every write's PI),
# and the tuple stored with a block is {its CRC, app tag 0, its LBA}.
#
# Then softhca's fault injection (debugfs softhca/corrupt_guard,
# corrupt_reftag, corrupt_apptag: damage the next N tuples leaving memory
# for the wire) shows each damaged field caught where the ULPs ask for the
# check, with the exact values and status: on a READ by the host's
# integrity MR (nvme_rdma_check_pi_status), on a WRITE by the target's
# (nvmet_rdma_check_pi_status, the status returned to the host). The nvme
# core retries such a command (nvme_core max_retries), so the I/O fails,
# with EILSEQ (BLK_STS_PROTECTION), only when every attempt was damaged;
# a refused write leaves the disk as it was. Block I/O never asks for an
# application tag check: a damaged app tag goes through and is stored;
# asked for through the passthrough ioctl (shca_nvme_pi: PRCHK_APP, LBAT,
# LBATM) the target refuses the write.
#
# rdma_rxe has no IBK_INTEGRITY_HANDOVER: with --driver rxe, nvmet-rdma
# logs "T10-PI is not supported by device rxe0. Disabling it", the host
# namespace has no integrity profile and the data must still be equal;
# the fault injection is softhca's only.
# vm-test-timeout: 180
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
A0=10.0.2.15
NQN=softhca-pi
CFS=/sys/kernel/config/nvmet
DBG=/sys/kernel/debug/softhca
NS=/dev/nvme0n1
need_progs shca_nvme_pi

vm_setup "$D0"
# A task blocked for 20 s is reported (the default, 120 s, is beyond the test).
[ ! -w /proc/sys/kernel/hung_task_timeout_secs ] ||
	echo 20 >/proc/sys/kernel/hung_task_timeout_secs


title "a disk with T10 protection information (scsi_debug)"
klog_mark
must "scsi_debug: 64 MiB, DIF type 1, DIX, CRC guard" \
	modprobe scsi_debug dif=1 dix=1 guard=0 dev_size_mb=64
must "sd_mod" modprobe sd_mod
sd_disk() {
	for _d in /sys/block/sd*; do
		[ -e "$_d" ] && grep -q scsi_debug "$_d/device/model" 2>/dev/null &&
			basename "$_d" && return 0
	done
	return 1
}
wait_for 15 sd_disk >/dev/null || die "no scsi_debug disk appeared"
SD=$(sd_disk)
expect_eq "/dev/$SD integrity/format" T10-DIF-TYPE1-CRC \
	"$(cat "/sys/block/$SD/integrity/format")"
expect_eq "/dev/$SD integrity/read_verify (reads of it check its PI)" 1 \
	"$(cat "/sys/block/$SD/integrity/read_verify")"
klog_has "sd enables DIX" "\[$SD\] Enabling DIX T10-DIF-TYPE1-CRC"

must "nvmet-rdma" modprobe nvmet-rdma
must "nvme-rdma" modprobe nvme-rdma
grep -q ' /sys/kernel/config ' /proc/mounts ||
	mount -t configfs none /sys/kernel/config

# nvmet_setup: subsystem $NQN with PI and /dev/$SD as namespace 1, on an
# RDMA port at $A0:4420 with PI
nvmet_setup() {
	mkdir "$CFS/subsystems/$NQN" &&
	echo 1 >"$CFS/subsystems/$NQN/attr_allow_any_host" &&
	echo 1 >"$CFS/subsystems/$NQN/attr_pi_enable" &&
	mkdir "$CFS/subsystems/$NQN/namespaces/1" &&
	echo "/dev/$SD" >"$CFS/subsystems/$NQN/namespaces/1/device_path" &&
	echo 1 >"$CFS/subsystems/$NQN/namespaces/1/enable" &&
	mkdir "$CFS/ports/1" &&
	echo rdma >"$CFS/ports/1/addr_trtype" &&
	echo ipv4 >"$CFS/ports/1/addr_adrfam" &&
	echo "$A0" >"$CFS/ports/1/addr_traddr" &&
	echo 4420 >"$CFS/ports/1/addr_trsvcid" &&
	echo 1 >"$CFS/ports/1/param_pi_enable" &&
	ln -s "$CFS/subsystems/$NQN" "$CFS/ports/1/subsystems/$NQN"
}

nvmet_teardown() {
	rm -f "$CFS/ports/1/subsystems/$NQN"
	rmdir "$CFS/ports/1" "$CFS/subsystems/$NQN/namespaces/1" \
		"$CFS/subsystems/$NQN" 2>/dev/null
	[ ! -e "$CFS/ports/1" ] && [ ! -e "$CFS/subsystems/$NQN" ]
}


title "nvmet-rdma and nvme-rdma with PI"
must "nvmet subsystem $NQN (attr_pi_enable) on rdma $A0:4420 (param_pi_enable), namespace /dev/$SD" \
	nvmet_setup
expect_eq "port param_pi_enable" 1 "$(cat "$CFS/ports/1/param_pi_enable")"
expect_eq "subsystem attr_pi_enable" 1 "$(cat "$CFS/subsystems/$NQN/attr_pi_enable")"
connect || die "no controller"
# The namespace's path disk (nvme0c0n1 under native multipath): the
# nvme core and the block layer log errors under its name.
NSP=nvme0n1
for _d in /sys/block/nvme0c*n1; do
	[ ! -e "$_d" ] || NSP=${_d##*/}
done
HOSTFMT=$(cat /sys/block/nvme0n1/integrity/format)
if [ "$DRV_TYPE" = rxe ]; then
	PI=0
	klog_has "rxe: nvmet-rdma falls back to no PI" \
		"nvmet_rdma: T10-PI is not supported by device $D0\. Disabling it"
	klog_has "rxe: the target creates the controller without PI" \
		"nvmet: creating nvm controller [0-9]+ for subsystem $NQN for NQN [^ ]+\.$"
	expect_eq "rxe: host nvme0n1 integrity/format" none "$HOSTFMT"
else
	PI=1
	klog_has "the target creates the controller with PI" \
		"nvmet: creating nvm controller [0-9]+ for subsystem $NQN for NQN .* T10-PI is enabled\.$"
	klog_lacks "no 'T10-PI is not supported' in the kernel log" \
		"T10-PI is not supported"
	expect_eq "host nvme0n1 integrity/format (PI negotiated end to end)" \
		T10-DIF-TYPE1-CRC "$HOSTFMT"
	expect_eq "host $NSP integrity/format" T10-DIF-TYPE1-CRC \
		"$(cat "/sys/block/$NSP/integrity/format")"
	expect_eq "host nvme0n1 integrity write_generate/read_verify" "1/1" \
		"$(cat /sys/block/nvme0n1/integrity/write_generate)/$(cat /sys/block/nvme0n1/integrity/read_verify)"
fi
expect_eq "host nvme0n1 logical block size" 512 \
	"$(cat /sys/block/nvme0n1/queue/logical_block_size)"

# ---- data -----------------------------------------------------------------

# Every O_DIRECT buffer here is page-aligned: busybox dd mmap()s its
# buffer for bs >= 4 KiB, but takes a smaller one from the heap, where it
# may straddle two pages (nvme's dma_alignment is 4 bytes, so O_DIRECT
# accepts it). 6.12's block layer generates and verifies PI one page
# segment at a time (blk_integrity_generate/verify, block/t10-pi.c), so a
# 512-byte block split across two pages gets a wrong guard: seen as
# "nvme0c0n1: guard tag error" on 3.5 KiB reads, whatever the HCA does.
# Single blocks are therefore moved with bs=4k and count_bytes.

# put BS COUNT OFF: COUNT blocks of BS bytes of /tmp/pat at byte OFF, to
# the host's namespace with O_DIRECT
put() {
	run_t 60 dd if=/tmp/pat of=$NS bs="$1" count="$2" iflag=skip_bytes \
		skip="$3" oflag=seek_bytes,direct seek="$3"
}

# rd1 DEV LBA OUT, wr1 IN DEV LBA: run() one O_DIRECT read or write of
# the 512-byte block LBA
rd1() {
	run dd if="$1" of="$3" bs=4k iflag=direct,skip_bytes,count_bytes \
		skip=$(($2 * 512)) count=512
}
wr1() {
	run dd if="$1" of="$2" bs=4k iflag=count_bytes count=512 \
		oflag=direct,seek_bytes seek=$(($3 * 512))
}

# same_as_pat DESC FILE: the first $TOTAL bytes of FILE equal /tmp/pat
same_as_pat() {
	if cmp -s -n "$TOTAL" /tmp/pat "$2"; then
		ok "$1: $TOTAL bytes equal"
	else
		bad "$1: differ from what was written:"
		cmp -l -n "$TOTAL" /tmp/pat "$2" 2>&1 | head -n 5 | sed 's/^/    /'
	fi
}

# verify_all WHEN [all]: the whole pattern read back through the host
# (256 KiB reads; with "all" also 4 KiB reads at an offset that is not
# 4 KiB aligned, for a window across the last three segments) and
# straight from /dev/$SD
verify_all() {
	run_t 60 dd if=$NS of=/tmp/back bs=256k count=85 iflag=direct
	same_as_pat "$1: read through nvme-rdma" /tmp/back
	[ "$2" != all ] || verify_window "$1"
	run_t 60 dd if="/dev/$SD" of=/tmp/back bs=1M count=22 iflag=direct
	same_as_pat "$1: read from /dev/$SD" /tmp/back
	rm -f /tmp/back
}
verify_window() {
	run_t 60 dd if=$NS of=/tmp/back bs=4k count=200 iflag=skip_bytes,direct \
		skip=17957376
	if cmp -s -n 819200 /tmp/pat /tmp/back 17957376 0; then
		ok "$1: 200 reads of 4 KiB at byte 17957376 equal"
	else
		bad "$1: 200 reads of 4 KiB at byte 17957376 differ"
	fi
}

title "data: O_DIRECT writes of 4 KiB to 1 MiB, read back on both sides"
klog_mark
# Segments (bytes, blocks of 512): 8 MiB in 1 MiB writes (0-16383),
# 6 MiB in 512 KiB (-28671), 1 MiB in 4 KiB (-30719), 37 x 64 KiB
# (-35455), 333 blocks in 4 KiB writes at an offset that is not 4 KiB
# aligned, the last one 2.5 KiB (-35788), 29 x 128 KiB at such an offset
# (-43212): 22125056 bytes.
TOTAL=22125056
dd if=/dev/urandom of=/tmp/pat bs=1M count=22 2>/dev/null
must "8 MiB in 1 MiB writes at 0" put 1M 8 0
must "6 MiB in 512 KiB writes at 8 MiB" put 512k 12 8388608
must "1 MiB in 4 KiB writes at 14 MiB" put 4k 256 14680064
must "37 writes of 64 KiB at 15 MiB" put 64k 37 15728640
must "333 blocks (170496 bytes) in 4 KiB writes at byte 18153472" \
	run_t 60 dd if=/tmp/pat of=$NS bs=4k count=170496 \
	iflag=skip_bytes,count_bytes skip=18153472 oflag=seek_bytes,direct seek=18153472
must "29 writes of 128 KiB at byte 18323968 (not 4 KiB aligned)" \
	put 128k 29 18323968
verify_all "after the writes" all
klog_lacks "no PI error anywhere (nvme-rdma, nvmet-rdma, block layer, scsi_debug)" \
	"PI error|tag error|check failed|protection error|I/O Error"

# tuple LBA: the tuple of block LBA as stored, through the passthrough
# ioctl: "guard 0x.... crc 0x.... app 0x.... ref 0x........"
tuple() { shca_nvme_pi $NS read "$1" 2>&1 | sed -n 's/^status 0x0 //p'; }
# expect_tuple DESC LBA APP: the stored tuple of LBA has a guard equal to
# the CRC of its data, app tag APP and ref tag LBA
expect_tuple() {
	_t=$(tuple "$2")
	# shellcheck disable=SC2086
	set -- "$1" "$2" "$3" $_t
	if [ $# -eq 11 ] && [ "$5" = "$7" ] && [ "$9" = "$3" ] &&
		[ $((${11})) -eq "$2" ]; then
		ok "$1: block $2 has guard $5 = CRC of its data, app tag $9, ref tag ${11}"
	else
		bad "$1: block $2: expected guard = crc, app $3, ref $2; saw '$_t'"
	fi
}

if [ $PI = 1 ]; then
	for lba in 0 35600 43212; do
		expect_tuple "PI stored on /dev/$SD" $lba 0x0000
	done
fi

# ---- fault injection ----------------------------------------------------------

# inject FIELD N: damage FIELD (guard, reftag, apptag) in the next N tuples
inject() {
	echo "  \$ echo $2 > $DBG/corrupt_$1"
	echo "$2" >"$DBG/corrupt_$1"
}
expect_knob0() {
	expect_eq "corrupt_$1 back to 0 (every damage done)" 0 \
		"$(cat "$DBG/corrupt_$1")"
}

# pi_errors SIDE TYPE: the "SIDE: PI error found type TYPE expected E vs
# actual A" lines since the mark, as "E A" lines
pi_errors() {
	klog_new | sed -n "s/^$1: PI error found type $2 expected \(0x[0-9a-f]*\) vs actual \(0x[0-9a-f]*\)\$/\1 \2/p"
}

# expect_pi_errors SIDE TYPE N EXPECTED [FLIP]: N such lines, each with
# the expected value EXPECTED and as the actual one that value with the bit
# the injection flips (FLIP: 0x100, that of the guard and the ref tag; the
# app tag's is 0x1)
expect_pi_errors() {
	_lines=$(pi_errors "$1" "$2")
	_n=$(printf '%s' "$_lines" | grep -c .)
	_good=0
	_side=$1 _type=$2 _want=$3 _exp=$4 _flip=${5:-0x100}
	_msg="$_side: PI error found type $_type expected $(printf 0x%x $((_exp))) vs actual $(printf 0x%x $((_exp ^ _flip)))"
	# shellcheck disable=SC2086
	set -- $_lines
	while [ $# -ge 2 ]; do
		[ $(($1)) -eq $((_exp)) ] && [ $(($2)) -eq $((_exp ^ _flip)) ] &&
			_good=$((_good + 1))
		shift 2
	done
	if [ "$_n" -eq "$_want" ] && [ $_good -eq "$_want" ]; then
		ok "$_want x '$_msg'"
	else
		bad "expected $_want x '$_msg', saw $_n such lines ($_good matching):"
		klog_new | sed 's/^/    /'
	fi
}

# expect_io_error OP LBA SC: the I/O failed with NVMe status (sct 0x2 / sc
# SC) in the nvme core's log and a protection error in the block layer's
expect_io_error() {
	case $1 in
	read) _op=0x2 _bop='0x0:\(READ\)' ;;
	*) _op=0x1 _bop='0x1:\(WRITE\)' ;;
	esac
	klog_has "nvme core logs the status" \
		"^$NSP: (I/O Cmd|Read|Write)\($_op\) @ LBA $2, 1 blocks, .*\(sct 0x2 / sc $3\) ?$"
	klog_has "the block layer logs a protection error" \
		"^protection error, dev $NSP, sector $2 op $_bop "
}

# block_of FILE LBA: block LBA (512 bytes) of FILE, to stdout
block_of() { dd if="$1" bs=512 skip="$2" count=1 2>/dev/null; }

# expect_block DESC DEV LBA FILE: block LBA of DEV (O_DIRECT) equals
# block LBA of FILE
expect_block() {
	if dd if="$2" of=/tmp/blk bs=4k iflag=direct,skip_bytes,count_bytes \
		skip=$(($3 * 512)) count=512 2>/dev/null &&
		block_of "$4" "$3" | cmp -s - /tmp/blk; then
		ok "$1: block $3 of $2 equal"
	else
		bad "$1: block $3 of $2 differs (or cannot be read)"
	fi
}

# read_fails FIELD SC TYPE LBA EXPECTED: every attempt of a 512-byte read
# of LBA damaged in FIELD: the read fails with EILSEQ (status SC), the
# host's integrity MR caught each attempt (error TYPE, EXPECTED: the value
# it expected)
read_fails() {
	klog_mark
	inject "$1" "$TRIES"
	if rd1 $NS "$4" /dev/null; then
		bad "read of block $4 with $1 damaged $TRIES times succeeded"
	elif run_out | grep -q 'Invalid or incomplete multibyte or wide character'; then
		ok "the read failed with EILSEQ (BLK_STS_PROTECTION)"
	else
		bad "the read failed, but not with EILSEQ"
	fi
	expect_knob0 "$1"
	expect_pi_errors nvme_rdma "$3" "$TRIES" "$5"
	klog_lacks "the target saw nothing wrong" "^nvmet_rdma: PI error"
	expect_io_error read "$4" "$2"
	expect_block "the next read works" $NS "$4" /tmp/pat
}

# write_fails FIELD SC TYPE LBA EXPECTED: every attempt of a 512-byte
# write of a new block to LBA damaged in FIELD: the target's integrity MR
# caught each (error TYPE, EXPECTED: the value it expected, "crc" for the
# CRC of the new block), the write fails with EILSEQ (status SC) and the
# disk keeps the old block; then the block is written without damage
write_fails() {
	dd if=/dev/urandom of=/tmp/new bs=512 count=1 2>/dev/null
	klog_mark
	inject "$1" "$TRIES"
	if wr1 /tmp/new $NS "$4"; then
		bad "write of block $4 with $1 damaged $TRIES times succeeded"
	elif run_out | grep -q "error writing '$NS': Invalid or incomplete multibyte or wide character"; then
		ok "the write failed with EILSEQ (BLK_STS_PROTECTION)"
	else
		bad "the write failed, but not with EILSEQ"
	fi
	expect_knob0 "$1"
	klog_lacks "the host's integrity MR saw nothing wrong" "^nvme_rdma: PI error"
	expect_io_error write "$4" "$2"
	expect_block "/dev/$SD keeps the old block" "/dev/$SD" "$4" /tmp/pat
	must "the write without damage" \
		wr1 /tmp/new $NS "$4"
	dd if=/tmp/new of=/tmp/pat bs=512 count=1 seek="$4" conv=notrunc 2>/dev/null
	expect_block "through the host" $NS "$4" /tmp/pat
	expect_block "on the disk" "/dev/$SD" "$4" /tmp/pat
	_e=$5
	if [ "$_e" = crc ]; then
		# the guard the target computed: the CRC of the new block
		_e=$(tuple "$4" | sed -n 's/.* crc \(0x[0-9a-f]*\) .*/\1/p')
	fi
	expect_pi_errors nvmet_rdma "$3" "$TRIES" "${_e:-0x10000}"
}

if [ $PI = 0 ]; then
	info "$DRV_TYPE: no T10-PI, no softhca fault injection: skipped"
else
	title "fault injection: tuples damaged on the wire"
	for f in guard reftag apptag; do
		expect_eq "$DBG/corrupt_$f" 0 "$(cat "$DBG/corrupt_$f" 2>&1)"
	done
	RETRIES=$(cat /sys/module/nvme_core/parameters/max_retries)
	TRIES=$((RETRIES + 1))
	info "nvme_core max_retries $RETRIES: a block I/O is tried $TRIES times"

	R1=1000		# in the 1 MiB segment
	title "READ, guard damaged once: caught by the host, the retry succeeds"
	CRC1=$(tuple $R1 | sed -n 's/.* crc \(0x[0-9a-f]*\) .*/\1/p')
	klog_mark
	inject guard 1
	must "read of block $R1" rd1 $NS $R1 /tmp/blk
	expect_knob0 guard
	expect_pi_errors nvme_rdma 0 1 "$CRC1"
	if block_of /tmp/pat $R1 | cmp -s - /tmp/blk; then
		ok "the block read after the retry is the one written"
	else
		bad "the block read after the retry differs"
	fi
	klog_lacks "no I/O error logged" "I/O Error|protection error|I/O Cmd"

	title "READ, guard damaged in every attempt"
	read_fails guard 0x82 0 $R1 "$CRC1"
	title "READ, ref tag damaged in every attempt"
	R2=35600	# in the segment of 333 blocks
	read_fails reftag 0x84 1 $R2 $R2

	title "WRITE, guard damaged in every attempt: caught by the target"
	W1=28679	# in the 4 KiB segment
	write_fails guard 0x82 0 $W1 crc
	title "WRITE, ref tag damaged in every attempt: caught by the target"
	W2=40123	# in the 128 KiB segment
	write_fails reftag 0x84 1 $W2 $W2

	title "app tag: damaged, not checked by block I/O (no PRCHK_APP, LBATM 0)"
	A1=40500	# in the 128 KiB segment
	dd if=/dev/urandom of=/tmp/new bs=512 count=1 2>/dev/null
	klog_mark
	inject apptag 1
	must "write of block $A1 with its app tag damaged" \
		wr1 /tmp/new $NS $A1
	expect_knob0 apptag
	dd if=/tmp/new of=/tmp/pat bs=512 count=1 seek=$A1 conv=notrunc 2>/dev/null
	expect_block "on the disk" "/dev/$SD" $A1 /tmp/pat
	# nvmet-rdma checks what the command asks for, scsi_debug and the
	# block layer check guard and ref tag: the damaged tag is stored
	expect_tuple "the damaged app tag went to the disk" $A1 0x0001
	inject apptag 1
	must "read of block $A1 with its app tag damaged (the host checks guard and ref tag only)" \
		rd1 $NS $A1 /tmp/blk
	expect_knob0 apptag
	inject apptag 1
	expect_tuple "a READ carries the damage to the host (passthrough: the tuple as it arrives)" \
		$R1 0x0001
	expect_knob0 apptag
	expect_tuple "the stored tuple is intact" $R1 0x0000
	klog_lacks "no PI error logged" "PI error|I/O Error|protection error"

	title "app tag checked when asked: passthrough WRITE with PRCHK_APP, LBAT, LBATM 0xffff"
	P=60000		# outside the pattern
	run shca_nvme_pi $NS write $P 0x1234
	expect_eq "passthrough write of block $P, app tag 0x1234" "status 0x0" "$(run_out)"
	expect_tuple "stored" $P 0x1234
	klog_mark
	inject apptag 1
	run shca_nvme_pi $NS write $P 0x5678
	expect_eq "the same with the app tag damaged once: End-to-end Application Tag Check Error" \
		"status 0x283" "$(run_out)"
	expect_knob0 apptag
	expect_pi_errors nvmet_rdma 2 1 0x5678 0x1
	klog_lacks "the host's integrity MR saw nothing wrong" "^nvme_rdma: PI error"
	expect_tuple "the refused write left the block as it was" $P 0x1234
	klog_mark
	inject guard 1
	run shca_nvme_pi $NS write $P 0x5678
	expect_eq "passthrough write, guard damaged once (passthrough is not retried): End-to-end Guard Check Error" \
		"status 0x282" "$(run_out)"
	expect_knob0 guard
	expect_tuple "the refused write left the block as it was" $P 0x1234
	run shca_nvme_pi $NS write $P 0x5678
	expect_eq "without damage it is written" "status 0x0" "$(run_out)"
	expect_tuple "stored" $P 0x5678
	# the guard the target expected: the CRC of the block now written
	expect_pi_errors nvmet_rdma 0 1 \
		"$(tuple $P | sed -n 's/.* crc \(0x[0-9a-f]*\) .*/\1/p')"
fi

title "data after all that"
verify_all "at the end"
_kmark=0
klog_lacks "no PI complaint from the block layer or scsi_debug in the whole test" \
	"tag error|check failed"

title "teardown"
disconnect
must "nvmet configuration removed" nvmet_teardown
must "rmmod nvme_rdma nvmet_rdma" rmmod nvme_rdma nvmet_rdma
must "rmmod sd_mod scsi_debug" rmmod sd_mod scsi_debug
_kmark=0
klog_lacks "no warning, oops or blocked task in the kernel log" \
	"WARNING:|BUG:|Oops|blocked for more than|hung_task"
expect_pins 5
# What the ULPs held on $D0 is gone: its rdma res is the baseline's, but
# for the CQs of the core's shared pool (ib_cq_pool_get(), which nvme-rdma
# and nvmet-rdma take their queues' CQs from): they stay, idle, until the
# device goes.
run rdma res show cq dev "$D0"
POOL=$(run_out | grep -c ' users 0 .*comm \[ib_core\]')
CQ0=$(res0 "$D0" | sed -n 's/.* cq=\([0-9]*\) .*/\1/p')
expect_eq "rdma res of $D0 (with $POOL idle CQs of the core's pool)" \
	"$(res0 "$D0" | sed "s/ cq=[0-9]*/ cq=$((CQ0 + POOL))/")" "$(res_of "$D0")"
