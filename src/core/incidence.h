/* Whole-model passes on a pool with the serial bits (issue 30).
 *
 * A serial pass over every potential adds each stencil's terms into its
 * vertices as it goes; a per-vertex sum then depends on the order of the
 * potentials. The parallel form keeps that order: each potential's terms go
 * into its own rows (one per stencil slot) on any worker, then each record
 * adds its rows in the serial order, along the incidence list built here:
 * for each record, its (potential, row) pairs in kind, index and slot order.
 * Scalar sums (energies) are terms into an array, added in the serial order
 * by one thread. Never per-thread partial sums: they would change the bits.
 *
 * An avi_model_pass is that list plus the rows' scratch, for one thread's
 * use (the output stream's, or the engine's for the synchronous
 * integrators) with one pool; it is built at the first parallel pass. */
#ifndef AVI_INCIDENCE_H
#define AVI_INCIDENCE_H

#include "avi/engine.h"
#include "base/pool.h"
#include "core/model_internal.h"

#include <stddef.h>
#include <stdint.h>

/* One stencil slot on a record: the potential's flat index (kinds in rank
 * order) and the slot's row (its potential's first row plus the slot). */
typedef struct {
    uint32_t p, row;
} avi_incidence_entry;

typedef struct {
    size_t nrec, np, nrow;
    size_t *start;              /* nrec + 1: record r's entries are [start[r], start[r + 1]) */
    avi_incidence_entry *entry; /* in serial order: kinds in rank order, index, slot */
    size_t off[AVI_MODEL_KINDS + 1];     /* flat index of each kind's first potential */
    size_t row_off[AVI_MODEL_KINDS + 1]; /* row of each kind's first potential */
} avi_incidence;

/* The first row of potential p (nrow for p = np). */
static inline size_t avi_incidence_first_row(const avi_incidence *inc, size_t p)
{
    unsigned k = 0;
    while (k < AVI_MODEL_KINDS && p >= inc->off[k + 1]) k++;
    if (k == AVI_MODEL_KINDS) return inc->nrow;
    return inc->row_off[k] + (p - inc->off[k]) * (size_t)avi_kind_slots(k);
}

/* Builds the list of a finalized model. AVI_OK or AVI_ERR_RUN (out of memory). */
int avi_incidence_build(avi_incidence *inc, const avi_model *m);
void avi_incidence_free(avi_incidence *inc);

typedef struct avi_model_pass avi_model_pass;

/* A pass over model m on pool (not owned; NULL: serial). NULL when out of
 * memory. */
avi_model_pass *avi_model_pass_create(const avi_model *m, avi_pool *pool);
void avi_model_pass_destroy(avi_model_pass *mp);

/* What the parallel passes share (observers.c, velocity_sync.c): the list
 * and scratch, made ready (0) or not (-1: out of memory, or no pool of more
 * than one thread and no chaos: take the serial loops). A pass goes in
 * blocks of AVI_PASS_BLOCK potentials (or clocks), so that its rows (24 B a
 * stencil slot, twice for the owed velocities) stay bounded; the rest is 8
 * B a potential, 4 B a record and the list's 8 B a slot, and for the owed
 * velocities 8 B a slot, 29 B a potential, 4 B a clock and 4 B a record
 * more. */
#define AVI_PASS_BLOCK 16384
#define AVI_PASS_COEF 3
#define AVI_PASS_NONE UINT32_MAX
struct avi_model_pass {
    const avi_model *m;
    avi_pool *pool;
    size_t block; /* potentials (clocks) a block: AVI_PASS_BLOCK; tests may set fewer */
    int built;
    avi_incidence inc;
    double (*rows)[3];  /* a term per stencil slot of a block */
    double (*rows2)[3]; /* a second term (velocity_sync's pass 2) */
    size_t rows_cap, rows2_cap;
    double *pot;        /* np: a scalar per potential (energies) */
    /* the owed velocities (velocity_sync.c): */
    double *coef;               /* AVI_PASS_COEF np: per-potential weights */
    uint32_t *rank;             /* np: position in the sweep, AVI_PASS_NONE: not in it */
    uint8_t *skip;              /* np: adds nothing in pass 2 */
    avi_incidence_entry *order; /* as inc.entry: each record's (potential, sweep row) in the sweep's order */
    uint32_t *count;            /* nrec: entries of each record in order */
    uint32_t *cursor;           /* nrec: a record's next entry in a pass by blocks (0 between passes) */
    uint32_t *item_row;         /* item_cap: each clock's first sweep row */
    size_t item_cap;
};
/* Rows (and rows2 when `both`) for n stencil slots. 0, or -1 when out of memory. */
int avi_model_pass_rows(avi_model_pass *mp, size_t n, int both);
int avi_model_pass_ready(avi_model_pass *mp, int owed);

/* Parallel forms of observers.c's passes over model m, the same bits as
 * the serial ones (which they take when mp is NULL or not ready). */
double avi_model_elastic_energy_pass(const avi_model *m, avi_model_pass *mp, const double (*x)[3]);
void avi_model_accumulate_gradient_pass(const avi_model *m, avi_model_pass *mp, double (*g)[3]);
/* g += s grad V_P(x) and absg += |s grad V_P(x)| (absg may be NULL) over
 * the potentials of `kinds` (a bit 1 << kind each), each record's terms in
 * the kinds' rank order, then index, then slot. 0, or -1 when mp is not
 * ready: nothing done, the caller runs its serial loop. */
int avi_model_scaled_gradient_pass(avi_model_pass *mp, const double (*x)[3], unsigned kinds, double s, double (*g)[3],
                                   double (*absg)[3]);

/* The snapshot's observation (avi_snapshot_observe) on mp's pool; NULL:
 * serial. mp must outlive its use and be used by one thread at a time. */
void avi_snapshot_set_pass(avi_snapshot *s, avi_model_pass *mp);
/* Computes and keeps the snapshot's observation on the calling thread
 * alone (not on its pass), for snapshots observed side by side on several
 * threads; avi_snapshot_observe then returns it. */
void avi_snapshot_prepare(avi_snapshot *s);

#endif
