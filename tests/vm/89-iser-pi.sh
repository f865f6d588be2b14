#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# iSCSI over iSER with T10 protection information over softhca0, the
# kernel's own ULPs on both sides and stock open-iscsi userspace: the LIO
# target (configfs only, no targetcli) serves a fileio backstore with DIF
# type 1 (pi_prot_type, pi_prot_format; its tuples in a .protection file
# next to it) through the isert transport (np .../iser, tpg attrib t10_pi);
# the iSER initiator (ib_iser pi_enable=1) logs in over softhca0 with
# iscsid and iscsiadm -I iser (SendTargets discovery over iSER, then the
# login). PI is negotiated end to end: isert turns "PI offload enabled"
# for the session, READ CAPACITY(16) reports PROT_EN, and the disk's
# integrity/format is T10-DIF-TYPE1-IP: the initiator keeps IP-checksum
# guards in memory (DIX) and softhca's T10-DIF engine converts them to
# and from CRC guards on the wire, which the target's core checks in
# software on every write and every read (pi_prot_verify), as the block
# layer checks the IP checksums of every read. 32 MiB of random data
# written O_DIRECT (1 MiB and 4 KiB writes) reads back equal through the
# disk and in the backstore file, with ref tag = LBA and app tag 0 in the
# stored tuples.
#
# Then softhca's fault injection (debugfs softhca/corrupt_{guard,reftag,
# apptag}: the next N tuples leaving memory for the wire are damaged):
# a READ with a damaged guard or ref tag is caught by the initiator's
# integrity MR (iser_check_task_pi_status, libiscsi builds ILLEGAL REQUEST
# 10/01 or 10/03), a WRITE by the target's (isert_check_pi_status, the
# target returns ABORTED COMMAND 10/01 or 10/03 and writes nothing); the
# exact "PI error found" lines (the failing sector, the expected guard =
# the CRC stored in the backstore, the expected ref tag = LBA, the actual
# value = the expected one with the bit softhca flips), the SCSI sense and
# CDB (RDPROTECT/WRPROTECT 1) and the block layer's "protection error"
# are asserted, dd fails with EILSEQ, and the next I/O works. Neither
# iSER nor isert asks for the app tag to be checked (type 1): a damaged
# app tag goes through and is stored as it arrived. Logout, iscsid
# stopped, the target torn down, the modules unloaded: nothing left on
# softhca0 but the core's idle CQ pool, no warning or blocked task.
#
# rdma_rxe has no IBK_INTEGRITY_HANDOVER: with --driver rxe the test has
# nothing to do. VMT_ISER_MIB (default 32) sets the MiB of the data check.
# vm-test-timeout: 180
# shellcheck disable=SC1091
. /tests/lib.sh

if [ "$DRV_TYPE" = rxe ]; then
	info "rdma_rxe has no IBK_INTEGRITY_HANDOVER (no T10-PI offload for iSER/isert): nothing to do for $DRV_TYPE"
	exit 0
fi
for _p in iscsid iscsiadm; do
	command -v "$_p" >/dev/null ||
		die "$_p missing: scripts/deps.sh vm installs open-iscsi (scripts/vm/binaries.list)"
done

D0=${DRV_TYPE}0
A0=10.0.2.15
PORT=3260
IQN=iqn.2003-01.org.linux-iscsi.vm:softhca-pi
INAME=iqn.2003-01.org.linux-iscsi.vm:initiator
T=/sys/kernel/config/target
TPG=$T/iscsi/$IQN/tpgt_1
NP=$TPG/np/$A0:$PORT
BS=$T/core/fileio_0/disk0
DIR=/srv/iser
DISK=$DIR/disk0
PROT=$DISK.protection
DISK_MIB=64
MIB=${VMT_ISER_MIB:-32}
DBG=/sys/kernel/debug/softhca
EILSEQ='Invalid or incomplete multibyte or wide character'
ISCSID=
SD=

vm_setup "$D0"
# A task blocked for 20 s is reported (the default, 120 s, is beyond the test).
[ ! -w /proc/sys/kernel/hung_task_timeout_secs ] ||
	echo 20 >/proc/sys/kernel/hung_task_timeout_secs

