/* Inputs and outputs are regular files (see regular_file.h). */
#include "base/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const struct {
    mode_t type;
    const char *kind, *refusal;
} KINDS[] = {
    {S_IFDIR, "a directory", "not a regular file (a directory)"},
    {S_IFLNK, "a symbolic link", "not a regular file (a symbolic link)"},
    {S_IFIFO, "a FIFO", "not a regular file (a FIFO)"},
    {S_IFCHR, "a character device", "not a regular file (a character device)"},
    {S_IFBLK, "a block device", "not a regular file (a block device)"},
    {S_IFSOCK, "a socket", "not a regular file (a socket)"},
};

static int kind_index(mode_t mode)
{
    for (int i = 0; i < (int)(sizeof KINDS / sizeof KINDS[0]); i++)
        if ((mode & S_IFMT) == KINDS[i].type) return i;
    return -1;
}

const char *avi_file_kind(mode_t mode)
{
    int i = kind_index(mode);
    return S_ISREG(mode) ? "a regular file" : i >= 0 ? KINDS[i].kind : "not a regular file";
}

FILE *avi_input_fopen(const char *path, const char **why)
{
    /* O_NONBLOCK: opening a FIFO for reading would wait for a writer. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        *why = strerror(errno);
        if (fd >= 0) close(fd);
        return NULL;
    }
    if (!S_ISREG(st.st_mode)) {
        int i = kind_index(st.st_mode);
        *why = i >= 0 ? KINDS[i].refusal : "not a regular file";
        close(fd);
        return NULL;
    }
    int flags = fcntl(fd, F_GETFL);
    FILE *f = flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0 ? NULL : fdopen(fd, "rb");
    if (!f) {
        *why = strerror(errno);
        close(fd);
    }
    return f;
}
