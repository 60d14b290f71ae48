/* The scaling model of a deterministic parallel event engine (issue 30):
 * the serial event trace of a run, and candidate parallel schedules of it
 * with P virtual workers on one core, each of which keeps the serial bits
 * by construction. bench/README.md, "Parallel scaling model", has the
 * method, its tables and docs/research/parallel_design.md the design.
 *
 *   build/bench/pmodel bar [--tets N] [--events E]
 *   build/bench/pmodel sphere-plate [--end T] [--set KEY=VALUE]...
 *   build/bench/pmodel bar ... --verify W
 *   common: [--windows W,...] [--barrier-ns B,...] [--scan-ns S] [--strict-max W] [--sync-ns S,...] [--kick-fraction F]
 *
 * The trace. An elastic potential's events are at n dt (n = 0, 1, ...,
 * the engine's ev.t = n * dt), keyed (time, id) as the queue orders them,
 * so the serial order of elastic events is a merge of the clocks (a heap
 * here). Contact is dynamic: the run goes through the real engine with the
 * model's contact table wrapped, which records every manager run (time,
 * layer-1 potentials created and retired) and every counted contact event
 * (time, stencil, whether it added a layer) and times them. Refined clocks (core/refine.h) are not reconstructed: the
 * engine's elastic count minus the trace's is printed ("refined_extra").
 * Pinned vertices are left out of stencils: an event neither drifts nor
 * kicks them, so sharing one is no conflict.
 *
 * Schedules (all keep, on every vertex, the serial order of updates):
 *  dag:    each event depends on the last event on each of its vertices,
 *          a manager run on everything before it and everything after it
 *          on it; the critical path (ns, with the measured costs) is the
 *          ideal parallel time; Brent: T_P <= work / P + path.
 *  dag-c:  as dag, but events at the same time on a vertex do not depend
 *          on each other (drift to a time already reached moves nothing,
 *          so every gradient at t is taken at the same positions) and
 *          only their kicks are summed in serial order; contact events
 *          (friction reads velocities) keep the strict rule.
 *  rounds: Galois-style: the W lowest-key pending events (never past the
 *          next manager run; with "conservative", never past a contact
 *          event that adds a layer); an event runs in the round unless an
 *          earlier event of the window shares a vertex with it; a round
 *          ends in a barrier. rounds-c: the dag-c rule inside a round, and
 *          a second barrier for the ordered kick sums.
 * Predicted time of a round at P workers: max(work / P, longest event)
 * + scan * W / P (marking the window) + barriers; a manager run is serial.
 * Barrier cost at P: B * log2(P) (a tree barrier; B measured at P = 2 by
 * bench/barrier). JSON lines on stdout. */
#include "avi/avi.h"
#include "avi/mesh.h"
#include "bar_model.h"
#include "bench_util.h"
#include "contact/contact_manager.h"
#include "core/engine_internal.h"
#include "core/kinds.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NP 6
static const int procs[NP] = {1, 2, 4, 8, 16, 64};

/* A trace entry: time and a reference: potential index into the flat
 * table (elastic), or REF_CONTACT | contact event index, or REF_RUN. */
#define REF_CONTACT 0x80000000u
#define REF_RUN 0xffffffffu
typedef struct {
    double t;
    uint32_t ref;
} entry;

typedef struct {
    uint32_t v[4];
    uint8_t nv, adds_layer;
} contact_ev;

typedef struct {
    /* flat table of elastic potentials */
    uint32_t npot;
    uint8_t *kind;
    uint32_t *idx; /* index within its kind */
    uint8_t *nv;
    uint32_t *first; /* into verts */
    uint32_t *verts;
    double *dt;
    /* contact, recorded */
    contact_ev *cev;
    size_t ncev, capcev;
    double *run_t;
    size_t nrun, caprun;
    double contact_ns, run_ns; /* total time in contact events and runs */
    uint64_t layer_adds;
    uint64_t run_created, run_retired; /* layer-1 potentials the runs created, retired */
    /* the trace */
    entry *tr;
    size_t n, cap;
    size_t nv_model;
} trace;

static trace T;
static avi_contact_ops wrapped;
static const avi_contact_ops *orig;

static void *grow(void *p, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap) return p;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    p = realloc(p, c * size);
    if (!p) {
        fprintf(stderr, "pmodel: out of memory\n");
        exit(1);
    }
    *cap = c;
    return p;
}

