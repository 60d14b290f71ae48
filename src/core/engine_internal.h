/* Engine state shared by the event loop, observers and checkpoints. */
#ifndef AVI_ENGINE_INTERNAL_H
#define AVI_ENGINE_INTERNAL_H

#include "avi/engine.h"
#include "core/event_queue.h"
#include "core/model_internal.h"

typedef struct {
    double interval;
    uint64_t next;    /* index k of the next output time k * interval */
    double last_time; /* time of the last call, -1 before the first */
    avi_observer_fn fn;
    void *user;
} avi_observer;

struct avi_sync; /* a synchronous integrator (src/sync), or NULL for the AVI */

struct avi_engine {
    avi_model *model;
    struct avi_sync *sync;
    avi_event_queue queue;
    double time; /* every event with t < time has been processed */
    uint64_t events[AVI_KIND_COUNT];
    double damping; /* k_D of Kharevych et al. 2006 sec. 5.2 (avi_engine_set_damping); 0: none */
    int nobs, cap_obs;
    avi_observer *obs;
    avi_error err;
};

/* Synchronous integrators advance the same model state (x at tau = t_k, v)
 * with one global step; they implement these (src/sync/). */
int avi_sync_advance(avi_engine *e, double t);
void avi_sync_destroy(struct avi_sync *s);

#endif
