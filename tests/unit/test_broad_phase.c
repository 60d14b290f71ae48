/* The contact broad phase against brute force: every vertex-face pair whose
 * point lies in the triangle's box grown by r, and every edge-edge pair
 * whose boxes grown by r / 2 overlap, sharing no vertex, reported exactly
 * once. Clouds straddle the origin (negative cell indices) and cell sizes
 * range from a fraction of the boxes to many times them. */
#include "check_main.h"
#include "contact/broad_phase.h"
#include "base/pool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NT = 500, NV = 3 * NT, NE = 600 };

static double X[NV][3];
static uint32_t points[NV], tris[NT][3], edges[NE][2];

/* A deterministic cloud of small triangles (at most 0.1 across) about
 * centres in [-1, 1]^3, a flat slab when `flat` (as a plate gives); the
 * edges are triangle sides, so two sides of one triangle share a vertex. */
static void make_cloud(unsigned seed, int flat)
{
    srand(seed);
    for (int t = 0; t < NT; t++) {
        double c[3];
        for (int k = 0; k < 3; k++) c[k] = 2.0 * rand() / RAND_MAX - 1.0;
        if (flat) c[2] *= 1e-3;
        for (int v = 0; v < 3; v++) {
            uint32_t i = (uint32_t)(3 * t + v);
            for (int k = 0; k < 3; k++) X[i][k] = c[k] + 0.05 * (2.0 * rand() / RAND_MAX - 1.0) * (flat && k == 2 ? 0.0 : 1.0);
            points[i] = i;
            tris[t][v] = i;
        }
    }
    for (int e = 0; e < NE; e++) {
        const uint32_t *t = tris[(e * 7) % NT];
        edges[e][0] = t[e % 3];
        edges[e][1] = t[(e + 1) % 3];
    }
}

static void grown_box(const uint32_t *v, int n, double r, double lo[3], double hi[3])
{
    for (int c = 0; c < 3; c++) {
        lo[c] = hi[c] = X[v[0]][c];
        for (int a = 1; a < n; a++) {
            lo[c] = fmin(lo[c], X[v[a]][c]);
            hi[c] = fmax(hi[c], X[v[a]][c]);
        }
        lo[c] -= r;
        hi[c] += r;
    }
}

static int overlap(const double *alo, const double *ahi, const double *blo, const double *bhi)
{
    for (int c = 0; c < 3; c++)
        if (alo[c] > bhi[c] || blo[c] > ahi[c]) return 0;
    return 1;
}

