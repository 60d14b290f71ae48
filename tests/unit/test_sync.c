/* Synchronous integrators: convergence orders of sync-implicit, minimization
 * and root finding agree, momenta, damping (synchronous and AVI),
 * constraints, the Euler baselines' energy behaviour, scene keys. */
#include "check_main.h"
#include "avi/avi.h"
#include "avi/sync.h"
#include "core/engine_internal.h"
#include "sync/sync_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const avi_solid_material soft = {1000.0, 0.3, 10.0};

/* A tet and springs sharing vertices, pre-stretched, random velocities;
 * fixed step dt for the AVI's clocks. */
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

/* Positions at T of a synchronous run of the small model. */
static void run_small(avi_integrator_type type, double alpha, double h, double T, double tol, double damping,
                      avi_linear_solver solver, double x[6][3], avi_sync_stats *stats)
{
    avi_model *m = small_model(h);
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.alpha = alpha;
    o.h = h;
    o.tolerance = tol;
    o.damping = damping;
    o.linear_solver = solver;
    avi_error err;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    ck_assert_int_eq(avi_engine_advance(e, T), AVI_OK);
    avi_engine_state_at(e, T, &x[0][0], NULL);
    if (stats) avi_engine_sync_stats(e, stats);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}

static double max_diff(const double a[6][3], const double b[6][3])
{
    double d = 0.0;
    for (int i = 0; i < 6; i++)
        for (int c = 0; c < 3; c++) d = fmax(d, fabs(a[i][c] - b[i][c]));
    return d;
}

/* alpha = 1/2 is the midpoint rule (second order), other alpha first order
 * (Kharevych et al. section 4.3). Errors at T against a fine alpha = 1/2 run;
 * steps on the grid of T. */
START_TEST(test_implicit_orders)
{
    const double T = 0.2, h0 = T / 40;
    double ref[6][3];
    run_small(AVI_INTEGRATOR_SYNC_IMPLICIT, 0.5, h0 / 64, T, 1e-13, 0.0, AVI_SOLVER_CHOLMOD, ref, NULL);
    const double alphas[4] = {0.5, 0.25, 0.75, 1.0};
    for (int a = 0; a < 4; a++) {
        double err[3];
        for (int k = 0; k < 3; k++) {
            double x[6][3];
            run_small(AVI_INTEGRATOR_SYNC_IMPLICIT, alphas[a], h0 / (1 << k), T, 1e-13, 0.0, AVI_SOLVER_CHOLMOD, x, NULL);
            err[k] = max_diff(x, ref);
        }
        double p1 = log2(err[0] / err[1]), p2 = log2(err[1] / err[2]);
        printf("sync-implicit alpha = %.2f: errors %.3e %.3e %.3e, orders %.2f %.2f\n", alphas[a], err[0], err[1],
               err[2], p1, p2);
        double want = alphas[a] == 0.5 ? 2.0 : 1.0;
        ck_assert_msg(fabs(p2 - want) < 0.15, "alpha %g: order %g, want %g", alphas[a], p2, want);
    }
}
END_TEST

/* Minimization and root finding solve the same equations: same states to
 * the solver tolerance; CHOLMOD and PCG too. */
START_TEST(test_minimization_equals_rootfind)
{
    double a[6][3], b[6][3], c[6][3];
    avi_sync_stats sa, sb, sc;
    run_small(AVI_INTEGRATOR_SYNC_IMPLICIT, 0.5, 0.01, 1.0, 1e-12, 0.0, AVI_SOLVER_CHOLMOD, a, &sa);
    run_small(AVI_INTEGRATOR_SYNC_ROOTFIND, 0.5, 0.01, 1.0, 1e-12, 0.0, AVI_SOLVER_CHOLMOD, b, &sb);
    run_small(AVI_INTEGRATOR_SYNC_IMPLICIT, 0.5, 0.01, 1.0, 1e-12, 0.0, AVI_SOLVER_PCG, c, &sc);
    printf("minimization %llu Newton iterations, root finding %llu, PCG minimization %llu (%llu CG)\n",
           (unsigned long long)sa.newton_iterations, (unsigned long long)sb.newton_iterations,
           (unsigned long long)sc.newton_iterations, (unsigned long long)sc.linear_iterations);
    ck_assert_uint_eq(sa.steps, 100);
    ck_assert_double_lt(max_diff(a, b), 1e-9);
    ck_assert_double_lt(max_diff(a, c), 1e-9);
    ck_assert_uint_le(sa.newton_iterations, 5 * sa.steps);
}
END_TEST

/* Positions after `steps` steps of a small rod (the bench's rod of
 * Kharevych et al. Fig. 2, 6 x 2 x 2 cells) with the given method. */
