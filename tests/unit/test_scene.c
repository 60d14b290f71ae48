/* Scene loading: built-ins, defaults, resolved-YAML round trip, --set
 * overrides and the corpus of malformed scenes in tests/data/scenes. */
#include "avi/scene.h"
#include "check_main.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CORPUS "tests/data/scenes/"

static void load_ok(const char *text, const char *const *ov, size_t nov, avi_scene *s)
{
    avi_error e;
    int rc = avi_scene_load_string(text, strlen(text), "test.yaml", NULL, ov, nov, s, &e);
    ck_assert_msg(rc == AVI_OK, "load failed: %s", e.message);
}

/* Loads and expects AVI_ERR_INPUT with every one of the given substrings. */
static void load_fails(const char *text, const char *const *ov, size_t nov, const char *want1, const char *want2)
{
    avi_scene s;
    avi_error e;
    int rc = avi_scene_load_string(text, strlen(text), "test.yaml", NULL, ov, nov, &s, &e);
    ck_assert_int_eq(rc, AVI_ERR_INPUT);
    ck_assert_int_eq(e.status, AVI_ERR_INPUT);
    ck_assert_msg(strstr(e.message, want1), "'%s' lacks '%s'", e.message, want1);
    if (want2) ck_assert_msg(strstr(e.message, want2), "'%s' lacks '%s'", e.message, want2);
    ck_assert_ptr_null(s.bodies);
    avi_scene_free(&s);
}

static const char *minimal = "time: {end: 2.0}\n"
                             "materials:\n"
                             "  m: {model: membrane, youngs: 1.0e6, poisson: 0.25, density: 10, thickness: 0.01}\n"
                             "bodies:\n"
                             "  - mesh: {generator: disk, radius: 1, rings: 2}\n"
                             "    material: m\n";

/* Everything optional given, to exercise the emitter. */
static const char *rich =
    "name: rich\n"
    "description: \"every key, with \\\"quotes\\\" and a tab\\there\"\n"
    "time: {end: 1.5e-3}\n"
    "integrator: {type: sync-implicit, alpha: 0.25, tolerance: 1.0e-8}\n"
    "time_step: {rule: cfl, delta: 0.2, per_kind: {spring: 1.0e-7, gravity: 3.0e-7}, max_events: 2.5e12}\n"
    "materials:\n"
    "  steel: &steel {model: shell, youngs: 2.0e11, poisson: 0.3, density: 7850, thickness: 0.0035}\n"
    "  net: {model: spring, stiffness: 1.0e3, density: 0.01}\n"
    "  rubber: {model: neo-hookean, youngs: 1.0e6, poisson: 0.45, density: 1100}\n"
    "  \"odd name\": *steel\n"
    "bodies:\n"
    "  - name: cloth\n"
    "    mesh: {generator: rect, lx: 1, ly: 0.5, nx: 4, ny: 2, jitter: 0.01, seed: 7}\n"
    "    material: odd name\n"
    "    translate: [0.1, -0.2, 0.3]\n"
    "    velocity: [1, 2, 3]\n"
    "    initial: {scale: 1.01}\n"
    "    pinned: {box: [[-0.01, -0.01, -1], [0.01, 0.51, 1]]}\n"
    "    time_step: 2.5e-7\n"
    "  - name: net\n"
    "    mesh: {generator: icosphere, radius: 0.3, subdivisions: 2, reorder: true}\n"
    "    material: net\n"
    "    pinned: {indices: [0, 5, 7]}\n"
    "  - name: block\n"
    "    mesh: {generator: tet_box, lx: 1, ly: 1, lz: 1, nx: 2, ny: 2, nz: 2}\n"
    "    material: rubber\n"
    "    time_step: {fixed: 1.0e-6}\n"
    "  - name: chain\n"
    "    material: net\n"
    "    particles:\n"
    "      - {x: [0, 0, 0], pinned: true}\n"
    "      - {x: [0.5, 0, 0], v: [0, 1, 0], mass: 2}\n"
    "      - {x: [1, 0, 0], mass: 3, pinned: false}\n"
    "    springs:\n"
    "      - {a: 0, b: 1}\n"
    "      - {a: 1, b: 2, stiffness: 50, rest: 0.4}\n"
    "contact: {enabled: true, thickness: 1.0e-3, inner_thickness: 1.0e-4, stiffness: 1.0e9, layers: 3,\n"
    "          friction: 0.4}\n"
    "gravity: [0, 0, -9.81]\n"
    "damping: 0.01\n"
    "output: {file: out/rich.h5, energy_every: 1.0e-6, frame_every: 1.0e-5, checkpoint_every: 5.0e-4,\n"
    "         max_bytes: 3.0e9, max_checkpoints: 4}\n"
    "parallel: {threads: 6}\n";

/* ----------------------------------------------------------- equality -- */

static int str_eq(const char *a, const char *b) { return (!a && !b) || (a && b && strcmp(a, b) == 0); }

