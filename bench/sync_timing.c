/* Minimization versus root finding for the implicit synchronous update
 * (Kharevych et al. 2006, section 5.4): the rod of Fig. 2 at about 330, 2000
 * and 3784 vertices, h = 0.01, alpha = 1/2, the same tolerance, initial
 * guess (v = p_k / m), residual, convergence test and linear solver for
 * both. Prints a markdown table: wall time, Newton iterations, line-search
 * backtracks, objective / residual evaluations and linear-solver work.
 *
 *   build/bench/sync_timing [steps_scale] [cholmod|pcg] [h]
 *
 * A larger h (e.g. 0.1) makes the first Newton steps leave the region where
 * full steps are accepted, so that the two line searches matter. */
#include "avi/avi.h"
#include "avi/sync.h"
#include "bench_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    int nx, ny, nz, steps;
} resolution;

static double step_h = 0.01;

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int run(const resolution *r, avi_integrator_type type, avi_linear_solver solver, double tol, double *wall,
               double *cpu, avi_sync_stats *st, double *energy)
{
    double c = 1.4 / r->nx;
    char text[1200];
    snprintf(text, sizeof text,
             "time: {end: 1.0}\n"
             "integrator: {type: sync-implicit}\n"
             "time_step: {fixed: 0.01}\n"
             "materials:\n"
             "  rubber: {model: neo-hookean, youngs: 3.0e4, poisson: 0.3, density: 1000.0}\n"
             "bodies:\n"
             "  - name: rod\n"
             "    mesh: {generator: tet_box, lx: 1.4, ly: %.17g, lz: %.17g, nx: %d, ny: %d, nz: %d}\n"
             "    material: rubber\n"
             "    velocity: [0.01, 0.02, 0.0]\n"
             "    angular_velocity: [0.5, 0.0, 0.3]\n"
             "    initial: {scale: 1.05}\n",
             c * r->ny, c * r->nz, r->nx, r->ny, r->nz);
    avi_scene sc;
    avi_error err;
    avi_model *m = NULL;
    if (avi_scene_load_string(text, strlen(text), "rod.yaml", NULL, NULL, 0, &sc, &err) ||
        avi_scene_build(&sc, &m, NULL, &err)) {
        fprintf(stderr, "sync_timing: %s\n", err.message);
        return -1;
    }
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.alpha = 0.5;
    o.h = step_h;
    o.tolerance = tol;
    o.linear_solver = solver;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    if (!e) {
        fprintf(stderr, "sync_timing: %s\n", err.message);
        return -1;
    }
    double t0 = bench_now(), c0 = cpu_now();
    int rc = avi_engine_advance(e, r->steps * step_h);
    *wall = bench_now() - t0;
    *cpu = cpu_now() - c0;
    if (rc) fprintf(stderr, "sync_timing: %s\n", avi_engine_error(e)->message);
    avi_engine_sync_stats(e, st);
    avi_observation ob;
    avi_engine_observe(e, r->steps * step_h, &ob);
    *energy = ob.total;
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_free(&sc);
    return rc;
}

int main(int argc, char **argv)
{
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    avi_linear_solver solver = argc > 2 && !strcmp(argv[2], "pcg") ? AVI_SOLVER_PCG : AVI_SOLVER_CHOLMOD;
    if (argc > 3) step_h = atof(argv[3]);
    const double tol = 1e-8;
    resolution res[3] = {{21, 4, 2, 100}, {39, 9, 4, 20}, {42, 10, 7, 10}};
    printf("linear solver: %s, tolerance %g, h = %g, alpha = 1/2\n\n", solver == AVI_SOLVER_PCG ? "PCG" : "CHOLMOD",
           tol, step_h);
    printf("| vertices | tets | steps | method | CPU (s) | wall (s) | CPU s/step | Newton it. | backtracks | "
           "objective evals | residual evals | %s | final energy (J) |\n",
           solver == AVI_SOLVER_PCG ? "CG it." : "factorizations");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < 3; k++) {
        resolution r = res[k];
        r.steps = (int)(r.steps * scale) > 0 ? (int)(r.steps * scale) : 1;
        int nv = (r.nx + 1) * (r.ny + 1) * (r.nz + 1), nt = 6 * r.nx * r.ny * r.nz;
        double wall[2], cpu[2];
        for (int method = 0; method < 2; method++) {
            avi_sync_stats st;
            double energy;
            avi_integrator_type type = method ? AVI_INTEGRATOR_SYNC_ROOTFIND : AVI_INTEGRATOR_SYNC_IMPLICIT;
            /* best of three runs: the machine is shared */
            wall[method] = cpu[method] = 1e300;
            for (int rep = 0; rep < 3; rep++) {
                double w, c;
                if (run(&r, type, solver, tol, &w, &c, &st, &energy)) return 1;
                if (w < wall[method]) wall[method] = w;
                if (c < cpu[method]) cpu[method] = c;
            }
            printf("| %d | %d | %d | %s | %.3f | %.3f | %.4f | %llu | %llu | %llu | %llu | %llu | %.9g |\n", nv, nt,
                   r.steps, method ? "root finding" : "minimization", cpu[method], wall[method], cpu[method] / r.steps,
                   (unsigned long long)st.newton_iterations, (unsigned long long)st.backtracks,
                   (unsigned long long)st.energy_evaluations, (unsigned long long)st.gradient_evaluations,
                   (unsigned long long)(solver == AVI_SOLVER_PCG ? st.linear_iterations : st.factorizations), energy);
            fflush(stdout);
        }
        printf("| %d | | | speed-up (root finding / minimization) | %.2f | %.2f | | | | | | | |\n", nv, cpu[1] / cpu[0],
               wall[1] / wall[0]);
    }
    return 0;
}
