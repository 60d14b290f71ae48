/* Building a model: vertices, bodies, potentials, lumped masses. */
#include "core/model_internal.h"
#include "base/error.h"
#include "base/grow.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void avi_lame(double youngs, double poisson, double *mu, double *lambda)
{
    *mu = youngs / (2.0 * (1.0 + poisson));
    *lambda = youngs * poisson / ((1.0 + poisson) * (1.0 - 2.0 * poisson));
}

int avi_model_fail(avi_model *m, avi_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    avi_error_vset(&m->err, status, fmt, ap);
    va_end(ap);
    return status;
}

avi_model *avi_model_create(void)
{
    avi_model *m = calloc(1, sizeof(avi_model));
    if (m) m->failed_kind = -1;
    return m;
}

int avi_model_failed_potential(const avi_model *m, avi_kind *kind, size_t *index)
{
    if (m->failed_kind < 0) return 0;
    *kind = (avi_kind)m->failed_kind;
    *index = m->failed_index;
    return 1;
}

void avi_model_destroy(avi_model *m)
{
    if (!m) return;
    for (int b = 0; b < m->nbody; b++) free(m->bodies[b].name);
    free(m->bodies);
    free(m->vert);
    free(m->rest);
    free(m->mass);
    free(m->body_of);
#define FREE_RECORDS(K, type, array, ...) free(m->array);
    AVI_POTENTIAL_KINDS(FREE_RECORDS)
#undef FREE_RECORDS
    for (int k = 0; k < AVI_MODEL_KINDS; k++) free(m->wave_c[k]);
    free(m->aux);
    free(m->contact_tri);
    free(m->contact_point);
    free(m->vertex_dt);
    free(m);
}

const avi_error *avi_model_error(const avi_model *m) { return &m->err; }

/* Grows *arr (element size `size`) to hold at least `need` elements; the
 * model's arrays start at 64. */
static int grow(void **arr, size_t *cap, size_t need, size_t size) { return avi_grow(arr, cap, need, size, 64); }

static int oom(avi_model *m) { return avi_model_fail(m, AVI_ERR_RUN, "out of memory"); }

static int not_finalized(avi_model *m)
{
    if (m->finalized) return avi_model_fail(m, AVI_ERR_INPUT, "model already finalized");
    return 0;
}

int avi_model_add_body(avi_model *m, const char *name)
{
    if (not_finalized(m)) return -1;
    if (!name) return (avi_model_fail(m, AVI_ERR_INPUT, "body %d: name is NULL", m->nbody), -1);
    if (m->nbody == m->cap_body) {
        int c = m->cap_body ? 2 * m->cap_body : 4;
        avi_body *b = realloc(m->bodies, (size_t)c * sizeof *b);
        if (!b) return (oom(m), -1);
        m->bodies = b;
        m->cap_body = c;
    }
    avi_body *b = &m->bodies[m->nbody];
    memset(b, 0, sizeof *b);
    b->name = strdup(name);
    b->first_vertex = m->nv;
    if (!b->name) return (oom(m), -1);
    return m->nbody++;
}

int avi_model_set_body_time_step(avi_model *m, int body, double dt)
{
    if (body < 0 || body >= m->nbody) return avi_model_fail(m, AVI_ERR_INPUT, "no body %d", body);
    if (!(dt > 0.0) || !isfinite(dt))
        return avi_model_fail(m, AVI_ERR_INPUT, "body '%s': time step %g must be positive and finite",
                              m->bodies[body].name, dt);
    m->bodies[body].fixed_dt = dt;
    return 0;
}