static void assert_scene_eq(const avi_scene *a, const avi_scene *b)
{
    ck_assert(str_eq(a->name, b->name));
    ck_assert(str_eq(a->description, b->description));
    ck_assert(a->end_time == b->end_time);
    ck_assert_int_eq(a->integrator.type, b->integrator.type);
    ck_assert(a->integrator.alpha == b->integrator.alpha);
    ck_assert(a->integrator.tolerance == b->integrator.tolerance);
    ck_assert_int_eq(a->time_step.rule, b->time_step.rule);
    ck_assert(a->time_step.safety == b->time_step.safety);
    ck_assert(a->time_step.delta == b->time_step.delta);
    ck_assert(a->time_step.fixed == b->time_step.fixed);
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        ck_assert(avi_time_step_kind_fixed(&a->time_step, (avi_kind)k) == avi_time_step_kind_fixed(&b->time_step, (avi_kind)k));
    ck_assert_uint_eq(a->material_count, b->material_count);
    for (size_t i = 0; i < a->material_count; i++) {
        const avi_scene_material *p = &a->materials[i], *q = &b->materials[i];
        ck_assert(str_eq(p->name, q->name));
        ck_assert_int_eq(p->model, q->model);
        ck_assert(p->youngs == q->youngs && p->poisson == q->poisson && p->density == q->density);
        ck_assert(p->thickness == q->thickness && p->stiffness == q->stiffness);
    }
    ck_assert_uint_eq(a->body_count, b->body_count);
    for (size_t i = 0; i < a->body_count; i++) {
        const avi_scene_body *p = &a->bodies[i], *q = &b->bodies[i];
        ck_assert(str_eq(p->name, q->name));
        ck_assert_int_eq(p->mesh.source, q->mesh.source);
        ck_assert(p->mesh.radius == q->mesh.radius);
        ck_assert_int_eq(p->mesh.subdivisions, q->mesh.subdivisions);
        ck_assert_int_eq(p->mesh.rings, q->mesh.rings);
        ck_assert(p->mesh.lx == q->mesh.lx && p->mesh.ly == q->mesh.ly && p->mesh.lz == q->mesh.lz);
        ck_assert(p->mesh.nx == q->mesh.nx && p->mesh.ny == q->mesh.ny && p->mesh.nz == q->mesh.nz);
        ck_assert(str_eq(p->mesh.file, q->mesh.file));
        ck_assert(p->mesh.jitter == q->mesh.jitter && p->mesh.seed == q->mesh.seed);
        ck_assert_int_eq(p->mesh.reorder, q->mesh.reorder);
        ck_assert_uint_eq(p->particle_count, q->particle_count);
        for (size_t k = 0; k < p->particle_count; k++)
            ck_assert(memcmp(&p->particles[k], &q->particles[k], sizeof p->particles[k]) == 0);
        ck_assert_uint_eq(p->spring_count, q->spring_count);
        for (size_t k = 0; k < p->spring_count; k++)
            ck_assert(memcmp(&p->springs[k], &q->springs[k], sizeof p->springs[k]) == 0);
        ck_assert_int_eq(p->material, q->material);
        ck_assert(memcmp(p->translate, q->translate, sizeof p->translate) == 0);
        ck_assert(memcmp(p->velocity, q->velocity, sizeof p->velocity) == 0);
        ck_assert(p->scale == q->scale);
        ck_assert_int_eq(p->pin, q->pin);
        ck_assert(memcmp(p->pin_box, q->pin_box, sizeof p->pin_box) == 0);
        ck_assert_uint_eq(p->pin_count, q->pin_count);
        for (size_t k = 0; k < p->pin_count; k++) ck_assert_uint_eq(p->pin_indices[k], q->pin_indices[k]);
        ck_assert(p->time_step == q->time_step);
    }
    ck_assert_int_eq(a->contact.enabled, b->contact.enabled);
    ck_assert(a->contact.thickness == b->contact.thickness);
    ck_assert(a->contact.inner_thickness == b->contact.inner_thickness);
    ck_assert(a->contact.stiffness == b->contact.stiffness);
    ck_assert_int_eq(a->contact.layers, b->contact.layers);
    ck_assert(a->contact.friction == b->contact.friction);
    ck_assert(memcmp(a->gravity, b->gravity, sizeof a->gravity) == 0);
    ck_assert(a->damping == b->damping);
    ck_assert(str_eq(a->output.file, b->output.file));
    ck_assert(a->output.energy_every == b->output.energy_every);
    ck_assert(a->output.frame_every == b->output.frame_every);
    ck_assert(a->output.checkpoint_every == b->output.checkpoint_every);
    ck_assert(a->output.max_bytes == b->output.max_bytes);
    ck_assert(a->output.max_checkpoints == b->output.max_checkpoints);
    ck_assert(a->max_events == b->max_events);
    ck_assert_int_eq(a->threads, b->threads);
}

/* load -> emit -> load gives the same scene, and emitting is a fixed point. */
static void round_trip(const avi_scene *s)
{
    char *y1 = avi_scene_emit(s);
    ck_assert_ptr_nonnull(y1);
    avi_scene t;
    avi_error e;
    int rc = avi_scene_load_string(y1, strlen(y1), "resolved.yaml", NULL, NULL, 0, &t, &e);
    ck_assert_msg(rc == AVI_OK, "resolved YAML does not load: %s\n%s", e.message, y1);
    assert_scene_eq(s, &t);
    char *y2 = avi_scene_emit(&t);
    ck_assert_str_eq(y1, y2);
    free(y1);
    free(y2);
    avi_scene_free(&t);
}

/* ----------------------------------------------------------- built-ins -- */

START_TEST(test_builtins_listed)
{
    const char *want[] = {"bar", "sheet", "sphere-plate", "spring-chain"};
    ck_assert_uint_ge(avi_scene_builtin_count(), 4);
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) ck_assert_int_ge(avi_scene_builtin_find(want[i]), 0);
    ck_assert_int_eq(avi_scene_builtin_find("no-such-scene"), -1);
    for (size_t i = 0; i < avi_scene_builtin_count(); i++) {
        const char *d = avi_scene_builtin_description(i);
        ck_assert_ptr_nonnull(d);
        ck_assert_msg(strlen(d) > 10, "%s has no description", avi_scene_builtin_name(i));
        ck_assert_ptr_null(strchr(d, '\n'));
        if (i) ck_assert_int_lt(strcmp(avi_scene_builtin_name(i - 1), avi_scene_builtin_name(i)), 0);
    }
    size_t n = avi_scene_builtin_count();
    ck_assert_ptr_null(avi_scene_builtin_name(n));
    ck_assert_ptr_null(avi_scene_builtin_description(n));
    ck_assert_ptr_null(avi_scene_builtin_text(n));
}
END_TEST

START_TEST(test_builtins_load)
{
    for (size_t i = 0; i < avi_scene_builtin_count(); i++) {
        avi_scene s;
        avi_error e;
        int rc = avi_scene_load_builtin(avi_scene_builtin_name(i), NULL, 0, &s, &e);
        ck_assert_msg(rc == AVI_OK, "%s: %s", avi_scene_builtin_name(i), e.message);
        ck_assert_str_eq(s.name, avi_scene_builtin_name(i));
        ck_assert_str_eq(s.description, avi_scene_builtin_description(i));
        ck_assert_str_eq(s.text, avi_scene_builtin_text(i));
        round_trip(&s);
        avi_scene_free(&s);
    }
}
END_TEST

