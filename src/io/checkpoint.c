/* Checkpoints: the engine's complete state in an HDF5 file (see
 * include/avi/checkpoint.h). */
#include "avi/checkpoint.h"
#include "core/error.h"
#include "io/output_files.h"
#include "contact/contact_manager.h"
#include "core/engine_internal.h"
#include "sync/sync_internal.h"

#include <errno.h>
#include <fcntl.h>
#include <hdf5.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FORMAT_NAME "avi-checkpoint"
#define FORMAT_VERSION 1

void avi_checkpoint_path(const char *output_path, char *out, size_t size)
{
    snprintf(out, size, "%s.ckpt", output_path);
}

/* ---- small HDF5 helpers: every one returns 0 or -1 ---- */

static int put(hid_t loc, const char *name, hid_t type, int rank, const hsize_t *dims, const void *data)
{
    hid_t space = rank ? H5Screate_simple(rank, dims, NULL) : H5Screate(H5S_SCALAR);
    if (space < 0) return -1;
    hid_t ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    int rc = ds < 0 || ((rank == 0 || dims[0] > 0) && H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0);
    if (ds >= 0) H5Dclose(ds);
    H5Sclose(space);
    return rc ? -1 : 0;
}

static int put1(hid_t loc, const char *name, hid_t type, size_t n, size_t width, const void *data)
{
    hsize_t dims[2] = {n, width};
    return put(loc, name, type, width > 1 ? 2 : 1, dims, data);
}

static int put_text(hid_t loc, const char *name, const char *text)
{
    if (!text) text = "";
    hid_t type = H5Tcopy(H5T_C_S1);
    H5Tset_size(type, strlen(text) + 1);
    int rc = put(loc, name, type, 0, NULL, text);
    H5Tclose(type);
    return rc;
}

/* Number of elements of a dataset, or -1 when absent. */
static long count(hid_t loc, const char *name)
{
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return -1;
    hid_t space = H5Dget_space(ds);
    hssize_t n = H5Sget_simple_extent_npoints(space);
    H5Sclose(space);
    H5Dclose(ds);
    return (long)n;
}

/* Reads exactly n elements of the given memory type. */
static int get(hid_t loc, const char *name, hid_t type, size_t n, void *data)
{
    if (count(loc, name) != (long)n) return -1;
    if (n == 0) return 0;
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return -1;
    int rc = H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0;
    H5Dclose(ds);
    return rc ? -1 : 0;
}

static char *get_text(hid_t loc, const char *name)
{
    hid_t ds = H5Dopen2(loc, name, H5P_DEFAULT);
    if (ds < 0) return NULL;
    hid_t ftype = H5Dget_type(ds);
    size_t len = H5Tget_size(ftype);
    char *s = calloc(len + 1, 1);
    hid_t mtype = H5Tcopy(H5T_C_S1);
    H5Tset_size(mtype, len);
    if (s && H5Dread(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, s) < 0) {
        free(s);
        s = NULL;
    }
    H5Tclose(mtype);
    H5Tclose(ftype);
    H5Dclose(ds);
    return s;
}

/* ---- writing ---- */

