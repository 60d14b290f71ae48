/* The calendar queue and the two-level queue against reference orderings:
 * qsort on (time, id), a linear scan for the minimum, and the 4-ary heap.
 * Every check runs on both queues through the table below. */
#include "check_main.h"
#include "../../bench/calendar_queue.h"
#include "../../bench/event_queue.h"
#include "core/twolevel_queue.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ck_assert records every passing check (a write per call); inside the
 * long loops only failures are reported. */
#define REQUIRE(c)                                                        \
    do {                                                                  \
        if (!(c)) ck_abort_msg("%s:%d: %s", __FILE__, __LINE__, #c);      \
    } while (0)

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform(void) { return (double)(rng() >> 11) * 0x1.0p-53; }

static int cmp_event(const void *pa, const void *pb)
{
    const avi_event *a = pa, *b = pb;
    if (avi_event_less(a, b)) return -1;
    if (avi_event_less(b, a)) return 1;
    return 0;
}

typedef union {
    avi_calendar_queue cq;
    avi_twolevel_queue tl;
} any_queue;

typedef struct {
    const char *name;
    int (*init)(any_queue *, size_t, const avi_clock_stats *);
    void (*free)(any_queue *);
    int (*push)(any_queue *, avi_event);
    int (*pop)(any_queue *, avi_event *);
    const avi_event *(*top)(any_queue *);
    int (*replace_top)(any_queue *, avi_event);
    int (*remove)(any_queue *, double, uint32_t);
    int (*retune)(any_queue *, const avi_clock_stats *);
    size_t (*size)(const any_queue *);
    size_t (*bytes)(const any_queue *);
    size_t (*bottom_cap)(const any_queue *);
} queue_ops;

static int cq_init(any_queue *q, size_t c, const avi_clock_stats *s) { return avi_cq_init(&q->cq, c, s); }
static void cq_free(any_queue *q) { avi_cq_free(&q->cq); }
static int cq_push(any_queue *q, avi_event e) { return avi_cq_push(&q->cq, e); }
static int cq_pop(any_queue *q, avi_event *e) { return avi_cq_pop(&q->cq, e); }
static const avi_event *cq_top(any_queue *q) { return avi_cq_top(&q->cq); }
static int cq_replace(any_queue *q, avi_event e) { return avi_cq_replace_top(&q->cq, e); }
static int cq_remove(any_queue *q, double t, uint32_t id) { return avi_cq_remove(&q->cq, t, id); }
static int cq_retune(any_queue *q, const avi_clock_stats *s) { return avi_cq_retune(&q->cq, s); }
static size_t cq_size(const any_queue *q) { return avi_cq_size(&q->cq); }
static size_t cq_bytes(const any_queue *q) { return avi_cq_bytes(&q->cq); }
static size_t cq_bottom(const any_queue *q) { return q->cq.bottom_cap + (size_t)q->cq.chunk_cap * AVI_CQ_CHUNK; }

static int tl_init(any_queue *q, size_t c, const avi_clock_stats *s) { return avi_tl_init(&q->tl, c, s); }
static void tl_free(any_queue *q) { avi_tl_free(&q->tl); }
static int tl_push(any_queue *q, avi_event e) { return avi_tl_push(&q->tl, e); }
static int tl_pop(any_queue *q, avi_event *e) { return avi_tl_pop(&q->tl, e); }
static const avi_event *tl_top(any_queue *q) { return avi_tl_top(&q->tl); }
static int tl_replace(any_queue *q, avi_event e) { return avi_tl_replace_top(&q->tl, e); }
static int tl_remove(any_queue *q, double t, uint32_t id) { return avi_tl_remove(&q->tl, t, id); }
static int tl_retune(any_queue *q, const avi_clock_stats *s) { return avi_tl_retune(&q->tl, s); }
static size_t tl_size(const any_queue *q) { return avi_tl_size(&q->tl); }
static size_t tl_bytes(const any_queue *q) { return avi_tl_bytes(&q->tl); }
static size_t tl_bottom(const any_queue *q) { return q->tl.bottom_cap; }

static const queue_ops QUEUES[] = {
    {"calendar", cq_init, cq_free, cq_push, cq_pop, cq_top, cq_replace, cq_remove, cq_retune, cq_size, cq_bytes,
     cq_bottom},
    {"twolevel", tl_init, tl_free, tl_push, tl_pop, tl_top, tl_replace, tl_remove, tl_retune, tl_size, tl_bytes,
     tl_bottom},
};
#define NQUEUES (sizeof QUEUES / sizeof *QUEUES)

static int same_key(avi_event a, avi_event b) { return a.t == b.t && a.id == b.id; }

/* Widths from very narrow (most entries in far) to very wide (everything in
 * one bucket), and no statistics at all. */
static const avi_clock_stats *stats_case(int c, avi_clock_stats *s)
{
    static const double dts[] = {0.0, 1e-4, 0.25, 3.0, 1e6};
    if (c == 0) return NULL;
    *s = (avi_clock_stats){0};
    avi_clock_stats_add(s, dts[c]);
    return s;
}

START_TEST(test_push_pop_matches_sorted_order)
{
    const queue_ops *Q = &QUEUES[_i];
    const int sizes[] = {1, 2, 3, 4, 5, 17, 100, 1000, 20000};
    for (int c = 0; c < 5; c++)
        for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++) {
            int n = sizes[z];
            avi_clock_stats st;
            any_queue q;
            REQUIRE(Q->init(&q, 1, stats_case(c, &st)) == 0);
            avi_event *ref = malloc((size_t)n * sizeof *ref);
            for (int round = 0; round < 2; round++) { /* the second after running empty */
                for (int i = 0; i < n; i++) {
                    uint32_t id = avi_event_id((unsigned)(rng() % 6), (uint32_t)(rng() % 100000));
                    ref[i] = (avi_event){(double)(rng() % (uint64_t)(1 + n / 4)) * 0.25, id, 0};
                    REQUIRE(Q->push(&q, ref[i]) == 0);
                }
                REQUIRE(Q->size(&q) == (size_t)n);
                qsort(ref, (size_t)n, sizeof *ref, cmp_event);
                for (int i = 0; i < n; i++) {
                    avi_event e;
                    REQUIRE(Q->pop(&q, &e) == 0);
                    REQUIRE(same_key(e, ref[i]));
                }
                avi_event e;
                REQUIRE(Q->pop(&q, &e) == -1);
            }
            free(ref);
            Q->free(&q);
        }
}
END_TEST