static int run_hook(struct avi_contact_manager *cm, avi_engine *e, double t)
{
    uint64_t act = cm->activations, ret = cm->retirements;
    double t0 = bench_now();
    int rc = orig->run(cm, e, t);
    T.run_created += cm->activations - act;
    T.run_retired += cm->retirements - ret;
    T.run_ns += 1e9 * (bench_now() - t0);
    T.run_t = grow(T.run_t, &T.caprun, T.nrun + 1, sizeof *T.run_t);
    T.run_t[T.nrun++] = t;
    return rc;
}

static int event_hook(struct avi_contact_manager *cm, avi_engine *e, avi_event ev, uint64_t *count)
{
    uint32_t slot = ev.id & AVI_ID_INDEX_MASK;
    contact_ev c = {{0}, 0, 0};
    const avi_contact_potential *p = &cm->pot[slot];
    for (int a = 0; a < 4; a++) /* VF: point and triangle; EE: two edges */
        if (cm->model->vert[p->v[a]].inv_mass != 0.0) c.v[c.nv++] = p->v[a];
    uint64_t before = *count, npot = cm->activations;
    double t0 = bench_now();
    int rc = orig->event(cm, e, ev, count);
    T.contact_ns += 1e9 * (bench_now() - t0);
    if (*count == before) return rc; /* a retired potential's entry: dropped */
    c.adds_layer = cm->activations != npot;
    T.layer_adds += c.adds_layer;
    T.cev = grow(T.cev, &T.capcev, T.ncev + 1, sizeof *T.cev);
    T.cev[T.ncev] = c;
    T.tr = grow(T.tr, &T.cap, T.n + 1, sizeof *T.tr);
    T.tr[T.n++] = (entry){ev.t, REF_CONTACT | (uint32_t)T.ncev++};
    return rc;
}

/* Contact events and runs are appended as they happen; elastic events are
 * merged in afterwards (merge_elastic). */
static void table_of(const avi_model *m)
{
    size_t np = 0, nvs = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t c = avi_model_potential_count(m, (avi_kind)k);
        for (size_t i = 0; i < c; i++) {
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            np++;
            nvs += (size_t)avi_kind_slots((avi_kind)k);
        }
    }
    T.kind = malloc(np);
    T.idx = malloc(np * sizeof *T.idx);
    T.nv = malloc(np);
    T.first = malloc(np * sizeof *T.first);
    T.verts = malloc(nvs * sizeof *T.verts);
    T.dt = malloc(np * sizeof *T.dt);
    uint32_t p = 0, f = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t c = avi_model_potential_count(m, (avi_kind)k);
        for (size_t i = 0; i < c; i++) {
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            const uint32_t *v;
            int n = avi_model_stencil(m, (avi_kind)k, i, &v);
            T.kind[p] = (uint8_t)k;
            T.idx[p] = (uint32_t)i;
            T.first[p] = f;
            T.nv[p] = 0;
            for (int a = 0; a < n; a++)
                if (m->vert[v[a]].inv_mass != 0.0) T.verts[f + T.nv[p]++] = v[a];
            f += T.nv[p];
            T.dt[p] = avi_model_time_step(m, (avi_kind)k, i);
            p++;
        }
    }
    T.npot = p;
    T.nv_model = avi_model_record_count(m);
}

/* heap of (t, id, potential, n) */
typedef struct {
    double t;
    uint32_t id, p, n;
} hk;

static int hless(const hk *a, const hk *b) { return a->t < b->t || (a->t == b->t && a->id < b->id); }

static void sift(hk *h, size_t n, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, s = i;
        if (l < n && hless(&h[l], &h[s])) s = l;
        if (l + 1 < n && hless(&h[l + 1], &h[s])) s = l + 1;
        if (s == i) return;
        hk x = h[i];
        h[i] = h[s];
        h[s] = x;
        i = s;
    }
}

/* The serial order: elastic clocks merged by (time, id) with the recorded
 * contact events (contact's kind rank is the highest: after elastic ties)
 * and manager runs (before any event at their time). */
