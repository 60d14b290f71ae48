/* Springs, neo-Hookean tetrahedra and gravity: gradients against finite
 * differences of the energy, Hessians against finite differences of the
 * gradient, at random non-degenerate configurations. Mid-edge bending
 * triangles: gradient (vertex and edge-DOF slots) against finite differences
 * on curved rest shapes, zero energy and gradient at rest, invariance under
 * rigid rotations; Hessian (every slot) against finite differences of the
 * gradient. */
#include "check_main.h"
#include "fd.h"
#include "potentials/gravity.h"
#include "potentials/midedge.h"
#include "potentials/midedge_hessian.h"
#include "potentials/spring.h"
#include "potentials/tet_neohookean.h"

#include <stdio.h>
#include <string.h>

static uint64_t seed = 12345;
static double urand(void) /* uniform in [0, 1) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

static double spring_e(const void *p, const double *x) { return avi_spring_energy(p, (const double (*)[3])x); }
static void spring_g(const void *p, const double *x, double *g)
{ avi_spring_gradient(p, (const double (*)[3])x, (double (*)[3])g); }
static void spring_h(const void *p, const double *x, double *H)
{ avi_spring_hessian(p, (const double (*)[3])x, (double (*)[6])H); }

static double tet_e(const void *p, const double *x) { return avi_tet_energy(p, (const double (*)[3])x); }
static void tet_g(const void *p, const double *x, double *g)
{ avi_tet_gradient(p, (const double (*)[3])x, (double (*)[3])g); }
static void tet_h(const void *p, const double *x, double *H)
{ avi_tet_hessian(p, (const double (*)[3])x, (double (*)[12])H); }

START_TEST(test_spring_derivatives)
{
    double worst_g = 0.0, worst_h = 0.0;
    for (int trial = 0; trial < 200; trial++) {
        avi_spring s = {{0, 1}, 0.5 + 10.0 * urand(), trial % 4 == 0 ? 0.0 : 0.2 + urand(), 0.0};
        double x[6];
        for (int i = 0; i < 6; i++) x[i] = srand1();
        double eg = fd_gradient_error(&s, spring_e, spring_g, x, 6, 1e-6);
        double eh = fd_hessian_error(&s, spring_g, spring_h, x, 6, 1e-6);
        worst_g = fmax(worst_g, eg);
        worst_h = fmax(worst_h, eh);
    }
    printf("spring: worst relative FD error gradient %.2e, Hessian %.2e\n", worst_g, worst_h);
    ck_assert(worst_g <= 1e-6);
    ck_assert(worst_h <= 1e-6);
}
END_TEST

static void random_tet(double X[4][3])
{
    /* A regular-ish tet with random perturbation, positively oriented. */
    static const double base[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    for (;;) {
        double s = 0.1 + 2.0 * urand();
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 3; c++) X[a][c] = s * (base[a][c] + 0.3 * srand1());
        avi_tet t;
        if (avi_tet_init(&t, X, 1.0, 1.0) > 0.01 * s * s * s) return;
    }
}

START_TEST(test_tet_derivatives)
{
    double worst_g = 0.0, worst_h = 0.0;
    for (int trial = 0; trial < 300; trial++) {
        double X[4][3], x[4][3];
        random_tet(X);
        avi_tet t;
        double mu = 0.1 + urand(), lambda = trial % 3 == 0 ? 0.0 : 5.0 * urand();
        ck_assert(avi_tet_init(&t, X, mu, lambda) > 0.0);
        /* Deform: random affine map near identity, plus noise, kept non-inverted. */
        double amp = trial % 2 ? 0.4 : 0.1;
        for (;;) {
            double A[9];
            for (int k = 0; k < 9; k++) A[k] = (k % 4 == 0 ? 1.0 : 0.0) + amp * srand1();
            for (int a = 0; a < 4; a++)
                for (int i = 0; i < 3; i++)
                    x[a][i] = A[3 * i] * X[a][0] + A[3 * i + 1] * X[a][1] + A[3 * i + 2] * X[a][2] + 0.05 * srand1();
            double F[9];
            avi_tet_deformation(&t, (const double (*)[3])x, F);
            if (m3_det(F) > 0.2) break;
        }
        double h = 1e-6 * (1.0 + fabs(x[1][0]));
        worst_g = fmax(worst_g, fd_gradient_error(&t, tet_e, tet_g, &x[0][0], 12, h));
        worst_h = fmax(worst_h, fd_hessian_error(&t, tet_g, tet_h, &x[0][0], 12, h));
    }
    printf("tet: worst relative FD error gradient %.2e, Hessian %.2e\n", worst_g, worst_h);
    ck_assert(worst_g <= 1e-6);
    ck_assert(worst_h <= 1e-6);
}
END_TEST

