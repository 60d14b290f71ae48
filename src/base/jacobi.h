/* Symmetric eigenproblems of stencil size (n <= 27, a mid-edge element's
 * nine slots) by cyclic Jacobi
 * rotations: the stable time steps' largest eigenvalue (core/time_step.c)
 * and the Newton solvers' projection onto the positive semi-definite cone
 * (sync/matrix.c) share this one solver, so both see the same rounding. */
#ifndef AVI_JACOBI_H
#define AVI_JACOBI_H

/* Diagonalizes the symmetric n x n matrix a (row-major, any n) in place:
 * cyclic sweeps of Jacobi rotations (Golub and Van Loan, Matrix
 * Computations, 4th ed., 2013, Algorithms 8.5.1-8.5.3) until the squared
 * upper off-diagonal entries sum to at most 1e-30 times the squared
 * Frobenius norm of the input (at most 50 sweeps; a zero matrix takes
 * none). a's diagonal then holds the eigenvalues, the rest what is left of
 * the off-diagonal; V (n x n, may be NULL) receives the eigenvectors as
 * columns, V[k * n + i] the k-th component of the i-th. */
void avi_jacobi_eigen(double *a, double *V, int n);

#endif
