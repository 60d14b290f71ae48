/* Damping potentials D(A, B) = V(B; rest := A) (Kharevych et al. 2006,
 * section 5.2) and the elastic potentials' values behind one interface. */
#include "core/damping.h"

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

/* H of a kind without a Hessian is NaN: the caller must refuse it (its
 * descriptor names it: avi_model_undamped_kind). */
static void refuse(double *H, int n)
{
    for (int k = 0; k < 9 * n * n; k++) H[k] = NAN;
}

int avi_elem_hessian(const avi_elem *el, const double x[][3], double *H)
{
    const avi_kind_desc *d = avi_kind_desc_of(el->kind);
    if (!d || !d->hessian) return (refuse(H, el->n), -1);
    d->hessian(el->rec, x, H);
    return 0;
}

/* A copy of the element's record with A as its rest state, by the kind's
 * descriptor (rest_from, src/potentials/<kind>.c); returns 0, -1 when A is
 * degenerate, or -2 for a kind with no damping term. */
static int rest_from(const avi_elem *el, const double A[][3], avi_any_record *r, avi_elem *out)
{
    const avi_kind_desc *d = avi_kind_desc_of(el->kind);
    *out = *el;
    out->rec = r;
    return d && d->rest_from ? d->rest_from(el->rec, A, r) : -2;
}

double avi_damping_energy(const avi_elem *el, const double A[][3], const double B[][3])
{
    avi_any_record r;
    avi_elem d;
    int rc = rest_from(el, A, &r, &d);
    if (rc) return rc == -1 ? 0.0 : NAN;
    return avi_elem_energy(&d, B);
}

void avi_damping_gradient(const avi_elem *el, const double A[][3], const double B[][3], double g[][3])
{
    avi_any_record r;
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
    avi_any_record r;
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
