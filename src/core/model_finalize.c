/* Finalizing a model: vertex checks, inverse masses, gravity potentials and
 * every potential's time step. */
#include "core/model_internal.h"
#include "core/damping.h"
#include "core/time_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

avi_time_step avi_default_time_step(void)
{
    avi_time_step r;
    memset(&r, 0, sizeof r);
    r.rule = AVI_DT_STABILITY;
    /* 0.25 rather than the synchronous 0.5-0.9: asynchronous steps can
     * excite resonances (Fong, Darve and Lew 2008), and 0.5 let a graded
     * shell's energy grow in tests/physics/test_conservation.c. */
    r.safety = 0.25;
    r.neighbor_ratio = 1.0;
    r.delta = 0.1;
    /* Steps rounded down to 16 levels per octave (at most 4.4 % lower):
     * potentials on one level tick as one clock group, in memory order,
     * which is what lets the AVI run graded meshes at 0.84-1.00 of the ideal
     * speed-up over synchronous stepping, against 0.61-0.80 with exact
     * steps (bench/README.md, "AVI against synchronous stepping"). */
    r.levels_per_octave = 16;
    return r;
}

int avi_time_step_set_kind_fixed(avi_time_step *ts, avi_kind kind, double dt)
{
    if (!ts || (unsigned)kind >= AVI_KIND_COUNT || !(dt >= 0.0) || !isfinite(dt)) return -1;
    avi_kind_step *free_slot = NULL;
    for (int i = 0; i < AVI_KIND_FIXED_MAX; i++) {
        avi_kind_step *e = &ts->kind_fixed[i];
        if (e->dt != 0.0 && e->kind == kind) {
            e->dt = dt;
            return 0;
        }
        if (e->dt == 0.0 && !free_slot) free_slot = e;
    }
    if (dt == 0.0) return 0;
    if (!free_slot) return -1;
    free_slot->kind = kind;
    free_slot->dt = dt;
    return 0;
}

double avi_time_step_kind_fixed(const avi_time_step *ts, avi_kind kind)
{
    for (int i = 0; ts && i < AVI_KIND_FIXED_MAX; i++)
        if (ts->kind_fixed[i].dt != 0.0 && ts->kind_fixed[i].kind == kind) return ts->kind_fixed[i].dt;
    return 0.0;
}

/* The kinds whose steps the rule sets and that set the vertices' steps:
 * the elastic ones (gravity follows them, contact its layers). */
static int elastic(int kind) { return (avi_kind_flags((unsigned)kind) & AVI_KIND_ELASTIC) != 0; }

static double *dt_slot(avi_model *m, avi_kind kind, size_t i)
{
#define DT_SLOT(K, type, array, ...) case K: return &m->array[i].dt;
    switch (kind) { AVI_POTENTIAL_KINDS(DT_SLOT) default: return NULL; }
#undef DT_SLOT
}

/* omega^2 of a potential: the larger of the values at rest and in the initial
 * state (a pre-stretched body can be stiffer than at rest). The stencil's
 * mass matrix M_S gives each vertex's mass in equal shares to the potentials
 * of the kind that touch it, so that, as in the element eigenvalue theorem
 * (Irons 1970), the largest frequency of the assembled kind is bounded by the
 * largest stencil frequency; full vertex masses would overestimate the stable
 * step by about the square root of the vertex valence. The kind's descriptor
 * gives omega^2 (its omega2) or its Hessian (the stencil eigenvalue); an
 * auxiliary record's rest position is its initial state. NaN for a kind
 * with neither (give it a fixed step). */
static double omega2_at(const avi_kind_desc *d, const void *rec, int n, const double (*x)[3], const double *im)
{
    if (d->omega2) return d->omega2(rec, x, im);
    if (!d->hessian || n > 4) return NAN;
    double H[144];
    d->hessian(rec, x, H);
    return avi_stencil_omega2(H, n, im);
}

