/* avi: asynchronous variational integration of elastic bodies with contact. */
#ifndef AVI_AVI_H
#define AVI_AVI_H

#include "avi/types.h"
#include "avi/model.h"
#include "avi/engine.h"

#endif
