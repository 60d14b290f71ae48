/* Whether two triangles of a mesh (or of two meshes sharing one vertex
 * array) intersect other than where a mesh lets them meet, decided with
 * exact predicates (base/orientation.h), so flat meshes and touching
 * triangles get the right answer.
 *
 * Triangles are closed sets and must not be degenerate (zero area).
 * By the vertices they share (by index):
 *   none:    any common point is an intersection (touching counts);
 *   one, v:  any common point other than v (they fold over each other
 *            beyond v);
 *   an edge: they lie in one plane on the same side of the edge (a fold
 *            of 180 degrees);
 *   three:   always (the same triangle twice).
 * Two closed triangles meet exactly when an edge of one meets the other;
 * triangles sharing v meet beyond v exactly when the edge of one opposite
 * v meets the other (the part of either triangle seen from v within the
 * other's angle reaches its opposite edge). */
#ifndef AVI_TRIANGLE_INTERSECTION_H
#define AVI_TRIANGLE_INTERSECTION_H

#include <stddef.h>
#include <stdint.h>

/* What avi_triangles_intersect found. */
enum avi_tri_hit_kind {
    AVI_TRI_CROSS = 0, /* edge (a, b) of one triangle meets the other */
    AVI_TRI_FOLD,      /* coplanar, on the same side of the shared edge (a, b) */
    AVI_TRI_SAME       /* the same three vertices */
};

typedef struct {
    int kind;      /* enum avi_tri_hit_kind */
    int first;     /* AVI_TRI_CROSS: 1 the edge is of the first triangle, 0 of the second */
    uint32_t a, b; /* vertex indices; 0, 0 for AVI_TRI_SAME */
} avi_tri_hit;

/* 1 when triangles s and t (vertex indices into x) intersect as above,
 * with *hit filled when hit is not NULL; 0 otherwise. */
int avi_triangles_intersect(const double (*x)[3], const uint32_t s[3], const uint32_t t[3], avi_tri_hit *hit);

/* The intersecting pair (i, j), i < j, of the n triangles tri (vertex
 * indices into x) that comes first in (i, j) order: 1 with *i, *j and *hit
 * filled, 0 when no two intersect, -1 when out of memory. A grid of the
 * triangles' boxes (contact/box_pairs.h) keeps this O(n log n) on meshes of
 * similar-sized triangles. */
int avi_triangles_first_intersection(const double (*x)[3], const uint32_t (*tri)[3], size_t n, size_t *i, size_t *j,
                                     avi_tri_hit *hit);

#endif
