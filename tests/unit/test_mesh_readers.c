/* Mesh file readers: sample files read back exactly, every malformed file in
 * tests/data/meshes is rejected with its name and line, and truncated or
 * mangled copies of the samples never crash the readers. Run from the
 * repository root. */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "avi/mesh.h"
#include "check_main.h"

#define SAMPLES "data/meshes/"
#define BAD "tests/data/meshes/"

static void read_ok(const char *path, avi_mesh *m)
{
    avi_error err = {0};
    int rc = avi_mesh_read(path, m, &err);
    ck_assert_msg(rc == 0, "%s: %s", path, err.message);
    ck_assert_int_eq(avi_mesh_validate(m, path, &err), 0);
}

static void assert_x(const avi_mesh *m, size_t v, double x, double y, double z)
{
    ck_assert_uint_lt(v, m->vertex_count);
    ck_assert_msg(m->x[v][0] == x && m->x[v][1] == y && m->x[v][2] == z, "vertex %zu is (%g, %g, %g)", v, m->x[v][0],
                  m->x[v][1], m->x[v][2]);
}

static void assert_tri(const avi_mesh *m, size_t t, uint32_t a, uint32_t b, uint32_t c)
{
    ck_assert_uint_lt(t, m->triangle_count);
    ck_assert_msg(m->triangles[t][0] == a && m->triangles[t][1] == b && m->triangles[t][2] == c,
                  "triangle %zu is (%u, %u, %u)", t, m->triangles[t][0], m->triangles[t][1], m->triangles[t][2]);
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

static double enclosed_volume(const avi_mesh *m)
{
    double vol = 0.0;
    for (size_t t = 0; t < m->triangle_count; t++) {
        const double *a = m->x[m->triangles[t][0]], *b = m->x[m->triangles[t][1]], *c = m->x[m->triangles[t][2]];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) + a[2] * (b[0] * c[1] - b[1] * c[0])) / 6.0;
    }
    return vol;
}

/* Triangle as a rotation-independent key, orientation kept. */
static uint64_t tri_key(const uint32_t t[3])
{
    int k = t[0] < t[1] ? (t[0] < t[2] ? 0 : 2) : (t[1] < t[2] ? 1 : 2);
    return (uint64_t)t[k] << 42 | (uint64_t)t[(k + 1) % 3] << 21 | t[(k + 2) % 3];
}

static int cmp_u64(const void *pa, const void *pb)
{
    uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;
    return (a > b) - (a < b);
}

/* The file's triangles are exactly the outward boundary of its tets. */
static void assert_triangles_are_boundary(const avi_mesh *m)
{
    uint32_t (*b)[3];
    size_t nb;
    ck_assert_int_eq(avi_mesh_boundary_triangles(m, &b, &nb, NULL), 0);
    ck_assert_uint_eq(nb, m->triangle_count);
    uint64_t *k1 = malloc(nb * sizeof *k1), *k2 = malloc(nb * sizeof *k2);
    for (size_t t = 0; t < nb; t++) {
        k1[t] = tri_key(b[t]);
        k2[t] = tri_key(m->triangles[t]);
    }
    qsort(k1, nb, sizeof *k1, cmp_u64);
    qsort(k2, nb, sizeof *k2, cmp_u64);
    ck_assert_int_eq(memcmp(k1, k2, nb * sizeof *k1), 0);
    free(k1);
    free(k2);
    free(b);
}

/* ---- samples ---- */

