#include "distance_hessian.h"

#include "contact/distance_edge_edge.h"
#include "contact/distance_point_triangle.h"

#include <string.h>

/* Derivation (f = d^2 / 2 = min_s |w(s)|^2 / 2, w = sum_k c_k(s) x_k):
 *   f_xx(k,l) = c_k c_l I,  f_ss = G,  f_sx(j,l) = c_l E_j^T + dc_jl w^T,
 *   d2f/dx2 = f_xx - f_xs G^-1 f_sx      (s* eliminated implicitly),
 *   d2d/dx2 = (d2f/dx2 - g g^T) / d,     g_k = c_k u.
 * With w = d u and u normal to every E_j, the O(1/d) part collapses to
 * c_k c_l (I - E G^-1 E^T - u u^T) / d = c_k c_l Q / d. */
void avi_dist_pair_hessian(const avi_dist_pair *q, const double x[4][3], double H[12][12])
{
    const int m = q->m;
    const double d = q->d, *u = q->u, *c = q->c;
    double E[2][3] = {{0}}, Gi[2][2] = {{0}};
    for (int j = 0; j < m; j++)
        for (int k = 0; k < 4; k++) v3_axpy(E[j], q->dc[j][k], x[k]);
    if (m == 1) {
        Gi[0][0] = 1.0 / v3_dot(E[0], E[0]);
    } else if (m == 2) {
        double g00 = v3_dot(E[0], E[0]), g01 = v3_dot(E[0], E[1]), g11 = v3_dot(E[1], E[1]);
        /* Lagrange's identity: the determinant without cancellation. */
        double cr[3];
        v3_cross(cr, E[0], E[1]);
        double idet = 1.0 / v3_dot(cr, cr);
        Gi[0][0] = g11 * idet; Gi[1][1] = g00 * idet; Gi[0][1] = Gi[1][0] = -g01 * idet;
    }
    /* Gd[i][k] = sum_j G^-1_ij dc_jk; a_k = sum_i E_i Gd[i][k]. */
    double Gd[2][4] = {{0}}, a[4][3] = {{0}};
    for (int i = 0; i < m; i++)
        for (int k = 0; k < 4; k++) {
            for (int j = 0; j < m; j++) Gd[i][k] += Gi[i][j] * q->dc[j][k];
            v3_axpy(a[k], Gd[i][k], E[i]);
        }
    double Q[3][3] = {{0}};
    if (m < 2) {
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                Q[i][j] = (i == j ? 1.0 : 0.0) - u[i] * u[j];
                if (m == 1) Q[i][j] -= E[0][i] * E[0][j] * Gi[0][0];
            }
    }
    double id = 1.0 / d;
    for (int k = 0; k < 4; k++)
        for (int l = 0; l < 4; l++) {
            double gam = 0.0;
            for (int i = 0; i < m; i++) gam += q->dc[i][k] * Gd[i][l];
            double cq = c[k] * c[l] * id, du = d * gam;
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    H[3 * k + i][3 * l + j] = cq * Q[i][j] - c[k] * a[l][i] * u[j]
                                              - c[l] * u[i] * a[k][j] - du * u[i] * u[j];
        }
}

/* The single primitives place their points in a four-point stencil. */
static void stencil(double x[4][3], const double *p0, const double *p1, const double *p2,
                    const double *p3)
{
    const double *p[4] = {p0, p1, p2, p3};
    for (int k = 0; k < 4; k++)
        for (int i = 0; i < 3; i++) x[k][i] = p[k] ? p[k][i] : 0.0;
}

static void copy_hessian(int n, double *Hn, const double H[12][12])
{
    for (int i = 0; i < 3 * n; i++) memcpy(Hn + 3 * n * i, H[i], sizeof(double) * 3 * n);
}

static void pp_pair(avi_dist_pair *q, double x[4][3], const double p[3], const double r[3])
{
    stencil(x, p, r, NULL, NULL);
    avi_pair_point_point(q, (const double (*)[3])x, 0, 1);
}

double avi_point_point_distance(const double p[3], const double q[3])
{
    double w[3];
    v3_sub(w, p, q);
    return v3_norm(w);
}

double avi_point_point_distance_gradient(const double p[3], const double q[3], double g[2][3])
{
    double x[4][3], G[4][3];
    avi_dist_pair pr;
    pp_pair(&pr, x, p, q);
    avi_dist_pair_gradient(&pr, G);
    memcpy(g, G, sizeof(double) * 6);
    return pr.d;
}

double avi_point_point_distance_hessian(const double p[3], const double q[3], double H[6][6])
{
    double x[4][3], H12[12][12];
    avi_dist_pair pr;
    pp_pair(&pr, x, p, q);
    avi_dist_pair_hessian(&pr, (const double (*)[3])x, H12);
    copy_hessian(2, &H[0][0], (const double (*)[12])H12);
    return pr.d;
}

