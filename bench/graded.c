/* The AVI against synchronous stepping on graded meshes.
 *
 * A tetrahedral bar (neo-Hookean rubber) and a thin-shell strip (steel,
 * membranes and bending hinges) are graded along x exponentially, as
 * grade_x of tests/physics/test_conservation.c does, so that the last cell
 * is `ratio` times the first (default ratios 10 and 100). With --shape
 * taper (the default) the cross-section grows with the local cell length,
 * so every cell stays about cubic (square) and element sizes, and with them
 * stable steps, spread by the ratio in every direction; with --shape bar
 * the cross-section is uniform, its cells as wide as the coarsest cell
 * (the fine cells are then slabs).
 *
 * The same model runs to the same end time
 *  - with the explicit synchronous integrator (avi_engine_create_with,
 *    sync-explicit, h = the smallest stable step of any potential), which
 *    counts one event per potential per step;
 *  - with the AVI under the default time-step rule: neighbor_ratio 1 (no
 *    potential's step above the smallest step on its vertices) and
 *    time_step.levels_per_octave 16 (--levels L to change it: steps rounded
 *    down to L levels per octave, a few percent more events, in memory
 *    order); its "ideal_speedup_exact" counts the events of the exact-step
 *    run, the stricter yardstick;
 *  - with the AVI on the rule's exact steps (levels_per_octave 0);
 *  - with the AVI on exact steps with neighbor_ratio 0 (no cap).
 * The ideal speed-up is sync events / AVI events, the measured one sync
 * time / AVI time (CPU time of the process, and wall time); their ratio is
 * the sync cost per event over the AVI cost per event. The four engines of
 * a mesh run side by side: the end time is cut into 40 slices and they take
 * turns slice by slice, so that the load bursts of a shared machine fall on
 * all of them alike. Total energy is sampled after every slice (outside the
 * timed spans) to show that the runs are sound.
 *
 *   build/bench/graded [--mesh tet|shell]... [--ratio R]... [--steps S]
 *                      [--shape taper|bar] [--cells NX] [--fine H] [--levels L]
 *                      [--safety S] [--no-reorder] [--repeat N]
 *
 * --steps: synchronous steps of each run (default: 4000 for the bar, 1500
 * for the strip); --cells: cells along x (default 120 for the bar, 3 x 3
 * across; 400 for the strip, 6 across); --fine: the first cell's length
 * (default 2 mm for the bar, 20 mm for the strip: about 6 shell
 * thicknesses, so that membranes, not hinges, set the steps); --repeat:
 * rounds (default 3); an engine's time is the sum over the slices of its
 * fastest run of each slice. The mesh's vertices and elements are put in
 * Morton order (avi_mesh_reorder), as a user would for a large mesh;
 * --no-reorder keeps the generator's order (x fastest), where the
 * potentials of one step lie a row apart in memory. --safety: the stability
 * rule's safety factor for every run (default 0.25, the rule's default).
 * One JSON object per (mesh, ratio, AVI rule) on stdout, a table on stderr. */
#include "avi/avi.h"
#include "avi/mesh.h"
#include "avi/sync.h"
#include "bench_util.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

typedef enum { MESH_TET, MESH_SHELL } mesh_kind;
typedef enum { SHAPE_TAPER, SHAPE_BAR } shape_kind;

static const avi_solid_material rubber = {1.0e6, 0.3, 1000.0};
static const avi_shell_material steel = {2.0e11, 0.3, 7850.0, 0.0035};

typedef struct {
    mesh_kind kind;
    shape_kind shape;
    double ratio;
    int nx, nyz; /* cells along x, and across (each transverse direction) */
    double fine;  /* length of the first (finest) cell, m */
    int reorder;  /* vertices and elements in Morton order (avi_mesh_reorder) */
    int levels;   /* levels_per_octave of the default-rule run */
    double safety; /* time_step.safety of every rule */
} spec;

/* Exponential grading of u in [0, 1] onto [0, L] with last cell / first
 * cell = ratio (grade_x of test_conservation.c); `spacing` is the local
 * cell length there, x'(u) / nx. */
static double graded_x(const spec *s, double u, double *spacing)
{
    double a = log(s->ratio) * s->nx / (s->nx - 1.0);
    double den = exp(a) - 1.0;
    /* L from the first cell: x(1 / nx) = fine. */
    double L = s->fine * den / (exp(a / s->nx) - 1.0);
    *spacing = L * a * exp(a * u) / (den * s->nx);
    return L * (exp(a * u) - 1.0) / den;
}

