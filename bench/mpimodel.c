/* A latency-bandwidth model of avi on N MPI ranks (issue 31, "Scaling"):
 * what bench/pmodel is for threads, for a distributed run. bench/README.md,
 * "MPI scaling model", has the method and its tables.
 *
 *   build/bench/mpimodel bar [--tets N] [--ranks P,...]            strong scaling
 *   build/bench/mpimodel bar --per-rank N [--cap C] [--ranks P,...] weak scaling
 *   build/bench/mpimodel sphere-plate [--end T] [--set KEY=VALUE]... [--ranks P,...]
 *   build/bench/mpimodel bar --tets N --verify                      self-check
 *   common: [--steps S] [--alpha-us A] [--beta-gbs B] [--rows R] [--event-ns C]
 *
 * Partition: METIS k-way on the graph of the free vertices (an edge
 * between two vertices of one stencil), each vertex weighted by the events
 * of the potentials it owns, so that METIS balances events, not vertices.
 * A potential belongs to the rank of its first free vertex; its other
 * vertices owned elsewhere are that rank's ghosts.
 *
 * Trace: the elastic clocks (events at n dt, n = 0, 1, ..., while n dt is
 * before the end, as the engine keys them) up to an end of S steps of the
 * mean potential; contact events are not modelled (the README says what
 * that leaves out). Windows: lookahead L = the smallest step, window k =
 * [k L, (k + 1) L), so each potential has at most one event per window.
 * Per window and rank: its events; the ghosts it reads (one state
 * message per owner rank: x, v, t of each ghost, 56 bytes); the kicks it
 * sends back (one message per owner rank: 3 doubles + the event key, 36
 * bytes per event and ghost vertex, so the owner applies them in serial
 * order).
 *
 * Time at P ranks: sum over windows of [max_r events_r * c
 *   + alpha * max_r messages_r + beta * max_r bytes_r]
 *   + rows * 2 alpha ceil(log2 P) (a tree reduction per output row),
 * messages and bytes counting both sent and received (no overlap).
 * "ordered" adds alpha per cross-rank hop: an event that reads a vertex
 * another rank updated earlier in the same window (serial order, strict
 * rule) waits for that message; the longest such chain of each window. c is
 * the serial engine's measured CPU time per event on the same mesh
 * (or --event-ns). Weak
 * scaling beyond --cap tets partitions a mesh of --cap tets into P parts
 * and scales each rank's events by s = per-rank / (cap / P) and its bytes
 * by s^(2/3) (surface over volume); messages and hops are not scaled.
 * --verify: a 2, 3 and 7 rank split of the given bar, every count against
 * a brute-force recount and the engine's event count, with a negative
 * control (one ghost dropped must be caught); exit 1 on a mismatch. JSON lines on
 * stdout. The model reads the mesh and times nothing but the serial run. */
#include "avi/avi.h"
#include "avi/mesh.h"
#include "bar_model.h"
#include "bench_util.h"
#include "core/engine_internal.h"
#include "core/kinds.h"

#include <math.h>
#include <metis.h>
#include <stdlib.h>
#include <string.h>

#define STATE_BYTES 56.0 /* x[3], v[3], t */
#define KICK_BYTES 36.0  /* dp[3], event time, event id */
#define MAXR 16

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "mpimodel: out of memory\n");
        exit(1);
    }
    return p;
}

static void *xcalloc(size_t n, size_t s)
{
    void *p = calloc(n ? n : 1, s);
    if (!p) {
        fprintf(stderr, "mpimodel: out of memory\n");
        exit(1);
    }
    return p;
}

/* Flat table of the model's unpinned potentials: free vertices only. */
typedef struct {
    size_t npot, nv;
    uint32_t *first, *verts; /* verts[first[p] .. first[p + 1]) */
    double *dt;
    double dt_min, t_end;
    uint32_t *nev; /* events of each potential before t_end */
    uint64_t events;
} table;

