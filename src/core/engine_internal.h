/* The engine: the state every integrator shares (the model's vertex
 * records, time, counters, observers, error), its stepper's row and state
 * (core/engine_ops.h) and the AVI's event queue. The operation tables are
 * in core/engine_ops.h, the drift and kick kernels in core/event_kernels.h
 * (both included here for the engine's users). */
#ifndef AVI_ENGINE_INTERNAL_H
#define AVI_ENGINE_INTERNAL_H

#include "avi/engine.h"
#include "core/clock_groups.h"
#include "core/twolevel_queue.h"
#include "core/model_internal.h"
#include "core/state_io.h"
#include "core/engine_state.h"
#include "core/engine_ops.h"
#include "core/event_kernels.h"

typedef struct {
    double interval;
    uint64_t next;    /* index k of the next output time k * interval */
    double last_time; /* time of the last call, -1 before the first */
    avi_observer_fn fn;
    void *user;
} avi_observer;

/* Puts a clock into the queue: ev = (time, id, step count); a step count at
 * AVI_GROUP_CURSOR or beyond is an overflow. AVI_OK or AVI_ERR_RUN (engine
 * error set). For contact potentials, which come and go. */
int avi_engine_schedule(avi_engine *e, avi_event ev);
/* Contact reports omega = sqrt(K_v / m_v) of vertex v's active layers (0
 * when none): the elastic potentials on v refine their steps to resolve it
 * (core/refine.h). AVI_OK or AVI_ERR_RUN (engine error set). */
