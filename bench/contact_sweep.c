/* Energy and Hertz accuracy of penalty-layer contact (issue 20): a solid
 * ball on a pinned flat or two balls, head-on, no friction, no gravity
 * (tests/physics/ball_drop.h).
 *
 *   build/bench/contact_sweep [--n N] [--thickness H] [--inner H] [--speed V] [--two] [--grading T] [--shells]
 *       [--levels L] [--safety S] [--stiffness K1] [--tet-dt DT] [--contact-dt DT] [--samples K]
 *       [--trace FILE]
 *   build/bench/contact_sweep --sweep    thickness x N x speed x steps, the table of bench/README.md
 *
 * Defaults: N 8, thickness 5e-5, inner thickness thickness / 5, 0.2 m/s,
 * default step levels (--levels 0: exact steps), automatic stiffness; K
 * observations per Hertz duration (default 400). One line per run on stderr
 * and a JSON object on stdout: E - E0 at the end, its mean after the last
 * contact and its largest |.| over the run (over E0), restitution (centres of mass), contact duration
 * (contact energy > 0) and peak approach of the centres beyond first touch
 * against Hertz, the onset-free duration (v/2 to -v/2) and the compression
 * (approach plus the gap left) against Hertz, CPU time (--grading T: balls
 * graded toward their contact poles, avi_mesh_tet_ball_graded; --shells:
 * the concentric-shell ball avi_mesh_tet_ball_shells, graded alike), closest
 * distance, deepest layer, and the largest omega dt
 * seen (probe below): of one layer at its step, of a stencil's penetrated
 * layers together at their steps, and of a contact vertex at the smallest
 * elastic step on it as it runs (refined clocks at dt_0 / 2^level,
 * src/core/refine.h). --trace FILE: per observation, t, the observed and
 * mid-step totals, contact energy, active layers, deepest layer, refined
 * potentials and level changes so far. */
#include "../tests/physics/ball_drop.h"
#include "contact/contact_manager.h"
#include "core/engine_internal.h"
#include "core/model_internal.h"
#include "core/refine.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

typedef struct {
    int deepest;
    double wdt_max, wdt_layer_max, wdt_el, k1;
    FILE *trace; /* --trace: one line per observation */
} layer_probe;

static double stencil_im(const avi_model *m, const avi_contact_potential *p)
{
    const avi_vertex *V = m->vert;
    double a, b;
    if (p->type == AVI_STENCIL_VF) {
        a = V[p->v[0]].inv_mass;
        b = fmax(V[p->v[1]].inv_mass, fmax(V[p->v[2]].inv_mass, V[p->v[3]].inv_mass));
    } else {
        a = fmax(V[p->v[0]].inv_mass, V[p->v[1]].inv_mass);
        b = fmax(V[p->v[2]].inv_mass, V[p->v[3]].inv_mass);
    }
    return a + b;
}

/* --trace: time, observed total and mid-step total, contact energy, active
 * layers, deepest layer, refined potentials, their level changes so far. */
static void trace_row(const avi_engine *e, double t, int deepest, FILE *f)
{
    avi_observation o;
    avi_engine_observe(e, t, &o);
    size_t refined = 0;
    const avi_refine *r = e->refine;
    for (size_t p = 0; r && p < r->npot; p++) refined += r->level[p] > 0;
    fprintf(f, "%.9e %.12e %.12e %.6e %llu %d %zu %llu\n", t, o.total, o.total_midstep, o.contact,
            (unsigned long long)o.active_contact_potentials, deepest, refined,
            (unsigned long long)(r ? r->switches : 0));
}

/* Per observation: the deepest layer, the largest omega dt of a layer on
 * its own and of a stencil's penetrated layers together at its layers'
 * steps, and the largest omega dt_el of a vertex: omega^2 = the stiffness
 * of every penetrated layer of every stencil on it (times |grad d|^2 on
 * the vertex) over its mass, dt_el the smallest elastic step on it. */
