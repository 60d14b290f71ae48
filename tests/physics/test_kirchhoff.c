/* bending: midedge against Kirchhoff-Love plate and shell theory.
 *
 * Plate vibration.
 * Steel plate h = 5 mm (E = 2e11, nu = 0.3, rho = 7850), square of side
 * a = 0.1 m or disk of radius a = 0.1 m, rim pinned (boundary vertices) and
 * clamped or simply supported. The fundamental frequency is
 *   omega = lambda^2 sqrt(D / (rho h)) / a^2,  D = E h^3 / (12 (1 - nu^2)),
 * lambda^2 = 35.985 (clamped square), 2 pi^2 (simply supported square),
 * 10.2158 (clamped disk), 4.9351 (simply supported disk, nu = 0.3) (Leissa,
 * "Vibration of plates", NASA SP-160, 1969).
 *
 * (a) Eigen-analysis of the model the engine integrates: the transverse
 *     stiffness of the assembled mid-edge energy at the flat rest state
 *     (element Hessians by central differences of the element gradient, exact
 *     here to ~1e-10 since the energy is smooth), the lumped vertex masses and
 *     the edge DOFs' inertia I_e, smallest eigenvalue by inverse iteration
 *     with a sparse Cholesky factor (CHOLMOD). Within 3 % of Kirchhoff at two
 *     resolutions, the error falling, on the one-diagonal grid, the `rect`
 *     generator's alternating grid, that grid jittered (unstructured) and the
 *     `disk` generator. With bending: hinge (today's model) the same analysis
 *     is 1.5x-2.3x too stiff (docs/research/bending/README.md, table 4.1).
 * (b) The engine: a run started with the velocity of the computed mode; its
 *     period (zero crossings of the modal coordinate) matches the
 *     eigen-analysis within 0.5 %, so the AVI integrates the model it claims
 *     to.
 *
 * Shells bent to known curvature: D/2 [(k1 + k2)^2 - 2 (1 - nu) k1 k2] per
 * rest area, the vertices placed on the shape and the edge DOFs at their
 * minimum for it (Newton on phi): a flat square rolled onto a half cylinder
 * (k1 = pi / a, wrap angle pi: large rotations) on the one-diagonal, `rect`
 * and jittered `rect` grids, over the faces with no boundary vertex (free
 * boundary directors relax a strip of O(h) width: docs/research/bending 4.4);
 * an icosphere, regular and jittered (bbar = 0: a flat sheet's metric made
 * spherical, as Grinspun et al. 2006 test shape operators), whole surface.
 *
 * A free spherical shell breathing (uniform radial velocity, small
 * amplitude), curved rest state, engine run: period within 2 % of membrane
 * theory, omega^2 = 2 E / (rho R^2 (1 - nu)) (bending adds (h/R)^2 terms). */
#include "../unit/check_main.h"
#include "avi/avi.h"
#include "core/model_internal.h"

#include <cholmod.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define E_Y 2e11
#define NU 0.3
#define RHO 7850.0
#define H 0.005
#define SIDE 0.1

enum { ONE, ALT, IRR, DISK };
static const char *const pattern_name[] = {"one-diagonal", "rect", "rect jittered", "disk"};

