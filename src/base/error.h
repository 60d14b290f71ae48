/* Filling an avi_error: the one helper every module reports through. */
#ifndef AVI_CORE_ERROR_H
#define AVI_CORE_ERROR_H

#include "avi/types.h"

#include <stdarg.h>
#include <stddef.h>

/* Formats the message into err (when not NULL), sets its status, and
 * returns the status, so that `return avi_error_set(err, ...)` reports and
 * fails in one step. */
int avi_error_set(avi_error *err, avi_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int avi_error_vset(avi_error *err, avi_status status, const char *fmt, va_list ap);

/* The same after a position: "WHERE: MESSAGE", where WHERE is what the
 * caller names (a file, "file:line", "file: byte N", a key). The whole is
 * cut at the message's size, the position first in. The arguments (not
 * where) may point into err->message: a message wrapped in a position. */
int avi_error_set_at(avi_error *err, avi_status status, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
int avi_error_vset_at(avi_error *err, avi_status status, const char *where, const char *fmt, va_list ap);

/* "PATH:LINE: MESSAGE", the position in a text file. */
int avi_error_vset_line(avi_error *err, avi_status status, const char *path, size_t line, const char *fmt,
                        va_list ap);

/* Appends to the message while it has room (a detail after a message that
 * fits, nothing after a cut one); status unchanged. Returns err's status,
 * AVI_OK when err is NULL. */
int avi_error_append(avi_error *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
