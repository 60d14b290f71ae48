/* Constant-strain StVK membrane triangle: derivatives against central finite
 * differences at random configurations, rest state, invariances, energy of a
 * known stretch, degenerate triangles and the inradius. */
#include "check_main.h"
#include "potentials/membrane.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRIALS 200

static uint64_t seed = 0x9e3779b97f4a7c15ull;
static double urand(void) /* uniform in [0, 1) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

/* Random rotation matrix (row-major) from a random unit quaternion. */
static void random_rotation(double R[9])
{
    double q[4], n = 0.0;
    do {
        n = 0.0;
        for (int i = 0; i < 4; i++) { q[i] = srand1(); n += q[i] * q[i]; }
    } while (n < 1e-2 || n > 1.0);
    n = sqrt(n);
    double w = q[0] / n, x = q[1] / n, y = q[2] / n, z = q[3] / n;
    double M[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                   2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                   2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
    memcpy(R, M, sizeof M);
}
static void apply(double r[3], const double M[9], const double v[3])
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = M[3 * i] * v[0] + M[3 * i + 1] * v[1] + M[3 * i + 2] * v[2];
    v3_copy(r, t);
}

/* Ratio inradius / longest edge, 1/(2 sqrt 3) for an equilateral triangle. */
static double quality(const double X[3][3])
{
    double l = 0.0, e[3];
    for (int a = 0; a < 3; a++) {
        v3_sub(e, X[(a + 1) % 3], X[a]);
        l = fmax(l, v3_norm(e));
    }
    return avi_triangle_inradius(X) / l;
}

static avi_shell_material random_material(void)
{
    avi_shell_material mat = {0.5 + 2.0 * urand(), 0.45 * urand(), 1.0, 0.05 + 0.2 * urand()};
    return mat;
}

/* Random rest triangle of random size and orientation, not too thin, and
 * an initialized record. Returns the rest area. */
static double random_rest(avi_membrane *m, double X[3][3])
{
    double size = exp(2.0 * srand1());
    double area;
    for (;;) {
        for (int a = 0; a < 3; a++)
            for (int i = 0; i < 3; i++) X[a][i] = size * srand1();
        if (quality(X) < 0.03) continue;
        avi_shell_material mat = random_material();
        area = avi_membrane_init(m, X, &mat);
        if (area > 0.0) break;
    }
    return area;
}

/* Deformed state: a random linear map (stretches up to 2x, compressions to
 * 0.4x, shears), a rotation, a translation and per-vertex noise. The
 * deformed triangle is kept away from collapse. */
static void random_deformed(const double X[3][3], double x[3][3], double amount)
{
    double size = 0.0, e[3];
    for (int a = 0; a < 3; a++) { v3_sub(e, X[(a + 1) % 3], X[a]); size = fmax(size, v3_norm(e)); }
    for (;;) {
        double R[9], A[9], t[3];
        random_rotation(R);
        for (int k = 0; k < 9; k++) A[k] = (k % 4 == 0 ? 1.0 : 0.0) + amount * 0.6 * srand1();
        for (int i = 0; i < 3; i++) t[i] = 3.0 * size * srand1();
        for (int a = 0; a < 3; a++) {
            double y[3];
            apply(y, A, X[a]);
            apply(x[a], R, y);
            for (int i = 0; i < 3; i++) x[a][i] += t[i] + amount * 0.2 * size * srand1();
        }
        if (quality(x) > 0.01) break;
    }
}

static double energy_flat(const avi_membrane *m, const double *x) { return avi_membrane_energy(m, (const double (*)[3])x); }
static void gradient_flat(const avi_membrane *m, const double *x, double *g)
{ avi_membrane_gradient(m, (const double (*)[3])x, (double (*)[3])g); }

