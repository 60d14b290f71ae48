/* Clock groups (src/core/clock_groups.h): potentials with bitwise-equal
 * steps tick from one queue entry. The event order, and so every bit of
 * the state, must be that of one clock per potential; checkpoints see one
 * entry per potential whatever the grouping. */
#include "check_main.h"
#include "avi/avi.h"
#include "avi/mesh.h"
#include "avi/scene.h"
#include "avi/sync.h"
#include "core/engine_internal.h"
#include "core/time_slice.h"
#include "contact/contact_manager.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const avi_solid_material rubber = {1.0e6, 0.3, 1000.0};

/* A jittered tet box with springs along one edge row and gravity, on step
 * levels: several groups, of several kinds, whose times coincide (levels
 * an octave apart) with member ids that interleave. */
static avi_model *levels_model(int levels, int nx)
{
    avi_mesh mesh;
    ck_assert_int_eq(avi_mesh_tet_box((double)nx * 0.01, 0.02, 0.02, nx, 2, 2, &mesh, NULL), AVI_OK);
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "box");
    size_t nv = mesh.vertex_count;
    for (size_t i = 0; i < nv; i++) {
        const double *p = mesh.x[i];
        double x[3] = {p[0], p[1], p[2]};
        /* Jitter so that steps differ; deterministic. */
        x[0] += 0.002 * sin(12.9898 * (double)i);
        x[1] += 0.002 * sin(78.233 * (double)i);
        avi_model_add_vertex(m, b, x);
    }
    for (size_t t = 0; t < mesh.tet_count; t++) {
        const uint32_t *v = mesh.tets[t];
        ck_assert_int_eq(avi_model_add_tet(m, v[0], v[1], v[2], v[3], &rubber), 0);
    }
    for (uint32_t i = 0; i + 1 < (uint32_t)nv && i < 8; i++) ck_assert_int_eq(avi_model_add_spring(m, i, i + 1, 50.0, -1.0), 0);
    const double gvec[3] = {0.0, 0.0, -9.81};
    avi_model_set_gravity(m, gvec);
    for (uint32_t i = 0; i < (uint32_t)nv; i++) {
        double x[3], v[3] = {0.3 * sin(1.0 + i), 0.2 * cos(3.0 * i), 0.1 * sin(7.0 * i)};
        const double *p = m->vert[i].x;
        x[0] = 1.03 * p[0];
        x[1] = p[1];
        x[2] = 0.98 * p[2];
        avi_model_set_state(m, i, x, v);
    }
    avi_time_step r = avi_default_time_step();
    r.levels_per_octave = levels;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    avi_mesh_free(&mesh);
    return m;
}

/* Rebuilds e's queue with one clock per potential (grouped = 0) or grouped. */
static void reload(avi_engine *e, int grouped)
{
    size_t n = avi_engine_queue_size(e);
    avi_event *ev = malloc((n + 1) * sizeof *ev);
    ck_assert_uint_eq(avi_engine_queue_collect(e, ev), n);
    avi_error err = {0};
    ck_assert_msg(avi_engine_queue_load(e, ev, n, grouped, &err) == AVI_OK, "%s", err.message);
    ck_assert_uint_eq(avi_engine_queue_size(e), n);
    free(ev);
}

static void assert_same_state(const avi_engine *a, const avi_engine *b)
{
    const avi_model *ma = a->model, *mb = b->model;
    ck_assert_uint_eq(ma->nv, mb->nv);
    ck_assert_msg(memcmp(ma->vert, mb->vert, ma->nv * sizeof *ma->vert) == 0, "vertex records differ");
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        ck_assert_uint_eq(avi_engine_event_count(a, (avi_kind)k), avi_engine_event_count(b, (avi_kind)k));
}

