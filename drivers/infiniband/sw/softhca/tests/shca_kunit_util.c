// SPDX-License-Identifier: GPL-2.0
/*
 * softhca KUnit fixtures: a minimal Ethernet netdev that drops what it is
 * given, and softhca devices created through the real "rdma link add"
 * handler, both torn down by KUnit actions in reverse order of creation.
 */

#include <linux/delay.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/mount.h>
#include <linux/etherdevice.h>
#include <linux/netdevice.h>
#include <linux/rtnetlink.h>
#include <linux/scatterlist.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <kunit/resource.h>

#include "shca_kunit.h"

static netdev_tx_t shca_kunit_xmit(struct sk_buff *skb,
				   struct net_device *ndev)
{
	dev_kfree_skb_any(skb);
	return NETDEV_TX_OK;
}

static const struct net_device_ops shca_kunit_netdev_ops = {
	.ndo_start_xmit = shca_kunit_xmit,
	.ndo_set_mac_address = eth_mac_addr,
};

static void shca_kunit_netdev_free(void *ptr)
{
	struct net_device *ndev = ptr;

	unregister_netdev(ndev);
	free_netdev(ndev);
}

/**
 * shca_kunit_netdev_in() - register an Ethernet netdev that is up, in @net
 * @test: the test; owns the netdev
 * @mac: its MAC address
 * @net: the network namespace it is made in
 *
 * Return: the netdev; the test fails and aborts if it cannot be made.
 */
struct net_device *shca_kunit_netdev_in(struct kunit *test, const u8 *mac,
					struct net *net)
{
	struct net_device *ndev;
	int err;

	ndev = alloc_etherdev(0);
	KUNIT_ASSERT_NOT_NULL(test, ndev);
	ndev->netdev_ops = &shca_kunit_netdev_ops;
	eth_hw_addr_set(ndev, mac);
	strscpy(ndev->name, "shcak%d", sizeof(ndev->name));
	dev_net_set(ndev, net);

	err = register_netdev(ndev);
	if (err)
		free_netdev(ndev);
	KUNIT_ASSERT_EQ(test, err, 0);
	err = kunit_add_action_or_reset(test, shca_kunit_netdev_free, ndev);
	KUNIT_ASSERT_EQ(test, err, 0);

	rtnl_lock();
	err = dev_open(ndev, NULL);
	rtnl_unlock();
	KUNIT_ASSERT_EQ(test, err, 0);
	return ndev;
}

/**
 * shca_kunit_netdev() - register an Ethernet netdev that is up
 * @test: the test; owns the netdev
 * @mac: its MAC address
 *
 * Return: the netdev, in the initial network namespace.
 */
struct net_device *shca_kunit_netdev(struct kunit *test, const u8 *mac)
{
	return shca_kunit_netdev_in(test, mac, &init_net);
}

/**
 * shca_kunit_netdev_remove() - unregister a test netdev now
 * @test: the test that owns @ndev
 * @ndev: netdev from shca_kunit_netdev()
 */
void shca_kunit_netdev_remove(struct kunit *test, struct net_device *ndev)
{
	kunit_release_action(test, shca_kunit_netdev_free, ndev);
}

/**
 * shca_kunit_wait_gone() - wait until no ib_device is called @name
 * @name: device name
 *
 * Unregistration after a netdev goes away runs from a workqueue.
 *
 * Return: true once the name is free, false after 10 s.
 */
bool shca_kunit_wait_gone(const char *name)
{
	struct ib_device *ibdev;
	int i;

	for (i = 0; i < 500; i++) {
		ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
		if (!ibdev)
			return true;
		ib_device_put(ibdev);
		msleep(20);
	}
	return false;
}

static void shca_kunit_device_free(void *ptr)
{
	const char *name = ptr;
	struct ib_device *ibdev;

	ibdev = ib_device_get_by_name(name, RDMA_DRIVER_UNKNOWN);
	if (ibdev)
		ib_unregister_device_and_put(ibdev);
	shca_kunit_wait_gone(name);
}

