/* The tet block on a pinned plate of test_friction.c (its incline tests),
 * shared with bench/incline_creep.c: the rig, plate coordinates, and the
 * body's velocity and kinetic energy. */
#ifndef AVI_BLOCK_RIG_H
#define AVI_BLOCK_RIG_H

#include "avi/avi.h"
#include "avi/mesh.h"
#include "base/vec3.h"
#include "core/engine_internal.h"

#include <math.h>

static const avi_solid_material block_mat = {1.0e6, 0.3, 1000.0};

typedef struct {
    avi_model *m;
    avi_engine *e;
    uint32_t first, count; /* the moving body's vertices */
    double mass;
    double tilt; /* the plate's angle: its x axis runs downhill along (cos, 0, -sin) */
    avi_mesh plate, body;
} rig;

/* Plate coordinates p to world q (turned by the tilt about y). */
static void place(const rig *r, const double p[3], double q[3])
{
    double c = cos(r->tilt), s = sin(r->tilt);
    q[0] = c * p[0] + s * p[2];
    q[1] = p[1];
    q[2] = -s * p[0] + c * p[2];
}

/* Sets every body vertex's velocity at the engine's time t (the state is
 * x + (t - tau) v: drift first). */
static void set_body_velocity(rig *r, double t, const double v[3])
{
    avi_vertex *V = r->e->model->vert;
    for (uint32_t i = 0; i < r->count; i++) {
        avi_vertex *q = &V[r->first + i];
        for (int c = 0; c < 3; c++) {
            q->x[c] += (t - q->tau) * q->v[c];
            q->v[c] = v[c];
        }
        q->tau = t;
    }
}

static double body_kinetic(const rig *r)
{
    const avi_vertex *V = r->e->model->vert;
    double k = 0.0;
    for (uint32_t i = 0; i < r->count; i++) {
        const avi_vertex *q = &V[r->first + i];
        k += 0.5 * v3_dot(q->v, q->v) / q->inv_mass;
    }
    return k;
}

#endif