static int cmp_candidate(const void *pa, const void *pb)
{
    const avi_candidate *a = pa, *b = pb;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* The broad phase's pairs, sorted, must equal the brute-force list, which
 * comes out sorted and without repeats. */
static void expect_same(avi_candidate *got, long n, const avi_candidate *want, size_t nwant, const char *what,
                        double r, double h)
{
    ck_assert_msg(n >= 0, "%s: out of memory", what);
    qsort(got, (size_t)n, sizeof *got, cmp_candidate);
    ck_assert_msg((size_t)n == nwant, "%s r %g h %g: %ld pairs, brute force %zu", what, r, h, n, nwant);
    for (size_t i = 0; i < nwant; i++)
        ck_assert_msg(got[i].a == want[i].a && got[i].b == want[i].b, "%s r %g h %g: pair %zu is (%u, %u), want (%u, %u)",
                      what, r, h, i, got[i].a, got[i].b, want[i].a, want[i].b);
}

static void check_cloud(unsigned seed, int flat)
{
    make_cloud(seed, flat);
    const double radii[] = {0.02, 0.08, 0.2};
    const double cells[] = {1.0, 3.0, 20.0, 250.0}; /* times r */
    avi_candidate *want = malloc((size_t)NV * NT * sizeof *want);
    ck_assert_ptr_nonnull(want);
    avi_broad_phase bp;
    memset(&bp, 0, sizeof bp);
    size_t total = 0;
    for (size_t ri = 0; ri < sizeof radii / sizeof *radii; ri++) {
        double r = radii[ri];
        size_t nvf = 0, nee = 0;
        for (uint32_t p = 0; p < NV; p++)
            for (uint32_t t = 0; t < NT; t++) {
                if (p == tris[t][0] || p == tris[t][1] || p == tris[t][2]) continue;
                double lo[3], hi[3];
                grown_box(tris[t], 3, r, lo, hi);
                if (overlap(X[p], X[p], lo, hi)) want[nvf++] = (avi_candidate){p, t};
            }
        for (size_t hi_ = 0; hi_ < sizeof cells / sizeof *cells; hi_++) {
            double h = cells[hi_] * r; /* the manager's cell is never below r */
            long n = avi_broad_phase_vf(&bp, (const double (*)[3])X, points, NV, (const uint32_t (*)[3])tris, NT, r, h);
            expect_same(bp.out, n, want, nvf, "vertex-face", r, h);
        }
        for (uint32_t a = 0; a < NE; a++)
            for (uint32_t b = a + 1; b < NE; b++) {
                const uint32_t *u = edges[a], *w = edges[b];
                if (u[0] == w[0] || u[0] == w[1] || u[1] == w[0] || u[1] == w[1]) continue;
                double alo[3], ahi[3], blo[3], bhi[3];
                grown_box(u, 2, 0.5 * r, alo, ahi);
                grown_box(w, 2, 0.5 * r, blo, bhi);
                if (overlap(alo, ahi, blo, bhi)) want[nee++] = (avi_candidate){a, b};
            }
        for (size_t hi_ = 0; hi_ < sizeof cells / sizeof *cells; hi_++) {
            double h = cells[hi_] * r;
            long n = avi_broad_phase_ee(&bp, (const double (*)[3])X, (const uint32_t (*)[2])edges, NE, r, h);
            expect_same(bp.out, n, want, nee, "edge-edge", r, h);
        }
        total += nvf + nee;
    }
    ck_assert_uint_gt(total, 1000); /* the clouds make real work */
    avi_broad_phase_free(&bp);
    free(want);
}

START_TEST(test_broad_phase_matches_brute_force) { check_cloud(7u, 0); }
END_TEST

START_TEST(test_broad_phase_flat_cloud) { check_cloud(11u, 1); }
END_TEST

/* Empty inputs give no pairs and no error. */
START_TEST(test_broad_phase_empty)
{
    avi_broad_phase bp;
    memset(&bp, 0, sizeof bp);
    ck_assert_int_eq(avi_broad_phase_vf(&bp, (const double (*)[3])X, points, 0, (const uint32_t (*)[3])tris, 0, 0.1,
                                        0.1),
                     0);
    ck_assert_int_eq(avi_broad_phase_ee(&bp, (const double (*)[3])X, (const uint32_t (*)[2])edges, 0, 0.1, 0.1), 0);
    avi_broad_phase_free(&bp);
}
END_TEST

/* The output in the serial order, pair for pair, on pools of 1 to 8
 * threads with and without chaos (issue 30): the workers' segments are
 * merged in triangle and cell order. */
static void same_order(const avi_broad_phase *serial, long ns, const avi_broad_phase *par, long np, const char *what,
                       int threads, const char *seed)
{
    ck_assert_msg(np == ns, "%s, %d threads, chaos %s: %ld pairs, serial %ld", what, threads, seed, np, ns);
    for (long i = 0; i < ns; i++)
        ck_assert_msg(par->out[i].a == serial->out[i].a && par->out[i].b == serial->out[i].b,
                      "%s, %d threads, chaos %s: pair %ld is (%u, %u), serial (%u, %u)", what, threads, seed, i,
                      par->out[i].a, par->out[i].b, serial->out[i].a, serial->out[i].b);
}

START_TEST(test_broad_phase_parallel_order)
{
    static const int counts[] = {1, 2, 3, 4, 8};
    static const char *seeds[] = {"", "1", "77", "4242"};
    make_cloud(7u, 0);
    avi_broad_phase a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    double r = 0.08, h = 3.0 * r;
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
        for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
            if (*seeds[k]) setenv("AVI_CHAOS_SEED", seeds[k], 1);
            else unsetenv("AVI_CHAOS_SEED");
            avi_error err;
            avi_pool *pool = avi_pool_create(counts[c], &err);
            ck_assert_ptr_nonnull(pool);
            b.pool = pool;
            for (int rep = 0; rep < 3; rep++) {
                long ns = avi_broad_phase_vf(&a, (const double (*)[3])X, points, NV, (const uint32_t (*)[3])tris, NT, r, h);
                long np = avi_broad_phase_vf(&b, (const double (*)[3])X, points, NV, (const uint32_t (*)[3])tris, NT, r, h);
                ck_assert_int_gt(ns, 100);
                same_order(&a, ns, &b, np, "vertex-face", counts[c], seeds[k]);
                ns = avi_broad_phase_ee(&a, (const double (*)[3])X, (const uint32_t (*)[2])edges, NE, r, h);
                np = avi_broad_phase_ee(&b, (const double (*)[3])X, (const uint32_t (*)[2])edges, NE, r, h);
                ck_assert_int_gt(ns, 100);
                same_order(&a, ns, &b, np, "edge-edge", counts[c], seeds[k]);
            }
            avi_pool_destroy(pool);
            b.pool = NULL;
        }
    unsetenv("AVI_CHAOS_SEED");
    avi_broad_phase_free(&a);
    avi_broad_phase_free(&b);
}
END_TEST

