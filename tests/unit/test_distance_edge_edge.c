/* Edge-edge distance: derivatives against central finite differences in
 * every closest-feature region (deliberate and random configurations,
 * nearly parallel edges, tiny distances), distance and classification
 * against dense sampling of both segments, symmetries, conservation of
 * momenta, continuity across the parallel fallback, degenerate edges, and
 * the line-line primitive. */
#include "check_main.h"
#include "contact/distance_edge_edge.h"
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
/* Random unit vector normal to the unit vector a. */
static void rand_perp(double v[3], const double a[3])
{
    double r[3];
    do {
        rand_unit(r);
        v3_axpy(r, -v3_dot(r, a), a);
    } while (v3_norm(r) < 0.1);
    v3_scale(v, r, 1.0 / v3_norm(r));
}
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
/* Random rotation and a translation of at most 1 per coordinate. */
static void place(double x[4][3])
{
    double R[3][3], off[3];
    rand_rotation(R);
    for (int i = 0; i < 3; i++) off[i] = srand1();
    for (int k = 0; k < 4; k++) {
        rotate(x[k], R, x[k]);
        v3_add(x[k], x[k], off);
    }
}
/* Largest power of two not above h: steps x +- h, x +- 2h are then exact. */
static double pow2_floor(double h) { return ldexp(1.0, (int)floor(log2(h))); }

static const char *feature_name[9] = {"edge-edge", "a0-edge b", "a1-edge b", "b0-edge a", "b1-edge a",
                                      "a0-b0", "a0-b1", "a1-b0", "a1-b1"};

/* Relabellings of the stencil and what they do to the feature. */
static const int perm[3][4] = {{1, 0, 2, 3}, {0, 1, 3, 2}, {2, 3, 0, 1}}; /* reverse a, reverse b, swap */
static const int perm_f[3][9] = {
    {AVI_EE_EDGE_EDGE, AVI_EE_A1_EDGE_B, AVI_EE_A0_EDGE_B, AVI_EE_B0_EDGE_A, AVI_EE_B1_EDGE_A,
     AVI_EE_A1_B0, AVI_EE_A1_B1, AVI_EE_A0_B0, AVI_EE_A0_B1},
    {AVI_EE_EDGE_EDGE, AVI_EE_A0_EDGE_B, AVI_EE_A1_EDGE_B, AVI_EE_B1_EDGE_A, AVI_EE_B0_EDGE_A,
     AVI_EE_A0_B1, AVI_EE_A0_B0, AVI_EE_A1_B1, AVI_EE_A1_B0},
    {AVI_EE_EDGE_EDGE, AVI_EE_B0_EDGE_A, AVI_EE_B1_EDGE_A, AVI_EE_A0_EDGE_B, AVI_EE_A1_EDGE_B,
     AVI_EE_A0_B0, AVI_EE_A1_B0, AVI_EE_A0_B1, AVI_EE_A1_B1},
};
static void permute(double y[4][3], const double x[4][3], int p)
{
    for (int k = 0; k < 4; k++) v3_copy(y[k], x[perm[p][k]]);
}