/* The mesh of a spec: generated on unit cells, x in [0, 1], then mapped. */
static int build_mesh(const spec *s, avi_mesh *mesh, avi_error *err)
{
    int rc = s->kind == MESH_TET ? avi_mesh_tet_box(1.0, s->nyz, s->nyz, s->nx, s->nyz, s->nyz, mesh, err)
                                 : avi_mesh_rect_grid(1.0, s->nyz, s->nx, s->nyz, mesh, err);
    if (rc) return rc;
    double coarsest;
    graded_x(s, 1.0, &coarsest);
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        double *p = mesh->x[i], h;
        double u = p[0], y = p[1] - 0.5 * s->nyz, z = p[2] - 0.5 * s->nyz;
        p[0] = graded_x(s, u, &h);
        double w = s->shape == SHAPE_TAPER ? h : coarsest;
        p[1] = y * w;
        if (s->kind == MESH_TET) {
            p[2] = z * w;
        } else {
            /* A ridge along the strip so the hinges start bent. */
            double j = y + 0.5 * s->nyz;
            p[2] = 0.1 * w * sin(M_PI * j / s->nyz);
        }
    }
    if (s->reorder && (rc = avi_mesh_reorder(mesh, NULL, err))) return rc;
    return avi_mesh_validate(mesh, "graded mesh", err);
}

/* Pre-stretch 1.05 about the centroid and a deterministic velocity ripple
 * (speed `v0`), so every element vibrates from the start. */
static avi_model *build_model(const spec *s, const avi_mesh *mesh, double neighbor_ratio, int levels,
                              avi_error *err)
{
    avi_model *m = avi_model_create();
    if (!m) return NULL;
    int b = avi_model_add_body(m, s->kind == MESH_TET ? "bar" : "strip");
    for (size_t i = 0; i < mesh->vertex_count; i++) avi_model_add_vertex(m, b, mesh->x[i]);
    int rc = 0;
    if (s->kind == MESH_TET) {
        for (size_t t = 0; t < mesh->tet_count && !rc; t++) {
            const uint32_t *v = mesh->tets[t];
            rc = avi_model_add_tet(m, v[0], v[1], v[2], v[3], &rubber);
        }
    } else {
        rc = avi_model_add_triangle_mesh(m, (const uint32_t (*)[3])mesh->triangles, mesh->triangle_count, &steel, 1);
    }
    double c[3] = {0, 0, 0};
    for (size_t i = 0; i < mesh->vertex_count; i++)
        for (int k = 0; k < 3; k++) c[k] += mesh->x[i][k] / (double)mesh->vertex_count;
    double v0 = s->kind == MESH_TET ? 0.1 : 1.0;
    for (size_t i = 0; i < mesh->vertex_count && !rc; i++) {
        double x[3], v[3];
        for (int k = 0; k < 3; k++) x[k] = c[k] + 1.05 * (mesh->x[i][k] - c[k]);
        v[0] = v0 * sin(7.0 * i);
        v[1] = v0 * cos(5.0 * i);
        v[2] = v0 * sin(3.0 * i + 1.0);
        rc = avi_model_set_state(m, (uint32_t)i, x, v);
    }
    avi_time_step rule = avi_default_time_step();
    rule.neighbor_ratio = neighbor_ratio;
    rule.levels_per_octave = levels;
    rule.safety = s->safety;
    if (rc || avi_model_finalize(m, &rule)) {
        *err = *avi_model_error(m);
        avi_model_destroy(m);
        return NULL;
    }
    return m;
}

typedef struct {
    uint64_t events;
    double cpu, wall;
    double e_change; /* (E(T) - E(0)) / |E(0)| */
    double e_maxdev; /* max |E(t) - E(0)| / |E(0)| over the slices */
    double dt_min, dt_max, h, t_end;
    size_t potentials;
} result;

/* The run to the end time is cut into SLICES equal spans of simulated time,
 * and the engines of one mesh take turns slice by slice. */
#define SLICES 40
#define ENGINES 4 /* sync, then the three AVI rules (exact, no cap, default) */

typedef struct {
    avi_model *m;
    avi_engine *e;
    double e0; /* total energy at t = 0 */
    double cpu[SLICES], wall[SLICES];
    result r;
} runner;

static void runner_free(runner *u)
{
    avi_engine_destroy(u->e);
    avi_model_destroy(u->m);
    u->e = NULL;
    u->m = NULL;
}

