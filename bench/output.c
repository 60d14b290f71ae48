/* Output cost: what writing observables and frames to HDF5 adds to a run.
 *
 * A built-in scene (with --set-like overrides) runs to its end time
 *  - with no observers ("none");
 *  - with in-memory observers ("memory"): avi_engine_observe at every
 *    energy interval and avi_engine_state_at at every frame interval,
 *    nothing written;
 *  - with the HDF5 writer ("h5"), as `avi run` does (src/cli/main.c): one
 *    row per energy interval and a frame per frame interval, each followed
 *    by avi_h5_flush, the XDMF sidecar kept current, in a temporary
 *    directory; avi_h5_create and avi_h5_close are timed apart ("setup");
 *  - with the same writer flushed only after frames ("h5-flush-at-frames"),
 *    to separate the cost of the flush after every row;
 *  - with the writer behind an output stream ("h5-stream", what `avi run`
 *    does): the engine's thread snapshots the state and goes on, a worker
 *    thread observes, writes and flushes as in "h5" (leaving the flush to
 *    the last item when several are queued); the run's time includes
 *    draining the stream at the end;
 * at the scene's output rates ("1x") and at 10x and 100x as many rows and
 * frames. Checkpoints (output.checkpoint_every) are not written.
 *
 * Runs are interleaved (every configuration once, R times; rates above 10x,
 * which cost several runs' time, H times) and the median CPU time of the
 * process (and wall time) is kept: the machine is shared. Overhead =
 * (time - time of "none") / time of "none". "In observers" is the CPU time
 * spent inside the observer callbacks over the CPU time of "none": a
 * direct measure, free of the run-to-run noise of the difference (its two
 * clock reads per callback cost about 1 us); it is the calling thread's CPU
 * time, so for "h5-stream" it is what the engine's thread pays (the
 * snapshots), while "CPU s" counts every thread. The wall time inside them is
 * split into avi_engine_observe, writing + flushing a row, state_at,
 * writing a frame, and the flush after a frame (which rewrites the XDMF
 * sidecar). After each HDF5 run one more avi_xdmf_write of all its frames
 * is timed alone: what the last flushes paid for the sidecar.
 *
 *   build/bench/output [--scene NAME [--set KEY=VALUE]...]... [--repeat R]
 *                      [--heavy-repeat H] [--rates 1,10,100] [--dir DIR]
 *
 * R = 3 and H = 1 by default; DIR (default $TMPDIR or /tmp) gets a private
 * directory for the files, removed at the end.
 *
 * Default: sphere-plate with time.end=4e-4 (impact included) and bar with
 * time.end=2. One JSON object per (scene, mode, rate) on stdout, a table on
 * stderr. */
#include "avi/avi.h"
#include "avi/output.h"
#include "avi/scene.h"
#include "avi/sync.h"
#include "bench_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "run/output_stream.h"
#include "run/run_output.h"

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double thread_cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define MAX_SCENES 8
#define MAX_SETS 32
#define MAX_RATES 8
#define MAX_REPEAT 64

typedef struct {
    const char *name;
    const char *sets[MAX_SETS];
    size_t nsets;
} scene_arg;

/* MODE_H5_LAZY: as MODE_H5 but rows are flushed only with the frames
 * (the writer writes them in blocks of 1024), to show what the flush after
 * every row costs. */
typedef enum { MODE_NONE, MODE_MEMORY, MODE_H5, MODE_H5_LAZY, MODE_H5_STREAM, MODE_COUNT } mode;
static const char *const mode_name[] = {"none", "memory", "h5", "h5-flush-at-frames", "h5-stream"};

/* Where the time inside the observers goes (wall seconds). */
enum { PART_OBSERVE, PART_ROWS, PART_STATE, PART_FRAMES, PART_FRAME_FLUSH, PART_N };
static const char *const part_name[] = {"observe", "rows", "state_at", "frames", "frame_flush"};

