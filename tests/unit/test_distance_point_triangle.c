/* Point-triangle distance: derivatives against central finite differences
 * in every closest-feature region (deliberate and random configurations,
 * slivers, tiny distances), distance and classification against dense
 * sampling of the triangle, symmetries, conservation of momenta,
 * continuity, and the point-point, point-line and point-plane primitives. */
#include "check_main.h"
#include "contact/distance_point_triangle.h"
#include "distance_hessian.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Each test sets its own seed, so runs with and without fork agree. */
static uint64_t seed;
static double urand(void) /* uniform in [0, 1) */
{
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(seed >> 11) * (1.0 / 9007199254740992.0);
}
static double srand1(void) { return 2.0 * urand() - 1.0; }
static double lograND(double lo, double hi) { return pow(10.0, lo + (hi - lo) * urand()); }
static void rand_unit(double v[3])
{
    double n;
    do {
        v[0] = srand1(); v[1] = srand1(); v[2] = srand1();
        n = v3_norm(v);
    } while (n < 0.1 || n > 1.0);
    v3_scale(v, v, 1.0 / n);
}
static void normalize(double v[3]) { v3_scale(v, v, 1.0 / v3_norm(v)); }
static void rand_rotation(double R[3][3])
{
    double q[4], n;
    do {
        for (int i = 0; i < 4; i++) q[i] = srand1();
        n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    } while (n < 0.1 || n > 1.0);
    for (int i = 0; i < 4; i++) q[i] /= n;
    double w = q[0], x = q[1], y = q[2], z = q[3];
    double M[3][3] = {{1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y)},
                      {2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x)},
                      {2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)}};
    memcpy(R, M, sizeof M);
}
static void rotate(double r[3], double R[3][3], const double v[3])
{
    double t[3];
    for (int i = 0; i < 3; i++) t[i] = R[i][0] * v[0] + R[i][1] * v[1] + R[i][2] * v[2];
    v3_copy(r, t);
}
/* Largest power of two not above h: steps x +- h, x +- 2h are then exact. */
static double pow2_floor(double h) { return ldexp(1.0, (int)floor(log2(h))); }

/* ---- triangles ---------------------------------------------------------- */

typedef struct {
    double t[3][3];
    double lmax, emin, alt; /* longest, shortest edge, smallest altitude */
    double n[3];            /* unit normal along (t1 - t0) x (t2 - t1) */
} tri;

static void tri_finish(tri *T)
{
    double e[3][3], n[3];
    T->lmax = 0.0; T->emin = INFINITY;
    for (int k = 0; k < 3; k++) {
        v3_sub(e[k], T->t[(k + 1) % 3], T->t[k]);
        T->lmax = fmax(T->lmax, v3_norm(e[k]));
        T->emin = fmin(T->emin, v3_norm(e[k]));
    }
    v3_cross(n, e[0], e[1]);
    T->alt = v3_norm(n) / T->lmax;
    v3_scale(T->n, n, 1.0 / v3_norm(n));
}

/* kind 0: well shaped; 1: cap (apex within 1e-4..1e-2 of the base line);
 * 2: needle (one edge 1e-4..1e-2 of the others). Random placement. */
static void random_triangle(tri *T, int kind)
{
    for (;;) {
        double L = 0.5 + 1.5 * urand(), loc[3][3] = {{0}};
        if (kind == 0) {
            for (int k = 0; k < 3; k++)
                for (int i = 0; i < 3; i++) loc[k][i] = L * srand1();
        } else if (kind == 1) {
            loc[1][0] = L;
            loc[2][0] = (-0.3 + 1.6 * urand()) * L;
            loc[2][1] = lograND(-4, -2) * L;
        } else {
            double eps = lograND(-4, -2) * L, psi = 0.3 + (M_PI - 0.6) * urand();
            loc[1][0] = L;
            loc[2][0] = L + eps * cos(psi);
            loc[2][1] = eps * sin(psi);
        }
        double R[3][3], off[3];
        rand_rotation(R);
        for (int i = 0; i < 3; i++) off[i] = srand1();
        int shift = (int)(3 * urand());
        for (int k = 0; k < 3; k++) {
            rotate(T->t[(k + shift) % 3], R, loc[k]);
            v3_add(T->t[(k + shift) % 3], T->t[(k + shift) % 3], off);
        }
        tri_finish(T);
        if (kind != 0 || T->alt > 0.2 * T->lmax) return;
    }
}

static double edge_length(const tri *T, int k)
{
    double e[3];
    v3_sub(e, T->t[(k + 1) % 3], T->t[k]);
    return v3_norm(e);
}

/* Length over which the derivatives of d change (in the worst region):
 * d itself, and for a closest point on a small edge e or sliver of altitude
 * a seen from afar, e^2 / d or a^2 / d (the closest point then moves by
 * d / e per unit of vertex motion). FD steps are a small fraction of it. */
static double derivative_scale(const tri *T, double d)
{
    return fmin(d, fmin(T->emin * fmin(1.0, T->emin / d), T->alt * fmin(1.0, T->alt / d)));
}

/* Log-uniform distance in [1e-6 lmax, min(lmax, dmax)]. Near a sliver or a
 * short edge d stays within 10 times its size: from farther away the
 * derivative scale (above) drops below what double-precision differences
 * resolve. */
