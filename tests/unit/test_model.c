/* Model building: degenerate input is rejected with a message naming the
 * element; masses are lumped; time-step rules give the documented values. */
#include "check_main.h"
#include "avi/avi.h"
#include "core/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const avi_shell_material steel = {2.0e11, 0.3, 7850.0, 0.0035};
static const avi_solid_material rubber = {1.0e6, 0.45, 1100.0};

static avi_model *with_vertices(const double (*X)[3], int n)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "part");
    for (int i = 0; i < n; i++) ck_assert(avi_model_add_vertex(m, b, X[i]) == i);
    return m;
}

static void expect_error(avi_model *m, int rc, const char *needle)
{
    ck_assert_int_ne(rc, 0);
    const avi_error *err = avi_model_error(m);
    ck_assert_int_eq(err->status, AVI_ERR_INPUT);
    if (!strstr(err->message, needle)) ck_abort_msg("message '%s' lacks '%s'", err->message, needle);
}

START_TEST(test_zero_area_triangle)
{
    const double X[4][3] = {{0, 0, 0}, {1, 0, 0}, {2, 0, 0}, {0, 1, 0}};
    avi_model *m = with_vertices(X, 4);
    ck_assert_int_eq(avi_model_add_membrane(m, 0, 1, 3, &steel), 0);
    expect_error(m, avi_model_add_membrane(m, 0, 1, 2, &steel), "body 'part': triangle 1 (vertices 0, 1, 2) has zero area");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_inverted_and_flat_tets)
{
    const double X[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {1, 1, 0}};
    avi_model *m = with_vertices(X, 5);
    expect_error(m, avi_model_add_tet(m, 0, 2, 1, 3, &rubber), "tetrahedron 0 (vertices 0, 2, 1, 3) has negative volume");
    expect_error(m, avi_model_add_tet(m, 0, 1, 2, 4, &rubber), "tetrahedron 0 (vertices 0, 1, 2, 4) has zero volume");
    ck_assert_int_eq(avi_model_add_tet(m, 0, 1, 2, 3, &rubber), 0);
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_repeated_vertex_and_range)
{
    const double X[3][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    avi_model *m = with_vertices(X, 3);
    expect_error(m, avi_model_add_membrane(m, 0, 1, 1, &steel), "repeats vertex 1");
    expect_error(m, avi_model_add_spring(m, 0, 7, 1.0, -1.0), "vertex 7 out of range");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_nan_coordinates)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "cloud");
    const double ok[3] = {0, 0, 0}, bad[3] = {0, NAN, 0};
    avi_model_add_vertex(m, b, ok);
    expect_error(m, (int)avi_model_add_vertex(m, b, bad), "body 'cloud': vertex 1 has a non-finite position");
    const double inf_v[3] = {INFINITY, 0, 0};
    expect_error(m, avi_model_set_state(m, 0, ok, inf_v), "non-finite initial state");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_bad_mass)
{
    const double X[2][3] = {{0, 0, 0}, {1, 0, 0}};
    avi_model *m = with_vertices(X, 2);
    expect_error(m, avi_model_add_mass(m, 0, -1.0), "mass -1 must be positive");
    expect_error(m, avi_model_add_mass(m, 0, 0.0), "must be positive");
    avi_model_add_mass(m, 0, 1.0);
    avi_model_add_spring(m, 0, 1, 1.0, -1.0);
    /* vertex 1 has neither an element mass nor a particle mass */
    expect_error(m, avi_model_finalize(m, NULL), "body 'part': vertex 1 has no mass");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_bad_time_steps)
{
    const double X[2][3] = {{0, 0, 0}, {1, 0, 0}};
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = -1e-3;
    avi_model *m = with_vertices(X, 2);
    avi_model_add_mass(m, 0, 1.0);
    avi_model_add_mass(m, 1, 1.0);
    avi_model_add_spring(m, 0, 1, 1.0, -1.0);
    expect_error(m, avi_model_finalize(m, &r), "time_step.fixed must be positive");
    r = avi_default_time_step();
    r.safety = 0.0;
    expect_error(m, avi_model_finalize(m, &r), "time_step.safety must be positive");
    expect_error(m, avi_model_set_body_time_step(m, 0, NAN), "must be positive and finite");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_non_manifold_and_orientation)
{
    const double X[5][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, -1, 0}, {0, 0, 1}};
    avi_model *m = with_vertices(X, 5);
    const uint32_t fan[3][3] = {{0, 1, 2}, {1, 0, 3}, {0, 1, 4}};
    expect_error(m, avi_model_add_triangle_mesh(m, fan, 3, &steel, 1), "edge (0, 1) is shared by 3 triangles");
    avi_model_destroy(m);
    m = with_vertices(X, 5);
    const uint32_t flipped[2][3] = {{0, 1, 2}, {0, 1, 3}};
    expect_error(m, avi_model_add_triangle_mesh(m, flipped, 2, &steel, 1), "opposite orientations");
    avi_model_destroy(m);
}
END_TEST

