/* A solid neo-Hookean ball (R = 0.1 m, E = 1 MPa, nu = 0.3, rho = 1000; the
 * mapped-cube tet mesh avi_mesh_tet_ball, n cells per diameter) meeting a
 * pinned flat or a second ball head-on, frictionless and without gravity:
 * the impact of issue 20, shared by test_contact_energy.c and
 * bench/contact_sweep.c. Hertz's duration and peak indentation
 * (Johnson, Contact Mechanics, 1985, section 11.4):
 *   t_c = 2.87 (m*^2 / (R* E*^2 v))^(1/5),
 *   delta_max = (15 m* v^2 / (16 E* sqrt(R*)))^(2/5),
 * with m*, R*, E* the reduced mass, radius and modulus. */
#ifndef AVI_BALL_DROP_H
#define AVI_BALL_DROP_H

#include "avi/avi.h"
#include "avi/mesh.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define BALL_R 0.1
static const avi_solid_material ball_rubber = {1.0e6, 0.3, 1000.0};

typedef struct {
    int n;                   /* cells per diameter */
    double thickness, inner; /* contact eta_1, eta_inf */
    double speed;            /* closing speed */
    int two;                 /* 0: ball on a pinned flat; 1: two free balls */
    int levels;              /* -1: default step levels; 0: exact steps */
    double safety;           /* 0: default */
    double contact_dt;       /* > 0: one fixed step for every layer */
    double tet_dt;           /* > 0: one fixed step for every tetrahedron */
    double stiffness;        /* contact k_1; 0: automatic */
    /* Optional: called after every observation. */
    void (*probe)(const avi_engine *e, double t, void *user);
    void *user;
    double grading;          /* avi_mesh_tet_ball_graded toward the contact pole(s), [0, 1) */
    int shells;              /* 1: avi_mesh_tet_ball_shells (no thin corner cells) */
} ball_drop_setup;

typedef struct {
    double e0, de_max, de_end; /* initial energy, max |E - E0| over the run, E - E0 at the end */
    double de_after;          /* mean E - E0 over the observations after the last contact */
    double dp_max;            /* max |p - p0| of the linear momentum, over sum m |v| at t = 0 */
    double restitution;       /* separation / approach speed of the centres of mass */
    double t_on, t_off;       /* first and last observation with contact energy > 0 */
    double delta_max;         /* largest approach of the centres beyond first geometric touch */
    double d_min;             /* closest contact distance */
    double mass_star;         /* reduced mass of the meshes */
    double hertz_t, hertz_delta;
    /* Onset-free: the time the centres' closing rate takes from v/2 to
     * -v/2 (linear between observations), and the same from the Hertz
     * equation of motion (ball_drop_hertz_half). */
    double t_half, hertz_t_half;
    double compression_max;   /* largest approach beyond touch plus the closest distance then */
    int layers_max;           /* deepest layer seen */
    double events;
} ball_drop_result;

/* Adds one ball of n cells with its lowest (low = 1) or highest point at z0,
 * moving at vz; returns its first vertex or -1. */