static double distance_upto(const tri *T, double dmax)
{
    double hi = fmin(0.0, log10(dmax / T->lmax));
    return T->lmax * pow(10.0, -6.0 + (hi + 6.0) * urand());
}

static void stencil_of(double x[4][3], const double p[3], const tri *T)
{
    v3_copy(x[0], p);
    for (int k = 0; k < 3; k++) v3_copy(x[k + 1], T->t[k]);
}

/* ---- finite differences -------------------------------------------------- */

/* max |a - b| / max |a|: a the analytic value. */
static double rel_err(const double *a, const double *b, int n)
{
    double s = 0.0, e = 0.0;
    for (int i = 0; i < n; i++) { s = fmax(s, fabs(a[i])); e = fmax(e, fabs(a[i] - b[i])); }
    return e / s;
}

/* Fourth-order central differences (x +- h, x +- 2h) of d against the
 * gradient and of the gradient against the Hessian. Returns 0 when an
 * evaluation left the region `feature` (the FD would mix formulas). */
static int fd_check(const double x0[4][3], double h, int feature, double *eg, double *eh)
{
    static const double off[4] = {-2.0, -1.0, 1.0, 2.0};
    double x[4][3], g[4][3], H[12][12], fg[12], fh[12][12];
    memcpy(x, x0, sizeof x);
    avi_pt_distance_gradient((const double (*)[3])x, g);
    avi_pt_distance_hessian((const double (*)[3])x, H);
    h = pow2_floor(h);
    for (int i = 0; i < 12; i++) {
        double *xi = &x[i / 3][i % 3], xi0 = *xi, dv[4], gv[4][4][3];
        for (int s = 0; s < 4; s++) {
            int f;
            *xi = xi0 + off[s] * h;
            dv[s] = avi_pt_distance((const double (*)[3])x, &f);
            avi_pt_distance_gradient((const double (*)[3])x, gv[s]);
            if (f != feature) { *xi = xi0; return 0; }
        }
        *xi = xi0;
        fg[i] = (8.0 * (dv[2] - dv[1]) - (dv[3] - dv[0])) / (12.0 * h);
        for (int r = 0; r < 12; r++) {
            const double *a = &gv[0][0][0] + r;
            fh[r][i] = (8.0 * (a[24] - a[12]) - (a[36] - a[0])) / (12.0 * h);
        }
    }
    *eg = rel_err(&g[0][0], fg, 12);
    *eh = rel_err(&H[0][0], &fh[0][0], 144);
    return 1;
}

typedef struct {
    int n;
    double eg, eh;
} fd_tally;

static void tally(fd_tally *t, double eg, double eh)
{
    t->n++;
    t->eg = fmax(t->eg, eg);
    t->eh = fmax(t->eh, eh);
}

static const char *feature_name[7] = {"face", "edge01", "edge12", "edge20", "vertex0", "vertex1", "vertex2"};

static int n_per_case(void) { return avi_test_quick() ? 60 : 250; }

/* Point in the face region, offset D along +-n. With bmin >= 0.1 all
 * barycentrics are at least bmin; with a smaller bmin one barycentric is
 * exactly bmin (the point projects just inside an edge), the others >= 0.1. */
static void face_config(double x[4][3], const tri *T, double bmin, double D)
{
    double b[3], q[3] = {0, 0, 0}, p[3];
    if (bmin >= 0.1) {
        double u = urand(), v = urand();
        if (u + v > 1.0) { u = 1.0 - u; v = 1.0 - v; }
        b[0] = u; b[1] = v; b[2] = 1.0 - u - v;
        for (int i = 0; i < 3; i++) b[i] = bmin + (1.0 - 3.0 * bmin) * b[i];
    } else {
        int k = (int)(3 * urand());
        double w = 0.1 + (0.8 - bmin) * urand();
        b[k] = bmin;
        b[(k + 1) % 3] = w;
        b[(k + 2) % 3] = 1.0 - bmin - w;
    }
    for (int i = 0; i < 3; i++) v3_axpy(q, b[i], T->t[i]);
    v3_copy(p, q);
    v3_axpy(p, urand() < 0.5 ? D : -D, T->n);
    stencil_of(x, p, T);
}

START_TEST(test_fd_face)
{
    seed = 1001;
    fd_tally all = {0};
    int n = n_per_case();
    for (int trial = 0; trial < 3 * n; trial++) {
        tri T;
        random_triangle(&T, trial % 3);
        /* a third of them project just inside an edge, bmin alt_k from it */
        double bmin = trial % 9 < 3 ? lograND(-3, -2) : 0.1;
        double D = distance_upto(&T, 10.0 * T.alt), x[4][3], eg, eh;
        face_config(x, &T, bmin, D);
        int f;
        double d = avi_pt_distance((const double (*)[3])x, &f);
        ck_assert_int_eq(f, AVI_PT_FACE);
        ck_assert_msg(fabs(d - D) <= 1e-12 * T.lmax, "face d %.17g expected %.17g", d, D);
        double lr = T.alt * fmin(1.0, T.alt / D), h = fmin(0.01 * fmin(D, lr), 0.25 * bmin * lr);
        ck_assert_msg(fd_check((const double (*)[3])x, h, AVI_PT_FACE, &eg, &eh),
                      "FD stencil left the face region (trial %d)", trial);
        tally(&all, eg, eh);
    }
    printf("pt face: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n", all.n,
           all.eg, all.eh);
    ck_assert(all.eg <= 1e-6 && all.eh <= 1e-6);
}
END_TEST