static void probe(const avi_engine *e, double t, void *user)
{
    layer_probe *lp = user;
    const avi_contact_manager *cm = e->contact;
    const avi_model *m = e->model;
    double *kv = calloc(m->nv, sizeof *kv);
    int deepest = 0;
    double wdt = 0.0, wdt_layer = 0.0;
    for (size_t i = 0; i < cm->nst; i++) {
        const avi_contact_stencil *s = &cm->st[i];
        if (s->layers == 0) continue;
        double x[4][3], g[4][3];
        for (int a = 0; a < 4; a++) {
            const avi_vertex *q = &m->vert[s->v[a]];
            for (int c = 0; c < 3; c++) x[a][c] = q->x[c] + (t - q->tau) * q->v[c];
        }
        double d = s->type == AVI_STENCIL_VF ? avi_pt_distance_gradient((const double (*)[3])x, g)
                                             : avi_ee_distance_gradient((const double (*)[3])x, g);
        double ksum = 0.0;
        for (uint32_t slot = s->deepest; slot != AVI_NO_SLOT; slot = cm->pot[slot].prev)
            if (d < cm->pot[slot].eta) ksum += cm->pot[slot].k;
        for (int a = 0; a < 4; a++) kv[s->v[a]] += ksum * v3_dot(g[a], g[a]);
        for (uint32_t slot = s->deepest; slot != AVI_NO_SLOT; slot = cm->pot[slot].prev) {
            const avi_contact_potential *p = &cm->pot[slot];
            double im = stencil_im(m, p);
            wdt_layer = fmax(wdt_layer, sqrt(p->k * im) * p->dt);
            if (d < p->eta) wdt = fmax(wdt, sqrt(ksum * im) * p->dt);
        }
        if (s->layers > deepest) deepest = s->layers;
    }
    /* The elastic steps on each vertex as they run: refined ones (core/refine.h) at dt_0 / 2^level. */
    double *dtv = malloc(m->nv * sizeof *dtv);
    for (size_t v = 0; v < m->nv; v++) dtv[v] = INFINITY;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        for (size_t i = 0, c = (avi_kind_flags(k) & AVI_KIND_ELASTIC) ? avi_model_potential_count(m, (avi_kind)k) : 0; i < c; i++) {
            const uint32_t *sv;
            int n = avi_model_stencil(m, (avi_kind)k, i, &sv);
            double dt = ldexp(avi_model_time_step(m, (avi_kind)k, i), -avi_refine_level(e->refine, avi_event_id(k, (uint32_t)i)));
            for (int a = 0; a < n; a++) dtv[sv[a]] = fmin(dtv[sv[a]], dt);
        }
    for (size_t v = 0; v < m->nv; v++)
        if (kv[v] > 0.0 && isfinite(dtv[v])) lp->wdt_el = fmax(lp->wdt_el, sqrt(kv[v] * m->vert[v].inv_mass) * dtv[v]);
    free(dtv);
    free(kv);
    lp->k1 = cm->k1;
    if (deepest > lp->deepest) lp->deepest = deepest;
    lp->wdt_max = fmax(lp->wdt_max, wdt);
    lp->wdt_layer_max = fmax(lp->wdt_layer_max, wdt_layer);
    if (lp->trace) trace_row(e, t, deepest, lp->trace);
}

static FILE *trace_file;

