/* Checkpoints: the engine's complete state in an HDF5 file (see
 * src/run/checkpoint.h). */
#include "run/checkpoint.h"
#include "base/error.h"
#include "output/output_files.h"
#include "core/engine_state.h"
#include "run/checkpoint_hash.h"
#include "run/run_id.h"
#include "output/hdf5_init.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORMAT_NAME "avi-checkpoint"
#define FORMAT_VERSION 3 /* 2: content hash and input files; 3: the output's run id, rows, frames, last row */
#define HASH_ATTR "content_sha256"

/* ---- small HDF5 helpers: every one returns 0 or -1 ---- */

static int put(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    if (space < 0) return -1;
    hid_t ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = ds < 0 || ((rank == 0 || dims[0] > 0) && H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(space);
    return rc ? -1 : 0;
}

static int put1(hid_t loc, const char *name, hid_t type, size_t n, size_t width, const void *data)
{
    hsize_t dims[2] = {n, width};
    return put(loc, name, type, width > 1 ? 2 : 1, dims, data);
}

/* Columns [col, col + width) of rows of `stride` elements, as an (n,
 * width) dataset ((n) for width 1): HDF5 gathers them in its own bounded
 * buffer, so no copy of the whole table is made. */
static int put_columns(hid_t loc, const char *name, hid_t type, size_t n, size_t width, const void *rows, size_t stride,
                       size_t col)
{
    hsize_t dims[2] = {n, width}, mdims[2] = {n, stride}, start[2] = {0, col};
    hid_t space = H5Screate_simple(width > 1 ? 2 : 1, dims, NULL);
    hid_t mspace = H5Screate_simple(2, mdims, NULL);
    int rc = space < 0 || mspace < 0;
    if (!rc && n > 0) rc = H5Sselect_hyperslab(mspace, H5S_SELECT_SET, start, NULL, dims, NULL) < 0;
    hid_t ds = rc ? -1 : H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (!rc) rc = ds < 0 || (n > 0 && H5Dwrite(ds, type, mspace, space, H5P_DEFAULT, rows) < 0);
    if (ds >= 0) H5Dclose(ds);
    if (mspace >= 0) H5Sclose(mspace);
    if (space >= 0) H5Sclose(space);
    return rc ? -1 : 0;
}

static int put_text(hid_t loc, const char *name, const char *text)
{
    if (!text) text = "";
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, strlen(text) + 1);
    int rc = put(loc, name, type, 0, NULL, text);
    H5Tclose(type);
    return rc;
}

/* Number of elements of a dataset, or -1 when absent. */
static long count(hid_t loc, const char *name)
{
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return -1;
    hid_t space = H5Dget_space(ds);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    H5Sclose(space);
    H5Dclose(ds);
    return (long)n;
}

/* Reads exactly n elements of the given memory type. */
static int get(hid_t loc, const char *name, hid_t type, size_t n, void *data)
{
    if (count(loc, name) != (long)n) return -1;
    if (n == 0) return 0;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return -1;
    int rc = H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0;
    H5Dclose(ds);
    return rc ? -1 : 0;
}

static char *get_text(hid_t loc, const char *name)
{
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return NULL;
    hid_t ftype = H5Dget_type(ds);
    size_t len = H5Tget_size(ftype);
    char *s = calloc(len + 1, 1);
    hid_t mtype = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, len);
    if (s && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) < 0) {
        free(s);
        s = NULL;
    }
    H5Tclose(mtype);
    H5Tclose(ftype);
    H5Dclose(ds);
    return s;
}

/* A fixed-length string attribute of the root group. */
static int put_attr_text(hid_t f, const char *name, const char *text)
{
    hid_t space = H5Screate(H5S_SCALAR), str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, strlen(text));
    H5Tset_strpad(str, H5T_STR_NULLPAD);
    hid_t at = H5Acreate2(f, name, str, space, H5P_DEFAULT, H5P_DEFAULT);
    int rc = at < 0 || H5Awrite(at, str, text) < 0;
    if (at >= 0) H5Aclose(at);
    H5Tclose(str);
    H5Sclose(space);
    return rc ? -1 : 0;
}