klog_mark
# klog_once DESC LINE: exactly one line since the mark is LINE
klog_once() {
	_n=$(klog_new | grep -c -x -F -e "$2")
	if [ "$_n" -eq 1 ]; then
		ok "$1: '$2'"
	else
		bad "$1: expected the line '$2' once, saw it $_n times in:"
		klog_new | sed 's/^/    /'
	fi
}

# wr FILE VALUE: write VALUE to a configfs or sysfs file (bounded)
wr() {
	echo "  \$ echo $2 > $1"
	# shellcheck disable=SC2016
	timeout -k 5 30 sh -c 'printf "%s\n" "$2" >"$1"' wr "$1" "$2"
	_rc=$?
	[ $_rc -eq 0 ] || echo "    (exit status $_rc)"
	return $_rc
}

# ---- target and initiator, set up and torn down ------------------------------

# target_setup: a fileio backstore of $DISK_MIB MiB on a tmpfs with DIF
# type 1, exported as LUN 0 of $IQN, portal group 1 on $A0:$PORT with an
# iSER portal, demo mode (any initiator, no authentication, writable) and
# T10-PI for isert
target_setup() {
	run mkdir -p "$DIR" &&
	run mount -t tmpfs -o size=$((DISK_MIB + 8))m iserdisk "$DIR" &&
	run truncate -s $((DISK_MIB * 1048576)) "$DISK" &&
	run mkdir -p "$BS" &&
	wr "$BS/control" "fd_dev_name=$DISK,fd_dev_size=$((DISK_MIB * 1048576))" &&
	wr "$BS/enable" 1 &&
	wr "$BS/attrib/pi_prot_type" 1 &&
	wr "$BS/attrib/pi_prot_format" 1 &&
	run mkdir -p "$TPG/lun/lun_0" &&
	run ln -s "$BS" "$TPG/lun/lun_0/disk0" &&
	run mkdir "$NP" &&
	wr "$NP/iser" 1 &&
	wr "$TPG/attrib/generate_node_acls" 1 &&
	wr "$TPG/attrib/cache_dynamic_acls" 1 &&
	wr "$TPG/attrib/authentication" 0 &&
	wr "$TPG/attrib/demo_mode_write_protect" 0 &&
	wr "$TPG/attrib/t10_pi" 1 &&
	wr "$TPG/enable" 1
}

# target_teardown: undo target_setup, whatever part of it was done
target_teardown() {
	_r=0
	[ ! -L "$TPG/lun/lun_0/disk0" ] || run rm "$TPG/lun/lun_0/disk0" || _r=1
	[ ! -d "$TPG/lun/lun_0" ] || run rmdir "$TPG/lun/lun_0" || _r=1
	if [ -d "$TPG" ]; then
		[ "$(cat "$TPG/enable")" = 0 ] || wr "$TPG/enable" 0 || _r=1
	fi
	[ ! -d "$NP" ] || run rmdir "$NP" || _r=1
	[ ! -d "$TPG" ] || run rmdir "$TPG" || _r=1
	[ ! -d "$T/iscsi/$IQN" ] || run rmdir "$T/iscsi/$IQN" || _r=1
	[ ! -d "$T/iscsi" ] || run rmdir "$T/iscsi" || _r=1
	[ ! -d "$BS" ] || run rmdir "$BS" || _r=1
	[ ! -d "${BS%/*}" ] || run rmdir "${BS%/*}" || _r=1
	! grep -q " $DIR " /proc/mounts || run umount "$DIR" || _r=1
	return "$_r"
}

# iscsid_start: the initiator's configuration (written here: the guest has
# none) and iscsid in the foreground, in a session of its own (on SIGTERM
# iscsid signals its whole process group)
iscsid_start() {
	mkdir -p /etc/iscsi /run/lock/iscsi || return 1
	echo "InitiatorName=$INAME" >/etc/iscsi/initiatorname.iscsi || return 1
	cat >/etc/iscsi/iscsid.conf <<-EOF || return 1
	node.startup = manual
	node.session.timeo.replacement_timeout = 10
	node.conn[0].timeo.login_timeout = 15
	node.conn[0].timeo.logout_timeout = 15
	node.session.initial_login_retry_max = 2
	EOF
	echo "  \$ setsid iscsid -f >/tmp/iscsid.log 2>&1 &"
	setsid iscsid -f >/tmp/iscsid.log 2>&1 &
	ISCSID=$!
	# iscsid listens for iscsiadm on an abstract unix socket
	wait_for 10 grep -q '@ISCSIADM_ABSTRACT_NAMESPACE' /proc/net/unix
}

