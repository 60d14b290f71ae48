/* The avi command: run a scene, summarise an output file, list scenes. */
#include "avi/avi.h"
#include "avi/checkpoint.h"
#include "avi/output_stream.h"
#include "avi/run_output.h"
#include "avi/output.h"
#include "avi/scene.h"
#include "io/output_files.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>


static const char usage[] =
    "usage: avi run [SCENE] [-o OUT.h5] [--set KEY=VALUE]... [--quiet] [--verbose]\n"
    "       avi resume OUT.h5 [--set time.end=T] [--quiet] [--verbose]\n"
    "       avi info OUT.h5 [--verbose]\n"
    "       avi scenes\n"
    "       avi --help | --version\n"
    "\n"
    "  run     runs SCENE (a YAML file or a built-in name; default sphere-plate)\n"
    "          and streams energies, momenta and frames to OUT.h5 (default: the\n"
    "          scene's output.file) with an XDMF sidecar OUT.xmf.\n"
    "          --set KEY=VALUE overrides a scene key by its dotted path, e.g.\n"
    "          --set time.end=1e-4 --set bodies.sphere.velocity=[0,0,-1000]\n"
    "  resume  continues a run from its latest checkpoint (OUT.h5.ckpt, written\n"
    "          every output.checkpoint_every, at the end and on SIGINT/SIGTERM);\n"
    "          --set time.end=T extends a finished run; refuses (exit 2) a\n"
    "          corrupt checkpoint or a mesh file that changed since the run\n"
    "          started\n"
    "  info    prints a summary of an output file\n"
    "  scenes  lists the built-in scenes\n"
    "  --verbose  also prints HDF5's own error stack when an HDF5 call fails\n"
    "          (as does the environment variable AVI_HDF5_ERRORS=1)\n"
    "\n"
    "exit status: 0 success, 1 the run failed, 2 bad usage or input,\n"
    "             130 interrupted (SIGINT / SIGTERM)\n";

static volatile sig_atomic_t stop_requested;
static void on_signal(int sig) { stop_requested = sig; }

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* State shared by the observers of a run. */
typedef struct {
    avi_h5_writer *writer;
    avi_output_stream *stream; /* rows and frames go through it */
    const avi_model *model;
    double (*x)[3], (*v)[3]; /* frame buffers */
    double end_time;
    int progress;            /* draw a progress line */
    double wall_start, wall_last_draw;
    int io_failed;
    char checkpoint[4096];   /* checkpoint path */
    avi_checkpoint_info ckpt;
    avi_error ckpt_err;
    int ckpt_failed;
    double max_growth, e0, e_scale, gravity; /* blow-up check on the total energy */
    int have_e0, blew_up;
    char blow_up[512];
} run_state;

static void draw_progress(const avi_engine *e, run_state *rs, double t, int final)
{
    double now = wall_now();
    if (!final && now - rs->wall_last_draw < 0.2) return;
    rs->wall_last_draw = now;
    double elapsed = now - rs->wall_start;
    double frac = rs->end_time > 0.0 ? t / rs->end_time : 1.0;
    double rate = elapsed > 0.0 ? (double)avi_engine_events_total(e) / elapsed : 0.0;
    double eta = frac > 0.0 ? elapsed * (1.0 - frac) / frac : 0.0;
    fprintf(stderr, "\r  t = %.4e s / %.4e s (%5.1f%%)  %.3g events/s  ETA %.0f s   ", t, rs->end_time,
            100.0 * frac, rate, eta);
    if (final) fputc('\n', stderr);
    fflush(stderr);
}

enum { ITEM_ROW, ITEM_FRAME };

/* Energies, momenta and counts (one row per energy interval) and frames,
 * computed from a snapshot and written on the output stream's thread, each
 * flushed at once, so a killed run keeps every row up to its last
 * interval. */
