/* Discrete-shell bending hinge (Grinspun et al. 2003):
 *   V = k (theta - theta0)^2,  k = k_b 3 |e0|^2 / A0e,  k_b = E h^3 / (24 (1 - nu^2)),
 * theta the signed dihedral (bending) angle across edge (v0, v1) between
 * triangles (v0, v1, v2) and (v1, v0, v3), A0e the rest area of both. */
#ifndef AVI_HINGE_H
#define AVI_HINGE_H

#include <stdint.h>
#include "potentials/kind_desc.h"
#include "base/vec3.h"
#include "avi/model.h"

typedef struct {
    uint32_t v[4];
    double theta0; /* rest angle */
    double k;
    double dt;
} avi_hinge;

/* Rest data from rest positions X; returns 0, or -1 when a wing triangle is
 * degenerate (the record is then untouched). */
int avi_hinge_init(avi_hinge *h, const double X[4][3], const avi_shell_material *mat);
/* Signed bending angle in (-pi, pi]; 0 for a flat hinge. */
double avi_hinge_angle(const double x[4][3]);
double avi_hinge_energy(const avi_hinge *h, const double x[4][3]);
void avi_hinge_gradient(const avi_hinge *h, const double x[4][3], double g[4][3]);
void avi_hinge_hessian(const avi_hinge *h, const double x[4][3], double H[12][12]);

/* The kind's row and descriptor (potentials/kind_desc.h). */
/* clang-format off */
#define AVI_KIND_ROW_HINGE(X) X(AVI_KIND_HINGE, avi_hinge, hinges, nhinge, 4, 4, avi_hinge_gradient, avi_hinge_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED)
#define AVI_LANE_ROW_HINGE(X) 
#define AVI_KIND_DESC_HINGE avi_kind_hinge
/* clang-format on */
extern const avi_kind_desc avi_kind_hinge;

#endif
