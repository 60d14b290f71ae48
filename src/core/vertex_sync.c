/* Synchronized velocities of a few vertices: see vertex_sync.h. */
#include "core/vertex_sync.h"
#include "core/refine.h"

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
    memset(c, 0, sizeof *c);
}

/* The owed weight at t of a clock of step h that ticks at k h (k >= 1
 * by t > 0), the tick at t included: the products k h as the engine forms
 * them. */
static double clock_weight(double t, double h)
{
    double k = floor(t / h);
    if ((k + 1.0) * h <= t) k += 1.0;
    else if (k * h > t) k -= 1.0;
    return t - k * h - 0.5 * h;
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

void avi_engine_vertex_owed(const avi_engine *e, const avi_vertex_clocks *c, double t, const uint32_t *v, int n,
                            double dv[][3])
{
    const avi_model *m = e->model;
    const avi_vertex *V = m->vert;
    for (int a = 0; a < n; a++) dv[a][0] = dv[a][1] = dv[a][2] = 0.0;
    if (!(t > 0.0)) return; /* no clock has ticked: nothing owed */
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
            double h = ldexp(avi_model_time_step(m, kind, i), -avi_refine_level(e->refine, id));
            double w = clock_weight(t, h), x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
            for (int k = 0; k < ns; k++) {
                const avi_vertex *q = &V[s[k]];
                for (int d = 0; d < 3; d++) x[k][d] = q->x[d] + (t - q->tau) * q->v[d];
            }
            avi_kind_gradient(kind, avi_kind_record(m, kind, i), (const double (*)[3])x, g);
            for (int b = a; b < n; b++)
                for (int k = 0; k < ns; k++)
                    if (s[k] == v[b])
                        for (int d = 0; d < 3; d++) dv[b][d] -= V[v[b]].inv_mass * w * g[k][d];
        }
    }
}
