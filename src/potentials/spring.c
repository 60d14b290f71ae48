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