/* Builds the model and engine of one run of `steps` smallest steps (t_end
 * 0) or to t_end; sync != 0: the explicit synchronous integrator. The
 * smallest step is the same under every AVI rule (the cap lowers a step
 * only down to the smallest step on its vertices), so every run of a mesh
 * has the same end time. */
static int runner_start(runner *u, const spec *s, const avi_mesh *mesh, int sync, double neighbor_ratio, int levels,
                        int steps, double t_end)
{
    avi_error err;
    memset(u, 0, sizeof *u);
    if (!(u->m = build_model(s, mesh, neighbor_ratio, levels, &err))) {
        fprintf(stderr, "graded: %s\n", err.message);
        return -1;
    }
    result *r = &u->r;
    r->dt_min = INFINITY;
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        if (!avi_model_potential_count(u->m, (avi_kind)k)) continue;
        double lo, hi;
        avi_model_time_step_range(u->m, (avi_kind)k, &lo, &hi);
        r->dt_min = fmin(r->dt_min, lo);
        r->dt_max = fmax(r->dt_max, hi);
        r->potentials += avi_model_potential_count(u->m, (avi_kind)k);
    }
    if (sync) {
        avi_sync_options o = avi_default_sync_options();
        o.type = AVI_INTEGRATOR_SYNC_EXPLICIT;
        o.h = 0.0; /* the smallest potential step */
        u->e = avi_engine_create_with(u->m, &o, &err);
    } else {
        u->e = avi_engine_create(u->m, &err);
    }
    if (!u->e) {
        fprintf(stderr, "graded: %s\n", err.message);
        runner_free(u);
        return -1;
    }
    r->h = sync ? avi_engine_sync_step(u->e) : 0.0;
    r->t_end = t_end > 0.0 ? t_end : steps * r->dt_min;
    avi_observation o;
    avi_engine_observe(u->e, 0.0, &o);
    u->e0 = o.total;
    return 0;
}

/* Slice k (1..SLICES): advance to its end, timed; then sample the energy. */
static int runner_slice(runner *u, int k)
{
    double t = u->r.t_end * k / SLICES;
    double w0 = bench_now(), c0 = cpu_now();
    int rc = avi_engine_advance(u->e, t);
    u->cpu[k - 1] = cpu_now() - c0;
    u->wall[k - 1] = bench_now() - w0;
    if (rc) {
        fprintf(stderr, "graded: %s\n", avi_engine_error(u->e)->message);
        return -1;
    }
    avi_observation o;
    avi_engine_observe(u->e, t, &o);
    double dev = fabs(o.total - u->e0) / fabs(u->e0);
    if (!(dev <= u->r.e_maxdev)) u->r.e_maxdev = dev; /* NaN sticks */
    u->r.e_change = (o.total - u->e0) / fabs(u->e0);
    u->r.events = avi_engine_events_total(u->e);
    return 0;
}

/* `repeat` rounds; in each the four engines run slice by slice, taking
 * turns (the first of each slice rotates), so that the load bursts of a
 * shared machine fall on all of them alike. Each engine's time is the sum
 * over the slices of its fastest run of that slice; the runs are
 * deterministic, so every round does the same events in each slice. */
static int run_interleaved(const spec *s, const avi_mesh *mesh, int steps, const double ratios[3], const int levels[3],
                           int repeat, result out[ENGINES])
{
    double best_cpu[ENGINES][SLICES], best_wall[ENGINES][SLICES];
    for (int round = 0; round < repeat; round++) {
        runner u[ENGINES];
        int rc = runner_start(&u[0], s, mesh, 1, 1.0, 0, steps, 0.0);
        for (int k = 1; k < ENGINES && !rc; k++) {
            rc = runner_start(&u[k], s, mesh, 0, ratios[k - 1], levels[k - 1], steps, u[0].r.t_end);
            if (rc) {
                for (int j = 0; j < k; j++) runner_free(&u[j]);
                return -1;
            }
        }
        if (rc) return -1;
        for (int k = 1; k <= SLICES && !rc; k++)
            for (int j = 0; j < ENGINES && !rc; j++) rc = runner_slice(&u[(j + k) % ENGINES], k);
        for (int j = 0; j < ENGINES; j++) {
            for (int k = 0; k < SLICES && !rc; k++) {
                if (round == 0 || u[j].cpu[k] < best_cpu[j][k]) best_cpu[j][k] = u[j].cpu[k];
                if (round == 0 || u[j].wall[k] < best_wall[j][k]) best_wall[j][k] = u[j].wall[k];
            }
            out[j] = u[j].r;
            runner_free(&u[j]);
        }
        if (rc) return -1;
    }
    for (int j = 0; j < ENGINES; j++) {
        out[j].cpu = out[j].wall = 0.0;
        for (int k = 0; k < SLICES; k++) {
            out[j].cpu += best_cpu[j][k];
            out[j].wall += best_wall[j][k];
        }
    }
    return 0;
}

