/* scenario_check.h — what the INI writer needs from the cross-key checks (internal to
 * the scenario modules; the public side is scenario_validate/scenario_warnings).
 *
 * Contract: scn_key_in_effect() answers with the same rules scenario_validate() applies
 * to keys that depend on another key (model.hidden on model.preset, fault.iter on
 * fault.mode, ...), so that an exported scenario reads back without warnings.
 *
 * Ownership: nothing here allocates; sc and why are borrowed for the call.
 */
#ifndef DDPPROF_SCENARIO_CHECK_H
#define DDPPROF_SCENARIO_CHECK_H

#include "engine/scenario/scenario.h"

#include <stdbool.h>
#include <stddef.h>

/* False when key `ki` cannot take effect in `sc` (in no point of its sweep), with `why`
 * = "no effect with model.preset = resnet18" or the like; true otherwise. */
bool scn_key_in_effect(const scenario *sc, int ki, char *why, size_t n);

#endif
