/* Shared state of the synchronous integrators. */
#ifndef AVI_SYNC_INTERNAL_H
#define AVI_SYNC_INTERNAL_H

#include "avi/sync.h"
#include "core/engine_internal.h"
#include "core/damping.h"

/* The implicit integrators' unknowns are every record (model_internal.h):
 * the mesh vertices and mid-edge bending's auxiliary records (edge DOFs,
 * x[0] = phi, mass I_e on each component; ghost records, pinned), so work
 * arrays are [avi_model_record_count][3]. A record's mass: */
static inline double avi_sync_mass(const avi_model *m, size_t i)
{
    if (i < m->nv) return m->mass[i];
    return m->vert[i].inv_mass == 0.0 ? 0.0 : 1.0 / m->vert[i].inv_mass;
}

/* The largest element Hessian, (3 AVI_STENCIL_MAX)^2 doubles. */
#define AVI_HESS_MAX (9 * AVI_STENCIL_MAX * AVI_STENCIL_MAX)

/* A symmetric matrix over the model's records in 3x3 blocks: one block per
 * record pair sharing a potential (row <= column), sorted by (column, row).
 * Rows and columns of pinned records hold the identity. */
typedef struct avi_sync_matrix avi_sync_matrix;

avi_sync_matrix *avi_sync_matrix_create(const avi_model *m, const avi_constraint *c, size_t nc);
/* A += s [P, -P; -P, P] on vertices (i, j) (a link's curvature), or s P on
 * (i, i) when j == i; pinned rows are skipped. */
void avi_sync_matrix_add_pair(avi_sync_matrix *A, uint32_t i, uint32_t j, double s, const double P[3][3]);
void avi_sync_matrix_destroy(avi_sync_matrix *A);
/* A = diag(mass) (identity on pinned vertices). */
void avi_sync_matrix_set_mass(avi_sync_matrix *A, const avi_model *m);
/* A += s * He for the e-th elastic potential's (3n)^2 matrix He. */
void avi_sync_matrix_add_elem(avi_sync_matrix *A, const avi_model *m, size_t e, double s, const double *He);
/* y = A x over [records][3] arrays. */
void avi_sync_matrix_apply(const avi_sync_matrix *A, const double (*x)[3], double (*y)[3]);
/* Factorizes A. ldl: allow an indefinite A (LDL^T). Returns 0, 1 when A is
 * not positive definite (and ldl is off), -1 on failure. */
int avi_sync_matrix_factor(avi_sync_matrix *A, int ldl);
/* LU of A as a general matrix (UMFPACK, both triangles; the symbolic
 * analysis kept from the first call). Returns 0, 1 when A is singular, -1
 * on failure. */
int avi_sync_matrix_factor_lu(avi_sync_matrix *A);
/* Solves A x = b with the last factorization (Cholesky, LDL^T or LU). 0 or -1. */
int avi_sync_matrix_solve(avi_sync_matrix *A, const double (*b)[3], double (*x)[3]);
/* Jacobi-preconditioned CG to |r| <= rtol |b|; stops at negative curvature
 * (returning the iterate so far, or -b scaled when there is none). Returns
 * iterations. */
int avi_sync_matrix_pcg(const avi_sync_matrix *A, const double (*b)[3], double (*x)[3], double rtol, int maxit,
                        double (*work)[3]);

/* Projects a symmetric n x n matrix (row-major) onto the positive
 * semi-definite cone by clamping negative eigenvalues (base/jacobi.h). */
void avi_psd_project(double *H, int n);

/* Holonomic constraints (constraints.c). */
typedef struct {
    size_t n;
    avi_constraint *c;
    /* dense work: m x m matrix, pivots, vectors */
    double *J, *r, *mu, *dmu;
    int *piv;
    double (*grad_z)[2][3]; /* constraint gradients at the direction positions */
} avi_sync_constraints;

int avi_constraints_init(avi_sync_constraints *C, const avi_constraint *c, size_t n, const avi_model *m,
                         avi_error *err);
