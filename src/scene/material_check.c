/* Material values whose derived quantities are not positive normal numbers
 * (density 1e-308, thickness 1e300, youngs 1e-300 ...) are refused naming
 * the key, instead of failing later as a zero step or a NaN energy. */
#include "scene/scene_checks.h"
#include "base/error.h"
#include "core/kinds.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const keys[4] = {"youngs", "density", "thickness", "stiffness"};

int avi_scene_check_fail(avi_error *err, const avi_scene *s, const char *fmt, ...)
{
    char at[61]; /* the scene's name, cut to leave room for the message */
    snprintf(at, sizeof at, "%.60s", s->source);
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset_at(err, AVI_ERR_INPUT, at, fmt, ap);
    va_end(ap);
    return rc;
}

void avi_material_key(const avi_scene_material *mat, const double p[4], char *out, size_t len)
{
    /* Typical SI values; for springs, density is a vertex's mass in kg. */
    const double value[4] = {mat->youngs, mat->density, mat->thickness, mat->stiffness};
    const double typical[4] = {1e9, mat->model == AVI_MATERIAL_SPRING ? 1.0 : 1e3, 1e-3, 1e3};
    int best = -1;
    double worst = -1.0;
    for (int k = 0; k < 4; k++) {
        if (p[k] == 0.0 || !(value[k] > 0.0)) continue;
        double d = fabs(p[k] * log10(value[k] / typical[k]));
        if (d > worst) worst = d, best = k;
    }
    snprintf(out, len, "materials.%s.%s", mat->name, best < 0 ? "density" : keys[best]);
}

/* "youngs 1e+07, density 1000" for the keys with a non-zero power. */
static void material_values(const avi_scene_material *mat, const double p[4], char *out, size_t len)
{
    const double value[4] = {mat->youngs, mat->density, mat->thickness, mat->stiffness};
    size_t n = 0;
    out[0] = 0;
    for (int k = 0; k < 4 && n < len; k++)
        if (p[k] != 0.0) n += (size_t)snprintf(out + n, len - n, "%s%s %g", n ? ", " : "", keys[k], value[k]);
}

/* What a material value gives: a positive normal number (so its inverse and
 * square root are finite and non-zero too), or an error naming the key. */
static int derived(const avi_scene *s, const avi_scene_material *mat, const char *what, double value,
                   double py, double pd, double ph, double pk, avi_error *err)
{
    if (isnormal(value) && value > 0.0) return 0;
    const double p[4] = {py, pd, ph, pk};
    char key[160], values[160];
    avi_material_key(mat, p, key, sizeof key);
    material_values(mat, p, values, sizeof values);
    return avi_scene_check_fail(err, s, "%s: the %s is %g, not a positive normal number (%s); bring the "
                                "material's values into range", key, what, value, values);
}

