/* XDMF 3 sidecar: lets ParaView open an output file as a time series of
 * meshes whose geometry is read straight from the HDF5 frames. */
#include "avi/output.h"
#include "base/error.h"
#include "io/output_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int avi_xdmf_default_path(const char *h5_path, char *out, size_t size)
{
    size_t n = strlen(h5_path);
    if (n >= 3 && !strcmp(h5_path + n - 3, ".h5")) n -= 3;
    if (n + 5 > size) return -1;
    memcpy(out, h5_path, n);
    memcpy(out + n, ".xmf", 5);
    return 0;
}

/* Writes s with XML's five special characters escaped. */
static void put_escaped(FILE *f, const char *s)
{
    for (; *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* <DataItem> selecting frame k of an [F][n][3] dataset. */
static void put_frame_slab(FILE *f, const char *h5, const char *body, const char *set, size_t k, size_t frames,
                           size_t n)
{
    fprintf(f, "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%zu 3\" Type=\"HyperSlab\">\n", n);
    fprintf(f, "            <DataItem Dimensions=\"3 3\" NumberType=\"UInt\" Format=\"XML\">%zu 0 0 1 1 1 1 %zu 3</DataItem>\n",
            k, n);
    fprintf(f, "            <DataItem Dimensions=\"%zu %zu 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">", frames, n);
    put_escaped(f, h5);
    fputs(":/particles/", f);
    put_escaped(f, body);
    fprintf(f, "/%s/value</DataItem>\n", set);
    fputs("          </DataItem>\n", f);
}

static void put_body(FILE *f, const char *h5, const avi_h5_body *B, size_t k, size_t frames)
{
    size_t n = B->vertex_count;
    fputs("      <Grid Name=\"", f);
    put_escaped(f, B->name);
    fputs("\" GridType=\"Uniform\">\n", f);
    if (B->tet_count || B->triangle_count) {
        int tets = B->tet_count > 0;
        size_t m = tets ? B->tet_count : B->triangle_count;
        fprintf(f, "        <Topology TopologyType=\"%s\" NumberOfElements=\"%zu\">\n", tets ? "Tetrahedron" : "Triangle", m);
        fprintf(f, "          <DataItem Dimensions=\"%zu %d\" NumberType=\"Int\" Precision=\"4\" Format=\"HDF\">", m,
                tets ? 4 : 3);
        put_escaped(f, h5);
        fputs(":/connectivity/", f);
        put_escaped(f, B->name);
        fprintf(f, "_%s</DataItem>\n", tets ? "tetrahedra" : "triangles");
    } else {
        /* Particles without a mesh: one Polyvertex cell of all vertices,
         * connectivity implied (keeps the file small for many particles). */
        fprintf(f, "        <Topology TopologyType=\"Polyvertex\" NodesPerElement=\"%zu\" />\n", n);
    }
    if (B->tet_count || B->triangle_count) fputs("        </Topology>\n", f);
    fputs("        <Geometry GeometryType=\"XYZ\">\n", f);
    put_frame_slab(f, h5, B->name, "position", k, frames, n);
    fputs("        </Geometry>\n", f);
    fputs("        <Attribute Name=\"velocity\" AttributeType=\"Vector\" Center=\"Node\">\n", f);
    put_frame_slab(f, h5, B->name, "velocity", k, frames, n);
    fputs("        </Attribute>\n", f);
    fputs("        <Attribute Name=\"mass\" AttributeType=\"Scalar\" Center=\"Node\">\n", f);
    fprintf(f, "          <DataItem Dimensions=\"%zu\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">", n);
    put_escaped(f, h5);
    fputs(":/particles/", f);
    put_escaped(f, B->name);
    fputs("/mass</DataItem>\n", f);
    fputs("        </Attribute>\n", f);
    fputs("      </Grid>\n", f);
}

int avi_xdmf_write(const char *xmf_path, const char *h5_path, const avi_h5_body *bodies, int body_count,
                   const double *frame_times, size_t frame_count, avi_error *err)
{
    if (!xmf_path || !h5_path || body_count < 0 || (body_count && !bodies) || (frame_count && !frame_times))
        return avi_error_set(err, AVI_ERR_RUN, "XDMF: invalid arguments");
    char abs[PATH_MAX];
    if (!realpath(h5_path, abs)) return avi_error_set(err, AVI_ERR_RUN, "%s: cannot resolve the path for %s (%s)", h5_path, xmf_path, strerror(errno));

    /* Same directory as the target, so that rename() replaces it atomically. */
    size_t len = strlen(xmf_path);
    char *tmp = malloc(len + 32);
    if (!tmp) return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", xmf_path);
    /* One fixed name: a run killed while writing leaves at most this file,
     * which the next write of the same sidecar replaces. */
    snprintf(tmp, len + 32, "%s" AVI_OUTPUT_TMP_SUFFIX, xmf_path);
    int fd = avi_output_create(tmp, err);
    if (fd < 0) {
        free(tmp);
        return AVI_ERR_RUN;
    }
    FILE *f = fdopen(fd, "w");
    if (!f) {
        int e = errno;
        close(fd);
        unlink(tmp);
        free(tmp);
        return avi_error_set(err, AVI_ERR_RUN, "%s: cannot open the temporary file (%s)", xmf_path, strerror(e));
    }

    fputs("<?xml version=\"1.0\" ?>\n", f);
    fputs("<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n", f);
    fputs("<Xdmf Version=\"3.0\" xmlns:xi=\"http://www.w3.org/2001/XInclude\">\n", f);
    fputs("  <Domain>\n", f);
    fputs("  <Grid Name=\"frames\" GridType=\"Collection\" CollectionType=\"Temporal\">\n", f);
    for (size_t k = 0; k < frame_count; k++) {
        fprintf(f, "    <Grid Name=\"frame_%zu\" GridType=\"Collection\" CollectionType=\"Spatial\">\n", k);
        fprintf(f, "      <Time Value=\"%.17g\" />\n", frame_times[k]);
        for (int b = 0; b < body_count; b++) put_body(f, abs, &bodies[b], k, frame_count);
        fputs("    </Grid>\n", f);
    }
    fputs("  </Grid>\n", f);
    fputs("  </Domain>\n", f);
    fputs("</Xdmf>\n", f);

    int bad = ferror(f) || fflush(f) != 0;
    int e = errno;
    if (!bad && fsync(fileno(f)) != 0) {
        bad = 1;
        e = errno;
    }
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        unlink(tmp);
        free(tmp);
        return avi_error_set(err, AVI_ERR_RUN, "%s: writing the XDMF file failed (%s)", xmf_path, strerror(e));
    }
    int rc = avi_output_commit(tmp, xmf_path, err);
    free(tmp);
    if (rc) return rc;
    if (err) {
        err->status = AVI_OK;
        err->message[0] = 0;
    }
    return 0;
}
