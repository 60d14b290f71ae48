/* Loading a scene: the YAML tree validated section by section into an
 * avi_scene (every error names the source, line and key), from a string,
 * a file or a built-in, with --set overrides applied first. */
#include "scene/scene_tree.h"
#include "scene/scene_schema.h"
#include "base/pool.h"
#include "base/regular_file.h"
#include "base/sha256.h"
#include "avi/model.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int in_list(const char *list, const char *key)
{
    size_t n = strlen(key);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ' ');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len == n && strncmp(p, key, n) == 0) return 1;
        if (!e) break;
        p = e + 1;
    }
    return 0;
}

/* ---------------------------------------------------------- validation -- */

typedef struct {
    const char *source;
    avi_error *err;
} vctx;

#define PATH_MAX_LEN 256

/* Dotted paths for messages; overlong ones are cut, not overflowed. */
static void append(char *out, size_t *n, const char *s)
{
    while (*s && *n < PATH_MAX_LEN - 1) out[(*n)++] = *s++;
    out[*n] = '\0';
}

static void join(char *out, const char *base, const char *key)
{
    size_t n = 0;
    out[0] = '\0';
    if (base && *base) {
        append(out, &n, base);
        append(out, &n, ".");
    }
    append(out, &n, key);
}

static void join_index(char *out, const char *base, size_t i)
{
    char num[24];
    snprintf(num, sizeof num, "%zu", i);
    join(out, base, num);
}

static int vfail(vctx *c, const ynode *node, const char *path, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static int vfail(vctx *c, const ynode *node, const char *path, const char *fmt, ...)
{
    char at[sizeof c->err->message];
    if (node && node->line > 0) snprintf(at, sizeof at, "%s:%d: %s", c->source, node->line, path);
    else snprintf(at, sizeof at, "%s: %s (--set)", c->source, path);
    va_list ap;
    va_start(ap, fmt);
    int rc = avi_error_vset_at(c->err, AVI_ERR_INPUT, at, fmt, ap);
    va_end(ap);
    return rc;
}

/* What a node is, for "expected X, got Y". */
static const char *describe(const ynode *v, char *buf, size_t len)
{
    if (v->kind == YN_SEQ) {
        snprintf(buf, len, "a sequence of %zu item%s", v->n, v->n == 1 ? "" : "s");
        return buf;
    }
    if (v->kind == YN_MAP) return "a mapping";
    if (v->plain && (v->str[0] == '\0' || strcmp(v->str, "~") == 0 || strcmp(v->str, "null") == 0 ||
                     strcmp(v->str, "Null") == 0 || strcmp(v->str, "NULL") == 0))
        return "nothing (null)";
    snprintf(buf, len, "%s'%.40s%s'", v->plain ? "" : "quoted ", v->str, strlen(v->str) > 40 ? "..." : "");
    return buf;
}

static int expected(vctx *c, const ynode *v, const char *path, const char *what)
{
    char buf[80];
    return vfail(c, v, path, "expected %s, got %s", what, describe(v, buf, sizeof buf));
}

static const ynode *map_get(const ynode *map, const char *key)
{
    if (!map || map->kind != YN_MAP) return NULL;
    for (size_t i = 0; i < map->n; i++)
        if (strcmp(map->keys[i]->str, key) == 0) return map->items[i];
    return NULL;
}

static int check_keys(vctx *c, const ynode *map, const char *base, const char *allowed)
{
    for (size_t i = 0; i < map->n; i++) {
        if (in_list(allowed, map->keys[i]->str)) continue;
        char path[PATH_MAX_LEN];
        join(path, base, map->keys[i]->str);
        return vfail(c, map->keys[i], path, "unknown key (expected one of: %s)", allowed);
    }
    return 0;
}

/* Duplicate keys, anywhere in the tree. */
static int check_duplicates(vctx *c, const ynode *node, const char *base)
{
    char path[PATH_MAX_LEN];
    if (node->kind == YN_MAP) {
        for (size_t i = 0; i < node->n; i++) {
            join(path, base, node->keys[i]->str);
            for (size_t j = 0; j < i; j++)
                if (strcmp(node->keys[i]->str, node->keys[j]->str) == 0)
                    return vfail(c, node->keys[i], path, "duplicate key (first at line %d)", node->keys[j]->line);
            if (check_duplicates(c, node->items[i], path)) return AVI_ERR_INPUT;
        }
    } else if (node->kind == YN_SEQ) {
        for (size_t i = 0; i < node->n; i++) {
            join_index(path, base, i);
            if (check_duplicates(c, node->items[i], path)) return AVI_ERR_INPUT;
        }
    }
    return 0;
}

static int missing(vctx *c, const ynode *map, const char *path)
{
    return vfail(c, map, path, "required key missing");
}

/* Plain-scalar number; .inf / .nan spellings come back non-finite. */
static int parse_number(const ynode *v, double *out)
{
    if (v->kind != YN_SCALAR || !v->plain || !v->str[0]) return -1;
    const char *s = v->str;
    const char *t = (*s == '+' || *s == '-') ? s + 1 : s;
    if (strcmp(t, ".inf") == 0 || strcmp(t, ".Inf") == 0 || strcmp(t, ".INF") == 0) {
        *out = *s == '-' ? -INFINITY : INFINITY;
        return 0;
    }
    if (strcmp(t, ".nan") == 0 || strcmp(t, ".NaN") == 0 || strcmp(t, ".NAN") == 0) {
        *out = NAN;
        return 0;
    }
    if (isspace((unsigned char)*s)) return -1;
    char *end;
    errno = 0;
    double d = strtod(s, &end);
    if (end == s || *end) return -1;
    *out = d;
    return 0;
}

typedef enum { R_ANY, R_POS, R_NONNEG, R_POISSON, R_UNIT, R_01 } range;

static int check_range(vctx *c, const ynode *v, const char *path, double d, range r)
{
    if (!isfinite(d)) return vfail(c, v, path, "must be finite, got '%s'", v->str);
    switch (r) {
    case R_POS:
        if (!(d > 0.0)) return vfail(c, v, path, "must be > 0, got %g", d);
        break;
    case R_NONNEG:
        if (!(d >= 0.0)) return vfail(c, v, path, "must be >= 0, got %g", d);
        break;
    case R_POISSON:
        if (!(d >= 0.0 && d < 0.5)) return vfail(c, v, path, "must be in [0, 0.5), got %g", d);
        break;
    case R_UNIT:
        if (!(d > 0.0 && d <= 1.0)) return vfail(c, v, path, "must be in (0, 1], got %g", d);
        break;
    case R_01:
        if (!(d >= 0.0 && d <= 1.0)) return vfail(c, v, path, "must be in [0, 1], got %g", d);
        break;
    default:
        break;
    }
    return 0;
}

static int node_number(vctx *c, const ynode *v, const char *path, range r, double *out)
{
    double d;
    if (parse_number(v, &d)) return expected(c, v, path, "a number");
    if (check_range(c, v, path, d, r)) return AVI_ERR_INPUT;
    *out = d;
    return 0;
}

/* A number field; absent and not required leaves *out as it is. */
static int num(vctx *c, const ynode *map, const char *base, const char *key, int required, range r, double *out)
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    if (!v) return required ? missing(c, map, path) : 0;
    return node_number(c, v, path, r, out);
}

static int node_int(vctx *c, const ynode *v, const char *path, long long lo, long long hi, long long *out)
{
    if (v->kind != YN_SCALAR || !v->plain || !v->str[0] || isspace((unsigned char)v->str[0]))
        return expected(c, v, path, "an integer");
    char *end;
    errno = 0;
    long long x = strtoll(v->str, &end, 10);
    if (*end || end == v->str) return expected(c, v, path, "an integer");
    if (errno == ERANGE || x < lo || x > hi) {
        if (errno != ERANGE && x > hi && lo >= 0 && hi < LLONG_MAX)
            return vfail(c, v, path, "%s is too large (at most %lld)", v->str, hi);
        return vfail(c, v, path, "must be in [%lld, %lld], got %s", lo, hi, v->str);
    }
    *out = x;
    return 0;
}

