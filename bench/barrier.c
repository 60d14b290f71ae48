/* The cost of one synchronization between threads, for the parallel
 * scaling model (bench/pmodel.c, bench/README.md "Parallel scaling
 * model"): N rounds of a barrier among T threads (default 2), each round
 * doing no work, so the time per round is the barrier's own cost.
 *
 *   build/bench/barrier [--threads T] [--rounds N]
 *
 * Two barriers: pthread_barrier_wait, and a sense-reversing spin barrier
 * on one atomic counter (C11 atomics, acquire/release). And the one-way
 * hand-off of a cache line between 2 threads (ping-pong on one atomic,
 * half a round trip): the cost of passing one dependency in a dataflow
 * executor (bench/pmodel --sync-ns). On a machine with
 * fewer free cores than T, a spinning waiter holds a core the others need:
 * the spin figure is then an upper bound. One JSON line per barrier. */
#include "bench_util.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    atomic_int count;
    atomic_int sense;
    int n;
} spin_barrier;

static void spin_wait(spin_barrier *b, int *local)
{
    *local = !*local;
    if (atomic_fetch_add_explicit(&b->count, 1, memory_order_acq_rel) == b->n - 1) {
        atomic_store_explicit(&b->count, 0, memory_order_relaxed);
        atomic_store_explicit(&b->sense, *local, memory_order_release);
    } else
        while (atomic_load_explicit(&b->sense, memory_order_acquire) != *local) __builtin_ia32_pause();
}

static pthread_barrier_t pb;
static spin_barrier sb;
static long rounds_n = 1000000;
static int use_spin;

static void *worker(void *arg)
{
    (void)arg;
    int local = 0;
    for (long i = 0; i < rounds_n; i++) {
        if (use_spin) spin_wait(&sb, &local);
        else pthread_barrier_wait(&pb);
    }
    return NULL;
}

static void measure(int threads, int spin)
{
    use_spin = spin;
    pthread_barrier_init(&pb, NULL, (unsigned)threads);
    atomic_store(&sb.count, 0);
    atomic_store(&sb.sense, 0);
    sb.n = threads;
    pthread_t *th = malloc((size_t)threads * sizeof *th);
    double t0 = bench_now(), c0 = bench_cpu();
    for (int i = 1; i < threads; i++) pthread_create(&th[i], NULL, worker, NULL);
    worker(NULL);
    for (int i = 1; i < threads; i++) pthread_join(th[i], NULL);
    double wall = bench_now() - t0, cpu = bench_cpu() - c0;
    pthread_barrier_destroy(&pb);
    free(th);
    printf("{\"bench\": \"barrier\", \"kind\": \"%s\", \"threads\": %d, \"rounds\": %ld, \"ns_per_barrier\": %.1f, "
           "\"cpu_ns_per_barrier\": %.1f}\n",
           spin ? "spin" : "pthread", threads, rounds_n, 1e9 * wall / rounds_n, 1e9 * cpu / rounds_n);
    fflush(stdout);
}

static atomic_long ball;

static void *pong(void *arg)
{
    (void)arg;
    for (long i = 0; i < rounds_n; i++) {
        while (atomic_load_explicit(&ball, memory_order_acquire) != 2 * i + 1) __builtin_ia32_pause();
        atomic_store_explicit(&ball, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

static void handoff(void)
{
    atomic_store(&ball, 0);
    pthread_t th;
    double t0 = bench_now();
    pthread_create(&th, NULL, pong, NULL);
    for (long i = 0; i < rounds_n; i++) {
        atomic_store_explicit(&ball, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&ball, memory_order_acquire) != 2 * i + 2) __builtin_ia32_pause();
    }
    pthread_join(th, NULL);
    double wall = bench_now() - t0;
    printf("{\"bench\": \"barrier\", \"kind\": \"handoff\", \"threads\": 2, \"rounds\": %ld, \"ns_per_handoff\": %.1f}\n",
           rounds_n, 0.5e9 * wall / rounds_n);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    int threads = 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--threads") && i + 1 < argc) threads = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--rounds") && i + 1 < argc) rounds_n = atol(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--threads T] [--rounds N]\n", argv[0]);
            return 2;
        }
    }
    if (threads < 1 || rounds_n < 1) {
        fprintf(stderr, "barrier: --threads and --rounds must be at least 1\n");
        return 2;
    }
    measure(threads, 1);
    measure(threads, 0);
    handoff();
    return 0;
}
