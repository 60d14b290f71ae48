/* Why a block resting on an incline creeps (issue 29, the layers' onset):
 * the rig of tests/physics/test_friction.c's test_incline_sticks (a 2 cm
 * tet cube, E = 1 MPa, n cells per side, settled by quenching for 0.05 s on
 * a pinned plate tilted by theta, then 0.3 s free with friction mu), with
 * the state of every bottom vertex sampled every --every seconds: its depth
 * below eta_1 (plate coordinates), the normal force the active layers give
 * it (the engine's own law, from every alive potential's gradient), and its
 * downslope travel.
 *
 *   build/bench/incline_creep [--theta DEG] [--mu MU] [--n N] [--time T] [--every DT] [--settle T] [--trace FILE]
 *
 * Prints k_1, eta_1, the layers' zones, the layer-1 step; per bottom
 * vertex: mean / min / max depth, mean and min normal force, the share of
 * samples in which its normal force is under a tenth of its mean, its
 * travel; the centre's travel against time (steady sliding or stick-slip:
 * the share of sample intervals in which the centre moved downslope by more
 * than 1e-7 m); contact events. --trace FILE: t, centre travel, then per
 * bottom vertex depth and normal force. */
#include "avi/avi.h"
#include "avi/mesh.h"
#include "contact/contact_manager.h"
#include "core/engine_internal.h"
#include "core/model_internal.h"
#include "../tests/physics/block_rig.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define G 9.81
#define ETA1 1.0e-3
#define ETA_INF 2.0e-4


static void die(const char *what)
{
    fprintf(stderr, "incline_creep: %s\n", what);
    exit(1);
}

/* World q back to plate coordinates p (block_rig.h's place, inverted). */
static void unplace(const rig *r, const double q[3], double p[3])
{
    double c = cos(r->tilt), s = sin(r->tilt);
    p[0] = c * q[0] - s * q[2];
    p[1] = q[1];
    p[2] = s * q[0] + c * q[2];
}

static void build(rig *r, int n, double mu, double tilt)
{
    memset(r, 0, sizeof *r);
    r->m = avi_model_create();
    r->tilt = tilt;
    if (avi_mesh_rect_grid(0.3, 0.06, 30, 6, &r->plate, NULL)) die("plate");
    int b = avi_model_add_body(r->m, "plate");
    for (size_t i = 0; i < r->plate.vertex_count; i++) {
        double q[3];
        place(r, r->plate.x[i], q);
        int64_t id = avi_model_add_vertex(r->m, b, q);
        if (id < 0 || avi_model_pin(r->m, (uint32_t)id)) die("plate vertex");
    }
    if (avi_model_add_contact_triangles(r->m, (const uint32_t (*)[3])r->plate.triangles, r->plate.triangle_count))
        die("plate triangles");
    const double a = 0.02;
    if (avi_mesh_tet_box(a, a, a, n, n, n, &r->body, NULL)) die("block");
    for (size_t i = 0; i < r->body.vertex_count; i++) {
        r->body.x[i][0] += 0.02;
        r->body.x[i][1] += 0.03 - 0.5 * a;
        r->body.x[i][2] += 0.8 * ETA1;
    }
    b = avi_model_add_body(r->m, "body");
    r->first = (uint32_t)avi_model_vertex_count(r->m);
    r->count = (uint32_t)r->body.vertex_count;
    const double zero[3] = {0, 0, 0};
    for (size_t i = 0; i < r->body.vertex_count; i++) {
        double q[3];
        place(r, r->body.x[i], q);
        int64_t id = avi_model_add_vertex(r->m, b, q);
        if (id < 0 || avi_model_set_state(r->m, (uint32_t)id, q, zero)) die("block vertex");
    }
    for (size_t t = 0; t < r->body.tet_count; t++) {
        const uint32_t *k = r->body.tets[t];
        if (avi_model_add_tet(r->m, r->first + k[0], r->first + k[1], r->first + k[2], r->first + k[3], &block_mat))
            die("tet");
    }
    uint32_t (*g)[3] = malloc(r->body.triangle_count * sizeof *g);
    for (size_t t = 0; t < r->body.triangle_count; t++)
        for (int k = 0; k < 3; k++) g[t][k] = r->first + r->body.triangles[t][k];
    if (avi_model_add_contact_triangles(r->m, (const uint32_t (*)[3])g, r->body.triangle_count)) die("block triangles");
    free(g);
    const double grav[3] = {0.0, 0.0, -G};
    avi_contact_settings cs = {ETA1, ETA_INF, 0.0, 0, mu};
    if (avi_model_set_contact(r->m, &cs)) die("contact");
    avi_model_set_gravity(r->m, grav);
    avi_time_step rule = avi_default_time_step();
    if (avi_model_finalize(r->m, &rule)) die("finalize");
    avi_error err;
    r->e = avi_engine_create(r->m, &err);
    if (!r->e) die(err.message);
    for (uint32_t i = 0; i < r->count; i++) r->mass += avi_model_vertex_mass(r->m, r->first + i);
}

