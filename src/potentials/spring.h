/* Spring potential V = k/2 (|x1 - x0| - L)^2, any rest length L >= 0. */
#ifndef AVI_SPRING_H
#define AVI_SPRING_H

#include <stdint.h>
#include "potentials/kind_desc.h"
#include "base/vec3.h"

typedef struct {
    uint32_t v[2];
    double k;    /* stiffness */
    double rest; /* rest length L */
    double dt;
} avi_spring;

double avi_spring_energy(const avi_spring *s, const double x[2][3]);
void avi_spring_hessian(const avi_spring *s, const double x[2][3], double H[6][6]);

/* g[a] = dV/dx_a. At zero length with L > 0 the direction is undefined and
 * the force is taken as zero. */
static inline void avi_spring_gradient(const avi_spring *s, const double x[2][3], double g[2][3])
{
    double d[3];
    v3_sub(d, x[1], x[0]);
    double f; /* g1 = f d */
    if (s->rest == 0.0) {
        f = s->k;
    } else {
        double l = v3_norm(d);
        f = l > 0.0 ? s->k * (l - s->rest) / l : 0.0;
    }
    for (int i = 0; i < 3; i++) { g[1][i] = f * d[i]; g[0][i] = -f * d[i]; }
}

/* The kind's row and descriptor (potentials/kind_desc.h). */
/* clang-format off */
#define AVI_KIND_ROW_SPRING(X) X(AVI_KIND_SPRING, avi_spring, springs, nspring, 2, 2, avi_spring_gradient, avi_spring_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED)
#define AVI_LANE_ROW_SPRING(X) 
#define AVI_KIND_DESC_SPRING avi_kind_spring
/* clang-format on */
extern const avi_kind_desc avi_kind_spring;

#endif
