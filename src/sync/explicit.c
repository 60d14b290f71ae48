/* The explicit (alpha = 0) variational update: symplectic Euler in its
 * leapfrog form, p_{k+1/2} = p_{k-1/2} - h grad V(q_k), q_{k+1} = q_k + h v.
 * As in the AVI, the first kick is a half kick, so with the same h both
 * produce the same trajectory. Damping (Kharevych et al. 2006, section 5.3,
 * explicit form) adds -k_D grad_B D(q_{k-1}, q_k) with q_{k-1} = q_k - h v.
 * Constraints (section 3.5 at alpha = 0, i.e. SHAKE): the impulse
 * G(q_k)^T mu makes g(q_k + h v) = 0. */
#include "sync/sync_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int avi_sync_step_explicit(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    double t = (double)s->step * s->opt.h;
    double w = s->step == 0 ? 0.5 * s->opt.h : s->opt.h;
    size_t nrec = avi_model_record_count(m); /* vertices and edge DOFs */
    for (size_t i = 0; i < nrec; i++) {
        avi_vertex *p = &m->vert[i];
        double h = t - p->tau;
        for (int c = 0; c < 3; c++) p->x[c] += h * p->v[c];
        p->tau = t;
    }
    memset(s->force, 0, nrec * sizeof *s->force);
    avi_sync_gradient(e, s, s->force);
    if (s->opt.damping != 0.0) {
        /* folded into the gradient as (k_D / h) grad D, see the AVI event */
        size_t ne = avi_elem_count(m);
        double x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
        double h = s->opt.h;
        for (size_t k = 0; k < ne; k++) {
            avi_elem el = avi_elem_get(m, k);
            for (int a = 0; a < el.n; a++) v3_copy(x[a], m->vert[el.v[a]].x);
            memset(g, 0, sizeof g);
            avi_damping_add(&el, m->vert, (const double (*)[3])x, h, s->opt.damping / h, g);
            for (int a = 0; a < el.n; a++) v3_add(s->force[el.v[a]], s->force[el.v[a]], g[a]);
        }
    }
    double sum = 0.0, vsum = 0.0;
    for (size_t i = 0; i < nrec; i++) {
        avi_vertex *p = &m->vert[i];
        double sc = w * p->inv_mass;
        for (int c = 0; c < 3; c++) p->v[c] -= sc * s->force[i][c];
        sum += s->force[i][0] + s->force[i][1] + s->force[i][2];
        vsum += v3_dot(p->v, p->v);
    }
    if (!isfinite(sum)) {
        e->err.status = AVI_ERR_RUN;
        snprintf(e->err.message, sizeof e->err.message, "blow-up at t = %.17g: non-finite force", t);
        return AVI_ERR_RUN;
    }
    /* A finite force times an absurd step (h = 1e300) overflows the
     * velocities or their square (the kinetic energy): an error like the
     * force, never a run that goes on with a NaN energy. */
    if (!isfinite(vsum))
        for (size_t i = 0; i < nrec; i++)
            if (!isfinite(v3_dot(m->vert[i].v, m->vert[i].v)))
                return avi_sync_fail(e, "blow-up at t = %.17g: non-finite velocity or kinetic energy at record %zu "
                                     "(step %g s)", t, i, s->opt.h);
    if (s->con.n) {
        for (size_t i = 0; i < m->nv; i++) {
            v3_copy(s->q0[i], m->vert[i].x);
            v3_copy(s->v[i], m->vert[i].v);
        }
        int it = avi_constraints_solve(&s->con, m, (const double (*)[3])s->q0, (const double (*)[3])s->q0, s->opt.h,
                                       s->v, s->opt.tolerance, s->opt.max_iterations);
        if (it < 0) return avi_sync_fail(e, "constraint multipliers did not converge at t = %.17g", t);
        s->stats.constraint_iterations += (uint64_t)it;
        for (size_t i = 0; i < m->nv; i++) {
            v3_copy(m->vert[i].v, s->v[i]);
            for (int c = 0; c < 3; c++) s->xa[i][c] = s->q0[i][c] + s->opt.h * s->v[i][c];
        }
        double g = avi_constraints_violation(&s->con, (const double (*)[3])s->xa);
        if (g > s->stats.max_constraint_violation) s->stats.max_constraint_violation = g;
    }
    return AVI_OK;
}
