/* The avi command: run a scene, summarise an output file, list scenes. */
#include "avi/avi.h"
#include "avi/output.h"
#include "avi/run.h"
#include "avi/scene.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>


/* Each command's synopsis and description: `avi --help` prints them all,
 * `avi COMMAND --help` its own. */
static const struct {
    const char *name, *synopsis, *text;
} commands[] = {
    {"run", "avi run [SCENE] [-o OUT.h5] [--set KEY=VALUE]... [--threads N] [OPTIONS]",
     "  run     runs SCENE (a YAML file or a built-in name; default sphere-plate)\n"
     "          and streams energies, momenta and frames to OUT.h5 (default: the\n"
     "          scene's output.file) with an XDMF sidecar OUT.xmf.\n"
     "          --set KEY=VALUE overrides a scene key by its dotted path, e.g.\n"
     "          --set time.end=1e-4 --set bodies.sphere.velocity=[0,0,-1000]\n"},
    {"resume", "avi resume OUT.h5 [--set time.end=T] [--threads N] [OPTIONS]",
     "  resume  continues a run from its latest checkpoint (OUT.h5.ckpt, written\n"
     "          every output.checkpoint_every, at the end and on SIGINT/SIGTERM);\n"
     "          --set time.end=T extends a finished run; refuses (exit 2) a\n"
     "          corrupt checkpoint, a mesh file that changed since the run\n"
     "          started, or a checkpoint of another run (run id, rows)\n"},
    {"info", "avi info OUT.h5 [--verbose]", "  info    prints a summary of an output file\n"},
    {"scenes", "avi scenes", "  scenes  lists the built-in scenes\n"},
};
enum { N_COMMANDS = sizeof commands / sizeof commands[0] };

static const char run_options_help[] =
    "options of run and resume:\n"
    "  --quiet  prints nothing but errors (and the size of an output over 2 GB)\n"
    "  --threads N  runs the engine on N threads (1 to 1024, or auto: every\n"
    "          processor avi may run on, its CPU affinity; default: the scene's\n"
    "          parallel.threads, else 1); the results are the same bits for every N\n"
    "  --progress-every S  with stderr not a terminal: a banner, then a progress\n"
    "          line every S seconds of wall time (default 10, or the environment\n"
    "          variable AVI_PROGRESS_EVERY); on a terminal: one line redrawn\n"
    "  --verbose  also prints HDF5's own error stack when an HDF5 call fails\n"
    "          (as does the environment variable AVI_HDF5_ERRORS=1)\n";
_Static_assert(AVI_RUN_MAX_THREADS == 1024, "run_options_help says 1 to 1024");
static const char exit_help[] = "\nexit status: 0 success, 1 the run failed, 2 bad usage or input,\n"
                                "             130 interrupted (SIGINT / SIGTERM)\n";

/* All commands (k < 0) or command k. */
static void print_usage(FILE *f, int k)
{
    for (int i = 0; i < N_COMMANDS; i++)
        if (k < 0 || i == k) fprintf(f, "%s %s\n", i == 0 || k >= 0 ? "usage:" : "      ", commands[i].synopsis);
    if (k < 0) fputs("       avi --help | --version | COMMAND --help\n", f);
    fputc('\n', f);
    for (int i = 0; i < N_COMMANDS; i++)
        if (k < 0 || i == k) fputs(commands[i].text, f);
    if (k <= 1) fputs(run_options_help, f);
    fputs(exit_help, f);
}

static volatile sig_atomic_t stop_requested;
static char *command_line; /* argv as typed, for /parameters/command_line */
static void on_signal(int sig) { stop_requested = sig; }

/* plot_energy.py as the user can call it: installed, PREFIX/share/avi/tools
 * beside PREFIX/bin/avi; in a build tree, tools/ beside build/avi, relative
 * to the working directory when below it. */
