/* The list of potential kinds: each kind is one unit in src/potentials/
 * (its row and descriptor, potentials/kind_desc.h); this file only lists
 * them, in rank order (include/avi/types.h: the tie order, also the order
 * of energy sums). Every per-kind switch of the model, the event loop and
 * the observers is generated from the rows (X-macros), and everything that
 * runs once per model reads the descriptors (avi_kind_desc_of), so a kind
 * is added in its own files and one line here (docs/ARCHITECTURE.md,
 * "New kind").
 *
 * Contact stands outside the list: its layers are built by src/contact
 * during the run, not stored in the model, and its events carry the rank
 * AVI_KIND_CONTACT = AVI_MODEL_KINDS, after every listed kind. */
#ifndef AVI_KINDS_H
#define AVI_KINDS_H

#include "potentials/spring.h"
#include "potentials/membrane.h"
#include "potentials/hinge.h"
#include "potentials/tet_neohookean.h"
#include "potentials/midedge.h"
#include "potentials/gravity.h"

/* clang-format off */
#define AVI_KIND_LIST(F, X) \
    F(SPRING, X) F(MEMBRANE, X) F(HINGE, X) F(TET, X) F(MIDEDGE, X) F(GRAVITY, X)
/* clang-format on */

#define AVI_KIND_ROW_OF(N, X) AVI_KIND_ROW_##N(X)
#define AVI_LANE_ROW_OF(N, X) AVI_LANE_ROW_##N(X)
#define AVI_DESC_OF(N, X) X(AVI_KIND_##N, AVI_KIND_DESC_##N)

/* X(kind, type, array, count, slots, vertices, gradient, energy, flags) per
 * kind, and X(kind, type, lanes gradient) per kind with AVX2 lanes. */
#define AVI_POTENTIAL_KINDS(X) AVI_KIND_LIST(AVI_KIND_ROW_OF, X)
#define AVI_LANE_KINDS(X) AVI_KIND_LIST(AVI_LANE_ROW_OF, X)

/* The number of listed kinds: the model's kinds, 0 .. AVI_MODEL_KINDS - 1. */
#define AVI_KIND_ONE(K, ...) +1
#define AVI_MODEL_KINDS (0 AVI_POTENTIAL_KINDS(AVI_KIND_ONE))
_Static_assert(AVI_MODEL_KINDS == AVI_KIND_CONTACT && AVI_KIND_CONTACT + 1 == AVI_KIND_COUNT,
               "every kind but contact is listed here, in rank order");

_Static_assert(AVI_KIND_COUNT <= AVI_KIND_MAX, "public structs have room for AVI_KIND_MAX kinds");

/* The widest stencil: work arrays of generic code are this long. */
#define AVI_KIND_SLOTS_MEMBER(kind, type, array, count, slots, ...) char array[slots];
#define AVI_STENCIL_MAX ((int)sizeof(union { AVI_POTENTIAL_KINDS(AVI_KIND_SLOTS_MEMBER) }))
/* The largest record: a buffer that holds a record of any kind. */
#define AVI_KIND_RECORD_MEMBER(kind, type, array, ...) type array;
typedef union { AVI_POTENTIAL_KINDS(AVI_KIND_RECORD_MEMBER) } avi_any_record;

/* The descriptor of a listed kind (NULL for contact and out of range). */
const avi_kind_desc *avi_kind_desc_of(unsigned kind);

#endif