/* The attribute as text (at most size - 1 bytes), or -1. */
static int get_attr_text(hid_t f, const char *name, char *out, size_t size)
{
    hid_t at = H5Aopen(f, name, H5P_DEFAULT);
    hid_t ft = at < 0 ? -1 : H5Aget_type(at);
    int rc = -1;
    if (ft >= 0 && H5Tget_class(ft) == H5T_STRING && H5Tis_variable_str(ft) == 0 && H5Tget_size(ft) < size) {
        size_t n = H5Tget_size(ft);
        hid_t mt = H5Tcopy(H5T_C_S1);
        H5Tset_size(mt, n);
        H5Tset_strpad(mt, H5T_STR_NULLPAD);
        memset(out, 0, size);
        rc = H5Aread(at, mt, out) < 0 ? -1 : 0;
        H5Tclose(mt);
    }
    if (ft >= 0) H5Tclose(ft);
    if (at >= 0) H5Aclose(at);
    return rc;
}

/* ---- input files: input_kind[n] (uint8), input_sha256[n][32] (uint8),
 * input_path (uint8: the n paths, each ending in a NUL byte) ---- */

static int write_inputs(hid_t f, const avi_input_files *in)
{
    size_t n = in ? in->count : 0, bytes = 0;
    for (size_t i = 0; i < n; i++) bytes += strlen(in->files[i].path) + 1;
    uint8_t *kind = malloc(n + 1), *sha = malloc(32 * n + 1), *paths = malloc(bytes + 1);
    int rc = !kind || !sha || !paths;
    for (size_t i = 0, at = 0; i < n && !rc; i++) {
        kind[i] = (uint8_t)in->files[i].kind;
        memcpy(sha + 32 * i, in->files[i].sha256, 32);
        size_t len = strlen(in->files[i].path) + 1;
        memcpy(paths + at, in->files[i].path, len);
        at += len;
    }
    if (!rc)
        rc = put1(f, "input_kind", H5T_NATIVE_UINT8, n, 1, kind) || put1(f, "input_sha256", H5T_NATIVE_UINT8, n, 32, sha) ||
             put1(f, "input_path", H5T_NATIVE_UINT8, bytes, 1, paths);
    free(kind);
    free(sha);
    free(paths);
    return rc ? -1 : 0;
}

static int read_inputs(hid_t f, avi_input_files *out)
{
    memset(out, 0, sizeof *out);
    long n = count(f, "input_kind"), bytes = count(f, "input_path");
    if (n < 0 || bytes < 0) return -1;
    uint8_t *kind = malloc((size_t)n + 1), *sha = malloc(32 * (size_t)n + 1);
    char *paths = malloc((size_t)bytes + 1);
    int rc = !kind || !sha || !paths || get(f, "input_kind", H5T_NATIVE_UINT8, (size_t)n, kind) ||
             get(f, "input_sha256", H5T_NATIVE_UINT8, 32 * (size_t)n, sha) ||
             get(f, "input_path", H5T_NATIVE_UINT8, (size_t)bytes, paths) || (bytes > 0 && paths[bytes - 1] != '\0');
    if (!rc) out->files = calloc((size_t)n + 1, sizeof *out->files);
    rc = rc || !out->files;
    /* Exactly n NUL-terminated paths. */
    for (long i = 0, at = 0; i < n && !rc; i++) {
        if (at >= bytes || kind[i] > AVI_INPUT_MESH) {
            rc = -1;
            break;
        }
        out->files[i].kind = (avi_input_kind)kind[i];
        memcpy(out->files[i].sha256, sha + 32 * i, 32);
        rc = !(out->files[i].path = strdup(paths + at));
        out->count = (size_t)i + 1;
        at += (long)strlen(paths + at) + 1;
        if (i == n - 1 && at != bytes) rc = -1;
    }
    if (!rc && n == 0 && bytes != 0) rc = -1;
    free(kind);
    free(sha);
    free(paths);
    if (rc) avi_input_files_free(out);
    return rc ? -1 : 0;
}

/* ---- writing ---- */

/* ---- the modules' state (core/state_io.h) as datasets of a group ---- */

typedef struct h5_state {
    avi_state_io io;
    hid_t loc;
    struct h5_state *parent; /* a group's: the io it was opened from */
    char prefix[64];         /* a group's: "name/" */
    char missing[160];       /* the first array asked for and not there ("" none) */
} h5_state;

