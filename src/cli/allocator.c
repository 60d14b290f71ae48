/* jemalloc settings for the avi program (read by jemalloc at start; the
 * library leaves the allocator to its user). Freed pages go back to the
 * system after 100 ms instead of 10 s: the output thread's HDF5 buffers
 * (type conversion, chunks, checkpoint tables) were otherwise kept, which
 * made the resident set of a 100k-tet run 11 % larger (bench/README.md,
 * "Output cost"). Without jemalloc (sanitizer builds) this is unused. */
const char *malloc_conf = "dirty_decay_ms:100";
