/* Unsigned distances between affine features (point, line, plane) with exact
 * first derivatives: the building blocks of the point-triangle and edge-edge
 * contact stencils. The second derivatives, which only the tests use (to
 * check the gradients), are in tests/unit/distance_hessian.h.
 *
 * Each distance is d = |w| = min_s |w(s)|, where w(s) = sum_k c_k(s) x_k is
 * the vector between a point of one feature and a point of the other, the
 * coefficients c_k affine in the m <= 2 feature parameters s (line or
 * barycentric coordinates). At the minimiser w is stationary in s, so
 *   dd/dx_k = c_k u,  u = w / d                     (envelope theorem),
 * and the Hessian from the implicit function theorem applied to the
 * stationarity condition. Derivatives exist only
 * where d > 0; at d = 0 the values returned are unspecified (possibly NaN). */
#ifndef AVI_DISTANCE_PRIMITIVES_H
#define AVI_DISTANCE_PRIMITIVES_H

#include "base/vec3.h"

/* Closest-point pair over a stencil of (at most) four points x[0..3]. */
typedef struct {
    double d;        /* |w| */
    double u[3];     /* w / d */
    double c[4];     /* c_k at the minimiser; they sum to zero */
    double dc[2][4]; /* dc_k / ds_j, constant */
    int m;           /* number of free parameters s, 0..2 */
} avi_dist_pair;

/* g[k] = dd/dx_k = c_k u. */
static inline void avi_dist_pair_gradient(const avi_dist_pair *q, double g[4][3])
{
    for (int k = 0; k < 4; k++) v3_scale(g[k], q->u, q->c[k]);
}

/* Pair x[ip] - x[iq]. */
static inline void avi_pair_point_point(avi_dist_pair *q, const double x[4][3], int ip, int iq)
{
    double w[3];
    v3_sub(w, x[ip], x[iq]);
    q->d = v3_norm(w);
    v3_scale(q->u, w, 1.0 / q->d);
    for (int k = 0; k < 4; k++) q->c[k] = q->dc[0][k] = q->dc[1][k] = 0.0;
    q->c[ip] = 1.0;
    q->c[iq] = -1.0;
    q->m = 0;
}

/* Pair x[ip] - ((1 - t) x[ia] + t x[ib]), t the caller's projection
 * parameter of x[ip] onto the line (exact derivatives need the exact
 * projection, not a clamped one). */
static inline void avi_pair_point_line(avi_dist_pair *q, const double x[4][3], int ip, int ia, int ib,
                                       double t)
{
    double r[3], e[3], w[3];
    v3_sub(r, x[ip], x[ia]);
    v3_sub(e, x[ib], x[ia]);
    w[0] = r[0] - t * e[0]; w[1] = r[1] - t * e[1]; w[2] = r[2] - t * e[2];
    q->d = v3_norm(w);
    v3_scale(q->u, w, 1.0 / q->d);
    for (int k = 0; k < 4; k++) q->c[k] = q->dc[0][k] = q->dc[1][k] = 0.0;
    q->c[ip] = 1.0;
    q->c[ia] = t - 1.0;
    q->c[ib] = -t;
    q->dc[0][ia] = 1.0;
    q->dc[0][ib] = -1.0;
    q->m = 1;
}

/* Pair for point x[0] and the plane of x[1], x[2], x[3], from the pieces
 * the point-triangle classifier already has: r0 = x0 - x1, e0 = x2 - x1,
 * e2 = x1 - x3, n = e0 x (x3 - x2) and the unnormalised barycentrics
 * beta_k of the projection (summing to |n|^2 up to rounding).
 * d = |v . n| / |n|, v = x0 minus its projection: the normal component of v,
 * not |v|, keeps d accurate to rounding of the coordinates for slivers and
 * tiny d alike. */
