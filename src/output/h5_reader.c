/* `avi info`: a summary of an output file, finished or still being written. */
#include "avi/output.h"
#include "base/error.h"
#include "output/hdf5_init.h"

#include <hdf5.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

typedef struct {
    hid_t file;
    const char *path;
    avi_error *err;
} reader;

static herr_t innermost(unsigned n, const H5E_error2_t *e, void *data)
{
    if (n == 0 && e->desc) snprintf((char *)data, 256, "%s", e->desc);
    return 0;
}

static int rfail(reader *r, avi_status status, const char *fmt, ...)
{
    char detail[256] = "";
    H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, innermost, detail);
    H5Eclear2(H5E_DEFAULT);
    va_list ap;
    va_start(ap, fmt);
    avi_error_vset_at(r->err, status, r->path, fmt, ap);
    va_end(ap);
    if (detail[0]) avi_error_append(r->err, " (%s)", detail);
    return status;
}

static int exists(hid_t file, const char *path)
{
    /* H5Lexists needs every parent to exist: check each prefix. */
    char buf[512];
    snprintf(buf, sizeof buf, "%s", path);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/') continue;
        *p = 0;
        int ok = H5Lexists(file, buf, H5P_DEFAULT) > 0;
        *p = '/';
        if (!ok) return 0;
    }
    return H5Lexists(file, buf, H5P_DEFAULT) > 0;
}

/* A text dataset (variable or fixed length) as a new string; "" when absent. */
static char *read_text(reader *r, const char *path)
{
    char *out = NULL;
    hid_t d = exists(r->file, path) ? H5Dopen2(r->file, path, H5P_DEFAULT) : -1;
    hid_t t = d < 0 ? -1 : H5Dget_type(d);
    if (t >= 0 && H5Tget_class(t) == H5T_STRING) {
        /* Read with the file's own string type: HDF5 converts no charsets. */
        hid_t m = H5Tcopy(t);
        if (H5Tis_variable_str(t) > 0) {
            char *s = NULL;
            hid_t sp = H5Dget_space(d);
            if (H5Dread(d, m, H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) >= 0 && s) {
                size_t n = strlen(s) + 1;
                if ((out = malloc(n))) memcpy(out, s, n);
                H5Dvlen_reclaim(m, sp, H5P_DEFAULT, &s);
            }
            H5Sclose(sp);
        } else {
            size_t n = H5Tget_size(t);
            if ((out = calloc(n + 1, 1)) && H5Dread(d, m, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) < 0) {
                free(out);
                out = NULL;
            }
        }
        H5Tclose(m);
    }
    if (t >= 0) H5Tclose(t);
    if (d >= 0) H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    if (!out && (out = malloc(1))) out[0] = 0;
    return out;
}

/* Reads a whole dataset as doubles or int64 (8-byte cells); rows and
 * width (product of the dimensions after the first) returned. NULL when
 * absent or unreadable (rows = 0). */
