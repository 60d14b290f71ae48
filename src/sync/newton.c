/* Newton's method for the implicit synchronous steps: minimization of the
 * Lilyan with a line search on it (Kharevych et al. 2006, section 4.2), or
 * root finding on its gradient with a line search on the merit |r|^2 / 2
 * (the baseline of their section 5.4). Both start from the same guess, use
 * the same residual, the same convergence test and the same linear solver,
 * so that they differ only where the two methods differ; root finding may
 * also factor its Jacobian by LU (AVI_SOLVER_LU), as a general
 * nonlinear-equation solver would. */
#include "sync/sync_internal.h"
#include "core/incidence.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static inline void gather(const double (*x)[3], const uint32_t *v, int n, double out[][3])
{
    for (int a = 0; a < n; a++) v3_copy(out[a], x[v[a]]);
}

double avi_sync_potential_energy(struct avi_sync *sy, const avi_model *m, const double (*x)[3])
{
    double s = avi_model_elastic_energy_pass(m, sy->pass, x);
    for (size_t i = 0; i < m->ngravity; i++)
        s += avi_gravity_energy(&m->gravity[i], (const double (*)[3]) & x[m->gravity[i].v[0]]);
    return s;
}

/* The damped kinds (avi_elem_get's) and gravity, last in rank order: the
 * serial loop's order below, record by record. */
static unsigned gradient_kinds(void)
{
    unsigned bits = 1u << AVI_KIND_GRAVITY;
    for (unsigned k = 0; k < AVI_MODEL_KINDS; k++)
        if (avi_kind_flags(k) & AVI_KIND_DAMPED) bits |= 1u << k;
    return bits;
}
_Static_assert(AVI_KIND_GRAVITY == AVI_MODEL_KINDS - 1, "gravity's terms come last in avi_sync_add_gradient");

void avi_sync_add_gradient(struct avi_sync *sy, const avi_model *m, const double (*x)[3], double s, double (*g)[3],
                           double (*absg)[3])
{
    if (!avi_model_scaled_gradient_pass(sy->pass, x, gradient_kinds(), s, g, absg)) return;
    size_t ne = avi_elem_count(m);
    double xs[AVI_STENCIL_MAX][3], gs[AVI_STENCIL_MAX][3];
    for (size_t e = 0; e < ne; e++) {
        avi_elem el = avi_elem_get(m, e);
        gather(x, el.v, el.n, xs);
        avi_elem_gradient(&el, (const double (*)[3])xs, gs);
        for (int a = 0; a < el.n; a++)
            for (int c = 0; c < 3; c++) {
                g[el.v[a]][c] += s * gs[a][c];
                if (absg) absg[el.v[a]][c] += fabs(s * gs[a][c]);
            }
    }
    for (size_t i = 0; i < m->ngravity; i++) {
        avi_gravity_gradient(&m->gravity[i], NULL, gs);
        for (int c = 0; c < 3; c++) {
            g[m->gravity[i].v[0]][c] += s * gs[0][c];
            if (absg) absg[m->gravity[i].v[0]][c] += fabs(s * gs[0][c]);
        }
    }
}

/* x = q + c v over every record */
static void positions(const avi_model *m, const double (*q)[3], double c, const double (*v)[3], double (*x)[3])
{
    for (size_t i = 0; i < avi_model_record_count(m); i++)
        for (int k = 0; k < 3; k++) x[i][k] = q[i][k] + c * v[i][k];
}

/* Phi(v), see avi_newton_problem. */
static double objective(struct avi_sync *s, const avi_model *m, const avi_newton_problem *P, const double (*v)[3])
{
    s->stats.energy_evaluations++;
    double f = 0.0;
    for (size_t i = 0; i < avi_model_record_count(m); i++) {
        if (m->vert[i].inv_mass == 0.0) continue;
        f += 0.5 * avi_sync_mass(m, i) * v3_dot(v[i], v[i]) - v3_dot(P->b[i], v[i]);
    }
    if (P->cw != 0.0) {
        positions(m, P->q, P->a * P->h, v, s->xa);
        f += P->cw * avi_sync_potential_energy(s, m, (const double (*)[3])s->xa);
    }
    if (P->kd != 0.0) {
        positions(m, P->q, P->h, v, s->xb);
        size_t ne = avi_elem_count(m);
        double A[AVI_STENCIL_MAX][3], B[AVI_STENCIL_MAX][3], d = 0.0;
        for (size_t e = 0; e < ne; e++) {
            avi_elem el = avi_elem_get(m, e);
            gather(P->q, el.v, el.n, A);
            gather((const double (*)[3])s->xb, el.v, el.n, B);
            d += avi_damping_energy(&el, (const double (*)[3])A, (const double (*)[3])B);
        }
        f += P->kd / P->h * d;
    }
    return f;
}

