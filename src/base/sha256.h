/* SHA-256 (OpenSSL's libcrypto) for checkpoint contents and input files. */
#ifndef AVI_SHA256_H
#define AVI_SHA256_H

#include <stddef.h>

#define AVI_SHA256_LEN 32
#define AVI_SHA256_HEX (2 * AVI_SHA256_LEN + 1)

typedef struct avi_sha256_ctx avi_sha256_ctx;

/* An incremental hash: begin, add any number of times, end. A failure
 * (out of memory) is sticky and reported by avi_sha256_end, which frees the
 * state in every case. */
avi_sha256_ctx *avi_sha256_begin(void);
void avi_sha256_add(avi_sha256_ctx *h, const void *data, size_t size);
int avi_sha256_end(avi_sha256_ctx *h, unsigned char digest[AVI_SHA256_LEN]);

/* One buffer at once; 0 or -1. */
int avi_sha256(const void *data, size_t size, unsigned char digest[AVI_SHA256_LEN]);

/* Lower-case hex, NUL-terminated. */
void avi_sha256_hex(const unsigned char digest[AVI_SHA256_LEN], char hex[AVI_SHA256_HEX]);

#endif
