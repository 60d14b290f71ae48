/* Minimization versus root finding for the implicit synchronous update
 * (Kharevych et al. 2006, section 5.4) on the rod of Fig. 2, alpha = 1/2,
 * the same tolerance, initial guess (v = p_k / m), residual and convergence
 * test for every method. Three methods:
 *   minimization       Newton on the Lilyan, line search on the Lilyan,
 *                      CHOLMOD (PSD fallback) or Jacobi-PCG
 *   root finding       Newton on its gradient, Armijo line search on the
 *                      merit |r|^2 / 2, the same linear solver: like for like
 *   root finding (LU)  the same, the Jacobian factored by UMFPACK's LU as a
 *                      general matrix: a general nonlinear-equation solver,
 *                      the setting the paper timed (PETSc SNES against TAO)
 *
 *   build/bench/sync_timing [steps_scale] [cholmod|pcg] [h]
 *       timing table: about 330, 2000 and 3784 vertices (the paper's counts),
 *       CPU and wall seconds, best of three with the methods alternated
 *   build/bench/sync_timing robust [steps] [cap] [vertices: 330|2000]
 *       robustness table: h = 0.01 ... 0.2 and Young's modulus x1, x10,
 *       x100, CHOLMOD; each step tried from the explicit guess with at most
 *       `cap` Newton iterations. A step that fails is counted and then taken
 *       by the minimizer with 1000 iterations (not timed, not counted), so
 *       every method meets the same kind of states and the table is never
 *       cut short. */
#include "avi/avi.h"
#include "avi/sync.h"
#include "bench_util.h"
#include "sync/sync_internal.h" /* the failed-step fallback switches e->sync->opt */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int nx, ny, nz, steps;
} resolution;

enum { MIN, ROOT, ROOT_LU, NMETHOD };
static const char *method_name[NMETHOD] = {"minimization", "root finding", "root finding (LU)"};

typedef struct {
    avi_scene sc;
    avi_model *m;
    avi_engine *e;
} rod;

static int rod_open(rod *R, const resolution *r, double youngs, int method, avi_linear_solver solver, double h,
                    double tol, int cap)
{
    double c = 1.4 / r->nx;
    char text[1200];
    snprintf(text, sizeof text,
             "time: {end: 1.0}\n"
             "integrator: {type: sync-implicit}\n"
             "time_step: {fixed: 0.01}\n"
             "materials:\n"
             "  rubber: {model: neo-hookean, youngs: %.17g, poisson: 0.3, density: 1000.0}\n"
             "bodies:\n"
             "  - name: rod\n"
             "    mesh: {generator: tet_box, lx: 1.4, ly: %.17g, lz: %.17g, nx: %d, ny: %d, nz: %d}\n"
             "    material: rubber\n"
             "    velocity: [0.01, 0.02, 0.0]\n"
             "    angular_velocity: [0.5, 0.0, 0.3]\n"
             "    initial: {scale: 1.05}\n",
             youngs, c * r->ny, c * r->nz, r->nx, r->ny, r->nz);
    avi_error err;
    R->m = NULL;
    R->e = NULL;
    if (avi_scene_load_string(text, strlen(text), "rod.yaml", NULL, NULL, 0, &R->sc, &err) ||
        avi_scene_build(&R->sc, &R->m, NULL, &err)) {
        fprintf(stderr, "sync_timing: %s\n", err.message);
        return -1;
    }
    avi_sync_options o = avi_default_sync_options();
    o.type = method == MIN ? AVI_INTEGRATOR_SYNC_IMPLICIT : AVI_INTEGRATOR_SYNC_ROOTFIND;
    o.alpha = 0.5;
    o.h = h;
    o.tolerance = tol;
    o.max_iterations = cap;
    o.linear_solver = method == ROOT_LU ? AVI_SOLVER_LU : solver;
    if (!(R->e = avi_engine_create_with(R->m, &o, &err))) {
        fprintf(stderr, "sync_timing: %s\n", err.message);
        return -1;
    }
    return 0;
}

static double rod_close(rod *R, double t)
{
    avi_observation ob;
    avi_engine_observe(R->e, t, &ob);
    avi_engine_destroy(R->e);
    avi_model_destroy(R->m);
    avi_scene_free(&R->sc);
    return ob.total;
}

/* ---- timing table ---- */

typedef struct {
    double cpu, wall, energy;
    avi_sync_stats st;
} timing;

