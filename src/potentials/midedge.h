/* Mid-edge-normal bending triangle with one rotation DOF per edge
 * (Grinspun, Gingold, Reisman and Zorin 2006; Weischedel, Tsui, Doerfler and
 * Zorin 2012; the tan director term of Chen et al.'s "better bending", as
 * libshell's MidedgeAngleTanFormulation describes it). Linearized about a flat plate
 * it is the Morley element, which converges on any triangulation
 * (docs/research/bending/README.md, sections 2.4 and 4).
 *
 * Triangle (x0, x1, x2), edge i opposite x_i. Each edge carries a director
 * rotated by phi_e about the edge, away from the bisector of the two face
 * normals; its angle from this face's normal towards the edge's outward
 * in-plane normal is
 *   alpha_i = -theta_i / 2 + s_i phi_e   (interior edge, theta the hinge angle),
 *   alpha_i = s_i phi_e                  (free boundary edge: theta := 0),
 *   alpha_i = -theta_g                   (clamped boundary edge: the angle to a
 *                                          frozen ghost face, so the director
 *                                          stays at its rest direction; no DOF),
 * s_i = +-1 the orientation of edge i against the edge's global direction.
 * With II_i = 2 h_i tan(alpha_i) (h_i the altitude onto edge i) the second
 * fundamental form in the edge basis (x1 - x0, x2 - x0) is
 *   b = [[II0 + II1, II0], [II0, II0 + II2]],
 * and the energy is Koiter's bending density (D = E h^3 / (12 (1 - nu^2)))
 *   V = Abar D/2 [nu tr(M)^2 + (1 - nu) tr(M^2)],  M = abar^-1 (b - bbar).
 *
 * tan rather than sin: with sin, a strongly driven graded strip (5 %
 * pre-stretch released, tests/physics/graded_models.h) let edge DOFs spin
 * through full turns and folds pass 180 degrees; tan's energy diverges as a
 * director nears its face, and past 90 degrees the gradient is NaN, which the
 * engine reports as a blow-up naming the element.
 *
 * Stencil: 9 records. Slots 0-2 the triangle, 3 + i the vertex across edge i
 * (interior), the ghost record (clamped) or a copy of slot i (free: unread),
 * 6 + i edge i's DOF record (x[0] = phi) or a copy of slot i (no DOF). A
 * copied slot always gets a zero gradient. */
#ifndef AVI_MIDEDGE_H
#define AVI_MIDEDGE_H

#include <stdint.h>
#include "potentials/kind_desc.h"
#include "base/vec3.h"
#include "avi/model.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

enum { AVI_MIDEDGE_INTERIOR = 0, AVI_MIDEDGE_FREE = 1, AVI_MIDEDGE_CLAMPED = 2 };

#define AVI_MIDEDGE_SLOTS 9

typedef struct {
    uint32_t v[AVI_MIDEDGE_SLOTS];
    uint8_t mode[3];  /* per edge: AVI_MIDEDGE_INTERIOR / FREE / CLAMPED */
    int8_t sign[3];   /* s_i; 0: the edge has no DOF */
    double P[3];      /* abar^-1: entries 00, 01, 11 */
    double bbar[3];   /* rest b: 00, 01, 11 */
    double ka;        /* Abar D / 2 */
    double nu;
    double dt;
} avi_midedge;

/* tan(alpha_i) of edge i (mode, sign s_i, DOF position phi) from its hinge's
 * tx = n1 . n2 and ty = (n2 x n1) . e / |e| (hinge_frame), without forming
 * theta = atan2(ty, tx): with psi = s_i phi, T = tan(theta / 2) and
 * r = |n1| |n2| = sqrt(tx^2 + ty^2), the half-angle tangent identity
 *   tan(theta / 2) = ty / (r + tx) = (r - tx) / ty
 * (the first where tx >= 0, the second where it would cancel) and the
 * tangent subtraction formula
 *   tan(psi - theta / 2) = (tan psi - T) / (1 + T tan psi)
 * (Abramowitz and Stegun 1964, section 4.3); a clamped edge's
 * tan(-theta) = -ty / tx. The director is past 90 degrees (NaN, as in
 * second_form) exactly where cos(alpha) <= 0: 1 + T tan psi <= 0 for an
 * interior edge with |psi| < pi / 2 (cos(theta / 2) > 0 for |theta| < pi),
 * tx <= 0 for a clamped one. The rest (|psi| >= pi / 2, or a wing folded
 * onto its face: theta = pi) takes the angle itself. One libm call (tan psi),
 * none where psi = 0 (no DOF) or the edge is clamped. Shared by the
 * gradients (midedge.c) and the Hessian (midedge_hessian.c) so that all of
 * them form the same bits. */
