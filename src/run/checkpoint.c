/* Checkpoints: the engine's complete state in an HDF5 file (see
 * src/run/checkpoint.h). */
#include "run/checkpoint.h"
#include "base/error.h"
#include "output/output_files.h"
#include "core/engine_internal.h"
#include "core/refine.h"
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
/* Counters are stored as int64 in the output. */
#define COUNTER_LIMIT (UINT64_C(1) << 63)

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

typedef struct {
    avi_state_io io;
    hid_t loc;
    const char *missing; /* the first array asked for and not there */
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

static int state_put(avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width,
                     const void *data)
{
    return put1(((h5_state *)io)->loc, name, h5_type(type), n, width, data);
}

static long state_count(avi_state_io *io, const char *name)
{
    h5_state *h = (h5_state *)io;
    long n = count(h->loc, name);
    if (n < 0 && !h->missing) h->missing = name;
    return n;
}

static int state_get(avi_state_io *io, const char *name, avi_state_type type, size_t n, void *data)
{
    h5_state *h = (h5_state *)io;
    int rc = get(h->loc, name, h5_type(type), n, data);
    if (rc && !h->missing) h->missing = name;
    return rc;
}

static h5_state state_at(hid_t loc) { return (h5_state){{state_put, state_count, state_get}, loc, NULL}; }

/* The contact manager's state in the group "contact", a stepper's at the
 * root. */
static int write_modules(hid_t f, const avi_engine *e)
{
    h5_state root = state_at(f);
    if (e->stepper && e->stepper->save(e->sync, &root.io)) return -1;
    if (!e->contact) return 0;
    hid_t g = H5Gcreate2(f, "contact", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return -1;
    h5_state hs = state_at(g);
    int rc = e->model->contact_ops->save(e->contact, &hs.io);
    H5Gclose(g);
    if (rc || !e->refine) return rc ? -1 : 0;
    if ((g = H5Gcreate2(f, "refine", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT)) < 0) return -1;
    hs = state_at(g);
    rc = avi_refine_save(e->refine, &hs.io);
    H5Gclose(g);
    return rc ? -1 : 0;
}

static int write_state(hid_t f, const avi_engine *e, const avi_checkpoint_info *info)
{
    const avi_model *m = e->model;
    size_t nv = avi_model_record_count(m), nq = avi_engine_queue_size(e); /* with edge DOFs */
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
    if (put1(f, "time", H5T_NATIVE_DOUBLE, 1, 1, &e->time)) return -1;
    uint64_t counts[2] = {nv, (uint64_t)AVI_KIND_COUNT};
    if (put1(f, "sizes", H5T_NATIVE_UINT64, 2, 1, counts)) return -1;
    if (put1(f, "events", H5T_NATIVE_UINT64, AVI_KIND_COUNT, 1, e->events)) return -1;

    double *buf = malloc((3 * nv + 1) * sizeof *buf);
    if (!buf) rc = -1;
    for (int field = 0; field < 3 && !rc; field++) {
        static const char *names[3] = {"vertex_position", "vertex_velocity", "vertex_drift_time"};
        int w = field == 2 ? 1 : 3;
        for (size_t i = 0; i < nv; i++)
            for (int c = 0; c < w; c++)
                buf[i * w + c] = field == 0 ? m->vert[i].x[c] : field == 1 ? m->vert[i].v[c] : m->vert[i].tau;
        rc = put1(f, names[field], H5T_NATIVE_DOUBLE, nv, (size_t)w, buf);
    }
    free(buf); /* before the queue's table: not both at once */
    /* One entry per clock (group cursors expanded), in storage order;
     * restoring loads them back, and the pop order depends only on
     * (time, id). */
    avi_event *ev = malloc((nq + 1) * sizeof *ev);
    if (!ev) rc = -1;
    if (!rc && avi_engine_queue_collect(e, ev) != nq) rc = -1;
    /* Written from the entries themselves: (t) and (id, n) columns. */
    _Static_assert(sizeof(avi_event) == 16 && offsetof(avi_event, id) == 8 && offsetof(avi_event, n) == 12,
                   "avi_event is read as 2 doubles or 4 uint32 a row");
    if (!rc)
        rc = put_columns(f, "queue_time", H5T_NATIVE_DOUBLE, nq, 1, ev, 2, 0) ||
             put_columns(f, "queue_id_step", H5T_NATIVE_UINT32, nq, 2, ev, 4, 2);
    free(ev);
    if (!rc) {
        size_t no = (size_t)e->nobs;
        uint64_t *next = malloc((no + 1) * sizeof *next);
        double *last = malloc((no + 1) * sizeof *last);
        if (!next || !last) rc = -1;
        for (size_t i = 0; i < no && !rc; i++) {
            next[i] = e->obs[i].next;
            last[i] = e->obs[i].last_time;
        }
        if (!rc)
            rc = put1(f, "observer_next", H5T_NATIVE_UINT64, no, 1, next) ||
                 put1(f, "observer_last_time", H5T_NATIVE_DOUBLE, no, 1, last);
        free(next);
        free(last);
    }
    if (!rc) rc = write_modules(f, e);
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

/* Each counter and their total below 2^63: the output stores int64. */
static int restore_counters(hid_t f, const char *path, avi_engine *e, avi_error *err)
{
    uint64_t ev[AVI_KIND_COUNT], total = 0;
    if (get(f, "events", H5T_NATIVE_UINT64, AVI_KIND_COUNT, ev)) return missing(path, "events", err);
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (ev[k] >= COUNTER_LIMIT)
            return implausible(err, path, "event counter events[%d] (%s) = %llu is not below 2^63", k,
                               avi_kind_name((avi_kind)k), (unsigned long long)ev[k]);
        total += ev[k]; /* both below 2^63: no wrap */
        if (total >= COUNTER_LIMIT) return implausible(err, path, "the event counters add up to 2^63 or more");
    }
    memcpy(e->events, ev, sizeof ev);
    return AVI_OK;
}

/* Positions and velocities finite, drift times finite and not after T. */
static int restore_vertices(hid_t f, const char *path, avi_engine *e, double *buf, avi_error *err)
{
    static const char *names[3] = {"vertex_position", "vertex_velocity", "vertex_drift_time"};
    avi_model *m = e->model;
    for (int field = 0; field < 3; field++) {
        size_t w = field == 2 ? 1 : 3;
        size_t nv = avi_model_record_count(m); /* with edge DOFs */
        if (get(f, names[field], H5T_NATIVE_DOUBLE, nv * w, buf)) return missing(path, names[field], err);
        for (size_t i = 0; i < nv * w; i++)
            if (!isfinite(buf[i]) || (field == 2 && buf[i] > e->time))
                return implausible(err, path, "%s of vertex %zu is %g%s", names[field], i / w, buf[i],
                                   field == 2 && isfinite(buf[i]) ? ", after the checkpoint time" : "");
        for (size_t i = 0; i < nv; i++)
            for (size_t c = 0; c < w; c++) {
                if (field == 0) m->vert[i].x[c] = buf[i * w + c];
                else if (field == 1) m->vert[i].v[c] = buf[i * w + c];
                else m->vert[i].tau = buf[i];
            }
    }
    return AVI_OK;
}

/* Queue times finite and not before T; the engine checks the clocks. */
static int restore_queue(hid_t f, const char *path, avi_engine *e, size_t nq, double *buf, avi_error *err)
{
    uint32_t *ub = malloc((2 * nq + 1) * sizeof *ub);
    avi_event *ev = malloc((nq + 1) * sizeof *ev);
    int rc = !ub || !ev ? avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", path) : AVI_OK;
    if (!rc && (get(f, "queue_time", H5T_NATIVE_DOUBLE, nq, buf) || get(f, "queue_id_step", H5T_NATIVE_UINT32, 2 * nq, ub)))
        rc = missing(path, "queue_time, queue_id_step", err);
    for (size_t i = 0; i < nq && !rc; i++) {
        if (!isfinite(buf[i]) || buf[i] < e->time)
            rc = implausible(err, path, "queue entry %zu has time %g, before the checkpoint time %.17g", i, buf[i], e->time);
        ev[i] = (avi_event){buf[i], ub[2 * i], ub[2 * i + 1]};
    }
    avi_error qerr = {AVI_OK, ""};
    if (!rc && avi_engine_queue_load(e, ev, nq, 1, &qerr) != AVI_OK)
        rc = avi_error_set(err, qerr.status == AVI_ERR_RUN ? AVI_ERR_RUN : AVI_ERR_INPUT, "%s: %s", path, qerr.message);
    free(ub);
    free(ev);
    return rc;
}

/* Observer k has made its calls at 0, interval, ..., (next - 1) interval:
 * the last not after T, the next not before it. */
static int restore_observers(hid_t f, const char *path, avi_engine *e, avi_error *err)
{
    size_t no = (size_t)e->nobs;
    if (count(f, "observer_next") != (long)no) return missing(path, "observer_next (observer count)", err);
    uint64_t *next = malloc((no + 1) * sizeof *next);
    int rc = !next ? avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", path) : AVI_OK;
    if (!rc && get(f, "observer_next", H5T_NATIVE_UINT64, no, next)) rc = missing(path, "observer_next", err);
    for (size_t i = 0; i < no && !rc; i++) {
        double dt = e->obs[i].interval, t = e->time;
        if (next[i] >= COUNTER_LIMIT || (next[i] > 0 && (double)(next[i] - 1) * dt > t) || (double)next[i] * dt < t)
            rc = implausible(err, path, "observer %zu (every %g s) is at call %llu, not next to the checkpoint time %.17g",
                             i, dt, (unsigned long long)next[i], t);
    }
    /* The output keeps each observer's calls on its grid (resuming drops a
     * final row off the grid), so the last call is at (next - 1) interval. */
    for (size_t i = 0; i < no && !rc; i++) {
        e->obs[i].next = next[i];
        e->obs[i].last_time = next[i] ? (double)(next[i] - 1) * e->obs[i].interval : -1.0;
    }
    free(next);
    return rc;
}

/* A module's load, its failure named with the checkpoint (and the group). */
static int load_module(const char *path, const char *group, h5_state *hs, int st, const avi_error *lerr,
                       avi_error *err)
{
    if (st == AVI_OK) return AVI_OK;
    if (st != AVI_ERR_INPUT) return avi_error_set(err, st, "%s: %s", path, lerr->message);
    if (hs->missing) {
        char what[160];
        snprintf(what, sizeof what, "%s%s%s", group, *group ? "/" : "", hs->missing);
        return missing(path, what, err);
    }
    return implausible(err, path, "%s", lerr->message);
}

/* The stepper's state at the root, the contact manager's in "contact". */
static int restore_modules(hid_t f, const char *path, avi_engine *e, avi_error *err)
{
    avi_error lerr = {AVI_OK, ""};
    h5_state root = state_at(f);
    int rc = AVI_OK;
    if (e->stepper)
        rc = load_module(path, "", &root, e->stepper->load(e->sync, &root.io, &lerr), &lerr, err);
    if (rc || !e->contact) return rc;
    hid_t g = H5Gopen2(f, "contact", H5P_DEFAULT);
    if (g < 0) return missing(path, "contact", err);
    h5_state hs = state_at(g);
    rc = load_module(path, "contact", &hs, e->model->contact_ops->load(e->contact, &hs.io, &lerr), &lerr, err);
    H5Gclose(g);
    /* Refined clocks: none before the first contact (or in a checkpoint
     * from before refinement). */
    if (rc || H5Lexists(f, "refine", H5P_DEFAULT) <= 0) return rc;
    if ((g = H5Gopen2(f, "refine", H5P_DEFAULT)) < 0) return missing(path, "refine", err);
    hs = state_at(g);
    rc = load_module(path, "refine", &hs, avi_refine_load(e, &hs.io, &lerr), &lerr, err);
    H5Gclose(g);
    return rc;
}

static int restore_state(hid_t f, const char *path, avi_engine *e, avi_error *err)
{
    size_t nv = avi_model_record_count(e->model);
    uint64_t sizes[2];
    if (get(f, "sizes", H5T_NATIVE_UINT64, 2, sizes)) return missing(path, "sizes", err);
    if (sizes[0] != nv || sizes[1] != AVI_KIND_COUNT)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: checkpoint does not match the scene's model (%llu vertices, model has %zu)",
                             path, (unsigned long long)sizes[0], nv);
    long nq = count(f, "queue_time");
    if (nq < 0) return missing(path, "queue_time", err);
    double *buf = malloc((3 * (nv > (size_t)nq ? nv : (size_t)nq) + 1) * sizeof *buf);
    if (!buf) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", path);
    int rc = read_time(f, path, &e->time, err);
    if (!rc) rc = restore_counters(f, path, e, err);
    if (!rc) rc = restore_vertices(f, path, e, buf, err);
    /* A synchronous engine keeps no clocks: its state is the vertices and
     * the step count. */
    if (!rc && e->stepper && nq != 0)
        rc = implausible(err, path, "a synchronous run's checkpoint holds %ld clocks", nq);
    else if (!rc && !e->stepper)
        rc = restore_queue(f, path, e, (size_t)nq, buf, err);
    free(buf);
    if (!rc) rc = restore_observers(f, path, e, err);
    if (!rc) rc = restore_modules(f, path, e, err);
    return rc;
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
