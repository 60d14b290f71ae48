/* Thin-shell energies against analytic plate results.
 *
 * (a) Membrane: a flat rectangular sheet under a uniform stretch
 *     F = diag(s1, s2) stores A h (mu tr(E^2) + lambda/2 tr(E)^2) exactly,
 *     whatever the triangulation, since every triangle sees the same F.
 *
 * (b) Bending: a flat sheet rolled onto a cylinder of radius R,
 *     (u, v) -> (R sin(u/R), v, R (1 - cos(u/R))). Kirchhoff plate theory
 *     gives D/2 kappa^2 A with D = E h^3 / (12 (1 - nu^2)), kappa = 1/R.
 *
 * What the discrete-shell energy converges to. Write a_e = theta_e |e| and
 * A_e for the area of the two triangles at edge e. Summing the folds,
 * sum_e a_e t_e t_e^T (t_e the in-plane unit normal of the edge) is the
 * integrated shape operator (Cohen-Steiner and Morvan 2003), kappa A m m^T
 * for the cylinder (m the direction of curvature), and since sum_e A_e = 3A,
 *   sum_e 3 a_e^2 / A_e >= (sum_e a_e)^2 / A = kappa^2 A     (Cauchy-Schwarz),
 * with equality only if every edge bends by the same a_e / A_e. That
 * happens on a sphere with an equilateral mesh, where the energy
 * k_b sum 3 theta^2 |e|^2 / A_e with k_b = D/2 tends to D/2 int (2H)^2
 * exactly, but never on a cylinder: there the identity also requires
 * sum_e a_e (t_e . axis)^2 = 0, which equal a_e / A_e > 0 would allow only
 * if every edge ran along the axis. On a periodic mesh of congruent
 * triangles the three a_e are fixed by the identity, so the limit is a
 * constant multiple of the plate energy that depends on the triangle shape
 * and its orientation (the known mesh dependence of this energy, Grinspun et
 * al. 2006): 3 on a structured grid of right triangles whose legs, or whose
 * diagonals, run along the axis (all folds on the generators), 3 on any
 * equilateral mesh, 9 on the right-triangle grid turned 45 degrees so that
 * its diagonals run across the axis, and never below 3/2 (slivers with two
 * edges along the axis). No triangulation makes the project's stiffness
 * k_b = E h^3 / (24 (1 - nu^2)) reproduce D/2 kappa^2 A for cylindrical
 * bending; on the structured grid used below the hinge sum is exactly
 * 3 (N - 1) / N times the plate value, N the number of columns of cells
 * across the curvature (the two boundary columns carry no hinge). The tests
 * below check the limits 3 and 9 and the sphere's 1. */
#include "check_main.h"
#include "potentials/hinge.h"
#include "potentials/membrane.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int nv, nt;
    double (*p)[2];    /* flat rest coordinates (u, v) */
    int (*t)[3];       /* counter-clockwise in (u, v) */
} flat_mesh;

static void mesh_free(flat_mesh *m)
{
    free(m->p);
    free(m->t);
    memset(m, 0, sizeof *m);
}

/* nu x nv cells of size a x b, each cut by its diagonal (i, j)-(i+1, j+1). */
static flat_mesh grid_mesh(int nu, int nv, double a, double b)
{
    flat_mesh m;
    m.nv = (nu + 1) * (nv + 1);
    m.nt = 2 * nu * nv;
    m.p = malloc(sizeof *m.p * m.nv);
    m.t = malloc(sizeof *m.t * m.nt);
    ck_assert(m.p && m.t);
    for (int j = 0; j <= nv; j++)
        for (int i = 0; i <= nu; i++) {
            m.p[j * (nu + 1) + i][0] = i * a;
            m.p[j * (nu + 1) + i][1] = j * b;
        }
    int k = 0;
    for (int j = 0; j < nv; j++)
        for (int i = 0; i < nu; i++) {
            int v00 = j * (nu + 1) + i, v10 = v00 + 1, v01 = v00 + nu + 1, v11 = v01 + 1;
            m.t[k][0] = v00; m.t[k][1] = v10; m.t[k][2] = v11; k++;
            m.t[k][0] = v00; m.t[k][1] = v11; m.t[k][2] = v01; k++;
        }
    return m;
}

/* Equilateral triangles of side l: rows of n + 1 vertices along u, odd rows
 * shifted by l/2, rows spaced l sqrt(3)/2 apart. */
