/* The damping model of Kharevych et al. 2006, section 5.2: each elastic
 * potential's own energy, measured with the stencil's configuration A as the
 * rest state and evaluated at B, D(A, B) = V(B; rest := A), is a dissipation
 * potential; the damping impulse of a step is -k_D grad_B D(q_k, q_{k+1})
 * (explicit form: D(q_{k-1}, q_k)). D is invariant under translations and
 * rotations of B alone, so the impulse neither changes linear momentum nor,
 * applied at B, angular momentum. For a spring it is the classic -k_D k dl/dt. */
#ifndef AVI_SYNC_DAMPING_H
#define AVI_SYNC_DAMPING_H

#include "core/model_internal.h"

/* The potential kinds that damp (elastic ones; gravity does not). A stencil
 * view of one elastic potential. */
typedef struct {
    avi_kind kind;
    int n;             /* stencil size */
    const uint32_t *v; /* stencil vertices */
    const void *rec;   /* avi_spring, avi_membrane, avi_hinge or avi_tet */
} avi_elem;

/* Number of elastic potentials and the view of the e-th (springs, then
 * membranes, hinges, tetrahedra). */
static inline size_t avi_elem_count(const avi_model *m) { return m->nspring + m->nmembrane + m->nhinge + m->ntet; }
static inline avi_elem avi_elem_get(const avi_model *m, size_t e)
{
    avi_elem r;
    if (e < m->nspring) {
        r.kind = AVI_KIND_SPRING; r.n = 2; r.v = m->springs[e].v; r.rec = &m->springs[e];
        return r;
    }
    e -= m->nspring;
    if (e < m->nmembrane) {
        r.kind = AVI_KIND_MEMBRANE; r.n = 3; r.v = m->membranes[e].v; r.rec = &m->membranes[e];
        return r;
    }
    e -= m->nmembrane;
    if (e < m->nhinge) {
        r.kind = AVI_KIND_HINGE; r.n = 4; r.v = m->hinges[e].v; r.rec = &m->hinges[e];
        return r;
    }
    e -= m->nhinge;
    r.kind = AVI_KIND_TET; r.n = 4; r.v = m->tets[e].v; r.rec = &m->tets[e];
    return r;
}

/* Energy, gradient and Hessian of an elastic potential at x. */
double avi_elem_energy(const avi_elem *el, const double x[][3]);
void avi_elem_gradient(const avi_elem *el, const double x[][3], double g[][3]);
void avi_elem_hessian(const avi_elem *el, const double x[][3], double *H); /* (3n)^2, row-major */

/* D(A, B) and its derivatives in B. An element whose A is degenerate
 * (inverted tet, collapsed triangle or hinge) contributes nothing: 0 is
 * returned and g, H are left zero. */
double avi_damping_energy(const avi_elem *el, const double A[][3], const double B[][3]);
void avi_damping_gradient(const avi_elem *el, const double A[][3], const double B[][3], double g[][3]);
void avi_damping_hessian(const avi_elem *el, const double A[][3], const double B[][3], double *H);

/* For the explicit updates and the AVI event: adds s * grad_B D(x - dt v, x)
 * to g, with v the stencil's current velocities. */
void avi_damping_add(const avi_elem *el, const avi_vertex *V, const double x[][3], double dt, double s, double g[][3]);

#endif
