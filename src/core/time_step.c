#include "core/time_step.h"
#include "base/jacobi.h"

#include <math.h>
#include <string.h>

double avi_sym_max_eigenvalue(const double *A, int n)
{
    double a[144];
    memcpy(a, A, (size_t)(n * n) * sizeof(double));
    avi_jacobi_eigen(a, NULL, n);
    double mx = a[0];
    for (int i = 1; i < n; i++)
        if (a[i * n + i] > mx) mx = a[i * n + i];
    return mx;
}

double avi_stencil_omega2(const double *H, int nv, const double *inv_mass)
{
    int n = 3 * nv;
    double A[144], s[12];
    for (int i = 0; i < n; i++) s[i] = sqrt(inv_mass[i / 3]);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) A[i * n + j] = s[i] * H[i * n + j] * s[j];
    return avi_sym_max_eigenvalue(A, n);
}
