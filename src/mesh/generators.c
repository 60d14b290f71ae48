/* Mesh generators: icosphere, disk, rectangle grid and tetrahedral box. */
#include "avi/mesh.h"
#include "base/error.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/vec3.h"

static int check_length(const char *gen, const char *name, double v, avi_error *err)
{
    if (isfinite(v) && v > 0.0) return AVI_OK;
    return avi_error_set(err, AVI_ERR_INPUT, "%s: %s must be finite and > 0 (got %g)", gen, name, v);
}

static int check_count(const char *gen, const char *name, int v, int max, avi_error *err)
{
    if (v >= 1 && v <= max) return AVI_OK;
    return avi_error_set(err, AVI_ERR_INPUT, "%s: %s must be between 1 and %d (got %d)", gen, name, max, v);
}

/* Allocates the arrays of `out`; frees everything on failure. */
static int alloc_mesh(avi_mesh *out, size_t nv, size_t nt, size_t nk, const char *gen, avi_error *err)
{
    out->x = malloc((nv ? nv : 1) * sizeof *out->x);
    out->triangles = nt ? malloc(nt * sizeof *out->triangles) : NULL;
    out->tets = nk ? malloc(nk * sizeof *out->tets) : NULL;
    if (!out->x || (nt && !out->triangles) || (nk && !out->tets)) {
        avi_mesh_free(out);
        return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", gen);
    }
    out->vertex_count = nv;
    out->triangle_count = nt;
    out->tet_count = nk;
    return AVI_OK;
}

/* ---- Icosphere ---- */

typedef struct {
    uint64_t key;  /* (min vertex << 32) | max vertex */
    size_t slot;   /* triangle * 3 + edge */
} half_edge;

static int cmp_half_edge(const void *pa, const void *pb)
{
    const half_edge *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->slot > b->slot) - (a->slot < b->slot);
}

/* The 12 vertices of an icosahedron (edge length 2) and its 20 faces, found
 * as the triples of mutually adjacent vertices and turned outward. */
static void icosahedron(double x[12][3], uint32_t tri[20][3])
{
    const double p = (1.0 + sqrt(5.0)) / 2.0;
    int n = 0;
    for (int axis = 0; axis < 3; axis++)
        for (int s1 = -1; s1 <= 1; s1 += 2)
            for (int s2 = -1; s2 <= 1; s2 += 2) {
                /* cyclic permutations of (0, +-1, +-p) */
                x[n][axis] = 0.0;
                x[n][(axis + 1) % 3] = s1;
                x[n][(axis + 2) % 3] = s2 * p;
                n++;
            }
    int f = 0;
    for (uint32_t i = 0; i < 12; i++)
        for (uint32_t j = i + 1; j < 12; j++)
            for (uint32_t k = j + 1; k < 12; k++) {
                double a[3], b[3], c[3];
                v3_sub(a, x[j], x[i]);
                v3_sub(b, x[k], x[i]);
                v3_sub(c, x[k], x[j]);
                /* edge length 2; the next distance is 2 p */
                if (fabs(v3_dot(a, a) - 4.0) > 1e-9 || fabs(v3_dot(b, b) - 4.0) > 1e-9 || fabs(v3_dot(c, c) - 4.0) > 1e-9)
                    continue;
                double nrm[3];
                v3_cross(nrm, a, b);
                int out = v3_dot(nrm, x[i]) > 0.0;
                tri[f][0] = i;
                tri[f][1] = out ? j : k;
                tri[f][2] = out ? k : j;
                f++;
            }
}

