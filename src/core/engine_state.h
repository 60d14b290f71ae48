/* The engine's checkpoint state (engine_state.c), for src/run, which
 * stores it and needs nothing else of the engine: no field of struct
 * avi_engine is named outside core/ and the steppers. */
#ifndef AVI_ENGINE_STATE_H
#define AVI_ENGINE_STATE_H

#include "avi/engine.h"
#include "core/state_io.h"

/* The engine's whole checkpoint state through the named-array interface
 * (core/state_io.h; engine_state.c): time, counters, vertex records,
 * observers, then its stepper's (the AVI: queue, contact manager in group
 * "contact", refinement in group "refine"). save 0 or -1; load AVI_OK, or
 * AVI_ERR_INPUT for a missing or implausible value (the io's failed get
 * names a missing one), AVI_ERR_RUN out of memory, with err's message
 * naming what. Between advances only. */
int avi_engine_save(const avi_engine *e, avi_state_io *io);
int avi_engine_load(avi_engine *e, avi_state_io *io, avi_error *err);

#endif
