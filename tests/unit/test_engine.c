/* The AVI loop: equivalence with leapfrog at a common step, second-order
 * accuracy from the half first impulse, observers' timing rules. */
#include "check_main.h"
#include "avi/avi.h"
#include "avi/sync.h"
#include "core/engine_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const avi_solid_material soft = {1000.0, 0.3, 10.0};

/* A tet and a chain of springs sharing vertices; random initial velocities. */
static avi_model *small_model(double dt)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double X[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {2, 1, 0}};
    for (int i = 0; i < 6; i++) avi_model_add_vertex(m, b, X[i]);
    ck_assert_int_eq(avi_model_add_tet(m, 0, 1, 2, 3, &soft), 0);
    ck_assert_int_eq(avi_model_add_spring(m, 3, 4, 200.0, -1.0), 0);
    ck_assert_int_eq(avi_model_add_spring(m, 4, 5, 100.0, 0.0), 0);
    ck_assert_int_eq(avi_model_add_spring(m, 1, 5, 300.0, 0.5), 0);
    ck_assert_int_eq(avi_model_add_mass(m, 4, 0.7), 0);
    ck_assert_int_eq(avi_model_add_mass(m, 5, 1.3), 0);
    for (uint32_t i = 0; i < 6; i++) {
        double x[3] = {X[i][0] * 1.05, X[i][1], X[i][2] * 0.97};
        double v[3] = {0.3 * sin(i + 1.0), 0.2 * cos(2.0 * i), -0.1 * i};
        avi_model_set_state(m, i, x, v);
    }
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = dt;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

/* Reference leapfrog (kick-drift-kick merged): x_{k} = x_{k-1} + dt v,
 * then every potential's impulse in (kind, index) order at x_k. */
static void reference_step(avi_model *m, double (*x)[3], double (*v)[3], const double *im, double w)
{
    double g[4][3], xs[4][3];
    for (size_t s = 0; s < m->nspring; s++) {
        const uint32_t *idx = m->springs[s].v;
        for (int a = 0; a < 2; a++) v3_copy(xs[a], x[idx[a]]);
        avi_spring_gradient(&m->springs[s], (const double (*)[3])xs, g);
        for (int a = 0; a < 2; a++) v3_axpy(v[idx[a]], -w * im[idx[a]], g[a]);
    }
    for (size_t s = 0; s < m->ntet; s++) {
        const uint32_t *idx = m->tets[s].v;
        for (int a = 0; a < 4; a++) v3_copy(xs[a], x[idx[a]]);
        avi_tet_gradient(&m->tets[s], (const double (*)[3])xs, g);
        for (int a = 0; a < 4; a++) v3_axpy(v[idx[a]], -w * im[idx[a]], g[a]);
    }
}