static int write_contact(hid_t f, const avi_contact_manager *cm)
{
    hid_t g = H5Gcreate2(f, "contact", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (g < 0) return -1;
    size_t np = cm->npot, ns = cm->nst;
    uint32_t *u = malloc((4 * (np > ns ? np : ns) + 1) * sizeof *u);
    double *d = malloc((np + ns + 1) * sizeof *d);
    uint8_t *b = malloc(np + ns + 1);
    int rc = !u || !d || !b;
#define U32(name, n, w, expr)                                          \
    if (!rc) {                                                         \
        for (size_t i = 0; i < (n); i++) for (int j = 0; j < (w); j++) \
            u[i * (w) + j] = (uint32_t)(expr);                         \
        rc = put1(g, name, H5T_NATIVE_UINT32, n, w, u);                \
    }
#define F64(name, n, expr)                                  \
    if (!rc) {                                              \
        for (size_t i = 0; i < (n); i++) d[i] = (expr);     \
        rc = put1(g, name, H5T_NATIVE_DOUBLE, n, 1, d);     \
    }
#define U8(name, n, expr)                                   \
    if (!rc) {                                              \
        for (size_t i = 0; i < (n); i++) b[i] = (expr);     \
        rc = put1(g, name, H5T_NATIVE_UINT8, n, 1, b);      \
    }
    U32("potential_vertices", np, 4, cm->pot[i].v[j])
    U8("potential_type", np, cm->pot[i].type)
    U8("potential_alive", np, cm->pot[i].alive)
    U32("potential_layer", np, 1, cm->pot[i].layer)
    U32("potential_stencil", np, 1, cm->pot[i].stencil)
    U32("potential_prev", np, 1, cm->pot[i].prev)
    F64("potential_thickness", np, cm->pot[i].eta)
    F64("potential_stiffness", np, cm->pot[i].k)
    F64("potential_dt", np, cm->pot[i].dt)
    F64("potential_t0", np, cm->pot[i].t0)
    U8("stencil_type", ns, cm->st[i].type)
    U32("stencil_primitives", ns, 2, j ? cm->st[i].b : cm->st[i].a)
    U32("stencil_vertices", ns, 4, cm->st[i].v[j])
    U32("stencil_layers", ns, 1, cm->st[i].layers)
    U32("stencil_deepest", ns, 1, cm->st[i].deepest)
    U32("stencil_epoch", ns, 1, cm->st[i].epoch)
    F64("stencil_dt1", ns, cm->st[i].dt1)
#undef U32
#undef F64
#undef U8
    uint64_t c[8] = {cm->free_slot, cm->alive, cm->epoch, cm->runs, cm->speed_triggers, cm->activations,
                     cm->retirements, 0};
    double s[3] = {cm->next_run, cm->vcap, cm->vcap2};
    if (!rc) rc = put1(g, "counters", H5T_NATIVE_UINT64, 7, 1, c);
    if (!rc) rc = put1(g, "clocks", H5T_NATIVE_DOUBLE, 3, 1, s);
    free(u);
    free(d);
    free(b);
    H5Gclose(g);
    return rc ? -1 : 0;
}

static int write_state(hid_t f, const avi_engine *e, const avi_checkpoint_info *info)
{
    const avi_model *m = e->model;
    size_t nv = m->nv, nq = avi_engine_queue_size(e);
    int rc = 0;
    hid_t a_space = H5Screate(H5S_SCALAR);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, sizeof FORMAT_NAME);
    hid_t at = H5Acreate2(f, "format", str, a_space, H5P_DEFAULT, H5P_DEFAULT);
    rc |= at < 0 || H5Awrite(at, str, FORMAT_NAME) < 0;
    if (at >= 0) H5Aclose(at);
    H5Tclose(str);
    int version = FORMAT_VERSION;
    at = H5Acreate2(f, "format_version", H5T_NATIVE_INT, a_space, H5P_DEFAULT, H5P_DEFAULT);
    rc |= at < 0 || H5Awrite(at, H5T_NATIVE_INT, &version) < 0;
    if (at >= 0) H5Aclose(at);
    H5Sclose(a_space);
    if (rc) return -1;

    if (put_text(f, "scene_source", info->scene_source) || put_text(f, "scene", info->scene_text) ||
        put_text(f, "scene_resolved", info->resolved_text) || put_text(f, "output", info->output_path) ||
        put_text(f, "program_version", AVI_VERSION_STRING))
        return -1;
    if (put1(f, "time", H5T_NATIVE_DOUBLE, 1, 1, &e->time)) return -1;
    uint64_t counts[2] = {nv, (uint64_t)AVI_KIND_COUNT};
    if (put1(f, "sizes", H5T_NATIVE_UINT64, 2, 1, counts)) return -1;
    if (put1(f, "events", H5T_NATIVE_UINT64, AVI_KIND_COUNT, 1, e->events)) return -1;

    double *buf = malloc((3 * (nv > nq ? nv : nq) + 1) * sizeof *buf);
    uint32_t *ub = malloc((2 * nq + 1) * sizeof *ub);
    if (!buf || !ub) rc = -1;
    for (int field = 0; field < 3 && !rc; field++) {
        static const char *names[3] = {"vertex_position", "vertex_velocity", "vertex_drift_time"};
        int w = field == 2 ? 1 : 3;
        for (size_t i = 0; i < nv; i++)
            for (int c = 0; c < w; c++)
                buf[i * w + c] = field == 0 ? m->vert[i].x[c] : field == 1 ? m->vert[i].v[c] : m->vert[i].tau;
        rc = put1(f, names[field], H5T_NATIVE_DOUBLE, nv, (size_t)w, buf);
    }
    /* One entry per clock (group cursors expanded), in storage order;
     * restoring loads them back, and the pop order depends only on
     * (time, id). */
    avi_event *ev = malloc((nq + 1) * sizeof *ev);
    if (!ev) rc = -1;
    if (!rc && avi_engine_queue_collect(e, ev) != nq) rc = -1;
    if (!rc) {
        for (size_t i = 0; i < nq; i++) {
            buf[i] = ev[i].t;
            ub[2 * i] = ev[i].id;
            ub[2 * i + 1] = ev[i].n;
        }
        rc = put1(f, "queue_time", H5T_NATIVE_DOUBLE, nq, 1, buf) ||
             put1(f, "queue_id_step", H5T_NATIVE_UINT32, nq, 2, ub);
    }
    if (!rc) {
        size_t no = (size_t)e->nobs;
        uint64_t *next = malloc((no + 1) * sizeof *next);
        double *last = malloc((no + 1) * sizeof *last);
        if (!next || !last) rc = -1;
        for (size_t i = 0; i < no && !rc; i++) {
            next[i] = e->obs[i].next;
            last[i] = e->obs[i].last_time;
        }
        if (!rc)
            rc = put1(f, "observer_next", H5T_NATIVE_UINT64, no, 1, next) ||
                 put1(f, "observer_last_time", H5T_NATIVE_DOUBLE, no, 1, last);
        free(next);
        free(last);
    }
    if (!rc && e->sync) {
        uint64_t step = e->sync->step;
        rc = put1(f, "sync_step", H5T_NATIVE_UINT64, 1, 1, &step);
    }
    if (!rc && e->contact) rc = write_contact(f, e->contact);
    free(ev);
    free(buf);
    free(ub);
    return rc ? -1 : 0;
}

