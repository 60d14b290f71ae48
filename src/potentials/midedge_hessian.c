/* Hessian of the mid-edge bending energy (midedge.h for the energy).
 *
 * V is quadratic in II = (II_0, II_1, II_2): with b - bbar = sum_j dII_j E_j,
 * E_0 = [[1, 1], [1, 1]], E_1 = [[1, 0], [0, 0]], E_2 = [[0, 0], [0, 1]],
 *   V = 1/2 dII^T K dII,  K_jk = 2 ka [nu tr(P E_j) tr(P E_k) + (1 - nu) tr(P E_j P E_k)],
 * so that
 *   H = sum_jk K_jk grad II_j grad II_k^T + sum_i w_i Hess II_i,  w = K dII.
 * Per edge, II = 2 h T with T = tan(alpha), S = 1 + T^2:
 *   grad II = 2 T grad h + 2 h S grad alpha,
 *   Hess II = 2 T Hess h + 2 S (grad h grad alpha^T + grad alpha grad h^T)
 *             + 4 h S T grad alpha grad alpha^T + 2 h S Hess alpha,
 * alpha = dth theta + s_i phi (dth = -1/2 interior, -1 clamped, 0 free), so
 * Hess alpha = dth Hess theta (hinge_geometry.h). h = |n| / |e| with
 * n = e x f, e = x_b - x_a, f = x_i - x_a:
 *   Hess h = Hess|n| / |e| - (grad|n| grad|e|^T + grad|e| grad|n|^T) / |e|^2
 *            + 2 |n| grad|e| grad|e|^T / |e|^3 - |n| Hess|e| / |e|^2,
 *   Hess|n| = Jn^T (I - nh nh^T) Jn / |n| + [nh . d2n],
 * where nh . (de1 x df2 + de2 x df1) is -(C + C^T) with C = E_e^T [nh]x E_f
 * (E_e, E_f pick de, df out of (dx_a, dx_b, dx_i)). */
#include "potentials/midedge_hessian.h"
#include "potentials/hinge_geometry.h"

#include <string.h>

#define N3 (3 * AVI_MIDEDGE_SLOTS)

/* K = d2V/dII2 (see the top). */
static void curvature_stiffness(const avi_midedge *p, double K[3][3])
{
    static const double E[3][2][2] = {{{1, 1}, {1, 1}}, {{1, 0}, {0, 0}}, {{0, 0}, {0, 1}}};
    const double P[2][2] = {{p->P[0], p->P[1]}, {p->P[1], p->P[2]}};
    double PE[3][2][2], tr[3];
    for (int j = 0; j < 3; j++) {
        for (int r = 0; r < 2; r++)
            for (int c = 0; c < 2; c++) PE[j][r][c] = P[r][0] * E[j][0][c] + P[r][1] * E[j][1][c];
        tr[j] = PE[j][0][0] + PE[j][1][1];
    }
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 3; k++) {
            double t2 = 0.0; /* tr(PE_j PE_k) */
            for (int r = 0; r < 2; r++)
                for (int c = 0; c < 2; c++) t2 += PE[j][r][c] * PE[k][c][r];
            K[j][k] = 2.0 * p->ka * (p->nu * tr[j] * tr[k] + (1.0 - p->nu) * t2);
        }
}

/* [a]x: skew(a) b = a x b. */
static void skew(double S[3][3], const double a[3])
{
    S[0][0] = 0.0;   S[0][1] = -a[2]; S[0][2] = a[1];
    S[1][0] = a[2];  S[1][1] = 0.0;   S[1][2] = -a[0];
    S[2][0] = -a[1]; S[2][1] = a[0];  S[2][2] = 0.0;
}

/* Gradient (9) and Hessian (9x9) of h = |n| / |e| over (x_a, x_b, x_i) of
 * hinge q (slots 0, 1, 2 of q's stencil x). */
