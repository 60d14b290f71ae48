/* avi: checkpoints, complete engine states from which a run continues
 * exactly as if it had never stopped.
 *
 * A checkpoint is an HDF5 file (self-describing: every dataset is named)
 * holding the scene (as given and as resolved), the output path, the time T,
 * every vertex's position, velocity and last-drift time, every queue entry
 * (time, id, step count), event counters, observer positions, the contact
 * manager's potentials, stencils and clocks, a synchronous integrator's
 * step count, and the input files the run read. It is written to a
 * temporary file, fsynced and renamed over the previous checkpoint, so a
 * checkpoint on disk is always complete.
 *
 * Identity (format version 3): a checkpoint belongs to one output file.
 * Each fresh run draws a random run id (128 bits from getrandom, 32
 * lower-case hex digits) and writes it to the output's /parameters/run_id
 * and to every checkpoint's output_run_id; the checkpoint also records
 * output_counts, the rows and frames of the output a resume keeps (the
 * observers' calls; all are flushed before the checkpoint is written), and
 * output_last_row_sha256, the digest of the last of those rows
 * (output/h5_row_digest.h; all zero when the writer no longer held it, after
 * several evolves each ending off the energy grid: then not checked). A resume reads
 * the output it would continue (OUT, or OUT.resume-old left by a killed
 * resume) and refuses, with AVI_ERR_INPUT naming both files and before
 * anything is moved or written, an output whose run id differs, that holds
 * fewer rows or frames, or whose row output_rows - 1 has another digest.
 * A resume keeps the run id, so the continued file and its later
 * checkpoints match again. Checkpoints of format 2 (before run ids) are
 * refused with a message saying so: avi cannot tell which output they
 * belong to.
 *
 * Integrity (format version 2 and later). The root group's attribute content_sha256
 * (64 lower-case hex digits, a fixed-length string) is the SHA-256 of:
 * for every dataset of the file, in ascending byte order of its full path
 * ("/contact/clocks" < "/events" < "/time"),
 *     the path's bytes and one NUL byte,
 *     the rank, then each dimension, as little-endian uint64,
 *     the element size in bytes as little-endian uint64,
 *     the data's bytes as stored in the file (read in the file's own type).
 * Every link must be a hard link, every object a group or a dataset of
 * integers, floats or fixed-length strings with all its data stored.
 * Attributes are not covered; avi reads only format, format_version and
 * content_sha256. Reading (avi_checkpoint_read_info and
 * avi_checkpoint_restore) recomputes the hash and refuses a mismatch, then
 * checks that the values are plausible: finite time, positions, velocities
 * and drift times (none after T), queue times finite and not before T,
 * event counters and their total below 2^63 (the output stores int64),
 * observer positions on their grids around T, and contact potentials and
 * stencils that name existing vertices. The hash detects corruption, not
 * forgery: whoever can write the file can recompute it, and the
 * plausibility checks are what keep a forged file from misleading the
 * engine.
 *
 * Input files: the checkpoint records each file the run read (the scene
 * file, and the mesh file of each body that has one) with its resolved path
 * and the SHA-256 of the bytes the reader parsed. `avi resume` rebuilds the
 * model from the recorded resolved scene, which reads the mesh files again,
 * and refuses to continue when a mesh file is missing or its bytes differ.
 * The scene file is not read again: the checkpoint holds its text, so a
 * later change to it does not affect the resume. All these failures are
 * AVI_ERR_INPUT naming the checkpoint or file and what failed; failing to
 * write a checkpoint is AVI_ERR_RUN. */
#ifndef AVI_CHECKPOINT_H
#define AVI_CHECKPOINT_H

#include "avi/engine.h"
#include "avi/scene.h"
#include "output/output_files.h" /* avi_checkpoint_path */

typedef enum { AVI_INPUT_SCENE = 0, AVI_INPUT_MESH = 1 } avi_input_kind;

/* A file a run read. */
typedef struct {
    avi_input_kind kind;
    char *path;               /* resolved */
    unsigned char sha256[32]; /* of the bytes read */
} avi_input_file;

typedef struct {
    size_t count;
    avi_input_file *files;
} avi_input_files;

/* The files a built scene read: scene->file when it came from a file, then
 * each body's mesh file (hashes from avi_scene_build's info). */
int avi_input_files_of(const avi_scene *scene, const avi_scene_bodies *info, avi_input_files *out, avi_error *err);
void avi_input_files_free(avi_input_files *files);

/* Resume, before rebuilding: every mesh file recorded in `checkpoint` is
 * still a regular file (a clearer message than the scene's; the hashes
 * compared after the rebuild decide). AVI_ERR_INPUT naming it otherwise. */
int avi_input_files_present(const char *checkpoint, const avi_input_files *recorded, avi_error *err);

/* Resume: every mesh file recorded in `checkpoint` must have been read again
 * (`now`, from the rebuilt scene) with the same bytes, and no other.
 * AVI_ERR_INPUT naming the file and both hashes otherwise. */
int avi_input_files_match(const char *checkpoint, const avi_input_files *recorded, const avi_input_files *now,
                          avi_error *err);

typedef struct {
    const char *scene_source;   /* the scene as named on the command line */
    const char *scene_text;     /* as given */
    const char *resolved_text;  /* as resolved (avi_scene_emit): what resume rebuilds from */
    const char *output_path;    /* the run's HDF5 file */
    const avi_input_files *inputs; /* may be NULL: none */
    /* The output this checkpoint continues (format 3): its run id (also in
     * /parameters/run_id), the rows and frames it held when the checkpoint
     * was written, and the digest of its last row (output/h5_row_digest.h). */
    const char *run_id;
    uint64_t output_rows, output_frames;
    unsigned char last_row_sha256[32]; /* zero: not recorded */
} avi_checkpoint_info;

/* What avi_checkpoint_read_info returns; strings are malloc'd. */
typedef struct {
    char *scene_source, *scene_text, *resolved_text, *output_path;
    char *run_id;
    uint64_t output_rows, output_frames;
    unsigned char last_row_sha256[32];
    double time;
    avi_input_files inputs;
} avi_checkpoint_meta;

/* Writes the engine's state at its current time (avi_engine_time) to path,
 * atomically. Returns 0 or AVI_ERR_RUN with err filled. */
int avi_checkpoint_write(const char *path, const avi_engine *engine, const avi_checkpoint_info *info,
                         avi_error *err);

/* Reads the scene, output path, time and input files of a checkpoint,
 * after verifying its content hash. */
int avi_checkpoint_read_info(const char *path, avi_checkpoint_meta *meta, avi_error *err);
void avi_checkpoint_meta_free(avi_checkpoint_meta *meta);

/* Resume, before anything is moved or written: `file` (the output, or its
 * set-aside name; `output` names it in messages) is the output `checkpoint`
 * continues: the same run id, at least the recorded rows and frames, and
 * the recorded digest of row output_rows - 1. AVI_ERR_INPUT naming both
 * files otherwise. */
int avi_checkpoint_match_output(const char *checkpoint, const avi_checkpoint_meta *meta, const char *output,
                                const char *file, avi_error *err);

/* Restores a checkpoint into an engine freshly built from the checkpoint's
 * resolved scene, with the same observers registered in the same order.
 * Fails (engine unchanged or unusable) when the content hash, a
 * plausibility check or the model does not match. */
int avi_checkpoint_restore(const char *path, avi_engine *engine, avi_error *err);

#endif