/* r = grad Phi(v) - G^T mu; returns |r| and the scale |sum of |terms||. */
static double residual(struct avi_sync *s, const avi_model *m, const avi_newton_problem *P, const double (*v)[3],
                       double (*r)[3], double *scale)
{
    s->stats.gradient_evaluations++;
    double (*ab)[3] = s->ab;
    size_t nrec = avi_model_record_count(m);
    for (size_t i = 0; i < nrec; i++)
        for (int c = 0; c < 3; c++) {
            double mv = avi_sync_mass(m, i) * v[i][c];
            r[i][c] = mv - P->b[i][c];
            ab[i][c] = fabs(mv) + fabs(P->b[i][c]);
        }
    if (P->cw != 0.0) {
        positions(m, P->q, P->a * P->h, v, s->xa);
        avi_sync_add_gradient(s, m, (const double (*)[3])s->xa, P->cw * P->a * P->h, r, ab);
    }
    if (P->kd != 0.0) {
        positions(m, P->q, P->h, v, s->xb);
        size_t ne = avi_elem_count(m);
        double A[AVI_STENCIL_MAX][3], B[AVI_STENCIL_MAX][3], g[AVI_STENCIL_MAX][3];
        for (size_t e = 0; e < ne; e++) {
            avi_elem el = avi_elem_get(m, e);
            gather(P->q, el.v, el.n, A);
            gather((const double (*)[3])s->xb, el.v, el.n, B);
            avi_damping_gradient(&el, (const double (*)[3])A, (const double (*)[3])B, g);
            for (int a = 0; a < el.n; a++)
                for (int c = 0; c < 3; c++) {
                    r[el.v[a]][c] += P->kd * g[a][c];
                    ab[el.v[a]][c] += fabs(P->kd * g[a][c]);
                }
        }
    }
    if (P->constrained) {
        const avi_sync_constraints *C = &s->con;
        for (size_t j = 0; j < C->n; j++) {
            const avi_constraint *cj = &C->c[j];
            for (int b = 0; b < (cj->kind == AVI_CONSTRAINT_LINK ? 2 : 1); b++) {
                uint32_t vb = b ? cj->b : cj->a;
                for (int c = 0; c < 3; c++) {
                    double t = C->mu[j] * C->grad_z[j][b][c];
                    r[vb][c] -= t;
                    ab[vb][c] += fabs(t);
                }
            }
        }
    }
    double rr = 0.0, ss = 0.0;
    for (size_t i = 0; i < nrec; i++) {
        if (m->vert[i].inv_mass == 0.0) {
            r[i][0] = r[i][1] = r[i][2] = 0.0;
            continue;
        }
        rr += v3_dot(r[i], r[i]);
        ss += v3_dot(ab[i], ab[i]);
    }
    *scale = sqrt(ss);
    return sqrt(rr);
}

/* The Newton matrix M + cw a^2 h^2 Hess W + k_D h Hess_B D; psd: each
 * element's matrix projected onto the PSD cone first. Returns 0, or the
 * kind of an element without a Hessian (core/damping.c) + 1. */
