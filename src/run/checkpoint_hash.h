/* The content hash of a checkpoint file, as defined in
 * src/run/checkpoint.h. */
#ifndef AVI_RUN_CHECKPOINT_HASH_H
#define AVI_RUN_CHECKPOINT_HASH_H

#include <hdf5.h>
#include <stddef.h>

#include "base/sha256.h"

/* Hashes every dataset of an open file; 0, or -1 with `why` saying which
 * object could not be hashed (a link that is not hard, an object that is
 * not a group or dataset, a type not covered, data not all stored, a read
 * that failed). */
int avi_checkpoint_hash(hid_t file, char hex[AVI_SHA256_HEX], char *why, size_t why_size);

#endif
