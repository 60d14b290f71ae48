#include "contact/broad_phase.h"
#include "base/grow.h"
#include "base/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef avi_cell_entry entry;

/* An edge of one cell's run, with its grown box, gathered so that the pair
 * loop reads memory in sequence. */
struct avi_cell_edge {
    double lo[3], hi[3];
    uint32_t v0, v1, edge;
};

/* The candidates a worker found in items [begin, ...) of a search, at
 * out[offset, offset + count) of its buffer. */
struct avi_bp_segment {
    size_t begin, offset, count;
    int worker;
};

/* A worker's output, segments and scratch, padded so that two workers'
 * counters never share a cache line. */
struct avi_bp_worker {
    avi_candidate *out;
    size_t n, cap;
    struct avi_bp_segment *seg;
    size_t nseg, cap_seg;
    struct avi_cell_edge *run; /* the edges of one cell, gathered */
    size_t cap_run;
    size_t open;               /* first item of the chunk in progress */
    int oom;
    char pad[64];
};

/* The run [start, end) of sorted entries in one cell; end == 0: empty slot. */
struct avi_cell_range {
    uint64_t key;
    uint32_t start, end;
};


static inline int64_t cell_of(double c, double h) { return (int64_t)floor(c / h); }

void avi_broad_phase_free(avi_broad_phase *bp)
{
    free(bp->entries);
    free(bp->spare);
    free(bp->cells);
    free(bp->out);
    free(bp->box);
    for (int w = 0; w < bp->nwork; w++) {
        free(bp->work[w].out);
        free(bp->work[w].seg);
        free(bp->work[w].run);
    }
    free(bp->work);
    free(bp->seg);
    free(bp->first);
    memset(bp, 0, sizeof *bp);
}

/* Room for `need` entries in both buffers. */
static entry *entries(avi_broad_phase *bp, size_t need)
{
    size_t cap = bp->cap_entries, cap_spare = bp->cap_entries;
    if (AVI_GROW(bp->entries, cap, need, 1024) || AVI_GROW(bp->spare, cap_spare, need, 1024))
        return NULL;
    bp->cap_entries = cap; /* both grew alike */
    return bp->entries;
}

/* Sorts e[0..n) into (key, item) order and returns the sorted array (e or
 * spare). Every caller appends entries in increasing item order, so a
 * stable sort on the key alone gives that order: an LSD radix sort over
 * 8-bit digits, skipping the digits all keys share. The result is the one
 * unique sorted array, so the candidates come out as with any other sort.
 * On the sphere-plate scene this replaced qsort, which took 13 % of the
 * run (bench/README.md, "Sphere-plate impact"). */
entry *avi_cell_entries_sort(entry *e, entry *spare, size_t n)
{
    enum { DIGITS = 8, RADIX = 256 };
    uint64_t differ = 0;
    for (size_t i = 1; i < n; i++) differ |= e[i].key ^ e[0].key;
    size_t count[DIGITS][RADIX] = {{0}};
    for (size_t i = 0; i < n; i++)
        for (int d = 0; d < DIGITS; d++) count[d][(e[i].key >> (8 * d)) & 0xff]++;
    for (int d = 0; d < DIGITS; d++) {
        if (!((differ >> (8 * d)) & 0xff)) continue;
        size_t start = 0;
        for (int b = 0; b < RADIX; b++) {
            size_t c = count[d][b];
            count[d][b] = start;
            start += c;
        }
        for (size_t i = 0; i < n; i++) spare[count[d][(e[i].key >> (8 * d)) & 0xff]++] = e[i];
        entry *t = e;
        e = spare;
        spare = t;
    }
    return e;
}

/* Below this many entries a split sort costs more than it saves. */
#define SPLIT_SORT_MIN 8192

typedef struct {
    entry *src, *dst;
    size_t n;
    int shift;
    size_t (*count)[256]; /* per worker: counts, then first slots */
    uint64_t *differ;     /* per worker */
} split_sort;

static inline void block_of(size_t n, int w, int threads, size_t *b, size_t *e)
{
    *b = n / (size_t)threads * (size_t)w + (n % (size_t)threads) * (size_t)w / (size_t)threads;
    *e = n / (size_t)threads * (size_t)(w + 1) + (n % (size_t)threads) * (size_t)(w + 1) / (size_t)threads;
}