int64_t avi_model_add_vertex(avi_model *m, int body, const double rest[3])
{
    if (not_finalized(m)) return -1;
    if (body < 0 || body >= m->nbody) return (avi_model_fail(m, AVI_ERR_INPUT, "no body %d", body), -1);
    if (!v3_isfinite(rest))
        return (avi_model_fail(m, AVI_ERR_INPUT, "body '%s': vertex %zu has a non-finite position",
                              m->bodies[body].name, m->nv - m->bodies[body].first_vertex), -1);
    if (m->nv == m->cap_v) {
        size_t c = m->cap_v ? 2 * m->cap_v : 256;
        avi_vertex *v = aligned_alloc(64, c * sizeof *v);
        if (!v) return (oom(m), -1);
        if (m->vert) memcpy(v, m->vert, m->nv * sizeof *v);
        free(m->vert);
        m->vert = v;
        double (*r)[3] = realloc(m->rest, c * sizeof *r);
        if (!r) return (oom(m), -1);
        m->rest = r;
        double *ms = realloc(m->mass, c * sizeof *ms);
        if (!ms) return (oom(m), -1);
        m->mass = ms;
        int32_t *bo = realloc(m->body_of, c * sizeof *bo);
        if (!bo) return (oom(m), -1);
        m->body_of = bo;
        m->cap_v = c;
    }
    size_t i = m->nv++;
    avi_vertex *v = &m->vert[i];
    memset(v, 0, sizeof *v);
    v3_copy(v->x, rest);
    v->inv_mass = 1.0; /* marks "free"; the real value is set when finalizing */
    v3_copy(m->rest[i], rest);
    m->mass[i] = 0.0;
    m->body_of[i] = body;
    return (int64_t)i;
}

static int check_vertex(avi_model *m, uint32_t v)
{
    if (v >= m->nv) return avi_model_fail(m, AVI_ERR_INPUT, "vertex %u out of range (model has %zu)", v, m->nv);
    return 0;
}

int avi_model_set_state(avi_model *m, uint32_t v, const double x[3], const double vel[3])
{
    if (not_finalized(m) || check_vertex(m, v)) return m->err.status;
    if ((x && !v3_isfinite(x)) || (vel && !v3_isfinite(vel)))
        return avi_model_fail(m, AVI_ERR_INPUT, "vertex %u: non-finite initial state", v);
    if (x) v3_copy(m->vert[v].x, x);
    if (vel) v3_copy(m->vert[v].v, vel);
    return 0;
}

int avi_model_add_mass(avi_model *m, uint32_t v, double mass)
{
    if (not_finalized(m) || check_vertex(m, v)) return m->err.status;
    if (!(mass > 0.0) || !isfinite(mass))
        return avi_model_fail(m, AVI_ERR_INPUT, "vertex %u: mass %g must be positive and finite", v, mass);
    /* Two finite masses may overflow; finalizing would then call it "no mass". */
    double sum = m->mass[v] + mass;
    if (!isfinite(sum)) {
        const avi_body *b = &m->bodies[m->body_of[v]];
        return avi_model_fail(m, AVI_ERR_INPUT, "body '%s': vertex %zu (model vertex %u): mass %g + %g overflows",
                              b->name, (size_t)(v - b->first_vertex), v, m->mass[v], mass);
    }
    m->mass[v] = sum;
    return 0;
}

int avi_model_pin(avi_model *m, uint32_t v)
{
    if (not_finalized(m) || check_vertex(m, v)) return m->err.status;
    m->vert[v].inv_mass = 0.0;
    return 0;
}

/* "body 'name': <what> i (vertices a, b, c)" prefix for element errors, with
 * body-local indices. */
static void element_label(const avi_model *m, char *buf, size_t len, const char *what, size_t index,
                          const uint32_t *v, int n)
{
    int body = m->body_of[v[0]];
    size_t first = m->bodies[body].first_vertex;
    int k = snprintf(buf, len, "body '%s': %s %zu (vertices", m->bodies[body].name, what, index);
    for (int a = 0; a < n && k > 0 && (size_t)k < len; a++)
        k += snprintf(buf + k, len - (size_t)k, "%s %zu", a ? "," : "", (size_t)(v[a] - first));
    if (k > 0 && (size_t)k < len) snprintf(buf + k, len - (size_t)k, ")");
}

/* Stencil indices must exist and be distinct. */
static int check_stencil(avi_model *m, const uint32_t *v, int n, const char *what)
{
    for (int a = 0; a < n; a++) {
        if (check_vertex(m, v[a])) return m->err.status;
        for (int b = 0; b < a; b++)
            if (v[a] == v[b])
                return avi_model_fail(m, AVI_ERR_INPUT, "%s repeats vertex %u", what, v[a]);
    }
    return 0;
}

static void gather_rest(const avi_model *m, const uint32_t *v, int n, double X[][3])
{
    for (int a = 0; a < n; a++) v3_copy(X[a], m->rest[v[a]]);
}