static void pl_pair(avi_dist_pair *q, double x[4][3], const double p[3], const double a[3],
                    const double b[3])
{
    stencil(x, p, a, b, NULL);
    double e[3], r[3];
    v3_sub(e, b, a);
    v3_sub(r, p, a);
    avi_pair_point_line(q, (const double (*)[3])x, 0, 1, 2, v3_dot(r, e) / v3_dot(e, e));
}

double avi_point_line_distance(const double p[3], const double a[3], const double b[3])
{
    double x[4][3];
    avi_dist_pair pr;
    pl_pair(&pr, x, p, a, b);
    return pr.d;
}

double avi_point_line_distance_gradient(const double p[3], const double a[3], const double b[3],
                                        double g[3][3])
{
    double x[4][3], G[4][3];
    avi_dist_pair pr;
    pl_pair(&pr, x, p, a, b);
    avi_dist_pair_gradient(&pr, G);
    memcpy(g, G, sizeof(double) * 9);
    return pr.d;
}

double avi_point_line_distance_hessian(const double p[3], const double a[3], const double b[3],
                                       double H[9][9])
{
    double x[4][3], H12[12][12];
    avi_dist_pair pr;
    pl_pair(&pr, x, p, a, b);
    avi_dist_pair_hessian(&pr, (const double (*)[3])x, H12);
    copy_hessian(3, &H[0][0], (const double (*)[12])H12);
    return pr.d;
}

static void pf_pair(avi_dist_pair *q, double x[4][3], const double p[3], const double t0[3],
                    const double t1[3], const double t2[3])
{
    stencil(x, p, t0, t1, t2);
    avi_pair_point_plane(q, (const double (*)[3])x);
}

double avi_point_plane_distance(const double p[3], const double t0[3], const double t1[3],
                                const double t2[3])
{
    double x[4][3];
    avi_dist_pair pr;
    pf_pair(&pr, x, p, t0, t1, t2);
    return pr.d;
}

double avi_point_plane_distance_gradient(const double p[3], const double t0[3], const double t1[3],
                                         const double t2[3], double g[4][3])
{
    double x[4][3];
    avi_dist_pair pr;
    pf_pair(&pr, x, p, t0, t1, t2);
    avi_dist_pair_gradient(&pr, g);
    return pr.d;
}

double avi_point_plane_distance_hessian(const double p[3], const double t0[3], const double t1[3],
                                        const double t2[3], double H[12][12])
{
    double x[4][3];
    avi_dist_pair pr;
    pf_pair(&pr, x, p, t0, t1, t2);
    avi_dist_pair_hessian(&pr, (const double (*)[3])x, H);
    return pr.d;
}

static void ll_pair(avi_dist_pair *q, double x[4][3], const double a0[3], const double a1[3],
                    const double b0[3], const double b1[3])
{
    stencil(x, a0, a1, b0, b1);
    double ea[3], eb[3], n[3], s, t;
    v3_sub(ea, a1, a0);
    v3_sub(eb, b1, b0);
    v3_cross(n, ea, eb);
    double nn = v3_dot(n, n);
    avi_line_line_params((const double (*)[3])x, n, nn, &s, &t);
    avi_pair_line_line(q, (const double (*)[3])x, n, nn, s, t);
}

double avi_line_line_distance(const double a0[3], const double a1[3], const double b0[3],
                              const double b1[3])
{
    double x[4][3];
    avi_dist_pair pr;
    ll_pair(&pr, x, a0, a1, b0, b1);
    return pr.d;
}

double avi_line_line_distance_gradient(const double a0[3], const double a1[3], const double b0[3],
                                       const double b1[3], double g[4][3])
{
    double x[4][3];
    avi_dist_pair pr;
    ll_pair(&pr, x, a0, a1, b0, b1);
    avi_dist_pair_gradient(&pr, g);
    return pr.d;
}

double avi_line_line_distance_hessian(const double a0[3], const double a1[3], const double b0[3],
                                      const double b1[3], double H[12][12])
{
    double x[4][3];
    avi_dist_pair pr;
    ll_pair(&pr, x, a0, a1, b0, b1);
    avi_dist_pair_hessian(&pr, (const double (*)[3])x, H);
    return pr.d;
}

double avi_pt_distance_hessian(const double x[4][3], double H[12][12])
{
    avi_dist_pair q;
    avi_pt_pair(x, &q);
    avi_dist_pair_hessian(&q, x, H);
    return q.d;
}

double avi_ee_distance_hessian(const double x[4][3], double H[12][12])
{
    avi_dist_pair q;
    avi_ee_pair(x, &q);
    avi_dist_pair_hessian(&q, x, H);
    return q.d;
}
