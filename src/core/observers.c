/* Observers: read the state at a time T (x + (T - tau) v) without changing it. */
#include "core/engine_internal.h"
#include "core/incidence.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Positions and velocities at t of the records V (either output may be NULL). */
static void records_state(const avi_vertex *V, size_t nv, double t, double *x, double *v)
{
    for (size_t i = 0; i < nv; i++) {
        const avi_vertex *p = &V[i];
        double h = t - p->tau;
        for (int c = 0; c < 3; c++) {
            if (x) x[3 * i + c] = p->x[c] + h * p->v[c];
            if (v) v[3 * i + c] = p->v[c];
        }
    }
}

void avi_engine_state_at(const avi_engine *e, double t, double *x, double *v)
{
    records_state(e->model->vert, e->model->nv, t, x, v);
}

/* Gathers a stencil's positions from the state array xt. */
static inline void gather(const double (*xt)[3], const uint32_t *v, int n, double x[][3])
{
    for (int a = 0; a < n; a++) v3_copy(x[a], xt[v[a]]);
}

/* Adds the energies of every potential of `kind` at positions xt to *sum,
 * in index order (a constant kind: the table's calls fold). */
static inline __attribute__((always_inline)) void add_energies(const avi_model *m, unsigned kind,
                                                               const double (*xt)[3], double *sum)
{
    double x[AVI_STENCIL_MAX][3];
    for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)kind); i < c; i++) {
        const void *rec = avi_kind_record(m, kind, i);
        gather(xt, avi_kind_stencil(kind, rec), avi_kind_slots(kind), x);
        *sum += avi_kind_energy(kind, rec, (const double (*)[3])x);
    }
}

/* Elastic energy of every potential at positions xt, kinds in rank order;
 * kept in one place so the synchronous integrators and tests share it. */
double avi_model_elastic_energy(const avi_model *m, const double (*xt)[3])
{
    double sum = 0.0;
#define ADD_ELASTIC(K, type, array, count, slots, vertices, gradient, energy, flags) \
    if ((flags) & AVI_KIND_ELASTIC) add_energies(m, K, xt, &sum);
    AVI_POTENTIAL_KINDS(ADD_ELASTIC)
#undef ADD_ELASTIC
    return sum;
}

/* The energy of the external potentials (gravity) at positions xt. */
static double external_energy(const avi_model *m, const double (*xt)[3])
{
    double sum = 0.0;
#define ADD_EXTERNAL(K, type, array, count, slots, vertices, gradient, energy, flags) \
    if (!((flags) & AVI_KIND_ELASTIC)) add_energies(m, K, xt, &sum);
    AVI_POTENTIAL_KINDS(ADD_EXTERNAL)
#undef ADD_EXTERNAL
    return sum;
}

/* Scatter of a stencil's gradient into per-vertex sums. */
static inline void scatter(double (*g)[3], const uint32_t *v, int n, const double gs[][3])
{
    for (int a = 0; a < n; a++) v3_add(g[v[a]], g[v[a]], gs[a]);
}

static inline void gather_vertices(const avi_model *m, const uint32_t *v, int n, double x[][3])
{
    for (int a = 0; a < n; a++) v3_copy(x[a], m->vert[v[a]].x);
}

/* Adds the gradients of every potential of `kind` into g. */
static inline __attribute__((always_inline)) void add_gradients(const avi_model *m, unsigned kind, double (*g)[3])
{
    double x[AVI_STENCIL_MAX][3], gs[AVI_STENCIL_MAX][3];
    const int n = avi_kind_slots(kind);
    for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)kind); i < c; i++) {
        const void *rec = avi_kind_record(m, kind, i);
        const uint32_t *v = avi_kind_stencil(kind, rec);
        gather_vertices(m, v, n, x);
        avi_kind_gradient(kind, rec, (const double (*)[3])x, gs);
        scatter(g, v, n, (const double (*)[3])gs);
    }
}

