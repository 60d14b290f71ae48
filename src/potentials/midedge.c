#include "potentials/midedge.h"
#include "potentials/hinge_geometry.h"

#include <string.h>

/* II_i and its Jacobian J[i] = dII_i / d(slot, component) at x:
 *   dII_i = 2 tan(alpha_i) dh_i + 2 h_i (1 + tan^2(alpha_i)) dalpha_i,
 * h_i = |n| / l_i with grad h_i = -nu_i at x_i and (1 - s) nu_i, s nu_i at
 * the edge's ends (s the foot of x_i along the edge), dalpha_i from the
 * hinge-angle gradient (Bridson et al. 2003) and dalpha_i / dphi_e = s_i.
 * J may be NULL. */
static void second_form(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double II[3],
                        double J[3][AVI_MIDEDGE_SLOTS][3])
{
    if (J) memset(J, 0, 3 * sizeof J[0]);
    for (int i = 0; i < 3; i++) {
        int a = (i + 1) % 3, b = (i + 2) % 3;
        const double *q[4] = {x[a], x[b], x[i], x[3 + i]};
        double hx[4][3];
        for (int k = 0; k < 4; k++) v3_copy(hx[k], q[k]);
        hinge_geom g;
        double tx, ty;
        hinge_frame(&g, (const double (*)[3])hx, &tx, &ty);
        /* dalpha / dtheta */
        double dth = p->mode[i] == AVI_MIDEDGE_INTERIOR ? -0.5 : p->mode[i] == AVI_MIDEDGE_CLAMPED ? -1.0 : 0.0;
        double area2 = sqrt(g.nn1), h = area2 / g.le;
        /* f = tan (Chen et al.'s "better bending" form of the director term):
         * it diverges as the director nears the face plane, which keeps an
         * under-resolved fold from passing 90 degrees and a DOF from spinning;
         * past it the form is undefined (NaN: a blow-up naming the element). */
        double sa = avi_midedge_tan_alpha(p->mode[i], p->sign[i], x[6 + i][0], tx, ty);
        II[i] = 2.0 * h * sa;
        if (!J) continue;
        /* nu_i = t x n_T = (e x n1) / (|e| |n1|). */
        double nu[3];
        v3_cross(nu, g.e, g.n1);
        v3_scale(nu, nu, 1.0 / (g.le * area2));
        /* A free edge's slot 3 + i copies x_i: its wing has no normal, so
         * the angle gradient (unused there) is not formed. */
        double s[2] = {v3_dot(g.f1, g.e) / (g.le * g.le), 0.0}, gt[4][3] = {{0}};
        if (p->mode[i] != AVI_MIDEDGE_FREE) hinge_theta_gradient(&g, s, gt);
        double fp = 1.0 + sa * sa; /* tan' = 1 / cos^2 */
        double ch = 2.0 * sa, ct = 2.0 * h * fp * dth;
        for (int c = 0; c < 3; c++) {
            J[i][a][c] = ch * (1.0 - s[0]) * nu[c] + ct * gt[0][c];
            J[i][b][c] = ch * s[0] * nu[c] + ct * gt[1][c];
            J[i][i][c] = -ch * nu[c] + ct * gt[2][c];
            J[i][3 + i][c] = ct * gt[3][c];
        }
        if (p->sign[i]) J[i][6 + i][0] = 2.0 * h * fp * p->sign[i];
    }
}

/* D = b - bbar (00, 01, 11) from II. */
static inline void form_change(const avi_midedge *p, const double II[3], double D[3])
{
    D[0] = II[0] + II[1] - p->bbar[0];
    D[1] = II[0] - p->bbar[1];
    D[2] = II[0] + II[2] - p->bbar[2];
}

