/* The output stream: observations made on its worker thread from snapshots
 * are bitwise the in-process ones (also with the snapshots trimmed after
 * every frame, and on several threads), items are handled in push order whatever the thread
 * timing, and a failed item stops the stream at that item. */
#include "check_main.h"
#include "avi/avi.h"
#include "run/output_stream.h"
#include "core/model_internal.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_ITEMS 1024

typedef struct {
    size_t n;
    int kind[MAX_ITEMS];
    double time[MAX_ITEMS];
    avi_observation o[MAX_ITEMS]; /* rows */
    uint64_t state_hash[MAX_ITEMS]; /* frames: FNV-1a of positions and velocities */
    double *x, *v;
    int fail_at; /* index of the item whose handler fails; -1: none */
    int slow;    /* sleep in the handler, so that the ring fills */
} record;

typedef struct {
    avi_output_stream *stream; /* NULL: observe in process */
    record *rec;
    size_t nv;
    int trim; /* trim the stream after each frame, as a checkpoint does */
} run_ctx;

static uint64_t fnv(const void *p, size_t n, uint64_t h)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
    return h;
}

static uint64_t state_hash(const double *x, const double *v, size_t nv)
{
    return fnv(v, 3 * nv * sizeof *v, fnv(x, 3 * nv * sizeof *x, 1469598103934665603ull));
}

static int stream_fn(void *user, int kind, avi_snapshot *snap, int queued)
{
    ck_assert_int_ge(queued, 0);
    run_ctx *c = user;
    record *r = c->rec;
    if (r->slow) nanosleep(&(struct timespec){0, 300000}, NULL);
    size_t i = r->n++;
    ck_assert_uint_lt(i, MAX_ITEMS);
    r->kind[i] = kind;
    r->time[i] = avi_snapshot_time(snap);
    if (kind == 0) {
        avi_snapshot_observe(snap, &r->o[i]);
    } else {
        avi_snapshot_state(snap, r->x, r->v);
        r->state_hash[i] = state_hash(r->x, r->v, c->nv);
    }
    return (int)i == r->fail_at ? 7 : 0;
}

static int observer(const avi_engine *e, double t, int kind, run_ctx *c)
{
    if (c->stream) {
        int rc = avi_output_stream_push(c->stream, e, t, kind);
        return rc || !c->trim || kind != 1 ? rc : avi_output_stream_trim(c->stream);
    }
    record *r = c->rec;
    size_t i = r->n++;
    ck_assert_uint_lt(i, MAX_ITEMS);
    r->kind[i] = kind;
    r->time[i] = t;
    if (kind == 0) {
        avi_engine_observe(e, t, &r->o[i]);
    } else {
        avi_engine_state_at(e, t, r->x, r->v);
        r->state_hash[i] = state_hash(r->x, r->v, c->nv);
    }
    return 0;
}

static int row_obs(const avi_engine *e, double t, void *user) { return observer(e, t, 0, user); }
static int frame_obs(const avi_engine *e, double t, void *user) { return observer(e, t, 1, user); }

/* A small sphere-plate run through the impact (contact terms in the rows).
 * mode: 0 in process, 1 threaded stream, 2 threaded with one slot and a
 * slow handler, 3 stream without a thread, 4 threaded, trimmed after every
 * frame (fresh snapshots from then on); observed on several threads
 * (avi_output_stream_set_threads): 5 two, 6 three with a chaos seed, trimmed,
 * 7 four with a slow handler (waiting snapshots observed side by side), 8
 * two without a thread. Returns avi_engine_run's status; *stream_rc gets the
 * stream's. */
#define NMODES 8
static int run(int mode, record *r, int *stream_rc)
{
    const char *sets[] = {"time.end=6e-5", "output.energy_every=1e-6", "output.frame_every=1e-5",
                          "bodies.sphere.mesh.subdivisions=2", "bodies.plate.mesh.rings=8",
                          "bodies.sphere.translate=[0,0,0.1265]"};
    avi_scene s;
    avi_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", sets, 6, &s, &err), 0);
    avi_model *m = NULL;
    avi_scene_bodies info;
    ck_assert_int_eq(avi_scene_build(&s, &m, &info, &err), 0);
    avi_engine *e = avi_engine_create_for_scene(&s, &info, m, &err);
    ck_assert_ptr_nonnull(e);
    run_ctx c = {NULL, r, avi_model_vertex_count(m), mode == 4 || mode == 6};
    r->x = malloc(3 * c.nv * sizeof *r->x);
    r->v = malloc(3 * c.nv * sizeof *r->v);
    if (mode == 2 || mode == 7) r->slow = 1;
    if (mode > 0) {
        c.stream = avi_output_stream_create(m, mode == 2 ? 1 : 0, mode != 3 && mode != 8, stream_fn, &c);
        ck_assert_ptr_nonnull(c.stream);
    }
    if (mode >= 5) {
        static const int threads[] = {2, 3, 4, 2};
        if (mode == 6) setenv("AVI_CHAOS_SEED", "9", 1);
        ck_assert_int_eq(avi_output_stream_set_threads(c.stream, threads[mode - 5], 1u << 0, &err), 0);
        unsetenv("AVI_CHAOS_SEED");
    }
    avi_engine_add_observer(e, s.output.energy_every, row_obs, &c);
    avi_engine_add_observer(e, s.output.frame_every, frame_obs, &c);
    int rc = avi_engine_run(e, s.end_time);
    *stream_rc = avi_output_stream_destroy(c.stream);
    free(r->x);
    free(r->v);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
    return rc;
}

