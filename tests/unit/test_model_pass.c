/* Whole-model passes on a pool (core/incidence.h): the snapshot observable
 * (every field of the observation, the synchronized velocities and the
 * represented energy), the elastic energy and gradient, and the synchronous
 * integrators' trajectories (explicit, explicit4, implicit, both Eulers,
 * DCR), bitwise equal to the serial loops for 1 (with chaos), 2, 3, 4 and 8
 * threads and several chaos seeds. */
#include "check_main.h"
#include "avi/avi.h"
#include "base/pool.h"
#include "core/engine_internal.h"
#include "core/incidence.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const int thread_counts[] = {1, 2, 3, 8, 4};
static const char *const seeds[] = {NULL, "7", "12345", "1"};
/* The sanitizer and valgrind runs (AVI_TEST_QUICK) take the first three
 * counts and two seeds. */
#define NCOUNTS (avi_test_quick() ? 3u : sizeof thread_counts / sizeof *thread_counts)
#define NSEEDS (avi_test_quick() ? 2u : sizeof seeds / sizeof *seeds)

/* Seeds 7 and 12345 also cut the passes into blocks of 37 and 1000 (of
 * AVI_PASS_BLOCK on large models). */
static size_t block_for(const char *seed)
{
    if (seed && strcmp(seed, "7") == 0) return 37;
    if (seed && strcmp(seed, "12345") == 0) return 1000;
    return AVI_PASS_BLOCK;
}

/* A pool of `threads` with chaos seed `seed` (NULL: none), read at creation. */
static avi_pool *pool_with(int threads, const char *seed)
{
    if (seed) setenv("AVI_CHAOS_SEED", seed, 1);
    else unsetenv("AVI_CHAOS_SEED");
    avi_error err;
    avi_pool *p = avi_pool_create(threads, &err);
    unsetenv("AVI_CHAOS_SEED");
    ck_assert_msg(p != NULL, "%s", err.message);
    return p;
}

typedef struct {
    avi_scene scene;
    avi_scene_bodies info;
    avi_model *model;
    avi_engine *engine;
} built;

static void build(built *b, const char *name, const char *const *sets, size_t nsets)
{
    avi_error err;
    ck_assert_msg(avi_scene_load_builtin(name, sets, nsets, &b->scene, &err) == 0, "%s", err.message);
    ck_assert_msg(avi_scene_build(&b->scene, &b->model, &b->info, &err) == 0, "%s", err.message);
    b->engine = avi_engine_create_for_scene(&b->scene, &b->info, b->model, &err);
    ck_assert_msg(b->engine != NULL, "%s", err.message);
}

static void unbuild(built *b)
{
    avi_engine_destroy(b->engine);
    avi_model_destroy(b->model);
    avi_scene_bodies_free(&b->info);
    avi_scene_free(&b->scene);
}

