/* The contact manager's checkpoint state: its potentials, stencils,
 * counters and clocks as named arrays (core/state_io.h), saved and loaded
 * through one table so that the two cannot drift apart. */
#include "contact/contact_manager.h"
#include "base/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Every per-potential and per-stencil array: (name, count field, width,
 * element type, element i, j), in the order written. */
#define CONTACT_ARRAYS(X)                                                     \
    X("potential_vertices", npot, 4, U32, cm->pot[i].v[j])                    \
    X("potential_type", npot, 1, U8, cm->pot[i].type)                         \
    X("potential_alive", npot, 1, U8, cm->pot[i].alive)                       \
    X("potential_layer", npot, 1, U32, cm->pot[i].layer)                      \
    X("potential_stencil", npot, 1, U32, cm->pot[i].stencil)                  \
    X("potential_prev", npot, 1, U32, cm->pot[i].prev)                        \
    X("potential_thickness", npot, 1, F64, cm->pot[i].eta)                    \
    X("potential_stiffness", npot, 1, F64, cm->pot[i].k)                      \
    X("potential_dt", npot, 1, F64, cm->pot[i].dt)                            \
    X("potential_t0", npot, 1, F64, cm->pot[i].t0)                            \
    X("stencil_type", nst, 1, U8, cm->st[i].type)                             \
    X("stencil_primitives", nst, 2, U32, *(j ? &cm->st[i].b : &cm->st[i].a))  \
    X("stencil_vertices", nst, 4, U32, cm->st[i].v[j])                        \
    X("stencil_layers", nst, 1, U32, cm->st[i].layers)                        \
    X("stencil_deepest", nst, 1, U32, cm->st[i].deepest)                      \
    X("stencil_epoch", nst, 1, U32, cm->st[i].epoch)                          \
    X("stencil_dt1", nst, 1, F64, cm->st[i].dt1)

/* The scalars: "counters" (uint64) and "clocks" (double), in this order. */
#define CONTACT_COUNTERS(X) \
    X(free_slot) X(alive) X(epoch) X(runs) X(clock.speed_triggers) X(activations) X(retirements)
#define CONTACT_CLOCKS(X) X(clock.next_run) X(vcap) X(clock.vcap2)
#define NCOUNTERS 7
#define NCLOCKS 3

/* Room for the widest array of n rows (4 columns of 8 bytes at most). */
static void *scratch(size_t n) { return malloc(4 * 8 * n + 8); }

