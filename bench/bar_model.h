/* The bar of bench/events as a model (same mesh, material, stretch and
 * steps), for the scaling models bench/pmodel.c and bench/mpimodel.c. */
#ifndef AVI_BENCH_BAR_MODEL_H
#define AVI_BENCH_BAR_MODEL_H

#include "avi/avi.h"
#include "avi/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* A tet bar of about `tets` elements, 4:1:1, interior jittered, reordered,
 * stretched 10 %, cfl steps (delta 0.1); exits 1 naming `prog` on failure. */
static inline avi_model *bench_bar_model(double tets, const char *prog)
{
    double k = cbrt(tets / 24.0);
    int nx = (int)lround(4.0 * k), ny = (int)lround(k), nz;
    if (ny < 1) ny = 1;
    if (nx < 1) nx = 1;
    nz = (int)lround(tets / (6.0 * nx * ny));
    if (nz < 1) nz = 1;
    double h = 1.0 / ny;
    avi_mesh mesh = {0};
    avi_error err;
    if (avi_mesh_tet_box(h * nx, h * ny, h * nz, nx, ny, nz, &mesh, &err) ||
        avi_mesh_jitter_interior(&mesh, 0.2 * h, 42, &err) || avi_mesh_reorder(&mesh, NULL, &err)) {
        fprintf(stderr, "%s: %s\n", prog, err.message);
        exit(1);
    }
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "bar");
    for (size_t i = 0; i < mesh.vertex_count; i++) avi_model_add_vertex(m, b, mesh.x[i]);
    const avi_solid_material mat = {1.0, 0.0, 1.0};
    for (size_t t = 0; t < mesh.tet_count; t++) {
        const uint32_t *v = mesh.tets[t];
        if (avi_model_add_tet(m, v[0], v[1], v[2], v[3], &mat)) {
            fprintf(stderr, "%s: %s\n", prog, avi_model_error(m)->message);
            exit(1);
        }
    }
    for (size_t i = 0; i < mesh.vertex_count; i++) {
        double x[3] = {1.1 * mesh.x[i][0], 1.1 * mesh.x[i][1], 1.1 * mesh.x[i][2]};
        avi_model_set_state(m, (uint32_t)i, x, NULL);
    }
    avi_mesh_free(&mesh);
    avi_time_step rule = avi_default_time_step();
    rule.rule = AVI_DT_CFL;
    rule.delta = 0.1;
    if (avi_model_finalize(m, &rule)) {
        fprintf(stderr, "%s: %s\n", prog, avi_model_error(m)->message);
        exit(1);
    }
    return m;
}

#endif
