/* Emitting a scene: the resolved avi_scene (every default filled in) back
 * to YAML text that loads into an equal scene; a run records it. */
#include "scene/scene_schema.h"
#include "avi/model.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;
    size_t n, cap;
    int oom;
} sbuf;

static void sb_printf(sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_printf(sbuf *b, const char *fmt, ...)
{
    if (b->oom) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        /* NULL + 0 is undefined behaviour: the first call sizes the buffer. */
        int k = vsnprintf(b->s ? b->s + b->n : NULL, b->cap - b->n, fmt, ap);
        va_end(ap);
        if (k < 0) {
            b->oom = 1;
            return;
        }
        if ((size_t)k < b->cap - b->n) {
            b->n += (size_t)k;
            return;
        }
        size_t c = 2 * b->cap + (size_t)k + 64;
        char *p = realloc(b->s, c);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->s = p;
        b->cap = c;
    }
}

/* Shortest text that reads back to the same double; floats keep a '.' so
 * YAML 1.1 readers (PyYAML) see a number too. */
static void sb_num(sbuf *b, double d)
{
    char t[40];
    if (d == floor(d) && fabs(d) < 1e7) {
        sb_printf(b, "%.0f", d);
        return;
    }
    for (int p = 1; p <= 17; p++) {
        snprintf(t, sizeof t, "%.*g", p, d);
        if (strtod(t, NULL) == d) break;
    }
    char *e = strchr(t, 'e');
    if (e && !strchr(t, '.')) {
        char tail[40];
        snprintf(tail, sizeof tail, "%s", e);
        snprintf(e, sizeof t - (size_t)(e - t), ".0%s", tail);
    }
    sb_printf(b, "%s", t);
}

static void sb_str(sbuf *b, const char *s)
{
    sb_printf(b, "\"");
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\') sb_printf(b, "\\%c", *p);
        else if (*p == '\n') sb_printf(b, "\\n");
        else if (*p == '\t') sb_printf(b, "\\t");
        else if (*p < 0x20 || *p == 0x7f) sb_printf(b, "\\x%02x", *p);
        else sb_printf(b, "%c", *p);
    }
    sb_printf(b, "\"");
}

static void sb_vec(sbuf *b, const double v[3])
{
    sb_printf(b, "[");
    for (int k = 0; k < 3; k++) {
        if (k) sb_printf(b, ", ");
        sb_num(b, v[k]);
    }
    sb_printf(b, "]");
}

static void emit_mesh(sbuf *b, const avi_scene_mesh *m)
{
    sb_printf(b, "    mesh: {");
    switch (m->source) {
    case AVI_MESH_ICOSPHERE:
        sb_printf(b, "generator: icosphere, radius: ");
        sb_num(b, m->radius);
        sb_printf(b, ", subdivisions: %d", m->subdivisions);
        break;
    case AVI_MESH_DISK:
        sb_printf(b, "generator: disk, radius: ");
        sb_num(b, m->radius);
        sb_printf(b, ", rings: %d", m->rings);
        break;
    case AVI_MESH_RECT:
        sb_printf(b, "generator: rect, lx: ");
        sb_num(b, m->lx);
        sb_printf(b, ", ly: ");
        sb_num(b, m->ly);
        sb_printf(b, ", nx: %d, ny: %d", m->nx, m->ny);
        break;
    case AVI_MESH_TET_BOX:
        sb_printf(b, "generator: tet_box, lx: ");
        sb_num(b, m->lx);
        sb_printf(b, ", ly: ");
        sb_num(b, m->ly);
        sb_printf(b, ", lz: ");
        sb_num(b, m->lz);
        sb_printf(b, ", nx: %d, ny: %d, nz: %d", m->nx, m->ny, m->nz);
        break;
    case AVI_MESH_BALL:
        sb_printf(b, "generator: ball, radius: ");
        sb_num(b, m->radius);
        sb_printf(b, ", n: %d, grading: ", m->n);
        sb_num(b, m->grading);
        sb_printf(b, ", pole: [");
        for (int k = 0; k < 3; k++) {
            if (k) sb_printf(b, ", ");
            sb_num(b, m->pole[k]);
        }
        sb_printf(b, "], shells: %s", m->shells ? "true" : "false");
        break;
    default:
        sb_printf(b, "file: ");
        sb_str(b, m->file ? m->file : "");
        break;
    }
    if (m->jitter > 0.0) {
        sb_printf(b, ", jitter: ");
        sb_num(b, m->jitter);
        sb_printf(b, ", seed: %llu", (unsigned long long)m->seed);
    }
    if (m->reorder) sb_printf(b, ", reorder: true");
    sb_printf(b, "}\n");
}