static int time_run(const resolution *r, int method, avi_linear_solver solver, double h, timing *out)
{
    rod R;
    if (rod_open(&R, r, 3.0e4, method, solver, h, 1e-8, 50)) return -1;
    double t0 = bench_now(), c0 = bench_cpu();
    int rc = avi_engine_advance(R.e, r->steps * h);
    out->wall = bench_now() - t0;
    out->cpu = bench_cpu() - c0;
    if (rc) fprintf(stderr, "sync_timing: %s: %s\n", method_name[method], avi_engine_error(R.e)->message);
    avi_engine_sync_stats(R.e, &out->st);
    out->energy = rod_close(&R, r->steps * h);
    return rc;
}

static int timing_table(double scale, avi_linear_solver solver, double h)
{
    const double tol = 1e-8;
    resolution res[3] = {{21, 4, 2, 100}, {39, 9, 4, 20}, {42, 10, 7, 10}};
    int pcg = solver == AVI_SOLVER_PCG;
    printf("linear solver: %s (root finding (LU): UMFPACK), tolerance %g, h = %g, alpha = 1/2\n\n",
           pcg ? "PCG" : "CHOLMOD", tol, h);
    printf("| vertices | tets | steps | method | CPU (s) | wall (s) | CPU s/step | Newton it. | backtracks | "
           "objective evals | residual evals | factorizations | CG it. | final energy (J) |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int k = 0; k < 3; k++) {
        resolution r = res[k];
        r.steps = (int)(r.steps * scale) > 0 ? (int)(r.steps * scale) : 1;
        int nv = (r.nx + 1) * (r.ny + 1) * (r.nz + 1), nt = 6 * r.nx * r.ny * r.nz;
        timing best[NMETHOD];
        for (int i = 0; i < NMETHOD; i++) best[i].cpu = best[i].wall = 1e300;
        /* best of three, the methods alternated: the machine is shared */
        for (int rep = 0; rep < 3; rep++)
            for (int i = 0; i < NMETHOD; i++) {
                timing t;
                if (time_run(&r, i, solver, h, &t)) return 1;
                if (t.wall < best[i].wall) best[i].wall = t.wall;
                if (t.cpu < best[i].cpu) best[i].cpu = t.cpu;
                best[i].st = t.st;
                best[i].energy = t.energy;
            }
        for (int i = 0; i < NMETHOD; i++) {
            const avi_sync_stats *st = &best[i].st;
            int cg = pcg && i != ROOT_LU;
            printf("| %d | %d | %d | %s | %.3f | %.3f | %.4f | %llu | %llu | %llu | %llu | %llu | %llu | %.9g |\n", nv,
                   nt, r.steps, method_name[i], best[i].cpu, best[i].wall, best[i].cpu / r.steps,
                   (unsigned long long)st->newton_iterations, (unsigned long long)st->backtracks,
                   (unsigned long long)st->energy_evaluations, (unsigned long long)st->gradient_evaluations,
                   (unsigned long long)st->factorizations, (unsigned long long)(cg ? st->linear_iterations : 0),
                   best[i].energy);
        }
        printf("| %d | | | speed-up, root finding / minimization | %.2f | %.2f | | | | | | | | |\n", nv,
               best[ROOT].cpu / best[MIN].cpu, best[ROOT].wall / best[MIN].wall);
        printf("| %d | | | speed-up, root finding (LU) / minimization | %.2f | %.2f | | | | | | | | |\n", nv,
               best[ROOT_LU].cpu / best[MIN].cpu, best[ROOT_LU].wall / best[MIN].wall);
        fflush(stdout);
    }
    return 0;
}

/* ---- robustness table ---- */

typedef struct {
    int failures, aborted_at;
    double cpu, energy;
    avi_sync_stats st; /* the method's own work: fallback steps subtracted */
} robust_result;

static void stats_sub(avi_sync_stats *a, const avi_sync_stats *b)
{
    a->newton_iterations -= b->newton_iterations;
    a->backtracks -= b->backtracks;
    a->factorizations -= b->factorizations;
    a->psd_fallbacks -= b->psd_fallbacks;
    a->indefinite_solves -= b->indefinite_solves;
}

