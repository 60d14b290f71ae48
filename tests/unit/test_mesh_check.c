/* Geometric input checks: exact orientation signs against integer
 * arithmetic, triangle-triangle intersection by case, the box-pair grid
 * against brute force, mesh validation (overlapping tetrahedra,
 * self-intersecting surfaces, good meshes passing) and the initial contact
 * clearance of a model. */
#include "avi/mesh.h"
#include "check_main.h"
#include "contact/contact_clearance.h"
#include "contact/box_pairs.h"
#include "base/orientation.h"
#include "contact/triangle_intersection.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BAD "tests/data/meshes/"

static uint64_t rng = 0x243F6A8885A308D3u;
static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- exact signs ---- */

typedef __int128 i128;

static int sign128(i128 v) { return v > 0 ? 1 : v < 0 ? -1 : 0; }

/* Reference orient3d on integer coordinates (exact in 128 bits for
 * |coordinates| < 2^40). */
static int orient3d_int(const int64_t a[3], const int64_t b[3], const int64_t c[3], const int64_t d[3])
{
    i128 ad[3], bd[3], cd[3];
    for (int i = 0; i < 3; i++) {
        ad[i] = a[i] - d[i];
        bd[i] = b[i] - d[i];
        cd[i] = c[i] - d[i];
    }
    i128 det = ad[0] * (bd[1] * cd[2] - bd[2] * cd[1]) + bd[0] * (cd[1] * ad[2] - cd[2] * ad[1]) +
               cd[0] * (ad[1] * bd[2] - ad[2] * bd[1]);
    return sign128(det);
}

/* Nearly coplanar points: coordinates k 2^-40 (exact doubles), d on the
 * plane of a, b, c up to rounding to that grid, then nudged by a few units.
 * Most of these defeat the float filter; the sign must still be exact. */
START_TEST(test_orient3d_exact)
{
    const double unit = ldexp(1.0, -40);
    int zeros = 0, n = avi_test_quick() ? 2000 : 20000;
    for (int trial = 0; trial < n; trial++) {
        int64_t p[4][3];
        for (int k = 0; k < 3; k++)
            for (int i = 0; i < 3; i++) p[k][i] = 64 * ((int64_t)(next() % (1u << 24)) - (1 << 23));
        /* s, t in 1/64ths: without the nudge d is exactly on the plane */
        double s = (double)(next() % 128) / 64.0 - 0.5, t = (double)(next() % 128) / 64.0 - 0.5;
        for (int i = 0; i < 3; i++)
            p[3][i] = (int64_t)llround((double)p[0][i] + s * (double)(p[1][i] - p[0][i]) + t * (double)(p[2][i] - p[0][i])) +
                      (int64_t)(next() % 3) - 1;
        double x[4][3];
        for (int k = 0; k < 4; k++)
            for (int i = 0; i < 3; i++) x[k][i] = (double)p[k][i] * unit;
        int want = orient3d_int(p[0], p[1], p[2], p[3]);
        ck_assert_int_eq(avi_orient3d(x[0], x[1], x[2], x[3]), want);
        zeros += want == 0;
    }
    ck_assert_int_gt(zeros, 0); /* exactly coplanar cases were among them */

    /* The convention: +1 on the side (b - a) x (c - a) points away from. */
    double a[3] = {1, 0, 0}, b[3] = {0, 1, 0}, c[3] = {0, 0, 1}, o[3] = {0, 0, 0}, far[3] = {1, 1, 1};
    ck_assert_int_eq(avi_orient3d(a, b, c, o), 1);
    ck_assert_int_eq(avi_orient3d(a, b, c, far), -1);
    double on[3] = {0.5, 0.25, 0.25}, above[3] = {0.5, 0.25, 0.25 + ldexp(1.0, -54)};
    ck_assert_int_eq(avi_orient3d(a, b, c, on), 0);
    ck_assert_int_eq(avi_orient3d(a, b, c, above), -1);
}
END_TEST

