/* Small fixed-size vector helpers, inlined into the kernels. */
#ifndef AVI_VEC3_H
#define AVI_VEC3_H

#include <math.h>

static inline void v3_sub(double r[3], const double a[3], const double b[3])
{ r[0] = a[0] - b[0]; r[1] = a[1] - b[1]; r[2] = a[2] - b[2]; }
static inline void v3_add(double r[3], const double a[3], const double b[3])
{ r[0] = a[0] + b[0]; r[1] = a[1] + b[1]; r[2] = a[2] + b[2]; }
static inline void v3_scale(double r[3], const double a[3], double s)
{ r[0] = a[0] * s; r[1] = a[1] * s; r[2] = a[2] * s; }
static inline void v3_axpy(double r[3], double s, const double a[3])
{ r[0] += s * a[0]; r[1] += s * a[1]; r[2] += s * a[2]; }
static inline double v3_dot(const double a[3], const double b[3])
{ return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }
static inline void v3_cross(double r[3], const double a[3], const double b[3])
{
    double x = a[1] * b[2] - a[2] * b[1];
    double y = a[2] * b[0] - a[0] * b[2];
    double z = a[0] * b[1] - a[1] * b[0];
    r[0] = x; r[1] = y; r[2] = z;
}
static inline double v3_norm(const double a[3]) { return sqrt(v3_dot(a, a)); }
static inline void v3_copy(double r[3], const double a[3]) { r[0] = a[0]; r[1] = a[1]; r[2] = a[2]; }
static inline int v3_isfinite(const double a[3])
{ return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]); }

/* 3x3 matrices are row-major double[9]. */
static inline double m3_det(const double m[9])
{
    return m[0] * (m[4] * m[8] - m[5] * m[7]) - m[1] * (m[3] * m[8] - m[5] * m[6])
         + m[2] * (m[3] * m[7] - m[4] * m[6]);
}
/* Inverse of m; returns the determinant (0 when singular, r untouched). */
static inline double m3_inverse(double r[9], const double m[9])
{
    double det = m3_det(m);
    if (det == 0.0) return 0.0;
    double id = 1.0 / det;
    r[0] = (m[4] * m[8] - m[5] * m[7]) * id; r[1] = (m[2] * m[7] - m[1] * m[8]) * id;
    r[2] = (m[1] * m[5] - m[2] * m[4]) * id; r[3] = (m[5] * m[6] - m[3] * m[8]) * id;
    r[4] = (m[0] * m[8] - m[2] * m[6]) * id; r[5] = (m[2] * m[3] - m[0] * m[5]) * id;
    r[6] = (m[3] * m[7] - m[4] * m[6]) * id; r[7] = (m[1] * m[6] - m[0] * m[7]) * id;
    r[8] = (m[0] * m[4] - m[1] * m[3]) * id;
    return det;
}
static inline void m3_mul(double r[9], const double a[9], const double b[9])
{
    double t[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            t[3 * i + j] = a[3 * i] * b[j] + a[3 * i + 1] * b[3 + j] + a[3 * i + 2] * b[6 + j];
    for (int k = 0; k < 9; k++) r[k] = t[k];
}

#endif