START_TEST(test_groups_give_the_single_clock_order)
{
    avi_model *ma = levels_model(4, 6), *mb = levels_model(4, 6);
    avi_engine *a = avi_engine_create(ma, NULL), *b = avi_engine_create(mb, NULL);
    ck_assert(a && b);
    ck_assert_uint_gt(a->groups.ngroup, 2);
    reload(b, 0);
    ck_assert_uint_eq(b->groups.ngroup, 0);
    /* One entry per group instead of one per member. */
    ck_assert_uint_lt(avi_tl_size(&a->queue), avi_tl_size(&b->queue));
    ck_assert_uint_eq(avi_engine_queue_size(a), avi_tl_size(&b->queue));
    double dt_min, dt_max;
    avi_model_time_step_range(ma, AVI_KIND_TET, &dt_min, &dt_max);
    for (int s = 1; s <= 40; s++) {
        double t = s * 7.3 * dt_max;
        ck_assert_int_eq(avi_engine_advance(a, t), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(b, t), AVI_OK);
        assert_same_state(a, b);
        /* A checkpoint's round trip regroups and changes nothing. */
        if (s % 10 == 0) reload(a, 1);
    }
    ck_assert_uint_gt(avi_engine_events_total(a), 50000);
    /* Ticks of coinciding groups interleaved by member id. */
    ck_assert_uint_gt(a->group_splits, 10);
    avi_engine_destroy(a);
    avi_engine_destroy(b);
    avi_model_destroy(ma);
    avi_model_destroy(mb);
}
END_TEST

/* Exact steps on a uniform mesh: the tets share steps by symmetry. */
START_TEST(test_exact_steps_group_equal_steps)
{
    avi_mesh mesh;
    ck_assert_int_eq(avi_mesh_tet_box(0.04, 0.02, 0.02, 4, 2, 2, &mesh, NULL), AVI_OK);
    avi_model *m[3];
    for (int c = 0; c < 3; c++) {
        m[c] = avi_model_create();
        int b = avi_model_add_body(m[c], "box");
        for (size_t i = 0; i < mesh.vertex_count; i++) avi_model_add_vertex(m[c], b, mesh.x[i]);
        for (size_t t = 0; t < mesh.tet_count; t++) {
            const uint32_t *v = mesh.tets[t];
            ck_assert_int_eq(avi_model_add_tet(m[c], v[0], v[1], v[2], v[3], &rubber), 0);
        }
        for (uint32_t i = 0; i < (uint32_t)mesh.vertex_count; i++) {
            double x[3], v[3] = {0.1 * sin(2.0 + i), 0.0, 0.05 * cos(5.0 * i)};
            for (int k = 0; k < 3; k++) x[k] = 1.02 * m[c]->vert[i].x[k];
            avi_model_set_state(m[c], i, x, v);
        }
        avi_time_step r = avi_default_time_step();
        ck_assert_int_eq(avi_model_finalize(m[c], &r), 0);
    }
    avi_engine *a = avi_engine_create(m[0], NULL), *b = avi_engine_create(m[1], NULL);
    avi_engine *c = avi_engine_create(m[2], NULL);
    ck_assert_uint_gt(a->groups.ngroup, 0);
    reload(b, 0);
    /* Both ways of running a group tick, with and without prefetching:
     * a drifts each group's vertex list at once, c each member's stencil. */
    a->prefetch = 1;
    c->prefetch = 0;
    c->drift_all_max = 0;
    double lo, hi;
    avi_model_time_step_range(m[0], AVI_KIND_TET, &lo, &hi);
    ck_assert_int_eq(avi_engine_advance(a, 5000 * hi), AVI_OK);
    ck_assert_int_eq(avi_engine_advance(b, 5000 * hi), AVI_OK);
    ck_assert_int_eq(avi_engine_advance(c, 5000 * hi), AVI_OK);
    assert_same_state(a, b);
    assert_same_state(c, b);
    avi_engine_destroy(a);
    avi_engine_destroy(b);
    avi_engine_destroy(c);
    for (int k = 0; k < 3; k++) avi_model_destroy(m[k]);
    avi_mesh_free(&mesh);
}
END_TEST

/* A tet bar graded 1:10 along x in the generator's order (x fastest), on
 * 16 step levels: levels an octave apart tie, their member ids interleave
 * row by row, and most tied levels lie apart along the bar. */
static avi_model *graded_bar_model(void)
{
    const int nx = 40;
    avi_mesh mesh;
    ck_assert_int_eq(avi_mesh_tet_box(1.0, 0.05, 0.05, nx, 2, 2, &mesh, NULL), AVI_OK);
    double a = log(10.0) * nx / (nx - 1.0);
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "bar");
    for (size_t i = 0; i < mesh.vertex_count; i++) {
        double x[3] = {(exp(a * mesh.x[i][0]) - 1.0) / (exp(a) - 1.0), mesh.x[i][1], mesh.x[i][2]};
        avi_model_add_vertex(m, b, x);
    }
    for (size_t t = 0; t < mesh.tet_count; t++) {
        const uint32_t *v = mesh.tets[t];
        ck_assert_int_eq(avi_model_add_tet(m, v[0], v[1], v[2], v[3], &rubber), 0);
    }
    for (uint32_t i = 0; i < (uint32_t)mesh.vertex_count; i++) {
        double x[3], v[3] = {0.2 * sin(2.0 + i), 0.1 * cos(3.0 * i), 0.05 * cos(5.0 * i)};
        for (int k = 0; k < 3; k++) x[k] = 1.02 * m->vert[i].x[k];
        avi_model_set_state(m, i, x, v);
    }
    avi_time_step r = avi_default_time_step();
    r.levels_per_octave = 16;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    avi_mesh_free(&mesh);
    return m;
}

