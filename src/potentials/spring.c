#include "potentials/spring.h"

double avi_spring_energy(const avi_spring *s, const double x[2][3])
{
    double d[3];
    v3_sub(d, x[1], x[0]);
    double e = s->rest == 0.0 ? v3_norm(d) : v3_norm(d) - s->rest;
    return 0.5 * s->k * e * e;
}

void avi_spring_hessian(const avi_spring *s, const double x[2][3], double H[6][6])
{
    double d[3];
    v3_sub(d, x[1], x[0]);
    double l = v3_norm(d);
    /* d2V/dx1^2 = k [(1 - L/l) I + (L/l) n n^T]. */
    double K[3][3];
    double a = s->k, b = 0.0;
    if (s->rest != 0.0 && l > 0.0) {
        a = s->k * (1.0 - s->rest / l);
        b = s->k * s->rest / (l * l * l);
    }
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) K[i][j] = (i == j ? a : 0.0) + b * d[i] * d[j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            H[i][j] = K[i][j];
            H[3 + i][3 + j] = K[i][j];
            H[i][3 + j] = -K[i][j];
            H[3 + i][j] = -K[i][j];
        }
}

/* The damping term's rest state: A's length as rest length. */
static int spring_rest_from(const void *rec, const double A[][3], void *out)
{
    avi_spring *s = out;
    *s = *(const avi_spring *)rec;
    double d[3];
    v3_sub(d, A[1], A[0]);
    s->rest = v3_norm(d);
    return 0;
}

AVI_KIND_WRAP_FUNCS(spring, avi_spring, avi_spring_energy, avi_spring_gradient)
AVI_KIND_WRAP_HESSIAN(spring, avi_spring, 2, avi_spring_hessian)

const avi_kind_desc avi_kind_spring = {
    .name = "spring",
    .step_powers = {0, -1, 0, 1},
    .record_size = sizeof(avi_spring),
    .slots = 2,
    .vertices = 2,
    .flags = AVI_KIND_ELASTIC | AVI_KIND_DAMPED,
    .energy = spring_energy_any,
    .gradient = spring_gradient_any,
    .hessian = spring_hessian_any,
    .rest_from = spring_rest_from,
};
