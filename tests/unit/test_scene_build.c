/* Scene -> model: vertex ranges, connectivity, masses, initial state, pins,
 * time steps, and errors that only show once the mesh exists. */
#include "avi/engine.h"
#include "avi/mesh.h"
#include "avi/scene.h"
#include "check_main.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void load(const char *text, const char *dir, avi_scene *s)
{
    avi_error e;
    int rc = avi_scene_load_string(text, strlen(text), "build.yaml", dir, NULL, 0, s, &e);
    ck_assert_msg(rc == AVI_OK, "load: %s", e.message);
}

static avi_model *build(const avi_scene *s, avi_scene_bodies *info)
{
    avi_model *m = NULL;
    avi_error e;
    int rc = avi_scene_build(s, &m, info, &e);
    ck_assert_msg(rc == AVI_OK, "build: %s", e.message);
    ck_assert_ptr_nonnull(m);
    return m;
}

static void build_fails(const char *text, const char *dir, const char *want)
{
    avi_scene s;
    avi_error e;
    avi_model *m = NULL;
    avi_scene_bodies info;
    load(text, dir, &s);
    ck_assert_int_eq(avi_scene_build(&s, &m, &info, &e), AVI_ERR_INPUT);
    ck_assert_ptr_null(m);
    ck_assert_uint_eq(info.count, 0);
    ck_assert_msg(strstr(e.message, "build.yaml"), "'%s' lacks the file", e.message);
    ck_assert_msg(strstr(e.message, want), "'%s' lacks '%s'", e.message, want);
    avi_scene_free(&s);
}

/* Initial positions and velocities, through an engine at t = 0. */
static void initial_state(avi_model *m, double (**x)[3], double (**v)[3])
{
    avi_error e;
    avi_engine *eng = avi_engine_create(m, &e);
    ck_assert_msg(eng != NULL, "engine: %s", e.message);
    size_t n = avi_model_vertex_count(m);
    *x = malloc(n * sizeof **x);
    *v = malloc(n * sizeof **v);
    avi_engine_state_at(eng, 0.0, &(*x)[0][0], &(*v)[0][0]);
    avi_engine_destroy(eng);
}

static double body_mass(const avi_model *m, const avi_scene_body_info *b)
{
    double sum = 0.0;
    for (uint32_t i = 0; i < b->vertex_count; i++) sum += avi_model_vertex_mass(m, b->first_vertex + i);
    return sum;
}

START_TEST(test_builtins_build)
{
    for (size_t i = 0; i < avi_scene_builtin_count(); i++) {
        avi_scene s;
        avi_error e;
        ck_assert_int_eq(avi_scene_load_builtin(avi_scene_builtin_name(i), NULL, 0, &s, &e), AVI_OK);
        avi_scene_bodies info;
        avi_model *m = build(&s, &info);
        ck_assert_uint_eq(info.count, s.body_count);
        ck_assert_int_eq(avi_model_body_count(m), (int)s.body_count);
        uint32_t next = 0;
        for (size_t b = 0; b < info.count; b++) {
            ck_assert_str_eq(info.bodies[b].name, s.bodies[b].name);
            ck_assert_str_eq(avi_model_body_name(m, (int)b), s.bodies[b].name);
            ck_assert_uint_eq(info.bodies[b].first_vertex, next);
            next += info.bodies[b].vertex_count;
            for (size_t t = 0; t < info.bodies[b].triangle_count; t++)
                for (int k = 0; k < 3; k++) ck_assert_uint_lt(info.bodies[b].triangles[t][k], info.bodies[b].vertex_count);
            for (size_t t = 0; t < info.bodies[b].tet_count; t++)
                for (int k = 0; k < 4; k++) ck_assert_uint_lt(info.bodies[b].tets[t][k], info.bodies[b].vertex_count);
        }
        ck_assert_uint_eq(next, avi_model_vertex_count(m));
        avi_model_destroy(m);
        avi_scene_bodies_free(&info);
        avi_scene_free(&s);
    }
}
END_TEST

