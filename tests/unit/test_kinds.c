/* The kinds' descriptors (src/potentials/<kind>.c) against their rows
 * (core/kinds.h), the per-kind fixed steps of avi_time_step, and the scene
 * keys the descriptors give. */
#include "check_main.h"
#include "avi/avi.h"
#include "core/damping.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Every listed kind has a descriptor that agrees with its row; contact has
 * none; names are distinct; a kind has a Hessian and a damping term exactly
 * when its row says damped, and a linear kind has neither. */
START_TEST(test_descriptors_match_rows)
{
    ck_assert_int_eq(AVI_MODEL_KINDS, AVI_KIND_CONTACT);
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        const avi_kind_desc *d = avi_kind_desc_of(k);
        ck_assert_ptr_nonnull(d);
        ck_assert_str_eq(d->name, avi_kind_name((avi_kind)k));
        ck_assert_int_eq(d->slots, avi_kind_slots(k));
        ck_assert_int_eq(d->vertices, avi_kind_vertices(k));
        ck_assert_uint_eq(d->record_size, avi_kind_record_size(k));
        ck_assert_uint_eq(d->flags, avi_kind_flags(k));
        ck_assert_ptr_nonnull(d->energy);
        ck_assert_ptr_nonnull(d->gradient);
        int damped = (d->flags & AVI_KIND_DAMPED) != 0;
        ck_assert_int_eq(d->hessian != NULL, damped);
        ck_assert_int_eq(d->rest_from != NULL, damped);
        if (d->flags & AVI_KIND_LINEAR) ck_assert_ptr_null(d->hessian);
        ck_assert_uint_le(d->record_size, sizeof(avi_any_record));
        for (unsigned j = 0; j < k; j++) ck_assert_str_ne(d->name, avi_kind_desc_of(j)->name);
    }
    int lanes = 0;
#define LANE(K, ...) ck_assert_int_eq(avi_kind_desc_of(K)->lanes, 1); lanes++;
    AVI_LANE_KINDS(LANE)
#undef LANE
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) lanes -= avi_kind_desc_of(k)->lanes;
    ck_assert_int_eq(lanes, 0);
    ck_assert_ptr_null(avi_kind_desc_of(AVI_KIND_CONTACT));
    ck_assert_str_eq(avi_kind_name(AVI_KIND_CONTACT), "contact");
    ck_assert_str_eq(avi_kind_name((avi_kind)AVI_KIND_COUNT), "unknown");
}
END_TEST

/* The descriptor's energy and gradient are the row's, on a spring record. */
START_TEST(test_descriptor_functions)
{
    avi_spring s = {{0, 1}, 100.0, 0.5, 0.0};
    const double x[2][3] = {{0, 0, 0}, {1, 0.5, 0}};
    double g1[2][3], g2[2][3];
    const avi_kind_desc *d = avi_kind_desc_of(AVI_KIND_SPRING);
    ck_assert(d->energy(&s, x) == avi_kind_energy(AVI_KIND_SPRING, &s, x));
    d->gradient(&s, x, g1);
    avi_kind_gradient(AVI_KIND_SPRING, &s, x, g2);
    ck_assert_int_eq(memcmp(g1, g2, sizeof g1), 0);
    /* Damping: a kind without a Hessian (gravity) is refused, H NaN. */
    avi_gravity gr = {{0}, {0, 0, -1}, 0.0};
    avi_elem el = {AVI_KIND_GRAVITY, 1, gr.v, &gr};
    double H[9];
    ck_assert_int_eq(avi_elem_hessian(&el, x, H), -1);
    ck_assert(isnan(H[0]));
    ck_assert(isnan(avi_damping_energy(&el, x, x)));
}
END_TEST

/* The per-kind fixed steps: set, read, replace, clear; bad arguments
 * refused; the list's size does not depend on the number of kinds. */
