/* avi: asynchronous variational integration of elastic bodies with contact.
 *
 * Errors: one convention for every public call.
 * - A call that can fail returns an avi_status (types.h): AVI_OK (0) on
 *   success, else AVI_ERR_INPUT (bad input or usage), AVI_ERR_RUN (the run
 *   or the system failed: blow-up, I/O, out of memory) or AVI_INTERRUPTED
 *   (stopped on request). Never a negative value.
 * - Its message: a call with an `avi_error *err` parameter fills it (err
 *   may be NULL); a call on an object without one records the status and
 *   message on the object, read with avi_model_error, avi_engine_error or
 *   avi_h5_error (the last failure; a failed writer stays failed).
 * - A constructor returns NULL on failure, with err filled; avi_model_create
 *   and avi_snapshot_create take none: NULL means out of memory.
 * - A call that returns an index returns -1 on failure, its only negative
 *   value: avi_model_add_body, avi_model_add_vertex (message on the model),
 *   avi_scene_builtin_find (no such name).
 * - An observer's non-zero return stops avi_engine_run, which returns that
 *   value unchanged (run.h's observers return avi_status values).
 * - Queries (counts, times, names, avi_model_failed_potential's 0/1) do not
 *   fail.
 * Settings structs come with initialisers to start from: avi_default_time_step,
 * avi_default_contact_settings, avi_default_sync_options,
 * avi_default_run_options, avi_default_h5_layout. */
#ifndef AVI_AVI_H
#define AVI_AVI_H

#include "avi/types.h"
#include "avi/model.h"
#include "avi/engine.h"
#include "avi/mesh.h"
#include "avi/output.h"
#include "avi/scene.h"
#include "avi/sync.h"
#include "avi/run.h"

#endif
