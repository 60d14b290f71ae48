#include "calendar_queue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(avi_cq_bucket) == 64, "a bucket is one cache line");
_Static_assert(sizeof(avi_cq_chunk) == 64, "a chunk is one cache line");

#define LESS(a, b) avi_event_less(&(a), &(b))

/* ---- storage ----------------------------------------------------------- */

/* Grows bottom to hold at least need entries, keeping [head, tail). */
static int bottom_reserve(avi_calendar_queue *q, size_t need)
{
    if (need <= q->bottom_cap) return 0;
    size_t cap = q->bottom_cap * 2;
    if (cap < need) cap = need;
    avi_event *b = realloc(q->bottom, cap * sizeof *b);
    if (!b) return -1;
    q->bottom = b;
    avi_event *t = realloc(q->scratch, cap * sizeof *t);
    if (!t) return -1;
    q->scratch = t;
    q->bottom_cap = cap;
    return 0;
}

/* A drained bucket plus the far entries of the same index must fit. */
static int drain_reserve(avi_calendar_queue *q, size_t bucket, size_t far)
{
    return bottom_reserve(q, bucket + far);
}

static uint32_t chunk_alloc(avi_calendar_queue *q)
{
    uint32_t c = q->chunk_free;
    if (c != AVI_CQ_NONE) {
        q->chunk_free = q->chunk_next[c];
    } else {
        if (q->chunk_used == q->chunk_cap) {
            uint32_t cap = q->chunk_cap ? q->chunk_cap * 2 : 64;
            if (cap <= q->chunk_cap || cap >= AVI_CQ_NONE) return AVI_CQ_NONE;
            /* aligned_alloc has no realloc: copy. */
            avi_cq_chunk *ch = aligned_alloc(64, (size_t)cap * sizeof *ch);
            uint32_t *nx = realloc(q->chunk_next, (size_t)cap * sizeof *nx);
            if (!ch || !nx) {
                free(ch);
                if (nx) q->chunk_next = nx;
                return AVI_CQ_NONE;
            }
            if (q->chunk) memcpy(ch, q->chunk, (size_t)q->chunk_used * sizeof *ch);
            free(q->chunk);
            q->chunk = ch;
            q->chunk_next = nx;
            q->chunk_cap = cap;
        }
        c = q->chunk_used++;
    }
    q->chunk_live++;
    return c;
}

static void chunk_release(avi_calendar_queue *q, uint32_t c)
{
    q->chunk_next[c] = q->chunk_free;
    q->chunk_free = c;
    q->chunk_live--;
}

/* After a pile-up (every clock in one bucket at the start) the pool is far
 * larger than the steady state needs; give it back once it is unused. */
static void chunk_trim(avi_calendar_queue *q)
{
    if (q->chunk_live == 0 && (size_t)q->chunk_cap * AVI_CQ_CHUNK > q->size / 2 + 4096) {
        free(q->chunk);
        free(q->chunk_next);
        q->chunk = NULL;
        q->chunk_next = NULL;
        q->chunk_cap = q->chunk_used = 0;
        q->chunk_free = AVI_CQ_NONE;
    }
}

/* Appends e to the bucket at ring slot s. */
static int ring_insert(avi_calendar_queue *q, size_t s, avi_event e)
{
    avi_cq_bucket *b = &q->ring[s];
    uint32_t c = b->count;
    if (c >= q->max_bucket) {
        if (c == UINT32_MAX - 1 || drain_reserve(q, (size_t)c + 1, q->far_size)) return -1;
        q->max_bucket = c + 1;
    }
    if (c < AVI_CQ_INLINE) {
        b->e[c] = e;
    } else {
        uint32_t j = (c - AVI_CQ_INLINE) % AVI_CQ_CHUNK;
        if (j == 0) {
            uint32_t ch = chunk_alloc(q);
            if (ch == AVI_CQ_NONE) return -1;
            q->chunk_next[ch] = AVI_CQ_NONE;
            if (c == AVI_CQ_INLINE)
                b->first = ch;
            else
                q->chunk_next[b->last] = ch;
            b->last = ch;
        }
        q->chunk[b->last].e[j] = e;
    }
    b->count = c + 1;
    q->ring_count++;
    return 0;
}

