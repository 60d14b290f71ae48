/* Uniform gravity on one vertex, V = -m g.x, with its own clock. The field g
 * is the model's; the record holds m g so the impulse needs no lookup. */
#ifndef AVI_GRAVITY_H
#define AVI_GRAVITY_H

#include <stdint.h>

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

#endif
