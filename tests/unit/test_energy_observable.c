/* The energy observable with velocities synchronized to the output time
 * (docs/energy_observable.md): on a unit mass on a unit spring its band is
 * that of the represented motion's energy, fourth order in the step, where
 * the mid-step estimate's band is omega h; with several clocks it converges;
 * the synchronous explicit integrator reports what the AVI reports. */
#include "check_main.h"
#include "avi/avi.h"
#include "avi/sync.h"

#include <math.h>

typedef struct {
    double lo, hi, lo_mid, hi_mid, sum;
    long n;
} band;

static int record(const avi_engine *e, double t, void *user)
{
    band *b = user;
    avi_observation o;
    avi_engine_observe(e, t, &o);
    if (b->n == 0) {
        b->lo = b->hi = o.total;
        b->lo_mid = b->hi_mid = o.total_midstep;
    }
    b->lo = fmin(b->lo, o.total);
    b->hi = fmax(b->hi, o.total);
    b->lo_mid = fmin(b->lo_mid, o.total_midstep);
    b->hi_mid = fmax(b->hi_mid, o.total_midstep);
    b->sum += o.total;
    b->n++;
    return 0;
}

/* Peak-to-peak over mean of the reported total energy over t_end, sampled
 * every `every` (*mid: the same of the mid-step estimate). */
static double run_band(avi_engine *e, double every, double t_end, double *mid)
{
    band b = {0};
    ck_assert_int_eq(avi_engine_add_observer(e, every, record, &b), 0);
    ck_assert_int_eq(avi_engine_run(e, t_end), 0);
    double mean = b.sum / (double)b.n;
    if (mid) *mid = (b.hi_mid - b.lo_mid) / mean;
    return (b.hi - b.lo) / mean;
}

/* Unit mass on a unit spring from the origin, stretched by 1 (omega = 1). */
static avi_model *oscillator(double h)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "osc");
    const double X[2][3] = {{0, 0, 0}, {2, 0, 0}};
    for (int i = 0; i < 2; i++) avi_model_add_vertex(m, b, X[i]);
    ck_assert_int_eq(avi_model_pin(m, 0), 0);
    ck_assert_int_eq(avi_model_add_mass(m, 1, 1.0), 0);
    ck_assert_int_eq(avi_model_add_spring(m, 0, 1, 1.0, 1.0), 0);
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = h;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

/* The reported energy over 1/2 omega^2 A^2 on a unit oscillator at
 * omega h = q, a fraction u + 1/2 of the way through a step, when the
 * mid-step phase of the motion A cos(omega~ t + phi) the leapfrog
 * represents is psi (docs/energy_observable.md): the stored position and
 * synchronized velocity are
 *   x = A (C cos psi - u q sin psi),  v = -A omega ((1 - u^2 q^2) sin psi + u q C cos psi),
 * C = sqrt(1 - q^2 / 4), and the observable adds (u^2 q^2 / 2) v to v,
 * (1/4 - u^2) q^2 / 2 of the potential, and the cross term. */
static double represented_energy(double q, double u, double psi)
{
    double C = sqrt(1.0 - 0.25 * q * q), c = cos(psi), s = sin(psi);
    double xi = C * c - u * q * s, eta = (1.0 - u * u * q * q) * s + u * q * C * c;
    double K = 1.0 + 0.5 * u * u * q * q, P = 1.0 + (0.25 - u * u) * q * q, X = u * (0.25 - u * u) * q * q * q;
    return P * xi * xi + K * K * eta * eta + 2.0 * X * xi * eta;
}

/* Its band over every phase, sampled every eighth of a step. */
static double represented_band(double q)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < 8; j++)
        for (int k = 0; k < 3600; k++) {
            double E = represented_energy(q, j / 8.0 - 0.5, 2.0 * M_PI * k / 3600.0);
            lo = fmin(lo, E);
            hi = fmax(hi, E);
        }
    return hi - lo;
}

/* The leapfrog on a harmonic oscillator represents A cos(omega~ t + phi),
 * cos(omega~ h) = 1 - (omega h)^2 / 2, whose energy 1/2 omega^2 A^2 the
 * observable reports to fourth order: (omega h)^4 3/64 at the event times,
 * a little more between them (represented_band); the velocity-Verlet
 * velocity alone had (omega h)^2 / 4, the mid-step one omega h. */
