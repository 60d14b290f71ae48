/* Constant-strain membrane triangle, St. Venant-Kirchhoff, plane stress:
 *   V = A0 h [ mu tr(E^2) + lambda/2 tr(E)^2 ],  E = 1/2 (F^T F - I),
 * F (3x2) maps the rest triangle's own 2-D frame to the deformed triangle,
 * mu = E / (2 (1 + nu)) and the plane-stress lambda = E nu / (1 - nu^2). */
#ifndef AVI_MEMBRANE_H
#define AVI_MEMBRANE_H

#include <stdint.h>
#include "potentials/kind_desc.h"
#include "base/vec3.h"
#include "avi/model.h"

typedef struct {
    uint32_t v[3];
    double dm_inv[4]; /* inverse of the 2x2 rest edge matrix in the rest frame, row-major */
    double ah;        /* A0 h */
    double mu;        /* plane-stress Lame parameters */
    double lambda;
    double dt;
} avi_membrane;

/* Rest data from rest positions X; returns the rest area A0. The record is
 * filled only when the triangle is not degenerate (A0 > 0). */
double avi_membrane_init(avi_membrane *m, const double X[3][3], const avi_shell_material *mat);
double avi_membrane_energy(const avi_membrane *m, const double x[3][3]);
void avi_membrane_hessian(const avi_membrane *m, const double x[3][3], double H[9][9]);
/* Inradius A / s (s the semi-perimeter) of a triangle. */
double avi_triangle_inradius(const double X[3][3]);

/* F (3x2, F[i][k]) = Ds Dm^-1 and the Green strain E = (F^T F - I) / 2 as
 * (E00, E11, E01): the one strain of the energy, gradient and Hessian. */
static inline void avi_membrane_strain(const avi_membrane *m, const double x[3][3], double F[3][2], double E[3])
{
    const double *D = m->dm_inv;
    for (int i = 0; i < 3; i++) {
        double d1 = x[1][i] - x[0][i], d2 = x[2][i] - x[0][i];
        F[i][0] = d1 * D[0] + d2 * D[2];
        F[i][1] = d1 * D[1] + d2 * D[3];
    }
    double c00 = F[0][0] * F[0][0] + F[1][0] * F[1][0] + F[2][0] * F[2][0];
    double c11 = F[0][1] * F[0][1] + F[1][1] * F[1][1] + F[2][1] * F[2][1];
    double c01 = F[0][0] * F[0][1] + F[1][0] * F[1][1] + F[2][0] * F[2][1];
    E[0] = 0.5 * (c00 - 1.0);
    E[1] = 0.5 * (c11 - 1.0);
    E[2] = 0.5 * c01;
}

/* g[a] = dV/dx_a. With F = Ds Dm^-1 (3x2), S = 2 mu E + lambda tr(E) I and
 * P = F S, dV/dDs = A0 h P Dm^-T; vertex 0 takes minus the sum. */
static inline void avi_membrane_gradient(const avi_membrane *m, const double x[3][3], double g[3][3])
{
    const double *D = m->dm_inv;
    double F[3][2], E[3];
    avi_membrane_strain(m, x, F, E);
    double tr = m->lambda * (E[0] + E[1]);
    /* A0 h S */
    double s00 = m->ah * (2.0 * m->mu * E[0] + tr), s11 = m->ah * (2.0 * m->mu * E[1] + tr);
    double s01 = m->ah * 2.0 * m->mu * E[2];
    for (int i = 0; i < 3; i++) {
        double p0 = F[i][0] * s00 + F[i][1] * s01;
        double p1 = F[i][0] * s01 + F[i][1] * s11;
        double g1 = p0 * D[0] + p1 * D[1];
        double g2 = p0 * D[2] + p1 * D[3];
        g[1][i] = g1; g[2][i] = g2;
        g[0][i] = -(g1 + g2);
    }
}

/* The kind's row and descriptor (potentials/kind_desc.h). */
/* clang-format off */
#define AVI_KIND_ROW_MEMBRANE(X) X(AVI_KIND_MEMBRANE, avi_membrane, membranes, nmembrane, 3, 3, avi_membrane_gradient, avi_membrane_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED)
#define AVI_LANE_ROW_MEMBRANE(X) 
#define AVI_KIND_DESC_MEMBRANE avi_kind_membrane
/* clang-format on */
extern const avi_kind_desc avi_kind_membrane;

#endif