int avi_mesh_icosphere(double radius, int subdivisions, avi_mesh *out, avi_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_length("icosphere", "radius", radius, err);
    if (rc) return rc;
    if (subdivisions < 0 || subdivisions > 10)
        return avi_error_set(err, AVI_ERR_INPUT, "icosphere: subdivisions must be between 0 and 10 (got %d)", subdivisions);

    size_t fin_v = 10 * ((size_t)1 << (2 * subdivisions)) + 2;
    size_t fin_f = 20 * ((size_t)1 << (2 * subdivisions));
    rc = alloc_mesh(out, fin_v, fin_f, 0, "icosphere", err);
    if (rc) return rc;
    uint32_t (*next)[3] = subdivisions ? malloc(fin_f * sizeof *next) : NULL;
    half_edge *he = subdivisions ? malloc(3 * (fin_f / 4) * sizeof *he) : NULL;
    uint32_t *mid = subdivisions ? malloc(3 * (fin_f / 4) * sizeof *mid) : NULL;
    if (subdivisions && (!next || !he || !mid)) {
        free(next);
        free(he);
        free(mid);
        avi_mesh_free(out);
        return avi_error_set(err, AVI_ERR_RUN, "icosphere: out of memory");
    }

    double (*x)[3] = out->x;
    uint32_t (*tri)[3] = out->triangles;
    double x0[12][3];
    uint32_t t0[20][3];
    icosahedron(x0, t0);
    for (int v = 0; v < 12; v++) v3_scale(x[v], x0[v], 1.0 / v3_norm(x0[v]));
    memcpy(tri, t0, sizeof t0);
    size_t nv = 12, nf = 20;

    for (int level = 0; level < subdivisions; level++) {
        /* One midpoint per edge: sorting the half-edges puts the two
         * sides of an edge next to each other. */
        for (size_t t = 0; t < nf; t++)
            for (int k = 0; k < 3; k++) {
                uint32_t a = tri[t][k], b = tri[t][(k + 1) % 3];
                he[3 * t + k].key = a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a;
                he[3 * t + k].slot = 3 * t + k;
            }
        qsort(he, 3 * nf, sizeof *he, cmp_half_edge);
        for (size_t i = 0; i < 3 * nf; i++) {
            if (i == 0 || he[i].key != he[i - 1].key) {
                uint32_t a = (uint32_t)(he[i].key >> 32), b = (uint32_t)he[i].key;
                double m[3];
                v3_add(m, x[a], x[b]);
                v3_scale(x[nv], m, 1.0 / v3_norm(m));
                nv++;
            }
            mid[he[i].slot] = (uint32_t)(nv - 1);
        }
        for (size_t t = 0; t < nf; t++) {
            uint32_t a = tri[t][0], b = tri[t][1], c = tri[t][2];
            uint32_t ab = mid[3 * t], bc = mid[3 * t + 1], ca = mid[3 * t + 2];
            uint32_t *q = next[4 * t];
            q[0] = a;  q[1] = ab; q[2] = ca;
            q += 3;
            q[0] = ab; q[1] = b;  q[2] = bc;
            q += 3;
            q[0] = ca; q[1] = bc; q[2] = c;
            q += 3;
            q[0] = ab; q[1] = bc; q[2] = ca;
        }
        nf *= 4;
        memcpy(tri, next, nf * sizeof *tri);
    }
    free(next);
    free(he);
    free(mid);
    for (size_t v = 0; v < nv; v++) v3_scale(x[v], x[v], radius);
    return AVI_OK;
}

/* ---- Disk ---- */

