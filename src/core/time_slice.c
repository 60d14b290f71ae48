/* Time slices on the engine's threads (core/time_slice.h). */
#include "core/time_slice.h"
#include "base/grow.h"
#include "base/pool.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(AVI_STENCIL_MAX <= 16, "a seam mask has a bit per stencil slot");

/* A kick kept for the seam: record `rec` gets v -= w M^-1 g once the parts
 * are done, in member id order. */
typedef struct {
    double g[3];
    double w;
    uint32_t id, rec;
} seam_kick;

typedef struct {
    seam_kick *kick;
    size_t n, cap;
    size_t kept; /* the kicks this slice's members keep (n once run): the ranks' message sizes */
    seam_kick *by_owner; /* kick sorted by the records' seam owners (stable: id order within each) */
    size_t ostart[AVI_SLICE_PARTS_MAX + 1]; /* owner o's: by_owner[ostart[o] .. ostart[o + 1]) */
    uint32_t *ids;   /* the part's members of a slice of several entries, merged in id order */
    uint8_t *entry;  /* the entry each came from */
    size_t ids_cap;
    avi_vertex *undo; /* with contact: the part's own records of the slice's groups before it */
    size_t undo_cap;
    uint64_t counts[AVI_KIND_COUNT];
    int finite;
    int fast;        /* with contact: a kick by this part (or on its seam records) passed the speed cap */
    char pad[64];    /* parts are written by different threads */
} slice_part;

struct avi_slice_par {
    int nparts;
    int tpr;             /* with ranks: the parts (threads) of each rank */
    uint8_t *part_of;    /* by potential number (clock_groups.h's offset + index) */
    uint16_t *seam_mask; /* by potential number: bit c set when slot c's record is in the seam */
    uint32_t *pmem;      /* each group's members by part, in id order within a part */
    uint32_t *pstart;    /* group g, part k: pmem[pstart[g (P + 1) + k] .. pstart[g (P + 1) + k + 1]) */
    uint32_t *pkept;     /* group g, part k: the kicks its members keep for the seam */
    uint32_t *seam;      /* each group's seam records */
    uint32_t *seam_start; /* group g: seam[seam_start[g] .. seam_start[g + 1]) */
    uint8_t *owner;      /* by record: its part, SEAM, or NONE (no clock touches it) */
    uint8_t *seam_owner; /* by record in the seam: the part that applies its kept kicks */
    uint32_t *pvert;     /* each group's records outside the seam by part (drifted by the part, drift_all) */
    uint32_t *vstart;    /* group g, part k: pvert[vstart[g (P + 1) + k] .. vstart[g (P + 1) + k + 1]) */
    slice_part *part;
    avi_vertex *undo;    /* with contact: the seam's and single clocks' records before a slice */
    uint32_t *undo_rec;
    size_t undo_n, undo_cap;
    char *xbuf;          /* with ranks: the exchange's send and receive buffers */
    size_t xcap;
    /* With ranks: each part's own records that its slices changed since the
     * last sync (in the order every member computes alike), and by record
     * the sync epoch in which it joined its list. A member holds other
     * parts' own records stale until avi_slice_sync. */
    uint32_t **dirty;
    size_t *ndirty, *dirty_cap;
    uint32_t *stamp, epoch;
    int stale;
    uint64_t *holders;   /* with ranks, by seam record: bit r when a part of rank r touches it */
    uint64_t slices, events, kept, undone;
    uint64_t busiest; /* over slices: the events of the part with the most */
};

void avi_slice_stats(const avi_engine *e, uint64_t *slices, uint64_t *events, uint64_t *seam)
{
    const struct avi_slice_par *sp = e->slice;
    *slices = sp ? sp->slices : 0;
    *events = sp ? sp->events : 0;
    *seam = sp ? sp->kept : 0;
}

int avi_slice_default_threads(const avi_engine *e, int cpus)
{
    /* Ranks on one machine would each take every core: one a rank, unless asked. */
    if (e->ranks || e->sync || e->contact || e->damping != 0.0 || e->groups.ngroup == 0) return 1;
    size_t n = e->groups.npotential / AVI_SLICE_POTENTIALS_PER_THREAD;
    return n < 1 ? 1 : n < (size_t)cpus ? (int)n : cpus;
}

uint64_t avi_slice_undone(const avi_engine *e) { return e->slice ? e->slice->undone : 0; }
uint64_t avi_slice_busiest(const avi_engine *e) { return e->slice ? e->slice->busiest : 0; }

void avi_slice_free(avi_engine *e)
{
    struct avi_slice_par *sp = e->slice;
    if (!sp) return;
    for (int k = 0; k < sp->nparts; k++) {
        free(sp->part[k].kick);
        free(sp->part[k].by_owner);
        free(sp->part[k].undo);
        free(sp->part[k].ids);
        free(sp->part[k].entry);
    }
    free(sp->part);
    free(sp->part_of);
    free(sp->seam_mask);
    free(sp->pmem);
    free(sp->pstart);
    free(sp->pkept);
    free(sp->seam);
    free(sp->seam_start);
    free(sp->owner);
    free(sp->seam_owner);
    free(sp->undo);
    free(sp->undo_rec);
    free(sp->xbuf);
    for (int k = 0; sp->dirty && k < sp->nparts; k++) free(sp->dirty[k]);
    free(sp->dirty);
    free(sp->ndirty);
    free(sp->dirty_cap);
    free(sp->stamp);
    free(sp->holders);
    free(sp->pvert);
    free(sp->vstart);
    free(sp);
    e->slice = NULL;
}

static inline size_t potential_number(const avi_clock_groups *g, uint32_t id)
{
    return g->offset[id >> AVI_ID_KIND_SHIFT] + (id & AVI_ID_INDEX_MASK);
}

enum { UNSCHEDULED = 0xFF };

/* Recursive coordinate bisection of the vertices list[0..n) (each with the
 * event rate of the potentials that start at it) into parts first ..
 * first + nparts - 1: the longest side of their bounding box is cut where
 * the rate below reaches the share of the parts on that side (a histogram
 * of RCB_BINS along it), so that the cut planes are short across a long
 * body and every part gets about as many events per second. `chaos`:
 * random shares instead (the bits must not depend on the cut). */
