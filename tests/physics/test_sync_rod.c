/* Long runs of the synchronous integrators (Kharevych et al. 2006, Figs. 2
 * and 3): the rod over 2 million steps of h = 0.004 with sync-explicit keeps
 * its momenta to round-off and its energy in a band with no drift; with
 * damping the energy decays smoothly, nearly independently of h, momenta
 * still kept; the rigid pendulum keeps |g| at the solver tolerance over 1e5
 * steps. Quick versions by default; AVI_TEST_LONG=1 (make test-long) runs
 * the full lengths. */
#include "../unit/check_main.h"
#include "avi/avi.h"
#include "avi/sync.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    avi_scene sc;
    avi_model *m;
    avi_scene_bodies info;
    avi_engine *e;
} run_t;

static void open_builtin(run_t *r, const char *name, const char *const *sets, size_t nsets)
{
    avi_error err;
    int idx = avi_scene_builtin_find(name);
    ck_assert_int_ge(idx, 0);
    const char *text = avi_scene_builtin_text((size_t)idx);
    ck_assert_int_eq(avi_scene_load_string(text, strlen(text), name, NULL, sets, nsets, &r->sc, &err), AVI_OK);
    ck_assert_int_eq(avi_scene_build(&r->sc, &r->m, &r->info, &err), AVI_OK);
    r->e = avi_engine_create_for_scene(&r->sc, &r->info, r->m, &err);
    ck_assert_msg(r->e != NULL, "%s", err.message);
}

static void close_run(run_t *r)
{
    avi_engine_destroy(r->e);
    avi_model_destroy(r->m);
    avi_scene_bodies_free(&r->info);
    avi_scene_free(&r->sc);
}