int avi_model_add_spring(avi_model *m, uint32_t a, uint32_t b, double stiffness, double rest)
{
    uint32_t v[2] = {a, b};
    if (not_finalized(m) || check_stencil(m, v, 2, "spring")) return m->err.status;
    if (!(stiffness >= 0.0) || !isfinite(stiffness) || !isfinite(rest))
        return avi_model_fail(m, AVI_ERR_INPUT, "spring %zu (vertices %u, %u): stiffness %g / rest %g invalid",
                              m->nspring, a, b, stiffness, rest);
    if (grow((void **)&m->springs, &m->springs_cap, m->nspring + 1, sizeof(avi_spring))) return oom(m);
    avi_spring *s = &m->springs[m->nspring++];
    s->v[0] = a;
    s->v[1] = b;
    s->k = stiffness;
    if (rest < 0.0) {
        double d[3];
        v3_sub(d, m->rest[b], m->rest[a]);
        rest = v3_norm(d);
    }
    s->rest = rest;
    s->dt = 0.0;
    return 0;
}

static int check_shell_material(avi_model *m, const avi_shell_material *mat)
{
    if (!mat || !(mat->youngs > 0.0) || !(mat->density > 0.0) || !(mat->thickness > 0.0) ||
        !(mat->poisson >= 0.0 && mat->poisson < 0.5) || !isfinite(mat->youngs) || !isfinite(mat->density) ||
        !isfinite(mat->thickness))
        return avi_model_fail(m, AVI_ERR_INPUT,
                              "shell material needs youngs > 0, density > 0, thickness > 0, 0 <= poisson < 0.5");
    return 0;
}

int avi_model_add_membrane(avi_model *m, uint32_t a, uint32_t b, uint32_t c, const avi_shell_material *mat)
{
    uint32_t v[3] = {a, b, c};
    if (not_finalized(m) || check_stencil(m, v, 3, "triangle") || check_shell_material(m, mat)) return m->err.status;
    if (grow((void **)&m->membranes, &m->membranes_cap, m->nmembrane + 1, sizeof(avi_membrane))) return oom(m);
    size_t cap = m->membranes_cap;
    double *wc = realloc(m->wave_c[AVI_KIND_MEMBRANE], cap * sizeof *wc);
    if (!wc) return oom(m);
    m->wave_c[AVI_KIND_MEMBRANE] = wc;
    double X[3][3];
    gather_rest(m, v, 3, X);
    avi_membrane *p = &m->membranes[m->nmembrane];
    avi_body *body = &m->bodies[m->body_of[a]];
    double area = avi_membrane_init(p, X, mat);
    if (!(area > 0.0)) {
        char label[256];
        element_label(m, label, sizeof label, "triangle", body->triangle_count, v, 3);
        return avi_model_fail(m, AVI_ERR_INPUT, "%s has zero area", label);
    }
    p->v[0] = a; p->v[1] = b; p->v[2] = c;
    p->dt = 0.0;
    /* Plane-stress dilatational wave speed sqrt(E / (rho (1 - nu^2))). */
    wc[m->nmembrane] = sqrt(mat->youngs / (mat->density * (1.0 - mat->poisson * mat->poisson)));
    double lumped = mat->density * mat->thickness * area / 3.0;
    for (int k = 0; k < 3; k++) m->mass[v[k]] += lumped;
    m->nmembrane++;
    body->triangle_count++;
    return 0;
}

int avi_model_add_hinge(avi_model *m, uint32_t a, uint32_t b, uint32_t c, uint32_t d, const avi_shell_material *mat)
{
    uint32_t v[4] = {a, b, c, d};
    if (not_finalized(m) || check_stencil(m, v, 4, "hinge") || check_shell_material(m, mat)) return m->err.status;
    if (grow((void **)&m->hinges, &m->hinges_cap, m->nhinge + 1, sizeof(avi_hinge))) return oom(m);
    double X[4][3];
    gather_rest(m, v, 4, X);
    avi_hinge *h = &m->hinges[m->nhinge];
    if (avi_hinge_init(h, X, mat) != 0) {
        char label[256];
        element_label(m, label, sizeof label, "hinge", m->nhinge, v, 4);
        return avi_model_fail(m, AVI_ERR_INPUT, "%s is degenerate", label);
    }
    h->v[0] = a; h->v[1] = b; h->v[2] = c; h->v[3] = d;
    h->dt = 0.0;
    m->nhinge++;
    return 0;
}