void avi_model_accumulate_gradient(const avi_model *m, double (*g)[3])
{
#define ADD_GRADIENTS(K, ...) add_gradients(m, K, g);
    AVI_POTENTIAL_KINDS(ADD_GRADIENTS)
#undef ADD_GRADIENTS
}

/* The parallel passes (core/incidence.h): a term per potential or per
 * stencil slot into mp's scratch on any worker, then sums in the serial
 * order. Chunks of the flat potential index [b, e) may span kinds: each
 * kind's part runs its own specialised copy. */
#define PASS_GRAIN 256

typedef struct {
    avi_model_pass *mp;
    const double (*xt)[3]; /* energies at xt; NULL: gradients */
    unsigned kinds;        /* the kinds of the pass: a bit per kind */
    const double (*xg)[3]; /* gradients at xg; NULL: at the records */
    size_t p0, rowbase;    /* the block's first potential and its first row */
} pass_ctx;

static inline __attribute__((always_inline)) void energies_kind(const pass_ctx *c, unsigned kind, size_t b, size_t e)
{
    const avi_model *m = c->mp->m;
    size_t off = c->mp->inc.off[kind];
    double x[AVI_STENCIL_MAX][3];
    for (size_t p = b; p < e; p++) {
        const void *rec = avi_kind_record(m, kind, p - off);
        gather(c->xt, avi_kind_stencil(kind, rec), avi_kind_slots(kind), x);
        c->mp->pot[p] = avi_kind_energy(kind, rec, (const double (*)[3])x);
    }
}

static inline __attribute__((always_inline)) void gradients_kind(const pass_ctx *c, unsigned kind, size_t b, size_t e)
{
    const avi_model *m = c->mp->m;
    const int n = avi_kind_slots(kind);
    size_t off = c->mp->inc.off[kind], row = c->mp->inc.row_off[kind] + (b - off) * (size_t)n;
    double x[AVI_STENCIL_MAX][3];
    for (size_t p = b; p < e; p++, row += (size_t)n) {
        const void *rec = avi_kind_record(m, kind, p - off);
        if (c->xg) gather(c->xg, avi_kind_stencil(kind, rec), n, x);
        else gather_vertices(m, avi_kind_stencil(kind, rec), n, x);
        avi_kind_gradient(kind, rec, (const double (*)[3])x, c->mp->rows + (row - c->rowbase));
    }
}

static void pass_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const pass_ctx *c = ctx;
    const size_t *off = c->mp->inc.off;
    b += c->p0;
    e += c->p0;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t lo = b > off[k] ? b : off[k], hi = e < off[k + 1] ? e : off[k + 1];
        if (lo >= hi || !(c->kinds & (1u << k))) continue;
#define PASS_CASE(K, ...) \
    case K: if (c->xt) energies_kind(c, K, lo, hi); else gradients_kind(c, K, lo, hi); break;
        switch (k) { AVI_POTENTIAL_KINDS(PASS_CASE) default: break; }
#undef PASS_CASE
    }
}

/* Energies of the kinds with flag AVI_KIND_ELASTIC equal to `elastic`
 * (both when want < 0) into mp->pot. */
static unsigned kinds_with(int elastic)
{
    unsigned bits = 0;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        if (elastic < 0 || !(avi_kind_flags(k) & AVI_KIND_ELASTIC) == !elastic) bits |= 1u << k;
    return bits;
}

/* The sum of mp->pot over the kinds in `kinds`, in the serial order. */
static double pot_sum(const avi_model_pass *mp, unsigned kinds)
{
    double sum = 0.0;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        if (kinds & (1u << k))
            for (size_t p = mp->inc.off[k]; p < mp->inc.off[k + 1]; p++) sum += mp->pot[p];
    return sum;
}

double avi_model_elastic_energy_pass(const avi_model *m, avi_model_pass *mp, const double (*xt)[3])
{
    if (avi_model_pass_ready(mp, 0)) return avi_model_elastic_energy(m, xt);
    pass_ctx c = {mp, xt, kinds_with(1), NULL, 0, 0};
    avi_pool_for(mp->pool, mp->inc.np, PASS_GRAIN, pass_chunk, &c);
    return pot_sum(mp, c.kinds);
}

