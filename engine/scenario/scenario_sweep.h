/* scenario_sweep.h — the shape of a [sweep] and applying one of its points (internal to
 * the scenario modules; the public side is scenario_sweep_count/scenario_sweep_point).
 *
 * Contract: scn_sweep_shape() must accept a scenario before any other function here is
 * used on it, since the others index the axes and values it bounds.  Points are numbered
 * 0..count-1 with the last axis varying fastest.
 */
#ifndef DDPPROF_SCENARIO_SWEEP_H
#define DDPPROF_SCENARIO_SWEEP_H

#include "engine/scenario/scenario.h"

#include <stdbool.h>
#include <stddef.h>

/* 0 when the axis and value counts are within their arrays; else -1 with err. */
int scn_sweep_shape(const scenario *sc, char *err, size_t errlen);

/* Product of the first `naxes` axis lengths in *count; -1 when it overflows size_t. */
int scn_sweep_product(const scenario *sc, int naxes, size_t *count);

/* When the sweep has more than SCENARIO_MAX_SWEEP_POINTS points: -1 with msg = "[sweep]
 * has N points (a x b x ...); at most 4096 are allowed" (no location) and *axis = the
 * first axis at which the product passes the limit.  0 otherwise. */
int scn_sweep_over_limit(const scenario *sc, char *msg, size_t n, int *axis);

/* Applies point `index` of `base` to `out`, which must already be a copy of base (or of
 * an earlier point of it): every swept key gets its value, key_line[] the axis line and
 * swept[] true; the axes themselves stay.  0 or -1 with err (with location). */
int scn_sweep_apply(const scenario *base, size_t index, scenario *out, char *err, size_t errlen);

/* Index of the axis that sweeps `key` (section.key as the table spells it), or -1. */
int scn_find_axis(const scenario *sc, const char *key);

/* Appends to `axis` (of key index ki) the values of `value`, separated by ',' or, for a
 * list key, by '|' (a continuation line may start with the separator), each tried on
 * `scratch`: 0, or -1 with err ("[sweep] KEY: ...", no location). */
int scn_axis_add_values(sweep_axis *axis, int ki, const char *value, bool continuation, scenario *scratch,
                        char *err, size_t errlen);

#endif
