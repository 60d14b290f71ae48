/* Creating and advancing synchronous engines. */
#include "sync/sync_internal.h"
#include "core/incidence.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int sync_advance(avi_engine *e, double t_stop);
static void sync_destroy(avi_engine *e);

/* The checkpoint state: the step count ("sync_step") and, with the DCR
 * contact stage, its friction work ("dcr_friction_work"); the vertex
 * records are the engine's. */
static int sync_save(const avi_engine *e, avi_state_io *io)
{
    const struct avi_sync *s = e->sync;
    /* A synchronous run keeps no clocks: the format's queue is empty. */
    if (io->put(io, "queue_time", AVI_STATE_F64, 0, 1, NULL) || io->put(io, "queue_id_step", AVI_STATE_U32, 0, 2, NULL))
        return -1;
    if (io->put(io, "sync_step", AVI_STATE_U64, 1, 1, &s->step)) return -1;
    return s->dcr ? io->put(io, "dcr_friction_work", AVI_STATE_F64, 1, 1, avi_dcr_friction_work(s->dcr)) : 0;
}

static int sync_load(avi_engine *e, avi_state_io *io, avi_error *err)
{
    struct avi_sync *s = e->sync;
    long nq = io->count(io, "queue_time");
    if (nq < 0 && io->get(io, "queue_time", AVI_STATE_F64, 0, NULL)) return avi_error_set(err, AVI_ERR_INPUT, "no queue_time");
    if (nq != 0) return avi_error_set(err, AVI_ERR_INPUT, "a synchronous run's checkpoint holds %ld clocks", nq);
    uint64_t step;
    if (io->get(io, "sync_step", AVI_STATE_U64, 1, &step)) return avi_error_set(err, AVI_ERR_INPUT, "no sync_step");
    if (step >= UINT64_C(1) << 63) /* counters are int64 in the output */
        return avi_error_set(err, AVI_ERR_INPUT, "sync_step = %llu is not below 2^63", (unsigned long long)step);
    s->step = step;
    s->force_valid = 0; /* sync-explicit4 recomputes its force from the loaded positions */
    /* Absent in checkpoints from before DCR friction: none was done. */
    if (s->dcr && io->count(io, "dcr_friction_work") == 1) {
        double *w = avi_dcr_friction_work(s->dcr);
        if (io->get(io, "dcr_friction_work", AVI_STATE_F64, 1, w) || !(*w >= 0.0) || !isfinite(*w))
            return avi_error_set(err, AVI_ERR_INPUT, "dcr_friction_work is unreadable or not a finite work >= 0");
    }
    return AVI_OK;
}

static void sync_owed_clock(const avi_engine *e, double *t_next, uint32_t *n, double *h);
static void sync_contact_observe(const avi_engine *e, double t, double *min_distance, double *friction_work);
static int sync_set_damping(avi_engine *e, double kd);
static void sync_stats(const avi_engine *e, avi_sync_stats *out);
/* The row of every synchronous integrator (src/sync/engine_create.c):
 * avi_sync_step picks the step of opt.type. */
const avi_stepper_ops avi_sync_stepper = {avi_sync_engine_create, sync_advance,      sync_save,
                                          sync_load,              sync_destroy,      sync_set_damping,
                                          sync_stats,             sync_owed_clock,   sync_contact_observe};

avi_sync_options avi_default_sync_options(void)
{
    avi_sync_options o;
    memset(&o, 0, sizeof o);
    o.type = AVI_INTEGRATOR_SYNC_EXPLICIT;
    o.alpha = 0.5;
    o.tolerance = 1e-10;
    o.max_iterations = 50;
    o.linear_solver = AVI_SOLVER_CHOLMOD;
    return o;
}

static avi_engine *fail(avi_error *err, avi_status st, const char *msg)
{
    avi_error_set(err, st, "%s", msg);
    return NULL;
}