START_TEST(test_msh22_tetrahedron)
{
    avi_mesh m;
    read_ok(SAMPLES "tetrahedron_v22.msh", &m);
    ck_assert_uint_eq(m.vertex_count, 4);
    ck_assert_uint_eq(m.triangle_count, 4);
    ck_assert_uint_eq(m.tet_count, 1);
    /* tags 10, 20, 30, 40 become 0..3; the point and line elements are skipped */
    assert_x(&m, 0, 0, 0, 0);
    assert_x(&m, 1, 1, 0, 0);
    assert_x(&m, 2, 0, 1, 0);
    assert_x(&m, 3, 0, 0, 1);
    ck_assert(m.tets[0][0] == 0 && m.tets[0][1] == 1 && m.tets[0][2] == 2 && m.tets[0][3] == 3);
    assert_tri(&m, 0, 1, 2, 3);
    assert_tri(&m, 3, 0, 2, 1);
    ck_assert_double_eq_tol(tet_volume(&m, 0), 1.0 / 6.0, 1e-15);
    assert_triangles_are_boundary(&m);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_msh41_unit_cube)
{
    avi_mesh m;
    read_ok(SAMPLES "unit_cube_v41.msh", &m);
    ck_assert_uint_eq(m.vertex_count, 8);
    ck_assert_uint_eq(m.triangle_count, 12);
    ck_assert_uint_eq(m.tet_count, 6);
    assert_x(&m, 0, 0, 0, 0);
    assert_x(&m, 3, 1, 1, 0);
    assert_x(&m, 4, 0, 0, 1); /* from the parametric block: "x y z u" */
    assert_x(&m, 7, 1, 1, 1);
    double vol = 0.0;
    for (size_t t = 0; t < m.tet_count; t++) {
        ck_assert(tet_volume(&m, t) > 0.0);
        vol += tet_volume(&m, t);
    }
    ck_assert_double_eq_tol(vol, 1.0, 1e-15);
    ck_assert_double_eq_tol(enclosed_volume(&m), 1.0, 1e-15);
    assert_triangles_are_boundary(&m);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_msh41_sparse_tags_crlf)
{
    avi_mesh m;
    read_ok(SAMPLES "square_v41.msh", &m);
    ck_assert_uint_eq(m.vertex_count, 4);
    ck_assert_uint_eq(m.triangle_count, 2);
    ck_assert_uint_eq(m.tet_count, 0);
    assert_x(&m, 2, 1, 1, 0);
    assert_tri(&m, 0, 0, 1, 2);
    assert_tri(&m, 1, 0, 2, 3);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_obj_square)
{
    avi_mesh m;
    read_ok(SAMPLES "square.obj", &m);
    ck_assert_uint_eq(m.vertex_count, 4);
    ck_assert_uint_eq(m.triangle_count, 2);
    ck_assert_uint_eq(m.tet_count, 0);
    ck_assert_ptr_null(m.tets);
    assert_x(&m, 3, 0, 1, 0);
    assert_tri(&m, 0, 0, 1, 2);
    assert_tri(&m, 1, 0, 2, 3);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_obj_tetrahedron_relative_indices)
{
    avi_mesh m;
    read_ok(SAMPLES "tetrahedron_surface.obj", &m);
    ck_assert_uint_eq(m.vertex_count, 4);
    ck_assert_uint_eq(m.triangle_count, 4);
    assert_x(&m, 3, 0, 0, 1); /* the w component is dropped */
    assert_tri(&m, 0, 1, 2, 3);
    assert_tri(&m, 1, 0, 3, 2);
    assert_tri(&m, 2, 0, 1, 3);
    assert_tri(&m, 3, 0, 2, 1);
    ck_assert_double_eq_tol(enclosed_volume(&m), 1.0 / 6.0, 1e-15);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_obj_polygon_fan)
{
    avi_mesh m;
    read_ok(SAMPLES "hexagon.obj", &m);
    ck_assert_uint_eq(m.vertex_count, 6);
    ck_assert_uint_eq(m.triangle_count, 4);
    for (uint32_t t = 0; t < 4; t++) assert_tri(&m, t, 0, t + 1, t + 2);
    double area = 0.0;
    for (size_t t = 0; t < m.triangle_count; t++) {
        const double *a = m.x[m.triangles[t][0]], *b = m.x[m.triangles[t][1]], *c = m.x[m.triangles[t][2]];
        area += 0.5 * ((b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0]));
    }
    ck_assert_double_eq_tol(area, 1.5 * sqrt(3.0), 1e-12);
    avi_mesh_free(&m);
}
END_TEST