static uint64_t merge_elastic(const avi_model *m, double t_end)
{
    hk *h = malloc(T.npot * sizeof *h);
    size_t n = 0;
    uint32_t p = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t c = avi_model_potential_count(m, (avi_kind)k);
        for (size_t i = 0; i < c; i++) {
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            h[n++] = (hk){0.0, (uint32_t)k << AVI_ID_KIND_SHIFT | (uint32_t)i, p++, 0};
        }
    }
    for (size_t i = n / 2; i-- > 0;) sift(h, n, i);
    entry *old = T.tr;
    size_t nold = T.n, io = 0, ir = 0;
    T.tr = NULL;
    T.n = T.cap = 0;
    uint64_t nel = 0;
    for (;;) {
        double te = n ? h[0].t : INFINITY;
        if (!(te < t_end)) te = INFINITY;
        double tc = io < nold ? old[io].t : INFINITY, tr = ir < T.nrun ? T.run_t[ir] : INFINITY;
        T.tr = grow(T.tr, &T.cap, T.n + 1, sizeof *T.tr);
        if (tr <= te && tr <= tc && tr < INFINITY) {
            T.tr[T.n++] = (entry){tr, REF_RUN};
            ir++;
        } else if (te <= tc && te < INFINITY) {
            T.tr[T.n++] = (entry){te, h[0].p};
            nel++;
            h[0].n++;
            h[0].t = (double)h[0].n * T.dt[h[0].p];
            sift(h, n, 0);
        } else if (tc < INFINITY) {
            T.tr[T.n++] = old[io++];
        } else break;
    }
    free(old);
    free(h);
    return nel;
}

static int stencil(size_t j, const uint32_t **v, int *contact)
{
    uint32_t r = T.tr[j].ref;
    if (r & REF_CONTACT) {
        const contact_ev *c = &T.cev[r & ~REF_CONTACT];
        *v = c->v;
        *contact = 1;
        return c->nv;
    }
    *v = T.verts + T.first[r];
    *contact = 0;
    return T.nv[r];
}

static double el_ns, ct_ns, run_ns_each, scan_ns = 10.0;
#define NB 4
static double barrier_list[NB] = {500.0};
static int nbar = 1;
static double barrier_ns;
static double sync_list[NB] = {200.0};
static double kick_frac = 0.2; /* of an event's cost: its kicks (pmodel --verify measures it on tets) */
static int nsync = 1;

static double cost(size_t j)
{
    return T.tr[j].ref & REF_CONTACT ? ct_ns : el_ns;
}

static double barrier(int p) { return p <= 1 ? 0.0 : barrier_ns * log2((double)p); }

/* Per-vertex dependencies of the dag and dataflow schedules: the end of
 * the last event on each vertex (cur), of the one before (prev), its time
 * (vt) and whether it was a contact event (vc). With the same-time rule, a
 * non-contact event at the time of the vertex's last non-contact event
 * joins it: it waits for prev, not cur. */
typedef struct {
    double *cur, *prev, *vt;
    uint8_t *vc;
} vdeps;

static int joins(const vdeps *d, uint32_t x, double t, int ct, int same_time)
{
    return same_time && !ct && !d->vc[x] && d->vt[x] == t;
}

static double vdeps_ready(const vdeps *d, const uint32_t *v, int n, double t, int ct, int same_time, double start)
{
    for (int a = 0; a < n; a++) {
        double dep = joins(d, v[a], t, ct, same_time) ? d->prev[v[a]] : d->cur[v[a]];
        if (dep > start) start = dep;
    }
    return start;
}

static void vdeps_done(const vdeps *d, const uint32_t *v, int n, double t, int ct, int same_time, double end)
{
    for (int a = 0; a < n; a++) {
        uint32_t x = v[a];
        if (joins(d, x, t, ct, same_time)) {
            if (end > d->cur[x]) d->cur[x] = end;
        } else {
            d->prev[x] = d->cur[x];
            d->cur[x] = end;
            d->vt[x] = t;
            d->vc[x] = (uint8_t)ct;
        }
    }
}

