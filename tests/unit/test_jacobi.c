/* The cyclic Jacobi eigensolver (src/base/jacobi.c) of the stable time
 * steps and the PSD projection: A V = V Lambda with V orthonormal for
 * symmetric matrices of every stencil size, repeated eigenvalues included;
 * diagonal and zero input unchanged. */
#include <check.h>
#include <math.h>
#include <string.h>

#include "base/jacobi.h"
#include "check_main.h"

static unsigned long long rng = 88172645463325252ull;
static double uniform(void) /* xorshift64: [-1, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

/* max |A V - V diag(a)| and max |V^T V - I| relative to max |A|. */
static void residuals(const double *A, const double *a, const double *V, int n, double *eig, double *orth)
{
    double amax = 0.0;
    for (int i = 0; i < n * n; i++) amax = fmax(amax, fabs(A[i]));
    *eig = *orth = 0.0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double av = 0.0, vv = 0.0;
            for (int k = 0; k < n; k++) {
                av += A[i * n + k] * V[k * n + j];
                vv += V[k * n + i] * V[k * n + j];
            }
            *eig = fmax(*eig, fabs(av - V[i * n + j] * a[j * n + j]) / amax);
            *orth = fmax(*orth, fabs(vv - (i == j ? 1.0 : 0.0)));
        }
}

START_TEST(test_jacobi_random)
{
    for (int trial = 0; trial < 300; trial++) {
        int n = 2 + trial % 11;
        double A[144], B[144], a[144], V[144];
        for (int i = 0; i < n * n; i++) B[i] = uniform();
        /* odd trials: B B^T of rank 2, an eigenvalue 0 of multiplicity n - 2 */
        for (int i = 0; i < n; i++)
            for (int j = 0; j <= i; j++) {
                double s = B[i * n + j];
                if (trial % 2) s = B[i * n] * B[j * n] + B[i * n + 1] * B[j * n + 1];
                A[i * n + j] = A[j * n + i] = s;
            }
        memcpy(a, A, sizeof a);
        avi_jacobi_eigen(a, V, n);
        double eig, orth, tr0 = 0.0, tr1 = 0.0;
        residuals(A, a, V, n, &eig, &orth);
        for (int i = 0; i < n; i++) tr0 += A[i * n + i], tr1 += a[i * n + i];
        ck_assert_msg(eig < 1e-13 && orth < 1e-13, "n %d trial %d: |AV - V L| %.2e, |V^T V - I| %.2e", n, trial, eig,
                      orth);
        ck_assert_double_eq_tol(tr1, tr0, 1e-12 * n);
    }
}
END_TEST

START_TEST(test_jacobi_trivial)
{
    double d[9] = {3.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 2.0}, a[9], V[9];
    memcpy(a, d, sizeof a);
    avi_jacobi_eigen(a, V, 3);
    ck_assert_mem_eq(a, d, sizeof a);
    for (int i = 0; i < 9; i++) ck_assert_double_eq(V[i], i % 4 == 0 ? 1.0 : 0.0);
    double z[4] = {0.0, 0.0, 0.0, 0.0};
    avi_jacobi_eigen(z, NULL, 2);
    for (int i = 0; i < 4; i++) ck_assert_double_eq(z[i], 0.0);
    double h[4] = {1.0, 2.0, 2.0, 1.0}; /* eigenvalues -1, 3 */
    avi_jacobi_eigen(h, NULL, 2);
    ck_assert_double_eq_tol(fmin(h[0], h[3]), -1.0, 1e-15);
    ck_assert_double_eq_tol(fmax(h[0], h[3]), 3.0, 1e-15);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("jacobi");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_jacobi_random);
    tcase_add_test(tc, test_jacobi_trivial);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(make_suite)
