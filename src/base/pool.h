/* A fork-join pool of worker threads for the parallel executor (issue 30).
 *
 * The calling thread takes part as worker 0; threads - 1 more workers wait
 * for work (spinning briefly, then blocked, so that more threads than cores
 * cost little). A call never waits for a worker that has not started on it:
 * a thread the scheduler keeps off the processor delays nothing. The
 * workers block every signal, so that signals sent to the process reach
 * the caller's thread. Which worker runs which chunk depends on timing: callers
 * must make every result independent of it (per-item output slots, fixed
 * merge orders), which the chaos mode tests.
 *
 * Chaos mode (tests only): the environment variable AVI_CHAOS_SEED, a
 * non-zero integer, read when a pool is created, makes avi_pool_for cut
 * chunks of random sizes (1 to 2 grain items), hand them out in a random
 * order and yield the CPU at random points; a 1-thread pool cuts chunks
 * too. The seed of each avi_pool_for call is drawn from the pool's own
 * sequence, so two runs with one seed still differ in timing. No seed may
 * change a bit of a result. */
#ifndef AVI_POOL_H
#define AVI_POOL_H

#include "base/error.h"

#include <stddef.h>
#include <stdint.h>

typedef struct avi_pool avi_pool;

/* The most threads a pool (and `parallel.threads`) may have. */
#define AVI_POOL_MAX_THREADS 1024

/* A pool of `threads` (1 .. AVI_POOL_MAX_THREADS) threads, the caller's
 * included. NULL with err filled (AVI_ERR_INPUT: bad count; AVI_ERR_RUN:
 * out of memory or threads) on failure. */
avi_pool *avi_pool_create(int threads, avi_error *err);
void avi_pool_destroy(avi_pool *p);

/* Threads of the pool, the caller's included; 1 for NULL. */
int avi_pool_threads(const avi_pool *p);

/* The chaos seed (AVI_CHAOS_SEED at creation), 0 when off or p is NULL. */
uint64_t avi_pool_chaos(const avi_pool *p);

/* fn(ctx, begin, end, worker) over [0, n) in chunks of `grain` items
 * (grain 0 counts as 1; chaos varies it), worker in [0, threads). Returns
 * when every chunk is done. A NULL or 1-thread pool without chaos makes one
 * call fn(ctx, 0, n, 0). One avi_pool_for or avi_pool_run at a time per
 * pool, from one thread; fn must not call into the pool. */
typedef void (*avi_pool_fn)(void *ctx, size_t begin, size_t end, int worker);
void avi_pool_for(avi_pool *p, size_t n, size_t grain, avi_pool_fn fn, void *ctx);

/* fn(ctx, w, threads) once for every w in [0, threads), for phases that
 * split their work themselves into `threads` parts; a thread may run
 * several parts one after another (the caller runs them all when no worker
 * joins in time), never two at once. Under chaos, calls yield at random
 * points. */
typedef void (*avi_pool_run_fn)(void *ctx, int worker, int threads);
void avi_pool_run(avi_pool *p, avi_pool_run_fn fn, void *ctx);

/* The processors this process may run on (its CPU affinity), at least 1:
 * the default thread count. */
int avi_cpu_count(void);

#endif
