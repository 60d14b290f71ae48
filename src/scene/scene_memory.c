/* Up-front memory estimates: a generated mesh (from its generator's
 * parameters, before generating) and the contact broad phase's candidate
 * lists (from the surfaces and contact.thickness, before running) are
 * refused when they would need more memory than this process may have, so
 * that a run does not fail "out of memory" after seconds or minutes.
 *
 * The per-element figures are the model's records, the mesh arrays, queue
 * entries and the build's transient arrays, measured with max RSS (`avi run
 * bar` with a tet_box of 40^3 cells: 114 MB for 68,921 vertices and 384,000
 * tetrahedra, the estimate 114 MB; of 60^3 cells: 345 MB, the estimate
 * 382 MB); the broad phase keeps 24
 * bytes per candidate pair (the pair, its sorted copy and its skip time),
 * twice that while a list grows. */
#include "scene/scene_checks.h"
#include "core/model_internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <unistd.h>

#define BYTES_PER_VERTEX 200.0
#define BYTES_PER_TRIANGLE 480.0 /* membrane, bending, edge DOFs */
#define BYTES_PER_TET 260.0
#define BYTES_PER_CANDIDATE 48.0

double avi_memory_available(const char **what)
{
    double limit = INFINITY;
    *what = "memory";
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    if (pages > 0 && page > 0) {
        limit = (double)pages * (double)page;
        *what = "physical memory";
    }
    /* ulimit -v / -d, as batch systems set them: they count address space,
     * which runs ahead of the memory in use (libraries, thread stacks,
     * arrays that grow by doubling), so half of it. */
    const int res[2] = {RLIMIT_AS, RLIMIT_DATA};
    const char *names[2] = {"half the address-space limit (ulimit -v)", "half the data-size limit (ulimit -d)"};
    for (int i = 0; i < 2; i++) {
        struct rlimit rl;
        if (getrlimit(res[i], &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && 0.5 * (double)rl.rlim_cur < limit) {
            limit = 0.5 * (double)rl.rlim_cur;
            *what = names[i];
        }
    }
    return limit;
}

/* Vertices, triangles and tetrahedra a generator makes (0 for files and
 * particles). */
static void generated_counts(const avi_scene_mesh *m, double *v, double *t, double *k, const char **key)
{
    *v = *t = *k = 0.0;
    switch (m->source) {
    case AVI_MESH_ICOSPHERE:
        *v = 10.0 * pow(4.0, m->subdivisions) + 2.0, *t = 20.0 * pow(4.0, m->subdivisions), *key = "subdivisions";
        break;
    case AVI_MESH_DISK: *v = 1.0 + 3.0 * m->rings * (m->rings + 1.0), *t = 6.0 * m->rings * (double)m->rings, *key = "rings"; break;
    case AVI_MESH_RECT: *v = (m->nx + 1.0) * (m->ny + 1.0), *t = 2.0 * m->nx * (double)m->ny, *key = "nx"; break;
    case AVI_MESH_TET_BOX:
        *v = (m->nx + 1.0) * (m->ny + 1.0) * (m->nz + 1.0), *k = 6.0 * m->nx * (double)m->ny * m->nz, *key = "nx";
        break;
    case AVI_MESH_BALL: *v = pow(m->n + 1.0, 3.0), *k = 6.0 * pow(m->n, 3.0), *key = "n"; break;
    default: break;
    }
}

int avi_scene_check_generated_memory(const avi_scene *s, avi_error *err)
{
    double total = 0.0, largest = -1.0;
    size_t at = 0;
    const char *at_key = "";
    double at_v = 0.0, at_e = 0.0;
    for (size_t i = 0; i < s->body_count; i++) {
        double v, t, k;
        const char *key = "";
        generated_counts(&s->bodies[i].mesh, &v, &t, &k, &key);
        double bytes = v * BYTES_PER_VERTEX + t * BYTES_PER_TRIANGLE + k * BYTES_PER_TET;
        total += bytes;
        if (bytes > largest) largest = bytes, at = i, at_key = key, at_v = v, at_e = k > 0.0 ? k : t;
    }
    const char *what;
    double limit = avi_memory_available(&what);
    if (!(total > limit)) return AVI_OK;
    int solid = s->bodies[at].mesh.source == AVI_MESH_TET_BOX || s->bodies[at].mesh.source == AVI_MESH_BALL;
    return avi_scene_check_fail(err, s,
                                "bodies.%zu.mesh.%s: the generated meshes would need about %.3g GB of memory "
                                "(this body %.3g vertices and %.3g %s, %.3g GB), more than %s, %.3g GB; "
                                "use a coarser mesh",
                                at, at_key, total / 1e9, at_v, at_e, solid ? "tetrahedra" : "triangles",
                                largest / 1e9, what, limit / 1e9);
}

int avi_scene_check_contact_memory(const avi_scene *s, const avi_model *m, avi_error *err)
{
    if (!m->has_contact) return AVI_OK;
    size_t nt = m->ncontact_tri, np = m->ncontact_point;
    double area = 0.0, edge = 0.0;
    for (size_t t = 0; t < nt; t++) {
        const double *a = m->vert[m->contact_tri[t][0]].x, *b = m->vert[m->contact_tri[t][1]].x,
                     *c = m->vert[m->contact_tri[t][2]].x;
        double u[3], w[3], n[3];
        for (int k = 0; k < 3; k++) u[k] = b[k] - a[k], w[k] = c[k] - a[k];
        n[0] = u[1] * w[2] - u[2] * w[1], n[1] = u[2] * w[0] - u[0] * w[2], n[2] = u[0] * w[1] - u[1] * w[0];
        area += 0.5 * sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        edge += sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    }
    if (nt == 0 || !(area > 0.0)) return AVI_OK;
    /* A point's candidates: the triangles whose boxes come within the reach
     * R = 2 eta_1 plus an edge of it, on its own sheet and one facing it:
     * 2 pi R^2 / (mean triangle area), at most every triangle; edges
     * likewise, 3/2 per triangle. */
    double mean_area = area / (double)nt, R = 2.0 * s->contact.thickness + edge / (double)nt;
    double per = fmin((double)nt, 2.0 * M_PI * R * R / mean_area);
    unsigned char *on = calloc(m->nv ? m->nv : 1, 1);
    if (!on) return avi_scene_check_fail(err, s, "out of memory");
    size_t surface = 0;
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            if (!on[m->contact_tri[t][k]]) on[m->contact_tri[t][k]] = 1, surface++;
    free(on);
    double points = (double)(surface + np);
    double edges = 1.5 * (double)nt;
    double pairs = points * per + edges * fmin(edges, 1.5 * per);
    double bytes = pairs * BYTES_PER_CANDIDATE;
    const char *what;
    double limit = avi_memory_available(&what);
    double model = (double)m->nv * BYTES_PER_VERTEX + (double)nt * BYTES_PER_TRIANGLE;
    if (!(bytes + model > limit)) return AVI_OK;
    return avi_scene_check_fail(err, s,
                                "contact.thickness: the contact broad phase would keep about %.3g candidate pairs "
                                "(%.3g GB: each of %.3g surface points within reach 2 contact.thickness = %g m of "
                                "about %.3g of %zu triangles), more than %s, %.3g GB; lower contact.thickness or "
                                "use a coarser surface",
                                pairs, bytes / 1e9, points, 2.0 * s->contact.thickness, per, nt, what, limit / 1e9);
}
