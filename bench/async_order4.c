/* Asynchronous fourth order (bench/async_order4.h): the AVI's macro step on
 * commensurate clocks (soft springs at H, stiff at H / k), its symmetry, its
 * Yoshida triple jump (AVI4), and the cost at equal accuracy of the AVI,
 * AVI4, sync-explicit4 and velocity Verlet (sync-explicit) at the stiff
 * step, on a free planar chain of
 * alternating stiff and soft springs.
 *
 *   build/bench/async_order4 [--n N] [--k K] [--ratio R] [--T T] [--quick] [--check]
 *
 * Prints JSON lines (stdout) and tables (stderr): the symmetry residuals of
 * Phi_H and Psi_H; per method and H (halvings of H0 = 0.5) the largest
 * position error at T against sync-explicit4 at a quarter of the smallest
 * stiff step, events (spring gradient evaluations) and CPU s (mean of
 * repeats that take 0.05 s); the error ratio per halving; events and CPU
 * interpolated (log-log) at errors 1e-4 .. 1e-10 and where AVI and AVI4
 * cross; momenta and energy over a long AVI4 run. --check exits 1 when the
 * symmetry residual exceeds 1e-12, AVI4's last ratios per halving fall
 * below 12, the AVI's leave [3.5, 4.5], or momenta drift above 1e-12.
 * Defaults: n = 32, k = 10, ratio = 100 (k_s = 100, k_w = 1), T = 8. */
#include "async_order4.h"
#include "bench_util.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXH 16

static int n_mass = 32, kk = 10, quick = 0, check = 0;
static double ratio = 100.0, T = 8.0, H0 = 0.5;

static const char *name[4] = {"avi", "avi4", "sync4", "sync2"};

struct point { double H, err, events, cpu; };

static void run_point(enum ao4_method m, double H, const ao4_chain *ref, struct point *p)
{
    long steps = lround(T / H);
    ao4_chain c;
    int reps = 0;
    double t0 = bench_cpu(), t1;
    for (;;) { /* repeats until 0.05 CPU s; the last run's state is kept */
        ao4_init(&c, n_mass, ratio, 1.0);
        ao4_run(&c, m, H, kk, steps);
        reps++;
        t1 = bench_cpu();
        if (t1 - t0 >= 0.05) break;
        ao4_free(&c);
    }
    p->H = H;
    p->err = ao4_distance(&c, ref);
    p->events = c.events;
    p->cpu = (t1 - t0) / reps;
    ao4_free(&c);
}

/* log-log interpolation of y at error e over points sorted by falling
 * error; NAN outside the measured range. */
static double at_error(const struct point *p, int np, double e, int cpu)
{
    for (int i = 0; i + 1 < np; i++) {
        double e0 = p[i].err, e1 = p[i + 1].err;
        if (!(e0 >= e && e >= e1) || e0 <= e1) continue;
        double y0 = cpu ? p[i].cpu : p[i].events, y1 = cpu ? p[i + 1].cpu : p[i + 1].events;
        double s = (log(e) - log(e0)) / (log(e1) - log(e0));
        return exp(log(y0) + s * (log(y1) - log(y0)));
    }
    return NAN;
}