START_TEST(test_kind_fixed)
{
    avi_time_step ts = avi_default_time_step();
    for (int k = 0; k < AVI_KIND_COUNT; k++) ck_assert(avi_time_step_kind_fixed(&ts, (avi_kind)k) == 0.0);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_TET, 1e-3), 0);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_CONTACT, 2e-3), 0);
    ck_assert(avi_time_step_kind_fixed(&ts, AVI_KIND_TET) == 1e-3);
    ck_assert(avi_time_step_kind_fixed(&ts, AVI_KIND_CONTACT) == 2e-3);
    ck_assert(avi_time_step_kind_fixed(&ts, AVI_KIND_SPRING) == 0.0);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_TET, 4e-3), 0);
    ck_assert(avi_time_step_kind_fixed(&ts, AVI_KIND_TET) == 4e-3);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_TET, 0.0), 0);
    ck_assert(avi_time_step_kind_fixed(&ts, AVI_KIND_TET) == 0.0);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, (avi_kind)AVI_KIND_COUNT, 1.0), -1);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, (avi_kind)-1, 1.0), -1);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_SPRING, -1.0), -1);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_SPRING, NAN), -1);
    ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, AVI_KIND_SPRING, INFINITY), -1);
    ck_assert(avi_time_step_kind_fixed(&ts, AVI_KIND_SPRING) == 0.0);
    /* Every kind at once fits. */
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        ck_assert_int_eq(avi_time_step_set_kind_fixed(&ts, (avi_kind)k, 1e-3 * (k + 1)), 0);
    for (int k = 0; k < AVI_KIND_COUNT; k++) ck_assert(avi_time_step_kind_fixed(&ts, (avi_kind)k) == 1e-3 * (k + 1));
    /* Public structs have room for AVI_KIND_MAX kinds, not AVI_KIND_COUNT. */
    ck_assert_uint_eq(sizeof ts.kind_fixed / sizeof ts.kind_fixed[0], AVI_KIND_MAX);
    avi_observation o;
    ck_assert_uint_eq(sizeof o.events / sizeof o.events[0], AVI_KIND_MAX);
}
END_TEST

/* Entries written directly are checked when finalizing: a kind out of
 * range, a negative step, the same kind twice; the message names it. */
static void finalize_fails(const avi_time_step *ts, const char *want)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    double x0[3] = {0, 0, 0}, x1[3] = {1, 0, 0};
    avi_model_add_vertex(m, b, x0);
    avi_model_add_vertex(m, b, x1);
    avi_model_add_mass(m, 0, 1.0);
    avi_model_add_mass(m, 1, 1.0);
    avi_model_add_spring(m, 0, 1, 100.0, -1.0);
    ck_assert_int_eq(avi_model_finalize(m, ts), AVI_ERR_INPUT);
    ck_assert_msg(strstr(avi_model_error(m)->message, want), "message '%s' lacks '%s'", avi_model_error(m)->message, want);
    avi_model_destroy(m);
}

START_TEST(test_kind_fixed_checked)
{
    avi_time_step ts = avi_default_time_step();
    ts.kind_fixed[3].kind = (avi_kind)99;
    ts.kind_fixed[3].dt = 1e-3;
    finalize_fails(&ts, "kind 99 is not an avi_kind");
    ts = avi_default_time_step();
    ts.kind_fixed[0].kind = AVI_KIND_SPRING;
    ts.kind_fixed[0].dt = -1.0;
    finalize_fails(&ts, "fixed time step of kind spring must be positive");
    ts = avi_default_time_step();
    ts.kind_fixed[0].kind = AVI_KIND_HINGE;
    ts.kind_fixed[0].dt = 1e-3;
    ts.kind_fixed[5].kind = AVI_KIND_HINGE;
    ts.kind_fixed[5].dt = 2e-3;
    finalize_fails(&ts, "fixed time step of kind hinge given twice");
}
END_TEST

/* time_step.per_kind takes every kind's name (its descriptor's), midedge
 * included (its key was missing from the scene schema), and the emitted
 * scene gives it back. */
START_TEST(test_per_kind_keys)
{
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        char set[96];
        snprintf(set, sizeof set, "time_step.per_kind.%s=2.5e-4", avi_kind_name((avi_kind)k));
        const char *ov[] = {set};
        avi_scene s, t;
        avi_error e;
        int rc = avi_scene_load_builtin("bar", ov, 1, &s, &e);
        ck_assert_msg(rc == AVI_OK, "%s: %s", set, e.message);
        ck_assert(avi_time_step_kind_fixed(&s.time_step, (avi_kind)k) == 2.5e-4);
        char *text = avi_scene_emit(&s);
        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(avi_scene_load_string(text, strlen(text), "emitted.yaml", NULL, NULL, 0, &t, &e), AVI_OK);
        ck_assert(avi_time_step_kind_fixed(&t.time_step, (avi_kind)k) == 2.5e-4);
        free(text);
        avi_scene_free(&s);
        avi_scene_free(&t);
    }
}
END_TEST

static Suite *kinds_suite(void)
{
    Suite *s = suite_create("kinds");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_descriptors_match_rows);
    tcase_add_test(tc, test_descriptor_functions);
    tcase_add_test(tc, test_kind_fixed);
    tcase_add_test(tc, test_kind_fixed_checked);
    tcase_add_test(tc, test_per_kind_keys);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(kinds_suite)
