/* Streaming output to HDF5 in the H5MD 1.1 layout of include/avi/output.h. */
#include "avi/output.h"
#include "output/hdf5_init.h"
#include "output/h5_row_digest.h"
#include "output/output_files.h"
#include "base/error.h"
#include "base/grow.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pwd.h>
#include <sys/stat.h>
#include <unistd.h>

/* Time series rows per chunk, and per write block. */
#define ROWS 1024

enum {
    OBS_KINETIC,
    OBS_ELASTIC,
    OBS_CONTACT,
    OBS_EXTERNAL,
    OBS_TOTAL,
    OBS_LINEAR,
    OBS_ANGULAR,
    OBS_EVENTS,
    OBS_ACTIVE,
    OBS_MIN_DISTANCE,
    OBS_EVENTS_BY_KIND,
    OBS_FRICTION_WORK,
    OBS_KINETIC_MIDSTEP, /* the stored mid-step velocities' (avi_observation) */
    OBS_TOTAL_MIDSTEP,
    OBS_N
};

static const struct {
    const char *name;
    int width;   /* 1: value[T]; else value[T][width] */
    int integer; /* int64 rather than double */
    const char *unit;
} OBS[OBS_N] = {
    {"kinetic_energy", 1, 0, "J"},
    {"elastic_energy", 1, 0, "J"},
    {"contact_energy", 1, 0, "J"},
    {"external_energy", 1, 0, "J"},
    {"total_energy", 1, 0, "J"},
    {"linear_momentum", 3, 0, "kg m s-1"},
    {"angular_momentum", 3, 0, "kg m2 s-1"},
    {"events", 1, 1, "1"},
    {"active_contact_potentials", 1, 1, "1"},
    {"min_contact_distance", 1, 0, "m"},
    {"events_by_kind", AVI_KIND_COUNT, 1, "1"},
    {"friction_work", 1, 0, "J"},
    {"kinetic_energy_midstep", 1, 0, "J"},
    {"total_energy_midstep", 1, 0, "J"},
};

/* The synchronized energies and the friction work that balances them
 * (total + friction_work): written at every synchronized_every-th row. */
static int obs_synchronized(int o) { return o == OBS_KINETIC || o == OBS_TOTAL || o == OBS_FRICTION_WORK; }

typedef struct {
    hid_t step, time, position, velocity;
    size_t first, count;
} body_sets;

/* 8-byte cell of a row buffer: every observable is int64 or double. */
typedef union {
    double d;
    int64_t i;
} cell;

struct avi_h5_writer {
    hid_t file;
    char *path;
    char *part_path; /* PATH.part while the file is built; NULL once renamed to PATH */
    char *xdmf_path; /* NULL: no sidecar */
    avi_error err;
    int failed;
    int fd;     /* ours (write-only): the completion state after a failed write */
    int sealed; /* HDF5 writes no more (seal) */
    dev_t dev;
    ino_t ino;

    int body_count;
    avi_h5_body *bodies; /* names owned; array pointers cleared */
    body_sets *sets;
    size_t vertex_count;

    /* Two sets of rows, each with its step and time: every row (0) and the
     * synchronized ones (1: kinetic_energy and total_energy), one set when
     * every row is synchronized (synchronized_every 1). */
    long long sync_every;
    double energy_every, end_time; /* the rule of avi_h5_row_synchronized */
    hid_t obs_step[2], obs_time[2], obs_value[OBS_N], completion;
    size_t rows_written, rows_pending;         /* set 0 */
    size_t sync_written, sync_pending;         /* set 1 */
    /* The last RECENT rows given (row k in slot k % RECENT), for their
     * digests: a checkpoint records the row its observers' count ends at,
     * which a final row off the energy grid may follow. */
    avi_observation recent[4];
    int64_t recent_step[4];
    int64_t row_step[2][ROWS];
    double row_time[2][ROWS];
    cell *row_value[OBS_N]; /* [ROWS * width] each */

    size_t frames, frames_in_xdmf, frame_cap;
    double *frame_times;
};

/* The set of rows an observable is written in (struct avi_h5_writer). */
static int obs_set(const avi_h5_writer *w, int o) { return w->sync_every > 1 && obs_synchronized(o); }

/* ------------------------------------------------------------------ errors */

typedef struct {
    char text[256];
} h5_detail;

/* The innermost HDF5 message (errno and system message live there), on one line. */
static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    char *t = ((h5_detail *)data)->text;
    if (n != 0 || !e->desc) return 0;
    snprintf(t, sizeof ((h5_detail *)data)->text, "%s", e->desc);
    /* Drop the time stamp, file name (HDF5's is /proc/self/fd/N: see
     * avi_output_create_h5), descriptor and buffer addresses of write
     * errors. */
    char *cut = strstr(t, "time = "), *next = cut ? strstr(cut, ", errno") : NULL;
    if (cut && next) memmove(cut, next + 2, strlen(next + 2) + 1);
    if ((cut = strstr(t, ", buf = "))) *cut = 0;
    for (; *t; t++)
        if (*t == '\n') *t = ' ';
    return 0;
}

static void seal(avi_h5_writer *w);

/* Records the first error: "PATH: OPERATION failed (HDF5's innermost
 * message)"; after a failed write (not bad arguments) it seals the file
 * (no more HDF5 writes). */
static int fail(avi_h5_writer *w, avi_status status, const char *fmt, ...)
{
    h5_detail d = {{0}};
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, &d);
    H5Eclear2(H5E_DEFAULT);
    if (status != AVI_ERR_INPUT) seal(w);
    if (w->failed) return w->err.status;
    w->failed = 1;
    va_list ap;
    va_start(ap, fmt);
    avi_error_vset_at(&w->err, status, w->path, fmt, ap);
    va_end(ap);
    if (d.text[0]) avi_error_append(&w->err, " (%s)", d.text);
    return w->err.status;
}

/* After a failed write HDF5 would go on writing, at the latest when the
 * file is closed: among others a superblock whose end of file lies past
 * what could be written (a full disk, a file-size limit), and then no
 * reader opens the file. Its descriptor is swapped for a read-only one of
 * the same file, so the file stays as the last successful flush left it:
 * readable, and resumable from the last checkpoint. */
static void seal(avi_h5_writer *w)
{
    int *h5fd = NULL;
    if (w->sealed || w->file <= 0 || H5Fget_vfd_handle(w->file, H5P_DEFAULT, (void **)&h5fd) < 0 || !h5fd) return;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", *h5fd);
    int ro = open(self, O_RDONLY | O_CLOEXEC);
    if (ro < 0) return;
    if (dup2(ro, *h5fd) >= 0 && fcntl(*h5fd, F_SETFD, FD_CLOEXEC) == 0) w->sealed = 1;
    close(ro);
}

/* The completion state of a sealed file, written in place (the dataset's
 * bytes are allocated: nothing grows). */