/* Interior edges of a triangle list: sort (min, max, triangle) records and
 * pair equal edges; a third copy is a non-manifold edge. */
typedef struct { uint32_t lo, hi; uint32_t tri; uint8_t local; } edge_rec;

static int edge_cmp(const void *pa, const void *pb)
{
    const edge_rec *a = pa, *b = pb;
    if (a->lo != b->lo) return a->lo < b->lo ? -1 : 1;
    if (a->hi != b->hi) return a->hi < b->hi ? -1 : 1;
    return a->tri < b->tri ? -1 : a->tri > b->tri;
}

/* The 3 count edge records of a triangle list, sorted so that the copies of
 * an edge are adjacent; NULL when out of memory. */
static edge_rec *sorted_edges(const uint32_t (*tri)[3], size_t count)
{
    edge_rec *e = malloc(3 * count * sizeof *e);
    if (!e) return NULL;
    for (size_t t = 0; t < count; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = tri[t][k], b = tri[t][(k + 1) % 3];
            edge_rec *r = &e[3 * t + k];
            r->lo = a < b ? a : b;
            r->hi = a < b ? b : a;
            r->tri = (uint32_t)t;
            r->local = (uint8_t)k;
        }
    qsort(e, 3 * count, sizeof *e, edge_cmp);
    return e;
}

/* Checks the run e[i..j) of copies of one edge: at most two triangles, and
 * two of them run it in opposite directions (a consistently oriented
 * surface). */
static int check_edge_run(avi_model *m, const uint32_t (*tri)[3], const edge_rec *e, size_t i, size_t j)
{
    int body = m->body_of[e[i].lo];
    size_t first = m->bodies[body].first_vertex;
    if (j - i > 2)
        return avi_model_fail(m, AVI_ERR_INPUT, "body '%s': edge (%zu, %zu) is shared by %zu triangles (non-manifold)",
                              m->bodies[body].name, (size_t)(e[i].lo - first), (size_t)(e[i].hi - first), j - i);
    if (j - i == 2 && tri[e[i + 1].tri][e[i + 1].local] != tri[e[i].tri][(e[i].local + 1) % 3]) {
        const uint32_t *t1 = tri[e[i].tri];
        int k1 = e[i].local;
        return avi_model_fail(m, AVI_ERR_INPUT,
                              "body '%s': triangles %u and %u have opposite orientations across edge (%zu, %zu)",
                              m->bodies[body].name, e[i].tri, e[i + 1].tri, (size_t)(t1[k1] - first),
                              (size_t)(t1[(k1 + 1) % 3] - first));
    }
    return 0;
}

/* Calls f on every edge of the triangles (its one or two copies e[0..n),
 * in edge order) after check_edge_run, until one fails. */
typedef int (*edge_fn)(avi_model *m, const uint32_t (*tri)[3], const edge_rec *e, size_t n, void *ctx);

static int for_each_edge(avi_model *m, const uint32_t (*tri)[3], size_t count, edge_fn f, void *ctx)
{
    edge_rec *e = sorted_edges(tri, count);
    if (!e) return oom(m);
    int rc = 0;
    for (size_t i = 0; i < 3 * count && rc == 0;) {
        size_t j = i + 1;
        while (j < 3 * count && e[j].lo == e[i].lo && e[j].hi == e[i].hi) j++;
        rc = check_edge_run(m, tri, e, i, j);
        if (rc == 0) rc = f(m, tri, e + i, j - i, ctx);
        i = j;
    }
    free(e);
    return rc;
}

/* An interior edge's hinge: triangle 1 runs a -> b, its wing is the third vertex. */
static int hinge_edge(avi_model *m, const uint32_t (*tri)[3], const edge_rec *e, size_t n, void *mat)
{
    if (n != 2) return 0;
    const uint32_t *t1 = tri[e[0].tri], *t2 = tri[e[1].tri];
    int k1 = e[0].local, k2 = e[1].local;
    return avi_model_add_hinge(m, t1[k1], t1[(k1 + 1) % 3], t1[(k1 + 2) % 3], t2[(k2 + 2) % 3], mat);
}

