/* The engine on threads (time slices, core/time_slice.h) against the
 * serial event loop on bench/events.c's jittered bar (bench/bar_model.h,
 * steps on levels: levels_per_octave 16, the default, so that most events
 * are group ticks), side by side in one run: for each size, the modes
 * alternate `--repeat` times, each from the same records over the same
 * simulated time; the final records must equal the serial run's bit for
 * bit ("same_bits").
 *
 *   build/bench/threads [--tets N]... [--events E] [--threads T]... [--repeat R]
 *   build/bench/threads --scene NAME --end T [--threads T]... [--repeat R]
 *
 * --scene runs a built-in scene's engine (avi_engine_create_for_scene:
 * contact, refined clocks) to time T instead of the bar ("tets" is then 0).
 *
 * Prints one JSON object per run: wall and CPU seconds, per simulated
 * second, events/s (wall), the speed-up over the serial run of the same
 * repeat (wall), and the parallel ticks' counts (ticks, members, seam
 * kicks). threads 1 is the serial engine (no pool); "pool1" is the
 * parallel path on a pool of one thread (one part, no seam): its cost
 * over the serial run is the path's own.
 *
 * The scaling model (one line per size, from the fastest repeat of each
 * mode: the host's noise only slows runs down), for every P run with
 * --threads (more threads than cores is fine: the model takes counts from
 * those runs, not times): the events outside parallel slices (share 1 - f,
 * f = members / events) cost what they cost serially; the slices' work is
 * pool1's time less that, divided by P and times the cut's balance B(P)
 * (the sum over slices of the busiest part's events, times P over the
 * events: 1 when every slice splits evenly); each slice adds two
 * fork-joins (--fork-us, default 2 us: bench/barrier.c measures it) and
 * each seam kick counted at P --seam-ns (default 10 ns), applied by the P
 * seam owners side by side:
 *   T(P) = T1 (1 - f) + (T_pool1 - T1 (1 - f)) B(P) / P + 2 slices fork + seam(P) seam_ns / P.
 * Memory bandwidth is not in it: "bytes_per_event" (the record and its
 * stencil's vertex records, a bound on what an event streams when nothing
 * is cached) times the serial events per second gives what one core
 * draws. */
#include "bar_model.h"
#include "bench_util.h"
#include "base/pool.h"
#include "core/engine_internal.h"
#include "core/time_slice.h"

#include "avi/scene.h"

#include <stdlib.h>
#include <string.h>

static avi_scene scene; /* --scene: its engine is the scene's */
static avi_scene_bodies scene_info;
static int use_scene;

typedef struct {
    double wall;
    uint64_t events, ticks, members, seam, busiest;
} run_stats;

/* threads 0: the parallel path on a pool of one thread ("pool1"). */
static int run_mode(avi_model *m, const avi_vertex *start, double t_end, int threads, double tets, int rep,
                    const avi_vertex *serial_end, double *serial_wall, avi_vertex *end_out, run_stats *st)
{
    size_t n = avi_model_record_count(m);
    memcpy(m->vert, start, n * sizeof *m->vert);
    avi_error err;
    avi_engine *e = use_scene ? avi_engine_create_for_scene(&scene, &scene_info, m, &err) : avi_engine_create(m, &err);
    if (!e) {
        fprintf(stderr, "threads: %s\n", err.message);
        return 1;
    }
    double s0 = bench_now(); /* the pool and the slices' parts */
    if (threads == 0 ? !(e->pool = avi_pool_create(1, &err)) || avi_slice_prepare(e) != AVI_OK
                     : avi_engine_set_threads(e, threads) != AVI_OK) {
        fprintf(stderr, "threads: %s\n", threads == 0 && !e->pool ? err.message : avi_engine_error(e)->message);
        return 1;
    }
    double setup = bench_now() - s0;
    double t0 = bench_now(), c0 = bench_cpu();
    int rc = avi_engine_advance(e, t_end);
    double wall = bench_now() - t0, cpu = bench_cpu() - c0;
    uint64_t events = avi_engine_events_total(e), ticks, members, seam; /* slices as "ticks" */
    avi_slice_stats(e, &ticks, &members, &seam);
    *st = (run_stats){wall, events, ticks, members, seam, avi_slice_busiest(e)};
    int same = serial_end ? memcmp(serial_end, m->vert, n * sizeof *m->vert) == 0 : 1;
    if (end_out) memcpy(end_out, m->vert, n * sizeof *m->vert);
    if (threads == 1) *serial_wall = wall;
    printf("{\"bench\": \"threads\", \"tets\": %.0f, \"repeat\": %d, \"threads\": \"%s%d\", \"events\": %llu, "
           "\"sim_s\": %.6e, \"setup_s\": %.4f, \"wall_s\": %.4f, \"cpu_s\": %.4f, \"wall_per_sim_s\": %.4g, \"cpu_per_sim_s\": %.4g, "
           "\"events_per_s\": %.4g, \"speedup\": %.3f, \"parallel_ticks\": %llu, \"tick_members\": %llu, "
           "\"seam_kicks\": %llu, \"balance\": %.3f, \"same_bits\": %s, \"status\": %d}\n",
           tets, rep, threads == 0 ? "pool" : "", threads == 0 ? 1 : threads, (unsigned long long)events, t_end, setup, wall,
           cpu, wall / t_end, cpu / t_end, events / wall, *serial_wall > 0 ? *serial_wall / wall : 1.0,
           (unsigned long long)ticks, (unsigned long long)members, (unsigned long long)seam,
           members ? (double)st->busiest * (threads == 0 ? 1 : threads) / (double)members : 1.0, same ? "true" : "false", rc);
    fflush(stdout);
    avi_engine_destroy(e);
    return rc != AVI_OK || !same;
}