/* Q = P D P (symmetric) and tr(M) = tr(P D). */
static inline double pdp(const double P[3], const double D[3], double Q[3])
{
    double a00 = P[0] * D[0] + P[1] * D[1], a01 = P[0] * D[1] + P[1] * D[2];
    double a10 = P[1] * D[0] + P[2] * D[1], a11 = P[1] * D[1] + P[2] * D[2]; /* A = P D */
    Q[0] = a00 * P[0] + a01 * P[1];
    Q[1] = a00 * P[1] + a01 * P[2];
    Q[2] = a10 * P[1] + a11 * P[2];
    return a00 + a11;
}

static double density(const avi_midedge *p, const double D[3])
{
    double Q[3];
    double tr = pdp(p->P, D, Q);
    double trmm = Q[0] * D[0] + 2.0 * Q[1] * D[1] + Q[2] * D[2]; /* tr(P D P D) */
    return p->ka * (p->nu * tr * tr + (1.0 - p->nu) * trmm);
}

/* dV/dII: with G = dV/db = ka [2 nu tr(M) P + 2 (1 - nu) P D P],
 * dV/dII0 = G00 + 2 G01 + G11, dV/dII1 = G00, dV/dII2 = G11. */
static inline __attribute__((always_inline)) void energy_slopes(const avi_midedge *p, const double D[3], double w[3])
{
    double Q[3];
    double tr = pdp(p->P, D, Q);
    double G[3];
    for (int k = 0; k < 3; k++) G[k] = 2.0 * p->ka * (p->nu * tr * p->P[k] + (1.0 - p->nu) * Q[k]);
    w[0] = G[0] + 2.0 * G[1] + G[2];
    w[1] = G[0];
    w[2] = G[2];
}

int avi_midedge_init(avi_midedge *p, const double X[AVI_MIDEDGE_SLOTS][3], const avi_shell_material *mat)
{
    if (wing_degenerate(X[0], X[1], X[2])) return -1;
    for (int i = 0; i < 3; i++)
        if (p->mode[i] != AVI_MIDEDGE_FREE && wing_degenerate(X[(i + 2) % 3], X[(i + 1) % 3], X[3 + i])) return -1;
    double e1[3], e2[3], n[3];
    v3_sub(e1, X[1], X[0]);
    v3_sub(e2, X[2], X[0]);
    v3_cross(n, e1, e2);
    double a00 = v3_dot(e1, e1), a01 = v3_dot(e1, e2), a11 = v3_dot(e2, e2);
    double det = a00 * a11 - a01 * a01;
    p->P[0] = a11 / det;
    p->P[1] = -a01 / det;
    p->P[2] = a00 / det;
    double nu = mat->poisson, t = mat->thickness;
    double D = mat->youngs * t * t * t / (12.0 * (1.0 - nu * nu));
    p->ka = 0.5 * v3_norm(n) * D / 2.0;
    p->nu = nu;
    memset(p->bbar, 0, sizeof p->bbar);
    double II[3], Dm[3];
    second_form(p, X, II, NULL);
    form_change(p, II, Dm); /* bbar = 0 here, so Dm = b at rest */
    memcpy(p->bbar, Dm, sizeof Dm);
    return 0;
}

double avi_midedge_energy_scalar(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3])
{
    double II[3], D[3];
    second_form(p, x, II, NULL);
    form_change(p, II, D);
    return density(p, D);
}

/* A triangle collapsed to zero area has no normal: the gradient is then
 * non-finite, which the engine's blow-up check reports. */
void avi_midedge_gradient_scalar(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3],
                                 double g[AVI_MIDEDGE_SLOTS][3])
{
    double II[3], D[3], w[3], J[3][AVI_MIDEDGE_SLOTS][3];
    second_form(p, x, II, J);
    form_change(p, II, D);
    energy_slopes(p, D, w);
    for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++)
        for (int c = 0; c < 3; c++) g[a][c] = w[0] * J[0][a][c] + w[1] * J[1][a][c] + w[2] * J[2][a][c];
}

