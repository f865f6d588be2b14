// SPDX-License-Identifier: GPL-2.0
/*
 * softhca - memory windows, and invalidation.
 *
 * A window takes a slot of the MR key table: its entry is a struct
 * shca_mr with mw_type set (see struct shca_mw), found by the same
 * lookup as an MR, so the copy engine resolves window keys like MR keys
 * (shca_mw_check_target()). A bind (shca_mw_bind()) is checked against
 * the window and, under its lock, against the MR (shca_mw_attach());
 * the MR counts the windows bound to it and cannot be deregistered,
 * re-registered or invalidated while any is. shca_mr_invalidate()
 * executes LOCAL_INV and SEND_WITH_INV for both: a fast-reg MR becomes
 * FREE, a type 2 window is unbound. Either way transfers in flight stop
 * at their next chunk (mr->gen). The rules are the IBTA's (10.6.7); see
 * Documentation/mr-types.rst.
 */

#include <linux/overflow.h>

#include "shca_mem.h"
#include "shca_verbs.h"

/* The object in @key's slot if it is registration @id, with a reference. */
static struct shca_mr *shca_mr_get_id(struct shca_dev *sdev, u32 key, u64 id)
{
	struct shca_mr *mr = shca_mr_get(sdev, key);

	if (mr && mr->id != id) {
		shca_mr_put(mr);
		return NULL;
	}
	return mr;
}

/* Unbind a window, under its lock; *@parent: the MR it was bound to. */
static void shca_mw_unbind_locked(struct shca_mr *win, struct shca_mr **parent)
{
	lockdep_assert_held(&win->lock);

	*parent = win->parent;
	win->parent = NULL;
	win->state = SHCA_MR_FREE;
	/* Transfers in flight through the window stop at their next chunk. */
	win->gen++;
}

/*
 * Invalidate a window, under its lock (the key matched): only a bound
 * type 2 window of @pd, through the QP it was bound through.
 */
static int shca_mw_invalidate_locked(struct shca_mr *win, struct ib_pd *pd,
				     u32 qpn, struct shca_mr **parent)
{
	lockdep_assert_held(&win->lock);

	if (win->mw_type != IB_MW_TYPE_2)
		return -EINVAL;
	if (win->state != SHCA_MR_VALID)
		return -EKEYREVOKED;
	if (win->ibmr.pd != pd || win->qpn != qpn)
		return -EACCES;
	shca_mw_unbind_locked(win, parent);
	return 0;
}

/**
 * shca_mr_invalidate() - execute a local or remote invalidation
 * @sdev: device the key belongs to
 * @pd: PD of the QP that invalidates
 * @qpn: number of that QP (LOCAL_INV: the requester; SEND_WITH_INV: the
 *	responder)
 * @key: the key to invalidate
 *
 * A fast-reg MR becomes FREE; a type 2 memory window is unbound.
 *
 * Context: any context.
 * Return: 0; -ENOKEY for an unknown or stale key; -EACCES for an MR or
 * window of another PD, or a type 2 window bound through another QP;
 * -EINVAL for an MR that is not a fast-reg MR (DMA, USER and DM MRs
 * cannot be invalidated) or a type 1 window; -EBUSY for an MR that
 * windows are bound to; -EKEYREVOKED for a window that is not bound.
 * Nothing changes on error.
 */
int shca_mr_invalidate(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		       u32 key)
{
	struct shca_mr *mr, *parent = NULL;
	unsigned long flags;
	int err = 0;

	mr = shca_mr_get(sdev, key);
	if (!mr)
		return -ENOKEY;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != key)
		err = -ENOKEY;
	else if (mr->mw_type)
		err = shca_mw_invalidate_locked(mr, pd, qpn, &parent);
	else if (!shca_mr_is_fast_reg(mr))
		err = -EINVAL;
	else if (mr->ibmr.pd != pd)
		err = -EACCES;
	else if (atomic_read(&mr->windows))
		err = -EBUSY;
	if (!err && !mr->mw_type) {
		mr->state = SHCA_MR_FREE;
		/* Transfers in flight through the MR stop at their next chunk. */
		mr->gen++;
	}
	spin_unlock_irqrestore(&mr->lock, flags);

	if (parent)
		atomic_dec(&parent->windows);
	shca_mr_put(mr);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mr_invalidate);

/**
 * shca_mw_create() - make the key table entry of a memory window
 * @sdev: owning device
 * @pd: the window's PD
 * @type: IB_MW_TYPE_1 or IB_MW_TYPE_2
 *
 * The window is published unbound: its key names nothing until a bind
 * executes.
 *
 * Context: process context.
 * Return: the window or ERR_PTR(-ENOMEM).
 */