/* Point in the region of edge k (t_k t_k+1): closest point at parameter
 * tau in [0.1, 0.9], direction at angle phi in [-75, 75] degrees from the
 * outward in-plane normal (+-90 degrees is the face region's boundary). */
static void edge_config(double x[4][3], const tri *T, int k, double D)
{
    const double *a = T->t[k], *b = T->t[(k + 1) % 3];
    double e[3], o[3], q[3], p[3];
    v3_sub(e, b, a);
    v3_cross(o, e, T->n);
    normalize(o);
    double tau = 0.1 + 0.8 * urand(), phi = (srand1() * 75.0) * M_PI / 180.0;
    v3_copy(q, a);
    v3_axpy(q, tau, e);
    v3_copy(p, q);
    v3_axpy(p, D * cos(phi), o);
    v3_axpy(p, D * sin(phi), T->n);
    stencil_of(x, p, T);
}

START_TEST(test_fd_edges)
{
    seed = 1002;
    int n = n_per_case();
    for (int k = 0; k < 3; k++) {
        fd_tally all = {0};
        for (int trial = 0; trial < n; trial++) {
            tri T;
            random_triangle(&T, trial % 3);
            double ek = edge_length(&T, k);
            double D = distance_upto(&T, 10.0 * ek), x[4][3], eg, eh;
            edge_config(x, &T, k, D);
            int f;
            double d = avi_pt_distance((const double (*)[3])x, &f);
            ck_assert_int_eq(f, AVI_PT_EDGE01 + k);
            ck_assert_msg(fabs(d - D) <= 1e-12 * T.lmax, "edge d %.17g expected %.17g", d, D);
            double h = 0.01 * fmin(fmin(D, ek * fmin(1.0, ek / D)), T.alt);
            ck_assert_msg(fd_check((const double (*)[3])x, h, f, &eg, &eh),
                          "FD stencil left the edge region (trial %d)", trial);
            tally(&all, eg, eh);
        }
        printf("pt %s: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n",
               feature_name[AVI_PT_EDGE01 + k], all.n, all.eg, all.eh);
        ck_assert(all.eg <= 1e-6 && all.eh <= 1e-6);
    }
}
END_TEST

/* Direction in vertex k's normal cone with margin: v . (t_j - t_k) <=
 * -0.2 |t_j - t_k| for both other vertices. 0 when the cone is too thin. */
static int vertex_direction(double v[3], const tri *T, int k)
{
    double e1[3], e2[3];
    v3_sub(e1, T->t[(k + 1) % 3], T->t[k]);
    v3_sub(e2, T->t[(k + 2) % 3], T->t[k]);
    normalize(e1);
    normalize(e2);
    for (int tries = 0; tries < 2000; tries++) {
        rand_unit(v);
        if (v3_dot(v, e1) <= -0.2 && v3_dot(v, e2) <= -0.2) return 1;
    }
    return 0;
}

START_TEST(test_fd_vertices)
{
    seed = 1003;
    int n = n_per_case();
    for (int k = 0; k < 3; k++) {
        fd_tally all = {0};
        for (int trial = 0; all.n < n; trial++) {
            tri T;
            random_triangle(&T, trial % 3);
            double v[3], p[3], x[4][3], eg, eh;
            if (!vertex_direction(v, &T, k)) continue;
            double D = lograND(-6, 0) * T.lmax;
            v3_copy(p, T.t[k]);
            v3_axpy(p, D, v);
            stencil_of(x, p, &T);
            int f;
            double d = avi_pt_distance((const double (*)[3])x, &f);
            ck_assert_int_eq(f, AVI_PT_VERTEX0 + k);
            ck_assert_msg(fabs(d - D) <= 1e-12 * T.lmax, "vertex d %.17g expected %.17g", d, D);
            ck_assert_msg(fd_check((const double (*)[3])x, 0.01 * fmin(D, T.emin), f, &eg, &eh),
                          "FD stencil left the vertex region (trial %d)", trial);
            tally(&all, eg, eh);
        }
        printf("pt %s: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n",
               feature_name[AVI_PT_VERTEX0 + k], all.n, all.eg, all.eh);
        ck_assert(all.eg <= 1e-6 && all.eh <= 1e-6);
    }
}
END_TEST

/* Random points about random (also skinny) triangles: FD wherever the
 * stencil stays in one region; at least 200 checked per region type. */