/* A new auxiliary record (see model_internal.h); its index or -1. */
static int64_t add_aux(avi_model *m, const double x[3], double inv_mass)
{
    if (grow((void **)&m->aux, &m->cap_aux, m->naux + 1, sizeof *m->aux)) return (oom(m), -1);
    avi_vertex *r = &m->aux[m->naux];
    memset(r, 0, sizeof *r);
    v3_copy(r->x, x);
    r->inv_mass = inv_mass;
    return (int64_t)m->naux++;
}

/* Fills the edge slots of the mid-edge triangles T at one edge e[0..n):
 * an interior edge gets the across vertex and one DOF record shared by its
 * two triangles, inertia I_e = beta rho h A_e l_e^2 (A_e a third of each
 * adjacent rest area, beta = 1/4: docs/research/bending/README.md 3.1,
 * mass scaling whose effect on a mode vanishes as (k l)^2); a boundary edge
 * is clamped (a pinned ghost record at the flat continuation of its rest
 * triangle, no DOF) when clamp_pinned is set and both its ends are pinned,
 * free otherwise (a DOF). */
typedef struct {
    const avi_shell_material *mat;
    int clamp_pinned;
    avi_midedge *T;
} midedge_ctx;

static int midedge_edge(avi_model *m, const uint32_t (*tri)[3], const edge_rec *e, size_t n, void *ctx)
{
    const midedge_ctx *c = ctx;
    double d[3], ae = 0.0;
    v3_sub(d, m->rest[e[0].hi], m->rest[e[0].lo]);
    for (size_t r = 0; r < n; r++) {
        double a[3], b[3], nn[3];
        const uint32_t *t = tri[e[r].tri];
        v3_sub(a, m->rest[t[1]], m->rest[t[0]]);
        v3_sub(b, m->rest[t[2]], m->rest[t[0]]);
        v3_cross(nn, a, b);
        ae += v3_norm(nn) / 6.0;
    }
    int clamped = n == 1 && c->clamp_pinned && m->vert[e[0].lo].inv_mass == 0.0 && m->vert[e[0].hi].inv_mass == 0.0;
    double zero[3] = {0, 0, 0};
    int64_t dof = clamped ? 0 : add_aux(m, zero, 1.0 / (0.25 * c->mat->density * c->mat->thickness * ae * v3_dot(d, d)));
    if (dof < 0) return m->err.status;
    for (size_t r = 0; r < n; r++) {
        avi_midedge *p = &c->T[e[r].tri];
        const uint32_t *t = tri[e[r].tri];
        int k = (e[r].local + 2) % 3; /* the edge (t[local], t[local + 1]) is opposite vertex local + 2 */
        uint32_t a = t[(k + 1) % 3], b = t[(k + 2) % 3];
        p->mode[k] = n == 2 ? AVI_MIDEDGE_INTERIOR : clamped ? AVI_MIDEDGE_CLAMPED : AVI_MIDEDGE_FREE;
        p->sign[k] = (int8_t)(clamped ? 0 : a < b ? 1 : -1);
        p->v[6 + k] = clamped ? t[k] : (uint32_t)dof;
        if (n == 2) {
            const edge_rec *o = &e[1 - r];
            p->v[3 + k] = tri[o->tri][(o->local + 2) % 3];
        } else if (clamped) {
            double g[3];
            for (int q = 0; q < 3; q++) g[q] = m->rest[a][q] + m->rest[b][q] - m->rest[t[k]][q];
            int64_t ghost = add_aux(m, g, 0.0);
            if (ghost < 0) return m->err.status;
            p->v[3 + k] = (uint32_t)ghost;
        } else {
            p->v[3 + k] = t[k];
        }
    }
    return 0;
}

/* Rest positions of a mid-edge stencil whose auxiliary slots still hold
 * aux indices. */