START_TEST(test_read_dispatch)
{
    avi_mesh m;
    avi_error err = {0};
    ck_assert_int_eq(avi_mesh_read("scene/body.stl", &m, &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "scene/body.stl"));
    ck_assert_ptr_nonnull(strstr(err.message, ".msh or .obj"));
    ck_assert_int_eq(avi_mesh_read("dir.msh/noext", &m, &err), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_mesh_read("", &m, &err), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_mesh_read(BAD "no_such_file.msh", &m, &err), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, BAD "no_such_file.msh: cannot open"));
    ck_assert_int_eq(avi_mesh_read(BAD "no_such_file.obj", &m, &err), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_mesh_read_msh(BAD, &m, &err), AVI_ERR_INPUT); /* a directory */
    ck_assert_ptr_nonnull(strstr(err.message, "not a regular file (a directory)"));
    ck_assert_ptr_null(m.x);
    /* the format readers directly, whatever the extension */
    ck_assert_int_eq(avi_mesh_read_msh(SAMPLES "tetrahedron_v22.msh", &m, &err), 0);
    avi_mesh_free(&m);
    ck_assert_int_eq(avi_mesh_read_obj(SAMPLES "square.obj", &m, &err), 0);
    avi_mesh_free(&m);
    ck_assert_int_eq(avi_mesh_read_obj(SAMPLES "square_v41.msh", &m, &err), AVI_ERR_INPUT);
}
END_TEST

/* A FIFO is refused without waiting for a writer (the alarm ends a reader
 * that blocks). */
START_TEST(test_fifo_refused)
{
    avi_mesh m;
    avi_error err = {0};
    char dir[] = "/tmp/avi_mesh_fifo_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char path[64];
    snprintf(path, sizeof path, "%s/mesh.msh", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    alarm(20);
    int rc = avi_mesh_read_msh(path, &m, &err);
    alarm(0);
    unlink(path);
    rmdir(dir);
    ck_assert_int_eq(rc, AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "mesh.msh: cannot open: not a regular file (a FIFO)") != NULL, "%s", err.message);
}
END_TEST

/* ---- binary 4.1 ---- */

typedef struct {
    unsigned char *b;
    size_t n, cap;
    int swap, sz; /* other byte order; size_t width */
} bin_out;

static void put(bin_out *o, const void *v, size_t n, int raw)
{
    if (o->n + n > o->cap) {
        o->cap = 2 * (o->n + n);
        o->b = realloc(o->b, o->cap);
        ck_assert_ptr_nonnull(o->b);
    }
    for (size_t i = 0; i < n; i++) o->b[o->n + i] = ((const unsigned char *)v)[o->swap && !raw ? n - 1 - i : i];
    o->n += n;
}
static void put_text(bin_out *o, const char *s) { put(o, s, strlen(s), 1); }
static void put_int(bin_out *o, int32_t v) { put(o, &v, 4, 0); }
static void put_size(bin_out *o, uint64_t v)
{
    uint32_t u = (uint32_t)v;
    if (o->sz == 8) put(o, &v, 8, 0);
    else put(o, &u, 4, 0);
}

/* A mesh as binary Gmsh 4.1 (layout: tests/data/msh_binary.py), written
 * independently of the reader: node tags 1..n in one block, triangles and
 * tetrahedra in one block each, after a point element the reader skips. */