START_TEST(test_common_step_is_leapfrog)
{
    const double dt = 1e-3;
    avi_model *m = small_model(dt);
    size_t n = avi_model_vertex_count(m);
    double x[6][3], v[6][3], im[6];
    for (size_t i = 0; i < n; i++) {
        v3_copy(x[i], m->vert[i].x);
        v3_copy(v[i], m->vert[i].v);
        im[i] = m->vert[i].inv_mass;
    }
    avi_engine *e = avi_engine_create(m, NULL);
    ck_assert_ptr_nonnull(e);
    const int steps = 20000;
    double worst = 0.0, scale = 0.0;
    for (int k = 0; k <= steps; k++) {
        /* Drift by t_k - t_{k-1} with t_k = k dt, as the engine's clocks do;
         * this system is chaotic, so any other rounding grows exponentially. */
        if (k > 0)
            for (size_t i = 0; i < n; i++) v3_axpy(x[i], k * dt - (k - 1) * dt, v[i]);
        reference_step(m, x, v, im, k == 0 ? 0.5 * dt : dt);
        /* The AVI after all events at t_k: advance to just past t_k. */
        double t = k * dt;
        ck_assert_int_eq(avi_engine_advance(e, nextafter(t, INFINITY)), AVI_OK);
        if (k % 1000 == 0 || k == steps) {
            double xa[18], va[18];
            avi_engine_state_at(e, t, xa, va);
            for (size_t i = 0; i < n; i++)
                for (int c = 0; c < 3; c++) {
                    worst = fmax(worst, fabs(xa[3 * i + c] - x[i][c]));
                    worst = fmax(worst, fabs(va[3 * i + c] - v[i][c]));
                    scale = fmax(scale, fabs(x[i][c]));
                }
        }
    }
    printf("AVI vs leapfrog, %d common steps: max difference %.3e (relative %.3e)\n", steps, worst, worst / scale);
    ck_assert(worst / scale < 1e-12);
    ck_assert_uint_eq(avi_engine_events_total(e), (uint64_t)(steps + 1) * 4);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* One free mass on a zero-rest-length spring to a pinned vertex: x(t) =
 * A cos(w t) + (v0 / w) sin(w t). The half first impulse makes the AVI
 * second order: halving dt quarters the error. */
static double oscillator_error(double dt)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "osc");
    const double o[3] = {0, 0, 0}, p[3] = {1, 0, 0};
    avi_model_add_vertex(m, b, o);
    avi_model_add_vertex(m, b, p);
    avi_model_pin(m, 0);
    avi_model_add_mass(m, 0, 1.0);
    avi_model_add_mass(m, 1, 2.0);
    avi_model_add_spring(m, 0, 1, 8.0, 0.0); /* w = 2 */
    const double v0[3] = {0, 1.0, 0};
    avi_model_set_state(m, 1, p, v0);
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = dt;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    avi_engine *e = avi_engine_create(m, NULL);
    const double T = 3.0;
    avi_engine_advance(e, T);
    double x[6];
    avi_engine_state_at(e, T, x, NULL);
    double ex = cos(2.0 * T), ey = 0.5 * sin(2.0 * T);
    double err = hypot(x[3] - ex, x[4] - ey);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    return err;
}

START_TEST(test_half_first_impulse_gives_second_order)
{
    /* T is a multiple of each dt, so x(T) is a step position. */
    double e1 = oscillator_error(3.0 / 300), e2 = oscillator_error(3.0 / 600), e3 = oscillator_error(3.0 / 1200);
    printf("oscillator position error: %.3e %.3e %.3e (ratios %.2f %.2f)\n", e1, e2, e3, e1 / e2, e2 / e3);
    ck_assert(e1 / e2 > 3.7 && e1 / e2 < 4.3);
    ck_assert(e2 / e3 > 3.7 && e2 / e3 < 4.3);
}
END_TEST

typedef struct { int calls; double times[64]; } obs_log;
static int record(const avi_engine *e, double t, void *user)
{
    obs_log *l = user;
    if (l->calls < 64) l->times[l->calls] = t;
    l->calls++;
    /* Every vertex is at or before t: the state at t is readable. */
    const avi_model *m = avi_engine_model(e);
    for (size_t i = 0; i < m->nv; i++) ck_assert(m->vert[i].tau <= t);
    return 0;
}

