/* The library run API (avi/run.h): a run opened on a scene writes the same
 * file as `avi run`, the blow-up check stops it, and a stop flag gives an
 * interrupted file whose checkpoint resumes to the same bits. */
#include "check_main.h"
#include "avi/avi.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define AVI_BIN "build/avi"

/* bar: tetrahedra, 50 rows and 5 frames. */
static const char *const bar_sets[] = {"time.end=2e-3", "output.energy_every=4e-5", "output.frame_every=4e-4"};
#define NSETS (sizeof bar_sets / sizeof *bar_sets)

static void load_bar(avi_scene *s, const char *extra)
{
    const char *sets[NSETS + 1];
    memcpy(sets, bar_sets, sizeof bar_sets);
    sets[NSETS] = extra;
    avi_error err;
    ck_assert_msg(avi_scene_load_builtin("bar", sets, NSETS + (extra != NULL), s, &err) == 0, "%s", err.message);
}

/* Runs bar through the API to `out`; returns the evolve status, err set. */
static int api_run(const char *out, const char *extra, const avi_run_options *opt, avi_error *err)
{
    avi_scene s;
    load_bar(&s, extra);
    avi_run *r = avi_run_open(&s, out, opt, err);
    ck_assert_msg(r != NULL, "%s", err->message);
    int rc = avi_run_evolve(r, avi_run_stats_of(r).end_time, err);
    avi_error cerr;
    ck_assert_msg(avi_run_close(r, &cerr) == 0, "%s", cerr.message);
    avi_scene_free(&s);
    return rc;
}

/* /observables and /particles of two files, value for value (h5diff). */
static int same_output(const char *a, const char *b)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "h5diff -q %s %s /observables /observables && h5diff -q %s %s /particles /particles",
             a, b, a, b);
    return system(cmd) == 0;
}

static int completion_is(const char *path, const char *prefix)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    avi_error err;
    int ok = avi_h5_info(path, m, &err) == 0;
    fclose(m);
    const char *c = ok && text ? strstr(text, "completion:") : NULL;
    if (c) c += strspn(c + 11, " ") + 11;
    ok = c && strncmp(c, prefix, strlen(prefix)) == 0;
    if (!ok) printf("%s: expected completion '%s' in:\n%s\n", path, prefix, text ? text : "");
    free(text);
    return ok;
}

