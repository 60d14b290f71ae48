/* Test-side second derivatives of the contact distances, and the single
 * primitives (point-point, point-line, point-plane, line-line) as functions
 * of their points. The library never needs them (its contact potentials
 * use distances and gradients only); the tests use them to check the
 * gradients (src/contact/distance_*.c) against the exact Hessians and
 * finite differences, and to check each primitive on its own. */
#ifndef AVI_TEST_DISTANCE_HESSIAN_H
#define AVI_TEST_DISTANCE_HESSIAN_H

#include "contact/distance_primitives.h"

/* H = d2d/dx2 over the stencil x (the x the pair was built from). With
 * E_j = dw/ds_j, G = [E_i . E_j], a_k = sum_ij E_i G^-1_ij dc_jk and
 * gamma_kl = dc_k^T G^-1 dc_l, the 3x3 block (k, l) is
 *   c_k c_l Q / d - c_k a_l u^T - c_l u a_k^T - d gamma_kl u u^T,
 * Q the projector onto the directions normal to both u and the features
 * (I - u u^T - E G^-1 E^T; zero when m = 2, so that case has no 1/d term).
 * G must be invertible: non-degenerate edges, triangle, non-parallel lines. */
void avi_dist_pair_hessian(const avi_dist_pair *q, const double x[4][3], double H[12][12]);


/* Point-point: d = |p - q|; g = [dd/dp, dd/dq]; H over (p, q). */
double avi_point_point_distance(const double p[3], const double q[3]);
double avi_point_point_distance_gradient(const double p[3], const double q[3], double g[2][3]);
double avi_point_point_distance_hessian(const double p[3], const double q[3], double H[6][6]);

/* Point-line: distance from p to the infinite line through a != b;
 * stencil (p, a, b). */
double avi_point_line_distance(const double p[3], const double a[3], const double b[3]);
double avi_point_line_distance_gradient(const double p[3], const double a[3], const double b[3],
                                        double g[3][3]);
double avi_point_line_distance_hessian(const double p[3], const double a[3], const double b[3],
                                       double H[9][9]);

/* Point-plane: d = |(p - t0) . n|, n the unit normal of the plane through the
 * non-collinear t0, t1, t2; stencil (p, t0, t1, t2). */
double avi_point_plane_distance(const double p[3], const double t0[3], const double t1[3],
                                const double t2[3]);
double avi_point_plane_distance_gradient(const double p[3], const double t0[3], const double t1[3],
                                         const double t2[3], double g[4][3]);
double avi_point_plane_distance_hessian(const double p[3], const double t0[3], const double t1[3],
                                        const double t2[3], double H[12][12]);

/* Line-line: d = |(b0 - a0) . (ea x eb)| / |ea x eb| for the infinite lines
 * through a0, a1 and b0, b1 (not parallel); stencil (a0, a1, b0, b1). */
double avi_line_line_distance(const double a0[3], const double a1[3], const double b0[3],
                              const double b1[3]);
double avi_line_line_distance_gradient(const double a0[3], const double a1[3], const double b0[3],
                                       const double b1[3], double g[4][3]);
double avi_line_line_distance_hessian(const double a0[3], const double a1[3], const double b0[3],
                                      const double b1[3], double H[12][12]);

/* Returns d; H = d2d/dx2 (symmetric, row 3 a + i is dof i of x[a]). */
double avi_pt_distance_hessian(const double x[4][3], double H[12][12]);
double avi_ee_distance_hessian(const double x[4][3], double H[12][12]);

#endif