/* The vectorized gradient (AVX2 builds) must equal the scalar one bit for
 * bit: same operations per component, same order. Deformed, inverted and
 * flat tets, with and without the log term. */
START_TEST(test_tet_gradient_matches_scalar)
{
    int nonfinite = 0;
    for (int trial = 0; trial < 2000; trial++) {
        double X[4][3], x[4][3], g[4][3], gs[4][3];
        random_tet(X);
        avi_tet t;
        avi_tet_init(&t, X, 0.7, trial % 2 ? 1.3 : 0.0);
        double amp = trial < 1000 ? 0.05 : 1.0; /* large: many inverted */
        for (int a = 0; a < 4; a++)
            for (int k = 0; k < 3; k++) x[a][k] = X[a][k] + amp * srand1();
        if (trial % 500 == 7) memcpy(x[3], x[2], sizeof x[3]); /* flat: J = 0 */
        avi_tet_gradient(&t, (const double (*)[3])x, g);
        avi_tet_gradient_scalar(&t, (const double (*)[3])x, gs);
        for (int a = 0; a < 4; a++)
            for (int k = 0; k < 3; k++) {
                if (!isfinite(gs[a][k])) nonfinite++;
                ck_assert_msg(memcmp(&g[a][k], &gs[a][k], sizeof(double)) == 0 || (isnan(g[a][k]) && isnan(gs[a][k])),
                              "trial %d: g[%d][%d] = %.17g, scalar %.17g", trial, a, k, g[a][k], gs[a][k]);
            }
    }
    ck_assert_int_gt(nonfinite, 0); /* the inverted and flat cases ran */
}
END_TEST

START_TEST(test_tet_rest_state_and_invariance)
{
    for (int trial = 0; trial < 50; trial++) {
        double X[4][3], g[4][3];
        random_tet(X);
        avi_tet t;
        avi_tet_init(&t, X, 0.7, 1.3);
        ck_assert(fabs(avi_tet_energy(&t, (const double (*)[3])X)) < 1e-12);
        avi_tet_gradient(&t, (const double (*)[3])X, g);
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 3; c++) ck_assert(fabs(g[a][c]) < 1e-10);
        /* A rigid rotation about z and a translation: zero energy and the
         * gradient of a deformed state has zero net force and torque. */
        double x[4][3], c = cos(0.7), s = sin(0.7);
        for (int a = 0; a < 4; a++) {
            x[a][0] = c * X[a][0] - s * X[a][1] + 3.0;
            x[a][1] = s * X[a][0] + c * X[a][1] - 1.0;
            x[a][2] = X[a][2] + 0.5;
        }
        ck_assert(fabs(avi_tet_energy(&t, (const double (*)[3])x)) < 1e-12);
        /* A small random deformation that keeps the tet positive. */
        double F[9];
        do {
            for (int a = 0; a < 4; a++)
                for (int k = 0; k < 3; k++) x[a][k] += 0.02 * srand1();
            avi_tet_deformation(&t, (const double (*)[3])x, F);
        } while (!(m3_det(F) > 0.2));
        avi_tet_gradient(&t, (const double (*)[3])x, g);
        /* Relative to the sizes of the terms that cancel. */
        double f[3] = {0, 0, 0}, tq[3] = {0, 0, 0}, r[3], fs = 0.0, ts = 0.0;
        for (int a = 0; a < 4; a++) {
            v3_add(f, f, g[a]);
            v3_cross(r, x[a], g[a]);
            v3_add(tq, tq, r);
            fs += v3_norm(g[a]);
            ts += v3_norm(r);
        }
        ck_assert_msg(v3_norm(f) <= 1e-13 * fs && v3_norm(tq) <= 1e-12 * ts, "net force %g of %g, torque %g of %g",
                      v3_norm(f), fs, v3_norm(tq), ts);
    }
}
END_TEST