iscsid_alive() { [ -n "$ISCSID" ] && kill -0 "$ISCSID" 2>/dev/null; }
# iscsid_log: what iscsid said (stderr: it runs in the foreground)
iscsid_log() { sed 's/^/    iscsid: /' /tmp/iscsid.log; }

# iscsiadm_run SECS ARGS...: run() iscsiadm, with iscsid's log if it fails
iscsiadm_run() {
	_s=$1
	shift
	run_t "$_s" iscsiadm "$@" && return 0
	_r=$_rc
	iscsid_log
	return "$_r"
}
iscsid_gone() { ! iscsid_alive; }

# iscsid_stop: ask iscsid to stop (iscsiadm -k 0), kill it if it does not
iscsid_stop() {
	iscsid_alive || return 0
	run iscsiadm -k 0
	if wait_for 10 iscsid_gone; then
		ISCSID=
		return 0
	fi
	kill "$ISCSID" 2>/dev/null
	wait_for 5 iscsid_gone
	ISCSID=
	return 1
}

sessions() { ls /sys/class/iscsi_session 2>/dev/null; }
no_session() { [ -z "$(sessions)" ]; }

# sd_disk: the disk of the iSCSI session
sd_disk() {
	for _b in /sys/class/iscsi_session/session*/device/target*/*:*:*:*/block/*; do
		[ -e "$_b" ] && echo "${_b##*/}" && return 0
	done
	return 1
}
sd_gone() { [ ! -e "/sys/block/$SD" ]; }

# cm_listening PORT: an rdma_cm ID of ib_isert listens on PORT
cm_listening() {
	rdma res show cm_id 2>/dev/null | grep 'state LISTEN' | grep 'ib_isert' |
		grep -q ":$1 "
}
# no_ulp_cm_id: no rdma_cm ID of ib_iser or ib_isert is left
no_ulp_cm_id() { ! rdma res show cm_id 2>/dev/null | grep -q 'comm \[ib_iser'; }

ULP_MODS="ib_iser libiscsi scsi_transport_iscsi ib_isert iscsi_target_mod target_core_file target_core_mod sd_mod crc32c_generic"

# On any early exit: log out, stop iscsid, tear the target down, unload
# the modules and remove the initiator's files, so that the next test
# finds the guest as it was.
_iser_exit() {
	_xrc=$?
	trap - EXIT
	{
		no_session || timeout 30 iscsiadm -m node -U all
		iscsid_stop
		target_teardown
		# shellcheck disable=SC2086
		rmmod $ULP_MODS
	} >/dev/null 2>&1
	rm -rf /etc/iscsi /run/lock/iscsi /tmp/iscsid.log /tmp/pat /tmp/back \
		/tmp/blk /tmp/new /tmp/small /tmp/small.back /tmp/klog.bad
	(exit $_xrc)
	_vm_exit
}
trap _iser_exit EXIT

# ---- helpers for data and PI -------------------------------------------------

# tuple LBA: the tuple stored with block LBA in the backstore's .protection
# file, as "guard 0xGGGG app 0xAAAA ref 0xRRRRRRRR"
tuple() {
	_t=$(od -An -tx1 -j $(($1 * 8)) -N 8 "$PROT" | tr -d ' \n')
	echo "guard 0x$(echo "$_t" | cut -c1-4) app 0x$(echo "$_t" | cut -c5-8) ref 0x$(echo "$_t" | cut -c9-16)"
}
# guard_of LBA: the guard stored with block LBA
guard_of() { tuple "$1" | sed -n 's/^guard \(0x[0-9a-f]*\) .*/\1/p'; }

# expect_tuple DESC LBA APP: the stored tuple of LBA has app tag APP and
# ref tag LBA (the guard was checked by the target core when it was
# written: pi_prot_verify)
expect_tuple() {
	_t=$(tuple "$2")
	_g=$(echo "$_t" | cut -d' ' -f2)
	expect_eq "$1: stored tuple of block $2" \
		"guard $_g app $3 ref $(printf 0x%08x "$2")" "$_t"
}

