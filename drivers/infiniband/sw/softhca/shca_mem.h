/* SPDX-License-Identifier: GPL-2.0 */
/*
 * softhca - the MR engine: memory regions and windows, their keys and
 * translations, and the copy engine that moves bytes through them. Its
 * files are shca_mr.c (MR objects: the key table, lifetime, the MR types
 * and their registration), shca_xlat.c (translations), shca_mw.c (memory
 * windows, invalidation) and shca_mem.c (key resolution and the copy
 * engine); on-demand paging (shca_odp.c) and the T10-DIF engine
 * (shca_sig.c, whose types stay in shca.h) work on the same MRs.
 *
 * shca.h includes this header for the types; the last section is what
 * the MR files share with each other and nothing else calls.
 */
#ifndef SHCA_MEM_H
#define SHCA_MEM_H

#include <linux/completion.h>
#include <linux/iosys-map.h>
#include <linux/mutex.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

#include "shca_compat.h"

struct dma_buf;
struct ib_umem;
struct scatterlist;
struct shca_dev;
struct shca_dm;
struct shca_sig_state;

/**
 * enum shca_mr_state - life of an MR as the data path sees it
 * @SHCA_MR_FREE: no usable translation: a fast-reg MR before
 *	IB_WR_REG_MR or after invalidation
 * @SHCA_MR_VALID: translation established, key usable
 */
enum shca_mr_state {
	SHCA_MR_FREE,
	SHCA_MR_VALID,
};

/**
 * enum shca_xlat_kind - how a translation maps region offsets to memory
 * @SHCA_XLAT_IDENTITY: offset + @base (DMA MR, device memory)
 * @SHCA_XLAT_PAGES: fixed-size blocks (MEM_REG, USER)
 * @SHCA_XLAT_SEGS: byte-granular segments (SG_GAPS, INTEGRITY)
 * @SHCA_XLAT_ODP: user memory paged in on demand (shca_odp.c): offset +
 *	@base is a user virtual address, whose page may or may not be there
 */
enum shca_xlat_kind {
	SHCA_XLAT_IDENTITY,
	SHCA_XLAT_PAGES,
	SHCA_XLAT_SEGS,
	SHCA_XLAT_ODP,
};

struct ib_umem_odp;

/**
 * struct shca_odp - the on-demand paging state of an ODP MR
 * @umem: the core's ODP umem over the region; for an implicit MR, the
 *	root (no pages), whose children cover the address space
 * @implicit: the MR covers the whole address space of the process
 * @lock: serialises making children
 * @children: implicit MRs: child umems by address >> SHCA_ODP_CHILD_SHIFT,
 *	made on demand, freed with the MR
 */
struct shca_odp {
	struct ib_umem_odp *umem;
	bool implicit;
	struct mutex lock; /* see @lock above */
	struct xarray children;
};

/**
 * struct shca_seg - one segment of a byte-granular translation
 * @addr: kernel virtual address of the segment
 * @len: its length in bytes
 * @off: offset of its first byte within the region
 */
struct shca_seg {
	u64 addr;
	u64 len;
	u64 off;
};

/**
 * struct shca_xlat - translation of region offsets [0, @len) to memory
 * @kind: see enum shca_xlat_kind
 * @n: entries in use
 * @max: capacity of @pages or @segs
 * @page_shift: PAGES: log2 of the block size
 * @fbo: PAGES: offset of region byte 0 within the first block
 * @len: bytes covered
 * @base: IDENTITY: kernel virtual address of region byte 0; ODP: user
 *	virtual address of region byte 0
 * @pages: PAGES: kernel virtual address of each block
 * @segs: SEGS: the segments, sorted by @off
 * @odp: ODP: the MR's paging state
 *
 * Addresses are kernel virtual addresses: a software device uses virtual
 * DMA (ib_uses_virt_dma()), so DMA addresses and umem DMA blocks are such
 * addresses.
 */
struct shca_xlat {
	enum shca_xlat_kind kind;
	u32 n;
	u32 max;
	u32 page_shift;
	u64 fbo;
	u64 len;
	u64 base;
	union {
		u64 *pages;
		struct shca_seg *segs;
		struct shca_odp *odp;
	};
};