START_TEST(test_fd_random)
{
    seed = 1004;
    fd_tally per[7] = {{0}};
    int skipped = 0, illcond = 0, quick = avi_test_quick();
    int want = quick ? 40 : 200;
    for (int trial = 0; trial < 200000; trial++) {
        int ne = per[1].n + per[2].n + per[3].n, nv = per[4].n + per[5].n + per[6].n;
        int done = per[AVI_PT_FACE].n >= want && ne >= want && nv >= want;
        for (int k = 0; k < 3; k++) done = done && per[1 + k].n >= want / 4 && per[4 + k].n >= want / 4;
        if (done) break;
        tri T;
        random_triangle(&T, trial % 3);
        double p[3], x[4][3], eg, eh;
        for (int i = 0; i < 3; i++) p[i] = (T.t[0][i] + T.t[1][i] + T.t[2][i]) / 3.0 + 1.2 * T.lmax * srand1();
        if (trial % 4 == 0) { /* close to the plane */
            double r[3];
            v3_sub(r, p, T.t[0]);
            v3_axpy(p, -v3_dot(r, T.n) * (1.0 - lograND(-6, 0)), T.n);
        }
        stencil_of(x, p, &T);
        int f;
        double d = avi_pt_distance((const double (*)[3])x, &f);
        double l = derivative_scale(&T, d);
        if (l < 1e-4 * T.lmax) { illcond++; continue; }
        if (!fd_check((const double (*)[3])x, 0.01 * l, f, &eg, &eh)) { skipped++; continue; }
        tally(&per[f], eg, eh);
    }
    double weg = 0.0, weh = 0.0;
    for (int f = 0; f < 7; f++) {
        printf("pt random %s: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n",
               feature_name[f], per[f].n, per[f].eg, per[f].eh);
        weg = fmax(weg, per[f].eg);
        weh = fmax(weh, per[f].eh);
    }
    printf("pt random: %d skipped (FD stencil crossed a region boundary), %d not tried "
           "(derivative scale below 1e-4 lmax)\n", skipped, illcond);
    ck_assert(per[AVI_PT_FACE].n >= want);
    ck_assert(per[1].n + per[2].n + per[3].n >= want && per[4].n + per[5].n + per[6].n >= want);
    ck_assert(weg <= 1e-6 && weh <= 1e-6);
}
END_TEST

/* ---- brute force --------------------------------------------------------- */

/* Squared distances to a barycentric grid x = t0 + (i/N)(t1 - t0) + (j/N)(t2 - t0)
 * with the smallest per region (sampled region of a grid point: corner =
 * vertex, other boundary points = edge, rest = face). */
#define NGRID 200
static void sample_regions(const double p[3], const tri *T, double m[7])
{
    for (int f = 0; f < 7; f++) m[f] = INFINITY;
    double e1[3], e2[3], r[3];
    v3_sub(e1, T->t[1], T->t[0]);
    v3_sub(e2, T->t[2], T->t[0]);
    v3_sub(r, p, T->t[0]);
    for (int i = 0; i <= NGRID; i++)
        for (int j = 0; i + j <= NGRID; j++) {
            double a = (double)i / NGRID, b = (double)j / NGRID, w[3];
            for (int c = 0; c < 3; c++) w[c] = r[c] - a * e1[c] - b * e2[c];
            double f2 = v3_dot(w, w);
            int k = NGRID - i - j, f;
            if (i == 0 && j == 0) f = AVI_PT_VERTEX0;
            else if (i == NGRID) f = AVI_PT_VERTEX1;
            else if (j == NGRID) f = AVI_PT_VERTEX2;
            else if (j == 0) f = AVI_PT_EDGE01;
            else if (k == 0) f = AVI_PT_EDGE12;
            else if (i == 0) f = AVI_PT_EDGE20;
            else f = AVI_PT_FACE;
            if (f2 < m[f]) m[f] = f2;
        }
}

/* d must not exceed the sampled minimum (beyond rounding) and must be within
 * the grid's resolution c (every point of the triangle is within c of a grid
 * point) below it. Classification: sampled values within c of the closest
 * point q* exceed d^2 by at most 4 c^2 in q*'s own region (the squared
 * distance grows quadratically along the closest feature), so when one
 * region's sampled minimum beats all others by 8 c^2 it is q*'s region. */
