/* XDMF sidecar: well-formed XML, one time step per frame, atomic replacement. */
#include "check_main.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "avi/output.h"

static char tmpdir[64];

static void make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/avi_xmf_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

/* Number of entries of tmpdir whose name contains `part` (NULL: all). */
static int count_entries(const char *part)
{
    DIR *d = opendir(tmpdir);
    ck_assert_ptr_nonnull(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..") && (!part || strstr(e->d_name, part))) n++;
    closedir(d);
    return n;
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

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    ck_assert_int_eq(fread(s, 1, (size_t)n, f), (size_t)n);
    s[n] = 0;
    fclose(f);
    return s;
}

static int count(const char *s, const char *needle)
{
    int n = 0;
    for (const char *p = s; (p = strstr(p, needle)); p += strlen(needle)) n++;
    return n;
}

static int have_python(void)
{
    return access("/usr/bin/python3", X_OK) == 0;
}

/* Parses the file with python's xml.etree and checks the collections:
 * `frames` temporal steps, each a spatial collection of `bodies` grids
 * whose positions are read from file `h5` (as written in the sidecar). */
static int python_check(const char *xmf, int frames, int bodies, const char *h5)
{
    static const char script[] =
        "import sys, xml.etree.ElementTree as ET\n"
        "root = ET.parse(sys.argv[1]).getroot()\n"
        "assert root.tag == 'Xdmf' and root.get('Version') == '3.0'\n"
        "t = root.find('Domain/Grid')\n"
        "assert t.get('CollectionType') == 'Temporal'\n"
        "steps = t.findall('Grid')\n"
        "assert len(steps) == int(sys.argv[2]), len(steps)\n"
        "times = [float(g.find('Time').get('Value')) for g in steps]\n"
        "assert times == sorted(times)\n"
        "for k, g in enumerate(steps):\n"
        "    assert g.get('CollectionType') == 'Spatial'\n"
        "    grids = g.findall('Grid')\n"
        "    assert len(grids) == int(sys.argv[3])\n"
        "    for b in grids:\n"
        "        old, new = b.findall('Geometry')\n"
        "        assert old.get('GeometryType') == new.get('GeometryType') == 'XYZ'\n"
        "        slab = old.find('DataItem')\n"
        "        assert slab.get('ItemType') == 'HyperSlab'\n"
        "        sel, data = slab.findall('DataItem')\n"
        "        assert sel.text.split()[0] == str(k)\n"
        "        h5 = sys.argv[4] + ':/particles/' + b.get('Name') + '/position/value'\n"
        "        assert data.text == h5, data.text\n"
        "        assert new.find('DataItem').text.startswith(h5 + '|%d 0 0:1 1 1:1 ' % k)\n"
        "        assert b.find('Topology') is not None\n";
    char nf[16], nb[16];
    snprintf(nf, sizeof nf, "%d", frames);
    snprintf(nb, sizeof nb, "%d", bodies);
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        execl("/usr/bin/python3", "/usr/bin/python3", "-c", script, xmf, nf, nb, h5, (char *)NULL);
        _exit(127);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

enum { NV = 11 };
static const double mass[NV] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
static const uint32_t tris[2][3] = {{0, 1, 2}, {0, 2, 3}};
static const uint32_t tets[1][4] = {{0, 1, 2, 3}};

START_TEST(test_sidecar_follows_frames)
{
    make_tmpdir();
    char h5[PATH_MAX], xmf[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/run.h5", tmpdir);
    snprintf(xmf, sizeof xmf, "%s/run.xmf", tmpdir);
    /* A sheet, a tet and a body of bare particles (Polyvertex). The '&'
     * in a name must be escaped in the XML. */
    avi_h5_body b[3] = {
        {.name = "sheet", .first_vertex = 0, .vertex_count = 4, .mass = mass, .triangles = tris, .triangle_count = 2},
        {.name = "t&t", .first_vertex = 4, .vertex_count = 4, .mass = mass, .tets = tets, .tet_count = 1},
        {.name = "dots", .first_vertex = 8, .vertex_count = 3, .mass = mass},
    };
    avi_h5_layout L = {.path = h5, .bodies = b, .body_count = 3, .vertex_count = NV, .scene_name = "x"};
    avi_error err;
    avi_h5_writer *w = avi_h5_create(&L, &err);
    ck_assert_msg(w != NULL, "%s", err.message);
    ck_assert_int_ne(access(xmf, F_OK), 0); /* no frame yet */

    double x[NV][3] = {{0}}, v[NV][3] = {{0}};
    ck_assert_int_eq(avi_h5_write_frame(w, 0, 0.0, x, v), 0);
    ck_assert_int_eq(avi_h5_write_frame(w, 10, 0.25, x, v), 0);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    char *s = slurp(xmf);
    ck_assert_int_eq(count(s, "<Time "), 2);
    ck_assert_int_eq(count(s, "CollectionType=\"Spatial\""), 2);
    ck_assert_int_eq(count(s, "TopologyType=\"Triangle\""), 2);
    ck_assert_int_eq(count(s, "TopologyType=\"Tetrahedron\""), 2);
    ck_assert_int_eq(count(s, "TopologyType=\"Polyvertex\""), 2);
    ck_assert_ptr_nonnull(strstr(s, "Name=\"t&amp;t\""));
    ck_assert_ptr_nonnull(strstr(s, "<Time Value=\"0.25\" />"));
    ck_assert_ptr_nonnull(strstr(s, "1 0 0 1 1 1 1 4 3")); /* frame 1 of sheet */
    ck_assert_ptr_nonnull(strstr(s, ":/connectivity/t&amp;t_tetrahedra"));
    /* The HDF5 file by its name, relative to the sidecar's directory. */
    ck_assert_ptr_nonnull(strstr(s, ">run.h5:/particles/sheet/position/value<"));
    ck_assert_ptr_null(strstr(s, tmpdir));
    ck_assert_int_eq(count(s, "Dimensions=\"2 4 3\""), 4); /* 2 bodies of 4 vertices */
    if (have_python()) ck_assert_int_eq(python_check(xmf, 2, 3, "run.h5"), 0);

    struct stat before, after;
    ck_assert_int_eq(stat(xmf, &before), 0);
    /* A flush without new frames leaves the sidecar alone. */
    ck_assert_int_eq(avi_h5_flush(w), 0);
    ck_assert_int_eq(stat(xmf, &after), 0);
    ck_assert(before.st_ino == after.st_ino);

    /* A new frame is appended in place: same inode, no temporary, every
     * byte before the closing lines as it was. */
    ck_assert_int_eq(avi_h5_write_frame(w, 20, 0.5, x, v), 0);
    ck_assert_int_eq(avi_h5_flush(w), 0);
    ck_assert_int_eq(stat(xmf, &after), 0);
    ck_assert(before.st_ino == after.st_ino);
    ck_assert_int_eq(count_entries(".tmp"), 0);
    char *s2 = slurp(xmf);
    const char *closing = strstr(s, "  </Grid>\n  </Domain>\n</Xdmf>\n");
    ck_assert_ptr_nonnull(closing);
    ck_assert_int_eq(strncmp(s, s2, (size_t)(closing - s)), 0);
    ck_assert_int_eq(count(s2, "<Time "), 3);
    ck_assert_int_eq(count(s2, "Dimensions=\"2 4 3\""), 4); /* frames 0 and 1 as written */
    ck_assert_ptr_nonnull(strstr(s2, "Dimensions=\"3 4 3\"")); /* frame 2: [F][n][3] with F = 3 */
    free(s);
    free(s2);
    ck_assert_int_eq(avi_h5_close(w, "complete", &err), 0);
    if (have_python()) ck_assert_int_eq(python_check(xmf, 3, 3, "run.h5"), 0);
    ck_assert_int_eq(count_entries(NULL), 2); /* run.h5 and run.xmf */
    remove_tmpdir();
}
END_TEST

START_TEST(test_direct_write_and_errors)
{
    make_tmpdir();
    char h5[PATH_MAX], xmf[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/a.h5", tmpdir);
    snprintf(xmf, sizeof xmf, "%s/a.xmf", tmpdir);
    FILE *f = fopen(h5, "w"); /* only its path matters here */
    fclose(f);
    avi_h5_body b = {.name = "sheet", .vertex_count = 4, .triangles = tris, .triangle_count = 2};
    double times[4] = {0, 1, 2, 3};
    avi_error err;
    ck_assert_int_eq(avi_xdmf_write(xmf, h5, &b, 1, times, 4, &err), 0);
    char *s = slurp(xmf);
    ck_assert_int_eq(count(s, "<Time "), 4);
    ck_assert_int_eq(count(s, "<Grid "), 1 + 4 * 2);
    ck_assert_ptr_nonnull(strstr(s, "</Xdmf>\n"));
    free(s);
    if (have_python()) ck_assert_int_eq(python_check(xmf, 4, 1, "a.h5"), 0);
    /* Zero frames: still a valid document. */
    ck_assert_int_eq(avi_xdmf_write(xmf, h5, &b, 1, times, 0, &err), 0);
    if (have_python()) ck_assert_int_eq(python_check(xmf, 0, 1, "a.h5"), 0);

    /* The .h5 must exist. */
    char missing[PATH_MAX];
    snprintf(missing, sizeof missing, "%s/missing.h5", tmpdir);
    ck_assert_int_ne(avi_xdmf_write(xmf, missing, &b, 1, times, 1, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, missing));
    /* Unwritable destination: error naming it, nothing left behind. */
    char bad[PATH_MAX];
    snprintf(bad, sizeof bad, "%s/no/such/dir/a.xmf", tmpdir);
    ck_assert_int_ne(avi_xdmf_write(bad, h5, &b, 1, times, 1, &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, bad));
    ck_assert_int_eq(err.status, AVI_ERR_RUN);
    ck_assert_int_eq(count_entries(".tmp"), 0);

    char out[64];
    ck_assert_int_eq(avi_xdmf_default_path("dir/run.h5", out, sizeof out), 0);
    ck_assert_str_eq(out, "dir/run.xmf");
    ck_assert_int_eq(avi_xdmf_default_path("run.hdf5", out, sizeof out), 0);
    ck_assert_str_eq(out, "run.hdf5.xmf");
    ck_assert_int_eq(avi_xdmf_default_path("run.h5", out, 7), AVI_ERR_INPUT);
    remove_tmpdir();
}
END_TEST

/* Writes a sidecar at tmpdir/X for an (empty) HDF5 file at tmpdir/H and
 * returns whether it names the HDF5 file as `expect`. */
static int names_h5_as(const char *x, const char *h, const char *expect)
{
    char h5[PATH_MAX], xmf[PATH_MAX], want[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/%s", tmpdir, h);
    snprintf(xmf, sizeof xmf, "%s/%s", tmpdir, x);
    FILE *f = fopen(h5, "w");
    ck_assert_ptr_nonnull(f);
    fclose(f);
    avi_h5_body b = {.name = "sheet", .vertex_count = 4, .triangles = tris, .triangle_count = 2};
    double t = 0;
    avi_error err;
    ck_assert_msg(avi_xdmf_write(xmf, h5, &b, 1, &t, 1, &err) == 0, "%s", err.message);
    char *s = slurp(xmf);
    snprintf(want, sizeof want, ">%s:/particles/sheet/position/value<", expect);
    int found = strstr(s, want) != NULL;
    free(s);
    unlink(xmf);
    unlink(h5);
    return found;
}

START_TEST(test_relative_paths)
{
    make_tmpdir();
    char d[PATH_MAX + 16];
    const char *sub[] = {"a", "a/b", "ab", "c"};
    for (int i = 0; i < 4; i++) {
        snprintf(d, sizeof d, "%s/%s", tmpdir, sub[i]);
        ck_assert_int_eq(mkdir(d, 0700), 0);
    }
    ck_assert(names_h5_as("r.xmf", "r.h5", "r.h5"));
    ck_assert(names_h5_as("a/r.xmf", "r.h5", "../r.h5"));
    ck_assert(names_h5_as("r.xmf", "a/b/r.h5", "a/b/r.h5"));
    ck_assert(names_h5_as("a/b/r.xmf", "ab/r.h5", "../../ab/r.h5")); /* "a" is not a prefix of "ab" */
    ck_assert(names_h5_as("ab/r.xmf", "a/r.h5", "../a/r.h5"));
    ck_assert(names_h5_as("a/b/r.xmf", "c/r.h5", "../../c/r.h5"));
    /* Spelled with "..", "." and a link: resolved first. */
    snprintf(d, sizeof d, "%s/link", tmpdir);
    ck_assert_int_eq(symlink("a/b", d), 0);
    ck_assert(names_h5_as("link/../b/./r.xmf", "a/b/r.h5", "r.h5"));
    unlink(d);
    for (int i = 3; i >= 0; i--) {
        snprintf(d, sizeof d, "%s/%s", tmpdir, sub[i]);
        rmdir(d);
    }
    remove_tmpdir();
}
END_TEST

START_TEST(test_append_needs_the_closing_lines)
{
    /* A sidecar cut short (a killed append) or changed by hand is not
     * appended to but rewritten whole (a new file), and valid again. */
    make_tmpdir();
    char h5[PATH_MAX], xmf[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/a.h5", tmpdir);
    snprintf(xmf, sizeof xmf, "%s/a.xmf", tmpdir);
    FILE *f = fopen(h5, "w");
    fclose(f);
    avi_h5_body b = {.name = "sheet", .vertex_count = 4, .triangles = tris, .triangle_count = 2};
    double times[3] = {0, 1, 2};
    avi_error err;
    ck_assert_int_eq(avi_xdmf_write(xmf, h5, &b, 1, times, 1, &err), 0);
    ck_assert_int_eq(avi_xdmf_append(xmf, h5, &b, 1, times, 1, 2, &err), 0);
    if (have_python()) ck_assert_int_eq(python_check(xmf, 2, 1, "a.h5"), 0);
    struct stat st, st2;
    ck_assert_int_eq(stat(xmf, &st), 0);
    ck_assert_int_eq(truncate(xmf, st.st_size - 5), 0); /* torn: "</Xd" */
    ck_assert_int_eq(avi_xdmf_append(xmf, h5, &b, 1, times, 2, 3, &err), 0);
    ck_assert_int_eq(stat(xmf, &st2), 0);
    ck_assert(st.st_ino != st2.st_ino);
    if (have_python()) ck_assert_int_eq(python_check(xmf, 3, 1, "a.h5"), 0);
    /* Appends add exactly the new frames. */
    char *s = slurp(xmf);
    ck_assert_int_eq(count(s, "<Time "), 3);
    free(s);
    remove_tmpdir();
}
END_TEST

/* Every way an append can be cut short (a prefix of what it writes, over
 * the old closing lines) parses as the old frames, as the new ones (all but
 * the last newline written), or not at all: never as wrong frames. */
START_TEST(test_torn_append_never_wrong)
{
    if (!have_python()) return;
    make_tmpdir();
    char h5[PATH_MAX], xmf[PATH_MAX], old[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/a.h5", tmpdir);
    snprintf(xmf, sizeof xmf, "%s/a.xmf", tmpdir);
    snprintf(old, sizeof old, "%s/old.xmf", tmpdir);
    FILE *f = fopen(h5, "w");
    fclose(f);
    avi_h5_body b[2] = {{.name = "sheet", .vertex_count = 4, .triangles = tris, .triangle_count = 2},
                        {.name = "dots", .first_vertex = 4, .vertex_count = 3}};
    double times[3] = {0, 1, 2};
    avi_error err;
    ck_assert_int_eq(avi_xdmf_write(xmf, h5, b, 2, times, 2, &err), 0);
    char *s = slurp(xmf);
    f = fopen(old, "w");
    fputs(s, f);
    fclose(f);
    free(s);
    ck_assert_int_eq(avi_xdmf_append(xmf, h5, b, 2, times, 2, 3, &err), 0);
    static const char script[] =
        "import sys, xml.etree.ElementTree as ET\n"
        "old, new = open(sys.argv[1]).read(), open(sys.argv[2]).read()\n"
        "T = '  </Grid>\\n  </Domain>\\n</Xdmf>\\n'\n"
        "base = old[:-len(T)]\n"
        "assert new.startswith(base) and old.endswith(T)\n"
        "add = new[len(base):]\n"
        "seen = set()\n"
        "for p in range(len(add)):\n"
        "    try:\n"
        "        n = len(ET.fromstring(base + add[:p] + T[p:]).findall('.//Time'))\n"
        "    except ET.ParseError:\n"
        "        n = None\n"
        "    assert n in (None, 2) or (n == 3 and p == len(add) - 1), (p, n)\n"
        "    seen.add(n)\n"
        "assert seen == {None, 2, 3}, seen\n";
    pid_t pid = fork();
    ck_assert(pid >= 0);
    if (pid == 0) {
        execl("/usr/bin/python3", "/usr/bin/python3", "-c", script, old, xmf, (char *)NULL);
        _exit(127);
    }
    int status;
    ck_assert(waitpid(pid, &status, 0) == pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    remove_tmpdir();
}
END_TEST

START_TEST(test_writer_without_sidecar_dir)
{
    /* A sidecar that cannot be written is an error of the flush. */
    make_tmpdir();
    char h5[PATH_MAX], xmf[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/b.h5", tmpdir);
    snprintf(xmf, sizeof xmf, "%s/gone/b.xmf", tmpdir);
    avi_h5_body b = {.name = "sheet", .vertex_count = 4, .mass = mass, .triangles = tris, .triangle_count = 2};
    avi_h5_layout L = {.path = h5, .xdmf_path = xmf, .bodies = &b, .body_count = 1, .vertex_count = 4};
    avi_error err;
    avi_h5_writer *w = avi_h5_create(&L, &err);
    ck_assert_ptr_nonnull(w);
    double x[4][3] = {{0}};
    ck_assert_int_eq(avi_h5_write_frame(w, 0, 0.0, x, x), 0);
    ck_assert_int_ne(avi_h5_flush(w), 0);
    ck_assert_ptr_nonnull(strstr(avi_h5_error(w)->message, xmf));
    ck_assert_int_ne(avi_h5_close(w, "failed: no sidecar", &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, xmf));
    remove_tmpdir();
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("xdmf");
    TCase *tc = tcase_create("xdmf");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_sidecar_follows_frames);
    tcase_add_test(tc, test_direct_write_and_errors);
    tcase_add_test(tc, test_writer_without_sidecar_dir);
    tcase_add_test(tc, test_relative_paths);
    tcase_add_test(tc, test_append_needs_the_closing_lines);
    tcase_add_test(tc, test_torn_append_never_wrong);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