/* Kettner et al.'s classroom example: points near (0.5, 0.5) against the
 * line through (12, 12) and (24, 24); all coordinates are multiples of
 * 2^-53, so 128-bit integers give the exact answer. */
START_TEST(test_orient2d_exact)
{
    const double u = ldexp(1.0, -53);
    double q[3] = {12, 12, 0}, r[3] = {24, 24, 0};
    int64_t qi = (int64_t)12 << 53, ri = (int64_t)24 << 53;
    int seen[3] = {0, 0, 0};
    for (int i = 0; i < 64; i++)
        for (int j = 0; j < 64; j++) {
            double p[3] = {0.5 + i * u, 0.5 + j * u, 0};
            int64_t px = ((int64_t)1 << 52) + i, py = ((int64_t)1 << 52) + j;
            i128 det = (i128)(qi - px) * (ri - py) - (i128)(qi - py) * (ri - px);
            int want = sign128(det);
            ck_assert_int_eq(avi_orient2d(p, q, r, 0, 1), want);
            seen[want + 1] = 1;
        }
    ck_assert(seen[0] && seen[1] && seen[2]);
}
END_TEST

/* ---- triangle pairs ---- */

static double X[12][3];

static int meets(const uint32_t s[3], const uint32_t t[3], avi_tri_hit *h)
{
    int r = avi_triangles_intersect((const double (*)[3])X, s, t, h);
    ck_assert_int_eq(avi_triangles_intersect((const double (*)[3])X, t, s, NULL), r); /* symmetric */
    return r;
}

static void set(int i, double x, double y, double z)
{
    X[i][0] = x;
    X[i][1] = y;
    X[i][2] = z;
}

START_TEST(test_triangle_cases)
{
    avi_tri_hit h;
    /* 0-2: a triangle in z = 0 */
    set(0, 0, 0, 0), set(1, 1, 0, 0), set(2, 0, 1, 0);
    uint32_t base[3] = {0, 1, 2};

    /* crossing, disjoint vertices */
    set(3, 0.2, 0.2, -0.5), set(4, 0.3, 0.2, 0.5), set(5, 0.2, 0.3, 0.5);
    uint32_t cross[3] = {3, 4, 5};
    ck_assert_int_eq(meets(base, cross, &h), 1);
    ck_assert_int_eq(h.kind, AVI_TRI_CROSS);
    ck_assert_int_eq(h.first, 0);
    /* parallel, 1e-12 above: apart */
    set(3, 0, 0, 1e-12), set(4, 1, 0, 1e-12), set(5, 0, 1, 1e-12);
    ck_assert_int_eq(meets(base, cross, NULL), 0);
    /* coplanar, overlapping (a smaller copy inside) */
    set(3, 0.1, 0.1, 0), set(4, 0.3, 0.1, 0), set(5, 0.1, 0.3, 0);
    ck_assert_int_eq(meets(base, cross, NULL), 1);
    /* coplanar, beyond the hypotenuse: apart */
    set(3, 1, 1, 0), set(4, 0.6, 1, 0), set(5, 1, 0.6, 0);
    ck_assert_int_eq(meets(base, cross, NULL), 0);
    /* coplanar, a vertex exactly on the hypotenuse: touching counts */
    set(3, 0.5, 0.5, 0);
    ck_assert_int_eq(meets(base, cross, NULL), 1);
    /* a vertex touching the face from above */
    set(3, 0.25, 0.25, 0), set(4, 0.25, 0.5, 1), set(5, 0.5, 0.25, 1);
    ck_assert_int_eq(meets(base, cross, NULL), 1);

    /* one shared vertex (0): touching there only */
    set(6, -1, 0, 0), set(7, 0, -1, 0);
    uint32_t fan[3] = {0, 6, 7};
    ck_assert_int_eq(meets(base, fan, NULL), 0);
    /* ... collinear edges through the shared vertex, still apart */
    set(6, -1, 0, 0), set(7, -1, -1, 0);
    ck_assert_int_eq(meets(base, fan, NULL), 0);
    /* ... folded over the first beyond the shared vertex */
    set(6, 0.5, 0.1, 0.2), set(7, 0.1, 0.5, -0.2);
    ck_assert_int_eq(meets(base, fan, &h), 1);
    ck_assert_int_eq(h.kind, AVI_TRI_CROSS);
    /* ... coplanar and overlapping beyond it */
    set(6, 0.5, 0.1, 0), set(7, 0.1, 0.5, 0);
    ck_assert_int_eq(meets(base, fan, NULL), 1);

    /* a shared edge (1, 2): flat on opposite sides is a mesh, a fold of
     * 180 degrees is not, any other angle is fine */
    set(8, 1, 1, 0);
    uint32_t wing[3] = {2, 1, 8};
    ck_assert_int_eq(meets(base, wing, NULL), 0);
    set(8, 0.2, 0.2, 0);
    ck_assert_int_eq(meets(base, wing, &h), 1);
    ck_assert_int_eq(h.kind, AVI_TRI_FOLD);
    ck_assert(h.a + h.b == 3 && h.a * h.b == 2);
    set(8, 0.2, 0.2, 1e-9);
    ck_assert_int_eq(meets(base, wing, NULL), 0);

    uint32_t same[3] = {2, 0, 1};
    ck_assert_int_eq(meets(base, same, &h), 1);
    ck_assert_int_eq(h.kind, AVI_TRI_SAME);
}
END_TEST

