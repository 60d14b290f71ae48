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
#include "core/refine.h"

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
    case AVI_KIND_MIDEDGE: return m->midedges[i].dt;
    default: return m->gravity[i].dt;
    }
}

/* imp += w grad V_i(xt) for elastic or gravity potential i of a kind. */
static void add_owed(const avi_model *m, unsigned kind, uint32_t i, double w, const double (*xt)[3], double (*imp)[3])
{
    if (w == 0.0) return;
    const uint32_t *v;
    int n = avi_model_stencil(m, (avi_kind)kind, i, &v);
    double x[AVI_MIDEDGE_SLOTS][3], g[AVI_MIDEDGE_SLOTS][3];
    for (int a = 0; a < n; a++) v3_copy(x[a], xt[v[a]]);
    const double (*cx)[3] = (const double (*)[3])x;
    switch (kind) {
    case AVI_KIND_SPRING: avi_spring_gradient(&m->springs[i], cx, g); break;
    case AVI_KIND_MEMBRANE: avi_membrane_gradient(&m->membranes[i], cx, g); break;
    case AVI_KIND_HINGE: avi_hinge_gradient(&m->hinges[i], cx, g); break;
    case AVI_KIND_TET: avi_tet_gradient(&m->tets[i], cx, g); break;
    case AVI_KIND_MIDEDGE: avi_midedge_gradient(&m->midedges[i], cx, g); break;
    default: avi_gravity_gradient(&m->gravity[i], cx, g); break;
    }
    for (int a = 0; a < n; a++)
        for (int c = 0; c < 3; c++) imp[v[a]][c] += w * g[a][c];
}

/* Clocks on refined steps (core/refine.h) owe their share now, with their
 * present step dt_0 / 2^level, and leave the list. */
static void take_refined(const avi_engine *e, double t, const double (*xt)[3], avi_owed *o, double (*imp)[3])
{
    size_t keep = 0;
    for (size_t k = 0; k < o->nev; k++) {
        avi_event ev = o->ev[k];
        int level = avi_refine_level(e->refine, ev.id);
        if (level == 0) {
            o->ev[keep++] = ev;
            continue;
        }
        unsigned kind = ev.id >> AVI_ID_KIND_SHIFT;
        uint32_t i = ev.id & AVI_ID_INDEX_MASK;
        double dt = ldexp(potential_step(e->model, kind, i), -level);
        add_owed(e->model, kind, i, avi_owed_weight(t, ev.t, ev.n, dt), xt, imp);
    }
    o->nev = keep;
}

int avi_owed_take(const avi_engine *e, double t, const double (*xt)[3], avi_owed *o, double (*imp)[3])
{
    const avi_model *m = e->model;
    memset(imp, 0, avi_model_record_count(m) * sizeof *imp);
    o->nev = 0;
    o->failed = 0;
    o->sync_w = 0.0;
    if (e->sync) {
        /* One clock for every potential (no contact: refused by sync). */
        if (e->stepper->owed_weight) o->sync_w = e->stepper->owed_weight(e, t);
        return 0;
    }
    size_t nq = avi_engine_queue_size(e);
    if (nq > o->cap) {
        avi_event *ev = realloc(o->ev, nq * sizeof *ev);
        if (!ev) return -(o->failed = 1);
        o->ev = ev;
        o->cap = nq;
    }
    if (nq && !(o->nev = avi_engine_queue_collect(e, o->ev))) return -(o->failed = 1);
    /* Contact clocks and stencils live in the manager: their share now. */
    for (size_t k = 0; k < o->nev; k++)
        if (o->ev[k].id >> AVI_ID_KIND_SHIFT == AVI_KIND_CONTACT)
            m->contact_ops->owe(e->contact, o->ev[k].id & AVI_ID_INDEX_MASK, o->ev[k].t, o->ev[k].n, t, xt, imp);
    if (e->refine) take_refined(e, t, xt, o, imp);
    return 0;
}

void avi_owed_apply(const avi_model *m, const avi_vertex *V, const avi_owed *o, double t, const double (*xt)[3],
                    double (*imp)[3])
{
    if (o->failed) {
        for (size_t i = 0; i < avi_model_record_count(m); i++) imp[i][0] = imp[i][1] = imp[i][2] = NAN;
        return;
    }
    if (o->sync_w != 0.0)
        for (unsigned k = 0; k < AVI_KIND_CONTACT; k++) {
            size_t np = avi_model_potential_count(m, (avi_kind)k);
            for (size_t i = 0; i < np; i++) add_owed(m, k, (uint32_t)i, o->sync_w, xt, imp);
        }
    for (size_t k = 0; k < o->nev; k++) {
        unsigned kind = o->ev[k].id >> AVI_ID_KIND_SHIFT;
        uint32_t i = o->ev[k].id & AVI_ID_INDEX_MASK;
        if (kind == AVI_KIND_CONTACT) continue; /* taken on the engine's thread */
        add_owed(m, kind, i, avi_owed_weight(t, o->ev[k].t, o->ev[k].n, potential_step(m, kind, i)), xt, imp);
    }
    /* imp holds the impulses sum w grad V; the velocity change is -M^-1 of
     * it (edge DOF records included: their inverse mass is 1/I_e). */
    for (size_t i = 0; i < avi_model_record_count(m); i++) {
        double s = -V[i].inv_mass;
        for (int c = 0; c < 3; c++) imp[i][c] *= s;
    }
}

void avi_owed_free(avi_owed *o)
{
    free(o->ev);
    memset(o, 0, sizeof *o);
}

int avi_engine_owed_velocity(const avi_engine *e, double t, const double (*xt)[3], double (*dv)[3])
{
    avi_owed o = {0};
    int rc = avi_owed_take(e, t, xt, &o, dv);
    avi_owed_apply(e->model, e->model->vert, &o, t, xt, dv);
    avi_owed_free(&o);
    return rc;
}