static int run_one(const ball_drop_setup *s, int samples)
{
    layer_probe lp = {0};
    lp.trace = trace_file;
    ball_drop_setup t = *s;
    t.probe = probe;
    t.user = &lp;
    ball_drop_result r;
    clock_t c0 = clock();
    int rc = ball_drop_run(&t, samples, &r);
    double cpu = (double)(clock() - c0) / CLOCKS_PER_SEC;
    fprintf(stderr,
            "%-5s%s n %2d eta1 %.0e eta_inf %.0e v %4.2f %-6s dE/E0 end %+9.2e after %+9.2e max %8.2e e %.5f t_c/hertz-1 %+7.4f "
            "delta/hertz-1 %+7.4f grading %.2f t_half/hertz-1 %+7.4f compression/hertz-1 %+7.4f cpu %.1f s d_min %.3e layers %3d wdt layer %.3f stencil %.2f elastic %.2f events %.3g%s\n",
            s->two ? "two" : "flat", s->shells ? " shells" : "", s->n, s->thickness, s->inner, s->speed,
            s->levels == 0 ? "exact" : "levels", r.de_end / r.e0, r.de_after / r.e0, r.de_max / r.e0, r.restitution, (r.t_off - r.t_on) / r.hertz_t - 1.0,
            r.delta_max / r.hertz_delta - 1.0, s->grading, r.t_half / r.hertz_t_half - 1.0,
            r.compression_max / r.hertz_delta - 1.0, cpu, r.d_min, lp.deepest, lp.wdt_layer_max, lp.wdt_max, lp.wdt_el, r.events,
            rc ? " FAILED" : "");
    printf("{\"bench\": \"contact_sweep\", \"case\": \"%s\", \"n\": %d, \"thickness\": %g, \"inner\": %g, "
           "\"speed\": %g, \"levels\": %d, \"de_end\": %.6g, \"de_after\": %.6g, \"de_max\": %.6g, \"restitution\": %.8g, "
           "\"duration_error\": %.6g, \"indentation_error\": %.6g, \"grading\": %g, \"half_duration_error\": %.6g, "
           "\"compression_error\": %.6g, \"cpu_s\": %.3g, \"d_min\": %.6g, \"k1\": %.6g, "
           "\"deepest_layer\": %d, \"wdt_layer\": %.4g, \"wdt_stencil\": %.4g, \"wdt_elastic\": %.4g, "
           "\"events\": %.0f, \"failed\": %s}\n",
           s->two ? "two" : "flat", s->n, s->thickness, s->inner, s->speed, s->levels, r.de_end / r.e0,
           r.de_after / r.e0, r.de_max / r.e0, r.restitution, (r.t_off - r.t_on) / r.hertz_t - 1.0, r.delta_max / r.hertz_delta - 1.0,
           s->grading, r.t_half / r.hertz_t_half - 1.0, r.compression_max / r.hertz_delta - 1.0, cpu, r.d_min, lp.k1, lp.deepest,
           lp.wdt_layer_max, lp.wdt_max, lp.wdt_el, r.events, rc ? "true" : "false");
    fflush(stdout);
    return rc;
}

int main(int argc, char **argv)
{
    ball_drop_setup s = {8, 5e-5, 1e-5, 0.2, 0, -1, 0.0, 0.0, 0.0, 0.0, NULL, NULL, 0.0, 0};
    int samples = 400, sweep = 0, inner_set = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : "";
        if (!strcmp(a, "--n")) s.n = atoi(v), i++;
        else if (!strcmp(a, "--thickness")) s.thickness = atof(v), i++;
        else if (!strcmp(a, "--inner")) s.inner = atof(v), inner_set = 1, i++;
        else if (!strcmp(a, "--speed")) s.speed = atof(v), i++;
        else if (!strcmp(a, "--levels")) s.levels = atoi(v), i++;
        else if (!strcmp(a, "--safety")) s.safety = atof(v), i++;
        else if (!strcmp(a, "--contact-dt")) s.contact_dt = atof(v), i++;
        else if (!strcmp(a, "--tet-dt")) s.tet_dt = atof(v), i++;
        else if (!strcmp(a, "--stiffness")) s.stiffness = atof(v), i++;
        else if (!strcmp(a, "--samples")) samples = atoi(v), i++;
        else if (!strcmp(a, "--trace")) trace_file = fopen(v, "w"), i++;
        else if (!strcmp(a, "--grading")) s.grading = atof(v), i++;
        else if (!strcmp(a, "--two")) s.two = 1;
        else if (!strcmp(a, "--shells")) s.shells = 1;
        else if (!strcmp(a, "--sweep")) sweep = 1;
        else {
            fprintf(stderr, "contact_sweep: unknown argument %s\n", a);
            return 2;
        }
    }
    if (!inner_set) s.inner = s.thickness / 5.0;
    if (!sweep) return run_one(&s, samples) ? 1 : 0;
    static const double eta[] = {5e-5, 1e-4, 2e-4, 5e-4}, speed[] = {0.05, 0.2, 1.0};
    static const int ns[] = {8, 16}, levels[] = {-1, 0};
    int fails = 0;
    for (int a = 0; a < 4; a++)
        for (int b = 0; b < 2; b++)
            for (int c = 0; c < 3; c++)
                for (int d = 0; d < 2; d++) {
                    ball_drop_setup q = s;
                    q.thickness = eta[a];
                    q.inner = eta[a] / 5.0;
                    q.n = ns[b];
                    q.speed = speed[c];
                    q.levels = levels[d];
                    fails += run_one(&q, samples) != 0;
                }
    return fails ? 1 : 0;
}
