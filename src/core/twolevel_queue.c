#include "core/twolevel_queue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(sizeof(avi_tl_chunk) % 64 == 0, "chunks are whole cache lines");
_Static_assert((AVI_TL_CHUNK & (AVI_TL_CHUNK - 1)) == 0, "chunk size is a power of two");

#define LESS(a, b) avi_event_less(&(a), &(b))

static inline uint64_t span_of(const avi_twolevel_queue *q, double t) { return avi_tl_fine_of(q, t) >> q->fbits; }

/* ---- storage ------------------------------------------------------------- */

static int bottom_reserve(avi_twolevel_queue *q, size_t need)
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

static uint32_t chunk_alloc(avi_twolevel_queue *q)
{
    uint32_t c = q->chunk_free;
    if (c != AVI_TL_NONE) {
        q->chunk_free = q->chunk_next[c];
        return c;
    }
    if (q->chunk_used == q->chunk_cap) {
        uint32_t cap = q->chunk_cap ? q->chunk_cap * 2 : q->chunk_hint;
        if (cap <= q->chunk_cap || cap >= AVI_TL_NONE) return AVI_TL_NONE;
        /* aligned_alloc has no realloc: copy. */
        avi_tl_chunk *ch = aligned_alloc(64, (size_t)cap * sizeof *ch);
        uint32_t *nx = realloc(q->chunk_next, (size_t)cap * sizeof *nx);
        if (nx) q->chunk_next = nx;
        if (!ch || !nx) {
            free(ch);
            return AVI_TL_NONE;
        }
        if (q->chunk) memcpy(ch, q->chunk, (size_t)q->chunk_used * sizeof *ch);
        free(q->chunk);
        q->chunk = ch;
        q->chunk_cap = cap;
    }
    return q->chunk_used++;
}

static void chunk_release(avi_twolevel_queue *q, uint32_t c)
{
    q->chunk_next[c] = q->chunk_free;
    q->chunk_free = c;
}

static avi_event *span_slot(avi_twolevel_queue *q, const avi_tl_span *sp, uint32_t i)
{
    uint32_t c = sp->first;
    for (uint32_t k = i / AVI_TL_CHUNK; k > 0; k--) c = q->chunk_next[c];
    return &q->chunk[c].e[i % AVI_TL_CHUNK];
}

/* Appends e to the span at slot s. A span load must fit in bottom together
 * with all of far, so bottom grows here, where failure can be reported. */
static int span_append(avi_twolevel_queue *q, size_t s, avi_event e)
{
    avi_tl_span *sp = &q->span[s];
    uint32_t c = sp->count;
    if (c >= q->span_max) {
        if (c == UINT32_MAX - 1 || bottom_reserve(q, (size_t)c + 1 + q->far_size)) return -1;
        q->span_max = c + 1;
    }
    uint32_t j = c % AVI_TL_CHUNK;
    if (j == 0) {
        uint32_t ch = chunk_alloc(q);
        if (ch == AVI_TL_NONE) return -1;
        q->chunk_next[ch] = AVI_TL_NONE;
        if (c == 0)
            sp->first = ch;
        else
            q->chunk_next[sp->last] = ch;
        sp->last = ch;
    }
    q->chunk[sp->last].e[j] = e;
    sp->count = c + 1;
    q->span_count++;
    return 0;
}

/* ---- far: a binary heap ----------------------------------------------------- */

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

static void far_fix(avi_twolevel_queue *q) { q->far_min = q->far_size ? span_of(q, q->far[0].t) : AVI_TL_K_FAR; }

static int far_push(avi_twolevel_queue *q, avi_event e)
{
    if (bottom_reserve(q, (size_t)q->span_max + q->far_size + 1)) return -1;
    if (q->far_size == q->far_cap) {
        size_t cap = q->far_cap ? 2 * q->far_cap : 64;
        avi_event *h = realloc(q->far, cap * sizeof *h);
        if (h) q->far = h;
        avi_event *sp = h ? realloc(q->spill, cap * sizeof *sp) : NULL;
        if (!sp) return -1;
        q->spill = sp;
        q->far_cap = cap;
    }
    q->far[q->far_size] = e;
    far_up(q->far, q->far_size++);
    far_fix(q);
    return 0;
}