static int fail(const char *what, double got)
{
    fprintf(stderr, "async_order4: check failed: %s (%.3g)\n", what, got);
    return 1;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) quick = 1;
        else if (!strcmp(argv[i], "--check")) check = 1;
        else if (i + 1 < argc && !strcmp(argv[i], "--n")) n_mass = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--k")) kk = atoi(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--ratio")) ratio = atof(argv[++i]);
        else if (i + 1 < argc && !strcmp(argv[i], "--T")) T = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: async_order4 [--n N] [--k K] [--ratio R] [--T T] [--quick] [--check]\n");
            return 2;
        }
    }
    if (n_mass < 3 || kk < 1 || !(ratio > 0) || !(T > 0)) {
        fprintf(stderr, "async_order4: need n >= 3, k >= 1, ratio > 0, T > 0\n");
        return 2;
    }
    int nh[4] = {14, 8, 8, 14}; /* halvings of H0 per method */
    if (quick) nh[0] = nh[3] = 8, nh[1] = nh[2] = 6;
    int bad = 0;

    ao4_chain c0;
    ao4_init(&c0, n_mass, ratio, 1.0);
    double sym[2] = {ao4_symmetry(&c0, H0, kk, 0), ao4_symmetry(&c0, H0, kk, 1)};
    printf("{\"bench\":\"async_order4\",\"what\":\"symmetry\",\"n\":%d,\"k\":%d,\"ratio\":%g,\"H\":%g,"
           "\"phi\":%.3e,\"psi\":%.3e}\n", n_mass, kk, ratio, H0, sym[0], sym[1]);
    fprintf(stderr, "symmetry |Phi_-H o Phi_H - id| = %.2e, |Psi_-H o Psi_H - id| = %.2e (H = %g, k = %d)\n",
            sym[0], sym[1], H0, kk);
    if (check && !(sym[0] <= 1e-12)) bad |= fail("Phi symmetry residual > 1e-12", sym[0]);
    if (check && !(sym[1] <= 1e-12)) bad |= fail("Psi symmetry residual > 1e-12", sym[1]);

    /* reference: sync-explicit4 at a quarter of the smallest stiff step of
     * the fourth-order sweeps; its own error from the run at twice it */
    double Href = H0 / (1 << nh[1]) / 4.0;
    ao4_chain ref, ref2;
    ao4_init(&ref, n_mass, ratio, 1.0);
    ao4_init(&ref2, n_mass, ratio, 1.0);
    ao4_run(&ref, AO4_SYNC4, Href, kk, lround(T / Href));
    ao4_run(&ref2, AO4_SYNC4, 2 * Href, kk, lround(T / (2 * Href)));
    double referr = ao4_distance(&ref, &ref2) / 15.0;
    fprintf(stderr, "reference: sync-explicit4 at h = %.3g, its error about %.1e\n", Href / kk, referr);

    struct point pts[4][MAXH];
    for (int m = 0; m < 4; m++) {
        fprintf(stderr, "%-6s %10s %10s %10s %10s %10s %8s\n", name[m], "H", "h_stiff", "error", "events", "CPU s", "ratio");
        for (int j = 0; j <= nh[m]; j++) {
            double H = H0 / (1 << j);
            struct point *p = &pts[m][j];
            run_point((enum ao4_method)m, H, &ref, p);
            double r = j ? pts[m][j - 1].err / p->err : NAN;
            printf("{\"bench\":\"async_order4\",\"method\":\"%s\",\"n\":%d,\"k\":%d,\"ratio\":%g,\"T\":%g,\"H\":%.6g,"
                   "\"h_stiff\":%.6g,\"error\":%.4e,\"events\":%.0f,\"cpu_s\":%.4e,\"ratio_per_halving\":%.3f}\n",
                   name[m], n_mass, kk, ratio, T, H, H / kk, p->err, p->events, p->cpu, j ? r : 0.0);
            fprintf(stderr, "%-6s %10.4g %10.4g %10.3e %10.3g %10.3g %8.2f\n", "", H, H / kk, p->err, p->events, p->cpu, r);
        }
    }
    /* orders: the last three halvings whose errors stand 100x above the
     * reference's */
    for (int m = 0; m < 2; m++) {
        int last = nh[m];
        while (last > 0 && pts[m][last].err < 100.0 * referr) last--;
        double rmin = INFINITY, rmax = 0.0;
        for (int j = last; j > last - 3 && j >= 1; j--) {
            double r = pts[m][j - 1].err / pts[m][j].err;
            rmin = fmin(rmin, r);
            rmax = fmax(rmax, r);
        }
        fprintf(stderr, "%s: error ratio per halving %.2f .. %.2f (H = %g .. %g)\n", name[m], rmin, rmax,
                pts[m][last > 3 ? last - 3 : 0].H, pts[m][last].H);
        printf("{\"bench\":\"async_order4\",\"what\":\"order\",\"method\":\"%s\",\"ratio_min\":%.3f,\"ratio_max\":%.3f}\n",
               name[m], rmin, rmax);
        if (check && m == 1 && !(rmin >= 12.0)) bad |= fail("AVI4 ratio per halving < 12", rmin);
        if (check && m == 0 && !(rmin >= 3.5 && rmax <= 4.5)) bad |= fail("AVI ratio per halving outside [3.5, 4.5]", rmin);
    }

    /* equal accuracy */
    fprintf(stderr, "%8s | %10s %10s | %10s %10s | %10s %10s | %10s %10s | %8s %8s %8s\n", "error", "AVI ev", "CPU s",
            "AVI4 ev", "CPU s", "sync4 ev", "CPU s", "sync2 ev", "CPU s", "AVI/AVI4", "s4/AVI4", "s2/AVI");
    for (int e10 = -4; e10 >= -10; e10--) {
        double e = pow(10.0, e10), ev[4], cpu[4];
        for (int m = 0; m < 4; m++) {
            ev[m] = at_error(pts[m], nh[m] + 1, e, 0);
            cpu[m] = at_error(pts[m], nh[m] + 1, e, 1);
        }
        printf("{\"bench\":\"async_order4\",\"what\":\"equal_accuracy\",\"error\":%g,\"avi_events\":%.4g,\"avi_cpu_s\":%.4g,"
               "\"avi4_events\":%.4g,\"avi4_cpu_s\":%.4g,\"sync4_events\":%.4g,\"sync4_cpu_s\":%.4g,"
               "\"sync2_events\":%.4g,\"sync2_cpu_s\":%.4g}\n",
               e, ev[0], cpu[0], ev[1], cpu[1], ev[2], cpu[2], ev[3], cpu[3]);
        fprintf(stderr, "%8.0e | %10.3g %10.3g | %10.3g %10.3g | %10.3g %10.3g | %10.3g %10.3g | %8.2f %8.2f %8.2f\n", e,
                ev[0], cpu[0], ev[1], cpu[1], ev[2], cpu[2], ev[3], cpu[3], ev[0] / ev[1], ev[2] / ev[1], ev[3] / ev[0]);
    }
    /* crossover of the AVI and AVI4 in events, scanning log error */
    double cross = NAN;
    for (double le = log(pts[1][0].err); le > log(pts[1][nh[1]].err); le -= 0.01) {
        double a = at_error(pts[0], nh[0] + 1, exp(le), 0), b = at_error(pts[1], nh[1] + 1, exp(le), 0);
        if (a == a && b == b && a > b) { cross = exp(le); break; }
    }
    fprintf(stderr, "AVI4 takes fewer events than the AVI below error %.2g\n", cross);
    printf("{\"bench\":\"async_order4\",\"what\":\"crossover\",\"error\":%.3g}\n", cross);

    /* long run of AVI4: energy at each meeting time, momenta at the end */
    long steps = quick ? 10000 : 100000;
    double H = H0 / 4;
    ao4_chain c;
    ao4_init(&c, n_mass, ratio, 1.0);
    double E0 = ao4_energy(&c), p0[3], p1[3], dfirst = 0.0, dlast = 0.0, dmax = 0.0;
    ao4_momenta(&c, p0);
    double t0 = bench_cpu();
    for (long s = 0; s < steps; s++) {
        ao4_yoshida(&c, H, kk, 0);
        ao4_flush(&c);
        double d = fabs(ao4_energy(&c) - E0) / E0;
        dmax = fmax(dmax, d);
        if (s < steps / 10) dfirst = fmax(dfirst, d);
        if (s >= steps - steps / 10) dlast = fmax(dlast, d);
    }
    double cpu = bench_cpu() - t0;
    ao4_momenta(&c, p1);
    double scale = 0.0;
    for (int i = 0; i < c.n; i++) scale += (fabs(c0.v[2 * i]) + fabs(c0.v[2 * i + 1])) / c0.inv_m[i];
    double dp = fmax(fabs(p1[0] - p0[0]), fabs(p1[1] - p0[1])) / scale, dl = fabs(p1[2] - p0[2]) / fabs(p0[2]);
    fprintf(stderr, "AVI4 long run: %ld macro steps of H = %g (t = %g, %.2f CPU s): |E - E0|/E0 max %.2e "
            "(first tenth %.2e, last tenth %.2e); momentum drift linear %.1e, angular %.1e\n",
            steps, H, steps * H, cpu, dmax, dfirst, dlast, dp, dl);
    printf("{\"bench\":\"async_order4\",\"what\":\"long_run\",\"steps\":%ld,\"H\":%g,\"cpu_s\":%.3f,\"energy_max\":%.3e,"
           "\"energy_first_tenth\":%.3e,\"energy_last_tenth\":%.3e,\"linear_momentum\":%.2e,\"angular_momentum\":%.2e}\n",
           steps, H, cpu, dmax, dfirst, dlast, dp, dl);
    if (check && !(dp <= 1e-12 && dl <= 1e-12)) bad |= fail("momentum drift > 1e-12", fmax(dp, dl));
    ao4_free(&c);
    ao4_free(&c0);
    ao4_free(&ref);
    ao4_free(&ref2);
    return bad;
}
