/* Damping potentials D(A, B) = V(B; rest := A) (Kharevych et al. 2006,
 * section 5.2) and the elastic potentials' values behind one interface. */
#include "core/damping.h"

#include <string.h>

double avi_elem_energy(const avi_elem *el, const double x[][3])
{
    return avi_kind_energy(el->kind, el->rec, x);
}

void avi_elem_gradient(const avi_elem *el, const double x[][3], double g[][3])
{
    avi_kind_gradient(el->kind, el->rec, x, g);
}

void avi_elem_hessian(const avi_elem *el, const double x[][3], double *H)
{
    switch (el->kind) {
    case AVI_KIND_SPRING: avi_spring_hessian(el->rec, x, (double (*)[6])H); break;
    case AVI_KIND_MEMBRANE: avi_membrane_hessian(el->rec, x, (double (*)[9])H); break;
    case AVI_KIND_HINGE: avi_hinge_hessian(el->rec, x, (double (*)[12])H); break;
    default: avi_tet_hessian(el->rec, x, (double (*)[12])H); break;
    }
}

/* A copy of the element's record with A as its rest state; returns 0, or -1
 * when A is degenerate. Material constants are recovered from the record:
 * a tet stores V0 mu and V0 lambda with V0 = 1 / (6 det Dm^-1); a membrane
 * stores A0 h with A0 = 1 / (2 det Dm^-1). The hinge keeps its stiffness
 * and takes A's angle as rest angle. */
typedef union {
    avi_spring s;
    avi_membrane m;
    avi_hinge h;
    avi_tet t;
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
    default: {
        const avi_tet *p = el->rec;
        double v0 = 1.0 / (6.0 * m3_det(p->dm_inv));
        if (!(avi_tet_init(&r->t, A, p->vmu / v0, p->vlambda / v0) > 0.0)) return -1;
        r->t.dt = p->dt;
        return 0;
    }
    }
}

double avi_damping_energy(const avi_elem *el, const double A[][3], const double B[][3])
{
    any_rec r;
    avi_elem d;
    if (rest_from(el, A, &r, &d)) return 0.0;
    return avi_elem_energy(&d, B);
}

void avi_damping_gradient(const avi_elem *el, const double A[][3], const double B[][3], double g[][3])
{
    any_rec r;
    avi_elem d;
    if (rest_from(el, A, &r, &d)) {
        memset(g, 0, (size_t)el->n * sizeof *g);
        return;
    }
    avi_elem_gradient(&d, B, g);
}

void avi_damping_hessian(const avi_elem *el, const double A[][3], const double B[][3], double *H)
{
    any_rec r;
    avi_elem d;
    if (rest_from(el, A, &r, &d)) {
        memset(H, 0, (size_t)(9 * el->n * el->n) * sizeof *H);
        return;
    }
    avi_elem_hessian(&d, B, H);
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
