/* avi: scenes (YAML files or built-ins), validated into plain structs, and
 * built into a model.
 *
 * The scene keys below are a user contract (README.md, "Scene files"). Everything
 * is checked when loading: unknown keys, duplicate keys, wrong types,
 * missing required keys and out-of-range values are errors with status
 * AVI_ERR_INPUT and a message "file:line: dotted.key: problem" (bodies
 * appear by index: "bodies.1.material"). Values that came from a --set
 * override have no line: "file: dotted.key (--set): problem".
 *
 * Keys and defaults (SI units; "required" keys have no default):
 *
 *   name          scene name, [A-Za-z0-9._-]+; default: the file name
 *                 without extension (or the built-in's name)
 *   description   one-line text (listed by `avi scenes`); default ""
 *   time.end      end time > 0, required
 *   integrator    type: avi (default) | sync-explicit | sync-implicit |
 *                 sync-rootfind | explicit-euler | implicit-euler | dcr |
 *                 sync-explicit4
 *                 sync-explicit4: fourth order, Yoshida's triple jump of
 *                 sync-explicit's (velocity-Verlet) update
 *                 (src/sync/explicit4.c), three gradient evaluations
 *                 (events) per potential and step, at the step sync-explicit
 *                 takes (the smallest potential step of the rule), stable
 *                 for h omega < 1.57 (sync-explicit: 2), i.e. safety < 0.78;
 *                 refuses contact, damping, links and particle constraints
 *                 dcr: central differences (sync-explicit's update) with
 *                 decomposition contact response, Cirak and West 2005
 *                 (src/sync/dcr.c): after each step, stencils closer
 *                 than contact.thickness are projected apart and their
 *                 closing velocities reversed (with contact.friction,
 *                 then slowed tangentially by Coulomb's law). sync-explicit and
 *                 sync-implicit resolve contact by the same stage; the
 *                 other synchronous ones refuse a scene with contact
 *                 alpha: sync-implicit only, in [0, 1], default 0.5
 *                 tolerance: synchronous integrators only, > 0, default
 *                 1e-10: Newton's relative residual and constraints'
 *                 |g| / length
 *                 solver: the Newton integrators only (sync-implicit,
 *                 sync-rootfind, implicit-euler): cholesky (default,
 *                 CHOLMOD; LDL^T where the Jacobian is indefinite), cg
 *                 (Jacobi-preconditioned conjugate gradient, inexact
 *                 Newton) or lu (sync-rootfind without links or particle
 *                 constraints: UMFPACK's sparse LU of a Jacobian not
 *                 assumed symmetric, line search on |r|^2: root finding
 *                 as a general nonlinear solver does it, bench/README.md
 *                 "Minimization vs root finding")
 *   time_step     {rule: stability, safety: s}  (the default rule)
 *                 {rule: cfl, delta: d}
 *                 s, d in (0, 1]; defaults from avi_default_time_step()
 *                 neighbor_ratio: r, 0 (no cap) or >= 1, default 1: no
 *                 potential's step exceeds r times the smallest step
 *                 on its vertices (stability and cfl rules)
 *                 levels_per_octave: L, integer 0..64, default 16: with
 *                 L > 0 each rule step is rounded down to dt_max 2^(-k/L)
 *                 (dt_max the largest), so potentials on one level tick
 *                 together and events run in memory order (graded meshes:
 *                 bench/README.md); 0 keeps the rule's exact steps;
 *                 rounding comes after the neighbour cap, which then holds
 *                 within a factor 2^(1/L)
 *                 {fixed: dt} or {rule: fixed, fixed: dt}
 *                 per_kind: {spring|membrane|hinge|tet|midedge|gravity|contact: dt}
 *                 optional fixed steps per potential kind, whatever the rule
 *                 max_events: > 0, default 1e13 (days of work at 1e7 to 1e8
 *                 events per second; built-in scenes and benchmarks need at
 *                 most 4e8, the rod): building refuses a scene
 *                 whose estimated events, time.end / dt summed over the
 *                 elastic and gravity potentials (synchronous integrators:
 *                 time.end / smallest dt times the potential count, times 3
 *                 for sync-explicit4) plus,
 *                 with contact, the manager's runs (time.end / window, the
 *                 window 0.2 contact.thickness / the fastest initial speed,
 *                 at most 100 of the smallest elastic steps on a surface
 *                 vertex) times the surface vertices each run drifts,
 *                 exceed it, naming the key that set the smallest step
 *                 (contact.thickness when contact is the larger share;
 *                 layer events are not estimated: which stencils touch is
 *                 not known before the run). Every integrator refuses a
 *                 time.end shorter than its smallest step: no step would
 *                 complete
 *   materials     name -> {model, ...}; which keys each model takes:
 *                   shell, membrane: youngs > 0, poisson in [0, 0.5),
 *                                    density > 0, thickness > 0 (all required)
 *                   shell also:      bending: midedge (default) | hinge.
 *                                    midedge: mid-edge-normal triangles with
 *                                    one rotation DOF per edge (Grinspun et
 *                                    al. 2006), Koiter's bending energy, which
 *                                    converges to Kirchhoff-Love plates on any
 *                                    triangulation (docs/research/bending);
 *                                    every integrator and damping (its
 *                                    Hessian, edge DOFs included:
 *                                    potentials/midedge_hessian.c).
 *                                    hinge: discrete-shell hinges (Grinspun et
 *                                    al. 2003), kept for comparison: 1.6-2.3x
 *                                    too stiff on plates, mesh-dependent
 *                   neo-hookean:     youngs, poisson, density (required)
 *                   spring:          stiffness > 0 (per edge) and density
 *                                    > 0, which for springs is the mass of
 *                                    each vertex in kg (both required)
 *                 Building refuses values whose derived quantities are not
 *                 positive normal numbers (shells: membrane and bending
 *                 moduli, areal density, squared wave speed; neo-hookean:
 *                 shear modulus, density, squared wave speed; springs:
 *                 stiffness, mass, stiffness / mass; then every vertex mass
 *                 and stable step), naming materials.<name>.<key>: of the
 *                 keys involved, the one furthest in decades from a typical
 *                 value (youngs 1e9, density 1e3 (springs: 1 kg),
 *                 thickness 1e-3, stiffness 1e3)
 *   bodies        non-empty sequence; each body has
 *                   name: [A-Za-z_][A-Za-z0-9_-]*, unique; default "body<i>"
 *                   mesh: {generator: icosphere, radius, subdivisions (0..8)}
 *                         {generator: disk, radius, rings (1..1024)}
 *                         {generator: rect, lx, ly, nx, ny}
 *                         {generator: tet_box, lx, ly, lz, nx, ny, nz}
 *                         {generator: ball, radius, n (1..1024; (n+1)^3
 *                         vertices, 6 n^3 tetrahedra), grading in [0, 1)
 *                         (default 0: uniform; > 0: cells shrink toward the
 *                         pole by (1 - grading) / (1 + grading) and grow
 *                         at the opposite one by the inverse), pole: [3]
 *                         non-zero (default [0, 0, -1]: the south pole,
 *                         where a ball dropped along -z touches), shells:
 *                         bool (default true: concentric shells, cells of
 *                         bounded shape at any n, avi_mesh_tet_ball_shells;
 *                         false: the mapped cube, avi_mesh_tet_ball_graded,
 *                         whose corner cells turn over from n = 32)}
 *                         (generated meshes have at most 2^24 vertices)
 *                         or {file: path} (.msh or .obj; a relative path is
 *                         relative to the scene file's directory; for
 *                         built-ins, to the working directory; for text, to
 *                         the `dir` given to avi_scene_load_string);
 *                         optional jitter: amplitude >= 0 (default 0) and
 *                         seed: integer >= 0 (default 1), see
 *                         avi_mesh_jitter_interior
 *                   or particles: [{x: [3], v: [3] (default 0), mass > 0
 *                         (optional only for pinned particles), pinned:
 *                         bool (default false), constraint (optional,
 *                         unpinned particles): {sphere: {center: [3],
 *                         radius > 0}} or {circle: {center: [3], radius > 0,
 *                         normal: [3] non-zero}}: the particle stays on it}]
 *                      with optional springs: [{a, b, stiffness, rest}]
 *                         (rest >= 0; default: the rest distance;
 *                         stiffness defaults to the body's spring
 *                         material's stiffness)
 *                      and optional links: [{a, b, length}]: rigid links
 *                         |x_b - x_a| = length (> 0; default: the initial
 *                         distance), not both ends pinned
 *                      Constraints (links, sphere, circle) are enforced
 *                      with Lagrange multipliers by the synchronous
 *                      integrators; the avi integrator refuses them.
 *                   material: required for mesh bodies; for particle bodies
 *                         optional and of model spring
 *                   translate: [3], default 0 (added to rest positions)
 *                   velocity: [3], default 0 (added to every vertex)
 *                   angular_velocity: [3], default 0: w x (x - c) added to
 *                         every vertex's velocity, c the rest centroid
 *                   initial: {scale: s > 0}, default 1: initial positions
 *                         c + s (X - c) about the rest centroid c
 *                   pinned: {box: [[min], [max]]} (rest positions, after
 *                         translate; a box that pins nothing is an error)
 *                         or {indices: [i, ...]} (body-local, no repeats)
 *                         or {boundary: clamped}: every vertex on an open edge
 *                         of the body's triangle surface held, and with
 *                         bending: midedge the slope across those edges too
 *                         (with hinge there is no slope to hold: exit 2)
 *                         or {boundary: simply-supported}: those vertices
 *                         held, rotation free. `boundary: true` is refused
 *                         (it read as a clamp and made a simple support)
 *                   time_step: dt or {fixed: dt}, dt > 0: a fixed step for
 *                         the body's potentials
 *   contact       stored for the contact manager; absent: disabled.
 *                 enabled: bool, default true when the section is given;
 *                 thickness > 0 (required when enabled); inner_thickness in
 *                 (0, thickness), default thickness / 5; stiffness: auto
 *                 (default, stored as 0) or > 0; layers: auto (default,
 *                 stored as 0) or an integer in 1..64; friction: Coulomb
 *                 mu >= 0 (static = kinetic), default 0 (avi_contact_settings,
 *                 /observables/friction_work). When enabled, the
 *                 initial state must be clear: no two contact triangles
 *                 intersect and no vertex-face or edge-edge pair the
 *                 contact forms (within a body too) is within
 *                 inner_thickness (contact/contact_clearance.h)
 *   gravity       [gx, gy, gz], default [0, 0, 0]
 *   damping       k_D >= 0 in seconds, default 0: each elastic potential's
 *                 energy measured between consecutive configurations
 *                 damps the motion (Kharevych et al. 2006, section 5.2;
 *                 a spring's force -k_D k dl/dt); every integrator
 *   output        file: default "<name>.h5"; energy_every, frame_every > 0,
 *                 default time.end / 1000 and time.end / 100;
 *                 checkpoint_every >= 0, default 0 (no checkpoints); each
 *                 interval at least time.end / 1e9
 *                 synchronized_every: an integer >= 1 or auto (default):
 *                 kinetic_energy and total_energy, the synchronized pair
 *                 (docs/energy_observable.md), are written at every
 *                 synchronized_every-th row (rows 0, N, 2N, ...) and at a
 *                 row off the energy_every grid (a run's or evolve's end);
 *                 every other observable at every row. auto: the
 *                 smallest N for which their three gradients of every
 *                 potential cost at most a tenth of the clocks' events
 *                 between two such rows, at most 100; 1 for models of fewer
 *                 than 1000 elastic potentials (avi_synchronized_every) and
 *                 where rows are sparse against the clocks; it does not
 *                 depend on time.end, so a run extended by a resume has the
 *                 rows of one longer run; /parameters/synchronized_every holds
 *                 the N a run used
 *                 max_energy_growth >= 0, default 100: the run fails (a
 *                 blow-up) when at an energy row |E - E0| (E the total,
 *                 the mid-step one on rows without it) exceeds this
 *                 many times the energy scale: kinetic + |elastic| +
 *                 |contact| + |external| at t = 0, at least
 *                 M (|g| L + (L / time.end)^2) with M the total mass and
 *                 L the diagonal of the initial state's bounding box;
 *                 0: no check
 *                 max_checkpoints > 0, default 1e5: loading refuses a
 *                 checkpoint_every giving more checkpoints over time.end
 *                 (each is the whole state, written and synced to disk)
 *                 max_bytes > 0, default 2e10 (20 GB; built-in scenes and
 *                 benchmarks write under 30 MB): building refuses a scene whose
 *                 output file would need more (avi_h5_estimate_bytes: the
 *                 rows and frames avi_h5_output_count gives, and the fixed
 *                 overheads), naming energy_every or frame_every, whichever
 *                 needs more; raise it for a larger file
 *   parallel      threads: an integer in 1..1024 or auto, the threads a
 *                 run uses (every integrator); auto: every processor the
 *                 process may run on (its CPU affinity). Unset, a run uses
 *                 avi_engine_default_threads: one per 25 000 clocks of the
 *                 avi integrator without contact or damping, up to every
 *                 processor, and 1 for the others, where more threads do
 *                 not pay yet (bench/README.md, "Threads").
 *                 The results are the same bits for every count, so it is
 *                 not part of a run's identity: `avi run --threads N`
 *                 (avi_run_options.threads) overrides it, and a resume may
 *                 use another count. The resolved scene carries the key as
 *                 set; /parameters/threads the count used
 *
 * Numbers are plain YAML scalars (quoted text is a string); .inf / .nan and
 * friends are rejected. Anchors and aliases work; tags do not. */
