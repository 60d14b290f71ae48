/* The AVI event loop (Lew, Marsden, Ortiz, West 2003): pop the earliest
 * potential, drift its stencil to the event time, kick, reschedule. */
#include "core/engine_internal.h"
#include "base/error.h"
#include "base/pool.h"
#include "core/damping.h"
#include "core/refine.h"
#include "core/time_slice.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int avi_engine_fail(avi_engine *e, avi_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset(&e->err, status, fmt, ap);
    va_end(ap);
    return rc;
}
#define engine_fail avi_engine_fail /* its name in this file */

/* What an event may touch: vertex records and potential records. */
static size_t working_set_bytes(const avi_model *m)
{
    size_t bytes = avi_model_record_count(m) * sizeof *m->vert; /* with auxiliary records */
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        if (avi_kind_flags(k) & AVI_KIND_ELASTIC) bytes += avi_model_potential_count(m, (avi_kind)k) * avi_kind_record_size(k);
    return bytes;
}

/* The L2 cache size, 2 MiB where unknown. */
static size_t l2_bytes(void)
{
    long l2 = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
    l2 = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
    return l2 > 0 ? (size_t)l2 : (size_t)2 << 20;
}

static int events_advance(avi_engine *e, double t_stop);
static void events_destroy(avi_engine *e);

/* The AVI's row of the stepper table (core/engine_ops.h): its state is the
 * event queue, the contact manager and refinement (engine_state.c saves
 * them); it has no statistics of a synchronous step and needs no clock
 * correction beyond the queue's. */
static avi_engine *events_create(avi_model *m, const avi_sync_options *opt, avi_error *err);
const avi_stepper_ops avi_event_stepper = {events_create, events_advance, avi_event_state_save, avi_event_state_load,
                                           events_destroy, NULL, NULL, NULL, NULL};

/* The asynchronous integrator's engine: the event queue with a clock per
 * potential. */
static avi_engine *events_create_queue(avi_model *m, avi_error *err)
{
    if (!m || !m->finalized) return avi_error_set(err, AVI_ERR_INPUT, "engine needs a finalized model"), NULL;
    size_t counts[AVI_KIND_COUNT];
    for (int k = 0; k < AVI_KIND_COUNT; k++) counts[k] = avi_model_potential_count(m, (avi_kind)k);
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        if (counts[k] > AVI_ID_MAX_INDEX)
            return avi_error_set(err, AVI_ERR_INPUT, "too many %s potentials (%zu; at most %u)",
                                 avi_kind_name((avi_kind)k), counts[k], AVI_ID_MAX_INDEX),
                   NULL;
    avi_engine *e = calloc(1, sizeof *e);
    if (!e) return avi_error_set(err, AVI_ERR_RUN, "out of memory"), NULL;
    e->model = m;
    e->stepper = &avi_event_stepper;
    e->beat_left = AVI_HEARTBEAT_PASSES;
    e->min_step = INFINITY; /* no clock: nothing to refuse */
    avi_clock_stats stats;
    if (avi_groups_build(&e->groups, m)) goto oom;
    avi_engine_queue_stats(e, &stats, NULL);
    if (avi_tl_init(&e->queue, stats.count, stats.count ? &stats : NULL)) goto oom;
    if (m->has_contact && !(e->contact = m->contact_ops->create(m, err))) {
        avi_engine_destroy(e);
        return NULL;
    }
    /* Prefetching pays once the working set leaves the L2 cache; below,
     * its instructions are pure cost (bench/README.md, graded meshes). Half
     * the L2 leaves room for the queue and the groups. */
    size_t l2 = l2_bytes();
    e->prefetch = working_set_bytes(m) > l2 / 2;
    e->drift_all_max = (uint32_t)(l2 / 4 / sizeof *m->vert);
    /* Every clock starts at t0 = 0 with n = 0; a group's cursor at its first
     * member. Pinned potentials get no clock (avi_model_potential_pinned). */
    const avi_clock_groups *g = &e->groups;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        avi_event ev = {0.0, g->member[g->group[k].first], AVI_GROUP_CURSOR};
        if (avi_tl_push(&e->queue, ev)) goto oom;
        e->ncursor++;
        e->ncursor_members += g->group[k].count;
    }
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        for (size_t i = 0; i < counts[k]; i++) {
            avi_event ev = {0.0, avi_event_id((unsigned)k, (uint32_t)i), 0};
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            if (avi_group_of(g, ev.id) == AVI_GROUP_NONE && avi_tl_push(&e->queue, ev)) goto oom;
            if (k < AVI_MODEL_KINDS) e->min_step = fmin(e->min_step, avi_model_time_step(m, (avi_kind)k, i));
        }
    return e;
oom:
    avi_engine_destroy(e);
    avi_error_set(err, AVI_ERR_RUN, "out of memory");
    return NULL;
}

static avi_engine *events_create(avi_model *m, const avi_sync_options *opt, avi_error *err)
{
    avi_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    if (opt && opt->constraint_count)
        return avi_error_set(err, AVI_ERR_INPUT, "constraints need a synchronous integrator, not avi"), NULL;
    avi_engine *e = events_create_queue(m, err);
    if (e && opt && avi_engine_set_damping(e, opt->damping)) {
        *err = e->err;
        avi_engine_destroy(e);
        return NULL;
    }
    return e;
}

int avi_engine_schedule(avi_engine *e, avi_event ev)
{
    /* A contact potential's next event (n > 0) must come after the one in
     * progress: a layer step below the resolution of t would spin at one time. */
    if ((ev.id >> AVI_ID_KIND_SHIFT) == AVI_KIND_CONTACT && ev.n > 0 && !(ev.t > e->now))
        return engine_fail(e, AVI_ERR_RUN,
                           "contact %u at t = %.17g s: its next event does not advance time (its step is below the "
                           "resolution of t, or not finite)", ev.id & AVI_ID_INDEX_MASK, e->now);
    if (ev.n >= AVI_GROUP_CURSOR)
        return engine_fail(e, AVI_ERR_RUN, "%s %u: step counter overflow", avi_kind_name((avi_kind)(ev.id >> AVI_ID_KIND_SHIFT)),
                           ev.id & AVI_ID_INDEX_MASK);
    if (avi_tl_push(&e->queue, ev)) return engine_fail(e, AVI_ERR_RUN, "out of memory");
    return AVI_OK;
}

