/* A run: a scene evolved while its output file, checkpoints and the
 * blow-up check are kept (include/avi/run.h). */
#include "avi/run.h"

#include "avi/engine.h"
#include "avi/output.h"
#include "avi/sync.h"
#include "base/error.h"
#include "base/pool.h"
#include "output/output_files.h"
#include "run/blow_up.h"
#include "run/checkpoint.h"
#include "run/run_id.h"
#include "output/h5_row_digest.h"
#include "run/output_stream.h"
#include "run/run_output.h"
#include "run/run_log.h"
#include "run/provenance.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

_Static_assert(AVI_RUN_MAX_THREADS == AVI_POOL_MAX_THREADS, "one limit for the pool and the run's options");

struct avi_run {
    const avi_scene *scene;
    avi_scene owned_scene;   /* a resume's scene, loaded from the checkpoint */
    avi_checkpoint_meta meta; /* a resume's checkpoint information */
    int resumed;
    avi_output_files files;
    int files_open, aside;   /* aside: the earlier output is at OUT.resume-old */
    avi_model *model;
    avi_scene_bodies info;
    avi_input_files inputs;
    avi_run_output so;
    avi_engine *engine;
    avi_h5_writer *writer;
    avi_output_stream *stream; /* rows and frames go through it */
    double (*x)[3], (*v)[3];   /* frame buffers */
    double end_time;
    avi_run_log log;           /* banner and progress on stderr */
    avi_provenance prov;       /* this process's, for /parameters */
    char *first[4];            /* a resume's: the first run's provenance */
    char *resumed_text;        /* /parameters/resumed */
    double wall_start;
    int io_failed;
    int threads;               /* the engine's: option, scene key or default */
    char run_id[AVI_RUN_ID_SIZE]; /* ties the output and its checkpoints */
    char checkpoint[4096];     /* checkpoint path */
    avi_checkpoint_info ckpt;
    avi_error ckpt_err;
    int ckpt_failed;
    avi_blow_up blow_up;       /* the check on the total energy */
    int blew_up;
    int evolved, status;       /* of the last avi_run_evolve */
    int reached_end;           /* it ran to the scene's end time */
    char why[512];             /* its failure */
};

avi_run_options avi_default_run_options(void)
{
    avi_run_options o = {AVI_PROGRESS_NONE, 0.0, NULL, NULL, NULL, 0};
    return o;
}

size_t avi_run_options_size(void) { return sizeof(avi_run_options); }
size_t avi_run_stats_size(void) { return sizeof(avi_run_stats); }

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void draw_progress(avi_run *r, double t, int final)
{
    double now = wall_now();
    avi_run_log_progress(&r->log, stderr, now, now - r->wall_start, t, r->end_time,
                         avi_engine_events_total(r->engine), final);
}

/* The engine's heartbeat: progress while no observer comes due (a
 * crawling contact window, a long interval between rows). */
static void progress_beat(const avi_engine *e, double t, void *user)
{
    (void)e;
    avi_run *r = user;
    double now = wall_now();
    avi_run_log_progress(&r->log, stderr, now, now - r->wall_start, t, r->end_time, avi_engine_events_total(r->engine),
                         0);
}

/* ------------------------------------------------- the output stream's items */

enum { ITEM_ROW, ITEM_FRAME };

/* Energies, momenta and counts (one row per energy interval) and frames,
 * computed from a snapshot and written on the output stream's thread, each
 * flushed at once, so a killed run keeps every row up to its last
 * interval. */
static int write_row(avi_run *r, avi_snapshot *snap, int flush, int synchronized)
{
    avi_observation o;
    avi_snapshot_observe(snap, &o);
    if (avi_h5_write_row(r->writer, (int64_t)o.events_total, &o, synchronized) || (flush && avi_h5_flush(r->writer))) {
        r->io_failed = 1;
        return AVI_ERR_RUN;
    }
    if (avi_blow_up_check(&r->blow_up, r->model, snap, &o, synchronized, r->x)) {
        r->blew_up = 1;
        return AVI_ERR_RUN;
    }
    return 0;
}

