/* The contact manager: activation and retirement of nested penalty layers
 * (Harmon, Vouga, Smith, Tamstorf, Grinspun 2009), see contact_manager.h. */
#include "contact/contact_manager.h"
#include "contact/contact_friction.h"
#include "base/error.h"
#include "base/grow.h"
#include "base/pool.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Share of eta_1 that layer-1 activation keeps as a safety margin: the
 * manager's window is the time the fastest vertex pair needs to close it. */
#define MARGIN_FRACTION 0.5
/* The speed cap is this factor above the fastest contact vertex. */
#define SPEED_HEADROOM 1.25
/* The candidate list covers this many manager windows, with this much
 * headroom on the speed cap before it must be rebuilt. */
#define COARSE_WINDOWS 10.0
#define COARSE_HEADROOM 1.5

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_edge(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

void avi_contact_destroy(avi_contact_manager *cm)
{
    if (!cm) return;
    avi_contact_surface_free(&cm->surf);
    free(cm->pot);
    free(cm->st);
    free(cm->hash);
    free(cm->x);
    free(cm->layer_sum);
    free(cm->coarse_vf);
    free(cm->coarse_ee);
    free(cm->skip_vf);
    free(cm->skip_ee);
    free(cm->due);
    free(cm->sort_keys);
    avi_broad_phase_free(&cm->bp);
    avi_vertex_clocks_free(&cm->clocks);
    free(cm);
}

int avi_contact_primitives(const avi_model *m, uint32_t **points, size_t *npoints, uint32_t (**edges)[2],
                           size_t *nedges)
{
    size_t nt = m->ncontact_tri;
    /* Points: every vertex of a contact triangle plus the contact points. */
    uint32_t *p = malloc((3 * nt + m->ncontact_point + 1) * sizeof *p);
    uint32_t (*e)[2] = malloc((3 * nt + 1) * sizeof *e);
    if (!p || !e) {
        free(p);
        free(e);
        return -1;
    }
    size_t np = 0;
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            uint32_t a = m->contact_tri[t][k], b = m->contact_tri[t][(k + 1) % 3];
            p[np++] = a;
            e[3 * t + k][0] = a < b ? a : b;
            e[3 * t + k][1] = a < b ? b : a;
        }
    for (size_t i = 0; i < m->ncontact_point; i++) p[np++] = m->contact_point[i];
    qsort(p, np, sizeof *p, cmp_u32);
    size_t u = 0;
    for (size_t i = 0; i < np; i++)
        if (u == 0 || p[i] != p[u - 1]) p[u++] = p[i];
    *npoints = u;
    qsort(e, 3 * nt, sizeof *e, cmp_edge);
    u = 0;
    for (size_t i = 0; i < 3 * nt; i++)
        if (u == 0 || cmp_edge(e[i], e[u - 1])) {
            e[u][0] = e[i][0];
            e[u][1] = e[i][1];
            u++;
        }
    *nedges = u;
    *points = p;
    *edges = e;
    return 0;
}

int avi_contact_surface_init(avi_contact_surface *s, const avi_model *m)
{
    memset(s, 0, sizeof *s);
    if (!m->has_contact) return 0;
    if (avi_contact_primitives(m, &s->points, &s->npoints, &s->edges, &s->nedges)) return -1;
    s->tris = (const uint32_t (*)[3])m->contact_tri;
    s->ntris = m->ncontact_tri;
    for (size_t e = 0; e < s->nedges; e++) {
        double d[3];
        v3_sub(d, m->rest[s->edges[e][1]], m->rest[s->edges[e][0]]);
        s->mean_edge += v3_norm(d) / (double)s->nedges;
    }
    return 0;
}

void avi_contact_surface_free(avi_contact_surface *s)
{
    free(s->points);
    free(s->edges);
    memset(s, 0, sizeof *s);
}

avi_contact_manager *avi_contact_create(const avi_model *m, avi_error *err)
{
    avi_contact_manager *cm = calloc(1, sizeof *cm);
    if (!cm) goto oom;
    cm->model = m;
    cm->x = malloc((m->nv ? m->nv : 1) * sizeof *cm->x);
    cm->layer_sum = calloc(m->nv + 1, sizeof *cm->layer_sum);
    if (!cm->x || !cm->layer_sum || avi_contact_surface_init(&cm->surf, m)) goto oom;

    cm->eta1 = m->contact.thickness;
    cm->eta_inf = m->contact.inner_thickness;
    cm->k1 = m->contact.stiffness;
    cm->safety = m->contact_safety;
    cm->neighbor_ratio = m->neighbor_ratio;
    cm->max_layers = m->contact.max_layers;
    cm->mu = m->contact.friction;
    if (cm->mu > 0.0 && (avi_vertex_clocks_build(&cm->clocks, m, AVI_KIND_CONTACT) ||
                         avi_vertex_clocks_keep(&cm->clocks, m, AVI_KIND_CONTACT)))
        goto oom;
    /* Cells about one edge long (at rest), and never below the search radius. */
    cm->cell = fmax(cm->surf.mean_edge, 2.0 * cm->eta1);
    /* With nothing moving, the manager still looks every 100 of the
     * smallest steps of a contact vertex. */
    double dt_min = INFINITY, im_max = 0.0;
    for (size_t i = 0; i < cm->surf.npoints; i++) {
        dt_min = fmin(dt_min, m->vertex_dt[cm->surf.points[i]]);
        im_max = fmax(im_max, m->vert[cm->surf.points[i]].inv_mass);
    }
    if (!isfinite(dt_min)) dt_min = im_max > 0.0 ? 2.0 * cm->safety / sqrt(cm->k1 * im_max) : 1.0;
    cm->window_max = 100.0 * dt_min;
    cm->free_slot = AVI_NO_SLOT;
    cm->clock.next_run = 0.0;
    cm->dt_min = INFINITY;
    cm->coarse_until = -INFINITY;
    return cm;
oom:
    avi_contact_destroy(cm);
    avi_error_set(err, AVI_ERR_RUN, "out of memory");
    return NULL;
}

