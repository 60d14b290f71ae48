/* The model's data layout, shared by the engine, observers and integrators.
 *
 * Vertices: the state an event touches (position, time of last drift,
 * velocity, inverse mass) is one 64-byte record, so drifting and kicking a
 * vertex touches a single cache line; everything else (rest position, mass,
 * body) lives in parallel arrays that the event loop never reads.
 * Potentials: one contiguous array of compact records per kind. */
#ifndef AVI_MODEL_INTERNAL_H
#define AVI_MODEL_INTERNAL_H

#include "avi/model.h"
#include "core/kinds.h"

struct avi_contact_ops; /* core/engine_ops.h */

/* How many contact stencils the step and stiffness rules assume may press
 * on one vertex at once (the automatic stiffness in model_finalize.c, the
 * layer steps in src/contact). */
#define AVI_CONTACT_VALENCE 16.0

typedef struct {
    double x[3];     /* position at time tau */
    double tau;      /* time of last drift */
    double v[3];     /* velocity, constant between impulses */
    double inv_mass; /* 0 = pinned */
} avi_vertex;

typedef struct {
    char *name;
    size_t first_vertex;   /* body-local indices in messages */
    double fixed_dt;       /* > 0 overrides the rule */
    size_t triangle_count; /* counts for error messages */
    size_t tet_count;
} avi_body;

/* Material data kept for the time-step rules (cfl needs the wave speed). */
typedef struct {
    double c;       /* dilatational wave speed sqrt((lambda + 2 mu) / rho) */
} avi_wave;

struct avi_model {
    size_t nv, cap_v;
    avi_vertex *vert; /* 64-byte aligned */
    double (*rest)[3];
    double *mass;
    int32_t *body_of;

    int nbody, cap_body;
    avi_body *bodies;

    /* Each kind's records (its row, core/kinds.h): count, capacity, array.
     * Stencil slots that name auxiliary records hold their index into aux
     * until finalizing adds nv (place_aux, model_finalize.c). */
#define AVI_MODEL_RECORDS(K, type, array, count, ...) \
    size_t count, array##_cap;                         \
    type *array;
    AVI_POTENTIAL_KINDS(AVI_MODEL_RECORDS)
#undef AVI_MODEL_RECORDS
    /* Wave speed per potential of the kinds with a cfl rule (descriptor's
     * inradius), until finalizing; NULL for the others. */
    double *wave_c[AVI_MODEL_KINDS];

    /* Auxiliary records (mid-edge bending): edge rotation DOFs (x[0] = phi,
     * v[0] its rate, inv_mass = 1 / I_e) and clamped edges' frozen ghost
     * points (pinned). Finalizing appends them to vert after the nv mesh
     * vertices; everything that means mesh vertices (output, momenta,
     * contact, pins, gravity) reads the first nv records only. */
    size_t naux, cap_aux;
    avi_vertex *aux;
    int aux_placed;

    double g[3];
    int has_gravity;

    /* Contact: settings, eligible triangles (model indices) and points. */
    int has_contact;
    const struct avi_contact_ops *contact_ops; /* set with contact (src/contact) */
    avi_contact_settings contact;
    double contact_safety;   /* of the time-step rule, for layer steps */
    double contact_fixed_dt; /* > 0: every contact layer's step (per_kind.contact) */
    double neighbor_ratio;   /* of the time-step rule */
    size_t ncontact_tri, cap_contact_tri;
    uint32_t (*contact_tri)[3];
    size_t ncontact_point, cap_contact_point;
    uint32_t *contact_point;
    double *vertex_dt;       /* smallest elastic step per vertex (inf: none), after finalize */
    int finalized;
    avi_error err;
    int failed_kind;        /* -1, or the kind of the potential whose step failed */
    size_t failed_index;
};

/* The kinds' rows (core/kinds.h) as functions of the kind. Where the kind
 * is a constant (the event loop's template, engine.c), each switch folds to
 * that kind's own code; always_inline so that it does. */
#define AVI_KIND_INLINE static inline __attribute__((always_inline))

/* The record of potential i of a kind (NULL for contact). */
AVI_KIND_INLINE const void *avi_kind_record(const avi_model *m, unsigned kind, size_t i)
{
#define AVI_KIND_RECORD(K, type, array, ...) case K: return &m->array[i];
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_RECORD) default: return NULL; }
#undef AVI_KIND_RECORD
}

