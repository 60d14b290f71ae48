/* avi: the SHA-256 of one row of observables as an output file stores it,
 * which ties a checkpoint to the last row of its output (run/checkpoint.h).
 *
 * The digest covers, in this order, each as 8 little-endian bytes: the
 * row's step (int64), time, kinetic, elastic, contact, external and total
 * energy, min_contact_distance, friction_work, kinetic_energy_midstep,
 * total_energy_midstep (float64 bit patterns), linear and angular momentum
 * (3 each), then events, active_contact_potentials and events_by_kind
 * (AVI_KIND_COUNT) as int64: every value of the row and nothing else, so
 * the row computed in memory and the row read back from the file give the
 * same digest. A row without the synchronized pair (synchronized_every)
 * has NaN (C's NAN) for kinetic, total and friction_work on both sides. */
#ifndef AVI_H5_ROW_DIGEST_H
#define AVI_H5_ROW_DIGEST_H

#include "avi/output.h"
#include "base/sha256.h"

/* 0, or -1 when out of memory. */
int avi_h5_row_digest(int64_t step, const avi_observation *o, unsigned char digest[AVI_SHA256_LEN]);

/* The digest of row `row` (counting from 0) the writer was given, one of
 * the last 4 (buffered or written); -1 for any other. */
int avi_h5_recent_row_digest(const avi_h5_writer *w, size_t row, unsigned char digest[AVI_SHA256_LEN]);

/* An output file's rows and frames (frames: the first body's; 0 with no
 * bodies) and the digest of row `row` (not computed when row >= rows).
 * The file is opened read-only in SWMR mode, so a killed run's file works.
 * AVI_OK, or AVI_ERR_INPUT with err naming `name` (the output as the user
 * knows it) when the file cannot be opened or read. */
int avi_h5_read_row_digest(const char *path, const char *name, size_t row, size_t *rows, size_t *frames,
                           unsigned char digest[AVI_SHA256_LEN], avi_error *err);

/* /parameters/synchronized_every of an output file; 0 when the file
 * predates it or cannot be opened (every row of such a file has the
 * synchronized values, so any N can continue it). */
long long avi_h5_read_synchronized_every(const char *path);

#endif
