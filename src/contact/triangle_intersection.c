/* Triangle-triangle intersection with exact signs; see the header. */
#include "contact/triangle_intersection.h"
#include "contact/box_pairs.h"
#include "base/orientation.h"

#include <math.h>
#include <stdlib.h>

/* A coordinate plane (u, v) onto which triangle abc projects with nonzero
 * area, and the sign of that area. Projecting along an axis the plane is
 * not parallel to maps the plane one to one, so the 2D signs of points in
 * the plane are its own (up to the sign returned). 0 for a degenerate
 * triangle. */
static int projection(const double a[3], const double b[3], const double c[3], int *u, int *v)
{
    double e[3], f[3], n[3];
    for (int i = 0; i < 3; i++) {
        e[i] = b[i] - a[i];
        f[i] = c[i] - a[i];
    }
    n[0] = fabs(e[1] * f[2] - e[2] * f[1]);
    n[1] = fabs(e[2] * f[0] - e[0] * f[2]);
    n[2] = fabs(e[0] * f[1] - e[1] * f[0]);
    int order[3] = {0, 1, 2}; /* largest normal component first */
    for (int i = 0; i < 2; i++)
        for (int j = i + 1; j < 3; j++)
            if (n[order[j]] > n[order[i]]) {
                int s = order[i];
                order[i] = order[j];
                order[j] = s;
            }
    for (int k = 0; k < 3; k++) {
        *u = (order[k] + 1) % 3;
        *v = (order[k] + 2) % 3;
        int s = avi_orient2d(a, b, c, *u, *v);
        if (s) return s;
    }
    return 0;
}

/* r on the closed segment pq, given that the three are collinear. */
static int between(const double p[3], const double q[3], const double r[3], int u, int v)
{
    return fmin(p[u], q[u]) <= r[u] && r[u] <= fmax(p[u], q[u]) && fmin(p[v], q[v]) <= r[v] && r[v] <= fmax(p[v], q[v]);
}

/* Closed segments pq and ab meet (2D, coordinates u, v). */
static int segments_meet(const double p[3], const double q[3], const double a[3], const double b[3], int u, int v)
{
    int d1 = avi_orient2d(p, q, a, u, v), d2 = avi_orient2d(p, q, b, u, v);
    int d3 = avi_orient2d(a, b, p, u, v), d4 = avi_orient2d(a, b, q, u, v);
    if (d1 * d2 < 0 && d3 * d4 < 0) return 1;
    return (d1 == 0 && between(p, q, a, u, v)) || (d2 == 0 && between(p, q, b, u, v)) ||
           (d3 == 0 && between(a, b, p, u, v)) || (d4 == 0 && between(a, b, q, u, v));
}

/* Point p in the closed triangle abc whose area has sign `area` (2D). */
static int inside(const double p[3], const double a[3], const double b[3], const double c[3], int area, int u, int v)
{
    return area * avi_orient2d(a, b, p, u, v) >= 0 && area * avi_orient2d(b, c, p, u, v) >= 0 &&
           area * avi_orient2d(c, a, p, u, v) >= 0;
}

/* The segment pq lies in the plane of triangle abc. */
static int coplanar_meets(const double p[3], const double q[3], const double a[3], const double b[3], const double c[3])
{
    int u, v, area = projection(a, b, c, &u, &v);
    if (!area) return 0;
    return inside(p, a, b, c, area, u, v) || inside(q, a, b, c, area, u, v) || segments_meet(p, q, a, b, u, v) ||
           segments_meet(p, q, b, c, u, v) || segments_meet(p, q, c, a, u, v);
}

/* 1 when the closed segment pq meets the closed triangle abc. */
static int segment_meets_triangle(const double p[3], const double q[3], const double a[3], const double b[3],
                                  const double c[3])
{
    int sp = avi_orient3d(a, b, c, p), sq = avi_orient3d(a, b, c, q);
    if (sp * sq > 0) return 0;
    if (sp == 0 && sq == 0) return coplanar_meets(p, q, a, b, c);
    /* The segment reaches the plane at one point; it is in the triangle
     * when the line pq passes each edge on the same side (or through it). */
    int s1 = avi_orient3d(p, q, a, b), s2 = avi_orient3d(p, q, b, c), s3 = avi_orient3d(p, q, c, a);
    return (s1 >= 0 && s2 >= 0 && s3 >= 0) || (s1 <= 0 && s2 <= 0 && s3 <= 0);
}

