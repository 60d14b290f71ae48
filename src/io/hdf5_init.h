/* HDF5 set up for avi: every function of the library that calls HDF5 calls
 * avi_hdf5_init() first, on the thread that makes the calls. */
#ifndef AVI_IO_HDF5_INIT_H
#define AVI_IO_HDF5_INIT_H

/* Once per process, before HDF5's first call: HDF5's at-exit shutdown off
 * (it crashes on a file whose close failed, e.g. on a full disk; avi closes
 * every file itself). Once per thread (HDF5's error stack is per thread):
 * the automatic printing of HDF5's error stack off, unless the environment
 * variable AVI_HDF5_ERRORS is 1 (`avi --verbose` sets it); errors reach the
 * user through avi_error. A program that calls HDF5 itself calls this
 * before its own first HDF5 call. */
void avi_hdf5_init(void);

#endif
