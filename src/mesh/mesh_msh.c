/* Gmsh .msh reader: ASCII formats 2.2 and 4.1, binary format 4.1 (what
 * Gmsh writes with Mesh.Binary = 1: the same sections, their data as raw
 * values of the declared size_t width, 4-byte int and 8-byte double in the
 * byte order of the int 1 after the format line).
 *
 * Nothing in the file is trusted: counts only bound loops that also stop at
 * the end of a section, arrays grow with what is actually read, and every
 * number is checked before use. */
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

/* Splits a line in place at blanks; stores up to `max` tokens and returns
 * how many there are. */
static int split(char *s, char **tok, int max)
{
    int n = 0;
    for (;;) {
        while (*s == ' ' || *s == '\t' || *s == '\v' || *s == '\f') s++;
        if (!*s) return n;
        if (n < max) tok[n] = s;
        n++;
        while (*s && *s != ' ' && *s != '\t' && *s != '\v' && *s != '\f') s++;
        if (*s) *s++ = '\0';
    }
}

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

static int parse_u64(const char *s, uint64_t *v)
{
    uint64_t r = 0;
    if (!*s) return 0;
    for (; *s; s++) {
        if (*s < '0' || *s > '9') return 0;
        unsigned d = (unsigned)(*s - '0');
        if (r > (UINT64_MAX - d) / 10) return 0;
        r = r * 10 + d;
    }
    *v = r;
    return 1;
}

/* Clamped line number for the validator's 32-bit line arrays. */
static uint32_t line32(size_t line) { return line > UINT32_MAX ? UINT32_MAX : (uint32_t)line; }

/* ---- Gmsh ---- */

#define EMPTY UINT32_MAX

typedef struct {
    uint64_t tag;
    uint32_t index;
} tag_index;

typedef struct {
    avi_text t;
    int v4;     /* format 4.1, else 2.2 */
    int binary; /* binary 4.1 */
    int swap;   /* its byte order is not ours */
    int sz;     /* its size_t width: 4 or 8 */
    int in_data; /* reading binary data (messages give byte offsets) */
    double (*x)[3];
    uint64_t *tag;
    uint32_t *node_line;
    size_t nn, cap_x, cap_tag, cap_nl;
    /* tag -> index: dense table when tags are compact, else sorted pairs */
    uint32_t *dense;
    uint64_t dense_size;
    tag_index *sorted;
    uint32_t (*tri)[3];
    uint32_t *tri_line;
    size_t nt, cap_t, cap_tl;
    uint32_t (*tet)[4];
    uint32_t *tet_line;
    size_t nk, cap_k, cap_kl;
} msh;

static void msh_free(msh *r)
{
    free(r->t.buf);
    free(r->x);
    free(r->tag);
    free(r->node_line);
    free(r->dense);
    free(r->sorted);
    free(r->tri);
    free(r->tri_line);
    free(r->tet);
    free(r->tet_line);
}

/* "path:line: message" in text, "path: byte N: message" in binary data,
 * which has no lines to name. */
