/* Synchronized velocities of a few vertices: see vertex_sync.h. */
#include "core/vertex_sync.h"
#include "core/refine.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int avi_vertex_clocks_build(avi_vertex_clocks *c, const avi_model *m, unsigned kinds)
{
    memset(c, 0, sizeof *c);
    if (!(c->start = calloc(m->nv + 1, sizeof *c->start))) return -1;
    for (int pass = 0; pass < 2; pass++) {
        size_t total = 0;
        for (unsigned k = 0; k < kinds; k++)
            for (size_t i = 0, np = avi_model_potential_count(m, (avi_kind)k); i < np; i++) {
                if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue; /* no clock */
                const uint32_t *v;
                int n = avi_model_stencil(m, (avi_kind)k, i, &v);
                for (int a = 0; a < n; a++) {
                    if (v[a] >= m->nv) continue; /* an edge DOF or ghost record: never in contact */
                    if (pass == 0) c->start[v[a] + 1]++;
                    else c->ids[c->start[v[a]]++] = avi_event_id(k, (uint32_t)i);
                    total++;
                }
            }
        if (pass == 0) {
            for (size_t v = 0; v < m->nv; v++) c->start[v + 1] += c->start[v];
            if (!(c->ids = malloc((total + 1) * sizeof *c->ids))) {
                avi_vertex_clocks_free(c);
                return -1;
            }
        } else {
            /* Each start was advanced to the next vertex's: shift back. */
            memmove(c->start + 1, c->start, m->nv * sizeof *c->start);
            c->start[0] = 0;
        }
    }
    return 0;
}

void avi_vertex_clocks_free(avi_vertex_clocks *c)
{
    free(c->start);
    free(c->ids);
    free(c->slot);
    free(c->tick);
    free(c->grad);
    free(c->step);
    free(c->row);
    memset(c, 0, sizeof *c);
}

int avi_vertex_clocks_keep(avi_vertex_clocks *c, const avi_model *m, unsigned kinds)
{
    size_t rows = 0, ngrad = 0;
    for (unsigned k = 0; k < AVI_KIND_COUNT; k++) {
        c->base[k] = rows;
        c->gbase[k] = ngrad;
        if (k >= kinds) continue;
        size_t np = avi_model_potential_count(m, (avi_kind)k);
        rows += np;
        ngrad += np * 3 * (size_t)avi_kind_slots(k);
    }
    double *tick = malloc((2 * rows + 1) * sizeof *tick), *grad = malloc((ngrad + 1) * sizeof *grad);
    double *step = malloc((rows + 1) * sizeof *step);
    uint8_t *slot = malloc(c->start[m->nv] + 1);
    uint32_t *next = malloc((m->nv + 1) * sizeof *next), *row = malloc((c->start[m->nv] + 1) * sizeof *row);
    if (!tick || !grad || !step || !slot || !next || !row || rows > UINT32_MAX) {
        free(tick);
        free(grad);
        free(step);
        free(slot);
        free(next);
        free(row);
        return -1;
    }
    for (unsigned k = 0; k < kinds; k++)
        for (size_t i = 0, np = avi_model_potential_count(m, (avi_kind)k); i < np; i++)
            step[c->base[k] + i] = avi_model_time_step(m, (avi_kind)k, i); /* fixed once the model is final */
    for (size_t j = 0; j < c->start[m->nv]; j++)
        row[j] = (uint32_t)(c->base[c->ids[j] >> AVI_ID_KIND_SHIFT] + (c->ids[j] & AVI_ID_INDEX_MASK));
    /* Each entry's place in its stencil, in avi_vertex_clocks_build's order. */
    memcpy(next, c->start, m->nv * sizeof *next);
    for (unsigned k = 0; k < kinds; k++)
        for (size_t i = 0, np = avi_model_potential_count(m, (avi_kind)k); i < np; i++) {
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            const uint32_t *v;
            int n = avi_model_stencil(m, (avi_kind)k, i, &v);
            for (int a = 0; a < n; a++)
                if (v[a] < m->nv) slot[next[v[a]]++] = (uint8_t)a;
        }
    free(next);
    free(c->slot);
    c->slot = slot;
    for (size_t r = 0; r < 2 * rows; r++) tick[r] = NAN;
    memset(grad, 0, (ngrad + 1) * sizeof *grad);
    free(c->tick);
    free(c->grad);
    free(c->step);
    free(c->row);
    c->tick = tick;
    c->grad = grad;
    c->step = step;
    c->row = row;
    c->rows = rows;
    c->ngrad = ngrad;
    return 0;
}

/* The owed weight at t of a clock of step h that ticks at k h (k >= 1
 * by t > 0), the tick at t included: the products k h as the engine forms
 * them. */
static double clock_weight(double t, double h, double *tick)
{
    double k = floor(t / h);
    if ((k + 1.0) * h <= t) k += 1.0;
    else if (k * h > t) k -= 1.0;
    *tick = k;
    return t - k * h - 0.5 * h;
}

/* ldexp(h, -level), as the engine forms a refined step: a product by a
 * power of two is that exactly while it stays normal. */
static inline double refined_step(double h, int level)
{
    static const double scale[] = {1.0, 0x1p-1, 0x1p-2, 0x1p-3, 0x1p-4, 0x1p-5, 0x1p-6, 0x1p-7,
                                   0x1p-8, 0x1p-9, 0x1p-10, 0x1p-11, 0x1p-12, 0x1p-13, 0x1p-14, 0x1p-15};
    if (level > 0 && level < 16) {
        double r = h * scale[level];
        if (r >= DBL_MIN) return r;
    }
    return ldexp(h, -level);
}