static int write_frame(avi_run *r, avi_snapshot *snap, int flush)
{
    avi_snapshot_state(snap, &r->x[0][0], &r->v[0][0]);
    if (avi_h5_write_frame(r->writer, (int64_t)avi_snapshot_events_total(snap), avi_snapshot_time(snap),
                           (const double (*)[3])r->x, (const double (*)[3])r->v) ||
        (flush && avi_h5_flush(r->writer))) {
        r->io_failed = 1;
        return AVI_ERR_RUN;
    }
    return 0;
}

/* The output stream's handler (worker thread). Each item is flushed, unless
 * more are already queued behind it (the writer fell behind the engine):
 * then the last of them flushes. */
static int write_item(void *user, int kind, avi_snapshot *snap, int queued)
{
    if ((kind & AVI_STREAM_KIND) == ITEM_FRAME) return write_frame(user, snap, queued == 0);
    return write_row(user, snap, queued == 0, !(kind & AVI_STREAM_PLAIN));
}

/* ------------------------------------------------------------- observers */

static int energy_observer(const avi_engine *e, double t, void *user)
{
    avi_run *r = user;
    if (avi_output_stream_push(r->stream, e, t, ITEM_ROW | (avi_h5_row_synchronized(r->writer, t) ? 0 : AVI_STREAM_PLAIN)))
        return AVI_ERR_RUN;
    draw_progress(r, t, 0);
    return 0;
}

static int frame_observer(const avi_engine *e, double t, void *user)
{
    avi_run *r = user;
    return avi_output_stream_push(r->stream, e, t, ITEM_FRAME) ? AVI_ERR_RUN : 0;
}

/* Every queued row and frame is written and the output flushed first, so
 * the file holds every row the checkpoint's observer positions say was
 * written. */
static int write_checkpoint(avi_run *r)
{
    if (r->stream && avi_output_stream_trim(r->stream)) return AVI_ERR_RUN;
    if (avi_h5_flush(r->writer)) {
        r->io_failed = 1;
        return AVI_ERR_RUN;
    }
    /* The rows and frames a resume keeps (the observers' calls on their
     * grids; a final row off the grid may follow) and the last kept row's
     * digest, for a resume to check the output against. Zero when the
     * writer no longer holds that row (several evolves, each ending off
     * the grid): the run id is checked alone. */
    r->ckpt.output_rows = avi_engine_observer_calls(r->engine, 0);
    r->ckpt.output_frames = avi_engine_observer_calls(r->engine, 1);
    memset(r->ckpt.last_row_sha256, 0, sizeof r->ckpt.last_row_sha256);
    if (r->ckpt.output_rows)
        avi_h5_recent_row_digest(r->writer, (size_t)r->ckpt.output_rows - 1, r->ckpt.last_row_sha256);
    if (avi_checkpoint_write(r->checkpoint, r->engine, &r->ckpt, &r->ckpt_err)) {
        r->ckpt_failed = 1;
        return AVI_ERR_RUN;
    }
    return 0;
}

static int checkpoint_observer(const avi_engine *e, double t, void *user)
{
    (void)e;
    (void)t;
    return write_checkpoint(user);
}

/* ------------------------------------------------------------------ open */

/* Frees what a run holds; an output still open is closed as failed. */
static void run_free(avi_run *r)
{
    avi_output_stream_destroy(r->stream);
    if (r->writer) avi_h5_close(r->writer, "failed: could not start", NULL);
    if (r->aside) avi_output_files_put_back(&r->files);
    if (r->files_open) avi_output_files_close(&r->files);
    avi_engine_destroy(r->engine);
    avi_model_destroy(r->model);
    avi_scene_bodies_free(&r->info);
    avi_run_output_free(&r->so);
    avi_input_files_free(&r->inputs);
    free(r->x);
    free(r->v);
    for (int k = 0; k < 4; k++) free(r->first[k]);
    free(r->resumed_text);
    if (r->resumed) {
        avi_scene_free(&r->owned_scene);
        avi_checkpoint_meta_free(&r->meta);
    }
    free(r);
}

/* The model, the files it read (on resume: the ones the run started with),
 * the output layout and the engine with its observers, in a fixed order:
 * checkpoints store their positions. */
