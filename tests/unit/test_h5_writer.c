/* HDF5 writer: layout, values, completion state, errors, SWMR readers. */
#include "check_main.h"

#include <dirent.h>
#include <errno.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "run/checkpoint.h"
#include "avi/output.h"

/* ------------------------------------------------------------- fixtures */

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/avi_h5_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

static void remove_tmpdir(void)
{
    DIR *d = opendir(tmpdir);
    if (!d) return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
            snprintf(p, sizeof p, "%s/%s", tmpdir, e->d_name);
            unlink(p);
        }
    closedir(d);
    rmdir(tmpdir);
}

static void in_tmp(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

/* Two bodies: a 4-vertex sheet (2 triangles) and a 5-vertex block (2 tets
 * and their 6 boundary triangles), vertices 0..3 and 4..8 of the model. */
enum { NV = 9 };
static const double sheet_mass[4] = {1.0, 2.0, 3.0, 4.0};
static const double block_mass[5] = {0.5, 0.25, 0.125, 0.0625, 0.03125};
static const uint32_t sheet_tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
static const uint32_t block_tris[6][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}, {1, 2, 4}, {0, 4, 2}};
static const uint32_t block_tets[2][4] = {{0, 1, 2, 3}, {0, 2, 1, 4}};

static avi_h5_body bodies[2];
static avi_h5_layout layout;

static void make_layout(const char *path)
{
    bodies[0] = (avi_h5_body){.name = "sheet", .first_vertex = 0, .vertex_count = 4, .mass = sheet_mass,
                              .triangles = sheet_tris, .triangle_count = 2};
    bodies[1] = (avi_h5_body){.name = "block", .first_vertex = 4, .vertex_count = 5, .mass = block_mass,
                              .triangles = block_tris, .triangle_count = 6, .tets = block_tets, .tet_count = 2};
    memset(&layout, 0, sizeof layout);
    layout.path = path;
    layout.bodies = bodies;
    layout.body_count = 2;
    layout.scene_name = "two-bodies";
    layout.scene_text = "name: two-bodies\n";
    layout.resolved_text = "name: two-bodies\ntime: {end: 1.0}\n";
    layout.integrator = "avi";
    layout.author = "tester";
    layout.end_time = 1.0;
    layout.energy_every = 0.1;
    layout.frame_every = 0.5;
    layout.potential_count[AVI_KIND_MEMBRANE] = 8;
    layout.potential_count[AVI_KIND_TET] = 2;
    layout.dt_min[AVI_KIND_MEMBRANE] = 1e-4;
    layout.dt_max[AVI_KIND_MEMBRANE] = 2e-4;
    layout.dt_min[AVI_KIND_TET] = 3e-5;
    layout.dt_max[AVI_KIND_TET] = 3e-5;
    layout.vertex_count = NV;
}

/* Row i: recognisable values derived from i. */
static avi_observation row(size_t i)
{
    avi_observation o;
    memset(&o, 0, sizeof o);
    o.time = 0.1 * (double)i;
    o.kinetic = 1.0 + (double)i;
    o.elastic = 2.0 + (double)i;
    o.contact = 3.0;
    o.external = -1.0;
    o.total = 10.0 + 1e-3 * (double)i;
    for (int k = 0; k < 3; k++) {
        o.linear_momentum[k] = 1.0 + k;
        o.angular_momentum[k] = (k == 2) ? 5.0 + 0.5 * (double)i : 0.0;
    }
    for (int k = 0; k < AVI_KIND_COUNT; k++) o.events[k] = (uint64_t)(i * (k + 1));
    o.events_total = (uint64_t)(i * AVI_KIND_COUNT * (AVI_KIND_COUNT + 1) / 2);
    o.active_contact_potentials = i % 3;
    o.min_contact_distance = i == 0 ? INFINITY : 1.0 / (double)i;
    return o;
}

static void frame(size_t k, double x[NV][3], double v[NV][3])
{
    for (int i = 0; i < NV; i++)
        for (int c = 0; c < 3; c++) {
            x[i][c] = 100.0 * (double)k + 10.0 * i + c;
            v[i][c] = -x[i][c];
        }
}

static avi_h5_writer *create_ok(void)
{
    avi_error err;
    avi_h5_writer *w = avi_h5_create(&layout, &err);
    ck_assert_msg(w != NULL, "create failed: %s", err.message);
    return w;
}

/* Writes `rows` rows and `frames` frames (frame k at t = 0.5 k). */
static void fill(avi_h5_writer *w, size_t first_row, size_t rows, size_t first_frame, size_t frames)
{
    for (size_t i = first_row; i < first_row + rows; i++) {
        avi_observation o = row(i);
        ck_assert_int_eq(avi_h5_write_observation(w, (int64_t)(7 * i), &o), 0);
    }
    double x[NV][3], v[NV][3];
    for (size_t k = first_frame; k < first_frame + frames; k++) {
        frame(k, x, v);
        ck_assert_int_eq(avi_h5_write_frame(w, (int64_t)(50 * k), 0.5 * (double)k, x, v), 0);
    }
}

/* ------------------------------------------------------ HDF5 read helpers */

static hsize_t dims_of(hid_t f, const char *path, int *rank, hsize_t dims[3])
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    ck_assert_msg(d >= 0, "%s missing", path);
    hid_t s = H5Dget_space(d);
    *rank = H5Sget_simple_extent_ndims(s);
    H5Sget_simple_extent_dims(s, dims, NULL);
    H5Sclose(s);
    H5Dclose(d);
    return dims[0];
}

static void read_doubles(hid_t f, const char *path, double *out)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    ck_assert_msg(d >= 0, "%s missing", path);
    ck_assert(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Dclose(d);
}