static hid_t h5_type(avi_state_type t)
{
    switch (t) {
    case AVI_STATE_U8: return H5T_NATIVE_UINT8;
    case AVI_STATE_U32: return H5T_NATIVE_UINT32;
    case AVI_STATE_U64: return H5T_NATIVE_UINT64;
    default: return H5T_NATIVE_DOUBLE;
    }
}

static void note_missing(h5_state *h, const char *name)
{
    if (!h->missing[0]) snprintf(h->missing, sizeof h->missing, "%s%s", h->prefix, name);
}

static int state_put(avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width,
                     const void *data)
{
    return put1(((h5_state *)io)->loc, name, h5_type(type), n, width, data);
}

static int state_put_columns(avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width,
                             const void *rows, size_t stride, size_t col)
{
    return put_columns(((h5_state *)io)->loc, name, h5_type(type), n, width, rows, stride, col);
}

static long state_count(avi_state_io *io, const char *name)
{
    h5_state *h = (h5_state *)io;
    long n = count(h->loc, name);
    if (n < 0) note_missing(h, name);
    return n;
}

static int state_get(avi_state_io *io, const char *name, avi_state_type type, size_t n, void *data)
{
    h5_state *h = (h5_state *)io;
    int rc = get(h->loc, name, h5_type(type), n, data);
    if (rc) note_missing(h, name);
    return rc;
}

static int state_group(avi_state_io *io, const char *name, avi_state_group_mode mode, avi_state_io **sub);
static void state_close(avi_state_io *sub, int failed);

static h5_state state_at(hid_t loc)
{
    return (h5_state){{state_put, state_count, state_get, state_put_columns, state_group, state_close}, loc, NULL, "", ""};
}

static int state_group(avi_state_io *io, const char *name, avi_state_group_mode mode, avi_state_io **sub)
{
    h5_state *h = (h5_state *)io;
    *sub = NULL;
    if (mode == AVI_STATE_OPEN_IF_PRESENT) {
        htri_t there = H5Lexists(h->loc, name, H5P_DEFAULT);
        if (there == 0) return 0;
        if (there < 0) return -1;
    }
    hid_t g = mode == AVI_STATE_CREATE ? H5Gcreate2(h->loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)
                                       : H5Gopen2(h->loc, name, H5P_DEFAULT);
    h5_state *s = g < 0 ? NULL : malloc(sizeof *s);
    if (!s) {
        if (g >= 0) H5Gclose(g);
        else if (mode != AVI_STATE_CREATE) note_missing(h, name);
        return -1;
    }
    *s = state_at(g);
    s->parent = h;
    if (snprintf(s->prefix, sizeof s->prefix, "%s%s/", h->prefix, name) >= (int)sizeof s->prefix) {
        H5Gclose(g);
        free(s);
        return -1; /* the modules' group names are short */
    }
    *sub = &s->io;
    return 0;
}

/* A failed load's missing array is the parent's too. */
static void state_close(avi_state_io *sub, int failed)
{
    h5_state *s = (h5_state *)sub;
    if (!s) return;
    if (failed && s->missing[0] && !s->parent->missing[0]) memcpy(s->parent->missing, s->missing, sizeof s->missing);
    H5Gclose(s->loc);
    free(s);
}

static int write_state(hid_t f, const avi_engine *e, const avi_checkpoint_info *info)
{
    int rc = put_attr_text(f, "format", FORMAT_NAME);
    int version = FORMAT_VERSION;
    hid_t a_space = H5Screate(H5S_SCALAR);
    hid_t at = H5Acreate2(f, "format_version", H5T_NATIVE_INT, a_space, H5P_DEFAULT, H5P_DEFAULT);
    rc |= at < 0 || H5Awrite(at, H5T_NATIVE_INT, &version) < 0;
    if (at >= 0) H5Aclose(at);
    H5Sclose(a_space);
    if (rc || write_inputs(f, info->inputs)) return -1;

    if (put_text(f, "scene_source", info->scene_source) || put_text(f, "scene", info->scene_text) ||
        put_text(f, "scene_resolved", info->resolved_text) || put_text(f, "output", info->output_path) ||
        put_text(f, "program_version", AVI_VERSION_STRING))
        return -1;
    uint64_t out_counts[2] = {info->output_rows, info->output_frames};
    if (put_text(f, "output_run_id", info->run_id) || put1(f, "output_counts", H5T_NATIVE_UINT64, 2, 1, out_counts) ||
        put1(f, "output_last_row_sha256", H5T_NATIVE_UINT8, 32, 1, info->last_row_sha256))
        return -1;
    /* The engine's own state, its stepper's and its modules'. */
    h5_state root = state_at(f);
    rc = avi_engine_save(e, &root.io);
    /* Last: the hash of everything written above. */
    char hex[AVI_SHA256_HEX], why[256];
    if (!rc && (avi_checkpoint_hash(f, hex, why, sizeof why) || put_attr_text(f, HASH_ATTR, hex))) rc = -1;
    return rc ? -1 : 0;
}

