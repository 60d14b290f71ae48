/* avi: the asynchronous variational integrator's event loop and observers.
 *
 * Every potential has its own clock t_P = t0 + n dt_P in one event queue.
 * An event pops the earliest potential, drifts only its stencil's vertices
 * to t_P, applies the impulse -dt_P M^-1 grad V_P and reschedules t_P.
 * Events at equal times run in (time, kind rank, potential index) order.
 *
 * Staggered velocities: a potential's first event (n = 0, at t0) applies a
 * half impulse, dt_P / 2. Velocities are then the mid-step velocities of a
 * leapfrog scheme, and with one common dt for all potentials the trajectory
 * is the velocity-Verlet / leapfrog trajectory started from (x0, v0). */
#ifndef AVI_ENGINE_H
#define AVI_ENGINE_H

#include <signal.h>

#include "avi/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct avi_engine avi_engine;

/* What observers read at a time T: the state x + (T - tau) v, before any
 * event at T. Energies in J, momenta in kg m/s.
 *
 * The kinetic energy and the total are those of the motion the integrator
 * represents at T (docs/energy_observable.md): each potential's impulse
 * owed since its last event is added to the stored mid-step velocities,
 * which are then scaled to that motion's amplitude (a Hessian-vector term
 * per clock), and the total adds the potential energy that motion has
 * beyond V at the stored positions, so total = kinetic + elastic + contact
 * + external + O(h^2). On a harmonic mode the total is constant to fourth
 * order in the step. The *_midstep fields
 * keep the mid-step estimate (positions at T with leapfrog velocities),
 * whose oscillation is first order. Momenta use the mid-step velocities:
 * those are the discretely conserved ones. */
typedef struct {
    double time;
    double kinetic;
    double elastic;  /* springs, membranes, hinges, tetrahedra */
    double contact;
    double external; /* gravity */
    double total;
    double linear_momentum[3];
    double angular_momentum[3]; /* about the origin */
    uint64_t events[AVI_KIND_MAX]; /* by kind; entries from AVI_KIND_COUNT on are 0 */
    uint64_t events_total;
    uint64_t active_contact_potentials;
    /* over the contact stencils within reach (the AVI: its manager's; a
     * synchronous engine with contact: closer than 2 contact.thickness);
     * +inf when there is none */
    double min_contact_distance;
    /* Energy friction has dissipated since t = 0: what its impulses took
     * from the kinetic energy as the observable reads it (synchronized
     * velocities), so that total + friction_work stays flat. Not part of
     * total. */
    double friction_work;
    double kinetic_midstep;      /* with the stored mid-step velocities */
    double total_midstep;
} avi_observation;

/* Observer callback: called at t = 0, at every multiple of its interval and
 * at the end of each avi_engine_run. Returns 0 to go on, non-zero to stop the
 * run (the value is returned by avi_engine_run). */
typedef int (*avi_observer_fn)(const avi_engine *engine, double time, void *user);

/* The integrator's settings (include/avi/sync.h): its type selects the
 * asynchronous integrator (AVI_INTEGRATOR_AVI) or a synchronous one. */
typedef struct avi_sync_options avi_sync_options;

/* The engine constructor: an engine over a finalized model (which it
 * borrows, and whose vertex state it advances) with the integrator
 * `options` selects; NULL is the asynchronous integrator without damping.
 * The AVI takes the options' damping and refuses constraints; the
 * synchronous integrators are described in sync.h. NULL on error, with err
 * filled. */
avi_engine *avi_engine_create_with(avi_model *model, const avi_sync_options *options, avi_error *err);
/* avi_engine_create_with(model, NULL, err): the asynchronous integrator. */
avi_engine *avi_engine_create(avi_model *model, avi_error *err);
void avi_engine_destroy(avi_engine *engine);

/* Processes every event with time < t. Returns AVI_OK, or AVI_ERR_RUN when a
 * non-finite state appears or a clock cannot advance time (a step below the
 * resolution of t, t + dt == t: see avi_engine_error), or AVI_INTERRUPTED
 * (the stop flag). Events are processed as their clocks come due: a
 * potential whose step is longer than t takes its first event (at 0) and
 * none after; avi_engine_run refuses a run shorter than every step. */