static void far_remove_at(avi_twolevel_queue *q, size_t i)
{
    avi_event last = q->far[--q->far_size];
    if (i < q->far_size) {
        q->far[i] = last;
        far_down(q->far, q->far_size, i);
        far_up(q->far, i);
    }
    far_fix(q);
}

/* ---- insertion ------------------------------------------------------------- */

/* Into the sorted bottom (an entry for a span already loaded), shifting
 * whichever side is shorter. */
static int bottom_insert(avi_twolevel_queue *q, avi_event e)
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
    if (q->head > 0 && (p - q->head <= q->tail - p || q->tail == q->bottom_cap)) {
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

int avi_tl_insert_slow_(avi_twolevel_queue *q, avi_event e, uint64_t fine)
{
    uint64_t k = fine >> q->fbits;
    int rc;
    if (k < q->next) {
        rc = bottom_insert(q, e);
    } else if (k - q->next < q->nspan) {
        size_t s = q->next_slot + (size_t)(k - q->next);
        if (s >= q->nspan) s -= q->nspan;
        rc = span_append(q, s, e);
    } else {
        rc = far_push(q, e);
    }
    if (rc == 0) q->size++;
    return rc;
}

int avi_tl_push(avi_twolevel_queue *q, avi_event e)
{
    if (q->size == 0) {
        /* Empty: restart the window at 0, so that a batch of pushes in any
         * order goes to spans, not to sorted insertions into bottom. */
        q->head = q->tail = 0;
        q->next = 0;
        q->next_slot = 0;
    }
    return avi_tl_insert_slow_(q, e, avi_tl_fine_of(q, e.t));
}

/* ---- loading a span ---------------------------------------------------------- */

/* Sorts bottom[0, n) whose fine buckets end at ends[0..F): the buckets are
 * in order already, so an insertion sort only works inside each bucket. A
 * bucket with many equal times out of id order (several runs of clocks
 * with equal steps) would make it quadratic: past a budget of moves each
 * bucket is sorted on its own instead. */
static void sort_span(avi_event *a, size_t n, const uint32_t *ends, size_t nf, avi_event *tmp)
{
    size_t moves = 0, budget = 4 * n + 64;
    for (size_t i = 1; i < n; i++) {
        avi_event x = a[i];
        size_t j = i;
        while (j > 0 && LESS(x, a[j - 1])) {
            a[j] = a[j - 1];
            j--;
            moves++;
        }
        a[j] = x;
        if (moves > budget) {
            size_t start = 0;
            for (size_t f = 0; f < nf; f++) {
                size_t end = ends[f];
                if (end - start > 1) avi_event_sort(a + start, end - start, tmp);
                start = end;
            }
            return;
        }
    }
}

#define PREFETCH_CHUNKS 4

static inline void prefetch_chunk(const avi_twolevel_queue *q, uint32_t c)
{
    const char *p = (const char *)&q->chunk[c];
    for (size_t off = 0; off < sizeof(avi_tl_chunk); off += 64) __builtin_prefetch(p + off, 0, 3);
}

/* Moves the span at next_slot, and the far entries of the same index, to
 * bottom[0, E) sorted; returns E. Allocates nothing. */
static size_t span_load(avi_twolevel_queue *q)
{
    avi_tl_span *sp = &q->span[q->next_slot];
    size_t nc = sp->count, nf = 0;
    while (q->far_size && q->far_min == q->next) {
        q->spill[nf++] = q->far[0];
        far_remove_at(q, 0);
    }
    size_t n = nc + nf;
    if (n == 0) return 0;
    size_t F = (size_t)1 << q->fbits, mask = F - 1;
    uint32_t *cnt = q->fine;
    memset(cnt, 0, (F + 1) * sizeof *cnt);
    /* Counting sort on the fine index: count, prefix, scatter. The span
     * was written a year ago and is out of cache; its chunks are scattered
     * over the pool, so they are fetched a few chunks ahead. */
    uint32_t c = sp->first, ahead = c;
    for (int d = 0; d < PREFETCH_CHUNKS && ahead != AVI_TL_NONE; d++) {
        prefetch_chunk(q, ahead);
        ahead = q->chunk_next[ahead];
    }
    for (size_t i = 0; i < nc; i += AVI_TL_CHUNK) {
        if (ahead != AVI_TL_NONE) {
            prefetch_chunk(q, ahead);
            ahead = q->chunk_next[ahead];
        }
        const avi_event *e = q->chunk[c].e;
        size_t m = nc - i < AVI_TL_CHUNK ? nc - i : AVI_TL_CHUNK;
        for (size_t k = 0; k < m; k++) cnt[(avi_tl_fine_of(q, e[k].t) & mask) + 1]++;
        c = q->chunk_next[c];
    }
    for (size_t k = 0; k < nf; k++) cnt[(avi_tl_fine_of(q, q->spill[k].t) & mask) + 1]++;
    for (size_t f = 0; f < F; f++) cnt[f + 1] += cnt[f];
    avi_event *out = q->bottom;
    c = sp->first;
    for (size_t i = 0; i < nc; i += AVI_TL_CHUNK) {
        const avi_event *e = q->chunk[c].e;
        size_t m = nc - i < AVI_TL_CHUNK ? nc - i : AVI_TL_CHUNK;
        for (size_t k = 0; k < m; k++) out[cnt[avi_tl_fine_of(q, e[k].t) & mask]++] = e[k];
        uint32_t nx = q->chunk_next[c];
        chunk_release(q, c);
        c = nx;
    }
    for (size_t k = 0; k < nf; k++) out[cnt[avi_tl_fine_of(q, q->spill[k].t) & mask]++] = q->spill[k];
    sp->count = 0;
    sp->first = sp->last = AVI_TL_NONE;
    q->span_count -= nc;
    /* cnt[f] is now the end of fine bucket f. */
    sort_span(out, n, cnt, F, q->scratch);
    return n;
}

/* Once a year, after a pile-up has passed (all clocks starting at t = 0
 * fill one span), bottom is cut back to what the spans need. */
static void bottom_trim(avi_twolevel_queue *q)
{
    uint32_t m = 0;
    for (size_t s = 0; s < q->nspan; s++)
        if (q->span[s].count > m) m = q->span[s].count;
    size_t need = (size_t)m + q->far_size;
    if (q->bottom_cap <= 4096 || q->bottom_cap <= 4 * need) return;
    size_t cap = 2 * need + 64;
    avi_event *b = realloc(q->bottom, cap * sizeof *b);
    if (!b) return;
    q->bottom = b;
    q->bottom_cap = cap; /* scratch stays at least as large */
    avi_event *t = realloc(q->scratch, cap * sizeof *t);
    if (t) q->scratch = t;
    q->span_max = m;
}

void avi_tl_refill_(avi_twolevel_queue *q)
{
    q->head = q->tail = 0;
    for (;;) {
        if (q->span_count == 0) {
            if (q->far_size == 0) return; /* empty */
            /* Only far entries left: jump the window to the first. */
            q->next = q->far_min;
            q->next_slot = (size_t)(q->far_min % q->nspan);
        }
        if (++q->loads % q->nspan == 0) bottom_trim(q);
        size_t n = span_load(q);
        q->next++;
        if (++q->next_slot == q->nspan) q->next_slot = 0;
        if (n) {
            q->tail = n;
            return;
        }
    }
}

int avi_tl_pop(avi_twolevel_queue *q, avi_event *out)
{
    if (q->size == 0) return -1;
    *out = *avi_tl_top(q);
    q->head++;
    q->size--;
    return 0;
}

/* ---- removal --------------------------------------------------------------- */

static int same(const avi_event *a, double t, uint32_t id)
{
    return avi_time_bits(a->t) == avi_time_bits(t) && a->id == id;
}

static int span_remove(avi_twolevel_queue *q, size_t s, double t, uint32_t id)
{
    avi_tl_span *sp = &q->span[s];
    uint32_t c = sp->first;
    for (uint32_t i = 0; i < sp->count; i++) {
        if (i > 0 && i % AVI_TL_CHUNK == 0) c = q->chunk_next[c];
        avi_event *x = &q->chunk[c].e[i % AVI_TL_CHUNK];
        if (!same(x, t, id)) continue;
        uint32_t last = sp->count - 1;
        *x = q->chunk[sp->last].e[last % AVI_TL_CHUNK];
        if (last % AVI_TL_CHUNK == 0) {
            /* The last chunk is now empty: unlink it. */
            uint32_t dead = sp->last;
            if (last == 0) {
                sp->first = sp->last = AVI_TL_NONE;
            } else {
                uint32_t p = sp->first;
                while (q->chunk_next[p] != dead) p = q->chunk_next[p];
                q->chunk_next[p] = AVI_TL_NONE;
                sp->last = p;
            }
            chunk_release(q, dead);
        }
        sp->count = last;
        q->span_count--;
        return 0;
    }
    return -1;
}

size_t avi_tl_collect(const avi_twolevel_queue *q, avi_event *out)
{
    size_t n = 0;
    for (size_t i = q->head; i < q->tail; i++) out[n++] = q->bottom[i];
    for (size_t s = 0; s < q->nspan; s++) {
        const avi_tl_span *sp = &q->span[s];
        uint32_t c = sp->first;
        for (uint32_t i = 0; i < sp->count; i++) {
            if (i > 0 && i % AVI_TL_CHUNK == 0) c = q->chunk_next[c];
            out[n++] = q->chunk[c].e[i % AVI_TL_CHUNK];
        }
    }
    for (size_t i = 0; i < q->far_size; i++) out[n++] = q->far[i];
    return n;
}

int avi_tl_remove(avi_twolevel_queue *q, double t, uint32_t id)
{
    uint64_t k = span_of(q, t);
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
        if (k - q->next < q->nspan) {
            size_t s = q->next_slot + (size_t)(k - q->next);
            if (s >= q->nspan) s -= q->nspan;
            found = span_remove(q, s, t, id);
        }
        /* An entry pushed while its span was beyond the window stays in far. */
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

typedef struct {
    double w;     /* span width */
    unsigned fbits;
    size_t nspan;
} sizes;

static unsigned log2_ceil(double x)
{
    unsigned b = 0;
    while (b < 62 && (double)((uint64_t)1 << b) < x) b++;
    return b;
}

static sizes choose_sizes(size_t capacity, const avi_clock_stats *s)
{
    size_t n = capacity;
    if (s && s->count > n) n = s->count;
    double rate = 0, dt_max = 0, dt_min = 0;
    if (s && s->count > 0 && s->dt_max > 0 && isfinite(s->dt_max)) {
        dt_max = s->dt_max;
        dt_min = s->dt_min > 0 ? s->dt_min : dt_max;
        rate = s->rate;
        if (!(rate > 0) || !isfinite(rate)) rate = (double)s->count / sqrt(dt_min * dt_max);
    }
    if (!(rate > 0)) return (sizes){1.0, 10, 64};
    /* Spans of E entries, E near sqrt(events per largest step): E and the
     * number of spans grow alike, so both bottom and the span tails stay
     * small. */
    double per_year = rate * dt_max;
    unsigned eb = log2_ceil(sqrt(per_year));
    if (eb < 8) eb = 8;
    if (eb > 14) eb = 14;
    double w = (double)((uint64_t)1 << eb) / rate;
    /* Not wider than the smallest step: a rescheduled clock then always
     * lands in a later span (appended), never in the loaded one. */
    if (w > dt_min) w = dt_min;
    unsigned fbits = log2_ceil(2.0 * rate * w);
    if (fbits < 4) fbits = 4;
    if (fbits > 16) fbits = 16;
    /* The year covers the largest step plus the span being served and one
     * for rounding. At most one span per 8 clocks, so that partly filled
     * tail chunks cost at most 64 bytes per entry: with wider spreads the
     * longest steps go to far, whose events are the rarest. */
    double need = ceil(dt_max / w) + 2;
    double cap = (double)n / 8 + 64;
    size_t nspan = need > cap ? (size_t)cap : (size_t)need;
    if (nspan < 4) nspan = 4;
    return (sizes){w, fbits, nspan};
}

static int init_with(avi_twolevel_queue *q, sizes z, size_t capacity)
{
    memset(q, 0, sizeof *q);
    /* Nearly every entry sits in a span: size the pool for all of them
     * and a partly filled tail per span, so that it need not double. */
    double hint = (double)capacity / AVI_TL_CHUNK + (double)z.nspan + 16;
    q->chunk_hint = hint < (double)(AVI_TL_NONE / 4) ? (uint32_t)hint : AVI_TL_NONE / 4;
    q->chunk_free = AVI_TL_NONE;
    q->far_min = AVI_TL_K_FAR;
    q->fbits = z.fbits;
    q->inv_w = (double)((uint64_t)1 << z.fbits) / z.w;
    q->nspan = z.nspan;
    q->span = malloc(z.nspan * sizeof *q->span);
    q->fine = malloc((((size_t)1 << z.fbits) + 1) * sizeof *q->fine);
    q->bottom_cap = 64;
    q->bottom = malloc(q->bottom_cap * sizeof *q->bottom);
    q->scratch = malloc(q->bottom_cap * sizeof *q->scratch);
    if (!q->span || !q->fine || !q->bottom || !q->scratch) {
        avi_tl_free(q);
        return -1;
    }
    for (size_t i = 0; i < z.nspan; i++) q->span[i] = (avi_tl_span){0, AVI_TL_NONE, AVI_TL_NONE, 0};
    return 0;
}

int avi_tl_init(avi_twolevel_queue *q, size_t capacity, const avi_clock_stats *stats)
{
    return init_with(q, choose_sizes(capacity, stats), capacity);
}

void avi_tl_free(avi_twolevel_queue *q)
{
    free(q->bottom);
    free(q->scratch);
    free(q->span);
    free(q->fine);
    free(q->chunk);
    free(q->chunk_next);
    free(q->far);
    free(q->spill);
    memset(q, 0, sizeof *q);
}

size_t avi_tl_bytes(const avi_twolevel_queue *q)
{
    return 2 * q->bottom_cap * sizeof(avi_event) + q->nspan * sizeof(avi_tl_span) +
           (((size_t)1 << q->fbits) + 1) * sizeof(uint32_t) +
           (size_t)q->chunk_cap * (sizeof(avi_tl_chunk) + sizeof(uint32_t)) + 2 * q->far_cap * sizeof(avi_event);
}

/* Calls fn on every entry, in no particular order; stops at a failure. */
static int each_entry(avi_twolevel_queue *q, int (*fn)(void *, avi_event), void *ctx)
{
    for (size_t i = q->head; i < q->tail; i++)
        if (fn(ctx, q->bottom[i])) return -1;
    for (size_t s = 0; s < q->nspan; s++)
        for (uint32_t i = 0; i < q->span[s].count; i++)
            if (fn(ctx, *span_slot(q, &q->span[s], i))) return -1;
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

static int push_into(void *ctx, avi_event e) { return avi_tl_insert_slow_(ctx, e, avi_tl_fine_of(ctx, e.t)); }

int avi_tl_retune(avi_twolevel_queue *q, const avi_clock_stats *stats)
{
    avi_twolevel_queue r;
    if (init_with(&r, choose_sizes(q->size, stats), q->size)) return -1;
    if (q->size > 0) {
        avi_event m = {INFINITY, UINT32_MAX, 0};
        each_entry(q, min_time, &m);
        r.next = span_of(&r, m.t);
        r.next_slot = (size_t)(r.next % r.nspan);
    }
    if (each_entry(q, push_into, &r)) {
        avi_tl_free(&r);
        return -1;
    }
    avi_tl_free(q);
    *q = r;
    return 0;
}