static int64_t ball_drop_add_ball(avi_model *m, const char *name, int n, double grading, int shells, int low,
                                  double z0, double vz, size_t *count, double *mass)
{
    avi_mesh mesh;
    avi_error err;
    if (shells ? avi_mesh_tet_ball_shells(BALL_R, n, grading, &mesh, &err)
               : avi_mesh_tet_ball_graded(BALL_R, n, grading, &mesh, &err)) {
        fprintf(stderr, "ball_drop: %s\n", err.message);
        return -1;
    }
    /* Graded toward the south pole; the lower ball turns it up (a half
     * turn about x keeps the tetrahedra's orientation). */
    if (!low && grading > 0.0)
        for (size_t i = 0; i < mesh.vertex_count; i++) mesh.x[i][1] = -mesh.x[i][1], mesh.x[i][2] = -mesh.x[i][2];
    int body = avi_model_add_body(m, name);
    double zext = low ? INFINITY : -INFINITY;
    for (size_t i = 0; i < mesh.vertex_count; i++) zext = low ? fmin(zext, mesh.x[i][2]) : fmax(zext, mesh.x[i][2]);
    int64_t first = -1;
    for (size_t i = 0; i < mesh.vertex_count; i++) {
        double p[3] = {mesh.x[i][0], mesh.x[i][1], mesh.x[i][2] - zext + z0}, v[3] = {0, 0, vz};
        int64_t id = avi_model_add_vertex(m, body, p);
        if (first < 0) first = id;
        avi_model_set_state(m, (uint32_t)id, p, v);
    }
    int rc = 0;
    for (size_t k = 0; k < mesh.tet_count && !rc; k++) {
        const uint32_t *t = mesh.tets[k];
        rc = avi_model_add_tet(m, (uint32_t)first + t[0], (uint32_t)first + t[1], (uint32_t)first + t[2],
                               (uint32_t)first + t[3], &ball_rubber);
    }
    for (size_t k = 0; k < mesh.triangle_count; k++)
        for (int c = 0; c < 3; c++) mesh.triangles[k][c] += (uint32_t)first;
    if (!rc) rc = avi_model_add_contact_triangles(m, (const uint32_t (*)[3])mesh.triangles, mesh.triangle_count);
    *count = mesh.vertex_count;
    *mass = 0.0;
    for (size_t i = 0; i < mesh.vertex_count; i++) *mass += avi_model_vertex_mass(m, (uint32_t)first + (uint32_t)i);
    avi_mesh_free(&mesh);
    return rc ? -1 : first;
}

/* A pinned flat square of side 0.3 m at z = 0, 24 x 24 cells: contact
 * triangles only (no potentials, no events). */
static int ball_drop_add_flat(avi_model *m)
{
    avi_mesh mesh;
    avi_error err;
    if (avi_mesh_rect_grid(0.3, 0.3, 24, 24, &mesh, &err)) return -1;
    int body = avi_model_add_body(m, "flat");
    int64_t first = -1;
    for (size_t i = 0; i < mesh.vertex_count; i++) {
        double p[3] = {mesh.x[i][0] - 0.15, mesh.x[i][1] - 0.15, 0.0};
        int64_t id = avi_model_add_vertex(m, body, p);
        if (first < 0) first = id;
        avi_model_pin(m, (uint32_t)id);
    }
    for (size_t k = 0; k < mesh.triangle_count; k++)
        for (int c = 0; c < 3; c++) mesh.triangles[k][c] += (uint32_t)first;
    int rc = avi_model_add_contact_triangles(m, (const uint32_t (*)[3])mesh.triangles, mesh.triangle_count);
    avi_mesh_free(&mesh);
    return rc;
}

typedef struct {
    avi_model *m;
    uint32_t first[2];
    size_t count[2];
    double mass[2];
    double gap0; /* initial surface gap */
} ball_drop_model;

/* Builds and finalizes the model; 0 or -1. The surfaces start 2 eta_1 apart. */
static int ball_drop_build(const ball_drop_setup *s, ball_drop_model *b)
{
    b->m = avi_model_create();
    if (!b->m) return -1;
    b->gap0 = 2.0 * s->thickness;
    double v = s->speed;
    int64_t f0 = ball_drop_add_ball(b->m, "ball", s->n, s->grading, s->shells, 1, s->two ? 0.5 * b->gap0 : b->gap0, s->two ? -0.5 * v : -v,
                                    &b->count[0], &b->mass[0]);
    int64_t f1 = s->two ? ball_drop_add_ball(b->m, "ball2", s->n, s->grading, s->shells, 0, -0.5 * b->gap0, 0.5 * v, &b->count[1], &b->mass[1])
                        : ball_drop_add_flat(b->m);
    if (f0 < 0 || f1 < 0) return -1;
    b->first[0] = (uint32_t)f0;
    b->first[1] = s->two ? (uint32_t)f1 : 0;
    if (!s->two) b->count[1] = 0;
    avi_contact_settings cs = {s->thickness, s->inner, s->stiffness, 0, 0.0};
    if (avi_model_set_contact(b->m, &cs)) return -1;
    avi_time_step rule = avi_default_time_step();
    if (s->levels >= 0) rule.levels_per_octave = s->levels;
    if (s->safety > 0.0) rule.safety = s->safety;
    if (s->contact_dt > 0.0) avi_time_step_set_kind_fixed(&rule, AVI_KIND_CONTACT, s->contact_dt);
    if (s->tet_dt > 0.0) avi_time_step_set_kind_fixed(&rule, AVI_KIND_TET, s->tet_dt);
    return avi_model_finalize(b->m, &rule) ? -1 : 0;
}