static int write_completion_in_place(avi_h5_writer *w, const char *text, size_t size)
{
    haddr_t at = H5Dget_offset(w->completion);
    hsize_t room = H5Dget_storage_size(w->completion);
    H5Eclear2(H5E_DEFAULT);
    if (at == HADDR_UNDEF || room == 0 || w->fd < 0) return -1;
    size_t n = room < size ? (size_t)room : size;
    return pwrite(w->fd, text, n, (off_t)at) == (ssize_t)n && fsync(w->fd) == 0 ? 0 : -1;
}

/* Records the first error, as reported by another module. */
static int fail_with(avi_h5_writer *w, const avi_error *e)
{
    H5Eclear2(H5E_DEFAULT);
    if (w->failed) return w->err.status;
    w->failed = 1;
    w->err = *e;
    return w->err.status;
}

/* ------------------------------------------------------ attribute helpers */

static hid_t vlen_string_type(void)
{
    hid_t t = H5Tcopy(H5T_C_S1);
    if (t < 0) return t;
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    return t;
}

static int attr_strings(hid_t obj, const char *name, const char *const *values, hsize_t n, int scalar)
{
    hid_t t = vlen_string_type();
    hid_t s = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    hid_t a = (t < 0 || s < 0) ? -1 : H5Acreate2(obj, name, t, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = (a < 0 || H5Awrite(a, t, values) < 0) ? -1 : 0;
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    if (t >= 0) H5Tclose(t);
    return rc;
}

static int attr_str(hid_t obj, const char *name, const char *value)
{
    const char *v = value ? value : "";
    return attr_strings(obj, name, &v, 1, 1);
}

static int attr_ints(hid_t obj, const char *name, const int *values, hsize_t n, int scalar)
{
    hid_t s = scalar ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, NULL);
    hid_t a = s < 0 ? -1 : H5Acreate2(obj, name, H5T_STD_I32LE, s, H5P_DEFAULT, H5P_DEFAULT);
    int rc = (a < 0 || H5Awrite(a, H5T_NATIVE_INT, values) < 0) ? -1 : 0;
    if (a >= 0) H5Aclose(a);
    if (s >= 0) H5Sclose(s);
    return rc;
}

/* H5MD `unit` and CF `units`: the same string serves both. */
static int set_units(hid_t ds, const char *unit)
{
    return (attr_str(ds, "unit", unit) < 0 || attr_str(ds, "units", unit) < 0) ? -1 : 0;
}

static hid_t group(avi_h5_writer *w, hid_t loc, const char *name)
{
    hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) fail(w, AVI_ERR_RUN, "creating group %s failed", name);
    return g;
}

/* -------------------------------------------------------- dataset helpers */

