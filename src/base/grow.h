/* Growable arrays: the one capacity-doubling realloc every module uses. */
#ifndef AVI_BASE_GROW_H
#define AVI_BASE_GROW_H

#include <stddef.h>

/* The realloc of avi_grow, for need > *cap. */
int avi_grow_realloc(void **p, size_t *cap, size_t need, size_t elem, size_t first);

/* Makes the array *p (elements of elem bytes, capacity *cap) hold at least
 * need elements: the capacity doubles, from `first` when it is 0, until it
 * does. Returns 0, or -1 when the bytes would not fit a size_t or realloc
 * fails; then *p (still valid, still owned by the caller) and *cap are
 * unchanged. Inline so that the common "it fits" costs no call in loops
 * that append one element at a time. */
static inline int avi_grow(void **p, size_t *cap, size_t need, size_t elem, size_t first)
{
    return need <= *cap ? 0 : avi_grow_realloc(p, cap, need, elem, first);
}

/* The call for a typed array with a size_t capacity:
 * AVI_GROW(m->tets, m->cap_tet, m->ntet + 1, 64). */
#define AVI_GROW(arr, cap, need, first) avi_grow((void **)&(arr), &(cap), (need), sizeof *(arr), (first))

#endif