/**
 * shca_kunit_device() - create a softhca device as "rdma link add" does
 * @test: the test; unregisters the device at the end unless it is gone
 * @name: device name
 * @ndev: netdev to bind it to
 *
 * Return: the registered device; the test aborts if creation fails.
 */
struct ib_device *shca_kunit_device(struct kunit *test, const char *name,
				    struct net_device *ndev)
{
	struct ib_device *ibdev;
	char *owned;
	int err;

	owned = kunit_kstrdup(test, name, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, owned);
	err = shca_newlink(owned, ndev);
	KUNIT_ASSERT_EQ(test, err, 0);
	err = kunit_add_action_or_reset(test, shca_kunit_device_free, owned);
	KUNIT_ASSERT_EQ(test, err, 0);

	ibdev = ib_device_get_by_name(owned, RDMA_DRIVER_UNKNOWN);
	KUNIT_ASSERT_NOT_NULL(test, ibdev);
	/* The action above owns the device; the name pins nothing. */
	ib_device_put(ibdev);
	return ibdev;
}

static void shca_kunit_umount(void *mnt)
{
	kern_unmount(mnt);
}

static void shca_kunit_fput(void *file)
{
	fput(file);
}

/**
 * shca_kunit_debugfs_open() - open a debugfs file while KUnit runs
 * @test: the test; closes the file and unmounts at the end
 * @path: path below the debugfs root, e.g. "kmemleak"
 *
 * debugfs is not mounted while the suites run, so this mounts a private
 * instance of it.
 *
 * Return: the open file; the test aborts if it cannot be opened.
 */
struct file *shca_kunit_debugfs_open(struct kunit *test, const char *path)
{
	struct file_system_type *fs;
	struct vfsmount *mnt;
	struct file *file;

	fs = get_fs_type("debugfs");
	KUNIT_ASSERT_NOT_NULL(test, fs);
	mnt = vfs_kern_mount(fs, 0, "debugfs", NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mnt), "mount debugfs: %ld",
			       PTR_ERR(mnt));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test,
							shca_kunit_umount,
							mnt), 0);
	file = file_open_root_mnt(mnt, path, O_RDWR, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(file), "open %s: %ld", path,
			       PTR_ERR(file));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, shca_kunit_fput,
							file), 0);
	return file;
}

/**
 * shca_kunit_file_write() - write a string to a debugfs control file
 * @test: the test
 * @file: file from shca_kunit_debugfs_open()
 * @str: what to write
 *
 * Such files often have a plain .write that copies from user memory
 * (kernel_write() needs .write_iter), so the string goes through a page
 * of the test's user address space.
 */
void shca_kunit_file_write(struct kunit *test, struct file *file,
			   const char *str)
{
	size_t len = strlen(str);
	unsigned long uaddr;
	loff_t pos = 0;

	uaddr = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE,
			      PROT_READ | PROT_WRITE,
			      MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE(test, uaddr, 0);
	KUNIT_ASSERT_EQ(test, copy_to_user((void __user *)uaddr, str, len), 0);
	KUNIT_ASSERT_NOT_NULL(test, file->f_op->write);
	KUNIT_ASSERT_EQ_MSG(test, file->f_op->write(file,
						    (char __user *)uaddr,
						    len, &pos),
			    (ssize_t)len, "write '%s'", str);
}

/**
 * shca_kunit_defer() - hand @ptr to @action at the end of the test
 * @test: the test
 * @action: the teardown
 * @ptr: its argument
 *
 * If the action cannot be registered it runs now and the test aborts.
 */
void shca_kunit_defer(struct kunit *test, kunit_action_t *action, void *ptr)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, action, ptr), 0);
}

/**
 * shca_kunit_dealloc_pd() - teardown action: ib_dealloc_pd()
 * @pd: the PD
 */
void shca_kunit_dealloc_pd(void *pd)
{
	ib_dealloc_pd(pd);
}

/**
 * shca_kunit_dereg_mr() - teardown action: ib_dereg_mr()
 * @mr: the MR
 */