/**
 * struct shca_map - a complete translation of an MR
 * @data: the data (for every type but INTEGRITY, the whole region)
 * @meta: INTEGRITY: the protection information, at region offset
 *	@data.len (the layout mlx5 gives a KLM-mapped integrity MR)
 */
struct shca_map {
	struct shca_xlat data;
	struct shca_xlat meta;
};

/* u64 entries of the translation storage inside every MR (256 bytes). */
#define SHCA_XLAT_INLINE	32

/**
 * struct shca_mr - a memory region
 * @ref: held by the key table (initial reference, set by publishing)
 *	and by each lookup; first member, the only one the allocator does
 *	not clear (see shca_mr_alloc())
 * @ibmr: the core object
 * @sdev: owning device
 * @released: completed when the last reference is gone
 * @lock: protects @key, @state, @gen, @access, @iova, @length, @cur,
 *	@next, @next_fresh, the contents of @maps, ibmr.iova/length while a
 *	map builds them, and @sig. Held briefly: the copy path checks and
 *	snapshots under it; for fast-reg MRs, whose translation can change
 *	while they are published, it also moves each chunk of bytes under
 *	it (see shca_mem.c). Innermost lock; two MR locks nest only in
 *	address order.
 * @key: the key the device honours. ib_update_fast_reg_key() changes
 *	ibmr.lkey at once, but the device takes the new key byte only when
 *	IB_WR_REG_MR executes.
 * @type: translation type, set at creation and never changed
 * @state: see enum shca_mr_state
 * @gen: bumped whenever a registration executes or is invalidated; a
 *	transfer that started under another generation stops
 * @access: IB_ACCESS_* flags the key grants
 * @iova: first address of the region in the MR's address space
 * @length: bytes covered by the region
 * @cur: the translation in force
 * @next: fast-reg types: the translation map_mr_sg() builds, installed by
 *	the next registration; a mapped but unregistered list never
 *	disturbs the one in force
 * @next_fresh: @next was mapped since the last registration
 * @maps: storage for @cur and @next
 * @xlat_mem: one allocation holding every page or segment list of @maps,
 *	or NULL when they fit in @xlat_inline
 * @max_data: fast-reg types: capacity of the data translation
 * @max_meta: INTEGRITY: capacity of the metadata translation
 * @umem: USER: the pinned user memory (NULL for a dma-buf or ODP MR)
 * @odp: USER with IB_ACCESS_ON_DEMAND: the paging state (shca_odp.c); the
 *	notifier and the copy path use the pages under @lock
 * @dmabuf: USER over a dma-buf: the buffer, referenced while registered
 * @dmabuf_map: its kernel mapping (dma_buf_vmap()), held while registered
 * @sig: INTEGRITY: signature status
 * @id: number of the registration on its device, never reused: a work
 *	request names an object by key and @id, so that one posted for an
 *	object since destroyed never reaches a new one in the same slot
 * @windows: MRs: memory windows bound to this MR (see shca_mw_bind());
 *	while nonzero the MR cannot be deregistered, re-registered or
 *	invalidated, so its translation is the one every window reads
 * @dying: MRs: deregistration began, no window binds to it any more;
 *	windows: deallocation began, no bind installs itself any more.
 *	Under @lock.
 * @mw_type: 0 for an MR; IB_MW_TYPE_1 or IB_MW_TYPE_2 for the key table
 *	entry of a memory window (struct shca_mw). A window's @key, @state,
 *	@gen, @access, @iova and @length are those of its binding,
 *	ibmr.pd is the window's PD, and nothing else of the MR is used.
 * @parent: windows: the MR the window is bound to (counted in its
 *	@windows), NULL while unbound; under @lock
 * @win_off: windows: offset of the window's first byte in @parent's
 *	region; under @lock
 * @qpn: type 2 windows: number of the QP the window was bound through,
 *	the only one that may access or remotely invalidate it; under @lock
 * @xlat_inline: storage for the lists of @maps when they fit (a user MR
 *	of up to 32 pages, a fast-reg MR of up to 16): no allocation for a
 *	small MR. Last member, not cleared by the allocator: it is written
 *	before it is read.
 *
 * MRs come from a SLAB_TYPESAFE_BY_RCU cache (see shca_mr.c): @ref is 0
 * in a free MR and while one is built, and its first reference, set with
 * release ordering, is what publishes it; lookups take a reference under
 * RCU and then check that the MR is still the one the slot holds.
 */