static flat_mesh equilateral_mesh(int n, int rows, double l)
{
    flat_mesh m;
    m.nv = (n + 1) * (rows + 1);
    m.nt = 2 * n * rows;
    m.p = malloc(sizeof *m.p * m.nv);
    m.t = malloc(sizeof *m.t * m.nt);
    ck_assert(m.p && m.t);
    double hr = l * sqrt(3.0) / 2.0;
    for (int j = 0; j <= rows; j++)
        for (int i = 0; i <= n; i++) {
            m.p[j * (n + 1) + i][0] = i * l + (j % 2 ? 0.5 * l : 0.0);
            m.p[j * (n + 1) + i][1] = j * hr;
        }
    int k = 0;
    for (int j = 0; j < rows; j++)
        for (int i = 0; i < n; i++) {
            int b0 = j * (n + 1) + i, b1 = b0 + 1, t0 = b0 + n + 1, t1 = t0 + 1;
            if (j % 2 == 0) { /* upper row shifted right */
                m.t[k][0] = b0; m.t[k][1] = b1; m.t[k][2] = t0; k++;
                m.t[k][0] = b1; m.t[k][1] = t1; m.t[k][2] = t0; k++;
            } else {
                m.t[k][0] = b0; m.t[k][1] = t1; m.t[k][2] = t0; k++;
                m.t[k][0] = b0; m.t[k][1] = b1; m.t[k][2] = t1; k++;
            }
        }
    return m;
}

static double mesh_area(const flat_mesh *m)
{
    double A = 0.0;
    for (int k = 0; k < m->nt; k++) {
        const double *a = m->p[m->t[k][0]], *b = m->p[m->t[k][1]], *c = m->p[m->t[k][2]];
        double s = 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
        ck_assert_double_gt(s, 0.0);
        A += s;
    }
    return A;
}

/* Interior edges: hinge (a, b, c, d) for triangles (a, b, c) and (b, a, d). */
typedef struct { int lo, hi, a, b, c; } half_edge;
static int half_edge_cmp(const void *x, const void *y)
{
    const half_edge *p = x, *q = y;
    if (p->lo != q->lo) return p->lo < q->lo ? -1 : 1;
    if (p->hi != q->hi) return p->hi < q->hi ? -1 : 1;
    return 0;
}
static int mesh_hinges(const flat_mesh *m, int (**out)[4])
{
    half_edge *he = malloc(sizeof *he * 3 * m->nt);
    int (*h)[4] = malloc(sizeof *h * 3 * m->nt);
    ck_assert(he && h);
    for (int k = 0; k < m->nt; k++)
        for (int s = 0; s < 3; s++) {
            int a = m->t[k][s], b = m->t[k][(s + 1) % 3], c = m->t[k][(s + 2) % 3];
            he[3 * k + s] = (half_edge){a < b ? a : b, a < b ? b : a, a, b, c};
        }
    qsort(he, 3 * (size_t)m->nt, sizeof *he, half_edge_cmp);
    int n = 0;
    for (int i = 0; i + 1 < 3 * m->nt; i++)
        if (he[i].lo == he[i + 1].lo && he[i].hi == he[i + 1].hi) {
            ck_assert(he[i].a == he[i + 1].b); /* consistently oriented */
            h[n][0] = he[i].a; h[n][1] = he[i].b; h[n][2] = he[i].c; h[n][3] = he[i + 1].c;
            n++;
            i++;
        }
    free(he);
    *out = h;
    return n;
}

static const avi_shell_material steel = {2.0e11, 0.3, 7850.0, 0.0035};

/* Sum of hinge energies: rest data from the flat sheet (z = 0), energy at
 * the positions map(u, v). */
typedef void (*surface_map)(const double p[2], const double *param, double x[3]);
static double bending_energy(const flat_mesh *m, surface_map map, const double *param, int *nhinge)
{
    int (*h)[4];
    int n = mesh_hinges(m, &h);
    double E = 0.0;
    for (int k = 0; k < n; k++) {
        double X[4][3], x[4][3];
        for (int a = 0; a < 4; a++) {
            const double *p = m->p[h[k][a]];
            X[a][0] = p[0]; X[a][1] = p[1]; X[a][2] = 0.0;
            map(p, param, x[a]);
        }
        avi_hinge hg;
        ck_assert_int_eq(avi_hinge_init(&hg, (const double (*)[3])X, &steel), 0);
        ck_assert_double_eq(hg.theta0, 0.0);
        E += avi_hinge_energy(&hg, (const double (*)[3])x);
    }
    free(h);
    if (nhinge) *nhinge = n;
    return E;
}

/* Cylinder of radius param[0] curving along the unit direction
 * (cos phi, sin phi) of the (u, v) plane, phi = param[1]. */
static void cylinder(const double p[2], const double *param, double x[3])
{
    double R = param[0], c = cos(param[1]), s = sin(param[1]);
    double u = c * p[0] + s * p[1], v = -s * p[0] + c * p[1];
    x[0] = R * sin(u / R);
    x[1] = v;
    x[2] = R * (1.0 - cos(u / R));
}