int avi_checkpoint_write(const char *path, const avi_engine *e, const avi_checkpoint_info *info, avi_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s" AVI_OUTPUT_TMP_SUFFIX, path) >= (int)sizeof tmp)
        return avi_error_set(err, AVI_ERR_RUN, "%s: path too long", path);
    avi_hdf5_init();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
    avi_error created;
    int fd = -1;
    hid_t f = avi_output_create_h5(tmp, fapl, &fd, &created);
    H5Pclose(fapl);
    if (f < 0) return avi_error_set(err, AVI_ERR_RUN, "cannot create the checkpoint: %s", created.message);
    errno = 0;
    int rc = write_state(f, e, info);
    if (H5Fclose(f) < 0) rc = -1;
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    int why = errno;
    close(fd);
    if (rc) {
        unlink(tmp);
        return avi_error_set(err, AVI_ERR_RUN, "%s: writing the checkpoint failed (%s)", tmp, why ? strerror(why) : "HDF5 error");
    }
    return avi_output_commit(tmp, path, err) ? AVI_ERR_RUN : AVI_OK;
}

/* ---- reading ---- */

/* Opens a checkpoint and verifies its format and content hash; -1 with err
 * filled (AVI_ERR_INPUT: a checkpoint that cannot be trusted is bad input). */
static hid_t open_verified(const char *path, avi_error *err)
{
    avi_hdf5_init();
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    H5Eclear2(H5E_DEFAULT);
    if (f < 0) {
        avi_error_set(err, AVI_ERR_INPUT, "%s: cannot open the checkpoint: not an HDF5 file, or corrupt", path);
        return -1;
    }
    char name[64], stored[AVI_SHA256_HEX + 1], hex[AVI_SHA256_HEX], why[256];
    int version = 0;
    hid_t at = H5Aopen(f, "format_version", H5P_DEFAULT);
    int have_version = at >= 0 && H5Aread(at, H5T_NATIVE_INT, &version) >= 0;
    if (at >= 0) H5Aclose(at);
    H5Eclear2(H5E_DEFAULT);
    int rc = -1;
    if (get_attr_text(f, "format", name, sizeof name) || strcmp(name, FORMAT_NAME) || !have_version)
        avi_error_set(err, AVI_ERR_INPUT, "%s: not an avi checkpoint (no format attributes)", path);
    else if (version < 2)
        avi_error_set(err, AVI_ERR_INPUT,
                      "%s: checkpoint format %d, written by an older avi without integrity checks; this avi reads "
                      "format %d: run the scene again",
                      path, version, FORMAT_VERSION);
    else if (version < FORMAT_VERSION)
        avi_error_set(err, AVI_ERR_INPUT,
                      "%s: checkpoint format %d, written by an older avi that did not tie a checkpoint to its output "
                      "file, so it cannot be checked against it; this avi reads format %d: run the scene again (or "
                      "resume with the avi that wrote it)",
                      path, version, FORMAT_VERSION);
    else if (version != FORMAT_VERSION)
        avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint format %d is not the format %d this avi reads", path, version,
                      FORMAT_VERSION);
    else if (get_attr_text(f, HASH_ATTR, stored, sizeof stored) || strlen(stored) != AVI_SHA256_HEX - 1)
        avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint is corrupt: no content hash", path);
    else if (avi_checkpoint_hash(f, hex, why, sizeof why))
        avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint is corrupt: %s", path, why);
    else if (strcmp(hex, stored))
        avi_error_set(err, AVI_ERR_INPUT,
                      "%s: checkpoint is corrupt: its content hash is %.12s..., the file records %.12s...", path, hex,
                      stored);
    else
        rc = 0;
    H5Eclear2(H5E_DEFAULT);
    if (rc) {
        H5Fclose(f);
        return -1;
    }
    return f;
}

