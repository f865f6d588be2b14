#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Memory-registration behaviour from the review of issue 9 that userspace
# sees (shca_mr_review, RC loopback on one device): ibv_reg_dm_mr of
# length 0 is accepted within the DM and a zero-length RDMA WRITE goes
# through it; a dma-buf MR over udmabuf is the memfd's memory for RDMA
# WRITE and READ. Afterwards no MR, PD or context is left and no page
# stays pinned.
# shellcheck disable=SC1091
. /tests/lib.sh

DEV=${DRV_TYPE}0
if [ "$DRV_TYPE" != softhca ]; then
	info "device memory is softhca-specific; nothing to do for $DRV_TYPE"
	exit 0
fi
need_progs shca_mr_review
vm_setup "$DEV"

title "zero-length DM MRs, dma-buf MR data path"
run_t 60 shca_mr_review "$DEV" || bad "shca_mr_review $DEV: exit status $(run_rc)"

title "nothing left behind"
vm_leftovers
