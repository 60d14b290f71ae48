/* The event queue alone, under the AVI's access pattern: N clocks, each
 * with its own step dt and phase t0; the earliest entry is rescheduled to
 * t0 + (n+1) dt with replace_top, over and over. The 4-ary heap
 * (bench/event_queue.h), the calendar queue (bench/calendar_queue.h) and the
 * two-level queue (core/twolevel_queue.h) run the same clocks side by side,
 * in alternating repetitions.
 *
 *   build/bench/queue [--sizes 1e4,1e5,1e6,1e7] [--reps R] [--seconds S]
 *                     [--max-gb G] [--spreads 2-3x,1:100,ties] [--lookup]
 *                     [--prefetch D] [--queues heap4,calendar,twolevel]
 *
 * Step spreads: "2-3x" dt uniform in [1, 3); "1:100" dt log-uniform in
 * [1, 100]; "ties" dt in {1, 1.25, 1.5, 2} with every clock starting at
 * t = 0, so that thousands of entries share each time (clocks with equal
 * steps). The first two start at random phases, t0 uniform in [0, dt), so
 * that the queue is in its steady state from the start.
 *
 * Each repetition runs about S / R seconds (default 1.5 s per queue and
 * configuration in total, 5 repetitions); the best and the median ns per
 * replace_top are reported. Before timing, all queues run the same
 * warm-up and must serve the same event sequence (checksum).
 *
 * stdout: one JSON object per (queue, N, spread); stderr: a table. */
#include "bench_util.h"
#include "calendar_queue.h"
#include "event_queue.h"
#include "core/twolevel_queue.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The clocks. By default a clock's step and phase are computed from its
 * index (a hash into a table of 1024 steps that stays in L1), so that only
 * the queue touches memory. With --lookup they are read from an array of N
 * records instead, as the engine reads a potential's record per event;
 * --prefetch D then lets the two-level queue prefetch the record of the
 * event D places ahead (avi_tl_peek), as the engine could. */
#define TABLE 1024
typedef struct {
    double dt[TABLE];
    double phase; /* 1: t0 uniform in [0, dt); 0: every clock starts at 0 */
    const double (*rec)[2]; /* --lookup: {t0, dt} per clock, or NULL */
} clock_set;

static inline uint64_t hash32(uint32_t i)
{
    uint64_t z = (uint64_t)i * 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 29)) * 0xbf58476d1ce4e5b9ull;
    return z ^ (z >> 32);
}

static inline double clock_dt(const clock_set *c, uint32_t i) { return c->dt[hash32(i) % TABLE]; }
static inline double clock_t0(const clock_set *c, uint32_t i)
{
    return c->phase * (double)(hash32(i) >> 11) * 0x1.0p-53 * clock_dt(c, i);
}

