#include "potentials/midedge.h"
#include "potentials/hinge_geometry.h"

#include <string.h>

/* II_i and its Jacobian J[i] = dII_i / d(slot, component) at x:
 *   dII_i = 2 sin(alpha_i) dh_i + 2 h_i cos(alpha_i) dalpha_i,
 * h_i = |n| / l_i with grad h_i = -nu_i at x_i and (1 - s) nu_i, s nu_i at
 * the edge's ends (s the foot of x_i along the edge), dalpha_i from the
 * hinge-angle gradient (Bridson et al. 2003) and dalpha_i / dphi_e = s_i.
 * J may be NULL. */
static void second_form(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double II[3],
                        double J[3][AVI_MIDEDGE_SLOTS][3])
{
    if (J) memset(J, 0, 3 * sizeof J[0]);
    for (int i = 0; i < 3; i++) {
        int a = (i + 1) % 3, b = (i + 2) % 3;
        const double *q[4] = {x[a], x[b], x[i], x[3 + i]};
        double hx[4][3];
        for (int k = 0; k < 4; k++) v3_copy(hx[k], q[k]);
        hinge_geom g;
        hinge_geometry(&g, (const double (*)[3])hx);
        double phi = p->sign[i] ? x[6 + i][0] : 0.0;
        double alpha, dth; /* alpha and dalpha / dtheta */
        switch (p->mode[i]) {
        case AVI_MIDEDGE_INTERIOR: dth = -0.5; alpha = dth * g.theta + p->sign[i] * phi; break;
        case AVI_MIDEDGE_CLAMPED: dth = -1.0; alpha = -g.theta; break;
        default: dth = 0.0; alpha = p->sign[i] * phi; break;
        }
        double area2 = sqrt(g.nn1), h = area2 / g.le;
        /* f = tan (Chen et al.'s "better bending" form of the director term):
         * it diverges as the director nears the face plane, which keeps an
         * under-resolved fold from passing 90 degrees and a DOF from spinning;
         * past it the form is undefined (NaN: a blow-up naming the element). */
        double ca = cos(alpha), sa = fabs(alpha) < 0.5 * M_PI ? tan(alpha) : NAN;
        II[i] = 2.0 * h * sa;
        if (!J) continue;
        /* nu_i = t x n_T = (e x n1) / (|e| |n1|). */
        double nu[3];
        v3_cross(nu, g.e, g.n1);
        v3_scale(nu, nu, 1.0 / (g.le * area2));
        /* A free edge's slot 3 + i copies x_i: its wing has no normal, so
         * the angle gradient (unused there) is not formed. */
        double s[2] = {v3_dot(g.f1, g.e) / (g.le * g.le), 0.0}, gt[4][3] = {{0}};
        if (p->mode[i] != AVI_MIDEDGE_FREE) hinge_theta_gradient(&g, s, gt);
        double fp = 1.0 / (ca * ca); /* tan' */
        double ch = 2.0 * sa, ct = 2.0 * h * fp * dth;
        for (int c = 0; c < 3; c++) {
            J[i][a][c] = ch * (1.0 - s[0]) * nu[c] + ct * gt[0][c];
            J[i][b][c] = ch * s[0] * nu[c] + ct * gt[1][c];
            J[i][i][c] = -ch * nu[c] + ct * gt[2][c];
            J[i][3 + i][c] = ct * gt[3][c];
        }
        if (p->sign[i]) J[i][6 + i][0] = 2.0 * h * fp * p->sign[i];
    }
}

/* D = b - bbar (00, 01, 11) from II. */
static void form_change(const avi_midedge *p, const double II[3], double D[3])
{
    D[0] = II[0] + II[1] - p->bbar[0];
    D[1] = II[0] - p->bbar[1];
    D[2] = II[0] + II[2] - p->bbar[2];
}

/* Q = P D P (symmetric) and tr(M) = tr(P D). */
static double pdp(const double P[3], const double D[3], double Q[3])
{
    double a00 = P[0] * D[0] + P[1] * D[1], a01 = P[0] * D[1] + P[1] * D[2];
    double a10 = P[1] * D[0] + P[2] * D[1], a11 = P[1] * D[1] + P[2] * D[2]; /* A = P D */
    Q[0] = a00 * P[0] + a01 * P[1];
    Q[1] = a00 * P[1] + a01 * P[2];
    Q[2] = a10 * P[1] + a11 * P[2];
    return a00 + a11;
}

static double density(const avi_midedge *p, const double D[3])
{
    double Q[3];
    double tr = pdp(p->P, D, Q);
    double trmm = Q[0] * D[0] + 2.0 * Q[1] * D[1] + Q[2] * D[2]; /* tr(P D P D) */
    return p->ka * (p->nu * tr * tr + (1.0 - p->nu) * trmm);
}

/* dV/dII: with G = dV/db = ka [2 nu tr(M) P + 2 (1 - nu) P D P],
 * dV/dII0 = G00 + 2 G01 + G11, dV/dII1 = G00, dV/dII2 = G11. */
static void energy_slopes(const avi_midedge *p, const double D[3], double w[3])
{
    double Q[3];
    double tr = pdp(p->P, D, Q);
    double G[3];
    for (int k = 0; k < 3; k++) G[k] = 2.0 * p->ka * (p->nu * tr * p->P[k] + (1.0 - p->nu) * Q[k]);
    w[0] = G[0] + 2.0 * G[1] + G[2];
    w[1] = G[0];
    w[2] = G[2];
}