static int build(avi_run *r, const char *out, const char *resume, avi_error *err)
{
    const avi_scene *scene = r->scene;
    if (avi_scene_build(scene, &r->model, &r->info, err)) return err->status ? (int)err->status : AVI_ERR_INPUT;
    if (avi_input_files_of(scene, &r->info, &r->inputs, err) ||
        (resume && avi_input_files_match(resume, &r->meta.inputs, &r->inputs, err)))
        return err->status;
    size_t nv = avi_model_vertex_count(r->model);
    r->x = malloc((nv ? nv : 1) * sizeof *r->x);
    r->v = malloc((nv ? nv : 1) * sizeof *r->v);
    if (avi_run_output_init(&r->so, scene, &r->info, r->model, out, err) || !r->x || !r->v)
        return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    r->engine = avi_engine_create_for_scene(scene, &r->info, r->model, err);
    if (!r->engine) return err->status ? (int)err->status : AVI_ERR_RUN;
    avi_engine_add_observer(r->engine, scene->output.energy_every, energy_observer, r);
    avi_engine_add_observer(r->engine, scene->output.frame_every, frame_observer, r);
    if (scene->output.checkpoint_every > 0.0)
        avi_engine_add_observer(r->engine, scene->output.checkpoint_every, checkpoint_observer, r);
    return 0;
}

/* On resume, the engine continues from the checkpoint and the earlier
 * output stays aside until its rows are copied into the new file: if it is
 * still there, a resume was killed before that, and it (not a new file at
 * `out`, if any) is the one to continue. */
static int restore(avi_run *r, const char *resume, size_t *keep_rows, size_t *keep_frames, avi_error *err)
{
    if (avi_checkpoint_restore(resume, r->engine, err)) return err->status;
    /* Rows and frames already written are the observers' first calls. */
    *keep_rows = (size_t)avi_engine_observer_calls(r->engine, 0);
    *keep_frames = (size_t)avi_engine_observer_calls(r->engine, 1);
    if (*keep_rows != r->meta.output_rows || *keep_frames != r->meta.output_frames)
        return avi_error_set(err, AVI_ERR_INPUT,
                             "%s: implausible checkpoint: its observers wrote %zu rows and %zu frames, it records "
                             "%llu and %llu",
                             resume, *keep_rows, *keep_frames, (unsigned long long)r->meta.output_rows,
                             (unsigned long long)r->meta.output_frames);
    /* The output it continues (set aside by a killed resume, else at its
     * name) must be this checkpoint's, checked before anything moves. */
    struct stat st;
    const char *from = lstat(r->files.path[AVI_OUT_ASIDE], &st) == 0 ? r->files.path[AVI_OUT_ASIDE]
                                                                      : r->files.path[AVI_OUT_MAIN];
    if (avi_checkpoint_match_output(resume, &r->meta, r->files.path[AVI_OUT_MAIN], from, err)) return err->status;
    if (avi_output_files_set_aside(&r->files, err)) return err->status = AVI_ERR_RUN;
    r->aside = 1;
    return 0;
}

static int copy_prefix(avi_run *r, size_t keep_rows, size_t keep_frames, avi_error *err)
{
    if (avi_h5_copy_prefix(r->files.path[AVI_OUT_ASIDE], r->writer, keep_rows, keep_frames, r->so.bodies,
                           (int)r->info.count, avi_model_vertex_count(r->model), err) ||
        avi_h5_flush(r->writer)) {
        if (err->message[0]) return err->status;
        return avi_error_set(err, AVI_ERR_RUN, "%s", avi_h5_error(r->writer)->message);
    }
    /* While it exists, the next resume would copy from it: a stale one
     * must not survive. */
    r->aside = 0;
    if (avi_output_files_drop_aside(&r->files, err)) return err->status = AVI_ERR_RUN;
    return 0;
}

/* /parameters' provenance: this run's; on resume, the first run's (read
 * from the earlier output, set aside; this run's where it has none) and a
 * line for this resume appended to the earlier ones. */
