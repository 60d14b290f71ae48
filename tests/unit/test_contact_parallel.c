/* The contact manager on a pool (issue 30): its runs split the broad phase
 * and the exact tests across the engine's workers and make the
 * activations in candidate order, so a scene_run on 1, 2, 3, 4 or 8 threads,
 * with or without chaos seeds, leaves every vertex record, the stencil
 * table with its active layers, the potentials, the candidate lists and the
 * counters bitwise as the engine without a pool does. */
#include "scene_run.h"
#include "contact/contact_manager.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SAME(field, what) ck_assert_msg((a)->field == (b)->field, "%s: %s differs (%s)", ctx, what, #field)
#define SAME_BITS(p, q, n, what) ck_assert_msg((n) == 0 || memcmp((p), (q), (n) * sizeof *(p)) == 0, "%s: %s differ", ctx, what)

static void same_stencil(const avi_contact_stencil *a, const avi_contact_stencil *b, const char *ctx)
{
    SAME(type, "stencil");
    SAME(a, "stencil");
    SAME(b, "stencil");
    SAME_BITS(a->v, b->v, 4, "stencil vertices");
    SAME(layers, "stencil");
    SAME(deepest, "stencil");
    SAME(epoch, "stencil");
    SAME_BITS(&a->dt1, &b->dt1, 1, "stencil dt1");
}

static void same_potential(const avi_contact_potential *a, const avi_contact_potential *b, const char *ctx)
{
    SAME_BITS(a->v, b->v, 4, "potential vertices");
    SAME(type, "potential");
    SAME(alive, "potential");
    SAME(layer, "potential");
    SAME(stencil, "potential");
    SAME(prev, "potential");
    SAME_BITS(&a->eta, &b->eta, 1, "potential eta");
    SAME_BITS(&a->k, &b->k, 1, "potential k");
    SAME_BITS(&a->dt, &b->dt, 1, "potential dt");
    SAME_BITS(&a->t0, &b->t0, 1, "potential t0");
}

/* Everything a manager scene_run writes, and the vertex records and event
 * counts it steers. */
static void same_state(const avi_engine *ea, const avi_engine *eb, const char *ctx)
{
    const avi_model *ma = ea->model, *mb = eb->model;
    ck_assert_uint_eq(ma->nv, mb->nv);
    ck_assert_msg(memcmp(ma->vert, mb->vert, ma->nv * sizeof *ma->vert) == 0, "%s: vertex records differ", ctx);
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        ck_assert_msg(avi_engine_event_count(ea, (avi_kind)k) == avi_engine_event_count(eb, (avi_kind)k),
                      "%s: event counts of kind %d differ", ctx, k);
    const avi_contact_manager *a = ea->contact, *b = eb->contact;
    if (!a) return; /* DCR: no manager */
    SAME(runs, "counter");
    SAME(activations, "counter");
    SAME(retirements, "counter");
    SAME(coarse_builds, "counter");
    SAME(clock.speed_triggers, "counter");
    SAME(epoch, "counter");
    SAME(alive, "counter");
    SAME(free_slot, "free list");
    SAME_BITS(&a->dt_min, &b->dt_min, 1, "dt_min");
    SAME_BITS(&a->vcap, &b->vcap, 1, "speed cap");
    SAME_BITS(&a->clock.next_run, &b->clock.next_run, 1, "next run");
    SAME_BITS(&a->coarse_until, &b->coarse_until, 1, "list horizon");
    SAME(nst, "stencil count");
    for (size_t i = 0; i < a->nst; i++) same_stencil(&a->st[i], &b->st[i], ctx);
    SAME(npot, "potential count");
    for (size_t i = 0; i < a->npot; i++) same_potential(&a->pot[i], &b->pot[i], ctx);
    SAME(ncoarse_vf, "candidate count");
    SAME(ncoarse_ee, "candidate count");
    SAME_BITS(a->coarse_vf, b->coarse_vf, a->ncoarse_vf, "vertex-face candidates");
    SAME_BITS(a->coarse_ee, b->coarse_ee, a->ncoarse_ee, "edge-edge candidates");
    SAME_BITS(a->skip_vf, b->skip_vf, a->ncoarse_vf, "vertex-face skip times");
    SAME_BITS(a->skip_ee, b->skip_ee, a->ncoarse_ee, "edge-edge skip times");
    SAME_BITS(a->layer_sum, b->layer_sum, ma->nv, "per-vertex layer sums");
}