int avi_mesh_disk(double radius, int rings, avi_mesh *out, avi_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_length("disk", "radius", radius, err);
    if (rc) return rc;
    /* 1 + 3 r (r + 1) vertices must fit 32-bit indices. */
    rc = check_count("disk", "rings", rings, 30000, err);
    if (rc) return rc;
    size_t r = (size_t)rings;
    rc = alloc_mesh(out, 1 + 3 * r * (r + 1), 6 * r * r, 0, "disk", err);
    if (rc) return rc;

    double (*x)[3] = out->x;
    x[0][0] = x[0][1] = x[0][2] = 0.0;
    for (size_t i = 1; i <= r; i++) {
        double ri = i == r ? radius : radius * ((double)i / (double)r);
        size_t first = 1 + 3 * i * (i - 1);
        for (size_t j = 0; j < 6 * i; j++) {
            double a = 2.0 * M_PI * ((double)j / (double)(6 * i));
            x[first + j][0] = ri * cos(a);
            x[first + j][1] = ri * sin(a);
            x[first + j][2] = 0.0;
        }
    }

    /* Between rings i-1 and i, each of the 6 sectors has i + 1 outer and i
     * inner vertices (corners shared with the next sector), joined by i
     * triangles pointing in and i - 1 pointing out. */
    uint32_t (*t)[3] = out->triangles;
    size_t nt = 0;
    for (size_t i = 1; i <= r; i++) {
        size_t outer0 = 1 + 3 * i * (i - 1), nout = 6 * i;
        size_t inner0 = i == 1 ? 0 : 1 + 3 * (i - 1) * (i - 2), nin = i == 1 ? 1 : 6 * (i - 1);
        for (size_t s = 0; s < 6; s++)
            for (size_t k = 0; k < i; k++) {
                uint32_t o0 = (uint32_t)(outer0 + (s * i + k) % nout);
                uint32_t o1 = (uint32_t)(outer0 + (s * i + k + 1) % nout);
                uint32_t i0 = (uint32_t)(inner0 + (s * (i - 1) + k) % nin);
                uint32_t i1 = (uint32_t)(inner0 + (s * (i - 1) + k + 1) % nin);
                t[nt][0] = i0; t[nt][1] = o0; t[nt][2] = o1;
                nt++;
                if (k + 1 < i) {
                    t[nt][0] = i0; t[nt][1] = o1; t[nt][2] = i1;
                    nt++;
                }
            }
    }
    return AVI_OK;
}

/* ---- Rectangle grid ---- */

int avi_mesh_rect_grid(double lx, double ly, int nx, int ny, avi_mesh *out, avi_error *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    if ((rc = check_length("rect_grid", "lx", lx, err)) || (rc = check_length("rect_grid", "ly", ly, err)) ||
        (rc = check_count("rect_grid", "nx", nx, 1 << 30, err)) || (rc = check_count("rect_grid", "ny", ny, 1 << 30, err)))
        return rc;
    size_t sx = (size_t)nx + 1, sy = (size_t)ny + 1;
    if (sx * sy > UINT32_MAX)
        return avi_error_set(err, AVI_ERR_INPUT, "rect_grid: nx, ny too large (%d x %d cells exceed 32-bit vertex indices)", nx, ny);
    rc = alloc_mesh(out, sx * sy, 2 * (size_t)nx * (size_t)ny, 0, "rect_grid", err);
    if (rc) return rc;
    for (size_t j = 0; j < sy; j++)
        for (size_t i = 0; i < sx; i++) {
            /* i / nx first, so the last column is exactly lx */
            double *p = out->x[j * sx + i];
            p[0] = lx * ((double)i / nx);
            p[1] = ly * ((double)j / ny);
            p[2] = 0.0;
        }
    uint32_t (*t)[3] = out->triangles;
    size_t nt = 0;
    for (size_t j = 0; j < (size_t)ny; j++)
        for (size_t i = 0; i < (size_t)nx; i++) {
            uint32_t v00 = (uint32_t)(j * sx + i), v10 = v00 + 1;
            uint32_t v01 = (uint32_t)(v00 + sx), v11 = v01 + 1;
            if ((i + j) % 2 == 0) {
                t[nt][0] = v00; t[nt][1] = v10; t[nt][2] = v11; nt++;
                t[nt][0] = v00; t[nt][1] = v11; t[nt][2] = v01; nt++;
            } else {
                t[nt][0] = v00; t[nt][1] = v10; t[nt][2] = v01; nt++;
                t[nt][0] = v10; t[nt][1] = v11; t[nt][2] = v01; nt++;
            }
        }
    return AVI_OK;
}

/* ---- Tetrahedral box ---- */

