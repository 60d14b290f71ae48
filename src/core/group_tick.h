/* A group tick on the engine's threads, with the serial tick's bits
 * (issue 30).
 *
 * Every member of a group tick runs at one time t, so (clock_groups.h) all
 * of them read the positions the tick's drift gave and only the order of
 * the kicks on a shared vertex record matters. The tick's members are cut
 * into contiguous parts; each part runs its members in order on one
 * thread: gradient, then the kick, at once on each record that only this
 * part's members touch, stored for the others. The stored kicks (records
 * shared between parts: a seam, small in memory order) are then applied in
 * part order, which is member order, so every record gets the serial
 * kicks in the serial order. Only ticks in the serial loop's drift-all form
 * (from the first member, the group's records within a quarter of the L2
 * cache) come here: their records are drifted first, each once, in
 * parallel, as the serial tick drifts them at its start. Ticks drifted
 * member by member stay serial: they read their records once, where a
 * separate drift pass reads them twice (the 1M-tet bar ran at 0.37x that
 * way). Time slices (core/time_slice.h) take every event at a new time
 * first; ticks come here when the slice was left to the serial loop
 * (undone by a speed trigger, or refined clocks share its time).
 *
 * Which part a record's kicks belong to comes from spans built once per
 * grouping: for each member slot its record's place in the group's vertex
 * list, and for each of those the first and last member that touches it.
 * Ticks with contact (the speed check stops a tick at its first fast
 * vertex) or damping (it reads velocities that earlier members kicked) run
 * serially. docs/ARCHITECTURE.md, "Parallel executor". */
#ifndef AVI_GROUP_TICK_H
#define AVI_GROUP_TICK_H

#include "core/engine_internal.h"

/* Ticks of fewer members run serially: a pool call costs microseconds. */
#define AVI_GROUP_TICK_PARALLEL_MIN 256

/* Members pos .. end-1 of group gr's tick at t with impulse weight half * dt
 * on the engine's pool, in the drift-all form (the group's records drifted
 * first). Returns 1 when it ran them (counts grown; *sum_finite 0 when some
 * member's impulse was not finite, for the caller's blow-up report), 0 when
 * the tick must run serially (nothing changed), -1 when out of memory (the
 * run must fail: the tick may be partly done). */
int avi_group_tick_parallel(avi_engine *e, const avi_clock_group *gr, const uint32_t *mem, uint32_t pos,
                            uint32_t end, double t, double half, uint64_t *counts, int *sum_finite);

/* Ticks run on the pool, their members, the kicks kept for seams, and the
 * ticks undone for the serial loop (contact), since the spans were built. */
void avi_group_tick_stats(const avi_engine *e, uint64_t *ticks, uint64_t *members, uint64_t *seam, uint64_t *undone);

/* Frees the spans and scratch (the engine's destroy, and when the grouping
 * is rebuilt). */
void avi_group_tick_free(avi_engine *e);

#endif
