/* avi: asynchronous variational integration of elastic bodies with contact. */
#ifndef AVI_AVI_H
#define AVI_AVI_H

#include "avi/types.h"
#include "avi/model.h"
#include "avi/engine.h"
#include "avi/mesh.h"
#include "avi/output.h"
#include "avi/scene.h"
#include "avi/sync.h"
#include "avi/run.h"

#endif
