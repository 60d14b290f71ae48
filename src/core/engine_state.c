/* The engine's checkpoint state through the named-array interface
 * (core/state_io.h): what every engine has (time, event counters, vertex
 * records, observers) and, through its stepper's row, the rest; the AVI
 * row's part (queue, contact manager, refinement) is here too. Every value
 * loaded is checked before the engine uses it. */
#include "core/engine_internal.h"
#include "core/refine.h"
#include "base/error.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

/* Counters are stored as int64 in the output. */
#define COUNTER_LIMIT (UINT64_C(1) << 63)

static const char *const vertex_fields[3] = {"vertex_position", "vertex_velocity", "vertex_drift_time"};

int avi_engine_save(const avi_engine *e, avi_state_io *io)
{
    const avi_model *m = e->model;
    size_t nv = avi_model_record_count(m); /* with edge DOFs */
    uint64_t sizes[2] = {nv, (uint64_t)AVI_KIND_COUNT};
    if (io->put(io, "time", AVI_STATE_F64, 1, 1, &e->time) || io->put(io, "sizes", AVI_STATE_U64, 2, 1, sizes) ||
        io->put(io, "events", AVI_STATE_U64, AVI_KIND_COUNT, 1, e->events))
        return -1;
    int rc = 0;
    double *buf = malloc((3 * nv + 1) * sizeof *buf);
    if (!buf) rc = -1;
    for (int field = 0; field < 3 && !rc; field++) {
        int w = field == 2 ? 1 : 3;
        for (size_t i = 0; i < nv; i++)
            for (int c = 0; c < w; c++)
                buf[i * w + c] = field == 0 ? m->vert[i].x[c] : field == 1 ? m->vert[i].v[c] : m->vert[i].tau;
        rc = io->put(io, vertex_fields[field], AVI_STATE_F64, nv, (size_t)w, buf);
    }
    free(buf);
    size_t no = (size_t)e->nobs;
    uint64_t *next = rc ? NULL : malloc((no + 1) * sizeof *next);
    double *last = rc ? NULL : malloc((no + 1) * sizeof *last);
    if (!next || !last) rc = -1;
    for (size_t i = 0; i < no && !rc; i++) {
        next[i] = e->obs[i].next;
        last[i] = e->obs[i].last_time;
    }
    if (!rc)
        rc = io->put(io, "observer_next", AVI_STATE_U64, no, 1, next) ||
             io->put(io, "observer_last_time", AVI_STATE_F64, no, 1, last);
    free(next);
    free(last);
    return rc || e->stepper->save(e, io) ? -1 : 0;
}

/* Each counter and their total below 2^63: the output stores int64. */
static int load_counters(avi_engine *e, avi_state_io *io, avi_error *err)
{
    uint64_t ev[AVI_KIND_COUNT], total = 0;
    if (io->get(io, "events", AVI_STATE_U64, AVI_KIND_COUNT, ev)) return avi_error_set(err, AVI_ERR_INPUT, "no events");
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (ev[k] >= COUNTER_LIMIT)
            return avi_error_set(err, AVI_ERR_INPUT, "event counter events[%d] (%s) = %llu is not below 2^63", k,
                                 avi_kind_name((avi_kind)k), (unsigned long long)ev[k]);
        total += ev[k]; /* both below 2^63: no wrap */
        if (total >= COUNTER_LIMIT) return avi_error_set(err, AVI_ERR_INPUT, "the event counters add up to 2^63 or more");
    }
    memcpy(e->events, ev, sizeof ev);
    return AVI_OK;
}

