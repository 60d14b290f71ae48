/* A checkpoint against the output it continues: the run id, the rows and
 * frames, the digest of the last row (run/checkpoint.h, "Identity"). */
#include "run/checkpoint.h"

#include "base/error.h"
#include "output/h5_row_digest.h"

#include <stdlib.h>
#include <string.h>

int avi_checkpoint_match_output(const char *checkpoint, const avi_checkpoint_meta *meta, const char *output,
                                const char *file, avi_error *err)
{
    char *id = avi_h5_read_text(file, "/parameters/run_id");
    if (!id)
        return avi_error_set(err, AVI_ERR_INPUT, "resume: %s: cannot open the output that %s continues", output,
                             checkpoint);
    int same = strcmp(id, meta->run_id) == 0;
    char shown[16];
    snprintf(shown, sizeof shown, "%.8s", id[0] ? id : "none");
    free(id);
    if (!same)
        return avi_error_set(err, AVI_ERR_INPUT,
                             "resume: %s is not the checkpoint of %s: it belongs to run %.8s..., the output to run "
                             "%s%s (a checkpoint copied from, or left by, another run); nothing was changed",
                             checkpoint, output, meta->run_id, shown, strcmp(shown, "none") ? "..." : "");
    size_t rows = 0, frames = 0;
    unsigned char digest[AVI_SHA256_LEN] = {0};
    size_t last = meta->output_rows ? (size_t)meta->output_rows - 1 : (size_t)-1;
    if (avi_h5_read_row_digest(file, output, last, &rows, &frames, digest, err)) return err->status;
    if (rows < meta->output_rows || frames < meta->output_frames)
        return avi_error_set(err, AVI_ERR_INPUT,
                             "resume: %s: has %zu rows and %zu frames, its checkpoint %s was written after %llu rows "
                             "and %llu frames (truncated, or not the output of this checkpoint); nothing was changed",
                             output, rows, frames, checkpoint, (unsigned long long)meta->output_rows,
                             (unsigned long long)meta->output_frames);
    static const unsigned char none[AVI_SHA256_LEN] = {0};
    int recorded = memcmp(meta->last_row_sha256, none, AVI_SHA256_LEN) != 0;
    if (meta->output_rows && recorded && memcmp(digest, meta->last_row_sha256, AVI_SHA256_LEN) != 0) {
        char a[AVI_SHA256_HEX], b[AVI_SHA256_HEX];
        avi_sha256_hex(digest, a);
        avi_sha256_hex(meta->last_row_sha256, b);
        return avi_error_set(err, AVI_ERR_INPUT,
                             "resume: %s: row %zu (SHA-256 %.12s...) is not the row its checkpoint %s recorded "
                             "(%.12s...): the output was changed since; nothing was changed",
                             output, last, a, checkpoint, b);
    }
    return AVI_OK;
}