/* In a tie, a group runs on past entries that share no vertex with it: the
 * state stays bitwise that of one clock per potential in id order, and of
 * groups that give way to every smaller id (no conflict matrix), with far
 * fewer cut ticks. */
START_TEST(test_tied_groups_pass_disjoint_entries)
{
    avi_model *m[3] = {graded_bar_model(), graded_bar_model(), graded_bar_model()};
    avi_engine *a = avi_engine_create(m[0], NULL), *b = avi_engine_create(m[1], NULL);
    avi_engine *c = avi_engine_create(m[2], NULL);
    ck_assert(a && b && c);
    ck_assert_ptr_nonnull(a->groups.conflict);
    uint64_t *matrix = b->groups.conflict; /* b: every pair of groups conflicts */
    b->groups.conflict = NULL;
    reload(c, 0);
    /* Groups of one level share vertices, others far along the bar not. */
    uint32_t ng = a->groups.ngroup, disjoint = 0;
    for (uint32_t x = 0; x < ng; x++)
        for (uint32_t y = 0; y < ng; y++) disjoint += !avi_groups_conflict(&a->groups, x, y);
    ck_assert_uint_gt(disjoint, ng * ng / 2);
    double lo, hi;
    avi_model_time_step_range(m[0], AVI_KIND_TET, &lo, &hi);
    for (int s = 1; s <= 10; s++) {
        ck_assert_int_eq(avi_engine_advance(a, s * 40.0 * hi), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(b, s * 40.0 * hi), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(c, s * 40.0 * hi), AVI_OK);
        assert_same_state(a, c);
        assert_same_state(b, c);
    }
    printf("graded bar on levels: %llu events, group ticks cut %llu (every smaller id: %llu)\n",
           (unsigned long long)avi_engine_events_total(a), (unsigned long long)a->group_splits,
           (unsigned long long)b->group_splits);
    ck_assert_uint_gt(b->group_splits, 1000);
    ck_assert_uint_lt(a->group_splits * 4, b->group_splits);
    b->groups.conflict = matrix;
    avi_engine_destroy(a);
    avi_engine_destroy(b);
    avi_engine_destroy(c);
    for (int k = 0; k < 3; k++) avi_model_destroy(m[k]);
}
END_TEST

/* A box of tetrahedra (shell = 0) or a strip of membranes and hinges on
 * one fixed step, so that all of its potentials tick as one group, with
 * vertex `fast` given an infinite velocity after finalizing: its
 * potentials' impulses are not finite from the first drift by a step (the
 * first tick, at t = 0, drifts by 0). Large enough for a time slice. */
static avi_model *blow_up_model(int shell, uint32_t *fast)
{
    static const avi_shell_material steel = {2.0e11, 0.3, 7850.0, 0.0035};
    avi_mesh mesh;
    if (shell) ck_assert_int_eq(avi_mesh_rect_grid(0.1, 0.05, 16, 8, &mesh, NULL), AVI_OK);
    else ck_assert_int_eq(avi_mesh_tet_box(0.04, 0.02, 0.02, 8, 4, 4, &mesh, NULL), AVI_OK);
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "body");
    for (size_t i = 0; i < mesh.vertex_count; i++) avi_model_add_vertex(m, b, mesh.x[i]);
    if (shell) {
        ck_assert_int_eq(avi_model_add_triangle_mesh(m, (const uint32_t (*)[3])mesh.triangles, mesh.triangle_count,
                                                     &steel, 1),
                         0);
    } else {
        for (size_t t = 0; t < mesh.tet_count; t++) {
            const uint32_t *v = mesh.tets[t];
            ck_assert_int_eq(avi_model_add_tet(m, v[0], v[1], v[2], v[3], &rubber), 0);
        }
    }
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = 1.0e-6;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    *fast = (uint32_t)mesh.vertex_count / 2; /* interior: not in the first potentials */
    m->vert[*fast].v[0] = INFINITY;
    avi_mesh_free(&mesh);
    return m;
}

