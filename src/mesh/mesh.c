/* Mesh operations: freeing, validation, boundary extraction, jitter,
 * Morton reordering (reading by extension is mesh_read.c's, above the
 * readers that call the validation here). */
#include "avi/mesh.h"
#include "base/error.h"
#include "mesh/mesh_file.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/triangle_intersection.h"
#include "base/vec3.h"

static int out_of_memory(avi_error *err, const char *what)
{
    return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", what);
}

void avi_mesh_free(avi_mesh *mesh)
{
    if (!mesh) return;
    free(mesh->x);
    free(mesh->triangles);
    free(mesh->tets);
    memset(mesh, 0, sizeof *mesh);
}

/* Outward faces of a positively oriented tetrahedron (0, 1, 2, 3). */
static const int tet_face[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

/* ---- Sorting helpers: keys sort first, element index breaks ties so that
 * qsort's instability never shows. ---- */

typedef struct {
    uint64_t key;
    size_t elem;
} key_elem;

static int cmp_key_elem(const void *pa, const void *pb)
{
    const key_elem *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->elem > b->elem) - (a->elem < b->elem);
}

typedef struct {
    uint32_t v[3]; /* sorted */
    size_t slot;   /* tet * 4 + face */
    int odd;       /* the sort was an odd permutation of the outward order */
} face_key;

static int cmp_face_key(const void *pa, const void *pb)
{
    const face_key *a = pa, *b = pb;
    for (int i = 0; i < 3; i++)
        if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
    return (a->slot > b->slot) - (a->slot < b->slot);
}

/* Sorts v; returns 1 when that took an odd number of swaps. */
static int sort3(uint32_t v[3])
{
    uint32_t t;
    int odd = 0;
    if (v[0] > v[1]) { t = v[0]; v[0] = v[1]; v[1] = t; odd ^= 1; }
    if (v[1] > v[2]) { t = v[1]; v[1] = v[2]; v[2] = t; odd ^= 1; }
    if (v[0] > v[1]) { t = v[0]; v[0] = v[1]; v[1] = t; odd ^= 1; }
    return odd;
}

static uint64_t edge_key(uint32_t a, uint32_t b)
{
    return a < b ? ((uint64_t)a << 32) | b : ((uint64_t)b << 32) | a;
}

/* All tet faces, sorted so that copies of one face are adjacent; NULL when
 * out of memory. Assumes indices were checked. */
static face_key *sorted_tet_faces(const avi_mesh *m)
{
    size_t n = m->tet_count * 4;
    face_key *f = malloc((n ? n : 1) * sizeof *f);
    if (!f) return NULL;
    for (size_t t = 0; t < m->tet_count; t++)
        for (int k = 0; k < 4; k++) {
            face_key *e = &f[4 * t + k];
            for (int i = 0; i < 3; i++) e->v[i] = m->tets[t][tet_face[k][i]];
            e->odd = sort3(e->v);
            e->slot = 4 * t + k;
        }
    qsort(f, n, sizeof *f, cmp_face_key);
    return f;
}

static int same_face(const face_key *a, const face_key *b)
{
    return a->v[0] == b->v[0] && a->v[1] == b->v[1] && a->v[2] == b->v[2];
}

/* All triangle edges, sorted by edge then triangle; NULL when out of memory. */
static key_elem *sorted_edges(const avi_mesh *m)
{
    size_t n = m->triangle_count * 3;
    key_elem *e = malloc((n ? n : 1) * sizeof *e);
    if (!e) return NULL;
    for (size_t t = 0; t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            e[3 * t + k].key = edge_key(m->triangles[t][k], m->triangles[t][(k + 1) % 3]);
            e[3 * t + k].elem = t;
        }
    qsort(e, n, sizeof *e, cmp_key_elem);
    return e;
}

/* Index range only: the operations below must not read out of bounds even
 * on meshes that were never validated. */