START_TEST(test_gravity_gradient)
{
    avi_gravity p = {{0}, {0.0, 0.0, -9.81 * 2.0}, 0.0};
    double x[1][3] = {{0.3, -0.2, 1.5}}, g[1][3];
    avi_gravity_gradient(&p, (const double (*)[3])x, g);
    double h = 1e-4;
    for (int c = 0; c < 3; c++) {
        double xp[1][3] = {{x[0][0], x[0][1], x[0][2]}}, xm[1][3] = {{x[0][0], x[0][1], x[0][2]}};
        xp[0][c] += h;
        xm[0][c] -= h;
        double fd = (avi_gravity_energy(&p, (const double (*)[3])xp) - avi_gravity_energy(&p, (const double (*)[3])xm)) / (2 * h);
        ck_assert(fabs(fd - g[0][c]) <= 1e-9 * (1.0 + fabs(g[0][c])));
    }
}
END_TEST


/* A mid-edge stencil: a curved (random-height) rest triangle with its three
 * across vertices, each edge interior, free or clamped (mode), DOF slots
 * at phi = 0 where the edge has a DOF. Slots that copy slot i hold x_i. */
static void midedge_rest_height(avi_midedge *p, double X[9][3], const int mode[3], double height)
{
    const double base[6][2] = {{0, 0}, {1, 0}, {0.3, 0.9}, {1.0, 1.0}, {-0.6, 0.6}, {0.5, -0.8}};
    double P[6][3];
    for (int a = 0; a < 6; a++) {
        P[a][0] = base[a][0] + 0.1 * srand1();
        P[a][1] = base[a][1] + 0.1 * srand1();
        P[a][2] = height * srand1();
    }
    memset(p, 0, sizeof *p);
    memset(X, 0, 9 * sizeof X[0]);
    for (int i = 0; i < 3; i++) {
        v3_copy(X[i], P[i]);
        p->v[i] = (uint32_t)i;
        p->mode[i] = (uint8_t)mode[i];
        p->sign[i] = (int8_t)(mode[i] == AVI_MIDEDGE_CLAMPED ? 0 : (i % 2 ? -1 : 1));
    }
    for (int i = 0; i < 3; i++) {
        if (mode[i] == AVI_MIDEDGE_INTERIOR) v3_copy(X[3 + i], P[3 + i]);
        else if (mode[i] == AVI_MIDEDGE_CLAMPED) /* the ghost: flat continuation */
            for (int c = 0; c < 3; c++) X[3 + i][c] = P[(i + 1) % 3][c] + P[(i + 2) % 3][c] - P[i][c];
        else v3_copy(X[3 + i], P[i]);
        if (!p->sign[i]) v3_copy(X[6 + i], P[i]);
    }
    avi_shell_material mat = {2e11, 0.3, 7850, 0.005};
    ck_assert_int_eq(avi_midedge_init(p, (const double (*)[3])X, &mat), 0);
}

static void midedge_rest(avi_midedge *p, double X[9][3], const int mode[3]) { midedge_rest_height(p, X, mode, 0.3); }

static double midedge_e(const void *p, const double *x) { return avi_midedge_energy(p, (const double (*)[3])x); }
static void midedge_g(const void *p, const double *x, double *g)
{ avi_midedge_gradient(p, (const double (*)[3])x, (double (*)[3])g); }

static void midedge_h(const void *p, const double *x, double *H)
{ avi_midedge_hessian(p, (const double (*)[3])x, (double (*)[27])H); }

