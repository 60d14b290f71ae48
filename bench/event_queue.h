/* Benchmark-only (bench/queue.c): a 4-ary min-heap of (time, id, step)
 * entries stored inline, in the order of core/event.h.
 * The heap array is offset so that the four children of a node share one
 * 64-byte cache line. Replacing the top (the steady state of the AVI: pop,
 * reschedule) is one sift-down and allocates nothing. */
#ifndef AVI_EVENT_QUEUE_H
#define AVI_EVENT_QUEUE_H

#include "core/event.h"

#include <stddef.h>

typedef struct {
    avi_event *block; /* allocation, 64-byte aligned */
    avi_event *heap;  /* block + 3 */
    size_t size, cap;
} avi_event_queue;

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
