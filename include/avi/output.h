/* avi: streaming a run to HDF5 (H5MD 1.1 layout, SI units) and keeping an
 * XDMF 3 sidecar current, laid out as below (README.md, "Output").
 *
 *   /h5md                         version=[1,1]; author{name}; creator{name, version};
 *                                 modules/units{version=[1,0], system="SI"}
 *   /particles/<body>/box         dimension=3, boundary=["none","none","none"]
 *   /particles/<body>/position    step[F] int64, time[F], value[F][n][3]
 *   /particles/<body>/velocity    step, time (hard links to position's), value[F][n][3]
 *   /particles/<body>/mass        [n]
 *   /connectivity/<body>_triangles  [M][3] int32, attribute particles_group="/particles/<body>"
 *   /connectivity/<body>_tetrahedra [K][4] int32 (only when the body has tetrahedra)
 *   /observables/<name>           step[T], time[T], value[T] or value[T][3]; every
 *                                 observable's step and time are hard links to
 *                                 kinetic_energy's, except with synchronized_every
 *                                 N > 1: then kinetic_energy, total_energy and
 *                                 friction_work have their own step[S] and time[S]
 *                                 (links to kinetic_energy's) at the rows
 *                                 avi_h5_row_synchronized gives (0, N, 2N, ... and
 *                                 the end), and the others' are links to
 *                                 elastic_energy's. events_by_kind value[T][AVI_KIND_COUNT]
 *                                 (attribute kinds) counts events per potential kind;
 *                                 friction_work (J) the energy friction impulses have
 *                                 removed since t = 0 (avi_observation.friction_work;
 *                                 docs/energy_observable.md, "Friction work");
 *                                 kinetic_energy and total_energy are those of the
 *                                 motion the integrator represents at the row's time
 *                                 (avi_observation; total_energy also lifts the
 *                                 potential energy to it, so it exceeds the sum of
 *                                 the parts by O(h^2)); kinetic_energy_midstep and
 *                                 total_energy_midstep use the stored mid-step
 *                                 velocities (docs/energy_observable.md).
 *   /parameters                   scene, scene_resolved, scene_name, integrator,
 *                                 program_version, end_time, energy_every, frame_every,
 *                                 command_line (argv, shell-quoted; "" from a library
 *                                 caller that gives none), started (ISO 8601 UTC,
 *                                 "2026-01-31T12:00:00Z"), host, build ("avi VERSION;
 *                                 commit DESCRIBE|unknown; COMPILER VERSION; flags ...");
 *                                 on resume these four stay the first run's and
 *                                 resumed gets a line "STARTED HOST COMMAND_LINE" per
 *                                 resume ("" when never resumed), run_id (32 hex
 *                                 digits drawn at random by a fresh run and kept by
 *                                 its resumes; its checkpoints record it, and a resume
 *                                 refuses a checkpoint of another run),
 *                                 vertex_count, threads (int64: the threads the run,
 *                                 or its latest resume, used; 0 when not recorded),
 *                                 synchronized_every (int64: rows per synchronized row, 1:
 *                                 every row),
 *                                 time_step/{kind, min, max, count},
 *                                 completion (scalar string: while running, and in a
 *                                 file killed before it closed, fixed-length 64 bytes
 *                                 "running"; once closed, variable-length UTF-8 with
 *                                 the whole state, see avi_h5_close)
 *
 * Every dataset has `unit` (H5MD) and `units` (CF) string attributes; every
 * `time` dataset is a dimension scale attached to dimension 0 of its `value`
 * (and `step`). Every other dimension has one too, so that netCDF readers
 * (xarray's h5netcdf and netcdf4 engines, ncdump) name them: `vertex` in
 * /particles/<body> (on mass and the frames), `component` ["x","y","z"] in
 * position, velocity and the momenta, `kind` in events_by_kind and
 * time_step, and in /connectivity <body>_triangle, <body>_tetrahedron,
 * triangle_corner, tetrahedron_corner. Index scales are netCDF's
 * "dimension but not a variable" (never written: no room in the file).
 * The file uses the 1.10 format and is switched to SWMR mode once every
 * object exists, so h5py.File(path, "r", swmr=True) reads a live run; what was
 * written before the last avi_h5_flush survives a killed process.
 *
 * A run killed while writing leaves the file marked as open for writing:
 * HDF5 1.10 then opens it only for SWMR reading (h5py: swmr=True) until
 * `h5clear -s` clears the mark. The XDMF sidecar is for finished files:
 * ParaView opens HDF5 files without SWMR.
 *
 * Errors never abort: calls return an avi_status and fill an avi_error whose
 * message names the file and the failing operation. avi_h5_create and
 * avi_h5_info turn off HDF5's automatic error printing for the process, and
 * ask HDF5 not to install its exit-time cleanup (which crashes after a
 * failed close); that request only works before the process's first HDF5
 * call, so code that calls HDF5 earlier should call H5dont_atexit() first. */