/* The flat mesh of pattern at resolution n (cells per side or rings). */
static void flat_mesh(int pattern, int n, avi_mesh *out)
{
    avi_mesh mesh = {0};
    avi_error err;
    if (pattern == DISK) {
        ck_assert_int_eq(avi_mesh_disk(SIDE, n, &mesh, &err), 0);
    } else if (pattern == ONE) {
        mesh.vertex_count = (size_t)(n + 1) * (n + 1);
        mesh.triangle_count = 2 * (size_t)n * n;
        mesh.x = calloc(mesh.vertex_count, sizeof *mesh.x);
        mesh.triangles = malloc(mesh.triangle_count * sizeof *mesh.triangles);
        for (int j = 0; j <= n; j++)
            for (int i = 0; i <= n; i++) {
                mesh.x[j * (n + 1) + i][0] = SIDE * i / n;
                mesh.x[j * (n + 1) + i][1] = SIDE * j / n;
            }
        size_t t = 0;
        for (int j = 0; j < n; j++)
            for (int i = 0; i < n; i++) {
                uint32_t a = (uint32_t)(j * (n + 1) + i), b = a + 1, c = a + (uint32_t)n + 2, d = a + (uint32_t)n + 1;
                mesh.triangles[t][0] = a, mesh.triangles[t][1] = b, mesh.triangles[t++][2] = c;
                mesh.triangles[t][0] = a, mesh.triangles[t][1] = c, mesh.triangles[t++][2] = d;
            }
    } else {
        ck_assert_int_eq(avi_mesh_rect_grid(SIDE, SIDE, n, n, &mesh, &err), 0);
        if (pattern == IRR) ck_assert_int_eq(avi_mesh_jitter_interior(&mesh, 0.25 * SIDE / n, 7, &err), 0);
    }
    *out = mesh;
}

static int on_rim(int pattern, const double x[3])
{
    return pattern == DISK ? fabs(hypot(x[0], x[1]) - SIDE) < 1e-9 * SIDE
                           : fmin(fmin(x[0], x[1]), fmin(SIDE - x[0], SIDE - x[1])) < 1e-9 * SIDE;
}

/* A midedge shell on the mesh; pattern >= 0: its rim pinned (clamped or
 * simply supported), < 0: free. Finalized. */
static avi_model *shell(const avi_mesh *mesh, int pattern, int clamp)
{
    avi_model *m = avi_model_create();
    int body = avi_model_add_body(m, "plate");
    for (size_t v = 0; v < mesh->vertex_count; v++) {
        ck_assert(avi_model_add_vertex(m, body, mesh->x[v]) >= 0);
        if (pattern >= 0 && on_rim(pattern, mesh->x[v])) ck_assert_int_eq(avi_model_pin(m, (uint32_t)v), 0);
    }
    avi_shell_material mat = {E_Y, NU, RHO, H};
    ck_assert_int_eq(avi_model_add_shell_mesh(m, (const uint32_t (*)[3])mesh->triangles, mesh->triangle_count, &mat,
                                              AVI_BENDING_MIDEDGE, clamp), 0);
    ck_assert_int_eq(avi_model_finalize(m, NULL), 0);
    return m;
}

/* The plate of pattern at resolution n, rim pinned, clamped or not. */
static avi_model *plate(int pattern, int n, int clamp)
{
    avi_mesh mesh;
    flat_mesh(pattern, n, &mesh);
    avi_model *m = shell(&mesh, pattern, clamp);
    avi_mesh_free(&mesh);
    return m;
}

static double kirchhoff(int pattern, int clamp)
{
    double D = E_Y * H * H * H / (12.0 * (1.0 - NU * NU));
    double l2 = pattern == DISK ? (clamp ? 10.2158 : 4.9351) : (clamp ? 35.985 : 2.0 * M_PI * M_PI);
    return l2 * sqrt(D / (RHO * H)) / (SIDE * SIDE);
}

/* DOFs: z of each free vertex (when vertices take part), phi of each edge
 * DOF record. */
typedef struct {
    size_t n;
    int64_t *of;  /* record -> dof, -1 */
    uint32_t *rec; /* dof -> record */
    double *mass;
    double *mode; /* fundamental, M-normalized */
    double omega;
} modes;

static int dof_comp(const avi_model *m, uint32_t r) { return r < m->nv ? 2 : 0; }

/* Element stiffness on its 9 transverse slot DOFs by central differences
 * of the gradient at rest; added to the triplets (upper triangle). */