static void read_int64s(hid_t f, const char *path, int64_t *out)
{
    hid_t d = H5Dopen2(f, path, H5P_DEFAULT);
    ck_assert_msg(d >= 0, "%s missing", path);
    ck_assert(H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    H5Dclose(d);
}

/* A string attribute (variable length) of obj_path, compared to expected. */
static void check_attr_str(hid_t f, const char *obj_path, const char *name, const char *expected)
{
    hid_t a = H5Aopen_by_name(f, obj_path, name, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(a >= 0, "%s@%s missing", obj_path, name);
    hid_t t = H5Tcopy(H5T_C_S1);
    H5Tset_size(t, H5T_VARIABLE);
    H5Tset_cset(t, H5T_CSET_UTF8);
    char *s = NULL;
    ck_assert(H5Aread(a, t, &s) >= 0);
    ck_assert_msg(strcmp(s, expected) == 0, "%s@%s is '%s', expected '%s'", obj_path, name, s, expected);
    H5free_memory(s);
    H5Tclose(t);
    H5Aclose(a);
}

static void check_attr_ints(hid_t f, const char *obj_path, const char *name, int a0, int a1)
{
    hid_t a = H5Aopen_by_name(f, obj_path, name, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert_msg(a >= 0, "%s@%s missing", obj_path, name);
    int v[2] = {-1, -1};
    ck_assert(H5Aread(a, H5T_NATIVE_INT, v) >= 0);
    ck_assert_int_eq(v[0], a0);
    ck_assert_int_eq(v[1], a1);
    H5Aclose(a);
}

/* Opens for reading in SWMR mode: a killed writer leaves the file marked as
 * open for writing, which only SWMR readers accept. */
static hid_t open_read(const char *path)
{
    return H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
}

/* /parameters/completion as a new string: a fixed-length 64-byte string
 * while the file is written (closed = 0), a variable-length UTF-8 one once
 * avi_h5_close stored the whole state (closed = 1). */
static char *read_completion(const char *path, int closed)
{
    hid_t f = open_read(path);
    ck_assert(f >= 0);
    hid_t d = H5Dopen2(f, "/parameters/completion", H5P_DEFAULT);
    ck_assert(d >= 0);
    hid_t t = H5Dget_type(d);
    ck_assert_int_eq(H5Tget_class(t), H5T_STRING);
    char *out;
    if (closed) {
        ck_assert(H5Tis_variable_str(t) > 0);
        ck_assert_int_eq(H5Tget_cset(t), H5T_CSET_UTF8);
        char *s = NULL;
        ck_assert(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, &s) >= 0 && s);
        out = strdup(s);
        H5free_memory(s);
    } else {
        ck_assert(!H5Tis_variable_str(t));
        ck_assert_int_eq((int)H5Tget_size(t), AVI_H5_COMPLETION_LEN);
        out = calloc(AVI_H5_COMPLETION_LEN + 1, 1);
        ck_assert(H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, out) >= 0);
    }
    ck_assert_ptr_nonnull(out);
    H5Tclose(t);
    H5Dclose(d);
    H5Fclose(f);
    return out;
}

/* Every file HDF5 opened in this process is closed again: a writer that
 * closed normally leaves none open (tests/valgrind.supp relies on this). */
static void no_open_files(void)
{
    ck_assert_int_eq((int)H5Fget_obj_count(H5F_OBJ_ALL, H5F_OBJ_FILE), 0);
}

static void same_object(hid_t f, const char *a, const char *b)
{
    H5O_info_t ia, ib;
    ck_assert(H5Oget_info_by_name(f, a, &ia, H5P_DEFAULT) >= 0);
    ck_assert(H5Oget_info_by_name(f, b, &ib, H5P_DEFAULT) >= 0);
    ck_assert_msg(ia.addr == ib.addr, "%s and %s are different objects", a, b);
    H5L_info_t li;
    ck_assert(H5Lget_info(f, b, &li, H5P_DEFAULT) >= 0);
    ck_assert_int_eq(li.type, H5L_TYPE_HARD);
}

/* ----------------------------------------------------- external programs */

static int have_h5py(void)
{
    static int known = -1;
    if (known < 0)
        known = access("/usr/bin/python3", X_OK) == 0 &&
                system("/usr/bin/python3 -c 'import h5py, numpy' >/dev/null 2>&1") == 0;
    return known;
}

static const char *validator(void)
{
    static char path[PATH_MAX];
    if (access("tools/validate_h5.py", R_OK) == 0) return "tools/validate_h5.py";
    /* Run from elsewhere: build/tests/<exe> -> ../../tools */
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return NULL;
    exe[n] = 0;
    for (int up = 0; up < 3; up++) {
        char *s = strrchr(exe, '/');
        if (!s) return NULL;
        *s = 0;
    }
    snprintf(path, sizeof path, "%.*s/tools/validate_h5.py", PATH_MAX - 32, exe);
    return access(path, R_OK) == 0 ? path : NULL;
}

/* Runs argv (absolute program path) and returns its exit status. */
static int run_program(char *const argv[], int quiet)
{
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        if (quiet) {
            FILE *nul = freopen("/dev/null", "w", stderr);
            (void)nul;
        }
        execv(argv[0], argv);
        _exit(127);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Runs tools/validate_h5.py on file; quiet hides the problems it lists (for
 * files broken on purpose). Returns its exit status. */
static int validate(const char *file, int require_complete, int quiet)
{
    const char *v = validator();
    ck_assert_msg(v != NULL, "tools/validate_h5.py not found");
    char *argv[6] = {"/usr/bin/python3", (char *)v, (char *)file};
    int n = 3;
    if (require_complete) argv[n++] = "--complete";
    argv[n++] = "--quiet"; /* problems still go to stderr, unless quiet */
    argv[n] = NULL;
    return run_program(argv, quiet);
}

/* ------------------------------------------------------------------ tests */

START_TEST(test_layout_and_values)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "run.h5");
    make_layout(path);
    avi_h5_writer *w = create_ok();
    fill(w, 0, 3, 0, 2);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    ck_assert_uint_eq(avi_h5_row_count(w), 3);
    ck_assert_uint_eq(avi_h5_frame_count(w), 2);
    avi_error err;
    ck_assert_int_eq(avi_h5_close(w, "complete", &err), 0);
    ck_assert_int_eq(err.status, AVI_OK);

    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert(f >= 0);
    /* /h5md */
    check_attr_ints(f, "/h5md", "version", 1, 1);
    check_attr_str(f, "/h5md/author", "name", "tester");
    check_attr_str(f, "/h5md/creator", "name", "avi");
    check_attr_str(f, "/h5md/creator", "version", AVI_VERSION_STRING);
    check_attr_ints(f, "/h5md/modules/units", "version", 1, 0);
    check_attr_str(f, "/h5md/modules/units", "system", "SI");

    /* /particles */
    int rank;
    hsize_t d[3];
    const char *names[2] = {"sheet", "block"};
    const size_t first[2] = {0, 4}, count[2] = {4, 5};
    for (int b = 0; b < 2; b++) {
        char p[256], q[256];
        snprintf(p, sizeof p, "/particles/%s/box", names[b]);
        hid_t box = H5Gopen2(f, p, H5P_DEFAULT);
        ck_assert(box >= 0);
        int dim = 0;
        hid_t a = H5Aopen(box, "dimension", H5P_DEFAULT);
        ck_assert(H5Aread(a, H5T_NATIVE_INT, &dim) >= 0);
        ck_assert_int_eq(dim, 3);
        H5Aclose(a);
        a = H5Aopen(box, "boundary", H5P_DEFAULT);
        hid_t t = H5Tcopy(H5T_C_S1);
        H5Tset_size(t, H5T_VARIABLE);
        H5Tset_cset(t, H5T_CSET_UTF8);
        char *bnd[3] = {0};
        ck_assert(H5Aread(a, t, bnd) >= 0);
        for (int i = 0; i < 3; i++) {
            ck_assert_str_eq(bnd[i], "none");
            H5free_memory(bnd[i]);
        }
        H5Tclose(t);
        H5Aclose(a);
        H5Gclose(box);

        snprintf(p, sizeof p, "/particles/%s/position/value", names[b]);
        ck_assert_uint_eq(dims_of(f, p, &rank, d), 2);
        ck_assert_int_eq(rank, 3);
        ck_assert_uint_eq(d[1], count[b]);
        ck_assert_uint_eq(d[2], 3);
        double x[2][5][3], v[2][5][3];
        read_doubles(f, p, &x[0][0][0]);
        check_attr_str(f, p, "unit", "m");
        check_attr_str(f, p, "units", "m");
        /* One chunk per frame. */
        hid_t ds = H5Dopen2(f, p, H5P_DEFAULT);
        hid_t dcpl = H5Dget_create_plist(ds);
        hsize_t chunk[3];
        ck_assert_int_eq(H5Pget_chunk(dcpl, 3, chunk), 3);
        ck_assert_uint_eq(chunk[0], 1);
        ck_assert_uint_eq(chunk[1], count[b]);
        ck_assert_uint_eq(chunk[2], 3);
        H5Pclose(dcpl);
        snprintf(q, sizeof q, "/particles/%s/position/time", names[b]);
        hid_t ts = H5Dopen2(f, q, H5P_DEFAULT);
        ck_assert_int_eq(H5DSis_scale(ts), 1);
        ck_assert_int_eq(H5DSis_attached(ds, ts, 0), 1);
        H5Dclose(ds);
        snprintf(p, sizeof p, "/particles/%s/velocity/value", names[b]);
        ds = H5Dopen2(f, p, H5P_DEFAULT);
        ck_assert_int_eq(H5DSis_attached(ds, ts, 0), 1);
        H5Dclose(ds);
        H5Dclose(ts);
        read_doubles(f, p, &v[0][0][0]);
        check_attr_str(f, p, "unit", "m s-1");
        /* Frames were written for all vertices and split per body. */
        double (*xs)[3] = (double (*)[3])&x[0][0][0], (*vs)[3] = (double (*)[3])&v[0][0][0];
        for (size_t k = 0; k < 2; k++) {
            double X[NV][3], V[NV][3];
            frame(k, X, V);
            for (size_t i = 0; i < count[b]; i++)
                for (int c = 0; c < 3; c++) {
                    ck_assert(xs[k * count[b] + i][c] == X[first[b] + i][c]);
                    ck_assert(vs[k * count[b] + i][c] == V[first[b] + i][c]);
                }
        }
        snprintf(p, sizeof p, "/particles/%s/position/time", names[b]);
        double t2[2];
        read_doubles(f, p, t2);
        ck_assert(t2[0] == 0.0 && t2[1] == 0.5);
        check_attr_str(f, p, "unit", "s");
        snprintf(p, sizeof p, "/particles/%s/position/step", names[b]);
        int64_t s2[2];
        read_int64s(f, p, s2);
        ck_assert(s2[0] == 0 && s2[1] == 50);
        snprintf(q, sizeof q, "/particles/%s/velocity/step", names[b]);
        same_object(f, p, q);
        snprintf(p, sizeof p, "/particles/%s/position/time", names[b]);
        snprintf(q, sizeof q, "/particles/%s/velocity/time", names[b]);
        same_object(f, p, q);
        snprintf(p, sizeof p, "/particles/%s/mass", names[b]);
        double m[5];
        ck_assert_uint_eq(dims_of(f, p, &rank, d), count[b]);
        read_doubles(f, p, m);
        for (size_t i = 0; i < count[b]; i++) ck_assert(m[i] == (b ? block_mass[i] : sheet_mass[i]));
        check_attr_str(f, p, "unit", "kg");
    }

    /* /connectivity */
    ck_assert_uint_eq(dims_of(f, "/connectivity/sheet_triangles", &rank, d), 2);
    ck_assert_uint_eq(d[1], 3);
    ck_assert_uint_eq(dims_of(f, "/connectivity/block_tetrahedra", &rank, d), 2);
    ck_assert_uint_eq(d[1], 4);
    ck_assert_uint_eq(dims_of(f, "/connectivity/block_triangles", &rank, d), 6);
    ck_assert_int_eq(H5Lexists(f, "/connectivity/sheet_tetrahedra", H5P_DEFAULT), 0);
    check_attr_str(f, "/connectivity/sheet_triangles", "particles_group", "/particles/sheet");
    check_attr_str(f, "/connectivity/block_tetrahedra", "particles_group", "/particles/block");
    {
        hid_t ds = H5Dopen2(f, "/connectivity/block_tetrahedra", H5P_DEFAULT);
        hid_t t = H5Dget_type(ds);
        ck_assert(H5Tequal(t, H5T_STD_I32LE) > 0);
        int32_t tets[2][4];
        ck_assert(H5Dread(ds, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, tets) >= 0);
        for (int i = 0; i < 2; i++)
            for (int k = 0; k < 4; k++) ck_assert_int_eq(tets[i][k], (int32_t)block_tets[i][k]);
        H5Tclose(t);
        H5Dclose(ds);
    }

    /* /observables */
    double e[3], lin[3][3], ang[3][3], dist[3], t3[3];
    int64_t ev[3], act[3], byk[3][AVI_KIND_COUNT], st[3];
    ck_assert_uint_eq(dims_of(f, "/observables/total_energy/value", &rank, d), 3);
    ck_assert_int_eq(rank, 1);
    read_doubles(f, "/observables/total_energy/value", e);
    read_doubles(f, "/observables/kinetic_energy/time", t3);
    read_int64s(f, "/observables/elastic_energy/step", st);
    read_doubles(f, "/observables/linear_momentum/value", &lin[0][0]);
    read_doubles(f, "/observables/angular_momentum/value", &ang[0][0]);
    read_doubles(f, "/observables/min_contact_distance/value", dist);
    read_int64s(f, "/observables/events/value", ev);
    read_int64s(f, "/observables/active_contact_potentials/value", act);
    read_int64s(f, "/observables/events_by_kind/value", &byk[0][0]);
    for (size_t i = 0; i < 3; i++) {
        avi_observation o = row(i);
        ck_assert(e[i] == o.total);
        ck_assert(t3[i] == o.time);
        ck_assert(st[i] == (int64_t)(7 * i));
        ck_assert(dist[i] == o.min_contact_distance);
        ck_assert(ev[i] == (int64_t)o.events_total);
        ck_assert(act[i] == (int64_t)o.active_contact_potentials);
        for (int k = 0; k < 3; k++) {
            ck_assert(lin[i][k] == o.linear_momentum[k]);
            ck_assert(ang[i][k] == o.angular_momentum[k]);
        }
        for (int k = 0; k < AVI_KIND_COUNT; k++) ck_assert(byk[i][k] == (int64_t)o.events[k]);
    }
    ck_assert(isinf(dist[0]));
    check_attr_str(f, "/observables/total_energy/value", "unit", "J");
    check_attr_str(f, "/observables/linear_momentum/value", "units", "kg m s-1");
    check_attr_str(f, "/observables/events/value", "unit", "1");
    same_object(f, "/observables/kinetic_energy/time", "/observables/events/time");
    {
        hid_t ts = H5Dopen2(f, "/observables/events_by_kind/time", H5P_DEFAULT);
        hid_t ds = H5Dopen2(f, "/observables/events_by_kind/value", H5P_DEFAULT);
        ck_assert_int_eq(H5DSis_scale(ts), 1);
        ck_assert_int_eq(H5DSis_attached(ds, ts, 0), 1);
        hid_t dcpl = H5Dget_create_plist(ds);
        hsize_t chunk[2];
        ck_assert_int_eq(H5Pget_chunk(dcpl, 2, chunk), 2);
        ck_assert_uint_eq(chunk[0], 1024);
        ck_assert_uint_eq(chunk[1], AVI_KIND_COUNT);
        ck_assert_int_eq(H5Pget_nfilters(dcpl), 0);
        H5Pclose(dcpl);
        H5Dclose(ds);
        H5Dclose(ts);
    }

    /* /parameters */
    double dtmin[AVI_KIND_COUNT];
    int64_t pc[AVI_KIND_COUNT];
    read_doubles(f, "/parameters/time_step/min", dtmin);
    read_int64s(f, "/parameters/time_step/count", pc);
    ck_assert(dtmin[AVI_KIND_TET] == 3e-5);
    ck_assert(pc[AVI_KIND_MEMBRANE] == 8);
    check_attr_str(f, "/parameters/time_step/max", "unit", "s");
    H5Fclose(f);

    char *state = read_completion(path, 1);
    ck_assert_str_eq(state, "complete");
    free(state);
    no_open_files();

    /* The sidecar exists once a frame was flushed. */
    char xmf[PATH_MAX];
    in_tmp(xmf, sizeof xmf, "run.xmf");
    ck_assert_int_eq(access(xmf, R_OK), 0);
    remove_tmpdir();
}
END_TEST

