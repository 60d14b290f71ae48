/* One (stencil, layer) penalty potential of nested-layer contact (Harmon et
 * al. 2009), with d the vertex-face or edge-edge distance of its four
 * vertices and s = eta_l - d the penetration: 0 for s <= 0; past the onset
 * width delta_l, V_l = k_l (s^2 / 2 - delta_l s / 2 + 3 delta_l^2 / 20);
 * inside it, V_l = k_l delta_l^2 (r^4 / 4 - r^5 / 10), r = s / delta_l, so
 * that the stiffness V'' rises as k_l (3 r^2 - 2 r^3) from 0 to k_l and V_l
 * is C^3. Harmon's layer (k_l / 2 s^2) has a stiffness jump at s = 0, which
 * a leapfrog crosses at a random phase of its step and which costs about
 * 0.25 (omega h)^2 of the energy through the layer, either sign; the smooth
 * start costs about 1e-3 (omega h)^2 (docs/research/contact_energy.md,
 * "The smooth onset"). */
#ifndef AVI_CONTACT_POTENTIAL_H
#define AVI_CONTACT_POTENTIAL_H

#include <math.h>
#include <stdint.h>

#include "contact/distance_edge_edge.h"
#include "core/model_internal.h" /* AVI_CONTACT_VALENCE */
#include "contact/distance_point_triangle.h"

enum { AVI_STENCIL_VF = 0, AVI_STENCIL_EE = 1 };

#define AVI_NO_SLOT UINT32_MAX

typedef struct {
    uint32_t v[4];    /* VF: point, triangle; EE: edge a, edge b */
    uint8_t type;     /* AVI_STENCIL_VF or AVI_STENCIL_EE */
    uint8_t alive;    /* 0: retired, dropped when its event comes up */
    uint16_t layer;   /* l >= 1 */
    uint32_t stencil; /* index in the manager's stencil table */
    uint32_t prev;    /* the stencil's next shallower layer, or AVI_NO_SLOT; free list link when free */
    double eta, k;    /* eta_l, k_l */
    double onset;     /* delta_l: width of the stiffness's smooth start */
    double dt, t0;    /* clock: t0 + n dt */
    double dt_own;    /* the layer's own step; dt is it or a power-of-2 part (contact_manager.c, stencil_step) */
    double t_last;    /* its last event (valid from its first) */
    double t_next;    /* its queued event (t_next, n_next); any other entry of it is stale (re-clocked) */
    uint32_t n_next;
} avi_contact_potential;

/* Layer laws; documented in avi_contact_settings. */
static inline double avi_layer_thickness(double eta1, double eta_inf, int l)
{
    return eta_inf + (eta1 - eta_inf) / (double)l;
}
static inline double avi_layer_stiffness(double k1, int l) { return k1 * (double)l * (double)l * (double)l; }
static inline double avi_layer_step(double dt1, int l) { return dt1 / ((double)l * sqrt((double)l)); }
/* delta_l: the zone (eta_{l+1}, eta_l] where layer l is the deepest, so that
 * a layer's stiffness reaches k_l where the next layer starts, and a stencil
 * crossing the zone spends at least 1 / LAYER_RESOLUTION = 5 of its steps
 * in the smooth start (contact_manager.c); half the zone left +1.1e-2 of E0
 * on the ball of docs/research/contact_energy.md at 0.05 m/s. */
#define AVI_ONSET_FRACTION 1.0
static inline double avi_layer_onset(double eta1, double eta_inf, int l)
{
    return AVI_ONSET_FRACTION * (avi_layer_thickness(eta1, eta_inf, l) - avi_layer_thickness(eta1, eta_inf, l + 1));
}

/* The penalty's derivative -dV/dd = k f(s), f as below, and V = k e(s), at
 * penetration s > 0 with onset width delta > 0. */
static inline double avi_penalty_force(double s, double delta)
{
    if (s >= delta) return s - 0.5 * delta;
    double r = s / delta;
    return delta * r * r * r * (1.0 - 0.5 * r);
}
static inline double avi_penalty_energy(double s, double delta)
{
    if (s >= delta) return s * (0.5 * s - 0.5 * delta) + 0.15 * delta * delta;
    double r = s / delta, r4 = r * r * r * r;
    return delta * delta * r4 * (0.25 - 0.1 * r);
}

static inline double avi_stencil_distance(int type, const double x[4][3])
{
    return type == AVI_STENCIL_VF ? avi_pt_distance(x, NULL) : avi_ee_distance(x, NULL);
}

/* Energy at stencil positions x. */
static inline double avi_contact_energy(const avi_contact_potential *p, const double x[4][3])
{
    double d = avi_stencil_distance(p->type, x);
    return d < p->eta ? p->k * avi_penalty_energy(p->eta - d, p->onset) : 0.0;
}

/* g[a] = dV/dx_a; returns 0 when the layer is not penetrated (g untouched),
 * 1 otherwise. */
static inline int avi_contact_gradient(const avi_contact_potential *p, const double x[4][3], double g[4][3])
{
    double gd[4][3];
    double d = p->type == AVI_STENCIL_VF ? avi_pt_distance_gradient(x, gd) : avi_ee_distance_gradient(x, gd);
    if (!(d < p->eta)) return 0;
    double s = -p->k * avi_penalty_force(p->eta - d, p->onset);
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 3; c++) g[a][c] = s * gd[a][c];
    return 1;
}

#endif
