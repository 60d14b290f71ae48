/* Holonomic constraints g(q) = 0 with Lagrange multipliers (Kharevych et al.
 * 2006, section 3.5): the constraint impulse h G(q_k)^T lambda is applied in
 * the momentum update and lambda is chosen so that g(q_{k+1}) = 0, found by
 * Newton's method on the few multipliers (dense LU: each constraint touches
 * one or two vertices and scenes have few of them). */
#include "sync/sync_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double avi_constraint_value(const avi_constraint *c, const double (*x)[3])
{
    double d[3];
    switch (c->kind) {
    case AVI_CONSTRAINT_LINK:
        v3_sub(d, x[c->b], x[c->a]);
        return v3_norm(d) - c->length;
    case AVI_CONSTRAINT_SPHERE:
        v3_sub(d, x[c->a], c->center);
        return v3_norm(d) - c->length;
    default:
        v3_sub(d, x[c->a], c->center);
        return v3_dot(d, c->normal) / v3_norm(c->normal);
    }
}

/* g[0]: d g / d x_a, g[1]: d g / d x_b (links). */
void avi_constraint_gradient(const avi_constraint *c, const double (*x)[3], double g[2][3])
{
    double d[3];
    memset(g, 0, 2 * sizeof *g);
    switch (c->kind) {
    case AVI_CONSTRAINT_LINK: {
        v3_sub(d, x[c->b], x[c->a]);
        double l = v3_norm(d);
        if (l > 0.0) {
            v3_scale(g[1], d, 1.0 / l);
            v3_scale(g[0], d, -1.0 / l);
        }
        break;
    }
    case AVI_CONSTRAINT_SPHERE: {
        v3_sub(d, x[c->a], c->center);
        double l = v3_norm(d);
        if (l > 0.0) v3_scale(g[0], d, 1.0 / l);
        break;
    }
    default:
        v3_scale(g[0], c->normal, 1.0 / v3_norm(c->normal));
        break;
    }
}

void avi_constraint_curvature(const avi_constraint *c, const double (*x)[3], double P[3][3])
{
    double d[3];
    memset(P, 0, 3 * sizeof *P);
    if (c->kind == AVI_CONSTRAINT_PLANE) return;
    if (c->kind == AVI_CONSTRAINT_LINK) v3_sub(d, x[c->b], x[c->a]);
    else v3_sub(d, x[c->a], c->center);
    double l = v3_norm(d);
    if (!(l > 0.0)) return;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) P[i][j] = ((i == j ? 1.0 : 0.0) - d[i] * d[j] / (l * l)) / l;
}

static int nverts(const avi_constraint *c) { return c->kind == AVI_CONSTRAINT_LINK ? 2 : 1; }
static uint32_t vert(const avi_constraint *c, int k) { return k ? c->b : c->a; }