#ifndef AVI_SCENE_H
#define AVI_SCENE_H

#include "avi/model.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum {
    AVI_INTEGRATOR_AVI = 0,
    AVI_INTEGRATOR_SYNC_EXPLICIT,
    AVI_INTEGRATOR_SYNC_IMPLICIT,
    AVI_INTEGRATOR_SYNC_ROOTFIND,
    AVI_INTEGRATOR_EXPLICIT_EULER,
    AVI_INTEGRATOR_IMPLICIT_EULER,
    AVI_INTEGRATOR_DCR, /* central differences with decomposition contact response */
    AVI_INTEGRATOR_SYNC_EXPLICIT4, /* fourth order: Yoshida's triple jump of velocity Verlet */
    AVI_INTEGRATOR_COUNT
} avi_integrator_type;

/* The scene spelling of an integrator type ("sync-implicit"), or NULL. */
const char *avi_integrator_name(avi_integrator_type type);

/* Linear solver of the Newton steps. */
typedef enum {
    AVI_SOLVER_CHOLMOD = 0, /* sparse Cholesky (SuiteSparse CHOLMOD); LDL^T for indefinite root finding */
    AVI_SOLVER_PCG = 1,     /* Jacobi-preconditioned conjugate gradient, inexact Newton */
    AVI_SOLVER_LU = 2       /* sync-rootfind only: sparse LU with partial pivoting (SuiteSparse UMFPACK)
                             * of the Jacobian as a general, unsymmetric matrix, both triangles stored:
                             * root finding as a general nonlinear-equation solver does it (the
                             * setting of Kharevych et al. section 5.4); AVI_ERR_INPUT elsewhere */
} avi_linear_solver;