static int set_provenance(avi_run *r, const avi_run_options *opt, int resume, avi_error *err)
{
    avi_provenance *p = &r->prov;
    avi_provenance_now(p, opt->command_line);
    avi_h5_layout *L = &r->so.layout;
    const char *mine[4] = {p->command_line, p->started, p->host, p->build};
    const char **field[4] = {&L->command_line, &L->started, &L->host, &L->build};
    static const char *const names[4] = {"/parameters/command_line", "/parameters/started", "/parameters/host",
                                         "/parameters/build"};
    const char *old = r->files.path[AVI_OUT_ASIDE];
    for (int k = 0; k < 4; k++) {
        r->first[k] = resume ? avi_h5_read_text(old, names[k]) : NULL;
        *field[k] = r->first[k] && r->first[k][0] ? r->first[k] : mine[k];
    }
    L->resumed = "";
    if (!resume) return 0;
    char *prev = avi_h5_read_text(old, "/parameters/resumed");
    size_t n = (prev ? strlen(prev) : 0) + strlen(p->started) + strlen(p->host) + strlen(p->command_line) + 4;
    r->resumed_text = malloc(n);
    if (r->resumed_text)
        snprintf(r->resumed_text, n, "%s%s%s %s %s", prev ? prev : "", prev && prev[0] ? "\n" : "", p->started, p->host,
                 p->command_line);
    free(prev);
    L->resumed = r->resumed_text;
    return r->resumed_text ? 0 : avi_error_set(err, AVI_ERR_RUN, "out of memory");
}

/* Every output name is checked and the output locked before anything is
 * built, moved or removed. The scene file (NULL for built-ins and resumes)
 * and the scene's mesh files may not be outputs. */
static int start(avi_run *r, const char *out, const avi_run_options *opt, const char *resume, avi_error *err)
{
    const avi_scene *scene = r->scene;
    if (avi_output_files_open(&r->files, out, scene, scene->file, err))
        return err->status ? (int)err->status : AVI_ERR_INPUT;
    r->files_open = 1;
    int rc = build(r, r->files.path[AVI_OUT_MAIN], resume, err);
    if (rc) return rc;
    /* The option, then the scene key, then a default by the model (every
     * core where slices pay): the bits are the same for any count, so a
     * resume may change it. */
    r->threads = opt->threads != 0 ? opt->threads : scene->threads;
    if (r->threads > AVI_POOL_MAX_THREADS || r->threads < AVI_RUN_THREADS_AUTO) /* a scene built by hand */
        return avi_error_set(err, AVI_ERR_INPUT, "%s: parallel.threads: %d threads (at most %d)",
                             scene->source ? scene->source : "scene", r->threads, AVI_POOL_MAX_THREADS);
    int cpus = avi_cpu_count() < AVI_POOL_MAX_THREADS ? avi_cpu_count() : AVI_POOL_MAX_THREADS;
    if (r->threads == 0) r->threads = avi_engine_default_threads(r->engine, cpus);
    if (r->threads < 0) r->threads = cpus;
    if (avi_engine_set_threads(r->engine, r->threads))
        return avi_error_set(err, AVI_ERR_RUN, "could not start %d threads: %s", r->threads,
                             avi_engine_error(r->engine)->message);
    r->so.layout.threads = r->threads;
    /* A fresh run draws its id; a resume keeps the checkpoint's. */
    if (resume) snprintf(r->run_id, sizeof r->run_id, "%s", r->meta.run_id);
    else if ((rc = avi_run_id_new(r->run_id, err))) return rc;
    r->so.layout.run_id = r->run_id;
    r->ckpt.run_id = r->run_id;
    avi_checkpoint_path(out, r->checkpoint, sizeof r->checkpoint);
    r->ckpt.scene_source = opt->scene_source ? opt->scene_source : scene->source;
    r->ckpt.scene_text = scene->text;
    r->ckpt.resolved_text = r->so.resolved_text;
    r->ckpt.output_path = r->files.path[AVI_OUT_MAIN];
    r->ckpt.inputs = resume ? &r->meta.inputs : &r->inputs;
    size_t keep_rows = 0, keep_frames = 0;
    if (resume && (rc = restore(r, resume, &keep_rows, &keep_frames, err))) return rc;
    /* The scene's count, else the one the output being continued used
     * (auto's rule may change between versions), else auto's (a file from
     * before the key has every row synchronized: the copy keeps the rule's). */
    long long every = scene->output.synchronized_every;
    if (every <= 0 && resume) every = avi_h5_read_synchronized_every(r->files.path[AVI_OUT_ASIDE]);
    if (every <= 0) every = avi_synchronized_every(r->engine, scene->output.energy_every);
    r->so.layout.synchronized_every = every;
    if ((rc = set_provenance(r, opt, resume != NULL, err))) return rc;
    r->writer = avi_h5_create(&r->so.layout, err);
    if (!r->writer) return err->status = AVI_ERR_RUN;
    if (resume) {
        if ((rc = copy_prefix(r, keep_rows, keep_frames, err))) return rc;
    } else if (avi_output_files_clear_stale(&r->files, err)) {
        return err->status = AVI_ERR_RUN;
    }
    avi_run_output_drop_written(&r->so, &r->info);
    r->end_time = scene->end_time;
    avi_blow_up_init(&r->blow_up, scene);
    r->stream = avi_output_stream_create(r->model, 0, 1, write_item, r);
    if (!r->stream) r->stream = avi_output_stream_create(r->model, 1, 0, write_item, r);
    if (!r->stream) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    /* The observation on as many threads as the engine (its own pool: it
     * runs beside the engine's) where its rows need them to keep up. */
    int observers = avi_output_stream_threads_for(r->model, r->threads, scene->output.energy_every, every);
    if ((rc = avi_output_stream_set_threads(r->stream, observers, 1u << ITEM_ROW, err))) return rc;
    r->wall_start = wall_now();
    avi_run_log_init(&r->log, opt, r->wall_start);
    avi_run_log_banner(&r->log, stderr, &r->so.layout, scene, avi_engine_time(r->engine));
    avi_engine_set_stop_flag(r->engine, opt->stop);
    avi_engine_set_heartbeat(r->engine, progress_beat, r);
    return 0;
}