static void plot_tool(char *out, size_t size)
{
    char exe[4096], cwd[4096], path[4200], real[4096];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    snprintf(out, size, "plot_energy.py (share/avi/tools of the installation)");
    if (n <= 0) return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash) return;
    *slash = '\0';
    static const char *const rel[] = {"/../share/avi/tools/plot_energy.py", "/../tools/plot_energy.py"};
    for (int k = 0; k < 2; k++) {
        snprintf(path, sizeof path, "%s%s", exe, rel[k]);
        if (!realpath(path, real)) continue;
        size_t c = getcwd(cwd, sizeof cwd) ? strlen(cwd) : 0;
        if (c > 1 && strncmp(real, cwd, c) == 0 && real[c] == '/') snprintf(out, size, "%s", real + c + 1);
        else snprintf(out, size, "%s", real);
        return;
    }
}

/* A path as a shell and ParaView take it: a bare name gets "./" (ParaView's
 * Xdmf3 readers misread a bare relative file name, README "Output"). */
static void dot_slash(const char *path, char *out, size_t size)
{
    snprintf(out, size, "%s%s", strchr(path, '/') ? "" : "./", path);
}

/* The files a finished run wrote and what to do with them next. */
static void print_next(const avi_run_stats *st)
{
    char xmf[4096], xmf_shown[4100], tool[4200];
    if (avi_xdmf_default_path(st->output, xmf, sizeof xmf)) snprintf(xmf, sizeof xmf, "%s", "(none)");
    dot_slash(xmf, xmf_shown, sizeof xmf_shown);
    plot_tool(tool, sizeof tool);
    fprintf(stderr,
            "avi: wrote %s, %s (XDMF for ParaView) and the checkpoint %s\n"
            "avi: next: avi info %s\n"
            "avi:       python3 %s %s\n"
            "avi:       paraview %s\n",
            st->output, xmf, st->checkpoint, st->output, tool, st->output, xmf_shown);
}

/* Runs an opened run to its end time and closes it, saying how it ended:
 * the exit status. */
static int finish(avi_run *run, int quiet)
{
    avi_error err;
    avi_run_stats st = avi_run_stats_of(run);
    int rc = avi_run_evolve(run, st.end_time, &err);
    st = avi_run_stats_of(run);
    if (rc == AVI_INTERRUPTED)
        fprintf(stderr, "avi: interrupted by signal %d at t = %.6e s; checkpoint %s; continue with: avi resume %s\n",
                (int)stop_requested, st.time, st.checkpoint, st.output);
    else if (rc != AVI_OK)
        fprintf(stderr, "avi: %s\n", err.message);
    /* The stats' strings belong to the run, which closing frees. */
    char name[256], output[4096], checkpoint[4096];
    snprintf(name, sizeof name, "%s", st.scene_name ? st.scene_name : "");
    snprintf(output, sizeof output, "%s", st.output);
    snprintf(checkpoint, sizeof checkpoint, "%s", st.checkpoint);
    st.scene_name = name;
    st.output = output;
    st.checkpoint = checkpoint;
    if (avi_run_close(run, &err)) {
        if (rc == AVI_OK) fprintf(stderr, "avi: %s\n", err.message);
        if (rc == AVI_OK || rc == AVI_INTERRUPTED) rc = AVI_ERR_RUN;
    }
    if (rc == AVI_OK && !quiet) {
        fprintf(stderr, "avi: %s: %llu events to t = %g s in %.2f s\n", st.scene_name, (unsigned long long)st.events,
                st.end_time, st.wall);
        print_next(&st);
    }
    return rc;
}

static int open_failed(const avi_error *err)
{
    fprintf(stderr, "avi: %s\n", err->message);
    return err->status ? (int)err->status : AVI_ERR_INPUT;
}

typedef struct {
    const char *scene;
    const char *out;
    const char **sets;
    size_t nsets;
    int quiet;
    const char *every; /* --progress-every, else $AVI_PROGRESS_EVERY */
    int threads;       /* --threads; 0: the scene's or the default */
} run_args;