int avi_constraints_init(avi_sync_constraints *C, const avi_constraint *c, size_t n, const avi_model *m,
                         avi_error *err)
{
    memset(C, 0, sizeof *C);
    if (n == 0) return AVI_OK;
    for (size_t i = 0; i < n; i++) {
        const avi_constraint *k = &c[i];
        const char *why = NULL;
        if ((unsigned)k->kind > AVI_CONSTRAINT_PLANE) why = "unknown kind";
        else if (k->a >= m->nv || (k->kind == AVI_CONSTRAINT_LINK && (k->b >= m->nv || k->b == k->a))) why = "bad vertex";
        else if (!(k->length > 0.0) || !isfinite(k->length)) why = "length must be positive";
        else if (k->kind == AVI_CONSTRAINT_PLANE && !(v3_norm(k->normal) > 0.0)) why = "zero plane normal";
        else {
            int free_end = 0;
            for (int a = 0; a < nverts(k); a++) free_end |= m->vert[vert(k, a)].inv_mass != 0.0;
            if (!free_end) why = "every vertex is pinned";
        }
        if (why) {
            if (err) {
                err->status = AVI_ERR_INPUT;
                snprintf(err->message, sizeof err->message, "constraint %zu: %s", i, why);
            }
            return AVI_ERR_INPUT;
        }
    }
    C->n = n;
    C->c = malloc(n * sizeof *C->c);
    C->J = malloc(n * n * sizeof *C->J);
    C->r = malloc(n * sizeof *C->r);
    C->mu = malloc(n * sizeof *C->mu);
    C->dmu = malloc(n * sizeof *C->dmu);
    C->piv = malloc(n * sizeof *C->piv);
    C->grad_z = malloc(n * sizeof *C->grad_z);
    if (!C->c || !C->J || !C->r || !C->mu || !C->dmu || !C->piv || !C->grad_z) {
        avi_constraints_free(C);
        if (err) {
            err->status = AVI_ERR_RUN;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        return AVI_ERR_RUN;
    }
    memcpy(C->c, c, n * sizeof *c);
    return AVI_OK;
}

void avi_constraints_free(avi_sync_constraints *C)
{
    free(C->c);
    free(C->J);
    free(C->r);
    free(C->mu);
    free(C->dmu);
    free(C->piv);
    free(C->grad_z);
    memset(C, 0, sizeof *C);
}

double avi_constraints_violation(const avi_sync_constraints *C, const double (*x)[3])
{
    double worst = 0.0;
    for (size_t i = 0; i < C->n; i++) {
        double g = fabs(avi_constraint_value(&C->c[i], x)) / C->c[i].length;
        if (!(g <= worst)) worst = g;
    }
    return worst;
}

void avi_constraints_gradients(avi_sync_constraints *C, const double (*x)[3])
{
    for (size_t i = 0; i < C->n; i++) avi_constraint_gradient(&C->c[i], x, C->grad_z[i]);
}

void avi_constraints_jv(const avi_sync_constraints *C, const double (*x)[3], const double (*w)[3], double *out)
{
    for (size_t i = 0; i < C->n; i++) {
        double g[2][3];
        avi_constraint_gradient(&C->c[i], x, g);
        double s = 0.0;
        for (int a = 0; a < nverts(&C->c[i]); a++) s += v3_dot(g[a], w[vert(&C->c[i], a)]);
        out[i] = s;
    }
}

int avi_dense_lu(double *J, int *piv, int n)
{
    for (int k = 0; k < n; k++) {
        int p = k;
        for (int i = k + 1; i < n; i++)
            if (fabs(J[i * n + k]) > fabs(J[p * n + k])) p = i;
        piv[k] = p;
        if (J[p * n + k] == 0.0) return -1;
        if (p != k)
            for (int j = 0; j < n; j++) {
                double t = J[k * n + j];
                J[k * n + j] = J[p * n + j];
                J[p * n + j] = t;
            }
        for (int i = k + 1; i < n; i++) {
            double f = J[i * n + k] /= J[k * n + k];
            for (int j = k + 1; j < n; j++) J[i * n + j] -= f * J[k * n + j];
        }
    }
    return 0;
}

void avi_dense_lu_solve(const double *J, const int *piv, int n, double *b)
{
    for (int k = 0; k < n; k++) {
        double t = b[k];
        b[k] = b[piv[k]];
        b[piv[k]] = t;
    }
    for (int i = 0; i < n; i++)
        for (int j = 0; j < i; j++) b[i] -= J[i * n + j] * b[j];
    for (int i = n - 1; i >= 0; i--) {
        for (int j = i + 1; j < n; j++) b[i] -= J[i * n + j] * b[j];
        b[i] /= J[i * n + i];
    }
}

/* Position of a constraint vertex after the step: y + h v. */
static void moved(const avi_model *m, const double (*y)[3], double h, const double (*v)[3], uint32_t a, double out[3])
{
    (void)m;
    for (int c = 0; c < 3; c++) out[c] = y[a][c] + h * v[a][c];
}

/* Row i of G M^-1 G(z)^T: row[j] = sum over the vertices constraint i
 * shares with constraint j of 1/m gi . grad_z[j], gi the gradient of
 * constraint i (at z, or at the moved positions in solve). */
static void gmg_row(const avi_sync_constraints *C, const avi_model *m, const avi_constraint *ci,
                    const double gi[2][3], double *row)
{
    for (size_t j = 0; j < C->n; j++) {
        const avi_constraint *cj = &C->c[j];
        double t = 0.0;
        for (int a = 0; a < nverts(ci); a++)
            for (int b = 0; b < nverts(cj); b++)
                if (vert(ci, a) == vert(cj, b))
                    t += m->vert[vert(ci, a)].inv_mass * v3_dot(gi[a], C->grad_z[j][b]);
        row[j] = t;
    }
}

int avi_constraints_solve(avi_sync_constraints *C, const avi_model *m, const double (*y)[3], const double (*z)[3],
                          double h, double (*v)[3], double tol, int maxit)
{
    size_t n = C->n;
    if (!n) return 0;
    int nn = (int)n;
    avi_constraints_gradients(C, z);
    for (int it = 0; it <= maxit; it++) {
        /* Residual g(y + h v) / length and Jacobian h G(y + h v) M^-1 G(z)^T. */
        double worst = 0.0;
        memset(C->J, 0, n * n * sizeof *C->J);
        for (size_t i = 0; i < n; i++) {
            const avi_constraint *ci = &C->c[i];
            double xi[2][3], gi[2][3], loc[2][3];
            for (int a = 0; a < nverts(ci); a++) moved(m, y, h, (const double (*)[3])v, vert(ci, a), xi[a]);
            /* Evaluate on a two-vertex local array. */
            avi_constraint local = *ci;
            local.a = 0;
            local.b = 1;
            memcpy(loc, xi, sizeof loc);
            if (nverts(ci) == 1) memset(loc[1], 0, sizeof loc[1]);
            double g = avi_constraint_value(&local, (const double (*)[3])loc);
            avi_constraint_gradient(&local, (const double (*)[3])loc, gi);
            C->r[i] = -g;
            if (fabs(g) / ci->length > worst) worst = fabs(g) / ci->length;
            double *row = C->J + i * n;
            gmg_row(C, m, ci, (const double (*)[3])gi, row);
            for (size_t j = 0; j < n; j++) row[j] *= h;
        }
        if (!isfinite(worst)) return -1;
        if (worst <= tol) return it;
        if (it == maxit) break;
        if (avi_dense_lu(C->J, C->piv, nn)) return -1;
        avi_dense_lu_solve(C->J, C->piv, nn, C->r);
        for (size_t j = 0; j < n; j++) {
            const avi_constraint *cj = &C->c[j];
            for (int b = 0; b < nverts(cj); b++) {
                uint32_t vb = vert(cj, b);
                v3_axpy(v[vb], C->r[j] * m->vert[vb].inv_mass, C->grad_z[j][b]);
            }
        }
    }
    return -1;
}

int avi_constraints_project_velocity(avi_sync_constraints *C, const avi_model *m, const double (*x)[3],
                                     double (*v)[3])
{
    size_t n = C->n;
    if (!n) return 0;
    avi_constraints_gradients(C, x);
    for (size_t i = 0; i < n; i++) {
        const avi_constraint *ci = &C->c[i];
        double s = 0.0;
        for (int a = 0; a < nverts(ci); a++) s += v3_dot(C->grad_z[i][a], v[vert(ci, a)]);
        C->r[i] = s;
        gmg_row(C, m, ci, (const double (*)[3])C->grad_z[i], C->J + i * n);
    }
    if (avi_dense_lu(C->J, C->piv, (int)n)) return -1;
    avi_dense_lu_solve(C->J, C->piv, (int)n, C->r);
    for (size_t j = 0; j < n; j++) {
        const avi_constraint *cj = &C->c[j];
        for (int b = 0; b < nverts(cj); b++) {
            uint32_t vb = vert(cj, b);
            v3_axpy(v[vb], -C->r[j] * m->vert[vb].inv_mass, C->grad_z[j][b]);
        }
    }
    return 0;
}

int avi_constraints_add_force(avi_sync_constraints *C, const avi_model *m, const double (*x)[3], const double (*v)[3],
                              double (*f)[3])
{
    size_t n = C->n;
    if (!n) return 0;
    avi_constraints_gradients(C, x);
    for (size_t i = 0; i < n; i++) {
        const avi_constraint *ci = &C->c[i];
        /* -G M^-1 f - v.Hess g_i.v: the acceleration-level condition. */
        double s = 0.0, P[3][3], dv[3];
        for (int a = 0; a < nverts(ci); a++)
            s -= m->vert[vert(ci, a)].inv_mass * v3_dot(C->grad_z[i][a], f[vert(ci, a)]);
        avi_constraint_curvature(ci, x, P);
        if (ci->kind == AVI_CONSTRAINT_LINK) v3_sub(dv, v[ci->b], v[ci->a]);
        else v3_copy(dv, v[ci->a]);
        for (int a = 0; a < 3; a++)
            for (int b = 0; b < 3; b++) s -= dv[a] * P[a][b] * dv[b];
        C->r[i] = s;
        gmg_row(C, m, ci, (const double (*)[3])C->grad_z[i], C->J + i * n);
    }
    if (avi_dense_lu(C->J, C->piv, (int)n)) return -1;
    avi_dense_lu_solve(C->J, C->piv, (int)n, C->r);
    for (size_t j = 0; j < n; j++) {
        const avi_constraint *cj = &C->c[j];
        for (int b = 0; b < nverts(cj); b++) v3_axpy(f[vert(cj, b)], C->r[j], C->grad_z[j][b]);
    }
    return 0;
}