static int integer(vctx *c, const ynode *map, const char *base, const char *key, int required, long long lo,
                   long long hi, long long *out)
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    if (!v) return required ? missing(c, map, path) : 0;
    return node_int(c, v, path, lo, hi, out);
}

static int boolean(vctx *c, const ynode *map, const char *base, const char *key, int *out)
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    if (!v) return 0;
    if (v->kind == YN_SCALAR && v->plain) {
        const char *s = v->str;
        if (!strcmp(s, "true") || !strcmp(s, "True") || !strcmp(s, "TRUE")) {
            *out = 1;
            return 0;
        }
        if (!strcmp(s, "false") || !strcmp(s, "False") || !strcmp(s, "FALSE")) {
            *out = 0;
            return 0;
        }
    }
    return expected(c, v, path, "true or false");
}

static int node_string(vctx *c, const ynode *v, const char *path, char **out)
{
    char buf[80];
    if (v->kind != YN_SCALAR || !strcmp(describe(v, buf, sizeof buf), "nothing (null)"))
        return expected(c, v, path, "a string");
    char *s = strdup(v->str);
    if (!s) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    free(*out);
    *out = s;
    return 0;
}

static int string(vctx *c, const ynode *map, const char *base, const char *key, int required, char **out)
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    if (!v) return required ? missing(c, map, path) : 0;
    return node_string(c, v, path, out);
}

static int node_vec3(vctx *c, const ynode *v, const char *path, double out[3])
{
    if (v->kind != YN_SEQ || v->n != 3) return expected(c, v, path, "a sequence of 3 numbers");
    char p[PATH_MAX_LEN];
    for (int k = 0; k < 3; k++) {
        join_index(p, path, (size_t)k);
        if (node_number(c, v->items[k], p, R_ANY, &out[k])) return AVI_ERR_INPUT;
    }
    return 0;
}

static int vec3(vctx *c, const ynode *map, const char *base, const char *key, int required, double out[3])
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    if (!v) return required ? missing(c, map, path) : 0;
    return node_vec3(c, v, path, out);
}

/* A mapping field: *out NULL when absent. */
static int mapping(vctx *c, const ynode *map, const char *base, const char *key, int required, const ynode **out)
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    *out = v;
    if (!v) return required ? missing(c, map, path) : 0;
    if (v->kind != YN_MAP) return expected(c, v, path, "a mapping");
    return 0;
}

/* One word of a fixed set; returns its index in *out. */
static int choice(vctx *c, const ynode *map, const char *base, const char *key, int required,
                  const char *const *words, int nwords, const char *noun, int *out)
{
    char path[PATH_MAX_LEN];
    join(path, base, key);
    const ynode *v = map_get(map, key);
    if (!v) return required ? missing(c, map, path) : 0;
    if (v->kind != YN_SCALAR) return expected(c, v, path, "a name");
    for (int i = 0; i < nwords; i++)
        if (strcmp(v->str, words[i]) == 0) {
            *out = i;
            return 0;
        }
    char list[256] = "";
    for (int i = 0; i < nwords; i++) {
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", words[i]);
    }
    return vfail(c, v, path, "unknown %s '%.60s' (expected one of: %s)", noun, v->str, list);
}

/* --------------------------------------------------------------- names -- */

static const char *const generator_names[] = {"icosphere", "disk", "rect", "tet_box", "ball"};
#define GENERATOR_COUNT 5

/* Generator sources in generator_names' order (AVI_MESH_BALL follows
 * AVI_MESH_FILE, so that the enum's older values keep theirs). */
static avi_mesh_source generator_source(int g)
{
    return g == 4 ? AVI_MESH_BALL : (avi_mesh_source)(AVI_MESH_ICOSPHERE + g);
}

static const char *generator_name(avi_mesh_source source)
{
    if (source == AVI_MESH_BALL) return "ball";
    if (source >= AVI_MESH_ICOSPHERE && source <= AVI_MESH_TET_BOX) return generator_names[source - AVI_MESH_ICOSPHERE];
    return "file";
}

static int valid_scene_name(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '.' || *s == '_' || *s == '-')) return 0;
    return 1;
}

static int valid_body_name(const char *s)
{
    if (!(isalpha((unsigned char)*s) || *s == '_')) return 0;
    for (; *s; s++)
        if (!(isalnum((unsigned char)*s) || *s == '_' || *s == '-')) return 0;
    return 1;
}

/* The default scene name: the source's file name without extension. */
static char *default_name(const char *source)
{
    const char *b = strrchr(source, '/');
    b = b ? b + 1 : source;
    if (strncmp(b, "builtin:", 8) == 0) b += 8;
    size_t n = strlen(b);
    if (n > 5 && strcmp(b + n - 5, ".yaml") == 0) n -= 5;
    else if (n > 4 && strcmp(b + n - 4, ".yml") == 0) n -= 4;
    char *s = yn_dup_n(b, n);
    if (!s) return NULL;
    for (char *p = s; *p; p++)
        if (!(isalnum((unsigned char)*p) || *p == '.' || *p == '_' || *p == '-')) *p = '_';
    if (!*s) {
        free(s);
        s = strdup("scene");
    }
    return s;
}

/* ------------------------------------------------------------ sections -- */

static int load_integrator(vctx *c, const ynode *root, avi_scene *s)
{
    const ynode *m;
    if (mapping(c, root, "", "integrator", 0, &m)) return AVI_ERR_INPUT;
    s->integrator.type = AVI_INTEGRATOR_AVI;
    s->integrator.alpha = 0.5;
    s->integrator.tolerance = 1e-10;
    s->integrator.solver = AVI_SOLVER_CHOLMOD;
    if (!m) return 0;
    if (check_keys(c, m, "integrator", avi_scene_schema_keys("integrator"))) return AVI_ERR_INPUT;
    /* The names are avi_integrator_name's (sync/engine_create.c, below io). */
    const char *integrator_names[AVI_INTEGRATOR_COUNT];
    for (int i = 0; i < AVI_INTEGRATOR_COUNT; i++) integrator_names[i] = avi_integrator_name((avi_integrator_type)i);
    int t = 0;
    if (choice(c, m, "integrator", "type", 0, integrator_names, AVI_INTEGRATOR_COUNT, "integrator", &t))
        return AVI_ERR_INPUT;
    s->integrator.type = (avi_integrator_type)t;
    const ynode *a = map_get(m, "alpha"), *tol = map_get(m, "tolerance");
    if (a && t != AVI_INTEGRATOR_SYNC_IMPLICIT)
        return vfail(c, a, "integrator.alpha", "only used by sync-implicit, not %s", integrator_names[t]);
    if (tol && t == AVI_INTEGRATOR_AVI)
        return vfail(c, tol, "integrator.tolerance", "only used by the synchronous integrators, not %s",
                     integrator_names[t]);
    if (num(c, m, "integrator", "alpha", 0, R_01, &s->integrator.alpha)) return AVI_ERR_INPUT;
    if (num(c, m, "integrator", "tolerance", 0, R_POS, &s->integrator.tolerance)) return AVI_ERR_INPUT;
    /* Only the Newton integrators solve linear systems; LU is root finding's
     * general solver (no minimizer's fallback, no Schur complement for
     * constraints: scene_engine.c refuses those with the key named). */
    const ynode *sv = map_get(m, "solver");
    int newton = t == AVI_INTEGRATOR_SYNC_IMPLICIT || t == AVI_INTEGRATOR_SYNC_ROOTFIND || t == AVI_INTEGRATOR_IMPLICIT_EULER;
    if (sv && !newton)
        return vfail(c, sv, "integrator.solver", "only used by sync-implicit, sync-rootfind and implicit-euler, not %s",
                     integrator_names[t]);
    int solver = AVI_SOLVER_CHOLMOD;
    if (choice(c, m, "integrator", "solver", 0, avi_scene_solver_names, AVI_SCENE_SOLVER_COUNT, "linear solver", &solver))
        return AVI_ERR_INPUT;
    if (solver == AVI_SOLVER_LU && t != AVI_INTEGRATOR_SYNC_ROOTFIND)
        return vfail(c, sv, "integrator.solver", "lu is for sync-rootfind only, not %s", integrator_names[t]);
    s->integrator.solver = (avi_linear_solver)solver;
    return 0;
}

