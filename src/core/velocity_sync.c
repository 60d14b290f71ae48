/* Velocities synchronized to an observation time, for the energy
 * observable (docs/energy_observable.md).
 *
 * Between its events a potential P of step dt_P leaves the velocities at
 * the leapfrog's mid-step value v(t_P + dt_P / 2), t_P its last event. The
 * velocity at an observation at t is, to second order, that value plus the
 * part of P's next impulse that belongs to (t_P + dt_P / 2, t]:
 *   v(t) = v - w_P M^-1 grad V_P(x(t)),  w_P = t - t_P - dt_P / 2,
 * summed over every potential (avi_owed_weight). With one clock this is the
 * velocity-Verlet velocity at the event times and its linear interpolation
 * between them. Then each clock's amplitude terms (u_P = w_P / dt_P) lift
 * that state onto the motion the leapfrog represents: the velocity by
 * (u_P^2 dt_P^2 / 2) M^-1 H_P v, the potential energy by
 * grad V . M^-1 (1/4 - u_P^2) dt_P^2 / 2 grad V_P and an odd dt_P^3 term,
 * which makes the energy constant to fourth order on a harmonic mode. The
 * trajectory is untouched: only observers use it. */
#include "core/engine_internal.h"
#include "core/incidence.h"
#include "core/refine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* The per-potential work below is specialised per kind (the kinds table,
 * core/kinds.h: a constant kind folds every switch to that kind's code)
 * and keeps the sweep's pointers and sums in locals, which the compiler
 * otherwise reloads and stores after every scattered store; the
 * arithmetic and its order are those of the plain loops. */
#define SYNC_INLINE static inline __attribute__((always_inline))

/* What one pass over the clocks reads and writes (avi_owed_apply). */
typedef struct {
    const avi_model *m;
    const avi_vertex *V;
    const double (*xt)[3];
    double (*imp)[3];  /* pass 1: sums w_P grad V_P; pass 2: reads dv = -M^-1 of that */
    double (*gsum)[3]; /* pass 1: sums grad V_P over the clocks that ticked */
    double (*acc)[3];  /* pass 1: sums c_P grad V_P (M dx); pass 2: k_P H_P v (M dv') */
    double cross;      /* pass 2: the odd h^3 energy term */
    int pass;
} sweep;

/* Pass 1 of potential i of a kind, w its owed weight, u its phase in its
 * step (w / h, or -1/2 before its first kick), h its step (0: no
 * correction): the owed impulse, and its gradient into gsum and acc. */
SYNC_INLINE void owe_kind(sweep *s, const unsigned kind, uint32_t i, double w, double u, double h)
{
    if (w == 0.0 && h == 0.0) return;
    const void *rec = avi_kind_record(s->m, kind, i);
    const uint32_t *v = avi_kind_stencil(kind, rec);
    const int n = avi_kind_slots(kind);
    const double (*xt)[3] = s->xt;
    double (*restrict imp)[3] = s->imp, (*restrict gsum)[3] = s->gsum, (*restrict acc)[3] = s->acc;
    double x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
    for (int a = 0; a < n; a++) v3_copy(x[a], xt[v[a]]);
    avi_kind_gradient(kind, rec, (const double (*)[3])x, g);
    double c = 0.5 * (0.25 - u * u) * h * h;
    for (int a = 0; a < n; a++)
        for (int k = 0; k < 3; k++) {
            if (w != 0.0) imp[v[a]][k] += w * g[a][k];
            if (h > 0.0) {
                gsum[v[a]][k] += g[a][k];
                acc[v[a]][k] += c * g[a][k];
            }
        }
}

/* Relative size of the finite-difference step: the cube root of the
 * rounding unit balances truncation (step^2) against round-off. */
#define HV_STEP 6e-6

/* grad V_P at xt +- eps v (v: the stored velocities plus the owed
 * impulses imp), for the central difference H_P v = (gp - gm) / (2 eps);
 * eps is HV_STEP times the stencil's size over its speed. Returns eps, 0
 * when the stencil does not move or has no size (H_P v is then taken as 0). */