/* Centre-of-mass height and vertical velocity of ball i from [nv][3] arrays. */
static void ball_drop_com(const ball_drop_model *b, int i, const double *x, const double *v, double *z, double *vz)
{
    double sz = 0.0, sv = 0.0;
    for (size_t k = 0; k < b->count[i]; k++) {
        uint32_t q = b->first[i] + (uint32_t)k;
        double mq = avi_model_vertex_mass(b->m, q);
        sz += mq * x[3 * q + 2];
        sv += mq * v[3 * q + 2];
    }
    *z = sz / b->mass[i];
    *vz = sv / b->mass[i];
}

/* Hertz's equation of motion delta'' = -c delta^(3/2), delta(0) = 0,
 * delta'(0) = v (Johnson 1985, eq. 11.21 with c = (4/3) E* sqrt(R*) / m*),
 * by RK4 with 2e4 steps per t_c: the time delta' takes from v/2 to -v/2
 * (linear between steps). */
static double ball_drop_hertz_half(double t_c, double v, double c)
{
    double h = t_c / 2e4, y[2] = {0.0, v}, t = 0.0, t_in = -1.0;
    for (int i = 0; i < 40000; i++) {
        double k[4][2], z[2] = {y[0], y[1]};
        for (int j = 0; j < 4; j++) {
            k[j][0] = z[1];
            k[j][1] = -c * pow(fmax(z[0], 0.0), 1.5);
            double f = j < 2 ? 0.5 * h : h;
            if (j < 3) z[0] = y[0] + f * k[j][0], z[1] = y[1] + f * k[j][1];
        }
        double u0 = y[1];
        for (int q = 0; q < 2; q++) y[q] += h / 6.0 * (k[0][q] + 2.0 * k[1][q] + 2.0 * k[2][q] + k[3][q]);
        if (t_in < 0.0 && y[1] <= 0.5 * v) t_in = t + h * (u0 - 0.5 * v) / (u0 - y[1]);
        if (y[1] <= -0.5 * v) return t + h * (u0 + 0.5 * v) / (u0 - y[1]) - t_in;
        t += h;
    }
    return NAN;
}

static void ball_drop_hertz(const ball_drop_setup *s, const ball_drop_model *b, ball_drop_result *r)
{
    double es = ball_rubber.youngs / (1.0 - ball_rubber.poisson * ball_rubber.poisson);
    double ms = s->two ? b->mass[0] * b->mass[1] / (b->mass[0] + b->mass[1]) : b->mass[0];
    double rs = s->two ? 0.5 * BALL_R : BALL_R;
    if (s->two) es *= 0.5;
    double v = s->speed;
    r->mass_star = ms;
    r->hertz_t = 2.87 * pow(ms * ms / (rs * es * es * v), 0.2);
    r->hertz_delta = pow(15.0 * ms * v * v / (16.0 * es * sqrt(rs)), 0.4);
    r->hertz_t_half = ball_drop_hertz_half(r->hertz_t, v, 4.0 / 3.0 * es * sqrt(rs) / ms);
}

/* Separation of the centres (ball above minus ball or flat below) and its rate. */
static void ball_drop_gap(const ball_drop_setup *s, const ball_drop_model *b, const double *x, const double *v,
                          double *h, double *hd)
{
    double z0, v0, z1 = 0.0, v1 = 0.0;
    ball_drop_com(b, 0, x, v, &z0, &v0);
    if (s->two) ball_drop_com(b, 1, x, v, &z1, &v1);
    *h = z0 - z1;
    *hd = v0 - v1;
}

