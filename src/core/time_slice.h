/* Time slices on the engine's threads, with the serial bits (issue 30).
 *
 * A slice is every event at one time t: the queue's entries keyed t
 * (group cursors from their first member, single clocks). Drifting a
 * record that is already at t leaves it as it is (core/event_kernels.h),
 * so every event at t reads the positions its records had at t, whichever
 * event drifted them first: only the kicks on a record shared by two
 * events must follow the serial order, which is member id order (groups
 * run in id order, clock_groups.h).
 *
 * The potentials are split once into parts, contiguous in the vertex
 * numbering of their first vertex and of about equal event rates (the sum
 * of 1 / dt); a record is in the seam when potentials of two parts touch
 * it. A slice drifts its seam records to t first; then each part runs its
 * members in id order on one thread, drifting and kicking the records
 * only it touches as the serial loop does and keeping its kicks on the
 * seam; the kept kicks are then applied by one thread in member id order
 * (a merge of the parts' lists). Every record thus reads the serial
 * positions and gets the serial kicks in the serial order, for any number
 * of parts and any thread that runs them.
 *
 * With contact, every kick is checked against the manager's speed cap as
 * the serial loop checks it (a part's own records after each kick, the
 * seam's as its kicks are applied in id order); a slice in which one
 * passes it, or an impulse is not finite, is restored from copies taken
 * at its start and left to the serial loop, which stops at that event for
 * the manager. Slices with damping (it reads velocities earlier events
 * kicked) or refined clocks run serially, as do slices of fewer than
 * AVI_SLICE_PARALLEL_MIN events. docs/ARCHITECTURE.md,
 * "Parallel executor". */
#ifndef AVI_TIME_SLICE_H
#define AVI_TIME_SLICE_H

#include "core/engine_internal.h"

/* Slices of fewer events run serially: a pool call costs microseconds. */
#define AVI_SLICE_PARALLEL_MIN 256
/* Slices of more queue entries run serially (the start at t = 0 has one
 * per group and single clock). */
#define AVI_SLICE_ENTRIES_MAX 255
/* At most this many parts, whatever the threads. */
#define AVI_SLICE_PARTS_MAX 64

/* Runs the events of the slice ev[0..k) (every queue entry at time t, in
 * queue order; group cursors at their first member) on the engine's pool,
 * or with ranks (avi_set_ranks) this member's part and one exchange, and
 * adds them to counts. Leaves the queue to the caller. Returns 0;
 * AVI_SLICE_BLOW_UP when the impulse of member *blown, the first in the
 * serial order whose impulse is not finite, was not (counts then hold the
 * events up to it, as in the serial loop; the members after it ran too);
 * -1 when out of memory (before anything changed); -2 when the exchange
 * between ranks failed. */
#define AVI_SLICE_BLOW_UP 1
/* With contact, a kick past the manager's speed cap (or an impulse not
 * finite): the records are as before the slice, which must run serially. */
#define AVI_SLICE_UNDONE 2
int avi_slice_run(avi_engine *e, const avi_event *ev, size_t k, double t, uint64_t *counts, uint32_t *blown);

/* Cuts the parts for the engine's pool now (avi_engine_set_threads), so
 * that the first slice does not pay for it inside a run: 0, or -1 when out
 * of memory. Without a pool, with contact, for a synchronous integrator or
 * without clock groups, nothing. */
int avi_slice_prepare(avi_engine *e);

/* The default thread count of a run (avi_run_options.threads and
 * parallel.threads unset): one per AVI_SLICE_POTENTIALS_PER_THREAD clocks,
 * at most `cpus`, for the AVI without contact or damping, whose events run
 * in slices; 1 otherwise (contact and synchronous runs do not pay yet,
 * bench/README.md "Threads"), and 1 a rank on MPI ranks. */
#define AVI_SLICE_POTENTIALS_PER_THREAD 25000
int avi_slice_default_threads(const avi_engine *e, int cpus);

/* Slices run on the pool, their events and the kicks kept for seams. */
void avi_slice_stats(const avi_engine *e, uint64_t *slices, uint64_t *events, uint64_t *seam);
/* Slices undone for the serial loop (contact). */
uint64_t avi_slice_undone(const avi_engine *e);
/* Over the slices run, the sum of the events of each one's busiest part:
 * against events / parts, how far the cut leaves slices unbalanced (the
 * scaling model, bench/threads.c). */
uint64_t avi_slice_busiest(const avi_engine *e);

/* With ranks: after a slice, each member holds the other members' own
 * records of it stale (only the seam's are exchanged). avi_slice_sync
 * gives every member every record changed since the last sync, in one
 * exchange, so that all hold the serial state again: the loop calls it
 * before anything that reads records beyond a slice (a serial event, the
 * contact manager, the end of an advance). 0 (also alone or when nothing
 * is stale), -1 when out of memory, -2 when the exchange failed. */
int avi_slice_sync(avi_engine *e);
/* With ranks: the records rec[0..n) (distinct) current on every member,
 * with one exchange of those a slice changed since the last sync, if any
 * (every member decides alike: the dirty lists are the same on all); for
 * the serial loop's next event. 0, -1 when out of memory, -2 when the
 * exchange failed. */
int avi_slice_fetch(avi_engine *e, const uint32_t *rec, size_t n);

/* Frees the parts (the engine's destroy, and a new thread count). */
void avi_slice_free(avi_engine *e);

#endif
