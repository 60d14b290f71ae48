/* Decomposition contact response (DCR) after Cirak and West 2005 (IJNME
 * 64:1078): the contact stage that follows each step of a synchronous
 * integrator, and with central differences the `dcr` integrator.
 *
 * The paper's scheme, restated from its abstract (the full text was not
 * available to this code; the per-stencil jump below is its reading of
 * "closed-form jumps by decomposition"): each step is a predictor of the
 * unconstrained dynamics (central differences with the internal forces),
 * followed by two independent corrections of the predicted state:
 *  1. impenetrability: penetrating points are moved back onto the admissible
 *     set by a closest-point projection;
 *  2. momentum exchange: the velocity jumps of the impact, which the paper
 *     solves in closed form by decomposing the impact into contacts that
 *     each exchange momentum along their normal.
 * The paper measures penetration by signed intersection volumes and has
 * slave nodes and master faces; here a contact is one of the engine's
 * stencils (vertex-face or edge-edge, src/contact) and its closest-point
 * pair (distance_primitives.h): w = sum_k c_k x_k with sum_k c_k = 0 and
 * |w| = d, unit normal u = w / d.
 *
 * Admissible set: every stencil at least delta = contact.thickness apart, on
 * the side it was on at the step's start (the normal n = +-u whose sign
 * agrees with u at the start; a flipped sign is a crossing, gap -d). For a
 * stencil with gap g = n . w < delta:
 *   projection:   x_k += lambda (c_k / m_k) n,  lambda = (delta - g) / S,
 *                 S = sum_k c_k^2 / m_k,
 * the mass-weighted closest-point step that makes the linearized gap delta
 * and moves no centre of mass (sum_k m_k dx_k = lambda n sum_k c_k = 0);
 * repeated over the stencils (Gauss-Seidel passes) until every gap is
 * delta to a tolerance. Then, for each stencil so projected whose normal
 * relative velocity v_n = n . sum_k c_k v_k is closing (< 0),
 *   jump:         v_k += J (c_k / m_k) n,  J = -(1 + e) v_n / S,  e = 1,
 * which reverses v_n. Each jump conserves linear momentum (sum_k c_k = 0),
 * angular momentum (sum_k x_k x c_k n = w x n = 0, w parallel to n) and,
 * with e = 1, kinetic energy exactly:
 *   dK = J v_n + J^2 S / 2 = (v_n^2 / S) ((1 + e)^2 / 2 - (1 + e)) = 0.
 * The projection changes positions without a matching force, so elastic
 * energy is not conserved: that is DCR's energy error, measured in
 * bench/README.md. With contact.friction = mu > 0 (Coulomb, as in Cirak
 * and West 2005's frictional variant), each jump is followed by a
 * tangential one against the stencil's tangential relative velocity u_t
 * after the normal jump,
 *   v_k -= P (c_k / m_k) u_t / |u_t|,  P = min(|u_t| / S, mu J),
 * which stops the sliding when mu J suffices (stick) and never reverses
 * it; it conserves linear momentum (sum_k c_k = 0) and removes kinetic
 * energy P |u_t| - P^2 S / 2 >= 0, summed as friction_work. Angular
 * momentum changes by w x P (the stencil's gap w, at most delta).
 *
 * Checkpoints hold friction_work (avi_dcr_friction_work); candidates are
 * found anew each step from the positions at its start. */
#include "contact/broad_phase.h"
#include "contact/contact_manager.h"
#include "contact/distance_edge_edge.h"
#include "contact/distance_point_triangle.h"
#include "sync/sync_internal.h"
#include "base/grow.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DCR_PASSES 100        /* Gauss-Seidel passes of projection and jumps */
#define DCR_GAP_TOL 1e-3      /* projection done when every gap >= (1 - tol) delta */
#define DCR_LIST_REACH 4.0    /* candidate list radius, in delta */

typedef struct {
    uint8_t type;     /* AVI_STENCIL_VF or AVI_STENCIL_EE */
    uint8_t active;   /* projected in this step */
    uint8_t oriented; /* n0 known (the stencil did not touch at the start) */
    uint32_t v[4];
    double n0[3];     /* the normal's orientation at the step's start */
} dcr_pair;

