/* The digest of a row of observables (output/h5_row_digest.h). */
#include "output/h5_row_digest.h"

#include <string.h>

static unsigned char *put_le64(unsigned char *p, uint64_t u)
{
    for (int i = 0; i < 8; i++) p[i] = (unsigned char)(u >> (8 * i));
    return p + 8;
}

static unsigned char *put_f64(unsigned char *p, double d)
{
    uint64_t u;
    memcpy(&u, &d, sizeof u);
    return put_le64(p, u);
}

int avi_h5_row_digest(int64_t step, const avi_observation *o, unsigned char digest[AVI_SHA256_LEN])
{
    unsigned char buf[8 * (11 + 6 + 2 + AVI_KIND_COUNT)], *p = buf;
    p = put_le64(p, (uint64_t)step);
    const double scalars[] = {o->time,     o->kinetic,       o->elastic,         o->contact,
                              o->external, o->total,         o->min_contact_distance, o->friction_work,
                              o->kinetic_midstep, o->total_midstep};
    for (size_t k = 0; k < sizeof scalars / sizeof *scalars; k++) p = put_f64(p, scalars[k]);
    for (int c = 0; c < 3; c++) p = put_f64(p, o->linear_momentum[c]);
    for (int c = 0; c < 3; c++) p = put_f64(p, o->angular_momentum[c]);
    p = put_le64(p, o->events_total);
    p = put_le64(p, o->active_contact_potentials);
    for (int k = 0; k < AVI_KIND_COUNT; k++) p = put_le64(p, o->events[k]);
    return avi_sha256(buf, (size_t)(p - buf), digest);
}
