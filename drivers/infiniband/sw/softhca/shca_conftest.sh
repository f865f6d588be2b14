#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# softhca compile probes: which kernel interfaces does the target kernel
# offer? Each probe is a tiny C file compiled (syntax only) with the exact
# flags kbuild uses for the driver's own objects; it defines its HAVE_*
# macro in the generated header when it compiles. shca_compat.h is the only
# reader of that header.
#
#   shca_conftest.sh OUTPUT CC [CFLAGS...]
#
# Called by the driver's Makefile through if_changed, so the probes run
# again whenever the compiler or its flags change (another kernel), and for
# out-of-tree builds (make M=) and in-tree builds (the KUnit overlay) alike.
# A probe fails only on a hard error: incompatible pointer types, implicit
# declarations and int conversions are made errors here, whatever the
# kernel's own warning flags are.

set -u

out=$1
cc=$2
shift 2

tmp=$(mktemp -d "${TMPDIR:-/tmp}/shca-conftest.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

# probe NAME INCLUDES BODY: write probe NAME; run_probes compiles them all.
probe() {
	{
		for h in $2; do
			echo "#include <$h>"
		done
		printf '%s\n' "$3"
	} > "$tmp/$1.c"
}

# --- KUnit helpers --------------------------------------------------------

# <kunit/static_stub.h>: KUNIT_STATIC_STUB_REDIRECT() (6.4).
probe HAVE_KUNIT_STATIC_STUB_H "kunit/static_stub.h" ""

# --- core kernel ------------------------------------------------------------

# MODULE_IMPORT_NS() takes a bare token (up to 6.12), not a string (6.13).
probe HAVE_MODULE_IMPORT_NS_TOKEN "linux/module.h" "
MODULE_IMPORT_NS(DMA_BUF);"

# <linux/unaligned.h> (6.12); <asm/unaligned.h> before.
probe HAVE_LINUX_UNALIGNED_H "linux/unaligned.h" ""

# refcount_set_release() and refcount_inc_not_zero_acquire() (6.16, and
# backported: Debian's 6.12 has them) for SLAB_TYPESAFE_BY_RCU objects.
probe HAVE_REFCOUNT_ACQUIRE_RELEASE "linux/refcount.h" "
bool shca_probe(refcount_t *r);
bool shca_probe(refcount_t *r)
{
	refcount_set_release(r, 1);
	return refcount_inc_not_zero_acquire(r);
}"

# timer_delete() and timer_delete_sync() (6.2): del_timer*() before.
probe HAVE_TIMER_DELETE "linux/timer.h" "
int shca_probe(struct timer_list *t);
int shca_probe(struct timer_list *t)
{
	return timer_delete(t) + timer_delete_sync(t);
}"

# timer_container_of() (6.16): from_timer() before.
probe HAVE_TIMER_CONTAINER_OF "linux/timer.h" "
struct shca_probe_s { struct timer_list t; };
struct shca_probe_s *shca_probe(struct timer_list *t);
struct shca_probe_s *shca_probe(struct timer_list *t)
{
	return timer_container_of((struct shca_probe_s *)NULL, t, t);
}"

# vm_flags_set() (6.3); vma->vm_flags became read-only at the same time.
probe HAVE_VM_FLAGS_SET "linux/mm.h" "
void shca_probe(struct vm_area_struct *vma);
void shca_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}"

# dma_buf_vmap_unlocked() (6.2): dma_buf_vmap() then wants the reservation
# lock held.
probe HAVE_DMA_BUF_VMAP_UNLOCKED "linux/dma-buf.h" "
int shca_probe(struct dma_buf *dmabuf, struct iosys_map *map);
int shca_probe(struct dma_buf *dmabuf, struct iosys_map *map)
{
	return dma_buf_vmap_unlocked(dmabuf, map);
}"

# --- RDMA core ------------------------------------------------------------

# ib_device_get_netdev() exported to drivers (6.11; core-private before).
probe HAVE_IB_DEVICE_GET_NETDEV "rdma/ib_verbs.h" "
struct net_device *shca_probe(struct ib_device *ibdev);
struct net_device *shca_probe(struct ib_device *ibdev)
{
	return ib_device_get_netdev(ibdev, 1);
}"