START_TEST(test_brute_force)
{
    seed = 1005;
    int n = avi_test_quick() ? 60 : 500, checked = 0, per[7] = {0};
    double worst_gap = 0.0;
    for (int trial = 0; trial < n; trial++) {
        tri T;
        random_triangle(&T, trial % 5 == 4 ? 1 + trial % 2 : 0);
        double p[3], x[4][3], m[7];
        for (int i = 0; i < 3; i++) p[i] = (T.t[0][i] + T.t[1][i] + T.t[2][i]) / 3.0 + 1.2 * T.lmax * srand1();
        if (trial % 3 == 0) { /* near the plane */
            double r[3];
            v3_sub(r, p, T.t[0]);
            v3_axpy(p, -v3_dot(r, T.n) * (1.0 - lograND(-4, 0)), T.n);
        } else if (trial % 3 == 1) { /* over the triangle or just off it */
            double u = -0.1 + 1.2 * urand(), v = -0.1 + 1.2 * urand();
            if (u + v > 1.1) { u = 1.0 - u; v = 1.0 - v; }
            double b[3] = {u, v, 1.0 - u - v};
            v3_copy(p, T.t[0]);
            for (int k = 0; k < 3; k++) {
                double e[3];
                v3_sub(e, T.t[k], T.t[0]);
                v3_axpy(p, b[k], e);
            }
            v3_axpy(p, srand1() * lograND(-4, 0) * T.lmax, T.n);
        }
        stencil_of(x, p, &T);
        int f;
        double d = avi_pt_distance((const double (*)[3])x, &f);
        sample_regions(p, &T, m);
        double best = INFINITY;
        int fs = 0;
        for (int r = 0; r < 7; r++)
            if (m[r] < best) { best = m[r]; fs = r; }
        double c = T.lmax / NGRID, smin = sqrt(best);
        ck_assert_msg(d <= smin + 1e-12 * T.lmax, "d %.17g above sampled minimum %.17g", d, smin);
        ck_assert_msg(smin - d <= c, "d %.17g below sampled minimum %.17g by more than %g", d, smin, c);
        worst_gap = fmax(worst_gap, (smin - d) / c);
        int clear = 1;
        for (int r = 0; r < 7; r++)
            if (r != fs && m[r] < best + 8.0 * c * c) clear = 0;
        if (clear) {
            ck_assert_msg(f == fs, "trial %d: feature %s, sampled %s", trial, feature_name[f], feature_name[fs]);
            checked++;
            per[f]++;
        }
    }
    printf("pt brute force: %d configurations, sampled minus computed d at most %.2f grid cells; "
           "classification checked at %d (face %d, edges %d %d %d, vertices %d %d %d)\n",
           n, worst_gap, checked, per[0], per[1], per[2], per[3], per[4], per[5], per[6]);
    ck_assert(checked >= n / 2);
    for (int r = 0; r < 7; r++) ck_assert(per[r] > 0);
}
END_TEST

/* ---- symmetry, invariance, momenta ------------------------------------ */

static void random_config(double x[4][3], tri *T, int trial)
{
    random_triangle(T, trial % 3);
    double p[3];
    for (int i = 0; i < 3; i++) p[i] = (T->t[0][i] + T->t[1][i] + T->t[2][i]) / 3.0 + 1.2 * T->lmax * srand1();
    if (trial % 4 == 1) {
        double r[3];
        v3_sub(r, p, T->t[0]);
        v3_axpy(p, -v3_dot(r, T->n) * (1.0 - lograND(-6, 0)), T->n);
    }
    stencil_of(x, p, T);
}

START_TEST(test_relabel_invariance)
{
    seed = 1006;
    /* Cyclic shift (t0 t1 t2) -> (t1 t2 t0) and reversal (t0 t2 t1). */
    static const int shift_f[7] = {AVI_PT_FACE, AVI_PT_EDGE20, AVI_PT_EDGE01, AVI_PT_EDGE12,
                                   AVI_PT_VERTEX2, AVI_PT_VERTEX0, AVI_PT_VERTEX1};
    static const int rev_f[7] = {AVI_PT_FACE, AVI_PT_EDGE20, AVI_PT_EDGE12, AVI_PT_EDGE01,
                                 AVI_PT_VERTEX0, AVI_PT_VERTEX2, AVI_PT_VERTEX1};
    int n = avi_test_quick() ? 200 : 2000;
    double worst = 0.0;
    for (int trial = 0; trial < n; trial++) {
        tri T;
        double x[4][3], y[4][3], z[4][3];
        int deliberate = trial % 2;
        int want = -1;
        if (deliberate) { /* known feature with margins: check the relabelled feature too */
            random_triangle(&T, trial % 3);
            double D = lograND(-6, 0) * T.lmax;
            int kind = (trial / 2) % 7;
            if (kind == 0) face_config(x, &T, 0.1, D);
            else if (kind <= 3) edge_config(x, &T, kind - 1, D);
            else {
                double v[3];
                if (!vertex_direction(v, &T, kind - 4)) continue;
                v3_copy(x[0], T.t[kind - 4]);
                v3_axpy(x[0], D, v);
                for (int k = 0; k < 3; k++) v3_copy(x[k + 1], T.t[k]);
            }
            want = kind;
        } else {
            random_config(x, &T, trial);
        }
        int f, fs, fr;
        double d = avi_pt_distance((const double (*)[3])x, &f);
        if (want >= 0) ck_assert_int_eq(f, want);
        v3_copy(y[0], x[0]); v3_copy(y[1], x[2]); v3_copy(y[2], x[3]); v3_copy(y[3], x[1]);
        v3_copy(z[0], x[0]); v3_copy(z[1], x[1]); v3_copy(z[2], x[3]); v3_copy(z[3], x[2]);
        double ds = avi_pt_distance((const double (*)[3])y, &fs);
        double dr = avi_pt_distance((const double (*)[3])z, &fr);
        double tol = 1e-13 * T.lmax;
        ck_assert_msg(fabs(ds - d) <= tol && fabs(dr - d) <= tol, "relabelled d %.17g %.17g vs %.17g", ds, dr, d);
        worst = fmax(worst, fmax(fabs(ds - d), fabs(dr - d)) / T.lmax);
        if (want >= 0) {
            ck_assert_int_eq(fs, shift_f[f]);
            ck_assert_int_eq(fr, rev_f[f]);
        }
    }
    printf("pt relabelling: %d configurations, worst |delta d| / lmax %.2e\n", n, worst);
}
END_TEST