int avi_checkpoint_write(const char *path, const avi_engine *e, const avi_checkpoint_info *info, avi_error *err)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s" AVI_OUTPUT_TMP_SUFFIX, path) >= (int)sizeof tmp)
        return avi_error_set(err, AVI_ERR_RUN, "%s: path too long", path);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    H5Pset_libver_bounds(fapl, H5F_LIBVER_V110, H5F_LIBVER_V110);
    avi_error created;
    int fd = -1;
    hid_t f = avi_output_create_h5(tmp, fapl, &fd, &created);
    H5Pclose(fapl);
    if (f < 0) return avi_error_set(err, AVI_ERR_RUN, "cannot create the checkpoint: %s", created.message);
    errno = 0;
    int rc = write_state(f, e, info);
    if (H5Fclose(f) < 0) rc = -1;
    if (rc == 0 && fsync(fd) != 0) rc = -1;
    int why = errno;
    close(fd);
    if (rc) {
        unlink(tmp);
        return avi_error_set(err, AVI_ERR_RUN, "%s: writing the checkpoint failed (%s)", tmp, why ? strerror(why) : "HDF5 error");
    }
    return avi_output_commit(tmp, path, err) ? AVI_ERR_RUN : AVI_OK;
}

/* ---- reading ---- */

static hid_t open_checked(const char *path, avi_error *err)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (f < 0) {
        avi_error_set(err, AVI_ERR_RUN, "%s: cannot open the checkpoint", path);
        return -1;
    }
    int version = 0;
    hid_t at = H5Aopen(f, "format_version", H5P_DEFAULT);
    if (at < 0 || H5Aread(at, H5T_NATIVE_INT, &version) < 0 || version != FORMAT_VERSION) {
        if (at >= 0) H5Aclose(at);
        H5Fclose(f);
        avi_error_set(err, AVI_ERR_RUN, "%s: not an avi checkpoint (format version %d)", path, version);
        return -1;
    }
    H5Aclose(at);
    return f;
}

