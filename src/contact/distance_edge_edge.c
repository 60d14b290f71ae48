#include "contact/distance_edge_edge.h"
#include "contact/distance_primitives.h"

/* Endpoint x[ip] against segment x[ia] x[ib]: squared distance and the
 * clamped segment parameter. */
static inline double endpoint_d2(const double x[4][3], int ip, int ia, int ib, double *t)
{
    double r[3], e[3];
    v3_sub(r, x[ip], x[ia]);
    v3_sub(e, x[ib], x[ia]);
    double ee = v3_dot(e, e);
    double s = ee > 0.0 ? v3_dot(r, e) / ee : 0.0;
    s = s < 0.0 ? 0.0 : (s > 1.0 ? 1.0 : s);
    double w[3] = {r[0] - s * e[0], r[1] - s * e[1], r[2] - s * e[2]};
    *t = s;
    return v3_dot(w, w);
}

/* Features of endpoint ip against segment (ia, ib): interior, at ia, at ib. */
static const int endpoint_feature[4][3] = {
    {AVI_EE_A0_EDGE_B, AVI_EE_A0_B0, AVI_EE_A0_B1},
    {AVI_EE_A1_EDGE_B, AVI_EE_A1_B0, AVI_EE_A1_B1},
    {AVI_EE_B0_EDGE_A, AVI_EE_A0_B0, AVI_EE_A1_B0},
    {AVI_EE_B1_EDGE_A, AVI_EE_A0_B1, AVI_EE_A1_B1},
};

/* Fills the closest pair and returns the feature.
 *
 * The squared distance is a convex quadratic in the segment parameters
 * (s, t) over the unit square. Its unconstrained minimiser, when inside,
 * is the line-line case; otherwise the minimum is on the square's boundary,
 * i.e. one endpoint against the other segment. A side the unconstrained
 * minimiser lies beyond cannot hold the minimum away from its corners
 * (stepping towards the minimiser would stay inside and descend), and its
 * corners belong to the neighbouring sides, so e.g. s* < 0 drops a1 vs b:
 * two or three candidates remain. With (nearly) parallel lines all four
 * are compared; a convex function whose minimisers form a line attains its
 * minimum over the square on the boundary as well. */
static inline int ee_pair(const double x[4][3], avi_dist_pair *q)
{
    double ea[3], eb[3], n[3];
    v3_sub(ea, x[1], x[0]);
    v3_sub(eb, x[3], x[2]);
    v3_cross(n, ea, eb);
    double nn = v3_dot(n, n);
    int skip = 0; /* bit c: candidate c cannot be the minimum */
    if (nn > AVI_EE_PARALLEL * v3_dot(ea, ea) * v3_dot(eb, eb)) {
        double s, t;
        avi_line_line_params(x, n, nn, &s, &t);
        if (s >= 0.0 && s <= 1.0 && t >= 0.0 && t <= 1.0) {
            avi_pair_line_line(q, x, n, nn, s, t);
            return AVI_EE_EDGE_EDGE;
        }
        skip = (s > 1.0) | (s < 0.0) << 1 | (t > 1.0) << 2 | (t < 0.0) << 3;
    }
    /* candidate c: endpoint cand[c][0] against segment cand[c][1..2] */
    static const int cand[4][3] = {{0, 2, 3}, {1, 2, 3}, {2, 0, 1}, {3, 0, 1}};
    double best = INFINITY, tbest = 0.0;
    int cbest = 0;
    for (int c = 0; c < 4; c++) {
        if (skip >> c & 1) continue;
        double t, d2 = endpoint_d2(x, cand[c][0], cand[c][1], cand[c][2], &t);
        if (d2 < best) { best = d2; tbest = t; cbest = c; }
    }
    const int *k = cand[cbest];
    if (tbest <= 0.0) {
        avi_pair_point_point(q, x, k[0], k[1]);
        return endpoint_feature[k[0]][1];
    }
    if (tbest >= 1.0) {
        avi_pair_point_point(q, x, k[0], k[2]);
        return endpoint_feature[k[0]][2];
    }
    avi_pair_point_line(q, x, k[0], k[1], k[2], tbest);
    return endpoint_feature[k[0]][0];
}

double avi_ee_distance(const double x[4][3], int *feature)
{
    avi_dist_pair q;
    int f = ee_pair(x, &q);
    if (feature) *feature = f;
    return q.d;
}

double avi_ee_distance_gradient(const double x[4][3], double g[4][3])
{
    avi_dist_pair q;
    ee_pair(x, &q);
    avi_dist_pair_gradient(&q, g);
    return q.d;
}

int avi_ee_pair(const double x[4][3], avi_dist_pair *q) { return ee_pair(x, q); }
