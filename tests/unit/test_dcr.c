/* Decomposition contact response (src/sync/dcr.c, Cirak and West 2005)
 * against closed-form impacts: a particle hitting the centroid of a free,
 * force-free triangle is the one-dimensional elastic collision of masses m
 * and M (the jump spreads over the triangle's vertices as a rigid
 * translation), and a particle hitting a pinned triangle's face obliquely
 * keeps its tangential velocity and reverses the normal one. Both at two
 * step sizes: the answers do not depend on h. With Coulomb friction the
 * oblique hit loses min(|u_t|, mu J / m) of its tangential velocity (J =
 * 2 m |v_n|), the energy lost is the friction work, and a free pair keeps
 * its momentum. Also: which integrators accept contact. */
#include "check_main.h"
#include "avi/avi.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ETA1 1.0e-3
#define ETA_INF 2.0e-4

static const double corner[3][3] = {
    {-0.05, -0.028867513459481287, 0.0}, {0.05, -0.028867513459481287, 0.0}, {0.0, 0.057735026918962574, 0.0}};

typedef struct {
    double v[3], vt[3];    /* particle's and triangle vertex 0's velocity at the end */
    double min_height;     /* of the particle above the triangle over the run */
    double p0[3], p1[3];   /* linear momentum at the start and the end */
    double k0, k1;         /* kinetic energy at the start and the end */
    double friction_work;  /* at the end */
} outcome;

/* A particle of mass m starting 0.01 above the plane z = 0 at the centroid
 * + offset, velocity v0; the triangle's vertices of mass M / 3 each, or
 * pinned when M = 0. No elastic potential: h is given. */
