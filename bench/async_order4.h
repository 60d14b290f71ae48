/* Asynchronous fourth order, as a study (bench/async_order4.c, tested by
 * tests/physics/test_async_order4.c): plain arrays, no libavi.
 *
 * A free planar chain of n unit-ish masses joined by springs that alternate
 * stiff (k_s) and soft (k_w), V = k/2 (|x_b - x_a| - L)^2: nonlinear by
 * geometry (the chain stretches and spins). Two clocks, commensurate: the
 * soft springs tick at H, the stiff at h = H / k, all meeting at multiples
 * of H. The AVI (Lew et al. 2003) on such clocks, from one meeting time to
 * the next with every clock's leapfrog split symmetrically (half kicks of
 * every clock at both ends, as the AVI's first event does), is
 *   Phi_H = K_0 D_h K_1 D_h ... D_h K_k,
 * K_j: the stiff springs' kicks, weight h/2 at j = 0, k and h between, with
 * the soft springs' H/2 at j = 0 and j = k. The sequence is a palindrome of
 * kicks and drifts, each the inverse of itself at the negated step, so
 * Phi_{-H} o Phi_H = id (symmetric, hence of even order: 2). N macro steps
 * of it are the AVI run itself: adjacent half kicks merge into the AVI's
 * full ones. Yoshida's triple jump (Phys. Lett. A 150, 1990)
 *   Psi_H = Phi_{g1 H} o Phi_{g0 H} o Phi_{g1 H},
 * g1 = 1 / (2 - 2^(1/3)), g0 = 1 - 2 g1 < 0, every clock taking its own k
 * substeps inside each stage, is then of order four. With k = 1 and one
 * clock for every spring, Psi is the formula of sync-explicit4
 * (src/sync/explicit4.c), the synchronous fourth-order baseline.
 *
 * Cost is counted in events: one spring gradient evaluation each. Kicks
 * that fall at one position (the two half kicks where macro steps or stages
 * meet) are merged before evaluation, as the AVI and sync-explicit4 do. */
#ifndef AVI_BENCH_ASYNC_ORDER4_H
#define AVI_BENCH_ASYNC_ORDER4_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define AO4_G1 1.351207191959657634047687808971460827
#define AO4_G0 (-1.702414383919315268095375617942921654)

typedef struct {
    int n;          /* masses */
    double *x, *v;  /* 2 n each */
    double *inv_m;  /* n */
    double ks, kw;  /* stiff and soft spring constants; spring i joins i, i+1 */
    double len;     /* rest length of every spring */
    double pend[2]; /* kick weights pending at the current positions: soft, stiff */
    double events;  /* spring gradient evaluations so far */
} ao4_chain;

/* Spring i is stiff when i is even. */
static inline int ao4_stiff(int i) { return (i & 1) == 0; }

/* n masses in a line, stretched and bent, spinning about their centre with
 * a ripple: every spring moves off its rest length. */
static inline void ao4_init(ao4_chain *c, int n, double ks, double kw)
{
    c->n = n;
    c->x = malloc(2 * (size_t)n * sizeof *c->x);
    c->v = malloc(2 * (size_t)n * sizeof *c->v);
    c->inv_m = malloc((size_t)n * sizeof *c->inv_m);
    c->ks = ks;
    c->kw = kw;
    c->len = 1.0;
    c->pend[0] = c->pend[1] = 0.0;
    c->events = 0.0;
    double mid = 0.5 * (n - 1);
    for (int i = 0; i < n; i++) {
        double s = i - mid;
        c->x[2 * i] = 1.08 * s + 0.03 * sin(1.7 * i);
        c->x[2 * i + 1] = 0.05 * s * s / (mid + 1.0) + 0.02 * cos(2.3 * i);
        c->v[2 * i] = -0.1 * c->x[2 * i + 1] + 0.2 * sin(0.9 * i);
        c->v[2 * i + 1] = 0.1 * c->x[2 * i] + 0.2 * cos(1.3 * i);
        c->inv_m[i] = 1.0 / (1.0 + 0.25 * (i % 3));
    }
}

static inline void ao4_copy(ao4_chain *dst, const ao4_chain *src)
{
    size_t b = 2 * (size_t)src->n * sizeof *src->x;
    memcpy(dst->x, src->x, b);
    memcpy(dst->v, src->v, b);
    memcpy(dst->inv_m, src->inv_m, (size_t)src->n * sizeof *src->inv_m);
    dst->n = src->n;
    dst->ks = src->ks;
    dst->kw = src->kw;
    dst->len = src->len;
    dst->pend[0] = src->pend[0];
    dst->pend[1] = src->pend[1];
    dst->events = src->events;
}

static inline void ao4_free(ao4_chain *c)
{
    free(c->x);
    free(c->v);
    free(c->inv_m);
}

/* Applies the pending kicks: v -= w M^-1 grad V_spring for every spring
 * whose class has a non-zero weight (one event each). */
static inline void ao4_flush(ao4_chain *c)
{
    for (int i = 0; i + 1 < c->n; i++) {
        int st = ao4_stiff(i);
        double w = c->pend[st];
        if (w == 0.0) continue;
        double *xa = &c->x[2 * i], *xb = &c->x[2 * i + 2];
        double dx = xb[0] - xa[0], dy = xb[1] - xa[1];
        double d = sqrt(dx * dx + dy * dy);
        double f = w * (st ? c->ks : c->kw) * (d - c->len) / d; /* w dV/dd / d */
        double fx = f * dx, fy = f * dy;                        /* w grad_b V */
        c->v[2 * i] += c->inv_m[i] * fx;
        c->v[2 * i + 1] += c->inv_m[i] * fy;
        c->v[2 * i + 2] -= c->inv_m[i + 1] * fx;
        c->v[2 * i + 3] -= c->inv_m[i + 1] * fy;
        c->events += 1.0;
    }
    c->pend[0] = c->pend[1] = 0.0;
}

