/* Hands a fuzz input to a reader that takes a path. The bytes go into an
 * anonymous in-memory file (memfd) opened through /proc/self/fd/N; where
 * that is unavailable, into a per-process file in /dev/shm or /tmp. */
#ifndef AVI_FUZZ_FILE_H
#define AVI_FUZZ_FILE_H

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int fuzz_fd = -1;
static char fuzz_path[128];

static void fuzz_file_cleanup(void)
{
    if (strncmp(fuzz_path, "/proc/", 6) != 0 && fuzz_path[0]) unlink(fuzz_path);
}

static int fuzz_file_fill(const uint8_t *data, size_t size)
{
    if (ftruncate(fuzz_fd, 0) != 0) return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = pwrite(fuzz_fd, data + done, size - done, (off_t)done);
        if (n <= 0) return -1;
        done += (size_t)n;
    }
    return 0;
}

/* True when fopen(fuzz_path) reads back what was written. */
static int fuzz_file_works(void)
{
    static const uint8_t probe[] = "probe";
    if (fuzz_file_fill(probe, 5) != 0) return 0;
    FILE *f = fopen(fuzz_path, "rb");
    if (!f) return 0;
    char got[8] = {0};
    size_t n = fread(got, 1, sizeof got, f);
    fclose(f);
    return n == 5 && memcmp(got, probe, 5) == 0;
}

static void fuzz_file_init(const char *suffix)
{
#ifdef MFD_CLOEXEC
    fuzz_fd = memfd_create("avi-fuzz", MFD_CLOEXEC);
    if (fuzz_fd >= 0) {
        snprintf(fuzz_path, sizeof fuzz_path, "/proc/self/fd/%d", fuzz_fd);
        if (fuzz_file_works()) return;
        close(fuzz_fd);
    }
#endif
    const char *dirs[] = {"/dev/shm", "/tmp"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(fuzz_path, sizeof fuzz_path, "%s/avi-fuzz-%ld%s", dirs[i], (long)getpid(), suffix);
        fuzz_fd = open(fuzz_path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
        if (fuzz_fd < 0) continue;
        if (fuzz_file_works()) {
            atexit(fuzz_file_cleanup);
            return;
        }
        close(fuzz_fd);
        unlink(fuzz_path);
    }
    fprintf(stderr, "fuzz: no place for the input file\n");
    abort();
}

/* The path of a file holding exactly data[0, size). */
static const char *fuzz_file(const uint8_t *data, size_t size, const char *suffix)
{
    if (fuzz_fd < 0) fuzz_file_init(suffix);
    if (fuzz_file_fill(data, size) != 0) {
        fprintf(stderr, "fuzz: cannot write the input file %s\n", fuzz_path);
        abort();
    }
    return fuzz_path;
}

#endif
