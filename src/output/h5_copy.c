/* Resuming: the first rows and frames of an earlier output file, copied
 * value for value into a new writer. */
#include "avi/output.h"
#include "base/error.h"
#include "output/h5_row_digest.h"
#include "output/hdf5_init.h"

#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads rows first .. first + n - 1 (each `width` values) of a dataset. */
static int read_rows(hid_t f, const char *path, hid_t type, size_t first, size_t n, size_t width, void *out)
{
    if (n == 0) return 0;
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    if (ds < 0) return -1;
    hid_t fs = H5Dget_space(ds);
    int rank = H5Sget_simple_extent_ndims(fs);
    hsize_t dims[3] = {0, 0, 0}, start[3] = {0, 0, 0}, cnt[3];
    H5Sget_simple_extent_dims(fs, dims, NULL);
    int rc = -1;
    if (rank >= 1 && rank <= 3 && dims[0] >= first + n) {
        for (int r = 0; r < rank; r++) cnt[r] = dims[r];
        cnt[0] = n;
        start[0] = first;
        size_t w = 1;
        for (int r = 1; r < rank; r++) w *= (size_t)dims[r];
        hid_t ms = H5Screate_simple(rank, cnt, NULL);
        if (w == width && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) >= 0 &&
            H5Dread(ds, type, ms, fs, H5P_DEFAULT, out) >= 0)
            rc = 0;
        H5Sclose(ms);
    }
    H5Sclose(fs);
    H5Dclose(ds);
    return rc;
}

static long row_count(hid_t f, const char *path)
{
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    if (ds < 0) return -1;
    hid_t fs = H5Dget_space(ds);
    hsize_t dims[3] = {0, 0, 0};
    H5Sget_simple_extent_dims(fs, dims, NULL);
    H5Sclose(fs);
    H5Dclose(ds);
    return (long)dims[0];
}

/* An int64 scalar of the file; 0 when absent or unreadable. */
static long long read_int(hid_t f, const char *path)
{
    long long v = 0;
    if (H5Lexists(f, "/parameters", H5P_DEFAULT) <= 0 || H5Lexists(f, path, H5P_DEFAULT) <= 0) return 0;
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    if (ds < 0) return 0;
    if (H5Dread(ds, H5T_NATIVE_LLONG, H5S_ALL, H5S_ALL, H5P_DEFAULT, &v) < 0) v = 0;
    H5Dclose(ds);
    return v;
}

/* kinetic_energy, total_energy and friction_work of rows first .. first +
 * n - 1 when they have their own rows (synchronized_every > 1): a row has them when its
 * step and time are among those rows; the others get NaN, as the run gave
 * the writer (avi_snapshot_set_synchronized), and sync[r] = 0. */
static int read_synchronized(hid_t f, size_t n, const double *time, const int64_t *step, double *kin, double *tot,
                             double *work, unsigned char *sync)
{
    long ns = row_count(f, "/observables/total_energy/value");
    if (ns < 0 || row_count(f, "/observables/kinetic_energy/value") != ns ||
        row_count(f, "/observables/total_energy/time") != ns || row_count(f, "/observables/total_energy/step") != ns)
        return -1;
    size_t m = ns ? (size_t)ns : 1;
    double *st = malloc(m * sizeof *st), *sk = malloc(m * sizeof *sk), *sv = malloc(m * sizeof *sv);
    double *sw = malloc(m * sizeof *sw);
    int64_t *ss = malloc(m * sizeof *ss);
    int rc = !st || !sk || !sv || !sw || !ss || row_count(f, "/observables/friction_work/value") != ns ? -1 : 0;
    if (!rc && ns > 0 &&
        (read_rows(f, "/observables/total_energy/time", H5T_NATIVE_DOUBLE, 0, (size_t)ns, 1, st) ||
         read_rows(f, "/observables/total_energy/step", H5T_NATIVE_INT64, 0, (size_t)ns, 1, ss) ||
         read_rows(f, "/observables/kinetic_energy/value", H5T_NATIVE_DOUBLE, 0, (size_t)ns, 1, sk) ||
         read_rows(f, "/observables/total_energy/value", H5T_NATIVE_DOUBLE, 0, (size_t)ns, 1, sv) ||
         read_rows(f, "/observables/friction_work/value", H5T_NATIVE_DOUBLE, 0, (size_t)ns, 1, sw)))
        rc = -1;
    for (size_t r = 0; r < n && !rc; r++) {
        size_t lo = 0, hi = (size_t)ns; /* the first synchronized row not before time[r] */
        while (lo < hi) {
            size_t mid = lo + (hi - lo) / 2;
            if (st[mid] < time[r]) lo = mid + 1;
            else hi = mid;
        }
        sync[r] = lo < (size_t)ns && st[lo] == time[r] && ss[lo] == step[r];
        kin[r] = sync[r] ? sk[lo] : NAN;
        tot[r] = sync[r] ? sv[lo] : NAN;
        work[r] = sync[r] ? sw[lo] : NAN;
    }
    free(sw);
    free(st);
    free(sk);
    free(sv);
    free(ss);
    return rc;
}