#ifdef __AVX2__
/* The gradient with edge i's terms in lane i (lane 3 repeats edge 0): every
 * lane does second_form's operations on its edge in the same order
 * (multiply and add apart, as the build contracts nothing), so the result
 * is bitwise avi_midedge_gradient_scalar's (tests/unit/test_midedge_lanes.c).
 * The three tangents (avi_midedge_tan_alpha) are scalar, between two
 * vector phases; the sums over the edges run in slot lanes. */
typedef struct {
    __m256d c[3];
} lanes3;

static inline lanes3 l3_sub(lanes3 a, lanes3 b)
{
    lanes3 r;
    for (int c = 0; c < 3; c++) r.c[c] = _mm256_sub_pd(a.c[c], b.c[c]);
    return r;
}
static inline __m256d l3_dot(lanes3 a, lanes3 b)
{
    return _mm256_add_pd(_mm256_add_pd(_mm256_mul_pd(a.c[0], b.c[0]), _mm256_mul_pd(a.c[1], b.c[1])),
                         _mm256_mul_pd(a.c[2], b.c[2]));
}
/* v3_cross lane by lane. */
static inline lanes3 l3_cross(lanes3 a, lanes3 b)
{
    lanes3 r;
    r.c[0] = _mm256_sub_pd(_mm256_mul_pd(a.c[1], b.c[2]), _mm256_mul_pd(a.c[2], b.c[1]));
    r.c[1] = _mm256_sub_pd(_mm256_mul_pd(a.c[2], b.c[0]), _mm256_mul_pd(a.c[0], b.c[2]));
    r.c[2] = _mm256_sub_pd(_mm256_mul_pd(a.c[0], b.c[1]), _mm256_mul_pd(a.c[1], b.c[0]));
    return r;
}
#define L3_PERMUTE(a, imm) \
    ((lanes3){{_mm256_permute4x64_pd((a).c[0], imm), _mm256_permute4x64_pd((a).c[1], imm), \
               _mm256_permute4x64_pd((a).c[2], imm)}})

/* Components of slot records r0, r1, r2 ((x, y, z, any)) into lanes 0-2,
 * r0's again in lane 3: a 4 x 4 transpose. */
static inline lanes3 l3_transpose(__m256d r0, __m256d r1, __m256d r2)
{
    __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1);
    __m256d t2 = _mm256_unpacklo_pd(r2, r0), t3 = _mm256_unpackhi_pd(r2, r0);
    return (lanes3){{_mm256_permute2f128_pd(t0, t2, 0x20), _mm256_permute2f128_pd(t1, t3, 0x20),
                     _mm256_permute2f128_pd(t0, t2, 0x31)}};
}
/* The inverse: lanes 0-2 of x, y and z into three (x, y, z, 0) records. */
static inline void l3_untranspose(lanes3 v, __m256d out[3])
{
    const __m256d zero = _mm256_setzero_pd();
    __m256d a = _mm256_unpacklo_pd(v.c[0], v.c[1]), b = _mm256_unpackhi_pd(v.c[0], v.c[1]);
    __m256d c = _mm256_unpacklo_pd(v.c[2], zero), d = _mm256_unpackhi_pd(v.c[2], zero);
    out[0] = _mm256_permute2f128_pd(a, c, 0x20);
    out[1] = _mm256_permute2f128_pd(b, d, 0x20);
    out[2] = _mm256_permute2f128_pd(a, c, 0x31);
}

/* The hinge frames of the three edges (hinge_frame, lane by lane): edge,
 * wing vectors and normals, |e|, and tx, ty and 2 h per edge in memory for
 * the scalar tangents. Shared by the gradient and the energy, so that both
 * form second_form's bits. */
typedef struct {
    lanes3 e, f1, f2, n1, n2;
    __m256d le, nn1, area2, h2;
    double tx[4], ty[4];
} frame_lanes;