/* The heap scene of bindings: empty when created, loadable, and destroyed
 * with its contents, after a failed load too (ASan checks the frees). */
START_TEST(test_scene_create_destroy)
{
    avi_scene *s = avi_scene_create();
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_null(s->name);
    ck_assert_uint_eq(s->body_count, 0);
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("bar", NULL, 0, s, &e), AVI_OK);
    ck_assert_str_eq(s->name, "bar");
    avi_scene_destroy(s);
    s = avi_scene_create();
    const char *bad = "time: {end: -1}\n";
    ck_assert_int_eq(avi_scene_load_string(bad, strlen(bad), "bad.yaml", NULL, NULL, 0, s, &e), AVI_ERR_INPUT);
    avi_scene_destroy(s);
    avi_scene_destroy(NULL);
}
END_TEST

START_TEST(test_sphere_plate_values)
{
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load("sphere-plate", NULL, 0, &s, &e), AVI_OK);
    ck_assert_str_eq(s.source, "builtin:sphere-plate");
    ck_assert_ptr_null(s.dir);
    ck_assert(s.end_time == 2.0e-3);
    ck_assert_int_eq(s.integrator.type, AVI_INTEGRATOR_AVI);
    ck_assert_int_eq(s.time_step.rule, AVI_DT_STABILITY);
    ck_assert(s.time_step.safety == 0.25);
    ck_assert_uint_eq(s.material_count, 1);
    const avi_scene_material *m = &s.materials[0];
    ck_assert_int_eq(m->model, AVI_MATERIAL_SHELL);
    ck_assert(m->youngs == 2.0e11 && m->poisson == 0.3 && m->density == 7850 && m->thickness == 0.0035);
    ck_assert_uint_eq(s.body_count, 2);
    const avi_scene_body *sp = &s.bodies[0], *pl = &s.bodies[1];
    ck_assert_str_eq(sp->name, "sphere");
    ck_assert_int_eq(sp->mesh.source, AVI_MESH_ICOSPHERE);
    ck_assert(sp->mesh.radius == 0.125 && sp->mesh.subdivisions == 3);
    ck_assert(fabs(sp->translate[2] - (0.125 + 0.005)) < 1e-15);
    ck_assert(sp->velocity[2] == -100.0);
    ck_assert_str_eq(pl->name, "plate");
    ck_assert_int_eq(pl->mesh.source, AVI_MESH_DISK);
    ck_assert(pl->mesh.radius == 0.35 && pl->mesh.rings == 16);
    ck_assert(pl->velocity[0] == 0 && pl->velocity[1] == 0 && pl->velocity[2] == 0);
    ck_assert(s.contact.enabled && s.contact.thickness == 1.0e-3 && s.contact.inner_thickness == 2.0e-4);
    ck_assert(s.contact.stiffness == 0.0 && s.contact.layers == 0);
    ck_assert_str_eq(s.output.file, "sphere_plate.h5");
    ck_assert(s.output.energy_every == 1.0e-6 && s.output.frame_every == 2.0e-5);
    ck_assert(s.output.checkpoint_every == 1.0e-4);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_bar_values)
{
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("bar", NULL, 0, &s, &e), AVI_OK);
    double mu, lambda;
    avi_lame(s.materials[0].youngs, s.materials[0].poisson, &mu, &lambda);
    ck_assert(fabs(mu - 0.5) < 1e-15 && lambda == 0.0);
    ck_assert_int_eq(s.materials[0].model, AVI_MATERIAL_NEO_HOOKEAN);
    const avi_scene_body *b = &s.bodies[0];
    ck_assert_int_eq(b->mesh.source, AVI_MESH_TET_BOX);
    ck_assert(b->mesh.lx == 1.0 && b->mesh.ly == 0.1 && b->mesh.lz == 0.1);
    ck_assert(b->mesh.nx == 40 && b->mesh.ny == 4 && b->mesh.nz == 4);
    ck_assert(b->scale == 1.1);
    ck_assert_int_eq(s.time_step.rule, AVI_DT_CFL);
    ck_assert(s.time_step.delta == 0.1);
    ck_assert(s.end_time == 10.0);
    avi_scene_free(&s);

    ck_assert_int_eq(avi_scene_load_builtin("spring-chain", NULL, 0, &s, &e), AVI_OK);
    ck_assert_uint_eq(s.bodies[0].particle_count, 5);
    ck_assert_uint_eq(s.bodies[0].spring_count, 4);
    ck_assert(s.bodies[0].particles[0].pinned);
    for (int i = 1; i < 5; i++) ck_assert(!s.bodies[0].particles[i].pinned);
    avi_scene_free(&s);

    ck_assert_int_eq(avi_scene_load_builtin("sheet", NULL, 0, &s, &e), AVI_OK);
    ck_assert_int_eq(s.bodies[0].mesh.source, AVI_MESH_RECT);
    ck_assert_int_eq(s.bodies[0].pin, AVI_PIN_BOX);
    ck_assert(s.gravity[2] == -9.81);
    avi_scene_free(&s);
}
END_TEST

/* -------------------------------------------------- defaults and forms -- */