# Every I/O of the fault checks is one page-aligned 4 KiB O_DIRECT I/O
# (8 blocks; busybox dd mmap()s its buffer for bs >= 4 KiB), at an LBA
# that is a multiple of 8.
# rd4k LBA OUT: run() the read of LBA, into OUT
rd4k() {
	run dd if="/dev/$SD" of="$2" bs=4k skip=$(($1 / 8)) count=1 iflag=direct
}
# wr4k IN LBA: run() the write of IN to LBA
wr4k() {
	run dd if="$1" of="/dev/$SD" bs=4k seek=$(($2 / 8)) count=1 oflag=direct
}
# pat4k LBA: the 4 KiB of /tmp/pat at LBA, to stdout
pat4k() { dd if=/tmp/pat bs=4k skip=$(($1 / 8)) count=1 2>/dev/null; }
# backstore4k LBA: the 4 KiB of the backstore file at LBA, to stdout
backstore4k() { dd if="$DISK" bs=4k skip=$(($1 / 8)) count=1 2>/dev/null; }
# pat_put FILE LBA: the 4 KiB of FILE are now at LBA of /tmp/pat
pat_put() {
	dd if="$1" of=/tmp/pat bs=4k seek=$(($2 / 8)) count=1 conv=notrunc 2>/dev/null
}

# expect_block DESC LBA: the 4 KiB at LBA read through the disk and in the
# backstore file equal /tmp/pat
expect_block() {
	if rd4k "$2" /tmp/blk >/dev/null && pat4k "$2" | cmp -s - /tmp/blk; then
		ok "$1: the 4 KiB at block $2 read through /dev/$SD equal"
	else
		bad "$1: the 4 KiB at block $2 read through /dev/$SD differ (or cannot be read)"
	fi
	if backstore4k "$2" >/tmp/blk && pat4k "$2" | cmp -s - /tmp/blk; then
		ok "$1: the 4 KiB at block $2 in the backstore equal"
	else
		bad "$1: the 4 KiB at block $2 in the backstore differ"
	fi
}

# cdb_lba LBA: the LBA bytes of a READ(10)/WRITE(10) as the sense log
# prints them
cdb_lba() {
	printf '%02x %02x %02x %02x' $(($1 >> 24 & 255)) $(($1 >> 16 & 255)) \
		$(($1 >> 8 & 255)) $(($1 & 255))
}

# inject FIELD N: damage FIELD (guard, reftag, apptag) in the next N tuples
inject() {
	echo "  \$ echo $2 > $DBG/corrupt_$1"
	echo "$2" >"$DBG/corrupt_$1"
}
expect_knob0() {
	expect_eq "corrupt_$1 back to 0 (the damage was done)" 0 \
		"$(cat "$DBG/corrupt_$1")"
}

# scsi_failed OP LBA ASC SENSEKEY: the SCSI command OP ("Read", "Write")
# of 8 blocks at LBA failed with SENSEKEY and the additional sense ASC,
# its CDB has RDPROTECT/WRPROTECT 1, and the block layer logged a
# protection error (BLK_STS_PROTECTION)
scsi_failed() {
	case $1 in
	Read) _oc=28 _bop='0x0:\(READ\)' ;;
	*) _oc=2a _bop='0x1:\(WRITE\)' ;;
	esac
	klog_has "sense key" "^sd [0-9:]+: \[$SD\] tag#[0-9]+ Sense Key : $4 $"
	klog_has "additional sense" "^sd [0-9:]+: \[$SD\] tag#[0-9]+ Add\. Sense: $3$"
	klog_has "the command carried PI (PROTECT 1)" \
		"^sd [0-9:]+: \[$SD\] tag#[0-9]+ CDB: $1\(10\) $_oc 20 $(cdb_lba "$2") 00 00 08 00$"
	klog_has "the block layer logs a protection error" \
		"^protection error, dev $SD, sector $2 op $_bop "
}

