/* One (stencil, layer) penalty potential of nested-layer contact (Harmon et
 * al. 2009): V_l(d) = k_l / 2 (eta_l - d)^2 for d < eta_l, 0 otherwise, with d
 * the vertex-face or edge-edge distance of its four vertices; layer 1 with a
 * smooth onset of width delta (below). */
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
    double onset;     /* delta: width of the stiffness's smooth start; 0: Harmon's kink */
    double dt, t0;    /* clock: t0 + n dt */
} avi_contact_potential;

/* Layer laws; documented in avi_contact_settings. */
static inline double avi_layer_thickness(double eta1, double eta_inf, int l)
{
    return eta_inf + (eta1 - eta_inf) / (double)l;
}
static inline double avi_layer_stiffness(double k1, int l) { return k1 * (double)l * (double)l * (double)l; }
static inline double avi_layer_step(double dt1, int l) { return dt1 / ((double)l * sqrt((double)l)); }

/* The penalty at penetration s = eta_l - d > 0 with onset width delta:
 * -dV/dd = k f(s), V = k e(s). The stiffness V'' rises as k (3 r^2 - 2 r^3),
 * r = s / delta, from 0 to k over s in [0, delta], then stays k: f = delta
 * (r^3 - r^4 / 2), then s - delta / 2; e = delta^2 (r^4 / 4 - r^5 / 10),
 * then s^2 / 2 - delta s / 2 + 3 delta^2 / 20 (C^3). delta = 0 is Harmon's
 * layer (avi_layer_energy keeps its arithmetic). */
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

/* Energy of potential p at distance d. */
static inline double avi_layer_energy(const avi_contact_potential *p, double d)
{
    if (!(d < p->eta)) return 0.0;
    double s = p->eta - d;
    return p->onset == 0.0 ? 0.5 * p->k * s * s : p->k * avi_penalty_energy(s, p->onset);
}

/* Energy at stencil positions x. */
static inline double avi_contact_energy(const avi_contact_potential *p, const double x[4][3])
{
    return avi_layer_energy(p, avi_stencil_distance(p->type, x));
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
