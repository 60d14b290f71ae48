/* Cost at equal accuracy: sync-explicit4 (fourth order, three gradient
 * evaluations a step) against sync-explicit (second order, one) on a spring
 * pendulum under gravity and on a free spring network. For each integrator
 * and step h (h omega_max from 1 down by halvings) it prints the position
 * error at time T, max over vertices of |x - x_ref| with x_ref from
 * sync-explicit4 at h_min / 16, and the CPU time of the run (the mean of
 * enough repeats to take 0.2 s), as JSON lines; then, per model, where the
 * two cost curves cross (straight lines fitted to log CPU s against log
 * error over each integrator's points at h omega_max <= 0.25, where each
 * shows its order). Tables on stderr.
 *
 *   build/bench/order4 [--quick] [--n N]
 *
 * --n: the network is an N x N x N/2 lattice (default 10: 500 vertices,
 * 3.4e3 springs); --quick: N = 4, three steps per integrator. */
#include "avi/avi.h"
#include "avi/sync.h"
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int lattice_n = 10;

static avi_model *pendulum(void)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "p");
    const double X[2][3] = {{0, 0, 0}, {0.8660254037844386, 0, -0.5}};
    for (int i = 0; i < 2; i++) avi_model_add_vertex(m, b, X[i]);
    avi_model_add_mass(m, 1, 1.0);
    avi_model_pin(m, 0);
    avi_model_add_spring(m, 0, 1, 100.0, 1.0);
    avi_model_set_gravity(m, (const double[3]){0, 0, -9.81});
    if (avi_model_finalize(m, NULL)) {
        fprintf(stderr, "order4: pendulum: %s\n", avi_model_error(m)->message);
        exit(1);
    }
    return m;
}

/* N x N x N/2 unit masses, springs (k = 100) on cube edges and face
 * diagonals, stretched 3 % and sheared, spinning about z with a ripple. */
static avi_model *network(void)
{
    int nx = lattice_n, nz = lattice_n / 2 > 1 ? lattice_n / 2 : 2;
    size_t nv = (size_t)nx * nx * nz;
    double (*X)[3] = malloc(nv * sizeof *X);
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "n");
    double c = 0.5 * (nx - 1);
    size_t n = 0;
    for (int k = 0; k < nz; k++)
        for (int j = 0; j < nx; j++)
            for (int i = 0; i < nx; i++, n++) {
                X[n][0] = i - c;
                X[n][1] = j - c;
                X[n][2] = k - 0.5 * (nz - 1);
                avi_model_add_vertex(m, b, X[n]);
                avi_model_add_mass(m, (uint32_t)n, 1.0);
            }
    /* neighbours within sqrt(2) among the 26 around each vertex */
    for (size_t a = 0; a < nv; a++) {
        int i = (int)(a % nx), j = (int)(a / nx % nx), k = (int)(a / ((size_t)nx * nx));
        for (int dk = 0; dk <= 1; dk++)
            for (int dj = -1; dj <= 1; dj++)
                for (int di = -1; di <= 1; di++) {
                    int i2 = i + di, j2 = j + dj, k2 = k + dk;
                    if (i2 < 0 || j2 < 0 || i2 >= nx || j2 >= nx || k2 >= nz) continue;
                    if (abs(di) + abs(dj) + dk == 0 || abs(di) + abs(dj) + dk > 2) continue;
                    size_t c2 = (size_t)i2 + (size_t)nx * ((size_t)j2 + (size_t)nx * (size_t)k2);
                    if (c2 <= a) continue;
                    avi_model_add_spring(m, (uint32_t)a, (uint32_t)c2, 100.0, -1.0);
                }
    }
    for (size_t a = 0; a < nv; a++) {
        double x[3] = {1.03 * X[a][0] + 0.05 * X[a][2], 1.03 * X[a][1], 1.03 * X[a][2]};
        double v[3] = {-0.1 * X[a][1] + 0.1 * sin(a + 1.0), 0.1 * X[a][0] + 0.1 * cos(2.0 * a),
                       0.05 * sin(3.0 * a)};
        avi_model_set_state(m, (uint32_t)a, x, v);
    }
    free(X);
    if (avi_model_finalize(m, NULL)) {
        fprintf(stderr, "order4: network: %s\n", avi_model_error(m)->message);
        exit(1);
    }
    return m;
}

typedef avi_model *(*model_fn)(void);

static double rule_step(model_fn make)
{
    avi_model *m = make();
    double h = INFINITY;
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (!avi_model_potential_count(m, (avi_kind)k)) continue;
        double lo, hi;
        avi_model_time_step_range(m, (avi_kind)k, &lo, &hi);
        h = fmin(h, lo);
    }
    avi_model_destroy(m);
    return h;
}

/* One run to T; positions into x (3 nv), CPU seconds of the stepping. */
static double run(model_fn make, avi_integrator_type type, double h, double T, double *x)
{
    avi_model *m = make();
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.h = h;
    avi_error err;
    avi_engine *e = avi_engine_create_with(m, &o, &err);
    if (!e) {
        fprintf(stderr, "order4: %s\n", err.message);
        exit(1);
    }
    double c0 = bench_cpu();
    if (avi_engine_advance(e, T)) {
        fprintf(stderr, "order4: %s at h = %g: %s\n", avi_integrator_name(type), h, avi_engine_error(e)->message);
        exit(1);
    }
    double c = bench_cpu() - c0;
    avi_engine_state_at(e, T, x, NULL);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    return c;
}