# read_fault FIELD TYPE LBA EXPECTED ASC: a READ of LBA with FIELD
# damaged in its first tuple fails: the initiator's integrity MR reports
# error TYPE at LBA with the value EXPECTED and the damaged one; the
# target saw nothing wrong; the next read works
read_fault() {
	klog_mark
	inject "$1" 1
	if rd4k "$3" /tmp/blk; then
		bad "the read of block $3 with its $1 damaged succeeded"
	elif run_out | grep -q "$EILSEQ"; then
		ok "the read failed with EILSEQ (BLK_STS_PROTECTION)"
	else
		bad "the read failed, but not with EILSEQ"
	fi
	expect_knob0 "$1"
	klog_once "iser's integrity MR caught it" \
		"iser: iser_check_task_pi_status: PI error found type $2 at sector $(printf %x "$3") expected $(printf %x $(($4))) vs actual $(printf %x $(($4 ^ 0x100)))"
	klog_lacks "the target saw nothing wrong" "^isert: .*PI error|DIFv1"
	scsi_failed Read "$3" "$5" 'Illegal Request \[current\] \[descriptor\]'
	expect_block "the next read works" "$3"
}

# write_fault FIELD TYPE LBA ASC: a WRITE of new data to LBA with FIELD
# damaged in its first tuple fails: the target's integrity MR reports
# error TYPE at LBA (the expected value: the CRC of the new block, or
# LBA); the target writes nothing; the write without damage works
write_fault() {
	dd if=/dev/urandom of=/tmp/new bs=4k count=1 2>/dev/null
	_old=$(tuple "$3")
	klog_mark
	inject "$1" 1
	if wr4k /tmp/new "$3"; then
		bad "the write of block $3 with its $1 damaged succeeded"
	elif run_out | grep -q "error writing '/dev/$SD': $EILSEQ"; then
		ok "the write failed with EILSEQ (BLK_STS_PROTECTION)"
	else
		bad "the write failed, but not with EILSEQ"
	fi
	expect_knob0 "$1"
	klog_lacks "the initiator's integrity MR saw nothing wrong" "^iser: .*PI error"
	scsi_failed Write "$3" "$4" 'Aborted Command \[current\]'
	if backstore4k "$3" >/tmp/blk && pat4k "$3" | cmp -s - /tmp/blk; then
		ok "the refused write left the backstore as it was"
	else
		bad "the refused write changed the backstore"
	fi
	expect_eq "the refused write left the stored tuple of block $3 as it was" \
		"$_old" "$(tuple "$3")"
	must "the write without damage" wr4k /tmp/new "$3"
	pat_put /tmp/new "$3"
	expect_block "written" "$3"
	expect_tuple "written" "$3" 0x0000
	if [ "$1" = guard ]; then
		_e=$(guard_of "$3")	# the CRC of the new block
	else
		_e=$3
	fi
	klog_once "isert's integrity MR caught it" \
		"isert: isert_check_pi_status: PI error found type $2 at sector 0x$(printf %x "$3") expected 0x$(printf %x $((_e))) vs actual 0x$(printf %x $((_e ^ 0x100)))"
}

# ---- the test ----------------------------------------------------------------

title "modules"
must "crc32c (iSCSI logins hash with it)" modprobe crc32c_generic
must "LIO target core, fileio backstore, iSCSI target" \
	modprobe -a target_core_mod target_core_file iscsi_target_mod
# debug_level 2: isert logs whether a connection gets PI ("PI offload
# enabled/disabled"); debug_level 1: iser logs "T10-PI requested but not
# supported" if the device lacks the offload
must "isert" modprobe ib_isert debug_level=2
must "iser with T10-PI (pi_enable=1)" modprobe ib_iser pi_enable=1 debug_level=1
must "sd" modprobe sd_mod
grep -q ' /sys/kernel/config ' /proc/mounts ||
	mount -t configfs none /sys/kernel/config
expect_eq "ib_iser pi_enable" Y "$(cat /sys/module/ib_iser/parameters/pi_enable)"

title "target: LIO fileio backstore with DIF type 1, iSER portal $A0:$PORT"
must "target configured through configfs" target_setup
expect_eq "backstore attrib/pi_prot_type" 1 "$(cat "$BS/attrib/pi_prot_type")"
expect_eq "backstore attrib/pi_prot_verify (the target core checks PI)" 1 \
	"$(cat "$BS/attrib/pi_prot_verify")"
