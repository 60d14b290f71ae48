/* Pinning a shell's rim with `pinned: {boundary: clamped | simply-supported}`. */
#include "check_main.h"
#include "avi/avi.h"
#include "core/model_internal.h"

#include <math.h>
#include <string.h>

START_TEST(test_boundary_pins_the_disk_rim)
{
    const char *sets[] = {"bodies.plate.pinned={boundary: simply-supported}", "bodies.plate.mesh.rings=6"};
    avi_scene s;
    avi_error err;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", sets, 2, &s, &err), 0);
    avi_model *m;
    avi_scene_bodies info;
    ck_assert_msg(avi_scene_build(&s, &m, &info, &err) == 0, "%s", err.message);
    int plate = strcmp(info.bodies[0].name, "plate") == 0 ? 0 : 1;
    const avi_scene_body_info *b = &info.bodies[plate];
    size_t pinned = 0;
    for (uint32_t v = 0; v < b->vertex_count; v++) {
        const avi_vertex *p = &m->vert[b->first_vertex + v];
        double r = hypot(m->rest[b->first_vertex + v][0], m->rest[b->first_vertex + v][1]);
        int on_rim = fabs(r - 0.35) < 1e-9;
        ck_assert_int_eq(p->inv_mass == 0.0, on_rim);
        pinned += p->inv_mass == 0.0;
    }
    ck_assert_uint_eq(pinned, 6 * 6); /* ring i of a disk has 6 i vertices */
    /* The sphere is closed: nothing of it is pinned. */
    const avi_scene_body_info *sb = &info.bodies[1 - plate];
    for (uint32_t v = 0; v < sb->vertex_count; v++) ck_assert(m->vert[sb->first_vertex + v].inv_mass > 0.0);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_boundary_of_closed_surface_is_an_error)
{
    const char *sets[] = {"bodies.sphere.pinned={boundary: clamped}"};
    avi_scene s;
    avi_error err;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", sets, 1, &s, &err), 0);
    avi_model *m = NULL;
    ck_assert_int_eq(avi_scene_build(&s, &m, NULL, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "pinned.boundary") && strstr(err.message, "closed"), "%s", err.message);
    avi_scene_free(&s);
    const char *off[] = {"bodies.plate.pinned={boundary: false}"};
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", off, 1, &s, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "pinned.boundary"), "%s", err.message);
}
END_TEST

/* `boundary: true` read as a clamp and made a simple support: refused,
 * naming both supports; an unknown support names them too. */
START_TEST(test_boundary_true_is_refused)
{
    const char *bad[] = {"bodies.plate.pinned={boundary: true}", "bodies.plate.pinned={boundary: hinged}"};
    for (int i = 0; i < 2; i++) {
        avi_scene s;
        avi_error err;
        ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", &bad[i], 1, &s, &err), AVI_ERR_INPUT);
        ck_assert_msg(strstr(err.message, "pinned.boundary") && strstr(err.message, "clamped") &&
                          strstr(err.message, "simply-supported"),
                      "%s", err.message);
    }
}
END_TEST

/* Clamped: the rim's vertices pinned and, with bending: midedge, every rim
 * edge clamped (a frozen ghost record, no rotation DOF); simply supported:
 * no edge clamped, every edge a DOF. Clamping a hinge shell is refused. */
START_TEST(test_clamped_and_simply_supported_rim_edges)
{
    for (int clamp = 0; clamp < 2; clamp++) {
        const char *sets[] = {clamp ? "bodies.plate.pinned={boundary: clamped}"
                                    : "bodies.plate.pinned={boundary: simply-supported}",
                              "bodies.plate.mesh.rings=6"};
        avi_scene s;
        avi_error err;
        ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", sets, 2, &s, &err), 0);
        avi_model *m;
        ck_assert_msg(avi_scene_build(&s, &m, NULL, &err) == 0, "%s", err.message);
        size_t clamped = 0, dofs = 0, rim_dofs = 0;
        for (size_t i = 0; i < m->nmidedge; i++)
            for (int k = 0; k < 3; k++) {
                const avi_midedge *p = &m->midedges[i];
                clamped += p->mode[k] == AVI_MIDEDGE_CLAMPED;
                dofs += p->sign[k] != 0;
                rim_dofs += p->sign[k] != 0 && p->mode[k] == AVI_MIDEDGE_FREE &&
                            m->vert[p->v[(k + 1) % 3]].inv_mass == 0.0 && m->vert[p->v[(k + 2) % 3]].inv_mass == 0.0;
            }
        ck_assert_uint_eq(clamped, clamp ? 36 : 0); /* 6 rings: 36 rim edges */
        ck_assert_uint_eq(rim_dofs, clamp ? 0 : 36);
        /* interior DOFs are counted by both triangles, rim ones once; plus one ghost per clamped edge */
        ck_assert_uint_eq(m->naux, (dofs + rim_dofs) / 2 + clamped);
        avi_model_destroy(m);
        avi_scene_free(&s);
    }
    const char *hinge[] = {"bodies.plate.pinned={boundary: clamped}", "materials.steel.bending=hinge"};
    avi_scene s;
    avi_error err;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", hinge, 2, &s, &err), 0);
    avi_model *m = NULL;
    ck_assert_int_eq(avi_scene_build(&s, &m, NULL, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "pinned.boundary") && strstr(err.message, "simply-supported"), "%s", err.message);
    avi_scene_free(&s);
}
END_TEST

static Suite *pins_suite(void)
{
    Suite *s = suite_create("scene_pins");
    TCase *tc = tcase_create("pins");
    tcase_add_test(tc, test_boundary_pins_the_disk_rim);
    tcase_add_test(tc, test_boundary_of_closed_surface_is_an_error);
    tcase_add_test(tc, test_boundary_true_is_refused);
    tcase_add_test(tc, test_clamped_and_simply_supported_rim_edges);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(pins_suite)