struct avi_dcr {
    avi_contact_surface surf;
    double delta, cell;
    double mu;            /* contact.friction */
    double friction_work; /* kinetic energy friction jumps have removed */
    double (*x0)[3]; /* positions at the step's start */
    /* Candidates within DCR_LIST_REACH delta of each other at the positions
     * xb (a Verlet list, in canonical order: cmp_pair), kept
     * while no vertex has moved far enough from xb to bring an unlisted
     * stencil within reach of a step. The pairs a step acts on, and the
     * order it acts on them in, do not depend on when the list was built. */
    dcr_pair *pair;
    size_t npair, cap_pair;
    double (*xb)[3];
    int listed;
    avi_broad_phase bp;
};

void avi_dcr_destroy(struct avi_dcr *d)
{
    if (!d) return;
    avi_contact_surface_free(&d->surf);
    free(d->x0);
    free(d->xb);
    free(d->pair);
    avi_broad_phase_free(&d->bp);
    free(d);
}

struct avi_dcr *avi_dcr_create(const avi_model *m)
{
    struct avi_dcr *d = calloc(1, sizeof *d);
    if (!d) return NULL;
    d->x0 = malloc((m->nv ? m->nv : 1) * sizeof *d->x0);
    d->xb = malloc((m->nv ? m->nv : 1) * sizeof *d->xb);
    if (!d->x0 || !d->xb || avi_contact_surface_init(&d->surf, m)) {
        avi_dcr_destroy(d);
        return NULL;
    }
    d->delta = m->contact.thickness;
    d->mu = m->contact.friction;
    d->cell = d->surf.mean_edge;
    return d;
}

/* The closest-point pair of stencil x, oriented from the second primitive
 * (the face, edge b) to the first (the point, edge a): the distance
 * functions orient an edge-edge pair from whichever endpoint they chose, and
 * where two choices tie (a symmetric mesh) rounding would flip it. */
static void stencil_pair(uint8_t type, const double x[4][3], avi_dist_pair *q)
{
    if (type == AVI_STENCIL_VF) avi_pt_pair(x, q);
    else avi_ee_pair(x, q);
    double side = type == AVI_STENCIL_VF ? q->c[0] : q->c[0] + q->c[1];
    if (side < 0.0) {
        for (int a = 0; a < 4; a++) q->c[a] = -q->c[a];
        v3_scale(q->u, q->u, -1.0);
    }
}

/* The pair of stencil p at the vertex records' positions. */
static void pair_at(const avi_vertex *V, const dcr_pair *p, avi_dist_pair *q)
{
    double x[4][3];
    for (int a = 0; a < 4; a++) v3_copy(x[a], V[p->v[a]].x);
    stencil_pair(p->type, (const double (*)[3])x, q);
}

/* Signed gap of p against its start orientation, with the normal n. */
static double gap(const avi_vertex *V, const dcr_pair *p, avi_dist_pair *q, double n[3])
{
    pair_at(V, p, q);
    if (!(q->d > 0.0)) {
        v3_copy(n, p->n0);
        return 0.0;
    }
    double s = v3_dot(q->u, p->n0) < 0.0 ? -1.0 : 1.0;
    v3_scale(n, q->u, s);
    return s * q->d;
}

/* S = sum_k c_k^2 / m_k: the inverse effective mass of the contact. */
static double inv_mass(const avi_vertex *V, const dcr_pair *p, const avi_dist_pair *q)
{
    double S = 0.0;
    for (int a = 0; a < 4; a++) S += q->c[a] * q->c[a] * V[p->v[a]].inv_mass;
    return S;
}

/* The canonical order: type, then vertices. */
static int cmp_pair(const void *pa, const void *pb)
{
    const dcr_pair *a = pa, *b = pb;
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    for (int k = 0; k < 4; k++)
        if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
    return 0;
}

