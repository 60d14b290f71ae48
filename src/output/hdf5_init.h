/* HDF5 set up for avi: every function of the library that calls HDF5 calls
 * avi_hdf5_init() first, on the thread that makes the calls. */
#ifndef AVI_HDF5_INIT_H
#define AVI_HDF5_INIT_H

#include <hdf5.h>

/* Once per process, before HDF5's first call: HDF5's at-exit shutdown off
 * (it crashes on a file whose close failed, e.g. on a full disk; avi closes
 * every file itself). Once per thread (HDF5's error stack is per thread):
 * the automatic printing of HDF5's error stack off, unless the environment
 * variable AVI_HDF5_ERRORS is 1 (`avi --verbose` sets it); errors reach the
 * user through avi_error. A program that calls HDF5 itself calls this
 * before its own first HDF5 call. */
void avi_hdf5_init(void);

/* Opens an output file for reading: SWMR reading sees a live run
 * consistently (a few metadata retries only: a killed writer never
 * completes what failed its checksum), else a plain open (older files).
 * The HDF5 file, or a negative id. */
hid_t avi_hdf5_open_output(const char *path);

#endif
