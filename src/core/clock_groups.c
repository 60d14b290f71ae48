#include "core/clock_groups.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
    uint64_t dt_bits;
    uint32_t id;
} step_key;

static int step_key_cmp(const void *pa, const void *pb)
{
    const step_key *a = pa, *b = pb;
    if (a->dt_bits != b->dt_bits) return a->dt_bits < b->dt_bits ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

static int u32_cmp(const void *pa, const void *pb)
{
    uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
    return (a > b) - (a < b);
}

/* Each group's vertex list: its members' stencils, sorted, each vertex once. */
static int build_vertex_lists(avi_clock_groups *g, const avi_model *m)
{
    size_t total = 0, largest = 0;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        size_t c = AVI_STENCIL_MAX * (size_t)g->group[k].count; /* the widest stencil */
        total += c;
        if (c > largest) largest = c;
    }
    uint32_t *tmp = malloc(largest * sizeof *tmp);
    g->vertex = malloc(total * sizeof *g->vertex);
    if (!tmp || !g->vertex) {
        free(tmp);
        return -1;
    }
    uint32_t at = 0;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        avi_clock_group *gr = &g->group[k];
        size_t c = 0;
        for (uint32_t j = 0; j < gr->count; j++) {
            uint32_t id = g->member[gr->first + j];
            const uint32_t *v;
            int n = avi_model_stencil(m, (avi_kind)(id >> AVI_ID_KIND_SHIFT), id & AVI_ID_INDEX_MASK, &v);
            memcpy(tmp + c, v, (size_t)n * sizeof *v);
            c += (size_t)n;
        }
        qsort(tmp, c, sizeof *tmp, u32_cmp);
        gr->vfirst = at;
        for (size_t j = 0; j < c; j++)
            if (j == 0 || tmp[j] != tmp[j - 1]) g->vertex[at++] = tmp[j];
        gr->vcount = at - gr->vfirst;
    }
    free(tmp);
    uint32_t *shrunk = realloc(g->vertex, (at ? at : 1) * sizeof *g->vertex);
    if (shrunk) g->vertex = shrunk;
    return 0;
}

/* The conflict matrix: groups that share a vertex, from the vertex lists
 * (each vertex's groups, then every pair of them). */
static int build_conflicts(avi_clock_groups *g, const avi_model *m)
{
    if (g->ngroup > AVI_GROUP_CONFLICT_MAX) return 0;
    size_t nv = avi_model_record_count(m), words = (g->ngroup + 63) / 64;
    uint32_t *start = calloc(nv + 1, sizeof *start);
    uint32_t *at = malloc((g->group[g->ngroup - 1].vfirst + g->group[g->ngroup - 1].vcount + 1) * sizeof *at);
    g->conflict = calloc((size_t)g->ngroup * words, sizeof *g->conflict);
    if (!start || !at || !g->conflict) {
        free(start);
        free(at);
        return -1;
    }
    g->conflict_words = words;
    for (uint32_t k = 0; k < g->ngroup; k++)
        for (uint32_t j = 0; j < g->group[k].vcount; j++) start[g->vertex[g->group[k].vfirst + j] + 1]++;
    for (size_t v = 0; v < nv; v++) start[v + 1] += start[v];
    for (uint32_t k = 0; k < g->ngroup; k++) /* groups ascending within each vertex */
        for (uint32_t j = 0; j < g->group[k].vcount; j++) at[start[g->vertex[g->group[k].vfirst + j]]++] = k;
    for (size_t v = nv; v > 0; v--) start[v] = start[v - 1]; /* back to the starts */
    start[0] = 0;
    for (size_t v = 0; v < nv; v++)
        for (uint32_t a = start[v]; a < start[v + 1]; a++)
            for (uint32_t b = a + 1; b < start[v + 1]; b++) {
                uint32_t x = at[a], y = at[b];
                g->conflict[x * words + y / 64] |= (uint64_t)1 << (y % 64);
                g->conflict[y * words + x / 64] |= (uint64_t)1 << (x % 64);
            }
    free(start);
    free(at);
    return 0;
}

void avi_groups_free(avi_clock_groups *g)
{
    free(g->group);
    free(g->vertex);
    free(g->member);
    free(g->group_of);
    free(g->conflict);
    memset(g, 0, sizeof *g);
}

