/* avi: where a run comes from, recorded in /parameters (include/avi/output.h). */
#ifndef AVI_PROVENANCE_H
#define AVI_PROVENANCE_H

typedef struct {
    char command_line[8192]; /* argv, shell-quoted; cut at this length */
    char started[32];        /* ISO 8601 UTC, "2026-01-31T12:00:00Z" */
    char host[256];          /* gethostname */
    char build[1024];        /* version, commit, compiler and version, flags */
} avi_provenance;

/* This process's provenance at this moment. */
void avi_provenance_now(avi_provenance *pv, const char *command_line);

#endif
