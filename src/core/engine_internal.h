/* Engine state shared by the event loop, observers and checkpoints. */
#ifndef AVI_ENGINE_INTERNAL_H
#define AVI_ENGINE_INTERNAL_H

#include "avi/engine.h"
#include "core/clock_groups.h"
#include "core/twolevel_queue.h"
#include "core/model_internal.h"
#include "core/state_io.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

typedef struct {
    double interval;
    uint64_t next;    /* index k of the next output time k * interval */
    double last_time; /* time of the last call, -1 before the first */
    avi_observer_fn fn;
    void *user;
} avi_observer;

struct avi_sync; /* a synchronous integrator (src/sync), or NULL for the AVI */

/* A stepper: a synchronous integrator steps the same state with one global
 * step; the engine hands its advances, checkpoint state and destruction to
 * these (src/sync sets them when avi_engine_create_with builds one, so
 * that the engine needs nothing of src/sync). */
typedef struct {
    int (*advance)(avi_engine *e, double t);
    /* its checkpoint state (core/state_io.h): save 0 or -1; load AVI_OK, or
     * AVI_ERR_INPUT for a missing or implausible value, AVI_ERR_RUN out of
     * memory, with err's message naming what */
    int (*save)(const struct avi_sync *s, avi_state_io *io);
    int (*load)(struct avi_sync *s, avi_state_io *io, avi_error *err);
    void (*destroy)(struct avi_sync *s);
    /* The one clock of every potential, for the energy observable
     * (velocity_sync.c): its next kick *t_next after *n kicks, step *h;
     * NULL, or *h = 0, when the stored velocities are already those of any
     * observation time and need no correction. */
    void (*owed_clock)(const avi_engine *e, double *t_next, uint32_t *n, double *h);
    /* A stepper that resolves contact itself: the minimum distance at t
     * over the stencils within its reach (+inf when none) and the energy
     * its friction has removed. NULL: none. */
    void (*contact_observe)(const avi_engine *e, double t, double *min_distance, double *friction_work);
} avi_stepper_ops;
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

/* Puts a clock into the queue: ev = (time, id, step count); a step count at
 * AVI_GROUP_CURSOR or beyond is an overflow. AVI_OK or AVI_ERR_RUN (engine
 * error set). For contact potentials, which come and go. */
int avi_engine_schedule(avi_engine *e, avi_event ev);
/* Contact reports omega = sqrt(K_v / m_v) of vertex v's active layers (0
 * when none): the elastic potentials on v refine their steps to resolve it
 * (core/refine.h). AVI_OK or AVI_ERR_RUN (engine error set). */
int avi_engine_refine(avi_engine *e, uint32_t vertex, double omega);
/* One event of elastic or gravity potential id at t with impulse weight
 * half * dt (dt its model step, returned): drift, gradient, kick, speed
 * check, blow-up check; counts[kind] grows by one. For core/refine.c. */