static int cmp_pair(const void *pa, const void *pb)
{
    const avi_box_pair *a = pa, *b = pb;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return (a->b > b->b) - (a->b < b->b);
}

/* The grid finds exactly the overlapping pairs, once each. */
START_TEST(test_box_pairs_brute_force)
{
    enum { N = 400 };
    static double box[N][6];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++)
            for (int a = 0; a < 3; a++) {
                double c = (double)(next() % 20001) / 10000.0 - 1.0;
                /* round 1: a few huge boxes among small ones; round 2: flat */
                double w = round == 1 && i % 50 == 0 ? 1.5 : 0.02 + (double)(next() % 100) / 2000.0;
                if (round == 2 && a == 2) c = w = 0.0;
                box[i][a] = c - w;
                box[i][3 + a] = c + w;
            }
        avi_box_pair *p;
        long n = avi_box_pairs((const double (*)[6])box, N, &p);
        ck_assert_int_ge(n, 1);
        qsort(p, (size_t)n, sizeof *p, cmp_pair);
        long k = 0;
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                int o = 1;
                for (int a = 0; a < 3; a++)
                    if (box[i][a] > box[j][3 + a] || box[j][a] > box[i][3 + a]) o = 0;
                if (!o) continue;
                ck_assert_int_lt(k, n);
                ck_assert_uint_eq(p[k].a, (uint32_t)i);
                ck_assert_uint_eq(p[k].b, (uint32_t)j);
                k++;
            }
        ck_assert_int_eq(k, n);
        free(p);
    }
}
END_TEST

/* ---- mesh validation ---- */

START_TEST(test_overlapping_tets)
{
    double x[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.2, 0.2, 0.5}};
    uint32_t tet[2][4] = {{0, 1, 2, 3}, {0, 1, 2, 4}};
    avi_mesh m = {5, x, 0, NULL, 2, tet};
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: tetrahedra 0 (vertices 0, 1, 2, 3) and 1 (vertices 0, 1, 2, 4) overlap: both "
                                  "lie on the same side of their shared face (0, 1, 2)");
    /* the apex below the face: a proper mesh (tet 1 reordered to stay positive) */
    x[4][2] = -0.5;
    tet[1][0] = 1;
    tet[1][1] = 0;
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_OK);

    /* the same from a file, with its line */
    avi_mesh f;
    ck_assert_int_eq(avi_mesh_read(BAD "overlapping_tets.msh", &f, &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, BAD "overlapping_tets.msh:15: tetrahedra 0 (vertices 0, 1, 2, 3) and 1"));

    /* inverted: negative volume */
    uint32_t inv[1][4] = {{0, 2, 1, 3}};
    avi_mesh mi = {5, x, 0, NULL, 1, inv};
    ck_assert_int_eq(avi_mesh_validate(&mi, "body", &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "tetrahedron 0 (vertices 0, 2, 1, 3) has negative volume"));
}
END_TEST

