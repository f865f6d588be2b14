#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# The rdma-core provider (libsofthca-rdmav34.so) end to end: rdma-core's
# tools list and describe the device, and the C programs of tests/vm/src
# (in /tests/bin) open it, register memory every way, re-register, use
# device memory, hold 1000 MRs that `rdma res show mr` lists; matching
# survives a rename of the device.
# shellcheck disable=SC1091
. /tests/lib.sh

PROVIDER_SO=/usr/lib/x86_64-linux-gnu/libibverbs/libsofthca-rdmav34.so
DEV=softhca0

if [ "$DRV_TYPE" != softhca ]; then
	info "the provider tests are softhca-specific; nothing to do for $DRV_TYPE"
	exit 0
fi
[ -r "$PROVIDER_SO" ] || die "$PROVIDER_SO missing: build it with 'make -C providers/softhca'"
[ -r /etc/libibverbs.d/softhca.driver ] || die "/etc/libibverbs.d/softhca.driver missing"
need_progs shca_open shca_mr shca_dm shca_mr_many

vm_setup $DEV
expect_eq "softhca_abi_version" 2 "$(cat "$IB/$DEV/softhca_abi_version" 2>/dev/null)"

title "rdma-core tools"
if run ibv_devices && run_out | grep -q "^ *$DEV "; then
	ok "ibv_devices lists $DEV"
else
	bad "ibv_devices does not list $DEV"
fi
guid=$(tr -d : <"$IB/$DEV/node_guid" 2>/dev/null)
if run_out | grep -Eq "^[[:space:]]*${DEV}[[:space:]]+$guid\$"; then
	ok "ibv_devices shows its node GUID $guid"
else
	bad "ibv_devices: no node GUID $guid for $DEV"
fi
fw=$(cat "$IB/$DEV/fw_ver" 2>/dev/null)
if run ibv_devinfo -v -d $DEV; then
	ok "ibv_devinfo -v -d $DEV"
	for pat in "hca_id:[[:space:]]+$DEV\$" "transport:[[:space:]]+InfiniBand" \
		"fw_ver:[[:space:]]+$fw\$" "state:[[:space:]]+PORT_ACTIVE" \
		"link_layer:[[:space:]]+Ethernet" "phys_port_cnt:[[:space:]]+1\$" \
		"maximum available device memory:[[:space:]]*[1-9][0-9]*Bytes"; do
		if run_out | grep -Eq "$pat"; then
			ok "ibv_devinfo output matches '$pat'"
		else
			bad "ibv_devinfo output does not match '$pat'"
		fi
	done
else
	bad "ibv_devinfo -v -d $DEV failed"
fi
if run ibv_devinfo -l && run_out | grep -Eq "^[[:space:]]*$DEV\$"; then
	ok "ibv_devinfo -l lists $DEV"
else
	bad "ibv_devinfo -l does not list $DEV"
fi

title "open, query, PDs"
run shca_open $DEV || bad "shca_open $DEV: exit status $(run_rc)"

title "memory registration"
run shca_mr $DEV || bad "shca_mr $DEV: exit status $(run_rc)"

title "device memory"
run shca_dm $DEV || bad "shca_dm $DEV: exit status $(run_rc)"

title "1000 MRs, listed by rdma res while held"
hold=/tmp/shca_mr_many.hold
rm -f "$hold"
timeout -k 5 150 shca_mr_many $DEV 1000 "$hold" >/tmp/shca_mr_many.out 2>&1 &
pid=$!
if wait_for 60 test -s "$hold"; then
	ok "1000 MRs registered and held (pid $pid)"
	n=$(rdma res show mr dev $DEV 2>/dev/null | grep -c "comm shca_mr_many")
	if [ "$n" = 1000 ]; then
		ok "rdma res show mr dev $DEV lists the 1000 MRs of shca_mr_many"
	else
		bad "rdma res show mr dev $DEV lists $n MRs of shca_mr_many, expected 1000"
		rdma res show mr dev $DEV 2>&1 | head -n 5 | sed 's/^/    /'
	fi
	run rdma res show
	if run_out | grep -Eq "^[0-9]+: $DEV: .* mr 1000( |\$)"; then
		ok "rdma res show counts mr 1000 for $DEV"
	else
		bad "rdma res show does not count mr 1000 for $DEV"
	fi
	rm -f "$hold"
else
	bad "shca_mr_many did not get to hold its MRs within 60s"
fi
wait $pid
rc=$?
sed 's/^/    /' /tmp/shca_mr_many.out
[ $rc = 0 ] || bad "shca_mr_many: exit status $rc"
n=$(rdma res show mr dev $DEV 2>/dev/null | grep -c "comm shca_mr_many")
expect_eq "MRs of shca_mr_many left after it deregistered them" 0 "$n"

title "matching survives a rename"
if run rdma dev set $DEV name shcaren0; then
	if run ibv_devices && run_out | grep -q "^ *shcaren0 "; then
		ok "ibv_devices lists the renamed device shcaren0"
	else
		bad "ibv_devices does not list the renamed device shcaren0"
	fi
	run shca_open shcaren0 || bad "shca_open shcaren0: exit status $(run_rc)"
	must "rename back to $DEV" rdma dev set shcaren0 name $DEV
else
	bad "rdma dev set $DEV name shcaren0 failed"
fi

title "a process that exits without cleaning up"
# shca_mr_many killed while holding 100 MRs: the kernel must reclaim them.
rm -f "$hold"
timeout -k 5 60 shca_mr_many $DEV 100 "$hold" >/dev/null 2>&1 &
pid=$!
if wait_for 60 test -s "$hold"; then
	kill -9 "$(cat "$hold")"
	wait $pid 2>/dev/null
	rm -f "$hold"
	if wait_for 10 sh -c "[ \$(rdma res show mr dev $DEV 2>/dev/null | grep -c 'comm shca_mr_many') = 0 ]"; then
		ok "its 100 MRs are gone after SIGKILL"
	else
		bad "MRs of a killed process are still listed"
	fi
else
	bad "shca_mr_many did not get to hold its MRs within 60s"
	kill -9 $pid 2>/dev/null
fi