static void rod_run(avi_integrator_type type, avi_linear_solver solver, double h, int steps, double *x,
                    avi_sync_stats *st)
{
    const char *text = "time: {end: 1.0}\n"
                       "integrator: {type: sync-implicit}\n"
                       "time_step: {fixed: 0.01}\n"
                       "materials:\n"
                       "  rubber: {model: neo-hookean, youngs: 3.0e4, poisson: 0.3, density: 1000.0}\n"
                       "bodies:\n"
                       "  - name: rod\n"
                       "    mesh: {generator: tet_box, lx: 1.4, ly: 0.4, lz: 0.4, nx: 6, ny: 2, nz: 2}\n"
                       "    material: rubber\n"
                       "    velocity: [0.01, 0.02, 0.0]\n"
                       "    angular_velocity: [0.5, 0.0, 0.3]\n"
                       "    initial: {scale: 1.05}\n";
    avi_scene sc;
    avi_error err;
    avi_model *m = NULL;
    ck_assert_int_eq(avi_scene_load_string(text, strlen(text), "rod.yaml", NULL, NULL, 0, &sc, &err), 0);
    ck_assert_int_eq(avi_scene_build(&sc, &m, NULL, &err), 0);
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.h = h;
    o.tolerance = 1e-12;
    o.linear_solver = solver;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    ck_assert_int_eq(avi_engine_advance(e, steps * h), AVI_OK);
    avi_engine_state_at(e, steps * h, x, NULL);
    avi_engine_sync_stats(e, st);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_free(&sc);
}

/* Root finding with UMFPACK's LU of the unsymmetric-stored Jacobian (the
 * general nonlinear solver of Kharevych et al. section 5.4) reaches the
 * minimizer's states, at h = 0.01 and at h = 0.1 where the line searches
 * act; LU is refused where it has no meaning. */
START_TEST(test_rootfind_lu)
{
    enum { NV = 7 * 3 * 3 };
    static double a[NV][3], b[NV][3];
    const double hs[2] = {0.01, 0.1};
    for (int k = 0; k < 2; k++) {
        avi_sync_stats sa, sb;
        rod_run(AVI_INTEGRATOR_SYNC_IMPLICIT, AVI_SOLVER_CHOLMOD, hs[k], 10, &a[0][0], &sa);
        rod_run(AVI_INTEGRATOR_SYNC_ROOTFIND, AVI_SOLVER_LU, hs[k], 10, &b[0][0], &sb);
        double d = 0.0, moved = 0.0;
        for (int i = 0; i < NV; i++)
            for (int c = 0; c < 3; c++) d = fmax(d, fabs(a[i][c] - b[i][c]));
        for (int i = 0; i < NV; i++) moved = fmax(moved, fabs(a[i][0] - a[0][0]));
        printf("h = %g: minimization %llu Newton iterations, LU root finding %llu (%llu factorizations), "
               "max difference %.3g\n",
               hs[k], (unsigned long long)sa.newton_iterations, (unsigned long long)sb.newton_iterations,
               (unsigned long long)sb.factorizations, d);
        ck_assert_uint_eq(sb.steps, 10);
        ck_assert_uint_ge(sb.factorizations, sb.newton_iterations);
        ck_assert_uint_eq(sb.indefinite_solves, 0);
        ck_assert(moved > 1.0);
        ck_assert_double_lt(d, 1e-9);
    }
    avi_model *m = small_model(0.01);
    avi_sync_options o = avi_default_sync_options();
    o.h = 0.01;
    o.linear_solver = AVI_SOLVER_LU;
    avi_error err;
    const avi_integrator_type refused[3] = {AVI_INTEGRATOR_SYNC_IMPLICIT, AVI_INTEGRATOR_IMPLICIT_EULER,
                                            AVI_INTEGRATOR_SYNC_EXPLICIT};
    for (int k = 0; k < 3; k++) {
        o.type = refused[k];
        ck_assert_ptr_null(avi_engine_create_with(m, &o, &err));
        ck_assert_int_eq(err.status, AVI_ERR_INPUT);
        ck_assert_ptr_nonnull(strstr(err.message, "lu"));
    }
    o.type = AVI_INTEGRATOR_SYNC_ROOTFIND;
    o.linear_solver = (avi_linear_solver)3;
    ck_assert_ptr_null(avi_engine_create_with(m, &o, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    avi_model_destroy(m);
}
END_TEST

static void momenta(const avi_engine *e, double t, double P[3], double L[3], double *E)
{
    avi_observation o;
    avi_engine_observe(e, t, &o);
    memcpy(P, o.linear_momentum, sizeof o.linear_momentum);
    memcpy(L, o.angular_momentum, sizeof o.angular_momentum);
    if (E) *E = o.total;
}

static double vdiff(const double a[3], const double b[3])
{
    return fmax(fabs(a[0] - b[0]), fmax(fabs(a[1] - b[1]), fabs(a[2] - b[2])));
}

/* Linear and angular momentum of every synchronous integrator with and
 * without damping: round-off for the explicit updates, the solver's
 * tolerance for the implicit ones. Damping only lowers the energy. */
START_TEST(test_momenta_and_damping)
{
    const avi_integrator_type types[4] = {AVI_INTEGRATOR_SYNC_EXPLICIT, AVI_INTEGRATOR_SYNC_IMPLICIT,
                                          AVI_INTEGRATOR_SYNC_ROOTFIND, AVI_INTEGRATOR_IMPLICIT_EULER};
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 2; d++) {
            avi_model *m = small_model(2e-3);
            avi_sync_options o = avi_default_sync_options();
            o.type = types[k];
            o.tolerance = 1e-13;
            o.damping = d ? 0.02 : 0.0;
            avi_engine *e = avi_engine_create_with(m, &o, NULL);
            ck_assert_ptr_nonnull(e);
            double P0[3], L0[3], P[3], L[3], E0, E;
            momenta(e, 0.0, P0, L0, &E0);
            int steps = avi_test_quick() ? 200 : 1000;
            int rc = avi_engine_run(e, steps * 2e-3);
            ck_assert_msg(rc == AVI_OK, "%s: %s", avi_integrator_name(types[k]), avi_engine_error(e)->message);
            momenta(e, steps * 2e-3, P, L, &E);
            double dp = vdiff(P, P0), dl = vdiff(L, L0);
            printf("%s damping %g: |dP| %.2e |dL| %.2e, E %.6f -> %.6f\n", avi_integrator_name(types[k]), o.damping, dp,
                   dl, E0, E);
            double lim = types[k] == AVI_INTEGRATOR_SYNC_EXPLICIT ? 1e-13 : 1e-10;
            ck_assert_double_lt(dp, lim);
            fflush(stdout);
            /* Implicit damping acts at q_k along grad_B D(q_k, q_{k+1}), torque-free about q_{k+1}
             * only: angular momentum to O(h k_D). Implicit Euler is no variational integrator:
             * its forces at q_{k+1} change L by h^2 sum v x grad W. */
            if (!(d && types[k] != AVI_INTEGRATOR_SYNC_EXPLICIT) && types[k] != AVI_INTEGRATOR_IMPLICIT_EULER)
                ck_assert_double_lt(dl, lim);
            if (d) ck_assert_double_lt(E, 0.99 * E0);
            avi_engine_destroy(e);
            avi_model_destroy(m);
        }
}
END_TEST

/* The AVI's damping impulse per event: momenta to round-off, energy
 * decreasing; at a common step close to sync-explicit with damping (not
 * equal: an event's damping reads velocities that earlier events at the
 * same time have already changed). */
START_TEST(test_avi_damping)
{
    avi_model *ma = small_model(2e-3), *ms = small_model(2e-3);
    avi_engine *a = avi_engine_create(ma, NULL);
    avi_sync_options o = avi_default_sync_options();
    o.damping = 0.02;
    avi_engine *s = avi_engine_create_with(ms, &o, NULL);
    ck_assert_int_eq(avi_engine_set_damping(a, 0.02), AVI_OK);
    ck_assert_int_eq(avi_engine_set_damping(a, -1.0), AVI_ERR_INPUT);
    double P0[3], L0[3], E0, P[3], L[3], E, x[6][3], y[6][3];
    momenta(a, 0.0, P0, L0, &E0);
    const double T = 1.0;
    ck_assert_int_eq(avi_engine_advance(a, T), AVI_OK);
    ck_assert_int_eq(avi_engine_advance(s, T), AVI_OK);
    momenta(a, T, P, L, &E);
    avi_engine_state_at(a, T, &x[0][0], NULL);
    avi_engine_state_at(s, T, &y[0][0], NULL);
    printf("AVI with damping: |dP| %.2e |dL| %.2e, E %.5f -> %.5f, |x_avi - x_sync| %.2e\n", vdiff(P, P0), vdiff(L, L0),
           E0, E, max_diff(x, y));
    ck_assert_double_lt(vdiff(P, P0), 1e-13);
    ck_assert_double_lt(vdiff(L, L0), 1e-13);
    ck_assert_double_lt(E, 0.9 * E0);
    ck_assert_double_lt(max_diff(x, y), 0.05);
    avi_engine_destroy(a);
    avi_engine_destroy(s);
    avi_model_destroy(ma);
    avi_model_destroy(ms);
}
END_TEST

static avi_engine *scene_engine(const char *text, const char *const *sets, size_t nsets, avi_scene *sc, avi_model **m,
                                avi_scene_bodies *info, avi_error *err)
{
    ck_assert_int_eq(avi_scene_load_string(text, strlen(text), "test.yaml", NULL, sets, nsets, sc, err), AVI_OK);
    ck_assert_int_eq(avi_scene_build(sc, m, info, err), AVI_OK);
    return avi_engine_create_for_scene(sc, info, *m, err);
}

static void scene_done(avi_engine *e, avi_scene *sc, avi_model *m, avi_scene_bodies *info)
{
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_bodies_free(info);
    avi_scene_free(sc);
}

/* The built-in pendulum: |g| stays at the solver tolerance with every
 * integrator; explicit Euler gains energy, implicit Euler loses it, the
 * symplectic ones keep it in a band. */
START_TEST(test_pendulum)
{
    const int idx = avi_scene_builtin_find("pendulum");
    ck_assert_int_ge(idx, 0);
    const char *text = avi_scene_builtin_text((size_t)idx);
    const char *names[5] = {"sync-explicit", "sync-implicit", "sync-rootfind", "explicit-euler", "implicit-euler"};
    double drift[5];
    for (int k = 0; k < 5; k++) {
        char set[64];
        snprintf(set, sizeof set, "integrator.type=%s", names[k]);
        const char *sets[2] = {set, "time.end=6"};
        avi_scene sc;
        avi_model *m = NULL;
        avi_scene_bodies info;
        avi_error err;
        avi_engine *e = scene_engine(text, sets, 2, &sc, &m, &info, &err);
        ck_assert_msg(e != NULL, "%s", err.message);
        avi_observation o0, o;
        avi_engine_observe(e, 0.0, &o0);
        double lo = o0.total, hi = o0.total;
        for (int i = 1; i <= 600; i++) {
            ck_assert_int_eq(avi_engine_advance(e, i * 0.01), AVI_OK);
            avi_engine_observe(e, i * 0.01, &o);
            lo = fmin(lo, o.total);
            hi = fmax(hi, o.total);
        }
        avi_sync_stats st;
        avi_engine_sync_stats(e, &st);
        drift[k] = o.total - o0.total;
        printf("pendulum %-15s E %.4f -> %.4f (band %.4f .. %.4f), max |g|/L %.2e\n", names[k], o0.total, o.total, lo,
               hi, st.max_constraint_violation);
        ck_assert_double_le(st.max_constraint_violation, 1e-10);
        if (k < 3) ck_assert_double_lt(hi - lo, 0.2);
        scene_done(e, &sc, m, &info);
    }
    ck_assert_double_gt(drift[3], 1.0);
    ck_assert_double_lt(drift[4], -1.0);
}
END_TEST

static const char *particles_scene =
    "time: {end: 1.0}\n"
    "integrator: {type: sync-explicit}\n"
    "time_step: {fixed: 0.01}\n"
    "bodies:\n"
    "  - particles:\n"
    "      - {x: [0, 0, 0], pinned: true}\n"
    "      - {x: [1, 0, 0], mass: 1.0}\n"
    "      - {x: [1, 1, 0], mass: 2.0, v: [0, 0, 1]}\n"
    "      - {x: [0, 0, -2], mass: 1.0, v: [1, 0, 0], constraint: {circle: {center: [0, 0, 0], radius: 2.0, normal: [0, 1, 0]}}}\n"
    "      - {x: [5, 0, 0], mass: 1.0, v: [0, 1, 0], constraint: {sphere: {center: [5, 0, 1], radius: 1.0}}}\n"
    "    links: [{a: 0, b: 1}, {a: 1, b: 2, length: 1.0}]\n"
    "gravity: [0, 0, -9.81]\n";

/* Links, spheres and circles from a scene, every synchronous integrator
 * but sync-explicit4, which refuses them naming the first link; the keys
 * survive the resolved-scene round trip; the AVI refuses them. */
START_TEST(test_scene_constraints)
{
    for (int t = AVI_INTEGRATOR_SYNC_EXPLICIT; t < AVI_INTEGRATOR_COUNT; t++) {
        char set[64];
        snprintf(set, sizeof set, "integrator.type=%s", avi_integrator_name((avi_integrator_type)t));
        const char *sets[1] = {set};
        avi_scene sc;
        avi_model *m = NULL;
        avi_scene_bodies info;
        avi_error err;
        avi_engine *e = scene_engine(particles_scene, sets, 1, &sc, &m, &info, &err);
        if (t == AVI_INTEGRATOR_SYNC_EXPLICIT4) {
            ck_assert_ptr_null(e);
            ck_assert_int_eq(err.status, AVI_ERR_INPUT);
            ck_assert_msg(strstr(err.message, "test.yaml: bodies.0.links: integrator.type sync-explicit4") != NULL,
                          "%s", err.message);
            scene_done(NULL, &sc, m, &info);
            continue;
        }
        ck_assert_msg(e != NULL, "%s", err.message);
        ck_assert_int_eq(avi_engine_run(e, 1.0), AVI_OK);
        double x[5][3];
        avi_engine_state_at(e, avi_engine_time(e), &x[0][0], NULL);
        avi_sync_stats st;
        avi_engine_sync_stats(e, &st);
        printf("constraints %-15s max |g|/L %.2e, %llu constraint iterations\n", avi_integrator_name((avi_integrator_type)t),
               st.max_constraint_violation, (unsigned long long)st.constraint_iterations);
        ck_assert_double_le(st.max_constraint_violation, 1e-10);
        ck_assert_double_lt(fabs(x[3][1]), 1e-8);
        scene_done(e, &sc, m, &info);
    }
    avi_scene sc, back;
    avi_error err;
    ck_assert_int_eq(avi_scene_load_string(particles_scene, strlen(particles_scene), "t.yaml", NULL, NULL, 0, &sc, &err), 0);
    char *text = avi_scene_emit(&sc);
    ck_assert_int_eq(avi_scene_load_string(text, strlen(text), "back.yaml", NULL, NULL, 0, &back, &err), 0);
    ck_assert_uint_eq(back.bodies[0].link_count, 2);
    ck_assert_double_eq(back.bodies[0].links[1].length, 1.0);
    ck_assert_int_eq(back.bodies[0].particles[3].constraint.kind, AVI_SURFACE_CIRCLE);
    ck_assert_int_eq(back.bodies[0].particles[4].constraint.kind, AVI_SURFACE_SPHERE);
    ck_assert_double_eq(back.bodies[0].particles[3].constraint.normal[1], 1.0);
    free(text);
    avi_scene_free(&back);
    /* the AVI refuses constraints */
    avi_model *m = NULL;
    avi_scene_bodies info;
    ck_assert_int_eq(avi_scene_build(&sc, &m, &info, &err), 0);
    sc.integrator.type = AVI_INTEGRATOR_AVI;
    ck_assert_ptr_null(avi_engine_create_for_scene(&sc, &info, m, &err));
    ck_assert_ptr_nonnull(strstr(err.message, "synchronous"));
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&sc);
}
END_TEST

/* Bad constraint keys are errors with their path. */
START_TEST(test_scene_constraint_errors)
{
    static const struct {
        const char *set, *want;
    } cases[] = {
        {"bodies.0.links=[{a: 0, b: 0}]", "two different"},
        {"bodies.0.links=[{a: 0, b: 9}]", "out of range"},
        {"bodies.0.links=[{a: 0, b: 1, size: 2}]", "size"},
        {"bodies.0.particles.1.constraint={cube: {}}", "cube"},
        {"bodies.0.particles.1.constraint={sphere: {center: [0, 0, 0]}}", "radius"},
        {"bodies.0.particles.0.constraint={sphere: {center: [0, 0, 0], radius: 1}}", "pinned"},
        {"bodies.0.particles.3.constraint.circle.normal=[0, 0, 0]", "zero"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        avi_scene sc;
        avi_error err;
        const char *sets[1] = {cases[i].set};
        int rc = avi_scene_load_string(particles_scene, strlen(particles_scene), "t.yaml", NULL, sets, 1, &sc, &err);
        ck_assert_msg(rc == AVI_ERR_INPUT, "%s accepted", cases[i].set);
        ck_assert_msg(strstr(err.message, cases[i].want) != NULL, "%s: %s", cases[i].set, err.message);
        avi_scene_free(&sc);
    }
    /* a link whose length disagrees with the particles, a particle off its sphere */
    const char *bad[2] = {"bodies.0.links=[{a: 0, b: 1, length: 2.0}]",
                          "bodies.0.particles.4.constraint.sphere.radius=2.0"};
    for (int i = 0; i < 2; i++) {
        avi_scene sc;
        avi_model *m = NULL;
        avi_scene_bodies info;
        avi_error err;
        const char *sets[1] = {bad[i]};
        ck_assert_ptr_null(scene_engine(particles_scene, sets, 1, &sc, &m, &info, &err));
        ck_assert_int_eq(err.status, AVI_ERR_INPUT);
        scene_done(NULL, &sc, m, &info);
    }
}
END_TEST

/* PSD projection: eigenvalues clamped, PSD input unchanged. */
START_TEST(test_psd_project)
{
    double H[4] = {1.0, 2.0, 2.0, 1.0}; /* eigenvalues 3, -1 */
    avi_psd_project(H, 2);
    ck_assert_double_eq_tol(H[0], 1.5, 1e-14);
    ck_assert_double_eq_tol(H[1], 1.5, 1e-14);
    ck_assert_double_eq_tol(H[3], 1.5, 1e-14);
    double G[4] = {2.0, 1.0, 1.0, 2.0};
    avi_psd_project(G, 2);
    ck_assert_double_eq(G[0], 2.0);
    ck_assert_double_eq(G[1], 1.0);
}
END_TEST

/* Damping potential: zero and stationary at B = A, momentum-free gradient,
 * and the spring's classic -k_D k dl/dt. */
START_TEST(test_damping_potential)
{
    avi_model *m = small_model(1e-3);
    double A[4][3], B[4][3], g[4][3];
    for (size_t e = 0; e < avi_elem_count(m); e++) {
        avi_elem el = avi_elem_get(m, e);
        for (int a = 0; a < el.n; a++)
            for (int c = 0; c < 3; c++) {
                A[a][c] = m->vert[el.v[a]].x[c];
                B[a][c] = A[a][c] + 0.01 * sin(3.0 * a + c + (double)e);
            }
        ck_assert_double_lt(fabs(avi_damping_energy(&el, (const double (*)[3])A, (const double (*)[3])A)), 1e-12);
        avi_damping_gradient(&el, (const double (*)[3])A, (const double (*)[3])B, g);
        double P[3] = {0, 0, 0}, L[3] = {0, 0, 0}, r[3];
        for (int a = 0; a < el.n; a++) {
            v3_add(P, P, g[a]);
            v3_cross(r, B[a], g[a]);
            v3_add(L, L, r);
        }
        ck_assert_double_lt(v3_norm(P), 1e-12);
        ck_assert_double_lt(v3_norm(L), 1e-12);
    }
    avi_model_destroy(m);
}
END_TEST

/* A square shell of two triangles (bending `bending`), its vertices kicked
 * across the plane: the shared diagonal (mass 2A/3 each) one way, the
 * other corners (A/3) twice as fast the other way, a bending motion with
 * no net momentum. */
static avi_model *kicked_shell(avi_bending bending)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "s");
    const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0.1}, {0, 1, 0}};
    for (int i = 0; i < 4; i++) avi_model_add_vertex(m, b, X[i]);
    const uint32_t tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
    avi_shell_material mat = {1e6, 0.3, 1000.0, 1e-2};
    ck_assert_int_eq(avi_model_add_shell_mesh(m, tri, 2, &mat, bending, 0), AVI_OK);
    for (uint32_t i = 0; i < 4; i++) {
        double v[3] = {0.0, 0.0, i % 2 ? 1.0 : -0.5};
        avi_model_set_state(m, i, X[i], v);
    }
    ck_assert_int_eq(avi_model_finalize(m, NULL), AVI_OK);
    return m;
}

/* Every elastic kind has a Hessian and a damping potential (core/damping.c),
 * mid-edge bending (the default shell) included: the implicit synchronous
 * integrators, the Euler baselines and damping (synchronous and AVI) take
 * the mid-edge shell and step it, keeping linear momentum to the solver's
 * tolerance; without damping the implicit midpoint rule keeps the energy
 * within 1 %, with damping it falls. Before issue 32 the implicit ones and
 * damping refused it (exit 2). */
START_TEST(test_midedge_shell_integrators)
{
    const avi_integrator_type types[5] = {AVI_INTEGRATOR_AVI, AVI_INTEGRATOR_SYNC_EXPLICIT, AVI_INTEGRATOR_SYNC_IMPLICIT,
                                          AVI_INTEGRATOR_SYNC_ROOTFIND, AVI_INTEGRATOR_IMPLICIT_EULER};
    avi_model *m0 = kicked_shell(AVI_BENDING_MIDEDGE);
    ck_assert_int_eq(avi_model_undamped_kind(m0), AVI_KIND_COUNT);
    ck_assert_uint_eq(avi_model_potential_count(m0, AVI_KIND_MIDEDGE), 2);
    avi_model_destroy(m0);
    for (int k = 0; k < 5; k++)
        for (int d = 0; d < 2; d++) {
            avi_model *m = kicked_shell(AVI_BENDING_MIDEDGE);
            avi_sync_options o = avi_default_sync_options();
            o.type = types[k];
            o.tolerance = 1e-12;
            o.damping = d ? 1e-2 : 0.0;
            avi_error err;
            avi_engine *e = avi_engine_create_with(m, &o, &err);
            ck_assert_msg(e != NULL, "%s damping %g: %s", avi_integrator_name(types[k]), o.damping, err.message);
            double P0[3], L0[3], P[3], L[3], E0, E, T = 0.5;
            momenta(e, 0.0, P0, L0, &E0);
            int rc = avi_engine_run(e, T);
            ck_assert_msg(rc == AVI_OK, "%s: %s", avi_integrator_name(types[k]), avi_engine_error(e)->message);
            momenta(e, T, P, L, &E);
            double ps = 0.0; /* sum m |v| at t = 0: 1 kg m/s */
            for (size_t i = 0; i < m->nv; i++) ps += m->mass[i] * (i % 2 ? 1.0 : 0.5);
            double dp = vdiff(P, P0) / ps;
            avi_sync_stats st;
            avi_engine_sync_stats(e, &st);
            printf("midedge shell, %s damping %g: |dP| %.2e of sum m|v|, E %.6g -> %.6g, %llu steps, %llu Newton "
                   "iterations\n", avi_integrator_name(types[k]), o.damping, dp, E0, E, (unsigned long long)st.steps,
                   (unsigned long long)st.newton_iterations);
            ck_assert_double_lt(dp, 1e-9);
            if (d) ck_assert_double_lt(E, 0.99 * E0);
            else if (types[k] == AVI_INTEGRATOR_SYNC_IMPLICIT || types[k] == AVI_INTEGRATOR_SYNC_ROOTFIND)
                ck_assert_double_lt(fabs(E - E0), 0.01 * E0);
            avi_engine_destroy(e);
            avi_model_destroy(m);
        }
}
END_TEST

