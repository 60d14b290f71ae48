/* One Coulomb friction impulse (src/contact/contact_friction.c) on
 * vertex-face and edge-edge stencils, checked against its definition: the
 * relative tangential velocity of the closest points stops when mu jn
 * suffices and otherwise loses W mu jn in its own direction; the normal
 * relative velocity and the linear momentum are unchanged; the energy it
 * reports is the kinetic energy lost; pinned vertices keep their velocity. */
#include "check_main.h"
#include "contact/contact_friction.h"
#include "contact/contact_potential.h"

#include <math.h>
#include <string.h>

typedef struct {
    avi_vertex V[4];
    uint32_t v[4];
    double gd[4][3], n[3], c[4];
    int type;
} stencil;

/* Vertices at x with velocities u and inverse masses im; the distance
 * gradient, normal and closest-point weights from the positions. */
static void make(stencil *s, int type, const double x[4][3], const double u[4][3], const double im[4])
{
    memset(s, 0, sizeof *s);
    s->type = type;
    for (int a = 0; a < 4; a++) {
        s->v[a] = (uint32_t)a;
        memcpy(s->V[a].x, x[a], sizeof x[a]);
        memcpy(s->V[a].v, u[a], sizeof u[a]);
        s->V[a].inv_mass = im[a];
    }
    double d = type == AVI_STENCIL_VF ? avi_pt_distance_gradient(x, s->gd) : avi_ee_distance_gradient(x, s->gd);
    ck_assert(d > 0.0);
    for (int k = 0; k < 3; k++) s->n[k] = s->gd[0][k] + (type == AVI_STENCIL_EE ? s->gd[1][k] : 0.0);
    double nn = sqrt(v3_dot(s->n, s->n));
    for (int k = 0; k < 3; k++) s->n[k] /= nn;
    for (int a = 0; a < 4; a++) s->c[a] = v3_dot(s->gd[a], s->n);
}

static void relative(const stencil *s, double un[1], double ut[3])
{
    double u[3] = {0, 0, 0};
    for (int a = 0; a < 4; a++)
        for (int k = 0; k < 3; k++) u[k] += s->c[a] * s->V[a].v[k];
    un[0] = v3_dot(u, s->n);
    for (int k = 0; k < 3; k++) ut[k] = u[k] - un[0] * s->n[k];
}

static void momentum(const stencil *s, double p[3], double *ke, double *scale)
{
    p[0] = p[1] = p[2] = *ke = *scale = 0.0;
    for (int a = 0; a < 4; a++) {
        if (s->V[a].inv_mass == 0.0) continue;
        double m = 1.0 / s->V[a].inv_mass;
        for (int k = 0; k < 3; k++) p[k] += m * s->V[a].v[k];
        *ke += 0.5 * m * v3_dot(s->V[a].v, s->V[a].v);
        *scale += m * sqrt(v3_dot(s->V[a].v, s->V[a].v));
    }
}

/* Applies friction with mu jn and checks every property; returns the
 * tangential speed after over before. */
static double check(stencil *s, double mu, double jn)
{
    double un0, ut0[3], un1, ut1[3], p0[3], p1[3], ke0, ke1, scale;
    relative(s, &un0, ut0);
    momentum(s, p0, &ke0, &scale);
    double W = 0.0;
    for (int a = 0; a < 4; a++) W += s->c[a] * s->c[a] * s->V[a].inv_mass;
    double before[4][3];
    for (int a = 0; a < 4; a++) memcpy(before[a], s->V[a].v, sizeof before[a]);
    double lost = avi_contact_friction(s->V, s->v, s->type, (const double (*)[3])s->gd, jn, mu, NULL);
    relative(s, &un1, ut1);
    momentum(s, p1, &ke1, &scale);
    double sp0 = sqrt(v3_dot(ut0, ut0)), sp1 = sqrt(v3_dot(ut1, ut1));
    double want = fmax(sp0 - W * mu * jn, 0.0);
    ck_assert_msg(fabs(sp1 - want) <= 1e-13 * sp0, "tangential speed %.17g, want %.17g", sp1, want);
    if (sp1 > 1e-12 * sp0) ck_assert(v3_dot(ut0, ut1) > 0.0); /* never reversed */
    ck_assert(fabs(un1 - un0) <= 1e-13 * sp0);
    int pinned = 0;
    for (int a = 0; a < 4; a++) pinned |= s->V[a].inv_mass == 0.0;
    /* A pinned side takes momentum (the obstacle's mass is infinite). */
    if (!pinned)
        for (int k = 0; k < 3; k++) ck_assert(fabs(p1[k] - p0[k]) <= 1e-15 * scale);
    ck_assert(lost >= 0.0);
    ck_assert_msg(fabs(lost - (ke0 - ke1)) <= 1e-12 * ke0, "reported %.17g, kinetic energy lost %.17g", lost, ke0 - ke1);
    for (int a = 0; a < 4; a++)
        if (s->V[a].inv_mass == 0.0) ck_assert(memcmp(before[a], s->V[a].v, sizeof before[a]) == 0);
    return sp0 > 0.0 ? sp1 / sp0 : 0.0;
}