static void split_differ(void *ctx, int w, int threads)
{
    split_sort *q = ctx;
    size_t b, e;
    block_of(q->n, w, threads, &b, &e);
    uint64_t d = 0;
    for (size_t i = b; i < e; i++) d |= q->src[i].key ^ q->src[0].key;
    q->differ[w] = d;
}

static void split_count(void *ctx, int w, int threads)
{
    split_sort *q = ctx;
    size_t b, e;
    block_of(q->n, w, threads, &b, &e);
    size_t *c = q->count[w];
    memset(c, 0, 256 * sizeof *c);
    for (size_t i = b; i < e; i++) c[(q->src[i].key >> q->shift) & 0xff]++;
}

static void split_scatter(void *ctx, int w, int threads)
{
    split_sort *q = ctx;
    size_t b, e;
    block_of(q->n, w, threads, &b, &e);
    size_t *c = q->count[w];
    for (size_t i = b; i < e; i++) q->dst[c[(q->src[i].key >> q->shift) & 0xff]++] = q->src[i];
}

entry *avi_cell_entries_sort_pool(avi_pool *pool, entry *e, entry *spare, size_t n)
{
    int threads = avi_pool_threads(pool);
    if (n < SPLIT_SORT_MIN || (threads == 1 && !avi_pool_chaos(pool))) return avi_cell_entries_sort(e, spare, n);
    split_sort q = {e, spare, n, 0, malloc((size_t)threads * sizeof *q.count),
                    malloc((size_t)threads * sizeof *q.differ)};
    if (!q.count || !q.differ) {
        free(q.count);
        free(q.differ);
        return avi_cell_entries_sort(e, spare, n);
    }
    avi_pool_run(pool, split_differ, &q);
    uint64_t differ = 0;
    for (int w = 0; w < threads; w++) differ |= q.differ[w];
    for (int d = 0; d < 8; d++) {
        if (!((differ >> (8 * d)) & 0xff)) continue;
        q.shift = 8 * d;
        avi_pool_run(pool, split_count, &q);
        /* Digit by digit, block by block: each block's first slot. */
        size_t start = 0;
        for (int b = 0; b < 256; b++)
            for (int w = 0; w < threads; w++) {
                size_t c = q.count[w][b];
                q.count[w][b] = start;
                start += c;
            }
        avi_pool_run(pool, split_scatter, &q);
        entry *t = q.src;
        q.src = q.dst;
        q.dst = t;
    }
    free(q.count);
    free(q.differ);
    return q.src;
}

static void box_of(const double (*x)[3], const uint32_t *v, int n, double r, double lo[3], double hi[3])
{
    for (int c = 0; c < 3; c++) lo[c] = hi[c] = x[v[0]][c];
    for (int a = 1; a < n; a++)
        for (int c = 0; c < 3; c++) {
            if (x[v[a]][c] < lo[c]) lo[c] = x[v[a]][c];
            if (x[v[a]][c] > hi[c]) hi[c] = x[v[a]][c];
        }
    for (int c = 0; c < 3; c++) {
        lo[c] -= r;
        hi[c] += r;
    }
}

static inline size_t cell_slot(uint64_t key, int bits) { return (size_t)((key * 0x9E3779B97F4A7C15u) >> (64 - bits)); }

/* Indexes the runs of equal keys in sorted pe[0..n) by an open-addressing
 * hash table at least twice as large as the runs, so that a cell's points
 * are one or two probes away (a binary search over the entries took most of
 * the vertex-face broad phase). Returns the table's bits, -1 when out of
 * memory. */
static int index_cells(avi_broad_phase *bp, const entry *pe, size_t n)
{
    int bits = 4;
    while (((size_t)1 << bits) < 2 * n) bits++;
    size_t size = (size_t)1 << bits;
    if (AVI_GROW(bp->cells, bp->cap_cells, size, 1024)) return -1;
    memset(bp->cells, 0, size * sizeof *bp->cells);
    for (size_t a = 0; a < n;) {
        size_t b = a + 1;
        while (b < n && pe[b].key == pe[a].key) b++;
        size_t s = cell_slot(pe[a].key, bits);
        while (bp->cells[s].end) s = (s + 1) & (size - 1);
        bp->cells[s] = (struct avi_cell_range){pe[a].key, (uint32_t)a, (uint32_t)b};
        a = b;
    }
    return bits;
}

