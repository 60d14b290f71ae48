/* Hertz accuracy of penalty-layer contact (issue 20; tests/physics/ball_drop.h,
 * docs/research/contact_energy.md): a solid neo-Hookean ball (R = 0.1 m,
 * E = 1 MPa, nu = 0.3) on a pinned flat, and two such balls, head-on at
 * 0.05 m/s (contact radius a/R = 0.1, delta/a = 0.1), contact thickness
 * 5e-5 (a twentieth of Hertz's peak compression), the concentric-shell
 * ball (avi_mesh_tet_ball_shells) graded 0.6 toward the contact poles
 * (cells 4x finer there). Measured against Hertz with the meshes' own
 * masses: the duration with contact energy > 0, the onset-free duration
 * (the closing rate from v/2 to -v/2) and the peak compression (approach
 * of the centres beyond touch plus the gap left).
 *
 * make test: N = 8 and 12 cells per diameter, the errors fall and stay
 * under the N = 12 bounds (the mapped cube graded alike misses them at
 * N = 12: -7.0 % onset-free, -10.6 % compression on the flat).
 * make test-long: N = 16, 24, 32 (about 15 CPU minutes): the errors fall
 * (the onset-free duration on the flat stalls at -3.0 % from 24 to 32),
 * and at N = 32 the bars hold as measured on the flat (t_c -2.5 %,
 * onset-free -2.98 %, compression -4.5 %); for two balls the onset-free
 * duration (-2.6 %) and the compression (-3.3 %) do, the duration by
 * contact energy does not (-3.5 %, asserted within 4 %): a floor of about
 * 0.3 a/R that refinement does not remove (Hertz is the limit a/R -> 0).
 * At 0.0125 m/s (a/R = 0.056) both configurations meet the bars at N = 32. */
#include "../unit/check_main.h"
#include "ball_drop.h"

#include <stdio.h>

typedef struct {
    double t_c, t_half, compression;
} hertz_error;

/* An impact: closing speed, contact thickness (inner: a fifth) and the
 * shell ball's grading. */
typedef struct {
    double speed, thickness, grading;
} impact;

/* a/R = 0.098; and a/R = 0.056 with the layer scaled to Hertz's peak
 * compression and the pole cells per contact radius kept. */
static const impact standard = {0.05, 5e-5, 0.6}, slow = {0.0125, 1.65e-5, 0.75};

static hertz_error run(int n, int two, const impact *im)
{
    ball_drop_setup s = {n, im->thickness, im->thickness / 5.0, im->speed, two, -1, 0.0, 0.0, 0.0, 0.0, NULL, NULL,
                         im->grading, 1};
    ball_drop_result r;
    ck_assert_msg(ball_drop_run(&s, 200, &r) == 0, "%s, N = %d: the run failed", two ? "two balls" : "flat", n);
    hertz_error h = {(r.t_off - r.t_on) / r.hertz_t - 1.0, r.t_half / r.hertz_t_half - 1.0,
                     r.compression_max / r.hertz_delta - 1.0};
    printf("%s, N = %2d, shells graded %g, %g m/s: duration (contact energy > 0) %+.4f, onset-free %+.4f, "
           "compression %+.4f of Hertz; restitution %.5f, closest %.2e\n",
           two ? "two balls" : "ball on flat", n, im->grading, im->speed, h.t_c, h.t_half, h.compression,
           r.restitution, r.d_min);
    fflush(stdout);
    ck_assert_msg(r.restitution <= 1.0, "restitution %.6f", r.restitution);
    return h;
}

/* Runs the resolutions ns[0..k): each error falls with N (the duration
 * measured by contact energy by at least one observation step, 1/200 of
 * Hertz's; the onset-free one may stall, rising 0.1 % at most, but falls
 * from the coarsest to the finest), and the finest bounds. */
