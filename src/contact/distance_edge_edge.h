/* Unsigned distance between two segments, the edge-edge contact stencil
 * x = (a0, a1, b0, b1), with its gradient (penalty layers
 * V(d) = k/2 (eta - d)^2, Harmon et al. 2009).
 *
 * The closest points decide the formula: both in the segments' interiors
 * (line-line, d = |(b0 - a0) . (ea x eb)| / |ea x eb|), an endpoint against
 * the other segment's interior (point-line), or two endpoints (point-point);
 * see distance_primitives.h. The gradient (and the tests' Hessian,
 * tests/unit/distance_hessian.h) is the exact derivative of the formula of
 * the region x lies in; d itself is continuous across regions. Derivatives
 * exist where d > 0 (unspecified at d = 0).
 *
 * Parallel and nearly parallel segments: when
 *   |ea x eb|^2 <= AVI_EE_PARALLEL |ea|^2 |eb|^2      (sin angle <= 1e-8)
 * the line-line case is skipped and d is the smallest of the four
 * endpoint-segment distances. Where the interior case would have applied
 * this overestimates d by at most sin(angle) min(|ea|, |eb|) <= 1e-8
 * min(|ea|, |eb|), so d is continuous across the switch to that tolerance,
 * which is also the accuracy left to the line-line parameters there.
 * Zero-length edges fall into this case too. */
#ifndef AVI_DISTANCE_EDGE_EDGE_H
#define AVI_DISTANCE_EDGE_EDGE_H

#include "contact/distance_primitives.h"

#define AVI_EE_PARALLEL 1e-16

/* Closest features of segments a = a0 a1 and b = b0 b1. */
enum avi_ee_feature {
    AVI_EE_EDGE_EDGE = 0, /* interior - interior */
    AVI_EE_A0_EDGE_B,     /* endpoint a0 - interior of b */
    AVI_EE_A1_EDGE_B,
    AVI_EE_B0_EDGE_A,
    AVI_EE_B1_EDGE_A,
    AVI_EE_A0_B0, /* endpoint - endpoint */
    AVI_EE_A0_B1,
    AVI_EE_A1_B0,
    AVI_EE_A1_B1
};

/* Distance d between segments x[0] x[1] and x[2] x[3]; the closest
 * features (enum avi_ee_feature) go to *feature unless it is NULL. */
double avi_ee_distance(const double x[4][3], int *feature);

/* Returns d; g[a] = dd/dx_a. */
double avi_ee_distance_gradient(const double x[4][3], double g[4][3]);

/* The closest-point pair of the edge-edge stencil x (for its derivatives);
 * returns the closest feature. */
int avi_ee_pair(const double x[4][3], avi_dist_pair *q);

#endif