/* The checkpoint time: finite and not negative. */
static int read_time(hid_t f, const char *path, double *t, avi_error *err)
{
    if (get(f, "time", H5T_NATIVE_DOUBLE, 1, t)) return avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint has no time", path);
    if (!isfinite(*t) || *t < 0.0)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: implausible checkpoint: its time %g is not a finite time >= 0", path, *t);
    return AVI_OK;
}

int avi_checkpoint_read_info(const char *path, avi_checkpoint_meta *meta, avi_error *err)
{
    memset(meta, 0, sizeof *meta);
    hid_t f = open_verified(path, err);
    if (f < 0) return AVI_ERR_INPUT;
    meta->scene_source = get_text(f, "scene_source");
    meta->scene_text = get_text(f, "scene");
    meta->resolved_text = get_text(f, "scene_resolved");
    meta->output_path = get_text(f, "output");
    meta->run_id = get_text(f, "output_run_id");
    uint64_t out_counts[2] = {0, 0};
    int no_identity = !meta->run_id || get(f, "output_counts", H5T_NATIVE_UINT64, 2, out_counts) ||
                      get(f, "output_last_row_sha256", H5T_NATIVE_UINT8, 32, meta->last_row_sha256);
    meta->output_rows = out_counts[0];
    meta->output_frames = out_counts[1];
    int rc = !meta->scene_source || !meta->scene_text || !meta->resolved_text || !meta->output_path
                 ? avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint is incomplete (no scene or output)", path)
             : no_identity || !avi_run_id_valid(meta->run_id)
                 ? avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint is incomplete: no valid output_run_id, output_counts "
                                 "and output_last_row_sha256", path)
             : read_inputs(f, &meta->inputs) ? avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint's input_* datasets are malformed", path)
                                             : read_time(f, path, &meta->time, err);
    H5Eclear2(H5E_DEFAULT);
    H5Fclose(f);
    if (rc) avi_checkpoint_meta_free(meta);
    return rc;
}

void avi_checkpoint_meta_free(avi_checkpoint_meta *meta)
{
    free(meta->scene_source);
    free(meta->scene_text);
    free(meta->resolved_text);
    free(meta->output_path);
    free(meta->run_id);
    avi_input_files_free(&meta->inputs);
    memset(meta, 0, sizeof *meta);
}

/* ---- restoring: every value read is checked before the engine uses it;
 * each step returns AVI_OK or an error naming the checkpoint ---- */

static int missing(const char *path, const char *what, avi_error *err)
{
    return avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint is incomplete or does not match the scene: %s", path, what);
}

static int implausible(avi_error *err, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int implausible(avi_error *err, const char *path, const char *fmt, ...)
{
    char at[sizeof err->message];
    snprintf(at, sizeof at, "%s: implausible checkpoint", path);
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset_at(err, AVI_ERR_INPUT, at, fmt, ap);
    va_end(ap);
    return rc;
}

/* The engine's load, its failure named with the checkpoint: an array
 * missing (with its group), or a value the engine found implausible. */
static int restore_state(hid_t f, const char *path, avi_engine *e, avi_error *err)
{
    avi_error lerr = {AVI_OK, ""};
    h5_state root = state_at(f);
    int st = avi_engine_load(e, &root.io, &lerr);
    if (st == AVI_OK) return AVI_OK;
    if (st != AVI_ERR_INPUT) return avi_error_set(err, st, "%s: %s", path, lerr.message);
    if (root.missing[0]) return missing(path, root.missing, err);
    return implausible(err, path, "%s", lerr.message);
}

int avi_checkpoint_restore(const char *path, avi_engine *e, avi_error *err)
{
    hid_t f = open_verified(path, err);
    if (f < 0) return AVI_ERR_INPUT;
    int rc = restore_state(f, path, e, err);
    H5Eclear2(H5E_DEFAULT);
    H5Fclose(f);
    return rc;
}