static double omega2(const avi_model *m, avi_kind kind, size_t i, const uint32_t *valence)
{
    const avi_kind_desc *d = avi_kind_desc_of(kind);
    const void *rec = avi_kind_record(m, kind, i);
    const uint32_t *v;
    int n = avi_model_stencil(m, kind, i, &v);
    double X[AVI_STENCIL_MAX][3], x[AVI_STENCIL_MAX][3], im[AVI_STENCIL_MAX];
    for (int a = 0; a < n; a++) {
        uint32_t r = v[a];
        v3_copy(X[a], r < m->nv ? m->rest[r] : m->vert[r].x);
        v3_copy(x[a], m->vert[r].x);
        im[a] = m->vert[r].inv_mass * valence[r];
    }
    double w_rest = omega2_at(d, rec, n, (const double (*)[3])X, im);
    double w_init = omega2_at(d, rec, n, (const double (*)[3])x, im);
    return w_rest > w_init ? w_rest : w_init;
}

/* The cfl rule, for kinds whose descriptor has an inradius: delta r / c,
 * c the potential's wave speed (model.c keeps it while building). */
static double cfl(const avi_model *m, avi_kind kind, size_t i, double delta)
{
    const uint32_t *v;
    int n = avi_model_stencil(m, kind, i, &v);
    double X[AVI_STENCIL_MAX][3];
    for (int a = 0; a < n; a++) v3_copy(X[a], m->rest[v[a]]);
    return delta * avi_kind_desc_of(kind)->inradius((const double (*)[3])X) / m->wave_c[kind][i];
}

/* Step levels: each step the rule gave (not the fixed ones) becomes
 * dt_max 2^(-k / L) with the smallest k that does not exceed it, dt_max the
 * largest such step. Steps only shrink, so stability holds; clocks on one
 * level share every event time, and ties run in (kind, index) order, so a
 * level's events sweep the potential arrays in memory order (multirate
 * stepping with power-of-two levels, as N-body codes bin their steps).
 * Costs up to 2^(1/L) - 1 more events (bench/README.md, "Step levels"). */
/* The step of potential i of `kind` when the rule set it, NULL when it is
 * fixed (per kind or per body). */
static double *rule_step(avi_model *m, const avi_time_step *rule, avi_kind kind, size_t i)
{
    if (avi_time_step_kind_fixed(rule, kind) > 0.0) return NULL;
    const uint32_t *v;
    avi_model_stencil(m, kind, i, &v);
    if (m->bodies[m->body_of[v[0]]].fixed_dt > 0.0) return NULL;
    return dt_slot(m, kind, i);
}

/* The level step at or below dt: top 2^(-k/L) with the smallest such k. */
static double level_step(double top, double L, double dt)
{
    double level = fmax(0.0, ceil(L * log2(top / dt)));
    if (!isfinite(level)) return dt; /* a step ratio beyond double range */
    /* The level from log2, then corrected for its rounding: the step is a
     * function of the level alone (equal bits on a level). */
    while (level > 0.0 && top * exp2(-(level - 1.0) / L) <= dt) level -= 1.0;
    while (top * exp2(-level / L) > dt) level += 1.0;
    return top * exp2(-level / L);
}

/* vertex_min (the smallest step on each vertex, used by gravity and
 * contact) is rounded the same way, so it stays the smallest level step on
 * the vertex (rounding is monotone). */
static void quantize_steps(avi_model *m, const avi_time_step *rule, double *vertex_min)
{
    double top = 0.0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0; elastic(k) && i < avi_model_potential_count(m, (avi_kind)k); i++) {
            const double *dt = rule_step(m, rule, (avi_kind)k, i);
            if (dt && *dt > top) top = *dt;
        }
    if (!(top > 0.0) || !isfinite(top)) return;
    const double L = rule->levels_per_octave;
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0; elastic(k) && i < avi_model_potential_count(m, (avi_kind)k); i++) {
            double *dt = rule_step(m, rule, (avi_kind)k, i);
            if (dt) *dt = level_step(top, L, *dt);
        }
    for (size_t v = 0; v < m->nv; v++)
        if (vertex_min[v] > 0.0 && isfinite(vertex_min[v])) vertex_min[v] = level_step(top, L, vertex_min[v]);
}

