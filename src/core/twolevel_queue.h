/* A two-level bucketed event queue, the engine's: (time, id, n) entries in
 * the order of core/event.h, built so that scheduling an event touches only
 * memory already in cache (bench/queue.c compares it with a 4-ary heap and
 * a calendar queue, bench/event_queue.h and bench/calendar_queue.h).
 *
 * Level 1, the spans: a calendar (Brown 1988, "Calendar queues", CACM
 * 31(10)) of C coarse buckets of width W, each an append-only list of
 * 512-byte chunks. An entry is appended to the tail of its span's list:
 * with a few thousand spans the tails stay in cache, where one random
 * write per event into a fine-grained calendar misses it once the queue
 * outgrows the cache.
 * Level 2, the current span: when the window reaches a span, its entries
 * are read once, in order, and sorted into `bottom` by one counting-sort
 * pass on a fine index floor(t / w) with w = W / F (about half an entry
 * per fine bucket), then by (time, id) inside each fine bucket: a short
 * insertion sort, or, for many equal times (clocks with equal steps), one
 * scan when they arrive in id order and a merge when they arrive as a few
 * runs in id order (one per step). Top and pop read bottom in sequence.
 * This is the two-level ladder idea of Tang, Goh and Thng (2005, "Ladder
 * queue", ACM TOMACS 15(3)) with the rung widths fixed from the clocks.
 *
 * Sizes: from the clock statistics, spans of about E entries (E a power of
 * two near sqrt(events per largest step), 256..16384), W <= the smallest
 * step so that replace_top always appends to a later span, and C spans
 * covering the largest step (at most one per 8 clocks). Entries beyond the
 * C spans (steps longer than that year, statistics that were wrong, or a
 * queue filled far from t = 0) go to a binary heap, `far`, and are taken
 * from it when their span is reached: correct, at about the heap's speed.
 * A clock with a step below W is rescheduled into the loaded span, a
 * sorted insertion into bottom that moves the entries due before it.
 * When the clock set changes (contact potentials added or retired in
 * numbers, a restart far from t = 0), avi_tl_retune chooses the sizes again
 * and starts the window at the earliest entry.
 * Exact order never depends on the sizes: the fine and coarse indices are
 * monotone in t, ties in time share a fine bucket, and each fine bucket is
 * sorted on (time, id).
 *
 * Memory: about 16 bytes per entry plus the partly filled tail chunk of
 * each span, bottom (a span) with as much scratch for merging, and far.
 * It is allocated by init and when
 * the chunk pool, bottom or far grow past what they held before; never per
 * event in the steady state, and never in top (what a span load could need
 * is reserved when entries are pushed).
 *
 * Retired clocks: avi_tl_remove deletes an entry by its key (t, id) in
 * O(entries of its span), O(far size) if it lies in far. Lazy deletion also
 * works: keep the entry and pop it without rescheduling when it comes up.
 *
 * Times must be >= 0 (+0.0, not -0.0) and not NaN, as for the heap. */
#ifndef AVI_TWOLEVEL_QUEUE_H
#define AVI_TWOLEVEL_QUEUE_H

#include "core/event.h"

#include <stddef.h>
#include <stdint.h>

/* What the queue needs to know about the clocks. */
typedef struct {
    size_t count;          /* clocks */
    double dt_min, dt_max; /* smallest and largest step */
    double rate;           /* sum of 1/dt: events per unit of time */
} avi_clock_stats;

static inline void avi_clock_stats_add(avi_clock_stats *s, double dt)
{
    if (s->count == 0 || dt < s->dt_min) s->dt_min = dt;
    if (s->count == 0 || dt > s->dt_max) s->dt_max = dt;
    s->count++;
    if (dt > 0) s->rate += 1.0 / dt;
}

#define AVI_TL_CHUNK 32 /* entries per chunk: 512 bytes */
#define AVI_TL_NONE UINT32_MAX

typedef struct {
    uint32_t count;       /* entries */
    uint32_t first, last; /* chunk list */
    uint32_t pad;
} avi_tl_span;

typedef struct {
    avi_event e[AVI_TL_CHUNK];
} avi_tl_chunk;

