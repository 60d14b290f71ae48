/* What the XDMF sidecar costs per frame as a run grows: N frames of two
 * one-particle bodies written through the HDF5 writer, each flushed (as
 * `avi run` flushes a frame when its writer keeps up), with the sidecar
 * appended in place ("append", what avi does), without a sidecar ("none"),
 * and with the whole sidecar rewritten after every frame ("rewrite", what
 * avi did before: avi_xdmf_write over every frame so far). Prints one JSON
 * line per (mode, N) and a table; the sidecar's cost per frame is the
 * mode's time per frame minus that of "none".
 *
 *   ./build/bench/xdmf [--frames 100,1000,10000] [--rewrite-max 1000] [--dir D] */
#include "avi/output.h"
#include "bench_util.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

enum { NONE, APPEND, REWRITE };
static const char *MODE[] = {"none", "append", "rewrite"};

/* Seconds to write n frames in `mode`; -1 on error. */
static double run(const char *dir, int mode, size_t n)
{
    char h5[PATH_MAX], xmf[PATH_MAX];
    snprintf(h5, sizeof h5, "%s/bench_xdmf.h5", dir);
    snprintf(xmf, sizeof xmf, "%s/bench_xdmf.xmf", dir);
    static const double mass[2] = {1, 1};
    avi_h5_body b[2] = {{.name = "a", .first_vertex = 0, .vertex_count = 1, .mass = mass},
                        {.name = "b", .first_vertex = 1, .vertex_count = 1, .mass = mass + 1}};
    avi_h5_layout L = {.path = h5, .xdmf_path = mode == APPEND ? NULL : "", .bodies = b, .body_count = 2,
                       .vertex_count = 2, .scene_name = "bench"};
    avi_error err;
    double *times = malloc(n * sizeof *times);
    avi_h5_writer *w = times ? avi_h5_create(&L, &err) : NULL;
    if (!w) {
        fprintf(stderr, "bench xdmf: %s\n", times ? err.message : "out of memory");
        free(times);
        return -1;
    }
    double x[2][3] = {{0, 0, 0}, {1, 0, 0}}, v[2][3] = {{0}};
    double t0 = bench_now();
    int bad = 0;
    for (size_t k = 0; k < n && !bad; k++) {
        times[k] = 1e-3 * (double)k;
        x[0][2] = times[k];
        bad = avi_h5_write_frame(w, (int64_t)k, times[k], x, v) || avi_h5_flush(w) ||
              (mode == REWRITE && avi_xdmf_write(xmf, h5, b, 2, times, k + 1, &err));
    }
    double dt = bench_now() - t0;
    if (bad) fprintf(stderr, "bench xdmf: %s\n", mode == REWRITE ? err.message : avi_h5_error(w)->message);
    avi_h5_close(w, "complete", NULL);
    unlink(h5);
    unlink(xmf);
    free(times);
    return bad ? -1 : dt;
}

int main(int argc, char **argv)
{
    const char *frames = "100,1000,10000", *dir = "/tmp";
    size_t rewrite_max = 1000; /* rewriting 10 000 frames takes minutes */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--frames")) frames = argv[i + 1];
        else if (!strcmp(argv[i], "--rewrite-max")) rewrite_max = strtoul(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "--dir")) dir = argv[i + 1];
        else {
            fprintf(stderr, "usage: %s [--frames N,N,...] [--rewrite-max N] [--dir D]\n", argv[0]);
            return 2;
        }
    }
    printf("| frames | none: us/frame | append: us/frame | sidecar (append - none) | rewrite: us/frame |\n");
    printf("|---:|---:|---:|---:|---:|\n");
    char *list = strdup(frames);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        size_t n = strtoul(tok, NULL, 10);
        double us[3];
        for (int m = NONE; m <= REWRITE; m++) {
            us[m] = (m == REWRITE && n > rewrite_max) ? -1 : run(dir, m, n);
            if (us[m] < 0 && !(m == REWRITE && n > rewrite_max)) return 1;
            us[m] = us[m] < 0 ? -1 : 1e6 * us[m] / (double)n;
            printf("{\"bench\": \"xdmf\", \"mode\": \"%s\", \"frames\": %zu, \"us_per_frame\": %.2f}\n", MODE[m], n, us[m]);
        }
        printf("| %zu | %.1f | %.1f | %.1f | ", n, us[NONE], us[APPEND], us[APPEND] - us[NONE]);
        if (us[REWRITE] < 0) printf("(not run) |\n");
        else printf("%.1f |\n", us[REWRITE]);
    }
    free(list);
    return 0;
}
