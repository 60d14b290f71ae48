/* The fork-join pool (base/pool.h). A job is published by bumping a
 * generation counter; workers spin on it for a while (a round of the
 * executor lasts microseconds, a wake-up from a condition variable tens of
 * them), then sleep on a condition variable. Chunks (and avi_pool_run's
 * worker numbers) are handed out by an atomic counter: the fastest thread
 * takes the most. The caller waits only for the workers that joined the
 * job before it closed it: a worker the scheduler has not run (more
 * threads than free processors) never stalls a call; the caller then does
 * the work itself. */
#define _GNU_SOURCE
#include "base/pool.h"

#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* helgrind sees no order in C11 atomics: the hand-offs below tell it
 * (make test-helgrind), and the atomic fields, only ever accessed
 * atomically, are left out of its checks (ThreadSanitizer checks them).
 * Outside valgrind each annotation is a few instructions a job; without
 * valgrind's header, nothing. */
#if defined(__has_include)
#if __has_include(<valgrind/helgrind.h>)
#include <valgrind/helgrind.h>
#endif
#endif
#ifndef ANNOTATE_HAPPENS_BEFORE
#define ANNOTATE_HAPPENS_BEFORE(obj) ((void)(obj))
#define ANNOTATE_HAPPENS_AFTER(obj) ((void)(obj))
#endif
#ifndef VALGRIND_HG_DISABLE_CHECKING
#define VALGRIND_HG_DISABLE_CHECKING(start, len) ((void)(start), (void)(len))
#endif

/* Spins before a waiting thread sleeps; with more threads than processors a
 * spinning thread only delays the one it waits for, so it sleeps at once. */
#define SPIN_CORES 2000
#define SPIN_OVERSUBSCRIBED 64

struct avi_pool {
    int threads;
    int spin;
    pthread_t *tid;
    struct worker_arg {
        struct avi_pool *p;
        int worker;
    } *arg;
    /* the job: */
    int is_run, job_chaos; /* job_chaos: cut by chaos_chunks */
    avi_pool_fn fn;
    avi_pool_run_fn run_fn;
    void *ctx;
    size_t n, grain, nchunks;
    size_t *bounds; /* chaos: chunk c is [bounds[c], bounds[c+1]) */
    size_t *order;  /* chaos: the chunk the k-th take gets */
    size_t chaos_cap;
    uint64_t job_seed;
    _Atomic size_t next; /* next chunk to take */
    /* hand-off: */
    _Atomic uint64_t gen;
    _Atomic int open;        /* the current job takes workers */
    _Atomic int active;      /* workers inside the current job */
    _Atomic int sleepers;    /* workers asleep (or about to be) on wake */
    _Atomic int main_asleep; /* the caller asleep on finished */
    _Atomic int stop;
    pthread_mutex_t mu;
    pthread_cond_t wake, finished;
    uint64_t chaos, rng;
};

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

int avi_cpu_count(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = CPU_COUNT(&set);
        if (n > 0) return n > AVI_POOL_MAX_THREADS ? AVI_POOL_MAX_THREADS : n;
    }
    return 1;
}

int avi_pool_threads(const avi_pool *p) { return p ? p->threads : 1; }
uint64_t avi_pool_chaos(const avi_pool *p) { return p ? p->chaos : 0; }

/* Under chaos: yields the processor now and then (about one call in four). */
static void chaos_yield(const avi_pool *p, uint64_t *r)
{
    if (p->chaos && (splitmix(r) & 3) == 0) sched_yield();
}

/* The calling thread's share of the current job. */
static void work(avi_pool *p, int worker)
{
    uint64_t r = p->job_seed ^ ((uint64_t)worker << 32);
    if (p->is_run) {
        for (;;) {
            size_t k = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
            if (k >= (size_t)p->threads) break;
            chaos_yield(p, &r);
            p->run_fn(p->ctx, (int)k, p->threads);
        }
        return;
    }
    for (;;) {
        size_t k = atomic_fetch_add_explicit(&p->next, 1, memory_order_relaxed);
        if (k >= p->nchunks) break;
        size_t b, e;
        if (p->job_chaos) {
            size_t c = p->order[k];
            b = p->bounds[c];
            e = p->bounds[c + 1];
            chaos_yield(p, &r);
        } else {
            b = k * p->grain;
            e = b + p->grain < p->n ? b + p->grain : p->n;
        }
        p->fn(p->ctx, b, e, worker);
    }
}