/* Seconds > 0, or -1 with a message. */
static double progress_every(const char *s)
{
    char *end;
    double v = s ? strtod(s, &end) : 10.0;
    if (s && (end == s || *end || !(v > 0.0 && v < 1e9)))
        return fprintf(stderr, "avi: --progress-every / AVI_PROGRESS_EVERY '%s': expected seconds > 0\n", s), -1.0;
    return v;
}

/* --threads: an integer in 1..AVI_RUN_MAX_THREADS or auto
 * (AVI_RUN_THREADS_AUTO), else 0 with a message. */
static int thread_count(const char *s)
{
    if (strcmp(s, "auto") == 0) return AVI_RUN_THREADS_AUTO;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end || errno || !(v >= 1 && v <= AVI_RUN_MAX_THREADS) || !(*s >= '0' && *s <= '9'))
        return fprintf(stderr, "avi: --threads '%s': expected a whole number of threads from 1 to %d, or auto\n", s,
                       AVI_RUN_MAX_THREADS), 0;
    return (int)v;
}

/* The handlers go in before the run opens: a signal while it starts stops
 * it at t = 0 with a checkpoint, like one later on. */
static avi_run_options run_options(const run_args *a, const char *source)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    avi_run_options o = avi_default_run_options();
    o.progress = a->quiet ? AVI_PROGRESS_NONE : isatty(STDERR_FILENO) ? AVI_PROGRESS_TERMINAL : AVI_PROGRESS_LOG;
    o.progress_every = progress_every(a->every);
    o.command_line = command_line;
    o.stop = &stop_requested;
    o.scene_source = source;
    o.threads = a->threads;
    return o;
}

static int parse_run_args(int argc, char **argv, run_args *a)
{
    memset(a, 0, sizeof *a);
    a->sets = calloc((size_t)argc + 1, sizeof *a->sets);
    if (!a->sets) return -1;
    for (int i = 0; i < argc; i++) {
        const char *s = argv[i];
        if (!strcmp(s, "-o") || !strcmp(s, "--output")) {
            if (++i >= argc) return fprintf(stderr, "avi: %s needs a file name\n", s), -1;
            a->out = argv[i];
        } else if (!strncmp(s, "--output=", 9)) {
            a->out = s + 9;
        } else if (!strcmp(s, "--set")) {
            if (++i >= argc) return fprintf(stderr, "avi: --set needs KEY=VALUE\n"), -1;
            a->sets[a->nsets++] = argv[i];
        } else if (!strncmp(s, "--set=", 6)) {
            a->sets[a->nsets++] = s + 6;
        } else if (!strcmp(s, "--progress-every")) {
            if (++i >= argc) return fprintf(stderr, "avi: %s needs seconds\n", s), -1;
            a->every = argv[i];
        } else if (!strcmp(s, "--threads") || !strncmp(s, "--threads=", 10)) {
            if (!s[9] && ++i >= argc) return fprintf(stderr, "avi: --threads needs a number of threads\n"), -1;
            if ((a->threads = thread_count(s[9] ? s + 10 : argv[i])) == 0) return -1;
        } else if (!strcmp(s, "--quiet") || !strcmp(s, "-q")) {
            a->quiet = 1;
        } else if (s[0] == '-' && s[1] != '\0') {
            return fprintf(stderr, "avi: unknown option '%s' (avi --help)\n", s), -1;
        } else if (!a->scene) {
            a->scene = s;
        } else {
            return fprintf(stderr, "avi: unexpected argument '%s' (avi --help)\n", s), -1;
        }
    }
    for (size_t k = 0; k < a->nsets; k++)
        if (!strchr(a->sets[k], '='))
            return fprintf(stderr, "avi: --set '%s': expected KEY=VALUE\n", a->sets[k]), -1;
    if (!a->every) a->every = getenv("AVI_PROGRESS_EVERY");
    if (progress_every(a->every) < 0.0) return -1;
    if (!a->scene) a->scene = "sphere-plate";
    return 0;
}