static double norm(const double *a, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * a[i];
    return sqrt(s);
}
/* |a - b| / max(|b|, floor) in the Euclidean (Frobenius) norm. */
static double rel_error(const double *a, const double *b, int n, double floor)
{
    double d = 0.0;
    for (int i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(d) / fmax(norm(b, n), floor);
}

/* Scale of the derivatives: A0 h mu and the rest size L give gradients of
 * order A0 h mu / L and Hessian entries of order A0 h mu / L^2. */
static double char_length(const double X[3][3])
{
    double e[3];
    v3_sub(e, X[1], X[0]);
    return v3_norm(e);
}

START_TEST(test_gradient_fd)
{
    double worst = 0.0;
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_membrane m;
        double X[3][3], x[9], g[9], fd[9];
        random_rest(&m, X);
        random_deformed(X, (double (*)[3])x, trial % 3 == 0 ? 0.05 : 1.0);
        double L = char_length(X), h = 1e-6 * L;
        gradient_flat(&m, x, g);
        for (int c = 0; c < 9; c++) {
            double xc = x[c];
            x[c] = xc + h;
            double ep = energy_flat(&m, x);
            x[c] = xc - h;
            double em = energy_flat(&m, x);
            x[c] = xc;
            fd[c] = (ep - em) / (2.0 * h);
        }
        double err = rel_error(g, fd, 9, 1e-8 * m.ah * m.mu / L);
        worst = fmax(worst, err);
        ck_assert_msg(err <= 1e-6, "trial %d: gradient error %.3e", trial, err);
    }
    printf("membrane gradient vs FD: worst relative error %.2e over %d configurations\n", worst, TRIALS);
}
END_TEST

START_TEST(test_hessian_fd)
{
    double worst = 0.0, worst_sym = 0.0;
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_membrane m;
        double X[3][3], x[9], H[9][9], fd[81], gp[9], gm[9];
        random_rest(&m, X);
        random_deformed(X, (double (*)[3])x, trial % 3 == 0 ? 0.05 : 1.0);
        double L = char_length(X), h = 1e-6 * L;
        avi_membrane_hessian(&m, (const double (*)[3])x, H);
        for (int c = 0; c < 9; c++) {
            double xc = x[c];
            x[c] = xc + h;
            gradient_flat(&m, x, gp);
            x[c] = xc - h;
            gradient_flat(&m, x, gm);
            x[c] = xc;
            for (int r = 0; r < 9; r++) fd[9 * r + c] = (gp[r] - gm[r]) / (2.0 * h);
        }
        double err = rel_error(&H[0][0], fd, 81, 1e-8 * m.ah * m.mu / (L * L));
        worst = fmax(worst, err);
        ck_assert_msg(err <= 1e-6, "trial %d: Hessian error %.3e", trial, err);
        for (int r = 0; r < 9; r++)
            for (int c = 0; c < 9; c++) worst_sym = fmax(worst_sym, fabs(H[r][c] - H[c][r]));
        /* Rows sum to zero: translations are null vectors of H. */
        for (int r = 0; r < 9; r++)
            for (int i = 0; i < 3; i++) {
                double s = H[r][i] + H[r][3 + i] + H[r][6 + i];
                ck_assert_double_le(fabs(s), 1e-9 * norm(&H[0][0], 81));
            }
    }
    ck_assert_double_eq(worst_sym, 0.0);
    printf("membrane Hessian vs FD: worst relative error %.2e over %d configurations\n", worst, TRIALS);
}
END_TEST

START_TEST(test_rest_state)
{
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_membrane m;
        double X[3][3], x[3][3], g[3][3], R[9], t[3];
        random_rest(&m, X);
        /* The rest shape moved rigidly is still unstrained. */
        random_rotation(R);
        for (int i = 0; i < 3; i++) t[i] = 10.0 * srand1();
        for (int a = 0; a < 3; a++) {
            apply(x[a], R, X[a]);
            v3_add(x[a], x[a], t);
        }
        double L = char_length(X), scale = m.ah * m.mu; /* energy of unit strain */
        ck_assert_double_le(avi_membrane_energy(&m, X), 1e-28 * scale);
        ck_assert_double_le(avi_membrane_energy(&m, (const double (*)[3])x), 1e-26 * scale);
        avi_membrane_gradient(&m, X, g);
        ck_assert_double_le(norm(&g[0][0], 9), 1e-13 * scale / L);
        avi_membrane_gradient(&m, (const double (*)[3])x, g);
        ck_assert_double_le(norm(&g[0][0], 9), 1e-12 * scale / L);
    }
}
END_TEST