/* Steps that differ only by rounding become one step. Elements of one shape
 * (the cells of a structured mesh, a layer of a graded one) get steps that
 * differ in the last bits, from their coordinates' rounding; their clocks
 * would tick apart, each group a few potentials, where one step puts them in
 * one clock group (src/core/clock_groups.h). Each step the rule gave becomes
 * the smallest step within STEP_MERGE_TOLERANCE (relative) above which it
 * lies: sorted steps are cut where one passes its run's first step by more.
 * vertex_min goes through the same map. The map is monotone and never
 * raises a step, so stability and the neighbour cap hold. On the graded
 * benchmark meshes rounding differences are below 1e-14 and real ones above
 * 1e-4 (bench/README.md, "AVI against synchronous stepping"). */
#define STEP_MERGE_TOLERANCE 1e-12

static int compare_doubles(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The merged step of dt: the start of its run in sorted[0..n), run[] the
 * run start of each sorted step (equal steps share a run). */
static double merged_step(const double *sorted, const double *run, size_t n, double dt)
{
    const double *hit = bsearch(&dt, sorted, n, sizeof *sorted, compare_doubles);
    return hit ? run[hit - sorted] : dt;
}

static int merge_rounding_equal_steps(avi_model *m, const avi_time_step *rule, double *vertex_min)
{
    size_t n = m->nv;
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        if (elastic(k)) n += avi_model_potential_count(m, (avi_kind)k);
    double *sorted = malloc((n ? n : 1) * sizeof *sorted), *run = malloc((n ? n : 1) * sizeof *run);
    if (!sorted || !run) {
        free(sorted);
        free(run);
        return avi_model_fail(m, AVI_ERR_RUN, "out of memory");
    }
    size_t c = 0;
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0; elastic(k) && i < avi_model_potential_count(m, (avi_kind)k); i++) {
            const double *dt = rule_step(m, rule, (avi_kind)k, i);
            if (dt) sorted[c++] = *dt;
        }
    for (size_t v = 0; v < m->nv; v++)
        if (vertex_min[v] > 0.0 && isfinite(vertex_min[v])) sorted[c++] = vertex_min[v];
    qsort(sorted, c, sizeof *sorted, compare_doubles);
    for (size_t a = 0; a < c; a++)
        run[a] = a > 0 && sorted[a] <= run[a - 1] * (1.0 + STEP_MERGE_TOLERANCE) ? run[a - 1] : sorted[a];
    for (int k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0; elastic(k) && i < avi_model_potential_count(m, (avi_kind)k); i++) {
            double *dt = rule_step(m, rule, (avi_kind)k, i);
            if (dt) *dt = merged_step(sorted, run, c, *dt);
        }
    for (size_t v = 0; v < m->nv; v++) vertex_min[v] = merged_step(sorted, run, c, vertex_min[v]);
    free(sorted);
    free(run);
    return 0;
}

