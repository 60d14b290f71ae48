/* Regression on a coarse sphere-plate impact (the built-in scene with
 * icosphere subdivisions 2 and disk rings 8): momentum conservation to
 * round-off, bounded energy, the closest approach above the inner layer
 * thickness, and no interpenetration in the written frames by
 * build/tests/check_penetration (which shares no code with the contact
 * code). At 100 m/s the run covers the impact and the rebound (contact ends
 * at about 1.6 ms); the same scene at 1000 m/s covers the crash. */
#include "../unit/check_main.h"
#include "avi/avi.h"
#include "avi/output.h"
#include "avi/scene.h"
#include "avi/sync.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
    double p0[3], l0[3], p_scale, l_scale;
    double p_err, l_err, e0, e_dev, min_distance, max_contact;
    uint64_t max_active;
    avi_h5_writer *w;
    double (*x)[3], (*v)[3];
} run_state;

static double norm3(const double *a) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static int on_row(const avi_engine *e, double t, void *user)
{
    run_state *s = user;
    avi_observation o;
    avi_engine_observe(e, t, &o);
    double dp[3], dl[3];
    for (int c = 0; c < 3; c++) {
        dp[c] = o.linear_momentum[c] - s->p0[c];
        dl[c] = o.angular_momentum[c] - s->l0[c];
    }
    s->p_err = fmax(s->p_err, norm3(dp) / s->p_scale);
    s->l_err = fmax(s->l_err, norm3(dl) / s->l_scale);
    s->e_dev = fmax(s->e_dev, fabs(o.total + o.friction_work - s->e0) / fabs(s->e0));
    s->min_distance = fmin(s->min_distance, o.min_contact_distance);
    s->max_contact = fmax(s->max_contact, o.contact);
    if (o.active_contact_potentials > s->max_active) s->max_active = o.active_contact_potentials;
    return avi_h5_write_observation(s->w, (int64_t)o.events_total, &o);
}

static int on_frame(const avi_engine *e, double t, void *user)
{
    run_state *s = user;
    avi_engine_state_at(e, t, &s->x[0][0], &s->v[0][0]);
    return avi_h5_write_frame(s->w, (int64_t)avi_engine_events_total(e), t, (const double (*)[3])s->x,
                              (const double (*)[3])s->v) ||
           avi_h5_flush(s->w);
}

/* check_penetration beside this program: its exit status (0: no
 * penetration), or -1 when it is not there; *min_d its minimum distance. */
static int check_penetration(const char *h5, double *min_d)
{
    char exe[4096], cmd[4600], line[512];
    *min_d = INFINITY;
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) return -1;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return -1;
    snprintf(slash + 1, sizeof exe - (size_t)(slash + 1 - exe), "check_penetration");
    if (access(exe, X_OK) != 0) {
        printf("  check_penetration: %s is missing, skipped\n", exe);
        return -1;
    }
    snprintf(cmd, sizeof cmd, "'%s' '%s' --min-distance --radius 0.01 2>&1", exe, h5);
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    while (fgets(line, sizeof line, p)) {
        printf("  check_penetration: %s", line);
        double d;
        if (sscanf(line, "min distance %lf", &d) == 1) *min_d = d;
    }
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

/* mu > 0: with friction, energy + friction work must stay in the band and
 * angular momentum is only reported (the friction impulse acts across the
 * gap: it changes L by d n x P, d <= eta_1). `translate`: the sphere's, or
 * NULL for the scene's. */