SYNC_INLINE double velocity_difference(const avi_model *m, const avi_vertex *V, const double (*xt)[3],
                                       const double (*imp)[3], unsigned kind, const void *rec, double gp[][3],
                                       double gm[][3])
{
    const uint32_t *v = avi_kind_stencil(kind, rec);
    const int n = avi_kind_slots(kind);
    const uint32_t nv = m->nv;
    double x[AVI_STENCIL_MAX][3], vs[AVI_STENCIL_MAX][3], xp[AVI_STENCIL_MAX][3], xm[AVI_STENCIL_MAX][3];
    double size = 0.0, speed = 0.0;
    for (int a = 0; a < n; a++) {
        v3_copy(x[a], xt[v[a]]);
        v3_add(vs[a], V[v[a]].v, imp[v[a]]);
        if (v[a] >= nv) continue; /* an edge DOF or ghost: not a place, no size */
        speed = fmax(speed, v3_norm(vs[a]));
        double d[3];
        v3_sub(d, x[a], x[0]);
        size = fmax(size, v3_norm(d));
    }
    if (!(speed > 0.0 && size > 0.0)) return 0.0;
    double eps = HV_STEP * size / speed;
    for (int a = 0; a < n; a++)
        for (int k = 0; k < 3; k++) {
            xp[a][k] = x[a][k] + eps * vs[a][k];
            xm[a][k] = x[a][k] - eps * vs[a][k];
        }
    avi_kind_gradient(kind, rec, (const double (*)[3])xp, gp);
    avi_kind_gradient(kind, rec, (const double (*)[3])xm, gm);
    return eps;
}

/* Pass 2 of potential i of a kind: hv = H_P v (v: the synchronized
 * velocities at t) by a central difference of grad V_P along v, its
 * position step HV_STEP times the stencil's size; then the velocity and
 * cross terms. */
SYNC_INLINE void hessian_kind(sweep *s, const unsigned kind, uint32_t i, double w, double u, double h)
{
    if (h == 0.0 || (avi_kind_flags(kind) & AVI_KIND_LINEAR)) return; /* H = 0 */
    const void *rec = avi_kind_record(s->m, kind, i);
    const uint32_t *v = avi_kind_stencil(kind, rec);
    const int n = avi_kind_slots(kind);
    const double (*gsum)[3] = s->gsum;
    const avi_vertex *V = s->V;
    double (*restrict acc)[3] = s->acc;
    double gp[AVI_STENCIL_MAX][3], gm[AVI_STENCIL_MAX][3];
    double eps = velocity_difference(s->m, V, s->xt, s->imp, kind, rec, gp, gm);
    if (eps == 0.0) return;
    double kv = 0.5 * u * u * h * h, kc = -u * (0.25 - u * u) * h * h * h, cross = s->cross;
    for (int a = 0; a < n; a++) {
        double im = V[v[a]].inv_mass;
        for (int k = 0; k < 3; k++) {
            double hv = (gp[a][k] - gm[a][k]) / (2.0 * eps);
            acc[v[a]][k] += kv * hv;
            cross += kc * im * gsum[v[a]][k] * hv;
        }
    }
    s->cross = cross;
}

/* Potential i of any kind: its kind's own copy of the pass. */
static void owe_one(sweep *s, unsigned kind, uint32_t i, double w, double u, double h)
{
#define OWE_CASE(K, ...) case K: owe_kind(s, K, i, w, u, h); break;
    switch (kind) { AVI_POTENTIAL_KINDS(OWE_CASE) default: break; }
#undef OWE_CASE
}
static void hessian_one(sweep *s, unsigned kind, uint32_t i, double w, double u, double h)
{
#define HESSIAN_CASE(K, ...) case K: hessian_kind(s, K, i, w, u, h); break;
    switch (kind) { AVI_POTENTIAL_KINDS(HESSIAN_CASE) default: break; }
#undef HESSIAN_CASE
}