/* Runs clocks with steps dt through `steps` replace_top calls and checks
 * every top against a linear scan; stats may leave out some clocks (then
 * their entries take the far path). */
static void run_against_scan(const queue_ops *Q, int n, const double *dt, const double *t0, const avi_clock_stats *st, int steps)
{
    any_queue q;
    REQUIRE(Q->init(&q, (size_t)n, st) == 0);
    avi_event *ref = malloc((size_t)n * sizeof *ref);
    for (int i = 0; i < n; i++) {
        ref[i] = (avi_event){t0 ? t0[i] : 0.0, avi_event_id((unsigned)(i % 5), (uint32_t)i), 0};
        REQUIRE(Q->push(&q, ref[i]) == 0);
    }
    for (int step = 0; step < steps; step++) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if (avi_event_less(&ref[i], &ref[best])) best = i;
        avi_event top = *Q->top(&q);
        REQUIRE(same_key(top, ref[best]) && top.n == ref[best].n);
        uint32_t idx = top.id & AVI_ID_INDEX_MASK;
        top.n++;
        top.t = (t0 ? t0[idx] : 0.0) + (double)top.n * dt[idx];
        ref[best] = top;
        REQUIRE(Q->replace_top(&q, top) == 0);
        REQUIRE(Q->size(&q) == (size_t)n);
    }
    free(ref);
    Q->free(&q);
}

static int steps_for(int full) { return avi_test_quick() ? full / 10 : full; }

