/* The descriptors of the listed kinds, by kind (core/kinds.h). */
#include "core/kinds.h"

const avi_kind_desc *avi_kind_desc_of(unsigned kind)
{
#define DESC_ENTRY(K, desc) [K] = &desc,
    static const avi_kind_desc *const table[AVI_MODEL_KINDS] = {AVI_KIND_LIST(AVI_DESC_OF, DESC_ENTRY)};
#undef DESC_ENTRY
    return kind < AVI_MODEL_KINDS ? table[kind] : NULL;
}

const char *avi_kind_name(avi_kind kind)
{
    if (kind == AVI_KIND_CONTACT) return "contact";
    const avi_kind_desc *d = avi_kind_desc_of(kind);
    return d ? d->name : "unknown";
}