START_TEST(test_spring_band_is_fourth_order)
{
    const double hs[3] = {0.5, 0.25, 0.125};
    double bands[3];
    for (int k = 0; k < 3; k++) {
        double h = hs[k], mid;
        avi_model *m = oscillator(h);
        avi_engine *e = avi_engine_create(m, NULL);
        ck_assert_ptr_nonnull(e);
        bands[k] = run_band(e, h / 8.0, 300.0, &mid);
        double expect = represented_band(h);
        ck_assert_msg(fabs(bands[k] / expect - 1.0) < 0.02, "h = %g: band %.5g, represented motion %.5g", h, bands[k],
                      expect);
        ck_assert_double_lt(bands[k], 0.1 * 0.25 * h * h); /* a tenth of velocity Verlet's (omega h)^2 / 4 */
        /* The mid-step estimate's band is omega h. */
        ck_assert_msg(fabs(mid / h - 1.0) < 0.05, "h = %g: mid-step band %.5g", h, mid);
        avi_engine_destroy(e);
        avi_model_destroy(m);
    }
    ck_assert_double_le(bands[0], 0.05);
    for (int k = 0; k < 2; k++) {
        double ratio = bands[k] / bands[k + 1];
        ck_assert_msg(ratio > 14.0 && ratio < 18.0, "band ratio %.4g between h = %g and %g", ratio, hs[k], hs[k + 1]);
    }
}
END_TEST

/* A graded chain: pinned, then masses 1, 0.25, 4 on springs 1, 9, 2, each
 * spring on its own step (stability rule), so clocks differ by up to 3x.
 * Both bands are sampled over the same time at two safeties. */
static avi_model *graded_chain(const avi_time_step *r)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "chain");
    const double X[4][3] = {{0, 0, 0}, {1.2, 0, 0}, {2.1, 0.1, 0}, {3.3, 0, 0}};
    const double mass[3] = {1.0, 0.25, 4.0}, k[3] = {1.0, 9.0, 2.0};
    for (int i = 0; i < 4; i++) avi_model_add_vertex(m, b, X[i]);
    ck_assert_int_eq(avi_model_pin(m, 0), 0);
    for (uint32_t i = 0; i < 3; i++) {
        ck_assert_int_eq(avi_model_add_mass(m, i + 1, mass[i]), 0);
        ck_assert_int_eq(avi_model_add_spring(m, i, i + 1, k[i], 1.0), 0);
    }
    ck_assert_int_eq(avi_model_finalize(m, r), 0);
    return m;
}

START_TEST(test_graded_chain_converges)
{
    double sync[2], mid[2];
    for (int k = 0; k < 2; k++) {
        avi_time_step r = avi_default_time_step();
        r.safety = k == 0 ? 0.2 : 0.1;
        r.neighbor_ratio = 0.0; /* each spring its own step */
        r.levels_per_octave = 0;
        avi_model *m = graded_chain(&r);
        double lo, hi;
        avi_model_time_step_range(m, AVI_KIND_SPRING, &lo, &hi);
        ck_assert_double_gt(hi / lo, 2.0);
        avi_engine *e = avi_engine_create(m, NULL);
        sync[k] = run_band(e, 0.01, 100.0, &mid[k]);
        avi_engine_destroy(e);
        avi_model_destroy(m);
    }
    /* First order for the mid-step estimate, second for the synchronized. */
    ck_assert_msg(mid[0] / mid[1] > 1.7 && mid[0] / mid[1] < 2.3, "mid-step bands %.4g %.4g", mid[0], mid[1]);
    ck_assert_msg(sync[0] / sync[1] > 3.3 && sync[0] / sync[1] < 4.7, "synchronized bands %.4g %.4g", sync[0], sync[1]);
    ck_assert_double_lt(sync[0], 0.2 * mid[0]);
}
END_TEST

/* At a common step the synchronous explicit update is the AVI's trajectory
 * (test_engine.c); its observable owes the same impulses and amplitude
 * terms (its one clock, avi_stepper_ops.owed_clock). */
