/* avi: synchronous variational integrators on the same model, observers and
 * output as the AVI (Kharevych et al. 2006). An engine created here advances
 * every vertex with one global step h; avi_engine_advance, _run, _observe and
 * _state_at work on it unchanged. Event counts count one event per potential
 * per step, so they compare directly with the AVI's. */
#ifndef AVI_SYNC_H
#define AVI_SYNC_H

#include "avi/engine.h"
#include "avi/scene.h"

typedef struct {
    avi_integrator_type type; /* any but AVI_INTEGRATOR_AVI */
    double h;                 /* global step; <= 0: the smallest potential step of the model */
    double alpha;             /* sync-implicit, in (0, 1] */
    double tolerance;         /* implicit solves: residual tolerance */
    int max_iterations;       /* implicit solves: Newton iterations per step */
    double damping;           /* damping coefficient (Kharevych et al. section 5.2) */
} avi_sync_options;

/* Defaults: sync-explicit, h from the model, alpha 0.5, tolerance 1e-10,
 * 50 Newton iterations, no damping. */
avi_sync_options avi_default_sync_options(void);

/* A synchronous engine over a finalized model. NULL on error, err filled. */
avi_engine *avi_engine_create_sync(avi_model *model, const avi_sync_options *options, avi_error *err);

/* The global step of a synchronous engine (0 for an AVI engine). */
double avi_engine_sync_step(const avi_engine *engine);

#endif