static char *tmpdir(void)
{
    static char dir[64];
    snprintf(dir, sizeof dir, "/tmp/avi_runapi_XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

static void rm_dir(const char *dir)
{
    char cmd[256];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(api_run_matches_cli)
{
    if (access(AVI_BIN, X_OK) != 0) {
        printf("skipped: %s not built\n", AVI_BIN);
        return;
    }
    const char *dir = tmpdir();
    char api[128], cli[128], cmd[1024];
    snprintf(api, sizeof api, "%s/api.h5", dir);
    snprintf(cli, sizeof cli, "%s/cli.h5", dir);
    avi_error err;
    ck_assert_int_eq(api_run(api, NULL, NULL, &err), AVI_OK);
    int k = snprintf(cmd, sizeof cmd, "%s run bar -o %s --quiet", AVI_BIN, cli);
    for (size_t i = 0; i < NSETS; i++) k += snprintf(cmd + k, sizeof cmd - (size_t)k, " --set %s", bar_sets[i]);
    ck_assert_int_eq(system(cmd), 0);
    ck_assert(same_output(api, cli));
    ck_assert(completion_is(api, "complete"));
    rm_dir(dir);
}
END_TEST

START_TEST(api_run_checks_blow_up)
{
    const char *dir = tmpdir();
    char out[128];
    snprintf(out, sizeof out, "%s/blow.h5", dir);
    avi_error err;
    /* The scale is M (L / T)^2, about 3e3 J on this short run, and the
     * energy observable's error 2e-13 to 2e-12 J (docs/energy_observable.md;
     * 1e-8 J with the velocity-Verlet energy): 1e-18 of it trips. */
    ck_assert_int_eq(api_run(out, "output.max_energy_growth=1e-18", NULL, &err), AVI_ERR_RUN);
    ck_assert_int_eq(err.status, AVI_ERR_RUN);
    ck_assert_msg(strstr(err.message, "blow-up at t = ") && strstr(err.message, "output.max_energy_growth"), "%s",
                  err.message);
    ck_assert(completion_is(out, "failed: blow-up at t = "));
    rm_dir(dir);
}
END_TEST

START_TEST(api_stop_flag_interrupts_and_resumes)
{
    const char *dir = tmpdir();
    char ref[128], out[128], ckpt[160];
    snprintf(ref, sizeof ref, "%s/ref.h5", dir);
    snprintf(out, sizeof out, "%s/int.h5", dir);
    snprintf(ckpt, sizeof ckpt, "%s.ckpt", out);
    avi_error err;
    ck_assert_int_eq(api_run(ref, NULL, NULL, &err), AVI_OK);

    /* As a signal handler would set it, before the run starts. */
    volatile sig_atomic_t stop = SIGINT;
    avi_run_options opt = avi_default_run_options();
    opt.stop = &stop;
    ck_assert_int_eq(api_run(out, NULL, &opt, &err), AVI_INTERRUPTED);
    ck_assert_int_eq(access(ckpt, R_OK), 0);
    ck_assert(completion_is(out, "interrupted"));

    stop = 0;
    avi_run *r = avi_run_open_resume(out, NULL, 0, &opt, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    avi_run_stats st = avi_run_stats_of(r);
    ck_assert(st.time == 0.0 && st.end_time == 2e-3);
    ck_assert_int_eq(avi_run_evolve(r, st.end_time, &err), AVI_OK);
    ck_assert(avi_run_stats_of(r).time == 2e-3 && avi_run_stats_of(r).events > 0);
    ck_assert_int_eq(avi_run_close(r, &err), AVI_OK);
    ck_assert(same_output(ref, out));
    ck_assert(completion_is(out, "complete"));

    /* Only the end time may change on resume. */
    const char *bad[] = {"output.file=x.h5"};
    ck_assert_ptr_null(avi_run_open_resume(out, bad, 1, NULL, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_ptr_nonnull(strstr(err.message, "only --set time.end=T"));
    rm_dir(dir);
}
END_TEST

/* The command line a caller gives is recorded, shell-quoted by
 * avi_command_line; none gives ""; the other provenance is filled. */
START_TEST(api_records_provenance)
{
    char *const argv[] = {"avi", "run", "a b", "it's", "", "x=1,y"};
    char *cl = avi_command_line(6, argv);
    ck_assert_str_eq(cl, "avi run 'a b' 'it'\\''s' '' x=1,y");
    char *dir = tmpdir(), out[128];
    snprintf(out, sizeof out, "%s/p.h5", dir);
    avi_run_options opt = avi_default_run_options();
    opt.command_line = cl;
    avi_error err;
    ck_assert_int_eq(api_run(out, NULL, &opt, &err), AVI_OK);
    char *got = avi_h5_read_text(out, "/parameters/command_line");
    char *started = avi_h5_read_text(out, "/parameters/started");
    char *build = avi_h5_read_text(out, "/parameters/build");
    ck_assert_str_eq(got, cl);
    ck_assert_uint_eq(strlen(started), 20);
    ck_assert_ptr_nonnull(strstr(build, AVI_VERSION_STRING));
    free(got);
    free(started);
    free(build);
    ck_assert_int_eq(api_run(out, NULL, NULL, &err), AVI_OK);
    got = avi_h5_read_text(out, "/parameters/command_line");
    ck_assert_str_eq(got, "");
    free(got);
    free(cl);
    rm_dir(dir);
}
END_TEST

/* A t_end that is NaN, infinite or before the run's time is the caller's
 * mistake: AVI_ERR_INPUT, and the run goes on as if it had not been asked
 * (it evolves to its end and closes complete, the same bits as a run that
 * was never asked). */
START_TEST(api_evolve_refuses_bad_end_time)
{
    char *dir = tmpdir(), ref[128], out[128];
    snprintf(ref, sizeof ref, "%s/ref.h5", dir);
    snprintf(out, sizeof out, "%s/bad.h5", dir);
    avi_error err;
    ck_assert_int_eq(api_run(ref, NULL, NULL, &err), AVI_OK);
    avi_scene s;
    load_bar(&s, NULL);
    avi_run *r = avi_run_open(&s, out, NULL, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    const double bad[] = {NAN, INFINITY, -INFINITY, -1e-3};
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        memset(&err, 0, sizeof err);
        ck_assert_int_eq(avi_run_evolve(r, bad[k], &err), AVI_ERR_INPUT);
        ck_assert_int_eq(err.status, AVI_ERR_INPUT);
        ck_assert_ptr_nonnull(strstr(err.message, "end time"));
    }
    ck_assert(avi_run_stats_of(r).time == 0.0);
    ck_assert_int_eq(avi_run_evolve(r, 2e-3, &err), AVI_OK);
    ck_assert_int_eq(avi_run_close(r, &err), AVI_OK);
    ck_assert(completion_is(out, "complete"));
    ck_assert(same_output(ref, out));
    avi_scene_free(&s);
    rm_dir(dir);
}
END_TEST

/* Closing NULL does nothing, as the destroy functions (it crashed). */
START_TEST(api_close_null)
{
    avi_error err;
    memset(&err, 0, sizeof err);
    err.status = AVI_ERR_RUN;
    ck_assert_int_eq(avi_run_close(NULL, &err), AVI_OK);
    ck_assert_int_eq(err.status, AVI_OK);
    ck_assert_int_eq(avi_run_close(NULL, NULL), AVI_OK);
}
END_TEST

/* Each run draws its own /parameters/run_id (32 hex digits); a resume
 * keeps it. */
START_TEST(api_run_id)
{
    char *dir = tmpdir(), a[128], b[128];
    snprintf(a, sizeof a, "%s/a.h5", dir);
    snprintf(b, sizeof b, "%s/b.h5", dir);
    avi_error err;
    volatile sig_atomic_t stop = SIGINT;
    avi_run_options opt = avi_default_run_options();
    opt.stop = &stop;
    ck_assert_int_eq(api_run(a, NULL, &opt, &err), AVI_INTERRUPTED);
    ck_assert_int_eq(api_run(b, NULL, NULL, &err), AVI_OK);
    char *ia = avi_h5_read_text(a, "/parameters/run_id"), *ib = avi_h5_read_text(b, "/parameters/run_id");
    ck_assert_uint_eq(strlen(ia), 32);
    ck_assert_uint_eq(strspn(ia, "0123456789abcdef"), 32);
    ck_assert_uint_eq(strlen(ib), 32);
    ck_assert_str_ne(ia, ib);
    stop = 0;
    avi_run *r = avi_run_open_resume(a, NULL, 0, &opt, &err);
    ck_assert_msg(r != NULL, "%s", err.message);
    ck_assert_int_eq(avi_run_evolve(r, avi_run_stats_of(r).end_time, &err), AVI_OK);
    ck_assert_int_eq(avi_run_close(r, &err), AVI_OK);
    char *again = avi_h5_read_text(a, "/parameters/run_id");
    ck_assert_str_eq(again, ia);
    free(ia);
    free(ib);
    free(again);
    rm_dir(dir);
}
END_TEST

/* avi_run_options.threads out of range, and a hand-built scene's
 * parallel.threads past the limit, are the caller's mistake: AVI_ERR_INPUT
 * naming the field, no file written. Any valid count, from the option or
 * the scene, gives the default run's bits. */
START_TEST(api_threads)
{
    char *dir = tmpdir(), ref[128], out[128];
    snprintf(ref, sizeof ref, "%s/ref.h5", dir);
    snprintf(out, sizeof out, "%s/t.h5", dir);
    avi_error err;
    ck_assert_int_eq(api_run(ref, NULL, NULL, &err), AVI_OK);
    avi_scene s;
    load_bar(&s, NULL);
    avi_run_options opt = avi_default_run_options();
    const int bad[] = {-2, -3, AVI_RUN_MAX_THREADS + 1}; /* -1: AVI_RUN_THREADS_AUTO */
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        opt.threads = bad[k];
        ck_assert_ptr_null(avi_run_open(&s, out, &opt, &err));
        ck_assert_int_eq(err.status, AVI_ERR_INPUT);
        ck_assert_msg(strstr(err.message, "avi_run_options.threads"), "%s", err.message);
        ck_assert_int_ne(access(out, F_OK), 0);
    }
    s.threads = AVI_RUN_MAX_THREADS + 1;
    opt.threads = 0;
    ck_assert_ptr_null(avi_run_open(&s, out, &opt, &err));
    ck_assert_int_eq(err.status, AVI_ERR_INPUT);
    ck_assert_msg(strstr(err.message, "parallel.threads"), "%s", err.message);
    ck_assert_int_ne(access(out, F_OK), 0);
    avi_scene_free(&s);
    opt.threads = 3;
    ck_assert_int_eq(api_run(out, "parallel.threads=2", &opt, &err), AVI_OK);
    ck_assert(same_output(ref, out));
    opt.threads = AVI_RUN_THREADS_AUTO;
    ck_assert_int_eq(api_run(out, NULL, &opt, &err), AVI_OK);
    ck_assert(same_output(ref, out));
    rm_dir(dir);
}
END_TEST

static Suite *make_suite(void)
{
    Suite *s = suite_create("run_api");
    TCase *tc = tcase_create("run_api");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, api_run_matches_cli);
    tcase_add_test(tc, api_run_checks_blow_up);
    tcase_add_test(tc, api_stop_flag_interrupts_and_resumes);
    tcase_add_test(tc, api_records_provenance);
    tcase_add_test(tc, api_evolve_refuses_bad_end_time);
    tcase_add_test(tc, api_close_null);
    tcase_add_test(tc, api_run_id);
    tcase_add_test(tc, api_threads);
    suite_add_tcase(s, tc);
    return s;
}

AVI_CHECK_MAIN(make_suite)