/* A blow-up inside a group tick of one kind (the engine's dispatch-free
 * member loop, which checks the impulses once per tick) names the member
 * that one clock per potential names, and counts the same events; so does
 * a time slice on 2 and 3 threads (core/time_slice.h). */
START_TEST(test_blow_up_in_group_names_the_member)
{
    for (int shell = 0; shell < 2; shell++) {
        uint32_t fast;
        avi_model *ma = blow_up_model(shell, &fast), *mb = blow_up_model(shell, &fast);
        avi_model *mc = blow_up_model(shell, &fast), *md = blow_up_model(shell, &fast);
        avi_engine *a = avi_engine_create(ma, NULL), *b = avi_engine_create(mb, NULL);
        avi_engine *c = avi_engine_create(mc, NULL), *d = avi_engine_create(md, NULL);
        ck_assert_uint_eq(a->groups.ngroup, 1);
        reload(b, 0);
        ck_assert_int_eq(avi_engine_set_threads(c, 2), AVI_OK);
        ck_assert_int_eq(avi_engine_set_threads(d, 3), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(a, 1.0), AVI_ERR_RUN);
        ck_assert_int_eq(avi_engine_advance(b, 1.0), AVI_ERR_RUN);
        ck_assert_int_eq(avi_engine_advance(c, 1.0), AVI_ERR_RUN);
        ck_assert_int_eq(avi_engine_advance(d, 1.0), AVI_ERR_RUN);
        uint64_t slices, sliced, seam;
        avi_slice_stats(c, &slices, &sliced, &seam);
        ck_assert_uint_gt(sliced, 0);
        const char *ea = avi_engine_error(a)->message, *eb = avi_engine_error(b)->message;
        ck_assert_str_eq(ea, avi_engine_error(c)->message);
        ck_assert_str_eq(ea, avi_engine_error(d)->message);
        char vertex[32];
        snprintf(vertex, sizeof vertex, "%u", fast);
        ck_assert_msg(strstr(ea, "blow-up") && strstr(ea, shell ? "membrane" : "tet") && strstr(ea, vertex), "%s", ea);
        ck_assert_str_eq(ea, eb);
        /* The first tick, at t = 0, drifts by 0 (no NaN from 0 inf) and
         * kicks; the second fails, not at its first member and before its
         * last. */
        size_t all = ma->ntet + ma->nmembrane + ma->nhinge;
        ck_assert_uint_gt(avi_engine_events_total(a), all + 1);
        ck_assert_uint_lt(avi_engine_events_total(a), 2 * all);
        for (int k = 0; k < AVI_KIND_COUNT; k++) {
            ck_assert_uint_eq(avi_engine_event_count(a, (avi_kind)k), avi_engine_event_count(b, (avi_kind)k));
            ck_assert_uint_eq(avi_engine_event_count(a, (avi_kind)k), avi_engine_event_count(c, (avi_kind)k));
            ck_assert_uint_eq(avi_engine_event_count(a, (avi_kind)k), avi_engine_event_count(d, (avi_kind)k));
        }
        avi_engine_destroy(a);
        avi_engine_destroy(b);
        avi_engine_destroy(c);
        avi_engine_destroy(d);
        avi_model_destroy(ma);
        avi_model_destroy(mb);
        avi_model_destroy(mc);
        avi_model_destroy(md);
    }
}
END_TEST