/* One potential's clock, next due at t_next after n kicks, step dt, seen
 * at t: its owed weight, its phase u in [-1/2, 1/2] and the step that
 * scales its amplitude terms (0: none). Before its first kick (n = 0, at
 * t0) it owes nothing, and the initial state is an event-time state. */
typedef struct {
    double w, u, h;
} share;
static share clock_share(double t, double t_next, uint32_t n, double dt)
{
    share c = {avi_owed_weight(t, t_next, n, dt), -0.5, dt};
    if (n > 0 && dt > 0.0) c.u = c.w / dt;
    return c;
}

/* Runs one pass over every clock: a synchronous integrator's one clock for
 * every potential, or the AVI's queue (contact clocks excepted: their
 * share is avi_owed_take's). */
static void sweep_clocks(sweep *s, const avi_owed *o, double t)
{
    void (*one)(sweep *, unsigned, uint32_t, double, double, double) = s->pass == 1 ? owe_one : hessian_one;
    if (o->sync_h > 0.0) {
        share c = clock_share(t, o->sync_t, o->sync_n, o->sync_h);
        for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
            size_t np = avi_model_potential_count(s->m, (avi_kind)k);
            for (size_t i = 0; i < np; i++) one(s, k, (uint32_t)i, c.w, c.u, c.h);
        }
    }
    for (size_t k = 0; k < o->nev; k++) {
        unsigned kind = o->ev[k].id >> AVI_ID_KIND_SHIFT;
        uint32_t i = o->ev[k].id & AVI_ID_INDEX_MASK;
        if (kind == AVI_KIND_CONTACT) continue;
        double dt = avi_kind_dt(kind, avi_kind_record(s->m, kind, i));
        if (o->level && o->level[k]) dt = ldexp(dt, -(int)o->level[k]); /* a refined clock */
        share c = clock_share(t, o->ev[k].t, o->ev[k].n, dt);
        one(s, kind, i, c.w, c.u, c.h);
    }
}

/* The two passes on a pool (core/incidence.h), the same bits: each clock's
 * gradients go into rows of their own on any worker, then each record adds
 * them in the sweep's order (its entries sorted by their clock's position
 * in the sweep, rank), as sweep_clocks would; the odd energy term is terms
 * into rows, added in the sweep's order by one thread. Clocks go in blocks
 * of mp->block (AVI_PASS_BLOCK), so that the rows stay small; a record's
 * entries of a block follow each other in its sorted list (a cursor per
 * record). */
typedef struct {
    avi_model_pass *mp;
    const avi_owed *o;
    sweep *s;
    double t;
    size_t nsync; /* items [0, nsync): every potential on the synchronous clock; then the queue */
    size_t j0, j1;        /* the block of items */
    size_t base, row_end; /* its sweep rows: [base, row_end) */
    int last;      /* the last block */
} owed_ctx;

/* Item j of the sweep: its kind and index; 0: none (contact). */
static inline int owed_item(const owed_ctx *c, size_t j, unsigned *kind, uint32_t *i)
{
    if (j < c->nsync) {
        const size_t *off = c->mp->inc.off;
        unsigned k = 0;
        while (j >= off[k + 1]) k++;
        *kind = k;
        *i = (uint32_t)(j - off[k]);
        return 1;
    }
    j -= c->nsync;
    *kind = c->o->ev[j].id >> AVI_ID_KIND_SHIFT;
    *i = c->o->ev[j].id & AVI_ID_INDEX_MASK;
    return *kind != AVI_KIND_CONTACT;
}

/* Per-potential weights in mp->coef (AVI_PASS_COEF each): owed weight,
 * step, phase (owe_kind's and hessian_kind's coefficients are recomputed
 * from them by the same expressions). */
enum { CF_W, CF_H, CF_U };

