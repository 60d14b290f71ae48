/* Damping potentials D(A, B) = V(B; rest := A) (Kharevych et al. 2006,
 * section 5.2) and the elastic potentials' values behind one interface. */
#include "core/damping.h"

#include "potentials/midedge_hessian.h"

#include <math.h>
#include <string.h>

double avi_elem_energy(const avi_elem *el, const double x[][3])
{
    return avi_kind_energy(el->kind, el->rec, x);
}

void avi_elem_gradient(const avi_elem *el, const double x[][3], double g[][3])
{
    avi_kind_gradient(el->kind, el->rec, x, g);
}

/* H of a kind not named here is NaN: a record of another kind must never
 * be read as one of these. */
static void refuse(double *H, int n)
{
    for (int k = 0; k < 9 * n * n; k++) H[k] = NAN;
}

int avi_elem_hessian(const avi_elem *el, const double x[][3], double *H)
{
    switch (el->kind) {
    case AVI_KIND_SPRING: avi_spring_hessian(el->rec, x, (double (*)[6])H); return 0;
    case AVI_KIND_MEMBRANE: avi_membrane_hessian(el->rec, x, (double (*)[9])H); return 0;
    case AVI_KIND_HINGE: avi_hinge_hessian(el->rec, x, (double (*)[12])H); return 0;
    case AVI_KIND_TET: avi_tet_hessian(el->rec, x, (double (*)[12])H); return 0;
    case AVI_KIND_MIDEDGE: avi_midedge_hessian(el->rec, x, (double (*)[3 * AVI_MIDEDGE_SLOTS])H); return 0;
    default: refuse(H, el->n); return -1;
    }
}

/* A copy of the element's record with A as its rest state; returns 0, or -1
 * when A is degenerate. Material constants are recovered from the record:
 * a tet stores V0 mu and V0 lambda with V0 = 1 / (6 det Dm^-1); a membrane
 * stores A0 h with A0 = 1 / (2 det Dm^-1). The hinge keeps its stiffness
 * and takes A's angle as rest angle; the mid-edge triangle likewise keeps its
 * metric and stiffness (abar^-1, Abar D / 2) and takes A's second form as
 * bbar (A's edge DOFs included), so that D measures the rate of change of
 * curvature. Returns -2 for a kind not named here. */
typedef union {
    avi_spring s;
    avi_membrane m;
    avi_hinge h;
    avi_tet t;
    avi_midedge e;
} any_rec;

static int rest_from(const avi_elem *el, const double A[][3], any_rec *r, avi_elem *out)
{
    *out = *el;
    out->rec = r;
    switch (el->kind) {
    case AVI_KIND_SPRING: {
        r->s = *(const avi_spring *)el->rec;
        double d[3];
        v3_sub(d, A[1], A[0]);
        r->s.rest = v3_norm(d);
        return 0;
    }
    case AVI_KIND_MEMBRANE: {
        const avi_membrane *p = el->rec;
        double thickness = p->ah * 2.0 * p->dm_inv[0] * p->dm_inv[3];
        avi_shell_material unit = {1.0, 0.0, 1.0, 1.0};
        double area = avi_membrane_init(&r->m, A, &unit);
        if (!(area > 0.0)) return -1;
        r->m.ah = area * thickness;
        r->m.mu = p->mu;
        r->m.lambda = p->lambda;
        r->m.dt = p->dt;
        return 0;
    }
    case AVI_KIND_HINGE:
        r->h = *(const avi_hinge *)el->rec;
        r->h.theta0 = avi_hinge_angle(A);
        return 0;
    case AVI_KIND_TET: {
        const avi_tet *p = el->rec;
        double v0 = 1.0 / (6.0 * m3_det(p->dm_inv));
        if (!(avi_tet_init(&r->t, A, p->vmu / v0, p->vlambda / v0) > 0.0)) return -1;
        r->t.dt = p->dt;
        return 0;
    }
    case AVI_KIND_MIDEDGE: {
        const avi_midedge *p = el->rec;
        r->e = *p;
        avi_shell_material unit = {1.0, p->nu, 1.0, 1.0};
        if (avi_midedge_init(&r->e, A, &unit) != 0) return -1;
        memcpy(r->e.P, p->P, sizeof p->P);
        r->e.ka = p->ka;
        for (int k = 0; k < 3; k++)
            if (!isfinite(r->e.bbar[k])) return -1; /* a director of A past its face */
        return 0;
    }
    default: return -2;
    }
}

double avi_damping_energy(const avi_elem *el, const double A[][3], const double B[][3])
{
    any_rec r;
    avi_elem d;
    int rc = rest_from(el, A, &r, &d);
    if (rc) return rc == -1 ? 0.0 : NAN;
    return avi_elem_energy(&d, B);
}

void avi_damping_gradient(const avi_elem *el, const double A[][3], const double B[][3], double g[][3])
{
    any_rec r;
    avi_elem d;
    int rc = rest_from(el, A, &r, &d);
    if (rc) {
        for (int a = 0; a < el->n; a++) g[a][0] = g[a][1] = g[a][2] = rc == -1 ? 0.0 : NAN;
        return;
    }
    avi_elem_gradient(&d, B, g);
}

int avi_damping_hessian(const avi_elem *el, const double A[][3], const double B[][3], double *H)
{
    any_rec r;
    avi_elem d;
    int rc = rest_from(el, A, &r, &d);
    if (rc == -2) return (refuse(H, el->n), -1);
    if (rc) {
        memset(H, 0, (size_t)(9 * el->n * el->n) * sizeof *H);
        return 0;
    }
    return avi_elem_hessian(&d, B, H);
}

void avi_damping_add(const avi_elem *el, const avi_vertex *V, const double x[][3], double dt, double s, double g[][3])
{
    double A[AVI_STENCIL_MAX][3], gd[AVI_STENCIL_MAX][3];
    for (int a = 0; a < el->n; a++)
        for (int c = 0; c < 3; c++) A[a][c] = x[a][c] - dt * V[el->v[a]].v[c];
    avi_damping_gradient(el, (const double (*)[3])A, x, gd);
    for (int a = 0; a < el->n; a++)
        for (int c = 0; c < 3; c++) g[a][c] += s * gd[a][c];
}