START_TEST(test_rows_across_blocks)
{
    /* More rows than one write block, no explicit flush until close. */
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "rows.h5");
    make_layout(path);
    layout.xdmf_path = "";
    size_t n = 2500;
    avi_h5_writer *w = create_ok();
    fill(w, 0, n, 0, 0);
    ck_assert_uint_eq(avi_h5_row_count(w), n);
    ck_assert_int_eq(avi_h5_close(w, "complete", NULL), 0);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    int rank;
    hsize_t d[3];
    ck_assert_uint_eq(dims_of(f, "/observables/kinetic_energy/value", &rank, d), n);
    ck_assert_uint_eq(dims_of(f, "/observables/angular_momentum/value", &rank, d), n);
    ck_assert_uint_eq(dims_of(f, "/particles/sheet/position/value", &rank, d), 0);
    double *ke = malloc(n * sizeof *ke);
    read_doubles(f, "/observables/kinetic_energy/value", ke);
    for (size_t i = 0; i < n; i++) ck_assert(ke[i] == row(i).kinetic);
    free(ke);
    H5Fclose(f);
    char xmf[PATH_MAX];
    in_tmp(xmf, sizeof xmf, "rows.xmf");
    ck_assert_int_ne(access(xmf, F_OK), 0); /* sidecar disabled */
    remove_tmpdir();
}
END_TEST

