/* The AVI event loop (Lew, Marsden, Ortiz, West 2003): pop the earliest
 * potential, drift its stencil to the event time, kick, reschedule. */
#include "core/engine_internal.h"
#include "contact/contact_manager.h"
#include "sync/damping.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int engine_fail(avi_engine *e, avi_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int engine_fail(avi_engine *e, avi_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(e->err.message, sizeof e->err.message, fmt, ap);
    va_end(ap);
    e->err.status = status;
    return status;
}

avi_engine *avi_engine_create(avi_model *m, avi_error *err)
{
    avi_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    if (!m || !m->finalized) {
        err->status = AVI_ERR_INPUT;
        snprintf(err->message, sizeof err->message, "engine needs a finalized model");
        return NULL;
    }
    size_t counts[AVI_KIND_COUNT] = {m->nspring, m->nmembrane, m->nhinge, m->ntet, m->ngravity, 0};
    size_t total = 0;
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (counts[k] > AVI_ID_MAX_INDEX) {
            err->status = AVI_ERR_INPUT;
            snprintf(err->message, sizeof err->message, "too many %s potentials (%zu; at most %u)",
                     avi_kind_name((avi_kind)k), counts[k], AVI_ID_MAX_INDEX);
            return NULL;
        }
        total += counts[k];
    }
    /* The queue sizes its spans from the clocks' steps. */
    avi_clock_stats stats = {0};
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        for (size_t i = 0; i < counts[k]; i++) avi_clock_stats_add(&stats, avi_model_time_step(m, (avi_kind)k, i));
    avi_engine *e = calloc(1, sizeof *e);
    if (!e || avi_tl_init(&e->queue, total, total ? &stats : NULL)) {
        free(e);
        err->status = AVI_ERR_RUN;
        snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    e->model = m;
    if (m->has_contact && !(e->contact = avi_contact_create(m, err))) {
        avi_tl_free(&e->queue);
        free(e);
        return NULL;
    }
    /* Every clock starts at t0 = 0 with n = 0. */
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        for (size_t i = 0; i < counts[k]; i++) {
            avi_event ev = {0.0, avi_event_id((unsigned)k, (uint32_t)i), 0};
            if (avi_tl_push(&e->queue, ev)) {
                avi_engine_destroy(e);
                err->status = AVI_ERR_RUN;
                snprintf(err->message, sizeof err->message, "out of memory");
                return NULL;
            }
        }
    return e;
}

void avi_engine_destroy(avi_engine *e)
{
    if (!e) return;
    if (e->sync) avi_sync_destroy(e->sync);
    avi_contact_destroy(e->contact);
    avi_tl_free(&e->queue);
    free(e->obs);
    free(e);
}

/* Damping impulse (Kharevych et al. 2006 sec. 5.2) folded into the gradient:
 * g += (k_D / dt) grad_B D(x - dt v, x), so that the kick applies k_D grad D.
 * Out of line: without damping the event loop pays one predictable branch. */
__attribute__((cold, noinline)) static void damp(const avi_vertex *V, avi_kind kind, int n, const void *rec,
                                                  const uint32_t *v, double x[][3], double dt, double kd, double g[][3])
{
    avi_elem el = {kind, n, v, rec};
    avi_damping_add(&el, V, (const double (*)[3])x, dt, kd / dt, g);
}

/* Prefetching: the queue knows the next events of its loaded span, so their
 * potential records (PREFETCH_RECORD events ahead) and then, once a record
 * has arrived, its vertices (PREFETCH_VERTICES ahead) are requested before
 * they are needed; past the L2 cache a vertex load costs hundreds of ns. */
#define PREFETCH_RECORD 16
#define PREFETCH_VERTICES 8

static inline const void *record_of(const avi_model *m, uint32_t id, const uint32_t **v, int *n)
{
    uint32_t i = id & AVI_ID_INDEX_MASK;
    switch (id >> AVI_ID_KIND_SHIFT) {
    case AVI_KIND_TET: *v = m->tets[i].v; *n = 4; return &m->tets[i];
    case AVI_KIND_MEMBRANE: *v = m->membranes[i].v; *n = 3; return &m->membranes[i];
    case AVI_KIND_HINGE: *v = m->hinges[i].v; *n = 4; return &m->hinges[i];
    case AVI_KIND_SPRING: *v = m->springs[i].v; *n = 2; return &m->springs[i];
    default: *n = 0; return NULL;
    }
}

static inline void prefetch_ahead(const avi_model *m, avi_twolevel_queue *q)
{
    const uint32_t *v;
    int n;
    const avi_event *far = avi_tl_peek(q, PREFETCH_RECORD);
    if (far) {
        const char *r = record_of(m, far->id, &v, &n);
        if (r) {
            __builtin_prefetch(r);
            __builtin_prefetch(r + 64);
        }
    }
    const avi_event *near = avi_tl_peek(q, PREFETCH_VERTICES);
    if (near && record_of(m, near->id, &v, &n))
        for (int a = 0; a < n; a++) __builtin_prefetch(&m->vert[v[a]], 1);
}

