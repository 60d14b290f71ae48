#include "base/error.h"

#include <stdio.h>

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