/* Positions and velocities finite, drift times finite and not after T. */
static int load_vertices(avi_engine *e, avi_state_io *io, avi_error *err)
{
    avi_model *m = e->model;
    size_t nv = avi_model_record_count(m); /* with edge DOFs */
    double *buf = malloc((3 * nv + 1) * sizeof *buf);
    if (!buf) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    int rc = AVI_OK;
    for (int field = 0; field < 3 && !rc; field++) {
        size_t w = field == 2 ? 1 : 3;
        if (io->get(io, vertex_fields[field], AVI_STATE_F64, nv * w, buf)) {
            rc = avi_error_set(err, AVI_ERR_INPUT, "no %s", vertex_fields[field]);
            break;
        }
        for (size_t i = 0; i < nv * w && !rc; i++)
            if (!isfinite(buf[i]) || (field == 2 && buf[i] > e->time))
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s of vertex %zu is %g%s", vertex_fields[field], i / w, buf[i],
                                   field == 2 && isfinite(buf[i]) ? ", after the checkpoint time" : "");
        for (size_t i = 0; i < nv && !rc; i++)
            for (size_t c = 0; c < w; c++) {
                if (field == 0) m->vert[i].x[c] = buf[i * w + c];
                else if (field == 1) m->vert[i].v[c] = buf[i * w + c];
                else m->vert[i].tau = buf[i];
            }
    }
    free(buf);
    return rc;
}

/* Observer k has made its calls at 0, interval, ..., (next - 1) interval:
 * the last not after T, the next not before it. */
static int load_observers(avi_engine *e, avi_state_io *io, avi_error *err)
{
    size_t no = (size_t)e->nobs;
    uint64_t *next = malloc((no + 1) * sizeof *next);
    if (!next) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    int rc = AVI_OK;
    if (io->get(io, "observer_next", AVI_STATE_U64, no, next))
        rc = avi_error_set(err, AVI_ERR_INPUT, "no observer_next for %zu observers", no);
    for (size_t i = 0; i < no && !rc; i++) {
        double dt = e->obs[i].interval, t = e->time;
        if (next[i] >= COUNTER_LIMIT || (next[i] > 0 && (double)(next[i] - 1) * dt > t) || (double)next[i] * dt < t)
            rc = avi_error_set(err, AVI_ERR_INPUT,
                               "observer %zu (every %g s) is at call %llu, not next to the checkpoint time %.17g", i, dt,
                               (unsigned long long)next[i], t);
    }
    /* The output keeps each observer's calls on its grid (resuming drops a
     * final row off the grid), so the last call is at (next - 1) interval. */
    for (size_t i = 0; i < no && !rc; i++) {
        e->obs[i].next = next[i];
        e->obs[i].last_time = next[i] ? (double)(next[i] - 1) * e->obs[i].interval : -1.0;
    }
    free(next);
    return rc;
}

int avi_engine_load(avi_engine *e, avi_state_io *io, avi_error *err)
{
    size_t nv = avi_model_record_count(e->model);
    uint64_t sizes[2];
    if (io->get(io, "sizes", AVI_STATE_U64, 2, sizes)) return avi_error_set(err, AVI_ERR_INPUT, "no sizes");
    if (sizes[0] != nv || sizes[1] != AVI_KIND_COUNT)
        return avi_error_set(err, AVI_ERR_INPUT, "it does not match the scene's model (%llu vertices, model has %zu)",
                             (unsigned long long)sizes[0], nv);
    double t;
    if (io->get(io, "time", AVI_STATE_F64, 1, &t)) return avi_error_set(err, AVI_ERR_INPUT, "no time");
    if (!isfinite(t) || t < 0.0) return avi_error_set(err, AVI_ERR_INPUT, "its time %g is not a finite time >= 0", t);
    e->time = t;
    int rc = load_counters(e, io, err);
    if (!rc) rc = load_vertices(e, io, err);
    if (!rc) rc = load_observers(e, io, err);
    if (!rc) rc = e->stepper->load(e, io, err);
    return rc;
}

/* ---- the AVI row's state ---- */

/* The queue, one entry per clock (group cursors expanded) in storage order,
 * as (t) and (id, n) columns; the contact manager's state in group
 * "contact", refinement's in "refine" (once there is any). */
