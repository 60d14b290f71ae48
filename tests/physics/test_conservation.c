/* Conservation over long AVI runs of free bodies (no pins, no gravity):
 * linear and angular momentum to round-off over 10^6 events with time steps
 * spread over more than 10x, and bounded energy over 10^7 events. */
#include "../unit/check_main.h"
#include "avi/avi.h"
#include "avi/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graded_models.h"

static avi_model *graded_tet_bar_levels(int levels)
{
    avi_model *m = graded_tet_bar_with((graded_setup){levels, 0.0, 0.0, AVI_BENDING_HINGE});
    ck_assert_ptr_nonnull(m);
    return m;
}

static avi_model *graded_tet_bar(void) { return graded_tet_bar_levels(-1); }

static avi_model *graded_shell_levels(int levels)
{
    avi_model *m = graded_shell_with((graded_setup){levels, 0.0, 0.0, AVI_BENDING_HINGE});
    ck_assert_ptr_nonnull(m);
    return m;
}

static avi_model *graded_shell(void) { return graded_shell_levels(-1); }

/* The same strip with bending: midedge (edge rotation DOFs). */
static avi_model *graded_midedge_shell(void)
{
    avi_model *m = graded_shell_with((graded_setup){-1, 0.0, 1.01, AVI_BENDING_MIDEDGE});
    ck_assert_ptr_nonnull(m);
    return m;
}

/* Spread of all elastic time steps (max / min over every kind). */
static double dt_spread(const avi_model *m)
{
    double lo = INFINITY, hi = 0.0;
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (!avi_model_potential_count(m, (avi_kind)k)) continue;
        double a, b;
        avi_model_time_step_range(m, (avi_kind)k, &a, &b);
        lo = fmin(lo, a);
        hi = fmax(hi, b);
    }
    return hi / lo;
}

typedef struct {
    double p0[3], l0[3], p_scale, l_scale;
    double p_err, l_err;
    double e0, e_min, e_max;
    /* energy samples for the drift estimate */
    int n;
    double *t, *e;
} tracker;

static void track(const avi_engine *e, double t, tracker *k)
{
    avi_observation o;
    avi_engine_observe(e, t, &o);
    double dp[3], dl[3];
    for (int c = 0; c < 3; c++) {
        dp[c] = o.linear_momentum[c] - k->p0[c];
        dl[c] = o.angular_momentum[c] - k->l0[c];
    }
    k->p_err = fmax(k->p_err, sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]) / k->p_scale);
    k->l_err = fmax(k->l_err, sqrt(dl[0] * dl[0] + dl[1] * dl[1] + dl[2] * dl[2]) / k->l_scale);
    k->e_min = fmin(k->e_min, o.total);
    k->e_max = fmax(k->e_max, o.total);
    k->t[k->n] = t;
    k->e[k->n] = o.total;
    k->n++;
}

/* Runs until `events` events have happened, observing `samples` times.
 * Momentum errors are relative to sum m|v| and sum m|x||v| at t = 0 (the
 * natural scale when the total itself may be small). */
static tracker run_tracked(avi_model *m, uint64_t events, int samples)
{
    avi_engine *e = avi_engine_create(m, NULL);
    ck_assert_ptr_nonnull(e);
    tracker k = {0};
    k.t = calloc((size_t)samples + 2, sizeof(double));
    k.e = calloc((size_t)samples + 2, sizeof(double));
    avi_observation o;
    avi_engine_observe(e, 0.0, &o);
    size_t nv = avi_model_vertex_count(m);
    double *x = malloc(nv * 3 * sizeof *x), *v = malloc(nv * 3 * sizeof *v);
    avi_engine_state_at(e, 0.0, x, v);
    for (size_t i = 0; i < nv; i++) {
        double mass = avi_model_vertex_mass(m, (uint32_t)i);
        double sp = sqrt(v[3 * i] * v[3 * i] + v[3 * i + 1] * v[3 * i + 1] + v[3 * i + 2] * v[3 * i + 2]);
        double r = sqrt(x[3 * i] * x[3 * i] + x[3 * i + 1] * x[3 * i + 1] + x[3 * i + 2] * x[3 * i + 2]);
        k.p_scale += mass * sp;
        k.l_scale += mass * sp * r;
    }
    free(x);
    free(v);
    for (int c = 0; c < 3; c++) {
        k.p0[c] = o.linear_momentum[c];
        k.l0[c] = o.angular_momentum[c];
    }
    k.e0 = k.e_min = k.e_max = o.total;
    /* Estimate the simulated time per event from a short run. */
    double t_probe = 1e-9;
    while (avi_engine_events_total(e) < 1000) {
        t_probe *= 2.0;
        ck_assert_int_eq(avi_engine_advance(e, t_probe), AVI_OK);
    }
    double t_end = t_probe * (double)events / (double)avi_engine_events_total(e);
    for (int s = 1; s <= samples; s++) {
        double t = t_end * s / samples;
        int rc = avi_engine_advance(e, t);
        ck_assert_msg(rc == AVI_OK, "advance to %g: %s", t, avi_engine_error(e)->message);
        track(e, t, &k);
    }
    avi_engine_destroy(e);
    return k;
}

/* Drift: the least-squares slope of total energy against time, times the
 * run's duration, relative to the band (max - min). A bounded oscillation
 * gives a small ratio; a secular drift gives a ratio near 1. */
