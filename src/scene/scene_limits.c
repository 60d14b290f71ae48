/* Up-front limits: a run whose initial kinetic energy overflows, whose rows
 * and frames would need more than output.max_bytes, or whose events would
 * exceed time_step.max_events, is refused before it starts, with the estimate and the key to change
 * (output.max_checkpoints is checked when loading). */
#include "avi/output.h"
#include "core/model_internal.h"
#include "scene/scene_checks.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The contact manager's share of the work (src/contact/contact_manager.c):
 * it runs once per window, the time the fastest surface vertex needs to
 * close a quarter of contact.thickness at 1.25 times its speed (at most 100
 * of the smallest elastic steps on a surface vertex), and each run drifts
 * every surface vertex. From the initial speeds: one event per surface
 * vertex per run. Layer events are not counted: how many stencils will
 * touch is not known before the run. *window gets the window. */
static double contact_events(const avi_scene *s, const avi_model *m, double *window)
{
    *window = INFINITY;
    if (!m->has_contact || !(s->end_time > 0.0)) return 0.0;
    unsigned char *on = calloc(m->nv ? m->nv : 1, 1);
    if (!on) return 0.0;
    for (size_t i = 0; i < m->ncontact_tri; i++)
        for (int a = 0; a < 3; a++) on[m->contact_tri[i][a]] = 1;
    for (size_t i = 0; i < m->ncontact_point; i++) on[m->contact_point[i]] = 1;
    double points = 0.0, v2 = 0.0, dt_min = INFINITY;
    for (size_t i = 0; i < m->nv; i++) {
        if (!on[i]) continue;
        points += 1.0;
        const double *v = m->vert[i].v;
        v2 = fmax(v2, v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        if (m->vertex_dt) dt_min = fmin(dt_min, m->vertex_dt[i]);
    }
    free(on);
    double w = 100.0 * dt_min, margin = 0.5 * m->contact.thickness;
    if (v2 > 0.0) w = fmin(w, margin / (2.0 * 1.25 * sqrt(v2)));
    if (!(w > 0.0) || !isfinite(w)) return 0.0;
    *window = w;
    return s->end_time / w * points;
}

static int check_bytes(const avi_scene *s, const avi_model *m, avi_error *err)
{
    const avi_scene_output *o = &s->output;
    double rows = avi_h5_output_count(s->end_time, o->energy_every);
    double frames = avi_h5_output_count(s->end_time, o->frame_every);
    /* Connectivity: a triangle per membrane or bending triangle (a shell
     * has both), the tetrahedra; the resolved scene about as long as the
     * scene as given. */
    size_t tris = avi_model_potential_count(m, AVI_KIND_MEMBRANE);
    if (avi_model_potential_count(m, AVI_KIND_MIDEDGE) > tris) tris = avi_model_potential_count(m, AVI_KIND_MIDEDGE);
    avi_h5_size_plan plan = {avi_model_vertex_count(m), avi_model_body_count(m), tris,
                             avi_model_potential_count(m, AVI_KIND_TET), 2 * (s->text ? strlen(s->text) : 0), rows,
                             frames};
    double total = avi_h5_estimate_bytes(&plan);
    if (!(total > o->max_bytes)) return AVI_OK;
    double row_bytes = rows * (double)avi_h5_row_bytes();
    double frame_bytes = frames * avi_h5_frame_bytes(avi_model_vertex_count(m), avi_model_body_count(m));
    char msg[380];
    snprintf(msg, sizeof msg,
             "the output would need about %.3g bytes (%.3g rows of observables, %.3g bytes; %.3g frames of %zu "
             "vertices, %.3g bytes), more than output.max_bytes = %g; raise output.energy_every or "
             "output.frame_every (or output.max_bytes)",
             total, rows, row_bytes, frames, avi_model_vertex_count(m), frame_bytes, o->max_bytes);
    const char *key = row_bytes > frame_bytes ? "output.energy_every" : "output.frame_every";
    return avi_scene_check_fail(err, s, "%s: %s", key, msg);
}

/* The key that set a potential's step dt (the model's precedence: per kind,
 * body, fixed rule, then the materials' stable steps). */
static void step_key(const avi_scene *s, const avi_body_potentials *ranges, avi_kind kind, size_t index, char *key,
                     size_t len)
{
    int b = avi_kind_flags(kind) & AVI_KIND_ELASTIC ? avi_potential_body(ranges, s->body_count, kind, index) : -1;
    if (avi_time_step_kind_fixed(&s->time_step, kind) > 0.0) snprintf(key, len, "time_step.per_kind.%s", avi_kind_name(kind));
    else if (b >= 0 && s->bodies[b].time_step > 0.0) snprintf(key, len, "bodies.%d.time_step", b);
    else if (s->time_step.rule == AVI_DT_FIXED) snprintf(key, len, "time_step.fixed");
    else if (b >= 0 && s->bodies[b].material >= 0) {
        /* A stable step: the material key its kind's 1 / dt^2 goes with. */
        double p[4];
        avi_kind_step_powers(kind, p);
        avi_material_key(&s->materials[s->bodies[b].material], p, key, len);
    } else {
        snprintf(key, len, "time_step");
    }
}

static int check_events(const avi_scene *s, const avi_model *m, const avi_body_potentials *ranges, avi_error *err)
{
    double events = 0.0, smallest = INFINITY;
    size_t potentials = 0, at = 0;
    avi_kind kind = (avi_kind)0;
    /* Elastic kinds first: gravity steps follow theirs. */
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t n = avi_model_potential_count(m, (avi_kind)k);
        potentials += n;
        for (size_t i = 0; i < n; i++) {
            double dt = avi_model_time_step(m, (avi_kind)k, i);
            events += s->end_time / dt;
            if (dt < smallest) smallest = dt, kind = (avi_kind)k, at = i;
        }
    }
    /* Synchronous integrators step every potential at the smallest step. */
    if (s->integrator.type != AVI_INTEGRATOR_AVI && potentials) events = s->end_time / smallest * (double)potentials;
    /* sync-explicit4 evaluates every potential three times a step (src/sync/explicit4.c) */
    if (s->integrator.type == AVI_INTEGRATOR_SYNC_EXPLICIT4) events *= 3.0;
    char key[160], msg[420];
    /* Every clock starts at 0: a run shorter than the smallest step would
     * complete none (avi_engine_run refuses it; said here with the key). */
    if (potentials && smallest > s->end_time) {
        step_key(s, ranges, kind, at, key, sizeof key);
        return avi_scene_check_fail(err, s,
                                    "%s: the time step %g s (%s %zu, the smallest) is longer than time.end = %g s: "
                                    "no step would complete; shorten the step or lengthen the run",
                                    key, smallest, avi_kind_name(kind), at, s->end_time);
    }
    double window, contact = contact_events(s, m, &window);
    if (events + contact > s->max_events && contact > events) {
        snprintf(msg, sizeof msg,
                 "about %.3g events to time.end = %g s, %.3g of them the contact manager's (a run every %.3g s, the "
                 "time the fastest initial speed needs to close a quarter of contact.thickness = %g m, one event "
                 "per surface vertex), more than time_step.max_events = %g; thicken the contact layer, slow the "
                 "bodies or shorten time.end (or raise time_step.max_events)",
                 events + contact, s->end_time, contact, window, m->contact.thickness, s->max_events);
        return avi_scene_check_fail(err, s, "contact.thickness: %s", msg);
    }
    events += contact;
    if (!(events > s->max_events)) return AVI_OK;
    step_key(s, ranges, kind, at, key, sizeof key);
    snprintf(msg, sizeof msg,
             "about %.3g events to time.end = %g s (%zu potentials; %s %zu has the smallest step, %g s), more than "
             "time_step.max_events = %g; lengthen the time steps or shorten time.end (or raise "
             "time_step.max_events)",
             events, s->end_time, potentials, avi_kind_name(kind), at, smallest, s->max_events);
    return avi_scene_check_fail(err, s, "%s: %s", key, msg);
}

