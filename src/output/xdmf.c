/* XDMF sidecar: lets ParaView open an output file as a time series of
 * meshes whose geometry is read straight from the HDF5 frames.
 *
 * The file is a fixed header, one block per frame and a fixed trailer that
 * closes the XML. A new frame is appended in place: one pwrite of the new
 * blocks followed by the trailer, at the offset where the old trailer
 * starts, so appending costs the same whatever the number of frames. The
 * first write (and any write that finds the file not ending in the
 * trailer) builds the whole file under OUT.xmf.tmp and renames it over
 * OUT.xmf (output_files.c's rules).
 *
 * A process killed during an append: the write either happened or not
 * (the file is valid XML with the old or the new frames), or it stopped
 * part way (a write is only cut between pages). A part-way write leaves a
 * strict prefix P of "new blocks + trailer" where the old trailer was,
 * followed by what is left of the old trailer beyond P. When P is longer
 * than the old trailer, nothing closes the root element (only the last
 * line of the new trailer does). When it is shorter, P is the indentation
 * of "    <Grid Name=..." (then the file reads as the old one, blanks
 * aside, or has text "/Grid>" where a closing tag belongs) or an unfinished
 * start tag followed by the old trailer's '<', which cannot appear in a
 * tag. So a torn append leaves the old frames or a file no XML parser
 * accepts, never wrong frames. The next append finds no trailer and
 * rewrites the file whole, as `avi resume` does. Appends are not fsynced
 * (neither are the HDF5 frames they point to): after a power loss the last
 * appends may be missing or torn, with the same outcome.
 *
 * Two readers: ParaView's legacy XDMF reader (XDMF 2) and its XDMF 3
 * readers (Xdmf3ReaderS/T) select a frame of an [F][n][3] dataset in ways
 * the other does not accept. XDMF 3 readers skip HyperSlab data items
 * (their type is looked at before the reference is read); the legacy
 * reader does not know XDMF 3's "file:/set|start:stride:count:space".
 * Each grid therefore has two Geometry elements: the legacy reader takes
 * the first (a HyperSlab), the XDMF 3 readers the last. Velocities are not
 * described (an Attribute is read by both). The legacy reader caches
 * geometry by the text of the geometry's first DataItem: a comment naming
 * the frame is that text (without it: "Cannot find DataItem element in
 * geometry xml" for every grid). Paths to the HDF5 file are relative to the
 * sidecar's directory, so a run directory can be moved or copied. The Xdmf3
 * readers of ParaView 5.11 prefix a relative reference with the sidecar's
 * name up to its last '/', the whole name when it has none: opened as a
 * bare "OUT.xmf" they look for "OUT.xmfOUT.h5" (and "OUT.xmf./OUT.h5" for a
 * reference "./OUT.h5") and abort. Only an absolute reference avoids that,
 * at the cost of moving the files, so the references stay relative and
 * users open "./OUT.xmf" (README, "Output"; avi run's last lines say so). */
#include "avi/output.h"
#include "base/error.h"
#include "output/output_files.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char HEADER[] = "<?xml version=\"1.0\" ?>\n"
                             "<Xdmf Version=\"3.0\">\n"
                             "  <Domain>\n"
                             "  <Grid Name=\"frames\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
static const char TRAILER[] = "  </Grid>\n"
                              "  </Domain>\n"
                              "</Xdmf>\n";

/* ------------------------------------------------------------ the paths */

/* The resolved directory of `path` into dir (PATH_MAX), its last component
 * into *base. */
static int split_resolved(const char *path, char *dir, const char **base)
{
    const char *slash = strrchr(path, '/');
    char d[PATH_MAX];
    if (!slash) snprintf(d, sizeof d, ".");
    else if (slash == path) snprintf(d, sizeof d, "/");
    else snprintf(d, sizeof d, "%.*s", (int)(slash - path), path);
    *base = slash ? slash + 1 : path;
    return realpath(d, dir) ? 0 : -1;
}

/* The HDF5 file as seen from the sidecar's directory: its name when both
 * are in one directory, else "../" as needed and the rest of its path. */