/* Its stencil (slots entries) and step. */
AVI_KIND_INLINE const uint32_t *avi_kind_stencil(unsigned kind, const void *rec)
{
#define AVI_KIND_STENCIL(K, type, ...) case K: return ((const type *)rec)->v;
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_STENCIL) default: return NULL; }
#undef AVI_KIND_STENCIL
}
AVI_KIND_INLINE double avi_kind_dt(unsigned kind, const void *rec)
{
#define AVI_KIND_DT(K, type, ...) case K: return ((const type *)rec)->dt;
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_DT) default: return 0.0; }
#undef AVI_KIND_DT
}

/* The size of its record, its slots, vertices (kinds.h) and flags. */
AVI_KIND_INLINE size_t avi_kind_record_size(unsigned kind)
{
#define AVI_KIND_SIZE(K, type, ...) case K: return sizeof(type);
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_SIZE) default: return 0; }
#undef AVI_KIND_SIZE
}
AVI_KIND_INLINE int avi_kind_slots(unsigned kind)
{
#define AVI_KIND_SLOTS(K, type, array, count, slots, ...) case K: return slots;
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_SLOTS) default: return 0; }
#undef AVI_KIND_SLOTS
}
AVI_KIND_INLINE int avi_kind_vertices(unsigned kind)
{
#define AVI_KIND_VERTICES(K, type, array, count, slots, vertices, ...) case K: return vertices;
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_VERTICES) default: return 0; }
#undef AVI_KIND_VERTICES
}
AVI_KIND_INLINE unsigned avi_kind_flags(unsigned kind)
{
#define AVI_KIND_FLAGS(K, type, array, count, slots, vertices, gradient, energy, flags) case K: return flags;
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_FLAGS) default: return 0; }
#undef AVI_KIND_FLAGS
}

/* Its gradient and energy at stencil positions x. */
AVI_KIND_INLINE void avi_kind_gradient(unsigned kind, const void *rec, const double x[][3], double g[][3])
{
#define AVI_KIND_GRADIENT(K, type, array, count, slots, vertices, gradient, ...) \
    case K: gradient((const type *)rec, x, g); break;
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_GRADIENT) default: break; }
#undef AVI_KIND_GRADIENT
}
AVI_KIND_INLINE double avi_kind_energy(unsigned kind, const void *rec, const double x[][3])
{
#define AVI_KIND_ENERGY(K, type, array, count, slots, vertices, gradient, energy, ...) \
    case K: return energy((const type *)rec, x);
    switch (kind) { AVI_POTENTIAL_KINDS(AVI_KIND_ENERGY) default: return 0.0; }
#undef AVI_KIND_ENERGY
}

/* Stencil of potential i of a kind (elastic or gravity): slot count and
 * indices; 0 and NULL for other kinds. */
static inline int avi_model_stencil(const avi_model *m, avi_kind kind, size_t i, const uint32_t **v)
{
    const void *rec = avi_kind_record(m, kind, i);
    *v = rec ? avi_kind_stencil(kind, rec) : NULL;
    return avi_kind_slots(kind);
}

/* 1 when every vertex of potential i's stencil is pinned (after
 * finalizing: inverse mass 0, velocity 0). Its events would drift nothing
 * and kick nothing, so the engine does not schedule it (no queue entry, no
 * clock group member); its energy, constant, is still observed. */
static inline int avi_model_potential_pinned(const avi_model *m, avi_kind kind, size_t i)
{
    const uint32_t *v;
    int n = avi_model_stencil(m, kind, i, &v);
    for (int a = 0; a < n; a++)
        if (m->vert[v[a]].inv_mass != 0.0) return 0;
    return n > 0;
}

/* Mesh vertices and auxiliary records: the length of vert once finalized. */
static inline size_t avi_model_record_count(const avi_model *m) { return m->nv + m->naux; }

/* Sets the model's error (printf-style) and returns `status`. */
int avi_model_fail(avi_model *m, avi_status status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));



/* The elastic potentials' events in `interval`, the sum of interval / dt
 * over them (their own steps, not refined ones; h > 0: every one on steps
 * of h); *count gets how many there are. */
double avi_model_elastic_events(const avi_model *m, double interval, double h, double *count);

/* Sum of the elastic potentials' energies at positions x ([nv][3]). */
double avi_model_elastic_energy(const avi_model *m, const double (*x)[3]);
/* Adds every potential's gradient dV/dx, evaluated at the vertex records'
 * positions, into g ([nv][3]); elastic potentials and gravity. */
void avi_model_accumulate_gradient(const avi_model *m, double (*g)[3]);

#endif
