/* A built-in scene's model and engine on a given thread count and chaos
 * seed, for the tests that hold the parallel engine to the serial bits
 * (test_contact_parallel.c, test_group_tick.c). */
#ifndef AVI_TEST_SCENE_RUN_H
#define AVI_TEST_SCENE_RUN_H

#include "check_main.h"
#include "avi/scene.h"
#include "base/pool.h"
#include "core/engine_internal.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    avi_scene s;
    avi_scene_bodies info;
    avi_model *m;
    avi_engine *e;
} scene_run;

/* threads 0: no pool (avi_engine_set_threads not called); seed NULL: no
 * chaos. The pool reads the seed when it is created. */
static inline void scene_run_open(scene_run *r, const char *scene, const char *const *ov, size_t nov, int threads,
                                  const char *seed)
{
    avi_error err = {0};
    memset(r, 0, sizeof *r);
    ck_assert_msg(avi_scene_load_builtin(scene, ov, nov, &r->s, &err) == AVI_OK, "%s", err.message);
    ck_assert_msg(avi_scene_build(&r->s, &r->m, &r->info, &err) == AVI_OK, "%s", err.message);
    r->e = avi_engine_create_for_scene(&r->s, &r->info, r->m, &err);
    ck_assert_msg(r->e != NULL, "%s", err.message);
    if (threads > 0) {
        if (seed) setenv("AVI_CHAOS_SEED", seed, 1);
        else unsetenv("AVI_CHAOS_SEED");
        ck_assert_int_eq(avi_engine_set_threads(r->e, threads), AVI_OK);
        unsetenv("AVI_CHAOS_SEED");
        ck_assert_int_eq(avi_pool_threads(avi_engine_pool(r->e)), threads);
    }
}

static inline void scene_run_close(scene_run *r)
{
    avi_engine_destroy(r->e);
    avi_model_destroy(r->m);
    avi_scene_bodies_free(&r->info);
    avi_scene_free(&r->s);
}

/* b holds a's records, event counts and time, bit for bit. */
static inline void scene_run_same(const scene_run *a, const scene_run *b, const char *ctx)
{
    size_t n = avi_model_record_count(a->m);
    ck_assert_uint_eq(n, avi_model_record_count(b->m));
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(memcmp(&a->m->vert[i], &b->m->vert[i], sizeof a->m->vert[i]) == 0, "%s: record %zu differs", ctx,
                      i);
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        ck_assert_msg(avi_engine_event_count(a->e, (avi_kind)k) == avi_engine_event_count(b->e, (avi_kind)k),
                      "%s: %s events differ", ctx, avi_kind_name((avi_kind)k));
    ck_assert_msg(memcmp(&a->e->time, &b->e->time, sizeof a->e->time) == 0, "%s: time differs", ctx);
}

#endif