int avi_engine_refine(avi_engine *e, uint32_t vertex, double omega);
/* Sets the engine's error and returns `status`. */
int avi_engine_fail(avi_engine *e, avi_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct avi_engine {
    avi_model *model;
    const avi_stepper_ops *stepper; /* its row of the stepper table: never NULL */
    struct avi_sync *sync;          /* a synchronous stepper's state (src/sync); NULL for the AVI */
    struct avi_contact_manager *contact;
    struct avi_refine *refine; /* refined clocks on vertices in contact (core/refine.h), NULL: none */
    avi_twolevel_queue queue; /* chosen over the 4-ary heap by bench/queue.c */
    avi_clock_groups groups;  /* clocks with equal steps; empty when ungrouped */
    size_t ncursor, ncursor_members; /* group cursors in the queue, and their groups' sizes */
    int prefetch;          /* the working set is past the L2 cache: prefetch ahead */
    uint32_t drift_all_max; /* group ticks drift vertex lists up to this size at once */
    uint64_t group_splits; /* group ticks cut by another entry at their time, or by contact */
    avi_event *tie;        /* heap of the entries of one time (run_tie in engine.c) */
    size_t tie_cap;
    double time; /* every event with t < time has been processed */
    uint64_t events[AVI_KIND_COUNT];
    double damping; /* k_D of Kharevych et al. 2006 sec. 5.2 (avi_engine_set_damping); 0: none */
    volatile sig_atomic_t *stop; /* see avi_engine_set_stop_flag */
    avi_heartbeat_fn beat;       /* see avi_engine_set_heartbeat */
    void *beat_user;
    uint32_t beat_left;          /* passes of the event loop until the next beat */
    double now;                  /* time of the contact event in progress (avi_engine_schedule) */
    double min_step;             /* the shortest clock's step (avi_engine_run's refusal); +inf: none */
    int nobs, cap_obs;
    avi_observer *obs;
    struct avi_pool *pool; /* the threads (base/pool.h); NULL: the caller's only */
    struct avi_slice_par *slice; /* time slices' parts (core/time_slice.h), NULL until used */
    const avi_ranks *ranks;      /* the processes running this simulation (avi_set_ranks), NULL: alone */
    volatile sig_atomic_t *stop_asked; /* with ranks: the caller's stop flag; e->stop is `agreed` */
    volatile sig_atomic_t agreed;      /* with ranks: a stop every member asked for, at the same point */
    avi_error err;
};

/* Makes a new engine a member of the process's ranks (avi_set_ranks), if
 * any: its stop flag becomes the agreed one. The one constructor calls it. */
void avi_engine_join_ranks(avi_engine *e);

/* The engine's pool (avi_engine_set_threads), NULL when it runs on the
 * caller's thread alone: for the steppers' and the contact manager's
 * parallel passes. */
static inline struct avi_pool *avi_engine_pool(const avi_engine *e) { return e->pool; }


/* The AVI row's part of the engine's checkpoint state (engine_state.c,
 * core/engine_state.h): its save and load in avi_event_stepper. */
int avi_event_state_save(const avi_engine *e, avi_state_io *io);
int avi_event_state_load(avi_engine *e, avi_state_io *io, avi_error *err);

/* The contact manager's clock: its first member; NULL without contact. */
static inline avi_contact_clock *contact_clock(const avi_engine *e)
{
    return (avi_contact_clock *)e->contact;
}

/* The queue as one entry per potential (group cursors expanded), in no
 * particular order: avi_engine_queue_size entries. For checkpoints. */
size_t avi_engine_queue_size(const avi_engine *e);
size_t avi_engine_queue_collect(const avi_engine *e, avi_event *out);
/* Rebuilds the queue from one entry per potential (as collected), grouping
 * clocks of equal steps when `grouped` and every member of a group is at
 * the same (t, n); entries are checked against the model. Between advances
 * only. Returns AVI_OK, or an error filled into err. */
int avi_engine_queue_load(avi_engine *e, const avi_event *ev, size_t n, int grouped, avi_error *err);
/* Queue sizes from the clocks' steps (engine_queue.c): one clock per group
 * cursor (of the groups with grouped[k], every group when NULL), one per
 * single scheduled potential; contact clocks come and go and are not
 * counted. */
void avi_engine_queue_stats(const avi_engine *e, avi_clock_stats *stats, const uint8_t *grouped);


/* The weight w (in seconds) of the impulse -w M^-1 grad V that a potential
 * whose clock of step dt is next due at t_next, after n events, owes its
 * vertices at an observation at t (t_next - dt < t <= t_next): its last
 * event at t_P = t_next - dt left the mid-step velocity of t_P + dt / 2, so
 * w = t - t_P - dt / 2. A clock that has not ticked (n = 0) owes nothing:
 * the velocities are still the initial ones, of t. See
 * docs/energy_observable.md. */
static inline double avi_owed_weight(double t, double t_next, uint32_t n, double dt)
{
    return n == 0 ? 0.0 : (t - t_next) + 0.5 * dt;
}

/* Velocity corrections dv ([nv][3]) that synchronize the stored velocities
 * to an observation at t, from the impulses every potential owes (elastic,
 * gravity and contact, gradients at the positions xt at t; damping is left
 * out), then scale them to the amplitude of the motion the leapfrog
 * represents (elastic and gravity clocks); *de: the potential energy that
 * motion has at t beyond V(xt). docs/energy_observable.md. Between
 * advances. 0, or -1 when out of memory (dv and *de then NaN). */
int avi_engine_owed_velocity(const avi_engine *e, double t, const double (*xt)[3], double (*dv)[3], double *de);

/* The same in two halves, so that a snapshot pays for the gradients on the
 * output stream's thread: avi_owed_take (engine's thread) copies the clocks
 * (the queue, one entry per potential, or a synchronous integrator's one
 * weight) and puts the contact potentials' impulses into imp (zeroed
 * first); avi_owed_apply (any thread; reads the model only) adds the
 * elastic and gravity impulses and turns imp into dv = -M^-1 imp in place
 * (V: the vertex records the clocks were taken with, for 1/m).
 * take returns 0, or -1 when out of memory (apply then gives NaN). */
typedef struct {
    avi_event *ev;  /* the AVI's clocks */
    uint8_t *level; /* their refinement levels (core/refine.h), as ev */
    size_t nev, cap;
    double sync_t, sync_h; /* a synchronous integrator's clock (owed_clock; h = 0: none) */
    uint32_t sync_n;
    int failed;
    double (*work)[3]; /* apply's scratch, 2 nv rows */
    size_t work_n;
} avi_owed;
int avi_owed_take(const avi_engine *e, double t, const double (*xt)[3], avi_owed *o, double (*imp)[3]);
struct avi_model_pass; /* core/incidence.h: apply on its pool when not NULL */
void avi_owed_apply(const avi_model *m, struct avi_model_pass *mp, const avi_vertex *V, avi_owed *o, double t,
                    const double (*xt)[3], double (*imp)[3], double *de);
void avi_owed_free(avi_owed *o);

#endif
