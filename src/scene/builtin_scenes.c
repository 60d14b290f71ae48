/* Built-in scenes: the YAML files of data/scenes, embedded by the Makefile as C
 * strings (build/gen/builtin_scenes.inc, sorted by file name). */
#include "scene/scene_tree.h"

#include <stdio.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *text;
} builtin_scene;

static const builtin_scene builtins[] = {
#include "builtin_scenes.inc" /* generated in $(B)/gen (Makefile) */
};

#define NBUILTIN (sizeof builtins / sizeof builtins[0])

size_t avi_scene_builtin_count(void) { return NBUILTIN; }

const char *avi_scene_builtin_name(size_t i) { return i < NBUILTIN ? builtins[i].name : NULL; }

const char *avi_scene_builtin_text(size_t i) { return i < NBUILTIN ? builtins[i].text : NULL; }

int avi_scene_builtin_find(const char *name)
{
    for (size_t i = 0; i < NBUILTIN; i++)
        if (strcmp(builtins[i].name, name) == 0) return (int)i;
    return -1;
}

/* One line for `avi scenes`; read from the scene's own text once. */
const char *avi_scene_builtin_description(size_t i)
{
    static char lines[NBUILTIN][160];
    static int done[NBUILTIN];
    if (i >= NBUILTIN) return NULL;
    if (!done[i]) {
        ynode *root = NULL;
        const char *text = builtins[i].text;
        lines[i][0] = '\0';
        if (yn_parse(text, strlen(text), builtins[i].name, &root, NULL) == AVI_OK && root && root->kind == YN_MAP)
            for (size_t k = 0; k < root->n; k++)
                if (strcmp(root->keys[k]->str, "description") == 0 && root->items[k]->kind == YN_SCALAR)
                    snprintf(lines[i], sizeof lines[i], "%s", root->items[k]->str);
        yn_free(root);
        done[i] = 1;
    }
    return lines[i];
}
