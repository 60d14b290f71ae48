/* Group ticks on the engine's threads (core/group_tick.h). */
#include "core/group_tick.h"
#include "base/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A kick kept for the seam: record `rec` gets v -= w M^-1 g after the
 * parallel part, in the order kept. */
typedef struct {
    double g[3];
    double w;
    uint32_t rec;
} seam_kick;

typedef struct {
    seam_kick *kick;
    size_t n, cap;
    uint64_t counts[AVI_KIND_COUNT];
    int finite;
    int oom;
    int fast;   /* a kick left a record past the contact manager's speed cap */
    char pad[64];
} tick_part;

struct avi_tick_par {
    uint32_t *slot_start; /* by member number (groups->member index): its first slot in local */
    uint32_t *local;      /* per member slot: the record's place in its group's vertex list */
    uint32_t *first, *last; /* by group vertex (groups->vertex index): first and last member touching it */
    tick_part *part;
    int nparts;
    avi_vertex *undo; /* with contact: the group's records before the tick */
    size_t undo_cap;
    uint64_t ticks, members, seam, undone; /* avi_group_tick_stats */
};

void avi_group_tick_stats(const avi_engine *e, uint64_t *ticks, uint64_t *members, uint64_t *seam, uint64_t *undone)
{
    const struct avi_tick_par *tp = e->tick;
    *ticks = tp ? tp->ticks : 0;
    *members = tp ? tp->members : 0;
    *seam = tp ? tp->seam : 0;
    *undone = tp ? tp->undone : 0;
}

void avi_group_tick_free(avi_engine *e)
{
    struct avi_tick_par *tp = e->tick;
    if (!tp) return;
    for (int k = 0; k < tp->nparts; k++) free(tp->part[k].kick);
    free(tp->part);
    free(tp->undo);
    free(tp->slot_start);
    free(tp->local);
    free(tp->first);
    free(tp->last);
    free(tp);
    e->tick = NULL;
}

/* The spans of every group (once per grouping). NULL when out of memory. */
static struct avi_tick_par *build_spans(const avi_engine *e)
{
    const avi_model *m = e->model;
    const avi_clock_groups *g = &e->groups;
    size_t nmem = 0, nvert = 0, nslot = 0;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        const avi_clock_group *gr = &g->group[k];
        if (gr->first + gr->count > nmem) nmem = gr->first + gr->count;
        if (gr->vfirst + gr->vcount > nvert) nvert = gr->vfirst + gr->vcount;
    }
    struct avi_tick_par *tp = calloc(1, sizeof *tp);
    if (!tp || !(tp->slot_start = malloc((nmem + 1) * sizeof *tp->slot_start)) ||
        !(tp->first = malloc((nvert + 1) * sizeof *tp->first)) || !(tp->last = malloc((nvert + 1) * sizeof *tp->last)))
        goto oom;
    for (size_t a = 0; a < nmem; a++) {
        tp->slot_start[a] = (uint32_t)nslot;
        uint32_t id = g->member[a];
        const uint32_t *s;
        nslot += (size_t)avi_model_stencil(m, (avi_kind)(id >> AVI_ID_KIND_SHIFT), id & AVI_ID_INDEX_MASK, &s);
    }
    tp->slot_start[nmem] = (uint32_t)nslot;
    if (nslot > UINT32_MAX || !(tp->local = malloc((nslot + 1) * sizeof *tp->local))) goto oom;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        const avi_clock_group *gr = &g->group[k];
        const uint32_t *list = g->vertex + gr->vfirst;
        for (uint32_t l = 0; l < gr->vcount; l++) {
            tp->first[gr->vfirst + l] = UINT32_MAX;
            tp->last[gr->vfirst + l] = 0;
        }
        for (uint32_t p = 0; p < gr->count; p++) {
            uint32_t a = gr->first + p, id = g->member[a];
            const uint32_t *s;
            int ns = avi_model_stencil(m, (avi_kind)(id >> AVI_ID_KIND_SHIFT), id & AVI_ID_INDEX_MASK, &s);
            for (int j = 0; j < ns; j++) {
                uint32_t lo = 0, hi = gr->vcount; /* the list is ascending */
                while (lo < hi) {
                    uint32_t mid = lo + (hi - lo) / 2;
                    if (list[mid] < s[j]) lo = mid + 1;
                    else hi = mid;
                }
                tp->local[tp->slot_start[a] + (uint32_t)j] = lo;
                uint32_t *f = &tp->first[gr->vfirst + lo], *l = &tp->last[gr->vfirst + lo];
                if (p < *f) *f = p;
                if (p > *l) *l = p;
            }
        }
    }
    return tp;