static void midedge_rest(const avi_model *m, const avi_midedge *p, double X[AVI_MIDEDGE_SLOTS][3])
{
    for (int s = 0; s < AVI_MIDEDGE_SLOTS; s++) {
        int i = s % 3;
        int aux = (s >= 6 && p->sign[i]) || (s >= 3 && s < 6 && p->mode[i] == AVI_MIDEDGE_CLAMPED);
        v3_copy(X[s], aux ? m->aux[p->v[s]].x : m->rest[p->v[s]]);
    }
}

static int add_midedges(avi_model *m, const uint32_t (*tri)[3], size_t count, const avi_shell_material *mat,
                        int clamp_pinned)
{
    if (m->aux_placed) return avi_model_fail(m, AVI_ERR_INPUT, "mid-edge bending added after a finalize attempt");
    if (grow((void **)&m->midedges, &m->midedges_cap, m->nmidedge + count, sizeof *m->midedges)) return oom(m);
    avi_midedge *T = &m->midedges[m->nmidedge];
    memset(T, 0, count * sizeof *T);
    for (size_t t = 0; t < count; t++)
        for (int k = 0; k < 3; k++) T[t].v[k] = tri[t][k];
    midedge_ctx ctx = {mat, clamp_pinned, T};
    if (for_each_edge(m, tri, count, midedge_edge, &ctx)) return m->err.status;
    for (size_t t = 0; t < count; t++) {
        double X[AVI_MIDEDGE_SLOTS][3];
        midedge_rest(m, &T[t], X);
        if (avi_midedge_init(&T[t], (const double (*)[3])X, mat) != 0) {
            char label[256];
            element_label(m, label, sizeof label, "bending triangle", t, T[t].v, 3);
            return avi_model_fail(m, AVI_ERR_INPUT, "%s or a neighbour across its edges is degenerate", label);
        }
        T[t].dt = 0.0;
    }
    m->nmidedge += count;
    return 0;
}

int avi_model_add_shell_mesh(avi_model *m, const uint32_t (*tri)[3], size_t count, const avi_shell_material *mat,
                             avi_bending bending, int clamp_pinned)
{
    if (not_finalized(m)) return m->err.status;
    if (bending != AVI_BENDING_NONE && bending != AVI_BENDING_HINGE && bending != AVI_BENDING_MIDEDGE)
        return avi_model_fail(m, AVI_ERR_INPUT, "bending model %d is not an avi_bending (0 none, 1 hinge, 2 midedge)",
                              (int)bending);
    for (size_t t = 0; t < count; t++)
        if (avi_model_add_membrane(m, tri[t][0], tri[t][1], tri[t][2], mat)) return m->err.status;
    if (bending == AVI_BENDING_NONE || count == 0) return 0;
    if (bending == AVI_BENDING_HINGE) return for_each_edge(m, tri, count, hinge_edge, (void *)mat);
    return add_midedges(m, tri, count, mat, clamp_pinned);
}

int avi_model_add_triangle_mesh(avi_model *m, const uint32_t (*tri)[3], size_t count,
                                const avi_shell_material *mat, int bending)
{
    return avi_model_add_shell_mesh(m, tri, count, mat, bending ? AVI_BENDING_HINGE : AVI_BENDING_NONE, 0);
}

int avi_model_add_tet(avi_model *m, uint32_t a, uint32_t b, uint32_t c, uint32_t d, const avi_solid_material *mat)
{
    uint32_t v[4] = {a, b, c, d};
    if (not_finalized(m) || check_stencil(m, v, 4, "tetrahedron")) return m->err.status;
    if (!mat || !(mat->youngs > 0.0) || !(mat->density > 0.0) || !(mat->poisson >= 0.0 && mat->poisson < 0.5) ||
        !isfinite(mat->youngs) || !isfinite(mat->density))
        return avi_model_fail(m, AVI_ERR_INPUT, "solid material needs youngs > 0, density > 0, 0 <= poisson < 0.5");
    if (grow((void **)&m->tets, &m->tets_cap, m->ntet + 1, sizeof(avi_tet))) return oom(m);
    double *wc = realloc(m->wave_c[AVI_KIND_TET], m->tets_cap * sizeof *wc);
    if (!wc) return oom(m);
    m->wave_c[AVI_KIND_TET] = wc;
    double X[4][3];
    gather_rest(m, v, 4, X);
    double mu, lambda;
    avi_lame(mat->youngs, mat->poisson, &mu, &lambda);
    avi_tet *t = &m->tets[m->ntet];
    avi_body *body = &m->bodies[m->body_of[a]];
    double vol = avi_tet_init(t, X, mu, lambda);
    if (!(vol > 0.0)) {
        char label[256];
        element_label(m, label, sizeof label, "tetrahedron", body->tet_count, v, 4);
        return avi_model_fail(m, AVI_ERR_INPUT, "%s has %s volume %g", label, vol < 0.0 ? "negative" : "zero", vol);
    }
    t->v[0] = a; t->v[1] = b; t->v[2] = c; t->v[3] = d;
    t->dt = 0.0;
    wc[m->ntet] = sqrt((lambda + 2.0 * mu) / mat->density);
    for (int k = 0; k < 4; k++) m->mass[v[k]] += mat->density * vol / 4.0;
    m->ntet++;
    body->tet_count++;
    return 0;
}