START_TEST(test_observer_times)
{
    avi_model *m = small_model(1e-3);
    avi_engine *e = avi_engine_create(m, NULL);
    obs_log l = {0, {0}};
    ck_assert_int_eq(avi_engine_add_observer(e, 0.01, record, &l), AVI_OK);
    ck_assert_int_eq(avi_engine_run(e, 0.055), AVI_OK);
    /* 0, 0.01 .. 0.05 and the end 0.055 */
    ck_assert_int_eq(l.calls, 7);
    for (int k = 0; k < 6; k++) ck_assert(l.times[k] == k * 0.01);
    ck_assert(l.times[6] == 0.055);
    /* Continuing: the next rows are 0.06, 0.07 and the end 0.07 only once. */
    ck_assert_int_eq(avi_engine_run(e, 0.07), AVI_OK);
    ck_assert_int_eq(l.calls, 9);
    ck_assert(l.times[7] == 6 * 0.01 && l.times[8] == 7 * 0.01);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* Observers see the state before any event at T: the kinetic energy at
 * t = 0 is that of the initial velocities, not of the half-kicked ones
 * (the mid-step estimate exactly; the represented motion's differs from it
 * by the start's amplitude term, O(h^2), docs/energy_observable.md). */
START_TEST(test_observation_at_zero_is_initial_state)
{
    avi_model *m = small_model(1e-3);
    double ke = 0.0;
    for (size_t i = 0; i < m->nv; i++) ke += 0.5 * m->mass[i] * v3_dot(m->vert[i].v, m->vert[i].v);
    avi_engine *e = avi_engine_create(m, NULL);
    avi_engine_advance(e, 0.0);
    avi_observation o;
    avi_engine_observe(e, 0.0, &o);
    ck_assert(o.kinetic_midstep == ke);
    ck_assert_double_eq_tol(o.kinetic, ke, 1e-3 * ke);
    ck_assert(o.events_total == 0);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_blow_up_is_reported)
{
    avi_model *m = small_model(1.0); /* absurd step: the tet inverts */
    avi_engine *e = avi_engine_create(m, NULL);
    int rc = avi_engine_advance(e, 1000.0);
    ck_assert_int_eq(rc, AVI_ERR_RUN);
    ck_assert(strstr(avi_engine_error(e)->message, "blow-up") != NULL);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* Four separate tets: 0 at rest, 1 and 3 inverted (log J of a negative J:
 * NaN energy at finite positions), 2 stretched (the largest finite energy).
 * The blow-up search names the first non-finite one, tet 1; NaN compares
 * false with everything, and a search that let it be overwritten named
 * tet 2 or 3. */
START_TEST(test_largest_energy_names_a_nan)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (uint32_t t = 0; t < 4; t++) {
        for (int i = 0; i < 4; i++) {
            double x[3] = {X[i][0] + 3.0 * t, X[i][1], X[i][2]};
            avi_model_add_vertex(m, b, x);
        }
        ck_assert_int_eq(avi_model_add_tet(m, 4 * t, 4 * t + 1, 4 * t + 2, 4 * t + 3, &soft), 0);
        /* Inverted: vertex 3 through the opposite face; stretched: x 2.5. */
        double z = t == 1 || t == 3 ? -1.0 : 1.0, sx = t == 2 ? 2.5 : 1.0;
        double x3[3] = {3.0 * t, 0, z}, x1[3] = {3.0 * t + sx, 0, 0}, v0[3] = {0, 0, 0};
        avi_model_set_state(m, 4 * t + 3, x3, v0);
        avi_model_set_state(m, 4 * t + 1, x1, v0);
    }
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = 1e-3;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    avi_engine *e = avi_engine_create(m, NULL);
    ck_assert_ptr_nonnull(e);
    char who[256];
    avi_engine_describe_largest_energy(e, 0.0, who, sizeof who);
    ck_assert_msg(strncmp(who, "tet 1 (vertices 4, 5, 6, 7): ", 29) == 0 && strstr(who, "nan"), "%s", who);
    avi_snapshot *s = avi_snapshot_create(m);
    avi_engine_snapshot(e, 0.0, s);
    char again[256];
    avi_snapshot_describe_largest_energy(s, again, sizeof again);
    ck_assert_str_eq(again, who);
    avi_snapshot_destroy(s);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* A chain of zero-rest-length springs (a linear, non-chaotic system) with a
 * common step: the synchronous explicit integrator and the AVI agree to
 * round-off (they sum forces in different orders). */
START_TEST(test_sync_explicit_matches_avi)
{
    avi_model *models[2];
    avi_engine *engines[2];
    for (int k = 0; k < 2; k++) {
        avi_model *m = avi_model_create();
        int b = avi_model_add_body(m, "chain");
        for (int i = 0; i < 8; i++) {
            double X[3] = {(double)i, 0.1 * i * i, 0};
            avi_model_add_vertex(m, b, X);
            avi_model_add_mass(m, (uint32_t)i, 1.0 + 0.1 * i);
            double v[3] = {0.3 * cos(i), 0.2 * sin(3.0 * i), 0.1};
            avi_model_set_state(m, (uint32_t)i, X, v);
        }
        for (uint32_t i = 0; i + 1 < 8; i++) avi_model_add_spring(m, i, i + 1, 50.0 + 10.0 * i, 0.0);
        avi_time_step r = avi_default_time_step();
        r.rule = AVI_DT_FIXED;
        r.fixed = 1e-3;
        ck_assert_int_eq(avi_model_finalize(m, &r), 0);
        models[k] = m;
    }
    engines[0] = avi_engine_create(models[0], NULL);
    avi_sync_options o = avi_default_sync_options();
    engines[1] = avi_engine_create_with(models[1], &o, NULL);
    ck_assert_ptr_nonnull(engines[1]);
    ck_assert(avi_engine_sync_step(engines[1]) == 1e-3);
    double xa[24], xs[24], scale = 0.0, diff = 0.0;
    for (int k = 0; k < 2; k++) ck_assert_int_eq(avi_engine_advance(engines[k], 5.0), AVI_OK);
    avi_engine_state_at(engines[0], 5.0, xa, NULL);
    avi_engine_state_at(engines[1], 5.0, xs, NULL);
    for (int i = 0; i < 24; i++) {
        scale = fmax(scale, fabs(xa[i]));
        diff = fmax(diff, fabs(xa[i] - xs[i]));
    }
    printf("sync-explicit vs AVI at a common step: max difference %.2e (relative %.2e)\n", diff, diff / scale);
    ck_assert(diff / scale < 1e-11);
    ck_assert_uint_eq(avi_engine_events_total(engines[0]), avi_engine_events_total(engines[1]));
    for (int k = 0; k < 2; k++) {
        avi_engine_destroy(engines[k]);
        avi_model_destroy(models[k]);
    }
}
END_TEST

/* The one constructor: the options' type selects the integrator's row of
 * the stepper table (the AVI's event queue or a synchronous stepper); the
 * AVI takes the damping and refuses constraints; NULL options is the
 * undamped AVI. */
START_TEST(test_create_with_selects_the_integrator)
{
    avi_model *m = small_model(1e-3);
    avi_error err;
    avi_engine *e = avi_engine_create_with(m, NULL, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_eq(e->stepper, &avi_event_stepper);
    ck_assert(e->damping == 0.0);
    avi_engine_destroy(e);
    avi_sync_options o = avi_default_sync_options();
    o.type = AVI_INTEGRATOR_AVI;
    o.damping = 0.25;
    e = avi_engine_create_with(m, &o, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_eq(e->stepper, &avi_event_stepper);
    ck_assert(e->damping == 0.25 && avi_engine_sync_step(e) == 0.0);
    avi_engine_destroy(e);
    const avi_constraint link = {AVI_CONSTRAINT_LINK, 4, 5, 1.0, {0, 0, 0}, {0, 0, 1}};
    o.constraints = &link;
    o.constraint_count = 1;
    ck_assert_ptr_null(avi_engine_create_with(m, &o, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "synchronous"));
    o = avi_default_sync_options();
    e = avi_engine_create_with(m, &o, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert(e->stepper != &avi_event_stepper && e->sync);
    ck_assert(avi_engine_sync_step(e) == 1e-3);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST


/* Observers far more frequent than events (rows every 1e-6 s, steps of
 * 1e-2 s): the stop flag set in the third call stops the run there, not
 * after the remaining thousands of observer calls. */
static volatile sig_atomic_t stop_flag;
static int stop_at_third(const avi_engine *e, double t, void *user)
{
    (void)e;
    (void)t;
    if (++*(int *)user == 3) stop_flag = 1;
    return 0;
}

START_TEST(test_stop_between_observers)
{
    avi_model *m = small_model(1e-2);
    avi_engine *e = avi_engine_create(m, NULL);
    int calls = 0;
    stop_flag = 0;
    avi_engine_set_stop_flag(e, &stop_flag);
    ck_assert_int_eq(avi_engine_add_observer(e, 1e-6, stop_at_third, &calls), AVI_OK);
    ck_assert_int_eq(avi_engine_run(e, 2e-2), AVI_INTERRUPTED);
    ck_assert_int_eq(calls, 3);
    ck_assert_double_eq(avi_engine_time(e), 2e-6);
    ck_assert_uint_eq(avi_engine_observer_calls(e, 0), 3);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* Contact alone: a pinned triangle and a free one 5 eta_1 above it moving
 * away at speed v; no potential has a clock, so only the contact manager
 * runs (every 0.2 eta_1 / v). The free triangle starts within the
 * manager's candidate radius (its first lists, vertex-face and edge-edge,
 * are not empty). */
static avi_model *point_over_triangle(double eta1, double v)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double h = 5.0 * eta1;
    const double X[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.2, 0.2, h}, {0.7, 0.2, h}, {0.2, 0.7, h}};
    for (int i = 0; i < 6; i++) avi_model_add_vertex(m, b, X[i]);
    for (uint32_t i = 0; i < 3; i++) ck_assert_int_eq(avi_model_pin(m, i), 0);
    const double vel[3] = {0, 0, v};
    for (uint32_t i = 3; i < 6; i++) {
        ck_assert_int_eq(avi_model_add_mass(m, i, 1.0), 0);
        avi_model_set_state(m, i, X[i], vel);
    }
    const uint32_t tri[2][3] = {{0, 1, 2}, {3, 4, 5}};
    ck_assert_int_eq(avi_model_add_contact_triangles(m, tri, 2), 0);
    avi_contact_settings c = avi_default_contact_settings(eta1);
    c.stiffness = 1e3;
    ck_assert_int_eq(avi_model_set_contact(m, &c), 0);
    avi_time_step r = avi_default_time_step();
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

static void count_beat(const avi_engine *e, double t, void *user)
{
    (void)e;
    (void)t;
    ++*(int *)user;
}

/* While only the contact manager runs, the stop flag still stops the
 * advance (at a manager run: a time boundary) and the heartbeat still
 * beats: 1e4 manager runs give two beats. */
START_TEST(test_stop_while_only_contact_runs)
{
    avi_model *m = point_over_triangle(1e-6, 1.0);
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    int beats = 0;
    avi_engine_set_heartbeat(e, count_beat, &beats);
    stop_flag = 0;
    avi_engine_set_stop_flag(e, &stop_flag);
    ck_assert_int_eq(avi_engine_advance(e, 2e-3), AVI_OK);
    ck_assert_int_ge(beats, 2);
    stop_flag = 1;
    ck_assert_int_eq(avi_engine_advance(e, 4e-3), AVI_INTERRUPTED);
    double t = avi_engine_time(e);
    ck_assert_msg(t >= 2e-3 && t < 2e-3 + 1e-6, "stopped at t = %.17g", t);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* A speed at which the manager's window (0.2 eta_1 / v = 2e-17 s) is below
 * the resolution of t (2.2e-16 at t = 1): an error naming the time, not a
 * spin at one time. */
START_TEST(test_contact_window_below_resolution_is_an_error)
{
    avi_model *m = point_over_triangle(1e-3, 1e-3);
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    ck_assert_int_eq(avi_engine_advance(e, 1.0), AVI_OK);
    /* The vertex at the manager's next run (x is where it will be then),
     * now at 1e13 m/s: the run there finds a window of 2e-17 s. */
    double tr = contact_clock(e)->next_run;
    ck_assert(tr >= 1.0 && tr < 2.0);
    avi_vertex *p = &m->vert[3];
    for (int c = 0; c < 3; c++) p->x[c] += (tr - p->tau) * p->v[c];
    p->tau = tr;
    p->v[2] = 1e13;
    ck_assert_int_eq(avi_engine_advance(e, 2.0), AVI_ERR_RUN);
    ck_assert_msg(strstr(avi_engine_error(e)->message, "does not advance time"), "%s", avi_engine_error(e)->message);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* A contact potential's next event (n > 0) at the time of the event in
 * progress (a layer step below the resolution of t: t + dt == t) is an
 * error, not a spin at one time; a new layer's first event (n = 0) may
 * come at the time of the manager's run that makes it. */
START_TEST(test_contact_event_must_advance_time)
{
    avi_model *m = point_over_triangle(1e-3, 1.0);
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    const uint32_t id = avi_event_id(AVI_KIND_CONTACT, 0);
    e->now = 1e4;
    ck_assert_int_eq(avi_engine_schedule(e, (avi_event){1e4 + 1e-13, id, 7}), AVI_ERR_RUN); /* 1e4 + 1e-13 == 1e4 */
    ck_assert_msg(strstr(avi_engine_error(e)->message, "does not advance time"), "%s", avi_engine_error(e)->message);
    ck_assert_int_eq(avi_engine_schedule(e, (avi_event){1e4, id, 0}), AVI_OK);
    ck_assert_int_eq(avi_engine_schedule(e, (avi_event){1e4 + 1e-11, id, 8}), AVI_OK);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* The engine's whole state through the named-array interface, here kept
 * in memory (no file, no src/run): an engine loaded from another's save
 * continues bitwise as the one saved. */
typedef struct {
    char name[96];
    avi_state_type type;
    size_t n;
    unsigned char *data;
} mem_array;
typedef struct {
    mem_array a[64];
    int n;
} mem_store;
typedef struct {
    avi_state_io io;
    mem_store *st;
    char prefix[32];
} mem_io;

static size_t type_size(avi_state_type t) { return t == AVI_STATE_U8 ? 1 : t == AVI_STATE_U32 ? 4 : 8; }

static mem_array *mem_find(mem_io *m, const char *name)
{
    char full[96];
    ck_assert_int_lt(snprintf(full, sizeof full, "%s%s", m->prefix, name), (int)sizeof full);
    for (int i = 0; i < m->st->n; i++)
        if (!strcmp(m->st->a[i].name, full)) return &m->st->a[i];
    return NULL;
}

static int mem_put_columns(avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width,
                           const void *rows, size_t stride, size_t col)
{
    mem_io *m = (mem_io *)io;
    ck_assert_int_lt(m->st->n, 64);
    ck_assert_ptr_null(mem_find(m, name));
    mem_array *a = &m->st->a[m->st->n++];
    ck_assert_int_lt(snprintf(a->name, sizeof a->name, "%s%s", m->prefix, name), (int)sizeof a->name);
    size_t es = type_size(type);
    a->type = type;
    a->n = n * width;
    a->data = malloc(a->n * es + 1);
    for (size_t i = 0; i < n; i++)
        memcpy(a->data + i * width * es, (const unsigned char *)rows + (i * stride + col) * es, width * es);
    return 0;
}

static int mem_put(avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width, const void *data)
{
    return mem_put_columns(io, name, type, n, width, data, width, 0);
}

static long mem_count(avi_state_io *io, const char *name)
{
    mem_array *a = mem_find((mem_io *)io, name);
    return a ? (long)a->n : -1;
}

static int mem_get(avi_state_io *io, const char *name, avi_state_type type, size_t n, void *data)
{
    mem_array *a = mem_find((mem_io *)io, name);
    if (!a || a->type != type || a->n != n) return -1;
    if (n) memcpy(data, a->data, n * type_size(type));
    return 0;
}

static int mem_group(avi_state_io *io, const char *name, avi_state_group_mode mode, avi_state_io **sub);
static void mem_close(avi_state_io *sub, int failed) { (void)failed; free(sub); }

static mem_io mem_at(mem_store *st, const char *prefix)
{
    mem_io m = {{mem_put, mem_count, mem_get, mem_put_columns, mem_group, mem_close}, st, ""};
    ck_assert_int_lt(snprintf(m.prefix, sizeof m.prefix, "%s", prefix), (int)sizeof m.prefix);
    return m;
}

static int mem_group(avi_state_io *io, const char *name, avi_state_group_mode mode, avi_state_io **sub)
{
    mem_io *m = (mem_io *)io, *g = malloc(sizeof *g);
    char prefix[32];
    ck_assert_int_lt(snprintf(prefix, sizeof prefix, "%s%s/", m->prefix, name), (int)sizeof prefix);
    *g = mem_at(m->st, prefix);
    int there = 0;
    for (int i = 0; i < m->st->n; i++) there |= !strncmp(m->st->a[i].name, prefix, strlen(prefix));
    *sub = &g->io;
    if (mode == AVI_STATE_CREATE || there) return 0;
    free(g);
    *sub = NULL;
    return mode == AVI_STATE_OPEN_IF_PRESENT ? 0 : -1;
}

static int count_calls(const avi_engine *e, double t, void *user)
{
    (void)e;
    (void)t;
    ++*(int *)user;
    return 0;
}

/* Runs model `make` to t1, saves, loads the state into an engine over a
 * second model, and runs both to t2: the same records, counters and
 * observer calls, bit for bit. */
static void round_trip(avi_model *(*make)(void), const avi_sync_options *opt, double t1, double t2)
{
    avi_model *m[2] = {make(), make()};
    avi_engine *e[2];
    int calls[2] = {0, 0};
    avi_error err;
    for (int k = 0; k < 2; k++) {
        e[k] = avi_engine_create_with(m[k], opt, &err);
        ck_assert_msg(e[k] != NULL, "%s", err.message);
        ck_assert_int_eq(avi_engine_add_observer(e[k], t1 / 7.0, count_calls, &calls[k]), AVI_OK);
    }
    ck_assert_msg(avi_engine_run(e[0], t1) == AVI_OK, "%s", avi_engine_error(e[0])->message);
    mem_store st = {.n = 0};
    mem_io io = mem_at(&st, "");
    ck_assert_int_eq(avi_engine_save(e[0], &io.io), 0);
    if (m[0]->has_contact) /* layers active, clocks refined */
        ck_assert(mem_count(&io.io, "contact/potential_type") > 0 && mem_count(&io.io, "refine/potential_level") > 0);
    ck_assert_int_eq(avi_engine_load(e[1], &io.io, &err), AVI_OK);
    ck_assert(avi_engine_time(e[1]) == t1);
    ck_assert_uint_eq(avi_engine_events_total(e[1]), avi_engine_events_total(e[0]));
    ck_assert_uint_eq(avi_engine_observer_calls(e[1], 0), avi_engine_observer_calls(e[0], 0));
    calls[0] = 0;
    for (int k = 0; k < 2; k++) ck_assert_int_eq(avi_engine_run(e[k], t2), AVI_OK);
    ck_assert_int_gt(calls[0], 0);
    ck_assert_int_eq(calls[1], calls[0]);
    ck_assert_uint_eq(avi_engine_events_total(e[1]), avi_engine_events_total(e[0]));
    size_t nv = avi_model_record_count(m[0]);
    ck_assert_int_eq(memcmp(m[0]->vert, m[1]->vert, nv * sizeof *m[0]->vert), 0);
    /* A missing array is a failed load naming nothing else. */
    st.a[0].name[0] = '!';
    ck_assert_int_eq(avi_engine_load(e[1], &io.io, &err), AVI_ERR_INPUT);
    for (int i = 0; i < st.n; i++) free(st.a[i].data);
    for (int k = 0; k < 2; k++) {
        avi_engine_destroy(e[k]);
        avi_model_destroy(m[k]);
    }
}

static avi_model *small(void) { return small_model(1e-3); }
/* A spring triangle falling onto a pinned one: contact layers and
 * refined spring clocks by t1. */
static avi_model *contact_pair(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double X[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0.2, 0.2, 1.5e-3}, {0.7, 0.2, 1.5e-3}, {0.2, 0.7, 1.5e-3}};
    for (int i = 0; i < 6; i++) avi_model_add_vertex(m, b, X[i]);
    for (uint32_t i = 0; i < 3; i++) ck_assert_int_eq(avi_model_pin(m, i), 0);
    const double vel[3] = {0, 0, -0.5};
    for (uint32_t i = 3; i < 6; i++) {
        ck_assert_int_eq(avi_model_add_mass(m, i, 1.0), 0);
        avi_model_set_state(m, i, X[i], vel);
        ck_assert_int_eq(avi_model_add_spring(m, i, i == 5 ? 3 : i + 1, 1e4, 0.0), 0);
    }
    const uint32_t tri[2][3] = {{0, 1, 2}, {3, 4, 5}};
    ck_assert_int_eq(avi_model_add_contact_triangles(m, tri, 2), 0);
    avi_contact_settings c = avi_default_contact_settings(1e-3);
    c.stiffness = 1e3;
    ck_assert_int_eq(avi_model_set_contact(m, &c), 0);
    avi_time_step r = avi_default_time_step();
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

START_TEST(test_engine_state_round_trip)
{
    round_trip(small, NULL, 0.0205, 0.05); /* the AVI: queue, counters, observers */
    round_trip(contact_pair, NULL, 2.6e-3, 4e-3); /* with the contact manager's state and refinement */
    avi_sync_options o = avi_default_sync_options();
    o.h = 1e-3;
    round_trip(small, &o, 0.0205, 0.05); /* sync-explicit: its step count, no clocks */
}
END_TEST

static Suite *engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_common_step_is_leapfrog);
    tcase_add_test(tc, test_stop_between_observers);
    tcase_add_test(tc, test_stop_while_only_contact_runs);
    tcase_add_test(tc, test_contact_window_below_resolution_is_an_error);
    tcase_add_test(tc, test_contact_event_must_advance_time);
    tcase_add_test(tc, test_half_first_impulse_gives_second_order);
    tcase_add_test(tc, test_observer_times);
    tcase_add_test(tc, test_observation_at_zero_is_initial_state);
    tcase_add_test(tc, test_blow_up_is_reported);
    tcase_add_test(tc, test_largest_energy_names_a_nan);
    tcase_add_test(tc, test_sync_explicit_matches_avi);
    tcase_add_test(tc, test_engine_state_round_trip);
    tcase_add_test(tc, test_create_with_selects_the_integrator);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(engine_suite)