typedef struct {
    const avi_model_pass *mp;
    unsigned kinds;
    int scaled; /* 0: g += row; 1: g += s row, absg += |s row| (absg may be NULL) */
    double s;
    double (*g)[3], (*absg)[3];
    size_t p1, rowbase; /* the block's end and first row */
    int last;
} gather_ctx;

/* Records [b, e): their rows of the block's potentials (of c->kinds), in the
 * serial order (a record's entries are in potential order). */
static void gather_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const gather_ctx *c = ctx;
    const avi_incidence *inc = &c->mp->inc;
    const double (*rows)[3] = (const double (*)[3])c->mp->rows;
    const unsigned all = (1u << AVI_MODEL_KINDS) - 1;
    for (size_t r = b; r < e; r++) {
        size_t j = inc->start[r] + c->mp->cursor[r];
        for (; j < inc->start[r + 1] && inc->entry[j].p < c->p1; j++) {
            avi_incidence_entry en = inc->entry[j];
            if ((c->kinds & all) != all) {
                unsigned k = 0;
                while (en.p >= inc->off[k + 1]) k++;
                if (!(c->kinds & (1u << k))) continue;
            }
            const double *gs = rows[en.row - c->rowbase];
            if (!c->scaled) {
                v3_add(c->g[r], c->g[r], gs);
                continue;
            }
            for (int d = 0; d < 3; d++) {
                c->g[r][d] += c->s * gs[d];
                if (c->absg) c->absg[r][d] += fabs(c->s * gs[d]);
            }
        }
        c->mp->cursor[r] = c->last ? 0 : (uint32_t)(j - inc->start[r]);
    }
}

/* Gradients at x (NULL: the records) of gc's kinds, block by block: rows on
 * the pool, then gathered. -1 (nothing added) when out of memory. */
static int gradient_blocks(avi_model_pass *mp, const double (*x)[3], gather_ctx *gc)
{
    const avi_incidence *inc = &mp->inc;
    size_t most = 0;
    for (size_t p0 = 0; p0 < inc->np; p0 += mp->block) {
        size_t p1 = inc->np - p0 > mp->block ? p0 + mp->block : inc->np, n = avi_incidence_first_row(inc, p1) - avi_incidence_first_row(inc, p0);
        most = n > most ? n : most;
    }
    if (avi_model_pass_rows(mp, most, 0)) return -1;
    pass_ctx c = {mp, NULL, gc->kinds, x, 0, 0};
    for (size_t p0 = 0;; p0 += mp->block) {
        size_t p1 = inc->np - p0 > mp->block ? p0 + mp->block : inc->np;
        c.p0 = p0;
        c.rowbase = gc->rowbase = avi_incidence_first_row(inc, p0);
        gc->p1 = p1;
        gc->last = p1 == inc->np;
        avi_pool_for(mp->pool, p1 - p0, PASS_GRAIN, pass_chunk, &c);
        avi_pool_for(mp->pool, inc->nrec, PASS_GRAIN, gather_chunk, gc);
        if (gc->last) return 0;
    }
}

void avi_model_accumulate_gradient_pass(const avi_model *m, avi_model_pass *mp, double (*g)[3])
{
    gather_ctx gc = {mp, kinds_with(-1), 0, 1.0, g, NULL, 0, 0, 0};
    if (avi_model_pass_ready(mp, 0) || gradient_blocks(mp, NULL, &gc)) avi_model_accumulate_gradient(m, g);
}

int avi_model_scaled_gradient_pass(avi_model_pass *mp, const double (*x)[3], unsigned kinds, double s, double (*g)[3],
                                   double (*absg)[3])
{
    gather_ctx gc = {mp, kinds, 1, s, g, absg, 0, 0, 0};
    if (avi_model_pass_ready(mp, 0)) return -1;
    return gradient_blocks(mp, x, &gc);
}

/* Whether energy `en` names a blow-up better than the best so far: the
 * first non-finite energy wins (a NaN compares false with everything, so it
 * must neither be skipped nor overwritten), else the largest finite one. */
