/* The event kernels every integrator's inner loop shares: the speed check
 * and the drift and kick of vertex records (AVX2 where the build has it,
 * rounded as the scalar code: the same bits either way). */
#ifndef AVI_EVENT_KERNELS_H
#define AVI_EVENT_KERNELS_H

#include "core/engine_ops.h"

#ifdef __AVX2__
#include <immintrin.h>
#endif

#ifdef __AVX2__
/* Whether the kind has a lanes gradient (AVI_LANE_KINDS), and that
 * gradient; `kind` a constant where it is inlined, so the switches fold. */
static inline __attribute__((always_inline)) int avi_kind_has_lanes(unsigned kind)
{
#define HAS_LANES(K, type, lanes) case K: return 1;
    switch (kind) { AVI_LANE_KINDS(HAS_LANES) default: return 0; }
#undef HAS_LANES
}
static inline __attribute__((always_inline)) void avi_kind_gradient_lanes(unsigned kind, const void *rec,
                                                                        const __m256d x[], __m256d g[])
{
#define GRADIENT_LANES(K, type, lanes) case K: lanes((const type *)rec, x, g); break;
    switch (kind) { AVI_LANE_KINDS(GRADIENT_LANES) default: break; }
#undef GRADIENT_LANES
}
#endif

/* A vertex faster than the contact manager's speed cap voids its
 * look-ahead: the manager runs before the next event. After every kick, by
 * the engine and by contact events. */
static inline void avi_check_speed(avi_contact_clock *cm, const avi_vertex *V, const uint32_t *v, int n, double t)
{
    for (int a = 0; a < n; a++)
        if (v3_dot(V[v[a]].v, V[v[a]].v) > cm->vcap2 && cm->next_run > t) {
            cm->next_run = t;
            cm->speed_triggers++;
        }
}

/* Drifts one vertex record to t: x += (t - tau) v, tau := t. A record
 * already at t keeps x as it is: x + 0 v would turn -0.0 into +0.0 (v >= 0)
 * or x into NaN (v not finite), so that every event at t would read
 * positions that depend on how many events drifted the record before it,
 * and so on how the events at t are run (one drift per group tick or one
 * per member, serially or on threads, core/time_slice.h). */
#ifdef __AVX2__
/* The record's first half is (x, tau), its second (v, 1/m): one multiply
 * and one add per half record, rounded as the scalar code (no fused
 * multiply-add), then tau := t in lane 3. Returns the new (x, t). */
static inline __m256d avi_drift_record(avi_vertex *p, __m256d tt)
{
    __m256d xt = _mm256_loadu_pd(p->x), vm = _mm256_loadu_pd(p->v);
    __m256d h = _mm256_sub_pd(tt, _mm256_permute4x64_pd(xt, 0xFF));
    __m256d moved = _mm256_blendv_pd(_mm256_add_pd(xt, _mm256_mul_pd(h, vm)), xt,
                                     _mm256_cmp_pd(h, _mm256_setzero_pd(), _CMP_EQ_OQ));
    __m256d nx = _mm256_blend_pd(moved, tt, 0x8);
    _mm256_storeu_pd(p->x, nx);
    return nx;
}
#else
static inline void avi_drift_record(avi_vertex *p, double t)
{
    double h = t - p->tau;
    if (h != 0.0) {
        p->x[0] += h * p->v[0];
        p->x[1] += h * p->v[1];
        p->x[2] += h * p->v[2];
    }
    p->tau = t;
}
#endif

/* Drifts the stencil's vertices to t and copies their positions into x. */
static inline void avi_drift(avi_vertex *V, const uint32_t *idx, int n, double t, double x[][3])
{
#ifdef __AVX2__
    const __m256d tt = _mm256_set1_pd(t);
    for (int a = 0; a < n; a++) {
        __m256d nx = avi_drift_record(&V[idx[a]], tt);
        _mm_storeu_pd(x[a], _mm256_castpd256_pd128(nx));
        _mm_store_sd(&x[a][2], _mm256_extractf128_pd(nx, 1));
    }
#else
    for (int a = 0; a < n; a++) {
        avi_vertex *p = &V[idx[a]];
        avi_drift_record(p, t);
        x[a][0] = p->x[0]; x[a][1] = p->x[1]; x[a][2] = p->x[2];
    }
#endif
}

