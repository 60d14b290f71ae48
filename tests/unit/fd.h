/* Finite-difference checks shared by the potential tests. */
#ifndef AVI_TEST_FD_H
#define AVI_TEST_FD_H

#include <math.h>

/* Energy and gradient of a stencil with nv vertices, positions flat [3 nv]. */
typedef double (*fd_energy_fn)(const void *p, const double *x);
typedef void (*fd_gradient_fn)(const void *p, const double *x, double *g);
typedef void (*fd_hessian_fn)(const void *p, const double *x, double *H);

/* max |a - b| / max(|b|_inf, floor) over the vector. */
static inline double fd_rel_error(const double *a, const double *b, int n, double floor)
{
    double scale = floor, err = 0.0;
    for (int i = 0; i < n; i++) scale = fmax(scale, fabs(b[i]));
    for (int i = 0; i < n; i++) err = fmax(err, fabs(a[i] - b[i]));
    return err / scale;
}

/* Central differences of the energy against the gradient. */
static inline double fd_gradient_error(const void *p, fd_energy_fn energy, fd_gradient_fn gradient,
                                       const double *x0, int n, double h)
{
    double x[36] = {0}, g[36], fd[36]; /* zeroed: -O1 cannot see that n entries are set */
    for (int i = 0; i < n; i++) x[i] = x0[i];
    gradient(p, x, g);
    for (int i = 0; i < n; i++) {
        double xi = x[i];
        x[i] = xi + h;
        double ep = energy(p, x);
        x[i] = xi - h;
        double em = energy(p, x);
        x[i] = xi;
        fd[i] = (ep - em) / (2.0 * h);
    }
    return fd_rel_error(g, fd, n, 1e-8);
}

/* Central differences of the gradient against the Hessian (row-major n x n). */
static inline double fd_hessian_error(const void *p, fd_gradient_fn gradient, fd_hessian_fn hessian,
                                      const double *x0, int n, double h)
{
    double x[36] = {0}, H[1296], fd[1296], gp[36], gm[36];
    for (int i = 0; i < n; i++) x[i] = x0[i];
    hessian(p, x, H);
    for (int j = 0; j < n; j++) {
        double xj = x[j];
        x[j] = xj + h;
        gradient(p, x, gp);
        x[j] = xj - h;
        gradient(p, x, gm);
        x[j] = xj;
        for (int i = 0; i < n; i++) fd[i * n + j] = (gp[i] - gm[i]) / (2.0 * h);
    }
    return fd_rel_error(H, fd, n * n, 1e-8);
}

#endif