/* ---- stencil table: (type, a, b) -> index, open addressing ---- */

static inline uint64_t stencil_hash(uint8_t type, uint32_t a, uint32_t b)
{
    uint64_t z = ((uint64_t)a << 32 | b) ^ ((uint64_t)type << 63);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static int hash_rebuild(avi_contact_manager *cm, size_t min_cap)
{
    size_t cap = 64;
    while (cap < 2 * min_cap) cap *= 2;
    if (cap != cm->hash_cap) {
        uint32_t *h = realloc(cm->hash, cap * sizeof *h);
        if (!h) return -1;
        cm->hash = h;
        cm->hash_cap = cap;
    }
    memset(cm->hash, 0, cm->hash_cap * sizeof *cm->hash);
    for (size_t i = 0; i < cm->nst; i++) {
        const avi_contact_stencil *s = &cm->st[i];
        size_t k = stencil_hash(s->type, s->a, s->b) & (cm->hash_cap - 1);
        while (cm->hash[k]) k = (k + 1) & (cm->hash_cap - 1);
        cm->hash[k] = (uint32_t)i + 1;
    }
    return 0;
}

/* Index of the stencil, created (with no layers) when absent; -1 when out
 * of memory. */
static long stencil_find(avi_contact_manager *cm, uint8_t type, uint32_t a, uint32_t b, const uint32_t v[4])
{
    if (2 * (cm->nst + 1) > cm->hash_cap && hash_rebuild(cm, cm->nst + 1)) return -1;
    size_t k = stencil_hash(type, a, b) & (cm->hash_cap - 1);
    while (cm->hash[k]) {
        const avi_contact_stencil *s = &cm->st[cm->hash[k] - 1];
        if (s->type == type && s->a == a && s->b == b) return (long)cm->hash[k] - 1;
        k = (k + 1) & (cm->hash_cap - 1);
    }
    if (AVI_GROW(cm->st, cm->cap_st, cm->nst + 1, 256)) return -1;
    avi_contact_stencil *s = &cm->st[cm->nst];
    memset(s, 0, sizeof *s);
    s->type = type;
    s->a = a;
    s->b = b;
    memcpy(s->v, v, sizeof s->v);
    s->deepest = AVI_NO_SLOT;
    s->dt1 = 0.0;
    cm->hash[k] = (uint32_t)cm->nst + 1;
    return (long)cm->nst++;
}

int avi_contact_reserve(avi_contact_manager *cm, size_t npot, size_t nst)
{
    if (npot > cm->cap_pot) {
        avi_contact_potential *p = realloc(cm->pot, npot * sizeof *p);
        if (!p) return -1;
        cm->pot = p;
        cm->cap_pot = npot;
    }
    if (nst > cm->cap_st) {
        avi_contact_stencil *s = realloc(cm->st, nst * sizeof *s);
        if (!s) return -1;
        cm->st = s;
        cm->cap_st = nst;
    }
    return 0;
}

int avi_contact_reindex(avi_contact_manager *cm) { return hash_rebuild(cm, cm->nst); }

/* Stability step of a stencil's layer 1, 2 safety / omega / resolution,
 * with omega^2 bounded by AVI_CONTACT_VALENCE k_1 (max inverse mass of side A +
 * of side B): the distance gradient has unit length on each side spread
 * over convex weights, and a vertex can be in that many overlapping
 * stencils at once (a vertex over a flat mesh is as close to every triangle
 * and edge around the nearest vertex). The neighbour cap of the time-step
 * rule applies as to elastic potentials. */
static double stencil_omega2(const avi_model *m, const avi_contact_manager *cm, const avi_contact_stencil *s)
{
    const avi_vertex *V = m->vert;
    double side_a, side_b;
    if (s->type == AVI_STENCIL_VF) {
        side_a = V[s->v[0]].inv_mass;
        side_b = fmax(V[s->v[1]].inv_mass, fmax(V[s->v[2]].inv_mass, V[s->v[3]].inv_mass));
    } else {
        side_a = fmax(V[s->v[0]].inv_mass, V[s->v[1]].inv_mass);
        side_b = fmax(V[s->v[2]].inv_mass, V[s->v[3]].inv_mass);
    }
    return AVI_CONTACT_VALENCE * cm->k1 * (side_a + side_b);
}
/* The layers' steps take the time-step rule's safety up to the default,
 * 0.25 (model_finalize.c), never above: a layer's step is set by how well
 * it resolves its onsets, not by its stability alone (each kinked onset
 * costs about 0.25 (omega_l dt_l)^2 of the energy through it, and layer 1
 * at its stability step crosses its smooth onset in about 2.5 steps only at
 * omega_1 dt_1 = 0.125). At safety 0.5 with the steps doubled the N = 8
 * ball (eta_1 = 5e-5) left up to +4.2e-3 of E0 over 0.16-0.24 m/s, at most
 * 4.7e-4 with this cap (docs/research/contact_energy.md); a smaller safety
 * shortens them as before. */
#define LAYER_SAFETY_MAX 0.25
static double stencil_step(const avi_model *m, const avi_contact_manager *cm, const avi_contact_stencil *s, double resolution)
{
    double w2 = stencil_omega2(m, cm, s);
    double dt = w2 > 0.0 ? 2.0 * fmin(cm->safety, LAYER_SAFETY_MAX) / (resolution * sqrt(w2)) : cm->window_max;
    if (cm->neighbor_ratio > 0.0) {
        double cap = INFINITY;
        for (int a = 0; a < 4; a++) cap = fmin(cap, m->vertex_dt[s->v[a]]);
        if (isfinite(cap) && dt > cm->neighbor_ratio * cap) dt = cm->neighbor_ratio * cap;
    }
    return dt;
}

/* Harmon's layer (layers 2 and deeper) has a kink at d = eta_l: its
 * stiffness jumps from 0 to k_l, which the stencil crosses at a random
 * phase of the layer's step; the leapfrog then keeps its energy only to
 * about 0.25 (omega_l dt_l)^2 of the energy through the layer, either sign,
 * per entry and exit (one mass through one such onset: 0.1-0.25 (omega h)^2
 * over the phases). At omega_l dt_l = 2 safety / sqrt(AVI_CONTACT_VALENCE)
 * = 0.125 that left up to 2.4e-3 of E0 on the ball of
 * docs/research/contact_energy.md; these layers step 4 times shorter
 * (s->dt1 is that step for layer 1, the reference of layer l's dt1 /
 * l^1.5). Layer 1 has a smooth onset instead (plan_crossing) and steps at its
 * stability step unless its stencil closes in on layer 2 or crosses fast. AVI_BENCH_ONSET_RESOLUTION
 * is a bench-only knob (bench/cost_of_accuracy.sh prices the rule with 1.0,
 * a physically invalid build); default builds never define it. */
#ifdef AVI_BENCH_ONSET_RESOLUTION
#define ONSET_RESOLUTION AVI_BENCH_ONSET_RESOLUTION
#else
#define ONSET_RESOLUTION 4.0
#endif
static double stencil_dt1(const avi_model *m, const avi_contact_manager *cm, const avi_contact_stencil *s)
{
    return stencil_step(m, cm, s, ONSET_RESOLUTION);
}

/* Layer 1 before a crossing (outside the layer, or at its first event: its
 * potential and kick are 0 whatever its law and step, so both may be
 * chosen for the crossing to come; the events so far are those of that
 * choice). The onset width: delta = ONSET_WIDTH |d'| / omega, d' the
 * stencil's closing rate and omega its layer-1 frequency bound (the
 * valence bound of its stability step, stencil_omega2), at most the zone
 * (eta_2, eta_1] where it is the deepest layer. 0.5 / omega is layer 1's
 * stability step at the default safety 0.25, so the stencil crosses the
 * onset in about 2.5 such steps whatever its speed; against one stencil's
 * own frequency (omega / 4) delta / s_max = 0.31 (s_max the kinked
 * layer's depth), where one mass through the layer keeps its energy to
 * about 1e-2 of the kink's error (bench/layer_onset.py; in the engine
 * 9.1e-6 of a particle's energy, test_particle_layer_onset_phases). Not
 * tied to the step actually taken, so that the law does not change with
 * the safety: 5 steps of dt left E + W of test_friction's sliding block
 * 2.1x worse at half the step, 2.5 / omega 0.9x, this 0.22x. A
 * stencil that arrives slowly gets a thin onset: a resting contact sits
 * below it, as stiff as Harmon's layer (an onset as wide as the zone left a
 * block on an incline resting in its soft start, bouncing on it, and
 * creeping: docs/research/contact_energy.md). The step: the kinked layers'
 * step at once when the approach's kinetic energy (1/2 rate^2 / W, W the
 * stencil's inverse mass along the gradient) would take it through three
 * quarters of the zone: switching in the middle of a fast crossing (at
 * layer 2's activation) moved the leapfrog's energy of the layer's
 * oscillation, -2.2e-3 of a particle's energy at 20 m/s. A stencil pressed
 * in by a load rather than its own speed switches there, slowly
 * (avi_contact_event). A fixed contact step (time_step.per_kind.contact)
 * never changes. dt: the step it has; returns the step for the crossing. */
#define ONSET_WIDTH 1.25
/* The stencil's normal rate d' = sum_a gd_a . v_a; *w (if not NULL) its
 * inverse mass along the gradient, sum_a |gd_a|^2 / m_a. */
static double normal_rate(const avi_contact_manager *cm, const avi_contact_stencil *s, const double gd[4][3], double *w)
{
    const avi_vertex *V = cm->model->vert;
    double rate = 0.0, iw = 0.0;
    for (int a = 0; a < 4; a++) {
        rate += v3_dot(gd[a], V[s->v[a]].v);
        iw += v3_dot(gd[a], gd[a]) * V[s->v[a]].inv_mass;
    }
    if (w) *w = iw;
    return rate;
}
static double closing_rate(const avi_contact_manager *cm, const avi_contact_stencil *s, const double gd[4][3])
{
    double rate = normal_rate(cm, s, gd, NULL);
    return rate < 0.0 ? -rate : 0.0;
}
/* Layer 1's zone (eta_2, eta_1], where it is the deepest layer. */
static double layer1_zone(const avi_contact_manager *cm)
{
    return avi_layer_thickness(cm->eta1, cm->eta_inf, 1) - avi_layer_thickness(cm->eta1, cm->eta_inf, 2);
}
static double plan_crossing(const avi_contact_manager *cm, const avi_contact_stencil *s, avi_contact_potential *p,
                            const double gd[4][3], double dt)
{
    double w, rate = normal_rate(cm, s, gd, &w), omega = sqrt(stencil_omega2(cm->model, cm, s));
    rate = rate < 0.0 ? -rate : 0.0; /* closing */
    double zone = layer1_zone(cm);
    p->onset = omega > 0.0 ? fmin(ONSET_WIDTH * rate / omega, zone) : 0.0;
    if (dt > s->dt1 && w > 0.0 && !(cm->model->contact_fixed_dt > 0.0) &&
        0.5 * rate * rate / w >= p->k * avi_penalty_energy(0.75 * zone, p->onset))
        dt = s->dt1;
    return dt;
}

/* The step of the layer above the deepest layer l >= 2, the one that would
 * re-activate it: layer 1 may step at its stability step with layer 2
 * active (nears_layer2), and retiring layer 2 on the kinked layers' margin
 * then would leave it to be re-activated only a longer step later. */
static double shallower_step(const avi_contact_manager *cm, const avi_contact_stencil *s, const avi_contact_potential *p, int l)
{
    double dt = avi_layer_step(s->dt1, l - 1);
    return l == 2 && p->prev != AVI_NO_SLOT ? fmax(dt, cm->pot[p->prev].dt) : dt;
}

/* A stencil at rest in layer 1 alone: its normal energy E_n, the kinetic
 * energy of its normal rate (1/2 d'^2 / W, W the stencil's inverse mass
 * along the gradient) plus layer 1's potential, at most E_z / 256, E_z
 * layer 1's energy across its whole zone (eta_2, eta_1] (at rest, a
 * stencil at the depth zone / 16 or less). The kinked layers' step it took
 * (a crossing that might reach layer 2, or layer 2 closing in while the
 * contact settled) goes back to its stability step there. The change takes
 * the impulse weight (dt_prev + dt_next) / 2, whose weights sum to the
 * time elapsed, so a steady load is carried exactly; the leapfrog's energy
 * moves by about 0.25 (omega_1 dt_1)^2 of the energy of the stencil's
 * motion in the layer, at most 4e-3 E_z / 256 = 1.5e-5 E_z: less than the
 * 2.4e-4 of the energy through it that the quarter step allows a kinked
 * onset per crossing. Going back to the quarter when such a stencil wakes
 * (E_n > E_z / 64) moved the N = 8 ball (eta_1 5e-5, 0.16-0.24 m/s) by at
 * most 7.2e-5 of E0 and took sphere-plate from 0.61 M to 0.83 M contact events: not
 * done.
 * Without it a resting block on an incline kept 41 of its 380 layer-1
 * stencils at the quarter step for good (1.41x the contact events of
 * every layer at its stability step; docs/research/contact_energy.md). */
#define REST_FRACTION (1.0 / 256.0)
static int at_rest(const avi_contact_manager *cm, const avi_contact_stencil *s, const avi_contact_potential *p,
                   const double gd[4][3], double d)
{
    double w, rate = normal_rate(cm, s, gd, &w);
    if (!(w > 0.0)) return 0;
    double zone = layer1_zone(cm);
    double en = 0.5 * rate * rate / w + p->k * avi_penalty_energy(p->eta - d, p->onset);
    return en <= REST_FRACTION * p->k * avi_penalty_energy(zone, p->onset);
}

/* Once a stencil has layer 2, layer 1 takes the kinked layers' step when
 * layer 2 is within NEAR_STEPS of layer 1's steps at the stencil's present
 * closing rate (or reached): the stacked stencil's summed layers need it
 * (at its stability step omega_s dt_1 2.4-2.6 at 6-10 layers pumped
 * +1.2e-3 and +3.1e-3 of E0 into the N = 8 ball). Layer 2's activation
 * alone is no reason: the speed cap's margin (2 vcap dt_1, vcap from the
 * fastest surface vertex anywhere) activates it for stencils that rest
 * far above it. At the ball's impact the speed cap is about 1.25 times a
 * stencil's own closing rate, so 4 steps of that rate take the quarter
 * there no later than the activation did. */
#define NEAR_STEPS 4.0
static int nears_layer2(const avi_contact_manager *cm, const avi_contact_stencil *s, const double gd[4][3], double d, double dt)
{
    return d - NEAR_STEPS * closing_rate(cm, s, gd) * dt <= avi_layer_thickness(cm->eta1, cm->eta_inf, 2);
}

/* The step of layer l: its stability step dt_1 / l^1.5, and short enough
 * that a stencil closing at its present rate d' takes at least
 * 1 / LAYER_RESOLUTION steps to cross the zone (eta_{l+1}, eta_l] where
 * layer l is the deepest: a fast impact otherwise crosses a layer between
 * two of its impulses and the penalty's work is sampled too coarsely. */
#define LAYER_RESOLUTION 0.2
/* Layer 1's step: its stability step, omega_1 dt_1 = 2 safety /
 * sqrt(AVI_CONTACT_VALENCE), at most 0.125 (LAYER_SAFETY_MAX). */
static double resolved_step(const avi_contact_manager *cm, const avi_contact_stencil *s, int l, double t)
{
    double dt = l == 1 ? stencil_step(cm->model, cm, s, 1.0) : avi_layer_step(s->dt1, l);
    const avi_vertex *V = cm->model->vert;
    double x[4][3], g[4][3];
    for (int a = 0; a < 4; a++) {
        const avi_vertex *q = &V[s->v[a]];
        for (int c = 0; c < 3; c++) x[a][c] = q->x[c] + (t - q->tau) * q->v[c];
    }
    double d = s->type == AVI_STENCIL_VF ? avi_pt_distance_gradient((const double (*)[3])x, g)
                                         : avi_ee_distance_gradient((const double (*)[3])x, g);
    if (!(d > 0.0)) return dt;
    double rate = 0.0;
    for (int a = 0; a < 4; a++) rate += v3_dot(g[a], V[s->v[a]].v);
    double gap = avi_layer_thickness(cm->eta1, cm->eta_inf, l) - avi_layer_thickness(cm->eta1, cm->eta_inf, l + 1);
    if (rate < 0.0 && LAYER_RESOLUTION * gap < -rate * dt) dt = LAYER_RESOLUTION * gap / -rate;
    return dt;
}

/* Layer l of a stencil on vertices v came (sign +1) or went (-1): each
 * vertex's summed layer stiffness K_v = k_1 sum l^3 changes, and the engine
 * refines the elastic steps on it to resolve sqrt(K_v / m_v)
 * (core/refine.h). The gradient of d puts at most unit weight on a vertex,
 * so K_v bounds the vertex's share of the layers' stiffness. */
static int layers_changed(avi_engine *e, avi_contact_manager *cm, const uint32_t v[4], int l, int sign)
{
    uint64_t units = (uint64_t)l * (uint64_t)l * (uint64_t)l;
    for (int a = 0; a < 4; a++) {
        cm->layer_sum[v[a]] = sign > 0 ? cm->layer_sum[v[a]] + units : cm->layer_sum[v[a]] - units;
        double im = cm->model->vert[v[a]].inv_mass;
        if (im == 0.0) continue;
        int rc = avi_engine_refine(e, v[a], sqrt(avi_layer_stiffness(cm->k1, 1) * (double)cm->layer_sum[v[a]] * im));
        if (rc) return rc;
    }
    return AVI_OK;
}

/* Starts layer `layers + 1` of stencil s at time t. */
static int activate(avi_engine *e, avi_contact_manager *cm, uint32_t si, double t)
{
    avi_contact_stencil *s = &cm->st[si];
    int l = s->layers + 1;
    if (l > cm->max_layers)
        return avi_engine_fail(e, AVI_ERR_RUN, "contact at t = %.17g: stencil (vertices %u, %u, %u, %u) needs more than %d layers "
                       "(contact.layers)", t, s->v[0], s->v[1], s->v[2], s->v[3], cm->max_layers);
    uint32_t slot;
    if (cm->free_slot != AVI_NO_SLOT) {
        slot = cm->free_slot;
        cm->free_slot = cm->pot[slot].prev;
    } else {
        if (AVI_GROW(cm->pot, cm->cap_pot, cm->npot + 1, 256)) return avi_engine_fail(e, AVI_ERR_RUN, "out of memory");
        if (cm->npot > AVI_ID_MAX_INDEX) return avi_engine_fail(e, AVI_ERR_RUN, "too many contact potentials");
        slot = (uint32_t)cm->npot++;
    }
    if (s->dt1 == 0.0) s->dt1 = stencil_dt1(cm->model, cm, s);
    avi_contact_potential *p = &cm->pot[slot];
    memcpy(p->v, s->v, sizeof p->v);
    p->type = s->type;
    p->alive = 1;
    p->layer = (uint16_t)l;
    p->stencil = si;
    p->prev = s->deepest;
    p->eta = avi_layer_thickness(cm->eta1, cm->eta_inf, l);
    p->k = avi_layer_stiffness(cm->k1, l);
    p->onset = 0.0; /* layer 1: set at its events (plan_crossing) */
    /* A fixed contact step (time_step.per_kind.contact) holds for every
     * layer: with all other steps fixed to the same value the run is the
     * synchronous explicit integrator, contact included. */
    p->dt = cm->model->contact_fixed_dt > 0.0 ? cm->model->contact_fixed_dt : resolved_step(cm, s, l, t);
    if (p->dt < cm->dt_min) cm->dt_min = p->dt;
    p->t0 = t;
    s->deepest = slot;
    s->layers = (uint16_t)l;
    cm->alive++;
    cm->activations++;
    int rc = layers_changed(e, cm, p->v, l, +1);
    if (rc) return rc;
    return avi_engine_schedule(e, (avi_event){t, avi_event_id(AVI_KIND_CONTACT, slot), 0});
}

/* Retires the deepest layer of a stencil (its queue entry goes lazily). */
static int retire_deepest(avi_engine *e, avi_contact_manager *cm, avi_contact_stencil *s)
{
    avi_contact_potential *p = &cm->pot[s->deepest];
    p->alive = 0;
    s->deepest = p->prev;
    s->layers--;
    cm->alive--;
    cm->retirements++;
    return layers_changed(e, cm, p->v, p->layer, -1);
}

/* Candidate i of a run: vertex-face i < ncoarse_vf, else edge-edge
 * i - ncoarse_vf; its stencil's type, primitives (a, b) and vertices. */
static void candidate(const avi_contact_manager *cm, size_t i, uint8_t *type, uint32_t *a, uint32_t *b, uint32_t v[4])
{
    if (i < cm->ncoarse_vf) {
        const avi_candidate *k = &cm->coarse_vf[i];
        const uint32_t *tri = cm->surf.tris[k->b];
        *type = AVI_STENCIL_VF;
        *a = v[0] = cm->surf.points[k->a];
        *b = k->b;
        v[1] = tri[0];
        v[2] = tri[1];
        v[3] = tri[2];
    } else {
        const avi_candidate *k = &cm->coarse_ee[i - cm->ncoarse_vf];
        *type = AVI_STENCIL_EE;
        *a = k->a;
        *b = k->b;
        v[0] = cm->surf.edges[k->a][0];
        v[1] = cm->surf.edges[k->a][1];
        v[2] = cm->surf.edges[k->b][0];
        v[3] = cm->surf.edges[k->b][1];
    }
}

typedef struct {
    avi_contact_manager *cm;
    double t, margin;
} reach_test;

/* Candidates [begin, end) of a run: the exact distance at the run's
 * positions (cm->x, which nothing changes during the run) decides whether
 * each is within reach (due, for the serial merge) or may be skipped until
 * its distance could have closed the gap at the list's speed cap. Each
 * writes only its own due and skip slots: workers never share one. */
static void reach_range(void *ctx, size_t begin, size_t end, int worker)
{
    const reach_test *q = ctx;
    avi_contact_manager *cm = q->cm;
    for (size_t i = begin; i < end; i++) {
        double *skip = i < cm->ncoarse_vf ? &cm->skip_vf[i] : &cm->skip_ee[i - cm->ncoarse_vf];
        cm->due[i] = 0;
        if (*skip > q->t) continue;
        uint8_t type;
        uint32_t a, b, v[4];
        double x[4][3];
        candidate(cm, i, &type, &a, &b, v);
        for (int k = 0; k < 4; k++) v3_copy(x[k], cm->x[v[k]]);
        double d = avi_stencil_distance(type, (const double (*)[3])x);
        if (d - q->margin > cm->eta1)
            *skip = q->t + (d - q->margin - cm->eta1) / (2.0 * cm->coarse_vcap);
        else
            cm->due[i] = 1;
    }
}

/* Every candidate within reach at the run gets layer 1: the exact tests
 * split across the engine's pool, then the activations (which change the
 * stencil table, the queue and the refined clocks) in candidate order,
 * vertex-face before edge-edge, as a serial run makes them. */
static int reach_all(avi_engine *e, avi_contact_manager *cm, avi_pool *pool, double t, double margin)
{
    size_t n = cm->ncoarse_vf + cm->ncoarse_ee;
    if (AVI_GROW(cm->due, cm->cap_due, n ? n : 1, 1024)) return avi_engine_fail(e, AVI_ERR_RUN, "out of memory");
    reach_test q = {cm, t, margin};
    avi_pool_for(pool, n, 256, reach_range, &q);
    for (size_t i = 0; i < n; i++) {
        if (!cm->due[i]) continue;
        uint8_t type;
        uint32_t a, b, v[4];
        candidate(cm, i, &type, &a, &b, v);
        long si = stencil_find(cm, type, a, b, v);
        if (si < 0) return avi_engine_fail(e, AVI_ERR_RUN, "out of memory");
        cm->st[si].epoch = cm->epoch;
        if (cm->st[si].layers == 0) {
            int rc = activate(e, cm, (uint32_t)si, t);
            if (rc) return rc;
        }
    }
    return AVI_OK;
}

/* Copies the broad phase's output into a list sorted by (a, b), every
 * entry due for an exact look (skip time -inf). The pairs are distinct, so
 * the sorted list is one and the same whatever order they came in: a radix
 * sort on the key (a, b), which took a third of the time of qsort on
 * sphere-plate at 1000 m/s (bench/README.md, "Contact"). */
static int keep_sorted(avi_contact_manager *cm, long n, avi_candidate **list, double **skip, size_t *count,
                       size_t *cap)
{
    const avi_broad_phase *bp = &cm->bp;
    if ((size_t)n > *cap) {
        avi_candidate *p = realloc(*list, (size_t)n * sizeof *p);
        if (!p) return -1;
        *list = p;
        double *q = realloc(*skip, (size_t)n * sizeof *q);
        if (!q) return -1;
        *skip = q;
        *cap = (size_t)n;
    }
    if (AVI_GROW(cm->sort_keys, cm->cap_sort, 2 * (size_t)n + 2, 1024)) return -1;
    avi_cell_entry *e = cm->sort_keys, *spare = e + n + 1;
    for (long i = 0; i < n; i++) e[i] = (avi_cell_entry){(uint64_t)bp->out[i].a << 32 | bp->out[i].b, 0};
    e = avi_cell_entries_sort_pool(bp->pool, e, spare, (size_t)n);
    for (long i = 0; i < n; i++) (*list)[i] = (avi_candidate){(uint32_t)(e[i].key >> 32), (uint32_t)e[i].key};
    for (long i = 0; i < n; i++) (*skip)[i] = -INFINITY;
    *count = (size_t)n;
    return 0;
}

/* Rebuilds the candidate lists at time t (positions in cm->x). */
static int coarse_rebuild(avi_contact_manager *cm, double t, double window, double r)
{
    double horizon = COARSE_WINDOWS * window;
    cm->coarse_vcap = COARSE_HEADROOM * cm->vcap;
    double rc = r + 2.0 * cm->coarse_vcap * horizon;
    double cell = fmax(cm->cell, rc);
    long n = avi_broad_phase_vf(&cm->bp, (const double (*)[3])cm->x, cm->surf.points, cm->surf.npoints, cm->surf.tris, cm->surf.ntris, rc,
                                cell);
    if (n < 0 || keep_sorted(cm, n, &cm->coarse_vf, &cm->skip_vf, &cm->ncoarse_vf, &cm->cap_coarse_vf)) return -1;
    n = avi_broad_phase_ee(&cm->bp, (const double (*)[3])cm->x, (const uint32_t (*)[2])cm->surf.edges, cm->surf.nedges, rc, cell);
    if (n < 0 || keep_sorted(cm, n, &cm->coarse_ee, &cm->skip_ee, &cm->ncoarse_ee, &cm->cap_coarse_ee)) return -1;
    cm->coarse_until = t + horizon;
    cm->coarse_builds++;
    return 0;
}

int avi_contact_run(avi_contact_manager *cm, avi_engine *e, double t)
{
    const avi_model *m = cm->model;
    cm->runs++;
    cm->epoch++;
    double vmax2 = 0.0;
    for (size_t i = 0; i < cm->surf.npoints; i++) {
        const avi_vertex *p = &m->vert[cm->surf.points[i]];
        double h = t - p->tau;
        for (int c = 0; c < 3; c++) cm->x[cm->surf.points[i]][c] = p->x[c] + h * p->v[c];
        vmax2 = fmax(vmax2, v3_dot(p->v, p->v));
    }
    double margin = MARGIN_FRACTION * cm->eta1;
    cm->vcap = fmax(SPEED_HEADROOM * sqrt(vmax2), margin / (2.0 * cm->window_max));
    cm->clock.vcap2 = cm->vcap * cm->vcap;
    double window = margin / (2.0 * cm->vcap);
    double r = cm->eta1 + margin;

    /* Vertices move at most vcap per unit time until the next run (faster
     * ones call the manager at once), so a pair within r now was within
     * r + 2 coarse_vcap (t - t_build) when the list was built. */
    avi_pool *pool = avi_engine_pool(e);
    if (t >= cm->coarse_until || cm->vcap > cm->coarse_vcap) {
        cm->bp.pool = pool;
        if (coarse_rebuild(cm, t, window, r)) return avi_engine_fail(e, AVI_ERR_RUN, "out of memory");
    }
    int rc = reach_all(e, cm, pool, t, margin);
    if (rc) return rc;
    /* Stencils out of reach lose all their layers (they exert no force:
     * d > eta_1); then the table keeps only stencils with layers. */
    size_t keep = 0;
    for (size_t i = 0; i < cm->nst; i++) {
        avi_contact_stencil *s = &cm->st[i];
        if (s->epoch != cm->epoch)
            while (s->layers > 0)
                if ((rc = retire_deepest(e, cm, s)) != AVI_OK) return rc;
        if (s->layers == 0) continue;
        if (keep != i) cm->st[keep] = *s;
        for (uint32_t slot = cm->st[keep].deepest; slot != AVI_NO_SLOT; slot = cm->pot[slot].prev)
            cm->pot[slot].stencil = (uint32_t)keep;
        keep++;
    }
    cm->nst = keep;
    if (hash_rebuild(cm, cm->nst)) return avi_engine_fail(e, AVI_ERR_RUN, "out of memory");
    cm->clock.next_run = t + window;
    return AVI_OK;
}

/* Coulomb friction after a normal kick of impulse jn >= 0 on potential p
 * (contact_friction.h), its work taken with the synchronized velocities of
 * the stencil's vertices; a vertex it makes faster than the speed cap
 * brings the manager's run forward, as for the normal kick. */
static void friction_step(avi_contact_manager *cm, const avi_engine *e, avi_vertex *V, const avi_contact_potential *p,
                          const double gd[4][3], double jn, double t)
{
    double dv[4][3];
    avi_engine_vertex_owed(e, &cm->clocks, t, p->v, 4, dv);
    cm->friction_work += avi_contact_friction(V, p->v, p->type, gd, jn, cm->mu, (const double (*)[3])dv);
    avi_check_speed(&cm->clock, V, p->v, 4, t);
}

int avi_contact_event(avi_contact_manager *cm, avi_engine *e, avi_event ev, uint64_t *count)
{
    uint32_t slot = ev.id & AVI_ID_INDEX_MASK, n = ev.n;
    double t = ev.t;
    avi_contact_potential *p = &cm->pot[slot];
    if (!p->alive) {
        p->prev = cm->free_slot;
        cm->free_slot = slot;
        return AVI_OK;
    }
    ++*count;
    avi_vertex *V = cm->model->vert;
    double x[4][3], gd[4][3];
    avi_drift(V, p->v, 4, t, x);
    double d = p->type == AVI_STENCIL_VF ? avi_pt_distance_gradient((const double (*)[3])x, gd)
                                         : avi_ee_distance_gradient((const double (*)[3])x, gd);
    if (!isfinite(d)) return avi_engine_fail(e, AVI_ERR_RUN, "blow-up at t = %.17g: contact stencil (vertices %u, %u, %u, %u) has a "
                                      "non-finite distance", t, p->v[0], p->v[1], p->v[2], p->v[3]);
    avi_contact_stencil *s = &cm->st[p->stencil];
    int l = p->layer;
    double dt_next = p->dt;
    const int fixed = cm->model->contact_fixed_dt > 0.0; /* a fixed contact step never changes */
    if (s->deepest == slot) {
        /* The deepest layer keeps the next one ready (see contact_manager.h). */
        if (d - 2.0 * cm->vcap * p->dt <= avi_layer_thickness(cm->eta1, cm->eta_inf, l + 1)) {
            int rc = activate(e, cm, p->stencil, t);
            if (rc) return rc;
            p = &cm->pot[slot]; /* activate may move the array */
        } else if (l == 1 && p->dt == s->dt1 && !fixed &&
                   (d - 2.0 * cm->vcap * p->dt > p->eta || (d < p->eta && at_rest(cm, s, p, (const double (*)[3])gd, d)))) {
            /* Out of layer 1 (its kick is 0), or at rest in it: its own
             * step again. Back at one layer but still inside layer 1 and
             * moving (the stack unwinding), switching back pumped up to
             * +6.6e-3 of E0 into the N = 8 ball. */
            double dt = resolved_step(cm, s, 1, t);
            if (dt > p->dt) dt_next = dt;
        } else if (l >= 2 && d - 2.0 * cm->vcap * shallower_step(cm, s, p, l) > p->eta) {
            int rc = retire_deepest(e, cm, s);
            p->prev = cm->free_slot;
            cm->free_slot = slot;
            return rc; /* retired: no next event */
        }
    }
    /* In a stack (layer 2 just activated, or there before), layer 1 steps at
     * the kinked layers' step until the stencil is out of layer 1 or at
     * rest, once it closes in on layer 2 (nears_layer2; switching only once
     * the stencil was halfway through layer 1's zone left +2.3e-3 at safety
     * 0.5, before LAYER_SAFETY_MAX). */
    if (l == 1 && s->layers > 1 && p->dt > s->dt1 && !fixed && nears_layer2(cm, s, (const double (*)[3])gd, d, p->dt))
        dt_next = s->dt1;
    if (l == 1 && s->layers == 1 && (n == 0 || !(d < p->eta)))
        dt_next = plan_crossing(cm, s, p, (const double (*)[3])gd, dt_next);
    if (d < p->eta) {
        /* The engine's kick, with the penalty's derivative in the weight:
         * (dt_prev + dt_next) / 2, dt at equal steps. */
        double w = ((n == 0 ? 0.0 : 0.5 * p->dt) + 0.5 * dt_next) * (-p->k * avi_penalty_force(p->eta - d, p->onset));
        avi_kick(V, p->v, 4, w, (const double (*)[3])gd);
        avi_check_speed(&cm->clock, V, p->v, 4, t);
        if (cm->mu > 0.0) friction_step(cm, e, V, p, (const double (*)[3])gd, -w, t);
    }
    if (dt_next != p->dt) {
        /* The clock restarts here at its new step: t0 + n dt with n >= 1
         * from now on (n = 0 would take a half kick). */
        p->dt = dt_next;
        p->t0 = t - dt_next;
        return avi_engine_schedule(e, (avi_event){t + dt_next, ev.id, 2});
    }
    return avi_engine_schedule(e, (avi_event){p->t0 + (double)(n + 1) * p->dt, ev.id, n + 1});
}

void avi_contact_owe(const avi_contact_manager *cm, uint32_t slot, double t_next, uint32_t n, double t, const double (*xt)[3],
                     double (*imp)[3])
{
    const avi_contact_potential *p = &cm->pot[slot];
    if (!p->alive) return; /* retired out of reach: no force */
    double w = avi_owed_weight(t, t_next, n, p->dt), x[4][3], g[4][3];
    for (int a = 0; a < 4; a++) v3_copy(x[a], xt[p->v[a]]);
    if (w == 0.0 || !avi_contact_gradient(p, (const double (*)[3])x, g)) return;
    for (int a = 0; a < 4; a++)
        for (int c = 0; c < 3; c++) imp[p->v[a]][c] += w * g[a][c];
}

void avi_contact_observe(const avi_contact_manager *cm, double t, double *energy, uint64_t *active,
                         double *min_distance, double *friction_work)
{
    const avi_vertex *V = cm->model->vert;
    double sum = 0.0, dmin = INFINITY, x[4][3];
    for (size_t i = 0; i < cm->nst; i++) {
        const avi_contact_stencil *s = &cm->st[i];
        for (int a = 0; a < 4; a++) {
            const avi_vertex *q = &V[s->v[a]];
            for (int c = 0; c < 3; c++) x[a][c] = q->x[c] + (t - q->tau) * q->v[c];
        }
        double d = avi_stencil_distance(s->type, (const double (*)[3])x);
        dmin = fmin(dmin, d);
        for (uint32_t slot = s->deepest; slot != AVI_NO_SLOT; slot = cm->pot[slot].prev) {
            const avi_contact_potential *p = &cm->pot[slot];
            sum += avi_layer_energy(p, d);
        }
    }
    *energy = sum;
    *active = cm->alive;
    *min_distance = dmin;
    *friction_work = cm->friction_work;
}
