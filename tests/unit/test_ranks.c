/* Ranks (issue 31) without MPI: N members of one simulation in one
 * process, each an engine of its own on a thread of its own, joined by
 * in-process collectives (a barrier and shared pointers) in place of
 * avi-mpi's MPI calls. After every advance each member must hold the
 * serial engine's records bit for bit: the slices' exchange (heads, kicks
 * to their records' holders), the dirty lists, the fetches before serial
 * events and the sync at the end of an advance all take part; with
 * contact and the speed cap lowered, slices are undone on every member
 * alike. Runs under ThreadSanitizer too (make test-tsan). */
#include "scene_run.h"
#include "core/time_slice.h"

#include <pthread.h>
#include <stdio.h>

enum { MEMBERS_MAX = 4 };

typedef struct {
    int n;
    pthread_barrier_t bar;
    const void *send[MEMBERS_MAX];
    const size_t *counts[MEMBERS_MAX];
    int flag[MEMBERS_MAX];
} world;

typedef struct {
    world *w;
    int rank;
} member_ctx;

static int fake_allgather(void *ctx, const void *send, void *recv, const size_t *counts)
{
    member_ctx *c = ctx;
    world *w = c->w;
    w->send[c->rank] = send;
    pthread_barrier_wait(&w->bar);
    size_t off = 0;
    for (int r = 0; r < w->n; r++) {
        memcpy((char *)recv + off, w->send[r], counts[r]);
        off += counts[r];
    }
    pthread_barrier_wait(&w->bar); /* every sender's buffer read */
    return 0;
}

static int fake_alltoallv(void *ctx, const void *send, const size_t *send_counts, void *recv, const size_t *recv_counts)
{
    member_ctx *c = ctx;
    world *w = c->w;
    w->send[c->rank] = send;
    w->counts[c->rank] = send_counts;
    pthread_barrier_wait(&w->bar);
    size_t off = 0;
    for (int q = 0; q < w->n; q++) {
        size_t at = 0; /* q's block for this member */
        for (int s = 0; s < c->rank; s++) at += w->counts[q][s];
        if (recv_counts[q] != w->counts[q][c->rank]) return -1;
        memcpy((char *)recv + off, (const char *)w->send[q] + at, recv_counts[q]);
        off += recv_counts[q];
    }
    pthread_barrier_wait(&w->bar);
    return 0;
}

static int fake_any(void *ctx, int flag)
{
    member_ctx *c = ctx;
    world *w = c->w;
    w->flag[c->rank] = flag;
    pthread_barrier_wait(&w->bar);
    int any = 0;
    for (int r = 0; r < w->n; r++) any |= w->flag[r] != 0;
    pthread_barrier_wait(&w->bar);
    return any;
}

/* One member: its engine advanced to each of stops[0..nstops), with the
 * contact speed cap set to 0 before each when `cap0`. */
typedef struct {
    scene_run r;
    member_ctx ctx;
    avi_ranks ranks;
    const double *stops;
    int nstops, cap0, rc;
} member;

static void *member_main(void *arg)
{
    member *m = arg;
    m->rc = AVI_OK;
    for (int s = 0; s < m->nstops && m->rc == AVI_OK; s++) {
        if (m->cap0) contact_clock(m->r.e)->vcap2 = 0.0;
        m->rc = avi_engine_advance(m->r.e, m->stops[s]);
    }
    return NULL;
}

/* `scene` on n members of `threads` threads each against the serial
 * engine, advanced to each stop (the cap lowered before each with cap0).
 * Returns the slices member 0 undid. */