START_TEST(test_rigid_motion_and_momenta)
{
    seed = 1007;
    int n = avi_test_quick() ? 200 : 2000;
    double worst_d = 0.0, worst_g = 0.0, worst_lin = 0.0, worst_ang = 0.0, worst_h = 0.0;
    for (int trial = 0; trial < n; trial++) {
        tri T;
        double x[4][3], y[4][3], g[4][3], gy[4][3], R[3][3], off[3], H[12][12];
        random_config(x, &T, trial);
        rand_rotation(R);
        for (int i = 0; i < 3; i++) off[i] = 10.0 * srand1();
        for (int k = 0; k < 4; k++) {
            rotate(y[k], R, x[k]);
            v3_add(y[k], y[k], off);
        }
        double d = avi_pt_distance_gradient((const double (*)[3])x, g);
        double dy = avi_pt_distance_gradient((const double (*)[3])y, gy);
        double dh = avi_pt_distance_hessian((const double (*)[3])x, H);
        ck_assert(dh == d);
        /* rounding of coordinates of size |off| + lmax */
        double ed = fabs(dy - d) / (T.lmax + v3_norm(off));
        ck_assert_msg(ed <= 1e-14, "rigid motion changed d: %.17g vs %.17g", d, dy);
        worst_d = fmax(worst_d, ed);
        int f;
        avi_pt_distance((const double (*)[3])x, &f);
        double xs = 0.0, gs = 0.0, hs = 0.0;
        for (int k = 0; k < 4; k++) { xs = fmax(xs, v3_norm(x[k])); gs = fmax(gs, v3_norm(g[k])); }
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 12; j++) hs = fmax(hs, fabs(H[i][j]));
        if (d > 1e-3 * T.lmax && T.alt > 1e-3 * T.lmax) { /* gradient conditioning ~ lmax / min(d, alt) */
            double eg = 0.0;
            for (int k = 0; k < 4; k++) {
                double rg[3];
                rotate(rg, R, g[k]);
                v3_sub(rg, rg, gy[k]);
                eg = fmax(eg, v3_norm(rg) / gs);
            }
            ck_assert_msg(eg <= 1e-9, "gradient not rotated with the stencil: %.3g", eg);
            worst_g = fmax(worst_g, eg);
        }
        /* Translation: sum g = 0; rotation: sum x x g = 0. */
        double lin[3] = {0, 0, 0}, ang[3] = {0, 0, 0};
        for (int k = 0; k < 4; k++) {
            double t[3];
            v3_add(lin, lin, g[k]);
            v3_cross(t, x[k], g[k]);
            v3_add(ang, ang, t);
        }
        double el = v3_norm(lin) / gs, ea = v3_norm(ang) / (xs * gs);
        ck_assert_msg(el <= 1e-14, "sum of gradient %.3g (feature %s)", el, feature_name[f]);
        ck_assert_msg(ea <= 1e-9, "torque of gradient %.3g (feature %s)", ea, feature_name[f]);
        worst_lin = fmax(worst_lin, el);
        worst_ang = fmax(worst_ang, ea);
        /* Hessian: symmetric, rows sum to zero, and the derivative of
         * sum x_k x g_k = 0 along dof (l, b): e_b x g_l + sum_k x_k x H[k][l b] = 0. */
        double eh = 0.0;
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 12; j++) eh = fmax(eh, fabs(H[i][j] - H[j][i]) / hs);
        for (int col = 0; col < 12; col++) {
            double s[3] = {0, 0, 0}, tq[3] = {0, 0, 0}, eb[3] = {0, 0, 0}, t[3];
            eb[col % 3] = 1.0;
            v3_cross(tq, eb, g[col / 3]);
            for (int k = 0; k < 4; k++) {
                double hk[3] = {H[3 * k][col], H[3 * k + 1][col], H[3 * k + 2][col]};
                v3_add(s, s, hk);
                v3_cross(t, x[k], hk);
                v3_add(tq, tq, t);
            }
            eh = fmax(eh, v3_norm(s) / hs);
            eh = fmax(eh, v3_norm(tq) / (xs * hs + gs));
        }
        ck_assert_msg(eh <= 1e-9, "Hessian symmetry / invariance error %.3g (feature %s)", eh, feature_name[f]);
        worst_h = fmax(worst_h, eh);
    }
    printf("pt rigid motion: %d configurations; worst relative change of d %.2e, of rotated gradient %.2e; "
           "momentum residuals %.2e (linear) %.2e (angular); Hessian %.2e\n",
           n, worst_d, worst_g, worst_lin, worst_ang, worst_h);
}
END_TEST

/* ---- continuity -------------------------------------------------------- */

/* Moving the triangle's vertices by at most delta moves the triangle by at
 * most delta in the Hausdorff sense, so |delta d| <= delta + |delta p|: this checks
 * continuity across every region switch, the degenerate fallback included. */