static const double vf_x[4][3] = {{0.1, 0.2, 1e-3}, {0, 0, 0}, {1, 0, 0.001}, {0, 1, -0.002}};
static const double vf_u[4][3] = {{1.0, -0.5, -0.3}, {0.1, 0.2, 0.0}, {-0.2, 0.3, 0.1}, {0.0, 0.1, -0.1}};
static const double ee_x[4][3] = {{0.2, -1, 1e-3}, {0.3, 1, 2e-3}, {-1, 0.1, 0}, {1, 0.2, 0}};
static const double ee_u[4][3] = {{0.4, 0.5, -0.3}, {0.2, 0.1, -0.2}, {-0.3, 0.1, 0.2}, {0.1, -0.6, 0.0}};

/* The stencil sticks with a large normal impulse and slides, slower, with
 * the small one. */
static void stick_and_slide(int type, const double im[4], double mu, double jn_slide)
{
    const double (*x)[3] = type == AVI_STENCIL_VF ? vf_x : ee_x, (*u)[3] = type == AVI_STENCIL_VF ? vf_u : ee_u;
    stencil s;
    make(&s, type, x, u, im);
    ck_assert(check(&s, mu, 100.0) <= 1e-13);
    make(&s, type, x, u, im);
    double r = check(&s, mu, jn_slide);
    ck_assert(r > 0.0 && r < 1.0);
}

START_TEST(test_vertex_face)
{
    const double im[4] = {1.0, 0.5, 1.0 / 3.0, 0.25};
    stick_and_slide(AVI_STENCIL_VF, im, 0.5, 0.2);
    stencil s;
    make(&s, AVI_STENCIL_VF, vf_x, vf_u, im);
    ck_assert(check(&s, 0.0, 1.0) == 1.0); /* no friction */
}
END_TEST

START_TEST(test_edge_edge)
{
    const double im[4] = {2.0, 1.0, 0.5, 0.1};
    stick_and_slide(AVI_STENCIL_EE, im, 0.3, 0.5);
}
END_TEST

/* A pinned triangle or edge (an obstacle): infinite mass, untouched; the
 * moving side alone is slowed. */
START_TEST(test_pinned_side)
{
    const double vf_im[4] = {1.0, 0.0, 0.0, 0.0}, ee_im[4] = {1.0, 1.0, 0.0, 0.0};
    stick_and_slide(AVI_STENCIL_VF, vf_im, 0.5, 0.1);
    stick_and_slide(AVI_STENCIL_EE, ee_im, 0.5, 0.1);
    /* Both sides pinned: nothing to do. */
    const double none[4] = {0, 0, 0, 0};
    stencil s;
    make(&s, AVI_STENCIL_VF, vf_x, vf_u, none);
    ck_assert(avi_contact_friction(s.V, s.v, s.type, (const double (*)[3])s.gd, 1.0, 1.0, NULL) == 0.0);
}
END_TEST

static Suite *friction_suite(void)
{
    Suite *s = suite_create("contact_friction");
    TCase *tc = tcase_create("impulse");
    tcase_add_test(tc, test_vertex_face);
    tcase_add_test(tc, test_edge_edge);
    tcase_add_test(tc, test_pinned_side);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(friction_suite)
