/* A clamped square plate sagging under its own weight settles to the static
 * Kirchhoff deflection through the implicit integrator with damping, the
 * path that assembles the mid-edge Hessian (src/potentials/midedge_hessian.c)
 * and its damping potential (src/core/damping.c).
 *
 * A polymer plate h = 5 mm (E = 2e8, nu = 0.3, rho = 7850), side a = 0.1 m,
 * rim pinned and clamped (bending: midedge, boundary: clamped), uniform load
 * q = rho h g. Kirchhoff's centre deflection of the clamped square is
 *   w = 0.00126532 q a^4 / D,  D = E h^3 / (12 (1 - nu^2))
 * (Timoshenko and Woinowsky-Krieger, "Theory of plates and shells", 1959,
 * section 44, table 35: 0.00126 with the series to more digits). w is
 * 2.1e-5 m here, w / h 4e-3: the linear regime (a stiffer plate sags so
 * little, 2e-7 a for steel, that positions and forces resolve it only to
 * ~1e-9).
 *
 * sync-implicit (alpha = 1/2) with large steps and damping: for a mode with
 * omega h >> 1 the mass drops out, and with a = the midpoint force over the
 * stiffness and u the distance from the static state, one step maps
 * (u_k, a_(k-1)) by [[1 - c, -c], [1 - c/2, -c/2]], c = h / (h/2 + 2 k_D)
 * (the damping force k_D K v, Kharevych et al. 2006, section 5.2). Its
 * eigenvalues are a double 1/3 at c = 2/9, k_D = 2 h, the fastest settling
 * (k_D = h/4 gives |r| = 0.71: 38 steps instead of 14). h = 1e-2 s
 * (omega_1 h = 8.7): each step's Newton guess p_k / m lies off by about
 * h/2 times the static force over the mass, h^2 g / 2 in position, 5 cm
 * at h = 0.1 s, where Newton starts from a folded plate. The run stops
 * when a step moves no vertex by more than 1e-5 w. */
#include "../unit/check_main.h"
#include "avi/avi.h"
#include "core/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define E_Y 2e8
#define NU 0.3
#define RHO 7850.0
#define H 0.005
#define SIDE 0.1
#define G 9.81

static double kirchhoff_deflection(void)
{
    double D = E_Y * H * H * H / (12.0 * (1.0 - NU * NU));
    return 0.00126532 * RHO * H * G * pow(SIDE, 4) / D;
}

/* Centre deflection of the clamped plate on the `rect` grid with n cells per
 * side; *steps: the implicit steps it took to settle. */
static double settled_deflection(int n, int *steps)
{
    avi_mesh mesh = {0};
    avi_error err;
    ck_assert_int_eq(avi_mesh_rect_grid(SIDE, SIDE, n, n, &mesh, &err), 0);
    avi_model *m = avi_model_create();
    int body = avi_model_add_body(m, "plate");
    uint32_t centre = 0;
    for (size_t v = 0; v < mesh.vertex_count; v++) {
        const double *x = mesh.x[v];
        ck_assert(avi_model_add_vertex(m, body, x) >= 0);
        if (fmin(fmin(x[0], x[1]), fmin(SIDE - x[0], SIDE - x[1])) < 1e-9 * SIDE)
            ck_assert_int_eq(avi_model_pin(m, (uint32_t)v), 0);
        if (hypot(x[0] - 0.5 * SIDE, x[1] - 0.5 * SIDE) < 1e-9 * SIDE) centre = (uint32_t)v;
    }
    ck_assert(hypot(mesh.x[centre][0] - 0.5 * SIDE, mesh.x[centre][1] - 0.5 * SIDE) < 1e-9 * SIDE);
    avi_shell_material mat = {E_Y, NU, RHO, H};
    ck_assert_int_eq(avi_model_add_shell_mesh(m, (const uint32_t (*)[3])mesh.triangles, mesh.triangle_count, &mat,
                                              AVI_BENDING_MIDEDGE, 1), 0);
    const double g[3] = {0.0, 0.0, -G};
    avi_model_set_gravity(m, g);
    ck_assert_int_eq(avi_model_finalize(m, NULL), 0);
    avi_sync_options o = avi_default_sync_options();
    o.type = AVI_INTEGRATOR_SYNC_IMPLICIT;
    o.h = 1e-2;
    o.damping = 2.0 * o.h;
    /* The membranes' strain is (w / a)^2 ~ 4e-8, formed from lengths of
     * 0.003 m with round-off 1e-16: their forces carry relative errors
     * ~3e-9, and the residual floors near 2e-10 of its scale. */
    o.tolerance = 1e-8;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    double w = kirchhoff_deflection(), *x = malloc(3 * m->nv * sizeof *x), *prev = calloc(3 * m->nv, sizeof *x);
    int k;
    for (k = 1; k <= 40; k++) {
        ck_assert_msg(avi_engine_advance(e, k * o.h) == AVI_OK, "%s", avi_engine_error(e)->message);
        avi_engine_state_at(e, k * o.h, x, NULL);
        double move = 0.0;
        for (size_t i = 0; i < 3 * m->nv; i++) move = fmax(move, fabs(x[i] - prev[i]));
        for (size_t i = 0; i < 3 * m->nv; i++) prev[i] = x[i];
        if (move < 1e-5 * w) break;
    }
    ck_assert_int_le(k, 40);
    *steps = k;
    double z = -x[3 * centre + 2];
    free(x);
    free(prev);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_mesh_free(&mesh);
    return z;
}

START_TEST(test_clamped_plate_sag)
{
    const int n[2] = {16, 32};
    double ratio[2], w = kirchhoff_deflection();
    for (int k = 0; k < 2; k++) {
        int steps;
        ratio[k] = settled_deflection(n[k], &steps) / w;
        printf("  clamped square, rect grid n = %2d: centre deflection / Kirchhoff %.4f (%d steps of 1e-2 s)\n", n[k],
               ratio[k], steps);
    }
    ck_assert_msg(fabs(ratio[1] - 1.0) <= 0.03, "n = %d: %.4f", n[1], ratio[1]);
    ck_assert_msg(fabs(ratio[1] - 1.0) < fabs(ratio[0] - 1.0), "error does not fall: %.4f, %.4f", ratio[0], ratio[1]);
}
END_TEST

static Suite *plate_suite(void)
{
    Suite *s = suite_create("plate_deflection");
    TCase *tc = tcase_create("plate_deflection");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_clamped_plate_sag);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(plate_suite)
