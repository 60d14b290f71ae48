/* The contact manager: which (stencil, layer) penalty potentials are in the
 * event queue.
 *
 * Activation cannot miss, given a speed cap vcap that every vertex respects
 * until the next check (the engine checks each kicked vertex and calls the
 * manager at once when one exceeds it):
 * - layer 1: at a manager run at t with window W, every stencil whose
 *   distance d satisfies d - 2 vcap W <= eta_1 gets layer 1; no stencil can
 *   lose more than 2 vcap W of distance before the next run at t + W.
 * - layer l + 1: at every event of a stencil's deepest layer l (dt_l apart),
 *   if d - 2 vcap dt_l <= eta_{l+1}, layer l + 1 starts its clock now.
 * - retirement: the deepest layer l >= 2 retires at its event when
 *   d - 2 vcap dt_{l-1} > eta_l, since layer l - 1 would re-activate it in
 *   time; layer 1 retires at a manager run when the stencil is out of reach
 *   (d - 2 vcap W > eta_1). Retired potentials leave the queue lazily.
 * A retired layer exerts no force (d > eta_l), so retiring changes nothing.
 *
 * Energy: layers 2 and deeper step at omega_l dt_l = 2 safety / (4
 * sqrt(AVI_CONTACT_VALENCE)) (0.031 at safety 0.25), 4 times below their
 * stability step: their force has a kink at d = eta_l, crossed at a random
 * phase of the step, which leaves about 0.25 (omega_l dt_l)^2 of the energy
 * passing through the layer, either sign (ONSET_RESOLUTION in
 * contact_manager.c). Layer 1 has a smooth onset about 2.5 of its steps wide
 * at the stencil's arrival speed and steps at its stability step (0.125)
 * until the stencil, with layer 2 active, closes in on it, then at the
 * kinked layers' step, back at its stability step at rest (plan_crossing,
 * nears_layer2 and at_rest there; layer steps take the safety up to 0.25
 * only, LAYER_SAFETY_MAX). The larger error is the elastic potentials on a
 * vertex in contact. A vertex carrying a load F sits
 * in layers whose summed stiffness K must hold F within eta_1 - eta_inf
 * (K ~ F / (eta_1 - eta_inf)), while the elastic potentials on it keep their
 * own steps dt_el; once sqrt(K / m) dt_el passes about 3 their impulses
 * resonate with the vertex's oscillation in the layers (the instability of
 * multiple-time-step methods, Biesiadecki and Skeel 1993) and energy grows,
 * by +26 % for a ball on a flat with eta_1 = 5e-5 m. Shorter contact steps do
 * not help; shorter elastic steps on the vertex do. So every activation and
 * retirement updates the vertex's summed layers (layer_sum, K_v = k_1 sum
 * l^3 over its active layers) and reports omega_v = sqrt(K_v / m_v) to the
 * engine (avi_engine_refine), which refines the elastic clocks on the
 * vertex to dt omega_v <= 1 (src/core/refine.h);
 * docs/research/contact_energy.md has the measurements. */
#ifndef AVI_CONTACT_MANAGER_H
#define AVI_CONTACT_MANAGER_H

#include "contact/broad_phase.h"
#include "contact/contact_potential.h"
#include "core/engine_internal.h"
#include "core/vertex_sync.h"

typedef struct {
    uint8_t type;
    uint32_t a, b;      /* VF: point, triangle; EE: edge, edge (a < b) */
    uint32_t v[4];
    uint16_t layers;    /* active layers 1..layers */
    uint32_t deepest;   /* slot of layer `layers` */
    uint32_t epoch;     /* last manager run that found it within reach */
    double dt1;         /* layer-1 step of this stencil */
} avi_contact_stencil;

/* The primitives of vertex-face and edge-edge stencils (the contact
 * manager's and the DCR stage's). */
typedef struct {
    uint32_t *points; /* contact points, sorted, once */
    size_t npoints;
    const uint32_t (*tris)[3]; /* contact triangles */
    size_t ntris;
    uint32_t (*edges)[2]; /* their edges (a < b), sorted, once */
    size_t nedges;
    double mean_edge; /* their mean rest length (0 without edges): the broad phase's cell */
} avi_contact_surface;

