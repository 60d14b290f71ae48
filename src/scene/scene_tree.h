/* Scene loading internals: a small YAML tree with line numbers
 * (scene_tree.c), shared by the loader (scene_load.c), --set overrides
 * (scene_set.c) and the embedded built-ins (builtin_scenes.c). */
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

/* The n bytes at s and a NUL, in a new allocation; NULL when out of memory. */
char *yn_dup_n(const char *s, size_t n);

/* Applies one "dotted.key=VALUE" override to the tree. */
int avi_scene_apply_set(ynode *root, const char *assignment, const char *source, avi_error *err);


#endif