static void emit_body(sbuf *b, const avi_scene *s, const avi_scene_body *body)
{
    sb_printf(b, "  - name: ");
    sb_str(b, body->name);
    sb_printf(b, "\n");
    if (body->mesh.source != AVI_MESH_NONE) {
        emit_mesh(b, &body->mesh);
    } else {
        sb_printf(b, "    particles:\n");
        for (size_t i = 0; i < body->particle_count; i++) {
            const avi_scene_particle *p = &body->particles[i];
            sb_printf(b, "      - {x: ");
            sb_vec(b, p->x);
            sb_printf(b, ", v: ");
            sb_vec(b, p->v);
            if (p->mass > 0.0 || !p->pinned) {
                sb_printf(b, ", mass: ");
                sb_num(b, p->mass);
            }
            sb_printf(b, ", pinned: %s", p->pinned ? "true" : "false");
            if (p->constraint.kind != AVI_SURFACE_NONE) {
                int circle = p->constraint.kind == AVI_SURFACE_CIRCLE;
                sb_printf(b, ", constraint: {%s: {center: ", circle ? "circle" : "sphere");
                sb_vec(b, p->constraint.center);
                sb_printf(b, ", radius: ");
                sb_num(b, p->constraint.radius);
                if (circle) {
                    sb_printf(b, ", normal: ");
                    sb_vec(b, p->constraint.normal);
                }
                sb_printf(b, "}}");
            }
            sb_printf(b, "}\n");
        }
        if (body->spring_count) sb_printf(b, "    springs:\n");
        for (size_t i = 0; i < body->spring_count; i++) {
            const avi_scene_spring *p = &body->springs[i];
            sb_printf(b, "      - {a: %u, b: %u, stiffness: ", p->a, p->b);
            sb_num(b, p->stiffness);
            if (p->rest >= 0.0) {
                sb_printf(b, ", rest: ");
                sb_num(b, p->rest);
            }
            sb_printf(b, "}\n");
        }
        if (body->link_count) sb_printf(b, "    links:\n");
        for (size_t i = 0; i < body->link_count; i++) {
            const avi_scene_link *p = &body->links[i];
            sb_printf(b, "      - {a: %u, b: %u", p->a, p->b);
            if (p->length > 0.0) {
                sb_printf(b, ", length: ");
                sb_num(b, p->length);
            }
            sb_printf(b, "}\n");
        }
    }
    if (body->material >= 0) {
        sb_printf(b, "    material: ");
        sb_str(b, s->materials[body->material].name);
        sb_printf(b, "\n");
    }
    sb_printf(b, "    translate: ");
    sb_vec(b, body->translate);
    sb_printf(b, "\n    velocity: ");
    sb_vec(b, body->velocity);
    if (body->angular_velocity[0] != 0.0 || body->angular_velocity[1] != 0.0 || body->angular_velocity[2] != 0.0) {
        sb_printf(b, "\n    angular_velocity: ");
        sb_vec(b, body->angular_velocity);
    }
    sb_printf(b, "\n    initial: {scale: ");
    sb_num(b, body->scale);
    sb_printf(b, "}\n");
    if (body->pin == AVI_PIN_BOX) {
        sb_printf(b, "    pinned: {box: [");
        sb_vec(b, body->pin_box[0]);
        sb_printf(b, ", ");
        sb_vec(b, body->pin_box[1]);
        sb_printf(b, "]}\n");
    } else if (body->pin == AVI_PIN_BOUNDARY) {
        sb_printf(b, "    pinned: {boundary: %s}\n", body->pin_clamped ? "clamped" : "simply-supported");
    } else if (body->pin == AVI_PIN_INDICES) {
        sb_printf(b, "    pinned: {indices: [");
        for (size_t i = 0; i < body->pin_count; i++) sb_printf(b, "%s%u", i ? ", " : "", body->pin_indices[i]);
        sb_printf(b, "]}\n");
    }
    if (body->time_step > 0.0) {
        sb_printf(b, "    time_step: {fixed: ");
        sb_num(b, body->time_step);
        sb_printf(b, "}\n");
    }
}

