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
 * between them. The trajectory is untouched: only observers use it. */
#include "core/engine_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The step of elastic or gravity potential i of a kind. */
static double potential_step(const avi_model *m, unsigned kind, uint32_t i)
{
    switch (kind) {
    case AVI_KIND_SPRING: return m->springs[i].dt;
    case AVI_KIND_MEMBRANE: return m->membranes[i].dt;
    case AVI_KIND_HINGE: return m->hinges[i].dt;
    case AVI_KIND_TET: return m->tets[i].dt;
    default: return m->gravity[i].dt;
    }
}

/* imp += w grad V_i(xt) for elastic or gravity potential i of a kind. */
static void add_owed(const avi_model *m, unsigned kind, uint32_t i, double w, const double (*xt)[3], double (*imp)[3])
{
    if (w == 0.0) return;
    const uint32_t *v;
    int n = avi_model_stencil(m, (avi_kind)kind, i, &v);
    double x[4][3], g[4][3];
    for (int a = 0; a < n; a++) v3_copy(x[a], xt[v[a]]);
    const double (*cx)[3] = (const double (*)[3])x;
    switch (kind) {
    case AVI_KIND_SPRING: avi_spring_gradient(&m->springs[i], cx, g); break;
    case AVI_KIND_MEMBRANE: avi_membrane_gradient(&m->membranes[i], cx, g); break;
    case AVI_KIND_HINGE: avi_hinge_gradient(&m->hinges[i], cx, g); break;
    case AVI_KIND_TET: avi_tet_gradient(&m->tets[i], cx, g); break;
    default: avi_gravity_gradient(&m->gravity[i], cx, g); break;
    }
    for (int a = 0; a < n; a++)
        for (int c = 0; c < 3; c++) imp[v[a]][c] += w * g[a][c];
}

/* The AVI: each queue entry (one per potential) is its clock. */
static int owed_by_queue(const avi_engine *e, double t, const double (*xt)[3], double (*imp)[3])
{
    const avi_model *m = e->model;
    size_t nq = avi_engine_queue_size(e);
    if (nq == 0) return 0;
    avi_event *ev = malloc(nq * sizeof *ev);
    if (!ev) return -1;
    size_t got = avi_engine_queue_collect(e, ev);
    if (got == 0) {
        free(ev);
        return -1;
    }
    for (size_t k = 0; k < got; k++) {
        unsigned kind = ev[k].id >> AVI_ID_KIND_SHIFT;
        uint32_t i = ev[k].id & AVI_ID_INDEX_MASK;
        if (kind == AVI_KIND_CONTACT) {
            m->contact_ops->owe(e, i, ev[k].t, ev[k].n, t, xt, imp);
            continue;
        }
        add_owed(m, kind, i, avi_owed_weight(t, ev[k].t, ev[k].n, potential_step(m, kind, i)), xt, imp);
    }
    free(ev);
    return 0;
}

/* A synchronous integrator: one clock, one weight for every potential. */
static void owed_by_stepper(const avi_engine *e, double t, const double (*xt)[3], double (*imp)[3])
{
    const avi_model *m = e->model;
    double w = e->stepper->owed_weight ? e->stepper->owed_weight(e, t) : 0.0;
    if (w == 0.0) return;
    for (unsigned k = 0; k < AVI_KIND_CONTACT; k++) {
        size_t np = avi_model_potential_count(m, (avi_kind)k);
        for (size_t i = 0; i < np; i++) add_owed(m, k, (uint32_t)i, w, xt, imp);
    }
}

int avi_engine_owed_velocity(const avi_engine *e, double t, const double (*xt)[3], double (*dv)[3])
{
    const avi_model *m = e->model;
    memset(dv, 0, m->nv * sizeof *dv);
    if (e->sync) owed_by_stepper(e, t, xt, dv);
    else if (owed_by_queue(e, t, xt, dv)) {
        for (size_t i = 0; i < m->nv; i++) dv[i][0] = dv[i][1] = dv[i][2] = NAN;
        return -1;
    }
    /* dv holds the impulses sum w grad V; the velocity change is -M^-1 of it. */
    for (size_t i = 0; i < m->nv; i++) {
        double s = -m->vert[i].inv_mass;
        for (int c = 0; c < 3; c++) dv[i][c] *= s;
    }
    return 0;
}