static int assemble(struct avi_sync *s, const avi_model *m, const avi_newton_problem *P, const double (*v)[3],
                    int psd)
{
    s->stats.hessian_assemblies++;
    avi_sync_matrix *A = s->A;
    avi_sync_matrix_set_mass(A, m);
    size_t ne = avi_elem_count(m);
    double xs[AVI_STENCIL_MAX][3], B[AVI_STENCIL_MAX][3], H[AVI_HESS_MAX];
    double cwh = P->cw * P->a * P->a * P->h * P->h;
    if (cwh != 0.0) {
        positions(m, P->q, P->a * P->h, v, s->xa);
        for (size_t e = 0; e < ne; e++) {
            avi_elem el = avi_elem_get(m, e);
            gather((const double (*)[3])s->xa, el.v, el.n, xs);
            if (avi_elem_hessian(&el, (const double (*)[3])xs, H)) return (int)el.kind + 1;
            if (psd) avi_psd_project(H, 3 * el.n);
            avi_sync_matrix_add_elem(A, m, e, cwh, H);
        }
    }
    if (P->kd != 0.0) {
        positions(m, P->q, P->h, v, s->xb);
        for (size_t e = 0; e < ne; e++) {
            avi_elem el = avi_elem_get(m, e);
            gather(P->q, el.v, el.n, xs);
            gather((const double (*)[3])s->xb, el.v, el.n, B);
            if (avi_damping_hessian(&el, (const double (*)[3])xs, (const double (*)[3])B, H)) return (int)el.kind + 1;
            if (psd) avi_psd_project(H, 3 * el.n);
            avi_sync_matrix_add_elem(A, m, e, P->kd * P->h, H);
        }
    }
    return 0;
}

/* The Newton matrix plus, for impulses along G(q + h v), the derivative
 * of G(q + h v)^T mu: -h sum mu_j Hess g_j. */
static int build(struct avi_sync *s, const avi_model *m, const avi_newton_problem *P, const double (*v)[3], int psd)
{
    int k = assemble(s, m, P, v, psd);
    if (k || !P->constrained || !P->end_direction) return k;
    positions(m, P->q, P->h, v, s->xb);
    for (size_t j = 0; j < s->con.n; j++) {
        const avi_constraint *c = &s->con.c[j];
        double K[3][3];
        avi_constraint_curvature(c, (const double (*)[3])s->xb, K);
        avi_sync_matrix_add_pair(s->A, c->a, c->kind == AVI_CONSTRAINT_LINK ? c->b : c->a, -P->h * s->con.mu[j],
                                 (const double (*)[3])K);
    }
    return 0;
}

/* Prepares the matrix for solves at v: exact Newton matrix, with the
 * fallbacks of each method where it is not positive definite. Returns 0, or
 * -1 when no factorization could be made (e->err filled). */
static int no_hessian(avi_engine *e, int k)
{
    avi_sync_fail(e, "no Hessian for %s potentials (core/damping.c)", avi_kind_name((avi_kind)(k - 1)));
    return -1;
}

static int prepare(avi_engine *e, struct avi_sync *s, const avi_model *m, const avi_newton_problem *P,
                   const double (*v)[3])
{
    int k = build(s, m, P, v, 0);
    if (k) return no_hessian(e, k);
    if (s->opt.linear_solver == AVI_SOLVER_PCG) return 0;
    s->stats.factorizations++;
    if (s->opt.linear_solver == AVI_SOLVER_LU) {
        /* A general solver's view: the Jacobian as it is, no symmetry used. */
        if (avi_sync_matrix_factor_lu(s->A) == 0) return 0;
        avi_sync_fail(e, "Newton matrix is singular (LU)");
        return -1;
    }
    int rc = avi_sync_matrix_factor(s->A, 0);
    if (rc == 1) {
        if (P->rootfind) {
            s->stats.indefinite_solves++;
            s->stats.factorizations++;
            rc = avi_sync_matrix_factor(s->A, 1);
        } else {
            s->stats.psd_fallbacks++;
            if ((k = build(s, m, P, v, 1))) return no_hessian(e, k);
            s->stats.factorizations++;
            rc = avi_sync_matrix_factor(s->A, 0);
        }
    }
    if (rc == 0) return 0;
    avi_sync_fail(e, "Newton matrix could not be factorized");
    return -1;
}

/* x = A^-1 b with the prepared matrix; PCG to relative accuracy eta. */
static int solve(struct avi_sync *s, const avi_model *m, const double (*b)[3], double (*x)[3], double eta)
{
    if (s->opt.linear_solver == AVI_SOLVER_PCG) {
        int it = avi_sync_matrix_pcg(s->A, b, x, eta, 10 * (int)(3 * avi_model_record_count(m)) + 100, s->w);
        s->stats.linear_iterations += (uint64_t)it;
        return 0;
    }
    s->stats.linear_iterations++;
    return avi_sync_matrix_solve(s->A, b, x);
}