/* Arrays of the Newton solves, from one allocation. */
static int alloc_work(struct avi_sync *s, size_t nrec, size_t nc)
{
    size_t n = nrec ? nrec : 1;
    size_t count = 10 * n + 5 * n + nc * n;
    s->block = calloc(3 * count, sizeof(double));
    if (!s->block) return -1;
    double (*p)[3] = (double (*)[3])s->block;
    s->q0 = p; p += n;
    s->v = p; p += n;
    s->b = p; p += n;
    s->r = p; p += n;
    s->d = p; p += n;
    s->xa = p; p += n;
    s->xb = p; p += n;
    s->vt = p; p += n;
    s->rt = p; p += n;
    s->ab = p; p += n;
    s->w = p; p += 5 * n;
    s->cols = p;
    return 0;
}

avi_engine *avi_sync_engine_create(avi_model *m, const avi_sync_options *opt, avi_error *err)
{
    if (!m || !m->finalized) return fail(err, AVI_ERR_INPUT, "synchronous engine needs a finalized model");
    avi_sync_options o = *opt;
    if (o.type <= AVI_INTEGRATOR_AVI || o.type >= AVI_INTEGRATOR_COUNT)
        return fail(err, AVI_ERR_INPUT, "not a synchronous integrator type");
    if (!(o.alpha >= 0.0 && o.alpha <= 1.0)) return fail(err, AVI_ERR_INPUT, "alpha must be in [0, 1]");
    if (!(o.tolerance > 0.0) || !isfinite(o.tolerance)) return fail(err, AVI_ERR_INPUT, "tolerance must be positive");
    if (o.max_iterations < 1) return fail(err, AVI_ERR_INPUT, "max_iterations must be at least 1");
    if (!(o.damping >= 0.0) || !isfinite(o.damping)) return fail(err, AVI_ERR_INPUT, "damping must be >= 0 and finite");
    if ((unsigned)o.linear_solver > AVI_SOLVER_LU) return fail(err, AVI_ERR_INPUT, "unknown linear solver");
    /* LU treats the Newton matrix as unsymmetric: no PSD fallback for the
     * minimizer and no use to the constrained solve's Schur complement. */
    if (o.linear_solver == AVI_SOLVER_LU && (o.type != AVI_INTEGRATOR_SYNC_ROOTFIND || o.constraint_count))
        return fail(err, AVI_ERR_INPUT, "linear solver lu is for sync-rootfind without constraints only");
    if (o.constraint_count && !o.constraints) return fail(err, AVI_ERR_INPUT, "constraint_count without constraints");
    /* Contact is resolved by the DCR stage (dcr.c) after the steps of dcr,
     * sync-explicit and sync-implicit; the others would let the bodies pass
     * through each other without a word. */
    if (m->has_contact && !avi_sync_handles_contact(o.type))
        return fail(err, AVI_ERR_INPUT, "this synchronous integrator does not handle contact (dcr, sync-explicit and "
                                        "sync-implicit do); the model has contact enabled");
    /* sync-explicit4 composes velocity-Verlet substeps, one of them
     * backward in time (w0 < 0): a dissipative or a SHAKE substep would not
     * compose to a fourth-order variational map. Refused, not approximated. */
    if (o.type == AVI_INTEGRATOR_SYNC_EXPLICIT4 && o.damping != 0.0)
        return fail(err, AVI_ERR_INPUT, "sync-explicit4 does not handle damping (use sync-explicit or sync-implicit)");
    if (o.type == AVI_INTEGRATOR_SYNC_EXPLICIT4 && o.constraint_count)
        return fail(err, AVI_ERR_INPUT, "sync-explicit4 does not handle constraints (use sync-explicit or "
                                        "sync-implicit)");
    /* The explicit updates (sync-explicit, dcr) step every record, edge DOFs
     * included, with the gradients of the kinds table; the implicit ones
     * and damping assemble Hessians (core/damping.c), which a kind without
     * the damped flag would not have: refused (every elastic kind has one). */
    avi_kind undamped = avi_model_undamped_kind(m);
    int explicit_step = o.type == AVI_INTEGRATOR_SYNC_EXPLICIT || o.type == AVI_INTEGRATOR_DCR ||
                        o.type == AVI_INTEGRATOR_SYNC_EXPLICIT4;
    if (undamped != AVI_KIND_COUNT && (!explicit_step || o.damping != 0.0)) {
        char msg[200];
        snprintf(msg, sizeof msg, "%s does not handle %s potentials; use integrator.type avi, sync-explicit or "
                 "dcr without damping", o.damping != 0.0 ? "damping" : "this synchronous integrator",
                 avi_kind_name(undamped));
        return fail(err, AVI_ERR_INPUT, msg);
    }
    if (!(o.h > 0.0)) {
        /* The smallest step of any potential: stable for every one of them. */
        double h = INFINITY;
        for (int k = 0; k < AVI_KIND_COUNT; k++) {
            if (!avi_model_potential_count(m, (avi_kind)k)) continue;
            double lo, hi;
            avi_model_time_step_range(m, (avi_kind)k, &lo, &hi);
            if (lo < h) h = lo;
        }
        if (!isfinite(h)) return fail(err, AVI_ERR_INPUT, "model has no potential to take a time step from");
        o.h = h;
    }
    if (!isfinite(o.h)) return fail(err, AVI_ERR_INPUT, "synchronous step must be positive and finite");
    avi_engine *e = calloc(1, sizeof *e);
    struct avi_sync *s = calloc(1, sizeof *s);
    /* Forces on every record: the vertices and the edge DOFs (model_internal.h). */
    if (s) s->force = malloc((avi_model_record_count(m) ? avi_model_record_count(m) : 1) * sizeof *s->force);
    if (!e || !s || !s->force || alloc_work(s, avi_model_record_count(m), o.constraint_count)) {
        free(e);
        if (s) {
            free(s->force);
            free(s->block);
        }
        free(s);
        return fail(err, AVI_ERR_RUN, "out of memory");
    }
    e->model = m;
    e->beat_left = AVI_HEARTBEAT_PASSES;
    e->min_step = o.h; /* every step is h */
    e->sync = s;
    e->stepper = &avi_sync_stepper;
    e->damping = o.damping;
    avi_error local;
    if (avi_constraints_init(&s->con, o.constraints, o.constraint_count, m, &local)) {
        avi_engine_destroy(e);
        return fail(err, local.status, local.message);
    }
    o.constraints = NULL; /* copied into s->con */
    s->opt = o;
    if (s->con.n) {
        for (size_t i = 0; i < m->nv; i++) v3_copy(s->q0[i], m->vert[i].x);
        double g = avi_constraints_violation(&s->con, (const double (*)[3])s->q0);
        if (!(g <= 1e-6)) {
            char msg[160];
            snprintf(msg, sizeof msg, "the initial positions violate a constraint (|g| / length = %.3g)", g);
            avi_engine_destroy(e);
            return fail(err, AVI_ERR_INPUT, msg);
        }
    }
    if ((o.type == AVI_INTEGRATOR_DCR || m->has_contact) && !(s->dcr = avi_dcr_create(m))) {
        avi_engine_destroy(e);
        return fail(err, AVI_ERR_RUN, "out of memory");
    }
    int newton = o.type == AVI_INTEGRATOR_SYNC_IMPLICIT || o.type == AVI_INTEGRATOR_SYNC_ROOTFIND ||
                 o.type == AVI_INTEGRATOR_IMPLICIT_EULER;
    if (newton && !(s->A = avi_sync_matrix_create(m, s->con.c, s->con.n))) {
        avi_engine_destroy(e);
        return fail(err, AVI_ERR_RUN, "out of memory");
    }
    return e;
}