/* A fixed-size dataset written at once (rank <= 2); NULL data leaves it empty. */
static int fixed_dataset(avi_h5_writer *w, hid_t loc, const char *name, hid_t ftype, hid_t mtype, int rank,
                         const hsize_t *dims, const void *data, const char *unit)
{
    hid_t s = rank == 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(rank, dims, NULL);
    hid_t d = s < 0 ? -1 : H5Dcreate2(loc, name, ftype, s, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hsize_t total = 1;
    for (int i = 0; i < rank; i++) total *= dims[i];
    int rc = 0;
    if (d < 0)
        rc = fail(w, AVI_ERR_RUN, "creating dataset %s failed", name);
    else if (data && total > 0 && H5Dwrite(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
        rc = fail(w, AVI_ERR_RUN, "writing dataset %s failed", name);
    else if (set_units(d, unit) < 0)
        rc = fail(w, AVI_ERR_RUN, "writing the units of %s failed", name);
    if (d >= 0) H5Dclose(d);
    if (s >= 0) H5Sclose(s);
    return rc;
}

static int text_dataset(avi_h5_writer *w, hid_t loc, const char *name, const char *text)
{
    const char *v = text ? text : "";
    hid_t t = vlen_string_type();
    int rc = fixed_dataset(w, loc, name, t, t, 0, NULL, &v, "");
    H5Tclose(t);
    return rc;
}

static int double_dataset(avi_h5_writer *w, hid_t loc, const char *name, double value, const char *unit)
{
    return fixed_dataset(w, loc, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 0, NULL, &value, unit);
}

/* An extendible dataset [0][dims...] with one chunk of chunk0 rows. */
static hid_t series(avi_h5_writer *w, hid_t loc, const char *name, hid_t ftype, int rank, const hsize_t *row_dims,
                    hsize_t chunk0, const char *unit)
{
    hsize_t dims[3] = {0}, maxdims[3] = {H5S_UNLIMITED}, chunk[3] = {chunk0};
    for (int i = 1; i < rank; i++) dims[i] = maxdims[i] = chunk[i] = row_dims[i - 1];
    hid_t s = H5Screate_simple(rank, dims, maxdims);
    hid_t p = H5Pcreate(H5P_DATASET_CREATE);
    hid_t d = -1;
    /* Attributes (units, dimension-scale lists) in dense storage keep the
     * object header that every row extends small: one write per flush. */
    if (s >= 0 && p >= 0 && H5Pset_chunk(p, rank, chunk) >= 0 && H5Pset_attr_phase_change(p, 0, 0) >= 0)
        d = H5Dcreate2(loc, name, ftype, s, H5P_DEFAULT, p, H5P_DEFAULT);
    if (d < 0) fail(w, AVI_ERR_RUN, "creating dataset %s failed", name); /* before HDF5 clears its stack */
    if (p >= 0) H5Pclose(p);
    if (s >= 0) H5Sclose(s);
    if (d < 0) return -1;
    if (set_units(d, unit) < 0) {
        fail(w, AVI_ERR_RUN, "writing the units of %s failed", name);
        H5Dclose(d);
        return -1;
    }
    return d;
}

/* Extends a series of the given rank from `old` to `old + count` rows and
 * writes the rows; `inner` is the second dimension (rank 2 and 3; rank 3
 * datasets are [F][inner][3]). */
static int append(avi_h5_writer *w, hid_t d, hid_t mtype, int rank, hsize_t inner, size_t old, size_t count,
                  const void *data, const char *what)
{
    hsize_t dims[3] = {old + count, inner, 3}, start[3] = {old, 0, 0}, n[3] = {count, inner, 3};
    if (H5Dset_extent(d, dims) < 0) return fail(w, AVI_ERR_RUN, "extending %s failed", what);
    hid_t fs = H5Dget_space(d);
    hid_t ms = H5Screate_simple(rank, n, NULL);
    int rc = 0;
    if (fs < 0 || ms < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, n, NULL) < 0 ||
        H5Dwrite(d, mtype, ms, fs, H5P_DEFAULT, data) < 0)
        rc = fail(w, AVI_ERR_RUN, "writing %s failed", what);
    if (ms >= 0) H5Sclose(ms);
    if (fs >= 0) H5Sclose(fs);
    return rc;
}

/* ------------------------------------------------------- dimension scales */

/* netCDF readers (xarray's h5netcdf engine, ncdump) name each dimension
 * after the dimension scale attached to it, and refuse a dataset with
 * unnamed dimensions: every dimension of every dataset gets one, created
 * here before SWMR writing starts (it forbids new objects and attributes).
 * netCDF looks a dimension up in the dataset's group and its ancestors, so
 * each scale lies in the group of the datasets it labels or above. */

/* Makes the dataset loc/name a dimension scale named `label`; returns it
 * open, or -1. */
static hid_t open_scale(avi_h5_writer *w, hid_t loc, const char *name, const char *label)
{
    hid_t d = H5Dopen2(loc, name, H5P_DEFAULT);
    if (d < 0 || H5DSset_scale(d, label) < 0) {
        fail(w, AVI_ERR_RUN, "making %s a dimension scale failed", name);
        if (d >= 0) H5Dclose(d);
        return -1;
    }
    return d;
}

/* A dimension of n indices: a scale that netCDF's convention marks as a
 * dimension but not a variable (the name netCDF-C gives such scales), never
 * written, so it takes no room in the file whatever n. */
static hid_t index_scale(avi_h5_writer *w, hid_t loc, const char *name, hsize_t n)
{
    char label[96];
    snprintf(label, sizeof label, "This is a netCDF dimension but not a netCDF variable. %10llu", (unsigned long long)n);
    return fixed_dataset(w, loc, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 1, &n, NULL, "1") ? -1
                                                                                           : open_scale(w, loc, name, label);
}

/* A dimension scale holding labels (UTF-8 strings). */
static hid_t label_scale(avi_h5_writer *w, hid_t loc, const char *name, const char *const *labels, hsize_t n)
{
    hid_t t = vlen_string_type();
    int rc = fixed_dataset(w, loc, name, t, t, 1, &n, labels, "");
    H5Tclose(t);
    return rc ? -1 : open_scale(w, loc, name, name);
}

/* Attaches scale to dimension dim of the n datasets; what names them. */
static int attach(avi_h5_writer *w, hid_t scale, unsigned dim, const hid_t *sets, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        if (H5DSattach_scale(sets[i], scale, dim) < 0)
            return fail(w, AVI_ERR_RUN, "attaching a dimension scale to %s failed", what);
    return 0;
}

static const char *const XYZ[3] = {"x", "y", "z"};

/* ----------------------------------------------------------------- layout */

static int check_layout(avi_h5_writer *w, const avi_h5_layout *L)
{
    if (!L->path || !L->path[0]) return fail(w, AVI_ERR_INPUT, "no output path given");
    if (L->body_count < 0 || (L->body_count > 0 && !L->bodies))
        return fail(w, AVI_ERR_INPUT, "invalid body list");
    for (int b = 0; b < L->body_count; b++) {
        const avi_h5_body *B = &L->bodies[b];
        if (!B->name || !B->name[0] || strchr(B->name, '/') || !strcmp(B->name, ".") || !strcmp(B->name, ".."))
            return fail(w, AVI_ERR_INPUT, "body %d has an invalid name '%s'", b, B->name ? B->name : "");
        for (int c = 0; c < b; c++)
            if (!strcmp(L->bodies[c].name, B->name))
                return fail(w, AVI_ERR_INPUT, "two bodies are named '%s'", B->name);
        if (B->vertex_count == 0 || B->first_vertex + B->vertex_count > L->vertex_count || !B->mass)
            return fail(w, AVI_ERR_INPUT, "body '%s' has an invalid vertex range or no masses", B->name);
        if ((B->triangle_count && !B->triangles) || (B->tet_count && !B->tets))
            return fail(w, AVI_ERR_INPUT, "body '%s' lacks its connectivity arrays", B->name);
        for (size_t i = 0; i < B->triangle_count; i++)
            for (int k = 0; k < 3; k++)
                if (B->triangles[i][k] >= B->vertex_count || B->triangles[i][k] > INT32_MAX)
                    return fail(w, AVI_ERR_INPUT, "body '%s': triangle %zu indexes a vertex out of range", B->name, i);
        for (size_t i = 0; i < B->tet_count; i++)
            for (int k = 0; k < 4; k++)
                if (B->tets[i][k] >= B->vertex_count || B->tets[i][k] > INT32_MAX)
                    return fail(w, AVI_ERR_INPUT, "body '%s': tetrahedron %zu indexes a vertex out of range", B->name, i);
    }
    return 0;
}

static int write_h5md(avi_h5_writer *w, const avi_h5_layout *L)
{
    static const int version[2] = {1, 1}, units_version[2] = {1, 0};
    const char *author = L->author ? L->author : getenv("USER");
    if (!author || !author[0]) {
        const struct passwd *pw = getpwuid(getuid());
        author = pw && pw->pw_name && pw->pw_name[0] ? pw->pw_name : "unknown";
    }
    hid_t h5md = group(w, w->file, "h5md");
    if (h5md < 0) return -1;
    int rc = attr_ints(h5md, "version", version, 2, 0);
    hid_t g = H5Gcreate2(h5md, "author", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc |= g < 0 ? -1 : attr_str(g, "name", author);
    if (g >= 0) H5Gclose(g);
    g = H5Gcreate2(h5md, "creator", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc |= g < 0 ? -1 : attr_str(g, "name", "avi") | attr_str(g, "version", AVI_VERSION_STRING);
    if (g >= 0) H5Gclose(g);
    hid_t m = H5Gcreate2(h5md, "modules", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    g = m < 0 ? -1 : H5Gcreate2(m, "units", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    rc |= g < 0 ? -1 : attr_ints(g, "version", units_version, 2, 0) | attr_str(g, "system", "SI");
    if (g >= 0) H5Gclose(g);
    if (m >= 0) H5Gclose(m);
    H5Gclose(h5md);
    return rc < 0 ? fail(w, AVI_ERR_RUN, "writing the /h5md group failed") : 0;
}

/* Dimension scales of a body: time on step (position and velocity share
 * it), vertex (in the body's group) on mass and on the frames' second
 * dimension, component (x, y, z; shared by position and velocity) on their
 * third. */
static int label_body(avi_h5_writer *w, hid_t bg, hid_t pos, hid_t vel, const body_sets *S, const char *name)
{
    hid_t frames[2] = {S->position, S->velocity};
    hid_t mass = H5Dopen2(bg, "mass", H5P_DEFAULT);
    hid_t vertex = mass < 0 ? -1 : index_scale(w, bg, "vertex", (hsize_t)S->count);
    hid_t comp = vertex < 0 ? -1 : label_scale(w, pos, "component", XYZ, 3);
    int rc = (mass < 0 || vertex < 0 || comp < 0) ? fail(w, AVI_ERR_RUN, "labelling /particles/%s failed", name) : 0;
    if (rc == 0 && H5Lcreate_hard(pos, "component", vel, "component", H5P_DEFAULT, H5P_DEFAULT) < 0)
        rc = fail(w, AVI_ERR_RUN, "linking /particles/%s/velocity/component failed", name);
    if (rc == 0 && (attach(w, S->time, 0, &S->step, 1, name) || attach(w, vertex, 0, &mass, 1, name) ||
                    attach(w, vertex, 1, frames, 2, name) || attach(w, comp, 2, frames, 2, name)))
        rc = -1;
    if (comp >= 0) H5Dclose(comp);
    if (vertex >= 0) H5Dclose(vertex);
    if (mass >= 0) H5Dclose(mass);
    return rc;
}

/* Dimension scales of a connectivity dataset [M][per] of cells of a shape, beside it in
 * /connectivity (netCDF needs them in its group or above): BODY_CELL
 * (0 .. M-1) and CELL_corner (0 .. per-1), the latter shared by the bodies. */
static int label_cells(avi_h5_writer *w, hid_t conn, hid_t d, const char *body, const char *shape, size_t m, int per)
{
    char name[300], corner[32];
    snprintf(name, sizeof name, "%s_%s", body, shape);
    snprintf(corner, sizeof corner, "%s_corner", shape);
    hid_t rows = index_scale(w, conn, name, (hsize_t)m);
    htri_t have = H5Lexists(conn, corner, H5P_DEFAULT);
    hid_t cols = rows < 0 || have < 0 ? -1 : have ? H5Dopen2(conn, corner, H5P_DEFAULT) : index_scale(w, conn, corner, per);
    int rc = (rows < 0 || cols < 0) ? fail(w, AVI_ERR_RUN, "labelling /connectivity/%s failed", name) : 0;
    if (rc == 0 && (attach(w, rows, 0, &d, 1, name) || attach(w, cols, 1, &d, 1, name))) rc = -1;
    if (cols >= 0) H5Dclose(cols);
    if (rows >= 0) H5Dclose(rows);
    return rc;
}

static int write_body(avi_h5_writer *w, hid_t particles, hid_t connectivity, const avi_h5_body *B, body_sets *S)
{
    static const char *const none3[3] = {"none", "none", "none"};
    static const int three = 3;
    hid_t bg = group(w, particles, B->name);
    if (bg < 0) return -1;
    int rc = 0;
    hid_t box = group(w, bg, "box"), pos = -1, vel = -1;
    if (box < 0) rc = -1;
    else {
        if (attr_ints(box, "dimension", &three, 1, 1) < 0 || attr_strings(box, "boundary", none3, 3, 0) < 0)
            rc = fail(w, AVI_ERR_RUN, "writing /particles/%s/box failed", B->name);
        H5Gclose(box);
    }
    hsize_t n = B->vertex_count, frame_dims[2] = {n, 3};
    if (rc == 0) rc = fixed_dataset(w, bg, "mass", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &n, B->mass, "kg");
    if (rc == 0 && (pos = group(w, bg, "position")) < 0) rc = -1;
    if (rc == 0 && (vel = group(w, bg, "velocity")) < 0) rc = -1;
    if (rc == 0) {
        S->step = series(w, pos, "step", H5T_STD_I64LE, 1, NULL, ROWS, "1");
        S->time = series(w, pos, "time", H5T_IEEE_F64LE, 1, NULL, ROWS, "s");
        S->position = series(w, pos, "value", H5T_IEEE_F64LE, 3, frame_dims, 1, "m");
        S->velocity = series(w, vel, "value", H5T_IEEE_F64LE, 3, frame_dims, 1, "m s-1");
        if (S->step < 0 || S->time < 0 || S->position < 0 || S->velocity < 0) rc = -1;
    }
    if (rc == 0 && (H5Lcreate_hard(pos, "step", vel, "step", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
                    H5Lcreate_hard(pos, "time", vel, "time", H5P_DEFAULT, H5P_DEFAULT) < 0))
        rc = fail(w, AVI_ERR_RUN, "linking /particles/%s/velocity/{step,time} failed", B->name);
    if (rc == 0 && (H5DSset_scale(S->time, "time") < 0 || H5DSattach_scale(S->position, S->time, 0) < 0 ||
                    H5DSattach_scale(S->velocity, S->time, 0) < 0))
        rc = fail(w, AVI_ERR_RUN, "attaching the time scale of /particles/%s failed", B->name);
    if (rc == 0) rc = label_body(w, bg, pos, vel, S, B->name);
    if (vel >= 0) H5Gclose(vel);
    if (pos >= 0) H5Gclose(pos);
    H5Gclose(bg);
    if (rc) return rc;

    /* Connectivity as int32, body-local indices (range checked above). */
    char name[300], target[300];
    snprintf(target, sizeof target, "/particles/%s", B->name);
    size_t count[2] = {B->triangle_count, B->tet_count};
    const uint32_t *src[2] = {B->triangles ? B->triangles[0] : NULL, B->tets ? B->tets[0] : NULL};
    for (int kind = 0; kind < 2 && rc == 0; kind++) {
        int per = kind == 0 ? 3 : 4;
        if (kind == 1 && count[1] == 0) continue; /* tetrahedra only when present */
        snprintf(name, sizeof name, "%s_%s", B->name, kind == 0 ? "triangles" : "tetrahedra");
        int32_t *idx = malloc((count[kind] ? count[kind] : 1) * per * sizeof *idx);
        if (!idx) return fail(w, AVI_ERR_RUN, "out of memory writing %s", name);
        for (size_t i = 0; i < count[kind] * per; i++) idx[i] = (int32_t)src[kind][i];
        hsize_t dims[2] = {count[kind], (hsize_t)per};
        rc = fixed_dataset(w, connectivity, name, H5T_STD_I32LE, H5T_NATIVE_INT32, 2, dims, idx, "1");
        free(idx);
        if (rc) break;
        hid_t d = H5Dopen2(connectivity, name, H5P_DEFAULT);
        if (d < 0 || attr_str(d, "particles_group", target) < 0)
            rc = fail(w, AVI_ERR_RUN, "writing /connectivity/%s failed", name);
        else
            rc = label_cells(w, connectivity, d, B->name, kind == 0 ? "triangle" : "tetrahedron", count[kind], per);
        if (d >= 0) H5Dclose(d);
    }
    return rc;
}

/* The scale of a vector observable's second dimension in its group g:
 * kind (the potential kinds) for events_by_kind, component (x, y, z) for
 * the momenta, created once in *comp and linked into the second group. */
static int label_columns(avi_h5_writer *w, hid_t g, int o, hid_t *comp)
{
    if (o == OBS_EVENTS_BY_KIND) {
        const char *kinds[AVI_KIND_COUNT];
        for (int k = 0; k < AVI_KIND_COUNT; k++) kinds[k] = avi_kind_name((avi_kind)k);
        hid_t kind = label_scale(w, g, "kind", kinds, AVI_KIND_COUNT);
        int rc = kind < 0 ? -1 : attach(w, kind, 1, &w->obs_value[o], 1, OBS[o].name);
        if (kind >= 0) H5Dclose(kind);
        return rc;
    }
    if (*comp < 0) {
        if ((*comp = label_scale(w, g, "component", XYZ, 3)) < 0) return -1;
    } else if (H5Lcreate_hard(*comp, ".", g, "component", H5P_DEFAULT, H5P_DEFAULT) < 0) {
        return fail(w, AVI_ERR_RUN, "linking /observables/%s/component failed", OBS[o].name);
    }
    return attach(w, *comp, 1, &w->obs_value[o], 1, OBS[o].name);
}

static int write_observables(avi_h5_writer *w)
{
    hid_t og = group(w, w->file, "observables");
    if (og < 0) return -1;
    int rc = 0;
    hid_t comp = -1; /* linear_momentum/component, linked into angular_momentum */
    for (int o = 0; o < OBS_N && rc == 0; o++) {
        hid_t g = group(w, og, OBS[o].name);
        if (g < 0) {
            rc = -1;
            break;
        }
        int set = obs_set(w, o);
        if (w->obs_step[set] == 0) { /* the set's first observable holds its step and time */
            w->obs_step[set] = series(w, g, "step", H5T_STD_I64LE, 1, NULL, ROWS, "1");
            w->obs_time[set] = series(w, g, "time", H5T_IEEE_F64LE, 1, NULL, ROWS, "s");
            if (w->obs_step[set] < 0 || w->obs_time[set] < 0) rc = -1;
            else if (H5DSset_scale(w->obs_time[set], "time") < 0 ||
                     H5DSattach_scale(w->obs_step[set], w->obs_time[set], 0) < 0)
                rc = fail(w, AVI_ERR_RUN, "making /observables/%s/time a dimension scale failed", OBS[o].name);
        } else if (H5Lcreate_hard(w->obs_step[set], ".", g, "step", H5P_DEFAULT, H5P_DEFAULT) < 0 ||
                   H5Lcreate_hard(w->obs_time[set], ".", g, "time", H5P_DEFAULT, H5P_DEFAULT) < 0) {
            /* The observables of a set are sampled together: one step and time, shared. */
            rc = fail(w, AVI_ERR_RUN, "linking /observables/%s/{step,time} failed", OBS[o].name);
        }
        if (rc == 0) {
            hsize_t width = (hsize_t)OBS[o].width;
            w->obs_value[o] = series(w, g, "value", OBS[o].integer ? H5T_STD_I64LE : H5T_IEEE_F64LE,
                                     width > 1 ? 2 : 1, &width, ROWS, OBS[o].unit);
            if (w->obs_value[o] < 0) rc = -1;
            else if (H5DSattach_scale(w->obs_value[o], w->obs_time[set], 0) < 0)
                rc = fail(w, AVI_ERR_RUN, "attaching the time scale of /observables/%s failed", OBS[o].name);
        }
        if (rc == 0 && o == OBS_EVENTS_BY_KIND) {
            const char *kinds[AVI_KIND_COUNT];
            for (int k = 0; k < AVI_KIND_COUNT; k++) kinds[k] = avi_kind_name((avi_kind)k);
            if (attr_strings(w->obs_value[o], "kinds", kinds, AVI_KIND_COUNT, 0) < 0)
                rc = fail(w, AVI_ERR_RUN, "writing /observables/%s kinds failed", OBS[o].name);
        }
        if (rc == 0 && OBS[o].width > 1) rc = label_columns(w, g, o, &comp);
        H5Gclose(g);
    }
    if (comp >= 0) H5Dclose(comp);
    H5Gclose(og);
    return rc;
}

/* /parameters/time_step/kind labels min, max and count. */
static int label_by_kind(avi_h5_writer *w, hid_t tg)
{
    static const char *const names[3] = {"min", "max", "count"};
    hid_t scale = open_scale(w, tg, "kind", "kind"), sets[3];
    int rc = scale < 0 ? -1 : 0;
    for (int i = 0; i < 3; i++) sets[i] = H5Dopen2(tg, names[i], H5P_DEFAULT);
    if (rc == 0 && (sets[0] < 0 || sets[1] < 0 || sets[2] < 0))
        rc = fail(w, AVI_ERR_RUN, "opening /parameters/time_step failed");
    if (rc == 0) rc = attach(w, scale, 0, sets, 3, "/parameters/time_step");
    for (int i = 0; i < 3; i++)
        if (sets[i] >= 0) H5Dclose(sets[i]);
    if (scale >= 0) H5Dclose(scale);
    return rc;
}

static int write_parameters(avi_h5_writer *w, const avi_h5_layout *L)
{
    hid_t pg = group(w, w->file, "parameters");
    if (pg < 0) return -1;
    int64_t nv = (int64_t)L->vertex_count;
    int rc = text_dataset(w, pg, "scene", L->scene_text);
    if (rc == 0) rc = text_dataset(w, pg, "scene_resolved", L->resolved_text);
    if (rc == 0) rc = text_dataset(w, pg, "scene_name", L->scene_name);
    if (rc == 0) rc = text_dataset(w, pg, "integrator", L->integrator);
    if (rc == 0) rc = text_dataset(w, pg, "program_version", AVI_VERSION_STRING);
    if (rc == 0) rc = text_dataset(w, pg, "command_line", L->command_line);
    if (rc == 0) rc = text_dataset(w, pg, "started", L->started);
    if (rc == 0) rc = text_dataset(w, pg, "host", L->host);
    if (rc == 0) rc = text_dataset(w, pg, "build", L->build);
    if (rc == 0) rc = text_dataset(w, pg, "resumed", L->resumed);
    if (rc == 0) rc = text_dataset(w, pg, "run_id", L->run_id);
    if (rc == 0) rc = double_dataset(w, pg, "end_time", L->end_time, "s");
    if (rc == 0) rc = double_dataset(w, pg, "energy_every", L->energy_every, "s");
    if (rc == 0) rc = double_dataset(w, pg, "frame_every", L->frame_every, "s");
    if (rc == 0) rc = fixed_dataset(w, pg, "vertex_count", H5T_STD_I64LE, H5T_NATIVE_INT64, 0, NULL, &nv, "1");
    int64_t ns = L->synchronized_every > 1 ? (int64_t)L->synchronized_every : 1;
    if (rc == 0) rc = fixed_dataset(w, pg, "synchronized_every", H5T_STD_I64LE, H5T_NATIVE_INT64, 0, NULL, &ns, "1");
    int64_t nt = (int64_t)L->threads;
    if (rc == 0) rc = fixed_dataset(w, pg, "threads", H5T_STD_I64LE, H5T_NATIVE_INT64, 0, NULL, &nt, "1");

    /* Per-kind time-step ranges: kind[K], min[K], max[K], count[K]. */
    hid_t tg = rc == 0 ? group(w, pg, "time_step") : -1;
    if (rc == 0 && tg < 0) rc = -1;
    if (rc == 0) {
        const char *kinds[AVI_KIND_COUNT];
        int64_t count[AVI_KIND_COUNT];
        for (int k = 0; k < AVI_KIND_COUNT; k++) {
            kinds[k] = avi_kind_name((avi_kind)k);
            count[k] = (int64_t)L->potential_count[k];
        }
        hsize_t K = AVI_KIND_COUNT;
        hid_t t = vlen_string_type();
        rc = fixed_dataset(w, tg, "kind", t, t, 1, &K, kinds, "");
        H5Tclose(t);
        if (rc == 0) rc = fixed_dataset(w, tg, "min", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &K, L->dt_min, "s");
        if (rc == 0) rc = fixed_dataset(w, tg, "max", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, 1, &K, L->dt_max, "s");
        if (rc == 0) rc = fixed_dataset(w, tg, "count", H5T_STD_I64LE, H5T_NATIVE_INT64, 1, &K, count, "1");
        if (rc == 0) rc = label_by_kind(w, tg);
    }
    if (tg >= 0) H5Gclose(tg);

    /* Completion while running: a fixed-length string, since SWMR writers
     * may overwrite raw data but may not create attributes or
     * variable-length data; avi_h5_close replaces it by the whole text. */
    if (rc == 0) {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, AVI_H5_COMPLETION_LEN);
        H5Tset_strpad(t, H5T_STR_NULLTERM);
        char text[AVI_H5_COMPLETION_LEN] = "running";
        rc = fixed_dataset(w, pg, "completion", t, t, 0, NULL, text, "");
        H5Tclose(t);
        if (rc == 0 && (w->completion = H5Dopen2(pg, "completion", H5P_DEFAULT)) < 0)
            rc = fail(w, AVI_ERR_RUN, "opening /parameters/completion failed");
    }
    H5Gclose(pg);
    return rc;
}

static void close_dataset(hid_t *h)
{
    if (*h > 0) H5Dclose(*h);
    *h = 0;
}

static void close_handles(avi_h5_writer *w)
{
    for (int b = 0; w->sets && b < w->body_count; b++) {
        close_dataset(&w->sets[b].step);
        close_dataset(&w->sets[b].time);
        close_dataset(&w->sets[b].position);
        close_dataset(&w->sets[b].velocity);
    }
    for (int o = 0; o < OBS_N; o++) close_dataset(&w->obs_value[o]);
    for (int s = 0; s < 2; s++) {
        close_dataset(&w->obs_step[s]);
        close_dataset(&w->obs_time[s]);
    }
    close_dataset(&w->completion);
}

static void destroy(avi_h5_writer *w)
{
    if (!w) return;
    close_handles(w);
    if (w->file > 0) H5Fclose(w->file);
    H5Eclear2(H5E_DEFAULT);
    if (w->fd >= 0) close(w->fd);
    if (w->part_path) unlink(w->part_path); /* never got into place */
    free(w->part_path);
    for (int b = 0; w->bodies && b < w->body_count; b++) free((char *)w->bodies[b].name);
    free(w->bodies);
    free(w->sets);
    for (int o = 0; o < OBS_N; o++) free(w->row_value[o]);
    free(w->frame_times);
    free(w->xdmf_path);
    free(w->path);
    free(w);
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d) memcpy(d, s, n);
    return d;
}

static int build(avi_h5_writer *w, const avi_h5_layout *L)
{
    if (check_layout(w, L)) return -1;
    w->body_count = L->body_count;
    w->vertex_count = L->vertex_count;
    w->sync_every = L->synchronized_every;
    w->energy_every = L->energy_every;
    w->end_time = L->end_time;
    w->bodies = calloc(L->body_count ? (size_t)L->body_count : 1, sizeof *w->bodies);
    w->sets = calloc(L->body_count ? (size_t)L->body_count : 1, sizeof *w->sets);
    if (!w->bodies || !w->sets) return fail(w, AVI_ERR_RUN, "out of memory");
    for (int o = 0; o < OBS_N; o++)
        if (!(w->row_value[o] = calloc((size_t)ROWS * OBS[o].width, sizeof(cell))))
            return fail(w, AVI_ERR_RUN, "out of memory");
    for (int b = 0; b < L->body_count; b++) {
        w->bodies[b] = L->bodies[b];
        w->bodies[b].mass = NULL;
        w->bodies[b].triangles = NULL;
        w->bodies[b].tets = NULL;
        if (!(w->bodies[b].name = dup_string(L->bodies[b].name))) return fail(w, AVI_ERR_RUN, "out of memory");
        w->sets[b].first = L->bodies[b].first_vertex;
        w->sets[b].count = L->bodies[b].vertex_count;
    }
    if (!L->xdmf_path) {
        size_t n = strlen(L->path) + 8;
        if (!(w->xdmf_path = malloc(n)) || avi_xdmf_default_path(L->path, w->xdmf_path, n) < 0)
            return fail(w, AVI_ERR_RUN, "out of memory");
    } else if (L->xdmf_path[0] && !(w->xdmf_path = dup_string(L->xdmf_path))) {
        return fail(w, AVI_ERR_RUN, "out of memory");
    }

    /* 1.10 format: required for SWMR. */
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        return fail(w, AVI_ERR_RUN, "setting up file access failed");
    }
    /* The file is built under PATH.part and renamed into place once it is in
     * SWMR mode: until then its superblock says "open for writing" and SWMR
     * readers refuse it, so a run killed while starting leaves no file at
     * PATH rather than one nothing can open (an earlier file there stays). */
    size_t plen = strlen(L->path) + sizeof AVI_OUTPUT_PART_SUFFIX;
    if (!(w->part_path = malloc(plen))) {
        H5Pclose(fapl);
        return fail(w, AVI_ERR_RUN, "out of memory");
    }
    snprintf(w->part_path, plen, "%s" AVI_OUTPUT_PART_SUFFIX, L->path);
    avi_error e;
    int fd = -1;
    w->file = avi_output_create_h5(w->part_path, fapl, &fd, &e);
    H5Pclose(fapl);
    if (w->file < 0) {
        free(w->part_path); /* removed already */
        w->part_path = NULL;
        return fail_with(w, &e);
    }
    w->fd = fd;
    struct stat st;
    if (fstat(fd, &st) == 0) {
        w->dev = st.st_dev;
        w->ino = st.st_ino;
    }

    if (write_h5md(w, L)) return -1;
    hid_t particles = group(w, w->file, "particles");
    hid_t connectivity = particles < 0 ? -1 : group(w, w->file, "connectivity");
    int rc = (particles < 0 || connectivity < 0) ? -1 : 0;
    for (int b = 0; b < L->body_count && rc == 0; b++)
        rc = write_body(w, particles, connectivity, &L->bodies[b], &w->sets[b]);
    if (connectivity >= 0) H5Gclose(connectivity);
    if (particles >= 0) H5Gclose(particles);
    if (rc || write_observables(w) || write_parameters(w, L)) return -1;

    if (H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) return fail(w, AVI_ERR_RUN, "flushing failed");
    if (H5Fstart_swmr_write(w->file) < 0) return fail(w, AVI_ERR_RUN, "switching to SWMR writing failed");
    avi_error moved;
    if (avi_output_commit(w->part_path, L->path, &moved)) return fail_with(w, &moved);
    free(w->part_path);
    w->part_path = NULL;
    return 0;
}

avi_h5_layout avi_default_h5_layout(void)
{
    avi_h5_layout L;
    memset(&L, 0, sizeof L);
    return L;
}

avi_h5_writer *avi_h5_create(const avi_h5_layout *layout, avi_error *err)
{
    /* Errors are reported through avi_error, not HDF5's stack printing. */
    avi_hdf5_init();
    avi_h5_writer *w = calloc(1, sizeof *w);
    if (!w) {
        if (err) {
            err->status = AVI_ERR_RUN;
            snprintf(err->message, sizeof err->message, "out of memory creating an output file");
        }
        return NULL;
    }
    w->fd = -1;
    /* HDF5 identifiers are positive: 0 marks a handle not (yet) open. */
    w->path = dup_string(layout && layout->path ? layout->path : "(no path)");
    if (!w->path || !layout || build(w, layout)) {
        if (err) {
            if (!w->path || !layout) {
                err->status = layout ? AVI_ERR_RUN : AVI_ERR_INPUT;
                snprintf(err->message, sizeof err->message, "%s", layout ? "out of memory" : "no output layout given");
            } else {
                *err = w->err;
            }
        }
        destroy(w);
        return NULL;
    }
    if (err) {
        err->status = AVI_OK;
        err->message[0] = 0;
    }
    return w;
}

/* ---------------------------------------------------------------- writing */

static int write_set(avi_h5_writer *w, int set)
{
    size_t *pending = set ? &w->sync_pending : &w->rows_pending, *written = set ? &w->sync_written : &w->rows_written;
    size_t n = *pending, old = *written;
    if (n == 0) return 0;
    if (append(w, w->obs_step[set], H5T_NATIVE_INT64, 1, 0, old, n, w->row_step[set], "/observables step") ||
        append(w, w->obs_time[set], H5T_NATIVE_DOUBLE, 1, 0, old, n, w->row_time[set], "/observables time"))
        return w->err.status;
    for (int o = 0; o < OBS_N; o++)
        if (obs_set(w, o) == set &&
            append(w, w->obs_value[o], OBS[o].integer ? H5T_NATIVE_INT64 : H5T_NATIVE_DOUBLE, OBS[o].width > 1 ? 2 : 1,
                   (hsize_t)OBS[o].width, old, n, w->row_value[o], OBS[o].name))
            return w->err.status;
    *written += n;
    *pending = 0;
    return 0;
}

static int write_rows(avi_h5_writer *w)
{
    return write_set(w, 0) || write_set(w, 1) ? w->err.status : 0;
}

int avi_h5_row_synchronized(const avi_h5_writer *w, double t)
{
    if (!w || w->sync_every <= 1 || !(w->energy_every > 0.0)) return 1;
    /* The engine calls a row observer at k * interval (avi_engine_run). */
    double k = nearbyint(t / w->energy_every);
    if (k * w->energy_every != t || t >= w->end_time) return 1;
    return fmod(k, (double)w->sync_every) == 0.0;
}

int avi_h5_write_observation(avi_h5_writer *w, int64_t step, const avi_observation *obs)
{
    return avi_h5_write_row(w, step, obs, 1);
}

int avi_h5_write_row(avi_h5_writer *w, int64_t step, const avi_observation *obs, int synchronized)
{
    if (!w) return AVI_ERR_INPUT;
    avi_hdf5_init(); /* this thread may not be the one that created w */
    if (w->failed) return w->err.status;
    size_t r = w->rows_pending;
    w->row_step[0][r] = step;
    w->row_time[0][r] = obs->time;
    cell **c = w->row_value;
    if (w->sync_every > 1 && synchronized) { /* the pair's own rows */
        size_t q = w->sync_pending;
        w->row_step[1][q] = step;
        w->row_time[1][q] = obs->time;
        c[OBS_KINETIC][q].d = obs->kinetic;
        c[OBS_TOTAL][q].d = obs->total;
        c[OBS_FRICTION_WORK][q].d = obs->friction_work;
        w->sync_pending++;
    } else if (w->sync_every <= 1) {
        c[OBS_KINETIC][r].d = obs->kinetic;
        c[OBS_TOTAL][r].d = obs->total;
        c[OBS_FRICTION_WORK][r].d = obs->friction_work;
    }
    c[OBS_ELASTIC][r].d = obs->elastic;
    c[OBS_CONTACT][r].d = obs->contact;
    c[OBS_EXTERNAL][r].d = obs->external;
    c[OBS_KINETIC_MIDSTEP][r].d = obs->kinetic_midstep;
    c[OBS_TOTAL_MIDSTEP][r].d = obs->total_midstep;
    for (int k = 0; k < 3; k++) {
        c[OBS_LINEAR][3 * r + k].d = obs->linear_momentum[k];
        c[OBS_ANGULAR][3 * r + k].d = obs->angular_momentum[k];
    }
    c[OBS_EVENTS][r].i = (int64_t)obs->events_total;
    c[OBS_ACTIVE][r].i = (int64_t)obs->active_contact_potentials;
    c[OBS_MIN_DISTANCE][r].d = obs->min_contact_distance;
    for (int k = 0; k < AVI_KIND_COUNT; k++) c[OBS_EVENTS_BY_KIND][AVI_KIND_COUNT * r + k].i = (int64_t)obs->events[k];
    size_t k = (w->rows_written + w->rows_pending) % 4;
    w->recent[k] = *obs;
    if (w->sync_every > 1 && !synchronized) /* the row as read back (h5_row_digest.h) */
        w->recent[k].kinetic = w->recent[k].total = w->recent[k].friction_work = NAN;
    w->recent_step[k] = step;
    w->rows_pending++;
    return w->rows_pending == ROWS || w->sync_pending == ROWS ? write_rows(w) : 0;
}

int avi_h5_write_frame(avi_h5_writer *w, int64_t step, double time, const double (*x)[3], const double (*v)[3])
{
    if (!w) return AVI_ERR_INPUT;
    avi_hdf5_init();
    if (w->failed) return w->err.status;
    if (!x || !v) return fail(w, AVI_ERR_INPUT, "frame %zu has no positions or velocities", w->frames);
    if (AVI_GROW(w->frame_times, w->frame_cap, w->frames + 1, 64)) return fail(w, AVI_ERR_RUN, "out of memory");
    size_t f = w->frames;
    for (int b = 0; b < w->body_count; b++) {
        const body_sets *S = &w->sets[b];
        const char *name = w->bodies[b].name;
        if (append(w, S->step, H5T_NATIVE_INT64, 1, 0, f, 1, &step, name) ||
            append(w, S->time, H5T_NATIVE_DOUBLE, 1, 0, f, 1, &time, name) ||
            append(w, S->position, H5T_NATIVE_DOUBLE, 3, S->count, f, 1, x[S->first], name) ||
            append(w, S->velocity, H5T_NATIVE_DOUBLE, 3, S->count, f, 1, v[S->first], name))
            return w->err.status;
    }
    w->frame_times[f] = time;
    w->frames++;
    return 0;
}

int avi_h5_flush(avi_h5_writer *w)
{
    if (!w) return AVI_ERR_INPUT;
    avi_hdf5_init();
    if (w->failed) return w->err.status;
    if (write_rows(w)) return w->err.status;
    if (H5Fflush(w->file, H5F_SCOPE_GLOBAL) < 0) return fail(w, AVI_ERR_RUN, "flushing failed");
    /* Writing on into an unlinked or replaced file would lose the run silently. */
    struct stat st;
    if (stat(w->path, &st) != 0 || st.st_dev != w->dev || st.st_ino != w->ino)
        return fail(w, AVI_ERR_RUN, "the file was removed or replaced while being written");
    if (w->xdmf_path && w->frames > w->frames_in_xdmf) {
        avi_error e;
        if (avi_xdmf_append(w->xdmf_path, w->path, w->bodies, w->body_count, w->frame_times, w->frames_in_xdmf,
                             w->frames, &e))
            return fail_with(w, &e);
        w->frames_in_xdmf = w->frames;
    }
    return 0;
}


/* The whole completion text, stored once the SWMR file is closed: the file
 * is reopened for SWMR writing, a variable-length UTF-8 dataset is written
 * under a temporary name and linked over the fixed-length one. HDF5 1.10.8
 * lets a SWMR writer do this; what it forbids is only unsafe for readers
 * while the writer runs. A plain read-write open would mark the file so that
 * nothing opens it if the process were killed now; marked for SWMR writing,
 * it opens for SWMR reading and shows one of the two datasets (checked by
 * killing the reopen-replace-close sequence, about 1 ms, at random points
 * 200 times). */
static int store_whole_completion(avi_h5_writer *w, const char *text)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl < 0 || H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110) < 0) {
        if (fapl >= 0) H5Pclose(fapl);
        return fail(w, AVI_ERR_RUN, "setting up file access failed");
    }
    hid_t f = H5Fopen(w->path, H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl);
    H5Pclose(fapl);
    if (f < 0) return fail(w, AVI_ERR_RUN, "reopening to store the completion state failed");
    int rc = 0;
    hid_t pg = -1;
    if (!avi_output_h5_is(f, w->dev, w->ino))
        rc = fail(w, AVI_ERR_RUN, "the file was replaced before its completion state was stored");
    else if ((pg = H5Gopen2(f, "parameters", H5P_DEFAULT)) < 0)
        rc = fail(w, AVI_ERR_RUN, "opening /parameters failed");
    else if (text_dataset(w, pg, "completion.whole", text) == 0 &&
             (H5Ldelete(pg, "completion", H5P_DEFAULT) < 0 ||
              H5Lmove(pg, "completion.whole", pg, "completion", H5P_DEFAULT, H5P_DEFAULT) < 0))
        rc = fail(w, AVI_ERR_RUN, "replacing /parameters/completion failed");
    if (pg >= 0) H5Gclose(pg);
    if (H5Fclose(f) < 0) rc = fail(w, AVI_ERR_RUN, "closing after storing the completion state failed");
    return w->failed ? (int)w->err.status : rc;
}

int avi_h5_close(avi_h5_writer *w, const char *completion, avi_error *err)
{
    if (!w) {
        if (err) {
            err->status = AVI_ERR_INPUT;
            snprintf(err->message, sizeof err->message, "no output file to close");
        }
        return AVI_ERR_INPUT;
    }
    avi_hdf5_init();
    avi_h5_flush(w);
    /* The completion state is stored even after a failed write: a run that
     * failed on a full disk may still get its reason into the file. */
    const char *state = completion ? completion : "interrupted";
    char text[AVI_H5_COMPLETION_LEN] = {0};
    snprintf(text, sizeof text, "%s", state);
    if (w->completion > 0 && w->file > 0 && w->sealed) {
        if (write_completion_in_place(w, text, sizeof text))
            fail(w, AVI_ERR_RUN, "writing /parameters/completion failed");
    } else if (w->completion > 0 && w->file > 0) {
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, AVI_H5_COMPLETION_LEN);
        if (H5Dwrite(w->completion, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, text) < 0)
            fail(w, AVI_ERR_RUN, "writing /parameters/completion failed");
        H5Tclose(t);
    }
    close_handles(w);
    int closed = w->file > 0 && H5Fclose(w->file) >= 0;
    if (w->file > 0 && !closed) fail(w, AVI_ERR_RUN, "closing failed");
    w->file = 0;
    /* The whole reason, also after a blow-up; but a sealed file (a write
     * failed: full disk, file-size limit) keeps the state written in place,
     * since reopening it to grow it could leave it damaged. */
    if (closed && !w->part_path && !w->sealed) store_whole_completion(w, state);
    int rc = w->failed ? w->err.status : AVI_OK;
    if (err) {
        if (w->failed) *err = w->err;
        else {
            err->status = AVI_OK;
            err->message[0] = 0;
        }
    }
    destroy(w);
    return rc;
}

