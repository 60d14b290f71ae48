/* The rows `avi run` writes are the values the engine computes in process:
 * the same scene run here, observed at the same times, gives bitwise the
 * same energies, momenta, counts and frames. */
#include "check_main.h"
#include "avi/avi.h"

#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AVI_BIN "build/avi"

typedef struct {
    size_t n;
    avi_observation o[512];
    size_t nf;
    double frame_x[64][3 * 1100];
} record;

static int energy_obs(const avi_engine *e, double t, void *user)
{
    record *r = user;
    if (r->n < 512) avi_engine_observe(e, t, &r->o[r->n]);
    r->n++;
    return 0;
}

static int frame_obs(const avi_engine *e, double t, void *user)
{
    record *r = user;
    if (r->nf < 64) avi_engine_state_at(e, t, r->frame_x[r->nf], NULL);
    r->nf++;
    return 0;
}

static double *read_ds(hid_t f, const char *path, size_t *n)
{
    hid_t ds = H5Dopen2(f, path, H5P_DEFAULT);
    ck_assert_msg(ds >= 0, "missing %s", path);
    hid_t sp = H5Dget_space(ds);
    *n = (size_t)H5Sget_simple_extent_npoints(sp);
    double *v = malloc(*n * sizeof *v);
    ck_assert(H5Dread(ds, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) >= 0);
    H5Sclose(sp);
    H5Dclose(ds);
    return v;
}

static void check_scene(const char *name, const char **sets, size_t nsets)
{
    if (access(AVI_BIN, X_OK) != 0) {
        printf("skipped: %s not built\n", AVI_BIN);
        return;
    }
    char dir[] = "/tmp/avi_obs_XXXXXX";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    char out[256], cmd[2048];
    snprintf(out, sizeof out, "%s/run.h5", dir);
    int k = snprintf(cmd, sizeof cmd, "%s run %s -o %s --quiet", AVI_BIN, name, out);
    for (size_t i = 0; i < nsets; i++) k += snprintf(cmd + k, sizeof cmd - (size_t)k, " --set '%s'", sets[i]);
    ck_assert_int_eq(system(cmd), 0);

    /* The same run in process. */
    avi_scene s;
    avi_error err;
    ck_assert_int_eq(avi_scene_load_builtin(name, sets, nsets, &s, &err), 0);
    avi_model *m;
    avi_scene_bodies info;
    ck_assert_int_eq(avi_scene_build(&s, &m, &info, &err), 0);
    avi_engine *e = avi_engine_create_for_scene(&s, &info, m, &err);
    ck_assert_ptr_nonnull(e);
    record *r = calloc(1, sizeof *r);
    avi_engine_add_observer(e, s.output.energy_every, energy_obs, r);
    avi_engine_add_observer(e, s.output.frame_every, frame_obs, r);
    ck_assert_int_eq(avi_engine_run(e, s.end_time), AVI_OK);
    ck_assert(r->n <= 512 && r->nf <= 64);

    hid_t f = H5Fopen(out, H5F_ACC_RDONLY, H5P_DEFAULT);
    ck_assert(f >= 0);
    size_t n;
    double *el = read_ds(f, "/observables/elastic_energy/value", &n);
    ck_assert_uint_eq(n, r->n);
    double *ct = read_ds(f, "/observables/contact_energy/value", &n);
    double *tm = read_ds(f, "/observables/elastic_energy/time", &n);
    double *lin = read_ds(f, "/observables/linear_momentum/value", &n);
    double *ang = read_ds(f, "/observables/angular_momentum/value", &n);
    double *ev = read_ds(f, "/observables/events/value", &n);
    for (size_t i = 0; i < r->n; i++) {
        const avi_observation *o = &r->o[i];
        ck_assert(tm[i] == o->time && el[i] == o->elastic && ct[i] == o->contact &&
                  ev[i] == (double)o->events_total);
        for (int c = 0; c < 3; c++)
            ck_assert(lin[3 * i + c] == o->linear_momentum[c] && ang[3 * i + c] == o->angular_momentum[c]);
    }
    /* The synchronized energies (output.synchronized_every): at their own
     * rows, each one of the in-process rows, bitwise; the first and the last
     * among them. */
    size_t ns;
    double *ke = read_ds(f, "/observables/kinetic_energy/value", &ns);
    double *tot = read_ds(f, "/observables/total_energy/value", &n);
    ck_assert_uint_eq(n, ns);
    double *ts = read_ds(f, "/observables/total_energy/time", &n);
    ck_assert_uint_eq(n, ns);
    ck_assert(ns >= 2 && ts[0] == r->o[0].time && ts[ns - 1] == r->o[r->n - 1].time);
    for (size_t j = 0, i = 0; j < ns; j++) {
        while (i < r->n && r->o[i].time != ts[j]) i++;
        ck_assert_msg(i < r->n, "synchronized row at t = %g is not a row", ts[j]);
        ck_assert(ke[j] == r->o[i].kinetic && tot[j] == r->o[i].total);
    }
    free(ts);
    /* Frames: each body's positions are its slice of the state. */
    for (size_t b = 0; b < info.count; b++) {
        char path[256];
        snprintf(path, sizeof path, "/particles/%s/position/value", info.bodies[b].name);
        double *x = read_ds(f, path, &n);
        size_t nvb = info.bodies[b].vertex_count;
        ck_assert_uint_eq(n, r->nf * nvb * 3);
        for (size_t fr = 0; fr < r->nf; fr++)
            ck_assert(memcmp(&x[fr * nvb * 3], &r->frame_x[fr][3 * info.bodies[b].first_vertex],
                             nvb * 3 * sizeof(double)) == 0);
        free(x);
    }
    printf("%s: %zu rows and %zu frames identical to the in-process run\n", name, r->n, r->nf);
    free(ke); free(el); free(ct); free(tot); free(tm); free(lin); free(ang); free(ev);
    H5Fclose(f);
    free(r);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    avi_scene_bodies_free(&info);
    avi_scene_free(&s);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_bar_rows_match)
{
    const char *sets[] = {"time.end=0.3", "output.energy_every=0.01", "output.frame_every=0.05", "bodies.0.mesh.nx=10",
                          "bodies.0.mesh.ny=2", "bodies.0.mesh.nz=2"};
    check_scene("bar", sets, 6);
}
END_TEST

START_TEST(test_sphere_plate_rows_match)
{
    const char *sets[] = {"time.end=1e-4", "output.energy_every=1e-6", "output.frame_every=2e-5",
                          "bodies.sphere.mesh.subdivisions=2", "bodies.plate.mesh.rings=8",
                          "bodies.sphere.translate=[0,0,0.1265]"};
    check_scene("sphere-plate", sets, 6);
}
END_TEST

static Suite *cli_obs_suite(void)
{
    Suite *s = suite_create("cli_observables");
    TCase *tc = tcase_create("rows");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_bar_rows_match);
    tcase_add_test(tc, test_sphere_plate_rows_match);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(cli_obs_suite)
