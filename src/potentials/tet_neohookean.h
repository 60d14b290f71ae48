/* Compressible neo-Hookean tetrahedron:
 *   V = V0 [ mu/2 (tr C - 3) - mu ln J + lambda/2 (ln J)^2 ],
 * F = Ds Dm^-1 with Ds = [x1-x0, x2-x0, x3-x0], C = F^T F, J = det F. */
#ifndef AVI_TET_NEOHOOKEAN_H
#define AVI_TET_NEOHOOKEAN_H

#include <stdint.h>
#include "potentials/kind_desc.h"
#include "base/vec3.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

typedef struct {
    uint32_t v[4];
    double dm_inv[9]; /* inverse rest edge matrix, row-major */
    double vmu;       /* V0 mu */
    double vlambda;   /* V0 lambda */
    double dt;
} avi_tet;

/* Rest data from rest positions X. Returns the signed rest volume; the
 * record is filled only when it is positive. */
double avi_tet_init(avi_tet *t, const double X[4][3], double mu, double lambda);
double avi_tet_energy(const avi_tet *t, const double x[4][3]);
void avi_tet_hessian(const avi_tet *t, const double x[4][3], double H[12][12]);
/* Inradius 3 V / (sum of face areas) of a tetrahedron. */
double avi_tet_inradius(const double X[4][3]);

/* Deformation gradient F (row-major) of the stencil. */
static inline void avi_tet_deformation(const avi_tet *t, const double x[4][3], double F[9])
{
    double ds[9];
    for (int i = 0; i < 3; i++) {
        ds[3 * i + 0] = x[1][i] - x[0][i];
        ds[3 * i + 1] = x[2][i] - x[0][i];
        ds[3 * i + 2] = x[3][i] - x[0][i];
    }
    m3_mul(F, ds, t->dm_inv);
}

/* g[a] = dV/dx_a. With J <= 0 the energy is undefined and g is NaN, which
 * the engine's blow-up check reports. Written column by column so the
 * compiler keeps everything in registers: the columns of F are
 * f_k = sum_j Dm^-1[j][k] (x_{j+1} - x_0), those of J F^-T are
 * c = (f1 x f2, f2 x f0, f0 x f1), V0 P = V0 mu F + V0 (lambda ln J - mu) F^-T,
 * and g_{j+1} = sum_k (V0 P)_k Dm^-1[j][k]. */
static inline void avi_tet_gradient_scalar(const avi_tet *t, const double x[4][3], double g[4][3])
{
    const double *D = t->dm_inv;
    double e0[3], e1[3], e2[3];
    v3_sub(e0, x[1], x[0]);
    v3_sub(e1, x[2], x[0]);
    v3_sub(e2, x[3], x[0]);
    double f[3][3], c[3][3];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) f[k][i] = D[k] * e0[i] + D[3 + k] * e1[i] + D[6 + k] * e2[i];
    v3_cross(c[0], f[1], f[2]);
    v3_cross(c[1], f[2], f[0]);
    v3_cross(c[2], f[0], f[1]);
    double J = v3_dot(f[0], c[0]);
    /* lambda = 0 (Poisson ratio 0) needs no log; an inverted or flat tet
     * (J <= 0) still gets log's NaN / -inf, which the blow-up check sees. */
    double vl = t->vlambda != 0.0 || !(J > 0.0) ? t->vlambda * log(J) : 0.0;
    double s = (vl - t->vmu) / J;
    double p[3][3];
    for (int k = 0; k < 3; k++)
        for (int i = 0; i < 3; i++) p[k][i] = t->vmu * f[k][i] + s * c[k][i];
    for (int i = 0; i < 3; i++) {
        double g1 = p[0][i] * D[0] + p[1][i] * D[1] + p[2][i] * D[2];
        double g2 = p[0][i] * D[3] + p[1][i] * D[4] + p[2][i] * D[5];
        double g3 = p[0][i] * D[6] + p[1][i] * D[7] + p[2][i] * D[8];
        g[1][i] = g1;
        g[2][i] = g2;
        g[3][i] = g3;
        g[0][i] = -(g1 + g2 + g3);
    }
}

#ifdef __AVX2__
/* The same arithmetic with the x, y, z components in lanes 0-2 of one
 * register: every lane does the scalar code's operations on its component
 * in the same order (multiply and add apart, as the build contracts
 * nothing), so the result is bitwise that of avi_tet_gradient_scalar
 * (tests/unit/test_potentials_fd.c checks it). Lane 3 carries zeros. */
/* Three scalar loads: a 128-bit load of x[a] would not be forwarded from
 * the scalar stores that callers may have written it with (a stall of
 * about a dozen cycles per load in the synchronous sweep). */
static inline __m256d avi_tet_load3(const double a[3])
{
    return _mm256_setr_pd(a[0], a[1], a[2], 0.0);
}

static inline void avi_tet_store3(double a[3], __m256d v)
{
    _mm_storeu_pd(a, _mm256_castpd256_pd128(v));
    _mm_store_sd(a + 2, _mm256_extractf128_pd(v, 1));
}