struct shca_mr {
	refcount_t ref;
	struct ib_mr ibmr;
	struct shca_dev *sdev;
	struct completion released;
	spinlock_t lock; /* see @lock above */
	u32 key;
	enum ib_mr_type type;
	enum shca_mr_state state;
	u32 gen;
	int access;
	u64 iova;
	u64 length;
	struct shca_map *cur;
	struct shca_map *next;
	bool next_fresh;
	struct shca_map maps[2];
	void *xlat_mem;
	u32 max_data;
	u32 max_meta;
	struct ib_umem *umem;
	struct shca_odp *odp;
	struct dma_buf *dmabuf;
	struct iosys_map dmabuf_map;
	struct shca_sig_state *sig;
	u64 id;
	atomic_t windows;
	bool dying;
	u8 mw_type;
	struct shca_mr *parent;
	u64 win_off;
	u32 qpn;
	u64 xlat_inline[SHCA_XLAT_INLINE];
};

/**
 * struct shca_mw - a memory window
 * @ibmw: the core object; first member (INIT_RDMA_OBJ_SIZE)
 * @win: the window's entry in the key table, a struct shca_mr with
 *	@mw_type set: allocated by the driver, so that it outlives the RCU
 *	readers of the table (the core frees @ibmw as soon as dealloc_mw
 *	returns)
 */
struct shca_mw {
	struct ib_mw ibmw;
	struct shca_mr *win;
};

/**
 * struct shca_bind - a memory-window bind, as a work request carries it
 * @mw_key: a key of the window (its index names the window's slot)
 * @mw_id: the window's shca_mr.id
 * @new_key: the key the window takes; its index must be the window's
 * @mr_key: lkey of the MR to bind to (ignored when @length is 0)
 * @mr_id: the MR's shca_mr.id
 * @addr: first address of the window in the MR's address space
 * @length: bytes of the window; 0 unbinds a type 1 window
 * @access: IB_ACCESS_REMOTE_* rights the window grants, and
 *	IB_ZERO_BASED for a window addressed from 0 (type 2 only)
 *
 * Objects are named by numbers, never pointers: a request may outlive
 * the window and the MR it names.
 */
struct shca_bind {
	u32 mw_key;
	u64 mw_id;
	u32 new_key;
	u32 mr_key;
	u64 mr_id;
	u64 addr;
	u64 length;
	int access;
};

/* Registration access flags the MR engine implements. */
#define SHCA_MR_ACCESS_SUPPORTED \
	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
	 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
	 IB_ACCESS_MW_BIND | IB_ZERO_BASED)

/* Rights a memory window can grant: remote ones only. */
#define SHCA_MW_ACCESS_REMOTE \
	(IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ | \
	 IB_ACCESS_REMOTE_ATOMIC)

/**
 * enum shca_copy_dir - direction of a copy through an MR
 * @SHCA_COPY_TO_MR: buffer -> memory the key names
 * @SHCA_COPY_FROM_MR: memory the key names -> buffer
 */
enum shca_copy_dir {
	SHCA_COPY_TO_MR,
	SHCA_COPY_FROM_MR,
};

/**
 * struct shca_mem_target - memory named by a key, as the data path sees it
 * @pd: PD of the QP (or of the caller) that accesses it
 * @key: lkey or rkey
 * @iova: address of the first byte in the MR's address space
 * @access: IB_ACCESS_* rights the access needs
 * @qpn: remote accesses: number of the responder QP the request came to
 *	(a type 2 window answers only the QP it was bound through)
 * @no_sleep: the access runs where it cannot sleep (see struct shca_span)
 */