START_TEST(test_sphere_plate_model)
{
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("sphere-plate", NULL, 0, &s, &e), AVI_OK);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    const avi_scene_body_info *sp = &info.bodies[0], *pl = &info.bodies[1];
    ck_assert_uint_eq(sp->vertex_count, 10 * 64 + 2);
    ck_assert_uint_eq(sp->triangle_count, 20 * 64);
    ck_assert_uint_eq(pl->vertex_count, 1 + 3 * 16 * 17);
    ck_assert_uint_eq(pl->triangle_count, 6 * 16 * 16);
    ck_assert_uint_eq(sp->tet_count + pl->tet_count, 0);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_MEMBRANE), sp->triangle_count + pl->triangle_count);
    /* Shells bend (bending: midedge by default): one bending triangle per
     * triangle, no hinge. */
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_MIDEDGE), sp->triangle_count + pl->triangle_count);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_HINGE), 0);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_GRAVITY), 0);
    /* Mass: rho h times the (inscribed polyhedron's) area. */
    double rho_h = 7850 * 0.0035;
    double sphere = rho_h * 4.0 * M_PI * 0.125 * 0.125, plate = rho_h * M_PI * 0.35 * 0.35;
    ck_assert(fabs(body_mass(m, sp) / sphere - 1.0) < 0.02 && body_mass(m, sp) < sphere);
    ck_assert(fabs(body_mass(m, pl) / plate - 1.0) < 0.02 && body_mass(m, pl) < plate);
    /* The sphere starts 5 mm above the plate, moving down at 100 m/s. */
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    double zmin = 1e9, zmax = -1e9;
    for (uint32_t i = 0; i < sp->vertex_count; i++) {
        uint32_t k = sp->first_vertex + i;
        zmin = fmin(zmin, x[k][2]);
        ck_assert(v[k][0] == 0.0 && v[k][1] == 0.0 && v[k][2] == -100.0);
    }
    for (uint32_t i = 0; i < pl->vertex_count; i++) {
        uint32_t k = pl->first_vertex + i;
        zmax = fmax(zmax, fabs(x[k][2]));
        ck_assert(v[k][0] == 0.0 && v[k][1] == 0.0 && v[k][2] == 0.0);
    }
    ck_assert(fabs(zmin - 0.005) < 1e-12);
    ck_assert(zmax == 0.0);
    free(x);
    free(v);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_bar_model)
{
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_builtin("bar", NULL, 0, &s, &e), AVI_OK);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    const avi_scene_body_info *b = &info.bodies[0];
    ck_assert_uint_eq(b->vertex_count, 41 * 5 * 5);
    ck_assert_uint_eq(b->tet_count, 6 * 40 * 4 * 4);
    ck_assert_uint_eq(b->triangle_count, 4 * (40 * 4 + 4 * 4 + 4 * 40)); /* the boundary */
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_TET), b->tet_count);
    ck_assert(fabs(body_mass(m, b) - 1.0 * 0.1 * 0.1) < 1e-14);
    /* Initial positions: the rest positions scaled by 1.1 about the centroid. */
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    double c[3] = {0.5, 0.05, 0.05};
    for (uint32_t i = 0; i < b->vertex_count; i += 7) {
        int ii = (int)(i % 41), jj = (int)(i / 41 % 5), kk = (int)(i / 205);
        double X[3] = {ii / 40.0, 0.1 * jj / 4.0, 0.1 * kk / 4.0};
        for (int d = 0; d < 3; d++) ck_assert(fabs(x[i][d] - (c[d] + 1.1 * (X[d] - c[d]))) < 1e-12);
        ck_assert(v[i][0] == 0.0 && v[i][1] == 0.0 && v[i][2] == 0.0);
    }
    free(x);
    free(v);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_spring_chain_model)
{
    avi_scene s;
    avi_error e;
    const char *ov[] = {"bodies.chain.velocity=[0, 1, 0]"};
    ck_assert_int_eq(avi_scene_load_builtin("spring-chain", ov, 1, &s, &e), AVI_OK);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    ck_assert_uint_eq(avi_model_vertex_count(m), 5);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_SPRING), 4);
    ck_assert_uint_eq(info.bodies[0].edge_count, 4);
    ck_assert_uint_eq(info.bodies[0].edges[3][0], 3);
    ck_assert_uint_eq(info.bodies[0].edges[3][1], 4);
    /* Gravity acts on the four free particles only. */
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_GRAVITY), 4);
    ck_assert(avi_model_vertex_mass(m, 1) == 1.0);
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    ck_assert(v[0][1] == 0.0); /* pinned: never moves */
    for (int i = 1; i < 5; i++) ck_assert(v[i][1] == 1.0 && x[i][0] == (double)i);
    free(x);
    free(v);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_sheet_pins_edge)
{
    avi_scene s;
    avi_error e;
    const char *ov[] = {"bodies.sheet.velocity=[0, 0, 2]"};
    ck_assert_int_eq(avi_scene_load_builtin("sheet", ov, 1, &s, &e), AVI_OK);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    ck_assert_uint_eq(info.bodies[0].vertex_count, 21 * 21);
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    size_t pinned = 0;
    for (size_t i = 0; i < 21 * 21; i++) {
        int on_edge = x[i][0] == 0.0;
        ck_assert(v[i][2] == (on_edge ? 0.0 : 2.0));
        pinned += (size_t)on_edge;
    }
    ck_assert_uint_eq(pinned, 21);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_GRAVITY), 21 * 21 - 21);
    free(x);
    free(v);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_material_models)
{
    const char *text = "time: {end: 1}\n"
                       "time_step: {fixed: 1.0e-4, per_kind: {hinge: 5.0e-5}}\n"
                       "materials:\n"
                       "  net: {model: spring, stiffness: 20, density: 0.5}\n"
                       "  film: {model: membrane, youngs: 1.0e5, poisson: 0.2, density: 100, thickness: 0.01}\n"
                       "  plate: {model: shell, youngs: 1.0e5, poisson: 0.2, density: 100, thickness: 0.01}\n"
                       "bodies:\n"
                       "  - name: net\n"
                       "    mesh: {generator: rect, lx: 1, ly: 1, nx: 2, ny: 2}\n"
                       "    material: net\n"
                       "    pinned: {indices: [0, 8]}\n"
                       "  - name: film\n"
                       "    mesh: {generator: rect, lx: 1, ly: 1, nx: 2, ny: 2}\n"
                       "    material: film\n"
                       "    translate: [0, 0, 1]\n"
                       "  - name: plate\n"
                       "    mesh: {generator: rect, lx: 1, ly: 1, nx: 2, ny: 2}\n"
                       "    material: plate\n"
                       "    translate: [0, 0, 2]\n"
                       "    time_step: 2.0e-5\n";
    avi_scene s;
    load(text, NULL, &s);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    /* Springs: one per unique edge (6 + 6 sides, 4 diagonals), density = mass per vertex. */
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_SPRING), 16);
    ck_assert_uint_eq(info.bodies[0].edge_count, 16);
    ck_assert_uint_eq(info.bodies[0].triangle_count, 8);
    for (uint32_t i = 0; i < 9; i++) ck_assert(avi_model_vertex_mass(m, i) == 0.5);
    /* Membrane: no bending; shell: one mid-edge triangle per triangle. */
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_MEMBRANE), 16);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_MIDEDGE), 8);
    ck_assert(fabs(body_mass(m, &info.bodies[1]) - 100 * 0.01 * 1.0) < 1e-12);
    /* Time steps: the fixed rule, the per-kind step and the body's own. */
    double lo, hi;
    avi_model_time_step_range(m, AVI_KIND_SPRING, &lo, &hi);
    ck_assert(lo == 1.0e-4 && hi == 1.0e-4);
    avi_model_time_step_range(m, AVI_KIND_MIDEDGE, &lo, &hi);
    ck_assert(lo == 2.0e-5 || lo == 5.0e-5);
    avi_model_time_step_range(m, AVI_KIND_MEMBRANE, &lo, &hi);
    ck_assert(lo == 2.0e-5 && hi == 1.0e-4);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_particles)
{
    const char *text = "time: {end: 1}\n"
                       "materials:\n"
                       "  k: {model: spring, stiffness: 3, density: 1}\n"
                       "bodies:\n"
                       "  - name: trio\n"
                       "    material: k\n"
                       "    translate: [10, 0, 0]\n"
                       "    initial: {scale: 2}\n"
                       "    particles:\n"
                       "      - {x: [0, 0, 0], v: [1, 0, 0], mass: 1}\n"
                       "      - {x: [1, 0, 0], mass: 2}\n"
                       "      - {x: [2, 0, 0], mass: 3}\n"
                       "    springs:\n"
                       "      - {a: 0, b: 1}\n"
                       "      - {a: 1, b: 2, stiffness: 7, rest: 0.5}\n"
                       "    pinned: {indices: [2]}\n";
    avi_scene s;
    load(text, NULL, &s);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    ck_assert(avi_model_vertex_mass(m, 0) == 1.0 && avi_model_vertex_mass(m, 1) == 2.0);
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    /* Rest centroid 11; scale 2 about it. */
    ck_assert(x[0][0] == 9.0 && x[1][0] == 11.0 && x[2][0] == 13.0);
    ck_assert(v[0][0] == 1.0 && v[2][0] == 0.0);
    free(x);
    free(v);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}