/* Drifts the listed vertices to t in place (a group tick's start). */
static inline void avi_drift_all(avi_vertex *V, const uint32_t *idx, uint32_t n, double t)
{
#ifdef __AVX2__
    const __m256d tt = _mm256_set1_pd(t);
    for (uint32_t a = 0; a < n; a++) (void)avi_drift_record(&V[idx[a]], tt);
#else
    for (uint32_t a = 0; a < n; a++) avi_drift_record(&V[idx[a]], t);
#endif
}

/* Copies the positions of stencil vertices already at the event's time. */
static inline void avi_gather(const avi_vertex *V, const uint32_t *idx, int n, double x[][3])
{
#ifdef __AVX2__
    for (int a = 0; a < n; a++) {
        __m256d xt = _mm256_loadu_pd(V[idx[a]].x);
        _mm_storeu_pd(x[a], _mm256_castpd256_pd128(xt));
        _mm_store_sd(&x[a][2], _mm256_extractf128_pd(xt, 1));
    }
#else
    for (int a = 0; a < n; a++) {
        const avi_vertex *p = &V[idx[a]];
        x[a][0] = p->x[0]; x[a][1] = p->x[1]; x[a][2] = p->x[2];
    }
#endif
}

#ifdef __AVX2__
/* v -= w M^-1 g on one vertex record, g in lanes 0-2 (lane 3 zero, so that
 * lane 3 of (v, 1/m) keeps 1/m). */
static inline void avi_kick_record(avi_vertex *p, __m256d ww, __m256d ga)
{
    __m256d vm = _mm256_loadu_pd(p->v);
    __m256d s = _mm256_mul_pd(ww, _mm256_permute4x64_pd(vm, 0xFF));
    _mm256_storeu_pd(p->v, _mm256_sub_pd(vm, _mm256_mul_pd(s, ga)));
}

static inline double avi_lane_sum(__m256d sum)
{
    __m128d h = _mm_add_pd(_mm256_castpd256_pd128(sum), _mm256_extractf128_pd(sum, 1));
    return _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)));
}

/* avi_kick with the gradient in registers (avi_tet_gradient_lanes); returns
 * the impulse's lanes summed over the stencil: avi_lane_sum of them is
 * avi_kick's sum. */
static inline __m256d avi_kick_lanes(avi_vertex *V, const uint32_t *idx, int n, double w, const __m256d g[])
{
    const __m256d ww = _mm256_set1_pd(w);
    __m256d sum = _mm256_setzero_pd();
    for (int a = 0; a < n; a++) {
        avi_kick_record(&V[idx[a]], ww, g[a]);
        sum = _mm256_add_pd(sum, g[a]);
    }
    return sum;
}
#endif

/* v_a -= w M_a^-1 g_a; returns a sum of the impulse components, whose
 * finiteness is the blow-up check. */
static inline double avi_kick(avi_vertex *V, const uint32_t *idx, int n, double w, const double g[][3])
{
#ifdef __AVX2__
    __m256d ga[4]; /* stencils have at most 4 vertices */
    for (int a = 0; a < n; a++) ga[a] = _mm256_set_pd(0.0, g[a][2], g[a][1], g[a][0]);
    return avi_lane_sum(avi_kick_lanes(V, idx, n, w, ga));
#else
    double sum = 0.0;
    for (int a = 0; a < n; a++) {
        avi_vertex *p = &V[idx[a]];
        double s = w * p->inv_mass;
        p->v[0] -= s * g[a][0];
        p->v[1] -= s * g[a][1];
        p->v[2] -= s * g[a][2];
        sum += g[a][0] + g[a][1] + g[a][2];
    }
    return sum;
#endif
}

#endif