/* The size estimate (avi_h5_estimate_bytes, what the banner and
 * output.max_bytes use) against files written: within 25 % for a small
 * file, where metadata, connectivity and the part-filled row chunk are most
 * of it (the old estimate, rows and frames only, was 2-4x low), and for a
 * large one, where the frames are. */
static void check_estimate(const char *name, size_t nv, size_t rows, size_t frames)
{
    char path[PATH_MAX];
    in_tmp(path, sizeof path, name);
    make_layout(path);
    double *mass = NULL;
    uint32_t (*tris)[3] = NULL;
    avi_h5_body big;
    if (nv > NV) { /* one body: a strip of 2 (nv / 2 - 1) triangles */
        mass = malloc(nv * sizeof *mass);
        tris = malloc(nv * sizeof *tris);
        for (size_t i = 0; i < nv; i++) mass[i] = 1.0;
        size_t nt = 0;
        for (size_t i = 0; i + 3 < nv; i += 2) {
            tris[nt][0] = (uint32_t)i, tris[nt][1] = (uint32_t)i + 1, tris[nt][2] = (uint32_t)i + 2, nt++;
            tris[nt][0] = (uint32_t)i + 1, tris[nt][1] = (uint32_t)i + 3, tris[nt][2] = (uint32_t)i + 2, nt++;
        }
        big = (avi_h5_body){.name = "strip", .first_vertex = 0, .vertex_count = nv, .mass = mass,
                            .triangles = (const uint32_t (*)[3])tris, .triangle_count = nt};
        layout.bodies = &big;
        layout.body_count = 1;
        layout.vertex_count = nv;
    }
    avi_h5_writer *w = create_ok();
    for (size_t i = 0; i < rows; i++) {
        avi_observation o = row(i);
        ck_assert_int_eq(avi_h5_write_observation(w, (int64_t)i, &o), 0);
    }
    double (*x)[3] = calloc(nv, sizeof *x), (*v)[3] = calloc(nv, sizeof *v);
    for (size_t k = 0; k < frames; k++) {
        for (size_t i = 0; i < nv; i++) x[i][0] = (double)(i + k), v[i][1] = (double)k;
        ck_assert_int_eq(avi_h5_write_frame(w, (int64_t)k, (double)k, (const double (*)[3])x, (const double (*)[3])v), 0);
    }
    ck_assert_int_eq(avi_h5_close(w, "complete", NULL), 0);
    avi_h5_size_plan plan = {layout.vertex_count, layout.body_count, 0, 0,
                             strlen(layout.scene_text) + strlen(layout.resolved_text), (double)rows, (double)frames};
    for (int b = 0; b < layout.body_count; b++) {
        plan.triangle_count += layout.bodies[b].triangle_count;
        plan.tet_count += layout.bodies[b].tet_count;
    }
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    double est = avi_h5_estimate_bytes(&plan), size = (double)st.st_size;
    printf("estimate %s: %zu vertices, %zu rows, %zu frames: %.0f bytes, file %.0f (%+.1f %%)\n", name, nv, rows,
           frames, est, size, 100.0 * (est - size) / size);
    ck_assert_msg(fabs(est - size) <= 0.25 * size, "%s: estimate %.0f, file %.0f bytes", name, est, size);
    free(x);
    free(v);
    free(mass);
    free(tris);
}

