/* The fork-join pool (base/pool.h): every item is visited exactly once, by
 * a worker number in range, for any thread count (more threads than cores
 * included) and under chaos; avi_pool_run calls each part once; bad
 * counts are refused; avi_cpu_count follows the affinity mask; a signal
 * sent to the process from a worker is handled on the caller's thread. */
#define _GNU_SOURCE
#include "check_main.h"
#include "base/pool.h"
#include "avi/avi.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef struct {
    _Atomic unsigned *hits;
    int threads;
    _Atomic int bad_worker;
    _Atomic size_t chunks;
    _Atomic size_t max_chunk;
} visit;

static void visit_fn(void *ctx, size_t b, size_t e, int worker)
{
    visit *v = ctx;
    if (worker < 0 || worker >= v->threads) atomic_store(&v->bad_worker, 1);
    atomic_fetch_add(&v->chunks, 1);
    size_t len = e - b, m = atomic_load(&v->max_chunk);
    while (len > m && !atomic_compare_exchange_weak(&v->max_chunk, &m, len)) {}
    for (size_t i = b; i < e; i++) atomic_fetch_add(&v->hits[i], 1);
}

/* Runs n items with `grain` on a pool of `threads` and checks coverage. */
static void check_cover(avi_pool *p, int threads, size_t n, size_t grain)
{
    visit v = {calloc(n + 1, sizeof(unsigned)), threads, 0, 0, 0};
    ck_assert_ptr_nonnull(v.hits);
    avi_pool_for(p, n, grain, visit_fn, &v);
    for (size_t i = 0; i < n; i++) ck_assert_uint_eq(atomic_load(&v.hits[i]), 1);
    ck_assert_uint_eq(atomic_load(&v.hits[n]), 0);
    ck_assert_int_eq(atomic_load(&v.bad_worker), 0);
    size_t g = grain ? grain : 1, most = atomic_load(&v.max_chunk);
    if (n && !avi_pool_chaos(p)) {
        if (avi_pool_threads(p) == 1) ck_assert_uint_eq(atomic_load(&v.chunks), 1); /* one call on the caller */
        else ck_assert_uint_le(most, g);
    }
    if (n && avi_pool_chaos(p)) ck_assert_uint_le(most, 2 * g);
    free(v.hits);
}

START_TEST(test_cover)
{
    static const int counts[] = {1, 2, 3, 4, 8, 17};
    static const size_t sizes[] = {0, 1, 7, 100, 4097};
    for (size_t c = 0; c < sizeof counts / sizeof *counts; c++) {
        avi_error err;
        avi_pool *p = avi_pool_create(counts[c], &err);
        ck_assert_ptr_nonnull(p);
        ck_assert_int_eq(avi_pool_threads(p), counts[c]);
        for (int rep = 0; rep < 20; rep++)
            for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) check_cover(p, counts[c], sizes[s], 1 + rep * 13);
        avi_pool_destroy(p);
    }
    check_cover(NULL, 1, 1000, 10); /* a NULL pool runs on the caller */
}
END_TEST

START_TEST(test_chaos)
{
    setenv("AVI_CHAOS_SEED", "12345", 1);
    avi_error err;
    for (int threads = 1; threads <= 4; threads += 3) {
        avi_pool *p = avi_pool_create(threads, &err);
        ck_assert_ptr_nonnull(p);
        ck_assert_uint_eq(avi_pool_chaos(p), 12345);
        size_t most = 0;
        for (int rep = 0; rep < 30; rep++) {
            visit v = {calloc(1001, sizeof(unsigned)), threads, 0, 0, 0};
            avi_pool_for(p, 1000, 10, visit_fn, &v);
            for (size_t i = 0; i < 1000; i++) ck_assert_uint_eq(atomic_load(&v.hits[i]), 1);
            /* chaos cuts chunks of 1 to 20 items: more than 50 chunks */
            if (atomic_load(&v.chunks) > most) most = atomic_load(&v.chunks);
            free(v.hits);
        }
        ck_assert_uint_gt(most, 50);
        avi_pool_destroy(p);
    }
    unsetenv("AVI_CHAOS_SEED");
}
END_TEST

