/* Shared body of the mesh reader harnesses: read the input as a file and
 * check the reader's contract (mesh.h): on success the mesh passes
 * avi_mesh_validate; on failure the mesh is all zero and the error is
 * filled with a non-empty, terminated message. */
#ifndef AVI_FUZZ_MESH_H
#define AVI_FUZZ_MESH_H

#include "avi/mesh.h"
#include "fuzz_file.h"

typedef int (*fuzz_reader)(const char *path, avi_mesh *out, avi_error *err);

static void fuzz_mesh_fail(const char *what, const avi_error *err)
{
    fprintf(stderr, "fuzz: %s (status %d: %.*s)\n", what, (int)err->status, (int)sizeof err->message,
            err->message);
    abort();
}

static int fuzz_mesh_one(fuzz_reader read, const char *suffix, const uint8_t *data, size_t size)
{
    const char *path = fuzz_file(data, size, suffix);
    avi_mesh m;
    avi_error err;
    memset(&m, 0xa5, sizeof m);
    memset(&err, 0, sizeof err);
    int rc = read(path, &m, &err);
    if (rc == AVI_OK) {
        if (m.vertex_count == 0 || (m.triangle_count == 0 && m.tet_count == 0))
            fuzz_mesh_fail("reader succeeded with an empty mesh", &err);
        avi_error verr;
        memset(&verr, 0, sizeof verr);
        if (avi_mesh_validate(&m, "fuzz", &verr) != AVI_OK)
            fuzz_mesh_fail("reader succeeded with a mesh that fails avi_mesh_validate", &verr);
    } else {
        static const avi_mesh zero;
        if (memcmp(&m, &zero, sizeof m) != 0) fuzz_mesh_fail("failed read left a non-empty mesh", &err);
        if ((int)err.status != rc) fuzz_mesh_fail("error status differs from the return value", &err);
        if (!memchr(err.message, '\0', sizeof err.message) || err.message[0] == '\0')
            fuzz_mesh_fail("empty or unterminated error message", &err);
    }
    avi_mesh_free(&m);
    return 0;
}

#endif