START_TEST(test_size_estimate)
{
    make_tmpdir();
    check_estimate("small.h5", NV, 11, 3);
    check_estimate("strip.h5", 2000, 601, 31);
    check_estimate("large.h5", 20000, 5000, 30);
    remove_tmpdir();
    /* Rows and frames as the engine's observers make them: at k every <
     * end and at the end (6e-4 / 2e-5 is 29.999999999999996: 31 frames). */
    ck_assert(avi_h5_output_count(6e-4, 2e-5) == 31.0);
    ck_assert(avi_h5_output_count(1.0, 0.1) == 11.0);
    ck_assert(avi_h5_output_count(1.05, 0.1) == 12.0);
    ck_assert(avi_h5_output_count(2e-3, 1e-6) == 2001.0);
}
END_TEST

START_TEST(test_validator)
{
    if (!have_h5py()) {
        printf("test_validator: skipped (/usr/bin/python3 with h5py not found)\n");
        return;
    }
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "valid.h5");
    make_layout(path);
    avi_h5_writer *w = create_ok();
    fill(w, 0, 30, 0, 3);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    /* A live file validates too (everything but --complete). */
    ck_assert_int_eq(validate(path, 0, 0), 0);
    fill(w, 30, 1100, 3, 2);
    ck_assert_int_eq(avi_h5_close(w, "complete", NULL), 0);
    ck_assert_int_eq(validate(path, 1, 0), 0);

    /* The validator is not vacuous: break the file and expect failures. */
    hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(f >= 0);
    ck_assert(H5Adelete_by_name(f, "/observables/total_energy/value", "unit", H5P_DEFAULT) >= 0);
    H5Fclose(f);
    ck_assert_int_eq(validate(path, 1, 1), 1);

    in_tmp(path, sizeof path, "running.h5");
    make_layout(path);
    w = create_ok();
    fill(w, 0, 2, 0, 1);
    ck_assert_int_eq(avi_h5_close(w, "interrupted", NULL), 0);
    ck_assert_int_eq(validate(path, 0, 1), 0);
    ck_assert_int_eq(validate(path, 1, 1), 1); /* not complete */

    f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
    ck_assert(H5Ldelete(f, "/particles/block/velocity/time", H5P_DEFAULT) >= 0);
    ck_assert(H5Lcreate_soft("/particles/block/position/time", f, "/particles/block/velocity/time", H5P_DEFAULT,
                             H5P_DEFAULT) >= 0);
    H5Fclose(f);
    ck_assert_int_eq(validate(path, 0, 1), 1); /* not a hard link */
    remove_tmpdir();
}
END_TEST

