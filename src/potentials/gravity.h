/* Uniform gravity on one vertex, V = -m g.x, with its own clock. The field g
 * is the model's; the record holds m g so the impulse needs no lookup. */
#ifndef AVI_GRAVITY_H
#define AVI_GRAVITY_H

#include <stdint.h>
#include "potentials/kind_desc.h"

typedef struct {
    uint32_t v[1]; /* the stencil: one vertex */
    double mg[3]; /* m g */
    double dt;
} avi_gravity;

static inline double avi_gravity_energy(const avi_gravity *p, const double x[1][3])
{
    return -(p->mg[0] * x[0][0] + p->mg[1] * x[0][1] + p->mg[2] * x[0][2]);
}

static inline void avi_gravity_gradient(const avi_gravity *p, const double x[1][3], double g[1][3])
{
    (void)x;
    g[0][0] = -p->mg[0]; g[0][1] = -p->mg[1]; g[0][2] = -p->mg[2];
}

/* The kind's row and descriptor (potentials/kind_desc.h). */
/* clang-format off */
#define AVI_KIND_ROW_GRAVITY(X) X(AVI_KIND_GRAVITY, avi_gravity, gravity, ngravity, 1, 1, avi_gravity_gradient, avi_gravity_energy, AVI_KIND_LINEAR)
#define AVI_LANE_ROW_GRAVITY(X) 
#define AVI_KIND_DESC_GRAVITY avi_kind_gravity
/* clang-format on */
extern const avi_kind_desc avi_kind_gravity;

#endif
