/* check_penetration (tests/tools): exit status and reports on small run
 * files written here with the HDF5 C API in the avi output layout. The
 * checker is run as a program, build/tests/check_penetration (or
 * $AVI_CHECK_PENETRATION); the tests pass with a message when it is absent. */
#include "check_main.h"

#include <dirent.h>
#include <hdf5.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------- fixtures */

static char tmpdir[64];
static char out[1 << 16], err[1 << 12];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/avi_cpen_XXXXXX");
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

/* A path in the test directory; four at a time stay valid. */
static const char *in_tmp(const char *name)
{
    static char p[4][PATH_MAX];
    static int next;
    char *s = p[next++ % 4];
    snprintf(s, PATH_MAX, "%s/%s", tmpdir, name);
    return s;
}

static const char *checker(void)
{
    const char *c = getenv("AVI_CHECK_PENETRATION");
    return c && *c ? c : "build/tests/check_penetration";
}

/* Each test starts with this: false (and a note) when the checker is not built. */
static int have_checker(void)
{
    if (access(checker(), X_OK) == 0) return 1;
    fprintf(stderr, "skipped: %s is not built (make %s)\n", checker(), checker());
    return 0;
}

static void read_into(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    size_t k = f ? fread(buf, 1, n - 1, f) : 0;
    buf[k] = 0;
    if (f) fclose(f);
}

/* Runs the checker with the given arguments (NULL-terminated); its output
 * lands in out and err. Returns the exit status. */
static int run_checker(const char *arg, ...)
{
    const char *argv[16] = {checker()};
    int n = 1;
    va_list ap;
    va_start(ap, arg);
    for (const char *a = arg; a && n < 15; a = va_arg(ap, const char *)) argv[n++] = a;
    va_end(ap);
    argv[n] = NULL;
    char op[PATH_MAX], ep[PATH_MAX];
    snprintf(op, sizeof op, "%s/stdout.txt", tmpdir);
    snprintf(ep, sizeof ep, "%s/stderr.txt", tmpdir);
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if (!freopen(op, "w", stdout) || !freopen(ep, "w", stderr)) _exit(126);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    read_into(op, out, sizeof out);
    read_into(ep, err, sizeof err);
    ck_assert_msg(WIFEXITED(st), "checker died: %s", err);
    return WEXITSTATUS(st);
}

/* ----------------------------------------------------- writing run files */

typedef struct {
    const char *name;
    int n;              /* vertices */
    const double *x;    /* [frames][n][3] */
    int ntri;           /* -1: no connectivity dataset (a particle body) */
    const int32_t *tri; /* [ntri][3], body-local */
} tbody;

enum { CLOSE, KEEP_OPEN };

/* Writes the avi layout: /particles/<b>/position/{time,value} (chunked,
 * extendible, one chunk per frame) and /connectivity/<b>_triangles; times
 * are 0.1 k. With KEEP_OPEN the file is left open in SWMR-write mode, as a
 * live run's, and returned. */