typedef struct {
    double err, cpu;
} point;

/* Least-squares line log cpu = a + b log err over n points. */
static void fit(const point *p, int n, double *a, double *b)
{
    double sx = 0, sy = 0, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        double x = log(p[i].err), y = log(p[i].cpu);
        sx += x, sy += y, sxx += x * x, sxy += x * y;
    }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
}

static void model_bench(const char *name, model_fn make, double T_periods, int quick)
{
    double h_rule = rule_step(make); /* safety 0.25: h omega_max = 0.5 */
    double h0 = 2.0 * h_rule;        /* h omega_max = 1 */
    int levels = quick ? 3 : 7;
    /* T: a multiple of every h of the ladder and of the reference step */
    double T = h0 * T_periods;
    avi_model *m = make();
    size_t nv = avi_model_vertex_count(m), springs = avi_model_potential_count(m, AVI_KIND_SPRING);
    avi_model_destroy(m);
    double *ref = malloc(3 * nv * sizeof *ref), *x = malloc(3 * nv * sizeof *x);
    double h_ref = ldexp(h0, -(levels - 1 + 4));
    run(make, AVI_INTEGRATOR_SYNC_EXPLICIT4, h_ref, T, ref);
    fprintf(stderr, "%s: %zu vertices, %zu springs, T = %.4g s, reference sync-explicit4 at h = %.4g\n", name, nv,
            springs, T, h_ref);
    fprintf(stderr, "  %-15s %10s %9s %12s %12s %12s\n", "integrator", "h", "h omega", "steps", "max |dx|", "CPU s");
    point pts[2][16];
    const avi_integrator_type types[2] = {AVI_INTEGRATOR_SYNC_EXPLICIT, AVI_INTEGRATOR_SYNC_EXPLICIT4};
    for (int t = 0; t < 2; t++)
        for (int l = 0; l < levels; l++) {
            double h = ldexp(h0, -l);
            double cpu = 0.0;
            int reps = 0;
            do {
                cpu += run(make, types[t], h, T, x);
                reps++;
            } while (cpu < 0.2 && reps < 1000);
            cpu /= reps;
            double err = 0.0;
            for (size_t i = 0; i < 3 * nv; i++) err = fmax(err, fabs(x[i] - ref[i]));
            pts[t][l] = (point){err, cpu};
            double steps = T / h;
            fprintf(stderr, "  %-15s %10.4g %9.4g %12.0f %12.3e %12.4g\n", avi_integrator_name(types[t]), h,
                    0.5 * h / h_rule, steps, err, cpu);
            printf("{\"bench\": \"order4\", \"model\": \"%s\", \"integrator\": \"%s\", \"vertices\": %zu, "
                   "\"springs\": %zu, \"T\": %.17g, \"h\": %.17g, \"h_omega\": %.6g, \"steps\": %.0f, "
                   "\"max_position_error\": %.6e, \"cpu_s\": %.6e, \"repeats\": %d, "
                   "\"cpu_ns_per_step\": %.4g}\n",
                   name, avi_integrator_name(types[t]), nv, springs, T, h, 0.5 * h / h_rule, steps, err, cpu, reps,
                   1e9 * cpu / steps);
        }
    /* Crossover of the lines fitted where each integrator shows its order
     * (h omega <= 0.25; the last two steps in a quick run) and the error is
     * above round-off. */
    double a[2], b[2];
    int first = levels >= 4 ? 2 : levels - 2;
    for (int t = 0; t < 2; t++) {
        int n = 0;
        point use[16];
        for (int l = first; l < levels; l++)
            if (pts[t][l].err > 1e-13) use[n++] = pts[t][l];
        fit(use, n, &a[t], &b[t]);
    }
    double lx = (a[1] - a[0]) / (b[0] - b[1]);
    double err_x = exp(lx), cpu_x = exp(a[0] + b[0] * lx);
    fprintf(stderr, "  cost ~ error^slope: sync-explicit slope %.3f, sync-explicit4 %.3f; equal cost at error %.3g "
                    "(%.3g CPU s); below it sync-explicit4 is cheaper\n\n",
            b[0], b[1], err_x, cpu_x);
    printf("{\"bench\": \"order4\", \"model\": \"%s\", \"summary\": \"crossover\", \"slope_explicit\": %.4f, "
           "\"slope_explicit4\": %.4f, \"crossover_error\": %.4e, \"crossover_cpu_s\": %.4e}\n",
           name, b[0], b[1], err_x, cpu_x);
    fflush(stdout);
    free(ref);
    free(x);
}

int main(int argc, char **argv)
{
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1, lattice_n = 4;
        else if (strcmp(argv[i], "--n") == 0 && i + 1 < argc) lattice_n = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--quick] [--n N]\n", argv[0]);
            return 2;
        }
    }
    if (lattice_n < 2 || lattice_n > 100) {
        fprintf(stderr, "order4: --n must be in 2..100\n");
        return 2;
    }
    model_bench("spring pendulum", pendulum, 64, quick);
    model_bench("spring network", network, 64, quick);
    return 0;
}