static void events_destroy(avi_engine *e)
{
    if (e->contact) e->model->contact_ops->destroy(e->contact);
    avi_refine_destroy(e->refine);
    avi_tl_free(&e->queue);
    avi_groups_free(&e->groups);
    free(e->tie);
    avi_slice_free(e);
}

void avi_engine_destroy(avi_engine *e)
{
    if (!e) return;
    if (e->stepper) e->stepper->destroy(e);
    avi_pool_destroy(e->pool);
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

/* Prefetching. Past the L2 cache a record or vertex load costs 50-100 ns,
 * and one potential step (some hundreds of instructions) fills the reorder window,
 * so the next member's loads would not start before this one's end. So:
 * a group tick requests the records of the members PREFETCH_MEMBERS ahead
 * and, once those have arrived, the vertices of the members
 * PREFETCH_VERTICES ahead; at its start it requests the first records of
 * the group two entries down the queue and the first vertices of the next.
 * Single clocks do the same with the queue's next entries (PREFETCH_RECORD,
 * PREFETCH_VERTICES). This halved ns per event on the 100k-tet bar with
 * exact steps (bench/README.md). The helpers are always_inline: gcc 12's
 * mod/ref analysis finds a call whose only effect is a prefetch free of
 * side effects and deletes it before inlining. */
#define PREFETCH_MEMBERS 8
#define PREFETCH_VERTICES 4
#define PREFETCH_RECORD 16

/* The record of potential i of `kind`, its size and stencil, for
 * prefetching: NULL for kinds without one and for gravity (one vertex, its
 * record small). */
static inline __attribute__((always_inline)) const char *record_of(const avi_model *m, unsigned kind, uint32_t i,
                                                                   const uint32_t **v, int *n, size_t *size)
{
    switch (kind) {
#define RECORD_OF(K, type, array, count, slots, vertices, gradient, energy, flags)                     \
    case K:                                                                                          \
        if (!((flags) & AVI_KIND_ELASTIC)) break;                                                    \
        *v = m->array[i].v; *n = slots; *size = sizeof m->array[i]; return (const char *)&m->array[i];
    AVI_POTENTIAL_KINDS(RECORD_OF)
#undef RECORD_OF
    default: break;
    }
    *n = 0;
    *size = 0;
    return NULL;
}

/* Requests every cache line of potential id's record (no load: its
 * address only); its kind, a constant where the caller knows it. */
static inline __attribute__((always_inline)) void prefetch_record_of(const avi_model *m, unsigned kind, uint32_t id)
{
    const uint32_t *v;
    int n;
    size_t size;
    const char *r = record_of(m, kind, id & AVI_ID_INDEX_MASK, &v, &n, &size);
    if (!r) return;
    for (size_t o = 0; o < size; o += 64) __builtin_prefetch(r + o);
    __builtin_prefetch(r + size - 1);
}
static inline __attribute__((always_inline)) void prefetch_record(const avi_model *m, uint32_t id)
{
    prefetch_record_of(m, id >> AVI_ID_KIND_SHIFT, id);
}

/* Requests the vertices of the record (which is loaded: prefetch it first). */
static inline __attribute__((always_inline)) void prefetch_vertices(const avi_model *m, uint32_t id)
{
    const uint32_t *v;
    int n;
    size_t size;
    if (record_of(m, id >> AVI_ID_KIND_SHIFT, id & AVI_ID_INDEX_MASK, &v, &n, &size))
        for (int a = 0; a < n; a++) __builtin_prefetch(&m->vert[v[a]], 1);
}

/* The first members of the group an upcoming queue entry ticks: the
 * records of `records` of them, the vertices of `vertices`. */
static inline __attribute__((always_inline)) void prefetch_group(const avi_model *m, const avi_clock_groups *groups, const avi_event *x,
                                  uint32_t records, uint32_t vertices, uint32_t drift_all_max)
{
    uint32_t g;
    if (!x || !(x->n & AVI_GROUP_CURSOR) || (g = avi_group_of(groups, x->id)) == AVI_GROUP_NONE) return;
    const avi_clock_group *gr = &groups->group[g];
    const uint32_t *mem = groups->member + gr->first;
    for (uint32_t a = gr->pos; a < gr->pos + records && a < gr->count; a++) prefetch_record(m, mem[a]);
    if (vertices == 0) return;
    if (gr->pos == 0 && gr->vcount <= drift_all_max) { /* the tick starts by drifting these */
        const uint32_t *list = groups->vertex + gr->vfirst;
        for (uint32_t a = 0; a < 4 * vertices && a < gr->vcount; a++) __builtin_prefetch(&m->vert[list[a]], 1);
    } else {
        for (uint32_t a = gr->pos; a < gr->pos + vertices && a < gr->count; a++) prefetch_vertices(m, mem[a]);
    }
}

/* Single clocks: the records and vertices of the queue's next entries. */
static inline __attribute__((always_inline)) void prefetch_ahead(const avi_model *m, avi_twolevel_queue *q)
{
    const avi_event *far = avi_tl_peek(q, PREFETCH_RECORD);
    if (far) prefetch_record(m, far->id);
    const avi_event *near = avi_tl_peek(q, PREFETCH_VERTICES);
    if (near) prefetch_vertices(m, near->id);
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

/* One potential event, the one path from queue pop to impulse: drift the
 * stencil to t (or read it where a group tick has drifted it), gradient,
 * damping when k_D > 0 and the kind has it, kick by w = half * dt; returns
 * the impulse's component sum (its finiteness is the blow-up check), the
 * stencil's mesh vertices in *v, *n (the speed cap and blow-up messages
 * read these) and dt in *step. `kind` is a constant wherever this is
 * inlined (apply_potential's cases, uniform_tick), so that the table's
 * switches (core/kinds.h, model_internal.h) fold and each kind compiles to
 * its own straight path; its AVX2 lanes specialisation (AVI_LANE_KINDS) is
 * taken where damping is off. Kinds are rows of core/kinds.h, not cases
 * here. */
#ifdef __AVX2__
/* The event with positions and gradient in registers (lane 3 of each
 * position is its vertex's tau, t for all): drift unless `drifted`,
 * gradient, kick by w. Returns avi_kick_lanes' impulse lanes; a stencil of
 * more than 4 slots (midedge) kicks in kick_stencil's chunks of 4 and
 * returns their sums added in kick_stencil's order, in lane 0. */
static inline __attribute__((always_inline)) __m256d event_lanes(avi_vertex *V, unsigned kind, const void *p, double t,
                                                                int drifted, double w)
{
    const uint32_t *s = avi_kind_stencil(kind, p);
    const int n = avi_kind_slots(kind);
    __m256d xv[AVI_STENCIL_MAX], gv[AVI_STENCIL_MAX];
    if (drifted) {
        for (int a = 0; a < n; a++) xv[a] = _mm256_loadu_pd(V[s[a]].x);
    } else {
        const __m256d tt = _mm256_set1_pd(t);
        for (int a = 0; a < n; a++) xv[a] = avi_drift_record(&V[s[a]], tt);
    }
    avi_kind_gradient_lanes(kind, p, xv, gv);
    if (n <= 4) return avi_kick_lanes(V, s, n, w, gv);
    double sum = avi_lane_sum(avi_kick_lanes(V, s, 4, w, gv));
    for (int c = 4; c < n; c += 4) sum += avi_lane_sum(avi_kick_lanes(V, s + c, n - c < 4 ? n - c : 4, w, gv + c));
    return _mm256_set_pd(0.0, 0.0, 0.0, sum);
}
#endif

/* avi_kick for stencils of any width: chunks of its 4 records, their sums
 * added in order. */
static inline __attribute__((always_inline)) double kick_stencil(avi_vertex *V, const uint32_t *v, int n, double w,
                                                                const double g[][3])
{
    double sum = avi_kick(V, v, n < 4 ? n : 4, w, g);
    for (int c = 4; c < n; c += 4) sum += avi_kick(V, v + c, n - c < 4 ? n - c : 4, w, g + c);
    return sum;
}

static inline __attribute__((always_inline)) double potential_event(const avi_model *m, avi_vertex *V, unsigned kind,
                                                                   uint32_t i, double t, double half, double kd,
                                                                   int drifted, const uint32_t **v, int *n,
                                                                   double *step)
{
    const void *p = avi_kind_record(m, kind, i);
    const uint32_t *s = avi_kind_stencil(kind, p);
    const int ns = avi_kind_slots(kind);
    const double dt = avi_kind_dt(kind, p);
    *v = s; *n = avi_kind_vertices(kind); *step = dt;
#ifdef __AVX2__
    if (avi_kind_has_lanes(kind) && kd == 0.0) return avi_lane_sum(event_lanes(V, kind, p, t, drifted, half * dt));
#endif
    double x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
    if (drifted) avi_gather(V, s, ns, x);
    else avi_drift(V, s, ns, t, x);
    avi_kind_gradient(kind, p, (const double (*)[3])x, g);
    if ((avi_kind_flags(kind) & AVI_KIND_DAMPED) && kd != 0.0) damp(V, (avi_kind)kind, ns, p, s, x, dt, kd, g);
    return kick_stencil(V, s, ns, half * dt, (const double (*)[3])g);
}

/* potential_event for a kind known at run time: one case per row. */
static inline __attribute__((always_inline)) double apply_potential(const avi_model *m, avi_vertex *V, unsigned kind, uint32_t i, double t,
                                     double half, double kd, int drifted, const uint32_t **v, int *n, double *step)
{
    switch (kind) {
#define APPLY(K, ...) case K: return potential_event(m, V, K, i, t, half, kd, drifted, v, n, step);
        AVI_POTENTIAL_KINDS(APPLY)
#undef APPLY
    default: /* not a potential kind (the callers check): a blow-up */
        *v = NULL; *n = 0; *step = 0.0;
        return NAN;
    }
}

/* The impulse sum apply_potential returns for a member of a drifted group
 * tick, at the current positions, without a trace: the kick it applies to
 * the stencil's velocities is undone. Positions do not change between a
 * tick's drift and its end, so this is the sum the member had. */
static double member_impulse_sum(const avi_model *m, avi_vertex *V, unsigned kind, uint32_t i, double t, double half,
                                 const uint32_t **v, int *n)
{
    const uint32_t *s;
    int ns = avi_model_stencil(m, (avi_kind)kind, i, &s);
    avi_vertex saved[AVI_STENCIL_MAX];
    for (int a = 0; a < ns; a++) saved[a] = V[s[a]];
    double dt, sum = apply_potential(m, V, kind, i, t, half, 0.0, 1, v, n, &dt);
    for (int a = 0; a < ns; a++) V[s[a]] = saved[a];
    return sum;
}

/* The first member of a tick, from pos, whose impulse sum is not finite
 * (uniform_tick). */
__attribute__((cold, noinline)) static int uniform_tick_blow_up(avi_engine *e, unsigned kind, const uint32_t *mem,
                                                                uint32_t pos, uint32_t end, double t, double half,
                                                                uint32_t *done)
{
    avi_model *m = e->model;
    for (uint32_t a = pos; a < end; a++) {
        uint32_t i = mem[a] & AVI_ID_INDEX_MASK;
        const uint32_t *v;
        int n;
        if (!isfinite(member_impulse_sum(m, m->vert, kind, i, t, half, &v, &n))) {
            *done = a + 1 - pos;
            return blow_up(e, kind, i, t, v, n);
        }
    }
    return AVI_OK;
}

/* Members pos..end-1 of a group tick whose members are all of one kind,
 * with the vertices already drifted, no damping and no contact: the member
 * loop of avi_engine_advance with kind (a constant), damping and drift
 * fixed, so that potential_event compiles to one straight path. The
 * events, their order and so every bit of the state are those of the
 * general loop. The blow-up check adds up the members' impulse sums (for
 * kinds with lanes, in lanes) and tests the total once per run; when it is
 * not finite, the members are evaluated again to name the first whose own
 * sum is not finite, as the general loop would (none: only the total
 * overflowed; a member sum that overflows while the run's lanes do not,
 * impulses near 1e308 of opposite signs, escapes this check, and its
 * vertices then blow up at their next event). *done returns the events
 * that count as run, as in the general loop; unlike there, the members
 * after a failing one have been kicked too (the run stops with an error
 * either way). */
static inline __attribute__((always_inline)) int uniform_tick(avi_engine *e, unsigned kind, const uint32_t *mem,
                                                              uint32_t pos, uint32_t end, double t, double half,
                                                              int prefetch, uint32_t *done)
{
    avi_model *m = e->model;
    avi_vertex *V = m->vert;
#ifdef __AVX2__
    if (avi_kind_has_lanes(kind)) {
        const double w = half * avi_kind_dt(kind, avi_kind_record(m, kind, mem[pos] & AVI_ID_INDEX_MASK));
        __m256d sum = _mm256_setzero_pd();
        for (uint32_t a = pos; a < end; a++) {
            if (prefetch && a + PREFETCH_MEMBERS < end) prefetch_record_of(m, kind, mem[a + PREFETCH_MEMBERS]);
            sum = _mm256_add_pd(sum, event_lanes(V, kind, avi_kind_record(m, kind, mem[a] & AVI_ID_INDEX_MASK), t, 1, w));
        }
        *done = end - pos;
        if (isfinite(avi_lane_sum(sum))) return AVI_OK;
        return uniform_tick_blow_up(e, kind, mem, pos, end, t, half, done);
    }
#endif
    const uint32_t *v;
    int n;
    double dt, total = 0.0;
    for (uint32_t a = pos; a < end; a++) {
        if (prefetch && a + PREFETCH_MEMBERS < end) prefetch_record_of(m, kind, mem[a + PREFETCH_MEMBERS]);
        total += potential_event(m, V, kind, mem[a] & AVI_ID_INDEX_MASK, t, half, 0.0, 1, &v, &n, &dt);
    }
    *done = end - pos;
    if (isfinite(total)) return AVI_OK;
    return uniform_tick_blow_up(e, kind, mem, pos, end, t, half, done);
}

/* The first member at or after pos + 1 whose id is above `id`: members
 * before it run ahead of an entry keyed `id` at the same time. */
static inline uint32_t members_before(const uint32_t *mem, uint32_t pos, uint32_t end, uint32_t id)
{
    if (id > mem[end - 1]) return end;
    uint32_t lo = pos + 1;
    while (lo < end) {
        uint32_t mid = lo + (end - lo) / 2;
        if (mem[mid] < id) lo = mid + 1;
        else end = mid;
    }
    return end;
}

/* Members *pos .. end-1 of a group tick at time t (all of the tick, or its
 * part before another entry at t). From the first member, every member's
 * vertices are drifted once (clock_groups.h) and members then only read
 * their positions; not for groups whose vertex records pass a quarter of
 * the L2 cache (large step levels): they would be gone before their members
 * come back to them. Without damping or contact, each run of members of one
 * kind (ids sort by kind) goes through uniform_tick. With contact, the run
 * stops early once the manager must run first. *pos returns where it
 * stopped. Shared by the queue's ticks and run_tie. */
static inline __attribute__((always_inline)) int run_members(avi_engine *e, const avi_clock_group *gr,
                                                             const uint32_t *mem, uint32_t *pos_io, uint32_t end,
                                                             double t, double half, uint64_t *counts)
{
    avi_model *m = e->model;
    avi_vertex *V = m->vert;
    avi_contact_clock *cm = contact_clock(e);
    const double kd = e->damping;
    const int prefetch = e->prefetch;
    uint32_t pos = *pos_io;
    int rc = AVI_OK;
    int drifted = pos == 0 && gr->vcount <= e->drift_all_max;
    if (drifted) avi_drift_all(V, e->groups.vertex + gr->vfirst, gr->vcount, t);
    if (drifted && !cm && kd == 0.0) {
        while (pos < end) {
            unsigned k = mem[pos] >> AVI_ID_KIND_SHIFT;
            uint32_t run = mem[end - 1] >> AVI_ID_KIND_SHIFT == k
                               ? end
                               : members_before(mem, pos, end, (uint32_t)(k + 1) << AVI_ID_KIND_SHIFT);
            uint32_t done = 0;
            switch (k) { /* one specialisation per kind */
#define UNIFORM_TICK(K, ...) case K: rc = uniform_tick(e, K, mem, pos, run, t, half, prefetch, &done); break;
                AVI_POTENTIAL_KINDS(UNIFORM_TICK)
#undef UNIFORM_TICK
            default: rc = engine_fail(e, AVI_ERR_RUN, "unknown event kind %u", k); break;
            }
            counts[k] += done;
            if (rc != AVI_OK) break;
            pos = run;
        }
        *pos_io = pos;
        return rc;
    }
    const uint32_t *v;
    int n;
    double dt;
    do {
        uint32_t id = mem[pos];
        unsigned k = id >> AVI_ID_KIND_SHIFT;
        if (prefetch) {
            if (pos + PREFETCH_MEMBERS < end) prefetch_record(m, mem[pos + PREFETCH_MEMBERS]);
            if (!drifted && pos + PREFETCH_VERTICES < end) prefetch_vertices(m, mem[pos + PREFETCH_VERTICES]);
        }
        double sum = apply_potential(m, V, k, id & AVI_ID_INDEX_MASK, t, half, kd, drifted, &v, &n, &dt);
        counts[k]++;
        if (!isfinite(sum)) {
            rc = blow_up(e, k, id & AVI_ID_INDEX_MASK, t, v, n);
            break;
        }
        pos++;
        if (cm) {
            avi_check_speed(cm, V, v, n, t);
            if (cm->next_run <= t) break;
        }
    } while (pos < end);
    *pos_io = pos;
    return rc;
}

/* run_members out of line, for run_tie: its own copy would grow the event
 * loop's. */
__attribute__((noinline)) static int run_members_tie(avi_engine *e, const avi_clock_group *gr, const uint32_t *mem,
                                                     uint32_t *pos_io, uint32_t end, double t, double half,
                                                     uint64_t *counts)
{
    return run_members(e, gr, mem, pos_io, end, t, half, counts);
}

/* A group's cursor for its next tick. */
static int next_tick(avi_engine *e, const avi_clock_group *gr, const uint32_t *mem, uint32_t step, avi_event *ev)
{
    if (step + 1 >= AVI_GROUP_CURSOR)
        return engine_fail(e, AVI_ERR_RUN, "group of %s %u: step counter overflow",
                           avi_kind_name((avi_kind)(mem[0] >> AVI_ID_KIND_SHIFT)), mem[0] & AVI_ID_INDEX_MASK);
    *ev = (avi_event){(double)(step + 1) * gr->dt, mem[0], (step + 1) | AVI_GROUP_CURSOR};
    return AVI_OK;
}

/* Every entry at the top's time t, when they are a slice for the threads
 * (core/time_slice.h): each group cursor at its first member, no refined
 * clock or group refinement dissolves, at least AVI_SLICE_PARALLEL_MIN
 * events, no damping (the caller's check). Returns 1 when it took them (*rc: AVI_OK, every entry
 * rescheduled, or an error status with the engine's error set), 0 when
 * they must run serially (nothing changed). */
static int run_slice(avi_engine *e, double t, uint64_t *counts, int *rc_out)
{
    avi_twolevel_queue *q = &e->queue;
    avi_clock_groups *groups = &e->groups;
    avi_event ent[AVI_SLICE_ENTRIES_MAX];
    size_t k = 0;
    uint64_t events = 0;
    for (const avi_event *x; (x = avi_tl_peek(q, k)) && x->t == t; k++) {
        if (k == AVI_SLICE_ENTRIES_MAX || (x->id >> AVI_ID_KIND_SHIFT) >= AVI_MODEL_KINDS) return 0;
        if (x->n & AVI_GROUP_CURSOR) {
            uint32_t gi = avi_group_of(groups, x->id);
            if (groups->group[gi].pos != 0 || (e->refine && avi_refine_dissolving(e->refine, gi))) return 0;
            events += groups->group[gi].count;
        } else {
            if (e->refine && avi_refine_owns(e->refine, x->id)) return 0;
            events++;
        }
        ent[k] = *x;
    }
    if (events < AVI_SLICE_PARALLEL_MIN) return 0;
    uint32_t blown;
    int rc = avi_slice_run(e, ent, k, t, counts, &blown);
    if (rc < 0) {
        *rc_out = rc == -2 ? engine_fail(e, AVI_ERR_RUN, "the exchange between ranks failed at t = %.17g s", t)
                           : engine_fail(e, AVI_ERR_RUN, "out of memory");
        return 1;
    }
    if (rc == AVI_SLICE_UNDONE) return 0;
    if (rc == AVI_SLICE_BLOW_UP) {
        unsigned kind = blown >> AVI_ID_KIND_SHIFT;
        const uint32_t *v;
        avi_model_stencil(e->model, (avi_kind)kind, blown & AVI_ID_INDEX_MASK, &v);
        *rc_out = blow_up(e, kind, blown & AVI_ID_INDEX_MASK, t, v, avi_kind_vertices(kind));
        return 1;
    }
    for (size_t a = 0; a < k; a++) {
        avi_event x, next;
        avi_tl_pop(q, &x);
        if (x.n & AVI_GROUP_CURSOR) {
            const avi_clock_group *gr = &groups->group[avi_group_of(groups, x.id)];
            rc = next_tick(e, gr, groups->member + gr->first, x.n & ~AVI_GROUP_CURSOR, &next);
        } else {
            unsigned kind = x.id >> AVI_ID_KIND_SHIFT;
            uint32_t i = x.id & AVI_ID_INDEX_MASK;
            if (x.n + 1 >= AVI_GROUP_CURSOR)
                rc = engine_fail(e, AVI_ERR_RUN, "%s %u: step counter overflow", avi_kind_name((avi_kind)kind), i);
            next = (avi_event){(double)(x.n + 1) * avi_kind_dt(kind, avi_kind_record(e->model, kind, i)), x.id, x.n + 1};
        }
        if (rc == AVI_OK && avi_tl_push(q, next)) rc = engine_fail(e, AVI_ERR_RUN, "out of memory");
        if (rc != AVI_OK) break;
    }
    *rc_out = rc;
    return 1;
}

static void tie_sift_down(avi_event *h, size_t n, size_t i)
{
    avi_event x = h[i];
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && h[c + 1].id < h[c].id) c++;
        if (h[c].id >= x.id) break;
        h[i] = h[c];
        i = c;
    }
    h[i] = x;
}

