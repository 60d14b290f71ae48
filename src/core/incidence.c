/* The incidence list of a model and the scratch of its parallel passes
 * (core/incidence.h). */
#include "core/incidence.h"

#include <stdlib.h>
#include <string.h>

int avi_incidence_build(avi_incidence *inc, const avi_model *m)
{
    memset(inc, 0, sizeof *inc);
    size_t nrec = avi_model_record_count(m), np = 0, nrow = 0;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        size_t c = avi_model_potential_count(m, (avi_kind)k);
        inc->off[k] = np;
        inc->row_off[k] = nrow;
        np += c;
        nrow += c * (size_t)avi_kind_slots(k);
    }
    inc->off[AVI_MODEL_KINDS] = np;
    inc->row_off[AVI_MODEL_KINDS] = nrow;
    if (np >= AVI_PASS_NONE || nrow >= UINT32_MAX) return AVI_ERR_RUN;
    inc->nrec = nrec;
    inc->np = np;
    inc->nrow = nrow;
    inc->start = calloc(nrec + 1, sizeof *inc->start);
    inc->entry = malloc((nrow ? nrow : 1) * sizeof *inc->entry);
    if (!inc->start || !inc->entry) {
        avi_incidence_free(inc);
        return AVI_ERR_RUN;
    }
    /* Count, prefix, fill: a counting sort by record that keeps the serial
     * (kind, index, slot) order within each record. */
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            const uint32_t *v = avi_kind_stencil(k, avi_kind_record(m, k, i));
            for (int a = 0; a < avi_kind_slots(k); a++) inc->start[v[a] + 1]++;
        }
    for (size_t r = 0; r < nrec; r++) inc->start[r + 1] += inc->start[r];
    size_t *fill = malloc((nrec ? nrec : 1) * sizeof *fill);
    if (!fill) {
        avi_incidence_free(inc);
        return AVI_ERR_RUN;
    }
    memcpy(fill, inc->start, nrec * sizeof *fill);
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        int n = avi_kind_slots(k);
        for (size_t i = 0, c = avi_model_potential_count(m, (avi_kind)k); i < c; i++) {
            const uint32_t *v = avi_kind_stencil(k, avi_kind_record(m, k, i));
            for (int a = 0; a < n; a++)
                inc->entry[fill[v[a]]++] = (avi_incidence_entry){(uint32_t)(inc->off[k] + i),
                                                                 (uint32_t)(inc->row_off[k] + i * (size_t)n + (size_t)a)};
        }
    }
    free(fill);
    return AVI_OK;
}

void avi_incidence_free(avi_incidence *inc)
{
    free(inc->start);
    free(inc->entry);
    memset(inc, 0, sizeof *inc);
}

avi_model_pass *avi_model_pass_create(const avi_model *m, avi_pool *pool)
{
    avi_model_pass *mp = calloc(1, sizeof *mp);
    if (!mp) return NULL;
    mp->m = m;
    mp->pool = pool;
    mp->block = AVI_PASS_BLOCK;
    return mp;
}

void avi_model_pass_destroy(avi_model_pass *mp)
{
    if (!mp) return;
    avi_incidence_free(&mp->inc);
    free(mp->rows);
    free(mp->rows2);
    free(mp->pot);
    free(mp->coef);
    free(mp->rank);
    free(mp->skip);
    free(mp->order);
    free(mp->count);
    free(mp->cursor);
    free(mp->item_row);
    free(mp);
}

int avi_model_pass_rows(avi_model_pass *mp, size_t n, int both)
{
    n = n ? n : 1;
    if (n > mp->rows_cap) {
        free(mp->rows);
        mp->rows_cap = 0;
        if (!(mp->rows = malloc(n * sizeof *mp->rows))) return -1;
        mp->rows_cap = n;
    }
    if (both && n > mp->rows2_cap) {
        free(mp->rows2);
        mp->rows2_cap = 0;
        if (!(mp->rows2 = malloc(n * sizeof *mp->rows2))) return -1;
        mp->rows2_cap = n;
    }
    return 0;
}

int avi_model_pass_ready(avi_model_pass *mp, int owed)
{
    if (!mp || (avi_pool_threads(mp->pool) <= 1 && !avi_pool_chaos(mp->pool))) return -1;
    if (mp->built < 0) return -1; /* out of memory once: serial from then on */
    const avi_incidence *inc = &mp->inc;
    if (!mp->built) {
        mp->built = -1;
        if (avi_incidence_build(&mp->inc, mp->m)) return -1;
        mp->pot = malloc((inc->np ? inc->np : 1) * sizeof *mp->pot);
        mp->cursor = calloc(inc->nrec ? inc->nrec : 1, sizeof *mp->cursor);
        if (!mp->pot || !mp->cursor) return -1;
        mp->built = 1;
    }
    if (owed && !mp->count) { /* the owed velocities' pass needs more (velocity_sync.c) */
        size_t nrow = inc->nrow ? inc->nrow : 1, np = inc->np ? inc->np : 1, nrec = inc->nrec ? inc->nrec : 1;
        mp->coef = malloc(AVI_PASS_COEF * np * sizeof *mp->coef);
        mp->rank = malloc(np * sizeof *mp->rank);
        mp->skip = malloc(np);
        mp->order = malloc(nrow * sizeof *mp->order);
        mp->count = malloc(nrec * sizeof *mp->count);
        if (!mp->coef || !mp->rank || !mp->skip || !mp->order || !mp->count) {
            mp->built = -1;
            return -1;
        }
    }
    return 0;
}