static void advance(rig *r, double t)
{
    if (avi_engine_advance(r->e, t) != AVI_OK) die(avi_engine_error(r->e)->message);
}

/* Plate-frame position of body vertex i at t. */
static void pos(const rig *r, uint32_t i, double t, double p[3])
{
    const avi_vertex *q = &r->e->model->vert[r->first + i];
    double x[3];
    for (int c = 0; c < 3; c++) x[c] = q->x[c] + (t - q->tau) * q->v[c];
    unplace(r, x, p);
}

/* Normal force (plate z) on every vertex from every alive layer at t. */
static void normal_forces(const rig *r, double t, double *fn)
{
    const avi_contact_manager *cm = r->e->contact;
    const avi_vertex *V = r->e->model->vert;
    memset(fn, 0, r->e->model->nv * sizeof *fn);
    for (size_t i = 0; i < cm->nst; i++) {
        const avi_contact_stencil *s = &cm->st[i];
        double x[4][3], g[4][3];
        for (int a = 0; a < 4; a++)
            for (int c = 0; c < 3; c++) x[a][c] = V[s->v[a]].x[c] + (t - V[s->v[a]].tau) * V[s->v[a]].v[c];
        for (uint32_t slot = s->deepest; slot != AVI_NO_SLOT; slot = cm->pot[slot].prev) {
            const avi_contact_potential *p = &cm->pot[slot];
            if (!avi_contact_gradient(p, (const double (*)[3])x, g)) continue;
            for (int a = 0; a < 4; a++) {
                double gp[3];
                unplace(r, g[a], gp);
                fn[s->v[a]] -= gp[2];
            }
        }
    }
}