expect_eq "portal group attrib/t10_pi" 1 "$(cat "$TPG/attrib/t10_pi")"
expect_eq "portal iser" 1 "$(cat "$NP/iser")"
expect_eq "the .protection file: 8 bytes per block" $((DISK_MIB * 2048 * 8)) \
	"$(stat -c %s "$PROT")"
expect_eq "formatted (pi_prot_format): escape tuples" \
	"guard 0xffff app 0xffff ref 0xffffffff" "$(tuple 0)"
if wait_for 10 cm_listening $PORT; then
	ok "isert listens on $D0 port $PORT"
else
	bad "no rdma_cm ID of ib_isert listens on port $PORT"
	run rdma res show cm_id
fi

title "initiator: iscsid, discovery and login over iSER"
iscsid_start || {
	iscsid_log
	die "iscsid did not start"
}
ok "iscsid runs (pid $ISCSID)"
run iscsiadm -m iface
if run_out | grep -q -x 'iser iser,<empty>,<empty>,<empty>,<empty>'; then
	ok "open-iscsi has its iser iface"
else
	bad "no iser iface in iscsiadm -m iface"
fi
must "SendTargets discovery over iSER" \
	iscsiadm_run 60 -m discovery -t st -p $A0:$PORT -I iser
# libiscsi hands the login response to iscsid (iscsi_recv_pdu) before it
# completes the login task (__iscsi_complete_pdu, drivers/scsi/libiscsi.c),
# and the sender's reference may outlive both: an iscsid quick enough to
# send its SendTargets Text PDU in between is refused ("Login/Text in
# progress. Cannot start new task.") and iscsiadm reconnects and asks again.
# A fast transport opens that window; the record must still come out.
if run_out | grep -q -x 'iscsiadm: failed to send SendTargets PDU'; then
	info "iscsiadm asked twice (libiscsi's login-task race, see above)"
fi
expect_eq "discovered" "$A0:$PORT,1 $IQN" \
	"$(run_out | grep -v -x 'iscsiadm: failed to send SendTargets PDU')"
# The discovery session belongs to the target's discovery portal group,
# which has no t10_pi: isert logs "PI offload disabled" for it. The
# marks below leave it out.
klog_mark
must "login over iSER" \
	iscsiadm_run 60 -m node -T $IQN -p $A0:$PORT -I iser --login
expect_eq "login" \
	"Login to [iface: iser, target: $IQN, portal: $A0,$PORT] successful." \
	"$(run_out | tail -n 1)"
run iscsiadm -m session
if run_out | grep -q -x -E "iser: \[[0-9]+\] $A0:$PORT,1 $IQN \(non-flash\)"; then
	ok "one session, transport iser"
else
	bad "no iser session to $IQN"
fi
wait_for 20 sd_disk >/dev/null || die "no SCSI disk for the session"
SD=$(sd_disk)
SESS=$(sessions | head -n 1)
HOST=$(readlink -f "/sys/block/$SD/device" | sed -n 's|.*/\(host[0-9]*\)/.*|\1|p')
info "session $SESS, SCSI $HOST, disk /dev/$SD"
expect_eq "$HOST proc_name" iscsi_iser "$(cat "/sys/class/scsi_host/$HOST/proc_name")"
run rdma res show cm_id
for m in ib_iser ib_isert; do
	if run_out | grep "comm \[$m\]" | grep -q "link $D0/1 .*state CONNECT"; then
		ok "$m's connection is on $D0"
	else
		bad "no connected rdma_cm ID of $m on $D0"
	fi
done

title "T10-PI negotiated end to end"
klog_has "isert enables PI for the session" \
	"^isert: isert_get_sup_prot_ops: conn [0-9a-f]+ PI offload enabled$"
klog_lacks "no fallback without PI in iser or isert" \
	"T10-PI requested but not supported|PI offload disabled"
# iser_dif_prot_caps(): softhca's sig_prot_cap (types 1, 2, 3) gives
# DIF types 1-3 and DIX types 0-3; sig_guard_cap: CRC and IP checksum
expect_eq "$HOST prot_capabilities (DIF 1-3, DIX 0-3)" 127 \
	"$(cat "/sys/class/scsi_host/$HOST/prot_capabilities")"
