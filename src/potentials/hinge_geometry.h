/* Dihedral-angle geometry shared by the bending potentials (hinge.c,
 * midedge.c): the signed angle across an edge, its closed-form gradient and
 * the degeneracy test of a wing triangle. */
#ifndef AVI_HINGE_GEOMETRY_H
#define AVI_HINGE_GEOMETRY_H

#include <math.h>
#include "base/vec3.h"

/* Same relative degeneracy threshold as the membrane triangles. */
#define AVI_TRI_DEGENERATE 1e-14

/* Geometry of a hinge. e = x1 - x0 is the hinge edge, f1 = x2 - x0 and
 * f2 = x3 - x0 reach the wings, and the wing normals
 *   n1 = e x f1    (triangle (v0, v1, v2)),
 *   n2 = f2 x e    (triangle (v1, v0, v3))
 * agree on a flat hinge whose wings lie on opposite sides of the edge.
 *
 * Sign convention: theta = atan2((n2 x n1) . e/|e|, n1 . n2) is positive when
 * the wings fold toward the side n1 points to, i.e. when x3 lies on the
 * positive side of the plane of triangle (v0, v1, v2). */
typedef struct {
    double e[3], f1[3], f2[3], n1[3], n2[3];
    double le, nn1, nn2; /* |e|, |n1|^2, |n2|^2 */
    double theta;
} hinge_geom;

static inline void hinge_geometry(hinge_geom *h, const double x[4][3])
{
    v3_sub(h->e, x[1], x[0]);
    v3_sub(h->f1, x[2], x[0]);
    v3_sub(h->f2, x[3], x[0]);
    v3_cross(h->n1, h->e, h->f1);
    v3_cross(h->n2, h->f2, h->e);
    h->le = v3_norm(h->e);
    h->nn1 = v3_dot(h->n1, h->n1);
    h->nn2 = v3_dot(h->n2, h->n2);
    double c[3];
    v3_cross(c, h->n2, h->n1);
    double t = atan2(v3_dot(c, h->e) / h->le, v3_dot(h->n1, h->n2));
    h->theta = t == -M_PI ? M_PI : t;
}

/* dtheta/dx_a. Moving a wing vertex along its triangle's unit normal by
 * delta turns that wing about the edge by delta / height, height = |n| / |e|:
 *   g2 = |e| n1 / |n1|^2,   g3 = |e| n2 / |n2|^2   (Bridson et al. 2003).
 * The edge vertices take the remainder so that the gradient is invariant
 * under translations and rotations: with s_w = (x_w - x0) . e / |e|^2 the
 * position of the wing's foot along the edge,
 *   g0 = (s1 - 1) g2 + (s2 - 1) g3,   g1 = -s1 g2 - s2 g3. */
static inline void hinge_theta_gradient(const hinge_geom *h, double s[2], double g[4][3])
{
    double ee = h->le * h->le;
    s[0] = v3_dot(h->f1, h->e) / ee;
    s[1] = v3_dot(h->f2, h->e) / ee;
    v3_scale(g[2], h->n1, h->le / h->nn1);
    v3_scale(g[3], h->n2, h->le / h->nn2);
    for (int i = 0; i < 3; i++) {
        g[0][i] = (s[0] - 1.0) * g[2][i] + (s[1] - 1.0) * g[3][i];
        g[1][i] = -s[0] * g[2][i] - s[1] * g[3][i];
    }
}

/* theta - theta0 wrapped into (-pi, pi], so a hinge whose angle crosses
 * +-pi keeps a continuous energy near its rest angle. */
static inline double hinge_delta(double theta, double theta0)
{
    double d = theta - theta0;
    if (d > M_PI) d -= 2.0 * M_PI;
    else if (d <= -M_PI) d += 2.0 * M_PI;
    return d;
}

static inline int wing_degenerate(const double a[3], const double b[3], const double c[3])
{
    double e1[3], e2[3], e3[3], n[3];
    v3_sub(e1, b, a);
    v3_sub(e2, c, a);
    v3_sub(e3, c, b);
    v3_cross(n, e1, e2);
    double area = 0.5 * v3_norm(n);
    double lmax = fmax(v3_dot(e1, e1), fmax(v3_dot(e2, e2), v3_dot(e3, e3)));
    return !(area > AVI_TRI_DEGENERATE * lmax) || !isfinite(area);
}

#endif
