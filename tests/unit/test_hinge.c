/* Discrete-shell bending hinge: the signed angle and its convention,
 * derivatives against central finite differences at random configurations
 * (non-flat rest angles, large deformations), rest state, invariances,
 * wrapping of theta - theta0, degenerate hinges. */
#include "check_main.h"
#include "potentials/hinge.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define TRIALS 200

static uint64_t seed = 0x243f6a8885a308d3ull;
static double urand(void) /* uniform in [0, 1) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }

static void random_rotation(double R[9])
{
    double q[4], n;
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

/* Inradius / longest edge of triangle (a, b, c). */
static double tri_quality(const double a[3], const double b[3], const double c[3])
{
    double e1[3], e2[3], e3[3], n[3];
    v3_sub(e1, b, a);
    v3_sub(e2, c, a);
    v3_sub(e3, c, b);
    v3_cross(n, e1, e2);
    double l1 = v3_norm(e1), l2 = v3_norm(e2), l3 = v3_norm(e3);
    return v3_norm(n) / (l1 + l2 + l3) / fmax(l1, fmax(l2, l3));
}
static double hinge_quality(const double x[4][3])
{
    return fmin(tri_quality(x[0], x[1], x[2]), tri_quality(x[1], x[0], x[3]));
}

/* A hinge with edge (x0, x1), wing x2 at height h1 and wing x3 at height h2,
 * bent by angle phi (x3 folded toward +z, the side of n1 = e x (x2 - x0)). */
static void make_hinge(double x[4][3], double s1, double h1, double s2, double h2, double phi)
{
    const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {s1, h1, 0}, {s2, -h2 * cos(phi), h2 * sin(phi)}};
    memcpy(x, X, sizeof X);
}

/* Random hinge: edge of random length, wings at random feet and heights,
 * random dihedral angle with |theta| <= pi - margin, random rigid motion
 * and scale. */
static void random_hinge(double x[4][3], double scale, double margin)
{
    do {
        double phi = (M_PI - margin) * srand1();
        make_hinge(x, 0.5 + 0.8 * srand1(), 0.2 + urand(), 0.5 + 0.8 * srand1(), 0.2 + urand(), phi);
    } while (hinge_quality((const double (*)[3])x) < 0.03);
    double R[9], t[3];
    random_rotation(R);
    for (int i = 0; i < 3; i++) t[i] = 2.0 * scale * srand1();
    for (int a = 0; a < 4; a++) {
        double y[3];
        v3_scale(y, x[a], scale);
        apply(x[a], R, y);
        v3_add(x[a], x[a], t);
    }
}

static avi_shell_material random_material(void)
{
    avi_shell_material mat = {0.5 + 2.0 * urand(), 0.45 * urand(), 1.0, 0.2 + 0.5 * urand()};
    return mat;
}

/* Random rest hinge (non-flat in general, flat for every fourth) and a
 * deformed state: per-vertex noise up to `amount` of the size, then a rigid
 * motion, keeping wings well shaped and theta - theta0 away from +-pi. */
static double random_case(avi_hinge *h, double X[4][3], double x[4][3], int trial, double amount)
{
    double scale = exp(srand1());
    avi_shell_material mat = random_material();
    for (;;) {
        if (trial % 4 == 0) {
            make_hinge(X, 0.5 + 0.8 * srand1(), 0.2 + urand(), 0.5 + 0.8 * srand1(), 0.2 + urand(), 0.0);
            for (int a = 0; a < 4; a++) v3_scale(X[a], X[a], scale);
        } else {
            random_hinge(X, scale, 0.3);
        }
        if (avi_hinge_init(h, (const double (*)[3])X, &mat) == 0) break;
    }
    for (;;) {
        double R[9], t[3];
        random_rotation(R);
        for (int i = 0; i < 3; i++) t[i] = 2.0 * scale * srand1();
        for (int a = 0; a < 4; a++) {
            double y[3];
            for (int i = 0; i < 3; i++) y[i] = X[a][i] + amount * scale * srand1();
            apply(x[a], R, y);
            v3_add(x[a], x[a], t);
        }
        double th = avi_hinge_angle((const double (*)[3])x);
        double d = fabs(th - h->theta0);
        d = fmin(d, 2.0 * M_PI - d);
        if (hinge_quality((const double (*)[3])x) > 0.03 && fabs(th) < M_PI - 0.2 && d < M_PI - 0.3) break;
    }
    return scale;
}