/* Length of segment k (0: a, 1: b) of the stencil x. */
#define seg_len(x, k) dist3((x)[2 * (k) + 1], (x)[2 * (k)])
static double dist3(const double *p, const double *q)
{
    double e[3];
    v3_sub(e, p, q);
    return v3_norm(e);
}
static double sin_angle(const double x[4][3])
{
    double ea[3], eb[3], n[3];
    v3_sub(ea, x[1], x[0]);
    v3_sub(eb, x[3], x[2]);
    v3_cross(n, ea, eb);
    return v3_norm(n) / (v3_norm(ea) * v3_norm(eb));
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
    avi_ee_distance_gradient((const double (*)[3])x, g);
    avi_ee_distance_hessian((const double (*)[3])x, H);
    h = pow2_floor(h);
    for (int i = 0; i < 12; i++) {
        double *xi = &x[i / 3][i % 3], xi0 = *xi, dv[4], gv[4][4][3];
        for (int s = 0; s < 4; s++) {
            int f;
            *xi = xi0 + off[s] * h;
            dv[s] = avi_ee_distance((const double (*)[3])x, &f);
            avi_ee_distance_gradient((const double (*)[3])x, gv[s]);
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

static int n_per_case(void) { return avi_test_quick() ? 60 : 250; }

/* ---- deliberate configurations --------------------------------------------- */

/* Interior-interior: closest points at s, t in [0.1, 0.9] of segments in
 * parallel planes D apart, crossing at angle theta. Returns the length over
 * which the derivatives change: with lam = |sin theta| min(La, Lb), the
 * closest points move by 1 / lam per unit of motion (and d / lam^2 from d
 * away), so min(D, lam min(1, lam / D)). */
static double edge_edge_config(double x[4][3], double sin_theta, double *D)
{
    double La = 0.5 + 1.5 * urand(), Lb = 0.5 + 1.5 * urand();
    double th = asin(sin_theta);
    if (urand() < 0.5) th = M_PI - th;
    double lam = sin_theta * fmin(La, Lb);
    /* D in [1e-6, min(1, 10 lam)] (log-uniform): farther from nearly
     * parallel edges the derivative scale drops below what double-precision
     * differences resolve */
    double hi = fmin(0.0, log10(10.0 * lam));
    *D = pow(10.0, -6.0 + (hi + 6.0) * urand());
    double s = 0.1 + 0.8 * urand(), t = 0.1 + 0.8 * urand();
    double da[3] = {1, 0, 0}, db[3] = {cos(th), sin(th), 0};
    for (int i = 0; i < 3; i++) {
        x[0][i] = -s * La * da[i];
        x[1][i] = (1.0 - s) * La * da[i];
        x[2][i] = -t * Lb * db[i] + (i == 2 ? *D : 0.0);
        x[3][i] = (1.0 - t) * Lb * db[i] + (i == 2 ? *D : 0.0);
    }
    place(x);
    return fmin(*D, lam * fmin(1.0, lam / *D));
}

/* Endpoint a0 against the interior of b: a0 = q + D v with q at t in
 * [0.1, 0.9] of b, v normal to b, and a leaving along e with e . v >= 0.2
 * (so s = 0 is optimal with margin); D in [10^dlo, 1]. Returns the
 * derivative scale. */
static double endpoint_edge_config(double x[4][3], double *D, double dlo)
{
    double La = 0.5 + 1.5 * urand(), Lb = 0.5 + 1.5 * urand(), eb[3] = {1, 0, 0}, v[3], e[3];
    *D = lograND(dlo, 0);
    double t = 0.1 + 0.8 * urand();
    rand_perp(v, eb);
    do rand_unit(e); while (v3_dot(e, v) < 0.2);
    for (int i = 0; i < 3; i++) {
        x[2][i] = -t * Lb * eb[i];
        x[3][i] = (1.0 - t) * Lb * eb[i];
        x[0][i] = *D * v[i];
        x[1][i] = x[0][i] + La * e[i];
    }
    place(x);
    return fmin(fmin(*D, Lb * fmin(1.0, Lb / *D)), La);
}

/* Endpoints a0, b0 closest: a0 - b0 = D v, a leaving along ea with
 * ea . v >= 0.2 and b along eb with eb . v <= -0.2. A quarter of them with
 * (nearly) parallel edges, sin angle 1e-10 .. 1e-2 or exactly 0. */
static double endpoint_endpoint_config(double x[4][3], double *D, double dlo)
{
    double La = 0.5 + 1.5 * urand(), Lb = 0.5 + 1.5 * urand(), v[3], ea[3], eb[3];
    *D = lograND(dlo, 0);
    rand_unit(v);
    do rand_unit(ea); while (v3_dot(ea, v) < 0.2);
    int parallel = urand() < 0.25;
    if (parallel) {
        v3_scale(eb, ea, -1.0);
        if (urand() < 0.8) { /* tilt by a tiny angle */
            double w[3];
            rand_perp(w, ea);
            v3_axpy(eb, lograND(-10, -2), w);
            normalize(eb);
        }
    } else {
        do rand_unit(eb); while (v3_dot(eb, v) > -0.2);
    }
    for (int i = 0; i < 3; i++) {
        x[2][i] = 0.0;
        x[3][i] = Lb * eb[i];
        x[0][i] = *D * v[i];
        x[1][i] = x[0][i] + La * ea[i];
    }
    place(x);
    return fmin(*D, fmin(La, Lb));
}

START_TEST(test_fd_edge_edge)
{
    seed = 2001;
    fd_tally gen = {0}, par = {0};
    int n = n_per_case();
    for (int trial = 0; trial < 2 * n; trial++) {
        int nearly = trial % 2; /* sin angle 1e-5 .. 1e-2, else 0.2 .. 1 */
        double s = nearly ? lograND(-5, -2) : 0.2 + 0.8 * urand();
        double x[4][3], D, eg, eh;
        double l = edge_edge_config(x, s, &D);
        int f;
        double d = avi_ee_distance((const double (*)[3])x, &f);
        ck_assert_msg(f == AVI_EE_EDGE_EDGE, "trial %d: %s", trial, feature_name[f]);
        ck_assert_msg(fabs(d - D) <= 1e-12, "edge-edge d %.17g expected %.17g", d, D);
        ck_assert_msg(fd_check((const double (*)[3])x, 0.01 * l, f, &eg, &eh),
                      "FD stencil left the edge-edge region (trial %d)", trial);
        tally(nearly ? &par : &gen, eg, eh);
    }
    printf("ee edge-edge: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n", gen.n,
           gen.eg, gen.eh);
    printf("ee edge-edge nearly parallel (sin 1e-5 .. 1e-2): %d configurations, worst relative FD error "
           "gradient %.2e, Hessian %.2e\n", par.n, par.eg, par.eh);
    ck_assert(gen.eg <= 1e-6 && gen.eh <= 1e-6 && par.eg <= 1e-6 && par.eh <= 1e-6);
}
END_TEST

/* The four endpoint-edge and four endpoint-endpoint cases: a0-based
 * configurations relabelled by reversing and swapping the edges. */
START_TEST(test_fd_endpoint_cases)
{
    seed = 2002;
    int n = n_per_case();
    for (int kind = 0; kind < 2; kind++)
        for (int p = 0; p < 4; p++) { /* identity, reverse a, reverse b / swap, both */
            fd_tally all = {0};
            int want = -1;
            for (int trial = 0; trial < n; trial++) {
                double x[4][3], y[4][3], D, eg, eh;
                double l = kind == 0 ? endpoint_edge_config(x, &D, -6) : endpoint_endpoint_config(x, &D, -6);
                int f0 = kind == 0 ? AVI_EE_A0_EDGE_B : AVI_EE_A0_B0;
                /* endpoint-edge: p = 0, rev a, swap, swap after rev a (b1-edge a);
                 * endpoint-endpoint: p = 0, rev a, rev b, both */
                memcpy(y, x, sizeof y);
                if (p & 1) { permute(y, (const double (*)[3])x, 0); f0 = perm_f[0][f0]; }
                if (p & 2) {
                    int q = kind == 0 ? 2 : 1;
                    memcpy(x, y, sizeof x);
                    permute(y, (const double (*)[3])x, q);
                    f0 = perm_f[q][f0];
                }
                int f;
                double d = avi_ee_distance((const double (*)[3])y, &f);
                ck_assert_msg(f == f0, "trial %d: %s, expected %s", trial, feature_name[f], feature_name[f0]);
                ck_assert_msg(fabs(d - D) <= 1e-12, "d %.17g expected %.17g", d, D);
                ck_assert_msg(fd_check((const double (*)[3])y, 0.01 * l, f, &eg, &eh),
                              "FD stencil left the %s region (trial %d)", feature_name[f], trial);
                tally(&all, eg, eh);
                want = f0;
            }
            printf("ee %s: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n",
                   feature_name[want], all.n, all.eg, all.eh);
            ck_assert(all.eg <= 1e-6 && all.eh <= 1e-6);
        }
}
END_TEST

/* Random segment pairs: FD wherever the stencil stays in one region. */
static void random_segments(double x[4][3], int trial)
{
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) x[k][i] = srand1();
    if (trial % 4 == 1) { /* nearly parallel */
        double ea[3], w[3];
        v3_sub(ea, x[1], x[0]);
        double lb = seg_len(x, 1);
        normalize(ea);
        rand_perp(w, ea);
        v3_axpy(ea, lograND(-10, -1), w);
        normalize(ea);
        v3_copy(x[3], x[2]);
        v3_axpy(x[3], urand() < 0.5 ? lb : -lb, ea);
    } else if (trial % 4 == 2) { /* close: b moved to within a short distance of a */
        double sa = urand(), sb = urand(), pa[3], pb[3], v[3];
        for (int i = 0; i < 3; i++) {
            pa[i] = x[0][i] + sa * (x[1][i] - x[0][i]);
            pb[i] = x[2][i] + sb * (x[3][i] - x[2][i]);
        }
        rand_unit(v);
        double shift[3];
        v3_sub(shift, pa, pb);
        v3_axpy(shift, lograND(-6, -1), v);
        v3_add(x[2], x[2], shift);
        v3_add(x[3], x[3], shift);
    }
}

/* Length over which the derivatives change: d, the segments, and for the
 * edge-edge case lam min(1, lam / d), lam = sin(angle) min length. */
static double derivative_scale(const double x[4][3], double d, int f)
{
    double l = fmin(d, fmin(seg_len(x, 0), seg_len(x, 1)));
    double lmin = l, e;
    if (f == AVI_EE_EDGE_EDGE) {
        double lam = sin_angle(x) * fmin(seg_len(x, 0), seg_len(x, 1));
        lmin = fmin(l, lam * fmin(1.0, lam / d));
    } else if (f >= AVI_EE_A0_EDGE_B && f <= AVI_EE_B1_EDGE_A) {
        e = seg_len(x, f <= AVI_EE_A1_EDGE_B ? 1 : 0);
        lmin = fmin(l, e * fmin(1.0, e / d));
    }
    return lmin;
}

START_TEST(test_fd_random)
{
    seed = 2003;
    fd_tally per[9] = {{0}};
    int skipped = 0, illcond = 0, want = avi_test_quick() ? 20 : 100;
    for (int trial = 0; trial < 200000; trial++) {
        int done = per[0].n >= 2 * want;
        for (int f = 1; f < 9; f++) done = done && per[f].n >= want;
        if (done) break;
        double x[4][3], eg, eh;
        random_segments(x, trial);
        int f;
        double d = avi_ee_distance((const double (*)[3])x, &f);
        double l = derivative_scale((const double (*)[3])x, d, f);
        if (l < 1e-4) { illcond++; continue; }
        if (!fd_check((const double (*)[3])x, 0.01 * l, f, &eg, &eh)) { skipped++; continue; }
        tally(&per[f], eg, eh);
    }
    double weg = 0.0, weh = 0.0;
    for (int f = 0; f < 9; f++) {
        printf("ee random %s: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e\n",
               feature_name[f], per[f].n, per[f].eg, per[f].eh);
        weg = fmax(weg, per[f].eg);
        weh = fmax(weh, per[f].eh);
        ck_assert(per[f].n >= want);
    }
    printf("ee random: %d skipped (FD stencil crossed a region boundary), %d not tried "
           "(derivative scale below 1e-4)\n", skipped, illcond);
    ck_assert(weg <= 1e-6 && weh <= 1e-6);
}
END_TEST

/* ---- brute force --------------------------------------------------------- */

/* Squared distances between a0 + s ea and b0 + t eb on an (N+1)^2 grid of
 * (s, t), smallest per sampled region (interior, sides, corners). */
#define NGRID 200
static int grid_region(int i, int j)
{
    int si = i == 0 ? 0 : (i == NGRID ? 1 : 2), tj = j == 0 ? 0 : (j == NGRID ? 1 : 2);
    static const int map[3][3] = {{AVI_EE_A0_B0, AVI_EE_A0_B1, AVI_EE_A0_EDGE_B},
                                  {AVI_EE_A1_B0, AVI_EE_A1_B1, AVI_EE_A1_EDGE_B},
                                  {AVI_EE_B0_EDGE_A, AVI_EE_B1_EDGE_A, AVI_EE_EDGE_EDGE}};
    return map[si][tj];
}

static void sample_regions(const double x[4][3], double m[9])
{
    for (int f = 0; f < 9; f++) m[f] = INFINITY;
    double ea[3], eb[3], r[3];
    v3_sub(ea, x[1], x[0]);
    v3_sub(eb, x[3], x[2]);
    v3_sub(r, x[0], x[2]);
    for (int i = 0; i <= NGRID; i++)
        for (int j = 0; j <= NGRID; j++) {
            double s = (double)i / NGRID, t = (double)j / NGRID, w[3];
            for (int c = 0; c < 3; c++) w[c] = r[c] + s * ea[c] - t * eb[c];
            double f2 = v3_dot(w, w);
            int f = grid_region(i, j);
            if (f2 < m[f]) m[f] = f2;
        }
}

/* As for the triangle: d at most the sampled minimum and within the grid
 * resolution c = (|ea| + |eb|) / N of it; a region whose sampled minimum
 * beats every other by 8 c^2 is the region of the closest points. */
START_TEST(test_brute_force)
{
    seed = 2004;
    int n = avi_test_quick() ? 80 : 600, checked = 0, per[9] = {0};
    double worst_gap = 0.0;
    for (int trial = 0; trial < n; trial++) {
        double x[4][3], m[9], D;
        random_segments(x, trial);
        if (trial % 4 == 1 || trial % 4 == 2) { /* endpoint cases, relabelled in turn */
            double y[4][3];
            if (trial % 4 == 1) endpoint_edge_config(x, &D, -1.5);
            else endpoint_endpoint_config(x, &D, -1.5);
            for (int p = 0; p < 3; p++)
                if ((trial / 4) >> p & 1) {
                    permute(y, (const double (*)[3])x, p);
                    memcpy(x, y, sizeof y);
                }
        } else if (trial % 8 == 3) { /* exactly parallel, often overlapping */
            double ea[3];
            v3_sub(ea, x[1], x[0]);
            v3_copy(x[3], x[2]);
            v3_axpy(x[3], urand() < 0.5 ? 0.7 : -0.7, ea);
        }
        int f;
        double d = avi_ee_distance((const double (*)[3])x, &f);
        sample_regions((const double (*)[3])x, m);
        double best = INFINITY;
        int fs = 0;
        for (int r = 0; r < 9; r++)
            if (m[r] < best) { best = m[r]; fs = r; }
        double c = (seg_len(x, 0) + seg_len(x, 1)) / NGRID, smin = sqrt(best);
        ck_assert_msg(d <= smin + 1e-12, "d %.17g above sampled minimum %.17g", d, smin);
        ck_assert_msg(smin - d <= c, "d %.17g below sampled minimum %.17g by more than %g", d, smin, c);
        worst_gap = fmax(worst_gap, (smin - d) / c);
        int clear = 1;
        for (int r = 0; r < 9; r++)
            if (r != fs && m[r] < best + 8.0 * c * c) clear = 0;
        if (clear) {
            ck_assert_msg(f == fs, "trial %d: feature %s, sampled %s", trial, feature_name[f], feature_name[fs]);
            checked++;
            per[f]++;
        }
    }
    printf("ee brute force: %d configurations, sampled minus computed d at most %.2f grid cells; "
           "classification checked at %d:", n, worst_gap, checked);
    for (int r = 0; r < 9; r++) printf(" %s %d%s", feature_name[r], per[r], r < 8 ? "," : "\n");
    ck_assert(checked >= n / 3);
    for (int r = 0; r < 9; r++) ck_assert(per[r] > 0);
}
END_TEST

/* ---- symmetry, invariance, momenta ------------------------------------ */

START_TEST(test_relabel_invariance)
{
    seed = 2005;
    int n = avi_test_quick() ? 200 : 3000;
    double worst = 0.0;
    for (int trial = 0; trial < n; trial++) {
        double x[4][3], D;
        int want = -1;
        switch (trial % 4) {
        case 0: edge_edge_config(x, trial % 8 ? 0.2 + 0.8 * urand() : lograND(-5, -2), &D); want = 0; break;
        case 1: endpoint_edge_config(x, &D, -6); want = AVI_EE_A0_EDGE_B; break;
        case 2: endpoint_endpoint_config(x, &D, -6); want = AVI_EE_A0_B0; break;
        default: random_segments(x, trial / 4);
        }
        int f;
        double d = avi_ee_distance((const double (*)[3])x, &f);
        if (want >= 0) ck_assert_int_eq(f, want);
        /* every composition of reverse a, reverse b and swap */
        for (int mask = 1; mask < 8; mask++) {
            double y[4][3], z[4][3];
            int fy = f;
            memcpy(y, x, sizeof y);
            for (int p = 0; p < 3; p++)
                if (mask >> p & 1) {
                    permute(z, (const double (*)[3])y, p);
                    memcpy(y, z, sizeof y);
                    fy = perm_f[p][fy];
                }
            int g;
            double dy = avi_ee_distance((const double (*)[3])y, &g);
            ck_assert_msg(fabs(dy - d) <= 1e-13, "relabelled (%d) d %.17g vs %.17g", mask, dy, d);
            worst = fmax(worst, fabs(dy - d));
            if (want >= 0) ck_assert_msg(g == fy, "relabelled (%d): %s, expected %s", mask, feature_name[g], feature_name[fy]);
        }
    }
    printf("ee swapping and reversing edges: %d configurations, worst |delta d| %.2e\n", n, worst);
}
END_TEST

START_TEST(test_rigid_motion_and_momenta)
{
    seed = 2006;
    int n = avi_test_quick() ? 200 : 3000;
    double worst_d = 0.0, worst_g = 0.0, worst_lin = 0.0, worst_ang = 0.0, worst_h = 0.0;
    for (int trial = 0; trial < n; trial++) {
        double x[4][3], y[4][3], g[4][3], gy[4][3], R[3][3], off[3], H[12][12];
        random_segments(x, trial);
        rand_rotation(R);
        for (int i = 0; i < 3; i++) off[i] = 10.0 * srand1();
        for (int k = 0; k < 4; k++) {
            rotate(y[k], R, x[k]);
            v3_add(y[k], y[k], off);
        }
        int f;
        double d = avi_ee_distance((const double (*)[3])x, &f);
        double dg = avi_ee_distance_gradient((const double (*)[3])x, g);
        double dy = avi_ee_distance_gradient((const double (*)[3])y, gy);
        double dh = avi_ee_distance_hessian((const double (*)[3])x, H);
        ck_assert(dg == d && dh == d);
        double ed = fabs(dy - d) / (2.0 + v3_norm(off));
        ck_assert_msg(ed <= 1e-14, "rigid motion changed d: %.17g vs %.17g", d, dy);
        worst_d = fmax(worst_d, ed);
        double xs = 0.0, gs = 0.0, hs = 0.0;
        for (int k = 0; k < 4; k++) { xs = fmax(xs, v3_norm(x[k])); gs = fmax(gs, v3_norm(g[k])); }
        for (int i = 0; i < 12; i++)
            for (int j = 0; j < 12; j++) hs = fmax(hs, fabs(H[i][j]));
        if (derivative_scale((const double (*)[3])x, d, f) > 1e-3) {
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
        double lin[3] = {0, 0, 0}, ang[3] = {0, 0, 0};
        for (int k = 0; k < 4; k++) {
            double t[3];
            v3_add(lin, lin, g[k]);
            v3_cross(t, x[k], g[k]);
            v3_add(ang, ang, t);
        }
        double el = v3_norm(lin) / gs, ea = v3_norm(ang) / (xs * gs);
        ck_assert_msg(el <= 1e-14, "sum of gradient %.3g (%s)", el, feature_name[f]);
        ck_assert_msg(ea <= 1e-9, "torque of gradient %.3g (%s)", ea, feature_name[f]);
        worst_lin = fmax(worst_lin, el);
        worst_ang = fmax(worst_ang, ea);
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
        ck_assert_msg(eh <= 1e-9, "Hessian symmetry / invariance error %.3g (%s)", eh, feature_name[f]);
        worst_h = fmax(worst_h, eh);
    }
    printf("ee rigid motion: %d configurations; worst relative change of d %.2e, of rotated gradient %.2e; "
           "momentum residuals %.2e (linear) %.2e (angular); Hessian %.2e\n",
           n, worst_d, worst_g, worst_lin, worst_ang, worst_h);
}
END_TEST

/* ---- continuity -------------------------------------------------------- */

/* Moving each segment's endpoints by at most delta_a, delta_b moves the
 * segments by at most that (Hausdorff), so |delta d| <= delta_a + delta_b:
 * continuity across every region switch and the parallel fallback. */
START_TEST(test_lipschitz)
{
    seed = 2007;
    int n = avi_test_quick() ? 500 : 20000, switches = 0;
    for (int trial = 0; trial < n; trial++) {
        double x[4][3], y[4][3], moved[4];
        random_segments(x, trial);
        double delta = lograND(-9, -1);
        for (int k = 0; k < 4; k++) {
            double v[3];
            rand_unit(v);
            moved[k] = delta * urand();
            v3_copy(y[k], x[k]);
            v3_axpy(y[k], moved[k], v);
        }
        double bound = fmax(moved[0], moved[1]) + fmax(moved[2], moved[3]);
        int f0, f1;
        double d0 = avi_ee_distance((const double (*)[3])x, &f0);
        double d1 = avi_ee_distance((const double (*)[3])y, &f1);
        switches += f0 != f1;
        ck_assert_msg(fabs(d1 - d0) <= bound + 1e-14, "|delta d| %.3g > %.3g (%s -> %s)", fabs(d1 - d0), bound,
                      feature_name[f0], feature_name[f1]);
    }
    printf("ee Lipschitz: %d perturbations, %d of them across a region switch\n", n, switches);
    ck_assert(switches > n / 20);
}
END_TEST

/* Rotate b about the common normal through the parallel threshold
 * (sin angle 1e-8): d moves continuously, to within 1e-8 min(|ea|, |eb|). */
START_TEST(test_parallel_switch)
{
    static const double gaps[] = {1e-3, 1e-9};
    int interior = 0, fallback = 0;
    for (int ig = 0; ig < 2; ig++)
        for (int off = 0; off < 2; off++) {
            double prev = -1.0, aprev = 0.0;
            for (int s = 0; s <= 400; s++) {
                double ang = pow(10.0, -6.0 - 4.0 * s / 400.0); /* 1e-6 .. 1e-10 */
                double c = 0.5 * cos(ang), sn = 0.5 * sin(ang), o = off ? 0.3 : 0.0;
                double x[4][3] = {{0, 0, 0}, {1, 0, 0}, {0.5 + o - c, -sn, gaps[ig]}, {0.5 + o + c, sn, gaps[ig]}};
                int f;
                double d = avi_ee_distance((const double (*)[3])x, &f);
                interior += f == AVI_EE_EDGE_EDGE;
                fallback += f != AVI_EE_EDGE_EDGE;
                ck_assert(f == AVI_EE_EDGE_EDGE || ang < 1.01e-8);
                ck_assert(f != AVI_EE_EDGE_EDGE || ang > 0.99e-8);
                /* b's endpoints move by 0.5 |delta angle| per step */
                if (prev >= 0.0)
                    ck_assert_msg(fabs(d - prev) <= 0.5 * (aprev - ang) + 1e-8 * 1.0 + 1e-15,
                                  "jump %.3g at angle %.3g", fabs(d - prev), ang);
                prev = d;
                aprev = ang;
                ck_assert(d >= gaps[ig] * (1.0 - 1e-12) && d <= gaps[ig] + 1e-8);
            }
        }
    ck_assert(interior > 0 && fallback > 0);
}
END_TEST

/* Exactly parallel segments: overlapping (d the gap, any closest pair),
 * end to end, and collinear; plus zero-length edges. */
START_TEST(test_parallel_and_degenerate)
{
    seed = 2008;
    for (int trial = 0; trial < 400; trial++) {
        double x[4][3], e[3], v[3], g[4][3];
        rand_unit(e);
        rand_perp(v, e);
        double La = 0.5 + urand(), Lb = 0.5 + urand(), shift = (srand1() * 1.5) * La;
        double gap = trial % 4 == 3 ? 0.0 : lograND(-6, 0); /* collinear when 0 */
        for (int i = 0; i < 3; i++) {
            x[0][i] = 0.0;
            x[1][i] = La * e[i];
            x[2][i] = shift * e[i] + gap * v[i];
            x[3][i] = x[2][i] + (trial % 2 ? Lb : -Lb) * e[i];
        }
        if (trial % 8 == 7) memcpy(x[1], x[0], sizeof x[0]); /* zero-length a */
        place(x);
        int f;
        double d = avi_ee_distance((const double (*)[3])x, &f);
        /* exact value: gap, or the distance between the end points along e */
        double lo = fmin(shift, shift + (trial % 2 ? Lb : -Lb)), hi = fmax(shift, shift + (trial % 2 ? Lb : -Lb));
        double la = trial % 8 == 7 ? 0.0 : La, along = lo > la ? lo - la : (hi < 0.0 ? -hi : 0.0);
        double ref = sqrt(gap * gap + along * along);
        ck_assert_msg(fabs(d - ref) <= 1e-13, "parallel d %.17g expected %.17g (%s)", d, ref, feature_name[f]);
        ck_assert(f != AVI_EE_EDGE_EDGE);
        if (d > 0.0) {
            double dg = avi_ee_distance_gradient((const double (*)[3])x, g), lin[3] = {0, 0, 0};
            ck_assert(dg == d);
            for (int k = 0; k < 4; k++) {
                ck_assert(v3_isfinite(g[k]));
                v3_add(lin, lin, g[k]);
            }
            ck_assert(v3_norm(lin) <= 1e-14);
        }
    }
    /* both edges points */
    double x[4][3] = {{1, 2, 3}, {1, 2, 3}, {1, 2, 5}, {1, 2, 5}};
    int f;
    ck_assert(fabs(avi_ee_distance((const double (*)[3])x, &f) - 2.0) <= 1e-15);
    ck_assert(f >= AVI_EE_A0_B0);
}
END_TEST

/* ---- line-line primitive ------------------------------------------------- */

START_TEST(test_line_line_primitive)
{
    seed = 2009;
    int n = n_per_case();
    double weg = 0.0, weh = 0.0, wref = 0.0;
    for (int trial = 0; trial < n; trial++) {
        double x[4][3], g[4][3], H[12][12], fg[12], fh[12][12];
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 3; i++) x[k][i] = srand1();
        if (sin_angle((const double (*)[3])x) < 0.2 || seg_len(x, 0) < 0.2 || seg_len(x, 1) < 0.2) { trial--; continue; }
        /* bring the lines close: tiny distances too */
        double n3[3], ea[3], eb[3], r[3];
        v3_sub(ea, x[1], x[0]);
        v3_sub(eb, x[3], x[2]);
        v3_cross(n3, ea, eb);
        normalize(n3);
        v3_sub(r, x[2], x[0]);
        double dn = v3_dot(r, n3) * (1.0 - lograND(-5, 0));
        v3_axpy(x[2], -dn, n3);
        v3_axpy(x[3], -dn, n3);
        v3_sub(r, x[2], x[0]);
        double ref = fabs(v3_dot(r, n3));
        double d = avi_line_line_distance(x[0], x[1], x[2], x[3]);
        ck_assert_msg(fabs(d - ref) <= 1e-9 * d + 1e-15, "line-line %.17g vs %.17g", d, ref);
        wref = fmax(wref, fabs(d - ref) / d);
        avi_line_line_distance_gradient(x[0], x[1], x[2], x[3], g);
        avi_line_line_distance_hessian(x[0], x[1], x[2], x[3], H);
        double h = pow2_floor(0.01 * fmin(d, 0.05));
        for (int i = 0; i < 12; i++) {
            static const double off[4] = {-2, -1, 1, 2};
            double *xi = &x[i / 3][i % 3], x0 = *xi, dv[4], gv[4][4][3];
            for (int s = 0; s < 4; s++) {
                *xi = x0 + off[s] * h;
                dv[s] = avi_line_line_distance(x[0], x[1], x[2], x[3]);
                avi_line_line_distance_gradient(x[0], x[1], x[2], x[3], gv[s]);
            }
            *xi = x0;
            fg[i] = (8.0 * (dv[2] - dv[1]) - (dv[3] - dv[0])) / (12.0 * h);
            for (int rr = 0; rr < 12; rr++) {
                const double *a = &gv[0][0][0] + rr;
                fh[rr][i] = (8.0 * (a[24] - a[12]) - (a[36] - a[0])) / (12.0 * h);
            }
        }
        weg = fmax(weg, rel_err(&g[0][0], fg, 12));
        weh = fmax(weh, rel_err(&H[0][0], &fh[0][0], 144));
    }
    printf("line-line: %d configurations, worst relative FD error gradient %.2e, Hessian %.2e; "
           "vs direct formula %.2e\n", n, weg, weh, wref);
    ck_assert(weg <= 1e-6 && weh <= 1e-6);
}
END_TEST

static Suite *distance_ee_suite(void)
{
    Suite *s = suite_create("distance_edge_edge");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_fd_edge_edge);
    tcase_add_test(tc, test_fd_endpoint_cases);
    tcase_add_test(tc, test_fd_random);
    tcase_add_test(tc, test_brute_force);
    tcase_add_test(tc, test_relabel_invariance);
    tcase_add_test(tc, test_rigid_motion_and_momenta);
    tcase_add_test(tc, test_lipschitz);
    tcase_add_test(tc, test_parallel_switch);
    tcase_add_test(tc, test_parallel_and_degenerate);
    tcase_add_test(tc, test_line_line_primitive);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(distance_ee_suite)