/* Entries of a group that are not all at one (t, n) keep one clock each. */
START_TEST(test_split_group_stays_single_clocks)
{
    avi_model *ma = levels_model(2, 4), *mb = levels_model(2, 4);
    avi_engine *a = avi_engine_create(ma, NULL), *b = avi_engine_create(mb, NULL);
    uint32_t ngroup = a->groups.ngroup;
    ck_assert_uint_gt(ngroup, 1);
    /* Give the first member of group 0 a head start of one tick. */
    size_t n = avi_engine_queue_size(a);
    avi_event *ev = malloc(n * sizeof *ev);
    ck_assert_uint_eq(avi_engine_queue_collect(a, ev), n);
    const avi_clock_group *g0 = &a->groups.group[0];
    uint32_t lead = a->groups.member[g0->first];
    int found = 0;
    for (size_t i = 0; i < n; i++)
        if (ev[i].id == lead) {
            ev[i].t = g0->dt;
            ev[i].n = 1;
            found = 1;
        }
    ck_assert(found);
    avi_error err = {0};
    ck_assert_int_eq(avi_engine_queue_load(a, ev, n, 1, &err), AVI_OK);
    ck_assert_int_eq(avi_engine_queue_load(b, ev, n, 0, &err), AVI_OK);
    ck_assert_uint_eq(a->ncursor, ngroup - 1);
    ck_assert_int_eq(avi_engine_advance(a, 300 * g0->dt), AVI_OK);
    ck_assert_int_eq(avi_engine_advance(b, 300 * g0->dt), AVI_OK);
    assert_same_state(a, b);
    free(ev);
    avi_engine_destroy(a);
    avi_engine_destroy(b);
    avi_model_destroy(ma);
    avi_model_destroy(mb);
}
END_TEST

