/* Events per second of the AVI on a free, pre-stretched neo-Hookean bar.
 *
 * Problem: tetrahedral box bar, mu = 0.5, lambda = 0, rho = 1, time steps by
 * the cfl rule with delta = 0.1, initial positions 1.1 x rest, interior nodes
 * jittered so that time steps spread 2-3x. Sizes of about 10k, 100k and 1M
 * tetrahedra (or those given on the command line).
 *
 *   build/bench/events [--tets N]... [--events E] [--no-reorder] [--levels L,...]
 *                      [--poisson NU]
 *
 * --levels runs every size once per value of time_step.levels_per_octave
 * (default 0: exact steps), one after another: steps rounded down to levels
 * make more events per simulated second but cheaper ones, so each row also
 * gives the simulated time per CPU second ("sim_per_cpu_s"), the figure to
 * compare between levels. --poisson sets the material's Poisson ratio
 * (default 0: lambda = 0, where the tet kernel skips its log; 0.3 shows the
 * cost of the log). Prints one JSON object per run on stdout. */
#include "avi/avi.h"
#include "avi/mesh.h"
#include "bench_util.h"
#include "core/engine_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int nx, ny, nz;
} bar_dims;

static double poisson = 0.0; /* --poisson: 0 gives lambda = 0, where the kernel needs no log */

/* Cells of a bar four times as long as it is wide, 6 tets per cell. */
static bar_dims dims_for(double tets)
{
    double k = cbrt(tets / 24.0);
    bar_dims d = {(int)lround(4.0 * k), (int)lround(k), 0};
    d.nz = (int)lround(tets / (6.0 * d.nx * d.ny));
    if (d.nz < 1) d.nz = 1;
    return d;
}