struct shca_mr *shca_mw_create(struct shca_dev *sdev, struct ib_pd *pd,
			       u8 type)
{
	struct shca_mr *win = shca_mr_alloc(sdev, IB_MR_TYPE_USER, 0);

	if (IS_ERR(win))
		return win;
	win->mw_type = type;
	win->ibmr.pd = pd;
	shca_mr_publish(win);
	return win;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_create);

/**
 * shca_mw_destroy() - unbind a memory window, unpublish and free it
 * @win: a window of shca_mw_create()
 *
 * Transfers through the window stop at their next chunk; the MR it was
 * bound to can be deregistered once this returns.
 *
 * Context: process context; sleeps until the window's users are gone.
 */
void shca_mw_destroy(struct shca_mr *win)
{
	struct shca_mr *parent;
	unsigned long flags;

	spin_lock_irqsave(&win->lock, flags);
	/* A bind that found the window before it was unpublished fails. */
	win->dying = true;
	shca_mw_unbind_locked(win, &parent);
	spin_unlock_irqrestore(&win->lock, flags);
	if (parent)
		atomic_dec(&parent->windows);
	shca_mr_destroy(win);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_destroy);

/*
 * Count a window @b binds to @mr, under the MR's lock: the checks that
 * concern the MR, made while it cannot change.
 */