/* What the observers share. */
typedef struct {
    mode md;
    avi_h5_writer *writer;
    avi_output_stream *stream; /* MODE_H5_STREAM */
    double (*x)[3], (*v)[3];
    double cpu;          /* process CPU seconds inside the callbacks */
    double part[PART_N];
    size_t rows, frames; /* callbacks */
    double *frame_times; /* [frames] */
    size_t frame_cap;
    double sink;         /* keeps the in-memory results live */
    int failed;
} obs_state;

/* Energies, momenta and counts: one row, flushed at once (as avi run). */
static int energy_observer(const avi_engine *e, double t, void *user)
{
    obs_state *s = user;
    double c0 = thread_cpu_now(), w0 = bench_now();
    if (s->md == MODE_H5_STREAM) {
        if (avi_output_stream_push(s->stream, e, t, 0)) s->failed = 1;
        s->part[PART_OBSERVE] += bench_now() - w0;
        s->rows++;
        s->cpu += thread_cpu_now() - c0;
        return s->failed ? AVI_ERR_RUN : 0;
    }
    avi_observation o;
    avi_engine_observe(e, t, &o);
    double w1 = bench_now();
    s->part[PART_OBSERVE] += w1 - w0;
    if (s->md == MODE_H5 || s->md == MODE_H5_LAZY) {
        if (avi_h5_write_observation(s->writer, (int64_t)o.events_total, &o) ||
            (s->md == MODE_H5 && avi_h5_flush(s->writer)))
            s->failed = 1;
        s->part[PART_ROWS] += bench_now() - w1;
    }
    s->sink += o.total;
    s->rows++;
    s->cpu += thread_cpu_now() - c0;
    return s->failed ? AVI_ERR_RUN : 0;
}

static int frame_observer(const avi_engine *e, double t, void *user)
{
    obs_state *s = user;
    double c0 = thread_cpu_now(), w0 = bench_now();
    if (s->md == MODE_H5_STREAM) {
        if (avi_output_stream_push(s->stream, e, t, 1)) s->failed = 1;
        s->part[PART_STATE] += bench_now() - w0;
    } else {
        avi_engine_state_at(e, t, &s->x[0][0], &s->v[0][0]);
    }
    double w1 = bench_now();
    s->part[PART_STATE] += w1 - w0;
    if (s->md == MODE_H5 || s->md == MODE_H5_LAZY) {
        if (avi_h5_write_frame(s->writer, (int64_t)avi_engine_events_total(e), t, (const double (*)[3])s->x,
                               (const double (*)[3])s->v))
            s->failed = 1;
        double w2 = bench_now();
        s->part[PART_FRAMES] += w2 - w1;
        if (!s->failed && avi_h5_flush(s->writer)) s->failed = 1;
        s->part[PART_FRAME_FLUSH] += bench_now() - w2;
    }
    if (s->md != MODE_H5_STREAM) s->sink += s->x[0][0] + s->v[0][0];
    if (s->frames == s->frame_cap) {
        size_t cap = s->frame_cap ? 2 * s->frame_cap : 256;
        double *p = realloc(s->frame_times, cap * sizeof *p);
        if (!p) s->failed = 1;
        else s->frame_times = p, s->frame_cap = cap;
    }
    if (!s->failed) s->frame_times[s->frames] = t;
    s->frames++;
    s->cpu += thread_cpu_now() - c0;
    return s->failed ? AVI_ERR_RUN : 0;
}

/* The output stream's handler for MODE_H5_STREAM (worker thread): what
 * the "h5" observers do, from the snapshot. */
static int stream_item(void *user, int kind, avi_snapshot *snap, int queued)
{
    obs_state *s = user;
    if (kind == 0) {
        avi_observation o;
        avi_snapshot_observe(snap, &o);
        return avi_h5_write_observation(s->writer, (int64_t)o.events_total, &o) ||
               (queued == 0 && avi_h5_flush(s->writer));
    }
    avi_snapshot_state(snap, &s->x[0][0], &s->v[0][0]);
    return avi_h5_write_frame(s->writer, (int64_t)avi_snapshot_events_total(snap), avi_snapshot_time(snap),
                              (const double (*)[3])s->x, (const double (*)[3])s->v) ||
           (queued == 0 && avi_h5_flush(s->writer));
}