static int worse_energy(double en, double best, int have)
{
    if (!have) return 1;
    if (!isfinite(best)) return 0;
    return !isfinite(en) || en > best;
}

/* Names the potential with the largest energy at positions xt, or the first
 * one whose energy is not finite. */
static void describe_largest_energy(const avi_model *m, const double (*xt)[3], char *buf, size_t len)
{
    double best = 0.0, x[AVI_STENCIL_MAX][3];
    const uint32_t *bv = NULL;
    int bn = 0;
    avi_kind bk = (avi_kind)0;
    size_t bi = 0;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        if (!(avi_kind_flags(k) & AVI_KIND_ELASTIC)) continue;
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            const void *rec = avi_kind_record(m, k, i);
            const uint32_t *v = avi_kind_stencil(k, rec);
            gather(xt, v, avi_kind_slots(k), x);
            double en = avi_kind_energy(k, rec, (const double (*)[3])x);
            if (worse_energy(en, best, bv != NULL)) {
                best = en;
                bv = v;
                bn = avi_kind_vertices(k);
                bk = (avi_kind)k;
                bi = i;
            }
        }
    }
    if (!bv) {
        snprintf(buf, len, "(no elastic potential)");
        return;
    }
    int k = snprintf(buf, len, "%s %zu (vertices", avi_kind_name(bk), bi);
    for (int a = 0; a < bn && k > 0 && (size_t)k < len; a++)
        k += snprintf(buf + k, len - (size_t)k, "%s %u", a ? "," : "", bv[a]);
    if (k > 0 && (size_t)k < len) snprintf(buf + k, len - (size_t)k, "): %.3e J", best);
}

void avi_engine_describe_largest_energy(const avi_engine *e, double t, char *buf, size_t len)
{
    const avi_model *m = e->model;
    size_t nrec = avi_model_record_count(m);
    double (*xt)[3] = malloc((nrec ? nrec : 1) * sizeof *xt);
    if (!xt) {
        snprintf(buf, len, "(out of memory)");
        return;
    }
    records_state(m->vert, nrec, t, &xt[0][0], NULL);
    describe_largest_energy(m, (const double (*)[3])xt, buf, len);
    free(xt);
}

static void positions_at(const avi_vertex *V, size_t nv, double t, double (*xt)[3])
{
    records_state(V, nv, t, &xt[0][0], NULL);
}

typedef struct {
    const avi_vertex *V;
    double t;
    double (*xt)[3];
} positions_ctx;

static void positions_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const positions_ctx *c = ctx;
    records_state(c->V + b, e - b, c->t, &c->xt[b][0], NULL);
}

/* positions_at on mp's pool (each record on its own: any split, same bits). */
static void positions_at_pass(avi_model_pass *mp, const avi_vertex *V, size_t nv, double t, double (*xt)[3])
{
    if (avi_model_pass_ready(mp, 0)) {
        positions_at(V, nv, t, xt);
        return;
    }
    positions_ctx c = {V, t, xt};
    avi_pool_for(mp->pool, nv, 4096, positions_chunk, &c);
}

/* Kinetic, elastic and external energies and momenta of the records V at t
 * (xt: their positions at t; dv and de: the velocity corrections to
 * t and the potential energy beyond V(xt) of the represented motion,
 * avi_engine_owed_velocity, for the synchronized kinetic and total
 * energies; dv NULL: those two are NaN, the rest the same bits); contact
 * terms and counts are the caller's. */
