/* Mesh files read together with the SHA-256 of the bytes the reader parsed
 * (sha256 may be NULL), so that a checkpoint records exactly what a run
 * read and `avi resume` can tell when a file changed. Otherwise as
 * avi_mesh_read, avi_mesh_read_msh and avi_mesh_read_obj. */
#ifndef AVI_MESH_FILE_H
#define AVI_MESH_FILE_H

#include "avi/mesh.h"
#include "base/sha256.h"

int avi_mesh_read_hashed(const char *path, avi_mesh *out, unsigned char *sha256, avi_error *err);
int avi_mesh_read_msh_hashed(const char *path, avi_mesh *out, unsigned char *sha256, avi_error *err);
int avi_mesh_read_obj_hashed(const char *path, avi_mesh *out, unsigned char *sha256, avi_error *err);

/* Drops the vertices no element uses (tetrahedra when the mesh has any,
 * else triangles): the geometry and size-control points a Gmsh file keeps
 * beside its mesh. Keeps the others in order and renumbers the elements;
 * triangles of a tet mesh that use a dropped vertex are dropped with it.
 * old_to_new (vertex_count entries before the call) gets each vertex's new
 * index, UINT32_MAX for a dropped one; *dropped the count. */
int avi_mesh_drop_unused(avi_mesh *m, uint32_t *old_to_new, size_t *dropped, avi_error *err);

#endif
