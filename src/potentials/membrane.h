/* Constant-strain membrane triangle, St. Venant-Kirchhoff, plane stress:
 *   V = A0 h [ mu tr(E^2) + lambda/2 tr(E)^2 ],  E = 1/2 (F^T F - I),
 * F (3x2) maps the rest triangle's own 2-D frame to the deformed triangle,
 * mu = E / (2 (1 + nu)) and the plane-stress lambda = E nu / (1 - nu^2). */
#ifndef AVI_MEMBRANE_H
#define AVI_MEMBRANE_H

#include <stdint.h>
#include "core/vec3.h"
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
void avi_membrane_gradient(const avi_membrane *m, const double x[3][3], double g[3][3]);
void avi_membrane_hessian(const avi_membrane *m, const double x[3][3], double H[9][9]);
/* Inradius A / s (s the semi-perimeter) of a triangle. */
double avi_triangle_inradius(const double X[3][3]);

#endif
