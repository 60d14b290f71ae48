/* The blow-up check of a run (output.max_energy_growth): the total energy
 * may depart from its value at t = 0 by at most max_energy_growth times
 * an energy scale (the engine itself stops on non-finite states). */
#ifndef AVI_RUN_BLOW_UP_H
#define AVI_RUN_BLOW_UP_H

#include "avi/engine.h"
#include "avi/scene.h"

typedef struct {
    double max_growth, end_time, gravity; /* from the scene; max_growth 0: off */
    int have_e0;
    double e0, e_scale;
    char message[512]; /* once it fired */
} avi_blow_up;

void avi_blow_up_init(avi_blow_up *b, const avi_scene *scene);

/* Checks a row's observation `o` of snapshot `snap`: its synchronized
 * total, or on a row without it (output.synchronized_every) the mid-step
 * total, whose first-order swing is far below any useful growth bound; the
 * first call sets E0 and the scale (x: scratch for the model's vertex
 * positions). 0, or AVI_ERR_RUN with b->message naming the time, the
 * energies and the largest potential energy. */
int avi_blow_up_check(avi_blow_up *b, const avi_model *model, avi_snapshot *snap, const avi_observation *o,
                      int synchronized, double (*x)[3]);

#endif