START_TEST(test_defaults)
{
    avi_scene s;
    load_ok(minimal, NULL, 0, &s);
    ck_assert_str_eq(s.name, "test");
    ck_assert_str_eq(s.description, "");
    ck_assert_int_eq(s.integrator.type, AVI_INTEGRATOR_AVI);
    ck_assert(s.integrator.alpha == 0.5 && s.integrator.tolerance == 1e-10);
    ck_assert_int_eq(s.time_step.rule, AVI_DT_STABILITY);
    avi_time_step def = avi_default_time_step();
    ck_assert(s.time_step.safety == def.safety && s.time_step.delta == def.delta);
    ck_assert_str_eq(s.bodies[0].name, "body0");
    ck_assert(s.bodies[0].scale == 1.0);
    ck_assert_int_eq(s.bodies[0].pin, AVI_PIN_NONE);
    ck_assert(s.bodies[0].time_step == 0.0);
    ck_assert_int_eq(s.contact.enabled, 0);
    ck_assert(s.damping == 0.0 && s.gravity[2] == 0.0);
    ck_assert_str_eq(s.output.file, "test.h5");
    ck_assert(s.output.energy_every == 2.0 / 1000 && s.output.frame_every == 2.0 / 100);
    ck_assert(s.output.checkpoint_every == 0.0);
    ck_assert(s.output.max_bytes == 2e10 && s.output.max_checkpoints == 1e5 && s.max_events == 1e13);
    ck_assert_int_eq(s.threads, 0); /* not set: the run's default, 1 */
    round_trip(&s);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_rich_round_trip)
{
    avi_scene s;
    load_ok(rich, NULL, 0, &s);
    ck_assert_str_eq(s.description, "every key, with \"quotes\" and a tab\there");
    ck_assert_int_eq(s.integrator.type, AVI_INTEGRATOR_SYNC_IMPLICIT);
    ck_assert(s.integrator.alpha == 0.25 && s.integrator.tolerance == 1.0e-8);
    ck_assert(avi_time_step_kind_fixed(&s.time_step, AVI_KIND_SPRING) == 1.0e-7);
    ck_assert(avi_time_step_kind_fixed(&s.time_step, AVI_KIND_GRAVITY) == 3.0e-7);
    ck_assert(avi_time_step_kind_fixed(&s.time_step, AVI_KIND_MEMBRANE) == 0.0);
    ck_assert_uint_eq(s.material_count, 4);
    ck_assert_str_eq(s.materials[3].name, "odd name");
    ck_assert(s.materials[3].youngs == 2.0e11); /* through the alias */
    ck_assert_int_eq(s.bodies[0].material, 3);
    ck_assert(s.bodies[0].mesh.jitter == 0.01 && s.bodies[0].mesh.seed == 7);
    ck_assert(!s.bodies[0].mesh.reorder && s.bodies[1].mesh.reorder);
    ck_assert(s.bodies[0].time_step == 2.5e-7 && s.bodies[2].time_step == 1.0e-6);
    ck_assert_uint_eq(s.bodies[1].pin_count, 3);
    const avi_scene_body *ch = &s.bodies[3];
    ck_assert_int_eq(ch->mesh.source, AVI_MESH_NONE);
    ck_assert(ch->particles[0].pinned && ch->particles[0].mass == 0.0);
    ck_assert(ch->particles[1].v[1] == 1.0 && ch->particles[1].mass == 2.0);
    ck_assert(ch->springs[0].stiffness == 1.0e3 && ch->springs[0].rest < 0.0); /* from the material */
    ck_assert(ch->springs[1].stiffness == 50 && ch->springs[1].rest == 0.4);
    ck_assert(s.contact.stiffness == 1.0e9 && s.contact.layers == 3 && s.contact.friction == 0.4);
    ck_assert_str_eq(s.output.file, "out/rich.h5");
    ck_assert(s.output.max_bytes == 3.0e9 && s.output.max_checkpoints == 4 && s.max_events == 2.5e12);
    ck_assert_int_eq(s.threads, 6);
    round_trip(&s);
    avi_scene_free(&s);
    /* parallel.threads: auto, kept through emit and reload */
    static const char auto_yaml[] = "name: t\ntime: {end: 1}\nmaterials: {m: {model: neo-hookean, youngs: 1, "
                                    "poisson: 0, density: 1}}\nbodies:\n  - name: b\n    mesh: {generator: tet_box, "
                                    "lx: 1, ly: 1, lz: 1, nx: 1, ny: 1, nz: 1}\n    material: m\n"
                                    "parallel: {threads: auto}\n";
    avi_error err;
    ck_assert_msg(avi_scene_load_string(auto_yaml, strlen(auto_yaml), "auto.yaml", NULL, NULL, 0, &s, &err) == AVI_OK,
                  "%s", err.message);
    ck_assert_int_eq(s.threads, -1);
    round_trip(&s);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_time_step_forms)
{
    const char *ov1[] = {"time_step={fixed: 1.0e-6}"};
    avi_scene s;
    load_ok(minimal, ov1, 1, &s);
    ck_assert_int_eq(s.time_step.rule, AVI_DT_FIXED);
    ck_assert(s.time_step.fixed == 1.0e-6);
    round_trip(&s);
    avi_scene_free(&s);
    const char *ov2[] = {"time_step={rule: fixed, fixed: 2.0e-6}"};
    load_ok(minimal, ov2, 1, &s);
    ck_assert_int_eq(s.time_step.rule, AVI_DT_FIXED);
    ck_assert(s.time_step.fixed == 2.0e-6);
    avi_scene_free(&s);
    const char *ov3[] = {"time_step={rule: fixed}"};
    load_fails(minimal, ov3, 1, "time_step.fixed", "required");
    const char *ov4[] = {"time_step={rule: cfl, safety: 0.5}"};
    load_fails(minimal, ov4, 1, "time_step.safety", "only used by rule stability");
    const char *ov5[] = {"time_step.levels_per_octave=4"};
    load_ok(minimal, ov5, 1, &s);
    ck_assert_int_eq(s.time_step.levels_per_octave, 4);
    char *text = avi_scene_emit(&s);
    ck_assert_ptr_nonnull(strstr(text, "levels_per_octave: 4"));
    free(text);
    round_trip(&s);
    avi_scene_free(&s);
    /* Exact steps (0) are not the default (16), so the resolved scene names
     * them, and a restart keeps them. */
    const char *ov8[] = {"time_step.levels_per_octave=0"};
    load_ok(minimal, ov8, 1, &s);
    ck_assert_int_eq(s.time_step.levels_per_octave, 0);
    text = avi_scene_emit(&s);
    ck_assert_ptr_nonnull(strstr(text, "levels_per_octave: 0"));
    free(text);
    round_trip(&s);
    avi_scene_free(&s);
    load_ok(minimal, NULL, 0, &s);
    ck_assert_int_eq(s.time_step.levels_per_octave, 16);
    avi_scene_free(&s);
    const char *ov6[] = {"time_step={fixed: 1.0e-6, levels_per_octave: 2}"};
    load_fails(minimal, ov6, 1, "time_step.levels_per_octave", "not used by rule fixed");
    const char *ov7[] = {"time_step.levels_per_octave=1.5"};
    load_fails(minimal, ov7, 1, "time_step.levels_per_octave", NULL);
}
END_TEST

