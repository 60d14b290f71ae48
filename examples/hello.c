/* hello.c: runs the built-in bar scene for 0.01 s into hello.h5 through
 * libavi, as `avi run bar -o hello.h5 --set time.end=0.01` does. The
 * README's section "C" says how to build it. */
#include <stdio.h>
#include <avi/avi.h>

int main(void)
{
    const char *set[] = {"time.end=0.01"};
    avi_scene scene;
    avi_error err, close_err;
    int rc = avi_scene_load("bar", set, 1, &scene, &err);
    avi_run *run = rc ? NULL : avi_run_open(&scene, "hello.h5", NULL, &err);
    if (run) {
        rc = avi_run_evolve(run, avi_run_stats_of(run).end_time, &err);
        avi_run_stats st = avi_run_stats_of(run);
        printf("%s: %llu events to t = %g s\n", st.scene_name, (unsigned long long)st.events, st.time);
        if (avi_run_close(run, &close_err) && !rc) {
            rc = close_err.status;
            err = close_err;
        }
    } else if (!rc) {
        rc = err.status;
    }
    if (rc) fprintf(stderr, "hello: %s\n", err.message);
    avi_scene_free(&scene);
    return rc;
}