static double dotn(const double (*a)[3], const double (*b)[3], size_t n)
{
    double t = 0.0;
    for (size_t i = 0; i < n; i++) t += v3_dot(a[i], b[i]);
    return t;
}

/* Newton with constraints: unknowns v and mu (constraint impulses along
 * G(q)^T); full steps, the multipliers eliminated through the small dense
 * Schur complement h G(q + h v) A^-1 G(q)^T. */
static int solve_constrained(avi_engine *e, struct avi_sync *s, const avi_newton_problem *P)
{
    avi_model *m = e->model;
    avi_sync_constraints *C = &s->con;
    size_t n = avi_model_record_count(m), nc = C->n;
    double tol = s->opt.tolerance;
    avi_constraints_gradients(C, P->q);
    memset(C->mu, 0, nc * sizeof *C->mu);
    double *gn = C->dmu; /* h G(q + h v) w, reused */
    for (int it = 0;; it++) {
        positions(m, P->q, P->h, (const double (*)[3])s->v, s->xb);
        if (P->end_direction) avi_constraints_gradients(C, (const double (*)[3])s->xb);
        double sc, rn = residual(s, m, P, (const double (*)[3])s->v, s->r, &sc);
        positions(m, P->q, P->h, (const double (*)[3])s->v, s->xb);
        double viol = avi_constraints_violation(C, (const double (*)[3])s->xb);
        if (!isfinite(rn) || !isfinite(viol)) return avi_sync_fail(e, "non-finite state in the constrained Newton solve");
        if (rn <= tol * sc && viol <= tol) return AVI_OK;
        if (it == s->opt.max_iterations)
            return avi_sync_fail(e, "constrained Newton did not converge in %d iterations (residual %.3g of %.3g, |g| %.3g)",
                                 it, rn, sc, viol);
        s->stats.newton_iterations++;
        s->stats.constraint_iterations++;
        if (prepare(e, s, m, P, (const double (*)[3])s->v)) return AVI_ERR_RUN;
        double eta = fmin(0.1, sqrt(rn / (sc > 0.0 ? sc : 1.0)));
        /* d0 = -A^-1 r, columns A^-1 G_j^T */
        for (size_t i = 0; i < n; i++) v3_scale(s->rt[i], s->r[i], -1.0);
        if (solve(s, m, (const double (*)[3])s->rt, s->d, eta)) return avi_sync_fail(e, "linear solve failed");
        for (size_t j = 0; j < nc; j++) {
            double (*col)[3] = s->cols + j * n;
            memset(s->rt, 0, n * sizeof *s->rt);
            const avi_constraint *cj = &C->c[j];
            for (int b = 0; b < (cj->kind == AVI_CONSTRAINT_LINK ? 2 : 1); b++)
                v3_add(s->rt[b ? cj->b : cj->a], s->rt[b ? cj->b : cj->a], C->grad_z[j][b]);
            if (solve(s, m, (const double (*)[3])s->rt, col, eta)) return avi_sync_fail(e, "linear solve failed");
        }
        /* (h G' C) dmu = -g - h G' d0, G' at q + h v */
        for (size_t j = 0; j < nc; j++) {
            avi_constraints_jv(C, (const double (*)[3])s->xb, (const double (*)[3])(s->cols + j * n), gn);
            for (size_t i = 0; i < nc; i++) C->J[i * nc + j] = P->h * gn[i];
        }
        avi_constraints_jv(C, (const double (*)[3])s->xb, (const double (*)[3])s->d, gn);
        for (size_t i = 0; i < nc; i++) C->r[i] = -avi_constraint_value(&C->c[i], (const double (*)[3])s->xb) - P->h * gn[i];
        if (avi_dense_lu(C->J, C->piv, (int)nc)) return avi_sync_fail(e, "singular constraint Jacobian");
        avi_dense_lu_solve(C->J, C->piv, (int)nc, C->r);
        for (size_t j = 0; j < nc; j++) {
            C->mu[j] += C->r[j];
            const double (*col)[3] = (const double (*)[3])(s->cols + j * n);
            for (size_t i = 0; i < n; i++) v3_axpy(s->d[i], C->r[j], col[i]);
        }
        for (size_t i = 0; i < n; i++) v3_add(s->v[i], s->v[i], s->d[i]);
    }
}