START_TEST(test_expand_mid_tick)
{
    avi_model *m = levels_model(4, 4);
    avi_engine *e = avi_engine_create(m, NULL);
    const avi_clock_groups *g = &e->groups;
    uint32_t k = 0;
    while (k < g->ngroup && g->group[k].count < 3) k++;
    ck_assert_uint_lt(k, g->ngroup);
    const avi_clock_group *gr = &g->group[k];
    const uint32_t *mem = g->member + gr->first;
    avi_event cursor = {7.0 * gr->dt, mem[2], 7u | AVI_GROUP_CURSOR};
    avi_event *out = malloc(gr->count * sizeof *out);
    ck_assert_uint_eq(avi_groups_expand(g, cursor, out), gr->count);
    for (uint32_t j = 0; j < gr->count; j++) {
        ck_assert_uint_eq(out[j].id, mem[j]);
        ck_assert_uint_eq(out[j].n, j < 2 ? 8u : 7u);
        ck_assert(out[j].t == (j < 2 ? 8.0 * gr->dt : 7.0 * gr->dt));
        ck_assert_uint_eq(avi_group_of(g, mem[j]), k);
    }
    free(out);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* A group's vertex list is the union of its members' stencils, ascending,
 * each vertex once (a tick drifts exactly these at its start). */
START_TEST(test_group_vertex_lists)
{
    avi_model *m = levels_model(4, 4);
    avi_engine *e = avi_engine_create(m, NULL);
    const avi_clock_groups *g = &e->groups;
    ck_assert_uint_gt(g->ngroup, 1);
    uint8_t *seen = calloc(m->nv, 1);
    for (uint32_t k = 0; k < g->ngroup; k++) {
        const avi_clock_group *gr = &g->group[k];
        const uint32_t *list = g->vertex + gr->vfirst;
        memset(seen, 0, m->nv);
        size_t stencil_total = 0;
        for (uint32_t j = 0; j < gr->count; j++) {
            uint32_t id = g->member[gr->first + j], i = id & AVI_ID_INDEX_MASK;
            const uint32_t *v;
            int n;
            switch (id >> AVI_ID_KIND_SHIFT) {
            case AVI_KIND_SPRING: v = m->springs[i].v; n = 2; break;
            case AVI_KIND_TET: v = m->tets[i].v; n = 4; break;
            case AVI_KIND_GRAVITY: v = m->gravity[i].v; n = 1; break;
            default: ck_abort_msg("unexpected kind in the levels model"); return;
            }
            for (int a = 0; a < n; a++) seen[v[a]] = 1;
            stencil_total += (size_t)n;
        }
        size_t distinct = 0;
        for (size_t v = 0; v < m->nv; v++) distinct += seen[v];
        ck_assert_uint_eq(gr->vcount, distinct);
        ck_assert_uint_lt(gr->vcount, stencil_total); /* members share vertices */
        for (uint32_t a = 0; a < gr->vcount; a++) {
            ck_assert(seen[list[a]]);
            if (a) ck_assert_uint_lt(list[a - 1], list[a]);
        }
    }
    free(seen);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

static void load_fails(avi_engine *e, const avi_event *ev, size_t n, const char *needle)
{
    avi_error err = {0};
    ck_assert_int_eq(avi_engine_queue_load(e, ev, n, 1, &err), AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, needle) != NULL, "'%s' lacks '%s'", err.message, needle);
}

START_TEST(test_load_rejects_bad_entries)
{
    avi_model *m = levels_model(4, 3);
    avi_engine *e = avi_engine_create(m, NULL);
    size_t n = avi_engine_queue_size(e);
    avi_event *ev = malloc((n + 1) * sizeof *ev), *bad = malloc((n + 1) * sizeof *bad);
    ck_assert_uint_eq(avi_engine_queue_collect(e, ev), n);
    size_t before = avi_tl_size(&e->queue);
    memcpy(bad, ev, n * sizeof *ev);
    bad[n] = ev[0]; /* a second clock */
    load_fails(e, bad, n + 1, "second clock");
    load_fails(e, ev, n - 1, "has no clock");
    memcpy(bad, ev, n * sizeof *ev);
    bad[3].n |= AVI_GROUP_CURSOR;
    load_fails(e, bad, n, "not a valid clock");
    memcpy(bad, ev, n * sizeof *ev);
    bad[3].t = -1.0;
    load_fails(e, bad, n, "not a valid clock");
    bad[3].t = NAN;
    load_fails(e, bad, n, "not a valid clock");
    memcpy(bad, ev, n * sizeof *ev);
    bad[3].id = avi_event_id(AVI_KIND_TET, (uint32_t)m->ntet);
    load_fails(e, bad, n, "no potential");
    bad[3].id = avi_event_id(AVI_KIND_COUNT, 0);
    load_fails(e, bad, n, "not a valid clock");
    /* The queue was left as it was. */
    ck_assert_uint_eq(avi_tl_size(&e->queue), before);
    ck_assert_int_eq(avi_engine_advance(e, 1e-4), AVI_OK);
    free(ev);
    free(bad);
    avi_engine_destroy(e);
    avi_model_destroy(m);
}
END_TEST

/* With contact the manager can cut a group's tick (a vertex over the speed
 * cap); the impact must still run as with one clock per potential. */
START_TEST(test_groups_with_contact)
{
    const char *ov[] = {"bodies.0.mesh.subdivisions=2", "bodies.1.mesh.rings=6", "time_step.levels_per_octave=4",
                        "time.end=4.0e-4"};
    avi_engine *e[2];
    avi_model *m[2];
    avi_scene s[2];
    avi_scene_bodies info[2];
    for (int c = 0; c < 2; c++) {
        avi_error err = {0};
        ck_assert_msg(avi_scene_load_builtin("sphere-plate", ov, 4, &s[c], &err) == AVI_OK, "%s", err.message);
        ck_assert_msg(avi_scene_build(&s[c], &m[c], &info[c], &err) == AVI_OK, "%s", err.message);
        e[c] = avi_engine_create_for_scene(&s[c], &info[c], m[c], &err);
        ck_assert_msg(e[c] != NULL, "%s", err.message);
    }
    ck_assert_uint_gt(e[0]->groups.ngroup, 2);
    reload(e[1], 0);
    for (int k = 1; k <= 40; k++) {
        double t = k * 1.0e-5;
        ck_assert_int_eq(avi_engine_advance(e[0], t), AVI_OK);
        ck_assert_int_eq(avi_engine_advance(e[1], t), AVI_OK);
        assert_same_state(e[0], e[1]);
    }
    ck_assert_uint_gt(avi_engine_event_count(e[0], AVI_KIND_CONTACT), 0);
    ck_assert_uint_gt(e[0]->group_splits, 0);
    printf("contact: %llu group ticks cut, %llu speed triggers\n", (unsigned long long)e[0]->group_splits,
           (unsigned long long)e[0]->contact->clock.speed_triggers);
    for (int c = 0; c < 2; c++) {
        avi_engine_destroy(e[c]);
        avi_model_destroy(m[c]);
        avi_scene_bodies_free(&info[c]);
        avi_scene_free(&s[c]);
    }
}
END_TEST

static Suite *groups_suite(void)
{
    Suite *s = suite_create("clock_groups");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_groups_give_the_single_clock_order);
    tcase_add_test(tc, test_exact_steps_group_equal_steps);
    tcase_add_test(tc, test_tied_groups_pass_disjoint_entries);
    tcase_add_test(tc, test_blow_up_in_group_names_the_member);
    tcase_add_test(tc, test_split_group_stays_single_clocks);
    tcase_add_test(tc, test_expand_mid_tick);
    tcase_add_test(tc, test_group_vertex_lists);
    tcase_add_test(tc, test_load_rejects_bad_entries);
    tcase_add_test(tc, test_groups_with_contact);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(groups_suite)