START_TEST(test_killed_run_reads_running)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "killed.h5");
    make_layout(path);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        avi_h5_writer *w = avi_h5_create(&layout, NULL);
        if (!w) _exit(3);
        fill(w, 0, 5, 0, 2);
        if (avi_h5_flush(w)) _exit(4);
        fill(w, 5, 3, 2, 0); /* after the last flush: may be lost */
        kill(getpid(), SIGKILL);
        _exit(5);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);

    char *state = read_completion(path, 0);
    ck_assert_str_eq(state, "running");
    free(state);
    hid_t f = open_read(path);
    ck_assert(f >= 0);
    int rank;
    hsize_t d[3];
    ck_assert_uint_ge(dims_of(f, "/observables/total_energy/value", &rank, d), 5);
    ck_assert_uint_eq(dims_of(f, "/particles/block/position/value", &rank, d), 2);
    double e[5];
    hid_t ds = H5Dopen2(f, "/observables/total_energy/value", H5P_DEFAULT);
    hid_t fs = H5Dget_space(ds);
    hsize_t start = 0, cnt = 5;
    H5Sselect_hyperslab(fs, H5S_SELECT_SET, &start, NULL, &cnt, NULL);
    hid_t ms = H5Screate_simple(1, &cnt, NULL);
    ck_assert(H5Dread(ds, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, e) >= 0);
    for (size_t i = 0; i < 5; i++) ck_assert(e[i] == row(i).total);
    H5Sclose(ms);
    H5Sclose(fs);
    H5Dclose(ds);
    H5Fclose(f);

    /* avi info reports the state. */
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    avi_error err;
    ck_assert_int_eq(avi_h5_info(path, out, &err), 0);
    fclose(out);
    ck_assert_msg(strstr(text, "running") != NULL, "%s", text);
    free(text);
    if (have_h5py()) ck_assert_int_eq(validate(path, 0, 0), 0);
    remove_tmpdir();
}
END_TEST

START_TEST(test_info_summary)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "info.h5");
    make_layout(path);
    avi_h5_writer *w = create_ok();
    fill(w, 0, 11, 0, 3);
    ck_assert_int_eq(avi_h5_close(w, "complete", NULL), 0);
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    avi_error err;
    ck_assert_int_eq(avi_h5_info(path, out, &err), 0);
    fclose(out);
    /* Row 10: events_total = 10 * 28 (7 kinds, 10 k each); total energy 10.01 vs E0 = 10, so the
     * drift is 1e-3; |L| grows from 5 to 10; p is constant; momentum errors
     * are relative to the frame-0 scales sum m|v| and sum m|x||v| (larger
     * than |p0|, |L0| here); the smallest contact distance is 1/10. */
    const char *want[] = {"two-bodies", "avi", "complete", "280", "sheet (4 vertices, 2 triangles)",
                          "block (5 vertices, 6 triangles, 2 tetrahedra)", "1.000e-03",
                          "p: max |p-p0| / 4.474e+02 kg m s-1 = 0.000e+00",
                          "L: max |L-L0| / 2.368e+04 kg m2 s-1 = 2.112e-04", "1.000000e-01 m", "11 rows, 3 frames", "tet 40"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++)
        ck_assert_msg(strstr(text, want[i]) != NULL, "'%s' not in:\n%s", want[i], text);
    free(text);

    /* Not an avi file / not HDF5 / missing. */
    out = fopen("/dev/null", "w");
    in_tmp(path, sizeof path, "plain.h5");
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    H5Fclose(f);
    ck_assert_int_ne(avi_h5_info(path, out, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, "not an avi output file"));
    ck_assert_ptr_nonnull(strstr(err.message, path));
    in_tmp(path, sizeof path, "missing.h5");
    ck_assert_int_ne(avi_h5_info(path, out, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, path));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    fclose(out);
    remove_tmpdir();
}
END_TEST

START_TEST(test_completion_states)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "failed.h5");
    make_layout(path);
    avi_h5_writer *w = create_ok();
    fill(w, 0, 2, 0, 1);
    /* Far longer than the 64 bytes of the running state, with UTF-8. */
    char why[2000];
    memset(why, 'x', sizeof why);
    memcpy(why, "failed: \xc2\xb5m ", 12);
    why[sizeof why - 1] = 0;
    ck_assert_int_eq(avi_h5_close(w, why, NULL), 0);
    char *state = read_completion(path, 1);
    ck_assert_str_eq(state, why);
    free(state);

    w = create_ok(); /* truncates the file */
    ck_assert_int_eq(avi_h5_close(w, "interrupted", NULL), 0);
    state = read_completion(path, 1);
    ck_assert_str_eq(state, "interrupted");
    free(state);
    no_open_files();
    remove_tmpdir();
}
END_TEST

START_TEST(test_unwritable_paths)
{
    make_tmpdir();
    char path[PATH_MAX];
    const char *bad[2] = {"/proc/forbidden/x.h5", NULL};
    in_tmp(path, sizeof path, "no/such/dir/x.h5");
    bad[1] = path;
    for (int i = 0; i < 2; i++) {
        make_layout(bad[i]);
        avi_error err;
        memset(&err, 0, sizeof err);
        avi_h5_writer *w = avi_h5_create(&layout, &err);
        ck_assert_ptr_null(w);
        ck_assert_int_eq(err.status, AVI_ERR_RUN);
        ck_assert_msg(strstr(err.message, bad[i]) != NULL, "path not in '%s'", err.message);
        ck_assert_msg(strstr(err.message, "creating the file") != NULL, "operation not in '%s'", err.message);
    }
    ck_assert_int_ne(avi_h5_close(NULL, "complete", NULL), 0);
    remove_tmpdir();
}
END_TEST