void shca_kunit_dereg_mr(void *mr)
{
	ib_dereg_mr(mr);
}

/**
 * shca_kunit_free_cq() - teardown action: ib_free_cq()
 * @cq: the CQ, from ib_alloc_cq()
 */
void shca_kunit_free_cq(void *cq)
{
	ib_free_cq(cq);
}

/**
 * shca_kunit_destroy_qp() - teardown action: ib_destroy_qp()
 * @qp: the QP
 */
void shca_kunit_destroy_qp(void *qp)
{
	ib_destroy_qp(qp);
}

/**
 * shca_kunit_pd() - a PD that the test owns
 * @test: the test
 * @ibdev: its device
 *
 * Return: the PD; the test aborts if it cannot be made.
 */
struct ib_pd *shca_kunit_pd(struct kunit *test, struct ib_device *ibdev)
{
	struct ib_pd *pd = ib_alloc_pd(ibdev, 0);

	KUNIT_ASSERT_FALSE(test, IS_ERR(pd));
	shca_kunit_defer(test, shca_kunit_dealloc_pd, pd);
	return pd;
}

/**
 * shca_kunit_mr_fix() - the fixture of the MR suites
 * @test: the test; owns everything made here
 * @name: name of the device
 * @mac: MAC address of its netdev
 *
 * Return: a device on a new test netdev, with two PDs.
 */
struct shca_mr_fix *shca_kunit_mr_fix(struct kunit *test, const char *name,
				      const u8 *mac)
{
	struct net_device *ndev = shca_kunit_netdev(test, mac);
	struct shca_mr_fix *f;

	f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f);
	f->ibdev = shca_kunit_device(test, name, ndev);
	f->sdev = to_shca_dev(f->ibdev);
	f->pd = shca_kunit_pd(test, f->ibdev);
	f->pd2 = shca_kunit_pd(test, f->ibdev);
	return f;
}

/**
 * shca_kunit_count_mrs() - MRs in a device's key table
 * @sdev: the device
 *
 * Return: the number of published MRs.
 */
u32 shca_kunit_count_mrs(struct shca_dev *sdev)
{
	unsigned long idx;
	void *entry;
	u32 n = 0;

	xa_for_each(&sdev->mr_xa, idx, entry)
		n++;
	return n;
}

static const u8 shca_mr_mac[ETH_ALEN] = { 0x02, 0x53, 0x48, 0x4d, 0x52, 0x01 };

/**
 * shca_kunit_mr_init() - init of the MR suites: the fixture in test->priv
 * @test: the test
 *
 * Return: 0 (the test aborts if the fixture cannot be made).
 */
int shca_kunit_mr_init(struct kunit *test)
{
	test->priv = shca_kunit_mr_fix(test, "shcak_mr", shca_mr_mac);
	return 0;
}

/**
 * shca_kunit_track_mr() - deregister an MR made by the test even on failure
 * @test: the test
 * @mr: the MR, or an ERR_PTR(), which fails the test
 *
 * Return: @mr.
 */
struct ib_mr *shca_kunit_track_mr(struct kunit *test, struct ib_mr *mr)
{
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(mr), "MR creation: %ld",
			       PTR_ERR(mr));
	shca_kunit_defer(test, shca_kunit_dereg_mr, mr);
	return mr;
}

/**
 * shca_kunit_untrack_dereg() - deregister a tracked MR now
 * @test: the test
 * @mr: an MR given to shca_kunit_track_mr()
 */
void shca_kunit_untrack_dereg(struct kunit *test, struct ib_mr *mr)
{
	kunit_release_action(test, shca_kunit_dereg_mr, mr);
}

/* Physically contiguous, naturally aligned memory owned by the test. */
struct shca_block {
	size_t size;
	void *addr;
};

static void shca_block_free(void *p)
{
	struct shca_block *b = p;

	free_pages((unsigned long)b->addr, get_order(b->size));
}

