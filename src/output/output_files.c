/* Every file avi creates, and the rules it follows (output_files.h).
 *
 * The names: for an output OUT, the sidecar OUT.xmf (OUT without .h5, plus
 * .xmf), the checkpoint OUT.ckpt, the temporaries OUT.part, OUT.xmf.tmp and
 * OUT.ckpt.tmp, the earlier output during a resume OUT.resume-old and the
 * lock OUT.lock. Nothing else is ever created, replaced or removed.
 *
 * Before a run or resume builds or writes anything, every name is checked;
 * any failure is exit 2 with the name and the reason:
 * - OUT is not empty and does not end in '/'.
 * - OUT's directory exists, and the effective user may create files in it
 *   (write and search permission). A directory writable by every user and
 *   not sticky (mode o+w without +t) is refused: anyone could remove or
 *   replace files in it while the run writes them. (A sticky directory such
 *   as /tmp is fine: there only a file's owner may remove or rename it.)
 * - An existing name that is not a regular file is refused: a directory,
 *   device, FIFO or socket, and a symbolic link at OUT, OUT.xmf, OUT.ckpt or
 *   OUT.resume-old (give the link's target instead). At a temporary's name
 *   or the lock's, a symbolic link is removed (never followed) like any
 *   stale temporary; in a sticky directory, one that belongs to another
 *   user (which could not be removed) is refused.
 * - No name may be the scene file or a mesh file being read (same device
 *   and inode, so hard links and other spellings count too).
 * - An existing OUT, OUT.xmf, OUT.ckpt or OUT.resume-old, which the run
 *   replaces or removes, must belong to the effective user (root: any
 *   owner) and be writable by its owner by its mode (root: some write bit
 *   set); a read-only file is refused.
 * Then the lock: flock on OUT.lock (a regular file, opened without
 * following links) for the whole run or resume; a second writer fails at
 * once with "OUT is in use by process N". The lock file holds the pid and
 * is removed, while still locked, when the run ends.
 *
 * Files are written under a temporary name, created after removing any
 * stale entry there with O_CREAT | O_EXCL | O_NOFOLLOW, then renamed over
 * the final name (which must still be absent or a regular file). HDF5 1.10
 * opens files by name: it is given /proc/self/fd/N of the file created
 * exclusively, so it opens that very file whatever happens to the name
 * (without /proc: the name, which under the directory rule above no other
 * user can change), and the file it opened is checked to be ours before
 * anything is written. */
#include "output/output_files.h"

#include "avi/output.h"
#include "base/error.h"
#include "base/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Names whose content matters (replaced or removed only under the
 * ownership rule; a symbolic link there is refused), as opposed to
 * temporaries and the lock (a stale entry there is removed). */
static int is_final(avi_output_name n)
{
    return n == AVI_OUT_MAIN || n == AVI_OUT_XMF || n == AVI_OUT_CKPT || n == AVI_OUT_ASIDE;
}

static int same_inode(const struct stat *a, const struct stat *b)
{
    return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

/* The directory part of a path ("." for a bare name). */
static void directory_of(const char *path, char *dir, size_t size)
{
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, size, ".");
    else *(slash == dir ? slash + 1 : slash) = '\0';
}

/* ------------------------------------------------------------------ names */

void avi_checkpoint_path(const char *output_path, char *out, size_t size)
{
    snprintf(out, size, "%s.ckpt", output_path);
}

/* The sidecar's name is one of the run's names: here, not in xdmf.c, which
 * creates its files through this one (no circle). */
int avi_xdmf_default_path(const char *h5_path, char *out, size_t size)
{
    size_t n = strlen(h5_path);
    if (n >= 3 && !strcmp(h5_path + n - 3, ".h5")) n -= 3;
    if (n + 5 > size) return AVI_ERR_INPUT;
    memcpy(out, h5_path, n);
    memcpy(out + n, ".xmf", 5);
    return 0;
}