int avi_engine_advance(avi_engine *engine, double t);

/* A flag (set by a signal handler) that asks the engine to stop: advancing
 * then returns AVI_INTERRUPTED at the next time boundary, with every event
 * before avi_engine_time processed and none at or after it, so a
 * checkpoint taken there resumes exactly. NULL: never stop. */
void avi_engine_set_stop_flag(avi_engine *engine, volatile sig_atomic_t *flag);

/* Processes that run one simulation together (MPI ranks: avi-mpi). Each
 * builds the same model and engine and runs the same event loop; the
 * events at one time (time slices) are cut into parts, each member runs
 * its own, and the exchanges (`allgather`, `alltoallv`) give every member
 * what it needs of the others' results, so that, wherever the loop reads
 * beyond a slice, every member holds the state of the serial engine, bit
 * for bit; the rest of the run is the same on every member. A stop is agreed (`any`) at fixed points of the loop, so
 * that every member stops at the same time boundary. */
typedef struct {
    int rank, size; /* 0 <= rank < size */
    void *ctx;
    /* Member r's counts[r] bytes into recv, in member order (every member
     * knows every count; send holds counts[rank]). 0, or -1 on failure. */
    int (*allgather)(void *ctx, const void *send, void *recv, const size_t *counts);
    /* 1 when the flag is non-zero on any member, else 0; -1 on failure. */
    int (*any)(void *ctx, int flag);
    /* Sends send_counts[s] bytes to each member s (send holds the blocks in
     * member order) and receives recv_counts[q] bytes from each member q
     * into recv (blocks in member order); a member's own counts are 0.
     * 0, or -1 on failure. */
    int (*alltoallv)(void *ctx, const void *send, const size_t *send_counts, void *recv, const size_t *recv_counts);
} avi_ranks;
/* Every engine created after this call in this process runs as member of
 * `ranks` (copied; NULL: alone, the default). */
void avi_set_ranks(const avi_ranks *ranks);

/* Runs the engine on `threads` threads (1 .. 1024; the caller's included),
 * between advances. The result is the same, bit for bit, for every count.
 * A new engine runs on one. AVI_OK, or AVI_ERR_INPUT (a count out of range)
 * or AVI_ERR_RUN (threads could not start), engine error set. */
int avi_engine_set_threads(avi_engine *engine, int threads);
/* The threads the engine runs on (1 before any avi_engine_set_threads). */
int avi_engine_threads(const avi_engine *engine);
/* The thread count worth using, at most `cpus` (a run's default): for the
 * asynchronous integrator without contact or damping, one per 25 000
 * clocks (its events at one time run side by side, and below that a
 * thread costs more than it saves); 1 otherwise (contact and synchronous
 * runs do not pay yet). bench/README.md, "Threads". */
int avi_engine_default_threads(const avi_engine *engine, int cpus);

/* Advances to t_end, calling observers on the way (see avi_observer_fn).
 * The stop flag is read between observer calls too, so a run whose
 * observers come faster than its events still stops. A run in which not
 * one step completes (the engine's smallest time step, or a synchronous
 * step, longer than t_end) is refused with AVI_ERR_INPUT before anything
 * changes: a step that cannot be taken is never silently skipped. */
int avi_engine_run(avi_engine *engine, double t_end);

/* A callback the engine calls now and then while it advances: every
 * AVI_HEARTBEAT_PASSES passes of the event loop (a potential event, a group
 * tick, a contact event or a run of the contact manager each count one),
 * at every run of the contact manager (which drifts every surface vertex:
 * 4096 of them can take a second), every AVI_HEARTBEAT_PASSES observer
 * calls and every synchronous step, whether or not time moves, with the
 * time of the last event processed. For progress lines: it may read the
 * engine but not advance it. NULL: none. */
