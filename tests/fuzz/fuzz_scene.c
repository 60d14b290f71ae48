/* libFuzzer harness: scene loading from text (avi_scene_load_string).
 *
 * Checks the loader's contract (scene.h): a failure fills the error with
 * its status and a non-empty message; a scene that loads is emitted
 * (avi_scene_emit), the text loads again, and emitting that second scene
 * gives the same text. */
#include "avi/scene.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_error(int rc, const avi_error *err, const char *what, const char *text)
{
    if ((int)err->status == rc && err->message[0] != '\0' && memchr(err->message, '\0', sizeof err->message))
        return;
    fprintf(stderr, "fuzz: %s: status %d, returned %d, message '%.*s'\n", what, (int)err->status, rc,
            (int)sizeof err->message, err->message);
    if (text) fprintf(stderr, "--- emitted scene ---\n%s--- end ---\n", text);
    abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    avi_scene s;
    avi_error err;
    int rc = avi_scene_load_string((const char *)data, size, "fuzz.yaml", NULL, NULL, 0, &s, &err);
    if (rc != AVI_OK) {
        check_error(rc, &err, "failed load", NULL);
        avi_scene_free(&s);
        return 0;
    }
    char *text = avi_scene_emit(&s);
    if (text) {
        avi_scene again;
        rc = avi_scene_load_string(text, strlen(text), "fuzz.yaml", NULL, NULL, 0, &again, &err);
        if (rc != AVI_OK) {
            fprintf(stderr, "fuzz: the emitted scene does not load: %s\n--- emitted scene ---\n%s--- end ---\n",
                    err.message, text);
            abort();
        }
        char *text2 = avi_scene_emit(&again);
        if (text2 && strcmp(text, text2) != 0) {
            fprintf(stderr, "fuzz: emit, load, emit changed the scene\n--- first ---\n%s--- second ---\n%s--- end ---\n",
                    text, text2);
            abort();
        }
        free(text2);
        avi_scene_free(&again);
        free(text);
    }
    avi_scene_free(&s);
    return 0;
}