static int load_time_step(vctx *c, const ynode *root, avi_scene *s)
{
    const ynode *m;
    s->time_step = avi_default_time_step();
    s->max_events = AVI_SCENE_MAX_EVENTS;
    if (mapping(c, root, "", "time_step", 0, &m)) return AVI_ERR_INPUT;
    if (!m) return 0;
    if (check_keys(c, m, "time_step", avi_scene_schema_keys("time_step"))) return AVI_ERR_INPUT;
    if (num(c, m, "time_step", "max_events", 0, R_POS, &s->max_events)) return AVI_ERR_INPUT;
    int rule = map_get(m, "fixed") && !map_get(m, "rule") ? AVI_DT_FIXED : AVI_DT_STABILITY;
    if (choice(c, m, "time_step", "rule", 0, avi_scene_rule_names, 3, "time-step rule", &rule)) return AVI_ERR_INPUT;
    s->time_step.rule = (avi_dt_rule)rule;
    const ynode *v;
    if ((v = map_get(m, "safety")) && rule != AVI_DT_STABILITY)
        return vfail(c, v, "time_step.safety", "only used by rule stability");
    if ((v = map_get(m, "delta")) && rule != AVI_DT_CFL) return vfail(c, v, "time_step.delta", "only used by rule cfl");
    if ((v = map_get(m, "fixed")) && rule != AVI_DT_FIXED)
        return vfail(c, v, "time_step.fixed", "only used by rule fixed");
    if (num(c, m, "time_step", "safety", 0, R_UNIT, &s->time_step.safety)) return AVI_ERR_INPUT;
    if (num(c, m, "time_step", "delta", 0, R_UNIT, &s->time_step.delta)) return AVI_ERR_INPUT;
    if (num(c, m, "time_step", "fixed", rule == AVI_DT_FIXED, R_POS, &s->time_step.fixed)) return AVI_ERR_INPUT;
    if ((v = map_get(m, "neighbor_ratio")) && rule == AVI_DT_FIXED)
        return vfail(c, v, "time_step.neighbor_ratio", "not used by rule fixed");
    if (num(c, m, "time_step", "neighbor_ratio", 0, R_NONNEG, &s->time_step.neighbor_ratio)) return AVI_ERR_INPUT;
    if (s->time_step.neighbor_ratio > 0.0 && s->time_step.neighbor_ratio < 1.0)
        return vfail(c, map_get(m, "neighbor_ratio"), "time_step.neighbor_ratio", "must be 0 (no cap) or >= 1");
    if ((v = map_get(m, "levels_per_octave")) && rule == AVI_DT_FIXED)
        return vfail(c, v, "time_step.levels_per_octave", "not used by rule fixed");
    long long levels = s->time_step.levels_per_octave;
    if (integer(c, m, "time_step", "levels_per_octave", 0, 0, AVI_MAX_LEVELS_PER_OCTAVE, &levels)) return AVI_ERR_INPUT;
    s->time_step.levels_per_octave = (int)levels;
    const ynode *pk;
    if (mapping(c, m, "time_step", "per_kind", 0, &pk)) return AVI_ERR_INPUT;
    if (pk) {
        if (check_keys(c, pk, "time_step.per_kind", avi_scene_schema_keys("time_step.per_kind"))) return AVI_ERR_INPUT;
        for (int k = 0; k < AVI_KIND_COUNT; k++) {
            double dt = 0.0;
            if (num(c, pk, "time_step.per_kind", avi_kind_name((avi_kind)k), 0, R_POS, &dt)) return AVI_ERR_INPUT;
            if (dt > 0.0 && avi_time_step_set_kind_fixed(&s->time_step, (avi_kind)k, dt) != 0)
                return avi_error_set(c->err, AVI_ERR_INPUT, "%s: time_step.per_kind.%s: cannot set", c->source,
                                     avi_kind_name((avi_kind)k));
        }
    }
    return 0;
}

static int load_materials(vctx *c, const ynode *root, avi_scene *s)
{
    const ynode *m;
    if (mapping(c, root, "", "materials", 0, &m)) return AVI_ERR_INPUT;
    if (!m || m->n == 0) return 0;
    s->materials = calloc(m->n, sizeof *s->materials);
    if (!s->materials) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    for (size_t i = 0; i < m->n; i++) {
        avi_scene_material *mat = &s->materials[i];
        const ynode *v = m->items[i];
        char base[PATH_MAX_LEN];
        join(base, "materials", m->keys[i]->str);
        if (!(mat->name = strdup(m->keys[i]->str))) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
        s->material_count = i + 1;
        if (!m->keys[i]->str[0]) return vfail(c, m->keys[i], base, "material names must not be empty");
        if (v->kind != YN_MAP) return expected(c, v, base, "a mapping");
        int model = 0;
        if (choice(c, v, base, "model", 1, avi_scene_material_names, 4, "material model", &model)) return AVI_ERR_INPUT;
        mat->model = (avi_material_model)model;
        /* Which keys each model takes; the rest are errors, not ignored. */
        const char *takes = model == AVI_MATERIAL_SPRING        ? "model stiffness density"
                            : model == AVI_MATERIAL_NEO_HOOKEAN ? "model youngs poisson density"
                            : model == AVI_MATERIAL_MEMBRANE    ? "model youngs poisson density thickness"
                                                                : "model youngs poisson density thickness bending";
        for (size_t k = 0; k < v->n; k++)
            if (!in_list(takes, v->keys[k]->str)) {
                char path[PATH_MAX_LEN];
                join(path, base, v->keys[k]->str);
                if (!in_list(avi_scene_schema_keys("materials.*"), v->keys[k]->str))
                    return vfail(c, v->keys[k], path, "unknown key (model %s takes: %s)", avi_scene_material_names[model],
                                 takes + 6);
                return vfail(c, v->keys[k], path, "not a parameter of model %s (takes: %s)", avi_scene_material_names[model],
                             takes + 6);
            }
        if (model == AVI_MATERIAL_SPRING) {
            if (num(c, v, base, "stiffness", 1, R_POS, &mat->stiffness)) return AVI_ERR_INPUT;
            if (num(c, v, base, "density", 1, R_POS, &mat->density)) return AVI_ERR_INPUT;
            continue;
        }
        if (num(c, v, base, "youngs", 1, R_POS, &mat->youngs)) return AVI_ERR_INPUT;
        if (num(c, v, base, "poisson", 1, R_POISSON, &mat->poisson)) return AVI_ERR_INPUT;
        if (num(c, v, base, "density", 1, R_POS, &mat->density)) return AVI_ERR_INPUT;
        if (model != AVI_MATERIAL_NEO_HOOKEAN && num(c, v, base, "thickness", 1, R_POS, &mat->thickness))
            return AVI_ERR_INPUT;
        if (model == AVI_MATERIAL_SHELL) {
            int bend = 0; /* "midedge" or "hinge": "none" is model membrane */
            mat->bending = AVI_BENDING_MIDEDGE;
            if (choice(c, v, base, "bending", 0, avi_scene_bending_names + 1, 2, "bending model", &bend)) return AVI_ERR_INPUT;
            if (map_get(v, "bending")) mat->bending = bend + 1;
        }
    }
    return 0;
}

#define MAX_GENERATED_VERTICES 16777216.0

static int mesh_has_ext(const char *f, const char *ext)
{
    size_t n = strlen(f), e = strlen(ext);
    if (n < e) return 0;
    for (size_t i = 0; i < e; i++)
        if (tolower((unsigned char)f[n - e + i]) != ext[i]) return 0;
    return 1;
}

/* Vertex count a generator will make (for early index checks); 0 for files. */
static double generated_vertices(const avi_scene_mesh *m)
{
    switch (m->source) {
    case AVI_MESH_ICOSPHERE: return 10.0 * pow(4.0, m->subdivisions) + 2.0;
    case AVI_MESH_DISK: return 1.0 + 3.0 * m->rings * (m->rings + 1.0);
    case AVI_MESH_RECT: return (m->nx + 1.0) * (m->ny + 1.0);
    case AVI_MESH_TET_BOX: return (m->nx + 1.0) * (m->ny + 1.0) * (m->nz + 1.0);
    case AVI_MESH_BALL: return (m->n + 1.0) * (m->n + 1.0) * (m->n + 1.0);
    default: return 0.0;
    }
}