static inline __attribute__((always_inline)) void hinge_frames(frame_lanes *h, lanes3 q0, lanes3 q1, lanes3 q2,
                                                               lanes3 q3)
{
    h->e = l3_sub(q1, q0);
    h->f1 = l3_sub(q2, q0);
    h->f2 = l3_sub(q3, q0);
    h->n1 = l3_cross(h->e, h->f1);
    h->n2 = l3_cross(h->f2, h->e);
    h->le = _mm256_sqrt_pd(l3_dot(h->e, h->e));
    h->nn1 = l3_dot(h->n1, h->n1);
    _mm256_storeu_pd(h->ty, _mm256_div_pd(l3_dot(l3_cross(h->n2, h->n1), h->e), h->le));
    _mm256_storeu_pd(h->tx, l3_dot(h->n1, h->n2));
    h->area2 = _mm256_sqrt_pd(h->nn1);
    h->h2 = _mm256_mul_pd(_mm256_set1_pd(2.0), _mm256_div_pd(h->area2, h->le)); /* 2 h */
}

/* From the edge lanes of q0 = x_a, q1 = x_b, q2 = x_i, q3 = x_{3+i}
 * (a = i + 1, b = i + 2) and the DOF positions phi (read where the edge has
 * one) to the gradient, slot k's in g[k] as (x, y, z, 0). */