int avi_mesh_tet_box(double lx, double ly, double lz, int nx, int ny, int nz, avi_mesh *out, avi_error *err)
{
    memset(out, 0, sizeof *out);
    int rc;
    if ((rc = check_length("tet_box", "lx", lx, err)) || (rc = check_length("tet_box", "ly", ly, err)) ||
        (rc = check_length("tet_box", "lz", lz, err)) || (rc = check_count("tet_box", "nx", nx, 1 << 30, err)) ||
        (rc = check_count("tet_box", "ny", ny, 1 << 30, err)) || (rc = check_count("tet_box", "nz", nz, 1 << 30, err)))
        return rc;
    uint64_t sx = (uint64_t)nx + 1, sy = (uint64_t)ny + 1, sz = (uint64_t)nz + 1;
    if (sx * sy > UINT32_MAX || sx * sy * sz > UINT32_MAX)
        return avi_error_set(err, AVI_ERR_INPUT, "tet_box: nx, ny, nz too large (%d x %d x %d cells exceed 32-bit vertex indices)",
                    nx, ny, nz);
    size_t ncell = (size_t)nx * (size_t)ny * (size_t)nz;
    rc = alloc_mesh(out, (size_t)(sx * sy * sz), 0, 6 * ncell, "tet_box", err);
    if (rc) return rc;
    for (size_t k = 0; k < sz; k++)
        for (size_t j = 0; j < sy; j++)
            for (size_t i = 0; i < sx; i++) {
                double *p = out->x[(k * sy + j) * sx + i];
                p[0] = lx * ((double)i / nx);
                p[1] = ly * ((double)j / ny);
                p[2] = lz * ((double)k / nz);
            }

    /* Kuhn split: for each ordering (a, b, c) of the axes, the path
     * (0,0,0) -> +e_a -> +e_b -> +e_c = (1,1,1). det = sign of the ordering,
     * so odd orderings list their middle two vertices swapped. */
    static const int order[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    const size_t step[3] = {1, (size_t)sx, (size_t)(sx * sy)};
    uint32_t (*t)[4] = out->tets;
    size_t nk = 0;
    for (size_t k = 0; k < (size_t)nz; k++)
        for (size_t j = 0; j < (size_t)ny; j++)
            for (size_t i = 0; i < (size_t)nx; i++) {
                size_t base = (k * sy + j) * sx + i;
                for (int o = 0; o < 6; o++) {
                    size_t p1 = base + step[order[o][0]];
                    size_t p2 = p1 + step[order[o][1]];
                    size_t p3 = p2 + step[order[o][2]];
                    int even = o < 3;
                    t[nk][0] = (uint32_t)base;
                    t[nk][1] = (uint32_t)(even ? p1 : p2);
                    t[nk][2] = (uint32_t)(even ? p2 : p1);
                    t[nk][3] = (uint32_t)p3;
                    nk++;
                }
            }

    rc = avi_mesh_boundary_triangles(out, &out->triangles, &out->triangle_count, err);
    if (rc) avi_mesh_free(out);
    return rc;
}

/* ---- Tetrahedral ball ---- */

int avi_mesh_tet_ball(double radius, int n, avi_mesh *out, avi_error *err)
{
    return avi_mesh_tet_ball_graded(radius, n, 0.0, out, err);
}

/* The Moebius self-map of the unit ball that sends a = (0, 0, t) to the
 * origin (Ahlfors, "Moebius transformations in several dimensions", 1981,
 * ch. II; Rudin, "Function theory in the unit ball of C^n", 1980, 2.2.2):
 *   phi_a(x) = ((1 - |a|^2)(x - a) - |x - a|^2 a) / (1 - 2 x.a + |x|^2 |a|^2).
 * Conformal, with scale factor (1 - |a|^2) / (1 - 2 x.a + |x|^2 |a|^2):
 * (1 - t) / (1 + t) at the south pole (0, 0, -1), (1 + t) / (1 - t) at the
 * north pole; the sphere onto itself, the z axis onto itself. */
static void moebius_toward_south(double t, double x[3])
{
    const double a[3] = {0.0, 0.0, t};
    double d[3] = {x[0] - a[0], x[1] - a[1], x[2] - a[2]};
    double xa = v3_dot(x, a), x2 = v3_dot(x, x), a2 = t * t, d2 = v3_dot(d, d);
    double den = 1.0 - 2.0 * xa + x2 * a2;
    for (int c = 0; c < 3; c++) x[c] = ((1.0 - a2) * d[c] - d2 * a[c]) / den;
}

/* Validates a generated ball; a cell turned over is an input error naming
 * n and the grading. */
static int ball_check(avi_mesh *out, const char *who, int n, double grading, const char *where, avi_error *err)
{
    avi_error bad;
    if (!avi_mesh_validate(out, "mesh", &bad)) return AVI_OK;
    avi_mesh_free(out);
    return avi_error_set(err, AVI_ERR_INPUT, "%s: n = %d, grading %g turns a cell %sover (%s); choose another n or grading",
                         who, n, grading, where, bad.message);
}

/* Checks a ball's radius, n and grading, then fills out with the tet_box
 * of n^3 cells on [0, 2]^3. */
static int ball_box(const char *who, double radius, int n, double grading, avi_mesh *out, avi_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = check_length(who, "radius", radius, err);
    if (rc) return rc;
    if ((rc = check_count(who, "n", n, 1024, err))) return rc;
    if (!(grading >= 0.0 && grading < 1.0))
        return avi_error_set(err, AVI_ERR_INPUT, "%s: grading must be in [0, 1) (got %g)", who, grading);
    /* The smallest cell, h = 2 radius / n shrunk by the grading at the pole
     * (and by up to 1/2 more in the shells' corners), must have a volume
     * (h^3 / 6) that is a normal double, and the ball's own a finite one:
     * else the cells validate as flat and the message would blame n or
     * the grading. */
    double h = 2.0 * radius / n * (1.0 - grading) / (1.0 + grading) * 0.5;
    double v_small = h * h * h / 6.0, v_ball = 4.0 * radius * radius * radius;
    if (!(v_small >= DBL_MIN) || !isfinite(v_ball))
        return avi_error_set(err, AVI_ERR_INPUT,
                             "%s: radius %g is out of range for n = %d, grading %g: cell volumes of about %g m^3 "
                             "(ball %g m^3) are not normal doubles; give the radius in metres",
                             who, radius, n, grading, v_small, v_ball);
    return avi_mesh_tet_box(2.0, 2.0, 2.0, n, n, n, out, err);
}

int avi_mesh_tet_ball_graded(double radius, int n, double grading, avi_mesh *out, avi_error *err)
{
    int rc = ball_box("tet_ball", radius, n, grading, out, err);
    if (rc) return rc;
    /* The cube [-1, 1]^3 onto the unit ball, x' = x sqrt(1 - y^2/2 - z^2/2
     * + y^2 z^2/3) and cyclically: smooth inside, each cube face onto a
     * sixth of the sphere. */
    for (size_t i = 0; i < out->vertex_count; i++) {
        double *p = out->x[i], q[3], s[3];
        for (int c = 0; c < 3; c++) q[c] = p[c] - 1.0;
        for (int c = 0; c < 3; c++) {
            double a2 = q[(c + 1) % 3] * q[(c + 1) % 3], b2 = q[(c + 2) % 3] * q[(c + 2) % 3];
            s[c] = sqrt(1.0 - 0.5 * a2 - 0.5 * b2 + a2 * b2 / 3.0);
        }
        if (grading == 0.0) {
            for (int c = 0; c < 3; c++) p[c] = radius * q[c] * s[c];
            continue;
        }
        for (int c = 0; c < 3; c++) p[c] = q[c] * s[c];
        moebius_toward_south(grading, p);
        for (int c = 0; c < 3; c++) p[c] *= radius;
    }
    /* The mapped cube's thin cells at the cube's corners turn over from
     * n = 32 on, and with some gradings sooner (the Moebius map is
     * conformal only to first order in the cell: n = 24, grading 0.5). */
    return ball_check(out, "tet_ball", n, grading, "at the cube's corners ", err);
}

/* Re-splits the tet_box of n^3 cells so that every cell's Kuhn diagonal
 * runs from its corner nearest the centre to the farthest (the split
 * mirrored into each octant). The shell map below flattens the shells'
 * edges and corners to the sphere; a tetrahedron holding such a flattened
 * angle would be flat, and with the diagonal pointing outward none does.
 * Conforming: a cell's split of a face depends only on the face's two
 * tangential indices. Boundary triangles recomputed. */
static int kuhn_from_centre(avi_mesh *out, int n, avi_error *err)
{
    static const int order[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    const int64_t s1 = n + 1, step[3] = {1, s1, s1 * s1};
    size_t nk = 0;
    for (int64_t k = 0; k < n; k++)
        for (int64_t j = 0; j < n; j++)
            for (int64_t i = 0; i < n; i++) {
                const int64_t idx[3] = {i, j, k};
                int64_t near = 0, d[3];
                int sign = 1;
                for (int c = 0; c < 3; c++) {
                    int low = 2 * idx[c] + 1 < n; /* the cell's centre below the middle */
                    d[c] = low ? -step[c] : step[c];
                    near += (idx[c] + (low ? 1 : 0)) * step[c];
                    sign *= low ? -1 : 1;
                }
                for (int o = 0; o < 6; o++) {
                    int64_t p1 = near + d[order[o][0]], p2 = p1 + d[order[o][1]], p3 = p2 + d[order[o][2]];
                    int even = (o < 3) == (sign > 0);
                    uint32_t *t = out->tets[nk++];
                    t[0] = (uint32_t)near;
                    t[1] = (uint32_t)(even ? p1 : p2);
                    t[2] = (uint32_t)(even ? p2 : p1);
                    t[3] = (uint32_t)p3;
                }
            }
    free(out->triangles);
    out->triangles = NULL;
    out->triangle_count = 0;
    int rc = avi_mesh_boundary_triangles(out, &out->triangles, &out->triangle_count, err);
    if (rc) avi_mesh_free(out);
    return rc;
}

int avi_mesh_tet_ball_shells(double radius, int n, double grading, avi_mesh *out, avi_error *err)
{
    int rc = ball_box("tet_ball_shells", radius, n, grading, out, err);
    if (rc || (rc = kuhn_from_centre(out, n, err))) return rc;
    /* Concentric shells: x' = x |x|_inf / |x|_2 takes the cube's surface
     * |x|_inf = s onto the sphere of radius s. Homogeneous of degree 1 and
     * Lipschitz with a Lipschitz inverse (its Jacobian and the inverse's
     * bounded independently of n and of the distance from the centre), so
     * cells keep their shapes within fixed bounds as n grows; its creases
     * on the cube's diagonal planes are harmless for linear tetrahedra,
     * which see only the vertices, once the split holds no flattened
     * angle (kuhn_from_centre). */
    for (size_t i = 0; i < out->vertex_count; i++) {
        double *p = out->x[i], q[3], inf = 0.0;
        for (int c = 0; c < 3; c++) q[c] = p[c] - 1.0, inf = fmax(inf, fabs(q[c]));
        double l2 = sqrt(v3_dot(q, q)), f = l2 > 0.0 ? inf / l2 : 0.0;
        for (int c = 0; c < 3; c++) p[c] = q[c] * f;
        if (grading > 0.0) moebius_toward_south(grading, p);
        for (int c = 0; c < 3; c++) p[c] *= radius;
    }
    return ball_check(out, "tet_ball_shells", n, grading, "", err);
}