/* The run of entries in the cell `key` (start == end when none). */
static inline struct avi_cell_range find_cell(const avi_broad_phase *bp, int bits, uint64_t key)
{
    size_t mask = ((size_t)1 << bits) - 1;
    for (size_t s = cell_slot(key, bits); bp->cells[s].end; s = (s + 1) & mask)
        if (bp->cells[s].key == key) return bp->cells[s];
    return (struct avi_cell_range){key, 0, 0};
}

/* ---- parallel output: per-worker segments, merged in item order ---- */

/* Workers for one search, their outputs emptied; the count, -1 when out of
 * memory. */
static int workers_reset(avi_broad_phase *bp)
{
    int nw = avi_pool_threads(bp->pool);
    if (nw > bp->nwork) {
        struct avi_bp_worker *w = realloc(bp->work, (size_t)nw * sizeof *w);
        if (!w) return -1;
        memset(w + bp->nwork, 0, (size_t)(nw - bp->nwork) * sizeof *w);
        bp->work = w;
        bp->nwork = nw;
    }
    for (int i = 0; i < nw; i++) {
        bp->work[i].n = bp->work[i].nseg = 0;
        bp->work[i].oom = 0;
    }
    return nw;
}

static inline int emit(struct avi_bp_worker *w, uint32_t a, uint32_t b)
{
    if (AVI_GROW(w->out, w->cap, w->n + 1, 1024)) return -1;
    w->out[w->n].a = a;
    w->out[w->n].b = b;
    w->n++;
    return 0;
}

/* A chunk starting at item `begin` opens at the worker's present count and
 * closes into a segment when it found any candidate. */
static inline size_t chunk_open(struct avi_bp_worker *w, size_t begin)
{
    w->open = begin;
    return w->n;
}

static void chunk_close(struct avi_bp_worker *w, int worker, size_t offset)
{
    if (w->n == offset) return;
    if (AVI_GROW(w->seg, w->cap_seg, w->nseg + 1, 64)) {
        w->oom = 1;
        return;
    }
    w->seg[w->nseg++] = (struct avi_bp_segment){w->open, offset, w->n - offset, worker};
}

static int cmp_segment(const void *pa, const void *pb)
{
    const struct avi_bp_segment *a = pa, *b = pb;
    return a->begin < b->begin ? -1 : a->begin > b->begin;
}

/* The workers' segments into bp->out in item order (chunks are disjoint
 * ranges of items, so this is the serial order); the count, -1 when out of
 * memory. */
static long gather(avi_broad_phase *bp, int nw)
{
    size_t nseg = 0, n = 0;
    int last = 0;
    for (int w = 0; w < nw; w++) {
        if (bp->work[w].oom) return -1;
        if (bp->work[w].nseg) last = w;
        nseg += bp->work[w].nseg;
        n += bp->work[w].n;
    }
    if (nseg == 0) return 0;
    if (nseg == 1) {
        /* One chunk found everything (the serial case): take its buffer. */
        struct avi_bp_worker *w = &bp->work[last];
        avi_candidate *o = bp->out;
        size_t cap = bp->cap_out;
        bp->out = w->out;
        bp->cap_out = w->cap;
        w->out = o;
        w->cap = cap;
        return (long)n;
    }
    if (AVI_GROW(bp->seg, bp->cap_seg, nseg, 64) || AVI_GROW(bp->out, bp->cap_out, n, 1024)) return -1;
    size_t k = 0;
    for (int w = 0; w < nw; w++)
        for (size_t i = 0; i < bp->work[w].nseg; i++) bp->seg[k++] = bp->work[w].seg[i];
    qsort(bp->seg, nseg, sizeof *bp->seg, cmp_segment);
    size_t at = 0;
    for (size_t i = 0; i < nseg; i++) {
        const struct avi_bp_segment *s = &bp->seg[i];
        memcpy(bp->out + at, bp->work[s->worker].out + s->offset, s->count * sizeof *bp->out);
        at += s->count;
    }
    return (long)n;
}

/* ---- vertex-face ---- */

typedef struct {
    avi_broad_phase *bp;
    const double (*x)[3];
    const uint32_t *points;
    const uint32_t (*tri)[3];
    const entry *pe;
    double r, h;
    int bits;
} vf_search;