static void altitude_derivatives(const hinge_geom *q, const double x[4][3], double gh[9], double Hh[9][9])
{
    static const double ce[3] = {-1, 1, 0}, cf[3] = {-1, 0, 1}; /* e, f as combinations of the slots */
    double A = sqrt(q->nn1), L = q->le, nh[3], eh[3];
    v3_scale(nh, q->n1, 1.0 / A);
    v3_scale(eh, q->e, 1.0 / L);
    /* Jn: dn = [x_i - x_b]x dx_a - [f]x dx_b + [e]x dx_i */
    double d[3], Jn[3][3][3]; /* Jn[slot] 3x3 */
    v3_sub(d, x[2], x[1]);
    skew(Jn[0], d);
    skew(Jn[1], q->f1);
    for (int r = 0; r < 3; r++)
        for (int c = 0; c < 3; c++) Jn[1][r][c] = -Jn[1][r][c];
    skew(Jn[2], q->e);
    double gA[9], gL[9], Nx[3][3];
    for (int s = 0; s < 3; s++)
        for (int c = 0; c < 3; c++) {
            gA[3 * s + c] = nh[0] * Jn[s][0][c] + nh[1] * Jn[s][1][c] + nh[2] * Jn[s][2][c];
            gL[3 * s + c] = ce[s] * eh[c];
        }
    for (int k = 0; k < 9; k++) gh[k] = gA[k] / L - A * gL[k] / (L * L);
    skew(Nx, nh);
    for (int s = 0; s < 3; s++)
        for (int t = 0; t < 3; t++) {
            double cc = ce[s] * cf[t] - ce[t] * cf[s]; /* C + C^T block: [nh]x antisymmetric */
            for (int r = 0; r < 3; r++)
                for (int c = 0; c < 3; c++) {
                    double pn = 0.0; /* (Jn_s^T (I - nh nh^T) Jn_t)_rc */
                    for (int k = 0; k < 3; k++) pn += Jn[s][k][r] * Jn[t][k][c];
                    pn -= gA[3 * s + r] * gA[3 * t + c];
                    double hA = pn / A - cc * Nx[r][c];
                    double hL = ce[s] * ce[t] * ((r == c ? 1.0 : 0.0) - eh[r] * eh[c]) / L;
                    int i = 3 * s + r, j = 3 * t + c;
                    Hh[i][j] = hA / L - (gA[i] * gL[j] + gL[i] * gA[j]) / (L * L) + 2.0 * A * gL[i] * gL[j] / (L * L * L) -
                               A * hL / (L * L);
                }
        }
}

/* Edge i's hinge (x_a, x_b, x_i, x_3+i), T = tan(alpha) and dalpha / dtheta
 * (as midedge.c's second form); returns II_i = 2 h T. */
typedef struct {
    int slot[4];
    double hx[4][3];
    hinge_geom g;
    double h, T, dth;
} edge_state;

static double edge_form(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], int i, edge_state *E)
{
    E->slot[0] = (i + 1) % 3;
    E->slot[1] = (i + 2) % 3;
    E->slot[2] = i;
    E->slot[3] = 3 + i;
    for (int k = 0; k < 4; k++) v3_copy(E->hx[k], x[E->slot[k]]);
    double tx, ty;
    hinge_frame(&E->g, (const double (*)[3])E->hx, &tx, &ty);
    E->dth = p->mode[i] == AVI_MIDEDGE_INTERIOR ? -0.5 : p->mode[i] == AVI_MIDEDGE_CLAMPED ? -1.0 : 0.0;
    E->T = avi_midedge_tan_alpha(p->mode[i], p->sign[i], x[6 + i][0], tx, ty);
    E->h = sqrt(E->g.nn1) / E->g.le;
    return 2.0 * E->h * E->T;
}