/* The shares of items [b, e) into coef, and the rank of those that owe. */
static void owed_share_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const owed_ctx *c = ctx;
    const avi_owed *o = c->o;
    avi_model_pass *mp = c->mp;
    for (size_t j = b; j < e; j++) {
        unsigned kind;
        uint32_t i;
        if (!owed_item(c, j, &kind, &i)) continue;
        share sh;
        if (j < c->nsync) {
            sh = clock_share(c->t, o->sync_t, o->sync_n, o->sync_h);
        } else {
            size_t q = j - c->nsync;
            double dt = avi_kind_dt(kind, avi_kind_record(mp->m, kind, i));
            if (o->level && o->level[q]) dt = ldexp(dt, -(int)o->level[q]); /* a refined clock */
            sh = clock_share(c->t, o->ev[q].t, o->ev[q].n, dt);
        }
        size_t p = mp->inc.off[kind] + i;
        double *cf = mp->coef + AVI_PASS_COEF * p;
        cf[CF_W] = sh.w;
        cf[CF_H] = sh.h;
        cf[CF_U] = sh.u;
        if (!(sh.w == 0.0 && sh.h == 0.0)) mp->rank[p] = (uint32_t)j; /* owe_kind's early return */
    }
}

/* Each record's entries of clocks in the sweep, in the sweep's order: by
 * sweep row (the clock's rank, then the slot; insertion sort, lists are
 * short), each as (potential, sweep row) into mp->order. */
static void owed_sort_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const owed_ctx *c = ctx;
    avi_model_pass *mp = c->mp;
    const avi_incidence *inc = &mp->inc;
    const uint32_t *rank = mp->rank, *item_row = mp->item_row;
    for (size_t r = b; r < e; r++) {
        avi_incidence_entry *ord = mp->order + inc->start[r];
        uint32_t n = 0;
        for (size_t q = inc->start[r]; q < inc->start[r + 1]; q++) {
            avi_incidence_entry en = inc->entry[q];
            uint32_t k = rank[en.p];
            if (k == AVI_PASS_NONE) continue;
            en.row = item_row[k] + (uint32_t)(en.row - avi_incidence_first_row(inc, en.p)); /* + the slot */
            uint32_t a = n++;
            for (; a > 0 && ord[a - 1].row > en.row; a--) ord[a] = ord[a - 1];
            ord[a] = en;
        }
        mp->count[r] = n;
        mp->cursor[r] = 0;
    }
}

/* The sweep's rows: item j's first at mp->item_row[j] (nitems + 1 of them,
 * the last the total). -1 when out of memory. */
static int sweep_rows(owed_ctx *c, size_t nitems)
{
    avi_model_pass *mp = c->mp;
    if (nitems + 1 > mp->item_cap) {
        free(mp->item_row);
        mp->item_cap = 0;
        if (!(mp->item_row = malloc((nitems + 1) * sizeof *mp->item_row))) return -1;
        mp->item_cap = nitems + 1;
    }
    size_t n = 0;
    for (size_t j = 0; j < nitems; j++) {
        unsigned kind;
        uint32_t i;
        mp->item_row[j] = (uint32_t)n;
        if (owed_item(c, j, &kind, &i)) n += (size_t)avi_kind_slots(kind);
        if (n >= UINT32_MAX) return -1;
    }
    mp->item_row[nitems] = (uint32_t)n;
    return 0;
}

/* Items [j0, j1) as the block. */
static void block_at(owed_ctx *c, size_t j0, size_t j1)
{
    c->j0 = j0;
    c->j1 = j1;
    c->base = c->mp->item_row[j0];
    c->row_end = c->mp->item_row[j1];
}

