/* Unsigned distance between a point and a triangle, the vertex-face contact
 * stencil x = (p, t0, t1, t2), with its gradient (penalty
 * layers V(d) = k/2 (eta - d)^2, Harmon et al. 2009).
 *
 * The closest feature decides the formula: the face interior (point-plane,
 * d = |(p - t0) . n|, n the unit normal), one of the three edges
 * (point-line) or one of the three vertices (point-point); see
 * distance_primitives.h. The gradient (and the tests' Hessian,
 * tests/unit/distance_hessian.h) is the exact derivative of the formula of
 * the region x lies in; d itself is continuous across regions. Derivatives
 * exist where d > 0 (unspecified at d = 0).
 *
 * Degenerate triangles: when (2 area)^2 <= AVI_PT_DEGENERATE lmax^4 (lmax
 * the longest edge), i.e. the smallest altitude is below 1e-8 lmax, the
 * face is dropped and d is the distance to the nearest edge. That changes
 * d by at most that altitude, and below it the plane's normal is no longer
 * better determined than rounding allows. */
#ifndef AVI_DISTANCE_POINT_TRIANGLE_H
#define AVI_DISTANCE_POINT_TRIANGLE_H

#include "contact/distance_primitives.h"

#define AVI_PT_DEGENERATE 1e-16

/* Closest feature of the triangle. */
enum avi_pt_feature {
    AVI_PT_FACE = 0,
    AVI_PT_EDGE01, /* segment t0 t1 */
    AVI_PT_EDGE12, /* segment t1 t2 */
    AVI_PT_EDGE20, /* segment t2 t0 */
    AVI_PT_VERTEX0,
    AVI_PT_VERTEX1,
    AVI_PT_VERTEX2
};

/* Distance d from x[0] to the triangle x[1], x[2], x[3]; the closest
 * feature (enum avi_pt_feature) goes to *feature unless it is NULL. */
double avi_pt_distance(const double x[4][3], int *feature);

/* Returns d; g[a] = dd/dx_a. */
double avi_pt_distance_gradient(const double x[4][3], double g[4][3]);

/* The closest-point pair of the point-triangle stencil x (for its
 * derivatives); returns the closest feature. */
int avi_pt_pair(const double x[4][3], avi_dist_pair *q);

#endif
