/* Broad phase: candidate vertex-face and edge-edge pairs whose primitives'
 * bounding boxes come within a radius r, by a uniform grid whose cells are
 * sorted by key (no hashing collisions to resolve, deterministic order).
 *
 * With a pool (the `pool` field, issue 30) the per-triangle and per-cell
 * pair tests run on its workers, each into its own buffer as segments that
 * name their first triangle or cell; the segments are then copied out in
 * that order, so the output is the serial one, item for item, for any
 * thread count and any chunking. */
#ifndef AVI_BROAD_PHASE_H
#define AVI_BROAD_PHASE_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
    uint32_t a, b; /* VF: point index, triangle index; EE: edge a < edge b */
} avi_candidate;

typedef struct {
    uint64_t key; /* grid cell */
    uint32_t item; /* point or edge */
} avi_cell_entry;

struct avi_pool;
struct avi_bp_worker;  /* one worker's output and scratch (broad_phase.c) */
struct avi_bp_segment; /* one chunk's output in a worker's buffer */

typedef struct {
    /* The pool the searches split across (NULL: serial), the owner's, set
     * between calls. */
    struct avi_pool *pool;
    /* scratch, reused between calls */
    avi_cell_entry *entries, *spare; /* cell entries, and the sort's second buffer */
    size_t cap_entries;
    struct avi_cell_range *cells; /* hash table: cell key -> run of sorted entries */
    size_t cap_cells;
    avi_candidate *out;
    size_t cap_out;
    double (*box)[6]; /* per-primitive grown boxes (lo, hi) */
    size_t cap_box;
    struct avi_bp_worker *work; /* per worker of the pool */
    int nwork;
    struct avi_bp_segment *seg; /* every worker's segments, to sort */
    size_t cap_seg;
    size_t *first; /* EE: each edge's first entry, then each cell's first entry */
    size_t cap_first;
} avi_broad_phase;

void avi_broad_phase_free(avi_broad_phase *bp);

/* Sorts e[0..n) by key, keeping the order of equal keys (a radix sort), and
 * returns the sorted array: e or spare (room for n entries). */
avi_cell_entry *avi_cell_entries_sort(avi_cell_entry *e, avi_cell_entry *spare, size_t n);

/* The same sort split across a pool's workers (NULL: serial) when n is
 * large: each pass counts and scatters one block per worker, blocks in
 * worker order, so the result is the serial one (the unique stable order).
 * Falls back to the serial sort when its scratch cannot be allocated. */
avi_cell_entry *avi_cell_entries_sort_pool(struct avi_pool *pool, avi_cell_entry *e, avi_cell_entry *spare,
                                           size_t n);

/* Pairs (point p, triangle t) with the point within r of the triangle's
 * bounding box, p not a vertex of t. x are model positions; points are
 * model vertex indices. Returns the count (candidates in bp->out) or -1 when
 * out of memory. The cell size is h. */
long avi_broad_phase_vf(avi_broad_phase *bp, const double (*x)[3], const uint32_t *points, size_t npoints,
                        const uint32_t (*tri)[3], size_t ntri, double r, double h);

/* Pairs of edges (indices into edges, a < b) whose bounding boxes come
 * within r, sharing no vertex. */
long avi_broad_phase_ee(avi_broad_phase *bp, const double (*x)[3], const uint32_t (*edges)[2], size_t nedges,
                        double r, double h);

/* A grid cell's key, 21 bits per axis: distant cells that wrap onto one
 * key only add candidates, which exact tests then reject (a grid of at most
 * 2^21 cells along each axis gets unique keys). */
static inline uint64_t avi_cell_key(int64_t i, int64_t j, int64_t k)
{
    const uint64_t m = (1u << 21) - 1;
    return (((uint64_t)i & m) << 42) | (((uint64_t)j & m) << 21) | ((uint64_t)k & m);
}

#endif