#define RCB_BINS 1024
static void bisect(const avi_vertex *V, const double *rate, uint32_t *list, size_t n, int first, int nparts,
                   uint8_t *vpart, uint64_t *chaos, uint32_t *bin)
{
    if (nparts == 1 || n < 2) {
        for (size_t a = 0; a < n; a++) vpart[list[a]] = (uint8_t)first;
        return;
    }
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, total = 0.0;
    for (size_t a = 0; a < n; a++) {
        const double *x = V[list[a]].x;
        for (int c = 0; c < 3; c++) {
            lo[c] = fmin(lo[c], x[c]);
            hi[c] = fmax(hi[c], x[c]);
        }
        total += rate[list[a]];
    }
    int axis = 0;
    for (int c = 1; c < 3; c++)
        if (hi[c] - lo[c] > hi[axis] - lo[axis]) axis = c;
    int left = nparts / 2;
    double share = (double)left / nparts;
    if (*chaos) {
        *chaos ^= *chaos >> 31; *chaos *= 0xBF58476D1CE4E5B9ull; *chaos ^= *chaos >> 29;
        share = 0.05 + 0.9 * (double)(*chaos >> 11) / 9007199254740992.0;
    }
    double w[RCB_BINS] = {0}, span = hi[axis] - lo[axis];
    for (size_t a = 0; a < n; a++) {
        double f = span > 0.0 ? (V[list[a]].x[axis] - lo[axis]) / span : 0.0;
        uint32_t b = f >= 0.0 && f < 1.0 ? (uint32_t)(f * RCB_BINS) : f >= 1.0 ? RCB_BINS - 1 : 0; /* NaN: 0 */
        bin[list[a]] = b;
        w[b] += rate[list[a]];
    }
    uint32_t cut = 0;
    for (double run = 0.0; cut < RCB_BINS - 1 && run + w[cut] <= share * total; cut++) run += w[cut];
    size_t m = 0; /* vertices in bins <= cut first, in their order */
    for (size_t a = 0; a < n; a++)
        if (bin[list[a]] <= cut) {
            uint32_t x = list[a];
            list[a] = list[m];
            list[m++] = x;
        }
    if (m == n || m == 0) m = n / 2; /* one bin holds all: cut the list */
    bisect(V, rate, list, m, first, left, vpart, chaos, bin);
    bisect(V, rate, list + m, n - m, first + left, nparts - left, vpart, chaos, bin);
}

/* The parts: potentials by the place of their first vertex (bisect);
 * pinned potentials, which have no clock, are UNSCHEDULED. */
static int assign_parts(const avi_model *m, const avi_clock_groups *g, struct avi_slice_par *sp, uint64_t chaos)
{
    size_t nrec = avi_model_record_count(m);
    double *rate = calloc(nrec + 1, sizeof *rate);
    uint8_t *vpart = calloc(nrec + 1, 1);
    uint32_t *list = malloc((nrec + 1) * sizeof *list), *bin = malloc((nrec + 1) * sizeof *bin);
    if (!rate || !vpart || !list || !bin) {
        free(rate);
        free(vpart);
        free(list);
        free(bin);
        return -1;
    }
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            const void *rec = avi_kind_record(m, k, i);
            const uint32_t *s = avi_kind_stencil(k, rec);
            int a = 0, ns = avi_kind_slots(k);
            while (a < ns && m->vert[s[a]].inv_mass == 0.0) a++; /* avi_model_potential_pinned */
            if (a == ns) {
                sp->part_of[g->offset[k] + i] = UNSCHEDULED;
                continue;
            }
            rate[s[0]] += 1.0 / avi_kind_dt(k, rec);
        }
    size_t n = 0;
    for (size_t v = 0; v < nrec; v++)
        if (rate[v] > 0.0) list[n++] = (uint32_t)v;
    uint64_t x = chaos ? chaos * 0x9E3779B97F4A7C15ull : 0;
    bisect(m->vert, rate, list, n, 0, sp->nparts, vpart, &x, bin);
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            uint8_t *p = &sp->part_of[g->offset[k] + i];
            if (*p != UNSCHEDULED) *p = vpart[avi_kind_stencil(k, avi_kind_record(m, k, i))[0]];
        }
    free(rate);
    free(vpart);
    free(list);
    free(bin);
    return 0;
}

/* The seam: records that potentials of two parts touch (applied by the
 * first part seen); each potential's mask of its slots there. */
enum { NONE = 0xFF, SEAM = 0xFE };
static int mark_seam(const avi_model *m, const avi_clock_groups *g, struct avi_slice_par *sp)
{
    size_t nrec = avi_model_record_count(m);
    uint8_t *owner = sp->owner = malloc(nrec + 1), *first = sp->seam_owner = malloc(nrec + 1);
    if (!owner || !first) return -1;
    memset(owner, NONE, nrec + 1);
    for (int pass = 0; pass < 2; pass++)
        for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
            for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
                uint8_t part = sp->part_of[g->offset[k] + i];
                if (part == UNSCHEDULED) continue;
                const uint32_t *s = avi_kind_stencil(k, avi_kind_record(m, k, i));
                int ns = avi_kind_slots(k);
                uint16_t mask = 0;
                for (int a = 0; a < ns; a++) {
                    uint8_t *o = &owner[s[a]];
                    if (pass == 0 && *o == NONE) *o = first[s[a]] = part;
                    else if (pass == 0 && *o != part) *o = SEAM;
                    else if (*o == SEAM) mask |= (uint16_t)(1u << a);
                }
                if (pass == 1) sp->seam_mask[g->offset[k] + i] = mask;
            }
    return 0;
}

/* Each group's members by part and the kicks they keep; its records (the
 * group's vertex list, clock_groups.h) in the seam, and the others by part. */
static int group_lists(const avi_clock_groups *g, struct avi_slice_par *sp)
{
    const size_t P = (size_t)sp->nparts;
    size_t nmem = 0, nvert = 0;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        const avi_clock_group *gr = &g->group[k];
        if (gr->first + gr->count > nmem) nmem = gr->first + gr->count;
        if (gr->vfirst + gr->vcount > nvert) nvert = gr->vfirst + gr->vcount;
    }
    sp->pmem = malloc((nmem + 1) * sizeof *sp->pmem);
    sp->pstart = calloc((size_t)g->ngroup * (P + 1) + 1, sizeof *sp->pstart);
    sp->pkept = calloc((size_t)g->ngroup * P + 1, sizeof *sp->pkept);
    sp->seam = malloc((nvert + 1) * sizeof *sp->seam);
    sp->seam_start = calloc((size_t)g->ngroup + 1, sizeof *sp->seam_start);
    sp->pvert = malloc((nvert + 1) * sizeof *sp->pvert);
    sp->vstart = calloc((size_t)g->ngroup * (P + 1) + 1, sizeof *sp->vstart);
    if (!sp->pmem || !sp->pstart || !sp->pkept || !sp->seam || !sp->seam_start || !sp->pvert || !sp->vstart) return -1;
    size_t nseam = 0, npvert = 0;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        const avi_clock_group *gr = &g->group[k];
        const uint32_t *mem = g->member + gr->first;
        uint32_t *ps = sp->pstart + (size_t)k * (P + 1);
        uint32_t count[AVI_SLICE_PARTS_MAX + 1] = {0};
        for (uint32_t a = 0; a < gr->count; a++) {
            size_t pn = potential_number(g, mem[a]);
            count[sp->part_of[pn] + 1]++;
            sp->pkept[(size_t)k * P + sp->part_of[pn]] += (uint32_t)__builtin_popcount(sp->seam_mask[pn]);
        }
        for (size_t p = 0; p < P; p++) count[p + 1] += count[p];
        for (size_t p = 0; p <= P; p++) ps[p] = gr->first + count[p];
        for (uint32_t a = 0; a < gr->count; a++) /* stable: id order within a part */
            sp->pmem[gr->first + count[sp->part_of[potential_number(g, mem[a])]]++] = mem[a];
        const uint32_t *list = g->vertex + gr->vfirst;
        uint32_t *vs = sp->vstart + (size_t)k * (P + 1), vcount[AVI_SLICE_PARTS_MAX + 1] = {0};
        sp->seam_start[k] = (uint32_t)nseam;
        for (uint32_t a = 0; a < gr->vcount; a++) {
            uint8_t o = sp->owner[list[a]];
            if (o == SEAM) sp->seam[nseam++] = list[a];
            else vcount[o + 1]++; /* a member's record: never NONE */
        }
        for (size_t p = 0; p < P; p++) vcount[p + 1] += vcount[p];
        for (size_t p = 0; p <= P; p++) vs[p] = (uint32_t)npvert + vcount[p];
        for (uint32_t a = 0; a < gr->vcount; a++) {
            uint8_t o = sp->owner[list[a]];
            if (o != SEAM) sp->pvert[npvert + vcount[o]++] = list[a];
        }
        npvert += gr->vcount - (nseam - sp->seam_start[k]);
    }
    sp->seam_start[g->ngroup] = (uint32_t)nseam;
    return 0;
}

