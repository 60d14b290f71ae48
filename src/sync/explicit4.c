/* sync-explicit4: a fourth-order variational integrator, Yoshida's (1990)
 * symmetric triple jump of the velocity-Verlet map Phi_h (kick h/2, drift h,
 * kick h/2): Phi_{w1 h} o Phi_{w0 h} o Phi_{w1 h} with w1 = 1 / (2 - 2^(1/3)),
 * w0 = -2^(1/3) w1 (2 w1 + w0 = 1). Each substep is the alpha = 0 discrete
 * Lagrangian update (Kharevych et al. 2006), so the composition is symplectic
 * and keeps linear and angular momentum, hence variational; its symmetry
 * lifts the order from 2 to 4 (Yoshida, Phys. Lett. A 150, 1990; composition
 * of variational integrators: Marsden and West, Acta Numerica 2001).
 *
 * Adjacent half kicks act at one position and merge: one step is
 *   kick c0 h, drift w1 h, kick c1 h, drift w0 h, kick c1 h, drift w1 h,
 *   kick c0 h,
 * c0 = w1 / 2, c1 = (w1 + w0) / 2, three gradient evaluations; the last
 * one is the first of the next step (kept in s->force while s->force_step
 * is the step number; a checkpoint load recomputes it, from the same
 * positions, to the same bits). Unlike sync-explicit the step lands on the
 * grid: x = q_{k+1}, tau = t_{k+1}, v = p_{k+1} / m.
 *
 * Stability: on a harmonic mode of frequency omega the composition is
 * stable for h omega < 1.5734 (velocity Verlet: 2); the step is the one the
 * model's rule gives sync-explicit (safety s: h omega_max = 2 s), so it is
 * stable for s < 0.787. */
#include "sync/sync_internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Decimal literals, rounded alike by every compiler (no libm cbrt). */
#define W1 1.351207191959657634047687808971460827
#define W0 (-1.702414383919315268095375617942921654)
#define C0 0.6756035959798288170238439044857304135
#define C1 (-0.1756035959798288170238439044857304135)

/* s->force = grad V at the records' positions; non-zero on a non-finite
 * gradient (a blow-up at time t). */
static int gradient(avi_engine *e, struct avi_sync *s, size_t nrec, double t)
{
    memset(s->force, 0, nrec * sizeof *s->force);
    avi_sync_gradient(e, s, s->force);
    double sum = 0.0;
    for (size_t i = 0; i < nrec; i++) sum += s->force[i][0] + s->force[i][1] + s->force[i][2];
    if (isfinite(sum)) return 0;
    e->err.status = AVI_ERR_RUN;
    snprintf(e->err.message, sizeof e->err.message, "blow-up at t = %.17g: non-finite force", t);
    return AVI_ERR_RUN;
}

static void kick(avi_model *m, const struct avi_sync *s, size_t nrec, double w)
{
    for (size_t i = 0; i < nrec; i++) {
        avi_vertex *p = &m->vert[i];
        double sc = w * p->inv_mass;
        for (int c = 0; c < 3; c++) p->v[c] -= sc * s->force[i][c];
    }
}

static void drift(avi_model *m, size_t nrec, double h)
{
    for (size_t i = 0; i < nrec; i++) {
        avi_vertex *p = &m->vert[i];
        for (int c = 0; c < 3; c++) p->x[c] += h * p->v[c];
    }
}

int avi_sync_step_explicit4(avi_engine *e, struct avi_sync *s)
{
    avi_model *m = e->model;
    double h = s->opt.h;
    double t = (double)s->step * h;
    size_t nrec = avi_model_record_count(m); /* vertices and edge DOFs */
    if (!(s->force_valid && s->force_step == s->step) && gradient(e, s, nrec, t)) return AVI_ERR_RUN;
    static const double kicks[3] = {C0, C1, C1}, drifts[3] = {W1, W0, W1};
    double tsub = t;
    for (int j = 0; j < 3; j++) {
        kick(m, s, nrec, kicks[j] * h);
        drift(m, nrec, drifts[j] * h);
        tsub += drifts[j] * h;
        s->force_valid = 0;
        if (gradient(e, s, nrec, j == 2 ? (double)(s->step + 1) * h : tsub)) return AVI_ERR_RUN;
    }
    kick(m, s, nrec, C0 * h);
    double t1 = (double)(s->step + 1) * h;
    for (size_t i = 0; i < nrec; i++) m->vert[i].tau = t1;
    s->force_valid = 1;
    s->force_step = s->step + 1;
    return AVI_OK;
}