END_TEST

START_TEST(test_mesh_files)
{
    /* Relative mesh paths start at the scene's directory. */
    const char *text = "time: {end: 1}\n"
                       "materials:\n"
                       "  film: {model: membrane, youngs: 1.0e5, poisson: 0.2, density: 100, thickness: 0.01}\n"
                       "  gel: {model: neo-hookean, youngs: 1.0e5, poisson: 0.3, density: 100}\n"
                       "bodies:\n"
                       "  - name: square\n"
                       "    mesh: {file: square.obj}\n"
                       "    material: film\n"
                       "    pinned: {indices: [3]}\n"
                       "  - name: cube\n"
                       "    mesh: {file: unit_cube_v41.msh}\n"
                       "    material: gel\n"
                       "    translate: [0, 0, 2]\n";
    avi_scene s;
    load(text, "data/meshes", &s);
    ck_assert_ptr_nonnull(strstr(s.bodies[0].mesh.file, "data/meshes/square.obj"));
    ck_assert_int_eq(s.bodies[0].mesh.file[0], '/');
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    ck_assert_uint_eq(info.bodies[0].vertex_count, 4);
    ck_assert_uint_eq(info.bodies[0].triangle_count, 2);
    ck_assert_uint_gt(info.bodies[1].tet_count, 0);
    ck_assert_uint_gt(info.bodies[1].triangle_count, 0);
    ck_assert(fabs(body_mass(m, &info.bodies[1]) - 100.0) < 1e-9);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    /* The resolved scene names the file absolutely, so it loads from anywhere. */
    char *y = avi_scene_emit(&s);
    avi_scene t;
    load(y, "/nonexistent", &t);
    ck_assert_str_eq(t.bodies[0].mesh.file, s.bodies[0].mesh.file);
    free(y);
    avi_scene_free(&t);
    avi_scene_free(&s);

    build_fails("time: {end: 1}\n"
                "materials: {film: {model: membrane, youngs: 1, poisson: 0.2, density: 1, thickness: 0.01}}\n"
                "bodies:\n"
                "  - name: square\n"
                "    mesh: {file: square.obj}\n"
                "    material: film\n"
                "    pinned: {indices: [7]}\n",
                "data/meshes", "build.yaml:7: bodies.0.pinned.indices: vertex 7 out of range (the body has 4 vertices)");
    build_fails("time: {end: 1}\n"
                "materials: {film: {model: membrane, youngs: 1, poisson: 0.2, density: 1, thickness: 0.01}}\n"
                "bodies:\n"
                "  - name: cube\n"
                "    mesh: {file: unit_cube_v41.msh}\n"
                "    material: film\n",
                "data/meshes", "build.yaml:4: bodies.0.material: material 'film' (membrane) needs a triangle surface mesh");
}
END_TEST