static void add_element(const avi_model *m, const modes *q, const avi_midedge *p, cholmod_triplet *T)
{
    double x[AVI_MIDEDGE_SLOTS][3], gp[AVI_MIDEDGE_SLOTS][3], gm[AVI_MIDEDGE_SLOTS][3];
    for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++) v3_copy(x[a], m->vert[p->v[a]].x);
    for (int b = 0; b < AVI_MIDEDGE_SLOTS; b++) {
        int cb = dof_comp(m, p->v[b]);
        int64_t jb = q->of[p->v[b]];
        if (jb < 0 || (b >= 3 && b < 6 && p->mode[b - 3] == AVI_MIDEDGE_FREE) || (b >= 6 && !p->sign[b - 6])) continue;
        double eps = cb == 2 ? 1e-6 * SIDE : 1e-6, x0 = x[b][cb];
        x[b][cb] = x0 + eps;
        avi_midedge_gradient(p, (const double (*)[3])x, gp);
        x[b][cb] = x0 - eps;
        avi_midedge_gradient(p, (const double (*)[3])x, gm);
        x[b][cb] = x0;
        for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++) {
            int64_t ia = q->of[p->v[a]];
            int ca = dof_comp(m, p->v[a]);
            double k = (gp[a][ca] - gm[a][ca]) / (2.0 * eps);
            if (ia < 0 || ia > jb || k == 0.0) continue;
            ((int *)T->i)[T->nnz] = (int)ia;
            ((int *)T->j)[T->nnz] = (int)jb;
            ((double *)T->x)[T->nnz++] = k;
        }
    }
}

static modes select_dofs(const avi_model *m, int vertices)
{
    modes q = {0};
    size_t nrec = avi_model_record_count(m);
    q.of = malloc(nrec * sizeof *q.of);
    q.rec = malloc(nrec * sizeof *q.rec);
    q.mass = malloc(nrec * sizeof *q.mass);
    for (size_t r = 0; r < nrec; r++) {
        q.of[r] = m->vert[r].inv_mass > 0.0 && (vertices || r >= m->nv) ? (int64_t)q.n : -1;
        if (q.of[r] < 0) continue;
        q.rec[q.n] = (uint32_t)r;
        q.mass[q.n++] = 1.0 / m->vert[r].inv_mass;
    }
    return q;
}

/* The sparse Hessian of the bending energy over q's DOFs at the records'
 * positions, factored. */
static cholmod_factor *stiffness(const avi_model *m, const modes *q, cholmod_common *c)
{
    cholmod_triplet *T = cholmod_allocate_triplet(q->n, q->n, 81 * m->nmidedge, 1, CHOLMOD_REAL, c);
    for (size_t e = 0; e < m->nmidedge; e++) add_element(m, q, &m->midedges[e], T);
    cholmod_sparse *K = cholmod_triplet_to_sparse(T, 0, c);
    cholmod_factor *L = cholmod_analyze(K, c);
    cholmod_factorize(K, L, c);
    ck_assert_int_eq(c->status, CHOLMOD_OK);
    cholmod_free_sparse(&K, c);
    cholmod_free_triplet(&T, c);
    return L;
}

/* The fundamental mode by inverse iteration on K x = omega^2 M x. */
static modes fundamental(const avi_model *m)
{
    modes q = select_dofs(m, 1);
    cholmod_common c;
    cholmod_start(&c);
    cholmod_factor *L = stiffness(m, &q, &c);
    cholmod_dense *b = cholmod_zeros(q.n, 1, CHOLMOD_REAL, &c);
    double *bx = b->x;
    for (size_t i = 0; i < q.n; i++) bx[i] = q.rec[i] < m->nv ? q.mass[i] : 0.0;
    double lambda = 0.0;
    q.mode = malloc(q.n * sizeof *q.mode);
    for (int it = 0; it < 200; it++) {
        cholmod_dense *x = cholmod_solve(CHOLMOD_A, L, b, &c);
        double *xx = x->x, xmx = 0.0, xb = 0.0;
        for (size_t i = 0; i < q.n; i++) {
            xmx += xx[i] * q.mass[i] * xx[i];
            xb += xx[i] * bx[i]; /* x^T M x_prev = x^T K x for the Rayleigh quotient */
        }
        double next = xb / xmx, s = 1.0 / sqrt(xmx);
        for (size_t i = 0; i < q.n; i++) {
            q.mode[i] = xx[i] * s;
            bx[i] = q.mass[i] * q.mode[i];
        }
        cholmod_free_dense(&x, &c);
        int done = it > 5 && fabs(next - lambda) <= 1e-13 * next;
        lambda = next;
        if (done) break;
    }
    q.omega = sqrt(lambda);
    cholmod_free_dense(&b, &c);
    cholmod_free_factor(&L, &c);
    cholmod_finish(&c);
    return q;
}

