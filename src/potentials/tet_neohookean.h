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
 * the engine's blow-up check reports. Written column by column so the
 * compiler keeps everything in registers: the columns of F are
 * f_k = sum_j Dm^-1[j][k] (x_{j+1} - x_0), those of J F^-T are
 * c = (f1 x f2, f2 x f0, f0 x f1), V0 P = V0 mu F + V0 (lambda ln J - mu) F^-T,
 * and g_{j+1} = sum_k (V0 P)_k Dm^-1[j][k]. */
static inline void avi_tet_gradient(const avi_tet *t, const double x[4][3], double g[4][3])
{
    const double *D = t->dm_inv;
    double e0[3], e1[3], e2[3];
    v3_sub(e0, x[1], x[0]);
    v3_sub(e1, x[2], x[0]);
    v3_sub(e2, x[3], x[0]);
    double f[3][3], c[3][3];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) f[k][i] = D[k] * e0[i] + D[3 + k] * e1[i] + D[6 + k] * e2[i];
    v3_cross(c[0], f[1], f[2]);
    v3_cross(c[1], f[2], f[0]);
    v3_cross(c[2], f[0], f[1]);
    double J = v3_dot(f[0], c[0]);
    /* lambda = 0 (Poisson ratio 0) needs no log; an inverted or flat tet
     * (J <= 0) still gets log's NaN / -inf, which the blow-up check sees. */
    double vl = t->vlambda != 0.0 || !(J > 0.0) ? t->vlambda * log(J) : 0.0;
    double s = (vl - t->vmu) / J;
    double p[3][3];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) p[k][i] = t->vmu * f[k][i] + s * c[k][i];
    for (int i = 0; i < 3; i++) {
        double g1 = p[0][i] * D[0] + p[1][i] * D[1] + p[2][i] * D[2];
        double g2 = p[0][i] * D[3] + p[1][i] * D[4] + p[2][i] * D[5];
        double g3 = p[0][i] * D[6] + p[1][i] * D[7] + p[2][i] * D[8];
        g[1][i] = g1;
        g[2][i] = g2;
        g[3][i] = g3;
        g[0][i] = -(g1 + g2 + g3);
    }
}

#endif
