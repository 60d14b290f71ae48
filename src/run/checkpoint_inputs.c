/* The input files of a run, recorded in its checkpoints and checked again
 * by `avi resume` (src/run/checkpoint.h). */
#include "run/checkpoint.h"
#include "base/error.h"
#include "base/sha256.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int add(avi_input_files *f, avi_input_kind kind, const char *path, const unsigned char *sha256)
{
    avi_input_file *more = realloc(f->files, (f->count + 1) * sizeof *more);
    if (!more) return -1;
    f->files = more;
    avi_input_file *x = &f->files[f->count];
    if (!(x->path = strdup(path))) return -1;
    x->kind = kind;
    memcpy(x->sha256, sha256, sizeof x->sha256);
    f->count++;
    return 0;
}

int avi_input_files_of(const avi_scene *scene, const avi_scene_bodies *info, avi_input_files *out, avi_error *err)
{
    memset(out, 0, sizeof *out);
    int rc = scene->file ? add(out, AVI_INPUT_SCENE, scene->file, scene->file_sha256) : 0;
    for (size_t b = 0; b < scene->body_count && b < info->count && !rc; b++)
        if (scene->bodies[b].mesh.source == AVI_MESH_FILE)
            rc = add(out, AVI_INPUT_MESH, scene->bodies[b].mesh.file, info->bodies[b].mesh_sha256);
    if (rc) {
        avi_input_files_free(out);
        return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    }
    return AVI_OK;
}

void avi_input_files_free(avi_input_files *files)
{
    for (size_t i = 0; i < files->count; i++) free(files->files[i].path);
    free(files->files);
    memset(files, 0, sizeof *files);
}

static const avi_input_file *find(const avi_input_files *f, const avi_input_file *like)
{
    for (size_t i = 0; i < f->count; i++)
        if (f->files[i].kind == like->kind && strcmp(f->files[i].path, like->path) == 0) return &f->files[i];
    return NULL;
}

/* Twelve hex digits: enough to tell two hashes apart in a message. */
static void short_hex(const unsigned char *sha256, char out[13])
{
    char hex[AVI_SHA256_HEX];
    avi_sha256_hex(sha256, hex);
    memcpy(out, hex, 12);
    out[12] = '\0';
}

int avi_input_files_present(const char *checkpoint, const avi_input_files *recorded, avi_error *err)
{
    for (size_t i = 0; i < recorded->count; i++) {
        const avi_input_file *r = &recorded->files[i];
        struct stat st;
        if (r->kind != AVI_INPUT_MESH) continue;
        const char *why = stat(r->path, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
        if (why)
            return avi_error_set(err, AVI_ERR_INPUT, "mesh file %s, read by the run (recorded in %s), is missing: %s; "
                                 "restore it to resume", r->path, checkpoint, why);
    }
    return AVI_OK;
}

int avi_input_files_match(const char *checkpoint, const avi_input_files *recorded, const avi_input_files *now,
                          avi_error *err)
{
    for (size_t i = 0; i < recorded->count; i++) {
        const avi_input_file *r = &recorded->files[i];
        if (r->kind != AVI_INPUT_MESH) continue; /* the scene's text is in the checkpoint */
        const avi_input_file *n = find(now, r);
        if (!n)
            return avi_error_set(err, AVI_ERR_INPUT, "%s: mesh file %s, read by the run, was not read again", checkpoint,
                                 r->path);
        if (memcmp(n->sha256, r->sha256, sizeof r->sha256) != 0) {
            char was[13], is[13];
            short_hex(r->sha256, was);
            short_hex(n->sha256, is);
            return avi_error_set(err, AVI_ERR_INPUT,
                                 "mesh file %s changed since the run started (SHA-256 %s... recorded in %s, %s... now); "
                                 "restore it to resume",
                                 r->path, was, checkpoint, is);
        }
    }
    for (size_t i = 0; i < now->count; i++)
        if (now->files[i].kind == AVI_INPUT_MESH && !find(recorded, &now->files[i]))
            return avi_error_set(err, AVI_ERR_INPUT, "%s: mesh file %s is not recorded in the checkpoint", checkpoint,
                                 now->files[i].path);
    return AVI_OK;
}