START_TEST(test_lipschitz)
{
    seed = 1008;
    int n = avi_test_quick() ? 500 : 20000, switches = 0;
    for (int trial = 0; trial < n; trial++) {
        tri T;
        double x[4][3], y[4][3];
        random_config(x, &T, trial);
        double delta = lograND(-9, -1) * T.lmax, moved[4];
        for (int k = 0; k < 4; k++) {
            double v[3];
            rand_unit(v);
            moved[k] = delta * urand();
            v3_copy(y[k], x[k]);
            v3_axpy(y[k], moved[k], v);
        }
        /* the point moves by moved[0], the triangle by at most the largest of the rest */
        double bound = moved[0] + fmax(moved[1], fmax(moved[2], moved[3]));
        int f0, f1;
        double d0 = avi_pt_distance((const double (*)[3])x, &f0);
        double d1 = avi_pt_distance((const double (*)[3])y, &f1);
        switches += f0 != f1;
        ck_assert_msg(fabs(d1 - d0) <= bound + 1e-14 * T.lmax, "|delta d| %.3g > %.3g (%s -> %s)",
                      fabs(d1 - d0), bound, feature_name[f0], feature_name[f1]);
    }
    printf("pt Lipschitz: %d perturbations, %d of them across a region switch\n", n, switches);
    ck_assert(switches > n / 20);
}
END_TEST

/* Flatten a triangle through the degenerate threshold (smallest altitude
 * 1e-8 lmax): d moves continuously, to within that altitude. */
START_TEST(test_degenerate_switch)
{
    seed = 1009;
    static const double heights[] = {1e-3, 1e-9};
    int faces = 0, edges = 0;
    for (int ih = 0; ih < 2; ih++)
        for (int side = 0; side < 2; side++) {
            double prev = -1.0, hprev = 0.0;
            for (int s = 0; s <= 400; s++) {
                double h = pow(10.0, -6.0 - 4.0 * s / 400.0); /* altitude 1e-6 .. 1e-10 */
                double x[4][3] = {{0.4, side ? -0.3 * h : 0.3 * h, heights[ih]},
                                  {0, 0, 0}, {1, 0, 0}, {0.5, h, 0}};
                int f;
                double d = avi_pt_distance((const double (*)[3])x, &f);
                faces += f == AVI_PT_FACE;
                edges += f != AVI_PT_FACE;
                /* side 0 projects inside the sliver, side 1 outside */
                ck_assert(f == AVI_PT_FACE || h < 1.01e-8 || side);
                ck_assert(f != AVI_PT_FACE || (h > 0.99e-8 && !side));
                if (prev >= 0.0)
                    ck_assert_msg(fabs(d - prev) <= 1.5 * (hprev - h) + 1e-8 + 1e-15,
                                  "jump %.3g at altitude %.3g", fabs(d - prev), h);
                prev = d;
                hprev = h;
                ck_assert(d >= heights[ih] * (1.0 - 1e-12) && d <= heights[ih] + h);
            }
        }
    ck_assert(faces > 0 && edges > 0);
}
END_TEST

/* Exactly degenerate triangles (collinear, coincident vertices): distance
 * to the segments, against sampling. */
START_TEST(test_degenerate_triangles)
{
    seed = 1010;
    for (int trial = 0; trial < 300; trial++) {
        double a[3], b[3], x[4][3];
        for (int i = 0; i < 3; i++) { a[i] = srand1(); b[i] = srand1(); x[0][i] = 1.5 * srand1(); }
        double s[3] = {0.0, 1.0, trial % 3 == 0 ? 1.0 : (trial % 3 == 1 ? 0.0 : -0.5 + 2.0 * urand())};
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) x[k + 1][i] = a[i] + s[k] * (b[i] - a[i]);
        if (trial % 10 == 9) { /* all three coincide */
            memcpy(x[2], x[1], sizeof x[1]);
            memcpy(x[3], x[1], sizeof x[1]);
        }
        int f;
        double d = avi_pt_distance((const double (*)[3])x, &f), best = INFINITY, g[4][3];
        ck_assert(f != AVI_PT_FACE);
        for (int k = 0; k < 3; k++)
            for (int i = 0; i <= 4000; i++) {
                double w[3];
                for (int c = 0; c < 3; c++)
                    w[c] = x[0][c] - (x[1 + k][c] + (double)i / 4000 * (x[1 + (k + 1) % 3][c] - x[1 + k][c]));
                best = fmin(best, v3_norm(w));
            }
        ck_assert(d <= best + 1e-14 && best - d <= 1e-3 * 3.0);
        double dg = avi_pt_distance_gradient((const double (*)[3])x, g);
        ck_assert(dg == d);
        for (int k = 0; k < 4; k++) ck_assert(v3_isfinite(g[k]));
    }
}
END_TEST

/* ---- primitives ---------------------------------------------------------- */

