/* Cost of contact per impact on the sphere-plate scene.
 *
 *   build/bench/contact [--speed V]... [--end T]... [--set KEY=VALUE]... [--repeat R] [--threads N]...
 *
 * For each speed (default 100 and 1000 m/s; --end gives each its end
 * time, default 2e-3 and 3e-4 s) the built-in sphere-plate scene (with
 * the --set overrides) runs once, observed every microsecond. Reported:
 * events by kind, contact-manager runs, layer activations and retirements,
 * the most potentials alive and the deepest layer, when potentials were
 * alive (the impact), CPU and wall time, and events per CPU second.
 * --threads N (repeatable) runs each speed on an engine of N threads
 * (avi_engine_set_threads; default: none set, the serial engine), one
 * after the other, so the manager's wall time compares side by side.
 *
 * Time in the manager, two ways:
 *  - direct: the run is stepped so that each scheduled manager run is made
 *    (and timed) here, at the point where the engine would make it; see
 *    stepped_run. Runs the engine starts itself are charged at the mean.
 *  - pre-impact difference: the interval before any potential is alive is
 *    run with contact on and off (best of R); the difference over the
 *    manager runs it holds is the cost of one run while nothing touches.
 * What is left after the manager and the elastic events (at their
 * pre-impact cost per event) is charged to the contact events ("rest"); it
 * also holds whatever the elastic events lose to the manager's traffic in
 * the caches, so it is an upper bound.
 *
 * Prints one JSON object per speed on stdout. */
#include "avi/avi.h"
#include "avi/scene.h"
#include "avi/sync.h"
#include "bench_util.h"
#include "contact/contact_manager.h"
#include "core/engine_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define MAX_SETS 64

typedef struct {
    const char *sets[MAX_SETS];
    size_t nsets;
} overrides;

static int load(const overrides *base, double speed, double end, int contact, int threads, avi_scene *sc,
                avi_model **m, avi_engine **e)
{
    overrides o = *base;
    char v[64], t[64];
    snprintf(v, sizeof v, "bodies.sphere.velocity=[0,0,%.17g]", -speed);
    snprintf(t, sizeof t, "time.end=%.17g", end);
    o.sets[o.nsets++] = v;
    o.sets[o.nsets++] = t;
    if (!contact) o.sets[o.nsets++] = "contact.enabled=false";
    avi_error err;
    avi_scene_bodies info;
    if (avi_scene_load_builtin("sphere-plate", o.sets, o.nsets, sc, &err) ||
        avi_scene_build(sc, m, &info, &err)) {
        fprintf(stderr, "contact: %s\n", err.message);
        return -1;
    }
    *e = avi_engine_create_for_scene(sc, &info, *m, &err);
    avi_scene_bodies_free(&info);
    if (!*e) {
        fprintf(stderr, "contact: %s\n", err.message);
        return -1;
    }
    if (threads > 0 && avi_engine_set_threads(*e, threads)) {
        fprintf(stderr, "contact: %s\n", avi_engine_error(*e)->message);
        return -1;
    }
    return 0;
}

static void unload(avi_scene *sc, avi_model *m, avi_engine *e)
{
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_free(sc);
}

/* The run, stepped so that every scheduled manager run is made here, and
 * timed, at the very point where the engine would make it: advance(t)
 * processes the events before t, and the engine runs the manager before
 * any event at its time, so the trajectory is the one avi_engine_run
 * gives. Runs the engine starts itself (a vertex over the speed cap) are
 * counted and charged at the mean timed cost. */
typedef struct {
    double cpu, wall, manager_cpu, manager_wall;
    uint64_t timed_runs, runs, activations, retirements, events[AVI_KIND_COUNT], total;
    double first_alive, last_alive;
    uint64_t max_alive;
    int max_layers;
} measured;

static int stepped_run(avi_engine *e, double end, double dt_obs, measured *r)
{
    avi_contact_manager *cm = e->contact;
    memset(r, 0, sizeof *r);
    r->first_alive = r->last_alive = -1.0;
    uint64_t k_obs = 1;
    double w0 = bench_now(), c0 = cpu_now();
    for (;;) {
        double t_obs = fmin((double)k_obs * dt_obs, end);
        double stop = fmin(cm->clock.next_run, t_obs);
        if (avi_engine_advance(e, stop)) return -1;
        if (cm->clock.next_run == stop && stop < end) {
            double c1 = cpu_now(), w1 = bench_now();
            if (avi_contact_run(cm, e, stop)) return -1;
            r->manager_cpu += cpu_now() - c1;
            r->manager_wall += bench_now() - w1;
            r->timed_runs++;
        }
        if (stop == t_obs) {
            if (cm->alive) {
                if (r->first_alive < 0) r->first_alive = t_obs;
                r->last_alive = t_obs;
            }
            if (cm->alive > r->max_alive) r->max_alive = cm->alive;
            for (size_t i = 0; i < cm->nst; i++)
                if (cm->st[i].layers > r->max_layers) r->max_layers = cm->st[i].layers;
            if (t_obs >= end) break;
            k_obs++;
        }
    }
    r->cpu = cpu_now() - c0;
    r->wall = bench_now() - w0;
    r->runs = cm->runs;
    r->activations = cm->activations;
    r->retirements = cm->retirements;
    r->manager_cpu *= (double)r->runs / (double)r->timed_runs;
    r->manager_wall *= (double)r->runs / (double)r->timed_runs;
    for (int k = 0; k < AVI_KIND_COUNT; k++) r->events[k] = avi_engine_event_count(e, (avi_kind)k);
    r->total = avi_engine_events_total(e);
    return 0;
}