static int add_pair(struct avi_dcr *d, uint8_t type, const uint32_t v[4])
{
    if (AVI_GROW(d->pair, d->cap_pair, d->npair + 1, 256)) return -1;
    dcr_pair *p = &d->pair[d->npair++];
    memset(p, 0, sizeof *p);
    p->type = type;
    memcpy(p->v, v, sizeof p->v);
    return 0;
}

/* Candidate stencils within r at positions x (contact points' rows). */
static int find_pairs(struct avi_dcr *d, const double (*x)[3], double r)
{
    d->npair = 0;
    double cell = fmax(d->cell, 2.0 * r);
    long n = avi_broad_phase_vf(&d->bp, x, d->surf.points, d->surf.npoints, d->surf.tris, d->surf.ntris, r, cell);
    if (n < 0) return -1;
    for (long k = 0; k < n; k++) {
        const uint32_t *t = d->surf.tris[d->bp.out[k].b];
        uint32_t v[4] = {d->surf.points[d->bp.out[k].a], t[0], t[1], t[2]};
        if (add_pair(d, AVI_STENCIL_VF, v)) return -1;
    }
    n = avi_broad_phase_ee(&d->bp, x, (const uint32_t (*)[2])d->surf.edges, d->surf.nedges, r, cell);
    if (n < 0) return -1;
    for (long k = 0; k < n; k++) {
        const uint32_t *a = d->surf.edges[d->bp.out[k].a], *b = d->surf.edges[d->bp.out[k].b];
        uint32_t v[4] = {a[0], a[1], b[0], b[1]};
        if (add_pair(d, AVI_STENCIL_EE, v)) return -1;
    }
    if (d->npair > 1) qsort(d->pair, d->npair, sizeof *d->pair, cmp_pair);
    return 0;
}

/* Largest |x_a - y_a| over the contact points. */
static double max_move(const struct avi_dcr *d, const avi_vertex *V, const double (*y)[3])
{
    double mm = 0.0;
    for (size_t i = 0; i < d->surf.npoints; i++) {
        uint32_t a = d->surf.points[i];
        double w[3];
        v3_sub(w, V[a].x, y[a]);
        mm = fmax(mm, v3_norm(w));
    }
    return mm;
}

/* Rebuilds the list at x0 unless `need` (a distance every unlisted stencil
 * could have closed since xb, plus the reach wanted) fits its radius. */
static int list_pairs(struct avi_dcr *d, double need)
{
    double reach = DCR_LIST_REACH * d->delta;
    if (d->listed && need <= reach) return 0;
    for (size_t i = 0; i < d->surf.npoints; i++) v3_copy(d->xb[d->surf.points[i]], d->x0[d->surf.points[i]]);
    if (find_pairs(d, (const double (*)[3])d->xb, reach)) return -1;
    d->listed = 1;
    return 0;
}

/* The step's candidates: every stencil that could come within delta of
 * its start distance through the predictor (each side moves at most
 * maxmove) and the projection (about as much again), i.e. within
 * delta + 4 maxmove at the start; the list holds them while
 * delta + 4 maxmove + 2 (largest move since the list) <= its radius. Then
 * each gets its orientation at the start. Returns 1 when a stencil's side
 * is ambiguous: its w = sum c_k x_k may change by up to 2 m (m its largest
 * vertex move), so with d0 > 2 m the end normal is within 90 degrees of
 * the start one unless the stencil crossed, and with d0 <= 2 m a crossing
 * cannot be told from a turn. */
static int step_pairs(struct avi_dcr *d, const avi_vertex *V, double maxmove, const dcr_pair **bad)
{
    /* Before the first list xb holds nothing (list_pairs builds one then). */
    double since = d->listed ? max_move(d, V, (const double (*)[3])d->xb) : 0.0;
    if (list_pairs(d, d->delta + 4.0 * maxmove + 2.0 * since)) return -1;
    for (size_t i = 0; i < d->npair; i++) {
        dcr_pair *p = &d->pair[i];
        double x[4][3], mv = 0.0, w[3];
        avi_dist_pair q;
        for (int a = 0; a < 4; a++) {
            v3_copy(x[a], d->x0[p->v[a]]);
            v3_sub(w, V[p->v[a]].x, x[a]);
            mv = fmax(mv, v3_norm(w));
        }
        stencil_pair(p->type, (const double (*)[3])x, &q);
        p->active = 0;
        p->oriented = q.d > 0.0; /* touching at the start: no side to keep */
        if (p->oriented) v3_copy(p->n0, q.u);
        if (q.d < d->delta && !(q.d > 2.0 * mv)) {
            *bad = p;
            return 1;
        }
    }
    return 0;
}

