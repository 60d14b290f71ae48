/* jemalloc settings for the avi program (read by jemalloc at start; the
 * library leaves the allocator to its user). Freed pages go back to the
 * system at once instead of after 10 s: the output thread's freed HDF5
 * buffers (type conversion, chunks, checkpoint tables) otherwise stayed
 * resident, 10 MB on a 100k-tet run, at no measurable cost in time
 * (bench/README.md, "Output cost"). Unused without jemalloc (sanitizer
 * builds). */
const char *malloc_conf = "dirty_decay_ms:0";