static void table_of(const avi_model *m, table *t)
{
    size_t np = 0, nvs = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t c = avi_model_potential_count(m, (avi_kind)k);
        for (size_t i = 0; i < c; i++) {
            if (k == AVI_KIND_CONTACT || avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            np++;
            nvs += (size_t)avi_kind_slots((avi_kind)k);
        }
    }
    t->first = xmalloc((np + 1) * sizeof *t->first);
    t->verts = xmalloc(nvs * sizeof *t->verts);
    t->dt = xmalloc(np * sizeof *t->dt);
    t->nev = xmalloc(np * sizeof *t->nev);
    size_t p = 0, f = 0;
    t->dt_min = INFINITY;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t c = avi_model_potential_count(m, (avi_kind)k);
        for (size_t i = 0; i < c; i++) {
            if (k == AVI_KIND_CONTACT || avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            const uint32_t *v;
            int n = avi_model_stencil(m, (avi_kind)k, i, &v);
            t->first[p] = (uint32_t)f;
            for (int a = 0; a < n; a++)
                if (m->vert[v[a]].inv_mass != 0.0) t->verts[f++] = v[a];
            t->dt[p] = avi_model_time_step(m, (avi_kind)k, i);
            if (t->dt[p] < t->dt_min) t->dt_min = t->dt[p];
            p++;
        }
    }
    t->first[p] = (uint32_t)f;
    t->npot = p;
    t->nv = avi_model_record_count(m);
}

/* The engine's event times n dt (n = 0, 1, ...) before t_end. */
static void count_events(table *t, double t_end)
{
    t->t_end = t_end;
    t->events = 0;
    for (size_t p = 0; p < t->npot; p++) {
        uint32_t n = 0;
        while ((double)n * t->dt[p] < t_end) n++;
        t->nev[p] = n;
        t->events += n;
    }
}