static int msh_fail(msh *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int msh_fail(msh *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int rc;
    if (r->in_data) {
        char at[sizeof r->t.err->message];
        snprintf(at, sizeof at, "%s: byte %zu", r->t.path, r->t.pos);
        rc = avi_error_vset_at(r->t.err, AVI_ERR_INPUT, at, fmt, ap);
    } else {
        rc = avi_error_vset_line(r->t.err, AVI_ERR_INPUT, r->t.path, r->t.line, fmt, ap);
    }
    va_end(ap);
    return rc;
}

static int oom(msh *r) { return avi_error_set(r->t.err, AVI_ERR_RUN, "%s: out of memory", r->t.path); }

/* Next non-blank line, or NULL at the end of the file. */
static int nonblank(msh *r, char **line)
{
    for (;;) {
        int rc = avi_text_next(&r->t, line);
        if (rc || !*line) return rc;
        const char *s = *line;
        while (*s == ' ' || *s == '\t' || *s == '\v' || *s == '\f') s++;
        if (*s) return AVI_OK;
    }
}

/* Next line of a section's data: an error at the end of the file or of the
 * section, where `expecting` says what was still due. */
static int data_line(msh *r, const char *section, const char *expecting, char **line)
{
    int rc = nonblank(r, line);
    if (rc) return rc;
    if (!*line) return avi_text_fail_at(&r->t, r->t.line, "unexpected end of file in $%s: expected %s", section, expecting);
    if ((*line)[0] == '$') {
        char ex[48];
        return avi_text_fail_at(&r->t, r->t.line, "$%s ends early at '%s': expected %s", section, excerpt(*line, ex), expecting);
    }
    return AVI_OK;
}

static int expect_end(msh *r, const char *section)
{
    char *line, *tok[2], ex[48];
    int rc = nonblank(r, &line);
    if (rc) return rc;
    if (!line) return avi_text_fail_at(&r->t, r->t.line, "unexpected end of file: missing $End%s", section);
    if (split(line, tok, 2) == 1 && tok[0][0] == '$' && strncmp(tok[0] + 1, "End", 3) == 0 &&
        strcmp(tok[0] + 4, section) == 0)
        return AVI_OK;
    return avi_text_fail_at(&r->t, r->t.line, "expected $End%s, found '%s' (more entries than the section's count?)", section,
                   excerpt(line, ex));
}

/* Reads exactly `count` u64 fields of a header line. */
static int header(msh *r, char *line, const char *what, int count, uint64_t *v)
{
    char *tok[8];
    int n = split(line, tok, 8);
    if (n != count) return avi_text_fail_at(&r->t, r->t.line, "expected %s (%d numbers), found %d fields", what, count, n);
    for (int i = 0; i < count; i++) {
        char ex[48];
        if (tok[i][0] == '-') return avi_text_fail_at(&r->t, r->t.line, "bad %s: negative value %s", what, excerpt(tok[i], ex));
        if (!parse_u64(tok[i], &v[i]))
            return avi_text_fail_at(&r->t, r->t.line, "bad %s: '%s' is not a 64-bit unsigned integer", what, excerpt(tok[i], ex));
    }
    return AVI_OK;
}

static int parse_coords(msh *r, char **tok, double p[3])
{
    for (int i = 0; i < 3; i++) {
        char *end;
        errno = 0;
        p[i] = strtod(tok[i], &end);
        char ex[48];
        if (end == tok[i] || *end) return avi_text_fail_at(&r->t, r->t.line, "bad coordinate '%s'", excerpt(tok[i], ex));
        if (!isfinite(p[i])) return avi_text_fail_at(&r->t, r->t.line, "coordinate '%s' is not finite", excerpt(tok[i], ex));
    }
    return AVI_OK;
}

static int parse_node_tag(msh *r, const char *s, uint64_t *tag)
{
    char ex[48];
    if (!parse_u64(s, tag) || *tag == 0)
        return avi_text_fail_at(&r->t, r->t.line, "bad node tag '%s' (expected a positive integer)", excerpt(s, ex));
    return AVI_OK;
}

static int push_node(msh *r, uint64_t tag)
{
    if (r->nn >= UINT32_MAX - 1) return avi_text_fail_at(&r->t, r->t.line, "too many nodes for 32-bit indices");
    if (AVI_GROW(r->x, r->cap_x, r->nn + 1, 256) ||
        AVI_GROW(r->tag, r->cap_tag, r->nn + 1, 256) ||
        AVI_GROW(r->node_line, r->cap_nl, r->nn + 1, 256))
        return oom(r);
    r->tag[r->nn] = tag;
    r->node_line[r->nn] = line32(r->t.line);
    r->nn++;
    return AVI_OK;
}

static int cmp_tag_index(const void *pa, const void *pb)
{
    const tag_index *a = pa, *b = pb;
    if (a->tag != b->tag) return a->tag < b->tag ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index);
}

