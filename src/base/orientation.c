/* Exact orientation signs: error-bounded float filter, then expansions. */
#include "base/orientation.h"

#include <float.h>
#include <math.h>

/* An expansion is a sum of doubles, non-overlapping and in increasing
 * magnitude, without zero components: its sign is that of its last
 * component (none: zero). */

/* s + e = a + b exactly (Knuth). */
static inline void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b, bv = x - a, av = x - bv;
    *s = x;
    *e = (a - av) + (b - bv);
}

/* p + e = a b exactly: fma gives the product's rounding error. */
static inline void two_product(double a, double b, double *p, double *e)
{
    double x = a * b;
    *p = x;
    *e = fma(a, b, -x);
}

/* h = e + b (Shewchuk's Grow-Expansion); h may alias e. */
static int grow(const double *e, int n, double b, double *h)
{
    int k = 0;
    double q = b;
    for (int i = 0; i < n; i++) {
        double s, t;
        two_sum(q, e[i], &s, &t);
        if (t != 0.0) h[k++] = t;
        q = s;
    }
    if (q != 0.0) h[k++] = q;
    return k;
}

/* h = h + f in place; h has room for n + nf components. */
static int add(double *h, int n, const double *f, int nf)
{
    for (int j = 0; j < nf; j++) n = grow(h, n, f[j], h);
    return n;
}

/* h = e b (Scale-Expansion), at most 2 n components. */
static int scale(const double *e, int n, double b, double *h)
{
    int k = 0;
    double q = 0.0;
    for (int i = 0; i < n; i++) {
        double hi, lo, s, r;
        two_product(e[i], b, &hi, &lo);
        two_sum(q, lo, &s, &r);
        if (r != 0.0) h[k++] = r;
        two_sum(hi, s, &q, &r);
        if (r != 0.0) h[k++] = r;
    }
    if (q != 0.0) h[k++] = q;
    return k;
}

/* h = e f for nf <= 2 and ne <= 16: at most 2 ne nf components. */
static int multiply(const double *e, int ne, const double *f, int nf, double *h)
{
    double t[32];
    int n = 0;
    for (int j = 0; j < nf; j++) n = add(h, n, t, scale(e, ne, f[j], t));
    return n;
}

/* h = a - b exactly: at most 2 components. */
static int difference(double a, double b, double *h)
{
    double s, e;
    two_sum(a, -b, &s, &e);
    int k = 0;
    if (e != 0.0) h[k++] = e;
    if (s != 0.0) h[k++] = s;
    return k;
}

static int sign_of(const double *h, int n) { return n == 0 ? 0 : (h[n - 1] > 0.0 ? 1 : -1); }

/* An exact difference of two coordinates. */
typedef struct {
    double c[2];
    int n;
} diff2;

static diff2 exact_diff(double a, double b)
{
    diff2 d;
    d.n = difference(a, b, d.c);
    return d;
}

/* h = p q - r s, at most 16 components. */
static int minor2(diff2 p, diff2 q, diff2 r, diff2 s, double *h)
{
    double t[8];
    int n = multiply(p.c, p.n, q.c, q.n, h), m = multiply(r.c, r.n, s.c, s.n, t);
    for (int i = 0; i < m; i++) t[i] = -t[i];
    return add(h, n, t, m);
}

static int orient3d_exact(const double a[3], const double b[3], const double c[3], const double d[3])
{
    diff2 A[3], B[3], C[3];
    for (int i = 0; i < 3; i++) {
        A[i] = exact_diff(a[i], d[i]);
        B[i] = exact_diff(b[i], d[i]);
        C[i] = exact_diff(c[i], d[i]);
    }
    /* Expansion along the x column: A_x (B_y C_z - B_z C_y) + ... */
    const diff2 *row[3] = {A, B, C};
    double det[192], m[16], t[64];
    int n = 0;
    for (int r = 0; r < 3; r++) {
        const diff2 *p = row[(r + 1) % 3], *q = row[(r + 2) % 3];
        int nm = minor2(p[1], q[2], p[2], q[1], m);
        n = add(det, n, t, multiply(m, nm, row[r][0].c, row[r][0].n, t));
    }
    return sign_of(det, n);
}

int avi_orient3d(const double a[3], const double b[3], const double c[3], const double d[3])
{
    double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
    double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
    double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
    double det = adx * (bdy * cdz - bdz * cdy) + bdx * (cdy * adz - cdz * ady) + cdx * (ady * bdz - adz * bdy);
    double perm = fabs(adx) * (fabs(bdy * cdz) + fabs(bdz * cdy)) + fabs(bdx) * (fabs(cdy * adz) + fabs(cdz * ady)) +
                  fabs(cdx) * (fabs(ady * bdz) + fabs(adz * bdy));
    /* Shewchuk's bound for this formula is 7 u perm (u = DBL_EPSILON / 2). */
    double bound = 8.0 * DBL_EPSILON * perm;
    if (det > bound) return 1;
    if (det < -bound) return -1;
    /* Every product zero: differences are exact when zero, so the
     * determinant is (flat meshes in a coordinate plane, the common case). */
    if (perm == 0.0) return 0;
    return orient3d_exact(a, b, c, d);
}

int avi_orient2d(const double a[3], const double b[3], const double c[3], int u, int v)
{
    double t1 = (b[u] - a[u]) * (c[v] - a[v]), t2 = (b[v] - a[v]) * (c[u] - a[u]);
    double det = t1 - t2, bound = 4.0 * DBL_EPSILON * (fabs(t1) + fabs(t2));
    if (det > bound) return 1;
    if (det < -bound) return -1;
    if (t1 == 0.0 && t2 == 0.0) return 0;
    double h[16];
    int n = minor2(exact_diff(b[u], a[u]), exact_diff(c[v], a[v]), exact_diff(b[v], a[v]), exact_diff(c[u], a[u]), h);
    return sign_of(h, n);
}
