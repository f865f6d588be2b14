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
# No nfs-utils in the guest: see the NFS helpers of lib.sh and
# Documentation/ulp-testing.rst.
#
# NFS_MIB (default 16) sets the MiB of data each check writes.
# shellcheck disable=SC1091
. /tests/lib.sh

D0=${DRV_TYPE}0
A0=10.0.2.15
MIB=${NFS_MIB:-16}

vm_setup "$D0"
dmesg -c >/dev/null
nfs_modules

title "server: nfsd on rdma $A0:$NFS_PORT exporting $EXP (tmpfs)"
nfs_server_start "$MIB" "$A0"

title "client: mount -t nfs4 -o proto=rdma"
nfs_mount "$A0"

title "data"
nfs_data "$MIB"
nfs_chunks "$MIB"

title "unmount and stop"
nfs_stop
# res_back: softhca0 holds what it held at vm_setup (its GSI QP's objects)
res_back() { [ "$(res_of "$D0")" = "$(res0 "$D0")" ]; }
wait_for 10 res_back
vm_leftovers 5