static void *worker_main(void *varg)
{
    const struct worker_arg *a = varg;
    avi_pool *p = a->p;
    const int worker = a->worker;
    uint64_t seen = 0;
    for (;;) {
        uint64_t g;
        int spins = p->spin;
        while ((g = atomic_load_explicit(&p->gen, memory_order_acquire)) == seen && spins-- > 0) {
            cpu_relax();
            if ((spins & 63) == 0) sched_yield();
        }
        if (g == seen) {
            pthread_mutex_lock(&p->mu);
            atomic_fetch_add(&p->sleepers, 1);
            while ((g = atomic_load(&p->gen)) == seen) pthread_cond_wait(&p->wake, &p->mu);
            atomic_fetch_sub(&p->sleepers, 1);
            pthread_mutex_unlock(&p->mu);
        }
        seen = g;
        ANNOTATE_HAPPENS_AFTER(&p->gen);
        if (atomic_load_explicit(&p->stop, memory_order_acquire)) break;
        /* Join job g unless the caller has closed it (or moved on to the
         * next): seq_cst, ordered against the caller's close and its count
         * of active workers. */
        atomic_fetch_add(&p->active, 1);
        if (atomic_load(&p->open) && atomic_load(&p->gen) == g) work(p, worker);
        ANNOTATE_HAPPENS_BEFORE(&p->active);
        if (atomic_fetch_sub(&p->active, 1) == 1 && atomic_load(&p->main_asleep)) {
            pthread_mutex_lock(&p->mu);
            pthread_cond_broadcast(&p->finished);
            pthread_mutex_unlock(&p->mu);
        }
    }
    return NULL;
}

/* Publishes the job set in p, takes part as worker 0, waits for the rest. */
static void run_job(avi_pool *p)
{
    atomic_store_explicit(&p->next, 0, memory_order_relaxed);
    atomic_store(&p->open, 1);
    ANNOTATE_HAPPENS_BEFORE(&p->gen);
    atomic_fetch_add(&p->gen, 1); /* seq_cst: ordered with the load of sleepers */
    if (atomic_load(&p->sleepers) > 0) {
        pthread_mutex_lock(&p->mu);
        pthread_cond_broadcast(&p->wake);
        pthread_mutex_unlock(&p->mu);
    }
    work(p, 0);
    /* Nothing is left to take: close the job, then wait for the workers
     * inside it to finish their chunks. */
    atomic_store(&p->open, 0);
    int spins = p->spin;
    while (atomic_load_explicit(&p->active, memory_order_acquire) > 0 && spins-- > 0) {
        cpu_relax();
        if ((spins & 63) == 0) sched_yield();
    }
    if (atomic_load(&p->active) > 0) {
        pthread_mutex_lock(&p->mu);
        atomic_store(&p->main_asleep, 1);
        while (atomic_load(&p->active) > 0) pthread_cond_wait(&p->finished, &p->mu);
        atomic_store(&p->main_asleep, 0);
        pthread_mutex_unlock(&p->mu);
    }
    ANNOTATE_HAPPENS_AFTER(&p->active);
}

/* Chaos: chunks of 1 .. 2 grain items, taken in a random order. 0, or -1
 * when out of memory (the job then runs unperturbed). */
static int chaos_chunks(avi_pool *p, size_t n, size_t grain)
{
    size_t cap = n + 2;
    if (cap > p->chaos_cap) {
        size_t *b = realloc(p->bounds, cap * sizeof *b);
        if (!b) return -1;
        p->bounds = b;
        size_t *o = realloc(p->order, cap * sizeof *o);
        if (!o) return -1;
        p->order = o;
        p->chaos_cap = cap;
    }
    size_t c = 0, at = 0;
    while (at < n) {
        size_t len = 1 + (size_t)(splitmix(&p->rng) % (2 * grain));
        p->bounds[c++] = at;
        at = len < n - at ? at + len : n;
    }
    p->bounds[c] = n;
    p->nchunks = c;
    for (size_t k = 0; k < c; k++) p->order[k] = k;
    for (size_t k = c; k > 1; k--) { /* Fisher-Yates */
        size_t j = (size_t)(splitmix(&p->rng) % k), t = p->order[k - 1];
        p->order[k - 1] = p->order[j];
        p->order[j] = t;
    }
    return 0;
}