static int cmd_run(int argc, char **argv)
{
    run_args a;
    if (parse_run_args(argc, argv, &a)) {
        free(a.sets);
        return AVI_ERR_INPUT;
    }
    avi_scene scene;
    avi_error err;
    memset(&err, 0, sizeof err);
    if (avi_scene_load(a.scene, a.sets, a.nsets, &scene, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        free(a.sets);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }
    free(a.sets);
    avi_run_options opt = run_options(&a, a.scene);
    avi_run *run = avi_run_open(&scene, a.out ? a.out : scene.output.file, &opt, &err);
    int rc = run ? finish(run, a.quiet) : open_failed(&err);
    avi_scene_free(&scene);
    return rc;
}

/* avi resume OUT.h5 [--set time.end=T] [--quiet]: the scene comes from the
 * checkpoint; only the end time may change. */
static int cmd_resume(int argc, char **argv)
{
    run_args a;
    if (parse_run_args(argc, argv, &a) || a.out || argc == 0 || a.scene == NULL || strcmp(a.scene, "sphere-plate") == 0) {
        if (a.sets) print_usage(stderr, 1);
        free(a.sets);
        return AVI_ERR_INPUT;
    }
    avi_error err;
    avi_run_options opt = run_options(&a, NULL);
    avi_run *run = avi_run_open_resume(a.scene, a.sets, a.nsets, &opt, &err);
    free(a.sets);
    return run ? finish(run, a.quiet) : open_failed(&err);
}

static int cmd_info(int argc, char **argv)
{
    if (argc != 1) {
        fprintf(stderr, "avi: info takes one file (avi info --help)\n");
        return AVI_ERR_INPUT;
    }
    avi_error err;
    memset(&err, 0, sizeof err);
    if (avi_h5_info(argv[0], stdout, &err)) {
        fprintf(stderr, "avi: %s\n", err.message);
        return err.status ? (int)err.status : AVI_ERR_INPUT;
    }
    return 0;
}

static int cmd_scenes(void)
{
    for (size_t i = 0; i < avi_scene_builtin_count(); i++)
        printf("%-16s %s\n", avi_scene_builtin_name(i), avi_scene_builtin_description(i));
    return 0;
}

int main(int argc, char **argv)
{
    /* Past a file-size limit (ulimit -f) a write fails with EFBIG, like on
     * a full disk, instead of the process being killed without a word. */
    signal(SIGXFSZ, SIG_IGN);
    command_line = avi_command_line(argc, argv);
    /* --verbose anywhere after the command: HDF5's error stack on stderr
     * (read by the HDF5 set-up before HDF5's first call). */
    int kept = 1;
    for (int i = 1; i < argc; i++) {
        if (i > 1 && !strcmp(argv[i], "--verbose")) setenv("AVI_HDF5_ERRORS", "1", 1);
        else argv[kept++] = argv[i];
    }
    argc = kept;
    argv[argc] = NULL;
    if (argc < 2) {
        print_usage(stderr, -1);
        return AVI_ERR_INPUT;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "--help") || !strcmp(cmd, "-h") || !strcmp(cmd, "help")) {
        print_usage(stdout, -1);
        return 0;
    }
    if (!strcmp(cmd, "--version")) {
        printf("avi %s\n", AVI_VERSION_STRING);
        return 0;
    }
    for (int k = 0; k < N_COMMANDS; k++)
        for (int i = 2; i < argc && !strcmp(cmd, commands[k].name); i++)
            if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return print_usage(stdout, k), 0;
    if (!strcmp(cmd, "run")) return cmd_run(argc - 2, argv + 2);
    if (!strcmp(cmd, "info")) return cmd_info(argc - 2, argv + 2);
    if (!strcmp(cmd, "scenes")) return cmd_scenes();
    if (!strcmp(cmd, "resume")) return cmd_resume(argc - 2, argv + 2);
    fprintf(stderr, "avi: unknown command '%s' (avi --help)\n", cmd);
    return AVI_ERR_INPUT;
}