static avi_run *open_run(avi_run *r, const char *out, const avi_run_options *opt, const char *resume,
                         avi_error *err)
{
    avi_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    avi_run_options defaults = avi_default_run_options();
    if (opt && (opt->threads < AVI_RUN_THREADS_AUTO || opt->threads > AVI_POOL_MAX_THREADS)) {
        avi_error_set(err, AVI_ERR_INPUT, "avi_run_options.threads: %d threads (expected 1 to %d, "
                      "AVI_RUN_THREADS_AUTO for every processor, or 0 for the scene's parallel.threads, else the default)",
                      opt->threads, AVI_POOL_MAX_THREADS);
        run_free(r);
        return NULL;
    }
    if (start(r, out, opt ? opt : &defaults, resume, err)) {
        run_free(r);
        return NULL;
    }
    return r;
}

avi_run *avi_run_open(const avi_scene *scene, const char *output, const avi_run_options *opt, avi_error *err)
{
    avi_run *r = calloc(1, sizeof *r);
    if (!r) {
        avi_error_set(err, AVI_ERR_RUN, "out of memory");
        return NULL;
    }
    r->scene = scene;
    return open_run(r, output, opt, NULL, err);
}

/* The scene comes from the checkpoint; only the end time may change. */
static int load_resumed(avi_run *r, const char *output, const char *ckpt, const char *const *sets, size_t nsets,
                        avi_error *err)
{
    for (size_t k = 0; k < nsets; k++)
        if (strncmp(sets[k], "time.end=", 9) != 0)
            return avi_error_set(err, AVI_ERR_INPUT,
                                 "resume: only --set time.end=T may change a resumed run (got '%s')", sets[k]);
    if (access(ckpt, R_OK) != 0)
        return avi_error_set(err, AVI_ERR_INPUT, "resume: %s: no checkpoint (%s)", ckpt, strerror(errno));
    r->resumed = 1;
    if (avi_checkpoint_read_info(ckpt, &r->meta, err) || avi_input_files_present(ckpt, &r->meta.inputs, err))
        return err->status = AVI_ERR_INPUT;
    avi_scene *scene = &r->owned_scene;
    if (avi_scene_load_string(r->meta.resolved_text, strlen(r->meta.resolved_text), r->meta.scene_source, NULL,
                              sets, nsets, scene, err))
        return err->status ? (int)err->status : AVI_ERR_INPUT;
    if (scene->end_time < r->meta.time)
        return avi_error_set(err, AVI_ERR_INPUT, "resume: %s already reached t = %g, after the end time", output,
                             r->meta.time);
    /* The scene as given stays the one recorded in the file. */
    free(scene->text);
    scene->text = strdup(r->meta.scene_text);
    if (!scene->text) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    r->scene = scene;
    return 0;
}