/* Rows first .. first + n - 1 of the observables as observations (and
 * their steps and whether each has the synchronized pair), as the writer
 * was given them. */
static int read_observations(hid_t f, const char *name, size_t first, size_t n, avi_observation *obs, int64_t *step,
                             unsigned char *sync, avi_error *err)
{
    int separate = read_int(f, "/parameters/synchronized_every") > 1;
    /* Each observable and what an output from before it existed stands in
     * for it with: REQUIRED, ZERO (no friction work was done) or the index
     * of another (the old energies were the mid-step ones). */
    enum { REQUIRED = -1, ZERO = -2 };
    static const struct {
        const char *name;
        int absent;
    } scalars[] = {{"kinetic_energy", REQUIRED},   {"elastic_energy", REQUIRED},      {"contact_energy", REQUIRED},
                   {"external_energy", REQUIRED},  {"total_energy", REQUIRED},        {"min_contact_distance", REQUIRED},
                   {"friction_work", ZERO},        {"kinetic_energy_midstep", 0},     {"total_energy_midstep", 4}};
    enum { NSCALAR = sizeof scalars / sizeof *scalars };
    double *sc[NSCALAR] = {0}, *lin = NULL, *ang = NULL, *time = NULL;
    int64_t *events = NULL, *active = NULL, *by_kind = NULL;
    size_t m = n ? n : 1;
    int rc = 0;
    for (int k = 0; k < NSCALAR && !rc; k++) rc = !(sc[k] = malloc(m * sizeof(double)));
    if (!rc) {
        lin = malloc(3 * m * sizeof *lin);
        ang = malloc(3 * m * sizeof *ang);
        time = malloc(m * sizeof *time);
        events = malloc(m * sizeof *events);
        active = malloc(m * sizeof *active);
        by_kind = malloc(AVI_KIND_COUNT * m * sizeof *by_kind);
        rc = !lin || !ang || !time || !events || !active || !by_kind;
    }
    if (rc) avi_error_set(err, AVI_ERR_RUN, "out of memory");
    char path[512];
    for (int k = 0; k < NSCALAR && !rc; k++) {
        if (separate && (k == 0 || k == 4 || k == 6)) continue; /* below */
        snprintf(path, sizeof path, "/observables/%s/value", scalars[k].name);
        int absent = scalars[k].absent;
        if (absent != REQUIRED && H5Lexists(f, path, H5P_DEFAULT) <= 0) {
            if (absent == ZERO) memset(sc[k], 0, m * sizeof(double));
            else memcpy(sc[k], sc[absent], m * sizeof(double));
            continue;
        }
        if (read_rows(f, path, H5T_NATIVE_DOUBLE, first, n, 1, sc[k])) rc = avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read %s", name, path);
    }
    if (!rc && (read_rows(f, "/observables/linear_momentum/value", H5T_NATIVE_DOUBLE, first, n, 3, lin) ||
                read_rows(f, "/observables/angular_momentum/value", H5T_NATIVE_DOUBLE, first, n, 3, ang) ||
                read_rows(f, "/observables/events/time", H5T_NATIVE_DOUBLE, first, n, 1, time) ||
                read_rows(f, "/observables/events/step", H5T_NATIVE_INT64, first, n, 1, step) ||
                read_rows(f, "/observables/events/value", H5T_NATIVE_INT64, first, n, 1, events) ||
                read_rows(f, "/observables/active_contact_potentials/value", H5T_NATIVE_INT64, first, n, 1, active) ||
                read_rows(f, "/observables/events_by_kind/value", H5T_NATIVE_INT64, first, n, AVI_KIND_COUNT, by_kind)))
        rc = avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read the observables", name);
    if (!rc && separate && read_synchronized(f, n, time, step, sc[0], sc[4], sc[6], sync))
        rc = avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read the synchronized energies", name);
    if (!rc && !separate) memset(sync, 1, n);
    for (size_t r = 0; r < n && !rc; r++) {
        avi_observation *o = &obs[r];
        memset(o, 0, sizeof *o);
        o->time = time[r];
        o->kinetic = sc[0][r];
        o->elastic = sc[1][r];
        o->contact = sc[2][r];
        o->external = sc[3][r];
        o->total = sc[4][r];
        o->min_contact_distance = sc[5][r];
        o->friction_work = sc[6][r];
        o->kinetic_midstep = sc[7][r];
        o->total_midstep = sc[8][r];
        for (int c = 0; c < 3; c++) {
            o->linear_momentum[c] = lin[3 * r + c];
            o->angular_momentum[c] = ang[3 * r + c];
        }
        for (int k = 0; k < AVI_KIND_COUNT; k++) o->events[k] = (uint64_t)by_kind[AVI_KIND_COUNT * r + k];
        o->events_total = (uint64_t)events[r];
        o->active_contact_potentials = (uint64_t)active[r];
    }
    for (int k = 0; k < NSCALAR; k++) free(sc[k]);
    free(lin);
    free(ang);
    free(time);
    free(events);
    free(active);
    free(by_kind);
    return rc;
}

