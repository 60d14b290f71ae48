/* Non-symplectic baselines (Stern 2006 slides; Kharevych et al. 2006,
 * Fig. 1): explicit Euler,
 *   q_{k+1} = q_k + h v_k,  M v_{k+1} = M v_k - h grad W(q_k) - k_D grad_B D(q_k - h v_k, q_k),
 * and implicit Euler,
 *   q_{k+1} = q_k + h v_{k+1},  M v_{k+1} = M v_k - h grad W(q_{k+1}) - k_D grad_B D(q_k, q_{k+1}),
 * the latter the minimizer of 1/2 v.M v - M v_k.v + W(q_k + h v) + k_D/h D.
 * Constraints: implicit Euler is the backward Euler method of the index-3
 * system, the impulse G(q_{k+1})^T mu chosen so that g(q_{k+1}) = 0.
 * Explicit Euler takes the constraint force G(q_k)^T lambda that keeps the
 * acceleration on the constraints at (q_k, v_k) (the index-1 form), then
 * projects the positions back onto g = 0 and the velocities onto the
 * tangent space, the usual projection method. Both are then Euler's
 * methods for the pendulum's angle, with their growth and decay. */
#include "sync/sync_internal.h"

#include <math.h>
#include <string.h>

static void note_violation(struct avi_sync *s, const avi_model *m)
{
    for (size_t i = 0; i < m->nv; i++) v3_copy(s->xa[i], m->vert[i].x);
    double g = avi_constraints_violation(&s->con, (const double (*)[3])s->xa);
    if (g > s->stats.max_constraint_violation) s->stats.max_constraint_violation = g;
}

int avi_sync_step_explicit_euler(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    size_t n = avi_model_record_count(m); /* vertices and edge DOFs */
    double h = s->opt.h, kd = s->opt.damping;
    double t1 = (double)(s->step + 1) * h;
    for (size_t i = 0; i < n; i++) v3_copy(s->q0[i], m->vert[i].x);
    memset(s->force, 0, n * sizeof *s->force);
    avi_sync_add_gradient(s, m, (const double (*)[3])s->q0, h, s->force, NULL);
    if (kd != 0.0) {
        size_t ne = avi_elem_count(m);
        double x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
        for (size_t k = 0; k < ne; k++) {
            avi_elem el = avi_elem_get(m, k);
            for (int a = 0; a < el.n; a++) v3_copy(x[a], s->q0[el.v[a]]);
            memset(g, 0, sizeof g);
            avi_damping_add(&el, m->vert, (const double (*)[3])x, h, kd, g);
            for (int a = 0; a < el.n; a++) v3_add(s->force[el.v[a]], s->force[el.v[a]], g[a]);
        }
    }
    if (s->con.n) {
        /* s->force holds h grad W + k_D grad D; the constraint force of f = -grad W - (k_D / h) grad D */
        for (size_t i = 0; i < n; i++) {
            v3_scale(s->rt[i], s->force[i], -1.0 / h);
            v3_copy(s->vt[i], m->vert[i].v);
        }
        if (avi_constraints_add_force(&s->con, m, (const double (*)[3])s->q0, (const double (*)[3])s->vt, s->rt))
            return avi_sync_fail(e, "singular constraint Jacobian at t = %.17g", t1);
        for (size_t i = 0; i < n; i++) v3_scale(s->force[i], s->rt[i], -h);
    }
    for (size_t i = 0; i < n; i++) {
        avi_vertex *p = &m->vert[i];
        p->tau = t1;
        if (p->inv_mass == 0.0) continue;
        v3_axpy(p->x, h, p->v);
        v3_axpy(p->v, -p->inv_mass, s->force[i]);
        if (!v3_isfinite(p->x) || !v3_isfinite(p->v))
            return avi_sync_fail(e, "blow-up at t = %.17g: non-finite state at %s %zu", t1,
                                 i < m->nv ? "vertex" : "edge DOF record", i < m->nv ? i : i - m->nv);
    }
    if (s->con.n) {
        /* positions onto g = 0 along M^-1 G^T, velocities onto G v = 0 */
        for (size_t i = 0; i < n; i++) v3_copy(s->xb[i], m->vert[i].x);
        memset(s->d, 0, n * sizeof *s->d);
        int it = avi_constraints_solve(&s->con, m, (const double (*)[3])s->xb, (const double (*)[3])s->xb, 1.0, s->d,
                                       s->opt.tolerance, s->opt.max_iterations);
        if (it < 0) return avi_sync_fail(e, "constraint projection did not converge at t = %.17g", t1);
        s->stats.constraint_iterations += (uint64_t)it;
        for (size_t i = 0; i < n; i++) {
            v3_add(s->xb[i], s->xb[i], s->d[i]);
            v3_copy(m->vert[i].x, s->xb[i]);
            v3_copy(s->v[i], m->vert[i].v);
        }
        if (avi_constraints_project_velocity(&s->con, m, (const double (*)[3])s->xb, s->v))
            return avi_sync_fail(e, "singular constraint Jacobian at t = %.17g", t1);
        for (size_t i = 0; i < n; i++) v3_copy(m->vert[i].v, s->v[i]);
        note_violation(s, m);
    }
    return AVI_OK;
}

int avi_sync_step_implicit_euler(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    size_t n = avi_model_record_count(m); /* vertices and edge DOFs */
    double h = s->opt.h;
    double t1 = (double)(s->step + 1) * h;
    for (size_t i = 0; i < n; i++) {
        const avi_vertex *p = &m->vert[i];
        v3_copy(s->q0[i], p->x);
        v3_scale(s->b[i], p->v, p->inv_mass == 0.0 ? 0.0 : avi_sync_mass(m, i));
        v3_copy(s->v[i], p->v);
    }
    avi_newton_problem P = {(const double (*)[3])s->q0, (const double (*)[3])s->b, 1.0, 1.0, h, s->opt.damping,
                            0, s->con.n > 0, 1};
    int rc = avi_newton_solve(e, s, &P);
    if (rc != AVI_OK) return rc;
    for (size_t i = 0; i < n; i++) {
        avi_vertex *p = &m->vert[i];
        p->tau = t1;
        if (p->inv_mass == 0.0) continue;
        for (int c = 0; c < 3; c++) {
            p->x[c] = s->q0[i][c] + h * s->v[i][c];
            p->v[c] = s->v[i][c];
        }
        if (!v3_isfinite(p->x) || !v3_isfinite(p->v))
            return avi_sync_fail(e, "blow-up at t = %.17g: non-finite state at %s %zu", t1,
                                 i < m->nv ? "vertex" : "edge DOF record", i < m->nv ? i : i - m->nv);
    }
    if (s->con.n) note_violation(s, m);
    return AVI_OK;
}