START_TEST(test_replace_top_matches_linear_scan)
{
    const queue_ops *Q = &QUEUES[_i];
    enum { N = 257 };
    double dt[N];
    avi_clock_stats st = {0};
    for (int i = 0; i < N; i++) {
        /* Steps that are multiples of 1/64 make many exact ties. */
        dt[i] = (double)(1 + rng() % 8) / 64.0;
        avi_clock_stats_add(&st, dt[i]);
    }
    run_against_scan(Q, N, dt, NULL, &st, steps_for(200000));
    run_against_scan(Q, N, dt, NULL, NULL, steps_for(50000));
}
END_TEST

/* Every clock with the same step: all N entries tie at every time. */
START_TEST(test_equal_steps_tie_everywhere)
{
    const queue_ops *Q = &QUEUES[_i];
    enum { N = 300 };
    double dt[N];
    avi_clock_stats st = {0};
    for (int i = 0; i < N; i++) {
        dt[i] = 0.1;
        avi_clock_stats_add(&st, dt[i]);
    }
    run_against_scan(Q, N, dt, NULL, &st, steps_for(100000));
}
END_TEST

/* Steps spread 1:1000 (log-uniform), random phases, plus a few clocks whose
 * steps are 10^6 times longer and are left out of the statistics. */
START_TEST(test_wide_spread_and_very_long_steps)
{
    const queue_ops *Q = &QUEUES[_i];
    enum { N = 400 };
    double dt[N], t0[N];
    avi_clock_stats st = {0};
    for (int i = 0; i < N; i++) {
        dt[i] = 1e-3 * pow(1000.0, uniform());
        t0[i] = i % 3 ? uniform() * dt[i] : 0.0;
        if (i % 97 == 5) {
            dt[i] = 1e3 * (1 + i % 4);
        } else {
            avi_clock_stats_add(&st, dt[i]);
        }
    }
    run_against_scan(Q, N, dt, t0, &st, steps_for(200000));
    /* Statistics far off in both directions only cost speed. */
    avi_clock_stats narrow = {0};
    avi_clock_stats_add(&narrow, 1e-9);
    run_against_scan(Q, N, dt, t0, &narrow, steps_for(20000));
    avi_clock_stats wide = {0};
    avi_clock_stats_add(&wide, 1e9);
    run_against_scan(Q, N, dt, t0, &wide, steps_for(20000));
    /* Statistics without the rate (it is then estimated). */
    avi_clock_stats norate = st;
    norate.rate = 0;
    run_against_scan(Q, N, dt, t0, &norate, steps_for(20000));
}
END_TEST

START_TEST(test_tie_rule_kind_then_index)
{
    const queue_ops *Q = &QUEUES[_i];
    any_queue q;
    avi_clock_stats st = {0};
    avi_clock_stats_add(&st, 0.5);
    Q->init(&q, 4, &st);
    Q->push(&q, (avi_event){1.0, avi_event_id(3, 0), 0});
    Q->push(&q, (avi_event){1.0, avi_event_id(1, 7), 0});
    Q->push(&q, (avi_event){1.0, avi_event_id(1, 2), 0});
    Q->push(&q, (avi_event){0.5, avi_event_id(4, 9), 0});
    avi_event e;
    Q->pop(&q, &e);
    ck_assert(e.t == 0.5);
    Q->pop(&q, &e);
    ck_assert_uint_eq(e.id, avi_event_id(1, 2));
    Q->pop(&q, &e);
    ck_assert_uint_eq(e.id, avi_event_id(1, 7));
    Q->pop(&q, &e);
    ck_assert_uint_eq(e.id, avi_event_id(3, 0));
    Q->free(&q);
}
END_TEST

/* Pushes (also of times before the current bucket), pops, replace_tops and
 * removals in random order against a reference set scanned linearly. */