/* Ties of at most this many clocks let a group run past entries that share
 * no vertex with it (clock_groups.h); beyond, the scan would cost more. */
#define TIE_SCAN_MAX 32

/* The smallest id among tie entries h[0..n) that share a vertex with group
 * gi: single clocks always count, groups by the conflict matrix. */
static uint32_t first_conflicting(const avi_clock_groups *groups, uint32_t gi, const avi_event *h, size_t n)
{
    uint32_t first = UINT32_MAX;
    for (size_t i = 0; i < n; i++)
        if (h[i].id < first &&
            (!(h[i].n & AVI_GROUP_CURSOR) || avi_groups_conflict(groups, gi, avi_group_of(groups, h[i].id))))
            first = h[i].id;
    return first;
}

/* All entries at the top's time, when group ticks interleave with other
 * entries (every clock at t = 0; step levels an octave apart): they leave
 * the queue for a heap keyed by id, a cut group goes back into the heap
 * keyed by its next member, and each clock re-enters the queue once for
 * its next event. The order is the queue's wherever events share a vertex
 * (in a tie of up to TIE_SCAN_MAX clocks a group runs on past entries it
 * shares none with, clock_groups.h); putting each cut cursor back into the
 * sorted span instead would move the entries before it each time. Without
 * contact only (the manager may run between tied events). A group's members
 * run as in the queue's ticks (run_members). */