static int blow_up(avi_engine *e, unsigned kind, uint32_t i, double t, const uint32_t *v, int n)
{
    char verts[96] = "";
    int k = 0;
    for (int a = 0; a < n && k >= 0 && (size_t)k < sizeof verts; a++)
        k += snprintf(verts + k, sizeof verts - (size_t)k, "%s%u", a ? ", " : "", v[a]);
    return engine_fail(e, AVI_ERR_RUN, "blow-up at t = %.17g: %s %u (vertices %s) produced a non-finite impulse",
                       t, avi_kind_name((avi_kind)kind), i, verts);
}

int avi_engine_advance(avi_engine *e, double t_stop)
{
    if (e->sync) return avi_sync_advance(e, t_stop);
    avi_model *m = e->model;
    avi_vertex *V = m->vert;
    avi_twolevel_queue *q = &e->queue;
    const double kd = e->damping;
    struct avi_contact_manager *cm = e->contact;
    uint64_t counts[AVI_KIND_COUNT] = {0};
    int rc = AVI_OK;
    double t_last = -INFINITY; /* time of the last event processed */
    for (;;) {
        /* The contact manager runs before any potential event at its time. */
        if (cm && cm->next_run < t_stop && (q->size == 0 || cm->next_run <= avi_tl_top(q)->t)) {
            rc = avi_contact_run(e, cm->next_run);
            if (rc != AVI_OK) goto out;
            continue;
        }
        if (q->size == 0) break;
        avi_event ev = *avi_tl_top(q);
        if (!(ev.t < t_stop)) break;
        prefetch_ahead(m, q);
        if (e->stop && *e->stop && ev.t > t_last) {
            /* A time boundary: everything before ev.t is done. */
            if (ev.t > e->time) e->time = ev.t;
            rc = AVI_INTERRUPTED;
            goto out;
        }
        t_last = ev.t;
        unsigned kind = ev.id >> AVI_ID_KIND_SHIFT;
        uint32_t i = ev.id & AVI_ID_INDEX_MASK;
        /* First event of a clock: half impulse (staggered velocities). */
        double half = ev.n == 0 ? 0.5 : 1.0;
        double dt, sum;
        const uint32_t *v;
        int n;
        double x[4][3], g[4][3];
        switch (kind) {
        case AVI_KIND_TET: {
            const avi_tet *p = &m->tets[i];
            v = p->v; n = 4; dt = p->dt;
            avi_drift(V, v, 4, ev.t, x);
            avi_tet_gradient(p, (const double (*)[3])x, g);
            if (kd != 0.0) damp(V, AVI_KIND_TET, 4, p, v, x, dt, kd, g);
            sum = avi_kick(V, v, 4, half * dt, (const double (*)[3])g);
            break;
        }
        case AVI_KIND_MEMBRANE: {
            const avi_membrane *p = &m->membranes[i];
            v = p->v; n = 3; dt = p->dt;
            avi_drift(V, v, 3, ev.t, x);
            avi_membrane_gradient(p, (const double (*)[3])x, g);
            if (kd != 0.0) damp(V, AVI_KIND_MEMBRANE, 3, p, v, x, dt, kd, g);
            sum = avi_kick(V, v, 3, half * dt, (const double (*)[3])g);
            break;
        }
        case AVI_KIND_HINGE: {
            const avi_hinge *p = &m->hinges[i];
            v = p->v; n = 4; dt = p->dt;
            avi_drift(V, v, 4, ev.t, x);
            avi_hinge_gradient(p, (const double (*)[3])x, g);
            if (kd != 0.0) damp(V, AVI_KIND_HINGE, 4, p, v, x, dt, kd, g);
            sum = avi_kick(V, v, 4, half * dt, (const double (*)[3])g);
            break;
        }
        case AVI_KIND_SPRING: {
            const avi_spring *p = &m->springs[i];
            v = p->v; n = 2; dt = p->dt;
            avi_drift(V, v, 2, ev.t, x);
            avi_spring_gradient(p, (const double (*)[3])x, g);
            if (kd != 0.0) damp(V, AVI_KIND_SPRING, 2, p, v, x, dt, kd, g);
            sum = avi_kick(V, v, 2, half * dt, (const double (*)[3])g);
            break;
        }
        case AVI_KIND_GRAVITY: {
            /* The impulse does not depend on x, but the vertex must reach t
             * before its velocity changes. */
            const avi_gravity *p = &m->gravity[i];
            v = &p->v; n = 1; dt = p->dt;
            avi_drift(V, v, 1, ev.t, x);
            avi_gravity_gradient(p, (const double (*)[3])x, g);
            sum = avi_kick(V, v, 1, half * dt, (const double (*)[3])g);
            break;
        }
        case AVI_KIND_CONTACT: {
            /* Off the queue first: the event may push new layers, which can
             * take the top. */
            double next;
            avi_tl_pop(q, &ev);
            int r = avi_contact_event(e, i, ev.t, ev.n, &next);
            if (r < 0) {
                rc = AVI_ERR_RUN;
                goto out;
            }
            if (r != 2) counts[kind]++;
            if (r == 0) {
                ev.n++;
                ev.t = next;
                if (avi_tl_push(q, ev)) {
                    rc = engine_fail(e, AVI_ERR_RUN, "out of memory");
                    goto out;
                }
            }
            continue;
        }
        default:
            rc = engine_fail(e, AVI_ERR_RUN, "unknown event kind %u", kind);
            goto out;
        }
        counts[kind]++;
        /* A vertex faster than the contact manager's speed cap voids its
         * look-ahead: run the manager before the next event. */
        if (cm)
            for (int a = 0; a < n; a++)
                if (v3_dot(V[v[a]].v, V[v[a]].v) > cm->vcap2 && cm->next_run > ev.t) {
                    cm->next_run = ev.t;
                    cm->speed_triggers++;
                }
        if (!isfinite(sum)) {
            rc = blow_up(e, kind, i, ev.t, v, n);
            goto out;
        }
        ev.n++;
        if (ev.n == 0) {
            rc = engine_fail(e, AVI_ERR_RUN, "%s %u: step counter overflow", avi_kind_name((avi_kind)kind), i);
            goto out;
        }
        ev.t = (double)ev.n * dt;
        if (avi_tl_replace_top(q, ev)) {
            rc = engine_fail(e, AVI_ERR_RUN, "out of memory");
            goto out;
        }
    }
    if (t_stop > e->time) e->time = t_stop;
out:
    for (int k = 0; k < AVI_KIND_COUNT; k++) e->events[k] += counts[k];
    return rc;
}