typedef struct {
    avi_integrator_type type;
    double alpha;     /* sync-implicit */
    double tolerance; /* sync-implicit, sync-rootfind, implicit-euler */
    avi_linear_solver solver; /* the Newton integrators; scene key integrator.solver */
} avi_scene_integrator;

typedef enum {
    AVI_MATERIAL_SHELL = 0,
    AVI_MATERIAL_MEMBRANE,
    AVI_MATERIAL_NEO_HOOKEAN,
    AVI_MATERIAL_SPRING
} avi_material_model;

typedef struct {
    char *name;
    avi_material_model model;
    double youngs, poisson, density, thickness; /* 0 where the model takes none */
    double stiffness;                           /* spring */
    int bending;                                /* avi_bending (avi/model.h); shell: midedge by default */
} avi_scene_material;

typedef enum {
    AVI_MESH_NONE = 0, /* a particle body */
    AVI_MESH_ICOSPHERE,
    AVI_MESH_DISK,
    AVI_MESH_RECT,
    AVI_MESH_TET_BOX,
    AVI_MESH_FILE,
    AVI_MESH_BALL /* avi_mesh_tet_ball_shells / avi_mesh_tet_ball_graded (avi/mesh.h) */
} avi_mesh_source;

typedef struct {
    avi_mesh_source source;
    double radius;        /* icosphere, disk */
    int subdivisions;     /* icosphere */
    int rings;            /* disk */
    double lx, ly, lz;    /* rect (lx, ly), tet_box */
    int nx, ny, nz;       /* rect (nx, ny), tet_box */
    char *file;           /* file: resolved path (absolute when it exists) */
    double jitter;        /* 0: none */
    uint64_t seed;
    int reorder;          /* vertices and elements in Morton order (avi_mesh_reorder) */
    int n;                /* ball: cells per cube edge */
    double grading;       /* ball: in [0, 1), 0: uniform */
    double pole[3];       /* ball: unit direction of the finely meshed pole (default 0, 0, -1) */
    int shells;           /* ball: concentric shells (1, default) or the mapped cube (0) */
} avi_scene_mesh;

