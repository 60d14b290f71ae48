/* Benchmark-only (bench/queue.c): a calendar queue for periodic clocks, the
 * same (time, id, n) entries and the same order as the engine's queue
 * (core/twolevel_queue.h), with O(1) expected cost per event when the
 * bucket width suits the clocks.
 *
 * Layout (Brown 1988, "Calendar queues", CACM 31(10); the ring is a sliding
 * window like a timing wheel, Varghese & Lauck 1987):
 *   bottom   sorted array of the entries of the buckets already reached; the
 *            top is bottom[head], so top and pop are an array read;
 *   ring     nb buckets of width w covering bucket indices [next, next + nb);
 *            a bucket is one 64-byte line with three entries inline, more go
 *            to 64-byte chunks of four from a pooled free list; a bucket is
 *            unsorted until it is reached, then it is moved to bottom and
 *            sorted (usually 0-3 entries; already in order when clocks with
 *            equal steps tie, which the sort detects in one pass);
 *   far      binary heap of the entries beyond the ring (steps longer than
 *            the year nb * w): the slow path, served from there when the
 *            window reaches their bucket.
 * The bucket index is floor(t / w), computed as t * (1/w): any monotone map
 * of time keeps the order exact, because ties in time always share a
 * bucket and each bucket is sorted on (time, id) before it is served.
 *
 * Width: from the clock statistics, w = AVI_CQ_OCCUPANCY / (sum of 1/dt),
 * about that many entries per bucket, and nb covers the largest step so
 * that replace_top never takes the slow path; when that would need more
 * than AVI_CQ_MAX_BUCKETS_PER_ENTRY buckets per clock (wide step spreads)
 * the width grows instead. Without statistics the width is 1 and nb is
 * the capacity: correct for any times, fast only for steps near 1 (call
 * avi_cq_retune when the steps are known).
 *
 * Memory is allocated by init and when a bucket, far or the chunk pool
 * grows past what it held before; never per event in the steady state.
 * After a pile-up (all clocks starting at t = 0 put every entry in one
 * bucket) the chunk pool is released once empty and bottom is cut back
 * within a year.
 *
 * Cost: one random 64-byte write per event, so it is fast while the ring
 * (about 64-140 bytes per entry) stays in cache and bound by memory
 * latency beyond; twolevel_queue.h avoids that (bench/README.md).
 *
 * Retired clocks: avi_cq_remove deletes an entry by its key (t, id), in
 * O(bucket occupancy) (O(far size) for an entry in far). Lazy deletion also
 * works: keep the entry and pop it without rescheduling when it comes up.
 *
 * Times must be >= 0 (+0.0, not -0.0) and not NaN, as for the heap. */
#ifndef AVI_CALENDAR_QUEUE_H
#define AVI_CALENDAR_QUEUE_H

#include "core/twolevel_queue.h" /* avi_event, avi_clock_stats */

#include <stddef.h>
#include <stdint.h>

/* Target entries per bucket. */
#define AVI_CQ_OCCUPANCY 1.0
/* The ring never has more buckets than this per clock (memory bound). */
#define AVI_CQ_MAX_BUCKETS_PER_ENTRY 2

#define AVI_CQ_INLINE 3
#define AVI_CQ_CHUNK 4
#define AVI_CQ_NONE UINT32_MAX

typedef struct {
    avi_event e[AVI_CQ_INLINE];
    uint32_t count;      /* entries: inline ones first, then chunks in order */
    uint32_t first, last; /* chunk list, AVI_CQ_NONE when empty */
    uint32_t pad;
} avi_cq_bucket;

typedef struct {
    avi_event e[AVI_CQ_CHUNK];
} avi_cq_chunk;

