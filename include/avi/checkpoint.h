/* avi: checkpoints, complete engine states from which a run continues
 * exactly as if it had never stopped.
 *
 * A checkpoint is an HDF5 file (self-describing: every dataset is named)
 * holding the scene (as given and as resolved), the output path, the time T,
 * every vertex's position, velocity and last-drift time, every queue entry
 * (time, id, step count), event counters, observer positions, the contact
 * manager's potentials, stencils and clocks, and a synchronous integrator's
 * step count. It is written to a temporary file, fsynced and renamed over
 * the previous checkpoint, so a checkpoint on disk is always complete. */
#ifndef AVI_CHECKPOINT_H
#define AVI_CHECKPOINT_H

#include "avi/engine.h"

typedef struct {
    const char *scene_source;   /* the scene as named on the command line */
    const char *scene_text;     /* as given */
    const char *resolved_text;  /* as resolved (avi_scene_emit): what resume rebuilds from */
    const char *output_path;    /* the run's HDF5 file */
} avi_checkpoint_info;

/* What avi_checkpoint_read_info returns; strings are malloc'd. */
typedef struct {
    char *scene_source, *scene_text, *resolved_text, *output_path;
    double time;
} avi_checkpoint_meta;

/* The checkpoint path of an output file: "<output>.ckpt". */
void avi_checkpoint_path(const char *output_path, char *out, size_t size);

/* Writes the engine's state at its current time (avi_engine_time) to path,
 * atomically. Returns 0 or non-zero with err filled. */
int avi_checkpoint_write(const char *path, const avi_engine *engine, const avi_checkpoint_info *info,
                         avi_error *err);

/* Reads the scene, output path and time of a checkpoint. */
int avi_checkpoint_read_info(const char *path, avi_checkpoint_meta *meta, avi_error *err);
void avi_checkpoint_meta_free(avi_checkpoint_meta *meta);

/* Restores a checkpoint into an engine freshly built from the checkpoint's
 * resolved scene, with the same observers registered in the same order.
 * Fails (engine unchanged or unusable) when the model does not match. */
int avi_checkpoint_restore(const char *path, avi_engine *engine, avi_error *err);

#endif