static inline __attribute__((always_inline)) void gradient_edges(const avi_midedge *p, lanes3 q0, lanes3 q1,
                                                                 lanes3 q2, lanes3 q3, const double phi[3],
                                                                 __m256d g[AVI_MIDEDGE_SLOTS])
{
    /* Phase 1, everything but the angles: hinge_geometry and
     * hinge_theta_gradient of (x_a, x_b, x_i, x_{3+i}). */
    const __m256d one = _mm256_set1_pd(1.0), sgn = _mm256_set1_pd(-0.0);
    frame_lanes h;
    hinge_frames(&h, q0, q1, q2, q3);
    lanes3 e = h.e, f1 = h.f1, f2 = h.f2, n1 = h.n1, n2 = h.n2;
    __m256d le = h.le, nn1 = h.nn1, nn2 = l3_dot(n2, n2), area2 = h.area2, h2 = h.h2;
    const double *tx = h.tx, *ty = h.ty;
    lanes3 nu = l3_cross(e, n1);
    __m256d inv = _mm256_div_pd(one, _mm256_mul_pd(le, area2));
    __m256d ee = _mm256_mul_pd(le, le);
    __m256d s0 = _mm256_div_pd(l3_dot(f1, e), ee), s1 = _mm256_div_pd(l3_dot(f2, e), ee);
    __m256d k2 = _mm256_div_pd(le, nn1), k3 = _mm256_div_pd(le, nn2);
    __m256d s0m = _mm256_sub_pd(s0, one), s1m = _mm256_sub_pd(s1, one), ns0 = _mm256_xor_pd(s0, sgn);
    /* A free edge's angle gradient is zero (its wing is a copy of x_i). */
    const int fr0 = p->mode[0] == AVI_MIDEDGE_FREE, fr1 = p->mode[1] == AVI_MIDEDGE_FREE,
              fr2 = p->mode[2] == AVI_MIDEDGE_FREE;
    const __m256d free_m = _mm256_castsi256_pd(_mm256_setr_epi64x(-fr0, -fr1, -fr2, -fr0));
    lanes3 gt0, gt1, gt2, gt3;
    for (int c = 0; c < 3; c++) {
        nu.c[c] = _mm256_mul_pd(nu.c[c], inv);
        __m256d a2 = _mm256_mul_pd(n1.c[c], k2), a3 = _mm256_mul_pd(n2.c[c], k3);
        gt0.c[c] = _mm256_andnot_pd(free_m, _mm256_add_pd(_mm256_mul_pd(s0m, a2), _mm256_mul_pd(s1m, a3)));
        gt1.c[c] = _mm256_andnot_pd(free_m, _mm256_sub_pd(_mm256_mul_pd(ns0, a2), _mm256_mul_pd(s1, a3)));
        gt2.c[c] = _mm256_andnot_pd(free_m, a2);
        gt3.c[c] = _mm256_andnot_pd(free_m, a3);
    }

    /* Phase 2, per edge: tan(alpha) (midedge.h: no angle formed). */
    double sa[3], dth[3], sg[3];
    for (int i = 0; i < 3; i++) {
        dth[i] = p->mode[i] == AVI_MIDEDGE_INTERIOR ? -0.5 : p->mode[i] == AVI_MIDEDGE_CLAMPED ? -1.0 : 0.0;
        sa[i] = avi_midedge_tan_alpha(p->mode[i], p->sign[i], phi[i], tx[i], ty[i]);
        sg[i] = p->sign[i];
    }

    /* Phase 3: the Jacobian rows by role (vertex a, b, i, the wing, the DOF)
     * times w, then g = w0 J0 + w1 J1 + w2 J2 summed left to right, with the
     * zeros of the rows that do not reach a slot multiplied in as the
     * scalar code does (they decide the sign of a zero). */
    /* Built from scalars: a vector load of values just stored one by one
     * would miss store forwarding. */
#define L3_SET(v) _mm256_setr_pd((v)[0], (v)[1], (v)[2], (v)[0])
    __m256d sav = L3_SET(sa);
    __m256d fp = _mm256_add_pd(one, _mm256_mul_pd(sav, sav));
    __m256d ch = _mm256_mul_pd(_mm256_set1_pd(2.0), sav), hfp = _mm256_mul_pd(h2, fp);
    __m256d ct = _mm256_mul_pd(hfp, L3_SET(dth));
    double II[4];
    _mm256_storeu_pd(II, _mm256_mul_pd(h2, sav));
    const int d0 = p->sign[0] != 0, d1 = p->sign[1] != 0, d2 = p->sign[2] != 0;
    const __m256d dof_m = _mm256_castsi256_pd(_mm256_setr_epi64x(-d0, -d1, -d2, -d0));
    __m256d jd = _mm256_and_pd(dof_m, _mm256_mul_pd(hfp, L3_SET(sg)));
#undef L3_SET
    double D[3], w[3];
    form_change(p, II, D);
    energy_slopes(p, D, w);
    const __m256d wv = _mm256_setr_pd(w[0], w[1], w[2], w[0]);
    __m256d cha = _mm256_mul_pd(ch, _mm256_sub_pd(one, s0)), chb = _mm256_mul_pd(ch, s0);
    __m256d chi = _mm256_xor_pd(ch, sgn);
    __m256d z = _mm256_mul_pd(wv, _mm256_setzero_pd()); /* w_j 0 */
    __m256d zb0 = _mm256_permute4x64_pd(z, 0x00), zb1 = _mm256_permute4x64_pd(z, 0x55),
            zb2 = _mm256_permute4x64_pd(z, 0xAA);
    /* Slot k (0-2) is vertex i of edge k, a of edge k + 2 and b of edge k + 1:
     * with SA[k] = WA[k + 2], SB[k] = WB[k + 1], edge j's terms in slot lanes
     * are T0 = (WI, SA, SB), T1 = (SB, WI, SA), T2 = (SA, SB, WI). Slot 3 + k
     * gets edge k's wing term and the zeros of the other edges. */
    lanes3 tri, wing;
    for (int c = 0; c < 3; c++) {
        __m256d wa = _mm256_mul_pd(wv, _mm256_add_pd(_mm256_mul_pd(cha, nu.c[c]), _mm256_mul_pd(ct, gt0.c[c])));
        __m256d wb = _mm256_mul_pd(wv, _mm256_add_pd(_mm256_mul_pd(chb, nu.c[c]), _mm256_mul_pd(ct, gt1.c[c])));
        __m256d wi = _mm256_mul_pd(wv, _mm256_add_pd(_mm256_mul_pd(chi, nu.c[c]), _mm256_mul_pd(ct, gt2.c[c])));
        __m256d w3 = _mm256_mul_pd(wv, _mm256_mul_pd(ct, gt3.c[c]));
        __m256d sa_ = _mm256_permute4x64_pd(wa, 0xD2), sb_ = _mm256_permute4x64_pd(wb, 0xC9);
        __m256d t0 = _mm256_blend_pd(_mm256_blend_pd(wi, sa_, 0x2), sb_, 0x4);
        __m256d t1 = _mm256_blend_pd(_mm256_blend_pd(wi, sb_, 0x1), sa_, 0x4);
        __m256d t2 = _mm256_blend_pd(_mm256_blend_pd(wi, sa_, 0x1), sb_, 0x2);
        tri.c[c] = _mm256_add_pd(_mm256_add_pd(t0, t1), t2);
        wing.c[c] = _mm256_add_pd(_mm256_add_pd(_mm256_blend_pd(zb0, w3, 0x1), _mm256_blend_pd(zb1, w3, 0x2)),
                                  _mm256_blend_pd(zb2, w3, 0x4));
    }
    __m256d wd = _mm256_mul_pd(wv, jd), z012 = _mm256_add_pd(_mm256_add_pd(zb0, zb1), zb2);
    lanes3 dof = {{_mm256_add_pd(_mm256_add_pd(_mm256_blend_pd(zb0, wd, 0x1), _mm256_blend_pd(zb1, wd, 0x2)),
                                 _mm256_blend_pd(zb2, wd, 0x4)),
                   z012, z012}};
    l3_untranspose(tri, g);
    l3_untranspose(wing, g + 3);
    l3_untranspose(dof, g + 6);
}