static int write_row(run_state *rs, avi_snapshot *snap, int flush)
{
    avi_observation o;
    avi_snapshot_observe(snap, &o);
    double t = o.time;
    if (avi_h5_write_observation(rs->writer, (int64_t)o.events_total, &o) || (flush && avi_h5_flush(rs->writer))) {
        rs->io_failed = 1;
        return AVI_ERR_RUN;
    }
    /* Blow-up: the total energy wandered far from its initial value (the
     * engine itself stops on non-finite states). */
    if (!rs->have_e0) {
        /* The scale: the energies at t = 0, but at least M (|g| L + (L / T)^2)
         * with M the mass, L the size of the initial state and T the end
         * time, so that a system starting at rest (E0 = 0) is not judged
         * against round-off. */
        size_t nv = avi_model_vertex_count(rs->model);
        avi_snapshot_state(snap, &rs->x[0][0], NULL);
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, mass = 0.0;
        for (size_t i = 0; i < nv; i++) {
            mass += avi_model_vertex_mass(rs->model, (uint32_t)i);
            for (int c = 0; c < 3; c++) {
                lo[c] = fmin(lo[c], rs->x[i][c]);
                hi[c] = fmax(hi[c], rs->x[i][c]);
            }
        }
        double size = nv ? sqrt((hi[0] - lo[0]) * (hi[0] - lo[0]) + (hi[1] - lo[1]) * (hi[1] - lo[1]) +
                                (hi[2] - lo[2]) * (hi[2] - lo[2]))
                         : 0.0;
        double speed = rs->end_time > 0.0 ? size / rs->end_time : 0.0;
        rs->have_e0 = 1;
        rs->e0 = o.total;
        rs->e_scale = fmax(o.kinetic + fabs(o.elastic) + fabs(o.contact) + fabs(o.external),
                           mass * (rs->gravity * size + speed * speed));
    }
    if (rs->max_growth > 0.0 && rs->e_scale > 0.0 &&
        !(fabs(o.total - rs->e0) <= rs->max_growth * rs->e_scale)) {
        char who[256];
        avi_snapshot_describe_largest_energy(snap, who, sizeof who);
        snprintf(rs->blow_up, sizeof rs->blow_up,
                 "blow-up at t = %.17g: total energy %.6e J departs from E0 = %.6e J by more than "
                 "output.max_energy_growth = %g times %.3e J; largest: %s",
                 t, o.total, rs->e0, rs->max_growth, rs->e_scale, who);
        rs->blew_up = 1;
        return AVI_ERR_RUN;
    }
    return 0;
}

static int write_frame(run_state *rs, avi_snapshot *snap, int flush)
{
    avi_snapshot_state(snap, &rs->x[0][0], &rs->v[0][0]);
    if (avi_h5_write_frame(rs->writer, (int64_t)avi_snapshot_events_total(snap), avi_snapshot_time(snap),
                           (const double (*)[3])rs->x,
                           (const double (*)[3])rs->v) ||
        (flush && avi_h5_flush(rs->writer))) {
        rs->io_failed = 1;
        return AVI_ERR_RUN;
    }
    return 0;
}

/* The output stream's handler (worker thread). Each item is flushed, unless
 * more are already queued behind it (the writer fell behind the engine):
 * then the last of them flushes. */
static int write_item(void *user, int kind, avi_snapshot *snap, int queued)
{
    return kind == ITEM_ROW ? write_row(user, snap, queued == 0) : write_frame(user, snap, queued == 0);
}

static int energy_observer(const avi_engine *e, double t, void *user)
{
    run_state *rs = user;
    if (avi_output_stream_push(rs->stream, e, t, ITEM_ROW)) return AVI_ERR_RUN;
    if (rs->progress) draw_progress(e, rs, t, 0);
    return 0;
}

static int frame_observer(const avi_engine *e, double t, void *user)
{
    run_state *rs = user;
    return avi_output_stream_push(rs->stream, e, t, ITEM_FRAME) ? AVI_ERR_RUN : 0;
}

/* Every queued row and frame is written and the output flushed first, so
 * the file holds every row the checkpoint's observer positions say was
 * written. */
