/* Wavefront .obj reader: vertices and polygonal faces, fan-triangulated.
 *
 * Like the Gmsh reader it trusts nothing: every number and index is checked
 * and arrays grow only with what is read. */
#include "avi/mesh.h"
#include "mesh/mesh_file.h"
#include "base/text_lines.h"
#include "base/grow.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A printable excerpt of a line for messages. */
static const char *excerpt(const char *s, char out[48])
{
    size_t i = 0;
    for (; s[i] && i < 40; i++) out[i] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    if (s[i]) {
        memcpy(out + i, "...", 3);
        i += 3;
    }
    out[i] = '\0';
    return out;
}

/* Clamped line number for the validator's 32-bit line arrays. */
static uint32_t line32(size_t line) { return line > UINT32_MAX ? UINT32_MAX : (uint32_t)line; }

/* ---- Wavefront ---- */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

/* Next blank-separated token of *s (NUL-terminated in place), or NULL. */
static char *next_token(char **s)
{
    char *p = *s;
    while (is_blank(*p)) p++;
    if (!*p) {
        *s = p;
        return NULL;
    }
    char *tok = p;
    while (*p && !is_blank(*p)) p++;
    if (*p) *p++ = '\0';
    *s = p;
    return tok;
}

/* An optionally signed decimal integer at *p, advanced past it; at most
 * 2^40 in magnitude, more than any 32-bit mesh needs. */
static int read_int(const char **p, int64_t *v)
{
    const char *s = *p;
    int neg = *s == '-';
    if (neg || *s == '+') s++;
    if (*s < '0' || *s > '9') return 0;
    int64_t r = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        r = r * 10 + (*s - '0');
        if (r > ((int64_t)1 << 40)) return 0;
    }
    *v = neg ? -r : r;
    *p = s;
    return 1;
}

/* A face corner "i", "i/t", "i/t/n" or "i//n" to a 0-based vertex index.
 * Positive indices are checked against the vertex count at the end of the
 * file; negative ones count back from the vertices read so far. */
static int face_corner(avi_text *t, const char *tok, size_t nv, uint32_t *index)
{
    const char *p = tok;
    int64_t i, other;
    char ex[48];
    if (!read_int(&p, &i)) return avi_text_fail_at(t, t->line, "bad vertex reference '%s'", excerpt(tok, ex));
    if (*p == '/') {
        p++;
        if (*p != '/' && !read_int(&p, &other)) return avi_text_fail_at(t, t->line, "bad vertex reference '%s'", excerpt(tok, ex));
        if (*p == '/') {
            p++;
            if (!read_int(&p, &other)) return avi_text_fail_at(t, t->line, "bad vertex reference '%s'", excerpt(tok, ex));
        }
    }
    if (*p) return avi_text_fail_at(t, t->line, "bad vertex reference '%s'", excerpt(tok, ex));
    if (i == 0) return avi_text_fail_at(t, t->line, "vertex index 0 in '%s' (.obj indices start at 1)", excerpt(tok, ex));
    if (i < 0) {
        if ((uint64_t)-i > nv)
            return avi_text_fail_at(t, t->line, "relative vertex index %lld reaches before the first vertex (%zu vertices so far)",
                           (long long)i, nv);
        *index = (uint32_t)(nv - (size_t)-i);
    } else {
        if (i > (int64_t)UINT32_MAX - 1) return avi_text_fail_at(t, t->line, "vertex index %lld too large", (long long)i);
        *index = (uint32_t)(i - 1);
    }
    return AVI_OK;
}

typedef struct {
    avi_text t;
    double (*x)[3];
    size_t nv, cap_x;
    uint32_t (*tri)[3];
    uint32_t *tri_line;
    size_t nt, cap_t, cap_tl;
} obj;

static int oom(obj *r) { return avi_error_set(r->t.err, AVI_ERR_RUN, "%s: out of memory", r->t.path); }

