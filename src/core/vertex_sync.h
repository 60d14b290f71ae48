/* Synchronized velocities of a few vertices at an event time, for the
 * friction work (src/contact/contact_friction.c): the velocity correction
 * velocity_sync.c computes for every vertex at an observation, here for
 * the handful of vertices one contact event touches. */
#ifndef AVI_VERTEX_SYNC_H
#define AVI_VERTEX_SYNC_H

#include "core/engine_internal.h"

/* Vertex -> ids of the potentials with a clock on it (CSR:
 * ids[start[v] .. start[v + 1]), each vertex's in kind and index order). */
typedef struct {
    uint32_t *start, *ids;
    uint8_t *slot; /* with the cache: slot[j], the vertex's place in the stencil of ids[j] */
    /* The owed-impulse cache (avi_vertex_clocks_keep; NULL: none): for
     * potential i of kind k, row base[k] + i, the part of its step the
     * gradient was taken in (tick[2 row] = 4 j + q for the q-th quarter of
     * the step after tick j, tick[2 row + 1] = the step; NaN, NaN: none)
     * and that gradient (3 slots(k) doubles at grad + gbase[k] +
     * 3 slots(k) i). step[row] is the potential's own (unrefined) step and
     * row[j] entry j's row, kept so that the owed sum reads neither the
     * potential's record nor the kind tables for every pair. */
    double *tick, *grad, *step;
    uint32_t *row;
    size_t base[AVI_KIND_COUNT], gbase[AVI_KIND_COUNT], rows, ngrad;
} avi_vertex_clocks;

/* Builds it for m's mesh vertices over the kinds below `kinds`
 * (AVI_KIND_CONTACT: elastic and gravity; AVI_KIND_GRAVITY: elastic, as
 * core/refine.c wants). 0, or -1 when out of memory (c then empty). */
int avi_vertex_clocks_build(avi_vertex_clocks *c, const avi_model *m, unsigned kinds);
void avi_vertex_clocks_free(avi_vertex_clocks *c);

/* Gives c the owed-impulse cache of avi_engine_vertex_owed for the kinds
 * below `kinds` (those c was built with), every row empty. 0, or -1 when
 * out of memory. */
int avi_vertex_clocks_keep(avi_vertex_clocks *c, const avi_model *m, unsigned kinds);

/* dv[a] = -(1/m_v) sum_P w_P grad_v V_P(x(t)) for vertex v = v[a]: the
 * part of the next impulses of the elastic and gravity potentials on v
 * that belongs to (t_P + h_P / 2, t] (avi_owed_weight), so that V[v].v +
 * dv[a] is v's velocity at t, as the energy observable reads it. Clocks
 * tick at multiples of their steps (refined ones: core/refine.h); a clock
 * due exactly at t has ticked (contact ranks after them). During a contact
 * event at t. dv[a] = 0 for pinned vertices. With the cache
 * (avi_vertex_clocks_keep), grad V_P is taken at x(t') for the first t' in
 * the quarter of P's step that holds t at which it was asked for: it
 * differs from the one at x(t) by O(h_P / 4) and w_P is O(h_P), so dv
 * moves at second order (docs/energy_observable.md, "Friction work"). */
void avi_engine_vertex_owed(const avi_engine *e, avi_vertex_clocks *c, double t, const uint32_t *v, int n,
                            double dv[][3]);

#endif