static uint64_t run_members(const char *scene, const char *const *ov, size_t nov, int n, int threads,
                            const double *stops, int nstops, int cap0)
{
    char ctx[128];
    snprintf(ctx, sizeof ctx, "%s on %d members x %d threads", scene, n, threads);
    scene_run ref;
    scene_run_open(&ref, scene, ov, nov, 0, NULL);
    for (int s = 0; s < nstops; s++) {
        if (cap0) contact_clock(ref.e)->vcap2 = 0.0;
        ck_assert_int_eq(avi_engine_advance(ref.e, stops[s]), AVI_OK);
    }
    world w = {.n = n};
    ck_assert_int_eq(pthread_barrier_init(&w.bar, NULL, (unsigned)n), 0);
    member mem[MEMBERS_MAX];
    for (int r = 0; r < n; r++) { /* built here: scene_run_open sets the environment */
        member *m = &mem[r];
        scene_run_open(&m->r, scene, ov, nov, threads > 1 ? threads : 0, NULL);
        m->ctx = (member_ctx){&w, r};
        m->ranks = (avi_ranks){r, n, &m->ctx, fake_allgather, fake_any, fake_alltoallv};
        m->r.e->ranks = &m->ranks; /* as avi_engine_join_ranks */
        m->r.e->stop = &m->r.e->agreed;
        avi_slice_free(m->r.e); /* cut at the first slice, for the ranks */
        m->stops = stops;
        m->nstops = nstops;
        m->cap0 = cap0;
    }
    pthread_t tid[MEMBERS_MAX];
    for (int r = 0; r < n; r++) ck_assert_int_eq(pthread_create(&tid[r], NULL, member_main, &mem[r]), 0);
    for (int r = 0; r < n; r++) pthread_join(tid[r], NULL);
    uint64_t slices, events, seam, undone = avi_slice_undone(mem[0].r.e);
    avi_slice_stats(mem[0].r.e, &slices, &events, &seam);
    for (int r = 0; r < n; r++) {
        ck_assert_msg(mem[r].rc == AVI_OK, "%s: member %d: %s", ctx, r, avi_engine_error(mem[r].r.e)->message);
        scene_run_same(&ref, &mem[r].r, ctx);
        ck_assert_uint_eq(avi_slice_undone(mem[r].r.e), undone);
    }
    ck_assert_msg(slices > 0, "%s: no slice ran on the members", ctx);
    for (int r = 0; r < n; r++) scene_run_close(&mem[r].r);
    scene_run_close(&ref);
    pthread_barrier_destroy(&w.bar);
    return undone;
}

/* Tets: nearly every event in slices, small groups ticking serially
 * between them (fetches), rows every 0.05 s (syncs). */
START_TEST(test_bar)
{
    static const double stops[] = {0.05, 0.1};
    if (!avi_test_quick()) run_members("bar", NULL, 0, 3, 1, stops, 2, 0);
    run_members("bar", NULL, 0, 2, 2, stops, 2, 0);
}
END_TEST

/* Shells and contact: slices between contact events and manager runs. */
START_TEST(test_sphere_plate)
{
    static const char *const ov[] = {"time.end=1e-4"};
    static const double stops[] = {3e-5, 6e-5};
    run_members("sphere-plate", ov, 1, 2, 1, stops, 2, 0);
    if (!avi_test_quick()) run_members("sphere-plate", ov, 1, 4, 1, stops, 2, 0);
}
END_TEST

/* The speed cap set to 0 before each short advance (200; 50 quick): the
 * first kick past it in a slice undoes the slice on every member (the
 * heads' flags, or the agreed check over the seam), and the serial loop
 * runs it. */
START_TEST(test_undone_slices)
{
    static const char *const ov[] = {"time.end=1e-4"};
    enum { STEPS = 200 };
    const int steps = avi_test_quick() ? STEPS / 4 : STEPS;
    double stops[STEPS + 1];
    stops[0] = 2e-5;
    for (int k = 1; k <= steps; k++) stops[k] = 2e-5 + k * 1e-8;
    uint64_t undone = run_members("sphere-plate", ov, 1, 2, 1, stops, steps + 1, 1);
    ck_assert_msg(undone >= 3, "only %llu slices were undone", (unsigned long long)undone);
}
END_TEST

static Suite *ranks_suite(void)
{
    Suite *s = suite_create("ranks");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_bar);
    tcase_add_test(tc, test_sphere_plate);
    tcase_add_test(tc, test_undone_slices);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(ranks_suite)
