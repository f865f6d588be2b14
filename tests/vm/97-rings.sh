#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Mapped work queues (softhca-abi.h, struct softhca_wq_ring): a process
# that corrupts its own rings hurts only itself (shca_ring). The rings
# the provider maps with each RC QP are found in /proc/self/maps and
# sized as the ABI says (none with SOFTHCA_RINGS=0, traffic by system
# calls then); a receive ring with impossible indices or a slot with
# 1000 SGEs costs that QP alone (ERR, IBV_EVENT_QP_FATAL, what the
# kernel took flushed, the peer's SEND IBV_WC_RETRY_EXC_ERR, no byte
# landed) while another QP pair of the process and one of another
# process keep working, and RESET brings the QP back; garbage send slots,
# producers beyond the send ring and doorbells of queues without a ring
# are refused with EINVAL, the QP staying RTS; MAP_PRIVATE and wrong
# lengths are refused, and a destroyed QP's rings map no more while a
# kept mapping stays readable. Afterwards nothing is left in `rdma res`.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
if [ "$DRV_TYPE" != softhca ]; then
	info "mapped work queues are softhca's ABI; nothing to do for $DRV_TYPE"
	exit 0
fi
need_progs shca_ring

vm_setup "$DEV"

title "rings: a process corrupting its own hurts only itself"
run_t 100 shca_ring "$DEV" || bad "shca_ring $DEV: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers
