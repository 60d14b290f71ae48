/* sync-explicit4 (src/sync/explicit4.c), Yoshida's triple jump of velocity
 * Verlet: fourth order measured (the error at a fixed time falls by at
 * least 12x per halving of h, where sync-explicit's falls by about 4x) on a
 * nonlinear (spring) pendulum under gravity, a spring network, tetrahedra
 * with springs and gravity, and a shell of membranes with mid-edge bending;
 * momenta kept to 1e-12; energy bounded over 1e7 steps; three gradient
 * evaluations counted per step; damping and constraints refused. */
#include "../unit/check_main.h"
#include "avi/avi.h"
#include "avi/sync.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A 1 kg mass on a spring (k = 100 N/m, rest length 1 m) from a pinned
 * point, released 60 degrees out under gravity: swing and stretch couple
 * (omega_spring = 10 rad/s, the swing about 3 rad/s), a nonlinear pendulum. */
static avi_model *pendulum(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "p");
    const double X[2][3] = {{0, 0, 0}, {0.8660254037844386, 0, -0.5}};
    for (int i = 0; i < 2; i++) avi_model_add_vertex(m, b, X[i]);
    ck_assert_int_eq(avi_model_add_mass(m, 1, 1.0), AVI_OK);
    ck_assert_int_eq(avi_model_pin(m, 0), AVI_OK);
    ck_assert_int_eq(avi_model_add_spring(m, 0, 1, 100.0, 1.0), AVI_OK);
    avi_model_set_gravity(m, (const double[3]){0, 0, -9.81});
    ck_assert_int_eq(avi_model_finalize(m, NULL), AVI_OK);
    return m;
}

/* A free 3 x 3 x 2 lattice of unit masses, springs (k = 100) on the cube
 * edges and face diagonals, stretched 4 % and sheared, spinning and
 * rippling: every spring nonlinear, non-zero momenta, no gravity. */
static avi_model *network(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "n");
    double X[18][3];
    int n = 0;
    for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++)
            for (int i = 0; i < 3; i++, n++) {
                X[n][0] = i - 1.0; /* centred: L is not a small difference */
                X[n][1] = j - 1.0;
                X[n][2] = k - 0.5;
                avi_model_add_vertex(m, b, X[n]);
                ck_assert_int_eq(avi_model_add_mass(m, (uint32_t)n, 1.0 + 0.1 * (n % 3)), AVI_OK);
            }
    for (int a = 0; a < n; a++)
        for (int c = a + 1; c < n; c++) {
            double d2 = 0.0;
            for (int q = 0; q < 3; q++) d2 += (X[c][q] - X[a][q]) * (X[c][q] - X[a][q]);
            if (d2 < 2.01) ck_assert_int_eq(avi_model_add_spring(m, (uint32_t)a, (uint32_t)c, 100.0, -1.0), AVI_OK);
        }
    for (int a = 0; a < n; a++) {
        double x[3] = {1.04 * X[a][0] + 0.05 * X[a][2], 1.04 * X[a][1], 1.04 * X[a][2]};
        double v[3] = {-0.3 * X[a][1] + 0.1 * sin(a + 1.0), 0.3 * X[a][0] + 0.1 * cos(2.0 * a), 0.01 + 0.05 * sin(3.0 * a)};
        ck_assert_int_eq(avi_model_set_state(m, (uint32_t)a, x, v), AVI_OK);
    }
    ck_assert_int_eq(avi_model_finalize(m, NULL), AVI_OK);
    return m;
}

/* A neo-Hookean tet and springs sharing vertices, one vertex pinned,
 * pre-stretched, under gravity. */
static avi_model *tet_springs(void)
{
    static const avi_solid_material soft = {1000.0, 0.3, 10.0};
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double X[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 1}, {2, 1, 0}};
    for (int i = 0; i < 6; i++) avi_model_add_vertex(m, b, X[i]);
    ck_assert_int_eq(avi_model_add_tet(m, 0, 1, 2, 3, &soft), AVI_OK);
    ck_assert_int_eq(avi_model_add_spring(m, 3, 4, 200.0, -1.0), AVI_OK);
    ck_assert_int_eq(avi_model_add_spring(m, 4, 5, 100.0, -1.0), AVI_OK);
    ck_assert_int_eq(avi_model_add_spring(m, 1, 5, 300.0, 0.5), AVI_OK);
    ck_assert_int_eq(avi_model_add_mass(m, 4, 0.7), AVI_OK);
    ck_assert_int_eq(avi_model_add_mass(m, 5, 1.3), AVI_OK);
    for (uint32_t i = 0; i < 6; i++) {
        double x[3] = {X[i][0] * 1.05, X[i][1], X[i][2] * 0.97};
        double v[3] = {0.3 * sin(i + 1.0), 0.2 * cos(2.0 * i), -0.1 * i};
        ck_assert_int_eq(avi_model_set_state(m, i, x, v), AVI_OK);
    }
    ck_assert_int_eq(avi_model_pin(m, 0), AVI_OK);
    avi_model_set_gravity(m, (const double[3]){0, 0, -9.81});
    ck_assert_int_eq(avi_model_finalize(m, NULL), AVI_OK);
    return m;
}

/* Two triangles of a bent square shell (membranes and mid-edge bending,
 * whose edge DOFs the step carries too), released from a 4 % stretch. */
static avi_model *shell(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "s");
    const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0.1}, {0, 1, 0}};
    for (int i = 0; i < 4; i++) avi_model_add_vertex(m, b, X[i]);
    const uint32_t tri[2][3] = {{0, 1, 2}, {0, 2, 3}};
    avi_shell_material mat = {1e6, 0.3, 1000.0, 1e-2};
    ck_assert_int_eq(avi_model_add_shell_mesh(m, tri, 2, &mat, AVI_BENDING_MIDEDGE, 0), AVI_OK);
    for (uint32_t i = 0; i < 4; i++) {
        double x[3] = {X[i][0] * 1.04, X[i][1], X[i][2] + 0.05 * X[i][0] * X[i][1]};
        ck_assert_int_eq(avi_model_set_state(m, i, x, NULL), AVI_OK);
    }
    ck_assert_int_eq(avi_model_finalize(m, NULL), AVI_OK);
    return m;
}

typedef avi_model *(*model_fn)(void);

/* The smallest step the model's rule gives (safety 0.25: h omega = 0.5). */
static double rule_step(model_fn make)
{
    avi_model *m = make();
    double h = INFINITY;
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (!avi_model_potential_count(m, (avi_kind)k)) continue;
        double lo, hi;
        avi_model_time_step_range(m, (avi_kind)k, &lo, &hi);
        h = fmin(h, lo);
    }
    avi_model_destroy(m);
    return h;
}

/* Positions of every vertex at T after steps of h (T a multiple of h). */
static double *positions(model_fn make, avi_integrator_type type, double h, double T)
{
    avi_model *m = make();
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.h = h;
    avi_error err;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    ck_assert_msg(avi_engine_advance(e, T) == AVI_OK, "h = %g: %s", h, avi_engine_error(e)->message);
    size_t nv = avi_model_vertex_count(m);
    double *x = malloc(3 * nv * sizeof *x);
    avi_engine_state_at(e, T, x, NULL);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    return x;
}

static double max_diff(const double *a, const double *b, size_t n)
{
    double d = 0.0;
    for (size_t i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
    return d;
}

/* Errors at T for h0, h0 / 2, h0 / 4, h0 / 8 against the same integrator at
 * h0 / 256; returns the smallest ratio of successive errors. h0 is a power
 * of two times the model's rule step, so every h divides T exactly. */
static double order_ratio(const char *name, model_fn make, avi_integrator_type type, double h0, int steps0)
{
    double T = h0 * steps0;
    avi_model *m = make();
    size_t n = 3 * avi_model_vertex_count(m);
    avi_model_destroy(m);
    double *ref = positions(make, type, h0 / 256, T);
    double err[4], worst = INFINITY;
    for (int k = 0; k < 4; k++) {
        double *x = positions(make, type, ldexp(h0, -k), T);
        err[k] = max_diff(x, ref, n);
        free(x);
        if (k) worst = fmin(worst, err[k - 1] / err[k]);
    }
    printf("%s, %s to T = %.4g: max |x - x_ref| at h0 = %.4g and halvings: %.3e %.3e %.3e %.3e; ratios %.2f %.2f "
           "%.2f\n",
           name, avi_integrator_name(type), T, h0, err[0], err[1], err[2], err[3], err[0] / err[1], err[1] / err[2],
           err[2] / err[3]);
    fflush(stdout);
    free(ref);
    return worst;
}

/* Order 4 where sync-explicit shows order 2, on each model at h0 omega = 1
 * (twice the rule step) down to h0 omega = 1/8. */
START_TEST(test_order_four)
{
    static const struct {
        const char *name;
        model_fn make;
        double scale; /* h0 / rule step */
        int steps0;
    } cases[] = {{"spring pendulum", pendulum, 2.0, 40},
                 {"spring network", network, 2.0, 40},
                 {"tet, springs, gravity", tet_springs, 1.0, 40},
                 {"shell, mid-edge bending", shell, 1.0, 40}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double h0 = cases[c].scale * rule_step(cases[c].make);
        double r4 = order_ratio(cases[c].name, cases[c].make, AVI_INTEGRATOR_SYNC_EXPLICIT4, h0, cases[c].steps0);
        double r2 = order_ratio(cases[c].name, cases[c].make, AVI_INTEGRATOR_SYNC_EXPLICIT, h0, cases[c].steps0);
        ck_assert_msg(r4 >= 12.0, "%s: sync-explicit4 error fell by only %.2fx per halving", cases[c].name, r4);
        /* the measurement tells the orders apart */
        ck_assert_msg(r2 < 6.0, "%s: sync-explicit error fell by %.2fx per halving", cases[c].name, r2);
    }
}
END_TEST

static double vdev(const double a[3], const double b[3])
{
    return sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]));
}

static double vnorm(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

/* The free network (drifting slowly, so that x stays near the origin and
 * L = sum m x cross v is no small difference) keeps P and L to 1e-12 (relative)
 * over 1e5 steps at the rule step (each step three kicks of forces summing to zero, with zero
 * moment); three gradient evaluations counted per step and potential. */
START_TEST(test_momenta_and_events)
{
    avi_model *m = network();
    avi_sync_options o = avi_default_sync_options();
    o.type = AVI_INTEGRATOR_SYNC_EXPLICIT4;
    avi_error err;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    double h = avi_engine_sync_step(e);
    ck_assert_double_eq(h, rule_step(network));
    const long steps = avi_test_quick() ? 10000 : 100000, rows = 100;
    avi_observation o0, ob;
    avi_engine_observe(e, 0.0, &o0);
    double dp = 0.0, dl = 0.0;
    for (long r = 1; r <= rows; r++) {
        double t = (double)(r * (steps / rows)) * h;
        ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
        avi_engine_observe(e, t, &ob);
        dp = fmax(dp, vdev(ob.linear_momentum, o0.linear_momentum) / vnorm(o0.linear_momentum));
        dl = fmax(dl, vdev(ob.angular_momentum, o0.angular_momentum) / vnorm(o0.angular_momentum));
    }
    size_t springs = avi_model_potential_count(m, AVI_KIND_SPRING);
    printf("spring network, %ld steps of sync-explicit4 at h = %.4g: |dP|/|P0| = %.2e, |dL|/|L0| = %.2e; %llu "
           "spring events for %zu springs\n",
           steps, h, dp, dl, (unsigned long long)avi_engine_event_count(e, AVI_KIND_SPRING), springs);
    fflush(stdout);
    ck_assert_double_lt(dp, 1e-12);
    ck_assert_double_lt(dl, 1e-12);
    ck_assert_uint_eq(avi_engine_event_count(e, AVI_KIND_SPRING), 3 * (uint64_t)steps * springs);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* Energy over 1e7 steps of the pendulum at the rule step (h omega = 0.5):
 * the band is set in the first swings and does not widen, and the mean of
 * the last tenth is the mean of the first (no drift). */
START_TEST(test_energy_bounded)
{
    const long steps = avi_test_quick() ? 100000L : 10000000L, rows = 10000;
    avi_model *m = pendulum();
    avi_sync_options o = avi_default_sync_options();
    o.type = AVI_INTEGRATOR_SYNC_EXPLICIT4;
    avi_error err;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    double h = avi_engine_sync_step(e);
    avi_observation ob;
    avi_engine_observe(e, 0.0, &ob);
    double E0 = ob.total, early = 0.0, band = 0.0, first = 0.0, last = 0.0;
    const long tenth = rows / 10;
    for (long r = 1; r <= rows; r++) {
        double t = (double)(r * (steps / rows)) * h;
        ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
        avi_engine_observe(e, t, &ob);
        double d = fabs(ob.total - E0) / fabs(E0);
        band = fmax(band, d);
        if (r <= tenth) early = fmax(early, d), first += (ob.total - E0) / tenth;
        if (r > rows - tenth) last += (ob.total - E0) / tenth;
    }
    printf("spring pendulum, %ld steps of sync-explicit4 at h = %.4g (T = %.4g s): max |E - E0|/|E0| %.3e (first "
           "tenth %.3e); mean (E - E0)/|E0| first tenth %.3e, last tenth %.3e\n",
           steps, h, steps * h, band, early, first / fabs(E0), last / fabs(E0));
    fflush(stdout);
    /* measured: band 2.98e-3 (first tenth 2.95e-3), means 6.338e-4 and
     * 6.334e-4 (1e5 steps, AVI_TEST_QUICK: 6.382e-4 and 6.276e-4, tenths of
     * 500 s against slow beats); a drifting integrator moves the mean by
     * about the band */
    ck_assert_double_lt(band, 4e-3);
    ck_assert_double_lt(band, 1.05 * early);
    ck_assert_double_lt(fabs(last - first) / fabs(E0), 0.01 * band);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* Damping and constraints are refused (a backward substep would amplify
 * damping, and SHAKE is not the substep the composition needs), through the
 * constructor and avi_engine_set_damping. */
START_TEST(test_refusals)
{
    avi_model *m = pendulum();
    avi_sync_options o = avi_default_sync_options();
    o.type = AVI_INTEGRATOR_SYNC_EXPLICIT4;
    avi_error err;
    o.damping = 0.01;
    ck_assert_ptr_null(avi_engine_create_with(m, &o, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "damping"));
    o.damping = 0.0;
    avi_constraint c = {AVI_CONSTRAINT_LINK, 0, 1, 1.0, {0, 0, 0}, {0, 0, 0}};
    o.constraints = &c;
    o.constraint_count = 1;
    ck_assert_ptr_null(avi_engine_create_with(m, &o, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "constraints"));
    o.constraints = NULL;
    o.constraint_count = 0;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_int_eq(avi_engine_set_damping(e, 0.01), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_engine_set_damping(e, 0.0), AVI_OK);
    ck_assert_str_eq(avi_integrator_name(AVI_INTEGRATOR_SYNC_EXPLICIT4), "sync-explicit4");
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sync_order4");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_order_four);
    tcase_add_test(tc, test_momenta_and_events);
    tcase_add_test(tc, test_energy_bounded);
    tcase_add_test(tc, test_refusals);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