static void modes_free(modes *q)
{
    free(q->of);
    free(q->rec);
    free(q->mass);
    free(q->mode);
}

/* omega / omega_Kirchhoff of the eigen-analysis at resolutions n[0], n[1]. */
static void check_pattern(int pattern, int clamp, const int n[2])
{
    double ratio[2];
    for (int k = 0; k < 2; k++) {
        avi_model *m = plate(pattern, n[k], clamp);
        modes q = fundamental(m);
        ratio[k] = q.omega / kirchhoff(pattern, clamp);
        modes_free(&q);
        avi_model_destroy(m);
    }
    printf("  %-13s %-16s n = %2d: %.4f  n = %2d: %.4f (omega / omega_Kirchhoff)\n", pattern_name[pattern],
           clamp ? "clamped" : "simply supported", n[0], ratio[0], n[1], ratio[1]);
    ck_assert_msg(fabs(ratio[0] - 1.0) <= 0.03 && fabs(ratio[1] - 1.0) <= 0.03, "%s: %.4f, %.4f", pattern_name[pattern],
                  ratio[0], ratio[1]);
    ck_assert_msg(fabs(ratio[1] - 1.0) < fabs(ratio[0] - 1.0), "%s: error does not fall: %.4f, %.4f",
                  pattern_name[pattern], ratio[0], ratio[1]);
}

/* The square on its three patterns; clamped plates need twice the cells
 * for 3 % (Morley's error is larger with the slope held). */
static void check_squares(int clamp)
{
    const int n[2] = {clamp ? 32 : 16, clamp ? 64 : 32}, pattern[3] = {ONE, ALT, IRR};
    for (int k = 0; k < 3; k++) check_pattern(pattern[k], clamp, n);
}

START_TEST(test_square_clamped) { check_squares(1); }
END_TEST

START_TEST(test_square_simply_supported) { check_squares(0); }
END_TEST

START_TEST(test_disk)
{
    const int n[2] = {16, 32};
    check_pattern(DISK, 1, n);
    check_pattern(DISK, 0, n);
}
END_TEST

/* The modal coordinate sum_i m_i u_i z_i(t) over the free vertices. */
static double modal(const avi_model *m, const modes *q, const double *x)
{
    double s = 0.0;
    for (size_t i = 0; i < q->n; i++)
        if (q->rec[i] < m->nv) s += q->mass[i] * q->mode[i] * x[3 * q->rec[i] + 2];
    return s;
}

/* An engine run started in the computed mode (velocity, small amplitude):
 * its period against the eigen-analysis. */