static void sphere_plate(const char *velocity, const char *end, const char *frame_every, const char *what, double mu,
                         const char *translate)
{
    char set_v[64], set_end[64], set_frame[64], set_mu[64], set_at[64];
    snprintf(set_v, sizeof set_v, "bodies.sphere.velocity=%s", velocity);
    snprintf(set_end, sizeof set_end, "time.end=%s", end);
    snprintf(set_frame, sizeof set_frame, "output.frame_every=%s", frame_every);
    snprintf(set_mu, sizeof set_mu, "contact.friction=%.17g", mu);
    snprintf(set_at, sizeof set_at, "bodies.sphere.translate=%s", translate ? translate : "[0,0,0.130]");
    const char *sets[] = {"bodies.sphere.mesh.subdivisions=2", "bodies.plate.mesh.rings=8", set_v, set_end, set_frame,
                          "output.energy_every=1e-6", set_mu, set_at};
    avi_scene sc;
    avi_error err;
    ck_assert_msg(avi_scene_load_builtin("sphere-plate", sets, 8, &sc, &err) == AVI_OK, "%s", err.message);
    avi_model *m;
    avi_scene_bodies info;
    ck_assert_msg(avi_scene_build(&sc, &m, &info, &err) == AVI_OK, "%s", err.message);
    avi_engine *e = avi_engine_create_for_scene(&sc, &info, m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);

    size_t nv = avi_model_vertex_count(m);
    double *mass = malloc(nv * sizeof *mass);
    avi_h5_body *hb = calloc(info.count, sizeof *hb);
    for (size_t i = 0; i < nv; i++) mass[i] = avi_model_vertex_mass(m, (uint32_t)i);
    for (size_t b = 0; b < info.count; b++) {
        const avi_scene_body_info *bi = &info.bodies[b];
        hb[b] = (avi_h5_body){bi->name, bi->first_vertex, bi->vertex_count, mass + bi->first_vertex,
                              (const uint32_t (*)[3])bi->triangles, bi->triangle_count, NULL, 0};
    }
    char dir[] = "/tmp/avi_sphere_plate_XXXXXX", path[128];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/run.h5", dir);
    avi_h5_layout L;
    memset(&L, 0, sizeof L);
    L.path = path;
    L.xdmf_path = "";
    L.bodies = hb;
    L.body_count = (int)info.count;
    L.scene_name = sc.name;
    L.scene_text = sc.text;
    L.integrator = "avi";
    L.end_time = sc.end_time;
    L.energy_every = sc.output.energy_every;
    L.frame_every = sc.output.frame_every;
    L.vertex_count = nv;

    run_state s;
    memset(&s, 0, sizeof s);
    s.x = malloc(nv * sizeof *s.x);
    s.v = malloc(nv * sizeof *s.v);
    s.w = avi_h5_create(&L, &err);
    ck_assert_msg(s.w != NULL, "%s", err.message);
    /* Momentum errors relative to sum m |v| and sum m |x| |v| at t = 0. */
    avi_engine_state_at(e, 0.0, &s.x[0][0], &s.v[0][0]);
    for (size_t i = 0; i < nv; i++) {
        s.p_scale += mass[i] * norm3(s.v[i]);
        s.l_scale += mass[i] * norm3(s.v[i]) * norm3(s.x[i]);
    }
    avi_observation o0;
    avi_engine_observe(e, 0.0, &o0);
    memcpy(s.p0, o0.linear_momentum, sizeof s.p0);
    memcpy(s.l0, o0.angular_momentum, sizeof s.l0);
    s.e0 = o0.total;
    s.min_distance = INFINITY;
    ck_assert_int_eq(avi_engine_add_observer(e, sc.output.energy_every, on_row, &s), 0);
    ck_assert_int_eq(avi_engine_add_observer(e, sc.output.frame_every, on_frame, &s), 0);
    int rc = avi_engine_run(e, sc.end_time);
    ck_assert_msg(rc == AVI_OK, "%s", avi_engine_error(e)->message);
    ck_assert_int_eq(avi_h5_close(s.w, "complete", &err), 0);

    double eta_inf = sc.contact.inner_thickness, checker_d;
    int checker = check_penetration(path, &checker_d);
    avi_observation o;
    avi_engine_observe(e, sc.end_time, &o);
    printf("sphere-plate %s, friction %g: %llu events (%llu contact), momentum rel. error linear %.2e angular %.2e, "
           "max |E+W-E0|/E0 %.3e, final (E-E0)/E0 %+.3e, friction work W/E0 %.3e, max contact energy / E0 %.3e, "
           "max active potentials %llu, min contact distance (engine) %.4e, (check_penetration, frames) %.4e, "
           "eta_inf %.1e\n",
           what, mu, (unsigned long long)avi_engine_events_total(e),
           (unsigned long long)avi_engine_event_count(e, AVI_KIND_CONTACT), s.p_err, s.l_err, s.e_dev,
           (o.total - s.e0) / s.e0, o.friction_work / s.e0, s.max_contact / s.e0, (unsigned long long)s.max_active,
           s.min_distance, checker_d, eta_inf);
    ck_assert(s.p_err <= 1e-12);
    if (mu == 0.0) {
        ck_assert(s.l_err <= 1e-12);
        /* Synchronized energy (docs/energy_observable.md): 2.7e-3 and 5.9e-4
         * here (mid-step estimate 3.6e-3 and 2.2e-3); was <= 0.02. */
        ck_assert(s.e_dev <= 0.006);
    } else {
        /* |dL| <= sum over events of d |P| <= eta_1 mu sum J_n, about
         * eta_1 mu 2 m |v_n| against the scale m |v| |x| (|x| ~ 0.13 m):
         * 4e-3 here; measured 8e-5 to 6e-4. */
        ck_assert(o.friction_work > 0.0);
        ck_assert(s.l_err <= 4e-3);
        ck_assert(s.e_dev <= 0.02);
    }
    ck_assert(s.max_active > 0);
    ck_assert(s.min_distance > eta_inf);
    ck_assert(checker <= 0);
    if (checker == 0) ck_assert(checker_d > eta_inf);

    unlink(path);
    rmdir(dir);
    free(s.x);
    free(s.v);
    free(mass);
    free(hb);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&sc);
}

