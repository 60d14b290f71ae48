/* An event: a potential's next update time, its id and its step count, and
 * the order every queue serves events in.
 *
 * Order: time, then id. Ids are (kind rank << AVI_ID_KIND_SHIFT) | index, so
 * comparing ids implements the tie rule (time, kind rank, potential index). */
#ifndef AVI_EVENT_H
#define AVI_EVENT_H

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

/* Sorts by (time, id); linear when already sorted, and when tmp (room for
 * n entries, or NULL) lets it merge a few ascending runs. */
void avi_event_sort(avi_event *a, size_t n, avi_event *tmp);

#endif
