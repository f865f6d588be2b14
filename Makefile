# SPDX-License-Identifier: GPL-2.0
#
# softhca: out-of-tree build of the kernel module, plus the project's
# entry points (see README.md):
#
#   make                 build softhca.ko for $(KDIR) and the rdma-core provider
#   make install         install the module into /lib/modules/<kver>/updates
#                        (+ depmod) and the provider where libibverbs looks
#   make check           sparse, W=1, checkpatch --strict, kernel-doc
#   make test            every test tier; ends with "N passed, N failed"
#   make run             the guided tour in a QEMU VM running Debian's kernel
#   make kunit           the KUnit tier only (kunit-san: under sanitizers)
#   make vm              the VM tier only (VM_KVER=KVER: on another Debian kernel)
#   make vm-kasan        the VM tier on a KASAN + lockdep kernel built from
#                        linux-source-6.12 (cached; cold about an hour);
#                        VM_TESTS='10-link 50-unload' runs some tests only
#   make wire            the wire tier: two QEMU guests on one virtual link,
#                        RoCE v2 between softhca (guest A) and rdma_rxe (B);
#                        WIRE_ARGS='--pair rxe:rxe' (see scripts/wire.sh --help)
#   make deb             build/deb/softhca-dkms_<version>_all.deb and
#                        libsofthca_<version>_<arch>.deb (scripts/packaging/)
#   make pkgtest         the packaging tier only: the packages installed in a
#                        clean Debian 12 chroot, then tried in the VM
#   make bench           MR registration rate and RDMA WRITE/READ/SEND throughput
#                        and latency, softhca vs rdma_rxe vs memcpy, the T10-DIF
#                        engine vs crc_t10dif(), NVMe over Fabrics (fio) and
#                        rdma_cm setup (cmtime), and NVMe over Fabrics with T10-PI
#                        vs without, in the VM; BENCH_ARGS='--only pi'
#                        (see tests/bench/run.sh --help) runs some of them
#   make bench-wire      the wire benchmark only: softhca <-> softhca vs rxe <->
#                        rxe across two QEMU guests (perftest, nvme-rdma);
#                        tests/bench/run.sh --only wire, about 15-20 minutes
#   make bench-ab AB=REV two builds of softhca in one boot, ABBA: the kernel
#                        data-path cells with build REV and with the working
#                        tree's (tests/bench/ab.sh; AB_ARGS='--rounds 8
#                        --cells WRITE:64,READ:64'), about 8 minutes

include $(dir $(lastword $(MAKEFILE_LIST)))scripts/versions.env

# Build for the running kernel when its build tree exists, else for the
# pinned Debian kernel's headers.
RUNNING_KDIR := /lib/modules/$(shell uname -r)/build
DEBIAN_KDIR := /usr/src/linux-headers-$(DEBIAN_KVER)
KDIR ?= $(if $(wildcard $(RUNNING_KDIR)/Makefile),$(RUNNING_KDIR),$(DEBIAN_KDIR))

KBUILD_OPTS := -C $(KDIR) M=$(CURDIR) CONFIG_INFINIBAND_SOFTHCA=m