/* Triangles [begin, end): the points of the cells their grown boxes span. */
static void vf_triangles(void *ctx, size_t begin, size_t end, int worker)
{
    const vf_search *q = ctx;
    const double (*x)[3] = q->x;
    const uint32_t (*tri)[3] = q->tri;
    struct avi_bp_worker *w = &q->bp->work[worker];
    if (w->oom) return;
    size_t offset = chunk_open(w, begin);
    for (size_t t = begin; t < end; t++) {
        double lo[3], hi[3];
        box_of(x, tri[t], 3, q->r, lo, hi);
        int64_t i0 = cell_of(lo[0], q->h), i1 = cell_of(hi[0], q->h);
        int64_t j0 = cell_of(lo[1], q->h), j1 = cell_of(hi[1], q->h);
        int64_t k0 = cell_of(lo[2], q->h), k1 = cell_of(hi[2], q->h);
        for (int64_t i = i0; i <= i1; i++)
            for (int64_t j = j0; j <= j1; j++)
                for (int64_t k = k0; k <= k1; k++) {
                    struct avi_cell_range run = find_cell(q->bp, q->bits, avi_cell_key(i, j, k));
                    for (uint32_t a = run.start; a < run.end; a++) {
                        uint32_t v = q->points[q->pe[a].item];
                        if (v == tri[t][0] || v == tri[t][1] || v == tri[t][2]) continue;
                        const double *p = x[v];
                        if (p[0] < lo[0] || p[0] > hi[0] || p[1] < lo[1] || p[1] > hi[1] || p[2] < lo[2] ||
                            p[2] > hi[2])
                            continue;
                        if (emit(w, q->pe[a].item, (uint32_t)t)) {
                            w->oom = 1;
                            return;
                        }
                    }
                }
    }
    chunk_close(w, worker, offset);
}

long avi_broad_phase_vf(avi_broad_phase *bp, const double (*x)[3], const uint32_t *points, size_t npoints,
                        const uint32_t (*tri)[3], size_t ntri, double r, double h)
{
    entry *pe = entries(bp, npoints ? npoints : 1);
    if (!pe) return -1;
    for (size_t i = 0; i < npoints; i++) {
        const double *p = x[points[i]];
        pe[i].key = avi_cell_key(cell_of(p[0], h), cell_of(p[1], h), cell_of(p[2], h));
        pe[i].item = (uint32_t)i;
    }
    pe = avi_cell_entries_sort(pe, bp->spare, npoints);
    int bits = index_cells(bp, pe, npoints);
    int nw = workers_reset(bp);
    if (bits < 0 || nw < 0) return -1;
    vf_search q = {bp, x, points, tri, pe, r, h, bits};
    avi_pool_for(bp->pool, ntri, 64, vf_triangles, &q);
    return gather(bp, nw);
}

/* ---- edge-edge ---- */

typedef struct {
    avi_broad_phase *bp;
    const double (*x)[3];
    const uint32_t (*edges)[2];
    entry *pe;
    size_t nruns;
    double r, h;
} ee_search;

/* Edges [begin, end): grown boxes and the count of cells each spans. */
static void ee_boxes(void *ctx, size_t begin, size_t end, int worker)
{
    const ee_search *q = ctx;
    double h = q->h;
    for (size_t e = begin; e < end; e++) {
        double *b = q->bp->box[e];
        box_of(q->x, q->edges[e], 2, 0.5 * q->r, b, b + 3);
        q->bp->first[e] = (size_t)((cell_of(b[3], h) - cell_of(b[0], h) + 1) * (cell_of(b[4], h) - cell_of(b[1], h) + 1) *
                                   (cell_of(b[5], h) - cell_of(b[2], h) + 1));
    }
}

/* Edges [begin, end): their cell entries, from each edge's first slot. */
static void ee_entries(void *ctx, size_t begin, size_t end, int worker)
{
    const ee_search *q = ctx;
    double h = q->h;
    for (size_t e = begin; e < end; e++) {
        const double *b = q->bp->box[e];
        size_t m = q->bp->first[e];
        for (int64_t i = cell_of(b[0], h); i <= cell_of(b[3], h); i++)
            for (int64_t j = cell_of(b[1], h); j <= cell_of(b[4], h); j++)
                for (int64_t k = cell_of(b[2], h); k <= cell_of(b[5], h); k++) {
                    q->pe[m].key = avi_cell_key(i, j, k);
                    q->pe[m].item = (uint32_t)e;
                    m++;
                }
    }
}

