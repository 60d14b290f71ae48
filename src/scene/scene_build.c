/* Scene -> model: meshes, vertices, initial state, elements by material,
 * pins, gravity and time steps. */
#include "avi/mesh.h"
#include "avi/scene.h"
#include "contact/contact_clearance.h"
#include "base/error.h"
#include "mesh/mesh_file.h"
#include "scene/scene_checks.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const avi_scene *s;
    size_t index;              /* body index in the scene */
    const avi_scene_body *b;
    avi_model *m;
    avi_error *err;
} bctx;

/* "file:line: bodies.i.<key>" (or "file: bodies.i.<key> (--set)"). */
static void where(const bctx *c, int line, const char *key, char *out, size_t len)
{
    if (line > 0) snprintf(out, len, "%s:%d: bodies.%zu%s%s", c->s->source, line, c->index, *key ? "." : "", key);
    else snprintf(out, len, "%s: bodies.%zu%s%s (--set)", c->s->source, c->index, *key ? "." : "", key);
}

static int fail(const bctx *c, avi_status status, int line, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));

static int fail(const bctx *c, avi_status status, int line, const char *key, const char *fmt, ...)
{
    char at[160];
    where(c, line, key, at, sizeof at);
    va_list ap;
    va_start(ap, fmt);
    avi_error_vset_at(c->err, status, at, fmt, ap);
    va_end(ap);
    return status;
}

/* A model call failed: name the scene file and the body. */
static int model_fail(const bctx *c)
{
    const avi_error *e = avi_model_error(c->m);
    char at[160];
    where(c, c->b->line, "", at, sizeof at);
    if (c->err) {
        snprintf(c->err->message, sizeof c->err->message, "%s (%.60s): %.280s", at, c->b->name, e->message);
        c->err->status = e->status != AVI_OK ? e->status : AVI_ERR_INPUT;
    }
    return c->err ? c->err->status : AVI_ERR_INPUT;
}

/* A mesh function failed: its message after the scene's position. */
static int mesh_fail(const bctx *c, int line, const char *key, const avi_error *e)
{
    return fail(c, e->status != AVI_OK ? e->status : AVI_ERR_INPUT, line, key, "%s", e->message);
}

/* Rotates a generated ball so that its graded pole, (0, 0, -r), points
 * along `pole` (Rodrigues' rotation about south x pole). The default pole
 * leaves the generator's bits untouched. */
static void turn_south_pole(avi_mesh *mesh, const double pole[3])
{
    double len = sqrt(pole[0] * pole[0] + pole[1] * pole[1] + pole[2] * pole[2]);
    double b[3] = {pole[0] / len, pole[1] / len, pole[2] / len};
    if (b[0] == 0.0 && b[1] == 0.0 && b[2] < 0.0) return;
    if (b[0] == 0.0 && b[1] == 0.0) { /* the north pole: half a turn about x */
        for (size_t i = 0; i < mesh->vertex_count; i++) {
            mesh->x[i][1] = -mesh->x[i][1];
            mesh->x[i][2] = -mesh->x[i][2];
        }
        return;
    }
    /* axis k = (0, 0, -1) x b / |.|, cos = -b_z, sin = |(0, 0, -1) x b| */
    double s = sqrt(b[0] * b[0] + b[1] * b[1]), co = -b[2];
    double k[3] = {b[1] / s, -b[0] / s, 0.0};
    for (size_t i = 0; i < mesh->vertex_count; i++) {
        double *x = mesh->x[i];
        double kx[3] = {k[1] * x[2] - k[2] * x[1], k[2] * x[0] - k[0] * x[2], k[0] * x[1] - k[1] * x[0]};
        double kd = k[0] * x[0] + k[1] * x[1] + k[2] * x[2], r[3];
        for (int c = 0; c < 3; c++) r[c] = x[c] * co + kx[c] * s + k[c] * kd * (1.0 - co);
        for (int c = 0; c < 3; c++) x[c] = r[c];
    }
}

/* A mesh file's vertices that no element uses (Gmsh keeps its geometry
 * and size-control points among the nodes) are dropped, said once on
 * stderr; *renumber then maps the file's numbers to the kept ones
 * (UINT32_MAX: dropped). */