char *avi_scene_emit(const avi_scene *s)
{
    sbuf b = {0};
    sb_printf(&b, "name: ");
    sb_str(&b, s->name ? s->name : "scene");
    sb_printf(&b, "\ndescription: ");
    sb_str(&b, s->description ? s->description : "");
    sb_printf(&b, "\ntime: {end: ");
    sb_num(&b, s->end_time);
    sb_printf(&b, "}\nintegrator: {type: %s", avi_integrator_name(s->integrator.type));
    if (s->integrator.type == AVI_INTEGRATOR_SYNC_IMPLICIT) {
        sb_printf(&b, ", alpha: ");
        sb_num(&b, s->integrator.alpha);
    }
    if (s->integrator.type != AVI_INTEGRATOR_AVI) {
        sb_printf(&b, ", tolerance: ");
        sb_num(&b, s->integrator.tolerance);
    }
    /* Written only when chosen, so that the resolved text of every scene
     * from before the key is unchanged. */
    if (s->integrator.solver != AVI_SOLVER_CHOLMOD)
        sb_printf(&b, ", solver: %s", avi_scene_solver_names[s->integrator.solver]);
    const avi_time_step *ts = &s->time_step;
    sb_printf(&b, "}\ntime_step: {rule: %s, ", avi_scene_rule_names[ts->rule]);
    if (ts->rule == AVI_DT_STABILITY) sb_printf(&b, "safety: "), sb_num(&b, ts->safety);
    else if (ts->rule == AVI_DT_CFL) sb_printf(&b, "delta: "), sb_num(&b, ts->delta);
    else sb_printf(&b, "fixed: "), sb_num(&b, ts->fixed);
    if (ts->rule != AVI_DT_FIXED) sb_printf(&b, ", neighbor_ratio: "), sb_num(&b, ts->neighbor_ratio);
    if (ts->rule != AVI_DT_FIXED)
        sb_printf(&b, ", levels_per_octave: %d", ts->levels_per_octave);
    int any = 0;
    for (int k = 0; k < AVI_KIND_COUNT; k++)
        if (avi_time_step_kind_fixed(ts, (avi_kind)k) > 0.0) {
            sb_printf(&b, "%s%s: ", any ? ", " : ", per_kind: {", avi_kind_name((avi_kind)k));
            sb_num(&b, avi_time_step_kind_fixed(ts, (avi_kind)k));
            any = 1;
        }
    sb_printf(&b, "%s, max_events: ", any ? "}" : "");
    sb_num(&b, s->max_events);
    sb_printf(&b, "}\n");
    if (s->material_count) sb_printf(&b, "materials:\n");
    for (size_t i = 0; i < s->material_count; i++) {
        const avi_scene_material *m = &s->materials[i];
        sb_printf(&b, "  ");
        sb_str(&b, m->name);
        sb_printf(&b, ": {model: %s, ", avi_scene_material_names[m->model]);
        if (m->model == AVI_MATERIAL_SPRING) {
            sb_printf(&b, "stiffness: ");
            sb_num(&b, m->stiffness);
            sb_printf(&b, ", density: ");
            sb_num(&b, m->density);
        } else {
            sb_printf(&b, "youngs: ");
            sb_num(&b, m->youngs);
            sb_printf(&b, ", poisson: ");
            sb_num(&b, m->poisson);
            sb_printf(&b, ", density: ");
            sb_num(&b, m->density);
            if (m->model != AVI_MATERIAL_NEO_HOOKEAN) {
                sb_printf(&b, ", thickness: ");
                sb_num(&b, m->thickness);
            }
            if (m->model == AVI_MATERIAL_SHELL) sb_printf(&b, ", bending: %s", avi_scene_bending_names[m->bending]);
        }
        sb_printf(&b, "}\n");
    }
    sb_printf(&b, "bodies:\n");
    for (size_t i = 0; i < s->body_count; i++) emit_body(&b, s, &s->bodies[i]);
    const avi_scene_contact *k = &s->contact;
    sb_printf(&b, "contact: {enabled: %s", k->enabled ? "true" : "false");
    if (k->enabled || k->thickness > 0.0) {
        sb_printf(&b, ", thickness: ");
        sb_num(&b, k->thickness);
        sb_printf(&b, ", inner_thickness: ");
        sb_num(&b, k->inner_thickness);
        sb_printf(&b, ", stiffness: ");
        if (k->stiffness > 0.0) sb_num(&b, k->stiffness);
        else sb_printf(&b, "auto");
        if (k->layers > 0) sb_printf(&b, ", layers: %d", k->layers);
        else sb_printf(&b, ", layers: auto");
        if (k->friction > 0.0) {
            sb_printf(&b, ", friction: ");
            sb_num(&b, k->friction);
        }
    }
    sb_printf(&b, "}\ngravity: ");
    sb_vec(&b, s->gravity);
    sb_printf(&b, "\ndamping: ");
    sb_num(&b, s->damping);
    sb_printf(&b, "\noutput: {file: ");
    sb_str(&b, s->output.file ? s->output.file : "");
    sb_printf(&b, ", energy_every: ");
    sb_num(&b, s->output.energy_every);
    sb_printf(&b, ", frame_every: ");
    sb_num(&b, s->output.frame_every);
    sb_printf(&b, ", checkpoint_every: ");
    sb_num(&b, s->output.checkpoint_every);
    /* auto is not written: the resolved text of every scene from before
     * the key is unchanged (/parameters/synchronized_every has the N used). */
    if (s->output.synchronized_every > 0) sb_printf(&b, ", synchronized_every: %lld", s->output.synchronized_every);
    sb_printf(&b, ", max_energy_growth: ");
    sb_num(&b, s->output.max_energy_growth);
    sb_printf(&b, ", max_bytes: ");
    sb_num(&b, s->output.max_bytes);
    sb_printf(&b, ", max_checkpoints: ");
    sb_num(&b, s->output.max_checkpoints);
    sb_printf(&b, "}\n");
    /* As the user set it (auto: not written, so that the resolved text of
     * every scene from before the key is unchanged); the count a run used
     * is /parameters/threads. */
    if (s->threads > 0) sb_printf(&b, "parallel: {threads: %d}\n", s->threads);
    else if (s->threads < 0) sb_printf(&b, "parallel: {threads: auto}\n");
    if (b.oom) {
        free(b.s);
        return NULL;
    }
    return b.s;
}