/* Contact starts at about 40 us; the relative velocity reverses at about
 * 0.8 ms and the bodies part at about 1.6 ms. */
START_TEST(test_sphere_plate_100)
{
    sphere_plate("[0,0,-100]", avi_test_long() ? "4e-3" : "1.7e-3", "2e-5", "100 m/s", 0.0, NULL);
}
END_TEST

/* With friction 0.3, oblique: 1 m/s (started 1.5 mm above the plate), 100
 * and 1000 m/s, each with a tangential component of 40 % of the normal. */
START_TEST(test_sphere_plate_friction)
{
    sphere_plate("[0.4,0,-1]", "4e-3", "1e-4", "1 m/s oblique", 0.3, "[0,0,0.1265]");
    sphere_plate("[40,0,-100]", "1.7e-3", "2e-5", "100 m/s oblique", 0.3, NULL);
    sphere_plate("[400,0,-1000]", "1e-4", "2e-6", "1000 m/s oblique", 0.3, NULL);
}
END_TEST

START_TEST(test_sphere_plate_1000)
{
    sphere_plate("[0,0,-1000]", avi_test_long() ? "6e-4" : "1e-4", "2e-6", "1000 m/s", 0.0, NULL);
}
END_TEST

/* The synchronized energy (docs/energy_observable.md) is continuous across
 * events, contact ones included: an event's impulse moves the mid-step
 * velocity, and the owed impulse moves back by as much. Sampled every 5 ns
 * (a contact layer's step is 0.1-0.6 us) from 40 to 60 us (about 650 rows
 * in contact),
 * its largest row-to-row change is a small fraction of the mid-step
 * estimate's (2.7e-3 measured over 40-120 us). Without the contact
 * potentials' share the contact events' jumps stay: the ratio is 1.0. */
START_TEST(test_synchronized_energy_through_contact)
{
    const char *sets[] = {"bodies.sphere.mesh.subdivisions=2", "bodies.plate.mesh.rings=8"};
    avi_scene sc;
    avi_error err;
    ck_assert_msg(avi_scene_load_builtin("sphere-plate", sets, 2, &sc, &err) == AVI_OK, "%s", err.message);
    avi_model *m;
    avi_scene_bodies info;
    ck_assert_msg(avi_scene_build(&sc, &m, &info, &err) == AVI_OK, "%s", err.message);
    avi_engine *e = avi_engine_create_for_scene(&sc, &info, m, &err);
    ck_assert_msg(e != NULL, "%s", err.message);
    ck_assert_int_eq(avi_engine_advance(e, 4e-5), AVI_OK);
    avi_observation prev, o;
    avi_engine_observe(e, 4e-5, &prev);
    double d_sync = 0.0, d_mid = 0.0;
    int rows = 0;
    for (int k = 1; k <= 4000; k++) {
        double t = 4e-5 + 5e-9 * k;
        ck_assert_int_eq(avi_engine_advance(e, t), AVI_OK);
        avi_engine_observe(e, t, &o);
        if (o.contact > 0.0 && prev.contact > 0.0) {
            d_sync = fmax(d_sync, fabs(o.total - prev.total));
            d_mid = fmax(d_mid, fabs(o.total_midstep - prev.total_midstep));
            rows++;
        }
        prev = o;
    }
    printf("sphere-plate contact, rows every 5 ns: largest change between rows, synchronized %.3e J, mid-step %.3e J "
           "(ratio %.2e, %d rows in contact)\n", d_sync, d_mid, d_sync / d_mid, rows);
    ck_assert_int_gt(rows, 500);
    ck_assert_double_lt(d_sync, 0.02 * d_mid);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&sc);
}
END_TEST

static Suite *sphere_plate_suite(void)
{
    Suite *s = suite_create("sphere_plate");
    TCase *tc = tcase_create("impact");
    tcase_set_timeout(tc, 1200);
    tcase_add_test(tc, test_sphere_plate_100);
    tcase_add_test(tc, test_sphere_plate_1000);
    tcase_add_test(tc, test_sphere_plate_friction);
    tcase_add_test(tc, test_synchronized_energy_through_contact);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(sphere_plate_suite)
