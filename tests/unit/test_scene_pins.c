/* Pinning a shell's rim with `pinned: {boundary: true}`. */
#include "check_main.h"
#include "avi/avi.h"
#include "core/model_internal.h"

#include <math.h>
#include <string.h>

START_TEST(test_boundary_pins_the_disk_rim)
{
    const char *sets[] = {"bodies.plate.pinned={boundary: true}", "bodies.plate.mesh.rings=6"};
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
    const char *sets[] = {"bodies.sphere.pinned={boundary: true}"};
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

static Suite *pins_suite(void)
{
    Suite *s = suite_create("scene_pins");
    TCase *tc = tcase_create("pins");
    tcase_add_test(tc, test_boundary_pins_the_disk_rim);
    tcase_add_test(tc, test_boundary_of_closed_surface_is_an_error);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(pins_suite)