/* Sphere of radius param[0] tangent to the plane at (param[1], param[2]):
 * vertical projection, which keeps small triangles near the pole nearly
 * equilateral. */
static void sphere(const double p[2], const double *param, double x[3])
{
    double R = param[0], u = p[0] - param[1], v = p[1] - param[2];
    x[0] = u;
    x[1] = v;
    x[2] = R - sqrt(R * R - u * u - v * v);
}

static double plate_D(void)
{
    double nu = steel.poisson, h = steel.thickness;
    return steel.youngs * h * h * h / (12.0 * (1.0 - nu * nu));
}

START_TEST(test_membrane_uniform_stretch)
{
    /* 12 x 7 grid on a 1.2 x 0.7 rectangle with interior vertices jittered,
     * rest sheet turned into a random plane, deformed sheet into another. */
    const double R0[9] = {0.36, 0.48, -0.8, -0.8, 0.6, 0.0, 0.48, 0.64, 0.6};
    const double R1[9] = {0.6, 0.0, 0.8, 0.0, 1.0, 0.0, -0.8, 0.0, 0.6};
    flat_mesh m = grid_mesh(12, 7, 0.1, 0.1);
    for (int j = 1; j < 7; j++)
        for (int i = 1; i < 12; i++) {
            double *p = m.p[j * 13 + i];
            p[0] += 0.03 * sin(3.1 * i + 1.7 * j);
            p[1] += 0.03 * cos(2.3 * i - 0.9 * j);
        }
    double A = mesh_area(&m);
    ck_assert_double_le(fabs(A - 0.84), 1e-14);
    const double stretch[][2] = {{1.0, 1.0}, {1.001, 1.0}, {1.1, 0.95}, {0.7, 0.7}, {2.0, 1.3}, {0.5, 1.8}};
    double E = steel.youngs, nu = steel.poisson, h = steel.thickness;
    double mu = E / (2 * (1 + nu)), lam = E * nu / (1 - nu * nu);
    double worst = 0.0;
    printf("membrane, uniform stretch of a %d-triangle sheet (A = %.2f, h = %.4f):\n", m.nt, A, h);
    printf("      s1      s2   energy            analytic          rel. error\n");
    for (size_t c = 0; c < sizeof stretch / sizeof stretch[0]; c++) {
        double s1 = stretch[c][0], s2 = stretch[c][1], sum = 0.0;
        for (int k = 0; k < m.nt; k++) {
            double X[3][3], x[3][3];
            for (int a = 0; a < 3; a++) {
                const double *p = m.p[m.t[k][a]];
                double P[3] = {p[0], p[1], 0.0}, q[3] = {s1 * p[0], s2 * p[1], 0.0};
                for (int i = 0; i < 3; i++) {
                    X[a][i] = R0[3 * i] * P[0] + R0[3 * i + 1] * P[1] + R0[3 * i + 2] * P[2] + 0.5;
                    x[a][i] = R1[3 * i] * q[0] + R1[3 * i + 1] * q[1] + R1[3 * i + 2] * q[2] - 2.0;
                }
            }
            avi_membrane mb;
            ck_assert_double_gt(avi_membrane_init(&mb, (const double (*)[3])X, &steel), 0.0);
            sum += avi_membrane_energy(&mb, (const double (*)[3])x);
        }
        double e1 = 0.5 * (s1 * s1 - 1.0), e2 = 0.5 * (s2 * s2 - 1.0);
        double ref = A * h * (mu * (e1 * e1 + e2 * e2) + 0.5 * lam * (e1 + e2) * (e1 + e2));
        double err = ref > 0.0 ? fabs(sum - ref) / ref : sum / (A * h * mu);
        printf("  %6.3f  %6.3f   %.10e  %.10e  %.1e\n", s1, s2, sum, ref, err);
        worst = fmax(worst, err);
        ck_assert_double_le(err, 1e-12);
    }
    printf("  worst relative error %.1e\n", worst);
    mesh_free(&m);
}
END_TEST