static int load_mesh(vctx *c, const ynode *m, const char *base, const avi_scene *s, avi_scene_body *b)
{
    avi_scene_mesh *mesh = &b->mesh;
    const ynode *gen = map_get(m, "generator"), *file = map_get(m, "file");
    char path[PATH_MAX_LEN];
    b->mesh_line = m->line;
    mesh->seed = 1;
    if (gen && file) {
        join(path, base, "file");
        return vfail(c, file, path, "a mesh is either a generator or a file, not both");
    }
    if (!gen && !file) {
        join(path, base, "generator");
        return vfail(c, m, path, "required key missing (or give a file)");
    }
    const char *takes;
    if (file) {
        mesh->source = AVI_MESH_FILE;
        takes = "file jitter seed reorder";
    } else {
        int g = 0;
        if (choice(c, m, base, "generator", 1, generator_names, GENERATOR_COUNT, "generator", &g)) return AVI_ERR_INPUT;
        mesh->source = generator_source(g);
        static const char *const gen_keys[] = {"generator radius subdivisions jitter seed reorder",
                                               "generator radius rings jitter seed reorder",
                                               "generator lx ly nx ny jitter seed reorder",
                                               "generator lx ly lz nx ny nz jitter seed reorder",
                                               "generator radius n grading pole shells jitter seed reorder"};
        takes = gen_keys[g];
    }
    for (size_t k = 0; k < m->n; k++)
        if (!in_list(takes, m->keys[k]->str)) {
            join(path, base, m->keys[k]->str);
            if (!in_list(avi_scene_schema_keys("bodies.#.mesh"), m->keys[k]->str))
                return vfail(c, m->keys[k], path, "unknown key (%s takes: %s)",
                             file ? "a mesh file" : generator_name(mesh->source),
                             file ? takes : takes + 10);
            if (file) return vfail(c, m->keys[k], path, "not a parameter of a mesh file (takes: %s)", takes);
            return vfail(c, m->keys[k], path, "not a parameter of generator %s (takes: %s)",
                         generator_name(mesh->source), takes + 10);
        }
    long long x;
    switch (mesh->source) {
    case AVI_MESH_ICOSPHERE:
        if (num(c, m, base, "radius", 1, R_POS, &mesh->radius)) return AVI_ERR_INPUT;
        if (integer(c, m, base, "subdivisions", 1, 0, 8, &x)) return AVI_ERR_INPUT;
        mesh->subdivisions = (int)x;
        break;
    case AVI_MESH_DISK:
        if (num(c, m, base, "radius", 1, R_POS, &mesh->radius)) return AVI_ERR_INPUT;
        if (integer(c, m, base, "rings", 1, 1, 1024, &x)) return AVI_ERR_INPUT;
        mesh->rings = (int)x;
        break;
    case AVI_MESH_RECT:
    case AVI_MESH_TET_BOX: {
        int solid = mesh->source == AVI_MESH_TET_BOX;
        if (num(c, m, base, "lx", 1, R_POS, &mesh->lx) || num(c, m, base, "ly", 1, R_POS, &mesh->ly) ||
            (solid && num(c, m, base, "lz", 1, R_POS, &mesh->lz)))
            return AVI_ERR_INPUT;
        const char *nk[3] = {"nx", "ny", "nz"};
        int *nv[3] = {&mesh->nx, &mesh->ny, &mesh->nz};
        for (int k = 0; k < (solid ? 3 : 2); k++) {
            if (integer(c, m, base, nk[k], 1, 1, 1 << 24, &x)) return AVI_ERR_INPUT;
            *nv[k] = (int)x;
        }
        if (generated_vertices(mesh) > MAX_GENERATED_VERTICES) {
            join(path, base, nk[0]);
            return vfail(c, map_get(m, "nx"), path, "mesh too large: %.0f vertices (at most %.0f)",
                         generated_vertices(mesh), MAX_GENERATED_VERTICES);
        }
        break;
    }
    case AVI_MESH_BALL: {
        if (num(c, m, base, "radius", 1, R_POS, &mesh->radius)) return AVI_ERR_INPUT;
        if (integer(c, m, base, "n", 1, 1, 1024, &x)) return AVI_ERR_INPUT;
        mesh->n = (int)x;
        if (num(c, m, base, "grading", 0, R_NONNEG, &mesh->grading)) return AVI_ERR_INPUT;
        if (!(mesh->grading < 1.0)) {
            join(path, base, "grading");
            return vfail(c, map_get(m, "grading"), path, "must be in [0, 1), got %g", mesh->grading);
        }
        mesh->pole[0] = mesh->pole[1] = 0.0;
        mesh->pole[2] = -1.0;
        if (vec3(c, m, base, "pole", 0, mesh->pole)) return AVI_ERR_INPUT;
        /* Kept as given (the emitted text reloads to the same bits); the
         * build normalises it. */
        double len = sqrt(mesh->pole[0] * mesh->pole[0] + mesh->pole[1] * mesh->pole[1] + mesh->pole[2] * mesh->pole[2]);
        if (!(len > 0.0) || !isfinite(len) || !isnormal(len)) {
            join(path, base, "pole");
            return vfail(c, map_get(m, "pole"), path, "must be a non-zero direction of moderate length");
        }
        mesh->shells = 1;
        if (boolean(c, m, base, "shells", &mesh->shells)) return AVI_ERR_INPUT;
        if (generated_vertices(mesh) > MAX_GENERATED_VERTICES) {
            join(path, base, "n");
            return vfail(c, map_get(m, "n"), path, "mesh too large: %.0f vertices (at most %.0f)",
                         generated_vertices(mesh), MAX_GENERATED_VERTICES);
        }
        break;
    }
    case AVI_MESH_FILE: {
        join(path, base, "file");
        char *f = NULL;
        if (node_string(c, file, path, &f)) return AVI_ERR_INPUT;
        if (!*f) {
            free(f);
            return vfail(c, file, path, "empty file name");
        }
        if (!mesh_has_ext(f, ".msh") && !mesh_has_ext(f, ".obj")) {
            int rc = vfail(c, file, path, "'%.100s': unsupported mesh format (expected .msh or .obj)", f);
            free(f);
            return rc;
        }
        char *joined = f;
        if (f[0] != '/' && s->dir) {
            size_t n = strlen(s->dir) + strlen(f) + 2;
            joined = malloc(n);
            if (!joined) {
                free(f);
                return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
            }
            snprintf(joined, n, "%s/%s", s->dir, f);
            free(f);
        }
        struct stat st;
        const char *why = stat(joined, &st) != 0 ? strerror(errno) : !S_ISREG(st.st_mode) ? "not a regular file" : NULL;
        if (why) {
            int rc = vfail(c, file, path, "cannot open mesh file '%.200s': %s", joined, why);
            free(joined);
            return rc;
        }
        char *real = realpath(joined, NULL);
        if (real) {
            free(joined);
            joined = real;
        }
        mesh->file = joined;
        break;
    }
    default:
        break;
    }
    if (num(c, m, base, "jitter", 0, R_NONNEG, &mesh->jitter)) return AVI_ERR_INPUT;
    if (integer(c, m, base, "seed", 0, 0, LLONG_MAX, &x)) return AVI_ERR_INPUT;
    if (map_get(m, "seed")) mesh->seed = (uint64_t)x;
    if (boolean(c, m, base, "reorder", &mesh->reorder)) return AVI_ERR_INPUT;
    return 0;
}

/* A particle's optional constraint: {sphere: {center, radius}} or
 * {circle: {center, radius, normal}}. */
