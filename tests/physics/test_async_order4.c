/* Asynchronous fourth order (bench/async_order4.h, measured by
 * bench/async_order4.c): on a free planar chain of alternating stiff
 * (k = 100) and soft (k = 1) springs, nonlinear by geometry, the AVI's macro
 * step on commensurate clocks (soft at H, stiff at H / 10) is symmetric to
 * round-off and second order; its Yoshida triple jump is symmetric, fourth
 * order (error falls >= 12x per halving of H), keeps momenta to round-off
 * with bounded energy, and merges the kicks where stages meet. */
#include "../unit/check_main.h"
#include "../../bench/async_order4.h"

#include <math.h>

enum { N = 16, K = 10 };
static const double T = 8.0;

/* largest position error at T of method m at H against sync-explicit4 at
 * h = 1/5120 (its own error about 1e-13 here) */
static double error_at(enum ao4_method m, double H)
{
    static ao4_chain ref;
    static int have_ref;
    if (!have_ref) {
        ao4_init(&ref, N, 100.0, 1.0);
        ao4_run(&ref, AO4_SYNC4, 1.0 / 512, K, 8 * 512);
        have_ref = 1;
    }
    ao4_chain c;
    ao4_init(&c, N, 100.0, 1.0);
    ao4_run(&c, m, H, K, lround(T / H));
    double e = ao4_distance(&c, &ref);
    ao4_free(&c);
    return e;
}

START_TEST(test_macro_step_symmetric_second_order)
{
    ao4_chain c;
    ao4_init(&c, N, 100.0, 1.0);
    for (double H = 0.5; H > 0.1; H /= 2) {
        double r = ao4_symmetry(&c, H, K, 0);
        ck_assert_msg(r < 1e-12, "Phi_-H o Phi_H - id = %.3g at H = %g", r, H);
    }
    ao4_free(&c);
    double e0 = error_at(AO4_AVI, 1.0 / 32);
    for (int j = 6; j <= 8; j++) {
        double e1 = error_at(AO4_AVI, 1.0 / (1 << j));
        ck_assert_msg(e0 / e1 > 3.5 && e0 / e1 < 4.5, "AVI error ratio %.3f at H = 1/%d", e0 / e1, 1 << j);
        e0 = e1;
    }
}
END_TEST

START_TEST(test_yoshida_symmetric_fourth_order)
{
    ao4_chain c;
    ao4_init(&c, N, 100.0, 1.0);
    double r = ao4_symmetry(&c, 0.5, K, 1);
    ck_assert_msg(r < 1e-12, "Psi_-H o Psi_H - id = %.3g", r);
    ao4_free(&c);
    double e0 = error_at(AO4_AVI4, 1.0 / 16);
    for (int j = 5; j <= 7; j++) {
        double e1 = error_at(AO4_AVI4, 1.0 / (1 << j));
        ck_assert_msg(e0 / e1 >= 12.0, "AVI4 error ratio %.3f at H = 1/%d (error %.3g)", e0 / e1, 1 << j, e1);
        e0 = e1;
    }
    /* the last error stands far above the reference's (about 1e-13) */
    ck_assert(e0 > 1e-11);
}
END_TEST

START_TEST(test_momenta_energy_events)
{
    ao4_chain c;
    ao4_init(&c, N, 100.0, 1.0);
    double p0[3], p1[3], E0 = ao4_energy(&c), first = 0.0, last = 0.0;
    ao4_momenta(&c, p0);
    long steps = avi_test_quick() ? 2000 : 20000;
    const double H = 0.125;
    for (long s = 0; s < steps; s++) {
        ao4_yoshida(&c, H, K, 0);
        if (s % 10 == 9) { /* energy at meeting times, of a flushed copy: the run keeps its kicks merged */
            ao4_chain d;
            ao4_init(&d, N, 100.0, 1.0);
            ao4_copy(&d, &c);
            ao4_flush(&d);
            double e = fabs(ao4_energy(&d) - E0) / E0;
            if (s < steps / 10) first = fmax(first, e);
            if (s >= steps - steps / 10) last = fmax(last, e);
            ao4_free(&d);
        }
    }
    ao4_flush(&c);
    ao4_momenta(&c, p1);
    double scale = 0.0;
    for (int i = 0; i < N; i++) scale += (fabs(c.v[2 * i]) + fabs(c.v[2 * i + 1])) / c.inv_m[i]; /* sum m |v| */
    ck_assert_msg(fabs(p1[0] - p0[0]) < 1e-12 * scale && fabs(p1[1] - p0[1]) < 1e-12 * scale, "linear momentum drifts");
    ck_assert_msg(fabs(p1[2] - p0[2]) < 1e-12 * fabs(p0[2]), "angular momentum %.17g -> %.17g", p0[2], p1[2]);
    ck_assert_msg(first > 0.0 && first < 1e-2 && last < 1.5 * first, "energy error %.3g (first tenth), %.3g (last)",
                  first, last);
    /* per macro step 3 evaluations of each soft spring and 3 K of each
     * stiff one (stage ends merged), one more of each at the last flush */
    double soft = (N - 1) / 2, stiff = N - 1 - soft;
    ck_assert_double_eq(c.events, (double)steps * 3.0 * (soft + K * stiff) + soft + stiff);
    ao4_free(&c);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("async_order4");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_macro_step_symmetric_second_order);
    tcase_add_test(tc, test_yoshida_symmetric_fourth_order);
    tcase_add_test(tc, test_momenta_energy_events);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