static int run_tie(avi_engine *e, uint64_t *counts)
{
    avi_model *m = e->model;
    avi_vertex *V = m->vert;
    avi_twolevel_queue *q = &e->queue;
    const avi_clock_groups *groups = &e->groups;
    const double kd = e->damping;
    double t = avi_tl_top(q)->t;
    size_t k = 1;
    for (const avi_event *x; (x = avi_tl_peek(q, k)) && x->t == t;) k++;
    if (k > e->tie_cap) {
        size_t cap = k > 2 * e->tie_cap ? k : 2 * e->tie_cap;
        avi_event *h = realloc(e->tie, cap * sizeof *h);
        if (!h) return engine_fail(e, AVI_ERR_RUN, "out of memory");
        e->tie = h;
        e->tie_cap = cap;
    }
    avi_event *h = e->tie;
    for (size_t i = 0; i < k; i++) avi_tl_pop(q, &h[i]); /* ascending ids: already a heap */
    size_t n = k;
    int rc = AVI_OK;
    const uint32_t *v;
    int nv;
    double dt;
    while (n > 0 && rc == AVI_OK) {
        avi_event x = h[0];
        avi_event next;
        if (x.n & AVI_GROUP_CURSOR) {
            uint32_t gi = avi_group_of(groups, x.id);
            avi_clock_group *gr = &groups->group[gi];
            const uint32_t *mem = groups->member + gr->first;
            uint32_t step = x.n & ~AVI_GROUP_CURSOR, pos = gr->pos;
            /* The next entry the group gives way to: the heap's second
             * smallest id, or in a small tie the smallest that shares a vertex. */
            uint32_t second = UINT32_MAX;
            if (groups->conflict && n <= TIE_SCAN_MAX) second = first_conflicting(groups, gi, h + 1, n - 1);
            else if (n > 1) second = n == 2 || h[1].id < h[2].id ? h[1].id : h[2].id;
            uint32_t end = members_before(mem, pos, gr->count, second);
            double half = step == 0 ? 0.5 : 1.0;
            if ((rc = run_members_tie(e, gr, mem, &pos, end, t, half, counts)) != AVI_OK) break;
            if (end < gr->count) {
                gr->pos = end;
                h[0].id = mem[end];
                tie_sift_down(h, n, 0);
                e->group_splits++;
                continue;
            }
            gr->pos = 0;
            if ((rc = next_tick(e, gr, mem, step, &next)) != AVI_OK) break;
        } else {
            unsigned kind = x.id >> AVI_ID_KIND_SHIFT;
            uint32_t i = x.id & AVI_ID_INDEX_MASK;
            double sum = apply_potential(m, V, kind, i, t, x.n == 0 ? 0.5 : 1.0, kd, 0, &v, &nv, &dt);
            counts[kind]++;
            if (!isfinite(sum)) {
                rc = blow_up(e, kind, i, t, v, nv);
                break;
            }
            if (x.n + 1 >= AVI_GROUP_CURSOR) {
                rc = engine_fail(e, AVI_ERR_RUN, "%s %u: step counter overflow", avi_kind_name((avi_kind)kind), i);
                break;
            }
            next = (avi_event){(double)(x.n + 1) * dt, x.id, x.n + 1};
        }
        if (avi_tl_push(q, next)) {
            rc = engine_fail(e, AVI_ERR_RUN, "out of memory");
            break;
        }
        h[0] = h[--n];
        tie_sift_down(h, n, 0);
    }
    /* On failure the clocks not yet rescheduled go back as they are. */
    for (size_t i = 0; i < n && rc != AVI_OK; i++) (void)avi_tl_push(q, h[i]);
    return rc;
}