typedef struct {
    /* bottom[head, tail): entries of spans before `next`, sorted. */
    avi_event *bottom;
    avi_event *scratch; /* as large as bottom, for merging runs */
    size_t head, tail, bottom_cap;

    avi_tl_span *span;  /* C spans; span[next_slot] holds span index next */
    size_t nspan;
    uint64_t next;
    size_t next_slot;
    size_t span_count;  /* entries in all spans */
    uint32_t span_max;  /* most entries a span has held (bounds bottom) */
    uint64_t loads;     /* spans loaded, for the yearly trim */

    unsigned fbits;     /* F = 2^fbits fine buckets per span */
    double inv_w;       /* 1 / fine width */
    uint32_t *fine;     /* F + 1 counters for the counting sort */

    avi_tl_chunk *chunk;
    uint32_t *chunk_next;
    uint32_t chunk_cap, chunk_used, chunk_free, chunk_hint;

    avi_event *far; /* binary heap; its entries have span index >= next */
    size_t far_size, far_cap;
    uint64_t far_min;   /* span index of far[0] */
    avi_event *spill;   /* far entries of the span being loaded */

    size_t size;
} avi_twolevel_queue;

/* capacity: expected number of entries; stats: the clocks' steps (NULL:
 * spans of width 1). Returns 0, or -1 when out of memory. */
int avi_tl_init(avi_twolevel_queue *q, size_t capacity, const avi_clock_stats *stats);
void avi_tl_free(avi_twolevel_queue *q);
/* Inserts an entry. Returns 0, or -1 when out of memory. */
int avi_tl_push(avi_twolevel_queue *q, avi_event e);
/* Removes the earliest entry into *out; returns 0, or -1 when empty. */
int avi_tl_pop(avi_twolevel_queue *q, avi_event *out);
/* Removes the entry with key (t, id); returns 0, or -1 when there is none. */
int avi_tl_remove(avi_twolevel_queue *q, double t, uint32_t id);
/* Chooses the sizes again for a changed clock set; O(size). Returns 0, or
 * -1 when out of memory (the queue is then unchanged). */
int avi_tl_retune(avi_twolevel_queue *q, const avi_clock_stats *stats);
/* Copies every entry, in no particular order, into out (room for
 * avi_tl_size entries); returns the count. For checkpoints. */
size_t avi_tl_collect(const avi_twolevel_queue *q, avi_event *out);
/* Bytes allocated. */
size_t avi_tl_bytes(const avi_twolevel_queue *q);

/* Internal: the out-of-line parts of top and replace_top. */
void avi_tl_refill_(avi_twolevel_queue *q);
int avi_tl_insert_slow_(avi_twolevel_queue *q, avi_event e, uint64_t fine);

static inline size_t avi_tl_size(const avi_twolevel_queue *q) { return q->size; }

/* Fine bucket index: monotone in t, saturating at AVI_TL_K_FAR far beyond
 * any window. The span index is fine >> fbits. */
#define AVI_TL_K_FAR (UINT64_C(1) << 62)
static inline uint64_t avi_tl_fine_of(const avi_twolevel_queue *q, double t)
{
    double x = t * q->inv_w;
    if (!(x < 4.0e18)) return AVI_TL_K_FAR;
    return x > 0 ? (uint64_t)(int64_t)x : 0;
}

/* The earliest entry; only when size > 0. Not const: when bottom is used
 * up, the next span is loaded and sorted. */
static inline const avi_event *avi_tl_top(avi_twolevel_queue *q)
{
    if (q->head == q->tail) avi_tl_refill_(q);
    return &q->bottom[q->head];
}

/* The entry k places after the top, when it is already known (it is in the
 * loaded span): NULL otherwise. Entries pushed later may still come before
 * it. The engine can prefetch the records of upcoming events with it. */
static inline const avi_event *avi_tl_peek(const avi_twolevel_queue *q, size_t k)
{
    return q->head + k < q->tail ? &q->bottom[q->head + k] : NULL;
}

/* Pop + push of e; in the common case an append to a span's tail chunk.
 * Call only after avi_tl_top (size > 0). Returns 0, or -1 when a slow path
 * ran out of memory: the old top is then gone and e was not inserted. */
static inline int avi_tl_replace_top(avi_twolevel_queue *q, avi_event e)
{
    q->head++;
    uint64_t f = avi_tl_fine_of(q, e.t);
    uint64_t d = (f >> q->fbits) - q->next; /* wraps when before next */
    if (d < q->nspan) {
        size_t s = q->next_slot + (size_t)d;
        if (s >= q->nspan) s -= q->nspan;
        avi_tl_span *sp = &q->span[s];
        uint32_t c = sp->count, j = c % AVI_TL_CHUNK;
        if (j != 0 && c < q->span_max) {
            q->chunk[sp->last].e[j] = e;
            sp->count = c + 1;
            q->span_count++;
            return 0;
        }
    }
    q->size--;
    return avi_tl_insert_slow_(q, e, f);
}

#endif
