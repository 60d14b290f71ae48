/* Mesh generators and mesh operations: counts, topology, geometry,
 * validation, jitter and reordering. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "avi/mesh.h"
#include "check_main.h"

/* ---- helpers ---- */

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

typedef struct {
    size_t edges;       /* distinct undirected edges */
    int min_share;      /* fewest triangles on an edge */
    int max_share;      /* most triangles on an edge */
    int repeated_dir;   /* a directed edge used twice: inconsistent orientation */
    size_t open_edges;  /* edges of one triangle */
} edge_info;

static edge_info edges_of(const avi_mesh *m)
{
    edge_info e = {0, 1 << 30, 0, 0, 0};
    size_t n = 3 * m->triangle_count;
    uint64_t *dir = malloc(n * sizeof *dir), *und = malloc(n * sizeof *und);
    ck_assert_ptr_nonnull(dir);
    ck_assert_ptr_nonnull(und);
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint64_t a = m->triangles[t][k], b = m->triangles[t][(k + 1) % 3];
            dir[3 * t + k] = a << 32 | b;
            und[3 * t + k] = a < b ? a << 32 | b : b << 32 | a;
        }
    qsort(dir, n, sizeof *dir, cmp_u64);
    qsort(und, n, sizeof *und, cmp_u64);
    for (size_t i = 1; i < n; i++)
        if (dir[i] == dir[i - 1]) e.repeated_dir = 1;
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && und[j] == und[i]) j++;
        int share = (int)(j - i);
        e.edges++;
        if (share < e.min_share) e.min_share = share;
        if (share > e.max_share) e.max_share = share;
        if (share == 1) e.open_edges++;
        i = j;
    }
    free(dir);
    free(und);
    return e;
}

/* Vertices on an open edge. */
static unsigned char *open_vertices(const avi_mesh *m)
{
    unsigned char *on = calloc(m->vertex_count, 1);
    ck_assert_ptr_nonnull(on);
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = m->triangles[t][k], b = m->triangles[t][(k + 1) % 3];
            int shared = 0;
            for (size_t u = 0; u < m->triangle_count && !shared; u++) {
                if (u == t) continue;
                for (int q = 0; q < 3; q++) {
                    uint32_t c = m->triangles[u][q], d = m->triangles[u][(q + 1) % 3];
                    if ((c == a && d == b) || (c == b && d == a)) shared = 1;
                }
            }
            if (!shared) on[a] = on[b] = 1;
        }
    return on;
}

static void tri_normal(const avi_mesh *m, size_t t, double n[3])
{
    const double *a = m->x[m->triangles[t][0]], *b = m->x[m->triangles[t][1]], *c = m->x[m->triangles[t][2]];
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
    double v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    n[0] = u[1] * v[2] - u[2] * v[1];
    n[1] = u[2] * v[0] - u[0] * v[2];
    n[2] = u[0] * v[1] - u[1] * v[0];
}

/* Volume enclosed by a closed, outward surface (divergence theorem). */
static double enclosed_volume(const avi_mesh *m)
{
    double vol = 0.0;
    for (size_t t = 0; t < m->triangle_count; t++) {
        const double *a = m->x[m->triangles[t][0]], *b = m->x[m->triangles[t][1]], *c = m->x[m->triangles[t][2]];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
    }
    return vol;
}

static double tet_volume(const avi_mesh *m, size_t t)
{
    const uint32_t *v = m->tets[t];
    double d[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) d[i][j] = m->x[v[j + 1]][i] - m->x[v[0]][i];
    return (d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
            d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0])) / 6.0;
}

/* Smallest interior angle of all triangles, in degrees. */
static double min_angle_deg(const avi_mesh *m)
{
    double best = 180.0;
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            const double *a = m->x[m->triangles[t][k]], *b = m->x[m->triangles[t][(k + 1) % 3]],
                         *c = m->x[m->triangles[t][(k + 2) % 3]];
            double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double cosang = (u[0] * v[0] + u[1] * v[1] + u[2] * v[2]) /
                            sqrt((u[0] * u[0] + u[1] * u[1] + u[2] * u[2]) * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]));
            double ang = acos(fmax(-1.0, fmin(1.0, cosang))) * 180.0 / M_PI;
            if (ang < best) best = ang;
        }
    return best;
}

static void assert_valid(const avi_mesh *m)
{
    avi_error err = {0};
    int rc = avi_mesh_validate(m, "generated", &err);
    ck_assert_msg(rc == 0, "validate: %s", err.message);
}

static void assert_input_error(int rc, const avi_error *err, const char *fragment, const avi_mesh *out)
{
    ck_assert_int_eq(rc, AVI_ERR_INPUT);
    ck_assert_int_eq(err->status, AVI_ERR_INPUT);
    ck_assert_msg(strstr(err->message, fragment) != NULL, "message '%s' lacks '%s'", err->message, fragment);
    if (out) {
        ck_assert_uint_eq(out->vertex_count, 0);
        ck_assert_ptr_null(out->x);
        ck_assert_ptr_null(out->triangles);
        ck_assert_ptr_null(out->tets);
    }
}

/* ---- icosphere ---- */

START_TEST(test_icosphere_counts_and_topology)
{
    for (int s = 0; s <= 5; s++) {
        avi_mesh m;
        avi_error err = {0};
        ck_assert_int_eq(avi_mesh_icosphere(0.125, s, &m, &err), 0);
        size_t p = (size_t)1 << (2 * s);
        ck_assert_uint_eq(m.vertex_count, 10 * p + 2);
        ck_assert_uint_eq(m.triangle_count, 20 * p);
        ck_assert_uint_eq(m.tet_count, 0);
        edge_info e = edges_of(&m);
        ck_assert_uint_eq(e.edges, 30 * p);
        /* Euler characteristic of the sphere */
        ck_assert_int_eq((long)m.vertex_count - (long)e.edges + (long)m.triangle_count, 2);
        ck_assert_int_eq(e.min_share, 2);
        ck_assert_int_eq(e.max_share, 2);
        ck_assert_int_eq(e.repeated_dir, 0);
        /* every vertex used: no duplicates left behind */
        unsigned char *used = calloc(m.vertex_count, 1);
        for (size_t t = 0; t < m.triangle_count; t++)
            for (int k = 0; k < 3; k++) used[m.triangles[t][k]] = 1;
        for (size_t v = 0; v < m.vertex_count; v++) ck_assert(used[v]);
        free(used);
        assert_valid(&m);
        avi_mesh_free(&m);
        ck_assert_ptr_null(m.x);
    }
}
END_TEST