void avi_constraints_free(avi_sync_constraints *C);
/* g_i(x) / length_i, worst absolute value. */
double avi_constraints_violation(const avi_sync_constraints *C, const double (*x)[3]);
/* Finds mu with g(y + h (v + M^-1 G(z)^T mu)) = 0 and adds M^-1 G(z)^T mu to
 * v. Returns Newton iterations (>= 0) or -1 when it does not converge. */
int avi_constraints_solve(avi_sync_constraints *C, const avi_model *m, const double (*y)[3], const double (*z)[3],
                          double h, double (*v)[3], double tol, int maxit);
/* Removes from v its component normal to the constraints at x (M-orthogonal
 * projection onto G(x) v = 0). 0 or -1. */
int avi_constraints_project_velocity(avi_sync_constraints *C, const avi_model *m, const double (*x)[3],
                                     double (*v)[3]);
/* Adds the constraint forces G(x)^T lambda that keep the acceleration on
 * the constraints (G M^-1 (f + G^T lambda) + v.Hess g.v = 0) to f. 0 or -1. */
int avi_constraints_add_force(avi_sync_constraints *C, const avi_model *m, const double (*x)[3], const double (*v)[3],
                              double (*f)[3]);
/* Hess g = [P, -P; -P, P] for a link, P for a sphere, 0 for a plane. */
void avi_constraint_curvature(const avi_constraint *c, const double (*x)[3], double P[3][3]);
/* Gradients of every constraint at x into C->grad_z. */
void avi_constraints_gradients(avi_sync_constraints *C, const double (*x)[3]);
/* out[i] = G_i(x) . w (w a [nv][3] array), using gradients at x. */
void avi_constraints_jv(const avi_sync_constraints *C, const double (*x)[3], const double (*w)[3], double *out);
/* g_i(x) (not divided by length). */
double avi_constraint_value(const avi_constraint *c, const double (*x)[3]);
void avi_constraint_gradient(const avi_constraint *c, const double (*x)[3], double g[2][3]);
/* Dense LU with partial pivoting of the n x n row-major J; solves in place. */
int avi_dense_lu(double *J, int *piv, int n);
void avi_dense_lu_solve(const double *J, const int *piv, int n, double *b);

/* A synchronous engine (sync_engine.c): avi_engine_create_with for every
 * type but AVI_INTEGRATOR_AVI. */
avi_engine *avi_sync_engine_create(avi_model *m, const avi_sync_options *opt, avi_error *err);
/* The synchronous integrators' row of the stepper table (core/engine_ops.h). */
extern const avi_stepper_ops avi_sync_stepper;

struct avi_sync {
    avi_sync_options opt;
    uint64_t step;      /* steps taken: the next step starts at t = step * h */
    double (*force)[3]; /* scratch: -grad V per vertex */
    avi_sync_constraints con;
    avi_sync_stats stats;
    /* Newton workspace (implicit integrators), [records][3] arrays */
    avi_sync_matrix *A;
    double *block; /* one allocation for the arrays below */
    double (*q0)[3], (*v)[3], (*b)[3], (*r)[3], (*d)[3], (*xa)[3], (*xb)[3], (*vt)[3], (*rt)[3], (*ab)[3];
    double (*w)[3];    /* 5 records: PCG */
    double (*cols)[3]; /* constraints: H^-1 G^T columns, n_c * records */
    struct avi_dcr *dcr; /* the contact stage (dcr.c), or NULL: see avi_sync_step_dcr */
    /* sync-explicit4: force holds grad V at step force_step's positions */
    int force_valid;
    uint64_t force_step;
    struct avi_model_pass *pass; /* whole-model passes on the engine's pool (avi_sync_gradient) */
};

/* Adds grad V at the records' positions into g (avi_model_accumulate_gradient)
 * on the engine's pool, the same bits for any thread count. */