START_TEST(test_load_dispatch)
{
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load("bar", NULL, 0, &s, &e), AVI_OK);
    ck_assert_str_eq(s.source, "builtin:bar");
    avi_scene_free(&s);
    /* A path loads the file, with its directory as the mesh base. */
    ck_assert_int_eq(avi_scene_load("data/scenes/bar.yaml", NULL, 0, &s, &e), AVI_OK);
    ck_assert_str_eq(s.source, "data/scenes/bar.yaml");
    ck_assert_str_eq(s.dir, "data/scenes");
    avi_scene_free(&s);
    ck_assert_int_eq(avi_scene_load("no-such-scene", NULL, 0, &s, &e), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(e.message, "no-such-scene"));
    ck_assert_int_eq(avi_scene_load("missing/file.yaml", NULL, 0, &s, &e), AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(e.message, "missing/file.yaml"));
    ck_assert_int_eq(avi_scene_load_builtin("nope", NULL, 0, &s, &e), AVI_ERR_INPUT);
    avi_scene_free(&s); /* safe on an empty scene */
}
END_TEST

START_TEST(test_aliases_and_syntax_forms)
{
    const char *text = "time: {end: 1}\n"
                       "materials:\n"
                       "  a: {model: spring, stiffness: 10, density: 1}\n"
                       "bodies:\n"
                       "  - name: one\n"
                       "    mesh: &m {generator: rect, lx: 1, ly: 1, nx: 1, ny: 1}\n"
                       "    material: a\n"
                       "    velocity: &v [1, 0, 0]\n"
                       "  - name: two\n"
                       "    mesh: *m\n"
                       "    material: a\n"
                       "    velocity: *v\n"
                       "    translate: [+2, 0.0, -0]\n"
                       "contact: {enabled: False}\n";
    avi_scene s;
    load_ok(text, NULL, 0, &s);
    ck_assert_int_eq(s.bodies[1].mesh.source, AVI_MESH_RECT);
    ck_assert(s.bodies[1].velocity[0] == 1.0);
    ck_assert(s.bodies[1].translate[0] == 2.0);
    ck_assert_int_eq(s.contact.enabled, 0);
    avi_scene_free(&s);
    /* Recursive aliases and alias bombs are refused. */
    load_fails("a: &a [1, 2]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
               "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
               "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
               "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g, *g]\n",
               NULL, 0, "test.yaml:", "alias");
    load_fails("a: &x [1, *x]\n", NULL, 0, "test.yaml:1:", "alias");
    load_fails("? [a, b]\n: c\n", NULL, 0, "test.yaml:1:", "keys");
}
END_TEST

/* ---------------------------------------------------------------- --set -- */