#ifndef AVI_OUTPUT_H
#define AVI_OUTPUT_H

#include <stdio.h>

#include "avi/engine.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One body of the output: a contiguous range of the model's vertices. */
typedef struct {
    const char *name;          /* HDF5 link name: non-empty, no '/', unique */
    size_t first_vertex;       /* index of its first vertex in the model */
    size_t vertex_count;
    const double *mass;        /* [vertex_count], kg */
    const uint32_t (*triangles)[3]; /* body-local indices; may be NULL when count is 0 */
    size_t triangle_count;
    const uint32_t (*tets)[4];      /* body-local indices; may be NULL when count is 0 */
    size_t tet_count;
} avi_h5_body;

/* Everything the file holds besides its time series. Strings may be NULL
 * (stored as empty). */
typedef struct {
    const char *path;          /* the .h5 file, created or truncated */
    const char *xdmf_path;     /* NULL: path with .h5 replaced by .xmf; "": no sidecar */
    const avi_h5_body *bodies;
    int body_count;
    const char *scene_name;
    const char *scene_text;    /* YAML as given */
    const char *resolved_text; /* YAML as resolved */
    const char *integrator;
    const char *author;        /* NULL: $USER, else "unknown" */
    double end_time, energy_every, frame_every; /* s */
    size_t potential_count[AVI_KIND_COUNT];
    double dt_min[AVI_KIND_COUNT], dt_max[AVI_KIND_COUNT]; /* s; 0 when the kind has none */
    size_t vertex_count;       /* all vertices of the model; frames pass this many */
    /* Provenance (/parameters); NULL stored as "" (avi_run fills them). A resumed run keeps the
     * first run's four and appends a line to `resumed`. */
    const char *command_line;  /* argv, shell-quoted */
    const char *started;       /* ISO 8601 UTC */
    const char *host;
    const char *build;         /* version, commit, compiler, flags */
    const char *resumed;       /* one line per resume: "STARTED HOST COMMAND_LINE" */
    const char *run_id;        /* /parameters/run_id: ties the file to its checkpoints
                                  (avi_run draws one per run; a resume keeps it) */
    int threads;               /* /parameters/threads: the engine's (0: not recorded) */
    /* /parameters/synchronized_every: > 1: kinetic_energy and total_energy
     * get their own step and time and only the rows written with
     * synchronized set (avi_h5_write_row); 0 or 1: every row has them. */
    long long synchronized_every;
} avi_h5_layout;

/* Every field 0 or NULL: no bodies, the sidecar next to the file, author
 * from $USER; set at least path, bodies and vertex_count. */
avi_h5_layout avi_default_h5_layout(void);

typedef struct avi_h5_writer avi_h5_writer;

/* Length of the completion-state dataset while the file is written (a
 * fixed-length string, SWMR writers may not write variable-length data),
 * terminating NUL included. */
#define AVI_H5_COMPLETION_LEN 64

