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
} avi_vertex_clocks;

/* Builds it for m's mesh vertices over the kinds below `kinds`
 * (AVI_KIND_CONTACT: elastic and gravity; AVI_KIND_GRAVITY: elastic, as
 * core/refine.c wants). 0, or -1 when out of memory (c then empty). */
int avi_vertex_clocks_build(avi_vertex_clocks *c, const avi_model *m, unsigned kinds);
void avi_vertex_clocks_free(avi_vertex_clocks *c);

/* dv[a] = -(1/m_v) sum_P w_P grad_v V_P(x(t)) for vertex v = v[a]: the
 * part of the next impulses of the elastic and gravity potentials on v
 * that belongs to (t_P + h_P / 2, t] (avi_owed_weight), so that V[v].v +
 * dv[a] is v's velocity at t, as the energy observable reads it. Clocks
 * tick at multiples of their steps (refined ones: core/refine.h); a clock
 * due exactly at t has ticked (contact ranks after them). During a contact
 * event at t. dv[a] = 0 for pinned vertices. */
void avi_engine_vertex_owed(const avi_engine *e, const avi_vertex_clocks *c, double t, const uint32_t *v, int n,
                            double dv[][3]);

#endif
