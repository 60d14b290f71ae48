/* Synchronized velocities of single vertices (core/vertex_sync.h, used by
 * the friction work) against the observable's synchronization of every
 * vertex (avi_engine_owed_velocity, velocity_sync.c): a free chain of
 * unequal masses and springs under gravity, exact steps (one clock per
 * potential, several steps), observed between ticks and exactly at a tick
 * that has run. The observable adds amplitude terms, (u h)^2 / 2 of H v,
 * a fraction ~ h omega / 4 of the owed impulse: safety 0.01 keeps that
 * under 1 %; a clock taken at the wrong phase is off by up to all of it. */
#include "check_main.h"
#include "avi/avi.h"
#include "core/engine_internal.h"
#include "core/vertex_sync.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NV 4

static avi_model *chain(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "chain");
    const double mass[NV] = {1.0, 4.0, 0.5, 2.0};
    for (int i = 0; i < NV; i++) {
        const double x[3] = {1.1 * i, 0.05 * i * i, 0.0}, v[3] = {0.3 * i, -0.2, 0.1 * (i - 1)};
        ck_assert_int_eq(avi_model_add_vertex(m, b, x), i);
        ck_assert_int_eq(avi_model_set_state(m, (uint32_t)i, x, v), 0);
        ck_assert_int_eq(avi_model_add_mass(m, (uint32_t)i, mass[i]), 0);
    }
    for (int i = 0; i + 1 < NV; i++)
        ck_assert_int_eq(avi_model_add_spring(m, (uint32_t)i, (uint32_t)i + 1, 10.0 + 5.0 * i, 1.0), 0);
    const double g[3] = {0.0, 0.0, -9.81};
    avi_model_set_gravity(m, g);
    avi_time_step r = avi_default_time_step();
    r.safety = 0.01;
    r.levels_per_octave = 0;
    r.neighbor_ratio = 0.0;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

/* Compares the two at t, after the engine has run every event before
 * `until` (t itself, or just past it: the ticks at t have run). */
static void compare(avi_engine *e, avi_vertex_clocks *c, double t, double until)
{
    ck_assert_int_eq(avi_engine_advance(e, until), AVI_OK);
    const avi_model *m = e->model;
    size_t nr = avi_model_record_count(m);
    double (*xt)[3] = malloc(nr * sizeof *xt), (*full)[3] = malloc(nr * sizeof *full), de;
    for (size_t i = 0; i < nr; i++)
        for (int k = 0; k < 3; k++) xt[i][k] = m->vert[i].x[k] + (t - m->vert[i].tau) * m->vert[i].v[k];
    ck_assert_int_eq(avi_engine_owed_velocity(e, t, (const double (*)[3])xt, full, &de), 0);
    const uint32_t v[NV] = {2, 0, 3, 1}; /* any order */
    double dv[NV][3], most = 0.0;
    avi_engine_vertex_owed(e, c, t, v, NV, dv);
    for (int a = 0; a < NV; a++) most = fmax(most, v3_norm(full[v[a]]));
    ck_assert_double_gt(most, 0.0);
    for (int a = 0; a < NV; a++) {
        double d[3];
        v3_sub(d, dv[a], full[v[a]]);
        ck_assert_msg(v3_norm(d) <= 0.01 * most, "t = %.17g, vertex %u: owed (%g %g %g), observable's (%g %g %g)", t,
                      v[a], dv[a][0], dv[a][1], dv[a][2], full[v[a]][0], full[v[a]][1], full[v[a]][2]);
    }
    free(xt);
    free(full);
}

typedef struct {
    avi_model *m;
    avi_engine *e;
    avi_vertex_clocks c;
} rig;

static void rig_init(rig *r)
{
    r->m = chain();
    avi_error err;
    r->e = avi_engine_create(r->m, &err);
    ck_assert_msg(r->e != NULL, "%s", err.message);
    ck_assert_int_eq(avi_vertex_clocks_build(&r->c, r->m, AVI_KIND_CONTACT), 0);
}

static void rig_free(rig *r)
{
    avi_vertex_clocks_free(&r->c);
    avi_engine_destroy(r->e);
    avi_model_destroy(r->m);
}