START_TEST(test_set_scalars)
{
    const char *ov[] = {"time.end=1e-4", "output.energy_every=1e-6", "integrator.type=sync-implicit",
                        "materials.steel.thickness=0.002", "name=custom"};
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", ov, 5, &s, &e), AVI_OK);
    ck_assert(s.end_time == 1e-4);
    ck_assert(s.output.energy_every == 1e-6);
    ck_assert_int_eq(s.integrator.type, AVI_INTEGRATOR_SYNC_IMPLICIT);
    ck_assert(s.integrator.alpha == 0.5);
    ck_assert(s.materials[0].thickness == 0.002);
    ck_assert_str_eq(s.name, "custom");
    /* The text keeps the original and notes the overrides. */
    const char *orig = avi_scene_builtin_text((size_t)avi_scene_builtin_find("sphere-plate"));
    ck_assert_int_eq(strncmp(s.text, orig, strlen(orig)), 0);
    ck_assert_ptr_nonnull(strstr(s.text, "# --set overrides applied:"));
    ck_assert_ptr_nonnull(strstr(s.text, "--set integrator.type=sync-implicit"));
    round_trip(&s);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_set_sequences)
{
    const char *ov[] = {"gravity=[0, 0, -9.81]", "bodies.0.velocity=[0,0,-1000]", "gravity.0=1.5",
                        "bodies.0.pinned={indices: [1, 2]}"};
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", ov, 4, &s, &e), AVI_OK);
    ck_assert(s.gravity[0] == 1.5 && s.gravity[1] == 0.0 && s.gravity[2] == -9.81);
    ck_assert(s.bodies[0].velocity[2] == -1000.0);
    ck_assert_int_eq(s.bodies[0].pin, AVI_PIN_INDICES);
    ck_assert_uint_eq(s.bodies[0].pin_count, 2);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_set_by_name)
{
    const char *ov[] = {"bodies.plate.translate=[0, 0, -0.5]", "bodies.sphere.initial={scale: 1.2}",
                        "bodies.sphere.mesh.subdivisions=2", "bodies.chain.particles.4.mass=7"};
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", ov, 3, &s, &e), AVI_OK);
    ck_assert(s.bodies[1].translate[2] == -0.5);
    ck_assert(s.bodies[0].scale == 1.2);
    ck_assert_int_eq(s.bodies[0].mesh.subdivisions, 2);
    avi_scene_free(&s);
    ck_assert_int_eq(avi_scene_load_builtin("spring-chain", ov + 3, 1, &s, &e), AVI_OK);
    ck_assert(s.bodies[0].particles[4].mass == 7.0);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_set_adds_allowed_keys)
{
    avi_scene s;
    avi_error e;
    /* The bar has no contact section and no pins: --set may add them. */
    const char *ov[] = {"contact.thickness=2e-3", "bodies.bar.pinned.indices=[0]", "damping=0.5",
                        "materials.stiff={model: neo-hookean, youngs: 10, poisson: 0.2, density: 2}",
                        "bodies.0.material=stiff", "time_step.per_kind.tet=1e-3"};
    ck_assert_int_eq(avi_scene_load_builtin("bar", ov, 6, &s, &e), AVI_OK);
    ck_assert(s.contact.enabled && s.contact.thickness == 2e-3 && s.contact.inner_thickness == 2e-3 / 5);
    ck_assert_int_eq(s.bodies[0].pin, AVI_PIN_INDICES);
    ck_assert(s.damping == 0.5);
    ck_assert_uint_eq(s.material_count, 2);
    ck_assert_int_eq(s.bodies[0].material, 1);
    ck_assert(avi_time_step_kind_fixed(&s.time_step, AVI_KIND_TET) == 1e-3);
    avi_scene_free(&s);
    /* Later overrides win. */
    const char *ov2[] = {"time.end=1", "time.end=3"};
    ck_assert_int_eq(avi_scene_load_builtin("bar", ov2, 2, &s, &e), AVI_OK);
    ck_assert(s.end_time == 3.0);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_set_errors)
{
    static const struct {
        const char *set, *want1, *want2;
    } cases[] = {
        /* An unknown key lists the valid ones, as the scene file's messages do. */
        {"time.ned=1", "--set time.ned: no such key", "(time takes: end)"},
        {"tiem=1", "--set tiem: no such key", "(the scene takes: name description time integrator"},
        {"bodies.7.velocity=[0,0,0]", "--set bodies.7.velocity: no such key", "(bodies has: sphere plate or 0..1)"},
        {"bodies.nobody.velocity=[0,0,0]", "--set bodies.nobody.velocity: no such key",
         "(bodies has: sphere plate or 0..1)"},
        {"bodies.sphere.velocty=[0,0,0]", "--set bodies.sphere.velocty: no such key",
         "(bodies.sphere takes: name mesh particles springs links material translate velocity"},
        {"materials.steel.colour=red", "no such key", "(materials.steel takes: model youngs poisson"},
        {"gravity.3=1", "--set gravity.3: no such key", "(gravity has: 0..2)"},
        {"name.x=1", "--set name.x: no such key", "(name is a value, not a mapping)"},
        {"bodies.0.mesh.colour=red", "--set bodies.0.mesh.colour: no such key",
         "(bodies.0.mesh takes: generator radius subdivisions"},
        {"bodies..name=x", "no such key", NULL},
        {"time.end", "--set time.end: expected KEY=VALUE", NULL},
        {"=1", "expected KEY=VALUE", NULL},
        {"time.end=", "--set time.end: missing value", NULL},
        {"gravity=[0, 0", "--set gravity: bad value", NULL},
        /* Values are validated like the file's own. */
        {"time.end=abc", "time.end (--set)", "expected a number"},
        {"time.end=-1", "time.end (--set)", "must be > 0"},
        {"bodies.0.velocity=[0, 0]", "bodies.0.velocity (--set)", "3 numbers"},
        {"bodies.sphere.material=lead", "bodies.0.material (--set)", "unknown material 'lead'"},
        {"materials.steel.poisson=0.5", "materials.steel.poisson (--set)", "[0, 0.5)"},
        {"bodies.0.mesh={generator: icosphere, radius: 1, subdivisions: 9}", "bodies.0.mesh.subdivisions (--set)",
         "too large"},
        {"output.max_bytes=0", "output.max_bytes (--set)", "must be > 0"},
        {"output.max_checkpoints=abc", "output.max_checkpoints (--set)", "expected a number"},
        {"time_step.max_events=-1", "time_step.max_events (--set)", "must be > 0"},
        /* 2e-3 / 1e-9 is 2e6 checkpoints: under 1e9, over the default 1e5. */
        {"output.checkpoint_every=1e-9", "output.checkpoint_every (--set)",
         "about 2e+06 checkpoints over time.end = 0.002 s, more than output.max_checkpoints = 100000"},
    };
    const char *text = avi_scene_builtin_text((size_t)avi_scene_builtin_find("sphere-plate"));
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        avi_scene s;
        avi_error e;
        const char *ov[] = {cases[i].set};
        int rc = avi_scene_load_string(text, strlen(text), "sp.yaml", NULL, ov, 1, &s, &e);
        ck_assert_msg(rc == AVI_ERR_INPUT, "--set %s was accepted", cases[i].set);
        ck_assert_msg(strstr(e.message, cases[i].want1), "--set %s: '%s' lacks '%s'", cases[i].set, e.message,
                      cases[i].want1);
        if (cases[i].want2)
            ck_assert_msg(strstr(e.message, cases[i].want2), "--set %s: '%s' lacks '%s'", cases[i].set, e.message,
                          cases[i].want2);
        ck_assert_ptr_nonnull(strstr(e.message, "sp.yaml"));
        avi_scene_free(&s);
    }
}
END_TEST

