/* Compressible neo-Hookean tetrahedron:
 *   V = V0 [ mu/2 (tr C - 3) - mu ln J + lambda/2 (ln J)^2 ],
 * F = Ds Dm^-1 with Ds = [x1-x0, x2-x0, x3-x0], C = F^T F, J = det F. */
#ifndef AVI_TET_NEOHOOKEAN_H
#define AVI_TET_NEOHOOKEAN_H

#include <stdint.h>
#include "core/vec3.h"

typedef struct {
    uint32_t v[4];
    double dm_inv[9]; /* inverse rest edge matrix, row-major */
    double vmu;       /* V0 mu */
    double vlambda;   /* V0 lambda */
    double dt;
} avi_tet;

/* Rest data from rest positions X. Returns the signed rest volume; the
 * record is filled only when it is positive. */
double avi_tet_init(avi_tet *t, const double X[4][3], double mu, double lambda);
double avi_tet_energy(const avi_tet *t, const double x[4][3]);
void avi_tet_hessian(const avi_tet *t, const double x[4][3], double H[12][12]);
/* Inradius 3 V / (sum of face areas) of a tetrahedron. */
double avi_tet_inradius(const double X[4][3]);

/* Deformation gradient F (row-major) of the stencil. */
static inline void avi_tet_deformation(const avi_tet *t, const double x[4][3], double F[9])
{
    double ds[9];
    for (int i = 0; i < 3; i++) {
        ds[3 * i + 0] = x[1][i] - x[0][i];
        ds[3 * i + 1] = x[2][i] - x[0][i];
        ds[3 * i + 2] = x[3][i] - x[0][i];
    }
    m3_mul(F, ds, t->dm_inv);
}

/* g[a] = dV/dx_a. With J <= 0 the energy is undefined and g is NaN, which
 * the engine's blow-up check reports. */
static inline void avi_tet_gradient(const avi_tet *t, const double x[4][3], double g[4][3])
{
    double F[9];
    avi_tet_deformation(t, x, F);
    /* Columns of F and the cofactor matrix cof F = J F^-T, column by column. */
    const double f0[3] = {F[0], F[3], F[6]}, f1[3] = {F[1], F[4], F[7]}, f2[3] = {F[2], F[5], F[8]};
    double c0[3], c1[3], c2[3];
    v3_cross(c0, f1, f2);
    v3_cross(c1, f2, f0);
    v3_cross(c2, f0, f1);
    double J = v3_dot(f0, c0);
    /* V0 P = V0 mu F + V0 (lambda ln J - mu) F^-T */
    double s = (t->vlambda * log(J) - t->vmu) / J;
    double P[9] = {
        t->vmu * F[0] + s * c0[0], t->vmu * F[1] + s * c1[0], t->vmu * F[2] + s * c2[0],
        t->vmu * F[3] + s * c0[1], t->vmu * F[4] + s * c1[1], t->vmu * F[5] + s * c2[1],
        t->vmu * F[6] + s * c0[2], t->vmu * F[7] + s * c1[2], t->vmu * F[8] + s * c2[2],
    };
    /* dV/dDs = V0 P Dm^-T: column j is the gradient at vertex j+1. */
    const double *D = t->dm_inv;
    for (int i = 0; i < 3; i++) {
        const double *p = P + 3 * i;
        double g1 = p[0] * D[0] + p[1] * D[1] + p[2] * D[2];
        double g2 = p[0] * D[3] + p[1] * D[4] + p[2] * D[5];
        double g3 = p[0] * D[6] + p[1] * D[7] + p[2] * D[8];
        g[1][i] = g1; g[2][i] = g2; g[3][i] = g3;
        g[0][i] = -(g1 + g2 + g3);
    }
}

#endif