START_TEST(test_build_errors)
{
    build_fails("time: {end: 1}\n"
                "materials: {film: {model: membrane, youngs: 1, poisson: 0.2, density: 1, thickness: 0.01}}\n"
                "bodies:\n"
                "  - name: sheet\n"
                "    mesh: {generator: rect, lx: 1, ly: 1, nx: 2, ny: 2}\n"
                "    material: film\n"
                "    translate: [5, 0, 0]\n"
                "    pinned: {box: [[-0.1, -0.1, -0.1], [0.1, 1.1, 0.1]]}\n",
                NULL, "build.yaml:8: bodies.0.pinned.box: the box pins no vertex");
    /* Jitter far beyond the edge length folds elements over. */
    build_fails("time: {end: 1}\n"
                "materials: {gel: {model: neo-hookean, youngs: 1, poisson: 0.2, density: 1}}\n"
                "bodies:\n"
                "  - name: block\n"
                "    mesh: {generator: tet_box, lx: 1, ly: 1, lz: 1, nx: 4, ny: 4, nz: 4, jitter: 5}\n"
                "    material: gel\n",
                NULL, "build.yaml:5: bodies.0.mesh");
}
END_TEST

/* mesh.reorder: the body's vertices and elements in Morton order, as
 * avi_mesh_reorder gives them; pinned.indices still name the mesh's own
 * vertices. */
START_TEST(test_mesh_reorder)
{
    const char *text = "time: {end: 1}\n"
                       "materials: {gel: {model: neo-hookean, youngs: 1, poisson: 0.2, density: 1}}\n"
                       "bodies:\n"
                       "  - name: block\n"
                       "    mesh: {generator: tet_box, lx: 4, ly: 1, lz: 1, nx: 8, ny: 2, nz: 2, reorder: true}\n"
                       "    material: gel\n"
                       "    velocity: [0, 0, 1]\n"
                       "    pinned: {indices: [0, 5, 44]}\n";
    avi_scene s;
    load(text, NULL, &s);
    ck_assert_int_eq(s.bodies[0].mesh.reorder, 1);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    avi_mesh ref;
    ck_assert_int_eq(avi_mesh_tet_box(4, 1, 1, 8, 2, 2, &ref, NULL), 0);
    uint32_t map[9 * 3 * 3];
    ck_assert_uint_eq(ref.vertex_count, 9 * 3 * 3);
    double pinned_at[3][3];
    const uint32_t pins[3] = {0, 5, 44};
    for (int k = 0; k < 3; k++) memcpy(pinned_at[k], ref.x[pins[k]], sizeof pinned_at[k]);
    ck_assert_int_eq(avi_mesh_reorder(&ref, map, NULL), 0);
    const avi_scene_body_info *b = &info.bodies[0];
    ck_assert_uint_eq(b->vertex_count, ref.vertex_count);
    ck_assert_uint_eq(b->tet_count, ref.tet_count);
    ck_assert_int_eq(memcmp(b->tets, ref.tets, ref.tet_count * sizeof ref.tets[0]), 0);
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    int pinned = 0;
    for (size_t i = 0; i < ref.vertex_count; i++) {
        ck_assert_int_eq(memcmp(x[i], ref.x[i], sizeof x[i]), 0);
        int is_pin = v[i][2] == 0.0;
        pinned += is_pin;
        int want = 0;
        for (int k = 0; k < 3; k++) want |= memcmp(x[i], pinned_at[k], sizeof x[i]) == 0;
        ck_assert_int_eq(is_pin, want);
    }
    ck_assert_int_eq(pinned, 3);
    /* the order differs from the generator's, or the test shows nothing */
    ck_assert(map[5] != 5 || map[44] != 44);
    free(x);
    free(v);
    avi_mesh_free(&ref);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);

    avi_error e;
    const char *bad = "time: {end: 1}\n"
                      "materials: {gel: {model: neo-hookean, youngs: 1, poisson: 0.2, density: 1}}\n"
                      "bodies:\n"
                      "  - name: block\n"
                      "    mesh: {generator: tet_box, lx: 1, ly: 1, lz: 1, nx: 2, ny: 2, nz: 2, reorder: morton}\n"
                      "    material: gel\n";
    ck_assert_int_eq(avi_scene_load_string(bad, strlen(bad), "build.yaml", NULL, NULL, 0, &s, &e), AVI_ERR_INPUT);
    ck_assert_msg(strstr(e.message, "build.yaml:5") && strstr(e.message, "bodies.0.mesh.reorder"), "%s", e.message);

    /* A bad mesh is reported in its own numbering: the same message with
     * and without reorder (jitter far beyond the edge length folds it). */
    char msg[2][sizeof e.message];
    for (int r = 0; r < 2; r++) {
        char text2[512];
        snprintf(text2, sizeof text2,
                 "time: {end: 1}\n"
                 "materials: {gel: {model: neo-hookean, youngs: 1, poisson: 0.2, density: 1}}\n"
                 "bodies:\n"
                 "  - name: block\n"
                 "    mesh: {generator: tet_box, lx: 1, ly: 1, lz: 1, nx: 4, ny: 4, nz: 4, jitter: 5, reorder: %s}\n"
                 "    material: gel\n",
                 r ? "true" : "false");
        avi_model *bad_m = NULL;
        load(text2, NULL, &s);
        ck_assert_int_eq(avi_scene_build(&s, &bad_m, &info, &e), AVI_ERR_INPUT);
        ck_assert_ptr_null(bad_m);
        snprintf(msg[r], sizeof msg[r], "%s", e.message);
        avi_scene_free(&s);
    }
    ck_assert_msg(strstr(msg[0], "bodies.0.mesh"), "%s", msg[0]);
    ck_assert_str_eq(msg[0], msg[1]);
}
END_TEST