void avi_pool_for(avi_pool *p, size_t n, size_t grain, avi_pool_fn fn, void *ctx)
{
    if (n == 0) return;
    if (grain == 0) grain = 1;
    if (!p || (p->threads == 1 && !p->chaos)) {
        fn(ctx, 0, n, 0);
        return;
    }
    p->is_run = 0;
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->grain = grain;
    p->job_seed = splitmix(&p->rng);
    p->job_chaos = p->chaos && chaos_chunks(p, n, grain) == 0; /* out of memory: this job runs plain */
    if (!p->job_chaos) p->nchunks = (n + grain - 1) / grain;
    if (p->threads == 1) {
        work(p, 0);
        atomic_store_explicit(&p->next, 0, memory_order_relaxed);
        return;
    }
    run_job(p);
}

void avi_pool_run(avi_pool *p, avi_pool_run_fn fn, void *ctx)
{
    if (!p || p->threads == 1) {
        fn(ctx, 0, 1);
        return;
    }
    p->is_run = 1;
    p->run_fn = fn;
    p->ctx = ctx;
    p->job_seed = splitmix(&p->rng);
    run_job(p);
}

avi_pool *avi_pool_create(int threads, avi_error *err)
{
    if (threads < 1 || threads > AVI_POOL_MAX_THREADS)
        return avi_error_set(err, AVI_ERR_INPUT, "threads must be 1 to %d (got %d)", AVI_POOL_MAX_THREADS, threads),
               NULL;
    avi_pool *p = calloc(1, sizeof *p);
    if (!p || !(p->tid = calloc((size_t)threads, sizeof *p->tid)) || !(p->arg = calloc((size_t)threads, sizeof *p->arg))) {
        if (p) free(p->tid);
        free(p);
        return avi_error_set(err, AVI_ERR_RUN, "out of memory"), NULL;
    }
    p->threads = threads;
    p->spin = threads > avi_cpu_count() ? SPIN_OVERSUBSCRIBED : SPIN_CORES;
    const char *seed = getenv("AVI_CHAOS_SEED");
    if (seed && *seed) {
        char *end;
        unsigned long long s = strtoull(seed, &end, 10);
        if (*end == '\0') p->chaos = s;
    }
    p->rng = p->chaos;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->wake, NULL);
    pthread_cond_init(&p->finished, NULL);
    VALGRIND_HG_DISABLE_CHECKING(&p->next, sizeof p->next);
    VALGRIND_HG_DISABLE_CHECKING(&p->gen, sizeof p->gen);
    VALGRIND_HG_DISABLE_CHECKING(&p->open, sizeof p->open);
    VALGRIND_HG_DISABLE_CHECKING(&p->active, sizeof p->active);
    VALGRIND_HG_DISABLE_CHECKING(&p->sleepers, sizeof p->sleepers);
    VALGRIND_HG_DISABLE_CHECKING(&p->main_asleep, sizeof p->main_asleep);
    VALGRIND_HG_DISABLE_CHECKING(&p->stop, sizeof p->stop);
    /* Workers start with every signal blocked (they inherit the mask): a
     * SIGINT or SIGTERM goes to the caller's thread, which stops the run at
     * an event boundary, never to a worker mid-chunk. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int started = 1;
    for (int k = 1; k < threads; k++) {
        p->arg[k] = (struct worker_arg){p, k};
        if (pthread_create(&p->tid[k], NULL, worker_main, &p->arg[k]) != 0) break;
        started++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (started < threads) {
        p->threads = started; /* the ones started */
        avi_pool_destroy(p);
        return avi_error_set(err, AVI_ERR_RUN, "cannot start thread %d of %d", started + 1, threads), NULL;
    }
    return p;
}

void avi_pool_destroy(avi_pool *p)
{
    if (!p) return;
    atomic_store(&p->stop, 1);
    ANNOTATE_HAPPENS_BEFORE(&p->gen);
    atomic_fetch_add(&p->gen, 1);
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->wake);
    pthread_mutex_unlock(&p->mu);
    for (int k = 1; k < p->threads; k++) pthread_join(p->tid[k], NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->wake);
    pthread_cond_destroy(&p->finished);
    free(p->bounds);
    free(p->order);
    free(p->arg);
    free(p->tid);
    free(p);
}
