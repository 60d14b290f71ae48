/* avi: plain triangle / tetrahedron meshes, from generators and files.
 *
 * A mesh is vertices x[n][3], triangles [m][3] and tetrahedra [k][4], all
 * heap arrays owned by the mesh and freed by avi_mesh_free. Indices are
 * 0-based. Triangles are counter-clockwise seen from outside (or from +z for
 * flat meshes); tetrahedra are positively oriented:
 * det[x1 - x0, x2 - x0, x3 - x0] > 0.
 *
 * Every function that can fail returns 0 (AVI_OK) or an avi_status and, when
 * err is not NULL, fills it. Bad parameters and bad files give AVI_ERR_INPUT
 * with a message naming the parameter, or "path:line: ..." for files; running
 * out of memory gives AVI_ERR_RUN. On failure an output mesh is left empty
 * (all zero), so avi_mesh_free on it is always safe, and the in-place
 * operations (jitter, reorder) leave their mesh unchanged. */
#ifndef AVI_MESH_H
#define AVI_MESH_H

#include "avi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    size_t vertex_count;
    double (*x)[3];
    size_t triangle_count;
    uint32_t (*triangles)[3];
    size_t tet_count;
    uint32_t (*tets)[4];
} avi_mesh;

/* Frees the arrays and zeroes the mesh. */
void avi_mesh_free(avi_mesh *mesh);

/* ---- Generators. `out` is overwritten (not freed first). ---- */

/* Icosahedron subdivided `subdivisions` times (0..10), each triangle split
 * into four through shared edge midpoints, every vertex projected onto the
 * sphere of `radius` about the origin. A closed 2-manifold with
 * 10 * 4^s + 2 vertices and 20 * 4^s triangles, oriented outward. */
int avi_mesh_icosphere(double radius, int subdivisions, avi_mesh *out, avi_error *err);

/* Flat disk in the z = 0 plane centred at the origin, normals +z. Ring i
 * (1..rings) has 6 i vertices evenly spaced on the circle of radius
 * radius * i / rings (the outer ring exactly on `radius`), plus one centre
 * vertex: 1 + 3 rings (rings + 1) vertices and 6 rings^2 nearly equilateral
 * triangles (smallest angle about 44 degrees, at the six sector seams).
 * Vertex j of ring i has index 1 + 3 i (i - 1) + j. rings in 1..30000. */
int avi_mesh_disk(double radius, int rings, avi_mesh *out, avi_error *err);

/* Rectangle [0,lx] x [0,ly] in z = 0, normals +z: (nx+1)(ny+1) vertices,
 * vertex (i, j) at index j (nx+1) + i. Cell (i, j) is split into two
 * triangles along the diagonal (i,j)-(i+1,j+1) when i + j is even and along
 * (i+1,j)-(i,j+1) when it is odd (a checkerboard, so the mesh has no
 * preferred direction). 2 nx ny triangles. */
int avi_mesh_rect_grid(double lx, double ly, int nx, int ny, avi_mesh *out, avi_error *err);

/* Box [0,lx] x [0,ly] x [0,lz] of nx * ny * nz hexahedral cells, each split
 * into the 6 tetrahedra around its main diagonal (x0,y0,z0)-(x1,y1,z1)
 * (Kuhn / Freudenthal split: one tetrahedron per ordering of the axes). Every
 * face diagonal then runs from the face's lowest to its highest corner, so
 * neighbouring cells agree and the mesh is conforming; all tetrahedra are
 * congruent. (nx+1)(ny+1)(nz+1) vertices, vertex (i, j, k) at index
 * (k (ny+1) + j)(nx+1) + i; 6 nx ny nz tetrahedra. `triangles` is filled with
 * the outward boundary surface (avi_mesh_boundary_triangles):
 * 4 (nx ny + ny nz + nz nx) triangles. */
int avi_mesh_tet_box(double lx, double ly, double lz, int nx, int ny, int nz, avi_mesh *out,
                     avi_error *err);

/* Solid ball of the given radius centred at the origin: the tet_box of n^3
 * cells on [-1, 1]^3 mapped onto the ball by x' = r x sqrt(1 - y^2/2 - z^2/2
 * + y^2 z^2 / 3) (and cyclically), a mapped-cube mesh with n cells per
 * diameter; indices and tetrahedra as tet_box, 1 <= n <= 1024. The thin
 * cells at the cube's corners turn over from n = 32 on: an input error
 * (the mesh is checked with avi_mesh_validate). */
int avi_mesh_tet_ball(double radius, int n, avi_mesh *out, avi_error *err);

/* avi_mesh_tet_ball graded toward its south pole (0, 0, -radius): the unit
 * ball's vertices moved by the Moebius map of the ball onto itself that
 * sends (0, 0, -grading) to the centre (Ahlfors 1981). Conformal, so cells
 * keep their shapes locally; surface vertices stay on the sphere; cell
 * sizes scale by (1 - grading) / (1 + grading) at the south pole and
 * (1 + grading) / (1 - grading) at the north pole. grading in [0, 1); 0 is
 * avi_mesh_tet_ball. For contact studies (Hertz) that need a fine patch
 * where the ball touches. Conformal only to first order in the cell: a
 * grading that turns a cell over (n = 24 with 0.3 or 0.5; 0.8 is valid up
 * to n = 24) is an input error. */
