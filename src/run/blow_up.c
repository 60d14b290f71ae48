/* The blow-up check of a run (src/run/blow_up.h). */
#include "run/blow_up.h"
#include "base/vec3.h"

#include <math.h>
#include <stdio.h>

void avi_blow_up_init(avi_blow_up *b, const avi_scene *scene)
{
    *b = (avi_blow_up){.max_growth = scene->output.max_energy_growth,
                       .end_time = scene->end_time,
                       .gravity = v3_norm(scene->gravity)};
}

/* The scale: the energies at t = 0, but at least M (|g| L + (L / T)^2)
 * with M the mass, L the size of the initial state and T the end time, so
 * that a system starting at rest (E0 = 0) is not judged against
 * round-off. */
static void set_scale(avi_blow_up *b, const avi_model *model, avi_snapshot *snap, const avi_observation *o,
                      int synchronized, double (*x)[3])
{
    size_t nv = avi_model_vertex_count(model);
    avi_snapshot_state(snap, &x[0][0], NULL);
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, mass = 0.0;
    for (size_t i = 0; i < nv; i++) {
        mass += avi_model_vertex_mass(model, (uint32_t)i);
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], x[i][c]);
            hi[c] = fmax(hi[c], x[i][c]);
        }
    }
    double size = nv ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                            (hi[2] - lo[2]) * (hi[2] - lo[2]))
                     : 0.0;
    double speed = b->end_time > 0.0 ? size / b->end_time : 0.0;
    b->have_e0 = 1;
    b->e0 = synchronized ? o->total : o->total_midstep;
    b->e_scale = fmax((synchronized ? o->kinetic : o->kinetic_midstep) + fabs(o->elastic) + fabs(o->contact) +
                          fabs(o->external),
                      mass * (b->gravity * size + speed * speed));
}

int avi_blow_up_check(avi_blow_up *b, const avi_model *model, avi_snapshot *snap, const avi_observation *o,
                      int synchronized, double (*x)[3])
{
    if (!b->have_e0) set_scale(b, model, snap, o, synchronized, x);
    double e = synchronized ? o->total : o->total_midstep;
    if (b->max_growth > 0.0 && b->e_scale > 0.0 && !(fabs(e - b->e0) <= b->max_growth * b->e_scale)) {
        char who[256];
        avi_snapshot_describe_largest_energy(snap, who, sizeof who);
        snprintf(b->message, sizeof b->message,
                 "blow-up at t = %.17g: total energy %.6e J%s departs from E0 = %.6e J by more than "
                 "output.max_energy_growth = %g times %.3e J; largest: %s",
                 o->time, e, synchronized ? "" : " (mid-step)", b->e0, b->max_growth, b->e_scale, who);
        return AVI_ERR_RUN;
    }
    return 0;
}