static int write_checkpoint(const avi_engine *e, run_state *rs)
{
    if (rs->stream && avi_output_stream_drain(rs->stream)) return AVI_ERR_RUN;
    if (avi_h5_flush(rs->writer)) {
        rs->io_failed = 1;
        return AVI_ERR_RUN;
    }
    if (avi_checkpoint_write(rs->checkpoint, e, &rs->ckpt, &rs->ckpt_err)) {
        rs->ckpt_failed = 1;
        return AVI_ERR_RUN;
    }
    return 0;
}

static int checkpoint_observer(const avi_engine *e, double t, void *user)
{
    (void)t;
    return write_checkpoint(e, user);
}

/* Runs a loaded scene to its end time, writing `out`. With `resume` (a
 * checkpoint path), the engine continues from that checkpoint and the
 * output keeps the rows and frames written before it. The scene file (NULL
 * for built-ins and resumes) and the scene's mesh files may not be outputs. */
static int run_scene(avi_scene *scene, const char *source, const char *out, int quiet, const char *resume,
                     const avi_input_files *recorded)
{
    avi_error err;
    memset(&err, 0, sizeof err);
    /* Every output name is checked and the output locked before anything
     * is built, moved or removed. */
    avi_output_files files;
    if (avi_output_files_open(&files, out, scene, scene->file, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }
    avi_model *model = NULL;
    avi_scene_bodies info = {0, NULL};
    if (avi_scene_build(scene, &model, &info, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        avi_output_files_close(&files);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }

    /* The files read: recorded in checkpoints; on resume, the mesh files
     * must be the ones the run started with. */
    avi_input_files inputs = {0, NULL};
    if (avi_input_files_of(scene, &info, &inputs, &err) ||
        (resume && avi_input_files_match(resume, recorded, &inputs, &err))) {
        fprintf(stderr, "avi: %s\n", err.message);
        avi_input_files_free(&inputs);
        avi_model_destroy(model);
        avi_scene_bodies_free(&info);
        avi_output_files_close(&files);
        return err.status;
    }

    /* Output layout: bodies, masses, connectivity, parameters. */
    size_t nv = avi_model_vertex_count(model);
    avi_run_output so;
    int aside = 0; /* the earlier output is at OUT.resume-old */
    run_state rs;
    memset(&rs, 0, sizeof rs);
    rs.x = malloc((nv ? nv : 1) * sizeof *rs.x);
    rs.v = malloc((nv ? nv : 1) * sizeof *rs.v);
    int rc = AVI_OK;
    avi_engine *engine = NULL;
    if (avi_run_output_init(&so, scene, &info, model, out, &err) || !rs.x || !rs.v) {
        fprintf(stderr, "avi: out of memory\n");
        rc = AVI_ERR_RUN;
        goto done;
    }
    engine = avi_engine_create_for_scene(scene, &info, model, &err);
    if (!engine) {
        fprintf(stderr, "avi: %s\n", err.message);
        rc = err.status ? (int)err.status : AVI_ERR_RUN;
        goto done;
    }
    /* Observers in a fixed order: checkpoints store their positions. */
    avi_engine_add_observer(engine, scene->output.energy_every, energy_observer, &rs);
    avi_engine_add_observer(engine, scene->output.frame_every, frame_observer, &rs);
    if (scene->output.checkpoint_every > 0.0)
        avi_engine_add_observer(engine, scene->output.checkpoint_every, checkpoint_observer, &rs);
    avi_checkpoint_path(out, rs.checkpoint, sizeof rs.checkpoint);
    rs.ckpt.scene_source = source;
    rs.ckpt.scene_text = scene->text;
    rs.ckpt.resolved_text = so.resolved_text;
    rs.ckpt.output_path = out;
    rs.ckpt.inputs = resume ? recorded : &inputs;

    size_t keep_rows = 0, keep_frames = 0;
    if (resume) {
        if (avi_checkpoint_restore(resume, engine, &err)) {
            fprintf(stderr, "avi: %s\n", err.message);
            rc = err.status;
            goto done;
        }
        /* Rows and frames already written are the observers' first calls. */
        keep_rows = (size_t)avi_engine_observer_calls(engine, 0);
        keep_frames = (size_t)avi_engine_observer_calls(engine, 1);
        /* The earlier output stays aside until its rows are copied into the
         * new file: if it is still there, a resume was killed before that,
         * and it (not a new file at `out`, if any) is the one to continue. */
        if (avi_output_files_set_aside(&files, &err)) {
            fprintf(stderr, "avi: %s\n", err.message);
            rc = AVI_ERR_RUN;
            goto done;
        }
        aside = 1;
    }
    rs.writer = avi_h5_create(&so.layout, &err);
    if (!rs.writer) {
        fprintf(stderr, "avi: %s\n", err.message);
        rc = AVI_ERR_RUN;
        goto done;
    }
    if (resume) {
        if (avi_h5_copy_prefix(files.path[AVI_OUT_ASIDE], rs.writer, keep_rows, keep_frames, so.bodies,
                               (int)info.count, nv, &err) ||
            avi_h5_flush(rs.writer)) {
            fprintf(stderr, "avi: %s\n", err.message[0] ? err.message : avi_h5_error(rs.writer)->message);
            rc = err.message[0] ? err.status : AVI_ERR_RUN;
            goto done;
        }
        /* While it exists, the next resume would copy from it: a stale one
         * must not survive. */
        aside = 0;
        if (avi_output_files_drop_aside(&files, &err)) {
            fprintf(stderr, "avi: %s\n", err.message);
            rc = AVI_ERR_RUN;
            goto done;
        }
    } else if (avi_output_files_clear_stale(&files, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        rc = AVI_ERR_RUN;
        goto done;
    }
    rs.end_time = scene->end_time;
    rs.max_growth = scene->output.max_energy_growth;
    rs.gravity = sqrt(scene->gravity[0] * scene->gravity[0] + scene->gravity[1] * scene->gravity[1] +
                      scene->gravity[2] * scene->gravity[2]);
    rs.progress = !quiet && isatty(STDERR_FILENO);
    rs.model = model;
    rs.stream = avi_output_stream_create(model, 0, 1, write_item, &rs);
    if (!rs.stream) rs.stream = avi_output_stream_create(model, 1, 0, write_item, &rs);
    if (!rs.stream) {
        fprintf(stderr, "avi: out of memory\n");
        rc = AVI_ERR_RUN;
        goto done;
    }
    rs.wall_start = wall_now();

    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    avi_engine_set_stop_flag(engine, &stop_requested);

    rc = avi_engine_run(engine, scene->end_time);
    /* A failure on the output thread decides the outcome (the engine may
     * have gone on a little after it, but nothing after it was written). */
    int stream_rc = avi_output_stream_destroy(rs.stream);
    rs.stream = NULL;
    if (stream_rc && (rc == AVI_OK || rc == AVI_INTERRUPTED)) rc = AVI_ERR_RUN;
    if (rs.progress) draw_progress(engine, &rs, avi_engine_time(engine), 1);
    /* A checkpoint at the end (or where a signal stopped the run), from
     * which `avi resume` continues or extends the run. */
    if ((rc == AVI_OK || rc == AVI_INTERRUPTED) && !rs.io_failed && !rs.ckpt_failed) {
        if (write_checkpoint(engine, &rs) != 0) rc = AVI_ERR_RUN;
    }
    /* "failed: " and the whole reason (an avi_error message or rs.blow_up). */
    _Static_assert(sizeof rs.blow_up >= sizeof err.message, "a reason fits in rs.blow_up's size");
    char completion[sizeof "failed: " + sizeof rs.blow_up];
    if (rc == AVI_OK) {
        snprintf(completion, sizeof completion, "complete");
    } else if (rc == AVI_INTERRUPTED) {
        snprintf(completion, sizeof completion, "interrupted");
        fprintf(stderr, "avi: interrupted by signal %d at t = %.6e s; checkpoint %s\n", (int)stop_requested,
                avi_engine_time(engine), rs.checkpoint);
    } else {
        const char *why = rs.io_failed     ? avi_h5_error(rs.writer)->message
                          : rs.ckpt_failed ? rs.ckpt_err.message
                          : rs.blew_up     ? rs.blow_up
                                           : avi_engine_error(engine)->message;
        snprintf(completion, sizeof completion, "failed: %s", why);
        fprintf(stderr, "avi: %s\n", why);
        rc = AVI_ERR_RUN;
    }
    if (avi_h5_close(rs.writer, completion, &err)) {
        if (rc == AVI_OK) fprintf(stderr, "avi: %s\n", err.message);
        if (rc == AVI_OK || rc == AVI_INTERRUPTED) rc = AVI_ERR_RUN;
    }
    rs.writer = NULL;
    if (rc == AVI_OK && !quiet)
        fprintf(stderr, "avi: %s: %llu events to t = %g s in %.2f s; wrote %s\n", scene->name,
                (unsigned long long)avi_engine_events_total(engine), scene->end_time, wall_now() - rs.wall_start, out);
done:
    avi_output_stream_destroy(rs.stream);
    if (rs.writer) avi_h5_close(rs.writer, "failed: could not start", NULL);
    if (aside) avi_output_files_put_back(&files);
    avi_output_files_close(&files);
    avi_engine_destroy(engine);
    avi_model_destroy(model);
    avi_scene_bodies_free(&info);
    avi_run_output_free(&so);
    avi_input_files_free(&inputs);
    free(rs.x);
    free(rs.v);
    return rc;
}

typedef struct {
    const char *scene;
    const char *out;
    const char **sets;
    size_t nsets;
    int quiet;
} run_args;

static int parse_run_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->sets = calloc((size_t)argc + 1, sizeof *a->sets);
    if (!a->sets) return -1;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
            if (++i >= argc) return fprintf(stderr, "avi: %s needs a file name\n", s), -1;
            a->out = argv[i];
        } else if (!strncmp(s, "--output=", 9)) {
            a->out = s + 9;
        } else if (!strcmp(s, "--set")) {
            if (++i >= argc) return fprintf(stderr, "avi: --set needs KEY=VALUE\n"), -1;
            a->sets[a->nsets++] = argv[i];
        } else if (!strncmp(s, "--set=", 6)) {
            a->sets[a->nsets++] = s + 6;
        } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
            a->quiet = 1;
        } else if (s[0] == '-' && s[1] != '\0') {
            return fprintf(stderr, "avi: unknown option '%s'\n%s", s, usage), -1;
        } else if (!a->scene) {
            a->scene = s;
        } else {
            return fprintf(stderr, "avi: unexpected argument '%s'\n%s", s, usage), -1;
        }
    }
    for (size_t k = 0; k < a->nsets; k++)
        if (!strchr(a->sets[k], '='))
            return fprintf(stderr, "avi: --set '%s': expected KEY=VALUE\n", a->sets[k]), -1;
    if (!a->scene) a->scene = "sphere-plate";
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    run_args a;
    if (parse_run_args(argc, argv, &a)) {
        free(a.sets);
        return AVI_ERR_INPUT;
    }
    avi_scene scene;
    avi_error err;
    memset(&err, 0, sizeof err);
    if (avi_scene_load(a.scene, a.sets, a.nsets, &scene, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        free(a.sets);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }
    free(a.sets);
    int rc = run_scene(&scene, a.scene, a.out ? a.out : scene.output.file, a.quiet, NULL, NULL);
    avi_scene_free(&scene);
    return rc;
}