int avi_mesh_tet_ball_graded(double radius, int n, double grading, avi_mesh *out, avi_error *err);

/* Solid ball without the mapped cube's thin corner cells: the tet_box of n^3
 * cells on [-1, 1]^3 mapped by concentric shells, x' = r x |x|_inf / |x|_2
 * (each cube surface |x|_inf = s onto the sphere of radius r s; every
 * cell's diagonal split points away from the centre), a map with a bounded
 * Jacobian and inverse, so cells stay valid at every n (worst mean ratio
 * about 0.5 where the mapped cube's falls as 1 / n), then
 * graded toward the south pole by the Moebius map of
 * avi_mesh_tet_ball_graded (grading in [0, 1), 0: none). Indices and
 * tetrahedra as tet_box, 1 <= n <= 1024; the surface vertices lie on the
 * sphere. For contact studies that need n beyond 24. */
int avi_mesh_tet_ball_shells(double radius, int n, double grading, avi_mesh *out, avi_error *err);

/* ---- Operations on meshes. ---- */

/* The boundary surface of the tetrahedra: every tetrahedron face not shared
 * with another tetrahedron, oriented outward, in the order (tetrahedron,
 * face). The array is allocated with malloc (NULL when there are none) and
 * owned by the caller; m->triangles is not read. Faces shared by more than
 * two tetrahedra are an error. */
int avi_mesh_boundary_triangles(const avi_mesh *m, uint32_t (**triangles)[3], size_t *count,
                                avi_error *err);

/* Moves every interior vertex by a pseudo-random offset with each coordinate
 * in [-amplitude, amplitude], the same for a given (mesh, seed) on every
 * machine (splitmix64, integer arithmetic). Interior means: with
 * tetrahedra, not on a boundary face of the tetrahedra, and the offset is
 * three-dimensional; for a triangle-only surface, not on an open edge (an edge
 * of one triangle), and the offset is made tangent to the surface (its
 * component along the vertex normal removed) so flat meshes stay flat. Keep
 * amplitude well below half the shortest edge so elements stay positive;
 * avi_mesh_validate tells. */
int avi_mesh_jitter_interior(avi_mesh *m, double amplitude, uint64_t seed, avi_error *err);

/* Renumbers vertices along a Morton (Z-order) curve over the bounding box
 * (21 bits per axis, ties by old index), then sorts triangles and
 * tetrahedra by their smallest new vertex index (ties by old element index).
 * Vertex order within each element is kept, so orientation is kept.
 * Deterministic. When old_to_new is not NULL it receives the new index of
 * every old vertex (vertex_count entries), e.g. to map pinned indices. */
int avi_mesh_reorder(avi_mesh *m, uint32_t *old_to_new, avi_error *err);

/* ---- Checks and files. ---- */

/* Rejects a mesh unfit for simulation, naming the culprit, e.g.
 * "<what>: triangle 17 (vertices 3, 8, 9) has zero area": no elements,
 * NaN / infinite coordinates, out-of-range indices, a vertex repeated within
 * an element, zero-area triangles, non-positive-volume tetrahedra, edges
 * shared by more than two triangles, faces shared by more than two
 * tetrahedra, two tetrahedra on the same side of their shared face (they
 * overlap), and a self-intersecting surface: the triangles when the mesh has
 * no tetrahedra, else the boundary of the tetrahedra (triangles given with
 * tetrahedra are not checked). Intersecting means, decided with exact
 * predicates (src/contact/triangle_intersection.h): triangles sharing no
 * vertex that meet or touch, triangles sharing one vertex that meet beyond
 * it, triangles sharing an edge folded flat onto each other, or the same
 * triangle twice. Zero area / volume is relative: below 1e-12 times the
 * longest edge squared / cubed. */
int avi_mesh_validate(const avi_mesh *m, const char *what, avi_error *err);

/* avi_mesh_validate for a mesh read from a file: when triangle_lines /
 * tet_lines are given (one source line per element, or NULL), messages name
 * the element's line: "<what>:<line>: ...". */
int avi_mesh_validate_lines(const avi_mesh *m, const char *what, const uint32_t *triangle_lines,
                            const uint32_t *tet_lines, avi_error *err);

/* Gmsh .msh, ASCII format 2.2 or 4.1: nodes, 3-node triangles (type 2) and
 * 4-node tetrahedra (type 4); other element types are skipped, unknown
 * sections too. Node tags become 0-based indices in file order (nodes not
 * used by any element are kept). Triangles are kept as given, also when the
 * file has tetrahedra (use avi_mesh_boundary_triangles for the boundary).
 * The result passes avi_mesh_validate. */
int avi_mesh_read_msh(const char *path, avi_mesh *out, avi_error *err);

/* Wavefront .obj: `v x y z` vertices and `f` faces of 3 or more vertices
 * (polygons fan-triangulated from their first vertex), indices as i, i/t,
 * i/t/n or i//n, negative indices relative to the last vertex read. vt, vn,
 * vp, o, g, s, l, p, usemtl, mtllib and comments are ignored; other
 * statements are errors. The result passes avi_mesh_validate. */
int avi_mesh_read_obj(const char *path, avi_mesh *out, avi_error *err);

/* Reads a mesh file by its extension: .msh or .obj (any case). */
int avi_mesh_read(const char *path, avi_mesh *out, avi_error *err);

#ifdef __cplusplus
}
#endif

#endif