/* The engine at time t, observed serially and on every pool: the same bits. */
static void check_observation(const avi_engine *e, double t)
{
    const avi_model *m = avi_engine_model(e);
    size_t nrec = avi_model_record_count(m), nv = avi_model_vertex_count(m);
    /* the serial reference */
    avi_snapshot *s = avi_snapshot_create(m);
    ck_assert_ptr_nonnull(s);
    avi_engine_snapshot(e, t, s);
    avi_observation ref, got;
    avi_snapshot_observe(s, &ref);
    double *x0 = malloc(nv * 3 * sizeof *x0), *v0 = malloc(nv * 3 * sizeof *v0);
    double *x1 = malloc(nv * 3 * sizeof *x1), *v1 = malloc(nv * 3 * sizeof *v1);
    avi_snapshot_state(s, x0, v0);
    double (*xt)[3] = malloc(nrec * sizeof *xt), (*dv0)[3] = malloc(nrec * sizeof *dv0),
           (*dv1)[3] = malloc(nrec * sizeof *dv1), (*g0)[3] = calloc(nrec, sizeof *g0), (*g1)[3] = calloc(nrec, sizeof *g1);
    avi_engine_state_at(e, t, &xt[0][0], NULL);
    for (size_t i = nv; i < nrec; i++)
        for (int c = 0; c < 3; c++) xt[i][c] = m->vert[i].x[c] + (t - m->vert[i].tau) * m->vert[i].v[c];
    avi_owed o = {0};
    double de0, de1;
    ck_assert_int_eq(avi_owed_take(e, t, (const double (*)[3])xt, &o, dv0), 0);
    avi_owed_apply(m, NULL, m->vert, &o, t, (const double (*)[3])xt, dv0, &de0);
    double el0 = avi_model_elastic_energy(m, (const double (*)[3])xt);
    for (size_t i = 0; i < nrec; i++) g0[i][0] = g1[i][0] = 1.0 / (double)(i + 3); /* a start value kept */
    avi_model_accumulate_gradient(m, g0);
    int checked = 0;
    for (size_t a = 0; a < NCOUNTS; a++)
        for (size_t k = 0; k < NSEEDS; k++) {
            int n = thread_counts[a];
            if (n == 1 && !seeds[k]) continue; /* the serial loops themselves */
            avi_pool *p = pool_with(n, seeds[k]);
            avi_model_pass *mp = avi_model_pass_create(m, p);
            ck_assert_ptr_nonnull(mp);
            mp->block = block_for(seeds[k]);
            avi_snapshot *sp = avi_snapshot_create(m);
            avi_snapshot_set_pass(sp, mp);
            avi_engine_snapshot(e, t, sp);
            avi_snapshot_observe(sp, &got);
            ck_assert_msg(memcmp(&ref, &got, sizeof ref) == 0,
                          "observation at t = %g, %d threads, seed %s: E %.17g / %.17g, K %.17g / %.17g", t, n,
                          seeds[k] ? seeds[k] : "none", ref.total, got.total, ref.kinetic, got.kinetic);
            avi_snapshot_observe(sp, &got); /* a second observation reuses the corrections */
            ck_assert(memcmp(&ref, &got, sizeof ref) == 0);
            avi_snapshot_state(sp, x1, v1);
            ck_assert(memcmp(x0, x1, nv * 3 * sizeof *x0) == 0 && memcmp(v0, v1, nv * 3 * sizeof *v0) == 0);
            avi_snapshot_destroy(sp);
            /* the synchronized velocities and the represented energy */
            ck_assert_int_eq(avi_owed_take(e, t, (const double (*)[3])xt, &o, dv1), 0);
            avi_owed_apply(m, mp, m->vert, &o, t, (const double (*)[3])xt, dv1, &de1);
            ck_assert_msg(memcmp(dv0, dv1, nrec * sizeof *dv0) == 0, "dv, %d threads, seed %s", n,
                          seeds[k] ? seeds[k] : "none");
            ck_assert(memcmp(&de0, &de1, sizeof de0) == 0);
            double el1 = avi_model_elastic_energy_pass(m, mp, (const double (*)[3])xt);
            ck_assert(memcmp(&el0, &el1, sizeof el0) == 0);
            for (size_t i = 0; i < nrec; i++) {
                g1[i][0] = 1.0 / (double)(i + 3);
                g1[i][1] = g1[i][2] = 0.0;
            }
            avi_model_accumulate_gradient_pass(m, mp, g1);
            ck_assert_msg(memcmp(g0, g1, nrec * sizeof *g0) == 0, "gradient, %d threads", n);
            avi_model_pass_destroy(mp);
            avi_pool_destroy(p);
            checked++;
        }
    ck_assert_int_eq(checked, (int)(NCOUNTS * NSEEDS - 1));
    avi_owed_free(&o);
    avi_snapshot_destroy(s);
    free(x0);
    free(v0);
    free(x1);
    free(v1);
    free(xt);
    free(dv0);
    free(dv1);
    free(g0);
    free(g1);
}

/* Observations along a run, at times off the clocks' grid (the owed
 * velocities matter), the first at 0. */
static void observe_run(const char *name, const char *const *sets, size_t nsets, const double *times, int ntimes)
{
    built b;
    build(&b, name, sets, nsets);
    check_observation(b.engine, 0.0);
    for (int i = 0; i < ntimes; i++) {
        ck_assert_int_eq(avi_engine_advance(b.engine, times[i]), 0);
        check_observation(b.engine, times[i]);
    }
    unbuild(&b);
}

/* Mid-edge shells, contact (the sphere reaches the plate at 50 us), gravity
 * added; coarser than the default so that the test stays short. */
START_TEST(test_sphere_plate_observation)
{
    const char *sets[] = {"bodies.0.mesh.subdivisions=2", "bodies.1.mesh.rings=8", "gravity=[0, 0, -9.81]",
                          "time.end=1e-4"};
    const double times[] = {2.1e-5, 5.37e-5, 7.01e-5};
    observe_run("sphere-plate", sets, 4, times, 3);
}
END_TEST