static int check_indices(const avi_mesh *m, int with_triangles, const char *what, avi_error *err)
{
    size_t n = m->vertex_count;
    if (n > UINT32_MAX) return avi_error_set(err, AVI_ERR_INPUT, "%s: too many vertices (%zu)", what, n);
    if ((n && !m->x) || (with_triangles && m->triangle_count && !m->triangles) || (m->tet_count && !m->tets))
        return avi_error_set(err, AVI_ERR_INPUT, "%s: mesh arrays missing", what);
    for (size_t t = 0; with_triangles && t < m->triangle_count; t++)
        for (int k = 0; k < 3; k++)
            if (m->triangles[t][k] >= n)
                return avi_error_set(err, AVI_ERR_INPUT, "%s: triangle %zu refers to vertex %u, but the mesh has %zu vertices",
                            what, t, m->triangles[t][k], n);
    for (size_t t = 0; t < m->tet_count; t++)
        for (int k = 0; k < 4; k++)
            if (m->tets[t][k] >= n)
                return avi_error_set(err, AVI_ERR_INPUT, "%s: tetrahedron %zu refers to vertex %u, but the mesh has %zu vertices",
                            what, t, m->tets[t][k], n);
    return AVI_OK;
}

/* ---- Validation ---- */

/* "<what>:<line>: " or "<what>: " */
static void where(char *buf, size_t size, const char *what, const uint32_t *lines, size_t elem)
{
    if (lines) snprintf(buf, size, "%s:%u: ", what, lines[elem]);
    else snprintf(buf, size, "%s: ", what);
}

/* No two triangles of the surface tri may intersect
 * (contact/triangle_intersection.h). owner: the tetrahedron of each
 * triangle, for the boundary of tetrahedra (messages name those); NULL for
 * a triangle mesh. lines: per element (triangle or tetrahedron), or NULL. */
static int check_surface(const avi_mesh *m, const uint32_t (*tri)[3], const size_t *owner, size_t n, const char *what,
                         const uint32_t *lines, avi_error *err)
{
    size_t i, j;
    avi_tri_hit h;
    int found = avi_triangles_first_intersection((const double (*)[3])m->x, tri, n, &i, &j, &h);
    if (found < 0) return out_of_memory(err, what);
    if (!found) return AVI_OK;
    char at[400], how[120];
    where(at, sizeof at, what, lines, owner ? owner[i] : i);
    if (h.kind == AVI_TRI_CROSS)
        snprintf(how, sizeof how, "edge (%u, %u) of the %s meets the %s", h.a, h.b, h.first ? "first" : "second",
                 h.first ? "second" : "first");
    else if (h.kind == AVI_TRI_FOLD)
        snprintf(how, sizeof how, "they fold onto each other at their shared edge (%u, %u)", h.a, h.b);
    else
        snprintf(how, sizeof how, "they have the same vertices");
    const uint32_t *a = tri[i], *b = tri[j];
    if (owner)
        return avi_error_set(err, AVI_ERR_INPUT, "%sthe boundary self-intersects: face (%u, %u, %u) of tetrahedron %zu and face "
                             "(%u, %u, %u) of tetrahedron %zu intersect (%s)", at, a[0], a[1], a[2], owner[i], b[0],
                             b[1], b[2], owner[j], how);
    return avi_error_set(err, AVI_ERR_INPUT, "%sthe surface self-intersects: triangles %zu (vertices %u, %u, %u) and %zu "
                         "(vertices %u, %u, %u) intersect (%s)", at, i, a[0], a[1], a[2], j, b[0], b[1], b[2], how);
}

/* Every face of a tetrahedron is on the boundary or shared by exactly two
 * tetrahedra on opposite sides of it, and the boundary does not intersect
 * itself. Two positively oriented tetrahedra lie on opposite sides of their
 * shared face exactly when they list it in opposite orders (outward from
 * each), so the sign test is combinatorial and exact. */
