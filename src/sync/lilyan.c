/* sync-implicit and sync-rootfind: the discrete Hamilton-Pontryagin update
 * with one-point quadrature at q_k + alpha h v_{k+1} (Kharevych et al. 2006,
 * eq. 3 and section 5.1):
 *   eq. 4:  q_{k+1} = q_k + h v
 *   eq. 6:  p_{k+1} = M v - alpha h grad W(q_k + alpha h v)
 *   eq. 7:  M v - p_k + (1 - alpha) h grad W(q_k + alpha h v) + k_D grad_B D(q_k, q_{k+1}) = 0
 * (eq. 5 with the damping force in F^{d-}, section 5.2). Eq. 7 is the
 * stationarity condition of the Lilyan of section 5.3 divided by h,
 *   E(v)/h = 1/2 v.M v - p_k.v + (1 - alpha)/alpha W(q_k + alpha h v) + k_D/h D(q_k, q_k + h v),
 * since d/dv W(q_k + alpha h v) = alpha h grad W: the factor (1 - alpha)/alpha
 * is the one that makes the Lilyan's minimizer satisfy eq. 7 with the p
 * update of eq. 6 (the generating function of eq. 8 is P = -W(q + alpha h v)/alpha,
 * and E = -h p_k.v - h P + L^d is eq. 10). External forces derive from
 * potentials (gravity) and are part of W. alpha = 1/2 is the implicit
 * midpoint rule; alpha = 1 needs no solve (M v = p_k); alpha = 0 is the
 * explicit update, solved here with the damping implicit. */
#include "sync/sync_internal.h"

#include <math.h>
#include <string.h>

int avi_sync_step_lilyan(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    size_t n = avi_model_record_count(m); /* vertices and edge DOFs */
    double h = s->opt.h, al = s->opt.alpha;
    double t1 = (double)(s->step + 1) * h;
    for (size_t i = 0; i < n; i++) {
        const avi_vertex *p = &m->vert[i];
        v3_copy(s->q0[i], p->x);
        v3_scale(s->b[i], p->v, p->inv_mass == 0.0 ? 0.0 : avi_sync_mass(m, i)); /* p_k */
        v3_copy(s->v[i], p->v);                                         /* guess: p_k / m */
    }
    avi_newton_problem P = {(const double (*)[3])s->q0, (const double (*)[3])s->b, al, 0.0, h, s->opt.damping,
                            s->opt.type == AVI_INTEGRATOR_SYNC_ROOTFIND, s->con.n > 0, 0};
    if (al > 0.0) {
        P.cw = (1.0 - al) / al;
    } else {
        /* alpha -> 0: cw W(q + a h v) -> h grad W(q_k).v, a linear term. */
        avi_sync_add_gradient(s, m, (const double (*)[3])s->q0, -h, s->b, NULL);
    }
    int rc = avi_newton_solve(e, s, &P);
    if (rc != AVI_OK) return rc;
    /* p_{k+1} = M v - alpha h grad W(q_k + alpha h v) (eq. 6) */
    memset(s->r, 0, n * sizeof *s->r);
    if (al > 0.0) {
        for (size_t i = 0; i < n; i++)
            for (int c = 0; c < 3; c++) s->xa[i][c] = s->q0[i][c] + al * h * s->v[i][c];
        avi_sync_add_gradient(s, m, (const double (*)[3])s->xa, al * h, s->r, NULL);
    }
    for (size_t i = 0; i < n; i++) {
        avi_vertex *p = &m->vert[i];
        p->tau = t1;
        v3_copy(s->xb[i], p->x);
        if (p->inv_mass == 0.0) continue;
        for (int c = 0; c < 3; c++) {
            p->x[c] = s->q0[i][c] + h * s->v[i][c];
            p->v[c] = s->v[i][c] - s->r[i][c] * p->inv_mass;
        }
        v3_copy(s->xb[i], p->x);
        if (!v3_isfinite(p->x) || !v3_isfinite(p->v))
            return avi_sync_fail(e, "blow-up at t = %.17g: non-finite state at %s %zu", t1,
                                 i < m->nv ? "vertex" : "edge DOF record", i < m->nv ? i : i - m->nv);
    }
    if (s->con.n) {
        double g = avi_constraints_violation(&s->con, (const double (*)[3])s->xb);
        if (g > s->stats.max_constraint_violation) s->stats.max_constraint_violation = g;
    }
    return AVI_OK;
}