static double norm(const double *a, int n)
{
    double s = 0.0;
    for (int i = 0; i < n; i++) s += a[i] * a[i];
    return sqrt(s);
}
static double rel_error(const double *a, const double *b, int n, double floor)
{
    double d = 0.0;
    for (int i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]);
    return sqrt(d) / fmax(norm(b, n), floor);
}

START_TEST(test_angle_convention)
{
    for (int k = -17; k <= 17; k++) {
        double phi = k * (M_PI / 18.0), x[4][3];
        make_hinge(x, 0.4, 0.7, 0.6, 1.3, phi);
        double th = avi_hinge_angle((const double (*)[3])x);
        ck_assert_msg(fabs(th - phi) <= 1e-14, "phi %g: theta %.17g", phi, th);
        /* Positive exactly when x3 lies on the side n1 points to. */
        double e[3], f[3], n1[3], d[3];
        v3_sub(e, x[1], x[0]);
        v3_sub(f, x[2], x[0]);
        v3_cross(n1, e, f);
        v3_sub(d, x[3], x[0]);
        if (k != 0) ck_assert_int_eq(th > 0.0, v3_dot(d, n1) > 0.0);
    }
    double flat[4][3];
    make_hinge(flat, 0.3, 1.0, 0.9, 0.5, 0.0);
    ck_assert_double_eq(avi_hinge_angle((const double (*)[3])flat), 0.0);
    /* Fully folded: wings on top of each other gives +pi, never -pi. */
    const double fold[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5, 1, 0}, {0.5, 1, 0}};
    ck_assert_double_eq(avi_hinge_angle(fold), M_PI);
    /* Swapping the wings together with the edge direction keeps the angle. */
    for (int trial = 0; trial < TRIALS; trial++) {
        double x[4][3], y[4][3];
        random_hinge(x, 1.0, 0.1);
        v3_copy(y[0], x[1]); v3_copy(y[1], x[0]); v3_copy(y[2], x[3]); v3_copy(y[3], x[2]);
        double a = avi_hinge_angle((const double (*)[3])x), b = avi_hinge_angle((const double (*)[3])y);
        ck_assert_double_le(fabs(a - b), 1e-13);
    }
}
END_TEST

START_TEST(test_gradient_fd)
{
    double worst = 0.0;
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_hinge h;
        double X[4][3], x[12], g[12], fd[12];
        double scale = random_case(&h, X, (double (*)[3])x, trial, trial % 3 == 0 ? 0.02 : 0.35);
        double step = 1e-6 * scale;
        avi_hinge_gradient(&h, (const double (*)[3])x, (double (*)[3])g);
        for (int c = 0; c < 12; c++) {
            double xc = x[c];
            x[c] = xc + step;
            double ep = avi_hinge_energy(&h, (const double (*)[3])x);
            x[c] = xc - step;
            double em = avi_hinge_energy(&h, (const double (*)[3])x);
            x[c] = xc;
            fd[c] = (ep - em) / (2.0 * step);
        }
        double err = rel_error(g, fd, 12, 1e-8 * h.k / scale);
        worst = fmax(worst, err);
        ck_assert_msg(err <= 1e-6, "trial %d: gradient error %.3e", trial, err);
    }
    printf("hinge gradient vs FD: worst relative error %.2e over %d configurations\n", worst, TRIALS);
}
END_TEST