/* Critical path of the dependency graph; same_time: the dag-c rule. */
static void dag(const char *label, int same_time)
{
    double *cur = calloc(T.nv_model, sizeof *cur), *prev = calloc(T.nv_model, sizeof *prev);
    double *vt = malloc(T.nv_model * sizeof *vt);
    uint8_t *vc = calloc(T.nv_model, 1);
    vdeps d = {cur, prev, vt, vc};
    for (size_t i = 0; i < T.nv_model; i++) vt[i] = -INFINITY;
    double floor = 0.0, top = 0.0, work = 0.0, runs = 0.0;
    uint64_t nev = 0;
    for (size_t j = 0; j < T.n; j++) {
        if (T.tr[j].ref == REF_RUN) {
            floor = top + run_ns_each;
            top = floor;
            runs += run_ns_each;
            continue;
        }
        const uint32_t *v;
        int ct, n = stencil(j, &v, &ct);
        double t = T.tr[j].t, start = floor, c = cost(j);
        start = vdeps_ready(&d, v, n, t, ct, same_time, start);
        double end = start + c;
        vdeps_done(&d, v, n, t, ct, same_time, end);
        if (end > top) top = end;
        work += c;
        nev++;
    }
    /* A manager run is a barrier: the path is the runs plus the paths of
     * the stretches between them (path_between_runs). */
    printf("{\"bench\": \"pmodel\", \"schedule\": \"%s\", \"events\": %llu, \"work_ms\": %.3f, \"manager_ms\": %.3f, \"critical_path_ms\": %.4f, "
           "\"path_between_runs_ms\": %.4f, \"parallelism\": %.1f, \"predicted_speedup_brent\": {",
           label, (unsigned long long)nev, 1e-6 * (work + runs), 1e-6 * runs, 1e-6 * top, 1e-6 * (top - runs),
           (work + runs) / top);
    for (int k = 0; k < NP; k++)
        printf("%s\"%d\": %.2f", k ? ", " : "", procs[k], (work + runs) / (work / procs[k] + top));
    printf("}, \"brent_manager_parallel\": {"); /* if a manager run's broad phase were split P ways */
    for (int k = 0; k < NP; k++)
        printf("%s\"%d\": %.2f", k ? ", " : "", procs[k], (work + runs) / ((work + runs) / procs[k] + top - runs));
    printf("}}\n");
    free(cur);
    free(prev);
    free(vt);
    free(vc);
}


/* A dataflow executor without rounds: events are handed out in serial
 * order, each to the worker that is free first; every event pays sync_ns
 * for the hand-off of its dependencies (one cache line between cores).
 * same_time 0: an event starts when the last event on each of its vertices
 * is done (the dag rule). same_time 1: its gradient part ((1 - kick_frac)
 * of its cost) starts on the dag-c rule, and its kick (kick_frac) waits for
 * the previous kick on each of its vertices, which keeps the kick sums in
 * serial order. A manager run waits for every worker, then costs its time
 * (or its time / P with manager_parallel, plus a barrier). */
static void dataflow(double sync_ns, int manager_parallel, int same_time)
{
    double *cur = malloc(T.nv_model * sizeof *cur), *prev = malloc(T.nv_model * sizeof *prev);
    double *vt = malloc(T.nv_model * sizeof *vt);
    uint8_t *vc = malloc(T.nv_model);
    vdeps d = {cur, prev, vt, vc};
    double *kick = malloc(T.nv_model * sizeof *kick);
    double serial = 0.0, speed[NP];
    for (int k = 0; k < NP; k++) {
        int P = procs[k];
        double freew[64] = {0};
        for (size_t i = 0; i < T.nv_model; i++) cur[i] = prev[i] = kick[i] = 0.0, vt[i] = -INFINITY, vc[i] = 0;
        double top = 0.0;
        serial = 0.0;
        for (size_t j = 0; j < T.n; j++) {
            if (T.tr[j].ref == REF_RUN) {
                double f = top;
                for (int w = 0; w < P; w++) f = f > freew[w] ? f : freew[w];
                f += manager_parallel ? run_ns_each / P + barrier(P) : run_ns_each;
                for (int w = 0; w < P; w++) freew[w] = f;
                top = f;
                serial += run_ns_each;
                continue;
            }
            const uint32_t *v;
            int ct, n = stencil(j, &v, &ct), wmin = 0;
            double t = T.tr[j].t, start = 0.0, c = cost(j);
            start = vdeps_ready(&d, v, n, t, ct, same_time, start);
            for (int w = 1; w < P; w++)
                if (freew[w] < freew[wmin]) wmin = w;
            if (freew[wmin] > start) start = freew[wmin];
            double end = start + c + (P > 1 ? sync_ns : 0.0);
            if (same_time) { /* the kick after the previous kick on each vertex */
                double ks = end - kick_frac * c;
                for (int a = 0; a < n; a++)
                    if (kick[v[a]] > ks) ks = kick[v[a]];
                end = ks + kick_frac * c;
                for (int a = 0; a < n; a++) kick[v[a]] = end;
            }
            freew[wmin] = end;
            vdeps_done(&d, v, n, t, ct, same_time, end);
            if (end > top) top = end;
            serial += c;
        }
        speed[k] = serial / top;
    }
    printf("{\"bench\": \"pmodel\", \"schedule\": \"dataflow%s%s\", \"sync_ns\": %.0f, \"kick_fraction\": %.2f, "
           "\"predicted_speedup\": {",
           same_time ? "-c" : "", manager_parallel ? "-manager-parallel" : "", sync_ns, same_time ? kick_frac : 1.0);
    for (int k = 0; k < NP; k++) printf("%s\"%d\": %.2f", k ? ", " : "", procs[k], speed[k]);
    printf("}}\n");
    fflush(stdout);
    free(cur);
    free(prev);
    free(vt);
    free(vc);
    free(kick);
}

