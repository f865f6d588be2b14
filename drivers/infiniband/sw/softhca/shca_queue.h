/* SPDX-License-Identifier: GPL-2.0 */
/**
 * DOC: Rings
 *
 * Ring arithmetic shared by the work queues and the CQs.
 *
 * Every ring of softhca is a power of two of slots indexed by free-running
 * 32-bit producer and consumer counters: slot = counter & mask, entries in
 * use = producer - consumer (correct across wrap-around), empty when the
 * two are equal. Work queues hold at most max_wr entries; a CQ one entry
 * less than its slots. A counter the kernel reads from memory a process
 * can write (a user CQ's consumer) only ever bounds that process' ring:
 * any value makes shca_ring_room() answer something in [0, capacity].
 */
#ifndef SHCA_QUEUE_H
#define SHCA_QUEUE_H

#include <linux/types.h>

/**
 * shca_ring_used() - entries between a consumer and a producer counter
 * @prod: producer counter (next slot to fill)
 * @cons: consumer counter (next slot to take)
 *
 * Return: entries in use; meaningless (large) if @cons is ahead of @prod.
 */
static inline u32 shca_ring_used(u32 prod, u32 cons)
{
	return prod - cons;
}

/**
 * shca_ring_room() - whether one more entry fits
 * @prod: producer counter
 * @cons: consumer counter, possibly untrusted
 * @capacity: entries the ring may hold
 *
 * Return: true if shca_ring_used() is below @capacity.
 */
static inline bool shca_ring_room(u32 prod, u32 cons, u32 capacity)
{
	return shca_ring_used(prod, cons) < capacity;
}

/**
 * struct shca_queue - a send or receive queue
 * @buf: @mask + 1 slots of @slot_size bytes
 * @slot_size: bytes per slot
 * @mask: slots - 1 (a power of two minus one)
 * @max_wr: work requests the consumer may have outstanding
 * @max_sge: scatter/gather entries per work request
 * @head: next slot to execute or complete (consumer counter)
 * @tail: next free slot (producer counter)
 *
 * The QP's lock protects @head and @tail.
 */
struct shca_queue {
	void *buf;
	u32 slot_size;
	u32 mask;
	u32 max_wr;
	u32 max_sge;
	u32 head;
	u32 tail;
};

static inline void *shca_queue_slot(const struct shca_queue *q, u32 idx)
{
	return q->buf + (size_t)(idx & q->mask) * q->slot_size;
}

static inline bool shca_queue_empty(const struct shca_queue *q)
{
	return q->head == q->tail;
}

static inline bool shca_queue_full(const struct shca_queue *q)
{
	return !shca_ring_room(q->tail, q->head, q->max_wr);
}

/* The slot at the head (oldest entry), or NULL when empty. */
static inline void *shca_queue_head(const struct shca_queue *q)
{
	return shca_queue_empty(q) ? NULL : shca_queue_slot(q, q->head);
}

/* Empty the queue (RESET). */
static inline void shca_queue_reset(struct shca_queue *q)
{
	q->head = 0;
	q->tail = 0;
}

#endif /* SHCA_QUEUE_H */
