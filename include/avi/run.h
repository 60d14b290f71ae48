/* avi: a run, a scene evolved while its output file is written, as `avi run`
 * and `avi resume` do it.
 *
 * A run owns everything around the engine: the output file (its names are
 * checked and it is locked when the run opens; it is written as OUT.part
 * and renamed at close), the output stream (rows and frames written on a
 * worker thread), checkpoints (every output.checkpoint_every and at the end
 * of each avi_run_evolve, at OUT.ckpt) and the blow-up check
 * (output.max_energy_growth: the run fails when the total energy departs
 * from its initial value by more than that factor times the energy scale).
 *
 * Errors: the convention of the public API. Functions return an avi_status
 * (AVI_OK = 0; NULL for constructors) and fill the avi_error given (when not
 * NULL) with that status and a message naming the file, key or time. The
 * status is the exit code the avi command uses: AVI_ERR_INPUT for bad input
 * (a scene, an output path, a checkpoint or a mesh that changed), AVI_ERR_RUN
 * for a run that failed (blow-up, I/O), AVI_INTERRUPTED for a stop request.
 *
 * Signals: the library installs no handler. A caller that wants SIGINT or
 * SIGTERM to stop a run sets the flag given as options.stop from its
 * handler (to any non-zero value, e.g. the signal number): avi_run_evolve
 * then stops at the next time boundary, writes a checkpoint there and
 * returns AVI_INTERRUPTED; avi_run_open_resume continues from it, bitwise as
 * if the run had never stopped. */
#ifndef AVI_RUN_H
#define AVI_RUN_H

#include <signal.h>
#include <stdint.h>

#include "avi/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct avi_run avi_run;

/* What a run prints on stderr while it runs. */
typedef enum {
    AVI_PROGRESS_NONE = 0,
    AVI_PROGRESS_TERMINAL = 1, /* one line redrawn in place, fitted to the
                                  terminal's width (TIOCGWINSZ, else $COLUMNS) */
    AVI_PROGRESS_LOG = 2       /* a start banner (scene, integrator, bodies,
                                  potentials and time steps by kind, output
                                  plan and size), then a full line every
                                  progress_every seconds of wall time */
} avi_progress_mode;

/* The most threads a run may use (avi_run_options.threads, parallel.threads,
 * avi run --threads). */
#define AVI_RUN_MAX_THREADS 1024
/* avi_run_options.threads (and parallel.threads: auto): every processor the
 * process may run on, its CPU affinity. */
#define AVI_RUN_THREADS_AUTO (-1)

typedef struct {
    int progress;                 /* an avi_progress_mode */
    double progress_every;        /* AVI_PROGRESS_LOG: seconds between lines; <= 0: 10 */
    volatile sig_atomic_t *stop;  /* non-zero asks the run to stop; NULL: never */
    const char *scene_source;     /* the scene as the user named it, recorded in
                                     checkpoints (a resume loads the scene under
                                     this name); NULL: scene->source */
    const char *command_line;     /* recorded in /parameters/command_line (e.g.
                                     from avi_command_line); NULL: "" */
    int threads;                  /* threads of the engine, 1..AVI_RUN_MAX_THREADS;
                                     AVI_RUN_THREADS_AUTO: every processor the
                                     process may run on (its CPU affinity); 0: the
                                     scene's parallel.threads, else
                                     avi_engine_default_threads (1 with contact:
                                     bench/README.md "Threads").
                                     The results do not depend on it; the banner
                                     and /parameters/threads record the count used */
} avi_run_options;

/* argv as one string, each word shell-quoted where needed ('...'), for
 * options.command_line; the caller frees it. NULL when out of memory. */
char *avi_command_line(int argc, char *const *argv);

/* No progress, no stop flag, the scene's own source, no command line, the
 * scene's or the default thread count. */
avi_run_options avi_default_run_options(void);
/* sizeof(avi_run_options) and sizeof(avi_run_stats): bindings that mirror
 * these structs (python/avi) check their layout against them. */
size_t avi_run_options_size(void);
size_t avi_run_stats_size(void);

typedef struct {
    const char *scene_name;
    const char *output;     /* the HDF5 file */
    const char *checkpoint; /* OUT.ckpt */
    uint64_t events;        /* processed so far, in every run of this output */
    double time;            /* up to which events are processed */
    double end_time;        /* the scene's time.end */
    double wall;            /* seconds since the run was opened */
} avi_run_stats;

/* Opens a run of `scene` (loaded, not built; borrowed: it must outlive the
 * run) writing `output`: checks and locks the output names, builds the
 * model and engine, removes an earlier run's leftovers and starts the
 * output file with its first row and frame still to come. `opt` may be
 * NULL (the defaults). NULL with err filled on failure. */
avi_run *avi_run_open(const avi_scene *scene, const char *output, const avi_run_options *opt, avi_error *err);

/* Opens the run that wrote `output` again from its latest checkpoint
 * (OUT.ckpt): the scene is the one the checkpoint recorded, with
 * `overrides` applied, which may only be "time.end=T" (extending a
 * finished run). The rows and frames written up to the checkpoint are kept.
 * AVI_ERR_INPUT for a missing or corrupt checkpoint, a changed mesh file, an
 * end time before the checkpoint, another override. */
avi_run *avi_run_open_resume(const char *output, const char *const *overrides, size_t n_overrides,
                             const avi_run_options *opt, avi_error *err);

/* Evolves to t_end (usually avi_run_stats' end_time), writing rows, frames
 * and checkpoints on the way and a checkpoint at the end. AVI_OK,
 * AVI_INTERRUPTED (the stop flag; checkpoint written) or AVI_ERR_RUN with
 * err saying why (a blow-up, a non-finite state, an I/O error); after a
 * failure every later call returns it again. AVI_ERR_INPUT for a t_end that
 * is not finite or lies before the run's time (or a NULL run): nothing
 * changes, the run may evolve again. */
int avi_run_evolve(avi_run *run, double t_end, avi_error *err);

avi_run_stats avi_run_stats_of(const avi_run *run);

/* Writes the completion into the output ("complete" when the last evolve
 * reached the scene's end time, "interrupted" when it stopped before,
 * "failed: <why>" after a failure or with no evolve), closes and renames
 * it, and frees the run. AVI_OK or AVI_ERR_RUN (the file could not be
 * finished). NULL: nothing, AVI_OK. */
int avi_run_close(avi_run *run, avi_error *err);

#ifdef __cplusplus
}
#endif

#endif