START_TEST(test_sync_explicit_reports_the_same)
{
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = 0.05;
    avi_model *ma = graded_chain(&r), *ms = graded_chain(&r);
    avi_sync_options so = avi_default_sync_options();
    so.h = 0.05;
    avi_engine *a = avi_engine_create(ma, NULL), *s = avi_engine_create_with(ms, &so, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(s);
    double most = 0.0; /* the largest correction seen: the observable is not the mid-step one */
    for (int k = 0; k <= 200; k++) {
        double t = 0.0137 * k; /* off and on the grid */
        ck_assert_int_eq(avi_engine_advance(a, t), 0);
        ck_assert_int_eq(avi_engine_advance(s, t), 0);
        avi_observation oa, os;
        avi_engine_observe(a, t, &oa);
        avi_engine_observe(s, t, &os);
        ck_assert_msg(fabs(oa.kinetic - os.kinetic) <= 1e-12 * oa.total, "t = %g: %.17g vs %.17g", t, oa.kinetic,
                      os.kinetic);
        ck_assert_double_eq_tol(oa.kinetic_midstep, os.kinetic_midstep, 1e-12 * oa.total);
        ck_assert_double_eq_tol(oa.total, os.total, 1e-12 * oa.total);
        most = fmax(most, fabs(os.kinetic - os.kinetic_midstep) / os.total);
    }
    ck_assert_double_gt(most, 1e-3);
    avi_engine_destroy(a);
    avi_engine_destroy(s);
    avi_model_destroy(ma);
    avi_model_destroy(ms);
}
END_TEST

/* A chain of n unit masses on unit springs, every spring on a fixed step of 0.05 s. */
static avi_model *chain(uint32_t n)
{
    avi_model *m = avi_model_create();
    int b = avi_model_add_body(m, "chain");
    for (uint32_t i = 0; i <= n; i++) avi_model_add_vertex(m, b, (const double[3]){1.1 * i, 0, 0});
    ck_assert_int_eq(avi_model_pin(m, 0), 0);
    for (uint32_t i = 0; i < n; i++) {
        ck_assert_int_eq(avi_model_add_mass(m, i + 1, 1.0), 0);
        ck_assert_int_eq(avi_model_add_spring(m, i, i + 1, 1.0, 1.0), 0);
    }
    avi_time_step r = avi_default_time_step();
    r.rule = AVI_DT_FIXED;
    r.fixed = 0.05;
    ck_assert_int_eq(avi_model_finalize(m, &r), 0);
    return m;
}

/* output.synchronized_every's auto (avi_synchronized_every): 1000 springs
 * on steps of 0.05 s fire 1000 dt_row / 0.05 times between rows; the
 * pair's 3 x 1000 gradients may be a tenth of that many rows' events, at
 * most 100; a model of fewer than 1000 potentials keeps every row. */
START_TEST(test_synchronized_every_rule)
{
    avi_model *ma = chain(1000), *ms = chain(1000), *mi = chain(1000), *small = chain(999);
    avi_sync_options so = avi_default_sync_options(), si = so;
    so.h = 0.05;
    si.type = AVI_INTEGRATOR_SYNC_IMPLICIT;
    si.h = 0.05;
    avi_engine *a = avi_engine_create(ma, NULL), *s = avi_engine_create_with(ms, &so, NULL);
    avi_engine *i = avi_engine_create_with(mi, &si, NULL), *sm = avi_engine_create(small, NULL);
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_nonnull(i);
    ck_assert_ptr_nonnull(sm);
    /* 1000 x 0.07 / 0.05 = 1400 events a row: N = ceil(3000 / 140) = 22 */
    ck_assert_int_eq(avi_synchronized_every(a, 0.07), 22);
    ck_assert_int_eq(avi_synchronized_every(s, 0.07), 22);
    /* rows every 1 ms: 20 events a row, 1500 by the rule, at most 100 */
    ck_assert_int_eq(avi_synchronized_every(a, 0.001), 100);
    /* rows sparser than the clocks: every row */
    ck_assert_int_eq(avi_synchronized_every(a, 10.0), 1);
    /* sync-implicit owes nothing: its state is on the grid */
    ck_assert_int_eq(avi_synchronized_every(i, 0.07), 1);
    ck_assert_int_eq(avi_synchronized_every(sm, 0.07), 1);
    avi_engine_destroy(a);
    avi_engine_destroy(s);
    avi_engine_destroy(i);
    avi_engine_destroy(sm);
    avi_model_destroy(ma);
    avi_model_destroy(ms);
    avi_model_destroy(mi);
    avi_model_destroy(small);
}
END_TEST

static Suite *energy_observable_suite(void)
{
    Suite *s = suite_create("energy_observable");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_spring_band_is_fourth_order);
    tcase_add_test(tc, test_graded_chain_converges);
    tcase_add_test(tc, test_sync_explicit_reports_the_same);
    tcase_add_test(tc, test_synchronized_every_rule);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(energy_observable_suite)