/* avi resume OUT.h5 [--set time.end=T] [--quiet]: the scene comes from the
 * checkpoint; only the end time may change. */
static int cmd_resume(int argc, char **argv)
{
    run_args a;
    if (parse_run_args(argc, argv, &a) || a.out || argc == 0 || a.scene == NULL || strcmp(a.scene, "sphere-plate") == 0) {
        if (a.sets) fprintf(stderr, "usage: avi resume OUT.h5 [--set time.end=T] [--quiet]\n");
        free(a.sets);
        return AVI_ERR_INPUT;
    }
    for (size_t k = 0; k < a.nsets; k++)
        if (strncmp(a.sets[k], "time.end=", 9) != 0) {
            fprintf(stderr, "avi: resume: only --set time.end=T may change a resumed run (got '%s')\n", a.sets[k]);
            free(a.sets);
            return AVI_ERR_INPUT;
        }
    char ckpt[4096];
    avi_checkpoint_path(a.scene, ckpt, sizeof ckpt);
    avi_checkpoint_meta meta;
    avi_error err;
    memset(&err, 0, sizeof err);
    if (access(ckpt, R_OK) != 0) {
        fprintf(stderr, "avi: resume: %s: no checkpoint (%s)\n", ckpt, strerror(errno));
        free(a.sets);
        return AVI_ERR_INPUT;
    }
    if (avi_checkpoint_read_info(ckpt, &meta, &err) || avi_input_files_present(ckpt, &meta.inputs, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        free(a.sets);
        avi_checkpoint_meta_free(&meta);
        return AVI_ERR_INPUT;
    }
    avi_scene scene;
    int rc = avi_scene_load_string(meta.resolved_text, strlen(meta.resolved_text), meta.scene_source, NULL, a.sets,
                                   a.nsets, &scene, &err);
    free(a.sets);
    if (rc) {
        fprintf(stderr, "avi: %s\n", err.message);
        avi_checkpoint_meta_free(&meta);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }
    if (scene.end_time < meta.time) {
        fprintf(stderr, "avi: resume: %s already reached t = %g, after the end time\n", a.scene, meta.time);
        rc = AVI_ERR_INPUT;
    } else {
        /* The scene as given stays the one recorded in the file. */
        free(scene.text);
        scene.text = strdup(meta.scene_text);
        rc = scene.text ? run_scene(&scene, meta.scene_source, a.scene, a.quiet, ckpt, &meta.inputs) : AVI_ERR_RUN;
    }
    avi_scene_free(&scene);
    avi_checkpoint_meta_free(&meta);
    return rc;
}

static int cmd_info(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "avi: info takes one file\n%s", usage);
        return AVI_ERR_INPUT;
    }
    avi_error err;
    memset(&err, 0, sizeof err);
    if (avi_h5_info(argv[0], stdout, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }
    return 0;
}