/* A box of tetrahedra plus one more that shares no face with them and
 * pokes out through the box's side: every face is fine on its own, the
 * boundary crosses itself. */
START_TEST(test_tet_poking_through_boundary)
{
    avi_mesh m;
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_tet_box(1, 1, 1, 2, 2, 2, &m, &err), AVI_OK);
    ck_assert_int_eq(avi_mesh_validate(&m, "box", &err), AVI_OK);
    size_t n = m.vertex_count;
    m.x = realloc(m.x, (n + 4) * sizeof *m.x);
    m.tets = realloc(m.tets, (m.tet_count + 1) * sizeof *m.tets);
    double extra[4][3] = {{0.6, 0.3, 0.3}, {1.4, 0.3, 0.3}, {0.6, 0.7, 0.3}, {0.6, 0.3, 0.7}};
    memcpy(m.x[n], extra, sizeof extra);
    m.vertex_count = n + 4;
    uint32_t t[4] = {(uint32_t)n, (uint32_t)n + 1, (uint32_t)n + 2, (uint32_t)n + 3};
    memcpy(m.tets[m.tet_count], t, sizeof t);
    m.tet_count++;
    ck_assert_int_eq(avi_mesh_validate(&m, "box", &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "box: the boundary self-intersects: face (") &&
                      strstr(err.message, "of tetrahedron 48 intersect"),
                  "%s", err.message);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_self_intersecting_surfaces)
{
    avi_mesh m;
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_read(BAD "obj_self_intersecting.obj", &m, &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, BAD "obj_self_intersecting.obj:8: the surface self-intersects: triangles 0 (vertices "
                                  "0, 1, 2) and 1 (vertices 3, 4, 5) intersect (edge (3, 4) of the second meets the first)");
    ck_assert_int_eq(avi_mesh_read(BAD "obj_folded_strip.obj", &m, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "obj_folded_strip.obj:13: the surface self-intersects: triangles 0 (vertices 0, "
                                      "2, 3) and 6 (vertices 6, 8, 9) intersect"),
                  "%s", err.message);

    /* A flat strip folded flat onto itself along an edge (180 degrees). */
    ck_assert_int_eq(avi_mesh_rect_grid(2, 1, 2, 1, &m, &err), AVI_OK);
    for (size_t v = 0; v < m.vertex_count; v++)
        if (m.x[v][0] > 1.5) m.x[v][0] = 0.0; /* the right column onto the left */
    ck_assert_int_eq(avi_mesh_validate(&m, "strip", &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "strip: the surface self-intersects: triangles "), "%s", err.message);
    avi_mesh_free(&m);
}
END_TEST

/* Good meshes pass, closed and open, flat and curved, tilted (inexact
 * coplanarity), jittered. */
START_TEST(test_good_meshes_pass)
{
    avi_mesh m;
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_icosphere(1.0, 4, &m, &err), AVI_OK);
    ck_assert_msg(avi_mesh_validate(&m, "sphere", &err) == AVI_OK, "%s", err.message);
    avi_mesh_free(&m);
    ck_assert_int_eq(avi_mesh_disk(0.35, 16, &m, &err), AVI_OK);
    ck_assert_msg(avi_mesh_validate(&m, "disk", &err) == AVI_OK, "%s", err.message);
    avi_mesh_free(&m);
    ck_assert_int_eq(avi_mesh_rect_grid(1, 1, 30, 30, &m, &err), AVI_OK);
    for (size_t v = 0; v < m.vertex_count; v++) { /* tilt the plane: coordinates no longer exact */
        double x = m.x[v][0], y = m.x[v][1];
        m.x[v][0] = 0.8 * x - 0.6 * y * 0.3;
        m.x[v][1] = 0.6 * x + 0.8 * y * 0.3;
        m.x[v][2] = 0.1 * x + 0.7 * y;
    }
    ck_assert_msg(avi_mesh_validate(&m, "tilted", &err) == AVI_OK, "%s", err.message);
    ck_assert_int_eq(avi_mesh_jitter_interior(&m, 0.005, 7, &err), AVI_OK);
    ck_assert_msg(avi_mesh_validate(&m, "jittered", &err) == AVI_OK, "%s", err.message);
    avi_mesh_free(&m);
    ck_assert_int_eq(avi_mesh_tet_box(1, 0.1, 0.1, 40, 4, 4, &m, &err), AVI_OK);
    ck_assert_int_eq(avi_mesh_jitter_interior(&m, 0.003, 3, &err), AVI_OK);
    ck_assert_msg(avi_mesh_validate(&m, "bar", &err) == AVI_OK, "%s", err.message);
    avi_mesh_free(&m);
}
END_TEST

