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

/* Everything but the angle: theta = atan2(*ty, *tx) with tx = n1 . n2 and
 * ty = (n2 x n1) . e / |e| (midedge.h forms its tangents from them without
 * the atan2); theta is left NaN. */
static inline void hinge_frame(hinge_geom *h, const double x[4][3], double *tx, double *ty)
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
    *ty = v3_dot(c, h->e) / h->le;
    *tx = v3_dot(h->n1, h->n2);
    h->theta = NAN;
}

static inline void hinge_geometry(hinge_geom *h, const double x[4][3])
{
    double tx, ty;
    hinge_frame(h, x, &tx, &ty);
    double t = atan2(ty, tx);
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

/* Cross-product matrix: skew(a) b = a x b, written into columns [col, col+3)
 * of the 3x12 block J with factor s. */
static inline void hinge_add_skew(double J[3][12], int col, const double a[3], double s)
{
    J[0][col + 1] -= s * a[2]; J[0][col + 2] += s * a[1];
    J[1][col + 0] += s * a[2]; J[1][col + 2] -= s * a[0];
    J[2][col + 0] -= s * a[1]; J[2][col + 1] += s * a[0];
}

/* Hess theta (12x12, symmetric) at x, q = hinge_geometry(x) and s, gt from
 * hinge_theta_gradient, by differentiating that closed-form gradient (it is
 * equivalent to the expressions of Tamstorf and Grinspun 2013):
 *   d(n / |n|^2) = (I - 2 nh nh^T) / |n|^2 dn,   d|e| = eh . de,
 *   dn1 = de x f1 + e x df1,   dn2 = df2 x e + f2 x de,
 *   ds_w = (e . df_w + f_w . de - 2 s_w e . de) / |e|^2.
 * Both bending kinds use it (hinge.c, midedge_hessian.c). */
static inline void hinge_theta_hessian(const hinge_geom *q, const double x[4][3], const double s[2],
                                       const double gt[4][3], double Ht[12][12])
{
    double ee = q->le * q->le;
    double eh[3];
    v3_scale(eh, q->e, 1.0 / q->le);

    /* Jacobians (3x12) of n1 and n2 with respect to (x0, x1, x2, x3). */
    double Jn1[3][12] = {{0}}, Jn2[3][12] = {{0}};
    double x21[3], x13[3];
    v3_sub(x21, x[2], x[1]);
    v3_sub(x13, x[1], x[3]);
    hinge_add_skew(Jn1, 0, x21, 1.0);   /* dn1/dx0 = skew(x2 - x1) */
    hinge_add_skew(Jn1, 3, q->f1, -1.0); /* dn1/dx1 = -skew(f1) */
    hinge_add_skew(Jn1, 6, q->e, 1.0);   /* dn1/dx2 = skew(e) */
    hinge_add_skew(Jn2, 0, x13, 1.0);   /* dn2/dx0 = skew(x1 - x3) */
    hinge_add_skew(Jn2, 3, q->f2, 1.0);  /* dn2/dx1 = skew(f2) */
    hinge_add_skew(Jn2, 9, q->e, -1.0);  /* dn2/dx3 = -skew(e) */

    /* Dg2 = n1/|n1|^2 (d|e|) + |e| M1 Jn1 with M1 = (I - 2 nh1 nh1^T) / |n1|^2;
     * likewise Dg3. The row d|e| is (-eh, eh, 0, 0). */
    double Dg[4][3][12];
    const double *nv[2] = {q->n1, q->n2};
    const double nn[2] = {q->nn1, q->nn2};
    double (*Jn[2])[12] = {Jn1, Jn2};
    for (int w = 0; w < 2; w++) {
        const double *n = nv[w];
        double inv = 1.0 / nn[w];
        double M[3][3];
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) M[i][j] = ((i == j ? 1.0 : 0.0) - 2.0 * n[i] * n[j] * inv) * inv;
        double (*D)[12] = Dg[2 + w];
        for (int i = 0; i < 3; i++)
            for (int c = 0; c < 12; c++)
                D[i][c] = q->le * (M[i][0] * Jn[w][0][c] + M[i][1] * Jn[w][1][c] + M[i][2] * Jn[w][2][c]);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                D[i][j] -= n[i] * inv * eh[j];
                D[i][3 + j] += n[i] * inv * eh[j];
            }
    }

    /* Ds_w as 12-vectors. */
    double Ds[2][12] = {{0}};
    const double *f[2] = {q->f1, q->f2};
    for (int w = 0; w < 2; w++)
        for (int j = 0; j < 3; j++) {
            Ds[w][j] = (-q->e[j] - f[w][j] + 2.0 * s[w] * q->e[j]) / ee;
            Ds[w][3 + j] = (f[w][j] - 2.0 * s[w] * q->e[j]) / ee;
            Ds[w][6 + 3 * w + j] = q->e[j] / ee;
        }

    /* Dg0 = g2 Ds1 + (s1 - 1) Dg2 + g3 Ds2 + (s2 - 1) Dg3,
     * Dg1 = -g2 Ds1 - s1 Dg2 - g3 Ds2 - s2 Dg3. */
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 12; c++) {
            double a = gt[2][i] * Ds[0][c] + gt[3][i] * Ds[1][c];
            Dg[0][i][c] = a + (s[0] - 1.0) * Dg[2][i][c] + (s[1] - 1.0) * Dg[3][i][c];
            Dg[1][i][c] = -a - s[0] * Dg[2][i][c] - s[1] * Dg[3][i][c];
        }

    for (int r = 0; r < 12; r++)
        for (int c = r; c < 12; c++) {
            /* The exact Hessian is symmetric; averaging removes round-off. */
            Ht[r][c] = 0.5 * (Dg[r / 3][r % 3][c] + Dg[c / 3][c % 3][r]);
            Ht[c][r] = Ht[r][c];
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