/* Pass 1 of item j: owe_kind's gradient into its rows. */
SYNC_INLINE void owe_rows_kind(const owed_ctx *c, const unsigned kind, uint32_t i, size_t j)
{
    avi_model_pass *mp = c->mp;
    if (mp->rank[mp->inc.off[kind] + i] == AVI_PASS_NONE) return;
    const int n = avi_kind_slots(kind);
    const void *rec = avi_kind_record(mp->m, kind, i);
    const uint32_t *v = avi_kind_stencil(kind, rec);
    double x[AVI_STENCIL_MAX][3];
    for (int a = 0; a < n; a++) v3_copy(x[a], c->s->xt[v[a]]);
    avi_kind_gradient(kind, rec, (const double (*)[3])x, mp->rows + (mp->item_row[j] - c->base));
}

/* Pass 2 of item j: hessian_kind's H_P v into rows2 and its cross terms into
 * rows; skip[p] when it adds nothing. */
SYNC_INLINE void hessian_rows_kind(const owed_ctx *c, const unsigned kind, uint32_t i, size_t j)
{
    avi_model_pass *mp = c->mp;
    size_t p = mp->inc.off[kind] + i;
    mp->skip[p] = 1;
    const double *cf = mp->coef + AVI_PASS_COEF * p;
    double u = cf[CF_U], h = cf[CF_H];
    if (mp->rank[p] == AVI_PASS_NONE) return; /* h = 0 too */
    if (h == 0.0 || (avi_kind_flags(kind) & AVI_KIND_LINEAR)) return; /* H = 0 */
    const sweep *s = c->s;
    const void *rec = avi_kind_record(s->m, kind, i);
    const uint32_t *v = avi_kind_stencil(kind, rec);
    const int n = avi_kind_slots(kind);
    const double (*gsum)[3] = (const double (*)[3])s->gsum;
    const avi_vertex *V = s->V;
    double gp[AVI_STENCIL_MAX][3], gm[AVI_STENCIL_MAX][3];
    double eps = velocity_difference(s->m, V, s->xt, (const double (*)[3])s->imp, kind, rec, gp, gm);
    if (eps == 0.0) return;
    double kc = -u * (0.25 - u * u) * h * h * h;
    size_t row = mp->item_row[j] - c->base;
    for (int a = 0; a < n; a++) {
        double im = V[v[a]].inv_mass;
        for (int k = 0; k < 3; k++) {
            double hv = (gp[a][k] - gm[a][k]) / (2.0 * eps);
            mp->rows2[row + (size_t)a][k] = hv;
            mp->rows[row + (size_t)a][k] = kc * im * gsum[v[a]][k] * hv;
        }
    }
    mp->skip[p] = 0;
}

static void owed_rows_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const owed_ctx *c = ctx;
    for (size_t j = c->j0 + b; j < c->j0 + e; j++) {
        unsigned kind;
        uint32_t i;
        if (!owed_item(c, j, &kind, &i)) continue;
        if (c->s->pass == 1) {
#define OWE_ROWS_CASE(K, ...) case K: owe_rows_kind(c, K, i, j); break;
            switch (kind) { AVI_POTENTIAL_KINDS(OWE_ROWS_CASE) default: break; }
#undef OWE_ROWS_CASE
        } else {
#define HESSIAN_ROWS_CASE(K, ...) case K: hessian_rows_kind(c, K, i, j); break;
            switch (kind) { AVI_POTENTIAL_KINDS(HESSIAN_ROWS_CASE) default: break; }
#undef HESSIAN_ROWS_CASE
        }
    }
}