static void sync_destroy(avi_engine *e)
{
    struct avi_sync *s = e->sync;
    if (!s) return;
    avi_sync_matrix_destroy(s->A);
    avi_dcr_destroy(s->dcr);
    avi_constraints_free(&s->con);
    avi_model_pass_destroy(s->pass);
    free(s->force);
    free(s->block);
    free(s);
}

static void sync_contact_observe(const avi_engine *e, double t, double *min_distance, double *friction_work)
{
    if (!e->sync->dcr) return;
    *min_distance = avi_dcr_min_distance(e->sync->dcr, e->model, t);
    *friction_work = *avi_dcr_friction_work(e->sync->dcr);
}

double avi_engine_sync_step(const avi_engine *e) { return e->sync ? e->sync->opt.h : 0.0; }

/* sync-explicit4 refuses damping (see avi_sync_engine_create); the others
 * read it from their options. */
static int sync_set_damping(avi_engine *e, double kd)
{
    if (kd > 0.0 && e->sync->opt.type == AVI_INTEGRATOR_SYNC_EXPLICIT4)
        return avi_engine_fail(e, AVI_ERR_INPUT, "sync-explicit4 does not handle damping");
    e->sync->opt.damping = kd;
    return AVI_OK;
}

static void sync_stats(const avi_engine *e, avi_sync_stats *out) { *out = e->sync->stats; }