static void check_engine(int pattern, int n, int clamp)
{
    avi_model *m = plate(pattern, n, clamp);
    modes q = fundamental(m);
    double amp = 1e-6 * SIDE * q.omega; /* peak deflection ~1e-6 a: linear */
    double peak = 0.0;
    for (size_t i = 0; i < q.n; i++)
        if (q.rec[i] < m->nv) peak = fmax(peak, fabs(q.mode[i]));
    for (size_t i = 0; i < q.n; i++) m->vert[q.rec[i]].v[dof_comp(m, q.rec[i])] = amp * q.mode[i] / peak;
    avi_error err;
    avi_engine *e = avi_engine_create(m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    double period = 2.0 * M_PI / q.omega, dt = period / 400.0, prev = 0.0, first = -1.0, last = -1.0;
    int crossings = 0;
    double *x = malloc(3 * m->nv * sizeof *x);
    for (int s = 1; s <= 1000; s++) { /* 2.5 periods */
        double t = s * dt;
        ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
        avi_engine_state_at(e, t, x, NULL);
        double y = modal(m, &q, x);
        if (s > 1 && (prev > 0.0) != (y > 0.0)) {
            double tc = t - dt * y / (y - prev); /* linear interpolation */
            if (first < 0.0) first = tc;
            last = tc;
            crossings++;
        }
        prev = y;
    }
    double measured = 2.0 * (last - first) / (crossings - 1);
    printf("  engine: %s %s n = %d: period %.6e s, eigen-analysis %.6e s (ratio %.5f), omega / omega_Kirchhoff "
           "%.4f\n",
           pattern_name[pattern], clamp ? "clamped" : "simply supported", n, measured, period, measured / period,
           2.0 * M_PI / measured / kirchhoff(pattern, clamp));
    ck_assert_int_ge(crossings, 4);
    ck_assert_msg(fabs(measured / period - 1.0) < 0.005, "engine period %g vs %g", measured, period);
    free(x);
    avi_engine_destroy(e);
    modes_free(&q);
    avi_model_destroy(m);
}

START_TEST(test_engine_periods)
{
    check_engine(ONE, 16, 0);
    check_engine(ALT, 16, 1);
    check_engine(DISK, 8, 1);
}
END_TEST

/* Moves the edge DOFs to the minimum of the bending energy for the
 * vertices' current positions (Newton; the Hessian by differences). */
static void relax_phi(avi_model *m)
{
    modes q = select_dofs(m, 0);
    cholmod_common c;
    cholmod_start(&c);
    double step = INFINITY;
    for (int it = 0; it < 30 && step > 1e-12; it++) {
        cholmod_dense *g = cholmod_zeros(q.n, 1, CHOLMOD_REAL, &c);
        double *gx = g->x;
        for (size_t e = 0; e < m->nmidedge; e++) {
            const avi_midedge *p = &m->midedges[e];
            double x[AVI_MIDEDGE_SLOTS][3], ge[AVI_MIDEDGE_SLOTS][3];
            for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++) v3_copy(x[a], m->vert[p->v[a]].x);
            avi_midedge_gradient(p, (const double (*)[3])x, ge);
            for (int k = 0; k < 3; k++)
                if (p->sign[k]) gx[q.of[p->v[6 + k]]] += ge[6 + k][0];
        }
        cholmod_factor *L = stiffness(m, &q, &c);
        cholmod_dense *d = cholmod_solve(CHOLMOD_A, L, g, &c);
        const double *dx = d->x;
        step = 0.0;
        for (size_t i = 0; i < q.n; i++) {
            m->vert[q.rec[i]].x[0] -= dx[i];
            step = fmax(step, fabs(dx[i]));
        }
        cholmod_free_dense(&d, &c);
        cholmod_free_dense(&g, &c);
        cholmod_free_factor(&L, &c);
    }
    ck_assert_msg(step <= 1e-12, "Newton on phi: last step %g", step);
    cholmod_finish(&c);
    modes_free(&q);
}

/* Energy over D/2 [(k1 + k2)^2 - 2 (1 - nu) k1 k2] times the rest area, over
 * the faces `use` admits (all when NULL), edge DOFs relaxed. */