/* With ranks: the parts' dirty lists, empty, the records' stamps, and
 * each seam record's holders (the ranks whose parts touch it). */
static int dirty_lists(const avi_model *m, const avi_clock_groups *g, struct avi_slice_par *sp)
{
    size_t nrec = avi_model_record_count(m);
    sp->dirty = calloc((size_t)sp->nparts, sizeof *sp->dirty);
    sp->ndirty = calloc((size_t)sp->nparts, sizeof *sp->ndirty);
    sp->dirty_cap = calloc((size_t)sp->nparts, sizeof *sp->dirty_cap);
    sp->stamp = calloc(nrec + 1, sizeof *sp->stamp);
    sp->holders = calloc(nrec + 1, sizeof *sp->holders);
    sp->epoch = 1;
    if (!sp->dirty || !sp->ndirty || !sp->dirty_cap || !sp->stamp || !sp->holders) return -1;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            uint8_t part = sp->part_of[g->offset[k] + i];
            if (part == UNSCHEDULED) continue;
            const uint32_t *st = avi_kind_stencil(k, avi_kind_record(m, k, i));
            for (int a = 0, ns = avi_kind_slots(k); a < ns; a++)
                if (sp->owner[st[a]] == SEAM) sp->holders[st[a]] |= 1ull << (part / sp->tpr);
        }
    return 0;
}

/* The parts of the engine's pool (one per thread; chaos: 1 to 8). NULL
 * when out of memory. */
static struct avi_slice_par *build_parts(const avi_engine *e)
{
    const avi_model *m = e->model;
    const avi_clock_groups *g = &e->groups;
    struct avi_slice_par *sp = calloc(1, sizeof *sp);
    if (!sp) return NULL;
    uint64_t chaos = e->ranks ? 0 : avi_pool_chaos(e->pool);
    int threads = avi_pool_threads(e->pool);
    if (e->ranks) {
        /* One part a thread of each rank, the fewest threads any rank has
         * (their counts may differ: the default follows each one's CPU
         * affinity); rank r runs parts r T .. r T + T - 1. */
        int all[AVI_SLICE_PARTS_MAX];
        size_t bytes[AVI_SLICE_PARTS_MAX];
        for (int r = 0; r < e->ranks->size; r++) bytes[r] = sizeof(int);
        if (e->ranks->allgather(e->ranks->ctx, &threads, all, bytes)) {
            free(sp);
            return NULL;
        }
        for (int r = 0; r < e->ranks->size; r++)
            if (all[r] < threads) threads = all[r];
        if (threads > AVI_SLICE_PARTS_MAX / e->ranks->size) threads = AVI_SLICE_PARTS_MAX / e->ranks->size;
        sp->tpr = threads;
        threads *= e->ranks->size;
    }
    sp->nparts = chaos ? 1 + (int)(chaos % 8) : threads < AVI_SLICE_PARTS_MAX ? threads : AVI_SLICE_PARTS_MAX;
    size_t npot = g->npotential;
    if (!(sp->part_of = calloc(npot + 1, 1)) || !(sp->seam_mask = calloc(npot + 1, sizeof *sp->seam_mask)) ||
        !(sp->part = calloc((size_t)sp->nparts, sizeof *sp->part)) || assign_parts(m, g, sp, chaos) ||
        mark_seam(m, g, sp) || group_lists(g, sp) || (e->ranks && dirty_lists(m, g, sp))) {
        struct avi_engine *me = (struct avi_engine *)e; /* avi_slice_free takes it from the engine */
        me->slice = sp;
        avi_slice_free(me);
        return NULL;
    }
    return sp;
}

int avi_slice_prepare(avi_engine *e)
{
    /* With ranks the cut is agreed at the first slice, which every rank
     * reaches (ranks may differ in threads, and so in their calls here). */
    if (!e->pool || e->ranks || e->slice || e->groups.ngroup == 0 || e->sync) return AVI_OK;
    if (!(e->slice = build_parts(e))) return -1;
    return AVI_OK;
}

typedef struct slice_job {
    avi_engine *e;
    struct avi_slice_par *sp;
    const avi_event *ev;
    size_t k;
    double t;
    int drifted; /* every entry a group whose records fit drift_all (engine.c): each part drifts its own first */
    double vcap2; /* the contact manager's speed cap squared; +inf without contact */
    size_t part0; /* with ranks: this rank's first part */
    double half[AVI_SLICE_ENTRIES_MAX];
} slice_job;

/* avi_kick on one record (the same arithmetic, so the same bits), its
 * gradient read from memory: gcc built avi_kick's lanes in such a loop
 * with a register form of vmovq that valgrind 3.19 does not decode. */
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

static inline void keep(slice_part *part, uint32_t id, uint32_t rec, double w, const double g[3])
{
    seam_kick *k = &part->kick[part->n++]; /* room reserved by avi_slice_run */
    k->g[0] = g[0];
    k->g[1] = g[1];
    k->g[2] = g[2];
    k->w = w;
    k->id = id;
    k->rec = rec;
}

/* One event of a part: drift the records only this part touches (a record
 * in the seam is at t already; with `drifted`, all are), gradient, kick
 * them, keep the seam's kicks. Returns the impulse's component sum (the
 * blow-up check); `kind` and `drifted` constants where inlined. */
