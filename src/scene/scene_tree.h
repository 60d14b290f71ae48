/* Scene loading internals: a small YAML tree with line numbers, shared by
 * the parser / validator (scene_yaml.c), --set overrides (scene_set.c) and
 * the embedded built-ins (builtin_scenes.c). */
#ifndef AVI_SCENE_TREE_H
#define AVI_SCENE_TREE_H

#include "avi/scene.h"
#include "base/error.h"

typedef enum { YN_SCALAR, YN_SEQ, YN_MAP } yn_kind;

typedef struct ynode ynode;
struct ynode {
    yn_kind kind;
    int plain; /* scalar written without quotes: may be a number, bool or null */
    int line;  /* 1-based line in the scene text; 0 when it came from --set */
    char *str; /* scalar text */
    size_t n, cap;
    ynode **items; /* sequence items, or mapping values */
    ynode **keys;  /* mapping keys (scalars), parallel to items */
};

void yn_free(ynode *node);
ynode *yn_new(yn_kind kind, int line);
/* Appends to a sequence (key NULL) or a mapping; -1 when out of memory. */
int yn_append(ynode *parent, ynode *key, ynode *value);

/* Parses one YAML document. *root is NULL for an empty stream. Messages are
 * "source:line: ...". */
int yn_parse(const char *text, size_t len, const char *source, ynode **root, avi_error *err);

/* Keys allowed in the mapping at a normalized context path ("" for the top
 * level, "bodies.#.mesh", "materials.*"): a space-separated list, "*" for
 * any key, or NULL when the schema has no mapping there. */
const char *avi_scene_schema_keys(const char *context);

/* Applies one "dotted.key=VALUE" override to the tree. */
int avi_scene_apply_set(ynode *root, const char *assignment, const char *source, avi_error *err);


#endif
