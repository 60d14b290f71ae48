#include "potentials/membrane.h"

/* Degenerate when A <= AVI_TRI_DEGENERATE * (longest edge)^2: the relative
 * scale keeps the test independent of units. */
#define AVI_TRI_DEGENERATE 1e-14

double avi_membrane_init(avi_membrane *m, const double X[3][3], const avi_shell_material *mat)
{
    double e1[3], e2[3], e3[3], n[3];
    v3_sub(e1, X[1], X[0]);
    v3_sub(e2, X[2], X[0]);
    v3_sub(e3, X[2], X[1]);
    v3_cross(n, e1, e2);
    double nn = v3_norm(n), area = 0.5 * nn;
    double l1 = v3_dot(e1, e1), l2 = v3_dot(e2, e2), l3 = v3_dot(e3, e3);
    double lmax = fmax(l1, fmax(l2, l3));
    if (!(area > AVI_TRI_DEGENERATE * lmax) || !isfinite(area)) return 0.0;
    /* Orthonormal frame in the rest plane: t1 along e1, t2 = n x t1. Then
     * Dm = [[|e1|, e2.t1], [0, e2.t2]] with e2.t2 = 2 A / |e1| > 0. */
    double len1 = sqrt(l1);
    double t1[3], t2[3], nh[3];
    v3_scale(t1, e1, 1.0 / len1);
    v3_scale(nh, n, 1.0 / nn);
    v3_cross(t2, nh, t1);
    double a = len1, b = v3_dot(e2, t1), d = v3_dot(e2, t2);
    double det = a * d; /* 2 A */
    m->dm_inv[0] = 1.0 / a;
    m->dm_inv[1] = -b / det;
    m->dm_inv[2] = 0.0;
    m->dm_inv[3] = 1.0 / d;
    double E = mat->youngs, nu = mat->poisson;
    m->ah = area * mat->thickness;
    m->mu = E / (2.0 * (1.0 + nu));
    m->lambda = E * nu / (1.0 - nu * nu);
    return area;
}

double avi_membrane_energy(const avi_membrane *m, const double x[3][3])
{
    double F[3][2], E[3];
    avi_membrane_strain(m, x, F, E);
    double tr = E[0] + E[1];
    double trE2 = E[0] * E[0] + E[1] * E[1] + 2.0 * E[2] * E[2];
    return m->ah * (m->mu * trE2 + 0.5 * m->lambda * tr * tr);
}

/* With F = sum_a x_a beta_a^T (beta_a the rows of Dm^-1, beta_0 = -beta_1 -
 * beta_2) and u_a = F beta_a, the second variation of A0 h psi(E) gives the
 * 3x3 block
 *   H_ab = A0 h [ (beta_a^T S beta_b) I + mu (beta_a . beta_b) F F^T
 *                 + mu u_b u_a^T + lambda u_a u_b^T ],
 * the first term from S : d2E, the rest from dE : C : dE. */
void avi_membrane_hessian(const avi_membrane *m, const double x[3][3], double H[9][9])
{
    double F[3][2], E[3];
    avi_membrane_strain(m, x, F, E);
    const double *D = m->dm_inv;
    double mu = m->mu, lam = m->lambda, ah = m->ah;
    double tr = lam * (E[0] + E[1]);
    double S[2][2] = {{2.0 * mu * E[0] + tr, 2.0 * mu * E[2]}, {2.0 * mu * E[2], 2.0 * mu * E[1] + tr}};
    double beta[3][2] = {{-(D[0] + D[2]), -(D[1] + D[3])}, {D[0], D[1]}, {D[2], D[3]}};
    double u[3][3], FFt[3][3];
    for (int a = 0; a < 3; a++)
        for (int i = 0; i < 3; i++) u[a][i] = F[i][0] * beta[a][0] + F[i][1] * beta[a][1];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) FFt[i][j] = F[i][0] * F[j][0] + F[i][1] * F[j][1];
    for (int a = 0; a < 3; a++)
        for (int b = a; b < 3; b++) {
            const double *ba = beta[a], *bb = beta[b];
            double bsb = ba[0] * (S[0][0] * bb[0] + S[0][1] * bb[1]) + ba[1] * (S[1][0] * bb[0] + S[1][1] * bb[1]);
            double bdb = ba[0] * bb[0] + ba[1] * bb[1];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) {
                    double h = ah * ((i == j ? bsb : 0.0) + mu * bdb * FFt[i][j]
                                     + mu * u[b][i] * u[a][j] + lam * u[a][i] * u[b][j]);
                    H[3 * a + i][3 * b + j] = h;
                    H[3 * b + j][3 * a + i] = h;
                }
        }
}

double avi_triangle_inradius(const double X[3][3])
{
    double e1[3], e2[3], e3[3], n[3];
    v3_sub(e1, X[1], X[0]);
    v3_sub(e2, X[2], X[0]);
    v3_sub(e3, X[2], X[1]);
    v3_cross(n, e1, e2);
    double s = 0.5 * (v3_norm(e1) + v3_norm(e2) + v3_norm(e3));
    return s > 0.0 ? 0.5 * v3_norm(n) / s : 0.0;
}

/* The damping term's rest state: A's metric, with the material constants
 * recovered from the record (it stores A0 h with A0 = 1 / (2 det Dm^-1)). */
static int membrane_rest_from(const void *rec, const double A[][3], void *out)
{
    const avi_membrane *p = rec;
    avi_membrane *r = out;
    double thickness = p->ah * 2.0 * p->dm_inv[0] * p->dm_inv[3];
    avi_shell_material unit = {1.0, 0.0, 1.0, 1.0};
    double area = avi_membrane_init(r, A, &unit);
    if (!(area > 0.0)) return -1;
    r->ah = area * thickness;
    r->mu = p->mu;
    r->lambda = p->lambda;
    r->dt = p->dt;
    return 0;
}

static double membrane_inradius(const double X[][3]) { return avi_triangle_inradius(X); }

AVI_KIND_WRAP_FUNCS(membrane, avi_membrane, avi_membrane_energy, avi_membrane_gradient)
AVI_KIND_WRAP_HESSIAN(membrane, avi_membrane, 3, avi_membrane_hessian)

const avi_kind_desc avi_kind_membrane = {
    .name = "membrane",
    .step_powers = {1, -1, 0, 0},
    .record_size = sizeof(avi_membrane),
    .slots = 3,
    .vertices = 3,
    .flags = AVI_KIND_ELASTIC | AVI_KIND_DAMPED,
    .energy = membrane_energy_any,
    .gradient = membrane_gradient_any,
    .hessian = membrane_hessian_any,
    .rest_from = membrane_rest_from,
    .inradius = membrane_inradius,
};
