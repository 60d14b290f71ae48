/* Refined elastic clocks on vertices in contact (issue 20).
 *
 * A vertex pressed into nested penalty layers oscillates at
 * omega_v = sqrt(K_v / m_v), K_v the summed stiffness of the active layers
 * of every stencil on it, and the load sets K_v (K ~ F / (eta_1 - eta_inf)),
 * not the layer law. Elastic potentials on the vertex keeping their own
 * step dt_0 sample that oscillation: once omega_v dt_0 passes about 3
 * energy grows (multiple-time-step resonance, Biesiadecki and Skeel 1993;
 * docs/research/contact_energy.md). The rule: every elastic potential with
 * a vertex v in contact runs at level k, step dt_0 / 2^k, the smallest
 * k >= 0 with (dt_0 / 2^k) omega_v <= AVI_REFINE_RATIO for each of its
 * vertices; when the layers leave, it coarsens back.
 *
 * The contact manager reports omega_v whenever a vertex's layers change
 * (avi_engine_refine); a potential whose level must change is "owned":
 * it leaves its clock group (the group is dissolved at its cursor's next
 * pop) and its events go through avi_refine_event_begin and _end (around
 * the engine's application of them, core/engine.c), which change the level
 * at the potential's next event. An AVI admits any sequence of event times
 * per potential (Lew et al. 2003); the impulse weight of an event is
 * (dt_prev + dt_next) / 2 (dt_next / 2 at the first), which is the engine's
 * weight when the step does not change. Levels are powers of 2, so an
 * event time stays n dt_0 / 2^k with an integer n (bitwise the time the
 * coarse clock would have: the products are the same real number);
 * coarsening waits for an event whose time is a multiple of the coarser
 * step. A potential back at level 0 with no refinement wanted is released
 * and runs as before. */
#ifndef AVI_REFINE_H
#define AVI_REFINE_H

#include "core/engine_internal.h"

/* c of the rule: refined steps resolve omega_v to dt omega_v <= c. The
 * measured onset of the gain is dt omega_v ~ 3 (contact_energy.md). */
#define AVI_REFINE_RATIO 1.0
/* Levels stop here (steps down to dt_0 / 2^20). */
#define AVI_REFINE_MAX_LEVEL 20
/* Coarse steps a potential stays refined after its vertices' layers left. */
#define AVI_REFINE_HOLD 16.0

typedef struct avi_refine {
    size_t offset[AVI_MODEL_KINDS]; /* potential number = offset[kind] + index */
    size_t npot, nv;
    uint8_t *owned;   /* per potential: its events go through avi_refine_event_begin/_end */
    uint8_t *level;   /* per potential: level of its present step */
    uint8_t *target;  /* per potential: level its vertices' omegas ask for */
    double *last_touch; /* per potential: last event with layers on a vertex (refined ones) */
    double *omega;    /* per vertex: sqrt(K_v / m_v) of its layers, 0 without */
    uint32_t *adj_start, *adj; /* per vertex: ids of the unpinned elastic potentials on it */
    uint8_t *dissolve; /* per clock group: dissolve at its cursor's next pop */
    uint32_t ngroup;
    uint64_t switches; /* level changes made */
} avi_refine;

static inline int avi_refine_owns(const avi_refine *r, uint32_t id)
{
    return r->owned[r->offset[id >> AVI_ID_KIND_SHIFT] + (id & AVI_ID_INDEX_MASK)];
}

static inline int avi_refine_dissolving(const avi_refine *r, uint32_t group)
{
    return group < r->ngroup && r->dissolve[group];
}

/* The event ev of an owned potential, in two halves around the engine's
 * application of it (core/engine.c): begin returns the impulse weight
 * `half` (of the old and new steps, in units of the model step) and fixes
 * the level of its next step in *next_level; end, given the model step dt,
 * records that level and returns the potential's next event (its step
 * count at AVI_GROUP_CURSOR on overflow, which avi_engine_schedule
 * reports). */
double avi_refine_event_begin(avi_refine *r, const avi_model *m, avi_event ev, int *next_level);
avi_event avi_refine_event_end(avi_refine *r, avi_event ev, int next_level, double dt);
/* Group gi's cursor has been expanded into single clocks. */
static inline void avi_refine_dissolved(avi_refine *r, uint32_t gi) { r->dissolve[gi] = 0; }
/* The level of potential id's present step (0 for contact ids, or
 * without refinement). */
static inline int avi_refine_level(const avi_refine *r, uint32_t id)
{
    if (!r || id >> AVI_ID_KIND_SHIFT >= AVI_MODEL_KINDS) return 0;
    return r->level[r->offset[id >> AVI_ID_KIND_SHIFT] + (id & AVI_ID_INDEX_MASK)];
}
void avi_refine_destroy(avi_refine *r);

/* Checkpoint state (core/state_io.h): every vertex's omega and every
 * potential's level. Load recomputes targets and ownership from them and
 * marks the groups of owned potentials to dissolve (groups are rebuilt on
 * load). save 0 or -1; load AVI_OK or a status with err set. */
int avi_refine_save(const avi_refine *r, avi_state_io *io);
int avi_refine_load(avi_engine *e, avi_state_io *io, avi_error *err);

#endif