START_TEST(test_icosphere_geometry)
{
    const double r = 0.125;
    double prev_err = INFINITY;
    for (int s = 0; s <= 6; s++) {
        avi_mesh m;
        ck_assert_int_eq(avi_mesh_icosphere(r, s, &m, NULL), 0);
        for (size_t v = 0; v < m.vertex_count; v++) {
            double len = sqrt(m.x[v][0] * m.x[v][0] + m.x[v][1] * m.x[v][1] + m.x[v][2] * m.x[v][2]);
            ck_assert_double_eq_tol(len, r, 4e-16 * r * 4);
        }
        /* outward: every normal points away from the centre */
        for (size_t t = 0; t < m.triangle_count; t++) {
            double n[3];
            tri_normal(&m, t, n);
            const double *a = m.x[m.triangles[t][0]];
            ck_assert(n[0] * a[0] + n[1] * a[1] + n[2] * a[2] > 0.0);
        }
        double vol = enclosed_volume(&m), exact = 4.0 / 3.0 * M_PI * r * r * r;
        double rel = fabs(vol - exact) / exact;
        ck_assert(vol > 0.0);
        ck_assert(rel < prev_err);
        prev_err = rel;
        if (s >= 1) ck_assert(min_angle_deg(&m) > 50.0);
        avi_mesh_free(&m);
    }
    ck_assert(prev_err < 1e-3);
}
END_TEST