START_TEST(test_lumped_masses)
{
    const double X[4][3] = {{0, 0, 0}, {2, 0, 0}, {0, 3, 0}, {0, 0, 1}};
    avi_model *m = with_vertices(X, 4);
    ck_assert_int_eq(avi_model_add_tet(m, 0, 1, 2, 3, &rubber), 0);
    ck_assert_int_eq(avi_model_add_membrane(m, 0, 1, 2, &steel), 0);
    double vol = 1.0, area = 3.0;
    double tet_share = rubber.density * vol / 4.0, tri_share = steel.density * steel.thickness * area / 3.0;
    ck_assert(fabs(avi_model_vertex_mass(m, 0) - (tet_share + tri_share)) < 1e-12 * tri_share);
    ck_assert(fabs(avi_model_vertex_mass(m, 3) - tet_share) < 1e-12 * tet_share);
    avi_model_destroy(m);
}
END_TEST

/* Stability rule on a zero-rest-length spring between two masses: omega^2 =
 * k (1/m1 + 1/m2), dt = safety * 2 / omega. CFL on a tet: delta r / c. */
START_TEST(test_time_step_rules)
{
    const double X[2][3] = {{0, 0, 0}, {1, 0, 0}};
    avi_model *m = with_vertices(X, 2);
    avi_model_add_mass(m, 0, 2.0);
    avi_model_add_mass(m, 1, 3.0);
    avi_model_add_spring(m, 0, 1, 7.0, 0.0);
    avi_time_step r = avi_default_time_step();
    r.safety = 0.8;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    double expect = 0.8 * 2.0 / sqrt(7.0 * (1.0 / 2.0 + 1.0 / 3.0));
    ck_assert(fabs(avi_model_time_step(m, AVI_KIND_SPRING, 0) - expect) < 1e-12 * expect);
    avi_model_destroy(m);

    const double T[4][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
    m = with_vertices(T, 4);
    avi_model_add_tet(m, 0, 1, 2, 3, &rubber);
    r = avi_default_time_step();
    r.rule = AVI_DT_CFL;
    r.delta = 0.1;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    double mu, lambda;
    avi_lame(rubber.youngs, rubber.poisson, &mu, &lambda);
    double inradius = 3.0 * (1.0 / 6.0) / (1.5 + sqrt(3.0) / 2.0);
    expect = 0.1 * inradius / sqrt((lambda + 2 * mu) / rubber.density);
    ck_assert(fabs(avi_model_time_step(m, AVI_KIND_TET, 0) - expect) < 1e-12 * expect);
    avi_model_destroy(m);
}
END_TEST

/* Step levels: every rule step is rounded down to top 2^(-k/L), at most a
 * factor 2^(1/L) below the exact step, equal bits on a level; the AVI on
 * them still conserves momentum and keeps its energy. */
static avi_model *spring_chain(int n, int levels)
{
    double (*X)[3] = calloc((size_t)n + 1, sizeof *X);
    for (int i = 0; i <= n; i++) X[i][0] = i;
    avi_model *m = with_vertices((const double (*)[3])X, n + 1);
    free(X);
    for (int i = 0; i <= n; i++) avi_model_add_mass(m, (uint32_t)i, 1.0 + 0.37 * (i % 5));
    for (int i = 0; i < n; i++) avi_model_add_spring(m, (uint32_t)i, (uint32_t)i + 1, 1.0 + 3.0 * i, 0.0);
    for (int i = 0; i <= n; i++) {
        double x[3] = {1.05 * i, 0.01 * sin(i), 0.0}, v[3] = {0.1 * cos(3.0 * i), 0.05 * sin(2.0 * i), 0.02};
        avi_model_set_state(m, (uint32_t)i, x, v);
    }
    avi_time_step r = avi_default_time_step();
    r.neighbor_ratio = 0.0;
    r.levels_per_octave = levels;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

START_TEST(test_step_levels)
{
    const int n = 40, L = 4;
    avi_model *exact = spring_chain(n, 0), *q = spring_chain(n, L);
    double top = 0.0;
    for (int i = 0; i < n; i++) top = fmax(top, avi_model_time_step(exact, AVI_KIND_SPRING, (size_t)i));
    int distinct = 0;
    for (int i = 0; i < n; i++) {
        double dt = avi_model_time_step(exact, AVI_KIND_SPRING, (size_t)i);
        double dq = avi_model_time_step(q, AVI_KIND_SPRING, (size_t)i);
        ck_assert_msg(dq <= dt && dq * exp2(1.0 / L) > dt, "spring %d: %.17g from %.17g", i, dq, dt);
        double level = L * log2(top / dq);
        ck_assert_msg(fabs(level - round(level)) < 1e-9, "spring %d: level %.12g", i, level);
        ck_assert(dq == top * exp2(-round(level) / L));
        int seen = 0;
        for (int j = 0; j < i; j++) seen |= avi_model_time_step(q, AVI_KIND_SPRING, (size_t)j) == dq;
        distinct += !seen;
    }
    double lo, hi;
    avi_model_time_step_range(exact, AVI_KIND_SPRING, &lo, &hi);
    ck_assert_int_le(distinct, (int)ceil(L * log2(hi / lo)) + 1);
    ck_assert_int_lt(distinct, n / 2); /* levels are shared */

    /* The AVI on levels: momentum to round-off, energy bounded. */
    avi_error err;
    avi_engine *e = avi_engine_create(q, &err);
    ck_assert_ptr_nonnull(e);
    avi_observation o0, o;
    avi_engine_observe(e, 0.0, &o0);
    double p0 = 0.0, dev = 0.0;
    for (int i = 0; i <= n; i++) p0 += avi_model_vertex_mass(q, (uint32_t)i) * 0.15;
    for (int k = 1; k <= 200; k++) {
        double t = k * 200.0 * lo;
        ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
        avi_engine_observe(e, t, &o);
        dev = fmax(dev, fabs(o.total - o0.total) / o0.total);
        for (int c = 0; c < 3; c++)
            ck_assert_msg(fabs(o.linear_momentum[c] - o0.linear_momentum[c]) < 1e-12 * p0, "momentum %d", c);
    }
    ck_assert_msg(dev < 0.05, "energy deviation %.3e", dev);
    ck_assert_uint_gt(avi_engine_events_total(e), 40000);
    avi_engine_destroy(e);
    avi_model_destroy(exact);
    avi_model_destroy(q);

    /* The default rule puts steps on 16 levels per octave: finalizing with
     * no rule gives the steps of an explicit L = 16, not the exact ones. */
    avi_model *d = with_vertices((const double (*)[3])(double[4][3]){{0, 0, 0}, {1, 0, 0}, {3, 0, 0}, {4, 0, 0}}, 4);
    for (uint32_t i = 0; i < 4; i++) avi_model_add_mass(d, i, 1.0);
    avi_model_add_spring(d, 0, 1, 1.0, 0.0); /* separate springs: no neighbour cap */
    avi_model_add_spring(d, 2, 3, 2.9, 0.0);
    ck_assert_int_eq(avi_model_finalize(d, NULL), 0);
    double d0 = avi_model_time_step(d, AVI_KIND_SPRING, 0), d1 = avi_model_time_step(d, AVI_KIND_SPRING, 1);
    double exact1 = 0.25 * 2.0 / sqrt(2.9 * 2.0); /* omega^2 = k (1/m_a + 1/m_b) */
    ck_assert(fabs(d0 - 0.25 * 2.0 / sqrt(2.0)) < 1e-14); /* the top level */
    ck_assert_msg(d1 < exact1 && d1 * exp2(1.0 / 16.0) > exact1, "%.17g from %.17g", d1, exact1);
    ck_assert(d1 == d0 * exp2(-13.0 / 16.0)); /* 16 log2(sqrt(2.9)) = 12.3, rounded up */
    avi_model_destroy(d);

    /* Out of range, and meaningless with the fixed rule (ignored there). */
    const double Y[2][3] = {{0, 0, 0}, {1, 0, 0}};
    avi_model *m = with_vertices(Y, 2);
    avi_model_add_mass(m, 0, 1.0);
    avi_model_add_mass(m, 1, 1.0);
    avi_model_add_spring(m, 0, 1, 1.0, 0.0);
    avi_time_step r = avi_default_time_step();
    r.levels_per_octave = 65;
    expect_error(m, avi_model_finalize(m, &r), "levels_per_octave");
    avi_model_destroy(m);
}
END_TEST

/* Steps that differ only by rounding become the smallest of them; steps
 * further apart stay apart, and no step rises. Separate springs (no shared
 * vertex, so no neighbour cap) with stiffnesses k (1 + eps). */
START_TEST(test_rounding_equal_steps_merge)
{
    const double rel[5] = {0.0, 4e-14, -3e-14, 1e-9, -1e-9}; /* relative stiffness changes */
    double X[10][3] = {{0}};
    for (int i = 0; i < 10; i++) X[i][0] = 2.0 * (i / 2) + (i % 2);
    avi_model *m = with_vertices((const double (*)[3])X, 10);
    for (int i = 0; i < 10; i++) avi_model_add_mass(m, (uint32_t)i, 1.5);
    double exact[5];
    for (int s = 0; s < 5; s++) {
        double k = 7.0 * (1.0 + rel[s]);
        avi_model_add_spring(m, (uint32_t)(2 * s), (uint32_t)(2 * s + 1), k, 0.0);
        exact[s] = 0.25 * 2.0 / sqrt(k * (2.0 / 1.5));
    }
    const double g[3] = {0.0, 0.0, -9.81};
    avi_model_set_gravity(m, g);
    avi_time_step exact_rule = avi_default_time_step();
    exact_rule.levels_per_octave = 0; /* the merge applies to exact steps */
    ck_assert_int_eq(avi_model_finalize(m, &exact_rule), 0);
    double dt[5];
    for (int s = 0; s < 5; s++) dt[s] = avi_model_time_step(m, AVI_KIND_SPRING, (size_t)s);
    /* the first three within 1e-12: all the smallest (spring 1, stiffest) */
    ck_assert_msg(dt[0] == dt[1] && dt[2] == dt[1], "%.17g %.17g %.17g", dt[0], dt[1], dt[2]);
    ck_assert(fabs(dt[1] - exact[1]) <= 1e-15 * exact[1]);
    /* 1e-9 apart: their own steps */
    ck_assert(dt[3] < dt[1] && dt[4] > dt[1]);
    for (int s = 3; s < 5; s++) ck_assert(fabs(dt[s] - exact[s]) <= 1e-15 * exact[s]);
    for (int s = 0; s < 5; s++) ck_assert(dt[s] <= exact[s] * (1.0 + 1e-15));
    /* gravity takes the smallest step on its vertex, merged the same way */
    for (size_t i = 0; i < 10; i++)
        ck_assert(avi_model_time_step(m, AVI_KIND_GRAVITY, i) == dt[i / 2]);
    avi_model_destroy(m);
}
END_TEST

/* The kinds table (core/kinds.h) has one row per potential kind, in rank
 * order: a kind added to include/avi/types.h without its row fails here
 * (the engine would have no event for it). Each row's stencil fits the
 * generic work arrays, its mesh vertices lead its slots, and its stencil,
 * count and step lookups read the model's array. */
START_TEST(test_kinds_table)
{
    unsigned kinds[AVI_KIND_COUNT + 1], n = 0;
#define ROW(K, ...) kinds[n < AVI_KIND_COUNT ? n : AVI_KIND_COUNT] = K, n++;
    AVI_POTENTIAL_KINDS(ROW)
#undef ROW
    ck_assert_uint_eq(n, AVI_KIND_CONTACT);
    for (unsigned k = 0; k < n; k++) {
        ck_assert_uint_eq(kinds[k], k);
        ck_assert_int_gt(avi_kind_slots(k), 0);
        ck_assert_int_le(avi_kind_slots(k), AVI_STENCIL_MAX);
        ck_assert_int_gt(avi_kind_vertices(k), 0);
        ck_assert_int_le(avi_kind_vertices(k), avi_kind_slots(k));
        ck_assert_uint_gt(avi_kind_record_size(k), 0);
    }
    ck_assert_int_eq(avi_kind_slots(AVI_KIND_CONTACT), 0);
    ck_assert(avi_kind_flags(AVI_KIND_GRAVITY) == AVI_KIND_LINEAR); /* external, not damped */
    /* A spring and gravity: the lookups name the records of the model. */
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "b");
    double x0[3] = {0, 0, 0}, x1[3] = {1, 0, 0}, g[3] = {0, 0, -9.81};
    avi_model_add_vertex(m, b, x0);
    avi_model_add_vertex(m, b, x1);
    ck_assert_int_eq(avi_model_add_mass(m, 0, 1.0), AVI_OK);
    ck_assert_int_eq(avi_model_add_mass(m, 1, 1.0), AVI_OK);
    ck_assert_int_eq(avi_model_add_spring(m, 0, 1, 100.0, 1.0), AVI_OK);
    avi_model_set_gravity(m, g);
    ck_assert_int_eq(avi_model_finalize(m, NULL), AVI_OK);
    const uint32_t *v;
    ck_assert_int_eq(avi_model_stencil(m, AVI_KIND_SPRING, 0, &v), 2);
    ck_assert(v == m->springs[0].v && avi_kind_record(m, AVI_KIND_SPRING, 0) == &m->springs[0]);
    ck_assert_uint_eq(avi_model_potential_count(m, AVI_KIND_GRAVITY), 2);
    ck_assert_int_eq(avi_model_stencil(m, AVI_KIND_GRAVITY, 1, &v), 1);
    ck_assert_uint_eq(v[0], 1);
    ck_assert(avi_model_time_step(m, AVI_KIND_SPRING, 0) == m->springs[0].dt && m->springs[0].dt > 0.0);
    ck_assert_int_eq(avi_model_stencil(m, AVI_KIND_CONTACT, 0, &v), 0);
    ck_assert_ptr_null(v);
    avi_model_destroy(m);
}
END_TEST

static Suite *model_suite(void)
{
    Suite *s = suite_create("model");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_zero_area_triangle);
    tcase_add_test(tc, test_inverted_and_flat_tets);
    tcase_add_test(tc, test_repeated_vertex_and_range);
    tcase_add_test(tc, test_nan_coordinates);
    tcase_add_test(tc, test_bad_mass);
    tcase_add_test(tc, test_bad_time_steps);
    tcase_add_test(tc, test_non_manifold_and_orientation);
    tcase_add_test(tc, test_lumped_masses);
    tcase_add_test(tc, test_time_step_rules);
    tcase_add_test(tc, test_step_levels);
    tcase_add_test(tc, test_rounding_equal_steps_merge);
    tcase_add_test(tc, test_kinds_table);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(model_suite)