static int read_vertex(obj *r, char *rest)
{
    char *tok;
    int n = 0;
    while ((tok = next_token(&rest))) {
        char *end;
        double v = strtod(tok, &end);
        char ex[48];
        if (end == tok || *end) return avi_text_fail_at(&r->t, r->t.line, "bad coordinate '%s'", excerpt(tok, ex));
        if (n < 3) {
            if (!isfinite(v)) return avi_text_fail_at(&r->t, r->t.line, "coordinate '%s' is not finite", excerpt(tok, ex));
            if (n == 0) {
                if (r->nv >= UINT32_MAX - 1) return avi_text_fail_at(&r->t, r->t.line, "too many vertices for 32-bit indices");
                if (AVI_GROW(r->x, r->cap_x, r->nv + 1, 256)) return oom(r);
            }
            r->x[r->nv][n] = v;
        } /* further numbers: w, or a vertex colour; checked, then dropped */
        n++;
    }
    if (n < 3 || n > 7) return avi_text_fail_at(&r->t, r->t.line, "expected 'v x y z', found %d numbers", n);
    r->nv++;
    return AVI_OK;
}

static int read_face(obj *r, char *rest)
{
    char *tok;
    uint32_t first = 0, prev = 0, v = 0;
    size_t n = 0;
    while ((tok = next_token(&rest))) {
        int rc = face_corner(&r->t, tok, r->nv, &v);
        if (rc) return rc;
        if (n >= 2) {
            if (AVI_GROW(r->tri, r->cap_t, r->nt + 1, 256) ||
                AVI_GROW(r->tri_line, r->cap_tl, r->nt + 1, 256))
                return oom(r);
            r->tri[r->nt][0] = first;
            r->tri[r->nt][1] = prev;
            r->tri[r->nt][2] = v;
            r->tri_line[r->nt++] = line32(r->t.line);
        }
        if (n == 0) first = v;
        prev = v;
        n++;
    }
    if (n < 3) return avi_text_fail_at(&r->t, r->t.line, "a face needs at least 3 vertices, found %zu", n);
    return AVI_OK;
}

static int parse(obj *r)
{
    static const char *const ignored[] = {"vt", "vn", "vp", "o", "g", "s", "l", "p", "usemtl", "mtllib"};
    char *line;
    for (;;) {
        int rc = avi_text_next(&r->t, &line);
        if (rc) return rc;
        if (!line) break;
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char *rest = line, *key = next_token(&rest), ex[48];
        if (!key) continue;
        if (strcmp(key, "v") == 0) {
            rc = read_vertex(r, rest);
        } else if (strcmp(key, "f") == 0) {
            rc = read_face(r, rest);
        } else {
            size_t k = 0, nk = sizeof ignored / sizeof ignored[0];
            while (k < nk && strcmp(key, ignored[k]) != 0) k++;
            if (k == nk)
                rc = avi_text_fail_at(&r->t, r->t.line, "unsupported statement '%s' (a mesh needs only v and f)", excerpt(key, ex));
        }
        if (rc) return rc;
    }
    if (r->nt == 0) return avi_text_fail_at(&r->t, r->t.line ? r->t.line : 1, "no faces (f lines) in the file");
    for (size_t t = 0; t < r->nt; t++)
        for (int k = 0; k < 3; k++)
            if (r->tri[t][k] >= r->nv)
                return avi_text_fail_at(&r->t, r->tri_line[t], "face refers to vertex %llu, but the file has %zu vertices",
                               (unsigned long long)r->tri[t][k] + 1, r->nv);
    return AVI_OK;
}

int avi_mesh_read_obj(const char *path, avi_mesh *out, avi_error *err)
{
    return avi_mesh_read_obj_hashed(path, out, NULL, err);
}

int avi_mesh_read_obj_hashed(const char *path, avi_mesh *out, unsigned char *sha256, avi_error *err)
{
    memset(out, 0, sizeof *out);
    obj r;
    memset(&r, 0, sizeof r);
    int rc = avi_text_load(&r.t, path, err);
    if (rc) return rc;
    if (sha256) memcpy(sha256, r.t.sha256, AVI_SHA256_LEN);
    rc = parse(&r);
    if (!rc) {
        avi_mesh m = {r.nv, r.x, r.nt, r.tri, 0, NULL};
        rc = avi_mesh_validate_lines(&m, path, r.tri_line, NULL, err);
        if (!rc) {
            *out = m;
            r.x = NULL;
            r.tri = NULL;
        }
    }
    free(r.t.buf);
    free(r.x);
    free(r.tri);
    free(r.tri_line);
    return rc;
}
