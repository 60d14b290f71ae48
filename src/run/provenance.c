/* Provenance of a run for /parameters: the command line, the start time,
 * the host and the build (run/provenance.h). */
#include "run/provenance.h"

#include "avi/types.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Set by the Makefile for this file only (git describe --always --dirty,
 * and the tree's optimisation, architecture and user flags). */
#ifndef AVI_BUILD_COMMIT
#define AVI_BUILD_COMMIT "unknown"
#endif
#ifndef AVI_BUILD_FLAGS
#define AVI_BUILD_FLAGS "unknown"
#endif
#if defined(__clang__)
#define AVI_COMPILER "clang " __clang_version__
#elif defined(__GNUC__)
#define AVI_COMPILER "gcc " __VERSION__
#else
#define AVI_COMPILER "unknown compiler"
#endif

/* A word the shell reads back as itself needs no quotes. */
static int plain_word(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789@%_+=:,./-", *s)) return 0;
    return 1;
}

char *avi_command_line(int argc, char *const *argv)
{
    size_t n = 1;
    for (int i = 0; i < argc; i++) n += 4 * strlen(argv[i]) + 3;
    char *out = malloc(n), *p = out;
    if (!out) return NULL;
    for (int i = 0; i < argc; i++) {
        if (i) *p++ = ' ';
        if (plain_word(argv[i])) {
            p += sprintf(p, "%s", argv[i]);
            continue;
        }
        /* '...' with each ' written as '\'' */
        *p++ = '\'';
        for (const char *s = argv[i]; *s; s++) p += *s == '\'' ? sprintf(p, "'\\''") : sprintf(p, "%c", *s);
        *p++ = '\'';
    }
    *p = '\0';
    return out;
}

void avi_provenance_now(avi_provenance *pv, const char *command_line)
{
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(pv->started, sizeof pv->started, "%Y-%m-%dT%H:%M:%SZ", &tm);
    if (gethostname(pv->host, sizeof pv->host) != 0) snprintf(pv->host, sizeof pv->host, "unknown");
    pv->host[sizeof pv->host - 1] = '\0';
    snprintf(pv->command_line, sizeof pv->command_line, "%s", command_line ? command_line : "");
    snprintf(pv->build, sizeof pv->build, "avi %s; commit %s; %s; flags %s", AVI_VERSION_STRING,
             AVI_BUILD_COMMIT, AVI_COMPILER, AVI_BUILD_FLAGS);
}