static void table_free(table *t)
{
    free(t->first);
    free(t->verts);
    free(t->dt);
    free(t->nev);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* METIS k-way partition of the free vertices; owner[v] = rank, or -1 for
 * a pinned vertex (no state to exchange). Returns the edge cut. */
static long partition(const avi_model *m, const table *t, int P, int *owner)
{
    size_t nv = t->nv;
    idx_t *id = xmalloc(nv * sizeof *id);
    idx_t n = 0;
    for (size_t v = 0; v < nv; v++) id[v] = m->vert[v].inv_mass != 0.0 ? n++ : -1; /* aux DOFs too */
    /* adjacency as sorted unique (a, b) pairs of one stencil, both ways */
    size_t npair = 0;
    for (size_t p = 0; p < t->npot; p++) {
        size_t k = t->first[p + 1] - t->first[p];
        npair += k * (k - 1);
    }
    uint64_t *pr = xmalloc(npair * sizeof *pr);
    idx_t *w = xcalloc((size_t)n, sizeof *w);
    size_t q = 0;
    for (size_t p = 0; p < t->npot; p++) {
        const uint32_t *s = t->verts + t->first[p];
        size_t k = t->first[p + 1] - t->first[p];
        if (k) w[id[s[0]]] += (idx_t)t->nev[p];
        for (size_t a = 0; a < k; a++)
            for (size_t b = 0; b < k; b++)
                if (a != b) pr[q++] = (uint64_t)id[s[a]] << 32 | (uint32_t)id[s[b]];
    }
    qsort(pr, npair, sizeof *pr, cmp_u64);
    idx_t *xadj = xcalloc((size_t)n + 1, sizeof *xadj), *adj = xmalloc(npair * sizeof *adj);
    size_t na = 0;
    for (size_t i = 0; i < npair; i++) {
        if (i && pr[i] == pr[i - 1]) continue;
        xadj[(pr[i] >> 32) + 1]++;
        adj[na++] = (idx_t)(uint32_t)pr[i];
    }
    for (idx_t i = 0; i < n; i++) xadj[i + 1] += xadj[i];
    idx_t *part = xcalloc((size_t)n, sizeof *part);
    idx_t cut = 0;
    if (P > 1) {
        idx_t ncon = 1, np = P, options[METIS_NOPTIONS];
        METIS_SetDefaultOptions(options);
        options[METIS_OPTION_SEED] = 1; /* the same partition on every run */
        options[METIS_OPTION_NUMBERING] = 0;
        int rc = METIS_PartGraphKway(&n, &ncon, xadj, adj, w, NULL, NULL, &np, NULL, NULL, options, &cut, part);
        if (rc != METIS_OK) {
            fprintf(stderr, "mpimodel: METIS_PartGraphKway failed (%d) at %d ranks\n", rc, P);
            exit(1);
        }
    }
    for (size_t v = 0; v < nv; v++) owner[v] = id[v] < 0 ? -1 : (int)part[id[v]];
    free(id);
    free(pr);
    free(w);
    free(xadj);
    free(adj);
    free(part);
    return (long)cut;
}

static int prank(const table *t, const int *owner, size_t p)
{
    return t->first[p + 1] > t->first[p] ? owner[t->verts[t->first[p]]] : 0;
}

/* Ghost slots: one per distinct (rank, vertex owned elsewhere) pair that a
 * rank's potentials touch; gs[] lists each potential's slots in stencil
 * order (first[] as the table's, -1 where the vertex is the rank's own). */
typedef struct {
    size_t n;
    int *holder, *own; /* per slot */
    int32_t *gs;       /* per stencil entry */
} ghosts;

static void ghosts_of(const table *t, const int *owner, ghosts *g)
{
    size_t ne = t->first[t->npot];
    uint64_t *key = xmalloc(ne * sizeof *key);
    size_t nk = 0;
    g->gs = xmalloc(ne * sizeof *g->gs);
    for (size_t p = 0; p < t->npot; p++) {
        int r = prank(t, owner, p);
        for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++)
            if (owner[t->verts[e]] != r) key[nk++] = (uint64_t)r << 32 | t->verts[e];
    }
    qsort(key, nk, sizeof *key, cmp_u64);
    size_t u = 0;
    for (size_t i = 0; i < nk; i++)
        if (!i || key[i] != key[i - 1]) key[u++] = key[i];
    g->n = u;
    g->holder = xmalloc(u * sizeof *g->holder);
    g->own = xmalloc(u * sizeof *g->own);
    for (size_t i = 0; i < u; i++) {
        g->holder[i] = (int)(key[i] >> 32);
        g->own[i] = owner[(uint32_t)key[i]];
    }
    for (size_t p = 0; p < t->npot; p++) {
        int r = prank(t, owner, p);
        for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++) {
            g->gs[e] = -1;
            if (owner[t->verts[e]] == r) continue;
            uint64_t k = (uint64_t)r << 32 | t->verts[e];
            size_t lo = 0, hi = u;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (key[mid] < k) lo = mid + 1;
                else hi = mid;
            }
            g->gs[e] = (int32_t)lo;
        }
    }
    free(key);
}

typedef struct {
    double t;
    uint32_t p;
} tev;

static int cmp_tev(const void *a, const void *b)
{
    const tev *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->p > y->p) - (x->p < y->p);
}

typedef struct {
    double alpha_ns, beta_ns_per_byte, event_ns, rows;
} costs;

/* Per-rank totals over the run (verify and the JSON). */
typedef struct {
    uint64_t *events, *ghost_reads;
    double time_ns, compute_ns, latency_ns, bandwidth_ns, reduce_ns;
    uint64_t windows, hops, hops_max; /* cross-rank hops: sum and max over windows */
    double hop_ns;
    double msgs_per_window, bytes_per_window; /* max over ranks, mean over windows */
} result;