static void *read_all(reader *r, const char *path, hid_t mtype, size_t *rows, size_t *width)
{
    *rows = 0;
    if (width) *width = 0;
    if (!exists(r->file, path)) return NULL;
    hid_t d = H5Dopen2(r->file, path, H5P_DEFAULT);
    if (d < 0) return NULL;
    hid_t s = H5Dget_space(d);
    hsize_t dims[8] = {0};
    int rank = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
    void *buf = NULL;
    if (rank == 0) dims[0] = 1; /* a scalar reads as one row */
    if (rank >= 0 && rank <= 8 && H5Sget_simple_extent_dims(s, dims + (rank == 0), NULL) >= 0) {
        size_t w = 1;
        for (int i = 1; i < rank; i++) w *= dims[i];
        size_t total = (size_t)dims[0] * w;
        buf = malloc(total ? total * 8 : 8);
        if (buf && total && H5Dread(d, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
            free(buf);
            buf = NULL;
        }
        if (buf) {
            *rows = (size_t)dims[0];
            if (width) *width = w;
        }
    }
    if (s >= 0) H5Sclose(s);
    H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    return buf;
}

static size_t rows_of(reader *r, const char *path)
{
    size_t n = 0;
    if (!exists(r->file, path)) return 0;
    hid_t d = H5Dopen2(r->file, path, H5P_DEFAULT);
    hid_t s = d < 0 ? -1 : H5Dget_space(d);
    hsize_t dims[8];
    if (s >= 0 && H5Sget_simple_extent_ndims(s) >= 1 && H5Sget_simple_extent_dims(s, dims, NULL) >= 0)
        n = (size_t)dims[0];
    if (s >= 0) H5Sclose(s);
    if (d >= 0) H5Dclose(d);
    H5Eclear2(H5E_DEFAULT);
    return n;
}

typedef struct {
    reader *r;
    FILE *out;
    int count;
    size_t frames;
} body_walk;

static herr_t print_body(hid_t g, const char *name, const H5L_info_t *info, void *data)
{
    body_walk *bw = data;
    char path[512];
    snprintf(path, sizeof path, "/particles/%s/mass", name);
    size_t n = rows_of(bw->r, path);
    snprintf(path, sizeof path, "/connectivity/%s_triangles", name);
    size_t m = rows_of(bw->r, path);
    snprintf(path, sizeof path, "/connectivity/%s_tetrahedra", name);
    size_t k = rows_of(bw->r, path);
    snprintf(path, sizeof path, "/particles/%s/position/time", name);
    size_t f = rows_of(bw->r, path);
    if (bw->count == 0 || f < bw->frames) bw->frames = f;
    fprintf(bw->out, "%s%s (%zu vertices", bw->count ? ", " : "", name, n);
    if (m) fprintf(bw->out, ", %zu triangles", m);
    if (k) fprintf(bw->out, ", %zu tetrahedra", k);
    fputc(')', bw->out);
    bw->count++;
    return 0;
}

static double norm3(const double *a, const double *b)
{
    double d[3] = {a[0] - (b ? b[0] : 0), a[1] - (b ? b[1] : 0), a[2] - (b ? b[2] : 0)};
    return sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
}

/* max_t |q(t) - q(0)| relative to |q(0)|, with |q(0)| shown: a relative
 * error against a nearly vanishing q(0) says little. */
/* Momentum errors are relative to the larger of |q0| and the state's own
 * scale at the first frame (sum m|v| for p, sum m|x||v| for L): a total
 * near zero (a symmetric impact) would make |q - q0| / |q0| meaningless. */
static void print_momentum(FILE *out, const char *q_name, const double *q, size_t rows, const char *unit, double scale)
{
    if (!q || rows == 0) {
        fprintf(out, "%s: n/a", q_name);
        return;
    }
    double q0 = norm3(q, NULL), worst = 0.0;
    for (size_t i = 0; i < rows; i++) worst = fmax(worst, norm3(q + 3 * i, q));
    double ref = fmax(q0, scale);
    if (ref > 0.0)
        fprintf(out, "%s: max |%s-%s0| / %.3e %s = %.3e", q_name, q_name, q_name, ref, unit, worst / ref);
    else
        fprintf(out, "%s: max |%s-%s0| = %.3e %s (%s0 = 0)", q_name, q_name, q_name, worst, unit, q_name);
}

typedef struct {
    hid_t file;
    double p, l;
} scale_walk;

/* Adds one body's sum m|v| and sum m|x||v| at frame 0. */
static herr_t add_scale(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    (void)info;
    scale_walk *w = data;
    char path[600];
    double *fr[2] = {NULL, NULL}, *mass = NULL;
    hsize_t n = 0;
    snprintf(path, sizeof path, "%s/mass", name);
    hid_t ds = H5Dopen2(group, path, H5P_DEFAULT);
    if (ds >= 0) {
        hid_t sp = H5Dget_space(ds);
        H5Sget_simple_extent_dims(sp, &n, NULL);
        H5Sclose(sp);
        mass = malloc((n ? n : 1) * sizeof *mass);
        if (mass && H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, mass) < 0) n = 0;
        H5Dclose(ds);
    }
    for (int k = 0; k < 2 && n; k++) {
        snprintf(path, sizeof path, "%s/%s/value", name, k ? "velocity" : "position");
        ds = H5Dopen2(group, path, H5P_DEFAULT);
        if (ds < 0) { n = 0; break; }
        hid_t fs = H5Dget_space(ds);
        hsize_t dims[3] = {0, 0, 0}, start[3] = {0, 0, 0}, cnt[3] = {1, n, 3};
        H5Sget_simple_extent_dims(fs, dims, NULL);
        fr[k] = malloc(3 * n * sizeof(double));
        hid_t ms = H5Screate_simple(3, cnt, NULL);
        if (!fr[k] || dims[0] < 1 || dims[1] != n || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
            H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, fr[k]) < 0)
            n = 0;
        H5Sclose(ms);
        H5Sclose(fs);
        H5Dclose(ds);
    }
    for (hsize_t i = 0; i < n; i++) {
        double speed = norm3(fr[1] + 3 * i, NULL), r = norm3(fr[0] + 3 * i, NULL);
        w->p += mass[i] * speed;
        w->l += mass[i] * speed * r;
    }
    free(fr[0]);
    free(fr[1]);
    free(mass);
    return 0;
}