typedef struct {
    /* bottom[head, tail): the reached entries (bucket index < next), sorted.
     * Its capacity always covers the largest bucket plus far, so that
     * moving a bucket into it never allocates. */
    avi_event *bottom;
    avi_event *scratch; /* as large as bottom, for merging runs */
    size_t head, tail, bottom_cap;

    avi_cq_bucket *ring;
    size_t nb;        /* buckets */
    uint64_t next;    /* bucket index held by ring[next_slot] */
    size_t next_slot;
    size_t ring_count;
    uint32_t max_bucket; /* most entries a bucket has held (bounds bottom) */
    uint32_t year_max;   /* largest bucket served since next_slot was 0 */
    double w, inv_w;

    avi_cq_chunk *chunk;
    uint32_t *chunk_next;
    uint32_t chunk_cap, chunk_used, chunk_free, chunk_live;

    avi_event *far; /* binary heap; its entries have bucket index >= next */
    size_t far_size, far_cap;
    uint64_t far_min; /* bucket index of far[0] */

    size_t size;
} avi_calendar_queue;

/* capacity: expected number of entries. stats: the clocks' steps, or NULL
 * to estimate the width from the first pushed batch. Returns 0, or -1 when
 * out of memory. */
int avi_cq_init(avi_calendar_queue *q, size_t capacity, const avi_clock_stats *stats);
void avi_cq_free(avi_calendar_queue *q);
/* Inserts an entry. Returns 0, or -1 when out of memory. */
int avi_cq_push(avi_calendar_queue *q, avi_event e);
/* Removes the earliest entry into *out; returns 0, or -1 when empty. */
int avi_cq_pop(avi_calendar_queue *q, avi_event *out);
/* Removes the entry with key (t, id); returns 0, or -1 when there is none. */
int avi_cq_remove(avi_calendar_queue *q, double t, uint32_t id);
/* Chooses the width again for a changed clock set; O(size). Returns 0, or
 * -1 when out of memory (the queue is then unchanged). */
int avi_cq_retune(avi_calendar_queue *q, const avi_clock_stats *stats);
/* Bytes allocated. */
size_t avi_cq_bytes(const avi_calendar_queue *q);

/* Internal: the out-of-line parts of top and replace_top. */
void avi_cq_refill_(avi_calendar_queue *q);
int avi_cq_insert_slow_(avi_calendar_queue *q, avi_event e, uint64_t k);

static inline size_t avi_cq_size(const avi_calendar_queue *q) { return q->size; }

/* Bucket index: monotone in t, saturating far beyond any window. */
#define AVI_CQ_K_FAR (UINT64_C(1) << 62)
static inline uint64_t avi_cq_bucket_of(const avi_calendar_queue *q, double t)
{
    double x = t * q->inv_w;
    if (!(x < 4.0e18)) return AVI_CQ_K_FAR;
    return x > 0 ? (uint64_t)(int64_t)x : 0;
}

/* The earliest entry; only when size > 0. Not const: the first top after
 * the current bucket is exhausted moves the next bucket to bottom. */
static inline const avi_event *avi_cq_top(avi_calendar_queue *q)
{
    if (q->head == q->tail) avi_cq_refill_(q);
    return &q->bottom[q->head];
}

/* Pop + push of e in the common case: one bucket write. Call only after
 * avi_cq_top (size > 0). Returns 0, or -1 when a slow path ran out of
 * memory: the old top is then gone and e was not inserted. */
static inline int avi_cq_replace_top(avi_calendar_queue *q, avi_event e)
{
    q->head++;
    uint64_t k = avi_cq_bucket_of(q, e.t);
    uint64_t d = k - q->next; /* wraps when k < next */
    if (d < q->nb) {
        size_t s = q->next_slot + (size_t)d;
        if (s >= q->nb) s -= q->nb;
        avi_cq_bucket *b = &q->ring[s];
        uint32_t c = b->count;
        if (c < AVI_CQ_INLINE) {
            b->e[c] = e;
            b->count = c + 1;
            q->ring_count++;
            return 0;
        }
    }
    q->size--;
    return avi_cq_insert_slow_(q, e, k);
}

#endif