static int check_rule(avi_model *m, const avi_time_step *r)
{
    if (r->rule != AVI_DT_STABILITY && r->rule != AVI_DT_CFL && r->rule != AVI_DT_FIXED)
        return avi_model_fail(m, AVI_ERR_INPUT, "time_step.rule %d is not an avi_dt_rule (0 stability, 1 cfl, 2 fixed)",
                              (int)r->rule);
    if (r->rule == AVI_DT_STABILITY && !(r->safety > 0.0 && isfinite(r->safety)))
        return avi_model_fail(m, AVI_ERR_INPUT, "time_step.safety must be positive (got %g)", r->safety);
    if (r->rule == AVI_DT_CFL && !(r->delta > 0.0 && isfinite(r->delta)))
        return avi_model_fail(m, AVI_ERR_INPUT, "time_step.delta must be positive (got %g)", r->delta);
    if (r->rule == AVI_DT_FIXED && !(r->fixed > 0.0 && isfinite(r->fixed)))
        return avi_model_fail(m, AVI_ERR_INPUT, "time_step.fixed must be positive (got %g)", r->fixed);
    if (!(r->neighbor_ratio >= 0.0) || !isfinite(r->neighbor_ratio) || (r->neighbor_ratio > 0.0 && r->neighbor_ratio < 1.0))
        return avi_model_fail(m, AVI_ERR_INPUT, "time_step.neighbor_ratio must be 0 (off) or >= 1 (got %g)",
                              r->neighbor_ratio);
    if (r->levels_per_octave < 0 || r->levels_per_octave > AVI_MAX_LEVELS_PER_OCTAVE)
        return avi_model_fail(m, AVI_ERR_INPUT, "time_step.levels_per_octave must be in 0..%d (got %d)",
                              AVI_MAX_LEVELS_PER_OCTAVE, r->levels_per_octave);
    for (int i = 0; i < AVI_KIND_FIXED_MAX; i++) {
        const avi_kind_step *e = &r->kind_fixed[i];
        if (e->dt == 0.0) continue;
        if ((unsigned)e->kind >= AVI_KIND_COUNT)
            return avi_model_fail(m, AVI_ERR_INPUT, "time_step.kind_fixed[%d]: kind %d is not an avi_kind", i, (int)e->kind);
        if (!(e->dt > 0.0 && isfinite(e->dt)))
            return avi_model_fail(m, AVI_ERR_INPUT, "fixed time step of kind %s must be positive (got %g)",
                                  avi_kind_name(e->kind), e->dt);
        for (int j = 0; j < i; j++)
            if (r->kind_fixed[j].dt != 0.0 && r->kind_fixed[j].kind == e->kind)
                return avi_model_fail(m, AVI_ERR_INPUT, "fixed time step of kind %s given twice",
                                      avi_kind_name(e->kind));
    }
    return 0;
}

static int finalize_vertices(avi_model *m)
{
    for (size_t i = 0; i < m->nv; i++) {
        avi_vertex *p = &m->vert[i];
        const avi_body *b = &m->bodies[m->body_of[i]];
        size_t local = i - b->first_vertex;
        if (!v3_isfinite(p->x) || !v3_isfinite(p->v))
            return avi_model_fail(m, AVI_ERR_INPUT, "body '%s': vertex %zu has a non-finite state", b->name, local);
        p->tau = 0.0;
        if (p->inv_mass == 0.0) {
            p->v[0] = p->v[1] = p->v[2] = 0.0;
        } else if (m->mass[i] > 0.0 && isfinite(m->mass[i])) {
            p->inv_mass = 1.0 / m->mass[i];
        } else {
            return avi_model_fail(m, AVI_ERR_INPUT,
                                  "body '%s': vertex %zu has no mass (it is in no element and has no particle mass)",
                                  b->name, local);
        }
    }
    return 0;
}

/* Appends the auxiliary records after the mesh vertices and points the
 * mid-edge stencils' auxiliary slots at them (once: a failed finalize may
 * be retried). */