static int drop_unused(const bctx *c, avi_mesh *mesh, uint32_t **renumber)
{
    avi_error e = {AVI_OK, ""};
    size_t n = mesh->vertex_count, dropped = 0;
    if (!(*renumber = malloc((n ? n : 1) * sizeof **renumber)))
        return fail(c, AVI_ERR_RUN, c->b->mesh_line, "mesh.file", "out of memory");
    if (avi_mesh_drop_unused(mesh, *renumber, &dropped, &e)) return mesh_fail(c, c->b->mesh_line, "mesh.file", &e);
    if (dropped == 0) {
        free(*renumber);
        *renumber = NULL;
        return AVI_OK;
    }
    fprintf(stderr, "note: %s: dropped %zu of %zu nodes that no %s uses (geometry or size-control points)\n",
            c->b->mesh.file, dropped, n, mesh->tet_count ? "tetrahedron" : "triangle");
    return AVI_OK;
}

/* The body's mesh. *renumber (freed by the caller) maps the mesh's own
 * vertex numbers (*own_count of them) to the body's when they differ:
 * unused vertices of a file dropped, mesh.reorder. */
static int make_mesh(const bctx *c, avi_mesh *mesh, uint32_t **renumber, size_t *own_count, unsigned char *sha256)
{
    const avi_scene_mesh *sm = &c->b->mesh;
    avi_error e = {AVI_OK, ""};
    int rc = AVI_OK;
    switch (sm->source) {
    case AVI_MESH_ICOSPHERE: rc = avi_mesh_icosphere(sm->radius, sm->subdivisions, mesh, &e); break;
    case AVI_MESH_DISK: rc = avi_mesh_disk(sm->radius, sm->rings, mesh, &e); break;
    case AVI_MESH_RECT: rc = avi_mesh_rect_grid(sm->lx, sm->ly, sm->nx, sm->ny, mesh, &e); break;
    case AVI_MESH_TET_BOX: rc = avi_mesh_tet_box(sm->lx, sm->ly, sm->lz, sm->nx, sm->ny, sm->nz, mesh, &e); break;
    case AVI_MESH_BALL:
        rc = sm->shells ? avi_mesh_tet_ball_shells(sm->radius, sm->n, sm->grading, mesh, &e)
                        : avi_mesh_tet_ball_graded(sm->radius, sm->n, sm->grading, mesh, &e);
        if (rc == AVI_OK) turn_south_pole(mesh, sm->pole);
        break;
    case AVI_MESH_FILE:
        rc = avi_mesh_read_hashed(sm->file, mesh, sha256, &e);
        if (rc) return mesh_fail(c, c->b->mesh_line, "mesh.file", &e);
        *own_count = mesh->vertex_count;
        if ((rc = drop_unused(c, mesh, renumber))) return rc;
        break;
    default: return fail(c, AVI_ERR_INPUT, c->b->mesh_line, "mesh", "no mesh");
    }
    if (rc) return mesh_fail(c, c->b->mesh_line, "mesh", &e);
    if (sm->source != AVI_MESH_FILE) *own_count = mesh->vertex_count;
    if (sm->jitter > 0.0 && avi_mesh_jitter_interior(mesh, sm->jitter, sm->seed, &e))
        return mesh_fail(c, c->b->mesh_line, "mesh.jitter", &e);
    char what[200];
    where(c, c->b->mesh_line, "mesh", what, sizeof what);
    /* The readers validated a file's mesh already (naming its lines). */
    if ((sm->source != AVI_MESH_FILE || sm->jitter > 0.0) && avi_mesh_validate(mesh, what, &e)) {
        if (c->err) *c->err = e;
        return e.status != AVI_OK ? e.status : AVI_ERR_INPUT;
    }
    if (mesh->vertex_count > UINT32_MAX / 2)
        return fail(c, AVI_ERR_INPUT, c->b->mesh_line, "mesh", "too many vertices (%zu)", mesh->vertex_count);
    /* After validation, so that its messages use the mesh's own numbers. */
    if (sm->reorder) {
        uint32_t *order = malloc((mesh->vertex_count ? mesh->vertex_count : 1) * sizeof *order);
        if (!order) return fail(c, AVI_ERR_RUN, c->b->mesh_line, "mesh.reorder", "out of memory");
        if (avi_mesh_reorder(mesh, order, &e)) {
            free(order);
            return mesh_fail(c, c->b->mesh_line, "mesh.reorder", &e);
        }
        if (*renumber) { /* after dropping: file -> kept -> reordered */
            for (size_t v = 0; v < *own_count; v++)
                if ((*renumber)[v] != UINT32_MAX) (*renumber)[v] = order[(*renumber)[v]];
            free(order);
        } else {
            *renumber = order;
        }
    }
    return AVI_OK;
}

