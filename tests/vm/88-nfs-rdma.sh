#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# NFS over RDMA over softhca0, nothing of ours on either side: the kernel's
# nfsd serves a tmpfs directory through its RPC-over-RDMA listener
# (svcrdma, `echo "rdma 20049" > /proc/fs/nfsd/portlist`), the kernel's
# NFSv4.2 client mounts it with proto=rdma,port=20049 (xprtrdma). Both
# ends use rpcrdma's RC QPs, connected through rdma_cm (softhca's GSI QP).
# Random data written through the mount with O_DIRECT and through the page
# cache is read back through the mount (O_DIRECT, and after drop_caches)
# and compared there and in the tmpfs the server exports. The client's
# transport counters show the payloads moved in RDMA chunks: read chunks
# (the server pulls WRITE data with RDMA READ) and write chunks (it pushes
# READ data with RDMA WRITE). Unmounting and stopping nfsd leave no
# rdma_cm ID, QP, CQ, MR or PD behind.
#
# No nfs-utils in the guest: the export is put into nfsd's export caches
# by hand, with the lines rpc.mountd writes when it answers nfsd's upcalls
# (ip_map_parse, svc_export_parse and expkey_parse in the kernel), and
# busybox's mount hands the options to the kernel unchanged, so they name
# the server's address (addr=) and the client's (clientaddr=), which
# mount.nfs would add. NFSv4 only: no rpcbind, mountd or lockd needed.
# See Documentation/ulp-testing.rst.
#
# NFS_MIB (default 16) sets the MiB of data each check writes.
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
A0=10.0.2.15
PORT=20049
MIB=${NFS_MIB:-16}
EXP=/srv/nfs
MNT=/mnt/nfs
NFSD=/proc/fs/nfsd
RPC=/proc/net/rpc
# the auth_domain the client's address maps to (any name)
DOM=softhca-test
# nfsd's legacy NFSv4 client recovery directory (nfs4_recoverydir): with
# it nfsd tracks its clients without nfsdcld, and its grace period can be
# ended at once through v4_end_grace
RECDIR=/var/lib/nfs/v4recovery
# export flags (include/uapi/linux/nfsd/export.h): INSECURE_PORT 0x2,
# NOSUBTREECHECK 0x400, FSID 0x2000 (tmpfs has no device number: the
# export is known by its fsid, 0, which makes it the NFSv4 root)
FLAGS=$((0x2 | 0x400 | 0x2000))
# the cache entries' expiry, in seconds since the epoch: never
NEVER=2147483647
OPTS=vers=4.2,proto=rdma,port=$PORT,addr=$A0,clientaddr=$A0

vm_setup "$D0"
dmesg -c >/dev/null

# wr FILE LINE: write LINE to a control file (bounded, as every step)
wr() {
	echo "  \$ echo \"$2\" > $1"
	# shellcheck disable=SC2016
	timeout -k 5 30 sh -c 'printf "%s\n" "$2" >"$1"' wr "$1" "$2"
	_rc=$?
	[ $_rc -eq 0 ] || echo "    (exit status $_rc)"
	return $_rc
}

# cm_listening PORT: an rdma_cm ID listens on PORT
cm_listening() {
	rdma res show cm_id 2>/dev/null | grep 'state LISTEN' | grep -q ":$1 "
}

# ulp_qps: the local QP numbers of rpcrdma's connected rdma_cm IDs
ulp_qps() {
	rdma res show cm_id 2>/dev/null |
		awk '/comm \[rpcrdma\]/ && / state CONNECT / {
			for (i = 1; i < NF; i++) if ($i == "lqpn") print $(i + 1) }'
}

no_ulp_cm_id() { ! rdma res show cm_id 2>/dev/null | grep -q 'comm \[rpcrdma\]'; }
mounted() { grep -q " $MNT nfs4 " /proc/mounts; }

# same DESC A B: files A and B are equal (cmp, bounded)
same() {
	if timeout -k 5 60 cmp -s "$2" "$3"; then
		ok "$1 equal"
	else
		bad "$1 differ"
	fi
}

nfs_server_stop() {
	_r=0
	if [ -e "$NFSD/threads" ]; then
		wr "$NFSD/threads" 0 || _r=1
		for _c in nfsd.fh nfsd.export auth.unix.ip; do
			wr "$RPC/$_c/flush" "$(date +%s)" || _r=1
		done
	fi
	! grep -q " $NFSD " /proc/mounts || run umount "$NFSD" || _r=1
	! grep -q " $EXP " /proc/mounts || run umount "$EXP" || _r=1
	rm -rf /var/lib/nfs
	return $_r
}

must "rpcrdma (svcrdma and xprtrdma)" modprobe rpcrdma
must "nfsd" modprobe nfsd
must "nfsv4 client" modprobe nfsv4

title "server: nfsd on rdma $A0:$PORT exporting $EXP (tmpfs)"
mkdir -p "$EXP" "$MNT" "$RECDIR"
must "tmpfs on $EXP" run mount -t tmpfs -o size=$((MIB * 2 + 16))m nfsexport "$EXP"
must "nfsd control filesystem on $NFSD" run mount -t nfsd nfsd "$NFSD"
must "NFSv4.x only" wr "$NFSD/versions" "-3 +4 +4.1 +4.2"
must "an RPC-over-RDMA listener on port $PORT" wr "$NFSD/portlist" "rdma $PORT"
must "2 nfsd threads" wr "$NFSD/threads" 2
run cat "$NFSD/portlist" "$NFSD/versions" "$NFSD/threads"
if wait_for 10 cm_listening $PORT; then
	ok "an rdma_cm ID listens on port $PORT"