/* Bodies a and b at t = 0, b translated by `shift` (YAML), contact on
 * unless `contact` is 0; `extra` adds keys to a. */
static void two_bodies(char *text, size_t len, const char *mesh, const char *shift, int contact, const char *extra)
{
    snprintf(text, len,
             "time: {end: 1}\n"
             "materials: {film: {model: shell, youngs: 1e8, poisson: 0.3, density: 1000, thickness: 1e-4}}\n"
             "bodies:\n"
             "  - {name: a, mesh: %s, material: film%s}\n"
             "  - {name: b, mesh: %s, material: film, translate: %s}\n"
             "%s",
             mesh, extra, mesh, shift, contact ? "contact: {thickness: 1e-3, inner_thickness: 2e-4}\n" : "");
}

START_TEST(test_bodies_at_t0)
{
    const char *sphere = "{generator: icosphere, radius: 0.1, subdivisions: 2}";
    const char *sheet = "{generator: rect, lx: 0.1, ly: 0.1, nx: 4, ny: 4}";
    char text[1024];
    /* centres closer than the sum of the radii */
    two_bodies(text, sizeof text, sphere, "[0.15, 0, 0]", 1, "");
    build_fails(text, NULL, "bodies 'a' (bodies.0) and 'b' (bodies.1) intersect at t = 0: edge (");
    build_fails(text, NULL, "of 'a' passes through surface triangle");
    /* the same without contact: bodies may pass through each other */
    two_bodies(text, sizeof text, sphere, "[0.15, 0, 0]", 0, "");
    avi_scene s;
    load(text, NULL, &s);
    avi_model_destroy(build(&s, NULL));
    avi_scene_free(&s);

    /* sheets inside the inner thickness, and just outside it */
    two_bodies(text, sizeof text, sheet, "[0, 0, 1e-4]", 1, "");
    build_fails(text, NULL, "come closer than contact.inner_thickness = 0.0002 at t = 0: vertex ");
    build_fails(text, NULL, "is 0.0001 from surface triangle");
    build_fails(text, NULL, "bodies.1.translate");
    two_bodies(text, sizeof text, sheet, "[0, 0, 2.01e-4]", 1, "");
    load(text, NULL, &s);
    avi_model_destroy(build(&s, NULL));
    avi_scene_free(&s);
    /* a pinned obstacle takes part like any body */
    two_bodies(text, sizeof text, sheet, "[0, 0, 1e-4]", 1, ", pinned: {boundary: simply-supported}");
    build_fails(text, NULL, "come closer than contact.inner_thickness");

    /* a particle (a contact point) on a sheet */
    const char *dust = "time: {end: 1}\n"
                       "materials: {film: {model: shell, youngs: 1e8, poisson: 0.3, density: 1000, thickness: 1e-4}}\n"
                       "bodies:\n"
                       "  - {name: sheet, mesh: {generator: rect, lx: 0.1, ly: 0.1, nx: 4, ny: 4}, material: film}\n"
                       "  - name: dust\n"
                       "    particles: [{x: [0.03, 0.04, 5e-5], mass: 1e-6}]\n"
                       "contact: {thickness: 1e-3, inner_thickness: 2e-4}\n";
    build_fails(dust, NULL, "bodies 'dust' (bodies.1) and 'sheet' (bodies.0) come closer than contact.inner_thickness "
                            "= 0.0002 at t = 0: vertex 0 of 'dust' is 5e-05 from surface triangle");

    /* a body's own surface, finer than the inner thickness */
    const char *fine = "time: {end: 1}\n"
                       "materials: {film: {model: shell, youngs: 1e8, poisson: 0.3, density: 1000, thickness: 1e-4}}\n"
                       "bodies:\n"
                       "  - {name: sheet, mesh: {generator: rect, lx: 0.01, ly: 0.01, nx: 40, ny: 40}, material: film}\n"
                       "contact: {thickness: 1e-3, inner_thickness: 4e-4}\n";
    build_fails(fine, NULL, "body 'sheet' (bodies.0) comes closer to itself than contact.inner_thickness");
}
END_TEST