/* One event of elastic or gravity potential id at t with impulse weight
 * half * dt (dt its model step, returned): drift, gradient, kick, speed
 * check, blow-up check; counts[kind] grows by one. A refined clock's. */
static int apply_event(avi_engine *e, uint32_t id, double t, double half, double *dt, uint64_t *counts)
{
    unsigned kind = id >> AVI_ID_KIND_SHIFT;
    uint32_t i = id & AVI_ID_INDEX_MASK;
    const uint32_t *v;
    int n;
    double sum = apply_potential(e->model, e->model->vert, kind, i, t, half, e->damping, 0, &v, &n, dt);
    counts[kind]++;
    if (e->contact) avi_check_speed(contact_clock(e), e->model->vert, v, n, t);
    return isfinite(sum) ? AVI_OK : blow_up(e, kind, i, t, v, n);
}

/* The event ev of a potential whose step refinement owns (core/refine.h),
 * already off the queue: applied with the weight of its old and new steps,
 * then its next event scheduled. */
static int refined_event(avi_engine *e, avi_event ev, uint64_t *counts)
{
    int level;
    double dt, half = avi_refine_event_begin(e->refine, e->model, ev, &level);
    int rc = apply_event(e, ev.id, ev.t, half, &dt, counts);
    if (rc != AVI_OK) return rc;
    return avi_engine_schedule(e, avi_refine_event_end(e->refine, ev, level, dt));
}