static inline double avi_midedge_tan_alpha(int mode, int sign, double phi, double tx, double ty)
{
    double psi = sign ? sign * phi : 0.0;
    if (mode == AVI_MIDEDGE_FREE) return fabs(psi) < 0.5 * M_PI ? (psi == 0.0 ? psi : tan(psi)) : NAN;
    if (mode == AVI_MIDEDGE_CLAMPED) return tx > 0.0 ? -ty / tx : tx == 0.0 && ty == 0.0 ? 0.0 : NAN; /* atan2(0, 0) = 0 */
    if (fabs(psi) < 0.5 * M_PI && !(tx < 0.0 && ty == 0.0)) {
        double r = sqrt(tx * tx + ty * ty);
        /* r = 0 (a wing without area): theta = atan2(0, 0) = 0 */
        double T = tx >= 0.0 ? (r + tx > 0.0 ? ty / (r + tx) : 0.0) : (r - tx) / ty;
        double tp = psi == 0.0 ? psi : tan(psi), d = 1.0 + T * tp;
        return d > 0.0 ? (tp - T) / d : NAN;
    }
    double t = atan2(ty, tx), alpha = -0.5 * (t == -M_PI ? M_PI : t) + psi;
    return fabs(alpha) < 0.5 * M_PI ? tan(alpha) : NAN;
}

/* Rest data (abar, bbar, Abar D / 2) from rest positions X of the 9 slots
 * (DOF slots at phi = 0); v, mode and sign must be set. Returns 0, or -1
 * when the triangle or a wing across an interior or clamped edge is
 * degenerate. */
int avi_midedge_init(avi_midedge *p, const double X[AVI_MIDEDGE_SLOTS][3], const avi_shell_material *mat);
/* The energy; with AVX2 the three edges' hinge frames in lanes, bitwise
 * avi_midedge_energy_scalar (tests/unit/test_midedge_lanes.c). */
double avi_midedge_energy(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3]);
double avi_midedge_energy_scalar(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3]);
/* With AVX2 the three edges' terms go in the lanes of one register each,
 * bitwise the scalar arithmetic of avi_midedge_gradient_scalar. */
void avi_midedge_gradient(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double g[AVI_MIDEDGE_SLOTS][3]);
void avi_midedge_gradient_scalar(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3],
                                 double g[AVI_MIDEDGE_SLOTS][3]);
#ifdef __AVX2__
/* The same from and into registers, as the engine's event lanes hold the
 * records: x[a] = slot a's (x, y, z, any: lane 3 is not read), g[a] gets
 * (x, y, z, 0). */
void avi_midedge_gradient_lanes(const avi_midedge *p, const __m256d x[AVI_MIDEDGE_SLOTS], __m256d g[AVI_MIDEDGE_SLOTS]);
#endif
/* Largest omega^2 of the stencil with per-slot inverse masses im: the
 * Gauss-Newton Hessian J^T (d2V/dII2) J at x, exact at rest (where
 * dV/dII = 0), as max eig of a 3x3 matrix. */
double avi_midedge_omega2(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], const double im[AVI_MIDEDGE_SLOTS]);

/* The kind's row and descriptor (potentials/kind_desc.h). */
/* clang-format off */
#define AVI_KIND_ROW_MIDEDGE(X) X(AVI_KIND_MIDEDGE, avi_midedge, midedges, nmidedge, AVI_MIDEDGE_SLOTS, 6, avi_midedge_gradient, avi_midedge_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED)
#define AVI_LANE_ROW_MIDEDGE(X) X(AVI_KIND_MIDEDGE, avi_midedge, avi_midedge_gradient_lanes)
#define AVI_KIND_DESC_MIDEDGE avi_kind_midedge
/* clang-format on */
extern const avi_kind_desc avi_kind_midedge;

#endif