START_TEST(test_hessian_fd)
{
    double worst = 0.0;
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_hinge h;
        double X[4][3], x[12], H[12][12], fd[144], gp[12], gm[12];
        double scale = random_case(&h, X, (double (*)[3])x, trial, trial % 3 == 0 ? 0.02 : 0.35);
        double step = 1e-6 * scale;
        avi_hinge_hessian(&h, (const double (*)[3])x, H);
        for (int c = 0; c < 12; c++) {
            double xc = x[c];
            x[c] = xc + step;
            avi_hinge_gradient(&h, (const double (*)[3])x, (double (*)[3])gp);
            x[c] = xc - step;
            avi_hinge_gradient(&h, (const double (*)[3])x, (double (*)[3])gm);
            x[c] = xc;
            for (int r = 0; r < 12; r++) fd[12 * r + c] = (gp[r] - gm[r]) / (2.0 * step);
        }
        double err = rel_error(&H[0][0], fd, 144, 1e-8 * h.k / (scale * scale));
        worst = fmax(worst, err);
        ck_assert_msg(err <= 1e-6, "trial %d: Hessian error %.3e", trial, err);
        for (int r = 0; r < 12; r++)
            for (int c = 0; c < 12; c++) ck_assert_double_eq(H[r][c], H[c][r]);
        for (int r = 0; r < 12; r++)
            for (int i = 0; i < 3; i++) {
                double s = H[r][i] + H[r][3 + i] + H[r][6 + i] + H[r][9 + i];
                ck_assert_double_le(fabs(s), 1e-10 * norm(&H[0][0], 144));
            }
    }
    printf("hinge Hessian vs FD: worst relative error %.2e over %d configurations\n", worst, TRIALS);
}
END_TEST

START_TEST(test_rest_state)
{
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_hinge h;
        double X[4][3], x[4][3], g[4][3], H[12][12], R[9], t[3];
        double scale = random_case(&h, X, x, trial, 0.1);
        random_rotation(R);
        for (int i = 0; i < 3; i++) t[i] = 10.0 * scale * srand1();
        for (int a = 0; a < 4; a++) {
            apply(x[a], R, X[a]);
            v3_add(x[a], x[a], t);
        }
        ck_assert_double_eq(avi_hinge_energy(&h, (const double (*)[3])X), 0.0);
        avi_hinge_gradient(&h, (const double (*)[3])X, g);
        ck_assert_double_eq(norm(&g[0][0], 12), 0.0);
        /* Moved rigidly: zero to round-off in the angle. */
        ck_assert_double_le(avi_hinge_energy(&h, (const double (*)[3])x), 1e-26 * h.k);
        avi_hinge_gradient(&h, (const double (*)[3])x, g);
        ck_assert_double_le(norm(&g[0][0], 12), 1e-11 * h.k / scale);
        /* At rest the Hessian is 2k grad(theta) grad(theta)^T: rank one, PSD. */
        avi_hinge_hessian(&h, (const double (*)[3])X, H);
        for (int r = 0; r < 12; r++) ck_assert_double_ge(H[r][r], 0.0);
    }
}
END_TEST

