/* The explicit (alpha = 0) variational update: symplectic Euler in its
 * leapfrog form, p_{k+1/2} = p_{k-1/2} - h grad V(q_k), q_{k+1} = q_k + h v.
 * As in the AVI, the first kick is a half kick, so with the same h both
 * produce the same trajectory. */
#include "sync/sync_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int avi_sync_step_explicit(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    double t = (double)s->step * s->opt.h;
    double w = s->step == 0 ? 0.5 * s->opt.h : s->opt.h;
    for (size_t i = 0; i < m->nv; i++) {
        avi_vertex *p = &m->vert[i];
        double h = t - p->tau;
        for (int c = 0; c < 3; c++) p->x[c] += h * p->v[c];
        p->tau = t;
    }
    memset(s->force, 0, m->nv * sizeof *s->force);
    avi_model_accumulate_gradient(m, s->force);
    double sum = 0.0;
    for (size_t i = 0; i < m->nv; i++) {
        avi_vertex *p = &m->vert[i];
        double sc = w * p->inv_mass;
        for (int c = 0; c < 3; c++) p->v[c] -= sc * s->force[i][c];
        sum += s->force[i][0] + s->force[i][1] + s->force[i][2];
    }
    if (!isfinite(sum)) {
        e->err.status = AVI_ERR_RUN;
        snprintf(e->err.message, sizeof e->err.message, "blow-up at t = %.17g: non-finite force", t);
        return AVI_ERR_RUN;
    }
    return AVI_OK;
}