/* The built-in sheet (model: shell, so bending: midedge by default) on a
 * 6 x 6 grid from its scene: sync-implicit, sync-rootfind (damped and
 * undamped) and the AVI with damping build and run it. */
START_TEST(test_sheet_scene_midedge)
{
    const int idx = avi_scene_builtin_find("sheet");
    ck_assert_int_ge(idx, 0);
    const char *text = avi_scene_builtin_text((size_t)idx);
    const char *cases[5][2] = {{"integrator.type=sync-implicit", "damping=0"},
                               {"integrator.type=sync-implicit", "damping=1e-4"},
                               {"integrator.type=sync-rootfind", "damping=0"},
                               {"integrator.type=sync-rootfind", "damping=1e-4"},
                               {"integrator.type=avi", "damping=1e-5"}};
    for (int k = 0; k < 5; k++) {
        const char *sets[5] = {cases[k][0], cases[k][1], "bodies.sheet.mesh.nx=6", "bodies.sheet.mesh.ny=6",
                               "time.end=0.02"};
        avi_scene sc;
        avi_model *m = NULL;
        avi_scene_bodies info;
        avi_error err;
        avi_engine *e = scene_engine(text, sets, 5, &sc, &m, &info, &err);
        ck_assert_msg(e != NULL, "%s %s: %s", cases[k][0], cases[k][1], err.message);
        ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_MIDEDGE), 72);
        int rc = avi_engine_run(e, 0.02);
        ck_assert_msg(rc == AVI_OK, "%s %s: %s", cases[k][0], cases[k][1], avi_engine_error(e)->message);
        double z = 0.0, x[49][3];
        avi_engine_state_at(e, 0.02, &x[0][0], NULL);
        for (int i = 0; i < 49; i++) z = fmin(z, x[i][2]);
        printf("sheet (midedge) %s %s: lowest z %.4e m at t = 0.02\n", cases[k][0], cases[k][1], z);
        ck_assert(z < 0.0 && z > -0.01); /* falling, g t^2 / 2 = 2e-3 m free */
        scene_done(e, &sc, m, &info);
    }
}
END_TEST

