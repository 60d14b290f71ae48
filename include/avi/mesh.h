/* avi: plain triangle / tetrahedron meshes, from generators and files. */
#ifndef AVI_MESH_H
#define AVI_MESH_H

#include "avi/types.h"

typedef struct {
    size_t vertex_count;
    double (*x)[3];
    size_t triangle_count;
    uint32_t (*triangles)[3];
    size_t tet_count;
    uint32_t (*tets)[4];
} avi_mesh;

/* Frees the arrays and zeroes the mesh. */
void avi_mesh_free(avi_mesh *mesh);

#endif