static void model(const table *t, const int *owner, const ghosts *g, int P, const costs *c, double s_ev,
                  double s_bytes, result *res)
{
    /* events bucketed by window, then in serial order (time, then id:
     * the table is in id order) within one */
    uint64_t nw = (uint64_t)floor(t->t_end / t->dt_min) + 2;
    uint64_t *start = xcalloc(nw + 1, sizeof *start);
    for (size_t p = 0; p < t->npot; p++)
        for (uint32_t n = 0; n < t->nev[p]; n++) start[(uint64_t)((double)n * t->dt[p] / t->dt_min) + 1]++;
    for (uint64_t w = 0; w < nw; w++) start[w + 1] += start[w];
    tev *ev = xmalloc(t->events * sizeof *ev);
    uint64_t *fill = xmalloc(nw * sizeof *fill);
    memcpy(fill, start, nw * sizeof *fill);
    for (size_t p = 0; p < t->npot; p++)
        for (uint32_t n = 0; n < t->nev[p]; n++) {
            double te = (double)n * t->dt[p];
            ev[fill[(uint64_t)(te / t->dt_min)]++] = (tev){te, (uint32_t)p};
        }
    free(fill);
    for (uint64_t w = 0; w < nw; w++) qsort(ev + start[w], start[w + 1] - start[w], sizeof *ev, cmp_tev);
    /* cross-rank hops: an event that reads a vertex last updated in this
     * window by another rank waits for one message from it */
    uint32_t *lev = xcalloc(t->nv, sizeof *lev), *vstamp = xcalloc(t->nv, sizeof *vstamp);
    int *writer = xcalloc(t->nv, sizeof *writer);
    res->hops = 0;
    res->hops_max = 0;
    uint32_t *gstamp = xcalloc(g->n, sizeof *gstamp);
    uint32_t *sstamp = xcalloc((size_t)P * P, sizeof *sstamp), *kstamp = xcalloc((size_t)P * P, sizeof *kstamp);
    uint64_t *e_r = xcalloc((size_t)P, sizeof *e_r), *m_r = xcalloc((size_t)P, sizeof *m_r);
    double *b_r = xcalloc((size_t)P, sizeof *b_r);
    res->events = xcalloc((size_t)P, sizeof *res->events);
    res->ghost_reads = xcalloc((size_t)P, sizeof *res->ghost_reads);
    res->compute_ns = res->latency_ns = res->bandwidth_ns = 0.0;
    res->windows = 0;
    double msum = 0.0, bsum = 0.0;
    for (uint64_t w = 0; w < nw; w++) {
        if (start[w + 1] == start[w]) continue;
        uint32_t st = (uint32_t)(w + 1);
        res->windows++;
        uint32_t hw = 0;
        memset(e_r, 0, (size_t)P * sizeof *e_r);
        memset(m_r, 0, (size_t)P * sizeof *m_r);
        memset(b_r, 0, (size_t)P * sizeof *b_r);
        for (uint64_t i = start[w]; i < start[w + 1]; i++) {
            uint32_t p = ev[i].p;
            int r = prank(t, owner, p);
            e_r[r]++;
            uint32_t h = 0;
            for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++) {
                uint32_t v = t->verts[e];
                if (vstamp[v] != st) continue;
                uint32_t need = lev[v] + (writer[v] != r);
                if (need > h) h = need;
            }
            for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++) {
                uint32_t v = t->verts[e];
                if (vstamp[v] != st || h > lev[v]) lev[v] = h;
                vstamp[v] = st;
                writer[v] = r;
            }
            if (h > hw) hw = h;
            res->events[r]++;
            for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++) {
                int32_t s = g->gs[e];
                if (s < 0) continue;
                int o = g->own[s];
                b_r[r] += KICK_BYTES; /* the kick goes back to the owner */
                b_r[o] += KICK_BYTES;
                size_t kp = (size_t)r * P + o;
                if (kstamp[kp] != st) kstamp[kp] = st, m_r[r]++, m_r[o]++;
                if (gstamp[s] == st) continue;
                gstamp[s] = st; /* the owner sends the ghost's state once a window */
                res->ghost_reads[r]++;
                b_r[r] += STATE_BYTES;
                b_r[o] += STATE_BYTES;
                size_t sp = (size_t)o * P + r;
                if (sstamp[sp] != st) sstamp[sp] = st, m_r[r]++, m_r[o]++;
            }
        }
        uint64_t emax = 0, mmax = 0;
        double bmax = 0.0;
        for (int r = 0; r < P; r++) {
            if (e_r[r] > emax) emax = e_r[r];
            if (m_r[r] > mmax) mmax = m_r[r];
            if (b_r[r] > bmax) bmax = b_r[r];
        }
        res->compute_ns += s_ev * (double)emax * c->event_ns;
        res->latency_ns += c->alpha_ns * (double)mmax;
        res->bandwidth_ns += c->beta_ns_per_byte * s_bytes * bmax;
        res->hops += hw;
        if (hw > res->hops_max) res->hops_max = hw;
        msum += (double)mmax;
        bsum += s_bytes * bmax;
    }
    res->reduce_ns = P > 1 ? c->rows * 2.0 * c->alpha_ns * ceil(log2((double)P)) : 0.0;
    res->time_ns = res->compute_ns + res->latency_ns + res->bandwidth_ns + res->reduce_ns;
    res->msgs_per_window = res->windows ? msum / (double)res->windows : 0.0;
    res->bytes_per_window = res->windows ? bsum / (double)res->windows : 0.0;
    res->hop_ns = c->alpha_ns * (double)res->hops;
    free(start);
    free(ev);
    free(lev);
    free(vstamp);
    free(writer);
    free(gstamp);
    free(sstamp);
    free(kstamp);
    free(e_r);
    free(m_r);
    free(b_r);
}