else
	bad "nobody listens on port $PORT"
	run rdma res show cm_id
fi
# The export, as rpc.mountd would answer nfsd's upcalls: the client's
# address belongs to $DOM; $DOM may use $EXP; fsid 0 (FSID_NUM, type 1)
# is $EXP.
must "auth.unix.ip: $A0 is $DOM" wr "$RPC/auth.unix.ip/channel" \
	"nfsd $A0 $NEVER $DOM"
must "nfsd.export: $DOM may use $EXP" wr "$RPC/nfsd.export/channel" \
	"$DOM $EXP $NEVER $FLAGS 65534 65534 0"
must "nfsd.fh: fsid 0 is $EXP" wr "$RPC/nfsd.fh/channel" \
	"$DOM 1 \\x00000000 $NEVER $EXP"
# No client of an earlier instance can reclaim state: end the grace
# period now rather than waiting 90 s before the first OPEN.
must "NFSv4 grace period ended" wr "$NFSD/v4_end_grace" Y

title "client: mount -t nfs4 -o proto=rdma"
must "mount -t nfs4 -o $OPTS $A0:/ $MNT" \
	run_t 60 mount -t nfs4 -o "$OPTS" "$A0:/" "$MNT"
run grep " $MNT " /proc/mounts
if mounted && grep " $MNT nfs4 " /proc/mounts | grep -q ',proto=rdma,'; then
	ok "/proc/mounts: nfs4 with proto=rdma"
else
	bad "$MNT is not an nfs4 mount with proto=rdma"
fi
run rdma res show cm_id
run rdma res show qp
nq=0
for q in $(ulp_qps); do
	if rdma res show qp lqpn "$q" 2>/dev/null | grep -q 'type RC state RTS'; then
		nq=$((nq + 1))
	else
		bad "rpcrdma's QP $q is not an RC QP in RTS"
	fi
done
if [ $nq -ge 2 ]; then
	ok "$nq RC QPs in RTS belong to rpcrdma's connected rdma_cm IDs (client and server)"
else
	bad "rpcrdma holds $nq connected RC QPs, expected at least 2"
fi

title "data"
dd if=/dev/urandom of=/tmp/pat bs=1M count="$MIB" 2>/dev/null
run_t 120 dd if=/tmp/pat of="$MNT/direct" bs=1M oflag=direct conv=fsync
run_t 120 dd if="$MNT/direct" of=/tmp/back bs=1M iflag=direct
same "$MIB MiB written and read back with O_DIRECT through the mount" /tmp/pat /tmp/back
same "$MIB MiB in the server's $EXP/direct" /tmp/pat "$EXP/direct"
dd if=/dev/urandom of=/tmp/pat2 bs=1M count="$MIB" 2>/dev/null
run_t 120 dd if=/tmp/pat2 of="$MNT/cached" bs=64k conv=fsync
echo 3 >/proc/sys/vm/drop_caches
same "$MIB MiB written through the page cache, read back after drop_caches," \
	/tmp/pat2 "$MNT/cached"
same "$MIB MiB in the server's $EXP/cached" /tmp/pat2 "$EXP/cached"
rm -f /tmp/back /tmp/pat /tmp/pat2
# The client's RPC-over-RDMA counters (xprt_rdma_print_stats): read chunks
# (WRITE payloads the server pulled with RDMA READ), write chunks and the
# bytes the server wrote into them with RDMA WRITE (READ payloads: both
# files, once each), replies the client could not parse.
run grep 'xprt:' /proc/self/mountstats
# shellcheck disable=SC2046
set -- $(awk -v m="$MNT" '$1 == "device" { on = ($5 == m) }
	on && $1 == "xprt:" && $2 == "rdma" { print $13, $14, $17, $22; exit }' \
	/proc/self/mountstats)
if [ $# -ne 4 ]; then
	bad "no rdma transport statistics for $MNT in /proc/self/mountstats"
elif [ "$1" -gt 0 ] && [ "$2" -gt 0 ] &&
	[ "$3" -ge $((MIB * 2 * 1048576)) ] && [ "$4" -eq 0 ]; then
	ok "xprtrdma: $1 read chunks, $2 write chunks, $3 bytes written by the server with RDMA WRITE, no bad reply"
else
	bad "xprtrdma: $1 read chunks, $2 write chunks, $3 bytes by RDMA WRITE (expected >= $((MIB * 2)) MiB), $4 bad replies"
fi

title "unmount and stop"
must "umount $MNT" run_t 60 umount "$MNT"
! mounted || bad "$MNT still mounted"
must "nfsd stopped, its caches flushed, $EXP unmounted" nfs_server_stop
if wait_for 10 no_ulp_cm_id; then
	ok "no rdma_cm ID of rpcrdma left (connections and listeners gone)"
else
	bad "rpcrdma still holds rdma_cm IDs:"
	run rdma res show cm_id
fi
run rmmod nfsv4 nfs nfsd rpcrdma
if dmesg | grep -E 'WARNING:|BUG:|Oops|blocked for more than|hung_task' >/tmp/dmesg.bad; then
	bad "the kernel complained:"
	sed 's/^/    /' /tmp/dmesg.bad
fi
# res_back: softhca0 holds what it held at vm_setup (its GSI QP's objects)
res_back() { [ "$(res_of "$D0")" = "$(res0 "$D0")" ]; }
wait_for 10 res_back
vm_leftovers 5
