/* Inputs and outputs are regular files: naming the kind of anything else,
 * and opening an input without blocking on a FIFO. */
#ifndef AVI_REGULAR_FILE_H
#define AVI_REGULAR_FILE_H

#include <stdio.h>
#include <sys/types.h>

/* "a directory", "a FIFO", "a character device", ... for a stat mode. */
const char *avi_file_kind(mode_t mode);

/* Opens a regular file for reading ("rb"). A FIFO, device, socket or
 * directory is refused without blocking (it is opened with O_NONBLOCK and
 * checked with fstat before anything is read). NULL with *why set to a
 * static description ("not a regular file (a FIFO)", or strerror) on
 * failure. */
FILE *avi_input_fopen(const char *path, const char **why);

#endif
