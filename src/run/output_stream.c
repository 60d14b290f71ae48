/* Output stream: a ring of snapshots between the engine's thread (producer)
 * and one worker thread (consumer); see src/run/output_stream.h. */
#include "run/output_stream.h"

#include "base/pool.h"
#include "core/incidence.h"
#include "core/model_internal.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>

typedef struct {
    avi_snapshot *snapshot;
    int kind;
} stream_item;

struct avi_output_stream {
    const avi_model *model;
    avi_output_fn fn;
    void *user;
    int threaded;
    int nslot;
    stream_item *ring;
    uint64_t head, tail; /* items [tail, head) are queued, the one at tail being handled */
    int status;          /* first failure, 0 while none */
    int stopping;
    pthread_mutex_t lock;
    pthread_cond_t wake_worker, wake_producer;
    pthread_t worker;
    int started;
    avi_pool *pool;       /* the worker's threads for the observation (avi_output_stream_set_threads) */
    avi_model_pass *pass; /* on that pool; NULL: serial */
    unsigned observed;    /* the kinds whose handler observes the snapshot (a bit each) */
    uint64_t prepared;    /* items before it are observed already (worker only) */
};

typedef struct {
    avi_output_stream *s;
    uint64_t first;
} batch_ctx;

static void prepare_chunk(void *ctx, size_t b, size_t e, int worker)
{
    const batch_ctx *c = ctx;
    for (size_t j = b; j < e; j++) {
        stream_item *it = &c->s->ring[(c->first + j) % (uint64_t)c->s->nslot];
        if (c->s->observed & (1u << (it->kind & AVI_STREAM_KIND))) avi_snapshot_prepare(it->snapshot);
    }
}

/* Items [tail, head) that wait: with two or more not yet observed, the pool
 * observes them side by side, each on one thread (each snapshot's own
 * serial bits; the handler then finds its observation done). A single one
 * is left to the handler, whose observation runs on the pool. */
static void prepare_batch(avi_output_stream *s, uint64_t tail, uint64_t head)
{
    uint64_t first = s->prepared > tail ? s->prepared : tail;
    if (!s->pool || !s->observed || head - first < 2) return;
    batch_ctx c = {s, first};
    avi_pool_for(s->pool, (size_t)(head - first), 1, prepare_chunk, &c);
    s->prepared = head;
}

/* Blocks the signals a user sends on the calling thread (threads it starts
 * inherit the mask); *old gets the mask to restore. */
static void block_user_signals(sigset_t *old)
{
    sigset_t block;
    sigemptyset(&block);
    const int user_signals[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD, SIGPIPE};
    for (size_t k = 0; k < sizeof user_signals / sizeof user_signals[0]; k++) sigaddset(&block, user_signals[k]);
    pthread_sigmask(SIG_BLOCK, &block, old);
}

static void *worker_main(void *arg)
{
    avi_output_stream *s = arg;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->tail == s->head && !s->stopping) pthread_cond_wait(&s->wake_worker, &s->lock);
        if (s->tail == s->head) break; /* stopping and drained */
        stream_item *it = &s->ring[s->tail % (uint64_t)s->nslot];
        int failed = s->status, queued = (int)(s->head - s->tail - 1);
        uint64_t tail = s->tail, head = s->head;
        pthread_mutex_unlock(&s->lock);
        if (!failed) prepare_batch(s, tail, head);
        int rc = failed ? 0 : s->fn(s->user, it->kind, it->snapshot, queued);
        pthread_mutex_lock(&s->lock);
        if (rc && !s->status) s->status = rc;
        s->tail++;
        pthread_cond_broadcast(&s->wake_producer);
    }
    pthread_mutex_unlock(&s->lock);
    return NULL;
}

size_t avi_output_stream_snapshot_bytes(const avi_model *model)
{
    size_t nv = avi_model_vertex_count(model), np = 0;
    for (int k = 0; k < AVI_KIND_COUNT; k++) np += avi_model_potential_count(model, (avi_kind)k);
    /* vertex records, positions and velocity corrections; a clock (16 B) per potential */
    return (nv ? nv : 1) * (sizeof(avi_vertex) + 6 * sizeof(double)) + np * 16 + 64 +
           sizeof(avi_observation);
}

avi_output_stream *avi_output_stream_create(const avi_model *model, int slots, int threaded, avi_output_fn fn,
                                            void *user)
{
    avi_output_stream *s = calloc(1, sizeof *s);
    if (!s) return NULL;
    s->model = model;
    s->fn = fn;
    s->user = user;
    s->threaded = threaded;
    if (slots <= 0) {
        size_t fit = AVI_OUTPUT_STREAM_BUDGET / avi_output_stream_snapshot_bytes(model);
        slots = fit < 1 ? 1 : fit > 8 ? 8 : (int)fit;
    }
    if (!threaded) slots = 1;
    s->nslot = slots;
    s->ring = calloc((size_t)slots, sizeof *s->ring);
    if (!s->ring) goto fail;
    for (int i = 0; i < slots; i++)
        if (!(s->ring[i].snapshot = avi_snapshot_create(model))) goto fail;
    if (threaded) {
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->wake_worker, NULL);
        pthread_cond_init(&s->wake_producer, NULL);
        /* The worker inherits a mask that blocks the signals a user sends
         * (SIGINT, SIGTERM, ...): they reach the engine's thread, which stops
         * at an event boundary, and never interrupt a write mid-way. */
        sigset_t old;
        block_user_signals(&old);
        int started = pthread_create(&s->worker, NULL, worker_main, s);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (started != 0) {
            pthread_cond_destroy(&s->wake_producer);
            pthread_cond_destroy(&s->wake_worker);
            pthread_mutex_destroy(&s->lock);
            goto fail;
        }
        s->started = 1;
    }
    return s;