START_TEST(test_bad_layouts)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "bad.h5");
    avi_error err;
    make_layout(path);
    bodies[1].name = "sheet";
    ck_assert_ptr_null(avi_h5_create(&layout, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "sheet"));

    make_layout(path);
    static const uint32_t out_of_range[1][3] = {{0, 1, 4}};
    bodies[0].triangles = out_of_range;
    bodies[0].triangle_count = 1;
    ck_assert_ptr_null(avi_h5_create(&layout, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);

    make_layout(path);
    bodies[1].vertex_count = 6; /* past the model's vertices */
    ck_assert_ptr_null(avi_h5_create(&layout, &err));
    make_layout(path);
    bodies[0].name = "a/b";
    ck_assert_ptr_null(avi_h5_create(&layout, &err));
    ck_assert_ptr_null(avi_h5_create(NULL, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    remove_tmpdir();
}
END_TEST

/* The disk-full scenario runs in a fresh process (this program re-executed
 * with AVI_H5_DISK_FULL set), so that it also ends through exit() with
 * HDF5's library state as a real program has it. A file-size limit stands in
 * for a full disk: writes fail with EFBIG. Prints the writer's error message;
 * exit status 0 when every expectation held. AVI_H5_DISK_FULL_MODE picks who
 * touches HDF5 first and where the writes run:
 *   "writer"      avi_h5_create is the process's first HDF5 call;
 *   "checkpoint"  a checkpoint read comes first (as in `avi resume`): HDF5's
 *                 at-exit shutdown must still be off, or exit() crashes in it
 *                 on the file whose close failed;
 *   "thread"      the writes and the close run on a second thread (as the
 *                 output stream's): HDF5's per-thread error stack must not
 *                 print there either. */
static const char *disk_full_path;

typedef struct {
    avi_h5_writer *w;
    avi_error err;
    int code;
} disk_full_run;

/* Writes until the limit is hit and closes; run->code 0 when all held. */
static void *disk_full_writes(void *arg)
{
    disk_full_run *run = arg;
    enum { N = 4000 };
    static double x[N][3], v[N][3];
    avi_h5_writer *w = run->w;
    int failed = 0;
    for (int k = 0; k < 200 && !failed; k++) {
        avi_observation o = row((size_t)k);
        failed = avi_h5_write_frame(w, k, k, (const double (*)[3])x, (const double (*)[3])v) ||
                 avi_h5_write_observation(w, k, &o) || avi_h5_flush(w);
    }
    run->code = failed ? 0 : 11;
    if (failed) snprintf(run->err.message, sizeof run->err.message, "%s", avi_h5_error(w)->message);
    /* Later calls fail at once; close reports the first error. */
    if (failed && avi_h5_flush(w) == 0) run->code = 12;
    avi_error cerr;
    if (avi_h5_close(w, "failed: disk full", &cerr) == 0) run->code = 13;
    else if (strcmp(cerr.message, run->err.message)) run->code = 14;
    return NULL;
}

__attribute__((constructor)) static void disk_full_scenario(void)
{
    disk_full_path = getenv("AVI_H5_DISK_FULL");
    const char *mode = getenv("AVI_H5_DISK_FULL_MODE");
    if (!disk_full_path || !mode) return;
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {256 * 1024, 256 * 1024};
    setrlimit(RLIMIT_FSIZE, &rl);
    if (!strcmp(mode, "checkpoint")) {
        avi_checkpoint_meta meta;
        avi_error err;
        if (avi_checkpoint_read_info("/nonexistent/avi.ckpt", &meta, &err) == AVI_OK) exit(16);
    }
    enum { N = 4000 };
    static double mass[N];
    for (int i = 0; i < N; i++) mass[i] = 1.0;
    avi_h5_body b = {.name = "big", .vertex_count = N, .mass = mass};
    avi_h5_layout L = {.path = disk_full_path, .bodies = &b, .body_count = 1, .vertex_count = N, .xdmf_path = ""};
    disk_full_run run = {NULL, {0}, 10};
    run.w = avi_h5_create(&L, &run.err);
    if (run.w && !strcmp(mode, "thread")) {
        pthread_t t;
        if (pthread_create(&t, NULL, disk_full_writes, &run) || pthread_join(t, NULL)) exit(17);
    } else if (run.w) {
        disk_full_writes(&run);
    }
    printf("%s\n", run.err.message);
    fflush(stdout);
    exit(run.code);
}

/* Runs the scenario in `mode`; returns its output (stdout and stderr). */
static void run_disk_full(const char *mode, char *msg, size_t size)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "full.h5");
    /* readlink rather than exec of /proc/self/exe: under valgrind only the
     * former names this program. */
    char self[PATH_MAX];
    ssize_t len = readlink("/proc/self/exe", self, sizeof self - 1);
    ck_assert(len > 0);
    self[len] = 0;
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(fds[1], 1);
        dup2(fds[1], 2);
        close(fds[0]);
        close(fds[1]);
        setenv("AVI_H5_DISK_FULL", path, 1);
        setenv("AVI_H5_DISK_FULL_MODE", mode, 1);
        unsetenv("AVI_HDF5_ERRORS");
        execl(self, self, (char *)NULL);
        _exit(127);
    }
    close(fds[1]);
    memset(msg, 0, size);
    size_t got = 0;
    ssize_t n;
    while (got < size - 1 && (n = read(fds[0], msg + got, size - 1 - got)) > 0) got += (size_t)n;
    char rest[4096];
    while (read(fds[0], rest, sizeof rest) > 0) continue;
    close(fds[0]);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert_msg(WIFEXITED(status), "%s: writer crashed (signal %d): %s", mode,
                  WIFSIGNALED(status) ? WTERMSIG(status) : 0, msg);
    ck_assert_msg(WEXITSTATUS(status) == 0, "%s: exit %d: %s", mode, WEXITSTATUS(status), msg);
    ck_assert_msg(strstr(msg, path) != NULL, "path not in '%s'", msg);
    ck_assert_msg(strstr(msg, "failed") != NULL, "operation not in '%s'", msg);
    ck_assert_msg(strstr(msg, "File too large") != NULL, "cause not in '%s'", msg);
    ck_assert_msg(strstr(msg, "HDF5-DIAG") == NULL, "%s: HDF5 printed its error stack: %s", mode, msg);
    remove_tmpdir();
}

START_TEST(test_disk_full)
{
    char msg[2000];
    run_disk_full("writer", msg, sizeof msg);
}
END_TEST

/* A library user whose first HDF5 call is not the writer's gets the same
 * initialisation: no crash at exit after a failed close, no error stack. */
