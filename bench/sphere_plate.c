/* The sphere-plate impact: energy behaviour of the AVI and, side by side,
 * the synchronous explicit integrator at the smallest step of any potential
 * of the AVI run (elastic or contact layer): the same engine with every
 * step fixed to that value, which is exactly the synchronous update
 * (tests/unit/test_engine.c).
 *
 *   build/bench/sphere_plate [--set KEY=VALUE]... [--no-sync]
 *
 * One JSON object per run on stdout. */
#include "avi/avi.h"
#include "bench_util.h"
#include "contact/contact_manager.h"
#include "core/engine_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    size_t n, cap;
    double *t, *e;
    double p0[3], l0[3], p_err, l_err, p_scale, l_scale, dmin;
    int first;
} series;

static int observe(const avi_engine *e, double t, void *user)
{
    series *s = user;
    avi_observation o;
    avi_engine_observe(e, t, &o);
    if (s->n == s->cap) {
        s->cap = s->cap ? 2 * s->cap : 1024;
        s->t = realloc(s->t, s->cap * sizeof *s->t);
        s->e = realloc(s->e, s->cap * sizeof *s->e);
    }
    s->t[s->n] = t;
    s->e[s->n] = o.total;
    s->n++;
    if (s->first) {
        memcpy(s->p0, o.linear_momentum, sizeof s->p0);
        memcpy(s->l0, o.angular_momentum, sizeof s->l0);
        const avi_model *m = avi_engine_model(e);
        for (size_t i = 0; i < m->nv; i++) {
            double sp = sqrt(v3_dot(m->vert[i].v, m->vert[i].v));
            s->p_scale += m->mass[i] * sp;
            s->l_scale += m->mass[i] * sp * v3_norm(m->vert[i].x);
        }
        s->first = 0;
    }
    double dp[3], dl[3];
    v3_sub(dp, o.linear_momentum, s->p0);
    v3_sub(dl, o.angular_momentum, s->l0);
    s->p_err = fmax(s->p_err, v3_norm(dp) / s->p_scale);
    s->l_err = fmax(s->l_err, v3_norm(dl) / s->l_scale);
    s->dmin = fmin(s->dmin, o.min_contact_distance);
    return 0;
}

/* Least-squares slope of (E - E0) / E0 against time, and its peak-to-peak. */
static void drift(const series *s, double *slope, double *p2p)
{
    double e0 = s->e[0], mt = 0.0, me = 0.0, lo = INFINITY, hi = -INFINITY;
    for (size_t i = 0; i < s->n; i++) {
        double r = (s->e[i] - e0) / e0;
        mt += s->t[i] / (double)s->n;
        me += r / (double)s->n;
        lo = fmin(lo, r);
        hi = fmax(hi, r);
    }
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < s->n; i++) {
        num += (s->t[i] - mt) * ((s->e[i] - e0) / e0 - me);
        den += (s->t[i] - mt) * (s->t[i] - mt);
    }
    *slope = num / den;
    *p2p = hi - lo;
}

static int run(const char *label, const char **sets, size_t nsets, double *h_min)
{
    avi_scene sc;
    avi_error err;
    if (avi_scene_load_builtin("sphere-plate", sets, nsets, &sc, &err)) {
        fprintf(stderr, "sphere_plate: %s\n", err.message);
        return 1;
    }
    avi_model *m;
    if (avi_scene_build(&sc, &m, NULL, &err)) {
        fprintf(stderr, "sphere_plate: %s\n", err.message);
        return 1;
    }
    avi_engine *e = avi_engine_create(m, &err);
    series s = {0};
    s.first = 1;
    s.dmin = INFINITY;
    avi_engine_add_observer(e, sc.output.energy_every, observe, &s);
    double w0 = bench_now(), c0 = bench_cpu();
    int rc = avi_engine_run(e, sc.end_time);
    double wall = bench_now() - w0, cpu = bench_cpu() - c0;
    double slope, p2p;
    drift(&s, &slope, &p2p);
    double dt_elastic = INFINITY;
    for (int k = 0; k < AVI_MODEL_KINDS; k++) {
        if (!avi_model_potential_count(m, (avi_kind)k)) continue;
        double lo, hi;
        avi_model_time_step_range(m, (avi_kind)k, &lo, &hi);
        dt_elastic = fmin(dt_elastic, lo);
    }
    const avi_contact_manager *cm = e->contact;
    double dt_contact = cm ? cm->dt_min : INFINITY;
    *h_min = fmin(dt_elastic, dt_contact);
    printf("{\"bench\": \"sphere_plate\", \"run\": \"%s\", \"status\": %d, \"end_time\": %g, \"events\": %llu, "
           "\"events_contact\": %llu, \"wall_s\": %.3f, \"cpu_s\": %.3f, \"cpu_events_per_s\": %.4g, "
           "\"energy_slope_per_s\": %.4e, \"energy_drift_over_run\": %.4e, \"energy_peak_to_peak\": %.4e, "
           "\"momentum_linear_rel\": %.3e, \"momentum_angular_rel\": %.3e, \"min_contact_distance\": %.6e, "
           "\"inner_thickness\": %g, \"dt_min_elastic\": %.4e, \"dt_min_contact\": %.4e, \"contact_layers_activated\": %llu, "
           "\"manager_runs\": %llu, \"speed_triggers\": %llu}\n",
           label, rc, sc.end_time, (unsigned long long)avi_engine_events_total(e),
           (unsigned long long)avi_engine_event_count(e, AVI_KIND_CONTACT), wall, cpu,
           (double)avi_engine_events_total(e) / cpu, slope, slope * sc.end_time, p2p, s.p_err, s.l_err, s.dmin,
           sc.contact.inner_thickness, dt_elastic, dt_contact, cm ? (unsigned long long)cm->activations : 0ull,
           cm ? (unsigned long long)cm->runs : 0ull, cm ? (unsigned long long)cm->clock.speed_triggers : 0ull);
    fflush(stdout);
    free(s.t);
    free(s.e);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_free(&sc);
    return rc != AVI_OK;
}

int main(int argc, char **argv)
{
    const char **sets = calloc((size_t)argc + 2, sizeof *sets);
    size_t n = 0;
    int sync = 1;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--set") && i + 1 < argc) sets[n++] = argv[++i];
        else if (!strcmp(argv[i], "--no-sync")) sync = 0;
        else {
            fprintf(stderr, "usage: %s [--set KEY=VALUE]... [--no-sync]\n", argv[0]);
            return 2;
        }
    }
    double h;
    int rc = run("avi", sets, n, &h);
    if (sync && rc == 0) {
        char fixed[160];
        snprintf(fixed, sizeof fixed, "time_step={fixed: %.17g, per_kind: {contact: %.17g}}", h, h);
        sets[n] = fixed;
        double h2;
        rc |= run("sync-explicit (AVI at one common step)", sets, n + 1, &h2);
    }
    free(sets);
    return rc;
}