/* Builds the tag map, rejecting duplicate tags. */
static int build_map(msh *r)
{
    uint64_t max = 0;
    for (size_t i = 0; i < r->nn; i++)
        if (r->tag[i] > max) max = r->tag[i];
    if (max <= 4 * (uint64_t)r->nn + 1024) {
        r->dense_size = max + 1;
        r->dense = malloc(r->dense_size * sizeof *r->dense);
        if (!r->dense) return oom(r);
        for (uint64_t k = 0; k < r->dense_size; k++) r->dense[k] = EMPTY;
        for (size_t i = 0; i < r->nn; i++) {
            uint32_t *slot = &r->dense[r->tag[i]];
            if (*slot != EMPTY)
                return avi_text_fail_at(&r->t, r->node_line[i], "duplicate node tag %llu (first defined on line %u)",
                               (unsigned long long)r->tag[i], r->node_line[*slot]);
            *slot = (uint32_t)i;
        }
        return AVI_OK;
    }
    r->sorted = malloc((r->nn ? r->nn : 1) * sizeof *r->sorted);
    if (!r->sorted) return oom(r);
    for (size_t i = 0; i < r->nn; i++) {
        r->sorted[i].tag = r->tag[i];
        r->sorted[i].index = (uint32_t)i;
    }
    qsort(r->sorted, r->nn, sizeof *r->sorted, cmp_tag_index);
    for (size_t i = 1; i < r->nn; i++)
        if (r->sorted[i].tag == r->sorted[i - 1].tag)
            return avi_text_fail_at(&r->t, r->node_line[r->sorted[i].index], "duplicate node tag %llu (first defined on line %u)",
                           (unsigned long long)r->sorted[i].tag, r->node_line[r->sorted[i - 1].index]);
    return AVI_OK;
}

static uint32_t lookup(const msh *r, uint64_t tag)
{
    if (r->dense) return tag < r->dense_size ? r->dense[tag] : EMPTY;
    size_t lo = 0, hi = r->nn;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (r->sorted[mid].tag < tag) lo = mid + 1;
        else hi = mid;
    }
    return lo < r->nn && r->sorted[lo].tag == tag ? r->sorted[lo].index : EMPTY;
}

static int read_nodes(msh *r)
{
    char *line, *tok[8], count_buf[32];
    uint64_t h[4];
    int rc = data_line(r, "Nodes", "the node count", &line);
    if (rc) return rc;
    if (!r->v4) {
        if ((rc = header(r, line, "node count", 1, h))) return rc;
        snprintf(count_buf, sizeof count_buf, "%llu nodes", (unsigned long long)h[0]);
        for (uint64_t i = 0; i < h[0]; i++) {
            if ((rc = data_line(r, "Nodes", count_buf, &line))) return rc;
            int n = split(line, tok, 8);
            if (n != 4) return avi_text_fail_at(&r->t, r->t.line, "expected 'tag x y z', found %d fields", n);
            uint64_t tag;
            if ((rc = parse_node_tag(r, tok[0], &tag)) || (rc = push_node(r, tag)) ||
                (rc = parse_coords(r, tok + 1, r->x[r->nn - 1])))
                return rc;
        }
    } else {
        if ((rc = header(r, line, "'numEntityBlocks numNodes minNodeTag maxNodeTag'", 4, h))) return rc;
        uint64_t total = h[1], seen = 0;
        for (uint64_t b = 0; b < h[0]; b++) {
            uint64_t bh[4];
            if ((rc = data_line(r, "Nodes", "a node block header", &line)) ||
                (rc = header(r, line, "node block header 'entityDim entityTag parametric numNodesInBlock'", 4, bh)))
                return rc;
            if (bh[0] > 3) return avi_text_fail_at(&r->t, r->t.line, "bad entity dimension %llu", (unsigned long long)bh[0]);
            if (bh[2] > 1) return avi_text_fail_at(&r->t, r->t.line, "bad parametric flag %llu", (unsigned long long)bh[2]);
            if (bh[3] > total - seen)
                return avi_text_fail_at(&r->t, r->t.line, "node block of %llu nodes exceeds the %llu nodes of the header",
                               (unsigned long long)bh[3], (unsigned long long)total);
            size_t first = r->nn;
            for (uint64_t i = 0; i < bh[3]; i++) {
                if ((rc = data_line(r, "Nodes", "a node tag", &line))) return rc;
                int n = split(line, tok, 8);
                if (n != 1) return avi_text_fail_at(&r->t, r->t.line, "expected one node tag, found %d fields", n);
                uint64_t tag;
                if ((rc = parse_node_tag(r, tok[0], &tag)) || (rc = push_node(r, tag))) return rc;
            }
            int want = 3 + (bh[2] ? (int)bh[0] : 0);
            for (uint64_t i = 0; i < bh[3]; i++) {
                if ((rc = data_line(r, "Nodes", "node coordinates", &line))) return rc;
                int n = split(line, tok, 8);
                if (n != want) return avi_text_fail_at(&r->t, r->t.line, "expected %d coordinates, found %d fields", want, n);
                if ((rc = parse_coords(r, tok, r->x[first + i]))) return rc;
            }
            seen += bh[3];
        }
        if (seen != total)
            return avi_text_fail_at(&r->t, r->t.line, "node blocks hold %llu nodes, but the header says %llu",
                           (unsigned long long)seen, (unsigned long long)total);
    }
    if ((rc = expect_end(r, "Nodes"))) return rc;
    return build_map(r);
}