/* (a1 b2 - a2 b1, a2 b0 - a0 b2, a0 b1 - a1 b0): v3_cross lane by lane. */
static inline __m256d avi_tet_cross(__m256d a, __m256d b)
{
    __m256d a_yzx = _mm256_permute4x64_pd(a, 0xC9), b_zxy = _mm256_permute4x64_pd(b, 0xD2);
    __m256d a_zxy = _mm256_permute4x64_pd(a, 0xD2), b_yzx = _mm256_permute4x64_pd(b, 0xC9);
    return _mm256_sub_pd(_mm256_mul_pd(a_yzx, b_zxy), _mm256_mul_pd(a_zxy, b_yzx));
}

/* c0 a + c1 b + c2 c, summed left to right. */
static inline __m256d avi_tet_comb(double c0, __m256d a, double c1, __m256d b, double c2, __m256d c)
{
    __m256d r = _mm256_add_pd(_mm256_mul_pd(_mm256_set1_pd(c0), a), _mm256_mul_pd(_mm256_set1_pd(c1), b));
    return _mm256_add_pd(r, _mm256_mul_pd(_mm256_set1_pd(c2), c));
}

/* The gradient from and into registers: x[a] holds vertex a's position in
 * lanes 0-2; lane 3 may hold anything equal and finite in all four (the
 * engine passes the vertex records' tau, all at the event's time), as only
 * differences of positions enter. g[a] gets lane 3 = +-0. */
static inline void avi_tet_gradient_lanes(const avi_tet *t, const __m256d x[4], __m256d g[4])
{
    const double *D = t->dm_inv;
    __m256d e0 = _mm256_sub_pd(x[1], x[0]);
    __m256d e1 = _mm256_sub_pd(x[2], x[0]);
    __m256d e2 = _mm256_sub_pd(x[3], x[0]);
    __m256d f0 = avi_tet_comb(D[0], e0, D[3], e1, D[6], e2);
    __m256d f1 = avi_tet_comb(D[1], e0, D[4], e1, D[7], e2);
    __m256d f2 = avi_tet_comb(D[2], e0, D[5], e1, D[8], e2);
    __m256d c0 = avi_tet_cross(f1, f2), c1 = avi_tet_cross(f2, f0), c2 = avi_tet_cross(f0, f1);
    __m256d fc = _mm256_mul_pd(f0, c0);
    __m128d lo = _mm256_castpd256_pd128(fc);
    double J = (_mm_cvtsd_f64(lo) + _mm_cvtsd_f64(_mm_unpackhi_pd(lo, lo))) +
               _mm_cvtsd_f64(_mm256_extractf128_pd(fc, 1));
    double vl = t->vlambda != 0.0 || !(J > 0.0) ? t->vlambda * log(J) : 0.0;
    double s = (vl - t->vmu) / J;
    __m256d mu = _mm256_set1_pd(t->vmu), ss = _mm256_set1_pd(s);
    __m256d p0 = _mm256_add_pd(_mm256_mul_pd(mu, f0), _mm256_mul_pd(ss, c0));
    __m256d p1 = _mm256_add_pd(_mm256_mul_pd(mu, f1), _mm256_mul_pd(ss, c1));
    __m256d p2 = _mm256_add_pd(_mm256_mul_pd(mu, f2), _mm256_mul_pd(ss, c2));
    g[1] = avi_tet_comb(D[0], p0, D[1], p1, D[2], p2);
    g[2] = avi_tet_comb(D[3], p0, D[4], p1, D[5], p2);
    g[3] = avi_tet_comb(D[6], p0, D[7], p1, D[8], p2);
    /* Negation by the sign bit, as the scalar unary minus (0 - x would turn -0 into +0). */
    g[0] = _mm256_xor_pd(_mm256_add_pd(_mm256_add_pd(g[1], g[2]), g[3]), _mm256_set1_pd(-0.0));
}

static inline void avi_tet_gradient(const avi_tet *t, const double x[4][3], double g[4][3])
{
    __m256d xv[4], gv[4];
    for (int a = 0; a < 4; a++) xv[a] = avi_tet_load3(x[a]);
    avi_tet_gradient_lanes(t, xv, gv);
    for (int a = 0; a < 4; a++) avi_tet_store3(g[a], gv[a]);
}
#else
static inline void avi_tet_gradient(const avi_tet *t, const double x[4][3], double g[4][3])
{
    avi_tet_gradient_scalar(t, x, g);
}
#endif

/* The kind's row and descriptor (potentials/kind_desc.h). */
/* clang-format off */
#define AVI_KIND_ROW_TET(X) X(AVI_KIND_TET, avi_tet, tets, ntet, 4, 4, avi_tet_gradient, avi_tet_energy, AVI_KIND_ELASTIC | AVI_KIND_DAMPED)
#define AVI_LANE_ROW_TET(X) X(AVI_KIND_TET, avi_tet, avi_tet_gradient_lanes)
#define AVI_KIND_DESC_TET avi_kind_tet
/* clang-format on */
extern const avi_kind_desc avi_kind_tet;

#endif