static int make_names(avi_output_files *f, const char *out, avi_error *err)
{
    size_t n = strlen(out) + 32;
    for (int i = 0; i < AVI_OUT_COUNT; i++)
        if (!(f->path[i] = malloc(n))) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", out);
    snprintf(f->path[AVI_OUT_MAIN], n, "%s", out);
    snprintf(f->path[AVI_OUT_PART], n, "%s" AVI_OUTPUT_PART_SUFFIX, out);
    avi_xdmf_default_path(out, f->path[AVI_OUT_XMF], n);
    snprintf(f->path[AVI_OUT_XMF_TMP], n, "%s" AVI_OUTPUT_TMP_SUFFIX, f->path[AVI_OUT_XMF]);
    avi_checkpoint_path(out, f->path[AVI_OUT_CKPT], n);
    snprintf(f->path[AVI_OUT_CKPT_TMP], n, "%s" AVI_OUTPUT_TMP_SUFFIX, f->path[AVI_OUT_CKPT]);
    snprintf(f->path[AVI_OUT_ASIDE], n, "%s.resume-old", out);
    snprintf(f->path[AVI_OUT_LOCK], n, "%s.lock", out);
    return 0;
}

static int check_path_syntax(const char *out, avi_error *err)
{
    size_t n = out ? strlen(out) : 0;
    if (n == 0) return avi_error_set(err, AVI_ERR_INPUT, "no output file given (the output path is empty)");
    if (out[n - 1] == '/')
        return avi_error_set(err, AVI_ERR_INPUT, "%s: names a directory (ends in '/'); give a file name", out);
    if (n > PATH_MAX - 32) return avi_error_set(err, AVI_ERR_INPUT, "%.200s...: output path too long", out);
    return 0;
}

static int check_directory(const char *out, struct stat *dir_st, avi_error *err)
{
    char dir[PATH_MAX];
    directory_of(out, dir, sizeof dir);
    struct stat st;
    if (stat(dir, &st) != 0)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot write there: directory %s: %s", out, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode))
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot write there: %s is not a directory", out, dir);
    if (faccessat(AT_FDCWD, dir, W_OK | X_OK, AT_EACCESS) != 0)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot write in directory %s (%s)", out, dir, strerror(errno));
    if ((st.st_mode & S_IWOTH) && !(st.st_mode & S_ISVTX))
        return avi_error_set(err, AVI_ERR_INPUT,
                             "%s: directory %s is writable by every user and not sticky, so anyone could replace "
                             "the files written there; write elsewhere (or make it sticky: chmod +t)",
                             out, dir);
    *dir_st = st;
    return 0;
}

/* ----------------------------------------------------------------- inputs */

typedef struct {
    struct stat st;
    const char *path;
    const char *body; /* NULL: the scene file */
} input_file;

/* The scene file and the mesh files, where they exist. */
static input_file *collect_inputs(const avi_scene *scene, const char *scene_file, size_t *count)
{
    size_t cap = 1 + (scene ? scene->body_count : 0), n = 0;
    input_file *in = calloc(cap, sizeof *in);
    if (!in) return NULL;
    if (scene_file && stat(scene_file, &in[n].st) == 0) in[n++].path = scene_file;
    for (size_t b = 0; scene && b < scene->body_count; b++) {
        const avi_scene_body *B = &scene->bodies[b];
        if (B->mesh.source != AVI_MESH_FILE || !B->mesh.file || stat(B->mesh.file, &in[n].st) != 0) continue;
        in[n].path = B->mesh.file;
        in[n++].body = B->name;
    }
    *count = n;
    return in;
}

static int check_not_input(const char *path, const struct stat *st, const input_file *in, size_t n, avi_error *err)
{
    for (size_t i = 0; i < n; i++) {
        if (!same_inode(st, &in[i].st)) continue;
        if (!in[i].body)
            return avi_error_set(err, AVI_ERR_INPUT, "%s: is the scene file being read (%s); choose another output",
                                 path, in[i].path);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: is the mesh file of body '%s' (%s); choose another output",
                             path, in[i].body, in[i].path);
    }
    return 0;
}

