/* The mid-edge bending gradient and energy of AVX2 builds (edges in lanes,
 * src/potentials/midedge.c) against the scalar reference, bit for bit
 * (sign of zero included), through both entries (double arrays, and the
 * engine's registers): interior, free and clamped edges, with and
 * without DOFs, flat, folded and near-degenerate stencils and directors past
 * 90 degrees (a NaN impulse: a NaN in both). In a build without AVX2 both
 * calls are the scalar code and the test passes trivially. */
#include "check_main.h"
#include "potentials/midedge.h"

#include <stdio.h>
#include <string.h>

static uint64_t seed = 424242;
static double urand(void) /* uniform in [0, 1) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

/* A stencil on 6 random points (flat when `flat`): edge modes and DOF signs
 * as given; copied slots hold x_i, as the model's records do. */
static void stencil(avi_midedge *p, double X[9][3], const int mode[3], const int sign[3], int flat)
{
    const double base[6][2] = {{0, 0}, {1, 0}, {0.3, 0.9}, {1.0, 1.0}, {-0.6, 0.6}, {0.5, -0.8}};
    double P[6][3];
    for (int a = 0; a < 6; a++) {
        P[a][0] = base[a][0] + 0.1 * srand1();
        P[a][1] = base[a][1] + 0.1 * srand1();
        P[a][2] = flat ? 0.0 : 0.3 * srand1();
    }
    memset(p, 0, sizeof *p);
    for (int i = 0; i < 3; i++) {
        v3_copy(X[i], P[i]);
        p->v[i] = (uint32_t)i;
        p->mode[i] = (uint8_t)mode[i];
        p->sign[i] = (int8_t)(mode[i] == AVI_MIDEDGE_CLAMPED ? 0 : sign[i]);
    }
    for (int i = 0; i < 3; i++) {
        if (mode[i] == AVI_MIDEDGE_INTERIOR) v3_copy(X[3 + i], P[3 + i]);
        else if (mode[i] == AVI_MIDEDGE_CLAMPED)
            for (int c = 0; c < 3; c++) X[3 + i][c] = P[(i + 1) % 3][c] + P[(i + 2) % 3][c] - P[i][c];
        else v3_copy(X[3 + i], P[i]);
        if (p->sign[i]) X[6 + i][0] = X[6 + i][1] = X[6 + i][2] = 0.0;
        else v3_copy(X[6 + i], P[i]);
    }
    avi_shell_material mat = {2e11, 0.3, 7850, 0.0035};
    ck_assert_int_eq(avi_midedge_init(p, (const double (*)[3])X, &mat), 0);
}

static int same(double a, double b)
{
    return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b));
}

START_TEST(test_midedge_lanes_match_scalar)
{
    int nonfinite = 0, nonfinite_energy = 0, negzero = 0, trials = avi_test_quick() ? 4000 : 40000;
    for (int trial = 0; trial < trials; trial++) {
        int mode[3], sign[3];
        for (int i = 0; i < 3; i++) {
            mode[i] = trial % 4 == 0 ? AVI_MIDEDGE_INTERIOR : (int)(3.0 * urand());
            sign[i] = (int)(3.0 * urand()) - 1; /* -1, 0 (no DOF), +1 */
        }
        int flat = trial % 5 == 1;
        avi_midedge p;
        double X[9][3], x[9][3], g[9][3], gs[9][3];
        stencil(&p, X, mode, sign, flat);
        memcpy(x, X, sizeof x);
        /* small motions, large ones (folds, directors past 90 degrees), none
         * (rest, zero gradients: their signs), pure DOF turns */
        double amp = trial % 7 == 0 ? 0.0 : trial % 3 == 0 ? 0.6 : 0.05;
        for (int a = 0; a < 6; a++)
            for (int c = 0; c < 3; c++) x[a][c] += amp * srand1();
        for (int i = 0; i < 3; i++)
            if (p.sign[i]) x[6 + i][0] = trial % 7 == 0 ? 0.0 : (trial % 11 == 0 ? 3.0 : 0.5) * srand1();
        if (trial % 97 == 3) memcpy(x[2], x[1], sizeof x[2]); /* collapsed triangle */
        for (int i = 0; i < 3; i++) {
            if (mode[i] == AVI_MIDEDGE_FREE) v3_copy(x[3 + i], x[i]);
            if (!p.sign[i]) v3_copy(x[6 + i], x[i]);
        }
        avi_midedge_gradient(&p, (const double (*)[3])x, g);
        avi_midedge_gradient_scalar(&p, (const double (*)[3])x, gs);
        double en = avi_midedge_energy(&p, (const double (*)[3])x), es = avi_midedge_energy_scalar(&p, (const double (*)[3])x);
        ck_assert_msg(same(en, es), "trial %d: energy %a, scalar %a", trial, en, es);
        if (!isfinite(es)) nonfinite_energy++;
#ifdef __AVX2__
        /* the engine's entry: records in registers, lane 3 their tau (not read) */
        __m256d xv[9], gv[9];
        double tau = trial * 1e-7;
        for (int a = 0; a < 9; a++) xv[a] = _mm256_setr_pd(x[a][0], x[a][1], x[a][2], tau);
        avi_midedge_gradient_lanes(&p, xv, gv);
        for (int a = 0; a < 9; a++) {
            double r[4];
            _mm256_storeu_pd(r, gv[a]);
            ck_assert_msg(r[3] == 0.0, "trial %d: lane 3 of g[%d] = %g", trial, a, r[3]);
            for (int c = 0; c < 3; c++)
                ck_assert_msg(same(r[c], gs[a][c]), "trial %d: lanes g[%d][%d] = %a, scalar %a", trial, a, c, r[c],
                              gs[a][c]);
        }
#endif
        for (int a = 0; a < 9; a++)
            for (int c = 0; c < 3; c++) {
                if (!isfinite(gs[a][c])) nonfinite++;
                if (gs[a][c] == 0.0 && signbit(gs[a][c])) negzero++;
                ck_assert_msg(same(g[a][c], gs[a][c]), "trial %d (modes %d %d %d, signs %d %d %d): g[%d][%d] = %a, scalar %a",
                              trial, mode[0], mode[1], mode[2], p.sign[0], p.sign[1], p.sign[2], a, c, g[a][c],
                              gs[a][c]);
            }
    }
    printf("midedge lanes: %d trials, %d non-finite and %d -0 components compared\n", trials, nonfinite, negzero);
    ck_assert_int_gt(nonfinite, 0); /* the folded and collapsed cases ran */
    ck_assert_int_gt(nonfinite_energy, 0);
    ck_assert_int_gt(negzero, 0);   /* and zeros of both signs */
}
END_TEST

static Suite *lanes_suite(void)
{
    Suite *s = suite_create("midedge_lanes");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_midedge_lanes_match_scalar);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(lanes_suite)