static uint64_t rng_state = 0x2545f4914f6cdd1dull;
static uint64_t rng(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
static double uniform(void) { return (double)(rng() >> 11) * 0x1.0p-53; }

/* Order-sensitive hash of the served (time, id) sequence. */
static inline uint64_t mix(uint64_t h, const avi_event *e)
{
    return (h ^ (avi_time_bits(e->t) + e->id)) * 0x100000001b3ull;
}

/* The next time of the clock of e: t0 + n dt, as the engine computes it. */
static inline void reschedule(avi_event *e, const clock_set *c)
{
    uint32_t i = e->id & AVI_ID_INDEX_MASK;
    e->n++;
    if (c->rec) {
        e->t = c->rec[i][0] + (double)e->n * c->rec[i][1];
    } else {
        uint64_t h = hash32(i);
        double dt = c->dt[h % TABLE];
        e->t = c->phase * (double)(h >> 11) * 0x1.0p-53 * dt + (double)e->n * dt;
    }
}

static uint64_t run_heap(avi_event_queue *q, const clock_set *c, size_t ops, uint64_t h)
{
    for (size_t k = 0; k < ops; k++) {
        avi_event e = *avi_queue_top(q);
        h = mix(h, &e);
        reschedule(&e, c);
        avi_queue_replace_top(q, e);
    }
    return h;
}

static uint64_t run_cal(avi_calendar_queue *q, const clock_set *c, size_t ops, uint64_t h)
{
    for (size_t k = 0; k < ops; k++) {
        avi_event e = *avi_cq_top(q);
        h = mix(h, &e);
        reschedule(&e, c);
        avi_cq_replace_top(q, e);
    }
    return h;
}

static size_t prefetch_ahead; /* --prefetch D */

static uint64_t run_two(avi_twolevel_queue *q, const clock_set *c, size_t ops, uint64_t h)
{
    for (size_t k = 0; k < ops; k++) {
        avi_event e = *avi_tl_top(q);
        if (prefetch_ahead && c->rec) {
            const avi_event *p = avi_tl_peek(q, prefetch_ahead);
            if (p) __builtin_prefetch(c->rec[p->id & AVI_ID_INDEX_MASK]);
        }
        h = mix(h, &e);
        reschedule(&e, c);
        avi_tl_replace_top(q, e);
    }
    return h;
}

enum { QUEUE_HEAP, QUEUE_CAL, QUEUE_TWO, QUEUE_COUNT };
static const char *queue_name[QUEUE_COUNT] = {"heap4", "calendar", "twolevel"};

typedef struct {
    avi_event_queue heap;
    avi_calendar_queue cal;
    avi_twolevel_queue two;
} queues;

static uint64_t run_one(int which, queues *qs, const clock_set *c, size_t ops, uint64_t h)
{
    switch (which) {
    case QUEUE_HEAP: return run_heap(&qs->heap, c, ops, h);
    case QUEUE_CAL: return run_cal(&qs->cal, c, ops, h);
    default: return run_two(&qs->two, c, ops, h);
    }
}

static int use[QUEUE_COUNT] = {1, 1, 1}; /* --queues */

static int q_init(int which, queues *qs, size_t n, const avi_clock_stats *st)
{
    switch (which) {
    case QUEUE_HEAP: return avi_queue_init(&qs->heap, n);
    case QUEUE_CAL: return avi_cq_init(&qs->cal, n, st);
    default: return avi_tl_init(&qs->two, n, st);
    }
}

static int q_push(int which, queues *qs, avi_event e)
{
    switch (which) {
    case QUEUE_HEAP: return avi_queue_push(&qs->heap, e);
    case QUEUE_CAL: return avi_cq_push(&qs->cal, e);
    default: return avi_tl_push(&qs->two, e);
    }
}

static double q_bytes(int which, const queues *qs)
{
    switch (which) {
    case QUEUE_HEAP: return (double)(qs->heap.cap + 3) * sizeof(avi_event);
    case QUEUE_CAL: return (double)avi_cq_bytes(&qs->cal);
    default: return (double)avi_tl_bytes(&qs->two);
    }
}

static void q_free(int which, queues *qs)
{
    switch (which) {
    case QUEUE_HEAP: avi_queue_free(&qs->heap); break;
    case QUEUE_CAL: avi_cq_free(&qs->cal); break;
    default: avi_tl_free(&qs->two); break;
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef struct {
    double best, median, cpu_best, cpu_median, bytes_per_entry;
    size_t ops;
} result;

/* Makes the clocks of one spread; fills stats. */
static void make_clocks(clock_set *c, size_t n, const char *spread, avi_clock_stats *st)
{
    static const double tie_dt[4] = {1.0, 1.25, 1.5, 2.0};
    for (int k = 0; k < TABLE; k++) {
        if (strcmp(spread, "1:100") == 0)
            c->dt[k] = pow(100.0, uniform());
        else if (strcmp(spread, "ties") == 0)
            c->dt[k] = tie_dt[k % 4];
        else
            c->dt[k] = 1.0 + 2.0 * uniform();
    }
    c->phase = strcmp(spread, "ties") == 0 ? 0.0 : 1.0;
    *st = (avi_clock_stats){0};
    for (size_t i = 0; i < n; i++) avi_clock_stats_add(st, clock_dt(c, (uint32_t)i));
}

/* Bytes the queues in use will take, for the memory limit: the heap 16
 * per entry; the calendar queue's ring (64 per bucket) and its bottom; the
 * two-level queue about 16 per entry in chunks, and bottom with its scratch
 * at 32 per entry while the start-up pile-up lasts (ties). */
static double bytes_estimate(size_t n, const avi_clock_stats *st)
{
    double b = 0;
    if (use[QUEUE_HEAP]) b += 16.0 * (double)n;
    if (use[QUEUE_CAL]) {
        double nb = ceil(st->dt_max * st->rate / AVI_CQ_OCCUPANCY) + 3;
        double cap = (double)(AVI_CQ_MAX_BUCKETS_PER_ENTRY * n + 64);
        if (nb > cap) nb = cap;
        b += nb * (double)sizeof(avi_cq_bucket) + 32.0 * (double)n;
    }
    if (use[QUEUE_TWO]) b += 56.0 * (double)n;
    return b;
}

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int run_config(size_t n, const char *spread, int reps, double seconds, double max_bytes, int lookup,
                      int *printed)
{
    avi_clock_stats st;
    static clock_set c;
    make_clocks(&c, n, spread, &st);
    double need = (lookup ? 16.0 * (double)n : 0.0) + bytes_estimate(n, &st);
    if (need > max_bytes) {
        fprintf(stderr, "queue: skipping N = %zu, %s: needs about %.1f GB (limit %.1f GB, --max-gb)\n", n, spread,
                need / 1e9, max_bytes / 1e9);
        return 0;
    }
    double (*rec)[2] = NULL;
    if (lookup) {
        rec = malloc(n * sizeof *rec);
        if (!rec) {
            fprintf(stderr, "queue: out of memory at N = %zu\n", n);
            return 1;
        }
        for (size_t i = 0; i < n; i++) {
            rec[i][0] = clock_t0(&c, (uint32_t)i);
            rec[i][1] = clock_dt(&c, (uint32_t)i);
        }
    }
    c.rec = (const double(*)[2])rec;

    queues qs;
    for (int k = 0; k < QUEUE_COUNT; k++)
        if (use[k] && q_init(k, &qs, n, &st)) {
            fprintf(stderr, "queue: out of memory at N = %zu\n", n);
            return 1;
        }
    for (size_t i = 0; i < n; i++) {
        avi_event e = {clock_t0(&c, (uint32_t)i), (uint32_t)i, 0};
        for (int k = 0; k < QUEUE_COUNT; k++)
            if (use[k] && q_push(k, &qs, e)) {
                fprintf(stderr, "queue: out of memory at N = %zu\n", n);
                return 1;
            }
    }

    /* Warm-up: the same events in every queue (the phases are random, so
     * the queues start in their steady state; this touches their memory
     * and checks the order); its speed sizes the repetitions. */
    size_t warm = n / 2 < 1000000 ? 1000000 : n / 2;
    double per_op[QUEUE_COUNT];
    uint64_t sum[QUEUE_COUNT];
    int first = -1;
    for (int k = 0; k < QUEUE_COUNT; k++) {
        if (!use[k]) continue;
        double t = bench_now();
        sum[k] = run_one(k, &qs, &c, warm, 0);
        per_op[k] = (bench_now() - t) / (double)warm;
        if (first < 0) {
            first = k;
        } else if (sum[k] != sum[first]) {
            fprintf(stderr, "queue: N = %zu, %s: %s served a different sequence than %s\n", n, spread,
                    queue_name[k], queue_name[first]);
            return 1;
        }
    }

    /* Alternating repetitions, so that load from other processes falls on
     * both queues alike. Wall and CPU time (the latter leaves out the time
     * this process waited for a core). */
    result res[QUEUE_COUNT];
    double *wall[QUEUE_COUNT], *cpu[QUEUE_COUNT];
    for (int k = 0; k < QUEUE_COUNT; k++) {
        if (!use[k]) continue;
        double ops = seconds / reps / per_op[k];
        res[k].ops = ops < 1e5 ? 100000 : (size_t)ops;
        wall[k] = malloc((size_t)reps * sizeof *wall[k]);
        cpu[k] = malloc((size_t)reps * sizeof *cpu[k]);
    }
    for (int r = 0; r < reps; r++)
        for (int k = 0; k < QUEUE_COUNT; k++) {
            if (!use[k]) continue;
            double t = bench_now(), tc = cpu_now();
            sum[k] = run_one(k, &qs, &c, res[k].ops, sum[k]);
            cpu[k][r] = 1e9 * (cpu_now() - tc) / (double)res[k].ops;
            wall[k][r] = 1e9 * (bench_now() - t) / (double)res[k].ops;
        }
    for (int k = 0; k < QUEUE_COUNT; k++) {
        if (!use[k]) continue;
        res[k].bytes_per_entry = q_bytes(k, &qs) / (double)n;
        res[k].median = median(wall[k], reps);
        res[k].best = wall[k][0];
        res[k].cpu_median = median(cpu[k], reps);
        res[k].cpu_best = cpu[k][0];
        printf("{\"bench\": \"queue\", \"queue\": \"%s\", \"n\": %zu, \"spread\": \"%s\", \"clocks\": \"%s\", "
               "\"reps\": %d, \"ops_per_rep\": %zu, \"ns_per_op_best\": %.2f, \"ns_per_op_median\": %.2f, "
               "\"cpu_ns_per_op_best\": %.2f, \"cpu_ns_per_op_median\": %.2f, \"bytes_per_entry\": %.1f, "
               "\"sequence_checked\": true}\n",
               queue_name[k], n, spread, lookup ? "lookup" : "computed", reps, res[k].ops, res[k].best, res[k].median,
               res[k].cpu_best, res[k].cpu_median, res[k].bytes_per_entry);
        fflush(stdout);
        free(wall[k]);
        free(cpu[k]);
    }
    if (!*printed) {
        fprintf(stderr, "ns per replace_top: median (best) of %d; cpu = this process's CPU time; B/e = bytes per entry\n",
                reps);
        fprintf(stderr, "%9s %-6s", "N", "spread");
        for (int k = 0; k < QUEUE_COUNT; k++)
            if (use[k]) fprintf(stderr, " | %-8s %13s %13s %5s", queue_name[k], "wall", "cpu", "B/e");
        fprintf(stderr, "\n");
        *printed = 1;
    }
    fprintf(stderr, "%9zu %-6s", n, spread);
    for (int k = 0; k < QUEUE_COUNT; k++)
        if (use[k])
            fprintf(stderr, " | %-8s %6.1f (%4.0f) %6.1f (%4.0f) %5.0f", "", res[k].median, res[k].best,
                    res[k].cpu_median, res[k].cpu_best, res[k].bytes_per_entry);
    fprintf(stderr, "\n");

    for (int k = 0; k < QUEUE_COUNT; k++)
        if (use[k]) q_free(k, &qs);
    free(rec);
    return 0;
}

static int parse_list(const char *s, char items[][16], int max)
{
    int n = 0;
    while (*s && n < max) {
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= 16) return -1;
        memcpy(items[n], s, len);
        items[n][len] = '\0';
        n++;
        s += len;
        if (*s == ',') s++;
    }
    return n;
}

int main(int argc, char **argv)
{
    char sizes[8][16] = {"1e4", "1e5", "1e6", "1e7"};
    char spreads[8][16] = {"2-3x", "1:100", "ties"};
    int nsizes = 4, nspreads = 3, reps = 5, lookup = 0;
    double seconds = 1.5, max_gb = 4.0;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--sizes") == 0 && v) {
            nsizes = parse_list(v, sizes, 8);
            i++;
        } else if (strcmp(argv[i], "--spreads") == 0 && v) {
            nspreads = parse_list(v, spreads, 8);
            i++;
        } else if (strcmp(argv[i], "--reps") == 0 && v) {
            reps = atoi(v);
            i++;
        } else if (strcmp(argv[i], "--seconds") == 0 && v) {
            seconds = atof(v);
            i++;
        } else if (strcmp(argv[i], "--queues") == 0 && v) {
            char names[8][16];
            int m = parse_list(v, names, 8);
            for (int k = 0; k < QUEUE_COUNT; k++) use[k] = 0;
            for (int j = 0; j < m; j++)
                for (int k = 0; k < QUEUE_COUNT; k++)
                    if (strcmp(names[j], queue_name[k]) == 0) use[k] = 1;
            i++;
        } else if (strcmp(argv[i], "--lookup") == 0) {
            lookup = 1;
        } else if (strcmp(argv[i], "--prefetch") == 0 && v) {
            prefetch_ahead = (size_t)atoi(v);
            i++;
        } else if (strcmp(argv[i], "--max-gb") == 0 && v) {
            max_gb = atof(v);
            i++;
        } else {
            fprintf(stderr,
                    "usage: %s [--sizes 1e4,1e5,1e6,1e7] [--spreads 2-3x,1:100,ties] [--reps 5] [--seconds 1.5] "
                    "[--max-gb 4] [--lookup [--prefetch D]] [--queues heap4,calendar,twolevel]\n",
                    argv[0]);
            return 2;
        }
    }
    if (nsizes <= 0 || nspreads <= 0 || reps <= 0 || !(seconds > 0)) {
        fprintf(stderr, "queue: bad arguments\n");
        return 2;
    }
    int printed = 0;
    for (int s = 0; s < nsizes; s++) {
        double nd = atof(sizes[s]);
        if (!(nd >= 1) || nd > (double)AVI_ID_MAX_INDEX) {
            fprintf(stderr, "queue: bad size %s\n", sizes[s]);
            return 2;
        }
        for (int p = 0; p < nspreads; p++)
            if (run_config((size_t)nd, spreads[p], reps, seconds, max_gb * 1e9, lookup, &printed)) return 1;
    }
    return 0;
}