static unsigned char *msh_binary(const avi_mesh *m, int swap, int sz, size_t *len)
{
    bin_out o = {NULL, 0, 0, swap, sz};
    char head[40];
    snprintf(head, sizeof head, "$MeshFormat\n4.1 1 %d\n", sz);
    put_text(&o, head);
    put_int(&o, 1);
    put_text(&o, "\n$EndMeshFormat\n$Entities\n");
    for (int i = 0; i < 4; i++) put_size(&o, 0);
    put_text(&o, "\n$EndEntities\n$Nodes\n");
    size_t nv = m->vertex_count;
    put_size(&o, 1), put_size(&o, nv), put_size(&o, 1), put_size(&o, nv);
    put_int(&o, 3), put_int(&o, 1), put_int(&o, 0), put_size(&o, nv);
    for (size_t v = 0; v < nv; v++) put_size(&o, v + 1);
    for (size_t v = 0; v < nv; v++)
        for (int k = 0; k < 3; k++) put(&o, &m->x[v][k], 8, 0);
    put_text(&o, "\n$EndNodes\n$Elements\n");
    size_t ne = 1 + m->triangle_count + m->tet_count, tag = 1;
    put_size(&o, 3), put_size(&o, ne), put_size(&o, 1), put_size(&o, ne);
    put_int(&o, 0), put_int(&o, 1), put_int(&o, 15), put_size(&o, 1); /* a point */
    put_size(&o, tag++), put_size(&o, 1);
    put_int(&o, 2), put_int(&o, 1), put_int(&o, 2), put_size(&o, m->triangle_count);
    for (size_t t = 0; t < m->triangle_count; t++) {
        put_size(&o, tag++);
        for (int k = 0; k < 3; k++) put_size(&o, m->triangles[t][k] + 1u);
    }
    put_int(&o, 3), put_int(&o, 1), put_int(&o, 4), put_size(&o, m->tet_count);
    for (size_t t = 0; t < m->tet_count; t++) {
        put_size(&o, tag++);
        for (int k = 0; k < 4; k++) put_size(&o, m->tets[t][k] + 1u);
    }
    put_text(&o, "\n$EndElements\n");
    *len = o.n;
    return o.b;
}

static void assert_same_mesh(const avi_mesh *a, const avi_mesh *b, const char *what)
{
    ck_assert_msg(a->vertex_count == b->vertex_count && a->triangle_count == b->triangle_count &&
                      a->tet_count == b->tet_count,
                  "%s: counts differ", what);
    ck_assert_msg(memcmp(a->x, b->x, a->vertex_count * sizeof *a->x) == 0, "%s: coordinates differ", what);
    ck_assert_msg(!a->triangle_count || memcmp(a->triangles, b->triangles, a->triangle_count * sizeof *a->triangles) == 0,
                  "%s: triangles differ", what);
    ck_assert_msg(!a->tet_count || memcmp(a->tets, b->tets, a->tet_count * sizeof *a->tets) == 0, "%s: tetrahedra differ",
                  what);
}

static void write_temp(char *path, const char *ext, const unsigned char *bytes, size_t n);

/* Each ASCII sample written as binary (both byte orders, 4- and 8-byte
 * size_t) reads back as the same mesh, bit for bit. */
START_TEST(test_msh41_binary_equals_ascii)
{
    static const char *const ascii[] = {SAMPLES "unit_cube_v41.msh", SAMPLES "square_v41.msh", SAMPLES "tetrahedron_v22.msh"};
    for (int s = 0; s < 3; s++) {
        avi_mesh a, b;
        read_ok(ascii[s], &a);
        for (int variant = 0; variant < 4; variant++) {
            size_t n;
            unsigned char *bytes = msh_binary(&a, variant & 1, variant & 2 ? 4 : 8, &n);
            char tmp[64], what[160];
            write_temp(tmp, ".msh", bytes, n);
            snprintf(what, sizeof what, "%s as binary (swap %d, size_t %d)", ascii[s], variant & 1, variant & 2 ? 4 : 8);
            avi_error err = {0};
            ck_assert_msg(avi_mesh_read(tmp, &b, &err) == 0, "%s: %s", what, err.message);
            assert_same_mesh(&a, &b, what);
            avi_mesh_free(&b);
            unlink(tmp);
            free(bytes);
        }
        avi_mesh_free(&a);
    }
}
END_TEST