static hid_t write_run(const char *path, int frames, const tbody *b, int nb, int mode)
{
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    ck_assert_int_ge(H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST), 0);
    hid_t f = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    H5Pclose(fapl);
    ck_assert_int_ge(f, 0);
    hid_t pg = H5Gcreate2(f, "particles", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t cg = H5Gcreate2(f, "connectivity", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    ck_assert(pg >= 0 && cg >= 0);
    double *time = calloc((size_t)frames + 1, sizeof *time);
    for (int k = 0; k < frames; k++) time[k] = 0.1 * k;
    for (int i = 0; i < nb; i++) {
        hid_t bg = H5Gcreate2(pg, b[i].name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        hid_t pos = H5Gcreate2(bg, "position", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        ck_assert(bg >= 0 && pos >= 0);
        hsize_t td[1] = {(hsize_t)frames}, tmax[1] = {H5S_UNLIMITED}, tchunk[1] = {64};
        hsize_t vd[3] = {(hsize_t)frames, (hsize_t)b[i].n, 3}, vmax[3] = {H5S_UNLIMITED, (hsize_t)b[i].n, 3};
        hsize_t vchunk[3] = {1, (hsize_t)(b[i].n ? b[i].n : 1), 3};
        hid_t ts = H5Screate_simple(1, td, tmax), vs = H5Screate_simple(3, vd, vmax);
        hid_t tp = H5Pcreate(H5P_DATASET_CREATE), vp = H5Pcreate(H5P_DATASET_CREATE);
        H5Pset_chunk(tp, 1, tchunk);
        H5Pset_chunk(vp, 3, vchunk);
        hid_t t = H5Dcreate2(pos, "time", H5T_IEEE_F64LE, ts, H5P_DEFAULT, tp, H5P_DEFAULT);
        hid_t v = H5Dcreate2(pos, "value", H5T_IEEE_F64LE, vs, H5P_DEFAULT, vp, H5P_DEFAULT);
        ck_assert(t >= 0 && v >= 0);
        if (frames > 0) {
            ck_assert_int_ge(H5Dwrite(t, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, time), 0);
            if (b[i].n > 0) ck_assert_int_ge(H5Dwrite(v, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, b[i].x), 0);
        }
        H5Dclose(t);
        H5Dclose(v);
        H5Pclose(tp);
        H5Pclose(vp);
        H5Sclose(ts);
        H5Sclose(vs);
        H5Gclose(pos);
        H5Gclose(bg);
        if (b[i].ntri >= 0) {
            char name[256];
            snprintf(name, sizeof name, "%s_triangles", b[i].name);
            hsize_t cd[2] = {(hsize_t)b[i].ntri, 3};
            hid_t cs = H5Screate_simple(2, cd, NULL);
            hid_t c = H5Dcreate2(cg, name, H5T_STD_I32LE, cs, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
            ck_assert_int_ge(c, 0);
            if (b[i].ntri > 0)
                ck_assert_int_ge(H5Dwrite(c, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, b[i].tri), 0);
            H5Dclose(c);
            H5Sclose(cs);
        }
    }
    free(time);
    H5Gclose(pg);
    H5Gclose(cg);
    if (mode == KEEP_OPEN) {
        ck_assert_int_ge(H5Fstart_swmr_write(f), 0);
        ck_assert_int_ge(H5Fflush(f, H5F_SCOPE_GLOBAL), 0);
        return f;
    }
    ck_assert_int_ge(H5Fclose(f), 0);
    return -1;
}

/* ---------------------------------------------------------------- shapes */

static const int32_t tet_tris[4][3] = {{0, 2, 1}, {0, 1, 3}, {1, 2, 3}, {0, 3, 2}};
static const double unit_tet[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};

static void shifted(double dst[][3], const double src[][3], int n, double dx, double dy, double dz)
{
    for (int i = 0; i < n; i++) {
        dst[i][0] = src[i][0] + dx;
        dst[i][1] = src[i][1] + dy;
        dst[i][2] = src[i][2] + dz;
    }
}

/* Two tetrahedra "a" (x_a) and "b" (x_b), one frame; the checker's status. */
static int two_tets(const double a[4][3], const double b[4][3], const char *extra)
{
    tbody t[2] = {{"a", 4, a[0], 4, tet_tris[0]}, {"b", 4, b[0], 4, tet_tris[0]}};
    const char *p = in_tmp("tets.h5");
    write_run(p, 1, t, 2, CLOSE);
    return run_checker(p, extra, NULL);
}

/* A UV sphere: poles and nlat - 1 rings of nlon vertices; 2 nlon (nlat - 1)
 * triangles. x holds (nlat - 1) nlon + 2 vertices. */
static int uv_sphere(int nlat, int nlon, double r, const double *c, double (*x)[3], int32_t (*t)[3])
{
    int n = 0, m = 0;
    x[n][0] = c[0], x[n][1] = c[1], x[n][2] = c[2] + r, n++;
    for (int i = 1; i < nlat; i++)
        for (int j = 0; j < nlon; j++, n++) {
            double th = M_PI * i / nlat, ph = 2 * M_PI * j / nlon;
            x[n][0] = c[0] + r * sin(th) * cos(ph);
            x[n][1] = c[1] + r * sin(th) * sin(ph);
            x[n][2] = c[2] + r * cos(th);
        }
    x[n][0] = c[0], x[n][1] = c[1], x[n][2] = c[2] - r, n++;
    int south = n - 1;
    for (int j = 0; j < nlon; j++) {
        int j1 = (j + 1) % nlon;
        t[m][0] = 0, t[m][1] = 1 + j, t[m][2] = 1 + j1, m++;
        for (int i = 1; i < nlat - 1; i++) {
            int a = 1 + (i - 1) * nlon, b = 1 + i * nlon;
            t[m][0] = a + j, t[m][1] = b + j, t[m][2] = b + j1, m++;
            t[m][0] = a + j, t[m][1] = b + j1, t[m][2] = a + j1, m++;
        }
        int last = 1 + (nlat - 2) * nlon;
        t[m][0] = last + j, t[m][1] = south, t[m][2] = last + j1, m++;
    }
    return m;
}

static int count_lines(const char *s, const char *prefix)
{
    int n = 0;
    size_t len = strlen(prefix);
    for (const char *l = s; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
        if (strncmp(l, prefix, len) == 0) n++;
    return n;
}

static double min_distance_value(void)
{
    const char *m = strstr(out, "min distance ");
    ck_assert_msg(m != NULL, "no min distance line in: %s", out);
    double d = -1;
    ck_assert_int_eq(sscanf(m, "min distance %lf", &d), 1);
    return d;
}

/* ----------------------------------------------------------- tetrahedra */

START_TEST(tets_apart)
{
    if (!have_checker()) return;
    make_tmpdir();
    double b[4][3];
    shifted(b, unit_tet, 4, 3, 0, 0);
    ck_assert_int_eq(two_tets(unit_tet, b, NULL), 0);
    ck_assert_msg(strstr(out, "frames 1, edges 12, triangles 8, penetrations 0\n"), "output: %s", out);
    remove_tmpdir();
}
END_TEST

START_TEST(tets_touching_at_a_vertex)
{
    if (!have_checker()) return;
    make_tmpdir();
    /* Mirrored through the origin: the two share only the point (0,0,0). */
    double b[4][3];
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 3; c++) b[i][c] = -unit_tet[i][c];
    ck_assert_int_eq(two_tets(unit_tet, b, NULL), 0);
    ck_assert_msg(strstr(out, "penetrations 0"), "output: %s", out);
    /* A vertex resting on the interior of a face. */
    const double c[4][3] = {{0.25, 0.25, 0}, {-0.5, -0.5, -1}, {1, -0.5, -1}, {0, 1, -1}};
    ck_assert_int_eq(two_tets(unit_tet, c, NULL), 0);
    /* An edge lying in a face's plane, touching the face only at its boundary. */
    const double d[4][3] = {{1, 0, 0}, {2, -1, 0}, {2, 0, -1}, {2, 1, 0}};
    ck_assert_int_eq(two_tets(unit_tet, d, NULL), 0);
    remove_tmpdir();
}
END_TEST

START_TEST(tets_crossing)
{
    if (!have_checker()) return;
    make_tmpdir();
    double b[4][3];
    shifted(b, unit_tet, 4, 0.2, 0.2, 0.2);
    ck_assert_int_eq(two_tets(unit_tet, b, NULL), 1);
    ck_assert_msg(strstr(out, " crosses ") && !strstr(out, "penetrations 0"), "output: %s", out);
    ck_assert_int_eq(count_lines(out, "frame 0 time 0: "), count_lines(out, "frame "));
    remove_tmpdir();
}
END_TEST

/* b's apex pokes up through a's bottom face (z = 0) in frame 3 only. */
START_TEST(edge_pierces_face_in_frame_3)
{
    if (!have_checker()) return;
    make_tmpdir();
    enum { F = 5 };
    const double apex_z[F] = {-0.5, -0.4, -0.3, 0.3, -0.2};
    double a[F][4][3], b[F][4][3];
    for (int k = 0; k < F; k++) {
        shifted(a[k], unit_tet, 4, 0, 0, 0);
        const double base[4][3] = {{0.25, 0.25, 0}, {-0.5, -0.5, -2}, {1, -0.5, -2}, {0, 1, -2}};
        shifted(b[k], base, 4, 0, 0, apex_z[k]);
    }
    tbody t[2] = {{"a", 4, a[0][0], 4, tet_tris[0]}, {"b", 4, b[0][0], 4, tet_tris[0]}};
    const char *p = in_tmp("pierce.h5");
    write_run(p, F, t, 2, CLOSE);
    ck_assert_int_eq(run_checker(p, NULL), 1);
    /* The three edges from the apex cross a's face 0 at hand-computed points. */
    ck_assert_msg(strstr(out, "frames 5, edges 12, triangles 8, penetrations 3\n"), "output: %s", out);
    ck_assert_int_eq(count_lines(out, "frame 3 time 0.3: b edge 0-"), 3);
    ck_assert_int_eq(count_lines(out, "frame "), 3);
    ck_assert_msg(strstr(out, "b edge 0-1 crosses a triangle 0 at (0.1375, 0.1375, "), "output: %s", out);
    ck_assert_msg(strstr(out, "b edge 0-2 crosses a triangle 0 at (0.3625, 0.1375, "), "output: %s", out);
    remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------------ sheets */

/* A strip: quad A in z = 0, quad B rising at x = 2, quad C folding back
 * down through A (its far end narrower than A, so it crosses A's interior). */
static const double folded_x[8][3] = {{0, 0, 0}, {2, 0, 0}, {2, 1, 0},        {0, 1, 0},
                                      {2, 0, 1}, {2, 1, 1}, {1, 0.25, -1}, {1, 0.75, -1}};
static const int32_t folded_t[6][3] = {{0, 1, 2}, {0, 2, 3}, {1, 4, 5}, {1, 5, 2}, {4, 6, 7}, {4, 7, 5}};

START_TEST(folded_sheet_self_intersection)
{
    if (!have_checker()) return;
    make_tmpdir();
    tbody t = {"sheet", 8, folded_x[0], 6, folded_t[0]};
    const char *p = in_tmp("folded.h5");
    write_run(p, 1, &t, 1, CLOSE);
    ck_assert_int_eq(run_checker(p, NULL), 1);
    ck_assert_msg(strstr(out, "sheet edge 4-6 crosses sheet triangle 0 at (1.5, 0.125, "), "output: %s", out);
    ck_assert_msg(strstr(out, "sheet edge 0-2 crosses sheet triangle 5 at (1.5, 0.75, "), "output: %s", out);
    /* Without the fold back (quads A and B only) nothing crosses. */
    t.ntri = 4;
    write_run(p, 1, &t, 1, CLOSE);
    ck_assert_int_eq(run_checker(p, NULL), 0);
    remove_tmpdir();
}
END_TEST

/* A flat 4 x 4 grid of quads: every non-adjacent pair is coplanar and apart. */
START_TEST(flat_sheet_is_clean)
{
    if (!have_checker()) return;
    make_tmpdir();
    enum { N = 5 };
    double x[N * N][3];
    int32_t t[2 * (N - 1) * (N - 1)][3];
    int m = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++) {
            x[i * N + j][0] = 0.1 * j;
            x[i * N + j][1] = 0.1 * i;
            x[i * N + j][2] = 0.3;
        }
    for (int i = 0; i + 1 < N; i++)
        for (int j = 0; j + 1 < N; j++) {
            int a = i * N + j;
            t[m][0] = a, t[m][1] = a + 1, t[m][2] = a + N + 1, m++;
            t[m][0] = a, t[m][1] = a + N + 1, t[m][2] = a + N, m++;
        }
    tbody b = {"sheet", N * N, x[0], m, t[0]};
    const char *p = in_tmp("flat.h5");
    write_run(p, 1, &b, 1, CLOSE);
    ck_assert_int_eq(run_checker(p, "--min-distance", NULL), 0);
    ck_assert_msg(strstr(out, "triangles 32, penetrations 0"), "output: %s", out);
    remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------ coplanar triangles */

static int two_triangles(const double p[3][3], const double q[3][3])
{
    static const int32_t one[1][3] = {{0, 1, 2}};
    tbody t[2] = {{"p", 3, p[0], 1, one[0]}, {"q", 3, q[0], 1, one[0]}};
    const char *path = in_tmp("coplanar.h5");
    write_run(path, 1, t, 2, CLOSE);
    return run_checker(path, NULL);
}

START_TEST(coplanar_triangles)
{
    if (!have_checker()) return;
    make_tmpdir();
    const double p[3][3] = {{0, 0, 0}, {2, 0, 0}, {0, 2, 0}};
    /* Overlapping in an area: penetration. */
    const double over[3][3] = {{0.5, 0.5, 0}, {2.5, 0.5, 0}, {0.5, 2.5, 0}};
    ck_assert_int_eq(two_triangles(p, over), 1);
    ck_assert_msg(strstr(out, " in its plane\n"), "output: %s", out);
    /* Strictly inside: penetration (its edges run through the interior). */
    const double inside[3][3] = {{0.2, 0.2, 0}, {0.8, 0.2, 0}, {0.2, 0.8, 0}};
    ck_assert_int_eq(two_triangles(p, inside), 1);
    /* Side by side along a common line: contact only. */
    const double beside[3][3] = {{2, 2, 0}, {3, -1, 0}, {-1, 3, 0}};
    ck_assert_int_eq(two_triangles(p, beside), 0);
    /* Touching at a vertex: contact only. */
    const double corner[3][3] = {{2, 0, 0}, {3, 0, 0}, {3, 1, 0}};
    ck_assert_int_eq(two_triangles(p, corner), 0);
    /* Apart in the same plane. */
    const double apart[3][3] = {{1.1, 1.1, 0}, {3, 1.1, 0}, {1.1, 3, 0}};
    ck_assert_int_eq(two_triangles(p, apart), 0);
    /* The same in the tilted plane x = y / 2 + z / 4 (exact in binary),
     * which projects best along x. */
    double tp[3][3], tq[3][3];
    for (int i = 0; i < 3; i++) {
        tp[i][0] = 0.5 * p[i][0] + 0.25 * p[i][1], tp[i][1] = p[i][0], tp[i][2] = p[i][1];
        tq[i][0] = 0.5 * over[i][0] + 0.25 * over[i][1], tq[i][1] = over[i][0], tq[i][2] = over[i][1];
    }
    ck_assert_int_eq(two_triangles(tp, tq), 1);
    remove_tmpdir();
}
END_TEST

/* --------------------------------------------------------- min distance */

/* a's top edge runs along x at z = 0, b's bottom edge along y at z = d;
 * nothing else is as close, so the minimum is d, edge to edge. */
START_TEST(min_distance_edge_edge)
{
    if (!have_checker()) return;
    make_tmpdir();
    enum { F = 3 };
    const double d[F] = {0.5, 0.25, 0.4};
    const double a0[4][3] = {{-1, 0, 0}, {1, 0, 0}, {0, -1, -1}, {0, 1, -1}};
    const double b0[4][3] = {{0, -1, 0}, {0, 1, 0}, {-1, 0, 1}, {1, 0, 1}};
    double a[F][4][3], b[F][4][3];
    for (int k = 0; k < F; k++) {
        shifted(a[k], a0, 4, 0, 0, 0);
        shifted(b[k], b0, 4, 0, 0, d[k]);
    }
    static const int32_t tris[4][3] = {{0, 1, 2}, {0, 1, 3}, {0, 2, 3}, {1, 2, 3}};
    tbody t[2] = {{"a", 4, a[0][0], 4, tris[0]}, {"b", 4, b[0][0], 4, tris[0]}};
    const char *p = in_tmp("ee.h5");
    write_run(p, F, t, 2, CLOSE);
    ck_assert_int_eq(run_checker(p, "--min-distance", "--radius", "0.6", NULL), 0);
    ck_assert_double_eq_tol(min_distance_value(), 0.25, 1e-12);
    ck_assert_msg(strstr(out, " at frame 1 (time 0.1): a edge 0-1 to b edge 0-1\n"), "output: %s", out);
    /* The default radius, 0.01 of the first frame's diagonal (about 0.038),
     * finds nothing that close and says so. */
    ck_assert_int_eq(run_checker(p, "--min-distance", NULL), 0);
    double r = 0.01 * sqrt(2 * 2 + 2 * 2 + 2.5 * 2.5);
    char want[128];
    snprintf(want, sizeof want, "min distance > %.9g (no pair within the search radius)\n", r);
    ck_assert_msg(strstr(out, want), "want '%s' in: %s", want, out);
    remove_tmpdir();
}
END_TEST

/* b's apex 0.3 below the middle of a's face z = 0. */
START_TEST(min_distance_vertex_triangle)
{
    if (!have_checker()) return;
    make_tmpdir();
    const double b[4][3] = {{0.2, 0.2, -0.3}, {-0.3, -0.3, -1.3}, {0.7, -0.3, -1.3}, {0.2, 0.7, -1.3}};
    ck_assert_int_eq(two_tets(unit_tet, b, "--min-distance"), 0);
    ck_assert_msg(strstr(out, "min distance > "), "output: %s", out);
    tbody t[2] = {{"a", 4, unit_tet[0], 4, tet_tris[0]}, {"b", 4, b[0], 4, tet_tris[0]}};
    const char *p = in_tmp("vt.h5");
    write_run(p, 1, t, 2, CLOSE);
    ck_assert_int_eq(run_checker(p, "--min-distance", "--radius", "0.5", NULL), 0);
    ck_assert_double_eq_tol(min_distance_value(), 0.3, 1e-12);
    ck_assert_msg(strstr(out, ": b vertex 0 to a triangle 0\n"), "output: %s", out);
    /* Penetration makes it 0. */
    double c[4][3];
    shifted(c, unit_tet, 4, 0.2, 0.2, 0.2);
    ck_assert_int_eq(two_tets(unit_tet, c, "--min-distance"), 1);
    ck_assert_double_eq(min_distance_value(), 0.0);
    remove_tmpdir();
}
END_TEST

/* ---------------------------------------------------- bodies and files */

START_TEST(particle_bodies_are_skipped)
{
    if (!have_checker()) return;
    make_tmpdir();
    const double dust[2][3] = {{0.1, 0.1, 0.1}, {5, 5, 5}};
    double b[4][3];
    shifted(b, unit_tet, 4, 0.2, 0.2, 0.2);
    tbody t[3] = {{"a", 4, unit_tet[0], 4, tet_tris[0]},
                  {"dust", 2, dust[0], -1, NULL},
                  {"empty", 4, b[0], 0, NULL}};
    const char *p = in_tmp("particles.h5");
    write_run(p, 1, t, 3, CLOSE);
    ck_assert_int_eq(run_checker(p, "--min-distance", NULL), 0);
    ck_assert_msg(strstr(out, "frames 1, edges 6, triangles 4, penetrations 0\n"), "output: %s", out);
    remove_tmpdir();
}
END_TEST

START_TEST(bodies_option)
{
    if (!have_checker()) return;
    make_tmpdir();
    double b[4][3];
    shifted(b, unit_tet, 4, 0.2, 0.2, 0.2);
    tbody t[2] = {{"a", 4, unit_tet[0], 4, tet_tris[0]}, {"b", 4, b[0], 4, tet_tris[0]}};
    const char *p = in_tmp("sel.h5");
    write_run(p, 1, t, 2, CLOSE);
    ck_assert_int_eq(run_checker(p, "--bodies", "a", NULL), 0);
    ck_assert_msg(strstr(out, "triangles 4, penetrations 0"), "output: %s", out);
    ck_assert_int_eq(run_checker(p, "--bodies", "b,a", NULL), 1);
    ck_assert_int_eq(run_checker(p, "--bodies", "a,nosuch", NULL), 2);
    ck_assert_msg(strstr(err, "nosuch") && strstr(err, p), "stderr: %s", err);
    remove_tmpdir();
}
END_TEST

START_TEST(bad_usage_and_files)
{
    if (!have_checker()) return;
    make_tmpdir();
    ck_assert_int_eq(run_checker(NULL), 2);
    ck_assert_int_eq(run_checker("--frobnicate", NULL), 2);
    ck_assert_int_eq(run_checker(in_tmp("x.h5"), "--radius", "-1", NULL), 2);
    ck_assert_int_eq(run_checker("--help", NULL), 0);
    ck_assert_msg(strstr(out, "usage:"), "output: %s", out);
    const char *missing = in_tmp("missing.h5");
    ck_assert_int_eq(run_checker(missing, NULL), 2);
    ck_assert_msg(strstr(err, missing), "stderr: %s", err);
    const char *text = in_tmp("text.h5");
    FILE *f = fopen(text, "w");
    ck_assert_ptr_nonnull(f);
    fputs("not hdf5\n", f);
    fclose(f);
    ck_assert_int_eq(run_checker(text, NULL), 2);
    ck_assert_msg(strstr(err, text), "stderr: %s", err);
    /* Triangles naming a vertex the body does not have. */
    static const int32_t bad[1][3] = {{0, 1, 7}};
    tbody t = {"a", 4, unit_tet[0], 1, bad[0]};
    const char *p = in_tmp("badidx.h5");
    write_run(p, 1, &t, 1, CLOSE);
    ck_assert_int_eq(run_checker(p, NULL), 2);
    ck_assert_msg(strstr(err, "out of range"), "stderr: %s", err);
    remove_tmpdir();
}
END_TEST

/* Files a writer holds open in SWMR mode, or left open when it died. */
START_TEST(swmr_live_and_killed_writers)
{
    if (!have_checker()) return;
    make_tmpdir();
    double b[4][3];
    shifted(b, unit_tet, 4, 0.2, 0.2, 0.2);
    tbody t[2] = {{"a", 4, unit_tet[0], 4, tet_tris[0]}, {"b", 4, b[0], 4, tet_tris[0]}};
    const char *live = in_tmp("live.h5");
    hid_t f = write_run(live, 1, t, 2, KEEP_OPEN);
    ck_assert_int_eq(run_checker(live, NULL), 1);
    ck_assert_msg(strstr(out, "frames 1, edges 12"), "output: %s; stderr: %s", out, err);
    H5Fclose(f);

    const char *killed = in_tmp("killed.h5");
    fflush(NULL);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        write_run(killed, 1, t, 2, KEEP_OPEN);
        _exit(0); /* no close: the file stays marked as open by a writer */
    }
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_int_eq(run_checker(killed, NULL), 1);
    ck_assert_msg(strstr(out, "frames 1, edges 12"), "output: %s; stderr: %s", out, err);
    remove_tmpdir();
}
END_TEST

/* ------------------------------------------------------- spheres, culling */

/* Sphere b (radius 0.7) moves along x through sphere a (radius 1), slightly
 * off axis. Surfaces cross while the centres are 0.3 to 1.7 apart; in the
 * middle frame b lies wholly inside a, which a surface test does not see.
 * The grid must find exactly what the all-pairs reference finds. */
START_TEST(spheres_grid_matches_all_pairs)
{
    if (!have_checker()) return;
    make_tmpdir();
    enum { NLAT = 12, NLON = 24, NV = (NLAT - 1) * NLON + 2, NT = 2 * NLON * (NLAT - 1), F = 9 };
    static double xa[F][NV][3], xb[F][NV][3];
    static int32_t ta[NT][3];
    const double ca[3] = {0, 0, 0};
    ck_assert_int_eq(uv_sphere(NLAT, NLON, 1.0, ca, xa[0], ta), NT);
    for (int k = 0; k < F; k++) {
        memcpy(xa[k], xa[0], sizeof xa[0]);
        const double cb[3] = {-2.5 + 0.625 * k, 0.13, 0.07};
        uv_sphere(NLAT, NLON, 0.7, cb, xb[k], ta);
    }
    tbody t[2] = {{"a", NV, xa[0][0], NT, ta[0]}, {"b", NV, xb[0][0], NT, ta[0]}};
    const char *p = in_tmp("spheres.h5");
    write_run(p, F, t, 2, CLOSE);
    ck_assert_int_eq(run_checker(p, "--min-distance", "--radius", "0.05", NULL), 1);
    char culled[sizeof out];
    memcpy(culled, out, sizeof out);
    ck_assert_msg(strstr(out, "penetrations 0") == NULL, "output: %s", out);
    ck_assert_int_eq(count_lines(out, "frame "), 20); /* the first 20 pairs, from frame 2 on */
    ck_assert_int_ge(count_lines(out, "frame 2 time 0.2: "), 1);
    ck_assert_int_eq(count_lines(out, "frame 0 ") + count_lines(out, "frame 1 "), 0);
    ck_assert_int_eq(run_checker(p, "--min-distance", "--radius", "0.05", "--no-cull", NULL), 1);
    ck_assert_str_eq(out, culled);

    /* Frame by frame: penetration exactly where the surfaces cross. */
    for (int k = 0; k < F; k++) {
        tbody one[2] = {{"a", NV, xa[k][0], NT, ta[0]}, {"b", NV, xb[k][0], NT, ta[0]}};
        write_run(p, 1, one, 2, CLOSE);
        double dx = -2.5 + 0.625 * k, dist = sqrt(dx * dx + 0.13 * 0.13 + 0.07 * 0.07);
        int crosses = dist > 0.3 && dist < 1.7;
        ck_assert_msg(run_checker(p, "--min-distance", "--radius", "0.05", NULL) == crosses, "frame %d: %s", k, out);
        memcpy(culled, out, sizeof out);
        run_checker(p, "--min-distance", "--radius", "0.05", "--no-cull", NULL);
        ck_assert_str_eq(out, culled);
    }
    remove_tmpdir();
}
END_TEST

/* About 3000 triangles against 3000 over 100 frames, the size of the
 * sphere-plate frames: culled and brute-force results agree. Long (about a
 * minute): only in make test-long. */
START_TEST(three_thousand_triangles_hundred_frames)
{
    if (!have_checker() || !avi_test_long()) return;
    make_tmpdir();
    enum { NLAT = 32, NLON = 48, NV = (NLAT - 1) * NLON + 2, NT = 2 * NLON * (NLAT - 1), F = 100 };
    double(*xa)[NV][3] = malloc(sizeof(double[F][NV][3])), (*xb)[NV][3] = malloc(sizeof(double[F][NV][3]));
    int32_t(*ta)[3] = malloc(sizeof(int32_t[NT][3]));
    ck_assert(xa && xb && ta);
    for (int k = 0; k < F; k++) {
        const double ca[3] = {0, 0, 0}, cb[3] = {-3 + 0.06 * k, 0.11, 0.05};
        uv_sphere(NLAT, NLON, 1.0, ca, xa[k], ta);
        uv_sphere(NLAT, NLON, 0.9, cb, xb[k], ta);
    }
    tbody t[2] = {{"a", NV, xa[0][0], NT, ta[0]}, {"b", NV, xb[0][0], NT, ta[0]}};
    const char *p = in_tmp("big.h5");
    write_run(p, F, t, 2, CLOSE);
    free(xa);
    free(xb);
    free(ta);
    ck_assert_int_eq(run_checker(p, "--min-distance", NULL), 1);
    ck_assert_msg(strstr(out, "frames 100, edges 8928, triangles 5952"), "output: %s", out);
    remove_tmpdir();
}
END_TEST

static Suite *check_penetration_suite(void)
{
    Suite *s = suite_create("check_penetration");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, tets_apart);
    tcase_add_test(tc, tets_touching_at_a_vertex);
    tcase_add_test(tc, tets_crossing);
    tcase_add_test(tc, edge_pierces_face_in_frame_3);
    tcase_add_test(tc, folded_sheet_self_intersection);
    tcase_add_test(tc, flat_sheet_is_clean);
    tcase_add_test(tc, coplanar_triangles);
    tcase_add_test(tc, min_distance_edge_edge);
    tcase_add_test(tc, min_distance_vertex_triangle);
    tcase_add_test(tc, particle_bodies_are_skipped);
    tcase_add_test(tc, bodies_option);
    tcase_add_test(tc, bad_usage_and_files);
    tcase_add_test(tc, swmr_live_and_killed_writers);
    tcase_add_test(tc, spheres_grid_matches_all_pairs);
    tcase_add_test(tc, three_thousand_triangles_hundred_frames);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(check_penetration_suite)