int avi_scene_check_materials(const avi_scene *s, avi_error *err)
{
    for (size_t i = 0; i < s->material_count; i++) {
        const avi_scene_material *m = &s->materials[i];
        double E = m->youngs, rho = m->density, h = m->thickness, nu2 = 1.0 - m->poisson * m->poisson;
        int rc = 0;
        switch (m->model) {
        case AVI_MATERIAL_SHELL:
        case AVI_MATERIAL_MEMBRANE:
            if (m->model == AVI_MATERIAL_SHELL)
                rc = derived(s, m, "bending modulus youngs thickness^3 / (12 (1 - poisson^2))",
                             E * h * h * h / (12.0 * nu2), 1, 0, 3, 0, err);
            if (!rc)
                rc = derived(s, m, "membrane modulus youngs thickness / (1 - poisson^2)", E * h / nu2, 1, 0, 1, 0, err);
            if (!rc) rc = derived(s, m, "areal density density thickness", rho * h, 0, 1, 1, 0, err);
            if (!rc)
                rc = derived(s, m, "squared wave speed youngs / (density (1 - poisson^2))", E / (rho * nu2), 1, -1, 0,
                             0, err);
            break;
        case AVI_MATERIAL_NEO_HOOKEAN: {
            double mu, lambda;
            avi_lame(E, m->poisson, &mu, &lambda);
            rc = derived(s, m, "shear modulus", mu, 1, 0, 0, 0, err);
            if (!rc) rc = derived(s, m, "density", rho, 0, 1, 0, 0, err);
            if (!rc)
                rc = derived(s, m, "squared wave speed (lambda + 2 mu) / density", (lambda + 2.0 * mu) / rho, 1, -1, 0,
                             0, err);
            break;
        }
        case AVI_MATERIAL_SPRING:
            rc = derived(s, m, "stiffness", m->stiffness, 0, 0, 0, 1, err);
            if (!rc) rc = derived(s, m, "vertex mass (density)", rho, 0, 1, 0, 0, err);
            if (!rc) rc = derived(s, m, "squared frequency stiffness / density", m->stiffness / rho, 0, -1, 0, 1, err);
            break;
        }
        if (rc) return rc;
    }
    return AVI_OK;
}

int avi_scene_check_masses(const avi_scene *s, size_t body, const avi_model *m, uint32_t first, uint32_t count,
                           avi_error *err)
{
    const avi_scene_body *b = &s->bodies[body];
    for (uint32_t v = 0; v < count; v++) {
        double mass = avi_model_vertex_mass(m, first + v);
        if (isnormal(mass) && mass > 0.0) continue;
        if (b->material < 0 || b->mesh.source == AVI_MESH_NONE) {
            if (b->particles[v].pinned && mass == 0.0) continue;
            return avi_scene_check_fail(err, s, "bodies.%zu.particles.%u.mass: %g kg is not a positive normal number",
                                        body, v, mass);
        }
        const avi_scene_material *mat = &s->materials[b->material];
        const double p[4] = {0, 1, mat->model == AVI_MATERIAL_SHELL || mat->model == AVI_MATERIAL_MEMBRANE, 0};
        char key[160];
        avi_material_key(mat, p, key, sizeof key);
        char values[160];
        material_values(mat, p, values, sizeof values);
        return avi_scene_check_fail(err, s, "%s: vertex %u of body '%s' gets a mass of %g kg, not a positive normal "
                                    "number (%s); bring the material's values or the mesh into range", key, v,
                                    b->name, mass, values);
    }
    return AVI_OK;
}

int avi_potential_body(const avi_body_potentials *ranges, size_t body_count, avi_kind kind, size_t index)
{
    for (size_t b = 0; b < body_count; b++)
        if (index >= ranges[b].first[kind] && index < ranges[b].end[kind]) return (int)b;
    return -1;
}

void avi_kind_step_powers(avi_kind kind, double p[4])
{
    const avi_kind_desc *d = avi_kind_desc_of(kind); /* its step_powers */
    for (int k = 0; k < 4; k++) p[k] = d ? d->step_powers[k] : 0.0;
}

int avi_scene_explain_step(const avi_scene *s, const avi_model *m, const avi_body_potentials *ranges,
                           avi_error *err)
{
    avi_kind kind;
    size_t index;
    if (!err || !avi_model_failed_potential(m, &kind, &index)) return 0;
    int b = avi_potential_body(ranges, s->body_count, kind, index);
    if (b < 0 || s->bodies[b].material < 0) return 0;
    const avi_scene_material *mat = &s->materials[s->bodies[b].material];
    double p[4];
    avi_kind_step_powers(kind, p);
    char key[160], values[160];
    avi_material_key(mat, p, key, sizeof key);
    material_values(mat, p, values, sizeof values);
    avi_scene_check_fail(err, s, "%s: %.120s (body '%.60s'; %s); bring the material's values into range", key,
                         avi_model_error(m)->message, s->bodies[b].name, values);
    return 1;
}
