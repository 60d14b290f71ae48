/* avi: synchronous variational integrators on the same model, observers and
 * output as the AVI (Kharevych et al. 2006). An engine created with a
 * synchronous type (avi_engine_create_with, engine.h) advances every vertex
 * with one global step h; avi_engine_advance, _run, _observe and
 * _state_at work on it unchanged. Event counts count one event per potential
 * per step (sync-explicit4: three, its gradient evaluations), so they
 * compare directly with the AVI's.
 *
 * Integrators (avi_integrator_type):
 *   sync-explicit   alpha = 0 discrete Hamilton-Pontryagin update: symplectic
 *                   Euler in leapfrog form with a half first kick (equal to
 *                   the AVI at a common step)
 *   sync-implicit   alpha in (0, 1]: v_{k+1} minimizes the Lilyan
 *                   (Kharevych et al. eq. 10 and section 5.3) by Newton's
 *                   method with a line search on the Lilyan
 *   sync-rootfind   the same equations solved as root finding on the
 *                   stationarity residual (eq. 7), Newton with a line search
 *                   on the merit |r|^2 / 2: the baseline of section 5.4
 *   explicit-euler, implicit-euler: non-symplectic baselines
 *   dcr             sync-explicit's update with decomposition contact
 *                   response (Cirak and West 2005; src/sync/dcr.c)
 *   sync-explicit4  fourth order: Yoshida's (1990) symmetric triple jump of
 *                   sync-explicit's map, substeps w1 h, w0 h, w1 h with
 *                   w1 = 1 / (2 - 2^(1/3)), w0 = 1 - 2 w1 < 0 (a backward
 *                   substep); symplectic and momentum-preserving as a
 *                   composition of such maps. Three gradient evaluations a
 *                   step, counted as three events per potential. h: as for
 *                   sync-explicit; stable for h omega_max < 1.5734 (velocity
 *                   Verlet: 2). Refuses damping, constraints and contact
 *                   (AVI_ERR_INPUT): neither a damped nor a SHAKE substep is
 *                   what the composition needs for order 4.
 *
 * Contact: dcr, and sync-explicit and sync-implicit on a model with
 * contact, follow each step with the DCR stage: stencils closer than
 * contact.thickness (or crossed) are projected apart, mass-weighted, and
 * their closing normal velocities reversed by jumps that conserve linear
 * momentum and kinetic energy exactly; the projection changes positions
 * alone, so elastic energy and angular momentum (sum m x x v) are not
 * conserved by it. A step that moves a stencil closer than
 * contact.thickness by half its distance or more fails the run (the side
 * it is on is then ambiguous): shorten the step. These steps land on
 * t_{k+1} (below). The others (sync-explicit4 too) refuse a model with
 * contact.
 *
 * State after a step: the explicit update keeps the AVI's convention (x at
 * the last kick time, v the mid-step velocity, drifted lazily). Every other
 * integrator (sync-explicit4 included) leaves x = q_{k+1}, tau = t_{k+1} and v = p_{k+1} / m, the
 * discrete momentum at t_{k+1} (for the Euler baselines simply v_{k+1}): at
 * output times on the step grid the observers then read the discrete state
 * (q_k, p_k), whose momenta are the conserved ones and whose energy is the
 * one with no drift; between grid times x + (T - tau) v extrapolates. */
#ifndef AVI_SYNC_H
#define AVI_SYNC_H

#include "avi/engine.h"
#include "avi/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/* avi_linear_solver, the linear solver of the Newton steps, is in avi/scene.h
 * (the scene key integrator.solver). */

/* Holonomic constraints g(q) = 0 (Kharevych et al. section 3.5), each
 * written as a length so that tolerances are relative to `length`. */
typedef enum {
    AVI_CONSTRAINT_LINK = 0,   /* |x_b - x_a| - length */
    AVI_CONSTRAINT_SPHERE = 1, /* |x_a - center| - length */
    AVI_CONSTRAINT_PLANE = 2   /* n.(x_a - center) / |n|; length: the scale of tolerances */
} avi_constraint_kind;