int avi_groups_build(avi_clock_groups *g, const avi_model *m)
{
    memset(g, 0, sizeof *g);
    size_t n = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        g->offset[k] = n;
        n += avi_model_potential_count(m, (avi_kind)k);
    }
    g->npotential = n;
    if (n < AVI_GROUP_MIN_SIZE) return 0;
    step_key *key = malloc(n * sizeof *key);
    if (!key) return -1;
    size_t j = 0; /* pinned potentials are not scheduled: no member */
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            if (avi_model_potential_pinned(m, (avi_kind)k, i)) continue;
            double dt = avi_model_time_step(m, (avi_kind)k, i);
            memcpy(&key[j].dt_bits, &dt, sizeof dt);
            key[j++].id = avi_event_id((unsigned)k, (uint32_t)i);
        }
    size_t nkey = j;
    qsort(key, nkey, sizeof *key, step_key_cmp);
    /* Count runs of equal steps long enough to group. */
    size_t ngroup = 0, nmember = 0;
    for (size_t a = 0, b; a < nkey; a = b) {
        for (b = a + 1; b < nkey && key[b].dt_bits == key[a].dt_bits; b++) {}
        if (b - a >= AVI_GROUP_MIN_SIZE) {
            ngroup++;
            nmember += b - a;
        }
    }
    if (ngroup == 0) {
        free(key);
        return 0;
    }
    g->group = malloc(ngroup * sizeof *g->group);
    g->member = malloc(nmember * sizeof *g->member);
    g->group_of = malloc(n * sizeof *g->group_of);
    if (!g->group || !g->member || !g->group_of) {
        free(key);
        avi_groups_free(g);
        return -1;
    }
    for (size_t i = 0; i < n; i++) g->group_of[i] = AVI_GROUP_NONE;
    /* Groups in order of step, smallest first; members in id order. */
    uint32_t gi = 0, mi = 0;
    for (size_t a = 0, b; a < nkey; a = b) {
        for (b = a + 1; b < nkey && key[b].dt_bits == key[a].dt_bits; b++) {}
        if (b - a < AVI_GROUP_MIN_SIZE) continue;
        avi_clock_group *gr = &g->group[gi];
        memcpy(&gr->dt, &key[a].dt_bits, sizeof gr->dt);
        gr->first = mi;
        gr->count = (uint32_t)(b - a);
        gr->pos = 0;
        for (size_t c = a; c < b; c++) {
            uint32_t id = key[c].id;
            g->member[mi++] = id;
            g->group_of[g->offset[id >> AVI_ID_KIND_SHIFT] + (id & AVI_ID_INDEX_MASK)] = gi;
        }
        gi++;
    }
    g->ngroup = gi;
    free(key);
    if (build_vertex_lists(g, m) || build_conflicts(g, m)) {
        avi_groups_free(g);
        return -1;
    }
    return 0;
}

size_t avi_groups_expand(const avi_clock_groups *g, avi_event cursor, avi_event *out)
{
    uint32_t gi = avi_group_of(g, cursor.id);
    const avi_clock_group *gr = &g->group[gi];
    const uint32_t *mem = g->member + gr->first;
    uint32_t n = cursor.n & ~AVI_GROUP_CURSOR;
    /* The same arithmetic as the engine's reschedule: t = n dt. */
    avi_event done = {(double)(n + 1) * gr->dt, 0, n + 1};
    int before = 1;
    for (uint32_t k = 0; k < gr->count; k++) {
        if (mem[k] == cursor.id) before = 0;
        avi_event e = before ? done : (avi_event){cursor.t, 0, n};
        e.id = mem[k];
        out[k] = e;
    }
    return gr->count;
}

size_t avi_groups_bytes(const avi_clock_groups *g)
{
    if (!g->group) return 0;
    size_t members = 0, vertices = 0;
    for (uint32_t k = 0; k < g->ngroup; k++) {
        members += g->group[k].count;
        vertices += g->group[k].vcount;
    }
    return g->ngroup * sizeof *g->group + (members + vertices) * sizeof(uint32_t) + g->npotential * sizeof *g->group_of +
           (g->conflict ? g->ngroup * g->conflict_words * sizeof *g->conflict : 0);
}