expect_eq "$HOST prot_guard_type (CRC and IP checksum)" 3 \
	"$(cat "/sys/class/scsi_host/$HOST/prot_guard_type")"
expect_eq "/dev/$SD integrity/format" T10-DIF-TYPE1-IP \
	"$(cat "/sys/block/$SD/integrity/format")"
expect_eq "/dev/$SD integrity write_generate/read_verify" 1/1 \
	"$(cat "/sys/block/$SD/integrity/write_generate")/$(cat "/sys/block/$SD/integrity/read_verify")"
expect_eq "/dev/$SD protection_type" 1 \
	"$(cat "/sys/block/$SD/device/scsi_disk/"*/protection_type)"
klog_has "sd enables DIF" "^sd [0-9:]+: \[$SD\] Enabling DIF Type 1 protection$"
klog_has "sd enables DIX with IP checksums" \
	"^sd [0-9:]+: \[$SD\] Enabling DIX T10-DIF-TYPE1-IP, application tag size 2 bytes$"
# The target forces ImmediateData=No and InitialR2T=Yes on an iSER session
# with PI (immediate and unsolicited data cannot carry protection
# information): sysfs shows them as 0 and 1
expect_eq "$SESS immediate_data/initial_r2t (ImmediateData=No, InitialR2T=Yes)" 0/1 \
	"$(cat "/sys/class/iscsi_session/$SESS/immediate_data")/$(cat "/sys/class/iscsi_session/$SESS/initial_r2t")"

title "data: $MIB MiB O_DIRECT through iSER, PI checked on both sides"
klog_mark
dd if=/dev/urandom of=/tmp/pat bs=1M count="$MIB" 2>/dev/null
must "$MIB MiB written in 1 MiB writes" \
	run_t 120 dd if=/tmp/pat of="/dev/$SD" bs=1M oflag=direct conv=fsync
run_t 120 dd if="/dev/$SD" of=/tmp/back bs=1M count="$MIB" iflag=direct
if cmp -s /tmp/pat /tmp/back; then
	ok "$MIB MiB read back through /dev/$SD equal"
else
	bad "$MIB MiB read back through /dev/$SD differ"
fi
if cmp -s -n $((MIB * 1048576)) /tmp/pat "$DISK"; then
	ok "$MIB MiB in the backstore file equal"
else
	bad "$MIB MiB in the backstore file differ"
fi
rm -f /tmp/back
# 256 writes of 4 KiB at 40 MiB, read back with 4 KiB reads
SM=81920	# block
dd if=/dev/urandom of=/tmp/small bs=4k count=256 2>/dev/null
must "256 writes of 4 KiB at block $SM" \
	run_t 60 dd if=/tmp/small of="/dev/$SD" bs=4k seek=$((SM / 8)) oflag=direct
run_t 60 dd if="/dev/$SD" of=/tmp/small.back bs=4k skip=$((SM / 8)) count=256 iflag=direct
if cmp -s /tmp/small /tmp/small.back; then
	ok "256 reads of 4 KiB at block $SM equal"
else
	bad "256 reads of 4 KiB at block $SM differ"
fi
if cmp -s -n 1048576 /tmp/small "$DISK" 0 $((SM * 512)); then
	ok "the 1 MiB at block $SM in the backstore file equal"
else
	bad "the 1 MiB at block $SM in the backstore file differ"
fi
rm -f /tmp/small.back
for lba in 0 777 $((MIB * 2048 - 1)) $SM $((SM + 2047)); do
	expect_tuple "PI of the writes" "$lba" 0x0000
done
expect_eq "a block never written keeps its escape tuple" \
	"guard 0xffff app 0xffff ref 0xffffffff" "$(tuple $((DISK_MIB * 2048 - 1)))"
klog_lacks "no PI complaint: iser, isert, the target core (DIFv1), the block layer" \
	"PI error|DIFv1|tag error|check failed|protection error|I/O error"

title "fault injection: tuples damaged on the wire"
for f in guard reftag apptag; do
	expect_eq "$DBG/corrupt_$f" 0 "$(cat "$DBG/corrupt_$f" 2>&1)"
done

R1=800		# blocks in the 1 MiB writes
R2=20000
W1=1600
W2=40000
A1=30000