/* The binary seed of the fuzz corpus (tests/data/msh_binary.py, which
 * writes the ASCII file's own blocks and tags) is the ASCII unit cube. */
START_TEST(test_msh41_binary_python_writer)
{
    avi_mesh a, b;
    read_ok(SAMPLES "unit_cube_v41.msh", &a);
    read_ok("tests/fuzz/corpus_msh/binary_unit_cube_v41.msh", &b);
    assert_same_mesh(&a, &b, "binary_unit_cube_v41.msh");
    avi_mesh_free(&a);
    avi_mesh_free(&b);
}
END_TEST

/* ---- malformed files ---- */

typedef struct {
    const char *file;
    int line;             /* expected "path:line:", 0: no line */
    const char *fragment; /* expected in the message */
} bad_case;

static const bad_case bad_cases[] = {
    {"empty.msh", 1, "empty file"},
    {"blank_lines_only.msh", 3, "empty file"},
    {"missing_meshformat.msh", 1, "expected $MeshFormat"},
    {"garbage_text.msh", 1, "not a Gmsh mesh"},
    {"wrong_version_3.0.msh", 2, "unsupported .msh version '3.0'"},
    {"wrong_version_4.0.msh", 2, "unsupported .msh version '4'"},
    {"binary_v41.msh", 0, "byte 79: file ends in a $Nodes block header"},
    /* Binary 4.1 files made by tests/data/msh_binary_bad.py. */
    {"binary_truncated_nodes_v41.msh", 0, "byte 240: $Nodes block of 4 nodes runs past the end of the file"},
    {"binary_count_beyond_file_v41.msh", 0, "$Nodes block of 1099511627776 nodes runs past the end of the file"},
    {"binary_undefined_node_v41.msh", 0, "element 20 refers to node 99, which is not defined"},
    {"binary_unknown_type_v41.msh", 0, "unknown element type 99"},
    {"binary_bad_data_size_v41.msh", 2, "bad data size '3'"},
    {"binary_bad_byte_order_v41.msh", 0, "bad byte-order mark"},
    {"binary_v22.msh", 2, "binary .msh 2.2 files are not supported"},
    {"binary_element_count_v41.msh", 0, "$Elements blocks hold 20 elements, but the header says 99"},
    {"binary_garbage.msh", 1, "binary data"},
    {"truncated_in_nodes.msh", 8, "expected 'tag x y z'"},
    {"truncated_in_elements_v41.msh", 18, "unexpected end of file in $Elements"},
    {"bad_count_too_few_nodes.msh", 10, "expected 5 nodes"},
    {"bad_count_too_many_elements.msh", 14, "expected $EndElements"},
    {"bad_count_huge_nodes.msh", 7, "$Nodes ends early"},
    {"bad_count_huge_block_v41.msh", 6, "exceeds"},
    {"bad_count_huge_ntags.msh", 13, "tags"},
    {"bad_index_out_of_range.msh", 13, "refers to node 99, which is not defined"},
    {"bad_index_negative.msh", 13, "bad node tag '-2'"},
    {"bad_node_tag_zero.msh", 6, "bad node tag '0'"},
    {"bad_element_field_count.msh", 13, "found 7 fields"},
    {"nan_coordinate.msh", 7, "coordinate 'nan' is not finite"},
    {"inf_coordinate_v41.msh", 13, "coordinate '1e999' is not finite"},
    {"bad_coordinate_text.msh", 8, "bad coordinate 'one'"},
    {"duplicate_node_tag.msh", 8, "duplicate node tag 2 (first defined on line 7)"},
    {"duplicate_node_tag_sparse_v41.msh", 13, "duplicate node tag 7000000001 (first defined on line 7)"},
    {"missing_elements.msh", 10, "missing $Elements"},
    {"missing_nodes.msh", 6, "missing $Nodes"},
    {"missing_endnodes.msh", 10, "expected $EndNodes"},
    {"elements_before_nodes.msh", 4, "$Elements before $Nodes"},
    {"unterminated_section.msh", 4, "$PhysicalNames has no $EndPhysicalNames"},
    {"text_outside_section.msh", 11, "expected a section"},
    {"no_triangles_or_tets.msh", 15, "no triangles"},
    {"zero_area_triangle.msh", 12, "triangle 0 (vertices 0, 1, 2) has zero area"},
    {"inverted_tet.msh", 13, "tetrahedron 0 (vertices 0, 2, 1, 3) has negative volume"},
    {"flat_tet.msh", 13, "has zero volume"},
    {"repeated_vertex_tet.msh", 13, "repeats vertex 2"},
    {"non_manifold_edge.msh", 16, "triangle 2 (vertices 0, 1, 4) makes edge (0, 1) non-manifold"},
    {"non_manifold_tet_face.msh", 17, "tetrahedron 2 shares face (0, 1, 2) with two other tetrahedra"},
    {"empty.obj", 1, "no faces"},
    {"obj_no_faces.obj", 3, "no faces"},
    {"obj_binary.obj", 3, "binary data"},
    {"obj_index_zero.obj", 4, "vertex index 0"},
    {"obj_index_out_of_range.obj", 5, "face refers to vertex 7, but the file has 3 vertices"},
    {"obj_relative_index_before_first.obj", 4, "relative vertex index -4 reaches before the first vertex"},
    {"obj_huge_index.obj", 4, "bad vertex reference"},
    {"obj_nan_vertex.obj", 2, "coordinate 'NaN' is not finite"},
    {"obj_inf_vertex.obj", 3, "coordinate '-inf' is not finite"},
    {"obj_bad_number.obj", 3, "bad coordinate 'zero'"},
    {"obj_truncated_vertex.obj", 3, "expected 'v x y z', found 2 numbers"},
    {"obj_face_two_vertices.obj", 4, "at least 3 vertices"},
    {"obj_bad_vertex_reference.obj", 4, "bad vertex reference '1/1/1/1'"},
    {"obj_unknown_statement.obj", 4, "unsupported statement 'curv'"},
    {"obj_zero_area.obj", 4, "has zero area"},
    {"obj_repeated_vertex.obj", 4, "repeats a vertex"},
    {"obj_non_manifold.obj", 8, "non-manifold"},
    {"overlapping_tets.msh", 15, "tetrahedra 0 (vertices 0, 1, 2, 3) and 1 (vertices 0, 1, 2, 4) overlap"},
    {"obj_self_intersecting.obj", 8, "triangles 0 (vertices 0, 1, 2) and 1 (vertices 3, 4, 5) intersect"},
    {"obj_folded_strip.obj", 13, "triangles 0 (vertices 0, 2, 3) and 6 (vertices 6, 8, 9) intersect"},
};
enum { BAD_CASES = sizeof bad_cases / sizeof bad_cases[0] };