static int load_particle_constraint(vctx *c, const ynode *p, const char *path, avi_scene_particle *q)
{
    const ynode *m;
    char base[PATH_MAX_LEN], sub[PATH_MAX_LEN];
    if (mapping(c, p, path, "constraint", 0, &m)) return AVI_ERR_INPUT;
    if (!m) return 0;
    join(base, path, "constraint");
    if (check_keys(c, m, base, avi_scene_schema_keys("bodies.#.particles.#.constraint"))) return AVI_ERR_INPUT;
    if (q->pinned) return vfail(c, m, base, "a pinned particle takes no constraint");
    if (m->n != 1) return vfail(c, m, base, "expected one of {sphere: {...}} or {circle: {...}}");
    int circle = map_get(m, "circle") != NULL;
    const ynode *s;
    if (mapping(c, m, base, circle ? "circle" : "sphere", 1, &s)) return AVI_ERR_INPUT;
    join(sub, base, circle ? "circle" : "sphere");
    if (check_keys(c, s, sub,
                   avi_scene_schema_keys(circle ? "bodies.#.particles.#.constraint.circle"
                                                : "bodies.#.particles.#.constraint.sphere")))
        return AVI_ERR_INPUT;
    avi_scene_surface *f = &q->constraint;
    f->kind = circle ? AVI_SURFACE_CIRCLE : AVI_SURFACE_SPHERE;
    if (vec3(c, s, sub, "center", 1, f->center) || num(c, s, sub, "radius", 1, R_POS, &f->radius)) return AVI_ERR_INPUT;
    if (circle) {
        if (vec3(c, s, sub, "normal", 1, f->normal)) return AVI_ERR_INPUT;
        if (!(f->normal[0] != 0.0 || f->normal[1] != 0.0 || f->normal[2] != 0.0)) {
            char np[PATH_MAX_LEN];
            join(np, sub, "normal");
            return vfail(c, map_get(s, "normal"), np, "must not be zero");
        }
    }
    return 0;
}

/* A particle body's optional rigid links: [{a, b, length}]. */
static int load_links(vctx *c, const ynode *body, const char *base, avi_scene_body *b)
{
    char pbase[PATH_MAX_LEN], path[PATH_MAX_LEN], kp[PATH_MAX_LEN];
    const ynode *ls = map_get(body, "links");
    if (!ls) return 0;
    join(pbase, base, "links");
    if (ls->kind != YN_SEQ) return expected(c, ls, pbase, "a sequence of links");
    if (ls->n == 0) return 0;
    b->links = calloc(ls->n, sizeof *b->links);
    if (!b->links) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    b->link_count = ls->n;
    for (size_t i = 0; i < ls->n; i++) {
        const ynode *p = ls->items[i];
        avi_scene_link *q = &b->links[i];
        join_index(path, pbase, i);
        if (p->kind != YN_MAP) return expected(c, p, path, "a mapping {a, b, length}");
        if (check_keys(c, p, path, avi_scene_schema_keys("bodies.#.links.#"))) return AVI_ERR_INPUT;
        long long ab[2];
        const char *ends[2] = {"a", "b"};
        for (int k = 0; k < 2; k++) {
            if (integer(c, p, path, ends[k], 1, 0, UINT32_MAX, &ab[k])) return AVI_ERR_INPUT;
            if (ab[k] >= (long long)b->particle_count) {
                join(kp, path, ends[k]);
                return vfail(c, map_get(p, ends[k]), kp, "particle %lld out of range (the body has %zu particles)",
                             ab[k], b->particle_count);
            }
        }
        join(kp, path, "b");
        if (ab[0] == ab[1]) return vfail(c, map_get(p, "b"), kp, "a link joins two different particles (a = b = %lld)", ab[0]);
        if (b->particles[ab[0]].pinned && b->particles[ab[1]].pinned)
            return vfail(c, p, path, "both ends of a link are pinned");
        q->a = (uint32_t)ab[0];
        q->b = (uint32_t)ab[1];
        q->length = -1.0;
        if (num(c, p, path, "length", 0, R_POS, &q->length)) return AVI_ERR_INPUT;
    }
    return 0;
}

static int load_particles(vctx *c, const ynode *body, const char *base, avi_scene_body *b, double default_k)
{
    char pbase[PATH_MAX_LEN], path[PATH_MAX_LEN];
    const ynode *ps = map_get(body, "particles");
    join(pbase, base, "particles");
    if (ps->kind != YN_SEQ || ps->n == 0) return expected(c, ps, pbase, "a non-empty sequence of particles");
    if (ps->n > UINT32_MAX) return vfail(c, ps, pbase, "too many particles");
    b->particles = calloc(ps->n, sizeof *b->particles);
    if (!b->particles) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    b->particle_count = ps->n;
    for (size_t i = 0; i < ps->n; i++) {
        const ynode *p = ps->items[i];
        avi_scene_particle *q = &b->particles[i];
        join_index(path, pbase, i);
        if (p->kind != YN_MAP) return expected(c, p, path, "a mapping {x, v, mass, pinned}");
        if (check_keys(c, p, path, avi_scene_schema_keys("bodies.#.particles.#"))) return AVI_ERR_INPUT;
        if (vec3(c, p, path, "x", 1, q->x) || vec3(c, p, path, "v", 0, q->v) || boolean(c, p, path, "pinned", &q->pinned) ||
            num(c, p, path, "mass", !q->pinned, R_POS, &q->mass))
            return AVI_ERR_INPUT;
        if (load_particle_constraint(c, p, path, q)) return AVI_ERR_INPUT;
    }
    if (load_links(c, body, base, b)) return AVI_ERR_INPUT;
    const ynode *ss = map_get(body, "springs");
    if (!ss) return 0;
    join(pbase, base, "springs");
    if (ss->kind != YN_SEQ) return expected(c, ss, pbase, "a sequence of springs");
    if (ss->n == 0) return 0;
    b->springs = calloc(ss->n, sizeof *b->springs);
    if (!b->springs) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    b->spring_count = ss->n;
    for (size_t i = 0; i < ss->n; i++) {
        const ynode *p = ss->items[i];
        avi_scene_spring *q = &b->springs[i];
        join_index(path, pbase, i);
        if (p->kind != YN_MAP) return expected(c, p, path, "a mapping {a, b, stiffness, rest}");
        if (check_keys(c, p, path, avi_scene_schema_keys("bodies.#.springs.#"))) return AVI_ERR_INPUT;
        long long a, bb;
        if (integer(c, p, path, "a", 1, 0, UINT32_MAX, &a) || integer(c, p, path, "b", 1, 0, UINT32_MAX, &bb))
            return AVI_ERR_INPUT;
        const char *ends[2] = {"a", "b"};
        long long ab[2] = {a, bb};
        for (int k = 0; k < 2; k++)
            if (ab[k] >= (long long)b->particle_count) {
                char kp[PATH_MAX_LEN];
                join(kp, path, ends[k]);
                return vfail(c, map_get(p, ends[k]), kp, "particle %lld out of range (the body has %zu particles)", ab[k],
                             b->particle_count);
            }
        if (a == bb) {
            char kp[PATH_MAX_LEN];
            join(kp, path, "b");
            return vfail(c, map_get(p, "b"), kp, "a spring joins two different particles (a = b = %lld)", a);
        }
        q->a = (uint32_t)a;
        q->b = (uint32_t)bb;
        q->stiffness = default_k;
        q->rest = -1.0;
        if (num(c, p, path, "stiffness", default_k <= 0.0, R_POS, &q->stiffness)) return AVI_ERR_INPUT;
        if (num(c, p, path, "rest", 0, R_NONNEG, &q->rest)) return AVI_ERR_INPUT;
    }
    return 0;
}

