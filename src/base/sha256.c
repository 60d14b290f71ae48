/* SHA-256 through OpenSSL's EVP interface (see sha256.h). */
#include "base/sha256.h"

#include <openssl/evp.h>
#include <stdlib.h>

struct avi_sha256_ctx {
    EVP_MD_CTX *ctx;
    int failed;
};

avi_sha256_ctx *avi_sha256_begin(void)
{
    avi_sha256_ctx *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    h->ctx = EVP_MD_CTX_new();
    h->failed = !h->ctx || EVP_DigestInit_ex(h->ctx, EVP_sha256(), NULL) != 1;
    return h;
}

void avi_sha256_add(avi_sha256_ctx *h, const void *data, size_t size)
{
    if (h && !h->failed && size && EVP_DigestUpdate(h->ctx, data, size) != 1) h->failed = 1;
}

int avi_sha256_end(avi_sha256_ctx *h, unsigned char digest[AVI_SHA256_LEN])
{
    if (!h) return -1;
    unsigned int n = 0;
    int rc = h->failed || EVP_DigestFinal_ex(h->ctx, digest, &n) != 1 || n != AVI_SHA256_LEN ? -1 : 0;
    EVP_MD_CTX_free(h->ctx);
    free(h);
    return rc;
}

int avi_sha256(const void *data, size_t size, unsigned char digest[AVI_SHA256_LEN])
{
    avi_sha256_ctx *h = avi_sha256_begin();
    avi_sha256_add(h, data, size);
    return avi_sha256_end(h, digest);
}

void avi_sha256_hex(const unsigned char digest[AVI_SHA256_LEN], char hex[AVI_SHA256_HEX])
{
    static const char x[] = "0123456789abcdef";
    for (int i = 0; i < AVI_SHA256_LEN; i++) {
        hex[2 * i] = x[digest[i] >> 4];
        hex[2 * i + 1] = x[digest[i] & 15];
    }
    hex[2 * AVI_SHA256_LEN] = '\0';
}
