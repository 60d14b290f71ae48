/* Creating and advancing synchronous engines. */
#include "sync/sync_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

avi_sync_options avi_default_sync_options(void)
{
    avi_sync_options o;
    memset(&o, 0, sizeof o);
    o.type = AVI_INTEGRATOR_SYNC_EXPLICIT;
    o.alpha = 0.5;
    o.tolerance = 1e-10;
    o.max_iterations = 50;
    return o;
}

static avi_engine *fail(avi_error *err, avi_status st, const char *msg)
{
    if (err) {
        err->status = st;
        snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return NULL;
}

avi_engine *avi_engine_create_sync(avi_model *m, const avi_sync_options *opt, avi_error *err)
{
    if (!m || !m->finalized) return fail(err, AVI_ERR_INPUT, "synchronous engine needs a finalized model");
    avi_sync_options o = opt ? *opt : avi_default_sync_options();
    if (o.type != AVI_INTEGRATOR_SYNC_EXPLICIT)
        return fail(err, AVI_ERR_INPUT, "this synchronous integrator is not available in this version");
    if (!(o.h > 0.0)) {
        /* The smallest step of any potential: stable for every one of them. */
        double h = INFINITY;
        for (int k = 0; k < AVI_KIND_COUNT; k++) {
            if (!avi_model_potential_count(m, (avi_kind)k)) continue;
            double lo, hi;
            avi_model_time_step_range(m, (avi_kind)k, &lo, &hi);
            if (lo < h) h = lo;
        }
        if (!isfinite(h)) return fail(err, AVI_ERR_INPUT, "model has no potential to take a time step from");
        o.h = h;
    }
    if (!isfinite(o.h)) return fail(err, AVI_ERR_INPUT, "synchronous step must be positive and finite");
    avi_engine *e = calloc(1, sizeof *e);
    struct avi_sync *s = calloc(1, sizeof *s);
    if (s) s->force = malloc((m->nv ? m->nv : 1) * sizeof *s->force);
    if (!e || !s || !s->force) {
        free(e);
        if (s) free(s->force);
        free(s);
        return fail(err, AVI_ERR_RUN, "out of memory");
    }
    s->opt = o;
    e->model = m;
    e->sync = s;
    return e;
}

void avi_sync_destroy(struct avi_sync *s)
{
    if (!s) return;
    free(s->force);
    free(s);
}

double avi_engine_sync_step(const avi_engine *e) { return e->sync ? e->sync->opt.h : 0.0; }

int avi_sync_advance(avi_engine *e, double t_stop)
{
    struct avi_sync *s = e->sync;
    while ((double)s->step * s->opt.h < t_stop) {
        int rc = avi_sync_step_explicit(e, s);
        if (rc != AVI_OK) return rc;
        for (int k = 0; k < AVI_KIND_COUNT; k++) e->events[k] += avi_model_potential_count(e->model, (avi_kind)k);
        s->step++;
    }
    if (t_stop > e->time) e->time = t_stop;
    return AVI_OK;
}