/* The primitives through the stencil interface: slot layouts of 2, 3, 4. */
static double prim_d(int kind, const double x[4][3])
{
    switch (kind) {
    case 0: return avi_point_point_distance(x[0], x[1]);
    case 1: return avi_point_line_distance(x[0], x[1], x[2]);
    default: return avi_point_plane_distance(x[0], x[1], x[2], x[3]);
    }
}
static void prim_g(int kind, const double x[4][3], double g[12])
{
    memset(g, 0, sizeof(double) * 12);
    switch (kind) {
    case 0: avi_point_point_distance_gradient(x[0], x[1], (double (*)[3])g); break;
    case 1: avi_point_line_distance_gradient(x[0], x[1], x[2], (double (*)[3])g); break;
    default: avi_point_plane_distance_gradient(x[0], x[1], x[2], x[3], (double (*)[3])g); break;
    }
}
static void prim_h(int kind, const double x[4][3], double H[144], int *n)
{
    *n = kind == 0 ? 6 : (kind == 1 ? 9 : 12);
    switch (kind) {
    case 0: avi_point_point_distance_hessian(x[0], x[1], (double (*)[6])H); break;
    case 1: avi_point_line_distance_hessian(x[0], x[1], x[2], (double (*)[9])H); break;
    default: avi_point_plane_distance_hessian(x[0], x[1], x[2], x[3], (double (*)[12])H); break;
    }
}

START_TEST(test_primitives)
{
    seed = 1011;
    static const char *names[3] = {"point-point", "point-line", "point-plane"};
    int n = n_per_case();
    for (int kind = 0; kind < 3; kind++) {
        double weg = 0.0, weh = 0.0, wref = 0.0;
        for (int trial = 0; trial < n; trial++) {
            double x[4][3], H[144], fg[12], fh[144], g[12];
            int nd;
            for (int k = 0; k < 4; k++)
                for (int i = 0; i < 3; i++) x[k][i] = srand1();
            /* keep the features well shaped: FD scale below */
            double e01[3], e02[3], e12[3], cr[3];
            v3_sub(e01, x[2], x[1]); v3_sub(e02, x[3], x[1]); v3_sub(e12, x[3], x[2]);
            v3_cross(cr, e01, e02);
            if (kind >= 1 && v3_norm(e01) < 0.2) { trial--; continue; }
            if (kind == 2 && (v3_norm(e02) < 0.2 || v3_norm(e12) < 0.2 || v3_norm(cr) < 0.1 * 4.0 * 3.0)) { trial--; continue; }
            /* pull the point towards the feature: tiny distances too */
            double q[3] = {0, 0, 0}, t = lograND(-5, 0);
            for (int k = 1; k <= kind + 1; k++) v3_axpy(q, 1.0 / (kind + 1), x[k]);
            for (int i = 0; i < 3; i++) x[0][i] = q[i] + t * (x[0][i] - q[i]);
            /* independent formulas */
            double r[3], e[3], f[3], nrm[3], ref;
            v3_sub(r, x[0], x[1]);
            v3_sub(e, x[2], x[1]);
            v3_sub(f, x[3], x[1]);
            if (kind == 0) ref = v3_norm(r);
            else if (kind == 1) { v3_cross(nrm, r, e); ref = v3_norm(nrm) / v3_norm(e); }
            else { v3_cross(nrm, e, f); ref = fabs(v3_dot(r, nrm)) / v3_norm(nrm); }
            double d = prim_d(kind, (const double (*)[3])x);
            wref = fmax(wref, fabs(d - ref) / fmax(d, 1e-300));
            ck_assert_msg(fabs(d - ref) <= 1e-9 * d + 1e-15, "%s: %.17g vs %.17g", names[kind], d, ref);
            prim_g(kind, (const double (*)[3])x, g);
            prim_h(kind, (const double (*)[3])x, H, &nd);
            double h = pow2_floor(0.01 * fmin(d, 0.05));
            for (int i = 0; i < nd; i++) {
                double *xi = &x[i / 3][i % 3], x0 = *xi, dv[4], gv[4][12];
                static const double off[4] = {-2, -1, 1, 2};
                for (int s = 0; s < 4; s++) {
                    *xi = x0 + off[s] * h;
                    dv[s] = prim_d(kind, (const double (*)[3])x);
                    prim_g(kind, (const double (*)[3])x, gv[s]);
                }
                *xi = x0;
                fg[i] = (8.0 * (dv[2] - dv[1]) - (dv[3] - dv[0])) / (12.0 * h);
                for (int rr = 0; rr < nd; rr++)
                    fh[rr * nd + i] = (8.0 * (gv[2][rr] - gv[1][rr]) - (gv[3][rr] - gv[0][rr])) / (12.0 * h);
            }
            weg = fmax(weg, rel_err(g, fg, nd));
            weh = fmax(weh, rel_err(H, fh, nd * nd));
        }
        printf("%s: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e; "
               "vs direct formula %.2e\n", names[kind], n, weg, weh, wref);
        ck_assert(weg <= 1e-6 && weh <= 1e-6);
    }
}
END_TEST

static Suite *distance_pt_suite(void)
{
    Suite *s = suite_create("distance_point_triangle");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fd_face);
    tcase_add_test(tc, test_fd_edges);
    tcase_add_test(tc, test_fd_vertices);
    tcase_add_test(tc, test_fd_random);
    tcase_add_test(tc, test_brute_force);
    tcase_add_test(tc, test_relabel_invariance);
    tcase_add_test(tc, test_rigid_motion_and_momenta);
    tcase_add_test(tc, test_lipschitz);
    tcase_add_test(tc, test_degenerate_switch);
    tcase_add_test(tc, test_degenerate_triangles);
    tcase_add_test(tc, test_primitives);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(distance_pt_suite)
