/* The AVI's queue as one clock per potential: its sizes, and the
 * expansion and rebuilding of group cursors (for checkpoints, the energy
 * observable and the engine's construction). Below engine.c and
 * engine_state.c, which call it. */
#include "core/engine_internal.h"
#include "core/time_slice.h"
#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void avi_engine_queue_stats(const avi_engine *e, avi_clock_stats *stats, const uint8_t *grouped)
{
    const avi_model *m = e->model;
    const avi_clock_groups *g = &e->groups;
    memset(stats, 0, sizeof *stats);
    for (uint32_t k = 0; k < g->ngroup; k++)
        if (!grouped || grouped[k]) avi_clock_stats_add(stats, g->group[k].dt);
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            uint32_t gi = avi_group_of(g, avi_event_id((unsigned)k, (uint32_t)i));
            if (gi == AVI_GROUP_NONE || (grouped && !grouped[gi]))
                avi_clock_stats_add(stats, avi_model_time_step(m, (avi_kind)k, i));
        }
}

size_t avi_engine_queue_size(const avi_engine *e)
{
    return avi_tl_size(&e->queue) - e->ncursor + e->ncursor_members;
}

size_t avi_engine_queue_collect(const avi_engine *e, avi_event *out)
{
    size_t nq = avi_tl_size(&e->queue);
    avi_event *raw = malloc((nq + 1) * sizeof *raw);
    if (!raw) return 0;
    size_t got = avi_tl_collect(&e->queue, raw), n = 0;
    for (size_t i = 0; i < got; i++)
        if (raw[i].n & AVI_GROUP_CURSOR)
            n += avi_groups_expand(&e->groups, raw[i], out + n);
        else
            out[n++] = raw[i];
    free(raw);
    return n;
}

int avi_engine_queue_load(avi_engine *e, const avi_event *ev, size_t n, int grouped, avi_error *err)
{
    const avi_model *m = e->model;
    avi_clock_groups *g = &e->groups;
    avi_slice_free(e); /* the parts' lists follow the grouping */
    if (!grouped) avi_groups_free(g);
    else if (!g->group && avi_groups_build(g, m)) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    size_t offset[AVI_MODEL_KINDS], o = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        offset[k] = o;
        o += avi_model_potential_count(m, (avi_kind)k);
    }
    uint8_t *seen = calloc(o + 1, 1);
    uint8_t *consistent = malloc((size_t)g->ngroup + 1);
    avi_event *first = malloc(((size_t)g->ngroup + 1) * sizeof *first);
    uint32_t *members = calloc((size_t)g->ngroup + 1, sizeof *members);
    int rc = AVI_OK;
    if (!seen || !consistent || !first || !members) {
        rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
        goto done;
    }
    memset(consistent, 1, (size_t)g->ngroup + 1);
    /* Exactly one entry per potential, at a time >= 0, with a step count. */
    for (size_t i = 0; i < n; i++) {
        unsigned kind = ev[i].id >> AVI_ID_KIND_SHIFT;
        uint32_t index = ev[i].id & AVI_ID_INDEX_MASK;
        if (kind >= AVI_KIND_COUNT || !(ev[i].t >= 0.0) || !isfinite(ev[i].t) || (ev[i].n & AVI_GROUP_CURSOR)) {
            rc = avi_error_set(err, AVI_ERR_INPUT, "event %zu (id %u, t = %g, n = %u) is not a valid clock", i,
                               ev[i].id, ev[i].t, ev[i].n);
            goto done;
        }
        if (kind == AVI_KIND_CONTACT) continue; /* the contact manager checks its own */
        if (index >= avi_model_potential_count(m, (avi_kind)kind) || seen[offset[kind] + index]++) {
            rc = avi_error_set(err, AVI_ERR_INPUT, "event %zu: %s %u has no potential or a second clock", i,
                               avi_kind_name((avi_kind)kind), index);
            goto done;
        }
        uint32_t gi = avi_group_of(g, ev[i].id);
        if (gi == AVI_GROUP_NONE) continue;
        if (members[gi]++ == 0) first[gi] = ev[i];
        else if (first[gi].t != ev[i].t || first[gi].n != ev[i].n) consistent[gi] = 0;
    }
    /* Every scheduled potential has its clock; a pinned one needs none (a
     * checkpoint of a build that scheduled them has one: it is dropped). */
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++)
            if (!seen[offset[k] + i] && !avi_model_potential_pinned(m, (avi_kind)k, i)) {
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s %zu has no clock", avi_kind_name((avi_kind)k), i);
                goto done;
            }
    /* A group whose members are not all at one (t, n) (the middle of a
     * tick) keeps one clock per member. */
    avi_clock_stats stats;
    avi_engine_queue_stats(e, &stats, consistent);
    avi_tl_free(&e->queue);
    e->ncursor = e->ncursor_members = 0;
    if (avi_tl_init(&e->queue, n, stats.count ? &stats : NULL)) {
        rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
        goto done;
    }
    for (uint32_t k = 0; k < g->ngroup && rc == AVI_OK; k++) {
        g->group[k].pos = 0;
        if (!consistent[k] || !members[k]) continue; /* none: dissolved (core/refine.h) */
        avi_event c = {first[k].t, g->member[g->group[k].first], first[k].n | AVI_GROUP_CURSOR};
        if (avi_tl_push(&e->queue, c)) rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
        e->ncursor++;
        e->ncursor_members += g->group[k].count;
    }
    for (size_t i = 0; i < n && rc == AVI_OK; i++) {
        unsigned kind = ev[i].id >> AVI_ID_KIND_SHIFT;
        if (kind < AVI_MODEL_KINDS && avi_model_potential_pinned(m, (avi_kind)kind, ev[i].id & AVI_ID_INDEX_MASK))
            continue;
        uint32_t gi = avi_group_of(g, ev[i].id);
        if ((gi == AVI_GROUP_NONE || !consistent[gi]) && avi_tl_push(&e->queue, ev[i]))
            rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
    }
    if (rc == AVI_OK && stats.count && avi_tl_retune(&e->queue, &stats))
        rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
done:
    free(seen);
    free(consistent);
    free(first);
    free(members);
    return rc;
}
