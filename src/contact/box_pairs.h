/* Every pair of overlapping axis-aligned boxes, by a uniform grid: the
 * broad phase of the input checks (triangles that may intersect).
 *
 * src/contact/broad_phase.c serves the contact manager's own queries
 * (points against triangles, edges against edges, skipping shared
 * vertices, scratch kept between runs); this one pairs arbitrary boxes once,
 * with a cell size chosen so that no box lands in too many cells. */
#ifndef AVI_BOX_PAIRS_H
#define AVI_BOX_PAIRS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t a, b; /* box indices, a < b */
} avi_box_pair;

/* Pairs (a, b), a < b, of the n boxes (lo[3], hi[3]; closed, finite) that
 * overlap or touch, each once, in an order that depends only on the boxes,
 * into *pairs (malloc'd, NULL when none). Returns the count, or -1 when out
 * of memory. */
long avi_box_pairs(const double (*box)[6], size_t n, avi_box_pair **pairs);

/* The box of triangle t of x, grown by r on every side. */
void avi_triangle_box(const double (*x)[3], const uint32_t t[3], double r, double box[6]);

#endif
