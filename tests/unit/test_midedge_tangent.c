/* avi_midedge_tan_alpha (src/potentials/midedge.h), the mid-edge director's
 * tan(alpha) from the hinge frame (tx, ty) by the half-angle and subtraction
 * identities, against the angle form it replaces: theta = atan2(ty, tx),
 * alpha = -theta / 2 + s phi (interior), -theta (clamped), s phi (free),
 * tan(alpha) where |alpha| < pi / 2 and NaN past it. Random angles over the
 * whole circle and DOF turns past 90 degrees, frames of scales 1e-12 to 1e8,
 * and the edge cases: theta = pi (both signs of ty = 0), a wing without
 * area (tx = ty = 0), no DOF (phi not read), NaN input. */
#include "check_main.h"
#include "potentials/midedge.h"

#include <stdio.h>

static uint64_t seed = 20261128;
static double urand(void) /* uniform in [0, 1) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) * (1.0 / 9007199254740992.0);
}

/* The angle form (what second_form computed before the identities). */
static double tan_by_angle(int mode, int sign, double phi, double tx, double ty)
{
    double t = atan2(ty, tx), theta = t == -M_PI ? M_PI : t, psi = sign ? sign * phi : 0.0, alpha;
    switch (mode) {
    case AVI_MIDEDGE_INTERIOR: alpha = -0.5 * theta + psi; break;
    case AVI_MIDEDGE_CLAMPED: alpha = -theta; break;
    default: alpha = psi; break;
    }
    return fabs(alpha) < 0.5 * M_PI ? tan(alpha) : NAN;
}

START_TEST(test_midedge_tangent_matches_angle_form)
{
    int trials = avi_test_quick() ? 20000 : 200000, nan_both = 0, finite = 0;
    double worst = 0.0;
    for (int k = 0; k < trials; k++) {
        int mode = k % 3, sign = (int)(3.0 * urand()) - 1;
        double theta = M_PI * (2.0 * urand() - 1.0), scale = pow(10.0, -12.0 + 20.0 * urand());
        double phi = (k % 5 == 0 ? 3.2 : 0.6) * (2.0 * urand() - 1.0);
        double tx = scale * cos(theta), ty = scale * sin(theta);
        double T = avi_midedge_tan_alpha(mode, sign, phi, tx, ty), R = tan_by_angle(mode, sign, phi, tx, ty);
        /* alpha within 1e-9 of +-90 degrees: either side may round to NaN */
        double t = atan2(ty, tx), psi = sign ? sign * phi : 0.0;
        double alpha = mode == AVI_MIDEDGE_INTERIOR ? -0.5 * t + psi : mode == AVI_MIDEDGE_CLAMPED ? -t : psi;
        if (fabs(fabs(alpha) - 0.5 * M_PI) < 1e-9) continue;
        if (isnan(R)) {
            ck_assert_msg(isnan(T), "mode %d sign %d phi %.17g theta %.17g: %g, angle form NaN", mode, sign, phi,
                          theta, T);
            nan_both++;
            continue;
        }
        ck_assert_msg(isfinite(T), "mode %d sign %d phi %.17g theta %.17g: %g, angle form %g", mode, sign, phi, theta,
                      T, R);
        /* tan's condition: dT = (1 + T^2) dalpha, alpha exact to a few ulps of pi */
        double err = fabs(T - R) / (1.0 + R * R);
        if (err > worst) worst = err;
        ck_assert_msg(err < 2e-15, "mode %d sign %d phi %.17g theta %.17g: %.17g, angle form %.17g", mode, sign, phi,
                      theta, T, R);
        finite++;
    }
    printf("midedge tangent: %d finite, %d NaN in both forms; worst |T - tan(alpha)| / (1 + T^2) = %.2e\n", finite,
           nan_both, worst);
    ck_assert_int_gt(nan_both, trials / 20);
    ck_assert_int_gt(finite, trials / 2);

    /* a free edge is libm's tan of s phi itself */
    ck_assert(avi_midedge_tan_alpha(AVI_MIDEDGE_FREE, -1, 0.3, 1.0, 0.0) == tan(-0.3));
    /* no DOF: phi is not read, even when NaN */
    ck_assert(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 0, NAN, 1.0, 0.0) == 0.0);
    ck_assert(avi_midedge_tan_alpha(AVI_MIDEDGE_FREE, 0, NAN, 1.0, 0.0) == 0.0);
    /* theta = pi (a wing folded onto its face, ty = +-0): alpha = -pi / 2 + psi */
    for (int s = 0; s < 2; s++) {
        double ty = s ? -0.0 : 0.0;
        ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 1, 0.0, -2.0, ty)));
        ck_assert(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 1, 0.5, -2.0, ty) == tan(-0.5 * M_PI + 0.5));
        ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 1, -0.5, -2.0, ty)));
        ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_CLAMPED, 0, 0.0, -2.0, ty)));
    }
    /* a wing without area: theta = atan2(0, 0) = 0 */
    ck_assert(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 1, 0.25, 0.0, 0.0) == tan(0.25));
    ck_assert(avi_midedge_tan_alpha(AVI_MIDEDGE_CLAMPED, 0, 0.0, 0.0, 0.0) == 0.0);
    /* exactly 90 degrees is past the limit, as |alpha| < pi / 2 was */
    ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_CLAMPED, 0, 0.0, 0.0, 1.0)));
    /* NaN in, NaN out (the engine's blow-up check) */
    ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 1, 0.0, NAN, 1.0)));
    ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_CLAMPED, 0, 0.0, 1.0, NAN)));
    ck_assert(isnan(avi_midedge_tan_alpha(AVI_MIDEDGE_INTERIOR, 1, NAN, 1.0, 0.0)));
}
END_TEST

static Suite *tangent_suite(void)
{
    Suite *s = suite_create("midedge_tangent");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_midedge_tangent_matches_angle_form);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(tangent_suite)