int avi_midedge_init(avi_midedge *p, const double X[AVI_MIDEDGE_SLOTS][3], const avi_shell_material *mat)
{
    if (wing_degenerate(X[0], X[1], X[2])) return -1;
    for (int i = 0; i < 3; i++)
        if (p->mode[i] != AVI_MIDEDGE_FREE && wing_degenerate(X[(i + 2) % 3], X[(i + 1) % 3], X[3 + i])) return -1;
    double e1[3], e2[3], n[3];
    v3_sub(e1, X[1], X[0]);
    v3_sub(e2, X[2], X[0]);
    v3_cross(n, e1, e2);
    double a00 = v3_dot(e1, e1), a01 = v3_dot(e1, e2), a11 = v3_dot(e2, e2);
    double det = a00 * a11 - a01 * a01;
    p->P[0] = a11 / det;
    p->P[1] = -a01 / det;
    p->P[2] = a00 / det;
    double nu = mat->poisson, t = mat->thickness;
    double D = mat->youngs * t * t * t / (12.0 * (1.0 - nu * nu));
    p->ka = 0.5 * v3_norm(n) * D / 2.0;
    p->nu = nu;
    memset(p->bbar, 0, sizeof p->bbar);
    double II[3], Dm[3];
    second_form(p, X, II, NULL);
    form_change(p, II, Dm); /* bbar = 0 here, so Dm = b at rest */
    memcpy(p->bbar, Dm, sizeof Dm);
    return 0;
}

double avi_midedge_energy(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3])
{
    double II[3], D[3];
    second_form(p, x, II, NULL);
    form_change(p, II, D);
    return density(p, D);
}

/* A triangle collapsed to zero area has no normal: the gradient is then
 * non-finite, which the engine's blow-up check reports. */
void avi_midedge_gradient(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double g[AVI_MIDEDGE_SLOTS][3])
{
    double II[3], D[3], w[3], J[3][AVI_MIDEDGE_SLOTS][3];
    second_form(p, x, II, J);
    form_change(p, II, D);
    energy_slopes(p, D, w);
    for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++)
        for (int c = 0; c < 3; c++) g[a][c] = w[0] * J[0][a][c] + w[1] * J[1][a][c] + w[2] * J[2][a][c];
}

/* Largest eigenvalue of a symmetric 3x3 matrix (00 01 02 11 12 22), by the
 * trigonometric solution of the characteristic cubic (Smith 1961). */
static double sym3_max_eigenvalue(const double S[6])
{
    /* Scaled to entries <= 1 so that the squares below cannot overflow for
     * extreme (but finite) materials. */
    double scale = 0.0, A[6];
    for (int k = 0; k < 6; k++) scale = fmax(scale, fabs(S[k]));
    if (!(scale > 0.0) || !isfinite(scale)) return scale > 0.0 ? scale : 0.0;
    for (int k = 0; k < 6; k++) A[k] = S[k] / scale;
    double p1 = A[1] * A[1] + A[2] * A[2] + A[4] * A[4];
    double q = (A[0] + A[3] + A[5]) / 3.0;
    double d0 = A[0] - q, d1 = A[3] - q, d2 = A[5] - q;
    double p2 = d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1;
    if (!(p2 > 0.0)) return q * scale;
    double pp = sqrt(p2 / 6.0);
    double b0 = d0 / pp, b1 = A[1] / pp, b2 = A[2] / pp, b3 = d1 / pp, b4 = A[4] / pp, b5 = d2 / pp;
    double r = 0.5 * (b0 * (b3 * b5 - b4 * b4) - b1 * (b1 * b5 - b4 * b2) + b2 * (b1 * b4 - b3 * b2));
    double ph = r <= -1.0 ? M_PI / 3.0 : r >= 1.0 ? 0.0 : acos(r) / 3.0;
    return (q + 2.0 * pp * cos(ph)) * scale;
}

/* With K = d2V/dII2 = L L^T (Cholesky) and A = J diag(im) J^T, the nonzero
 * eigenvalues of diag(im)^1/2 J^T K J diag(im)^1/2 are those of L^T A L. */
double avi_midedge_omega2(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], const double im[AVI_MIDEDGE_SLOTS])
{
    double II[3], J[3][AVI_MIDEDGE_SLOTS][3];
    second_form(p, x, II, J);
    /* V is quadratic in II: column j of K is dV/dII at D = the change of b
     * by a unit II_j, with bbar cancelled. */
    double K[3][3];
    for (int j = 0; j < 3; j++) {
        double u[3] = {0, 0, 0}, D[3];
        u[j] = 1.0;
        D[0] = u[0] + u[1];
        D[1] = u[0];
        D[2] = u[0] + u[2];
        energy_slopes(p, D, K[j]);
    }
    double L[3][3] = {{0}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j <= i; j++) {
            double s = K[i][j];
            for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
            L[i][j] = i == j ? sqrt(fmax(s, 0.0)) : (L[j][j] > 0.0 ? s / L[j][j] : 0.0);
        }
    double A[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++)
                for (int c = 0; c < 3; c++) s += J[i][a][c] * im[a] * J[j][a][c];
            A[i][j] = s;
        }
    double B[3][3]; /* L^T A L */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++) s += L[k][i] * A[k][l] * L[l][j];
            B[i][j] = s;
        }
    double S[6] = {B[0][0], 0.5 * (B[0][1] + B[1][0]), 0.5 * (B[0][2] + B[2][0]), B[1][1],
                   0.5 * (B[1][2] + B[2][1]), B[2][2]};
    return sym3_max_eigenvalue(S);
}