int avi_h5_copy_prefix(const char *old_path, avi_h5_writer *w, size_t rows, size_t frames, const avi_h5_body *bodies,
                       int body_count, size_t vertex_count, avi_error *err)
{
    avi_hdf5_init();
    hid_t f = avi_hdf5_open_output(old_path);
    /* Messages name the output (old_path is its set-aside name); what the
     * earlier output lacks is bad input, a failed write is the run's. */
    const char *name = avi_h5_path(w);
    if (f < 0) return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot open the earlier output to continue it (corrupt?)", name);
    int rc = 0;
    long have_rows = row_count(f, "/observables/events/value");
    if (have_rows < (long)rows) rc = avi_error_set(err, AVI_ERR_INPUT, "%s: has %ld rows, its checkpoint needs %zu (truncated, or not the output of this checkpoint)", name, have_rows < 0 ? 0 : have_rows, rows);

    /* Rows, then frames. */
    avi_observation *obs = rc ? NULL : malloc((rows ? rows : 1) * sizeof *obs);
    int64_t *step = rc ? NULL : malloc((rows ? rows : 1) * sizeof *step);
    unsigned char *sync = rc ? NULL : malloc(rows ? rows : 1);
    if (!rc && (!obs || !step || !sync)) rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
    if (!rc) rc = read_observations(f, name, 0, rows, obs, step, sync, err);
    for (size_t r = 0; r < rows && !rc; r++)
        if (avi_h5_write_row(w, step[r], &obs[r], sync[r] && avi_h5_row_synchronized(w, obs[r].time))) rc = avi_error_set(err, AVI_ERR_RUN, "%s", avi_h5_error(w)->message);
    free(obs);
    free(step);
    free(sync);
    char path[512];

    /* Frames: every body's hyperslab k into one all-vertex array. */
    double (*x)[3] = malloc((vertex_count ? vertex_count : 1) * sizeof *x);
    double (*v)[3] = malloc((vertex_count ? vertex_count : 1) * sizeof *v);
    if (!rc && (!x || !v)) rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
    for (size_t k = 0; k < frames && !rc; k++) {
        int64_t fstep = 0;
        double ftime = 0.0;
        for (int b = 0; b < body_count && !rc; b++) {
            const avi_h5_body *body = &bodies[b];
            size_t nb = body->vertex_count;
            for (int which = 0; which < 2 && !rc; which++) {
                snprintf(path, sizeof path, "/particles/%s/%s/value", body->name, which ? "velocity" : "position");
                hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
                hid_t fs = ds >= 0 ? H5Dget_space(ds) : -1;
                hsize_t start[3] = {k, 0, 0}, cnt[3] = {1, nb, 3};
                hid_t ms = H5Screate_simple(3, cnt, NULL);
                double (*dst)[3] = (which ? v : x) + body->first_vertex;
                if (ds < 0 || fs < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
                    H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, dst) < 0)
                    rc = avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read frame %zu of %s", name, k, path);
                H5Sclose(ms);
                if (fs >= 0) H5Sclose(fs);
                if (ds >= 0) H5Dclose(ds);
            }
            if (b == 0 && !rc) {
                snprintf(path, sizeof path, "/particles/%s/position", body->name);
                char p2[600];
                snprintf(p2, sizeof p2, "%s/step", path);
                hid_t ds = H5Dopen2(f, p2, H5P_DEFAULT);
                hid_t fs = ds >= 0 ? H5Dget_space(ds) : -1;
                hsize_t start[1] = {k}, cnt[1] = {1};
                hid_t ms = H5Screate_simple(1, cnt, NULL);
                if (ds < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
                    H5Dread(ds, H5T_NATIVE_INT64, ms, fs, H5P_DEFAULT, &fstep) < 0)
                    rc = avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read %s", name, p2);
                if (fs >= 0) H5Sclose(fs);
                if (ds >= 0) H5Dclose(ds);
                snprintf(p2, sizeof p2, "%s/time", path);
                ds = H5Dopen2(f, p2, H5P_DEFAULT);
                fs = ds >= 0 ? H5Dget_space(ds) : -1;
                if (!rc && (ds < 0 || H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, cnt, NULL) < 0 ||
                            H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, &ftime) < 0))
                    rc = avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read %s", name, p2);
                H5Sclose(ms);
                if (fs >= 0) H5Sclose(fs);
                if (ds >= 0) H5Dclose(ds);
            }
        }
        if (!rc && avi_h5_write_frame(w, fstep, ftime, (const double (*)[3])x, (const double (*)[3])v))
            rc = avi_error_set(err, AVI_ERR_RUN, "%s", avi_h5_error(w)->message);
    }
    free(x);
    free(v);
    H5Fclose(f);
    return rc;
}