struct shca_mem_target {
	struct ib_pd *pd;
	u32 key;
	u64 iova;
	int access;
	u32 qpn;
	bool no_sleep;
};

/**
 * struct shca_span - a resolved range of one MR, as a transfer uses it
 * @mr: the MR, with a reference held
 * @map: the translation in force when the range was resolved
 * @off: region offset of the next byte to move
 * @gen: @mr->gen when the range was resolved
 * @locked: @map can change while the MR is published (fast-reg types):
 *	every chunk moves under @mr->lock, and only while @mr->gen is @gen
 * @sig: an integrity MR whose registration carries PI: @off is an offset
 *	in its wire view and bytes move through the T10-DIF engine
 * @odp: an ODP MR: each chunk moves only once its pages are faulted in
 *	(@locked is set too: the pages stay while the MR's lock is held)
 * @no_sleep: the transfer runs where it cannot sleep: a page that is not
 *	there fails it with -EAGAIN instead of being faulted in
 *
 * shca_mr_hold() fills one, shca_mr_unhold() drops it; in between the
 * MR stays allocated (its deregistration waits) but may be invalidated
 * or re-registered: a transfer through the span then fails with
 * -EKEYREVOKED at its next chunk.
 */
struct shca_span {
	struct shca_mr *mr;
	const struct shca_map *map;
	u64 off;
	u32 gen;
	bool locked;
	bool sig;
	bool odp;
	bool no_sleep;
};

/* shca_mr.c: MR objects */
int shca_mr_cache_init(void);
void shca_mr_cache_fini(void);
void shca_mr_table_init(struct shca_dev *sdev);
void shca_mr_table_destroy(struct shca_dev *sdev);
int shca_mr_check_access(int access);
struct shca_mr *shca_mr_create_dma(struct shca_dev *sdev, struct ib_pd *pd,
				   int access);
struct shca_mr *shca_mr_create_fast(struct shca_dev *sdev,
				    enum ib_mr_type type, u32 max_data,
				    u32 max_meta);
struct shca_mr *shca_mr_create_odp(struct shca_dev *sdev, u64 start,
				   u64 length, u64 iova, int access);
struct shca_mr *shca_mr_create_user(struct shca_dev *sdev,
				    struct ib_umem *umem, u64 iova, int access);
struct shca_mr *shca_mr_create_dmabuf(struct shca_dev *sdev, int fd,
				      u64 offset, u64 length, u64 iova,
				      int access);
struct shca_mr *shca_mr_create_dm(struct shca_dev *sdev, struct shca_dm *dm,
				  u64 offset, u64 length, int access);
void shca_mr_destroy(struct shca_mr *mr);
struct shca_mr *shca_mr_get(struct shca_dev *sdev, u32 key);
#if IS_ENABLED(CONFIG_KUNIT)
u32 shca_mr_slot_to_index(const struct shca_dev *sdev, u32 slot);
u32 shca_mr_key_slot(const struct shca_dev *sdev, u32 key);
struct shca_mr *shca_mr_try_get(struct shca_dev *sdev, u32 key,
				struct shca_mr *mr);
#endif
void shca_mr_put(struct shca_mr *mr);
int shca_mr_fast_reg(struct shca_mr *mr, u32 key, int access);
int shca_mr_fast_reg_pi(struct shca_mr *mr, u32 key, int access,
			const struct ib_sig_attrs *attrs);
int shca_mr_pi_postable(struct shca_mr *mr, int access,
			const struct ib_sig_attrs *attrs);
int shca_mr_retire(struct shca_mr *mr);
void shca_mr_unretire(struct shca_mr *mr);
int shca_mr_set_access(struct shca_mr *mr, struct ib_pd *pd, int access);
void shca_mr_sig_error(struct shca_mr *mr, const struct ib_sig_err *err);
int shca_mr_check_status(struct shca_mr *mr, u32 check_mask,
			 struct ib_mr_status *status);

