/* Overlapping box pairs by a uniform grid; see the header. */
#include "contact/box_pairs.h"
#include "contact/broad_phase.h"
#include "base/grow.h"

#include <math.h>
#include <stdlib.h>

typedef avi_cell_entry entry;

typedef struct {
    double lo[3], h;
} grid;

static int64_t cell_of(const grid *g, double c, int axis) { return (int64_t)floor((c - g->lo[axis]) / g->h); }


/* Cells box b spans, as a double (no overflow). */
static double cells_of(const grid *g, const double b[6])
{
    double c = 1.0;
    for (int a = 0; a < 3; a++) c *= (double)(cell_of(g, b[3 + a], a) - cell_of(g, b[a], a) + 1);
    return c;
}

/* Cells twice the mean box size, doubled until the boxes fill at most
 * 8 cells each on average (one large box among small ones must not span
 * millions of cells) and the grid has at most 2^21 cells along each axis. */
static grid choose_grid(const double (*box)[6], size_t n)
{
    grid g = {{INFINITY, INFINITY, INFINITY}, 0.0};
    double hi[3] = {-INFINITY, -INFINITY, -INFINITY}, side = 0.0;
    for (size_t i = 0; i < n; i++)
        for (int a = 0; a < 3; a++) {
            g.lo[a] = fmin(g.lo[a], box[i][a]);
            hi[a] = fmax(hi[a], box[i][3 + a]);
            side += (box[i][3 + a] - box[i][a]) / (3.0 * (double)n);
        }
    double extent = fmax(hi[0] - g.lo[0], fmax(hi[1] - g.lo[1], hi[2] - g.lo[2]));
    g.h = side > 0.0 ? 2.0 * side : (extent > 0.0 ? extent : 1.0);
    while (extent / g.h >= (double)(1u << 21) - 1.0) g.h *= 2.0;
    for (;;) {
        double total = 0.0;
        for (size_t i = 0; i < n && total <= 8.0 * (double)n + 64.0; i++) total += cells_of(&g, box[i]);
        if (total <= 8.0 * (double)n + 64.0) return g;
        g.h *= 2.0;
    }
}

static int overlap(const double a[6], const double b[6])
{
    return a[0] <= b[3] && b[0] <= a[3] && a[1] <= b[4] && b[1] <= a[4] && a[2] <= b[5] && b[2] <= a[5];
}

/* Pairs of the run of entries [s, t) of one cell, each reported in the
 * cell of the low corner of the two boxes' intersection only. */
static int pairs_in_cell(const grid *g, const double (*box)[6], const entry *e, size_t s, size_t t, avi_box_pair **out,
                         size_t *n, size_t *cap)
{
    for (size_t i = s; i < t; i++)
        for (size_t j = i + 1; j < t; j++) {
            const double *a = box[e[i].item], *b = box[e[j].item];
            if (!overlap(a, b)) continue;
            int64_t c[3];
            for (int k = 0; k < 3; k++) c[k] = cell_of(g, fmax(a[k], b[k]), k);
            if (avi_cell_key(c[0], c[1], c[2]) != e[s].key) continue;
            if (AVI_GROW(*out, *cap, *n + 1, 1024)) return -1;
            uint32_t x = e[i].item, y = e[j].item;
            (*out)[(*n)++] = (avi_box_pair){x < y ? x : y, x < y ? y : x};
        }
    return 0;
}

long avi_box_pairs(const double (*box)[6], size_t n, avi_box_pair **pairs)
{
    *pairs = NULL;
    if (n < 2) return 0;
    grid g = choose_grid(box, n);
    size_t count = 0;
    for (size_t i = 0; i < n; i++) count += (size_t)cells_of(&g, box[i]);
    entry *e = malloc(count * sizeof *e), *spare = malloc(count * sizeof *spare);
    if (!e || !spare) {
        free(e);
        free(spare);
        return -1;
    }
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        const double *b = box[i];
        for (int64_t x = cell_of(&g, b[0], 0); x <= cell_of(&g, b[3], 0); x++)
            for (int64_t y = cell_of(&g, b[1], 1); y <= cell_of(&g, b[4], 1); y++)
                for (int64_t z = cell_of(&g, b[2], 2); z <= cell_of(&g, b[5], 2); z++)
                    e[m++] = (entry){avi_cell_key(x, y, z), (uint32_t)i};
    }
    entry *sorted = avi_cell_entries_sort(e, spare, m);
    avi_box_pair *out = NULL;
    size_t np = 0, cap = 0;
    int oom = 0;
    for (size_t s = 0; s < m && !oom;) {
        size_t t = s + 1;
        while (t < m && sorted[t].key == sorted[s].key) t++;
        oom = pairs_in_cell(&g, box, sorted, s, t, &out, &np, &cap);
        s = t;
    }
    free(e);
    free(spare);
    if (oom) {
        free(out);
        return -1;
    }
    *pairs = out;
    return (long)np;
}

void avi_triangle_box(const double (*x)[3], const uint32_t t[3], double r, double box[6])
{
    for (int a = 0; a < 3; a++) {
        double lo = x[t[0]][a], hi = lo;
        for (int k = 1; k < 3; k++) {
            lo = fmin(lo, x[t[k]][a]);
            hi = fmax(hi, x[t[k]][a]);
        }
        box[a] = lo - r;
        box[3 + a] = hi + r;
    }
}