static double energy_ratio(avi_model *m, double k1, double k2, const unsigned char *use)
{
    relax_phi(m);
    double D = E_Y * H * H * H / (12.0 * (1.0 - NU * NU)), e = 0.0, area = 0.0;
    for (size_t f = 0; f < m->nmidedge; f++) {
        if (use && !use[f]) continue;
        const avi_midedge *p = &m->midedges[f];
        double x[AVI_MIDEDGE_SLOTS][3];
        for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++) v3_copy(x[a], m->vert[p->v[a]].x);
        e += avi_midedge_energy(p, (const double (*)[3])x);
        area += 2.0 * p->ka / D;
    }
    return e / (0.5 * D * ((k1 + k2) * (k1 + k2) - 2.0 * (1.0 - NU) * k1 * k2) * area);
}

/* A flat square (pattern) rolled onto a half cylinder of radius a / pi:
 * the ratio over the faces with no boundary vertex. */
static double cylinder_ratio(int pattern, int n)
{
    avi_mesh mesh;
    flat_mesh(pattern, n, &mesh);
    avi_model *m = shell(&mesh, -1, 0);
    const double R = SIDE / M_PI;
    for (size_t v = 0; v < mesh.vertex_count; v++) {
        double u = mesh.x[v][0], w = mesh.x[v][1];
        double y[3] = {R * sin(u / R), w, R * (1.0 - cos(u / R))};
        v3_copy(m->vert[v].x, y);
    }
    unsigned char *inner = calloc(mesh.triangle_count, 1);
    for (size_t f = 0; f < mesh.triangle_count; f++)
        inner[f] = !on_rim(pattern, mesh.x[mesh.triangles[f][0]]) && !on_rim(pattern, mesh.x[mesh.triangles[f][1]]) &&
                   !on_rim(pattern, mesh.x[mesh.triangles[f][2]]);
    double r = energy_ratio(m, 1.0 / R, 0.0, inner);
    free(inner);
    avi_model_destroy(m);
    avi_mesh_free(&mesh);
    return r;
}

/* An icosphere of radius 1 (jittered by `jitter` times the mean edge,
 * reprojected) with flat rest curvature: the ratio over the whole surface,
 * against the exact sphere's area (as docs/research/bending table 4.5). */
static double sphere_ratio(int level, double jitter)
{
    avi_mesh mesh;
    avi_error err;
    ck_assert_int_eq(avi_mesh_icosphere(1.0, level, &mesh, &err), 0);
    if (jitter > 0.0) {
        double edge = sqrt(4.0 * M_PI / (double)mesh.triangle_count * 4.0 / sqrt(3.0));
        ck_assert_int_eq(avi_mesh_jitter_interior(&mesh, jitter * edge, 11, &err), 0);
        for (size_t v = 0; v < mesh.vertex_count; v++) v3_scale(mesh.x[v], mesh.x[v], 1.0 / v3_norm(mesh.x[v]));
    }
    avi_model *m = shell(&mesh, -1, 0);
    for (size_t f = 0; f < m->nmidedge; f++) memset(m->midedges[f].bbar, 0, sizeof m->midedges[f].bbar);
    double D = E_Y * H * H * H / (12.0 * (1.0 - NU * NU)), area = 0.0;
    for (size_t f = 0; f < m->nmidedge; f++) area += 2.0 * m->midedges[f].ka / D;
    double r = energy_ratio(m, 1.0, 1.0, NULL) * area / (4.0 * M_PI);
    avi_model_destroy(m);
    avi_mesh_free(&mesh);
    return r;
}

static void check_ratios(const char *what, const double r[2])
{
    printf("  %-28s %.4f  %.4f (E / E_Kirchhoff)\n", what, r[0], r[1]);
    ck_assert_msg(fabs(r[0] - 1.0) <= 0.02 && fabs(r[1] - 1.0) <= 0.02, "%s: %.4f, %.4f", what, r[0], r[1]);
    ck_assert_msg(fabs(r[1] - 1.0) < fabs(r[0] - 1.0), "%s: error does not fall: %.4f, %.4f", what, r[0], r[1]);
}