typedef enum { AVI_SURFACE_NONE = 0, AVI_SURFACE_SPHERE, AVI_SURFACE_CIRCLE } avi_surface_kind;

/* A surface a particle is constrained to: a sphere, or a circle (the
 * sphere's intersection with the plane through center with this normal). */
typedef struct {
    avi_surface_kind kind;
    double center[3];
    double radius;
    double normal[3]; /* circle */
} avi_scene_surface;

typedef struct {
    double x[3], v[3];
    double mass; /* 0 only when pinned */
    int pinned;
    avi_scene_surface constraint;
} avi_scene_particle;

typedef struct {
    uint32_t a, b;
    double length; /* < 0: the initial distance */
} avi_scene_link;

typedef struct {
    uint32_t a, b;
    double stiffness;
    double rest; /* < 0: the rest distance */
} avi_scene_spring;

typedef enum { AVI_PIN_NONE = 0, AVI_PIN_BOX, AVI_PIN_INDICES, AVI_PIN_BOUNDARY } avi_pin_kind;

typedef struct {
    char *name;
    avi_scene_mesh mesh;
    size_t particle_count;
    avi_scene_particle *particles;
    size_t spring_count;
    avi_scene_spring *springs;
    size_t link_count;
    avi_scene_link *links;
    int material; /* index into avi_scene.materials; -1: none */
    double translate[3];
    double velocity[3];
    double angular_velocity[3];
    double scale;
    avi_pin_kind pin;
    int pin_clamped; /* AVI_PIN_BOUNDARY: 1 clamped, 0 simply supported */
    double pin_box[2][3];
    size_t pin_count;
    uint32_t *pin_indices;
    double time_step; /* > 0: fixed step for the body; 0: the scene's rule */
    /* Source lines (0: from --set or unknown), for messages when building. */
    int line, mesh_line, pinned_line;
} avi_scene_body;