/* Creates the file and every group, dataset and attribute of the layout,
 * writes the static data (masses, connectivity, parameters, completion
 * "running"), flushes, then switches the file to SWMR writing. All this
 * happens under PATH.part, renamed to PATH once the file is in SWMR mode, so
 * PATH never holds a file that SWMR readers refuse (an earlier file at PATH
 * stays until then; on failure PATH.part is removed). Writes the XDMF
 * sidecar once the first frame is flushed. NULL on error, with err filled. */
avi_h5_writer *avi_h5_create(const avi_h5_layout *layout, avi_error *err);

/* Appends one row of every observable at obs->time. Rows are buffered and
 * written in blocks; avi_h5_flush writes whatever is pending. Does not
 * allocate. Returns AVI_OK, or a status on an I/O error (see avi_h5_error). */
int avi_h5_write_observation(avi_h5_writer *w, int64_t step, const avi_observation *obs);
/* The same, with layout->synchronized_every > 1: kinetic_energy,
 * total_energy and friction_work get a row too only when `synchronized`
 * is set (their values are ignored otherwise); with 0 or 1 every row has them. */
int avi_h5_write_row(avi_h5_writer *w, int64_t step, const avi_observation *obs, int synchronized);
/* Whether the row at time t gets them: always with synchronized_every 0 or
 * 1; else rows 0, N, 2N, ... of the energy_every grid (times k * energy_every,
 * as the engine calls observers), a row off the grid (an evolve's end) and
 * a row at or after end_time. avi_run asks it for every row; a resume's
 * copy keeps an earlier row's values only where it says so (a run extended
 * past its first end is then the run to the later end). */
int avi_h5_row_synchronized(const avi_h5_writer *w, double t);

/* Appends one frame: positions x and velocities v of all layout->vertex_count
 * vertices ([n][3] each), split per body. Written immediately (one chunk per
 * body and frame). Returns AVI_OK or a status (see avi_h5_error). */
int avi_h5_write_frame(avi_h5_writer *w, int64_t step, double time, const double (*x)[3],
                       const double (*v)[3]);

/* Writes pending rows, flushes the file (H5Fflush) and appends the frames
 * added since to the XDMF sidecar (avi_xdmf_append). Everything written
 * before it is then visible to SWMR readers and survives a killed process.
 * The caller calls it at every output interval. Fails when the file was
 * removed or replaced on disk. Returns AVI_OK or a status (see avi_h5_error). */
int avi_h5_flush(avi_h5_writer *w);

/* Flushes, stores the completion state ("complete", "interrupted" or
 * "failed: <why>"; NULL means "interrupted") in /parameters/completion,
 * closes the file and frees the writer, even when something fails on the
 * way (w may be NULL). The state goes first into the fixed-length dataset
 * (cut to AVI_H5_COMPLETION_LEN - 1 bytes), then, after the SWMR file is
 * closed, the file is reopened for SWMR writing and that dataset replaced
 * by a variable-length UTF-8 string holding the whole text (about 1 ms; a
 * process killed meanwhile leaves a file that opens with one of the two).
 * Returns AVI_OK or a status with err (may be NULL) filled with the first error
 * the writer met. */
int avi_h5_close(avi_h5_writer *w, const char *completion, avi_error *err);

/* The writer's first error (status AVI_OK while none occurred). Once a write
 * failed, later writes fail at once with the same error. */
const avi_error *avi_h5_error(const avi_h5_writer *w);

/* The path the writer was created for (its layout's path). */
const char *avi_h5_path(const avi_h5_writer *w);

/* Rows and frames written so far (buffered rows included). */
size_t avi_h5_row_count(const avi_h5_writer *w);
size_t avi_h5_frame_count(const avi_h5_writer *w);

/* Data bytes one row of observables takes in the file, and one frame of
 * vertex_count vertices in body_count bodies (HDF5's overhead aside): what
 * the up-front limit output.max_bytes estimates with. */
size_t avi_h5_row_bytes(void);
double avi_h5_frame_bytes(size_t vertex_count, int body_count);

/* How many rows (or frames) a run from t = 0 to end_time writes at every
 * multiple of `every` and at the end: the calls avi_engine_run makes of an
 * observer with that interval (those at k every < end_time, then one at
 * end_time). */
