#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# sysfs attributes of a device on eth0: node type, GUIDs, firmware version,
# port state, link layer, GIDs and GID types; ibv_devices.
# shellcheck disable=SC1091
. /tests/lib.sh

drv_load || die "loading $DRV_MOD failed"
must "rdma link add softhca0 type $DRV_TYPE netdev eth0" link_add softhca0 eth0
D=$IB/softhca0
[ -d "$D" ] || die "$D missing after link add (have: '$(ibdirs)')"

title "attributes exist"
for a in node_type node_guid sys_image_guid fw_ver ports/1/state ports/1/phys_state \
	ports/1/link_layer ports/1/gids/0 ports/1/gid_attrs/types/0; do
	if [ -r "$D/$a" ]; then
		ok "$a = '$(cat "$D/$a" 2>&1)'"
	else
		bad "$D/$a is missing"
	fi
done

title "values"
expect_eq node_type "1: CA" "$(cat "$D/node_type" 2>/dev/null)"
expect_eq "ports/1/link_layer" Ethernet "$(port_attr softhca0 link_layer)"
# The device sits under the NIC's device, as an HCA does: device/net/ names
# the netdev (rdma-core's tests find the address this way).
expect_eq "device/net/ of softhca0" eth0 "$(ls "$D/device/net" 2>/dev/null)"
expect_port softhca0 state "4: ACTIVE" 10
expect_port softhca0 phys_state "5: LinkUp" 10

mac=$(cat /sys/class/net/eth0/address)
guid=$(mac_guid eth0)
expect_eq "node_guid (EUI-64 of eth0's MAC $mac)" "$guid" "$(cat "$D/node_guid" 2>/dev/null)"
sig=$(cat "$D/sys_image_guid" 2>/dev/null)
if echo "$sig" | grep -qE '^[0-9a-f]{4}(:[0-9a-f]{4}){3}$' && [ "$sig" != 0000:0000:0000:0000 ]; then
	ok "sys_image_guid is a non-zero GUID: '$sig'"
else
	bad "sys_image_guid: expected a non-zero GUID like 'xxxx:xxxx:xxxx:xxxx', saw '$sig'"
fi
fw=$(cat "$D/fw_ver" 2>/dev/null)
if [ -n "$fw" ]; then
	ok "fw_ver is non-empty: '$fw'"
elif [ "$DRV_TYPE" = rxe ]; then
	info "fw_ver is empty (rdma_rxe has no firmware version)"
else
	bad "fw_ver: expected a version string, saw ''"
fi

expect_eq "gid_attrs/types/0" "RoCE v2" "$(port_attr softhca0 gid_attrs/types/0)"
expect_eq "gids/0 (default GID: fe80::EUI-64)" "fe80:0000:0000:0000:$guid" "$(port_attr softhca0 gids/0)"
gid4=$(ipv4_gid 10.0.2.15)
if wait_for 10 has_gid softhca0 "$gid4"; then
	ok "a GID equals the IPv4-mapped address of eth0 ($gid4)"
else
	bad "no entry of ports/1/gids/ equals $gid4 (10.0.2.15) after 10s; non-zero GIDs:"
	for g in "$D"/ports/1/gids/*; do
		v=$(cat "$g" 2>/dev/null)
		[ "$v" = 0000:0000:0000:0000:0000:0000:0000:0000 ] || echo "    $(basename "$g"): $v"
	done
fi

title "ibv_devices"
# Without an rdma-core provider for softhca (providers/softhca, installed in
# the guest by scripts/vm.sh when built), libibverbs skips the device: then
# only check that ibv_devices runs.
if run ibv_devices; then
	ok "ibv_devices runs"
else
	bad "ibv_devices failed with exit status $(run_rc)"
fi
if [ "$DRV_TYPE" = rxe ] || [ -e /etc/libibverbs.d/softhca.driver ]; then
	if ibv_devices 2>/dev/null | grep -qw softhca0; then
		ok "ibv_devices lists softhca0"
	else
		bad "ibv_devices does not list softhca0 although a provider is installed"
	fi
	if run ibv_devinfo -d softhca0 && run_out | grep -q 'state:.*PORT_ACTIVE'; then
		ok "ibv_devinfo -d softhca0 shows PORT_ACTIVE"
	else
		bad "ibv_devinfo -d softhca0: expected a PORT_ACTIVE port"
	fi
else
	info "no softhca provider in the guest: ibv_devices is not expected to list softhca0"
fi

must "rdma link delete softhca0" link_del softhca0
