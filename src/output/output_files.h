/* Every file avi creates: an output OUT, its XDMF sidecar, its checkpoint,
 * their temporaries, the earlier output set aside by a resume and the lock
 * (the rules are at the top of output_files.c). */
#ifndef AVI_OUTPUT_FILES_H
#define AVI_OUTPUT_FILES_H

#include "avi/scene.h"
#include "avi/types.h"

#include <hdf5.h>

/* Temporaries: a file is written under FINAL + suffix and renamed over
 * FINAL once complete (the output: OUT.part; the sidecar and the
 * checkpoint: .tmp). */
#define AVI_OUTPUT_PART_SUFFIX ".part"
#define AVI_OUTPUT_TMP_SUFFIX ".tmp"

typedef enum {
    AVI_OUT_MAIN,     /* OUT */
    AVI_OUT_PART,     /* OUT.part */
    AVI_OUT_XMF,      /* OUT.xmf (OUT without .h5, plus .xmf) */
    AVI_OUT_XMF_TMP,  /* OUT.xmf.tmp */
    AVI_OUT_CKPT,     /* OUT.ckpt */
    AVI_OUT_CKPT_TMP, /* OUT.ckpt.tmp */
    AVI_OUT_ASIDE,    /* OUT.resume-old: the earlier output during a resume */
    AVI_OUT_LOCK,     /* OUT.lock */
    AVI_OUT_COUNT
} avi_output_name;

/* The files of one run or resume, and its lock. */
typedef struct {
    char *path[AVI_OUT_COUNT];
    int lock_fd; /* -1: no lock held */
} avi_output_files;

/* Checks every name of the output `out` against the rules (nothing is
 * created or changed when one fails), then takes the lock: a second writer
 * fails at once with "OUT is in use by process N". `scene` gives the mesh
 * files being read and `scene_file` (may be NULL) the scene file; none of
 * them may be one of the output's files. Returns 0, or AVI_ERR_INPUT
 * (AVI_ERR_RUN when out of memory) with err filled and `f` empty. */
int avi_output_files_open(avi_output_files *f, const char *out, const avi_scene *scene, const char *scene_file,
                          avi_error *err);

/* Releases the lock (the lock file is removed while still held) and frees
 * the names. Safe on an empty or closed `f`. */
void avi_output_files_close(avi_output_files *f);

/* A fresh run: removes the checkpoint and set-aside output of an earlier
 * run of this path, which a later resume must not mix with this one. */
int avi_output_files_clear_stale(const avi_output_files *f, avi_error *err);

/* A resume: moves OUT to OUT.resume-old, unless a killed resume left it
 * there already (then it, not OUT, is the earlier output). */
int avi_output_files_set_aside(const avi_output_files *f, avi_error *err);
/* Once its rows are copied: removes OUT.resume-old. */
int avi_output_files_drop_aside(const avi_output_files *f, avi_error *err);
/* A resume that failed before its new OUT was complete: the earlier output
 * back at OUT. */
void avi_output_files_put_back(const avi_output_files *f);

/* Creates `path` as a new, empty file: a stale entry there (left by a
 * killed run, or a planted symbolic link) is removed first, never followed,
 * and the file is created exclusively (O_EXCL | O_NOFOLLOW). Returns the
 * descriptor (write-only), or -1 with err filled. */
int avi_output_create(const char *path, avi_error *err);

/* The same for an HDF5 file created with `fapl`: HDF5 opens the very file
 * created above (checked: same device and inode as ours, still named
 * `path`) before anything is written. Returns the HDF5 file and, when `fd`
 * is not NULL, our descriptor of it (the caller closes it; e.g. to fsync);
 * -1 with err filled. */
hid_t avi_output_create_h5(const char *path, hid_t fapl, int *fd, avi_error *err);

/* Whether the open HDF5 file is the file (dev, ino): not one put at its
 * name since. */
int avi_output_h5_is(hid_t file, dev_t dev, ino_t ino);

/* Renames a complete temporary over `path`, unless `path` is something
 * other than a regular file (a symbolic link, directory, device, FIFO or
 * socket would be replaced), and syncs the directory. On failure the
 * temporary is removed. */
int avi_output_commit(const char *tmp, const char *path, avi_error *err);

/* The checkpoint path of an output file: "<output>.ckpt". */
void avi_checkpoint_path(const char *output_path, char *out, size_t size);

#endif