START_TEST(test_mixed_operations_and_removal)
{
    const queue_ops *Q = &QUEUES[_i];
    enum { MAXN = 600 };
    avi_event ref[MAXN];
    int n = 0;
    uint32_t next_id = 0;
    avi_clock_stats st = {0};
    avi_clock_stats_add(&st, 0.01);
    avi_clock_stats_add(&st, 2.0);
    any_queue q;
    REQUIRE(Q->init(&q, 16, &st) == 0);
    double now = 0;
    int steps = steps_for(200000);
    for (int step = 0; step < steps; step++) {
        unsigned op = (unsigned)(rng() % 16);
        if (n < MAXN && (op < 5 || n == 0)) {
            /* Mostly later than now, sometimes at now exactly or a little
             * earlier (the current bucket), rarely far out. */
            double t = now + (op == 0 ? 0.0 : op == 1 ? -0.001 * uniform() : op == 2 ? 1e4 * uniform() : 2.0 * uniform());
            if (t < 0) t = 0;
            t = floor(t * 256) / 256; /* ties */
            avi_event e = {t, avi_event_id((unsigned)(rng() % 6), next_id++ & AVI_ID_INDEX_MASK), 0};
            REQUIRE(Q->push(&q, e) == 0);
            ref[n++] = e;
        } else if (op < 11) {
            int best = 0;
            for (int i = 1; i < n; i++)
                if (avi_event_less(&ref[i], &ref[best])) best = i;
            avi_event top = *Q->top(&q);
            REQUIRE(same_key(top, ref[best]));
            now = top.t;
            if (op < 9) {
                top.t += floor(2.0 * uniform() * 256) / 256;
                ref[best] = top;
                REQUIRE(Q->replace_top(&q, top) == 0);
            } else {
                avi_event e;
                REQUIRE(Q->pop(&q, &e) == 0);
                REQUIRE(same_key(e, top));
                ref[best] = ref[--n];
            }
        } else {
            int i = (int)(rng() % (uint64_t)n);
            if (op == 15) {
                /* Absent keys: a wrong id, then a wrong time. */
                REQUIRE(Q->remove(&q, ref[i].t, ref[i].id ^ 0x0fffffffu) == -1);
                REQUIRE(Q->remove(&q, ref[i].t + 0.5, ref[i].id) == -1);
            } else {
                REQUIRE(Q->remove(&q, ref[i].t, ref[i].id) == 0);
                ref[i] = ref[--n];
            }
        }
        REQUIRE(Q->size(&q) == (size_t)n);
        if (step == steps / 2) {
            /* The clock set changed: choose the width again mid-run. */
            avi_clock_stats st2 = {0};
            avi_clock_stats_add(&st2, 0.3);
            REQUIRE(Q->retune(&q, &st2) == 0);
            REQUIRE(Q->size(&q) == (size_t)n);
        }
    }
    while (n > 0) {
        int best = 0;
        for (int i = 1; i < n; i++)
            if (avi_event_less(&ref[i], &ref[best])) best = i;
        avi_event e;
        REQUIRE(Q->pop(&q, &e) == 0);
        REQUIRE(same_key(e, ref[best]));
        ref[best] = ref[--n];
    }
    Q->free(&q);
}
END_TEST

/* Removal from a crowded bucket (chunks unlinked from the middle of the
 * list), from far, and from bottom after a retune. */
START_TEST(test_remove_from_crowded_bucket_far_and_bottom)
{
    const queue_ops *Q = &QUEUES[_i];
    enum { CROWD = 300, FAR = 50, N = CROWD + FAR };
    avi_event ref[N];
    int n = 0;
    avi_clock_stats st = {0};
    avi_clock_stats_add(&st, 1.0);
    any_queue q;
    REQUIRE(Q->init(&q, 4, &st) == 0);
    for (int i = 0; i < CROWD; i++) ref[n++] = (avi_event){2.0 + 1e-12 * (double)(rng() % 1000), (uint32_t)i, 0};
    for (int i = 0; i < FAR; i++) ref[n++] = (avi_event){1e6 + (double)(rng() % 10), (uint32_t)(CROWD + i), 0};
    for (int i = 0; i < n; i++) REQUIRE(Q->push(&q, ref[i]) == 0);
    /* Half of the crowd and a few far entries, in random order. */
    for (int k = 0; k < CROWD / 2 + 10; k++) {
        int i = (int)(rng() % (uint64_t)n);
        REQUIRE(Q->remove(&q, ref[i].t, ref[i].id) == 0);
        REQUIRE(Q->remove(&q, ref[i].t, ref[i].id) == -1);
        ref[i] = ref[--n];
        REQUIRE(Q->size(&q) == (size_t)n);
    }
    qsort(ref, (size_t)n, sizeof *ref, cmp_event);
    int done = 0;
    for (; done < 5; done++) {
        avi_event e;
        REQUIRE(Q->pop(&q, &e) == 0 && same_key(e, ref[done]));
    }
    /* bottom now holds the rest of the crowd; rebuild, then remove from it. */
    REQUIRE(Q->retune(&q, NULL) == 0);
    for (int k = 0; k < 20; k++) {
        int i = done + (int)(rng() % (uint64_t)(n - done));
        REQUIRE(Q->remove(&q, ref[i].t, ref[i].id) == 0);
        memmove(ref + i, ref + i + 1, (size_t)(n - i - 1) * sizeof *ref);
        n--;
    }
    for (; done < n; done++) {
        avi_event e;
        REQUIRE(Q->pop(&q, &e) == 0 && same_key(e, ref[done]));
    }
    REQUIRE(Q->size(&q) == 0);
    Q->free(&q);
}
END_TEST