double avi_h5_output_count(double end_time, double every);

/* What an output file will hold, for avi_h5_estimate_bytes. */
typedef struct {
    size_t vertex_count;
    int body_count;
    size_t triangle_count, tet_count; /* connectivity, all bodies */
    size_t text_bytes;                /* the scene as given and resolved */
    double rows, frames;              /* avi_h5_output_count */
} avi_h5_size_plan;

/* The size of the finished file in bytes: the rows and frames (rows are
 * allocated in chunks of 1024, so a part-filled chunk counts whole), the
 * masses, connectivity and scene text, and the fixed metadata (groups,
 * attributes, dimension scales, chunk indexes) as measured on this
 * layout: within 25 % for small and large files (tests/unit/test_h5_writer.c). */
double avi_h5_estimate_bytes(const avi_h5_size_plan *plan);

/* Resuming: appends the first `rows` rows and `frames` frames of an earlier
 * output file (opened read-only in SWMR mode, so a killed run's file
 * works) to a new writer of the same layout, value for value. Returns AVI_OK or
 * a status with err filled. */
int avi_h5_copy_prefix(const char *old_path, avi_h5_writer *w, size_t rows, size_t frames, const avi_h5_body *bodies,
                       int body_count, size_t vertex_count, avi_error *err);

/* A scalar text dataset of an output file (e.g. "/parameters/started") as
 * a new string (the caller frees it); "" when the file lacks it, NULL when
 * the file cannot be opened or memory runs out. */
char *avi_h5_read_text(const char *path, const char *dataset);

/* `avi info`: prints a summary of an output file (live or finished): scene,
 * integrator, threads (when recorded), bodies, events, simulated time and
 * rows (and how many have the synchronized energy), relative total-energy drift
 * (max |E - E0| / |E0| and final), momentum error (max |p - p0| relative to
 * |p0|, for linear and angular momentum), minimum contact distance and
 * completion state. Returns AVI_OK, or a status with err filled when the file
 * cannot be read or is not an avi output file. */
int avi_h5_info(const char *path, FILE *out, avi_error *err);

/* Writes the XDMF description of the frames of an output file: a temporal
 * collection with, per frame k, a spatial collection of one grid per body
 * (Tetrahedron topology when it has tetrahedra, else Triangle, else
 * Polyvertex), its positions (frame k of /particles/<body>/position/value,
 * described once for XDMF 2 and once for XDMF 3 readers: ParaView's
 * XDMFReader and Xdmf3ReaderS/T both read it) and masses. h5_path must
 * exist; the .xmf refers to it by a path relative to the .xmf's directory,
 * so the two can be moved together. The file is replaced atomically
 * (temporary file in the same directory, fsync, rename). Returns AVI_OK,
 * or a status with err (may be NULL) filled. */
int avi_xdmf_write(const char *xmf_path, const char *h5_path, const avi_h5_body *bodies,
                   int body_count, const double *frame_times, size_t frame_count, avi_error *err);

/* Appends frames first..frame_count-1 to a sidecar written by
 * avi_xdmf_write or this function with `first` frames: written in place
 * before the closing lines, which are written again after them, so the
 * cost does not depend on the frames already there. The file is valid XML
 * before and after; a write cut short leaves a file no XML parser accepts
 * (never one with wrong frames). When the file does not end as this
 * writer ends it (or first is 0), it is rewritten whole as by
 * avi_xdmf_write. Returns AVI_OK, or a status with err (may be NULL) filled. */
int avi_xdmf_append(const char *xmf_path, const char *h5_path, const avi_h5_body *bodies, int body_count,
                    const double *frame_times, size_t first, size_t frame_count, avi_error *err);

/* The default sidecar path of an output file: ".h5" replaced by ".xmf", or
 * ".xmf" appended. Returns AVI_OK, or AVI_ERR_INPUT when it does not fit in size bytes. */
int avi_xdmf_default_path(const char *h5_path, char *out, size_t size);

#ifdef __cplusplus
}
#endif

#endif