static int bench_spec(const spec *s, int steps, int repeat, int *printed)
{
    avi_mesh mesh = {0};
    avi_error err;
    if (build_mesh(s, &mesh, &err)) {
        fprintf(stderr, "graded: %s\n", err.message);
        avi_mesh_free(&mesh);
        return -1;
    }
    const char *mesh_name = s->kind == MESH_TET ? "tet" : "shell";
    size_t elements = s->kind == MESH_TET ? mesh.tet_count : mesh.triangle_count;
    const double ratios[3] = {1.0, 0.0, 1.0};
    const int levels[3] = {0, 0, s->levels};
    result runs[ENGINES];
    if (run_interleaved(s, &mesh, steps, ratios, levels, repeat, runs)) goto fail;
    const result sy = runs[0], *av = runs + 1;
    if (av[0].t_end != sy.t_end || av[1].t_end != sy.t_end || av[2].t_end != sy.t_end || sy.h != sy.dt_min) {
        fprintf(stderr, "graded: the runs of one mesh do not share the end time\n");
        goto fail;
    }
    if (!*printed) {
        fprintf(stderr,
                "| mesh | size ratio | elements | potentials | AVI rule | dt spread | sync steps | sync events | AVI "
                "events | ideal speed-up | sync CPU s | AVI CPU s | speed-up CPU | speed-up wall | measured / ideal "
                "(CPU) | sync ns/event | AVI ns/event | dE/E sync (max) | dE/E AVI (max) |\n"
                "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|\n");
        *printed = 1;
    }
    for (int row = 0; row < 3; row++) {
        const int k = (row + 2) % 3; /* the default rule first */
        const result *a = &av[k];
        double ideal = (double)sy.events / (double)a->events;
        double ideal_exact = (double)sy.events / (double)av[0].events;
        static const char *const rule_key[3] = {"exact", "no-cap", "default"};
        char rule_name[64];
        if (k == 2) snprintf(rule_name, sizeof rule_name, "default (levels %d)", levels[k]);
        else snprintf(rule_name, sizeof rule_name, "exact steps%s", ratios[k] > 0.0 ? "" : ", no cap");
        double sp_cpu = sy.cpu / a->cpu, sp_wall = sy.wall / a->wall;
        printf("{\"bench\": \"graded\", \"mesh\": \"%s\", \"shape\": \"%s\", \"rule\": \"%s\", \"ratio\": %g, \"cells_x\": %d, "
               "\"cells_across\": %d, \"elements\": %zu, \"vertices\": %zu, \"potentials\": %zu, "
               "\"neighbor_ratio\": %g, \"levels_per_octave\": %d, \"ideal_speedup_exact\": %.3f, "
               "\"efficiency_cpu_exact\": %.3f, \"dt_spread\": %.2f, \"sync_h\": %.6e, \"t_end\": %.6e, \"sync_steps\": %d, "
               "\"sync_events\": %llu, \"avi_events\": %llu, \"ideal_speedup\": %.3f, \"sync_cpu_s\": %.3f, "
               "\"avi_cpu_s\": %.3f, \"sync_wall_s\": %.3f, \"avi_wall_s\": %.3f, \"speedup_cpu\": %.3f, "
               "\"speedup_wall\": %.3f, \"efficiency_cpu\": %.3f, \"efficiency_wall\": %.3f, "
               "\"sync_ns_per_event\": %.1f, \"avi_ns_per_event\": %.1f, \"sync_energy_rel_change\": %.3e, "
               "\"sync_energy_max_rel_dev\": %.3e, \"avi_energy_rel_change\": %.3e, \"avi_energy_max_rel_dev\": %.3e, "
               "\"reorder\": %d, \"repeat\": %d}\n",
               mesh_name, s->shape == SHAPE_TAPER ? "taper" : "bar", rule_key[k], s->ratio, s->nx, s->nyz, elements,
               mesh.vertex_count, a->potentials, ratios[k], levels[k], ideal_exact, sp_cpu / ideal_exact,
               a->dt_max / a->dt_min, sy.h, a->t_end, steps,
               (unsigned long long)sy.events, (unsigned long long)a->events, ideal, sy.cpu, a->cpu, sy.wall, a->wall,
               sp_cpu, sp_wall, sp_cpu / ideal, sp_wall / ideal, 1e9 * sy.cpu / (double)sy.events,
               1e9 * a->cpu / (double)a->events, sy.e_change, sy.e_maxdev, a->e_change, a->e_maxdev, s->reorder, repeat);
        fflush(stdout);
        fprintf(stderr,
                "| %s | 1:%g | %zu | %zu | %s | %.1f | %d | %.3g | %.3g | %.2f | %.2f | %.2f | %.2f | "
                "%.2f | %.2f | %.0f | %.0f | %+.1e (%.1e) | %+.1e (%.1e) |\n",
                mesh_name, s->ratio, elements, a->potentials, rule_name, a->dt_max / a->dt_min, steps,
                (double)sy.events, (double)a->events, ideal, sy.cpu, a->cpu, sp_cpu, sp_wall, sp_cpu / ideal,
                1e9 * sy.cpu / (double)sy.events, 1e9 * a->cpu / (double)a->events, sy.e_change, sy.e_maxdev,
                a->e_change, a->e_maxdev);
    }
    avi_mesh_free(&mesh);
    return 0;
fail:
    avi_mesh_free(&mesh);
    return -1;
}

