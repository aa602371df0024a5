/* scenario_explain.c — `ddpprof explain`: every key of the scenario key table with its
 * type, range, default and meaning, one line each, by section or one key.
 *
 * Contract in scenario.h (scenario_explain).  Printed straight from the key table, so
 * that what explain says is what the loader accepts.
 */
#include "engine/scenario/scenario.h"

#include "engine/scenario/scenario_keys.h"

#include <stdio.h>
#include <string.h>

static int explain_line(FILE *out, const key_def *k)
{
    char dotted[96], range[160];
    scn_dotted_name(k, dotted, sizeof dotted);
    scn_describe_range(k, range, sizeof range);
    const char *def = k->def[0] ? k->def : (scn_is_list(k) ? "(empty)" : "\"\"");
    return fprintf(out, "%-30s %-12s %-28s %-9s %s\n", dotted, scn_type_name(k->type), range, def,
                   k->meaning) < 0
               ? -1
               : 0;
}

static int explain_sweep(FILE *out)
{
    if (fprintf(out, "[sweep]\n") < 0)
        return -1;
    char range[64];
    snprintf(range, sizeof range, "1..%d values, <=%d keys", SCENARIO_MAX_SWEEP_VALUES,
             SCENARIO_MAX_SWEEP_KEYS);
    return fprintf(out,
                   "%-30s %-12s %-28s %-9s one run per point of the product of all axes (at "
                   "most %d points); values separated by ',' (by '|' for list keys)\n",
                   "sweep.<section.key>", "list", range, "-", SCENARIO_MAX_SWEEP_POINTS) < 0
               ? -1
               : 0;
}

static int explain_section(FILE *out, const char *section)
{
    if (strcmp(section, "sweep") == 0)
        return explain_sweep(out);
    if (fprintf(out, "[%s]\n", section) < 0)
        return -1;
    for (size_t i = 0; i < scn_nkeys; i++)
        if (strcmp(scn_keys[i].section, section) == 0 && explain_line(out, &scn_keys[i]) != 0)
            return -1;
    return 0;
}

int scenario_explain(FILE *out, const char *key)
{
    if (key == NULL) {
        if (fprintf(out, "%-30s %-12s %-28s %-9s %s\n", "key", "type", "range", "default",
                    "meaning") < 0)
            return -1;
        for (size_t s = 0; s < scn_nsections; s++)
            if (explain_section(out, scn_sections[s]) != 0)
                return -1;
        return 0;
    }
    if (strchr(key, '.') == NULL)
        return scn_known_section(key) ? explain_section(out, key) : -1;
    int ki = -1;
    if (scn_find_dotted(key, &ki, NULL, 0) != 0)
        return -1;
    return explain_line(out, &scn_keys[ki]);
}