static void observe_records(const avi_model *m, avi_model_pass *mp, const avi_vertex *V, const double (*dv)[3],
                            double de, double t, double (*xt)[3], avi_observation *o)
{
    double ke = 0.0, ke_mid = 0.0, P[3] = {0, 0, 0}, L[3] = {0, 0, 0};
    for (size_t i = 0; i < m->nv; i++) {
        const avi_vertex *p = &V[i];
        if (p->inv_mass == 0.0) continue;
        double mass = m->mass[i], mv[3], r[3], vs[3], ms[3];
        v3_scale(mv, p->v, mass);
        ke_mid += 0.5 * v3_dot(mv, p->v);
        if (dv) { /* the same rounding as the mid-step sum: equal bits when dv = 0 */
            v3_add(vs, p->v, dv[i]);
            v3_scale(ms, vs, mass);
            ke += 0.5 * v3_dot(ms, vs);
        }
        v3_add(P, P, mv);
        v3_cross(r, xt[i], mv);
        v3_add(L, L, r);
    }
    /* Edge rotation DOFs: their fictitious kinetic energy 1/2 I_e phi_dot^2
     * (model.h, avi_model_add_shell_mesh); no momentum. */
    for (size_t i = m->nv; i < avi_model_record_count(m); i++)
        if (V[i].inv_mass != 0.0) {
            ke_mid += 0.5 * V[i].v[0] * V[i].v[0] / V[i].inv_mass;
            if (dv) {
                double w = V[i].v[0] + dv[i][0];
                ke += 0.5 * w * w / V[i].inv_mass;
            }
        }
    double ext, elastic;
    if (!avi_model_pass_ready(mp, 0)) { /* every energy on the pool, summed as below */
        pass_ctx c = {mp, (const double (*)[3])xt, kinds_with(-1), NULL, 0, 0};
        avi_pool_for(mp->pool, mp->inc.np, PASS_GRAIN, pass_chunk, &c);
        ext = pot_sum(mp, kinds_with(0));
        elastic = pot_sum(mp, kinds_with(1));
    } else {
        ext = external_energy(m, (const double (*)[3])xt);
        elastic = avi_model_elastic_energy(m, (const double (*)[3])xt);
    }
    o->kinetic = dv ? ke : NAN;
    o->kinetic_midstep = ke_mid;
    o->elastic = elastic;
    o->external = ext;
    o->total = dv ? o->kinetic + o->elastic + o->contact + o->external + de : NAN;
    o->total_midstep = o->kinetic_midstep + o->elastic + o->contact + o->external;
    v3_copy(o->linear_momentum, P);
    v3_copy(o->angular_momentum, L);
}

/* The parts of an observation only the engine's thread can read: contact
 * (stencils change as the run goes) and event counts. */
static void observe_engine_side(const avi_engine *e, double t, avi_observation *o)
{
    memset(o, 0, sizeof *o);
    o->time = t;
    o->min_contact_distance = INFINITY;
    if (e->contact)
        e->model->contact_ops->observe(e->contact, t, &o->contact, &o->active_contact_potentials, &o->min_contact_distance,
                                       &o->friction_work);
    else if (e->stepper->contact_observe)
        e->stepper->contact_observe(e, t, &o->min_contact_distance, &o->friction_work);
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        o->events[k] = e->events[k];
        o->events_total += e->events[k];
    }
}

void avi_engine_observe(const avi_engine *e, double t, avi_observation *o)
{
    const avi_model *m = e->model;
    observe_engine_side(e, t, o);
    size_t n = avi_model_record_count(m) ? avi_model_record_count(m) : 1;
    double (*xt)[3] = malloc(n * sizeof *xt), (*dv)[3] = malloc(n * sizeof *dv);
    if (!xt || !dv) {
        o->total = o->total_midstep = NAN;
    } else {
        positions_at(m->vert, avi_model_record_count(m), t, xt);
        double de;
        (void)avi_engine_owed_velocity(e, t, (const double (*)[3])xt, dv, &de); /* NaN when out of memory */
        observe_records(m, NULL, m->vert, (const double (*)[3])dv, de, t, xt, o);
    }
    free(xt);
    free(dv);
}

struct avi_snapshot {
    const avi_model *model;
    avi_vertex *vert;   /* copy of the vertex records */
    double (*xt)[3];    /* scratch: positions at the snapshot's time */
    double (*dv)[3];    /* the contact impulses owed, then the velocity corrections (avi_owed_take, _apply) */
    avi_owed owed;      /* the clocks at the snapshot's time */
    double de;          /* the represented motion's potential energy beyond V(xt) */
    int applied;        /* dv holds the corrections (observed once already) */
    int plain;          /* not synchronized (avi_snapshot_set_synchronized) */
    int observed;       /* obs holds the observation */
    avi_observation obs;
    avi_observation engine_side;
    avi_model_pass *pass; /* the observation's pool and scratch (avi_snapshot_set_pass); NULL: serial */
};