typedef struct {
    double cpu, wall;     /* avi_engine_run (and draining the stream) */
    double setup;         /* wall: avi_h5_create + avi_h5_close */
    double obs_cpu;       /* CPU inside the observers */
    double xdmf_wall, xdmf_cpu; /* one avi_xdmf_write of every frame, after the run */
    double part[PART_N];
    uint64_t events;
    size_t rows, frames;
    double file_bytes;    /* .h5 + .xmf */
} run_result;

static double file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (double)st.st_size : 0.0;
}

/* One run of a scene in a mode, at `factor` times the scene's rates. */
static int run_once(const scene_arg *sa, mode md, double factor, const char *dir, run_result *r)
{
    avi_scene scene;
    avi_error err;
    memset(&err, 0, sizeof err);
    memset(r, 0, sizeof *r);
    if (avi_scene_load(sa->name, sa->sets, sa->nsets, &scene, &err)) {
        fprintf(stderr, "output: %s\n", err.message);
        return -1;
    }
    avi_model *model = NULL;
    avi_scene_bodies info = {0, NULL};
    if (avi_scene_build(&scene, &model, &info, &err)) {
        fprintf(stderr, "output: %s\n", err.message);
        avi_scene_free(&scene);
        return -1;
    }
    double energy_every = scene.output.energy_every / factor, frame_every = scene.output.frame_every / factor;
    size_t nv = avi_model_vertex_count(model);
    obs_state os;
    memset(&os, 0, sizeof os);
    os.md = md;
    os.x = malloc((nv ? nv : 1) * sizeof *os.x);
    os.v = malloc((nv ? nv : 1) * sizeof *os.v);
    avi_engine *engine = NULL;
    char h5[4200] = "", xmf[4200] = "";
    int rc = -1;
    /* The layout `avi run` writes, at the scaled rates. */
    avi_run_output ro;
    snprintf(h5, sizeof h5, "%s/%s.h5", dir, scene.name);
    avi_xdmf_default_path(h5, xmf, sizeof xmf);
    if (avi_run_output_init(&ro, &scene, &info, model, h5, &err) || !os.x || !os.v) {
        fprintf(stderr, "output: out of memory\n");
        goto done;
    }
    ro.layout.energy_every = energy_every;
    ro.layout.frame_every = frame_every;
    engine = avi_engine_create_for_scene(&scene, &info, model, &err);
    if (!engine) {
        fprintf(stderr, "output: %s\n", err.message);
        goto done;
    }
    if (md != MODE_NONE) {
        avi_engine_add_observer(engine, energy_every, energy_observer, &os);
        avi_engine_add_observer(engine, frame_every, frame_observer, &os);
    }
    int h5mode = md == MODE_H5 || md == MODE_H5_LAZY || md == MODE_H5_STREAM;
    if (h5mode) {
        double t0 = bench_now();
        os.writer = avi_h5_create(&ro.layout, &err);
        r->setup += bench_now() - t0;
        if (!os.writer) {
            fprintf(stderr, "output: %s\n", err.message);
            goto done;
        }
    }
    if (md == MODE_H5_STREAM && !(os.stream = avi_output_stream_create(model, 0, 1, stream_item, &os))) {
        fprintf(stderr, "output: cannot start the output stream\n");
        goto done;
    }
    double w0 = bench_now(), c0 = cpu_now();
    int run_rc = avi_engine_run(engine, scene.end_time);
    if (os.stream && avi_output_stream_destroy(os.stream)) {
        os.failed = 1;
        if (run_rc == AVI_OK) run_rc = AVI_ERR_RUN;
    }
    os.stream = NULL;
    r->cpu = cpu_now() - c0;
    r->wall = bench_now() - w0;
    r->obs_cpu = os.cpu;
    memcpy(r->part, os.part, sizeof r->part);
    r->rows = os.rows;
    r->frames = os.frames;
    r->events = avi_engine_events_total(engine);
    if (run_rc != AVI_OK) {
        fprintf(stderr, "output: %s: run failed: %s\n", scene.name,
                os.failed ? avi_h5_error(os.writer)->message : avi_engine_error(engine)->message);
        goto done;
    }
    if (h5mode) {
        if (avi_h5_row_count(os.writer) != r->rows || avi_h5_frame_count(os.writer) != r->frames) {
            fprintf(stderr, "output: %s: the writer holds %zu rows and %zu frames, the observers made %zu and %zu\n",
                    scene.name, avi_h5_row_count(os.writer), avi_h5_frame_count(os.writer), r->rows, r->frames);
            goto done;
        }
        double t0 = bench_now();
        int crc = avi_h5_close(os.writer, "complete", &err);
        r->setup += bench_now() - t0;
        os.writer = NULL;
        if (crc) {
            fprintf(stderr, "output: %s\n", err.message);
            goto done;
        }
        r->file_bytes = file_size(h5) + file_size(xmf);
        /* The sidecar rewrite that every flush after a frame makes, alone. */
        double xw0 = bench_now(), xc0 = cpu_now();
        if (avi_xdmf_write(xmf, h5, ro.bodies, (int)info.count, os.frame_times, os.frames, &err)) {
            fprintf(stderr, "output: %s\n", err.message);
            goto done;
        }
        r->xdmf_cpu = cpu_now() - xc0;
        r->xdmf_wall = bench_now() - xw0;
    }
    rc = 0;
done:
    avi_output_stream_destroy(os.stream);
    if (os.writer) avi_h5_close(os.writer, "failed", NULL);
    if (h5[0]) unlink(h5);
    if (xmf[0]) unlink(xmf);
    avi_engine_destroy(engine);
    avi_model_destroy(model);
    avi_scene_bodies_free(&info);
    avi_scene_free(&scene);
    avi_run_output_free(&ro);
    free(os.x);
    free(os.v);
    free(os.frame_times);
    return rc;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double s[MAX_REPEAT];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    return n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
}

