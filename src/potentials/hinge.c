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

/* H = 2k (grad theta grad theta^T + (theta - theta0) Hess theta), Hess theta
 * from hinge_geometry.h. */
void avi_hinge_hessian(const avi_hinge *h, const double x[4][3], double H[12][12])
{
    hinge_geom q;
    hinge_geometry(&q, x);
    double s[2], gt[4][3], Ht[12][12];
    hinge_theta_gradient(&q, s, gt);
    hinge_theta_hessian(&q, x, s, gt, Ht);
    double d = hinge_delta(q.theta, h->theta0);
    double k2 = 2.0 * h->k;
    for (int r = 0; r < 12; r++)
        for (int c = r; c < 12; c++) {
            double v = k2 * (gt[r / 3][r % 3] * gt[c / 3][c % 3] + d * Ht[r][c]);
            H[r][c] = v;
            H[c][r] = v;
        }
}

/* The damping term's rest state: the stiffness kept, A's angle as rest angle. */
static int hinge_rest_from(const void *rec, const double A[][3], void *out)
{
    avi_hinge *h = out;
    *h = *(const avi_hinge *)rec;
    h->theta0 = avi_hinge_angle(A);
    return 0;
}

AVI_KIND_WRAP_FUNCS(hinge, avi_hinge, avi_hinge_energy, avi_hinge_gradient)
AVI_KIND_WRAP_HESSIAN(hinge, avi_hinge, 4, avi_hinge_hessian)

const avi_kind_desc avi_kind_hinge = {
    .name = "hinge",
    .step_powers = {1, -1, 2, 0},
    .record_size = sizeof(avi_hinge),
    .slots = 4,
    .vertices = 4,
    .flags = AVI_KIND_ELASTIC | AVI_KIND_DAMPED,
    .energy = hinge_energy_any,
    .gradient = hinge_gradient_any,
    .hessian = hinge_hessian_any,
    .rest_from = hinge_rest_from,
};