/* The limits are what refuses: raised, the same settings load and build. */
START_TEST(test_limits_can_be_raised)
{
    const char *text = avi_scene_builtin_text((size_t)avi_scene_builtin_find("spring-chain"));
    static const struct {
        const char *set, *raise, *key;
    } cases[] = {
        {"output.checkpoint_every=1e-5", "output.max_checkpoints=1e7", "output.checkpoint_every"},
        {"time_step={fixed: 1e-300}", "time_step.max_events=1e308", "time_step.fixed"},
        {"output.frame_every=1e-3", "output.max_bytes=1e30", "output.frame_every"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        /* The third case lowers the limit to refuse and raises it to pass. */
        const char *low[] = {cases[i].set, i == 2 ? "output.max_bytes=1000" : "name=limits"};
        const char *high[] = {cases[i].set, cases[i].raise};
        for (int pass = 0; pass < 2; pass++) {
            avi_scene s;
            avi_error e;
            int rc = avi_scene_load_string(text, strlen(text), "chain.yaml", NULL, pass ? high : low, 2, &s, &e);
            avi_model *m = NULL;
            if (rc == AVI_OK) rc = avi_scene_build(&s, &m, NULL, &e);
            if (pass) ck_assert_msg(rc == AVI_OK, "%s with %s: %s", cases[i].set, cases[i].raise, e.message);
            else ck_assert_msg(rc == AVI_ERR_INPUT && strstr(e.message, cases[i].key), "%s: rc %d, '%s'",
                               cases[i].set, rc, rc ? e.message : "");
            avi_model_destroy(m);
            avi_scene_free(&s);
        }
    }
}
END_TEST

/* -------------------------------------------------------------- corpus -- */

/* Each malformed scene, the key (or words) its message must name, and the
 * line it must point at (0: no line, e.g. an empty file still says ":1:"
 * but is checked by its words). Loaded, then built when loading passes. */
static const struct {
    const char *file;
    const char *want;
    int line;
} corpus[] = {
    {"unknown_top_key.yaml", "tiem: unknown key", 4},
    {"unknown_nested_key.yaml", "bodies.0.mesh.radus: unknown key", 0},
    {"unknown_material_key.yaml", "materials.steel.young: unknown key", 4},
    {"unknown_body_key.yaml", "bodies.0.speed: unknown key", 9},
    {"wrong_type_end.yaml", "time.end: expected a number, got 'soon'", 3},
    {"wrong_type_bodies.yaml", "bodies: expected a non-empty sequence", 6},
    {"wrong_type_vector.yaml", "bodies.0.translate: expected a sequence of 3 numbers", 9},
    {"quoted_number.yaml", "time.end: expected a number, got quoted '1.0e-3'", 2},
    {"null_value.yaml", "time: expected a mapping, got nothing", 2},
    {"missing_time.yaml", "time: required key missing", 0},
    {"missing_end.yaml", "time.end: required key missing", 2},
    {"missing_bodies.yaml", "bodies: required key missing", 0},
    {"missing_material.yaml", "bodies.0.material: required key missing", 6},
    {"particle_missing_mass.yaml", "bodies.0.particles.1.mass: required key missing", 7},
    {"negative_density.yaml", "materials.steel.density: must be > 0, got -7850", 4},
    {"nan_youngs.yaml", "materials.steel.youngs: must be finite, got '.nan'", 4},
    {"inf_gravity.yaml", "gravity.2: must be finite", 9},
    {"poisson_half.yaml", "materials.rubber.poisson: must be in [0, 0.5), got 0.5", 4},
    {"zero_thickness.yaml", "materials.steel.thickness: must be > 0, got 0", 4},
    {"zero_youngs.yaml", "materials.steel.youngs: must be > 0", 4},
    {"material_key_wrong_model.yaml", "materials.steel.stiffness: not a parameter of model shell", 4},
    {"unknown_material.yaml", "bodies.0.material: unknown material 'stel'", 8},
    {"unknown_generator.yaml", "bodies.0.mesh.generator: unknown generator 'cube'", 7},
    {"unknown_integrator.yaml", "integrator.type: unknown integrator 'rk4'", 3},
    {"alpha_for_avi.yaml", "integrator.alpha: only used by sync-implicit", 3},
    {"bad_syntax.yaml", "YAML syntax error", 0},
    {"tab_indent.yaml", "tabs cannot indent YAML", 3},
    {"duplicate_key.yaml", "time: duplicate key (first at line 2)", 5},
    {"duplicate_nested_key.yaml", "bodies.0.mesh.radius: duplicate key (first at line 9)", 11},
    {"duplicate_body_name.yaml", "bodies.1.name: body name 'ball' is used twice", 9},
    {"empty.yaml", "the scene is empty", 1},
    {"comments_only.yaml", "the scene is empty", 1},
    {"non_utf8.yaml", "UTF-8", 3},
    {"top_level_sequence.yaml", "expected a mapping of scene keys, got a sequence", 2},
    {"two_documents.yaml", "one YAML document", 3},
    {"unknown_alias.yaml", "unknown alias *sphere", 0},
    {"tagged_value.yaml", "tags", 2},
    {"pinned_index_out_of_range.yaml", "bodies.0.pinned.indices.1: vertex 42 out of range", 9},
    {"pinned_index_repeated.yaml", "bodies.0.pinned.indices.2: vertex 3 is listed twice", 9},
    {"pin_box_inverted.yaml", "bodies.0.pinned.box: min 1 > max -1 along axis 2", 9},
    {"pin_box_empty.yaml", "bodies.0.pinned.box: the box pins no vertex", 9},
    {"mesh_file_missing.yaml", "bodies.0.mesh.file: cannot open mesh file", 7},
    {"mesh_file_malformed.yaml", "bodies.0.mesh.file: ", 7},
    {"mesh_file_zero_area.yaml", "bodies.0.mesh.file: ", 7},
    {"mesh_file_format.yaml", "bodies.0.mesh.file: 'part.stl': unsupported mesh format", 7},
    {"neo_hookean_surface_file.yaml", "bodies.0.material: material 'rubber' (neo-hookean) needs tetrahedra", 6},
    {"shell_on_tet_box.yaml", "bodies.0.material: material 'steel' (shell) needs a triangle mesh", 8},
    {"model_error_orientation.yaml", "bodies.1 (flipped): body 'flipped'", 10},
    {"negative_time_step.yaml", "time_step.fixed: must be > 0", 3},
    {"negative_body_time_step.yaml", "bodies.0.time_step.fixed: must be > 0", 9},
    {"safety_out_of_range.yaml", "time_step.safety: must be in (0, 1]", 3},
    {"levels_out_of_range.yaml", "time_step.levels_per_octave", 3},
    {"zero_end_time.yaml", "time.end: must be > 0, got 0", 2},
    {"huge_subdivisions.yaml", "bodies.0.mesh.subdivisions: 12 is too large (at most 8)", 7},
    {"huge_grid.yaml", "bodies.0.mesh.nx: mesh too large", 7},
    {"mesh_and_particles.yaml", "bodies.0.particles: a body has a mesh or particles, not both", 9},
    {"spring_same_particle.yaml", "bodies.0.springs.0.b: a spring joins two different particles", 9},
    {"spring_index_out_of_range.yaml", "bodies.0.springs.0.b: particle 2 out of range (the body has 2 particles)", 9},
    {"inner_thickness_too_large.yaml", "contact.inner_thickness: must be < contact.thickness", 9},
    {"contact_layers_bad.yaml", "contact.layers: expected auto or an integer, got 'many'", 9},
    {"parallel_threads_bad.yaml", "parallel.threads: expected an integer, got '2.5'", 9},
    {"parallel_threads_zero.yaml", "parallel.threads: must be in [1, 1024], got 0", 9},
    {"negative_damping.yaml", "damping: must be >= 0", 9},
    {"output_interval_too_small.yaml", "output.energy_every: 1e-16 gives more than 1e9 outputs", 9},
    {"bad_scene_name.yaml", "name: 'a/b' is not a scene name", 2},
    {"mesh_file_overlapping_tets.yaml", "overlapping_tets.msh:15: tetrahedra 0 (vertices 0, 1, 2, 3) and 1 (vertices 0, 1, 2, 4) overlap", 7},
    {"mesh_file_self_intersecting.yaml", "obj_folded_strip.obj:13: the surface self-intersects: triangles 0 (vertices 0, 2, 3) and 6", 7},
    {"bodies_overlap.yaml", "bodies 'left' (bodies.0) and 'right' (bodies.1) intersect at t = 0", 0},
    {"bodies_too_close.yaml", "come closer than contact.inner_thickness = 0.0002 at t = 0: vertex 0 of 'upper' is 0.0001 from surface triangle 0", 0},
    {"too_many_checkpoints.yaml", "output.checkpoint_every: 1e-11 s gives about 1e+09 checkpoints", 9},
    {"too_many_events.yaml", "time_step.fixed: about 1.6e+300 events", 0},
    {"output_too_large.yaml", "output.frame_every: the output would need about 2.43e+06 bytes", 0},
    {"density_underflow.yaml", "materials.steel.density: the areal density density thickness is 3.5e-311", 0},
    {"thickness_overflow.yaml", "materials.steel.thickness: the bending modulus", 0},
    {"youngs_underflow.yaml", "materials.steel.youngs: the bending modulus", 0},
    {"density_zero_step.yaml", "materials.steel.density: membrane 0: time step 0 is not positive", 0},
};

#define NCORPUS (sizeof corpus / sizeof corpus[0])

START_TEST(test_corpus_rejected)
{
    char path[512];
    snprintf(path, sizeof path, CORPUS "%s", corpus[_i].file);
    avi_scene s;
    avi_error e;
    int rc = avi_scene_load_file(path, NULL, 0, &s, &e);
    if (rc == AVI_OK) {
        avi_model *m = (avi_model *)1;
        avi_scene_bodies info;
        rc = avi_scene_build(&s, &m, &info, &e);
        ck_assert_ptr_null(m);
        ck_assert_uint_eq(info.count, 0);
        avi_scene_free(&s);
    } else {
        ck_assert_ptr_null(s.bodies);
        ck_assert_ptr_null(s.text);
    }
    ck_assert_msg(rc == AVI_ERR_INPUT, "%s: accepted (rc %d)", corpus[_i].file, rc);
    ck_assert_int_eq(e.status, AVI_ERR_INPUT);
    ck_assert_msg(strstr(e.message, path), "%s: message '%s' lacks the file name", corpus[_i].file, e.message);
    ck_assert_msg(strstr(e.message, corpus[_i].want), "%s: message '%s' lacks '%s'", corpus[_i].file, e.message,
                  corpus[_i].want);
    if (corpus[_i].line > 0) {
        char at[600];
        snprintf(at, sizeof at, "%s:%d: ", path, corpus[_i].line);
        ck_assert_msg(strstr(e.message, at), "%s: message '%s' does not point at line %d", corpus[_i].file, e.message,
                      corpus[_i].line);
    }
}
END_TEST

/* Every scene file of the corpus has an entry, and the corpus is big enough. */
START_TEST(test_corpus_complete)
{
    DIR *d = opendir(CORPUS);
    ck_assert_ptr_nonnull(d);
    struct dirent *ent;
    size_t files = 0;
    while ((ent = readdir(d))) {
        size_t n = strlen(ent->d_name);
        if (n < 5 || strcmp(ent->d_name + n - 5, ".yaml") != 0) continue;
        files++;
        int found = 0;
        for (size_t i = 0; i < NCORPUS; i++)
            if (strcmp(corpus[i].file, ent->d_name) == 0) found = 1;
        ck_assert_msg(found, "%s is not in the corpus table", ent->d_name);
    }
    closedir(d);
    ck_assert_uint_eq(files, NCORPUS);
    ck_assert_uint_ge(NCORPUS, 30);
}
END_TEST

static Suite *scene_suite(void)
{
    Suite *s = suite_create("scene");
    TCase *tc = tcase_create("load");
    tcase_add_test(tc, test_builtins_listed);
    tcase_add_test(tc, test_builtins_load);
    tcase_add_test(tc, test_scene_create_destroy);
    tcase_add_test(tc, test_sphere_plate_values);
    tcase_add_test(tc, test_bar_values);
    tcase_add_test(tc, test_defaults);
    tcase_add_test(tc, test_rich_round_trip);
    tcase_add_test(tc, test_limits_can_be_raised);
    tcase_add_test(tc, test_time_step_forms);
    tcase_add_test(tc, test_load_dispatch);
    tcase_add_test(tc, test_aliases_and_syntax_forms);
    suite_add_tcase(s, tc);
    tc = tcase_create("set");
    tcase_add_test(tc, test_set_scalars);
    tcase_add_test(tc, test_set_sequences);
    tcase_add_test(tc, test_set_by_name);
    tcase_add_test(tc, test_set_adds_allowed_keys);
    tcase_add_test(tc, test_set_errors);
    suite_add_tcase(s, tc);
    tc = tcase_create("corpus");
    tcase_add_loop_test(tc, test_corpus_rejected, 0, (int)NCORPUS);
    tcase_add_test(tc, test_corpus_complete);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(scene_suite)