static int cmd_scenes(void)
{
    for (size_t i = 0; i < avi_scene_builtin_count(); i++)
        printf("%-16s %s\n", avi_scene_builtin_name(i), avi_scene_builtin_description(i));
    return 0;
}

int main(int argc, char **argv)
{
    /* Past a file-size limit (ulimit -f) a write fails with EFBIG, like on
     * a full disk, instead of the process being killed without a word. */
    signal(SIGXFSZ, SIG_IGN);
    /* --verbose anywhere after the command: HDF5's error stack on stderr
     * (read by the HDF5 set-up before HDF5's first call). */
    int kept = 1;
    for (int i = 1; i < argc; i++) {
        if (i > 1 && !strcmp(argv[i], "--verbose")) setenv("AVI_HDF5_ERRORS", "1", 1);
        else argv[kept++] = argv[i];
    }
    argc = kept;
    argv[argc] = NULL;
    if (argc < 2) {
        fputs(usage, stderr);
        return AVI_ERR_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        fputs(usage, stdout);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("avi %s\n", AVI_VERSION_STRING);
        return 0;
    }
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "scenes")) return cmd_scenes();
    if (!strcmp(cmd, "resume")) return cmd_resume(argc - 2, argv + 2);
    fprintf(stderr, "avi: unknown command '%s'\n%s", cmd, usage);
    return AVI_ERR_INPUT;
}