void avi_midedge_hessian(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double H[N3][N3])
{
    double K[3][3], dII[3], w[3], gII[3][N3];
    edge_state E[3];
    curvature_stiffness(p, K);
    /* bbar = b at rest, so the rest II is (bbar01, bbar00 - bbar01, bbar11 - bbar01). */
    const double II0[3] = {p->bbar[1], p->bbar[0] - p->bbar[1], p->bbar[2] - p->bbar[1]};
    for (int i = 0; i < 3; i++) dII[i] = edge_form(p, x, i, &E[i]) - II0[i];
    for (int j = 0; j < 3; j++) w[j] = K[j][0] * dII[0] + K[j][1] * dII[1] + K[j][2] * dII[2];
    memset(H, 0, N3 * sizeof H[0]);
    for (int i = 0; i < 3; i++) {
        const edge_state *q = &E[i];
        double h = q->h, T = q->T, S = 1.0 + T * T;
        double gh[9], Hh[9][9], gt[4][3] = {{0}}, Ht[12][12], s[2];
        double ga[N3] = {0}, gh27[N3] = {0}; /* grad alpha, grad h over the 27 coordinates */
        altitude_derivatives(&q->g, (const double (*)[3])q->hx, gh, Hh);
        for (int k = 0; k < 3; k++)
            for (int c = 0; c < 3; c++) gh27[3 * q->slot[k] + c] = gh[3 * k + c];
        /* A free edge's slot 3 + i copies x_i: its wing has no angle. */
        if (q->dth != 0.0) {
            hinge_theta_gradient(&q->g, s, gt);
            hinge_theta_hessian(&q->g, (const double (*)[3])q->hx, s, gt, Ht);
            for (int k = 0; k < 4; k++)
                for (int c = 0; c < 3; c++) ga[3 * q->slot[k] + c] = q->dth * gt[k][c];
        }
        if (p->sign[i]) ga[3 * (6 + i)] = p->sign[i];
        for (int r = 0; r < N3; r++) gII[i][r] = 2.0 * T * gh27[r] + 2.0 * h * S * ga[r];
        /* w_i Hess II_i: the rank-one and cross terms over all coordinates,
         * then Hess h (slots a, b, i) and Hess theta (the hinge's 4 slots). */
        double wi = w[i];
        for (int r = 0; r < N3; r++) {
            if (gh27[r] == 0.0 && ga[r] == 0.0) continue;
            for (int c = 0; c < N3; c++)
                H[r][c] += wi * (2.0 * S * (gh27[r] * ga[c] + ga[r] * gh27[c]) + 4.0 * h * S * T * ga[r] * ga[c]);
        }
        for (int k = 0; k < 3; k++)
            for (int l = 0; l < 3; l++)
                for (int r = 0; r < 3; r++)
                    for (int c = 0; c < 3; c++)
                        H[3 * q->slot[k] + r][3 * q->slot[l] + c] += wi * 2.0 * T * Hh[3 * k + r][3 * l + c];
        if (q->dth != 0.0)
            for (int k = 0; k < 4; k++)
                for (int l = 0; l < 4; l++)
                    for (int r = 0; r < 3; r++)
                        for (int c = 0; c < 3; c++)
                            H[3 * q->slot[k] + r][3 * q->slot[l] + c] +=
                                wi * 2.0 * h * S * q->dth * Ht[3 * k + r][3 * l + c];
    }
    for (int r = 0; r < N3; r++)
        for (int c = 0; c < N3; c++) {
            double t = 0.0;
            for (int j = 0; j < 3; j++)
                for (int k = 0; k < 3; k++) t += K[j][k] * gII[j][r] * gII[k][c];
            H[r][c] += t;
        }
    for (int r = 0; r < N3; r++) /* exact H is symmetric: averaging removes round-off */
        for (int c = r + 1; c < N3; c++) H[r][c] = H[c][r] = 0.5 * (H[r][c] + H[c][r]);
}

/* ---------------------------------------------------------- descriptor -- */

/* The damping term's rest state: metric and stiffness kept (abar^-1,
 * Abar D / 2), A's second form as bbar (A's edge DOFs included), so that
 * the term measures the rate of change of curvature; -1 when a director of
 * A is past its face. */
static int midedge_rest_from(const void *rec, const double A[][3], void *out)
{
    const avi_midedge *p = rec;
    avi_midedge *r = out;
    *r = *p;
    avi_shell_material unit = {1.0, p->nu, 1.0, 1.0};
    if (avi_midedge_init(r, A, &unit) != 0) return -1;
    memcpy(r->P, p->P, sizeof p->P);
    r->ka = p->ka;
    for (int k = 0; k < 3; k++)
        if (!isfinite(r->bbar[k])) return -1;
    return 0;
}

static double midedge_omega2_any(const void *rec, const double x[][3], const double *im)
{
    return avi_midedge_omega2(rec, x, im);
}

AVI_KIND_WRAP_FUNCS(midedge, avi_midedge, avi_midedge_energy, avi_midedge_gradient)
AVI_KIND_WRAP_HESSIAN(midedge, avi_midedge, AVI_MIDEDGE_SLOTS, avi_midedge_hessian)

const avi_kind_desc avi_kind_midedge = {
    .name = "midedge",
    .step_powers = {1, -1, 2, 0},
    .record_size = sizeof(avi_midedge),
    .slots = AVI_MIDEDGE_SLOTS,
    .vertices = 6,
    .flags = AVI_KIND_ELASTIC | AVI_KIND_DAMPED,
    .energy = midedge_energy_any,
    .gradient = midedge_gradient_any,
    .hessian = midedge_hessian_any,
    .rest_from = midedge_rest_from,
    .omega2 = midedge_omega2_any,
    .lanes = 1,
};