static double minimum(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++) m = fmin(m, v[i]);
    return m;
}

typedef struct {
    mode md;
    double factor;
    int n; /* runs made */
    double cpu[MAX_REPEAT], wall[MAX_REPEAT], setup[MAX_REPEAT], obs_cpu[MAX_REPEAT];
    double xdmf_wall[MAX_REPEAT], xdmf_cpu[MAX_REPEAT];
    double part[PART_N][MAX_REPEAT];
    run_result last;
} config;

static int bench_scene(const scene_arg *sa, const double *rates, int nrates, int repeat, int heavy_repeat,
                       const char *dir, int *printed)
{
    config cfg[1 + (MODE_COUNT - 1) * MAX_RATES];
    int nc = 0;
    cfg[nc++] = (config){.md = MODE_NONE, .factor = 1.0};
    for (int m = MODE_MEMORY; m < MODE_COUNT; m++)
        for (int k = 0; k < nrates; k++) cfg[nc++] = (config){.md = (mode)m, .factor = rates[k]};
    for (int rep = 0; rep < repeat; rep++)
        for (int c = 0; c < nc; c++) {
            /* Rates above 10x cost many times the run: fewer repetitions. */
            if (cfg[c].factor > 10.0 && rep >= heavy_repeat) continue;
            run_result r;
            if (run_once(sa, cfg[c].md, cfg[c].factor, dir, &r)) return -1;
            int n = cfg[c].n++;
            cfg[c].cpu[n] = r.cpu;
            cfg[c].wall[n] = r.wall;
            cfg[c].setup[n] = r.setup;
            cfg[c].obs_cpu[n] = r.obs_cpu;
            cfg[c].xdmf_wall[n] = r.xdmf_wall;
            cfg[c].xdmf_cpu[n] = r.xdmf_cpu;
            for (int p = 0; p < PART_N; p++) cfg[c].part[p][n] = r.part[p];
            cfg[c].last = r;
            /* Observers split the run at their times only: same events. */
            if (r.events != cfg[0].last.events) {
                fprintf(stderr, "output: %s: %s run made %llu events, the plain run %llu\n", sa->name,
                        mode_name[cfg[c].md], (unsigned long long)r.events,
                        (unsigned long long)cfg[0].last.events);
                return -1;
            }
        }
    double cpu0 = median(cfg[0].cpu, cfg[0].n), wall0 = median(cfg[0].wall, cfg[0].n);
    char sets[512] = "";
    for (size_t i = 0; i < sa->nsets; i++) {
        size_t len = strlen(sets);
        snprintf(sets + len, sizeof sets - len, "%s%s", i ? " " : "", sa->sets[i]);
    }
    if (!*printed) {
        fprintf(stderr, "| scene | mode | rates | rows | frames | CPU s | wall s | CPU overhead | wall overhead | "
                        "in observers (CPU) | observe / rows / state_at / frames / frame flush (wall ms) | setup ms | "
                        "one XDMF write (ms wall / CPU) | file MB |\n"
                        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
        *printed = 1;
    }
    for (int c = 0; c < nc; c++) {
        const config *g = &cfg[c];
        int n = g->n;
        double cpu = median(g->cpu, n), wall = median(g->wall, n);
        double setup = median(g->setup, n), obs_cpu = median(g->obs_cpu, n), part[PART_N];
        for (int p = 0; p < PART_N; p++) part[p] = median(g->part[p], n);
        printf("{\"bench\": \"output\", \"scene\": \"%s\", \"overrides\": \"%s\", \"mode\": \"%s\", \"rate_factor\": %g, "
               "\"rows\": %zu, \"frames\": %zu, \"events\": %llu, \"cpu_s\": %.4f, \"wall_s\": %.4f, \"cpu_s_min\": %.4f, "
               "\"wall_s_min\": %.4f, \"overhead_cpu\": %.4f, \"overhead_wall\": %.4f, \"observers_cpu_s\": %.4f, "
               "\"observers_cpu_frac\": %.4f, \"observers_wall_s\": {",
               sa->name, sets, mode_name[g->md], g->md == MODE_NONE ? 0.0 : g->factor, g->last.rows, g->last.frames,
               (unsigned long long)g->last.events, cpu, wall, minimum(g->cpu, n), minimum(g->wall, n),
               cpu / cpu0 - 1.0, wall / wall0 - 1.0, obs_cpu, obs_cpu / cpu0);
        for (int p = 0; p < PART_N; p++) printf("%s\"%s\": %.4f", p ? ", " : "", part_name[p], part[p]);
        double xw = median(g->xdmf_wall, n), xc = median(g->xdmf_cpu, n);
        printf("}, \"setup_s\": %.4f, \"xdmf_write_wall_s\": %.5f, \"xdmf_write_cpu_s\": %.5f, \"file_bytes\": %.0f, "
               "\"runs\": %d}\n",
               setup, xw, xc, g->last.file_bytes, n);
        fflush(stdout);
        if (g->md == MODE_NONE) {
            fprintf(stderr, "| %s | none | | | | %.3f | %.3f | | | | | | | |\n", sa->name, cpu, wall);
            continue;
        }
        char setup_ms[32] = "", mb[32] = "", parts[128], xdmf[48] = "";
        if (g->md == MODE_H5 || g->md == MODE_H5_LAZY || g->md == MODE_H5_STREAM) {
            snprintf(setup_ms, sizeof setup_ms, "%.0f", 1e3 * setup);
            snprintf(xdmf, sizeof xdmf, "%.1f / %.1f", 1e3 * xw, 1e3 * xc);
            snprintf(mb, sizeof mb, "%.1f", g->last.file_bytes / 1048576.0);
            snprintf(parts, sizeof parts, "%.0f / %.0f / %.0f / %.0f / %.0f", 1e3 * part[PART_OBSERVE],
                     1e3 * part[PART_ROWS], 1e3 * part[PART_STATE], 1e3 * part[PART_FRAMES],
                     1e3 * part[PART_FRAME_FLUSH]);
        } else {
            snprintf(parts, sizeof parts, "%.0f / - / %.0f / - / -", 1e3 * part[PART_OBSERVE], 1e3 * part[PART_STATE]);
        }
        fprintf(stderr, "| %s | %s | %gx | %zu | %zu | %.3f | %.3f | %+.1f %% | %+.1f %% | %.2f %% | %s | %s | %s | %s |\n",
                sa->name, mode_name[g->md], g->factor, g->last.rows, g->last.frames, cpu, wall,
                100.0 * (cpu / cpu0 - 1.0), 100.0 * (wall / wall0 - 1.0), 100.0 * obs_cpu / cpu0, parts, setup_ms, xdmf,
                mb);
    }
    return 0;
}

int main(int argc, char **argv)
{
    scene_arg scenes[MAX_SCENES];
    int ns = 0, repeat = 3, heavy_repeat = 1, nrates = 0;
    double rates[MAX_RATES];
    const char *dir_arg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(a, "--scene") && ns < MAX_SCENES) {
            scenes[ns++] = (scene_arg){.name = v, .nsets = 0};
        } else if (v && !strcmp(a, "--set") && ns > 0 && scenes[ns - 1].nsets < MAX_SETS && strchr(v, '=')) {
            scenes[ns - 1].sets[scenes[ns - 1].nsets++] = v;
        } else if (v && !strcmp(a, "--repeat") && atoi(v) > 0 && atoi(v) <= MAX_REPEAT) {
            repeat = atoi(v);
        } else if (v && !strcmp(a, "--heavy-repeat") && atoi(v) > 0 && atoi(v) <= MAX_REPEAT) {
            heavy_repeat = atoi(v);
        } else if (v && !strcmp(a, "--dir")) {
            dir_arg = v;
        } else if (v && !strcmp(a, "--rates")) {
            nrates = 0;
            for (char *p = (char *)v; *p && nrates < MAX_RATES;) {
                char *end;
                double f = strtod(p, &end);
                if (end == p || !(f > 0.0)) break;
                rates[nrates++] = f;
                p = *end == ',' ? end + 1 : end;
            }
            if (nrates == 0) {
                fprintf(stderr, "output: --rates needs factors such as 1,10,100\n");
                return 2;
            }
        } else {
            fprintf(stderr,
                    "usage: %s [--scene NAME [--set KEY=VALUE]...]... [--repeat R] [--heavy-repeat H] "
                    "[--rates 1,10,100] [--dir DIR]\n",
                    argv[0]);
            return 2;
        }
        i++;
    }
    if (ns == 0) {
        scenes[ns++] = (scene_arg){.name = "sphere-plate", .sets = {"time.end=4e-4"}, .nsets = 1};
        scenes[ns++] = (scene_arg){.name = "bar", .sets = {"time.end=2"}, .nsets = 1};
    }
    if (nrates == 0) {
        rates[nrates++] = 1.0;
        rates[nrates++] = 10.0;
        rates[nrates++] = 100.0;
    }
    /* A private directory for the files, removed at the end. */
    char dir[4096];
    const char *base = dir_arg ? dir_arg : getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    snprintf(dir, sizeof dir, "%s/avi-bench-output-XXXXXX", base);
    if (!mkdtemp(dir)) {
        perror("output: mkdtemp");
        return 1;
    }
    int printed = 0, rc = 0;
    for (int k = 0; k < ns && !rc; k++)
        rc = bench_scene(&scenes[k], rates, nrates, repeat, heavy_repeat, dir, &printed) ? 1 : 0;
    rmdir(dir);
    return rc;
}
