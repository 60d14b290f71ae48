/* The engine a scene asks for: its integrator, damping and constraints. */
#include "sync/sync_internal.h"
#include "base/error.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "SCENE: MESSAGE" */
#define scene_fail(err, sc, ...) \
    avi_error_set_at((err), AVI_ERR_INPUT, (sc)->source ? (sc)->source : "scene", __VA_ARGS__)

/* Links, spheres and circles (a sphere and a plane) of the particle bodies,
 * in model vertex indices. */
static int collect(const avi_scene *sc, const avi_scene_bodies *info, avi_constraint **out, size_t *count,
                   avi_error *err)
{
    size_t n = 0;
    for (size_t b = 0; b < sc->body_count; b++) {
        const avi_scene_body *body = &sc->bodies[b];
        n += body->link_count;
        for (size_t i = 0; i < body->particle_count; i++)
            n += body->particles[i].constraint.kind == AVI_SURFACE_CIRCLE ? 2
                 : body->particles[i].constraint.kind == AVI_SURFACE_SPHERE ? 1 : 0;
    }
    *out = NULL;
    *count = 0;
    if (!n) return AVI_OK;
    if (!info || info->count != sc->body_count) return scene_fail(err, sc, "constraints need the scene's body layout");
    avi_constraint *c = calloc(n, sizeof *c);
    if (!c) {
        if (err) {
            err->status = AVI_ERR_RUN;
            snprintf(err->message, sizeof err->message, "out of memory");
        }
        return AVI_ERR_RUN;
    }
    size_t k = 0;
    for (size_t b = 0; b < sc->body_count; b++) {
        const avi_scene_body *body = &sc->bodies[b];
        uint32_t first = info->bodies[b].first_vertex;
        for (size_t i = 0; i < body->link_count; i++) {
            const avi_scene_link *l = &body->links[i];
            avi_constraint *q = &c[k++];
            q->kind = AVI_CONSTRAINT_LINK;
            q->a = first + l->a;
            q->b = first + l->b;
            double d[3];
            v3_sub(d, body->particles[l->b].x, body->particles[l->a].x);
            q->length = l->length > 0.0 ? l->length : v3_norm(d);
            if (!(q->length > 0.0)) {
                free(c);
                return scene_fail(err, sc, "bodies.%zu.links.%zu: the particles coincide; give a length", b, i);
            }
            if (fabs(v3_norm(d) - q->length) > 1e-6 * q->length) {
                double len = q->length;
                free(c);
                return scene_fail(err, sc, "bodies.%zu.links.%zu: length %g but the particles are %g apart", b, i, len,
                                  v3_norm(d));
            }
        }
        for (size_t i = 0; i < body->particle_count; i++) {
            const avi_scene_surface *f = &body->particles[i].constraint;
            if (f->kind == AVI_SURFACE_NONE) continue;
            avi_constraint *q = &c[k++];
            q->kind = AVI_CONSTRAINT_SPHERE;
            q->a = first + (uint32_t)i;
            q->length = f->radius;
            v3_copy(q->center, f->center);
            double d[3];
            v3_sub(d, body->particles[i].x, f->center);
            double bad = fabs(v3_norm(d) - f->radius);
            if (f->kind == AVI_SURFACE_CIRCLE) {
                avi_constraint *pl = &c[k++];
                pl->kind = AVI_CONSTRAINT_PLANE;
                pl->a = q->a;
                pl->length = f->radius;
                v3_copy(pl->center, f->center);
                v3_copy(pl->normal, f->normal);
                bad = fmax(bad, fabs(v3_dot(d, f->normal)) / v3_norm(f->normal));
            }
            if (bad > 1e-6 * f->radius) {
                free(c);
                return scene_fail(err, sc, "bodies.%zu.particles.%zu.constraint: the particle is %g off its %s", b, i,
                                  bad, f->kind == AVI_SURFACE_CIRCLE ? "circle" : "sphere");
            }
        }
    }
    *out = c;
    *count = k;
    return AVI_OK;
}

/* The scene key of the first link or particle constraint ("bodies.0.links"). */
static const char *first_constraint(const avi_scene *sc, char *key, size_t len)
{
    for (size_t b = 0; b < sc->body_count; b++) {
        const avi_scene_body *body = &sc->bodies[b];
        if (body->link_count) {
            snprintf(key, len, "bodies.%zu.links", b);
            return key;
        }
        for (size_t i = 0; i < body->particle_count; i++)
            if (body->particles[i].constraint.kind != AVI_SURFACE_NONE) {
                snprintf(key, len, "bodies.%zu.particles.%zu.constraint", b, i);
                return key;
            }
    }
    return "constraints";
}

avi_engine *avi_engine_create_for_scene(const avi_scene *sc, const avi_scene_bodies *info, avi_model *model,
                                        avi_error *err)
{
    avi_constraint *c = NULL;
    size_t nc = 0;
    if (collect(sc, info, &c, &nc, err)) return NULL;
    if (sc->integrator.type == AVI_INTEGRATOR_AVI && nc) {
        free(c);
        scene_fail(err, sc, "links and particle constraints need a synchronous integrator "
                            "(integrator.type: sync-explicit, sync-implicit, ...), not avi");
        return NULL;
    }
    if (sc->integrator.type != AVI_INTEGRATOR_AVI && sc->contact.enabled &&
        !avi_sync_handles_contact(sc->integrator.type)) {
        free(c);
        scene_fail(err, sc, "integrator.type: %s does not handle contact (the scene's contact section); "
                            "the bodies would pass through each other. Use integrator.type: avi, dcr, sync-explicit "
                            "or sync-implicit, or remove contact",
                   avi_integrator_name(sc->integrator.type));
        return NULL;
    }
    if (sc->integrator.type == AVI_INTEGRATOR_SYNC_EXPLICIT4 && (sc->damping != 0.0 || nc)) {
        /* explicit4.c: the composition has a backward substep */
        free(c);
        if (sc->damping != 0.0)
            scene_fail(err, sc, "damping: integrator.type sync-explicit4 does not handle damping; use "
                                "sync-explicit or sync-implicit, or remove damping");
        else {
            char key[96];
            scene_fail(err, sc, "%s: integrator.type sync-explicit4 does not handle links or particle constraints; "
                                "use sync-explicit or sync-implicit", first_constraint(sc, key, sizeof key));
        }
        return NULL;
    }
    if (sc->integrator.solver == AVI_SOLVER_LU && nc) {
        /* newton.c: the constrained solve works on the Schur complement of an SPD matrix */
        free(c);
        char key[96];
        scene_fail(err, sc, "%s: integrator.solver lu does not handle links or particle constraints; use cholesky "
                            "or cg", first_constraint(sc, key, sizeof key));
        return NULL;
    }
    avi_sync_options o = avi_default_sync_options();
    o.type = sc->integrator.type;
    o.alpha = sc->integrator.alpha;
    o.tolerance = sc->integrator.tolerance;
    o.linear_solver = sc->integrator.solver;
    o.damping = sc->damping;
    o.constraints = c;
    o.constraint_count = nc;
    avi_engine *e = avi_engine_create_with(model, &o, err);
    free(c);
    return e;
}