char *avi_h5_read_text(const char *path, const char *dataset)
{
    avi_hdf5_init();
    reader r = {avi_hdf5_open_output(path), path, NULL};
    if (r.file < 0) {
        H5Eclear2(H5E_DEFAULT);
        return NULL;
    }
    char *text = read_text(&r, dataset);
    H5Fclose(r.file);
    return text;
}

enum { NOT_HDF5 = -1, NOT_REGULAR = -2 };

/* 0 for a regular file that starts with HDF5's signature (at 0, 512, 1024,
 * ...: the places the format allows); else NOT_HDF5, NOT_REGULAR or the
 * errno of stat or open ("no such file"). */
static int plain_hdf5_file(const char *path)
{
    static const unsigned char sig[8] = {0x89, 'H', 'D', 'F', '\r', '\n', 0x1a, '\n'};
    struct stat st;
    if (stat(path, &st) != 0) return errno;
    if (!S_ISREG(st.st_mode)) return NOT_REGULAR;
    FILE *f = fopen(path, "rb");
    if (!f) return errno;
    int found = 0;
    for (long at = 0; !found && at + 8 <= (long)st.st_size; at = at ? 2 * at : 512) {
        unsigned char b[8];
        found = fseek(f, at, SEEK_SET) == 0 && fread(b, 1, 8, f) == 8 && memcmp(b, sig, 8) == 0;
    }
    fclose(f);
    return found ? 0 : NOT_HDF5;
}