# ib_umem_odp's per-page pfn_list and dma_list (up to 6.14; 6.15 moved
# them into a struct hmm_dma_map): the interface softhca's ODP reads.
probe HAVE_IB_UMEM_ODP_DMA_LIST "rdma/ib_umem_odp.h" "
u64 shca_probe(struct ib_umem_odp *odp);
u64 shca_probe(struct ib_umem_odp *odp)
{
	return odp->dma_list[0] + odp->pfn_list[0];
}"

# ib_mark_name_assigned_by_user() (6.10).
probe HAVE_IB_MARK_NAME_ASSIGNED_BY_USER "rdma/ib_verbs.h" "
void shca_probe(struct ib_device *ibdev);
void shca_probe(struct ib_device *ibdev)
{
	ib_mark_name_assigned_by_user(ibdev);
}"

# ib_device_ops.create_cq takes the uverbs attribute bundle (6.10), not
# the udata.
probe HAVE_CREATE_CQ_ATTRS "rdma/ib_verbs.h" "
static int shca_probe(struct ib_cq *cq, const struct ib_cq_init_attr *attr,
		      struct uverbs_attr_bundle *attrs)
{
	return 0;
}
const struct ib_device_ops shca_probe_ops = { .create_cq = shca_probe };"

# ib_device_ops.reg_user_mr takes a DMA handle (6.17).
probe HAVE_REG_USER_MR_DMAH "rdma/ib_verbs.h" "
static struct ib_mr *shca_probe(struct ib_pd *pd, u64 start, u64 length,
				u64 iova, int access, struct ib_dmah *dmah,
				struct ib_udata *udata)
{
	return NULL;
}
const struct ib_device_ops shca_probe_ops = { .reg_user_mr = shca_probe };"

# ib_device_ops.reg_user_mr_dmabuf takes the uverbs attribute bundle (6.10)
# instead of the udata, but no DMA handle yet.
probe HAVE_REG_USER_MR_DMABUF_ATTRS "rdma/ib_verbs.h" "
static struct ib_mr *shca_probe(struct ib_pd *pd, u64 offset, u64 length,
				u64 iova, int fd, int access,
				struct uverbs_attr_bundle *attrs)
{
	return NULL;
}
const struct ib_device_ops shca_probe_ops = {
	.reg_user_mr_dmabuf = shca_probe,
};"

# ib_device_ops.reg_user_mr_dmabuf takes a DMA handle and the bundle (6.17).
probe HAVE_REG_USER_MR_DMABUF_DMAH "rdma/ib_verbs.h" "
static struct ib_mr *shca_probe(struct ib_pd *pd, u64 offset, u64 length,
				u64 iova, int fd, int access,
				struct ib_dmah *dmah,
				struct uverbs_attr_bundle *attrs)
{
	return NULL;
}
const struct ib_device_ops shca_probe_ops = {
	.reg_user_mr_dmabuf = shca_probe,
};"

# --- run them, in parallel ------------------------------------------------

# A file that cannot even include <linux/kernel.h> means broken flags, not
# a missing feature: then fail the build rather than guess.
echo '#include <linux/kernel.h>' > "$tmp/sanity.c.0"
"$cc" "$@" -fsyntax-only -x c "$tmp/sanity.c.0" > "$tmp/sanity.log" 2>&1 &
sanity=$!

for c in "$tmp"/*.c; do
	n=${c%.c}
	"$cc" "$@" -Werror=incompatible-pointer-types \
		-Werror=implicit-function-declaration -Werror=int-conversion \
		-fsyntax-only "$c" > "$n.log" 2>&1 &
	echo $! > "$n.pid"
done

{
	echo "/* SPDX-License-Identifier: GPL-2.0 */"
	echo "/* Generated by shca_conftest.sh: do not edit. */"
	echo "#ifndef _SHCA_CONFTEST_H"
	echo "#define _SHCA_CONFTEST_H"
	echo
	for c in "$tmp"/*.c; do
		n=${c%.c}
		name=${n##*/}
		if wait "$(cat "$n.pid")"; then
			echo "#define $name 1"
		else
			echo "/* #undef $name */"
		fi
	done
	echo
	echo "#endif /* _SHCA_CONFTEST_H */"
} > "$tmp/out.h" || exit 1

if ! wait $sanity; then
	echo "shca_conftest.sh: the compiler rejects the kernel's flags:" >&2
	head -20 "$tmp/sanity.log" >&2
	exit 1
fi

mv "$tmp/out.h" "$out"
