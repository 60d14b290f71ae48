/* Contact on a model: its settings, and the handler (the contact manager)
 * that the engine reaches through the model (avi_contact_ops in
 * core/engine_internal.h), so that src/core needs nothing of src/contact. */
#include "contact/contact_manager.h"

#include <math.h>

static const avi_contact_ops contact_ops = {avi_contact_create, avi_contact_destroy, avi_contact_run,
                                            avi_contact_event,  avi_contact_observe, avi_contact_save,
                                            avi_contact_load,   avi_contact_owe};

avi_contact_settings avi_default_contact_settings(double thickness)
{
    avi_contact_settings s = {thickness, thickness / 5.0, 0.0, 0, 0.0};
    return s;
}

int avi_model_set_contact(avi_model *m, const avi_contact_settings *s)
{
    if (m->finalized) return avi_model_fail(m, AVI_ERR_INPUT, "model already finalized");
    if (!s || !(s->thickness > 0.0) || !isfinite(s->thickness))
        return avi_model_fail(m, AVI_ERR_INPUT, "contact.thickness must be positive and finite");
    if (!(s->inner_thickness > 0.0) || !(s->inner_thickness < s->thickness))
        return avi_model_fail(m, AVI_ERR_INPUT, "contact.inner_thickness must be in (0, thickness) (got %g)",
                              s->inner_thickness);
    if (!(s->stiffness >= 0.0) || !isfinite(s->stiffness))
        return avi_model_fail(m, AVI_ERR_INPUT, "contact.stiffness must be positive (got %g)", s->stiffness);
    if (!(s->friction >= 0.0) || !isfinite(s->friction))
        return avi_model_fail(m, AVI_ERR_INPUT, "contact.friction must be >= 0 and finite (got %g)", s->friction);
    if (s->max_layers < 0) return avi_model_fail(m, AVI_ERR_INPUT, "contact.layers must be positive");
    m->contact = *s;
    if (m->contact.max_layers == 0) m->contact.max_layers = 4096;
    m->has_contact = 1;
    m->contact_ops = &contact_ops;
    return 0;
}