START_TEST(test_matches_the_observable)
{
    rig r;
    rig_init(&r);
    /* The steps differ (one per potential): between ticks everywhere. */
    double lo, hi;
    avi_model_time_step_range(r.m, AVI_KIND_SPRING, &lo, &hi);
    ck_assert_double_lt(lo, 0.99 * hi);
    for (int k = 1; k <= 40; k++) {
        double t = 0.137 * hi * k;
        compare(r.e, &r.c, t, t);
    }
    /* At a tick of spring 1 that has run. */
    double h = avi_model_time_step(r.m, AVI_KIND_SPRING, 1), t = (double)200 * h;
    compare(r.e, &r.c, t, nextafter(t, INFINITY));
    rig_free(&r);
}
END_TEST

/* Nothing owed at t = 0: no clock has ticked. */
START_TEST(test_nothing_owed)
{
    rig r;
    rig_init(&r);
    const uint32_t v[2] = {0, 3};
    double dv[2][3];
    avi_engine_vertex_owed(r.e, &r.c, 0.0, v, 2, dv);
    for (int a = 0; a < 2; a++) ck_assert(dv[a][0] == 0.0 && dv[a][1] == 0.0 && dv[a][2] == 0.0);
    rig_free(&r);
}
END_TEST

/* The owed-impulse cache (avi_vertex_clocks_keep): within a quarter of a
 * clock's step the gradient first taken there is reused (so dv differs
 * from a fresh one, by a small fraction), the next quarter takes it afresh
 * (bitwise the fresh one), and it still matches the observable. */
START_TEST(test_cache_per_quarter_step)
{
    rig r;
    rig_init(&r);
    avi_vertex_clocks kept;
    ck_assert_int_eq(avi_vertex_clocks_build(&kept, r.m, AVI_KIND_CONTACT), 0);
    ck_assert_int_eq(avi_vertex_clocks_keep(&kept, r.m, AVI_KIND_CONTACT), 0);
    /* Vertex 0: spring 0 and gravity (a constant gradient). */
    const uint32_t v[1] = {0};
    double h = avi_model_time_step(r.m, AVI_KIND_SPRING, 0), t1 = 200.30 * h, t2 = 200.45 * h, t3 = 200.55 * h;
    double dvc[1][3], dvf[1][3], d[3];
    ck_assert_int_eq(avi_engine_advance(r.e, t1), AVI_OK);
    avi_engine_vertex_owed(r.e, &kept, t1, v, 1, dvc);
    avi_engine_vertex_owed(r.e, &r.c, t1, v, 1, dvf);
    ck_assert(memcmp(dvc, dvf, sizeof dvc) == 0);
    ck_assert_int_eq(avi_engine_advance(r.e, t2), AVI_OK);
    avi_engine_vertex_owed(r.e, &kept, t2, v, 1, dvc);
    avi_engine_vertex_owed(r.e, &r.c, t2, v, 1, dvf);
    v3_sub(d, dvc[0], dvf[0]);
    ck_assert_msg(v3_norm(d) > 0.0, "the kept gradient was not reused");
    ck_assert_msg(v3_norm(d) <= 0.01 * v3_norm(dvf[0]), "reused: %g of %g", v3_norm(d), v3_norm(dvf[0]));
    ck_assert_int_eq(avi_engine_advance(r.e, t3), AVI_OK);
    avi_engine_vertex_owed(r.e, &kept, t3, v, 1, dvc);
    avi_engine_vertex_owed(r.e, &r.c, t3, v, 1, dvf);
    ck_assert_msg(memcmp(dvc, dvf, sizeof dvc) == 0, "the next quarter did not take the gradient afresh");
    /* Still the observable's, between ticks of every clock. */
    double lo, hi;
    avi_model_time_step_range(r.m, AVI_KIND_SPRING, &lo, &hi);
    for (int k = 1; k <= 20; k++) {
        double t = t3 + 0.137 * hi * k;
        compare(r.e, &kept, t, t);
    }
    avi_vertex_clocks_free(&kept);
    rig_free(&r);
}
END_TEST

static Suite *vertex_sync_suite(void)
{
    Suite *s = suite_create("vertex_sync");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_matches_the_observable);
    tcase_add_test(tc, test_nothing_owed);
    tcase_add_test(tc, test_cache_per_quarter_step);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(vertex_sync_suite)