oom:
    if (tp) {
        free(tp->slot_start);
        free(tp->local);
        free(tp->first);
        free(tp->last);
        free(tp);
    }
    return NULL;
}

typedef struct {
    avi_engine *e;
    struct avi_tick_par *tp;
    const avi_clock_group *gr;
    const uint32_t *mem;
    uint32_t pos, end;
    double t, half;
    int nparts;
    double vcap2;   /* the contact manager's speed cap squared; +inf without contact */
} tick_job;

/* Drifts the group's records [b, e) of its vertex list to t. */
static void drift_part(void *ctx, size_t b, size_t e, int worker)
{
    (void)worker;
    const tick_job *j = ctx;
    avi_vertex *V = j->e->model->vert;
    const uint32_t *list = j->e->groups.vertex + j->gr->vfirst;
    if (j->tp->undo)
        for (size_t a = b; a < e; a++) j->tp->undo[a] = V[list[a]];
#ifdef __AVX2__
    const __m256d tt = _mm256_set1_pd(j->t);
    for (size_t a = b; a < e; a++) (void)avi_drift_record(&V[list[a]], tt);
#else
    for (size_t a = b; a < e; a++) avi_drift_record(&V[list[a]], j->t);
#endif
}

static inline int keep_kick(tick_part *part, uint32_t rec, double w, const double g[3])
{
    if (part->n == part->cap) {
        size_t cap = part->cap ? 2 * part->cap : 256;
        seam_kick *k = realloc(part->kick, cap * sizeof *k);
        if (!k) {
            part->oom = 1;
            return -1;
        }
        part->kick = k;
        part->cap = cap;
    }
    seam_kick *k = &part->kick[part->n++];
    k->g[0] = g[0];
    k->g[1] = g[1];
    k->g[2] = g[2];
    k->w = w;
    k->rec = rec;
    return 0;
}

/* avi_kick on one record (the same arithmetic, so the same bits), its
 * gradient read from memory: gcc builds avi_kick's lanes here with a
 * register form of vmovq that valgrind 3.19 does not decode. */
static inline void kick_one(avi_vertex *p, double w, const double g[3])
{
#ifdef __AVX2__
    const double g4[4] = {g[0], g[1], g[2], 0.0};
    avi_kick_record(p, _mm256_set1_pd(w), _mm256_loadu_pd(g4));
#else
    double s = w * p->inv_mass;
    p->v[0] -= s * g[0];
    p->v[1] -= s * g[1];
    p->v[2] -= s * g[2];
#endif
}

/* One member: gradient at the drifted positions, its kicks on the records
 * this part owns, the others kept for the seam; `speed` (a constant where
 * inlined): check each kick against the speed cap. Returns the impulse's
 * component sum (its finiteness is the blow-up check; in lanes where the
 * kind has them, summed as uniform_tick does), NAN when out of memory. */
