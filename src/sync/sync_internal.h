/* Shared state of the synchronous integrators. */
#ifndef AVI_SYNC_INTERNAL_H
#define AVI_SYNC_INTERNAL_H

#include "avi/sync.h"
#include "core/engine_internal.h"

struct avi_sync {
    avi_sync_options opt;
    uint64_t step;      /* steps taken: the next step starts at t = step * h */
    double (*force)[3]; /* scratch: -grad V per vertex */
};

/* One step of each integrator from t_k = step * h to t_{k+1}. Every vertex
 * is at tau = t_k on entry and at t_{k+1} on exit, except for the
 * explicit update, whose positions are drifted lazily like the AVI's. */
int avi_sync_step_explicit(avi_engine *e, struct avi_sync *s);

#endif