START_TEST(test_malformed_file)
{
    const bad_case *c = &bad_cases[_i];
    char path[256], where[300];
    snprintf(path, sizeof path, BAD "%s", c->file);
    avi_mesh m;
    avi_error err = {0};
    int rc = avi_mesh_read(path, &m, &err);
    ck_assert_msg(rc == AVI_ERR_INPUT, "%s: rc %d (%s)", c->file, rc, err.message);
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    if (c->line) snprintf(where, sizeof where, "%s:%d: ", path, c->line);
    else snprintf(where, sizeof where, "%s: ", path);
    ck_assert_msg(strncmp(err.message, where, strlen(where)) == 0, "%s: message '%s' does not start with '%s'", c->file,
                  err.message, where);
    ck_assert_msg(strstr(err.message, c->fragment) != NULL, "%s: message '%s' lacks '%s'", c->file, err.message,
                  c->fragment);
    ck_assert_uint_eq(m.vertex_count, 0);
    ck_assert_ptr_null(m.x);
    ck_assert_ptr_null(m.triangles);
    ck_assert_ptr_null(m.tets);
}
END_TEST

/* Valid files kept beside the malformed ones: meshes with vertices that no
 * element uses, as Gmsh writes them (geometry and size-control points).
 * The readers keep every vertex (avi/mesh.h); building a scene drops the
 * unused ones (test_scene_build.c, test_mesh_file_unused_vertices). */
