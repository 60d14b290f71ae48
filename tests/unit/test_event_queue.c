/* The event queue against a reference ordering (qsort on (time, id)). */
#include "check_main.h"
#include "../../bench/event_queue.h"

#include <stdlib.h>

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int cmp_event(const void *pa, const void *pb)
{
    const avi_event *a = pa, *b = pb;
    if (avi_event_less(a, b)) return -1;
    if (avi_event_less(b, a)) return 1;
    return 0;
}

/* Times drawn from a few values so that ties are frequent. */
static avi_event random_event(uint32_t id, int distinct_times)
{
    avi_event e;
    e.t = (double)(rng() % (uint64_t)distinct_times) * 0.25;
    e.id = id;
    e.n = 0;
    return e;
}

START_TEST(test_push_pop_matches_sorted_order)
{
    const int sizes[] = {1, 2, 3, 4, 5, 17, 100, 1000, 20000};
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
        int n = sizes[s];
        avi_event_queue q;
        ck_assert_int_eq(avi_queue_init(&q, 1), 0);
        avi_event *ref = malloc((size_t)n * sizeof *ref);
        for (int i = 0; i < n; i++) {
            /* ids of mixed kinds, not in insertion order */
            uint32_t id = avi_event_id((unsigned)(rng() % 6), (uint32_t)(rng() % 100000));
            ref[i] = random_event(id, 1 + n / 4);
            ck_assert_int_eq(avi_queue_push(&q, ref[i]), 0);
        }
        qsort(ref, (size_t)n, sizeof *ref, cmp_event);
        for (int i = 0; i < n; i++) {
            avi_event e;
            ck_assert_int_eq(avi_queue_pop(&q, &e), 0);
            ck_assert(e.t == ref[i].t && e.id == ref[i].id);
        }
        avi_event e;
        ck_assert_int_eq(avi_queue_pop(&q, &e), -1);
        free(ref);
        avi_queue_free(&q);
    }
}
END_TEST

/* Steady state of the AVI: replace_top with a later time. The popped
 * sequence must match a reference simulation that scans for the minimum. */
START_TEST(test_replace_top_matches_linear_scan)
{
    const int n = 257;
    avi_event_queue q;
    avi_queue_init(&q, (size_t)n);
    double dt[257];
    avi_event ref[257];
    for (int i = 0; i < n; i++) {
        /* Steps that are multiples of 1/64 make many exact ties. */
        dt[i] = (double)(1 + rng() % 8) / 64.0;
        ref[i] = (avi_event){0.0, avi_event_id((unsigned)(i % 5), (uint32_t)i), 0};
        avi_queue_push(&q, ref[i]);
    }
    for (int step = 0; step < 200000; step++) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if (avi_event_less(&ref[i], &ref[best])) best = i;
        avi_event top = *avi_queue_top(&q);
        ck_assert(top.t == ref[best].t && top.id == ref[best].id && top.n == ref[best].n);
        uint32_t idx = top.id & AVI_ID_INDEX_MASK;
        top.n++;
        top.t = (double)top.n * dt[idx];
        ref[best] = top;
        avi_queue_replace_top(&q, top);
    }
    avi_queue_free(&q);
}
END_TEST

START_TEST(test_tie_rule_kind_then_index)
{
    avi_event_queue q;
    avi_queue_init(&q, 4);
    avi_queue_push(&q, (avi_event){1.0, avi_event_id(3, 0), 0});
    avi_queue_push(&q, (avi_event){1.0, avi_event_id(1, 7), 0});
    avi_queue_push(&q, (avi_event){1.0, avi_event_id(1, 2), 0});
    avi_queue_push(&q, (avi_event){0.5, avi_event_id(4, 9), 0});
    avi_event e;
    avi_queue_pop(&q, &e);
    ck_assert(e.t == 0.5);
    avi_queue_pop(&q, &e);
    ck_assert_uint_eq(e.id, avi_event_id(1, 2));
    avi_queue_pop(&q, &e);
    ck_assert_uint_eq(e.id, avi_event_id(1, 7));
    avi_queue_pop(&q, &e);
    ck_assert_uint_eq(e.id, avi_event_id(3, 0));
    avi_queue_free(&q);
}
END_TEST

START_TEST(test_children_share_a_cache_line)
{
    avi_event_queue q;
    avi_queue_init(&q, 100);
    for (size_t i = 0; i < 20; i++)
        ck_assert_uint_eq(((uintptr_t)&q.heap[4 * i + 1]) % 64, 0);
    avi_queue_free(&q);
}
END_TEST

static Suite *queue_suite(void)
{
    Suite *s = suite_create("event_queue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_push_pop_matches_sorted_order);
    tcase_add_test(tc, test_replace_top_matches_linear_scan);
    tcase_add_test(tc, test_tie_rule_kind_then_index);
    tcase_add_test(tc, test_children_share_a_cache_line);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(queue_suite)