static int pair_cmp(const void *pa, const void *pb)
{
    const uint32_t *a = pa, *b = pb;
    if (a[0] != b[0]) return a[0] < b[0] ? -1 : 1;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

/* The unique edges of the tetrahedra, or of the triangles when there are
 * none, sorted. */
static int unique_edges(const avi_mesh *mesh, uint32_t (**out)[2], size_t *count)
{
    static const int tet_edges[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    static const int tri_edges[3][2] = {{0, 1}, {1, 2}, {2, 0}};
    int tets = mesh->tet_count > 0;
    size_t nel = tets ? mesh->tet_count : mesh->triangle_count, per = tets ? 6 : 3;
    uint32_t (*e)[2] = malloc((nel > 0 ? nel * per : 1) * sizeof *e);
    if (!e) return -1;
    size_t n = 0;
    for (size_t t = 0; t < nel; t++)
        for (size_t k = 0; k < per; k++) {
            uint32_t a = tets ? mesh->tets[t][tet_edges[k][0]] : mesh->triangles[t][tri_edges[k][0]];
            uint32_t b = tets ? mesh->tets[t][tet_edges[k][1]] : mesh->triangles[t][tri_edges[k][1]];
            e[n][0] = a < b ? a : b;
            e[n][1] = a < b ? b : a;
            n++;
        }
    qsort(e, n, sizeof *e, pair_cmp);
    size_t u = 0;
    for (size_t i = 0; i < n; i++)
        if (u == 0 || e[i][0] != e[u - 1][0] || e[i][1] != e[u - 1][1]) {
            e[u][0] = e[i][0];
            e[u][1] = e[i][1];
            u++;
        }
    *out = e;
    *count = u;
    return 0;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Marks the vertices on open edges (edges of one triangle) of a triangle
 * surface; tetrahedral meshes have a closed surface and get none. malloc'd
 * mask, NULL when out of memory. */
static unsigned char *open_edge_vertices(const avi_mesh *mesh)
{
    unsigned char *mask = calloc(mesh->vertex_count ? mesh->vertex_count : 1, 1);
    if (!mask || mesh->tet_count > 0) return mask;
    size_t n = 3 * mesh->triangle_count;
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    if (!key) {
        free(mask);
        return NULL;
    }
    for (size_t t = 0; t < mesh->triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint64_t a = mesh->triangles[t][k], b = mesh->triangles[t][(k + 1) % 3];
            key[3 * t + k] = a < b ? a << 32 | b : b << 32 | a;
        }
    qsort(key, n, sizeof *key, cmp_u64);
    for (size_t i = 0; i < n;) {
        size_t j = i + 1;
        while (j < n && key[j] == key[i]) j++;
        if (j - i == 1) mask[key[i] >> 32] = mask[key[i] & 0xffffffffu] = 1;
        i = j;
    }
    free(key);
    return mask;
}

/* Marks the pinned vertices (body-local), checking what the scene could
 * not check before the mesh existed. pinned.indices name vertices as the
 * mesh numbers them; `renumber` (mesh.reorder, else NULL) maps them. */
static int pin_mask(const bctx *c, const double (*rest)[3], size_t nv, const uint32_t *renumber, size_t own_count,
                    unsigned char *pinned)
{
    const avi_scene_body *b = c->b;
    if (b->pin == AVI_PIN_INDICES) {
        for (size_t i = 0; i < b->pin_count; i++) {
            if (b->pin_indices[i] >= own_count)
                return fail(c, AVI_ERR_INPUT, b->pinned_line, "pinned.indices",
                            "vertex %u out of range (the body has %zu vertices)", b->pin_indices[i], own_count);
            uint32_t v = renumber ? renumber[b->pin_indices[i]] : b->pin_indices[i];
            if (v == UINT32_MAX)
                return fail(c, AVI_ERR_INPUT, b->pinned_line, "pinned.indices",
                            "vertex %u is used by no element of the mesh file (dropped)", b->pin_indices[i]);
            pinned[v] = 1;
        }
    } else if (b->pin == AVI_PIN_BOX) {
        size_t n = 0;
        for (size_t v = 0; v < nv; v++) {
            int in = 1;
            for (int k = 0; k < 3; k++)
                if (rest[v][k] < b->pin_box[0][k] || rest[v][k] > b->pin_box[1][k]) in = 0;
            if (in) {
                pinned[v] = 1;
                n++;
            }
        }
        /* An empty box is almost always a typo in its coordinates. */
        if (n == 0) return fail(c, AVI_ERR_INPUT, b->pinned_line, "pinned.box", "the box pins no vertex");
    }
    return AVI_OK;
}

/* Adds the body's vertices: rest positions, initial state, pins. */
static int add_vertices(const bctx *c, const double (*pos)[3], size_t nv, int body, const double (*vel)[3],
                        const unsigned char *pinned_extra, const uint32_t *renumber, size_t own_count, uint32_t *first)
{
    const avi_scene_body *b = c->b;
    double (*rest)[3] = malloc((nv ? nv : 1) * sizeof *rest);
    unsigned char *pinned = calloc(nv ? nv : 1, 1);
    int rc = AVI_OK;
    if (!rest || !pinned) {
        rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
        goto done;
    }
    double centroid[3] = {0, 0, 0};
    for (size_t v = 0; v < nv; v++)
        for (int k = 0; k < 3; k++) {
            rest[v][k] = pos[v][k] + b->translate[k];
            centroid[k] += rest[v][k] / (double)nv;
        }
    if (pinned_extra) memcpy(pinned, pinned_extra, nv);
    if ((rc = pin_mask(c, (const double (*)[3])rest, nv, renumber, own_count, pinned))) goto done;
    *first = (uint32_t)avi_model_vertex_count(c->m);
    for (size_t v = 0; v < nv; v++) {
        int64_t id = avi_model_add_vertex(c->m, body, rest[v]);
        if (id < 0) {
            rc = model_fail(c);
            goto done;
        }
        double x[3], u[3] = {0, 0, 0};
        for (int k = 0; k < 3; k++) {
            x[k] = centroid[k] + b->scale * (rest[v][k] - centroid[k]);
            if (!pinned[v]) u[k] = b->velocity[k] + (vel ? vel[v][k] : 0.0);
        }
        if (!pinned[v]) {
            /* angular_velocity: w x (x - c) about the rest centroid. */
            const double *w = b->angular_velocity;
            double r[3] = {x[0] - centroid[0], x[1] - centroid[1], x[2] - centroid[2]};
            u[0] += w[1] * r[2] - w[2] * r[1];
            u[1] += w[2] * r[0] - w[0] * r[2];
            u[2] += w[0] * r[1] - w[1] * r[0];
        }
        if (avi_model_set_state(c->m, (uint32_t)id, x, u) || (pinned[v] && avi_model_pin(c->m, (uint32_t)id))) {
            rc = model_fail(c);
            goto done;
        }
    }
done:
    free(rest);
    free(pinned);
    return rc;
}

static int build_mesh_body(const bctx *c, int body, avi_scene_body_info *info)
{
    const avi_scene_body *b = c->b;
    const avi_scene_material *mat = &c->s->materials[b->material];
    avi_mesh mesh = {0};
    uint32_t (*edges)[2] = NULL, (*global)[3] = NULL, (*surface)[3] = NULL;
    size_t nedge = 0, nsurface = 0;
    unsigned char *used = NULL, *boundary = NULL;
    uint32_t *renumber = NULL;
    size_t own_count = 0;
    int rc = make_mesh(c, &mesh, &renumber, &own_count, info ? info->mesh_sha256 : NULL);
    if (rc) goto done;

    static const char *const model_names[] = {"shell", "membrane", "neo-hookean", "spring"};
    int shell = mat->model == AVI_MATERIAL_SHELL || mat->model == AVI_MATERIAL_MEMBRANE;
    if (shell && (mesh.triangle_count == 0 || mesh.tet_count > 0)) {
        rc = fail(c, AVI_ERR_INPUT, b->line, "material", "material '%s' (%s) needs a triangle surface mesh; the mesh has %s",
                  mat->name, model_names[mat->model], mesh.tet_count ? "tetrahedra" : "no triangles");
        goto done;
    }
    if (mat->model == AVI_MATERIAL_NEO_HOOKEAN && mesh.tet_count == 0) {
        rc = fail(c, AVI_ERR_INPUT, b->line, "material", "material '%s' (neo-hookean) needs tetrahedra; the mesh has none",
                  mat->name);
        goto done;
    }
    if (mat->model == AVI_MATERIAL_SPRING && unique_edges(&mesh, &edges, &nedge)) {
        rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
        goto done;
    }
    /* The surface an output writer draws: the tetrahedra's boundary for solids. */
    if (mesh.tet_count > 0) {
        avi_error e = {AVI_OK, ""};
        if (avi_mesh_boundary_triangles(&mesh, &surface, &nsurface, &e)) {
            rc = mesh_fail(c, b->mesh_line, "mesh", &e);
            goto done;
        }
    }

    /* Every vertex needs an element, or it has no mass. */
    used = calloc(mesh.vertex_count ? mesh.vertex_count : 1, 1);
    if (!used) {
        rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
        goto done;
    }
    if (mesh.tet_count > 0) {
        for (size_t t = 0; t < mesh.tet_count; t++)
            for (int k = 0; k < 4; k++) used[mesh.tets[t][k]] = 1;
    } else {
        for (size_t t = 0; t < mesh.triangle_count; t++)
            for (int k = 0; k < 3; k++) used[mesh.triangles[t][k]] = 1;
    }
    for (size_t v = 0; v < mesh.vertex_count; v++)
        if (!used[v]) {
            rc = fail(c, AVI_ERR_INPUT, b->mesh_line, "mesh", "vertex %zu belongs to no %s", v,
                      mesh.tet_count ? "tetrahedron" : "triangle");
            goto done;
        }

    uint32_t first;
    if (b->pin == AVI_PIN_BOUNDARY && b->pin_clamped && !(mat->model == AVI_MATERIAL_SHELL && mat->bending == AVI_BENDING_MIDEDGE)) {
        static const char *const no_slope[] = {"a hinge shell", "a membrane", "a neo-hookean solid (tetrahedra)",
                                               "a spring network"};
        rc = fail(c, AVI_ERR_INPUT, b->pinned_line, "pinned.boundary",
                  "clamped needs material '%s' to be model: shell with bending: midedge (%s has no slope to hold); "
                  "use boundary: simply-supported%s", mat->name, no_slope[mat->model],
                  mesh.tet_count ? ", or pinned: box for a solid" : "");
        goto done;
    }
    if (b->pin == AVI_PIN_BOUNDARY) {
        boundary = open_edge_vertices(&mesh);
        if (!boundary) {
            rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
            goto done;
        }
        size_t n = 0;
        for (size_t v = 0; v < mesh.vertex_count; v++) n += boundary[v];
        if (n == 0) {
            rc = fail(c, AVI_ERR_INPUT, b->pinned_line, "pinned.boundary", "%s",
                      mesh.tet_count ? "a solid (tetrahedra) has no open boundary to pin; use pinned: box or indices"
                                     : "the surface is closed: it has no boundary");
            goto done;
        }
    }
    if ((rc = add_vertices(c, (const double (*)[3])mesh.x, mesh.vertex_count, body, NULL, boundary, renumber, own_count,
                           &first)))
        goto done;

    if (shell) {
        avi_shell_material sm = {mat->youngs, mat->poisson, mat->density, mat->thickness};
        global = malloc(mesh.triangle_count * sizeof *global);
        if (!global) {
            rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
            goto done;
        }
        for (size_t t = 0; t < mesh.triangle_count; t++)
            for (int k = 0; k < 3; k++) global[t][k] = first + mesh.triangles[t][k];
        avi_bending bend = mat->model == AVI_MATERIAL_SHELL ? (avi_bending)mat->bending : AVI_BENDING_NONE;
        if (avi_model_add_shell_mesh(c->m, (const uint32_t (*)[3])global, mesh.triangle_count, &sm, bend,
                                     b->pin == AVI_PIN_BOUNDARY && b->pin_clamped)) {
            rc = model_fail(c);
            goto done;
        }
    } else if (mat->model == AVI_MATERIAL_NEO_HOOKEAN) {
        avi_solid_material sm = {mat->youngs, mat->poisson, mat->density};
        for (size_t t = 0; t < mesh.tet_count; t++) {
            const uint32_t *q = mesh.tets[t];
            if (avi_model_add_tet(c->m, first + q[0], first + q[1], first + q[2], first + q[3], &sm)) {
                rc = model_fail(c);
                goto done;
            }
        }
    } else {
        for (size_t e = 0; e < nedge; e++)
            if (avi_model_add_spring(c->m, first + edges[e][0], first + edges[e][1], mat->stiffness, -1.0)) {
                rc = model_fail(c);
                goto done;
            }
        /* For springs, density is the mass of each vertex. */
        for (size_t v = 0; v < mesh.vertex_count; v++)
            if (avi_model_add_mass(c->m, first + (uint32_t)v, mat->density)) {
                rc = model_fail(c);
                goto done;
            }
    }

    if (info) {
        info->first_vertex = first;
        info->vertex_count = (uint32_t)mesh.vertex_count;
        if (mesh.tet_count > 0) {
            info->triangles = surface;
            info->triangle_count = nsurface;
            surface = NULL;
            info->tets = mesh.tets;
            info->tet_count = mesh.tet_count;
            mesh.tets = NULL;
        } else {
            info->triangles = mesh.triangles;
            info->triangle_count = mesh.triangle_count;
            mesh.triangles = NULL;
        }
        info->edges = edges;
        info->edge_count = nedge;
        edges = NULL;
    }
done:
    /* The mesh may have lost arrays to info; avi_mesh_free copes with NULL. */
    avi_mesh_free(&mesh);
    free(renumber);
    free(edges);
    free(global);
    free(surface);
    free(used);
    free(boundary);
    return rc;
}

static int build_particle_body(const bctx *c, int body, avi_scene_body_info *info)
{
    const avi_scene_body *b = c->b;
    size_t n = b->particle_count;
    double (*x)[3] = malloc(n * sizeof *x), (*v)[3] = malloc(n * sizeof *v);
    unsigned char *pinned = calloc(n, 1);
    uint32_t (*edges)[2] = NULL;
    int rc = AVI_OK;
    if (!x || !v || !pinned) {
        rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        memcpy(x[i], b->particles[i].x, sizeof x[i]);
        memcpy(v[i], b->particles[i].v, sizeof v[i]);
        pinned[i] = (unsigned char)(b->particles[i].pinned != 0);
    }
    uint32_t first;
    if ((rc = add_vertices(c, (const double (*)[3])x, n, body, (const double (*)[3])v, pinned, NULL, n, &first))) goto done;
    for (size_t i = 0; i < n; i++)
        if (b->particles[i].mass > 0.0 && avi_model_add_mass(c->m, first + (uint32_t)i, b->particles[i].mass)) {
            rc = model_fail(c);
            goto done;
        }
    if (b->spring_count) {
        edges = malloc(b->spring_count * sizeof *edges);
        if (!edges) {
            rc = fail(c, AVI_ERR_RUN, b->line, "", "out of memory");
            goto done;
        }
    }
    for (size_t i = 0; i < b->spring_count; i++) {
        const avi_scene_spring *s = &b->springs[i];
        edges[i][0] = s->a;
        edges[i][1] = s->b;
        if (avi_model_add_spring(c->m, first + s->a, first + s->b, s->stiffness, s->rest)) {
            rc = model_fail(c);
            goto done;
        }
    }
    if (info) {
        info->first_vertex = first;
        info->vertex_count = (uint32_t)n;
        info->edges = edges;
        info->edge_count = b->spring_count;
        edges = NULL;
    }
done:
    free(x);
    free(v);
    free(pinned);
    free(edges);
    return rc;
}

void avi_scene_bodies_free(avi_scene_bodies *info)
{
    if (!info) return;
    for (size_t i = 0; i < info->count; i++) {
        avi_scene_body_info *b = &info->bodies[i];
        free(b->name);
        free(b->triangles);
        free(b->tets);
        free(b->edges);
    }
    free(info->bodies);
    memset(info, 0, sizeof *info);
}

/* Contact-eligible primitives: every body's surface triangles, and the
 * vertices of particle bodies as points. */
static int add_contact(const avi_scene *s, avi_model *m, const avi_scene_bodies *info)
{
    avi_contact_settings cs = {s->contact.thickness, s->contact.inner_thickness, s->contact.stiffness,
                               s->contact.layers, s->contact.friction};
    if (avi_model_set_contact(m, &cs)) return -1;
    for (size_t b = 0; b < info->count; b++) {
        const avi_scene_body_info *bi = &info->bodies[b];
        if (bi->triangle_count == 0) {
            for (uint32_t v = 0; v < bi->vertex_count; v++)
                if (avi_model_add_contact_point(m, bi->first_vertex + v)) return -1;
            continue;
        }
        uint32_t (*g)[3] = malloc(bi->triangle_count * sizeof *g);
        if (!g) return -1;
        for (size_t t = 0; t < bi->triangle_count; t++)
            for (int k = 0; k < 3; k++) g[t][k] = bi->first_vertex + bi->triangles[t][k];
        int rc = avi_model_add_contact_triangles(m, (const uint32_t (*)[3])g, bi->triangle_count);
        free(g);
        if (rc) return -1;
    }
    return 0;
}

/* A contact triangle (index into the model's, in body order as
 * add_contact adds them): its body and body-local surface index. */
static size_t triangle_body(const avi_scene_bodies *info, size_t t, size_t *local)
{
    size_t b = 0;
    while (b + 1 < info->count && t >= info->bodies[b].triangle_count) t -= info->bodies[b++].triangle_count;
    *local = t;
    return b;
}

/* "vertex 12 of 'sphere'" for model vertex v. */
static size_t vertex_name(const avi_model *m, const avi_scene_bodies *info, uint32_t v, char *out, size_t len)
{
    size_t b = (size_t)avi_model_vertex_body(m, v);
    snprintf(out, len, "vertex %u of '%.60s'", v - info->bodies[b].first_vertex, info->bodies[b].name);
    return b;
}

/* "edge (3, 4) of 'sphere'" */
static size_t edge_name(const avi_model *m, const avi_scene_bodies *info, uint32_t u, uint32_t v, char *out,
                        size_t len)
{
    size_t b = (size_t)avi_model_vertex_body(m, u);
    uint32_t f = info->bodies[b].first_vertex;
    snprintf(out, len, "edge (%u, %u) of '%.60s'", u - f, v - f, info->bodies[b].name);
    return b;
}

/* "surface triangle 40 (vertices 1, 2, 3) of 'plate'" */
static size_t triangle_name(const avi_scene_bodies *info, size_t t, char *out, size_t len)
{
    size_t local, b = triangle_body(info, t, &local);
    const uint32_t *v = info->bodies[b].triangles[local];
    snprintf(out, len, "surface triangle %zu (vertices %u, %u, %u) of '%.60s'", local, v[0], v[1], v[2],
             info->bodies[b].name);
    return b;
}

/* Bodies that intersect, or come within the contact's inner thickness, at
 * t = 0 cannot run (contact/contact_clearance.h): refuse them here, before
 * an engine builds contact layers, naming both bodies and one pair. */
static int check_clearance(const avi_scene *s, const avi_model *m, const avi_scene_bodies *info, avi_error *err)
{
    avi_clearance c;
    if (avi_contact_clearance(m, &c)) return avi_error_set(err, AVI_ERR_RUN, "%.150s: out of memory", s->source);
    if (c.kind == AVI_CLEARANCE_OK) return AVI_OK;
    char p[140], q[140];
    size_t a, b;
    if (c.kind == AVI_CLEARANCE_INTERSECT) {
        a = edge_name(m, info, c.v[0], c.v[1], p, sizeof p);
        b = triangle_name(info, c.tri[1], q, sizeof q);
    } else if (c.kind == AVI_CLEARANCE_VF) {
        a = vertex_name(m, info, c.v[0], p, sizeof p);
        b = triangle_name(info, c.tri[1], q, sizeof q);
    } else {
        a = edge_name(m, info, c.v[0], c.v[1], p, sizeof p);
        b = edge_name(m, info, c.v[2], c.v[3], q, sizeof q);
    }
    const char *na = info->bodies[a].name, *nb = info->bodies[b].name;
    int inter = c.kind == AVI_CLEARANCE_INTERSECT;
    char who[200], move[100] = "";
    if (a == b) {
        snprintf(who, sizeof who, "body '%.60s' (bodies.%zu) %s itself", na, a, inter ? "intersects" : "comes closer to");
    } else {
        snprintf(who, sizeof who, "bodies '%.60s' (bodies.%zu) and '%.60s' (bodies.%zu) %s", na, a, nb, b,
                 inter ? "intersect" : "come closer");
        snprintf(move, sizeof move, "; move them apart (bodies.%zu.translate or bodies.%zu.translate)", a, b);
    }
    if (inter)
        return avi_error_set(err, AVI_ERR_INPUT, "%.150s: %s at t = 0: %s passes through %s%s", s->source, who, p, q,
                             move);
    return avi_error_set(err, AVI_ERR_INPUT, "%.150s: %s than contact.inner_thickness = %g at t = 0: %s is %.3g from "
                         "%s%s%s contact.inner_thickness", s->source, who, s->contact.inner_thickness, p, c.d, q, move,
                         a == b ? "; its mesh is finer than" : " or lower");
}

/* A hand-built avi_scene may hold any int in an enum field: refused here,
 * naming the field, before anything indexes a table by it. */
static int check_enums(const avi_scene *s, avi_error *err)
{
    for (size_t i = 0; i < s->material_count; i++) {
        const avi_scene_material *mat = &s->materials[i];
        if ((unsigned)mat->model > AVI_MATERIAL_SPRING)
            return avi_error_set(err, AVI_ERR_INPUT, "%.150s: materials.%.60s.model: %d is not an avi_material_model",
                                 s->source, mat->name, (int)mat->model);
        if (mat->model == AVI_MATERIAL_SHELL && mat->bending != AVI_BENDING_HINGE && mat->bending != AVI_BENDING_MIDEDGE &&
            mat->bending != AVI_BENDING_NONE)
            return avi_error_set(err, AVI_ERR_INPUT, "%.150s: materials.%.60s.bending: %d is not an avi_bending",
                                 s->source, mat->name, mat->bending);
    }
    for (size_t i = 0; i < s->body_count; i++) {
        const avi_scene_body *b = &s->bodies[i];
        if ((unsigned)b->mesh.source > AVI_MESH_BALL)
            return avi_error_set(err, AVI_ERR_INPUT, "%.150s: bodies.%zu.mesh: source %d is not an avi_mesh_source",
                                 s->source, i, (int)b->mesh.source);
        if ((unsigned)b->pin > AVI_PIN_BOUNDARY)
            return avi_error_set(err, AVI_ERR_INPUT, "%.150s: bodies.%zu.pinned: %d is not an avi_pin_kind", s->source,
                                 i, (int)b->pin);
        if (b->material >= 0 && (size_t)b->material >= s->material_count && b->mesh.source != AVI_MESH_NONE)
            return avi_error_set(err, AVI_ERR_INPUT, "%.150s: bodies.%zu.material: %d is not a material index",
                                 s->source, i, b->material);
        for (size_t p = 0; p < b->particle_count; p++)
            if ((unsigned)b->particles[p].constraint.kind > AVI_SURFACE_CIRCLE)
                return avi_error_set(err, AVI_ERR_INPUT,
                                     "%.150s: bodies.%zu.particles.%zu.constraint: %d is not an avi_surface_kind",
                                     s->source, i, p, (int)b->particles[p].constraint.kind);
    }
    return AVI_OK;
}

int avi_scene_build(const avi_scene *s, avi_model **out, avi_scene_bodies *info, avi_error *err)
{
    *out = NULL;
    avi_scene_bodies own; /* contact needs the surfaces even when the caller does not */
    int own_info = !info && s->contact.enabled;
    if (own_info) info = &own;
    if (info) memset(info, 0, sizeof *info);
    if (err) {
        err->status = AVI_OK;
        err->message[0] = '\0';
    }
    int rc = check_enums(s, err);
    if (rc || (rc = avi_scene_check_materials(s, err)) || (rc = avi_scene_check_generated_memory(s, err))) return rc;
    avi_model *m = avi_model_create();
    avi_body_potentials *ranges = calloc(s->body_count ? s->body_count : 1, sizeof *ranges);
    if (!m || !ranges) goto oom;
    if (info) {
        info->bodies = calloc(s->body_count ? s->body_count : 1, sizeof *info->bodies);
        if (!info->bodies) goto oom;
        info->count = s->body_count;
    }
    for (size_t i = 0; i < s->body_count; i++) {
        bctx c = {s, i, &s->bodies[i], m, err};
        avi_scene_body_info *bi = info ? &info->bodies[i] : NULL;
        if (bi && !(bi->name = strdup(c.b->name))) goto oom;
        size_t first = avi_model_vertex_count(m);
        for (int k = 0; k < AVI_KIND_COUNT; k++) ranges[i].first[k] = avi_model_potential_count(m, (avi_kind)k);
        int body = avi_model_add_body(m, c.b->name);
        if (body < 0) rc = model_fail(&c);
        else if (c.b->mesh.source == AVI_MESH_NONE) rc = build_particle_body(&c, body, bi);
        else rc = build_mesh_body(&c, body, bi);
        if (rc == AVI_OK && c.b->time_step > 0.0 && avi_model_set_body_time_step(m, body, c.b->time_step))
            rc = model_fail(&c);
        for (int k = 0; k < AVI_KIND_COUNT; k++) ranges[i].end[k] = avi_model_potential_count(m, (avi_kind)k);
        if (rc == AVI_OK)
            rc = avi_scene_check_masses(s, i, m, (uint32_t)first, (uint32_t)(avi_model_vertex_count(m) - first), err);
        if (rc != AVI_OK) goto failed;
    }
    avi_model_set_gravity(m, s->gravity);
    if ((s->contact.enabled && add_contact(s, m, info)) || avi_model_finalize(m, &s->time_step)) {
        const avi_error *e = avi_model_error(m);
        rc = e->status != AVI_OK ? (int)e->status : AVI_ERR_INPUT;
        if (err && !avi_scene_explain_step(s, m, ranges, err)) {
            snprintf(err->message, sizeof err->message, "%.150s: %.340s", s->source, e->message);
            err->status = (avi_status)rc;
        }
        goto failed;
    }
    if ((rc = avi_scene_check_limits(s, m, ranges, err))) goto failed;
    if (s->contact.enabled && (rc = avi_scene_check_contact_memory(s, m, err))) goto failed;
    if (s->contact.enabled && (rc = check_clearance(s, m, info, err))) goto failed;
    free(ranges);
    if (own_info) avi_scene_bodies_free(info);
    *out = m;
    return AVI_OK;
failed:
    free(ranges);
    avi_model_destroy(m);
    avi_scene_bodies_free(info);
    return rc;
oom:
    free(ranges);
    avi_model_destroy(m);
    avi_scene_bodies_free(info);
    if (err) {
        snprintf(err->message, sizeof err->message, "%s: out of memory", s->source);
        err->status = AVI_ERR_RUN;
    }
    return AVI_ERR_RUN;
}