/* Adds a triangle (type 2) or tetrahedron (type 4) from its node tags;
 * elem names the element in messages. */
static int add_cell(msh *r, int type, const char *elem, const uint64_t *tags)
{
    int nv = type == 2 ? 3 : 4;
    uint32_t v[4];
    for (int k = 0; k < nv; k++) {
        v[k] = lookup(r, tags[k]);
        if (v[k] == EMPTY)
            return msh_fail(r, "element %s refers to node %llu, which is not defined", elem,
                                    (unsigned long long)tags[k]);
    }
    if (type == 2) {
        if (AVI_GROW(r->tri, r->cap_t, r->nt + 1, 256) ||
            AVI_GROW(r->tri_line, r->cap_tl, r->nt + 1, 256))
            return oom(r);
        memcpy(r->tri[r->nt], v, sizeof r->tri[r->nt]);
        r->tri_line[r->nt++] = line32(r->t.line);
    } else {
        if (AVI_GROW(r->tet, r->cap_k, r->nk + 1, 256) ||
            AVI_GROW(r->tet_line, r->cap_kl, r->nk + 1, 256))
            return oom(r);
        memcpy(r->tet[r->nk], v, sizeof r->tet[r->nk]);
        r->tet_line[r->nk++] = line32(r->t.line);
    }
    return AVI_OK;
}

/* Adds a triangle (type 2) or tetrahedron (type 4) from node tag strings. */
static int add_element(msh *r, int type, const char *elem_tag, char **nodes)
{
    int nv = type == 2 ? 3 : 4;
    uint64_t tags[4];
    char ex[48], ex2[48];
    for (int k = 0; k < nv; k++)
        if (!parse_u64(nodes[k], &tags[k]))
            return avi_text_fail_at(&r->t, r->t.line, "element %s: bad node tag '%s'", excerpt(elem_tag, ex), excerpt(nodes[k], ex2));
    return add_cell(r, type, excerpt(elem_tag, ex), tags);
}

