#include "run/run_output.h"

#include "base/error.h"

#include <stdlib.h>
#include <string.h>

int avi_run_output_init(avi_run_output *o, const avi_scene *scene, const avi_scene_bodies *info,
                          const avi_model *model, const char *path, avi_error *err)
{
    memset(o, 0, sizeof *o);
    size_t nv = avi_model_vertex_count(model);
    o->mass = malloc((nv ? nv : 1) * sizeof *o->mass);
    o->bodies = calloc(info->count ? info->count : 1, sizeof *o->bodies);
    o->resolved_text = avi_scene_emit(scene);
    if (!o->mass || !o->bodies || !o->resolved_text) {
        avi_run_output_free(o);
        return avi_error_set(err, AVI_ERR_RUN, "out of memory building the output layout");
    }
    for (size_t i = 0; i < nv; i++) o->mass[i] = avi_model_vertex_mass(model, (uint32_t)i);
    for (size_t b = 0; b < info->count; b++) {
        const avi_scene_body_info *bi = &info->bodies[b];
        avi_h5_body *hb = &o->bodies[b];
        hb->name = bi->name;
        hb->first_vertex = bi->first_vertex;
        hb->vertex_count = bi->vertex_count;
        hb->mass = o->mass + bi->first_vertex;
        hb->triangles = (const uint32_t (*)[3])bi->triangles;
        hb->triangle_count = bi->triangle_count;
        hb->tets = (const uint32_t (*)[4])bi->tets;
        hb->tet_count = bi->tet_count;
    }
    avi_h5_layout *L = &o->layout;
    L->path = path;
    L->bodies = o->bodies;
    L->body_count = (int)info->count;
    L->scene_name = scene->name;
    L->scene_text = scene->text;
    L->resolved_text = o->resolved_text;
    L->integrator = avi_integrator_name(scene->integrator.type);
    L->end_time = scene->end_time;
    L->energy_every = scene->output.energy_every;
    L->frame_every = scene->output.frame_every;
    L->vertex_count = nv;
    for (int k = 0; k < AVI_KIND_COUNT; k++) {
        L->potential_count[k] = avi_model_potential_count(model, (avi_kind)k);
        avi_model_time_step_range(model, (avi_kind)k, &L->dt_min[k], &L->dt_max[k]);
    }
    return 0;
}

void avi_run_output_free(avi_run_output *o)
{
    free(o->resolved_text);
    free(o->bodies);
    free(o->mass);
    memset(o, 0, sizeof *o);
}

void avi_run_output_drop_written(avi_run_output *o, avi_scene_bodies *info)
{
    for (size_t b = 0; b < info->count; b++) {
        free(info->bodies[b].tets);
        info->bodies[b].tets = NULL;
        if (o->bodies) o->bodies[b].tets = NULL;
    }
    /* The masses too: written with the connectivity (8 B a vertex). */
    for (size_t b = 0; b < info->count && o->bodies; b++) o->bodies[b].mass = NULL;
    free(o->mass);
    o->mass = NULL;
}