typedef struct {
    int enabled;
    double thickness;
    double inner_thickness;
    double stiffness; /* 0: auto */
    int layers;       /* 0: auto */
    double friction;  /* Coulomb mu >= 0, 0: none */
} avi_scene_contact;

typedef struct {
    char *file;
    double energy_every;
    double frame_every;
    double checkpoint_every; /* 0: none */
    double max_energy_growth; /* blow-up check; 0: off */
    double max_bytes;         /* refuse a run whose rows and frames need more */
    double max_checkpoints;   /* refuse a run that would write more checkpoints */
    long long synchronized_every; /* rows per synchronized row; 0: auto (see the key reference above) */
} avi_scene_output;

/* Defaults of the up-front limits (see output.max_bytes, output.max_checkpoints
 * and time_step.max_events in the key reference above). */
#define AVI_SCENE_MAX_BYTES 2e10
#define AVI_SCENE_MAX_CHECKPOINTS 1e5
#define AVI_SCENE_MAX_EVENTS 1e13

typedef struct {
    char *source;      /* the file as named, or "builtin:<name>" */
    char *dir;         /* where relative mesh paths start; NULL: the working directory */
    char *text;        /* the scene as given, and a trailing comment listing --set overrides */
    char *file;        /* the scene file, resolved; NULL for built-ins and text */
    unsigned char file_sha256[32]; /* SHA-256 of the bytes read from it */
    char *name;
    char *description;
    double end_time;
    avi_scene_integrator integrator;
    avi_time_step time_step;
    double max_events; /* time_step.max_events */
    size_t material_count;
    avi_scene_material *materials;
    size_t body_count;
    avi_scene_body *bodies;
    avi_scene_contact contact;
    double gravity[3];
    double damping;
    avi_scene_output output;
    int threads;       /* parallel.threads; 0: not set (1), -1: auto */
} avi_scene;

