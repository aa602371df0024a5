/* scenario_sweep.c — sweeps: bounds of a [sweep], its point count (computed before
 * anything is expanded, with overflow checks), and applying one point's values
 * (contract in scenario_sweep.h); scenario_point.c makes a whole point of it.
 */
#include "engine/scenario/scenario_sweep.h"
#include "engine/scenario/scenario_own.h"

#include "engine/scenario/scenario_keys.h"
#include "engine/scenario/scenario_text.h"
#include "engine/scenario/scenario_value.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int scn_sweep_shape(const scenario *sc, char *err, size_t errlen)
{
    if (sc->nsweep < 0 || sc->nsweep > SCENARIO_MAX_SWEEP_KEYS || (sc->nsweep > 0 && sc->sweep == NULL))
        return scn_errf(err, errlen, "corrupt scenario: %d sweep axes", sc->nsweep);
    for (int a = 0; a < sc->nsweep; a++) {
        int n = sc->sweep[a].nvalues;
        if (n < 1 || n > SCENARIO_MAX_SWEEP_VALUES || sc->sweep[a].values == NULL)
            return scn_errf(err, errlen, "corrupt scenario: sweep axis %d has %d values", a + 1, n);
        if (memchr(sc->sweep[a].key, '\0', sizeof sc->sweep[a].key) == NULL)
            return scn_errf(err, errlen, "corrupt scenario: sweep axis %d has no key", a + 1);
        for (int v = 0; v < n; v++)
            if (sc->sweep[a].values[v] == NULL || strnlen(sc->sweep[a].values[v], SCENARIO_STR) == SCENARIO_STR)
                return scn_errf(err, errlen, "corrupt scenario: sweep axis %d value %d", a + 1, v + 1);
    }
    return 0;
}

int scn_sweep_product(const scenario *sc, int naxes, size_t *count)
{
    size_t n = 1;
    for (int a = 0; a < naxes && a < SCENARIO_MAX_SWEEP_KEYS; a++) {
        size_t v = sc->sweep[a].nvalues > 0 ? (size_t)sc->sweep[a].nvalues : 0;
        if (v != 0 && n > SIZE_MAX / v)
            return -1;
        n *= v;
    }
    *count = n;
    return 0;
}

int scn_sweep_over_limit(const scenario *sc, char *msg, size_t n, int *axis)
{
    int first_over = -1;
    size_t count = 1;
    bool overflow = false;
    for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++) {
        size_t part;
        if (scn_sweep_product(sc, a + 1, &part) != 0) {
            overflow = true;
        } else {
            count = part;
        }
        if (first_over < 0 && (overflow || part > SCENARIO_MAX_SWEEP_POINTS))
            first_over = a;
    }
    if (first_over < 0)
        return 0;
    char sizes[160];
    size_t pos = 0;
    sizes[0] = '\0';
    for (int a = 0; a < sc->nsweep && a < SCENARIO_MAX_SWEEP_KEYS; a++)
        pos += scn_bprintf(sizes + pos, sizeof sizes - pos, "%s%d", a ? " x " : "",
                           sc->sweep[a].nvalues);
    if (overflow)
        scn_bprintf(msg, n, "[sweep] has more points than can be counted (%s); at most %d are "
                            "allowed",
                    sizes, SCENARIO_MAX_SWEEP_POINTS);
    else
        scn_bprintf(msg, n, "[sweep] has %zu points (%s); at most %d are allowed", count, sizes,
                    SCENARIO_MAX_SWEEP_POINTS);
    *axis = first_over;
    return -1;
}

size_t scenario_sweep_count(const scenario *sc)
{
    size_t n;
    if (sc->nsweep < 0 || sc->nsweep > SCENARIO_MAX_SWEEP_KEYS)
        return 0;
    return scn_sweep_product(sc, sc->nsweep, &n) == 0 ? n : SIZE_MAX;
}

