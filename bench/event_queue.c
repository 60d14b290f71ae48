#include "event_queue.h"

#include <stdlib.h>
#include <string.h>

/* Three entries of padding put node 4i+1, the first child of i, at a
 * multiple of 64 bytes. */
#define HEAP_OFFSET 3

static int reserve(avi_event_queue *q, size_t cap)
{
    if (cap < 16) cap = 16;
    size_t bytes = (cap + HEAP_OFFSET) * sizeof(avi_event);
    bytes = (bytes + 63) / 64 * 64;
    avi_event *block = aligned_alloc(64, bytes);
    if (!block) return -1;
    if (q->block) {
        memcpy(block + HEAP_OFFSET, q->heap, q->size * sizeof(avi_event));
        free(q->block);
    }
    q->block = block;
    q->heap = block + HEAP_OFFSET;
    q->cap = cap;
    return 0;
}

int avi_queue_init(avi_event_queue *q, size_t capacity)
{
    memset(q, 0, sizeof *q);
    return reserve(q, capacity);
}

void avi_queue_free(avi_event_queue *q)
{
    free(q->block);
    memset(q, 0, sizeof *q);
}

int avi_queue_push(avi_event_queue *q, avi_event e)
{
    if (q->size == q->cap && reserve(q, q->cap * 2) != 0) return -1;
    avi_event *h = q->heap;
    size_t i = q->size++;
    while (i > 0) {
        size_t p = (i - 1) / 4;
        if (!avi_event_less(&e, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = e;
    return 0;
}

int avi_queue_pop(avi_event_queue *q, avi_event *out)
{
    if (q->size == 0) return -1;
    *out = q->heap[0];
    avi_event last = q->heap[--q->size];
    if (q->size > 0) avi_queue_replace_top(q, last);
    return 0;
}