START_TEST(test_invariance_and_momentum)
{
    double worst_e = 0.0, worst_p = 0.0, worst_l = 0.0;
    for (int trial = 0; trial < TRIALS; trial++) {
        avi_hinge h;
        double X[4][3], x[4][3], y[4][3], g[4][3], R[9], t[3];
        double scale = random_case(&h, X, x, trial, 0.35);
        random_rotation(R);
        for (int i = 0; i < 3; i++) t[i] = 5.0 * scale * srand1();
        for (int a = 0; a < 4; a++) {
            apply(y[a], R, x[a]);
            v3_add(y[a], y[a], t);
        }
        double e0 = avi_hinge_energy(&h, (const double (*)[3])x);
        double e1 = avi_hinge_energy(&h, (const double (*)[3])y);
        double de = fabs(e1 - e0) / fmax(e0, 1e-12 * h.k);
        worst_e = fmax(worst_e, de);
        ck_assert_double_le(de, 1e-10);
        avi_hinge_gradient(&h, (const double (*)[3])x, g);
        double gs = norm(&g[0][0], 12), lin[3] = {0, 0, 0}, ang[3] = {0, 0, 0}, xs = 0.0;
        for (int a = 0; a < 4; a++) {
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
    printf("hinge invariance: energy %.1e, sum g %.1e, sum x x g %.1e (relative)\n", worst_e, worst_p, worst_l);
}
END_TEST

/* theta - theta0 is wrapped into (-pi, pi]: a hinge at rest near +pi that
 * folds through pi to a negative angle has a small, smooth energy. */
START_TEST(test_wrapping)
{
    const avi_shell_material mat = {1.0, 0.3, 1.0, 0.5};
    double X[4][3], x[4][3], g[4][3], fd[12];
    make_hinge(X, 0.5, 1.0, 0.5, 1.0, M_PI - 0.1);
    avi_hinge h;
    ck_assert_int_eq(avi_hinge_init(&h, (const double (*)[3])X, &mat), 0);
    ck_assert_double_le(fabs(h.theta0 - (M_PI - 0.1)), 1e-14);
    for (int k = 0; k <= 4; k++) {
        double phi = M_PI - 0.1 + 0.05 * k; /* past pi for k > 2 */
        make_hinge(x, 0.5, 1.0, 0.5, 1.0, phi);
        double th = avi_hinge_angle((const double (*)[3])x);
        ck_assert(th > -M_PI && th <= M_PI);
        double d = 0.05 * k;
        ck_assert_double_le(fabs(avi_hinge_energy(&h, (const double (*)[3])x) - h.k * d * d), 1e-12 * h.k);
        if (k == 0 || k == 2) continue; /* zero gradient at rest (tested elsewhere); exactly at pi */
        avi_hinge_gradient(&h, (const double (*)[3])x, g);
        double *xf = &x[0][0], step = 1e-6;
        for (int c = 0; c < 12; c++) {
            double xc = xf[c];
            xf[c] = xc + step;
            double ep = avi_hinge_energy(&h, (const double (*)[3])x);
            xf[c] = xc - step;
            double em = avi_hinge_energy(&h, (const double (*)[3])x);
            xf[c] = xc;
            fd[c] = (ep - em) / (2.0 * step);
        }
        ck_assert_double_le(rel_error(&g[0][0], fd, 12, 1e-8 * h.k), 1e-6);
    }
}
END_TEST

START_TEST(test_init_stiffness)
{
    /* Unit right-angle wings of area 1/2 each on an edge of length 2. */
    const double X[4][3] = {{0, 0, 0}, {2, 0, 0}, {1, 0.5, 0}, {1, -0.5, 0}};
    const avi_shell_material mat = {2.0e11, 0.3, 7850.0, 0.0035};
    avi_hinge h;
    ck_assert_int_eq(avi_hinge_init(&h, X, &mat), 0);
    double kb = 2.0e11 * pow(0.0035, 3) / (24.0 * 0.91);
    ck_assert_double_le(fabs(h.k - kb * 3.0 * 4.0 / 1.0), 1e-14 * h.k);
    ck_assert_double_eq(h.theta0, 0.0);
}
END_TEST

START_TEST(test_degenerate_rejected)
{
    const avi_shell_material mat = {1.0, 0.3, 1.0, 0.01};
    const double cases[][4][3] = {
        {{0, 0, 0}, {0, 0, 0}, {0.5, 1, 0}, {0.5, -1, 0}},       /* zero-length edge */
        {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0.5, -1, 0}},         /* wing 1 collinear */
        {{0, 0, 0}, {1, 0, 0}, {0.5, 1, 0}, {0.3, 0, 0}},        /* wing 2 on the edge */
        {{0, 0, 0}, {1, 0, 0}, {0.5, 1e-15, 0}, {0.5, -1, 0}},   /* wing 1 sliver */
        {{0, 0, 0}, {1, 0, 0}, {0.5, 1, 0}, {0.5, -1, NAN}},     /* not a number */
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        avi_hinge h, ref;
        memset(&h, 0x5A, sizeof h);
        memcpy(&ref, &h, sizeof h);
        ck_assert_msg(avi_hinge_init(&h, cases[c], &mat) == -1, "case %zu accepted", c);
        ck_assert_msg(memcmp(&h, &ref, sizeof h) == 0, "case %zu: record modified", c);
    }
}
END_TEST

static Suite *hinge_suite(void)
{
    Suite *s = suite_create("hinge");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_angle_convention);
    tcase_add_test(tc, test_gradient_fd);
    tcase_add_test(tc, test_hessian_fd);
    tcase_add_test(tc, test_rest_state);
    tcase_add_test(tc, test_invariance_and_momentum);
    tcase_add_test(tc, test_wrapping);
    tcase_add_test(tc, test_init_stiffness);
    tcase_add_test(tc, test_degenerate_rejected);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(hinge_suite)