static avi_model *bar_model(double tets) { return bench_bar_model(tets, "mpimodel"); }

/* The serial engine's CPU time per event on this model (CPU, not wall:
 * the machine is shared) and its elastic event count to t_end. */
static double event_ns_of(avi_model *m, double t_end, uint64_t *engine_events)
{
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    if (!e) {
        fprintf(stderr, "mpimodel: %s\n", err.message);
        exit(1);
    }
    double w0 = bench_cpu();
    if (avi_engine_advance(e, t_end) != AVI_OK) {
        fprintf(stderr, "mpimodel: run failed: %s\n", avi_engine_error(e)->message);
        exit(1);
    }
    double ns = 1e9 * (bench_cpu() - w0);
    uint64_t n = avi_engine_events_total(e) - avi_engine_event_count(e, AVI_KIND_CONTACT);
    if (engine_events) *engine_events = n;
    avi_engine_destroy(e);
    return n ? ns / (double)n : 0.0;
}

/* Brute-force recount of the ghosts and of each rank's per-window ghost
 * reads, straight from the stencils (no slots, no buckets); returns the
 * number of mismatches against g and res. */
static int brute_check(const table *t, const int *owner, const ghosts *g, int P, const result *res)
{
    int bad = 0;
    uint8_t *mark = xmalloc(t->nv);
    size_t total = 0;
    for (int r = 0; r < P; r++) {
        memset(mark, 0, t->nv);
        size_t n = 0, slots = 0;
        for (size_t p = 0; p < t->npot; p++) {
            if (prank(t, owner, p) != r) continue;
            for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++) {
                uint32_t v = t->verts[e];
                if (owner[v] != r && !mark[v]) mark[v] = 1, n++;
            }
        }
        for (size_t s = 0; s < g->n; s++) slots += g->holder[s] == r;
        bad += n != slots;
        total += n;
        /* ghost reads: distinct ghosts of the rank's events, window by window */
        uint64_t reads = 0, evs = 0;
        uint64_t nw = (uint64_t)floor(t->t_end / t->dt_min) + 2;
        for (uint64_t w = 0; w < nw; w++) {
            memset(mark, 0, t->nv);
            for (size_t p = 0; p < t->npot; p++) {
                if (prank(t, owner, p) != r) continue;
                int fires = 0;
                for (uint32_t k = 0; k < t->nev[p]; k++)
                    if ((uint64_t)((double)k * t->dt[p] / t->dt_min) == w) fires++;
                evs += (uint64_t)fires;
                if (!fires) continue;
                for (uint32_t e = t->first[p]; e < t->first[p + 1]; e++) {
                    uint32_t v = t->verts[e];
                    if (owner[v] != r && !mark[v]) mark[v] = 1, reads++;
                }
            }
        }
        bad += reads != res->ghost_reads[r] || evs != res->events[r];
        printf("{\"bench\": \"mpimodel\", \"verify_rank\": %d, \"of\": %d, \"ghosts\": %zu, \"ghost_slots\": %zu, "
               "\"ghost_reads\": %llu, \"ghost_reads_brute\": %llu, \"events\": %llu, \"events_brute\": %llu}\n",
               r, P, n, slots, (unsigned long long)res->ghost_reads[r], (unsigned long long)reads,
               (unsigned long long)res->events[r], (unsigned long long)evs);
    }
    bad += total != g->n;
    free(mark);
    return bad;
}