static int load_pinned(vctx *c, const ynode *body, const char *base, avi_scene_body *b)
{
    const ynode *m;
    char pbase[PATH_MAX_LEN], path[PATH_MAX_LEN];
    join(pbase, base, "pinned");
    if (mapping(c, body, base, "pinned", 0, &m)) return AVI_ERR_INPUT;
    if (!m) return 0;
    b->pinned_line = m->line;
    if (check_keys(c, m, pbase, avi_scene_schema_keys("bodies.#.pinned"))) return AVI_ERR_INPUT;
    const ynode *box = map_get(m, "box"), *idx = map_get(m, "indices"), *bnd = map_get(m, "boundary");
    if ((box != NULL) + (idx != NULL) + (bnd != NULL) > 1) {
        join(path, pbase, idx && box ? "indices" : "boundary");
        return vfail(c, idx && box ? idx : bnd, path, "pin by box, by indices or the boundary, only one");
    }
    if (!box && !idx && !bnd)
        return vfail(c, m, pbase,
                     "expected {box: [[min], [max]]}, {indices: [...]} or {boundary: clamped | simply-supported}");
    if (bnd) {
        static const char *const support[] = {"simply-supported", "clamped"};
        join(path, pbase, "boundary");
        /* `true` once read as a clamp and made a simple support: no silent meaning survives. */
        if (bnd->kind == YN_SCALAR && (strcmp(bnd->str, "true") == 0 || strcmp(bnd->str, "false") == 0))
            return vfail(c, bnd, path, "`boundary: %s` is no longer accepted: write boundary: clamped (positions and "
                         "slope held) or boundary: simply-supported (positions held, rotation free)", bnd->str);
        if (choice(c, m, pbase, "boundary", 1, support, 2, "boundary support", &b->pin_clamped)) return AVI_ERR_INPUT;
        if (b->mesh.source == AVI_MESH_NONE) return vfail(c, bnd, path, "a particle body has no boundary");
        b->pin = AVI_PIN_BOUNDARY;
        return 0;
    }
    if (box) {
        join(path, pbase, "box");
        if (box->kind != YN_SEQ || box->n != 2) return expected(c, box, path, "[[xmin, ymin, zmin], [xmax, ymax, zmax]]");
        char p[PATH_MAX_LEN];
        for (int k = 0; k < 2; k++) {
            join_index(p, path, (size_t)k);
            if (node_vec3(c, box->items[k], p, b->pin_box[k])) return AVI_ERR_INPUT;
        }
        for (int k = 0; k < 3; k++)
            if (b->pin_box[0][k] > b->pin_box[1][k])
                return vfail(c, box, path, "min %g > max %g along axis %d", b->pin_box[0][k], b->pin_box[1][k], k);
        b->pin = AVI_PIN_BOX;
        return 0;
    }
    join(path, pbase, "indices");
    if (idx->kind != YN_SEQ || idx->n == 0) return expected(c, idx, path, "a non-empty sequence of vertex indices");
    b->pin_indices = calloc(idx->n, sizeof *b->pin_indices);
    if (!b->pin_indices) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    b->pin = AVI_PIN_INDICES;
    b->pin_count = idx->n;
    /* The vertex count is known now for particles and generators; files are
     * checked when building. */
    double nv = b->mesh.source == AVI_MESH_NONE ? (double)b->particle_count : generated_vertices(&b->mesh);
    for (size_t i = 0; i < idx->n; i++) {
        char p[PATH_MAX_LEN];
        long long x;
        join_index(p, path, i);
        if (node_int(c, idx->items[i], p, 0, UINT32_MAX, &x)) return AVI_ERR_INPUT;
        if (nv > 0.0 && (double)x >= nv)
            return vfail(c, idx->items[i], p, "vertex %lld out of range (the body has %.0f vertices)", x, nv);
        for (size_t j = 0; j < i; j++)
            if (b->pin_indices[j] == (uint32_t)x) return vfail(c, idx->items[i], p, "vertex %lld is listed twice", x);
        b->pin_indices[i] = (uint32_t)x;
    }
    return 0;
}

static int load_body(vctx *c, const ynode *body, size_t i, avi_scene *s)
{
    avi_scene_body *b = &s->bodies[i];
    char base[PATH_MAX_LEN], path[PATH_MAX_LEN];
    join_index(base, "bodies", i);
    b->material = -1;
    b->scale = 1.0;
    if (body->kind != YN_MAP) return expected(c, body, base, "a mapping (a body)");
    b->line = body->line;
    if (check_keys(c, body, base, avi_scene_schema_keys("bodies.#"))) return AVI_ERR_INPUT;
    if (string(c, body, base, "name", 0, &b->name)) return AVI_ERR_INPUT;
    if (b->name) {
        join(path, base, "name");
        if (!valid_body_name(b->name))
            return vfail(c, map_get(body, "name"), path,
                         "'%.60s' is not a body name (letters, digits, _ and -, not starting with a digit)", b->name);
    } else {
        char def[32];
        snprintf(def, sizeof def, "body%zu", i);
        if (!(b->name = strdup(def))) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    }
    for (size_t j = 0; j < i; j++)
        if (strcmp(s->bodies[j].name, b->name) == 0) {
            join(path, base, "name");
            const ynode *nn = map_get(body, "name");
            return vfail(c, nn ? nn : body, path, "body name '%s' is used twice (also bodies.%zu)", b->name, j);
        }

    const ynode *mesh = map_get(body, "mesh"), *parts = map_get(body, "particles"), *springs = map_get(body, "springs");
    const ynode *links = map_get(body, "links");
    if (mesh && parts) {
        join(path, base, "particles");
        return vfail(c, parts, path, "a body has a mesh or particles, not both");
    }
    if (!mesh && !parts) {
        join(path, base, "mesh");
        return vfail(c, body, path, "required key missing (or give particles)");
    }
    if (springs && !parts) {
        join(path, base, "springs");
        return vfail(c, springs, path, "springs belong to particle bodies (a mesh body's springs come from a spring material)");
    }
    if (links && !parts) {
        join(path, base, "links");
        return vfail(c, links, path, "links belong to particle bodies");
    }

    const ynode *mat = map_get(body, "material");
    join(path, base, "material");
    if (mat) {
        char *mname = NULL;
        if (node_string(c, mat, path, &mname)) return AVI_ERR_INPUT;
        for (size_t k = 0; k < s->material_count; k++)
            if (strcmp(s->materials[k].name, mname) == 0) b->material = (int)k;
        if (b->material < 0) {
            int rc = vfail(c, mat, path, "unknown material '%.60s'", mname);
            free(mname);
            return rc;
        }
        free(mname);
    } else if (mesh) {
        return missing(c, body, path);
    }
    const avi_scene_material *material = b->material >= 0 ? &s->materials[b->material] : NULL;

    if (mesh) {
        join(path, base, "mesh");
        if (mesh->kind != YN_MAP) return expected(c, mesh, path, "a mapping {generator: ...} or {file: ...}");
        if (load_mesh(c, mesh, path, s, b)) return AVI_ERR_INPUT;
        /* Element kind against material, where the generator tells. */
        join(path, base, "material");
        int solid_mesh = b->mesh.source == AVI_MESH_TET_BOX || b->mesh.source == AVI_MESH_BALL;
        int surface_mesh = b->mesh.source != AVI_MESH_FILE && !solid_mesh;
        if (solid_mesh && (material->model == AVI_MATERIAL_SHELL || material->model == AVI_MATERIAL_MEMBRANE))
            return vfail(c, mat, path, "material '%s' (%s) needs a triangle mesh; %s makes tetrahedra",
                         material->name, avi_scene_material_names[material->model], generator_name(b->mesh.source));
        if (surface_mesh && material->model == AVI_MATERIAL_NEO_HOOKEAN)
            return vfail(c, mat, path, "material '%s' (neo-hookean) needs tetrahedra; %s makes triangles",
                         material->name, generator_name(b->mesh.source));
    } else {
        if (material && material->model != AVI_MATERIAL_SPRING)
            return vfail(c, mat, path, "particle bodies take a spring material, not %s ('%s')",
                         avi_scene_material_names[material->model], material->name);
        if (load_particles(c, body, base, b, material ? material->stiffness : 0.0)) return AVI_ERR_INPUT;
    }

    if (vec3(c, body, base, "translate", 0, b->translate) || vec3(c, body, base, "velocity", 0, b->velocity) ||
        vec3(c, body, base, "angular_velocity", 0, b->angular_velocity))
        return AVI_ERR_INPUT;
    const ynode *init;
    if (mapping(c, body, base, "initial", 0, &init)) return AVI_ERR_INPUT;
    if (init) {
        join(path, base, "initial");
        if (check_keys(c, init, path, avi_scene_schema_keys("bodies.#.initial"))) return AVI_ERR_INPUT;
        if (num(c, init, path, "scale", 0, R_POS, &b->scale)) return AVI_ERR_INPUT;
    }
    if (load_pinned(c, body, base, b)) return AVI_ERR_INPUT;
    const ynode *ts = map_get(body, "time_step");
    if (ts) {
        join(path, base, "time_step");
        if (ts->kind == YN_MAP) {
            if (check_keys(c, ts, path, avi_scene_schema_keys("bodies.#.time_step"))) return AVI_ERR_INPUT;
            if (num(c, ts, path, "fixed", 1, R_POS, &b->time_step)) return AVI_ERR_INPUT;
        } else if (ts->kind == YN_SCALAR) {
            if (node_number(c, ts, path, R_POS, &b->time_step)) return AVI_ERR_INPUT;
        } else {
            return expected(c, ts, path, "a time step or {fixed: dt}");
        }
    }
    return 0;
}

