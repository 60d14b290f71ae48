/* libFuzzer harness: Wavefront .obj reader (avi_mesh_read_obj). */
#include "fuzz_mesh.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    return fuzz_mesh_one(avi_mesh_read_obj, ".obj", data, size);
}