/* Edge (s[k], s[k+1]) of s meets triangle t. */
static int edge_meets(const double (*x)[3], const uint32_t s[3], int k, const uint32_t t[3])
{
    return segment_meets_triangle(x[s[k]], x[s[(k + 1) % 3]], x[t[0]], x[t[1]], x[t[2]]);
}

static int report(avi_tri_hit *hit, int kind, int first, uint32_t a, uint32_t b)
{
    if (hit) *hit = (avi_tri_hit){kind, first, a, b};
    return 1;
}

/* Triangles sharing the edge (a, b), third vertices c (of s) and d (of t):
 * they overlap when coplanar with c and d on the same side of the edge. */
static int folded(const double (*x)[3], uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    if (avi_orient3d(x[a], x[b], x[c], x[d]) != 0) return 0;
    int u, v;
    if (!projection(x[a], x[b], x[c], &u, &v)) return 0;
    return avi_orient2d(x[a], x[b], x[c], u, v) == avi_orient2d(x[a], x[b], x[d], u, v);
}

int avi_triangles_intersect(const double (*x)[3], const uint32_t s[3], const uint32_t t[3], avi_tri_hit *hit)
{
    int ks = -1, kt = -1, shared = 0; /* with one shared vertex: its place in s and in t */
    int in_t[3] = {-1, -1, -1};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (s[i] == t[j]) {
                in_t[i] = j;
                ks = i;
                kt = j;
                shared++;
            }
    if (shared == 3) return report(hit, AVI_TRI_SAME, 1, 0, 0);
    if (shared == 2) {
        int c = in_t[0] < 0 ? 0 : in_t[1] < 0 ? 1 : 2; /* s's vertex off the edge */
        /* t holds a, b and one more vertex d: the xor of its three leaves d */
        uint32_t a = s[(c + 1) % 3], b = s[(c + 2) % 3], d = t[0] ^ t[1] ^ t[2] ^ a ^ b;
        return folded(x, a, b, s[c], d) ? report(hit, AVI_TRI_FOLD, 1, a, b) : 0;
    }
    if (shared == 1) {
        /* the edges opposite the shared vertex */
        int es = (ks + 1) % 3, et = (kt + 1) % 3;
        if (edge_meets(x, s, es, t)) return report(hit, AVI_TRI_CROSS, 1, s[es], s[(es + 1) % 3]);
        if (edge_meets(x, t, et, s)) return report(hit, AVI_TRI_CROSS, 0, t[et], t[(et + 1) % 3]);
        return 0;
    }
    for (int k = 0; k < 3; k++)
        if (edge_meets(x, s, k, t)) return report(hit, AVI_TRI_CROSS, 1, s[k], s[(k + 1) % 3]);
    for (int k = 0; k < 3; k++)
        if (edge_meets(x, t, k, s)) return report(hit, AVI_TRI_CROSS, 0, t[k], t[(k + 1) % 3]);
    return 0;
}

int avi_triangles_first_intersection(const double (*x)[3], const uint32_t (*tri)[3], size_t n, size_t *i, size_t *j,
                                     avi_tri_hit *hit)
{
    double (*box)[6] = malloc((n ? n : 1) * sizeof *box);
    if (!box) return -1;
    for (size_t t = 0; t < n; t++) avi_triangle_box(x, tri[t], 0.0, box[t]);
    avi_box_pair *pairs;
    long np = avi_box_pairs((const double (*)[6])box, n, &pairs);
    free(box);
    if (np < 0) return -1;
    int found = 0;
    avi_tri_hit h;
    for (long k = 0; k < np; k++) {
        const avi_box_pair *p = &pairs[k];
        if (found && (p->a > *i || (p->a == *i && p->b > *j))) continue; /* a later pair */
        if (avi_triangles_intersect(x, tri[p->a], tri[p->b], &h)) {
            *i = p->a;
            *j = p->b;
            if (hit) *hit = h;
            found = 1;
        }
    }
    free(pairs);
    return found;
}