int scn_sweep_apply(const scenario *base, size_t index, scenario *out, char *err, size_t errlen)
{
    int choice[SCENARIO_MAX_SWEEP_KEYS];
    size_t rest = index;
    for (int a = base->nsweep - 1; a >= 0; a--) { /* last axis varies fastest */
        choice[a] = (int)(rest % (size_t)base->sweep[a].nvalues);
        rest /= (size_t)base->sweep[a].nvalues;
    }
    /* An earlier point may have marked other keys: start again from the base's marks,
     * which also makes device.preset fill peak_tflops exactly as in a fresh copy. */
    if (out != base) {
        memcpy(out->key_line, base->key_line, sizeof out->key_line);
        memcpy(out->swept, base->swept, sizeof out->swept);
        memcpy(out->key_include, base->key_include, sizeof out->key_include);
    }
    const char *src = base->source[0] ? base->source : "defaults";
    for (int a = 0; a < base->nsweep; a++) {
        const sweep_axis *axis = &base->sweep[a];
        int ki = -1;
        char msg[SCENARIO_ERR];
        if (scn_find_dotted(axis->key, &ki, msg, sizeof msg) != 0 ||
            scn_set_key(out, ki, axis->values[choice[a]], false, msg, sizeof msg) != 0)
            return scn_errf(err, errlen, "%s:%d: [sweep] %s", src, axis->line, msg);
        out->key_line[ki] = axis->line > 0 ? axis->line : -1;
        out->key_include[ki] = 0;
        out->swept[ki] = true;
    }
    return 0;
}

int scn_find_axis(const scenario *sc, const char *key)
{
    for (int a = 0; a < sc->nsweep; a++)
        if (strcmp(sc->sweep[a].key, key) == 0)
            return a;
    return -1;
}

int scn_axis_add_values(sweep_axis *axis, int ki, const char *value, bool continuation, scenario *scratch,
                        char *err, size_t errlen)
{
    const key_def *k = &scn_keys[ki];
    char sep = scn_is_list(k) ? '|' : ',';
    if (scn_is_list(k) && !continuation && strchr(value, '|') == NULL &&
        strchr(value, ',') != NULL)
        return scn_errf(err, errlen,
                        "[sweep] %s is a list key: separate its values with '|' (each value is a "
                       "comma-separated list), e.g. %s = 1, 2 | 3",
                       axis->key, axis->key);
    if (continuation && *value == sep) /* "    , next": the separator starts the line */
        value++;
    scn_splitter s = {value, sep, 0};
    char item[SCENARIO_STR];
    int r;
    if (*value == '\0')
        return scn_errf(err, errlen, "[sweep] %s: no values (give 1 to %d values separated by '%c')",
                       axis->key, SCENARIO_MAX_SWEEP_VALUES, sep);
    while ((r = scn_next_item(&s, item, sizeof item)) != 0) {
        int vi = axis->nvalues + 1;
        if (r == -1)
            return scn_errf(err, errlen, "[sweep] %s: value %d is empty (values are separated by '%c')",
                           axis->key, vi, sep);
        if (r == -2)
            return scn_errf(err, errlen, "[sweep] %s: value %d is longer than %d characters", axis->key,
                           vi, SCENARIO_STR - 1);
        if (axis->nvalues >= SCENARIO_MAX_SWEEP_VALUES)
            return scn_errf(err, errlen, "[sweep] %s: more than %d values", axis->key,
                           SCENARIO_MAX_SWEEP_VALUES);
        for (int j = 0; j < axis->nvalues; j++)
            if (strcmp(axis->values[j], item) == 0)
                return scn_errf(err, errlen, "[sweep] %s: value \"%s\" is given twice", axis->key, item);
        char why[SCENARIO_ERR];
        if (scn_set_key(scratch, ki, item, false, why, sizeof why) != 0)
            return scn_errf(err, errlen, "[sweep] %s", why);
        char **grown = realloc(axis->values, (size_t)(axis->nvalues + 1) * sizeof *grown);
        if (grown == NULL)
            return scn_errf(err, errlen, "[sweep] %s: out of memory", axis->key);
        axis->values = grown;
        if ((axis->values[axis->nvalues] = strdup(item)) == NULL)
            return scn_errf(err, errlen, "[sweep] %s: out of memory", axis->key);
        axis->nvalues++;
    }
    return 0;
}

/* The key an assignment "section.key=..." names, as the table spells it, and its index. */
static int assignment_key(const char *assignment, char *dotted, size_t n, int *ki, const char **value,
                          char *err, size_t errlen)
{
    const char *eq = strchr(assignment, '=');
    char key[64];
    size_t len = eq ? (size_t)(eq - assignment) : 0;
    while (len > 0 && (assignment[len - 1] == ' ' || assignment[len - 1] == '\t'))
        len--;
    if (len == 0 || len >= sizeof key) {
        char shown[SCENARIO_ERR / 2];
        scn_escape(assignment, shown, sizeof shown);
        return scn_errf(err, errlen, "\"%s\": expected section.key=value", shown);
    }
    memcpy(key, assignment, len);
    key[len] = '\0';
    if (scn_find_dotted(key, ki, err, errlen) != 0)
        return -1;
    scn_dotted_name(&scn_keys[*ki], dotted, n);
    *value = eq + 1;
    while (**value == ' ' || **value == '\t')
        (*value)++;
    return 0;
}