START_TEST(test_midedge_gradient)
{
    double worst = 0.0;
    for (int trial = 0; trial < 300; trial++) {
        int mode[3];
        for (int i = 0; i < 3; i++) mode[i] = trial < 100 ? AVI_MIDEDGE_INTERIOR : (int)(3.0 * urand());
        avi_midedge p;
        double X[9][3], x[9][3];
        midedge_rest(&p, X, mode);
        memcpy(x, X, sizeof x);
        for (int a = 0; a < 6; a++)
            for (int c = 0; c < 3; c++) x[a][c] += 0.1 * srand1();
        for (int i = 0; i < 3; i++)
            if (p.sign[i]) x[6 + i][0] = 0.5 * srand1();
        /* copied slots follow their vertex, as records would */
        for (int i = 0; i < 3; i++) {
            if (mode[i] == AVI_MIDEDGE_FREE) v3_copy(x[3 + i], x[i]);
            if (!p.sign[i]) v3_copy(x[6 + i], x[i]);
        }
        double g[27];
        midedge_g(&p, (const double *)x, g);
        for (int i = 0; i < 3; i++) {
            if (mode[i] == AVI_MIDEDGE_FREE) ck_assert(v3_norm(&g[3 * (3 + i)]) == 0.0);
            if (!p.sign[i]) ck_assert(v3_norm(&g[3 * (6 + i)]) == 0.0);
            else ck_assert(g[3 * (6 + i) + 1] == 0.0 && g[3 * (6 + i) + 2] == 0.0);
        }
        double e = fd_gradient_error(&p, midedge_e, midedge_g, (const double *)x, 27, 1e-6);
        if (e > worst) worst = e;
    }
    printf("midedge: worst relative FD gradient error %.2e\n", worst);
    ck_assert(worst <= 1e-6);
}
END_TEST

/* Hessian against central differences of the gradient: every edge mode
 * (interior, free, clamped), curved and flat rest shapes, bent, flat
 * (in-plane moves only, phi = 0) and at-rest current shapes; copied slots
 * and a DOF's components 1, 2 have zero rows; H is symmetric. */
START_TEST(test_midedge_hessian)
{
    double worst = 0.0;
    for (int trial = 0; trial < 400; trial++) {
        int mode[3], shape = trial % 4; /* 0 curved bent, 1 flat bent, 2 flat moved in plane, 3 curved at rest */
        for (int i = 0; i < 3; i++) mode[i] = trial < 100 ? AVI_MIDEDGE_INTERIOR : (int)(3.0 * urand());
        avi_midedge p;
        double X[9][3], x[9][3];
        midedge_rest_height(&p, X, mode, shape == 1 || shape == 2 ? 0.0 : 0.3);
        memcpy(x, X, sizeof x);
        if (shape != 3) {
            for (int a = 0; a < 6; a++)
                for (int c = 0; c < (shape == 2 ? 2 : 3); c++) x[a][c] += 0.1 * srand1();
            for (int i = 0; i < 3; i++)
                if (p.sign[i] && shape != 2) x[6 + i][0] = 0.5 * srand1();
        }
        for (int i = 0; i < 3; i++) {
            if (mode[i] == AVI_MIDEDGE_FREE) v3_copy(x[3 + i], x[i]);
            if (!p.sign[i]) v3_copy(x[6 + i], x[i]);
        }
        static double H[27][27];
        midedge_h(&p, (const double *)x, (double *)H);
        for (int r = 0; r < 27; r++) {
            int s = r / 3, c = r % 3, i = s % 3;
            int zero = (s >= 3 && s < 6 && mode[i] == AVI_MIDEDGE_FREE) || (s >= 6 && (!p.sign[i] || c != 0));
            for (int k = 0; k < 27; k++) {
                ck_assert(H[r][k] == H[k][r]);
                if (zero) ck_assert(H[r][k] == 0.0);
            }
        }
        double e = fd_hessian_error(&p, midedge_g, midedge_h, (const double *)x, 27, 1e-6);
        if (e > worst) worst = e;
    }
    printf("midedge: worst relative FD Hessian error %.2e\n", worst);
    ck_assert(worst <= 1e-6);
}
END_TEST