/* Galois-style rounds over the trace with a window of W. */
static void rounds(size_t W, int same_time, int conservative)
{
    uint32_t *win = malloc(W * sizeof *win);
    uint32_t *mark = calloc(T.nv_model, sizeof *mark);
    double *mt = malloc(T.nv_model * sizeof *mt);
    uint8_t *blk = calloc(T.nv_model, 1);
    size_t wn = 0, pos = 0;
    uint32_t stamp = 0;
    uint64_t nround = 0, ready = 0, conflicts = 0, nruns = 0, win_sum = 0;
    double tp[NB][NP] = {{0}}, serial = 0.0;
    int stop_after = 0; /* a layer-adding contact event is in the window */
    for (;;) {
        while (wn < W && pos < T.n && T.tr[pos].ref != REF_RUN && !stop_after) {
            uint32_t r = T.tr[pos].ref;
            if (conservative && (r & REF_CONTACT) && T.cev[r & ~REF_CONTACT].adds_layer) stop_after = 1;
            win[wn++] = (uint32_t)pos++;
        }
        if (wn == 0) {
            if (pos < T.n && T.tr[pos].ref == REF_RUN) {
                for (int b = 0; b < nbar; b++) {
                    barrier_ns = barrier_list[b];
                    for (int k = 0; k < NP; k++) tp[b][k] += run_ns_each + barrier(procs[k]);
                }
                serial += run_ns_each;
                nruns++;
                pos++;
                continue;
            }
            break;
        }
        stamp++;
        double work = 0.0, cmax = 0.0;
        size_t keep = 0;
        uint64_t ran = 0;
        win_sum += wn;
        for (size_t i = 0; i < wn; i++) {
            size_t j = win[i];
            const uint32_t *v;
            int ct, n = stencil(j, &v, &ct);
            double t = T.tr[j].t;
            int conflict = 0;
            for (int a = 0; a < n; a++) {
                uint32_t x = v[a];
                if (mark[x] == stamp && !(same_time && !ct && !blk[x] && mt[x] == t)) conflict = 1;
            }
            for (int a = 0; a < n; a++) {
                uint32_t x = v[a];
                if (mark[x] != stamp) {
                    mark[x] = stamp;
                    mt[x] = t;
                    blk[x] = (uint8_t)(conflict || ct);
                } else blk[x] |= (uint8_t)(conflict || ct || mt[x] != t);
            }
            if (conflict) {
                win[keep++] = (uint32_t)j;
                conflicts++;
            } else {
                double c = cost(j);
                work += c;
                if (c > cmax) cmax = c;
                ran++;
                if ((T.tr[j].ref & REF_CONTACT) && T.cev[T.tr[j].ref & ~REF_CONTACT].adds_layer) stop_after = 0;
            }
        }
        wn = keep;
        ready += ran;
        nround++;
        serial += work;
        int nb = same_time ? 2 : 1;
        for (int b = 0; b < nbar; b++) {
            barrier_ns = barrier_list[b];
            for (int k = 0; k < NP; k++) {
                double pw = work / procs[k];
                tp[b][k] += (pw > cmax ? pw : cmax) + scan_ns * (double)(wn + ran) / procs[k] + nb * barrier(procs[k]);
            }
        }
    }
    printf("{\"bench\": \"pmodel\", \"schedule\": \"rounds%s%s\", \"window\": %zu, \"rounds\": %llu, \"ready_per_round\": %.1f, "
           "\"window_fill\": %.1f, \"commit_ratio\": %.3f, \"conflicts\": %llu, \"manager_runs\": %llu, \"predicted\": [",
           same_time ? "-c" : "", conservative ? "-conservative" : "", W, (unsigned long long)nround,
           nround ? (double)ready / nround : 0.0, nround ? (double)win_sum / nround : 0.0,
           win_sum ? (double)ready / win_sum : 0.0, (unsigned long long)conflicts, (unsigned long long)nruns);
    for (int b = 0; b < nbar; b++) {
        printf("%s{\"barrier_ns\": %.0f, \"speedup\": {", b ? ", " : "", barrier_list[b]);
        for (int k = 0; k < NP; k++) printf("%s\"%d\": %.2f", k ? ", " : "", procs[k], serial / tp[b][k]);
        printf("}, \"ms\": {");
        for (int k = 0; k < NP; k++) printf("%s\"%d\": %.2f", k ? ", " : "", procs[k], 1e-6 * tp[b][k]);
        printf("}}");
    }
    printf("]}\n");
    fflush(stdout);
    free(win);
    free(mark);
    free(mt);
    free(blk);
}


