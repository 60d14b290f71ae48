/* Reading a mesh file by its extension: .msh (mesh_msh.c) or .obj
 * (mesh_obj.c). Its own file so that the readers, which validate through
 * mesh.c, are called from above it and not from mesh.c (no circle). */
#include "avi/mesh.h"
#include "base/error.h"
#include "mesh/mesh_file.h"

#include <string.h>
#include <strings.h>

int avi_mesh_read(const char *path, avi_mesh *out, avi_error *err)
{
    return avi_mesh_read_hashed(path, out, NULL, err);
}

int avi_mesh_read_hashed(const char *path, avi_mesh *out, unsigned char *sha256, avi_error *err)
{
    memset(out, 0, sizeof *out);
    if (!path || !*path) return avi_error_set(err, AVI_ERR_INPUT, "mesh file: empty path");
    const char *dot = strrchr(path, '.');
    const char *slash = strrchr(path, '/');
    if (dot && (!slash || dot > slash)) {
        if (strcasecmp(dot, ".msh") == 0) return avi_mesh_read_msh_hashed(path, out, sha256, err);
        if (strcasecmp(dot, ".obj") == 0) return avi_mesh_read_obj_hashed(path, out, sha256, err);
    }
    return avi_error_set(err, AVI_ERR_INPUT, "%s: unknown mesh file type (expected a .msh or .obj extension)", path);
}