START_TEST(test_invariance_and_momentum)
{
    double worst_e = 0.0, worst_p = 0.0, worst_l = 0.0;
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_membrane m;
        double X[3][3], x[3][3], y[3][3], g[3][3], R[9], t[3];
        random_rest(&m, X);
        random_deformed(X, x, 1.0);
        random_rotation(R);
        for (int i = 0; i < 3; i++) t[i] = 5.0 * srand1();
        for (int a = 0; a < 3; a++) {
            apply(y[a], R, x[a]);
            v3_add(y[a], y[a], t);
        }
        double e0 = avi_membrane_energy(&m, (const double (*)[3])x);
        double e1 = avi_membrane_energy(&m, (const double (*)[3])y);
        double de = fabs(e1 - e0) / e0;
        worst_e = fmax(worst_e, de);
        ck_assert_double_le(de, 1e-12);
        avi_membrane_gradient(&m, (const double (*)[3])x, g);
        double gs = norm(&g[0][0], 9), lin[3] = {0, 0, 0}, ang[3] = {0, 0, 0}, xs = 0.0;
        for (int a = 0; a < 3; a++) {
            double c[3];
            v3_add(lin, lin, g[a]);
            v3_cross(c, x[a], g[a]);
            v3_add(ang, ang, c);
            xs = fmax(xs, v3_norm(x[a]));
        }
        worst_p = fmax(worst_p, v3_norm(lin) / gs);
        worst_l = fmax(worst_l, v3_norm(ang) / (gs * xs));
        ck_assert_double_le(v3_norm(lin), 1e-13 * gs);
        ck_assert_double_le(v3_norm(ang), 1e-12 * gs * xs);
    }
    printf("membrane invariance: energy %.1e, sum g %.1e, sum x x g %.1e (relative)\n", worst_e, worst_p, worst_l);
}
END_TEST

/* Rest triangle in the xy-plane, deformed by diag(s1, s2, 1) and then both
 * placed in random orientations: V = A0 h (mu tr E^2 + lambda/2 tr(E)^2)
 * with E = diag((s1^2 - 1)/2, (s2^2 - 1)/2). */
START_TEST(test_uniform_stretch_energy)
{
    for (int trial = 0; trial < TRIALS; trial++) {
        double P[3][3], X[3][3], x[3][3], R0[9], R1[9];
        do {
            for (int a = 0; a < 3; a++) { P[a][0] = srand1(); P[a][1] = srand1(); P[a][2] = 0.0; }
        } while (quality(P) < 0.03);
        double s1 = 0.5 + urand(), s2 = 0.5 + urand();
        random_rotation(R0);
        random_rotation(R1);
        for (int a = 0; a < 3; a++) {
            double q[3] = {s1 * P[a][0], s2 * P[a][1], 0.0};
            apply(X[a], R0, P[a]);
            apply(x[a], R1, q);
        }
        avi_shell_material mat = random_material();
        avi_membrane m;
        double area = avi_membrane_init(&m, X, &mat);
        double a_ref = 0.5 * fabs((P[1][0] - P[0][0]) * (P[2][1] - P[0][1]) - (P[1][1] - P[0][1]) * (P[2][0] - P[0][0]));
        ck_assert_double_le(fabs(area - a_ref), 1e-14 * a_ref + 1e-15);
        double E = mat.youngs, nu = mat.poisson;
        double mu = E / (2 * (1 + nu)), lam = E * nu / (1 - nu * nu);
        double e1 = 0.5 * (s1 * s1 - 1), e2 = 0.5 * (s2 * s2 - 1);
        double ref = a_ref * mat.thickness * (mu * (e1 * e1 + e2 * e2) + 0.5 * lam * (e1 + e2) * (e1 + e2));
        double v = avi_membrane_energy(&m, (const double (*)[3])x);
        ck_assert_msg(fabs(v - ref) <= 1e-12 * ref, "energy %.17g, expected %.17g", v, ref);
    }
}
END_TEST