static int place_aux(avi_model *m)
{
    if (m->aux_placed || m->naux == 0) return 0;
    size_t n = m->nv + m->naux;
    if (n > UINT32_MAX) return avi_model_fail(m, AVI_ERR_INPUT, "too many vertices and edge DOFs (%zu)", n);
    avi_vertex *v = aligned_alloc(64, ((n * sizeof *v + 63) / 64) * 64);
    if (!v) return avi_model_fail(m, AVI_ERR_RUN, "out of memory");
    if (m->nv) memcpy(v, m->vert, m->nv * sizeof *v);
    memcpy(v + m->nv, m->aux, m->naux * sizeof *v);
    /* An edge DOF whose triangles have every vertex pinned has nothing to
     * drive it from rest: pinned too, so that a pinned shell (pinned: box)
     * schedules no bending event, as with hinges. */
    for (size_t i = 0; i < m->naux; i++)
        if (v[m->nv + i].inv_mass != 0.0) v[m->nv + i].inv_mass = -v[m->nv + i].inv_mass; /* undecided */
    for (size_t i = 0; i < m->nmidedge; i++) {
        const avi_midedge *p = &m->midedges[i];
        int driven = 0;
        for (int a = 0; a < 6; a++)
            driven |= !(a >= 3 && p->mode[a - 3] == AVI_MIDEDGE_CLAMPED) && m->vert[p->v[a]].inv_mass != 0.0;
        for (int k = 0; k < 3 && driven; k++)
            if (p->sign[k]) v[m->nv + p->v[6 + k]].inv_mass = fabs(v[m->nv + p->v[6 + k]].inv_mass);
    }
    for (size_t i = 0; i < m->naux; i++)
        if (v[m->nv + i].inv_mass < 0.0) v[m->nv + i].inv_mass = 0.0;
    free(m->vert);
    m->vert = v;
    m->cap_v = n;
    for (size_t i = 0; i < m->nmidedge; i++) {
        avi_midedge *p = &m->midedges[i];
        for (int k = 0; k < 3; k++) {
            if (p->sign[k]) p->v[6 + k] += (uint32_t)m->nv;
            if (p->mode[k] == AVI_MIDEDGE_CLAMPED) p->v[3 + k] += (uint32_t)m->nv;
        }
    }
    m->aux_placed = 1;
    return 0;
}

static int add_gravity(avi_model *m)
{
    if (!m->has_gravity) return 0;
    free(m->gravity); /* a failed earlier finalize may have built them */
    m->gravity = malloc((m->nv ? m->nv : 1) * sizeof *m->gravity);
    if (!m->gravity) return avi_model_fail(m, AVI_ERR_RUN, "out of memory");
    m->ngravity = 0;
    for (size_t i = 0; i < m->nv; i++) {
        if (m->vert[i].inv_mass == 0.0) continue;
        avi_gravity *g = &m->gravity[m->ngravity++];
        g->v[0] = (uint32_t)i;
        v3_scale(g->mg, m->g, m->mass[i]);
        g->dt = 0.0;
    }
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* k_1 = median over contact vertices of m (2 safety / dt)^2 / V, dt the
 * smallest elastic step at the vertex and V = AVI_CONTACT_VALENCE: even
 * with V layer-1 stencils pressing on a vertex, contact is about as stiff as
 * the elements around it, and layer 1's stability step is about theirs (it
 * ticks at it, and 4 times as often in a stack or a fast crossing:
 * ONSET_RESOLUTION in contact/contact_manager.c). */
static int auto_contact_stiffness(avi_model *m)
{
    size_t n = 0, cap = 3 * m->ncontact_tri + m->ncontact_point;
    double *k = malloc((cap ? cap : 1) * sizeof *k);
    if (!k) return avi_model_fail(m, AVI_ERR_RUN, "out of memory");
    for (size_t i = 0; i < cap; i++) {
        uint32_t v = i < 3 * m->ncontact_tri ? m->contact_tri[i / 3][i % 3] : m->contact_point[i - 3 * m->ncontact_tri];
        double dt = m->vertex_dt[v];
        if (m->vert[v].inv_mass == 0.0 || !isfinite(dt)) continue;
        double w = 2.0 * m->contact_safety / dt;
        k[n++] = m->mass[v] * w * w / AVI_CONTACT_VALENCE;
    }
    if (n == 0) {
        free(k);
        return avi_model_fail(m, AVI_ERR_INPUT,
                              "contact.stiffness: no contact vertex has an elastic time step to derive it from; "
                              "give a value");
    }
    qsort(k, n, sizeof *k, cmp_double);
    m->contact.stiffness = k[n / 2];
    free(k);
    return 0;
}

