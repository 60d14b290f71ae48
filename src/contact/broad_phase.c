#include "contact/broad_phase.h"
#include "base/grow.h"

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
    free(bp->run);
    memset(bp, 0, sizeof *bp);
}

static int emit(avi_broad_phase *bp, size_t *n, uint32_t a, uint32_t b)
{
    if (AVI_GROW(bp->out, bp->cap_out, *n + 1, 1024)) return -1;
    bp->out[*n].a = a;
    bp->out[*n].b = b;
    (*n)++;
    return 0;
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
    if (bits < 0) return -1;
    size_t n = 0;
    for (size_t t = 0; t < ntri; t++) {
        double lo[3], hi[3];
        box_of(x, tri[t], 3, r, lo, hi);
        int64_t i0 = cell_of(lo[0], h), i1 = cell_of(hi[0], h);
        int64_t j0 = cell_of(lo[1], h), j1 = cell_of(hi[1], h);
        int64_t k0 = cell_of(lo[2], h), k1 = cell_of(hi[2], h);
        for (int64_t i = i0; i <= i1; i++)
            for (int64_t j = j0; j <= j1; j++)
                for (int64_t k = k0; k <= k1; k++) {
                    struct avi_cell_range run = find_cell(bp, bits, avi_cell_key(i, j, k));
                    for (uint32_t a = run.start; a < run.end; a++) {
                        uint32_t v = points[pe[a].item];
                        if (v == tri[t][0] || v == tri[t][1] || v == tri[t][2]) continue;
                        const double *p = x[v];
                        if (p[0] < lo[0] || p[0] > hi[0] || p[1] < lo[1] || p[1] > hi[1] || p[2] < lo[2] ||
                            p[2] > hi[2])
                            continue;
                        if (emit(bp, &n, pe[a].item, (uint32_t)t)) return -1;
                    }
                }
    }
    return (long)n;
}

long avi_broad_phase_ee(avi_broad_phase *bp, const double (*x)[3], const uint32_t (*edges)[2], size_t nedges,
                        double r, double h)
{
    /* Boxes grown by r / 2 each overlap when the edges' boxes are within r. */
    if (AVI_GROW(bp->box, bp->cap_box, nedges ? nedges : 1, 1024)) return -1;
    size_t count = 0;
    for (size_t e = 0; e < nedges; e++) {
        double *b = bp->box[e];
        box_of(x, edges[e], 2, 0.5 * r, b, b + 3);
        count += (size_t)((cell_of(b[3], h) - cell_of(b[0], h) + 1) * (cell_of(b[4], h) - cell_of(b[1], h) + 1) *
                          (cell_of(b[5], h) - cell_of(b[2], h) + 1));
    }
    entry *pe = entries(bp, count ? count : 1);
    if (!pe) return -1;
    size_t m = 0;
    for (size_t e = 0; e < nedges; e++) {
        const double *b = bp->box[e];
        for (int64_t i = cell_of(b[0], h); i <= cell_of(b[3], h); i++)
            for (int64_t j = cell_of(b[1], h); j <= cell_of(b[4], h); j++)
                for (int64_t k = cell_of(b[2], h); k <= cell_of(b[5], h); k++) {
                    pe[m].key = avi_cell_key(i, j, k);
                    pe[m].item = (uint32_t)e;
                    m++;
                }
    }
    pe = avi_cell_entries_sort(pe, bp->spare, count);
    size_t n = 0;
    for (size_t s = 0; s < count;) {
        size_t t = s;
        while (t < count && pe[t].key == pe[s].key) t++;
        if (AVI_GROW(bp->run, bp->cap_run, t - s, 1024)) return -1;
        struct avi_cell_edge *run = bp->run;
        for (size_t a = s; a < t; a++) {
            uint32_t e = pe[a].item;
            const double *b = bp->box[e];
            run[a - s] = (struct avi_cell_edge){{b[0], b[1], b[2]}, {b[3], b[4], b[5]}, edges[e][0], edges[e][1], e};
        }
        for (size_t a = 0; a < t - s; a++) {
            const struct avi_cell_edge *u = &run[a];
            for (size_t b2 = a + 1; b2 < t - s; b2++) {
                const struct avi_cell_edge *w = &run[b2];
                if (u->lo[0] > w->hi[0] || w->lo[0] > u->hi[0] || u->lo[1] > w->hi[1] || w->lo[1] > u->hi[1] ||
                    u->lo[2] > w->hi[2] || w->lo[2] > u->hi[2])
                    continue;
                if (u->v0 == w->v0 || u->v0 == w->v1 || u->v1 == w->v0 || u->v1 == w->v1) continue;
                /* Report a pair once: in the cell holding the low corner of
                 * the boxes' intersection. */
                double c0 = u->lo[0] > w->lo[0] ? u->lo[0] : w->lo[0];
                double c1 = u->lo[1] > w->lo[1] ? u->lo[1] : w->lo[1];
                double c2 = u->lo[2] > w->lo[2] ? u->lo[2] : w->lo[2];
                if (avi_cell_key(cell_of(c0, h), cell_of(c1, h), cell_of(c2, h)) != pe[s].key) continue;
                uint32_t ea = u->edge, eb = w->edge;
                if (emit(bp, &n, ea < eb ? ea : eb, ea < eb ? eb : ea)) return -1;
            }
        }
        s = t;
    }
    return (long)n;
}
