/* The engine's operation tables: the stepper table's row (one per
 * integrator, the AVI's event queue included) and the contact handler's
 * calls. Tables of function pointers, so that the engine calls neither
 * src/sync nor src/contact by name. */
#ifndef AVI_ENGINE_OPS_H
#define AVI_ENGINE_OPS_H

#include "avi/sync.h"
#include "core/event.h"
#include "core/model_internal.h"
#include "core/state_io.h"

/* A stepper: how an engine advances its state. One row per integrator
 * (src/sync/engine_create.c names them): the AVI's event queue
 * (core/engine.c) and the synchronous integrators, which step the same
 * state with one global step (src/sync/sync_engine.c). */
typedef struct avi_stepper_ops {
    /* a new engine over the finalized model m with this stepper (opt: the
     * integrator's options, NULL for the defaults); NULL with err set */
    avi_engine *(*create)(avi_model *m, const avi_sync_options *opt, avi_error *err);
    int (*advance)(avi_engine *e, double t);
    /* its checkpoint state (core/state_io.h), beside the engine's own
     * (core/engine_state.c): save 0 or -1; load AVI_OK, or AVI_ERR_INPUT
     * for a missing or implausible value, AVI_ERR_RUN out of memory, with
     * err's message naming what */
    int (*save)(const avi_engine *e, avi_state_io *io);
    int (*load)(avi_engine *e, avi_state_io *io, avi_error *err);
    /* frees the stepper's state (not the engine) */
    void (*destroy)(avi_engine *e);
    /* takes the damping k_D (avi_engine_set_damping, already checked >= 0,
     * finite and supported by every kind): AVI_OK, or AVI_ERR_INPUT with
     * the engine's error set when this stepper refuses it; NULL: the
     * engine's damping is all it reads */
    int (*set_damping)(avi_engine *e, double kd);
    /* its statistics (avi_engine_sync_stats); NULL: none, all zero */
    void (*stats)(const avi_engine *e, avi_sync_stats *out);
    /* The one clock of every potential, for the energy observable
     * (velocity_sync.c): its next kick *t_next after *n kicks, step *h;
     * *h = 0 when the stored velocities are already those of any
     * observation time and need no correction. NULL: a clock per
     * potential, in the queue (the AVI). */
    void (*owed_clock)(const avi_engine *e, double *t_next, uint32_t *n, double *h);
    /* A stepper that resolves contact itself: the minimum distance at t
     * over the stencils within its reach (+inf when none) and the energy
     * its friction has removed. NULL: none. */
    void (*contact_observe)(const avi_engine *e, double t, double *min_distance, double *friction_work);
} avi_stepper_ops;

/* The AVI's row (core/engine.c). */
extern const avi_stepper_ops avi_event_stepper;

struct avi_contact_manager; /* src/contact, or NULL without contact */

/* What the event loop reads of the contact handler: it runs before any
 * event at or after next_run, and a kicked vertex faster than its speed cap
 * (|v|^2 > vcap2) brings that run forward. The handler's state begins with
 * it. */
typedef struct {
    double next_run, vcap2;
    uint64_t speed_triggers;
} avi_contact_clock;

/* The contact handler (src/contact/contact_manager.c), reached through the
 * model that enabled it (avi_model_set_contact), so that the engine needs
 * nothing of src/contact. The handler gets its own state and reaches the
 * engine only through the calls below (avi_engine_schedule,
 * avi_engine_fail): it reads no field of struct avi_engine. Every call
 * returns AVI_OK or a status with the engine's error set. */
typedef struct avi_contact_ops {
    struct avi_contact_manager *(*create)(const avi_model *m, avi_error *err);
    void (*destroy)(struct avi_contact_manager *cm);
    /* the manager's run at t: activation and retirement of layer 1 */
    int (*run)(struct avi_contact_manager *cm, avi_engine *e, double t);
    /* the event `ev` of a contact potential, already off the queue: it
     * schedules the potential's next event, or retires it by not doing so,
     * and adds 1 to *count unless the potential had been retired before */
    int (*event)(struct avi_contact_manager *cm, avi_engine *e, avi_event ev, uint64_t *count);
    void (*observe)(const struct avi_contact_manager *cm, double t, double *energy, uint64_t *active,
                    double *min_distance, double *friction_work);
    /* its checkpoint state, as avi_stepper_ops's save and load */
    int (*save)(const struct avi_contact_manager *cm, avi_state_io *io);
    int (*load)(struct avi_contact_manager *cm, avi_state_io *io, avi_error *err);
    /* adds to imp the impulse w grad V(xt) that contact potential `slot`,
     * next due at t_next (step n), owes at an observation at t
     * (avi_owed_weight); xt: every vertex's position at t */
    void (*owe)(const struct avi_contact_manager *cm, uint32_t slot, double t_next, uint32_t n, double t,
                const double (*xt)[3], double (*imp)[3]);
} avi_contact_ops;

#endif
