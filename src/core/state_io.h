/* A module's checkpoint state as named arrays of numbers: what the engine
 * (core/engine_state.c), its steppers and the contact manager hand to src/run (which stores each
 * array as an HDF5 dataset of that name, the same type and n rows of
 * `width` columns, a vector when width is 1) and get back on resume. The
 * modules name their arrays and never see the file. */
#ifndef AVI_STATE_IO_H
#define AVI_STATE_IO_H

#include <stddef.h>
#include <stdint.h>

typedef enum { AVI_STATE_U8, AVI_STATE_U32, AVI_STATE_U64, AVI_STATE_F64 } avi_state_type;

/* C types of the element types, for tables over fields (AVI_STATE_C(U32)). */
#define AVI_STATE_C_U8 uint8_t
#define AVI_STATE_C_U32 uint32_t
#define AVI_STATE_C_U64 uint64_t
#define AVI_STATE_C_F64 double
#define AVI_STATE_C(T) AVI_STATE_C_##T

/* How a group of arrays (a sub-module's state) is reached. */
typedef enum { AVI_STATE_CREATE, AVI_STATE_OPEN, AVI_STATE_OPEN_IF_PRESENT } avi_state_group_mode;

typedef struct avi_state_io {
    /* stores n x width elements under name: 0, or -1 on failure */
    int (*put)(struct avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width,
               const void *data);
    /* the number of elements stored under name, -1 when there is none */
    long (*count)(struct avi_state_io *io, const char *name);
    /* reads exactly n elements: 0, or -1 when absent or of another size */
    int (*get)(struct avi_state_io *io, const char *name, avi_state_type type, size_t n, void *data);
    /* put of columns [col, col + width) of n rows of `stride` elements */
    int (*put_columns)(struct avi_state_io *io, const char *name, avi_state_type type, size_t n, size_t width,
                       const void *rows, size_t stride, size_t col);
    /* *sub: the io of the group `name` (CREATE to save; OPEN to load, or
     * OPEN_IF_PRESENT, *sub NULL when there is none): 0, or -1 on failure
     * (a group OPEN does not find counts as a failed get) */
    int (*group)(struct avi_state_io *io, const char *name, avi_state_group_mode mode, struct avi_state_io **sub);
    /* ends a group's io; failed: its module's load failed, and the group's
     * first failed get names the missing array */
    void (*close)(struct avi_state_io *sub, int failed);
} avi_state_io;

#endif