static int robust_run(const resolution *r, double youngs, int method, double h, int cap, robust_result *out)
{
    rod R;
    if (rod_open(&R, r, youngs, method, AVI_SOLVER_CHOLMOD, h, 1e-8, cap)) return -1;
    struct avi_sync *s = R.e->sync;
    avi_sync_stats fb = {0};
    out->failures = 0;
    out->aborted_at = -1;
    double c0 = bench_cpu(), fcpu = 0.0;
    for (int k = 0; k < r->steps; k++) {
        if (avi_engine_advance(R.e, (k + 1) * h) == AVI_OK) continue;
        /* Failed from the explicit guess within the cap: the step is left
         * undone (lilyan.c writes the state only after a converged solve);
         * take it by minimization with a generous cap. */
        out->failures++;
        double f0 = bench_cpu();
        avi_sync_options keep = s->opt;
        avi_sync_stats before = s->stats;
        s->opt.type = AVI_INTEGRATOR_SYNC_IMPLICIT;
        s->opt.linear_solver = AVI_SOLVER_CHOLMOD;
        s->opt.max_iterations = 1000;
        int rc = avi_engine_advance(R.e, (k + 1) * h);
        s->opt = keep;
        avi_sync_stats after = s->stats;
        stats_sub(&after, &before);
        fb.newton_iterations += after.newton_iterations;
        fb.backtracks += after.backtracks;
        fb.factorizations += after.factorizations;
        fb.psd_fallbacks += after.psd_fallbacks;
        fb.indefinite_solves += after.indefinite_solves;
        fcpu += bench_cpu() - f0;
        if (rc != AVI_OK) {
            out->aborted_at = k;
            break;
        }
    }
    out->cpu = bench_cpu() - c0 - fcpu;
    avi_engine_sync_stats(R.e, &out->st);
    stats_sub(&out->st, &fb);
    out->energy = rod_close(&R, r->steps * h);
    return 0;
}

static int robust_table(int steps, int cap, int big)
{
    resolution r = big ? (resolution){39, 9, 4, steps} : (resolution){21, 4, 2, steps};
    int nv = (r.nx + 1) * (r.ny + 1) * (r.nz + 1);
    const double hs[5] = {0.01, 0.02, 0.05, 0.1, 0.2}, es[3] = {1.0, 10.0, 100.0};
    printf("rod of %d vertices, %d steps per run, Newton cap %d iterations, tolerance 1e-8, CHOLMOD "
           "(root finding (LU): UMFPACK); failures: steps not converged from the explicit guess\n\n",
           nv, steps, cap);
    printf("| h | Young's modulus | method | failures | CPU (s) | CPU s/step | Newton it. | backtracks | "
           "factorizations | PSD fallbacks | indefinite (LDL^T) | final energy (J) |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int ie = 0; ie < 3; ie++)
        for (int ih = 0; ih < 5; ih++) {
            robust_result best[NMETHOD];
            for (int i = 0; i < NMETHOD; i++) best[i].cpu = 1e300;
            for (int rep = 0; rep < 3; rep++)
                for (int i = 0; i < NMETHOD; i++) {
                    robust_result t;
                    if (robust_run(&r, 3.0e4 * es[ie], i, hs[ih], cap, &t)) return 1;
                    double c = t.cpu < best[i].cpu ? t.cpu : best[i].cpu;
                    best[i] = t;
                    best[i].cpu = c;
                }
            for (int i = 0; i < NMETHOD; i++) {
                char fails[64];
                if (best[i].aborted_at >= 0)
                    snprintf(fails, sizeof fails, "%d, aborted at step %d", best[i].failures, best[i].aborted_at);
                else
                    snprintf(fails, sizeof fails, "%d / %d", best[i].failures, steps);
                printf("| %g | %.3g | %s | %s | %.3f | %.4f | %llu | %llu | %llu | %llu | %llu | %.9g |\n", hs[ih],
                       3.0e4 * es[ie], method_name[i], fails, best[i].cpu, best[i].cpu / steps,
                       (unsigned long long)best[i].st.newton_iterations, (unsigned long long)best[i].st.backtracks,
                       (unsigned long long)best[i].st.factorizations, (unsigned long long)best[i].st.psd_fallbacks,
                       (unsigned long long)best[i].st.indefinite_solves, best[i].energy);
            }
            fflush(stdout);
        }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "robust")) {
        int steps = argc > 2 ? atoi(argv[2]) : 20, cap = argc > 3 ? atoi(argv[3]) : 20;
        int big = argc > 4 && atoi(argv[4]) == 2000;
        if (steps < 1 || cap < 1) {
            fprintf(stderr, "sync_timing: robust [steps >= 1] [cap >= 1] [330|2000]\n");
            return 2;
        }
        return robust_table(steps, cap, big);
    }
    double scale = argc > 1 ? atof(argv[1]) : 1.0;
    avi_linear_solver solver = argc > 2 && !strcmp(argv[2], "pcg") ? AVI_SOLVER_PCG : AVI_SOLVER_CHOLMOD;
    double h = argc > 3 ? atof(argv[3]) : 0.01;
    if (!(scale > 0.0) || !(h > 0.0)) {
        fprintf(stderr, "sync_timing: [steps_scale > 0] [cholmod|pcg] [h > 0]\n");
        return 2;
    }
    return timing_table(scale, solver, h);
}