int main(int argc, char **argv)
{
    double theta = 20.0, mu = 0.5, T = 0.3, every = 1e-4, settle_t = 0.05;
    int n = 2;
    const char *trace = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--theta") && i + 1 < argc) theta = atof(argv[++i]);
        else if (!strcmp(argv[i], "--mu") && i + 1 < argc) mu = atof(argv[++i]);
        else if (!strcmp(argv[i], "--n") && i + 1 < argc) n = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--time") && i + 1 < argc) T = atof(argv[++i]);
        else if (!strcmp(argv[i], "--every") && i + 1 < argc) every = atof(argv[++i]);
        else if (!strcmp(argv[i], "--trace") && i + 1 < argc) trace = argv[++i];
        else if (!strcmp(argv[i], "--settle") && i + 1 < argc) settle_t = atof(argv[++i]);
        else die("usage: incline_creep [--theta DEG] [--mu MU] [--n N] [--time T] [--every DT] [--settle T] [--trace FILE]");
    }
    rig r;
    build(&r, n, mu, theta * M_PI / 180.0);
    const avi_contact_manager *cm = r.e->contact;
    size_t nv = r.e->model->nv;
    printf("k1 %.6g N/m, eta_1 %g, eta_2 %g, eta_3 %g, block mass %g kg, M g cos %.5g N\n", cm->k1, ETA1,
           avi_layer_thickness(ETA1, ETA_INF, 2), avi_layer_thickness(ETA1, ETA_INF, 3), r.mass,
           r.mass * G * cos(theta * M_PI / 180.0));
    /* Settle as the test does. */
    const double zero[3] = {0, 0, 0}, h = 1e-5;
    double prev = 0.0;
    for (double t = h; t <= settle_t; t += h) {
        advance(&r, t);
        double k = body_kinetic(&r);
        if (k < prev) {
            set_body_velocity(&r, t, zero);
            k = 0.0;
        }
        prev = k;
    }
    uint64_t ev0 = avi_engine_event_count(r.e, AVI_KIND_CONTACT);
    double t0 = avi_engine_time(r.e);
    /* Bottom vertices: plate z under 2 eta_1 at the start. */
    uint32_t *bot = malloc(r.count * sizeof *bot), nb = 0;
    double *fn = malloc(nv * sizeof *fn), (*x0)[3] = malloc(r.count * sizeof *x0);
    for (uint32_t i = 0; i < r.count; i++) {
        pos(&r, i, t0, x0[i]);
        if (x0[i][2] < 2.0 * ETA1) bot[nb++] = i;
    }
    double *dsum = calloc(nb, sizeof *dsum), *dmin = malloc(nb * sizeof *dmin), *dmax = malloc(nb * sizeof *dmax);
    double *fsum = calloc(nb, sizeof *fsum), *fmn = malloc(nb * sizeof *fmn);
    long *low = calloc(nb, sizeof *low);
    for (uint32_t b = 0; b < nb; b++) dmin[b] = fmn[b] = INFINITY, dmax[b] = -INFINITY;
    long ns = (long)llround(T / every), moving = 0;
    double ft_sum = 0.0, ft_sq = 0.0, ft_min = INFINITY, ft_max = -INFINITY;
    double *ftrace = malloc((size_t)ns * nb * sizeof *ftrace);
    FILE *tf = trace ? fopen(trace, "w") : NULL;
    double c_prev = 0.0, travel = 0.0;
    for (long k = 1; k <= ns; k++) {
        double t = t0 + k * every;
        advance(&r, t);
        normal_forces(&r, t, fn);
        /* Mass-weighted centre travel. */
        double c = 0.0;
        for (uint32_t i = 0; i < r.count; i++) {
            double p[3];
            pos(&r, i, t, p);
            c += (p[0] - x0[i][0]) * avi_model_vertex_mass(r.m, r.first + i) / r.mass;
        }
        if (c - c_prev > 1e-7) moving++;
        c_prev = c;
        travel = c;
        if (tf) fprintf(tf, "%.6e %.6e", t - t0, c);
        for (uint32_t b = 0; b < nb; b++) {
            double p[3];
            pos(&r, bot[b], t, p);
            double s = ETA1 - p[2], f = fn[r.first + bot[b]];
            dsum[b] += s;
            dmin[b] = fmin(dmin[b], s);
            dmax[b] = fmax(dmax[b], s);
            fsum[b] += f;
            fmn[b] = fmin(fmn[b], f);
            ftrace[(k - 1) * nb + b] = f;
            if (tf) fprintf(tf, " %.4e %.4e", s, f);
        }
        if (tf) fputc('\n', tf);
        double ft = 0.0;
        for (uint32_t i = 0; i < r.count; i++) ft += fn[r.first + i];
        ft_sum += ft;
        ft_sq += ft * ft;
        ft_min = fmin(ft_min, ft);
        ft_max = fmax(ft_max, ft);
    }
    if (tf) fclose(tf);
    for (long k = 0; k < ns; k++)
        for (uint32_t b = 0; b < nb; b++)
            if (ftrace[k * nb + b] < 0.1 * fsum[b] / ns) low[b]++;
    double onset1 = avi_layer_thickness(ETA1, ETA_INF, 1) - avi_layer_thickness(ETA1, ETA_INF, 2);
    printf("theta %g mu %g n %d: centre travel %.4e m in %g s; moving downslope in %.1f %% of %g s intervals; contact events %llu\n",
           theta, mu, n, travel, T, 100.0 * moving / ns, every,
           (unsigned long long)(avi_engine_event_count(r.e, AVI_KIND_CONTACT) - ev0));
    printf("total normal force on the block: mean %.4g N, std %.3g, min %.4g, max %.4g\n", ft_sum / ns,
           sqrt(fmax(ft_sq / ns - (ft_sum / ns) * (ft_sum / ns), 0.0)), ft_min, ft_max);
    {
        int alone = 0, quarter = 0, stacked = 0;
        for (size_t k = 0; k < cm->nst; k++) {
            const avi_contact_stencil *st = &cm->st[k];
            if (st->layers >= 2) stacked++;
            if (st->layers != 1 || st->deepest == AVI_NO_SLOT) continue;
            alone++;
            if (cm->pot[st->deepest].dt <= st->dt1) quarter++;
        }
        printf("at the end: stencils with layer 1 only %d (at the kinked layers' step %d), with 2 or more layers %d; "
               "speed cap %.3g m/s\n", alone, quarter, stacked, cm->vcap);
    }
    printf("layer-1 zone (eta_1 - eta_2) %.3g m; layer-1 step of first stencil %.4g s\n", onset1,
           cm->nst ? cm->st[0].dt1 : 0.0);
    printf("vertex (x, y)   depth below eta_1 mean / min / max (m)   normal force mean / min (N)   low %%   travel (m)\n");
    for (uint32_t b = 0; b < nb; b++) {
        double p[3];
        pos(&r, bot[b], t0 + T, p);
        printf("(%5.3f %5.3f)  %+.3e %+.3e %+.3e   %.3e %.3e   %5.1f   %+.3e\n", x0[bot[b]][0], x0[bot[b]][1],
               dsum[b] / ns, dmin[b], dmax[b], fsum[b] / ns, fmn[b], 100.0 * low[b] / ns, p[0] - x0[bot[b]][0]);
    }
    return 0;
}