static int relative_h5_path(const char *xmf_path, const char *h5_path, char *out, size_t size, avi_error *err)
{
    char xd[PATH_MAX], hd[PATH_MAX];
    const char *xb, *hb;
    if (split_resolved(xmf_path, xd, &xb) || split_resolved(h5_path, hd, &hb))
        return avi_error_set(err, AVI_ERR_RUN, "%s: cannot resolve its directory or that of %s (%s)", xmf_path,
                             h5_path, strerror(errno));
    /* The common leading directories, whole components only. */
    size_t common = 0;
    while (xd[common] && xd[common] == hd[common]) common++;
    int xend = !xd[common] || xd[common] == '/', hend = !hd[common] || hd[common] == '/';
    if (!(xend && hend))
        while (common > 0 && xd[common - 1] != '/') common--;
    /* One "../" per component of the sidecar's directory below them. */
    size_t n = 0;
    out[0] = 0;
    for (const char *p = xd + common; *p; p++)
        if (*p != '/' && (p == xd + common || p[-1] == '/'))
            n += (size_t)snprintf(out + n, n < size ? size - n : 0, "../");
    const char *rest = hd + common;
    while (*rest == '/') rest++;
    n += (size_t)snprintf(out + n, n < size ? size - n : 0, "%s%s%s", rest, *rest ? "/" : "", hb);
    if (n >= size) return avi_error_set(err, AVI_ERR_RUN, "%s: path to %s too long", xmf_path, h5_path);
    return 0;
}

/* ----------------------------------------------------------- the blocks */

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

/* "H5:/particles/BODY/position/value" */
static void put_positions(FILE *f, const char *h5, const char *body)
{
    put_escaped(f, h5);
    fputs(":/particles/", f);
    put_escaped(f, body);
    fputs("/position/value", f);
}

/* Frame k of the [frames][n][3] positions, as two Geometry elements: the
 * first for XDMF 2 readers, the last for XDMF 3 readers (see the top). */
static void put_geometry(FILE *f, const char *h5, const char *body, size_t k, size_t frames, size_t n)
{
    fputs("        <Geometry GeometryType=\"XYZ\">\n", f);
    fprintf(f, "          <DataItem ItemType=\"HyperSlab\" Dimensions=\"%zu 3\" Type=\"HyperSlab\"><!-- frame %zu -->\n", n,
            k);
    fprintf(f, "            <DataItem Dimensions=\"3 3\" NumberType=\"UInt\" Format=\"XML\">%zu 0 0 1 1 1 1 %zu 3</DataItem>\n",
            k, n);
    fprintf(f, "            <DataItem Dimensions=\"%zu %zu 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">", frames, n);
    put_positions(f, h5, body);
    fputs("</DataItem>\n          </DataItem>\n        </Geometry>\n", f);
    fputs("        <Geometry GeometryType=\"XYZ\">\n", f);
    fprintf(f, "          <DataItem Dimensions=\"%zu 3\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">", n);
    put_positions(f, h5, body);
    fprintf(f, "|%zu 0 0:1 1 1:1 %zu 3:%zu %zu 3</DataItem>\n", k, n, frames, n);
    fputs("        </Geometry>\n", f);
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
        fputs("        </Topology>\n", f);
    } else {
        /* Particles without a mesh: one Polyvertex cell of all vertices,
         * connectivity implied (keeps the file small for many particles). */
        fprintf(f, "        <Topology TopologyType=\"Polyvertex\" NodesPerElement=\"%zu\" />\n", n);
    }
    put_geometry(f, h5, B->name, k, frames, n);
    fputs("        <Attribute Name=\"mass\" AttributeType=\"Scalar\" Center=\"Node\">\n", f);
    fprintf(f, "          <DataItem Dimensions=\"%zu\" NumberType=\"Float\" Precision=\"8\" Format=\"HDF\">", n);
    put_escaped(f, h5);
    fputs(":/particles/", f);
    put_escaped(f, B->name);
    fputs("/mass</DataItem>\n", f);
    fputs("        </Attribute>\n", f);
    fputs("      </Grid>\n", f);
}

/* Frames first..count-1; the datasets are declared with `count` frames
 * (readers select from the dataset as it is in the file, which only
 * grows). */
static void put_frames(FILE *f, const char *h5, const avi_h5_body *bodies, int body_count, const double *times,
                       size_t first, size_t count)
{
    for (size_t k = first; k < count; k++) {
        fprintf(f, "    <Grid Name=\"frame_%zu\" GridType=\"Collection\" CollectionType=\"Spatial\">\n", k);
        fprintf(f, "      <Time Value=\"%.17g\" />\n", times[k]);
        for (int b = 0; b < body_count; b++) put_body(f, h5, &bodies[b], k, count);
        fputs("    </Grid>\n", f);
    }
}

/* ------------------------------------------------------------ the file */

static int ok(avi_error *err)
{
    if (err) {
        err->status = AVI_OK;
        err->message[0] = 0;
    }
    return 0;
}

/* The whole file under OUT.xmf.tmp, fsynced, renamed over OUT.xmf. */
static int write_whole(const char *xmf_path, const char *h5, const avi_h5_body *bodies, int body_count,
                       const double *times, size_t count, avi_error *err)
{
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
    fputs(HEADER, f);
    put_frames(f, h5, bodies, body_count, times, 0, count);
    fputs(TRAILER, f);
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
    return rc ? rc : ok(err);
}

/* The offset of the trailer when the file (a regular file, opened without
 * following links) ends in it, else -1. */
static off_t trailer_offset(int fd)
{
    struct stat st;
    size_t t = sizeof TRAILER - 1;
    char tail[sizeof TRAILER];
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)(sizeof HEADER - 1 + t)) return -1;
    off_t at = st.st_size - (off_t)t;
    if (pread(fd, tail, t, at) != (ssize_t)t || memcmp(tail, TRAILER, t) != 0) return -1;
    return at;
}