static int load_contact(vctx *c, const ynode *root, avi_scene *s)
{
    const ynode *m;
    avi_scene_contact *k = &s->contact;
    if (mapping(c, root, "", "contact", 0, &m)) return AVI_ERR_INPUT;
    if (!m) return 0;
    if (check_keys(c, m, "contact", avi_scene_schema_keys("contact"))) return AVI_ERR_INPUT;
    k->enabled = 1;
    if (boolean(c, m, "contact", "enabled", &k->enabled)) return AVI_ERR_INPUT;
    if (num(c, m, "contact", "thickness", k->enabled, R_POS, &k->thickness)) return AVI_ERR_INPUT;
    k->inner_thickness = k->thickness / 5.0;
    const ynode *v = map_get(m, "inner_thickness");
    if (v) {
        if (node_number(c, v, "contact.inner_thickness", R_POS, &k->inner_thickness)) return AVI_ERR_INPUT;
        if (!(k->inner_thickness < k->thickness))
            return vfail(c, v, "contact.inner_thickness", "must be < contact.thickness (%g), got %g", k->thickness,
                         k->inner_thickness);
    }
    v = map_get(m, "stiffness");
    if (v && !(v->kind == YN_SCALAR && v->plain && strcmp(v->str, "auto") == 0)) {
        double d;
        if (parse_number(v, &d)) return expected(c, v, "contact.stiffness", "auto or a number");
        if (check_range(c, v, "contact.stiffness", d, R_POS)) return AVI_ERR_INPUT;
        k->stiffness = d;
    }
    v = map_get(m, "layers");
    if (v && !(v->kind == YN_SCALAR && v->plain && strcmp(v->str, "auto") == 0)) {
        long long x;
        if (v->kind != YN_SCALAR || parse_number(v, &(double){0}))
            return expected(c, v, "contact.layers", "auto or an integer");
        if (node_int(c, v, "contact.layers", 1, 64, &x)) return AVI_ERR_INPUT;
        k->layers = (int)x;
    }
    return num(c, m, "contact", "friction", 0, R_NONNEG, &k->friction) ? AVI_ERR_INPUT : 0;
}

static int load_output(vctx *c, const ynode *root, avi_scene *s)
{
    const ynode *m;
    avi_scene_output *o = &s->output;
    o->energy_every = s->end_time / 1000.0;
    o->frame_every = s->end_time / 100.0;
    o->checkpoint_every = 0.0;
    o->max_energy_growth = 100.0;
    o->max_bytes = AVI_SCENE_MAX_BYTES;
    o->max_checkpoints = AVI_SCENE_MAX_CHECKPOINTS;
    o->synchronized_every = 0;
    if (mapping(c, root, "", "output", 0, &m)) return AVI_ERR_INPUT;
    if (m) {
        if (check_keys(c, m, "output", avi_scene_schema_keys("output"))) return AVI_ERR_INPUT;
        if (string(c, m, "output", "file", 0, &o->file)) return AVI_ERR_INPUT;
        if (o->file && !o->file[0]) return vfail(c, map_get(m, "file"), "output.file", "empty file name");
        if (num(c, m, "output", "max_energy_growth", 0, R_NONNEG, &o->max_energy_growth) ||
            num(c, m, "output", "max_bytes", 0, R_POS, &o->max_bytes) ||
            num(c, m, "output", "max_checkpoints", 0, R_POS, &o->max_checkpoints))
            return AVI_ERR_INPUT;
        const char *keys[3] = {"energy_every", "frame_every", "checkpoint_every"};
        double *vals[3] = {&o->energy_every, &o->frame_every, &o->checkpoint_every};
        for (int i = 0; i < 3; i++) {
            char path[PATH_MAX_LEN];
            join(path, "output", keys[i]);
            if (num(c, m, "output", keys[i], 0, i == 2 ? R_NONNEG : R_POS, vals[i])) return AVI_ERR_INPUT;
            /* A typo like 1e-16 would ask for more rows than any disk holds
             * (checkpoints: output.max_checkpoints below). */
            if (i < 2 && s->end_time / *vals[i] > 1e9)
                return vfail(c, map_get(m, keys[i]), path, "%g gives more than 1e9 outputs over time.end %g",
                             *vals[i], s->end_time);
        }
        const ynode *se = map_get(m, "synchronized_every");
        if (se && !(se->kind == YN_SCALAR && se->plain && strcmp(se->str, "auto") == 0)) {
            long long x;
            if (se->kind != YN_SCALAR || parse_number(se, &(double){0}))
                return expected(c, se, "output.synchronized_every", "auto or an integer");
            if (node_int(c, se, "output.synchronized_every", 1, 1000000000, &x)) return AVI_ERR_INPUT;
            o->synchronized_every = x;
        }
        /* Each checkpoint is the whole state, written and synced to disk. */
        double n = o->checkpoint_every > 0.0 ? floor(s->end_time / o->checkpoint_every) + 1.0 : 0.0;
        if (n > o->max_checkpoints)
            return vfail(c, map_get(m, "checkpoint_every"), "output.checkpoint_every",
                         "%g s gives about %.3g checkpoints over time.end = %g s, more than output.max_checkpoints "
                         "= %g; raise output.checkpoint_every (or output.max_checkpoints)",
                         o->checkpoint_every, n, s->end_time, o->max_checkpoints);
    }
    if (!o->file) {
        size_t n = strlen(s->name) + 4;
        if (!(o->file = malloc(n))) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
        snprintf(o->file, n, "%s.h5", s->name);
    }
    return 0;
}

/* parallel.threads: a count, or auto (stored as -1); not set: 0;
 * never part of the results, which are the same bits for every count. */
_Static_assert(AVI_POOL_MAX_THREADS == 1024, "include/avi/scene.h documents parallel.threads as 1..1024");

static int load_parallel(vctx *c, const ynode *root, avi_scene *s)
{
    const ynode *m;
    if (mapping(c, root, "", "parallel", 0, &m)) return AVI_ERR_INPUT;
    if (!m) return 0;
    if (check_keys(c, m, "parallel", avi_scene_schema_keys("parallel"))) return AVI_ERR_INPUT;
    const ynode *v = map_get(m, "threads");
    if (!v) return 0;
    if (v->kind == YN_SCALAR && v->plain && strcmp(v->str, "auto") == 0) {
        s->threads = -1;
        return 0;
    }
    long long x;
    if (v->kind != YN_SCALAR || parse_number(v, &(double){0}))
        return expected(c, v, "parallel.threads", "auto or an integer");
    if (node_int(c, v, "parallel.threads", 1, AVI_POOL_MAX_THREADS, &x)) return AVI_ERR_INPUT;
    s->threads = (int)x;
    return 0;
}

