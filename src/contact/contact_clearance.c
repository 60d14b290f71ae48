/* Initial clearance of contact surfaces; see the header. */
#include "contact/contact_clearance.h"
#include "contact/contact_manager.h"
#include "core/model_internal.h"
#include "contact/triangle_intersection.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Initial positions of every vertex. */
static double (*positions(const avi_model *m))[3]
{
    double (*x)[3] = malloc((m->nv ? m->nv : 1) * sizeof *x);
    if (x)
        for (size_t i = 0; i < m->nv; i++) v3_copy(x[i], m->vert[i].x);
    return x;
}

static int intersection(const avi_model *m, const double (*x)[3], avi_clearance *c)
{
    size_t i, j;
    avi_tri_hit h;
    const uint32_t (*tri)[3] = (const uint32_t (*)[3])m->contact_tri;
    int found = avi_triangles_first_intersection(x, tri, m->ncontact_tri, &i, &j, &h);
    if (found <= 0) return found;
    /* Name the edge that passes through the other triangle; a fold or a
     * repeat has no such edge, its shared edge (or first) stands for it. */
    int first = h.kind != AVI_TRI_CROSS || h.first;
    c->kind = AVI_CLEARANCE_INTERSECT;
    c->tri[0] = first ? i : j;
    c->tri[1] = first ? j : i;
    c->v[0] = h.kind == AVI_TRI_SAME ? tri[i][0] : h.a;
    c->v[1] = h.kind == AVI_TRI_SAME ? tri[i][1] : h.b;
    c->v[2] = c->v[3] = 0;
    c->d = 0.0;
    return 1;
}

/* Mean contact edge length: the broad phase's cell, as the manager's. */
static double cell_size(const double (*x)[3], const uint32_t (*e)[2], size_t ne, double eta)
{
    double len = 0.0;
    for (size_t k = 0; k < ne; k++) {
        double d[3];
        v3_sub(d, x[e[k][1]], x[e[k][0]]);
        len += v3_norm(d) / (double)ne;
    }
    return fmax(len, 2.0 * eta);
}

static void gather(const double (*x)[3], const uint32_t v[4], double s[4][3])
{
    for (int a = 0; a < 4; a++) v3_copy(s[a], x[v[a]]);
}

int avi_contact_clearance(const avi_model *m, avi_clearance *c)
{
    memset(c, 0, sizeof *c);
    c->d = INFINITY;
    double (*x)[3] = positions(m);
    uint32_t *pts = NULL, (*edges)[2] = NULL;
    size_t np = 0, ne = 0;
    avi_broad_phase bp;
    memset(&bp, 0, sizeof bp);
    int rc = -1;
    if (!x || avi_contact_primitives(m, &pts, &np, &edges, &ne)) goto done;
    const double (*cx)[3] = (const double (*)[3])x;
    rc = intersection(m, cx, c);
    if (rc != 0) {
        rc = rc < 0 ? -1 : 0;
        goto done;
    }
    double eta = m->contact.inner_thickness, h = cell_size(cx, (const uint32_t (*)[2])edges, ne, eta), s[4][3];
    const uint32_t (*tri)[3] = (const uint32_t (*)[3])m->contact_tri;
    long n = avi_broad_phase_vf(&bp, cx, pts, np, tri, m->ncontact_tri, eta, h);
    if (n < 0) goto done;
    for (long k = 0; k < n; k++) {
        const uint32_t *t = tri[bp.out[k].b];
        uint32_t v[4] = {pts[bp.out[k].a], t[0], t[1], t[2]};
        gather(cx, v, s);
        double d = avi_pt_distance((const double (*)[3])s, NULL);
        if (d <= eta && d < c->d) *c = (avi_clearance){AVI_CLEARANCE_VF, {v[0], v[1], v[2], v[3]}, {0, bp.out[k].b}, d};
    }
    if (c->kind == AVI_CLEARANCE_OK) {
        n = avi_broad_phase_ee(&bp, cx, (const uint32_t (*)[2])edges, ne, eta, h);
        if (n < 0) goto done;
        for (long k = 0; k < n; k++) {
            const uint32_t *a = edges[bp.out[k].a], *b = edges[bp.out[k].b];
            uint32_t v[4] = {a[0], a[1], b[0], b[1]};
            gather(cx, v, s);
            double d = avi_ee_distance((const double (*)[3])s, NULL);
            if (d <= eta && d < c->d) *c = (avi_clearance){AVI_CLEARANCE_EE, {v[0], v[1], v[2], v[3]}, {0, 0}, d};
        }
    }
    rc = 0;
done:
    if (c->kind == AVI_CLEARANCE_OK) c->d = INFINITY;
    free(x);
    free(pts);
    free(edges);
    avi_broad_phase_free(&bp);
    return rc;
}
