/* Exact orientation signs, the predicates that decide whether input
 * triangles intersect (mesh and initial-state checks).
 *
 * A floating-point evaluation with a forward error bound answers almost
 * always; when it cannot, the determinant is evaluated exactly as a
 * floating-point expansion (Shewchuk 1997), so the sign is right for every
 * input, coplanar and collinear ones included. Assumes round-to-nearest
 * doubles and no underflow in products of coordinate differences (that
 * is, differences above about 1e-150), which coordinates in metres never
 * approach. */
#ifndef AVI_ORIENTATION_H
#define AVI_ORIENTATION_H

/* Sign (-1, 0, 1) of det[a - d; b - d; c - d]: 1 when d lies on the side of
 * the plane abc that (b - a) x (c - a) points away from, i.e. when a, b, c
 * turn clockwise seen from d. */
int avi_orient3d(const double a[3], const double b[3], const double c[3], const double d[3]);

/* Sign of (b - a) x (c - a) in the coordinate plane (u, v) (u, v in 0..2):
 * 1 when a, b, c turn counter-clockwise there. */
int avi_orient2d(const double a[3], const double b[3], const double c[3], int u, int v);

#endif