/**
 * shca_kunit_block() - physically contiguous memory owned by the test
 * @test: the test
 * @size: bytes, zeroed and naturally aligned
 *
 * Return: the memory; the test aborts if it cannot be allocated.
 */
void *shca_kunit_block(struct kunit *test, size_t size)
{
	struct shca_block *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->size = size;
	b->addr = (void *)__get_free_pages(GFP_KERNEL | __GFP_ZERO,
					   get_order(size));
	KUNIT_ASSERT_NOT_NULL(test, b->addr);
	shca_kunit_defer(test, shca_block_free, b);
	return b->addr;
}

KUNIT_DEFINE_ACTION_WRAPPER(shca_vfree_action, vfree, const void *);

/**
 * shca_kunit_vbuf() - a large buffer (beyond kmalloc's limit) the test owns
 * @test: the test
 * @size: bytes
 *
 * Return: the buffer; the test aborts if it cannot be allocated.
 */
u8 *shca_kunit_vbuf(struct kunit *test, size_t size)
{
	u8 *p = vmalloc(size);

	KUNIT_ASSERT_NOT_NULL(test, p);
	shca_kunit_defer(test, shca_vfree_action, p);
	return p;
}

/**
 * shca_kunit_pattern() - the test pattern's byte
 * @block: which buffer
 * @off: offset in it
 * @salt: varies the pattern between writes
 *
 * Return: the byte expected at @off.
 */
u8 shca_kunit_pattern(unsigned int block, size_t off, u8 salt)
{
	return (u8)(block * 131 + off * 7 + (off >> 8) * 13 + salt);
}

/**
 * shca_kunit_fill() - fill a buffer with the test pattern
 * @p: the buffer
 * @block: which buffer (see shca_kunit_pattern())
 * @len: bytes
 * @salt: varies the pattern between writes
 */
void shca_kunit_fill(u8 *p, unsigned int block, size_t len, u8 salt)
{
	size_t i;

	for (i = 0; i < len; i++)
		p[i] = shca_kunit_pattern(block, i, salt);
}

/**
 * shca_kunit_target() - memory named by a key, for the copy engine
 * @pd: PD of the access
 * @key: lkey or rkey
 * @iova: address of the first byte
 * @access: IB_ACCESS_* rights the access needs
 *
 * Return: the target.
 */
struct shca_mem_target shca_kunit_target(struct ib_pd *pd, u32 key, u64 iova,
					 int access)
{
	return (struct shca_mem_target){ .pd = pd, .key = key, .iova = iova,
					 .access = access };
}

/**
 * shca_kunit_reg() - rotate the key byte and execute IB_WR_REG_MR as the
 *	QP would
 * @mr: a fast-reg MR
 * @access: IB_ACCESS_* flags of the registration
 *
 * Return: what shca_mr_fast_reg() returns.
 */
int shca_kunit_reg(struct ib_mr *mr, int access)
{
	ib_update_fast_reg_key(mr, ib_inc_rkey(mr->rkey));
	return shca_mr_fast_reg(to_shca_mr(mr), mr->rkey, access);
}

/**
 * shca_kunit_sig_attrs_t10() - T10-DIF CRC attributes, PI in both domains
 * @a: filled: 512-byte blocks, guard and ref tag checked, ref tag 1000
 */
void shca_kunit_sig_attrs_t10(struct ib_sig_attrs *a)
{
	memset(a, 0, sizeof(*a));
	a->check_mask = IB_SIG_CHECK_GUARD | IB_SIG_CHECK_REFTAG;
	a->mem.sig_type = IB_SIG_TYPE_T10_DIF;
	a->mem.sig.dif.bg_type = IB_T10DIF_CRC;
	a->mem.sig.dif.pi_interval = 512;
	a->mem.sig.dif.ref_tag = 1000;
	a->mem.sig.dif.ref_remap = true;
	a->wire = a->mem;
}

/**
 * shca_kunit_sig_attrs_plain() - the same without PI in either domain
 * @a: filled
 *
 * The integrity MR is then a plain zero-based region, data followed by
 * metadata, which is what the translation tests look at.
 */