static int read_elements(msh *r)
{
    char *line, *tok[64], count_buf[40], ex[48];
    uint64_t h[4];
    int rc = data_line(r, "Elements", "the element count", &line);
    if (rc) return rc;
    if (!r->v4) {
        if ((rc = header(r, line, "element count", 1, h))) return rc;
        snprintf(count_buf, sizeof count_buf, "%llu elements", (unsigned long long)h[0]);
        for (uint64_t i = 0; i < h[0]; i++) {
            if ((rc = data_line(r, "Elements", count_buf, &line))) return rc;
            int n = split(line, tok, 64);
            uint64_t id, type, ntags;
            if (n < 3 || !parse_u64(tok[0], &id) || !parse_u64(tok[1], &type) || !parse_u64(tok[2], &ntags))
                return avi_text_fail_at(&r->t, r->t.line, "expected 'id type ntags tags... nodes...'");
            if (type != 2 && type != 4) continue; /* points, lines, quads...: not ours */
            uint64_t nv = type == 2 ? 3 : 4;
            if (ntags > (uint64_t)n || (uint64_t)n != 3 + ntags + nv) /* first test: no wrap-around */
                return avi_text_fail_at(&r->t, r->t.line, "element %s of type %llu: expected %llu tags and %llu nodes, found %d fields",
                               excerpt(tok[0], ex), (unsigned long long)type, (unsigned long long)ntags,
                               (unsigned long long)nv, n);
            if (n > 64)
                return avi_text_fail_at(&r->t, r->t.line, "element %s has too many tags (%llu)", excerpt(tok[0], ex),
                               (unsigned long long)ntags);
            if ((rc = add_element(r, (int)type, tok[0], tok + 3 + ntags))) return rc;
        }
    } else {
        if ((rc = header(r, line, "'numEntityBlocks numElements minElementTag maxElementTag'", 4, h))) return rc;
        uint64_t total = h[1], seen = 0;
        for (uint64_t b = 0; b < h[0]; b++) {
            uint64_t bh[4];
            if ((rc = data_line(r, "Elements", "an element block header", &line)) ||
                (rc = header(r, line, "element block header 'entityDim entityTag elementType numElementsInBlock'", 4, bh)))
                return rc;
            if (bh[3] > total - seen)
                return avi_text_fail_at(&r->t, r->t.line, "element block of %llu elements exceeds the %llu elements of the header",
                               (unsigned long long)bh[3], (unsigned long long)total);
            int want = bh[2] == 2 ? 4 : bh[2] == 4 ? 5 : 0;
            for (uint64_t i = 0; i < bh[3]; i++) {
                if ((rc = data_line(r, "Elements", "an element", &line))) return rc;
                if (!want) continue;
                int n = split(line, tok, 64);
                if (n != want)
                    return avi_text_fail_at(&r->t, r->t.line, "element of type %llu: expected a tag and %d nodes, found %d fields",
                                   (unsigned long long)bh[2], want - 1, n);
                if ((rc = add_element(r, (int)bh[2], tok[0], tok + 1))) return rc;
            }
            seen += bh[3];
        }
        if (seen != total)
            return avi_text_fail_at(&r->t, r->t.line, "element blocks hold %llu elements, but the header says %llu",
                           (unsigned long long)seen, (unsigned long long)total);
    }
    return expect_end(r, "Elements");
}

/* ---- binary 4.1 ---- */

static size_t bytes_left(const msh *r) { return r->t.size - r->t.pos; }

/* The next n (<= 8) bytes as a value in our byte order; 0 past the end. */
static int take(msh *r, size_t n, void *out)
{
    if (bytes_left(r) < n) return 0;
    unsigned char b[8];
    for (size_t i = 0; i < n; i++) b[i] = (unsigned char)r->t.buf[r->t.pos + (r->swap ? n - 1 - i : i)];
    memcpy(out, b, n);
    r->t.pos += n;
    return 1;
}

static int take_size(msh *r, uint64_t *v)
{
    if (r->sz == 8) return take(r, 8, v);
    uint32_t u;
    if (!take(r, 4, &u)) return 0;
    *v = u;
    return 1;
}

static int take_int(msh *r, int32_t *v) { return take(r, 4, v); }

/* After binary data: the line count and the NUL check of the text lines
 * that follow start where the data ended. */
static void binary_done(msh *r, size_t start)
{
    r->in_data = 0;
    for (size_t i = start; i < r->t.pos; i++) r->t.line += r->t.buf[i] == '\n';
    const char *nul = memchr(r->t.buf + r->t.pos, '\0', bytes_left(r));
    r->t.nul_at = nul ? (size_t)(nul - r->t.buf) : r->t.size;
}

/* Reads `count` size_t values of a header. */
static int bin_header(msh *r, const char *what, uint64_t *v, int count)
{
    for (int i = 0; i < count; i++)
        if (!take_size(r, &v[i])) return msh_fail(r, "file ends in %s", what);
    return AVI_OK;
}

/* Reads an entity block header: entity dimension, tag and a third int
 * (parametric flag or element type), then the block's count. */
