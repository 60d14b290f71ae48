/* avi: shared types of the public API. */
#ifndef AVI_TYPES_H
#define AVI_TYPES_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define AVI_VERSION_STRING "0.1.0"

/* Potential kinds. The enumeration order is the kind rank of the event-queue
 * tie rule: events at equal times run in (time, kind rank, potential index)
 * order. */
typedef enum {
    AVI_KIND_SPRING = 0,
    AVI_KIND_MEMBRANE = 1,
    AVI_KIND_HINGE = 2,
    AVI_KIND_TET = 3,
    AVI_KIND_MIDEDGE = 4, /* mid-edge bending triangles (after the kinds before it,
                             so their tie order is unchanged) */
    AVI_KIND_GRAVITY = 5,
    AVI_KIND_CONTACT = 6,
    AVI_KIND_COUNT
} avi_kind;

/* Room for kinds in public structs (avi_observation.events): their layout
 * does not change when a kind is added, up to this many. */
#define AVI_KIND_MAX 16

/* Short lower-case name of a kind ("spring", "membrane", ...). */
const char *avi_kind_name(avi_kind kind);

/* Status codes; the values double as process exit codes. */
typedef enum {
    AVI_OK = 0,
    AVI_ERR_RUN = 1,   /* the run failed: blow-up, I/O error */
    AVI_ERR_INPUT = 2, /* bad usage or bad input */
    AVI_INTERRUPTED = 130 /* stopped on request (SIGINT / SIGTERM): 128 + SIGINT */
} avi_status;

/* Human-readable description of the last failure of an object. */
typedef struct {
    avi_status status;
    char message[512];
} avi_error;

#ifdef __cplusplus
}
#endif

#endif