/* Loads a scene file, applies `overrides` ("dotted.key=VALUE", VALUE a YAML
 * flow scalar, sequence or mapping) in order to the parsed tree, then
 * validates. Returns AVI_OK or an avi_status with err filled; on failure
 * *scene is left empty (avi_scene_free on it is safe). */
int avi_scene_load_file(const char *path, const char *const *overrides, size_t n_overrides,
                        avi_scene *scene, avi_error *err);

/* The same for a built-in scene by name ("sphere-plate"). */
int avi_scene_load_builtin(const char *name, const char *const *overrides, size_t n_overrides,
                           avi_scene *scene, avi_error *err);

/* SCENE as the command line takes it: a built-in name when `arg` has no '/',
 * does not end in .yaml / .yml and names a built-in; a file otherwise. */
int avi_scene_load(const char *arg, const char *const *overrides, size_t n_overrides,
                   avi_scene *scene, avi_error *err);

/* The same from text in memory. `source` names it in messages and gives the
 * default scene name; `dir` (may be NULL) is where relative mesh paths
 * start. */
int avi_scene_load_string(const char *text, size_t length, const char *source, const char *dir,
                          const char *const *overrides, size_t n_overrides, avi_scene *scene,
                          avi_error *err);

void avi_scene_free(avi_scene *scene);

/* An empty scene on the heap, for callers that cannot know the struct's
 * size (bindings such as Python's ctypes); load into it, then
 * avi_scene_destroy frees its contents and itself. NULL when out of memory. */
avi_scene *avi_scene_create(void);
void avi_scene_destroy(avi_scene *scene);

/* The resolved scene (every default filled in) as YAML text, which loads
 * back into an equal scene. malloc'd, NUL-terminated; NULL when out of
 * memory. */
char *avi_scene_emit(const avi_scene *scene);

/* Built-in scenes (the YAML files of data/scenes, embedded at build time), sorted by
 * name. Name, text and description are NULL past the end. */
size_t avi_scene_builtin_count(void);
const char *avi_scene_builtin_name(size_t index);
const char *avi_scene_builtin_text(size_t index);
/* The scene's top-level `description:` ("" when it has none). Parsed and
 * cached on first use, so the first call is not thread-safe. */
const char *avi_scene_builtin_description(size_t index);
/* Index of a built-in by name, or -1. */
int avi_scene_builtin_find(const char *name);

/* What an output writer needs of one body: its vertex range in the model and
 * its connectivity, with body-local vertex indices. `triangles` is the
 * surface (the boundary of the tetrahedra for solid bodies); `edges` are the
 * springs of spring and particle bodies. */
typedef struct {
    char *name;
    uint32_t first_vertex;
    uint32_t vertex_count;
    size_t triangle_count;
    uint32_t (*triangles)[3];
    size_t tet_count;
    uint32_t (*tets)[4];
    size_t edge_count;
    uint32_t (*edges)[2];
    unsigned char mesh_sha256[32]; /* SHA-256 of the mesh file's bytes as read; zero without a file */
} avi_scene_body_info;

typedef struct {
    size_t count;
    avi_scene_body_info *bodies;
} avi_scene_bodies;

/* Builds and finalizes the model of a loaded scene: bodies in scene order,
 * vertices, initial state, elements by material, pins, gravity and time
 * steps. `info` may be NULL. Returns AVI_OK or an avi_status with err filled
 * ("file:line: bodies.i (name): problem"); on failure *model is NULL and
 * *info empty. With contact, bodies that intersect or come within the inner
 * thickness at t = 0 are AVI_ERR_INPUT naming both bodies and one pair
 * (see the contact key above). Also AVI_ERR_INPUT, before generating: enum
 * fields outside their enums (a hand-built scene), and generated meshes,
 * or after building the contact broad phase, that would need more memory
 * than physical memory or half of ulimit -v / -d (naming the size key or
 * contact.thickness with the estimate). A mesh file's vertices that no
 * element uses are dropped, with one note on stderr; pinned.indices keep
 * the file's numbering. */
int avi_scene_build(const avi_scene *scene, avi_model **model, avi_scene_bodies *info,
                    avi_error *err);

void avi_scene_bodies_free(avi_scene_bodies *info);

#ifdef __cplusplus
}
#endif

#endif