/* The queue's top is the cursor of a group that refinement marked to
 * dissolve: its members become single clocks (one entry each, as
 * avi_groups_expand gives them). */
static int dissolve_group(avi_engine *e)
{
    avi_clock_groups *g = &e->groups;
    avi_event cursor;
    avi_tl_pop(&e->queue, &cursor);
    uint32_t gi = avi_group_of(g, cursor.id);
    avi_clock_group *gr = &g->group[gi];
    avi_event *out = malloc(((size_t)gr->count + 1) * sizeof *out);
    if (!out) {
        (void)avi_tl_push(&e->queue, cursor);
        return engine_fail(e, AVI_ERR_RUN, "out of memory");
    }
    size_t n = avi_groups_expand(g, cursor, out);
    int rc = AVI_OK;
    for (size_t k = 0; k < n && rc == AVI_OK; k++) {
        g->group_of[g->offset[out[k].id >> AVI_ID_KIND_SHIFT] + (out[k].id & AVI_ID_INDEX_MASK)] = AVI_GROUP_NONE;
        rc = avi_engine_schedule(e, out[k]);
    }
    free(out);
    gr->pos = 0;
    e->ncursor--;
    e->ncursor_members -= gr->count;
    avi_refine_dissolved(e->refine, gi);
    return rc;
}

static avi_ranks process_ranks;
static int process_has_ranks;
void avi_set_ranks(const avi_ranks *ranks)
{
    process_has_ranks = ranks != NULL;
    if (ranks) process_ranks = *ranks;
}

void avi_engine_join_ranks(avi_engine *e)
{
    if (!process_has_ranks || process_ranks.size < 2) return;
    e->ranks = &process_ranks;
    e->stop = &e->agreed;
}

/* With ranks: whether any member's caller asked to stop, into e->agreed
 * (every member calls this at the same points of the same loop). */
static void agree_stop(avi_engine *e)
{
    if (!e->ranks) return;
    int any = e->ranks->any(e->ranks->ctx, e->stop_asked && *e->stop_asked);
    if (any != 0) e->agreed = 1; /* a failed exchange stops the run too */
}

/* The heartbeat (avi_engine_set_heartbeat), out of the loop's way. */
__attribute__((cold, noinline)) static void heartbeat(avi_engine *e, double t)
{
    agree_stop(e);
    if (e->beat) e->beat(e, t > e->time ? t : e->time, e->beat_user);
}

/* The contact manager ran at t and is due at t again: its window (the time
 * a vertex at the speed cap needs to close a quarter of contact.thickness)
 * is below the resolution of t, and the loop would spin there. */