static void converges(int two, const impact *im, const int *ns, int k, double bound_t_c, double bound_t_half,
                      double bound_compression)
{
    hertz_error prev = {0}, first = {0};
    for (int i = 0; i < k; i++) {
        hertz_error h = run(ns[i], two, im);
        if (i == 0) first = h;
        if (i > 0) {
            ck_assert_msg(fabs(h.t_half) < fabs(prev.t_half) + 0.001, "N = %d: duration error %+g after %+g", ns[i],
                          h.t_half, prev.t_half);
            ck_assert_msg(fabs(h.compression) < fabs(prev.compression), "N = %d: compression error %+g after %+g",
                          ns[i], h.compression, prev.compression);
            ck_assert_msg(fabs(h.t_c) <= fabs(prev.t_c) - 0.005 + 1e-9, "N = %d: contact-energy duration error %+g after %+g",
                          ns[i], h.t_c, prev.t_c);
        }
        prev = h;
    }
    ck_assert_msg(fabs(prev.t_half) < fabs(first.t_half), "N = %d: duration error %+g, N = %d: %+g", ns[k - 1],
                  prev.t_half, ns[0], first.t_half);
    ck_assert_msg(fabs(prev.t_c) <= bound_t_c, "N = %d: contact-energy duration error %+g", ns[k - 1], prev.t_c);
    ck_assert_msg(fabs(prev.t_half) <= bound_t_half, "N = %d: duration error %+g", ns[k - 1], prev.t_half);
    ck_assert_msg(fabs(prev.compression) <= bound_compression, "N = %d: compression error %+g", ns[k - 1],
                  prev.compression);
}

START_TEST(test_ball_on_flat)
{
    static const int ns[] = {8, 12};
    converges(0, &standard, ns, 2, 0.06, 0.045, 0.07);
}
END_TEST

START_TEST(test_two_balls)
{
    static const int ns[] = {8, 12};
    converges(1, &standard, ns, 2, 0.06, 0.045, 0.075);
}
END_TEST

START_TEST(test_ball_on_flat_fine)
{
    if (!avi_test_long()) return;
    static const int ns[] = {16, 24, 32};
    converges(0, &standard, ns, 3, 0.03, 0.03, 0.05);
}
END_TEST

START_TEST(test_two_balls_fine)
{
    if (!avi_test_long()) return;
    static const int ns[] = {16, 24, 32};
    converges(1, &standard, ns, 3, 0.04, 0.03, 0.05);
}
END_TEST

/* One resolution against the bars. */
static void within(int two, const impact *im, int n, double bound_t_c, double bound_t_half, double bound_compression)
{
    hertz_error h = run(n, two, im);
    ck_assert_msg(fabs(h.t_c) <= bound_t_c, "N = %d: contact-energy duration error %+g", n, h.t_c);
    ck_assert_msg(fabs(h.t_half) <= bound_t_half, "N = %d: duration error %+g", n, h.t_half);
    ck_assert_msg(fabs(h.compression) <= bound_compression, "N = %d: compression error %+g", n, h.compression);
}

/* Hertz is the limit a/R -> 0: the floor left at 0.05 m/s (about -3 % in
 * duration, -3.5 % in compression, where the onset-free duration stops
 * falling) scales with a/R; at 0.0125 m/s both configurations are within
 * the bars at N = 32 with margin. */
START_TEST(test_ball_on_flat_slow)
{
    if (!avi_test_long()) return;
    within(0, &slow, 32, 0.02, 0.02, 0.04);
}
END_TEST

START_TEST(test_two_balls_slow)
{
    if (!avi_test_long()) return;
    within(1, &slow, 32, 0.03, 0.02, 0.04);
}
END_TEST

static Suite *hertz_suite(void)
{
    Suite *s = suite_create("hertz");
    TCase *tc = tcase_create("impact");
    tcase_set_timeout(tc, 1800);
    tcase_add_test(tc, test_ball_on_flat);
    tcase_add_test(tc, test_two_balls);
    tcase_add_test(tc, test_ball_on_flat_fine);
    tcase_add_test(tc, test_two_balls_fine);
    tcase_add_test(tc, test_ball_on_flat_slow);
    tcase_add_test(tc, test_two_balls_slow);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(hertz_suite)
