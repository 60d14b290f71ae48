/* Long energy runs of the graded models of test_conservation.c, beyond what
 * `make test-long` runs: any safety, step levels and pre-stretch, the AVI or
 * the synchronous explicit integrator at the smallest step, to a given
 * simulated time. Prints one line per sample: events, time, (E - E0) / |E0|
 * and, for the bar, the smallest J = det F over the tetrahedra; a blow-up
 * ends the run with the engine's message and exit status 1.
 *
 *   build/tests/long_energy MODEL INTEGRATOR T_END [SAFETY [LEVELS [STRETCH]]]
 *
 * MODEL: bar | strip; INTEGRATOR: avi | sync; SAFETY 0 and STRETCH 0 keep
 * the defaults (0.25, 1.05); LEVELS (per octave) defaults to the default
 * rule's 16, and 0 gives exact steps. The figures of tests/README.md ("Known
 * failures of make test-long") come from it. */
#include "avi/avi.h"
#include "avi/sync.h"
#include "core/model_internal.h"
#include "graded_models.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Smallest det F over the tetrahedra at positions x ([nv][3]). */
static double min_det_f(const avi_model *m, const double *x)
{
    double jmin = INFINITY;
    for (size_t q = 0; q < m->ntet; q++) {
        const avi_tet *t = &m->tets[q];
        double d[3][3];
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) d[c][a] = x[3 * t->v[a + 1] + c] - x[3 * t->v[0] + c];
        const double *D = t->dm_inv;
        double det = d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) -
                     d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
                     d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
        double det_inv = D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
                         D[2] * (D[3] * D[7] - D[4] * D[6]);
        jmin = fmin(jmin, det * det_inv);
    }
    return jmin;
}

int main(int argc, char **argv)
{
    if (argc < 4 || (strcmp(argv[1], "bar") && strcmp(argv[1], "strip")) ||
        (strcmp(argv[2], "avi") && strcmp(argv[2], "sync"))) {
        fprintf(stderr, "usage: %s bar|strip avi|sync T_END [SAFETY [LEVELS [STRETCH]]]\n", argv[0]);
        return 2;
    }
    int bar = !strcmp(argv[1], "bar"), sync = !strcmp(argv[2], "sync");
    double t_end = atof(argv[3]);
    graded_setup g = {argc > 5 ? atoi(argv[5]) : -1, argc > 4 ? atof(argv[4]) : 0.0, argc > 6 ? atof(argv[6]) : 0.0,
                      (avi_bending)0 /* hinge, as documented in graded_models.h */};
    avi_model *m = bar ? graded_tet_bar_with(g) : graded_shell_with(g);
    if (!m || !(t_end > 0.0)) {
        fprintf(stderr, "long_energy: cannot build the model or bad end time\n");
        return 2;
    }
    avi_error err;
    avi_engine *e;
    if (sync) {
        avi_sync_options o = avi_default_sync_options();
        o.type = AVI_INTEGRATOR_SYNC_EXPLICIT;
        o.h = 0.0; /* the smallest potential step */
        e = avi_engine_create_with(m, &o, &err);
    } else {
        e = avi_engine_create(m, &err);
    }
    if (!e) {
        fprintf(stderr, "long_energy: %s\n", err.message);
        return 2;
    }
    size_t nv = avi_model_vertex_count(m);
    double *x = malloc(3 * nv * sizeof *x);
    avi_observation o0, o;
    avi_engine_observe(e, 0.0, &o0);
    const int samples = 50;
    int rc = 0;
    for (int s = 1; s <= samples && !rc; s++) {
        double t = t_end * s / samples;
        if (avi_engine_advance(e, t) != AVI_OK) {
            printf("blow-up after %.3g events: %s\n", (double)avi_engine_events_total(e), avi_engine_error(e)->message);
            rc = 1;
            break;
        }
        avi_engine_observe(e, t, &o);
        printf("%.3g events  t = %.4g  dE/E0 = %+.3e", (double)avi_engine_events_total(e), t,
               (o.total - o0.total) / fabs(o0.total));
        if (bar) {
            avi_engine_state_at(e, t, x, NULL);
            printf("  min J = %.3f", min_det_f(m, x));
        }
        printf("\n");
    }
    free(x);
    avi_engine_destroy(e);
    avi_model_destroy(m);
    return rc;
}