START_TEST(test_disk_full_after_checkpoint_read)
{
    char msg[2000];
    run_disk_full("checkpoint", msg, sizeof msg);
}
END_TEST

START_TEST(test_disk_full_on_a_thread)
{
    char msg[2000];
    run_disk_full("thread", msg, sizeof msg);
}
END_TEST

START_TEST(test_removed_underneath)
{
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "gone.h5");
    make_layout(path);
    layout.xdmf_path = "";
    avi_h5_writer *w = create_ok();
    fill(w, 0, 2, 0, 1);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    ck_assert_int_eq(unlink(path), 0);
    fill(w, 2, 2, 1, 1);
    ck_assert_int_ne(avi_h5_flush(w), 0);
    ck_assert_ptr_nonnull(strstr(avi_h5_error(w)->message, path));
    ck_assert_ptr_nonnull(strstr(avi_h5_error(w)->message, "removed"));
    avi_observation o = row(9);
    ck_assert_int_ne(avi_h5_write_observation(w, 9, &o), 0);
    avi_error err;
    ck_assert_int_ne(avi_h5_close(w, "failed: file removed", &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, "removed"));
    remove_tmpdir();
}
END_TEST

/* A reader in another process, opened once with swmr=True, sees the row and
 * frame counts grow between two flushes after refresh(). */
START_TEST(test_swmr_reader)
{
    if (!have_h5py()) {
        printf("test_swmr_reader: skipped (/usr/bin/python3 with h5py not found)\n");
        return;
    }
    make_tmpdir();
    char path[PATH_MAX];
    in_tmp(path, sizeof path, "live.h5");
    make_layout(path);
    avi_h5_writer *w = create_ok();
    fill(w, 0, 5, 0, 1);
    ck_assert_int_eq(avi_h5_flush(w), 0);

    static const char script[] =
        "import sys, h5py\n"
        "f = h5py.File(sys.argv[1], 'r', swmr=True)\n"
        "e = f['/observables/total_energy/value']\n"
        "x = f['/particles/block/position/value']\n"
        "for i in range(2):\n"
        "    e.refresh(); x.refresh()\n"
        "    print(e.shape[0], x.shape[0], e[-1], x[-1, 0, 0], flush=True)\n"
        "    if i == 0: sys.stdin.readline()\n";
    int to_child[2], from_child[2];
    ck_assert_int_eq(pipe(to_child), 0);
    ck_assert_int_eq(pipe(from_child), 0);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        dup2(to_child[0], 0);
        dup2(from_child[1], 1);
        close(to_child[0]);
        close(to_child[1]);
        close(from_child[0]);
        close(from_child[1]);
        execl("/usr/bin/python3", "/usr/bin/python3", "-c", script, path, (char *)NULL);
        _exit(127);
    }
    close(to_child[0]);
    close(from_child[1]);
    FILE *in = fdopen(from_child[0], "r");
    long rows = -1, frames = -1;
    double e_last = 0, x_last = 0;
    ck_assert_int_eq(fscanf(in, "%ld %ld %lf %lf", &rows, &frames, &e_last, &x_last), 4);
    ck_assert_int_eq(rows, 5);
    ck_assert_int_eq(frames, 1);
    ck_assert(e_last == row(4).total);

    fill(w, 5, 7, 1, 2);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    ck_assert_int_eq(write(to_child[1], "\n", 1), 1);
    ck_assert_int_eq(fscanf(in, "%ld %ld %lf %lf", &rows, &frames, &e_last, &x_last), 4);
    ck_assert_int_eq(rows, 12);
    ck_assert_int_eq(frames, 3);
    ck_assert(e_last == row(11).total);
    double X[NV][3], V[NV][3];
    frame(2, X, V);
    ck_assert(x_last == X[4][0]);
    fclose(in);
    close(to_child[1]);
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ck_assert_int_eq(avi_h5_close(w, "complete", NULL), 0);
    remove_tmpdir();
}
END_TEST

/* tools/plot_energy.py reads a file that is still being written. */
START_TEST(test_plot_live_file)
{
    if (!have_h5py() || system("/usr/bin/python3 -c 'import matplotlib' >/dev/null 2>&1") != 0) {
        printf("test_plot_live_file: skipped (/usr/bin/python3 with h5py and matplotlib not found)\n");
        return;
    }
    const char *v = validator();
    ck_assert_ptr_nonnull(v);
    char script[PATH_MAX];
    snprintf(script, sizeof script, "%.*s/plot_energy.py", (int)(strrchr(v, '/') - v), v);
    make_tmpdir();
    char path[PATH_MAX], png[PATH_MAX];
    in_tmp(path, sizeof path, "plot.h5");
    in_tmp(png, sizeof png, "plot.png");
    make_layout(path);
    avi_h5_writer *w = create_ok();
    fill(w, 0, 40, 0, 2);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    char *argv[] = {"/usr/bin/python3", script, path, "-o", png, NULL};
    ck_assert_int_eq(run_program(argv, 0), 0);
    struct stat st;
    ck_assert_int_eq(stat(png, &st), 0);
    ck_assert_int_gt(st.st_size, 1000);
    ck_assert_int_eq(avi_h5_close(w, "complete", NULL), 0);
    remove_tmpdir();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("h5_writer");
    TCase *tc = tcase_create("h5_writer");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_layout_and_values);
    tcase_add_test(tc, test_rows_across_blocks);
    tcase_add_test(tc, test_size_estimate);
    tcase_add_test(tc, test_validator);
    tcase_add_test(tc, test_killed_run_reads_running);
    tcase_add_test(tc, test_info_summary);
    tcase_add_test(tc, test_completion_states);
    tcase_add_test(tc, test_unwritable_paths);
    tcase_add_test(tc, test_bad_layouts);
    tcase_add_test(tc, test_disk_full);
    tcase_add_test(tc, test_disk_full_after_checkpoint_read);
    tcase_add_test(tc, test_disk_full_on_a_thread);
    tcase_add_test(tc, test_removed_underneath);
    tcase_add_test(tc, test_swmr_reader);
    tcase_add_test(tc, test_plot_live_file);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
