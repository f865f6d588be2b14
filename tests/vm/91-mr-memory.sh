#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# ibv_reg_mr on every kind of memory a process has, through the provider:
# MAP_HUGETLB (huge pages reserved here), file-backed tmpfs mappings
# (MAP_SHARED, MAP_PRIVATE, read-only, past EOF), anonymous regions from
# 4 KiB to 1 GiB (shca_mr_mem); then 10,000 MRs held at once, counted by
# `rdma res`, and all deregistered (shca_mr_many). Nothing stays pinned.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
need_progs shca_mr_mem shca_mr_many

vm_setup "$DEV"

title "huge pages, files, 4 KiB .. 1 GiB"
hp0=$(cat /proc/sys/vm/nr_hugepages)
echo 8 >/proc/sys/vm/nr_hugepages
expect_eq "2 MiB huge pages reserved" 8 "$(cat /proc/sys/vm/nr_hugepages)"
# the 1 GiB region takes a few seconds to fault in and pin under TCG
run_t 90 shca_mr_mem "$DEV" || bad "shca_mr_mem $DEV: exit status $(run_rc)"
echo "$hp0" >/proc/sys/vm/nr_hugepages
expect_pins

title "10,000 MRs at once"
hold=/tmp/shca_mr_many.hold
rm -f "$hold"
timeout -k 5 100 shca_mr_many "$DEV" 10000 "$hold" >/tmp/shca_mr_many.out 2>&1 &
pid=$!
if wait_for 80 test -s "$hold"; then
	ok "10000 MRs registered and held (pid $pid)"
	run rdma res show
	if run_out | grep -Eq "^[0-9]+: $DEV: .* mr 10000( |\$)"; then
		ok "rdma res show counts mr 10000 for $DEV"
	else
		bad "rdma res show does not count mr 10000 for $DEV"
	fi
	n=$(timeout 30 rdma res show mr dev "$DEV" 2>/dev/null | grep -c "comm shca_mr_many")
	expect_eq "MRs of shca_mr_many in rdma res show mr" 10000 "$n"
	p=$(foll_pins)
	expect_eq "pages pinned while held" $((PINS0 + 10000)) "$p"
	rm -f "$hold"
else
	bad "shca_mr_many did not get to hold its MRs within 80s"
fi
wait $pid
rc=$?
sed 's/^/    /' /tmp/shca_mr_many.out
[ $rc = 0 ] || bad "shca_mr_many: exit status $rc"

title "nothing left behind"
vm_leftovers
