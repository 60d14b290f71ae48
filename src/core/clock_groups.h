/* Clock groups: potentials whose steps are bitwise equal tick together.
 *
 * Every clock starts at t = 0 with n = 0, so clocks with the same step dt
 * share every event time n dt. Their events are ties, which run in
 * (time, kind rank, index) order. A group keeps them out of the queue: it
 * holds one entry, a cursor, keyed (t, id of its next member), with
 * AVI_GROUP_CURSOR set in n. The engine runs members from the cursor in id
 * order for as long as no other entry at the same time has a smaller id,
 * then either puts the cursor back keyed by the next member (another tie
 * comes first) or, after the last member, reschedules it once for the whole
 * group. The order of events is exactly that of one entry per potential, so
 * results are bitwise the same; the queue does one operation per group tick
 * instead of one per event. Step levels (time_step.levels_per_octave) make
 * large groups; exact steps on a uniform mesh make some.
 *
 * Within a tie of a few clocks (the engine's run_tie), a group only gives
 * way to entries that share a vertex with it (`conflict`): events on
 * disjoint vertices commute exactly, each reading positions drifted to the
 * same time and kicking only its own vertices, so the results stay bitwise
 * those of id order. Levels an octave apart tie at every tick of the
 * coarser one; on a mesh whose numbering interleaves the levels (x fastest
 * on a mesh graded along x), giving way at every smaller id cut each tick
 * into pieces of a few members.
 *
 * A tick that starts at the group's first member drifts the vertices of
 * all members to its time at once (in place of one drift per member and
 * stencil vertex): every event until the group's last member is at that
 * time, so a vertex shared with an event in between is drifted there by
 * either, and x + (t - tau) v is computed from the same operands in the
 * same order. The kicks stay per member, in member order.
 *
 * Potentials whose vertices are all pinned have no clock and are in no
 * group (avi_model_potential_pinned): their events would change nothing.
 *
 * Checkpoints keep one entry per scheduled potential (avi_groups_expand gives them),
 * so their format does not depend on the grouping. */
#ifndef AVI_CLOCK_GROUPS_H
#define AVI_CLOCK_GROUPS_H

#include "core/event.h"
#include "core/model_internal.h"

#include <stddef.h>
#include <stdint.h>

/* Set in avi_event.n of a group's cursor; step counters stay below it. */
#define AVI_GROUP_CURSOR 0x80000000u
#define AVI_GROUP_NONE UINT32_MAX
/* Smaller sets of equal steps stay single clocks. */
#define AVI_GROUP_MIN_SIZE 2
/* Groups up to this many get the conflict matrix (128 KiB at the most). */
#define AVI_GROUP_CONFLICT_MAX 1024

typedef struct {
    double dt;
    uint32_t first, count; /* members member[first .. first + count) */
    uint32_t pos;          /* next member of the tick in progress (0 between ticks) */
    uint32_t vfirst, vcount; /* the members' vertices vertex[vfirst .. vfirst + vcount) */
} avi_clock_group;

typedef struct {
    avi_clock_group *group;
    uint32_t ngroup;
    uint32_t *member;   /* potential ids, each group's in id order */
    uint32_t *group_of; /* by potential number (offset[kind] + index): group, or AVI_GROUP_NONE */
    uint32_t *vertex;   /* each group's vertices, ascending, each once: a tick drifts them all at its start */
    uint64_t *conflict; /* bit b of row a (rows of conflict_words words): groups a and b share a vertex;
                           NULL above AVI_GROUP_CONFLICT_MAX groups */
    size_t conflict_words;
    size_t offset[AVI_KIND_COUNT];
    size_t npotential;  /* potentials of the kinds that can group */
} avi_clock_groups;

/* Groups the clocks of m's elastic and gravity potentials by step. An empty
 * grouping (no group) allocates nothing. Returns 0, or -1 when out of memory. */
int avi_groups_build(avi_clock_groups *g, const avi_model *m);
void avi_groups_free(avi_clock_groups *g);

/* Bytes allocated. */
size_t avi_groups_bytes(const avi_clock_groups *g);

/* The group a potential id belongs to, or AVI_GROUP_NONE. */
static inline uint32_t avi_group_of(const avi_clock_groups *g, uint32_t id)
{
    unsigned kind = id >> AVI_ID_KIND_SHIFT;
    if (!g->group_of || kind >= AVI_MODEL_KINDS) return AVI_GROUP_NONE;
    return g->group_of[g->offset[kind] + (id & AVI_ID_INDEX_MASK)];
}

/* Whether groups a and b share a vertex; without the matrix, always. */
static inline int avi_groups_conflict(const avi_clock_groups *g, uint32_t a, uint32_t b)
{
    return !g->conflict || (g->conflict[a * g->conflict_words + b / 64] >> (b % 64) & 1);
}

/* The entries one clock per potential would have in place of a cursor:
 * members before the cursor have had this tick, the others have not.
 * Writes group size entries to out; returns that count. */
size_t avi_groups_expand(const avi_clock_groups *g, avi_event cursor, avi_event *out);

#endif