static int check_tet_faces(const avi_mesh *m, const char *what, const uint32_t *tet_lines, avi_error *err)
{
    face_key *f = sorted_tet_faces(m);
    size_t nf = m->tet_count * 4, nb = 0;
    uint32_t (*tri)[3] = malloc(nf * sizeof *tri);
    size_t *owner = malloc(nf * sizeof *owner);
    char at[400];
    int rc = AVI_OK;
    if (!f || !tri || !owner) {
        rc = out_of_memory(err, what);
        goto done;
    }
    for (size_t i = 0; i < nf && rc == AVI_OK;) {
        size_t j = i + 1;
        while (j < nf && same_face(&f[i], &f[j])) j++;
        size_t t0 = f[i].slot / 4, t1 = f[i + (j - i > 1)].slot / 4;
        const uint32_t *v = f[i].v, *a = m->tets[t0], *b = m->tets[t1];
        if (j - i > 2) {
            size_t t = f[i + 2].slot / 4;
            where(at, sizeof at, what, tet_lines, t);
            rc = avi_error_set(err, AVI_ERR_INPUT, "%stetrahedron %zu shares face (%u, %u, %u) with two other tetrahedra",
                               at, t, v[0], v[1], v[2]);
        } else if (j - i == 2 && f[i].odd == f[i + 1].odd) {
            where(at, sizeof at, what, tet_lines, t1);
            rc = avi_error_set(err, AVI_ERR_INPUT, "%stetrahedra %zu (vertices %u, %u, %u, %u) and %zu (vertices %u, %u, %u, "
                               "%u) overlap: both lie on the same side of their shared face (%u, %u, %u)", at, t0, a[0],
                               a[1], a[2], a[3], t1, b[0], b[1], b[2], b[3], v[0], v[1], v[2]);
        } else if (j - i == 1) {
            for (int c = 0; c < 3; c++) tri[nb][c] = a[tet_face[f[i].slot % 4][c]];
            owner[nb++] = t0;
        }
        i = j;
    }
    if (rc == AVI_OK) rc = check_surface(m, (const uint32_t (*)[3])tri, owner, nb, what, tet_lines, err);
done:
    free(f);
    free(tri);
    free(owner);
    return rc;
}