static const struct {
    const char *file;
    size_t vertices, triangles, tets;
} valid_files[] = {
    {"unused_nodes_v22.msh", 7, 0, 2},
    {"unused_nodes_v41.msh", 7, 0, 2},
    {"unused_vertices.obj", 5, 2, 0},
};
enum { VALID_FILES = sizeof valid_files / sizeof valid_files[0] };

START_TEST(test_files_with_unused_vertices_read)
{
    for (int i = 0; i < VALID_FILES; i++) {
        char path[256];
        snprintf(path, sizeof path, BAD "%s", valid_files[i].file);
        avi_mesh m;
        avi_error err = {0};
        ck_assert_msg(avi_mesh_read(path, &m, &err) == AVI_OK, "%s: %s", path, err.message);
        ck_assert_uint_eq(m.vertex_count, valid_files[i].vertices);
        ck_assert_uint_eq(m.triangle_count, valid_files[i].triangles);
        ck_assert_uint_eq(m.tet_count, valid_files[i].tets);
        avi_mesh_free(&m);
    }
}
END_TEST

/* Every file in the folder has a case above, so none goes unchecked. */
START_TEST(test_every_malformed_file_listed)
{
    DIR *d = opendir(BAD);
    ck_assert_ptr_nonnull(d);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        files++;
        int found = 0, valid = 0;
        for (int i = 0; i < VALID_FILES; i++) valid |= strcmp(valid_files[i].file, e->d_name) == 0;
        if (valid) {
            files--;
            continue;
        }
        for (int i = 0; i < BAD_CASES; i++) found |= strcmp(bad_cases[i].file, e->d_name) == 0;
        ck_assert_msg(found, "%s has no expected error in bad_cases", e->d_name);
    }
    closedir(d);
    ck_assert_int_eq(files, BAD_CASES);
    ck_assert_int_ge(files, 15);
}
END_TEST

/* ---- hostile variants of the samples ---- */

static unsigned char *slurp(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc((size_t)n + 1);
    ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return buf;
}

/* Writes bytes to a fresh temporary file with the given extension. */
static void write_temp(char *path, const char *ext, const unsigned char *bytes, size_t n)
{
    snprintf(path, 64, "/tmp/avi_mesh_fuzz_XXXXXX%s", ext);
    int fd = mkstemps(path, (int)strlen(ext));
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, bytes, n), (ssize_t)n);
    close(fd);
}

static void read_survives(const char *ext, const unsigned char *bytes, size_t n)
{
    char path[64];
    write_temp(path, ext, bytes, n);
    avi_mesh m;
    avi_error err = {0};
    int rc = avi_mesh_read(path, &m, &err);
    ck_assert_msg(rc == 0 || rc == AVI_ERR_INPUT, "rc %d: %s", rc, err.message);
    if (rc) {
        ck_assert_ptr_nonnull(strstr(err.message, path));
        ck_assert_ptr_null(m.x);
    } else {
        ck_assert_int_eq(avi_mesh_validate(&m, path, &err), 0);
        avi_mesh_free(&m);
    }
    unlink(path);
}

