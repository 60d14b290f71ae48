/* The graded models of test_conservation.c, shared with long_energy.c:
 * a rubber tetrahedral bar (1:100 grading) and a thin steel strip (1:30),
 * pre-stretched about the centroid, spinning, drifting and rippling.
 * Builders return NULL when a step fails. */
#ifndef AVI_GRADED_MODELS_H
#define AVI_GRADED_MODELS_H

#include "avi/avi.h"
#include "avi/mesh.h"

#include <math.h>

static const avi_solid_material rubber = {1.0e6, 0.3, 1000.0};
static const avi_shell_material steel = {2.0e11, 0.3, 7850.0, 0.0035};

/* Exponential grading of x in [0, L]: the last cell is about `ratio` times
 * the first, so stable time steps spread by about as much. */
static void grade_x(avi_mesh *mesh, double L, double ratio, int cells)
{
    double a = log(ratio) * cells / (cells - 1.0);
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        double u = mesh->x[i][0] / L;
        mesh->x[i][0] = L * (exp(a * u) - 1.0) / (exp(a) - 1.0);
    }
}

/* How a model is set up: time-step levels per octave (0: exact steps, -1:
 * the default rule's), safety (0: the default), pre-stretch (0: 1.05) and,
 * for the shell, its bending model (0: hinge). */
typedef struct {
    int levels;
    double safety;
    double stretch;
    avi_bending bending;
} graded_setup;

/* Initial state: pre-stretch about the centroid, a rigid spin about an
 * oblique axis, a drift, and a deterministic ripple, so that both momenta
 * are non-zero and the body vibrates. */
static int set_initial_state(avi_model *m, const avi_mesh *mesh, double speed, double stretch)
{
    double c[3] = {0, 0, 0};
    for (size_t i = 0; i < mesh->vertex_count; i++)
        for (int k = 0; k < 3; k++) c[k] += mesh->x[i][k] / (double)mesh->vertex_count;
    const double w[3] = {0.3 * speed, -0.5 * speed, 0.8 * speed};
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        double r[3], x[3], v[3];
        for (int k = 0; k < 3; k++) r[k] = mesh->x[i][k] - c[k];
        for (int k = 0; k < 3; k++) x[k] = c[k] + stretch * r[k];
        v[0] = w[1] * r[2] - w[2] * r[1] + 0.2 * speed + 0.05 * speed * sin(7.0 * i);
        v[1] = w[2] * r[0] - w[0] * r[2] - 0.1 * speed + 0.05 * speed * cos(5.0 * i);
        v[2] = w[0] * r[1] - w[1] * r[0] + 0.05 * speed * sin(3.0 * i + 1.0);
        if (avi_model_set_state(m, (uint32_t)i, x, v)) return -1;
    }
    return 0;
}

static avi_model *finish_graded(avi_model *m, const avi_mesh *mesh, double speed, graded_setup g, int rc)
{
    avi_time_step rule = avi_default_time_step();
    if (g.levels >= 0) rule.levels_per_octave = g.levels;
    if (g.safety > 0.0) rule.safety = g.safety;
    if (rc || set_initial_state(m, mesh, speed, g.stretch > 0.0 ? g.stretch : 1.05) || avi_model_finalize(m, &rule)) {
        avi_model_destroy(m);
        return NULL;
    }
    return m;
}

static avi_model *graded_tet_bar_with(graded_setup g)
{
    avi_mesh mesh = {0};
    if (avi_mesh_tet_box(1.0, 0.2, 0.2, 12, 3, 3, &mesh, NULL)) return NULL;
    grade_x(&mesh, 1.0, 100.0, 12);
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "bar");
    for (size_t i = 0; i < mesh.vertex_count; i++) avi_model_add_vertex(m, b, mesh.x[i]);
    int rc = 0;
    for (size_t t = 0; t < mesh.tet_count && !rc; t++) {
        const uint32_t *v = mesh.tets[t];
        rc = avi_model_add_tet(m, v[0], v[1], v[2], v[3], &rubber);
    }
    m = finish_graded(m, &mesh, 1.0, g, rc);
    avi_mesh_free(&mesh);
    return m;
}

static avi_model *graded_shell_with(graded_setup g)
{
    avi_mesh mesh = {0};
    if (avi_mesh_rect_grid(0.5, 0.2, 16, 3, &mesh, NULL)) return NULL;
    grade_x(&mesh, 0.5, 30.0, 16);
    /* A gentle curvature so bending is active from the start. */
    for (size_t i = 0; i < mesh.vertex_count; i++) mesh.x[i][2] = 0.05 * sin(3.0 * mesh.x[i][0]) * mesh.x[i][1];
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "sheet");
    for (size_t i = 0; i < mesh.vertex_count; i++) avi_model_add_vertex(m, b, mesh.x[i]);
    int rc = avi_model_add_shell_mesh(m, (const uint32_t (*)[3])mesh.triangles, mesh.triangle_count, &steel,
                                      g.bending ? g.bending : AVI_BENDING_HINGE, 0);
    m = finish_graded(m, &mesh, 10.0, g, rc);
    avi_mesh_free(&mesh);
    return m;
}

#endif
