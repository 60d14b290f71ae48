/* A text file read whole and handed out line by line, for the mesh
 * readers: lines are numbered for messages ("path:line: ..."), a NUL byte
 * or an unreadable file is an error, nothing else is trusted. */
#ifndef AVI_TEXT_LINES_H
#define AVI_TEXT_LINES_H

#include <stddef.h>

#include "avi/types.h"
#include "base/error.h"
#include "base/sha256.h"

typedef struct {
    const char *path;
    avi_error *err;
    char *buf;
    size_t size;
    size_t pos;
    size_t nul_at; /* first NUL byte, or size */
    size_t line;   /* number of the line last returned */
    unsigned char sha256[AVI_SHA256_LEN]; /* of the bytes read: what a checkpoint records */
} avi_text;

/* "path:line: message", status AVI_ERR_INPUT. */
int avi_text_fail_at(avi_text *t, size_t line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Reads the whole file; 0 or an error status. */
int avi_text_load(avi_text *t, const char *path, avi_error *err);
/* The next line (terminated in place) into *line; 0, 1 at the end, or an
 * error status. */
int avi_text_next(avi_text *t, char **line);

#endif