/* The same clocks through the heap and the calendar queue, all starting at
 * t = 0 as the engine starts them: identical event sequences. After the
 * start-up pile-up, memory settles and stays constant; without a block of
 * equal steps the pile-up's memory is given back. */
static void run_against_heap(const queue_ops *Q, int equal_block)
{
    const size_t n = avi_test_quick() ? 3000 : 20000;
    double *dt = malloc(n * sizeof *dt);
    avi_clock_stats st = {0};
    for (size_t i = 0; i < n; i++) {
        dt[i] = 1.0 + 2.0 * uniform();
        if (equal_block && i % 4 == 0) dt[i] = 1.5; /* ties */
        avi_clock_stats_add(&st, dt[i]);
    }
    avi_event_queue h;
    any_queue q;
    REQUIRE(avi_queue_init(&h, n) == 0);
    REQUIRE(Q->init(&q, n, &st) == 0);
    for (size_t i = 0; i < n; i++) {
        avi_event e = {0.0, avi_event_id((unsigned)(i % 3), (uint32_t)i), 0};
        avi_queue_push(&h, e);
        Q->push(&q, e);
    }
    size_t bytes_mid = 0;
    const size_t steps = 40 * n;
    for (size_t s = 0; s < steps; s++) {
        avi_event a = *avi_queue_top(&h);
        avi_event b = *Q->top(&q);
        REQUIRE(same_key(a, b) && a.n == b.n);
        uint32_t i = a.id & AVI_ID_INDEX_MASK;
        a.n++;
        a.t = (double)a.n * dt[i];
        avi_queue_replace_top(&h, a);
        Q->replace_top(&q, a);
        if (s == steps / 2) bytes_mid = Q->bytes(&q);
    }
    ck_assert_uint_eq(Q->bytes(&q), bytes_mid);
    if (!equal_block && !avi_test_quick()) { /* the quick size is below the trim threshold */
        ck_assert_uint_lt(Q->bottom_cap(&q), n / 4);
    }
    avi_queue_free(&h);
    Q->free(&q);
    free(dt);
}

START_TEST(test_same_sequence_as_heap)
{
    const queue_ops *Q = &QUEUES[_i];
    run_against_heap(Q, 0);
    run_against_heap(Q, 1);
}
END_TEST

/* A huge time saturates the bucket index and still orders correctly. */
START_TEST(test_extreme_times)
{
    const queue_ops *Q = &QUEUES[_i];
    any_queue q;
    avi_clock_stats st = {0};
    avi_clock_stats_add(&st, 1e-6);
    Q->init(&q, 8, &st);
    const double t[] = {1e300, 0.0, 1e-300, 5e-7, 1e15, 1e300, INFINITY, 3.0};
    for (uint32_t i = 0; i < 8; i++) Q->push(&q, (avi_event){t[i], 7 - i, 0});
    const double want[] = {0.0, 1e-300, 5e-7, 3.0, 1e15, 1e300, 1e300, INFINITY};
    const uint32_t want_id[] = {6, 5, 4, 0, 3, 2, 7, 1};
    for (int i = 0; i < 8; i++) {
        avi_event e;
        ck_assert_int_eq(Q->pop(&q, &e), 0);
        ck_assert(e.t == want[i]);
        ck_assert_uint_eq(e.id, want_id[i]);
    }
    Q->free(&q);
}
END_TEST