/* Pass 1's sums of records [b, e), the block's entries. */
static void owed_gather1_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const owed_ctx *c = ctx;
    avi_model_pass *mp = c->mp;
    const double (*rows)[3] = (const double (*)[3])mp->rows;
    double (*imp)[3] = c->s->imp, (*gsum)[3] = c->s->gsum, (*acc)[3] = c->s->acc;
    for (size_t r = b; r < e; r++) {
        const avi_incidence_entry *ord = mp->order + mp->inc.start[r];
        uint32_t q = mp->cursor[r];
        for (; q < mp->count[r] && ord[q].row < c->row_end; q++) {
            const double *cf = mp->coef + AVI_PASS_COEF * (size_t)ord[q].p, *g = rows[ord[q].row - c->base];
            double w = cf[CF_W], h = cf[CF_H], u = cf[CF_U];
            double cc = 0.5 * (0.25 - u * u) * h * h; /* owe_kind's c */
            for (int k = 0; k < 3; k++) {
                if (w != 0.0) imp[r][k] += w * g[k];
                if (h > 0.0) {
                    gsum[r][k] += g[k];
                    acc[r][k] += cc * g[k];
                }
            }
        }
        mp->cursor[r] = c->last ? 0 : q; /* pass 2 starts over */
    }
}

/* Pass 2's sums of records [b, e) (acc zeroed), the block's entries; after
 * the last block, dv += M^-1 acc. */
static void owed_gather2_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const owed_ctx *c = ctx;
    avi_model_pass *mp = c->mp;
    const double (*rows2)[3] = (const double (*)[3])mp->rows2;
    double (*imp)[3] = c->s->imp, (*acc)[3] = c->s->acc;
    for (size_t r = b; r < e; r++) {
        const avi_incidence_entry *ord = mp->order + mp->inc.start[r];
        uint32_t q = mp->cursor[r];
        for (; q < mp->count[r] && ord[q].row < c->row_end; q++) {
            if (mp->skip[ord[q].p]) continue;
            const double *cf = mp->coef + AVI_PASS_COEF * (size_t)ord[q].p, *hv = rows2[ord[q].row - c->base];
            double u = cf[CF_U], h = cf[CF_H];
            double kv = 0.5 * u * u * h * h; /* hessian_kind's */
            for (int k = 0; k < 3; k++) acc[r][k] += kv * hv[k];
        }
        mp->cursor[r] = c->last ? 0 : q;
        if (c->last)
            for (int k = 0; k < 3; k++) imp[r][k] += c->s->V[r].inv_mass * acc[r][k];
    }
}

/* The odd term's sum over the block, one thread, in the sweep's order. */
static double owed_cross(const owed_ctx *c, double cross)
{
    const avi_model_pass *mp = c->mp;
    for (size_t j = c->j0; j < c->j1; j++) {
        unsigned kind;
        uint32_t i;
        if (!owed_item(c, j, &kind, &i)) continue;
        if (mp->skip[mp->inc.off[kind] + i]) continue;
        int n = avi_kind_slots(kind);
        const double (*t)[3] = (const double (*)[3])mp->rows + (mp->item_row[j] - c->base);
        for (int a = 0; a < n; a++)
            for (int k = 0; k < 3; k++) cross += t[a][k];
    }
    return cross;
}

/* A pass over the items block by block: each block's rows on the pool,
 * then each of the nv records' gather (pass 1 or 2); with `cross`, the odd term
 * summed block after block in the sweep's order. At least one block, so
 * that the last gather runs with no item. */
static void owed_blocks(owed_ctx *c, size_t nitems, size_t nv, avi_pool_fn gather, double *cross)
{
    avi_model_pass *mp = c->mp;
    for (size_t j0 = 0; j0 < nitems || j0 == 0; j0 += mp->block) {
        size_t j1 = nitems - j0 > mp->block ? j0 + mp->block : nitems;
        block_at(c, j0, j1);
        c->last = j1 == nitems;
        avi_pool_for(mp->pool, j1 - j0, 64, owed_rows_chunk, c);
        avi_pool_for(mp->pool, nv, 256, gather, c);
        if (cross) *cross = owed_cross(c, *cross);
        if (c->last) break;
    }
}


