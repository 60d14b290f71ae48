/* Content hash of a checkpoint: every dataset by sorted full path (the
 * definition is in src/run/checkpoint.h). */
#include "run/checkpoint_hash.h"
#include "base/grow.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char **paths;
    size_t count, cap;
    char *why;
    size_t why_size;
} dataset_list;

/* H5Lvisit callback: collects "/name" of each dataset; refuses links that
 * are not hard and objects that are neither groups nor datasets. */
static herr_t collect(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
    dataset_list *l = data;
    if (info->type != H5L_TYPE_HARD) {
        snprintf(l->why, l->why_size, "/%s is a soft or external link", name);
        return -1;
    }
    H5O_info_t oi;
    if (H5Oget_info_by_name2(group, name, &oi, H5O_INFO_BASIC, H5P_DEFAULT) < 0) {
        snprintf(l->why, l->why_size, "/%s cannot be read", name);
        return -1;
    }
    if (oi.type == H5O_TYPE_GROUP) return 0;
    if (oi.type != H5O_TYPE_DATASET) {
        snprintf(l->why, l->why_size, "/%s is neither a group nor a dataset", name);
        return -1;
    }
    if (AVI_GROW(l->paths, l->cap, l->count + 1, 64)) return -1;
    size_t n = strlen(name) + 2;
    if (!(l->paths[l->count] = malloc(n))) return -1;
    snprintf(l->paths[l->count++], n, "/%s", name);
    return 0;
}

static int by_bytes(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void add_u64(avi_sha256_ctx *h, uint64_t v)
{
    unsigned char le[8];
    for (int i = 0; i < 8; i++) le[i] = (unsigned char)(v >> (8 * i));
    avi_sha256_add(h, le, sizeof le);
}

/* One dataset's record: path, NUL, rank, dims, element size, bytes. */
static int add_dataset(avi_sha256_ctx *h, hid_t file, const char *path, char *why, size_t why_size)
{
    hid_t ds = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t type = ds < 0 ? -1 : H5Dget_type(ds);
    hid_t space = ds < 0 ? -1 : H5Dget_space(ds);
    int rank = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
    hsize_t dims[H5S_MAX_RANK];
    H5T_class_t cls = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
    size_t size = type < 0 ? 0 : H5Tget_size(type);
    int rc = -1;
    if (rank < 0 || H5Sget_simple_extent_dims(space, dims, NULL) < 0) {
        snprintf(why, why_size, "%s cannot be read", path);
    } else if (!(cls == H5T_INTEGER || cls == H5T_FLOAT || (cls == H5T_STRING && H5Tis_variable_str(type) == 0)) ||
               size == 0) {
        snprintf(why, why_size, "%s has a type the content hash does not cover", path);
    } else {
        uint64_t n = 1;
        int huge = 0;
        for (int i = 0; i < rank; i++) {
            if (dims[i] && n > UINT64_MAX / size / dims[i]) huge = 1;
            n *= dims[i];
        }
        uint64_t bytes = huge ? UINT64_MAX : n * size;
        /* Every byte stored: a dataset that claims more elements than the
         * file holds would otherwise read as fill values. */
        if (huge || (n && (H5Dget_storage_size(ds) != bytes || bytes > SIZE_MAX))) {
            snprintf(why, why_size, "%s: %llu bytes stored, %llu expected", path,
                     (unsigned long long)H5Dget_storage_size(ds), (unsigned long long)bytes);
        } else {
            void *buf = malloc(bytes ? (size_t)bytes : 1);
            if (!buf) {
                snprintf(why, why_size, "%s: out of memory", path);
            } else if (bytes && H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) {
                snprintf(why, why_size, "%s cannot be read", path);
            } else {
                avi_sha256_add(h, path, strlen(path) + 1);
                add_u64(h, (uint64_t)rank);
                for (int i = 0; i < rank; i++) add_u64(h, dims[i]);
                add_u64(h, size);
                avi_sha256_add(h, buf, (size_t)bytes);
                rc = 0;
            }
            free(buf);
        }
    }
    if (space >= 0) H5Sclose(space);
    if (type >= 0) H5Tclose(type);
    if (ds >= 0) H5Dclose(ds);
    return rc;
}

int avi_checkpoint_hash(hid_t file, char hex[AVI_SHA256_HEX], char *why, size_t why_size)
{
    dataset_list l = {NULL, 0, 0, why, why_size};
    snprintf(why, why_size, "out of memory");
    int rc = H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, collect, &l) < 0 ? -1 : 0;
    if (!rc) qsort(l.paths, l.count, sizeof *l.paths, by_bytes);
    avi_sha256_ctx *h = avi_sha256_begin();
    for (size_t i = 0; i < l.count && !rc; i++) rc = add_dataset(h, file, l.paths[i], why, why_size);
    unsigned char digest[AVI_SHA256_LEN];
    if (avi_sha256_end(h, digest) && !rc) {
        snprintf(why, why_size, "hashing failed");
        rc = -1;
    }
    if (!rc) avi_sha256_hex(digest, hex);
    for (size_t i = 0; i < l.count; i++) free(l.paths[i]);
    free(l.paths);
    H5Eclear2(H5E_DEFAULT);
    return rc;
}