START_TEST(test_cylinder_structured_grid)
{
    /* Sheet 1.0 x 0.5 rolled along u onto R = 0.5 (2 radians of arc). */
    const double Lu = 1.0, Lv = 0.5, R = 0.5;
    const double param[2] = {R, 0.0};
    double plate = 0.5 * plate_D() / (R * R) * Lu * Lv;
    printf("bending, structured right-triangle grid rolled onto a cylinder "
           "(axis along the v edges), R = %.2f, plate D/2 k^2 A = %.6e J:\n", R, plate);
    printf("    N  hinges  hinge energy      E / plate   3 (N-1)/N   error vs 3 plate\n");
    double prev = INFINITY;
    for (int N = 4; N <= 128; N *= 2) {
        flat_mesh m = grid_mesh(N, N / 2, Lu / N, Lv / (N / 2));
        int nh;
        double Eh = bending_energy(&m, cylinder, param, &nh);
        double ratio = Eh / plate, err = fabs(Eh - 3.0 * plate) / (3.0 * plate);
        double exact = 3.0 * (N - 1.0) / N;
        printf("  %3d  %6d  %.10e  %.8f  %.8f  %.3e\n", N, nh, Eh, ratio, exact, err);
        /* Every fold sits on a generator with theta = a / R exactly. */
        ck_assert_double_le(fabs(ratio - exact), 1e-11 * exact);
        ck_assert_double_lt(err, prev);
        prev = err;
        mesh_free(&m);
    }
    ck_assert_double_lt(prev, 0.01);
}
END_TEST

/* The limit depends on the triangulation; the constants follow from the
 * shape-operator identity in the header comment. */
START_TEST(test_cylinder_mesh_dependence)
{
    const double R = 0.5;
    printf("bending, mesh dependence on a cylinder (ratio E / (D/2 k^2 A), expected limit):\n");
    struct { const char *name; int kind; double phi, limit; } cases[] = {
        {"right grid, axis along the v edges     ", 0, 0.0, 3.0},
        {"right grid, axis along the diagonals   ", 0, -M_PI / 4, 3.0},
        {"right grid, axis across the diagonals  ", 0, M_PI / 4, 9.0},
        {"equilateral, axis across an edge family", 1, 0.0, 3.0},
        {"equilateral, axis along an edge family ", 1, M_PI / 2, 3.0},
        {"equilateral, axis at 15 degrees        ", 1, M_PI / 12, 3.0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const double param[2] = {R, cases[c].phi};
        printf("  %s ", cases[c].name);
        double prev = INFINITY, err = 0.0;
        for (int N = 8; N <= 64; N *= 2) {
            flat_mesh m = cases[c].kind == 0 ? grid_mesh(N, N, 0.7 / N, 0.7 / N)
                                             : equilateral_mesh(N, (int)(N * 2 / sqrt(3.0)), 0.7 / N);
            double A = mesh_area(&m);
            double Eh = bending_energy(&m, cylinder, param, NULL);
            double ratio = Eh / (0.5 * plate_D() / (R * R) * A);
            err = fabs(ratio - cases[c].limit) / cases[c].limit;
            printf(" %7.4f", ratio);
            /* Exact already when every folding edge is interior. */
            ck_assert(err < prev || err < 1e-12);
            prev = err;
            mesh_free(&m);
        }
        printf("  -> %.0f (error %.1f%%)\n", cases[c].limit, 100.0 * err);
        /* Boundary hinges are missing on a band one cell wide. */
        ck_assert_double_lt(err, 0.06);
    }
}
END_TEST

/* Calibration: on an equilateral mesh projected onto a sphere every edge
 * bends alike and the hinge sum tends to D/2 int (2H)^2 = 2 D A / R^2. */
START_TEST(test_sphere_equilateral)
{
    const double R = 1.0, half = 0.12; /* cap of half-width 0.12 R */
    printf("bending, equilateral mesh projected onto a sphere, ratio E / (D/2 (2H)^2 A):\n ");
    double prev = INFINITY, err = 0.0;
    for (int N = 8; N <= 64; N *= 2) {
        double l = 2.0 * half / N;
        flat_mesh m = equilateral_mesh(N, (int)(N * 2 / sqrt(3.0)), l);
        double A = mesh_area(&m);
        double param[3] = {R, 0.5 * (N + 0.5) * l, 0.5 * (int)(N * 2 / sqrt(3.0)) * l * sqrt(3.0) / 2.0};
        int nh;
        double Eh = bending_energy(&m, sphere, param, &nh);
        double ratio = Eh / (0.5 * plate_D() * 4.0 / (R * R) * A);
        err = fabs(ratio - 1.0);
        printf(" %7.4f", ratio);
        ck_assert_double_lt(err, prev);
        prev = err;
        mesh_free(&m);
    }
    printf("  -> 1 (error %.1f%%)\n", 100.0 * err);
    ck_assert_double_lt(err, 0.06);
}
END_TEST

static Suite *shell_analytic_suite(void)
{
    Suite *s = suite_create("shell_analytic");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_membrane_uniform_stretch);
    tcase_add_test(tc, test_cylinder_structured_grid);
    tcase_add_test(tc, test_cylinder_mesh_dependence);
    tcase_add_test(tc, test_sphere_equilateral);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(shell_analytic_suite)
