/* avi: building a model (vertices, bodies, potentials) and its time steps.
 *
 * A model is built once, then finalized: finalizing lumps nothing further,
 * checks every vertex and computes every potential's time step. Positions
 * given to avi_model_add_vertex are the rest configuration from which
 * elements take their rest data; avi_model_set_state sets the initial
 * (possibly pre-stretched) state afterwards. */
#ifndef AVI_MODEL_H
#define AVI_MODEL_H

#include "avi/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct avi_model avi_model;

/* Thin-shell material: membrane (St. Venant-Kirchhoff, plane stress) and
 * bending (discrete-shell hinges). SI units. */
typedef struct {
    double youngs;    /* Pa */
    double poisson;   /* in [0, 0.5) */
    double density;   /* kg / m^3 */
    double thickness; /* m */
} avi_shell_material;

/* Compressible neo-Hookean solid for tetrahedra. */
typedef struct {
    double youngs;  /* Pa (used when mu <= 0 and lambda < 0 are not given) */
    double poisson;
    double density; /* kg / m^3 */
} avi_solid_material;

/* Lame parameters of an isotropic material (3-D). */
void avi_lame(double youngs, double poisson, double *mu, double *lambda);

/* How potentials' time steps are chosen. */
typedef enum {
    AVI_DT_STABILITY = 0, /* safety * 2 / omega, omega^2 = max eig(M^-1 Hess V) at rest */
    AVI_DT_CFL = 1,       /* delta * inradius / c, c = sqrt((lambda + 2 mu) / rho) */
    AVI_DT_FIXED = 2      /* one given dt for every potential */
} avi_dt_rule;

#define AVI_MAX_LEVELS_PER_OCTAVE 64

/* A fixed step for one kind (avi_time_step.kind_fixed): entries with
 * dt == 0 are unused. The list's length does not depend on the number of
 * kinds, so adding a kind changes no layout. */
#define AVI_KIND_FIXED_MAX AVI_KIND_MAX
typedef struct {
    avi_kind kind;
    double dt;
} avi_kind_step;

typedef struct {
    avi_dt_rule rule;
    double safety;                     /* stability rule; default 0.25 */
    double delta;                      /* cfl rule; default 0.1 */
    double fixed;                      /* fixed rule: the step */
    double neighbor_ratio;             /* >= 1: cap each step at this multiple of the smallest
                                          step on its vertices; 0: no cap. Default 1 */
    avi_kind_step kind_fixed[AVI_KIND_FIXED_MAX]; /* per-kind fixed steps, whatever the rule:
                                                     avi_time_step_set_kind_fixed */
    int levels_per_octave;             /* > 0: round each rule step down to dt_max 2^(-k / L),
                                          so clocks on one level tick together; 0: exact.
                                          Default 16 */
} avi_time_step;

/* The default time-step settings: stability rule, safety 0.25, delta 0.1,
 * neighbour cap 1, 16 step levels per octave. */
avi_time_step avi_default_time_step(void);

/* Sets the fixed step of a kind (dt > 0), or clears it (dt = 0). Returns 0,
 * or -1 when the kind is not a kind, dt is negative or not finite, or
 * AVI_KIND_FIXED_MAX other kinds already have one. */
int avi_time_step_set_kind_fixed(avi_time_step *ts, avi_kind kind, double dt);
/* The fixed step of a kind, 0 when it has none. */
double avi_time_step_kind_fixed(const avi_time_step *ts, avi_kind kind);

/* A new, empty model; NULL when out of memory. */
avi_model *avi_model_create(void);
void avi_model_destroy(avi_model *model);

/* The last error of a failed call on this model. */
const avi_error *avi_model_error(const avi_model *model);

/* Adds a body (a named group of vertices); returns its id or -1. */
int avi_model_add_body(avi_model *model, const char *name);

/* Optional per-body fixed time step (> 0) overriding the rule for every
 * potential whose first vertex belongs to the body. */
int avi_model_set_body_time_step(avi_model *model, int body, double dt);

/* Adds a vertex of the body at rest position `rest`, with zero velocity and
 * zero mass; returns its index, or -1 on error (non-finite position). */
int64_t avi_model_add_vertex(avi_model *model, int body, const double rest[3]);

/* Sets a vertex's initial position and velocity (defaults: rest, zero). */
int avi_model_set_state(avi_model *model, uint32_t vertex, const double x[3], const double v[3]);

/* Adds mass to a vertex (mass must be finite and > 0). */
int avi_model_add_mass(avi_model *model, uint32_t vertex, double mass);

/* Pins a vertex: inverse mass 0, velocity 0; it never moves. */
int avi_model_pin(avi_model *model, uint32_t vertex);

/* A spring k/2 (|xb - xa| - rest)^2; rest < 0 means the rest distance. */
int avi_model_add_spring(avi_model *model, uint32_t a, uint32_t b, double stiffness, double rest);

/* A constant-strain membrane triangle; lumps rho h A / 3 onto each vertex. */
int avi_model_add_membrane(avi_model *model, uint32_t a, uint32_t b, uint32_t c,
                           const avi_shell_material *material);

/* A bending hinge on edge (a, b) with wing vertices c and d: triangles (a, b, c)
 * and (b, a, d). The rest angle is taken from the rest positions. */
int avi_model_add_hinge(avi_model *model, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                        const avi_shell_material *material);