typedef struct avi_contact_manager {
    /* First: what the engine's event loop reads (core/engine_internal.h):
     * next_run, the speed cap's square vcap2, speed_triggers. */
    avi_contact_clock clock;
    const avi_model *model; /* whose vertex records the manager drifts and kicks */
    /* contact-eligible primitives (model vertex indices) */
    avi_contact_surface surf;
    double eta1, eta_inf, k1, safety, neighbor_ratio;
    double mu;            /* Coulomb friction coefficient, 0: none */
    double friction_work; /* energy friction impulses removed so far (contact_friction.h) */
    avi_vertex_clocks clocks; /* with friction: the clocks on each vertex, for its synchronized velocity */
    int max_layers;
    double cell;          /* broad-phase cell size */
    double window_max;    /* longest manager window */

    /* potentials (queue index = slot) and stencils */
    avi_contact_potential *pot;
    size_t npot, cap_pot;
    uint32_t free_slot;   /* free list through .prev */
    size_t alive;
    avi_contact_stencil *st;
    size_t nst, cap_st;
    uint32_t *hash;       /* stencil index + 1, open addressing */
    size_t hash_cap;

    /* Candidate pairs within a wider radius, kept for several runs (a
     * Verlet list), sorted by (a, b) so that the order of activations does
     * not depend on when the list was built. */
    avi_candidate *coarse_vf, *coarse_ee;
    double *skip_vf, *skip_ee; /* per candidate: no exact look needed before this time */
    uint8_t *due;         /* per candidate of a run (vertex-face, then edge-edge): within reach */
    size_t cap_due;
    avi_cell_entry *sort_keys; /* scratch of the lists' radix sort */
    size_t cap_sort;
    size_t ncoarse_vf, ncoarse_ee, cap_coarse_vf, cap_coarse_ee;
    double coarse_until, coarse_vcap;
    uint64_t coarse_builds;
    double vcap;          /* speed cap (its square: clock.vcap2) */
    uint32_t epoch;
    double (*x)[3];       /* scratch: positions at the run's time */
    uint64_t *layer_sum;  /* per vertex: sum of l^3 over the active layers on it (K_v = k_1 times it) */
    avi_broad_phase bp;

    /* counters */
    uint64_t runs, activations, retirements; /* speed triggers: clock */
    double dt_min;        /* smallest layer step used so far */
} avi_contact_manager;

/* The model's contact points (every vertex of a contact triangle and every
 * contact point) and the edges of its contact triangles (a < b), each
 * sorted and once, malloc'd: the primitives of vertex-face and edge-edge
 * stencils. 0, or -1 when out of memory. */
int avi_contact_primitives(const avi_model *m, uint32_t **points, size_t *npoints, uint32_t (**edges)[2],
                           size_t *nedges);

/* A model's contact surface with its primitives, as above, and its contact
 * triangles (the model's array, not copied); empty without contact. 0, or
 * -1 when out of memory. */
int avi_contact_surface_init(avi_contact_surface *s, const avi_model *m);
void avi_contact_surface_free(avi_contact_surface *s);

/* Builds the manager of a finalized model with contact; NULL on error. */
avi_contact_manager *avi_contact_create(const avi_model *m, avi_error *err);
void avi_contact_destroy(avi_contact_manager *cm);

/* Runs the manager at time t: activates and retires layer-1 potentials,
 * schedules the next run. Returns AVI_OK or an error status (err filled).
 * The broad phase and the exact tests split across the engine's pool
 * (avi_engine_pool); every change of state stays serial, in candidate
 * order, so the result is the same for any thread count. */
int avi_contact_run(avi_contact_manager *cm, avi_engine *e, double t);

/* One event ev = (t, id, n) of a contact potential, off the queue: when the
 * potential goes on, its next event is scheduled (avi_engine_schedule);
 * one retired at this event or before is not (its slot is freed). *count
 * grows by one unless it had been retired before. AVI_OK, or an error
 * status with the engine's error set. */
int avi_contact_event(avi_contact_manager *cm, avi_engine *e, avi_event ev, uint64_t *count);

/* Checkpoint state (contact_state.c): save 0 or -1; load AVI_OK, or
 * AVI_ERR_INPUT (an array missing or a value out of range) or AVI_ERR_RUN
 * (out of memory) with err naming what. */
int avi_contact_save(const avi_contact_manager *cm, avi_state_io *io);
int avi_contact_load(avi_contact_manager *cm, avi_state_io *io, avi_error *err);

/* For loading: room for npot potentials and nst stencils (counts are then
 * set by the caller), and the stencil index rebuilt from the stencil array.
 * 0 or -1 when out of memory. */
int avi_contact_reserve(avi_contact_manager *cm, size_t npot, size_t nst);
int avi_contact_reindex(avi_contact_manager *cm);

/* Observation at time t: contact energy, alive potentials, minimum distance
 * over the stencils within reach (+inf when none), energy dissipated by
 * friction so far. */
void avi_contact_observe(const avi_contact_manager *cm, double t, double *energy, uint64_t *active,
                         double *min_distance, double *friction_work);

/* The impulse contact potential `slot` owes at an observation at t, added
 * to imp (avi_contact_ops.owe; zero for a retired potential). */
void avi_contact_owe(const avi_contact_manager *cm, uint32_t slot, double t_next, uint32_t n, double t,
                     const double (*xt)[3],
                     double (*imp)[3]);

#endif