int avi_contact_save(const avi_contact_manager *cm, avi_state_io *io)
{
    void *buf = scratch(cm->npot > cm->nst ? cm->npot : cm->nst);
    int rc = buf ? 0 : -1;
#define SAVE(name, count, w, T, elem)                                                 \
    if (!rc) {                                                                        \
        AVI_STATE_C(T) *b = buf;                                                      \
        for (size_t i = 0; i < cm->count; i++)                                        \
            for (size_t j = 0; j < (w); j++) b[i * (w) + j] = (AVI_STATE_C(T))(elem); \
        rc = io->put(io, name, AVI_STATE_##T, cm->count, (w), buf);                   \
    }
    CONTACT_ARRAYS(SAVE)
#undef SAVE
#define ITEM(f) cm->f,
    uint64_t c[NCOUNTERS] = {CONTACT_COUNTERS(ITEM)};
    double s[NCLOCKS] = {CONTACT_CLOCKS(ITEM)};
#undef ITEM
    if (!rc) rc = io->put(io, "counters", AVI_STATE_U64, NCOUNTERS, 1, c);
    if (!rc) rc = io->put(io, "clocks", AVI_STATE_F64, NCLOCKS, 1, s);
    /* Layer 1's onset widths (contact_potential.h), apart from the table:
     * a checkpoint from before they existed has none (load_onsets). */
    if (!rc) {
        double *b = buf;
        for (size_t i = 0; i < cm->npot; i++) b[i] = cm->pot[i].onset;
        rc = io->put(io, "potential_onset", AVI_STATE_F64, cm->npot, 1, buf);
    }
    if (!rc) rc = io->put(io, "friction_work", AVI_STATE_F64, 1, 1, &cm->friction_work);
    /* Friction's owed-impulse cache (core/vertex_sync.h): it decides the
     * next friction works, so a resumed run needs it to match bit for bit. */
    if (!rc && cm->clocks.tick)
        rc = io->put(io, "friction_owed_tick", AVI_STATE_F64, cm->clocks.rows, 2, cm->clocks.tick) ||
             io->put(io, "friction_owed_gradient", AVI_STATE_F64, cm->clocks.ngrad, 1, cm->clocks.grad);
    free(buf);
    return rc ? -1 : 0;
}

/* Indices in range, so that no later access leaves the arrays. */
static int check(const avi_contact_manager *cm, avi_error *err)
{
    size_t nv = cm->model->nv;
    for (size_t i = 0; i < cm->npot; i++) {
        const avi_contact_potential *p = &cm->pot[i];
        int bad = p->type > AVI_STENCIL_EE || (p->prev != AVI_NO_SLOT && p->prev >= cm->npot) ||
                  (p->alive && (p->stencil >= cm->nst || p->layer < 1 || !isfinite(p->eta) || !isfinite(p->k) ||
                                !isfinite(p->dt) || !isfinite(p->t0)));
        for (int a = 0; a < 4; a++) bad |= p->alive && p->v[a] >= nv;
        if (bad) return avi_error_set(err, AVI_ERR_INPUT, "contact potential %zu is inconsistent", i);
    }
    for (size_t i = 0; i < cm->nst; i++) {
        const avi_contact_stencil *st = &cm->st[i];
        int bad = st->type > AVI_STENCIL_EE || (st->deepest != AVI_NO_SLOT && st->deepest >= cm->npot) ||
                  !isfinite(st->dt1);
        for (int a = 0; a < 4; a++) bad |= st->v[a] >= nv;
        if (bad) return avi_error_set(err, AVI_ERR_INPUT, "contact stencil %zu is inconsistent", i);
    }
    if ((cm->free_slot != AVI_NO_SLOT && cm->free_slot >= cm->npot) || cm->alive > cm->npot ||
        !isfinite(cm->clock.next_run))
        return avi_error_set(err, AVI_ERR_INPUT, "the contact manager's counters are inconsistent");
    return AVI_OK;
}

/* Each potential's onset width. A checkpoint written before layer 1 had a
 * smooth onset has none: every potential keeps Harmon's kinked law (0), the
 * law it was stepped with, until its stencil's next crossing of layer 1
 * chooses a width (contact_manager.c, plan_crossing). Of another size: an
 * error. */
static int load_onsets(avi_contact_manager *cm, avi_state_io *io, avi_error *err)
{
    for (size_t i = 0; i < cm->npot; i++) cm->pot[i].onset = 0.0;
    long n = io->count(io, "potential_onset");
    if (n < 0) return AVI_OK;
    double *b = n == (long)cm->npot ? malloc((cm->npot ? cm->npot : 1) * sizeof *b) : NULL;
    if (!b || io->get(io, "potential_onset", AVI_STATE_F64, cm->npot, b)) {
        free(b);
        return avi_error_set(err, AVI_ERR_INPUT, "contact: potential_onset unreadable or of another size");
    }
    int bad = 0;
    for (size_t i = 0; i < cm->npot; i++) {
        cm->pot[i].onset = b[i];
        bad |= cm->pot[i].alive && !(b[i] >= 0.0 && isfinite(b[i]));
    }
    free(b);
    return bad ? avi_error_set(err, AVI_ERR_INPUT, "contact: potential_onset is negative or not finite") : AVI_OK;
}

/* The owed-impulse cache, when this run keeps one (contact.friction > 0).
 * A checkpoint without it (written before the cache existed, or by a run
 * without friction) leaves every row empty: the resumed run takes each
 * gradient afresh, a second-order difference from the run that wrote it.
 * Of another size (another model): an error. */
static int load_owed_cache(avi_contact_manager *cm, avi_state_io *io, avi_error *err)
{
    avi_vertex_clocks *c = &cm->clocks;
    if (!c->tick) return AVI_OK;
    long nt = io->count(io, "friction_owed_tick"), ng = io->count(io, "friction_owed_gradient");
    if (nt < 0 && ng < 0) return AVI_OK;
    if (nt != (long)(2 * c->rows) || ng != (long)c->ngrad || io->get(io, "friction_owed_tick", AVI_STATE_F64, 2 * c->rows, c->tick) ||
        io->get(io, "friction_owed_gradient", AVI_STATE_F64, c->ngrad, c->grad))
        return avi_error_set(err, AVI_ERR_INPUT, "contact: friction_owed_tick or friction_owed_gradient "
                                                 "missing, unreadable or of another size");
    for (size_t r = 0; r < c->rows; r++) /* an empty row, or a tick index k >= 0 and a step h > 0 */
        if (!(isnan(c->tick[2 * r]) && isnan(c->tick[2 * r + 1])) &&
            !(c->tick[2 * r] >= 0.0 && c->tick[2 * r] < 1e300 && c->tick[2 * r + 1] > 0.0 && isfinite(c->tick[2 * r + 1])))
            return avi_error_set(err, AVI_ERR_INPUT, "contact: friction_owed_tick row %zu is invalid", r);
    for (size_t g = 0; g < c->ngrad; g++)
        if (!isfinite(c->grad[g])) return avi_error_set(err, AVI_ERR_INPUT, "contact: friction_owed_gradient is not finite");
    return AVI_OK;
}

int avi_contact_load(avi_contact_manager *cm, avi_state_io *io, avi_error *err)
{
    long np = io->count(io, "potential_type"), ns = io->count(io, "stencil_type");
    if (np < 0 || ns < 0) return avi_error_set(err, AVI_ERR_INPUT, "contact: no potentials or stencils");
    if (avi_contact_reserve(cm, (size_t)np, (size_t)ns)) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    void *buf = scratch((size_t)(np > ns ? np : ns));
    if (!buf) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    cm->npot = (size_t)np;
    cm->nst = (size_t)ns;
    int rc = 0;
#define LOAD(name, count, w, T, elem)                                                          \
    if (!rc && !(rc = io->get(io, name, AVI_STATE_##T, cm->count * (w), buf))) {               \
        const AVI_STATE_C(T) *b = buf;                                                         \
        for (size_t i = 0; i < cm->count; i++)                                                 \
            for (size_t j = 0; j < (w); j++) elem = b[i * (w) + j];                            \
    }
    CONTACT_ARRAYS(LOAD)
#undef LOAD
    uint64_t c[NCOUNTERS];
    double s[NCLOCKS];
    if (!rc) rc = io->get(io, "counters", AVI_STATE_U64, NCOUNTERS, c) || io->get(io, "clocks", AVI_STATE_F64, NCLOCKS, s);
    free(buf);
    if (rc) return avi_error_set(err, AVI_ERR_INPUT, "contact: an array is missing or of another size");
    size_t k = 0;
#define ITEM(f) cm->f = c[k++];
    CONTACT_COUNTERS(ITEM)
#undef ITEM
    k = 0;
#define ITEM(f) cm->f = s[k++];
    CONTACT_CLOCKS(ITEM)
#undef ITEM
    if (avi_contact_reindex(cm)) return avi_error_set(err, AVI_ERR_RUN, "out of memory");
    int st = check(cm, err);
    if (st) return st;
    /* Each vertex's summed layers (contact_manager.c, layers_changed). */
    memset(cm->layer_sum, 0, cm->model->nv * sizeof *cm->layer_sum);
    for (size_t i = 0; i < cm->npot; i++)
        for (int a = 0; a < 4 && cm->pot[i].alive; a++)
            cm->layer_sum[cm->pot[i].v[a]] += (uint64_t)cm->pot[i].layer * cm->pot[i].layer * cm->pot[i].layer;
    /* Friction's running work; a checkpoint from before friction existed
     * has none (no friction was done). Read last: an absent optional array
     * must not be taken for the cause of another failure. */
    cm->friction_work = 0.0;
    if (io->count(io, "friction_work") == 1 && io->get(io, "friction_work", AVI_STATE_F64, 1, &cm->friction_work))
        return avi_error_set(err, AVI_ERR_INPUT, "contact: friction_work unreadable");
    if (!isfinite(cm->friction_work))
        return avi_error_set(err, AVI_ERR_INPUT, "contact: friction_work is not finite");
    int rc_onset = load_onsets(cm, io, err);
    if (rc_onset) return rc_onset;
    return load_owed_cache(cm, io, err);
}