/* "a, b, c" (or "a | b" for a list key): the values of an axis as a file writes them. */
static void axis_text(const sweep_axis *axis, int ki, char *out, size_t n)
{
    const char *sep = scn_is_list(&scn_keys[ki]) ? " | " : ", ";
    size_t at = 0;
    out[0] = '\0';
    for (int v = 0; v < axis->nvalues && at < n; v++) {
        int w = snprintf(out + at, n - at, "%s%s", v ? sep : "", axis->values[v]);
        if (w < 0)
            break;
        at += (size_t)w;
    }
}

int scenario_unsweep(scenario *sc, const char *assignment, char *was, size_t n)
{
    char dotted[64], ignored[SCENARIO_ERR];
    int ki;
    const char *value;
    /* A malformed assignment sweeps nothing: scenario_override() says what is wrong. */
    if (assignment_key(assignment, dotted, sizeof dotted, &ki, &value, ignored, sizeof ignored) != 0)
        return 0;
    int a = scn_find_axis(sc, dotted);
    if (a < 0)
        return 0;
    if (was && n > 0) {
        char values[SCENARIO_ERR];
        axis_text(&sc->sweep[a], ki, values, sizeof values);
        snprintf(was, n, "%s = %s", dotted, values);
    }
    scn_axis_clear(&sc->sweep[a]);
    memmove(&sc->sweep[a], &sc->sweep[a + 1], (size_t)(sc->nsweep - a - 1) * sizeof sc->sweep[0]);
    if (--sc->nsweep == 0) {
        free(sc->sweep);
        sc->sweep = NULL;
    }
    return 1;
}

int scenario_sweep_override(scenario *sc, const char *assignment, char *was, size_t n, char *err,
                            size_t errlen)
{
    char dotted[64];
    int ki;
    const char *value;
    if (assignment_key(assignment, dotted, sizeof dotted, &ki, &value, err, errlen) != 0)
        return -1;
    if (strcmp(scn_keys[ki].section, "run") == 0 && strcmp(scn_keys[ki].name, "name") == 0)
        return scn_errf(err, errlen, "--sweep %s: the run's name is made from the sweep's points; sweep another key", dotted);
    sweep_axis axis;
    memset(&axis, 0, sizeof axis);
    memcpy(axis.key, dotted, strlen(dotted) + 1);
    axis.line = -1;
    scenario *scratch = malloc(sizeof *scratch);
    if (scratch == NULL)
        return scn_errf(err, errlen, "out of memory");
    scenario_defaults(scratch);
    char msg[SCENARIO_ERR];
    int rc = scn_axis_add_values(&axis, ki, value, false, scratch, msg, sizeof msg);
    scenario_free(scratch);
    free(scratch);
    if (rc != 0) { /* msg says "[sweep] KEY: ...": this sweep is the command line's */
        scn_axis_clear(&axis);
        return scn_errf(err, errlen, "--sweep %s", strncmp(msg, "[sweep] ", 8) == 0 ? msg + 8 : msg);
    }
    int a = scn_find_axis(sc, dotted), replaced = a >= 0;
    if (replaced) {
        if (was && n > 0) {
            char values[SCENARIO_ERR];
            axis_text(&sc->sweep[a], ki, values, sizeof values);
            snprintf(was, n, "%s = %s", dotted, values);
        }
        scn_axis_clear(&sc->sweep[a]);
    } else {
        if (sc->nsweep >= SCENARIO_MAX_SWEEP_KEYS) {
            scn_axis_clear(&axis);
            return scn_errf(err, errlen, "--sweep %s: more than %d sweep axes", dotted, SCENARIO_MAX_SWEEP_KEYS);
        }
        if ((a = scn_sweep_append(sc, dotted, -1)) < 0) {
            scn_axis_clear(&axis);
            return scn_errf(err, errlen, "out of memory");
        }
    }
    sc->sweep[a] = axis; /* the axis's values are sc's from here */
    int over = 0;
    if (scn_sweep_over_limit(sc, msg, sizeof msg, &over) != 0)
        return scn_errf(err, errlen, "--sweep %s: %s", dotted, msg);
    return replaced;
}
