#include "base/error.h"

#include <stdio.h>
#include <string.h>

int avi_error_vset(avi_error *err, avi_status status, const char *fmt, va_list ap)
{
    if (err) {
        vsnprintf(err->message, sizeof err->message, fmt, ap);
        err->status = status;
    }
    return status;
}

int avi_error_set(avi_error *err, avi_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset(err, status, fmt, ap);
    va_end(ap);
    return rc;
}

/* src cut to size - 1 bytes (snprintf "%s" without the warning that a
 * whole-message buffer may not fit). */
static void put(char *dst, size_t size, const char *src)
{
    size_t n = strnlen(src, size - 1);
    memcpy(dst, src, n);
    dst[n] = 0;
}

int avi_error_vset_at(avi_error *err, avi_status status, const char *where, const char *fmt, va_list ap)
{
    if (err) {
        /* Formatted aside first: an argument may be err->message itself
         * (another module's message wrapped in a position). */
        char msg[sizeof err->message];
        vsnprintf(msg, sizeof msg, fmt, ap);
        int n = snprintf(err->message, sizeof err->message, "%s: ", where);
        if (n >= 0 && (size_t)n < sizeof err->message) put(err->message + n, sizeof err->message - (size_t)n, msg);
        err->status = status;
    }
    return status;
}

int avi_error_set_at(avi_error *err, avi_status status, const char *where, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset_at(err, status, where, fmt, ap);
    va_end(ap);
    return rc;
}

int avi_error_vset_line(avi_error *err, avi_status status, const char *path, size_t line, const char *fmt,
                        va_list ap)
{
    char where[sizeof err->message];
    snprintf(where, sizeof where, "%s:%zu", path, line);
    return avi_error_vset_at(err, status, where, fmt, ap);
}

int avi_error_append(avi_error *err, const char *fmt, ...)
{
    if (!err) return AVI_OK;
    size_t n = strlen(err->message);
    if (n + 1 < sizeof err->message) {
        char more[sizeof err->message];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(more, sizeof more, fmt, ap);
        va_end(ap);
        put(err->message + n, sizeof err->message - n, more);
    }
    return err->status;
}
