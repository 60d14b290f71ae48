/* Time slices on the engine's threads (core/time_slice.h; their
 * predecessor ran group ticks, hence the name): bar, a jittered bar (many
 * groups whose ticks meet: slices of several entries), sheet
 * (membranes and mid-edge or hinge bending, gravity) and spring-chain run
 * on 1, 2, 3, 4 and 8 threads, with and without chaos seeds, leave every
 * vertex record (auxiliary ones included), the event counts and the time
 * bitwise as the engine without a pool; so do runs with -0.0 coordinates
 * among the positions and a scene_run stopped on 3 threads and continued
 * on 2. */
#include "scene_run.h"
#include "core/time_slice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* scene_run_open, then groups in the drift-all form whatever the L2 cache
 * says (valgrind's differs), so that the slices' drift-all path runs everywhere. */
static void run_open(scene_run *r, const char *scene, const char *const *ov, size_t nov, int threads, const char *seed)
{
    scene_run_open(r, scene, ov, nov, seed || threads > 1 ? threads : 0, seed);
    r->e->drift_all_max = UINT32_MAX;
}

/* Whether any slice ran on the pool; and the busiest parts' events
 * between a slice's share (events / threads) and all of its events. */
static int ran_parallel(const scene_run *r)
{
    uint64_t slices, events, seam, busiest = avi_slice_busiest(r->e);
    avi_slice_stats(r->e, &slices, &events, &seam);
    int parts = avi_pool_chaos(r->e->pool) ? 8 : avi_engine_threads(r->e); /* chaos: 1 to 8 parts */
    ck_assert_msg(busiest <= events && busiest * (uint64_t)parts >= events,
                  "busiest parts' events %llu out of [%llu / %d, %llu]", (unsigned long long)busiest,
                  (unsigned long long)events, parts, (unsigned long long)events);
    return slices > 0;
}

/* Advances a and b to each of `stops` and compares after each. */
static void compare(const char *scene, const char *const *ov, size_t nov, const double *stops, int nstops,
                    int want_parallel)
{
    static const int threads[] = {1, 2, 3, 4, 8};
    static const char *const seeds[] = {NULL, "3", "1009"};
    scene_run ref;
    run_open(&ref, scene, ov, nov, 1, NULL);
    for (int s = 0; s < nstops; s++) ck_assert_int_eq(avi_engine_advance(ref.e, stops[s]), AVI_OK);
    for (size_t ti = 0; ti < sizeof threads / sizeof *threads; ti++)
        for (size_t si = 0; si < sizeof seeds / sizeof *seeds; si++) {
            if (threads[ti] == 1 && !seeds[si]) continue; /* the reference itself */
            /* Quick (sanitizers, valgrind): 2 threads without a seed, 3 with seed 3. */
            if (getenv("AVI_TEST_QUICK") && !((threads[ti] == 2 && si == 0) || (threads[ti] == 3 && si == 1))) continue;
            scene_run r;
            run_open(&r, scene, ov, nov, threads[ti], seeds[si]);
            for (int s = 0; s < nstops; s++) ck_assert_int_eq(avi_engine_advance(r.e, stops[s]), AVI_OK);
            char ctx[128];
            snprintf(ctx, sizeof ctx, "%s, %d threads, seed %s", scene, threads[ti], seeds[si] ? seeds[si] : "none");
            scene_run_same(&ref, &r, ctx);
            if (want_parallel) ck_assert_msg(ran_parallel(&r), "%s: no slice ran in parallel", ctx);
            scene_run_close(&r);
        }
    scene_run_close(&ref);
}

/* A bar of 6 x 12 x 12 x 24 tets in few shapes: large groups. */
static const char *const bar_ov[] = {"bodies.bar.mesh.nx=24", "bodies.bar.mesh.ny=6", "bodies.bar.mesh.nz=6"};

START_TEST(test_bar)
{
    static const double stops[] = {0.02, 0.05};
    compare("bar", bar_ov, 3, stops, 2, 1);
}
END_TEST

/* Steps on levels an octave apart tick together: slices merge the members
 * of several groups. */
static const char *const jitter_ov[] = {"bodies.bar.mesh.nx=24", "bodies.bar.mesh.ny=6", "bodies.bar.mesh.nz=6",
                                        "bodies.bar.mesh.jitter=0.002", "time_step.levels_per_octave=4"};

START_TEST(test_jittered_bar)
{
    static const double stops[] = {0.01, 0.03};
    compare("bar", jitter_ov, 5, stops, 2, 1);
    /* The slices did run, with several entries. */
    scene_run r;
    run_open(&r, "bar", jitter_ov, 5, 2, NULL);
    uint64_t slices, events, seam;
    ck_assert_int_eq(avi_engine_advance(r.e, 0.03), AVI_OK);
    avi_slice_stats(r.e, &slices, &events, &seam);
    ck_assert_uint_gt(slices, 10);
    ck_assert_uint_gt(seam, 0);
    ck_assert_uint_gt(events, avi_engine_events_total(r.e) / 2);
    scene_run_close(&r);
}
END_TEST

/* Twenty chaos seeds on 3 threads (parts 1 to 8, random cuts, random
 * hand-out and yields): the serial bits every time. */
START_TEST(test_jittered_bar_chaos)
{
    scene_run ref;
    run_open(&ref, "bar", jitter_ov, 5, 1, NULL);
    ck_assert_int_eq(avi_engine_advance(ref.e, 0.01), AVI_OK);
    int runs = getenv("AVI_TEST_QUICK") ? 2 : 20;
    for (int seed = 1; seed <= runs; seed++) {
        char s[16], ctx[64];
        snprintf(s, sizeof s, "%d", 7919 * seed);
        snprintf(ctx, sizeof ctx, "jittered bar, chaos seed %s", s);
        scene_run r;
        run_open(&r, "bar", jitter_ov, 5, 3, s);
        ck_assert_int_eq(avi_engine_advance(r.e, 0.01), AVI_OK);
        scene_run_same(&ref, &r, ctx);
        scene_run_close(&r);
    }
    scene_run_close(&ref);
}
END_TEST

/* Sphere-plate (contact: slices check every kick against the manager's
 * speed cap): with the cap lowered to 0 between advances, on the serial
 * engine and on threads alike, the first kick passes it; where that is in
 * a slice, the slice is undone and run serially, which stops at that kick
 * for the manager. The records, counts and time stay the serial ones, then
 * and after the manager has set the cap again. */
START_TEST(test_contact_slices_undone)
{
    static const char *const ov[] = {"time.end=1e-4"};
    for (int threads = 2; threads <= (getenv("AVI_TEST_QUICK") ? 2 : 3); threads++) {
        scene_run a, b; /* a serial, b on threads */
        run_open(&a, "sphere-plate", ov, 1, 1, NULL);
        run_open(&b, "sphere-plate", ov, 1, threads, NULL);
        scene_run *both[] = {&a, &b};
        for (int x = 0; x < 2; x++) ck_assert_int_eq(avi_engine_advance(both[x]->e, 2e-5), AVI_OK);
        scene_run_same(&a, &b, "sphere-plate to 2e-5");
        uint64_t slices, events, seam;
        avi_slice_stats(b.e, &slices, &events, &seam);
        ck_assert_uint_gt(slices, 0);
        double t = 2e-5;
        for (int k = 0; k < 2000 && avi_slice_undone(b.e) < 3; k++) {
            t += 1e-8;
            for (int x = 0; x < 2; x++) {
                contact_clock(both[x]->e)->vcap2 = 0.0;
                ck_assert_int_eq(avi_engine_advance(both[x]->e, t), AVI_OK);
            }
        }
        scene_run_same(&a, &b, "sphere-plate, speed cap 0");
        ck_assert_uint_ge(avi_slice_undone(b.e), 3);
        for (int x = 0; x < 2; x++) ck_assert_int_eq(avi_engine_advance(both[x]->e, t + 1e-5), AVI_OK);
        scene_run_same(&a, &b, "sphere-plate after the cap was set again");
        scene_run_close(&a);
        scene_run_close(&b);
    }
}
END_TEST

/* A drift to the time a record is already at leaves its position: -0.0
 * stays -0.0 and an infinite velocity does not make it NaN; a later time
 * moves it. */
START_TEST(test_drift_at_its_time)
{
    avi_vertex p = {.x = {-0.0, 1.0, -2.0}, .tau = 0.25, .v = {1.0, INFINITY, -0.0}, .inv_mass = 1.0};
#ifdef __AVX2__
    (void)avi_drift_record(&p, _mm256_set1_pd(0.25));
#else
    avi_drift_record(&p, 0.25);
#endif
    ck_assert(p.x[0] == 0.0 && signbit(p.x[0]));
    ck_assert(p.x[1] == 1.0);
    ck_assert(p.x[2] == -2.0 && p.tau == 0.25);
    p.v[1] = 2.0;
#ifdef __AVX2__
    (void)avi_drift_record(&p, _mm256_set1_pd(0.5));
#else
    avi_drift_record(&p, 0.5);
#endif
    ck_assert(p.x[0] == 0.25 && p.x[1] == 1.5 && p.x[2] == -2.0 && p.tau == 0.5);
}
END_TEST

START_TEST(test_sheet)
{
    static const char *const ov[] = {"time_step.safety=0.5"};
    static const double stops[] = {2e-4, 5e-4};
    compare("sheet", ov, 1, stops, 2, 1);
}
END_TEST

START_TEST(test_spring_chain)
{
    static const double stops[] = {0.5};
    compare("spring-chain", NULL, 0, stops, 1, 0);
}
END_TEST

/* Positions of -0.0 (the bar's lowest face at z = -0.0, at rest there in
 * z with v = -0.0, so that the first drift keeps them), in ticks drifted
 * all at once and member by member: a second drift of a record at t leaves
 * it (core/event_kernels.h), so both forms, serial or on threads, read
 * -0.0. */
START_TEST(test_negative_zero)
{
    for (int member_drift = 0; member_drift < 2; member_drift++) {
        scene_run a, b;
        run_open(&a, "bar", bar_ov, 3, 1, NULL);
        run_open(&b, "bar", bar_ov, 3, 2, NULL);
        size_t zeros = 0;
        for (scene_run *r = &a; r; r = r == &a ? &b : NULL) {
            if (member_drift) r->e->drift_all_max = 0;
            /* The bar moved so that its lowest face lies at z = -0.0. */
            double lo = INFINITY;
            for (size_t i = 0; i < r->m->nv; i++) lo = fmin(lo, r->m->vert[i].x[2]);
            for (size_t i = 0; i < r->m->nv; i++) {
                double *x = r->m->vert[i].x;
                if (x[2] == lo) r->m->vert[i].v[2] = -0.0; /* a drift keeps -0.0 + h (-0.0) */
                x[2] = x[2] == lo ? -0.0 : x[2] - lo;
                zeros += r == &a && x[2] == 0.0;
            }
        }
        ck_assert_uint_gt(zeros, 0);
        /* Just after t = 0 (every clock ticks there), where a second drift
         * by 0 v turns -0.0 into +0.0; the next drift (x + h v, h > 0) hides it. */
        ck_assert_int_eq(avi_engine_advance(a.e, 1e-9), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(b.e, 1e-9), AVI_OK);
        scene_run_same(&a, &b, member_drift ? "-0.0 at t = 0, member drift" : "-0.0 at t = 0");
        ck_assert_int_eq(avi_engine_advance(a.e, 0.02), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(b.e, 0.02), AVI_OK);
        scene_run_same(&a, &b, member_drift ? "-0.0, member drift" : "-0.0");
        scene_run_close(&a);
        scene_run_close(&b);
    }
}
END_TEST

/* Stopped by the stop flag on 3 threads (at a time boundary), then
 * continued on 2 (avi_engine_set_threads between advances): as the serial
 * run. Resuming a checkpoint across counts: tests/cli/test_threads.sh. */
START_TEST(test_stop_and_continue_across_counts)
{
    scene_run ref, a;
    run_open(&ref, "bar", bar_ov, 3, 1, NULL);
    ck_assert_int_eq(avi_engine_advance(ref.e, 0.05), AVI_OK);
    run_open(&a, "bar", bar_ov, 3, 3, NULL);
    volatile sig_atomic_t stop = 0;
    avi_engine_set_stop_flag(a.e, &stop);
    ck_assert_int_eq(avi_engine_advance(a.e, 0.02), AVI_OK);
    stop = 1;
    ck_assert_int_eq(avi_engine_advance(a.e, 0.05), AVI_INTERRUPTED);
    stop = 0;
    ck_assert_int_eq(avi_engine_set_threads(a.e, 2), AVI_OK);
    ck_assert_int_eq(avi_engine_advance(a.e, 0.05), AVI_OK);
    scene_run_same(&ref, &a, "stopped on 3 threads, continued on 2");
    scene_run_close(&ref);
    scene_run_close(&a);
}
END_TEST

static Suite *group_tick_suite(void)
{
    Suite *s = suite_create("group_tick");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_bar);
    tcase_add_test(tc, test_jittered_bar);
    tcase_add_test(tc, test_jittered_bar_chaos);
    tcase_add_test(tc, test_contact_slices_undone);
    tcase_add_test(tc, test_drift_at_its_time);
    tcase_add_test(tc, test_sheet);
    tcase_add_test(tc, test_spring_chain);
    tcase_add_test(tc, test_negative_zero);
    tcase_add_test(tc, test_stop_and_continue_across_counts);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(group_tick_suite)
