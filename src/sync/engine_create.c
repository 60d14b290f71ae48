/* The stepper table and the one engine constructor. They live here, in the
 * lowest layer that may call every integrator's row: the AVI's
 * (core/engine.c) below and the synchronous ones (sync_engine.c) beside
 * it; core/ itself calls no stepper by name. */
#include "sync/sync_internal.h"
#include "base/error.h"

/* One row per integrator: its scene spelling and its stepper. The
 * synchronous integrators share one row of calls, which step by opt.type. */
static const struct {
    const char *name;
    const avi_stepper_ops *ops;
} steppers[AVI_INTEGRATOR_COUNT] = {
    [AVI_INTEGRATOR_AVI] = {"avi", &avi_event_stepper},
    [AVI_INTEGRATOR_SYNC_EXPLICIT] = {"sync-explicit", &avi_sync_stepper},
    [AVI_INTEGRATOR_SYNC_IMPLICIT] = {"sync-implicit", &avi_sync_stepper},
    [AVI_INTEGRATOR_SYNC_ROOTFIND] = {"sync-rootfind", &avi_sync_stepper},
    [AVI_INTEGRATOR_EXPLICIT_EULER] = {"explicit-euler", &avi_sync_stepper},
    [AVI_INTEGRATOR_IMPLICIT_EULER] = {"implicit-euler", &avi_sync_stepper},
    [AVI_INTEGRATOR_DCR] = {"dcr", &avi_sync_stepper},
    [AVI_INTEGRATOR_SYNC_EXPLICIT4] = {"sync-explicit4", &avi_sync_stepper},
};

avi_engine *avi_engine_create_with(avi_model *m, const avi_sync_options *opt, avi_error *err)
{
    avi_integrator_type type = opt ? opt->type : AVI_INTEGRATOR_AVI;
    if ((unsigned)type >= AVI_INTEGRATOR_COUNT || !steppers[type].ops)
        return avi_error_set(err, AVI_ERR_INPUT, "not an integrator type"), NULL;
    avi_engine *e = steppers[type].ops->create(m, opt, err);
    if (e) avi_engine_join_ranks(e);
    return e;
}

avi_engine *avi_engine_create(avi_model *m, avi_error *err) { return avi_engine_create_with(m, NULL, err); }

/* The scene spelling of each integrator, here for the same reason: the
 * scene parser (scene/) and the scene-to-engine factory (scene_engine.c) both
 * call it, and a layer calls only down. */
const char *avi_integrator_name(avi_integrator_type type)
{
    return (unsigned)type < AVI_INTEGRATOR_COUNT ? steppers[type].name : NULL;
}