__attribute__((cold, noinline)) static int manager_stalled(avi_engine *e, const avi_contact_clock *cm, double t)
{
    return engine_fail(e, AVI_ERR_RUN,
                       "contact manager at t = %.17g s: its next run does not advance time (its window, a quarter of "
                       "contact.thickness over the speed cap, %.3g m/s, is below the resolution of t)",
                       t, sqrt(cm->vcap2));
}

int avi_engine_advance(avi_engine *e, double t_stop) { return e->stepper->advance(e, t_stop); }

/* An exchange's status (core/time_slice.h: 0, -1 out of memory, -2 the
 * exchange failed) as the engine's. */
static int exchange_status(avi_engine *e, int rc)
{
    if (rc == 0) return AVI_OK;
    return engine_fail(e, AVI_ERR_RUN, rc == -2 ? "the exchange between ranks failed" : "out of memory");
}

/* With ranks: every record current on this member, before the loop reads
 * beyond a slice (core/time_slice.h, avi_slice_sync). */
static int sync_records(avi_engine *e) { return exchange_status(e, avi_slice_sync(e)); }

/* With ranks: the records the serial loop's next event reads, current on
 * every member. A group tick reads its group's records, a single clock
 * its stencil: those a slice changed since the last sync are fetched from
 * their owners (avi_slice_fetch); anything else (a contact event, a
 * refined clock, a dissolving group) syncs all. */
static int serial_records(avi_engine *e, avi_event ev)
{
    unsigned kind = ev.id >> AVI_ID_KIND_SHIFT;
    const uint32_t *rec;
    size_t n;
    if (ev.n & AVI_GROUP_CURSOR) {
        uint32_t gi = avi_group_of(&e->groups, ev.id);
        if (e->refine && avi_refine_dissolving(e->refine, gi)) return sync_records(e);
        const avi_clock_group *gr = &e->groups.group[gi];
        rec = e->groups.vertex + gr->vfirst;
        n = gr->vcount;
    } else if (kind < AVI_MODEL_KINDS && !(e->refine && avi_refine_owns(e->refine, ev.id))) {
        n = (size_t)avi_model_stencil(e->model, (avi_kind)kind, ev.id & AVI_ID_INDEX_MASK, &rec);
    } else {
        return sync_records(e);
    }
    return exchange_status(e, avi_slice_fetch(e, rec, n));
}