void avi_midedge_gradient_lanes(const avi_midedge *p, const __m256d x[AVI_MIDEDGE_SLOTS], __m256d g[AVI_MIDEDGE_SLOTS])
{
    lanes3 q2 = l3_transpose(x[0], x[1], x[2]), q3 = l3_transpose(x[3], x[4], x[5]);
    lanes3 q0 = L3_PERMUTE(q2, 0x49), q1 = L3_PERMUTE(q2, 0x92); /* (1 2 0 1), (2 0 1 2) */
    double phi[3] = {_mm256_cvtsd_f64(x[6]), _mm256_cvtsd_f64(x[7]), _mm256_cvtsd_f64(x[8])};
    gradient_edges(p, q0, q1, q2, q3, phi, g);
}

/* The energy from the edge lanes: the hinge frames (tx, ty, 2 h), the
 * tangents, then form_change and density
 * as avi_midedge_energy_scalar; bitwise its value. The observables take an
 * energy of every potential at every row, most of it here. */
double avi_midedge_energy(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3])
{
    __m256d xv[6];
    for (int a = 0; a < 6; a++) xv[a] = _mm256_setr_pd(x[a][0], x[a][1], x[a][2], 0.0);
    lanes3 q2 = l3_transpose(xv[0], xv[1], xv[2]), q3 = l3_transpose(xv[3], xv[4], xv[5]);
    lanes3 q0 = L3_PERMUTE(q2, 0x49), q1 = L3_PERMUTE(q2, 0x92);
    frame_lanes h;
    hinge_frames(&h, q0, q1, q2, q3);
    double h2[4], II[3], D[3];
    _mm256_storeu_pd(h2, h.h2);
    for (int i = 0; i < 3; i++)
        II[i] = h2[i] * avi_midedge_tan_alpha(p->mode[i], p->sign[i], x[6 + i][0], h.tx[i], h.ty[i]);
    form_change(p, II, D);
    return density(p, D);
}

void avi_midedge_gradient(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double g[AVI_MIDEDGE_SLOTS][3])
{
    __m256d xv[AVI_MIDEDGE_SLOTS], gv[AVI_MIDEDGE_SLOTS];
    for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++) xv[a] = _mm256_setr_pd(x[a][0], x[a][1], x[a][2], 0.0);
    avi_midedge_gradient_lanes(p, xv, gv);
    for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++) {
        _mm_storeu_pd(g[a], _mm256_castpd256_pd128(gv[a]));
        _mm_store_sd(&g[a][2], _mm256_extractf128_pd(gv[a], 1));
    }
}
#else
void avi_midedge_gradient(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], double g[AVI_MIDEDGE_SLOTS][3])
{
    avi_midedge_gradient_scalar(p, x, g);
}

