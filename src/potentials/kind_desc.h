/* The descriptor of a potential kind: everything the generic code needs to
 * know about a kind, held by the kind's own files (src/potentials/<kind>.h
 * and .c), so that a kind is one unit (docs/ARCHITECTURE.md, "New kind").
 *
 * A kind comes in two halves:
 *  - its row, AVI_KIND_ROW_<NAME>(X) in <kind>.h, for the code whose
 *    per-kind switches must fold to constants (the event loop, observers,
 *    velocity sync; core/kinds.h lists the rows):
 *      X(kind, type, array, count, slots, vertices, gradient, energy, flags)
 *    kind      the avi_kind (include/avi/types.h; its value is its rank,
 *              the tie order and the order of energy sums)
 *    type      its record, with uint32_t v[slots] and double dt
 *    array     the model's array of records (struct avi_model)
 *    count     the model's count of them
 *    slots     stencil size: the records an event drifts and kicks
 *    vertices  the leading slots that are mesh vertices (the rest are
 *              auxiliary records: mid-edge rotation DOFs)
 *    gradient  void f(const type *, const double x[][3], double g[][3])
 *    energy    double f(const type *, const double x[][3])
 *    flags     AVI_KIND_* below
 *    and AVI_LANE_ROW_<NAME>(X), X(kind, type, lanes gradient), or empty:
 *    its AVX2 specialisation of the gradient (positions and gradient one
 *    register per slot, x[a] = (x, y, z, tau), g[a] = (x, y, z, +-0)),
 *    used by the event loop where damping is off;
 *  - its descriptor, a const avi_kind_desc avi_kind_<name> in <kind>.c,
 *    for the code that runs once per model or per call (name and scene
 *    keys, the step rule, the Hessian, damping, output labels).
 * tests/unit/test_kinds.c checks that the two halves agree. */
#ifndef AVI_KIND_DESC_H
#define AVI_KIND_DESC_H

#include <stddef.h>
#include "avi/types.h"

enum {
    AVI_KIND_ELASTIC = 1, /* in the elastic energy (else external, as gravity) */
    AVI_KIND_DAMPED = 2,  /* has a Hessian and a damping term (rest_from) */
    AVI_KIND_LINEAR = 4   /* gradient independent of x: Hessian 0 (gravity) */
};

typedef struct avi_kind_desc {
    const char *name;          /* avi_kind_name: scene key time_step.per_kind.<name>,
                                  messages, and the output's kind label */
    /* Exponents of the material's youngs, density, thickness and stiffness
     * in its squared stable frequency 1 / dt^2: the scene checks name the
     * material key that set a step (io/material_check.c). */
    double step_powers[4];
    size_t record_size;
    int slots, vertices;
    unsigned flags; /* the row's flags */
    double (*energy)(const void *rec, const double x[][3]);
    void (*gradient)(const void *rec, const double x[][3], double g[][3]);
    /* (3 slots)^2 row-major Hessian at x; NULL: none (the implicit
     * integrators, damping and the stability rule refuse the kind). */
    void (*hessian)(const void *rec, const double x[][3], double *H);
    /* Damping term (Kharevych et al. 2006, 5.2): *out = the record with A
     * as its rest state; 0, or -1 when A is degenerate. NULL: no damping. */
    int (*rest_from)(const void *rec, const double A[][3], void *out);
    /* Stable-step rule. omega2: the stencil's omega^2 at x with inverse
     * masses im (NULL: the largest eigenvalue of M^-1/2 H M^-1/2 from
     * hessian). inradius: the cfl rule's length from rest positions X
     * (NULL: the kind takes the stability rule under cfl). */
    double (*omega2)(const void *rec, const double x[][3], const double *im);
    double (*inradius)(const double X[][3]);
    int lanes;       /* it has an AVI_LANE_ROW (AVX2 builds use it) */
} avi_kind_desc;

/* The descriptor's energy, gradient and Hessian over untyped records, from
 * the kind's typed functions (in the kind's .c; `hessian` may be omitted by
 * writing AVI_KIND_WRAP_FUNCS only). */
#define AVI_KIND_WRAP_FUNCS(pre, type, energy, gradient)                                             \
    static double pre##_energy_any(const void *r, const double x[][3]) { return energy((const type *)r, x); } \
    static void pre##_gradient_any(const void *r, const double x[][3], double g[][3])            \
    {                                                                                              \
        gradient((const type *)r, x, g);                                                           \
    }
#define AVI_KIND_WRAP_HESSIAN(pre, type, slots, hessian)                                             \
    static void pre##_hessian_any(const void *r, const double x[][3], double *H)                   \
    {                                                                                              \
        hessian((const type *)r, x, (double (*)[3 * (slots)])H);                                   \
    }

#endif