/* An initial speed whose kinetic energy overflows a double (1e200 m/s) has
 * no finite energy to conserve and no contact window to estimate (it would
 * be 0): refused here, not a NaN blow-up at t = 0 or a stalled run. */
static int check_speeds(const avi_scene *s, const avi_model *m, avi_error *err)
{
    for (size_t i = 0; i < m->nv; i++) {
        const double *v = m->vert[i].v, im = m->vert[i].inv_mass;
        double v2 = v[0] * v[0] + v[1] * v[1] + v[2] * v[2];
        if (im == 0.0 || isfinite(0.5 * v2 / im)) continue;
        int b = avi_model_vertex_body(m, (uint32_t)i);
        return avi_scene_check_fail(err, s,
                                    "bodies.%d ('%s'): vertex %zu starts at %.3g m/s, whose kinetic energy "
                                    "overflows a double; slow the body (its velocity)",
                                    b, b >= 0 ? avi_model_body_name(m, b) : "?", i, hypot(hypot(v[0], v[1]), v[2]));
    }
    return AVI_OK;
}

int avi_scene_check_limits(const avi_scene *s, const avi_model *m, const avi_body_potentials *ranges,
                           avi_error *err)
{
    int rc = check_speeds(s, m, err);
    rc = rc ? rc : check_bytes(s, m, err);
    return rc ? rc : check_events(s, m, ranges, err);
}