/* One projection pass; returns the smallest gap seen before projecting. */
static double project_pass(struct avi_dcr *d, avi_vertex *V)
{
    double worst = INFINITY;
    for (size_t i = 0; i < d->npair; i++) {
        dcr_pair *p = &d->pair[i];
        if (!p->oriented) continue;
        avi_dist_pair q;
        double n[3], g = gap(V, p, &q, n);
        if (g < worst) worst = g;
        if (g >= (1.0 - DCR_GAP_TOL) * d->delta) continue;
        double S = inv_mass(V, p, &q);
        if (!(S > 0.0)) continue; /* every vertex pinned */
        double lambda = (d->delta - g) / S;
        for (int a = 0; a < 4; a++) {
            avi_vertex *r = &V[p->v[a]];
            double s = lambda * q.c[a] * r->inv_mass;
            for (int c = 0; c < 3; c++) r->x[c] += s * n[c];
        }
        p->active = 1;
    }
    return worst;
}

/* The Coulomb jump after a normal jump J of pair p (closest-point weights
 * q.c, normal n, relative velocity vr and its normal part vn before the
 * normal jump, which reversed vn and left the tangential part alone). */
static void friction_jump(struct avi_dcr *d, avi_vertex *V, const dcr_pair *p, const avi_dist_pair *q,
                          const double n[3], const double vr[3], double vn, double J, double S)
{
    double ut[3];
    for (int c = 0; c < 3; c++) ut[c] = vr[c] - vn * n[c];
    double speed = v3_norm(ut);
    if (!(speed > 0.0)) return;
    double P = fmin(speed / S, d->mu * J);
    for (int a = 0; a < 4; a++) {
        avi_vertex *r = &V[p->v[a]];
        double s = P * q->c[a] * r->inv_mass / speed;
        for (int c = 0; c < 3; c++) r->v[c] -= s * ut[c];
    }
    d->friction_work += P * speed - 0.5 * P * P * S;
}

/* One pass of velocity jumps over the projected stencils; returns how many
 * were closing. */
static size_t jump_pass(struct avi_dcr *d, avi_vertex *V)
{
    size_t closing = 0;
    for (size_t i = 0; i < d->npair; i++) {
        dcr_pair *p = &d->pair[i];
        if (!p->active) continue;
        avi_dist_pair q;
        double n[3];
        (void)gap(V, p, &q, n);
        double vr[3] = {0.0, 0.0, 0.0};
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 3; c++) vr[c] += q.c[a] * V[p->v[a]].v[c];
        double vn = v3_dot(n, vr), S = inv_mass(V, p, &q);
        if (!(vn < 0.0) || !(S > 0.0)) continue;
        closing++;
        /* e = 1, then Coulomb friction (see the top). */
        double J = -2.0 * vn / S;
        for (int a = 0; a < 4; a++) {
            avi_vertex *r = &V[p->v[a]];
            double s = J * q.c[a] * r->inv_mass;
            for (int c = 0; c < 3; c++) r->v[c] += s * n[c];
        }
        if (d->mu > 0.0) friction_jump(d, V, p, &q, n, vr, vn, J, S);
    }
    return closing;
}

/* Projection and jumps of the state at t_{k+1} (every vertex at tau =
 * t_{k+1}), from the positions at t_k in d->x0. */
