/* The public API's error convention (include/avi/avi.h) and its settings
 * initialisers: a failing call returns a positive avi_status with the
 * message where the convention says, never -1 (except index calls); every
 * avi_default_* gives the documented values, and the contact default agrees
 * with a scene's contact section. */
#include "check_main.h"
#include "avi/avi.h"

#include <math.h>
#include <string.h>

static avi_model *two_vertices(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    const double x0[3] = {0, 0, 0}, x1[3] = {1, 0, 0};
    ck_assert_int_eq(avi_model_add_vertex(m, b, x0), 0);
    ck_assert_int_eq(avi_model_add_vertex(m, b, x1), 1);
    return m;
}

/* Model calls: AVI_ERR_INPUT with the message on the model; index calls -1. */
START_TEST(test_model_calls_return_a_status)
{
    avi_model *m = two_vertices();
    ck_assert_int_eq(avi_model_add_mass(m, 0, -1.0), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(avi_model_error(m)->message, "mass"));
    ck_assert_int_eq(avi_model_add_spring(m, 0, 7, 1.0, 1.0), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_model_error(m)->status, AVI_ERR_INPUT);
    ck_assert_int_eq(avi_model_pin(m, 9), AVI_ERR_INPUT);
    avi_contact_settings bad = avi_default_contact_settings(-1.0);
    ck_assert_int_eq(avi_model_set_contact(m, &bad), AVI_ERR_INPUT);
    avi_time_step r = avi_default_time_step();
    r.safety = -1.0;
    ck_assert_int_eq(avi_model_finalize(m, &r), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(avi_model_error(m)->message, "safety"));
    ck_assert_int_eq(avi_model_add_vertex(m, 5, (const double[3]){0, 0, 0}), -1);
    ck_assert_int_eq(avi_model_error(m)->status, AVI_ERR_INPUT);
    ck_assert_int_eq(avi_scene_builtin_find("no such scene"), -1);
    avi_model_destroy(m);
}
END_TEST

/* Writer and sidecar calls: statuses too. */
START_TEST(test_output_calls_return_a_status)
{
    avi_observation o;
    memset(&o, 0, sizeof o);
    ck_assert_int_eq(avi_h5_write_observation(NULL, 0, &o), AVI_ERR_INPUT);
    ck_assert_int_eq(avi_h5_flush(NULL), AVI_ERR_INPUT);
    avi_error err;
    ck_assert_int_eq(avi_h5_close(NULL, "done", &err), AVI_ERR_INPUT);
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    char out[8];
    ck_assert_int_eq(avi_xdmf_default_path("run.h5", out, sizeof out), AVI_OK);
    ck_assert_str_eq(out, "run.xmf");
    ck_assert_int_eq(avi_xdmf_default_path("a-long-name.h5", out, sizeof out), AVI_ERR_INPUT);
    avi_h5_layout L = avi_default_h5_layout();
    ck_assert_ptr_null(avi_h5_create(&L, &err)); /* no path */
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
}
END_TEST

START_TEST(test_defaults_are_the_documented_values)
{
    avi_time_step r = avi_default_time_step();
    ck_assert_int_eq(r.rule, AVI_DT_STABILITY);
    ck_assert(r.safety == 0.25 && r.delta == 0.1 && r.neighbor_ratio == 1.0 && r.levels_per_octave == 16);
    avi_contact_settings c = avi_default_contact_settings(2e-3);
    ck_assert(c.thickness == 2e-3 && c.inner_thickness == 2e-3 / 5.0 && c.stiffness == 0.0 && c.max_layers == 0 &&
              c.friction == 0.0);
    avi_sync_options s = avi_default_sync_options();
    ck_assert_int_eq(s.type, AVI_INTEGRATOR_SYNC_EXPLICIT);
    ck_assert(s.h == 0.0 && s.alpha == 0.5 && s.tolerance == 1e-10 && s.max_iterations == 50 && s.damping == 0.0);
    ck_assert(s.linear_solver == AVI_SOLVER_CHOLMOD && s.constraints == NULL && s.constraint_count == 0);
    avi_run_options o = avi_default_run_options();
    ck_assert(o.progress == AVI_PROGRESS_NONE && o.stop == NULL && o.scene_source == NULL && o.command_line == NULL);
    avi_h5_layout L = avi_default_h5_layout();
    ck_assert(L.path == NULL && L.xdmf_path == NULL && L.bodies == NULL && L.vertex_count == 0);
}
END_TEST

/* A scene's contact section without inner_thickness, stiffness or layers
 * resolves to avi_default_contact_settings(thickness), and a model takes it. */
START_TEST(test_contact_default_matches_the_scene)
{
    const char *text = "time: {end: 1}\n"
                       "materials: {film: {model: shell, youngs: 1e8, poisson: 0.3, density: 1000, thickness: 1e-4}}\n"
                       "bodies:\n"
                       "  - {name: sheet, mesh: {generator: rect, lx: 0.1, ly: 0.1, nx: 4, ny: 4}, material: film}\n"
                       "contact: {thickness: 3e-3}\n";
    avi_scene sc;
    avi_error err;
    ck_assert_msg(avi_scene_load_string(text, strlen(text), "t", ".", NULL, 0, &sc, &err) == AVI_OK, "%s", err.message);
    avi_contact_settings c = avi_default_contact_settings(3e-3);
    ck_assert(sc.contact.enabled && sc.contact.thickness == c.thickness);
    ck_assert(sc.contact.inner_thickness == c.inner_thickness);
    ck_assert(sc.contact.stiffness == c.stiffness && sc.contact.layers == c.max_layers);
    avi_scene_free(&sc);
    avi_model *m = two_vertices();
    ck_assert_int_eq(avi_model_set_contact(m, &c), AVI_OK);
    avi_model_destroy(m);
}
END_TEST

