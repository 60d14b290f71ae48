/* Checks avi_scene_build makes on a scene beyond its syntax: material values
 * whose derived quantities (moduli, vertex masses, stable steps) are not
 * positive normal numbers, and up-front limits on what a run would write
 * and compute. Messages name the scene key to change. */
#ifndef AVI_SCENE_CHECKS_H
#define AVI_SCENE_CHECKS_H

#include "avi/scene.h"

/* The potentials of each kind a scene body's elements became: the model adds
 * them body by body, so each kind's are one range [first, end). */
typedef struct {
    size_t first[AVI_KIND_COUNT], end[AVI_KIND_COUNT];
} avi_body_potentials;

/* Before building: every material's moduli, areal density and wave speed
 * (per model) are positive normal numbers. */
int avi_scene_check_materials(const avi_scene *s, avi_error *err);

/* After a body is built: its vertices' masses are positive normal numbers
 * (their inverses finite), naming the material key or the particle mass. */
int avi_scene_check_masses(const avi_scene *s, size_t body, const avi_model *m, uint32_t first, uint32_t count,
                           avi_error *err);

/* After avi_model_finalize failed on one potential's time step: rewrites
 * err to name the material key of the potential's body, when it has one.
 * Returns 1 when it did. */
int avi_scene_explain_step(const avi_scene *s, const avi_model *m, const avi_body_potentials *ranges,
                           avi_error *err);

/* The key of a material most likely responsible for an out-of-range derived
 * quantity proportional to youngs^p[0] density^p[1] thickness^p[2]
 * stiffness^p[3]: the one whose value, to its power, lies furthest (in
 * decades) from a typical one ("materials.<name>.<key>"). */
void avi_material_key(const avi_scene_material *mat, const double p[4], char *out, size_t len);

/* "SOURCE: <message>" into err, status AVI_ERR_INPUT; returns AVI_ERR_INPUT. */
int avi_scene_check_fail(avi_error *err, const avi_scene *s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The body of potential (kind, index), or -1. */
/* Exponents of youngs, density, thickness and stiffness in a kind's squared
 * stable frequency (1 / dt^2), from its descriptor. */
void avi_kind_step_powers(avi_kind kind, double p[4]);
int avi_potential_body(const avi_body_potentials *ranges, size_t body_count, avi_kind kind, size_t index);

/* After building: the estimated rows, frames and their bytes, and events
 * are within output.max_bytes and time_step.max_events. */
int avi_scene_check_limits(const avi_scene *s, const avi_model *m, const avi_body_potentials *ranges,
                           avi_error *err);

/* Memory this process may use: physical memory, or half of ulimit -v or -d
 * when less; *what names which (src/scene/scene_memory.c). */
double avi_memory_available(const char **what);

/* Before generating: the generated meshes' estimated memory is within
 * avi_memory_available, naming the largest body's size key. */
int avi_scene_check_generated_memory(const avi_scene *s, avi_error *err);

/* After building, with contact: the broad phase's candidate lists (from the
 * surfaces' triangle sizes and contact.thickness) fit too. */
int avi_scene_check_contact_memory(const avi_scene *s, const avi_model *m, avi_error *err);

#endif
