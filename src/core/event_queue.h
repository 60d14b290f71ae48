/* The event queue: a 4-ary min-heap of (time, id, step) entries stored inline.
 *
 * Order: time, then id. Ids are (kind rank << AVI_ID_KIND_SHIFT) | index, so
 * comparing ids implements the tie rule (time, kind rank, potential index).
 * The heap array is offset so that the four children of a node share one
 * 64-byte cache line. Replacing the top (the steady state of the AVI: pop,
 * reschedule) is one sift-down and allocates nothing. */
#ifndef AVI_EVENT_QUEUE_H
#define AVI_EVENT_QUEUE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define AVI_ID_KIND_SHIFT 28
#define AVI_ID_INDEX_MASK ((1u << AVI_ID_KIND_SHIFT) - 1u)
#define AVI_ID_MAX_INDEX AVI_ID_INDEX_MASK

typedef struct {
    double t;   /* event time = t0 + n dt */
    uint32_t id;
    uint32_t n; /* how many events this potential has had */
} avi_event;

typedef struct {
    avi_event *block; /* allocation, 64-byte aligned */
    avi_event *heap;  /* block + 3 */
    size_t size, cap;
} avi_event_queue;

static inline uint32_t avi_event_id(unsigned kind, uint32_t index)
{ return ((uint32_t)kind << AVI_ID_KIND_SHIFT) | index; }

/* Event times are >= 0 and finite, so their IEEE bit patterns order like the
 * values; comparing them as integers lets the compiler avoid branches. */
static inline uint64_t avi_time_bits(double t)
{
    uint64_t u;
    memcpy(&u, &t, sizeof u);
    return u;
}

static inline int avi_event_less(const avi_event *a, const avi_event *b)
{
    uint64_t x = avi_time_bits(a->t), y = avi_time_bits(b->t);
    return (x < y) | ((x == y) & (a->id < b->id));
}

int avi_queue_init(avi_event_queue *q, size_t capacity);
void avi_queue_free(avi_event_queue *q);
/* Inserts an entry; grows the array when full. Returns 0, or -1 when out of memory. */
int avi_queue_push(avi_event_queue *q, avi_event e);
/* Removes the earliest entry into *out; returns 0, or -1 when empty. */
int avi_queue_pop(avi_event_queue *q, avi_event *out);

static inline size_t avi_queue_size(const avi_event_queue *q) { return q->size; }
static inline const avi_event *avi_queue_top(const avi_event_queue *q) { return &q->heap[0]; }

/* Replaces the earliest entry with e (pop + push in one sift-down). The
 * smallest of four children is found by a branch-free tournament. */
static inline void avi_queue_replace_top(avi_event_queue *q, avi_event e)
{
    avi_event *h = q->heap;
    size_t n = q->size, i = 0;
    for (;;) {
        size_t c = 4 * i + 1;
        if (c + 3 < n) {
            const avi_event *p = h + c;
            size_t m01 = (size_t)avi_event_less(&p[1], &p[0]);
            size_t m23 = 2 + (size_t)avi_event_less(&p[3], &p[2]);
            size_t m = avi_event_less(&p[m23], &p[m01]) ? m23 : m01;
            if (!avi_event_less(&p[m], &e)) break;
            h[i] = p[m];
            i = c + m;
        } else {
            if (c >= n) break;
            size_t m = c;
            for (size_t k = c + 1; k < n; k++)
                if (avi_event_less(&h[k], &h[m])) m = k;
            if (avi_event_less(&h[m], &e)) {
                h[i] = h[m];
                i = m;
            }
            break;
        }
    }
    h[i] = e;
}

#endif