typedef struct {
    avi_constraint_kind kind;
    uint32_t a, b;     /* vertices (b: links only) */
    double length;     /* > 0 */
    double center[3];  /* sphere center, or a point of the plane */
    double normal[3];  /* plane normal, non-zero */
} avi_constraint;

typedef struct avi_sync_options {
    avi_integrator_type type; /* AVI_INTEGRATOR_AVI: the asynchronous integrator (damping only) */
    double h;                 /* global step; <= 0: the smallest potential step of the model;
                               * avi_engine_run refuses an end time below h (no step would
                               * complete, engine.h), a step never shortens, and a
                               * non-finite state is AVI_ERR_RUN naming the time */
    double alpha;             /* sync-implicit, in [0, 1] (0 solves the explicit update implicitly in damping) */
    double tolerance;         /* Newton: relative residual; constraints: |g| / length */
    int max_iterations;       /* Newton iterations per step */
    double damping;           /* k_D >= 0 in seconds (Kharevych et al. section 5.2) */
    avi_linear_solver linear_solver;
    const avi_constraint *constraints; /* copied by avi_engine_create_with */
    size_t constraint_count;
} avi_sync_options;

/* Defaults: sync-explicit, h from the model, alpha 0.5, tolerance 1e-10,
 * 50 Newton iterations, no damping, CHOLMOD, no constraints. */
avi_sync_options avi_default_sync_options(void);

/* avi_engine_create_with (engine.h) with a synchronous type: an engine
 * over a finalized model (with contact only for dcr, sync-explicit and
 * sync-implicit: AVI_ERR_INPUT otherwise; sync-explicit4 refuses damping
 * and constraints as well). Constraints must hold at the
 * initial positions (to tolerance * length) and are refused by the Euler
 * baselines only when they cannot be projected; pinned vertices may appear
 * in them. */

/* The global step of a synchronous engine (0 for an AVI engine). */
double avi_engine_sync_step(const avi_engine *engine);

/* Damping coefficient k_D (s) of Kharevych et al. section 5.2: each elastic
 * potential's energy measured from the stencil's previous configuration
 * (x - dt v) to the current one x acts as a dissipation potential. For an
 * AVI engine the impulse is applied in each potential's event; k_D = 0 costs
 * nothing. Linear and angular momentum are preserved. Returns AVI_OK, or
 * AVI_ERR_INPUT for a negative or non-finite k_D, or k_D > 0 on a
 * sync-explicit4 engine. */
int avi_engine_set_damping(avi_engine *engine, double kd);

/* Counters of a synchronous engine (all zero for an AVI engine). */
typedef struct {
    uint64_t steps;
    uint64_t newton_iterations;
    uint64_t linear_iterations;   /* PCG iterations, or solves with a factorization */
    uint64_t factorizations;
    uint64_t energy_evaluations;  /* objective values (line search on the Lilyan) */
    uint64_t gradient_evaluations;/* residuals */
    uint64_t hessian_assemblies;
    uint64_t backtracks;          /* line-search step halvings */
    uint64_t psd_fallbacks;       /* Newton matrices rebuilt with per-element PSD projection */
    uint64_t indefinite_solves;   /* root finding with an LDL^T of an indefinite Jacobian */
    uint64_t constraint_iterations;
    double max_constraint_violation; /* largest |g| / length after any step */
} avi_sync_stats;

void avi_engine_sync_stats(const avi_engine *engine, avi_sync_stats *out);

/* The engine a scene asks for: the AVI (with the scene's damping) or a
 * synchronous engine with the scene's alpha, tolerance, damping and the
 * particle bodies' constraints (links, spheres, circles; `info` gives the
 * vertex offsets of the bodies). The AVI refuses constraints. NULL on error,
 * with err filled ("scene: bodies.i.links.j: problem"). */
avi_engine *avi_engine_create_for_scene(const avi_scene *scene, const avi_scene_bodies *info, avi_model *model,
                                        avi_error *err);

#ifdef __cplusplus
}
#endif

#endif