START_TEST(test_icosphere_bad_parameters)
{
    avi_mesh m;
    avi_error err = {0};
    assert_input_error(avi_mesh_icosphere(0.0, 2, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_icosphere(-1.0, 2, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_icosphere(NAN, 2, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_icosphere(INFINITY, 2, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_icosphere(1.0, -1, &m, &err), &err, "subdivisions", &m);
    assert_input_error(avi_mesh_icosphere(1.0, 11, &m, &err), &err, "subdivisions", &m);
    ck_assert_int_eq(avi_mesh_icosphere(1.0, 99, &m, NULL), AVI_ERR_INPUT);
}
END_TEST

/* ---- disk ---- */

START_TEST(test_disk_counts_and_shape)
{
    const int sizes[] = {1, 2, 5, 24};
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        int r = sizes[c];
        const double R = 0.35;
        avi_mesh m;
        avi_error err = {0};
        ck_assert_int_eq(avi_mesh_disk(R, r, &m, &err), 0);
        ck_assert_uint_eq(m.vertex_count, 1 + 3 * (size_t)r * (r + 1));
        ck_assert_uint_eq(m.triangle_count, 6 * (size_t)r * r);
        edge_info e = edges_of(&m);
        ck_assert_int_eq(e.repeated_dir, 0);
        ck_assert_int_eq(e.max_share, 2);
        ck_assert_uint_eq(e.open_edges, 6 * (size_t)r);
        /* a disk: Euler characteristic 1 */
        ck_assert_int_eq((long)m.vertex_count - (long)e.edges + (long)m.triangle_count, 1);
        for (size_t t = 0; t < m.triangle_count; t++) {
            double n[3];
            tri_normal(&m, t, n);
            ck_assert(n[2] > 0.0);
            ck_assert(n[0] == 0.0 && n[1] == 0.0);
        }
        unsigned char *on = open_vertices(&m);
        size_t nb = 0;
        for (size_t v = 0; v < m.vertex_count; v++) {
            ck_assert(m.x[v][2] == 0.0);
            double len = hypot(m.x[v][0], m.x[v][1]);
            ck_assert(len <= R * (1 + 1e-15));
            if (on[v]) {
                nb++;
                ck_assert_double_eq_tol(len, R, 2e-16 * R * 4);
            }
        }
        ck_assert_uint_eq(nb, 6 * (size_t)r);
        free(on);
        ck_assert(min_angle_deg(&m) > 40.0);
        assert_valid(&m);
        avi_mesh_free(&m);
    }
}
END_TEST

START_TEST(test_disk_area_converges)
{
    const double R = 2.0, exact = M_PI * R * R;
    double prev = INFINITY;
    for (int r = 1; r <= 64; r *= 2) {
        avi_mesh m;
        ck_assert_int_eq(avi_mesh_disk(R, r, &m, NULL), 0);
        double area = 0.0;
        for (size_t t = 0; t < m.triangle_count; t++) {
            double n[3];
            tri_normal(&m, t, n);
            area += 0.5 * n[2];
        }
        /* inscribed 6r-gon: area = 3 r R^2 sin(2 pi / 6r) */
        ck_assert_double_eq_tol(area, 3.0 * r * R * R * sin(2.0 * M_PI / (6.0 * r)), 1e-12 * exact);
        double rel = fabs(area - exact) / exact;
        ck_assert(rel < prev);
        prev = rel;
        avi_mesh_free(&m);
    }
    ck_assert(prev < 1e-4);
}
END_TEST

START_TEST(test_disk_bad_parameters)
{
    avi_mesh m;
    avi_error err = {0};
    assert_input_error(avi_mesh_disk(0.0, 3, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_disk(NAN, 3, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_disk(1.0, 0, &m, &err), &err, "rings", &m);
    assert_input_error(avi_mesh_disk(1.0, -4, &m, &err), &err, "rings", &m);
    assert_input_error(avi_mesh_disk(1.0, 1000000, &m, &err), &err, "rings", &m);
}
END_TEST

/* ---- rectangle grid ---- */

START_TEST(test_rect_grid)
{
    const int sizes[][2] = {{1, 1}, {2, 3}, {7, 5}, {30, 1}};
    for (size_t c = 0; c < 4; c++) {
        int nx = sizes[c][0], ny = sizes[c][1];
        const double lx = 0.3, ly = 0.7;
        avi_mesh m;
        avi_error err = {0};
        ck_assert_int_eq(avi_mesh_rect_grid(lx, ly, nx, ny, &m, &err), 0);
        ck_assert_uint_eq(m.vertex_count, (size_t)(nx + 1) * (ny + 1));
        ck_assert_uint_eq(m.triangle_count, 2 * (size_t)nx * ny);
        edge_info e = edges_of(&m);
        ck_assert_int_eq(e.repeated_dir, 0);
        ck_assert_int_eq(e.max_share, 2);
        ck_assert_uint_eq(e.open_edges, 2 * (size_t)(nx + ny));
        double area = 0.0;
        for (size_t t = 0; t < m.triangle_count; t++) {
            double n[3];
            tri_normal(&m, t, n);
            ck_assert(n[2] > 0.0);
            area += 0.5 * n[2];
        }
        ck_assert_double_eq_tol(area, lx * ly, 1e-14);
        /* the far corner is exactly (lx, ly) */
        size_t last = m.vertex_count - 1;
        ck_assert(m.x[last][0] == lx && m.x[last][1] == ly && m.x[last][2] == 0.0);
        unsigned char *on = open_vertices(&m);
        for (size_t v = 0; v < m.vertex_count; v++)
            if (on[v])
                ck_assert(m.x[v][0] == 0.0 || m.x[v][0] == lx || m.x[v][1] == 0.0 || m.x[v][1] == ly);
        free(on);
        assert_valid(&m);
        avi_mesh_free(&m);
    }
}
END_TEST

START_TEST(test_rect_grid_checkerboard)
{
    avi_mesh m;
    ck_assert_int_eq(avi_mesh_rect_grid(2.0, 2.0, 2, 2, &m, NULL), 0);
    /* does a triangle contain both ends of a diagonal? */
#define HAS(t, a, b)                                                                                                   \
    ((m.triangles[t][0] == (a) || m.triangles[t][1] == (a) || m.triangles[t][2] == (a)) &&                              \
     (m.triangles[t][0] == (b) || m.triangles[t][1] == (b) || m.triangles[t][2] == (b)))
    /* cell (0,0): diagonal 0-4; cell (1,0): diagonal 2-4; cell (0,1): 4-6; cell (1,1): 4-8 */
    ck_assert(HAS(0, 0, 4) && HAS(1, 0, 4));
    ck_assert(HAS(2, 2, 4) && HAS(3, 2, 4));
    ck_assert(HAS(4, 4, 6) && HAS(5, 4, 6));
    ck_assert(HAS(6, 4, 8) && HAS(7, 4, 8));
#undef HAS
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_rect_grid_bad_parameters)
{
    avi_mesh m;
    avi_error err = {0};
    assert_input_error(avi_mesh_rect_grid(0.0, 1.0, 2, 2, &m, &err), &err, "lx", &m);
    assert_input_error(avi_mesh_rect_grid(1.0, -1.0, 2, 2, &m, &err), &err, "ly", &m);
    assert_input_error(avi_mesh_rect_grid(1.0, 1.0, 0, 2, &m, &err), &err, "nx", &m);
    assert_input_error(avi_mesh_rect_grid(1.0, 1.0, 2, -2, &m, &err), &err, "ny", &m);
    assert_input_error(avi_mesh_rect_grid(1.0, 1.0, 1 << 20, 1 << 20, &m, &err), &err, "nx", &m);
}
END_TEST

/* ---- tetrahedral ball ---- */

START_TEST(test_tet_ball)
{
    const double r = 0.1, sphere = 4.0 / 3.0 * M_PI * r * r * r;
    double prev_gap = INFINITY;
    for (int n = 1; n <= 16; n *= 2) {
        avi_mesh m;
        avi_error err = {0};
        ck_assert_int_eq(avi_mesh_tet_ball(r, n, &m, &err), 0);
        ck_assert_uint_eq(m.vertex_count, (size_t)(n + 1) * (n + 1) * (n + 1));
        ck_assert_uint_eq(m.tet_count, 6 * (size_t)n * n * n);
        ck_assert_uint_eq(m.triangle_count, 12 * (size_t)n * n);
        /* every tetrahedron keeps its orientation; the volume approaches the
         * sphere's from below, the gap shrinking about 4x per halving
         * (second order; at least 2.5x asked) */
        double vol = 0.0, vmin = INFINITY;
        for (size_t t = 0; t < m.tet_count; t++) {
            double v = tet_volume(&m, t);
            vmin = fmin(vmin, v);
            vol += v;
        }
        ck_assert_msg(vmin > 0.0, "n = %d: a tetrahedron of volume %g", n, vmin);
        double gap = (sphere - vol) / sphere;
        ck_assert_msg(gap > 0.0 && gap < 0.4 * prev_gap, "n = %d: volume gap %g after %g", n, gap,
                      prev_gap);
        prev_gap = gap;
        /* the boundary: closed, outward, its vertices on the sphere */
        edge_info e = edges_of(&m);
        ck_assert_int_eq(e.min_share, 2);
        ck_assert_int_eq(e.max_share, 2);
        ck_assert_int_eq(e.repeated_dir, 0);
        ck_assert_double_eq_tol(enclosed_volume(&m), vol, 1e-12 * sphere);
        for (size_t t = 0; t < m.triangle_count; t++)
            for (int k = 0; k < 3; k++) {
                const double *p = m.x[m.triangles[t][k]];
                ck_assert_double_eq_tol(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), r, 1e-15);
            }
        assert_valid(&m);
        avi_mesh_free(&m);
    }
    avi_mesh m;
    avi_error err;
    assert_input_error(avi_mesh_tet_ball(0.0, 4, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_tet_ball(NAN, 4, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_tet_ball(1.0, 0, &m, &err), &err, "n", &m);
    assert_input_error(avi_mesh_tet_ball(1.0, 2000, &m, &err), &err, "n", &m);
    /* the mapped cube's corner cells turn over at n = 32: refused */
    assert_input_error(avi_mesh_tet_ball(1.0, 32, &m, &err), &err, "turns a cell at the cube's corners over", &m);
}
END_TEST

/* Mean-ratio quality 12 (3 V)^(2/3) / sum of squared edges: 1 for a
 * regular tetrahedron, 0 for a flat one; the smallest over the mesh. */
static double min_tet_quality(const avi_mesh *m)
{
    double q = INFINITY;
    for (size_t t = 0; t < m->tet_count; t++) {
        double l2 = 0.0;
        for (int i = 0; i < 4; i++)
            for (int j = i + 1; j < 4; j++) {
                const double *a = m->x[m->tets[t][i]], *b = m->x[m->tets[t][j]];
                l2 += (a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) + (a[2] - b[2]) * (a[2] - b[2]);
            }
        q = fmin(q, 12.0 * pow(3.0 * fabs(tet_volume(m, t)), 2.0 / 3.0) / l2);
    }
    return q;
}

/* Distance from p to the mesh's nearest vertex, and that vertex. */
static double nearest_vertex(const avi_mesh *m, const double p[3], size_t *best)
{
    double d2 = INFINITY;
    for (size_t i = 0; i < m->vertex_count; i++) {
        const double *x = m->x[i];
        double e = (x[0] - p[0]) * (x[0] - p[0]) + (x[1] - p[1]) * (x[1] - p[1]) + (x[2] - p[2]) * (x[2] - p[2]);
        if (e < d2) d2 = e, *best = i;
    }
    return sqrt(d2);
}

/* Longest edge of the surface triangles at the vertex nearest p. */
static double edge_at(const avi_mesh *m, const double p[3])
{
    size_t best = 0;
    nearest_vertex(m, p, &best);
    double len = 0.0;
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            if (m->triangles[t][k] != best) continue;
            for (int j = 1; j < 3; j++) {
                const double *a = m->x[best], *b = m->x[m->triangles[t][(k + j) % 3]];
                len = fmax(len, sqrt((a[0] - b[0]) * (a[0] - b[0]) + (a[1] - b[1]) * (a[1] - b[1]) +
                                     (a[2] - b[2]) * (a[2] - b[2])));
            }
        }
    return len;
}

/* A ball's surface: its vertices on the sphere of radius r, closed and
 * consistently oriented; the mesh valid. */
static void assert_closed_ball(const avi_mesh *m, double r)
{
    for (size_t e = 0; e < m->triangle_count; e++)
        for (int c = 0; c < 3; c++) {
            const double *p = m->x[m->triangles[e][c]];
            ck_assert_double_eq_tol(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), r, 1e-15);
        }
    edge_info ei = edges_of(m);
    ck_assert_int_eq(ei.min_share, 2);
    ck_assert_int_eq(ei.max_share, 2);
    ck_assert_int_eq(ei.repeated_dir, 0);
    assert_valid(m);
}

START_TEST(test_tet_ball_graded)
{
    const double r = 0.1, sphere = 4.0 / 3.0 * M_PI * r * r * r, south[3] = {0, 0, -r}, north[3] = {0, 0, r};
    avi_error err = {0};
    double prev_gap[2] = {INFINITY, INFINITY};
    for (int n = 8; n <= 16; n *= 2) {
        avi_mesh u, g;
        ck_assert_int_eq(avi_mesh_tet_ball(r, n, &u, &err), 0);
        /* grading 0 is the mapped cube, bitwise */
        ck_assert_int_eq(avi_mesh_tet_ball_graded(r, n, 0.0, &g, &err), 0);
        ck_assert_int_eq(memcmp(u.x, g.x, u.vertex_count * sizeof *u.x), 0);
        avi_mesh_free(&g);
        double q0 = min_tet_quality(&u), h0 = edge_at(&u, south);
        for (int k = 1; k <= 2; k++) {
            double t = k == 1 ? 0.5 : 0.8, s = (1.0 - t) / (1.0 + t);
            ck_assert_int_eq(avi_mesh_tet_ball_graded(r, n, t, &g, &err), 0);
            ck_assert_uint_eq(g.vertex_count, u.vertex_count);
            ck_assert_uint_eq(g.tet_count, u.tet_count);
            ck_assert_int_eq(memcmp(g.tets, u.tets, u.tet_count * sizeof *u.tets), 0);
            ck_assert_int_eq(memcmp(g.triangles, u.triangles, u.triangle_count * sizeof *u.triangles), 0);
            /* every tetrahedron keeps its orientation; the volume gap (the
             * coarse north cap's chords cut off 32 % at n = 8, grading 0.8)
             * falls about 3-4x per halving */
            double vol = 0.0, vmin = INFINITY;
            for (size_t e = 0; e < g.tet_count; e++) vmin = fmin(vmin, tet_volume(&g, e)), vol += tet_volume(&g, e);
            ck_assert_msg(vmin > 0.0, "n = %d, grading %g: a tetrahedron of volume %g", n, t, vmin);
            double gap = (sphere - vol) / sphere;
            ck_assert_msg(gap > 0.0 && gap < 0.4 * prev_gap[k - 1], "n = %d, grading %g: volume gap %g after %g", n, t,
                          gap, prev_gap[k - 1]);
            prev_gap[k - 1] = gap;
            ck_assert_double_eq_tol(enclosed_volume(&g), vol, 1e-12 * sphere);
            /* conformal, so shapes are kept to first order in the cell
             * size; the mapped cube's thin cells along the cube's edges
             * (its worst) lose a factor 1.9 at grading 0.5, 4 at 0.8.
             * The surface stays on the sphere, the poles fixed. */
            double q = min_tet_quality(&g);
            printf("tet_ball_graded n %d grading %.1f: quality %.3f (mapped cube %.3f), volume %.4f of the sphere, "
                   "south edge %.3f, north edge %.3f of the mapped cube's\n",
                   n, t, q, q0, vol / sphere, edge_at(&g, south) / h0, edge_at(&g, north) / h0);
            ck_assert_msg(q > (k == 1 ? 0.45 : 0.2) * q0, "n = %d, grading %g: quality %g against %g", n, t, q, q0);
            assert_closed_ball(&g, r);
            size_t pole;
            ck_assert_double_le(nearest_vertex(&g, south, &pole), 1e-15);
            ck_assert_double_le(nearest_vertex(&g, north, &pole), 1e-15);
            /* the cells at the south pole shrink by (1 - t) / (1 + t), at
             * the north pole grow by its inverse (to the cell's variation
             * of the scale factor) */
            ck_assert_double_eq_tol(edge_at(&g, south) / h0, s, 0.15 * s);
            avi_mesh_free(&g);
        }
        avi_mesh_free(&u);
    }
    avi_mesh m;
    assert_input_error(avi_mesh_tet_ball_graded(r, 8, -0.1, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_graded(r, 8, 1.0, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_graded(r, 8, NAN, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_graded(r, 8, INFINITY, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_graded(0.0, 8, 0.5, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_tet_ball_graded(r, 0, 0.5, &m, &err), &err, "n", &m);
    assert_input_error(avi_mesh_tet_ball_graded(r, 24, 0.5, &m, &err), &err, "grading 0.5 turns a cell", &m);
}
END_TEST

/* The concentric-shell ball: valid and of one quality at every n, graded
 * or not, where the mapped cube's corner cells turn over (n = 32; n = 24
 * at grading 0.5). */
START_TEST(test_tet_ball_shells)
{
    const double r = 0.1, sphere = 4.0 / 3.0 * M_PI * r * r * r;
    avi_error err = {0};
    for (int k = 0; k < 3; k++) {
        double t = k == 0 ? 0.0 : k == 1 ? 0.5 : 0.8, prev_gap = INFINITY, q8 = 0.0;
        for (int n = 8; n <= 32; n *= 2) {
            avi_mesh m;
            ck_assert_int_eq(avi_mesh_tet_ball_shells(r, n, t, &m, &err), 0);
            ck_assert_uint_eq(m.vertex_count, (size_t)(n + 1) * (n + 1) * (n + 1));
            ck_assert_uint_eq(m.tet_count, 6 * (size_t)n * n * n);
            ck_assert_uint_eq(m.triangle_count, 12 * (size_t)n * n);
            double vol = 0.0, vmin = INFINITY;
            for (size_t e = 0; e < m.tet_count; e++) vmin = fmin(vmin, tet_volume(&m, e)), vol += tet_volume(&m, e);
            ck_assert_msg(vmin > 0.0, "n = %d, grading %g: a tetrahedron of volume %g", n, t, vmin);
            /* the chords' gap falls about 4x per halving (2.5x asked: the
             * coarse north cap at grading 0.8, n = 8) */
            double gap = (sphere - vol) / sphere;
            ck_assert_msg(gap > 0.0 && gap < 0.4 * prev_gap, "n = %d, grading %g: volume gap %g after %g", n, t, gap,
                          prev_gap);
            prev_gap = gap;
            ck_assert_double_eq_tol(enclosed_volume(&m), vol, 1e-12 * sphere);
            /* the worst cell's shape does not degrade with n (the map is
             * bi-Lipschitz): within 15 % of n = 8's */
            double q = min_tet_quality(&m);
            if (n == 8) q8 = q;
            printf("tet_ball_shells n %d grading %.1f: quality %.3f, volume %.4f of the sphere\n", n, t, q, vol / sphere);
            ck_assert_msg(q > 0.85 * q8 && q > (t < 0.7 ? 0.3 : 0.1), "n = %d, grading %g: quality %g (n = 8: %g)", n,
                          t, q, q8);
            assert_closed_ball(&m, r);
            avi_mesh_free(&m);
        }
    }
    avi_mesh m;
    assert_input_error(avi_mesh_tet_ball_shells(r, 8, -0.1, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_shells(r, 8, 1.0, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_shells(r, 8, NAN, &m, &err), &err, "grading", &m);
    assert_input_error(avi_mesh_tet_ball_shells(0.0, 8, 0.5, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_tet_ball_shells(INFINITY, 8, 0.5, &m, &err), &err, "radius", &m);
    assert_input_error(avi_mesh_tet_ball_shells(r, 0, 0.5, &m, &err), &err, "n", &m);
    assert_input_error(avi_mesh_tet_ball_shells(r, 2000, 0.5, &m, &err), &err, "n", &m);
}
END_TEST

/* ---- tetrahedral box ---- */

START_TEST(test_tet_box)
{
    const int sizes[][3] = {{1, 1, 1}, {2, 3, 4}, {5, 5, 5}, {1, 7, 2}};
    for (size_t c = 0; c < 4; c++) {
        int nx = sizes[c][0], ny = sizes[c][1], nz = sizes[c][2];
        const double lx = 0.1, ly = 0.7, lz = 1.3;
        avi_mesh m;
        avi_error err = {0};
        ck_assert_int_eq(avi_mesh_tet_box(lx, ly, lz, nx, ny, nz, &m, &err), 0);
        ck_assert_uint_eq(m.vertex_count, (size_t)(nx + 1) * (ny + 1) * (nz + 1));
        ck_assert_uint_eq(m.tet_count, 6 * (size_t)nx * ny * nz);
        ck_assert_uint_eq(m.triangle_count, 4 * (size_t)(nx * ny + ny * nz + nz * nx));
        double vol = 0.0, cell = lx * ly * lz / (nx * ny * nz);
        for (size_t t = 0; t < m.tet_count; t++) {
            double v = tet_volume(&m, t);
            ck_assert(v > 0.0);
            /* Kuhn tetrahedra are congruent: each a sixth of a cell */
            ck_assert_double_eq_tol(v, cell / 6.0, 1e-12 * cell);
            vol += v;
        }
        ck_assert_double_eq_tol(vol, lx * ly * lz, 1e-13 * lx * ly * lz);
        /* the boundary: closed, consistently oriented, outward, on the box */
        edge_info e = edges_of(&m);
        ck_assert_int_eq(e.min_share, 2);
        ck_assert_int_eq(e.max_share, 2);
        ck_assert_int_eq(e.repeated_dir, 0);
        ck_assert_double_eq_tol(enclosed_volume(&m), lx * ly * lz, 1e-13);
        for (size_t t = 0; t < m.triangle_count; t++) {
            double n[3];
            tri_normal(&m, t, n);
            const double *a = m.x[m.triangles[t][0]];
            /* each boundary triangle lies in one face, its normal along that face's axis */
            int axis = fabs(n[0]) > 0 ? 0 : fabs(n[1]) > 0 ? 1 : 2;
            const double L[3] = {lx, ly, lz};
            for (int i = 0; i < 3; i++)
                if (i != axis) ck_assert(n[i] == 0.0);
            for (int k = 0; k < 3; k++) ck_assert(m.x[m.triangles[t][k]][axis] == a[axis]);
            ck_assert(a[axis] == 0.0 || a[axis] == L[axis]);
            ck_assert((a[axis] == 0.0) == (n[axis] < 0.0));
        }
        size_t last = m.vertex_count - 1;
        ck_assert(m.x[last][0] == lx && m.x[last][1] == ly && m.x[last][2] == lz);
        assert_valid(&m);

        /* the boundary function agrees with what the generator stored */
        uint32_t (*b)[3];
        size_t nb;
        ck_assert_int_eq(avi_mesh_boundary_triangles(&m, &b, &nb, &err), 0);
        ck_assert_uint_eq(nb, m.triangle_count);
        ck_assert_int_eq(memcmp(b, m.triangles, nb * sizeof *b), 0);
        free(b);
        avi_mesh_free(&m);
    }
}
END_TEST

START_TEST(test_tet_box_bad_parameters)
{
    avi_mesh m;
    avi_error err = {0};
    assert_input_error(avi_mesh_tet_box(-1, 1, 1, 1, 1, 1, &m, &err), &err, "lx", &m);
    assert_input_error(avi_mesh_tet_box(1, 0, 1, 1, 1, 1, &m, &err), &err, "ly", &m);
    assert_input_error(avi_mesh_tet_box(1, 1, INFINITY, 1, 1, 1, &m, &err), &err, "lz", &m);
    assert_input_error(avi_mesh_tet_box(1, 1, 1, 0, 1, 1, &m, &err), &err, "nx", &m);
    assert_input_error(avi_mesh_tet_box(1, 1, 1, 1, -3, 1, &m, &err), &err, "ny", &m);
    assert_input_error(avi_mesh_tet_box(1, 1, 1, 1, 1, 0, &m, &err), &err, "nz", &m);
    assert_input_error(avi_mesh_tet_box(1, 1, 1, 2000, 2000, 2000, &m, &err), &err, "too large", &m);
}
END_TEST

/* ---- boundary ---- */

START_TEST(test_boundary_single_tet)
{
    double x[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    uint32_t tet[1][4] = {{0, 1, 2, 3}};
    avi_mesh m = {4, x, 0, NULL, 1, tet};
    uint32_t (*b)[3];
    size_t nb;
    ck_assert_int_eq(avi_mesh_boundary_triangles(&m, &b, &nb, NULL), 0);
    ck_assert_uint_eq(nb, 4);
    avi_mesh s = {4, x, nb, b, 0, NULL};
    ck_assert_double_eq_tol(enclosed_volume(&s), 1.0 / 6.0, 1e-15);
    free(b);

    /* a face of three tetrahedra has no outside */
    double y[6][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0, 0, -1}, {0.3, 0.3, 1}};
    uint32_t tets[3][4] = {{0, 1, 2, 3}, {0, 2, 1, 4}, {0, 1, 2, 5}};
    avi_mesh bad = {6, y, 0, NULL, 3, tets};
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_boundary_triangles(&bad, &b, &nb, &err), AVI_ERR_INPUT);
    ck_assert_ptr_null(b);
    ck_assert_ptr_nonnull(strstr(err.message, "more than two"));
    /* and indices are checked */
    tets[0][3] = 6;
    ck_assert_int_eq(avi_mesh_boundary_triangles(&bad, &b, &nb, &err), AVI_ERR_INPUT);
}
END_TEST

/* ---- validation ---- */

START_TEST(test_validate_names_the_culprit)
{
    double x[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {2, 0, 0}};
    uint32_t tri[3][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}};
    uint32_t tet[1][4] = {{0, 1, 2, 3}};
    avi_mesh m = {5, x, 3, tri, 1, tet};
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), 0);

    avi_mesh empty = {5, x, 0, NULL, 0, NULL};
    ck_assert_int_eq(avi_mesh_validate(&empty, "body", &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "no triangles or tetrahedra"));

    x[2][1] = NAN;
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: vertex 2 has a non-finite coordinate (0, nan, 0)");
    x[2][1] = 1.0;

    tri[1][2] = 7;
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: triangle 1 (vertices 0, 3, 7) refers to vertex 7, but the mesh has 5 vertices");
    tri[1][2] = 1;

    tri[2][2] = 2;
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: triangle 2 (vertices 0, 2, 2) repeats a vertex");
    tri[2][2] = 3;

    tri[2][1] = 1;
    tri[2][2] = 4; /* (0,0,0) (1,0,0) (2,0,0): collinear */
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: triangle 2 (vertices 0, 1, 4) has zero area");
    tri[2][1] = 2;
    tri[2][2] = 3;

    tet[0][1] = 2;
    tet[0][2] = 1;
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "body: tetrahedron 0 (vertices 0, 2, 1, 3) has negative volume"));
    tet[0][1] = 1;
    tet[0][2] = 2;

    tet[0][3] = 4; /* four points in z = 0 */
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: tetrahedron 0 (vertices 0, 1, 2, 4) has zero volume");
    tet[0][3] = 1;
    ck_assert_int_eq(avi_mesh_validate(&m, "body", &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "repeats vertex 1"));
    tet[0][3] = 3;

    /* a third triangle on edge (0, 1) */
    uint32_t tri4[4][3] = {{0, 1, 2}, {0, 3, 1}, {0, 2, 3}, {1, 0, 4}};
    x[4][1] = -1.0;
    x[4][0] = 0.0;
    avi_mesh nm = {5, x, 4, tri4, 0, NULL};
    ck_assert_int_eq(avi_mesh_validate(&nm, "body", &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, "body: triangle 3 (vertices 1, 0, 4) makes edge (0, 1) non-manifold: it is also in triangles 0 and 1");

    /* with source lines */
    uint32_t lines[4] = {10, 11, 12, 13};
    ck_assert_int_eq(avi_mesh_validate_lines(&nm, "a.obj", lines, NULL, &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "a.obj:13: triangle 3"));
}
END_TEST

/* ---- jitter ---- */

START_TEST(test_jitter_tet_box)
{
    avi_mesh m, ref, again;
    const int n = 4;
    const double h = 1.0 / n, amp = 0.1 * h;
    ck_assert_int_eq(avi_mesh_tet_box(1, 1, 1, n, n, n, &m, NULL), 0);
    ck_assert_int_eq(avi_mesh_tet_box(1, 1, 1, n, n, n, &ref, NULL), 0);
    ck_assert_int_eq(avi_mesh_tet_box(1, 1, 1, n, n, n, &again, NULL), 0);
    ck_assert_int_eq(avi_mesh_jitter_interior(&m, amp, 42, NULL), 0);
    ck_assert_int_eq(avi_mesh_jitter_interior(&again, amp, 42, NULL), 0);
    ck_assert_int_eq(memcmp(m.x, again.x, m.vertex_count * sizeof *m.x), 0);
    size_t moved = 0;
    for (size_t v = 0; v < m.vertex_count; v++) {
        int boundary = 0;
        for (int i = 0; i < 3; i++) boundary |= ref.x[v][i] == 0.0 || ref.x[v][i] == 1.0;
        int differs = 0;
        for (int i = 0; i < 3; i++) {
            double d = m.x[v][i] - ref.x[v][i];
            ck_assert(fabs(d) <= amp);
            differs |= d != 0.0;
        }
        if (boundary) ck_assert(!differs);
        moved += differs;
    }
    ck_assert_uint_eq(moved, (size_t)(n - 1) * (n - 1) * (n - 1));
    assert_valid(&m);
    /* the time-step spread the benchmarks want: volumes now differ */
    double vmin = INFINITY, vmax = 0;
    for (size_t t = 0; t < m.tet_count; t++) {
        vmin = fmin(vmin, tet_volume(&m, t));
        vmax = fmax(vmax, tet_volume(&m, t));
    }
    ck_assert(vmax > 1.1 * vmin);
    /* another seed, other offsets */
    ck_assert_int_eq(avi_mesh_jitter_interior(&again, 0.0, 1, NULL), 0);
    avi_mesh other;
    ck_assert_int_eq(avi_mesh_tet_box(1, 1, 1, n, n, n, &other, NULL), 0);
    ck_assert_int_eq(avi_mesh_jitter_interior(&other, amp, 43, NULL), 0);
    ck_assert_int_ne(memcmp(m.x, other.x, m.vertex_count * sizeof *m.x), 0);
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_jitter_interior(&other, -1.0, 1, &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "amplitude"));
    ck_assert_int_eq(avi_mesh_jitter_interior(&other, NAN, 1, &err), AVI_ERR_INPUT);
    avi_mesh_free(&m);
    avi_mesh_free(&ref);
    avi_mesh_free(&again);
    avi_mesh_free(&other);
}
END_TEST

START_TEST(test_jitter_disk_stays_flat)
{
    avi_mesh m, ref;
    ck_assert_int_eq(avi_mesh_disk(1.0, 6, &m, NULL), 0);
    ck_assert_int_eq(avi_mesh_disk(1.0, 6, &ref, NULL), 0);
    const double amp = 0.02;
    ck_assert_int_eq(avi_mesh_jitter_interior(&m, amp, 7, NULL), 0);
    unsigned char *on = open_vertices(&ref);
    size_t moved = 0;
    for (size_t v = 0; v < m.vertex_count; v++) {
        ck_assert(m.x[v][2] == 0.0);
        double dx = m.x[v][0] - ref.x[v][0], dy = m.x[v][1] - ref.x[v][1];
        ck_assert(fabs(dx) <= amp && fabs(dy) <= amp);
        if (on[v]) ck_assert(dx == 0.0 && dy == 0.0);
        moved += dx != 0.0 || dy != 0.0;
    }
    ck_assert_uint_eq(moved, m.vertex_count - 36);
    free(on);
    assert_valid(&m);
    avi_mesh_free(&m);
    avi_mesh_free(&ref);
}
END_TEST

/* ---- reorder ---- */

static double mean_edge_span(const avi_mesh *m)
{
    double s = 0.0;
    for (size_t t = 0; t < m->tet_count; t++)
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) s += fabs((double)m->tets[t][a] - (double)m->tets[t][b]);
    return s / (6.0 * (double)m->tet_count);
}

START_TEST(test_reorder)
{
    avi_mesh m, ref;
    const int n = 8;
    ck_assert_int_eq(avi_mesh_tet_box(1, 2, 3, n, n, n, &m, NULL), 0);
    /* scramble vertex numbers with a fixed permutation first */
    size_t nv = m.vertex_count;
    uint32_t *perm = malloc(nv * sizeof *perm);
    for (size_t v = 0; v < nv; v++) perm[v] = (uint32_t)v;
    uint64_t s = 12345;
    for (size_t v = nv - 1; v > 0; v--) {
        s = s * 6364136223846793005u + 1442695040888963407u;
        size_t j = (size_t)((s >> 33) % (v + 1));
        uint32_t t = perm[v];
        perm[v] = perm[j];
        perm[j] = t;
    }
    double (*x)[3] = malloc(nv * sizeof *x);
    for (size_t v = 0; v < nv; v++) memcpy(x[perm[v]], m.x[v], sizeof x[0]);
    memcpy(m.x, x, nv * sizeof *x);
    free(x);
    for (size_t t = 0; t < m.tet_count; t++)
        for (int k = 0; k < 4; k++) m.tets[t][k] = perm[m.tets[t][k]];
    for (size_t t = 0; t < m.triangle_count; t++)
        for (int k = 0; k < 3; k++) m.triangles[t][k] = perm[m.triangles[t][k]];
    free(perm);

    /* keep a copy to compare */
    ref.vertex_count = nv;
    ref.triangle_count = m.triangle_count;
    ref.tet_count = m.tet_count;
    ref.x = malloc(nv * sizeof *ref.x);
    ref.triangles = malloc(m.triangle_count * sizeof *ref.triangles);
    ref.tets = malloc(m.tet_count * sizeof *ref.tets);
    memcpy(ref.x, m.x, nv * sizeof *ref.x);
    memcpy(ref.triangles, m.triangles, m.triangle_count * sizeof *ref.triangles);
    memcpy(ref.tets, m.tets, m.tet_count * sizeof *ref.tets);

    double span_before = mean_edge_span(&m);
    uint32_t *map = malloc(nv * sizeof *map);
    ck_assert_int_eq(avi_mesh_reorder(&m, map, NULL), 0);
    double span_after = mean_edge_span(&m);
    ck_assert_msg(span_after < 0.3 * span_before, "span %g -> %g", span_before, span_after);

    /* a permutation, and positions follow it */
    unsigned char *hit = calloc(nv, 1);
    for (size_t v = 0; v < nv; v++) {
        ck_assert_uint_lt(map[v], nv);
        ck_assert(!hit[map[v]]);
        hit[map[v]] = 1;
        ck_assert_int_eq(memcmp(m.x[map[v]], ref.x[v], sizeof m.x[0]), 0);
    }
    free(hit);
    /* elements are the old ones, renamed, sorted by smallest vertex */
    ck_assert_uint_eq(m.tet_count, ref.tet_count);
    uint32_t prev = 0;
    double vol = 0.0;
    for (size_t t = 0; t < m.tet_count; t++) {
        uint32_t lo = m.tets[t][0];
        for (int k = 1; k < 4; k++) lo = m.tets[t][k] < lo ? m.tets[t][k] : lo;
        ck_assert_uint_ge(lo, prev);
        prev = lo;
        ck_assert(tet_volume(&m, t) > 0.0);
        vol += tet_volume(&m, t);
    }
    ck_assert_double_eq_tol(vol, 6.0, 1e-12);
    /* each old tet appears, with vertex order kept */
    uint64_t *a = malloc(m.tet_count * sizeof *a), *b = malloc(m.tet_count * sizeof *b);
    for (size_t t = 0; t < m.tet_count; t++) {
        const uint32_t *o = ref.tets[t], *q = m.tets[t];
        a[t] = (uint64_t)map[o[0]] * 1000003u * 1000003u + (uint64_t)map[o[1]] * 1000003u + map[o[2]] + ((uint64_t)map[o[3]] << 50);
        b[t] = (uint64_t)q[0] * 1000003u * 1000003u + (uint64_t)q[1] * 1000003u + q[2] + ((uint64_t)q[3] << 50);
    }
    qsort(a, m.tet_count, sizeof *a, cmp_u64);
    qsort(b, m.tet_count, sizeof *b, cmp_u64);
    ck_assert_int_eq(memcmp(a, b, m.tet_count * sizeof *a), 0);
    free(a);
    free(b);
    edge_info e = edges_of(&m);
    ck_assert_int_eq(e.min_share, 2);
    ck_assert_int_eq(e.repeated_dir, 0);
    ck_assert_double_eq_tol(enclosed_volume(&m), 6.0, 1e-12);
    assert_valid(&m);

    /* deterministic: the same input gives the same output */
    ck_assert_int_eq(avi_mesh_reorder(&ref, NULL, NULL), 0);
    ck_assert_int_eq(memcmp(ref.x, m.x, nv * sizeof *m.x), 0);
    ck_assert_int_eq(memcmp(ref.tets, m.tets, m.tet_count * sizeof *m.tets), 0);
    ck_assert_int_eq(memcmp(ref.triangles, m.triangles, m.triangle_count * sizeof *m.triangles), 0);
    free(map);
    avi_mesh_free(&m);
    avi_mesh_free(&ref);

    /* surfaces too */
    ck_assert_int_eq(avi_mesh_icosphere(1.0, 3, &m, NULL), 0);
    ck_assert_int_eq(avi_mesh_reorder(&m, NULL, NULL), 0);
    e = edges_of(&m);
    ck_assert_int_eq(e.min_share, 2);
    ck_assert_int_eq(e.max_share, 2);
    ck_assert_int_eq(e.repeated_dir, 0);
    ck_assert(enclosed_volume(&m) > 4.0);
    avi_mesh_free(&m);

    /* A long bar (64 x 2 x 2 cells): the curve's cells are cubes, so
     * neighbours stay close in the order (with one scale per axis, cells
     * 32 times longer than wide put a cross-section's vertices far apart). */
    ck_assert_int_eq(avi_mesh_tet_box(64, 2, 2, 64, 2, 2, &m, NULL), 0);
    ck_assert_int_eq(avi_mesh_reorder(&m, NULL, NULL), 0);
    double span = mean_edge_span(&m);
    ck_assert_msg(span < 20.0, "long bar: mean edge span %g", span);
    avi_mesh_free(&m);
}
END_TEST

static Suite *generators_suite(void)
{
    Suite *s = suite_create("generators");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_icosphere_counts_and_topology);
    tcase_add_test(tc, test_icosphere_geometry);
    tcase_add_test(tc, test_icosphere_bad_parameters);
    tcase_add_test(tc, test_disk_counts_and_shape);
    tcase_add_test(tc, test_disk_area_converges);
    tcase_add_test(tc, test_disk_bad_parameters);
    tcase_add_test(tc, test_rect_grid);
    tcase_add_test(tc, test_rect_grid_checkerboard);
    tcase_add_test(tc, test_rect_grid_bad_parameters);
    tcase_add_test(tc, test_tet_box);
    tcase_add_test(tc, test_tet_box_bad_parameters);
    tcase_add_test(tc, test_boundary_single_tet);
    tcase_add_test(tc, test_validate_names_the_culprit);
    tcase_add_test(tc, test_jitter_tet_box);
    tcase_add_test(tc, test_jitter_disk_stays_flat);
    tcase_add_test(tc, test_reorder);
    tcase_add_test(tc, test_tet_ball);
    tcase_add_test(tc, test_tet_ball_graded);
    tcase_add_test(tc, test_tet_ball_shells);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(generators_suite)