/* ------------------------------------------------------------ name rules */

static int check_replaceable(const char *path, const struct stat *st, avi_error *err)
{
    uid_t me = geteuid();
    if (me != 0 && st->st_uid != me)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: belongs to another user (uid %lu); refusing to replace it", path,
                             (unsigned long)st->st_uid);
    if (!(st->st_mode & (me == 0 ? 0222 : S_IWUSR)))
        return avi_error_set(err, AVI_ERR_INPUT, "%s: is read-only; refusing to replace it", path);
    return 0;
}

/* In a sticky directory only the owner of a file (or of the directory, or
 * root) may remove or rename it. */
static int check_removable(const char *path, const struct stat *st, const struct stat *dir, avi_error *err)
{
    uid_t me = geteuid();
    if (!(dir->st_mode & S_ISVTX) || me == 0 || st->st_uid == me || dir->st_uid == me) return 0;
    return avi_error_set(err, AVI_ERR_INPUT, "%s: belongs to another user (uid %lu) in a sticky directory; "
                         "cannot remove it", path, (unsigned long)st->st_uid);
}

static int check_name(const avi_output_files *f, avi_output_name name, const struct stat *dir, const input_file *in,
                      size_t n, avi_error *err)
{
    const char *path = f->path[name];
    struct stat st;
    if (lstat(path, &st) != 0)
        return errno == ENOENT ? 0 : avi_error_set(err, AVI_ERR_INPUT, "%s: %s", path, strerror(errno));
    if (S_ISLNK(st.st_mode)) {
        /* At a temporary's name: removed, not followed, when it is created. */
        if (!is_final(name)) return check_removable(path, &st, dir, err);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: is a symbolic link; %s", path,
                             name == AVI_OUT_MAIN ? "give its target" : "remove it or choose another output");
    }
    if (!S_ISREG(st.st_mode))
        return avi_error_set(err, AVI_ERR_INPUT, "%s: exists and is %s, not a regular file; refusing to replace it",
                             path, avi_file_kind(st.st_mode));
    if (check_not_input(path, &st, in, n, err)) return AVI_ERR_INPUT;
    return is_final(name) ? check_replaceable(path, &st, err) : check_removable(path, &st, dir, err);
}

/* ------------------------------------------------------------------ lock */

/* The pid in a held lock file; 0 when it does not show within a moment
 * (the holder writes it right after locking). */
static long lock_holder(int fd)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        char text[32] = {0};
        ssize_t got = pread(fd, text, sizeof text - 1, 0);
        long pid = got > 0 ? strtol(text, NULL, 10) : 0;
        if (pid > 0) return pid;
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    }
    return 0;
}

static int lock_busy(const avi_output_files *f, int fd, avi_error *err)
{
    long pid = lock_holder(fd);
    close(fd);
    if (pid > 0) return avi_error_set(err, AVI_ERR_INPUT, "%s is in use by process %ld", f->path[AVI_OUT_MAIN], pid);
    return avi_error_set(err, AVI_ERR_INPUT, "%s is in use by another process (it holds %s)", f->path[AVI_OUT_MAIN],
                         f->path[AVI_OUT_LOCK]);
}

/* One attempt: 0 locked, 1 try again (the name changed under us), or an
 * error status. */