static double vdev(const double a[3], const double b[3])
{
    double d[3] = {a[0] - b[0], a[1] - b[1], a[2] - b[2]};
    return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

static double vnorm(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

/* Fig. 2: no damping. Energy band and drift (mean of the last quarter minus
 * mean of the first quarter of the rows), momenta deviations. */
START_TEST(test_rod_energy_momenta)
{
    const long steps = avi_test_long() ? 2000000L : 25000L;
    const double h = 0.004, every = 4.0;
    run_t r;
    open_builtin(&r, "rod", NULL, 0);
    ck_assert_double_eq(avi_engine_sync_step(r.e), h);
    long rows = (long)(steps * h / every + 0.5);
    double *E = malloc((size_t)(rows + 1) * sizeof *E);
    avi_observation o0, o;
    avi_engine_observe(r.e, 0.0, &o0);
    E[0] = o0.total;
    double lo = o0.total, hi = o0.total, dp = 0.0, dl = 0.0;
    for (long k = 1; k <= rows; k++) {
        double t = k * every;
        ck_assert_int_eq(avi_engine_advance(r.e, t), AVI_OK);
        avi_engine_observe(r.e, t, &o);
        E[k] = o.total;
        lo = fmin(lo, o.total);
        hi = fmax(hi, o.total);
        dp = fmax(dp, vdev(o.linear_momentum, o0.linear_momentum));
        dl = fmax(dl, vdev(o.angular_momentum, o0.angular_momentum));
    }
    long tenth = rows / 4 > 0 ? rows / 4 : 1; /* quarters: slow beats average out */
    double first = 0.0, last = 0.0;
    for (long k = 0; k < tenth; k++) {
        first += E[k] / tenth;
        last += E[rows - k] / tenth;
    }
    printf("rod, %ld steps of h = %g (sync-explicit): E0 = %.6f J, band [%.6f, %.6f] (%.2f%% of E0), "
           "drift of the mean (last minus first quarter) %.3e (%.2e of E0); |dP|/|P0| = %.2e, |dL|/|L0| = %.2e\n",
           steps, h, o0.total, lo, hi, 100.0 * (hi - lo) / o0.total, last - first, (last - first) / o0.total,
           dp / vnorm(o0.linear_momentum), dl / vnorm(o0.angular_momentum));
    fflush(stdout);
    ck_assert_double_lt(dp / vnorm(o0.linear_momentum), 1e-11);
    ck_assert_double_lt(dl / vnorm(o0.angular_momentum), 1e-11);
    ck_assert_double_lt((hi - lo) / o0.total, 0.15);
    ck_assert_double_lt(fabs(last - first) / o0.total, 0.02);
    free(E);
    close_run(&r);
}
END_TEST

/* Fig. 3: damping. Smooth decay, momenta kept, the curve nearly the same at
 * h and h / 2. */
START_TEST(test_rod_damped)
{
    const double T = avi_test_long() ? 8000.0 : 100.0, every = 4.0;
    const double hs[2] = {0.004, 0.002};
    long rows = (long)(T / every + 0.5);
    double *E[2];
    double E0 = 0.0, dp = 0.0, dl = 0.0, P0n = 1.0, L0n = 1.0, rise = 0.0;
    for (int k = 0; k < 2; k++) {
        char set[64];
        snprintf(set, sizeof set, "time_step.fixed=%.17g", hs[k]);
        const char *sets[1] = {set};
        run_t r;
        open_builtin(&r, "rod_damped", sets, 1);
        E[k] = malloc((size_t)(rows + 1) * sizeof *E[k]);
        avi_observation o0, o;
        avi_engine_observe(r.e, 0.0, &o0);
        E0 = o0.total;
        P0n = vnorm(o0.linear_momentum);
        L0n = vnorm(o0.angular_momentum);
        E[k][0] = o0.total;
        for (long i = 1; i <= rows; i++) {
            ck_assert_int_eq(avi_engine_advance(r.e, i * every), AVI_OK);
            avi_engine_observe(r.e, i * every, &o);
            E[k][i] = o.total;
            rise = fmax(rise, E[k][i] - E[k][i - 1]);
            dp = fmax(dp, vdev(o.linear_momentum, o0.linear_momentum));
            dl = fmax(dl, vdev(o.angular_momentum, o0.angular_momentum));
        }
        close_run(&r);
    }
    double worst = 0.0;
    for (long i = 0; i <= rows; i++) worst = fmax(worst, fabs(E[0][i] - E[1][i]));
    printf("rod_damped to t = %g: E %.4f -> %.4f (h = 0.004), %.4f (h = 0.002); max |E_h - E_h/2| = %.4f "
           "(%.2f%% of E0); largest rise between rows %.3e J; |dP|/|P0| = %.2e, |dL|/|L0| = %.2e\n",
           T, E0, E[0][rows], E[1][rows], worst, 100.0 * worst / E0, rise, dp / P0n, dl / L0n);
    for (int q = 1; q <= 8; q++) {
        long i = (long)(rows * (q / 8.0 * q / 8.0 * q / 8.0)); /* early rows densely */
        printf("  t = %8.1f  E(h=0.004) = %.5f  E(h=0.002) = %.5f\n", i * every, E[0][i], E[1][i]);
    }
    fflush(stdout);
    ck_assert_double_lt(dp / P0n, 1e-11);
    ck_assert_double_lt(dl / L0n, 1e-11);
    ck_assert_double_lt(E[0][rows], 0.5 * E0);
    ck_assert_double_lt(worst / E0, 0.05);
    free(E[0]);
    free(E[1]);
}
END_TEST

/* Section 3.5: the rigid pendulum's |g| / L after every step. */
START_TEST(test_pendulum_constraint)
{
    const long steps = avi_test_long() ? 100000L : 10000L;
    const char *types[2] = {"integrator.type=sync-explicit", "integrator.type=sync-implicit"};
    for (int k = 0; k < 2; k++) {
        char end[64];
        snprintf(end, sizeof end, "time.end=%.17g", steps * 0.01);
        const char *sets[2] = {types[k], end};
        run_t r;
        open_builtin(&r, "pendulum", sets, 2);
        avi_observation o0, o;
        avi_engine_observe(r.e, 0.0, &o0);
        ck_assert_int_eq(avi_engine_run(r.e, steps * 0.01), AVI_OK);
        avi_engine_observe(r.e, steps * 0.01, &o);
        avi_sync_stats st;
        avi_engine_sync_stats(r.e, &st);
        printf("pendulum, %s, %ld steps: max |g|/L = %.2e (tolerance %g), %.2f multiplier iterations per step, "
               "E %.5f -> %.5f\n",
               types[k] + 16, steps, st.max_constraint_violation, r.sc.integrator.tolerance,
               (double)st.constraint_iterations / (double)st.steps, o0.total, o.total);
        fflush(stdout);
        ck_assert_uint_eq(st.steps, (uint64_t)steps);
        ck_assert_double_le(st.max_constraint_violation, r.sc.integrator.tolerance);
        ck_assert_double_lt(fabs(o.total - o0.total), 0.1);
        close_run(&r);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("sync_rod");
    TCase *tc = tcase_create("sync_rod");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, test_pendulum_constraint);
    tcase_add_test(tc, test_rod_energy_momenta);
    tcase_add_test(tc, test_rod_damped);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