int avi_h5_info(const char *path, FILE *out, avi_error *err)
{
    avi_hdf5_init();
    reader r = {-1, path ? path : "(no path)", err};
    if (!path || !out) return rfail(&r, AVI_ERR_INPUT, "no file or output stream given");
    if (err) {
        err->status = AVI_OK;
        err->message[0] = 0;
    }
    /* What a user can act on, before HDF5's own words. */
    int why = plain_hdf5_file(path);
    if (why)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: %s", path,
                             why == NOT_HDF5       ? "not an HDF5 file"
                             : why == NOT_REGULAR  ? "not a regular file"
                             : why == ENOENT       ? "no such file"
                                                   : strerror(why));
    r.file = avi_hdf5_open_output(path);
    if (r.file < 0) return rfail(&r, AVI_ERR_INPUT, "cannot open the file as HDF5");
    if (!exists(r.file, "/h5md") || !exists(r.file, "/observables/total_energy/value") ||
        !exists(r.file, "/parameters")) {
        H5Fclose(r.file);
        return rfail(&r, AVI_ERR_INPUT, "not an avi output file (no /h5md, /observables or /parameters)");
    }

    char *scene = read_text(&r, "/parameters/scene_name");
    char *integrator = read_text(&r, "/parameters/integrator");
    char *version = read_text(&r, "/parameters/program_version");
    char *completion = read_text(&r, "/parameters/completion");
    size_t nt, ne, nk, kw, nl, na, nd, nend, tmp, nr;
    double *time = read_all(&r, "/observables/total_energy/time", H5T_NATIVE_DOUBLE, &nt, NULL);
    /* The rows' own times (kinetic and total energy may have rows of their
     * own, output.synchronized_every); files from before it share them. */
    double *row_time = read_all(&r, "/observables/events/time", H5T_NATIVE_DOUBLE, &nr, NULL);
    double *energy = read_all(&r, "/observables/total_energy/value", H5T_NATIVE_DOUBLE, &ne, NULL);
    int64_t *events = read_all(&r, "/observables/events/value", H5T_NATIVE_INT64, &tmp, NULL);
    int64_t *by_kind = read_all(&r, "/observables/events_by_kind/value", H5T_NATIVE_INT64, &nk, &kw);
    double *linear = read_all(&r, "/observables/linear_momentum/value", H5T_NATIVE_DOUBLE, &nl, NULL);
    double *angular = read_all(&r, "/observables/angular_momentum/value", H5T_NATIVE_DOUBLE, &na, NULL);
    double *dist = read_all(&r, "/observables/min_contact_distance/value", H5T_NATIVE_DOUBLE, &nd, NULL);
    double *end = read_all(&r, "/parameters/end_time", H5T_NATIVE_DOUBLE, &nend, NULL);
    size_t nth = 0;
    int64_t *threads = exists(r.file, "/parameters/threads")
                           ? read_all(&r, "/parameters/threads", H5T_NATIVE_INT64, &nth, NULL) : NULL;
    size_t nev = events ? tmp : 0;
    /* A live file may show a few more rows in one dataset than another. */
    size_t srows = nt < ne ? nt : ne, rows = row_time && nr < nev ? nr : nev;
    if (!row_time) rows = srows;

    fprintf(out, "file:                 %s\n", path);
    fprintf(out, "scene:                %s\n", scene && scene[0] ? scene : "(unnamed)");
    fprintf(out, "integrator:           %s\n", integrator ? integrator : "");
    fprintf(out, "program version:      %s\n", version ? version : "");
    if (threads && nth == 1 && threads[0] > 0) fprintf(out, "threads:              %lld\n", (long long)threads[0]);
    fprintf(out, "bodies:               ");
    body_walk bw = {&r, out, 0, 0};
    if (exists(r.file, "/particles")) {
        hsize_t idx = 0;
        H5Literate_by_name(r.file, "/particles", H5_INDEX_NAME, H5_ITER_INC, &idx, print_body, &bw, H5P_DEFAULT);
    }
    fprintf(out, "%s\n", bw.count ? "" : "none");
    fprintf(out, "completion:           %s\n", completion ? completion : "");
    if (rows)
        fprintf(out, "simulated time:       %.9g s", row_time ? row_time[rows - 1] : time[rows - 1]);
    else
        fprintf(out, "simulated time:       none (no rows yet)");
    if (end && nend == 1) fprintf(out, " (end time %.9g s)", end[0]);
    fprintf(out, ", %zu rows", rows);
    if (srows != rows) fprintf(out, " (%zu with the synchronized energy)", srows);
    fprintf(out, ", %zu frames\n", bw.frames);

    fprintf(out, "events:               ");
    if (nev) fprintf(out, "%lld", (long long)events[nev - 1]);
    else fprintf(out, "n/a");
    if (by_kind && nk && kw == AVI_KIND_COUNT) {
        fputs(" (", out);
        for (int k = 0; k < AVI_KIND_COUNT; k++)
            fprintf(out, "%s%s %lld", k ? ", " : "", avi_kind_name((avi_kind)k),
                    (long long)by_kind[(nk - 1) * AVI_KIND_COUNT + k]);
        fputc(')', out);
    }
    fputc('\n', out);

    fprintf(out, "energy drift:         ");
    if (srows) {
        double e0 = energy[0], worst = 0.0;
        for (size_t i = 0; i < srows; i++) worst = fmax(worst, fabs(energy[i] - e0));
        double last = energy[srows - 1] - e0;
        if (e0 != 0.0)
            fprintf(out, "max |E-E0|/|E0| = %.3e, final (E-E0)/|E0| = %.3e (E0 = %.6g J)\n", worst / fabs(e0),
                    last / fabs(e0), e0);
        else
            fprintf(out, "max |E-E0| = %.3e J, final E-E0 = %.3e J (E0 = 0)\n", worst, last);
    } else {
        fprintf(out, "n/a\n");
    }

    scale_walk sw = {r.file, 0.0, 0.0};
    if (exists(r.file, "/particles")) {
        hsize_t idx = 0;
        hid_t pg = H5Gopen2(r.file, "/particles", H5P_DEFAULT);
        if (pg >= 0) {
            H5Literate(pg, H5_INDEX_NAME, H5_ITER_INC, &idx, add_scale, &sw);
            H5Gclose(pg);
        }
    }
    fprintf(out, "momentum error:       ");
    print_momentum(out, "p", linear, nl < rows ? nl : rows, "kg m s-1", sw.p);
    fputs("; ", out);
    print_momentum(out, "L", angular, na < rows ? na : rows, "kg m2 s-1", sw.l);
    fputc('\n', out);

    double dmin = INFINITY;
    for (size_t i = 0; dist && i < nd; i++)
        if (dist[i] < dmin) dmin = dist[i];
    if (isfinite(dmin)) fprintf(out, "min contact distance: %.6e m\n", dmin);
    else fprintf(out, "min contact distance: none (no contact-eligible pair)\n");

    free(scene);
    free(integrator);
    free(version);
    free(completion);
    free(time);
    free(row_time);
    free(threads);
    free(energy);
    free(events);
    free(by_kind);
    free(linear);
    free(angular);
    free(dist);
    free(end);
    H5Fclose(r.file);
    H5Eclear2(H5E_DEFAULT);
    if (ferror(out)) return rfail(&r, AVI_ERR_RUN, "writing the summary failed");
    return 0;
}