static inline __attribute__((always_inline)) double member(const tick_job *j, tick_part *part, unsigned kind,
                                                           int speed, uint32_t p, uint32_t pb, uint32_t pe)
{
    const avi_model *m = j->e->model;
    avi_vertex *V = m->vert;
    uint32_t a = j->gr->first + p, id = j->mem[p];
    const void *rec = avi_kind_record(m, kind, id & AVI_ID_INDEX_MASK);
    const uint32_t *s = avi_kind_stencil(kind, rec);
    const int ns = avi_kind_slots(kind), nv = avi_kind_vertices(kind); /* slots past nv: edge records */
    const double w = j->half * avi_kind_dt(kind, rec);
    const uint32_t *local = j->tp->local + j->tp->slot_start[a];
    const uint32_t *first = j->tp->first + j->gr->vfirst, *last = j->tp->last + j->gr->vfirst;
    /* The tick's members that touch a record lie in [max(first, pos),
     * min(last, end - 1)]: this part owns it when that is inside [pb, pe). */
    const uint32_t lo_cut = pb > j->pos ? pb : 0, hi_cut = pe < j->end ? pe : UINT32_MAX;
#ifdef __AVX2__
    if (avi_kind_has_lanes(kind)) {
        __m256d xv[AVI_STENCIL_MAX], gv[AVI_STENCIL_MAX], sum = _mm256_setzero_pd();
        for (int c = 0; c < ns; c++) xv[c] = _mm256_loadu_pd(V[s[c]].x);
        avi_kind_gradient_lanes(kind, rec, xv, gv);
        const __m256d ww = _mm256_set1_pd(w);
        for (int c = 0; c < ns; c++) {
            uint32_t l = local[c];
            if (first[l] >= lo_cut && last[l] < hi_cut) {
                avi_kick_record(&V[s[c]], ww, gv[c]);
                if (speed && c < nv && v3_dot(V[s[c]].v, V[s[c]].v) > j->vcap2) part->fast = 1;
            } else {
                double g[4];
                _mm256_storeu_pd(g, gv[c]);
                if (keep_kick(part, s[c], w, g)) return NAN;
            }
            sum = _mm256_add_pd(sum, gv[c]);
        }
        return avi_lane_sum(sum);
    }
#endif
    double x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
    avi_gather(V, s, ns, x);
    avi_kind_gradient(kind, rec, (const double (*)[3])x, g);
    double sum = 0.0;
    for (int c = 0; c < ns; c++) {
        uint32_t l = local[c];
        if (first[l] >= lo_cut && last[l] < hi_cut) {
            kick_one(&V[s[c]], w, g[c]);
            if (speed && c < nv && v3_dot(V[s[c]].v, V[s[c]].v) > j->vcap2) part->fast = 1; /* avi_check_speed's */
        } else if (keep_kick(part, s[c], w, g[c])) {
            return NAN;
        }
        sum += g[c][0] + g[c][1] + g[c][2];
    }
    return sum;
}

/* Past the L2 cache a record or vertex load costs 50-100 ns: request the
 * record of the member PREFETCH_RECORD ahead and the vertices of the one
 * PREFETCH_VERTICES ahead, whose record has arrived (as the serial loop,
 * engine.c). */
#define PREFETCH_RECORD 8
#define PREFETCH_VERTICES 4
static inline __attribute__((always_inline)) void prefetch_member(const avi_model *m, uint32_t id, int vertices)
{
    unsigned kind = id >> AVI_ID_KIND_SHIFT;
    if (kind >= AVI_MODEL_KINDS || !(avi_kind_flags(kind) & AVI_KIND_ELASTIC)) return;
    const char *rec = avi_kind_record(m, kind, id & AVI_ID_INDEX_MASK);
    if (!vertices) {
        size_t size = avi_kind_record_size(kind);
        for (size_t o = 0; o < size; o += 64) __builtin_prefetch(rec + o);
        __builtin_prefetch(rec + size - 1);
        return;
    }
    const uint32_t *s = avi_kind_stencil(kind, rec);
    for (int a = 0; a < avi_kind_slots(kind); a++) __builtin_prefetch(&m->vert[s[a]], 1);
}

/* Part k of the tick: its members in order. */
static void run_part(void *ctx, size_t kb, size_t ke, int worker)
{
    const tick_job *j = ctx;
    for (size_t k = kb; k < ke; k++) {
        tick_part *part = &j->tp->part[k];
        uint64_t span = j->end - j->pos;
        uint32_t pb = j->pos + (uint32_t)(span * k / (uint64_t)j->nparts);
        uint32_t pe = j->pos + (uint32_t)(span * (k + 1) / (uint64_t)j->nparts);
        double total = 0.0;
        const int prefetch = j->e->prefetch, speed = j->vcap2 < INFINITY;
        for (uint32_t p = pb; p < pe; p++) {
            if (prefetch) {
                if (p + PREFETCH_RECORD < pe) prefetch_member(j->e->model, j->mem[p + PREFETCH_RECORD], 0);
                if (p + PREFETCH_VERTICES < pe) prefetch_member(j->e->model, j->mem[p + PREFETCH_VERTICES], 1);
            }
            unsigned kind = j->mem[p] >> AVI_ID_KIND_SHIFT;
            switch (kind) { /* one straight path per kind */
#define MEMBER(K, ...) \
    case K: total += speed ? member(j, part, K, 1, p, pb, pe) : member(j, part, K, 0, p, pb, pe); break;
                AVI_POTENTIAL_KINDS(MEMBER)
#undef MEMBER
            default: total = NAN; break;
            }
            part->counts[kind]++;
        }
        part->finite = isfinite(total);
    }
}