static int try_lock(avi_output_files *f, avi_error *err)
{
    const char *lock = f->path[AVI_OUT_LOCK];
    int fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0666);
    if (fd < 0 && errno == ELOOP && unlink(lock) == 0) return 1; /* a planted link is never a lock */
    if (fd < 0) return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot create the lock file (%s)", lock, strerror(errno));
    struct stat st, named;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: the lock file is not a regular file", lock);
    }
    if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK) return lock_busy(f, fd, err);
        int e = errno;
        close(fd);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot lock (%s)", lock, strerror(e));
    }
    /* A holder removes the name before it unlocks: the lock counts only on
     * the file the name still gives. A file we did not make (another
     * owner's, or a hard link to some other file) is removed, not written. */
    int ours = fstat(fd, &st) == 0 && lstat(lock, &named) == 0 && same_inode(&st, &named);
    if (!ours || st.st_nlink != 1 || st.st_uid != geteuid()) {
        int rc = !ours || unlink(lock) == 0 ? 1
                                            : avi_error_set(err, AVI_ERR_INPUT, "%s: not this user's lock file (%s)",
                                                            lock, strerror(errno));
        close(fd);
        return rc;
    }
    char pid[32];
    int len = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) != 0 || pwrite(fd, pid, (size_t)len, 0) != len) {
        int e = errno;
        unlink(lock);
        close(fd);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot write the lock file (%s)", lock, strerror(e));
    }
    f->lock_fd = fd;
    return 0;
}

static int take_lock(avi_output_files *f, avi_error *err)
{
    for (int attempt = 0; attempt < 100; attempt++) {
        int rc = try_lock(f, err);
        if (rc != 1) return rc;
    }
    return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot take the lock (the file keeps changing)",
                         f->path[AVI_OUT_LOCK]);
}

/* --------------------------------------------------------------- public */

static int check_all(avi_output_files *f, const char *out, const avi_scene *scene, const char *scene_file,
                     avi_error *err)
{
    struct stat dir;
    if (check_path_syntax(out, err) || make_names(f, out, err) || check_directory(out, &dir, err)) return -1;
    size_t n = 0;
    input_file *in = collect_inputs(scene, scene_file, &n);
    if (!in) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", out);
    int rc = 0;
    for (int name = 0; name < AVI_OUT_COUNT && rc == 0; name++) rc = check_name(f, (avi_output_name)name, &dir, in, n, err);
    free(in);
    return rc;
}

int avi_output_files_open(avi_output_files *f, const char *out, const avi_scene *scene, const char *scene_file,
                          avi_error *err)
{
    memset(f, 0, sizeof *f);
    f->lock_fd = -1;
    if (check_all(f, out, scene, scene_file, err) || take_lock(f, err)) {
        int status = err ? (int)err->status : AVI_ERR_INPUT;
        avi_output_files_close(f);
        return status;
    }
    return AVI_OK;
}

void avi_output_files_close(avi_output_files *f)
{
    if (f->lock_fd >= 0) {
        struct stat st, named;
        if (fstat(f->lock_fd, &st) == 0 && lstat(f->path[AVI_OUT_LOCK], &named) == 0 && same_inode(&st, &named))
            unlink(f->path[AVI_OUT_LOCK]);
        close(f->lock_fd);
    }
    for (int i = 0; i < AVI_OUT_COUNT; i++) free(f->path[i]);
    memset(f, 0, sizeof *f);
    f->lock_fd = -1;
}

static int remove_name(const char *path, const char *what, avi_error *err)
{
    if (unlink(path) == 0 || errno == ENOENT) return 0;
    return avi_error_set(err, AVI_ERR_RUN, "%s: cannot remove %s: %s", path, what, strerror(errno));
}

int avi_output_files_clear_stale(const avi_output_files *f, avi_error *err)
{
    if (remove_name(f->path[AVI_OUT_ASIDE], "an earlier run's set-aside output", err) ||
        remove_name(f->path[AVI_OUT_CKPT], "an earlier run's checkpoint", err) ||
        remove_name(f->path[AVI_OUT_CKPT_TMP], "an earlier run's temporary checkpoint", err))
        return AVI_ERR_RUN;
    return AVI_OK;
}