static int validate(vctx *c, const ynode *root, avi_scene *s)
{
    if (check_keys(c, root, "", avi_scene_schema_keys(""))) return AVI_ERR_INPUT;
    if (string(c, root, "", "name", 0, &s->name)) return AVI_ERR_INPUT;
    if (s->name && !valid_scene_name(s->name))
        return vfail(c, map_get(root, "name"), "name", "'%.60s' is not a scene name (letters, digits, '.', '_', '-')",
                     s->name);
    if (!s->name && !(s->name = default_name(c->source)))
        return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    if (string(c, root, "", "description", 0, &s->description)) return AVI_ERR_INPUT;
    if (!s->description && !(s->description = strdup("")))
        return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);

    const ynode *t;
    if (mapping(c, root, "", "time", 1, &t)) return AVI_ERR_INPUT;
    if (check_keys(c, t, "time", avi_scene_schema_keys("time"))) return AVI_ERR_INPUT;
    if (num(c, t, "time", "end", 1, R_POS, &s->end_time)) return AVI_ERR_INPUT;

    if (load_integrator(c, root, s) || load_time_step(c, root, s) || load_materials(c, root, s)) return AVI_ERR_INPUT;

    const ynode *bodies = map_get(root, "bodies");
    if (!bodies) return missing(c, root, "bodies");
    if (bodies->kind != YN_SEQ || bodies->n == 0) return expected(c, bodies, "bodies", "a non-empty sequence of bodies");
    s->bodies = calloc(bodies->n, sizeof *s->bodies);
    if (!s->bodies) return avi_error_set(c->err, AVI_ERR_RUN, "%s: out of memory", c->source);
    for (size_t i = 0; i < bodies->n; i++) {
        s->body_count = i + 1;
        if (load_body(c, bodies->items[i], i, s)) return c->err ? c->err->status : AVI_ERR_INPUT;
    }

    if (load_contact(c, root, s) || vec3(c, root, "", "gravity", 0, s->gravity) ||
        num(c, root, "", "damping", 0, R_NONNEG, &s->damping) || load_output(c, root, s) ||
        load_parallel(c, root, s))
        return AVI_ERR_INPUT;
    return 0;
}

/* ------------------------------------------------------------- loading -- */

void avi_scene_free(avi_scene *s)
{
    if (!s) return;
    free(s->source);
    free(s->dir);
    free(s->text);
    free(s->file);
    free(s->name);
    free(s->description);
    for (size_t i = 0; i < s->material_count; i++) free(s->materials[i].name);
    free(s->materials);
    for (size_t i = 0; i < s->body_count; i++) {
        avi_scene_body *b = &s->bodies[i];
        free(b->name);
        free(b->mesh.file);
        free(b->particles);
        free(b->springs);
        free(b->links);
        free(b->pin_indices);
    }
    free(s->bodies);
    free(s->output.file);
    memset(s, 0, sizeof *s);
}

avi_scene *avi_scene_create(void) { return calloc(1, sizeof(avi_scene)); }

void avi_scene_destroy(avi_scene *s)
{
    avi_scene_free(s);
    free(s);
}

/* The text as given, then a comment naming the overrides applied to it. */
static char *annotated_text(const char *text, size_t len, const char *const *ov, size_t n_ov)
{
    size_t need = len + 2;
    if (n_ov) need += 64;
    for (size_t i = 0; i < n_ov; i++) need += strlen(ov[i]) + 12;
    char *out = malloc(need);
    if (!out) return NULL;
    memcpy(out, text, len);
    size_t k = len;
    if (n_ov) {
        if (k > 0 && out[k - 1] != '\n') out[k++] = '\n';
        k += (size_t)sprintf(out + k, "# --set overrides applied:\n");
        for (size_t i = 0; i < n_ov; i++) {
            k += (size_t)sprintf(out + k, "#   --set ");
            for (const char *p = ov[i]; *p; p++) out[k++] = (*p == '\n' || *p == '\r') ? ' ' : *p;
            out[k++] = '\n';
        }
    }
    out[k] = '\0';
    return out;
}

int avi_scene_load_string(const char *text, size_t len, const char *source, const char *dir,
                          const char *const *overrides, size_t n_overrides, avi_scene *s, avi_error *err)
{
    memset(s, 0, sizeof *s);
    if (err) {
        err->status = AVI_OK;
        err->message[0] = '\0';
    }
    if (!source) source = "<string>";
    s->source = strdup(source);
    s->text = annotated_text(text, len, overrides, n_overrides);
    if (dir) s->dir = strdup(dir);
    if (!s->source || !s->text || (dir && !s->dir)) {
        avi_scene_free(s);
        return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", source);
    }
    vctx c = {s->source, err};
    ynode *root = NULL;
    int rc = yn_parse(text, len, source, &root, err);
    if (rc == AVI_OK && !root) rc = avi_error_set(err, AVI_ERR_INPUT, "%s:1: the scene is empty", source);
    if (rc == AVI_OK && root->kind != YN_MAP) {
        char buf[80];
        rc = vfail(&c, root, "(top level)", "expected a mapping of scene keys, got %s", describe(root, buf, sizeof buf));
    }
    if (rc == AVI_OK) rc = check_duplicates(&c, root, "");
    for (size_t i = 0; rc == AVI_OK && i < n_overrides; i++) rc = avi_scene_apply_set(root, overrides[i], source, err);
    if (rc == AVI_OK && validate(&c, root, s) != 0) rc = err && err->status != AVI_OK ? (int)err->status : AVI_ERR_INPUT;
    yn_free(root);
    if (rc != AVI_OK) {
        if (err && err->status == AVI_OK) avi_error_set(err, (avi_status)rc, "%s: invalid scene", source);
        avi_scene_free(s);
    }
    return rc;
}

#define MAX_SCENE_BYTES (64u << 20)

int avi_scene_load_file(const char *path, const char *const *overrides, size_t n_overrides, avi_scene *s,
                        avi_error *err)
{
    memset(s, 0, sizeof *s);
    const char *why = NULL;
    FILE *f = avi_input_fopen(path, &why);
    if (!f) return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot open scene: %s", path, why);
    char *buf = NULL;
    size_t len = 0, cap = 0;
    for (;;) {
        if (len == cap) {
            cap = cap ? 2 * cap : 4096;
            char *nb = cap <= MAX_SCENE_BYTES + 4096 ? realloc(buf, cap) : NULL;
            if (!nb) {
                free(buf);
                fclose(f);
                return avi_error_set(err, AVI_ERR_INPUT, "%s: scene file too large (or out of memory)", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + len, 1, cap - len, f);
        len += got;
        if (got == 0) break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return avi_error_set(err, AVI_ERR_INPUT, "%s: cannot read scene", path);
    }
    const char *slash = strrchr(path, '/');
    char *dir = slash ? yn_dup_n(path, slash == path ? 1 : (size_t)(slash - path)) : strdup(".");
    if (!dir) {
        free(buf);
        return avi_error_set(err, AVI_ERR_RUN, "%s: out of memory", path);
    }
    int rc = avi_scene_load_string(buf, len, path, dir, overrides, n_overrides, s, err);
    free(dir);
    /* Recorded in checkpoints: which file, and the bytes read from it. */
    if (rc == AVI_OK && (!(s->file = realpath(path, NULL)) || avi_sha256(buf, len, s->file_sha256))) {
        avi_scene_free(s);
        rc = avi_error_set(err, AVI_ERR_RUN, "%s: cannot resolve or hash the scene file", path);
    }
    free(buf);
    return rc;
}

int avi_scene_load_builtin(const char *name, const char *const *overrides, size_t n_overrides, avi_scene *s,
                           avi_error *err)
{
    memset(s, 0, sizeof *s);
    int i = avi_scene_builtin_find(name);
    if (i < 0) return avi_error_set(err, AVI_ERR_INPUT, "no built-in scene '%s' (see `avi scenes`)", name);
    const char *text = avi_scene_builtin_text((size_t)i);
    char source[128];
    snprintf(source, sizeof source, "builtin:%s", name);
    return avi_scene_load_string(text, strlen(text), source, NULL, overrides, n_overrides, s, err);
}

int avi_scene_load(const char *arg, const char *const *overrides, size_t n_overrides, avi_scene *s, avi_error *err)
{
    size_t n = strlen(arg);
    int looks_like_file = strchr(arg, '/') || (n >= 5 && strcmp(arg + n - 5, ".yaml") == 0) ||
                          (n >= 4 && strcmp(arg + n - 4, ".yml") == 0);
    if (!looks_like_file && avi_scene_builtin_find(arg) >= 0)
        return avi_scene_load_builtin(arg, overrides, n_overrides, s, err);
    if (!looks_like_file) {
        struct stat st;
        if (stat(arg, &st) != 0) {
            memset(s, 0, sizeof *s);
            return avi_error_set(err, AVI_ERR_INPUT, "%s: no such built-in scene or file (see `avi scenes`)", arg);
        }
    }
    return avi_scene_load_file(arg, overrides, n_overrides, s, err);
}