int avi_mesh_validate_lines(const avi_mesh *m, const char *what, const uint32_t *triangle_lines,
                            const uint32_t *tet_lines, avi_error *err)
{
    if (!what) what = "mesh";
    if (!m) return avi_error_set(err, AVI_ERR_INPUT, "%s: no mesh", what);
    const size_t n = m->vertex_count;
    char at[400];
    if (n > UINT32_MAX) return avi_error_set(err, AVI_ERR_INPUT, "%s: too many vertices (%zu)", what, n);
    if ((n && !m->x) || (m->triangle_count && !m->triangles) || (m->tet_count && !m->tets))
        return avi_error_set(err, AVI_ERR_INPUT, "%s: mesh arrays missing", what);
    if (m->triangle_count == 0 && m->tet_count == 0)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: the mesh has no triangles or tetrahedra", what);
    for (size_t v = 0; v < n; v++)
        if (!v3_isfinite(m->x[v]))
            return avi_error_set(err, AVI_ERR_INPUT, "%s: vertex %zu has a non-finite coordinate (%g, %g, %g)", what, v,
                        m->x[v][0], m->x[v][1], m->x[v][2]);

    for (size_t t = 0; t < m->triangle_count; t++) {
        const uint32_t *tv = m->triangles[t];
        where(at, sizeof at, what, triangle_lines, t);
        for (int k = 0; k < 3; k++)
            if (tv[k] >= n)
                return avi_error_set(err, AVI_ERR_INPUT, "%striangle %zu (vertices %u, %u, %u) refers to vertex %u, but the mesh has %zu vertices",
                            at, t, tv[0], tv[1], tv[2], tv[k], n);
        if (tv[0] == tv[1] || tv[1] == tv[2] || tv[0] == tv[2])
            return avi_error_set(err, AVI_ERR_INPUT, "%striangle %zu (vertices %u, %u, %u) repeats a vertex", at, t, tv[0],
                        tv[1], tv[2]);
        double e0[3], e1[3], e2[3], c[3];
        v3_sub(e0, m->x[tv[1]], m->x[tv[0]]);
        v3_sub(e1, m->x[tv[2]], m->x[tv[0]]);
        v3_sub(e2, m->x[tv[2]], m->x[tv[1]]);
        v3_cross(c, e0, e1);
        double l2 = fmax(v3_dot(e0, e0), fmax(v3_dot(e1, e1), v3_dot(e2, e2)));
        /* Twice the area against the longest edge squared: scale-free. */
        if (!(v3_norm(c) > 1e-12 * l2))
            return avi_error_set(err, AVI_ERR_INPUT, "%striangle %zu (vertices %u, %u, %u) has zero area", at, t, tv[0], tv[1],
                        tv[2]);
    }

    for (size_t t = 0; t < m->tet_count; t++) {
        const uint32_t *tv = m->tets[t];
        where(at, sizeof at, what, tet_lines, t);
        for (int k = 0; k < 4; k++)
            if (tv[k] >= n)
                return avi_error_set(err, AVI_ERR_INPUT, "%stetrahedron %zu (vertices %u, %u, %u, %u) refers to vertex %u, but the mesh has %zu vertices",
                            at, t, tv[0], tv[1], tv[2], tv[3], tv[k], n);
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++)
                if (tv[a] == tv[b])
                    return avi_error_set(err, AVI_ERR_INPUT, "%stetrahedron %zu (vertices %u, %u, %u, %u) repeats vertex %u", at,
                                t, tv[0], tv[1], tv[2], tv[3], tv[a]);
        double d[9], lmax2 = 0.0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) d[3 * i + j] = m->x[tv[j + 1]][i] - m->x[tv[0]][i];
        for (int a = 0; a < 4; a++)
            for (int b = a + 1; b < 4; b++) {
                double e[3];
                v3_sub(e, m->x[tv[b]], m->x[tv[a]]);
                lmax2 = fmax(lmax2, v3_dot(e, e));
            }
        double vol6 = m3_det(d);
        if (vol6 < 0.0)
            return avi_error_set(err, AVI_ERR_INPUT, "%stetrahedron %zu (vertices %u, %u, %u, %u) has negative volume %.6g (inverted: swap two vertices)",
                        at, t, tv[0], tv[1], tv[2], tv[3], vol6 / 6.0);
        if (!(vol6 > 1e-12 * lmax2 * sqrt(lmax2)))
            return avi_error_set(err, AVI_ERR_INPUT, "%stetrahedron %zu (vertices %u, %u, %u, %u) has zero volume", at, t, tv[0],
                        tv[1], tv[2], tv[3]);
    }

    if (m->triangle_count) {
        key_elem *e = sorted_edges(m);
        if (!e) return out_of_memory(err, what);
        size_t ne = m->triangle_count * 3;
        for (size_t i = 0; i + 2 < ne; i++)
            if (e[i].key == e[i + 2].key) {
                size_t t = e[i + 2].elem;
                where(at, sizeof at, what, triangle_lines, t);
                uint32_t a = (uint32_t)(e[i].key >> 32), b = (uint32_t)e[i].key;
                size_t t0 = e[i].elem, t1 = e[i + 1].elem;
                free(e);
                return avi_error_set(err, AVI_ERR_INPUT, "%striangle %zu (vertices %u, %u, %u) makes edge (%u, %u) non-manifold: it is also in triangles %zu and %zu",
                            at, t, m->triangles[t][0], m->triangles[t][1], m->triangles[t][2], a, b, t0, t1);
            }
        free(e);
    }
    if (m->tet_count) return check_tet_faces(m, what, tet_lines, err);
    /* A surface given with tetrahedra is theirs (a file's boundary tags):
     * their boundary is checked instead. */
    return check_surface(m, (const uint32_t (*)[3])m->triangles, NULL, m->triangle_count, what, triangle_lines, err);
}

int avi_mesh_validate(const avi_mesh *m, const char *what, avi_error *err)
{
    return avi_mesh_validate_lines(m, what, NULL, NULL, err);
}

/* ---- Boundary ---- */