static int resolve(avi_engine *e, struct avi_sync *s, struct avi_dcr *d)
{
    avi_model *m = e->model;
    avi_vertex *V = m->vert;
    double maxmove = max_move(d, V, (const double (*)[3])d->x0);
    double t = (double)(s->step + 1) * s->opt.h;
    const dcr_pair *bad = NULL;
    int rc = step_pairs(d, V, maxmove, &bad);
    if (rc < 0) return avi_sync_fail(e, "out of memory");
    if (rc > 0)
        return avi_sync_fail(e, "contact (DCR) at t = %.17g: the %s stencil (vertices %u %u %u %u) is closer than "
                                "contact.thickness = %g and moves more than half its distance in one step, so "
                                "a crossing cannot be told apart; the step is too long to resolve contact",
                             t, bad->type == AVI_STENCIL_VF ? "vertex-face" : "edge-edge", bad->v[0], bad->v[1],
                             bad->v[2], bad->v[3], d->delta);
    double worst = 0.0;
    int pass;
    for (pass = 0; pass < DCR_PASSES; pass++) {
        worst = project_pass(d, V);
        if (worst >= (1.0 - DCR_GAP_TOL) * d->delta) break;
    }
    if (pass == DCR_PASSES && !(project_pass(d, V) > 0.0))
        return avi_sync_fail(e, "contact (DCR) at t = %.17g: the projection left a gap of %g after %d passes", t,
                             worst, DCR_PASSES);
    /* Jumps until none closes; each conserves kinetic energy, so a
     * stencil left closing after the last pass costs no energy. */
    for (pass = 0; pass < DCR_PASSES; pass++)
        if (!jump_pass(d, V)) break;
    return AVI_OK;
}

double *avi_dcr_friction_work(struct avi_dcr *d) { return &d->friction_work; }

double avi_dcr_min_distance(struct avi_dcr *d, const avi_model *m, double t)
{
    /* x0 is the steps' scratch: free between steps. The list serves if no
     * unlisted stencil can be within 2 delta. */
    double D = 0.0;
    for (size_t i = 0; i < d->surf.npoints; i++) {
        uint32_t a = d->surf.points[i];
        const avi_vertex *p = &m->vert[a];
        double w[3];
        for (int c = 0; c < 3; c++) d->x0[a][c] = p->x[c] + (t - p->tau) * p->v[c];
        if (!d->listed) continue; /* no list yet: xb holds nothing, list_pairs builds one */
        v3_sub(w, d->x0[a], d->xb[a]);
        D = fmax(D, v3_norm(w));
    }
    if (list_pairs(d, 2.0 * d->delta + 2.0 * D)) return NAN; /* out of memory: unknown */
    double best = INFINITY, x[4][3];
    for (size_t i = 0; i < d->npair; i++) {
        for (int a = 0; a < 4; a++) v3_copy(x[a], d->x0[d->pair[i].v[a]]);
        best = fmin(best, avi_stencil_distance(d->pair[i].type, (const double (*)[3])x));
    }
    return best <= 2.0 * d->delta ? best : INFINITY;
}

int avi_sync_step_dcr(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    struct avi_dcr *d = s->dcr;
    d->bp.pool = avi_engine_pool(e); /* the broad phase splits across the engine's workers */
    for (size_t i = 0; i < m->nv; i++) v3_copy(d->x0[i], m->vert[i].x);
    int rc = avi_sync_step(e, s);
    if (rc != AVI_OK) return rc;
    /* The explicit update leaves x at t_k: drift to t_{k+1} (the implicit
     * ones are there already, a drift by zero). */
    double t1 = (double)(s->step + 1) * s->opt.h;
    for (size_t i = 0; i < avi_model_record_count(m); i++) { /* edge DOFs too: one tau */
        avi_vertex *p = &m->vert[i];
        double h = t1 - p->tau;
        for (int c = 0; c < 3; c++) p->x[c] += h * p->v[c];
        p->tau = t1;
        /* finite velocities times an absurd step can overflow here */
        if (!v3_isfinite(p->x))
            return avi_sync_fail(e, "blow-up at t = %.17g: non-finite position at record %zu (step %g s)", t1, i,
                                 s->opt.h);
    }
    return d->surf.npoints ? resolve(e, s, d) : AVI_OK;
}