double avi_midedge_energy(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3])
{
    return avi_midedge_energy_scalar(p, x);
}
#endif

/* Largest eigenvalue of a symmetric 3x3 matrix (00 01 02 11 12 22), by the
 * trigonometric solution of the characteristic cubic (Smith 1961). */
static double sym3_max_eigenvalue(const double S[6])
{
    /* Scaled to entries <= 1 so that the squares below cannot overflow for
     * extreme (but finite) materials. */
    double scale = 0.0, A[6];
    for (int k = 0; k < 6; k++) scale = fmax(scale, fabs(S[k]));
    if (!(scale > 0.0) || !isfinite(scale)) return scale > 0.0 ? scale : 0.0;
    for (int k = 0; k < 6; k++) A[k] = S[k] / scale;
    double p1 = A[1] * A[1] + A[2] * A[2] + A[4] * A[4];
    double q = (A[0] + A[3] + A[5]) / 3.0;
    double d0 = A[0] - q, d1 = A[3] - q, d2 = A[5] - q;
    double p2 = d0 * d0 + d1 * d1 + d2 * d2 + 2.0 * p1;
    if (!(p2 > 0.0)) return q * scale;
    double pp = sqrt(p2 / 6.0);
    double b0 = d0 / pp, b1 = A[1] / pp, b2 = A[2] / pp, b3 = d1 / pp, b4 = A[4] / pp, b5 = d2 / pp;
    double r = 0.5 * (b0 * (b3 * b5 - b4 * b4) - b1 * (b1 * b5 - b4 * b2) + b2 * (b1 * b4 - b3 * b2));
    double ph = r <= -1.0 ? M_PI / 3.0 : r >= 1.0 ? 0.0 : acos(r) / 3.0;
    return (q + 2.0 * pp * cos(ph)) * scale;
}

/* With K = d2V/dII2 = L L^T (Cholesky) and A = J diag(im) J^T, the nonzero
 * eigenvalues of diag(im)^1/2 J^T K J diag(im)^1/2 are those of L^T A L. */
double avi_midedge_omega2(const avi_midedge *p, const double x[AVI_MIDEDGE_SLOTS][3], const double im[AVI_MIDEDGE_SLOTS])
{
    double II[3], J[3][AVI_MIDEDGE_SLOTS][3];
    second_form(p, x, II, J);
    /* V is quadratic in II: column j of K is dV/dII at D = the change of b
     * by a unit II_j, with bbar cancelled. */
    double K[3][3];
    for (int j = 0; j < 3; j++) {
        double u[3] = {0, 0, 0}, D[3];
        u[j] = 1.0;
        D[0] = u[0] + u[1];
        D[1] = u[0];
        D[2] = u[0] + u[2];
        energy_slopes(p, D, K[j]);
    }
    double L[3][3] = {{0}};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j <= i; j++) {
            double s = K[i][j];
            for (int k = 0; k < j; k++) s -= L[i][k] * L[j][k];
            L[i][j] = i == j ? sqrt(fmax(s, 0.0)) : (L[j][j] > 0.0 ? s / L[j][j] : 0.0);
        }
    double A[3][3];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int a = 0; a < AVI_MIDEDGE_SLOTS; a++)
                for (int c = 0; c < 3; c++) s += J[i][a][c] * im[a] * J[j][a][c];
            A[i][j] = s;
        }
    double B[3][3]; /* L^T A L */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++)
                for (int l = 0; l < 3; l++) s += L[k][i] * A[k][l] * L[l][j];
            B[i][j] = s;
        }
    double S[6] = {B[0][0], 0.5 * (B[0][1] + B[1][0]), 0.5 * (B[0][2] + B[2][0]), B[1][1],
                   0.5 * (B[1][2] + B[2][1]), B[2][2]};
    return sym3_max_eigenvalue(S);
}