/* Replays the rounds-c schedule with window W on a second, identical model
 * (elastic events only) with the engine's own drift, gradient and kick, in
 * a scrambled order: each round's winners drift and take their gradients
 * from the last to the first, then kick in key order (kick_order 0) or in
 * reverse key order (1: the negative control, which breaks the serial order
 * of kick sums on shared vertices). Returns the number of vertex records
 * that differ from the serial engine's, bit for bit. */
static double t_grad, t_kick; /* replay's time in drift and gradients, in kicks */

static size_t replay(avi_model *m, const avi_vertex *serial, size_t W, int kick_order)
{
    uint32_t *win = malloc(W * sizeof *win), *ran = malloc(W * sizeof *ran);
    double (*g)[AVI_STENCIL_MAX][3] = malloc(W * sizeof *g);
    uint32_t *mark = calloc(T.nv_model, sizeof *mark);
    double *mt = malloc(T.nv_model * sizeof *mt);
    uint8_t *blk = calloc(T.nv_model, 1);
    avi_vertex *V = m->vert;
    size_t wn = 0, pos = 0;
    uint32_t stamp = 0;
    for (;;) {
        while (wn < W && pos < T.n) win[wn++] = (uint32_t)pos++;
        if (wn == 0) break;
        stamp++;
        size_t keep = 0, nr = 0;
        for (size_t i = 0; i < wn; i++) {
            const uint32_t *v;
            int ct, n = stencil(win[i], &v, &ct), conflict = 0;
            double t = T.tr[win[i]].t;
            for (int a = 0; a < n; a++)
                if (mark[v[a]] == stamp && !(!blk[v[a]] && mt[v[a]] == t)) conflict = 1;
            for (int a = 0; a < n; a++) {
                uint32_t x = v[a];
                if (mark[x] != stamp) {
                    mark[x] = stamp;
                    mt[x] = t;
                    blk[x] = (uint8_t)conflict;
                } else blk[x] |= (uint8_t)(conflict || mt[x] != t);
            }
            if (conflict) win[keep++] = win[i];
            else ran[nr++] = win[i];
        }
        wn = keep;
        double t0 = bench_now();
        for (size_t r = nr; r-- > 0;) { /* gradients, last first */
            uint32_t p = T.tr[ran[r]].ref;
            const void *rec = avi_kind_record(m, T.kind[p], T.idx[p]);
            int ns = avi_kind_slots(T.kind[p]);
            double x[AVI_STENCIL_MAX][3];
            avi_drift(V, avi_kind_stencil(T.kind[p], rec), ns, T.tr[ran[r]].t, x);
            avi_kind_gradient(T.kind[p], rec, (const double (*)[3])x, g[r]);
        }
        double t1 = bench_now();
        for (size_t q = 0; q < nr; q++) { /* kicks */
            size_t r = kick_order ? nr - 1 - q : q;
            uint32_t p = T.tr[ran[r]].ref;
            const void *rec = avi_kind_record(m, T.kind[p], T.idx[p]);
            int ns = avi_kind_slots(T.kind[p]);
            const uint32_t *s = avi_kind_stencil(T.kind[p], rec);
            double w = (T.tr[ran[r]].t == 0.0 ? 0.5 : 1.0) * avi_kind_dt(T.kind[p], rec);
            for (int c = 0; c < ns; c += 4)
                (void)avi_kick(V, s + c, ns - c < 4 ? ns - c : 4, w, (const double (*)[3])(g[r] + c));
        }
        t_grad += t1 - t0;
        t_kick += bench_now() - t1;
    }
    size_t differ = 0;
    for (size_t i = 0; i < T.nv_model; i++) differ += memcmp(&V[i], &serial[i], sizeof *V) != 0;
    free(win);
    free(ran);
    free(g);
    free(mark);
    free(mt);
    free(blk);
    return differ;
}