/* Marks in `single` (4 per tet) the faces not shared with another tet. */
static int mark_boundary_faces(const avi_mesh *m, unsigned char *single, avi_error *err)
{
    size_t nf = m->tet_count * 4;
    face_key *f = sorted_tet_faces(m);
    if (!f) return out_of_memory(err, "boundary");
    memset(single, 0, nf ? nf : 1);
    for (size_t i = 0; i < nf;) {
        size_t j = i + 1;
        while (j < nf && same_face(&f[i], &f[j])) j++;
        if (j - i > 2) {
            uint32_t a = f[i].v[0], b = f[i].v[1], c = f[i].v[2];
            free(f);
            return avi_error_set(err, AVI_ERR_INPUT, "boundary: face (%u, %u, %u) is shared by more than two tetrahedra", a, b, c);
        }
        if (j - i == 1) single[f[i].slot] = 1;
        i = j;
    }
    free(f);
    return AVI_OK;
}

int avi_mesh_boundary_triangles(const avi_mesh *m, uint32_t (**triangles)[3], size_t *count, avi_error *err)
{
    *triangles = NULL;
    *count = 0;
    int rc = check_indices(m, 0, "boundary", err);
    if (rc) return rc;
    size_t nf = m->tet_count * 4;
    unsigned char *single = malloc(nf ? nf : 1);
    if (!single) return out_of_memory(err, "boundary");
    rc = mark_boundary_faces(m, single, err);
    if (rc) {
        free(single);
        return rc;
    }
    size_t nb = 0;
    for (size_t i = 0; i < nf; i++) nb += single[i];
    if (nb == 0) {
        free(single);
        return AVI_OK;
    }
    uint32_t (*tri)[3] = malloc(nb * sizeof *tri);
    if (!tri) {
        free(single);
        return out_of_memory(err, "boundary");
    }
    size_t k = 0;
    for (size_t i = 0; i < nf; i++)
        if (single[i]) {
            for (int c = 0; c < 3; c++) tri[k][c] = m->tets[i / 4][tet_face[i % 4][c]];
            k++;
        }
    free(single);
    *triangles = tri;
    *count = nb;
    return AVI_OK;
}

/* ---- Jitter ---- */

/* splitmix64: tiny, full-period, and plain integer arithmetic, so every
 * machine draws the same numbers. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

/* Uniform in [-1, 1): 53 random bits, exact in a double. */
static double uniform_pm1(uint64_t *state)
{
    return 2.0 * ((double)(splitmix64(state) >> 11) * 0x1.0p-53) - 1.0;
}

int avi_mesh_jitter_interior(avi_mesh *m, double amplitude, uint64_t seed, avi_error *err)
{
    if (!isfinite(amplitude) || amplitude < 0.0)
        return avi_error_set(err, AVI_ERR_INPUT, "jitter: amplitude must be finite and >= 0 (got %g)", amplitude);
    int rc = check_indices(m, 1, "jitter", err);
    if (rc) return rc;
    size_t n = m->vertex_count;
    if (n == 0 || amplitude == 0.0) return AVI_OK;
    unsigned char *fixed = calloc(n, 1);
    if (!fixed) return out_of_memory(err, "jitter");
    double (*normal)[3] = NULL;

    if (m->tet_count) {
        size_t nf = m->tet_count * 4;
        unsigned char *single = malloc(nf);
        if (!single) {
            free(fixed);
            return out_of_memory(err, "jitter");
        }
        rc = mark_boundary_faces(m, single, err);
        if (!rc)
            for (size_t i = 0; i < nf; i++)
                if (single[i])
                    for (int c = 0; c < 3; c++) fixed[m->tets[i / 4][tet_face[i % 4][c]]] = 1;
        free(single);
        if (rc) {
            free(fixed);
            return rc;
        }
    } else {
        key_elem *e = sorted_edges(m);
        normal = calloc(n, sizeof *normal);
        if (!e || !normal) {
            free(e);
            free(normal);
            free(fixed);
            return out_of_memory(err, "jitter");
        }
        size_t ne = m->triangle_count * 3;
        for (size_t i = 0; i < ne;) {
            size_t j = i + 1;
            while (j < ne && e[j].key == e[i].key) j++;
            if (j - i == 1) {
                fixed[(uint32_t)(e[i].key >> 32)] = 1;
                fixed[(uint32_t)e[i].key] = 1;
            }
            i = j;
        }
        free(e);
        /* Area-weighted vertex normals: the tangent plane of the surface. */
        for (size_t t = 0; t < m->triangle_count; t++) {
            const uint32_t *tv = m->triangles[t];
            double a[3], b[3], c[3];
            v3_sub(a, m->x[tv[1]], m->x[tv[0]]);
            v3_sub(b, m->x[tv[2]], m->x[tv[0]]);
            v3_cross(c, a, b);
            for (int k = 0; k < 3; k++) v3_add(normal[tv[k]], normal[tv[k]], c);
        }
    }

    uint64_t state = seed;
    for (size_t v = 0; v < n; v++) {
        /* Draw for every vertex so a vertex's offset depends only on its index. */
        double d[3] = {uniform_pm1(&state), uniform_pm1(&state), uniform_pm1(&state)};
        if (fixed[v]) continue;
        if (normal) {
            double len = v3_norm(normal[v]);
            if (len > 0.0) {
                /* divide, not multiply by 1/len: an axis-aligned normal
                 * becomes exactly a unit vector, so flat meshes stay flat */
                double nv[3] = {normal[v][0] / len, normal[v][1] / len, normal[v][2] / len};
                v3_axpy(d, -v3_dot(d, nv), nv);
            }
            double big = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
            if (big > 1.0) v3_scale(d, d, 1.0 / big);
        }
        v3_axpy(m->x[v], amplitude, d);
    }
    free(normal);
    free(fixed);
    return AVI_OK;
}