int avi_checkpoint_read_info(const char *path, avi_checkpoint_meta *meta, avi_error *err)
{
    memset(meta, 0, sizeof *meta);
    hid_t f = open_checked(path, err);
    if (f < 0) return AVI_ERR_RUN;
    meta->scene_source = get_text(f, "scene_source");
    meta->scene_text = get_text(f, "scene");
    meta->resolved_text = get_text(f, "scene_resolved");
    meta->output_path = get_text(f, "output");
    int rc = !meta->scene_source || !meta->scene_text || !meta->resolved_text || !meta->output_path ||
             get(f, "time", H5T_NATIVE_DOUBLE, 1, &meta->time);
    H5Fclose(f);
    if (rc) {
        avi_checkpoint_meta_free(meta);
        return avi_error_set(err, AVI_ERR_RUN, "%s: checkpoint is incomplete", path);
    }
    return AVI_OK;
}

void avi_checkpoint_meta_free(avi_checkpoint_meta *meta)
{
    free(meta->scene_source);
    free(meta->scene_text);
    free(meta->resolved_text);
    free(meta->output_path);
    memset(meta, 0, sizeof *meta);
}

static int read_contact(hid_t f, avi_contact_manager *cm)
{
    hid_t g = H5Gopen2(f, "contact", H5P_DEFAULT);
    if (g < 0) return -1;
    long np = count(g, "potential_type"), ns = count(g, "stencil_type");
    int rc = np < 0 || ns < 0 || avi_contact_reserve(cm, (size_t)np, (size_t)ns);
    size_t big = (size_t)(np > ns ? np : ns);
    uint32_t *u = malloc((4 * big + 1) * sizeof *u);
    double *d = malloc((big + 1) * sizeof *d);
    uint8_t *b = malloc(big + 1);
    if (!u || !d || !b) rc = -1;
#define U32(name, n, w, target)                                                       \
    if (!rc && !(rc = get(g, name, H5T_NATIVE_UINT32, (size_t)(n) * (w), u)))         \
        for (size_t i = 0; i < (size_t)(n); i++) for (int j = 0; j < (w); j++) target = u[i * (w) + j];
#define F64(name, n, target)                                                          \
    if (!rc && !(rc = get(g, name, H5T_NATIVE_DOUBLE, (size_t)(n), d)))               \
        for (size_t i = 0; i < (size_t)(n); i++) target = d[i];
#define U8(name, n, target)                                                           \
    if (!rc && !(rc = get(g, name, H5T_NATIVE_UINT8, (size_t)(n), b)))                \
        for (size_t i = 0; i < (size_t)(n); i++) target = b[i];
    U32("potential_vertices", np, 4, cm->pot[i].v[j])
    U8("potential_type", np, cm->pot[i].type)
    U8("potential_alive", np, cm->pot[i].alive)
    U32("potential_layer", np, 1, cm->pot[i].layer)
    U32("potential_stencil", np, 1, cm->pot[i].stencil)
    U32("potential_prev", np, 1, cm->pot[i].prev)
    F64("potential_thickness", np, cm->pot[i].eta)
    F64("potential_stiffness", np, cm->pot[i].k)
    F64("potential_dt", np, cm->pot[i].dt)
    F64("potential_t0", np, cm->pot[i].t0)
    U8("stencil_type", ns, cm->st[i].type)
    U32("stencil_primitives", ns, 2, *(j ? &cm->st[i].b : &cm->st[i].a))
    U32("stencil_vertices", ns, 4, cm->st[i].v[j])
    U32("stencil_layers", ns, 1, cm->st[i].layers)
    U32("stencil_deepest", ns, 1, cm->st[i].deepest)
    U32("stencil_epoch", ns, 1, cm->st[i].epoch)
    F64("stencil_dt1", ns, cm->st[i].dt1)
#undef U32
#undef F64
#undef U8
    uint64_t c[7];
    double s[3];
    if (!rc) rc = get(g, "counters", H5T_NATIVE_UINT64, 7, c) || get(g, "clocks", H5T_NATIVE_DOUBLE, 3, s);
    if (!rc) {
        cm->npot = (size_t)np;
        cm->nst = (size_t)ns;
        cm->free_slot = (uint32_t)c[0];
        cm->alive = (size_t)c[1];
        cm->epoch = (uint32_t)c[2];
        cm->runs = c[3];
        cm->speed_triggers = c[4];
        cm->activations = c[5];
        cm->retirements = c[6];
        cm->next_run = s[0];
        cm->vcap = s[1];
        cm->vcap2 = s[2];
        rc = avi_contact_reindex(cm);
    }
    free(u);
    free(d);
    free(b);
    H5Gclose(g);
    return rc ? -1 : 0;
}