static const char *const samples[] = {
    SAMPLES "tetrahedron_v22.msh", SAMPLES "unit_cube_v41.msh", SAMPLES "square_v41.msh",
    SAMPLES "square.obj", SAMPLES "tetrahedron_surface.obj", SAMPLES "hexagon.obj",
    "tests/fuzz/corpus_msh/binary_unit_cube_v41.msh",
};

START_TEST(test_truncated_samples)
{
    const char *path = samples[_i];
    const char *ext = strrchr(path, '.');
    size_t n;
    unsigned char *bytes = slurp(path, &n);
    size_t step = avi_test_quick() ? 7 : 1;
    for (size_t cut = 0; cut < n; cut += step) {
        char tmp[64];
        write_temp(tmp, ext, bytes, cut);
        avi_mesh m;
        avi_error err = {0};
        int rc = avi_mesh_read(tmp, &m, &err);
        ck_assert_msg(rc == 0 || rc == AVI_ERR_INPUT, "%s cut at %zu: rc %d", path, cut, rc);
        if (rc) ck_assert_ptr_nonnull(strstr(err.message, tmp));
        /* a .msh reads only once its last section is closed */
        else if (ext[1] == 'm') ck_assert_uint_ge(cut + 2, n);
        avi_mesh_free(&m);
        unlink(tmp);
    }
    free(bytes);
}
END_TEST

START_TEST(test_mangled_samples)
{
    static const unsigned char alphabet[] = "0123456789-+.eE $/\n\r\t#nNaIfv";
    const char *path = samples[_i];
    const char *ext = strrchr(path, '.');
    size_t n;
    unsigned char *bytes = slurp(path, &n);
    unsigned char *copy = malloc(n + 16);
    uint64_t s = 0x1234567u + (uint64_t)_i;
    int rounds = avi_test_quick() ? 100 : 600;
    for (int r = 0; r < rounds; r++) {
        memcpy(copy, bytes, n);
        int edits = 1 + r % 4;
        for (int k = 0; k < edits; k++) {
            s = s * 6364136223846793005u + 1442695040888963407u;
            size_t at = (size_t)(s >> 33) % n;
            unsigned sym = (unsigned)(s >> 20) % (sizeof alphabet + 2);
            /* mostly text symbols; sometimes a NUL or a high byte */
            copy[at] = sym < sizeof alphabet - 1 ? alphabet[sym] : sym == sizeof alphabet - 1 ? 0 : 0xFF;
        }
        read_survives(ext, copy, n);
    }
    free(copy);
    free(bytes);
}
END_TEST

static Suite *readers_suite(void)
{
    Suite *s = suite_create("mesh_readers");
    TCase *tc = tcase_create("samples");
    tcase_add_test(tc, test_msh22_tetrahedron);
    tcase_add_test(tc, test_msh41_unit_cube);
    tcase_add_test(tc, test_msh41_sparse_tags_crlf);
    tcase_add_test(tc, test_obj_square);
    tcase_add_test(tc, test_fifo_refused);
    tcase_add_test(tc, test_obj_tetrahedron_relative_indices);
    tcase_add_test(tc, test_obj_polygon_fan);
    tcase_add_test(tc, test_read_dispatch);
    tcase_add_test(tc, test_msh41_binary_equals_ascii);
    tcase_add_test(tc, test_msh41_binary_python_writer);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("malformed");
    tcase_add_loop_test(bad, test_malformed_file, 0, BAD_CASES);
    tcase_add_test(bad, test_every_malformed_file_listed);
    tcase_add_test(bad, test_files_with_unused_vertices_read);
    suite_add_tcase(s, bad);
    TCase *hostile = tcase_create("hostile");
    tcase_set_timeout(hostile, 120);
    int ns = (int)(sizeof samples / sizeof samples[0]);
    tcase_add_loop_test(hostile, test_truncated_samples, 0, ns);
    tcase_add_loop_test(hostile, test_mangled_samples, 0, ns);
    suite_add_tcase(s, hostile);
    return s;
}

AVI_CHECK_MAIN(readers_suite)