/* The radix sort split across a pool gives the serial sort's array, equal
 * keys in item order, for any thread count and chaos seed. */
START_TEST(test_cell_sort_split)
{
    enum { N = 50000 };
    static const int counts[] = {1, 2, 3, 4, 8};
    static const char *seeds[] = {"", "5", "1234"};
    avi_cell_entry *in = malloc(N * sizeof *in), *a = malloc(N * sizeof *a), *sa = malloc(N * sizeof *sa),
                   *b = malloc(N * sizeof *b), *sb = malloc(N * sizeof *sb);
    ck_assert(in && a && sa && b && sb);
    srand(3u);
    for (uint32_t i = 0; i < N; i++) {
        /* cells of a small grid about the origin, negative indices wrapped, many repeats */
        int64_t c[3];
        for (int k = 0; k < 3; k++) c[k] = rand() % 40 - 20;
        in[i] = (avi_cell_entry){avi_cell_key(c[0], c[1], c[2]), i};
    }
    memcpy(a, in, N * sizeof *a);
    const avi_cell_entry *want = avi_cell_entries_sort(a, sa, N);
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++)
        for (size_t k = 0; k < sizeof seeds / sizeof *seeds; k++) {
            if (*seeds[k]) setenv("AVI_CHAOS_SEED", seeds[k], 1);
            else unsetenv("AVI_CHAOS_SEED");
            avi_error err;
            avi_pool *pool = avi_pool_create(counts[c], &err);
            ck_assert_ptr_nonnull(pool);
            memcpy(b, in, N * sizeof *b);
            const avi_cell_entry *got = avi_cell_entries_sort_pool(pool, b, sb, N);
            for (size_t i = 0; i < N; i++)
                ck_assert_msg(got[i].key == want[i].key && got[i].item == want[i].item,
                              "%d threads, chaos %s: entry %zu is (%llx, %u), serial (%llx, %u)", counts[c], seeds[k], i,
                              (unsigned long long)got[i].key, got[i].item, (unsigned long long)want[i].key, want[i].item);
            avi_pool_destroy(pool);
        }
    unsetenv("AVI_CHAOS_SEED");
    free(in);
    free(a);
    free(sa);
    free(b);
    free(sb);
}
END_TEST

static Suite *broad_phase_suite(void)
{
    Suite *s = suite_create("broad_phase");
    TCase *tc = tcase_create("contact");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_broad_phase_matches_brute_force);
    tcase_add_test(tc, test_broad_phase_flat_cloud);
    tcase_add_test(tc, test_broad_phase_empty);
    tcase_add_test(tc, test_broad_phase_parallel_order);
    tcase_add_test(tc, test_cell_sort_split);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(broad_phase_suite)