int avi_model_add_contact_triangles(avi_model *m, const uint32_t (*tri)[3], size_t n)
{
    if (not_finalized(m)) return m->err.status;
    if (grow((void **)&m->contact_tri, &m->cap_contact_tri, m->ncontact_tri + n, sizeof *m->contact_tri)) return oom(m);
    for (size_t t = 0; t < n; t++) {
        if (check_stencil(m, tri[t], 3, "contact triangle")) return m->err.status;
        memcpy(m->contact_tri[m->ncontact_tri++], tri[t], sizeof tri[t]);
    }
    return 0;
}

int avi_model_add_contact_point(avi_model *m, uint32_t v)
{
    if (not_finalized(m) || check_vertex(m, v)) return m->err.status;
    if (grow((void **)&m->contact_point, &m->cap_contact_point, m->ncontact_point + 1, sizeof *m->contact_point))
        return oom(m);
    m->contact_point[m->ncontact_point++] = v;
    return 0;
}

void avi_model_set_gravity(avi_model *m, const double g[3])
{
    v3_copy(m->g, g);
    m->has_gravity = g[0] != 0.0 || g[1] != 0.0 || g[2] != 0.0;
}

size_t avi_model_vertex_count(const avi_model *m) { return m->nv; }
int avi_model_body_count(const avi_model *m) { return m->nbody; }
const char *avi_model_body_name(const avi_model *m, int b) { return b >= 0 && b < m->nbody ? m->bodies[b].name : NULL; }
int avi_model_vertex_body(const avi_model *m, uint32_t v) { return v < m->nv ? m->body_of[v] : -1; }
double avi_model_vertex_mass(const avi_model *m, uint32_t v) { return v < m->nv ? m->mass[v] : 0.0; }

size_t avi_model_potential_count(const avi_model *m, avi_kind kind)
{
#define KIND_COUNT(K, type, array, count, ...) case K: return m->count;
    switch (kind) { AVI_POTENTIAL_KINDS(KIND_COUNT) default: return 0; }
#undef KIND_COUNT
}

double avi_model_time_step(const avi_model *m, avi_kind kind, size_t i)
{
    if (i >= avi_model_potential_count(m, kind)) return 0.0;
    return avi_kind_dt(kind, avi_kind_record(m, kind, i));
}

double avi_model_elastic_events(const avi_model *m, double interval, double h, double *count)
{
    double events = 0.0, n = 0.0;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++) {
        if (!(avi_kind_flags(k) & AVI_KIND_ELASTIC)) continue;
        size_t np = avi_model_potential_count(m, (avi_kind)k);
        n += (double)np;
        for (size_t i = 0; i < np; i++) {
            double dt = h > 0.0 ? h : avi_kind_dt(k, avi_kind_record(m, k, i));
            if (dt > 0.0) events += interval / dt;
        }
    }
    *count = n;
    return events;
}

void avi_model_time_step_range(const avi_model *m, avi_kind kind, double *min, double *max)
{
    size_t n = avi_model_potential_count(m, kind);
    double lo = 0.0, hi = 0.0;
    for (size_t i = 0; i < n; i++) {
        double dt = avi_model_time_step(m, kind, i);
        if (i == 0 || dt < lo) lo = dt;
        if (i == 0 || dt > hi) hi = dt;
    }
    *min = lo;
    *max = hi;
}