/* peek shows the loaded span in the order pop will serve it. */
START_TEST(test_twolevel_peek)
{
    avi_clock_stats st = {0};
    for (int i = 0; i < 1000; i++) avi_clock_stats_add(&st, 1.0 + (double)(i % 3));
    avi_twolevel_queue q;
    ck_assert_int_eq(avi_tl_init(&q, 1000, &st), 0);
    for (uint32_t i = 0; i < 1000; i++) avi_tl_push(&q, (avi_event){uniform() * 3.0, i, 0});
    int seen = 0;
    while (avi_tl_size(&q) > 0) {
        avi_tl_top(&q);
        size_t k = 0;
        avi_event ahead[1000];
        for (const avi_event *p; (p = avi_tl_peek(&q, k)) != NULL; k++) ahead[k] = *p;
        REQUIRE(k >= 1);
        for (size_t j = 0; j < k; j++) {
            avi_event e;
            REQUIRE(avi_tl_pop(&q, &e) == 0 && same_key(e, ahead[j]));
            seen++;
        }
    }
    ck_assert_int_eq(seen, 1000);
    ck_assert_ptr_null(avi_tl_peek(&q, 0));
    avi_tl_free(&q);
}
END_TEST

/* The shared sort: random, reversed, few runs (merged through tmp), many
 * runs, duplicates; with and without tmp. */
START_TEST(test_event_sort)
{
    const size_t sizes[] = {0, 1, 2, 31, 33, 100, 1000, 5000};
    avi_event *a = malloc(5000 * sizeof *a), *b = malloc(5000 * sizeof *b), *tmp = malloc(5000 * sizeof *tmp);
    for (size_t z = 0; z < sizeof sizes / sizeof *sizes; z++)
        for (int pattern = 0; pattern < 5; pattern++)
            for (int with_tmp = 0; with_tmp < 2; with_tmp++) {
                size_t n = sizes[z];
                size_t runs = 1 + rng() % 6;
                for (size_t i = 0; i < n; i++) {
                    double t = pattern == 0   ? (double)(rng() % 50)
                               : pattern == 1 ? (double)(n - i)
                               : pattern == 2 ? 1.0 /* equal times, ids in a few ascending runs */
                               : pattern == 3 ? (double)(i % 40)
                                              : (double)(rng() % 3);
                    uint32_t id = pattern == 2 ? (uint32_t)((i % (n / runs + 1)) * runs + i / (n / runs + 1))
                                               : (uint32_t)(rng() % 7);
                    a[i] = b[i] = (avi_event){t, id, (uint32_t)i};
                }
                avi_event_sort(a, n, with_tmp ? tmp : NULL);
                qsort(b, n, sizeof *b, cmp_event);
                for (size_t i = 0; i < n; i++) REQUIRE(same_key(a[i], b[i]));
            }
    free(a);
    free(b);
    free(tmp);
}
END_TEST

static Suite *calendar_suite(void)
{
    Suite *s = suite_create("calendar_queue");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_loop_test(tc, test_push_pop_matches_sorted_order, 0, NQUEUES);
    tcase_add_loop_test(tc, test_replace_top_matches_linear_scan, 0, NQUEUES);
    tcase_add_loop_test(tc, test_equal_steps_tie_everywhere, 0, NQUEUES);
    tcase_add_loop_test(tc, test_wide_spread_and_very_long_steps, 0, NQUEUES);
    tcase_add_loop_test(tc, test_tie_rule_kind_then_index, 0, NQUEUES);
    tcase_add_loop_test(tc, test_mixed_operations_and_removal, 0, NQUEUES);
    tcase_add_loop_test(tc, test_remove_from_crowded_bucket_far_and_bottom, 0, NQUEUES);
    tcase_add_loop_test(tc, test_same_sequence_as_heap, 0, NQUEUES);
    tcase_add_loop_test(tc, test_extreme_times, 0, NQUEUES);
    tcase_add_test(tc, test_event_sort);
    tcase_add_test(tc, test_twolevel_peek);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(calendar_suite)