/* The explicit update (and dcr's, the same central differences with
 * contact jumps after the step) leaves mid-step velocities like the AVI
 * with one clock (t_next = step h). The others end every step
 * on the grid with the discrete momentum p_k, which the observers read
 * as it is: output times on the grid see the integrator's own state. */
static void sync_owed_clock(const avi_engine *e, double *t_next, uint32_t *n, double *h)
{
    const struct avi_sync *s = e->sync;
    *t_next = (double)s->step * s->opt.h;
    *n = (uint32_t)(s->step > UINT32_MAX ? UINT32_MAX : s->step);
    *h = s->opt.type == AVI_INTEGRATOR_SYNC_EXPLICIT || s->opt.type == AVI_INTEGRATOR_DCR ? s->opt.h : 0.0;
}

int avi_sync_handles_contact(avi_integrator_type type)
{
    return type == AVI_INTEGRATOR_DCR || type == AVI_INTEGRATOR_SYNC_EXPLICIT || type == AVI_INTEGRATOR_SYNC_IMPLICIT;
}

static int sync_advance(avi_engine *e, double t_stop)
{
    struct avi_sync *s = e->sync;
    double h = s->opt.h;
    /* with the contact stage, every integrator lands on t_{k+1} */
    int explicit = s->opt.type == AVI_INTEGRATOR_SYNC_EXPLICIT && !s->dcr;
    /* events count gradient evaluations: sync-explicit4 makes three a step */
    uint64_t per_step = s->opt.type == AVI_INTEGRATOR_SYNC_EXPLICIT4 ? 3 : 1;
    for (;;) {
        /* The explicit update kicks at t_k and drifts lazily, like the AVI:
         * it runs every kick with t_k < t_stop. The others land on t_{k+1}
         * and run every step with t_{k+1} <= t_stop, allowing for round-off
         * in output times, so that an output time on the grid reads
         * (q_k, p_k) itself. */
        if (explicit ? !((double)s->step * h < t_stop) : !((double)(s->step + 1) * h <= t_stop + 1e-9 * h)) break;
        if (e->beat) e->beat(e, (double)s->step * h, e->beat_user); /* a step outweighs the call */
        if (e->stop && *e->stop) {
            /* A step boundary: the state is that of time step * h. */
            double t = (double)s->step * h;
            if (t > e->time) e->time = t;
            return AVI_INTERRUPTED;
        }
        int rc = s->dcr ? avi_sync_step_dcr(e, s) : avi_sync_step(e, s);
        if (rc != AVI_OK) {
            /* Every failure names its time (the Newton solver's do not). */
            if (!strstr(e->err.message, "t = ")) {
                char why[sizeof e->err.message];
                snprintf(why, sizeof why, "%s", e->err.message);
                avi_sync_fail(e, "%s (the step from t = %.17g s, h = %g s)", why, (double)s->step * h, h);
            }
            return rc;
        }
        for (int k = 0; k < AVI_KIND_COUNT; k++) e->events[k] += per_step * avi_model_potential_count(e->model, (avi_kind)k);
        s->step++;
        s->stats.steps++;
    }
    if (t_stop > e->time) e->time = t_stop;
    return AVI_OK;
}
