/* Refined elastic clocks on vertices in contact: see refine.h. */
#include "core/refine.h"
#include "core/vertex_sync.h"
#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void avi_refine_destroy(avi_refine *r)
{
    if (!r) return;
    free(r->owned);
    free(r->level);
    free(r->target);
    free(r->last_touch);
    free(r->omega);
    free(r->adj_start);
    free(r->adj);
    free(r->dissolve);
    free(r);
}

/* Vertex -> ids of the unpinned elastic potentials on it (gravity needs no
 * refinement: its force does not depend on positions). */
static int build_adjacency(avi_refine *r, const avi_model *m)
{
    avi_vertex_clocks c;
    if (avi_vertex_clocks_build(&c, m, AVI_KIND_GRAVITY)) return -1;
    r->adj_start = c.start;
    r->adj = c.ids;
    return 0;
}

static avi_refine *refine_create(const avi_engine *e)
{
    const avi_model *m = e->model;
    avi_refine *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        r->offset[k] = r->npot;
        r->npot += avi_model_potential_count(m, (avi_kind)k);
    }
    r->nv = m->nv;
    r->ngroup = e->groups.ngroup;
    r->owned = calloc(r->npot + 1, 1);
    r->level = calloc(r->npot + 1, 1);
    r->target = calloc(r->npot + 1, 1);
    r->last_touch = calloc(r->npot + 1, sizeof *r->last_touch);
    r->omega = calloc(m->nv + 1, sizeof *r->omega);
    r->dissolve = calloc((size_t)r->ngroup + 1, 1);
    if (!r->owned || !r->level || !r->target || !r->last_touch || !r->omega || !r->dissolve || build_adjacency(r, m)) {
        avi_refine_destroy(r);
        return NULL;
    }
    return r;
}

/* The smallest k >= 0 with dt omega / 2^k <= AVI_REFINE_RATIO. */
static int level_for(double dt, double omega)
{
    double q = dt * omega / AVI_REFINE_RATIO;
    if (!(q > 1.0)) return 0;
    int ex;
    double f = frexp(q, &ex); /* q = f 2^ex, f in [0.5, 1) */
    int k = f == 0.5 ? ex - 1 : ex;
    return k < AVI_REFINE_MAX_LEVEL ? k : AVI_REFINE_MAX_LEVEL;
}

static size_t avi_refine_number(const avi_refine *r, uint32_t id)
{
    return r->offset[id >> AVI_ID_KIND_SHIFT] + (id & AVI_ID_INDEX_MASK);
}

/* The level potential id's vertices ask for. */
static int target_of(const avi_refine *r, const avi_model *m, uint32_t id)
{
    avi_kind kind = (avi_kind)(id >> AVI_ID_KIND_SHIFT);
    size_t i = id & AVI_ID_INDEX_MASK;
    double dt = avi_model_time_step(m, kind, i);
    const uint32_t *v;
    int n = avi_model_stencil(m, kind, i, &v), k = 0;
    for (int a = 0; a < n; a++) {
        if (v[a] >= m->nv) continue; /* auxiliary records carry no contact */
        int l = level_for(dt, r->omega[v[a]]);
        if (l > k) k = l;
    }
    return k;
}

/* Whether a vertex of potential id has layers. */
static int touched(const avi_refine *r, const avi_model *m, uint32_t id)
{
    const uint32_t *v;
    int n = avi_model_stencil(m, (avi_kind)(id >> AVI_ID_KIND_SHIFT), id & AVI_ID_INDEX_MASK, &v);
    for (int a = 0; a < n; a++)
        if (v[a] < m->nv && r->omega[v[a]] > 0.0) return 1;
    return 0;
}

/* Recomputes potential id's target; one whose level must change becomes
 * owned, and its group is marked to dissolve. */
static void retarget(avi_engine *e, uint32_t id)
{
    avi_refine *r = e->refine;
    size_t p = avi_refine_number(r, id);
    r->target[p] = (uint8_t)target_of(r, e->model, id);
    if (r->owned[p] || (r->target[p] == 0 && r->level[p] == 0)) return;
    r->owned[p] = 1;
    uint32_t g = avi_group_of(&e->groups, id);
    if (g != AVI_GROUP_NONE) r->dissolve[g] = 1;
}

/* AVI_BENCH_NO_REFINE=1 is a bench-only knob: bench/cost_of_accuracy.sh
 * prices refinement with it (a physically invalid build: thin layers under
 * load gain energy, refine.h); default builds never define it. */
#ifndef AVI_BENCH_NO_REFINE
#define AVI_BENCH_NO_REFINE 0
#endif

