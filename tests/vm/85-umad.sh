#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# MADs from userspace through ib_umad and the GSI QP: shca_umad opens the
# umad device of port 1, registers agents on QP1 and sends well-formed
# vendor MADs to its own GIDs, which a second agent must receive intact;
# then odd agent registrations and thousands of hostile MADs (random bytes
# and lengths, bad versions, RMPP flags, agent ids, GIDs, GID and P_Key
# indexes, remote QPNs 0/1/random, bad Q_Keys): each write() returns its
# length or an errno, nothing hangs, and the well-formed exchange still
# works afterwards. Then the agents are gone, rping over the device still
# works, nothing is left in `rdma res`, and the kernel log stays clean
# (checked by the runner).
#
# UMAD_GARBAGE (default 3000) sets the number of hostile MADs.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
A0=10.0.2.15
N=${UMAD_GARBAGE:-3000}

need_progs shca_umad
vm_setup "$DEV"
must "modprobe ib_umad" modprobe ib_umad

# umad_of IBDEV: the umadN of IBDEV's port 1
umad_of() {
	for _u in /sys/class/infiniband_mad/umad*; do
		[ -e "$_u/ibdev" ] || continue
		if [ "$(cat "$_u/ibdev")" = "$1" ] && [ "$(cat "$_u/port")" = 1 ]; then
			basename "$_u"
			return 0
		fi
	done
	return 1
}
wait_for 5 umad_of "$DEV" >/dev/null
UMAD=$(umad_of "$DEV") || die "no umad device of $DEV under /sys/class/infiniband_mad"
ok "$DEV port 1 is $UMAD"
wait_for 5 test -c "/dev/infiniband/$UMAD" ||
	die "/dev/infiniband/$UMAD is missing"

wait_for 10 ipv6_settled eth0 || info "eth0 still has tentative IPv6 addresses"

title "vendor MADs through QP1, then $N hostile ones"
must "shca_umad /dev/infiniband/$UMAD $DEV $N" \
	run_t 100 shca_umad "/dev/infiniband/$UMAD" "$DEV" "$N"

title "the device still works"
timeout -k 5 30 rping -s -v -V -C 5 -a "$A0" -p 7175 >/tmp/umad_rping.out 2>&1 &
SPID=$!
wait_for 10 sh -c "rdma res show cm_id 2>/dev/null | grep -q 'state LISTEN'" ||
	bad "rping does not listen"
run_t 30 rping -c -v -V -C 5 -a "$A0" -p 7175
RC=$?
if [ $RC = 0 ]; then
	ok "rping -c -C 5 to $A0 over $DEV"
elif rping_raced $RC "$(run_out)"; then
	ok "rping -c -C 5 to $A0 over $DEV (then rping's teardown race: exit 255 after the disconnect, not softhca's)"
else
	die "rping -c -C 5 to $A0 over $DEV: exit status $RC"
fi
wait $SPID
expect_eq "pings the server received" 5 "$(grep -c '^server ping data: rdma-ping-' /tmp/umad_rping.out)"

title "nothing left behind"
must "rmmod ib_umad" rmmod ib_umad
vm_leftovers 5
