/* The scene schema: the keys each mapping allows, and the scene spelling
 * of the enumerated values that the loader reads and the emitter writes. */
#include "scene/scene_schema.h"

#include <stdio.h>
#include <string.h>

/* -------------------------------------------------------------- schema -- */

static const struct {
    const char *context;
    const char *keys;
} schema[] = {
    {"", "name description time integrator time_step materials bodies contact gravity damping output parallel"},
    {"time", "end"},
    {"integrator", "type alpha tolerance solver"},
    {"time_step", "rule safety delta fixed per_kind neighbor_ratio levels_per_octave max_events"},
    {"time_step.per_kind", NULL}, /* every kind's name: per_kind_keys */
    {"materials", "*"},
    {"materials.*", "model youngs poisson density thickness stiffness bending"},
    {"bodies.#", "name mesh particles springs links material translate velocity angular_velocity initial pinned time_step"},
    {"bodies.#.mesh", "generator radius subdivisions rings lx ly lz nx ny nz n grading pole shells file jitter seed reorder"},
    {"bodies.#.particles.#", "x v mass pinned constraint"},
    {"bodies.#.particles.#.constraint", "sphere circle"},
    {"bodies.#.particles.#.constraint.sphere", "center radius"},
    {"bodies.#.particles.#.constraint.circle", "center radius normal"},
    {"bodies.#.springs.#", "a b stiffness rest"},
    {"bodies.#.links.#", "a b length"},
    {"bodies.#.initial", "scale"},
    {"bodies.#.pinned", "box indices boundary"},
    {"bodies.#.time_step", "fixed"},
    {"contact", "enabled thickness inner_thickness stiffness layers friction"},
    {"parallel", "threads"},
    {"output", "file energy_every frame_every checkpoint_every synchronized_every max_energy_growth max_bytes max_checkpoints"},
};

/* The keys of time_step.per_kind: the kinds' names (their descriptors),
 * in rank order. */
static const char *per_kind_keys(void)
{
    static char keys[AVI_KIND_COUNT * 24];
    if (!keys[0]) {
        char buf[sizeof keys];
        size_t n = 0;
        for (int k = 0; k < AVI_KIND_COUNT; k++)
            n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", k ? " " : "", avi_kind_name((avi_kind)k));
        memcpy(keys, buf, sizeof keys);
    }
    return keys;
}

const char *avi_scene_schema_keys(const char *context)
{
    for (size_t i = 0; i < sizeof schema / sizeof schema[0]; i++)
        if (strcmp(schema[i].context, context) == 0) return schema[i].keys ? schema[i].keys : per_kind_keys();
    return NULL;
}

/* ------------------------------------------------- enumerated values -- */

/* materials.<m>.model, indexed by avi_material_model (avi/scene.h). */
const char *const avi_scene_material_names[AVI_SCENE_MATERIAL_COUNT] = {"shell", "membrane", "neo-hookean", "spring"};
/* materials.<m>.bending, indexed by avi_bending (avi/model.h). */
const char *const avi_scene_bending_names[AVI_SCENE_BENDING_COUNT] = {"none", "hinge", "midedge"};
/* time_step.rule, indexed by avi_dt_rule (avi/model.h). */
const char *const avi_scene_rule_names[AVI_SCENE_RULE_COUNT] = {"stability", "cfl", "fixed"};
const char *const avi_scene_solver_names[AVI_SCENE_SOLVER_COUNT] = {"cholesky", "cg", "lu"};