/* Cells [begin, end) (runs of the sorted entries, from bp->first): the
 * pairs of edges whose boxes overlap, each reported in one cell. */
static void ee_cells(void *ctx, size_t begin, size_t end, int worker)
{
    const ee_search *q = ctx;
    const entry *pe = q->pe;
    double h = q->h;
    struct avi_bp_worker *w = &q->bp->work[worker];
    if (w->oom) return;
    size_t offset = chunk_open(w, begin);
    for (size_t c = begin; c < end; c++) {
        size_t s = q->bp->first[c], t = q->bp->first[c + 1];
        if (AVI_GROW(w->run, w->cap_run, t - s, 1024)) {
            w->oom = 1;
            return;
        }
        struct avi_cell_edge *run = w->run;
        for (size_t a = s; a < t; a++) {
            uint32_t e = pe[a].item;
            const double *b = q->bp->box[e];
            run[a - s] = (struct avi_cell_edge){{b[0], b[1], b[2]}, {b[3], b[4], b[5]}, q->edges[e][0], q->edges[e][1], e};
        }
        for (size_t a = 0; a < t - s; a++) {
            const struct avi_cell_edge *u = &run[a];
            for (size_t b2 = a + 1; b2 < t - s; b2++) {
                const struct avi_cell_edge *v = &run[b2];
                if (u->lo[0] > v->hi[0] || v->lo[0] > u->hi[0] || u->lo[1] > v->hi[1] || v->lo[1] > u->hi[1] ||
                    u->lo[2] > v->hi[2] || v->lo[2] > u->hi[2])
                    continue;
                if (u->v0 == v->v0 || u->v0 == v->v1 || u->v1 == v->v0 || u->v1 == v->v1) continue;
                /* Report a pair once: in the cell holding the low corner of
                 * the boxes' intersection. */
                double c0 = u->lo[0] > v->lo[0] ? u->lo[0] : v->lo[0];
                double c1 = u->lo[1] > v->lo[1] ? u->lo[1] : v->lo[1];
                double c2 = u->lo[2] > v->lo[2] ? u->lo[2] : v->lo[2];
                if (avi_cell_key(cell_of(c0, h), cell_of(c1, h), cell_of(c2, h)) != pe[s].key) continue;
                uint32_t ea = u->edge, eb = v->edge;
                if (emit(w, ea < eb ? ea : eb, ea < eb ? eb : ea)) {
                    w->oom = 1;
                    return;
                }
            }
        }
    }
    chunk_close(w, worker, offset);
}

long avi_broad_phase_ee(avi_broad_phase *bp, const double (*x)[3], const uint32_t (*edges)[2], size_t nedges,
                        double r, double h)
{
    /* Boxes grown by r / 2 each overlap when the edges' boxes are within r. */
    if (AVI_GROW(bp->box, bp->cap_box, nedges ? nedges : 1, 1024) ||
        AVI_GROW(bp->first, bp->cap_first, nedges + 1, 1024))
        return -1;
    ee_search q = {bp, x, edges, NULL, 0, r, h};
    avi_pool_for(bp->pool, nedges, 1024, ee_boxes, &q);
    /* Cell counts become each edge's first entry. */
    size_t count = 0;
    for (size_t e = 0; e < nedges; e++) {
        size_t c = bp->first[e];
        bp->first[e] = count;
        count += c;
    }
    entry *pe = entries(bp, count ? count : 1);
    if (!pe) return -1;
    q.pe = pe;
    avi_pool_for(bp->pool, nedges, 1024, ee_entries, &q);
    q.pe = pe = avi_cell_entries_sort_pool(bp->pool, pe, bp->spare, count);
    /* The runs of equal keys: cell c holds entries [first[c], first[c + 1]). */
    size_t nruns = 0;
    for (size_t s = 0; s < count; nruns++) {
        if (AVI_GROW(bp->first, bp->cap_first, nruns + 2, 1024)) return -1;
        bp->first[nruns] = s;
        size_t t = s + 1;
        while (t < count && pe[t].key == pe[s].key) t++;
        s = t;
    }
    bp->first[nruns] = count;
    int nw = workers_reset(bp);
    if (nw < 0) return -1;
    q.nruns = nruns;
    avi_pool_for(bp->pool, nruns, 64, ee_cells, &q);
    return gather(bp, nw);
}