/* Runs the impact through separation (1.6 Hertz durations after the first
 * touch), observing `samples` times per Hertz duration; 0, or -1 when the
 * build or run fails. */
static int ball_drop_run(const ball_drop_setup *s, int samples, ball_drop_result *r)
{
    ball_drop_model b;
    *r = (ball_drop_result){0};
    if (ball_drop_build(s, &b)) {
        avi_model_destroy(b.m);
        return -1;
    }
    ball_drop_hertz(s, &b, r);
    avi_error err;
    avi_engine *e = avi_engine_create(b.m, &err);
    if (!e) {
        avi_model_destroy(b.m);
        return -1;
    }
    size_t nv = avi_model_vertex_count(b.m);
    double *x = malloc(3 * nv * sizeof *x), *v = malloc(3 * nv * sizeof *v);
    double touch = b.gap0 / s->speed, t_end = touch + 1.6 * r->hertz_t, dt = r->hertz_t / samples;
    avi_observation o;
    avi_engine_observe(e, 0.0, &o);
    r->e0 = o.total;
    r->t_on = -1.0;
    r->d_min = INFINITY;
    double h0 = 0.0, hd0 = 0.0, h = 0.0, hd = 0.0, hd_prev = 0.0, t_in = -1.0;
    r->t_half = NAN;
    avi_engine_state_at(e, 0.0, x, v);
    ball_drop_gap(s, &b, x, v, &h0, &hd0);
    int rc = 0;
    double p0[3] = {o.linear_momentum[0], o.linear_momentum[1], o.linear_momentum[2]}, tail = 0.0;
    double pscale = s->speed * (s->two ? 0.5 * (b.mass[0] + b.mass[1]) : b.mass[0]);
    size_t ntail = 0;
    for (double t = dt; t <= t_end + 0.5 * dt && !rc; t += dt) {
        if ((rc = avi_engine_advance(e, t))) break;
        avi_engine_observe(e, t, &o);
        r->de_max = fmax(r->de_max, fabs(o.total - r->e0));
        r->de_end = o.total - r->e0;
        double dp[3] = {o.linear_momentum[0] - p0[0], o.linear_momentum[1] - p0[1], o.linear_momentum[2] - p0[2]};
        r->dp_max = fmax(r->dp_max, sqrt(dp[0] * dp[0] + dp[1] * dp[1] + dp[2] * dp[2]) / pscale);
        tail = o.contact > 0.0 ? 0.0 : tail + r->de_end;
        ntail = o.contact > 0.0 ? 0 : ntail + 1;
        r->d_min = fmin(r->d_min, o.min_contact_distance);
        if (o.contact > 0.0) {
            if (r->t_on < 0.0) r->t_on = t;
            r->t_off = t;
        }
        hd_prev = t > 1.5 * dt ? hd : hd0;
        avi_engine_state_at(e, t, x, v);
        ball_drop_gap(s, &b, x, v, &h, &hd);
        /* The centres' approach beyond the first geometric touch (gap0),
         * and the compression of the solids: that plus the gap left. */
        r->delta_max = fmax(r->delta_max, (h0 - b.gap0) - h);
        if (o.contact > 0.0) r->compression_max = fmax(r->compression_max, (h0 - b.gap0) - h + o.min_contact_distance);
        /* hd: -v while closing, +e v after */
        if (t_in < 0.0 && hd >= -0.5 * s->speed) t_in = t - dt * (hd + 0.5 * s->speed) / (hd - hd_prev);
        if (t_in >= 0.0 && isnan(r->t_half) && hd >= 0.5 * s->speed)
            r->t_half = t - dt * (hd - 0.5 * s->speed) / (hd - hd_prev) - t_in;
        if (s->probe) s->probe(e, t, s->user);
    }
    if (rc) fprintf(stderr, "ball_drop: %s\n", avi_engine_error(e)->message);
    r->de_after = ntail ? tail / (double)ntail : NAN;
    r->restitution = hd / -hd0;
    r->events = (double)avi_engine_events_total(e);
    free(x);
    free(v);
    avi_engine_destroy(e);
    avi_model_destroy(b.m);
    return rc ? -1 : 0;
}

#endif