START_TEST(test_degenerate_rejected)
{
    const avi_shell_material mat = {1.0, 0.3, 1.0, 0.01};
    const double cases[][3][3] = {
        {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}},            /* collinear */
        {{0, 0, 0}, {1, 1, 1}, {0, 0, 0}},            /* repeated vertex */
        {{1, 2, 3}, {1, 2, 3}, {1, 2, 3}},            /* a point */
        {{0, 0, 0}, {1, 0, 0}, {0.5, 1e-15, 0}},      /* area 5e-16 L^2 */
        {{0, 0, 0}, {1e8, 0, 0}, {2e8, 1e-7, 0}},     /* thin at a large scale */
        {{0, 0, 0}, {NAN, 0, 0}, {0, 1, 0}},          /* not a number */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        avi_membrane m, ref;
        memset(&m, 0xA5, sizeof m);
        memcpy(&ref, &m, sizeof m);
        double area = avi_membrane_init(&m, cases[c], &mat);
        ck_assert_msg(!(area > 0.0), "case %zu: area %g accepted", c, area);
        ck_assert_msg(memcmp(&m, &ref, sizeof m) == 0, "case %zu: record modified", c);
    }
    /* A thin but valid triangle at a tiny scale is accepted. */
    const double ok[3][3] = {{0, 0, 0}, {1e-9, 0, 0}, {0.5e-9, 1e-12, 0}};
    avi_membrane m;
    ck_assert_double_gt(avi_membrane_init(&m, ok, &mat), 0.0);
}
END_TEST

START_TEST(test_inradius)
{
    const double eq[3][3] = {{0, 0, 0}, {2, 0, 0}, {1, sqrt(3.0), 0}};
    ck_assert_double_le(fabs(avi_triangle_inradius(eq) - 1.0 / sqrt(3.0)), 1e-15);
    const double rt[3][3] = {{1, 1, 1}, {1, 4, 1}, {1, 1, 5}}; /* 3-4-5: r = 1 */
    ck_assert_double_le(fabs(avi_triangle_inradius(rt) - 1.0), 1e-15);
    const double pt[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    ck_assert_double_eq(avi_triangle_inradius(pt), 0.0);
}
END_TEST

/* Material constants stored by init: plane-stress Lame parameters. */
START_TEST(test_init_constants)
{
    const avi_shell_material mat = {2.0e11, 0.3, 7850.0, 0.0035};
    const double X[3][3] = {{0, 0, 0}, {2, 0, 0}, {0, 3, 0}};
    avi_membrane m;
    ck_assert_double_eq_tol(avi_membrane_init(&m, X, &mat), 3.0, 1e-15);
    ck_assert_double_eq_tol(m.ah, 3.0 * 0.0035, 1e-17);
    ck_assert_double_eq_tol(m.mu, 2.0e11 / 2.6, 1e-4);
    ck_assert_double_eq_tol(m.lambda, 2.0e11 * 0.3 / 0.91, 1e-4);
}
END_TEST

static Suite *membrane_suite(void)
{
    Suite *s = suite_create("membrane");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_gradient_fd);
    tcase_add_test(tc, test_hessian_fd);
    tcase_add_test(tc, test_rest_state);
    tcase_add_test(tc, test_invariance_and_momentum);
    tcase_add_test(tc, test_uniform_stretch_energy);
    tcase_add_test(tc, test_degenerate_rejected);
    tcase_add_test(tc, test_inradius);
    tcase_add_test(tc, test_init_constants);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(membrane_suite)
