/* avi: what a run says on stderr while it runs: a start banner and
 * progress, as full lines for logs or as one line redrawn on a terminal. */
#ifndef AVI_RUN_LOG_H
#define AVI_RUN_LOG_H

#include <stdint.h>
#include <stdio.h>

#include "avi/output.h"
#include "avi/run.h"
#include "avi/scene.h"

typedef struct {
    int mode;          /* avi_progress_mode */
    double every;      /* s of wall time between log lines */
    double last;       /* wall time of the last line drawn */
    int width;         /* the terminal's columns (AVI_PROGRESS_TERMINAL) */
} avi_run_log;

/* mode and every from the options (every <= 0: 10 s); the terminal's width
 * from TIOCGWINSZ on stderr, else $COLUMNS, else 80. */
void avi_run_log_init(avi_run_log *lg, const avi_run_options *opt, double now);

/* The banner (AVI_PROGRESS_LOG only): scene, integrator, bodies, potentials
 * and time-step ranges by kind, the output plan with its estimated size
 * (avi_h5_estimate_bytes); `t0` > 0 for a resume. In the other modes, even
 * AVI_PROGRESS_NONE (`avi run --quiet`), one line with the output's
 * estimated size when it exceeds AVI_RUN_LOG_BIG_OUTPUT bytes: a large file
 * is never written unannounced. */
#define AVI_RUN_LOG_BIG_OUTPUT 2e9
void avi_run_log_banner(const avi_run_log *lg, FILE *f, const avi_h5_layout *L, const avi_scene *scene, double t0);

/* A progress line when its interval has passed (always when `final`). */
void avi_run_log_progress(avi_run_log *lg, FILE *f, double now, double elapsed, double t, double end,
                          uint64_t events, int final);

#endif