DRIVER := drivers/infiniband/sw/softhca
SOURCES := $(shell find $(DRIVER) -name '*.[ch]' ! -name '*.mod.c' \
	! -name shca_conftest.h) \
	$(wildcard include/uapi/rdma/*.h)

.PHONY: all modules provider vm-programs install clean check test run kunit kunit-san vm vm-kasan wire bench bench-ab bench-wire deps deb pkgtest

all: modules provider

provider:
	$(MAKE) -C providers/softhca

vm-programs: provider
	$(MAKE) -C tests/vm/src

modules:
	$(MAKE) $(KBUILD_OPTS) W=1 modules

KVER = $(shell $(MAKE) -s -C $(KDIR) kernelrelease 2>/dev/null)

install: modules provider
	$(MAKE) $(KBUILD_OPTS) INSTALL_MOD_DIR=updates modules_install
	depmod $(if $(INSTALL_MOD_PATH),-b $(INSTALL_MOD_PATH)) -a $(KVER)
	$(MAKE) -C providers/softhca install

clean:
	$(MAKE) $(KBUILD_OPTS) clean
	$(MAKE) -C providers/softhca clean
	$(MAKE) -C tests/vm/src clean

check:
	KDIR=$(KDIR) scripts/check.sh $(SOURCES)

deps:
	scripts/deps.sh

test:
	scripts/test.sh

run:
	scripts/deps.sh vm build
	$(MAKE) modules vm-programs KDIR=$(DEBIAN_KDIR)
	scripts/vm.sh --tour

kunit:
	scripts/deps.sh kunit
	scripts/kunit.sh

kunit-san:
	scripts/deps.sh kunit
	scripts/kunit.sh --sanitizers

# make vm VM_KVER=6.1.0-57-amd64: the VM tier on another Debian kernel,
# its image unpacked into the cache, the module built in build/kernel-KVER/
vm:
ifeq ($(VM_KVER),)
	scripts/deps.sh vm build
	$(MAKE) modules vm-programs KDIR=$(DEBIAN_KDIR)
	scripts/vm.sh
else
	scripts/deps.sh vm build vm61
	scripts/kernel-image.sh $(VM_KVER) > /dev/null
	scripts/build-for.sh $(VM_KVER)
	$(MAKE) vm-programs
	scripts/vm.sh --kernel $(VM_KVER) \
		--module build/kernel-$(VM_KVER)/$(DRIVER)/softhca.ko
endif

# make vm-kasan VM_TESTS='10-link 95-fuzz': the VM tier (or the tests
# named) on the KASAN guest kernel of scripts/kasan-kernel.sh (built once
# into the cache; a warm run only builds softhca against it); not part of
# make test. KASAN and lockdep slow the guest down about fivefold (boot
# 30 s instead of 5, 98-teardown-traffic 123 s instead of 25): each test
# gets 300 s at least, the whole tier 90 minutes (a subset: vm.sh's own
# bound, at most 30 minutes). VM_KASAN_ARGS replaces these scripts/vm.sh
# options. Documentation/testing.rst, "Under KASAN".
VM_KASAN_ARGS ?= --test-timeout 300 $(if $(VM_TESTS),,--timeout 5400)
vm-kasan:
	scripts/deps.sh kunit vm build
	$(MAKE) vm-programs
	kver=$$(scripts/kasan-kernel.sh) && \
	scripts/vm.sh --kernel $$kver \
		--module build/kernel-$$kver/$(DRIVER)/softhca.ko \
		--label vm-kasan $(VM_KASAN_ARGS) $(VM_TESTS)

# make wire WIRE_ARGS='--pair softhca:rxe --pair rxe:softhca': both
# directions; '--pair rxe:rxe' checks the tests themselves
wire:
	scripts/deps.sh wire build
	$(MAKE) modules provider KDIR=$(DEBIAN_KDIR)
	scripts/wire.sh $(WIRE_ARGS)

deb:
	scripts/deps.sh pkg
	scripts/packaging/mkdeb.sh --lintian

pkgtest:
	scripts/deps.sh vm pkg
	scripts/pkgtest.sh

bench:
	scripts/deps.sh vm build bench
	$(MAKE) modules vm-programs KDIR=$(DEBIAN_KDIR)
	tests/bench/run.sh $(BENCH_ARGS)

bench-ab:
	@test -n "$(AB)" || { echo "make bench-ab AB=REV (a git revision or a softhca.ko)"; exit 2; }
	scripts/deps.sh vm build bench
	$(MAKE) modules provider KDIR=$(DEBIAN_KDIR)
	tests/bench/ab.sh $(AB_ARGS) $(AB)

bench-wire:
	scripts/deps.sh wire build bench
	$(MAKE) modules provider KDIR=$(DEBIAN_KDIR)
	tests/bench/run.sh --only wire $(BENCH_ARGS)