/* Moves the bucket at slot s to bottom[at...]; returns the count. */
static size_t ring_drain(avi_calendar_queue *q, size_t s, size_t at)
{
    avi_cq_bucket *b = &q->ring[s];
    size_t n = b->count;
    if (n == 0) return 0;
    avi_event *out = q->bottom + at;
    size_t m = n < AVI_CQ_INLINE ? n : AVI_CQ_INLINE;
    memcpy(out, b->e, m * sizeof *out);
    if (n > AVI_CQ_INLINE) {
        uint32_t c = b->first;
        for (size_t k = m; k < n; k += AVI_CQ_CHUNK) {
            size_t r = n - k < AVI_CQ_CHUNK ? n - k : AVI_CQ_CHUNK;
            memcpy(out + k, q->chunk[c].e, r * sizeof *out);
            uint32_t nx = q->chunk_next[c];
            chunk_release(q, c);
            c = nx;
        }
        chunk_trim(q);
    }
    b->count = 0;
    q->ring_count -= n;
    return n;
}

/* ---- far: a binary heap --------------------------------------------------- */

static void far_up(avi_event *h, size_t i)
{
    avi_event x = h[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!LESS(x, h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = x;
}

static void far_down(avi_event *h, size_t n, size_t i)
{
    avi_event x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && LESS(h[c + 1], h[c])) c++;
        if (!LESS(h[c], x)) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

static void far_fix(avi_calendar_queue *q)
{
    q->far_min = q->far_size ? avi_cq_bucket_of(q, q->far[0].t) : AVI_CQ_K_FAR;
}

static int far_push(avi_calendar_queue *q, avi_event e)
{
    if (drain_reserve(q, q->max_bucket, q->far_size + 1)) return -1;
    if (q->far_size == q->far_cap) {
        size_t cap = q->far_cap ? 2 * q->far_cap : 64;
        avi_event *h = realloc(q->far, cap * sizeof *h);
        if (!h) return -1;
        q->far = h;
        q->far_cap = cap;
    }
    q->far[q->far_size] = e;
    far_up(q->far, q->far_size++);
    far_fix(q);
    return 0;
}

static void far_remove_at(avi_calendar_queue *q, size_t i)
{
    avi_event last = q->far[--q->far_size];
    if (i < q->far_size) {
        q->far[i] = last;
        far_down(q->far, q->far_size, i);
        far_up(q->far, i);
    }
    far_fix(q);
}

/* ---- insertion ---------------------------------------------------------- */

/* Into the sorted bottom, shifting whichever side is shorter. */
static int bottom_insert(avi_calendar_queue *q, avi_event e)
{
    size_t lo = q->head, hi = q->tail;
    while (lo < hi) {
        size_t m = lo + (hi - lo) / 2;
        if (LESS(e, q->bottom[m]))
            hi = m;
        else
            lo = m + 1;
    }
    size_t p = lo;
    int left = q->head > 0 && (p - q->head <= q->tail - p || q->tail == q->bottom_cap);
    if (left) {
        avi_event *a = q->bottom;
        memmove(a + q->head - 1, a + q->head, (p - q->head) * sizeof *a);
        q->head--;
        a[p - 1] = e;
        return 0;
    }
    if (q->tail == q->bottom_cap && bottom_reserve(q, q->tail + 1)) return -1;
    avi_event *a = q->bottom;
    memmove(a + p + 1, a + p, (q->tail - p) * sizeof *a);
    a[p] = e;
    q->tail++;
    return 0;
}

int avi_cq_insert_slow_(avi_calendar_queue *q, avi_event e, uint64_t k)
{
    int rc;
    if (k < q->next) {
        rc = bottom_insert(q, e);
    } else if (k - q->next < q->nb) {
        size_t s = q->next_slot + (size_t)(k - q->next);
        if (s >= q->nb) s -= q->nb;
        rc = ring_insert(q, s, e);
    } else {
        rc = far_push(q, e);
    }
    if (rc == 0) q->size++;
    return rc;
}

int avi_cq_push(avi_calendar_queue *q, avi_event e)
{
    if (q->size == 0) {
        /* Empty: restart the window at 0 so that a batch of pushes in any
         * order goes to buckets, not to sorted insertions into bottom. */
        q->head = q->tail = 0;
        q->next = 0;
        q->next_slot = 0;
    }
    return avi_cq_insert_slow_(q, e, avi_cq_bucket_of(q, e.t));
}

/* ---- serving --------------------------------------------------------------- */

/* Once a year, after a pile-up has passed (all clocks starting at t = 0),
 * bottom is cut back to what the buckets need. */
static void bottom_trim(avi_calendar_queue *q)
{
    size_t need = (size_t)q->year_max + q->far_size;
    q->year_max = 0;
    if (q->bottom_cap <= 4096 || q->bottom_cap <= 8 * need) return;
    uint32_t m = AVI_CQ_INLINE;
    for (size_t s = 0; s < q->nb; s++)
        if (q->ring[s].count > m) m = q->ring[s].count;
    size_t cap = 2 * ((size_t)m + q->far_size) + 64;
    if (cap >= q->bottom_cap) return;
    avi_event *b = realloc(q->bottom, cap * sizeof *b);
    if (!b) return;
    q->bottom = b;
    q->bottom_cap = cap; /* scratch stays at least as large */
    avi_event *t = realloc(q->scratch, cap * sizeof *t);
    if (t) q->scratch = t;
    q->max_bucket = m;
}

void avi_cq_refill_(avi_calendar_queue *q)
{
    q->head = q->tail = 0;
    for (;;) {
        if (q->ring_count == 0) {
            if (q->far_size == 0) return; /* empty */
            /* Only far entries left: jump the window to the first. */
            q->next = q->far_min;
            q->next_slot = (size_t)(q->far_min % q->nb);
        }
        if (q->next_slot == 0) bottom_trim(q);
        size_t n = ring_drain(q, q->next_slot, 0);
        while (q->far_size && q->far_min == q->next) {
            q->bottom[n++] = q->far[0];
            far_remove_at(q, 0);
        }
        q->next++;
        if (++q->next_slot == q->nb) q->next_slot = 0;
        if (n) {
            if (n > q->year_max) q->year_max = (uint32_t)n;
            q->tail = n;
            avi_event_sort(q->bottom, n, q->scratch);
            return;
        }
    }
}

int avi_cq_pop(avi_calendar_queue *q, avi_event *out)
{
    if (q->size == 0) return -1;
    *out = *avi_cq_top(q);
    q->head++;
    q->size--;
    return 0;
}

/* ---- removal --------------------------------------------------------------- */

static int same(const avi_event *a, double t, uint32_t id)
{
    return avi_time_bits(a->t) == avi_time_bits(t) && a->id == id;
}

static avi_event *bucket_slot(avi_calendar_queue *q, avi_cq_bucket *b, uint32_t i)
{
    if (i < AVI_CQ_INLINE) return &b->e[i];
    uint32_t c = b->first;
    for (uint32_t k = (i - AVI_CQ_INLINE) / AVI_CQ_CHUNK; k > 0; k--) c = q->chunk_next[c];
    return &q->chunk[c].e[(i - AVI_CQ_INLINE) % AVI_CQ_CHUNK];
}

static int ring_remove(avi_calendar_queue *q, size_t s, double t, uint32_t id)
{
    avi_cq_bucket *b = &q->ring[s];
    for (uint32_t i = 0; i < b->count; i++) {
        avi_event *x = bucket_slot(q, b, i);
        if (!same(x, t, id)) continue;
        uint32_t last = b->count - 1;
        *x = *bucket_slot(q, b, last);
        if (last >= AVI_CQ_INLINE && (last - AVI_CQ_INLINE) % AVI_CQ_CHUNK == 0) {
            /* The last chunk is now empty: unlink it. */
            uint32_t dead = b->last;
            if (last == AVI_CQ_INLINE) {
                b->first = b->last = AVI_CQ_NONE;
            } else {
                uint32_t c = b->first;
                while (q->chunk_next[c] != dead) c = q->chunk_next[c];
                q->chunk_next[c] = AVI_CQ_NONE;
                b->last = c;
            }
            chunk_release(q, dead);
        }
        b->count = last;
        q->ring_count--;
        return 0;
    }
    return -1;
}

int avi_cq_remove(avi_calendar_queue *q, double t, uint32_t id)
{
    uint64_t k = avi_cq_bucket_of(q, t);
    int found = -1;
    if (k < q->next) {
        avi_event key = {t, id, 0};
        size_t lo = q->head, hi = q->tail;
        while (lo < hi) {
            size_t m = lo + (hi - lo) / 2;
            if (LESS(q->bottom[m], key))
                lo = m + 1;
            else
                hi = m;
        }
        if (lo < q->tail && same(&q->bottom[lo], t, id)) {
            avi_event *a = q->bottom;
            if (lo - q->head < q->tail - lo) {
                memmove(a + q->head + 1, a + q->head, (lo - q->head) * sizeof *a);
                q->head++;
            } else {
                memmove(a + lo, a + lo + 1, (q->tail - lo - 1) * sizeof *a);
                q->tail--;
            }
            found = 0;
        }
    } else {
        if (k - q->next < q->nb) {
            size_t s = q->next_slot + (size_t)(k - q->next);
            if (s >= q->nb) s -= q->nb;
            found = ring_remove(q, s, t, id);
        }
        /* An entry pushed while its bucket was beyond the ring stays in far. */
        for (size_t i = 0; found != 0 && i < q->far_size; i++)
            if (same(&q->far[i], t, id)) {
                far_remove_at(q, i);
                found = 0;
            }
    }
    if (found == 0) q->size--;
    return found;
}

/* ---- set-up -------------------------------------------------------------- */

static void choose_width(size_t capacity, const avi_clock_stats *s, double *w, size_t *nb)
{
    size_t n = capacity;
    if (s && s->count > n) n = s->count;
    size_t cap = AVI_CQ_MAX_BUCKETS_PER_ENTRY * n + 64;
    double rate = 0, dt_max = 0;
    if (s && s->count > 0 && s->dt_max > 0 && isfinite(s->dt_max)) {
        dt_max = s->dt_max;
        rate = s->rate;
        if (!(rate > 0) || !isfinite(rate)) {
            double dt_min = s->dt_min > 0 ? s->dt_min : dt_max;
            rate = (double)s->count / sqrt(dt_min * dt_max);
        }
    }
    if (!(rate > 0)) {
        *w = 1.0;
        *nb = n > 64 ? n : 64;
        return;
    }
    /* The year nb * w must exceed the largest step by two buckets (one for
     * the bucket being served, one for rounding of t / w). */
    double width = AVI_CQ_OCCUPANCY / rate;
    double need = ceil(dt_max / width) + 3;
    if (need > (double)cap) {
        *nb = cap;
        width = dt_max / (double)(cap - 3);
    } else {
        *nb = need < 16 ? 16 : (size_t)need;
    }
    *w = width;
}

static int init_with(avi_calendar_queue *q, double w, size_t nb)
{
    memset(q, 0, sizeof *q);
    q->chunk_free = AVI_CQ_NONE;
    q->far_min = AVI_CQ_K_FAR;
    q->max_bucket = AVI_CQ_INLINE;
    q->w = w;
    q->inv_w = 1.0 / w;
    q->nb = nb;
    q->ring = aligned_alloc(64, nb * sizeof *q->ring);
    q->bottom_cap = 64; /* grows with the largest bucket */
    q->bottom = malloc(q->bottom_cap * sizeof *q->bottom);
    q->scratch = malloc(q->bottom_cap * sizeof *q->scratch);
    if (!q->ring || !q->bottom || !q->scratch) {
        avi_cq_free(q);
        return -1;
    }
    for (size_t i = 0; i < nb; i++) {
        q->ring[i].count = 0;
        q->ring[i].first = q->ring[i].last = AVI_CQ_NONE;
    }
    return 0;
}

int avi_cq_init(avi_calendar_queue *q, size_t capacity, const avi_clock_stats *stats)
{
    double w;
    size_t nb;
    choose_width(capacity, stats, &w, &nb);
    return init_with(q, w, nb);
}

void avi_cq_free(avi_calendar_queue *q)
{
    free(q->bottom);
    free(q->scratch);
    free(q->ring);
    free(q->chunk);
    free(q->chunk_next);
    free(q->far);
    memset(q, 0, sizeof *q);
}

size_t avi_cq_bytes(const avi_calendar_queue *q)
{
    return 2 * q->bottom_cap * sizeof(avi_event) + q->nb * sizeof(avi_cq_bucket) +
           (size_t)q->chunk_cap * (sizeof(avi_cq_chunk) + sizeof(uint32_t)) + q->far_cap * sizeof(avi_event);
}

/* Calls fn on every entry, in no particular order. */
static int each_entry(avi_calendar_queue *q, int (*fn)(void *, avi_event), void *ctx)
{
    for (size_t i = q->head; i < q->tail; i++)
        if (fn(ctx, q->bottom[i])) return -1;
    for (size_t s = 0; s < q->nb; s++)
        for (uint32_t i = 0; i < q->ring[s].count; i++)
            if (fn(ctx, *bucket_slot(q, &q->ring[s], i))) return -1;
    for (size_t i = 0; i < q->far_size; i++)
        if (fn(ctx, q->far[i])) return -1;
    return 0;
}

static int min_time(void *ctx, avi_event e)
{
    avi_event *m = ctx;
    if (LESS(e, *m)) *m = e;
    return 0;
}

static int push_into(void *ctx, avi_event e) { return avi_cq_insert_slow_(ctx, e, avi_cq_bucket_of(ctx, e.t)); }

int avi_cq_retune(avi_calendar_queue *q, const avi_clock_stats *stats)
{
    avi_calendar_queue r;
    double w;
    size_t nb;
    choose_width(q->size, stats, &w, &nb);
    if (init_with(&r, w, nb)) return -1;
    if (q->size > 0) {
        avi_event m = {INFINITY, UINT32_MAX, 0};
        each_entry(q, min_time, &m);
        r.next = avi_cq_bucket_of(&r, m.t);
        r.next_slot = (size_t)(r.next % r.nb);
    }
    if (each_entry(q, push_into, &r)) {
        avi_cq_free(&r);
        return -1;
    }
    avi_cq_free(q);
    *q = r;
    return 0;
}
