#include "core/time_step.h"

#include <math.h>
#include <string.h>

double avi_sym_max_eigenvalue(const double *A, int n)
{
    double a[144];
    memcpy(a, A, (size_t)(n * n) * sizeof(double));
    for (int sweep = 0; sweep < 60; sweep++) {
        double off = 0.0, diag = 0.0;
        for (int i = 0; i < n; i++) {
            diag += a[i * n + i] * a[i * n + i];
            for (int j = i + 1; j < n; j++) off += a[i * n + j] * a[i * n + j];
        }
        if (off <= 1e-30 * diag || off == 0.0) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (apq == 0.0) continue;
                double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
                double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
                for (int k = 0; k < n; k++) { /* columns p, q */
                    double akp = a[k * n + p], akq = a[k * n + q];
                    a[k * n + p] = c * akp - s * akq;
                    a[k * n + q] = s * akp + c * akq;
                }
                for (int k = 0; k < n; k++) { /* rows p, q */
                    double apk = a[p * n + k], aqk = a[q * n + k];
                    a[p * n + k] = c * apk - s * aqk;
                    a[q * n + k] = s * apk + c * aqk;
                }
            }
    }
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