int avi_engine_refine(avi_engine *e, uint32_t vertex, double omega)
{
    if (AVI_BENCH_NO_REFINE) return AVI_OK;
    if (!e->refine) {
        if (omega == 0.0) return AVI_OK;
        if (!(e->refine = refine_create(e))) return avi_error_set(&e->err, AVI_ERR_RUN, "out of memory");
    }
    avi_refine *r = e->refine;
    if (vertex >= e->model->nv || r->omega[vertex] == omega) return AVI_OK;
    r->omega[vertex] = omega;
    for (uint32_t a = r->adj_start[vertex]; a < r->adj_start[vertex + 1]; a++) retarget(e, r->adj[a]);
    return AVI_OK;
}

double avi_refine_event_begin(avi_refine *r, const avi_model *m, avi_event ev, int *next_level)
{
    size_t p = avi_refine_number(r, ev.id);
    int kp = r->level[p], kt = r->target[p], kn;
    uint64_t n = ev.n;
    /* No coarsening while a vertex has layers, nor for AVI_REFINE_HOLD
     * coarse steps after: layers come and go as a vertex moves in the stack
     * or bounces at a contact's rim, and a coarse step that a returning
     * vertex spends in the layers is the resonance refinement removes
     * (coarsening at once lost 3e-3 of the energy at 1 m/s,
     * docs/research/contact_energy.md). */
    if (touched(r, m, ev.id)) r->last_touch[p] = ev.t;
    if (kt < kp && ev.t - r->last_touch[p] < AVI_REFINE_HOLD * avi_model_time_step(m, (avi_kind)(ev.id >> AVI_ID_KIND_SHIFT), ev.id & AVI_ID_INDEX_MASK))
        kt = kp;
    kn = kt;
    /* Coarser only as far as this event's time is a multiple of the step. */
    if (kt < kp)
        for (kn = kp; kn > kt && n % ((uint64_t)1 << (kp - kn + 1)) == 0;) kn--;
    *next_level = kn;
    return n == 0 ? 0.5 * ldexp(1.0, -kn) : 0.5 * (ldexp(1.0, -kp) + ldexp(1.0, -kn));
}

avi_event avi_refine_event_end(avi_refine *r, avi_event ev, int kn, double dt)
{
    size_t p = avi_refine_number(r, ev.id);
    int kp = r->level[p], kt = r->target[p];
    uint64_t n = ev.n;
    uint64_t next = (kn >= kp ? n << (kn - kp) : n >> (kp - kn)) + 1;
    if (next >= AVI_GROUP_CURSOR) next = AVI_GROUP_CURSOR; /* avi_engine_schedule reports the overflow */
    if (kn != kp) r->switches++;
    r->level[p] = (uint8_t)kn;
    if (kn == 0 && kt == 0) r->owned[p] = 0; /* back to the coarse clock */
    return (avi_event){(double)next * ldexp(dt, -kn), ev.id, (uint32_t)next};
}

/* ---- checkpoint state ---- */

int avi_refine_save(const avi_refine *r, avi_state_io *io)
{
    int rc = io->put(io, "vertex_omega", AVI_STATE_F64, r->nv, 1, r->omega);
    if (!rc) rc = io->put(io, "potential_level", AVI_STATE_U8, r->npot, 1, r->level);
    if (!rc) rc = io->put(io, "potential_last_touch", AVI_STATE_F64, r->npot, 1, r->last_touch);
    return rc ? -1 : 0;
}

int avi_refine_load(avi_engine *e, avi_state_io *io, avi_error *err)
{
    avi_refine_destroy(e->refine);
    if (!(e->refine = refine_create(e))) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    avi_refine *r = e->refine;
    if (io->count(io, "vertex_omega") != (long)r->nv || io->count(io, "potential_level") != (long)r->npot ||
        io->get(io, "vertex_omega", AVI_STATE_F64, r->nv, r->omega) ||
        io->get(io, "potential_level", AVI_STATE_U8, r->npot, r->level) ||
        io->get(io, "potential_last_touch", AVI_STATE_F64, r->npot, r->last_touch))
        return avi_error_set(err, AVI_ERR_INPUT, "refine: an array is missing or of another size");
    for (size_t v = 0; v < r->nv; v++)
        if (!(r->omega[v] >= 0.0) || !isfinite(r->omega[v]))
            return avi_error_set(err, AVI_ERR_INPUT, "refine: vertex %zu has omega %g", v, r->omega[v]);
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(e->model, (avi_kind)k); i < c; i++) {
            size_t p = r->offset[k] + i;
            if (r->level[p] > AVI_REFINE_MAX_LEVEL || (r->level[p] && (k == AVI_KIND_GRAVITY ||
                                                       avi_model_potential_pinned(e->model, (avi_kind)k, i))))
                return avi_error_set(err, AVI_ERR_INPUT, "refine: %s %zu has level %u", avi_kind_name((avi_kind)k), i,
                                     r->level[p]);
            if (k != AVI_KIND_GRAVITY && !avi_model_potential_pinned(e->model, (avi_kind)k, i))
                retarget(e, avi_event_id(k, (uint32_t)i));
        }
    return AVI_OK;
}
