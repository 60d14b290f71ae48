/* A run's banner and progress on stderr (run/run_log.h). */
#include "run/run_log.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

static int terminal_width(void)
{
    struct winsize ws;
    if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
    const char *c = getenv("COLUMNS");
    long n = c ? strtol(c, NULL, 10) : 0;
    return n > 0 && n < 10000 ? (int)n : 80;
}

void avi_run_log_init(avi_run_log *lg, const avi_run_options *opt, double now)
{
    lg->mode = opt->progress;
    lg->every = opt->progress_every > 0.0 ? opt->progress_every : 10.0;
    lg->last = now;
    lg->width = lg->mode == AVI_PROGRESS_TERMINAL ? terminal_width() : 0;
}

/* "1.23 MB": sizes as people read them. */
static void human_bytes(double b, char *out, size_t size)
{
    static const char *unit[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    int u = 0;
    while (b >= 999.5 && u < 5) b /= 1000.0, u++; /* 999.7 kB prints as 1 MB */
    snprintf(out, size, "%.3g %s", b, unit[u]);
}

/* The output's size as avi_h5_estimate_bytes puts it. */
static double output_bytes(const avi_h5_layout *L, double rows, double frames)
{
    avi_h5_size_plan p = {L->vertex_count, L->body_count, 0, 0, 0, rows, frames};
    for (int b = 0; b < L->body_count; b++) {
        p.triangle_count += L->bodies[b].triangle_count;
        p.tet_count += L->bodies[b].tet_count;
    }
    p.text_bytes = (L->scene_text ? strlen(L->scene_text) : 0) + (L->resolved_text ? strlen(L->resolved_text) : 0);
    return avi_h5_estimate_bytes(&p);
}

void avi_run_log_banner(const avi_run_log *lg, FILE *f, const avi_h5_layout *L, const avi_scene *scene, double t0)
{
    double rows = avi_h5_output_count(L->end_time, L->energy_every);
    double frames = avi_h5_output_count(L->end_time, L->frame_every);
    double ckpt = scene->output.checkpoint_every > 0.0 ? floor(L->end_time / scene->output.checkpoint_every) : 0.0;
    double bytes = output_bytes(L, rows, frames);
    char size[32];
    human_bytes(bytes, size, sizeof size);
    if (lg->mode != AVI_PROGRESS_LOG) {
        if (bytes > AVI_RUN_LOG_BIG_OUTPUT) {
            fprintf(f, "avi: output %s will take about %s (%.0f rows, %.0f frames of %zu vertices; output.max_bytes "
                       "= %g)\n", L->path, size, rows, frames, L->vertex_count, scene->output.max_bytes);
            fflush(f);
        }
        return;
    }
    fprintf(f, "avi: %s scene %s, integrator %s, t = %g s to %g s, %d thread%s\n", t0 > 0.0 ? "resuming" : "running",
            L->scene_name, L->integrator, t0, L->end_time, L->threads, L->threads == 1 ? "" : "s");
    fprintf(f, "avi:   %d %s, %zu vertices:", L->body_count, L->body_count == 1 ? "body" : "bodies", L->vertex_count);
    for (int b = 0; b < L->body_count; b++)
        fprintf(f, "%s %s (%zu)", b ? "," : "", L->bodies[b].name, L->bodies[b].vertex_count);
    fputc('\n', f);
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        if (L->potential_count[k])
            fprintf(f, "avi:   %-8s %zu potentials, dt %.3g s to %.3g s\n", avi_kind_name((avi_kind)k),
                    L->potential_count[k], L->dt_min[k], L->dt_max[k]);
    char sync[64] = "";
    if (L->synchronized_every > 1)
        snprintf(sync, sizeof sync, "; total and kinetic energy every %lld", L->synchronized_every);
    fprintf(f, "avi:   output %s: %.0f rows (every %g s%s), %.0f frames (every %g s), %.0f checkpoint%s, about %s\n",
            L->path, rows, L->energy_every, sync, frames, L->frame_every, ckpt + 1.0, ckpt > 0.0 ? "s" : "", size);
    fflush(f);
}

/* Joins `fields` with two spaces into `out`, in at most `width` - 1
 * columns (a terminal wraps a line that reaches its last one): the fields
 * from the first that does not fit on are dropped, and a first field too
 * long on its own is cut. */
static void fit(const char *const *fields, int n, int width, char *out, size_t size)
{
    size_t cap = width > 1 ? (size_t)width - 1 : 1, len = 0;
    if (cap >= size) cap = size - 1;
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        size_t need = strlen(fields[i]) + (i ? 2 : 0);
        if (len + need > cap) {
            if (i == 0) snprintf(out, cap + 1, "%s", fields[0]), len = strlen(out);
            break;
        }
        len += (size_t)snprintf(out + len, size - len, "%s%s", i ? "  " : "", fields[i]);
    }
}

/* "12 s", "3 min", "2.5 h". */
static void human_seconds(double s, char *out, size_t size)
{
    if (s < 120.0) snprintf(out, size, "%.0f s", s);
    else if (s < 7200.0) snprintf(out, size, "%.0f min", s / 60.0);
    else snprintf(out, size, "%.1f h", s / 3600.0);
}

void avi_run_log_progress(avi_run_log *lg, FILE *f, double now, double elapsed, double t, double end,
                          uint64_t events, int final)
{
    double every = lg->mode == AVI_PROGRESS_LOG ? lg->every : 0.2;
    if (lg->mode == AVI_PROGRESS_NONE || (!final && now - lg->last < every)) return;
    lg->last = now;
    double frac = end > 0.0 ? t / end : 1.0;
    double rate = elapsed > 0.0 ? (double)events / elapsed : 0.0;
    char pct[24], tt[48], ev[48], el[24], eta[32];
    snprintf(pct, sizeof pct, "%.1f%%", 100.0 * frac);
    snprintf(tt, sizeof tt, "t = %.4g s / %.4g s", t, end);
    snprintf(ev, sizeof ev, "%.3g events/s", rate);
    human_seconds(elapsed, el, sizeof el);
    memcpy(eta, "ETA ", 5);
    human_seconds(frac > 0.0 ? elapsed * (1.0 - frac) / frac : 0.0, eta + 4, sizeof eta - 4);
    if (lg->mode == AVI_PROGRESS_LOG) {
        fprintf(f, "avi: %s  %s  %llu events  %s  elapsed %s  %s\n", pct, tt, (unsigned long long)events, ev, el,
                eta);
    } else {
        /* Most telling first: a narrow terminal keeps the percentage and
         * the ETA, and the time without the end (the percentage says it). */
        if (lg->width < 64) snprintf(tt, sizeof tt, "t = %.4g s", t);
        const char *fields[] = {pct, eta, tt, ev};
        char line[256];
        fit(fields, 4, lg->width, line, sizeof line);
        /* \r, the line, then clear to the end of the line: no wrap. */
        fprintf(f, "\r%s\033[K", line);
        if (final) fputc('\n', f);
    }
    fflush(f);
}