int main(int argc, char **argv)
{
    double sizes[8];
    int nsizes = 0, threads[8], nthreads = 0, repeat = 3;
    double events_wanted = 2.0e7, fork_us = 2.0, seam_ns = 10.0, scene_end = 0.0;
    const char *scene_name = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--tets") && i + 1 < argc && nsizes < 8) sizes[nsizes++] = atof(argv[++i]);
        else if (!strcmp(argv[i], "--events") && i + 1 < argc) events_wanted = atof(argv[++i]);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc && nthreads < 8) threads[nthreads++] = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--fork-us") && i + 1 < argc) fork_us = atof(argv[++i]);
        else if (!strcmp(argv[i], "--seam-ns") && i + 1 < argc) seam_ns = atof(argv[++i]);
        else if (!strcmp(argv[i], "--scene") && i + 1 < argc) scene_name = argv[++i];
        else if (!strcmp(argv[i], "--end") && i + 1 < argc) scene_end = atof(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--tets N]... [--events E] [--threads T]... [--repeat R] [--fork-us F] [--seam-ns S]\n"
                            "       %s --scene NAME --end T [--threads T]... [--repeat R]\n",
                    argv[0], argv[0]);
            return 2;
        }
    }
    if (scene_name) {
        if (!(scene_end > 0.0)) {
            fprintf(stderr, "threads: --scene needs --end T > 0\n");
            return 2;
        }
        nsizes = 1;
        sizes[0] = 0.0;
        use_scene = 1;
    } else if (nsizes == 0) {
        sizes[nsizes++] = 1e5;
        sizes[nsizes++] = 1e6;
    }
    if (nthreads == 0) threads[nthreads++] = 2;
    int failed = 0;
    for (int s = 0; s < nsizes; s++) {
        avi_model *m = NULL;
        if (use_scene) {
            avi_error err = {0};
            if (avi_scene_load_builtin(scene_name, NULL, 0, &scene, &err) != AVI_OK ||
                avi_scene_build(&scene, &m, &scene_info, &err) != AVI_OK) {
                fprintf(stderr, "threads: %s\n", err.message);
                return 1;
            }
        } else {
            m = bench_bar_model(sizes[s], "threads");
        }
        size_t n = avi_model_record_count(m);
        avi_vertex *start = malloc(n * sizeof *start), *serial_end = malloc(n * sizeof *serial_end);
        if (!start || !serial_end) {
            fprintf(stderr, "threads: out of memory\n");
            return 1;
        }
        memcpy(start, m->vert, n * sizeof *start);
        double rate = 0.0; /* events per simulated second */
        for (size_t i = 0; i < m->ntet; i++) rate += 1.0 / avi_model_time_step(m, AVI_KIND_TET, i);
        double t_end = use_scene ? scene_end : events_wanted / rate;
        run_stats serial = {0}, pool1 = {0}, st1 = {0}, stp = {0}, par[8] = {{0}};
        for (int r = 0; r < repeat; r++) {
            double serial_wall = 0.0;
            failed |= run_mode(m, start, t_end, 1, sizes[s], r, NULL, &serial_wall, serial_end, &st1);
            failed |= run_mode(m, start, t_end, 0, sizes[s], r, serial_end, &serial_wall, NULL, &stp);
            if (r == 0 || st1.wall < serial.wall) serial = st1;
            if (r == 0 || stp.wall < pool1.wall) pool1 = stp;
            for (int k = 0; k < nthreads; k++) {
                run_stats st = {0};
                failed |= run_mode(m, start, t_end, threads[k], sizes[s], r, serial_end, &serial_wall, NULL, &st);
                if (r == 0 || st.wall < par[k].wall) par[k] = st;
            }
        }
        double f = pool1.events ? (double)pool1.members / (double)pool1.events : 0.0;
        double rest = serial.wall * (1.0 - f), work = pool1.wall - rest;
        size_t bytes = sizeof *m->tets + 4 * sizeof *m->vert;
        printf("{\"bench\": \"threads_model\", \"tets\": %.0f, \"tick_share\": %.4f, \"serial_s\": %.4f, "
               "\"pool1_s\": %.4f, \"ticks\": %llu, \"fork_us\": %g, \"seam_ns\": %g, \"bytes_per_event\": %zu, "
               "\"serial_gb_per_s\": %.2f",
               sizes[s], f, serial.wall, pool1.wall, (unsigned long long)pool1.ticks, fork_us, seam_ns, bytes,
               (double)serial.events / serial.wall * (double)bytes * 1e-9);
        /* Every P measured with --threads: its cut's balance and seam, as
         * counted (counts do not depend on the host's speed). */
        for (int k = 0; k < nthreads; k++) {
            int P = threads[k];
            if (P < 2 || !par[k].members) continue;
            double balance = (double)par[k].busiest * P / (double)par[k].members;
            double t = rest + work * balance / P + 2.0 * (double)pool1.ticks * fork_us * 1e-6 +
                       (double)par[k].seam * seam_ns * 1e-9 / P;
            printf(", \"balance_%d\": %.3f, \"speedup_%d\": %.2f", P, balance, P, serial.wall / t);
        }
        printf("}\n");
        free(start);
        free(serial_end);
        avi_model_destroy(m);
        if (use_scene) {
            avi_scene_bodies_free(&scene_info);
            avi_scene_free(&scene);
        }
    }
    return failed;
}