int avi_engine_add_observer(avi_engine *e, double interval, avi_observer_fn fn, void *user)
{
    if (!(interval > 0.0) || !isfinite(interval) || !fn)
        return engine_fail(e, AVI_ERR_INPUT, "observer interval must be positive and finite (got %g)", interval);
    if (e->nobs == e->cap_obs) {
        int c = e->cap_obs ? 2 * e->cap_obs : 4;
        avi_observer *o = realloc(e->obs, (size_t)c * sizeof *o);
        if (!o) return engine_fail(e, AVI_ERR_RUN, "out of memory");
        e->obs = o;
        e->cap_obs = c;
    }
    avi_observer *o = &e->obs[e->nobs++];
    o->interval = interval;
    /* First output time not before the engine's current time. */
    o->next = (uint64_t)ceil(e->time / interval);
    while ((double)o->next * interval < e->time) o->next++;
    o->last_time = -1.0;
    o->fn = fn;
    o->user = user;
    return AVI_OK;
}

int avi_engine_run(avi_engine *e, double t_end)
{
    if (!(t_end >= e->time) || !isfinite(t_end))
        return engine_fail(e, AVI_ERR_INPUT, "end time %g is before the current time %g", t_end, e->time);
    for (;;) {
        double stop = t_end;
        for (int k = 0; k < e->nobs; k++) {
            double t = (double)e->obs[k].next * e->obs[k].interval;
            if (t < stop) stop = t;
        }
        int rc = avi_engine_advance(e, stop);
        if (rc != AVI_OK) return rc;
        for (int k = 0; k < e->nobs; k++) {
            avi_observer *o = &e->obs[k];
            int due = (double)o->next * o->interval == stop;
            if (due) o->next++;
            if ((due || stop == t_end) && o->last_time != stop) {
                o->last_time = stop;
                int r = o->fn(e, stop, o->user);
                if (r != 0) return r;
            }
        }
        if (stop == t_end) return AVI_OK;
    }
}

double avi_engine_time(const avi_engine *e) { return e->time; }

uint64_t avi_engine_observer_calls(const avi_engine *e, int index)
{
    if (index < 0 || index >= e->nobs) return 0;
    const avi_observer *o = &e->obs[index];
    /* Calls at 0, interval, ..., (next - 1) interval; a final call at an
     * end time off the grid is not counted (resuming drops it). */
    return o->next;
}
void avi_engine_set_stop_flag(avi_engine *e, volatile sig_atomic_t *flag) { e->stop = flag; }
const avi_model *avi_engine_model(const avi_engine *e) { return e->model; }
const avi_error *avi_engine_error(const avi_engine *e) { return &e->err; }
uint64_t avi_engine_event_count(const avi_engine *e, avi_kind kind)
{
    return (unsigned)kind < AVI_KIND_COUNT ? e->events[kind] : 0;
}
uint64_t avi_engine_events_total(const avi_engine *e)
{
    uint64_t s = 0;
    for (int k = 0; k < AVI_KIND_COUNT; k++) s += e->events[k];
    return s;
}
