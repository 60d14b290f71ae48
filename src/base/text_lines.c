/* Text files read whole and split into numbered lines, shared by the Gmsh
 * and OBJ readers. */
#include "base/text_lines.h"
#include "base/regular_file.h"
#include "base/grow.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "path:line: message" */
int avi_text_fail_at(avi_text *t, size_t line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset_line(t->err, AVI_ERR_INPUT, t->path, line, fmt, ap);
    va_end(ap);
    return rc;
}

int avi_text_load(avi_text *t, const char *path, avi_error *err)
{
    memset(t, 0, sizeof *t);
    t->path = path;
    t->err = err;
    const char *why = NULL;
    FILE *f = avi_input_fopen(path, &why);
    if (!f) return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot open: %s", path, why);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        if (AVI_GROW(buf, cap, n + 2, 1 << 16)) { /* room for a byte and the NUL */
            free(buf);
            buf = NULL;
            break;
        }
        size_t got = fread(buf + n, 1, cap - 1 - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    int saved = errno;
    fclose(f);
    if (!buf) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory reading the file", path);
    if (bad) {
        free(buf);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read: %s", path, strerror(saved));
    }
    if (avi_sha256(buf, n, t->sha256)) {
        free(buf);
        return avi_error_set(err, AVI_ERR_RUN, "%s: hashing the file failed", path);
    }
    buf[n] = '\0';
    char *nul = memchr(buf, '\0', n);
    t->buf = buf;
    t->size = n;
    t->nul_at = nul ? (size_t)(nul - buf) : n;
    return AVI_OK;
}

/* Next line without its line ending; *line = NULL at the end of the file. */
int avi_text_next(avi_text *t, char **line)
{
    *line = NULL;
    if (t->pos >= t->size) return AVI_OK;
    char *s = t->buf + t->pos;
    char *nl = memchr(s, '\n', t->size - t->pos);
    size_t end = nl ? (size_t)(nl - t->buf) : t->size;
    t->line++;
    if (t->nul_at >= t->pos && t->nul_at < end)
        return avi_text_fail_at(t, t->line, "binary data (NUL byte): not an ASCII text file");
    t->buf[end] = '\0';
    if (end > t->pos && t->buf[end - 1] == '\r') t->buf[end - 1] = '\0';
    t->pos = end + 1;
    *line = s;
    return AVI_OK;
}

