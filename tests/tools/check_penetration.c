/* check_penetration: an independent interpenetration check of an avi run file.
 *
 *   check_penetration OUT.h5 [--min-distance] [--radius R] [--bodies a,b]
 *
 * It reads /particles/<body>/position/value and /connectivity/<body>_triangles
 * with the HDF5 C API and tests the surface geometry with its own exact
 * predicates, using neither libavi nor its contact code, so that it can judge
 * them. The rules (what counts as penetration, what as contact) are in
 * tests/tools/README.md. Exit status: 0 no penetration, 1 penetration,
 * 2 bad usage or an unreadable file. */
#include <errno.h>
#include <float.h>
#include <hdf5.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_REPORTED 20

static const char *prog = "check_penetration";

static int fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: ", prog);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return -1;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fail("out of memory");
        exit(2);
    }
    return p;
}

static void *xrealloc(void *p, size_t n, size_t size)
{
    if (n && size > SIZE_MAX / n) p = NULL;
    else p = realloc(p, (n ? n : 1) * size);
    if (!p) {
        fail("out of memory");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------ exact signs */

/* Signs that decide intersections are computed exactly. A float evaluation
 * with an error bound answers almost always; otherwise the expression is
 * evaluated as a floating-point expansion: a sum of non-overlapping doubles
 * in order of increasing magnitude, whose sign is that of its last
 * component. Zero components are dropped, so the empty expansion is zero.
 * This needs round-to-nearest doubles without contraction (the default in
 * ISO C mode on x86-64 and aarch64) and ignores underflow, which
 * coordinates in metres never approach. */

static void two_sum(double a, double b, double *s, double *e)
{
    double x = a + b, bv = x - a, av = x - bv;
    *s = x;
    *e = (a - av) + (b - bv);
}

static void two_prod(double a, double b, double *p, double *e)
{
    double x = a * b;
    *p = x;
    *e = fma(a, b, -x); /* the rounding error of a * b, exactly */
}

/* h = e + b; h may be e (h[k] is written only after e[k] was read). */
static int grow(const double *e, int n, double b, double *h)
{
    int k = 0;
    double q = b;
    for (int i = 0; i < n; i++) {
        double s, t;
        two_sum(q, e[i], &s, &t);
        if (t != 0) h[k++] = t;
        q = s;
    }
    if (q != 0) h[k++] = q;
    return k;
}

/* h += f, in place; h must have room for n + nf components. */
static int add_to(double *h, int n, const double *f, int nf)
{
    for (int j = 0; j < nf; j++) n = grow(h, n, f[j], h);
    return n;
}

/* h = e * b, at most 2 n components. */
static int scale(const double *e, int n, double b, double *h)
{
    if (n == 0 || b == 0) return 0;
    int k = 0;
    double q, t;
    two_prod(e[0], b, &q, &t);
    if (t != 0) h[k++] = t;
    for (int i = 1; i < n; i++) {
        double hi, lo, s, r;
        two_prod(e[i], b, &hi, &lo);
        two_sum(q, lo, &s, &r);
        if (r != 0) h[k++] = r;
        two_sum(hi, s, &q, &r);
        if (r != 0) h[k++] = r;
    }
    if (q != 0) h[k++] = q;
    return k;
}

/* h = e * f with ne <= 16 and nf <= 2: at most 2 ne nf components. */
static int mul(const double *e, int ne, const double *f, int nf, double *h)
{
    double t[32];
    int n = 0;
    for (int j = 0; j < nf; j++) n = add_to(h, n, t, scale(e, ne, f[j], t));
    return n;
}

/* h = a - b exactly, at most 2 components. */
static int diff(double a, double b, double *h)
{
    double s, e;
    two_sum(a, -b, &s, &e);
    int k = 0;
    if (e != 0) h[k++] = e;
    if (s != 0) h[k++] = s;
    return k;
}

static int sign_of(const double *h, int n) { return n == 0 ? 0 : h[n - 1] > 0 ? 1 : -1; }

/* x (p q - r s), each argument an expansion of at most 2 components; the
 * result has at most 64. */
static int cofactor(const double *x, int nx, const double *p, int np, const double *q, int nq, const double *r,
                    int nr, const double *s, int ns, double *out)
{
    double m[16], t[8];
    int nm = mul(p, np, q, nq, m), nt = mul(r, nr, s, ns, t);
    for (int i = 0; i < nt; i++) t[i] = -t[i];
    nm = add_to(m, nm, t, nt);
    return mul(m, nm, x, nx, out);
}

static int orient3d_exact(const double *a, const double *b, const double *c, const double *d)
{
    double A[3][2], B[3][2], C[3][2], det[192], t[64];
    int na[3], nb[3], nc[3];
    for (int i = 0; i < 3; i++) {
        na[i] = diff(a[i], d[i], A[i]);
        nb[i] = diff(b[i], d[i], B[i]);
        nc[i] = diff(c[i], d[i], C[i]);
    }
    int n = cofactor(A[0], na[0], B[1], nb[1], C[2], nc[2], B[2], nb[2], C[1], nc[1], det);
    n = add_to(det, n, t, cofactor(B[0], nb[0], C[1], nc[1], A[2], na[2], C[2], nc[2], A[1], na[1], t));
    n = add_to(det, n, t, cofactor(C[0], nc[0], A[1], na[1], B[2], nb[2], A[2], na[2], B[1], nb[1], t));
    return sign_of(det, n);
}

/* Sign of det[a - d; b - d; c - d]: which side of the plane abc d lies on.
 * The bound is more than twice the classical bound for this formula. */
static int orient3d(const double *a, const double *b, const double *c, const double *d)
{
    double adx = a[0] - d[0], ady = a[1] - d[1], adz = a[2] - d[2];
    double bdx = b[0] - d[0], bdy = b[1] - d[1], bdz = b[2] - d[2];
    double cdx = c[0] - d[0], cdy = c[1] - d[1], cdz = c[2] - d[2];
    double det = adx * (bdy * cdz - bdz * cdy) + bdx * (cdy * adz - cdz * ady) + cdx * (ady * bdz - adz * bdy);
    double perm = fabs(adx) * (fabs(bdy * cdz) + fabs(bdz * cdy)) + fabs(bdx) * (fabs(cdy * adz) + fabs(cdz * ady)) +
                  fabs(cdx) * (fabs(ady * bdz) + fabs(adz * bdy));
    double bound = 8.0 * DBL_EPSILON * perm;
    if (det > bound) return 1;
    if (det < -bound) return -1;
    return orient3d_exact(a, b, c, d);
}

/* Sign of the 2D cross product (b - a) x (d - c) in the coordinates u, v. */
static int cross2(const double *a, const double *b, const double *c, const double *d, int u, int v)
{
    double t1 = (b[u] - a[u]) * (d[v] - c[v]), t2 = (b[v] - a[v]) * (d[u] - c[u]);
    double det = t1 - t2, bound = 4.0 * DBL_EPSILON * (fabs(t1) + fabs(t2));
    if (det > bound) return 1;
    if (det < -bound) return -1;
    double p[2], q[2], r[2], s[2], m[16], t[8];
    int np = diff(b[u], a[u], p), nq = diff(d[v], c[v], q), nr = diff(b[v], a[v], r), ns = diff(d[u], c[u], s);
    int nm = mul(p, np, q, nq, m), nt = mul(r, nr, s, ns, t);
    for (int i = 0; i < nt; i++) t[i] = -t[i];
    return sign_of(m, add_to(m, nm, t, nt));
}

/* ------------------------------------------------- edge-triangle contact */

enum { APART = 0, CROSSES = 1, OVERLAPS = 2 };

/* Whether the closed segment pq, lying in the plane of triangle abc, meets
 * the triangle's open interior; that set is then a segment of positive
 * length. Separating-axis test in a coordinate plane onto which the
 * triangle projects with nonzero area: such a projection maps the plane one
 * to one, so the answer is that of the plane itself. The axes are the
 * normals of the triangle's edges (both ends of the triangle's extent) and
 * of pq; touching along an axis counts as separated. */
static int coplanar_overlap(const double *p, const double *q, const double *a, const double *b, const double *c)
{
    if (p[0] == q[0] && p[1] == q[1] && p[2] == q[2]) return 0;
    double e1[3], e2[3], nrm[3];
    for (int i = 0; i < 3; i++) {
        e1[i] = b[i] - a[i];
        e2[i] = c[i] - a[i];
    }
    nrm[0] = fabs(e1[1] * e2[2] - e1[2] * e2[1]);
    nrm[1] = fabs(e1[2] * e2[0] - e1[0] * e2[2]);
    nrm[2] = fabs(e1[0] * e2[1] - e1[1] * e2[0]);
    int order[3] = {0, 1, 2};
    for (int i = 0; i < 2; i++) /* largest normal component first */
        for (int j = i + 1; j < 3; j++)
            if (nrm[order[j]] > nrm[order[i]]) {
                int s = order[i];
                order[i] = order[j];
                order[j] = s;
            }
    int u = 0, v = 0, area = 0;
    for (int k = 0; k < 3 && area == 0; k++) {
        u = (order[k] + 1) % 3;
        v = (order[k] + 2) % 3;
        area = cross2(a, b, a, c, u, v);
    }
    if (area == 0) return 0; /* a degenerate triangle has no interior */
    const double *t[3] = {a, area > 0 ? b : c, area > 0 ? c : b}; /* counterclockwise in (u, v) */
    for (int i = 0; i < 3; i++) {
        const double *v0 = t[i], *v1 = t[(i + 1) % 3], *o = t[(i + 2) % 3];
        if (cross2(v0, v1, v0, p, u, v) <= 0 && cross2(v0, v1, v0, q, u, v) <= 0) return 0;
        if (cross2(v0, v1, o, p, u, v) >= 0 && cross2(v0, v1, o, q, u, v) >= 0) return 0;
    }
    int s0 = cross2(p, q, p, t[0], u, v), s1 = cross2(p, q, p, t[1], u, v), s2 = cross2(p, q, p, t[2], u, v);
    if ((s0 >= 0 && s1 >= 0 && s2 >= 0) || (s0 <= 0 && s1 <= 0 && s2 <= 0)) return 0;
    return 1;
}

/* Segment pq against triangle abc: CROSSES when pq passes from one side of
 * the plane to the other through the triangle's open interior, OVERLAPS when
 * pq lies in the plane and runs through the open interior, APART otherwise
 * (including touching: an end point on the triangle, or a crossing through
 * its boundary). */
static int edge_triangle(const double *p, const double *q, const double *a, const double *b, const double *c)
{
    int sp = orient3d(a, b, c, p), sq = orient3d(a, b, c, q);
    if (sp == 0 && sq == 0) return coplanar_overlap(p, q, a, b, c) ? OVERLAPS : APART;
    if (sp == 0 || sq == 0 || sp == sq) return APART;
    int s1 = orient3d(p, q, a, b), s2 = orient3d(p, q, b, c), s3 = orient3d(p, q, c, a);
    return s1 != 0 && s1 == s2 && s2 == s3 ? CROSSES : APART;
}

/* ------------------------------------------------------------- distances */

static double dot3(const double *a, const double *b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static void sub3(const double *a, const double *b, double *d)
{
    for (int i = 0; i < 3; i++) d[i] = a[i] - b[i];
}

/* Squared distance from p to the segment ab. */
static double point_segment2(const double *p, const double *a, const double *b)
{
    double ab[3], ap[3], d[3];
    sub3(b, a, ab);
    sub3(p, a, ap);
    double len2 = dot3(ab, ab), s = len2 > 0 ? dot3(ap, ab) / len2 : 0.0;
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    for (int i = 0; i < 3; i++) d[i] = ap[i] - s * ab[i];
    return dot3(d, d);
}

/* fmin's result (a NaN argument loses), inline: libm's call was 40 % of a
 * brute-force check's time. */
static inline double min2(double a, double b) { return b < a || a != a ? b : a; }

/* Squared distance from p to the triangle abc: to the plane when p projects
 * inside, else to the nearest edge. */
static double point_triangle2(const double *p, const double *a, const double *b, const double *c)
{
    double ab[3], ac[3], ap[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    sub3(p, a, ap);
    double d00 = dot3(ab, ab), d01 = dot3(ab, ac), d11 = dot3(ac, ac), d20 = dot3(ap, ab), d21 = dot3(ap, ac);
    double den = d00 * d11 - d01 * d01;
    if (den > 0) {
        double v = (d11 * d20 - d01 * d21) / den, w = (d00 * d21 - d01 * d20) / den;
        if (v >= 0 && w >= 0 && v + w <= 1) {
            double d[3];
            for (int i = 0; i < 3; i++) d[i] = ap[i] - v * ab[i] - w * ac[i];
            return dot3(d, d);
        }
    }
    double d = point_segment2(p, a, b), e = point_segment2(p, b, c), f = point_segment2(p, c, a);
    return min2(d, min2(e, f));
}

/* Squared distance between the segments p1q1 and p2q2. The minimiser of the
 * convex quadratic lies inside the parameter square or on its boundary,
 * where one parameter is 0 or 1: a point-segment distance. Every candidate
 * is the distance of actual points, so taking the minimum is safe even for
 * nearly parallel segments. */
static double segment_segment2(const double *p1, const double *q1, const double *p2, const double *q2)
{
    double d1[3], d2[3], r[3];
    sub3(q1, p1, d1);
    sub3(q2, p2, d2);
    sub3(p1, p2, r);
    double a = dot3(d1, d1), e = dot3(d2, d2), b = dot3(d1, d2), c = dot3(d1, r), f = dot3(d2, r);
    double best = min2(min2(point_segment2(p1, p2, q2), point_segment2(q1, p2, q2)),
                       min2(point_segment2(p2, p1, q1), point_segment2(q2, p1, q1)));
    double den = a * e - b * b;
    if (den > 0) {
        double s = (b * f - c * e) / den, t = (a * f - b * c) / den;
        if (s >= 0 && s <= 1 && t >= 0 && t <= 1) {
            double d[3];
            for (int i = 0; i < 3; i++) d[i] = r[i] + s * d1[i] - t * d2[i];
            best = min2(best, dot3(d, d));
        }
    }
    return best;
}

/* ---------------------------------------------------------- uniform grid */

typedef struct {
    double lo[3], hi[3];
} box3;

/* Items (boxes widened by pad) binned into cells of size h; cell c holds
 * item[start[c] .. start[c + 1]). Rebuilt every frame, memory reused. */
typedef struct {
    double org[3], h, pad;
    int dim[3];
    size_t *start, *item, cell_cap, item_cap, lo_cap;
    int (*lo)[3]; /* each item's first cell */
} grid;

static void cell_of(const grid *g, const double *pt, int *c)
{
    for (int i = 0; i < 3; i++) {
        double f = floor((pt[i] - g->org[i]) / g->h);
        c[i] = !(f > 0) ? 0 : f >= g->dim[i] - 1 ? g->dim[i] - 1 : (int)f;
    }
}

static size_t cell_index(const grid *g, int x, int y, int z)
{
    return ((size_t)z * (size_t)g->dim[1] + (size_t)y) * (size_t)g->dim[0] + (size_t)x;
}

/* The cell size is the mean widened box size, grown until there are at
 * most about four cells per item. */
static void grid_build(grid *g, const box3 *bx, size_t m, double pad)
{
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, sum = 0;
    for (size_t k = 0; k < m; k++) {
        double ext = 0;
        for (int i = 0; i < 3; i++) {
            lo[i] = fmin(lo[i], bx[k].lo[i] - pad);
            hi[i] = fmax(hi[i], bx[k].hi[i] + pad);
            ext = fmax(ext, bx[k].hi[i] - bx[k].lo[i] + 2 * pad);
        }
        sum += ext;
    }
    g->pad = pad;
    double size[3], diag = 0;
    for (int i = 0; i < 3; i++) {
        g->org[i] = m ? lo[i] : 0;
        size[i] = m ? hi[i] - lo[i] : 0;
        diag += size[i] * size[i];
    }
    diag = sqrt(diag);
    double h = m ? sum / (double)m : 1;
    if (!(h > 0)) h = diag > 0 ? diag : 1;
    double cap = 4.0 * (double)m + 4096, cells;
    for (;;) {
        cells = 1;
        for (int i = 0; i < 3; i++) cells *= floor(size[i] / h) + 1;
        if (cells <= cap) break;
        h *= 1.01 * cbrt(cells / cap);
    }
    g->h = h;
    for (int i = 0; i < 3; i++) g->dim[i] = (int)(floor(size[i] / h) + 1);
    size_t nc = (size_t)cells;
    if (nc + 1 > g->cell_cap) {
        g->cell_cap = nc + 1;
        g->start = xrealloc(g->start, g->cell_cap, sizeof *g->start);
    }
    memset(g->start, 0, (nc + 1) * sizeof *g->start);
    if (m > g->lo_cap) {
        g->lo_cap = m;
        g->lo = xrealloc(g->lo, m, sizeof *g->lo);
    }
    int c0[3], c1[3];
    for (int pass = 0; pass < 2; pass++) {
        for (size_t k = 0; k < m; k++) {
            double l[3], u[3];
            for (int i = 0; i < 3; i++) {
                l[i] = bx[k].lo[i] - pad;
                u[i] = bx[k].hi[i] + pad;
            }
            cell_of(g, l, c0);
            cell_of(g, u, c1);
            memcpy(g->lo[k], c0, sizeof c0);
            for (int z = c0[2]; z <= c1[2]; z++)
                for (int y = c0[1]; y <= c1[1]; y++)
                    for (int x = c0[0]; x <= c1[0]; x++) {
                        size_t c = cell_index(g, x, y, z);
                        if (pass == 0) g->start[c + 1]++;
                        else g->item[g->start[c]++] = k;
                    }
        }
        if (pass == 0) { /* counts to offsets, then room for the items */
            for (size_t c = 0; c < nc; c++) g->start[c + 1] += g->start[c];
            if (g->start[nc] > g->item_cap) {
                g->item_cap = g->start[nc];
                g->item = xrealloc(g->item, g->item_cap, sizeof *g->item);
            }
        }
    }
    /* The fill pass advanced each start to the next cell's start. */
    for (size_t c = nc; c > 0; c--) g->start[c] = g->start[c - 1];
    g->start[0] = 0;
}

typedef struct {
    size_t *id, n, cap;
} list;

/* Items whose box widened by pad (at most the grid's) meets q, each once.
 * A pair is taken only in the cell holding the lower corner of the two
 * (widened) boxes' overlap; cell_of is monotone, so that cell is, per axis,
 * the larger of the query's and the item's first cells. */
static void grid_query(const grid *g, const box3 *bx, const box3 *q, double pad, list *out)
{
    int c0[3], c1[3];
    out->n = 0;
    cell_of(g, q->lo, c0);
    cell_of(g, q->hi, c1);
    for (int z = c0[2]; z <= c1[2]; z++)
        for (int y = c0[1]; y <= c1[1]; y++)
            for (int x = c0[0]; x <= c1[0]; x++) {
                size_t c = cell_index(g, x, y, z);
                for (size_t k = g->start[c]; k < g->start[c + 1]; k++) {
                    size_t id = g->item[k];
                    const int *lo = g->lo[id];
                    if ((x != c0[0] && lo[0] != x) || (y != c0[1] && lo[1] != y) || (z != c0[2] && lo[2] != z))
                        continue;
                    const box3 *b = &bx[id];
                    if (q->lo[0] > b->hi[0] + pad || b->lo[0] - pad > q->hi[0] || q->lo[1] > b->hi[1] + pad ||
                        b->lo[1] - pad > q->hi[1] || q->lo[2] > b->hi[2] + pad || b->lo[2] - pad > q->hi[2])
                        continue;
                    if (out->n == out->cap) {
                        out->cap = out->cap ? 2 * out->cap : 64;
                        out->id = xrealloc(out->id, out->cap, sizeof *out->id);
                    }
                    out->id[out->n++] = id;
                }
            }
}

/* All items 0 .. m - 1: the unculled reference. */
static void every(list *out, size_t m)
{
    if (m > out->cap) {
        out->cap = m;
        out->id = xrealloc(out->id, out->cap, sizeof *out->id);
    }
    for (size_t i = 0; i < m; i++) out->id[i] = i;
    out->n = m;
}

/* ------------------------------------------------------------ the run file */

typedef struct {
    char *name;
    size_t n, first; /* vertices and their offset in the global arrays */
    size_t tri0;     /* offset of its triangles in the global array */
    hid_t value;     /* /particles/<name>/position/value */
    size_t frames;
} body;

typedef struct {
    const char *path;
    hid_t file;
    body *b;
    size_t nb;
    size_t nv, nt, ne, ns;         /* vertices, triangles, edges, surface vertices */
    double (*x)[3];                /* positions of all surface bodies, this frame */
    size_t (*tri)[3], (*edge)[2];  /* global vertex indices */
    int *tri_body, *edge_body;     /* owning body */
    size_t *svert;                 /* surface vertices (global) */
    int *svert_body;
    double *time;
    size_t frames;
} run;

static int cmp_edge(const void *pa, const void *pb)
{
    const size_t *a = pa, *b = pb;
    return a[0] != b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] != b[1] ? (a[1] < b[1] ? -1 : 1) : 0;
}

static int cmp_size(const void *pa, const void *pb)
{
    size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
    return a < b ? -1 : a > b;
}

/* A dataset's current extent; -1 unless its rank is `rank`. */
static int extent(hid_t d, int rank, hsize_t *dims)
{
    hid_t s = H5Dget_space(d);
    int r = s < 0 ? -1 : H5Sget_simple_extent_ndims(s);
    if (r == rank) H5Sget_simple_extent_dims(s, dims, NULL);
    if (s >= 0) H5Sclose(s);
    return r == rank ? 0 : -1;
}

static int exists(hid_t file, const char *path)
{
    /* H5Lexists needs every component but the last to exist. */
    char buf[1024];
    for (const char *s = strchr(path + 1, '/');; s = strchr(s + 1, '/')) {
        size_t len = s ? (size_t)(s - path) : strlen(path);
        if (len >= sizeof buf) return 0;
        memcpy(buf, path, len);
        buf[len] = 0;
        if (H5Lexists(file, buf, H5P_DEFAULT) <= 0) return 0;
        if (!s) return 1;
    }
}

/* Adds one body's surface: triangles, their unique edges, their vertices. */
static int load_surface(run *r, int bi, const int32_t *t, size_t m)
{
    body *B = &r->b[bi];
    for (size_t i = 0; i < 3 * m; i++)
        if (t[i] < 0 || (size_t)t[i] >= B->n)
            return fail("%s: /connectivity/%s_triangles: index %ld out of range (%zu vertices)", r->path, B->name,
                        (long)t[i], B->n);
    B->tri0 = r->nt;
    r->tri = xrealloc(r->tri, r->nt + m, sizeof *r->tri);
    r->tri_body = xrealloc(r->tri_body, r->nt + m, sizeof *r->tri_body);
    size_t(*e)[2] = xcalloc(3 * m, sizeof *e);
    size_t *v = xcalloc(3 * m, sizeof *v);
    for (size_t i = 0; i < m; i++) {
        for (int k = 0; k < 3; k++) {
            size_t a = B->first + (size_t)t[3 * i + k], b = B->first + (size_t)t[3 * i + (k + 1) % 3];
            r->tri[r->nt + i][k] = a;
            e[3 * i + k][0] = a < b ? a : b;
            e[3 * i + k][1] = a < b ? b : a;
            v[3 * i + k] = a;
        }
        r->tri_body[r->nt + i] = bi;
    }
    r->nt += m;
    qsort(e, 3 * m, sizeof *e, cmp_edge);
    qsort(v, 3 * m, sizeof *v, cmp_size);
    r->edge = xrealloc(r->edge, r->ne + 3 * m, sizeof *r->edge);
    r->edge_body = xrealloc(r->edge_body, r->ne + 3 * m, sizeof *r->edge_body);
    r->svert = xrealloc(r->svert, r->ns + 3 * m, sizeof *r->svert);
    r->svert_body = xrealloc(r->svert_body, r->ns + 3 * m, sizeof *r->svert_body);
    for (size_t i = 0; i < 3 * m; i++) {
        if (i == 0 || cmp_edge(e[i], e[i - 1]) != 0) {
            r->edge[r->ne][0] = e[i][0];
            r->edge[r->ne][1] = e[i][1];
            r->edge_body[r->ne++] = bi;
        }
        if (i == 0 || v[i] != v[i - 1]) {
            r->svert[r->ns] = v[i];
            r->svert_body[r->ns++] = bi;
        }
    }
    free(e);
    free(v);
    return 0;
}

static int selected(const char *name, char **want, size_t nwant)
{
    if (nwant == 0) return 1;
    for (size_t i = 0; i < nwant; i++)
        if (strcmp(want[i], name) == 0) return 1;
    return 0;
}

/* Opens the file, lists the bodies and reads every surface. */
static int load(run *r, char **want, size_t nwant)
{
    FILE *probe = fopen(r->path, "rb");
    if (!probe) return fail("%s: %s", r->path, strerror(errno));
    fclose(probe);
    /* SWMR reading opens files a writer holds or left open; older formats
     * may refuse it, so fall back to a plain read-only open. */
    r->file = H5Fopen(r->path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, H5P_DEFAULT);
    if (r->file < 0) r->file = H5Fopen(r->path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (r->file < 0) return fail("%s: cannot open as an HDF5 file", r->path);
    if (!exists(r->file, "/particles")) return fail("%s: no /particles group", r->path);
    hid_t pg = H5Gopen2(r->file, "/particles", H5P_DEFAULT);
    H5G_info_t gi;
    if (pg < 0 || H5Gget_info(pg, &gi) < 0) {
        if (pg >= 0) H5Gclose(pg);
        return fail("%s: cannot read /particles", r->path);
    }
    r->b = xcalloc(gi.nlinks, sizeof *r->b);
    int rc = 0;
    for (hsize_t i = 0; i < gi.nlinks && rc == 0; i++) {
        ssize_t len = H5Lget_name_by_idx(pg, ".", H5_INDEX_NAME, H5_ITER_INC, i, NULL, 0, H5P_DEFAULT);
        if (len < 0) {
            rc = fail("%s: cannot list /particles", r->path);
            break;
        }
        char *name = xcalloc((size_t)len + 1, 1);
        H5Lget_name_by_idx(pg, ".", H5_INDEX_NAME, H5_ITER_INC, i, name, (size_t)len + 1, H5P_DEFAULT);
        if (!selected(name, want, nwant)) {
            free(name);
            continue;
        }
        body *B = &r->b[r->nb++];
        B->name = name;
        B->value = -1;
        size_t plen = strlen(name) + 64;
        char *path = xcalloc(plen, 1);
        snprintf(path, plen, "/connectivity/%s_triangles", name);
        if (!exists(r->file, path)) {
            if (nwant) fprintf(stderr, "%s: note: body '%s' has no surface triangles\n", prog, name);
            free(path);
            continue; /* particle bodies have no surface */
        }
        hsize_t cd[2], pd[3], td[1];
        hid_t c = H5Dopen2(r->file, path, H5P_DEFAULT);
        if (c < 0 || extent(c, 2, cd) < 0 || (cd[0] > 0 && cd[1] != 3)) {
            rc = fail("%s: %s is not an [M][3] dataset", r->path, path);
        } else if (cd[0] > 0) {
            snprintf(path, plen, "/particles/%s/position/value", name);
            B->value = exists(r->file, path) ? H5Dopen2(r->file, path, H5P_DEFAULT) : -1;
            if (B->value < 0 || extent(B->value, 3, pd) < 0 || pd[2] != 3) {
                rc = fail("%s: %s is missing or not an [F][n][3] dataset", r->path, path);
            } else {
                B->n = (size_t)pd[1];
                B->frames = (size_t)pd[0];
                B->first = r->nv;
                r->nv += B->n;
                int32_t *t = xcalloc((size_t)cd[0] * 3, sizeof *t);
                if (H5Dread(c, H5T_NATIVE_INT32, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0)
                    rc = fail("%s: cannot read /connectivity/%s_triangles", r->path, name);
                else rc = load_surface(r, (int)(B - r->b), t, (size_t)cd[0]);
                free(t);
            }
            snprintf(path, plen, "/particles/%s/position/time", name);
            hid_t td_id = rc == 0 && exists(r->file, path) ? H5Dopen2(r->file, path, H5P_DEFAULT) : -1;
            if (rc == 0 && (td_id < 0 || extent(td_id, 1, td) < 0)) {
                rc = fail("%s: %s is missing or not one-dimensional", r->path, path);
            } else if (rc == 0) {
                if ((size_t)td[0] < B->frames) B->frames = (size_t)td[0];
                if (!r->time) { /* frames are aligned by index: the first body's times serve all */
                    r->time = xcalloc((size_t)td[0], sizeof *r->time);
                    if (H5Dread(td_id, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, r->time) < 0)
                        rc = fail("%s: cannot read %s", r->path, path);
                }
            }
            if (td_id >= 0) H5Dclose(td_id);
        }
        if (c >= 0) H5Dclose(c);
        free(path);
    }
    H5Gclose(pg);
    for (size_t i = 0; i < nwant && rc == 0; i++) {
        int found = 0;
        for (size_t k = 0; k < r->nb; k++) found |= strcmp(r->b[k].name, want[i]) == 0;
        if (!found) rc = fail("%s: no body named '%s' under /particles", r->path, want[i]);
    }
    if (rc) return rc;
    /* A live file may hold one more frame for some bodies than for others. */
    int any = 0;
    for (size_t k = 0; k < r->nb; k++)
        if (r->b[k].value >= 0) {
            if (any && r->b[k].frames != r->frames)
                fprintf(stderr, "%s: note: bodies have different frame counts; checking the first %zu\n", prog,
                        r->b[k].frames < r->frames ? r->b[k].frames : r->frames);
            if (!any || r->b[k].frames < r->frames) r->frames = r->b[k].frames;
            any = 1;
        }
    if (!any) fprintf(stderr, "%s: note: %s: no body has surface triangles; nothing to check\n", prog, r->path);
    r->x = xcalloc(r->nv, sizeof *r->x);
    return 0;
}

static void free_run(run *r)
{
    for (size_t i = 0; i < r->nb; i++) {
        if (r->b[i].value >= 0) H5Dclose(r->b[i].value);
        free(r->b[i].name);
    }
    if (r->file >= 0) H5Fclose(r->file);
    free(r->b);
    free(r->x);
    free(r->tri);
    free(r->edge);
    free(r->tri_body);
    free(r->edge_body);
    free(r->svert);
    free(r->svert_body);
    free(r->time);
}

static int read_frame(run *r, size_t k)
{
    for (size_t i = 0; i < r->nb; i++) {
        body *B = &r->b[i];
        if (B->value < 0 || B->n == 0) continue;
        hsize_t start[3] = {k, 0, 0}, count[3] = {1, B->n, 3};
        hid_t fs = H5Dget_space(B->value), ms = H5Screate_simple(3, count, NULL);
        int ok = fs >= 0 && ms >= 0 && H5Sselect_hyperslab(fs, H5S_SELECT_SET, start, NULL, count, NULL) >= 0 &&
                 H5Dread(B->value, H5T_NATIVE_DOUBLE, ms, fs, H5P_DEFAULT, r->x[B->first]) >= 0;
        if (ms >= 0) H5Sclose(ms);
        if (fs >= 0) H5Sclose(fs);
        if (!ok) return fail("%s: cannot read frame %zu of /particles/%s/position/value", r->path, k, B->name);
    }
    return 0;
}

/* ------------------------------------------------------------------ main */

static void usage(FILE *f)
{
    fprintf(f,
            "usage: %s OUT.h5 [--min-distance] [--radius R] [--bodies a,b]\n"
            "  Tests every surface edge against every surface triangle (all bodies, each body\n"
            "  against itself too) in every frame. Exit 0: no penetration; 1: penetration;\n"
            "  2: bad usage or unreadable input.\n"
            "  --min-distance  also the minimum vertex-triangle and edge-edge distance between\n"
            "                  primitives sharing no vertex, searched within --radius R\n"
            "                  (default: 0.01 of the first frame's bounding box diagonal)\n"
            "  --bodies a,b    check only these bodies\n"
            "  --no-cull       test all pairs, without the grid (slow; checks the culling)\n",
            prog);
}

/* The closest pair seen; a penetration counts as distance 0. */
typedef struct {
    double d2;
    size_t frame, a, b; /* global primitive indices */
    int kind;           /* 0 none, 1 vertex-triangle (svert, tri), 2 edge-edge, 3 edge crossing triangle */
} nearest;

/* The first frame's closest pair; ties within it go to the lowest
 * (kind, a, b), whatever order the pairs come in. */
static void consider(nearest *best, double d2, size_t frame, int kind, size_t a, size_t b)
{
    if (d2 < best->d2 || (d2 == best->d2 && frame == best->frame &&
                          (kind < best->kind || (kind == best->kind && (a < best->a || (a == best->a && b < best->b))))))
        *best = (nearest){.d2 = d2, .frame = frame, .a = a, .b = b, .kind = kind};
}

static void box_of(const double (*x)[3], const size_t *v, int n, box3 *b)
{
    for (int i = 0; i < 3; i++) {
        b->lo[i] = b->hi[i] = x[v[0]][i];
        for (int k = 1; k < n; k++) {
            b->lo[i] = fmin(b->lo[i], x[v[k]][i]);
            b->hi[i] = fmax(b->hi[i], x[v[k]][i]);
        }
    }
}

static int shares_vertex(const size_t *a, int na, const size_t *b, int nb)
{
    for (int i = 0; i < na; i++)
        for (int k = 0; k < nb; k++)
            if (a[i] == b[k]) return 1;
    return 0;
}

static void print_edge(const run *r, size_t e)
{
    const body *B = &r->b[r->edge_body[e]];
    printf("%s edge %zu-%zu", B->name, r->edge[e][0] - B->first, r->edge[e][1] - B->first);
}

static void print_triangle(const run *r, size_t t)
{
    const body *B = &r->b[r->tri_body[t]];
    printf("%s triangle %zu", B->name, t - B->tri0);
}

/* Where segment pq meets the plane of abc, for the report only. */
static void crossing_point(const double *p, const double *q, const double *a, const double *b, const double *c,
                           double *out)
{
    double n[3], ab[3], ac[3], ap[3], pq[3];
    sub3(b, a, ab);
    sub3(c, a, ac);
    sub3(p, a, ap);
    sub3(q, p, pq);
    n[0] = ab[1] * ac[2] - ab[2] * ac[1];
    n[1] = ab[2] * ac[0] - ab[0] * ac[2];
    n[2] = ab[0] * ac[1] - ab[1] * ac[0];
    double den = dot3(n, pq), s = den != 0 ? -dot3(n, ap) / den : 0.5;
    for (int i = 0; i < 3; i++) out[i] = p[i] + s * pq[i];
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    int min_distance = 0, cull = 1;
    double radius = 0;
    char *bodies_arg = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--min-distance") == 0) {
            min_distance = 1;
        } else if (strcmp(a, "--no-cull") == 0) {
            cull = 0;
        } else if (strcmp(a, "--radius") == 0 || strcmp(a, "--bodies") == 0) {
            if (i + 1 >= argc) {
                fail("%s needs a value", a);
                return 2;
            }
            const char *v = argv[++i];
            if (strcmp(a, "--bodies") == 0) {
                bodies_arg = argv[i];
            } else {
                char *end;
                errno = 0;
                radius = strtod(v, &end);
                if (end == v || *end || errno || !(radius > 0) || !isfinite(radius)) {
                    fail("--radius: '%s' is not a positive number", v);
                    return 2;
                }
            }
        } else if (a[0] == '-' && a[1] != 0) {
            fail("unknown option '%s'", a);
            usage(stderr);
            return 2;
        } else if (path) {
            fail("one file at a time ('%s', '%s')", path, a);
            return 2;
        } else {
            path = a;
        }
    }
    if (!path) {
        usage(stderr);
        return 2;
    }
    char **want = NULL;
    size_t nwant = 0;
    if (bodies_arg) {
        want = xcalloc(strlen(bodies_arg) + 1, sizeof *want);
        for (char *s = strtok(bodies_arg, ","); s; s = strtok(NULL, ","))
            if (nwant == 0 || !selected(s, want, nwant)) want[nwant++] = s;
        if (nwant == 0) {
            fail("--bodies: no body names given");
            free(want);
            return 2;
        }
    }

    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* failures are reported here, naming the file */
    run r;
    memset(&r, 0, sizeof r);
    r.path = path;
    r.file = -1;
    if (load(&r, want, nwant)) {
        free_run(&r);
        free(want);
        return 2;
    }

    const double(*x)[3] = (const double(*)[3])r.x;
    box3 *tbox = xcalloc(r.nt, sizeof *tbox), *ebox = xcalloc(r.ne, sizeof *ebox);
    grid tg, eg;
    memset(&tg, 0, sizeof tg);
    memset(&eg, 0, sizeof eg);
    list cand = {0}, hits = {0};
    size_t penetrations = 0, bad_frames = 0;
    int unreadable = 0;
    nearest best = {.d2 = INFINITY};
    for (size_t k = 0; k < r.frames; k++) {
        if (read_frame(&r, k)) {
            unreadable = 1;
            break;
        }
        int finite = 1;
        for (size_t i = 0; i < r.ns && finite; i++)
            finite = isfinite(x[r.svert[i]][0]) && isfinite(x[r.svert[i]][1]) && isfinite(x[r.svert[i]][2]);
        if (!finite) {
            fprintf(stderr, "%s: %s: frame %zu has non-finite positions; not checked\n", prog, path, k);
            bad_frames++;
            continue;
        }
        if (min_distance && !(radius > 0)) {
            box3 all;
            box_of(x, r.svert, 1, &all);
            for (size_t i = 1; i < r.ns; i++) {
                box3 v;
                box_of(x, &r.svert[i], 1, &v);
                for (int c = 0; c < 3; c++) {
                    all.lo[c] = fmin(all.lo[c], v.lo[c]);
                    all.hi[c] = fmax(all.hi[c], v.hi[c]);
                }
            }
            double d[3];
            sub3(all.hi, all.lo, d);
            radius = 0.01 * sqrt(dot3(d, d));
            if (!(radius > 0)) radius = 1.0; /* all vertices at one point */
        }
        for (size_t t = 0; t < r.nt; t++) box_of(x, r.tri[t], 3, &tbox[t]);
        for (size_t e = 0; e < r.ne; e++) box_of(x, r.edge[e], 2, &ebox[e]);
        if (cull) grid_build(&tg, tbox, r.nt, min_distance ? radius : 0);

        /* Every edge against every triangle it shares no vertex with; an
         * edge's hits are sorted so that the report does not depend on the
         * culling. */
        for (size_t e = 0; e < r.ne; e++) {
            const size_t *ev = r.edge[e];
            if (cull) grid_query(&tg, tbox, &ebox[e], 0, &cand);
            else every(&cand, r.nt);
            hits.n = 0;
            for (size_t j = 0; j < cand.n; j++) {
                const size_t *tv = r.tri[cand.id[j]];
                if (shares_vertex(ev, 2, tv, 3)) continue;
                int how = edge_triangle(x[ev[0]], x[ev[1]], x[tv[0]], x[tv[1]], x[tv[2]]);
                if (how == APART) continue;
                if (hits.n == hits.cap) {
                    hits.cap = hits.cap ? 2 * hits.cap : 16;
                    hits.id = xrealloc(hits.id, hits.cap, sizeof *hits.id);
                }
                hits.id[hits.n++] = 4 * cand.id[j] + (size_t)how;
            }
            if (hits.n > 1) qsort(hits.id, hits.n, sizeof *hits.id, cmp_size);
            for (size_t j = 0; j < hits.n; j++) {
                size_t t = hits.id[j] / 4;
                const size_t *tv = r.tri[t];
                consider(&best, 0, k, 3, e, t);
                if (penetrations++ >= MAX_REPORTED) continue;
                printf("frame %zu time %.9g: ", k, r.time[k]);
                print_edge(&r, e);
                if (hits.id[j] % 4 == CROSSES) {
                    double at[3];
                    crossing_point(x[ev[0]], x[ev[1]], x[tv[0]], x[tv[1]], x[tv[2]], at);
                    printf(" crosses ");
                    print_triangle(&r, t);
                    printf(" at (%.9g, %.9g, %.9g)\n", at[0], at[1], at[2]);
                } else {
                    printf(" overlaps ");
                    print_triangle(&r, t);
                    printf(" in its plane\n");
                }
            }
        }
        if (!min_distance) continue;

        /* Vertex-triangle and edge-edge pairs within the search radius. */
        for (size_t i = 0; i < r.ns; i++) {
            size_t v = r.svert[i];
            box3 q;
            box_of(x, &v, 1, &q);
            if (cull) grid_query(&tg, tbox, &q, radius, &cand);
            else every(&cand, r.nt);
            for (size_t j = 0; j < cand.n; j++) {
                const size_t *tv = r.tri[cand.id[j]];
                if (shares_vertex(&v, 1, tv, 3)) continue;
                double d2 = point_triangle2(x[v], x[tv[0]], x[tv[1]], x[tv[2]]);
                consider(&best, d2, k, 1, i, cand.id[j]);
            }
        }
        if (cull) grid_build(&eg, ebox, r.ne, radius);
        for (size_t e = 0; e < r.ne; e++) {
            if (cull) grid_query(&eg, ebox, &ebox[e], radius, &cand);
            else every(&cand, r.ne);
            for (size_t j = 0; j < cand.n; j++) {
                size_t f = cand.id[j];
                if (f <= e || shares_vertex(r.edge[e], 2, r.edge[f], 2)) continue;
                double d2 = segment_segment2(x[r.edge[e][0]], x[r.edge[e][1]], x[r.edge[f][0]], x[r.edge[f][1]]);
                consider(&best, d2, k, 2, e, f);
            }
        }
    }
    if (!unreadable) {
        printf("frames %zu, edges %zu, triangles %zu, penetrations %zu\n", r.frames, r.ne, r.nt, penetrations);
        if (min_distance) {
            /* Only a pair within the radius is surely the closest one. */
            if (!(radius > 0)) {
                printf("min distance: no frame checked\n");
            } else if (best.kind == 0 || best.d2 > radius * radius) {
                printf("min distance > %.9g (no pair within the search radius)\n", radius);
            } else {
                printf("min distance %.9g at frame %zu (time %.9g): ", sqrt(best.d2), best.frame, r.time[best.frame]);
                if (best.kind == 1) {
                    const body *B = &r.b[r.svert_body[best.a]];
                    printf("%s vertex %zu to ", B->name, r.svert[best.a] - B->first);
                    print_triangle(&r, best.b);
                } else {
                    print_edge(&r, best.a);
                    printf(best.kind == 2 ? " to " : " crosses ");
                    if (best.kind == 2) print_edge(&r, best.b);
                    else print_triangle(&r, best.b);
                }
                printf("\n");
            }
        }
    }
    if (bad_frames) fprintf(stderr, "%s: %s: %zu frames not checked\n", prog, path, bad_frames);

    free_run(&r);
    free(tbox);
    free(ebox);
    free(tg.start);
    free(tg.item);
    free(tg.lo);
    free(eg.start);
    free(eg.item);
    free(eg.lo);
    free(cand.id);
    free(hits.id);
    free(want);
    return unreadable ? 2 : penetrations ? 1 : bad_frames ? 2 : 0;
}