int avi_checkpoint_restore(const char *path, avi_engine *e, avi_error *err)
{
    hid_t f = open_checked(path, err);
    if (f < 0) return AVI_ERR_RUN;
    avi_model *m = e->model;
    size_t nv = m->nv;
    uint64_t sizes[2];
    int rc = get(f, "sizes", H5T_NATIVE_UINT64, 2, sizes);
    if (rc || sizes[0] != nv || sizes[1] != AVI_KIND_COUNT) {
        H5Fclose(f);
        return avi_error_set(err, AVI_ERR_RUN, "%s: checkpoint does not match the scene's model (%llu vertices, model has %zu)", path,
                    rc ? 0ull : (unsigned long long)sizes[0], nv);
    }
    long nq = count(f, "queue_time");
    double *buf = malloc((3 * (nv > (size_t)(nq > 0 ? nq : 0) ? nv : (size_t)nq) + 1) * sizeof *buf);
    uint32_t *ub = malloc((2 * (size_t)(nq > 0 ? nq : 0) + 1) * sizeof *ub);
    rc = nq < 0 || !buf || !ub;
    if (!rc) rc = get(f, "time", H5T_NATIVE_DOUBLE, 1, &e->time) || get(f, "events", H5T_NATIVE_UINT64, AVI_KIND_COUNT, e->events);
    for (int field = 0; field < 3 && !rc; field++) {
        static const char *names[3] = {"vertex_position", "vertex_velocity", "vertex_drift_time"};
        int w = field == 2 ? 1 : 3;
        rc = get(f, names[field], H5T_NATIVE_DOUBLE, nv * (size_t)w, buf);
        for (size_t i = 0; i < nv && !rc; i++)
            for (int c = 0; c < w; c++) {
                if (field == 0) m->vert[i].x[c] = buf[i * w + c];
                else if (field == 1) m->vert[i].v[c] = buf[i * w + c];
                else m->vert[i].tau = buf[i];
            }
    }
    if (!rc) rc = get(f, "queue_time", H5T_NATIVE_DOUBLE, (size_t)nq, buf) ||
                  get(f, "queue_id_step", H5T_NATIVE_UINT32, 2 * (size_t)nq, ub);
    avi_event *qev = NULL;
    if (!rc) {
        qev = malloc(((size_t)nq + 1) * sizeof *qev);
        rc = !qev;
        for (long i = 0; i < nq && !rc; i++) qev[i] = (avi_event){buf[i], ub[2 * i], ub[2 * i + 1]};
        avi_error qerr = {0};
        if (!rc && avi_engine_queue_load(e, qev, (size_t)nq, 1, &qerr) != AVI_OK) {
            free(qev);
            free(buf);
            free(ub);
            H5Fclose(f);
            return avi_error_set(err, qerr.status == AVI_ERR_INPUT ? AVI_ERR_RUN : qerr.status, "%s: %s", path,
                                 qerr.message);
        }
        free(qev);
    }
    if (!rc) {
        long no = count(f, "observer_next");
        if (no != e->nobs) {
            rc = -1;
        } else {
            uint64_t *next = malloc(((size_t)no + 1) * sizeof *next);
            double *last = malloc(((size_t)no + 1) * sizeof *last);
            rc = !next || !last || get(f, "observer_next", H5T_NATIVE_UINT64, (size_t)no, next) ||
                 get(f, "observer_last_time", H5T_NATIVE_DOUBLE, (size_t)no, last);
            /* The output keeps each observer's calls on its grid (resuming
             * drops a final row off the grid), so the last call is at
             * (next - 1) interval. */
            for (long i = 0; i < no && !rc; i++) {
                e->obs[i].next = next[i];
                e->obs[i].last_time = next[i] ? (double)(next[i] - 1) * e->obs[i].interval : -1.0;
            }
            free(next);
            free(last);
        }
    }
    if (!rc && e->sync) {
        uint64_t step;
        rc = get(f, "sync_step", H5T_NATIVE_UINT64, 1, &step);
        if (!rc) e->sync->step = step;
    }
    if (!rc && e->contact) rc = read_contact(f, e->contact);
    free(buf);
    free(ub);
    H5Fclose(f);
    if (rc) return avi_error_set(err, AVI_ERR_RUN, "%s: checkpoint is incomplete or does not match the scene", path);
    return AVI_OK;
}