fail:
    s->threaded = 0;
    avi_output_stream_destroy(s);
    return NULL;
}

int avi_output_stream_slots(const avi_output_stream *s) { return s->nslot; }

int avi_output_stream_push(avi_output_stream *s, const avi_engine *e, double t, int kind)
{
    if (!s->threaded) {
        if (s->status) return s->status;
        avi_snapshot_set_synchronized(s->ring[0].snapshot, !(kind & AVI_STREAM_PLAIN));
        avi_engine_snapshot(e, t, s->ring[0].snapshot);
        s->status = s->fn(s->user, kind, s->ring[0].snapshot, 0);
        return s->status;
    }
    pthread_mutex_lock(&s->lock);
    while (!s->status && s->head - s->tail == (uint64_t)s->nslot) pthread_cond_wait(&s->wake_producer, &s->lock);
    int status = s->status;
    pthread_mutex_unlock(&s->lock);
    if (status) return status;
    /* The slot at head is free: the worker only reads slots in [tail, head). */
    stream_item *it = &s->ring[s->head % (uint64_t)s->nslot];
    avi_snapshot_set_synchronized(it->snapshot, !(kind & AVI_STREAM_PLAIN));
    avi_engine_snapshot(e, t, it->snapshot);
    it->kind = kind;
    pthread_mutex_lock(&s->lock);
    s->head++;
    pthread_cond_signal(&s->wake_worker);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

int avi_output_stream_drain(avi_output_stream *s)
{
    if (!s->threaded) return s->status;
    pthread_mutex_lock(&s->lock);
    while (s->tail != s->head) pthread_cond_wait(&s->wake_producer, &s->lock);
    int status = s->status;
    pthread_mutex_unlock(&s->lock);
    return status;
}

int avi_output_stream_trim(avi_output_stream *s)
{
    int status = avi_output_stream_drain(s);
    if (status) return status;
    /* Idle now: no slot is being filled or handled. New snapshots' pages
     * are untouched until the next push, so the freed ones stop counting. */
    for (int i = 0; i < s->nslot; i++) {
        avi_snapshot_destroy(s->ring[i].snapshot);
        if (!(s->ring[i].snapshot = avi_snapshot_create(s->model))) status = AVI_ERR_RUN;
        else avi_snapshot_set_pass(s->ring[i].snapshot, s->pass);
    }
    if (status) { /* push and the worker stop at a status: no slot is used again */
        if (s->threaded) pthread_mutex_lock(&s->lock);
        s->status = status;
        if (s->threaded) pthread_mutex_unlock(&s->lock);
    }
    return status;
}

int avi_output_stream_set_threads(avi_output_stream *s, int threads, unsigned observed, avi_error *err)
{
    int status = avi_output_stream_drain(s);
    if (status) return avi_error_set(err, AVI_ERR_RUN, "the output stream failed before its threads were set");
    avi_pool *pool = NULL;
    avi_model_pass *pass = NULL;
    sigset_t old;
    block_user_signals(&old); /* the pool's threads, as the worker, leave those signals to the engine's */
    pool = avi_pool_create(threads, err);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!pool) return err->status;
    if (threads == 1 && !avi_pool_chaos(pool)) { /* chaos (base/pool.h) runs the parallel paths on one */
        avi_pool_destroy(pool);
        pool = NULL;
    } else {
        if (!(pass = avi_model_pass_create(s->model, pool))) {
            avi_pool_destroy(pool);
            return avi_error_set(err, AVI_ERR_RUN, "out of memory");
        }
    }
    for (int i = 0; i < s->nslot; i++) avi_snapshot_set_pass(s->ring[i].snapshot, pass);
    avi_model_pass_destroy(s->pass);
    avi_pool_destroy(s->pool);
    s->pool = pool;
    s->pass = pass;
    s->observed = observed;
    return AVI_OK;
}

int avi_output_stream_threads_for(const avi_model *m, int threads, double row_interval, long long every)
{
    if (threads <= 1) return 1;
    double pots, per_row = avi_model_elastic_events(m, row_interval, 0.0, &pots);
    /* In gradients: an energy costs about 0.6 of one (a mid-edge
     * triangle's 490 instructions against 810, callgrind), an event a
     * little more than one. */
    double work = pots * (0.6 + 3.0 / (double)(every > 0 ? every : 1));
    return work * threads > per_row ? threads : 1;
}

int avi_output_stream_destroy(avi_output_stream *s)
{
    if (!s) return 0;
    int status = s->started ? 0 : s->status; /* read after the join when threaded */
    if (s->started) {
        pthread_mutex_lock(&s->lock);
        s->stopping = 1;
        pthread_cond_signal(&s->wake_worker);
        pthread_mutex_unlock(&s->lock);
        pthread_join(s->worker, NULL);
        status = s->status;
        pthread_cond_destroy(&s->wake_producer);
        pthread_cond_destroy(&s->wake_worker);
        pthread_mutex_destroy(&s->lock);
    }
    if (s->ring)
        for (int i = 0; i < s->nslot; i++) avi_snapshot_destroy(s->ring[i].snapshot);
    free(s->ring);
    avi_model_pass_destroy(s->pass);
    avi_pool_destroy(s->pool);
    free(s);
    return status;
}