static void run_fn(void *ctx, int worker, int threads)
{
    _Atomic int *seen = ctx;
    ck_assert_int_ge(worker, 0);
    ck_assert_int_lt(worker, threads);
    atomic_fetch_add(&seen[worker], 1);
}

START_TEST(test_run_each_once)
{
    avi_error err;
    for (int threads = 1; threads <= 9; threads += 4) {
        avi_pool *p = avi_pool_create(threads, &err);
        ck_assert_ptr_nonnull(p);
        for (int rep = 0; rep < 200; rep++) {
            _Atomic int seen[16] = {0};
            avi_pool_run(p, run_fn, seen);
            for (int w = 0; w < 16; w++) ck_assert_int_eq(atomic_load(&seen[w]), w < threads ? 1 : 0);
        }
        avi_pool_destroy(p);
    }
}
END_TEST

START_TEST(test_refusals)
{
    avi_error err;
    ck_assert_ptr_null(avi_pool_create(0, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_ptr_null(avi_pool_create(AVI_POOL_MAX_THREADS + 1, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_int_eq(avi_pool_threads(NULL), 1);
}
END_TEST

START_TEST(test_cpu_count)
{
    cpu_set_t set;
    ck_assert_int_eq(sched_getaffinity(0, sizeof set, &set), 0);
    ck_assert_int_eq(avi_cpu_count(), CPU_COUNT(&set));
    cpu_set_t one;
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &set)) {
            CPU_SET(c, &one);
            break;
        }
    ck_assert_int_eq(sched_setaffinity(0, sizeof one, &one), 0);
    ck_assert_int_eq(avi_cpu_count(), 1);
    ck_assert_int_eq(sched_setaffinity(0, sizeof set, &set), 0);
}
END_TEST

static pthread_t caller;
static _Atomic int on_caller, elsewhere;

static void note_thread(int sig)
{
    (void)sig;
    if (pthread_equal(pthread_self(), caller)) atomic_fetch_add(&on_caller, 1);
    else atomic_fetch_add(&elsewhere, 1);
}

/* Each worker but the caller sends the process a signal: Linux hands a
 * process-directed signal to the sending thread when it does not block it,
 * so only workers that block every signal leave it to the caller. */
static void send_from_worker(void *ctx, int worker, int threads)
{
    (void)ctx;
    (void)threads;
    if (worker != 0) kill(getpid(), SIGUSR1);
}

START_TEST(test_signals_reach_the_caller)
{
    caller = pthread_self();
    struct sigaction sa = {0}, old;
    sa.sa_handler = note_thread;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGUSR1, &sa, &old), 0);
    avi_error err;
    avi_pool *p = avi_pool_create(8, &err);
    ck_assert_ptr_nonnull(p);
    sigset_t now;
    pthread_sigmask(SIG_SETMASK, NULL, &now);
    ck_assert(!sigismember(&now, SIGUSR1)); /* the caller's mask is restored */
    /* Standard signals pending together merge: at least one per round,
     * waited for before the next. */
    for (int round = 0; round < 50; round++) {
        int before = atomic_load(&on_caller) + atomic_load(&elsewhere);
        avi_pool_run(p, send_from_worker, NULL);
        for (int wait = 0; wait < 2000 && atomic_load(&on_caller) + atomic_load(&elsewhere) == before; wait++)
            nanosleep(&(struct timespec){0, 100000}, NULL);
    }
    ck_assert_int_ge(atomic_load(&on_caller), 50);
    ck_assert_int_eq(atomic_load(&elsewhere), 0);
    avi_pool_destroy(p);
    sigaction(SIGUSR1, &old, NULL);
}
END_TEST

static Suite *pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_cover);
    tcase_add_test(tc, test_chaos);
    tcase_add_test(tc, test_run_each_once);
    tcase_add_test(tc, test_refusals);
    tcase_add_test(tc, test_cpu_count);
    tcase_add_test(tc, test_signals_reach_the_caller);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(pool_suite)