title "READ, guard damaged: caught by the initiator"
# the guard iser expects: the CRC of the block, as the target core checked
# and stored it
read_fault guard 0 $R1 "$(guard_of $R1)" 'Logical block guard check failed'
title "READ, ref tag damaged: caught by the initiator"
read_fault reftag 1 $R2 $R2 'Logical block reference tag check failed'
title "WRITE, guard damaged: caught by the target"
write_fault guard 0 $W1 'Logical block guard check failed'
title "WRITE, ref tag damaged: caught by the target"
write_fault reftag 1 $W2 'Logical block reference tag check failed'

title "app tag damaged: not checked by iSER or isert (type 1), stored as it came"
dd if=/dev/urandom of=/tmp/new bs=4k count=1 2>/dev/null
klog_mark
inject apptag 1
must "the write of block $A1 with its app tag damaged" wr4k /tmp/new $A1
expect_knob0 apptag
pat_put /tmp/new $A1
expect_tuple "the damaged app tag reached the backstore" $A1 0x0001
expect_tuple "the next tuple is intact" $((A1 + 1)) 0x0000
expect_block "written" $A1
inject apptag 1
must "the read of block $R1 with its app tag damaged" rd4k $R1 /tmp/blk
expect_knob0 apptag
if pat4k $R1 | cmp -s - /tmp/blk; then
	ok "the block read is the one written"
else
	bad "the block read differs"
fi
expect_tuple "the stored tuple of block $R1 is intact" $R1 0x0000
klog_lacks "no PI error logged" "PI error|protection error|check failed|DIFv1"

title "all the data after that"
klog_mark
run_t 120 dd if="/dev/$SD" of=/tmp/back bs=1M count="$MIB" iflag=direct
if cmp -s /tmp/pat /tmp/back; then
	ok "$MIB MiB read back through /dev/$SD equal"
else
	bad "$MIB MiB read back through /dev/$SD differ"
fi
if cmp -s -n $((MIB * 1048576)) /tmp/pat "$DISK"; then
	ok "$MIB MiB in the backstore file equal"
else
	bad "$MIB MiB in the backstore file differ"
fi
rm -f /tmp/back /tmp/blk /tmp/new /tmp/small
klog_lacks "no PI complaint" "PI error|DIFv1|tag error|check failed|protection error|I/O error"

title "logout and teardown"
must "logout" iscsiadm_run 60 -m node -T $IQN -p $A0:$PORT -I iser --logout
if wait_for 10 sd_gone && wait_for 10 no_session; then
	ok "/dev/$SD and the session are gone"
else
	bad "after logout: sessions '$(sessions)', /dev/$SD $(ls "/sys/block/$SD" >/dev/null 2>&1 && echo present)"
fi
must "node records deleted" run iscsiadm -m node -o delete
must "iscsid stopped (iscsiadm -k 0)" iscsid_stop
must "target configuration removed" target_teardown
if wait_for 10 no_ulp_cm_id; then
	ok "no rdma_cm ID of ib_iser or ib_isert left"
else
	bad "rdma_cm IDs of the ULPs left:"
	run rdma res show cm_id
fi
# shellcheck disable=SC2086
must "rmmod $ULP_MODS" run rmmod $ULP_MODS
rm -rf /etc/iscsi /run/lock/iscsi /tmp/iscsid.log /tmp/pat
_kmark=0
klog_lacks "no warning, oops or blocked task in the kernel log" \
	"WARNING:|BUG:|Oops|blocked for more than|hung_task"
expect_pins 5
# What the ULPs held on $D0 is gone: its rdma res is the baseline's, but
# for the CQs of the core's shared pool (ib_cq_pool_get(), which iser and
# isert take their CQs from): they stay, idle, until the device goes.
run rdma res show cq dev "$D0"
POOL=$(run_out | grep -c ' users 0 .*comm \[ib_core\]')
CQ0=$(res0 "$D0" | sed -n 's/.* cq=\([0-9]*\) .*/\1/p')
expect_eq "rdma res of $D0 (with $POOL idle CQs of the core's pool)" \
	"$(res0 "$D0" | sed "s/ cq=[0-9]*/ cq=$((CQ0 + POOL))/")" "$(res_of "$D0")"