avi_snapshot *avi_snapshot_create(const avi_model *m)
{
    avi_snapshot *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    size_t n = avi_model_record_count(m) ? avi_model_record_count(m) : 1;
    s->model = m;
    s->vert = aligned_alloc(64, ((n * sizeof *s->vert + 63) / 64) * 64);
    s->xt = malloc(n * sizeof *s->xt);
    s->dv = malloc(n * sizeof *s->dv);
    if (!s->vert || !s->xt || !s->dv) {
        avi_snapshot_destroy(s);
        return NULL;
    }
    return s;
}

void avi_snapshot_destroy(avi_snapshot *s)
{
    if (!s) return;
    free(s->vert);
    free(s->xt);
    free(s->dv);
    avi_owed_free(&s->owed);
    free(s);
}

void avi_engine_snapshot(const avi_engine *e, double t, avi_snapshot *s)
{
    observe_engine_side(e, t, &s->engine_side);
    memcpy(s->vert, e->model->vert, avi_model_record_count(e->model) * sizeof *s->vert);
    /* The clocks and the contact potentials' share need the queue and the
     * manager, which only the engine's thread may read; the elastic
     * gradients wait for avi_snapshot_observe. xt is scratch until then. */
    s->applied = 0;
    s->observed = 0;
    if (s->plain) return;
    positions_at(s->vert, avi_model_record_count(e->model), t, s->xt);
    (void)avi_owed_take(e, t, (const double (*)[3])s->xt, &s->owed, s->dv); /* NaN when out of memory */
}

double avi_snapshot_time(const avi_snapshot *s) { return s->engine_side.time; }
uint64_t avi_snapshot_events_total(const avi_snapshot *s) { return s->engine_side.events_total; }

void avi_snapshot_set_pass(avi_snapshot *s, avi_model_pass *mp) { s->pass = mp; }

void avi_snapshot_set_synchronized(avi_snapshot *s, int on) { s->plain = !on; }

/* The observation, on mp's pool (NULL: this thread alone), kept: a second
 * call returns it (the same bits as a recomputation). */
static void snapshot_observe(avi_snapshot *s, avi_model_pass *mp)
{
    if (s->observed) return;
    avi_observation *o = &s->obs;
    *o = s->engine_side;
    if (s->plain) {
        positions_at_pass(mp, s->vert, avi_model_record_count(s->model), o->time, s->xt);
        observe_records(s->model, mp, s->vert, NULL, 0.0, o->time, s->xt, o);
        s->observed = 1;
        return;
    }
    if (!s->applied) {
        positions_at_pass(mp, s->vert, avi_model_record_count(s->model), o->time, s->xt);
        avi_owed_apply(s->model, mp, s->vert, &s->owed, o->time, (const double (*)[3])s->xt, s->dv, &s->de);
        s->applied = 1;
    }
    observe_records(s->model, mp, s->vert, (const double (*)[3])s->dv, s->de, o->time, s->xt, o);
    s->observed = 1;
}

void avi_snapshot_observe(avi_snapshot *s, avi_observation *o)
{
    snapshot_observe(s, s->pass);
    *o = s->obs;
}

void avi_snapshot_prepare(avi_snapshot *s) { snapshot_observe(s, NULL); }

void avi_snapshot_state(const avi_snapshot *s, double *x, double *v)
{
    records_state(s->vert, s->model->nv, s->engine_side.time, x, v);
}

void avi_snapshot_describe_largest_energy(avi_snapshot *s, char *buf, size_t len)
{
    positions_at(s->vert, avi_model_record_count(s->model), s->engine_side.time, s->xt);
    describe_largest_energy(s->model, (const double (*)[3])s->xt, buf, len);
}
