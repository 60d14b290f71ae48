/* --set KEY=VALUE: overrides applied to the parsed scene tree before
 * validation, so an override is checked exactly like the file's own text.
 *
 * KEY is a dotted path. Mapping keys are matched by name; sequence items by
 * index ("bodies.0") or, for items that are mappings with a `name`, by that
 * name ("bodies.sphere"). A key missing from a mapping may be added when the
 * scene schema allows it there (e.g. contact.stiffness, or a new material);
 * any other path is "no such key". VALUE is one YAML flow node: a scalar
 * (1e-4, true, sync-implicit), a sequence ([0, 0, -1000]) or a mapping
 * ({scale: 1.1}). */
#include "scene/scene_tree.h"
#include "scene/scene_schema.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Marks a subtree as coming from the command line (no source line). */
static void mark_override(ynode *n)
{
    n->line = 0;
    for (size_t i = 0; i < n->n; i++) {
        mark_override(n->items[i]);
        if (n->keys) mark_override(n->keys[i]);
    }
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

static const char *item_name(const ynode *item)
{
    if (item->kind != YN_MAP) return NULL;
    for (size_t i = 0; i < item->n; i++)
        if (strcmp(item->keys[i]->str, "name") == 0 && item->items[i]->kind == YN_SCALAR) return item->items[i]->str;
    return NULL;
}

/* The schema context of a child: mapping keys by name ("materials.*" for
 * any material), sequence items as "#". */
static void child_context(char *out, size_t len, const char *ctx, const ynode *parent, const char *seg)
{
    const char *part = parent->kind == YN_SEQ ? "#" : strcmp(ctx, "materials") == 0 ? "*" : seg;
    size_t n = 0;
    /* Overlong paths are cut; they then match no schema context. */
    for (const char *p = ctx; *p && n + 1 < len; p++) out[n++] = *p;
    if (*ctx && n + 1 < len) out[n++] = '.';
    for (const char *p = part; *p && n + 1 < len; p++) out[n++] = *p;
    out[n] = '\0';
}

static int allowed(const char *ctx, const char *key)
{
    const char *keys = avi_scene_schema_keys(ctx);
    if (!keys) return 0;
    if (strcmp(keys, "*") == 0) return 1;
    size_t n = strlen(key);
    for (const char *p = keys; *p;) {
        const char *e = strchr(p, ' ');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        if (l == n && strncmp(p, key, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* Appends a word to a space-separated list, cut (with "...") when full. */
static void add_word(char *out, size_t len, const char *word)
{
    size_t n = strlen(out), w = strlen(word);
    if (n + w + 5 >= len) {
        if (n + 5 < len && !strstr(out, " ...")) strcat(out, " ...");
        return;
    }
    if (n) out[n++] = ' ';
    memcpy(out + n, word, w + 1);
}

/* " (<path> takes: <keys>)" for an unknown key, as the scene file's
 * messages say it: the schema's keys where `stop` is a mapping, the item
 * names and indices where it is a sequence; "" when nothing is known.
 * `key` is the full key with dots restored, `at` where the failing
 * segment starts. */
static void valid_keys(const ynode *stop, const char *ctx, const char *key, size_t at, char *out, size_t len)
{
    char words[768] = "", where[256];
    out[0] = '\0';
    if (!stop) return;
    if (at > 0) snprintf(where, sizeof where, "%.*s", (int)(at - 1), key);
    else snprintf(where, sizeof where, "the scene");
    if (stop->kind == YN_MAP) {
        const char *keys = avi_scene_schema_keys(ctx);
        if (keys && strcmp(keys, "*") != 0) {
            snprintf(words, sizeof words, "%s", keys);
        } else {
            for (size_t i = 0; i < stop->n; i++) add_word(words, sizeof words, stop->keys[i]->str);
        }
    } else if (stop->kind == YN_SEQ) {
        for (size_t i = 0; i < stop->n; i++) {
            const char *name = item_name(stop->items[i]);
            if (name) add_word(words, sizeof words, name);
        }
        char range[48];
        if (stop->n) snprintf(range, sizeof range, "%s0..%zu", words[0] ? "or " : "", stop->n - 1);
        else snprintf(range, sizeof range, "none: the list is empty");
        add_word(words, sizeof words, range);
        snprintf(out, len, " (%.120s has: %.360s)", where, words);
        return;
    } else {
        snprintf(out, len, " (%.120s is a value, not a mapping)", where);
        return;
    }
    if (words[0]) snprintf(out, len, " (%.120s takes: %.360s)", where, words);
}

int avi_scene_apply_set(ynode *root, const char *assignment, const char *source, avi_error *err)
{
    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment)
        return avi_error_set(err, AVI_ERR_INPUT, "%s: --set %s: expected KEY=VALUE", source, assignment);
    size_t klen = (size_t)(eq - assignment);
    char *key = malloc(klen + 1);
    if (!key) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    memcpy(key, assignment, klen);
    key[klen] = '\0';
    const char *text = eq + 1;

    ynode *value = NULL;
    avi_error verr = {AVI_OK, ""};
    int rc = yn_parse(text, strlen(text), "value", &value, &verr);
    if (rc != AVI_OK) {
        /* yn_parse says "value:1: ..."; drop the position, the value is one line. */
        const char *m = verr.message;
        if (strncmp(m, "value:", 6) == 0) {
            m += 6;
            while (*m >= '0' && *m <= '9') m++;
            if (*m == ':') m++;
            while (*m == ' ') m++;
        }
        rc = avi_error_set(err, (avi_status)rc, "%s: --set %s: bad value: %s", source, key, m);
        free(key);
        return rc;
    }
    if (!value) {
        rc = avi_error_set(err, AVI_ERR_INPUT, "%s: --set %s: missing value", source, key);
        free(key);
        return rc;
    }
    mark_override(value);

    ynode *node = root;
    char ctx[256] = "";
    char *seg = key;
    rc = AVI_OK;
    /* Where the walk stopped, for the message: the node and the path to it. */
    const ynode *stop = NULL;
    size_t stop_at = 0;
    for (;;) {
        char *dot = strchr(seg, '.');
        if (dot) *dot = '\0';
        int last = dot == NULL;
        char cctx[256];
        ynode **slot = NULL;
        if (!*seg) break;
        stop = node;
        stop_at = (size_t)(seg - key);
        child_context(cctx, sizeof cctx, ctx, node, seg);
        if (node->kind == YN_MAP) {
            for (size_t i = 0; i < node->n; i++)
                if (strcmp(node->keys[i]->str, seg) == 0) slot = &node->items[i];
            if (!slot) {
                /* Add the key, if the schema has it here. */
                if (!allowed(ctx, seg)) break;
                if (!last && !avi_scene_schema_keys(cctx)) break;
                ynode *k = yn_new(YN_SCALAR, 0), *v = last ? NULL : yn_new(YN_MAP, 0);
                if (k) k->str = strdup(seg);
                if (!k || !k->str || (!last && !v) || yn_append(node, k, last ? value : v)) {
                    yn_free(k);
                    yn_free(v);
                    rc = avi_error_set(err, AVI_ERR_RUN, "out of memory");
                    break;
                }
                if (last) {
                    value = NULL;
                    break;
                }
                slot = &node->items[node->n - 1];
            }
        } else if (node->kind == YN_SEQ) {
            if (all_digits(seg)) {
                size_t i = strtoul(seg, NULL, 10);
                if (strlen(seg) < 10 && i < node->n) slot = &node->items[i];
            } else {
                for (size_t i = 0; i < node->n && !slot; i++) {
                    const char *name = item_name(node->items[i]);
                    if (name && strcmp(name, seg) == 0) slot = &node->items[i];
                }
            }
            if (!slot) break;
        } else {
            break;
        }
        if (last) {
            yn_free(*slot);
            *slot = value;
            value = NULL;
            break;
        }
        node = *slot;
        snprintf(ctx, sizeof ctx, "%s", cctx);
        seg = dot + 1;
    }
    if (rc == AVI_OK && value) {
        /* The walk stopped early: restore the dots for the message. */
        for (size_t i = 0; i < klen; i++)
            if (key[i] == '\0') key[i] = '.';
        char valid[512];
        valid_keys(stop, ctx, key, stop_at, valid, sizeof valid);
        rc = avi_error_set(err, AVI_ERR_INPUT, "%s: --set %s: no such key%s", source, key, valid);
    }
    yn_free(value);
    free(key);
    return rc;
}