/* shca_xlat.c: translations */
int shca_mr_map_pages(struct shca_mr *mr, struct scatterlist *sg, int nents,
		      unsigned int *sg_offset, u32 page_size);
int shca_mr_map_segs(struct shca_mr *mr, struct scatterlist *sg, int nents,
		     unsigned int *sg_offset);
int shca_mr_map_pi(struct shca_mr *mr, struct scatterlist *data_sg,
		   int data_nents, unsigned int *data_offset,
		   struct scatterlist *meta_sg, int meta_nents,
		   unsigned int *meta_offset);
#if IS_ENABLED(CONFIG_KUNIT)
bool shca_umem_use_segs(u64 nseg, u64 npages);
#endif

/* shca_mw.c: memory windows, invalidation */
int shca_mr_invalidate(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		       u32 key);
struct shca_mr *shca_mw_create(struct shca_dev *sdev, struct ib_pd *pd,
			       u8 type);
void shca_mw_destroy(struct shca_mr *win);
int shca_mw_bind(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		 const struct shca_bind *b);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_mw_bind_found(struct shca_mr *win);
#endif

/* shca_mem.c: key resolution and the copy engine */
int shca_mr_fault(struct shca_dev *sdev, const struct shca_mem_target *t,
		  u64 len, bool write);
int shca_mr_copy(struct shca_dev *sdev, const struct shca_mem_target *t,
		 void *buf, u64 len, enum shca_copy_dir dir);
int shca_mr_copy_mr(struct shca_dev *sdev, const struct shca_mem_target *dst,
		    const struct shca_mem_target *src, u64 len);
int shca_mr_copy_xdev(struct shca_dev *dst_sdev,
		      const struct shca_mem_target *dst,
		      struct shca_dev *src_sdev,
		      const struct shca_mem_target *src, u64 len,
		      bool *dst_failed);
int shca_mr_hold(struct shca_dev *sdev, const struct shca_mem_target *t,
		 u64 len, struct shca_span *span);
void shca_mr_unhold(struct shca_span *span);
int shca_mr_copy_held(const struct shca_span *held, u64 off,
		      struct shca_dev *sdev, const struct shca_mem_target *t,
		      u64 len, bool to_held, bool *dst_failed);
int shca_mr_copy_held_buf(const struct shca_span *held, u64 off, void *buf,
			  u64 len, enum shca_copy_dir dir);
int shca_mr_copy_spans(const struct shca_span *dst, u64 dst_off,
		       const struct shca_span *src, u64 src_off, u64 len,
		       bool *dst_failed);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_mr_copy_chunk_done(struct shca_mr *mr);
#endif

/*
 * What the MR files share with each other (shca_mr.c, shca_xlat.c,
 * shca_mw.c, shca_mem.c); nothing else calls these.
 */

#define SHCA_MR_KEY_BITS	8

/**
 * shca_mr_index() - the index part of a key
 * @key: an lkey or rkey
 *
 * Return: the index, which names the key's slot of the key table
 * (shca_mr_key_slot()); 0 for SHCA_LOCAL_DMA_LKEY.
 */
static inline u32 shca_mr_index(u32 key)
{
	return key >> SHCA_MR_KEY_BITS;
}

/**
 * shca_mr_is_fast_reg() - is @mr of a type registered by work requests?
 * @mr: an MR
 *
 * Return: true for MEM_REG, SG_GAPS and INTEGRITY MRs, whose translation
 * changes while they are published.
 */
static inline bool shca_mr_is_fast_reg(const struct shca_mr *mr)
{
	return mr->type == IB_MR_TYPE_MEM_REG ||
	       mr->type == IB_MR_TYPE_SG_GAPS ||
	       mr->type == IB_MR_TYPE_INTEGRITY;
}

/**
 * shca_xlat_entry_size() - bytes of one entry of a translation list
 * @kind: SHCA_XLAT_PAGES or SHCA_XLAT_SEGS
 *
 * Return: the size of a page address or of a struct shca_seg.
 */
static inline size_t shca_xlat_entry_size(enum shca_xlat_kind kind)
{
	return kind == SHCA_XLAT_PAGES ? sizeof(u64) : sizeof(struct shca_seg);
}