/* Zero energy and gradient at the (curved) rest state; energy unchanged by
 * a rigid rotation and translation of the vertices (phi fixed), and the
 * gradient's net force and torque vanish. */
START_TEST(test_midedge_rest_and_invariance)
{
    for (int trial = 0; trial < 100; trial++) {
        int mode[3] = {trial % 3, (trial / 3) % 3, (trial / 9) % 3};
        avi_midedge p;
        double X[9][3], x[9][3], y[9][3], g[9][3];
        midedge_rest(&p, X, mode);
        ck_assert(avi_midedge_energy(&p, (const double (*)[3])X) == 0.0);
        avi_midedge_gradient(&p, (const double (*)[3])X, g);
        for (int a = 0; a < 9; a++) ck_assert(v3_norm(g[a]) < 1e-9 * p.ka);
        memcpy(x, X, sizeof x);
        for (int a = 0; a < 6; a++)
            for (int c = 0; c < 3; c++) x[a][c] += 0.05 * srand1();
        for (int i = 0; i < 3; i++)
            if (p.sign[i]) x[6 + i][0] = 0.3 * srand1();
        for (int i = 0; i < 3; i++)
            if (mode[i] == AVI_MIDEDGE_FREE) v3_copy(x[3 + i], x[i]);
        double e = avi_midedge_energy(&p, (const double (*)[3])x);
        /* rotation about a random axis by a random angle, plus a shift */
        double ax[3] = {srand1(), srand1(), srand1()}, th = 3.0 * srand1();
        v3_scale(ax, ax, 1.0 / v3_norm(ax));
        memcpy(y, x, sizeof y);
        for (int a = 0; a < 6; a++) {
            double r[3], k[3];
            v3_copy(r, x[a]);
            v3_cross(k, ax, r);
            double d = v3_dot(ax, r);
            for (int c = 0; c < 3; c++)
                y[a][c] = r[c] * cos(th) + k[c] * sin(th) + ax[c] * d * (1.0 - cos(th)) + 0.7 * (c + 1);
        }
        if (mode[0] == AVI_MIDEDGE_CLAMPED || mode[1] == AVI_MIDEDGE_CLAMPED || mode[2] == AVI_MIDEDGE_CLAMPED)
            continue; /* a clamped edge holds a frozen direction: not invariant, by design */
        double ey = avi_midedge_energy(&p, (const double (*)[3])y);
        ck_assert_msg(fabs(ey - e) <= 1e-10 * (fabs(e) + p.ka * 1e-6), "energy %g rotated %g", e, ey);
        avi_midedge_gradient(&p, (const double (*)[3])x, g);
        double f[3] = {0, 0, 0}, tq[3] = {0, 0, 0}, fs = 0.0;
        for (int a = 0; a < 6; a++) {
            double r[3];
            v3_add(f, f, g[a]);
            v3_cross(r, x[a], g[a]);
            v3_add(tq, tq, r);
            fs += v3_norm(g[a]);
        }
        ck_assert_msg(v3_norm(f) <= 1e-12 * fs && v3_norm(tq) <= 1e-11 * fs, "net force %g torque %g of %g",
                      v3_norm(f), v3_norm(tq), fs);
    }
}
END_TEST

static Suite *fd_suite(void)
{
    Suite *s = suite_create("potentials_fd");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_spring_derivatives);
    tcase_add_test(tc, test_tet_derivatives);
    tcase_add_test(tc, test_tet_rest_state_and_invariance);
    tcase_add_test(tc, test_tet_gradient_matches_scalar);
    tcase_add_test(tc, test_gravity_gradient);
    tcase_add_test(tc, test_midedge_gradient);
    tcase_add_test(tc, test_midedge_hessian);
    tcase_add_test(tc, test_midedge_rest_and_invariance);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(fd_suite)