static int bin_block(msh *r, const char *section, int32_t h[3], uint64_t *count, uint64_t left, uint64_t total)
{
    if (!take_int(r, &h[0]) || !take_int(r, &h[1]) || !take_int(r, &h[2]) || !take_size(r, count))
        return msh_fail(r, "file ends in a $%s block header", section);
    if (h[0] < 0 || h[0] > 3) return msh_fail(r, "$%s: bad entity dimension %d", section, (int)h[0]);
    if (*count > left)
        return msh_fail(r, "$%s block of %llu exceeds the %llu of the header", section, (unsigned long long)*count,
                        (unsigned long long)total);
    return AVI_OK;
}

/* Whether n records of `per` bytes fit in what is left of the file. */
static int fits(msh *r, uint64_t n, uint64_t per) { return n <= bytes_left(r) / per; }

static int read_nodes_binary(msh *r)
{
    size_t start = r->t.pos;
    r->in_data = 1;
    uint64_t h[4], seen = 0;
    int rc = bin_header(r, "the $Nodes header 'numEntityBlocks numNodes minNodeTag maxNodeTag'", h, 4);
    for (uint64_t b = 0; b < h[0] && !rc; b++) {
        int32_t bh[3];
        uint64_t n;
        if ((rc = bin_block(r, "Nodes", bh, &n, h[1] - seen, h[1]))) break;
        if (bh[2] != 0 && bh[2] != 1) return msh_fail(r, "$Nodes: bad parametric flag %d", (int)bh[2]);
        uint64_t coords = 3 + (bh[2] ? (uint64_t)bh[0] : 0);
        if (!fits(r, n, (uint64_t)r->sz + 8 * coords))
            return msh_fail(r, "$Nodes block of %llu nodes runs past the end of the file", (unsigned long long)n);
        size_t first = r->nn;
        for (uint64_t i = 0; i < n && !rc; i++) {
            uint64_t tag;
            take_size(r, &tag);
            if (tag == 0) return msh_fail(r, "$Nodes: bad node tag 0 (expected a positive integer)");
            rc = push_node(r, tag);
        }
        for (uint64_t i = 0; i < n && !rc; i++) {
            double *p = r->x[first + i], skip;
            for (uint64_t k = 0; k < coords; k++) take(r, 8, k < 3 ? &p[k] : &skip);
            if (!isfinite(p[0]) || !isfinite(p[1]) || !isfinite(p[2]))
                return msh_fail(r, "$Nodes: node %llu has a coordinate that is not finite", (unsigned long long)r->tag[first + i]);
        }
        seen += n;
    }
    if (!rc && seen != h[1])
        return msh_fail(r, "$Nodes blocks hold %llu nodes, but the header says %llu", (unsigned long long)seen,
                        (unsigned long long)h[1]);
    binary_done(r, start);
    if (rc || (rc = expect_end(r, "Nodes"))) return rc;
    return build_map(r);
}

/* Nodes of a Gmsh element type (binary blocks must be skipped by size), 0
 * when unknown. */
static int type_nodes(int32_t type)
{
    static const unsigned char n[] = {0, 2, 3, 4, 4, 8, 6, 5, 3, 6, 9, 10, 27, 18, 14, 1,
                                      8, 20, 15, 13, 9, 10, 12, 15, 15, 21, 4, 5, 6, 20, 35, 56};
    return type >= 0 && (size_t)type < sizeof n ? n[type] : 0;
}