/* Adds a triangle surface: one membrane per triangle, and, when `bending` is
 * set, one hinge per interior edge. Triangles index vertices directly.
 * Rejects non-manifold edges (shared by more than two triangles). */
int avi_model_add_triangle_mesh(avi_model *model, const uint32_t (*triangles)[3], size_t count,
                                const avi_shell_material *material, int bending);

/* Bending models of a shell surface. */
typedef enum {
    AVI_BENDING_NONE = 0,   /* membrane only */
    AVI_BENDING_HINGE = 1,  /* discrete-shell hinges (Grinspun et al. 2003): mesh-dependent,
                               does not converge to Kirchhoff-Love plates */
    AVI_BENDING_MIDEDGE = 2 /* mid-edge-normal triangles with one rotation DOF per edge
                               (Grinspun et al. 2006; Morley element when linearized) */
} avi_bending;

/* As avi_model_add_triangle_mesh with a chosen bending model. With
 * AVI_BENDING_MIDEDGE each edge gets a rotation DOF, integrated with the
 * fictitious inertia 1/4 rho h A_e l_e^2 (counted in the kinetic energy; not
 * a vertex: not in vertex counts, output or momenta); when clamp_pinned is
 * set, a boundary edge whose two vertices are already pinned also holds its
 * slope (clamped), otherwise it rotates freely (simply supported or free). */
int avi_model_add_shell_mesh(avi_model *model, const uint32_t (*triangles)[3], size_t count,
                             const avi_shell_material *material, avi_bending bending, int clamp_pinned);

/* A neo-Hookean tetrahedron; lumps rho V / 4 onto each vertex. The rest
 * volume must be positive (vertices ordered so that det[b-a, c-a, d-a] > 0). */
int avi_model_add_tet(avi_model *model, uint32_t a, uint32_t b, uint32_t c, uint32_t d,
                      const avi_solid_material *material);

/* Penalty contact with nested layers (Harmon et al. 2009). Layer l = 1, 2, ...
 * has thickness eta_l = eta_inf + (eta_1 - eta_inf) / l, stiffness
 * k_l = k_1 l^3 and time step dt_l = dt_1 / l^1.5, so the summed energy
 * diverges before surfaces come within eta_inf. Layer 1's stiffness rises
 * smoothly from 0 to k_1 over an onset about 2.5 of its steps wide at the
 * surfaces' approach speed (at most eta_1 - eta_2); deeper layers start at
 * k_l at once (docs/research/contact_energy.md). */
typedef struct {
    double thickness;       /* eta_1 > 0 */
    double inner_thickness; /* eta_inf, 0 < eta_inf < eta_1 */
    double stiffness;       /* k_1 > 0; 0: automatic (see avi_model_finalize) */
    int max_layers;         /* > 0; 0: automatic (4096) */
    /* Coulomb friction coefficient mu >= 0 (static = kinetic), 0: none. At
     * every penalty event a tangential impulse of at most mu times that
     * event's normal impulse slows the stencil's tangential relative
     * velocity, never reversing it (src/contact/contact_friction.c). */
    double friction;
} avi_contact_settings;

/* The default contact settings for a given eta_1 (which has none): inner
 * thickness eta_1 / 5, automatic stiffness and layers, no friction (as a
 * scene's contact section without those keys). */
avi_contact_settings avi_default_contact_settings(double thickness);

/* Enables contact between the model's contact surfaces and points. */
int avi_model_set_contact(avi_model *model, const avi_contact_settings *settings);

/* Adds contact-eligible triangles (model vertex indices). Their vertices,
 * edges and faces take part in vertex-face and edge-edge contact with every
 * primitive that does not share a vertex with them. */
int avi_model_add_contact_triangles(avi_model *model, const uint32_t (*triangles)[3], size_t count);

/* Adds a contact-eligible vertex that is on no contact triangle (a particle). */
int avi_model_add_contact_point(avi_model *model, uint32_t vertex);

/* Uniform gravity: one per-vertex potential -m g.x for each unpinned vertex,
 * each with its own clock. Call before finalizing. */
void avi_model_set_gravity(avi_model *model, const double g[3]);

/* Checks every vertex (finite state, positive mass unless pinned) and computes
 * every potential's time step. With contact and an automatic stiffness,
 * k_1 is the median over contact vertices of m (2 safety / dt)^2 / 16, dt
 * the smallest elastic step at the vertex: even with 16 layer-1 stencils on
 * one vertex, contact is about as stiff as the elements it touches. Must be
 * called once before running. */
int avi_model_finalize(avi_model *model, const avi_time_step *rule);

/* After avi_model_finalize failed on one potential's time step: 1 with its
 * kind and index; 0 when the failure concerned no single potential. */
int avi_model_failed_potential(const avi_model *model, avi_kind *kind, size_t *index);

/* Queries. */
size_t avi_model_vertex_count(const avi_model *model);
size_t avi_model_potential_count(const avi_model *model, avi_kind kind);
int avi_model_body_count(const avi_model *model);
const char *avi_model_body_name(const avi_model *model, int body);
int avi_model_vertex_body(const avi_model *model, uint32_t vertex);
double avi_model_vertex_mass(const avi_model *model, uint32_t vertex);
/* Smallest and largest time step of a kind (0, 0 when it has none). */
void avi_model_time_step_range(const avi_model *model, avi_kind kind, double *min, double *max);
/* The time step of one potential. */
double avi_model_time_step(const avi_model *model, avi_kind kind, size_t index);

#ifdef __cplusplus
}
#endif

#endif