/* The cache keeps a gradient for a 1/OWED_SPLIT of its clock's step: taken
 * at the first ask in each part, its error (t' - t) dG/dt times w is
 * O(h^2 / OWED_SPLIT) per event, but summed over a step the parts' first
 * order cancels (w runs from -h/2 to h/2) and the bias left is
 * -h^3 / (12 OWED_SPLIT^2) dG/dt per step: 1/16 of one gradient per step,
 * for up to 4 gradients per step instead of one per event. */
#define OWED_SPLIT 4.0

/* The gradient of potential (kind, i) at its stencil's positions drifted
 * to t. */
static void gradient_at(const avi_vertex *V, avi_kind kind, const void *rec, const uint32_t *s, int ns, double t,
                        double g[][3])
{
    double x[AVI_STENCIL_MAX][3];
    for (int k = 0; k < ns; k++) {
        const avi_vertex *q = &V[s[k]];
        for (int d = 0; d < 3; d++) x[k][d] = q->x[d] + (t - q->tau) * q->v[d];
    }
    avi_kind_gradient(kind, rec, (const double (*)[3])x, g);
}

/* Whether stencil s (ns records) holds v[b] for some b < a: then the
 * potential was summed with v[b]'s clocks. */
static int seen_before(const uint32_t *s, int ns, const uint32_t *v, int a)
{
    for (int b = 0; b < a; b++)
        for (int k = 0; k < ns; k++)
            if (s[k] == v[b]) return 1;
    return 0;
}

/* avi_engine_vertex_owed with the cache: each (vertex, potential) pair on
 * its own, its slot from the table (a gradient, kept, serves every vertex
 * of its stencil). */
static void vertex_owed_kept(const avi_engine *e, avi_vertex_clocks *c, double t, const uint32_t *v, int n,
                             double dv[][3])
{
    const avi_model *m = e->model;
    const avi_vertex *V = m->vert;
    for (int a = 0; a < n; a++) {
        double im = V[v[a]].inv_mass, sum[3] = {0.0, 0.0, 0.0};
        if (im == 0.0) continue;
        for (uint32_t j = c->start[v[a]]; j < c->start[v[a] + 1]; j++) {
            uint32_t id = c->ids[j];
            size_t row = c->row[j];
            int level = avi_refine_level(e->refine, id);
            double h = c->step[row];
            if (level) h = refined_step(h, level);
            double tk, w = clock_weight(t, h, &tk), part = floor((w / h + 0.5) * OWED_SPLIT);
            tk = OWED_SPLIT * tk + (part < OWED_SPLIT - 1.0 ? part : OWED_SPLIT - 1.0);
            /* Kept for this part of this clock's step, or taken now. */
            avi_kind kind = (avi_kind)(id >> AVI_ID_KIND_SHIFT);
            size_t i = id & AVI_ID_INDEX_MASK;
            int ns = avi_kind_slots(kind);
            double (*g)[3] = (double (*)[3])(c->grad + c->gbase[kind] + 3 * (size_t)ns * i);
            if (!(c->tick[2 * row] == tk && c->tick[2 * row + 1] == h)) {
                const uint32_t *s;
                avi_model_stencil(m, kind, i, &s);
                gradient_at(V, kind, avi_kind_record(m, kind, i), s, ns, t, g);
                c->tick[2 * row] = tk;
                c->tick[2 * row + 1] = h;
            }
            const double *ga = g[c->slot[j]];
            for (int d = 0; d < 3; d++) sum[d] += w * ga[d];
        }
        for (int d = 0; d < 3; d++) dv[a][d] = -im * sum[d];
    }
}

void avi_engine_vertex_owed(const avi_engine *e, avi_vertex_clocks *c, double t, const uint32_t *v, int n,
                            double dv[][3])
{
    const avi_model *m = e->model;
    const avi_vertex *V = m->vert;
    for (int a = 0; a < n; a++) dv[a][0] = dv[a][1] = dv[a][2] = 0.0;
    if (!(t > 0.0)) return; /* no clock has ticked: nothing owed */
    if (c->tick) {
        vertex_owed_kept(e, c, t, v, n, dv);
        return;
    }
    /* Each potential once, its gradient shared by the listed vertices on
     * it (a face's three vertices share most of theirs). */
    for (int a = 0; a < n; a++) {
        if (V[v[a]].inv_mass == 0.0) continue;
        for (uint32_t j = c->start[v[a]]; j < c->start[v[a] + 1]; j++) {
            uint32_t id = c->ids[j];
            avi_kind kind = (avi_kind)(id >> AVI_ID_KIND_SHIFT);
            size_t i = id & AVI_ID_INDEX_MASK;
            const uint32_t *s;
            int ns = avi_model_stencil(m, kind, i, &s);
            if (seen_before(s, ns, v, a)) continue;
            int level = avi_refine_level(e->refine, id);
            double h = avi_model_time_step(m, kind, i);
            if (level) h = ldexp(h, -level);
            double tk, w = clock_weight(t, h, &tk), g[AVI_STENCIL_MAX][3];
            gradient_at(V, kind, avi_kind_record(m, kind, i), s, ns, t, g);
            for (int b = a; b < n; b++)
                for (int k = 0; k < ns; k++)
                    if (s[k] == v[b])
                        for (int d = 0; d < 3; d++) dv[b][d] -= V[v[b]].inv_mass * w * g[k][d];
        }
    }
}
