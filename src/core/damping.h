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
    const void *rec;   /* the record, of the kind's type */
} avi_elem;

/* Number of damped potentials (kinds with AVI_KIND_DAMPED, core/kinds.h)
 * and the view of the e-th (kinds in rank order, then index order). */
static inline size_t avi_elem_count(const avi_model *m)
{
    size_t n = 0;
#define AVI_ELEM_COUNT(K, type, array, count, slots, vertices, gradient, energy, flags) \
    if ((flags) & AVI_KIND_DAMPED) n += m->count;
    AVI_POTENTIAL_KINDS(AVI_ELEM_COUNT)
#undef AVI_ELEM_COUNT
    return n;
}
static inline avi_elem avi_elem_get(const avi_model *m, size_t e)
{
    avi_elem r = {AVI_KIND_COUNT, 0, NULL, NULL};
#define AVI_ELEM_GET(K, type, array, count, slots, vertices, gradient, energy, flags) \
    if ((flags) & AVI_KIND_DAMPED) {                                                \
        if (e < m->count) {                                                         \
            r.kind = K; r.n = slots; r.v = m->array[e].v; r.rec = &m->array[e];     \
            return r;                                                               \
        }                                                                           \
        e -= m->count;                                                              \
    }
    AVI_POTENTIAL_KINDS(AVI_ELEM_GET)
#undef AVI_ELEM_GET
    return r;
}

/* The first elastic kind with potentials in m that has no damping
 * potential and Hessian here (no AVI_KIND_DAMPED), AVI_KIND_COUNT when
 * none: damping and the synchronous integrators refuse such a model. */
static inline avi_kind avi_model_undamped_kind(const avi_model *m)
{
#define AVI_UNDAMPED(K, type, array, count, slots, vertices, gradient, energy, flags) \
    if (((flags) & (AVI_KIND_ELASTIC | AVI_KIND_DAMPED)) == AVI_KIND_ELASTIC && m->count) return K;
    AVI_POTENTIAL_KINDS(AVI_UNDAMPED)
#undef AVI_UNDAMPED
    return AVI_KIND_COUNT;
}

/* Energy, gradient and Hessian ((3n)^2, row-major) of an elastic potential
 * at x. The Hessian returns 0, or -1 for a kind that has none here (H is
 * then NaN): every kind flagged AVI_KIND_DAMPED must have one. */
double avi_elem_energy(const avi_elem *el, const double x[][3]);
void avi_elem_gradient(const avi_elem *el, const double x[][3], double g[][3]);
int avi_elem_hessian(const avi_elem *el, const double x[][3], double *H);

/* D(A, B) and its derivatives in B. An element whose A is degenerate
 * (inverted tet, collapsed triangle or hinge, a mid-edge director past its
 * face) contributes nothing: 0 is returned and g, H are left zero. A kind
 * with no damping potential here gives NaN (the Hessian also returns -1). */
double avi_damping_energy(const avi_elem *el, const double A[][3], const double B[][3]);
void avi_damping_gradient(const avi_elem *el, const double A[][3], const double B[][3], double g[][3]);
int avi_damping_hessian(const avi_elem *el, const double A[][3], const double B[][3], double *H);

/* For the explicit updates and the AVI event: adds s * grad_B D(x - dt v, x)
 * to g, with v the stencil's current velocities. */
void avi_damping_add(const avi_elem *el, const avi_vertex *V, const double x[][3], double dt, double s, double g[][3]);

#endif