static outcome impact(double m, double M, const double offset[2], const double v0[3], double h, avi_integrator_type type,
                      double mu)
{
    avi_model *mod = avi_model_create();
    int tb = avi_model_add_body(mod, "triangle"), pb = avi_model_add_body(mod, "particle");
    uint32_t tri[1][3];
    for (int k = 0; k < 3; k++) {
        tri[0][k] = (uint32_t)avi_model_add_vertex(mod, tb, corner[k]);
        if (M > 0.0) ck_assert_int_eq(avi_model_add_mass(mod, tri[0][k], M / 3.0), 0);
        else ck_assert_int_eq(avi_model_pin(mod, tri[0][k]), 0);
    }
    double x0[3] = {offset[0], offset[1], 0.01};
    uint32_t p = (uint32_t)avi_model_add_vertex(mod, pb, x0);
    ck_assert_int_eq(avi_model_add_mass(mod, p, m), 0);
    ck_assert_int_eq(avi_model_set_state(mod, p, x0, v0), 0);
    avi_contact_settings cs = {ETA1, ETA_INF, 1e9, 0, mu};
    ck_assert_int_eq(avi_model_set_contact(mod, &cs), 0);
    ck_assert_int_eq(avi_model_add_contact_triangles(mod, (const uint32_t (*)[3])tri, 1), 0);
    ck_assert_int_eq(avi_model_add_contact_point(mod, p), 0);
    avi_time_step rule = avi_default_time_step();
    ck_assert_int_eq(avi_model_finalize(mod, &rule), 0);
    avi_sync_options o = avi_default_sync_options();
    o.type = type;
    o.h = h;
    avi_error err;
    avi_engine *e = avi_engine_create_with(mod, &o, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    outcome r;
    memset(&r, 0, sizeof r);
    r.min_height = INFINITY;
    double t_end = 2.0 * 0.01 / fabs(v0[2]), x[12], v[12];
    int n = 400;
    for (int i = 0; i <= n; i++) {
        double t = t_end * i / n;
        ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
        avi_engine_state_at(e, t, x, v);
        r.min_height = fmin(r.min_height, x[3 * p + 2] - x[2]); /* the triangle stays flat */
        avi_observation ob;
        avi_engine_observe(e, t, &ob);
        double *pk = i ? r.p1 : r.p0;
        memcpy(pk, ob.linear_momentum, sizeof r.p0);
        *(i ? &r.k1 : &r.k0) = ob.kinetic;
        r.friction_work = ob.friction_work;
    }
    memcpy(r.v, &v[3 * p], sizeof r.v);
    memcpy(r.vt, &v[0], sizeof r.vt);
    avi_engine_destroy(e);
    avi_model_destroy(mod);
    return r;
}

static double rel(double a, double b) { return fabs(a - b) / fmax(fabs(b), 1e-300); }

START_TEST(test_dcr_elastic_collision)
{
    /* m = 1 at -3 m/s onto M = 2 at rest: v' = (m - M)/(m + M) v = 1,
     * V' = 2 m / (m + M) v = -2 (along z). */
    static const double hs[2] = {1e-5, 3.3e-6};
    const double off[2] = {0.0, 0.0}, v0[3] = {0.0, 0.0, -3.0};
    for (int i = 0; i < 2; i++) {
        outcome r = impact(1.0, 2.0, off, v0, hs[i], AVI_INTEGRATOR_DCR, 0.0);
        printf("dcr: particle on a free triangle, h = %g: v_z %.15f (exact 1), triangle %.15f (exact -2), "
               "min height %.6e, |dp| %.1e, dK/K %.1e\n",
               hs[i], r.v[2], r.vt[2], r.min_height, fabs(r.p1[2] - r.p0[2]), (r.k1 - r.k0) / r.k0);
        ck_assert(rel(r.v[2], 1.0) < 1e-12);
        ck_assert(rel(r.vt[2], -2.0) < 1e-12);
        ck_assert(fabs(r.v[0]) + fabs(r.v[1]) + fabs(r.vt[0]) + fabs(r.vt[1]) < 1e-12);
        ck_assert(fabs(r.p1[2] - r.p0[2]) <= 1e-14 * 3.0);
        ck_assert(fabs(r.k1 - r.k0) <= 1e-13 * r.k0);
        ck_assert(r.min_height > (1.0 - 2e-3) * ETA1); /* kept contact.thickness apart */
    }
}
END_TEST

START_TEST(test_dcr_oblique_on_pinned_face)
{
    /* Off the centroid, oblique: the face's normal is z, so (vx, vy, vz)
     * becomes (vx, vy, -vz) exactly. sync-explicit with contact is the
     * same update. */
    static const double hs[2] = {2e-5, 7e-6};
    const double off[2] = {0.01, -0.005}, v0[3] = {0.5, 0.25, -2.0};
    avi_integrator_type types[2] = {AVI_INTEGRATOR_DCR, AVI_INTEGRATOR_SYNC_EXPLICIT};
    for (int i = 0; i < 2; i++) {
        outcome r = impact(1.0, 0.0, off, v0, hs[i], types[i], 0.0);
        printf("dcr: oblique on a pinned face, h = %g: v (%.15f, %.15f, %.15f), min height %.6e\n", hs[i], r.v[0],
               r.v[1], r.v[2], r.min_height);
        ck_assert(rel(r.v[0], 0.5) < 1e-12 && rel(r.v[1], 0.25) < 1e-12 && rel(r.v[2], 2.0) < 1e-12);
        ck_assert(r.min_height > (1.0 - 2e-3) * ETA1);
    }
}
END_TEST

START_TEST(test_dcr_coulomb_friction)
{
    /* The oblique hit of above, u_t = (0.5, 0.25), |u_t| = 0.559, J = 4:
     * mu = 0.05 slides, losing mu J = 0.2 of |u_t|; mu = 1 sticks (u_t
     * stops, never reverses). The kinetic energy lost is the friction
     * work; v_n is reversed as without friction. */
    const double off[2] = {0.01, -0.005}, v0[3] = {0.5, 0.25, -2.0}, mus[2] = {0.05, 1.0};
    static const double hs[2] = {2e-5, 7e-6};
    double ut = sqrt(0.5 * 0.5 + 0.25 * 0.25);
    for (int i = 0; i < 2; i++) {
        outcome r = impact(1.0, 0.0, off, v0, hs[i], AVI_INTEGRATOR_DCR, mus[i]);
        double keep = fmax(ut - mus[i] * 4.0, 0.0) / ut;
        printf("dcr: oblique on a pinned face, mu %g: v (%.15f, %.15f, %.15f), expected (%.15f, %.15f, 2), "
               "friction work %.15f, kinetic energy lost %.15f\n",
               mus[i], r.v[0], r.v[1], r.v[2], 0.5 * keep, 0.25 * keep, r.friction_work, r.k0 - r.k1);
        ck_assert(fabs(r.v[0] - 0.5 * keep) < 1e-12 && fabs(r.v[1] - 0.25 * keep) < 1e-12);
        ck_assert(rel(r.v[2], 2.0) < 1e-12);
        ck_assert(r.friction_work > 0.0 && fabs(r.friction_work - (r.k0 - r.k1)) < 1e-12 * r.k0);
    }
    /* A free triangle hit off its centroid, obliquely, with friction:
     * linear momentum is conserved to round-off. */
    outcome f = impact(1.0, 2.0, off, v0, 1e-5, AVI_INTEGRATOR_DCR, 0.3);
    double dp = 0.0;
    for (int c = 0; c < 3; c++) dp = fmax(dp, fabs(f.p1[c] - f.p0[c]));
    printf("dcr: free triangle with friction 0.3: |dp| %.1e, friction work %.6f\n", dp, f.friction_work);
    ck_assert(f.friction_work > 0.0 && dp <= 1e-14 * 3.0);
}
END_TEST

START_TEST(test_dcr_which_integrators_take_contact)
{
    for (int t = AVI_INTEGRATOR_SYNC_EXPLICIT; t < AVI_INTEGRATOR_COUNT; t++) {
        avi_model *mod = avi_model_create();
        int b = avi_model_add_body(mod, "b");
        uint32_t tri[1][3];
        for (int k = 0; k < 3; k++) {
            tri[0][k] = (uint32_t)avi_model_add_vertex(mod, b, corner[k]);
            avi_model_add_mass(mod, tri[0][k], 1.0);
        }
        avi_contact_settings cs = {ETA1, ETA_INF, 1e9, 0, 0.0};
        ck_assert_int_eq(avi_model_set_contact(mod, &cs), 0);
        ck_assert_int_eq(avi_model_add_contact_triangles(mod, (const uint32_t (*)[3])tri, 1), 0);
        avi_time_step rule = avi_default_time_step();
        ck_assert_int_eq(avi_model_finalize(mod, &rule), 0);
        avi_sync_options o = avi_default_sync_options();
        o.type = (avi_integrator_type)t;
        o.h = 1e-3;
        avi_error err;
        avi_engine *e = avi_engine_create_with(mod, &o, &err);
        int takes = t == AVI_INTEGRATOR_DCR || t == AVI_INTEGRATOR_SYNC_EXPLICIT || t == AVI_INTEGRATOR_SYNC_IMPLICIT;
        ck_assert_msg((e != NULL) == takes, "%s: %s", avi_integrator_name((avi_integrator_type)t),
                      e ? "accepted contact" : err.message);
        if (!e) ck_assert_int_eq(err.status, AVI_ERR_INPUT);
        avi_engine_destroy(e);
        avi_model_destroy(mod);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dcr");
    TCase *tc = tcase_create("dcr");
    tcase_add_test(tc, test_dcr_elastic_collision);
    tcase_add_test(tc, test_dcr_oblique_on_pinned_face);
    tcase_add_test(tc, test_dcr_coulomb_friction);
    tcase_add_test(tc, test_dcr_which_integrators_take_contact);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(suite)