avi_run *avi_run_open_resume(const char *output, const char *const *overrides, size_t n_overrides,
                             const avi_run_options *opt, avi_error *err)
{
    avi_error local;
    if (!err) err = &local;
    memset(err, 0, sizeof *err);
    avi_run *r = calloc(1, sizeof *r);
    if (!r) {
        avi_error_set(err, AVI_ERR_RUN, "out of memory");
        return NULL;
    }
    char ckpt[4096];
    avi_checkpoint_path(output, ckpt, sizeof ckpt);
    if (load_resumed(r, output, ckpt, overrides, n_overrides, err)) {
        run_free(r);
        return NULL;
    }
    avi_run_options o = opt ? *opt : avi_default_run_options();
    o.scene_source = r->meta.scene_source;
    return open_run(r, output, &o, ckpt, err);
}

/* ---------------------------------------------------------------- evolve */

int avi_run_evolve(avi_run *r, double t_end, avi_error *err)
{
    /* Bad arguments are the caller's: the run and its file stay as they are. */
    if (!r) return avi_error_set(err, AVI_ERR_INPUT, "avi_run_evolve: no run");
    double now = avi_engine_time(r->engine);
    if (!isfinite(t_end) || t_end < now)
        return avi_error_set(err, AVI_ERR_INPUT, "avi_run_evolve: end time %g is not a finite time from t = %g s on",
                             t_end, now);
    if (r->evolved && r->status != AVI_OK && r->status != AVI_INTERRUPTED)
        return avi_error_set(err, (avi_status)r->status, "%s", r->why);
    r->evolved = 1;
    int rc = avi_engine_run(r->engine, t_end);
    /* A failure on the output thread decides the outcome (the engine may
     * have gone on a little after it, but nothing after it was written). */
    if (avi_output_stream_drain(r->stream) && (rc == AVI_OK || rc == AVI_INTERRUPTED)) rc = AVI_ERR_RUN;
    draw_progress(r, avi_engine_time(r->engine), 1);
    /* A checkpoint where the stop flag stopped the run, or at the end, from
     * which a resume continues or extends the run; at the end the
     * checkpoint observer, called at t_end like every observer, wrote it. */
    int end_written = rc == AVI_OK && r->scene->output.checkpoint_every > 0.0;
    if ((rc == AVI_OK || rc == AVI_INTERRUPTED) && !end_written && !r->io_failed && !r->ckpt_failed &&
        write_checkpoint(r))
        rc = AVI_ERR_RUN;
    r->status = rc;
    r->reached_end = rc == AVI_OK && t_end >= r->scene->end_time;
    if (rc == AVI_OK || rc == AVI_INTERRUPTED) {
        if (err) memset(err, 0, sizeof *err);
        if (rc == AVI_INTERRUPTED && err) err->status = AVI_INTERRUPTED;
        return rc;
    }
    const char *why = r->io_failed     ? avi_h5_error(r->writer)->message
                      : r->ckpt_failed ? r->ckpt_err.message
                      : r->blew_up     ? r->blow_up.message
                                       : avi_engine_error(r->engine)->message;
    snprintf(r->why, sizeof r->why, "%s", why);
    r->status = AVI_ERR_RUN;
    return avi_error_set(err, AVI_ERR_RUN, "%s", r->why);
}

avi_run_stats avi_run_stats_of(const avi_run *r)
{
    avi_run_stats s;
    s.scene_name = r->scene->name;
    s.output = r->files.path[AVI_OUT_MAIN];
    s.checkpoint = r->checkpoint;
    s.events = avi_engine_events_total(r->engine);
    s.time = avi_engine_time(r->engine);
    s.end_time = r->scene->end_time;
    s.wall = wall_now() - r->wall_start;
    return s;
}

int avi_run_close(avi_run *r, avi_error *err)
{
    if (!r) {
        if (err) memset(err, 0, sizeof *err);
        return AVI_OK;
    }
    /* "failed: " and the whole reason. */
    char completion[sizeof "failed: " + sizeof r->why];
    if (!r->evolved)
        snprintf(completion, sizeof completion, "failed: closed before it ran");
    else if (r->reached_end)
        snprintf(completion, sizeof completion, "complete");
    else if (r->status == AVI_OK || r->status == AVI_INTERRUPTED)
        snprintf(completion, sizeof completion, "interrupted");
    else
        snprintf(completion, sizeof completion, "failed: %s", r->why);
    avi_output_stream_destroy(r->stream);
    r->stream = NULL;
    avi_error local;
    int rc = avi_h5_close(r->writer, completion, err ? err : &local) ? AVI_ERR_RUN : AVI_OK;
    r->writer = NULL;
    run_free(r);
    return rc;
}
