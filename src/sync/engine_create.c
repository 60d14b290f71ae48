/* The one engine constructor. It lives here, the lowest layer that knows
 * every integrator: the asynchronous integrator's event queue
 * (core/engine.c), or a synchronous stepper (sync_engine.c). */
#include "sync/sync_internal.h"
#include "base/error.h"

avi_engine *avi_engine_create_with(avi_model *m, const avi_sync_options *opt, avi_error *err)
{
    if (opt && opt->type != AVI_INTEGRATOR_AVI) return avi_sync_engine_create(m, opt, err);
    if (opt && opt->constraint_count)
        return avi_error_set(err, AVI_ERR_INPUT, "constraints need a synchronous integrator, not avi"), NULL;
    avi_engine *e = avi_engine_create_events(m, err);
    if (e && opt && avi_engine_set_damping(e, opt->damping)) {
        if (err) *err = e->err;
        avi_engine_destroy(e);
        return NULL;
    }
    return e;
}

avi_engine *avi_engine_create(avi_model *m, avi_error *err) { return avi_engine_create_with(m, NULL, err); }

/* The scene spelling of each integrator, here for the same reason: the
 * scene parser (scene/) and the scene-to-engine factory (scene_engine.c) both
 * call it, and a layer calls only down. */
static const char *const integrator_names[AVI_INTEGRATOR_COUNT] = {
    "avi", "sync-explicit", "sync-implicit", "sync-rootfind", "explicit-euler", "implicit-euler", "dcr",
    "sync-explicit4"};

const char *avi_integrator_name(avi_integrator_type type)
{
    return (unsigned)type < AVI_INTEGRATOR_COUNT ? integrator_names[type] : NULL;
}
