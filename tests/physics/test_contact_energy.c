/* Energy of penalty-layer contact on a solid ball (issue 20;
 * tests/physics/ball_drop.h, docs/research/contact_energy.md).
 *
 * make test: where the elastic steps on the vertices in contact resolve the
 * layers' stiffness (thick layers), a frictionless impact on a pinned flat
 * keeps its energy and never comes out faster than it went in, and two free
 * balls keep their linear momentum.
 * make test-long: the bar for thin layers, which fails today (a
 * known failure, tests/README.md): the elastic clocks on vertices in
 * contact are not refined yet. */
#include "../unit/check_main.h"
#include "ball_drop.h"

#include <stdio.h>

static ball_drop_result run(ball_drop_setup s, const char *what)
{
    ball_drop_result r;
    ck_assert_msg(ball_drop_run(&s, 200, &r) == 0, "%s: the run failed", what);
    printf("%s: (E_end - E0) / E0 %+.2e, mean after contact %+.2e, max |E - E0| / E0 %.2e, restitution %.5f, "
           "|dp| / p %.1e, closest %.3e, t_c / Hertz - 1 %+.3f, delta_max / Hertz - 1 %+.3f\n",
           what, r.de_end / r.e0, r.de_after / r.e0, r.de_max / r.e0, r.restitution, r.dp_max, r.d_min,
           (r.t_off - r.t_on) / r.hertz_t - 1.0, r.delta_max / r.hertz_delta - 1.0);
    fflush(stdout);
    ck_assert_msg(r.d_min > s.inner, "%s: closest distance %g within the inner thickness", what, r.d_min);
    return r;
}

/* Thick layers: omega_v dt_el about 1.4 (docs/research/contact_energy.md);
 * the ball keeps 1 - e^2 of its energy as vibration. */
START_TEST(test_ball_on_flat_thick_layers)
{
    for (int levels = -1; levels <= 0; levels++) {
        ball_drop_setup s = {8, 5e-4, 1e-4, 0.2, 0, levels, 0.0, 0.0, 0.0, 0.0, NULL, NULL};
        ball_drop_result r = run(s, levels ? "ball on flat, 5e-4, step levels" : "ball on flat, 5e-4, exact steps");
        ck_assert_msg(fabs(r.de_after) <= 1e-3 * r.e0, "energy after contact %+g of E0", r.de_after / r.e0);
        ck_assert_msg(r.restitution > 0.9 && r.restitution <= 1.0, "restitution %.6f", r.restitution);
    }
}
END_TEST

START_TEST(test_two_balls_momentum)
{
    ball_drop_setup s = {4, 5e-4, 1e-4, 0.2, 1, -1, 0.0, 0.0, 0.0, 0.0, NULL, NULL};
    ball_drop_result r = run(s, "two balls, N = 4, 5e-4");
    ck_assert_msg(r.dp_max <= 1e-12, "linear momentum changed by %g of m v", r.dp_max);
    ck_assert_msg(fabs(r.de_after) <= 2e-3 * r.e0, "energy after contact %+g of E0", r.de_after / r.e0);
    ck_assert_msg(r.restitution <= 1.0, "restitution %.6f", r.restitution);
}
END_TEST

/* The bar at eta_1 = 5e-5 (+26 % and restitution 1.09 today). */
START_TEST(test_ball_on_flat_thin_layers)
{
    if (!avi_test_long()) return;
    for (int levels = -1; levels <= 0; levels++) {
        ball_drop_setup s = {8, 5e-5, 1e-5, 0.2, 0, levels, 0.0, 0.0, 0.0, 0.0, NULL, NULL};
        ball_drop_result r = run(s, levels ? "ball on flat, 5e-5, step levels" : "ball on flat, 5e-5, exact steps");
        ck_assert_msg(fabs(r.de_end) <= 1e-3 * r.e0, "energy gained %+g of E0", r.de_end / r.e0);
        ck_assert_msg(r.restitution <= 1.001, "restitution %.6f", r.restitution);
    }
}
END_TEST

static Suite *contact_energy_suite(void)
{
    Suite *s = suite_create("contact_energy");
    TCase *tc = tcase_create("ball");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_ball_on_flat_thick_layers);
    tcase_add_test(tc, test_two_balls_momentum);
    tcase_add_test(tc, test_ball_on_flat_thin_layers);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(contact_energy_suite)
