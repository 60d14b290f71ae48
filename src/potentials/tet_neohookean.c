#include "potentials/tet_neohookean.h"

double avi_tet_init(avi_tet *t, const double X[4][3], double mu, double lambda)
{
    double dm[9];
    for (int i = 0; i < 3; i++) {
        dm[3 * i + 0] = X[1][i] - X[0][i];
        dm[3 * i + 1] = X[2][i] - X[0][i];
        dm[3 * i + 2] = X[3][i] - X[0][i];
    }
    double vol = m3_det(dm) / 6.0;
    if (!(vol > 0.0)) return vol;
    m3_inverse(t->dm_inv, dm);
    t->vmu = vol * mu;
    t->vlambda = vol * lambda;
    return vol;
}

double avi_tet_energy(const avi_tet *t, const double x[4][3])
{
    double F[9];
    avi_tet_deformation(t, x, F);
    double J = m3_det(F);
    double trC = 0.0;
    for (int k = 0; k < 9; k++) trC += F[k] * F[k];
    double lj = log(J);
    return 0.5 * t->vmu * (trC - 3.0) - t->vmu * lj + 0.5 * t->vlambda * lj * lj;
}

/* H = d2V/dx2 from the differential of P:
 *   dP = mu dF + (lambda ln J - mu) dF^-T + lambda (F^-T : dF) F^-T,
 *   dF^-T = -F^-T dF^T F^-T, and dF = dDs Dm^-1 for each unit dof. */
void avi_tet_hessian(const avi_tet *t, const double x[4][3], double H[12][12])
{
    double F[9], Finv[9] = {0};
    avi_tet_deformation(t, x, F);
    double J = m3_inverse(Finv, F);
    double FinvT[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) FinvT[3 * i + j] = Finv[3 * j + i];
    double a = t->vlambda * log(J) - t->vmu;
    const double *D = t->dm_inv;
    for (int col = 0; col < 12; col++) {
        int vert = col / 3, comp = col % 3;
        /* dDs: row comp, columns 0..2 get (+1 for vert>0 at column vert-1; -1 each for vert 0). */
        double dds[9] = {0};
        if (vert == 0) {
            dds[3 * comp + 0] = dds[3 * comp + 1] = dds[3 * comp + 2] = -1.0;
        } else {
            dds[3 * comp + vert - 1] = 1.0;
        }
        double dF[9], dFT[9], tmp[9], dFinvT[9];
        m3_mul(dF, dds, D);
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) dFT[3 * i + j] = dF[3 * j + i];
        m3_mul(tmp, FinvT, dFT);
        m3_mul(dFinvT, tmp, FinvT);
        double tr = 0.0;
        for (int k = 0; k < 9; k++) tr += FinvT[k] * dF[k];
        double dP[9];
        for (int k = 0; k < 9; k++)
            dP[k] = t->vmu * dF[k] - a * dFinvT[k] + t->vlambda * tr * FinvT[k];
        /* d(dV/dDs) = dP Dm^-T */
        double dG[3][3]; /* dG[vertex-1][component] */
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++)
                dG[j][i] = dP[3 * i] * D[3 * j] + dP[3 * i + 1] * D[3 * j + 1] + dP[3 * i + 2] * D[3 * j + 2];
        for (int i = 0; i < 3; i++) {
            H[3 + i][col] = dG[0][i];
            H[6 + i][col] = dG[1][i];
            H[9 + i][col] = dG[2][i];
            H[i][col] = -(dG[0][i] + dG[1][i] + dG[2][i]);
        }
    }
}

double avi_tet_inradius(const double X[4][3])
{
    static const int face[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};
    double e1[3], e2[3], e3[3], n[3], area = 0.0;
    for (int f = 0; f < 4; f++) {
        v3_sub(e1, X[face[f][1]], X[face[f][0]]);
        v3_sub(e2, X[face[f][2]], X[face[f][0]]);
        v3_cross(n, e1, e2);
        area += 0.5 * v3_norm(n);
    }
    v3_sub(e1, X[1], X[0]);
    v3_sub(e2, X[2], X[0]);
    v3_sub(e3, X[3], X[0]);
    v3_cross(n, e2, e3);
    double vol = fabs(v3_dot(e1, n)) / 6.0;
    return area > 0.0 ? 3.0 * vol / area : 0.0;
}

/* The damping term's rest state: A as rest shape, the material constants
 * recovered from the record (it stores V0 mu and V0 lambda with
 * V0 = 1 / (6 det Dm^-1)). */
static int tet_rest_from(const void *rec, const double A[][3], void *out)
{
    const avi_tet *p = rec;
    avi_tet *r = out;
    double v0 = 1.0 / (6.0 * m3_det(p->dm_inv));
    if (!(avi_tet_init(r, A, p->vmu / v0, p->vlambda / v0) > 0.0)) return -1;
    r->dt = p->dt;
    return 0;
}

static double tet_inradius(const double X[][3]) { return avi_tet_inradius(X); }

AVI_KIND_WRAP_FUNCS(tet, avi_tet, avi_tet_energy, avi_tet_gradient)
AVI_KIND_WRAP_HESSIAN(tet, avi_tet, 4, avi_tet_hessian)

const avi_kind_desc avi_kind_tet = {
    .name = "tet",
    .step_powers = {1, -1, 0, 0},
    .record_size = sizeof(avi_tet),
    .slots = 4,
    .vertices = 4,
    .flags = AVI_KIND_ELASTIC | AVI_KIND_DAMPED,
    .energy = tet_energy_any,
    .gradient = tet_gradient_any,
    .hessian = tet_hessian_any,
    .rest_from = tet_rest_from,
    .inradius = tet_inradius,
    .lanes = 1,
};