/* Model calls refuse what would later be misreported: a mass sum that
 * overflows (finalize would call it "no mass"), a NULL body name, enum
 * values outside their enums. */
START_TEST(test_model_refuses_bad_values_where_given)
{
    avi_model *m = two_vertices();
    ck_assert_int_eq(avi_model_add_mass(m, 1, 1e308), AVI_OK);
    ck_assert_int_eq(avi_model_add_mass(m, 1, 1e308), AVI_ERR_INPUT);
    const char *msg = avi_model_error(m)->message;
    ck_assert_msg(strstr(msg, "vertex 1") && strstr(msg, "overflows"), "%s", msg);
    ck_assert(avi_model_vertex_mass(m, 1) == 1e308); /* the sum was not kept */

    ck_assert_int_eq(avi_model_add_body(m, NULL), -1);
    ck_assert_int_eq(avi_model_error(m)->status, AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(avi_model_error(m)->message, "name"));
    ck_assert_int_eq(avi_model_body_count(m), 1);

    const double x2[3] = {0, 1, 0};
    ck_assert_int_eq(avi_model_add_vertex(m, 0, x2), 2);
    const uint32_t tri[1][3] = {{0, 1, 2}};
    const avi_shell_material steel = {2e11, 0.3, 7850, 1e-3};
    ck_assert_int_eq(avi_model_add_shell_mesh(m, tri, 1, &steel, (avi_bending)99, 0), AVI_ERR_INPUT);
    ck_assert_msg(strstr(avi_model_error(m)->message, "bending model 99"), "%s", avi_model_error(m)->message);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_MEMBRANE), 0); /* nothing half added */
    ck_assert_int_eq(avi_model_add_shell_mesh(m, tri, 1, &steel, AVI_BENDING_NONE, 0), AVI_OK);

    avi_time_step r = avi_default_time_step();
    r.rule = (avi_dt_rule)42;
    ck_assert_int_eq(avi_model_finalize(m, &r), AVI_ERR_INPUT);
    ck_assert_msg(strstr(avi_model_error(m)->message, "time_step.rule 42"), "%s", avi_model_error(m)->message);
    r.rule = AVI_DT_STABILITY;
    ck_assert_int_eq(avi_model_finalize(m, &r), AVI_OK);
    avi_model_destroy(m);
}
END_TEST

/* A ball too small for doubles names its radius, not n or the grading. */
START_TEST(test_tet_ball_names_the_radius)
{
    avi_mesh mesh;
    avi_error err;
    ck_assert_int_eq(avi_mesh_tet_ball_shells(1e-300, 4, 0.0, &mesh, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "radius 1e-300") && !strstr(err.message, "choose another n"), "%s", err.message);
    ck_assert_int_eq(avi_mesh_tet_ball_graded(1e-300, 4, 0.5, &mesh, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "radius 1e-300"), "%s", err.message);
    ck_assert_int_eq(avi_mesh_tet_ball_shells(1e300, 4, 0.0, &mesh, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "radius 1e+300"), "%s", err.message);
    /* Small but representable balls still generate. */
    ck_assert_int_eq(avi_mesh_tet_ball_shells(1e-6, 8, 0.5, &mesh, &err), AVI_OK);
    avi_mesh_free(&mesh);
}
END_TEST

/* A hand-built scene with enum values outside their enums is refused by
 * avi_scene_build naming the field. */
START_TEST(test_scene_build_refuses_bad_enums)
{
    const char *text = "time: {end: 1}\n"
                       "materials: {film: {model: shell, youngs: 1e8, poisson: 0.3, density: 1000, thickness: 1e-4}}\n"
                       "bodies:\n"
                       "  - {name: sheet, mesh: {generator: rect, lx: 0.1, ly: 0.1, nx: 4, ny: 4}, material: film}\n";
    static const char *const want[] = {"materials.film.bending: 99", "materials.film.model: 42",
                                       "bodies.0.mesh: source 77", "bodies.0.pinned: 9"};
    for (int k = 0; k < 4; k++) {
        avi_scene sc;
        avi_error err;
        ck_assert_int_eq(avi_scene_load_string(text, strlen(text), "t", ".", NULL, 0, &sc, &err), AVI_OK);
        if (k == 0) sc.materials[0].bending = 99;
        if (k == 1) sc.materials[0].model = (avi_material_model)42;
        if (k == 2) sc.bodies[0].mesh.source = (avi_mesh_source)77;
        if (k == 3) sc.bodies[0].pin = (avi_pin_kind)9;
        avi_model *m = NULL;
        ck_assert_int_eq(avi_scene_build(&sc, &m, NULL, &err), AVI_ERR_INPUT);
        ck_assert_msg(strstr(err.message, want[k]), "%s lacks %s", err.message, want[k]);
        ck_assert_ptr_null(m);
        avi_scene_free(&sc);
    }
}
END_TEST

static Suite *conventions_suite(void)
{
    Suite *s = suite_create("api_conventions");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_model_calls_return_a_status);
    tcase_add_test(tc, test_output_calls_return_a_status);
    tcase_add_test(tc, test_defaults_are_the_documented_values);
    tcase_add_test(tc, test_contact_default_matches_the_scene);
    tcase_add_test(tc, test_model_refuses_bad_values_where_given);
    tcase_add_test(tc, test_tet_ball_names_the_radius);
    tcase_add_test(tc, test_scene_build_refuses_bad_enums);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(conventions_suite)
