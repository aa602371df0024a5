/* scenario_own.h — the scenario module's own memory, inside the module: the sweep axes
 * a scenario owns (scenario.h's scenario_free / scenario_copy are built on these).
 *
 * Axes own their values: scn_axis_clear() frees them, scn_sweep_clear() frees every axis
 * and the array (sc has no sweep after it).  scn_sweep_append() adds an axis without
 * values for `key`: its index, or -1 when out of memory (nothing changed).
 * scn_sweep_copy() gives dst (whose own axes it overwrites, not frees) copies of src's
 * axes: 0, or -1 when out of memory, with dst left without sweep. */
#ifndef DDPPROF_SCENARIO_OWN_H
#define DDPPROF_SCENARIO_OWN_H

#include "engine/scenario/scenario.h"

void scn_axis_clear(sweep_axis *axis);
void scn_sweep_clear(scenario *sc);
int scn_sweep_append(scenario *sc, const char *key, int line);
int scn_sweep_copy(scenario *dst, const scenario *src);

#endif