/* ---- Morton reordering ---- */

/* Spreads the low 21 bits of v to every third bit. */
static uint64_t spread3(uint64_t v)
{
    v &= 0x1FFFFFu;
    v = (v | v << 32) & 0x1F00000000FFFFu;
    v = (v | v << 16) & 0x1F0000FF0000FFu;
    v = (v | v << 8) & 0x100F00F00F00F00Fu;
    v = (v | v << 4) & 0x10C30C30C30C30C3u;
    v = (v | v << 2) & 0x1249249249249249u;
    return v;
}

static uint64_t quantize(double x, double lo, double hi)
{
    double t = hi > lo ? (x - lo) / (hi - lo) : 0.0;
    if (!(t > 0.0)) t = 0.0; /* also NaN */
    if (t > 1.0) t = 1.0;
    return (uint64_t)(t * 2097151.0);
}

int avi_mesh_reorder(avi_mesh *m, uint32_t *old_to_new, avi_error *err)
{
    int rc = check_indices(m, 1, "reorder", err);
    if (rc) return rc;
    size_t n = m->vertex_count, nt = m->triangle_count, nk = m->tet_count;
    size_t nmax = n > nt ? n : nt;
    if (nk > nmax) nmax = nk;
    if (nmax == 0) return AVI_OK;
    key_elem *keys = malloc(nmax * sizeof *keys);
    uint32_t *map = malloc((n ? n : 1) * sizeof *map);
    double (*x)[3] = malloc((n ? n : 1) * sizeof *x);
    uint32_t (*tri)[3] = malloc((nt ? nt : 1) * sizeof *tri);
    uint32_t (*tet)[4] = malloc((nk ? nk : 1) * sizeof *tet);
    if (!keys || !map || !x || !tri || !tet) {
        free(keys);
        free(map);
        free(x);
        free(tri);
        free(tet);
        return out_of_memory(err, "reorder");
    }

    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (size_t v = 0; v < n; v++)
        for (int i = 0; i < 3; i++)
            if (isfinite(m->x[v][i])) {
                lo[i] = fmin(lo[i], m->x[v][i]);
                hi[i] = fmax(hi[i], m->x[v][i]);
            }
    /* One scale for the three axes (the bounding box's longest side), so
     * that the curve's cells are cubes: per-axis scales would stretch them
     * along a long body and put far-apart elements next to each other. */
    double side = 0.0;
    for (int i = 0; i < 3; i++)
        if (hi[i] - lo[i] > side) side = hi[i] - lo[i];
    for (size_t v = 0; v < n; v++) {
        keys[v].key = spread3(quantize(m->x[v][0], lo[0], lo[0] + side))
                    | spread3(quantize(m->x[v][1], lo[1], lo[1] + side)) << 1
                    | spread3(quantize(m->x[v][2], lo[2], lo[2] + side)) << 2;
        keys[v].elem = v;
    }
    qsort(keys, n, sizeof *keys, cmp_key_elem);
    for (size_t v = 0; v < n; v++) {
        map[keys[v].elem] = (uint32_t)v;
        v3_copy(x[v], m->x[keys[v].elem]);
    }
    free(m->x);
    m->x = x;

    for (size_t t = 0; t < nt; t++) {
        uint32_t lo_v = UINT32_MAX;
        for (int k = 0; k < 3; k++) {
            m->triangles[t][k] = map[m->triangles[t][k]];
            if (m->triangles[t][k] < lo_v) lo_v = m->triangles[t][k];
        }
        keys[t].key = lo_v;
        keys[t].elem = t;
    }
    qsort(keys, nt, sizeof *keys, cmp_key_elem);
    for (size_t t = 0; t < nt; t++) memcpy(tri[t], m->triangles[keys[t].elem], sizeof tri[t]);
    if (nt) {
        free(m->triangles);
        m->triangles = tri;
    } else {
        free(tri);
    }

    for (size_t t = 0; t < nk; t++) {
        uint32_t lo_v = UINT32_MAX;
        for (int k = 0; k < 4; k++) {
            m->tets[t][k] = map[m->tets[t][k]];
            if (m->tets[t][k] < lo_v) lo_v = m->tets[t][k];
        }
        keys[t].key = lo_v;
        keys[t].elem = t;
    }
    qsort(keys, nk, sizeof *keys, cmp_key_elem);
    for (size_t t = 0; t < nk; t++) memcpy(tet[t], m->tets[keys[t].elem], sizeof tet[t]);
    if (nk) {
        free(m->tets);
        m->tets = tet;
    } else {
        free(tet);
    }

    if (old_to_new) memcpy(old_to_new, map, n * sizeof *map);
    free(map);
    free(keys);
    return AVI_OK;
}