static int read_elements_binary(msh *r)
{
    size_t start = r->t.pos;
    r->in_data = 1;
    uint64_t h[4], seen = 0;
    int rc = bin_header(r, "the $Elements header 'numEntityBlocks numElements minElementTag maxElementTag'", h, 4);
    for (uint64_t b = 0; b < h[0] && !rc; b++) {
        int32_t bh[3];
        uint64_t n, tags[56];
        if ((rc = bin_block(r, "Elements", bh, &n, h[1] - seen, h[1]))) break;
        int nv = type_nodes(bh[2]);
        if (!nv) return msh_fail(r, "$Elements: unknown element type %d", (int)bh[2]);
        if (!fits(r, n, (uint64_t)r->sz * (1 + (uint64_t)nv)))
            return msh_fail(r, "$Elements block of %llu elements runs past the end of the file", (unsigned long long)n);
        for (uint64_t i = 0; i < n && !rc; i++) {
            uint64_t id;
            take_size(r, &id);
            for (int k = 0; k < nv; k++) take_size(r, &tags[k]);
            if (bh[2] == 2 || bh[2] == 4) {
                char name[24];
                snprintf(name, sizeof name, "%llu", (unsigned long long)id);
                rc = add_cell(r, bh[2], name, tags);
            }
        }
        seen += n;
    }
    if (!rc && seen != h[1])
        return msh_fail(r, "$Elements blocks hold %llu elements, but the header says %llu", (unsigned long long)seen,
                        (unsigned long long)h[1]);
    binary_done(r, start);
    return rc ? rc : expect_end(r, "Elements");
}

/* Skips a section of a binary file: its data may hold any byte, so the end
 * is the first "$EndNAME" line. */
static int skip_binary(msh *r, const char *name, size_t line)
{
    char end[80];
    int n = snprintf(end, sizeof end, "\n$End%s", name);
    size_t start = r->t.pos;
    const char *at = NULL, *from = r->t.buf + start - 1; /* the header's newline */
    const char *stop = r->t.buf + r->t.size;
    while (!at && from && (size_t)(stop - from) >= (size_t)n) {
        if (memcmp(from, end, (size_t)n) == 0) at = from;
        else from = memchr(from + 1, '\n', (size_t)(stop - from - 1));
    }
    if (!at) return avi_text_fail_at(&r->t, line, "section $%s has no $End%s", name, name);
    r->t.pos = (size_t)(at - r->t.buf) + 1;
    binary_done(r, start);
    return expect_end(r, name);
}

/* Skips a section we do not read, up to its $End line. */
static int skip_section(msh *r, const char *name, size_t start)
{
    char *line, *tok[2];
    for (;;) {
        int rc = avi_text_next(&r->t, &line);
        if (rc) return rc;
        if (!line) return avi_text_fail_at(&r->t, start, "section $%s has no $End%s", name, name);
        if (split(line, tok, 2) == 1 && tok[0][0] == '$' && strncmp(tok[0] + 1, "End", 3) == 0 &&
            strcmp(tok[0] + 4, name) == 0)
            return AVI_OK;
    }
}

static int read_format(msh *r)
{
    char *line, *tok[4], ex[48];
    int rc = nonblank(r, &line);
    if (rc) return rc;
    if (!line) return avi_text_fail_at(&r->t, r->t.line ? r->t.line : 1, "empty file (expected $MeshFormat)");
    if (split(line, tok, 4) != 1 || strcmp(tok[0], "$MeshFormat") != 0)
        return avi_text_fail_at(&r->t, r->t.line, "not a Gmsh mesh: expected $MeshFormat, found '%s'", excerpt(tok[0], ex));
    if ((rc = data_line(r, "MeshFormat", "'version file-type data-size'", &line))) return rc;
    int n = split(line, tok, 4);
    if (n != 3) return avi_text_fail_at(&r->t, r->t.line, "expected 'version file-type data-size', found %d fields", n);
    if (strcmp(tok[0], "2.2") == 0) r->v4 = 0;
    else if (strcmp(tok[0], "4.1") == 0) r->v4 = 1;
    else return avi_text_fail_at(&r->t, r->t.line, "unsupported .msh version '%s' (supported: 2.2 and 4.1)", excerpt(tok[0], ex));
    if (strcmp(tok[1], "0") == 0) return expect_end(r, "MeshFormat");
    if (strcmp(tok[1], "1") != 0)
        return avi_text_fail_at(&r->t, r->t.line, "bad file type '%s' (0 = ASCII, 1 = binary)", excerpt(tok[1], ex));
    if (!r->v4)
        return avi_text_fail_at(&r->t, r->t.line, "binary .msh 2.2 files are not supported; save the mesh as format 4.1 or as ASCII");
    if (strcmp(tok[2], "8") != 0 && strcmp(tok[2], "4") != 0)
        return avi_text_fail_at(&r->t, r->t.line, "bad data size '%s' (the size of size_t: 4 or 8)", excerpt(tok[2], ex));
    r->binary = 1;
    r->sz = tok[2][0] - '0';
    /* The int 1 in the writer's byte order. */
    size_t start = r->t.pos;
    uint32_t one;
    r->in_data = 1;
    if (!take(r, 4, &one)) return msh_fail(r, "file ends before the byte-order mark (the int 1)");
    if (one != 1 && one != 0x01000000u) return msh_fail(r, "bad byte-order mark 0x%08x (expected the int 1)", (unsigned)one);
    r->swap = one != 1;
    binary_done(r, start);
    return expect_end(r, "MeshFormat");
}