static inline __attribute__((always_inline)) double member(const avi_model *m, const uint16_t *seam_mask,
                                                           slice_part *part, unsigned kind, int drifted, uint32_t id,
                                                           double t, double half, size_t pn, double vcap2)
{
    const int nv = avi_kind_vertices(kind); /* slots past nv: edge records (no speed check) */
    avi_vertex *V = m->vert;
    const void *rec = avi_kind_record(m, kind, id & AVI_ID_INDEX_MASK);
    const uint32_t *s = avi_kind_stencil(kind, rec);
    const int ns = avi_kind_slots(kind);
    const double w = half * avi_kind_dt(kind, rec);
    const unsigned mask = seam_mask[pn];
#ifdef __AVX2__
    if (avi_kind_has_lanes(kind)) {
        __m256d xv[AVI_STENCIL_MAX], gv[AVI_STENCIL_MAX], sum = _mm256_setzero_pd();
        const __m256d tt = _mm256_set1_pd(t), ww = _mm256_set1_pd(w);
        for (int c = 0; c < ns; c++)
            xv[c] = drifted || mask >> c & 1 ? _mm256_loadu_pd(V[s[c]].x) : avi_drift_record(&V[s[c]], tt);
        avi_kind_gradient_lanes(kind, rec, xv, gv);
        for (int c = 0; c < ns; c++) {
            if (mask >> c & 1) {
                double g[4];
                _mm256_storeu_pd(g, gv[c]);
                keep(part, id, s[c], w, g);
            } else {
                avi_kick_record(&V[s[c]], ww, gv[c]);
                if (c < nv && v3_dot(V[s[c]].v, V[s[c]].v) > vcap2) part->fast = 1; /* avi_check_speed's */
            }
            sum = _mm256_add_pd(sum, gv[c]);
        }
        return avi_lane_sum(sum);
    }
#endif
    double x[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
    for (int c = 0; c < ns; c++) {
        avi_vertex *p = &V[s[c]];
        if (!drifted && !(mask >> c & 1)) {
#ifdef __AVX2__
            (void)avi_drift_record(p, _mm256_set1_pd(t));
#else
            avi_drift_record(p, t);
#endif
        }
        x[c][0] = p->x[0];
        x[c][1] = p->x[1];
        x[c][2] = p->x[2];
    }
    avi_kind_gradient(kind, rec, (const double (*)[3])x, g);
    double sum = 0.0;
    for (int c = 0; c < ns; c++) {
        if (mask >> c & 1) {
            keep(part, id, s[c], w, g[c]);
        } else {
            kick_one(&V[s[c]], w, g[c]);
            if (c < nv && v3_dot(V[s[c]].v, V[s[c]].v) > vcap2) part->fast = 1;
        }
        sum += g[c][0] + g[c][1] + g[c][2];
    }
    return sum;
}

/* Past the L2 cache a load costs 50-100 ns: the record of the member
 * PREFETCH_RECORD ahead, the vertices of the one PREFETCH_VERTICES ahead
 * (its record has arrived), as the serial loop (engine.c). */
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

/* Part k's members of entry j (a group cursor or a single clock). */
static inline const uint32_t *entry_members(const avi_engine *e, const struct avi_slice_par *sp, const avi_event *x,
                                            size_t k, uint32_t *n)
{
    const avi_clock_groups *g = &e->groups;
    if (x->n & AVI_GROUP_CURSOR) {
        const uint32_t *ps = sp->pstart + (size_t)avi_group_of(g, x->id) * ((size_t)sp->nparts + 1);
        *n = ps[k + 1] - ps[k];
        return sp->pmem + ps[k];
    }
    *n = sp->part_of[potential_number(g, x->id)] == k;
    return &x->id;
}

/* Merges k lists of ids, each ascending (list[a], left[a] long), into ids,
 * with the list each came from in from: a binary heap of the lists' heads. */
static void merge(const uint32_t **list, uint32_t *left, size_t k, uint32_t *ids, uint8_t *from)
{
    uint8_t heap[AVI_SLICE_ENTRIES_MAX];
    size_t n = 0;
    for (size_t a = 0; a < k; a++) {
        if (!left[a]) continue;
        size_t c = n++; /* sift up */
        while (c > 0 && *list[heap[(c - 1) / 2]] > *list[a]) {
            heap[c] = heap[(c - 1) / 2];
            c = (c - 1) / 2;
        }
        heap[c] = (uint8_t)a;
    }
    size_t out = 0;
    while (n > 0) {
        uint8_t a = heap[0];
        ids[out] = *list[a]++;
        from[out++] = a;
        uint8_t x = --left[a] ? a : heap[--n];
        size_t c = 0; /* sift x down from the root */
        for (;;) {
            size_t l = 2 * c + 1;
            if (l >= n) break;
            if (l + 1 < n && *list[heap[l + 1]] < *list[heap[l]]) l++;
            if (*list[heap[l]] >= *list[x]) break;
            heap[c] = heap[l];
            c = l;
        }
        if (n > 0) heap[c] = x;
    }
}

/* Members p .. q-1 of a part's stream, all of `kind` (a constant, as is
 * `drifted`, where inlined). Returns their impulse sums' total. */
static inline __attribute__((always_inline)) double run_kind(const struct slice_job *j, slice_part *part, unsigned kind,
                                                             int drifted, const uint32_t *ids, const uint8_t *entry,
                                                             uint32_t p, uint32_t q, int prefetch)
{
    const avi_model *m = j->e->model;
    const avi_clock_groups *g = &j->e->groups;
    const uint16_t *mask = j->sp->seam_mask;
    const size_t offset = g->offset[kind];
    double total = 0.0;
    for (; p < q; p++) {
        if (prefetch) {
            if (p + PREFETCH_RECORD < q) prefetch_member(m, ids[p + PREFETCH_RECORD], 0);
            if (!drifted && p + PREFETCH_VERTICES < q) prefetch_member(m, ids[p + PREFETCH_VERTICES], 1);
        }
        uint32_t id = ids[p];
        total += member(m, mask, part, kind, drifted, id, j->t, j->half[entry ? entry[p] : 0],
                        offset + (id & AVI_ID_INDEX_MASK), j->vcap2);
    }
    return total;
}

/* Part k of the slice: its members in id order (a merge of its entries). */
static void run_part(void *ctx, size_t kb, size_t ke, int worker)
{
    (void)worker;
    const slice_job *j = ctx;
    const avi_engine *e = j->e;
    const avi_model *m = e->model;
    const struct avi_slice_par *sp = j->sp;
    const int prefetch = e->prefetch;
    for (size_t k = kb; k < ke; k++) {
        slice_part *part = &sp->part[k];
        const uint32_t *ids;
        const uint8_t *entry = NULL;
        uint32_t n;
        if (j->k == 1) {
            ids = entry_members(e, sp, &j->ev[0], k, &n);
        } else {
            const uint32_t *list[AVI_SLICE_ENTRIES_MAX];
            uint32_t left[AVI_SLICE_ENTRIES_MAX];
            n = 0;
            for (size_t a = 0; a < j->k; a++) {
                list[a] = entry_members(e, sp, &j->ev[a], k, &left[a]);
                n += left[a];
            }
            merge(list, left, j->k, part->ids, part->entry);
            ids = part->ids;
            entry = part->entry;
        }
        if (j->vcap2 < INFINITY) { /* with contact: its own records, to undo the slice */
            size_t u = 0;
            for (size_t a = 0; a < j->k; a++) {
                if (!(j->ev[a].n & AVI_GROUP_CURSOR)) continue;
                const uint32_t *vs = sp->vstart + (size_t)avi_group_of(&e->groups, j->ev[a].id) * (sp->nparts + 1);
                for (uint32_t r = vs[k]; r < vs[k + 1]; r++) part->undo[u++] = m->vert[sp->pvert[r]];
            }
        }
        if (j->drifted) /* the records of the part's own, as the serial tick's drift-all */
            for (size_t a = 0; a < j->k; a++) {
                if (!(j->ev[a].n & AVI_GROUP_CURSOR)) continue;
                const uint32_t *vs = sp->vstart + (size_t)avi_group_of(&e->groups, j->ev[a].id) * (sp->nparts + 1);
                avi_drift_all(m->vert, sp->pvert + vs[k], vs[k + 1] - vs[k], j->t);
            }
        double total = 0.0;
        for (uint32_t p = 0; p < n;) { /* runs of one kind (ids sort by kind) */
            unsigned kind = ids[p] >> AVI_ID_KIND_SHIFT;
            uint32_t q = p + 1;
            while (q < n && ids[q] >> AVI_ID_KIND_SHIFT == kind) q++;
            switch (kind) { /* one straight path per kind */
#define RUN(K, ...)                                                                             \
    case K:                                                                                     \
        total += j->drifted ? run_kind(j, part, K, 1, ids, entry, p, q, prefetch)               \
                            : run_kind(j, part, K, 0, ids, entry, p, q, prefetch);              \
        break;
                AVI_POTENTIAL_KINDS(RUN)
#undef RUN
            default: total = NAN; break;
            }
            part->counts[kind] += q - p;
            p = q;
        }
        part->finite = isfinite(total);
        /* The kept kicks by seam owner, each owner's in id order. */
        size_t *os = part->ostart;
        memset(os, 0, (sp->nparts + 1) * sizeof *os);
        for (size_t a = 0; a < part->n; a++) os[sp->seam_owner[part->kick[a].rec] + 1]++;
        for (int o = 0; o < sp->nparts; o++) os[o + 1] += os[o];
        size_t at[AVI_SLICE_PARTS_MAX];
        memcpy(at, os, sp->nparts * sizeof *at);
        for (size_t a = 0; a < part->n; a++) part->by_owner[at[sp->seam_owner[part->kick[a].rec]]++] = part->kick[a];
    }
}

/* Seam owner o: the kept kicks on its seam records in member id order, a
 * merge of the parts' lists (each in id order). Records of different
 * owners are disjoint, so the owners run side by side. */
static void apply_seam(void *ctx, size_t ob, size_t oe, int worker)
{
    (void)worker;
    const slice_job *j = ctx;
    const struct avi_slice_par *sp = j->sp;
    avi_vertex *V = j->e->model->vert;
    const size_t P = (size_t)sp->nparts;
    for (size_t o = ob; o < oe; o++) {
        size_t at[AVI_SLICE_PARTS_MAX], end[AVI_SLICE_PARTS_MAX];
        for (size_t p = 0; p < P; p++) {
            at[p] = sp->part[p].ostart[o];
            end[p] = sp->part[p].ostart[o + 1];
        }
        for (;;) {
            size_t best = SIZE_MAX;
            uint32_t id = UINT32_MAX;
            for (size_t p = 0; p < P; p++)
                if (at[p] < end[p] && (best == SIZE_MAX || sp->part[p].by_owner[at[p]].id < id)) {
                    best = p;
                    id = sp->part[p].by_owner[at[p]].id;
                }
            if (best == SIZE_MAX) break;
            const seam_kick *k = sp->part[best].by_owner;
            for (; at[best] < end[best] && k[at[best]].id == id; at[best]++) {
                uint32_t r = k[at[best]].rec;
                kick_one(&V[r], k[at[best]].w, k[at[best]].g);
                if (r < j->e->model->nv && v3_dot(V[r].v, V[r].v) > j->vcap2) sp->part[o].fast = 1;
            }
        }
    }
}

/* A slice whose impulse sums were not all finite: the first event, in the
 * serial order, whose own sum is not (none: only a part's total
 * overflowed); the events after it do not count, as in the serial loop. */
__attribute__((cold, noinline)) static int slice_blow_up(avi_engine *e, const avi_event *ev, size_t k,
                                                         uint64_t *counts, uint32_t *blown)
{
    const avi_model *m = e->model;
    const avi_clock_groups *g = &e->groups;
    const uint32_t *list[AVI_SLICE_ENTRIES_MAX];
    uint32_t left[AVI_SLICE_ENTRIES_MAX];
    for (size_t a = 0; a < k; a++) {
        if (ev[a].n & AVI_GROUP_CURSOR) {
            const avi_clock_group *gr = &g->group[avi_group_of(g, ev[a].id)];
            list[a] = g->member + gr->first;
            left[a] = gr->count;
        } else {
            list[a] = &ev[a].id;
            left[a] = 1;
        }
    }
    uint64_t seen[AVI_KIND_COUNT] = {0};
    for (;;) {
        size_t best = SIZE_MAX;
        for (size_t a = 0; a < k; a++)
            if (left[a] && (best == SIZE_MAX || *list[a] < *list[best])) best = a;
        if (best == SIZE_MAX) break;
        uint32_t id = *list[best]++;
        left[best]--;
        unsigned kind = id >> AVI_ID_KIND_SHIFT;
        uint32_t i = id & AVI_ID_INDEX_MASK;
        seen[kind]++;
        const uint32_t *s;
        int ns = avi_model_stencil(m, (avi_kind)kind, i, &s);
        double x[AVI_STENCIL_MAX][3], gr[AVI_STENCIL_MAX][3], sum = 0.0;
        avi_gather(m->vert, s, ns, x);
        avi_kind_gradient(kind, avi_kind_record(m, kind, i), (const double (*)[3])x, gr);
        for (int c = 0; c < ns; c++) sum += gr[c][0] + gr[c][1] + gr[c][2];
        if (!isfinite(sum)) {
            for (int c = 0; c < AVI_KIND_COUNT; c++) counts[c] += seen[c];
            *blown = id;
            return AVI_SLICE_BLOW_UP;
        }
    }
    for (int c = 0; c < AVI_KIND_COUNT; c++) counts[c] += seen[c];
    return 0;
}

/* Parts pb .. pe-1's own records and the caller's copies back as they
 * were before the slice, for the serial loop (contact). */
static int undo_slice(const slice_job *j, size_t pb, size_t pe)
{
    struct avi_slice_par *sp = j->sp;
    avi_vertex *V = j->e->model->vert;
    const size_t P = (size_t)sp->nparts;
    for (size_t p = pb; p < pe; p++) {
        size_t u = 0;
        for (size_t a = 0; a < j->k; a++) {
            if (!(j->ev[a].n & AVI_GROUP_CURSOR)) continue;
            const uint32_t *vs = sp->vstart + (size_t)avi_group_of(&j->e->groups, j->ev[a].id) * (P + 1);
            for (uint32_t r = vs[p]; r < vs[p + 1]; r++) V[sp->pvert[r]] = sp->part[p].undo[u++];
        }
    }
    for (size_t b = sp->undo_n; b-- > 0;) V[sp->undo_rec[b]] = sp->undo[b];
    sp->undone++;
    return AVI_SLICE_UNDONE;
}

/* What member q of the ranks sends after a slice: its part's counts and
 * flags, its own records (its part's lists of the groups' records, then
 * the single clocks' slots outside the seam) and its kept kicks. Every
 * member knows every size. */
typedef struct {
    uint64_t counts[AVI_KIND_COUNT];
    int32_t finite, fast;
} ranks_head;

/* Record r onto part q's dirty list, once between syncs. 0, or -1 when
 * out of memory. */
static inline int dirty_add(struct avi_slice_par *sp, size_t q, uint32_t r)
{
    if (sp->stamp[r] == sp->epoch) return 0;
    if (AVI_GROW(sp->dirty[q], sp->dirty_cap[q], sp->ndirty[q] + 1, 1024)) return -1;
    sp->stamp[r] = sp->epoch;
    sp->dirty[q][sp->ndirty[q]++] = r;
    return 0;
}

/* Part q's own records of the slice (its parts of the groups' record
 * lists, then the single clocks' slots outside the seam) onto its dirty
 * list; q == nparts: the slice's seam records, each onto its seam owner's
 * list (a rank that holds it). Every member computes the same lists. 0, or
 * -1 when out of memory. */
static int mark_dirty(const slice_job *j, size_t q)
{
    struct avi_slice_par *sp = j->sp;
    const avi_clock_groups *g = &j->e->groups;
    const size_t P = (size_t)sp->nparts;
    for (size_t a = 0; a < j->k; a++) {
        const avi_event *x = &j->ev[a];
        if (x->n & AVI_GROUP_CURSOR) {
            uint32_t gi = avi_group_of(g, x->id);
            if (q == P) {
                for (uint32_t r = sp->seam_start[gi]; r < sp->seam_start[gi + 1]; r++)
                    if (dirty_add(sp, sp->seam_owner[sp->seam[r]], sp->seam[r])) return -1;
                continue;
            }
            const uint32_t *vs = sp->vstart + (size_t)gi * (P + 1);
            for (uint32_t r = vs[q]; r < vs[q + 1]; r++)
                if (dirty_add(sp, q, sp->pvert[r])) return -1;
        } else if (q == P || sp->part_of[potential_number(g, x->id)] == q) {
            unsigned mask = sp->seam_mask[potential_number(g, x->id)];
            const uint32_t *st;
            int ns = avi_model_stencil(j->e->model, (avi_kind)(x->id >> AVI_ID_KIND_SHIFT), x->id & AVI_ID_INDEX_MASK, &st);
            for (int c = 0; c < ns; c++)
                if ((q == P) == (mask >> c & 1) && dirty_add(sp, q == P ? sp->seam_owner[st[c]] : q, st[c])) return -1;
        }
    }
    return 0;
}

/* The exchange's buffer: room for n bytes, NULL when out of memory. */
static char *exchange_buffer(struct avi_slice_par *sp, size_t n)
{
    if (n > sp->xcap) {
        char *b = realloc(sp->xbuf, n);
        if (!b) return NULL;
        sp->xbuf = b;
        sp->xcap = n;
    }
    return sp->xbuf;
}

static size_t align8(size_t n) { return (n + 7) & ~(size_t)7; }

/* Parts part0 + [kb, ke) of the slice: this rank's, on its pool. */
static void run_rank_parts(void *ctx, size_t kb, size_t ke, int worker)
{
    const slice_job *j = ctx;
    run_part(ctx, j->part0 + kb, j->part0 + ke, worker);
}

/* A slice on ranks: this member's parts (one a thread); an exchange of
 * every part's counts, flags and, by rank, how many kept kicks it sends
 * there; then each kept kick goes to the ranks that hold its record (a
 * part of theirs touches it), and every rank applies the kicks on the seam
 * records it holds in member id order, as the serial loop would. A part's
 * own records change only on its rank, and a seam record only on its
 * holders: both join a dirty list (the seam's its seam owner's), and the
 * other ranks take them at the next sync (avi_slice_sync) or fetch. With
 * contact, a kick past the speed cap anywhere (the flags, then the seam's
 * kicks, agreed) undoes the slice on every member. */
static int ranks_slice(slice_job *j, uint64_t *counts, uint32_t *blown)
{
    avi_engine *e = j->e;
    struct avi_slice_par *sp = j->sp;
    const size_t P = (size_t)sp->nparts, R = (size_t)e->ranks->size, T = (size_t)sp->tpr;
    const size_t me = (size_t)e->ranks->rank, p0 = me * T;
    avi_vertex *V = e->model->vert;
    j->part0 = p0;
    avi_pool_for(e->pool, T, 1, run_rank_parts, j);
    /* Heads: counts, flags and kicks sent to each rank, by part. */
    static _Thread_local uint32_t sends[AVI_SLICE_PARTS_MAX][AVI_SLICE_PARTS_MAX]; /* part, rank */
    const size_t head = align8(sizeof(ranks_head) + R * sizeof(uint32_t));
    size_t hb[AVI_SLICE_PARTS_MAX];
    for (size_t r = 0; r < R; r++) hb[r] = T * head;
    char *hbuf = exchange_buffer(sp, (P + T) * head);
    if (!hbuf) return -1;
    for (size_t q = p0; q < p0 + T; q++) {
        const slice_part *part = &sp->part[q];
        char *h = hbuf + P * head + (q - p0) * head;
        ranks_head rh = {{0}, part->finite, part->fast};
        memcpy(rh.counts, part->counts, sizeof rh.counts);
        uint32_t to[AVI_SLICE_PARTS_MAX] = {0};
        for (size_t a = 0; a < part->n; a++) {
            uint64_t hold = sp->holders[part->kick[a].rec] & ~(1ull << me);
            for (; hold; hold &= hold - 1) to[__builtin_ctzll(hold)]++;
        }
        memcpy(h, &rh, sizeof rh);
        memcpy(h + sizeof rh, to, R * sizeof *to);
    }
    if (e->ranks->allgather(e->ranks->ctx, hbuf + P * head, hbuf, hb)) return -2;
    int finite = 1, fast = 0;
    uint64_t sum[AVI_KIND_COUNT] = {0}, busiest = 0, kept = 0;
    for (size_t q = 0; q < P; q++) {
        ranks_head hq;
        memcpy(&hq, hbuf + q * head, sizeof hq);
        memcpy(sends[q], hbuf + q * head + sizeof hq, R * sizeof(uint32_t));
        finite &= hq.finite != 0;
        fast |= hq.fast != 0;
        uint64_t np = 0;
        for (int c = 0; c < AVI_KIND_COUNT; c++) {
            sum[c] += hq.counts[c];
            np += hq.counts[c];
        }
        if (np > busiest) busiest = np;
    }
    if (j->vcap2 < INFINITY && (fast || !finite)) return undo_slice(j, p0, p0 + T);
    /* The kicks to their holders: blocks by rank, then by part, in list order. */
    size_t sb[AVI_SLICE_PARTS_MAX] = {0}, rb[AVI_SLICE_PARTS_MAX] = {0}, sent = 0, got = 0;
    for (size_t r = 0; r < R; r++)
        for (size_t t = 0; t < T; t++) {
            sb[r] += sends[p0 + t][r] * sizeof(seam_kick);
            rb[r] += r == me ? 0 : sends[r * T + t][me] * sizeof(seam_kick);
        }
    for (size_t r = 0; r < R; r++) {
        sent += sb[r];
        got += rb[r];
    }
    char *kbuf = exchange_buffer(sp, sent + got);
    if (!kbuf) return -1;
    seam_kick *out = (seam_kick *)kbuf;
    size_t at[AVI_SLICE_PARTS_MAX][AVI_SLICE_PARTS_MAX]; /* rank, my part t: next slot */
    for (size_t r = 0, o = 0; r < R; r++)
        for (size_t t = 0; t < T; t++) {
            at[r][t] = o;
            o += sends[p0 + t][r];
        }
    for (size_t t = 0; t < T; t++) {
        const slice_part *part = &sp->part[p0 + t];
        for (size_t a = 0; a < part->n; a++) {
            uint64_t hold = sp->holders[part->kick[a].rec] & ~(1ull << me);
            for (; hold; hold &= hold - 1) out[at[__builtin_ctzll(hold)][t]++] = part->kick[a];
        }
    }
    if (e->ranks->alltoallv(e->ranks->ctx, kbuf, sb, kbuf + sent, rb)) return -2;
    /* Every part's list of kicks on records this rank holds, merged in id order. */
    const seam_kick *list[AVI_SLICE_PARTS_MAX];
    size_t pos[AVI_SLICE_PARTS_MAX] = {0}, len[AVI_SLICE_PARTS_MAX];
    const seam_kick *in = (const seam_kick *)(kbuf + sent);
    for (size_t q = 0; q < P; q++) {
        if (q / T == me) {
            list[q] = sp->part[q].kick;
            len[q] = sp->part[q].n;
        } else {
            list[q] = in;
            len[q] = sends[q][me];
            in += len[q];
        }
        kept += sp->part[q].kept;
    }
    int fast_here = 0;
    for (;;) {
        size_t best = SIZE_MAX;
        uint32_t id = UINT32_MAX;
        for (size_t q = 0; q < P; q++)
            if (pos[q] < len[q] && (best == SIZE_MAX || list[q][pos[q]].id < id)) {
                best = q;
                id = list[q][pos[q]].id;
            }
        if (best == SIZE_MAX) break;
        for (; pos[best] < len[best] && list[best][pos[best]].id == id; pos[best]++) {
            const seam_kick *sk = &list[best][pos[best]];
            kick_one(&V[sk->rec], sk->w, sk->g);
            if (sk->rec < e->model->nv && v3_dot(V[sk->rec].v, V[sk->rec].v) > j->vcap2) fast_here = 1;
        }
    }
    if (j->vcap2 < INFINITY) { /* the seam's records are in the copies */
        int f = e->ranks->any(e->ranks->ctx, fast_here);
        if (f < 0) return -2;
        if (f) return undo_slice(j, p0, p0 + T);
    }
    if (R > 1) {
        for (size_t q = 0; q <= P; q++)
            if (mark_dirty(j, q)) return -1;
        sp->stale = 1;
    }
    if (!finite) {
        int rc = avi_slice_sync(e); /* the check reads every record */
        return rc ? rc : slice_blow_up(e, j->ev, j->k, counts, blown);
    }
    uint64_t n = 0;
    for (int c = 0; c < AVI_KIND_COUNT; c++) {
        counts[c] += sum[c];
        n += sum[c];
    }
    sp->kept += kept;
    sp->slices++;
    sp->events += n;
    sp->busiest += busiest;
    return 0;
}

/* With ranks: the rank that sends record r at a sync or fetch, its
 * part's, or for a seam record its seam owner's (one that holds it). */
static inline size_t source_rank(const struct avi_slice_par *sp, uint32_t r)
{
    return (size_t)(sp->owner[r] == SEAM ? sp->seam_owner[r] : sp->owner[r]) / (size_t)sp->tpr;
}

int avi_slice_sync(avi_engine *e)
{
    struct avi_slice_par *sp = e->slice;
    if (!sp || !sp->stale) return 0;
    const size_t P = (size_t)sp->nparts, T = (size_t)sp->tpr, me = (size_t)e->ranks->rank;
    avi_vertex *V = e->model->vert;
    size_t rbytes[AVI_SLICE_PARTS_MAX] = {0}, total = 0;
    for (size_t q = 0; q < P; q++) {
        rbytes[q / T] += sp->ndirty[q] * sizeof(avi_vertex);
        total += sp->ndirty[q] * sizeof(avi_vertex);
    }
    char *recv = exchange_buffer(sp, total + rbytes[me]), *send = recv + total;
    if (!recv) return -1;
    for (size_t q = me * T; q < me * T + T; q++)
        for (size_t a = 0; a < sp->ndirty[q]; a++, send += sizeof(avi_vertex)) memcpy(send, &V[sp->dirty[q][a]], sizeof(avi_vertex));
    if (e->ranks->allgather(e->ranks->ctx, recv + total, recv, rbytes)) return -2;
    const char *at = recv;
    for (size_t q = 0; q < P; q++) {
        if (q / T != me)
            for (size_t a = 0; a < sp->ndirty[q]; a++) memcpy(&V[sp->dirty[q][a]], at + a * sizeof(avi_vertex), sizeof(avi_vertex));
        at += sp->ndirty[q] * sizeof(avi_vertex);
        sp->ndirty[q] = 0;
    }
    if (++sp->epoch == 0) { /* stamps wrapped: none may look current */
        memset(sp->stamp, 0, avi_model_record_count(e->model) * sizeof *sp->stamp);
        sp->epoch = 1;
    }
    sp->stale = 0;
    return 0;
}

int avi_slice_fetch(avi_engine *e, const uint32_t *rec, size_t n)
{
    struct avi_slice_par *sp = e->slice;
    if (!sp || !sp->stale) return 0;
    const size_t R = (size_t)e->ranks->size, me = (size_t)e->ranks->rank;
    avi_vertex *V = e->model->vert;
    /* Rank by rank, each sends its parts' dirty records among rec, in rec order. */
    size_t rbytes[AVI_SLICE_PARTS_MAX] = {0}, total = 0;
    for (size_t a = 0; a < n; a++)
        if (sp->stamp[rec[a]] == sp->epoch) rbytes[source_rank(sp, rec[a])] += sizeof(avi_vertex);
    for (size_t r = 0; r < R; r++) total += rbytes[r];
    if (total == 0) return 0;
    char *recv = exchange_buffer(sp, total + rbytes[me]), *send = recv + total;
    if (!recv) return -1;
    size_t at[AVI_SLICE_PARTS_MAX], off = 0;
    for (size_t r = 0; r < R; r++) {
        at[r] = off;
        off += rbytes[r];
    }
    for (size_t a = 0, k = 0; a < n; a++)
        if (sp->stamp[rec[a]] == sp->epoch && source_rank(sp, rec[a]) == me)
            memcpy(send + k++ * sizeof(avi_vertex), &V[rec[a]], sizeof(avi_vertex));
    if (e->ranks->allgather(e->ranks->ctx, send, recv, rbytes)) return -2;
    /* Current on every member now: unstamped, so that no later event
     * fetches them again (a later slice lists them again; a record listed
     * twice is only sent twice). */
    for (size_t a = 0; a < n; a++) {
        uint32_t r = rec[a];
        if (sp->stamp[r] != sp->epoch) continue;
        size_t q = source_rank(sp, r);
        if (q != me) memcpy(&V[r], recv + at[q], sizeof(avi_vertex));
        at[q] += sizeof(avi_vertex);
        sp->stamp[r] = 0;
    }
    return 0;
}


int avi_slice_run(avi_engine *e, const avi_event *ev, size_t k, double t, uint64_t *counts, uint32_t *blown)
{
    if (!e->slice && !(e->slice = build_parts(e))) return -1;
    struct avi_slice_par *sp = e->slice;
    const avi_model *m = e->model;
    const avi_clock_groups *g = &e->groups;
    const size_t P = (size_t)sp->nparts;
    avi_contact_clock *cm = contact_clock(e);
    slice_job j = {e, sp, ev, k, t, 1, cm ? cm->vcap2 : INFINITY, 0, {0}};
    /* Room for every part's merged members and kept kicks, before anything
     * changes: the parts cannot fail. */
    for (size_t p = 0; p < P; p++) {
        slice_part *part = &sp->part[p];
        size_t n = 0, kept = 0;
        for (size_t a = 0; a < k; a++) {
            uint32_t c;
            entry_members(e, sp, &ev[a], p, &c);
            n += c;
            if (ev[a].n & AVI_GROUP_CURSOR) kept += sp->pkept[(size_t)avi_group_of(g, ev[a].id) * P + p];
            else if (c) kept += (size_t)__builtin_popcount(sp->seam_mask[potential_number(g, ev[a].id)]);
        }
        if (k > 1 && n > part->ids_cap) {
            uint32_t *ids = realloc(part->ids, n * sizeof *ids);
            if (ids) part->ids = ids;
            uint8_t *en = realloc(part->entry, n);
            if (en) part->entry = en;
            if (!ids || !en) return -1;
            part->ids_cap = n;
        }
        if (kept > part->cap) {
            seam_kick *kk = realloc(part->kick, kept * sizeof *kk);
            if (kk) part->kick = kk;
            seam_kick *ko = realloc(part->by_owner, kept * sizeof *ko);
            if (ko) part->by_owner = ko;
            if (!kk || !ko) return -1;
            part->cap = kept;
        }
        if (cm) {
            size_t own = 0;
            for (size_t a = 0; a < k; a++)
                if (ev[a].n & AVI_GROUP_CURSOR) {
                    const uint32_t *vs = sp->vstart + (size_t)avi_group_of(g, ev[a].id) * (P + 1);
                    own += vs[p + 1] - vs[p];
                }
            if (own > part->undo_cap) {
                avi_vertex *u = realloc(part->undo, own * sizeof *u);
                if (!u) return -1;
                part->undo = u;
                part->undo_cap = own;
            }
        }
        part->n = 0;
        part->kept = kept;
        part->fast = 0;
        memset(part->counts, 0, sizeof part->counts);
    }
    /* With contact, the seam's records and the single clocks' as they were:
     * a kick past the speed cap makes the serial loop run the slice, which
     * stops at that event for the manager (engine.c). */
    sp->undo_n = 0;
    if (cm) {
        size_t need = 0;
        for (size_t a = 0; a < k; a++) {
            if (ev[a].n & AVI_GROUP_CURSOR) {
                uint32_t gi = avi_group_of(g, ev[a].id);
                need += sp->seam_start[gi + 1] - sp->seam_start[gi];
            } else {
                need += (size_t)avi_kind_slots(ev[a].id >> AVI_ID_KIND_SHIFT);
            }
        }
        if (need > sp->undo_cap) {
            avi_vertex *u = realloc(sp->undo, need * sizeof *u);
            if (u) sp->undo = u;
            uint32_t *ur = realloc(sp->undo_rec, need * sizeof *ur);
            if (ur) sp->undo_rec = ur;
            if (!u || !ur) return -1;
            sp->undo_cap = need;
        }
        for (size_t a = 0; a < k; a++) {
            const uint32_t *list, *s;
            size_t n;
            if (ev[a].n & AVI_GROUP_CURSOR) {
                uint32_t gi = avi_group_of(g, ev[a].id);
                list = sp->seam + sp->seam_start[gi];
                n = sp->seam_start[gi + 1] - sp->seam_start[gi];
            } else {
                n = (size_t)avi_model_stencil(m, (avi_kind)(ev[a].id >> AVI_ID_KIND_SHIFT), ev[a].id & AVI_ID_INDEX_MASK, &s);
                list = s;
            }
            for (size_t b = 0; b < n; b++) {
                sp->undo_rec[sp->undo_n] = list[b];
                sp->undo[sp->undo_n++] = m->vert[list[b]];
            }
        }
    }
    /* The seam's records to t, as the first event on each would drift them. */
    avi_vertex *V = m->vert;
#ifdef __AVX2__
    const __m256d tt = _mm256_set1_pd(t);
#define DRIFT(r) (void)avi_drift_record(&V[r], tt)
#else
#define DRIFT(r) avi_drift_record(&V[r], t)
#endif
    for (size_t a = 0; a < k; a++) {
        uint32_t step = ev[a].n & ~AVI_GROUP_CURSOR;
        j.half[a] = step == 0 ? 0.5 : 1.0; /* first event of a clock: half impulse */
        if (ev[a].n & AVI_GROUP_CURSOR) {
            uint32_t gi = avi_group_of(g, ev[a].id);
            if (g->group[gi].vcount > e->drift_all_max) j.drifted = 0;
            for (uint32_t r = sp->seam_start[gi]; r < sp->seam_start[gi + 1]; r++) DRIFT(sp->seam[r]);
        } else {
            j.drifted = 0;
            unsigned mask = sp->seam_mask[potential_number(g, ev[a].id)];
            const uint32_t *s;
            int ns = avi_model_stencil(m, (avi_kind)(ev[a].id >> AVI_ID_KIND_SHIFT), ev[a].id & AVI_ID_INDEX_MASK, &s);
            for (int c = 0; c < ns; c++)
                if (mask >> c & 1) DRIFT(s[c]);
        }
    }
#undef DRIFT
    if (e->ranks) return ranks_slice(&j, counts, blown);
    avi_pool_for(e->pool, P, 1, run_part, &j);
    if (P > 1) avi_pool_for(e->pool, P, 1, apply_seam, &j);
    int finite = 1, fast = 0;
    for (size_t p = 0; p < P; p++) {
        finite &= sp->part[p].finite;
        fast |= sp->part[p].fast;
    }
    if (cm && (fast || !finite)) return undo_slice(&j, 0, P);
    if (!finite) return slice_blow_up(e, ev, k, counts, blown);
    uint64_t n = 0, busiest = 0;
    for (size_t p = 0; p < P; p++) {
        sp->kept += sp->part[p].n;
        uint64_t np = 0;
        for (int c = 0; c < AVI_KIND_COUNT; c++) {
            counts[c] += sp->part[p].counts[c];
            np += sp->part[p].counts[c];
        }
        n += np;
        if (np > busiest) busiest = np;
    }
    sp->slices++;
    sp->events += n;
    sp->busiest += busiest;
    return 0;
}