static int bench_speed(const overrides *base, double speed, double end, int repeat, int threads)
{
    avi_scene sc;
    avi_model *m;
    avi_engine *e;
    if (load(base, speed, end, 1, threads, &sc, &m, &e)) return 1;
    size_t nv = avi_model_vertex_count(m);
    const double dt_obs = 1e-6;
    measured r;
    if (stepped_run(e, end, dt_obs, &r)) {
        fprintf(stderr, "contact: %s\n", avi_engine_error(e)->message);
        return 1;
    }
    unload(&sc, m, e);

    /* Pre-impact: contact on and off up to the first alive potential. */
    double t_pre = r.first_alive > dt_obs ? r.first_alive - dt_obs : 0.0;
    double on = INFINITY, off = INFINITY;
    uint64_t runs_pre = 0, events_off = 0;
    for (int k = 0; k < repeat && t_pre > 0; k++)
        for (int contact = 0; contact < 2; contact++) {
            if (load(base, speed, end, contact, threads, &sc, &m, &e)) return 1;
            double c1 = cpu_now();
            avi_engine_advance(e, t_pre);
            double c = cpu_now() - c1;
            if (contact) {
                on = fmin(on, c);
                runs_pre = e->contact->runs;
            } else {
                off = fmin(off, c);
                events_off = avi_engine_events_total(e);
            }
            unload(&sc, m, e);
        }
    double per_run_pre = runs_pre ? (on - off) / (double)runs_pre : NAN;
    double per_elastic = events_off ? off / (double)events_off : NAN;
    uint64_t nc = r.events[AVI_KIND_CONTACT];
    double rest = r.cpu - r.manager_cpu - per_elastic * (double)(r.total - nc);

    printf("{\"bench\": \"contact\", \"scene\": \"sphere-plate\", \"threads\": %d, \"speed\": %g, \"vertices\": %zu, "
           "\"end_time\": %g, \"wall_s\": %.3f, \"cpu_s\": %.3f, \"events\": %llu, \"events_per_cpu_s\": %.4g, "
           "\"events_by_kind\": {",
           threads, speed, nv, end, r.wall, r.cpu, (unsigned long long)r.total, (double)r.total / r.cpu);
    int first = 1;
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        if (r.events[k]) {
            printf("%s\"%s\": %llu", first ? "" : ", ", avi_kind_name((avi_kind)k), (unsigned long long)r.events[k]);
            first = 0;
        }
    printf("}, \"alive\": {\"first\": %g, \"last\": %g, \"max\": %llu}, \"max_layers\": %d, \"manager_runs\": %llu, "
           "\"manager_runs_timed\": %llu, \"activations\": %llu, \"retirements\": %llu, \"manager_cpu_s\": %.3f, \"manager_wall_s\": %.3f, "
           "\"manager_fraction\": %.4f, \"manager_run_us\": %.1f, \"manager_run_us_pre_impact_difference\": %.1f, "
           "\"elastic_event_ns_pre_impact\": %.1f, \"rest_cpu_s\": %.3f, \"rest_per_contact_event_ns\": %.0f, "
           "\"pre_impact\": {\"end\": %g, \"cpu_on_s\": %.4f, \"cpu_off_s\": %.4f, \"manager_runs\": %llu}}\n",
           r.first_alive, r.last_alive, (unsigned long long)r.max_alive, r.max_layers, (unsigned long long)r.runs,
           (unsigned long long)r.timed_runs, (unsigned long long)r.activations, (unsigned long long)r.retirements,
           r.manager_cpu, r.manager_wall, r.manager_cpu / r.cpu, 1e6 * r.manager_cpu / (double)r.runs, 1e6 * per_run_pre,
           1e9 * per_elastic, rest, nc ? 1e9 * rest / (double)nc : 0.0, t_pre, on, off, (unsigned long long)runs_pre);
    fflush(stdout);
    return 0;
}

int main(int argc, char **argv)
{
    overrides o = {{0}, 0};
    double speeds[16], ends[16];
    int ns = 0, ne = 0, repeat = 5, threads[16], nt = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!v) {
            fprintf(stderr, "usage: %s [--speed V]... [--end T]... [--set KEY=VALUE]... [--repeat R] [--threads N]...\n",
                    argv[0]);
            return 2;
        }
        if (!strcmp(a, "--speed") && ns < 16) speeds[ns++] = atof(v);
        else if (!strcmp(a, "--end") && ne < 16) ends[ne++] = atof(v);
        else if (!strcmp(a, "--set") && o.nsets < MAX_SETS - 3) o.sets[o.nsets++] = v;
        else if (!strcmp(a, "--repeat")) repeat = atoi(v);
        else if (!strcmp(a, "--threads") && nt < 16) threads[nt++] = atoi(v);
        else {
            fprintf(stderr, "contact: unknown option '%s'\n", a);
            return 2;
        }
        i++;
    }
    if (ns == 0) {
        speeds[ns++] = 100.0;
        speeds[ns++] = 1000.0;
        if (ne == 0) {
            ends[ne++] = 2e-3;
            ends[ne++] = 3e-4;
        }
    }
    if (ne == 0) ends[ne++] = 2e-3;
    if (repeat < 1) return 2;
    if (nt == 0) threads[nt++] = 0;
    for (int k = 0; k < ns; k++)
        for (int j = 0; j < nt; j++)
            if (bench_speed(&o, speeds[k], k < ne ? ends[k] : ends[ne - 1], repeat, threads[j])) return 1;
    return 0;
}