/* A kind that core/damping.c does not name is refused explicitly (NaN and
 * -1), never read as another kind's record. */
START_TEST(test_unnamed_kind_refused)
{
    avi_gravity g = {{0}, {0, 0, -9.81}, 0.0};
    avi_elem el = {AVI_KIND_GRAVITY, 1, g.v, &g};
    double x[1][3] = {{0, 0, 0}}, H[9], gr[1][3];
    ck_assert_int_eq(avi_elem_hessian(&el, (const double (*)[3])x, H), -1);
    for (int k = 0; k < 9; k++) ck_assert(isnan(H[k]));
    ck_assert_int_eq(avi_damping_hessian(&el, (const double (*)[3])x, (const double (*)[3])x, H), -1);
    ck_assert(isnan(H[0]));
    ck_assert(isnan(avi_damping_energy(&el, (const double (*)[3])x, (const double (*)[3])x)));
    avi_damping_gradient(&el, (const double (*)[3])x, (const double (*)[3])x, gr);
    ck_assert(isnan(gr[0][0]));
}
END_TEST

/* Every integrator the same way: a run shorter than the step is refused
 * before anything changes (no silent zero-step or one-full-step run that
 * reports the end time), and a run of one step goes. */
static const avi_integrator_type every_type[] = {AVI_INTEGRATOR_AVI,           AVI_INTEGRATOR_SYNC_EXPLICIT,
                                                 AVI_INTEGRATOR_SYNC_IMPLICIT, AVI_INTEGRATOR_SYNC_ROOTFIND,
                                                 AVI_INTEGRATOR_EXPLICIT_EULER, AVI_INTEGRATOR_IMPLICIT_EULER,
                                                 AVI_INTEGRATOR_DCR};
