#include "potentials/hinge.h"
#include "potentials/hinge_geometry.h"

int avi_hinge_init(avi_hinge *h, const double X[4][3], const avi_shell_material *mat)
{
    if (wing_degenerate(X[0], X[1], X[2]) || wing_degenerate(X[1], X[0], X[3])) return -1;
    hinge_geom g;
    hinge_geometry(&g, X);
    if (!(g.le > 0.0)) return -1;
    double nu = mat->poisson, t = mat->thickness;
    double kb = mat->youngs * t * t * t / (24.0 * (1.0 - nu * nu));
    double area = 0.5 * (sqrt(g.nn1) + sqrt(g.nn2)); /* A0e: both wings */
    h->theta0 = g.theta;
    h->k = kb * 3.0 * g.le * g.le / area;
    return 0;
}

double avi_hinge_angle(const double x[4][3])
{
    hinge_geom g;
    hinge_geometry(&g, x);
    return g.theta;
}

double avi_hinge_energy(const avi_hinge *h, const double x[4][3])
{
    double d = hinge_delta(avi_hinge_angle(x), h->theta0);
    return h->k * d * d;
}

/* A wing collapsed to zero area in the current state has no normal: the
 * gradient is then non-finite, which the engine's blow-up check reports. */
void avi_hinge_gradient(const avi_hinge *h, const double x[4][3], double g[4][3])
{
    hinge_geom q;
    hinge_geometry(&q, x);
    double s[2], gt[4][3];
    hinge_theta_gradient(&q, s, gt);
    double c = 2.0 * h->k * hinge_delta(q.theta, h->theta0);
    for (int a = 0; a < 4; a++) v3_scale(g[a], gt[a], c);
}

/* Cross-product matrix: skew(a) b = a x b, written into columns [col, col+3)
 * of the 3x12 block J with factor s. */
static inline void add_skew(double J[3][12], int col, const double a[3], double s)
{
    J[0][col + 1] -= s * a[2]; J[0][col + 2] += s * a[1];
    J[1][col + 0] += s * a[2]; J[1][col + 2] -= s * a[0];
    J[2][col + 0] -= s * a[1]; J[2][col + 1] += s * a[0];
}

/* Hessian of theta by differentiating the closed-form gradient above (it is
 * equivalent to the expressions of Tamstorf and Grinspun 2013):
 *   d(n / |n|^2) = (I - 2 nh nh^T) / |n|^2 dn,   d|e| = eh . de,
 *   dn1 = de x f1 + e x df1,   dn2 = df2 x e + f2 x de,
 *   ds_w = (e . df_w + f_w . de - 2 s_w e . de) / |e|^2,
 * then  H = 2k (grad theta grad theta^T + (theta - theta0) Hess theta). */
void avi_hinge_hessian(const avi_hinge *h, const double x[4][3], double H[12][12])
{
    hinge_geom q;
    hinge_geometry(&q, x);
    double s[2], gt[4][3];
    hinge_theta_gradient(&q, s, gt);
    double ee = q.le * q.le;
    double eh[3];
    v3_scale(eh, q.e, 1.0 / q.le);

    /* Jacobians (3x12) of n1 and n2 with respect to (x0, x1, x2, x3). */
    double Jn1[3][12] = {{0}}, Jn2[3][12] = {{0}};
    double x21[3], x13[3];
    v3_sub(x21, x[2], x[1]);
    v3_sub(x13, x[1], x[3]);
    add_skew(Jn1, 0, x21, 1.0);   /* dn1/dx0 = skew(x2 - x1) */
    add_skew(Jn1, 3, q.f1, -1.0); /* dn1/dx1 = -skew(f1) */
    add_skew(Jn1, 6, q.e, 1.0);   /* dn1/dx2 = skew(e) */
    add_skew(Jn2, 0, x13, 1.0);   /* dn2/dx0 = skew(x1 - x3) */
    add_skew(Jn2, 3, q.f2, 1.0);  /* dn2/dx1 = skew(f2) */
    add_skew(Jn2, 9, q.e, -1.0);  /* dn2/dx3 = -skew(e) */

    /* Dg2 = n1/|n1|^2 (d|e|) + |e| M1 Jn1 with M1 = (I - 2 nh1 nh1^T) / |n1|^2;
     * likewise Dg3. The row d|e| is (-eh, eh, 0, 0). */
    double Dg[4][3][12];
    const double *nv[2] = {q.n1, q.n2};
    const double nn[2] = {q.nn1, q.nn2};
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
                D[i][c] = q.le * (M[i][0] * Jn[w][0][c] + M[i][1] * Jn[w][1][c] + M[i][2] * Jn[w][2][c]);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                D[i][j] -= n[i] * inv * eh[j];
                D[i][3 + j] += n[i] * inv * eh[j];
            }
    }

    /* Ds_w as 12-vectors. */
    double Ds[2][12] = {{0}};
    const double *f[2] = {q.f1, q.f2};
    for (int w = 0; w < 2; w++)
        for (int j = 0; j < 3; j++) {
            Ds[w][j] = (-q.e[j] - f[w][j] + 2.0 * s[w] * q.e[j]) / ee;
            Ds[w][3 + j] = (f[w][j] - 2.0 * s[w] * q.e[j]) / ee;
            Ds[w][6 + 3 * w + j] = q.e[j] / ee;
        }

    /* Dg0 = g2 Ds1 + (s1 - 1) Dg2 + g3 Ds2 + (s2 - 1) Dg3,
     * Dg1 = -g2 Ds1 - s1 Dg2 - g3 Ds2 - s2 Dg3. */
    for (int i = 0; i < 3; i++)
        for (int c = 0; c < 12; c++) {
            double a = gt[2][i] * Ds[0][c] + gt[3][i] * Ds[1][c];
            Dg[0][i][c] = a + (s[0] - 1.0) * Dg[2][i][c] + (s[1] - 1.0) * Dg[3][i][c];
            Dg[1][i][c] = -a - s[0] * Dg[2][i][c] - s[1] * Dg[3][i][c];
        }

    double d = hinge_delta(q.theta, h->theta0);
    double k2 = 2.0 * h->k;
    for (int r = 0; r < 12; r++)
        for (int c = r; c < 12; c++) {
            /* The exact Hessian is symmetric; averaging removes round-off. */
            double hs = 0.5 * (Dg[r / 3][r % 3][c] + Dg[c / 3][c % 3][r]);
            double v = k2 * (gt[r / 3][r % 3] * gt[c / 3][c % 3] + d * hs);
            H[r][c] = v;
            H[c][r] = v;
        }
}
