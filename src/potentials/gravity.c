/* Gravity's descriptor: external (not elastic), linear (no Hessian, no
 * damping term); its step follows the vertices' elastic steps
 * (core/model_finalize.c), so it has no step rule of its own. */
#include "potentials/gravity.h"

AVI_KIND_WRAP_FUNCS(gravity, avi_gravity, avi_gravity_energy, avi_gravity_gradient)

const avi_kind_desc avi_kind_gravity = {
    .name = "gravity",
    .step_powers = {0, 0, 0, 0},
    .record_size = sizeof(avi_gravity),
    .slots = 1,
    .vertices = 1,
    .flags = AVI_KIND_LINEAR,
    .energy = gravity_energy_any,
    .gradient = gravity_gradient_any,
};