/* avi_owed_apply's passes on mp's pool; -1: not possible here (serial). */
static int apply_on_pool(avi_model_pass *mp, const avi_owed *o, sweep *s, double t, size_t nv, double *de)
{
    if (avi_model_pass_ready(mp, 1)) return -1;
    size_t nsync = o->sync_h > 0.0 ? mp->inc.np : 0, nitems = nsync + o->nev;
    if (nsync && o->nev) return -1; /* a potential on two clocks: not a sweep of one rank each */
    if (nitems >= AVI_PASS_NONE) return -1;
    owed_ctx c = {mp, o, s, t, nsync, 0, 0, 0, 0, 0};
    if (sweep_rows(&c, nitems)) return -1;
    size_t most = 0; /* the rows of the largest block, held before anything is summed */
    for (size_t j0 = 0; j0 < nitems; j0 += mp->block) {
        block_at(&c, j0, nitems - j0 > mp->block ? j0 + mp->block : nitems);
        most = c.row_end - c.base > most ? c.row_end - c.base : most;
    }
    if (avi_model_pass_rows(mp, most, 1)) return -1;
    memset(mp->rank, 0xff, mp->inc.np * sizeof *mp->rank);
    avi_pool_for(mp->pool, nitems, 256, owed_share_chunk, &c);
    avi_pool_for(mp->pool, nv, 256, owed_sort_chunk, &c);
    owed_blocks(&c, nitems, nv, owed_gather1_chunk, NULL);
    double de_pos = 0.0;
    for (size_t i = 0; i < nv; i++) {
        double q = s->V[i].inv_mass;
        for (int k = 0; k < 3; k++) {
            s->imp[i][k] *= -q;
            de_pos += q * s->gsum[i][k] * s->acc[i][k];
        }
    }
    memset(s->acc, 0, nv * sizeof *s->acc);
    s->pass = 2;
    double cross = 0.0;
    owed_blocks(&c, nitems, nv, owed_gather2_chunk, &cross);
    *de = de_pos + cross;
    return 0;
}

/* Clocks on refined steps (core/refine.h) run at dt_0 / 2^level; the level
 * lives on the engine's thread, so it is read here, into o->level. */
static void take_levels(const avi_engine *e, avi_owed *o)
{
    for (size_t k = 0; k < o->nev; k++) o->level[k] = (uint8_t)avi_refine_level(e->refine, o->ev[k].id);
}

int avi_owed_take(const avi_engine *e, double t, const double (*xt)[3], avi_owed *o, double (*imp)[3])
{
    const avi_model *m = e->model;
    memset(imp, 0, avi_model_record_count(m) * sizeof *imp);
    o->nev = 0;
    o->failed = 0;
    o->sync_t = o->sync_h = 0.0;
    o->sync_n = 0;
    if (e->stepper->owed_clock) {
        /* One clock for every potential (no contact: refused by sync). */
        e->stepper->owed_clock(e, &o->sync_t, &o->sync_n, &o->sync_h);
        return 0;
    }
    size_t nq = avi_engine_queue_size(e);
    if (nq > o->cap) {
        avi_event *ev = realloc(o->ev, nq * sizeof *ev);
        if (ev) o->ev = ev;
        uint8_t *level = ev ? realloc(o->level, nq) : NULL;
        if (!level) return -(o->failed = 1);
        o->level = level;
        o->cap = nq;
    }
    if (nq && !(o->nev = avi_engine_queue_collect(e, o->ev))) return -(o->failed = 1);
    /* Contact clocks and stencils live in the manager: their share now. */
    for (size_t k = 0; k < o->nev; k++)
        if (o->ev[k].id >> AVI_ID_KIND_SHIFT == AVI_KIND_CONTACT)
            m->contact_ops->owe(e->contact, o->ev[k].id & AVI_ID_INDEX_MASK, o->ev[k].t, o->ev[k].n, t, xt, imp);
    if (e->refine) take_levels(e, o);
    else if (o->nev) memset(o->level, 0, o->nev);
    return 0;
}