#define N_TYPES (sizeof every_type / sizeof every_type[0])

static avi_engine *small_engine(avi_integrator_type type, double h, avi_model **m)
{
    *m = small_model(h);
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.h = h;
    avi_error err;
    avi_engine *e = avi_engine_create_with(*m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    return e;
}

START_TEST(test_step_longer_than_run)
{
    const double h = 1e-2;
    for (size_t k = 0; k < N_TYPES; k++) {
        avi_model *m;
        avi_engine *e = small_engine(every_type[k], h, &m);
        double x0[6][3], v0[6][3], x[6][3], v[6][3];
        avi_engine_state_at(e, 0.0, &x0[0][0], &v0[0][0]);
        int rc = avi_engine_run(e, 0.5 * h);
        ck_assert_msg(rc == AVI_ERR_INPUT, "type %d: a run of half a step returned %d, time %g, %llu events",
                      (int)every_type[k], rc, avi_engine_time(e), (unsigned long long)avi_engine_events_total(e));
        ck_assert_msg(strstr(avi_engine_error(e)->message, "longer than the run"), "type %d: %s", (int)every_type[k],
                      avi_engine_error(e)->message);
        ck_assert_double_eq(avi_engine_time(e), 0.0);
        ck_assert_uint_eq(avi_engine_events_total(e), 0);
        avi_engine_state_at(e, 0.0, &x[0][0], &v[0][0]);
        ck_assert(memcmp(x, x0, sizeof x) == 0 && memcmp(v, v0, sizeof v) == 0);
        /* A run of exactly one step, and then on: steps complete. */
        ck_assert_int_eq(avi_engine_run(e, h), AVI_OK);
        ck_assert_int_eq(avi_engine_run(e, 3.5 * h), AVI_OK);
        ck_assert_uint_gt(avi_engine_events_total(e), 0);
        avi_engine_destroy(e);
        avi_model_destroy(m);
    }
}
END_TEST

/* An absurd step (1e300 s) overflows the state: an error naming the time
 * under every integrator, never AVI_OK with a NaN state; for the explicit
 * update also at its first kick alone (t < h), whose velocities (5e301 m/s)
 * square to an infinite kinetic energy. The AVI's first impulses are
 * finite (its state too): the run's blow-up check names that one. */
START_TEST(test_nonfinite_state_is_an_error)
{
    avi_model *m1;
    avi_engine *e1 = small_engine(AVI_INTEGRATOR_SYNC_EXPLICIT, 1e300, &m1);
    ck_assert_int_eq(avi_engine_advance(e1, 0.5e300), AVI_ERR_RUN);
    ck_assert_msg(strstr(avi_engine_error(e1)->message, "t = 0"), "%s", avi_engine_error(e1)->message);
    avi_engine_destroy(e1);
    avi_model_destroy(m1);
    for (size_t k = 0; k < N_TYPES; k++) {
        avi_model *m;
        avi_engine *e = small_engine(every_type[k], 1e300, &m);
        int rc = avi_engine_advance(e, 1.5e300);
        /* The integrator's own state (positions at their last drift). */
        int finite = 1;
        for (int i = 0; i < 6; i++) finite &= v3_isfinite(m->vert[i].x) && v3_isfinite(m->vert[i].v);
        ck_assert_msg(rc == AVI_ERR_RUN || (rc == AVI_OK && finite), "type %d: advance returned %d with a %s state",
                      (int)every_type[k], rc, finite ? "finite" : "non-finite");
        if (rc == AVI_ERR_RUN)
            ck_assert_msg(strstr(avi_engine_error(e)->message, "t = "), "type %d: %s", (int)every_type[k],
                          avi_engine_error(e)->message);
        avi_engine_destroy(e);
        avi_model_destroy(m);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sync");
    TCase *tc = tcase_create("sync");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_psd_project);
    tcase_add_test(tc, test_damping_potential);
    tcase_add_test(tc, test_implicit_orders);
    tcase_add_test(tc, test_minimization_equals_rootfind);
    tcase_add_test(tc, test_rootfind_lu);
    tcase_add_test(tc, test_momenta_and_damping);
    tcase_add_test(tc, test_avi_damping);
    tcase_add_test(tc, test_pendulum);
    tcase_add_test(tc, test_scene_constraints);
    tcase_add_test(tc, test_scene_constraint_errors);
    tcase_add_test(tc, test_midedge_shell_integrators);
    tcase_add_test(tc, test_sheet_scene_midedge);
    tcase_add_test(tc, test_unnamed_kind_refused);
    tcase_add_test(tc, test_step_longer_than_run);
    tcase_add_test(tc, test_nonfinite_state_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
