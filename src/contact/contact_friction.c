/* Coulomb friction on penalty impulses: the friction rule of Bridson,
 * Fedkiw and Anderson (2002), v_T' = max(1 - mu dv_N / |v_T|, 0) v_T for the
 * relative tangential velocity v_T and the normal impulse's change dv_N of
 * the relative normal velocity, applied as Harmon et al. (2009) apply it:
 * with every penalty impulse of the asynchronous contact integrator.
 *
 * The distance gradient of a stencil is gd[a] = c_a n with n the unit
 * normal from side B's closest point to side A's and c_a the closest-point
 * weights: (1, -b1, -b2, -b3) for vertex-face (b the barycentric
 * coordinates), (1 - s, s, -(1 - t), -t) for edge-edge. Side A's weights sum
 * to 1, side B's to -1. The relative velocity of the closest points is
 * u = sum_a c_a v_a; an impulse P (momentum) given to vertex a as c_a P
 * changes it by W P with W = sum_a c_a^2 / m_a, the inverse effective mass
 * (with equal masses m: (1 + w1^2 + w2^2 + w3^2) / m, the factor Bridson et
 * al. divide a point-triangle impulse by). Linear momentum changes
 * by P sum_a c_a = 0; angular momentum by (sum_a c_a x_a) x P = d n x P,
 * since the two closest points are d apart along n (at most eta_1).
 *
 * The work: the change of the energy observable (docs/energy_observable.md)
 * the impulse makes, m_a (vs_a . dv_a + |dv_a|^2 / 2) per vertex, vs_a its
 * synchronized velocity at the event (the stored mid-step velocity plus
 * what the clocks on it owe, core/vertex_sync.h). The mid-step velocity
 * alone lags or leads the event by up to half an elastic step: where
 * contact sticks it holds velocity an elastic kick just gave, and the
 * work so counted was O(dt) off (E + W drifted by 1.4e-2 of E0 on
 * sphere-plate; 7.8e-4 with vs_a, the frictionless run's own 1.1e-3 being
 * the bar: bench/README.md, "With friction"). The impulse itself still
 * acts on the mid-step velocities (deciding stick with vs_a moved that
 * balance by 2e-5 of E0 and the analytic tests of test_friction.c by less
 * than their bars). */
#include "contact/contact_friction.h"
#include "contact/contact_potential.h"

#include <math.h>

double avi_contact_friction(avi_vertex *V, const uint32_t v[4], int type, const double gd[4][3], double jn,
                            double mu, const double owed[4][3])
{
    int na = type == AVI_STENCIL_VF ? 1 : 2;
    double n[3] = {0.0, 0.0, 0.0};
    for (int a = 0; a < na; a++) v3_add(n, n, gd[a]);
    double nn = v3_norm(n);
    if (!(nn > 0.0)) return 0.0;
    v3_scale(n, n, 1.0 / nn);
    double c[4], u[3] = {0.0, 0.0, 0.0}, W = 0.0;
    for (int a = 0; a < 4; a++) {
        const avi_vertex *q = &V[v[a]];
        c[a] = v3_dot(gd[a], n);
        double cv[3];
        v3_scale(cv, q->v, c[a]);
        v3_add(u, u, cv);
        W += c[a] * c[a] * q->inv_mass;
    }
    /* Tangential part u_t = u - (u.n) n and its speed. */
    double un = v3_dot(u, n), ut[3];
    for (int k = 0; k < 3; k++) ut[k] = u[k] - un * n[k];
    double speed = v3_norm(ut);
    if (!(speed > 0.0) || !(W > 0.0)) return 0.0;
    /* |P| = min(|u_t| / W, mu jn): stops the sliding or is Coulomb's
     * bound; it never reverses u_t. */
    double p = fmin(speed / W, mu * jn);
    double s = p / speed, ut2 = v3_dot(ut, ut), dke = 0.0;
    for (int a = 0; a < 4; a++) {
        avi_vertex *q = &V[v[a]];
        if (q->inv_mass == 0.0) continue; /* pinned: infinite mass, no change */
        /* dv_a = -s c_a ut / m_a changes the energy by
         * m_a (vs_a.dv_a + |dv_a|^2 / 2), vs_a the synchronized velocity. */
        double f = s * c[a] * q->inv_mass, vs[3];
        v3_copy(vs, q->v);
        if (owed) v3_add(vs, vs, owed[a]);
        dke += s * c[a] * (0.5 * f * ut2 - v3_dot(vs, ut));
        for (int k = 0; k < 3; k++) q->v[k] -= f * ut[k];
    }
    /* Without owed velocities, and pinned vertices at rest, this is
     * p |u_t| - W p^2 / 2 >= 0; with them it may have either sign. */
    return -dke;
}
