/* Engine state shared by the event loop, observers and checkpoints. */
#ifndef AVI_ENGINE_INTERNAL_H
#define AVI_ENGINE_INTERNAL_H

#include "avi/engine.h"
#include "core/clock_groups.h"
#include "core/twolevel_queue.h"
#include "core/model_internal.h"

typedef struct {
    double interval;
    uint64_t next;    /* index k of the next output time k * interval */
    double last_time; /* time of the last call, -1 before the first */
    avi_observer_fn fn;
    void *user;
} avi_observer;

struct avi_sync; /* a synchronous integrator (src/sync), or NULL for the AVI */
struct avi_contact_manager; /* src/contact, or NULL without contact */

struct avi_engine {
    avi_model *model;
    struct avi_sync *sync;
    struct avi_contact_manager *contact;
    avi_twolevel_queue queue; /* chosen over the 4-ary heap by bench/queue.c */
    avi_clock_groups groups;  /* clocks with equal steps; empty when ungrouped */
    size_t ncursor, ncursor_members; /* group cursors in the queue, and their groups' sizes */
    uint64_t group_splits; /* group ticks cut by another entry at their time, or by contact */
    double time; /* every event with t < time has been processed */
    uint64_t events[AVI_KIND_COUNT];
    double damping; /* k_D of Kharevych et al. 2006 sec. 5.2 (avi_engine_set_damping); 0: none */
    volatile sig_atomic_t *stop; /* see avi_engine_set_stop_flag */
    int nobs, cap_obs;
    avi_observer *obs;
    avi_error err;
};

/* The queue as one entry per potential (group cursors expanded), in no
 * particular order: avi_engine_queue_size entries. For checkpoints. */
size_t avi_engine_queue_size(const avi_engine *e);
size_t avi_engine_queue_collect(const avi_engine *e, avi_event *out);
/* Rebuilds the queue from one entry per potential (as collected), grouping
 * clocks of equal steps when `grouped` and every member of a group is at
 * the same (t, n); entries are checked against the model. Between advances
 * only. Returns AVI_OK, or an error filled into err. */
int avi_engine_queue_load(avi_engine *e, const avi_event *ev, size_t n, int grouped, avi_error *err);

/* Drifts the stencil's vertices to t and copies their positions into x. */
static inline void avi_drift(avi_vertex *V, const uint32_t *idx, int n, double t, double x[][3])
{
    for (int a = 0; a < n; a++) {
        avi_vertex *p = &V[idx[a]];
        double h = t - p->tau;
        p->x[0] += h * p->v[0];
        p->x[1] += h * p->v[1];
        p->x[2] += h * p->v[2];
        p->tau = t;
        x[a][0] = p->x[0]; x[a][1] = p->x[1]; x[a][2] = p->x[2];
    }
}

/* v_a -= w M_a^-1 g_a; returns the sum of the impulse components, whose
 * finiteness is the blow-up check. */
static inline double avi_kick(avi_vertex *V, const uint32_t *idx, int n, double w, const double g[][3])
{
    double sum = 0.0;
    for (int a = 0; a < n; a++) {
        avi_vertex *p = &V[idx[a]];
        double s = w * p->inv_mass;
        p->v[0] -= s * g[a][0];
        p->v[1] -= s * g[a][1];
        p->v[2] -= s * g[a][2];
        sum += g[a][0] + g[a][1] + g[a][2];
    }
    return sum;
}

/* Synchronous integrators advance the same model state (x at tau = t_k, v)
 * with one global step; they implement these (src/sync/). */
int avi_sync_advance(avi_engine *e, double t);
void avi_sync_destroy(struct avi_sync *s);

#endif