static int events_advance(avi_engine *e, double t_stop)
{
    avi_model *m = e->model;
    avi_vertex *V = m->vert;
    avi_twolevel_queue *q = &e->queue;
    avi_clock_groups *groups = &e->groups;
    const double kd = e->damping;
    avi_contact_clock *cm = contact_clock(e);
    const int prefetch = e->prefetch;
    const uint32_t drift_all_max = e->drift_all_max;
    uint64_t counts[AVI_KIND_COUNT] = {0};
    int rc = AVI_OK;
    double t_last = -INFINITY; /* time of the last event processed */
    uint32_t beat = e->beat_left;
    for (;;) {
        /* Every pass counts, on every path, so that progress shows where
         * time crawls (a contact window of 1e-14 s) or stands still. */
        if (__builtin_expect(--beat == 0, 0)) {
            beat = AVI_HEARTBEAT_PASSES;
            heartbeat(e, t_last);
        }
        /* The contact manager runs before any potential event at its time. */
        if (cm && cm->next_run < t_stop && (q->size == 0 || cm->next_run <= avi_tl_top(q)->t)) {
            double tr = cm->next_run;
            if (e->ranks && (rc = sync_records(e)) != AVI_OK) goto out;
            if (e->stop && *e->stop && tr > t_last) {
                /* A time boundary: every event before tr is done (the
                 * manager is due first), and its checkpointed clock runs
                 * it again on resume. */
                if (tr > e->time) e->time = tr;
                rc = AVI_INTERRUPTED;
                goto out;
            }
            t_last = tr;
            heartbeat(e, tr); /* each run drifts every surface vertex: the call is noise */
            rc = m->contact_ops->run(e->contact, e, tr);
            if (rc != AVI_OK) goto out;
            if (!(cm->next_run > tr)) {
                rc = manager_stalled(e, cm, tr);
                goto out;
            }
            continue;
        }
        if (q->size == 0) break;
        avi_event ev = *avi_tl_top(q);
        if (!(ev.t < t_stop)) break;
        if (e->stop && *e->stop && ev.t > t_last) {
            /* A time boundary: everything before ev.t is done. */
            if (ev.t > e->time) e->time = ev.t;
            rc = AVI_INTERRUPTED;
            goto out;
        }
        if ((e->pool || (e->ranks && e->ranks->size <= AVI_SLICE_PARTS_MAX)) && kd == 0.0 && ev.t > t_last) {
            /* A new time: all of its events on the threads, when they are many. */
            if (run_slice(e, ev.t, counts, &rc)) {
                if (rc != AVI_OK) goto out;
                t_last = ev.t;
                continue;
            }
        }
        if (e->ranks && (rc = serial_records(e, ev)) != AVI_OK) goto out;
        t_last = ev.t;
        unsigned kind = ev.id >> AVI_ID_KIND_SHIFT;
        uint32_t i = ev.id & AVI_ID_INDEX_MASK;
        const uint32_t *v;
        int n;
        double dt;
        if (ev.n & AVI_GROUP_CURSOR) {
            if (e->refine && avi_refine_dissolving(e->refine, avi_group_of(groups, ev.id))) {
                if ((rc = dissolve_group(e)) != AVI_OK) goto out;
                continue;
            }
            /* A group tick: members in id order from the cursor, while no
             * other entry at this time comes first. */
            avi_clock_group *gr = &groups->group[avi_group_of(groups, ev.id)];
            const uint32_t *mem = groups->member + gr->first;
            uint32_t step = ev.n & ~AVI_GROUP_CURSOR;
            double half = step == 0 ? 0.5 : 1.0;
            uint32_t pos = gr->pos, end = gr->count;
            /* Members up to the next entry at this time, if it comes first. */
            const avi_event *next = avi_tl_peek(q, 1);
            if (next && next->t == ev.t && next->id < mem[end - 1]) {
                if (!cm) {
                    if (e->ranks && (rc = sync_records(e)) != AVI_OK) goto out; /* the other groups' records */
                    if ((rc = run_tie(e, counts)) != AVI_OK) goto out;
                    continue;
                }
                end = members_before(mem, pos, end, next->id);
            }
            if (prefetch) {
                for (uint32_t a = pos; a < pos + PREFETCH_MEMBERS && a < end; a++) prefetch_record(m, mem[a]);
                prefetch_group(m, groups, avi_tl_peek(q, 1), 0, PREFETCH_VERTICES, drift_all_max);
                prefetch_group(m, groups, avi_tl_peek(q, 2), PREFETCH_MEMBERS, 0, drift_all_max);
            }
            if ((rc = run_members(e, gr, mem, &pos, end, ev.t, half, counts)) != AVI_OK) goto out;
            if (pos == gr->count) {
                if ((rc = next_tick(e, gr, mem, step, &ev)) != AVI_OK) goto out;
                pos = 0;
            } else {
                ev.id = mem[pos]; /* back into the queue, keyed by the next member */
                e->group_splits++;
            }
            gr->pos = pos;
            if (avi_tl_replace_top(q, ev)) {
                rc = engine_fail(e, AVI_ERR_RUN, "out of memory");
                goto out;
            }
            continue;
        }
        if (kind == AVI_KIND_CONTACT) {
            /* Off the queue first: the event may push new layers, which can
             * take the top. */
            avi_tl_pop(q, &ev);
            e->now = ev.t;
            rc = m->contact_ops->event(e->contact, e, ev, &counts[kind]);
            if (rc != AVI_OK) goto out;
            continue;
        }
        if (kind >= AVI_MODEL_KINDS) {
            rc = engine_fail(e, AVI_ERR_RUN, "unknown event kind %u", kind);
            goto out;
        }
        if (e->refine && avi_refine_owns(e->refine, ev.id)) { /* a refined clock (core/refine.h) */
            avi_tl_pop(q, &ev);
            if ((rc = refined_event(e, ev, counts)) != AVI_OK) goto out;
            continue;
        }
        if (prefetch) prefetch_ahead(m, q);
        /* First event of a clock: half impulse (staggered velocities). */
        double sum = apply_potential(m, V, kind, i, ev.t, ev.n == 0 ? 0.5 : 1.0, kd, 0, &v, &n, &dt);
        counts[kind]++;
        if (cm) avi_check_speed(cm, V, v, n, ev.t);
        if (!isfinite(sum)) {
            rc = blow_up(e, kind, i, ev.t, v, n);
            goto out;
        }
        if (++ev.n >= AVI_GROUP_CURSOR) {
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
    if (e->ranks) {
        /* Whatever ends the advance, every member leaves with the whole
         * state: observers, checkpoints and a failed run's report read it. */
        if (rc == AVI_OK || rc == AVI_INTERRUPTED) {
            int s = sync_records(e);
            if (s != AVI_OK) rc = s;
        } else {
            (void)avi_slice_sync(e);
        }
    }
    e->beat_left = beat;
    for (int k = 0; k < AVI_KIND_COUNT; k++) e->events[k] += counts[k];
    return rc;
}

int avi_engine_set_damping(avi_engine *e, double kd)
{
    if (!(kd >= 0.0) || !isfinite(kd))
        return engine_fail(e, AVI_ERR_INPUT, "damping must be >= 0 and finite (got %g)", kd);
    avi_kind undamped = avi_model_undamped_kind(e->model);
    if (kd > 0.0 && undamped != AVI_KIND_COUNT)
        return engine_fail(e, AVI_ERR_INPUT, "damping is not implemented for %s potentials (it needs the element's Hessian)",
                           avi_kind_name(undamped));
    int rc = e->stepper->set_damping ? e->stepper->set_damping(e, kd) : AVI_OK;
    if (rc == AVI_OK) e->damping = kd;
    return rc;
}

void avi_engine_sync_stats(const avi_engine *e, avi_sync_stats *out)
{
    if (e->stepper->stats) e->stepper->stats(e, out);
    else memset(out, 0, sizeof *out);
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
    /* Clocks run from t = 0: with every step longer than t_end not one
     * completes (the first events' half kicks and a drift, or nothing). */
    if (t_end > e->time && e->min_step > t_end)
        return engine_fail(e, AVI_ERR_INPUT,
                           "the time step %.6g s is longer than the run (end time %.6g s): no step would complete; "
                           "shorten the step or lengthen the run",
                           e->min_step, t_end);
    for (;;) {
        /* Between observer calls too: observers more frequent than events
         * (or a synchronous step) would otherwise never reach a check. */
        agree_stop(e);
        if (e->stop && *e->stop) return AVI_INTERRUPTED;
        if (--e->beat_left == 0) {
            e->beat_left = AVI_HEARTBEAT_PASSES;
            heartbeat(e, e->time);
        }
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
void avi_engine_set_stop_flag(avi_engine *e, volatile sig_atomic_t *flag)
{
    if (e->ranks) e->stop_asked = flag; /* e->stop stays the agreed flag */
    else e->stop = flag;
}

int avi_engine_set_threads(avi_engine *e, int threads)
{
    if (threads < 1 || threads > AVI_POOL_MAX_THREADS)
        return engine_fail(e, AVI_ERR_INPUT, "threads must be 1 to %d (got %d)", AVI_POOL_MAX_THREADS, threads);
    if (e->pool && avi_pool_threads(e->pool) == threads) return AVI_OK;
    avi_pool_destroy(e->pool);
    e->pool = NULL;
    avi_slice_free(e); /* its parts are cut for the pool */
    /* One thread needs no pool, unless chaos (AVI_CHAOS_SEED, base/pool.h)
     * asks the parallel paths to run on it. */
    const char *chaos = getenv("AVI_CHAOS_SEED");
    if (threads == 1 && !(chaos && *chaos && strcmp(chaos, "0") != 0)) return AVI_OK;
    if (!(e->pool = avi_pool_create(threads, &e->err))) return e->err.status;
    return avi_slice_prepare(e) ? engine_fail(e, AVI_ERR_RUN, "out of memory") : AVI_OK;
}

int avi_engine_threads(const avi_engine *e) { return avi_pool_threads(e->pool); }
int avi_engine_default_threads(const avi_engine *e, int cpus) { return avi_slice_default_threads(e, cpus < 1 ? 1 : cpus); }
void avi_engine_set_heartbeat(avi_engine *e, avi_heartbeat_fn fn, void *user)
{
    e->beat = fn;
    e->beat_user = user;
}
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