typedef void (*avi_heartbeat_fn)(const avi_engine *engine, double time, void *user);
#define AVI_HEARTBEAT_PASSES 4096u
void avi_engine_set_heartbeat(avi_engine *engine, avi_heartbeat_fn fn, void *user);

/* Attaches an observer with the given output interval (> 0). */
int avi_engine_add_observer(avi_engine *engine, double interval, avi_observer_fn fn, void *user);

/* How many times observer `index` (in order of registration) was called. */
uint64_t avi_engine_observer_calls(const avi_engine *engine, int index);

/* Time up to which events have been processed. */
double avi_engine_time(const avi_engine *engine);
const avi_model *avi_engine_model(const avi_engine *engine);
const avi_error *avi_engine_error(const avi_engine *engine);
/* Events processed so far, of one kind and in all. */
uint64_t avi_engine_event_count(const avi_engine *engine, avi_kind kind);
uint64_t avi_engine_events_total(const avi_engine *engine);

/* Energies, momenta and event counts at time t (>= every vertex's last drift,
 * e.g. the time of the last advance). Does not change the state. */
void avi_engine_observe(const avi_engine *engine, double t, avi_observation *out);

/* Names the potential with the largest energy at time t ("tet 17
 * (vertices 3, 8, 9, 12): 4.2e+03 J") into buf, for blow-up messages; the
 * first potential (in kind, index order) whose energy is NaN or infinite
 * wins over every finite one. */
void avi_engine_describe_largest_energy(const avi_engine *engine, double t, char *buf, size_t len);

/* A copy of the engine's state at a time t, taken between events, from
 * which observations are computed later, on any thread, while the engine
 * goes on (the model's potentials are read, never written, during a run).
 * Observing a snapshot gives bitwise the values avi_engine_observe gives at
 * its time. */
typedef struct avi_snapshot avi_snapshot;
avi_snapshot *avi_snapshot_create(const avi_model *model);
void avi_snapshot_destroy(avi_snapshot *snapshot);
/* Copies the vertex records (64 bytes each), the contact energy terms and
 * the event counts at t; t as for avi_engine_observe. */
void avi_engine_snapshot(const avi_engine *engine, double t, avi_snapshot *snapshot);
double avi_snapshot_time(const avi_snapshot *snapshot);
uint64_t avi_snapshot_events_total(const avi_snapshot *snapshot);
/* The observation at the snapshot's time (uses the snapshot's scratch). */
void avi_snapshot_observe(avi_snapshot *snapshot, avi_observation *out);
/* A snapshot that skips the synchronization (on: 0): observing it leaves
 * kinetic and total NaN and computes the rest bitwise as a synchronized
 * one, without the clocks' three gradients per potential. For output rows
 * that do not carry the synchronized pair (output.synchronized_every).
 * Snapshots are synchronized when created; the setting holds for later
 * avi_engine_snapshot calls. */
void avi_snapshot_set_synchronized(avi_snapshot *snapshot, int on);
/* output.synchronized_every's auto: the smallest N >= 1 for which the
 * synchronized pair's gradients (three per elastic potential) at every
 * N-th row of interval row_interval cost at most a tenth of the clocks'
 * events between them (each potential's step as built, or the synchronous
 * integrator's; 1 for integrators that owe no impulse), at most 100; 1
 * for models of fewer than 1000 elastic potentials. */
long long avi_synchronized_every(const avi_engine *engine, double row_interval);
/* Positions and velocities at the snapshot's time, as avi_engine_state_at. */
void avi_snapshot_state(const avi_snapshot *snapshot, double *x, double *v);
/* As avi_engine_describe_largest_energy, at the snapshot's time. */
void avi_snapshot_describe_largest_energy(avi_snapshot *snapshot, char *buf, size_t len);

/* Positions and velocities of all vertices at time t, as [n][3] arrays (either
 * may be NULL). Does not change the state. */
void avi_engine_state_at(const avi_engine *engine, double t, double *x, double *v);

#ifdef __cplusplus
}
#endif

#endif
