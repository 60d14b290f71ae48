/* The potential kinds: one row per kind, and the one place that lists them.
 * Every per-kind switch of the model, the event loop and the observers is
 * generated from these rows (X-macros), so a kind is added here, not in
 * each switch (docs/ARCHITECTURE.md, "Adding a potential kind").
 *
 * Columns of AVI_POTENTIAL_KINDS(X), in the order of the kind ranks
 * (include/avi/types.h, the tie order; also the order of energy sums):
 *   kind      the avi_kind
 *   type      its record (src/potentials/), with uint32_t v[slots] and dt
 *   array     the model's array of records (struct avi_model)
 *   count     the model's count of them
 *   slots     stencil size: the records an event drifts and kicks
 *   vertices  the leading slots that are mesh vertices (the speed cap and
 *             blow-up messages read these; the rest are auxiliary records)
 *   gradient  void f(const type *, const double x[][3], double g[][3])
 *   energy    double f(const type *, const double x[][3])
 *   flags     AVI_KIND_ELASTIC (in the elastic energy; else external, as
 *             gravity), AVI_KIND_DAMPED (core/damping.c has its damping
 *             potential)
 *
 * AVI_LANE_KINDS(X) lists the kinds with an AVX2 specialisation of the
 * gradient, positions and gradient one register per slot (kind, type,
 * lanes gradient: void f(const type *, const __m256d x[], __m256d g[]);
 * x[a] = (x, y, z, tau), g[a] = (x, y, z, +-0)); the event loop uses it
 * where damping is off, and kicks more than 4 slots in chunks of 4 as
 * kick_stencil does. */
#ifndef AVI_KINDS_H
#define AVI_KINDS_H

#include "potentials/spring.h"
#include "potentials/membrane.h"
#include "potentials/hinge.h"
#include "potentials/tet_neohookean.h"
#include "potentials/midedge.h"
#include "potentials/gravity.h"

enum { AVI_KIND_ELASTIC = 1, AVI_KIND_DAMPED = 2 };

/* clang-format off */
#define AVI_POTENTIAL_KINDS(X) \
    X(AVI_KIND_SPRING,   avi_spring,   springs,   nspring,   2, 2, avi_spring_gradient,   avi_spring_energy,   AVI_KIND_ELASTIC | AVI_KIND_DAMPED) \
    X(AVI_KIND_MEMBRANE, avi_membrane, membranes, nmembrane, 3, 3, avi_membrane_gradient, avi_membrane_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED) \
    X(AVI_KIND_HINGE,    avi_hinge,    hinges,    nhinge,    4, 4, avi_hinge_gradient,    avi_hinge_energy,    AVI_KIND_ELASTIC | AVI_KIND_DAMPED) \
    X(AVI_KIND_TET,      avi_tet,      tets,      ntet,      4, 4, avi_tet_gradient,      avi_tet_energy,      AVI_KIND_ELASTIC | AVI_KIND_DAMPED) \
    X(AVI_KIND_MIDEDGE,  avi_midedge,  midedges,  nmidedge,  AVI_MIDEDGE_SLOTS, 6, avi_midedge_gradient, avi_midedge_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED) \
    X(AVI_KIND_GRAVITY,  avi_gravity,  gravity,   ngravity,  1, 1, avi_gravity_gradient,  avi_gravity_energy,  0)

#define AVI_LANE_KINDS(X) \
    X(AVI_KIND_TET,     avi_tet,     avi_tet_gradient_lanes) \
    X(AVI_KIND_MIDEDGE, avi_midedge, avi_midedge_gradient_lanes)
/* clang-format on */

/* The widest stencil: work arrays of generic code are this long. */
#define AVI_KIND_SLOTS_MEMBER(kind, type, array, count, slots, ...) char array[slots];
#define AVI_STENCIL_MAX ((int)sizeof(union { AVI_POTENTIAL_KINDS(AVI_KIND_SLOTS_MEMBER) }))

#endif
