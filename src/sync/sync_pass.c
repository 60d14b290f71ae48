/* The synchronous integrators' whole-model passes on the engine's pool
 * (core/incidence.h). Its own file, below every step: the steps and the
 * engine call it, and it calls only core/. */
#include "sync/sync_internal.h"
#include "core/incidence.h"

void avi_sync_use_pool(avi_engine *e, struct avi_sync *s)
{
    if (s->pass && s->pass->pool != avi_engine_pool(e)) {
        avi_model_pass_destroy(s->pass);
        s->pass = NULL;
    }
    if (!s->pass && avi_engine_pool(e)) s->pass = avi_model_pass_create(e->model, avi_engine_pool(e));
}

void avi_sync_gradient(avi_engine *e, struct avi_sync *s, double (*g)[3])
{
    avi_sync_use_pool(e, s);
    avi_model_accumulate_gradient_pass(e->model, s->pass, g); /* serial when no pass */
}