void avi_owed_apply(const avi_model *m, avi_model_pass *mp, const avi_vertex *V, avi_owed *o, double t,
                    const double (*xt)[3], double (*imp)[3], double *de)
{
    size_t nv = avi_model_record_count(m); /* vertices and edge DOF records (1/m = 1/I_e) */
    *de = 0.0;
    if (!o->failed && o->work_n < nv) {
        double (*w)[3] = realloc(o->work, 2 * nv * sizeof *w);
        if (w) {
            o->work = w;
            o->work_n = nv;
        } else {
            o->failed = 1;
        }
    }
    if (o->failed) {
        for (size_t i = 0; i < nv; i++) imp[i][0] = imp[i][1] = imp[i][2] = NAN;
        *de = NAN;
        return;
    }
    sweep s = {m, V, xt, imp, o->work, o->work + nv, 0.0, 1};
    memset(o->work, 0, 2 * nv * sizeof *o->work);
    if (!apply_on_pool(mp, o, &s, t, nv, de)) return;
    sweep_clocks(&s, o, t);
    /* imp holds sum w grad V: dv = -M^-1 imp; the represented motion's
     * potential energy beyond V(xt) is grad V . M^-1 acc. */
    double de_pos = 0.0;
    for (size_t i = 0; i < nv; i++) {
        double q = V[i].inv_mass;
        for (int c = 0; c < 3; c++) {
            imp[i][c] *= -q;
            de_pos += q * s.gsum[i][c] * s.acc[i][c];
        }
    }
    /* Pass 2: H_P v at the synchronized velocities v = V.v + dv. */
    memset(s.acc, 0, nv * sizeof *s.acc);
    s.pass = 2;
    sweep_clocks(&s, o, t);
    for (size_t i = 0; i < nv; i++)
        for (int c = 0; c < 3; c++) imp[i][c] += V[i].inv_mass * s.acc[i][c];
    *de = de_pos + s.cross;
}

void avi_owed_free(avi_owed *o)
{
    free(o->ev);
    free(o->level);
    free(o->work);
    memset(o, 0, sizeof *o);
}

int avi_engine_owed_velocity(const avi_engine *e, double t, const double (*xt)[3], double (*dv)[3], double *de)
{
    avi_owed o = {0};
    int rc = avi_owed_take(e, t, xt, &o, dv);
    avi_owed_apply(e->model, NULL, e->model->vert, &o, t, xt, dv, de);
    avi_owed_free(&o);
    return rc;
}

/* The synchronized pair's cost per row is three gradients of every elastic
 * potential (avi_owed_apply's two passes); the run's, the clocks' events
 * between rows, one gradient each. Rows denser than the clocks (sphere-plate:
 * rows every 1 us, clocks 0.6-0.8 us) would spend most of the run there
 * (bench/README.md, "Cost of accuracy"), so the pair is written every N-th
 * row with N the smallest count for which its gradients are at most a
 * tenth of the events between two such rows, at most 100. Models of fewer
 * than AVI_SYNC_THIN_MIN elastic potentials keep every row: there the pair
 * costs little in absolute terms, less than a row's own writing (spring-chain,
 * 23 springs on 50 ms steps under rows every 1 ms, would get 100). It depends on the model's steps (not the
 * refined ones) and the row interval only, not on the end time: a run
 * extended by a resume has the rows of one run to the later end. */
#define AVI_SYNC_THIN_MIN 1000.0

long long avi_synchronized_every(const avi_engine *e, double row_interval)
{
    double h_sync = 0.0;
    if (e->stepper->owed_clock) {
        double t;
        uint32_t n;
        e->stepper->owed_clock(e, &t, &n, &h_sync);
        if (h_sync <= 0.0) return 1; /* integrators that owe nothing (their state is on the grid) */
    }
    double pots, per_row = avi_model_elastic_events(e->model, row_interval, h_sync, &pots);
    if (!(pots >= AVI_SYNC_THIN_MIN) || !(per_row > 0.0)) return 1;
    double n = ceil(3.0 * pots / (0.1 * per_row));
    return n < 1.0 ? 1 : n > 100.0 ? 100 : (long long)n;
}