/* Overlapping tetrahedra in a mesh file: the scene, the file, its line
 * and both tetrahedra are named. */
START_TEST(test_overlapping_tets_file)
{
    const char *text = "time: {end: 1}\n"
                       "materials: {gel: {model: neo-hookean, youngs: 1, poisson: 0.2, density: 1}}\n"
                       "bodies:\n"
                       "  - {name: block, mesh: {file: overlapping_tets.msh}, material: gel}\n";
    build_fails(text, "tests/data/meshes", "build.yaml:4: bodies.0.mesh.file: ");
    build_fails(text, "tests/data/meshes",
                "tests/data/meshes/overlapping_tets.msh:15: tetrahedra 0 (vertices 0, 1, 2, 3) and 1 (vertices 0, 1, 2, "
                "4) overlap");
}
END_TEST

/* Runs build() with stderr caught in a temporary file; returns what was
 * written (freed by the caller). */
static char *build_catching_stderr(const avi_scene *s, avi_scene_bodies *info, avi_model **m)
{
    fflush(stderr);
    FILE *tmp = tmpfile();
    ck_assert_ptr_nonnull(tmp);
    int saved = dup(2);
    dup2(fileno(tmp), 2);
    *m = build(s, info);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    long n = ftell(tmp);
    char *text = calloc((size_t)n + 1, 1);
    rewind(tmp);
    ck_assert_uint_eq(fread(text, 1, (size_t)n, tmp), (size_t)n);
    fclose(tmp);
    return text;
}

/* Gmsh keeps geometry and size-control points among a mesh's nodes; such
 * files (both .msh versions) and an .obj with a construction vertex build,
 * dropping the unused vertices with one note on stderr; pinned.indices
 * still name the file's own vertices. */
START_TEST(test_mesh_file_unused_vertices)
{
    static const struct {
        const char *file, *material, *note;
        size_t kept, elements;
        uint32_t pin;    /* a kept vertex in the file's numbers: at (1, 0, 0) */
        uint32_t unused; /* a dropped one */
    } cases[] = {
        {"unused_nodes_v22.msh", "gel", "dropped 2 of 7 nodes that no tetrahedron uses", 5, 2, 2, 1},
        {"unused_nodes_v41.msh", "gel", "dropped 2 of 7 nodes that no tetrahedron uses", 5, 2, 3, 0},
        {"unused_vertices.obj", "film", "dropped 1 of 5 nodes that no triangle uses", 4, 2, 2, 1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text,
                 "time: {end: 1}\n"
                 "materials:\n"
                 "  film: {model: membrane, youngs: 1.0e5, poisson: 0.2, density: 100, thickness: 0.01}\n"
                 "  gel: {model: neo-hookean, youngs: 1.0e5, poisson: 0.3, density: 100}\n"
                 "bodies:\n"
                 "  - {name: b, mesh: {file: %s}, material: %s, velocity: [0, 0, 1], pinned: {indices: [%u]}}\n",
                 cases[i].file, cases[i].material, cases[i].pin);
        avi_scene s;
        load(text, "tests/data/meshes", &s);
        avi_scene_bodies info;
        avi_model *m;
        char *err = build_catching_stderr(&s, &info, &m);
        ck_assert_msg(strstr(err, cases[i].note) && strstr(err, cases[i].file), "%s: stderr '%s'", cases[i].file, err);
        ck_assert_msg(strstr(strstr(err, "dropped") + 1, "dropped") == NULL, "said more than once: %s", err);
        free(err);
        const avi_scene_body_info *b = &info.bodies[0];
        ck_assert_uint_eq(b->vertex_count, cases[i].kept);
        ck_assert_uint_eq(b->tet_count ? b->tet_count : b->triangle_count, cases[i].elements);
        double (*x)[3], (*v)[3];
        initial_state(m, &x, &v);
        size_t pinned = 0;
        for (uint32_t k = 0; k < b->vertex_count; k++) {
            /* the unused points (0.5, 0.5, 0.5), (2, 2, 2), (5, 5, 5) are gone */
            ck_assert_msg(x[k][0] + x[k][1] + x[k][2] <= 2.0, "%s: vertex %u kept", cases[i].file, k);
            if (v[k][2] == 0.0) {
                pinned++;
                ck_assert(x[k][0] == 1.0 && x[k][1] == 0.0 && x[k][2] == 0.0);
            }
        }
        ck_assert_uint_eq(pinned, 1);
        free(x);
        free(v);
        avi_model_destroy(m);
        avi_scene_bodies_free(&info);
        avi_scene_free(&s);

        /* A pin on a dropped vertex names it. */
        snprintf(text, sizeof text,
                 "time: {end: 1}\n"
                 "materials:\n"
                 "  film: {model: membrane, youngs: 1.0e5, poisson: 0.2, density: 100, thickness: 0.01}\n"
                 "  gel: {model: neo-hookean, youngs: 1.0e5, poisson: 0.3, density: 100}\n"
                 "bodies:\n"
                 "  - {name: b, mesh: {file: %s}, material: %s, pinned: {indices: [%u]}}\n",
                 cases[i].file, cases[i].material, cases[i].unused);
        char want[128];
        snprintf(want, sizeof want, "pinned.indices: vertex %u is used by no element of the mesh file", cases[i].unused);
        fflush(stderr);
        int saved = dup(2), null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        build_fails(text, "tests/data/meshes", want);
        dup2(saved, 2);
        close(saved);
        close(null);
    }
}
END_TEST

