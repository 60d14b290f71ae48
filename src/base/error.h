/* Filling an avi_error: the one helper every module reports through. */
#ifndef AVI_CORE_ERROR_H
#define AVI_CORE_ERROR_H

#include "avi/types.h"

#include <stdarg.h>

/* Formats the message into err (when not NULL), sets its status, and
 * returns the status, so that `return avi_error_set(err, ...)` reports and
 * fails in one step. */
int avi_error_set(avi_error *err, avi_status status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int avi_error_vset(avi_error *err, avi_status status, const char *fmt, va_list ap);

#endif