int avi_output_files_set_aside(const avi_output_files *f, avi_error *err)
{
    struct stat st;
    if (lstat(f->path[AVI_OUT_ASIDE], &st) == 0) return AVI_OK;
    if (rename(f->path[AVI_OUT_MAIN], f->path[AVI_OUT_ASIDE]) != 0)
        return avi_error_set(err, AVI_ERR_RUN, "%s: cannot move the earlier output aside: %s", f->path[AVI_OUT_MAIN],
                             strerror(errno));
    return AVI_OK;
}

int avi_output_files_drop_aside(const avi_output_files *f, avi_error *err)
{
    return remove_name(f->path[AVI_OUT_ASIDE], "the earlier output", err) ? AVI_ERR_RUN : AVI_OK;
}

void avi_output_files_put_back(const avi_output_files *f)
{
    rename(f->path[AVI_OUT_ASIDE], f->path[AVI_OUT_MAIN]);
}

/* ---------------------------------------------------------------- writing */

int avi_output_create(const char *path, avi_error *err)
{
    if (unlink(path) != 0 && errno != ENOENT) {
        avi_error_set(err, AVI_ERR_RUN, "%s: creating the file failed: cannot remove the stale one (%s)", path,
                      strerror(errno));
        return -1;
    }
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (fd < 0) avi_error_set(err, AVI_ERR_RUN, "%s: creating the file failed (%s)", path, strerror(errno));
    return fd;
}

int avi_output_h5_is(hid_t file, dev_t dev, ino_t ino)
{
    struct stat st;
    int *h5fd = NULL;
    if (H5Fget_vfd_handle(file, H5P_DEFAULT, (void **)&h5fd) < 0 || !h5fd || fstat(*h5fd, &st) != 0) return 0;
    return st.st_dev == dev && st.st_ino == ino;
}

/* HDF5's file is ours: the inode we created, still named `path`. */
static int is_ours(hid_t file, int fd, const char *path)
{
    struct stat mine, named;
    if (fstat(fd, &mine) != 0 || lstat(path, &named) != 0 || !S_ISREG(named.st_mode) || !same_inode(&mine, &named))
        return 0;
    return avi_output_h5_is(file, mine.st_dev, mine.st_ino);
}

hid_t avi_output_create_h5(const char *path, hid_t fapl, int *fd_out, avi_error *err)
{
    int fd = avi_output_create(path, err);
    if (fd < 0) return -1;
    char self[64];
    snprintf(self, sizeof self, "/proc/self/fd/%d", fd);
    errno = 0;
    hid_t file = H5Fcreate(access(self, F_OK) == 0 ? self : path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    int e = errno;
    const char *why = file < 0 ? (e ? strerror(e) : "HDF5 error") : !is_ours(file, fd, path) ? "it was replaced" : NULL;
    if (why) {
        if (file >= 0) H5Fclose(file);
        else unlink(path);
        H5Eclear2(H5E_DEFAULT);
        close(fd);
        avi_error_set(err, AVI_ERR_RUN, "%s: creating the file failed (%s)", path, why);
        return -1;
    }
    if (fd_out) *fd_out = fd;
    else close(fd);
    return file;
}

/* The directory entry of a rename made durable (best effort: the rename
 * itself is atomic). */
static void sync_directory(const char *path)
{
    char dir[PATH_MAX];
    directory_of(path, dir, sizeof dir);
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return;
    fsync(fd);
    close(fd);
}

int avi_output_commit(const char *tmp, const char *path, avi_error *err)
{
    struct stat st;
    if (lstat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        unlink(tmp);
        return avi_error_set(err, AVI_ERR_RUN, "%s: exists and is %s, not a regular file; refusing to replace it",
                             path, avi_file_kind(st.st_mode));
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return avi_error_set(err, AVI_ERR_RUN, "%s: moving the new file into place failed (%s)", path, strerror(e));
    }
    sync_directory(path);
    return AVI_OK;
}