static int run_size(double target_tets, double events_wanted, int reorder, int levels)
{
    bar_dims d = dims_for(target_tets);
    double h = 1.0 / d.ny; /* cell size: the bar is nx/ny long, 1 wide */
    double rss0 = bench_rss();
    double t_build = bench_now();
    avi_mesh mesh = {0};
    avi_error err;
    if (avi_mesh_tet_box(h * d.nx, h * d.ny, h * d.nz, d.nx, d.ny, d.nz, &mesh, &err) ||
        avi_mesh_jitter_interior(&mesh, 0.2 * h, 42, &err) || (reorder && avi_mesh_reorder(&mesh, NULL, &err))) {
        fprintf(stderr, "events: %s\n", err.message);
        return 1;
    }
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "bar");
    for (size_t i = 0; i < mesh.vertex_count; i++) avi_model_add_vertex(m, b, mesh.x[i]);
    /* nu = 0 gives lambda = 0 and E = 2 mu (--poisson changes nu; E = 1). */
    const avi_solid_material mat = {1.0, poisson, 1.0};
    for (size_t t = 0; t < mesh.tet_count; t++) {
        const uint32_t *v = mesh.tets[t];
        if (avi_model_add_tet(m, v[0], v[1], v[2], v[3], &mat)) {
            fprintf(stderr, "events: %s\n", avi_model_error(m)->message);
            return 1;
        }
    }
    for (size_t i = 0; i < mesh.vertex_count; i++) {
        double x[3] = {1.1 * mesh.x[i][0], 1.1 * mesh.x[i][1], 1.1 * mesh.x[i][2]};
        avi_model_set_state(m, (uint32_t)i, x, NULL);
    }
    size_t ntet = mesh.tet_count, nv = mesh.vertex_count;
    avi_mesh_free(&mesh);
    avi_time_step rule = avi_default_time_step();
    rule.rule = AVI_DT_CFL;
    rule.delta = 0.1;
    rule.levels_per_octave = levels;
    if (avi_model_finalize(m, &rule)) {
        fprintf(stderr, "events: %s\n", avi_model_error(m)->message);
        return 1;
    }
    avi_engine *e = avi_engine_create(m, &err);
    if (!e) {
        fprintf(stderr, "events: %s\n", err.message);
        return 1;
    }
    t_build = bench_now() - t_build;
    double rss_model = bench_rss() - rss0;
    double dt_min, dt_max;
    avi_model_time_step_range(m, AVI_KIND_TET, &dt_min, &dt_max);

    /* Simulated time for the wanted event count: sum over tets of 1/dt. */
    double rate = 0.0;
    for (size_t i = 0; i < ntet; i++) rate += 1.0 / avi_model_time_step(m, AVI_KIND_TET, i);
    double t_end = events_wanted / rate;
    avi_observation o0, o1;
    avi_engine_observe(e, 0.0, &o0);
    double t0 = bench_now(), c0 = bench_cpu();
    int rc = avi_engine_advance(e, t_end);
    double wall = bench_now() - t0, cpu = bench_cpu() - c0;
    avi_engine_observe(e, t_end, &o1);
    uint64_t events = avi_engine_events_total(e);
    /* Bytes the data structures hold per element: vertex records and cold
     * arrays, tet records, heap entries. */
    double bytes_struct = (double)(nv * (sizeof(avi_vertex) + 3 * sizeof(double) + sizeof(double) + sizeof(int32_t)) +
                                   ntet * sizeof(avi_tet) + avi_tl_bytes(&e->queue) + avi_groups_bytes(&e->groups)) /
                          (double)ntet;
    printf("{\"bench\": \"events\", \"tets\": %zu, \"vertices\": %zu, \"reorder\": %s, \"levels_per_octave\": %d, "
           "\"poisson\": %g, \"events_per_sim_s\": %.6e, \"sim_per_cpu_s\": %.6e, \"events\": %llu, "
           "\"wall_s\": %.4f, \"cpu_s\": %.4f, \"events_per_s\": %.4g, \"ns_per_event\": %.2f, "
           "\"events_per_cpu_s\": %.4g, \"cpu_ns_per_event\": %.2f, \"dt_spread\": %.2f, "
           "\"bytes_per_element\": %.1f, \"rss_bytes_per_element\": %.1f, \"peak_rss_mb\": %.1f, "
           "\"build_s\": %.2f, \"energy_rel_change\": %.3e, \"groups\": %u, \"grouped_fraction\": %.4f, "
           "\"group_splits_per_event\": %.4f, \"prefetch\": %s, \"status\": %d}\n",
           ntet, nv, reorder ? "true" : "false", levels, poisson, rate, t_end / cpu, (unsigned long long)events, wall, cpu, events / wall,
           1e9 * wall / events, events / cpu, 1e9 * cpu / events, dt_max / dt_min, bytes_struct, rss_model / ntet, bench_peak_rss() / 1048576.0,
           t_build, (o1.total - o0.total) / fabs(o0.total), e->groups.ngroup, (double)e->ncursor_members / (double)ntet,
           (double)e->group_splits / (double)events, e->prefetch ? "true" : "false", rc);
    fflush(stdout);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    return rc;
}

int main(int argc, char **argv)
{
    double sizes[8];
    int nsizes = 0, reorder = 1, levels[8] = {0}, nlevels = 1;
    double events = 2e7;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tets") && i + 1 < argc && nsizes < 8) sizes[nsizes++] = atof(argv[++i]);
        else if (!strcmp(argv[i], "--events") && i + 1 < argc) events = atof(argv[++i]);
        else if (!strcmp(argv[i], "--no-reorder")) reorder = 0;
        else if (!strcmp(argv[i], "--poisson") && i + 1 < argc) poisson = atof(argv[++i]);
        else if (!strcmp(argv[i], "--levels") && i + 1 < argc) {
            nlevels = 0;
            for (char *tok = strtok(argv[++i], ","); tok && nlevels < 8; tok = strtok(NULL, ","))
                levels[nlevels++] = atoi(tok);
        } else {
            fprintf(stderr, "usage: %s [--tets N]... [--events E] [--no-reorder] [--levels L,...] [--poisson NU]\n", argv[0]);
            return 2;
        }
    }
    if (nsizes == 0) {
        sizes[0] = 1e4;
        sizes[1] = 1e5;
        sizes[2] = 1e6;
        nsizes = 3;
    }
    int rc = 0;
    for (int s = 0; s < nsizes; s++)
        for (int l = 0; l < nlevels; l++) rc |= run_size(sizes[s], events, reorder, levels[l]);
    return rc;
}
