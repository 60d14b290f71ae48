/* Coulomb friction at one penalty-layer event (src/contact/contact_friction.c). */
#ifndef AVI_CONTACT_FRICTION_H
#define AVI_CONTACT_FRICTION_H

#include <stdint.h>

#include "core/model_internal.h"

/* Applies, after the event's normal kick, a tangential impulse that slows
 * the relative velocity of the stencil's closest points (vertices v, type
 * AVI_STENCIL_VF or AVI_STENCIL_EE, distance gradient gd) along the contact
 * plane: its size is the impulse that stops that velocity in the stencil's
 * effective mass, clamped to mu * jn (jn >= 0: the event's normal impulse),
 * and it goes to each vertex with its closest-point weight and inverse mass
 * (pinned vertices: none), so that linear momentum is unchanged. Returns
 * the energy it removed from the observable's kinetic energy: owed[a] is
 * what vertex v[a]'s synchronized velocity adds to its stored one
 * (avi_engine_vertex_owed; NULL: none, then the return is >= 0). */
double avi_contact_friction(avi_vertex *V, const uint32_t v[4], int type, const double gd[4][3], double jn,
                            double mu, const double dv[4][3]);

#endif
