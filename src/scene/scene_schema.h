/* The scene schema (scene_schema.c): keys allowed in each mapping, read by
 * the loader and --set, and the scene spelling of enumerated values, read
 * by the loader and the emitter. */
#ifndef AVI_SCENE_SCHEMA_H
#define AVI_SCENE_SCHEMA_H

#include "avi/scene.h"

/* Keys allowed in the mapping at a normalized context path ("" for the top
 * level, "bodies.#.mesh", "materials.*"): a space-separated list, "*" for
 * any key, or NULL when the schema has no mapping there. */
const char *avi_scene_schema_keys(const char *context);

#define AVI_SCENE_MATERIAL_COUNT 4
#define AVI_SCENE_BENDING_COUNT 3
#define AVI_SCENE_RULE_COUNT 3
#define AVI_SCENE_SOLVER_COUNT 3
/* materials.<m>.model, indexed by avi_material_model (avi/scene.h). */
extern const char *const avi_scene_material_names[AVI_SCENE_MATERIAL_COUNT];
/* materials.<m>.bending, indexed by avi_bending (avi/model.h). */
extern const char *const avi_scene_bending_names[AVI_SCENE_BENDING_COUNT];
/* time_step.rule, indexed by avi_dt_rule (avi/model.h). */
extern const char *const avi_scene_rule_names[AVI_SCENE_RULE_COUNT];
/* integrator.solver, indexed by avi_linear_solver (avi/scene.h). */
extern const char *const avi_scene_solver_names[AVI_SCENE_SOLVER_COUNT];

#endif