int avi_h5_read_row_digest(const char *path, const char *name, size_t row, size_t *rows, size_t *frames,
                           unsigned char digest[AVI_SHA256_LEN], avi_error *err)
{
    avi_hdf5_init();
    hid_t f = avi_hdf5_open_output(path);
    if (f < 0) return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot open the output (not an HDF5 file, or corrupt)", name);
    long nr = row_count(f, "/observables/events/value");
    *rows = nr > 0 ? (size_t)nr : 0;
    *frames = 0;
    /* The first body's frame count: every body has as many. */
    hid_t pg = H5Gopen2(f, "/particles", H5P_DEFAULT);
    char body[256] = "";
    if (pg >= 0 && H5Lget_name_by_idx(pg, ".", H5_INDEX_NAME, H5_ITER_INC, 0, body, sizeof body, H5P_DEFAULT) > 0) {
        char p[400];
        snprintf(p, sizeof p, "/particles/%s/position/value", body);
        long nf = row_count(f, p);
        *frames = nf > 0 ? (size_t)nf : 0;
    }
    if (pg >= 0) H5Gclose(pg);
    H5Eclear2(H5E_DEFAULT);
    int rc = AVI_OK;
    if (row < *rows) {
        avi_observation o;
        int64_t step = 0;
        unsigned char sync;
        rc = read_observations(f, name, row, 1, &o, &step, &sync, err);
        if (!rc && avi_h5_row_digest(step, &o, digest)) rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
    }
    H5Eclear2(H5E_DEFAULT);
    H5Fclose(f);
    return rc;
}

long long avi_h5_read_synchronized_every(const char *path)
{
    avi_hdf5_init();
    hid_t f = avi_hdf5_open_output(path);
    if (f < 0) return 0;
    long long n = read_int(f, "/parameters/synchronized_every");
    H5Eclear2(H5E_DEFAULT);
    H5Fclose(f);
    return n > 0 ? n : 0;
}