int avi_newton_solve(avi_engine *e, struct avi_sync *s, const avi_newton_problem *P)
{
    if (P->constrained) return solve_constrained(e, s, P);
    avi_model *m = e->model;
    size_t n = avi_model_record_count(m);
    double tol = s->opt.tolerance;
    double sc, rn = residual(s, m, P, (const double (*)[3])s->v, s->r, &sc);
    if (!isfinite(rn)) {
        /* The guess p_k / m can carry q_k + a h v past an element's
         * inversion when h is large; v = 0 keeps q_k, which is valid. */
        memset(s->v, 0, n * sizeof *s->v);
        rn = residual(s, m, P, (const double (*)[3])s->v, s->r, &sc);
    }
    double f = P->rootfind ? 0.0 : objective(s, m, P, (const double (*)[3])s->v);
    for (int it = 0;; it++) {
        if (!isfinite(rn)) return avi_sync_fail(e, "non-finite residual in the Newton solve");
        if (rn <= tol * sc) return AVI_OK;
        if (it == s->opt.max_iterations)
            return avi_sync_fail(e, "Newton did not converge in %d iterations (residual %.3g, scale %.3g)", it, rn, sc);
        s->stats.newton_iterations++;
        if (prepare(e, s, m, P, (const double (*)[3])s->v)) return AVI_ERR_RUN;
        for (size_t i = 0; i < n; i++) v3_scale(s->rt[i], s->r[i], -1.0);
        double eta = fmin(0.1, sqrt(rn / (sc > 0.0 ? sc : 1.0)));
        if (solve(s, m, (const double (*)[3])s->rt, s->d, eta)) return avi_sync_fail(e, "linear solve failed");
        double slope = dotn((const double (*)[3])s->r, (const double (*)[3])s->d, n);
        if (!P->rootfind && !(slope < 0.0)) {
            /* Not a descent direction (an inexact solve at negative
             * curvature): fall back to the mass-scaled gradient. */
            for (size_t i = 0; i < n; i++)
                for (int c = 0; c < 3; c++)
                    s->d[i][c] = m->vert[i].inv_mass == 0.0 ? 0.0 : -s->r[i][c] / avi_sync_mass(m, i);
            slope = dotn((const double (*)[3])s->r, (const double (*)[3])s->d, n);
        }
        double t = 1.0;
        for (int ls = 0;; ls++) {
            for (size_t i = 0; i < n; i++)
                for (int c = 0; c < 3; c++) s->vt[i][c] = s->v[i][c] + t * s->d[i][c];
            if (P->rootfind) {
                double sct, rnt = residual(s, m, P, (const double (*)[3])s->vt, s->rt, &sct);
                if (isfinite(rnt) && (rnt * rnt <= (1.0 - 2e-4 * t) * rn * rn || ls == 40)) {
                    double (*tmp)[3] = s->r;
                    s->r = s->rt;
                    s->rt = tmp;
                    rn = rnt;
                    sc = sct;
                    break;
                }
            } else {
                double ft = objective(s, m, P, (const double (*)[3])s->vt);
                /* Round-off slack: near the solution Phi changes by less
                 * than its last digits. */
                double slack = 1e-13 * (fabs(f) + fabs(ft));
                if (isfinite(ft) && (ft <= f + 1e-4 * t * slope + slack || ls == 40)) {
                    f = ft;
                    rn = residual(s, m, P, (const double (*)[3])s->vt, s->r, &sc);
                    break;
                }
                /* A predicted decrease below the objective's round-off (the
                 * damping energy cancels digits near B = A): the quadratic
                 * model is exact there, so a full step that lowers the
                 * residual is taken. */
                if (t == 1.0 && -slope < 1e-9 * (fabs(f) + 1e-300)) {
                    double sct, rnt = residual(s, m, P, (const double (*)[3])s->vt, s->rt, &sct);
                    if (isfinite(rnt) && rnt < rn) {
                        f = ft;
                        double (*tmp)[3] = s->r;
                        s->r = s->rt;
                        s->rt = tmp;
                        rn = rnt;
                        sc = sct;
                        break;
                    }
                }
            }
            if (ls == 40) return avi_sync_fail(e, "line search found no step with a finite %s", P->rootfind ? "residual" : "Lilyan");
            s->stats.backtracks++;
            t *= 0.5;
        }
        double (*tmp)[3] = s->v;
        s->v = s->vt;
        s->vt = tmp;
    }
}
