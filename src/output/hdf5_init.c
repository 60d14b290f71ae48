/* HDF5 set up before its first call (see hdf5_init.h). */
#include "output/hdf5_init.h"

#include <hdf5.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int print_errors;
static _Thread_local int thread_ready;

static void init_process(void)
{
    /* H5dont_atexit takes effect only before HDF5 initialises itself, which
     * its first other call does; it makes no such call itself. */
    H5dont_atexit();
    const char *v = getenv("AVI_HDF5_ERRORS");
    print_errors = v && strcmp(v, "1") == 0;
}

void avi_hdf5_init(void)
{
    pthread_once(&once, init_process);
    if (thread_ready) return;
    thread_ready = 1;
    if (!print_errors) H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
}

hid_t avi_hdf5_open_output(const char *path)
{
    avi_hdf5_init();
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_metadata_read_attempts(fapl, 8);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
    H5Pclose(fapl);
    if (f < 0) {
        H5Eclear2(H5E_DEFAULT);
        f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    }
    return f;
}