START_TEST(test_cylinder_energy)
{
    const int pattern[3] = {ONE, ALT, IRR};
    for (int k = 0; k < 3; k++) {
        double r[2] = {cylinder_ratio(pattern[k], 32), cylinder_ratio(pattern[k], 64)};
        char what[64];
        snprintf(what, sizeof what, "cylinder %s n = 32, 64", pattern_name[pattern[k]]);
        check_ratios(what, r);
    }
}
END_TEST

START_TEST(test_sphere_energy)
{
    for (int j = 0; j < 2; j++) {
        double r[2] = {sphere_ratio(2, 0.3 * j), sphere_ratio(3, 0.3 * j)};
        check_ratios(j ? "sphere jittered levels 2, 3" : "icosphere levels 2, 3", r);
    }
}
END_TEST

START_TEST(test_sphere_breathing)
{
    const double R = 0.1, h = 1e-3;
    avi_mesh mesh;
    avi_error err;
    ck_assert_int_eq(avi_mesh_icosphere(R, 3, &mesh, &err), 0);
    avi_model *m = avi_model_create();
    int body = avi_model_add_body(m, "sphere");
    for (size_t v = 0; v < mesh.vertex_count; v++) ck_assert(avi_model_add_vertex(m, body, mesh.x[v]) >= 0);
    avi_shell_material mat = {E_Y, NU, RHO, h};
    ck_assert_int_eq(avi_model_add_shell_mesh(m, (const uint32_t (*)[3])mesh.triangles, mesh.triangle_count, &mat,
                                              AVI_BENDING_MIDEDGE, 0), 0);
    double omega = sqrt(2.0 * E_Y / (RHO * R * R * (1.0 - NU))), period = 2.0 * M_PI / omega;
    for (size_t v = 0; v < mesh.vertex_count; v++) { /* peak radial strain 1e-5 */
        double u[3];
        v3_scale(u, mesh.x[v], 1e-5 * omega);
        ck_assert_int_eq(avi_model_set_state(m, (uint32_t)v, NULL, u), 0);
    }
    ck_assert_int_eq(avi_model_finalize(m, NULL), 0);
    avi_engine *e = avi_engine_create(m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    double *x = malloc(3 * mesh.vertex_count * sizeof *x), dt = period / 200.0, prev = 0.0, first = -1.0, last = 0.0;
    int crossings = 0;
    for (int k = 1; k <= 500; k++) { /* 2.5 periods */
        ck_assert_int_eq(avi_engine_advance(e, k * dt), AVI_OK);
        avi_engine_state_at(e, k * dt, x, NULL);
        double r = 0.0;
        for (size_t v = 0; v < mesh.vertex_count; v++) r += v3_norm(&x[3 * v]) / (double)mesh.vertex_count - R / mesh.vertex_count;
        if (k > 1 && (prev > 0.0) != (r > 0.0)) {
            double tc = k * dt - dt * r / (r - prev);
            if (first < 0.0) first = tc;
            last = tc;
            crossings++;
        }
        prev = r;
    }
    double measured = 2.0 * (last - first) / (crossings - 1);
    printf("  breathing sphere (642 vertices, bending: midedge): period %.5e s, membrane theory %.5e s, ratio %.4f\n",
           measured, period, measured / period);
    ck_assert_int_ge(crossings, 4);
    ck_assert_msg(fabs(measured / period - 1.0) < 0.02, "breathing period %g vs %g", measured, period);
    free(x);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_mesh_free(&mesh);
}
END_TEST

static Suite *kirchhoff_suite(void)
{
    Suite *s = suite_create("kirchhoff");
    TCase *tc = tcase_create("kirchhoff");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_square_clamped);
    tcase_add_test(tc, test_square_simply_supported);
    tcase_add_test(tc, test_disk);
    tcase_add_test(tc, test_engine_periods);
    tcase_add_test(tc, test_cylinder_energy);
    tcase_add_test(tc, test_sphere_energy);
    tcase_add_test(tc, test_sphere_breathing);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(kirchhoff_suite)