START_TEST(test_stream_matches_in_process)
{
    static record ref, got;
    memset(&ref, 0, sizeof ref);
    ref.fail_at = -1;
    int src;
    ck_assert_int_eq(run(0, &ref, &src), AVI_OK);
    ck_assert_uint_ge(ref.n, 61 + 7);
    int saw_contact = 0;
    for (size_t i = 0; i < ref.n; i++) saw_contact |= ref.kind[i] == 0 && ref.o[i].active_contact_potentials > 0;
    ck_assert_msg(saw_contact, "the run should reach the impact");
    for (int mode = 1; mode <= NMODES; mode++) {
        memset(&got, 0, sizeof got);
        got.fail_at = -1;
        ck_assert_int_eq(run(mode, &got, &src), AVI_OK);
        ck_assert_int_eq(src, 0);
        ck_assert_uint_eq(got.n, ref.n);
        for (size_t i = 0; i < ref.n; i++) {
            ck_assert_int_eq(got.kind[i], ref.kind[i]);
            ck_assert(got.time[i] == ref.time[i]);
            if (ref.kind[i] == 0)
                ck_assert_msg(memcmp(&got.o[i], &ref.o[i], sizeof ref.o[i]) == 0, "mode %d: row %zu differs", mode, i);
            else
                ck_assert_msg(got.state_hash[i] == ref.state_hash[i], "mode %d: frame %zu differs", mode, i);
        }
    }
}
END_TEST

/* Item 5 fails: nothing after it is handled, the run stops with the
 * handler's status, whichever way the threads ran. */
START_TEST(test_failure_stops_at_item)
{
    static record got;
    for (int mode = 1; mode <= NMODES; mode++) {
        memset(&got, 0, sizeof got);
        got.fail_at = 5;
        int src;
        int rc = run(mode, &got, &src);
        ck_assert_int_eq(rc, 7);
        ck_assert_int_eq(src, 7);
        ck_assert_uint_eq(got.n, 6);
    }
}
END_TEST

static int noop_fn(void *user, int kind, avi_snapshot *snapshot, int queued) { return 0; }

/* A stream picking its own count keeps its snapshots within
 * AVI_OUTPUT_STREAM_BUDGET bytes: 8 for a small model, one for a model whose
 * snapshot alone exceeds the budget (100k-tet bar: 18 785 vertices). */
static int picked_slots(size_t nv)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "cloud");
    for (size_t i = 0; i < nv; i++) avi_model_add_vertex(m, b, (double[3]){(double)i, 0.0, 0.0});
    avi_output_stream *s = avi_output_stream_create(m, 0, 1, noop_fn, NULL);
    ck_assert_ptr_nonnull(s);
    int n = avi_output_stream_slots(s);
    ck_assert_int_ge(n, 1);
    ck_assert_uint_le((size_t)n * avi_output_stream_snapshot_bytes(m),
                      n == 1 ? avi_output_stream_snapshot_bytes(m) : AVI_OUTPUT_STREAM_BUDGET);
    avi_output_stream_destroy(s);
    avi_model_destroy(m);
    return n;
}

START_TEST(test_slots_bounded_by_bytes)
{
    ck_assert_int_eq(picked_slots(1000), 8);
    ck_assert_int_eq(picked_slots(18785), 1);
    ck_assert_int_eq(picked_slots(8000), 2);
}
END_TEST

/* avi_output_stream_threads_for: the observation gets the engine's threads
 * only where a row's work (0.6 + 3 / N gradients a potential) exceeds the
 * events between rows per thread; at the switch interval and either side. */
START_TEST(test_observation_threads_rule)
{
    const char *sets[] = {"bodies.sphere.mesh.subdivisions=2", "bodies.plate.mesh.rings=8"};
    avi_scene s;
    avi_error err;
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", sets, 2, &s, &err), 0);
    avi_model *m = NULL;
    avi_scene_bodies info;
    ck_assert_int_eq(avi_scene_build(&s, &m, &info, &err), 0);
    double pots, rate = avi_model_elastic_events(m, 1.0, 0.0, &pots);
    ck_assert(pots > 0.0 && rate > 0.0);
    for (long long every = 1; every <= 21; every += 20)
        for (int threads = 2; threads <= 4; threads++) {
            double at = pots * (0.6 + 3.0 / (double)every) * threads / rate; /* the switch */
            ck_assert_int_eq(avi_output_stream_threads_for(m, threads, 0.99 * at, every), threads);
            ck_assert_int_eq(avi_output_stream_threads_for(m, threads, 1.01 * at, every), 1);
            ck_assert_int_eq(avi_output_stream_threads_for(m, 1, 0.99 * at, every), 1);
        }
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

static Suite *output_stream_suite(void)
{
    Suite *s = suite_create("output_stream");
    TCase *tc = tcase_create("stream");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_stream_matches_in_process);
    tcase_add_test(tc, test_failure_stops_at_item);
    tcase_add_test(tc, test_slots_bounded_by_bytes);
    tcase_add_test(tc, test_observation_threads_rule);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(output_stream_suite)