static int parse(msh *r)
{
    int rc = read_format(r);
    if (rc) return rc;
    int have_nodes = 0, have_elements = 0;
    for (;;) {
        char *line, *tok[2], ex[48];
        if ((rc = nonblank(r, &line))) return rc;
        if (!line) break;
        if (split(line, tok, 2) != 1 || tok[0][0] != '$')
            return avi_text_fail_at(&r->t, r->t.line, "expected a section ($Nodes, $Elements, ...), found '%s'", excerpt(tok[0], ex));
        const char *name = tok[0] + 1;
        if (strcmp(name, "Nodes") == 0) {
            if (have_nodes) return avi_text_fail_at(&r->t, r->t.line, "second $Nodes section");
            if ((rc = r->binary ? read_nodes_binary(r) : read_nodes(r))) return rc;
            have_nodes = 1;
        } else if (strcmp(name, "Elements") == 0) {
            if (!have_nodes) return avi_text_fail_at(&r->t, r->t.line, "$Elements before $Nodes");
            if (have_elements) return avi_text_fail_at(&r->t, r->t.line, "second $Elements section");
            if ((rc = r->binary ? read_elements_binary(r) : read_elements(r))) return rc;
            have_elements = 1;
        } else if (strcmp(name, "MeshFormat") == 0) {
            return avi_text_fail_at(&r->t, r->t.line, "second $MeshFormat section");
        } else if (strncmp(name, "End", 3) == 0 || !*name) {
            return avi_text_fail_at(&r->t, r->t.line, "unexpected '%s' outside a section", excerpt(tok[0], ex));
        } else {
            char saved[64];
            snprintf(saved, sizeof saved, "%s", name);
            if ((rc = r->binary ? skip_binary(r, saved, r->t.line) : skip_section(r, saved, r->t.line))) return rc;
        }
    }
    size_t last = r->t.line ? r->t.line : 1;
    if (!have_nodes) return avi_text_fail_at(&r->t, last, "missing $Nodes section");
    if (!have_elements) return avi_text_fail_at(&r->t, last, "missing $Elements section");
    if (r->nt == 0 && r->nk == 0)
        return avi_text_fail_at(&r->t, last, "no triangles (element type 2) or tetrahedra (element type 4)");
    return AVI_OK;
}

int avi_mesh_read_msh(const char *path, avi_mesh *out, avi_error *err)
{
    return avi_mesh_read_msh_hashed(path, out, NULL, err);
}

int avi_mesh_read_msh_hashed(const char *path, avi_mesh *out, unsigned char *sha256, avi_error *err)
{
    memset(out, 0, sizeof *out);
    msh r;
    memset(&r, 0, sizeof r);
    int rc = avi_text_load(&r.t, path, err);
    if (rc) return rc;
    if (sha256) memcpy(sha256, r.t.sha256, AVI_SHA256_LEN);
    rc = parse(&r);
    if (!rc) {
        avi_mesh m = {r.nn, r.x, r.nt, r.tri, r.nk, r.tet};
        /* A binary file's elements have no lines: messages name them by index. */
        rc = avi_mesh_validate_lines(&m, path, r.binary ? NULL : r.tri_line, r.binary ? NULL : r.tet_line, err);
        if (!rc) {
            *out = m;
            r.x = NULL;
            r.tri = NULL;
            r.tet = NULL;
        }
    }
    msh_free(&r);
    return rc;
}