int main(int argc, char **argv)
{
    mesh_kind meshes[4];
    double ratios[8];
    int nm = 0, nr = 0, steps = 0, cells = 0, repeat = 3, reorder = 1;
    int levels = avi_default_time_step().levels_per_octave;
    double fine = 0.0, safety = avi_default_time_step().safety;
    shape_kind shape = SHAPE_TAPER;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = v != NULL;
        if (!strcmp(a, "--no-reorder")) {
            reorder = 0;
            continue;
        }
        if (ok && !strcmp(a, "--mesh") && nm < 4 && (!strcmp(v, "tet") || !strcmp(v, "shell")))
            meshes[nm++] = !strcmp(v, "tet") ? MESH_TET : MESH_SHELL;
        else if (ok && !strcmp(a, "--ratio") && nr < 8 && atof(v) > 1.0) ratios[nr++] = atof(v);
        else if (ok && !strcmp(a, "--steps") && atoi(v) > 0) steps = atoi(v);
        else if (ok && !strcmp(a, "--cells") && atoi(v) > 1) cells = atoi(v);
        else if (ok && !strcmp(a, "--fine") && atof(v) > 0.0) fine = atof(v);
        else if (ok && !strcmp(a, "--repeat") && atoi(v) > 0) repeat = atoi(v);
        else if (ok && !strcmp(a, "--levels") && atoi(v) > 0 && atoi(v) <= AVI_MAX_LEVELS_PER_OCTAVE)
            levels = atoi(v);
        else if (ok && !strcmp(a, "--safety") && atof(v) > 0.0) safety = atof(v);
        else if (ok && !strcmp(a, "--shape") && (!strcmp(v, "taper") || !strcmp(v, "bar")))
            shape = !strcmp(v, "taper") ? SHAPE_TAPER : SHAPE_BAR;
        else {
            fprintf(stderr,
                    "usage: %s [--mesh tet|shell]... [--ratio R]... [--steps S] [--shape taper|bar] [--cells NX] "
                    "[--fine H] [--levels L] [--safety S] [--no-reorder] [--repeat N]\n",
                    argv[0]);
            return 2;
        }
        i++;
    }
    if (nm == 0) {
        meshes[nm++] = MESH_TET;
        meshes[nm++] = MESH_SHELL;
    }
    if (nr == 0) {
        ratios[nr++] = 10.0;
        ratios[nr++] = 100.0;
    }
    int printed = 0;
    for (int k = 0; k < nm; k++)
        for (int j = 0; j < nr; j++) {
            spec s = {meshes[k], shape, ratios[j], 0, 0, fine > 0.0 ? fine : meshes[k] == MESH_TET ? 0.002 : 0.02,
                      reorder, levels, safety};
            s.nx = cells ? cells : meshes[k] == MESH_TET ? 120 : 400;
            s.nyz = meshes[k] == MESH_TET ? 3 : 6;
            int st = steps ? steps : meshes[k] == MESH_TET ? 4000 : 1500;
            if (bench_spec(&s, st, repeat, &printed)) return 1;
        }
    return 0;
}