int avi_event_state_save(const avi_engine *e, avi_state_io *io)
{
    size_t nq = avi_engine_queue_size(e);
    avi_event *ev = malloc((nq + 1) * sizeof *ev);
    int rc = !ev || avi_engine_queue_collect(e, ev) != nq;
    _Static_assert(sizeof(avi_event) == 16 && offsetof(avi_event, id) == 8 && offsetof(avi_event, n) == 12,
                   "avi_event is read as 2 doubles or 4 uint32 a row");
    if (!rc)
        rc = io->put_columns(io, "queue_time", AVI_STATE_F64, nq, 1, ev, 2, 0) ||
             io->put_columns(io, "queue_id_step", AVI_STATE_U32, nq, 2, ev, 4, 2);
    free(ev);
    avi_state_io *sub;
    if (!rc && e->contact) {
        if (io->group(io, "contact", AVI_STATE_CREATE, &sub)) return -1;
        rc = e->model->contact_ops->save(e->contact, sub);
        io->close(sub, 0);
    }
    if (!rc && e->refine) {
        if (io->group(io, "refine", AVI_STATE_CREATE, &sub)) return -1;
        rc = avi_refine_save(e->refine, sub);
        io->close(sub, 0);
    }
    return rc ? -1 : 0;
}

/* Queue times finite and not before T; avi_engine_queue_load checks the
 * clocks against the model. */
static int load_queue(avi_engine *e, avi_state_io *io, avi_error *err)
{
    long nq = io->count(io, "queue_time");
    if (nq < 0) {
        (void)io->get(io, "queue_time", AVI_STATE_F64, 0, NULL); /* names it missing */
        return avi_error_set(err, AVI_ERR_INPUT, "no queue_time");
    }
    size_t n = (size_t)nq;
    double *t = malloc((n + 1) * sizeof *t);
    uint32_t *ub = malloc((2 * n + 1) * sizeof *ub);
    avi_event *ev = malloc((n + 1) * sizeof *ev);
    int rc = !t || !ub || !ev ? avi_error_set(err, AVI_ERR_RUN, "out of memory") : AVI_OK;
    if (!rc && (io->get(io, "queue_time", AVI_STATE_F64, n, t) || io->get(io, "queue_id_step", AVI_STATE_U32, 2 * n, ub)))
        rc = avi_error_set(err, AVI_ERR_INPUT, "no queue_time, queue_id_step");
    for (size_t i = 0; i < n && !rc; i++) {
        if (!isfinite(t[i]) || t[i] < e->time)
            rc = avi_error_set(err, AVI_ERR_INPUT, "queue entry %zu has time %g, before the checkpoint time %.17g", i,
                               t[i], e->time);
        ev[i] = (avi_event){t[i], ub[2 * i], ub[2 * i + 1]};
    }
    if (!rc) rc = avi_engine_queue_load(e, ev, n, 1, err);
    free(t);
    free(ub);
    free(ev);
    return rc;
}

int avi_event_state_load(avi_engine *e, avi_state_io *io, avi_error *err)
{
    int rc = load_queue(e, io, err);
    if (rc || !e->contact) return rc;
    avi_state_io *sub;
    if (io->group(io, "contact", AVI_STATE_OPEN, &sub)) return avi_error_set(err, AVI_ERR_INPUT, "no contact group");
    rc = e->model->contact_ops->load(e->contact, sub, err);
    io->close(sub, rc != AVI_OK);
    /* Refined clocks: none before the first contact (or in a checkpoint
     * from before refinement). */
    if (rc || io->group(io, "refine", AVI_STATE_OPEN_IF_PRESENT, &sub))
        return rc ? rc : avi_error_set(err, AVI_ERR_INPUT, "refine group unreadable");
    if (!sub) return AVI_OK;
    rc = avi_refine_load(e, sub, err);
    io->close(sub, rc != AVI_OK);
    return rc;
}