static double drift_ratio(const tracker *k)
{
    double st = 0.0, se = 0.0;
    for (int i = 0; i < k->n; i++) {
        st += k->t[i] / k->n;
        se += k->e[i] / k->n;
    }
    double num = 0.0, den = 0.0;
    for (int i = 0; i < k->n; i++) {
        num += (k->t[i] - st) * (k->e[i] - se);
        den += (k->t[i] - st) * (k->t[i] - st);
    }
    double slope = num / den;
    return fabs(slope) * (k->t[k->n - 1] - k->t[0]) / (k->e_max - k->e_min);
}

START_TEST(test_momentum_tet_bar)
{
    avi_model *m = graded_tet_bar();
    double spread = dt_spread(m);
    uint64_t events = avi_test_quick() ? 100000 : 1000000;
    tracker k = run_tracked(m, events, 200);
    printf("tet bar: %zu tets, dt spread %.1fx, %llu events: linear momentum rel. error %.2e, angular %.2e\n",
           avi_model_potential_count(m, AVI_KIND_TET), spread, (unsigned long long)events, k.p_err, k.l_err);
    ck_assert(spread >= 10.0);
    ck_assert(k.p_err <= 1e-12);
    ck_assert(k.l_err <= 1e-12);
    free(k.t);
    free(k.e);
    avi_model_destroy(m);
}
END_TEST

static void momentum_shell(avi_model *m)
{
    double spread = dt_spread(m);
    uint64_t events = avi_test_quick() ? 100000 : 1000000;
    tracker k = run_tracked(m, events, 200);
    printf("shell: %zu membranes + %zu hinges + %zu midedge, dt spread %.1fx, %llu events: linear momentum rel. "
           "error %.2e, angular %.2e\n",
           avi_model_potential_count(m, AVI_KIND_MEMBRANE), avi_model_potential_count(m, AVI_KIND_HINGE),
           avi_model_potential_count(m, AVI_KIND_MIDEDGE), spread, (unsigned long long)events, k.p_err, k.l_err);
    ck_assert(spread >= 10.0);
    ck_assert(k.p_err <= 1e-12);
    ck_assert(k.l_err <= 1e-12);
    free(k.t);
    free(k.e);
    avi_model_destroy(m);
}

START_TEST(test_momentum_shell) { momentum_shell(graded_shell()); }
END_TEST

START_TEST(test_momentum_midedge_shell) { momentum_shell(graded_midedge_shell()); }
END_TEST

static void energy_run(avi_model *m, const char *what)
{
    uint64_t events = avi_test_quick() ? 1000000 : avi_test_long() ? 100000000 : 10000000;
    tracker k = run_tracked(m, events, 2000);
    double band = (k.e_max - k.e_min) / fabs(k.e0);
    double drift = drift_ratio(&k);
    printf("%s: %llu events, total energy band (max-min)/E0 = %.3e, fitted drift over the run / band = %.3f\n", what,
           (unsigned long long)events, band, drift);
    ck_assert(band < 0.1);
    ck_assert(drift < 0.25);
    free(k.t);
    free(k.e);
}

START_TEST(test_energy_bounded_tet_bar)
{
    avi_model *m = graded_tet_bar();
    energy_run(m, "tet bar");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_energy_bounded_shell)
{
    avi_model *m = graded_shell();
    energy_run(m, "shell");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_energy_bounded_midedge_shell)
{
    avi_model *m = graded_midedge_shell();
    energy_run(m, "shell, bending: midedge");
    avi_model_destroy(m);
}
END_TEST

/* Exact steps (time_step.levels_per_octave = 0, the default rule rounds
 * steps to 16 levels per octave): momentum to round-off and no energy
 * drift, as on levels. Each run gets a fresh model. */
static void exact_steps_run(avi_model *(*build)(int levels), const char *what)
{
    avi_model *m = build(0);
    tracker k = run_tracked(m, avi_test_quick() ? 100000 : 1000000, 200);
    printf("%s, exact steps: linear momentum rel. error %.2e, angular %.2e\n", what, k.p_err, k.l_err);
    ck_assert(k.p_err <= 1e-12);
    ck_assert(k.l_err <= 1e-12);
    free(k.t);
    free(k.e);
    avi_model_destroy(m);
    m = build(0);
    char name[64];
    snprintf(name, sizeof name, "%s, exact steps", what);
    energy_run(m, name);
    avi_model_destroy(m);
}

START_TEST(test_exact_steps_tet_bar) { exact_steps_run(graded_tet_bar_levels, "tet bar"); }
END_TEST

START_TEST(test_exact_steps_shell) { exact_steps_run(graded_shell_levels, "shell"); }
END_TEST

static Suite *conservation_suite(void)
{
    Suite *s = suite_create("conservation");
    TCase *tc = tcase_create("physics");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_momentum_tet_bar);
    tcase_add_test(tc, test_momentum_shell);
    tcase_add_test(tc, test_energy_bounded_tet_bar);
    tcase_add_test(tc, test_energy_bounded_shell);
    tcase_add_test(tc, test_momentum_midedge_shell);
    tcase_add_test(tc, test_energy_bounded_midedge_shell);
    tcase_add_test(tc, test_exact_steps_tet_bar);
    tcase_add_test(tc, test_exact_steps_shell);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(conservation_suite)