static int shca_mw_attach(struct shca_mr *mr, struct ib_pd *pd,
			  const struct shca_bind *b)
{
	unsigned long flags;
	u64 end;
	int err = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->key != b->mr_key)
		err = -ENOKEY;
	else if (mr->ibmr.pd != pd)
		err = -EACCES;
	else if (mr->state != SHCA_MR_VALID || mr->dying)
		err = -EKEYREVOKED;
	else if (!(mr->access & IB_ACCESS_MW_BIND) || mr->sig || mr->odp)
		err = -EPERM;
	/* A window cannot give writes to memory the MR cannot write. */
	else if ((b->access &
		  (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
		 !(mr->access & IB_ACCESS_LOCAL_WRITE))
		err = -EPERM;
	else if (check_add_overflow(b->addr, b->length, &end) ||
		 b->addr < mr->iova || end - mr->iova > mr->length)
		err = -ERANGE;
	else
		atomic_inc(&mr->windows);
	spin_unlock_irqrestore(&mr->lock, flags);
	return err;
}

#if IS_ENABLED(CONFIG_KUNIT)
/**
 * shca_mw_bind_found() - a bind found its window and MR (KUnit hook)
 * @win: the window, a reference held
 *
 * Called before the bind takes the window's lock. KUnit tests redirect
 * it to destroy the window in the middle of the bind.
 */
void shca_mw_bind_found(struct shca_mr *win)
{
	KUNIT_STATIC_STUB_REDIRECT(shca_mw_bind_found, win);
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_bind_found);
#else
static inline void shca_mw_bind_found(struct shca_mr *win)
{
}
#endif

/**
 * shca_mw_bind() - execute a memory-window bind
 * @sdev: device of the QP that binds
 * @pd: PD of that QP
 * @qpn: its number; a type 2 window answers only this QP from now on
 * @b: the bind
 *
 * The IBTA's rules: the window, the MR and the QP share one PD; the MR
 * is valid and was registered with IB_ACCESS_MW_BIND; the window lies
 * within the MR; it grants remote rights only, and remote write or
 * atomic access only over an MR with local write; a type 2 window must
 * be unbound (invalidate it first) and may be zero-based, a type 1
 * window is rebound in place and a zero @b->length unbinds it. The
 * window takes @b->new_key, whose index must be the window's.
 *
 * Context: any context.
 * Return: 0; -ENOKEY when the window or the MR is gone or the MR's key
 * is stale; -EINVAL for a key of another index, unknown access flags, a
 * zero-based type 1 window or a bound type 2 window; -EACCES for another
 * PD; -EPERM for an MR without IB_ACCESS_MW_BIND (or an integrity MR),
 * or a write to an MR without local write; -EKEYREVOKED for an MR that
 * is invalid or being deregistered; -ERANGE for a window beyond the MR;
 * -ENOKEY also for a window whose deallocation began meanwhile (its MR
 * then keeps no count of it). Nothing changes on error.
 */
int shca_mw_bind(struct shca_dev *sdev, struct ib_pd *pd, u32 qpn,
		 const struct shca_bind *b)
{
	struct shca_mr *win, *mr = NULL, *old = NULL;
	unsigned long flags;
	int err = 0;

	win = shca_mr_get_id(sdev, b->mw_key, b->mw_id);
	if (!win)
		return -ENOKEY;
	if (!win->mw_type)
		err = -ENOKEY;
	else if (shca_mr_index(b->new_key) != shca_mr_index(win->key) ||
		 (b->access & ~(SHCA_MW_ACCESS_REMOTE | IB_ACCESS_LOCAL_WRITE |
				IB_ZERO_BASED)) ||
		 ((b->access & IB_ZERO_BASED) && win->mw_type == IB_MW_TYPE_1))
		err = -EINVAL;
	else if (win->ibmr.pd != pd)
		err = -EACCES;
	if (err)
		goto out;

	/* A type 1 window of length 0 is unbound; any other names an MR. */
	if (b->length || win->mw_type == IB_MW_TYPE_2) {
		mr = shca_mr_get_id(sdev, b->mr_key, b->mr_id);
		err = !mr || mr->mw_type ? -ENOKEY : shca_mw_attach(mr, pd, b);
		if (err)
			goto out;
	}

	shca_mw_bind_found(win);
	spin_lock_irqsave(&win->lock, flags);
	if (win->dying) {
		err = -ENOKEY;
	} else if (win->mw_type == IB_MW_TYPE_2 &&
		   win->state == SHCA_MR_VALID) {
		err = -EINVAL;
	} else {
		shca_mw_unbind_locked(win, &old);
		win->key = b->new_key;
		if (mr) {
			win->parent = mr;
			win->win_off = b->addr - mr->iova;
			win->access = b->access & (SHCA_MW_ACCESS_REMOTE |
						   IB_ZERO_BASED);
			win->iova = b->access & IB_ZERO_BASED ? 0 : b->addr;
			win->length = b->length;
			win->qpn = qpn;
			win->state = SHCA_MR_VALID;
		}
	}
	spin_unlock_irqrestore(&win->lock, flags);
	/* A type 1 unbind (no MR) counted nothing to take back. */
	if (err && mr)
		atomic_dec(&mr->windows);
	if (old)
		atomic_dec(&old->windows);
out:
	if (mr)
		shca_mr_put(mr);
	shca_mr_put(win);
	return err;
}
EXPORT_SYMBOL_IF_KUNIT(shca_mw_bind);

/**
 * shca_mw_check_target() - check an access through a window
 * @win: the window's key table entry, its lock held
 * @t: the key, iova, PD, QP and access
 * @len: bytes of the access
 * @span: filled with the range, also on error (for the reference)
 *
 * Describes the range in @span: the window's bytes of the MR it is bound
 * to, moved under the window's lock chunk by chunk (span->locked), so a
 * transfer stops at the next chunk once the window is invalidated,
 * rebound or deallocated. The MR's translation is stable meanwhile: an
 * MR with bound windows cannot be invalidated, re-registered or freed.
 *
 * Return: 0, or -ENOKEY, -EKEYREVOKED, -EACCES, -EPERM, -ERANGE or
 * -EFAULT as for shca_mr_copy().
 */
int shca_mw_check_target(struct shca_mr *win, const struct shca_mem_target *t,
			 u64 len, struct shca_span *span)
{
	u64 map_len = win->parent ? shca_map_len(win->parent->cur) : 0;
	u64 off = t->iova - win->iova;
	int err;

	lockdep_assert_held(&win->lock);

	/* A window has an rkey, no lkey. */
	if (win->key != t->key || !(t->access & SHCA_MW_ACCESS_REMOTE))
		err = -ENOKEY;
	else if (win->state != SHCA_MR_VALID)
		err = -EKEYREVOKED;
	else if (win->ibmr.pd != t->pd ||
		 (win->mw_type == IB_MW_TYPE_2 && win->qpn != t->qpn))
		err = -EACCES;
	else if ((win->access & t->access) != t->access)
		err = -EPERM;
	else if (t->iova < win->iova || off > win->length ||
		 len > win->length - off)
		err = -ERANGE;
	else if (len && (off + win->win_off > map_len ||
			 len > map_len - (off + win->win_off)))
		err = -EFAULT;
	else
		err = 0;
	*span = (struct shca_span){ .mr = win, .off = off + win->win_off,
				    .gen = win->gen, .locked = true };
	if (!err)
		span->map = win->parent->cur;
	return err;
}
