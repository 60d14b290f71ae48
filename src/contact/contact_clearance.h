/* Whether a model with contact may start: at its initial positions no two
 * contact triangles intersect and no vertex-face or edge-edge stencil the
 * contact manager would form (contact/contact_manager.h: a point and a
 * triangle without it, two edges sharing no vertex, within one body as
 * between bodies) is within the inner thickness eta_inf. Such a stencil
 * would need infinitely many layers (eta_l > eta_inf for every l), so the
 * run would fail on its first contact events ("needs more than N layers",
 * or a non-finite distance at d = 0).
 *
 * Runs on a model whose state is set, before an engine exists, with the
 * manager's own broad phase and exact distances. */
#ifndef AVI_CONTACT_CLEARANCE_H
#define AVI_CONTACT_CLEARANCE_H

#include "avi/model.h"

#include <stddef.h>
#include <stdint.h>

enum avi_clearance_kind {
    AVI_CLEARANCE_OK = 0,
    AVI_CLEARANCE_INTERSECT, /* edge v[0] v[1] of contact triangle tri[0] meets contact triangle tri[1] */
    AVI_CLEARANCE_VF,        /* point v[0] is d from contact triangle tri[1] */
    AVI_CLEARANCE_EE         /* edges v[0] v[1] and v[2] v[3] are d apart */
};

typedef struct {
    int kind;       /* enum avi_clearance_kind */
    uint32_t v[4];  /* model vertex indices */
    size_t tri[2];  /* indices into the model's contact triangles */
    double d;       /* the distance (0 for an intersection) */
} avi_clearance;

/* The first violation in this order: an intersection (the first pair of
 * triangles in index order), the vertex-face stencil of smallest
 * distance <= eta_inf, the edge-edge stencil of smallest distance
 * <= eta_inf. 0 with c->kind set (AVI_CLEARANCE_OK when none), -1 when out
 * of memory. */
int avi_contact_clearance(const avi_model *m, avi_clearance *c);

#endif
