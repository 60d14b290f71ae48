#include "base/jacobi.h"

#include <math.h>

void avi_jacobi_eigen(double *a, double *V, int n)
{
    if (V) {
        for (int i = 0; i < n * n; i++) V[i] = 0.0;
        for (int i = 0; i < n; i++) V[i * n + i] = 1.0;
    }
    double norm = 0.0;
    for (int i = 0; i < n * n; i++) norm += a[i] * a[i];
    if (norm == 0.0) return;
    for (int sweep = 0; sweep < 50; sweep++) {
        double off = 0.0;
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) off += a[i * n + j] * a[i * n + j];
        if (off <= 1e-30 * norm) break;
        for (int p = 0; p < n; p++)
            for (int q = p + 1; q < n; q++) {
                double apq = a[p * n + q];
                if (apq == 0.0) continue;
                /* t = tan of the angle that zeroes a_pq, the smaller root */
                double theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
                double t = (theta >= 0.0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
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
                if (V)
                    for (int k = 0; k < n; k++) {
                        double vkp = V[k * n + p], vkq = V[k * n + q];
                        V[k * n + p] = c * vkp - s * vkq;
                        V[k * n + q] = s * vkp + c * vkq;
                    }
            }
    }
}