START_TEST(test_bar_observation)
{
    const char *sets[] = {"time.end=1e-3", "gravity=[0, 0, -9.81]"};
    const double times[] = {1.3e-4, 4.1e-4};
    observe_run("bar", sets, 2, times, 2);
    /* a synchronous integrator's one clock for every potential */
    const char *sync_sets[] = {"time.end=1e-3", "gravity=[0, 0, -9.81]", "integrator.type=sync-explicit"};
    observe_run("bar", sync_sets, 3, times, 2);
}
END_TEST

START_TEST(test_spring_chain_observation)
{
    const double times[] = {0.0123, 0.05};
    observe_run("spring-chain", NULL, 0, times, 2);
}
END_TEST

/* A synchronous integrator's run on n threads (chaos seed or NULL) to t:
 * its vertex records. */
static avi_vertex *sync_run(const char *name, const char *const *sets, size_t nsets, int n, const char *seed, double t,
                            size_t *nrec)
{
    built b;
    build(&b, name, sets, nsets);
    if (seed) setenv("AVI_CHAOS_SEED", seed, 1);
    ck_assert_int_eq(avi_engine_set_threads(b.engine, n), 0);
    unsetenv("AVI_CHAOS_SEED");
    ck_assert_msg(avi_engine_advance(b.engine, t) == 0, "%s", avi_engine_error(b.engine)->message);
    *nrec = avi_model_record_count(b.model);
    avi_vertex *V = malloc(*nrec * sizeof *V);
    memcpy(V, b.model->vert, *nrec * sizeof *V);
    unbuild(&b);
    return V;
}

static void check_sync(const char *name, const char *const *sets, size_t nsets, double t)
{
    size_t n0, n1;
    avi_vertex *ref = sync_run(name, sets, nsets, 1, NULL, t, &n0);
    for (size_t a = 0; a < NCOUNTS; a++)
        for (size_t k = 0; k < NSEEDS; k++) {
            if (thread_counts[a] == 1 && !seeds[k]) continue;
            avi_vertex *got = sync_run(name, sets, nsets, thread_counts[a], seeds[k], t, &n1);
            ck_assert_uint_eq(n0, n1);
            ck_assert_msg(memcmp(ref, got, n0 * sizeof *ref) == 0, "%s: %d threads, seed %s", name, thread_counts[a],
                          seeds[k] ? seeds[k] : "none");
            free(got);
        }
    free(ref);
}

START_TEST(test_sync_explicit_trajectory)
{
    const char *sets[] = {"integrator.type=sync-explicit", "time.end=1e-3", "gravity=[0, 0, -9.81]"};
    check_sync("bar", sets, 3, 2e-4);
}
END_TEST

START_TEST(test_sync_explicit4_trajectory)
{
    const char *sets[] = {"integrator.type=sync-explicit4", "time.end=1e-2"};
    check_sync("bar", sets, 2, 2e-3);
}
END_TEST

/* Newton's energy and scaled gradient (sync-implicit), and the explicit
 * and implicit Euler updates, on tets under gravity. */
START_TEST(test_sync_implicit_trajectory)
{
    /* steps of 0.5 ms: a few of them */
    const char *sets[] = {"integrator.type=sync-implicit", "time.end=1e-2", "gravity=[0, 0, -9.81]"};
    check_sync("bar", sets, 3, 2e-3);
}
END_TEST

START_TEST(test_euler_trajectories)
{
    const char *sets[] = {"integrator.type=implicit-euler", "time.end=1e-2", "gravity=[0, 0, -9.81]"};
    check_sync("bar", sets, 3, 2e-3);
    sets[0] = "integrator.type=explicit-euler";
    check_sync("bar", sets, 3, 2e-3);
}
END_TEST

/* The decomposition contact response: shells, contact, the explicit step. */
START_TEST(test_dcr_trajectory)
{
    const char *sets[] = {"integrator.type=dcr", "bodies.0.mesh.subdivisions=2", "bodies.1.mesh.rings=8",
                          "time.end=1e-4"};
    check_sync("sphere-plate", sets, 4, 6e-5);
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("model_pass");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_sphere_plate_observation);
    tcase_add_test(tc, test_bar_observation);
    tcase_add_test(tc, test_spring_chain_observation);
    tcase_add_test(tc, test_sync_explicit_trajectory);
    tcase_add_test(tc, test_sync_explicit4_trajectory);
    tcase_add_test(tc, test_sync_implicit_trajectory);
    tcase_add_test(tc, test_euler_trajectories);
    tcase_add_test(tc, test_dcr_trajectory);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
