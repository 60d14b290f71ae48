/* The Hessian of the mid-edge bending triangle (potentials/midedge.h) in
 * all 9 slots, edge DOFs included: what the implicit synchronous
 * integrators and damping (core/damping.c) assemble. */
#ifndef AVI_MIDEDGE_HESSIAN_H
#define AVI_MIDEDGE_HESSIAN_H

#include "potentials/midedge.h"

/* d2V/dx2 at x, row-major over (slot, component); a copied slot's rows
 * and columns and a DOF record's components 1 and 2 are zero. */
void avi_midedge_hessian(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3],
                         double H[3 * AVI_MIDEDGE_SLOTS][3 * AVI_MIDEDGE_SLOTS]);

#endif
