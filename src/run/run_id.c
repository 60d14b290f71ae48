/* Run ids (run/run_id.h). */
#include "run/run_id.h"

#include "base/error.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

static int random_bytes(unsigned char *buf, size_t n)
{
    size_t got = 0;
    while (got < n) {
        ssize_t k = getrandom(buf + got, n - got, 0);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    if (got == n) return 0;
    /* No getrandom (an old kernel): the device. */
    int fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    got = 0;
    while (got < n) {
        ssize_t k = read(fd, buf + got, n - got);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) break;
        got += (size_t)k;
    }
    close(fd);
    return got == n ? 0 : -1;
}

int avi_run_id_new(char id[AVI_RUN_ID_SIZE], avi_error *err)
{
    unsigned char b[16];
    if (random_bytes(b, sizeof b))
        return avi_error_set(err, AVI_ERR_RUN, "cannot draw a run id: no random bytes (getrandom, /dev/urandom)");
    static const char hex[] = "0123456789abcdef";
    for (int i = 0; i < 16; i++) {
        id[2 * i] = hex[b[i] >> 4];
        id[2 * i + 1] = hex[b[i] & 15];
    }
    id[32] = '\0';
    return AVI_OK;
}

int avi_run_id_valid(const char *id)
{
    if (!id || strlen(id) != 32) return 0;
    for (int i = 0; i < 32; i++)
        if (!((id[i] >= '0' && id[i] <= '9') || (id[i] >= 'a' && id[i] <= 'f'))) return 0;
    return 1;
}