const avi_error *avi_h5_error(const avi_h5_writer *w)
{
    return &w->err;
}

const char *avi_h5_path(const avi_h5_writer *w)
{
    return w->path;
}

size_t avi_h5_row_count(const avi_h5_writer *w)
{
    return w->rows_written + w->rows_pending;
}

int avi_h5_recent_row_digest(const avi_h5_writer *w, size_t row, unsigned char digest[AVI_SHA256_LEN])
{
    size_t n = w ? w->rows_written + w->rows_pending : 0;
    if (row >= n || n - row > 4) return -1;
    return avi_h5_row_digest(w->recent_step[row % 4], &w->recent[row % 4], digest);
}

size_t avi_h5_frame_count(const avi_h5_writer *w)
{
    return w->frames;
}

size_t avi_h5_row_bytes(void)
{
    size_t n = 2 * sizeof(double); /* step and time */
    for (int o = 0; o < OBS_N; o++) n += (size_t)OBS[o].width * sizeof(cell);
    return n;
}

double avi_h5_frame_bytes(size_t vertex_count, int body_count)
{
    /* Positions and velocities, and each body's step and time. */
    return 48.0 * (double)vertex_count + 16.0 * body_count;
}

double avi_h5_output_count(double end_time, double every)
{
    if (!(end_time > 0.0) || !(every > 0.0) || !isfinite(end_time / every)) return 1.0;
    /* The calls at k every < end_time, k = 0 .. n - 1, as the engine
     * computes k every; then the one at end_time. */
    double n = ceil(end_time / every);
    while (n > 0.0 && (n - 1.0) * every >= end_time) n -= 1.0;
    while (n * every < end_time) n += 1.0;
    return n + 1.0;
}

/* Measured on files of this layout (h5ls -v, file sizes; tests/unit/
 * test_h5_writer.c checks the estimate against written files): the fixed
 * metadata of a file and of each body, and the chunk index entries of
 * each frame per body. */
#define FILE_METADATA 60000.0
#define BODY_METADATA 25000.0
#define FRAME_INDEX 100.0

double avi_h5_estimate_bytes(const avi_h5_size_plan *p)
{
    double row_chunks = ceil(p->rows / ROWS) * ROWS, frame_chunks = ceil(p->frames / ROWS) * ROWS;
    double rows = row_chunks * (double)avi_h5_row_bytes();
    double frames = p->frames * (48.0 * (double)p->vertex_count + FRAME_INDEX * p->body_count) +
                    frame_chunks * 16.0 * p->body_count;
    double fixed = FILE_METADATA + BODY_METADATA * p->body_count + 8.0 * (double)p->vertex_count +
                   12.0 * (double)p->triangle_count + 16.0 * (double)p->tet_count + (double)p->text_bytes;
    return rows + frames + fixed;
}