static inline void ao4_drift(ao4_chain *c, double h)
{
    ao4_flush(c);
    for (int i = 0; i < 2 * c->n; i++) c->x[i] += h * c->v[i];
}

/* Phi_H: the AVI macro step, soft clock at H, stiff at H / k (k >= 1); with
 * sync != 0 both classes tick at H / k (velocity Verlet, one clock). Its last
 * half kicks stay pending (merged with the next step's first, or applied by
 * ao4_flush). H may be negative: the same map run backwards. */
static inline void ao4_macro(ao4_chain *c, double H, int k, int sync)
{
    double h = H / k;
    c->pend[1] += 0.5 * h;
    c->pend[0] += 0.5 * (sync ? h : H);
    for (int j = 1; j <= k; j++) {
        ao4_drift(c, h);
        c->pend[1] += j < k ? h : 0.5 * h;
        if (sync) c->pend[0] += j < k ? h : 0.5 * h;
    }
    c->pend[0] += sync ? 0.0 : 0.5 * H;
}

/* Psi_H: Yoshida's triple jump of Phi. */
static inline void ao4_yoshida(ao4_chain *c, double H, int k, int sync)
{
    ao4_macro(c, AO4_G1 * H, k, sync);
    ao4_macro(c, AO4_G0 * H, k, sync);
    ao4_macro(c, AO4_G1 * H, k, sync);
}

/* Integrators of the study, all on the same clocks (k substeps per H). */
enum ao4_method { AO4_AVI, AO4_AVI4, AO4_SYNC4, AO4_SYNC2 };

/* Advances by steps macro steps of H and applies the last half kicks.
 * AO4_SYNC4 is sync-explicit4 at the stiff step H / k: k triple jumps of
 * velocity Verlet per macro step, every spring on one clock; AO4_SYNC2 is
 * velocity Verlet (sync-explicit) at the stiff step. */
static inline void ao4_run(ao4_chain *c, enum ao4_method m, double H, int k, long steps)
{
    for (long s = 0; s < steps; s++) {
        if (m == AO4_AVI) ao4_macro(c, H, k, 0);
        else if (m == AO4_AVI4) ao4_yoshida(c, H, k, 0);
        else if (m == AO4_SYNC2) ao4_macro(c, H, k, 1);
        else
            for (int j = 0; j < k; j++) ao4_yoshida(c, H / k, 1, 1);
    }
    ao4_flush(c);
}

static inline double ao4_energy(const ao4_chain *c)
{
    double e = 0.0;
    for (int i = 0; i < c->n; i++)
        e += 0.5 / c->inv_m[i] * (c->v[2 * i] * c->v[2 * i] + c->v[2 * i + 1] * c->v[2 * i + 1]);
    for (int i = 0; i + 1 < c->n; i++) {
        double dx = c->x[2 * i + 2] - c->x[2 * i], dy = c->x[2 * i + 3] - c->x[2 * i + 1];
        double s = sqrt(dx * dx + dy * dy) - c->len;
        e += 0.5 * (ao4_stiff(i) ? c->ks : c->kw) * s * s;
    }
    return e;
}

/* Linear (p[0], p[1]) and angular (p[2]) momentum. */
static inline void ao4_momenta(const ao4_chain *c, double p[3])
{
    p[0] = p[1] = p[2] = 0.0;
    for (int i = 0; i < c->n; i++) {
        double m = 1.0 / c->inv_m[i];
        const double *x = &c->x[2 * i], *v = &c->v[2 * i];
        p[0] += m * v[0];
        p[1] += m * v[1];
        p[2] += m * (x[0] * v[1] - x[1] * v[0]);
    }
}

/* max over masses of |x_a - x_b| */
static inline double ao4_distance(const ao4_chain *a, const ao4_chain *b)
{
    double e = 0.0;
    for (int i = 0; i < a->n; i++) {
        double dx = a->x[2 * i] - b->x[2 * i], dy = a->x[2 * i + 1] - b->x[2 * i + 1];
        double d = sqrt(dx * dx + dy * dy);
        if (d > e) e = d;
    }
    return e;
}

/* Symmetry residual of Phi_H (yoshida: of Psi_H): run forward by H, then by
 * -H, and return the largest change of a position or velocity component
 * relative to the largest magnitude of either. */
static inline double ao4_symmetry(const ao4_chain *c0, double H, int k, int yoshida)
{
    ao4_chain c;
    ao4_init(&c, c0->n, c0->ks, c0->kw);
    ao4_copy(&c, c0);
    if (yoshida) {
        ao4_yoshida(&c, H, k, 0);
        ao4_flush(&c);
        ao4_yoshida(&c, -H, k, 0);
    } else {
        ao4_macro(&c, H, k, 0);
        ao4_flush(&c);
        ao4_macro(&c, -H, k, 0);
    }
    ao4_flush(&c);
    double dx = 0.0, dv = 0.0, sx = 0.0, sv = 0.0;
    for (int i = 0; i < 2 * c.n; i++) {
        dx = fmax(dx, fabs(c.x[i] - c0->x[i]));
        dv = fmax(dv, fabs(c.v[i] - c0->v[i]));
        sx = fmax(sx, fabs(c0->x[i]));
        sv = fmax(sv, fabs(c0->v[i]));
    }
    ao4_free(&c);
    return fmax(dx / sx, dv / sv);
}

#endif
