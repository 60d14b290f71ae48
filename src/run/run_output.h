/* avi: the HDF5 output layout of a built scene, as `avi run` writes it. */
#ifndef AVI_RUN_OUTPUT_H
#define AVI_RUN_OUTPUT_H

#include "avi/output.h"
#include "avi/scene.h"

/* `layout` points into the other fields and into the scene, the body
 * information and the model given to avi_run_output_init, which must
 * outlive it: one body per scene body (its masses, triangles and
 * tetrahedra), the scene text as given and resolved, the output rates, the
 * potential counts and time-step ranges. Callers may change layout fields
 * (path, rates) before avi_h5_create. */
typedef struct {
    avi_h5_layout layout;
    avi_h5_body *bodies;
    double *mass;
    char *resolved_text;
} avi_run_output;

/* 0, or AVI_ERR_RUN (out of memory) with err filled; `o` is then empty. */
int avi_run_output_init(avi_run_output *o, const avi_scene *scene, const avi_scene_bodies *info,
                          const avi_model *model, const char *path, avi_error *err);
void avi_run_output_free(avi_run_output *o);
/* Once avi_h5_create has written them, frees the bodies' tetrahedra in
 * `info` (16 B a tet) and the masses (8 B a vertex), held for nothing
 * during the run, and forgets them in the layout; the counts stay. */
void avi_run_output_drop_written(avi_run_output *o, avi_scene_bodies *info);

#endif