/* ---- initial contact clearance of a model ---- */

/* Two vertical triangles whose horizontal top/bottom edges cross at right
 * angles `gap` apart: no vertex is near the other face, only the edges. */
static avi_model *crossed_edges(double gap)
{
    avi_model *m = avi_model_create();
    double x[6][3] = {{-1, 0, 0}, {1, 0, 0}, {0, 0, -1}, {0, -1, gap}, {0, 1, gap}, {0, 0, 1 + gap}};
    avi_shell_material mat = {1e6, 0.3, 1000, 1e-3};
    for (int b = 0; b < 2; b++) {
        int body = avi_model_add_body(m, b ? "upper" : "lower");
        for (int k = 0; k < 3; k++) ck_assert_int_ge(avi_model_add_vertex(m, body, x[3 * b + k]), 0);
    }
    uint32_t tri[2][3] = {{0, 1, 2}, {3, 4, 5}};
    ck_assert_int_eq(avi_model_add_triangle_mesh(m, (const uint32_t (*)[3])tri, 2, &mat, 0), 0);
    avi_contact_settings cs = {1e-2, 2e-3, 0, 0, 0.0};
    ck_assert_int_eq(avi_model_set_contact(m, &cs), 0);
    ck_assert_int_eq(avi_model_add_contact_triangles(m, (const uint32_t (*)[3])tri, 2), 0);
    return m;
}

START_TEST(test_clearance_edge_edge)
{
    avi_clearance c;
    avi_model *m = crossed_edges(1e-3);
    ck_assert_int_eq(avi_contact_clearance(m, &c), 0);
    ck_assert_int_eq(c.kind, AVI_CLEARANCE_EE);
    ck_assert_double_eq_tol(c.d, 1e-3, 1e-15);
    ck_assert_uint_eq(c.v[0], 0);
    ck_assert_uint_eq(c.v[1], 1);
    ck_assert_uint_eq(c.v[2], 3);
    ck_assert_uint_eq(c.v[3], 4);
    avi_model_destroy(m);
    m = crossed_edges(2.001e-3);
    ck_assert_int_eq(avi_contact_clearance(m, &c), 0);
    ck_assert_int_eq(c.kind, AVI_CLEARANCE_OK);
    avi_model_destroy(m);
    m = crossed_edges(-1e-3); /* the edges pass through each other's triangles */
    ck_assert_int_eq(avi_contact_clearance(m, &c), 0);
    ck_assert_int_eq(c.kind, AVI_CLEARANCE_INTERSECT);
    avi_model_destroy(m);
}
END_TEST

static Suite *mesh_check_suite(void)
{
    Suite *s = suite_create("mesh_check");
    TCase *tc = tcase_create("check");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_orient3d_exact);
    tcase_add_test(tc, test_orient2d_exact);
    tcase_add_test(tc, test_triangle_cases);
    tcase_add_test(tc, test_box_pairs_brute_force);
    tcase_add_test(tc, test_overlapping_tets);
    tcase_add_test(tc, test_tet_poking_through_boundary);
    tcase_add_test(tc, test_self_intersecting_surfaces);
    tcase_add_test(tc, test_good_meshes_pass);
    tcase_add_test(tc, test_clearance_edge_edge);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(mesh_check_suite)
