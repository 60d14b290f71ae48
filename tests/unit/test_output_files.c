/* The output files' rules: temporaries never follow planted links, outputs
 * that are special files, links, inputs or read-only files are refused
 * before anything is created, and the lock admits one writer. */
#include "check_main.h"

#include <fcntl.h>
#include <hdf5.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "output/output_files.h"

static char dir[64];

static void make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/avi_out_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static const char *in_dir(const char *name)
{
    static char path[4][PATH_MAX];
    static int next;
    char *p = path[next++ % 4];
    snprintf(p, PATH_MAX, "%s/%s", dir, name);
    return p;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static void assert_text(const char *path, const char *text)
{
    char buf[256] = {0};
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    ck_assert_str_eq(buf, text);
}

/* avi_output_files_open fails with status 2 and `want` in the message. */
static void assert_refused(const char *out, const avi_scene *scene, const char *scene_file, const char *want)
{
    avi_output_files f;
    avi_error err = {0};
    ck_assert_int_eq(avi_output_files_open(&f, out, scene, scene_file, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, want) != NULL, "'%s' not in '%s'", want, err.message);
    ck_assert_int_eq(f.lock_fd, -1);
}

START_TEST(test_temporaries_never_follow_links)
{
    make_dir();
    write_text(in_dir("victim"), "victim\n");
    ck_assert_int_eq(symlink("victim", in_dir("a.tmp")), 0);
    avi_error err = {0};
    int fd = avi_output_create(in_dir("a.tmp"), &err);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "new\n", 4), 4);
    close(fd);
    struct stat st;
    ck_assert_int_eq(lstat(in_dir("a.tmp"), &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    assert_text(in_dir("victim"), "victim\n");

    /* HDF5 files too: HDF5 opens the file created here, not the link's target. */
    ck_assert_int_eq(symlink("victim", in_dir("b.h5.part")), 0);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    int h5fd = -1;
    hid_t h5 = avi_output_create_h5(in_dir("b.h5.part"), fapl, &h5fd, &err);
    H5Pclose(fapl);
    ck_assert_int_ge(h5, 0);
    ck_assert_int_ge(h5fd, 0);
    ck_assert_int_ge(H5Fclose(h5), 0);
    close(h5fd);
    assert_text(in_dir("victim"), "victim\n");
    ck_assert_int_gt(H5Fis_hdf5(in_dir("b.h5.part")), 0);

    /* A rename never replaces what is not a regular file. */
    ck_assert_int_eq(mkfifo(in_dir("c.xmf"), 0600), 0);
    write_text(in_dir("c.xmf.tmp"), "sidecar\n");
    ck_assert_int_ne(avi_output_commit(in_dir("c.xmf.tmp"), in_dir("c.xmf"), &err), 0);
    ck_assert_ptr_nonnull(strstr(err.message, "is a FIFO"));
    ck_assert_int_eq(lstat(in_dir("c.xmf"), &st), 0);
    ck_assert(S_ISFIFO(st.st_mode));
    ck_assert_int_ne(access(in_dir("c.xmf.tmp"), F_OK), 0);
    remove_dir();
}
END_TEST

START_TEST(test_refused_outputs)
{
    make_dir();
    assert_refused("", NULL, NULL, "empty");
    assert_refused(in_dir("sub/"), NULL, NULL, "ends in '/'");
    assert_refused(in_dir("no/such/x.h5"), NULL, NULL, "cannot write there");
    ck_assert_int_eq(mkfifo(in_dir("fifo.h5"), 0600), 0);
    assert_refused(in_dir("fifo.h5"), NULL, NULL, "is a FIFO");
    write_text(in_dir("target"), "target\n");
    ck_assert_int_eq(symlink("target", in_dir("link.h5")), 0);
    assert_refused(in_dir("link.h5"), NULL, NULL, "is a symbolic link; give its target");
    ck_assert_int_eq(symlink("target", in_dir("x.xmf")), 0);
    assert_refused(in_dir("x.h5"), NULL, NULL, "x.xmf: is a symbolic link");
    ck_assert_int_eq(mkdir(in_dir("d.h5.ckpt.tmp"), 0700), 0);
    assert_refused(in_dir("d.h5"), NULL, NULL, "d.h5.ckpt.tmp: exists and is a directory");
    write_text(in_dir("ro.h5"), "keep\n");
    ck_assert_int_eq(chmod(in_dir("ro.h5"), 0444), 0);
    assert_refused(in_dir("ro.h5"), NULL, NULL, "is read-only");
    assert_text(in_dir("ro.h5"), "keep\n");

    /* Inputs by inode: the scene under another name, a mesh file. */
    write_text(in_dir("scene.yaml"), "scene\n");
    ck_assert_int_eq(link(in_dir("scene.yaml"), in_dir("hard.h5")), 0);
    assert_refused(in_dir("hard.h5"), NULL, in_dir("scene.yaml"), "is the scene file being read");
    char mesh[PATH_MAX];
    snprintf(mesh, sizeof mesh, "%s", in_dir("m.obj"));
    write_text(mesh, "mesh\n");
    avi_scene_body body;
    memset(&body, 0, sizeof body);
    body.name = "sheet";
    body.mesh.source = AVI_MESH_FILE;
    body.mesh.file = mesh;
    avi_scene scene;
    memset(&scene, 0, sizeof scene);
    scene.body_count = 1;
    scene.bodies = &body;
    assert_refused(mesh, &scene, NULL, "is the mesh file of body 'sheet'");
    ck_assert_int_eq(link(mesh, in_dir("m.h5.part")), 0); /* a stale temporary would be removed */
    assert_refused(in_dir("m.h5"), &scene, NULL, "m.h5.part: is the mesh file");
    assert_text(mesh, "mesh\n");

    /* A directory anyone may write to, unless sticky. */
    ck_assert_int_eq(mkdir(in_dir("open"), 0700), 0);
    ck_assert_int_eq(chmod(in_dir("open"), 0777), 0);
    assert_refused(in_dir("open/x.h5"), NULL, NULL, "writable by every user and not sticky");
    ck_assert_int_eq(chmod(in_dir("open"), 01777), 0);
    avi_output_files f;
    avi_error err = {0};
    ck_assert_int_eq(avi_output_files_open(&f, in_dir("open/x.h5"), NULL, NULL, &err), 0);
    avi_output_files_close(&f);
    remove_dir();
}
END_TEST

START_TEST(test_lock)
{
    make_dir();
    char out[PATH_MAX];
    snprintf(out, sizeof out, "%s", in_dir("run.h5"));
    avi_output_files a, b;
    avi_error err = {0};
    ck_assert_int_eq(avi_output_files_open(&a, out, NULL, NULL, &err), 0);
    ck_assert_int_ge(a.lock_fd, 0);
    ck_assert_str_eq(a.path[AVI_OUT_LOCK], in_dir("run.h5.lock"));
    /* flock excludes a second open file even in the same process. */
    char want[PATH_MAX + 64];
    snprintf(want, sizeof want, "%s is in use by process %ld", out, (long)getpid());
    ck_assert_int_eq(avi_output_files_open(&b, out, NULL, NULL, &err), AVI_ERR_INPUT);
    ck_assert_str_eq(err.message, want);
    avi_output_files_close(&a);
    ck_assert_int_ne(access(in_dir("run.h5.lock"), F_OK), 0);

    /* A stale lock file (a killed run's) and a planted link there are no obstacle. */
    write_text(in_dir("run.h5.lock"), "999999\n");
    ck_assert_int_eq(avi_output_files_open(&a, out, NULL, NULL, &err), 0);
    avi_output_files_close(&a);
    write_text(in_dir("victim"), "victim\n");
    ck_assert_int_eq(symlink("victim", in_dir("run.h5.lock")), 0);
    ck_assert_int_eq(avi_output_files_open(&a, out, NULL, NULL, &err), 0);
    assert_text(in_dir("victim"), "victim\n");

    /* Fresh run and resume bookkeeping under the lock. */
    write_text(in_dir("run.h5"), "earlier\n");
    write_text(in_dir("run.h5.ckpt"), "ckpt\n");
    write_text(in_dir("run.h5.resume-old"), "old\n");
    ck_assert_int_eq(avi_output_files_clear_stale(&a, &err), 0);
    ck_assert_int_ne(access(in_dir("run.h5.ckpt"), F_OK), 0);
    ck_assert_int_ne(access(in_dir("run.h5.resume-old"), F_OK), 0);
    ck_assert_int_eq(avi_output_files_set_aside(&a, &err), 0);
    assert_text(in_dir("run.h5.resume-old"), "earlier\n");
    avi_output_files_put_back(&a);
    assert_text(in_dir("run.h5"), "earlier\n");
    ck_assert_int_eq(avi_output_files_set_aside(&a, &err), 0);
    ck_assert_int_eq(avi_output_files_drop_aside(&a, &err), 0);
    ck_assert_int_ne(access(in_dir("run.h5.resume-old"), F_OK), 0);
    avi_output_files_close(&a);
    remove_dir();
}
END_TEST

static Suite *suite(void)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    Suite *s = suite_create("output_files");
    TCase *tc = tcase_create("output_files");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_temporaries_never_follow_links);
    tcase_add_test(tc, test_refused_outputs);
    tcase_add_test(tc, test_lock);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
