/* One step of a synchronous integrator, by type. Its own file: the engine
 * (sync_engine.c) and the DCR contact stage (dcr.c) both step through it,
 * and sync_engine.c calls dcr.c, so in either of them it would close a
 * circle. */
#include "sync/sync_internal.h"

int avi_sync_step(avi_engine *e, struct avi_sync *s)
{
    avi_sync_use_pool(e, s);
    switch (s->opt.type) {
    case AVI_INTEGRATOR_DCR:
    case AVI_INTEGRATOR_SYNC_EXPLICIT: return avi_sync_step_explicit(e, s);
    case AVI_INTEGRATOR_SYNC_IMPLICIT:
    case AVI_INTEGRATOR_SYNC_ROOTFIND: return avi_sync_step_lilyan(e, s);
    case AVI_INTEGRATOR_EXPLICIT_EULER: return avi_sync_step_explicit_euler(e, s);
    case AVI_INTEGRATOR_SYNC_EXPLICIT4: return avi_sync_step_explicit4(e, s);
    default: return avi_sync_step_implicit_euler(e, s);
    }
}