/* shca_mr.c */
struct shca_mr *shca_mr_alloc(struct shca_dev *sdev, enum ib_mr_type type,
			      int access);
void shca_mr_publish(struct shca_mr *mr);
void shca_mr_sig_latch(struct shca_mr *mr, const struct ib_sig_err *err);

/* shca_xlat.c */
void *shca_xlat_mem(struct shca_mr *mr, size_t size, gfp_t gfp);
void shca_xlat_carve(struct shca_xlat *x, enum shca_xlat_kind kind, u32 max,
		     u8 **mem);
int shca_xlat_from_umem(struct shca_mr *mr, struct ib_umem *umem);
void *shca_xlat_ptr(const struct shca_xlat *x, u64 off, u64 *contig);
void *shca_map_ptr(const struct shca_map *m, u64 off, u64 *contig);
u64 shca_xlat_len(const struct shca_xlat *x);
u64 shca_map_len(const struct shca_map *m);

/* shca_mw.c */
int shca_mw_check_target(struct shca_mr *win, const struct shca_mem_target *t,
			 u64 len, struct shca_span *span);

struct dentry;
struct ib_sig_err;
struct ib_t10_dif_domain;
struct shca_dm;
struct shca_sig_bufs;
struct shca_sig_stream;
struct t10_pi_tuple;

/* shca_odp.c: on-demand paging */
#if SHCA_ODP
void *shca_odp_ptr(const struct shca_odp *odp, u64 va, bool write,
		   u64 *contig);
bool shca_odp_ready(const struct shca_odp *odp, u64 va, u64 len, bool write);
int shca_odp_fault(struct shca_mr *mr, u64 va, u64 len, bool write,
		   bool fault);
int shca_odp_retry(struct shca_mr *mr, u64 va, u64 len, bool write,
		   unsigned int *tries);
int shca_odp_init(struct shca_mr *mr, u64 start, u64 length, int access);
#if IS_ENABLED(CONFIG_KUNIT)
void shca_odp_umem_made(struct ib_umem_odp *umem);
#endif
void shca_odp_fini(struct shca_mr *mr);
int shca_mr_advise(struct shca_dev *sdev, struct ib_pd *pd, u32 advice,
		   bool sync, const struct ib_sge *sge, u32 n);
#endif

/* shca_sig.c: the T10-DIF engine */
u16 shca_sig_guard(const struct ib_t10_dif_domain *dif, const void *buf,
		   size_t len);
void shca_sig_gen_pi(const struct ib_t10_dif_domain *dif, u32 block,
		     const void *data, struct t10_pi_tuple *pi);
bool shca_sig_check_pi(const struct ib_t10_dif_domain *dif, u8 check_mask,
		       u32 block, const void *data,
		       const struct t10_pi_tuple *pi, struct ib_sig_err *err);
int shca_sig_attrs_check(const struct ib_sig_attrs *attrs);
u64 shca_sig_wire_len(const struct ib_sig_attrs *attrs, u64 data_len);
int shca_sig_stream_init(struct shca_sig_stream *st,
			 const struct ib_sig_attrs *attrs, bool to_wire,
			 u32 first_block);
void shca_sig_stream_xfer(struct shca_sig_stream *st,
			  struct shca_sig_bufs *b);
bool shca_sig_stream_idle(const struct shca_sig_stream *st);
bool shca_sig_stream_error(const struct shca_sig_stream *st,
			   struct ib_sig_err *err);
void shca_sig_debugfs_init(struct dentry *dir);

/* shca_dm.c: the device-memory arena */
int shca_dm_arena_init(struct shca_dev *sdev);
void shca_dm_arena_destroy(struct shca_dev *sdev);
int shca_dm_alloc(struct shca_dev *sdev, struct shca_dm *dm, u64 length,
		  u32 log_align, bool user);
void shca_dm_free(struct shca_dev *sdev, unsigned long addr, u64 alloc_size);

#endif /* SHCA_MEM_H */
