/* The YAML tree of a scene: nodes with line numbers, and the parser that
 * builds one from text (libyaml events). */
#include "scene/scene_tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

char *yn_dup_n(const char *s, size_t n)
{
    char *p = malloc(n + 1);
    if (!p) return NULL;
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

/* ---------------------------------------------------------------- tree -- */

ynode *yn_new(yn_kind kind, int line)
{
    ynode *n = calloc(1, sizeof *n);
    if (n) {
        n->kind = kind;
        n->line = line;
    }
    return n;
}

void yn_free(ynode *node)
{
    if (!node) return;
    for (size_t i = 0; i < node->n; i++) {
        yn_free(node->items[i]);
        if (node->keys) yn_free(node->keys[i]);
    }
    free(node->items);
    free(node->keys);
    free(node->str);
    free(node);
}

int yn_append(ynode *parent, ynode *key, ynode *value)
{
    if (parent->n == parent->cap) {
        size_t c = parent->cap ? 2 * parent->cap : 4;
        ynode **it = realloc(parent->items, c * sizeof *it);
        if (!it) return -1;
        parent->items = it;
        if (parent->kind == YN_MAP) {
            ynode **k = realloc(parent->keys, c * sizeof *k);
            if (!k) return -1;
            parent->keys = k;
        }
        parent->cap = c;
    }
    if (parent->kind == YN_MAP) parent->keys[parent->n] = key;
    parent->items[parent->n++] = value;
    return 0;
}

/* Alias expansion copies nodes; a budget proportional to the text stops
 * "billion laughs" inputs early while leaving real reuse alone. */
#define YN_NODE_BUDGET(len) (100000 + 16 * (len))

static ynode *yn_copy(const ynode *src, size_t *budget)
{
    if (*budget == 0) return NULL;
    (*budget)--;
    ynode *d = yn_new(src->kind, src->line);
    if (!d) return NULL;
    d->plain = src->plain;
    if (src->str && !(d->str = strdup(src->str))) goto fail;
    for (size_t i = 0; i < src->n; i++) {
        ynode *k = NULL, *v = yn_copy(src->items[i], budget);
        if (!v) goto fail;
        if (src->kind == YN_MAP && !(k = yn_copy(src->keys[i], budget))) {
            yn_free(v);
            goto fail;
        }
        if (yn_append(d, k, v)) {
            yn_free(k);
            yn_free(v);
            goto fail;
        }
    }
    return d;
fail:
    yn_free(d);
    return NULL;
}

static int line_of_offset(const char *text, size_t len, size_t offset)
{
    int line = 1;
    for (size_t i = 0; i < offset && i < len; i++)
        if (text[i] == '\n') line++;
    return line;
}

/* A tab among a line's leading blanks: the usual cause of a scanner error. */
static int tab_indented(const char *text, size_t len, size_t line0)
{
    size_t i = 0, l = 0;
    while (i < len && l < line0) {
        if (text[i++] == '\n') l++;
    }
    for (; i < len && (text[i] == ' ' || text[i] == '\t'); i++)
        if (text[i] == '\t') return 1;
    return 0;
}

static int syntax_error(const yaml_parser_t *p, const char *text, size_t len, const char *source,
                        avi_error *err)
{
    if (p->error == YAML_MEMORY_ERROR) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
    const char *problem = p->problem ? p->problem : "malformed YAML";
    if (p->error == YAML_READER_ERROR) {
        int line = line_of_offset(text, len, p->problem_offset);
        if (p->problem_value != -1)
            return avi_error_set(err, AVI_ERR_INPUT,
                                  "%s:%d: YAML syntax error: %s (byte #x%02X at offset %zu; scenes are UTF-8 text)",
                                  source, line, problem, (unsigned)p->problem_value & 0xffu, p->problem_offset);
        return avi_error_set(err, AVI_ERR_INPUT, "%s:%d: YAML syntax error: %s (scenes are UTF-8 text)", source, line,
                              problem);
    }
    int line = (int)p->problem_mark.line + 1;
    const char *hint = tab_indented(text, len, p->problem_mark.line) ? " (tabs cannot indent YAML)" : "";
    if (p->context)
        return avi_error_set(err, AVI_ERR_INPUT, "%s:%d: YAML syntax error: %s, %s at line %d%s", source, line,
                              problem, p->context, (int)p->context_mark.line + 1, hint);
    return avi_error_set(err, AVI_ERR_INPUT, "%s:%d: YAML syntax error: %s%s", source, line, problem, hint);
}

typedef struct {
    char *name;
    ynode *node;
} yn_anchor;

#define YN_MAX_DEPTH 64

int yn_parse(const char *text, size_t len, const char *source, ynode **root_out, avi_error *err)
{
    yaml_parser_t p;
    yaml_event_t ev;
    ynode *root = NULL;
    ynode *stack[YN_MAX_DEPTH];
    ynode *pending[YN_MAX_DEPTH]; /* a mapping's key awaiting its value */
    int depth = 0, documents = 0, rc = AVI_OK, done = 0;
    yn_anchor *anchors = NULL;
    size_t nanchor = 0, budget = YN_NODE_BUDGET(len);

    *root_out = NULL;
    if (!yaml_parser_initialize(&p)) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
    yaml_parser_set_input_string(&p, (const unsigned char *)text, len);
    while (!done) {
        if (!yaml_parser_parse(&p, &ev)) {
            rc = syntax_error(&p, text, len, source, err);
            break;
        }
        int line = (int)ev.start_mark.line + 1;
        ynode *node = NULL;
        const yaml_char_t *anchor = NULL, *tag = NULL;
        switch (ev.type) {
        case YAML_STREAM_END_EVENT:
            done = 1;
            break;
        case YAML_DOCUMENT_START_EVENT:
            if (documents++ > 0)
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: a scene is one YAML document; found another",
                                    source, line);
            break;
        case YAML_MAPPING_START_EVENT:
        case YAML_SEQUENCE_START_EVENT:
            if (depth == YN_MAX_DEPTH) {
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: nesting deeper than %d levels", source, line,
                                    YN_MAX_DEPTH);
                break;
            }
            node = yn_new(ev.type == YAML_MAPPING_START_EVENT ? YN_MAP : YN_SEQ, line);
            if (ev.type == YAML_MAPPING_START_EVENT) {
                anchor = ev.data.mapping_start.anchor;
                tag = ev.data.mapping_start.implicit ? NULL : ev.data.mapping_start.tag;
            } else {
                anchor = ev.data.sequence_start.anchor;
                tag = ev.data.sequence_start.implicit ? NULL : ev.data.sequence_start.tag;
            }
            break;
        case YAML_SCALAR_EVENT:
            /* An escape ("\0", "\x00", "\u0000") puts a NUL in a string; every
             * name and path is a C string, which would end there
             * ("victim\0.h5" writes "victim"). */
            if (memchr(ev.data.scalar.value, '\0', ev.data.scalar.length)) {
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: a NUL byte in a string (an escape such as \\0)",
                                    source, line);
                break;
            }
            node = yn_new(YN_SCALAR, line);
            if (node) {
                node->str = yn_dup_n((const char *)ev.data.scalar.value, ev.data.scalar.length);
                node->plain = ev.data.scalar.style == YAML_PLAIN_SCALAR_STYLE;
                if (!node->str) {
                    yn_free(node);
                    node = NULL;
                }
            }
            anchor = ev.data.scalar.anchor;
            tag = (ev.data.scalar.plain_implicit || ev.data.scalar.quoted_implicit) ? NULL : ev.data.scalar.tag;
            break;
        case YAML_ALIAS_EVENT: {
            const char *name = (const char *)ev.data.alias.anchor;
            ynode *target = NULL;
            for (size_t i = nanchor; i-- > 0;)
                if (strcmp(anchors[i].name, name) == 0) {
                    target = anchors[i].node;
                    break;
                }
            if (!target) {
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: unknown alias *%s", source, line, name);
                break;
            }
            for (int d = 0; d < depth; d++)
                if (stack[d] == target) {
                    rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: alias *%s refers to itself", source, line, name);
                    break;
                }
            if (rc) break;
            node = yn_copy(target, &budget);
            if (!node && budget == 0)
                rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: aliases expand to too many nodes", source, line);
            break;
        }
        case YAML_MAPPING_END_EVENT:
        case YAML_SEQUENCE_END_EVENT:
            depth--;
            break;
        default:
            break;
        }
        if (rc == AVI_OK && tag) {
            rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: YAML tags (%s) are not supported", source, line,
                                (const char *)tag);
        }
        if (rc == AVI_OK && (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT ||
                             ev.type == YAML_SCALAR_EVENT || ev.type == YAML_ALIAS_EVENT) && !node)
            rc = avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
        if (rc == AVI_OK && node) {
            /* Attach to the parent, or become the root; from then on the tree owns it. */
            int owned = 0;
            if (depth == 0) {
                root = node;
                owned = 1;
            } else {
                ynode *parent = stack[depth - 1];
                if (parent->kind == YN_SEQ) {
                    owned = yn_append(parent, NULL, node) == 0;
                    if (!owned) rc = avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
                } else if (!pending[depth - 1]) {
                    if (node->kind != YN_SCALAR) {
                        rc = avi_error_set(err, AVI_ERR_INPUT, "%s:%d: mapping keys must be plain scalars", source,
                                            line);
                    } else {
                        pending[depth - 1] = node; /* freed below if the parse fails */
                        owned = 1;
                    }
                } else if (yn_append(parent, pending[depth - 1], node) == 0) {
                    pending[depth - 1] = NULL;
                    owned = 1;
                } else {
                    rc = avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
                }
            }
            if (!owned) {
                yn_free(node);
                node = NULL;
            }
            if (rc == AVI_OK && anchor) {
                yn_anchor *a = realloc(anchors, (nanchor + 1) * sizeof *a);
                if (a) anchors = a;
                if (a && (anchors[nanchor].name = strdup((const char *)anchor))) {
                    anchors[nanchor++].node = node;
                } else {
                    rc = avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
                }
            }
            if (rc == AVI_OK && node->kind != YN_SCALAR && ev.type != YAML_ALIAS_EVENT) {
                stack[depth] = node;
                pending[depth] = NULL;
                depth++;
            }
        } else if (node) {
            yn_free(node);
        }
        yaml_event_delete(&ev);
        if (rc != AVI_OK) break;
    }
    /* Keys still waiting for a value belong to no tree. */
    if (rc != AVI_OK)
        for (int d = 0; d < depth; d++) yn_free(pending[d]);
    yaml_parser_delete(&p);
    for (size_t i = 0; i < nanchor; i++) free(anchors[i].name);
    free(anchors);
    if (rc != AVI_OK) {
        yn_free(root);
        return rc;
    }
    *root_out = root;
    return AVI_OK;
}