static inline void avi_pair_point_plane_from(avi_dist_pair *q, const double r0[3], const double e0[3],
                                             const double e2[3], const double n[3], double beta0,
                                             double beta1, double beta2)
{
    double is = 1.0 / (beta0 + beta1 + beta2);
    double b0 = beta0 * is, b1 = beta1 * is, b2 = beta2 * is, v[3];
    for (int i = 0; i < 3; i++) v[i] = r0[i] - b1 * e0[i] + b2 * e2[i];
    double ln = v3_norm(n), vn = v3_dot(v, n) / ln;
    q->d = fabs(vn);
    v3_scale(q->u, n, vn < 0.0 ? -1.0 / ln : 1.0 / ln);
    q->c[0] = 1.0; q->c[1] = -b0; q->c[2] = -b1; q->c[3] = -b2;
    /* s = (b1, b2), b0 = 1 - b1 - b2 */
    q->dc[0][0] = 0.0; q->dc[0][1] = 1.0; q->dc[0][2] = -1.0; q->dc[0][3] = 0.0;
    q->dc[1][0] = 0.0; q->dc[1][1] = 1.0; q->dc[1][2] = 0.0;  q->dc[1][3] = -1.0;
    q->m = 2;
}

/* Pair for point x[0] and the plane of x[1], x[2], x[3] (not collinear).
 * Barycentric beta_k = n . (edge x (x0 - edge start)) for the edge opposite
 * vertex k: the cross-product form keeps its accuracy on slivers, where
 * differences of dot products lose it. */
static inline void avi_pair_point_plane(avi_dist_pair *q, const double x[4][3])
{
    double e0[3], e1[3], e2[3], r0[3], r1[3], r2[3], n[3], m[3];
    v3_sub(e0, x[2], x[1]);
    v3_sub(e1, x[3], x[2]);
    v3_sub(e2, x[1], x[3]);
    v3_sub(r0, x[0], x[1]);
    v3_sub(r1, x[0], x[2]);
    v3_sub(r2, x[0], x[3]);
    v3_cross(n, e0, e1);
    v3_cross(m, n, e1);
    double beta0 = v3_dot(m, r1);
    v3_cross(m, n, e2);
    double beta1 = v3_dot(m, r2);
    v3_cross(m, n, e0);
    double beta2 = v3_dot(m, r0);
    avi_pair_point_plane_from(q, r0, e0, e2, n, beta0, beta1, beta2);
}

/* Line parameters of the closest points of the lines x0 + s (x1 - x0) and
 * x2 + t (x3 - x2); n = (x1 - x0) x (x3 - x2) and nn = |n|^2 > 0 given. */
static inline void avi_line_line_params(const double x[4][3], const double n[3], double nn,
                                        double *s, double *t)
{
    double ea[3], eb[3], r[3], m[3];
    v3_sub(ea, x[1], x[0]);
    v3_sub(eb, x[3], x[2]);
    v3_sub(r, x[2], x[0]);
    v3_cross(m, eb, n);
    *s = v3_dot(r, m) / nn;
    v3_cross(m, ea, n);
    *t = v3_dot(r, m) / nn;
}

/* Pair for the lines x0 x1 and x2 x3 at line parameters s, t from
 * avi_line_line_params, n and nn as there. As for the plane, d is the
 * normal component of the vector between the closest points. */
static inline void avi_pair_line_line(avi_dist_pair *q, const double x[4][3], const double n[3],
                                      double nn, double s, double t)
{
    double v[3];
    for (int i = 0; i < 3; i++)
        v[i] = (x[0][i] - x[2][i]) + s * (x[1][i] - x[0][i]) - t * (x[3][i] - x[2][i]);
    double ln = sqrt(nn), vn = v3_dot(v, n) / ln;
    q->d = fabs(vn);
    v3_scale(q->u, n, vn < 0.0 ? -1.0 / ln : 1.0 / ln);
    q->c[0] = 1.0 - s; q->c[1] = s; q->c[2] = t - 1.0; q->c[3] = -t;
    q->dc[0][0] = -1.0; q->dc[0][1] = 1.0; q->dc[0][2] = 0.0; q->dc[0][3] = 0.0;
    q->dc[1][0] = 0.0;  q->dc[1][1] = 0.0; q->dc[1][2] = 1.0; q->dc[1][3] = -1.0;
    q->m = 2;
}

#endif