/* Appends frames first..count-1 in place (see the top); 1 when the file is
 * not one to append to (the caller rewrites it whole). */
static int append(const char *xmf_path, const char *h5, const avi_h5_body *bodies, int body_count,
                  const double *times, size_t first, size_t count, avi_error *err)
{
    /* Never opened when not a regular file (a device or FIFO planted by
     * the user: opening it could block or act); checked again on the
     * descriptor. */
    struct stat st;
    if (lstat(xmf_path, &st) != 0 || !S_ISREG(st.st_mode)) return 1;
    int fd = open(xmf_path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return 1;
    off_t at = trailer_offset(fd);
    if (at < 0) {
        close(fd);
        return 1;
    }
    char *text = NULL;
    size_t size = 0;
    FILE *m = open_memstream(&text, &size);
    if (!m) {
        close(fd);
        return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", xmf_path);
    }
    put_frames(m, h5, bodies, body_count, times, first, count);
    fputs(TRAILER, m);
    int bad = ferror(m);
    if (fclose(m) != 0 || bad) {
        free(text);
        close(fd);
        return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", xmf_path);
    }
    size_t done = 0;
    while (done < size) {
        ssize_t w = pwrite(fd, text + done, size - done, at + (off_t)done);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) break;
        done += (size_t)w;
    }
    int e = errno;
    free(text);
    if (close(fd) != 0 && done == size) {
        done = 0;
        e = errno;
    }
    if (done != size) return avi_error_set(err, AVI_ERR_RUN, "%s: appending to the XDMF file failed (%s)", xmf_path, strerror(e));
    return ok(err);
}

static int check_args(const char *xmf_path, const char *h5_path, const avi_h5_body *bodies, int body_count,
                      const double *times, size_t count, avi_error *err)
{
    if (!xmf_path || !h5_path || body_count < 0 || (body_count && !bodies) || (count && !times))
        return avi_error_set(err, AVI_ERR_RUN, "XDMF: invalid arguments");
    if (access(h5_path, F_OK) != 0)
        return avi_error_set(err, AVI_ERR_RUN, "%s: cannot find %s for %s (%s)", h5_path, h5_path, xmf_path,
                             strerror(errno));
    return 0;
}

int avi_xdmf_write(const char *xmf_path, const char *h5_path, const avi_h5_body *bodies, int body_count,
                   const double *frame_times, size_t frame_count, avi_error *err)
{
    char h5[PATH_MAX];
    int rc = check_args(xmf_path, h5_path, bodies, body_count, frame_times, frame_count, err);
    if (rc || (rc = relative_h5_path(xmf_path, h5_path, h5, sizeof h5, err))) return rc;
    return write_whole(xmf_path, h5, bodies, body_count, frame_times, frame_count, err);
}

int avi_xdmf_append(const char *xmf_path, const char *h5_path, const avi_h5_body *bodies, int body_count,
                    const double *frame_times, size_t first, size_t frame_count, avi_error *err)
{
    char h5[PATH_MAX];
    int rc = check_args(xmf_path, h5_path, bodies, body_count, frame_times, frame_count, err);
    if (rc || (rc = relative_h5_path(xmf_path, h5_path, h5, sizeof h5, err))) return rc;
    if (first > 0 && first <= frame_count) {
        rc = append(xmf_path, h5, bodies, body_count, frame_times, first, frame_count, err);
        if (rc != 1) return rc;
    }
    return write_whole(xmf_path, h5, bodies, body_count, frame_times, frame_count, err);
}