static avi_model *bar_model(double tets) { return bench_bar_model(tets, "pmodel"); }

static int parse_list(char *s, size_t *out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) out[n++] = (size_t)atof(tok);
    return n;
}

int main(int argc, char **argv)
{
    const char *scene = argc > 1 ? argv[1] : "";
    double tets = 1e5, events = 2e6, end = -1.0;
    size_t windows[8] = {256, 1024, 4096, 16384, 65536};
    int nwin = 5;
    size_t verify = 0; /* --verify W: replay rounds-c at W against the serial bits (bar) */
    size_t strict_max = 1024; /* strict rounds commit few events: O(W) a round */
    const char **sets = calloc((size_t)argc + 1, sizeof *sets);
    size_t nsets = 0;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--tets") && i + 1 < argc) tets = atof(argv[++i]);
        else if (!strcmp(argv[i], "--events") && i + 1 < argc) events = atof(argv[++i]);
        else if (!strcmp(argv[i], "--end") && i + 1 < argc) end = atof(argv[++i]);
        else if (!strcmp(argv[i], "--verify") && i + 1 < argc) verify = (size_t)atof(argv[++i]);
        else if (!strcmp(argv[i], "--set") && i + 1 < argc) sets[nsets++] = argv[++i];
        else if (!strcmp(argv[i], "--windows") && i + 1 < argc) nwin = parse_list(argv[++i], windows, 8);
        else if (!strcmp(argv[i], "--barrier-ns") && i + 1 < argc) {
            nbar = 0;
            for (char *tok = strtok(argv[++i], ","); tok && nbar < NB; tok = strtok(NULL, ",")) barrier_list[nbar++] = atof(tok);
        } else if (!strcmp(argv[i], "--sync-ns") && i + 1 < argc) {
            nsync = 0;
            for (char *tok = strtok(argv[++i], ","); tok && nsync < NB; tok = strtok(NULL, ",")) sync_list[nsync++] = atof(tok);
        } else if (!strcmp(argv[i], "--kick-fraction") && i + 1 < argc) kick_frac = atof(argv[++i]);
        else if (!strcmp(argv[i], "--strict-max") && i + 1 < argc) strict_max = (size_t)atof(argv[++i]);
        else if (!strcmp(argv[i], "--scan-ns") && i + 1 < argc) scan_ns = atof(argv[++i]);
        else {
            scene = "";
            break;
        }
    }
    int bad = !(tets >= 1.0) || !(events >= 1.0) || !(kick_frac >= 0.0 && kick_frac <= 1.0) || nwin < 1;
    for (int w = 0; w < nwin; w++) bad |= windows[w] < 1;
    if (bad) {
        fprintf(stderr, "pmodel: --tets and --events must be at least 1, --windows at least 1 each, --kick-fraction in [0, 1]\n");
        return 2;
    }
    if (strcmp(scene, "bar") && strcmp(scene, "sphere-plate")) {
        fprintf(stderr, "usage: %s bar [--tets N] [--events E] [--verify W] | sphere-plate [--end T] [--set KEY=VALUE]...\n"
                        "       [--windows W,...] [--barrier-ns B,...] [--scan-ns S] [--strict-max W] [--sync-ns S,...] [--kick-fraction F]\n", argv[0]);
        return 2;
    }
    avi_error err;
    avi_model *m;
    avi_scene sc;
    int is_bar = !strcmp(scene, "bar");
    double t_end;
    if (is_bar) {
        m = bar_model(tets);
        double rate = 0.0;
        for (size_t i = 0; i < m->ntet; i++) rate += 1.0 / avi_model_time_step(m, AVI_KIND_TET, i);
        t_end = events / rate;
    } else {
        if (avi_scene_load_builtin("sphere-plate", sets, nsets, &sc, &err) || avi_scene_build(&sc, &m, NULL, &err)) {
            fprintf(stderr, "pmodel: %s\n", err.message);
            return 1;
        }
        t_end = end > 0 ? end : sc.end_time;
        if (m->contact_ops) { /* record contact through the model's table */
            orig = m->contact_ops;
            wrapped = *orig;
            wrapped.run = run_hook;
            wrapped.event = event_hook;
            m->contact_ops = &wrapped;
        }
    }
    table_of(m);
    avi_engine *e = avi_engine_create(m, &err);
    if (!e) {
        fprintf(stderr, "pmodel: %s\n", err.message);
        return 1;
    }
    /* The serial run: its time gives the costs. */
    double w0 = bench_now();
    int rc = avi_engine_advance(e, t_end);
    double wall_ns = 1e9 * (bench_now() - w0);
    if (rc != AVI_OK) {
        fprintf(stderr, "pmodel: run failed: %s\n", avi_engine_error(e)->message);
        return 1;
    }
    uint64_t n_engine = avi_engine_events_total(e), n_contact = avi_engine_event_count(e, AVI_KIND_CONTACT);
    uint64_t n_el = merge_elastic(m, t_end);
    double other = wall_ns - T.contact_ns - T.run_ns;
    el_ns = other / (double)(n_engine - n_contact);
    ct_ns = n_contact ? T.contact_ns / (double)n_contact : 0.0;
    run_ns_each = T.nrun ? T.run_ns / (double)T.nrun : 0.0;
    const avi_contact_manager *cm = e->contact;
    printf("{\"bench\": \"pmodel\", \"scene\": \"%s\", \"tets\": %zu, \"vertices\": %zu, \"t_end\": %.6e, "
           "\"engine_events\": %llu, \"trace_elastic\": %llu, \"refined_extra\": %lld, \"contact_events\": %llu, "
           "\"layer_adds\": %llu, \"manager_runs\": %zu, \"runs_created\": %llu, \"runs_retired\": %llu, \"speed_triggers\": %llu, \"serial_ms\": %.2f, "
           "\"elastic_ns\": %.1f, \"contact_ns\": %.1f, \"manager_run_us\": %.2f, \"scan_ns\": %.1f}\n",
           scene, m->ntet, m->nv, t_end, (unsigned long long)n_engine, (unsigned long long)n_el,
           (long long)(n_engine - n_contact) - (long long)n_el, (unsigned long long)n_contact,
           (unsigned long long)T.layer_adds, T.nrun, (unsigned long long)T.run_created, (unsigned long long)T.run_retired, cm ? (unsigned long long)cm->clock.speed_triggers : 0ull,
           1e-6 * wall_ns, el_ns, ct_ns, 1e-3 * run_ns_each, scan_ns);
    fflush(stdout);
    int vrc = 0;
    if (verify && is_bar) {
        avi_model *m2 = bar_model(tets);
        avi_model *m3 = bar_model(tets);
        size_t d0 = replay(m2, m->vert, verify, 0);
        double kf = t_kick / (t_grad + t_kick);
        size_t d1 = replay(m3, m->vert, verify, 1);
        printf("{\"bench\": \"pmodel\", \"verify\": \"rounds-c\", \"window\": %zu, \"records\": %zu, \"differing\": %zu, "
               "\"negative_control_kicks_reversed_differing\": %zu, \"kick_fraction\": %.3f}\n",
               verify, T.nv_model, d0, d1, kf);
        vrc = d0 != 0 || d1 == 0; /* the control must fail, or the check proves nothing */
        avi_model_destroy(m2);
        avi_model_destroy(m3);
    }
    avi_engine_destroy(e);
    dag("dag", 0);
    dag("dag-c", 1);
    barrier_ns = barrier_list[0];
    for (int k = 0; k < nsync; k++) {
        dataflow(sync_list[k], 0, 0);
        dataflow(sync_list[k], 0, 1);
        if (T.nrun) {
            dataflow(sync_list[k], 1, 0);
            dataflow(sync_list[k], 1, 1);
        }
    }
    for (int w = 0; w < nwin; w++) {
        if (windows[w] <= strict_max) rounds(windows[w], 0, 0);
        rounds(windows[w], 1, 0);
        if (T.ncev) rounds(windows[w], 1, 1);
    }
    avi_model_destroy(m);
    if (!is_bar) avi_scene_free(&sc);
    free(sets);
    return vrc;
}
