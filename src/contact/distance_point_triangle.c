#include "contact/distance_point_triangle.h"
#include "contact/distance_primitives.h"

/* Closest point of segment x[ia] x[ib] to p = x[0]: squared distance and
 * the clamped parameter; r = p - x[ia], e = x[ib] - x[ia], ee = |e|^2. */
static inline double segment_d2(const double r[3], const double e[3], double ee, double *t)
{
    double s = ee > 0.0 ? v3_dot(r, e) / ee : 0.0;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    double w[3] = {r[0] - s * e[0], r[1] - s * e[1], r[2] - s * e[2]};
    *t = s;
    return v3_dot(w, w);
}

/* Fills the closest pair and returns the feature.
 *
 * Face when the projection's barycentrics are all positive. Otherwise the
 * closest point is on the boundary, on an edge whose opposite barycentric
 * is not positive (for a convex polygon the nearest boundary point of an
 * outside point is seen from outside that edge's line), so only those edges
 * (one or two) are tried; a parameter clamped to 0 or 1 means a vertex. */
static inline int pt_pair(const double x[4][3], avi_dist_pair *q)
{
    double e[3][3], r[3][3], n[3], m[3];
    v3_sub(e[0], x[2], x[1]);
    v3_sub(e[1], x[3], x[2]);
    v3_sub(e[2], x[1], x[3]);
    v3_sub(r[0], x[0], x[1]);
    v3_sub(r[1], x[0], x[2]);
    v3_sub(r[2], x[0], x[3]);
    v3_cross(n, e[0], e[1]);
    double ee[3] = {v3_dot(e[0], e[0]), v3_dot(e[1], e[1]), v3_dot(e[2], e[2])};
    double lmax = ee[0] > ee[1] ? ee[0] : ee[1]; /* squared; not fmax, a libm call */
    lmax = ee[2] > lmax ? ee[2] : lmax;
    /* beta[k]: unnormalised barycentric of the vertex opposite edge k
     * (edge k runs from t_k to t_k+1 and is opposite t_k+2). */
    double beta[3] = {0.0, 0.0, 0.0};
    int try_edge[3] = {1, 1, 1};
    if (v3_dot(n, n) > AVI_PT_DEGENERATE * lmax * lmax) {
        for (int k = 0; k < 3; k++) {
            v3_cross(m, n, e[k]);
            beta[k] = v3_dot(m, r[k]);
            try_edge[k] = beta[k] <= 0.0;
        }
        if (!try_edge[0] && !try_edge[1] && !try_edge[2]) {
            /* beta[k] belongs to vertex k+2 */
            avi_pair_point_plane_from(q, r[0], e[0], e[2], n, beta[1], beta[2], beta[0]);
            return AVI_PT_FACE;
        }
    }
    double best = INFINITY, tbest = 0.0;
    int kbest = 0;
    for (int k = 0; k < 3; k++) {
        if (!try_edge[k]) continue;
        double t, d2 = segment_d2(r[k], e[k], ee[k], &t);
        if (d2 < best) { best = d2; tbest = t; kbest = k; }
    }
    int a = 1 + kbest, b = 1 + (kbest + 1) % 3;
    if (tbest <= 0.0) {
        avi_pair_point_point(q, x, 0, a);
        return AVI_PT_VERTEX0 + kbest;
    }
    if (tbest >= 1.0) {
        avi_pair_point_point(q, x, 0, b);
        return AVI_PT_VERTEX0 + (kbest + 1) % 3;
    }
    avi_pair_point_line(q, x, 0, a, b, tbest);
    return AVI_PT_EDGE01 + kbest;
}

double avi_pt_distance(const double x[4][3], int *feature)
{
    avi_dist_pair q;
    int f = pt_pair(x, &q);
    if (feature) *feature = f;
    return q.d;
}

double avi_pt_distance_gradient(const double x[4][3], double g[4][3])
{
    avi_dist_pair q;
    pt_pair(x, &q);
    avi_dist_pair_gradient(&q, g);
    return q.d;
}

int avi_pt_pair(const double x[4][3], avi_dist_pair *q) { return pt_pair(x, q); }