static int parse_ranks(char *s, int *out, int max)
{
    int n = 0;
    for (char *tok = strtok(s, ","); tok && n < max; tok = strtok(NULL, ",")) out[n++] = atoi(tok);
    return n;
}

int main(int argc, char **argv)
{
    const char *scene = argc > 1 ? argv[1] : "";
    double tets = 1e6, per_rank = 0.0, cap = 1e6, steps = 4.0, end = -1.0;
    costs c = {1500.0, 1.0 / 12.5, 0.0, 10.0}; /* cited InfiniBand: 1.5 us, 12.5 GB/s */
    int ranks[MAXR] = {8, 16, 32, 64}, nr = 4, verify = 0;
    const char **sets = xcalloc((size_t)argc + 1, sizeof *sets);
    size_t nsets = 0;
    int usage = strcmp(scene, "bar") && strcmp(scene, "sphere-plate");
    for (int i = 2; i < argc && !usage; i++) {
        const char *a = argv[i];
        int more = i + 1 < argc;
        if (!strcmp(a, "--tets") && more) tets = atof(argv[++i]);
        else if (!strcmp(a, "--per-rank") && more) per_rank = atof(argv[++i]);
        else if (!strcmp(a, "--cap") && more) cap = atof(argv[++i]);
        else if (!strcmp(a, "--steps") && more) steps = atof(argv[++i]);
        else if (!strcmp(a, "--end") && more) end = atof(argv[++i]);
        else if (!strcmp(a, "--set") && more) sets[nsets++] = argv[++i];
        else if (!strcmp(a, "--ranks") && more) nr = parse_ranks(argv[++i], ranks, MAXR);
        else if (!strcmp(a, "--alpha-us") && more) c.alpha_ns = 1e3 * atof(argv[++i]);
        else if (!strcmp(a, "--beta-gbs") && more) c.beta_ns_per_byte = 1.0 / atof(argv[++i]);
        else if (!strcmp(a, "--rows") && more) c.rows = atof(argv[++i]);
        else if (!strcmp(a, "--event-ns") && more) c.event_ns = atof(argv[++i]);
        else if (!strcmp(a, "--verify")) verify = 1;
        else usage = 1;
    }
    int bad = !(tets >= 1.0) || !(steps > 0.0) || !(cap >= 1.0) || !(per_rank >= 0.0) || nr < 1 ||
              !(c.alpha_ns >= 0.0) || !(c.beta_ns_per_byte >= 0.0) || !(c.rows >= 0.0) || !(c.event_ns >= 0.0);
    for (int k = 0; k < nr; k++) bad |= ranks[k] < 1 || ranks[k] > 65536;
    if (usage || bad) {
        fprintf(stderr, "usage: %s bar [--tets N | --per-rank N [--cap C]] [--verify] | sphere-plate [--end T] [--set KEY=VALUE]...\n"
                        "       [--ranks P,...] [--steps S] [--alpha-us A] [--beta-gbs B] [--rows R] [--event-ns C]\n"
                        "       (sizes, steps and ranks at least 1; costs not negative)\n", argv[0]);
        return 2;
    }
    if (verify) { /* small mesh, odd rank counts, exact counts against brute force and the engine */
        nr = 3;
        ranks[0] = 2, ranks[1] = 3, ranks[2] = 7;
        per_rank = 0.0;
    }
    int is_bar = !strcmp(scene, "bar");
    avi_scene sc;
    avi_model *m = NULL;
    double built = -1.0; /* tets of the bar in m */
    table t = {0};
    int *owner = NULL;
    int fails = 0;
    for (int k = 0; k < nr; k++) {
        int P = ranks[k];
        double want = per_rank > 0.0 ? per_rank * P : tets, mesh_tets = want < cap || per_rank == 0.0 ? want : cap;
        if (!m || (is_bar && mesh_tets != built)) {
            if (m) {
                avi_model_destroy(m);
                table_free(&t);
                free(owner);
            }
            double t_end;
            if (is_bar) {
                m = bar_model(mesh_tets);
                built = mesh_tets;
            } else {
                avi_error err;
                if (avi_scene_load_builtin("sphere-plate", sets, nsets, &sc, &err) || avi_scene_build(&sc, &m, NULL, &err)) {
                    fprintf(stderr, "mpimodel: %s\n", err.message);
                    return 2; /* bad scene or --set */
                }
                m->has_contact = 0; /* contact is left out of the model: the engine runs the elastic clocks */
            }
            table_of(m, &t);
            double rate = 0.0;
            for (size_t p = 0; p < t.npot; p++) rate += 1.0 / t.dt[p];
            t_end = !is_bar && end > 0.0 ? end : steps * (double)t.npot / rate;
            count_events(&t, t_end);
            owner = xmalloc(t.nv * sizeof *owner);
            uint64_t engine_events = 0;
            double ens = event_ns_of(m, t_end, &engine_events);
            if (c.event_ns == 0.0 || verify) c.event_ns = ens;
            printf("{\"bench\": \"mpimodel\", \"scene\": \"%s\", \"tets\": %zu, \"vertices\": %zu, \"potentials\": %zu, "
                   "\"t_end\": %.6e, \"dt_min\": %.6e, \"events\": %llu, \"engine_events\": %llu, \"event_ns_measured\": %.1f, "
                   "\"event_ns\": %.1f, \"alpha_us\": %.3f, \"beta_gbs\": %.2f, \"rows\": %.0f}\n",
                   scene, m->ntet, m->nv, t.npot, t.t_end, t.dt_min, (unsigned long long)t.events,
                   (unsigned long long)engine_events, ens, c.event_ns, 1e-3 * c.alpha_ns,
                   c.beta_ns_per_byte > 0 ? 1.0 / c.beta_ns_per_byte : INFINITY, c.rows);
            fflush(stdout);
            if (verify && engine_events != t.events) {
                fprintf(stderr, "mpimodel: verify: the trace has %llu events, the engine ran %llu\n",
                        (unsigned long long)t.events, (unsigned long long)engine_events);
                fails++;
            }
        }
        long cut = partition(m, &t, P, owner);
        ghosts g;
        ghosts_of(&t, owner, &g);
        if (!is_bar) want = mesh_tets = 1.0; /* no scaling */
        double s_ev = want / mesh_tets, s_bytes = pow(s_ev, 2.0 / 3.0);
        result res;
        model(&t, owner, &g, P, &c, s_ev, s_bytes, &res);
        size_t nfree = 0;
        for (size_t v = 0; v < t.nv; v++) nfree += owner[v] >= 0;
        uint64_t sum = 0, emax = 0;
        for (int r = 0; r < P; r++) {
            sum += res.events[r];
            if (res.events[r] > emax) emax = res.events[r];
        }
        double ideal = s_ev * (double)t.events / P * c.event_ns;
        printf("{\"bench\": \"mpimodel\", \"scene\": \"%s\", \"mode\": \"%s\", \"ranks\": %d, \"tets_per_rank\": %.0f, \"potentials_per_rank\": %.0f, "
               "\"mesh_tets\": %.0f, \"scale_events\": %.3f, \"edge_cut\": %ld, \"ghosts\": %zu, \"ghost_fraction\": %.4f, "
               "\"windows\": %llu, \"imbalance\": %.3f, \"window_imbalance\": %.3f, \"msgs_per_window\": %.1f, \"bytes_per_window\": %.0f, "
               "\"compute_ms\": %.3f, \"latency_ms\": %.3f, \"bandwidth_ms\": %.3f, \"reduce_ms\": %.4f, \"time_ms\": %.3f, "
               "\"ideal_ms\": %.3f, \"efficiency\": %.3f, \"hops_per_window\": %.1f, \"hops_max\": %llu, \"time_ordered_ms\": %.3f, "
               "\"efficiency_ordered\": %.3f}\n",
               scene, per_rank > 0.0 ? "weak" : "strong", P, (double)m->ntet * s_ev / P, (double)t.npot * s_ev / P, mesh_tets, s_ev, cut, g.n,
               nfree ? (double)g.n / (double)nfree : 0.0, (unsigned long long)res.windows,
               sum ? (double)emax * P / (double)sum : 0.0, ideal > 0 ? res.compute_ns / ideal : 0.0, res.msgs_per_window, res.bytes_per_window,
               1e-6 * res.compute_ns, 1e-6 * res.latency_ns, 1e-6 * res.bandwidth_ns, 1e-6 * res.reduce_ns,
               1e-6 * res.time_ns, 1e-6 * ideal, res.time_ns > 0 ? ideal / res.time_ns : 0.0,
               res.windows ? (double)res.hops / (double)res.windows : 0.0, (unsigned long long)res.hops_max,
               1e-6 * (res.time_ns + res.hop_ns), ideal / (res.time_ns + res.hop_ns));
        fflush(stdout);
        if (verify) {
            int b = brute_check(&t, owner, &g, P, &res) + (sum != t.events);
            /* negative control: one ghost dropped from the stencils that
             * read it must show, or the check proves nothing */
            size_t e = 0;
            while (e < t.first[t.npot] && g.gs[e] < 0) e++;
            int control = 0;
            if (e < t.first[t.npot]) {
                result bad_res;
                int32_t drop = g.gs[e];
                for (size_t x = 0; x < t.first[t.npot]; x++)
                    if (g.gs[x] == drop) g.gs[x] = -1;
                model(&t, owner, &g, P, &c, 1.0, 1.0, &bad_res);
                control = brute_check(&t, owner, &g, P, &bad_res);
                free(bad_res.events);
                free(bad_res.ghost_reads);
            }
            printf("{\"bench\": \"mpimodel\", \"verify\": %d, \"events_counted\": %llu, \"events\": %llu, \"mismatches\": %d, "
                   "\"negative_control_mismatches\": %d}\n",
                   P, (unsigned long long)sum, (unsigned long long)t.events, b, control);
            fails += b + (control == 0);
        }
        free(g.holder);
        free(g.own);
        free(g.gs);
        free(res.events);
        free(res.ghost_reads);
    }
    avi_model_destroy(m);
    table_free(&t);
    free(owner);
    if (!is_bar) avi_scene_free(&sc);
    free(sets);
    if (verify) fprintf(stderr, "mpimodel: verify %s\n", fails ? "FAILED" : "passed");
    return fails ? 1 : 0;
}