int avi_group_tick_parallel(avi_engine *e, const avi_clock_group *gr, const uint32_t *mem, uint32_t pos,
                            uint32_t end, double t, double half, uint64_t *counts, int *sum_finite)
{
    avi_pool *pool = e->pool;
    int threads = avi_pool_threads(pool);
    /* Parts: one per thread; chaos cuts 1 to 8 whatever the threads (the
     * bits must not depend on the cut). */
    int nparts = threads;
    if (avi_pool_chaos(pool)) nparts = 1 + (int)((avi_pool_chaos(pool) * 2654435761u + pos + end) % 8);
    if (nparts > (int)(end - pos)) nparts = (int)(end - pos);
    if (!e->tick && !(e->tick = build_spans(e))) return -1;
    struct avi_tick_par *tp = e->tick;
    int want = nparts;
    if (tp->nparts < want) {
        tick_part *np = realloc(tp->part, (size_t)want * sizeof *np);
        if (!np) return -1;
        memset(np + tp->nparts, 0, (size_t)(want - tp->nparts) * sizeof *np);
        tp->part = np;
        tp->nparts = want;
    }
    for (int k = 0; k < tp->nparts; k++) {
        tp->part[k].n = 0;
        tp->part[k].oom = 0;
        tp->part[k].fast = 0;
        memset(tp->part[k].counts, 0, sizeof tp->part[k].counts);
    }
    /* With contact, a kick that leaves a record past the speed cap stops
     * the serial tick at its member, for the manager to run: the tick is
     * undone and left to the serial loop, which finds that member. */
    avi_contact_clock *cm = contact_clock(e);
    if (cm) {
        if (tp->undo_cap < gr->vcount) {
            avi_vertex *u = realloc(tp->undo, (size_t)gr->vcount * sizeof *u);
            if (!u) return -1;
            tp->undo = u;
            tp->undo_cap = gr->vcount;
        }
    }
    avi_vertex *undo = tp->undo;
    if (!cm) tp->undo = NULL; /* drift_part saves nothing */
    tick_job j = {e, tp, gr, mem, pos, end, t, half, nparts, cm ? cm->vcap2 : INFINITY};
    avi_pool_for(pool, gr->vcount, 4096, drift_part, &j);
    avi_pool_for(pool, (size_t)nparts, 1, run_part, &j);
    tp->undo = undo;
    /* The seam in part order, which is member order. */
    avi_vertex *V = e->model->vert;
    int finite = 1, oom = 0, fast = 0;
    for (int k = 0; k < nparts; k++) {
        const tick_part *part = &tp->part[k];
        for (size_t a = 0; a < part->n; a++) {
            const seam_kick *sk = &part->kick[a];
            kick_one(&V[sk->rec], sk->w, sk->g);
            if (sk->rec < e->model->nv && v3_dot(V[sk->rec].v, V[sk->rec].v) > j.vcap2) fast = 1;
        }
        finite &= part->finite;
        oom |= part->oom;
        fast |= part->fast;
    }
    if (oom) return -1;
    if (cm && (fast || !finite)) {
        /* Back to the records before the tick; the serial loop runs it. */
        const uint32_t *list = e->groups.vertex + gr->vfirst;
        for (uint32_t a = 0; a < gr->vcount; a++) V[list[a]] = undo[a];
        tp->undone++;
        return 0;
    }
    tp->ticks++;
    tp->members += end - pos;
    for (int k = 0; k < nparts; k++) tp->seam += tp->part[k].n;
    for (int k = 0; k < nparts; k++)
        for (int c = 0; c < AVI_KIND_COUNT; c++) counts[c] += tp->part[k].counts[c];
    *sum_finite = finite;
    return 1;
}