int avi_model_finalize(avi_model *m, const avi_time_step *rule)
{
    if (m->finalized) return avi_model_fail(m, AVI_ERR_INPUT, "model already finalized");
    avi_time_step def = avi_default_time_step();
    if (!rule) rule = &def;
    if (check_rule(m, rule) || finalize_vertices(m) || place_aux(m) || add_gravity(m)) return m->err.status;

    /* Elastic potentials first; gravity follows the vertices' elastic steps. */
    double largest = 0.0;
    int unresolved = 0;
    size_t nrec = avi_model_record_count(m); /* stencils reach the auxiliary records */
    double *vertex_min = malloc((nrec ? nrec : 1) * sizeof *vertex_min);
    if (!vertex_min) return avi_model_fail(m, AVI_ERR_RUN, "out of memory");
    uint32_t *valence = malloc((nrec ? nrec : 1) * sizeof *valence);
    if (!valence) {
        free(vertex_min);
        return avi_model_fail(m, AVI_ERR_RUN, "out of memory");
    }
    for (size_t i = 0; i < nrec; i++) vertex_min[i] = INFINITY;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        avi_kind kind = (avi_kind)k;
        if (!elastic(k)) continue;
        const avi_kind_desc *desc = avi_kind_desc_of(kind);
        const double kind_dt = avi_time_step_kind_fixed(rule, kind);
        size_t n = avi_model_potential_count(m, kind);
        memset(valence, 0, nrec * sizeof *valence);
        for (size_t i = 0; i < n; i++) {
            const uint32_t *v;
            int nsv = avi_model_stencil(m, kind, i, &v);
            for (int a = 0; a < nsv; a++) valence[v[a]]++;
        }
        for (size_t i = 0; i < n; i++) {
            const uint32_t *v;
            int nsv = avi_model_stencil(m, kind, i, &v);
            double body_dt = m->bodies[m->body_of[v[0]]].fixed_dt;
            double dt;
            if (kind_dt > 0.0) dt = kind_dt;
            else if (body_dt > 0.0) dt = body_dt;
            else if (rule->rule == AVI_DT_FIXED) dt = rule->fixed;
            else if (rule->rule == AVI_DT_CFL && desc->inradius)
                dt = cfl(m, kind, i, rule->delta);
            else if (!desc->omega2 && !desc->hessian) {
                free(vertex_min);
                free(valence);
                m->failed_kind = (int)kind;
                m->failed_index = i;
                return avi_model_fail(m, AVI_ERR_INPUT,
                                      "%s %zu: the kind has no stable-step rule (no Hessian); give "
                                      "time_step.per_kind.%s or time_step.fixed",
                                      desc->name, i, desc->name);
            } else {
                double safety = rule->rule == AVI_DT_STABILITY ? rule->safety : def.safety;
                double w2 = omega2(m, kind, i, valence);
                /* No dynamics (w2 = 0): resolved below; a NaN w2 comes
                 * from a non-finite stiffness or mass and fails. */
                dt = w2 > 0.0 ? safety * 2.0 / sqrt(w2) : isnan(w2) ? 0.0 : NAN;
            }
            if (isnan(dt)) {
                unresolved++;
            } else if (!(dt > 0.0) || !isfinite(dt)) {
                free(vertex_min);
                free(valence);
                m->failed_kind = (int)kind;
                m->failed_index = i;
                return avi_model_fail(m, AVI_ERR_INPUT, "%s %zu: time step %g is not positive and finite",
                                      avi_kind_name(kind), i, dt);
            } else {
                if (dt > largest) largest = dt;
                for (int a = 0; a < nsv; a++)
                    if (dt < vertex_min[v[a]]) vertex_min[v[a]] = dt;
            }
            *dt_slot(m, kind, i) = dt;
        }
    }
    free(valence);
    double smallest = INFINITY;
    for (size_t i = 0; i < m->nv; i++)
        if (vertex_min[i] < smallest) smallest = vertex_min[i];

    /* Potentials that cannot move anything (all stencil vertices pinned, zero
     * stiffness) tick at the model's largest step. */
    if (unresolved) {
        if (!(largest > 0.0)) {
            free(vertex_min);
            return avi_model_fail(m, AVI_ERR_INPUT,
                                  "no potential has a finite stable time step: give time_step.fixed");
        }
        for (int k = 0; k < AVI_MODEL_KINDS; k++) {
            if (!elastic(k)) continue;
            size_t n = avi_model_potential_count(m, (avi_kind)k);
            for (size_t i = 0; i < n; i++) {
                double *dt = dt_slot(m, (avi_kind)k, i);
                if (isnan(*dt)) *dt = largest;
            }
        }
    }
    /* Neighbour cap: no potential ticks slower than neighbor_ratio times the
     * fastest potential on its vertices (one pass, from the uncapped minima,
     * so the cap does not spread across the mesh). A slow potential on
     * vertices that fast neighbours shake samples that motion too coarsely:
     * a graded shell with uncapped hinges gained energy steadily. Explicitly
     * fixed steps are left alone. */
    if (rule->neighbor_ratio > 0.0 && rule->rule != AVI_DT_FIXED) {
        for (int k = 0; k < AVI_MODEL_KINDS; k++) {
            if (!elastic(k) || avi_time_step_kind_fixed(rule, (avi_kind)k) > 0.0) continue;
            size_t n = avi_model_potential_count(m, (avi_kind)k);
            for (size_t i = 0; i < n; i++) {
                const uint32_t *v;
                int nsv = avi_model_stencil(m, (avi_kind)k, i, &v);
                if (m->bodies[m->body_of[v[0]]].fixed_dt > 0.0) continue;
                double cap = INFINITY;
                for (int a = 0; a < nsv; a++)
                    if (vertex_min[v[a]] < cap) cap = vertex_min[v[a]];
                cap *= rule->neighbor_ratio;
                double *dt = dt_slot(m, (avi_kind)k, i);
                if (*dt > cap) *dt = cap;
            }
        }
    }
    if (rule->levels_per_octave > 0 && rule->rule != AVI_DT_FIXED) quantize_steps(m, rule, vertex_min);
    else if (rule->rule != AVI_DT_FIXED && merge_rounding_equal_steps(m, rule, vertex_min)) {
        free(vertex_min);
        return m->err.status;
    }
    for (size_t i = 0; i < m->ngravity; i++) {
        double dt = avi_time_step_kind_fixed(rule, AVI_KIND_GRAVITY);
        double body_dt = m->bodies[m->body_of[m->gravity[i].v[0]]].fixed_dt;
        if (!(dt > 0.0)) dt = body_dt > 0.0 ? body_dt : rule->rule == AVI_DT_FIXED ? rule->fixed : 0.0;
        if (!(dt > 0.0)) dt = isfinite(vertex_min[m->gravity[i].v[0]]) ? vertex_min[m->gravity[i].v[0]] : smallest;
        if (!(dt > 0.0) || !isfinite(dt)) {
            free(vertex_min);
            return avi_model_fail(m, AVI_ERR_INPUT,
                                  "gravity needs a time step: no elastic potential sets one; give time_step.fixed");
        }
        m->gravity[i].dt = dt;
    }
    free(m->vertex_dt);
    m->vertex_dt = vertex_min;
    m->contact_safety = rule->rule == AVI_DT_STABILITY ? rule->safety : def.safety;
    m->neighbor_ratio = rule->rule == AVI_DT_FIXED ? 0.0 : rule->neighbor_ratio;
    m->contact_fixed_dt = avi_time_step_kind_fixed(rule, AVI_KIND_CONTACT);
    if (m->has_contact && m->contact.stiffness == 0.0 && auto_contact_stiffness(m)) return m->err.status;
    m->finalized = 1;
    /* The wave speeds served the cfl rule alone: 8 B a potential. */
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        free(m->wave_c[k]);
        m->wave_c[k] = NULL;
    }
    return 0;
}