void shca_kunit_sig_attrs_plain(struct ib_sig_attrs *a)
{
	shca_kunit_sig_attrs_t10(a);
	a->mem.sig_type = IB_SIG_TYPE_NONE;
	a->wire.sig_type = IB_SIG_TYPE_NONE;
}

/**
 * shca_kunit_dma_mr() - a DMA MR of a PD, tracked by the test
 * @test: the test
 * @pd: the PD
 * @access: IB_ACCESS_* flags
 *
 * With the core's bookkeeping around ops.get_dma_mr (the core creates
 * one only for IB_PD_UNSAFE_GLOBAL_RKEY: kernel PDs use the reserved
 * lkey for local access).
 *
 * Return: the MR; the test aborts if it cannot be made.
 */
struct ib_mr *shca_kunit_dma_mr(struct kunit *test, struct ib_pd *pd,
				int access)
{
	struct ib_mr *mr = pd->device->ops.get_dma_mr(pd, access);

	KUNIT_ASSERT_FALSE(test, IS_ERR(mr));
	mr->device = pd->device;
	mr->pd = pd;
	mr->type = IB_MR_TYPE_DMA;
	atomic_inc(&pd->usecnt);
	return shca_kunit_track_mr(test, mr);
}

/**
 * shca_kunit_pi_mr() - an integrity MR over scattered data and metadata
 * @test: the test; owns the MR and its memory
 * @f: the MR suites' fixture
 * @data: the data's memory (3 pages, a pattern), filled in
 * @meta: the metadata's memory (a page, a pattern), filled in
 * @dlen: the data's length (4 blocks of 512 bytes), filled in
 * @mlen: the metadata's length (4 tuples of 8 bytes), filled in
 *
 * The data in 3 pieces with gaps, the metadata in 2; mapped with
 * ib_map_mr_sg_pi(), not registered.
 *
 * Return: the MR.
 */
struct ib_mr *shca_kunit_pi_mr(struct kunit *test, struct shca_mr_fix *f,
			       u8 **data, u8 **meta, u32 *dlen, u32 *mlen)
{
	struct scatterlist *dsg, *msg;
	struct ib_mr *mr;
	int i;

	*dlen = 4 * 512;
	*mlen = 4 * 8;
	*data = shca_kunit_block(test, 3 * PAGE_SIZE);
	*meta = shca_kunit_block(test, PAGE_SIZE);
	shca_kunit_fill(*data, 20, 3 * PAGE_SIZE, 0);
	shca_kunit_fill(*meta, 21, PAGE_SIZE, 0);

	/* Data in 3 pieces with gaps, PI in 2. */
	dsg = kunit_kcalloc(test, 3, sizeof(*dsg), GFP_KERNEL);
	msg = kunit_kcalloc(test, 2, sizeof(*msg), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, dsg);
	KUNIT_ASSERT_NOT_NULL(test, msg);
	sg_init_table(dsg, 3);
	sg_set_buf(&dsg[0], *data + 100, 1000);
	sg_set_buf(&dsg[1], *data + PAGE_SIZE + 7, 548);
	sg_set_buf(&dsg[2], *data + 2 * PAGE_SIZE, 500);
	sg_init_table(msg, 2);
	sg_set_buf(&msg[0], *meta + 3, 16);
	sg_set_buf(&msg[1], *meta + 64, 16);
	for (i = 0; i < 2; i++)
		KUNIT_ASSERT_EQ(test, ib_dma_map_sg(f->ibdev, i ? msg : dsg,
						    i ? 2 : 3,
						    DMA_BIDIRECTIONAL),
				i ? 2 : 3);

	mr = shca_kunit_track_mr(test, ib_alloc_mr_integrity(f->pd, 3, 2));
	KUNIT_ASSERT_EQ(test, ib_map_mr_sg_pi(mr, dsg, 3, NULL, msg, 2, NULL,
					      SZ_4K), 0);
	return mr;
}