int avi_engine_apply(avi_engine *e, uint32_t id, double t, double half, double *dt, uint64_t *counts);
/* Sets the engine's error and returns `status`. */
int avi_engine_fail(avi_engine *e, avi_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

struct avi_engine {
    avi_model *model;
    struct avi_sync *sync;          /* the stepper's state */
    const avi_stepper_ops *stepper; /* NULL: the event queue (the AVI) */
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
    avi_error err;
};

/* A vertex faster than the contact manager's speed cap voids its
 * look-ahead: the manager runs before the next event. After every kick, by
 * the engine and by contact events. */
static inline void avi_check_speed(avi_contact_clock *cm, const avi_vertex *V, const uint32_t *v, int n, double t)
{
    for (int a = 0; a < n; a++)
        if (v3_dot(V[v[a]].v, V[v[a]].v) > cm->vcap2 && cm->next_run > t) {
            cm->next_run = t;
            cm->speed_triggers++;
        }
}

/* The asynchronous integrator's engine: the event queue with a clock per
 * potential (engine.c). The one public constructor, avi_engine_create_with
 * (src/sync/engine_create.c), calls it or builds a synchronous stepper. */
avi_engine *avi_engine_create_events(avi_model *m, avi_error *err);

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
void avi_owed_apply(const avi_model *m, const avi_vertex *V, avi_owed *o, double t, const double (*xt)[3],
                    double (*imp)[3], double *de);
void avi_owed_free(avi_owed *o);

/* Drifts one vertex record to t: x += (t - tau) v, tau := t. */
#ifdef __AVX2__
/* The record's first half is (x, tau), its second (v, 1/m): one multiply
 * and one add per half record, rounded as the scalar code (no fused
 * multiply-add), then tau := t in lane 3. Returns the new (x, t). */
static inline __m256d avi_drift_record(avi_vertex *p, __m256d tt)
{
    __m256d xt = _mm256_loadu_pd(p->x), vm = _mm256_loadu_pd(p->v);
    __m256d h = _mm256_sub_pd(tt, _mm256_permute4x64_pd(xt, 0xFF));
    __m256d nx = _mm256_blend_pd(_mm256_add_pd(xt, _mm256_mul_pd(h, vm)), tt, 0x8);
    _mm256_storeu_pd(p->x, nx);
    return nx;
}
#else
static inline void avi_drift_record(avi_vertex *p, double t)
{
    double h = t - p->tau;
    p->x[0] += h * p->v[0];
    p->x[1] += h * p->v[1];
    p->x[2] += h * p->v[2];
    p->tau = t;
}
#endif

/* Drifts the stencil's vertices to t and copies their positions into x. */
static inline void avi_drift(avi_vertex *V, const uint32_t *idx, int n, double t, double x[][3])
{
#ifdef __AVX2__
    const __m256d tt = _mm256_set1_pd(t);
    for (int a = 0; a < n; a++) {
        __m256d nx = avi_drift_record(&V[idx[a]], tt);
        _mm_storeu_pd(x[a], _mm256_castpd256_pd128(nx));
        _mm_store_sd(&x[a][2], _mm256_extractf128_pd(nx, 1));
    }
#else
    for (int a = 0; a < n; a++) {
        avi_vertex *p = &V[idx[a]];
        avi_drift_record(p, t);
        x[a][0] = p->x[0]; x[a][1] = p->x[1]; x[a][2] = p->x[2];
    }
#endif
}

/* Drifts the listed vertices to t in place (a group tick's start). */
static inline void avi_drift_all(avi_vertex *V, const uint32_t *idx, uint32_t n, double t)
{
#ifdef __AVX2__
    const __m256d tt = _mm256_set1_pd(t);
    for (uint32_t a = 0; a < n; a++) (void)avi_drift_record(&V[idx[a]], tt);
#else
    for (uint32_t a = 0; a < n; a++) avi_drift_record(&V[idx[a]], t);
#endif
}

/* Copies the positions of stencil vertices already at the event's time. */
static inline void avi_gather(const avi_vertex *V, const uint32_t *idx, int n, double x[][3])
{
#ifdef __AVX2__
    for (int a = 0; a < n; a++) {
        __m256d xt = _mm256_loadu_pd(V[idx[a]].x);
        _mm_storeu_pd(x[a], _mm256_castpd256_pd128(xt));
        _mm_store_sd(&x[a][2], _mm256_extractf128_pd(xt, 1));
    }
#else
    for (int a = 0; a < n; a++) {
        const avi_vertex *p = &V[idx[a]];
        x[a][0] = p->x[0]; x[a][1] = p->x[1]; x[a][2] = p->x[2];
    }
#endif
}

#ifdef __AVX2__
/* v -= w M^-1 g on one vertex record, g in lanes 0-2 (lane 3 zero, so that
 * lane 3 of (v, 1/m) keeps 1/m). */
static inline void avi_kick_record(avi_vertex *p, __m256d ww, __m256d ga)
{
    __m256d vm = _mm256_loadu_pd(p->v);
    __m256d s = _mm256_mul_pd(ww, _mm256_permute4x64_pd(vm, 0xFF));
    _mm256_storeu_pd(p->v, _mm256_sub_pd(vm, _mm256_mul_pd(s, ga)));
}

static inline double avi_lane_sum(__m256d sum)
{
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(sum), _mm256_extractf128_pd(sum, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

/* avi_kick with the gradient in registers (avi_tet_gradient_lanes); returns
 * the impulse's lanes summed over the stencil: avi_lane_sum of them is
 * avi_kick's sum. */
static inline __m256d avi_kick_lanes(avi_vertex *V, const uint32_t *idx, int n, double w, const __m256d g[])
{
    const __m256d ww = _mm256_set1_pd(w);
    __m256d sum = _mm256_setzero_pd();
    for (int a = 0; a < n; a++) {
        avi_kick_record(&V[idx[a]], ww, g[a]);
        sum = _mm256_add_pd(sum, g[a]);
    }
    return sum;
}
#endif

/* v_a -= w M_a^-1 g_a; returns a sum of the impulse components, whose
 * finiteness is the blow-up check. */
static inline double avi_kick(avi_vertex *V, const uint32_t *idx, int n, double w, const double g[][3])
{
#ifdef __AVX2__
    __m256d ga[4]; /* stencils have at most 4 vertices */
    for (int a = 0; a < n; a++) ga[a] = _mm256_set_pd(0.0, g[a][2], g[a][1], g[a][0]);
    return avi_lane_sum(avi_kick_lanes(V, idx, n, w, ga));
#else
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
#endif
}

#endif