void avi_sync_gradient(avi_engine *e, struct avi_sync *s, double (*g)[3]);
/* Points s->pass at the engine's pool (which changes only between
 * advances); each step starts with it (avi_sync_step). */
void avi_sync_use_pool(avi_engine *e, struct avi_sync *s);

/* One step of each integrator from t_k = step * h to t_{k+1}. Every vertex
 * is at tau = t_k on entry and at t_{k+1} on exit, except for the
 * explicit update, whose positions are drifted lazily like the AVI's. */
int avi_sync_step_explicit(avi_engine *e, struct avi_sync *s);
int avi_sync_step_explicit4(avi_engine *e, struct avi_sync *s); /* explicit4.c */
int avi_sync_step_lilyan(avi_engine *e, struct avi_sync *s); /* sync-implicit and sync-rootfind */
int avi_sync_step_explicit_euler(avi_engine *e, struct avi_sync *s);
int avi_sync_step_implicit_euler(avi_engine *e, struct avi_sync *s);
/* One step of the integrator s->opt.type (the dcr type: the explicit one;
 * sync_step.c). */
int avi_sync_step(avi_engine *e, struct avi_sync *s);
/* Whether an integrator resolves contact (with the DCR stage). */
int avi_sync_handles_contact(avi_integrator_type type);

/* Decomposition contact response (dcr.c, Cirak and West 2005): the state
 * of the contact stage, for a model with or without contact. */
struct avi_dcr *avi_dcr_create(const avi_model *m);
void avi_dcr_destroy(struct avi_dcr *d);
/* The smallest distance at time t (positions x + (t - tau) v) over the
 * contact stencils closer than 2 contact.thickness; +inf when none. */
double avi_dcr_min_distance(struct avi_dcr *d, const avi_model *m, double t);
/* The kinetic energy its friction jumps have removed (a checkpoint's
 * "dcr_friction_work"). */
double *avi_dcr_friction_work(struct avi_dcr *d);
/* avi_sync_step followed by the contact stage: every vertex ends at
 * t_{k+1}, admissible, with the impact's velocity jumps applied. The
 * integrators dcr, and sync-explicit and sync-implicit on a model with
 * contact, step with it. */
int avi_sync_step_dcr(avi_engine *e, struct avi_sync *s);

/* The Newton problem of one implicit step (newton.c): find v minimizing
 *   Phi(v) = 1/2 v.M v - b.v + cw W(q + a h v) + (k_D / h) D(q, q + h v),
 *   grad Phi = M v - b + cw a h grad W(q + a h v) + k_D grad_B D(q, q + h v),
 * with optional constraints (G(q)^T mu added to M v, g(q + h v) = 0).
 * rootfind: Newton on grad Phi = 0 with a line search on |grad Phi|^2 / 2
 * and the exact Jacobian; otherwise Newton with a line search on Phi and,
 * where the Hessian is not positive definite, per-element PSD projection. */
typedef struct {
    const double (*q)[3];
    const double (*b)[3];
    double a, cw, h, kd;
    int rootfind;
    int constrained;
    int end_direction; /* constraint impulses along G(q + h v) (implicit Euler), not G(q) */
} avi_newton_problem;

/* Solves for s->v (initial guess in s->v). Returns AVI_OK or AVI_ERR_RUN with
 * e->err filled. */
int avi_newton_solve(avi_engine *e, struct avi_sync *s, const avi_newton_problem *P);

/* Model helpers over [records][3] position arrays (assemble in newton.c). */
double avi_sync_potential_energy(struct avi_sync *sy, const avi_model *m, const double (*x)[3]);
void avi_sync_add_gradient(struct avi_sync *sy, const avi_model *m, const double (*x)[3], double s, double (*g)[3],
                           double (*absg)[3]);

/* A run error of the engine (AVI_ERR_RUN in e->err). */
#define avi_sync_fail(e, ...) avi_engine_fail((e), AVI_ERR_RUN, __VA_ARGS__)

#endif