/* The scene to `end` in `steps` advances, without a pool and on each
 * thread count and seed, compared after every advance. */
static void check_scene(const char *scene, const char *const *ov, size_t nov, double end, int steps)
{
    static const int counts[] = {1, 2, 3, 4, 8};
    static const char *seeds[] = {NULL, "1", "29", "4099"};
    /* Sanitizer runs (quick): 2, 3 and 8 threads, two seeds. */
    size_t nseeds = avi_test_quick() ? 2 : sizeof seeds / sizeof *seeds, c0 = avi_test_quick() ? 1 : 0;
    scene_run ref;
    scene_run_open(&ref, scene, ov, nov, 0, NULL);
    ck_assert_ptr_null(avi_engine_pool(ref.e));
    scene_run par[sizeof counts / sizeof *counts * sizeof seeds / sizeof *seeds];
    size_t np = 0;
    int used[sizeof par / sizeof *par];
    for (size_t c = c0; c < sizeof counts / sizeof *counts; c++)
        for (size_t k = 0; k < nseeds; k++) {
            if (avi_test_quick() && counts[c] == 4) continue;
            used[np] = counts[c];
            scene_run_open(&par[np++], scene, ov, nov, counts[c], seeds[k]);
        }
    for (int s = 1; s <= steps; s++) {
        double t = end * s / steps;
        ck_assert_int_eq(avi_engine_advance(ref.e, t), AVI_OK);
        for (size_t i = 0; i < np; i++) {
            char ctx[128];
            snprintf(ctx, sizeof ctx, "%s, %d threads, chaos %s, t = %g", scene, used[i],
                     seeds[i % nseeds] ? seeds[i % nseeds] : "off", t);
            ck_assert_int_eq(avi_engine_advance(par[i].e, t), AVI_OK);
            same_state(ref.e, par[i].e, ctx);
        }
    }
    /* The runs made real contact work. */
    const avi_contact_manager *cm = ref.e->contact;
    for (size_t i = 0; i < np; i++) scene_run_close(&par[i]);
    if (!cm) {
        scene_run_close(&ref);
        return;
    }
    ck_assert_uint_gt(cm->runs, 10);
    ck_assert_uint_gt(cm->coarse_builds, 1);
    ck_assert_uint_gt(cm->activations, 10);
    ck_assert_uint_gt(cm->ncoarse_vf + cm->ncoarse_ee, 100);
    printf("%s: %llu manager runs, %llu list builds, %llu activations, %llu retirements, %zu candidates\n", scene,
           (unsigned long long)cm->runs, (unsigned long long)cm->coarse_builds, (unsigned long long)cm->activations,
           (unsigned long long)cm->retirements, cm->ncoarse_vf + cm->ncoarse_ee);
    scene_run_close(&ref);
}

START_TEST(test_two_spheres)
{
    const char *ov[] = {"time.end=2e-3"};
    check_scene("two-spheres", ov, 1, 2e-3, 10);
}
END_TEST

/* A small sphere-plate through its impact (mid-edge shells, refined
 * clocks). */
START_TEST(test_sphere_plate)
{
    const char *ov[] = {"bodies.0.mesh.subdivisions=2", "bodies.1.mesh.rings=6", "time.end=3e-4"};
    check_scene("sphere-plate", ov, 3, 3e-4, 10);
}
END_TEST

/* The same with friction, whose kicks read the synchronized velocities. */
START_TEST(test_sphere_plate_friction)
{
    const char *ov[] = {"bodies.0.mesh.subdivisions=2", "bodies.1.mesh.rings=6", "contact.friction=0.3",
                        "time.end=3e-4"};
    check_scene("sphere-plate", ov, 4, 3e-4, 6);
}
END_TEST

/* The DCR stage's broad phase (src/sync/dcr.c) on the same pool: the
 * vertex records after each step are the serial ones. */
START_TEST(test_dcr_sphere_plate)
{
    const char *ov[] = {"integrator.type=dcr", "bodies.0.mesh.subdivisions=2", "bodies.1.mesh.rings=6",
                        "time.end=3e-4"};
    check_scene("sphere-plate", ov, 4, 3e-4, 6);
}
END_TEST

static Suite *contact_parallel_suite(void)
{
    Suite *s = suite_create("contact_parallel");
    TCase *tc = tcase_create("contact");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_two_spheres);
    tcase_add_test(tc, test_sphere_plate);
    tcase_add_test(tc, test_sphere_plate_friction);
    tcase_add_test(tc, test_dcr_sphere_plate);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(contact_parallel_suite)