/* generator: ball is avi_mesh_tet_ball_shells (shells: true, the default)
 * or avi_mesh_tet_ball_graded (shells: false), turned so that the graded
 * pole points along `pole`; its keys are checked like any generator's. */
static avi_scene ball_scene(const char *mesh)
{
    char text[1024];
    snprintf(text, sizeof text,
             "time: {end: 1e-3}\n"
             "materials: {rubber: {model: neo-hookean, youngs: 1e6, poisson: 0.4, density: 1000}}\n"
             "bodies:\n"
             "  - {name: ball, mesh: %s, material: rubber, translate: [0, 0, 1]}\n",
             mesh);
    avi_scene s;
    load(text, NULL, &s);
    return s;
}

/* The built body's rest positions (translate removed) against a mesh
 * turned by x -> R x. */
static void assert_ball_is(const char *mesh_text, const avi_mesh *want, const double R[3][3], double tol)
{
    avi_scene s = ball_scene(mesh_text);
    avi_scene_bodies info;
    avi_model *m = build(&s, &info);
    ck_assert_uint_eq(info.bodies[0].vertex_count, want->vertex_count);
    ck_assert_uint_eq(info.bodies[0].tet_count, want->tet_count);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_TET), want->tet_count);
    for (size_t t = 0; t < want->tet_count; t++)
        for (int k = 0; k < 4; k++) ck_assert_uint_eq(info.bodies[0].tets[t][k], want->tets[t][k]);
    double (*x)[3], (*v)[3];
    initial_state(m, &x, &v);
    for (size_t i = 0; i < want->vertex_count; i++)
        for (int r = 0; r < 3; r++) {
            double w = R[r][0] * want->x[i][0] + R[r][1] * want->x[i][1] + R[r][2] * want->x[i][2] + (r == 2 ? 1.0 : 0.0);
            ck_assert_msg(fabs(x[i][r] - w) <= tol, "%s: vertex %zu[%d] %.17g, want %.17g", mesh_text, i, r, x[i][r], w);
        }
    free(x);
    free(v);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
}

