/* avi: the random id that ties an output file and its checkpoints together
 * (run/checkpoint.h, "Identity"). */
#ifndef AVI_RUN_ID_H
#define AVI_RUN_ID_H

#include "avi/types.h"

/* 32 lower-case hex digits and a NUL. */
#define AVI_RUN_ID_SIZE 33

/* A fresh id: 128 bits from getrandom (else /dev/urandom). AVI_OK, or
 * AVI_ERR_RUN with err filled when neither gives bytes. */
int avi_run_id_new(char id[AVI_RUN_ID_SIZE], avi_error *err);

/* 1 when `id` is 32 lower-case hex digits. */
int avi_run_id_valid(const char *id);

#endif
