/* Pinned potentials: a potential whose vertices are all pinned changes
 * nothing, so the engine does not schedule it (no queue entry, no clock
 * group member), while observations still count its energy. */
#include "check_main.h"
#include "avi/avi.h"
#include "core/engine_internal.h"

#include <math.h>
#include <string.h>

static const avi_shell_material steel = {2.0e11, 0.3, 7850.0, 0.0035};

/* A 1 % stretched square of two triangles and their hinge, all four
 * vertices pinned, when `square` is set; and a free triangle, apart from
 * it, set moving. */
static avi_model *pinned_model(int square)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double sq[4][3] = {{0, 0, 0}, {0.1, 0, 0}, {0.1, 0.1, 0}, {0, 0.1, 0.01}};
    const double tri[3][3] = {{0.3, 0, 0}, {0.4, 0, 0}, {0.3, 0.1, 0}};
    uint32_t first = 0;
    if (square) {
        for (int i = 0; i < 4; i++) avi_model_add_vertex(m, b, sq[i]);
        ck_assert_int_eq(avi_model_add_membrane(m, 0, 1, 2, &steel), 0);
        ck_assert_int_eq(avi_model_add_membrane(m, 0, 2, 3, &steel), 0);
        ck_assert_int_eq(avi_model_add_hinge(m, 0, 2, 1, 3, &steel), 0);
        for (uint32_t i = 0; i < 4; i++) {
            double x[3] = {1.01 * sq[i][0], 1.01 * sq[i][1], sq[i][2]};
            ck_assert_int_eq(avi_model_set_state(m, i, x, NULL), 0);
            ck_assert_int_eq(avi_model_pin(m, i), 0);
        }
        first = 4;
    }
    for (int i = 0; i < 3; i++) avi_model_add_vertex(m, b, tri[i]);
    ck_assert_int_eq(avi_model_add_membrane(m, first, first + 1, first + 2, &steel), 0);
    for (uint32_t i = 0; i < 3; i++) {
        double v[3] = {0.3 * sin(1.0 + i), 0.2 * cos(3.0 * i), 0.1 * sin(7.0 * i)};
        ck_assert_int_eq(avi_model_set_state(m, first + i, NULL, v), 0);
    }
    avi_time_step r = avi_default_time_step();
    r.levels_per_octave = 0;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

START_TEST(test_pinned_potentials_are_not_scheduled)
{
    avi_model *m = pinned_model(1), *alone = pinned_model(0);
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err), *ea = avi_engine_create(alone, &err);
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_nonnull(ea);
    ck_assert(avi_model_potential_pinned(m, AVI_KIND_MEMBRANE, 0));
    ck_assert(avi_model_potential_pinned(m, AVI_KIND_HINGE, 0));
    ck_assert(!avi_model_potential_pinned(m, AVI_KIND_MEMBRANE, 2));
    /* One clock: the free triangle's (the square's membranes would share
     * its step, the largest, and group with it). */
    ck_assert_uint_eq(avi_engine_queue_size(e), 1);
    ck_assert_uint_eq(e->groups.ngroup, 0);
    avi_observation o0, o1, a0, a1;
    avi_engine_observe(e, 0.0, &o0);
    avi_engine_observe(ea, 0.0, &a0);
    double t = 200.0 * avi_model_time_step(m, AVI_KIND_MEMBRANE, 2);
    ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
    ck_assert_int_eq(avi_engine_advance(ea, t), AVI_OK);
    avi_engine_observe(e, t, &o1);
    avi_engine_observe(ea, t, &a1);
    /* The free triangle alone makes every event, the same ones. */
    ck_assert_uint_eq(o1.events[AVI_KIND_HINGE], 0);
    ck_assert_uint_eq(o1.events[AVI_KIND_MEMBRANE], a1.events[AVI_KIND_MEMBRANE]);
    ck_assert_uint_ge(o1.events[AVI_KIND_MEMBRANE], 200);
    double xa[3][3], va[3][3], x[7][3], v[7][3];
    avi_engine_state_at(ea, t, &xa[0][0], &va[0][0]);
    avi_engine_state_at(e, t, &x[0][0], &v[0][0]);
    ck_assert(memcmp(x[4], xa[0], sizeof xa) == 0 && memcmp(v[4], va[0], sizeof va) == 0);
    /* The square's energy is still observed, and constant: the free
     * triangle's energy plus what it had at t = 0. */
    double square_energy = o0.elastic - a0.elastic;
    ck_assert_double_gt(square_energy, 1.0);
    ck_assert_double_gt(a1.elastic, 0.0);
    ck_assert_double_eq_tol(o1.elastic, square_energy + a1.elastic, 1e-12 * o1.elastic);
    avi_engine_destroy(e);
    avi_engine_destroy(ea);
    avi_model_destroy(m);
    avi_model_destroy(alone);
}
END_TEST

/* A checkpoint's queue from a build that scheduled pinned potentials (a
 * clock for each) loads: those clocks are dropped. A missing clock of a
 * scheduled potential, or a second one, is still refused. */
START_TEST(test_load_drops_pinned_clocks)
{
    avi_model *m = pinned_model(1);
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    ck_assert_ptr_nonnull(e);
    avi_event all[4] = {{0.0, avi_event_id(AVI_KIND_MEMBRANE, 0), 0},
                        {0.0, avi_event_id(AVI_KIND_MEMBRANE, 1), 0},
                        {0.0, avi_event_id(AVI_KIND_MEMBRANE, 2), 0},
                        {0.0, avi_event_id(AVI_KIND_HINGE, 0), 0}};
    memset(&err, 0, sizeof err);
    ck_assert_int_eq(avi_engine_queue_load(e, all, 4, 1, &err), AVI_OK);
    ck_assert_uint_eq(avi_engine_queue_size(e), 1);
    avi_event dup[3] = {all[2], all[0], all[2]};
    ck_assert_int_eq(avi_engine_queue_load(e, dup, 3, 1, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "second clock"), "%s", err.message);
    ck_assert_int_eq(avi_engine_queue_load(e, all, 2, 1, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "membrane 2 has no clock"), "%s", err.message);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

static Suite *pinned_suite(void)
{
    Suite *s = suite_create("pinned");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_pinned_potentials_are_not_scheduled);
    tcase_add_test(tc, test_load_drops_pinned_clocks);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(pinned_suite)