START_TEST(test_ball_generator)
{
    const double I[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    const double north[3][3] = {{1, 0, 0}, {0, -1, 0}, {0, 0, -1}};
    /* (0, 0, -1) onto (1, 0, 0): a quarter turn about y. */
    const double east[3][3] = {{0, 0, -1}, {0, 1, 0}, {1, 0, 0}};
    avi_mesh want;
    avi_error e;
    ck_assert_int_eq(avi_mesh_tet_ball_shells(0.01, 4, 0.0, &want, &e), AVI_OK);
    assert_ball_is("{generator: ball, radius: 0.01, n: 4}", &want, I, 0.0);
    avi_mesh_free(&want);
    ck_assert_int_eq(avi_mesh_tet_ball_graded(0.01, 4, 0.0, &want, &e), AVI_OK);
    assert_ball_is("{generator: ball, radius: 0.01, n: 4, shells: false}", &want, I, 0.0);
    avi_mesh_free(&want);
    ck_assert_int_eq(avi_mesh_tet_ball_shells(0.01, 6, 0.5, &want, &e), AVI_OK);
    assert_ball_is("{generator: ball, radius: 0.01, n: 6, grading: 0.5}", &want, I, 0.0);
    assert_ball_is("{generator: ball, radius: 0.01, n: 6, grading: 0.5, pole: [0, 0, -3]}", &want, I, 0.0);
    assert_ball_is("{generator: ball, radius: 0.01, n: 6, grading: 0.5, pole: [0, 0, 2]}", &want, north, 0.0);
    assert_ball_is("{generator: ball, radius: 0.01, n: 6, grading: 0.5, pole: [5, 0, 0]}", &want, east, 1e-17);
    avi_mesh_free(&want);

    /* The emitted scene names the same ball. */
    avi_scene s = ball_scene("{generator: ball, radius: 0.01, n: 6, grading: 0.25, pole: [1, 2, -3], shells: false}");
    char *text = avi_scene_emit(&s);
    ck_assert_ptr_nonnull(text);
    ck_assert_msg(strstr(text, "generator: ball") && strstr(text, "n: 6") && strstr(text, "shells: false"), "%s", text);
    avi_scene again;
    load(text, NULL, &again);
    const avi_scene_mesh *a = &s.bodies[0].mesh, *b = &again.bodies[0].mesh;
    ck_assert(b->source == AVI_MESH_BALL && a->radius == b->radius && a->n == b->n && a->grading == b->grading &&
              a->shells == b->shells && a->pole[0] == b->pole[0] && a->pole[1] == b->pole[1] && a->pole[2] == b->pole[2]);
    free(text);
    avi_scene_free(&again);
    avi_scene_free(&s);
}
END_TEST

static void ball_load_fails(const char *mesh, const char *want)
{
    char text[1024], m[256];
    /* " #shell" at the end asks for a shell material */
    const char *shell = strstr(mesh, " #shell");
    snprintf(m, sizeof m, "%.*s", shell ? (int)(shell - mesh) : (int)strlen(mesh), mesh);
    snprintf(text, sizeof text,
             "time: {end: 1e-3}\n"
             "materials: {rubber: {model: neo-hookean, youngs: 1e6, poisson: 0.4, density: 1000},\n"
             "            steel: {model: shell, youngs: 2e11, poisson: 0.3, density: 7850, thickness: 1e-3}}\n"
             "bodies:\n"
             "  - {name: ball, mesh: %s, material: %s}\n",
             m, shell ? "steel" : "rubber");
    avi_scene s;
    avi_error e;
    ck_assert_int_eq(avi_scene_load_string(text, strlen(text), "build.yaml", NULL, NULL, 0, &s, &e), AVI_ERR_INPUT);
    ck_assert_msg(strstr(e.message, want), "%s: '%s' lacks '%s'", mesh, e.message, want);
    avi_scene_free(&s);
}

START_TEST(test_ball_generator_bad_input)
{
    ball_load_fails("{generator: ball, n: 4}", "bodies.0.mesh.radius: required");
    ball_load_fails("{generator: ball, radius: 1}", "bodies.0.mesh.n: required");
    ball_load_fails("{generator: ball, radius: -1, n: 4}", "bodies.0.mesh.radius: must be > 0");
    ball_load_fails("{generator: ball, radius: 1, n: 0}", "bodies.0.mesh.n");
    ball_load_fails("{generator: ball, radius: 1, n: 1025}", "bodies.0.mesh.n");
    ball_load_fails("{generator: ball, radius: 1, n: 300}", "mesh too large");
    ball_load_fails("{generator: ball, radius: 1, n: 4, grading: 1}", "bodies.0.mesh.grading: must be in [0, 1)");
    ball_load_fails("{generator: ball, radius: 1, n: 4, grading: -0.1}", "bodies.0.mesh.grading: must be >= 0");
    ball_load_fails("{generator: ball, radius: 1, n: 4, pole: [0, 0, 0]}", "bodies.0.mesh.pole: must be a non-zero");
    ball_load_fails("{generator: ball, radius: 1, n: 4, pole: [0, 0]}", "bodies.0.mesh.pole");
    ball_load_fails("{generator: ball, radius: 1, n: 4, shells: 2}", "bodies.0.mesh.shells");
    ball_load_fails("{generator: ball, radius: 1, n: 4, rings: 3}",
                    "not a parameter of generator ball (takes: radius n grading pole shells");
    ball_load_fails("{generator: ball, radius: 1, n: 4, colour: red}", "unknown key (ball takes: radius n grading");
    ball_load_fails("{generator: ball, radius: 1, n: 4} #shell", "needs a triangle mesh; ball makes tetrahedra");
    /* Loads, but no double holds its cells: the build names the radius. */
    build_fails("time: {end: 1e-3}\n"
                "materials: {rubber: {model: neo-hookean, youngs: 1e6, poisson: 0.4, density: 1000}}\n"
                "bodies:\n"
                "  - {name: ball, mesh: {generator: ball, radius: 1e-300, n: 4}, material: rubber}\n",
                NULL, "radius 1e-300 is out of range");
    /* A solid has no open boundary: say so, and what it is. */
    build_fails("time: {end: 1e-3}\n"
                "materials: {rubber: {model: neo-hookean, youngs: 1e6, poisson: 0.4, density: 1000}}\n"
                "bodies:\n"
                "  - {name: ball, mesh: {generator: ball, radius: 1, n: 4}, material: rubber,\n"
                "     pinned: {boundary: clamped}}\n",
                NULL, "a neo-hookean solid (tetrahedra) has no slope to hold");
    build_fails("time: {end: 1e-3}\n"
                "materials: {rubber: {model: neo-hookean, youngs: 1e6, poisson: 0.4, density: 1000}}\n"
                "bodies:\n"
                "  - {name: ball, mesh: {generator: ball, radius: 1, n: 4}, material: rubber,\n"
                "     pinned: {boundary: simply-supported}}\n",
                NULL, "a solid (tetrahedra) has no open boundary to pin; use pinned: box or indices");
}
END_TEST

static Suite *scene_build_suite(void)
{
    Suite *s = suite_create("scene_build");
    TCase *tc = tcase_create("build");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_builtins_build);
    tcase_add_test(tc, test_sphere_plate_model);
    tcase_add_test(tc, test_bar_model);
    tcase_add_test(tc, test_spring_chain_model);
    tcase_add_test(tc, test_sheet_pins_edge);
    tcase_add_test(tc, test_material_models);
    tcase_add_test(tc, test_particles);
    tcase_add_test(tc, test_mesh_files);
    tcase_add_test(tc, test_build_errors);
    tcase_add_test(tc, test_mesh_reorder);
    tcase_add_test(tc, test_bodies_at_t0);
    tcase_add_test(tc, test_overlapping_tets_file);
    tcase_add_test(tc, test_mesh_file_unused_vertices);
    tcase_add_test(tc, test_ball_generator);
    tcase_add_test(tc, test_ball_generator_bad_input);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(scene_build_suite)
