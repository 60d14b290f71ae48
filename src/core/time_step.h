/* Per-potential stable time steps. */
#ifndef AVI_TIME_STEP_H
#define AVI_TIME_STEP_H

/* Largest eigenvalue of a symmetric n x n matrix (row-major, n <= 12), by
 * cyclic Jacobi rotations (base/jacobi.h). */
double avi_sym_max_eigenvalue(const double *A, int n);

/* omega^2 = largest eigenvalue of M^-1/2 H M^-1/2 for a stencil Hessian H
 * (3 nv x 3 nv, row-major) and the stencil's inverse masses. */
double avi_stencil_omega2(const double *H, int nv, const double *inv_mass);

#endif