/* ---- Unused vertices ---- */

int avi_mesh_drop_unused(avi_mesh *m, uint32_t *old_to_new, size_t *dropped, avi_error *err)
{
    int rc = check_indices(m, 1, "unused vertices", err);
    if (rc) return rc;
    size_t n = m->vertex_count;
    *dropped = 0;
    for (size_t v = 0; v < n; v++) old_to_new[v] = UINT32_MAX;
    if (m->tet_count > 0) {
        for (size_t t = 0; t < m->tet_count; t++)
            for (int k = 0; k < 4; k++) old_to_new[m->tets[t][k]] = 0;
    } else {
        for (size_t t = 0; t < m->triangle_count; t++)
            for (int k = 0; k < 3; k++) old_to_new[m->triangles[t][k]] = 0;
    }
    size_t kept = 0;
    for (size_t v = 0; v < n; v++)
        if (old_to_new[v] == 0) {
            old_to_new[v] = (uint32_t)kept;
            if (kept != v) memcpy(m->x[kept], m->x[v], sizeof m->x[v]);
            kept++;
        }
    *dropped = n - kept;
    if (kept == n) return AVI_OK;
    m->vertex_count = kept;
    for (size_t t = 0; t < m->tet_count; t++)
        for (int k = 0; k < 4; k++) m->tets[t][k] = old_to_new[m->tets[t][k]];
    size_t nt = 0;
    for (size_t t = 0; t < m->triangle_count; t++) {
        uint32_t tri[3];
        int all = 1;
        for (int k = 0; k < 3; k++) all &= (tri[k] = old_to_new[m->triangles[t][k]]) != UINT32_MAX;
        if (all) memcpy(m->triangles[nt++], tri, sizeof tri);
    }
    m->triangle_count = nt;
    return AVI_OK;
}
